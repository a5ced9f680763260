/* SPDX-License-Identifier: MIT */
/* The steering engine against the store (steer_run.h): gathers each
 * row's inputs, runs steer_step() and writes the shares, the state and
 * the audited decision in one transaction (S3-3, S3-7). */
#include "health/steer_run.h"
#include "health/nearest_run.h"
#include "common/log.h"
#include "common/util.h"
#include "store/keys.h"
#include "store/plan.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int steer_service_on(json_t *svc)
{
	const char *st = json_string_value(json_object_get(svc, "steering"));
	return st && (strcmp(st, "dynamic") == 0 || strcmp(st, "shadow") == 0);
}

void steer_service_policy(json_t *svc, steer_policy_t *p)
{
	const char *name = json_string_value(json_object_get(svc, "policy"));
	if (!name || steer_policy_named(name, p))
		steer_policy_named("custom", p);
	json_t *w = json_object_get(svc, "steer_weights");
	if (json_is_object(w)) {
		p->success = json_number_value(json_object_get(w, "success"));
		p->latency = json_number_value(json_object_get(w, "latency"));
		p->cost = json_number_value(json_object_get(w, "cost"));
	}
}

const char *steer_limits_text(unsigned lim, char *buf, size_t size)
{
	static const char *const names[] = { "floor", "max-step",
		"max-change-per-hour", "below min-step", "SLA", "over budget",
		"no fresh input", "all below SLA" };
	size_t l = 0;
	buf[0] = 0;
	for (unsigned i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (lim & (1u << i) && l < size)
			l += (size_t)snprintf(buf + l, size - l, "%s%s", l ? ", " : "", names[i]);
	if (!l)
		snprintf(buf, size, "-");
	return buf;
}

const char *steer_spend_key(char *buf, size_t size, const char *name,
                            uint32_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;
	gmtime_r(&tt, &tm);
	snprintf(buf, size, "p|%s|%04d-%02d", name, tm.tm_year + 1900, tm.tm_mon + 1);
	return buf;
}

double steer_spend_of(json_t *rec)
{
	json_t *p = json_object_get(rec, "pushed");
	return json_is_number(p) ? json_number_value(p)
	                         : json_number_value(json_object_get(rec, "derived"));
}

static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

void steer_sample_add(json_t *rec, uint32_t t, double success, double latency,
                      double keep)
{
	json_t *s = json_object_get(rec, "samples");
	if (!json_is_array(s)) {
		s = json_array();
		json_object_set_new(rec, "samples", s);
	}
	/* In time order, whatever order the pushes came in (--at). */
	size_t at = json_array_size(s);
	while (at > 0 && json_integer_value(json_array_get(json_array_get(s, at - 1), 0)) >
	                 (json_int_t)t)
		at--;
	json_array_insert_new(s, at, json_pack("[I, o, o]", (json_int_t)t,
	                                       num_or_null(success), num_or_null(latency)));
	uint32_t newest = (uint32_t)json_integer_value(
		json_array_get(json_array_get(s, json_array_size(s) - 1), 0));
	/* Oldest first: drop what fell out of the longest window, and the
	 * oldest beyond STEER_MAX_SAMPLES. */
	while (json_array_size(s) > STEER_MAX_SAMPLES ||
	       (json_array_size(s) > 1 &&
	        (double)json_integer_value(json_array_get(json_array_get(s, 0), 0)) <
	        (double)newest - keep))
		json_array_remove(s, 0);
}

/* Samples of inputs record @rec into @s; returns how many. */
static unsigned read_samples(json_t *rec, steer_sample_t *s)
{
	json_t *a = json_object_get(rec, "samples"), *e;
	size_t i;
	unsigned n = 0;
	json_array_foreach(a, i, e) {
		if (n == STEER_MAX_SAMPLES)
			break;
		json_t *x = json_array_get(e, 1), *y = json_array_get(e, 2);
		s[n].time = (uint32_t)json_integer_value(json_array_get(e, 0));
		s[n].success = json_is_number(x) ? json_number_value(x) : NAN;
		s[n].latency = json_is_number(y) ? json_number_value(y) : NAN;
		n++;
	}
	return n;
}

/* Decision codec --------------------------------------------------- */

static json_t *conf_json(const steer_conf_t *c)
{
	return json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:i, s:i, s:f, s:f, s:f, s:f, s:f}",
		"interval", c->interval, "tau", c->tau, "min_step", c->min_step,
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
	json_t *j = json_pack("{s:s, s:I, s:I, s:i, s:i, s:i, s:I, s:I}",
		"id", in->id, "base", (json_int_t)in->base, "prev", (json_int_t)in->prev,
		"lo", (int)in->sla_low, "gd", (int)in->sla_good, "out", in->sla_out,
		"hs", (json_int_t)in->hour_start, "hm", (json_int_t)in->hour_moved);
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
		const char *id = json_string_value(json_object_get(e, "id"));
		if (!id)
			return -1;
		snprintf(x->id, sizeof(x->id), "%s", id);
		x->base = (uint32_t)json_integer_value(json_object_get(e, "base"));
		x->prev = (int32_t)json_integer_value(json_object_get(e, "prev"));
		x->sla_low = (unsigned)json_integer_value(json_object_get(e, "lo"));
		x->sla_good = (unsigned)json_integer_value(json_object_get(e, "gd"));
		x->sla_out = (int)json_integer_value(json_object_get(e, "out"));
		x->hour_start = (uint32_t)json_integer_value(json_object_get(e, "hs"));
		x->hour_moved = (uint32_t)json_integer_value(json_object_get(e, "hm"));
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
	char what[4096];
	size_t wl;
	int changed;
	int hard_only;        /* nearest rows only, after a hard failure */
	int rc;
} run_t;

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
	int st = 0;
	json_t *b = wdb_get(r->t, WDB_BUDGET, provider);
	if (b) {
		char key[200];
		json_t *spend = wdb_get(r->t, WDB_STEERIN,
		                        steer_spend_key(key, sizeof(key), provider, r->now));
		st = steer_budget_state(dnum(b, "limit"), dnum(b, "alert"),
		                        steer_spend_of(spend), r->now);
		json_decref(spend);
		json_decref(b);
	}
	json_object_set_new(r->budget_state, provider, json_integer(st));
	return st;
}

