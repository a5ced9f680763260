/* SPDX-License-Identifier: MIT */
/* Quality-score arithmetic: normalisation, profiles, veto, freshness and
 * the per-round verdict (S0-6, S1-4, S2-2..S2-7, S4-4). */
#include "health/score.h"
#include "unit.h"

#include <math.h>
#include <string.h>

#define NOW 1000000u
#define TOL 1e-6

/* A window of @n good samples, one a second up to NOW, each answering in
 * @lat ms. */
static void good_window(score_sample_t *s, unsigned n, uint32_t lat)
{
	for (unsigned i = 0; i < n; i++) {
		s[i] = (score_sample_t){
			.time = NOW - (n - 1 - i), .connected = 1,
			.status_ok = 1, .body_ok = 1, .timed_out = 0,
			.connect_ms = 5, .latency_ms = lat,
		};
	}
}

/* A refused connection at @t. */
static score_sample_t refused(uint32_t t)
{
	return (score_sample_t){ .time = t, .status_ok = 0, .body_ok = 1 };
}

static void push(score_metrics_t *m, metric_t k, double v, uint32_t t)
{
	m->value[k] = v;
	m->time[k] = t;
}

static score_config_t cfg(score_profile_t p)
{
	score_config_t c;
	score_config_default(&c);
	c.profile = p;
	return c;
}

START_TEST(defaults)
{
	score_config_t c;
	score_config_default(&c);
	ck_assert_int_eq(c.profile, SCORE_PROFILE_PROBE);
	ck_assert_double_eq(c.w_probe[0] + c.w_probe[1] + c.w_probe[2] +
	                    c.w_probe[3], 100);
	ck_assert_double_eq(c.w_probe[0], 35);          /* S0-6 */
	ck_assert_double_eq(c.w_four[3], 15);           /* S2-2 */
	ck_assert_double_eq(c.veto_level, 0.2);         /* S2-4 */
	ck_assert_uint_eq(c.fresh_s, 300);              /* S2-7 */
	ck_assert_double_eq(c.latency_threshold_ms, 2000); /* S1-4 */
}
END_TEST

/* S2-3: 1 at or below good, 0 at or above bad, linear between, both
 * directions. */
START_TEST(normalize_edges)
{
	ck_assert_double_eq(score_normalize(20, 20, 200), 1);
	ck_assert_double_eq(score_normalize(0, 20, 200), 1);
	ck_assert_double_eq(score_normalize(200, 20, 200), 0);
	ck_assert_double_eq(score_normalize(5000, 20, 200), 0);
	ck_assert_double_eq_tol(score_normalize(110, 20, 200), 0.5, TOL);
	/* higher is better */
	ck_assert_double_eq(score_normalize(1, 1, 0.5), 1);
	ck_assert_double_eq(score_normalize(2, 1, 0.5), 1);
	ck_assert_double_eq(score_normalize(0.5, 1, 0.5), 0);
	ck_assert_double_eq_tol(score_normalize(0.75, 1, 0.5), 0.5, TOL);
	/* degenerate range and unreadable input */
	ck_assert_double_eq(score_normalize(3, 3, 3), 1);
	ck_assert_double_eq(score_normalize(3.1, 3, 3), 0);
	ck_assert_double_eq(score_normalize(NAN, 20, 200), 0);
}
END_TEST

/* S2-3: full marks up to 0.1 %, near zero above 3 %, never rising. */
START_TEST(loss_curve)
{
	ck_assert_double_eq(score_normalize_loss(0), 1);
	ck_assert_double_eq(score_normalize_loss(0.1), 1);
	ck_assert_double_eq_tol(score_normalize_loss(0.55), 0.8, TOL);
	ck_assert_double_eq_tol(score_normalize_loss(1), 0.6, TOL);
	ck_assert_double_eq_tol(score_normalize_loss(2), 0.325, TOL);
	ck_assert_double_eq_tol(score_normalize_loss(3), 0.05, TOL);
	ck_assert_double_lt(score_normalize_loss(5), 0.05);
	ck_assert_double_gt(score_normalize_loss(5), 0);
	ck_assert_double_eq(score_normalize_loss(10), 0);
	ck_assert_double_eq(score_normalize_loss(100), 0);
	/* every loss past 3 % is under the veto level (S2-4) */
	ck_assert_double_lt(score_normalize_loss(3.0001), 0.2);
	double prev = 1;
	for (double x = 0; x <= 20; x += 0.01) {
		double y = score_normalize_loss(x);
		ck_assert_double_le(y, prev + 1e-12);
		ck_assert_double_ge(y, 0);
		prev = y;
	}
}
END_TEST

