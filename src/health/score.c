/* SPDX-License-Identifier: MIT */
/* Quality scores: pure arithmetic over probe results and pushed metrics.
 *
 * Thread-safety: every function is pure (no I/O, no allocation, no state
 * but the const tables below), so any thread may call any of them.
 *
 * How a score is built (both profiles):
 *  1. Each raw input (a figure from the fresh probe samples, or a fresh
 *     pushed metric) is normalised to 0..1 (S2-3).  A stale or absent
 *     input is "no input" (-1), never 0.
 *  2. The inputs of one dimension are combined by a weighted mean over the
 *     inputs present, so a stale input hands its weight to the fresh
 *     inputs of the same dimension (S2-7).
 *  3. The dimensions are combined the same way: a dimension with no input
 *     hands its weight to the others.  No dimension at all: unknown (S2-7).
 *  4. Veto (S2-4): if a key dimension (loss, connect success) or any single
 *     input of it is below veto_level, the score is multiplied by
 *     veto_factor.  Checking the inputs one by one, and not only their
 *     mean, is what S2-4 asks ("any key metric"): a pushed 5 % loss must
 *     not be diluted by a clean probe window any more than by the other
 *     dimensions. */
#include "health/score.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* Metric names as typed after `gslbctl metrics push NODE` (S1-2, S2-2),
 * in the order of metric_t. */
static const char *const metric_names[METRIC_COUNT] = {
	[METRIC_LOSS] = "loss",
	[METRIC_RTT_MS] = "rtt_ms",
	[METRIC_CONNECT_MS] = "connect_ms",
	[METRIC_HTTP_5XX] = "http_5xx",
	[METRIC_HIT_RATIO] = "hit_ratio",
	[METRIC_ORIGIN_SUCCESS] = "origin_success",
	[METRIC_BANDWIDTH] = "bandwidth",
	[METRIC_CPU] = "cpu",
	[METRIC_MEMORY] = "memory",
	[METRIC_DISK] = "disk",
	[METRIC_RESTARTS] = "restarts",
	[METRIC_VOLATILITY] = "volatility",
	[METRIC_FAILURE_RATE] = "failure_rate",
};

/* Thresholds (good, bad) of the inputs that have no tunable in
 * score_config_t.  S2-3 gives the reference figures; where it gives none
 * the choice is ours and said so. */
#define MISS_GOOD 0.0        /* S2-3: miss ratio 0..40 % */
#define MISS_BAD 40.0
#define H5XX_GOOD 0.0        /* S2-3: 5xx 0..5 % */
#define H5XX_BAD 5.0
#define FAIL_GOOD 0.0        /* ours, after S1-2: a failure rate above 5 %
                                is a fault, so 5 % scores 0 like 5xx */
#define FAIL_BAD 5.0
#define ORIGIN_GOOD 99.0     /* ours: origin fetches should almost never
                                fail; 90 % success is as bad as it gets */
#define ORIGIN_BAD 90.0
#define BW_GOOD 60.0         /* S2-3: bandwidth 60..100 % */
#define BW_BAD 100.0
#define CPU_GOOD 70.0        /* S2-3: CPU 70..100 % */
#define CPU_BAD 100.0
#define MEM_GOOD 80.0        /* ours: memory and disk only hurt when they */
#define MEM_BAD 100.0        /* near full; S2-3 gives no figure */
#define DISK_GOOD 80.0
#define DISK_BAD 100.0
#define RESTART_BAD 2.0      /* S2-3: each restart -0.5 of stability, so
                                two restarts leave nothing */
#define VOLAT_GOOD 0.0       /* S2-3: volatility 0..1 */
#define VOLAT_BAD 1.0
/* Ours: the probe window is coarse (1/16 steps), so the probe-derived
 * service and stability inputs use gentle slopes: a status-ok ratio of
 * 1 is full marks and 0.5 is nothing; a quarter of the window timing out
 * is nothing (S2-2 "intermittent timeouts"). */
#define STATUS_GOOD 1.0
#define STATUS_BAD 0.5
#define TIMEOUT_GOOD 0.0
#define TIMEOUT_BAD 0.25

