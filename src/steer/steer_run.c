/* SPDX-License-Identifier: MIT */
/* The steering engine against the store (steer_run.h): gathers each
 * row's inputs, runs steer_step() and writes the shares, the state and
 * the audited decision in one transaction (S3-3, S3-7). */
#include "steer/steer_run.h"
#include "steer/nearest_run.h"
#include "steer/capacity_run.h"
#include "steer/decide.h"
#include "common/log.h"
#include "common/util.h"
#include "store/keys.h"
#include "store/plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Decision codec --------------------------------------------------- */

static json_t *conf_json(const steer_conf_t *c)
{
	return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:i, s:i, s:f, s:f, s:f, "
	                 "s:f, s:f}",
		"interval", c->interval, "tau", c->tau, "min_step", c->min_step,
		"sharpness", c->sharpness, "window", c->change_window,
		"max_step", c->max_step, "max_hour", c->max_hour, "floor", c->floor,
		"sla", c->sla, "sla_after", (int)c->sla_after,
		"restore_after", (int)c->restore_after, "success_good", c->success_good,
		"success_bad", c->success_bad, "latency_good", c->latency_good,
		"latency_bad", c->latency_bad, "budget_boost", c->budget_boost);
}

static double dnum(json_t *o, const char *k)
{
	return json_number_value(json_object_get(o, k));
}

static json_t *in_json(const steer_in_t *in)
{
	json_t *j = steer_decision_in(in->id, in->base, in->prev);
	json_t *more = json_pack("{s:i, s:i, s:i, s:I, s:I}",
		"lo", (int)in->sla_low, "gd", (int)in->sla_good, "out", in->sla_out,
		"hs", (json_int_t)in->hour_start, "hm", (json_int_t)in->hour_moved);
	json_object_update(j, more);
	if (in->dir)
		json_object_set_new(j, "dir", json_integer(in->dir));
	json_decref(more);
	if (in->has_success) {
		json_object_set_new(j, "s", json_real(in->success));
		json_object_set_new(j, "s1", json_real(in->success_now));
	}
	if (in->has_latency)
		json_object_set_new(j, "l", json_real(in->latency));
	if (in->has_cost)
		json_object_set_new(j, "c", json_real(in->cost));
	if (in->over_budget)
		json_object_set_new(j, "ob", json_true());
	if (in->has_ema)
		json_object_set_new(j, "ema", json_real(in->ema));
	if (in->has_ceiling)
		json_object_set_new(j, "cap", json_integer(in->ceiling));
	return j;
}

