/* SPDX-License-Identifier: MIT */
/* Nearest steering's arithmetic: the switch margin (S4-5), latency
 * ranking with EMA (S4-1, S4-7), confirmation over two evaluations
 * (S4-5), hard failures (S4-4), capacity and spill (S4-3, S1-6), and
 * how many sticky clients move when shares change (S4-8). */
#include "gslb/policy.h"
#include "steer/nearest.h"
#include "unit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static nearest_conf_t conf(void)
{
	nearest_conf_t c = { 15, 0, NEAREST_HEADROOM_DEFAULT, 1, 2 };
	return c;
}

static nearest_in_t node(const char *id, double lat)
{
	nearest_in_t n;
	memset(&n, 0, sizeof(n));
	snprintf(n.id, sizeof(n.id), "%s", id);
	n.base = 100;
	n.usable = 1;
	n.has_latency = lat > 0;
	n.latency = lat;
	n.prev = -1;
	n.load_new = 1;
	n.cap_prev = 1;
	return n;
}

/* Carries a step's results into the next step's inputs. */
static void carry(unsigned n, nearest_in_t *in, const nearest_out_t *out)
{
	for (unsigned i = 0; i < n; i++) {
		in[i].has_ema = out[i].has_ema;
		in[i].ema = out[i].ema;
		in[i].prev = (int32_t)out[i].share;
	}
}

static const nearest_row_t fresh = { -1, -1, 0 };

START_TEST(margin_parse)
{
	double v;
	int ms;
	ck_assert_int_eq(nearest_margin_parse("15%", &v, &ms), 0);
	ck_assert(v == 15 && !ms);
	ck_assert_int_eq(nearest_margin_parse("7.5", &v, &ms), 0);
	ck_assert(v == 7.5 && !ms);
	ck_assert_int_eq(nearest_margin_parse("10ms", &v, &ms), 0);
	ck_assert(v == 10 && ms);
	const char *bad[] = { "", "0", "0%", "100%", "-5%", "abc", "10s", "0ms",
	                      "20000ms", "15 %", NULL };
	for (const char **b = bad; *b; b++)
		ck_assert_msg(nearest_margin_parse(*b, &v, &ms) == -1, "%s accepted", *b);
}
END_TEST

START_TEST(better)
{
	nearest_conf_t c = conf();
	ck_assert(nearest_better(&c, 80, 100));      /* 20 % better */
	ck_assert(!nearest_better(&c, 90, 100));     /* 10 %: within 15 % */
	c.margin = 10;
	c.margin_ms = 1;
	ck_assert(nearest_better(&c, 50, 61));
	ck_assert(!nearest_better(&c, 50, 60));
}
END_TEST

START_TEST(rank)
{
	nearest_in_t in[5] = { node("a", 60), node("b", 0), node("c", 30),
	                       node("d", 0), node("e", 10) };
	in[3].base = 300;        /* no data, heavier than b */
	in[4].usable = 0;        /* failed hard: not ranked */
	double ema[5] = { 60, 0, 30, 0, 10 };
	int has[5] = { 1, 0, 1, 0, 1 };
	unsigned order[5];
	ck_assert_uint_eq(nearest_rank(5, in, ema, has, order), 4);
	ck_assert_uint_eq(order[0], 2);
	ck_assert_uint_eq(order[1], 0);
	ck_assert_uint_eq(order[2], 3);
	ck_assert_uint_eq(order[3], 1);
	in[2].base = 0;          /* weight 0: not a candidate */
	ck_assert_uint_eq(nearest_rank(5, in, ema, has, order), 3);
	ck_assert_uint_eq(order[0], 0);
}
END_TEST

START_TEST(first_choice)
{
	nearest_conf_t c = conf();
	nearest_in_t in[3] = { node("a", 80), node("b", 30), node("c", 50) };
	nearest_row_t row;
	nearest_out_t out[3];
	ck_assert_int_eq(nearest_step(&c, 3, in, &fresh, 0, &row, out), NEAREST_FIRST);
	ck_assert_int_eq(row.current, 1);
	ck_assert_uint_eq(out[1].share, STEER_TOTAL);
	ck_assert_uint_eq(out[0].share + out[2].share, 0);
	ck_assert_uint_eq(out[1].rank, 1);
	ck_assert_uint_eq(out[2].rank, 2);
	/* No candidate: nothing decided. */
	for (int i = 0; i < 3; i++)
		in[i].usable = 0;
	ck_assert_int_eq(nearest_step(&c, 3, in, &fresh, 0, &row, out), NEAREST_NONE);
	ck_assert_int_eq(row.current, -1);
}
END_TEST

