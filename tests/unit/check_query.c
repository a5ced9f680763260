/* SPDX-License-Identifier: MIT */
/* Query fixtures: wire queries built by hand, fed to query_process()
 * against a snapshot of zones written to a temporary directory, with each
 * field of the response asserted (Knot's test_process_query.c). */
#include "common/conf.h"
#include "dns/edns.h"
#include "common/log.h"
#include "dns/query.h"
#include "dns/snapshot.h"
#include "common/util.h"
#include "store_fixture.h"
#include "unit.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* example.test: SOA TTL 7200 > MINIMUM 300, so negative TTL is 300.
 * neg.test: SOA TTL 60 < MINIMUM 300, so negative TTL is 60. */
static const char zone_text[] =
	"$ORIGIN example.test.\n"
	"$TTL 3600\n"
	"@ 7200 IN SOA ns1 hostmaster 1 3600 600 604800 300\n"
	"@ IN NS ns1\n"
	"@ IN NS ns2.elsewhere.test.\n"
	"ns1 IN A 192.0.2.1\n"
	"www 120 IN A 192.0.2.10\n"
	"www 120 IN A 192.0.2.11\n"
	"alias IN CNAME www\n"
	"*.wild IN A 192.0.2.99\n"
	"a.b.ent IN TXT \"deep\"\n"
	"sub IN NS ns.sub\n"
	"ns.sub 600 IN A 192.0.2.53\n";
static const char neg_text[] =
	"neg.test. 60 IN SOA ns.neg.test. h.neg.test. 7 1 1 1 300\n"
	"neg.test. 60 IN NS ns.neg.test.\n"
	"ns.neg.test. 60 IN A 192.0.2.7\n";

static char dir[] = "/tmp/check_query-XXXXXX";
static snapshot_t *snap;
static qctx_t q;
static uint8_t out[65535];
static struct sockaddr_in sin4 = { .sin_family = AF_INET };
static const client_t udp = { (const struct sockaddr *)&sin4, 0 };
static const client_t tcp = { (const struct sockaddr *)&sin4, 1 };

static void write_file(const char *name, const char *text)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* 60 addresses at "big": 60 * 16 bytes do not fit in 512. */
	char big[4096];
	size_t o = 0;
	for (int i = 0; i < 60; i++)
		o += (size_t)snprintf(big + o, sizeof(big) - o,
		                      "big IN A 192.0.2.%d\n", i + 100);
	char zt[8192];
	snprintf(zt, sizeof(zt), "%s%s", zone_text, big);
	write_file("example.test.zone", zt);
	write_file("neg.test.zone", neg_text);
	write_file("gslbd.conf",
	           "server:\n"
	           "  identity: ns.test\n"
	           "  udp-max-payload: 1232\n"
	           "zones:\n"
	           "  - name: example.test\n"
	           "    file: example.test.zone\n"
	           "  - name: neg.test\n"
	           "    file: neg.test.zone\n");
	char path[256], err[1024];
	snprintf(path, sizeof(path), "%s/gslbd.conf", dir);
	log_set_level(GSLB_LOG_ERR);
	conf_t *c = conf_load(path, err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	unsigned failed;
	snap = snapshot_build(c, NULL, &failed, err, sizeof(err));
	ck_assert_msg(snap != NULL, "%s", err);
	conf_free(c);
}

static void teardown(void)
{
	snapshot_free(snap);
	const char *files[] = { "example.test.zone", "neg.test.zone",
	                        "gslbd.conf" };
	for (size_t i = 0; i < 3; i++) {
		char path[256];
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		unlink(path);
	}
	rmdir(dir);
}

/* Query builder -------------------------------------------------------- */

typedef struct {
	uint8_t b[1024];
	size_t n;
	size_t arcount_at;
} qb_t;

static void qb_u16(qb_t *b, uint16_t v)
{
	wr16(b->b + b->n, v);
	b->n += 2;
}

