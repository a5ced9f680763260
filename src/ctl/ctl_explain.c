/* SPDX-License-Identifier: MIT */
/* gslbctl explain: why a client gets the answer it gets, told by the
 * daemon's own query path.
 *
 * explain builds the query dig would send (EDNS, with a Client Subnet
 * option for --client IP/LEN, from the resolver address IP otherwise),
 * answers it with query_process() against a snapshot built from the
 * configuration as gslbd builds it, and prints the decision trail that
 * the query path recorded (dns/query.h query_trail_t) with the response
 * itself.  Nothing here decides anything: whether a node is usable, and
 * why, is what its plan says (store/plan.h).  The health and cutover
 * records are read only to add detail to those decisions. */
#include "ctl/ctl.h"
#include "ctl/ctl_steer.h"
#include "common/util.h"
#include "dns/edns.h"
#include "dns/query.h"
#include "dns/snapshot.h"
#include "dns/zone.h"
#include "gslb/gslb.h"

#include <arpa/inet.h>
#include <ldns/ldns.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

/* What to explain, from the command line. */
typedef struct {
	uint8_t qname[DNAME_MAXLEN + 1];   /* wire, as given */
	size_t qlen;
	char name[1100];                   /* lowercase, no final dot */
	uint16_t qtype;
	const char *client;                /* as given */
	struct sockaddr_storage src;       /* the resolver's address */
	int ecs;                           /* send a Client Subnet option */
	uint8_t ecs_family, ecs_source;
	uint8_t ecs_addr[16];              /* zero beyond the prefix */
} ask_t;

/* One run of the query path and what it left behind. */
typedef struct {
	snapshot_t *snap;
	qctx_t q;                          /* holds the store reader */
	query_trail_t trail;
	uint8_t out[65535];
	size_t len;
	int tcp;                           /* truncated over UDP: asked again */
} run_t;

static void explain_name(const char *arg, ask_t *a)
{
	uint8_t low[DNAME_MAXLEN + 1];
	a->qlen = dname_from_str(arg, a->qname);
	if (!a->qlen)
		ctl_die("explain: '%s' is not a valid domain name", arg);
	dname_copy_lower(low, a->qname);
	dname_to_str(low, a->name, sizeof(a->name));
	size_t l = strlen(a->name);
	if (l > 1)
		a->name[l - 1] = 0;
}

/* --client IP/LEN is read as an ECS option, a bare IP as the resolver's
 * address: exactly what the server would see. */
static void explain_client(const char *client, ask_t *a)
{
	char ip[64];
	snprintf(ip, sizeof(ip), "%s", client);
	char *slash = strchr(ip, '/');
	long plen = -1;
	if (slash) {
		*slash = 0;
		plen = ctl_parse_num("--client prefix", slash + 1, 0, 128);
	}
	struct in_addr a4;
	struct in6_addr a6;
	if (inet_pton(AF_INET, ip, &a4) == 1) {
		if (plen > 32)
			ctl_die("explain: --client %s: an IPv4 prefix is at most 32", client);
		((struct sockaddr_in *)&a->src)->sin_family = AF_INET;
		((struct sockaddr_in *)&a->src)->sin_addr = a4;
		a->ecs_family = 1;
		memcpy(a->ecs_addr, &a4, 4);
	} else if (inet_pton(AF_INET6, ip, &a6) == 1) {
		((struct sockaddr_in6 *)&a->src)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)&a->src)->sin6_addr = a6;
		a->ecs_family = 2;
		memcpy(a->ecs_addr, &a6, 16);
	} else {
		ctl_die("explain: --client %s is not an IP address", client);
	}
	if (plen >= 0) {
		a->ecs = 1;
		a->ecs_source = (uint8_t)plen;
		for (unsigned b = (unsigned)plen; b < 128; b++)
			a->ecs_addr[b / 8] &= (uint8_t)~(0x80u >> (b % 8));
	}
}

static void explain_args(int argc, char **argv, ask_t *a)
{
	if (argc < 1)
		ctl_die("explain: missing name");
	explain_name(argv[0], a);
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
	explain_client(a->client, a);
}