START_TEST(perfect_node_scores_100)
{
	score_config_t c = cfg(SCORE_PROFILE_PROBE);
	score_sample_t s[SCORE_WINDOW];
	score_result_t r;
	good_window(s, SCORE_WINDOW, 10);
	score_evaluate(&c, s, SCORE_WINDOW, NULL, NOW, &r);
	ck_assert_double_eq_tol(r.score, 100, TOL);
	for (int i = 0; i < 4; i++)
		ck_assert_double_eq_tol(r.dim[i], 1, TOL);
	ck_assert_int_eq(r.unknown, 0);
	ck_assert_int_eq(r.vetoed, 0);
	ck_assert_int_eq(r.hard_fail, 0);
	ck_assert_int_eq(r.abnormal, 0);
	ck_assert_int_eq(r.n_abnormal, 0);
	ck_assert_int_eq(score_grade(&c, r.score), SCORE_GRADE_GOOD);
	/* The result names the profile its dimensions belong to. */
	ck_assert_int_eq(r.profile, SCORE_PROFILE_PROBE);
	ck_assert_str_eq(score_dimension_name(r.profile, 1), "latency");
	c = cfg(SCORE_PROFILE_FOUR);
	score_evaluate(&c, s, SCORE_WINDOW, NULL, NOW, &r);
	ck_assert_int_eq(r.profile, SCORE_PROFILE_FOUR);
	ck_assert_str_eq(score_dimension_name(r.profile, 3), "stability");
}
END_TEST

/* The EMA of latencies @lat[0..n) with weight @alpha (S4-7). */
static double ema_of(const double *lat, unsigned n, double alpha)
{
	double e = lat[0];
	for (unsigned i = 1; i < n; i++)
		e += alpha * (lat[i] - e);
	return e;
}

/* S0-6 dimensions from the window: latency (an EMA, S4-7) and jitter.
 * Alternating 10 and 60 ms is jitter, not spikes: with the outlier
 * filter off the latency is the plain EMA. */
START_TEST(latency_and_jitter_dims)
{
	score_config_t c = cfg(SCORE_PROFILE_PROBE);
	score_sample_t s[SCORE_WINDOW];
	score_result_t r;
	double lat[SCORE_WINDOW];
	good_window(s, SCORE_WINDOW, 10);
	for (unsigned i = 0; i < SCORE_WINDOW; i++)
		s[i].latency_ms = i % 2 ? 60 : 10;  /* jumps of 50 */
	for (unsigned i = 0; i < SCORE_WINDOW; i++)
		lat[i] = s[i].latency_ms;
	c.outlier_factor = 0;
	score_evaluate(&c, s, SCORE_WINDOW, NULL, NOW, &r);
	ck_assert_double_eq_tol(r.dim[1], (200.0 - ema_of(lat, SCORE_WINDOW, 0.5)) / 180,
	                        TOL);
	ck_assert_double_eq_tol(r.dim[3], (100.0 - 50) / 95, TOL);
	ck_assert_double_eq_tol(r.score, 35 + 30 * r.dim[1] + 25 +
	                        10 * r.dim[3], TOL);
}
END_TEST

/* S0-6 route jitter against the stable-period path: a steady 120 ms on a
 * node whose stable latency is 30 ms has jumped by 90 ms, although the
 * answers do not vary among themselves. */
START_TEST(jitter_against_stable_path)
{
	score_config_t c = cfg(SCORE_PROFILE_PROBE);
	score_sample_t s[SCORE_WINDOW];
	score_metrics_t m;
	score_result_t r;
	memset(&m, 0, sizeof(m));
	good_window(s, SCORE_WINDOW, 10);
	for (unsigned i = 0; i < SCORE_WINDOW; i++)
		s[i].latency_ms = 120;
	score_evaluate(&c, s, SCORE_WINDOW, &m, NOW, &r);  /* no reference */
	ck_assert_double_eq_tol(r.dim[3], 1, TOL);
	m.stable_ms = 30;
	score_evaluate(&c, s, SCORE_WINDOW, &m, NOW, &r);
	ck_assert_double_eq_tol(r.dim[3], (100.0 - 90) / 95, TOL);
	m.stable_ms = 118;              /* on its stable path: no jitter */
	score_evaluate(&c, s, SCORE_WINDOW, &m, NOW, &r);
	ck_assert_double_eq_tol(r.dim[3], 1, TOL);
}
END_TEST

/* S0-6 latency is the path now, S4-7 through an EMA: twelve old answers
 * at 10 ms and four new ones at 150 ms give 141.25 ms (150 - 140 / 16),
 * close to the new ones and far from the mean of 45 ms.  Four slow
 * answers in a row are a degradation, never outliers (S3-9). */