/* Weights inside the load dimension: S2-2 says bandwidth matters most;
 * ours is bandwidth 2, the others 1 each (bandwidth 40 % of the load). */
#define W_BW 2.0
#define W_LOAD_OTHER 1.0

void score_config_default(score_config_t *c)
{
	memset(c, 0, sizeof(*c));
	c->profile = SCORE_PROFILE_PROBE;
	/* S0-6: loss 35, latency 30, connect success 25, jitter 10. */
	c->w_probe[0] = 35, c->w_probe[1] = 30;
	c->w_probe[2] = 25, c->w_probe[3] = 10;
	/* S2-2: network 30, service 30, load 25, stability 15. */
	c->w_four[0] = 30, c->w_four[1] = 30;
	c->w_four[2] = 25, c->w_four[3] = 15;
	c->latency_good_ms = 20, c->latency_bad_ms = 200;   /* S2-3 RTT */
	c->connect_good_ms = 30, c->connect_bad_ms = 300;   /* S2-3 */
	c->jitter_good_ms = 5, c->jitter_bad_ms = 100;
	c->latency_threshold_ms = 2000;                     /* S1-4 */
	c->veto_level = 0.2;                                /* S2-4 */
	c->veto_factor = 0.5;
	c->fresh_s = 300;                                   /* S2-7: 5 min */
	c->good = 80, c->usable = 60;                       /* S0-6, S2-5 */
	c->latency_alpha = 0.5;                             /* S4-7 */
	c->outlier_factor = 3;                              /* S3-9 */
	c->loss_forgive = 1;
}

double score_normalize(double value, double good, double bad)
{
	if (isnan(value))
		return 0;               /* a value we cannot read earns nothing */
	if (good == bad)                /* degenerate range: a step at good */
		return value <= good ? 1 : 0;
	if (good < bad) {               /* lower is better (latency, loss) */
		if (value <= good)
			return 1;
		if (value >= bad)
			return 0;
		return (bad - value) / (bad - good);
	}
	if (value >= good)              /* higher is better (success ratios) */
		return 1;
	if (value <= bad)
		return 0;
	return (value - bad) / (good - bad);
}

/* Loss curve (S2-3: full marks up to 0.1 %, near zero above 3 %).
 * Piecewise linear through these knots:
 *     loss %   0.1   1.0   3.0   10.0
 *     score    1.0   0.6   0.05  0.0
 * Steep at first (0.1 -> 1 % already costs 0.4: S0-1 shows a path going
 * from 0.1 to 2 % loss is the start of an outage), 0.05 at 3 % ("near
 * zero", but still ranking 3 % above 8 %), and 0 from 10 %.  Every loss
 * above about 2.3 % normalises below the 0.2 veto level (S2-4). */
static const double loss_x[] = { 0.1, 1.0, 3.0, 10.0 };
static const double loss_y[] = { 1.0, 0.6, 0.05, 0.0 };

double score_normalize_loss(double loss_pct)
{
	const size_t k = sizeof(loss_x) / sizeof(loss_x[0]);
	if (isnan(loss_pct))
		return 0;
	if (loss_pct <= loss_x[0])
		return loss_y[0];
	for (size_t i = 1; i < k; i++)
		if (loss_pct <= loss_x[i])
			return loss_y[i - 1] + (loss_y[i] - loss_y[i - 1]) *
			       (loss_pct - loss_x[i - 1]) /
			       (loss_x[i] - loss_x[i - 1]);
	return loss_y[k - 1];
}

score_grade_t score_grade(const score_config_t *c, double score)
{
	if (score < 0 || isnan(score))
		return SCORE_GRADE_UNKNOWN;
	if (score >= c->good)
		return SCORE_GRADE_GOOD;
	if (score >= c->usable)
		return SCORE_GRADE_USABLE;
	return SCORE_GRADE_DEGRADED;
}

/* ---- weighted means that skip absent inputs (S2-7) ---------------- */

typedef struct wmean {
	double sum, w;
} wmean_t;

