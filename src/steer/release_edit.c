/* SPDX-License-Identifier: MIT */
/* Gray releases shown and changed by gslbctl and the HTTP API
 * (release_edit.h). */
#include "steer/release_edit.h"
#include "steer/release.h"
#include "steer/release_run.h"
#include "common/num.h"
#include "store/apply.h"
#include "store/keys.h"
#include "store/plan.h"

#include <stdio.h>
#include <string.h>

static json_t *field(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return v ? json_incref(v) : json_null();
}

json_t *release_view(const char *svc, json_t *rel)
{
	static const char *const keys[] = { "node", "state", "percent", "step", "steps",
		"every", "guards", "reason", NULL };
	json_t *v = json_pack("{s:s}", "service", svc);
	for (const char *const *k = keys; *k; k++)
		json_object_set_new(v, *k, field(rel, *k));
	if (!json_is_array(json_object_get(v, "guards")))
		json_object_set_new(v, "guards", json_array());
	static const char *const words[] = { "region", "isp" };
	for (int k = 0; k < 2; k++) {
		const char *w = json_string_value(json_object_get(rel, words[k]));
		json_object_set_new(v, words[k], json_string(w ? w : "*"));
	}
	wdb_json_time(v, "started", json_integer_value(json_object_get(rel, "started")));
	wdb_json_time(v, "since", json_integer_value(json_object_get(rel, "since")));
	/* When the next step is due, for a running release below its last
	 * step (it widens then if every guard held). */
	release_t r;
	char err[300];
	int64_t next = 0;
	if (!release_from_json(rel, &r, err, sizeof(err)) && r.state == RELEASE_RUNNING &&
	    r.step + 1 < r.nsteps)
		next = (int64_t)r.since + r.every;
	wdb_json_time(v, "next", next);
	return v;
}

typedef struct {
	json_t *out;
	const char *only;
} coll_t;

static int collect(const char *name, json_t *svc, void *arg)
{
	coll_t *c = arg;
	json_t *rel = json_object_get(svc, "release");
	if (rel && (!c->only || !*c->only || strcmp(c->only, name) == 0))
		json_array_append_new(c->out, release_view(name, rel));
	return 0;
}

json_t *release_views(wdb_txn_t *t, const char *svc)
{
	coll_t c = { json_array(), svc };
	wdb_each(t, WDB_SERVICE, NULL, collect, &c);
	return c.out;
}

json_t *release_observed(wdb_txn_t *t, const steer_conf_t *c, json_t *rel,
                         uint32_t now)
{
	release_t r;
	char err[300];
	json_t *seen = json_array();
	if (release_from_json(rel, &r, err, sizeof(err)))
		return seen;
	release_obs_t obs[RELEASE_MAX_GUARDS];
	release_observe(t, c, rel, &r, now, obs);
	for (unsigned i = 0; i < r.nguards; i++) {
		char g[64], why[200];
		release_guard_text(&r.guard[i], g, sizeof(g));
		json_array_append_new(seen, obs[i].has ?
			json_pack("{s:s, s:f, s:b}", "guard", g, "value", obs[i].value,
			          "holds", release_guard_holds(&r.guard[i], obs[i].value)) :
			json_pack("{s:s, s:n, s:n, s:s}", "guard", g, "value", "holds",
			          "missing", release_obs_text(&r.guard[i], &obs[i], why,
			                                      sizeof(why))));
	}
	return seen;
}