START_TEST(hysteresis)
{
	nearest_conf_t c = conf();
	c.alpha = 0.5;
	nearest_in_t in[2] = { node("a", 50), node("b", 60) };
	nearest_row_t was = fresh, row;
	nearest_out_t out[2];
	nearest_step(&c, 2, in, &was, 0, &row, out);
	ck_assert_int_eq(row.current, 0);
	/* S4-5: b better within the margin: no switch, however long. */
	for (int k = 0; k < 50; k++) {
		carry(2, in, out);
		was = row;
		in[0].latency = 50 + (k % 2 ? 4 : -4);
		in[1].latency = 46 + (k % 3);
		nearest_verdict_t v = nearest_step(&c, 2, in, &was, 0, &row, out);
		ck_assert_int_eq(v, NEAREST_KEEP);
		ck_assert_int_eq(row.current, 0);
	}
	/* a worsens beyond the margin: pending once, then the switch. */
	in[0].latency = 120;
	in[1].latency = 46;
	carry(2, in, out);
	was = row;
	ck_assert_int_eq(nearest_step(&c, 2, in, &was, 0, &row, out), NEAREST_PENDING);
	ck_assert_int_eq(row.current, 0);
	ck_assert_int_eq(row.challenger, 1);
	ck_assert_uint_eq(row.streak, 1);
	ck_assert_uint_eq(out[0].share, STEER_TOTAL);
	carry(2, in, out);
	was = row;
	ck_assert_int_eq(nearest_step(&c, 2, in, &was, 0, &row, out), NEAREST_SWITCH);
	ck_assert_int_eq(row.current, 1);
	ck_assert_uint_eq(out[1].share, STEER_TOTAL);
	/* A challenger that falls back within the margin starts again. */
	c.alpha = 1;
	in[0].latency = 20;
	carry(2, in, out);
	was = row;
	ck_assert_int_eq(nearest_step(&c, 2, in, &was, 0, &row, out), NEAREST_PENDING);
	in[0].latency = 80;       /* back above b's */
	carry(2, in, out);
	was = row;
	ck_assert_int_eq(nearest_step(&c, 2, in, &was, 0, &row, out), NEAREST_KEEP);
	ck_assert_uint_eq(row.streak, 0);
	ck_assert_int_eq(row.current, 1);
}
END_TEST

START_TEST(ema)
{
	nearest_conf_t c = conf();
	c.alpha = 0.25;
	nearest_in_t in[1] = { node("a", 100) };
	nearest_row_t row;
	nearest_out_t out[1];
	nearest_step(&c, 1, in, &fresh, 0, &row, out);
	ck_assert(fabs(out[0].ema - 100) < 1e-9);
	carry(1, in, out);
	in[0].latency = 200;
	nearest_step(&c, 1, in, &row, 0, &row, out);
	ck_assert(fabs(out[0].ema - 125) < 1e-9);
	/* No fresh latency for the row's choice: its last smoothed value
	 * stands (S3-9), marked as no data. */
	carry(1, in, out);
	in[0].has_latency = 0;
	nearest_step(&c, 1, in, &row, 0, &row, out);
	ck_assert(out[0].has_ema && fabs(out[0].ema - 125) < 1e-9);
	ck_assert(out[0].limits & NEAREST_LIM_NODATA);
}
END_TEST

/* A node other than the choice without a fresh latency has no data: it
 * ranks after the measured ones and its smoothing starts afresh. */
START_TEST(ema_lost)
{
	nearest_conf_t c = conf();
	nearest_in_t in[2] = { node("a", 20), node("b", 40) };
	nearest_row_t row;
	nearest_out_t out[2];
	nearest_step(&c, 2, in, &fresh, 0, &row, out);
	ck_assert_int_eq(row.current, 0);
	carry(2, in, out);
	in[1].has_latency = 0;
	nearest_step(&c, 2, in, &row, 0, &row, out);
	ck_assert(!out[1].has_ema);
	ck_assert(out[1].limits & NEAREST_LIM_NODATA);
	ck_assert(out[0].has_ema && !(out[0].limits & NEAREST_LIM_NODATA));
}
END_TEST

