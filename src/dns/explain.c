/* SPDX-License-Identifier: MIT */
/* Why a client gets the answer it gets (explain.h): the question asked
 * through query_process() and its decision trail as a document. */
#include "dns/explain.h"
#include "common/num.h"
#include "common/util.h"
#include "dns/edns.h"
#include "dns/zone.h"
#include "gslb/policy.h"
#include "store/keys.h"
#include "store/plan.h"

#include <arpa/inet.h>
#include <ldns/ldns.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

int explain_name(const char *arg, explain_ask_t *a, char *err, size_t errlen)
{
	uint8_t low[DNAME_MAXLEN + 1];
	a->qlen = dname_from_str(arg, a->qname);
	if (!a->qlen) {
		snprintf(err, errlen, "'%s' is not a valid domain name", arg);
		return -1;
	}
	dname_copy_lower(low, a->qname);
	dname_to_str(low, a->name, sizeof(a->name));
	size_t l = strlen(a->name);
	if (l > 1)
		a->name[l - 1] = 0;
	return 0;
}

/* --client IP/LEN is read as an ECS option, a bare IP as the resolver's
 * address: exactly what the server would see. */
int explain_client(const char *client, explain_ask_t *a, char *err, size_t errlen)
{
	char ip[64];
	snprintf(ip, sizeof(ip), "%s", client);
	char *slash = strchr(ip, '/');
	long plen = -1;
	if (slash) {
		*slash = 0;
		const num_range_t nr = { 0, 128, NUM_WHOLE, NULL, NULL };
		double n;
		if (num_parse(slash + 1, &nr, &n, NULL)) {
			snprintf(err, errlen, "--client prefix %s: must be a whole number "
			         "from 0 to 128", slash + 1);
			return -1;
		}
		plen = (long)n;
	}
	struct in_addr a4;
	struct in6_addr a6;
	if (inet_pton(AF_INET, ip, &a4) == 1) {
		if (plen > 32) {
			snprintf(err, errlen, "--client %s: an IPv4 prefix is at most 32", client);
			return -1;
		}
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
		snprintf(err, errlen, "--client %s is not an IP address", client);
		return -1;
	}
	if (plen >= 0) {
		a->ecs = 1;
		a->ecs_source = (uint8_t)plen;
		for (unsigned b = (unsigned)plen; b < 128; b++)
			a->ecs_addr[b / 8] &= (uint8_t)~(0x80u >> (b % 8));
	}
	return 0;
}

/* Writes the query dig sends by default: EDNS with a 1232-byte payload,
 * and the Client Subnet option when asked for.  Returns its length. */
static size_t build_query(const explain_ask_t *a, uint8_t *b)
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
int explain_run(const explain_ask_t *a, const conf_t *conf, const snapshot_t *snap,
                weightdb_t *db, explain_run_t *r, char *err, size_t errlen)
{
	unsigned failed;
	memset(r, 0, sizeof(*r));
	r->db = db;
	if (!snap) {
		/* explain walks the sources for the network's text anyway. */
		geo_allow_compile(0);
		if (!(r->own = snapshot_build(conf, NULL, &failed, err, errlen)))
			return -1;
		snap = r->own;
	}
	r->snap = snap;
	r->q.snap = snap;
	r->q.wdb = wdb_reader_new(db);
	if (!r->q.wdb) {
		snprintf(err, errlen, "cannot read the weight store");
		return -1;
	}
	r->q.now = (uint32_t)time(NULL);
	r->q.rng = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32;
	r->q.trail = &r->trail;
	uint8_t in[600];
	size_t inlen = build_query(a, in);
	for (r->tcp = 0; r->tcp < 2; r->tcp++) {
		client_t c = { (const struct sockaddr *)&a->src, r->tcp };
		memset(&r->trail, 0, sizeof(r->trail));
		r->len = query_process(&r->q, &c, in, inlen, r->out, sizeof(r->out));
		if (!r->len) {
			snprintf(err, errlen, "the query was dropped");
			return -1;
		}
		if (!(r->out[2] & 0x02))
			break;
	}
	return 0;
}