/* Adds input @v (absent when negative) with weight @w. */
static void wm_add(wmean_t *a, double v, double w)
{
	if (v < 0 || !(w > 0))
		return;
	a->sum += v * w;
	a->w += w;
}

/* The mean, or -1 when no input was present. */
static double wm_get(const wmean_t *a)
{
	return a->w > 0 ? a->sum / a->w : -1;
}

/* ---- the probe window ---------------------------------------------- */

/* A sample "succeeded" when it connected, answered in time, and the
 * answer was the expected one (S1-1, S4-2). */
static int sample_ok(const score_sample_t *s)
{
	return s->connected && !s->timed_out && s->status_ok && s->body_ok;
}

/* The normalised inputs derived from the fresh probe samples; -1 for an
 * input the window cannot give. */
typedef struct probe_in {
	double loss;        /* failed-sample percentage, loss curve */
	double latency;     /* mean latency of successful samples */
	double connect;     /* fraction of samples that connected */
	double jitter;      /* mean |delta| of consecutive successful latency */
	double status;      /* status/body ok ratio among answered samples */
	double timeouts;    /* fraction of samples that timed out */
	const score_sample_t *newest; /* newest fresh sample, or NULL */
} probe_in_t;

static int is_fresh(uint32_t t, uint32_t now, uint32_t fresh_s)
{
	/* A clock before fresh_s (tests, or a clock at 0) makes all fresh;
	 * a time in the future is fresh too (clock skew between threads). */
	return now < fresh_s || t >= now - fresh_s;
}

/* The latency of the successful answers @lat[0..@ok), oldest first;
 * *@lat_n gets how many count.
 *
 * Outliers first (S3-9): an answer more than outlier_factor times
 * slower than each of its neighbours among the successful answers (and
 * SCORE_OUTLIER_FLOOR_MS slower at least) is a spike, from scheduling
 * or one retransmission, and is dropped.  The newest answer has no
 * successor yet and is always kept: a spike counts for the one round
 * in which it is the newest, and a path that really got slower gives
 * two slow answers in a row, which are never outliers, so a
 * degradation is never filtered away.
 *
 * Latency is an exponential moving average of the kept answers,
 * oldest first, with weight latency_alpha for each newer one
 * (S4-7 "EMA on latency", S3-9).  With the default 0.5 an answer
 * four rounds old weighs 1/16: the dimension follows the path
 * within a few rounds, as the mean of the newest four did, but one
 * slow answer moves it only half way. */
static double latency_ema(const score_config_t *c, const double *lat, unsigned ok,
                          unsigned *lat_n)
{
	double kept[SCORE_WINDOW];
	unsigned nk = 0;
	for (unsigned i = 0; i < ok; i++) {
		if (c->outlier_factor > 0 && i + 1 < ok) {
			double nb = lat[i + 1];
			if (i > 0 && lat[i - 1] > nb)
				nb = lat[i - 1];
			if (lat[i] > c->outlier_factor * nb + SCORE_OUTLIER_FLOOR_MS)
				continue;
		}
		kept[nk++] = lat[i];
	}
	double alpha = c->latency_alpha > 0 && c->latency_alpha <= 1 ?
	               c->latency_alpha : 1;
	double ema = 0;
	for (unsigned i = 0; i < nk; i++) {
		ema = i ? ema + alpha * (kept[i] - ema) : kept[i];
		(*lat_n)++;
	}
	return ema;
}

/* The sum of route jitter over the successful answers @lat[0..@ok);
 * *@jn gets how many terms it has.
 *
 * Route jitter compares the current path with the stable-period path:
 * how far each of the newest SCORE_RECENT answers strays from the
 * node's stable latency @stable_ms when that is known, so a path that
 * moves from 30 to 120 ms counts here as well as in latency.  Without
 * a stable reference (a new node), how far it strays from the previous
 * answer: a stable path gives near-equal times, route changes and
 * queueing give jumps.  Failed samples are skipped, not counted as
 * jumps, and outliers are kept (S3-9): variation is what it measures. */
