/* SPDX-License-Identifier: MIT */
/* The steering engine's arithmetic: normalisation (S2-3), windows and
 * outliers (S3-9), smoothing (S3-3), step limits (S3-3, S3-8), floor,
 * SLA (S3-5), budget (S3-6) and stale inputs (S2-7). */
#include "steer/steer.h"
#include "steer/steer_run.h"
#include "unit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define NOW 1700000000u

static steer_conf_t conf(void)
{
	steer_conf_t c;
	steer_conf_default(&c);
	return c;
}

static steer_policy_t pol(void)
{
	steer_policy_t p;
	steer_policy_named("custom", &p);
	return p;
}

/* A node with weight @base measured at @success % and @lat ms, first
 * seen (operator's shares, no smoothing yet). */
static steer_in_t node(const char *id, uint32_t base, double success, double lat)
{
	steer_in_t n;
	memset(&n, 0, sizeof(n));
	snprintf(n.id, sizeof(n.id), "%s", id);
	n.base = base;
	n.has_success = n.has_latency = 1;
	n.success = n.success_now = success;
	n.latency = lat;
	n.prev = -1;
	return n;
}

/* Carries the state of @out into @in for the next step. */
static void carry(unsigned n, steer_in_t *in, const steer_out_t *out)
{
	for (unsigned i = 0; i < n; i++) {
		in[i].prev = (int32_t)out[i].share;
		in[i].has_ema = out[i].has_ema;
		in[i].ema = out[i].ema;
		in[i].sla_low = out[i].sla_low;
		in[i].sla_good = out[i].sla_good;
		in[i].sla_out = out[i].sla_out;
		in[i].hour_start = out[i].hour_start;
		in[i].hour_moved = out[i].hour_moved;
		in[i].dir = out[i].dir;
	}
}

static uint32_t sum(unsigned n, const steer_out_t *o)
{
	uint32_t s = 0;
	for (unsigned i = 0; i < n; i++)
		s += o[i].share;
	return s;
}

START_TEST(defaults)
{
	steer_conf_t c = conf();
	ck_assert_double_eq(c.interval, 60);     /* S3-3 */
	ck_assert_double_eq(c.tau, 300);         /* S3-3 */
	ck_assert_uint_eq(c.windows[2], 900);    /* S3-9 */
	ck_assert_double_eq(c.sla, 98);          /* S3-5 */
	ck_assert_double_eq(c.stale, 300);       /* S2-7 */
	steer_policy_t live, vod;
	ck_assert_int_eq(steer_policy_named("live", &live), 0);
	ck_assert_int_eq(steer_policy_named("vod", &vod), 0);
	ck_assert(live.cost < vod.cost);         /* S3-6 */
	ck_assert_int_eq(steer_policy_named("cheap", &vod), -1);
}
END_TEST

/* S2-3: 1 at or better than good, 0 at or worse than bad, both ways. */
START_TEST(normalize)
{
	ck_assert_double_eq(steer_normalize(10, 20, 200), 1);
	ck_assert_double_eq(steer_normalize(200, 20, 200), 0);
	ck_assert_double_eq_tol(steer_normalize(110, 20, 200), 0.5, 1e-9);
	ck_assert_double_eq(steer_normalize(100, 99.9, 95), 1);
	ck_assert_double_eq(steer_normalize(90, 99.9, 95), 0);
	ck_assert_double_eq_tol(steer_normalize(97.45, 99.9, 95), 0.5, 1e-9);
}
END_TEST

/* S3-9: medians per window drop an outlier; S2-7: old samples are
 * stale. */
START_TEST(aggregate)
{
	steer_conf_t c = conf();
	steer_sample_t s[5];
	for (int i = 0; i < 5; i++)
		s[i] = (steer_sample_t){ NOW - 40 + i * 10, 99, 30 };
	s[2].latency = 5000;                     /* one outlier */
	double v, first;
	ck_assert_int_eq(steer_aggregate(&c, s, 5, NOW, 1, &v, &first), 1);
	ck_assert_double_eq(v, 30);
	ck_assert_double_eq(first, 30);
	/* Only the newest sample is in the 1-minute window: it leads the
	 * SLA input, the longer windows temper the value. */
	s[4].success = 90;
	ck_assert_int_eq(steer_aggregate(&c, s, 5, NOW + 55, 0, &v, &first), 1);
	ck_assert_double_eq(first, 90);
	ck_assert(v > 90 && v < 99);
	/* S2-7: nothing newer than stale. */
	ck_assert_int_eq(steer_aggregate(&c, s, 5, NOW + 301, 0, &v, NULL), 0);
	/* A field never measured is not fresh. */
	for (int i = 0; i < 5; i++)
		s[i].latency = NAN;
	ck_assert_int_eq(steer_aggregate(&c, s, 5, NOW, 1, &v, NULL), 0);
}
END_TEST

/* S3-9, S2-7: the one reader of pushed samples and their keeping are
 * cut at now: a sample dated far ahead (stored before pushes were
 * checked) neither pushes the real ones out nor reads as a measurement
 * of now; one within the skew reads as now. */
