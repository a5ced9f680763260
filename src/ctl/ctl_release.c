/* SPDX-License-Identifier: MIT */
/* gslbctl release: start, watch and stop gray releases (S4-10).  A
 * release lives in its service's object (steer/release.h); the health
 * thread's controller widens and rolls it back, these commands start,
 * pause, resume and abort it, every change audited. */
#include "ctl/ctl_release.h"
#include "steer/release.h"
#include "steer/release_edit.h"
#include "steer/release_run.h"
#include "store/keys.h"
#include "store/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

json_t *ctl_releases(wdb_txn_t *t, const char *svc)
{
	return release_views(t, svc);
}

void ctl_release_table(json_t *views)
{
	printf("%-30s %-16s %-10s %-8s %-11s %7s %-20s %s\n", "RELEASE", "NODE", "REGION",
	       "ISP", "STATE", "PERCENT", "NEXT STEP", "GUARDS");
	size_t i;
	json_t *v;
	json_array_foreach(views, i, v) {
		char guards[300];
		ctl_join(json_object_get(v, "guards"), guards, sizeof(guards));
		const char *next = json_string_value(json_object_get(v, "next"));
		printf("%-30s %-16s %-10s %-8s %-11s %6g%% %-20s %s\n",
		       json_string_value(json_object_get(v, "service")),
		       json_string_value(json_object_get(v, "node")),
		       json_string_value(json_object_get(v, "region")),
		       json_string_value(json_object_get(v, "isp")),
		       json_string_value(json_object_get(v, "state")),
		       json_number_value(json_object_get(v, "percent")), next ? next : "-",
		       *guards ? guards : "-");
	}
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

/* S4-10: with @weight >= 0, node @node joins every row of @rows (from
 * row_cb()) with that weight, written in @t, the change that starts its
 * release: it never answers a row ahead of its release.  Returns how
 * many rows hold the node then (the release answers in those). */
static unsigned rows_join(wdb_txn_t *t, json_t *rows, json_t *rel, const char *node,
                          long weight)
{
	const char *key;
	json_t *row;
	unsigned holding = 0;
	json_object_foreach(rows, key, row) {
		json_t *w = json_object_get(row, "weights");
		if (weight >= 0 && json_is_object(w)) {
			if (!json_object_get(w, node) && json_object_size(w) >= PLAN_MAX_NODES)
				ctl_die("release start: row %s has %d nodes already, the most a "
				        "row may have", key, PLAN_MAX_NODES);
			json_object_set_new(w, node, json_integer(weight));
			ctl_set(t, WDB_WEIGHT, key, row);
		}
		const char *n;
		uint32_t bp;
		holding += (unsigned)plan_release_key(rel, key, w, &n, &bp);
	}
	return holding;
}

/* S4-10: dies when a guard of @guards (texts) can never be evaluated
 * for node @id (@n): a score guard on a node with no probe and no
 * pushed health metric has no score to read. */
static void guards_check(wdb_txn_t *t, json_t *guards, const char *id, json_t *n)
{
	size_t i;
	json_t *g;
	json_array_foreach(guards, i, g) {
		if (strncmp(json_string_value(g), "score", 5) != 0)
			continue;
		if (json_array_size(json_object_get(n, "probes")))
			return;
		json_t *m = wdb_get(t, WDB_METRICS, id);
		int pushed = json_object_size(m) > 0;
		json_decref(m);
		if (!pushed)
			ctl_die("release start: --guard %s: node %s has no probe and no pushed "
			        "health metric, so it has no score to keep the guard; give it "
			        "a probe (node set %s --probe ...) or guard on success or "
			        "latency", json_string_value(g), id, id);
		return;
	}
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

/* What `release start` was given, checked. */
typedef struct {
	const char *node, *region, *isp, *steps_s, *every_s;
	long weight;                  /* -1: no --weight */
	json_t *guards;               /* their texts, normalised */
	uint32_t steps[RELEASE_MAX_STEPS], every;
	unsigned nsteps;
} start_opts_t;

/* Reads the options of `release start` (argv[2..argc)) into @o; dies
 * on one that is unknown, invalid or missing. */
static void start_options(int argc, char **argv, start_opts_t *o)
{
	o->weight = -1;
	o->guards = json_array();
	for (int i = 2; i < argc; i++) {
		const char *opt = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(opt, "--node") != 0 && strcmp(opt, "--region") != 0 &&
		    strcmp(opt, "--isp") != 0 && strcmp(opt, "--steps") != 0 &&
		    strcmp(opt, "--every") != 0 && strcmp(opt, "--guard") != 0 &&
		    strcmp(opt, "--weight") != 0)
			ctl_usage_die("release start: unknown option '%s'", opt);
		if (!v)
			ctl_usage_die("release start: %s needs a value", opt);
		i++;
		char err[300];
		if (strcmp(opt, "--node") == 0)
			o->node = v;
		else if (strcmp(opt, "--region") == 0) {
			if (!ctl_valid_word(v, 0))
				ctl_die("release start: --region %s: use a short lowercase name "
				        "like cn-bj", v);
			o->region = v;
		} else if (strcmp(opt, "--isp") == 0) {
			if (!ctl_valid_word(v, 0))
				ctl_die("release start: --isp %s: use a short lowercase name "
				        "like ctcc", v);
			o->isp = v;
		} else if (strcmp(opt, "--steps") == 0)
			o->steps_s = v;
		else if (strcmp(opt, "--every") == 0)
			o->every_s = v;
		else if (strcmp(opt, "--weight") == 0)
			o->weight = ctl_parse_num("release start: --weight", v, 0, 1000000);
		else {
			release_guard_t g;
			if (release_parse_guard(v, &g, err, sizeof(err)))
				ctl_die("release start: --guard %s", err);
			if (json_array_size(o->guards) == RELEASE_MAX_GUARDS)
				ctl_die("release start: at most %d guards", RELEASE_MAX_GUARDS);
			char txt[64];
			json_array_append_new(o->guards, json_string(release_guard_text(&g, txt,
			                                                            sizeof(txt))));
		}
	}
	if (!o->node)
		ctl_usage_die("release start: give --node NEW");
	if (!o->steps_s)
		ctl_usage_die("release start: give --steps, like 1,5,25,50,100");
	if (!o->every_s)
		ctl_usage_die("release start: give --every, like 10m");
	char err[300];
	if (release_parse_steps(o->steps_s, o->steps, &o->nsteps, err, sizeof(err)))
		ctl_die("release start: --steps %s: %s", o->steps_s, err);
	if (release_parse_every(o->every_s, &o->every, err, sizeof(err)))
		ctl_die("release start: --every %s", err);
}

static int release_start(int argc, char **argv)
{
	if (argc < 2)
		ctl_die("release start: missing service name");
	char name[1100];
	ctl_service_name(argv[1], name, sizeof(name));
	start_opts_t o = { 0 };
	start_options(argc, argv, &o);
	wdb_txn_t *t = ctl_begin();
	json_t *svc = wdb_get(t, WDB_SERVICE, name);
	if (!svc)
		ctl_die("release start: service %s does not exist", name);
	json_t *n = wdb_get(t, WDB_NODE, o.node);
	if (!n)
		ctl_die("release start: node %s does not exist", o.node);
	guards_check(t, o.guards, o.node, n);
	json_decref(n);
	json_t *old = json_object_get(svc, "release");
	const char *ost = json_string_value(json_object_get(old, "state"));
	if (ost && (strcmp(ost, "running") == 0 || strcmp(ost, "paused") == 0))
		ctl_die("release start: service %s has a %s release of node %s already "
		        "(release abort %s first)", name, ost,
		        json_string_value(json_object_get(old, "node")), name);
	busy_t b = { o.node, name, "" };
	wdb_each(t, WDB_SERVICE, NULL, busy_cb, &b);
	if (*b.other)
		ctl_die("release start: node %s is in a release of service %s already",
		        o.node, b.other);
	uint32_t now = (uint32_t)time(NULL);
	json_t *jsteps = json_array();
	for (unsigned i = 0; i < o.nsteps; i++)
		json_array_append_new(jsteps, release_pct_json(o.steps[i]));
	json_t *rel = json_pack("{s:s, s:o, s:I, s:o, s:s, s:i, s:o, s:I, s:I, s:s}",
		"node", o.node, "steps", jsteps, "every", (json_int_t)o.every,
		"guards", o.guards,
		"state", "running", "step", 0, "percent", release_pct_json(o.steps[0]),
		"since", (json_int_t)now, "started", (json_int_t)now,
		"reason", "started");
	if (o.region)
		json_object_set_new(rel, "region", json_string(o.region));
	if (o.isp)
		json_object_set_new(rel, "isp", json_string(o.isp));
	rows_t x = { rel, json_object() };
	char prefix[1200];
	wdb_row_prefix(prefix, sizeof(prefix), name);
	wdb_each(t, WDB_WEIGHT, prefix, row_cb, &x);
	if (!json_object_size(x.rows))
		ctl_die("release start: service %s has no weight row for region %s, ISP %s",
		        name, o.region ? o.region : "*", o.isp ? o.isp : "*");
	if (!rows_join(t, x.rows, rel, o.node, o.weight))
		ctl_die("release start: node %s is in none of the weight rows of %s for "
		        "region %s, ISP %s (give --weight W to add it to them with the "
		        "release)", o.node, name, o.region ? o.region : "*",
		        o.isp ? o.isp : "*");
	json_decref(x.rows);
	json_object_set_new(svc, "release", rel);
	ctl_set(t, WDB_SERVICE, name, svc);
	json_decref(svc);
	char what[1500], joined[80] = "";
	if (o.weight >= 0)
		snprintf(joined, sizeof(joined), ", joining its rows with weight %ld", o.weight);
	snprintf(what, sizeof(what), "release start %s node %s at %g%% (steps %s every "
	         "%us)%s", name, o.node, o.steps[0] / 100.0, o.steps_s, o.every, joined);
	ctl_commit(t, what);
	return 0;
}

/* pause, resume and abort: a state change of the release of argv[1]. */
static int release_change(const char *sub, int argc, char **argv)
{
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "release %s", sub);
	if (argc < 2)
		ctl_die("%s: missing service name", cmd);
	ctl_no_more_args(cmd, argc, argv, 2);
	char name[1100];
	ctl_service_name(argv[1], name, sizeof(name));
	wdb_txn_t *t = ctl_begin();
	char what[1300], err[1300];
	if (release_set_state(t, sub, name, (uint32_t)time(NULL), what, sizeof(what),
	                      err, sizeof(err)))
		ctl_die("%s: %s", cmd, err);
	ctl_commit(t, what);
	return 0;
}

