/* SPDX-License-Identifier: MIT */
/* The gray release controller (release_run.h, S4-10). */
#include "steer/release_run.h"
#include "steer/decide.h"
#include "common/log.h"
#include "common/util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The newest sample of field @which (0 success, 1 latency) of inputs
 * record @rec taken from the second @since to @now, read through the one
 * reader of samples, into @o: has when it is after that second, early
 * when of that second.  Samples are dated to the second, so one of the
 * second a step began may be from before it.  Returns whether one was
 * found. */
static int newest_since(json_t *rec, const steer_conf_t *c, int which,
                        uint32_t since, uint32_t now, release_obs_t *o)
{
	steer_sample_t s[STEER_MAX_SAMPLES];
	unsigned n = steer_samples_read(rec, since, now, c->skew, s);
	while (n-- > 0) {
		double v = which ? s[n].latency : s[n].success;
		if (!isnan(v)) {
			o->value = v;
			o->has = s[n].time > since;
			o->early = s[n].time == since;
			return 1;
		}
	}
	return 0;
}

/* S4-10, S2-7: the live score of status record @status (may be NULL)
 * into @o, or why there is none. */
static void observe_score(json_t *status, release_obs_t *o)
{
	json_t *s = json_object_get(status, "score");
	if (!status)
		o->why = "gslbd has not evaluated the node yet";
	else if (json_is_true(json_object_get(status, "unmonitored")))
		o->why = "the node has no probe and no pushed health metric";
	else if (!json_is_number(s) || json_number_value(s) < 0) {
		o->stale = 1;
		o->why = "no fresh probe result or metric";
	} else if (json_is_true(json_object_get(status, "stale"))) {
		o->stale = 1;
		o->why = "its score rests on stale inputs";
	} else {
		o->has = 1;
		o->value = json_number_value(s);
	}
}

void release_observe(wdb_txn_t *t, const steer_conf_t *c, json_t *rel,
                     const release_t *r, uint32_t now, release_obs_t *obs)
{
	const char *node = json_string_value(json_object_get(rel, "node"));
	const char *region = json_string_value(json_object_get(rel, "region"));
	const char *isp = json_string_value(json_object_get(rel, "isp"));
	json_t *recs[4] = { NULL };
	for (unsigned k = 0; k < 4 && node; k++) {
		char key[300];
		if (steer_input_key(k, node, region ? region : "*", isp ? isp : "*", key,
		                    sizeof(key)))
			recs[k] = wdb_get(t, WDB_STEERIN, key);
	}
	json_t *status = node ? wdb_get(t, WDB_STATUS, node) : NULL;
	double keep = steer_conf_keep(c);
	uint32_t window = (double)now > keep ? now - (uint32_t)keep : 0;
	for (unsigned i = 0; i < r->nguards; i++) {
		release_obs_t *o = &obs[i];
		memset(o, 0, sizeof(*o));
		if (r->guard[i].metric == RELEASE_SCORE) {
			observe_score(status, o);
			continue;
		}
		int which = r->guard[i].metric == RELEASE_SUCCESS ? 0 : 1;
		/* The most specific record with a figure after the step
		 * began, else the most specific with one of its second. */
		for (int k = 0; k < 4 && !o->has; k++) {
			release_obs_t e = { 0 };
			if (newest_since(recs[k], c, which, r->since, now, &e) &&
			    (e.has || !o->early))
				*o = e;
		}
		if (o->has || o->early)
			continue;
		/* No figure over the step: did the node ever have one? */
		for (int k = 0; k < 4 && !o->stale; k++) {
			release_obs_t e = { 0 };
			o->stale = newest_since(recs[k], c, which, window, now, &e);
		}
		o->why = o->stale ? (which ? "no latency pushed since the step began"
		                           : "no success pushed since the step began")
		                  : (which ? "no latency pushed for the node and the "
		                             "release's region and ISP"
		                           : "no success pushed for the node and the "
		                             "release's region and ISP");
	}
	for (int k = 0; k < 4; k++)
		json_decref(recs[k]);
	json_decref(status);
}

typedef struct {
	wdb_txn_t *t;
	const steer_conf_t *c;
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

/* The observations of @r as text ("success 99.5, score: none (...)")
 * into @buf. */
static void obs_text(const release_t *r, const release_obs_t *obs, char *buf,
                     size_t size)
{
	size_t l = 0;
	buf[0] = 0;
	for (unsigned i = 0; i < r->nguards && l < size; i++) {
		char one[200];
		l += (size_t)snprintf(buf + l, size - l, "%s%s", l ? ", " : "",
		                      release_obs_text(&r->guard[i], &obs[i], one, sizeof(one)));
	}
}

/* S4-10: the reason a due step waits, naming the first guard without a
 * figure over it and why, into @buf. */
static void wait_text(const release_t *r, const release_obs_t *obs, char *buf,
                      size_t size)
{
	for (unsigned i = 0; i < r->nguards; i++) {
		if (obs[i].has)
			continue;
		char g[64], seen[200];
		release_guard_text(&r->guard[i], g, sizeof(g));
		snprintf(buf, size, "held at %g%%: guard %s has no figure over the step "
		         "(%s)", r->steps[r->step] / 100.0, g,
		         release_obs_text(&r->guard[i], &obs[i], seen, sizeof(seen)));
		return;
	}
	buf[0] = 0;
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
	release_observe(x->t, x->c, rel, &r, x->now, obs);
	int broken;
	release_verdict_t v = release_step(&r, obs, x->now, &broken);
	char reason[700], seen[600], g[64];
	/* A step held for a missing figure says so once: in its reason,
	 * audited and logged, not at every evaluation. */
	if (v == RELEASE_WAIT)
		wait_text(&r, obs, reason, sizeof(reason));
	if (v == RELEASE_KEEP || (x->guards_only && v != RELEASE_ROLLBACK) ||
	    (v == RELEASE_WAIT && strcmp(reason, json_string_value(
		json_object_get(rel, "reason")) ?: "") == 0))
		return 0;
	x->changed++;
	if (!x->apply)
		return 0;
	const char *node = json_string_value(json_object_get(rel, "node"));
	json_t *ns = json_deep_copy(svc);
	json_t *nr = json_object_get(ns, "release");
	obs_text(&r, obs, seen, sizeof(seen));
	double was = json_number_value(json_object_get(rel, "percent"));
	if (v == RELEASE_WAIT) {
		json_array_append_new(x->logs, json_pack("[b, o]", 0, json_sprintf(
			"release %s: node %s %s", name, node, reason)));
	} else if (v == RELEASE_ROLLBACK) {
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
	if (v != RELEASE_WAIT)
		json_object_set_new(nr, "since", json_integer(x->now));
	json_object_set_new(nr, "reason", json_string(reason));
	steer_note(x->what, sizeof(x->what), &x->wl, "%srelease %s: node %s %s",
	           x->wl ? "; " : "", name, node, reason);
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

int release_run(weightdb_t *db, const steer_conf_t *c, uint32_t now,
                int guards_only, steer_publish_fn publish, void *arg, char *err,
                size_t errlen)
{
	/* A read first: most seconds nothing is due, and a read takes no
	 * write lock from gslbctl. */
	run_t x = { .c = c, .now = now, .guards_only = guards_only };
	if (!(x.t = wdb_begin_read(db)))
		return 0;
	wdb_each(x.t, WDB_SERVICE, NULL, service_cb, &x);
	wdb_abort(x.t);
	if (!x.changed)
		return 0;
	memset(&x, 0, sizeof(x));
	x.c = c;
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