/* S3-9: the choice's figures stop while another node's go on: the row
 * stays, however many evaluations pass, unless the other is better than
 * the choice's last latency by the margin; two nodes whose figures come
 * late in turn do not flap the row. */
START_TEST(stale_choice_holds)
{
	nearest_conf_t c = conf();
	nearest_in_t in[2] = { node("a", 20), node("b", 22) };
	nearest_row_t row;
	nearest_out_t out[2];
	nearest_step(&c, 2, in, &fresh, 0, &row, out);
	ck_assert_int_eq(row.current, 0);
	for (int k = 0; k < 8; k++) {
		carry(2, in, out);
		/* a's figures stop for four evaluations while b's go on,
		 * then come in turn with b's */
		in[0].has_latency = k >= 4 && k % 2;
		in[1].has_latency = k < 4 || !(k % 2);
		ck_assert_int_eq(nearest_step(&c, 2, in, &row, 0, &row, out), NEAREST_KEEP);
		ck_assert_int_eq(row.current, 0);
		ck_assert_uint_eq(out[0].share, STEER_TOTAL);
	}
	/* b far better than a's last latency: that is evidence. */
	carry(2, in, out);
	in[0].has_latency = 0;
	in[1].has_latency = 1;
	in[1].latency = 5;
	in[1].has_ema = 0;
	ck_assert_int_eq(nearest_step(&c, 2, in, &row, 0, &row, out), NEAREST_PENDING);
	carry(2, in, out);
	in[1].latency = 5;
	ck_assert_int_eq(nearest_step(&c, 2, in, &row, 0, &row, out), NEAREST_SWITCH);
	ck_assert_int_eq(row.current, 1);
}
END_TEST

START_TEST(hard_failure)
{
	nearest_conf_t c = conf();
	nearest_in_t in[3] = { node("a", 20), node("b", 40), node("c", 30) };
	nearest_row_t was = fresh, row;
	nearest_out_t out[3];
	nearest_step(&c, 3, in, &was, 0, &row, out);
	carry(3, in, out);
	was = row;
	/* Between evaluations, nothing failed: nothing to do. */
	ck_assert_int_eq(nearest_step(&c, 3, in, &was, 1, &row, out), NEAREST_KEEP);
	ck_assert_uint_eq(out[0].share, STEER_TOTAL);
	/* S4-4: the choice is demoted: the next-nearest at once, without
	 * the two evaluations, even between the regular ones. */
	in[0].usable = 0;
	ck_assert_int_eq(nearest_step(&c, 3, in, &was, 1, &row, out), NEAREST_HARD);
	ck_assert_int_eq(row.current, 2);
	ck_assert_uint_eq(out[2].share, STEER_TOTAL);
	ck_assert_uint_eq(out[0].share, 0);
	ck_assert(out[0].limits & NEAREST_LIM_DOWN);
	/* Back: a candidate again, but it must win by the margin twice. */
	carry(3, in, out);
	was = row;
	in[0].usable = 1;
	ck_assert_int_eq(nearest_step(&c, 3, in, &was, 0, &row, out), NEAREST_PENDING);
	carry(3, in, out);
	was = row;
	ck_assert_int_eq(nearest_step(&c, 3, in, &was, 0, &row, out), NEAREST_SWITCH);
	ck_assert_int_eq(row.current, 0);
}
END_TEST