void explain_run_free(explain_run_t *r)
{
	wdb_reader_free(r->q.wdb);
	snapshot_free(r->own);
	r->q.wdb = NULL;
	r->own = NULL;
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
static void response_json(const explain_run_t *r, json_t *out)
{
	char buf[16];
	ldns_pkt *pkt = NULL;
	json_object_set_new(out, "rcode", json_string(rcode_name(r->trail.rcode, buf,
	                                                         sizeof(buf))));
	if (ldns_wire2pkt(&pkt, r->out, r->len) != LDNS_STATUS_OK)
		pkt = NULL;   /* query_process() wrote it: cannot happen */
	json_object_set_new(out, "answers", pkt ? section_rrs(ldns_pkt_answer(pkt)) : json_array());
	json_object_set_new(out, "authority", pkt ? section_rrs(ldns_pkt_authority(pkt)) : json_array());
	json_object_set_new(out, "answer_ttl", pkt && ldns_rr_list_rr_count(ldns_pkt_answer(pkt)) ?
		json_integer(ldns_rr_ttl(ldns_rr_list_rr(ldns_pkt_answer(pkt), 0))) : json_null());
	if (pkt)
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
static json_t *candidates_json(const explain_run_t *r, const gslb_result_t *g,
                               uint16_t qtype)
{
	json_t *cands = json_array();
	wdb_txn_t *t = wdb_begin_read(r->db);
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
static json_t *empty_row_json(const explain_run_t *r, const char *svc,
                              const gslb_result_t *g, gslb_row_t row, uint16_t qtype)
{
	json_t *arr = json_array();
	int by_reg = row == GSLB_ROW_REGION_ISP || row == GSLB_ROW_REGION;
	int by_isp = row == GSLB_ROW_REGION_ISP || row == GSLB_ROW_ISP;
	wdb_reader_t *rd = wdb_reader_new(r->db);
	wdb_txn_t *t = wdb_begin_read(r->db);
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
static json_t *chain_json(const explain_run_t *r, const explain_ask_t *a,
                          const gslb_result_t *g, const gslb_trail_t *t)
{
	static const char *const what[] = { "not tried", "no row",
	                                    "no usable node", "answered",
	                                    "over capacity, spilled" };
	json_t *arr = json_array();
	for (unsigned i = 0; i < t->nchain; i++) {
		json_t *e = json_pack("{s:s, s:s}", "level", gslb_row_name(t->chain[i]),
		                      "result", what[t->level[i]]);
		if (t->level[i] == GSLB_LEVEL_NO_USABLE)
			json_object_set_new(e, "nodes", empty_row_json(r, a->name, g,
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
static json_t *client_json(const explain_ask_t *a, const explain_run_t *r)
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
static json_t *service_json(const explain_ask_t *a, const explain_run_t *r,
                            explain_steer_fn steer, void *arg)
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
	json_object_set_new(out, "chain", chain_json(r, a, g, &r->trail.gslb));
	json_object_set_new(out, "row", json_string(gslb_row_name(g->row)));
	json_object_set_new(out, "candidates", candidates_json(r, g, a->qtype));
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
	wdb_txn_t *t = wdb_begin_read(r->db);
	json_t *svcj = t ? wdb_get(t, WDB_SERVICE, a->name) : NULL;
	wdb_abort(t);
	json_object_set_new(out, "shadow",
	                    json_boolean(json_is_true(json_object_get(svcj, "shadow"))));
	json_decref(svcj);
	/* Why the row's weights are what they are when the service steers
	 * (S3-7): the engine's inputs, scores, limits and budgets. */
	if (g->row != GSLB_ROW_NONE && (t = wdb_begin_read(r->db))) {
		int reg = g->row == GSLB_ROW_REGION_ISP || g->row == GSLB_ROW_REGION;
		int isp = g->row == GSLB_ROW_REGION_ISP || g->row == GSLB_ROW_ISP;
		char key[1200];
		wdb_row_key(key, sizeof(key), a->name, reg ? g->geo.region : "*",
		            isp ? g->geo.isp : "*");
		json_t *st = steer ? steer(arg, t, key) : NULL;
		wdb_abort(t);
		if (st)
			json_object_set_new(out, "steering", st);
	}
	response_json(r, out);
	return out;
}

/* The explanation of an answer that no service made: zone data, or the
 * refusal of a name outside our zones. */
static json_t *static_json(const explain_ask_t *a, const explain_run_t *r)
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
	wdb_txn_t *t = wdb_begin_read(r->db);
	json_t *svcj = t ? wdb_get(t, WDB_SERVICE, a->name) : NULL;
	wdb_abort(t);
	json_object_set_new(out, "service_shadowed", json_boolean(svcj != NULL));
	json_decref(svcj);
	response_json(r, out);
	return out;
}

/* Prints the answer lines shared by both kinds of explanation. */
json_t *explain_json(const explain_ask_t *a, const explain_run_t *r,
                     explain_steer_fn steer, void *arg)
{
	const gslb_result_t *g = r->trail.res;
	json_t *out = g ? service_json(a, r, steer, arg) : static_json(a, r);
	json_object_set_new(out, "kind", json_string(g ? "service" : "static"));
	return out;
}