START_TEST(latency_from_recent_answers)
{
	score_config_t c = cfg(SCORE_PROFILE_PROBE);
	score_sample_t s[SCORE_WINDOW];
	score_result_t r;
	good_window(s, SCORE_WINDOW, 10);
	for (unsigned i = SCORE_WINDOW - SCORE_RECENT; i < SCORE_WINDOW; i++)
		s[i].latency_ms = 150;
	score_evaluate(&c, s, SCORE_WINDOW, NULL, NOW, &r);
	ck_assert_double_eq_tol(r.dim[1], (200.0 - 141.25) / 180, TOL);
	ck_assert_double_lt(r.score, 80);
	/* A larger alpha follows faster (configurable, S4-7). */
	c.latency_alpha = 1;
	score_evaluate(&c, s, SCORE_WINDOW, NULL, NOW, &r);
	ck_assert_double_eq_tol(r.dim[1], (200.0 - 150) / 180, TOL);
}
END_TEST

/* S3-9: one spike between normal answers is dropped from the latency
 * dimension once the next answer shows it was one; while it is the
 * newest it counts, and two slow answers in a row both count. */
START_TEST(s3_9_latency_outlier_dropped)
{
	score_config_t c = cfg(SCORE_PROFILE_PROBE);
	score_sample_t s[SCORE_WINDOW];
	score_result_t r;
	good_window(s, SCORE_WINDOW, 10);
	for (unsigned i = 0; i < SCORE_WINDOW; i++)
		s[i].latency_ms = 20;
	s[10].latency_ms = 900;                 /* 900 > 3 * 20 + 10 */
	score_evaluate(&c, s, SCORE_WINDOW, NULL, NOW, &r);
	ck_assert_double_eq_tol(r.dim[1], 1, TOL);
	/* Without the filter the spike still weighs 0.5^5 in the EMA. */
	c.outlier_factor = 0;
	score_evaluate(&c, s, SCORE_WINDOW, NULL, NOW, &r);
	ck_assert_double_lt(r.dim[1], 1);
	c.outlier_factor = 3;
	/* The newest answer: no successor yet, so it counts now. */
	s[10].latency_ms = 20;
	s[SCORE_WINDOW - 1].latency_ms = 900;
	score_evaluate(&c, s, SCORE_WINDOW, NULL, NOW, &r);
	ck_assert_double_eq_tol(r.dim[1], 0, TOL);   /* EMA 460 ms */
	/* Two slow answers in a row: a slower path, not an outlier. */
	s[SCORE_WINDOW - 2].latency_ms = 900;
	s[SCORE_WINDOW - 1].latency_ms = 20;
	s[SCORE_WINDOW - 3].latency_ms = 900;
	score_evaluate(&c, s, SCORE_WINDOW, NULL, NOW, &r);
	double lat[3] = { 900, 900, 20 }, e = 20;
	for (int i = 0; i < 3; i++)
		e += 0.5 * (lat[i] - e);
	ck_assert_double_eq_tol(r.dim[1], score_normalize(e, 20, 200), TOL);
	/* The floor: 4 ms among 1 ms answers is no spike. */
	for (unsigned i = 0; i < SCORE_WINDOW; i++)
		s[i].latency_ms = 1;
	s[8].latency_ms = 12;                   /* < 3 * 1 + 10 is not */
	c.latency_good_ms = 0, c.latency_bad_ms = 100;
	score_evaluate(&c, s, SCORE_WINDOW, NULL, NOW, &r);
	ck_assert_double_lt(r.dim[1], (100.0 - 1) / 100 - 1e-9);
}
END_TEST

/* S2-4: 5 % loss diluted by a weighted mean would stay usable; the veto
 * pulls it below 60 (and so out of 70-80). */
START_TEST(veto_five_percent_loss)
{
	score_config_t c = cfg(SCORE_PROFILE_PROBE);
	score_metrics_t m;
	score_result_t r;
	memset(&m, 0, sizeof(m));
	push(&m, METRIC_LOSS, 5, NOW);
	push(&m, METRIC_RTT_MS, 10, NOW);
	push(&m, METRIC_CONNECT_MS, 10, NOW);

	c.veto_factor = 1;              /* what a plain weighted mean gives */
	score_evaluate(&c, NULL, 0, &m, NOW, &r);
	ck_assert_double_ge(r.score, 60);
	ck_assert_double_eq_tol(r.dim[3], -1, TOL);  /* no jitter input */

	c = cfg(SCORE_PROFILE_PROBE);
	score_evaluate(&c, NULL, 0, &m, NOW, &r);
	ck_assert_int_eq(r.vetoed, 1);
	ck_assert_double_lt(r.score, 60);
	ck_assert_int_eq(score_grade(&c, r.score), SCORE_GRADE_DEGRADED);

	/* Clean probes do not dilute the pushed loss either: the veto looks
	 * at each key input, not only at their mean. */
	score_sample_t s[SCORE_WINDOW];
	good_window(s, SCORE_WINDOW, 10);
	memset(&m, 0, sizeof(m));
	push(&m, METRIC_LOSS, 5, NOW);
	score_evaluate(&c, s, SCORE_WINDOW, &m, NOW, &r);
	ck_assert_double_gt(r.dim[0], 0.2);          /* the mean alone... */
	ck_assert_int_eq(r.vetoed, 1);               /* ...still vetoed */
	ck_assert_double_lt(r.score, 60);
}
END_TEST

