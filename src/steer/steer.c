/* SPDX-License-Identifier: MIT */
/* The steering engine's arithmetic (steer.h): normalisation, windows,
 * smoothing, SLA, floor and step limits.  Pure: no I/O, no allocation. */
#include "steer/steer.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>

void steer_conf_default(steer_conf_t *c)
{
	memset(c, 0, sizeof(*c));
	c->interval = 60;          /* S3-3: every minute */
	c->tau = 300;              /* S3-3: EMA with tau = 5 min */
	c->windows[0] = 60;        /* S3-9: 1, 5 and 15 minute windows */
	c->windows[1] = 300;
	c->windows[2] = 900;
	c->nwindows = 3;
	c->stale = 300;            /* S2-7: 5 minutes */
	c->skew = 60;              /* a feeder's clock a minute ahead */
	c->min_step = 2;           /* S3-3: minimum change step */
	c->max_step = 10;          /* S3-8: rate limit per evaluation */
	c->max_hour = 50;          /* S3-8: rate limit per change window, */
	c->change_window = 60;     /* 60 evaluations: an hour at 60 s */
	c->sharpness = 3;          /* S3-3: score^3, see targets() */
	c->floor = 5;              /* every candidate keeps being measured */
	c->headroom = 20;          /* S1-6: keep 20 % spare capacity */
	c->sla = 98;               /* S3-5: success < 98 % */
	c->sla_after = 2;          /* S3-9: two consecutive abnormal windows */
	c->restore_after = 3;      /* S0-8: three good rounds restore */
	c->success_good = 99.9;
	c->success_bad = 95;
	c->latency_good = 20;      /* S2-3: RTT 20-200 ms */
	c->latency_bad = 200;
	c->budget_boost = 3;
	c->input_keep = 86400;     /* a day: long dead for every window */
	c->spend_keep = 400 * 86400.0; /* a year of periods, and a month */
}

double steer_change_window_s(const steer_conf_t *c)
{
	return c->change_window * c->interval;
}

double steer_conf_keep(const steer_conf_t *c)
{
	double keep = c->nwindows ? c->windows[c->nwindows - 1] : 0;
	return keep > c->stale ? keep : c->stale;
}

int steer_policy_named(const char *name, steer_policy_t *out)
{
	/* S3-6: live prefers quality, VOD prefers cost; custom starts from
	 * the seed's example weights (S3-3). */
	static const struct { const char *name; steer_policy_t p; } set[] = {
		{ "live", { 0.5, 0.45, 0.05 } },
		{ "vod", { 0.4, 0.2, 0.4 } },
		{ "custom", { 0.5, 0.3, 0.2 } },
	};
	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++)
		if (strcmp(name, set[i].name) == 0) {
			*out = set[i].p;
			return 0;
		}
	return -1;
}

double steer_normalize(double v, double good, double bad)
{
	if (good == bad)
		return v == good ? 1 : 0;
	double x = (v - bad) / (good - bad);
	return x < 0 ? 0 : x > 1 ? 1 : x;
}

static double field(const steer_sample_t *s, int which)
{
	return which ? s->latency : s->success;
}

