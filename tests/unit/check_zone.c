/* SPDX-License-Identifier: MIT */
/* Zone loading: every error an operator must fix names file and line;
 * duplicate RRs collapse; wildcard, empty non-terminal, delegation and
 * CNAME nodes carry their flags. */
#include "common/log.h"
#include "common/util.h"
#include "dns/snapshot.h"
#include "dns/zone.h"
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/check_zone-XXXXXX";
static uint8_t apex[256];

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	dname_from_str("example.test", apex);
	log_set_level(GSLB_LOG_ERR);
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Writes @text to @name in the test directory; returns the path. */
static const char *zfile(const char *name, const char *text)
{
	static char path[4][256];
	static int k;
	char *p = path[k++ % 4];
	snprintf(p, 256, "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return p;
}

#define HEAD "$ORIGIN example.test.\n$TTL 300\n" \
             "@ IN SOA ns hm 1 2 3 4 60\n@ IN NS ns\nns IN A 192.0.2.1\n"

/* Loads @text and expects an error starting with "PATH:LINE: " and
 * containing @what. */
static void expect_error(const char *text, int line, const char *what)
{
	char err[1024] = "", want[512];
	const char *path = zfile("bad.zone", text);
	zone_t *z = zone_load(apex, path, err, sizeof(err));
	ck_assert_msg(z == NULL, "loaded: %s", text);
	snprintf(want, sizeof(want), "%s:%d: ", path, line);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0,
	              "error '%s' does not start with '%s'", err, want);
	ck_assert_msg(strstr(err, what) != NULL, "error '%s' lacks '%s'", err,
	              what);
}

static zone_t *load_ok(const char *text)
{
	char err[1024] = "";
	zone_t *z = zone_load(apex, zfile("ok.zone", text), err, sizeof(err));
	ck_assert_msg(z != NULL, "%s", err);
	return z;
}

static const znode_t *find(const zone_t *z, const char *name)
{
	uint8_t w[256], l[256];
	ck_assert_uint_gt(dname_from_str(name, w), 0);
	size_t len = dname_copy_lower(l, w);
	return zone_find(z, l, len, dname_hash(l));
}

/* Whether the zone answers @name itself (zone_claims()). */
static int claims(const zone_t *z, const char *name)
{
	uint8_t w[256], l[256];
	char why[200];
	ck_assert_uint_gt(dname_from_str(name, w), 0);
	dname_copy_lower(l, w);
	return zone_claims(z, l, why, sizeof(why));
}

/* RFC 1982: the order a reload's serial is judged by. */
START_TEST(serial_order)
{
	ck_assert(snapshot_serial_lt(8, 9));
	ck_assert(!snapshot_serial_lt(9, 8));
	ck_assert(!snapshot_serial_lt(9, 9));
	ck_assert(snapshot_serial_lt(4294967295u, 1));  /* wrapped forward */
	ck_assert(!snapshot_serial_lt(1, 4294967295u));
	ck_assert(!snapshot_serial_lt(0, 0x80000000u)); /* undefined: not less */
	ck_assert(!snapshot_serial_lt(0x80000000u, 0));
}
END_TEST

START_TEST(claimed_names)
{
	zone_t *z = load_ok(HEAD "www IN A 192.0.2.2\n"
	                    "a.b.c IN TXT \"deep\"\n"
	                    "lab IN NS ns.lab\nns.lab IN A 192.0.2.3\n"
	                    "* IN TXT \"wild\"\n");
	ck_assert_int_eq(claims(z, "www.example.test"), 1);
	ck_assert_int_eq(claims(z, "WWW.example.test"), 1);
	ck_assert_int_eq(claims(z, "a.b.c.example.test"), 1);
	/* Delegated: at the cut and below it. */
	ck_assert_int_eq(claims(z, "lab.example.test"), 1);
	ck_assert_int_eq(claims(z, "x.lab.example.test"), 1);
	/* A service answers empty non-terminals, wildcard matches and
	 * names that do not exist. */
	ck_assert_int_eq(claims(z, "b.c.example.test"), 0);
	ck_assert_int_eq(claims(z, "shop.example.test"), 0);
	ck_assert_int_eq(claims(z, "x.www.example.test"), 0);
	/* The apex and other zones are not this check's business. */
	ck_assert_int_eq(claims(z, "example.test"), 0);
	ck_assert_int_eq(claims(z, "www.other.test"), 0);
	zone_free(z);
}
END_TEST