/* S2-4: the veto level itself.  Loss of 2.6 % normalises to 0.16, under
 * the 0.2 level and over half of it; 2.2 % to 0.27, over it.  Pushed on
 * their own, with nothing else to dilute them, only the first vetoes. */
START_TEST(s2_4_veto_level)
{
	score_config_t c = cfg(SCORE_PROFILE_PROBE);
	score_metrics_t m;
	score_result_t r;
	ck_assert_double_eq_tol(score_normalize_loss(2.6), 0.16, TOL);
	ck_assert_double_eq_tol(score_normalize_loss(2.2), 0.27, TOL);
	memset(&m, 0, sizeof(m));
	push(&m, METRIC_LOSS, 2.6, NOW);
	score_evaluate(&c, NULL, 0, &m, NOW, &r);
	ck_assert_int_eq(r.vetoed, 1);
	ck_assert_double_eq_tol(r.score, 16 * c.veto_factor, TOL);
	push(&m, METRIC_LOSS, 2.2, NOW);
	score_evaluate(&c, NULL, 0, &m, NOW, &r);
	ck_assert_int_eq(r.vetoed, 0);
	ck_assert_double_eq_tol(r.score, 27, TOL);
	/* The factor as given, not its complement: 0.3 keeps 30 %. */
	c.veto_factor = 0.3;
	push(&m, METRIC_LOSS, 2.6, NOW);
	score_evaluate(&c, NULL, 0, &m, NOW, &r);
	ck_assert_double_eq_tol(r.score, 16 * 0.3, TOL);
}
END_TEST

/* A single failed probe in the window costs one round only (S0-8); a
 * second failure counts. */
START_TEST(loss_forgive_single_failure)
{
	score_config_t c = cfg(SCORE_PROFILE_PROBE);
	score_sample_t s[SCORE_WINDOW];
	score_result_t r;

	good_window(s, SCORE_WINDOW, 10);
	s[SCORE_WINDOW - 1].status_ok = 0;      /* newest: a 500 */
	score_evaluate(&c, s, SCORE_WINDOW, NULL, NOW, &r);
	ck_assert_int_eq(r.vetoed, 1);          /* this round is degraded */
	ck_assert_double_lt(r.score, 60);

	good_window(s, SCORE_WINDOW, 10);
	s[8].status_ok = 0;                     /* the same, a round later */
	score_evaluate(&c, s, SCORE_WINDOW, NULL, NOW, &r);
	ck_assert_int_eq(r.vetoed, 0);
	ck_assert_double_eq_tol(r.score, 100, TOL);

	c.loss_forgive = 0;                     /* plain percentage */
	score_evaluate(&c, s, SCORE_WINDOW, NULL, NOW, &r);
	ck_assert_int_eq(r.vetoed, 1);

	c = cfg(SCORE_PROFILE_PROBE);
	s[3].connected = 0;                     /* a second failure */
	score_evaluate(&c, s, SCORE_WINDOW, NULL, NOW, &r);
	ck_assert_int_eq(r.vetoed, 1);
	ck_assert_double_lt(r.score, 60);
}
END_TEST

/* S1-4: latency over the threshold is an abnormal dimension. */
START_TEST(latency_over_threshold)
{
	score_config_t c = cfg(SCORE_PROFILE_PROBE);
	score_sample_t s[4];
	score_result_t r;
	good_window(s, 4, 10);
	s[3].latency_ms = 2000;                 /* at the threshold: fine */
	score_evaluate(&c, s, 4, NULL, NOW, &r);
	ck_assert_int_eq(r.abnormal, 0);
	s[3].latency_ms = 2500;
	score_evaluate(&c, s, 4, NULL, NOW, &r);
	ck_assert_int_eq(r.abnormal, SCORE_AB_LATENCY);
	ck_assert_int_eq(r.n_abnormal, 1);
	ck_assert_int_eq(r.hard_fail, 0);
}
END_TEST

