/* SPDX-License-Identifier: MIT */
/* Query fixtures of signed answers: wire queries with and without DO fed
 * to query_process() against a zone signed with a key made here, each
 * RRSIG checked against the key, and the compact denials (RFC 9824),
 * the NSEC of a delegation and truncation asserted field by field. */
#include "common/conf.h"
#include "common/log.h"
#include "common/util.h"
#include "dns/query.h"
#include "dns/rrl.h"
#include "dns/snapshot.h"
#include "dnssec/dnssec.h"
#include "dnssec/rrsig.h"
#include "query_wire.h"
#include "unit.h"

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char zone_text[] =
	"$ORIGIN example.test.\n"
	"$TTL 3600\n"
	"@ 7200 IN SOA ns1 hostmaster 1 3600 600 604800 300\n"
	"@ IN NS ns1\n"
	"ns1 IN A 192.0.2.1\n"
	"www 120 IN A 192.0.2.11\n"
	"www 120 IN A 192.0.2.10\n"
	"sub IN NS ns.sub\n"
	"ns.sub 600 IN A 192.0.2.53\n";

static char dir[] = "/tmp/check_query_dnssec-XXXXXX";
static struct sockaddr_in sin4 = { .sin_family = AF_INET };
static const client_t udp = { (const struct sockaddr *)&sin4, 0 };
static dnssec_key_t *key;
/* A time inside one validity window. */
static const uint32_t NOW = 2000u * DNSSEC_WINDOW + 5000;

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* 60 addresses at "big": about 1000 bytes unsigned, 1100 signed. */
	qw_write_big(dir, "example.test.zone", zone_text);
	qw_write(dir, "gslbd.conf", "server:\n  udp-max-payload: 1232\nzones:\n"
	           "  - name: example.test\n    file: example.test.zone\n");
	char err[256];
	snap = qw_snapshot(dir);
	/* The signed zone as dnssec_set_load() would make it from the store
	 * and the keystore. */
	key = dnssec_key_generate(DNSSEC_ALG_ECDSAP256, DNSSEC_FLAGS_CSK, err,
	                          sizeof(err));
	ck_assert_msg(key != NULL, "%s", err);
	dnssec_set_t *s = xcalloc(1, sizeof(*s));
	s->zones = xcalloc(1, sizeof(*s->zones));
	s->nzones = 1;
	dnssec_zone_t *z = &s->zones[0];
	z->apex_len = dname_from_str("example.test.", z->apex);
	z->keys[0] = key;
	z->use[0] = DNSSEC_USE_KEYSET | DNSSEC_USE_ZONE;  /* a CSK */
	z->nkeys = 1;
	size_t kl;
	const uint8_t *dk = dnssec_key_dnskey(key, &kl);
	z->dnskey_rdata = xmalloc(2 + kl);
	wr16(z->dnskey_rdata, (uint16_t)kl);
	memcpy(z->dnskey_rdata + 2, dk, kl);
	z->dnskey_size = 2 + kl;
	z->dnskey_count = 1;
	z->dnskey_ttl = 3600;
	snap->dnssec = s;
	q.dsig = dnssec_thread_new(64);
	q.now = NOW;
}

