/* SPDX-License-Identifier: MIT */
/* gslbctl metrics, status and history: operator-pushed metrics (S1-2,
 * S2-2), the health decision and effective weight of every node, and a
 * node's score history (S2-10). */
#include "ctl/ctl.h"
#include "ctl/ctl_steer.h"
#include "health/cutover.h"
#include "ctl/ctl_release.h"
#include "health/push.h"
#include "health/score.h"
#include "steer/steer.h"
#include "store/plan.h"
#include "store/status.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* How long pushed samples are kept (steer_conf_keep()). */
static double sample_keep(void)
{
	return steer_conf_keep(&ctl_hc.steer);
}

/* One push (@argc, @argv start at "push") of time @now into @t, its
 * words appended to @lines; dies on an error. */
static void push_one(wdb_txn_t *t, int argc, char **argv, uint32_t now, json_t *lines,
                     char *msg, size_t size)
{
	char err[1200];
	if (push_apply(t, argc, argv, now, sample_keep(), ctl_hc.steer.skew, msg, size, err,
	               sizeof(err)))
		ctl_die("%s", err);
	json_t *words = json_array();
	for (int i = 1; i < argc; i++)
		json_array_append_new(words, json_string(argv[i]));
	json_array_append_new(lines, words);
}

/* Commits the pushes validated in @t (@lines, their words): into the
 * local store, or in cluster mode into etcd, from where every gslbd
 * applies them.  Returns the cluster revision, 0 when local. */
static int64_t push_commit(wdb_txn_t *t, json_t *lines, uint32_t now)
{
	char err[512];
	int64_t rev = 0;
	if (json_array_size(lines) &&
	    ctl_cluster_push(lines, now, sample_keep(), ctl_hc.steer.skew, &rev)) {
		wdb_abort(t);
	} else if (wdb_commit(t, "metrics", err, sizeof(err)) < 0) {
		ctl_die("%s", err);
	}
	json_decref(lines);
	if (!rev)
		ctl_warn_no_daemon();
	return rev;
}

/* metrics push --file FILE|-: one push per line (the words after
 * "metrics push"; blank lines and # comments skipped), all in one
 * transaction, so a metrics pipeline pays for one process and one
 * commit per round.  An error names FILE:LINE and nothing is written. */
static int push_file(const char *path)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	if (!f)
		ctl_die("metrics push --file %s: %s", path, strerror(errno));
	const char *name = f == stdin ? ctl_stdin_name() : path;
	wdb_txn_t *t = ctl_begin();
	uint32_t now = (uint32_t)time(NULL);
	json_t *lines = json_array();
	char *line = NULL, where[4200], msg[400];
	size_t cap = 0;
	unsigned lineno = 0, pushed = 0;
	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		char *argv[PUSH_MAX_WORDS + 1], *save = NULL;
		int argc = 0;
		argv[argc++] = "push";
		snprintf(where, sizeof(where), "%s:%u", name, lineno);
		ctl_die_where = where;
		for (char *w = strtok_r(line, " \t\r\n", &save); w && *w != '#';
		     w = strtok_r(NULL, " \t\r\n", &save)) {
			if (argc == PUSH_MAX_WORDS + 1)
				ctl_die("metrics push: more than %d words on a line", PUSH_MAX_WORDS);
			argv[argc++] = w;
		}
		if (argc > 1) {
			push_one(t, argc, argv, now, lines, msg, sizeof(msg));
			pushed++;
		}
		ctl_die_where = NULL;
	}
	if (ferror(f))
		ctl_die("metrics push --file %s: %s", path, strerror(errno));
	free(line);
	if (f != stdin)
		fclose(f);
	int64_t rev = push_commit(t, lines, now);
	/* In cluster mode named by the cluster's revision, as every change
	 * (ctl_cluster.c). */
	if (ctl_json && rev)
		printf("{\"pushed\": %u, \"revision\": %lld}\n", pushed, (long long)rev);
	else if (ctl_json)
		printf("{\"pushed\": %u}\n", pushed);
	else if (rev)
		printf("cluster revision %lld: %u measurement%s from %s\n", (long long)rev,
		       pushed, pushed == 1 ? "" : "s", name);
	else
		printf("%u measurement%s from %s stored\n", pushed, pushed == 1 ? "" : "s", name);
	return 0;
}

int ctl_cmd_metrics(int argc, char **argv)
{
	if (argc < 1 || strcmp(argv[0], "push") != 0)
		ctl_die("metrics: usage: metrics push NODE KEY=VALUE...");
	if (argc >= 2 && strcmp(argv[1], "--file") == 0) {
		if (argc < 3)
			ctl_usage_die("metrics push --file: give a file name, or - for stdin");
		ctl_no_more_args("metrics push --file FILE", argc, argv, 3);
		return push_file(argv[2]);
	}
	if (argc < 3)
		ctl_die("metrics push: give a node and at least one KEY=VALUE");
	wdb_txn_t *t = ctl_begin();
	uint32_t now = (uint32_t)time(NULL);
	json_t *lines = json_array();
	char msg[400];
	push_one(t, argc, argv, now, lines, msg, sizeof(msg));
	int64_t rev = push_commit(t, lines, now);
	if (ctl_json && rev)
		printf("{\"revision\": %lld}\n", (long long)rev);
	else if (!ctl_json && rev)
		printf("cluster revision %lld: %s\n", (long long)rev, msg);
	else if (!ctl_json)
		printf("%s\n", msg);
	return 0;
}

