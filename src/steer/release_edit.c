/* SPDX-License-Identifier: MIT */
/* Gray releases shown and changed by gslbctl and the HTTP API
 * (release_edit.h). */
#include "steer/release_edit.h"
#include "steer/release.h"
#include "steer/release_run.h"

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