static double route_jitter(const double *lat, unsigned ok, double stable_ms,
                           unsigned *jn)
{
	double jit_sum = 0, prev = 0;
	int have_prev = 0;
	for (unsigned i = ok > SCORE_RECENT ? ok - SCORE_RECENT : 0; i < ok; i++) {
		if (stable_ms > 0) {
			jit_sum += fabs(lat[i] - stable_ms);
			(*jn)++;
		} else if (have_prev) {
			jit_sum += fabs(lat[i] - prev);
			(*jn)++;
		}
		prev = lat[i];
		have_prev = 1;
	}
	return jit_sum;
}

static void probe_inputs(const score_config_t *c, const score_sample_t *s,
                         unsigned n, double stable_ms, uint32_t now,
                         probe_in_t *p)
{
	unsigned fresh = 0, failed = 0, connected = 0, answered = 0;
	unsigned status_good = 0, timeouts = 0, ok = 0, jn = 0, lat_n = 0;
	double lat[SCORE_WINDOW];

	p->loss = p->latency = p->connect = p->jitter = -1;
	p->status = p->timeouts = -1;
	p->newest = NULL;
	if (s == NULL)
		n = 0;
	if (n > SCORE_WINDOW) {         /* keep the newest SCORE_WINDOW */
		s += n - SCORE_WINDOW;
		n = SCORE_WINDOW;
	}
	for (unsigned i = 0; i < n; i++) {
		const score_sample_t *x = &s[i];
		if (!is_fresh(x->time, now, c->fresh_s))
			continue;       /* S2-7: stale samples say nothing */
		fresh++;
		p->newest = x;
		connected += x->connected != 0;
		timeouts += x->timed_out != 0;
		if (x->connected && !x->timed_out) {
			answered++;
			status_good += x->status_ok && x->body_ok;
		}
		if (!sample_ok(x)) {
			failed++;
			continue;
		}
		lat[ok++] = x->latency_ms;
	}
	if (fresh == 0)
		return;

	/* Latency and route jitter (S0-6) describe the path now
	 * (latency_ema(), route_jitter()).  Loss, connect success and
	 * status are rates and use the whole window. */
	double lat_sum = latency_ema(c, lat, ok, &lat_n);
	double jit_sum = route_jitter(lat, ok, stable_ms, &jn);

	/* Loss: the percentage of failed samples.  A 16-sample window
	 * moves in 6.25 % steps, and any step is past the 0.2 veto level
	 * of the loss curve, so one failed probe would veto the score for
	 * the 16 rounds it stays in the window and the node would be
	 * demoted on a single bad probe, against S0-8.  So, while the
	 * newest sample succeeds, loss_forgive failures (default 1) are
	 * not counted: an isolated failure costs one round (the round it
	 * is the newest), and a repeat failure counts in full.  Set
	 * loss_forgive to 0 for the plain percentage. */
	unsigned lost = failed;
	if (sample_ok(p->newest))
		lost = lost > c->loss_forgive ? lost - c->loss_forgive : 0;
	p->loss = score_normalize_loss(100.0 * lost / fresh);
	p->connect = (double)connected / fresh;
	p->timeouts = score_normalize((double)timeouts / fresh,
	                              TIMEOUT_GOOD, TIMEOUT_BAD);
	if (answered)
		p->status = score_normalize((double)status_good / answered,
		                            STATUS_GOOD, STATUS_BAD);
	if (lat_n)
		p->latency = score_normalize(lat_sum, c->latency_good_ms,
		                             c->latency_bad_ms);
	if (jn)
		p->jitter = score_normalize(jit_sum / jn, c->jitter_good_ms,
		                            c->jitter_bad_ms);
}

/* ---- pushed metrics ------------------------------------------------ */

