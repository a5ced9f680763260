/* SPDX-License-Identifier: MIT */
/* Wire helpers of the query fixtures: a builder of query packets, a
 * parser of responses that checks their structure, and the per-thread
 * state query_process() runs with, and the fixture's files and snapshot.
 * Shared by check_query.c, check_query_gslb.c and check_query_dnssec.c;
 * each includes it once and sets @snap (and q's GSLB or signing fields)
 * in its own fixture. */
#ifndef GSLB_TEST_QUERY_WIRE_H
#define GSLB_TEST_QUERY_WIRE_H

#include "common/conf.h"
#include "common/log.h"
#include "common/util.h"
#include "dns/edns.h"
#include "dns/query.h"
#include "dns/snapshot.h"
#include "unit.h"

#include <stdio.h>
#include <string.h>

static snapshot_t *snap;         /* what process() queries */
static qctx_t q;                 /* the worker's state */
static uint8_t out[65535];       /* the last response */

/* Query builder -------------------------------------------------------- */

/* A query being built: its bytes, and where ARCOUNT is. */
typedef struct {
	uint8_t b[1024];
	size_t n;
	size_t arcount_at;
} qb_t;

/* Appends @v in network order. */
static inline void qb_u16(qb_t *b, uint16_t v)
{
	wr16(b->b + b->n, v);
	b->n += 2;
}