int release_set_state(wdb_txn_t *t, const char *sub, const char *name,
                      uint32_t now, char *what, size_t wlen, char *err,
                      size_t errlen)
{
	json_t *svc = wdb_get(t, WDB_SERVICE, name);
	if (!svc) {
		snprintf(err, errlen, "service %s does not exist", name);
		return WDB_EDIT_ABSENT;
	}
	json_t *rel = json_object_get(svc, "release");
	int rc = WDB_EDIT_OK;
	const char *st = json_string_value(json_object_get(rel, "state"));
	int running = st && strcmp(st, "running") == 0;
	int paused = st && strcmp(st, "paused") == 0;
	if (!rel) {
		snprintf(err, errlen, "service %s has no release", name);
		rc = WDB_EDIT_ABSENT;
	} else if (strcmp(sub, "pause") == 0) {
		if (!running) {
			snprintf(err, errlen, "the release of %s is %s, not running", name, st);
			rc = WDB_EDIT_REFUSED;
		} else {
			json_object_set_new(rel, "state", json_string("paused"));
			json_object_set_new(rel, "reason", json_string("paused"));
		}
	} else if (strcmp(sub, "resume") == 0) {
		if (!paused) {
			snprintf(err, errlen, "the release of %s is %s, not paused%s", name, st,
			         running ? "" : " (release start it again)");
			rc = WDB_EDIT_REFUSED;
		} else {
			/* The step is watched for a whole --every again. */
			json_object_set_new(rel, "state", json_string("running"));
			json_object_set_new(rel, "since", json_integer(now));
			json_object_set_new(rel, "reason", json_string("resumed"));
		}
	} else if (!running && !paused) {
		snprintf(err, errlen, "the release of %s is %s already", name, st);
		rc = WDB_EDIT_REFUSED;
	} else {
		json_object_set_new(rel, "state", json_string("aborted"));
		json_object_set_new(rel, "percent", json_integer(0));
		json_object_set_new(rel, "since", json_integer(now));
		json_object_set_new(rel, "reason", json_string("aborted"));
	}
	if (!rc) {
		snprintf(what, wlen, "release %s %s node %s", sub, name,
		         json_string_value(json_object_get(rel, "node")));
		int wrc = wdb_set(t, WDB_SERVICE, name, svc);
		if (wrc) {
			snprintf(err, errlen, "writing %s: %s; nothing was changed", name,
			         wdb_strerror(wrc));
			rc = WDB_EDIT_STORE;
		}
	}
	json_decref(svc);
	return rc;
}

/* The weight rows of a service that release @rel concerns (its region
 * and ISP, absent: any), whether they hold its node or not: key -> row. */
typedef struct {
	json_t *rel;
	json_t *rows;
} rows_t;

static int row_cb(const char *key, json_t *row, void *arg)
{
	rows_t *x = arg;
	wdb_row_parts_t p;
	if (wdb_row_split(key, strlen(key), &p))
		return 0;
	const char *rr = json_string_value(json_object_get(x->rel, "region"));
	const char *ri = json_string_value(json_object_get(x->rel, "isp"));
	if ((rr && (strlen(rr) != p.region_len || memcmp(rr, p.region, p.region_len))) ||
	    (ri && (strlen(ri) != p.isp_len || memcmp(ri, p.isp, p.isp_len))))
		return 0;
	json_object_set(x->rows, key, row);
	return 0;
}

/* Whether a running or paused release of node @node exists in another
 * service than @svc: its service's name into @other. */
typedef struct {
	const char *node, *svc;
	char other[1100];
} busy_t;

static int busy_cb(const char *name, json_t *s, void *arg)
{
	busy_t *b = arg;
	json_t *rel = json_object_get(s, "release");
	const char *st = json_string_value(json_object_get(rel, "state"));
	const char *n = json_string_value(json_object_get(rel, "node"));
	if (n && strcmp(n, b->node) == 0 && st &&
	    (strcmp(st, "running") == 0 || strcmp(st, "paused") == 0) &&
	    strcmp(name, b->svc) != 0) {
		snprintf(b->other, sizeof(b->other), "%s", name);
		return 1;
	}
	return 0;
}

/* An input's name: gslbctl's option or the document's key. */
static const char *in_name(const release_start_in_t *in, const char *key)
{
	static char opt[32];
	if (in->doc)
		return key;
	snprintf(opt, sizeof(opt), "--%s", strcmp(key, "guards") == 0 ? "guard" : key);
	return opt;
}

#define FAIL(rc, f, ...) (snprintf(err, errlen, __VA_ARGS__), *field = (f), (rc))

/* The inputs of @in, each checked, into @o. */
typedef struct {
	json_t *guards;               /* their texts, normalised */
	uint32_t steps[RELEASE_MAX_STEPS], every;
	unsigned nsteps;
	long weight;                  /* -1: none */
} start_t;