START_TEST(samples_cut_at_now)
{
	steer_conf_t c = conf();
	double keep = steer_conf_keep(&c);
	ck_assert_double_eq(keep, 900);
	json_t *rec = json_pack("{s:[[I, f, f]]}", "samples", (json_int_t)2145916800,
	                        99.9, 20.0);
	for (unsigned i = 0; i < 5; i++)
		steer_sample_add(rec, NOW - 40 + i * 10, 90, 900, NOW - 40 + i * 10, keep,
		                 c.skew);
	json_t *a = json_object_get(rec, "samples");
	ck_assert_uint_eq(json_array_size(a), 5);
	ck_assert_int_eq(json_integer_value(json_array_get(json_array_get(a, 4), 0)),
	                 NOW);
	/* The oldest goes once a window of now no longer reads it. */
	steer_sample_add(rec, NOW + 885, 90, 900, NOW + 885, keep, c.skew);
	ck_assert_uint_eq(json_array_size(a), 3);
	/* A future sample kept in a record is skipped by the reader; one
	 * within the skew reads as now. */
	json_t *f = json_pack("{s:[[I, f, n], [I, f, n], [I, f, n]]}", "samples",
	                      (json_int_t)(NOW - 10), 90.0, (json_int_t)(NOW + 30), 91.0,
	                      (json_int_t)2145916800, 99.9);
	steer_sample_t s[STEER_MAX_SAMPLES];
	unsigned n = steer_samples_read(f, NOW - 900, NOW, c.skew, s);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(s[1].time, NOW);
	ck_assert_double_eq(s[1].success, 91);
	ck_assert(isnan(s[1].latency));
	double v, first;
	ck_assert_int_eq(steer_aggregate(&c, s, n, NOW, 0, &v, &first), 1);
	ck_assert_double_eq(first, 90.5);
	/* From a time on: the samples before it are not read. */
	ck_assert_uint_eq(steer_samples_read(f, NOW, NOW, c.skew, s), 1);
	json_decref(rec);
	json_decref(f);
}
END_TEST

/* Equal quality keeps the operator's shares (S3-2: default weights
 * corrected by live performance). */
START_TEST(equal_keeps_base)
{
	steer_conf_t c = conf();
	steer_policy_t p = pol();
	steer_in_t in[3] = { node("a", 60, 99.9, 20), node("b", 30, 99.9, 20),
	                     node("c", 10, 99.9, 20) };
	steer_out_t out[3];
	ck_assert_int_eq(steer_step(&c, &p, NOW, 3, in, out), STEER_KEEP);
	ck_assert_uint_eq(out[0].share, 6000);
	ck_assert_uint_eq(out[1].share, 3000);
	ck_assert_uint_eq(out[2].share, 1000);
}
END_TEST

/* S3-3: the smoothed score follows a change with time constant tau. */
START_TEST(smoothing)
{
	steer_conf_t c = conf();
	steer_policy_t p = pol();
	steer_in_t in[2] = { node("a", 50, 99.9, 20), node("b", 50, 99.9, 20) };
	steer_out_t out[2];
	steer_step(&c, &p, NOW, 2, in, out);
	carry(2, in, out);
	ck_assert_double_eq(out[1].ema, 1);
	in[1].latency = 200;                     /* latency score 1 -> 0 */
	steer_step(&c, &p, NOW + 60, 2, in, out);
	double alpha = 1 - exp(-60.0 / 300);
	/* No cost known: success and latency share its weight (S2-7). */
	ck_assert_double_eq_tol(out[1].raw, 0.625, 1e-9);
	ck_assert_double_eq_tol(out[1].ema, 1 - alpha * 0.375, 1e-9);
	/* After 5 tau the EMA is within 1 % of the new score. */
	for (int i = 0; i < 25; i++) {
		carry(2, in, out);
		steer_step(&c, &p, NOW + 120 + 60 * i, 2, in, out);
	}
	ck_assert_double_eq_tol(out[1].ema, 0.625, 0.01);
}
END_TEST

/* S3-8: one evaluation moves at most max_step; S3-3: moves below
 * min_step are not made; the shares always add up. */
