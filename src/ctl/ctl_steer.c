/* SPDX-License-Identifier: MIT */
/* gslbctl's steering commands: the inputs of the steering engine
 * (`metrics push` per region and ISP, provider spend, node price), the
 * service options that turn it on, budgets, `steer show` and `steer
 * unpin`, and the steering part of `explain` (S3-1..S3-9); `steer
 * replay` is in ctl_replay.c. */
#include "ctl/ctl_steer.h"
#include "store/rollback.h"
#include "steer/nearest_run.h"
#include "health/budget_edit.h"
#include "health/push.h"
#include "steer/steer_edit.h"
#include "steer/steer_run.h"
#include "store/apply.h"
#include "store/plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A number of option or key @what in [@lo, @hi]; dies otherwise. */
static double parse_real(const char *cmd, const char *what, const char *v,
                         double lo, double hi)
{
	char err[400];
	double d;
	if (push_parse_real(cmd, what, v, lo, hi, &d, err, sizeof(err)))
		ctl_die("%s", err);
	return d;
}

/* Node and service options ----------------------------------------- */

int ctl_steer_node_opt(json_t *n, const char *id, const char *o, const char *v)
{
	if (strcmp(o, "--provider") == 0) {
		if (strcmp(v, "none") == 0) {
			json_object_del(n, "provider");
			return 1;
		}
		if (!ctl_valid_word(v, 0))
			ctl_die("node %s: --provider %s: use a short lowercase name like cdn-a", id, v);
		json_object_set_new(n, "provider", json_string(v));
		return 1;
	}
	if (strcmp(o, "--cost-per-gb") == 0) {
		if (strcmp(v, "none") == 0)
			json_object_del(n, "cost_per_gb");
		else
			json_object_set_new(n, "cost_per_gb", json_real(parse_real("node",
			                    "--cost-per-gb", v, 0, WDB_COST_PER_GB_MAX)));
		return 1;
	}
	return 0;
}

/* --weights success=A,latency=B,cost=C (missing terms weigh 0). */
static json_t *parse_weights(const char *sub, const char *v)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", v);
	json_t *w = json_pack("{s:f, s:f, s:f}", "success", 0.0, "latency", 0.0, "cost", 0.0);
	char *save = NULL;
	for (char *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(p, '=');
		if (eq)
			*eq = 0;
		if (!eq || !json_object_get(w, p))
			ctl_die("service %s: --weights %s: give success=A,latency=B,cost=C", sub, v);
		json_object_set_new(w, p, json_real(parse_real("service", "--weights", eq + 1, 0,
		                                               WDB_WEIGHT_TERM_MAX)));
	}
	if (!wdb_steer_weights_ok(w))
		ctl_die("service %s: --weights %s: the weights add up to 0", sub, v);
	return w;
}

int ctl_steer_service_opt(json_t *s, const char *sub, const char *o, const char *v)
{
	if (strcmp(o, "--steering") == 0) {
		if (strcmp(ctl_one_of(o, v, wdb_steering_set), "static") == 0)
			json_object_del(s, "steering");
		else
			json_object_set_new(s, "steering", json_string(v));
		if (strcmp(v, "nearest") != 0) {
			json_object_del(s, "switch_margin");
			json_object_del(s, "headroom");
		}
	} else if (strcmp(o, "--policy") == 0) {
		json_object_set_new(s, "policy", json_string(ctl_one_of(o, v, wdb_policy_set)));
		if (strcmp(v, "custom") != 0)
			json_object_del(s, "steer_weights");
	} else if (strcmp(o, "--weights") == 0) {
		json_object_set_new(s, "steer_weights", parse_weights(sub, v));
		json_object_set_new(s, "policy", json_string("custom"));
	} else if (strcmp(o, "--sla") == 0) {
		if (strcmp(v, "default") == 0)
			json_object_del(s, "sla");
		else
			json_object_set_new(s, "sla", json_real(parse_real("service", "--sla", v, 0, 100)));
	} else {
		return ctl_nearest_service_opt(s, sub, o, v);
	}
	return 1;
}

/* Rollback and pins ------------------------------------------------ */

int ctl_steer_rollback(json_t *rec, int64_t id, int dry)
{
	wdb_txn_t *t = dry ? ctl_begin_read() : ctl_begin();
	json_t *rows;
	char err[600];
	if (wdb_rollback_pins(t, rec, id, ctl_user, (int64_t)time(NULL), &rows, err,
	                      sizeof(err)))
		ctl_die("rollback: %s", err);
	const char *key;
	json_t *row;
	json_object_foreach(rows, key, row) {
		json_t *w = plan_row_weights(row, 1);
		if (!ctl_json || dry) {
			printf("%s row %s at ", dry ? "rollback would pin" : "pinning", key);
			const char *nid;
			json_t *v;
			int first = 1;
			if (w == json_object_get(row, "weights"))
				printf("the operator's weights");
			else
				json_object_foreach(w, nid, v) {
					printf("%s%s %.2f%%", first ? "" : ", ", nid,
					       json_integer_value(v) / 100.0);
					first = 0;
				}
			printf(" (before change %lld)\n", (long long)id);
		}
		if (!dry)
			ctl_set(t, WDB_WEIGHT, key, row);
	}
	json_decref(rows);
	if (dry) {
		wdb_abort(t);
		printf("--dry-run: nothing was written\n");
		return 0;
	}
	wdb_txn_note(t, "undoes", json_integer(id));
	char what[200];
	snprintf(what, sizeof(what), "rollback %lld: steering pinned", (long long)id);
	ctl_commit(t, what);
	return 0;
}

