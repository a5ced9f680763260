/* SPDX-License-Identifier: MIT */
/* query_process(): wire in, wire out.
 *
 * The answer rules are RFC 1034 §4.3.2 (with RFC 2308 negative answers,
 * RFC 4592 wildcards, RFC 6604 CNAME chains), EDNS per RFC 6891, and the
 * error handling of RFC 8906.  Nothing here allocates: the response is
 * written straight into the caller's buffer, names are compressed with a
 * small per-thread table of earlier name offsets. */
#include "dns/query.h"
#include "dns/cookie.h"
#include "dns/edns.h"
#include "gslb/gslb.h"
#include "common/util.h"
#include "dns/qsign.h"
#include "dns/query_gslb.h"
#include "dns/wire.h"
#include "dns/zone.h"
#include "dnssec/rrsig.h"

#include <string.h>

typedef enum { LK_FOUND, LK_WILDCARD, LK_DELEG, LK_NXDOMAIN } lk_t;

/* Looks @name (lowercase, @len bytes, @labels labels) up in @z, walking
 * down from the apex so that a zone cut on the way is seen (a referral,
 * except for DS at the cut, which the parent side answers). */
static lk_t lookup(const zone_t *z, const uint8_t *name, size_t len,
                   unsigned labels, uint16_t qtype, const znode_t **node)
{
	unsigned extra = labels - z->apex_labels;
	const uint8_t *sfx[DNAME_MAXLABELS + 1];
	const uint8_t *s = name;
	for (unsigned i = 0; i <= extra; i++, s += *s + 1)
		sfx[i] = s;
	const znode_t *ce = z->apex_node;
	for (unsigned d = 1; d <= extra; d++) {
		s = sfx[extra - d];
		size_t sl = len - (size_t)(s - name);
		const znode_t *n = zone_find(z, s, sl, dname_hash(s));
		if (!n)
			goto nx;
		if ((n->flags & ZNODE_DELEG) && !(d == extra && qtype == RR_DS)) {
			*node = n;
			return LK_DELEG;
		}
		ce = n;
	}
	*node = ce;
	return LK_FOUND;
nx:
	/* RFC 4592: the closest encloser's "*" child answers for it. */
	if (ce->flags & ZNODE_WILDCARD) {
		uint8_t wc[DNAME_MAXLEN + 2];
		wc[0] = 1;
		wc[1] = '*';
		size_t cl = ce->namelen;
		if (cl + 2 <= DNAME_MAXLEN) {
			memcpy(wc + 2, ce->name, cl);
			const znode_t *n = zone_find(z, wc, cl + 2, dname_hash(wc));
			if (n) {
				*node = n;
				return LK_WILDCARD;
			}
		}
	}
	return LK_NXDOMAIN;
}

/* The referral to delegation @n (RFC 1034 §4.3.2 step 3b): its NS
 * RRset, and with @sz the signed DS of a secure delegation or the NSEC
 * that proves there is none (RFC 4035 §3.1.4), then the glue.  @chain:
 * CNAMEs followed before it (a referral is not authoritative unless an
 * answer came first).  Returns -1 when it does not fit. */
static int answer_deleg(wbuf_t *w, const zone_t *z, const dnssec_zone_t *sz,
                        const znode_t *n, unsigned chain, int *aa)
{
	uint16_t types[QS_TYPES_MAX];
	if (chain == 0)
		*aa = 0;
	/* S1-12: counted per delegation point, as rrl_classify() reads it. */
	qs_class(w, RRL_REFERRAL, n->name);
	const zrrset_t *ns = znode_rrset(n, RR_NS);
	if (w_rrset(w, SEC_NS, n->name, ns, ns->ttl))
		return -1;
	const zrrset_t *ds = sz ? znode_rrset(n, RR_DS) : NULL;
	if (ds && qs_rrset(w, SEC_NS, sz, n->name, n->name, ds, ds->ttl))
		return -1;
	if (sz && !ds &&
	    qs_nsec(w, SEC_NS, sz, n->name, n->name, types,
	            qs_node_types(n, types), 0, z->neg_ttl))
		return -1;
	return w_additional(w, ns, 1);
}