static void teardown(void)
{
	snapshot_free(snap);   /* and the set, with its key */
	dnssec_thread_free(q.dsig);
	q.dsig = NULL;
	char path[256];
	snprintf(path, sizeof(path), "%s/example.test.zone", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/gslbd.conf", dir);
	unlink(path);
	rmdir(dir);
}

/* A query for @name/@type, with an OPT record (DO set) of @payload when
 * @payload is not 0. */
static void query(qb_t *b, const char *name, uint16_t type, uint16_t payload)
{
	qb_query(b, name, type);
	if (payload)
		qb_opt(b, payload, 0, NULL, 0);
}

/* Checks that RRSIG @sig of the response covers the RRset of the @n
 * records @rrs (all of one owner and type) and verifies with the key. */
static void assert_signed(const resp_t *r, const rr_t *sig, const rr_t *rrs,
                          unsigned n)
{
	const uint8_t *rd = out + sig->rdata;
	ck_assert_uint_eq(sig->type, RR_RRSIG);
	ck_assert_uint_eq(rd16(rd), rrs[0].type);              /* covered */
	ck_assert_uint_eq(rd[2], 13);
	ck_assert_uint_eq(rd[3], dnssec_labels(rrs[0].owner));
	ck_assert_uint_eq(rd32(rd + 4), rrs[0].ttl);           /* original TTL */
	uint32_t start, inc, exp;
	dnssec_window(NOW, &start, &inc, &exp);
	ck_assert_uint_eq(rd32(rd + 8), exp);
	ck_assert_uint_eq(rd32(rd + 12), inc);
	ck_assert_uint_eq(rd16(rd + 16), dnssec_key_tag(key));
	ck_assert_int_eq(memcmp(rd + 18, "\x07" "example\x04test", 14), 0);
	ck_assert_uint_eq(sig->rdlen, 18 + 14 + 64);
	/* The signed data, rebuilt from the response's records. */
	uint8_t set[2048], data[4096], scratch[2048], lown[256];
	size_t sl = 0;
	for (unsigned i = 0; i < n; i++) {
		if (rrs[i].type == RR_SOA) {
			/* The names were compressed in the response: the
			 * signature covers them whole. */
			size_t p = rrs[i].rdata, l1, l2;
			ck_assert_uint_gt(l1 = dname_unpack(out, r->len, &p, set + sl + 2), 0);
			ck_assert_uint_gt(l2 = dname_unpack(out, r->len, &p,
			                                    set + sl + 2 + l1), 0);
			memcpy(set + sl + 2 + l1 + l2, out + p, 20);
			wr16(set + sl, (uint16_t)(l1 + l2 + 20));
			sl += 2 + l1 + l2 + 20;
			continue;
		}
		wr16(set + sl, rrs[i].rdlen);
		memcpy(set + sl + 2, out + rrs[i].rdata, rrs[i].rdlen);
		sl += 2 + (size_t)rrs[i].rdlen;
	}
	dname_copy_lower(lown, rrs[0].owner);
	memcpy(data, rd, 18 + 14);
	size_t dl = dnssec_canon_rrset(data, sizeof(data), 18 + 14, lown,
	                               rrs[0].type, rrs[0].ttl, (uint16_t)n, set,
	                               scratch, sizeof(scratch));
	ck_assert_uint_gt(dl, 0);
	ck_assert_msg(dnssec_key_verify(key, data, dl, rd + 32, 64),
	              "the RRSIG of type %u does not verify", rrs[0].type);
}

START_TEST(do_answer_signed)
{
	qb_t b;
	resp_t r;
	query(&b, "WWW.Example.test", RR_A, 1232);
	ck_assert_uint_gt(process(&udp, &b, 1232, &r), 0);
	ck_assert_int_eq(r.rcode, RCODE_NOERROR);
	ck_assert_int_eq(r.aa, 1);
	ck_assert_uint_eq(r.an, 3);
	ck_assert_uint_eq(r.rr[0].type, RR_A);
	ck_assert_uint_eq(r.rr[1].type, RR_A);
	assert_signed(&r, &r.rr[2], r.rr, 2);
	/* Without DO: the same answer, no RRSIG. */
	query(&b, "www.example.test", RR_A, 0);
	ck_assert_uint_gt(process(&udp, &b, 512, &r), 0);
	ck_assert_uint_eq(r.an, 2);
}
END_TEST

/* A zone loaded without the private half of a signing key (cluster
 * mode, the file not there yet): SERVFAIL to DO, nothing signed; the
 * same answers without DO; DNSKEY still served without DO. */
START_TEST(missing_key_servfail)
{
	dnssec_zone_t *z = &snap->dnssec->zones[0];
	z->missing = 1;
	qb_t b;
	resp_t r;
	const char *names[] = { "www.example.test", "nope.example.test" };
	for (size_t i = 0; i < 2; i++) {
		query(&b, names[i], RR_A, 1232);
		ck_assert_uint_gt(process(&udp, &b, 1232, &r), 0);
		ck_assert_int_eq(r.rcode, RCODE_SERVFAIL);
		ck_assert_uint_eq(r.an, 0);
		ck_assert_uint_eq(r.ns, 0);
	}
	query(&b, "www.example.test", RR_A, 0);
	ck_assert_uint_gt(process(&udp, &b, 512, &r), 0);
	ck_assert_int_eq(r.rcode, RCODE_NOERROR);
	ck_assert_uint_eq(r.an, 2);
	query(&b, "example.test", RR_DNSKEY, 0);
	ck_assert_uint_gt(process(&udp, &b, 512, &r), 0);
	ck_assert_int_eq(r.rcode, RCODE_NOERROR);
	ck_assert_uint_eq(r.an, 1);
	z->missing = 0;
	query(&b, "www.example.test", RR_A, 1232);
	ck_assert_uint_gt(process(&udp, &b, 1232, &r), 0);
	ck_assert_int_eq(r.rcode, RCODE_NOERROR);
}
END_TEST

/* The NSEC at @x: its next name and bitmap are @next (wire) and @bm. */
static void assert_nsec(const rr_t *x, const char *owner, const uint8_t *next,
                        size_t nl, const uint8_t *bm, size_t bl)
{
	ck_assert_uint_eq(x->type, RR_NSEC);
	assert_owner(x, owner);
	ck_assert_uint_eq(x->rdlen, nl + bl);
	ck_assert_int_eq(memcmp(out + x->rdata, next, nl), 0);
	ck_assert_int_eq(memcmp(out + x->rdata + nl, bm, bl), 0);
}

START_TEST(nxdomain_compact)
{
	qb_t b;
	resp_t r;
	query(&b, "nx.example.test", RR_A, 1232);
	ck_assert_uint_gt(process(&udp, &b, 1232, &r), 0);
	ck_assert_int_eq(r.rcode, RCODE_NOERROR);        /* RFC 9824 §3 */
	ck_assert_uint_eq(r.an, 0);
	ck_assert_uint_eq(r.ns, 4);
	ck_assert_uint_eq(r.rr[0].type, RR_SOA);
	ck_assert_uint_eq(r.rr[0].ttl, 300);
	assert_signed(&r, &r.rr[1], &r.rr[0], 1);
	static const uint8_t next[] = "\x01\x00\x02nx\x07" "example\x04test";
	/* RRSIG (46), NSEC (47), NXNAME (128): window 0, 17 bytes. */
	static const uint8_t bm[19] = { 0, 17, [2 + 5] = 0x03, [2 + 16] = 0x80 };
	assert_nsec(&r.rr[2], "nx.example.test.", next, sizeof(next), bm, 19);
	ck_assert_uint_eq(r.rr[2].ttl, 300);
	assert_signed(&r, &r.rr[3], &r.rr[2], 1);
	/* Without DO: NXDOMAIN, the SOA only. */
	query(&b, "nx.example.test", RR_A, 0);
	ck_assert_uint_gt(process(&udp, &b, 512, &r), 0);
	ck_assert_int_eq(r.rcode, RCODE_NXDOMAIN);
	ck_assert_uint_eq(r.ns, 1);
}
END_TEST

START_TEST(nodata_bitmap)
{
	qb_t b;
	resp_t r;
	query(&b, "www.example.test", RR_TXT, 1232);
	ck_assert_uint_gt(process(&udp, &b, 1232, &r), 0);
	ck_assert_int_eq(r.rcode, RCODE_NOERROR);
	ck_assert_uint_eq(r.ns, 4);
	static const uint8_t next[] = "\x01\x00\x03www\x07" "example\x04test";
	static const uint8_t bm[] = { 0, 6, 0x40, 0, 0, 0, 0, 0x03 }; /* A RRSIG NSEC */
	assert_nsec(&r.rr[2], "www.example.test.", next, sizeof(next), bm, 8);
	assert_signed(&r, &r.rr[3], &r.rr[2], 1);
	/* At the apex, asking for A: NS, SOA, RRSIG, NSEC, DNSKEY. */
	query(&b, "example.test", RR_A, 1232);
	ck_assert_uint_gt(process(&udp, &b, 1232, &r), 0);
	ck_assert_uint_eq(r.rr[2].rdlen, 16 + 9);
	static const uint8_t apex_bm[] = { 0, 7, 0x22, 0, 0, 0, 0, 0x03, 0x80 };
	ck_assert_int_eq(memcmp(out + r.rr[2].rdata + 16, apex_bm, 9), 0);
}
END_TEST

START_TEST(dnskey_at_apex)
{
	qb_t b;
	resp_t r;
	query(&b, "example.test", RR_DNSKEY, 0);
	ck_assert_uint_gt(process(&udp, &b, 512, &r), 0);
	ck_assert_uint_eq(r.an, 1);
	ck_assert_uint_eq(r.rr[0].type, RR_DNSKEY);
	ck_assert_uint_eq(r.rr[0].ttl, 3600);
	size_t kl;
	const uint8_t *dk = dnssec_key_dnskey(key, &kl);
	ck_assert_uint_eq(r.rr[0].rdlen, kl);
	ck_assert_int_eq(memcmp(out + r.rr[0].rdata, dk, kl), 0);
	query(&b, "example.test", RR_DNSKEY, 1232);
	ck_assert_uint_gt(process(&udp, &b, 1232, &r), 0);
	ck_assert_uint_eq(r.an, 2);
	assert_signed(&r, &r.rr[1], &r.rr[0], 1);
}
END_TEST

START_TEST(referral_nsec)
{
	qb_t b;
	resp_t r;
	query(&b, "x.sub.example.test", RR_A, 1232);
	ck_assert_uint_gt(process(&udp, &b, 1232, &r), 0);
	ck_assert_int_eq(r.aa, 0);
	ck_assert_uint_eq(r.an, 0);
	ck_assert_uint_eq(r.ns, 3);                       /* NS, NSEC, RRSIG */
	ck_assert_uint_eq(r.rr[0].type, RR_NS);
	static const uint8_t next[] = "\x01\x00\x03sub\x07" "example\x04test";
	static const uint8_t bm[] = { 0, 6, 0x20, 0, 0, 0, 0, 0x03 }; /* NS RRSIG NSEC */
	assert_nsec(&r.rr[1], "sub.example.test.", next, sizeof(next), bm, 8);
	assert_signed(&r, &r.rr[2], &r.rr[1], 1);
}
END_TEST

START_TEST(signed_answer_truncated)
{
	qb_t b;
	resp_t r;
	/* 1050 bytes: the 60 addresses fit unsigned, not with their RRSIG. */
	query(&b, "big.example.test", RR_A, 1050);
	dnssec_thread_t *signer = q.dsig;
	q.dsig = NULL;                    /* no signer: as without DO */
	ck_assert_uint_gt(process(&udp, &b, 1232, &r), 0);
	ck_assert_int_eq(r.tc, 0);
	ck_assert_uint_eq(r.an, 60);
	q.dsig = signer;
	ck_assert_uint_gt(process(&udp, &b, 1232, &r), 0);
	ck_assert_int_eq(r.tc, 1);
	ck_assert_uint_eq(r.an, 0);
	ck_assert_uint_le(r.len, 1050);
	/* Over TCP the whole of it. */
	static const client_t tcp = { (const struct sockaddr *)&sin4, 1 };
	ck_assert_uint_gt(process(&tcp, &b, 65535, &r), 0);
	ck_assert_int_eq(r.tc, 0);
	ck_assert_uint_eq(r.an, 61);
	assert_signed(&r, &r.rr[60], r.rr, 60);
}
END_TEST

/* Rate limiting before signing (S1-12) -------------------------------- */

/* A table of one response a second per account, nothing exempt, every
 * limited response dropped (@slip 0) or slipped (@slip 1), as the UDP
 * thread's qctx_t.rrl. */
static rrl_table_t *limit_table(unsigned slip)
{
	rrl_conf_t rc = { .rate = 1, .window = 15, .slip = slip,
	                  .v4_prefix = 24, .v6_prefix = 56,
	                  .table_size = 1024 };
	rrl_table_t *t = rrl_table_new(&rc, 1, 0);
	q.rrl = t;
	return t;
}

/* Asks @name/@type with DO over UDP into @r; returns the response's
 * length (0: withheld). */
static size_t ask_do(resp_t *r, const char *name, uint16_t type)
{
	qb_t b;
	query(&b, name, type, 1232);
	return process(&udp, &b, 1232, r);
}

static void limit_done(rrl_table_t *t)
{
	q.rrl = NULL;
	rrl_table_free(t);
}

/* A flood of random names with DO: the first compact denial is signed,
 * the next ones, in the zone's one NXDOMAIN account, are withheld before
 * any signature is looked for or made. */
START_TEST(rrl_drop_before_signing)
{
	rrl_table_t *t = limit_table(0);
	qb_t b;
	resp_t r;
	ck_assert_uint_gt(ask_do(&r, "r0.example.test", RR_A), 0);
	ck_assert_uint_eq(r.ns, 4);
	ck_assert_int_eq(q.rrl_done, 1);
	uint64_t made = q.stats[STAT_DNSSEC_SIGNATURES];
	uint64_t looked = q.stats[STAT_DNSSEC_MISSES] + q.stats[STAT_DNSSEC_HITS];
	ck_assert_uint_gt(made, 0);
	for (int i = 1; i <= 20; i++) {
		char name[64];
		snprintf(name, sizeof(name), "r%d.example.test", i);
		ck_assert_uint_eq(ask_do(&r, name, RR_A), 0);
		ck_assert_int_eq(q.rrl_done, 1);
	}
	ck_assert_uint_eq(q.stats[STAT_DNSSEC_SIGNATURES], made);
	ck_assert_uint_eq(q.stats[STAT_DNSSEC_MISSES] + q.stats[STAT_DNSSEC_HITS],
	                  looked);
	ck_assert_uint_eq(q.stats[STAT_RRL_DROPPED], 20);
	/* Another class, another account: answered and signed. */
	ck_assert_uint_gt(ask_do(&r, "www.example.test", RR_A), 0);
	ck_assert_uint_eq(r.an, 3);
	ck_assert_uint_eq(r.rr[2].type, RR_RRSIG);
	/* Without DO nothing is signed: the front end charges the written
	 * answer (rrl_filter()), and the NXDOMAIN account is in debt. */
	query(&b, "r99.example.test", RR_A, 0);
	size_t n = process(&udp, &b, 512, &r);
	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(q.rrl_done, 0);
	ck_assert_uint_eq(rrl_filter(t, udp.addr, out, n, NOW, COOKIE_NONE,
	                             q.stats), 0);
	limit_done(t);
}
END_TEST

/* A slip of a signed answer is the question and OPT with TC, unsigned. */
START_TEST(rrl_slip_unsigned)
{
	rrl_table_t *t = limit_table(1);
	resp_t r;
	ck_assert_uint_gt(ask_do(&r, "www.example.test", RR_A), 0);
	uint64_t made = q.stats[STAT_DNSSEC_MISSES] + q.stats[STAT_DNSSEC_HITS];
	ck_assert_uint_gt(ask_do(&r, "www.example.test", RR_A), 0);
	ck_assert_int_eq(r.tc, 1);
	ck_assert_int_eq(r.rcode, RCODE_NOERROR);
	ck_assert_uint_eq(r.an, 0);
	ck_assert_uint_eq(r.ns, 0);
	ck_assert_uint_eq(r.ar, 1);
	ck_assert_uint_eq(r.rr[0].type, RR_OPT);
	ck_assert_uint_eq(rd16(out + 4), 1);     /* the question stays */
	ck_assert_uint_eq(q.stats[STAT_DNSSEC_MISSES] + q.stats[STAT_DNSSEC_HITS],
	                  made);
	ck_assert_uint_eq(q.stats[STAT_RRL_SLIPPED], 1);
	limit_done(t);
}
END_TEST

/* Queries of each class, two of one account a case: the answer (the
 * name in another case), NODATA, NXDOMAIN (per zone), the referral (per
 * delegation) and DNSKEY. */
static const struct {
	const char *plain, *signed_;
	uint16_t type;
} accounts[] = {
	{ "www.example.test", "WWW.example.test", RR_A },
	{ "www.example.test", "www.example.test", RR_TXT },
	{ "nx1.example.test", "nx2.example.test", RR_A },
	{ "a.sub.example.test", "b.sub.example.test", RR_A },
	{ "example.test", "example.test", RR_DNSKEY },
};

/* Whether the signed query of case @j is answered once the unsigned
 * query of case @i has emptied its account on a fresh table. */
static int answered_after(size_t i, size_t j)
{
	rrl_table_t *t = limit_table(0);
	qb_t b;
	resp_t r;
	query(&b, accounts[i].plain, accounts[i].type, 0);
	size_t n = process(&udp, &b, 512, &r);
	ck_assert_uint_gt(n, 0);
	ck_assert_uint_eq(rrl_filter(t, udp.addr, out, n, NOW, COOKIE_NONE,
	                             q.stats), n);
	query(&b, accounts[j].signed_, accounts[j].type, 1232);
	n = process(&udp, &b, 1232, &r);
	ck_assert_int_eq(q.rrl_done, 1);
	limit_done(t);
	return n > 0;
}

/* The class a signed answer is charged in before signing is the one
 * rrl_classify() reads from the same answer unsigned: the account an
 * unsigned answer emptied withholds the signed one, and no other
 * case's. */
START_TEST(rrl_class_as_unsigned)
{
	size_t nc = sizeof(accounts) / sizeof(accounts[0]);
	for (size_t i = 0; i < nc; i++)
		for (size_t j = 0; j < nc; j++)
			ck_assert_msg(answered_after(i, j) == (i != j),
			              "unsigned %s then signed %s/%u: %s", accounts[i].plain,
			              accounts[j].signed_, accounts[j].type,
			              i == j ? "answered" : "withheld");
}
END_TEST

static Suite *query_dnssec_suite(void)
{
	Suite *s = suite_create("query_dnssec");
	TCase *t = tcase_create("signed");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, do_answer_signed);
	tcase_add_test(t, missing_key_servfail);
	tcase_add_test(t, nxdomain_compact);
	tcase_add_test(t, nodata_bitmap);
	tcase_add_test(t, dnskey_at_apex);
	tcase_add_test(t, referral_nsec);
	tcase_add_test(t, signed_answer_truncated);
	tcase_add_test(t, rrl_drop_before_signing);
	tcase_add_test(t, rrl_slip_unsigned);
	tcase_add_test(t, rrl_class_as_unsigned);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(query_dnssec_suite)