/* S1-4: one abnormal dimension vs two, on the newest sample only. */
START_TEST(one_vs_two_abnormal)
{
	score_config_t c = cfg(SCORE_PROFILE_PROBE);
	score_sample_t s[4];
	score_result_t r;

	good_window(s, 4, 10);
	s[3].status_ok = 0;                     /* non-2xx */
	score_evaluate(&c, s, 4, NULL, NOW, &r);
	ck_assert_int_eq(r.abnormal, SCORE_AB_STATUS);
	ck_assert_int_eq(r.n_abnormal, 1);

	s[3].latency_ms = 3000;                 /* and slow: two */
	score_evaluate(&c, s, 4, NULL, NOW, &r);
	ck_assert_int_eq(r.abnormal, SCORE_AB_STATUS | SCORE_AB_LATENCY);
	ck_assert_int_eq(r.n_abnormal, 2);

	good_window(s, 4, 10);
	s[3].body_ok = 0;                       /* body mismatch is status */
	score_evaluate(&c, s, 4, NULL, NOW, &r);
	ck_assert_int_eq(r.abnormal, SCORE_AB_STATUS);

	good_window(s, 4, 10);
	s[3].timed_out = 1;                     /* hung after connecting */
	s[3].status_ok = 0;
	score_evaluate(&c, s, 4, NULL, NOW, &r);
	ck_assert_int_eq(r.abnormal, SCORE_AB_CONNECT);
	ck_assert_int_eq(r.n_abnormal, 1);
	ck_assert_int_eq(r.hard_fail, 0);       /* soft: it connected */

	good_window(s, 4, 10);
	s[0].status_ok = 0;                     /* older rounds don't count */
	s[1].latency_ms = 9000;
	score_evaluate(&c, s, 4, NULL, NOW, &r);
	ck_assert_int_eq(r.abnormal, 0);
}
END_TEST

/* S4-4: the newest round failed to connect. */
START_TEST(hard_fail)
{
	score_config_t c = cfg(SCORE_PROFILE_PROBE);
	score_sample_t s[SCORE_WINDOW];
	score_result_t r;

	good_window(s, SCORE_WINDOW, 10);
	s[SCORE_WINDOW - 1] = refused(NOW);
	score_evaluate(&c, s, SCORE_WINDOW, NULL, NOW, &r);
	ck_assert_int_eq(r.hard_fail, 1);
	ck_assert_int_eq(r.abnormal, SCORE_AB_CONNECT);
	ck_assert_int_eq(r.n_abnormal, 1);

	s[SCORE_WINDOW - 1].timed_out = 1;      /* connect timeout: hard too */
	score_evaluate(&c, s, SCORE_WINDOW, NULL, NOW, &r);
	ck_assert_int_eq(r.hard_fail, 1);

	good_window(s, SCORE_WINDOW, 10);
	s[SCORE_WINDOW - 2] = refused(NOW - 1); /* recovered since */
	score_evaluate(&c, s, SCORE_WINDOW, NULL, NOW, &r);
	ck_assert_int_eq(r.hard_fail, 0);

	for (unsigned i = 0; i < SCORE_WINDOW; i++)
		s[i] = refused(NOW - i);
	score_evaluate(&c, s, SCORE_WINDOW, NULL, NOW, &r);
	ck_assert_int_eq(r.hard_fail, 1);
	ck_assert_double_eq_tol(r.score, 0, TOL);
	ck_assert_double_eq_tol(r.dim[1], -1, TOL); /* no latency to judge */
}
END_TEST

/* S2-7: stale samples are ignored; a stale metric hands its weight to
 * the fresh inputs of its dimension. */
START_TEST(freshness)
{
	score_config_t c = cfg(SCORE_PROFILE_PROBE);
	score_sample_t s[SCORE_WINDOW];
	score_metrics_t m;
	score_result_t r;

	good_window(s, SCORE_WINDOW, 10);
	for (unsigned i = 0; i < 8; i++)
		s[i] = refused(NOW - 301 - (8 - i));
	score_evaluate(&c, s, SCORE_WINDOW, NULL, NOW, &r);
	ck_assert_double_eq_tol(r.score, 100, TOL);
	ck_assert_int_eq(r.vetoed, 0);

	/* a stale 50 % loss says nothing; a fresh one vetoes */
	good_window(s, SCORE_WINDOW, 10);
	memset(&m, 0, sizeof(m));
	push(&m, METRIC_LOSS, 50, NOW - 301);
	score_evaluate(&c, s, SCORE_WINDOW, &m, NOW, &r);
	ck_assert_double_eq_tol(r.score, 100, TOL);
	push(&m, METRIC_LOSS, 50, NOW - 300);   /* exactly 5 min: fresh */
	score_evaluate(&c, s, SCORE_WINDOW, &m, NOW, &r);
	ck_assert_int_eq(r.vetoed, 1);

	/* four-dimension load: stale bandwidth hands its weight to cpu */
	c = cfg(SCORE_PROFILE_FOUR);
	memset(&m, 0, sizeof(m));
	push(&m, METRIC_BANDWIDTH, 100, NOW - 1000);
	push(&m, METRIC_CPU, 85, NOW);          /* normalises to 0.5 */
	score_evaluate(&c, s, SCORE_WINDOW, &m, NOW, &r);
	ck_assert_double_eq_tol(r.dim[2], 0.5, TOL);
	push(&m, METRIC_BANDWIDTH, 100, NOW);   /* fresh: 0 with weight 2 */
	score_evaluate(&c, s, SCORE_WINDOW, &m, NOW, &r);
	ck_assert_double_eq_tol(r.dim[2], 0.5 / 3, TOL);
}
END_TEST