int steer_decision_read(json_t *d, steer_conf_t *c, steer_policy_t *p,
                        uint32_t *now, unsigned *n, steer_in_t *in)
{
	json_t *cj = json_object_get(d, "conf"), *pj = json_object_get(d, "policy");
	json_t *ins = json_object_get(d, "in");
	if (!json_is_object(cj) || json_array_size(pj) != 3 || !json_is_array(ins) ||
	    json_array_size(ins) > STEER_MAX_NODES)
		return -1;
	steer_conf_default(c);
	c->interval = dnum(cj, "interval");
	c->tau = dnum(cj, "tau");
	c->min_step = dnum(cj, "min_step");
	c->max_step = dnum(cj, "max_step");
	c->max_hour = dnum(cj, "max_hour");
	c->floor = dnum(cj, "floor");
	c->sla = dnum(cj, "sla");
	c->sla_after = (unsigned)json_integer_value(json_object_get(cj, "sla_after"));
	c->restore_after = (unsigned)json_integer_value(json_object_get(cj, "restore_after"));
	c->success_good = dnum(cj, "success_good");
	c->success_bad = dnum(cj, "success_bad");
	c->latency_good = dnum(cj, "latency_good");
	c->latency_bad = dnum(cj, "latency_bad");
	c->budget_boost = dnum(cj, "budget_boost");
	/* Decisions recorded before sharpness and the change window were
	 * settings: the square, and a window of an hour. */
	c->sharpness = json_is_number(json_object_get(cj, "sharpness")) ?
	               dnum(cj, "sharpness") : 2;
	c->change_window = json_is_number(json_object_get(cj, "window")) ?
	                   dnum(cj, "window") : c->interval > 0 ? 3600 / c->interval : 60;
	p->success = json_number_value(json_array_get(pj, 0));
	p->latency = json_number_value(json_array_get(pj, 1));
	p->cost = json_number_value(json_array_get(pj, 2));
	*now = (uint32_t)json_integer_value(json_object_get(d, "at"));
	size_t i;
	json_t *e;
	*n = 0;
	json_array_foreach(ins, i, e) {
		steer_in_t *x = &in[i];
		memset(x, 0, sizeof(*x));
		if (steer_decision_node(e, x->id, sizeof(x->id), &x->base, &x->prev))
			return -1;
		x->sla_low = (unsigned)json_integer_value(json_object_get(e, "lo"));
		x->sla_good = (unsigned)json_integer_value(json_object_get(e, "gd"));
		x->sla_out = (int)json_integer_value(json_object_get(e, "out"));
		x->hour_start = (uint32_t)json_integer_value(json_object_get(e, "hs"));
		x->hour_moved = (uint32_t)json_integer_value(json_object_get(e, "hm"));
		x->dir = (int)json_integer_value(json_object_get(e, "dir"));
		if ((x->has_success = json_is_number(json_object_get(e, "s")))) {
			x->success = dnum(e, "s");
			x->success_now = dnum(e, "s1");
		}
		if ((x->has_latency = json_is_number(json_object_get(e, "l"))))
			x->latency = dnum(e, "l");
		if ((x->has_cost = json_is_number(json_object_get(e, "c"))))
			x->cost = dnum(e, "c");
		x->over_budget = json_is_true(json_object_get(e, "ob"));
		if ((x->has_ema = json_is_number(json_object_get(e, "ema"))))
			x->ema = dnum(e, "ema");
		if ((x->has_ceiling = json_is_integer(json_object_get(e, "cap"))))
			x->ceiling = (uint32_t)json_integer_value(json_object_get(e, "cap"));
		(*n)++;
	}
	return 0;
}

/* The engine ------------------------------------------------------- */

typedef struct {
	wdb_txn_t *t;
	const steer_conf_t *c;
	uint32_t now;
	json_t *services;     /* name -> service object */
	json_t *nodes;        /* id -> node object (cache) */
	json_t *budget_state; /* provider -> 0, 1, 2 (cache) */
	json_t *sla;          /* node id -> [row keys] out for the SLA */
	char what[4096];
	size_t wl;
	int changed;
	int hard_only;        /* nearest rows only, after a hard failure */
	int puts;             /* records written through put() */
	int rc;
	/* Cluster mode: what the run writes, for the elected instance to
	 * publish, {"weight": {key: row or null}, "steer": {key: state or
	 * null}}; NULL in standalone mode, where the run commits it. */
	json_t *pub;
	/* Cluster mode: the live vantages' views, the latency of nearest
	 * rows without pushed latency (S4-6); NULL in standalone mode. */
	nearest_vantage_fn vantages;
	void *varg;
} run_t;

/* Writes (@kind, @key, @val) in the run's transaction, which the
 * evaluation of the next rows reads, and notes it for publication in
 * cluster mode. */
static int put(run_t *r, wdb_kind_t kind, const char *key, json_t *val)
{
	int rc = wdb_set(r->t, kind, key, val);
	r->puts += !rc;
	if (!rc && r->pub) {
		const char *k = kind == WDB_WEIGHT ? "weight" : "steer";
		json_t *o = json_object_get(r->pub, k);
		if (!o)
			json_object_set_new(r->pub, k, o = json_object());
		json_object_set(o, key, val ? val : json_null());
	}
	return rc;
}

/* After a writer that does not go through put() (nearest_run_row()):
 * records @key of @kind for the publish when it differs from @before. */
static void republish(run_t *r, wdb_kind_t kind, const char *key, json_t *before)
{
	json_t *now = wdb_get(r->t, kind, key);
	if (!(now == before || (now && before && json_equal(now, before)))) {
		const char *k = kind == WDB_WEIGHT ? "weight" : "steer";
		json_t *o = json_object_get(r->pub, k);
		if (!o)
			json_object_set_new(r->pub, k, o = json_object());
		json_object_set(o, key, now ? now : json_null());
	}
	json_decref(now);
}

