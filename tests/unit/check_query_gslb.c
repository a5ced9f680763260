/* SPDX-License-Identifier: MIT */
/* GSLB query fixtures: wire queries with and without ECS fed to
 * query_process() with a weight store and a MaxMind DB in a temporary
 * directory (the data of store_fixture.h), as a worker runs it, asserting
 * the answer, its TTL, the ECS scope of the reply and the AA flag. */
#include "common/conf.h"
#include "common/log.h"
#include "common/util.h"
#include "dns/edns.h"
#include "dns/query.h"
#include "dns/snapshot.h"
#include "query_wire.h"
#include "store_fixture.h"
#include "unit.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

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
	q.memo = gslb_memo_new();
	q.now = (uint32_t)time(NULL);
	q.rng = 42;
}

static void gslb_teardown(void)
{
	wdb_reader_free(q.wdb);
	q.wdb = NULL;
	gslb_memo_free(q.memo);
	q.memo = NULL;
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

/* Asserts that @r is NODATA with one SOA of TTL @ttl and ECS scope @scope. */
static void expect_nodata(const resp_t *r, uint32_t ttl, int scope)
{
	ck_assert_int_eq(r->rcode, RCODE_NOERROR);
	ck_assert_int_eq(r->aa, 1);
	ck_assert_uint_eq(r->an, 0);
	ck_assert_uint_eq(r->ns, 1);
	ck_assert_uint_eq(r->rr[0].type, RR_SOA);
	ck_assert_uint_eq(r->rr[0].ttl, ttl);
	ck_assert_int_eq(reply_scope(r), scope);
}

/* A negative answer of a service is decided like a positive one: it
 * carries the deciding scope (RFC 7871 §7.4: a resolver would otherwise
 * give one region's NODATA to everybody), and its SOA's TTL, the
 * negative-caching time, is the answer's TTL when that is below the
 * zone's (here 300 s). */
START_TEST(gslb_negative_scope_ttl)
{
	static const uint8_t ecs_bjcu[3] = { 123, 112, 1 };  /* cn-bj, cucc */
	resp_t r;
	/* (cn-bj, *) has no IPv6 node; (cn-bj, ctcc) has one. */
	gslb_query("www", RR_AAAA, 1, 24, ecs_bjcu, &r);
	expect_nodata(&r, 60, 12);
	gslb_query("www", RR_MX, 1, 24, ecs_bjcu, &r);
	expect_nodata(&r, 60, 12);
	/* all_down empty: the (cn-bj, ctcc) row's outage. */
	gslb_query("empty", RR_A, 1, 24, ecs_bj, &r);
	expect_nodata(&r, 60, 17);
	/* The same client located by the resolver's address: scope 0. */
	gslb_query("empty", RR_A, 1, 0, ecs_bj, &r);
	ck_assert_int_eq(reply_scope(&r), 0);
	/* No rows: nobody gets an address, scope 0, the service's TTL. */
	gslb_query("norows", RR_A, 1, 24, ecs_bj, &r);
	expect_nodata(&r, 60, 0);
	/* The short TTL while the row moves bounds the NODATA too. */
	gslb_query("short", RR_MX, 1, 24, ecs_bj, &r);
	expect_nodata(&r, 5, 0);
	/* Static data keeps the zone's negative TTL and scope 0. */
	gslb_query("static", RR_AAAA, 1, 24, ecs_bj, &r);
	expect_nodata(&r, 300, 0);
	gslb_query("nothing", RR_A, 1, 24, ecs_bj, &r);
	ck_assert_int_eq(r.rcode, RCODE_NXDOMAIN);
	ck_assert_uint_eq(r.rr[0].ttl, 300);
	ck_assert_int_eq(reply_scope(&r), 0);
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

/* S4-11: the scope of each kind of answer, on the wire.  An IPv4 client
 * written IPv4-mapped in an option of family 2 gets the IPv4 network's
 * prefix in the option's IPv6 bits (/17 + 96); a gray release (S4-10)
 * splits its row's clients by /24, so its answers say /24 even where the
 * geo network is wider; a NODATA is a negative answer and says 0. */
START_TEST(gslb_scope_of_each_answer)
{
	resp_t r;
	static const uint8_t mapped_bj[15] = { [10] = 0xff, [11] = 0xff, 36, 110, 1 };
	gslb_query("www", RR_A, 2, 120, mapped_bj, &r);
	ck_assert_uint_eq(r.an, 1);
	ck_assert_int_eq(out[r.rr[0].rdata + 3], 11);          /* bj-ct */
	ck_assert_int_eq(reply_scope(&r), 96 + 17);
	/* The same client as IPv4: /17, the answer it shares. */
	gslb_query("www", RR_A, 1, 24, ecs_bj, &r);
	ck_assert_int_eq(reply_scope(&r), 17);

	/* The release row (cn-bj, *): its /17 is narrowed to the /24. */
	gslb_query("rel", RR_A, 1, 24, ecs_bj, &r);
	ck_assert_uint_eq(r.an, 1);
	ck_assert_int_eq(reply_scope(&r), 24);
	/* A client of a row without the release: the geo network, as
	 * ever (us-west's /24 reached through the default row). */
	static const uint8_t ecs_cu16[2] = { 112, 64 };
	gslb_query("rel", RR_A, 1, 16, ecs_cu16, &r);
	ck_assert_uint_eq(r.an, 1);
	ck_assert_int_eq(out[r.rr[0].rdata + 3], 1);           /* def */
	ck_assert_int_eq(reply_scope(&r), 14);

	/* AAAA for (cn-bj, *), whose only node has no IPv6: NODATA with the
	 * SOA and the scope of the network that decided it, as an address
	 * would carry (S4-11, RFC 7871 §7.4). */
	static const uint8_t ecs_bj_cu[3] = { 123, 112, 0 };
	gslb_query("www", RR_AAAA, 1, 24, ecs_bj_cu, &r);
	ck_assert_int_eq(r.rcode, RCODE_NOERROR);
	ck_assert_uint_eq(r.an, 0);
	ck_assert_uint_eq(r.ns, 1);
	ck_assert_int_eq(reply_scope(&r), 12); /* 123.112.0.0/12 */
}
END_TEST

static Suite *query_gslb_suite(void)
{
	Suite *s = suite_create("query_gslb");
	TCase *t = tcase_create("gslb");
	tcase_add_unchecked_fixture(t, gslb_setup, gslb_teardown);
	tcase_add_test(t, gslb_ecs_answer);
	tcase_add_test(t, gslb_ecs_ipv6);
	tcase_add_test(t, gslb_without_ecs);
	tcase_add_test(t, gslb_ttl_cname_nodata);
	tcase_add_test(t, gslb_sticky_wildcard_ent);
	tcase_add_test(t, gslb_negative_scope_ttl);
	tcase_add_test(t, gslb_scope_of_each_answer);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(query_gslb_suite)
