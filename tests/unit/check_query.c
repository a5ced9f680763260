/* SPDX-License-Identifier: MIT */
/* Query fixtures: wire queries built by hand, fed to query_process()
 * against a snapshot of zones written to a temporary directory, with each
 * field of the response asserted (Knot's test_process_query.c).  The
 * wire helpers are in query_wire.h; the GSLB answers are in
 * check_query_gslb.c. */
#include "common/conf.h"
#include "dns/edns.h"
#include "common/log.h"
#include "dns/query.h"
#include "dns/snapshot.h"
#include "common/util.h"
#include "query_wire.h"
#include "unit.h"

#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
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
static struct sockaddr_in sin4 = { .sin_family = AF_INET };
static const client_t udp = { (const struct sockaddr *)&sin4, 0 };
static const client_t tcp = { (const struct sockaddr *)&sin4, 1 };

static void write_file(const char *name, const char *text)
{
	qw_write(dir, name, text);
}

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* 60 addresses at "big": 60 * 16 bytes do not fit in 512. */
	qw_write_big(dir, "example.test.zone", zone_text);
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
	snap = qw_snapshot(dir);
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
	return s;
}

UNIT_MAIN(query_suite)