static int collect_obj(const char *key, json_t *val, void *arg)
{
	json_object_set(arg, key, val);
	return 0;
}

static json_t *node_get(run_t *r, const char *id)
{
	json_t *n = json_object_get(r->nodes, id);
	if (!n && (n = wdb_get(r->t, WDB_NODE, id)))
		json_object_set_new(r->nodes, id, n);
	return n;
}

/* The budget state of @provider now (steer_budget_state()). */
static int budget_of(run_t *r, const char *provider)
{
	json_t *s = json_object_get(r->budget_state, provider);
	if (s)
		return (int)json_integer_value(s);
	int st = steer_budget_read(r->t, provider, r->now, NULL, NULL);
	json_object_set_new(r->budget_state, provider, json_integer(st));
	return st;
}

/* S1-6: the capacity of node @id (@node; 0: none) and its load, the
 * pushed bandwidth metric in percent of that capacity (NaN: none, older
 * than steer.stale, or not newer than @since, when the shares in force
 * were applied: a load measured before is the load of other shares). */
static void node_load(run_t *r, const char *id, json_t *node, uint32_t since,
                      double *cap, double *util)
{
	*cap = (double)json_integer_value(json_object_get(node, "capacity"));
	*util = NAN;
	if (*cap <= 0)
		return;
	json_t *m = wdb_get(r->t, WDB_METRICS, id);
	json_t *bw = json_object_get(m, "bandwidth");
	uint32_t at = (uint32_t)json_integer_value(json_object_get(bw, "time"));
	if (json_is_number(json_object_get(bw, "value")) && at > since &&
	    (at >= r->now || r->now - at <= r->c->stale))
		*util = dnum(bw, "value");
	json_decref(m);
}

int steer__row_input(wdb_txn_t *t, const steer_conf_t *c, uint32_t now,
                     const char *id, const char *region, const char *isp,
                     int which, double *out, double *now_out, int *level)
{
	double keep = steer_conf_keep(c);
	uint32_t from = (double)now > keep ? now - (uint32_t)keep : 0;
	for (unsigned k = 0; k < 4; k++) {
		char key[300];
		if (!steer_input_key(k, id, region, isp, key, sizeof(key)))
			continue;
		json_t *rec = wdb_get(t, WDB_STEERIN, key);
		if (!rec)
			continue;
		steer_sample_t s[STEER_MAX_SAMPLES];
		unsigned n = steer_samples_read(rec, from, now, c->skew, s);
		json_decref(rec);
		if (steer_aggregate(c, s, n, now, which, out, now_out)) {
			if (level)
				*level = (int)k + 1;
			return 1;
		}
	}
	return 0;
}

/* The fresh inputs of node @in->id for the row (@region, @isp). */
static void gather(run_t *r, const char *region, const char *isp, steer_in_t *in)
{
	in->has_success = steer__row_input(r->t, r->c, r->now, in->id, region, isp, 0,
	                                   &in->success, &in->success_now, NULL);
	in->has_latency = steer__row_input(r->t, r->c, r->now, in->id, region, isp, 1,
	                                   &in->latency, NULL, NULL);
}

/* Appends to the run's audit note. */
#define note(r, ...) steer_note((r)->what, sizeof((r)->what), &(r)->wl, __VA_ARGS__)