/* The normalised value of metric @k, or -1 when absent or stale. */
static double metric_in(const score_config_t *c, const score_metrics_t *m,
                        metric_t k, uint32_t now)
{
	if (m == NULL || m->time[k] == 0 ||
	    !is_fresh(m->time[k], now, c->fresh_s))
		return -1;              /* S2-7 */
	double v = m->value[k];
	switch (k) {
	case METRIC_LOSS:
		return score_normalize_loss(v);
	case METRIC_RTT_MS:
		return score_normalize(v, c->latency_good_ms, c->latency_bad_ms);
	case METRIC_CONNECT_MS:
		return score_normalize(v, c->connect_good_ms, c->connect_bad_ms);
	case METRIC_HTTP_5XX:
		return score_normalize(v, H5XX_GOOD, H5XX_BAD);
	case METRIC_HIT_RATIO:          /* judged as a miss ratio (S2-3) */
		return score_normalize(100.0 - v, MISS_GOOD, MISS_BAD);
	case METRIC_ORIGIN_SUCCESS:
		return score_normalize(v, ORIGIN_GOOD, ORIGIN_BAD);
	case METRIC_BANDWIDTH:
		return score_normalize(v, BW_GOOD, BW_BAD);
	case METRIC_CPU:
		return score_normalize(v, CPU_GOOD, CPU_BAD);
	case METRIC_MEMORY:
		return score_normalize(v, MEM_GOOD, MEM_BAD);
	case METRIC_DISK:
		return score_normalize(v, DISK_GOOD, DISK_BAD);
	case METRIC_RESTARTS:
		return score_normalize(v, 0, RESTART_BAD);
	case METRIC_VOLATILITY:
		return score_normalize(v, VOLAT_GOOD, VOLAT_BAD);
	case METRIC_FAILURE_RATE:
		return score_normalize(v, FAIL_GOOD, FAIL_BAD);
	default:
		return -1;
	}
}

/* ---- the network sub-dimensions shared by both profiles ------------ */

/* Loss, latency and connect combine the probe-derived input and the
 * pushed metric of the same quantity by their plain mean (equal weights):
 * the probe sees the node from our vantage point, the metric from the
 * node's own statistics or other vantage points (S2-2), and neither is
 * known to be the better witness.  A stale one hands its weight to the
 * other (S2-7). */
typedef struct net_in {
	double loss, latency, connect;
	int veto;           /* a key input or sub-dimension below veto_level */
} net_in_t;

static double mean2(double a, double b)
{
	wmean_t w = { 0, 0 };
	wm_add(&w, a, 1);
	wm_add(&w, b, 1);
	return wm_get(&w);
}

static int below(double v, double level)
{
	return v >= 0 && v < level;
}

static void net_inputs(const score_config_t *c, const probe_in_t *p,
                       const score_metrics_t *m, uint32_t now, net_in_t *o)
{
	double m_loss = metric_in(c, m, METRIC_LOSS, now);
	double m_rtt = metric_in(c, m, METRIC_RTT_MS, now);
	double m_conn = metric_in(c, m, METRIC_CONNECT_MS, now);

	o->loss = mean2(p->loss, m_loss);
	o->latency = mean2(p->latency, m_rtt);
	o->connect = mean2(p->connect, m_conn);
	/* S2-4 key metrics: loss (each witness on its own, see the file
	 * comment) and connect success.  connect_ms is a duration that
	 * refines the connect dimension; it vetoes only through the
	 * combined dimension, a slow handshake not being a failed one. */
	o->veto = below(p->loss, c->veto_level) ||
	          below(m_loss, c->veto_level) ||
	          below(p->connect, c->veto_level) ||
	          below(o->loss, c->veto_level) ||
	          below(o->connect, c->veto_level);
}

/* ---- per-round verdict of the newest sample (S1-4, S4-4) ----------- */

