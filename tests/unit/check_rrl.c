/* SPDX-License-Identifier: MIT */
/* Response rate limiting (S1-12): the rrl section, the classes of real
 * responses from query_process(), the credit accounts over simulated
 * time, slips, exempt prefixes, prefix masking, a crowded table, and the
 * tables' publication to UDP threads. */
#include "common/conf.h"
#include "common/log.h"
#include "common/util.h"
#include "dns/query.h"
#include "dns/rrl.h"
#include "dns/snapshot.h"
#include "dns/zone.h"
#include "unit.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char zone_text[] =
	"$ORIGIN example.test.\n"
	"$TTL 3600\n"
	"@ IN SOA ns1 hostmaster 1 3600 600 604800 300\n"
	"@ IN NS ns1\n"
	"ns1 IN A 192.0.2.1\n"
	"www IN A 192.0.2.10\n"
	"sub IN NS ns.sub\n"
	"ns.sub IN A 192.0.2.53\n";

#define DIR_TEMPLATE "/tmp/check_rrl-XXXXXX"
static char dir[sizeof(DIR_TEMPLATE)];
static char cfg_path[300];
static snapshot_t *snap;
static qctx_t q;
static uint8_t out[65535];
static uint64_t stats[STAT_MAX];

static void write_file(const char *name, const char *text)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

#define ZONES "zones:\n  - name: example.test\n    file: example.test.zone\n"

/* Writes gslbd.conf with @text and loads it; NULL with @err on error. */
static conf_t *load(const char *text, char *err, size_t errlen)
{
	write_file("gslbd.conf", text);
	err[0] = 0;
	return conf_load(cfg_path, err, errlen);
}

static void setup(void)
{
	memcpy(dir, DIR_TEMPLATE, sizeof(dir)); /* again for CK_FORK=no */
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cfg_path, sizeof(cfg_path), "%s/gslbd.conf", dir);
	log_set_level(GSLB_LOG_ERR);
	write_file("example.test.zone", zone_text);
	char err[1024];
	conf_t *c = load("server:\n  identity: ns.test\n" ZONES, err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	unsigned failed;
	snap = snapshot_build(c, NULL, &failed, err, sizeof(err));
	ck_assert_msg(snap != NULL, "%s", err);
	conf_free(c);
	memset(stats, 0, sizeof(stats));
}

static void teardown(void)
{
	snapshot_free(snap);
	char path[300];
	snprintf(path, sizeof(path), "%s/example.test.zone", dir);
	unlink(path);
	unlink(cfg_path);
	rmdir(dir);
}

/* A settings block with everything but what a test sets. */
static rrl_conf_t settings(unsigned rate, unsigned window, unsigned slip)
{
	rrl_conf_t rc = { .rate = rate, .window = window, .slip = slip,
	                  .v4_prefix = 24, .v6_prefix = 56, .table_size = 1024 };
	return rc;
}

/* Configuration -------------------------------------------------------- */