/* Budgets ---------------------------------------------------------- */

static int budget_list(void)
{
	wdb_txn_t *t = ctl_begin_read();
	json_t *all = budget_list_view(t, (uint32_t)time(NULL));
	wdb_abort(t);
	const char *name;
	json_t *b;
	if (ctl_json) {
		ctl_print_json(all);
	} else {
		printf("%-16s %12s %7s %6s %12s %s\n", "PROVIDER", "LIMIT", "PERIOD", "ALERT",
		       "SPENT", "STATE");
		json_object_foreach(all, name, b)
			printf("%-16s %12.2f %7s %5.0f%% %12.2f %s\n", name,
			       json_number_value(json_object_get(b, "limit")),
			       json_string_value(json_object_get(b, "period")) ?: "month",
			       json_number_value(json_object_get(b, "alert")),
			       json_number_value(json_object_get(b, "spent")),
			       json_string_value(json_object_get(b, "state")));
	}
	json_decref(all);
	return 0;
}

/* budget set and del: checked and written by budget_set() and
 * budget_delete() (health/budget_edit.h), as the API's are. */
int ctl_cmd_budget(int argc, char **argv)
{
	if (argc < 1)
		ctl_die("budget: missing subcommand (set, del, list)");
	if (strcmp(argv[0], "list") == 0)
		return budget_list();
	if (strcmp(argv[0], "set") != 0 && strcmp(argv[0], "del") != 0)
		ctl_die("budget: unknown subcommand '%s' (set, del, list)", argv[0]);
	const char *name = argc < 2 ? NULL : argv[1];
	char what[300], err[600];
	const char *field;
	budget_in_t in = { 0 };
	int del = strcmp(argv[0], "del") == 0;
	if (!name || !push_valid_word(name, 0))
		ctl_die("budget %s: give a provider name like cdn-a", argv[0]);
	for (int i = 2; !del && i < argc; i++) {
		const char *o = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v)
			ctl_die("budget set: %s needs a value", o);
		i++;
		if (strcmp(o, "--limit") == 0)
			in.limit = v;
		else if (strcmp(o, "--alert") == 0)
			in.alert = v;
		else if (strcmp(o, "--period") == 0)
			in.period = v;
		else
			ctl_die("budget set: unknown option '%s'", o);
	}
	wdb_txn_t *t = ctl_begin();
	if (del ? budget_delete(t, name, what, sizeof(what), err, sizeof(err))
	        : budget_set(t, name, &in, what, sizeof(what), err, sizeof(err), &field))
		ctl_die("%s", err);
	ctl_commit(t, what);
	return 0;
}

/* steer show ------------------------------------------------------- */

/* The steering view of row @key: the engine's last evaluation and the
 * shares in force; NULL when the service does not steer. */
json_t *ctl_steer_row(wdb_txn_t *t, const char *key)
{
	return steer_row_view(t, &ctl_hc.steer, key, (uint32_t)time(NULL));
}

static void opt_num(json_t *n, const char *k, const char *fmt)
{
	json_t *v = json_object_get(n, k);
	if (json_is_number(v))
		printf(fmt, json_number_value(v));
	else
		printf("%*s", (int)strlen(k) < 7 ? 7 : (int)strlen(k), "-");
}

