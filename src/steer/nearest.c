/* SPDX-License-Identifier: MIT */
/* Nearest steering's arithmetic (nearest.h): latency ranking, the switch
 * margin with its confirmation, capacity limits and spill.  Pure: no
 * I/O, no allocation. */
#include "common/util.h"
#include "steer/nearest.h"
#include "common/num.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int nearest_margin_parse(const char *s, double *v, int *ms)
{
	/* A time up to 10 s, or a percentage below 100 ("%" or none). */
	static const char *const in_ms[] = { "ms", NULL }, *const in_pct[] = { "%", NULL };
	static const num_range_t r_ms = { 0, 10000, NUM_LO_OPEN, in_ms, NULL };
	static const num_range_t r_pct = { 0, 100, NUM_LO_OPEN | NUM_HI_OPEN, in_pct, NULL };
	double d;
	int unit;
	if (num_parse(s, &r_ms, &d, &unit) == 0 && unit == 0)
		*ms = 1;
	else if (num_parse(s, &r_pct, &d, NULL) == 0)
		*ms = 0;
	else
		return -1;
	*v = d;
	return 0;
}

/* The mean time of the views of @v[0..@nv) that match the row at
 * @level (1: region and ISP, 2: region) and are good and fresh; which
 * in *@used (bit i for @v[i]). */
static double vantage_mean(const nearest_vantage_t *v, unsigned nv, int level,
                           const char *region, const char *isp, uint32_t now,
                           uint32_t fresh, uint32_t *used)
{
	double sum = 0;
	unsigned n = 0;
	*used = 0;
	for (unsigned i = 0; i < nv && i < 32; i++) {
		/* A view from the future (clocks apart) counts as fresh. */
		if (!v[i].ok || (v[i].at < now && now - v[i].at > fresh) ||
		    strcmp(v[i].region, region) != 0 ||
		    (level == 1 && strcmp(v[i].isp, isp) != 0))
			continue;
		sum += v[i].ms;
		*used |= 1u << i;
		n++;
	}
	return n ? sum / n : 0;
}

nearest_src_t nearest_latency_source(int pushed_level, double pushed,
                                     const nearest_vantage_t *v, unsigned nv,
                                     const char *region, const char *isp,
                                     uint32_t now, uint32_t fresh, double *ms,
                                     uint32_t *used)
{
	*used = 0;
	/* The clients' own measurement for their region is the truth the
	 * probes only approximate (S4-1: entry-to-node latency). */
	if (pushed_level == 1 || pushed_level == 2) {
		*ms = pushed;
		return NEAREST_SRC_PUSHED;
	}
	/* S4-6: a name server in the clients' region and ISP sees the node
	 * over much the same network as they do; one in their region over
	 * part of it.  A node-wide figure says nothing of the region. */
	if (strcmp(region, "*") != 0) {
		for (int level = 1; level <= 2; level++) {
			double m = vantage_mean(v, nv, level, region, isp, now, fresh, used);
			if (*used) {
				*ms = m;
				return level == 1 ? NEAREST_SRC_PROBE_ISP : NEAREST_SRC_PROBE_REGION;
			}
		}
	}
	if (pushed_level == 3 || pushed_level == 4) {
		*ms = pushed;
		return NEAREST_SRC_PUSHED_WIDE;
	}
	return NEAREST_SRC_NONE;
}

int nearest_better(const nearest_conf_t *c, double cand, double cur)
{
	/* S4-5: a gain within the margin (probe jitter) is no reason to
	 * move; the current choice keeps that bonus. */
	if (c->margin_ms)
		return cur - cand > c->margin;
	return cand < cur * (1 - c->margin / 100);
}

unsigned nearest_rank(unsigned n, const nearest_in_t *in, const double *ema,
                      const int *has, unsigned *order)
{
	unsigned m = 0;
	for (unsigned i = 0; i < n; i++) {
		if (!in[i].usable || in[i].base == 0)
			continue;
		/* Insertion: stable, so ties keep the row's order. */
		unsigned j = m++;
		while (j > 0) {
			unsigned o = order[j - 1];
			int before = has[i] && has[o] ? ema[i] < ema[o] :
			             has[i] != has[o] ? has[i] : in[i].base > in[o].base;
			if (!before)
				break;
			order[j] = o;
			j--;
		}
		order[j] = i;
	}
	return m;
}

int nearest_fill(unsigned m, const unsigned *order, const double *cap,
                 double *share, unsigned *lim)
{
	double rest = 1;
	for (unsigned k = 0; k < m; k++) {
		double take = cap[k] < rest ? cap[k] : rest;
		if (take < 0)
			take = 0;
		share[k] = take;
		if (cap[k] < rest)
			lim[order[k]] |= NEAREST_LIM_CAP;
		if (k > 0 && take > 0)
			lim[order[k]] |= NEAREST_LIM_SPILL;
		rest -= take;
	}
	if (m && rest > 1e-9) {
		/* Every node is at capacity minus headroom: the row must
		 * still be answered, and its own choice is the least bad
		 * place for what is left. */
		share[0] += rest;
		lim[order[0]] |= NEAREST_LIM_FULL;
		return 1;
	}
	return 0;
}