START_TEST(step_limits)
{
	steer_conf_t c = conf();
	c.tau = 0;                               /* no smoothing */
	steer_policy_t p = pol();
	steer_in_t in[2] = { node("a", 50, 99.9, 20), node("b", 50, 95, 200) };
	steer_out_t out[2];
	c.sla = 0;                               /* no SLA here */
	ck_assert_int_eq(steer_step(&c, &p, NOW, 2, in, out), STEER_CHANGE);
	ck_assert_uint_eq(out[0].share, 6000);   /* 50 % + 10 points */
	ck_assert_uint_eq(out[1].share, 4000);
	ck_assert(out[1].limits & STEER_LIM_STEP);
	ck_assert_uint_eq(sum(2, out), STEER_TOTAL);
	/* Target within 1 point of the applied share: nothing moves. */
	steer_in_t q[2] = { node("a", 50, 99.9, 20), node("b", 50, 99.9, 20) };
	q[0].prev = 5050;
	q[1].prev = 4950;
	ck_assert_int_eq(steer_step(&c, &p, NOW, 2, q, out), STEER_KEEP);
	ck_assert_uint_eq(out[0].share, 5050);
	ck_assert(out[0].limits & STEER_LIM_MIN);
	/* The minimum step is 2 points (S3-3): a move of 1.5 points is
	 * not made either, one of 2 points is. */
	q[0].prev = 5150;
	q[1].prev = 4850;
	ck_assert_int_eq(steer_step(&c, &p, NOW, 2, q, out), STEER_KEEP);
	ck_assert_uint_eq(out[0].share, 5150);
	ck_assert(out[0].limits & STEER_LIM_MIN);
	q[0].prev = 5200;
	q[1].prev = 4800;
	ck_assert_int_eq(steer_step(&c, &p, NOW, 2, q, out), STEER_CHANGE);
	ck_assert_uint_eq(out[0].share, 5000);
}
END_TEST

/* S3-8: a node moves at most max-change per change window of 60
 * evaluations (an hour at the default interval); the next window it
 * moves again.  The window is counted in evaluations, so a shorter
 * interval shortens it: at 2 s it is 120 s, not an hour. */
START_TEST(hour_limit)
{
	steer_conf_t c = conf();
	ck_assert_double_eq(c.max_hour, 50);
	ck_assert_double_eq(c.change_window, 60);
	ck_assert_double_eq(steer_change_window_s(&c), 3600);
	c.tau = 0;
	c.sla = 0;
	c.floor = 0;
	c.max_hour = 30;
	steer_policy_t p = pol();
	steer_in_t in[2] = { node("a", 50, 99.9, 20), node("b", 50, 95, 200) };
	steer_out_t out[2];
	uint32_t t = NOW;
	for (int i = 0; i < 6; i++, t += 60) {
		steer_step(&c, &p, t, 2, in, out);
		carry(2, in, out);
	}
	ck_assert_uint_eq(out[1].share, 2000);   /* 50 - 30 points */
	ck_assert(out[1].limits & STEER_LIM_HOUR);
	steer_in_t keep[2] = { in[0], in[1] };
	ck_assert_int_eq(steer_step(&c, &p, NOW + 3599, 2, in, out), STEER_KEEP);
	ck_assert_int_eq(steer_step(&c, &p, NOW + 3600, 2, in, out), STEER_CHANGE);
	ck_assert_uint_eq(out[1].share, 1000);
	/* Compressed thirty times: the window is 60 evaluations of 2 s. */
	c.interval = 2;
	ck_assert_double_eq(steer_change_window_s(&c), 120);
	ck_assert_int_eq(steer_step(&c, &p, NOW + 119, 2, keep, out), STEER_KEEP);
	ck_assert(out[1].limits & STEER_LIM_HOUR);
	ck_assert_int_eq(steer_step(&c, &p, NOW + 120, 2, keep, out), STEER_CHANGE);
	ck_assert_uint_eq(out[1].share, 1000);
}
END_TEST

/* S3-3: the target share is the weight times the smoothed score to the
 * power sharpness (3): a node at half its peer's score is aimed at 1/9
 * of a row of two (the square gave 1/5, the plain score 1/3), and the
 * default limits let it get there in four evaluations. */
START_TEST(sharpness)
{
	steer_conf_t c = conf();
	ck_assert_double_eq(c.sharpness, 3);
	c.tau = 0;
	c.sla = 0;
	steer_policy_t p = { 0.5, 0.5, 0 };
	/* a scores 1; b's success and latency both normalise to 0.5. */
	steer_in_t in[2] = { node("a", 50, 99.9, 20), node("b", 50, 97.45, 110) };
	steer_out_t out[2];
	steer_step(&c, &p, NOW, 2, in, out);
	ck_assert_double_eq_tol(out[1].raw, 0.5, 1e-9);
	ck_assert_uint_eq(out[1].target, 1111);
	unsigned evals = 1;
	for (uint32_t t = NOW + 60; out[1].share > 1667 && evals < 20; t += 60, evals++) {
		carry(2, in, out);
		steer_step(&c, &p, t, 2, in, out);
	}
	ck_assert_uint_le(evals, 4);
	carry(2, in, out);
	steer_step(&c, &p, NOW + 240, 2, in, out);
	ck_assert_uint_eq(out[1].share, 1111);
	/* Other sharpness: the square, the plain score. */
	steer_in_t q[2] = { node("a", 50, 99.9, 20), node("b", 50, 97.45, 110) };
	c.sharpness = 2;
	steer_step(&c, &p, NOW, 2, q, out);
	ck_assert_uint_eq(out[1].target, 2000);
	c.sharpness = 1;
	steer_step(&c, &p, NOW, 2, q, out);
	ck_assert_uint_eq(out[1].target, 3333);
}
END_TEST

/* S3-3, S3-9 (hysteresis): a move that sends a node back against its
 * last move by less than twice min-step is not made; a larger one is;
 * in a row of three, the held node's part goes to the free ones. */