/* The answer from node @n's own data for @qtype (not a CNAME to
 * follow): DNSKEY at a signed apex, the compact NSEC of a signed name,
 * the RRset (one RRset for ANY, RFC 8482), or NODATA.  @owner, @name:
 * as answer_in() has them.  Returns -1 when it does not fit. */
static int answer_node(wbuf_t *w, const snapshot_t *snap, const zone_t *z,
                       const dnssec_zone_t *sz, const znode_t *n,
                       const uint8_t *owner, const uint8_t *name,
                       uint16_t qtype)
{
	uint16_t types[QS_TYPES_MAX];
	/* DNSKEY (CDS, CDNSKEY) is the zone's data, asked with DO or
	 * without. */
	const dnssec_zone_t *dz;
	if ((qtype == RR_DNSKEY || qtype == RR_CDS || qtype == RR_CDNSKEY) &&
	    (n->flags & ZNODE_APEX) &&
	    (dz = sz ? sz : dnssec_zone_find(snap->dnssec, z->apex,
	                                     z->apex_len)) &&
	    qs_keyset(dz, qtype))
		return qs_dnskey(w, dz, sz != NULL, z, owner, qtype);
	if (sz && qtype == RR_NSEC)  /* the name's own compact NSEC */
		return qs_nsec(w, SEC_AN, sz, owner, name, types,
		               qs_node_types(n, types), 0, z->neg_ttl);
	const zrrset_t *rs = NULL;
	if (qtype == RR_ANY) {
		/* RFC 8482: one RRset is a full answer to ANY. */
		for (uint16_t i = 0; i < n->nrrsets && !rs; i++)
			if (n->rrsets[i].type != RR_RRSIG &&
			    (!sz || qs_served_type(n->rrsets[i].type)))
				rs = &n->rrsets[i];
	} else if (!sz || qs_served_type(qtype)) {
		rs = znode_rrset(n, qtype);
	}
	if (!rs && sz) {
		qs_class(w, RRL_NODATA, NULL);  /* S1-12: per QNAME */
		return qs_deny(w, sz, z, owner, name, types,
		               qs_node_types(n, types), qtype, z->neg_ttl);
	}
	if (!rs)
		return w_soa(w, z); /* NODATA (RFC 2308 §2.2) */
	if (qs_rrset(w, SEC_AN, sz, owner, name, rs, rs->ttl))
		return -1;
	w_additional(w, rs, 0);
	return 0;
}

/* Fills the answer for an IN query in zone @z.  Returns -1 when the
 * answer or authority section does not fit.  With DO in a signed zone
 * the class rate limiting counts the answer in is set (wbuf_t.rrl_cls)
 * before the first signature is made (S1-12). */