/* Writes the query dig sends by default: EDNS with a 1232-byte payload,
 * and the Client Subnet option when asked for.  Returns its length. */
static size_t build_query(const ask_t *a, uint8_t *b)
{
	memset(b, 0, 12);
	wr16(b, (uint16_t)(getpid() ^ time(NULL)));
	wr16(b + 4, 1);                     /* QDCOUNT */
	wr16(b + 10, 1);                    /* ARCOUNT: the OPT record */
	size_t o = 12;
	memcpy(b + o, a->qname, a->qlen);
	o += a->qlen;
	wr16(b + o, a->qtype);
	wr16(b + o + 2, 1);                 /* IN */
	o += 4;
	b[o++] = 0;                         /* OPT owner: the root */
	wr16(b + o, RR_OPT);
	wr16(b + o + 2, 1232);              /* payload */
	wr32(b + o + 4, 0);                 /* extended RCODE, version, flags */
	size_t rdlen_at = o + 8;
	o += 10;
	if (a->ecs) {
		/* RFC 7871 §6: the address in ceil(source/8) bytes. */
		unsigned n = (a->ecs_source + 7u) / 8u;
		wr16(b + o, EDNS_OPT_ECS);
		wr16(b + o + 2, (uint16_t)(4 + n));
		wr16(b + o + 4, a->ecs_family);
		b[o + 6] = a->ecs_source;
		b[o + 7] = 0;                   /* scope: 0 in queries */
		memcpy(b + o + 8, a->ecs_addr, n);
		o += 8 + n;
	}
	wr16(b + rdlen_at, (uint16_t)(o - rdlen_at - 2));
	return o;
}

/* Answers @a through query_process() as gslbd would: the snapshot of the
 * configuration, a reader of the store, and a trail to record into.  A
 * truncated UDP answer is asked again over TCP, as dig does. */
static void explain_run(const ask_t *a, run_t *r)
{
	char err[1024];
	unsigned failed;
	/* explain walks the sources for the network's text anyway. */
	geo_allow_compile(0);
	r->snap = snapshot_build(ctl_conf, NULL, &failed, err, sizeof(err));
	if (!r->snap)
		ctl_die("%s", err);
	memset(&r->q, 0, sizeof(r->q));
	r->q.snap = r->snap;
	r->q.wdb = wdb_reader_new(ctl_db);
	if (!r->q.wdb)
		ctl_die("cannot read the weight store");
	r->q.now = (uint32_t)time(NULL);
	r->q.rng = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32;
	r->q.trail = &r->trail;
	uint8_t in[600];
	size_t inlen = build_query(a, in);
	for (r->tcp = 0; r->tcp < 2; r->tcp++) {
		client_t c = { (const struct sockaddr *)&a->src, r->tcp };
		memset(&r->trail, 0, sizeof(r->trail));
		r->len = query_process(&r->q, &c, in, inlen, r->out, sizeof(r->out));
		if (!r->len)
			ctl_die("explain: the query was dropped");
		if (!(r->out[2] & 0x02))
			break;
	}
}

static void run_free(run_t *r)
{
	wdb_reader_free(r->q.wdb);
	snapshot_free(r->snap);
}

static const char *rcode_name(unsigned rc, char *buf, size_t size)
{
	static const char *const names[] = { "NOERROR", "FORMERR", "SERVFAIL",
		"NXDOMAIN", "NOTIMP", "REFUSED", "YXDOMAIN", "YXRRSET", "NXRRSET",
		"NOTAUTH", "NOTZONE" };
	if (rc < sizeof(names) / sizeof(names[0]))
		return names[rc];
	if (rc == RCODE_BADVERS)
		return "BADVERS";
	snprintf(buf, size, "RCODE%u", rc);
	return buf;
}

/* The records of one section of the response, in presentation form. */
static json_t *section_rrs(const ldns_rr_list *l)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < ldns_rr_list_rr_count(l); i++) {
		char *s = ldns_rr2str(ldns_rr_list_rr(l, i));
		if (!s)
			continue;
		size_t n = strlen(s);
		while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
			s[--n] = 0;
		for (char *p = s; *p; p++)
			if (*p == '\t')
				*p = ' ';
		json_array_append_new(arr, json_string(s));
		free(s);
	}
	return arr;
}