/* S2-7: no fresh input at all is unknown, and judges nothing. */
START_TEST(unknown_without_data)
{
	score_config_t c = cfg(SCORE_PROFILE_PROBE);
	score_sample_t s[4];
	score_metrics_t m;
	score_result_t r;

	score_evaluate(&c, NULL, 0, NULL, NOW, &r);
	ck_assert_int_eq(r.unknown, 1);
	ck_assert_double_eq(r.score, -1);
	for (int i = 0; i < 4; i++)
		ck_assert_double_eq(r.dim[i], -1);
	ck_assert_int_eq(score_grade(&c, r.score), SCORE_GRADE_UNKNOWN);

	for (unsigned i = 0; i < 4; i++)
		s[i] = refused(NOW - 400 + i);
	memset(&m, 0, sizeof(m));
	push(&m, METRIC_RTT_MS, 10, NOW - 400);
	score_evaluate(&c, s, 4, &m, NOW, &r);
	ck_assert_int_eq(r.unknown, 1);
	ck_assert_int_eq(r.hard_fail, 0);       /* stale: no removal */
	ck_assert_int_eq(r.abnormal, 0);

	c = cfg(SCORE_PROFILE_FOUR);
	score_evaluate(&c, s, 4, &m, NOW, &r);
	ck_assert_int_eq(r.unknown, 1);
	ck_assert_double_eq(r.score, -1);
}
END_TEST

/* Only the newest SCORE_WINDOW samples count. */
START_TEST(window_limit)
{
	score_config_t c = cfg(SCORE_PROFILE_PROBE);
	score_sample_t s[SCORE_WINDOW + 4];
	score_result_t r;
	good_window(s, SCORE_WINDOW + 4, 10);
	for (unsigned i = 0; i < 4; i++)
		s[i].connected = 0;
	score_evaluate(&c, s, SCORE_WINDOW + 4, NULL, NOW, &r);
	ck_assert_double_eq_tol(r.score, 100, TOL);
}
END_TEST

/* S2-2: the four-dimension profile with pushed metrics. */
START_TEST(four_profile)
{
	score_config_t c = cfg(SCORE_PROFILE_FOUR);
	score_sample_t s[SCORE_WINDOW];
	score_metrics_t m;
	score_result_t base, r;

	good_window(s, SCORE_WINDOW, 10);
	memset(&m, 0, sizeof(m));
	push(&m, METRIC_LOSS, 0, NOW);
	push(&m, METRIC_RTT_MS, 15, NOW);
	push(&m, METRIC_CONNECT_MS, 20, NOW);
	push(&m, METRIC_HTTP_5XX, 0, NOW);
	push(&m, METRIC_HIT_RATIO, 100, NOW);
	push(&m, METRIC_ORIGIN_SUCCESS, 100, NOW);
	push(&m, METRIC_FAILURE_RATE, 0, NOW);
	push(&m, METRIC_BANDWIDTH, 50, NOW);
	push(&m, METRIC_CPU, 30, NOW);
	push(&m, METRIC_MEMORY, 40, NOW);
	push(&m, METRIC_DISK, 50, NOW);
	push(&m, METRIC_RESTARTS, 0, NOW);
	push(&m, METRIC_VOLATILITY, 0, NOW);
	score_evaluate(&c, s, SCORE_WINDOW, &m, NOW, &base);
	ck_assert_double_eq_tol(base.score, 100, TOL);
	for (int i = 0; i < 4; i++)
		ck_assert_double_eq_tol(base.dim[i], 1, TOL);

	/* high bandwidth (95 %: 0.125, weighted 2 of 5) lowers load */
	score_metrics_t m2 = m;
	push(&m2, METRIC_BANDWIDTH, 95, NOW);
	score_evaluate(&c, s, SCORE_WINDOW, &m2, NOW, &r);
	ck_assert_double_eq_tol(r.dim[2], (2 * 0.125 + 3) / 5, TOL);
	ck_assert_double_eq_tol(r.dim[0], 1, TOL);
	ck_assert_double_eq_tol(r.dim[1], 1, TOL);
	ck_assert_double_lt(r.score, base.score);
	ck_assert_double_eq_tol(r.score, 100 - 25 * (1 - r.dim[2]), TOL);
	/* bandwidth weighs more than cpu at the same normalised value */
	score_metrics_t m3 = m;
	push(&m3, METRIC_CPU, 100, NOW);
	score_result_t r3;
	push(&m2, METRIC_BANDWIDTH, 100, NOW);
	score_evaluate(&c, s, SCORE_WINDOW, &m2, NOW, &r);
	score_evaluate(&c, s, SCORE_WINDOW, &m3, NOW, &r3);
	ck_assert_double_lt(r.dim[2], r3.dim[2]);

	/* 5xx at 4 % (0.2 of five service inputs) lowers service */
	m2 = m;
	push(&m2, METRIC_HTTP_5XX, 4, NOW);
	score_evaluate(&c, s, SCORE_WINDOW, &m2, NOW, &r);
	ck_assert_double_eq_tol(r.dim[1], (0.2 + 4) / 5, TOL);
	ck_assert_double_lt(r.score, base.score);

	/* restarts: each costs half of the restart input */
	m2 = m;
	push(&m2, METRIC_RESTARTS, 1, NOW);
	score_evaluate(&c, s, SCORE_WINDOW, &m2, NOW, &r);
	ck_assert_double_eq_tol(r.dim[3], (0.5 + 2) / 3, TOL);

	/* intermittent timeouts in the window lower stability */
	score_sample_t t[SCORE_WINDOW];
	good_window(t, SCORE_WINDOW, 10);
	t[2].timed_out = 1, t[9].timed_out = 1;
	score_evaluate(&c, t, SCORE_WINDOW, &m, NOW, &r);
	ck_assert_double_lt(r.dim[3], 1);

	/* probes only: load has no input and hands its weight over */
	score_evaluate(&c, s, SCORE_WINDOW, NULL, NOW, &r);
	ck_assert_double_eq(r.dim[2], -1);
	ck_assert_double_eq_tol(r.score, 100, TOL);
	ck_assert_int_eq(r.unknown, 0);

	/* network veto applies in this profile too */
	m2 = m;
	push(&m2, METRIC_LOSS, 5, NOW);
	score_evaluate(&c, s, SCORE_WINDOW, &m2, NOW, &r);
	ck_assert_int_eq(r.vetoed, 1);
	ck_assert_double_lt(r.score, 60);
}
END_TEST