START_TEST(capacity_spill)
{
	nearest_conf_t c = conf();
	nearest_in_t in[3] = { node("a", 20), node("b", 30), node("c", 40) };
	nearest_row_t was = fresh, row;
	nearest_out_t out[3];
	nearest_step(&c, 3, in, &was, 0, &row, out);
	carry(3, in, out);
	was = row;
	/* a carries the whole row at 100 % of its capacity: it may keep
	 * 80 % of the row (headroom 20 %), the rest spills to b. */
	in[0].has_load = 1;
	in[0].load = 100;
	ck_assert_int_eq(nearest_step(&c, 3, in, &was, 0, &row, out), NEAREST_SPILL);
	ck_assert_int_eq(row.current, 0);
	ck_assert_uint_eq(out[0].share, 8000);
	ck_assert_uint_eq(out[1].share, 2000);
	ck_assert_uint_eq(out[2].share, 0);
	ck_assert(out[0].limits & NEAREST_LIM_CAP);
	ck_assert(out[1].limits & NEAREST_LIM_SPILL);
	/* The same measurement again: acted on already, the limit stays. */
	carry(3, in, out);
	was = row;
	in[0].load_new = 0;
	in[0].cap_prev = out[0].cap;
	ck_assert_int_eq(nearest_step(&c, 3, in, &was, 0, &row, out), NEAREST_KEEP);
	ck_assert_uint_eq(out[0].share, 8000);
	in[0].load_new = 1;
	/* The load follows: a at 80 %, steady. */
	carry(3, in, out);
	was = row;
	in[0].load = 80;
	ck_assert_int_eq(nearest_step(&c, 3, in, &was, 0, &row, out), NEAREST_KEEP);
	ck_assert_uint_eq(out[0].share, 8000);
	/* S4-3: a dip less than NEAREST_CAP_BAND below the limit keeps the
	 * share (8000 * 80 / 77 would be 8312 and go over at the next
	 * step); a dip beyond it raises the share. */
	in[0].load = 77;
	ck_assert_int_eq(nearest_step(&c, 3, in, &was, 0, &row, out), NEAREST_KEEP);
	ck_assert_uint_eq(out[0].share, 8000);
	in[0].load = 74;
	ck_assert_int_eq(nearest_step(&c, 3, in, &was, 0, &row, out), NEAREST_SPILL);
	ck_assert_uint_eq(out[0].share, 8649);    /* 8000 * 80 / 74 */
	in[0].load = 80;
	/* b is full from other rows: the spill goes on to c. */
	in[1].has_load = 1;
	in[1].load = 95;
	in[0].load = 90;
	ck_assert_int_eq(nearest_step(&c, 3, in, &was, 0, &row, out), NEAREST_SPILL);
	ck_assert_uint_eq(out[0].share, 7111);    /* 8000 * 80 / 90 */
	ck_assert_uint_eq(out[1].share, 1684);    /* 2000 * 80 / 95 */
	ck_assert_uint_eq(out[2].share, 1205);
	/* Everyone full: the row's choice keeps what nobody may take. */
	carry(3, in, out);
	was = row;
	for (int i = 0; i < 3; i++) {
		in[i].has_load = 1;
		in[i].load = 100;
	}
	nearest_step(&c, 3, in, &was, 0, &row, out);
	ck_assert(out[0].limits & NEAREST_LIM_FULL);
	ck_assert_uint_eq(out[0].share + out[1].share + out[2].share, STEER_TOTAL);
	ck_assert_uint_gt(out[0].share, 5689 - 1);   /* 7111 * 0.8 + the rest */
	/* Load falls: the choice takes the row back. */
	carry(3, in, out);
	was = row;
	for (int i = 0; i < 3; i++)
		in[i].load = 10;
	nearest_step(&c, 3, in, &was, 0, &row, out);
	ck_assert_uint_eq(out[0].share, STEER_TOTAL);
}
END_TEST

START_TEST(min_step)
{
	nearest_conf_t c = conf();
	nearest_in_t in[2] = { node("a", 20), node("b", 30) };
	in[0].prev = 8000;
	in[1].prev = 2000;
	in[0].has_load = 1;
	in[0].load = 81;          /* 8000 * 80 / 81 = 7901: 1 point */
	nearest_row_t was = { 0, -1, 0 }, row;
	nearest_out_t out[2];
	ck_assert_int_eq(nearest_step(&c, 2, in, &was, 0, &row, out), NEAREST_KEEP);
	ck_assert_uint_eq(out[0].share, 8000);
	ck_assert(out[0].limits & NEAREST_LIM_MIN);
	in[0].load = 90;          /* 7111: 8.9 points */
	ck_assert_int_eq(nearest_step(&c, 2, in, &was, 0, &row, out), NEAREST_SPILL);
	ck_assert_uint_eq(out[0].share, 7111);
}
END_TEST

