/* SPDX-License-Identifier: MIT */
/* gslbctl explain: why a client gets the answer it gets, told by the
 * daemon's own query path.
 *
 * dns/explain.h builds the query dig would send, answers it with
 * query_process() against a snapshot built from the configuration as
 * gslbd builds it, and makes the document of its decision trail, which
 * the HTTP API answers too; this file reads the command line and prints
 * the document as a table. */
#include "ctl/ctl.h"
#include "ctl/ctl_steer.h"
#include "dns/explain.h"
#include "steer/steer_edit.h"

#include <arpa/inet.h>
#include <ldns/ldns.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static void explain_args(int argc, char **argv, explain_ask_t *a)
{
	if (argc < 1)
		ctl_die("explain: missing name");
	char err[1300];
	if (explain_name(argv[0], a, err, sizeof(err)))
		ctl_die("explain: %s", err);
	a->qtype = RR_A;
	for (int i = 1; i < argc; i += 2) {
		if (i + 1 >= argc)
			ctl_die("explain: %s needs a value", argv[i]);
		if (strcmp(argv[i], "--client") == 0) {
			a->client = argv[i + 1];
		} else if (strcmp(argv[i], "--type") == 0) {
			ldns_rr_type t = ldns_get_rr_type_by_name(argv[i + 1]);
			if (!t)
				ctl_die("explain: --type %s: not a record type (A, AAAA, MX...)",
				        argv[i + 1]);
			a->qtype = (uint16_t)t;
		} else {
			ctl_usage_die("explain: unknown option '%s'", argv[i]);
		}
	}
	if (!a->client)
		ctl_die("explain: --client IP[/LEN] is required");
	if (!ctl_conf)
		ctl_die("explain needs the configuration (-c) for the zones and GeoIP settings");
	if (explain_client(a->client, a, err, sizeof(err)))
		ctl_die("explain: %s", err);
}

static void print_response(json_t *out)
{
	size_t i;
	json_t *rr;
	printf("rcode     %s%s\n", json_string_value(json_object_get(out, "rcode")),
	       strcmp(json_string_value(json_object_get(out, "transport")), "tcp") == 0 ?
	       " (truncated over UDP: answered over TCP)" : "");
	json_array_foreach(json_object_get(out, "answers"), i, rr)
		printf("answer    %s\n", json_string_value(rr));
	if (!json_array_size(json_object_get(out, "answers")))
		json_array_foreach(json_object_get(out, "authority"), i, rr)
			printf("authority %s\n", json_string_value(rr));
}

