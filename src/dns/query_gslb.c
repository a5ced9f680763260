/* SPDX-License-Identifier: MIT */
/* The answers of GSLB services in query_process(): the service looked
 * up and resolved (gslb/), its addresses or CNAME written, signed with
 * DO in a signed zone. */
#include "dns/query_gslb.h"
#include "dns/qsign.h"
#include "dns/tally.h"

#include <string.h>

/* Whether address @a (@len bytes: 4 or 16) of the @i-th picked node is
 * written already, by an earlier picked node or earlier in its own list:
 * two nodes with one address must not make a duplicate record (RFC 2181
 * §5: an RRset holds each record once).  A few comparisons, no state. */
static int addr_written(const plan_t *p, const gslb_result_t *g, unsigned i,
                        unsigned len, const uint8_t *a)
{
	for (unsigned j = 0; j <= i; j++) {
		const plan_node_t *n = &p->node[g->picked[j]];
		const uint8_t *base = len == 4 ? n->a4 : n->a6;
		unsigned cnt = len == 4 ? n->n4 : n->n6;
		for (unsigned k = 0; k < cnt; k++) {
			const uint8_t *b = base + len * k;
			if (b == a)
				return 0;   /* reached @a itself: nothing before it */
			if (!(n->flags & PLAN_CNAME) && memcmp(a, b, len) == 0)
				return 1;
		}
	}
	return 0;
}

int qg_answer(wbuf_t *w, const zone_t *z, const dnssec_zone_t *sz,
              const uint8_t *owner, const uint8_t *lowner,
              const gslb_result_t *g, uint16_t qtype)
{
	const plan_t *p = &g->plan;
	unsigned written = 0;
	/* The records written, in the zone's RRset form, for the signature:
	 * POLICY_MAX_ANSWERS nodes of PLAN_MAX_ADDRS AAAA at most. */
	uint8_t set[POLICY_MAX_ANSWERS * PLAN_MAX_ADDRS * (2 + 16)];
	size_t setlen = 0;
	/* RFC 7871 §7.2.1: a scope only when the ECS option located the
	 * client; an option that was not used is echoed with scope 0. */
	w->q->scope = w->q->client.from_ecs ? g->scope : 0;
	if (g->npicked && (p->node[g->picked[0]].flags & PLAN_CNAME)) {
		const plan_node_t *n = &p->node[g->picked[0]];
		if (w_rr(w, SEC_AN, owner, RR_CNAME, 1, g->ttl, n->cname,
		         n->cname_len))
			return -1;
		if (!sz)
			return 0;
		wr16(set, n->cname_len);
		memcpy(set + 2, n->cname, n->cname_len);
		return qs_rrsig_set(w, SEC_AN, sz, owner, lowner, RR_CNAME, g->ttl,
		                    1, set, 2u + n->cname_len);
	}
	/* RFC 8482: for ANY, the A RRset (or AAAA if there is none). */
	int want4 = qtype == RR_A || qtype == RR_ANY;
	int want6 = qtype == RR_AAAA;
	if (qtype == RR_ANY) {
		unsigned n4 = 0;
		for (unsigned i = 0; i < g->npicked; i++)
			n4 += p->node[g->picked[i]].n4;
		want6 = n4 == 0;
		want4 = n4 > 0;
	}
	for (unsigned i = 0; i < g->npicked; i++) {
		const plan_node_t *n = &p->node[g->picked[i]];
		if (n->flags & PLAN_CNAME)
			continue;
		for (unsigned k = 0; want4 && k < n->n4; k++) {
			if (addr_written(p, g, i, 4, n->a4 + 4 * k))
				continue;
			if (w_rr(w, SEC_AN, owner, RR_A, 1, g->ttl, n->a4 + 4 * k, 4))
				return -1;
			written++;
			if (sz) {
				wr16(set + setlen, 4);
				memcpy(set + setlen + 2, n->a4 + 4 * k, 4);
				setlen += 6;
			}
		}
		for (unsigned k = 0; want6 && k < n->n6; k++) {
			if (addr_written(p, g, i, 16, n->a6 + 16 * k))
				continue;
			if (w_rr(w, SEC_AN, owner, RR_AAAA, 1, g->ttl, n->a6 + 16 * k, 16))
				return -1;
			written++;
			if (sz) {
				wr16(set + setlen, 16);
				memcpy(set + setlen + 2, n->a6 + 16 * k, 16);
				setlen += 18;
			}
		}
	}
	/* NODATA (no row, all down and fail closed, no node of the type):
	 * negatively cached for no longer than an address would be
	 * (RFC 2308 §5 takes the SOA record's TTL when it is the lower). */
	uint32_t neg = g->ttl < z->neg_ttl ? g->ttl : z->neg_ttl;
	if (!written && sz) {
		qs_class(w, RRL_NODATA, NULL);  /* S1-12: per QNAME */
		/* The types a service name has: addresses of either family,
		 * depending on the client and the health of its nodes. */
		static const uint16_t types[2] = { RR_A, RR_AAAA };
		return qs_deny(w, sz, z, owner, lowner, types, 2, qtype, neg);
	}
	if (!written)
		return w_soa_ttl(w, z, neg);
	if (sz)
		return qs_rrsig_set(w, SEC_AN, sz, owner, lowner,
		                    want4 ? RR_A : RR_AAAA, g->ttl, (uint16_t)written,
		                    set, setlen);
	return 0;
}

int qg_find(wbuf_t *w, const uint8_t *name, size_t len, uint16_t qtype,
            gslb_result_t *g)
{
	qctx_t *q = w->q;
	if (!q->wdb)
		return 0;
	char buf[DNAME_MAXLEN * 4 + 2];
	const char *key;
	size_t kl;
	int rc = gslb_service(q->wdb, q->memo, name, len, buf, sizeof(buf),
	                      &key, &kl, &g->svc);
	if (rc)
		return rc == GSLB_ENOENT ? 0 : -1;
	const edns_t *e = q->edns;
	int use_ecs = q->snap->geo ? geo_use_ecs(q->snap->geo) : 1;
	gslb_client_from(&q->client, q->src,
	                 use_ecs && e && e->ecs ? e->ecs_family : 0,
	                 e ? e->ecs_addr : NULL, e ? e->ecs_source : 0);
	rc = gslb_resolve_svc(q->wdb, q->memo, q->snap->geo, key, kl, qtype,
	                      &q->client, q->now, &q->rng, g,
	                      q->trail ? &q->trail->gslb : NULL);
	if (rc == 0 && q->trail)
		q->trail->res = g;
	if (rc == 0) {
		STAT_INC(q->stats, STAT_GSLB);
		if (g->short_ttl)
			STAT_INC(q->stats, STAT_GSLB_SHORT);
		if (g->failed_open)
			STAT_INC(q->stats, STAT_GSLB_OPEN);
		if (!g->npicked)
			STAT_INC(q->stats, STAT_GSLB_NONE);
		tally_add(q->tally, key, kl, g);
	}
	return rc == 0 ? 1 : rc == GSLB_ENOENT ? 0 : -1;
}