/* S4-8: the fraction of KEYS sticky clients whose node differs between
 * plans with weights @a and @b of @n nodes; *@min gets the least any
 * assignment must move, the sum of the shares' increases. */
static double moved(unsigned n, const uint32_t *a, const uint32_t *b, double *min)
{
	enum { KEYS = 20000 };
	plan_t p = { 0 }, q = { 0 };
	double sa = 0, sb = 0;
	for (unsigned i = 0; i < n; i++) {
		sa += a[i];
		sb += b[i];
	}
	*min = 0;
	for (unsigned i = 0; i < n; i++) {
		char id[8];
		snprintf(id, sizeof(id), "n%u", i);
		p.node[i].idhash = q.node[i].idhash = plan_id_hash(id, strlen(id));
		p.node[i].flags = q.node[i].flags = PLAN_USABLE | PLAN_CNAME;
		p.node[i].weight = a[i];
		q.node[i].weight = b[i];
		double d = b[i] / sb - a[i] / sa;
		*min += d > 0 ? d : 0;
	}
	p.n = q.n = (uint8_t)n;
	unsigned m = 0;
	for (uint64_t k = 0; k < KEYS; k++) {
		uint64_t key = k * 0x9E3779B97F4A7C15ull + 7, rng = 0;
		uint8_t x[1], y[1];
		ck_assert_uint_eq(policy_pick(&p, 1, 0, 1, key, 0, &rng, x), 1);
		ck_assert_uint_eq(policy_pick(&q, 1, 0, 1, key, 0, &rng, y), 1);
		m += x[0] != y[0];
	}
	return (double)m / KEYS;
}

/* S4-1, S4-6: which latency a node gets for a row: pushed for the row
 * first, then the probes of the vantages in the row's region and ISP,
 * then in its region, then pushed for the ISP or the node as a whole. */
static nearest_vantage_t vant(const char *name, const char *region, const char *isp,
                              int ok, double ms, uint32_t at)
{
	nearest_vantage_t v;
	memset(&v, 0, sizeof(v));
	snprintf(v.name, sizeof(v.name), "%s", name);
	snprintf(v.region, sizeof(v.region), "%s", region);
	snprintf(v.isp, sizeof(v.isp), "%s", isp);
	v.ok = ok;
	v.ms = ms;
	v.at = at;
	return v;
}

