/* SPDX-License-Identifier: MIT */
/* gslbctl cutover: announced maintenance windows of an area (S0-2) that
 * the health thread turns into pre-derating and pre-warming (S0-3,
 * S0-4). */
#include "ctl/ctl.h"
#include "health/cutover.h"
#include "health/cutover_edit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void ctl_print_window(json_t *w)
{
	char nodes[300];
	ctl_join(json_object_get(w, "nodes"), nodes, sizeof(nodes));
	cutover_phase_t ph = cutover_window_phase(&ctl_hc.cut, w, time(NULL));
	printf("%-6s %-8s %-6s %-22s %-22s %6lld%% %6lld%%  %-11s %s%s%s\n",
	       json_string_value(json_object_get(w, "id")),
	       json_string_value(json_object_get(w, "region")),
	       json_string_value(json_object_get(w, "isp")),
	       json_string_value(json_object_get(w, "start_text")),
	       json_string_value(json_object_get(w, "end_text")),
	       json_integer_value(json_object_get(w, "derate_pct")),
	       json_integer_value(json_object_get(w, "prewarm_pct")),
	       cutover_phase_name(ph), nodes, *nodes ? " " : "",
	       json_string_value(json_object_get(w, "note")) ?: "");
}

json_t *ctl_window_view(json_t *w)
{
	return cutover_window_view(&ctl_hc.cut, w, time(NULL));
}

static int cutover_list(wdb_txn_t *t)
{
	json_t *all = json_array();
	wdb_each(t, WDB_CUTOVER, NULL, ctl_collect_value, all);
	wdb_abort(t);
	size_t i;
	json_t *w;
	if (ctl_json) {
		ctl_emit(json_pack("{s:o}", "cutovers", ctl_views(all, ctl_window_view)));
	} else {
		printf("%-6s %-8s %-6s %-22s %-22s %7s %7s  %-11s %s\n", "ID", "REGION",
		       "ISP", "START", "END", "DERATE", "PREWARM", "PHASE", "NODES NOTE");
		json_array_foreach(all, i, w)
			ctl_print_window(w);
	}
	json_decref(all);
	return 0;
}

static int cutover_show_del(wdb_txn_t *t, const char *sub, int argc, char **argv)
{
	if (argc != 2)
		ctl_die("cutover %s: give one window id", sub);
	char what[100], err[300];
	if (strcmp(sub, "show") == 0) {
		static const char *const keys[] = { "id", "region", "isp", "nodes",
			"start", "end", "start_text", "end_text", "derate_pct",
			"prewarm_pct", "impact", "phase", "note", "auto", NULL };
		json_t *w = wdb_get(t, WDB_CUTOVER, argv[1]);
		if (!w)
			ctl_die("cutover %s does not exist", argv[1]);
		wdb_abort(t);
		ctl_show("cutover", ctl_window_view(w), keys);
		json_decref(w);
		return 0;
	}
	if (cutover_window_delete(t, argv[1], what, sizeof(what), err, sizeof(err)))
		ctl_die("%s", err);
	ctl_commit(t, what);
	return 0;
}

/* Reads the options of `cutover add` into @c: their values are checked
 * by cutover_window_add(), as the API's are. */
static void cutover_add_opts(int argc, char **argv, cutover_add_t *c)
{
	static const char *const opts[] = { "--region", "--isp", "--start",
		"--end", "--impact", "--note", "--derate", "--prewarm", NULL };
	const char **slot[] = { &c->region, &c->isp, &c->start, &c->end,
		&c->impact, &c->note, &c->derate, &c->prewarm };
	for (int i = 1; i < argc; i += 2) {
		const char *o = argv[i];
		if (i + 1 >= argc)
			ctl_die("cutover add: %s needs a value", o);
		const char *v = argv[i + 1];
		int k = 0;
		while (opts[k] && strcmp(o, opts[k]) != 0)
			k++;
		if (opts[k])
			*slot[k] = v;
		else if (strcmp(o, "--node") == 0)
			json_array_append_new(c->nodes, json_string(v));
		else
			ctl_usage_die("cutover add: unknown option '%s'", o);
	}
}

/* cutover_window_add()'s area check: gslbctl's, which dies on a name no
 * client is located in. */
static int check_area(void *arg, wdb_txn_t *t, const char *cmd, int isp,
                      const char *v, char *err, size_t errlen)
{
	(void)arg, (void)err, (void)errlen;
	ctl_check_area(t, cmd, isp, v);
	return 0;
}

static int cutover_add(wdb_txn_t *t, int argc, char **argv)
{
	cutover_add_t c = { .nodes = json_array() };
	cutover_add_opts(argc, argv, &c);
	char id[32], what[300], err[600];
	const char *field;
	int rc = cutover_window_add(t, &ctl_hc.cut, &c, time(NULL), check_area,
	                            NULL, id, sizeof(id), what, sizeof(what), err,
	                            sizeof(err), &field);
	json_decref(c.nodes);
	if (rc)
		ctl_die("cutover add: %s", err);
	if (!*what) {
		wdb_abort(t);
		printf("cutover add: %s\n", err);
		return 0;
	}
	ctl_commit(t, what);
	return 0;
}

int ctl_cmd_cutover(int argc, char **argv)
{
	if (argc < 1)
		ctl_die("cutover: missing subcommand (add, list, show, del)");
	const char *sub = argv[0];
	int reads = strcmp(sub, "list") == 0 || strcmp(sub, "show") == 0;
	wdb_txn_t *t = reads ? ctl_begin_read() : ctl_begin();
	if (strcmp(sub, "list") == 0) {
		ctl_no_more_args("cutover list", argc, argv, 1);
		return cutover_list(t);
	}
	if (strcmp(sub, "show") == 0 || strcmp(sub, "del") == 0)
		return cutover_show_del(t, sub, argc, argv);
	if (strcmp(sub, "add") != 0)
		ctl_usage_die("cutover: unknown subcommand '%s'", sub);
	return cutover_add(t, argc, argv);
}