/* The median of @v[0..@n) (@n > 0), which it sorts. */
static double median(double *v, unsigned n)
{
	for (unsigned i = 1; i < n; i++) {
		double x = v[i];
		unsigned j = i;
		while (j > 0 && v[j - 1] > x) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int steer_aggregate(const steer_conf_t *c, const steer_sample_t *s,
                    unsigned n, uint32_t now, int which, double *out,
                    double *now_out)
{
	uint32_t newest = 0;
	int any = 0;
	if (n > STEER_MAX_SAMPLES)
		n = STEER_MAX_SAMPLES;
	for (unsigned i = 0; i < n; i++)
		if (!isnan(field(&s[i], which)) && (!any || s[i].time > newest)) {
			newest = s[i].time;
			any = 1;
		}
	/* S2-7: an input not refreshed within steer.stale is stale. */
	if (!any || (newest < now && now - newest > c->stale))
		return 0;
	double sum = 0, first = NAN;
	unsigned used = 0;
	for (unsigned w = 0; w < c->nwindows && w < STEER_MAX_WINDOWS; w++) {
		double v[STEER_MAX_SAMPLES];
		unsigned k = 0;
		for (unsigned i = 0; i < n; i++) {
			double x = field(&s[i], which);
			/* Samples stamped ahead of the clock count as now. */
			if (!isnan(x) && (s[i].time >= now || now - s[i].time < c->windows[w]))
				v[k++] = x;
		}
		if (!k)
			continue;
		double m = median(v, k);
		if (isnan(first))
			first = m;
		sum += m;
		used++;
	}
	if (!used)
		return 0;
	*out = sum / used;
	if (now_out)
		*now_out = first;
	return 1;
}

void steer_round_shares(const double *x, unsigned n, uint32_t *out)
{
	double sum = 0;
	for (unsigned i = 0; i < n; i++)
		sum += x[i] > 0 ? x[i] : 0;
	if (sum <= 0) {
		for (unsigned i = 0; i < n; i++)
			out[i] = 0;
		return;
	}
	double frac[STEER_MAX_NODES];
	uint32_t total = 0;
	for (unsigned i = 0; i < n; i++) {
		double v = x[i] > 0 ? x[i] / sum * STEER_TOTAL : 0;
		out[i] = (uint32_t)floor(v);
		frac[i] = x[i] > 0 ? v - out[i] : -1;
		total += out[i];
	}
	while (total < STEER_TOTAL) {
		unsigned best = n;
		for (unsigned i = 0; i < n; i++)
			if (frac[i] >= 0 && (best == n || frac[i] > frac[best]))
				best = i;
		if (best == n) {
			/* More points left than nodes with a remainder (only
			 * through rounding of the sum): another round. */
			for (unsigned i = 0; i < n; i++)
				frac[i] = x[i] > 0 ? 0 : -1;
			continue;
		}
		out[best]++;
		frac[best] = -1;
		total++;
	}
}

/* The score of one known node (S3-3): a.success + b.latency - c.cost
 * over the terms it has, the weight of a missing one handed over to the
 * others (S2-7), brought into 0..1.  Cost is relative to the row's
 * dearest node, and weighs budget_boost times more past a budget's alert
 * level (S3-6). */
static double score(const steer_conf_t *c, const steer_policy_t *p,
                    const steer_in_t *in, double max_cost, steer_out_t *o)
{
	double num = 0, den = 0;
	if (in->has_success) {
		o->ns = steer_normalize(in->success, c->success_good, c->success_bad);
		num += p->success * o->ns;
		den += p->success;
	}
	if (in->has_latency) {
		o->nl = steer_normalize(in->latency, c->latency_good, c->latency_bad);
		num += p->latency * o->nl;
		den += p->latency;
	}
	if (in->has_cost && max_cost > 0 && p->cost > 0) {
		o->nc = in->cost / max_cost;
		double pen = o->nc * (in->over_budget ? c->budget_boost : 1);
		num += p->cost * (1 - pen);
		den += p->cost;
	}
	double r = den > 0 ? num / den : 0.5;
	return r < 0 ? 0 : r > 1 ? 1 : r;
}

double steer_demand(unsigned n, const double *cap, const double *util,
                    const steer_in_t *in)
{
	double base_sum = 0, load = 0, share = 0;
	int operator = 0;
	for (unsigned i = 0; i < n; i++) {
		base_sum += in[i].base;
		operator |= in[i].prev < 0;
	}
	for (unsigned i = 0; i < n; i++) {
		double s = operator ? (base_sum > 0 ? in[i].base / base_sum : 0)
		                    : (double)in[i].prev / STEER_TOTAL;
		if (cap[i] <= 0 || isnan(util[i]) || s <= 0)
			continue;
		load += util[i] / 100 * cap[i];
		share += s;
	}
	/* What the measured nodes carry over the share of the row they
	 * carry it for. */
	return share > 0 && load > 0 ? load / share : 0;
}

unsigned steer_ceilings(double headroom, unsigned n, const double *cap,
                        double demand, steer_in_t *in)
{
	unsigned k = 0;
	for (unsigned i = 0; i < n; i++) {
		in[i].has_ceiling = 0;
		in[i].ceiling = 0;
		if (cap[i] <= 0 || demand <= 0)
			continue;
		double c = cap[i] * (100 - headroom) / 100 / demand * STEER_TOTAL;
		in[i].ceiling = c >= STEER_TOTAL ? STEER_TOTAL : (uint32_t)floor(c);
		in[i].has_ceiling = 1;
		k++;
	}
	return k;
}

/* S1-6: holds every candidate at or below its capacity ceiling; what a
 * capped node cannot take goes to the candidates still below theirs in
 * proportion to what their scores ask for (@t), never to a capped one.
 * When every candidate is capped, the row needs more than its capacity:
 * the rest is spread in proportion to the ceilings, so that every node
 * runs equally over. */
static void cap_targets(unsigned n, const steer_in_t *in, steer_out_t *out,
                        const int *cand, const double *t, double *T)
{
	int capped[STEER_MAX_NODES] = { 0 };
	for (unsigned round = 0; round <= n; round++) {
		double excess = 0, room = 0, cs = 0;
		for (unsigned i = 0; i < n; i++) {
			if (!cand[i] || !in[i].has_ceiling)
				continue;
			double c = (double)in[i].ceiling / STEER_TOTAL;
			if (T[i] > c + 1e-12) {
				excess += T[i] - c;
				T[i] = c;
				capped[i] = 1;
				out[i].limits |= STEER_LIM_CAPACITY;
			}
		}
		if (excess <= 0)
			return;
		int by_base = 0;
		for (unsigned i = 0; i < n; i++)
			room += cand[i] && !capped[i] && t[i] > 0 ? t[i] : 0;
		if (room <= 0) {
			by_base = 1;
			for (unsigned i = 0; i < n; i++)
				room += cand[i] && !capped[i] ? in[i].base : 0;
		}
		if (room <= 0) {
			for (unsigned i = 0; i < n; i++)
				cs += cand[i] ? in[i].ceiling : 0;
			for (unsigned i = 0; i < n && cs > 0; i++)
				if (cand[i])
					T[i] += excess * in[i].ceiling / cs;
			return;
		}
		for (unsigned i = 0; i < n; i++)
			if (cand[i] && !capped[i])
				T[i] += excess * (by_base ? in[i].base : (t[i] > 0 ? t[i] : 0)) / room;
	}
}

/* The shares that the smoothed scores ask for (S3-3): the operator's
 * weight times the score to the power sharpness, normalised, then every
 * candidate raised to the floor, the others scaled to make room, and
 * held below the capacity ceilings.  With sharpness 3 a node at half
 * its peers' score is aimed at an eighth of their weight: 1/9 of a row
 * of two, where the square left it 1/5 and the plain score 1/3. */
static void targets(const steer_conf_t *c, unsigned n, const steer_in_t *in,
                    steer_out_t *out, const int *cand, double *T)
{
	double t[STEER_MAX_NODES], total = 0;
	unsigned m = 0;
	for (unsigned i = 0; i < n; i++) {
		t[i] = cand[i] ? (double)in[i].base * pow(out[i].ema, c->sharpness) : 0;
		total += t[i];
		m += cand[i] != 0;
	}
	if (total <= 0)
		for (unsigned i = 0; i < n; i++)
			total += t[i] = cand[i] ? (double)in[i].base : 0;
	double f = c->floor / 100;
	int fixed[STEER_MAX_NODES] = { 0 };
	unsigned nfixed = 0;
	double rest = total, avail = 1;
	if (f > 0 && m * f <= 1) {
		for (int changed = 1; changed && nfixed < m;) {
			changed = 0;
			rest = 0;
			for (unsigned i = 0; i < n; i++)
				if (cand[i] && !fixed[i])
					rest += t[i];
			avail = 1 - f * nfixed;
			for (unsigned i = 0; i < n; i++)
				if (cand[i] && !fixed[i] && (rest <= 0 || t[i] / rest * avail < f)) {
					fixed[i] = 1;
					nfixed++;
					changed = 1;
				}
		}
		rest = 0;
		for (unsigned i = 0; i < n; i++)
			if (cand[i] && !fixed[i])
				rest += t[i];
		avail = 1 - f * nfixed;
	}
	for (unsigned i = 0; i < n; i++) {
		if (!cand[i])
			T[i] = 0;
		else if (fixed[i]) {
			T[i] = f;
			out[i].limits |= STEER_LIM_FLOOR;
		} else
			T[i] = rest > 0 ? t[i] / rest * avail : 0;
	}
	cap_targets(n, in, out, cand, t, T);
}

/* steer_step(), step 1: every node's figures cleared and its raw score
 * (S3-1) from its fresh inputs; a node over its budget is marked
 * (S3-6).  Returns how many nodes have fresh inputs, with the sum of
 * their scores in *@sumraw and of the operator's weights in *@base_sum. */
static unsigned step_scores(const steer_conf_t *c, const steer_policy_t *p,
                            unsigned n, const steer_in_t *in, steer_out_t *out,
                            double *sumraw, double *base_sum)
{
	double max_cost = 0;
	unsigned known = 0;
	*sumraw = *base_sum = 0;
	for (unsigned i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		out[i].ns = out[i].nl = out[i].nc = -1;
		if (in[i].has_cost && in[i].cost > max_cost)
			max_cost = in[i].cost;
		*base_sum += in[i].base;
	}
	for (unsigned i = 0; i < n; i++) {
		if (in[i].over_budget)
			out[i].limits |= STEER_LIM_BUDGET;
		if (!in[i].has_success && !in[i].has_latency)
			continue;
		out[i].raw = score(c, p, &in[i], max_cost, &out[i]);
		*sumraw += out[i].raw;
		known++;
	}
	return known;
}

/* Step 2: the row's shares now, as fractions (@P) and in basis points
 * (@prev_bp): the engine's last ones, or the operator's weights when a
 * node has none yet.  Returns 1 in that case. */
static int step_previous(unsigned n, const steer_in_t *in, double base_sum,
                         double *P, uint32_t *prev_bp)
{
	int operator = 0;
	for (unsigned i = 0; i < n; i++)
		operator |= in[i].prev < 0;
	for (unsigned i = 0; i < n; i++)
		P[i] = operator ? (base_sum > 0 ? in[i].base / base_sum : 0)
		                : (double)in[i].prev / STEER_TOTAL;
	if (operator)
		steer_round_shares(P, n, prev_bp);
	else
		for (unsigned i = 0; i < n; i++)
			prev_bp[i] = (uint32_t)in[i].prev;
	return operator;
}

/* Step 3, S3-3: EMA with time constant tau, sampled every interval.  A
 * node without fresh input keeps its smoothed score, or starts at the
 * row's mean (@mean): neither full weight nor removal (S2-7). */
static void step_smooth(const steer_conf_t *c, const steer_in_t *x,
                        steer_out_t *o, double mean)
{
	double alpha = c->tau > 0 ? 1 - exp(-c->interval / c->tau) : 1;
	o->has_ema = 1;
	if (!x->has_success && !x->has_latency) {
		o->raw = mean;
		o->limits |= STEER_LIM_UNKNOWN;
		o->ema = x->has_ema ? x->ema : o->raw;
	} else {
		o->ema = x->has_ema ? x->ema + alpha * (o->raw - x->ema) : o->raw;
	}
}

/* Step 4, S3-5 with S3-9: success below the SLA in sla_after
 * consecutive evaluations takes the node out at once; restore_after
 * evaluations at or above it bring it back. */
static void step_sla(const steer_conf_t *c, const steer_in_t *x, steer_out_t *o)
{
	o->sla_low = x->sla_low;
	o->sla_good = x->sla_good;
	o->sla_out = x->sla_out;
	if (!x->has_success)
		return;
	if (x->success_now < c->sla) {
		o->sla_low++;
		o->sla_good = 0;
	} else {
		o->sla_good++;
		o->sla_low = 0;
	}
	if (!o->sla_out && o->sla_low >= c->sla_after)
		o->sla_out = 1;
	else if (o->sla_out && o->sla_good >= c->restore_after)
		o->sla_out = 0;
}

/* Step 5: the candidates (@cand: a weight of the operator's, and not out
 * for the SLA).  Every candidate below the SLA: taking them all out
 * would answer nothing, so the scores alone decide.  Returns whether a
 * node that has a share now is taken out (an SLA failover). */
static int step_candidates(unsigned n, const steer_in_t *in, steer_out_t *out,
                           const double *P, int *cand)
{
	unsigned ncand = 0, nout = 0;
	for (unsigned i = 0; i < n; i++) {
		cand[i] = in[i].base > 0;
		ncand += cand[i] != 0;
		nout += cand[i] && out[i].sla_out;
	}
	int allsla = ncand && nout == ncand;
	int forced = 0;
	for (unsigned i = 0; i < n; i++) {
		if (!cand[i] || !out[i].sla_out)
			continue;
		if (allsla) {
			out[i].limits |= STEER_LIM_ALLSLA;
			continue;
		}
		cand[i] = 0;
		out[i].limits |= STEER_LIM_SLA;
		forced |= P[i] > 0;
	}
	return forced;
}

/* Step 5b, S3-3 and S3-9 (hysteresis): a candidate whose target @T is
 * back against the way its share last moved, by less than twice
 * min_step, keeps its share @P: a steady trend moves a share one way and
 * noise does not send it back.  Its part of the move goes to the free
 * candidates (neither held, floored nor capped) in proportion to their
 * targets, which may hold another; the move's targets into @M.  When no
 * free candidate can take it, or it would lift one above its capacity
 * ceiling, nothing is held. */
static void step_hold(const steer_conf_t *c, unsigned n, const steer_in_t *in,
                      steer_out_t *out, const int *cand, const double *P,
                      const double *T, double *M)
{
	double band = 2 * c->min_step / 100;
	int held[STEER_MAX_NODES] = { 0 }, any = 0;
	memcpy(M, T, sizeof(double) * n);
	for (unsigned round = 0; round < n; round++) {
		/* One node a round, the one furthest back: holding it changes
		 * the others' part (in a row of two, it holds the other). */
		unsigned pick = n;
		for (unsigned i = 0; i < n; i++) {
			double d = M[i] - P[i];
			if (cand[i] && !held[i] && in[i].dir && d * in[i].dir < -1e-9 &&
			    fabs(d) < band - 1e-12 &&
			    (pick == n || fabs(d) > fabs(M[pick] - P[pick])))
				pick = i;
		}
		if (pick == n)
			break;
		held[pick] = any = 1;
		double fixed = 0, free = 0;
		for (unsigned i = 0; i < n; i++) {
			int fr = cand[i] && !held[i] &&
			         !(out[i].limits & (STEER_LIM_FLOOR | STEER_LIM_CAPACITY));
			fixed += held[i] ? P[i] : fr ? 0 : T[i];
			free += fr ? T[i] : 0;
		}
		if (free <= 0 || fixed > 1) {
			memcpy(M, T, sizeof(double) * n);
			return;
		}
		for (unsigned i = 0; i < n; i++) {
			M[i] = held[i] ? P[i] : cand[i] && !(out[i].limits &
			       (STEER_LIM_FLOOR | STEER_LIM_CAPACITY)) ? T[i] * (1 - fixed) / free
			       : T[i];
			/* S1-6: never above a ceiling for the hold's sake. */
			if (!held[i] && in[i].has_ceiling &&
			    M[i] > (double)in[i].ceiling / STEER_TOTAL + 1e-12) {
				memcpy(M, T, sizeof(double) * n);
				return;
			}
		}
	}
	for (unsigned i = 0; i < n && any; i++)
		if (held[i])
			out[i].limits |= STEER_LIM_HOLD;
}

/* Step 6: how much of the move from @P to the targets @T is made (0..1),
 * the limit that decided it in *@why.  S3-8: at most max_step per node
 * per evaluation, and at most max_hour per node per change window
 * (change_window evaluations, so that a drill that shortens interval
 * shortens it too); the whole move is scaled, so the shares still add
 * up. */
static double step_limit(const steer_conf_t *c, uint32_t now, unsigned n,
                         const steer_in_t *in, const double *P, const double *T,
                         unsigned *why)
{
	double m = 0, k = 1, win = steer_change_window_s(c);
	for (unsigned i = 0; i < n; i++)
		if (fabs(T[i] - P[i]) > m)
			m = fabs(T[i] - P[i]);
	*why = 0;
	if (m <= 0)
		return k;
	if (m > c->max_step / 100) {
		k = c->max_step / 100 / m;
		*why = STEER_LIM_STEP;
	}
	for (unsigned i = 0; i < n; i++) {
		double d = fabs(T[i] - P[i]);
		if (d <= 0)
			continue;
		uint32_t moved = now - in[i].hour_start >= win ? 0 : in[i].hour_moved;
		double allowed = c->max_hour / 100 - (double)moved / STEER_TOTAL;
		if (allowed < 0)
			allowed = 0;
		if (allowed / d < k) {
			k = allowed / d;
			*why = STEER_LIM_HOUR;
		}
	}
	/* S3-3: a move smaller than min_step is not made. */
	if (k * m * 100 < c->min_step - 1e-9) {
		k = 0;
		if (*why != STEER_LIM_HOUR)
			*why = STEER_LIM_MIN;
	}
	return k;
}

/* Step 7: the new shares, @k of the way from @P to @T (all of it for an
 * SLA failover, @forced), and each node's use of the hour's allowance.
 * Returns whether a share changed. */
static int step_move(const steer_conf_t *c, uint32_t now, unsigned n,
                     const steer_in_t *in, steer_out_t *out, const double *P,
                     const double *T, const uint32_t *prev_bp, double k,
                     unsigned why, int forced)
{
	double win = steer_change_window_s(c);
	double N[STEER_MAX_NODES];
	for (unsigned i = 0; i < n; i++) {
		N[i] = forced ? T[i] : P[i] + k * (T[i] - P[i]);
		if (why && fabs(T[i] - P[i]) > 0)
			out[i].limits |= why;
	}
	uint32_t nbp[STEER_MAX_NODES];
	if (k == 0 && !forced)
		memcpy(nbp, prev_bp, sizeof(uint32_t) * n);
	else
		steer_round_shares(N, n, nbp);
	int changed = 0;
	for (unsigned i = 0; i < n; i++) {
		out[i].share = nbp[i];
		uint32_t d = nbp[i] > prev_bp[i] ? nbp[i] - prev_bp[i] : prev_bp[i] - nbp[i];
		changed |= d != 0;
		/* The way it last moved, for step_hold(); a node taken out or
		 * brought back for the SLA starts a new trend. */
		out[i].dir = out[i].sla_out != in[i].sla_out ? 0
		           : d ? (nbp[i] > prev_bp[i] ? 1 : -1) : in[i].dir;
		/* An SLA failover is not a rate-limited move: it does not
		 * use up the hour's allowance. */
		if (forced)
			d = 0;
		int fresh_hour = now - in[i].hour_start >= win;
		out[i].hour_start = fresh_hour && d ? now : in[i].hour_start;
		out[i].hour_moved = (fresh_hour ? 0 : in[i].hour_moved) + d;
	}
	return changed;
}

/* S2-7: no fresh input for any node of the row.  It moves back from the
 * shares in force @P to the operator's weights under the step and
 * change-window limits (S3-8), so that a feeder's outage does not swing
 * the row at once, and once the rest of the way is within one step it
 * is there: the engine lets go of the row (STEER_REVERT).  A row the
 * operator's weights already answer stays so.  The smoothing starts
 * afresh. */
static steer_verdict_t step_return(const steer_conf_t *c, uint32_t now, unsigned n,
                                   const steer_in_t *in, steer_out_t *out,
                                   double base_sum, int operator, const double *P,
                                   uint32_t *prev_bp)
{
	double B[STEER_MAX_NODES] = { 0 }, m = 0;
	uint32_t bbp[STEER_MAX_NODES];
	for (unsigned i = 0; i < n; i++) {
		B[i] = base_sum > 0 ? in[i].base / base_sum : 0;
		out[i].limits |= STEER_LIM_UNKNOWN | (operator ? 0 : STEER_LIM_RETURN);
		out[i].hour_start = in[i].hour_start;
		out[i].hour_moved = in[i].hour_moved;
		if (fabs(B[i] - P[i]) > m)
			m = fabs(B[i] - P[i]);
	}
	steer_round_shares(B, n, bbp);
	for (unsigned i = 0; i < n; i++)
		out[i].target = bbp[i];
	unsigned why = 0;
	double k = operator || m * 100 <= c->min_step + 1e-9 ? 1
	           : step_limit(c, now, n, in, P, B, &why);
	if (k >= 1 - 1e-12) {
		for (unsigned i = 0; i < n; i++) {
			out[i].share = bbp[i];
			out[i].limits &= ~(unsigned)STEER_LIM_RETURN;
		}
		return operator ? STEER_KEEP : STEER_REVERT;
	}
	return step_move(c, now, n, in, out, P, B, prev_bp, k, why, 0) ? STEER_CHANGE
	       : STEER_KEEP;
}

steer_verdict_t steer_step(const steer_conf_t *c, const steer_policy_t *p,
                           uint32_t now, unsigned n, const steer_in_t *in,
                           steer_out_t *out)
{
	if (n > STEER_MAX_NODES)
		n = STEER_MAX_NODES;
	double sumraw, base_sum;
	unsigned known = step_scores(c, p, n, in, out, &sumraw, &base_sum);
	double P[STEER_MAX_NODES], T[STEER_MAX_NODES];
	uint32_t prev_bp[STEER_MAX_NODES];
	int operator = step_previous(n, in, base_sum, P, prev_bp);
	if (!known)
		return step_return(c, now, n, in, out, base_sum, operator, P, prev_bp);
	for (unsigned i = 0; i < n; i++) {
		step_smooth(c, &in[i], &out[i], sumraw / known);
		step_sla(c, &in[i], &out[i]);
	}
	int cand[STEER_MAX_NODES];
	int forced = step_candidates(n, in, out, P, cand);
	targets(c, n, in, out, cand, T);
	uint32_t tbp[STEER_MAX_NODES];
	steer_round_shares(T, n, tbp);
	for (unsigned i = 0; i < n; i++)
		out[i].target = tbp[i];
	unsigned why = 0;
	double M[STEER_MAX_NODES];
	if (forced)
		memcpy(M, T, sizeof(double) * n);
	else
		step_hold(c, n, in, out, cand, P, T, M);
	double k = forced ? 1 : step_limit(c, now, n, in, P, M, &why);
	return step_move(c, now, n, in, out, P, M, prev_bp, k, why, forced) ?
	       STEER_CHANGE : STEER_KEEP;
}