int steer__row_input(wdb_txn_t *t, const steer_conf_t *c, uint32_t now,
                     const char *id, const char *region, const char *isp,
                     int which, double *out, double *now_out)
{
	const char *keys[4][2] = { { region, isp }, { region, "*" }, { "*", isp },
	                           { "*", "*" } };
	for (int k = 0; k < 4; k++) {
		int dup = 0;
		for (int j = 0; j < k; j++)
			dup |= strcmp(keys[j][0], keys[k][0]) == 0 &&
			       strcmp(keys[j][1], keys[k][1]) == 0;
		if (dup)
			continue;
		char key[300];
		snprintf(key, sizeof(key), "n|%.64s|%.64s|%.64s", id, keys[k][0],
		         keys[k][1]);
		json_t *rec = wdb_get(t, WDB_STEERIN, key);
		if (!rec)
			continue;
		steer_sample_t s[STEER_MAX_SAMPLES];
		unsigned n = read_samples(rec, s);
		json_decref(rec);
		if (steer_aggregate(c, s, n, now, which, out, now_out))
			return 1;
	}
	return 0;
}

/* The fresh inputs of node @in->id for the row (@region, @isp). */
static void gather(run_t *r, const char *region, const char *isp, steer_in_t *in)
{
	in->has_success = steer__row_input(r->t, r->c, r->now, in->id, region, isp, 0,
	                                   &in->success, &in->success_now);
	in->has_latency = steer__row_input(r->t, r->c, r->now, in->id, region, isp, 1,
	                                   &in->latency, NULL);
}