static const char *ago(uint32_t t, char *buf, size_t size)
{
	uint32_t now = (uint32_t)time(NULL);
	if (!t)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%us", now > t ? now - t : 0);
	return buf;
}

/* The width of the STATE column: its longest word, "unmonitored". */
#define STATE_WIDTH 11

/* Prints one line of the node table of `status` (@n from out.nodes). */
static void print_status_node(json_t *n)
{
	/* JSON null where the node has no record yet. */
	json_t *h = json_object_get(n, "health");
	json_t *st = json_object_get(n, "status");
	if (json_is_null(h))
		h = NULL;
	char buf[32], lp[64] = "-";
	json_t *pr = json_array_get(json_object_get(st, "probes"), 0);
	if (pr)
		snprintf(lp, sizeof(lp), "%s %lldms",
		         json_is_true(json_object_get(pr, "ok")) ? "ok" : "FAIL",
		         json_integer_value(json_object_get(pr, "total_ms")));
	json_t *sc = json_object_get(n, "score");
	char scs[16] = "-";
	if (json_is_number(sc))
		snprintf(scs, sizeof(scs), "%.0f", json_number_value(sc));
	const char *pf = json_string_value(json_object_get(st, "profile"));
	printf("%-18s %-*s %-6s %-8s %6s %-10s %-8s %-12s %s%s\n",
	       json_string_value(json_object_get(n, "node")), STATE_WIDTH,
	       json_string_value(json_object_get(n, "state")),
	       json_string_value(json_object_get(n, "admin")),
	       json_string_value(json_object_get(n, "pool")), scs, pf ? pf : "-",
	       ago((uint32_t)json_integer_value(json_object_get(n, "state_since_unix")),
	           buf, sizeof(buf)),
	       lp,
	       h ? json_string_value(json_object_get(h, "reason")) : "",
	       json_is_true(json_object_get(h, "gray")) ? " [gray switch]" : "");
	/* S1-3: what its probes cost, against their budget. */
	double pr_bps = json_number_value(json_object_get(st, "probe_bytes_per_s"));
	if (pr_bps > 0)
		printf("%-18s   probes %.0f bytes/s, budget %.0f bytes/s%s\n", "", pr_bps,
		       json_number_value(json_object_get(st, "probe_budget")),
		       json_is_true(json_object_get(st, "probe_over_budget")) ?
		       " [over budget]" : "");
	const char *ph = json_string_value(json_object_get(h, "cutover_phase"));
	if (ph)
		printf("%-18s   cutover %s %s: weight %lld%%, pre-warm %lld%%\n", "",
		       json_string_value(json_object_get(h, "cutover_window")), ph,
		       json_integer_value(json_object_get(h, "cutover_pct")),
		       json_integer_value(json_object_get(h, "prewarm_pct")));
}

/* Prints the tables of `status` from its JSON form @out. */
static void print_status(json_t *out)
{
	size_t i;
	json_t *n, *r;
	printf("%-18s %-*s %-6s %-8s %6s %-10s %-8s %-12s %s\n", "NODE",
	       STATE_WIDTH, "STATE",
	       "ADMIN", "POOL", "SCORE", "PROFILE", "IN STATE", "LAST PROBE", "REASON");
	json_array_foreach(json_object_get(out, "nodes"), i, n)
		print_status_node(n);
	printf("\n%-30s %-10s %-8s %s\n", "SERVICE", "REGION", "ISP",
	       "NODE=EFFECTIVE/CONFIGURED (x = not usable)");
	json_array_foreach(json_object_get(out, "rows"), i, r) {
		printf("%-30s %-10s %-8s", json_string_value(json_object_get(r, "service")),
		       json_string_value(json_object_get(r, "region")),
		       json_string_value(json_object_get(r, "isp")));
		size_t k;
		json_t *m;
		json_array_foreach(json_object_get(r, "nodes"), k, m)
			printf(" %s=%lld/%lld%s", json_string_value(json_object_get(m, "node")),
			       json_integer_value(json_object_get(m, "effective")),
			       json_integer_value(json_object_get(m, "weight")),
			       json_is_true(json_object_get(m, "usable")) ? "" : "x");
		putchar('\n');
		json_t *nr = json_object_get(r, "nearest");
		if (nr)
			printf("%-30s nearest: %s\n", "",
			       json_string_value(json_object_get(nr, "reason")));
	}
	json_t *wins = json_object_get(out, "cutovers");
	if (json_array_size(wins)) {
		printf("\n%-6s %-8s %-6s %-22s %-22s %7s %7s  %-11s %s\n", "CUTOVER",
		       "REGION", "ISP", "START", "END", "DERATE", "PREWARM", "PHASE",
		       "NODES NOTE");
		json_array_foreach(wins, i, r)
			ctl_print_window(r);
	}
	json_t *rels = json_object_get(out, "releases");
	if (json_array_size(rels)) {
		putchar('\n');
		ctl_release_table(rels);
	}
}