static int start_inputs(const release_start_in_t *in, start_t *o, char *err,
                        size_t errlen, const char **field)
{
	o->weight = -1;
	if (!in->node)
		return FAIL(WDB_EDIT_BAD, "node", "give %s NEW", in_name(in, "node"));
	if (in->region && !wdb_area_word_ok(in->region, 0))
		return FAIL(WDB_EDIT_BAD, "region", "%s %s: use a short lowercase name "
		            "like cn-bj", in_name(in, "region"), in->region);
	if (in->isp && !wdb_area_word_ok(in->isp, 0))
		return FAIL(WDB_EDIT_BAD, "isp", "%s %s: use a short lowercase name "
		            "like ctcc", in_name(in, "isp"), in->isp);
	if (in->weight) {
		const num_range_t r = { 0, 1000000, NUM_WHOLE, NULL, NULL };
		double d;
		if (num_parse(in->weight, &r, &d, NULL))
			return FAIL(WDB_EDIT_BAD, "weight", "%s %s: must be a whole number "
			            "from 0 to 1000000", in_name(in, "weight"), in->weight);
		o->weight = (long)d;
	}
	char e2[300];
	size_t i;
	json_t *g;
	json_array_foreach(in->guards, i, g) {
		release_guard_t rg;
		if (!json_is_string(g))
			return FAIL(WDB_EDIT_BAD, "guards", "%s: must be texts like "
			            "success>=99.5", in_name(in, "guards"));
		if (release_parse_guard(json_string_value(g), &rg, e2, sizeof(e2)))
			return FAIL(WDB_EDIT_BAD, "guards", "%s %s", in_name(in, "guards"), e2);
		if (json_array_size(o->guards) == RELEASE_MAX_GUARDS)
			return FAIL(WDB_EDIT_BAD, "guards", "at most %d guards",
			            RELEASE_MAX_GUARDS);
		char txt[64];
		json_array_append_new(o->guards, json_string(release_guard_text(&rg, txt,
		                                                            sizeof(txt))));
	}
	if (!in->steps)
		return FAIL(WDB_EDIT_BAD, "steps", "give %s, like 1,5,25,50,100",
		            in_name(in, "steps"));
	if (!in->every)
		return FAIL(WDB_EDIT_BAD, "every", "give %s, like 10m", in_name(in, "every"));
	if (release_parse_steps(in->steps, o->steps, &o->nsteps, e2, sizeof(e2)))
		return FAIL(WDB_EDIT_BAD, "steps", "%s %s: %s", in_name(in, "steps"),
		            in->steps, e2);
	if (release_parse_every(in->every, &o->every, e2, sizeof(e2)))
		return FAIL(WDB_EDIT_BAD, "every", "%s %s", in_name(in, "every"), e2);
	return WDB_EDIT_OK;
}

/* S4-10: refused when a guard of @guards (texts) can never be evaluated
 * for node @id (@n): a score guard on a node with no probe and no
 * pushed health metric has no score to read. */
static int guards_check(wdb_txn_t *t, const release_start_in_t *in,
                        json_t *guards, const char *id, json_t *n, char *err,
                        size_t errlen, const char **field)
{
	size_t i;
	json_t *g;
	json_array_foreach(guards, i, g) {
		if (strncmp(json_string_value(g), "score", 5) != 0)
			continue;
		if (json_array_size(json_object_get(n, "probes")))
			return WDB_EDIT_OK;
		json_t *m = wdb_get(t, WDB_METRICS, id);
		int pushed = json_object_size(m) > 0;
		json_decref(m);
		if (!pushed)
			return FAIL(WDB_EDIT_REFUSED, "guards", "%s %s: node %s has no probe "
			            "and no pushed health metric, so it has no score to keep "
			            "the guard; give it a probe (node set %s --probe ...) or "
			            "guard on success or latency", in_name(in, "guards"),
			            json_string_value(g), id, id);
		return WDB_EDIT_OK;
	}
	return WDB_EDIT_OK;
}

/* S4-10: with @weight >= 0, node @node joins every row of @rows (from
 * row_cb()) with that weight, written in @t, the change that starts its
 * release: it never answers a row ahead of its release.  The number of
 * rows that hold the node then (the release answers in those) goes to
 * *@holding. */
static int rows_join(wdb_txn_t *t, json_t *rows, json_t *rel, const char *node,
                     long weight, unsigned *holding, char *err, size_t errlen,
                     const char **field)
{
	const char *key;
	json_t *row;
	*holding = 0;
	json_object_foreach(rows, key, row) {
		json_t *w = json_object_get(row, "weights");
		if (weight >= 0 && json_is_object(w)) {
			if (!json_object_get(w, node) && json_object_size(w) >= PLAN_MAX_NODES)
				return FAIL(WDB_EDIT_REFUSED, "weight", "row %s has %d nodes "
				            "already, the most a row may have", key, PLAN_MAX_NODES);
			json_object_set_new(w, node, json_integer(weight));
			int rc = wdb_set(t, WDB_WEIGHT, key, row);
			if (rc)
				return FAIL(WDB_EDIT_STORE, NULL, "writing %s: %s; nothing was "
				            "changed", key, wdb_strerror(rc));
		}
		const char *n;
		uint32_t bp;
		*holding += (unsigned)plan_release_key(rel, key, w, &n, &bp);
	}
	return WDB_EDIT_OK;
}