static json_t *state_json(const steer_in_t *in, const steer_out_t *o, unsigned n,
                          steer_verdict_t v, uint32_t now)
{
	static const char *const verdicts[] = { "keep", "change", "revert" };
	json_t *nodes = json_object();
	for (unsigned i = 0; i < n; i++) {
		json_t *j = json_pack("{s:f, s:f, s:i, s:i, s:i, s:I, s:I, s:I, s:I, s:i}",
			"raw", o[i].raw, "ema", o[i].ema, "lo", (int)o[i].sla_low,
			"gd", (int)o[i].sla_good, "out", o[i].sla_out,
			"target", (json_int_t)o[i].target, "share", (json_int_t)o[i].share,
			"hs", (json_int_t)o[i].hour_start, "hm", (json_int_t)o[i].hour_moved,
			"limits", (int)o[i].limits);
		if (o[i].dir)
			json_object_set_new(j, "dir", json_integer(o[i].dir));
		if (!o[i].has_ema)
			json_object_del(j, "ema");
		if (in[i].has_success) {
			json_object_set_new(j, "success", json_real(in[i].success));
			json_object_set_new(j, "success_now", json_real(in[i].success_now));
		}
		if (in[i].has_latency)
			json_object_set_new(j, "latency", json_real(in[i].latency));
		if (in[i].has_cost)
			json_object_set_new(j, "cost", json_real(in[i].cost));
		if (in[i].has_ceiling)
			json_object_set_new(j, "ceiling", json_integer(in[i].ceiling));
		if (o[i].ns >= 0)
			json_object_set_new(j, "ns", json_real(o[i].ns));
		if (o[i].nl >= 0)
			json_object_set_new(j, "nl", json_real(o[i].nl));
		if (o[i].nc >= 0)
			json_object_set_new(j, "nc", json_real(o[i].nc));
		json_object_set_new(nodes, in[i].id, j);
	}
	return json_pack("{s:I, s:s, s:o}", "at", (json_int_t)now, "verdict",
	                 verdicts[v], "nodes", nodes);
}

/* The engine's inputs of row @w's nodes into @in, with their
 * capacities and loads since @applied_at (@cap, @util).  Returns their
 * number. */
static unsigned eval_inputs(run_t *r, const steer_walk_t *w, uint32_t applied_at,
                            steer_in_t *in, double *cap, double *util)
{
	static steer_walk_node_t wn[STEER_MAX_NODES];
	unsigned n = steer_walk_nodes(w, wn);
	for (unsigned i = 0; i < n; i++) {
		steer_in_t *x = &in[i];
		json_t *sn = wn[i].sn;
		memset(x, 0, sizeof(*x));
		snprintf(x->id, sizeof(x->id), "%s", wn[i].id);
		x->base = wn[i].base;
		x->prev = wn[i].applied;
		x->has_ema = wn[i].has_ema;
		x->ema = wn[i].ema;
		x->sla_low = (unsigned)json_integer_value(json_object_get(sn, "lo"));
		x->sla_good = (unsigned)json_integer_value(json_object_get(sn, "gd"));
		x->sla_out = (int)json_integer_value(json_object_get(sn, "out"));
		x->hour_start = (uint32_t)json_integer_value(json_object_get(sn, "hs"));
		x->hour_moved = (uint32_t)json_integer_value(json_object_get(sn, "hm"));
		x->dir = (int)json_integer_value(json_object_get(sn, "dir"));
		json_t *node = node_get(r, x->id);
		json_t *cost = json_object_get(node, "cost_per_gb");
		if ((x->has_cost = json_is_number(cost)))
			x->cost = json_number_value(cost);
		const char *prov = json_string_value(json_object_get(node, "provider"));
		if (prov)
			x->over_budget = budget_of(r, prov) > 0;
		gather(r, w->region, w->isp, x);
		node_load(r, x->id, node, applied_at, &cap[i], &util[i]);
	}
	return n;
}

/* S1-6: the row's demand, measured again once loads newer than the
 * shares in force arrive; until then the last estimate in @state holds
 * (a load that lags its share would make the ceiling swing).  When it
 * was measured in *@at. */
static double eval_demand(run_t *r, const steer_conf_t *c, unsigned n,
                          const double *cap, const double *util,
                          const steer_in_t *in, json_t *state, uint32_t *at)
{
	double demand = steer_demand(n, cap, util, in);
	*at = r->now;
	if (demand <= 0 && json_is_number(json_object_get(state, "demand"))) {
		*at = (uint32_t)json_integer_value(json_object_get(state, "demand_at"));
		if (r->now - *at <= c->stale)
			demand = dnum(state, "demand");
	}
	return demand;
}

/* S3-5: the nodes of row @key out for the SLA, whose standby the health
 * thread raises; a shadow service acts on nothing. */