/* What the response says, as dig shows it: the RCODE, the answer and
 * authority records, the TTL of the answer and the ECS scope. */
static void response_json(const run_t *r, json_t *out)
{
	char buf[16];
	ldns_pkt *pkt = NULL;
	json_object_set_new(out, "rcode", json_string(rcode_name(r->trail.rcode, buf,
	                                                         sizeof(buf))));
	if (ldns_wire2pkt(&pkt, r->out, r->len) != LDNS_STATUS_OK)
		ctl_die("explain: cannot read the response");
	json_object_set_new(out, "answers", section_rrs(ldns_pkt_answer(pkt)));
	json_object_set_new(out, "authority", section_rrs(ldns_pkt_authority(pkt)));
	json_object_set_new(out, "answer_ttl", ldns_rr_list_rr_count(ldns_pkt_answer(pkt)) ?
		json_integer(ldns_rr_ttl(ldns_rr_list_rr(ldns_pkt_answer(pkt), 0))) : json_null());
	ldns_pkt_free(pkt);
	json_object_set_new(out, "ecs_scope", json_integer(r->trail.scope));
	json_object_set_new(out, "transport", json_string(r->tcp ? "tcp" : "udp"));
}

/* The status text of candidate @pn: the plan's reason, with what the
 * asked type makes of it. */
static void plan_status(const plan_node_t *pn, uint16_t qtype, char *buf,
                        size_t size)
{
	static const char *const decision[PLAN_WHY_COUNT] = {
		[PLAN_WHY_USABLE] = "usable", [PLAN_WHY_ADMIN_UP] = "usable",
		[PLAN_WHY_ADMIN_DOWN] = "admin down", [PLAN_WHY_ADMIN_DRAIN] = "admin drain",
		[PLAN_WHY_UNHEALTHY] = "unhealthy", [PLAN_WHY_STANDBY] = "standby, not promoted",
		[PLAN_WHY_WEIGHT0] = "weight 0",
	};
	unsigned d = pn->why & PLAN_WHY_MASK;
	int usable = (pn->flags & PLAN_USABLE) != 0;
	if (d == PLAN_WHY_NONE) {
		snprintf(buf, size, "%s", usable ? "usable" : "not usable (reason not recorded)");
		return;
	}
	snprintf(buf, size, "%s", decision[d]);
	if (!usable)
		return;
	char why[120] = "";
	static const struct { uint8_t bit; const char *text; } mods[] = {
		{ PLAN_WHY_DERATED, "derated by health" },
		{ PLAN_WHY_CUTOVER, "cutover derate" },
		{ PLAN_WHY_PREWARM, "pre-warm share" },
		{ PLAN_WHY_CAPACITY, "held at its capacity" },
	};
	if (d == PLAN_WHY_ADMIN_UP)
		snprintf(why, sizeof(why), "admin up");
	for (size_t i = 0; i < sizeof(mods) / sizeof(mods[0]); i++)
		if (pn->why & mods[i].bit) {
			size_t l = strlen(why);
			snprintf(why + l, sizeof(why) - l, "%s%s", l ? ", " : "", mods[i].text);
		}
	if (pn->flags & PLAN_CNAME) {
		size_t l = strlen(why);
		snprintf(why + l, sizeof(why) - l, "%sCNAME", l ? ", " : "");
	}
	size_t l = strlen(buf);
	if (*why)
		snprintf(buf + l, size - l, " (%s)", why);
	else if (!(pn->flags & PLAN_CNAME) &&
	         ((qtype == RR_A && !pn->n4) || (qtype == RR_AAAA && !pn->n6)))
		snprintf(buf + l, size - l, ", but has no address of the asked type");
}

/* The status of candidate @id with the detail of its health and cutover
 * records: the health verdict's own words for an unhealthy node, and the
 * cutover window that scales it. */
