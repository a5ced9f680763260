/* SPDX-License-Identifier: MIT */
/* The gray release controller (release_run.h, S4-10). */
#include "health/release_run.h"
#include "common/log.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The newest sample of field @which (1 success, 2 latency) taken in or
 * after the second @since in inputs record @rec, into @o: has when it
 * is after that second, early when of that second.  Samples are dated
 * to the second, so one of the second a step began may be from before
 * it.  Returns whether one was found. */
static int newest_since(json_t *rec, int which, uint32_t since, release_obs_t *o)
{
	json_t *a = json_object_get(rec, "samples");
	for (size_t i = json_array_size(a); i-- > 0;) {
		json_t *e = json_array_get(a, i);
		uint32_t t = (uint32_t)json_integer_value(json_array_get(e, 0));
		if (t < since)
			return 0;   /* in time order: the rest are older */
		json_t *v = json_array_get(e, which);
		if (json_is_number(v)) {
			o->value = json_number_value(v);
			o->has = t > since;
			o->early = t == since;
			return 1;
		}
	}
	return 0;
}

void release_observe(wdb_txn_t *t, json_t *rel, const release_t *r,
                     release_obs_t *obs)
{
	const char *node = json_string_value(json_object_get(rel, "node"));
	const char *region = json_string_value(json_object_get(rel, "region"));
	const char *isp = json_string_value(json_object_get(rel, "isp"));
	if (!region)
		region = "*";
	if (!isp)
		isp = "*";
	const char *keys[4][2] = { { region, isp }, { region, "*" }, { "*", isp },
	                           { "*", "*" } };
	json_t *recs[4] = { NULL };
	for (int k = 0; k < 4; k++) {
		int dup = 0;
		for (int j = 0; j < k; j++)
			dup |= strcmp(keys[j][0], keys[k][0]) == 0 &&
			       strcmp(keys[j][1], keys[k][1]) == 0;
		if (dup || !node)
			continue;
		char key[300];
		snprintf(key, sizeof(key), "n|%.64s|%.64s|%.64s", node, keys[k][0], keys[k][1]);
		recs[k] = wdb_get(t, WDB_STEERIN, key);
	}
	json_t *status = node ? wdb_get(t, WDB_STATUS, node) : NULL;
	for (unsigned i = 0; i < r->nguards; i++) {
		release_obs_t *o = &obs[i];
		o->has = o->early = 0;
		if (r->guard[i].metric == RELEASE_SCORE) {
			/* The live score, -1 while unknown. */
			json_t *s = json_object_get(status, "score");
			if (json_is_number(s) && json_number_value(s) >= 0) {
				o->has = 1;
				o->value = json_number_value(s);
			}
			continue;
		}
		int which = r->guard[i].metric == RELEASE_SUCCESS ? 1 : 2;
		/* The most specific record with a figure after the step
		 * began, else the most specific with one of its second. */
		for (int k = 0; k < 4 && !o->has; k++) {
			release_obs_t e = { 0 };
			if (newest_since(recs[k], which, r->since, &e) && (e.has || !o->early))
				*o = e;
		}
	}
	for (int k = 0; k < 4; k++)
		json_decref(recs[k]);
	json_decref(status);
}

typedef struct {
	wdb_txn_t *t;
	uint32_t now;
	int apply;            /* write what is decided (else only count) */
	int guards_only;      /* rollbacks only: widening keeps its time */
	json_t *pub;          /* cluster mode: name -> changed service */
	json_t *logs;         /* [warning?, line] to log once written */
	int changed;
	int rc;
	char what[2048];
	size_t wl;
} run_t;

/* The observations of @r as text ("success 99.5, score 92") into @buf. */
static void obs_text(const release_t *r, const release_obs_t *obs, char *buf,
                     size_t size)
{
	static const char *const names[] = { "score", "success", "latency" };
	size_t l = 0;
	buf[0] = 0;
	for (unsigned i = 0; i < r->nguards && l < size; i++)
		l += (size_t)snprintf(buf + l, size - l, "%s%s %g", l ? ", " : "",
		                      names[r->guard[i].metric], obs[i].value);
}