START_TEST(missing_soa)
{
	expect_error("$ORIGIN example.test.\n@ 300 IN NS ns\n", 0, "no SOA");
}
END_TEST

START_TEST(missing_ns)
{
	expect_error("$ORIGIN example.test.\n@ 300 IN SOA ns hm 1 2 3 4 60\n",
	             0, "no NS");
}
END_TEST

START_TEST(cname_beside_data)
{
	expect_error(HEAD "www IN A 192.0.2.2\n\nwww IN CNAME ns\n", 8,
	             "CNAME beside other data");
	expect_error(HEAD "www IN CNAME ns\nwww IN TXT \"x\"\n", 7,
	             "CNAME beside other data");
	expect_error(HEAD "www IN CNAME ns\nwww IN CNAME ns2\n", 7,
	             "more than one CNAME");
}
END_TEST

START_TEST(out_of_zone)
{
	expect_error(HEAD "www.example.org. IN A 192.0.2.2\n", 6,
	             "outside the zone");
	expect_error(HEAD "; a comment\nexample. IN A 192.0.2.2\n", 7,
	             "outside the zone");
	expect_error(HEAD "sub IN SOA ns hm 1 2 3 4 5\n", 6, "only allowed at the apex");
	expect_error(HEAD "www CH TXT \"x\"\n", 6, "class IN");
}
END_TEST

START_TEST(bad_rdata)
{
	expect_error(HEAD "www IN A 999.1.1.1\n", 6, "");
	expect_error(HEAD "www IN A 192.0.2.1\nwww IN AAAA nope\n", 7, "");
	expect_error(HEAD "www IN MX ten mail\n", 6, "");
	/* The error of a multi-line record names a line of that record. */
	expect_error(HEAD "www IN A 192.0.2.1\n\n"
	             "x IN SOA ns hm (\n 1 2 3\n zz 5 )\n", 8, "");
}
END_TEST

START_TEST(include_ok_and_errors)
{
	zfile("inc-good.zone", "www IN A 192.0.2.9\n");
	zone_t *z = load_ok(HEAD "$INCLUDE inc-good.zone\nafter IN A 192.0.2.10\n");
	ck_assert_ptr_nonnull(find(z, "www.example.test"));
	ck_assert_ptr_nonnull(find(z, "after.example.test"));
	zone_free(z);

	/* An error inside the included file names that file and its line. */
	const char *inc = zfile("inc-bad.zone", "a IN A 192.0.2.9\nb IN A bad\n");
	char err[1024] = "", want[512];
	const char *path = zfile("main.zone", HEAD "$INCLUDE inc-bad.zone\n");
	ck_assert_ptr_null(zone_load(apex, path, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s:2: ", inc);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s", err);

	/* A missing file names the $INCLUDE line. */
	expect_error(HEAD "\n$INCLUDE missing.zone\n", 7, "cannot open");
	expect_error(HEAD "$INCLUDE\n", 6, "");
	/* Out-of-zone data in an included file. */
	inc = zfile("inc-out.zone", "; x\nwww.example.org. IN A 192.0.2.1\n");
	path = zfile("main.zone", HEAD "$INCLUDE inc-out.zone\n");
	ck_assert_ptr_null(zone_load(apex, path, err, sizeof(err)));
	snprintf(want, sizeof(want), "%s:2: ", inc);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "%s", err);
	/* $INCLUDE with an origin. */
	zfile("inc-org.zone", "www IN A 192.0.2.9\n");
	z = load_ok(HEAD "$INCLUDE inc-org.zone sub\n");
	ck_assert_ptr_nonnull(find(z, "www.sub.example.test"));
	zone_free(z);
	/* Including itself ends at the nesting limit, not in a crash. */
	expect_error(HEAD "$INCLUDE bad.zone\n", 6, "");
}
END_TEST