static int answer_in(wbuf_t *w, const snapshot_t *snap, const zone_t *z,
                     const uint8_t *lname, size_t len, unsigned labels,
                     uint16_t qtype, int *rcode, int *aa)
{
	uint8_t cur[DNAME_MAXLEN + 1];
	const uint8_t *owner = NULL; /* NULL: the QNAME itself */
	const uint8_t *name = lname;
	const znode_t *seen[DNAME_MAXLABELS]; /* CNAMEs followed: stop loops */
	const dnssec_zone_t *sz = qs_zone(w, z); /* NULL: unsigned answer */
	for (unsigned chain = 0;; chain++) {
		const znode_t *n;
		lk_t lk = lookup(z, name, len, labels, qtype, &n);
		if (lk == LK_DELEG)
			return answer_deleg(w, z, sz, n, chain, aa);
		/* A GSLB service answers for a name without static data of
		 * its own: one that does not exist, is an empty non-terminal
		 * or would come from a wildcard. */
		if (lk == LK_NXDOMAIN || lk == LK_WILDCARD || !n->nrrsets) {
			gslb_result_t *g = &w->q->gslb;
			int found = qg_find(w, name, len, qtype, g);
			if (found > 0) {
				w->q->gslb_hops = (uint16_t)(chain + 1);
				return qg_answer(w, z, sz, owner, name, g, qtype);
			}
			if (found < 0) {
				*rcode = RCODE_SERVFAIL;
				return 0;
			}
		}
		if (lk == LK_NXDOMAIN && sz) {
			/* RFC 9824 §3: NOERROR, and an NSEC of the name whose
			 * only type is NXNAME.  S1-12: counted as the
			 * unsigned NXDOMAIN is, per zone, so that random
			 * names share one account. */
			static const uint16_t nx[1] = { DNSSEC_T_NXNAME };
			qs_class(w, RRL_NXDOMAIN, z->apex);
			return qs_deny(w, sz, z, owner, name, nx, 1, 0, z->neg_ttl);
		}
		if (lk == LK_NXDOMAIN) {
			*rcode = RCODE_NXDOMAIN; /* RFC 6604: of the last name */
			return w_soa(w, z);
		}
		const zrrset_t *cn = (n->flags & ZNODE_CNAME) ?
		                     znode_rrset(n, RR_CNAME) : NULL;
		if (!cn || qtype == RR_CNAME)
			return answer_node(w, snap, z, sz, n, owner, name, qtype);
		for (unsigned i = 0; i < chain; i++)
			if (seen[i] == n)
				return 0;
		seen[chain] = n;
		if (qs_rrset(w, SEC_AN, sz, owner, name, cn, cn->ttl))
			return -1;
		const uint8_t *target = cn->rdata + 2;
		if (chain + 1 > snap->max_cname_chain)
			return 0;
		len = dname_copy_lower(cur, target);
		labels = dname_labels(cur);
		const zone_t *z2 = snapshot_find_zone(snap, cur, labels);
		if (!z2)
			return 0; /* the resolver follows it elsewhere */
		z = z2;
		sz = qs_zone(w, z);
		name = owner = cur;
	}
}

/* CH TXT id.server, hostname.bind, version.bind, version.server. */
static int answer_ch(wbuf_t *w, const snapshot_t *snap, const uint8_t *lname,
                     uint16_t qtype, int *aa)
{
	static const uint8_t id_server[] = "\x02id\x06server";
	static const uint8_t hostname_bind[] = "\x08hostname\x04" "bind";
	static const uint8_t version_bind[] = "\x07version\x04" "bind";
	static const uint8_t version_server[] = "\x07version\x06server";
	const uint8_t *text;
	uint8_t tlen;
	if (dname_equal(lname, id_server) || dname_equal(lname, hostname_bind)) {
		text = snap->identity;
		tlen = snap->identity_len;
	} else if (dname_equal(lname, version_bind) ||
	           dname_equal(lname, version_server)) {
		text = snap->version;
		tlen = snap->version_len;
	} else {
		return RCODE_REFUSED;
	}
	if (!tlen)
		return RCODE_REFUSED;
	*aa = 1;
	if (qtype == RR_TXT || qtype == RR_ANY) {
		uint8_t rd[256];
		rd[0] = tlen;
		memcpy(rd + 1, text, tlen);
		if (w_rr(w, SEC_AN, NULL, RR_TXT, 3, 0, rd, (uint16_t)(tlen + 1)))
			return -1;
	}
	return RCODE_NOERROR;
}

/* Skips one RR at @p; returns its TYPE or -1 if malformed. */
static int skip_rr(const uint8_t *in, size_t len, size_t *p)
{
	if (dname_skip(in, len, p) || *p + 10 > len)
		return -1;
	int type = rd16(in + *p);
	size_t rdlen = rd16(in + *p + 8);
	if (*p + 10 + rdlen > len)
		return -1;
	*p += 10 + rdlen;
	return type;
}

/* RFC 8945 §5.2: a TSIG-signed request with a key we do not have gets
 * NOTAUTH and an unsigned TSIG record with error BADKEY. */
