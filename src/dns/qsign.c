/* SPDX-License-Identifier: MIT */
/* RRSIGs, DNSKEY and compact denial in the responses of query.c. */
#include "dns/qsign.h"
#include "dns/rrl.h"
#include "dnssec/rrsig.h"

#include <string.h>

/* Counts what dnssec_rrsig() did (dns/query.h STAT_DNSSEC_*). */
static void count(qctx_t *q, unsigned what)
{
	if (what & DNSSEC_HIT) {
		STAT_INC(q->stats, STAT_DNSSEC_HITS);
		return;
	}
	STAT_INC(q->stats, STAT_DNSSEC_MISSES);
	if (what & DNSSEC_MADE)
		STAT_INC(q->stats, STAT_DNSSEC_SIGNATURES);
	if (what & DNSSEC_EVICTED)
		STAT_INC(q->stats, STAT_DNSSEC_EVICTIONS);
	__atomic_store_n(&q->stats[STAT_DNSSEC_ENTRIES],
	                 (uint64_t)dnssec_thread_cached(q->dsig), __ATOMIC_RELAXED);
}

/* S1-12: rate limiting decides before the first signature of a UDP
 * response, from the class query.c has set, so that an answer it drops
 * or slips is never signed (a slip carries no signatures).  Returns 0
 * to sign, or -1 with the verdict in w->rrl_cut. */
static int gate(wbuf_t *w)
{
	qctx_t *q = w->q;
	q->rrl_done = 1;
	rrl_class_t cls = (rrl_class_t)w->rrl_cls;
	const uint8_t *name = w->rrl_name ? w->rrl_name : w->qname;
	rrl_verdict_t v = rrl_charge(q->rrl, q->src, cls, name,
	                             cls == RRL_ANSWER ? w->qtype : 0, q->now,
	                             (cookie_kind_t)q->cookie, q->stats);
	if (v == RRL_PASS)
		return 0;
	w->rrl_cut = (uint8_t)v;
	return -1;
}

/* qs_rrsig() and qs_rrsig_set(): @rdlen 0 keys the cache by the
 * signed data, else by the records as given (dnssec_rrsig_set()). */
static int rrsigs(wbuf_t *w, int sec, const dnssec_zone_t *sz,
                  const uint8_t *owner, const uint8_t *lowner, uint16_t type,
                  uint32_t ttl, uint16_t count_, const uint8_t *rdata,
                  size_t rdlen)
{
	qctx_t *q = w->q;
	uint8_t rd[DNSSEC_RRSIG_MAX];
	unsigned use = dnssec_type_use(type);
	if (q->rrl && !q->rrl_done && gate(w))
		return -1;
	for (unsigned k = 0; k < sz->nkeys; k++) {
		unsigned what;
		if (!(sz->use[k] & use))
			continue;        /* a KSK signs the key set, a ZSK the rest */
		size_t n = rdlen ?
		           dnssec_rrsig_set(q->dsig, sz, k, q->now, lowner, type, ttl,
		                            count_, rdata, rdlen, rd, &what) :
		           dnssec_rrsig(q->dsig, sz, k, q->now, lowner, type, ttl,
		                        count_, rdata, rd, &what);
		if (!n) {
			w->sign_fail = 1;
			return 0;
		}
		count(q, what);
		if (w_rr(w, sec, owner, RR_RRSIG, 1, ttl, rd, (uint16_t)n))
			return -1;
	}
	return 0;
}

int qs_rrsig(wbuf_t *w, int sec, const dnssec_zone_t *sz, const uint8_t *owner,
             const uint8_t *lowner, uint16_t type, uint32_t ttl,
             uint16_t count_, const uint8_t *rdata)
{
	return rrsigs(w, sec, sz, owner, lowner, type, ttl, count_, rdata, 0);
}

int qs_rrsig_set(wbuf_t *w, int sec, const dnssec_zone_t *sz,
                 const uint8_t *owner, const uint8_t *lowner, uint16_t type,
                 uint32_t ttl, uint16_t count_, const uint8_t *rdata,
                 size_t rdlen)
{
	return rrsigs(w, sec, sz, owner, lowner, type, ttl, count_, rdata, rdlen);
}