/* S0-6, S2-5: good >= 80, usable 60..80, degraded < 60. */
START_TEST(grade_boundaries)
{
	score_config_t c = cfg(SCORE_PROFILE_PROBE);
	ck_assert_int_eq(score_grade(&c, 100), SCORE_GRADE_GOOD);
	ck_assert_int_eq(score_grade(&c, 80), SCORE_GRADE_GOOD);
	ck_assert_int_eq(score_grade(&c, 79.999), SCORE_GRADE_USABLE);
	ck_assert_int_eq(score_grade(&c, 60), SCORE_GRADE_USABLE);
	ck_assert_int_eq(score_grade(&c, 59.999), SCORE_GRADE_DEGRADED);
	ck_assert_int_eq(score_grade(&c, 0), SCORE_GRADE_DEGRADED);
	ck_assert_int_eq(score_grade(&c, -1), SCORE_GRADE_UNKNOWN);
}
END_TEST

START_TEST(metric_names_and_ranges)
{
	for (int i = 0; i < METRIC_COUNT; i++) {
		const char *n = score_metric_name((metric_t)i);
		ck_assert_ptr_nonnull(n);
		ck_assert_int_eq(score_metric_parse(n), i);
	}
	ck_assert_int_eq(score_metric_parse("loss"), METRIC_LOSS);
	ck_assert_int_eq(score_metric_parse("failure_rate"),
	                 METRIC_FAILURE_RATE);
	ck_assert_int_eq(score_metric_parse("nope"), -1);
	ck_assert_int_eq(score_metric_parse(""), -1);
	ck_assert_int_eq(score_metric_parse("LOSS"), -1);
	ck_assert_ptr_null(score_metric_name(METRIC_COUNT));

	ck_assert_int_eq(score_metric_check(METRIC_LOSS, 0), 0);
	ck_assert_int_eq(score_metric_check(METRIC_LOSS, 100), 0);
	ck_assert_int_eq(score_metric_check(METRIC_LOSS, 100.5), -1);
	ck_assert_int_eq(score_metric_check(METRIC_CPU, -1), -1);
	ck_assert_int_eq(score_metric_check(METRIC_RTT_MS, 12345), 0);
	ck_assert_int_eq(score_metric_check(METRIC_CONNECT_MS, -0.1), -1);
	ck_assert_int_eq(score_metric_check(METRIC_RESTARTS, 3), 0);
	ck_assert_int_eq(score_metric_check(METRIC_RESTARTS, 2.5), -1);
	ck_assert_int_eq(score_metric_check(METRIC_RESTARTS, -1), -1);
	ck_assert_int_eq(score_metric_check(METRIC_VOLATILITY, 1), 0);
	ck_assert_int_eq(score_metric_check(METRIC_VOLATILITY, 1.01), -1);
	ck_assert_int_eq(score_metric_check(METRIC_BANDWIDTH, NAN), -1);
	ck_assert_int_eq(score_metric_check(METRIC_RTT_MS, INFINITY), -1);
	ck_assert_int_eq(score_metric_check(METRIC_COUNT, 1), -1);
}
END_TEST