int ctl_cmd_status(int argc, char **argv)
{
	char name[1100] = "";
	if (argc > 1)
		ctl_die("status: unexpected argument '%s'", argv[1]);
	if (argc == 1)
		ctl_service_name(argv[0], name, sizeof(name));
	wdb_txn_t *t = ctl_begin_read();
	json_t *out = wdb_status_view(ctl_db, t, name);
	json_t *wins = json_array();
	wdb_each(t, WDB_CUTOVER, NULL, ctl_collect_value, wins);
	size_t i;
	json_t *r;
	json_array_foreach(wins, i, r)
		json_object_set_new(r, "phase", json_string(cutover_phase_name(
			cutover_window_phase(&ctl_hc.cut, r, time(NULL)))));
	json_object_set_new(out, "releases", ctl_releases(t, name));
	json_object_set_new(out, "daemon", ctl_daemon_state(t));
	wdb_abort(t);
	if (ctl_json) {
		json_object_set_new(out, "cutovers", ctl_views(wins, ctl_window_view));
		ctl_emit(out);
	} else {
		json_object_set_new(out, "cutovers", json_incref(wins));
		ctl_print_daemon_state(json_object_get(out, "daemon"));
		print_status(out);
		json_decref(out);
	}
	json_decref(wins);
	return 0;
}

static int history_collect(uint32_t tm, json_t *sample, void *arg)
{
	json_object_set_new(sample, "time", json_integer(tm));
	json_array_append(arg, sample);
	return 0;
}

/* A score sample as `history --json` shows it (gslbctl(8), JSON
 * OUTPUT); samples written before the dimensions were kept have none. */
static json_t *history_view(json_t *s)
{
	json_t *v = json_object();
	ctl_set_time(v, "time", json_integer_value(json_object_get(s, "time")));
	static const char *const keys[] = { "score", "state", "profile", "dims",
	                                    "gray_pct", NULL };
	for (const char *const *k = keys; *k; k++)
		json_object_set_new(v, *k, ctl_field(s, *k));
	return v;
}

int ctl_cmd_history(int argc, char **argv)
{
	if (argc < 1)
		ctl_die("history: give a node id");
	uint32_t since = 0;
	int dims = 0;
	for (int i = 1; i < argc; i += 2) {
		if (strcmp(argv[i], "--dimensions") == 0) {
			dims = 1;
			i--;
			continue;
		}
		if (strcmp(argv[i], "--since") != 0 || i + 1 >= argc)
			ctl_die("history: usage: history NODE [--since TIME] [--dimensions]");
		int64_t tt = ctl_parse_utc(argv[i + 1]);
		if (tt > 0)
			since = (uint32_t)tt;
		else if (isdigit((unsigned char)argv[i + 1][0]))
			since = (uint32_t)ctl_parse_num("--since", argv[i + 1], 0, INT32_MAX);
		else
			ctl_die("history: --since %s: use RFC 3339 UTC (2026-12-01T02:00:00Z) or unix time",
			    argv[i + 1]);
	}
	wdb_txn_t *t = ctl_begin_read();
	json_t *node = wdb_get(t, WDB_NODE, argv[0]);
	wdb_abort(t);
	if (!node)
		ctl_die("history: node %s does not exist", argv[0]);
	json_decref(node);
	json_t *all = json_array();
	int rc = wdb_history_each(ctl_db, argv[0], since, history_collect, all);
	if (rc < 0)
		ctl_die("history: cannot read the history: %s", wdb_strerror(rc));
	if (ctl_json) {
		ctl_emit(json_pack("{s:s, s:o}", "node", argv[0], "samples",
		                   ctl_views(all, history_view)));
	} else {
		size_t i;
		json_t *s;
		json_array_foreach(all, i, s) {
			time_t tt = (time_t)json_integer_value(json_object_get(s, "time"));
			struct tm tm;
			char buf[40];
			gmtime_r(&tt, &tm);
			strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
			double sc = json_real_value(json_object_get(s, "score"));
			const char *st = json_string_value(json_object_get(s, "state"));
			if (dims)
				printf("%s  %6.1f  %-8s", buf, sc, st);
			else
				printf("%s  %6.1f  %s", buf, sc, st);
			/* S2-10: the dimensions behind the score, 0..1 each
			 * ("-" without input, or in records written before
			 * they were kept). */
			json_t *dv = json_object_get(s, "dims");
			for (size_t k = 0; dims && k < 4; k++) {
				double x = json_real_value(json_array_get(dv, k));
				if (json_array_get(dv, k) && x >= 0)
					printf("  %4.2f", x);
				else
					printf("  %4s", "-");
			}
			putchar('\n');
		}
	}
	json_decref(all);
	return 0;
}