START_TEST(conf_defaults)
{
	char err[1024];
	conf_t *c = load(ZONES, err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	rrl_conf_t rc;
	ck_assert_int_eq(rrl_conf_load(c, &rc, err, sizeof(err)), 0);
	ck_assert_uint_eq(rc.rate, 0);      /* off */
	ck_assert_uint_eq(rc.window, 15);
	ck_assert_uint_eq(rc.slip, 2);
	ck_assert_uint_eq(rc.v4_prefix, 24);
	ck_assert_uint_eq(rc.v6_prefix, 56);
	ck_assert_uint_eq(rc.table_size, 65536);
	ck_assert_uint_eq(rc.nexempt, 2);
	rrl_net_t lo4, lo6;
	ck_assert_int_eq(rrl_net_parse("127.9.8.7", &lo4), 0);
	ck_assert_int_eq(rrl_net_parse("::1", &lo6), 0);
	ck_assert(rrl_net_contains(&rc.exempt[0], &lo4));
	ck_assert(rrl_net_contains(&rc.exempt[1], &lo6));
	rrl_conf_clear(&rc);
	/* Off: nothing is allocated, nothing is published. */
	rrl_t *r = (rrl_t *)1;
	ck_assert_int_eq(rrl_load(c, 2, 4, &r, err, sizeof(err)), 0);
	ck_assert_ptr_null(r);
	conf_free(c);
}
END_TEST

START_TEST(conf_values)
{
	char err[1024];
	conf_t *c = load(ZONES
	                 "rrl:\n"
	                 "  responses-per-second: 20\n"
	                 "  window: 5\n"
	                 "  slip: 0\n"
	                 "  ipv4-prefix: 32\n"
	                 "  ipv6-prefix: 64\n"
	                 "  table-size: 5000\n"
	                 "  exempt: [ \"192.0.2.0/24\", \"2001:db8::/32\", \"198.51.100.7\" ]\n",
	                 err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	rrl_conf_t rc;
	ck_assert_int_eq(rrl_conf_load(c, &rc, err, sizeof(err)), 0);
	ck_assert_uint_eq(rc.rate, 20);
	ck_assert_uint_eq(rc.window, 5);
	ck_assert_uint_eq(rc.slip, 0);
	ck_assert_uint_eq(rc.v4_prefix, 32);
	ck_assert_uint_eq(rc.v6_prefix, 64);
	ck_assert_uint_eq(rc.table_size, 8192); /* rounded up */
	ck_assert_uint_eq(rc.nexempt, 3);
	ck_assert_uint_eq(rc.exempt[0].len, 24);
	ck_assert_uint_eq(rc.exempt[1].family, 6);
	ck_assert_uint_eq(rc.exempt[2].len, 32);
	rrl_conf_clear(&rc);
	conf_free(c);

	/* An empty list exempts nobody, not even loopback. */
	c = load(ZONES "rrl:\n  responses-per-second: 1\n  exempt: []\n", err,
	         sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	ck_assert_int_eq(rrl_conf_load(c, &rc, err, sizeof(err)), 0);
	ck_assert_uint_eq(rc.nexempt, 0);
	rrl_conf_clear(&rc);
	conf_free(c);

	/* The highest rate, with a window that keeps the debt in range. */
	c = load(ZONES "rrl:\n  responses-per-second: 1000000\n  window: 2147\n",
	         err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	ck_assert_int_eq(rrl_conf_load(c, &rc, err, sizeof(err)), 0);
	ck_assert_uint_eq(rc.rate, 1000000);
	rrl_conf_clear(&rc);
	conf_free(c);
}
END_TEST

/* Expects the rrl section @yaml to fail at @line with @what. */
static void expect_error(const char *yaml, int line, const char *what)
{
	char text[2048], err[1024], want[400];
	snprintf(text, sizeof(text), ZONES "rrl:\n%s", yaml);
	conf_t *c = load(text, err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	rrl_conf_t rc;
	ck_assert_msg(rrl_conf_load(c, &rc, err, sizeof(err)) == -1,
	              "accepted:\n%s", yaml);
	ck_assert_ptr_null(rc.exempt); /* nothing left to free */
	snprintf(want, sizeof(want), "%s:%d: ", cfg_path, line);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0,
	              "error '%s' does not start with '%s'", err, want);
	ck_assert_msg(strstr(err, what) != NULL, "error '%s' lacks '%s'", err,
	              what);
	rrl_t *r;
	ck_assert_int_eq(rrl_load(c, 1, 0, &r, err, sizeof(err)), -1);
	conf_free(c);
}

START_TEST(conf_errors)
{
	/* Three lines of zones, "rrl:" on line 4, its first key on line 5. */
	expect_error("  responses-per-second: -1\n", 5, "rrl.responses-per-second must be a whole number from 0 to 1000000");
	/* S1-12: the debt, window x rate, is counted in 32 bits. */
	expect_error("  responses-per-second: 1000000\n  window: 3600\n", 5,
	             "window (3600) times responses-per-second (1000000) must stay below");
	expect_error("  window: 15\n  responses-per-second: 2.5\n", 6, "not '2.5'");
	expect_error("  window: 0\n", 5, "rrl.window must be a whole number from 1 to 3600");
	expect_error("  slip: 11\n", 5, "rrl.slip must be a whole number from 0 to 10");
	expect_error("  ipv4-prefix: 33\n", 5, "rrl.ipv4-prefix");
	expect_error("  ipv6-prefix: 129\n", 5, "rrl.ipv6-prefix");
	expect_error("  table-size: 10\n", 5, "rrl.table-size must be a whole number from 1024");
	expect_error("  rate: 5\n", 5, "unknown key 'rate' in rrl");
	expect_error("  exempt: [ \"10.0.0.0/8\", \"300.1.2.3/8\" ]\n", 5,
	             "'300.1.2.3/8' is not an address or a prefix");
	expect_error("  exempt:\n    - 10.0.0.0/33\n", 6, "'10.0.0.0/33'");
	expect_error("  exempt:\n    - ::1/129\n", 6, "'::1/129'");
	expect_error("  exempt:\n    - 10.0.0.0/\n", 6, "'10.0.0.0/'");
	expect_error("  exempt: { a: b }\n", 5, "rrl.exempt must be a list");
	expect_error("  slip: [ 1 ]\n", 5, "not 'a list or map'");
}
END_TEST

START_TEST(conf_section_allowed)
{
	char err[1024];
	conf_t *c = load(ZONES "rrl:\n  responses-per-second: 5\n", err,
	                 sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	conf_free(c);
	c = load(ZONES "rrl: 5\n", err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	rrl_conf_t rc;
	ck_assert_int_eq(rrl_conf_load(c, &rc, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, ":4: ") != NULL, "%s", err);
	conf_free(c);
}
END_TEST

/* Classes of real responses -------------------------------------------- */

/* Answers @name/@qtype over UDP with @payload bytes of room (0: no OPT;
 * @version: the OPT's EDNS version) into out[]; returns the length. */
static size_t answer(const char *name, uint16_t qtype, uint16_t payload,
                     uint8_t version)
{
	uint8_t b[512];
	size_t n = 12;
	memset(b, 0, 12);
	b[0] = 0xBE, b[1] = 0xEF;
	b[5] = 1;
	n += dname_from_str(name, b + 12);
	wr16(b + n, qtype), wr16(b + n + 2, 1);
	n += 4;
	if (payload) {
		uint8_t opt[11] = { 0, 0, 41 };
		wr16(opt + 3, payload);
		opt[6] = version;
		memcpy(b + n, opt, 11);
		n += 11;
		b[11] = 1;
	}
	static struct sockaddr_in sin4 = { .sin_family = AF_INET };
	client_t c = { (const struct sockaddr *)&sin4, 0 };
	q.snap = snap;
	return query_process(&q, &c, b, n, out, payload ? payload : 512);
}

/* Classifies the response to @name/@qtype; checks class and name. */
static void expect_class(const char *name, uint16_t qtype, uint16_t payload,
                         uint8_t version, rrl_class_t want,
                         const char *want_name, uint16_t want_qtype)
{
	size_t len = answer(name, qtype, payload, version);
	ck_assert_uint_gt(len, 0);
	rrl_class_t cls;
	uint8_t got[DNAME_MAXLEN + 1], w[DNAME_MAXLEN + 1];
	uint16_t qt;
	rrl_classify(out, len, &cls, got, &qt);
	ck_assert_msg(cls == want, "%s/%u: class %d, want %d", name, qtype,
	              (int)cls, (int)want);
	ck_assert_uint_gt(dname_from_str(want_name, w), 0);
	char s[1024];
	ck_assert_msg(dname_equal(got, w) && got[0] == w[0],
	              "%s/%u: name %s, want %s", name, qtype,
	              dname_to_str(got, s, sizeof(s)), want_name);
	ck_assert_uint_eq(qt, want_qtype);
}

/* The account name is the QNAME lowercased as DNS does (ASCII A-Z
 * only), whatever the bytes of its labels: every byte value at every
 * position of a word. */
START_TEST(classify_lowercases_every_byte)
{
	for (unsigned b = 0; b < 256; b++) {
		uint8_t r[64] = { 0x12, 0x34, 0x84, 0x00, 0, 1, 0, 1, 0, 0, 0, 0 };
		size_t p = 12;
		r[p++] = 19;                 /* one label of 19 bytes */
		for (unsigned i = 0; i < 19; i++)
			r[p++] = (uint8_t)(b + i * 7);
		r[p++] = 0;
		r[p++] = 0; r[p++] = 1;      /* A */
		r[p++] = 0; r[p++] = 1;      /* IN */
		rrl_class_t cls;
		uint8_t name[DNAME_MAXLEN + 1];
		uint16_t qt;
		rrl_classify(r, p, &cls, name, &qt);
		ck_assert_int_eq(cls, RRL_ANSWER);
		ck_assert_uint_eq(name[0], 19);
		for (unsigned i = 0; i < 19; i++)
			ck_assert_msg(name[1 + i] == dname_lower[(uint8_t)(b + i * 7)],
			              "byte %u: 0x%02x, want 0x%02x", i, name[1 + i],
			              dname_lower[(uint8_t)(b + i * 7)]);
	}
}
END_TEST

START_TEST(classes)
{
	/* Positive answers: per (name, type), in lowercase. */
	expect_class("www.example.test", RR_A, 0, 0, RRL_ANSWER,
	             "www.example.test", RR_A);
	expect_class("WwW.ExAmple.TEST", RR_A, 1232, 0, RRL_ANSWER,
	             "www.example.test", RR_A);
	/* NXDOMAIN: per zone, whatever the name. */
	expect_class("nosuch.example.test", RR_A, 0, 0, RRL_NXDOMAIN,
	             "example.test", 0);
	expect_class("x.y.NOSUCH.example.test", RR_AAAA, 1232, 0, RRL_NXDOMAIN,
	             "example.test", 0);
	/* NODATA: per name. */
	expect_class("www.example.test", RR_TXT, 0, 0, RRL_NODATA,
	             "www.example.test", 0);
	/* Referral: per delegation point. */
	expect_class("host.sub.example.test", RR_A, 0, 0, RRL_REFERRAL,
	             "sub.example.test", 0);
	expect_class("a.b.sub.example.test", RR_MX, 1232, 0, RRL_REFERRAL,
	             "sub.example.test", 0);
	/* Errors: per prefix only. */
	expect_class("www.elsewhere.test", RR_A, 0, 0, RRL_ERROR, ".", 0);
	expect_class("www.example.test", RR_A, 1232, 1, RRL_ERROR, ".", 0);
	expect_class("example.test", RR_AXFR, 0, 0, RRL_ERROR, ".", 0);
}
END_TEST

START_TEST(classes_of_odd_responses)
{
	rrl_class_t cls;
	uint8_t name[DNAME_MAXLEN + 1];
	uint16_t qt;
	/* Shorter than a header. */
	rrl_classify(out, 5, &cls, name, &qt);
	ck_assert_int_eq(cls, RRL_ERROR);
	ck_assert_uint_eq(name[0], 0);
	/* FORMERR without a question. */
	uint8_t formerr[12] = { 0xBE, 0xEF, 0x80, 0x01 };
	rrl_classify(formerr, 12, &cls, name, &qt);
	ck_assert_int_eq(cls, RRL_ERROR);
	/* NOERROR whose question runs past the end. */
	size_t len = answer("www.example.test", RR_A, 0, 0);
	rrl_classify(out, 20, &cls, name, &qt);
	ck_assert_int_eq(cls, RRL_ERROR);
	ck_assert_uint_eq(name[0], 0);
	/* An answer cut short after its question is still an answer. */
	rrl_classify(out, len - 4, &cls, name, &qt);
	ck_assert_int_eq(cls, RRL_ANSWER);
	/* A truncated (TC) answer counts as the answer it stands for. */
	out[2] |= 0x02;
	wr16(out + 6, 0);
	rrl_classify(out, len, &cls, name, &qt);
	ck_assert_int_eq(cls, RRL_ANSWER);
	ck_assert_uint_eq(qt, RR_A);
}
END_TEST

/* Accounts over simulated time ----------------------------------------- */

/* Charges @n responses of account @key at @now; returns how many pass. */
static unsigned charge(rrl_table_t *t, uint64_t key, uint32_t now, unsigned n)
{
	unsigned pass = 0;
	for (unsigned i = 0; i < n; i++)
		pass += rrl_decide(t, RRL_ANSWER, key, now) == RRL_PASS;
	return pass;
}

START_TEST(accounting)
{
	rrl_conf_t rc = settings(5, 3, 0);
	rrl_table_t *t = rrl_table_new(&rc, 1, 0);
	/* A new account has one second of credit. */
	ck_assert_uint_eq(charge(t, 42, 1000, 5), 5);
	ck_assert_int_eq(rrl_decide(t, RRL_ANSWER, 42, 1000), RRL_DROP);
	/* At the rate, every response passes. */
	ck_assert_uint_eq(charge(t, 7, 1000, 5), 5);
	for (uint32_t s = 1001; s < 1020; s++)
		ck_assert_uint_eq(charge(t, 7, s, 5), 5);
	/* Above the rate, drops are charged too: the debt (at most window
	 * seconds of credit, 15) outgrows the credit, and nothing passes
	 * while the flood goes on. */
	ck_assert_uint_eq(charge(t, 42, 1000, 100), 0);
	for (uint32_t s = 1001; s < 1020; s++)
		ck_assert_uint_eq(charge(t, 42, s, 10), 0);
	/* After the flood, window seconds repay the debt (-15 + 3 * 5 = 0,
	 * and a response would make it negative again)... */
	ck_assert_uint_eq(charge(t, 42, 1022, 1), 0);
	/* ... and the next second earns a full second of credit again. */
	ck_assert_uint_eq(charge(t, 42, 1023, 10), 4);
	/* A long silence is worth no more than one second. */
	ck_assert_uint_eq(charge(t, 42, 5000, 10), 5);
	/* A clock that steps back earns nothing. */
	ck_assert_uint_eq(charge(t, 42, 4000, 1), 0);
	rrl_table_free(t);
}
END_TEST

START_TEST(window_bounds_debt)
{
	rrl_conf_t rc = settings(10, 1, 0);
	rrl_table_t *t = rrl_table_new(&rc, 1, 0);
	/* However deep the flood, one second repays a one-second window. */
	ck_assert_uint_eq(charge(t, 9, 1000, 100000), 10);
	ck_assert_uint_eq(charge(t, 9, 1001, 1), 0);  /* -10 + 10 - 1 */
	ck_assert_uint_eq(charge(t, 9, 1003, 20), 10);
	rrl_table_free(t);
}
END_TEST

START_TEST(rate_shared_by_threads)
{
	/* Two threads share 20 a second: 10 each. */
	rrl_conf_t rc = settings(20, 15, 0);
	rrl_table_t *t = rrl_table_new(&rc, 2, 0);
	ck_assert_uint_eq(charge(t, 1, 1000, 50), 10);
	rrl_table_free(t);
	/* One a second over four threads: one every four seconds each. */
	rc = settings(1, 15, 0);
	t = rrl_table_new(&rc, 4, 0);
	ck_assert_uint_eq(charge(t, 1, 1000, 1), 1);
	ck_assert_uint_eq(charge(t, 1, 1004, 1), 1);
	ck_assert_uint_eq(charge(t, 1, 1008, 1), 1);
	ck_assert_uint_eq(charge(t, 1, 1009, 1), 0);
	rrl_table_free(t);
}
END_TEST

START_TEST(classes_are_separate_accounts)
{
	rrl_conf_t rc = settings(2, 15, 0);
	rrl_table_t *t = rrl_table_new(&rc, 1, 0);
	ck_assert_int_eq(rrl_decide(t, RRL_ERROR, 5, 1000), RRL_PASS);
	ck_assert_int_eq(rrl_decide(t, RRL_ERROR, 5, 1000), RRL_PASS);
	ck_assert_int_eq(rrl_decide(t, RRL_ERROR, 5, 1000), RRL_DROP);
	ck_assert_int_eq(rrl_decide(t, RRL_NXDOMAIN, 5, 1000), RRL_PASS);
	rrl_table_free(t);
}
END_TEST

START_TEST(slip_counting)
{
	rrl_verdict_t v[6];
	for (unsigned slip = 0; slip <= 3; slip++) {
		rrl_conf_t rc = settings(1, 15, slip);
		rrl_table_t *t = rrl_table_new(&rc, 1, 0);
		ck_assert_int_eq(rrl_decide(t, RRL_ANSWER, 3, 1000), RRL_PASS);
		ck_assert_int_eq(rrl_decide(t, RRL_ANSWER, 4, 1000), RRL_PASS);
		for (int i = 0; i < 6; i++) {
			v[i] = rrl_decide(t, RRL_ANSWER, 3, 1000);
			/* Another account's drops do not move this count. */
			rrl_decide(t, RRL_ANSWER, 4, 1000);
		}
		for (unsigned i = 0; i < 6; i++) {
			rrl_verdict_t want = slip && (i + 1) % slip == 0 ? RRL_SLIP
			                                                : RRL_DROP;
			ck_assert_msg(v[i] == want, "slip %u, drop %u: %d", slip,
			              i + 1, (int)v[i]);
		}
		rrl_table_free(t);
	}
}
END_TEST

/* Prefixes ------------------------------------------------------------- */

static void sa4(struct sockaddr_storage *ss, const char *a)
{
	struct sockaddr_in *s = (struct sockaddr_in *)ss;
	memset(ss, 0, sizeof(*ss));
	s->sin_family = AF_INET;
	ck_assert_int_eq(inet_pton(AF_INET, a, &s->sin_addr), 1);
}

static void sa6(struct sockaddr_storage *ss, const char *a)
{
	struct sockaddr_in6 *s = (struct sockaddr_in6 *)ss;
	memset(ss, 0, sizeof(*ss));
	s->sin6_family = AF_INET6;
	ck_assert_int_eq(inet_pton(AF_INET6, a, &s->sin6_addr), 1);
}

/* The account of @addr for the answer to www.example.test A. */
static uint64_t key_of(const struct sockaddr_storage *ss, unsigned v4,
                       unsigned v6)
{
	rrl_net_t p;
	ck_assert_int_eq(rrl_addr((const struct sockaddr *)ss, &p), 0);
	rrl_net_mask(&p, p.family == 4 ? v4 : v6);
	uint8_t name[DNAME_MAXLEN + 1];
	dname_from_str("www.example.test", name);
	return rrl_key(0, RRL_ANSWER, &p, name, RR_A);
}

START_TEST(prefix_masking)
{
	struct sockaddr_storage a, b;
	rrl_net_t n;
	sa4(&a, "192.0.2.77");
	ck_assert_int_eq(rrl_addr((struct sockaddr *)&a, &n), 0);
	rrl_net_mask(&n, 24);
	ck_assert_uint_eq(n.len, 24);
	ck_assert_uint_eq(n.addr[2], 2);
	ck_assert_uint_eq(n.addr[3], 0);
	rrl_net_mask(&n, 20);
	ck_assert_uint_eq(n.addr[2], 0);
	/* IPv4 /24 */
	sa4(&b, "192.0.2.1");
	ck_assert(key_of(&a, 24, 56) == key_of(&b, 24, 56));
	sa4(&b, "192.0.3.77");
	ck_assert(key_of(&a, 24, 56) != key_of(&b, 24, 56));
	ck_assert(key_of(&a, 22, 56) == key_of(&b, 22, 56));
	sa4(&b, "192.0.2.1");
	ck_assert(key_of(&a, 32, 56) != key_of(&b, 32, 56));
	/* An IPv4-mapped IPv6 address is the IPv4 client. */
	sa6(&b, "::ffff:192.0.2.200");
	ck_assert(key_of(&a, 24, 56) == key_of(&b, 24, 56));
	/* IPv6 /56: the first seven bytes. */
	sa6(&a, "2001:db8:0:ab00::1");
	sa6(&b, "2001:db8:0:abff:ffff:ffff:ffff:ffff");
	ck_assert(key_of(&a, 24, 56) == key_of(&b, 24, 56));
	sa6(&b, "2001:db8:0:ac00::1");
	ck_assert(key_of(&a, 24, 56) != key_of(&b, 24, 56));
	ck_assert(key_of(&a, 24, 48) == key_of(&b, 24, 48));
	sa6(&b, "2001:db8:0:ab80::1");
	ck_assert(key_of(&a, 24, 56) == key_of(&b, 24, 56));
	ck_assert(key_of(&a, 24, 57) != key_of(&b, 24, 57));
	/* Other families are not limited. */
	struct sockaddr un = { .sa_family = AF_UNIX };
	ck_assert_int_eq(rrl_addr(&un, &n), -1);
}
END_TEST

START_TEST(net_parse_and_contains)
{
	rrl_net_t net, a;
	ck_assert_int_eq(rrl_net_parse("10.1.2.3/8", &net), 0);
	ck_assert_uint_eq(net.addr[1], 0);      /* host bits cleared */
	ck_assert_int_eq(rrl_net_parse("10.200.0.1", &a), 0);
	ck_assert(rrl_net_contains(&net, &a));
	ck_assert_int_eq(rrl_net_parse("11.0.0.1", &a), 0);
	ck_assert(!rrl_net_contains(&net, &a));
	ck_assert_int_eq(rrl_net_parse("2001:db8::/33", &net), 0);
	ck_assert_int_eq(rrl_net_parse("2001:db8:7fff::1", &a), 0);
	ck_assert(rrl_net_contains(&net, &a));
	ck_assert_int_eq(rrl_net_parse("2001:db8:8000::1", &a), 0);
	ck_assert(!rrl_net_contains(&net, &a));
	ck_assert_int_eq(rrl_net_parse("0.0.0.0/0", &net), 0);
	ck_assert_int_eq(rrl_net_parse("203.0.113.9", &a), 0);
	ck_assert(rrl_net_contains(&net, &a));
	ck_assert_int_eq(rrl_net_parse("::1", &a), 0);
	ck_assert(!rrl_net_contains(&net, &a)); /* another family */
	ck_assert_int_ne(rrl_net_parse("10.0.0.0/x", &net), 0);
	ck_assert_int_ne(rrl_net_parse("10.0.0.0/1000", &net), 0);
	ck_assert_int_ne(rrl_net_parse("/8", &net), 0);
	ck_assert_int_ne(rrl_net_parse("example.test", &net), 0);
}
END_TEST

/* The whole filter ------------------------------------------------------ */

/* Runs @n answers to www.example.test A for client @ss through @t at
 * @now; returns how many went out whole. */
static unsigned filter_n(rrl_table_t *t, const struct sockaddr_storage *ss,
                         const char *name, uint32_t now, unsigned n)
{
	unsigned whole = 0;
	for (unsigned i = 0; i < n; i++) {
		size_t len = answer(name, RR_A, 0, 0);
		whole += rrl_filter(t, (const struct sockaddr *)ss, out, len, now, 0,
		                    stats) == len;
	}
	return whole;
}

START_TEST(filter_prefixes_and_exempt)
{
	rrl_conf_t rc = settings(3, 15, 0);
	rrl_net_t ex[1];
	ck_assert_int_eq(rrl_net_parse("198.51.100.0/24", &ex[0]), 0);
	rc.exempt = ex;
	rc.nexempt = 1;
	rrl_table_t *t = rrl_table_new(&rc, 1, 0);
	struct sockaddr_storage a, b, c, x;
	sa4(&a, "192.0.2.1");
	sa4(&b, "192.0.2.250");   /* same /24 as a */
	sa4(&c, "192.0.5.1");     /* another /24 */
	sa4(&x, "198.51.100.9");  /* exempt */
	ck_assert_uint_eq(filter_n(t, &a, "www.example.test", 1000, 2), 2);
	ck_assert_uint_eq(filter_n(t, &b, "www.example.test", 1000, 5), 1);
	ck_assert_uint_eq(filter_n(t, &c, "www.example.test", 1000, 5), 3);
	ck_assert_uint_eq(filter_n(t, &x, "www.example.test", 1000, 500), 500);
	ck_assert_uint_eq(stats[STAT_RRL_DROPPED], 6);
	ck_assert_uint_eq(stats[STAT_RRL_SLIPPED], 0);
	/* Another name is another account; NXDOMAIN for any name in the
	 * zone is one account. */
	ck_assert_uint_eq(filter_n(t, &a, "ns1.example.test", 1000, 3), 3);
	ck_assert_uint_eq(filter_n(t, &a, "n1.example.test", 1000, 1), 1);
	ck_assert_uint_eq(filter_n(t, &a, "n2.example.test", 1000, 1), 1);
	ck_assert_uint_eq(filter_n(t, &a, "n3.example.test", 1000, 1), 1);
	ck_assert_uint_eq(filter_n(t, &a, "n4.example.test", 1000, 1), 0);
	rrl_table_free(t);

	/* IPv6 clients by /56. */
	rc = settings(1, 15, 0);
	t = rrl_table_new(&rc, 1, 0);
	sa6(&a, "2001:db8:1:200::1");
	sa6(&b, "2001:db8:1:2ff::53");
	sa6(&c, "2001:db8:1:300::1");
	ck_assert_uint_eq(filter_n(t, &a, "www.example.test", 1000, 1), 1);
	ck_assert_uint_eq(filter_n(t, &b, "www.example.test", 1000, 1), 0);
	ck_assert_uint_eq(filter_n(t, &c, "www.example.test", 1000, 1), 1);
	rrl_table_free(t);
}
END_TEST

START_TEST(filter_slips_keep_question_and_opt)
{
	rrl_conf_t rc = settings(1, 15, 1);
	rrl_table_t *t = rrl_table_new(&rc, 1, 0);
	struct sockaddr_storage a;
	sa4(&a, "203.0.113.1");
	size_t len = answer("www.example.test", RR_A, 1232, 0);
	ck_assert_uint_eq(rrl_filter(t, (struct sockaddr *)&a, out, len, 1000, 0,
	                             stats), len);
	len = answer("www.example.test", RR_A, 1232, 0);
	/* The whole answer: question, one A, and OPT with NSID. */
	ck_assert_uint_eq(rd16(out + 6), 1);
	uint8_t opt[64];
	size_t qend = 12 + 18 + 4;
	size_t optlen = len - qend - 16;    /* after the A record */
	ck_assert_uint_ge(optlen, 11);
	ck_assert_uint_le(optlen, sizeof(opt));
	ck_assert_uint_eq(out[len - optlen + 2], RR_OPT);
	memcpy(opt, out + len - optlen, optlen);
	uint8_t question[64];
	memcpy(question, out + 12, qend - 12);
	size_t slen = rrl_filter(t, (struct sockaddr *)&a, out, len, 1000, 0,
	                         stats);
	ck_assert_uint_eq(slen, qend + optlen);
	ck_assert_uint_eq(stats[STAT_RRL_SLIPPED], 1);
	ck_assert(out[2] & 0x02);                 /* TC */
	ck_assert_uint_eq(out[3] & 0xF, 0);       /* RCODE kept */
	ck_assert_uint_eq(out[0], 0xBE);          /* ID kept */
	ck_assert_uint_eq(rd16(out + 4), 1);
	ck_assert_uint_eq(rd16(out + 6), 0);
	ck_assert_uint_eq(rd16(out + 8), 0);
	ck_assert_uint_eq(rd16(out + 10), 1);
	ck_assert_mem_eq(out + 12, question, qend - 12);
	ck_assert_mem_eq(out + qend, opt, optlen);
	/* Without OPT: the question alone. */
	len = answer("nosuch.example.test", RR_A, 0, 0);
	ck_assert_uint_gt(rd16(out + 8), 0);      /* SOA in authority */
	len = rrl_slip(out, len);
	ck_assert_uint_eq(len, 12 + 21 + 4);
	ck_assert_uint_eq(out[3] & 0xF, RCODE_NXDOMAIN);
	ck_assert_uint_eq(rd16(out + 8), 0);
	ck_assert_uint_eq(rd16(out + 10), 0);
	rrl_table_free(t);
}
END_TEST

/* DNS Cookies: a valid server cookie is never limited nor charged; a
 * slip to a query with a client cookie (alone or with a server cookie
 * not ours) is BADCOOKIE: TC clear, RCODE 23 split between the header
 * (7) and the OPT record (1), question and OPT kept. */
START_TEST(filter_cookies)
{
	rrl_conf_t rc = settings(1, 15, 1);
	rrl_table_t *t = rrl_table_new(&rc, 1, 0);
	struct sockaddr_storage a;
	sa4(&a, "203.0.113.1");
	memset(stats, 0, sizeof(stats));
	for (int i = 0; i < 50; i++) {
		size_t len = answer("www.example.test", RR_A, 1232, 0);
		ck_assert_uint_eq(rrl_filter(t, (struct sockaddr *)&a, out, len,
		                             1000, COOKIE_VALID, stats), len);
	}
	/* None of those was charged: the first without a cookie passes. */
	size_t len = answer("www.example.test", RR_A, 1232, 0);
	ck_assert_uint_eq(rrl_filter(t, (struct sockaddr *)&a, out, len, 1000,
	                             COOKIE_NONE, stats), len);
	size_t qend = 12 + 18 + 4, optlen = len - qend - 16;
	static const cookie_kind_t kinds[] = { COOKIE_CLIENT, COOKIE_INVALID };
	for (size_t k = 0; k < 2; k++) {
		len = answer("www.example.test", RR_A, 1232, 0);
		size_t slen = rrl_filter(t, (struct sockaddr *)&a, out, len, 1000,
		                         kinds[k], stats);
		ck_assert_uint_eq(slen, qend + optlen);
		ck_assert(!(out[2] & 0x02));              /* no TC */
		ck_assert_uint_eq(out[3] & 0xF, 23 & 0xF);
		ck_assert_uint_eq(out[qend + 2], RR_OPT);
		ck_assert_uint_eq(out[qend + 5], 23 >> 4); /* extended RCODE */
		ck_assert_uint_eq(rd16(out + 6), 0);
		ck_assert_uint_eq(rd16(out + 10), 1);
	}
	ck_assert_uint_eq(stats[STAT_BADCOOKIE], 2);
	ck_assert_uint_eq(stats[STAT_RRL_SLIPPED], 2);
	/* No cookie, or a malformed one: the plain TC slip. */
	len = answer("www.example.test", RR_A, 1232, 0);
	rrl_filter(t, (struct sockaddr *)&a, out, len, 1000, COOKIE_NONE, stats);
	ck_assert(out[2] & 0x02);
	ck_assert_uint_eq(out[3] & 0xF, 0);
	ck_assert_uint_eq(stats[STAT_BADCOOKIE], 2);
	/* BADCOOKIE without an OPT record to carry it: a TC slip. */
	len = answer("www.example.test", RR_A, 0, 0);
	ck_assert_uint_eq(rrl_badcookie(out, len), qend);
	ck_assert(out[2] & 0x02);
	rrl_table_free(t);
}
END_TEST

/* A crowded table -------------------------------------------------------- */

START_TEST(collisions_do_not_crash)
{
	rrl_conf_t rc = settings(1, 15, 2);
	rc.table_size = 4;      /* one group of buckets for everything */
	rrl_table_t *t = rrl_table_new(&rc, 1, 0);
	/* Keys that share the low bits but not the high ones are separate
	 * accounts, as long as they fit in the group. */
	uint64_t k1 = 1ull << 32, k2 = 2ull << 32;
	ck_assert_int_eq(rrl_decide(t, RRL_ANSWER, k1, 1000), RRL_PASS);
	ck_assert_int_eq(rrl_decide(t, RRL_ANSWER, k2, 1000), RRL_PASS);
	ck_assert_int_ne(rrl_decide(t, RRL_ANSWER, k1, 1000), RRL_PASS);
	ck_assert_int_ne(rrl_decide(t, RRL_ANSWER, k2, 1000), RRL_PASS);
	/* Many more accounts than buckets: each new one evicts the oldest
	 * and starts with full credit; nothing breaks. */
	unsigned pass = 0;
	for (uint32_t s = 1001; s < 1100; s++)
		for (uint64_t k = 0; k < 1000; k++)
			pass += rrl_decide(t, (rrl_class_t)(k % RRL_NCLASS),
			                   k * 0x9E3779B97F4A7C15ull, s) == RRL_PASS;
	ck_assert_uint_gt(pass, 0);
	/* The whole filter with a full table, any client, any name. */
	struct sockaddr_storage a;
	for (unsigned i = 0; i < 300; i++) {
		char addr[32], name[64];
		snprintf(addr, sizeof(addr), "10.%u.%u.1", i % 7, i % 256);
		snprintf(name, sizeof(name), "n%u.example.test", i);
		sa4(&a, addr);
		filter_n(t, &a, name, 2000, 2);
	}
	rrl_table_free(t);
}
END_TEST

/* Only our own responses reach rrl_classify() and rrl_slip(), but they
 * must not read or write out of bounds on anything. */
START_TEST(garbage_does_not_crash)
{
	uint64_t x = 0x243F6A8885A308D3ull;
	uint8_t buf[700], name[DNAME_MAXLEN + 1];
	static const char *const names[] = {
		"www.example.test", "nosuch.example.test", "h.sub.example.test",
		"www.elsewhere.test"
	};
	for (unsigned n = 0; n < 20000; n++) {
		size_t len;
		if (n % 2) {
			len = answer(names[n / 2 % 4], RR_A, n % 4 ? 1232 : 0, 0);
			memcpy(buf, out, len);
			for (unsigned k = 0; k < 1 + n % 5; k++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				buf[x % len] = (uint8_t)(x >> 32);
			}
		} else {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			len = x % sizeof(buf);
			for (size_t i = 0; i < len; i++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				buf[i] = (uint8_t)x;
			}
		}
		rrl_class_t cls;
		uint16_t qt;
		rrl_classify(buf, len, &cls, name, &qt);
		ck_assert_int_lt(cls, RRL_NCLASS);
		ck_assert_uint_gt(dname_len(name, DNAME_MAXLEN + 1), 0);
		ck_assert_uint_le(rrl_slip(buf, len), len);
	}
}
END_TEST

/* Publication ---------------------------------------------------------- */

START_TEST(publication)
{
	char err[1024];
	conf_t *c = load(ZONES "rrl:\n  responses-per-second: 4\n", err,
	                 sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	rrl_slot_t s1 = { 0 }, s2 = { 0 }, s3 = { 0 };
	ck_assert_ptr_null(rrl_slot_table(&s1));    /* nothing published */
	rrl_t *r;
	ck_assert_int_eq(rrl_load(c, 2, 2, &r, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(r);
	rrl_publish(r);
	rrl_table_t *t1 = rrl_slot_table(&s1), *t2 = rrl_slot_table(&s2);
	ck_assert_ptr_nonnull(t1);
	ck_assert_ptr_nonnull(t2);
	ck_assert_ptr_ne(t1, t2);
	ck_assert_ptr_eq(rrl_slot_table(&s1), t1);  /* kept between batches */
	ck_assert_ptr_null(rrl_slot_table(&s3));    /* no table left */
	/* Shared by two threads: 2 a second each. */
	ck_assert_uint_eq(charge(t1, 1, 1000, 5), 2);
	/* A reload publishes fresh tables. */
	ck_assert_int_eq(rrl_load(c, 2, 2, &r, err, sizeof(err)), 0);
	rrl_publish(r);
	t1 = rrl_slot_table(&s1);
	ck_assert_ptr_nonnull(t1);
	ck_assert_uint_eq(charge(t1, 1, 1000, 5), 2);
	/* Off. */
	rrl_publish(NULL);
	ck_assert_ptr_null(rrl_slot_table(&s1));
	ck_assert_ptr_null(rrl_slot_table(&s2));
	/* A table that is never published is freed by rrl_free(). */
	ck_assert_int_eq(rrl_load(c, 1, 3, &r, err, sizeof(err)), 0);
	rrl_free(r);
	conf_free(c);
}
END_TEST

static Suite *rrl_suite(void)
{
	Suite *s = suite_create("rrl");
	TCase *t = tcase_create("rrl");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, conf_defaults);
	tcase_add_test(t, conf_values);
	tcase_add_test(t, conf_errors);
	tcase_add_test(t, conf_section_allowed);
	tcase_add_test(t, classes);
	tcase_add_test(t, classes_of_odd_responses);
	tcase_add_test(t, classify_lowercases_every_byte);
	tcase_add_test(t, accounting);
	tcase_add_test(t, window_bounds_debt);
	tcase_add_test(t, rate_shared_by_threads);
	tcase_add_test(t, classes_are_separate_accounts);
	tcase_add_test(t, slip_counting);
	tcase_add_test(t, prefix_masking);
	tcase_add_test(t, net_parse_and_contains);
	tcase_add_test(t, filter_prefixes_and_exempt);
	tcase_add_test(t, filter_slips_keep_question_and_opt);
	tcase_add_test(t, filter_cookies);
	tcase_add_test(t, collisions_do_not_crash);
	tcase_add_test(t, garbage_does_not_crash);
	tcase_add_test(t, publication);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(rrl_suite)