/* S2-2: weights per business.  A node whose network scores half (an RTT
 * of 110 ms, midway between 20 and 200) and whose service, load and
 * stability are perfect scores 85 under the global weights (30 30 25 15):
 * good, full weight.  A video service weighing the network 45 scores it
 * 77.5, derated; dynamic acceleration weighing the service 45 scores it
 * 90.  The names choose the profile; a set that misses or repeats a
 * dimension, mixes profiles or adds up to 0 is refused. */
START_TEST(s2_2_weights_per_service)
{
	score_metrics_t m = { 0 };
	uint32_t now = 1000;
	push(&m, METRIC_RTT_MS, 110, now);
	push(&m, METRIC_HTTP_5XX, 0, now);
	push(&m, METRIC_BANDWIDTH, 50, now);
	push(&m, METRIC_RESTARTS, 0, now);
	score_config_t c = cfg(SCORE_PROFILE_FOUR);
	score_result_t r;
	score_evaluate(&c, NULL, 0, &m, now, &r);
	ck_assert_double_eq_tol(r.score, 85, 0.01);
	const char *names[4] = { "network", "service", "load", "stability" };
	double video[4] = { 45, 20, 20, 15 }, w[4];
	score_profile_t pf;
	ck_assert_int_eq(score_weights_named(names, video, 4, &pf, w), 0);
	ck_assert_int_eq(pf, SCORE_PROFILE_FOUR);
	memcpy(c.w_four, w, sizeof(w));
	score_evaluate(&c, NULL, 0, &m, now, &r);
	ck_assert_double_eq_tol(r.score, 77.5, 0.01);
	const char *shuffled[4] = { "stability", "load", "network", "service" };
	double dyn[4] = { 15, 20, 20, 45 };
	ck_assert_int_eq(score_weights_named(shuffled, dyn, 4, &pf, w), 0);
	ck_assert_double_eq(w[1], 45);    /* in the profile's order */
	memcpy(c.w_four, w, sizeof(w));
	score_evaluate(&c, NULL, 0, &m, now, &r);
	ck_assert_double_eq_tol(r.score, 90, 0.01);
	const char *probe[4] = { "loss", "latency", "connect", "jitter" };
	ck_assert_int_eq(score_weights_named(probe, video, 4, &pf, w), 0);
	ck_assert_int_eq(pf, SCORE_PROFILE_PROBE);
	const char *mixed[4] = { "network", "service", "load", "jitter" };
	const char *twice[4] = { "network", "network", "load", "stability" };
	double zero[4] = { 0, 0, 0, 0 }, over[4] = { 101, 20, 20, 15 };
	ck_assert_int_eq(score_weights_named(mixed, video, 4, &pf, w), -1);
	ck_assert_int_eq(score_weights_named(twice, video, 4, &pf, w), -1);
	ck_assert_int_eq(score_weights_named(names, zero, 4, &pf, w), -1);
	ck_assert_int_eq(score_weights_named(names, over, 4, &pf, w), -1);
	ck_assert_int_eq(score_weights_named(names, video, 3, &pf, w), -1);
}
END_TEST

static Suite *score_suite(void)
{
	Suite *s = suite_create("score");
	TCase *t = tcase_create("score");
	tcase_add_test(t, defaults);
	tcase_add_test(t, normalize_edges);
	tcase_add_test(t, loss_curve);
	tcase_add_test(t, perfect_node_scores_100);
	tcase_add_test(t, latency_and_jitter_dims);
	tcase_add_test(t, jitter_against_stable_path);
	tcase_add_test(t, latency_from_recent_answers);
	tcase_add_test(t, s3_9_latency_outlier_dropped);
	tcase_add_test(t, veto_five_percent_loss);
	tcase_add_test(t, s2_4_veto_level);
	tcase_add_test(t, loss_forgive_single_failure);
	tcase_add_test(t, latency_over_threshold);
	tcase_add_test(t, one_vs_two_abnormal);
	tcase_add_test(t, hard_fail);
	tcase_add_test(t, freshness);
	tcase_add_test(t, unknown_without_data);
	tcase_add_test(t, window_limit);
	tcase_add_test(t, four_profile);
	tcase_add_test(t, grade_boundaries);
	tcase_add_test(t, metric_names_and_ranges);
	tcase_add_test(t, s2_2_weights_per_service);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(score_suite)