static void round_verdict(const score_sample_t *x, const score_config_t *c,
                          score_result_t *out)
{
	uint8_t ab = 0;
	if (x == NULL)
		return;         /* no fresh round: nothing to judge (S2-7) */
	/* S1-4 "TCP connect timeout": a failed connect, or a probe that
	 * ran out of time at any stage. */
	if (!x->connected || x->timed_out)
		ab |= SCORE_AB_CONNECT;
	/* S1-4 "non-2xx status": judged only on an answer that arrived;
	 * a probe with no answer is already abnormal above, and counting
	 * the missing status again would turn every refused connection
	 * into two dimensions. */
	if (x->connected && !x->timed_out && (!x->status_ok || !x->body_ok))
		ab |= SCORE_AB_STATUS;
	/* S1-4 "latency over threshold": only meaningful once connected. */
	if (x->connected && x->latency_ms > c->latency_threshold_ms)
		ab |= SCORE_AB_LATENCY;
	out->abnormal = ab;
	out->n_abnormal = (uint8_t)(((ab & SCORE_AB_STATUS) != 0) +
	                            ((ab & SCORE_AB_CONNECT) != 0) +
	                            ((ab & SCORE_AB_LATENCY) != 0));
	/* S4-4 hard failure, "every probe of the round failed to connect":
	 * the round is the newest sample (score.h), and it is hard when
	 * that sample never connected (refused, unreachable, or the connect
	 * itself timed out).  A sample that connected and then was slow or
	 * timed out waiting for the answer is a soft failure: the node is
	 * there, the score and the confirmations deal with it (S0-8). */
	out->hard_fail = !x->connected;
}

/* ---- evaluation ---------------------------------------------------- */

static void finish(const score_config_t *c, const double w[4],
                   score_result_t *out, int veto)
{
	wmean_t total = { 0, 0 };
	for (int i = 0; i < 4; i++)
		wm_add(&total, out->dim[i], w[i]);
	double mean = wm_get(&total);
	if (mean < 0) {                 /* S2-7: no fresh input at all */
		out->unknown = 1;
		out->score = -1;
		for (int i = 0; i < 4; i++)
			out->dim[i] = -1;
		return;
	}
	out->score = mean * 100;
	if (veto) {                     /* S2-4 */
		out->vetoed = 1;
		out->score *= c->veto_factor;
	}
	if (out->score < 0)
		out->score = 0;
	if (out->score > 100)
		out->score = 100;
}

/* S0-6: the four probe dimensions; pushed rtt_ms, loss and connect_ms
 * refine latency, loss and connect. */
static void eval_probe(const score_config_t *c, const probe_in_t *p,
                       const score_metrics_t *m, uint32_t now,
                       score_result_t *out)
{
	net_in_t net;
	net_inputs(c, p, m, now, &net);
	out->dim[0] = net.loss;
	out->dim[1] = net.latency;
	out->dim[2] = net.connect;
	out->dim[3] = p->jitter;
	finish(c, c->w_probe, out, net.veto);
}

/* S2-2: network, service, load, stability. */
static void eval_four(const score_config_t *c, const probe_in_t *p,
                      const score_metrics_t *m, uint32_t now,
                      score_result_t *out)
{
	net_in_t net;
	wmean_t w;

	/* Network: loss, latency and connect weighted as in the probe
	 * profile (w_probe[0..2], 35/30/25); jitter belongs to no S2-2
	 * dimension and is left out. */
	net_inputs(c, p, m, now, &net);
	w = (wmean_t){ 0, 0 };
	wm_add(&w, net.loss, c->w_probe[0]);
	wm_add(&w, net.latency, c->w_probe[1]);
	wm_add(&w, net.connect, c->w_probe[2]);
	out->dim[0] = wm_get(&w);

	/* Service: 5xx, hit ratio, origin success, failure rate and the
	 * probes' status-ok ratio, equal weights (S2-2 gives none). */
	w = (wmean_t){ 0, 0 };
	wm_add(&w, metric_in(c, m, METRIC_HTTP_5XX, now), 1);
	wm_add(&w, metric_in(c, m, METRIC_HIT_RATIO, now), 1);
	wm_add(&w, metric_in(c, m, METRIC_ORIGIN_SUCCESS, now), 1);
	wm_add(&w, metric_in(c, m, METRIC_FAILURE_RATE, now), 1);
	wm_add(&w, p->status, 1);
	out->dim[1] = wm_get(&w);

	/* Load: bandwidth weighted most (S2-2). */
	w = (wmean_t){ 0, 0 };
	wm_add(&w, metric_in(c, m, METRIC_BANDWIDTH, now), W_BW);
	wm_add(&w, metric_in(c, m, METRIC_CPU, now), W_LOAD_OTHER);
	wm_add(&w, metric_in(c, m, METRIC_MEMORY, now), W_LOAD_OTHER);
	wm_add(&w, metric_in(c, m, METRIC_DISK, now), W_LOAD_OTHER);
	out->dim[2] = wm_get(&w);

	/* Stability: restarts, volatility, intermittent probe timeouts,
	 * equal weights. */
	w = (wmean_t){ 0, 0 };
	wm_add(&w, metric_in(c, m, METRIC_RESTARTS, now), 1);
	wm_add(&w, metric_in(c, m, METRIC_VOLATILITY, now), 1);
	wm_add(&w, p->timeouts, 1);
	out->dim[3] = wm_get(&w);

	finish(c, c->w_four, out, net.veto);
}

