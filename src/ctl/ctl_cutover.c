/* SPDX-License-Identifier: MIT */
/* gslbctl cutover: announced maintenance windows of an area (S0-2) that
 * the health thread turns into pre-derating and pre-warming (S0-3,
 * S0-4). */
#include "ctl/ctl.h"
#include "health/cutover.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int has_region(const char *key, json_t *node, void *arg)
{
	(void)key;
	const char *r = json_string_value(json_object_get(node, "region"));
	return r && strcmp(r, arg) == 0;
}

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
	json_t *v = json_object();
	static const char *const keys[] = { "id", "region", "isp", "start_text",
		"end_text", "derate_pct", "prewarm_pct", "impact", "note", NULL };
	for (const char *const *k = keys; *k; k++)
		json_object_set_new(v, *k, ctl_field(w, *k));
	/* Opened by the health thread for an unannounced cutover. */
	json_object_set_new(v, "auto", json_boolean(json_is_true(json_object_get(w, "auto"))));
	json_t *n = json_object_get(w, "nodes");
	json_object_set_new(v, "nodes", json_is_array(n) ? json_incref(n) : json_array());
	ctl_set_time(v, "start", json_integer_value(json_object_get(w, "start")));
	ctl_set_time(v, "end", json_integer_value(json_object_get(w, "end")));
	json_object_set_new(v, "phase", json_string(cutover_phase_name(
		cutover_window_phase(&ctl_hc.cut, w, time(NULL)))));
	return v;
}

static const char *const impact_set[] = { "low", "medium", "high", NULL };

/* The options of `cutover add`, as given. */
typedef struct {
	const char *region, *isp, *start_s, *end_s, *impact, *note;
	long derate, prewarm;
	json_t *nodes;            /* owned */
	time_t start, end;
	unsigned level;           /* the derating level that applies */
} cut_add_t;

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
	json_t *w = wdb_get(t, WDB_CUTOVER, argv[1]);
	if (!w)
		ctl_die("cutover %s does not exist", argv[1]);
	if (strcmp(sub, "show") == 0) {
		static const char *const keys[] = { "id", "region", "isp", "nodes",
			"start", "end", "start_text", "end_text", "derate_pct",
			"prewarm_pct", "impact", "phase", "note", "auto", NULL };
		wdb_abort(t);
		ctl_show("cutover", ctl_window_view(w), keys);
		json_decref(w);
		return 0;
	}
	json_decref(w);
	ctl_set(t, WDB_CUTOVER, argv[1], NULL);
	char what[100];
	snprintf(what, sizeof(what), "cutover del %s", argv[1]);
	ctl_commit(t, what);
	return 0;
}

/* Reads the options of `cutover add` into @c. */
static void cutover_add_opts(wdb_txn_t *t, int argc, char **argv, cut_add_t *c)
{
	for (int i = 1; i < argc; i += 2) {
		const char *o = argv[i];
		if (i + 1 >= argc)
			ctl_die("cutover add: %s needs a value", o);
		const char *v = argv[i + 1];
		if (strcmp(o, "--region") == 0) {
			if (!ctl_valid_word(v, 0))
				ctl_die("cutover add: --region %s: use a short lowercase name like cn-gd", v);
			c->region = v;
		} else if (strcmp(o, "--isp") == 0) {
			if (!ctl_valid_word(v, 1))
				ctl_die("cutover add: --isp %s: use a short lowercase name like ctcc", v);
			c->isp = v;
		} else if (strcmp(o, "--node") == 0) {
			json_t *n = wdb_get(t, WDB_NODE, v);
			if (!n)
				ctl_die("cutover add: --node %s: no such node", v);
			json_decref(n);
			json_array_append_new(c->nodes, json_string(v));
		} else if (strcmp(o, "--start") == 0) {
			c->start_s = v;
		} else if (strcmp(o, "--end") == 0) {
			c->end_s = v;
		} else if (strcmp(o, "--impact") == 0) {
			c->impact = ctl_one_of(o, v, impact_set);
		} else if (strcmp(o, "--derate") == 0) {
			c->derate = ctl_parse_num(o, v, 1, 100);
		} else if (strcmp(o, "--prewarm") == 0) {
			c->prewarm = ctl_parse_num(o, v, 0, 100);
		} else if (strcmp(o, "--note") == 0) {
			c->note = v;
		} else {
			ctl_usage_die("cutover add: unknown option '%s'", o);
		}
	}
}

/* Checks the options of `cutover add` together and settles the area,
 * the times and the derating level. */