static void eval_sla(run_t *r, const char *key, json_t *svc, unsigned n,
                     const steer_in_t *in, const steer_out_t *out)
{
	int shadow = strcmp(json_string_value(json_object_get(svc, "steering")), "shadow") == 0;
	for (unsigned i = 0; i < n && !shadow; i++) {
		if (!(out[i].limits & STEER_LIM_SLA))
			continue;
		json_t *rows = json_object_get(r->sla, in[i].id);
		if (!rows)
			json_object_set_new(r->sla, in[i].id, rows = json_array());
		json_array_append_new(rows, json_string(key));
	}
}

/* The audit note of a change of row @key's shares: each node that
 * moved, and why. */
static void eval_note(run_t *r, unsigned n, const steer_in_t *in,
                      const steer_out_t *out)
{
	int first = 1;
	for (unsigned i = 0; i < n; i++) {
		int32_t was = in[i].prev;
		if (was >= 0 && (uint32_t)was == out[i].share)
			continue;
		char lim[120];
		note(r, "%s%s ", first ? "" : ", ", in[i].id);
		if (was >= 0)
			note(r, "%.2f%%", was / 100.0);
		else
			note(r, "operator");
		note(r, " -> %.2f%% (score %.3f, smoothed %.3f", out[i].share / 100.0,
		     out[i].raw, out[i].ema);
		if (in[i].has_success)
			note(r, ", success %.2f", in[i].success);
		if (in[i].has_latency)
			note(r, ", latency %.0f ms", in[i].latency);
		if (out[i].limits)
			note(r, ", %s", steer_limits_text(out[i].limits, lim, sizeof(lim)));
		note(r, ")");
		first = 0;
	}
}

/* Writes verdict @v (not a keep) of row @key (@row) into the row: the
 * operator's weights back, or the new shares with their decision. */
static int eval_write(run_t *r, const char *key, json_t *row, const steer_conf_t *c,
                      const steer_policy_t *p, unsigned n, const steer_in_t *in,
                      const steer_out_t *out, steer_verdict_t v)
{
	json_t *nrow = json_deep_copy(row);
	note(r, "%ssteer %s: ", r->changed ? "; " : "", key);
	if (v == STEER_REVERT) {
		json_object_del(nrow, "steer");
		note(r, "no fresh input, back to the operator's weights");
	} else {
		json_t *sw = json_object(), *outj = json_object(), *ins = json_array();
		for (unsigned i = 0; i < n; i++) {
			json_object_set_new(sw, in[i].id, json_integer(out[i].share));
			json_object_set_new(outj, in[i].id, json_integer(out[i].share));
			json_array_append_new(ins, in_json(&in[i]));
		}
		json_t *d = json_pack("{s:I, s:o, s:[f, f, f], s:o, s:o}",
			"at", (json_int_t)r->now, "conf", conf_json(c), "policy",
			p->success, p->latency, p->cost, "in", ins, "out", outj);
		json_object_set_new(nrow, "steer", json_pack("{s:o, s:I, s:s, s:o}",
			"weights", sw, "at", (json_int_t)r->now, "verdict", "change",
			"decision", d));
		eval_note(r, n, in, out);
	}
	int rc = put(r, WDB_WEIGHT, key, nrow);
	json_decref(nrow);
	r->changed++;
	return rc;
}

/* Evaluates weight row @key (@row) of service @svc. */
static int eval_row(run_t *r, const char *key, json_t *row, json_t *svc)
{
	steer_walk_t w;
	if (steer_walk_begin(r->t, key, row, &w))
		return 0;
	steer_conf_t c = *r->c;
	json_t *sla = json_object_get(svc, "sla");
	if (json_is_number(sla))
		c.sla = json_number_value(sla);
	steer_policy_t p;
	steer_service_policy(svc, &p);
	static steer_in_t in[STEER_MAX_NODES];
	static steer_out_t out[STEER_MAX_NODES];
	double cap[STEER_MAX_NODES], util[STEER_MAX_NODES];
	/* When the weights in force were applied: the engine's shares, or
	 * its hand-back to the operator's weights. */
	uint32_t reverted_at = (uint32_t)json_integer_value(json_object_get(w.state,
	                                                    "reverted_at"));
	uint32_t applied_at = w.steered ? (uint32_t)json_integer_value(json_object_get(
		json_object_get(row, "steer"), "at")) : reverted_at;
	unsigned n = eval_inputs(r, &w, applied_at, in, cap, util);
	uint32_t demand_at;
	double demand = eval_demand(r, &c, n, cap, util, in, w.state, &demand_at);
	steer_walk_end(&w);
	steer_ceilings(c.headroom, n, cap, demand, in);
	steer_verdict_t v = steer_step(&c, &p, r->now, n, in, out);
	eval_sla(r, key, svc, n, in, out);
	json_t *state = state_json(in, out, n, v, r->now);
	if (demand > 0) {
		json_object_set_new(state, "demand", json_real(demand));
		json_object_set_new(state, "demand_at", json_integer(demand_at));
	}
	if (v == STEER_REVERT || reverted_at)
		json_object_set_new(state, "reverted_at",
		                    json_integer(v == STEER_REVERT ? r->now : reverted_at));
	int rc = put(r, WDB_STEER, key, state);
	json_decref(state);
	if (rc || v == STEER_KEEP)
		return rc;
	return eval_write(r, key, row, &c, &p, n, in, out, v);
}