double nearest_cap(const nearest_conf_t *c, const nearest_in_t *in)
{
	double room = 100 - c->headroom;
	if (!in->has_load)
		return 1;
	if (!in->load_new)
		return in->cap_prev < 0 ? 0 : in->cap_prev > 1 ? 1 : in->cap_prev;
	if (in->load <= 0)
		return 1;
	double p = in->prev > 0 ? (double)in->prev / STEER_TOTAL : 0;
	if (p > 0 && in->load <= room && in->load >= room - NEAREST_CAP_BAND)
		return p;
	if (p > 0) {
		double x = p * room / in->load;
		return x > 1 ? 1 : x;
	}
	return in->load < room ? 1 : 0;
}

/* nearest_step(), step 1: each node's figures cleared and its smoothed
 * latency (@ema, @has: whether it has one).  S4-7: EMA on latency.  A
 * node without a fresh latency has no data: it ranks after the
 * measured ones and its smoothing starts afresh when data comes back. */
static void near_smooth(const nearest_conf_t *c, unsigned n, const nearest_in_t *in,
                        const nearest_row_t *was, int hard_only,
                        nearest_out_t *out, double *ema, int *has)
{
	for (unsigned i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		if (hard_only) {
			has[i] = in[i].has_ema;
			ema[i] = in[i].ema;
		} else if (in[i].has_latency) {
			has[i] = 1;
			ema[i] = in[i].has_ema ? in[i].ema + c->alpha * (in[i].latency - in[i].ema)
			                       : in[i].latency;
		} else if ((int)i == was->current && in[i].has_ema) {
			/* S3-9: the row's choice whose figures stopped coming
			 * keeps its last smoothed latency: a missing figure is
			 * no evidence that it got worse, and a feeder's gap
			 * must not move the row (nor flap it between nodes
			 * whose figures come late in turn). */
			has[i] = 1;
			ema[i] = in[i].ema;
			out[i].limits |= NEAREST_LIM_NODATA;
		} else {
			has[i] = 0;
			ema[i] = 0;
		}
		out[i].has_ema = has[i];
		out[i].ema = ema[i];
		if (!has[i])
			out[i].limits |= NEAREST_LIM_NODATA;
		if (!in[i].usable)
			out[i].limits |= NEAREST_LIM_DOWN;
		out[i].share = in[i].prev > 0 ? (uint32_t)in[i].prev : 0;
	}
}

/* Step 2, S4-5: whether the best node (@best, ranked first) replaces
 * the row's choice @cur: only when it is better by the margin in
 * NEAREST_CONFIRM evaluations in a row; measured beats unmeasured.
 * Updates the challenger in @row and *@cur. */
static nearest_verdict_t near_challenge(const nearest_conf_t *c,
                                        const nearest_row_t *was, int best,
                                        const double *ema, const int *has,
                                        nearest_row_t *row, int *cur)
{
	if (best != *cur && has[best] &&
	    (!has[*cur] || nearest_better(c, ema[best], ema[*cur]))) {
		row->streak = was->challenger == best ? was->streak + 1 : 1;
		row->challenger = best;
		if (row->streak < NEAREST_CONFIRM)
			return NEAREST_PENDING;
		*cur = best;
		row->challenger = -1;
		row->streak = 0;
		return NEAREST_SWITCH;
	}
	row->challenger = -1;
	row->streak = 0;
	return NEAREST_KEEP;
}

/* Step 3: the row's choice, into row->current.  Sets *@done when the
 * step ends here (no candidate, or a hard-only step with nothing
 * failed). */
static nearest_verdict_t near_choose(const nearest_conf_t *c, unsigned n,
                                     const nearest_in_t *in,
                                     const nearest_row_t *was, int hard_only,
                                     const unsigned *order, unsigned m,
                                     const double *ema, const int *has,
                                     nearest_row_t *row, int *done)
{
	/* S4-4: a node with a share that failed hard leaves at once. */
	int lost = 0;
	for (unsigned i = 0; i < n; i++)
		lost |= in[i].prev > 0 && (!in[i].usable || in[i].base == 0);
	int cur = was->current >= 0 && (unsigned)was->current < n ? was->current : -1;
	int cur_ok = cur >= 0 && in[cur].usable && in[cur].base > 0;
	*done = 1;
	if (!m) {
		row->current = -1;
		row->challenger = -1;
		row->streak = 0;
		return NEAREST_NONE;
	}
	if (hard_only && !lost && (cur_ok || cur < 0))
		return NEAREST_KEEP;
	*done = 0;
	nearest_verdict_t v = NEAREST_KEEP;
	if (cur < 0 || !cur_ok) {
		v = cur < 0 ? NEAREST_FIRST : NEAREST_HARD;
		cur = (int)order[0];
		row->challenger = -1;
		row->streak = 0;
	} else if (!hard_only) {
		v = near_challenge(c, was, (int)order[0], ema, has, row, &cur);
	}
	row->current = cur;
	if (v == NEAREST_KEEP && lost)
		v = NEAREST_HARD;
	return v;
}