static void status_detail(wdb_txn_t *t, const char *id, char *buf, size_t size)
{
	json_t *hh = wdb_get(t, WDB_HEALTH, id);
	const char *hs = json_string_value(json_object_get(hh, "state"));
	if (hs && strcmp(buf, "unhealthy") == 0)
		snprintf(buf, size, "health %s: %s", hs,
		         json_string_value(json_object_get(hh, "reason")));
	/* S2-7: a verdict resting on no input, or on stale ones, says so. */
	size_t hl = strlen(buf);
	if (json_is_true(json_object_get(hh, "unmonitored")))
		snprintf(buf + hl, size - hl, "; health unmonitored: no probe, no metrics");
	else if (json_is_true(json_object_get(hh, "stale")) && !strstr(buf, "stale"))
		snprintf(buf + hl, size - hl, "; health stale: %s",
		         json_string_value(json_object_get(hh, "reason")));
	/* Cluster mode (S4-6): down from a minority of the vantages. */
	if (json_is_true(json_object_get(hh, "partial"))) {
		size_t l = strlen(buf);
		snprintf(buf + l, size - l, "; health partial: %s",
		         json_string_value(json_object_get(hh, "reason")));
	}
	const char *ph = json_string_value(json_object_get(hh, "cutover_phase"));
	if (ph) {
		size_t l = strlen(buf);
		snprintf(buf + l, size - l, "; cutover %s %s (weight %lld%%, pre-warm %lld%%)",
		         json_string_value(json_object_get(hh, "cutover_window")), ph,
		         json_integer_value(json_object_get(hh, "cutover_pct")),
		         json_integer_value(json_object_get(hh, "prewarm_pct")));
	}
	json_decref(hh);
}

/* The addresses or CNAME target of candidate @pn. */
static json_t *plan_targets(const plan_node_t *pn)
{
	json_t *arr = json_array();
	char buf[1100];
	for (unsigned k = 0; k < pn->n4; k++)
		json_array_append_new(arr, json_string(inet_ntop(AF_INET, pn->a4 + 4 * k,
		                                                 buf, sizeof(buf))));
	for (unsigned k = 0; k < pn->n6; k++)
		json_array_append_new(arr, json_string(inet_ntop(AF_INET6, pn->a6 + 16 * k,
		                                                 buf, sizeof(buf))));
	if (pn->cname_len) {
		dname_to_str(pn->cname, buf, sizeof(buf));
		json_array_append_new(arr, json_string(buf));
	}
	return arr;
}

/* The candidates of the answering row, each as its plan decided it. */
static json_t *candidates_json(const gslb_result_t *g, uint16_t qtype)
{
	json_t *cands = json_array();
	wdb_txn_t *t = wdb_begin_read(ctl_db);
	for (unsigned i = 0; g->row != GSLB_ROW_NONE && i < g->plan.n; i++) {
		const plan_node_t *pn = &g->plan.node[i];
		char id[80], status[400];
		snprintf(id, sizeof(id), "%.*s", pn->id_len, pn->id);
		plan_status(pn, qtype, status, sizeof(status));
		if (t)
			status_detail(t, id, status, sizeof(status));
		int picked = 0;
		for (unsigned k = 0; k < g->npicked; k++)
			picked |= g->picked[k] == i;
		json_array_append_new(cands, json_pack("{s:s, s:i, s:s, s:b, s:b, s:o}",
			"node", id, "weight", (json_int_t)pn->weight, "status", status,
			"usable", (pn->flags & PLAN_USABLE) != 0, "picked", picked,
			"targets", plan_targets(pn)));
	}
	wdb_abort(t);
	return cands;
}

/* Why row @row of service @svc for a client at @g->geo has no usable
 * node: each of its nodes with its plan's reason (admin drain, health
 * demoted, standby not promoted ...). */