static void note(run_t *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(run_t *r, const char *fmt, ...)
{
	if (r->wl >= sizeof(r->what) - 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(r->what + r->wl, sizeof(r->what) - r->wl, fmt, ap);
	va_end(ap);
	if (k > 0)
		r->wl += (size_t)k;
	if (r->wl >= sizeof(r->what))
		r->wl = sizeof(r->what) - 1;
}

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

/* Evaluates weight row @key (@row) of service @svc. */
static int eval_row(run_t *r, const char *key, json_t *row, json_t *svc)
{
	wdb_row_parts_t parts;
	if (wdb_row_split(key, strlen(key), &parts))
		return 0;
	char region[WDB_NAME_MAX + 1], isp[WDB_NAME_MAX + 1];
	snprintf(region, sizeof(region), "%.*s", (int)parts.region_len, parts.region);
	snprintf(isp, sizeof(isp), "%.*s", (int)parts.isp_len, parts.isp);
	json_t *weights = json_object_get(row, "weights");
	json_t *applied = plan_row_weights(row, 1);
	int steered = applied != weights;
	json_t *state = wdb_get(r->t, WDB_STEER, key);
	json_t *snodes = json_object_get(state, "nodes");
	steer_conf_t c = *r->c;
	json_t *sla = json_object_get(svc, "sla");
	if (json_is_number(sla))
		c.sla = json_number_value(sla);
	steer_policy_t p;
	steer_service_policy(svc, &p);

	static steer_in_t in[STEER_MAX_NODES];
	static steer_out_t out[STEER_MAX_NODES];
	unsigned n = 0;
	const char *id;
	json_t *w;
	json_object_foreach(weights, id, w) {
		if (n == STEER_MAX_NODES)
			break;
		steer_in_t *x = &in[n++];
		memset(x, 0, sizeof(*x));
		snprintf(x->id, sizeof(x->id), "%s", id);
		x->base = (uint32_t)json_integer_value(w);
		x->prev = steered ? (int32_t)json_integer_value(json_object_get(applied, id)) : -1;
		json_t *sn = json_object_get(snodes, id);
		if ((x->has_ema = json_is_number(json_object_get(sn, "ema"))))
			x->ema = dnum(sn, "ema");
		x->sla_low = (unsigned)json_integer_value(json_object_get(sn, "lo"));
		x->sla_good = (unsigned)json_integer_value(json_object_get(sn, "gd"));
		x->sla_out = (int)json_integer_value(json_object_get(sn, "out"));
		x->hour_start = (uint32_t)json_integer_value(json_object_get(sn, "hs"));
		x->hour_moved = (uint32_t)json_integer_value(json_object_get(sn, "hm"));
		json_t *node = node_get(r, id);
		json_t *cost = json_object_get(node, "cost_per_gb");
		if ((x->has_cost = json_is_number(cost)))
			x->cost = json_number_value(cost);
		const char *prov = json_string_value(json_object_get(node, "provider"));
		if (prov)
			x->over_budget = budget_of(r, prov) > 0;
		gather(r, region, isp, x);
	}
	json_decref(state);
	steer_verdict_t v = steer_step(&c, &p, r->now, n, in, out);
	int rc = wdb_set(r->t, WDB_STEER, key, state = state_json(in, out, n, v, r->now));
	json_decref(state);
	if (rc)
		return rc;
	if (v == STEER_KEEP)
		return 0;
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
			"at", (json_int_t)r->now, "conf", conf_json(&c), "policy",
			p.success, p.latency, p.cost, "in", ins, "out", outj);
		json_object_set_new(nrow, "steer", json_pack("{s:o, s:I, s:s, s:o}",
			"weights", sw, "at", (json_int_t)r->now, "verdict", "change",
			"decision", d));
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
	rc = wdb_set(r->t, WDB_WEIGHT, key, nrow);
	json_decref(nrow);
	r->changed++;
	return rc;
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
		int rc = nearest_run_row(r->t, r->c, r->now, key, row, s, r->hard_only,
		                         r->what, sizeof(r->what), &r->wl);
		r->changed += rc > 0;
		r->rc = rc < 0 ? rc : 0;
		return r->rc != 0;
	}
	if (r->hard_only)
		return 0;
	if (steer_service_on(s)) {
		r->rc = eval_row(r, key, row, s);
		return r->rc != 0;
	}
	/* Steering turned off: the engine's shares and state go. */
	if (json_object_get(row, "steer")) {
		json_t *nrow = json_deep_copy(row);
		json_object_del(nrow, "steer");
		note(r, "%ssteer %s: steering off, the operator's weights", r->changed ? "; " : "",
		     key);
		r->rc = wdb_set(r->t, WDB_WEIGHT, key, nrow);
		json_decref(nrow);
		r->changed++;
	}
	json_t *state = wdb_get(r->t, WDB_STEER, key);
	if (state && !r->rc)
		r->rc = wdb_set(r->t, WDB_STEER, key, NULL);
	json_decref(state);
	return r->rc != 0;
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

static int has_steer_state(const char *key, json_t *val, void *arg)
{
	*(int *)arg = 1;
	return 1;
}

static int run(weightdb_t *db, const steer_conf_t *c, uint32_t now, int hard_only,
               char *err, size_t errlen)
{
	run_t r;
	memset(&r, 0, sizeof(r));
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
	if (!any_dynamic(r.services) && !state) {
		/* Nothing steers and nothing is left to clean: no write. */
		json_decref(r.services);
		wdb_abort(r.t);
		return 0;
	}
	r.nodes = json_object();
	r.budget_state = json_object();
	wdb_each(r.t, WDB_WEIGHT, NULL, row_cb, &r);
	json_decref(r.services);
	json_decref(r.nodes);
	json_decref(r.budget_state);
	if (r.rc) {
		snprintf(err, errlen, "steer: %s", wdb_strerror(r.rc));
		wdb_abort(r.t);
		return r.rc;
	}
	if (hard_only && !r.wl) {
		/* Nothing failed with a share: no write. */
		wdb_abort(r.t);
		return 0;
	}
	int64_t id = wdb_commit(r.t, r.what, err, errlen);
	if (id < 0)
		return (int)id;
	if (r.wl)
		log_info("%s", r.what);
	return r.changed;
}

int steer_run(weightdb_t *db, const steer_conf_t *c, uint32_t now, char *err,
              size_t errlen)
{
	return run(db, c, now, 0, err, errlen);
}

int steer_run_hard(weightdb_t *db, const steer_conf_t *c, uint32_t now, char *err,
                   size_t errlen)
{
	return run(db, c, now, 1, err, errlen);
}