static size_t w_tsig_badkey(uint8_t *out, size_t pos, size_t cap,
                            const uint8_t *in, size_t inlen, size_t tsig)
{
	uint8_t key[DNAME_MAXLEN], alg[DNAME_MAXLEN];
	size_t p = tsig;
	size_t kl = dname_unpack(in, inlen, &p, key);
	if (!kl || p + 10 > inlen)
		return 0;
	size_t rd = p + 10, rdend = rd + rd16(in + p + 8);
	size_t ap = rd;
	size_t al = dname_unpack(in, rdend, &ap, alg);
	if (!al || ap + 10 > rdend)
		return 0;
	size_t macsz = rd16(in + ap + 8);
	if (ap + 10 + macsz + 2 > rdend)
		return 0;
	uint16_t orig_id = rd16(in + ap + 10 + macsz);
	size_t need = kl + 10 + al + 10 + 6;
	if (pos + need > cap)
		return 0;
	uint8_t *o = out + pos;
	memcpy(o, key, kl), o += kl;
	wr16(o, RR_TSIG), wr16(o + 2, 255), wr32(o + 4, 0);
	wr16(o + 8, (uint16_t)(al + 16)), o += 10;
	memcpy(o, alg, al), o += al;
	memcpy(o, in + ap, 8), o += 8;  /* time signed and fudge, echoed */
	wr16(o, 0), o += 2;             /* MAC size 0 */
	wr16(o, orig_id), o += 2;
	wr16(o, 17), o += 2;            /* error BADKEY */
	wr16(o, 0), o += 2;             /* other len */
	return (size_t)(o - (out + pos));
}

/* The response size limit (RFC 6891 §6.2.5, RFC 1035 §4.2.1). */
static size_t resp_limit(const client_t *c, const edns_t *e,
                         const snapshot_t *snap, size_t outcap)
{
	size_t max = 512;
	if (c->tcp)
		max = 65535;
	else if (e->present)
		max = e->payload < snap->udp_max_payload ? e->payload
		                                         : snap->udp_max_payload;
	return max < outcap ? max : outcap;
}

/* The state of one query shared by the steps of query_process(); it
 * lives on query_process()'s stack. */
typedef struct {
	const client_t *c;
	const uint8_t *in;
	size_t inlen;
	edns_t e;                      /* the query's OPT; echoed in the reply */
	int rcode, aa;
	int qok;                       /* the question was copied */
	size_t tsig;                   /* offset of a TSIG record, or 0 */
	uint16_t qtype, qclass;
	size_t qlen;                   /* QNAME length in the query */
	uint8_t lname[DNAME_MAXLEN + 1];  /* QNAME, lowercase */
} qstate_t;

/* Parses the question and copies it into the response.  Returns 0, or
 * -1 with the RCODE in @s. */
static inline int q_question(wbuf_t *w, qstate_t *s)
{
	const uint8_t *in = s->in;
	if (rd16(in + 4) != 1) {
		/* An opcode we do not implement is NOTIMP whatever its
		 * sections hold (RFC 8906 §8.1.4): the question count is
		 * only meaningful for a QUERY. */
		s->rcode = ((in[2] >> 3) & 0xF) != 0 ? RCODE_NOTIMP : RCODE_FORMERR;
		return -1;
	}
	s->qlen = dname_len(in + 12, s->inlen - 12); /* no pointers in a question */
	if (!s->qlen || 12 + s->qlen + 4 > s->inlen) {
		s->rcode = RCODE_FORMERR;
		return -1;
	}
	s->qtype = rd16(in + 12 + s->qlen);
	s->qclass = rd16(in + 12 + s->qlen + 2);
	memcpy(w->p + 12, in + 12, s->qlen + 4);
	wr16(w->p + 4, 1);
	w->pos = 12 + s->qlen + 4;
	s->qok = 1;
	dname_copy_lower(s->lname, in + 12);
	for (size_t l = 12; w->p[l]; l += w->p[l] + 1u)
		comp_add(w->q, l);
	return 0;
}

/* The COOKIE option (RFC 7873, RFC 9018): one of a wrong length is
 * FORMERR (§5.2.2); any other gets ours in the reply, whatever it held:
 * an invalid server cookie is answered as if there were none (§5.2.3),
 * never with BADCOOKIE, which only rate limiting sends.  With cookies
 * off the option is ignored, as an unknown one.  Returns 0, or -1 with
 * the RCODE in @s. */