static void print_service(json_t *out, const gslb_result_t *g)
{
	json_t *cl = json_object_get(out, "client"), *loc = json_object_get(out, "location");
	printf("service   %s\n", json_string_value(json_object_get(out, "service")));
	printf("client    %s (%s)\n", json_string_value(json_object_get(cl, "address")),
	       json_string_value(json_object_get(cl, "from")));
	printf("location  region=%s isp=%s network=%s source=%s\n",
	       json_string_value(json_object_get(loc, "region")),
	       json_string_value(json_object_get(loc, "isp")),
	       json_string_value(json_object_get(loc, "network")),
	       json_string_value(json_object_get(loc, "source")));
	size_t i;
	json_t *e;
	/* The levels looked at; the ones after the answering row were not. */
	printf("chain    ");
	int any = 0;
	json_array_foreach(json_object_get(out, "chain"), i, e) {
		const char *res = json_string_value(json_object_get(e, "result"));
		if (strcmp(res, "not tried") == 0)
			continue;
		printf("%s %s (%s)", any ? " ->" : "",
		       json_string_value(json_object_get(e, "level")), res);
		any = 1;
	}
	printf("%s\n", any ? "" : " no level can match");
	json_array_foreach(json_object_get(out, "chain"), i, e)
		if (json_object_get(e, "spill_pct"))
			printf("capacity  %s: over its nodes' capacity, %g%% of its clients go to "
			       "the next level (%s)\n", json_string_value(json_object_get(e, "level")),
			       json_number_value(json_object_get(e, "spill_pct")),
			       g->spilled ? "this one does" : "not this one");
	/* S0-11: the preferred rows that were empty, and why. */
	json_array_foreach(json_object_get(out, "chain"), i, e) {
		json_t *nodes = json_object_get(e, "nodes");
		if (!nodes)
			continue;
		printf("empty     %s:", json_string_value(json_object_get(e, "level")));
		size_t k;
		json_t *nd;
		json_array_foreach(nodes, k, nd)
			printf("%s %s %s", k ? ";" : "",
			       json_string_value(json_object_get(nd, "node")),
			       json_string_value(json_object_get(nd, "status")));
		printf("%s\n", json_array_size(nodes) ? "" : " no node");
	}
	printf("row       %s%s\n", gslb_row_name(g->row),
	       g->row == GSLB_ROW_NONE ? " (no weight row: NODATA)" : "");
	json_array_foreach(json_object_get(out, "candidates"), i, e)
		printf("  %-20s weight %-8lld %s%s\n",
		       json_string_value(json_object_get(e, "node")),
		       json_integer_value(json_object_get(e, "weight")),
		       json_string_value(json_object_get(e, "status")),
		       json_is_true(json_object_get(e, "picked")) ? "  <- picked" : "");
	if (g->failed_open)
		printf("no usable node: answering as if all were healthy (all-down open)\n");
	if (g->row != GSLB_ROW_NONE && !g->npicked)
		printf("no usable node: NODATA (all-down empty)\n");
	printf("ttl       %u (%s", g->ttl,
	       g->spilled ? "short: spilled by a row over its capacity" :
	       g->from_fallback ? "short: answered by a fallback row, a preferred row is empty" :
	       g->short_ttl ? "short: a node of the row changed state recently" :
	       "the service's TTL");
	json_array_foreach(json_object_get(out, "short_ttl_nodes"), i, e)
		printf("%s%s", i ? ", " : ": ", json_string_value(e));
	printf(")\n");
	int from_ecs = strcmp(json_string_value(json_object_get(cl, "from")), "ECS option") == 0;
	printf("ecs scope %lld%s\n", json_integer_value(json_object_get(out, "ecs_scope")),
	       from_ecs ? "" : " (no ECS in the query)");
	if (json_is_true(json_object_get(out, "shadow")))   /* S2-9 */
		printf("shadow    health verdicts are logged, not applied\n");
	if (g->svc.flags & SVC_STICKY)
		printf("sticky    the same client network keeps its node\n");
	else
		printf("pick      weighted random: another query may get another node\n");
	json_t *rel = json_object_get(out, "release");
	if (rel)
		printf("release   node %s answers the clients below %g%% of its row; this "
		       "client is at %.2f%%: %s\n",
		       json_string_value(json_object_get(rel, "node")),
		       json_number_value(json_object_get(rel, "percent")),
		       json_number_value(json_object_get(rel, "client_position")),
		       json_is_true(json_object_get(rel, "in")) ? "in the release" :
		       "outside, never given it");
	if (json_object_get(out, "steering"))
		ctl_steer_print(json_object_get(out, "steering"));
	print_response(out);
}

static void print_static(json_t *out)
{
	json_t *cl = json_object_get(out, "client");
	const char *zone = json_string_value(json_object_get(out, "zone"));
	printf("name      %s\n", json_string_value(json_object_get(out, "name")));
	printf("client    %s (%s)\n", json_string_value(json_object_get(cl, "address")),
	       json_string_value(json_object_get(cl, "from")));
	if (zone)
		printf("source    zone %s: answered from the zone's data, not by a GSLB service%s\n", zone,
		       json_is_true(json_object_get(out, "service_shadowed")) ?
		       " (a service of this name exists, but the zone's data wins)" : "");
	else
		printf("source    none of our zones holds this name\n");
	printf("ecs scope %lld\n", json_integer_value(json_object_get(out, "ecs_scope")));
	print_response(out);
}

/* explain_json()'s steering view: gslbctl's (steer/steer_edit.h). */
static json_t *steer_row(void *arg, wdb_txn_t *t, const char *key)
{
	(void)arg;
	return ctl_steer_row(t, key);
}

int ctl_cmd_explain(int argc, char **argv)
{
	static explain_ask_t a;
	static explain_run_t r;
	char err[1300];
	explain_args(argc, argv, &a);
	if (explain_run(&a, ctl_conf, NULL, ctl_db, &r, err, sizeof(err)))
		ctl_die("%s%s", strcmp(err, "the query was dropped") == 0 ? "explain: " : "", err);
	const gslb_result_t *g = r.trail.res;
	json_t *out = explain_json(&a, &r, steer_row, NULL);
	if (ctl_json) {
		ctl_emit(out);
	} else {
		if (g)
			print_service(out, g);
		else
			print_static(out);
		json_decref(out);
	}
	explain_run_free(&r);
	return 0;
}