START_TEST(hold_against_trend)
{
	steer_conf_t c = conf();
	c.tau = 0;
	steer_policy_t p = pol();
	steer_in_t in[2] = { node("a", 50, 99.9, 20), node("b", 50, 99.9, 20) };
	steer_out_t out[2];
	in[0].prev = 4700;                       /* a last moved down */
	in[1].prev = 5300;
	in[0].dir = -1;
	ck_assert_int_eq(steer_step(&c, &p, NOW, 2, in, out), STEER_KEEP);
	ck_assert_uint_eq(out[0].share, 4700);
	ck_assert(out[0].limits & STEER_LIM_HOLD);
	ck_assert_int_eq(out[0].dir, -1);
	/* The same 3 points in the way it last moved are made. */
	in[0].dir = 1;
	ck_assert_int_eq(steer_step(&c, &p, NOW, 2, in, out), STEER_CHANGE);
	ck_assert_uint_eq(out[0].share, 5000);
	ck_assert_int_eq(out[0].dir, 1);
	ck_assert_int_eq(out[1].dir, -1);
	/* 5 points back: beyond twice min-step, made. */
	in[0].dir = -1;
	in[0].prev = 4500;
	in[1].prev = 5500;
	ck_assert_int_eq(steer_step(&c, &p, NOW, 2, in, out), STEER_CHANGE);
	ck_assert_uint_eq(out[0].share, 5000);
	/* Three nodes: a held at 31, b and c share the rest by target. */
	steer_in_t t3[3] = { node("a", 50, 99.9, 20), node("b", 50, 99.9, 20),
	                     node("c", 50, 99.9, 20) };
	steer_out_t o3[3];
	t3[0].prev = 3100;
	t3[1].prev = 3700;
	t3[2].prev = 3200;
	t3[0].dir = -1;
	t3[1].dir = -1;
	ck_assert_int_eq(steer_step(&c, &p, NOW, 3, t3, o3), STEER_CHANGE);
	ck_assert_uint_eq(o3[0].share, 3100);
	ck_assert_uint_eq(o3[1].share, 3450);
	ck_assert_uint_eq(o3[2].share, 3450);
	ck_assert_uint_eq(sum(3, o3), STEER_TOTAL);
	/* S1-6: the hold would lift c above its ceiling (34 %): no hold. */
	t3[2].has_ceiling = 1;
	t3[2].ceiling = 3400;
	ck_assert_int_eq(steer_step(&c, &p, NOW, 3, t3, o3), STEER_CHANGE);
	ck_assert(!(o3[0].limits & STEER_LIM_HOLD));
	ck_assert_uint_ge(o3[0].share, 3333);
	ck_assert_uint_le(o3[2].share, 3400);
}
END_TEST

/* S3-3, S3-8: a latency that creeps up steadily, with noise of +-12 ms
 * and no smoothing (target swings of up to 3.5 points), moves the node's
 * share down step by step and never back up, to where its score puts
 * it.  Without the hold it went up and down 40 times, used up the change
 * window and ended 8 points behind. */
START_TEST(creep_is_monotone)
{
	steer_conf_t c = conf();
	c.tau = 0;
	steer_policy_t p = pol();
	steer_in_t in[2] = { node("a", 50, 99.9, 30), node("b", 50, 99.9, 30) };
	steer_out_t out[2];
	uint32_t last = 5000;
	unsigned moves = 0, up = 0;
	for (int i = 0; i < 120; i++) {
		double noise = ((i * 7919) % 31 - 15) * 12.0 / 15;  /* -12..12 ms */
		in[1].latency = 30 + i + noise;         /* 30 to 149 ms */
		steer_step(&c, &p, NOW + 60u * (unsigned)i, 2, in, out);
		carry(2, in, out);
		moves += out[1].share != last;
		up += out[1].share > last;
		last = out[1].share;
	}
	ck_assert_uint_eq(up, 0);
	ck_assert_uint_ge(moves, 5);
	/* At the end: within twice min-step of what its score asks for. */
	ck_assert_int_le(abs((int)out[1].share - (int)out[1].target), 400);
	ck_assert_uint_lt(out[1].share, 3100);
}
END_TEST

/* The floor: a bad node keeps floor points so it is still measured. */
START_TEST(floor_share)
{
	steer_conf_t c = conf();
	c.tau = 0;
	c.sla = 0;
	c.max_step = 100;
	steer_policy_t p = pol();
	p.cost = 0;
	steer_in_t in[3] = { node("a", 50, 99.9, 20), node("b", 50, 99.9, 20),
	                     node("c", 50, 95, 200) };
	steer_out_t out[3];
	steer_step(&c, &p, NOW, 3, in, out);
	ck_assert_uint_eq(out[2].share, 500);
	ck_assert(out[2].limits & STEER_LIM_FLOOR);
	ck_assert_uint_eq(out[0].share, 4750);
	ck_assert_uint_eq(sum(3, out), STEER_TOTAL);
}
END_TEST

