/* SPDX-License-Identifier: MIT */
/* gslbctl explain: why a client gets the answer it gets. */
#include "ctl/ctl.h"
#include "common/util.h"
#include "dns/edns.h"
#include "dns/zone.h"
#include "gslb/gslb.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* The service object @name, read in a short read-only transaction. */
static json_t *wdb_get_ro(const char *name)
{
	wdb_txn_t *t = wdb_begin_read(ctl_db);
	json_t *s = t ? wdb_get(t, WDB_SERVICE, name) : NULL;
	wdb_abort(t);
	return s;
}

int ctl_cmd_explain(int argc, char **argv)
{
	if (argc < 1)
		ctl_die("explain: missing service name");
	char name[1100];
	ctl_service_name(argv[0], name, sizeof(name));
	const char *client = NULL;
	uint16_t qtype = RR_A;
	for (int i = 1; i < argc; i += 2) {
		if (i + 1 >= argc)
			ctl_die("explain: %s needs a value", argv[i]);
		if (strcmp(argv[i], "--client") == 0)
			client = argv[i + 1];
		else if (strcmp(argv[i], "--type") == 0) {
			if (strcasecmp(argv[i + 1], "A") == 0)
				qtype = RR_A;
			else if (strcasecmp(argv[i + 1], "AAAA") == 0)
				qtype = RR_AAAA;
			else
				ctl_die("explain: --type %s: use A or AAAA", argv[i + 1]);
		} else
			ctl_die("explain: unknown option '%s'", argv[i]);
	}
	if (!client)
		ctl_die("explain: --client IP[/LEN] is required");
	if (!ctl_conf)
		ctl_die("explain needs the configuration (-c) for the GeoIP settings");

	/* --client IP/LEN is read as an ECS option, a bare IP as the
	 * resolver's address: exactly what the server would see. */
	char ip[64];
	snprintf(ip, sizeof(ip), "%s", client);
	char *slash = strchr(ip, '/');
	long plen = -1;
	if (slash) {
		*slash = 0;
		plen = ctl_parse_num("--client prefix", slash + 1, 0, 128);
	}
	edns_t e;
	memset(&e, 0, sizeof(e));
	struct sockaddr_storage src;
	memset(&src, 0, sizeof(src));
	struct in_addr a4;
	struct in6_addr a6;
	if (inet_pton(AF_INET, ip, &a4) == 1) {
		if (plen > 32)
			ctl_die("explain: --client %s: an IPv4 prefix is at most 32", client);
		((struct sockaddr_in *)&src)->sin_family = AF_INET;
		((struct sockaddr_in *)&src)->sin_addr = a4;
		e.ecs_family = 1;
		memcpy(e.ecs_addr, &a4, 4);
	} else if (inet_pton(AF_INET6, ip, &a6) == 1) {
		((struct sockaddr_in6 *)&src)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)&src)->sin6_addr = a6;
		e.ecs_family = 2;
		memcpy(e.ecs_addr, &a6, 16);
	} else {
		ctl_die("explain: --client %s is not an IP address", client);
	}
	if (plen >= 0) {
		e.present = e.ecs = 1;
		e.ecs_source = (uint8_t)plen;
		for (unsigned b = (unsigned)plen; b < 128; b++)
			e.ecs_addr[b / 8] &= (uint8_t)~(0x80u >> (b % 8));
	}
	char err[1024];
	geo_t *geo = geo_open(ctl_conf, err, sizeof(err));
	if (!geo)
		ctl_die("%s", err);
	gslb_client_t c;
	gslb_client_from(&c, (struct sockaddr *)&src,
	                 e.ecs && geo_use_ecs(geo) ? e.ecs_family : 0,
	                 e.ecs_addr, e.ecs_source);
	wdb_reader_t *r = wdb_reader_new(ctl_db);
	static gslb_result_t g;
	g.geo.want_network = 1; /* explain shows the network */
	uint64_t rng = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32;
	int rc = gslb_resolve(r, geo, name, strlen(name), qtype, &c,
	                      (uint32_t)time(NULL), &rng, &g);
	if (rc == GSLB_ENOENT)
		ctl_die("service %s does not exist", name);
	if (rc)
		ctl_die("cannot read the weight store");

	/* Reasons come from the node objects themselves. */
	wdb_txn_t *t = ctl_begin();
	json_t *out = json_object();
	char caddr[64];
	if (c.addr.ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&c.addr)->sin6_addr, caddr, sizeof(caddr));
	else
		inet_ntop(AF_INET, &((struct sockaddr_in *)&c.addr)->sin_addr, caddr, sizeof(caddr));
	static const char *const srcs[] = { "none", "nets file", "GeoIP database" };
	json_object_set_new(out, "service", json_string(name));
	json_object_set_new(out, "client", json_pack("{s:s, s:s}", "address", caddr,
		"from", c.from_ecs ? "ECS option" : "resolver address"));
	json_object_set_new(out, "location", json_pack("{s:s, s:s, s:s, s:s, s:i}",
		"region", g.geo.region, "isp", g.geo.isp, "network",
		g.geo.network[0] ? g.geo.network : "-", "source", srcs[g.geo.source],
		"prefix_len", g.geo.prefix_len));
	json_object_set_new(out, "row", json_string(gslb_row_name(g.row)));
	json_t *cands = json_array();
	for (unsigned i = 0; g.row != GSLB_ROW_NONE && i < g.plan.n; i++) {
		const plan_node_t *pn = &g.plan.node[i];
		char id[80];
		snprintf(id, sizeof(id), "%.*s", pn->id_len, pn->id);
		json_t *node = wdb_get(t, WDB_NODE, id);
		const char *why = "usable";
		if (!(pn->flags & PLAN_USABLE)) {
			const char *admin = node ? json_string_value(json_object_get(node, "admin")) : NULL;
			if (pn->weight == 0)
				why = "weight 0";
			else if (admin && strcmp(admin, "down") == 0)
				why = "admin down";
			else if (admin && strcmp(admin, "drain") == 0)
				why = "admin drain";
			else if (json_is_string(json_object_get(node, "pool")) &&
			         strcmp(json_string_value(json_object_get(node, "pool")), "standby") == 0)
				why = "standby, not promoted";
			else
				why = "unhealthy";
		} else if (pn->weight == 0) {
			why = "weight 0";
		} else if ((pn->flags & PLAN_CNAME) && qtype) {
			why = "usable (CNAME)";
		} else if ((qtype == RR_A && !pn->n4) || (qtype == RR_AAAA && !pn->n6)) {
			why = "usable, but has no address of the asked type";
		}
		char whybuf[200];
		json_t *hh = wdb_get(t, WDB_HEALTH, id);
		const char *ph = json_string_value(json_object_get(hh, "cutover_phase"));
		if (ph) {
			snprintf(whybuf, sizeof(whybuf), "%s; cutover %s %s (weight %lld%%, pre-warm %lld%%)",
			         why, json_string_value(json_object_get(hh, "cutover_window")), ph,
			         json_integer_value(json_object_get(hh, "cutover_pct")),
			         json_integer_value(json_object_get(hh, "prewarm_pct")));
			why = whybuf;
		}
		const char *hs = json_string_value(json_object_get(hh, "state"));
		if (hs && strcmp(why, "unhealthy") == 0) {
			snprintf(whybuf, sizeof(whybuf), "health %s: %s", hs,
			         json_string_value(json_object_get(hh, "reason")));
			why = whybuf;
		}
		int picked = 0;
		for (unsigned k = 0; k < g.npicked; k++)
			picked |= g.picked[k] == i;
		json_array_append_new(cands, json_pack("{s:s, s:i, s:s, s:b}",
			"node", id, "weight", (json_int_t)pn->weight, "status", why,
			"picked", picked));
		json_decref(hh);
		json_decref(node);
	}
	wdb_abort(t);
	json_object_set_new(out, "candidates", cands);
	json_object_set_new(out, "failed_open", json_boolean(g.failed_open));
	json_object_set_new(out, "ttl", json_integer(g.ttl));
	json_object_set_new(out, "ttl_reason", json_string(g.short_ttl ?
		"short TTL: a node of the row changed state recently" : "the service's TTL"));
	json_object_set_new(out, "ecs_scope", json_integer(c.from_ecs ? g.scope : 0));
	json_object_set_new(out, "sticky", json_boolean(g.svc.flags & SVC_STICKY));
	json_t *svcj = wdb_get_ro(name);
	int shadow = json_is_true(json_object_get(svcj, "shadow"));
	json_decref(svcj);
	json_object_set_new(out, "shadow", json_boolean(shadow));
	if (ctl_json) {
		ctl_print_json(out);
	} else {
		printf("service   %s\n", name);
		printf("client    %s (%s)\n", caddr, c.from_ecs ? "ECS option" : "resolver address");
		printf("location  region=%s isp=%s network=%s source=%s\n", g.geo.region,
		       g.geo.isp, g.geo.network[0] ? g.geo.network : "-", srcs[g.geo.source]);
		printf("row       %s%s\n", gslb_row_name(g.row),
		       g.row == GSLB_ROW_NONE ? " (no weight row: NODATA)" : "");
		size_t i;
		json_t *cd;
		json_array_foreach(cands, i, cd)
			printf("  %-20s weight %-8lld %s%s\n",
			       json_string_value(json_object_get(cd, "node")),
			       json_integer_value(json_object_get(cd, "weight")),
			       json_string_value(json_object_get(cd, "status")),
			       json_is_true(json_object_get(cd, "picked")) ? "  <- picked" : "");
		if (g.failed_open)
			printf("no usable node: answering as if all were healthy (all-down open)\n");
		if (g.row != GSLB_ROW_NONE && !g.npicked)
			printf("no usable node: NODATA (all-down empty)\n");
		printf("ttl       %u (%s)\n", g.ttl, g.short_ttl ?
		       "short: a node of the row changed state recently" : "the service's TTL");
		printf("ecs scope %u%s\n", c.from_ecs ? g.scope : 0,
		       c.from_ecs ? "" : " (no ECS in the query)");
		if (shadow)
			printf("shadow    health verdicts are logged, not applied (S2-9)\n");
		if (g.svc.flags & SVC_STICKY)
			printf("sticky    the same client network keeps its node\n");
		else
			printf("pick      weighted random: another query may get another node\n");
	}
	json_decref(out);
	wdb_reader_free(r);
	geo_close(geo);
	return 0;
}