static inline int q_cookie(qctx_t *q, qstate_t *s)
{
	if ((!s->e.cookie_len && !s->e.cookie_bad) || !q->cookies ||
	    !cookie_sync(q->cookies)) {
		s->e.cookie_len = 0;
		return 0;
	}
	if (s->e.cookie_bad) {
		STAT_INC(q->stats, STAT_COOKIE_MALFORMED);
		q->cookie = COOKIE_MALFORMED;
		s->e.nsid = s->e.ecs = 0;
		s->rcode = RCODE_FORMERR;
		return -1;
	}
	uint8_t ip[16], out[COOKIE_OUT_LEN];
	size_t iplen = cookie_addr(s->c->addr, ip);
	if (!iplen) {
		s->e.cookie_len = 0;
		return 0;
	}
	cookie_kind_t k = cookie_check(q->cookies, s->e.cookie, s->e.cookie_len,
	                               ip, iplen, q->now, out);
	static const int stat[] = {
		[COOKIE_CLIENT] = STAT_COOKIE_CLIENT,
		[COOKIE_VALID] = STAT_COOKIE_VALID,
		[COOKIE_INVALID] = STAT_COOKIE_INVALID,
		[COOKIE_MALFORMED] = STAT_COOKIE_MALFORMED,
	};
	STAT_INC(q->stats, stat[k]);
	q->cookie = (uint8_t)k;
	memcpy(s->e.cookie, out, COOKIE_OUT_LEN);
	s->e.cookie_len = COOKIE_OUT_LEN;
	return 0;
}

/* Walks the other sections: OPT (EDNS) and TSIG are the records that
 * matter, then the opcode.  Returns 0, or -1 with the RCODE in @s. */
static inline int q_records(qctx_t *q, qstate_t *s)
{
	const uint8_t *in = s->in;
	size_t inlen = s->inlen, p = 12 + s->qlen + 4;
	unsigned an = rd16(in + 6), ns = rd16(in + 8), ar = rd16(in + 10);
	int edns_bad = 0;
	s->rcode = RCODE_FORMERR;
	for (unsigned i = 0; i < an + ns; i++)
		if (skip_rr(in, inlen, &p) < 0)
			return -1;
	for (unsigned i = 0; i < ar; i++) {
		size_t start = p;
		int type = skip_rr(in, inlen, &p);
		if (type < 0) {
			s->e.present = 0;
			return -1;
		}
		if (type == RR_OPT) {
			/* One OPT, owned by the root (RFC 6891 §6.1.1). */
			if (s->e.present || in[start] != 0) {
				s->e.present = 0;
				return -1;
			}
			if (edns_parse(in + start + 3, inlen - start - 3, &s->e) < 0)
				edns_bad = 1;
			s->e.present = 1;
			STAT_INC(q->stats, STAT_EDNS);
		} else if (type == RR_TSIG) {
			if (i + 1 != ar) /* TSIG must be the last record */
				return -1;
			s->tsig = start;
		}
	}
	if (edns_bad) {
		/* A malformed option (RFC 7871 §7.1.1 for ECS): FORMERR, with an
		 * OPT record that echoes no option. */
		s->e.nsid = s->e.ecs = s->e.cookie_len = 0;
		return -1;
	}
	if (s->e.present && s->e.version > 0) {
		s->e.nsid = s->e.ecs = s->e.cookie_len = 0;
		s->rcode = RCODE_BADVERS; /* RFC 6891 §6.1.3 */
		return -1;
	}
	if (s->e.present && q_cookie(q, s) < 0)
		return -1;
	if (s->e.ecs)
		STAT_INC(q->stats, STAT_ECS);
	s->rcode = RCODE_NOERROR;
	if (((in[2] >> 3) & 0xF) != 0) {
		s->rcode = RCODE_NOTIMP;
		return -1;
	}
	if (s->tsig) {
		s->rcode = RCODE_NOTAUTH;
		return -1;
	}
	return 0;
}

/* Answers an IN query: finds the zone, refuses what we do not offer, and
 * fills the sections.  Returns -1 when they do not fit. */