/* S3-5 with S3-9: two evaluations below the SLA take the node out at
 * once (no step limit); three good ones bring it back. */
START_TEST(sla)
{
	steer_conf_t c = conf();
	steer_policy_t p = pol();
	steer_in_t in[2] = { node("a", 50, 99.9, 20), node("b", 50, 97, 20) };
	steer_out_t out[2];
	steer_step(&c, &p, NOW, 2, in, out);
	ck_assert(!out[1].sla_out);
	ck_assert(out[1].share > 0);
	carry(2, in, out);
	ck_assert_int_eq(steer_step(&c, &p, NOW + 60, 2, in, out), STEER_CHANGE);
	ck_assert(out[1].sla_out);
	ck_assert_uint_eq(out[1].share, 0);
	ck_assert_uint_eq(out[0].share, STEER_TOTAL);
	ck_assert(out[1].limits & STEER_LIM_SLA);
	carry(2, in, out);
	in[1].success = in[1].success_now = 99.9;
	for (int i = 0; i < 2; i++) {
		steer_step(&c, &p, NOW + 120 + 60 * i, 2, in, out);
		ck_assert(out[1].sla_out);
		carry(2, in, out);
	}
	steer_step(&c, &p, NOW + 240, 2, in, out);
	ck_assert(!out[1].sla_out);
	ck_assert(out[1].share > 0 && out[1].share <= 1000);  /* step-limited */
	/* Every node below the SLA: none is taken out. */
	steer_in_t all[2] = { node("a", 50, 90, 20), node("b", 50, 90, 20) };
	all[0].sla_low = all[1].sla_low = 5;
	steer_step(&c, &p, NOW, 2, all, out);
	ck_assert_uint_eq(out[0].share + out[1].share, STEER_TOTAL);
	ck_assert(out[0].limits & STEER_LIM_ALLSLA);
}
END_TEST

/* S3-6: cost enters the score; past the budget's alert level it weighs
 * budget_boost times more. */
START_TEST(budget)
{
	steer_conf_t c = conf();
	c.tau = 0;
	steer_policy_t p = pol();
	steer_in_t in[2] = { node("a", 50, 99.9, 20), node("b", 50, 99.9, 20) };
	in[0].has_cost = in[1].has_cost = 1;
	in[0].cost = 0.02;
	in[1].cost = 0.02;
	steer_out_t out[2];
	steer_step(&c, &p, NOW, 2, in, out);
	ck_assert_uint_eq(out[0].share, 5000);
	in[0].over_budget = 1;
	ck_assert_int_eq(steer_step(&c, &p, NOW, 2, in, out), STEER_CHANGE);
	ck_assert(out[0].share < 5000);
	ck_assert(out[0].limits & STEER_LIM_BUDGET);
	ck_assert(out[0].raw < out[1].raw);
	/* The pro-rated budget: 10000 a month, alert at 80 %; at the
	 * start of November 15th (14 of 30 days gone) the alert level is
	 * 3733, a day earlier 3467. */
	uint32_t mid = 1700006400u;              /* 2023-11-15T00:00:00Z */
	ck_assert_int_eq(steer_budget_state(10000, 80, 3700, 0, mid), 0);
	ck_assert_int_eq(steer_budget_state(10000, 80, 3800, 0, mid), 1);
	ck_assert_int_eq(steer_budget_state(10000, 80, 3800, 0, mid - 86400), 1);
	ck_assert_int_eq(steer_budget_state(10000, 80, 10000, 0, mid), 2);
	ck_assert_int_eq(steer_budget_state(0, 80, 10000, 0, mid), 0);
}
END_TEST

/* S2-7: a stale metric hands its weight to the others; a node with no
 * fresh input keeps its smoothed score; a row with none reverts. */