static void cutover_add_check(wdb_txn_t *t, cut_add_t *c)
{
	/* S0-2: a cutover is announced with its affected area. */
	if (!c->region && !json_array_size(c->nodes))
		ctl_die("cutover add: --region or --node is required: the area the "
		        "cutover affects");
	if (!c->region)
		c->region = "*"; /* the listed nodes are the area */
	if (!c->start_s || !c->end_s)
		ctl_die("cutover add: --start and --end are required (RFC 3339 with offset)");
	if (cutover_parse_time(c->start_s, &c->start))
		ctl_die("cutover add: --start %s: use RFC 3339 with an offset, e.g. 2026-12-01T02:00+08:00", c->start_s);
	if (cutover_parse_time(c->end_s, &c->end))
		ctl_die("cutover add: --end %s: use RFC 3339 with an offset, e.g. 2026-12-01T05:00+08:00", c->end_s);
	if (c->end <= c->start)
		ctl_die("cutover add: the window ends (%s) before it starts (%s)", c->end_s, c->start_s);
	if (c->end <= time(NULL))
		ctl_die("cutover add: the window ends in the past (%s)", c->end_s);
	if (c->impact && c->derate >= 0)
		ctl_die("cutover add: give --impact or --derate, not both");
	c->level = c->derate >= 0 ? (unsigned)c->derate :
	           ctl_hc.cut.impact[c->impact ? (strcmp(c->impact, "low") == 0 ? 0 :
	                             strcmp(c->impact, "medium") == 0 ? 1 : 2) : 1];
	if (!json_array_size(c->nodes) &&
	    !wdb_each(t, WDB_NODE, NULL, has_region, (void *)c->region))
		ctl_die("cutover add: --region %s: no node is in that region", c->region);
	if (c->isp)
		ctl_check_area(t, "cutover add", 1, c->isp);
}

/* Overlaps: the same scope at overlapping times must agree.  Returns 1
 * when the very same window exists already (after saying so), else 0
 * with the highest window number in use in *@maxid. */
static int cutover_add_overlaps(wdb_txn_t *t, const cut_add_t *c, unsigned *maxid)
{
	json_t *all = json_array();
	wdb_each(t, WDB_CUTOVER, NULL, ctl_collect_value, all);
	size_t i;
	json_t *w;
	*maxid = 0;
	json_array_foreach(all, i, w) {
		const char *wid = json_string_value(json_object_get(w, "id"));
		if (wid && wid[0] == 'c' && (unsigned)atoi(wid + 1) > *maxid)
			*maxid = (unsigned)atoi(wid + 1);
		if (strcmp(json_string_value(json_object_get(w, "region")) ?: "", c->region) ||
		    strcmp(json_string_value(json_object_get(w, "isp")) ?: "", c->isp) ||
		    !json_equal(json_object_get(w, "nodes"), c->nodes))
			continue;
		time_t ws = (time_t)json_integer_value(json_object_get(w, "start"));
		time_t we = (time_t)json_integer_value(json_object_get(w, "end"));
		if (we <= c->start || ws >= c->end)
			continue;
		if (ws == c->start && we == c->end &&
		    json_integer_value(json_object_get(w, "derate_pct")) == c->level &&
		    json_integer_value(json_object_get(w, "prewarm_pct")) == c->prewarm) {
			printf("cutover add: the same window exists already as %s; nothing to change\n", wid);
			json_decref(all); /* wid points into it: free after use */
			return 1;
		}
		ctl_die("cutover add: overlaps window %s (%s .. %s) for the same area with "
		    "different settings; change or delete that one", wid,
		    json_string_value(json_object_get(w, "start_text")),
		    json_string_value(json_object_get(w, "end_text")));
	}
	json_decref(all);
	return 0;
}

static int cutover_add(wdb_txn_t *t, int argc, char **argv)
{
	cut_add_t c = { .isp = "*", .note = "", .derate = -1,
	                .prewarm = ctl_hc.cut.prewarm, .nodes = json_array() };
	cutover_add_opts(t, argc, argv, &c);
	cutover_add_check(t, &c);
	unsigned maxid;
	if (cutover_add_overlaps(t, &c, &maxid)) {
		wdb_abort(t);
		json_decref(c.nodes);
		return 0;
	}
	/* Never the id of a window deleted or rolled back since. */
	char id[24];
	snprintf(id, sizeof(id), "c%llu", (unsigned long long)wdb_cutover_next_id(t, maxid));
	json_t *win = json_pack("{s:s, s:s, s:s, s:o, s:I, s:I, s:s, s:s, s:i, s:i, s:s, s:s}",
		"id", id, "region", c.region, "isp", c.isp, "nodes", c.nodes,
		"start", (json_int_t)c.start, "end", (json_int_t)c.end,
		"start_text", c.start_s, "end_text", c.end_s, "derate_pct", (int)c.level,
		"prewarm_pct", (int)c.prewarm,
		"impact", c.impact ? c.impact : (c.derate >= 0 ? "custom" : "medium"),
		"note", c.note);
	ctl_set(t, WDB_CUTOVER, id, win);
	json_decref(win);
	char what[300];
	snprintf(what, sizeof(what), "cutover add %s region=%s isp=%s %s..%s derate %u%%",
	         id, c.region, c.isp, c.start_s, c.end_s, c.level);
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