/* Step 4: the shares in bp (@bp), filled in order -- the row's choice
 * @cur, then the others by rank -- up to each node's cap. */
static void near_fill(const nearest_conf_t *c, unsigned n, const nearest_in_t *in,
                      const unsigned *order, unsigned m, int cur,
                      nearest_out_t *out, unsigned *lim, uint32_t *bp)
{
	unsigned fo[STEER_MAX_NODES];
	unsigned k = 0;
	fo[k++] = (unsigned)cur;
	for (unsigned j = 0; j < m; j++)
		if (order[j] != (unsigned)cur)
			fo[k++] = order[j];
	double cap[STEER_MAX_NODES], frac[STEER_MAX_NODES], x[STEER_MAX_NODES];
	for (unsigned j = 0; j < m; j++) {
		cap[j] = nearest_cap(c, &in[fo[j]]);
		out[fo[j]].cap = cap[j];
		out[fo[j]].rank = j + 1;
	}
	nearest_fill(m, fo, cap, frac, lim);
	for (unsigned i = 0; i < n; i++)
		x[i] = 0;
	for (unsigned j = 0; j < m; j++)
		x[fo[j]] = frac[j];
	steer_round_shares(x, n, bp);
}

/* Step 5: the shares @bp applied, but that a capacity move smaller than
 * min_step on every node is not made: load figures are noisy, and each
 * move shifts clients.  Returns @v, or NEAREST_SPILL for a kept choice
 * whose shares moved. */
static nearest_verdict_t near_apply(const nearest_conf_t *c, unsigned n,
                                    const nearest_in_t *in, nearest_out_t *out,
                                    const unsigned *lim, const uint32_t *bp,
                                    nearest_verdict_t v)
{
	int all_prev = 1;
	uint32_t maxd = 0;
	for (unsigned i = 0; i < n; i++) {
		if (in[i].prev < 0)
			all_prev = 0;
		uint32_t p = in[i].prev > 0 ? (uint32_t)in[i].prev : 0;
		uint32_t d = bp[i] > p ? bp[i] - p : p - bp[i];
		if (d > maxd)
			maxd = d;
	}
	int hold = all_prev && (v == NEAREST_KEEP || v == NEAREST_PENDING) && maxd &&
	           maxd < c->min_step * STEER_TOTAL / 100;
	int changed = 0;
	for (unsigned i = 0; i < n; i++) {
		out[i].limits |= lim[i];
		if (hold) {
			if (bp[i] != out[i].share)
				out[i].limits |= NEAREST_LIM_MIN;
			continue;
		}
		changed |= in[i].prev < 0 || bp[i] != (uint32_t)in[i].prev;
		out[i].share = bp[i];
	}
	return v == NEAREST_KEEP && changed ? NEAREST_SPILL : v;
}

nearest_verdict_t nearest_step(const nearest_conf_t *c, unsigned n,
                               const nearest_in_t *in, const nearest_row_t *was,
                               int hard_only, nearest_row_t *row,
                               nearest_out_t *out)
{
	if (n > STEER_MAX_NODES)
		n = STEER_MAX_NODES;
	*row = *was;
	double ema[STEER_MAX_NODES] = { 0 };
	int has[STEER_MAX_NODES] = { 0 };
	near_smooth(c, n, in, was, hard_only, out, ema, has);
	unsigned order[STEER_MAX_NODES];
	unsigned m = nearest_rank(n, in, ema, has, order);
	int done;
	nearest_verdict_t v = near_choose(c, n, in, was, hard_only, order, m, ema,
	                                  has, row, &done);
	if (done)
		return v;
	unsigned lim[STEER_MAX_NODES] = { 0 };
	uint32_t bp[STEER_MAX_NODES];
	near_fill(c, n, in, order, m, row->current, out, lim, bp);
	return near_apply(c, n, in, out, lim, bp, v);
}

const char *nearest_verdict_name(nearest_verdict_t v)
{
	static const char *const names[] = { "keep", "first", "pending", "switch",
	                                     "hard", "spill", "none" };
	return (unsigned)v < sizeof(names) / sizeof(names[0]) ? names[v] : "?";
}

const char *nearest_limits_text(unsigned lim, char *buf, unsigned size)
{
	static const char *const names[] = { "failed hard", "no latency data",
		"capacity", "spill", "all at capacity", "below min-step" };
	return util_flags_text(names, sizeof(names) / sizeof(names[0]), lim, buf, size);
}