START_TEST(stale)
{
	steer_conf_t c = conf();
	steer_policy_t p = pol();
	steer_in_t in[2] = { node("a", 50, 99.9, 20), node("b", 50, 99.9, 200) };
	steer_out_t out[2];
	in[1].has_latency = 0;
	steer_step(&c, &p, NOW, 2, in, out);
	ck_assert_double_eq(out[1].raw, 1);      /* success alone */
	ck_assert_double_eq(out[1].nl, -1);
	in[1].has_success = 0;
	in[1].has_ema = 1;
	in[1].ema = 0.4;
	steer_step(&c, &p, NOW, 2, in, out);
	ck_assert_double_eq(out[1].ema, 0.4);
	ck_assert(out[1].limits & STEER_LIM_UNKNOWN);
	/* Nothing fresh at all: back to the operator's 50/50 by max-step,
	 * then let go of once there. */
	in[0].has_success = in[0].has_latency = 0;
	in[0].prev = 7500;
	in[1].prev = 2500;
	ck_assert_int_eq(steer_step(&c, &p, NOW, 2, in, out), STEER_CHANGE);
	ck_assert_uint_eq(out[0].share, 6500);
	ck_assert_uint_eq(out[0].target, 5000);
	ck_assert(out[0].limits & STEER_LIM_RETURN);
	ck_assert(!out[0].has_ema && !out[1].has_ema);  /* smoothing afresh */
	in[0].prev = 6500;
	in[1].prev = 3500;
	ck_assert_int_eq(steer_step(&c, &p, NOW + 60, 2, in, out), STEER_CHANGE);
	ck_assert_uint_eq(out[0].share, 5500);
	in[0].prev = 5500;
	in[1].prev = 4500;
	ck_assert_int_eq(steer_step(&c, &p, NOW + 120, 2, in, out), STEER_REVERT);
	ck_assert_uint_eq(out[0].share, 5000);
	ck_assert(!(out[0].limits & STEER_LIM_RETURN));
	/* The change window's allowance counts on the way back too. */
	in[0].prev = 7500;
	in[1].prev = 2500;
	in[0].hour_start = in[1].hour_start = NOW - 60;
	in[0].hour_moved = in[1].hour_moved = 4500;
	ck_assert_int_eq(steer_step(&c, &p, NOW, 2, in, out), STEER_CHANGE);
	ck_assert_uint_eq(out[0].share, 7000);
	ck_assert(out[0].limits & STEER_LIM_HOUR);
	in[0].hour_moved = in[1].hour_moved = 5000;
	ck_assert_int_eq(steer_step(&c, &p, NOW, 2, in, out), STEER_KEEP);
	ck_assert_uint_eq(out[0].share, 7500);
	/* Never steered and nothing fresh: nothing to do. */
	in[0].prev = in[1].prev = -1;
	ck_assert_int_eq(steer_step(&c, &p, NOW, 2, in, out), STEER_KEEP);
}
END_TEST

/* Reads the inputs of node @x from its samples @s[0..@n) at @now as
 * the engine does (S3-9, S2-7). */
static void read_inputs(const steer_conf_t *c, steer_in_t *x,
                        const steer_sample_t *s, unsigned n, uint32_t now)
{
	x->has_success = steer_aggregate(c, s, n, now, 0, &x->success, &x->success_now);
	x->has_latency = steer_aggregate(c, s, n, now, 1, &x->latency, NULL);
}

/* S2-7 with S3-9 and S3-8: samples pushed every minute; a pause of the
 * feeder shorter than stale keeps the shares; past stale the row goes
 * back to the operator's weights by max-step, and is let go of once
 * there. */
START_TEST(pause_then_return)
{
	steer_conf_t c = conf();
	steer_policy_t p = pol();
	steer_sample_t sa[STEER_MAX_SAMPLES], sb[STEER_MAX_SAMPLES];
	steer_in_t in[2] = { node("a", 50, 0, 0), node("b", 50, 0, 0) };
	steer_out_t out[2];
	unsigned n = 0;
	uint32_t t = NOW;
	for (; n < 40; n++, t += 60) {
		sa[n] = (steer_sample_t){ t, 99.9, 20 };
		sb[n] = (steer_sample_t){ t, 99.9, 150 };
		read_inputs(&c, &in[0], sa, n + 1, t);
		read_inputs(&c, &in[1], sb, n + 1, t);
		steer_step(&c, &p, t, 2, in, out);
		carry(2, in, out);
	}
	uint32_t last = t - 60, held = out[1].share;
	ck_assert_uint_lt(held, 3000);
	ck_assert_uint_gt(held, 2500);
	/* Paused: evaluations 1 to 5 minutes after the last push. */
	for (t = last + 60; t <= last + 300; t += 60) {
		read_inputs(&c, &in[0], sa, n, t);
		read_inputs(&c, &in[1], sb, n, t);
		ck_assert(in[1].has_latency);
		ck_assert_int_eq(steer_step(&c, &p, t, 2, in, out), STEER_KEEP);
		ck_assert_uint_eq(out[1].share, held);
		carry(2, in, out);
	}
	/* Past stale: 10 points an evaluation back toward 50/50. */
	read_inputs(&c, &in[0], sa, n, t);
	read_inputs(&c, &in[1], sb, n, t);
	ck_assert(!in[0].has_success && !in[1].has_latency);
	ck_assert_int_eq(steer_step(&c, &p, t, 2, in, out), STEER_CHANGE);
	ck_assert_uint_eq(out[1].share, held + 1000);
	ck_assert(out[1].limits & STEER_LIM_RETURN);
	carry(2, in, out);
	ck_assert_int_eq(steer_step(&c, &p, t + 60, 2, in, out), STEER_CHANGE);
	ck_assert_uint_eq(out[1].share, held + 2000);
	carry(2, in, out);
	ck_assert_int_eq(steer_step(&c, &p, t + 120, 2, in, out), STEER_REVERT);
	ck_assert_uint_eq(out[1].share, 5000);
}
END_TEST