static int row_cb(const char *key, json_t *row, void *arg)
{
	run_t *r = arg;
	wdb_row_parts_t parts;
	wdb_row_split(key, strlen(key), &parts);
	char svc[300];
	snprintf(svc, sizeof(svc), "%.*s", (int)parts.svc_len, parts.svc);
	json_t *s = json_object_get(r->services, svc);
	if (nearest_service_on(s)) {
		/* In cluster mode what nearest_run_row() wrote goes to the
		 * elected instance's publish like the engine's rows. */
		json_t *w0 = r->pub ? wdb_get(r->t, WDB_WEIGHT, key) : NULL;
		json_t *s0 = r->pub ? wdb_get(r->t, WDB_STEER, key) : NULL;
		int rc = nearest_run_row(r->t, r->c, r->now, key, row, s, r->hard_only,
		                         r->vantages, r->varg, r->what, sizeof(r->what), &r->wl);
		r->changed += rc > 0;
		r->rc = rc < 0 ? rc : 0;
		if (r->pub && !r->rc) {
			republish(r, WDB_WEIGHT, key, w0);
			republish(r, WDB_STEER, key, s0);
		}
		json_decref(w0);
		json_decref(s0);
		return r->rc != 0;
	}
	if (r->hard_only)
		return 0;
	/* S3-8: a row pinned by the rollback of one of the engine's changes
	 * keeps its shares until the operator unpins it. */
	if (steer_service_on(s) && json_object_get(row, "pin"))
		return 0;
	if (steer_service_on(s)) {
		r->rc = eval_row(r, key, row, s);
		return r->rc != 0;
	}
	/* S1-6, S4-3: a static row's demand, which holds its nodes within
	 * their capacities (capacity_run.h). */
	json_t *crow = s ? capacity_run_row(r->t, r->c, r->now, key, row, s, r->what,
	                                    sizeof(r->what), &r->wl) : NULL;
	if (crow) {
		r->rc = put(r, WDB_WEIGHT, key, crow);
		json_decref(crow);
		r->changed++;
		if (r->rc)
			return 1;
	}
	/* Steering turned off: the engine's shares and state go. */
	if (json_object_get(row, "steer")) {
		json_t *nrow = json_deep_copy(row);
		json_object_del(nrow, "steer");
		note(r, "%ssteer %s: steering off, the operator's weights", r->changed ? "; " : "",
		     key);
		r->rc = put(r, WDB_WEIGHT, key, nrow);
		json_decref(nrow);
		r->changed++;
	}
	json_t *state = wdb_get(r->t, WDB_STEER, key);
	if (state && !r->rc)
		r->rc = put(r, WDB_STEER, key, NULL);
	json_decref(state);
	return r->rc != 0;
}

static int node_has_capacity(const char *key, json_t *val, void *arg)
{
	if (json_integer_value(json_object_get(val, "capacity")) <= 0)
		return 0;
	*(int *)arg = 1;
	return 1;
}

static int any_dynamic(json_t *services)
{
	const char *k;
	json_t *s;
	json_object_foreach(services, k, s)
		if (steer_service_on(s) || nearest_service_on(s))
			return 1;
	return 0;
}