START_TEST(latency_source)
{
	const uint32_t now = 100000, fr = 300;
	nearest_vantage_t v[5] = {
		vant("ns1", "cn-bj", "ctcc", 1, 10, now - 5),
		vant("ns2", "cn-bj", "cucc", 1, 30, now - 5),
		vant("ns3", "cn-gz", "ctcc", 1, 80, now - 5),
		vant("ns4", "cn-bj", "ctcc", 1, 20, now - 5),
		vant("ns5", "cn-gz", "ctcc", 0, 5, now - 5),
	};
	double ms = -1;
	uint32_t used = 99;
	/* Pushed for the row (region and ISP, or region alone) wins. */
	ck_assert_int_eq(nearest_latency_source(1, 42, v, 5, "cn-bj", "ctcc", now, fr,
	                                        &ms, &used), NEAREST_SRC_PUSHED);
	ck_assert(ms == 42 && used == 0);
	ck_assert_int_eq(nearest_latency_source(2, 43, v, 5, "cn-bj", "ctcc", now, fr,
	                                        &ms, &used), NEAREST_SRC_PUSHED);
	ck_assert(ms == 43);
	/* No pushed latency: the vantages of the same region and ISP,
	 * averaged (ns1 and ns4), not ns2 of another ISP. */
	ck_assert_int_eq(nearest_latency_source(0, 0, v, 5, "cn-bj", "ctcc", now, fr,
	                                        &ms, &used), NEAREST_SRC_PROBE_ISP);
	ck_assert(ms == 15 && used == (1u << 0 | 1u << 3));
	/* Over a node-wide pushed figure too. */
	ck_assert_int_eq(nearest_latency_source(4, 99, v, 5, "cn-bj", "ctcc", now, fr,
	                                        &ms, &used), NEAREST_SRC_PROBE_ISP);
	ck_assert(ms == 15);
	/* No vantage of the ISP: those of the region (ns1, ns2, ns4). */
	ck_assert_int_eq(nearest_latency_source(3, 99, v, 5, "cn-bj", "cmcc", now, fr,
	                                        &ms, &used), NEAREST_SRC_PROBE_REGION);
	ck_assert(ms == 20 && used == (1u << 0 | 1u << 1 | 1u << 3));
	/* A failing view (ns5) does not count; ns3 does. */
	ck_assert_int_eq(nearest_latency_source(0, 0, v, 5, "cn-gz", "ctcc", now, fr,
	                                        &ms, &used), NEAREST_SRC_PROBE_ISP);
	ck_assert(ms == 80 && used == 1u << 2);
	/* No vantage in the region: the wide pushed figure, else none. */
	ck_assert_int_eq(nearest_latency_source(3, 77, v, 5, "cn-sh", "ctcc", now, fr,
	                                        &ms, &used), NEAREST_SRC_PUSHED_WIDE);
	ck_assert(ms == 77 && used == 0);
	ck_assert_int_eq(nearest_latency_source(0, 0, v, 5, "cn-sh", "ctcc", now, fr,
	                                        &ms, &used), NEAREST_SRC_NONE);
	/* A row of every region has no vantage of its own. */
	ck_assert_int_eq(nearest_latency_source(0, 0, v, 5, "*", "ctcc", now, fr,
	                                        &ms, &used), NEAREST_SRC_NONE);
	/* A view older than @fresh is not read; one from a clock ahead is. */
	v[2].at = now - fr - 1;
	ck_assert_int_eq(nearest_latency_source(0, 0, v, 3, "cn-gz", "ctcc", now, fr,
	                                        &ms, &used), NEAREST_SRC_NONE);
	v[2].at = now + 3;
	ck_assert_int_eq(nearest_latency_source(0, 0, v, 3, "cn-gz", "ctcc", now, fr,
	                                        &ms, &used), NEAREST_SRC_PROBE_ISP);
	/* No views at all (standalone). */
	ck_assert_int_eq(nearest_latency_source(0, 0, NULL, 0, "cn-bj", "ctcc", now, fr,
	                                        &ms, &used), NEAREST_SRC_NONE);
}
END_TEST

START_TEST(sticky_moves)
{
	/* One node's share changes, the others keep their weights. */
	static const uint32_t a1[] = { 5000, 2500, 2500 }, b1[] = { 3000, 2500, 2500 };
	/* A spill starts: the nearest gives 20 % to the next. */
	static const uint32_t a2[] = { 10000, 0, 0 }, b2[] = { 8000, 2000, 0 };
	/* A spill grows: 10 points more from the nearest to the next. */
	static const uint32_t a3[] = { 8000, 2000, 0 }, b3[] = { 7000, 3000, 0 };
	/* A spill reaches a third node (two shares change). */
	static const uint32_t a4[] = { 7000, 3000, 0 }, b4[] = { 6000, 3000, 1000 };
	const uint32_t *as[] = { a1, a2, a3, a4 }, *bs[] = { b1, b2, b3, b4 };
	for (int s = 0; s < 4; s++) {
		double min, f = moved(3, as[s], bs[s], &min);
		printf("sticky_moves case %d: %.2f%% of clients moved, minimum %.2f%%\n",
		       s + 1, 100 * f, 100 * min);
		/* The first three change one node's share against the rest:
		 * rendezvous hashing moves the minimum (sampling error of
		 * 20000 keys, about 0.6 points at 3 sigma). */
		if (s < 3)
			ck_assert_msg(fabs(f - min) < 0.006, "case %d: %.4f vs %.4f", s + 1, f, min);
		else
			ck_assert_msg(f < 2 * min + 0.006, "case %d: %.4f vs %.4f", s + 1, f, min);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("nearest");
	TCase *t = tcase_create("core");
	tcase_add_test(t, margin_parse);
	tcase_add_test(t, better);
	tcase_add_test(t, rank);
	tcase_add_test(t, first_choice);
	tcase_add_test(t, hysteresis);
	tcase_add_test(t, ema);
	tcase_add_test(t, ema_lost);
	tcase_add_test(t, stale_choice_holds);
	tcase_add_test(t, hard_failure);
	tcase_add_test(t, capacity_spill);
	tcase_add_test(t, min_step);
	tcase_add_test(t, sticky_moves);
	tcase_add_test(t, latency_source);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)