static int q_answer_in(wbuf_t *w, qstate_t *s)
{
	const snapshot_t *snap = w->q->snap;
	unsigned labels = dname_labels(s->lname);
	const zone_t *z = snapshot_find_zone(snap, s->lname, labels);
	/* DS belongs to the parent side of a zone cut (RFC 4035
	 * §3.1.4.1): prefer the parent when we serve it too. */
	if (z && s->qtype == RR_DS && z->apex_labels == labels && labels > 0) {
		const zone_t *parent =
			snapshot_find_zone(snap, s->lname + s->lname[0] + 1, labels - 1);
		if (parent)
			z = parent;
	}
	if (!z) {
		s->rcode = RCODE_REFUSED;
		return 0;
	}
	if (w->q->trail)
		w->q->trail->zone = z;
	if (s->qtype == RR_AXFR || s->qtype == RR_IXFR) {
		s->rcode = RCODE_REFUSED; /* zone transfers are not offered */
		return 0;
	}
	if (s->qtype == RR_MAILA || s->qtype == RR_MAILB || s->qtype == RR_TKEY) {
		s->rcode = RCODE_NOTIMP;
		return 0;
	}
	s->aa = 1;
	return answer_in(w, snap, z, s->lname, s->qlen, labels, s->qtype,
	                 &s->rcode, &s->aa);
}

/* Sets the size limit of the sections and answers by class.  Returns -1
 * when the answer does not fit (the caller truncates). */
static inline int q_answer(wbuf_t *w, qstate_t *s, size_t outcap)
{
	const snapshot_t *snap = w->q->snap;
	size_t maxsize = resp_limit(s->c, &s->e, snap, outcap);
	size_t reserve = s->e.present ? edns_size(&s->e, snap->identity_len) : 0;
	if (w->pos + reserve > maxsize) {
		s->e.nsid = 0;
		reserve = s->e.present ? edns_size(&s->e, 0) : 0;
	}
	w->limit = maxsize - reserve;
	if (s->qtype == RR_OPT || s->qtype == RR_TSIG) {
		s->rcode = RCODE_FORMERR;
		return 0;
	}
	if (s->qclass == 3) {
		int r = answer_ch(w, snap, s->lname, s->qtype, &s->aa);
		if (r > 0)
			s->rcode = r;
		return r < 0 ? -1 : 0;
	}
	if (s->qclass != 1) {
		s->rcode = RCODE_REFUSED;
		return 0;
	}
	return q_answer_in(w, s);
}

/* Counts the response by its outcome. */
static inline void q_count(qctx_t *q, int rcode, const wbuf_t *w, int aa)
{
	switch (rcode) {
	case RCODE_NOERROR:
		STAT_INC(q->stats, w->count[SEC_AN] || !aa ? STAT_NOERROR : STAT_NODATA);
		break;
	case RCODE_NXDOMAIN: STAT_INC(q->stats, STAT_NXDOMAIN); break;
	case RCODE_REFUSED: STAT_INC(q->stats, STAT_REFUSED); break;
	case RCODE_FORMERR: STAT_INC(q->stats, STAT_FORMERR); break;
	case RCODE_NOTIMP: STAT_INC(q->stats, STAT_NOTIMP); break;
	default: STAT_INC(q->stats, STAT_OTHER); break;
	}
}

/* Completes the header, appends OPT (and a TSIG error), counts the
 * response and returns its length. */
static size_t q_finish(qctx_t *q, wbuf_t *w, qstate_t *s, size_t outcap)
{
	const snapshot_t *snap = q->snap;
	uint8_t *out = w->p;
	if (!s->qok) {
		w->pos = 12;
		memset(out + 4, 0, 8);
	}
	if (s->aa)
		out[2] |= 0x04;
	out[3] = (uint8_t)((out[3] & 0xF0) | (s->rcode & 0xF));
	uint16_t arcount = w->count[SEC_AR];
	int ecs_out = 0;
	/* Error replies end here before the limit was applied: a UDP reply
	 * must still fit what the client can take. */
	size_t cap = resp_limit(s->c, &s->e, snap, outcap);
	if (s->e.present && s->qok) {
		size_t need = edns_size(&s->e, snap->identity_len);
		if (w->pos + need > cap) {
			s->e.nsid = 0;
			need = edns_size(&s->e, 0);
		}
		if (w->pos + need <= cap) {
			w->pos += edns_write(out + w->pos, &s->e, snap->udp_max_payload,
			                     (uint8_t)(s->rcode >> 4), snap->identity,
			                     snap->identity_len, q->scope);
			arcount++;
			ecs_out = s->e.ecs;
		}
	}
	if (s->rcode == RCODE_NOTAUTH && s->tsig) {
		size_t n = w_tsig_badkey(out, w->pos, cap, s->in, s->inlen, s->tsig);
		w->pos += n;
		arcount += n > 0;
	}
	wr16(out + 6, w->count[SEC_AN]);
	wr16(out + 8, w->count[SEC_NS]);
	wr16(out + 10, arcount);
	q_count(q, s->rcode, w, s->aa);
	if (q->trail) {
		q->trail->rcode = (uint8_t)s->rcode;
		q->trail->ecs = (uint8_t)ecs_out;
		q->trail->scope = ecs_out ? q->scope : 0;
	}
	return w->pos;
}