void score_evaluate(const score_config_t *c, const score_sample_t *s,
                    unsigned n, const score_metrics_t *m, uint32_t now,
                    score_result_t *out)
{
	probe_in_t p;

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < 4; i++)
		out->dim[i] = -1;
	out->profile = (uint8_t)c->profile;
	probe_inputs(c, s, n, m ? m->stable_ms : 0, now, &p);
	round_verdict(p.newest, c, out);
	if (c->profile == SCORE_PROFILE_FOUR)
		eval_four(c, &p, m, now, out);
	else
		eval_probe(c, &p, m, now, out);
}

/* ---- metric names and ranges --------------------------------------- */

int score_metric_parse(const char *name)
{
	if (name == NULL)
		return -1;
	for (int i = 0; i < METRIC_COUNT; i++)
		if (strcmp(name, metric_names[i]) == 0)
			return i;
	return -1;
}

const char *score_metric_name(metric_t m)
{
	if ((int)m < 0 || m >= METRIC_COUNT)
		return NULL;
	return metric_names[m];
}

int score_metric_check(metric_t m, double v)
{
	if (!isfinite(v))
		return -1;
	switch (m) {
	case METRIC_LOSS:
	case METRIC_HTTP_5XX:
	case METRIC_HIT_RATIO:
	case METRIC_ORIGIN_SUCCESS:
	case METRIC_BANDWIDTH:
	case METRIC_CPU:
	case METRIC_MEMORY:
	case METRIC_DISK:
	case METRIC_FAILURE_RATE:
		return v >= 0 && v <= 100 ? 0 : -1;   /* percentages */
	case METRIC_RTT_MS:
	case METRIC_CONNECT_MS:
		return v >= 0 ? 0 : -1;
	case METRIC_RESTARTS:
		/* A count; tolerate the rounding of a value that went
		 * through a float formatter ("3.0000001"). */
		return v >= 0 && fabs(v - floor(v + 0.5)) < 1e-6 ? 0 : -1;
	case METRIC_VOLATILITY:
		return v >= 0 && v <= 1 ? 0 : -1;
	default:
		return -1;
	}
}

const char *score_dimension_name(score_profile_t p, int i)
{
	static const char *const names[2][4] = {
		{ "loss", "latency", "connect", "jitter" },
		{ "network", "service", "load", "stability" },
	};
	return names[p == SCORE_PROFILE_FOUR][i & 3];
}

int score_weights_named(const char *const *names, const double *vals,
                        unsigned n, score_profile_t *pf, double w[4])
{
	if (n != 4)
		return -1;
	for (int p = SCORE_PROFILE_PROBE; p <= SCORE_PROFILE_FOUR; p++) {
		unsigned seen = 0;
		double sum = 0;
		for (unsigned k = 0; k < n; k++)
			for (int i = 0; i < 4; i++)
				if (strcmp(names[k], score_dimension_name((score_profile_t)p, i)) == 0 &&
				    !(seen & (1u << i)) && vals[k] >= 0 && vals[k] <= 100) {
					seen |= 1u << i;
					w[i] = vals[k];
					sum += vals[k];
				}
		if (seen == 15 && sum > 0) {
			*pf = (score_profile_t)p;
			return 0;
		}
	}
	return -1;
}