static int service_cb(const char *name, json_t *svc, void *arg)
{
	run_t *x = arg;
	json_t *rel = json_object_get(svc, "release");
	release_t r;
	char err[300];
	if (!rel || release_from_json(rel, &r, err, sizeof(err)))
		return 0;
	if (r.state != RELEASE_RUNNING && r.state != RELEASE_PAUSED)
		return 0;
	release_obs_t obs[RELEASE_MAX_GUARDS];
	release_observe(x->t, rel, &r, obs);
	int broken;
	release_verdict_t v = release_step(&r, obs, x->now, &broken);
	if (v == RELEASE_KEEP || v == RELEASE_WAIT ||
	    (x->guards_only && v != RELEASE_ROLLBACK))
		return 0;
	x->changed++;
	if (!x->apply)
		return 0;
	const char *node = json_string_value(json_object_get(rel, "node"));
	json_t *ns = json_deep_copy(svc);
	json_t *nr = json_object_get(ns, "release");
	char reason[400], seen[300], g[64];
	obs_text(&r, obs, seen, sizeof(seen));
	double was = json_number_value(json_object_get(rel, "percent"));
	if (v == RELEASE_ROLLBACK) {
		release_guard_text(&r.guard[broken], g, sizeof(g));
		snprintf(reason, sizeof(reason), "guard %s broke (%s)", g, seen);
		json_object_set_new(nr, "state", json_string("rolled-back"));
		json_object_set_new(nr, "percent", json_integer(0));
		json_array_append_new(x->logs, json_pack("[b, o]", 1, json_sprintf(
			"release %s: node %s rolled back from %g%% to 0%%: guard %s "
			"broke (%s)", name, node, was, g, seen)));
	} else {
		unsigned next = r.step + 1;
		snprintf(reason, sizeof(reason), "%s after %us with every guard held%s%s%s",
		         v == RELEASE_COMPLETE ? "completed" : "widened", r.every,
		         r.nguards ? " (" : "", seen, r.nguards ? ")" : "");
		json_object_set_new(nr, "step", json_integer(next));
		json_object_set_new(nr, "percent", release_pct_json(r.steps[next]));
		if (v == RELEASE_COMPLETE)
			json_object_set_new(nr, "state", json_string("completed"));
		json_array_append_new(x->logs, json_pack("[b, o]", 0, json_sprintf(
			"release %s: node %s %s from %g%% to %g%%%s%s%s", name, node,
			v == RELEASE_COMPLETE ? "completed" : "widened", was,
			r.steps[next] / 100.0, r.nguards ? " (" : "", seen,
			r.nguards ? ")" : "")));
	}
	json_object_set_new(nr, "since", json_integer(x->now));
	json_object_set_new(nr, "reason", json_string(reason));
	if (x->wl < sizeof(x->what) - 1) {
		int k = snprintf(x->what + x->wl, sizeof(x->what) - x->wl,
		                 "%srelease %s: node %s %s", x->wl ? "; " : "", name, node, reason);
		if (k > 0)
			x->wl += (size_t)k;
		if (x->wl >= sizeof(x->what))
			x->wl = sizeof(x->what) - 1;
	}
	x->rc = wdb_set(x->t, WDB_SERVICE, name, ns);
	if (x->pub)
		json_object_set(x->pub, name, ns);
	json_decref(ns);
	return x->rc != 0;
}

/* The end of a run whose write ended with @rc: its log lines once
 * written (a decision refused is made again, and logged then).  Returns
 * @rc or the number of releases changed. */
static int done(run_t *x, int rc)
{
	size_t i;
	json_t *l;
	json_array_foreach(x->logs, i, l) {
		const char *line = json_string_value(json_array_get(l, 1));
		if (!rc && json_is_true(json_array_get(l, 0)))
			log_warning("%s", line);
		else if (!rc)
			log_notice("%s", line);
	}
	json_decref(x->logs);
	return rc ? rc : x->changed;
}

int release_run(weightdb_t *db, uint32_t now, int guards_only,
                steer_publish_fn publish, void *arg, char *err, size_t errlen)
{
	/* A read first: most seconds nothing is due, and a read takes no
	 * write lock from gslbctl. */
	run_t x = { .now = now, .guards_only = guards_only };
	if (!(x.t = wdb_begin_read(db)))
		return 0;
	wdb_each(x.t, WDB_SERVICE, NULL, service_cb, &x);
	wdb_abort(x.t);
	if (!x.changed)
		return 0;
	memset(&x, 0, sizeof(x));
	x.now = now;
	x.guards_only = guards_only;
	x.apply = 1;
	if (!(x.t = wdb_begin(db, "gslbd:release", err, errlen)))
		return GSLB_EIO;
	x.pub = publish ? json_object() : NULL;
	x.logs = json_array();
	wdb_each(x.t, WDB_SERVICE, NULL, service_cb, &x);
	if (x.rc) {
		snprintf(err, errlen, "release: %s", wdb_strerror(x.rc));
		wdb_abort(x.t);
		json_decref(x.pub);
		json_decref(x.logs);
		return x.rc;
	}
	if (publish) {
		/* Cluster mode: nothing into the store here.  The decision
		 * holds only if the services are in etcd as this store read
		 * them ("base"): a step published a moment ago whose change
		 * has not come back through the watch yet is not taken twice,
		 * and an operator's pause or abort made meanwhile stands. */
		json_t *rec = json_pack("{s:o, s:I}", "service", x.pub, "base",
		                        (json_int_t)wdb_meta_u64(x.t, "clusterrev"));
		wdb_abort(x.t);
		int rc = publish(arg, rec, x.what, err, errlen);
		json_decref(rec);
		return done(&x, rc);
	}
	int64_t id = wdb_commit(x.t, x.what, err, errlen);
	return done(&x, id < 0 ? (int)id : 0);
}

int release_inputs_moved(weightdb_t *db, uint64_t *seen)
{
	wdb_txn_t *t = wdb_begin_read(db);
	if (!t)
		return 0;
	uint64_t g = wdb_inputs_generation(t);
	wdb_abort(t);
	int moved = g != *seen || !*seen;
	*seen = g;
	return moved;
}
