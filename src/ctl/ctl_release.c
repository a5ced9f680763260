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

/* Reads the options of `release start` (argv[2..argc)) into @in (the
 * guards into the new array @in->guards): an unknown option, one without
 * a value or one missing ends gslbctl here (exit 2); their values are
 * checked by release_start(), as the API's are. */
static void start_options(int argc, char **argv, release_start_in_t *in)
{
	in->guards = json_array();
	for (int i = 2; i < argc; i++) {
		const char *opt = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		static const char *const opts[] = { "--node", "--region", "--isp",
			"--steps", "--every", "--weight", NULL };
		const char **slot[] = { &in->node, &in->region, &in->isp, &in->steps,
			&in->every, &in->weight };
		int k = 0;
		while (opts[k] && strcmp(opt, opts[k]) != 0)
			k++;
		if (!opts[k] && strcmp(opt, "--guard") != 0)
			ctl_usage_die("release start: unknown option '%s'", opt);
		if (!v)
			ctl_usage_die("release start: %s needs a value", opt);
		i++;
		if (opts[k])
			*slot[k] = v;
		else
			json_array_append_new(in->guards, json_string(v));
	}
	if (!in->node)
		ctl_usage_die("release start: give --node NEW");
	if (!in->steps)
		ctl_usage_die("release start: give --steps, like 1,5,25,50,100");
	if (!in->every)
		ctl_usage_die("release start: give --every, like 10m");
}

static int release_start_cmd(int argc, char **argv)
{
	if (argc < 2)
		ctl_die("release start: missing service name");
	char name[1100];
	ctl_service_name(argv[1], name, sizeof(name));
	release_start_in_t in = { 0 };
	start_options(argc, argv, &in);
	wdb_txn_t *t = ctl_begin();
	char what[1500], err[1500];
	const char *field;
	int rc = release_start(t, name, &in, (uint32_t)time(NULL), what, sizeof(what),
	                       err, sizeof(err), &field);
	json_decref(in.guards);
	if (rc)
		ctl_die("release start: %s", err);
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
		return release_start_cmd(argc, argv);
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