/* The release record of @o for node @in->node at @now. */
static json_t *release_record(const release_start_in_t *in, start_t *o, uint32_t now)
{
	json_t *jsteps = json_array();
	for (unsigned i = 0; i < o->nsteps; i++)
		json_array_append_new(jsteps, release_pct_json(o->steps[i]));
	json_t *rel = json_pack("{s:s, s:o, s:I, s:O, s:s, s:i, s:o, s:I, s:I, s:s}",
		"node", in->node, "steps", jsteps, "every", (json_int_t)o->every,
		"guards", o->guards,
		"state", "running", "step", 0, "percent", release_pct_json(o->steps[0]),
		"since", (json_int_t)now, "started", (json_int_t)now,
		"reason", "started");
	if (in->region)
		json_object_set_new(rel, "region", json_string(in->region));
	if (in->isp)
		json_object_set_new(rel, "isp", json_string(in->isp));
	return rel;
}

/* The checks of the store for a release of @o in service @name
 * (@svc): the node, its guards, no other release of either. */
static int start_refusals(wdb_txn_t *t, const char *name, json_t *svc,
                          const release_start_in_t *in, start_t *o, char *err,
                          size_t errlen, const char **field)
{
	json_t *n = wdb_get(t, WDB_NODE, in->node);
	if (!n)
		return FAIL(WDB_EDIT_REFUSED, "node", "node %s does not exist", in->node);
	int rc = guards_check(t, in, o->guards, in->node, n, err, errlen, field);
	json_decref(n);
	if (rc)
		return rc;
	json_t *old = json_object_get(svc, "release");
	const char *ost = json_string_value(json_object_get(old, "state"));
	if (ost && (strcmp(ost, "running") == 0 || strcmp(ost, "paused") == 0))
		return FAIL(WDB_EDIT_REFUSED, "service", "service %s has a %s release of "
		            "node %s already (release abort %s first)", name, ost,
		            json_string_value(json_object_get(old, "node")), name);
	busy_t b = { in->node, name, "" };
	wdb_each(t, WDB_SERVICE, NULL, busy_cb, &b);
	if (*b.other)
		return FAIL(WDB_EDIT_REFUSED, "node", "node %s is in a release of service "
		            "%s already", in->node, b.other);
	return WDB_EDIT_OK;
}

int release_start(wdb_txn_t *t, const char *name, const release_start_in_t *in,
                  uint32_t now, char *what, size_t wlen, char *err,
                  size_t errlen, const char **field)
{
	start_t o = { .guards = json_array() };
	json_t *svc = NULL, *rel = NULL, *rows = json_object();
	*field = NULL;
	int rc = start_inputs(in, &o, err, errlen, field);
	if (!rc && !(svc = wdb_get(t, WDB_SERVICE, name)))
		rc = FAIL(WDB_EDIT_ABSENT, "service", "service %s does not exist", name);
	if (!rc)
		rc = start_refusals(t, name, svc, in, &o, err, errlen, field);
	unsigned holding = 0;
	if (!rc) {
		rel = release_record(in, &o, now);
		rows_t x = { rel, rows };
		char prefix[1200];
		wdb_row_prefix(prefix, sizeof(prefix), name);
		wdb_each(t, WDB_WEIGHT, prefix, row_cb, &x);
		if (!json_object_size(rows))
			rc = FAIL(WDB_EDIT_REFUSED, "region", "service %s has no weight row "
			          "for region %s, ISP %s", name, in->region ? in->region : "*",
			          in->isp ? in->isp : "*");
	}
	if (!rc)
		rc = rows_join(t, rows, rel, in->node, o.weight, &holding, err, errlen, field);
	if (!rc && !holding)
		rc = FAIL(WDB_EDIT_REFUSED, "node", "node %s is in none of the weight rows "
		          "of %s for region %s, ISP %s (give %s W to add it to them with "
		          "the release)", in->node, name, in->region ? in->region : "*",
		          in->isp ? in->isp : "*", in_name(in, "weight"));
	if (!rc) {
		json_object_set(svc, "release", rel);
		int wrc = wdb_set(t, WDB_SERVICE, name, svc);
		if (wrc)
			rc = FAIL(WDB_EDIT_STORE, NULL, "writing %s: %s; nothing was changed",
			          name, wdb_strerror(wrc));
	}
	if (!rc) {
		char joined[80] = "";
		if (o.weight >= 0)
			snprintf(joined, sizeof(joined), ", joining its rows with weight %ld",
			         o.weight);
		snprintf(what, wlen, "release start %s node %s at %g%% (steps %s every "
		         "%us)%s", name, in->node, o.steps[0] / 100.0, in->steps, o.every,
		         joined);
	}
	json_decref(rows);
	json_decref(rel);
	json_decref(svc);
	json_decref(o.guards);
	return rc;
}
#undef FAIL