static json_t *empty_row_json(const char *svc, const gslb_result_t *g,
                              gslb_row_t row, uint16_t qtype)
{
	json_t *arr = json_array();
	int by_reg = row == GSLB_ROW_REGION_ISP || row == GSLB_ROW_REGION;
	int by_isp = row == GSLB_ROW_REGION_ISP || row == GSLB_ROW_ISP;
	wdb_reader_t *rd = wdb_reader_new(ctl_db);
	wdb_txn_t *t = wdb_begin_read(ctl_db);
	const uint8_t *d;
	size_t dl;
	static plan_t p;
	if (rd && wdb_plan(rd, svc, strlen(svc), by_reg ? g->geo.region : "*",
	                   by_isp ? g->geo.isp : "*", &d, &dl) == 0 &&
	    plan_decode(d, dl, &p) == 0)
		for (unsigned i = 0; i < p.n; i++) {
			char id[80], status[400];
			snprintf(id, sizeof(id), "%.*s", p.node[i].id_len, p.node[i].id);
			plan_status(&p.node[i], qtype, status, sizeof(status));
			if (t)
				status_detail(t, id, status, sizeof(status));
			json_array_append_new(arr, json_pack("{s:s, s:s}", "node", id,
			                                     "status", status));
		}
	wdb_abort(t);
	if (rd)
		wdb_reader_release(rd);
	wdb_reader_free(rd);
	return arr;
}

/* The levels of the row chain and what each gave; a level skipped for
 * having no usable node says why (its nodes and their reasons). */
static json_t *chain_json(const ask_t *a, const gslb_result_t *g,
                          const gslb_trail_t *t)
{
	static const char *const what[] = { "not tried", "no row",
	                                    "no usable node", "answered",
	                                    "over capacity, spilled" };
	json_t *arr = json_array();
	for (unsigned i = 0; i < t->nchain; i++) {
		json_t *e = json_pack("{s:s, s:s}", "level", gslb_row_name(t->chain[i]),
		                      "result", what[t->level[i]]);
		if (t->level[i] == GSLB_LEVEL_NO_USABLE)
			json_object_set_new(e, "nodes", empty_row_json(a->name, g,
			                    t->chain[i], a->qtype));
		/* S1-6: the share of the row's clients its capacity cannot
		 * carry, answered by the next level. */
		if (t->spill_bp && i == t->spill_level)
			json_object_set_new(e, "spill_pct", json_real(t->spill_bp / 100.0));
		json_array_append_new(arr, e);
	}
	return arr;
}

/* The client as the query path located it, or as it was given when no
 * service located it. */
static json_t *client_json(const ask_t *a, const run_t *r)
{
	char caddr[64];
	const gslb_trail_t *t = &r->trail.gslb;
	const struct sockaddr_storage *s = t->resolved ? &t->client.addr : &a->src;
	int from_ecs = t->resolved ? t->client.from_ecs : a->ecs;
	if (s->ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)s)->sin6_addr, caddr, sizeof(caddr));
	else
		inet_ntop(AF_INET, &((const struct sockaddr_in *)s)->sin_addr, caddr, sizeof(caddr));
	return json_pack("{s:s, s:s}", "address", caddr,
	                 "from", from_ecs ? "ECS option" : "resolver address");
}

