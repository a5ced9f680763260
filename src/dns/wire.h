/* SPDX-License-Identifier: MIT */
/* The response writer of query_process(): a bounded output buffer with
 * section counts, name compression against the names already written,
 * and records and RRsets in wire form.
 *
 * Included by dns/query.c, dns/query_gslb.c and dns/qsign.c only.  The
 * functions are static inline so that the compiler keeps inlining them
 * into the query path as it did when they lived in query.c; nothing here
 * allocates. */
#ifndef GSLB_WIRE_H
#define GSLB_WIRE_H

#include <string.h>

#include "common/util.h"
#include "dns/query.h"
#include "dns/zone.h"

enum { SEC_AN, SEC_NS, SEC_AR };

typedef struct {
	uint8_t *p;
	size_t pos;
	size_t limit;        /* the sections end here; room for OPT follows */
	qctx_t *q;
	uint16_t count[3];
	uint8_t sign;        /* DO set, a signer and signed zones: answers of
	                        signed zones get RRSIGs (dns/qsign.h) */
	uint8_t sign_fail;   /* a signature could not be made: SERVFAIL */
	/* Rate limiting before signing (S1-12, dns/rrl.h rrl_charge()):
	 * the class of the answer being written, as rrl_classify() would
	 * read the unsigned answer, set before its first signature. */
	uint8_t rrl_cls;     /* rrl_class_t; RRL_ANSWER (0) unless set */
	uint8_t rrl_cut;     /* rrl_verdict_t: the answer was withheld */
	uint16_t qtype;      /* the question's type */
	const uint8_t *qname;    /* the question's name, lowercase */
	const uint8_t *rrl_name; /* the account's name: the zone (NXDOMAIN),
	                            the delegation (REFERRAL); NULL: QNAME */
} wbuf_t;

/* Compares the (possibly compressed) name at @pkt[@off], which we wrote
 * ourselves, with the uncompressed name @s, ignoring case. */
static inline int pkt_name_eq(const uint8_t *pkt, size_t off, const uint8_t *s)
{
	for (unsigned hops = 0; hops < 64;) {
		uint8_t l = pkt[off];
		if ((l & 0xC0) == 0xC0) {
			off = (size_t)(l & 0x3F) << 8 | pkt[off + 1];
			hops++;
			continue;
		}
		if (l != *s)
			return 0;
		if (!l)
			return 1;
		for (uint8_t k = 1; k <= l; k++)
			if (dname_lower[pkt[off + k]] != dname_lower[s[k]])
				return 0;
		off += (size_t)l + 1;
		s += l + 1;
	}
	return 0;
}

static inline void comp_add(qctx_t *q, size_t off)
{
	if (off < 0x4000 && q->ncomp < QCTX_COMP_MAX)
		q->comp[q->ncomp++] = (uint16_t)off;
}

/* Writes @name, compressed against the names already in the packet. */
static inline int w_name(wbuf_t *w, const uint8_t *name)
{
	const uint8_t *s = name;
	size_t ptr = 0;
	int found = 0;
	while (*s && !found) {
		for (unsigned i = 0; i < w->q->ncomp; i++)
			if (pkt_name_eq(w->p, w->q->comp[i], s)) {
				ptr = w->q->comp[i];
				found = 1;
				break;
			}
		if (!found)
			s += *s + 1;
	}
	size_t lit = (size_t)(s - name);
	size_t need = lit + (found ? 2 : 1);
	if (w->pos + need > w->limit)
		return -1;
	for (const uint8_t *l = name; l < s; l += *l + 1)
		comp_add(w->q, w->pos + (size_t)(l - name));
	memcpy(w->p + w->pos, name, lit);
	w->pos += lit;
	if (found) {
		wr16(w->p + w->pos, (uint16_t)(0xC000 | ptr));
		w->pos += 2;
	} else {
		w->p[w->pos++] = 0;
	}
	return 0;
}