static void qb_bytes(qb_t *b, const void *p, size_t n)
{
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

/* Header with @flags (second and third byte) and the four counts. */
static void qb_header(qb_t *b, uint16_t id, uint16_t flags, uint16_t qd,
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

static void qb_question(qb_t *b, const char *name, uint16_t type,
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
static void qb_query(qb_t *b, const char *name, uint16_t type)
{
	qb_header(b, 0xBEEF, 0x0100, 1, 0, 0, 0);
	qb_question(b, name, type, 1);
}

/* Appends an OPT RR (and counts it) with optional @opts of @olen bytes. */
static void qb_opt(qb_t *b, uint16_t payload, uint8_t version,
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

/* Response parser ------------------------------------------------------- */

typedef struct {
	size_t off;             /* where the RR starts (its owner) */
	uint8_t owner[256];     /* uncompressed */
	uint16_t type, cls;
	uint32_t ttl;
	uint16_t rdlen;
	size_t rdata;           /* offset of the rdata */
} rr_t;

typedef struct {
	size_t len;
	uint16_t id, an, ns, ar;
	int qr, aa, tc, rd, opcode, rcode;
	rr_t rr[80];            /* answer, authority, additional in order */
	size_t nrr;
} resp_t;

static size_t process(const client_t *c, const qb_t *b, size_t cap,
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

static void assert_owner(const rr_t *x, const char *name)
{
	uint8_t w[256];
	ck_assert_uint_gt(dname_from_str(name, w), 0);
	char got[1024];
	ck_assert_msg(dname_equal(x->owner, w), "owner %s, expected %s",
	              dname_to_str(x->owner, got, sizeof(got)), name);
}

/* The question is echoed verbatim right after the header. */
static void assert_question(const qb_t *b, const resp_t *r)
{
	ck_assert_uint_eq(rd16(out + 4), 1);
	size_t ql = dname_len(b->b + 12, b->n - 12) + 4;
	ck_assert_mem_eq(out + 12, b->b + 12, ql);
}

/* The response's OPT RR (the last one of the additional section). */
static const rr_t *find_opt(const resp_t *r)
{
	for (size_t i = 0; i < r->nrr; i++)
		if (r->rr[i].type == RR_OPT)
			return &r->rr[i];
	return NULL;
}

/* Tests ------------------------------------------------------------------- */

START_TEST(positive_answer)
{
	qb_t b;
	resp_t r;
	qb_query(&b, "WWW.example.test", RR_A);
	ck_assert_uint_gt(process(&udp, &b, 512, &r), 0);
	ck_assert_uint_eq(r.id, 0xBEEF);
	ck_assert_int_eq(r.qr, 1);
	ck_assert_int_eq(r.aa, 1);
	ck_assert_int_eq(r.tc, 0);
	ck_assert_int_eq(r.rd, 1);
	ck_assert_int_eq(r.opcode, 0);
	ck_assert_int_eq(r.rcode, RCODE_NOERROR);
	ck_assert_uint_eq(r.an, 2);
	ck_assert_uint_eq(r.ns, 0);
	ck_assert_uint_eq(r.ar, 0);
	assert_question(&b, &r);
	for (int i = 0; i < 2; i++) {
		const rr_t *x = &r.rr[i];
		/* The owner is a pointer to the QNAME, keeping its case. */
		ck_assert_uint_eq(out[x->off], 0xC0);
		ck_assert_uint_eq(out[x->off + 1], 12);
		ck_assert_int_eq(x->owner[1], 'W');
		ck_assert_uint_eq(x->type, RR_A);
		ck_assert_uint_eq(x->cls, 1);
		ck_assert_uint_eq(x->ttl, 120);
		ck_assert_uint_eq(x->rdlen, 4);
		ck_assert_int_eq(out[x->rdata], 192);
		ck_assert_int_eq(out[x->rdata + 3], 10 + i);
	}
}
END_TEST

START_TEST(cname_followed)
{
	qb_t b;
	resp_t r;
	qb_query(&b, "alias.example.test", RR_A);
	process(&udp, &b, 512, &r);
	ck_assert_int_eq(r.rcode, RCODE_NOERROR);
	ck_assert_int_eq(r.aa, 1);
	ck_assert_uint_eq(r.an, 3);
	ck_assert_uint_eq(r.rr[0].type, RR_CNAME);
	ck_assert_uint_eq(r.rr[0].ttl, 3600);
	/* The target "www" + pointer into the question's "example.test". */
	ck_assert_uint_eq(r.rr[0].rdlen, 6);
	ck_assert_uint_eq(out[r.rr[0].rdata + 4], 0xC0);
	ck_assert_uint_eq(out[r.rr[0].rdata + 5], 12 + 6);
	assert_owner(&r.rr[1], "www.example.test");
	/* The second A owner points at the CNAME's target. */
	ck_assert_uint_eq(rd16(out + r.rr[2].off), 0xC000 | r.rr[0].rdata);
	ck_assert_uint_eq(r.rr[2].type, RR_A);
}
END_TEST

START_TEST(wildcard_answer)
{
	qb_t b;
	resp_t r;
	qb_query(&b, "x.y.wild.example.test", RR_A);
	process(&udp, &b, 512, &r);
	ck_assert_int_eq(r.rcode, RCODE_NOERROR);
	ck_assert_uint_eq(r.an, 1);
	assert_owner(&r.rr[0], "x.y.wild.example.test");
	ck_assert_int_eq(out[r.rr[0].rdata + 3], 99);
}
END_TEST

START_TEST(nxdomain_soa_ttl)
{
	qb_t b;
	resp_t r;
	qb_query(&b, "nothing.example.test", RR_A);
	process(&udp, &b, 512, &r);
	ck_assert_int_eq(r.rcode, RCODE_NXDOMAIN);
	ck_assert_int_eq(r.aa, 1);
	ck_assert_uint_eq(r.an, 0);
	ck_assert_uint_eq(r.ns, 1);
	ck_assert_uint_eq(r.ar, 0);
	assert_owner(&r.rr[0], "example.test");
	/* The apex owner is a pointer into the question. */
	ck_assert_uint_eq(rd16(out + r.rr[0].off), 0xC000 | (12 + 8));
	ck_assert_uint_eq(r.rr[0].type, RR_SOA);
	ck_assert_uint_eq(r.rr[0].ttl, 300); /* min(7200, 300) */

	qb_query(&b, "nothing.neg.test", RR_A);
	process(&udp, &b, 512, &r);
	ck_assert_int_eq(r.rcode, RCODE_NXDOMAIN);
	ck_assert_uint_eq(r.rr[0].type, RR_SOA);
	ck_assert_uint_eq(r.rr[0].ttl, 60);  /* min(60, 300) */
}
END_TEST

START_TEST(nodata)
{
	qb_t b;
	resp_t r;
	qb_query(&b, "www.example.test", RR_TXT);
	process(&udp, &b, 512, &r);
	ck_assert_int_eq(r.rcode, RCODE_NOERROR);
	ck_assert_int_eq(r.aa, 1);
	ck_assert_uint_eq(r.an, 0);
	ck_assert_uint_eq(r.ns, 1);
	ck_assert_uint_eq(r.rr[0].type, RR_SOA);
	ck_assert_uint_eq(r.rr[0].ttl, 300);

	/* An empty non-terminal is NODATA too, not NXDOMAIN. */
	qb_query(&b, "b.ent.example.test", RR_A);
	process(&udp, &b, 512, &r);
	ck_assert_int_eq(r.rcode, RCODE_NOERROR);
	ck_assert_uint_eq(r.an, 0);
	ck_assert_uint_eq(r.ns, 1);
	ck_assert_uint_eq(r.rr[0].type, RR_SOA);
}
END_TEST

START_TEST(referral_with_glue)
{
	qb_t b;
	resp_t r;
	qb_query(&b, "www.sub.example.test", RR_A);
	process(&udp, &b, 512, &r);
	ck_assert_int_eq(r.rcode, RCODE_NOERROR);
	ck_assert_int_eq(r.aa, 0);
	ck_assert_uint_eq(r.an, 0);
	ck_assert_uint_eq(r.ns, 1);
	ck_assert_uint_eq(r.ar, 1);
	const rr_t *ns = &r.rr[0], *glue = &r.rr[1];
	assert_owner(ns, "sub.example.test");
	ck_assert_uint_eq(rd16(out + ns->off), 0xC000 | (12 + 4));
	ck_assert_uint_eq(ns->type, RR_NS);
	ck_assert_uint_eq(ns->ttl, 3600);
	/* "ns" + pointer to the owner "sub.example.test". */
	ck_assert_uint_eq(ns->rdlen, 5);
	ck_assert_uint_eq(rd16(out + ns->rdata + 3), 0xC000 | (12 + 4));
	assert_owner(glue, "ns.sub.example.test");
	ck_assert_uint_eq(rd16(out + glue->off), 0xC000 | ns->rdata);
	ck_assert_uint_eq(glue->type, RR_A);
	ck_assert_uint_eq(glue->ttl, 600);
	ck_assert_int_eq(out[glue->rdata + 3], 53);
}
END_TEST

START_TEST(refused_outside)
{
	qb_t b;
	resp_t r;
	qb_query(&b, "www.example.org", RR_A);
	process(&udp, &b, 512, &r);
	ck_assert_int_eq(r.rcode, RCODE_REFUSED);
	ck_assert_int_eq(r.aa, 0);
	ck_assert_int_eq(r.qr, 1);
	assert_question(&b, &r);
	ck_assert_uint_eq(r.an + r.ns + r.ar, 0);
	ck_assert_uint_eq(r.len, b.n);
}
END_TEST

START_TEST(refused_axfr)
{
	qb_t b;
	resp_t r;
	qb_query(&b, "example.test", RR_AXFR);
	process(&tcp, &b, sizeof(out), &r);
	ck_assert_int_eq(r.rcode, RCODE_REFUSED);
	ck_assert_uint_eq(r.an, 0);
}
END_TEST

/* A header-only FORMERR: no question echoed, every count 0. */
static void assert_bare_formerr(const resp_t *r)
{
	ck_assert_uint_eq(r->len, 12);
	ck_assert_int_eq(r->qr, 1);
	ck_assert_int_eq(r->rcode, RCODE_FORMERR);
	ck_assert_uint_eq(r->id, 0xBEEF);
	ck_assert_uint_eq(rd16(out + 4), 0);
	ck_assert_uint_eq(r->an + r->ns + r->ar, 0);
}

START_TEST(formerr_qdcount)
{
	qb_t b;
	resp_t r;
	qb_header(&b, 0xBEEF, 0x0100, 0, 0, 0, 0);
	process(&udp, &b, 512, &r);
	assert_bare_formerr(&r);

	qb_header(&b, 0xBEEF, 0x0100, 2, 0, 0, 0);
	qb_question(&b, "www.example.test", RR_A, 1);
	qb_question(&b, "ns1.example.test", RR_A, 1);
	process(&udp, &b, 512, &r);
	assert_bare_formerr(&r);
}
END_TEST

START_TEST(formerr_truncated_question)
{
	qb_t b;
	resp_t r;
	qb_query(&b, "www.example.test", RR_A);
	b.n -= 1; /* half the QCLASS */
	process(&udp, &b, 512, &r);
	assert_bare_formerr(&r);
	b.n -= 6; /* into the name */
	process(&udp, &b, 512, &r);
	assert_bare_formerr(&r);
}
END_TEST

START_TEST(formerr_two_opts)
{
	qb_t b;
	resp_t r;
	qb_query(&b, "www.example.test", RR_A);
	qb_opt(&b, 1232, 0, NULL, 0);
	qb_opt(&b, 1232, 0, NULL, 0);
	process(&udp, &b, 512, &r);
	ck_assert_int_eq(r.rcode, RCODE_FORMERR);
	ck_assert_ptr_null(find_opt(&r));
}
END_TEST

START_TEST(badvers)
{
	qb_t b;
	resp_t r;
	qb_query(&b, "www.example.test", RR_A);
	qb_opt(&b, 1232, 1, NULL, 0);
	process(&udp, &b, 512, &r);
	/* BADVERS is 16: 0 in the header, 1 in the OPT's extended RCODE. */
	ck_assert_int_eq(r.rcode, 0);
	ck_assert_uint_eq(r.an, 0);
	ck_assert_uint_eq(r.ar, 1);
	const rr_t *o = find_opt(&r);
	ck_assert_ptr_nonnull(o);
	ck_assert_uint_eq(o->ttl >> 24, RCODE_BADVERS >> 4);
	ck_assert_uint_eq((o->ttl >> 16) & 0xFF, 0); /* our version 0 */
}
END_TEST

START_TEST(notimp_opcode)
{
	qb_t b;
	resp_t r;
	qb_query(&b, "www.example.test", RR_A);
	b.b[2] = 0x10 | 0x01; /* opcode 2 (STATUS), RD */
	process(&udp, &b, 512, &r);
	ck_assert_int_eq(r.rcode, RCODE_NOTIMP);
	ck_assert_int_eq(r.opcode, 2);
	ck_assert_int_eq(r.qr, 1);
	ck_assert_int_eq(r.aa, 0);
	ck_assert_int_eq(r.rd, 1);
	ck_assert_uint_eq(r.an + r.ns + r.ar, 0);
}
END_TEST

START_TEST(drop_responses_and_runts)
{
	qb_t b;
	resp_t r;
	qb_query(&b, "www.example.test", RR_A);
	b.b[2] |= 0x80; /* QR */
	ck_assert_uint_eq(process(&udp, &b, 512, &r), 0);
	qb_query(&b, "www.example.test", RR_A);
	for (size_t n = 0; n < 12; n++) {
		b.n = n;
		ck_assert_uint_eq(process(&udp, &b, 512, &r), 0);
	}
}
END_TEST

START_TEST(tc_udp_without_edns)
{
	qb_t b;
	resp_t r;
	qb_query(&b, "big.example.test", RR_A);
	process(&udp, &b, 512, &r);
	ck_assert_int_eq(r.tc, 1);
	ck_assert_int_eq(r.rcode, RCODE_NOERROR);
	ck_assert_uint_eq(r.an + r.ns + r.ar, 0);
	ck_assert_uint_le(r.len, 512);
	assert_question(&b, &r);

	/* With EDNS and 4096 bytes (capped at 1232) it fits. */
	qb_opt(&b, 4096, 0, NULL, 0);
	process(&udp, &b, 4096, &r);
	ck_assert_int_eq(r.tc, 0);
	ck_assert_uint_eq(r.an, 60);
	ck_assert_uint_le(r.len, 1232);
	/* And over TCP without EDNS. */
	qb_query(&b, "big.example.test", RR_A);
	process(&tcp, &b, sizeof(out), &r);
	ck_assert_int_eq(r.tc, 0);
	ck_assert_uint_eq(r.an, 60);
}
END_TEST

START_TEST(edns_opt_echoed)
{
	qb_t b;
	resp_t r;
	uint8_t nsid[4] = { 0, EDNS_OPT_NSID, 0, 0 };
	qb_query(&b, "www.example.test", RR_A);
	qb_opt(&b, 1232, 0, nsid, sizeof(nsid));
	process(&udp, &b, 1232, &r);
	ck_assert_int_eq(r.rcode, RCODE_NOERROR);
	ck_assert_uint_eq(r.an, 2);
	ck_assert_uint_eq(r.ar, 1);
	const rr_t *o = find_opt(&r);
	ck_assert_ptr_nonnull(o);
	ck_assert_uint_eq(o->owner[0], 0);
	ck_assert_uint_eq(o->cls, 1232);         /* our payload */
	ck_assert_uint_eq(o->ttl, 0x8000);       /* DO echoed, version 0 */
	ck_assert_uint_eq(o->rdlen, 4 + 7);
	ck_assert_uint_eq(rd16(out + o->rdata), EDNS_OPT_NSID);
	ck_assert_uint_eq(rd16(out + o->rdata + 2), 7);
	ck_assert_mem_eq(out + o->rdata + 4, "ns.test", 7);
}
END_TEST

START_TEST(ecs_echoed_scope_0)
{
	qb_t b;
	resp_t r;
	uint8_t ecs[] = { 0, EDNS_OPT_ECS, 0, 7, 0, 1, 24, 0, 198, 51, 100 };
	qb_query(&b, "www.example.test", RR_A);
	qb_opt(&b, 1232, 0, ecs, sizeof(ecs));
	process(&udp, &b, 1232, &r);
	ck_assert_int_eq(r.rcode, RCODE_NOERROR);
	ck_assert_uint_eq(r.an, 2);
	const rr_t *o = find_opt(&r);
	ck_assert_ptr_nonnull(o);
	ck_assert_uint_eq(o->rdlen, sizeof(ecs));
	const uint8_t *e = out + o->rdata;
	ck_assert_uint_eq(rd16(e), EDNS_OPT_ECS);
	ck_assert_uint_eq(rd16(e + 2), 7);
	ck_assert_uint_eq(rd16(e + 4), 1);   /* family */
	ck_assert_uint_eq(e[6], 24);         /* source */
	ck_assert_uint_eq(e[7], 0);          /* scope: static answer */
	ck_assert_mem_eq(e + 8, ecs + 8, 3);
}
END_TEST

START_TEST(ecs_malformed_formerr)
{
	qb_t b;
	resp_t r;
	/* /16 with three address bytes (RFC 7871 §6). */
	uint8_t ecs[] = { 0, EDNS_OPT_ECS, 0, 7, 0, 1, 16, 0, 198, 51, 100 };
	qb_query(&b, "www.example.test", RR_A);
	qb_opt(&b, 1232, 0, ecs, sizeof(ecs));
	process(&udp, &b, 1232, &r);
	ck_assert_int_eq(r.rcode, RCODE_FORMERR);
	ck_assert_uint_eq(r.an, 0);
	const rr_t *o = find_opt(&r);
	ck_assert_ptr_nonnull(o);
	ck_assert_uint_eq(o->rdlen, 0); /* no option echoed */
}
END_TEST

START_TEST(chaos_id_server)
{
	qb_t b;
	resp_t r;
	qb_header(&b, 0xBEEF, 0x0000, 1, 0, 0, 0);
	qb_question(&b, "id.server", RR_TXT, 3);
	process(&udp, &b, 512, &r);
	ck_assert_int_eq(r.rcode, RCODE_NOERROR);
	ck_assert_int_eq(r.aa, 1);
	ck_assert_int_eq(r.rd, 0);
	ck_assert_uint_eq(r.an, 1);
	ck_assert_uint_eq(r.rr[0].cls, 3);
	ck_assert_uint_eq(out[r.rr[0].rdata], 7);
	ck_assert_mem_eq(out + r.rr[0].rdata + 1, "ns.test", 7);
}
END_TEST

START_TEST(tsig_notauth_badkey)
{
	qb_t b;
	resp_t r;
	qb_query(&b, "www.example.test", RR_A);
	static const uint8_t key[] = "\x03key\0";
	static const uint8_t alg[] = "\x0bhmac-sha256\0";
	qb_bytes(&b, key, sizeof(key) - 1);
	qb_u16(&b, RR_TSIG);
	qb_u16(&b, 255);
	qb_u16(&b, 0), qb_u16(&b, 0);
	qb_u16(&b, (uint16_t)(sizeof(alg) - 1 + 6 + 2 + 2 + 2 + 2 + 2));
	qb_bytes(&b, alg, sizeof(alg) - 1);
	qb_u16(&b, 0), qb_u16(&b, 0), qb_u16(&b, 1); /* time signed */
	qb_u16(&b, 300);                              /* fudge */
	qb_u16(&b, 2), qb_u16(&b, 0xAAAA);            /* MAC */
	qb_u16(&b, 0xBEEF), qb_u16(&b, 0), qb_u16(&b, 0);
	wr16(b.b + 10, 1);
	process(&udp, &b, 512, &r);
	ck_assert_int_eq(r.rcode, RCODE_NOTAUTH);
	ck_assert_uint_eq(r.an, 0);
	ck_assert_uint_eq(r.ar, 1);
	ck_assert_uint_eq(r.rr[0].type, RR_TSIG);
	ck_assert_uint_eq(r.rr[0].cls, 255);
	/* The error field (BADKEY, 17) sits before the empty other data. */
	ck_assert_uint_eq(rd16(out + r.rr[0].rdata + r.rr[0].rdlen - 4), 17);
}
END_TEST

/* Appends a TSIG RR with a long key name and algorithm name. */
static void qb_long_tsig(qb_t *b)
{
	uint8_t key[256], alg[256];
	char ks[300], as[300];
	/* 3 labels of 62 and one of 60 (251 bytes); 2 of 62, one of 60. */
	memset(ks, 'k', sizeof(ks));
	memset(as, 'a', sizeof(as));
	ks[62] = ks[125] = ks[188] = as[62] = as[125] = '.';
	ks[249] = as[186] = 0;
	size_t kl = dname_from_str(ks, key);
	size_t al = dname_from_str(as, alg);
	ck_assert_uint_eq(kl, 251);
	ck_assert_uint_eq(al, 188);
	qb_bytes(b, key, kl);
	qb_u16(b, RR_TSIG);
	qb_u16(b, 255);
	qb_u16(b, 0), qb_u16(b, 0);
	qb_u16(b, (uint16_t)(al + 16));
	qb_bytes(b, alg, al);
	qb_u16(b, 0), qb_u16(b, 0), qb_u16(b, 1); /* time signed */
	qb_u16(b, 300);                           /* fudge */
	qb_u16(b, 0);                             /* no MAC */
	qb_u16(b, 0xBEEF), qb_u16(b, 0), qb_u16(b, 0);
	wr16(b->b + b->arcount_at, (uint16_t)(rd16(b->b + b->arcount_at) + 1));
}

START_TEST(error_replies_fit_udp_limit)
{
	/* Whatever the error, a UDP reply stays within 512 bytes without
	 * EDNS (RFC 1035 §4.2.1), even when the TSIG echo would not fit. */
	qb_t b;
	resp_t r;
	qb_query(&b, "a123456789012345678901234567890123456789"
	             "0123456789012345678901.example.test", RR_A);
	qb_long_tsig(&b);
	process(&udp, &b, 4096, &r);
	ck_assert_int_eq(r.rcode, RCODE_NOTAUTH);
	ck_assert_uint_le(r.len, 512);
	/* Over TCP the TSIG fits. */
	process(&tcp, &b, sizeof(out), &r);
	ck_assert_int_eq(r.rcode, RCODE_NOTAUTH);
	ck_assert_uint_eq(r.ar, 1);
	ck_assert_uint_gt(r.len, 512);
}
END_TEST

START_TEST(qname_pointer_formerr)
{
	/* A compression pointer in the question is not accepted. */
	qb_t b;
	resp_t r;
	qb_header(&b, 0xBEEF, 0x0100, 1, 0, 0, 0);
	static const uint8_t loop[] = { 0xC0, 12, 0, 1, 0, 1 };
	qb_bytes(&b, loop, sizeof(loop));
	process(&udp, &b, 512, &r);
	assert_bare_formerr(&r);
}
END_TEST

/* GSLB answers ------------------------------------------------------------
 * query_process() with a weight store and a MaxMind DB in a temporary
 * directory (the data of store_fixture.h), as a worker runs it. */

static const char gslb_zone[] =
	"$ORIGIN cdn.example.test.\n"
	"$TTL 3600\n"
	"@ IN SOA ns1 hostmaster 1 3600 600 604800 300\n"
	"@ IN NS ns1\n"
	"ns1 IN A 192.0.2.53\n"
	"static IN A 192.0.2.80\n"
	"*.edge IN A 192.0.2.99\n"
	"deep.ent.path IN TXT \"below an empty non-terminal\"\n";

static char g_dir[PATH_MAX];
static snapshot_t *g_snap;
static weightdb_t *g_db;
static struct sockaddr_in resolver4 = { .sin_family = AF_INET };

static void gslb_setup(void)
{
	char err[1024], path[PATH_MAX + 16];
	log_set_level(GSLB_LOG_ERR);
	ck_assert_int_eq(fx_mkdtemp(g_dir, "query"), 0);
	ck_assert_int_eq(fx_mmdb(g_dir, "test.mmdb", FX_GEO_SRC), 0);
	ck_assert_int_eq(fx_write(g_dir, "cdn.zone", gslb_zone), 0);
	ck_assert_int_eq(fx_write(g_dir, "gslbd.conf",
	                          "server:\n"
	                          "  identity: ns.test\n"
	                          "zones:\n"
	                          "  - name: cdn.example.test\n"
	                          "    file: cdn.zone\n"
	                          "geoip:\n"
	                          "  database: test.mmdb\n"), 0);
	snprintf(path, sizeof(path), "%s/gslbd.conf", g_dir);
	conf_t *c = conf_load(path, err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	unsigned failed;
	g_snap = snapshot_build(c, NULL, &failed, err, sizeof(err));
	ck_assert_msg(g_snap != NULL, "%s", err);
	conf_free(c);
	g_db = fx_store(g_dir, FX_GSLB_JSON);
	ck_assert_ptr_nonnull(g_db);
	/* The resolver itself sits in us-west's /24. */
	inet_pton(AF_INET, "198.51.100.7", &resolver4.sin_addr);
	/* The worker's state: its reader, the batch time, the draw. */
	snap = g_snap;
	q.wdb = wdb_reader_new(g_db);
	ck_assert_ptr_nonnull(q.wdb);
	q.now = (uint32_t)time(NULL);
	q.rng = 42;
}

static void gslb_teardown(void)
{
	wdb_reader_free(q.wdb);
	q.wdb = NULL;
	snap = NULL;
	weightdb_close(g_db);
	snapshot_free(g_snap);
	ck_assert_int_eq(fx_rmrf(g_dir), 0);
}

/* Queries @name (below cdn.example.test) for @qtype from the resolver,
 * with an OPT carrying an ECS option of @family, @source bits and the
 * address bytes @addr when @family is not 0, or no EDNS at all when
 * @family < 0. */
static void gslb_query(const char *name, uint16_t qtype, int family,
                       unsigned source, const uint8_t *addr, resp_t *r)
{
	static const client_t res = { (const struct sockaddr *)&resolver4, 0 };
	char full[256];
	qb_t b;
	snprintf(full, sizeof(full), "%s.cdn.example.test", name);
	qb_query(&b, full, qtype);
	if (family > 0) {
		uint8_t ecs[4 + 4 + 16];
		unsigned n = (source + 7) / 8;
		wr16(ecs, EDNS_OPT_ECS);
		wr16(ecs + 2, (uint16_t)(4 + n));
		wr16(ecs + 4, (uint16_t)family);
		ecs[6] = (uint8_t)source;
		ecs[7] = 0;
		memcpy(ecs + 8, addr, n);
		qb_opt(&b, 1232, 0, ecs, (uint16_t)(8 + n));
	} else if (family == 0) {
		qb_opt(&b, 1232, 0, NULL, 0);
	}
	ck_assert_uint_gt(process(&res, &b, 1232, r), 0);
	wdb_reader_release(q.wdb);
}

/* The scope of the reply's ECS option; -1 when it has none. */
static int reply_scope(const resp_t *r)
{
	const rr_t *o = find_opt(r);
	if (!o || o->rdlen < 8 || rd16(out + o->rdata) != EDNS_OPT_ECS)
		return -1;
	return out[o->rdata + 7];
}

static const uint8_t ecs_bj[3] = { 36, 110, 1 };        /* cn-bj, ctcc */
static const uint8_t ecs_cu[3] = { 112, 64, 9 };        /* ?, cucc */
static const uint8_t ecs_bj6[7] = { 0x24, 0x0e, 0x00, 0xe0 };

START_TEST(gslb_ecs_answer)
{
	resp_t r;
	gslb_query("www", RR_A, 1, 24, ecs_bj, &r);
	ck_assert_int_eq(r.rcode, RCODE_NOERROR);
	ck_assert_int_eq(r.aa, 1);
	ck_assert_uint_eq(r.an, 1);
	ck_assert_uint_eq(r.ns, 0);
	ck_assert_uint_eq(r.ar, 1);
	ck_assert_uint_eq(r.rr[0].type, RR_A);
	ck_assert_uint_eq(r.rr[0].ttl, 60);
	static const uint8_t bj_ct[4] = { 192, 0, 2, 11 };
	ck_assert_mem_eq(out + r.rr[0].rdata, bj_ct, 4);
	/* The scope is the /17 that decided, the address is echoed. */
	ck_assert_int_eq(reply_scope(&r), 17);
	const rr_t *o = find_opt(&r);
	ck_assert_uint_eq(out[o->rdata + 6], 24);
	ck_assert_mem_eq(out + o->rdata + 8, ecs_bj, 3);

	/* Another client network, another row: (*, cucc), the /14. */
	gslb_query("www", RR_A, 1, 24, ecs_cu, &r);
	ck_assert_uint_eq(r.an, 1);
	ck_assert_int_eq(out[r.rr[0].rdata + 3], 21);
	ck_assert_int_eq(reply_scope(&r), 14);
}
END_TEST

START_TEST(gslb_ecs_ipv6)
{
	resp_t r;
	gslb_query("www", RR_AAAA, 2, 56, ecs_bj6, &r);
	ck_assert_int_eq(r.rcode, RCODE_NOERROR);
	ck_assert_int_eq(r.aa, 1);
	ck_assert_uint_eq(r.an, 1);
	ck_assert_uint_eq(r.rr[0].type, RR_AAAA);
	ck_assert_uint_eq(r.rr[0].ttl, 60);
	static const uint8_t bj_ct6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 0x11,
	                                    [15] = 1 };
	ck_assert_mem_eq(out + r.rr[0].rdata, bj_ct6, 16);
	ck_assert_int_eq(reply_scope(&r), 28);
}
END_TEST

START_TEST(gslb_without_ecs)
{
	resp_t r;
	/* No EDNS: the resolver's address (us-west) decides, no OPT. */
	gslb_query("www", RR_A, -1, 0, NULL, &r);
	ck_assert_int_eq(r.rcode, RCODE_NOERROR);
	ck_assert_int_eq(r.aa, 1);
	ck_assert_uint_eq(r.an, 1);
	ck_assert_uint_eq(r.ar, 0);
	ck_assert_int_eq(out[r.rr[0].rdata + 3], 1);   /* def */
	/* EDNS without ECS: no ECS option in the reply. */
	gslb_query("www", RR_A, 0, 0, NULL, &r);
	ck_assert_uint_eq(r.an, 1);
	ck_assert_ptr_nonnull(find_opt(&r));
	ck_assert_int_eq(reply_scope(&r), -1);
	/* ECS with source 0: echoed with scope 0, the resolver decides. */
	gslb_query("www", RR_A, 1, 0, ecs_bj, &r);
	ck_assert_int_eq(out[r.rr[0].rdata + 3], 1);
	ck_assert_int_eq(reply_scope(&r), 0);
}
END_TEST

START_TEST(gslb_ttl_cname_nodata)
{
	resp_t r;
	/* A node within its short-TTL period shortens the row's TTL. */
	gslb_query("short", RR_A, 1, 24, ecs_bj, &r);
	ck_assert_uint_eq(r.an, 1);
	ck_assert_uint_eq(r.rr[0].ttl, 5);
	/* Client-independent answers carry scope 0. */
	ck_assert_int_eq(reply_scope(&r), 0);
	/* A CNAME node answers with its CNAME alone. */
	gslb_query("cdn", RR_A, 1, 24, ecs_bj, &r);
	ck_assert_int_eq(r.rcode, RCODE_NOERROR);
	ck_assert_int_eq(r.aa, 1);
	ck_assert_uint_eq(r.an, 1);
	ck_assert_uint_eq(r.rr[0].type, RR_CNAME);
	ck_assert_uint_eq(r.rr[0].ttl, 60);
	ck_assert_int_eq(reply_scope(&r), 0);
	/* all_down empty: NODATA with the SOA, authoritative. */
	gslb_query("empty", RR_A, 1, 24, ecs_bj, &r);
	ck_assert_int_eq(r.rcode, RCODE_NOERROR);
	ck_assert_int_eq(r.aa, 1);
	ck_assert_uint_eq(r.an, 0);
	ck_assert_uint_eq(r.ns, 1);
	ck_assert_uint_eq(r.rr[0].type, RR_SOA);
	/* all_down open: the down node, as if healthy. */
	gslb_query("open", RR_A, 1, 24, ecs_bj, &r);
	ck_assert_uint_eq(r.an, 1);
	ck_assert_int_eq(out[r.rr[0].rdata + 3], 91);
	ck_assert_int_eq(reply_scope(&r), 17);
	/* Three distinct answers. */
	gslb_query("multi", RR_A, -1, 0, NULL, &r);
	ck_assert_uint_eq(r.an, 3);
	ck_assert_int_ne(out[r.rr[0].rdata + 3], out[r.rr[1].rdata + 3]);
	ck_assert_int_ne(out[r.rr[1].rdata + 3], out[r.rr[2].rdata + 3]);
	ck_assert_int_ne(out[r.rr[0].rdata + 3], out[r.rr[2].rdata + 3]);
}
END_TEST

START_TEST(gslb_sticky_wildcard_ent)
{
	resp_t r;
	gslb_query("sticky", RR_A, 1, 24, ecs_bj, &r);
	ck_assert_uint_eq(r.an, 1);
	uint8_t node = out[r.rr[0].rdata + 3];
	ck_assert_int_eq(reply_scope(&r), 24);
	for (int i = 0; i < 10; i++) {
		gslb_query("sticky", RR_A, 1, 24, ecs_bj, &r);
		ck_assert_uint_eq(out[r.rr[0].rdata + 3], node);
	}
	/* A service below the zone's wildcard, and one at an empty
	 * non-terminal, answer instead of the static data. */
	gslb_query("gw.edge", RR_A, 1, 24, ecs_bj, &r);
	ck_assert_int_eq(r.aa, 1);
	ck_assert_uint_eq(r.an, 1);
	ck_assert_int_eq(out[r.rr[0].rdata + 3], 1);
	gslb_query("path", RR_A, 1, 24, ecs_bj, &r);
	ck_assert_uint_eq(r.an, 1);
	ck_assert_int_eq(out[r.rr[0].rdata + 3], 1);
	/* Static names are not services. */
	gslb_query("static", RR_A, 1, 24, ecs_bj, &r);
	ck_assert_int_eq(out[r.rr[0].rdata + 3], 80);
	ck_assert_uint_eq(r.rr[0].ttl, 3600);
	gslb_query("nothing", RR_A, 1, 24, ecs_bj, &r);
	ck_assert_int_eq(r.rcode, RCODE_NXDOMAIN);
}
END_TEST

static Suite *query_suite(void)
{
	Suite *s = suite_create("query");
	TCase *t = tcase_create("process");
	tcase_add_unchecked_fixture(t, setup, teardown);
	tcase_add_test(t, positive_answer);
	tcase_add_test(t, cname_followed);
	tcase_add_test(t, wildcard_answer);
	tcase_add_test(t, nxdomain_soa_ttl);
	tcase_add_test(t, nodata);
	tcase_add_test(t, referral_with_glue);
	tcase_add_test(t, refused_outside);
	tcase_add_test(t, refused_axfr);
	tcase_add_test(t, formerr_qdcount);
	tcase_add_test(t, formerr_truncated_question);
	tcase_add_test(t, formerr_two_opts);
	tcase_add_test(t, badvers);
	tcase_add_test(t, notimp_opcode);
	tcase_add_test(t, drop_responses_and_runts);
	tcase_add_test(t, tc_udp_without_edns);
	tcase_add_test(t, edns_opt_echoed);
	tcase_add_test(t, ecs_echoed_scope_0);
	tcase_add_test(t, ecs_malformed_formerr);
	tcase_add_test(t, chaos_id_server);
	tcase_add_test(t, tsig_notauth_badkey);
	tcase_add_test(t, qname_pointer_formerr);
	tcase_add_test(t, error_replies_fit_udp_limit);
	suite_add_tcase(s, t);
	t = tcase_create("gslb");
	tcase_add_unchecked_fixture(t, gslb_setup, gslb_teardown);
	tcase_add_test(t, gslb_ecs_answer);
	tcase_add_test(t, gslb_ecs_ipv6);
	tcase_add_test(t, gslb_without_ecs);
	tcase_add_test(t, gslb_ttl_cname_nodata);
	tcase_add_test(t, gslb_sticky_wildcard_ent);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(query_suite)
