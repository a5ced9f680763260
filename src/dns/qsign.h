/* SPDX-License-Identifier: MIT */
/* The query path's side of online signing (dnssec/ does the signing):
 * RRSIGs after the RRsets query.c writes, the DNSKEY RRset at a signed
 * apex, and denial of existence by compact answers (RFC 9824): one NSEC
 * owned by the name asked for, whose next name is the name's immediate
 * successor \000.NAME, so that one signature proves what is missing
 * without walking the zone.
 *
 * Only reached when the query has the DO bit and the zone is signed
 * (wbuf_t.sign): a query without DO costs one branch.  Nothing here
 * allocates; a signature not in the thread's cache is made by OpenSSL,
 * which does.  A signature that cannot be made sets wbuf_t.sign_fail,
 * and query_process() answers SERVFAIL rather than an answer that
 * cannot validate. */
#ifndef GSLB_QSIGN_H
#define GSLB_QSIGN_H

#include "dns/rrl.h"
#include "dns/wire.h"
#include "dnssec/dnssec.h"

/** The signed zone of @z when the answer is to be signed, else NULL.
 * A zone that lacks a signing key's private half (cluster mode) makes
 * the answer SERVFAIL (wbuf_t.sign_fail): never one that cannot
 * validate. */
static inline const dnssec_zone_t *qs_zone(wbuf_t *w, const zone_t *z)
{
	if (!w->sign)
		return NULL;
	const dnssec_zone_t *sz = dnssec_zone_find(w->q->snap->dnssec, z->apex,
	                                           z->apex_len);
	if (sz && sz->missing)
		w->sign_fail = 1;
	return sz;
}

/** Sets the class rate limiting counts the answer being written in
 * (S1-12): @cls and the account's name @name (NULL: the QNAME), as
 * rrl_classify() would read the answer unsigned; called before the
 * first signature, which charges it (qs_rrsig()).  Once an answer
 * record is written (a CNAME followed) the class stays RRL_ANSWER. */
static inline void qs_class(wbuf_t *w, rrl_class_t cls, const uint8_t *name)
{
	if (w->count[SEC_AN])
		return;
	w->rrl_cls = (uint8_t)cls;
	w->rrl_name = name;
}

/** Writes into section @sec the RRSIG of every signing key of @sz over
 * the RRset (@owner as w_rr() takes it, @lowner its lowercase wire
 * name, @type, @ttl, @count records in the zone's RRset form at
 * @rdata).  Returns 0, or -1 when they do not fit or when rate limiting
 * (qctx_t.rrl), charged with wbuf_t.rrl_cls before the response's first
 * signature, withholds the answer (wbuf_t.rrl_cut). */
int qs_rrsig(wbuf_t *w, int sec, const dnssec_zone_t *sz, const uint8_t *owner,
             const uint8_t *lowner, uint16_t type, uint32_t ttl,
             uint16_t count, const uint8_t *rdata);

/** qs_rrsig() for the @count records (@rdlen bytes at @rdata) of an
 * answer just put together, a GSLB service's: the signature cache finds
 * them by those records (addresses in byte order) rather than by their
 * canonical form (dnssec_rrsig_set()). */
int qs_rrsig_set(wbuf_t *w, int sec, const dnssec_zone_t *sz,
                 const uint8_t *owner, const uint8_t *lowner, uint16_t type,
                 uint32_t ttl, uint16_t count, const uint8_t *rdata,
                 size_t rdlen);

/** w_rrset() and, with @sz, its RRSIGs.  Inline, so that an answer
 * without DO writes its RRset exactly as it did before signing. */
static inline int qs_rrset(wbuf_t *w, int sec, const dnssec_zone_t *sz,
                           const uint8_t *owner, const uint8_t *lowner,
                           const zrrset_t *s, uint32_t ttl)
{
	if (w_rrset(w, sec, owner, s, ttl))
		return -1;
	if (!sz)
		return 0;
	return qs_rrsig(w, sec, sz, owner, lowner, s->type, ttl, s->count, s->rdata);
}

/** Whether the signed zone @dz has an RRset of @qtype that the signer
 * makes at the apex: DNSKEY, and CDS and CDNSKEY while a KSK or CSK
 * rolls (RFC 7344, RFC 8078). */
static inline int qs_keyset(const dnssec_zone_t *dz, uint16_t qtype)
{
	return qtype == RR_DNSKEY ||
	       ((qtype == RR_CDS || qtype == RR_CDNSKEY) && dz->cds_count);
}

/** The DNSKEY RRset (or CDS, CDNSKEY: @qtype) of the signed zone @dz at
 * the apex of @z into the answer, with its RRSIGs when @sign (DO set).
 * Returns 0 or -1. */
int qs_dnskey(wbuf_t *w, const dnssec_zone_t *dz, int sign, const zone_t *z,
              const uint8_t *owner, uint16_t qtype);

/** A compact denial into the authority section: the zone's SOA with TTL
 * @ttl, and the NSEC at @owner (@lowner) with TTL @ttl whose bitmap
 * holds RRSIG, NSEC and the @ntypes types @types but @qtype (all but
 * @qtype: NODATA; RFC 9824 §3 NXDOMAIN gives NXNAME as its only type),
 * each signed.  Returns 0 or -1 when it does not fit. */
int qs_deny(wbuf_t *w, const dnssec_zone_t *sz, const zone_t *z,
            const uint8_t *owner, const uint8_t *lowner, const uint16_t *types,
            unsigned ntypes, uint16_t qtype, uint32_t ttl);

/** The NSEC of @owner (@lowner) as qs_deny() makes it, signed, into
 * section @sec (the answer, for a query of type NSEC; the authority, for
 * the NSEC proof of a delegation without DS). */
int qs_nsec(wbuf_t *w, int sec, const dnssec_zone_t *sz, const uint8_t *owner,
            const uint8_t *lowner, const uint16_t *types, unsigned ntypes,
            uint16_t qtype, uint32_t ttl);

/* The most types qs_node_types() gives (a name with more RRsets is
 * denied with the first ones: more than any zone holds at one name). */
#define QS_TYPES_MAX 48

/** The types of node @n for an NSEC bitmap (the zone file's own RRSIG,
 * NSEC, NSEC3, DNSKEY, CDS and CDNSKEY left out: qs_nsec() adds its own), with DNSKEY
 * at the apex, into @out (QS_TYPES_MAX entries).  Returns how many. */
unsigned qs_node_types(const znode_t *n, uint16_t *out);

/** Whether a signed zone serves the zone file's records of @type: not
 * the DNSSEC records the online signer makes itself. */
static inline int qs_served_type(uint16_t type)
{
	return type != RR_RRSIG && type != RR_NSEC && type != RR_DNSKEY &&
	       type != RR_NSEC3 && type != RR_CDS && type != RR_CDNSKEY;
}

#endif