static int release_show(int argc, char **argv)
{
	if (argc < 2)
		ctl_die("release show: missing service name");
	ctl_no_more_args("release show", argc, argv, 2);
	char name[1100];
	ctl_service_name(argv[1], name, sizeof(name));
	wdb_txn_t *t = ctl_begin_read();
	json_t *svc = wdb_get(t, WDB_SERVICE, name);
	if (!svc)
		ctl_die("release show: service %s does not exist", name);
	json_t *rel = json_object_get(svc, "release");
	if (!rel)
		ctl_die("release show: service %s has no release", name);
	json_t *v = release_view(name, rel);
	/* What the guards see now, from the same inputs as the
	 * controller. */
	json_t *seen = release_observed(t, &ctl_hc.steer, rel, (uint32_t)time(NULL));
	wdb_abort(t);
	json_decref(svc);
	json_object_set_new(v, "observed", seen);
	static const char *const keys[] = { "service", "node", "region", "isp", "state",
		"percent", "steps", "step", "every", "guards", "started", "since", "next",
		"reason", NULL };
	if (ctl_json)
		return ctl_show("release", v, keys);
	ctl_print_fields(v, keys);
	size_t i;
	json_t *o;
	json_array_foreach(seen, i, o) {
		json_t *val = json_object_get(o, "value");
		if (json_is_number(val))
			printf("%-16s %s: %g, %s\n", i ? "" : "observed",
			       json_string_value(json_object_get(o, "guard")), json_number_value(val),
			       json_is_true(json_object_get(o, "holds")) ? "holds" : "BROKEN");
		else
			printf("%-16s %s: no input since the step began: %s\n", i ? "" : "observed",
			       json_string_value(json_object_get(o, "guard")),
			       json_string_value(json_object_get(o, "missing")));
	}
	json_decref(v);
	return 0;
}

int ctl_cmd_release(int argc, char **argv)
{
	if (argc < 1)
		ctl_usage_die("release: missing subcommand (start, list, show, pause, "
		              "resume, abort)");
	const char *sub = argv[0];
	if (strcmp(sub, "start") == 0)
		return release_start(argc, argv);
	if (strcmp(sub, "show") == 0)
		return release_show(argc, argv);
	if (strcmp(sub, "list") == 0) {
		ctl_no_more_args("release list", argc, argv, 1);
		wdb_txn_t *t = ctl_begin_read();
		json_t *all = ctl_releases(t, NULL);
		wdb_abort(t);
		if (ctl_json)
			ctl_emit(json_pack("{s:o}", "releases", all));
		else {
			ctl_release_table(all);
			json_decref(all);
		}
		return 0;
	}
	if (strcmp(sub, "pause") == 0 || strcmp(sub, "resume") == 0 ||
	    strcmp(sub, "abort") == 0)
		return release_change(sub, argc, argv);
	ctl_usage_die("release: unknown subcommand '%s' (start, list, show, pause, resume, "
	              "abort)", sub);
}