/* Appends @n bytes at @p. */
static inline void qb_bytes(qb_t *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

/* Header with @flags (second and third byte) and the four counts. */
static inline void qb_header(qb_t *b, uint16_t id, uint16_t flags, uint16_t qd,
                      uint16_t an, uint16_t ns, uint16_t ar)
{
	b->n = 0;
	qb_u16(b, id);
	qb_u16(b, flags);
	qb_u16(b, qd);
	qb_u16(b, an);
	qb_u16(b, ns);
	b->arcount_at = b->n;
	qb_u16(b, ar);
}

/* Appends a question for presentation name @name. */
static inline void qb_question(qb_t *b, const char *name, uint16_t type,
                        uint16_t cls)
{
	uint8_t w[256];
	size_t l = dname_from_str(name, w);
	ck_assert_uint_gt(l, 0);
	qb_bytes(b, w, l);
	qb_u16(b, type);
	qb_u16(b, cls);
}

/* A standard query with RD set, id 0xBEEF. */
static inline void qb_query(qb_t *b, const char *name, uint16_t type)
{
	qb_header(b, 0xBEEF, 0x0100, 1, 0, 0, 0);
	qb_question(b, name, type, 1);
}

/* Appends an OPT RR (and counts it) with optional @opts of @olen bytes. */
static inline void qb_opt(qb_t *b, uint16_t payload, uint8_t version,
                   const uint8_t *opts, uint16_t olen)
{
	uint8_t h[9] = { 0, 0, 41 };
	wr16(h + 3, payload);
	h[5] = 0, h[6] = version, h[7] = 0x80, h[8] = 0; /* DO set */
	qb_bytes(b, h, 9);
	qb_u16(b, olen);
	if (olen)
		qb_bytes(b, opts, olen);
	wr16(b->b + b->arcount_at, (uint16_t)(rd16(b->b + b->arcount_at) + 1));
}

/* Fixture files ---------------------------------------------------------- */

/* Writes @text into the file @name of directory @dir. */
static inline void qw_write(const char *dir, const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* Writes zone @text into file @name of @dir with 60 addresses at "big"
 * added (192.0.2.100 to .159): 60 * 16 bytes, beyond 512 and, with a
 * signature, beyond about 1050. */
static inline void qw_write_big(const char *dir, const char *name,
                                const char *text)
{
	char big[4096];
	size_t o = 0;
	for (int i = 0; i < 60; i++)
		o += (size_t)snprintf(big + o, sizeof(big) - o,
		                      "big IN A 192.0.2.%d\n", i + 100);
	char zt[8192];
	snprintf(zt, sizeof(zt), "%s%s", text, big);
	qw_write(dir, name, zt);
}

/* The snapshot of the configuration @dir/gslbd.conf and its zones. */
static inline snapshot_t *qw_snapshot(const char *dir)
{
	char path[256], err[1024];
	snprintf(path, sizeof(path), "%s/gslbd.conf", dir);
	log_set_level(GSLB_LOG_ERR);
	conf_t *c = conf_load(path, err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	unsigned failed;
	snapshot_t *s = snapshot_build(c, NULL, &failed, err, sizeof(err));
	ck_assert_msg(s != NULL, "%s", err);
	conf_free(c);
	return s;
}

/* Response parser ------------------------------------------------------- */

/* One parsed RR of a response. */
typedef struct {
	size_t off;             /* where the RR starts (its owner) */
	uint8_t owner[256];     /* uncompressed */
	uint16_t type, cls;
	uint32_t ttl;
	uint16_t rdlen;
	size_t rdata;           /* offset of the rdata */
} rr_t;

/* A parsed response: header fields and every RR. */
typedef struct {
	size_t len;
	uint16_t id, an, ns, ar;
	int qr, aa, tc, rd, opcode, rcode;
	rr_t rr[80];            /* answer, authority, additional in order */
	size_t nrr;
} resp_t;

/* Answers @b with query_process() against @snap into @out (capacity
 * @cap), checks the response's structure and parses it into @r.  Returns
 * the response length; 0 (a drop) leaves @r empty. */
static inline size_t process(const client_t *c, const qb_t *b, size_t cap,
                      resp_t *r)
{
	q.snap = snap;
	memset(r, 0, sizeof(*r));
	r->len = query_process(&q, c, b->b, b->n, out, cap);
	if (!r->len)
		return 0;
	ck_assert_uint_ge(r->len, 12);
	ck_assert_uint_le(r->len, cap);
	r->id = rd16(out);
	r->qr = out[2] >> 7;
	r->opcode = (out[2] >> 3) & 0xF;
	r->aa = (out[2] >> 2) & 1;
	r->tc = (out[2] >> 1) & 1;
	r->rd = out[2] & 1;
	r->rcode = out[3] & 0xF;
	r->an = rd16(out + 6);
	r->ns = rd16(out + 8);
	r->ar = rd16(out + 10);
	size_t p = 12;
	for (unsigned i = 0; i < rd16(out + 4); i++) {
		ck_assert_int_eq(dname_skip(out, r->len, &p), 0);
		p += 4;
	}
	unsigned total = (unsigned)r->an + r->ns + r->ar;
	ck_assert_uint_le(total, 80);
	for (unsigned i = 0; i < total; i++) {
		rr_t *x = &r->rr[r->nrr++];
		x->off = p;
		ck_assert_uint_gt(dname_unpack(out, r->len, &p, x->owner), 0);
		ck_assert_uint_le(p + 10, r->len);
		x->type = rd16(out + p);
		x->cls = rd16(out + p + 2);
		x->ttl = rd32(out + p + 4);
		x->rdlen = rd16(out + p + 8);
		x->rdata = p + 10;
		p += 10 + (size_t)x->rdlen;
		ck_assert_uint_le(p, r->len);
	}
	ck_assert_uint_eq(p, r->len); /* nothing after the last RR */
	return r->len;
}

/* Asserts that @x's owner is presentation name @name. */
static inline void assert_owner(const rr_t *x, const char *name)
{
	uint8_t w[256];
	ck_assert_uint_gt(dname_from_str(name, w), 0);
	char got[1024];
	ck_assert_msg(dname_equal(x->owner, w), "owner %s, expected %s",
	              dname_to_str(x->owner, got, sizeof(got)), name);
}

/* The question is echoed verbatim right after the header. */
static inline void assert_question(const qb_t *b, const resp_t *r)
{
	ck_assert_uint_eq(rd16(out + 4), 1);
	size_t ql = dname_len(b->b + 12, b->n - 12) + 4;
	ck_assert_mem_eq(out + 12, b->b + 12, ql);
}

/* The response's OPT RR (the last one of the additional section). */
static inline const rr_t *find_opt(const resp_t *r)
{
	for (size_t i = 0; i < r->nrr; i++)
		if (r->rr[i].type == RR_OPT)
			return &r->rr[i];
	return NULL;
}

#endif