START_TEST(duplicates_collapse)
{
	zone_t *z = load_ok(HEAD "www IN A 192.0.2.2\nwww IN A 192.0.2.2\n"
	                    "WWW 600 IN A 192.0.2.2\nwww IN A 192.0.2.3\n"
	                    "www 100 IN A 192.0.2.4\n");
	const znode_t *n = find(z, "www.example.test");
	ck_assert_ptr_nonnull(n);
	const zrrset_t *a = znode_rrset(n, RR_A);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a->count, 3);
	ck_assert_uint_eq(a->size, 3 * 6);
	ck_assert_uint_eq(a->ttl, 100); /* the lowest TTL of the set */
	zone_free(z);
}
END_TEST

START_TEST(node_flags)
{
	zone_t *z = load_ok(HEAD "*.wild IN A 192.0.2.9\n"
	                    "a.b.ent IN TXT \"x\"\n"
	                    "sub IN NS ns.sub\nns.sub IN A 192.0.2.53\n"
	                    "alias IN CNAME ns\n");
	const znode_t *n = find(z, "wild.example.test");
	ck_assert_ptr_nonnull(n);
	ck_assert(n->flags & ZNODE_WILDCARD);
	ck_assert_uint_eq(n->nrrsets, 0); /* an empty non-terminal */
	n = find(z, "*.wild.example.test");
	ck_assert_ptr_nonnull(n);
	ck_assert(!(n->flags & ZNODE_WILDCARD));
	ck_assert_ptr_nonnull(znode_rrset(n, RR_A));
	for (const char *ent = "b.ent.example.test"; ent;
	     ent = ent[0] == 'b' ? "ent.example.test" : NULL) {
		n = find(z, ent);
		ck_assert_msg(n != NULL, "%s", ent);
		ck_assert_uint_eq(n->nrrsets, 0);
		ck_assert_uint_eq(n->flags, 0);
	}
	n = find(z, "sub.example.test");
	ck_assert(n->flags & ZNODE_DELEG);
	ck_assert(!(z->apex_node->flags & ZNODE_DELEG));
	ck_assert(z->apex_node->flags & ZNODE_APEX);
	n = find(z, "alias.example.test");
	ck_assert(n->flags & ZNODE_CNAME);
	ck_assert_ptr_null(find(z, "nothing.example.test"));
	/* The NS RRset of the cut knows its in-zone glue. */
	const zrrset_t *ns = znode_rrset(find(z, "sub.example.test"), RR_NS);
	ck_assert_ptr_eq(ns->targets[0], find(z, "ns.sub.example.test"));
	ck_assert_uint_eq(z->neg_ttl, 60);
	ck_assert_uint_eq(z->serial, 1);
	zone_free(z);
}
END_TEST

START_TEST(unknown_type_rfc3597)
{
	zone_t *z = load_ok(HEAD "x IN TYPE65000 \\# 3 010203\n"
	                    "y IN CAA 0 issue \"ca.test\"\n");
	const zrrset_t *s = znode_rrset(find(z, "x.example.test"), 65000);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(rd16(s->rdata), 3);
	ck_assert_mem_eq(s->rdata + 2, "\x01\x02\x03", 3);
	zone_free(z);
}
END_TEST

START_TEST(meta_types_rejected)
{
	expect_error(HEAD "x IN TYPE255 \\# 0\n", 6, "cannot be zone data");
	expect_error(HEAD "x IN TYPE41 \\# 0\n", 6, "cannot be zone data");
}
END_TEST

static Suite *zone_suite(void)
{
	Suite *s = suite_create("zone");
	TCase *t = tcase_create("load");
	tcase_add_unchecked_fixture(t, setup, teardown);
	tcase_add_test(t, missing_soa);
	tcase_add_test(t, claimed_names);
	tcase_add_test(t, missing_ns);
	tcase_add_test(t, cname_beside_data);
	tcase_add_test(t, out_of_zone);
	tcase_add_test(t, bad_rdata);
	tcase_add_test(t, include_ok_and_errors);
	tcase_add_test(t, duplicates_collapse);
	tcase_add_test(t, node_flags);
	tcase_add_test(t, unknown_type_rfc3597);
	tcase_add_test(t, meta_types_rejected);
	tcase_add_test(t, serial_order);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(zone_suite)