/* The explanation of a service answer. */
static json_t *service_json(const ask_t *a, const run_t *r)
{
	static const char *const srcs[] = { "none", "nets file", "GeoIP database" };
	const gslb_result_t *g = r->trail.res;
	json_t *out = json_object();
	json_object_set_new(out, "service", json_string(a->name));
	json_object_set_new(out, "client", client_json(a, r));
	json_object_set_new(out, "location", json_pack("{s:s, s:s, s:s, s:s, s:i}",
		"region", g->geo.region, "isp", g->geo.isp, "network",
		g->geo.network[0] ? g->geo.network : "-", "source", srcs[g->geo.source],
		"prefix_len", g->geo.prefix_len));
	json_object_set_new(out, "chain", chain_json(a, g, &r->trail.gslb));
	json_object_set_new(out, "row", json_string(gslb_row_name(g->row)));
	json_object_set_new(out, "candidates", candidates_json(g, a->qtype));
	json_object_set_new(out, "failed_open", json_boolean(g->failed_open));
	json_object_set_new(out, "ttl", json_integer(g->ttl));
	json_object_set_new(out, "ttl_reason", json_string(
		g->spilled ? "short TTL: spilled by a row over its capacity" :
		g->from_fallback ? "short TTL: answered by a fallback row, a preferred row is empty" :
		g->short_ttl ? "short TTL: a node of the row changed state recently" :
		"the service's TTL"));
	/* The nodes whose change the short TTL waits for (their plan's
	 * deadline is still ahead). */
	json_t *moving = json_array();
	for (unsigned i = 0; g->row != GSLB_ROW_NONE && i < g->plan.n; i++)
		if (g->plan.node[i].short_until > r->q.now)
			json_array_append_new(moving, json_stringn(g->plan.node[i].id,
			                                           g->plan.node[i].id_len));
	json_object_set_new(out, "short_ttl_nodes", moving);
	json_object_set_new(out, "sticky", json_boolean(g->svc.flags & SVC_STICKY));
	if (g->row != GSLB_ROW_NONE && g->plan.release_slot) {
		/* S4-10: the client's place in the row's gray release, as
		 * the pick computed it. */
		const plan_node_t *rn = &g->plan.node[g->plan.release_slot - 1];
		uint32_t bucket = policy_release_bucket(g->client_key, rn->idhash);
		json_object_set_new(out, "release", json_pack("{s:s%, s:f, s:f, s:b}",
			"node", rn->id, (size_t)rn->id_len, "percent", g->plan.release_bp / 100.0,
			"client_position", bucket / 100.0, "in",
			bucket < g->plan.release_bp));
	}
	wdb_txn_t *t = wdb_begin_read(ctl_db);
	json_t *svcj = t ? wdb_get(t, WDB_SERVICE, a->name) : NULL;
	wdb_abort(t);
	json_object_set_new(out, "shadow",
	                    json_boolean(json_is_true(json_object_get(svcj, "shadow"))));
	json_decref(svcj);
	/* Why the row's weights are what they are when the service steers
	 * (S3-7): the engine's inputs, scores, limits and budgets. */
	if (g->row != GSLB_ROW_NONE && (t = wdb_begin_read(ctl_db))) {
		int reg = g->row == GSLB_ROW_REGION_ISP || g->row == GSLB_ROW_REGION;
		int isp = g->row == GSLB_ROW_REGION_ISP || g->row == GSLB_ROW_ISP;
		char key[1200];
		wdb_row_key(key, sizeof(key), a->name, reg ? g->geo.region : "*",
		            isp ? g->geo.isp : "*");
		json_t *st = ctl_steer_row(t, key);
		wdb_abort(t);
		if (st)
			json_object_set_new(out, "steering", st);
	}
	response_json(r, out);
	return out;
}

/* The explanation of an answer that no service made: zone data, or the
 * refusal of a name outside our zones. */
static json_t *static_json(const ask_t *a, const run_t *r)
{
	json_t *out = json_object();
	json_object_set_new(out, "name", json_string(a->name));
	json_object_set_new(out, "client", client_json(a, r));
	const zone_t *z = r->trail.zone;
	char zname[1100] = "";
	if (z) {
		dname_to_str(z->apex, zname, sizeof(zname));
		size_t l = strlen(zname);
		if (l > 1)
			zname[l - 1] = 0;
	}
	json_object_set_new(out, "zone", z ? json_string(zname) : json_null());
	/* A service of this name exists, but zone data wins (query.c). */
	wdb_txn_t *t = wdb_begin_read(ctl_db);
	json_t *svcj = t ? wdb_get(t, WDB_SERVICE, a->name) : NULL;
	wdb_abort(t);
	json_object_set_new(out, "service_shadowed", json_boolean(svcj != NULL));
	json_decref(svcj);
	response_json(r, out);
	return out;
}

/* Prints the answer lines shared by both kinds of explanation. */
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

int ctl_cmd_explain(int argc, char **argv)
{
	static ask_t a;
	static run_t r;
	explain_args(argc, argv, &a);
	explain_run(&a, &r);
	const gslb_result_t *g = r.trail.res;
	json_t *out = g ? service_json(&a, &r) : static_json(&a, &r);
	if (ctl_json) {
		json_object_set_new(out, "kind", json_string(g ? "service" : "static"));
		ctl_emit(out);
	} else {
		if (g)
			print_service(out, g);
		else
			print_static(out);
		json_decref(out);
	}
	run_free(&r);
	return 0;
}