void ctl_steer_print(json_t *st)
{
	if (json_object_get(st, "mode")) {
		ctl_nearest_print(st);
		return;
	}
	json_t *w = json_object_get(st, "weights");
	int shadow = json_is_true(json_object_get(st, "shadow"));
	printf("steering  %s, policy %s (success %.2f, latency %.2f, cost %.2f), SLA %.1f%%\n",
	       shadow ? "shadow" : "dynamic", json_string_value(json_object_get(st, "policy")),
	       json_number_value(json_object_get(w, "success")),
	       json_number_value(json_object_get(w, "latency")),
	       json_number_value(json_object_get(w, "cost")),
	       json_number_value(json_object_get(st, "sla")));
	printf("          row %s: %s; last evaluation: %s\n", json_string_value(json_object_get(st, "row")),
	       shadow ? "shadow, the operator's weights answer; SHARE% is what the engine would apply" :
	       json_is_true(json_object_get(st, "steered")) ? "engine's shares in force" :
	       "operator's weights in force",
	       json_string_value(json_object_get(st, "verdict")));
	json_t *pin = json_object_get(st, "pinned");
	if (pin)
		printf("          pinned by %s at %s (rollback of change %lld): the engine "
		       "leaves this row alone until steer unpin\n",
		       json_string_value(json_object_get(pin, "by")),
		       json_string_value(json_object_get(pin, "at")),
		       json_integer_value(json_object_get(pin, "change")));
	printf("  %-14s %5s %7s %7s %7s %6s %6s %7s %7s  %s\n", "NODE", "BASE", "SUCCESS",
	       "LATENCY", "COST", "SCORE", "SMOOTH", "TARGET%", "SHARE%", "LIMITS");
	const char *id;
	json_t *n;
	json_object_foreach(json_object_get(st, "nodes"), id, n) {
		printf("  %-14s %5lld ", id, json_integer_value(json_object_get(n, "base")));
		opt_num(n, "success", "%7.2f");
		printf(" ");
		opt_num(n, "latency", "%7.1f");
		printf(" ");
		opt_num(n, "cost", "%7.3f");
		printf(" ");
		if (json_object_get(n, "raw"))
			printf("%6.3f %6.3f %7.2f", json_number_value(json_object_get(n, "raw")),
			       json_number_value(json_object_get(n, "ema")),
			       json_integer_value(json_object_get(n, "target")) / 100.0);
		else
			printf("%6s %6s %7s", "-", "-", "-");
		if (json_is_true(json_object_get(st, "steered")))
			printf(" %7.2f", json_integer_value(json_object_get(n, "weight")) / 100.0);
		else
			printf(" %7s", "-");
		printf("  %s", json_string_value(json_object_get(n, "limits_text")));
		json_t *b = json_object_get(n, "budget");
		if (b)
			printf("; %s budget %s (%.2f of %.2f)",
			       json_string_value(json_object_get(n, "provider")),
			       json_string_value(json_object_get(b, "state")),
			       json_number_value(json_object_get(b, "spent")),
			       json_number_value(json_object_get(b, "limit")));
		const char *from = json_string_value(json_object_get(n, "inputs_from"));
		if (from)
			printf("; inputs from %s", from);
		printf("\n");
	}
}

static int steer_show(const char *svc)
{
	wdb_txn_t *t = ctl_begin_read();
	json_t *out;
	char err[2500];
	int rc = steer_service_view(t, &ctl_hc.steer, svc, (uint32_t)time(NULL), &out,
	                            err, sizeof(err));
	wdb_abort(t);
	if (rc)
		ctl_die("steer show: %s", err);
	size_t i;
	json_t *k;
	if (ctl_json)
		ctl_print_json(out);
	else
		json_array_foreach(out, i, k)
			ctl_steer_print(k);
	json_decref(out);
	return 0;
}

/* steer unpin SERVICE [--region R] [--isp I]: without either, every
 * pinned row of the service. */
static int steer_unpin(int argc, char **argv)
{
	if (argc < 1)
		ctl_usage_die("steer unpin: usage: steer unpin SERVICE [--region R] [--isp I]");
	char svc[1100];
	ctl_service_name(argv[0], svc, sizeof(svc));
	const char *region = NULL, *isp = NULL;
	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			ctl_usage_die("steer unpin: %s needs a value", argv[i]);
		const char *v = argv[++i];
		if (strcmp(argv[i - 1], "--region") == 0 && (strcmp(v, "*") == 0 || ctl_valid_word(v, 0)))
			region = v;
		else if (strcmp(argv[i - 1], "--isp") == 0 && (strcmp(v, "*") == 0 || ctl_valid_word(v, 0)))
			isp = v;
		else
			ctl_usage_die("steer unpin: unknown option or bad value '%s %s' (usage: steer "
			              "unpin SERVICE [--region R] [--isp I])", argv[i - 1], v);
	}
	wdb_txn_t *t = ctl_begin();
	json_t *keys;
	char what[1500], err[1500];
	if (steer_unpin_rows(t, svc, region, isp, &keys, what, sizeof(what), err,
	                     sizeof(err)))
		ctl_die("steer unpin: %s", err);
	size_t i;
	json_t *k;
	json_array_foreach(keys, i, k)
		if (!ctl_json)
			printf("row %s unpinned: the engine steers it again\n", json_string_value(k));
	json_decref(keys);
	ctl_commit(t, what);
	return 0;
}

int ctl_cmd_steer(int argc, char **argv)
{
	if (argc < 1)
		ctl_die("steer: missing subcommand (show, replay, unpin)");
	if (strcmp(argv[0], "replay") == 0)
		return ctl_steer_replay(argc - 1, argv + 1);
	if (strcmp(argv[0], "unpin") == 0)
		return steer_unpin(argc - 1, argv + 1);
	if (strcmp(argv[0], "show") == 0) {
		if (argc != 2)
			ctl_die("steer show: usage: steer show SERVICE");
		char svc[1100];
		ctl_service_name(argv[1], svc, sizeof(svc));
		return steer_show(svc);
	}
	ctl_die("steer: unknown subcommand '%s' (show, replay, unpin)", argv[0]);
}