int qs_dnskey(wbuf_t *w, const dnssec_zone_t *dz, int sign, const zone_t *z,
              const uint8_t *owner, uint16_t qtype)
{
	zrrset_t s = { .type = RR_DNSKEY, .count = dz->dnskey_count,
	               .ttl = dz->dnskey_ttl, .size = (uint32_t)dz->dnskey_size,
	               .rdata = dz->dnskey_rdata };
	if (qtype == RR_CDS || qtype == RR_CDNSKEY) {
		s.type = qtype;
		s.count = dz->cds_count;
		s.size = (uint32_t)(qtype == RR_CDS ? dz->cds_size : dz->cdnskey_size);
		s.rdata = qtype == RR_CDS ? dz->cds_rdata : dz->cdnskey_rdata;
	}
	return qs_rrset(w, SEC_AN, sign ? dz : NULL, owner, z->apex, &s, s.ttl);
}

unsigned qs_node_types(const znode_t *n, uint16_t *out)
{
	unsigned k = 0;
	for (uint16_t i = 0; i < n->nrrsets && k + 1 < QS_TYPES_MAX; i++) {
		uint16_t t = n->rrsets[i].type;
		/* The zone file's own DNSSEC records are not served when the
		 * zone is signed online: the signer's take their place. */
		if (qs_served_type(t))
			out[k++] = t;
	}
	if (n->flags & ZNODE_APEX)
		out[k++] = RR_DNSKEY;
	return k;
}

int qs_nsec(wbuf_t *w, int sec, const dnssec_zone_t *sz, const uint8_t *owner,
            const uint8_t *lowner, const uint16_t *types, unsigned ntypes,
            uint16_t qtype, uint32_t ttl)
{
	/* rdata: next name (uncompressed, RFC 4034 §4.1.1) and bitmap. */
	uint8_t rd[2 + 256 + 2 * 34];
	uint16_t t[64];
	size_t ol = dname_len(lowner, 255);
	size_t p;
	if (ol + 2 <= 255) {
		/* RFC 9824 §2: the immediate successor, \000.NAME. */
		rd[0] = 1;
		rd[1] = 0;
		memcpy(rd + 2, lowner, ol);
		p = ol + 2;
	} else {
		/* No successor fits in 255 bytes: the name itself, which
		 * covers no other name either. */
		memcpy(rd, lowner, ol);
		p = ol;
	}
	unsigned n = 0;
	for (unsigned i = 0; i < ntypes && n < 59; i++)
		if (types[i] != qtype)
			t[n++] = types[i];
	/* The apex has CDS and CDNSKEY while a KSK or CSK rolls. */
	if (sz->cds_count && ol == sz->apex_len &&
	    memcmp(lowner, sz->apex, ol) == 0) {
		if (qtype != RR_CDS)
			t[n++] = RR_CDS;
		if (qtype != RR_CDNSKEY)
			t[n++] = RR_CDNSKEY;
	}
	t[n++] = RR_RRSIG;
	t[n++] = RR_NSEC;
	p += dnssec_nsec_bitmap(rd + p, t, n);
	if (w_rr(w, sec, owner, RR_NSEC, 1, ttl, rd, (uint16_t)p))
		return -1;
	/* One record in the zone's RRset form for the signature. */
	uint8_t set[2 + sizeof(rd)];
	wr16(set, (uint16_t)p);
	memcpy(set + 2, rd, p);
	return qs_rrsig(w, sec, sz, owner, lowner, RR_NSEC, ttl, 1, set);
}

int qs_deny(wbuf_t *w, const dnssec_zone_t *sz, const zone_t *z,
            const uint8_t *owner, const uint8_t *lowner, const uint16_t *types,
            unsigned ntypes, uint16_t qtype, uint32_t ttl)
{
	if (qs_rrset(w, SEC_NS, sz, z->apex, z->apex, z->soa, ttl))
		return -1;
	return qs_nsec(w, SEC_NS, sz, owner, lowner, types, ntypes, qtype, ttl);
}