/* Same inputs, same shares: the replay depends on it (S3-7). */
START_TEST(deterministic)
{
	steer_conf_t c = conf();
	steer_policy_t p = pol();
	steer_in_t in[3] = { node("a", 60, 99.3, 35), node("b", 30, 98.7, 80),
	                     node("c", 10, 99.8, 22) };
	in[2].has_cost = 1;
	in[2].cost = 0.05;
	steer_out_t o1[3], o2[3];
	steer_step(&c, &p, NOW, 3, in, o1);
	steer_step(&c, &p, NOW, 3, in, o2);
	ck_assert_mem_eq(o1, o2, sizeof(o1));
	ck_assert_uint_eq(sum(3, o1), STEER_TOTAL);
}
END_TEST

/* S3-7: a decision as the engine records it reads back into the same
 * step, and a changed input gives other shares (what replay reports). */
START_TEST(decision_replay)
{
	json_t *d = json_loads(
		"{\"at\": 1700000000, \"policy\": [0.5, 0.5, 0],"
		" \"conf\": {\"interval\": 60, \"tau\": 300, \"min_step\": 2,"
		"  \"max_step\": 10, \"max_hour\": 30, \"floor\": 5, \"sla\": 98,"
		"  \"sla_after\": 2, \"restore_after\": 3, \"success_good\": 99.9,"
		"  \"success_bad\": 95, \"latency_good\": 20, \"latency_bad\": 200,"
		"  \"budget_boost\": 3},"
		" \"in\": [{\"id\": \"a\", \"base\": 50, \"prev\": -1, \"s\": 99.9,"
		"   \"s1\": 99.9, \"l\": 20},"
		"  {\"id\": \"b\", \"base\": 50, \"prev\": -1, \"s\": 98.5,"
		"   \"s1\": 98.5, \"l\": 200}]}", 0, NULL);
	ck_assert_ptr_nonnull(d);
	steer_conf_t c;
	steer_policy_t p;
	uint32_t now;
	unsigned n;
	steer_in_t in[STEER_MAX_NODES];
	steer_out_t out[STEER_MAX_NODES];
	ck_assert_int_eq(steer_decision_read(d, &c, &p, &now, &n, in), 0);
	/* Recorded before sharpness and the change window were settings:
	 * replayed with the square and an hour. */
	ck_assert_double_eq(c.sharpness, 2);
	ck_assert_double_eq(steer_change_window_s(&c), 3600);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(now, 1700000000u);
	ck_assert_int_eq(in[1].prev, -1);
	ck_assert_int_eq(steer_step(&c, &p, now, n, in, out), STEER_CHANGE);
	ck_assert_uint_eq(out[0].share, 6000);     /* max-step 10 */
	in[1].latency = 20;                        /* another input */
	steer_step(&c, &p, now, n, in, out);
	ck_assert_uint_ne(out[0].share, 6000);
	/* Recorded with them: read back as they were. */
	json_t *cj = json_object_get(d, "conf");
	json_object_set_new(cj, "sharpness", json_real(3));
	json_object_set_new(cj, "window", json_real(30));
	ck_assert_int_eq(steer_decision_read(d, &c, &p, &now, &n, in), 0);
	ck_assert_double_eq(c.sharpness, 3);
	ck_assert_double_eq(steer_change_window_s(&c), 1800);
	json_object_del(d, "conf");
	ck_assert_int_eq(steer_decision_read(d, &c, &p, &now, &n, in), -1);
	json_decref(d);
}
END_TEST

/* S1-6: the row's demand comes from the measured load over the share it
 * is carried for; a node keeps headroom % of its capacity free, and what
 * it cannot take goes to the others by score; no capacity, no ceiling. */
START_TEST(capacity_ceiling)
{
	steer_conf_t c = conf();
	c.max_step = 100;
	c.max_hour = 100;
	steer_policy_t p = pol();
	steer_in_t in[3] = { node("a", 50, 99.9, 20), node("b", 50, 99.9, 200),
	                     node("c", 0, 99.9, 20) };
	double cap[3] = { 1000, 0, 1000 }, util[3] = { 60, NAN, 0 };
	/* a carries 600 at half the row: demand 1200; 80 % of 1000 is
	 * two thirds of it. */
	double demand = steer_demand(3, cap, util, in);
	ck_assert_double_eq_tol(demand, 1200, 1e-9);
	ck_assert_uint_eq(steer_ceilings(c.headroom, 3, cap, demand, in), 2);
	ck_assert(in[0].has_ceiling && !in[1].has_ceiling);
	ck_assert_uint_eq(in[0].ceiling, 6666);
	steer_out_t out[3];
	steer_step(&c, &p, NOW, 3, in, out);
	ck_assert_uint_eq(out[0].share, 6666);
	ck_assert_uint_eq(out[1].share, 3334);
	ck_assert(out[0].limits & STEER_LIM_CAPACITY);
	ck_assert(!(out[1].limits & STEER_LIM_CAPACITY));
	/* Without the ceiling the score alone gives a far more. */
	in[0].has_ceiling = 0;
	steer_step(&c, &p, NOW, 3, in, out);
	ck_assert_uint_gt(out[0].share, 7000);
	/* More headroom, lower ceiling. */
	steer_ceilings(50, 3, cap, demand, in);
	ck_assert_uint_eq(in[0].ceiling, 4166);
	/* No load measured anywhere: the demand is unknown, no ceiling. */
	util[0] = NAN;
	ck_assert_double_eq(steer_demand(3, cap, util, in), 0);
	ck_assert_uint_eq(steer_ceilings(c.headroom, 3, cap, 0, in), 0);
	ck_assert(!in[0].has_ceiling);
	/* Every candidate capped: the row is over its capacity, the rest is
	 * spread by the ceilings and the shares still add up. */
	steer_in_t two[2] = { node("a", 50, 99.9, 20), node("b", 50, 99.9, 20) };
	two[0].has_ceiling = two[1].has_ceiling = 1;
	two[0].ceiling = 3000;
	two[1].ceiling = 1000;
	steer_step(&c, &p, NOW, 2, two, out);
	ck_assert_uint_eq(out[0].share, 7500);
	ck_assert_uint_eq(sum(2, out), STEER_TOTAL);
}
END_TEST