static int row_has_capacity(const char *key, json_t *val, void *arg)
{
	if (!json_object_get(val, "capacity"))
		return 0;
	*(int *)arg = 1;
	return 1;
}

/* Whether a node has a capacity, so that static rows may be held within
 * it, or a row still has a capacity record to drop (capacity_run.h). */
static int any_capacity(wdb_txn_t *t)
{
	int found = 0;
	wdb_each(t, WDB_NODE, NULL, node_has_capacity, &found);
	if (!found)
		wdb_each(t, WDB_WEIGHT, NULL, row_has_capacity, &found);
	return found;
}

static int has_steer_state(const char *key, json_t *val, void *arg)
{
	*(int *)arg = 1;
	return 1;
}

static int run(weightdb_t *db, const steer_conf_t *c, uint32_t now, int hard_only,
               steer_publish_fn publish, nearest_vantage_fn vantages, void *arg,
               json_t *sla_out, char *err, size_t errlen)
{
	run_t r;
	memset(&r, 0, sizeof(r));
	r.vantages = vantages;
	r.varg = arg;
	r.hard_only = hard_only;
	r.c = c;
	r.now = now;
	r.t = wdb_begin(db, "gslbd:steer", err, errlen);
	if (!r.t)
		return GSLB_EIO;
	r.services = json_object();
	wdb_each(r.t, WDB_SERVICE, NULL, collect_obj, r.services);
	int state = 0;
	if (!any_dynamic(r.services) && !hard_only)
		wdb_each(r.t, WDB_STEER, NULL, has_steer_state, &state);
	int dynamic = any_dynamic(r.services);
	if (!dynamic && !state && (hard_only || !any_capacity(r.t))) {
		/* Nothing steers and nothing is left to clean: no write. */
		json_decref(r.services);
		wdb_abort(r.t);
		return 0;
	}
	r.nodes = json_object();
	r.budget_state = json_object();
	r.pub = publish ? json_object() : NULL;
	r.sla = json_object();
	wdb_each(r.t, WDB_WEIGHT, NULL, row_cb, &r);
	json_decref(r.services);
	json_decref(r.nodes);
	json_decref(r.budget_state);
	if (r.rc) {
		snprintf(err, errlen, "steer: %s", wdb_strerror(r.rc));
		json_decref(r.pub);
		wdb_abort(r.t);
		json_decref(r.sla);
		return r.rc;
	}
	if ((hard_only && !r.wl) || (!dynamic && !r.puts && !r.wl)) {
		/* Nothing failed with a share, or nothing was written (static
		 * rows whose capacity records hold): no write. */
		wdb_abort(r.t);
		json_decref(r.pub);
		json_decref(r.sla);
		return 0;
	}
	if (publish) {
		/* Cluster mode: nothing into the store here; every instance,
		 * this one included, gets the shares and the state from etcd. */
		wdb_abort(r.t);
		int rc = 0;
		if (json_object_size(r.pub))
			rc = publish(arg, r.pub, r.changed ? r.what : "steer: state", err,
			             errlen);
		json_decref(r.pub);
		if (rc) {
			json_decref(r.sla);
			return rc;
		}
		if (sla_out)
			json_object_update(sla_out, r.sla);
		json_decref(r.sla);
		if (r.wl)
			log_info("%s", r.what);
		return r.changed;
	}
	int64_t id = wdb_commit(r.t, r.what, err, errlen);
	if (id < 0) {
		json_decref(r.sla);
		return (int)id;
	}
	if (sla_out)
		json_object_update(sla_out, r.sla);
	json_decref(r.sla);
	if (r.wl)
		log_info("%s", r.what);
	return r.changed;
}

int steer_run(weightdb_t *db, const steer_conf_t *c, uint32_t now,
              steer_publish_fn publish, nearest_vantage_fn vantages, void *arg,
              json_t *sla_out, char *err, size_t errlen)
{
	return run(db, c, now, 0, publish, vantages, arg, sla_out, err, errlen);
}

int steer_run_hard(weightdb_t *db, const steer_conf_t *c, uint32_t now,
                   steer_publish_fn publish, nearest_vantage_fn vantages, void *arg,
                   char *err, size_t errlen)
{
	return run(db, c, now, 1, publish, vantages, arg, NULL, err, errlen);
}