/* S1-12: rate limiting withheld a signed answer before its first
 * signature (wbuf_t.rrl_cut): the sections go, and what is left is the
 * slip rrl_filter() would cut from the answer (TC, or BADCOOKIE to a
 * query with a client cookie: question and OPT only).  Returns 1 when
 * nothing is to be sent. */
static int q_withheld(wbuf_t *w, qstate_t *s)
{
	w->pos = 12 + s->qlen + 4;
	w->count[SEC_AN] = w->count[SEC_NS] = w->count[SEC_AR] = 0;
	if (w->rrl_cut == RRL_DROP)
		return 1;
	if (w->rrl_cut == RRL_BADCOOKIE)
		s->rcode = RCODE_BADCOOKIE;
	else
		w->p[2] |= 0x02;
	return 0;
}

size_t query_process(qctx_t *q, const client_t *c, const uint8_t *in,
                     size_t inlen, uint8_t *out, size_t outcap)
{
	STAT_INC(q->stats, STAT_QUERIES);
	/* Too short to answer, or itself a response: drop (RFC 8906 §3.1.1
	 * allows no answer to a response, which also stops reflection loops). */
	if (inlen < 12 || (in[2] & 0x80) || outcap < 512) {
		STAT_INC(q->stats, STAT_DROPPED);
		return 0;
	}
	memset(out, 0, 12);
	out[0] = in[0];
	out[1] = in[1];
	out[2] = 0x80 | (in[2] & 0x79); /* QR, OPCODE, RD */
	out[3] = in[3] & 0x10;          /* CD */

	wbuf_t w = { .p = out, .pos = 12, .q = q };
	qstate_t s;
	s.c = c;
	s.in = in;
	s.inlen = inlen;
	s.e.present = 0;
	s.rcode = RCODE_NOERROR;
	s.aa = s.qok = 0;
	s.tsig = 0;
	s.qlen = 0;
	q->ncomp = 0;
	q->scope = 0;
	q->gslb_hops = 0;
	q->cookie = COOKIE_NONE;
	q->rrl_done = 0;
	q->edns = &s.e;
	q->src = c->addr;
	if (q_question(&w, &s) == 0 && q_records(q, &s) == 0) {
		/* DO (RFC 3225): answers of signed zones get signed. */
		w.sign = s.e.present && s.e.do_bit && q->dsig && q->snap->dnssec;
		w.qname = s.lname;
		w.qtype = s.qtype;
		int r = q_answer(&w, &s, outcap);
		if (w.rrl_cut) {
			if (q_withheld(&w, &s)) {
				q_finish(q, &w, &s, outcap); /* counted, not sent */
				return 0;
			}
		} else if (w.sign_fail) {
			/* Never an answer that cannot validate. */
			w.pos = 12 + s.qlen + 4;
			w.count[SEC_AN] = w.count[SEC_NS] = w.count[SEC_AR] = 0;
			s.rcode = RCODE_SERVFAIL;
			s.aa = 0;
		} else if (r < 0) {
			/* The answer does not fit: TC with the question only. */
			w.pos = 12 + s.qlen + 4;
			w.count[SEC_AN] = w.count[SEC_NS] = w.count[SEC_AR] = 0;
			out[2] |= 0x02;
			STAT_INC(q->stats, STAT_TRUNCATED);
		}
	}
	return q_finish(q, &w, &s, outcap);
}