/* S3-6: budget periods other than the month, with the budget pro-rated
 * to the part of the period gone. */
START_TEST(budget_periods)
{
	unsigned d;
	ck_assert_int_eq(steer_period_parse("month", &d), 0);
	ck_assert_uint_eq(d, 0);
	ck_assert_int_eq(steer_period_parse("day", &d), 0);
	ck_assert_uint_eq(d, 1);
	ck_assert_int_eq(steer_period_parse("week", &d), 0);
	ck_assert_uint_eq(d, 7);
	ck_assert_int_eq(steer_period_parse("10d", &d), 0);
	ck_assert_uint_eq(d, 10);
	ck_assert_int_eq(steer_period_parse("366d", &d), 0);
	const char *bad[] = { "367d", "0d", "07d", "d", "10", "10dd", "year", "", "-1d",
	                      "99999999999d" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(steer_period_parse(bad[i], &d) == -1, "%s accepted", bad[i]);
	char buf[16];
	ck_assert_str_eq(steer_period_text(7, buf, sizeof(buf)), "week");
	ck_assert_str_eq(steer_period_text(10, buf, sizeof(buf)), "10d");

	/* 2023-11-15 (a Wednesday) at 12:00 UTC. */
	uint32_t t = 1700006400u + 43200, s, e;
	steer_period_bounds(0, t, &s, &e);
	ck_assert_uint_eq(s, 1698796800u);       /* 2023-11-01 */
	ck_assert_uint_eq(e, 1701388800u);       /* 2023-12-01 */
	steer_period_bounds(1, t, &s, &e);
	ck_assert_uint_eq(s, 1700006400u);
	ck_assert_uint_eq(e, 1700006400u + 86400);
	steer_period_bounds(7, t, &s, &e);
	ck_assert_uint_eq(s, 1699833600u);       /* Monday 2023-11-13 */
	ck_assert_uint_eq(e, 1699833600u + 7 * 86400);
	steer_period_bounds(10, t, &s, &e);
	ck_assert(s <= t && t < e && e - s == 10 * 86400);
	ck_assert_uint_eq((s / 86400 - 4) % 10, 0);

	/* A day of 100 at noon: half gone, the alert at 80 % is 40. */
	ck_assert_int_eq(steer_budget_state(100, 80, 39, 1, t), 0);
	ck_assert_int_eq(steer_budget_state(100, 80, 41, 1, t), 1);
	ck_assert_int_eq(steer_budget_state(100, 80, 100, 1, t), 2);
	/* A week of 700 on Wednesday noon: 2.5 days of 7 gone, alert 200. */
	ck_assert_int_eq(steer_budget_state(700, 80, 199, 7, t), 0);
	ck_assert_int_eq(steer_budget_state(700, 80, 201, 7, t), 1);
	/* The same spend a month in: far within its month. */
	ck_assert_int_eq(steer_budget_state(700, 80, 201, 0, t), 0);
	/* The first minutes of a day count as a thirtieth of it. */
	ck_assert_int_eq(steer_budget_state(3000, 100, 99, 1, 1700006400u + 60), 0);
	ck_assert_int_eq(steer_budget_state(3000, 100, 100, 1, 1700006400u + 60), 1);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("steer");
	TCase *t = tcase_create("core");
	tcase_add_test(t, defaults);
	tcase_add_test(t, normalize);
	tcase_add_test(t, aggregate);
	tcase_add_test(t, samples_cut_at_now);
	tcase_add_test(t, equal_keeps_base);
	tcase_add_test(t, smoothing);
	tcase_add_test(t, step_limits);
	tcase_add_test(t, hour_limit);
	tcase_add_test(t, sharpness);
	tcase_add_test(t, hold_against_trend);
	tcase_add_test(t, creep_is_monotone);
	tcase_add_test(t, pause_then_return);
	tcase_add_test(t, floor_share);
	tcase_add_test(t, sla);
	tcase_add_test(t, budget);
	tcase_add_test(t, stale);
	tcase_add_test(t, deterministic);
	tcase_add_test(t, decision_replay);
	tcase_add_test(t, capacity_ceiling);
	tcase_add_test(t, budget_periods);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)