static inline int w_bytes(wbuf_t *w, const void *b, size_t n)
{
	if (w->pos + n > w->limit)
		return -1;
	memcpy(w->p + w->pos, b, n);
	w->pos += n;
	return 0;
}

/* Writes one RR.  @owner NULL means "the QNAME as asked" (a pointer to
 * offset 12, which keeps the client's case).  Names inside the rdata of
 * the RFC 1035 types are compressed; other rdata is copied as is
 * (RFC 3597 §4).  On overflow nothing is written and -1 is returned. */
static inline int w_rr(wbuf_t *w, int sec, const uint8_t *owner, uint16_t type,
                uint16_t cls, uint32_t ttl, const uint8_t *rd, uint16_t rdlen)
{
	size_t save = w->pos;
	unsigned savec = w->q->ncomp;
	uint8_t hdr[10];
	if (owner) {
		if (w_name(w, owner))
			goto full;
	} else {
		static const uint8_t qptr[2] = { 0xC0, 12 };
		if (w_bytes(w, qptr, 2))
			goto full;
	}
	wr16(hdr, type);
	wr16(hdr + 2, cls);
	wr32(hdr + 4, ttl);
	if (w_bytes(w, hdr, 10))
		goto full;
	size_t rdstart = w->pos;
	switch (type) {
	case RR_NS:
	case RR_CNAME:
	case RR_PTR:
		if (w_name(w, rd))
			goto full;
		break;
	case RR_MX:
		if (w_bytes(w, rd, 2) || w_name(w, rd + 2))
			goto full;
		break;
	case RR_SOA: {
		size_t l1 = dname_len(rd, rdlen);
		size_t l2 = dname_len(rd + l1, rdlen - l1);
		if (w_name(w, rd) || w_name(w, rd + l1) ||
		    w_bytes(w, rd + l1 + l2, 20))
			goto full;
		break;
	}
	default:
		if (w_bytes(w, rd, rdlen))
			goto full;
	}
	wr16(w->p + rdstart - 2, (uint16_t)(w->pos - rdstart));
	w->count[sec]++;
	return 0;
full:
	w->pos = save;
	w->q->ncomp = savec;
	return -1;
}

static inline int w_rrset(wbuf_t *w, int sec, const uint8_t *owner,
                   const zrrset_t *s, uint32_t ttl)
{
	const uint8_t *p = s->rdata;
	for (uint16_t i = 0; i < s->count; i++) {
		uint16_t ln = rd16(p);
		if (w_rr(w, sec, owner, s->type, 1, ttl, p + 2, ln))
			return -1;
		p += 2 + ln;
	}
	return 0;
}

/* Addresses of in-zone targets of NS, MX and SRV records.  @required:
 * glue of a referral, whose absence must be signalled with TC. */
static inline int w_additional(wbuf_t *w, const zrrset_t *s, int required)
{
	if (!s->targets)
		return 0;
	for (uint16_t i = 0; i < s->count; i++) {
		const znode_t *t = s->targets[i];
		if (!t)
			continue;
		for (uint16_t k = 0; k < t->nrrsets; k++) {
			const zrrset_t *a = &t->rrsets[k];
			if (a->type != RR_A && a->type != RR_AAAA)
				continue;
			if (w_rrset(w, SEC_AR, t->name, a, a->ttl) && required)
				return -1;
		}
	}
	return 0;
}

/* The SOA of a negative answer with TTL @ttl: the zone's negative TTL,
 * or less for a GSLB name (RFC 2308 §5, RFC 7871 §7.4). */
static inline int w_soa_ttl(wbuf_t *w, const zone_t *z, uint32_t ttl)
{
	return w_rrset(w, SEC_NS, z->apex, z->soa, ttl);
}

static inline int w_soa(wbuf_t *w, const zone_t *z)
{
	return w_soa_ttl(w, z, z->neg_ttl);
}

#endif
