/* SPDX-License-Identifier: MIT */
/* gslbd.conf: defaults, every validation error naming file and line, and
 * listen address parsing. */
#include "common/conf.h"
#include "common/log.h"
#include "common/util.h"
#include "health/health_conf.h"
#include "unit.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char dir[] = "/tmp/check_conf-XXXXXX";
static char path[256];

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/gslbd.conf", dir);
	log_set_level(GSLB_LOG_ERR);
}

static void teardown(void)
{
	remove(path);
	remove(dir);
}

static conf_t *load(const char *text, char *err, size_t errlen)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	err[0] = 0;
	return conf_load(path, err, errlen);
}

/* Expects @text to fail with "PATH:LINE: ..." containing @what. */
static void expect_error(const char *text, int line, const char *what)
{
	char err[1024], want[512];
	conf_t *c = load(text, err, sizeof(err));
	ck_assert_msg(c == NULL, "accepted:\n%s", text);
	snprintf(want, sizeof(want), "%s:%d: ", path, line);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0,
	              "error '%s' does not start with '%s'", err, want);
	ck_assert_msg(strstr(err, what) != NULL, "error '%s' lacks '%s'", err,
	              what);
}

#define ZONES "zones:\n  - name: example.test\n    file: example.test.zone\n"

START_TEST(defaults)
{
	char err[1024];
	conf_t *c = load(ZONES, err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	ck_assert_str_eq(c->path, path);
	ck_assert_str_eq(c->dir, dir);
	ck_assert_uint_eq(c->nlisten, 1);
	ck_assert_str_eq(c->listen[0].text, "127.0.0.1@53");
	ck_assert_uint_eq(c->workers, 0);
	ck_assert_str_eq(c->identity, "");
	ck_assert_str_eq(c->version, "");
	ck_assert_ptr_null(c->user);
	ck_assert_uint_eq(c->udp_max_payload, 1232);
	ck_assert_uint_eq(c->tcp_idle_timeout, 10);
	ck_assert_uint_eq(c->tcp_max_clients, 1000);
	ck_assert_uint_eq(c->tcp_max_per_source, 100);
	ck_assert_uint_eq(c->tcp_source_prefix_v4, 32);
	ck_assert_uint_eq(c->tcp_source_prefix_v6, 64);
	ck_assert_uint_eq(c->max_cname_chain, 8);
	ck_assert_int_eq(c->log_level, GSLB_LOG_INFO);
	ck_assert_str_eq(c->db_path, "/var/lib/gslbd");
	ck_assert_uint_eq(c->db_map_size, (uint64_t)16 << 30);
	ck_assert_uint_eq(c->db_audit_keep, 90 * 86400);   /* S3-7 */
	ck_assert_ptr_null(c->geoip_path);
	ck_assert_uint_eq(c->nzones, 1);
	ck_assert_str_eq(c->zones[0].name, "example.test");
	ck_assert_mem_eq(c->zones[0].dname, "\x07" "example\x04test", 14);
	ck_assert_int_eq(c->zones[0].line, 2);
	/* Zone paths are relative to the configuration's directory. */
	char want[512];
	snprintf(want, sizeof(want), "%s/example.test.zone", dir);
	ck_assert_str_eq(c->zones[0].file, want);
	conf_free(c);
}
END_TEST

START_TEST(full_server_section)
{
	char err[1024];
	conf_t *c = load("server:\n"
	                 "  listen: [ \"127.0.0.1@5300\", \"::1@5300\" ]\n"
	                 "  workers: 3\n"
	                 "  identity: ns1.test\n"
	                 "  version: \"1.0\"\n"
	                 "  user: nobody\n"
	                 "  udp-max-payload: 4096\n"
	                 "  tcp-idle-timeout: 1\n"
	                 "  tcp-max-clients: 5\n"
	                 "  tcp-max-per-source: 0\n"
	                 "  tcp-source-prefix-v4: 24\n"
	                 "  tcp-source-prefix-v6: 48\n"
	                 "  max-cname-chain: 0\n"
	                 "  log-level: debug\n"
	                 "zones:\n"
	                 "  - name: Example.TEST.\n"
	                 "    file: /abs/example.zone\n"
	                 "database:\n  path: db\n",
	                 err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	ck_assert_uint_eq(c->nlisten, 2);
	ck_assert_str_eq(c->listen[1].text, "::1@5300");
	ck_assert_int_eq(c->listen[1].addr.ss_family, AF_INET6);
	ck_assert_uint_eq(c->workers, 3);
	ck_assert_str_eq(c->identity, "ns1.test");
	ck_assert_str_eq(c->version, "1.0");
	ck_assert_str_eq(c->user, "nobody");
	ck_assert_uint_eq(c->udp_max_payload, 4096);
	ck_assert_uint_eq(c->tcp_idle_timeout, 1);
	ck_assert_uint_eq(c->tcp_max_clients, 5);
	ck_assert_uint_eq(c->tcp_max_per_source, 0);
	ck_assert_uint_eq(c->tcp_source_prefix_v4, 24);
	ck_assert_uint_eq(c->tcp_source_prefix_v6, 48);
	ck_assert_uint_eq(c->max_cname_chain, 0);
	ck_assert_int_eq(c->log_level, GSLB_LOG_DEBUG);
	ck_assert_str_eq(c->zones[0].name, "example.test");
	ck_assert_str_eq(c->zones[0].file, "/abs/example.zone");
	char want[512];
	snprintf(want, sizeof(want), "%s/db", dir);
	ck_assert_str_eq(c->db_path, want);
	conf_free(c);
	/* A single listen address need not be a list. */
	c = load("server:\n  listen: 127.0.0.2@53\n" ZONES, err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	ck_assert_uint_eq(c->nlisten, 1);
	ck_assert_str_eq(c->listen[0].text, "127.0.0.2@53");
	conf_free(c);
}
END_TEST

START_TEST(unknown_keys)
{
	expect_error("server:\n  workers: 2\n  colour: blue\n" ZONES, 3,
	             "unknown key 'colour' in server");
	expect_error(ZONES "extra: 1\n", 4, "unknown key 'extra'");
	expect_error("zones:\n  - name: a.test\n    file: a\n    ttl: 3\n", 4,
	             "unknown key 'ttl' in zone");
	expect_error(ZONES "database:\n  path: x\n  size: 1\n", 6,
	             "unknown key 'size' in database");
}
END_TEST

START_TEST(database_section)
{
	char err[1024];
	conf_t *c = load(ZONES "database:\n  path: db\n  map-size: 1M\n"
	                 "  audit-keep: 30d\n", err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	ck_assert_uint_eq(c->db_map_size, 1 << 20);
	ck_assert_uint_eq(c->db_audit_keep, 30 * 86400);
	conf_free(c);
	c = load(ZONES "database:\n  map-size: 2147483648\n  audit-keep: 0\n",
	         err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	ck_assert_uint_eq(c->db_map_size, (uint64_t)2 << 30);
	ck_assert_uint_eq(c->db_audit_keep, 0);
	conf_free(c);
	static const char *const bad[] = {
		"  map-size: 512K\n", "  map-size: 2T\n", "  map-size: 1025G\n",
		"  map-size: -1M\n", "  map-size: 1MB\n", "  audit-keep: 3651d\n",
		"  audit-keep: 1w\n", "  audit-keep: [ 1 ]\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[256];
		snprintf(text, sizeof(text), ZONES "database:\n%s", bad[i]);
		c = load(text, err, sizeof(err));
		ck_assert_msg(c == NULL, "accepted %s", bad[i]);
		ck_assert_ptr_nonnull(strstr(err, "database."));
	}
}
END_TEST

START_TEST(bad_listen)
{
	static const char *const bad[] = {
		"127.0.0.1@", "127.0.0.1@0", "127.0.0.1@65536", "localhost@53",
		"127.0.0.1@53x", "@53", "1.2.3@53", "[::1]@53",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		char text[256];
		snprintf(text, sizeof(text),
		         "server:\n  listen:\n    - 127.0.0.1@5300\n    - \"%s\"\n"
		         ZONES, bad[i]);
		expect_error(text, 4, "listen address must be ADDR@PORT");
	}
	expect_error("server:\n  listen: []\n" ZONES, 2, "at least one address");
	expect_error("server:\n  listen: [ [ 1 ] ]\n" ZONES, 2, "ADDR@PORT");
}
END_TEST

static void health_error(const char *text, int line, const char *what);

START_TEST(bad_numbers)
{
	expect_error("server:\n  udp-max-payload: 511\n" ZONES, 2,
	             "udp-max-payload must be a whole number from 512 to 4096, not '511'");
	expect_error("server:\n  udp-max-payload: 4097\n" ZONES, 2, "512 to 4096");
	expect_error("server:\n\n  tcp-idle-timeout: 0\n" ZONES, 3, "1 to 3600");
	expect_error("server:\n  tcp-max-clients: -1\n" ZONES, 2, "1 to 1000000");
	expect_error("server:\n  tcp-max-clients: 99999999999999999999\n" ZONES, 2,
	             "1 to 1000000");
	expect_error("server:\n  tcp-max-per-source: -1\n" ZONES, 2, "0 to 1000000");
	expect_error("server:\n  tcp-source-prefix-v4: 33\n" ZONES, 2, "1 to 32");
	expect_error("server:\n  tcp-source-prefix-v6: 0\n" ZONES, 2, "1 to 128");
	expect_error("server:\n  max-cname-chain: 17\n" ZONES, 2, "0 to 16");
	expect_error("server:\n  workers: 0\n" ZONES, 2, "workers");
	expect_error("server:\n  workers: many\n" ZONES, 2, "workers");
	expect_error("server:\n  workers: 2.5\n" ZONES, 2, "workers");
	expect_error("server:\n  workers: [ 1 ]\n" ZONES, 2, "must be a number");
	expect_error("server:\n  log-level: loud\n" ZONES, 2, "log-level");
	/* Not a number in any range: strtod() reads "nan" and "inf", and
	 * a NaN compares false with both ends. */
	expect_error("server:\n  workers: nan\n" ZONES, 2, "workers");
	health_error(ZONES "health:\n  interval: nan\n", 5, "interval must be a number "
	             "from 0.2 to 3600, not 'nan'");
	health_error(ZONES "steer:\n  floor: nan\n", 5, "floor must be a number");
	health_error(ZONES "health:\n  derate-factor: inf\n", 5, "derate-factor");
}
END_TEST

START_TEST(zone_errors)
{
	expect_error("zones:\n  - name: a.test\n    file: a\n"
	             "  - name: b.test\n    file: b\n"
	             "  - name: A.Test.\n    file: c\n", 6,
	             "zone 'a.test' is listed twice");
	expect_error("zones:\n  - file: a\n", 2, "without 'name'");
	expect_error("zones:\n  - name: a.test\n", 2, "without 'file'");
	expect_error("zones:\n  - name: a..test\n    file: a\n", 2,
	             "not a valid domain name");
	expect_error("zones: a.test\n", 1, "list");
	expect_error("server:\n  workers: 1\n", 1, "no 'zones' section");
	expect_error("- a\n- b\n", 1, "map");
}
END_TEST

START_TEST(yaml_errors)
{
	expect_error("server:\n  workers: 1\n  workers: 2\n" ZONES, 3,
	             "duplicate key");
	expect_error("server: &a\n  workers: 1\nzones: *a\n", 3, "alias");
	expect_error("server:\n  workers: [ 1\n" ZONES, 3, "");
	char err[1024];
	ck_assert_ptr_null(conf_load("/nonexistent/gslbd.conf", err,
	                             sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/gslbd.conf"));
}
END_TEST

START_TEST(parse_listen)
{
	conf_listen_t l;
	ck_assert_int_eq(conf_parse_listen("127.0.0.1@5300", &l), 0);
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)&l.addr;
	ck_assert_int_eq(s4->sin_family, AF_INET);
	ck_assert_int_eq(ntohs(s4->sin_port), 5300);
	ck_assert_uint_eq(s4->sin_addr.s_addr, htonl(0x7f000001));
	ck_assert_uint_eq(l.addrlen, sizeof(*s4));
	ck_assert_str_eq(l.text, "127.0.0.1@5300");

	ck_assert_int_eq(conf_parse_listen("::1@53", &l), 0);
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&l.addr;
	ck_assert_int_eq(s6->sin6_family, AF_INET6);
	ck_assert_int_eq(ntohs(s6->sin6_port), 53);
	ck_assert_int_eq(s6->sin6_addr.s6_addr[15], 1);
	ck_assert_uint_eq(l.addrlen, sizeof(*s6));

	/* Without a port: 53. */
	ck_assert_int_eq(conf_parse_listen("192.0.2.1", &l), 0);
	ck_assert_str_eq(l.text, "192.0.2.1@53");
	ck_assert_int_eq(conf_parse_listen("2001:db8::1", &l), 0);
	ck_assert_str_eq(l.text, "2001:db8::1@53");

	ck_assert_int_eq(conf_parse_listen("", &l), GSLB_EINVAL);
	ck_assert_int_eq(conf_parse_listen("127.0.0.1@+53", &l), GSLB_EINVAL);
	ck_assert_int_eq(conf_parse_listen("127.0.0.1@ 53", &l), GSLB_EINVAL);
	ck_assert_int_eq(conf_parse_listen("127.0.0.1@99999999999999999999", &l),
	                 GSLB_EINVAL);
	char longhost[200];
	memset(longhost, '1', sizeof(longhost) - 1);
	longhost[sizeof(longhost) - 1] = 0;
	ck_assert_int_eq(conf_parse_listen(longhost, &l), GSLB_EINVAL);
}
END_TEST

START_TEST(override_listen)
{
	char err[1024];
	conf_t *c = load(ZONES, err, sizeof(err));
	ck_assert_ptr_nonnull(c);
	char *good[] = { "127.0.0.1@5301", "::1@5301" };
	ck_assert_int_eq(conf_override_listen(c, good, 2, err, sizeof(err)), 0);
	ck_assert_uint_eq(c->nlisten, 2);
	ck_assert_str_eq(c->listen[1].text, "::1@5301");
	char *bad[] = { "127.0.0.1@1", "nope" };
	ck_assert_int_eq(conf_override_listen(c, bad, 2, err, sizeof(err)),
	                 GSLB_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "-l nope"));
	ck_assert_uint_eq(c->nlisten, 2); /* unchanged */
	ck_assert_str_eq(c->listen[0].text, "127.0.0.1@5301");
	conf_free(c);
}
END_TEST

/* The log section: targets, levels (defaulting to server.log-level) and
 * timestamps; without it, stderr at server.log-level. */
START_TEST(log_section)
{
	char err[1024];
	conf_t *c = load("server:\n  log-level: notice\n" ZONES, err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	ck_assert_uint_eq(c->nlog, 1);
	ck_assert_int_eq(c->log[0].kind, LOG_TARGET_STDERR);
	ck_assert_int_eq(c->log[0].level, GSLB_LOG_NOTICE);
	conf_free(c);
	c = load("server:\n  log-level: warning\n" ZONES
	         "log:\n  - target: stderr\n    time: local\n"
	         "  - target: journal\n    level: debug\n"
	         "  - target: syslog\n    level: error\n", err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	ck_assert_uint_eq(c->nlog, 3);
	ck_assert_int_eq(c->log[0].kind, LOG_TARGET_STDERR);
	ck_assert_int_eq(c->log[0].level, GSLB_LOG_WARNING);
	ck_assert_int_eq(c->log[0].local_time, 1);
	ck_assert_int_eq(c->log[1].kind, LOG_TARGET_JOURNAL);
	ck_assert_int_eq(c->log[1].level, GSLB_LOG_DEBUG);
	ck_assert_int_eq(c->log[2].kind, LOG_TARGET_SYSLOG);
	ck_assert_int_eq(c->log[2].level, GSLB_LOG_ERR);
	conf_free(c);
	/* One map instead of a list is one target. */
	c = load(ZONES "log: { target: syslog }\n", err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	ck_assert_uint_eq(c->nlog, 1);
	ck_assert_int_eq(c->log[0].kind, LOG_TARGET_SYSLOG);
	conf_free(c);
	expect_error(ZONES "log:\n  - target: file\n", 5, "stderr, syslog or journal");
	expect_error(ZONES "log:\n  - level: info\n", 5, "needs 'target");
	expect_error(ZONES "log:\n  - target: stderr\n    level: verbose\n", 6, "log level");
	expect_error(ZONES "log:\n  - target: journal\n    time: utc\n", 6, "stderr target only");
	expect_error(ZONES "log:\n  - target: stderr\n    time: tai\n", 6, "utc or local");
	expect_error(ZONES "log:\n  - target: stderr\n  - target: stderr\n", 6, "listed twice");
	expect_error(ZONES "log: []\n", 4, "1 to 4 targets");
	expect_error(ZONES "log:\n  - target: stderr\n    colour: on\n", 6, "colour");
}
END_TEST

/* Loads @text's health section into @hc; 0 or -1. */
static int health_load(const char *text, health_conf_t *hc)
{
	char err[1024];
	conf_t *c = load(text, err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	int rc = health_conf_load(c, hc, err, sizeof(err));
	conf_free(c);
	return rc;
}

/* The health settings of the rules S0-7 (fast interval: a fifth of the
 * interval, at least 1 s, never above it), S1-10 (gray-step), S4-4 with
 * S0-8 (hard-failure-confirm) and S4-7/S3-9 (latency EMA, outliers). */
START_TEST(health_rule_settings)
{
	health_conf_t hc;
	ck_assert_int_eq(health_load(ZONES "health:\n  interval: 30\n  timeout: 2\n"
	                             "  gray-step: 5\n  hard-failure-confirm: off\n"
	                             "  latency-ema-alpha: 0.3\n"
	                             "  latency-outlier-factor: 0\n", &hc), 0);
	ck_assert_double_eq_tol(hc.fast_interval, 6, 1e-9);
	ck_assert_double_eq_tol(hc.gray_step, 5, 1e-9);
	ck_assert_int_eq(hc.hard_confirm, 0);
	ck_assert_double_eq_tol(hc.score.latency_alpha, 0.3, 1e-9);
	ck_assert_double_eq_tol(hc.score.outlier_factor, 0, 1e-9);
	ck_assert_int_eq(health_load(ZONES "health:\n  interval: 2\n  timeout: 1\n", &hc), 0);
	ck_assert_double_eq_tol(hc.fast_interval, 1, 1e-9);
	ck_assert_int_eq(health_load(ZONES "health:\n  interval: 0.5\n  timeout: 0.2\n", &hc), 0);
	ck_assert_double_eq_tol(hc.fast_interval, 0.5, 1e-9);
	ck_assert_int_eq(health_load(ZONES "health:\n  fast-interval: 30\n", &hc), 0);
	ck_assert_double_eq_tol(hc.fast_interval, 10, 1e-9);
	ck_assert_int_eq(health_load(ZONES "health:\n  latency-ema-alpha: 0\n", &hc), -1);
	ck_assert_int_eq(health_load(ZONES "health:\n  gray-step: -1\n", &hc), -1);
}
END_TEST

/* conf_diff() collects "path old new" lines here. */
static void diff_line(const char *k, const char *o, const char *n, void *arg)
{
	char *out = arg;
	size_t len = strlen(out);
	snprintf(out + len, 1024 - len, "%s %s %s\n", k, o ? o : "-", n ? n : "-");
}

/* The differences a reload names: changed, added and removed keys of a
 * map section, a section that is not a map as a whole, nothing when only
 * the order or the layout differ. */
START_TEST(diff_keys)
{
	char err[1024], out[1024] = "";
	conf_t *a = load("server:\n  workers: 2\n  identity: a\n"
	                 "health:\n  interval: 10\n  grade-good: 80\n"
	                 "stats:\n  listen: 127.0.0.1@9100\n" ZONES,
	                 err, sizeof(err));
	ck_assert_msg(a != NULL, "%s", err);
	conf_t *b = load("server:\n  identity: a\n  workers: 4\n"
	                 "health: { interval: 2, grade-good: 80, shadow: on }\n"
	                 "zones:\n  - name: example.test\n    file: other.zone\n",
	                 err, sizeof(err));
	ck_assert_msg(b != NULL, "%s", err);
	ck_assert_uint_eq(conf_diff(a, b, diff_line, out), 5);
	ck_assert_str_eq(out, "server.workers 2 4\n"
	                      "health.interval 10 2\n"
	                      "health.shadow - on\n"
	                      "zones ... ...\n"
	                      "stats.listen 127.0.0.1@9100 -\n");
	out[0] = 0;
	ck_assert_uint_eq(conf_diff(a, a, diff_line, out), 0);
	ck_assert_str_eq(out, "");
	/* What only a restart applies stays as the running process has it. */
	conf_keep_restart(b, a);
	ck_assert_uint_eq(b->workers, 2);
	ck_assert_str_eq(b->db_path, a->db_path);
	ck_assert_uint_eq(b->nlisten, a->nlisten);
	conf_free(a);
	conf_free(b);
}
END_TEST

/* The steer section: the seed's figures by default (S3-3 every minute,
 * tau 5 min; S3-9 1/5/15-minute windows; S3-5 SLA 98 %), compressed
 * values for drills, and each kind of bad value refused. */
START_TEST(steer_section)
{
	health_conf_t hc;
	ck_assert_int_eq(health_load(ZONES, &hc), 0);
	ck_assert_double_eq(hc.steer.interval, 60);
	ck_assert_double_eq(hc.steer.tau, 300);
	ck_assert_uint_eq(hc.steer.nwindows, 3);
	ck_assert_uint_eq(hc.steer.windows[1], 300);
	ck_assert_double_eq(hc.steer.sla, 98);
	ck_assert_int_eq(health_load(ZONES "steer:\n  interval: 1\n  tau: 5\n"
	                             "  windows: [5, 10]\n  max-step: 20\n", &hc), 0);
	ck_assert_double_eq(hc.steer.interval, 1);
	ck_assert_double_eq(hc.steer.tau, 5);
	ck_assert_uint_eq(hc.steer.nwindows, 2);
	ck_assert_uint_eq(hc.steer.windows[1], 10);
	ck_assert_double_eq(hc.steer.max_step, 20);
	ck_assert_int_eq(health_load(ZONES "steer:\n  interval: 0\n", &hc), -1);
	ck_assert_int_eq(health_load(ZONES "steer:\n  windows: [10, 5]\n", &hc), -1);
	ck_assert_int_eq(health_load(ZONES "steer:\n  windows: [1, 2, 3, 4]\n", &hc), -1);
	ck_assert_int_eq(health_load(ZONES "steer:\n  latency-good: 300\n", &hc), -1);
	ck_assert_int_eq(health_load(ZONES "steer:\n  min-step: 20\n", &hc), -1);
	ck_assert_int_eq(health_load(ZONES "steer:\n  speed: 1\n", &hc), -1);
	/* S3-3, S3-8: the sharpness of the score-to-share mapping and the
	 * change window in evaluations; max-change-per-hour is max-change's
	 * older name, and the two together are refused. */
	ck_assert_int_eq(health_load(ZONES, &hc), 0);
	ck_assert_double_eq(hc.steer.sharpness, 3);
	ck_assert_double_eq(hc.steer.change_window, 60);
	ck_assert_double_eq(hc.steer.max_hour, 50);
	ck_assert_int_eq(health_load(ZONES "steer:\n  sharpness: 4\n  change-window: 30\n"
	                             "  max-change: 40\n", &hc), 0);
	ck_assert_double_eq(hc.steer.sharpness, 4);
	ck_assert_double_eq(hc.steer.change_window, 30);
	ck_assert_double_eq(hc.steer.max_hour, 40);
	ck_assert_int_eq(health_load(ZONES "steer:\n  max-change-per-hour: 20\n", &hc), 0);
	ck_assert_double_eq(hc.steer.max_hour, 20);
	ck_assert_int_eq(health_load(ZONES "steer:\n  max-change-per-hour: 20\n"
	                             "  max-change: 40\n", &hc), -1);
	ck_assert_int_eq(health_load(ZONES "steer:\n  sharpness: 11\n", &hc), -1);
	ck_assert_int_eq(health_load(ZONES "steer:\n  change-window: 0\n", &hc), -1);
}
END_TEST

/* conf_snum_key(): a numeric key of a module's section into a double or
 * an unsigned field, its range checked, other keys left to the caller;
 * steer.headroom (S1-6) is read through it. */
START_TEST(numeric_keys)
{
	char err[1024];
	conf_t *c = load(ZONES "steer:\n  a: 2.5\n  b: 7.9\n  c: 11\n  d: on\n", err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	const ynode_t *x = ynode_get(c->root, "steer");
	double a = 0;
	unsigned b = 0;
	const conf_num_t nums[] = { CONF_NUM("a", 0, 10, &a), CONF_NUM("b", 1, 10, &b),
	                            CONF_NUM("c", 0, 10, &a) };
	ck_assert_int_eq(conf_snum_key(c, "a", ynode_get(x, "a"), nums, 3, err, sizeof(err)), 1);
	ck_assert_double_eq(a, 2.5);
	ck_assert_int_eq(conf_snum_key(c, "b", ynode_get(x, "b"), nums, 3, err, sizeof(err)), 1);
	ck_assert_uint_eq(b, 7);
	ck_assert_int_eq(conf_snum_key(c, "d", ynode_get(x, "d"), nums, 3, err, sizeof(err)), 0);
	ck_assert_int_eq(conf_snum_key(c, "c", ynode_get(x, "c"), nums, 3, err, sizeof(err)), -1);
	ck_assert_double_eq(a, 2.5);
	ck_assert_msg(strstr(err, ":7: c must be a number from 0 to 10, not '11'"), "%s", err);
	conf_free(c);
	health_conf_t hc;
	ck_assert_double_eq((health_load(ZONES, &hc), hc.steer.headroom), 20);
	ck_assert_int_eq(health_load(ZONES "steer:\n  headroom: 35\n", &hc), 0);
	ck_assert_double_eq(hc.steer.headroom, 35);
	ck_assert_int_eq(health_load(ZONES "steer:\n  headroom: 95\n", &hc), -1);
}
END_TEST

/* Expects @text's health or cutover section to fail with "PATH:LINE: ..."
 * containing @what. */
static void health_error(const char *text, int line, const char *what)
{
	char err[1024], want[512];
	health_conf_t hc;
	conf_t *c = load(text, err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	int rc = health_conf_load(c, &hc, err, sizeof(err));
	conf_free(c);
	ck_assert_msg(rc == -1, "accepted:\n%s", text);
	snprintf(want, sizeof(want), "%s:%d: ", path, line);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0 && strstr(err, what),
	              "error '%s' is not '%s...%s'", err, want, what);
}

/* The in-window settings of the cutover section: the short-TTL lead
 * (S0-11) and the in-window confirmation (S0-8 in a window), with their
 * defaults and ranges. */
START_TEST(cutover_window_settings)
{
	health_conf_t hc;
	ck_assert_int_eq(health_load(ZONES, &hc), 0);
	ck_assert_double_eq_tol(hc.cut.short_ttl_lead, 300, 1e-9);
	ck_assert_uint_eq(hc.cut.confirm_rounds, 2);
	ck_assert_int_eq(health_load(ZONES "cutover:\n  short-ttl-lead: 30\n"
	                             "  confirm-rounds: 1\n", &hc), 0);
	ck_assert_double_eq_tol(hc.cut.short_ttl_lead, 30, 1e-9);
	ck_assert_uint_eq(hc.cut.confirm_rounds, 1);
	ck_assert_int_eq(health_load(ZONES "cutover:\n  short-ttl-lead: 0\n", &hc), 0);
	ck_assert_double_eq_tol(hc.cut.short_ttl_lead, 0, 1e-9);
	health_error(ZONES "cutover:\n  confirm-rounds: 0\n", 5, "confirm-rounds");
	health_error(ZONES "cutover:\n  confirm-rounds: 101\n", 5, "confirm-rounds");
	health_error(ZONES "cutover:\n  short-ttl-lead: -1\n", 5, "short-ttl-lead");
	health_error(ZONES "cutover:\n  short-ttl-lead: soon\n", 5, "short-ttl-lead");
}
END_TEST

/* Loads @text's health section; expects it to fail at @line with @what
 * (@line 0: to succeed, into @hc). */
static void sources_load(const char *text, int line, const char *what,
                         health_conf_t *hc)
{
	char err[1024], want[512];
	conf_t *c = load(text, err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	int rc = health_conf_load(c, hc, err, sizeof(err));
	conf_free(c);
	if (!line) {
		ck_assert_msg(rc == 0, "refused: %s", err);
		return;
	}
	ck_assert_msg(rc < 0, "accepted:\n%s", text);
	snprintf(want, sizeof(want), "%s:%d: ", path, line);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0,
	              "error '%s' does not start with '%s'", err, want);
	ck_assert_msg(strstr(err, what) != NULL, "error '%s' lacks '%s'", err, what);
}

#define SRC ZONES "steer:\n  sources:\n    - name: edge\n      url: http://127.0.0.1:9090/\n"

/* steer.sources: the defaults, each setting read, and each mistake
 * named with its line. */
START_TEST(steer_sources)
{
	static health_conf_t hc;
	sources_load(ZONES, 0, NULL, &hc);
	ck_assert_uint_eq(hc.sources.n, 0);
	sources_load(SRC "      queries:\n        success: 'up * 100'\n"
	             "        cpu: node_cpu\n", 0, NULL, &hc);
	ck_assert_uint_eq(hc.sources.n, 1);
	const source_def_t *d = &hc.sources.s[0];
	ck_assert_str_eq(d->name, "edge");
	ck_assert_str_eq(d->url, "http://127.0.0.1:9090");     /* trailing / cut */
	ck_assert_double_eq(d->interval, 10);
	ck_assert_double_eq(d->timeout, 2);
	ck_assert_str_eq(d->node_label, "node");
	ck_assert_str_eq(d->region_label, "region");
	ck_assert_str_eq(d->isp_label, "isp");
	ck_assert_uint_eq(d->nq, 2);
	ck_assert_str_eq(d->q[0].input, "success");
	ck_assert_str_eq(d->q[0].promql, "up * 100");
	ck_assert_str_eq(d->q[1].input, "cpu");
	sources_load(SRC "      interval: 30\n      timeout: 5\n      node-label: host\n"
	             "      region-label: area\n      isp-label: carrier\n"
	             "      queries:\n        latency: rtt\n", 0, NULL, &hc);
	d = &hc.sources.s[0];
	ck_assert_double_eq(d->interval, 30);
	ck_assert_double_eq(d->timeout, 5);
	ck_assert_str_eq(d->node_label, "host");
	ck_assert_str_eq(d->region_label, "area");
	ck_assert_str_eq(d->isp_label, "carrier");
	sources_load(SRC "      queries:\n        warp: x\n", 9, "unknown input 'warp'", &hc);
	sources_load(SRC "      queries:\n        success: ''\n", 9, "non-empty", &hc);
	sources_load(SRC "      queries: {}\n", 8, "queries must map 1 to", &hc);
	sources_load(SRC, 6, "needs name, url and queries", &hc);
	sources_load(SRC "      queries:\n        success: x\n      colour: red\n", 10,
	             "colour", &hc);
	sources_load(ZONES "steer:\n  sources:\n    - name: Edge\n      url: http://x\n"
	             "      queries:\n        success: x\n", 6, "short lowercase word", &hc);
	sources_load(ZONES "steer:\n  sources:\n    - name: e\n      url: ftp://x\n"
	             "      queries:\n        success: x\n", 7, "http:// or https://", &hc);
	sources_load(SRC "      interval: 1\n      timeout: 1\n      queries:\n"
	             "        success: x\n", 6, "must be below interval", &hc);
	sources_load(SRC "      interval: 0\n      queries:\n        success: x\n", 8,
	             "interval", &hc);
	sources_load(ZONES "steer:\n  sources:\n    - name: e\n      url: http://x\n"
	             "      queries:\n        success: x\n    - name: e\n      url: http://y\n"
	             "      queries:\n        latency: y\n", 10, "two sources are named e", &hc);
	sources_load(ZONES "steer:\n  sources: edge\n", 5, "list of at most 4", &hc);
}
END_TEST

static Suite *conf_suite(void)
{
	Suite *s = suite_create("conf");
	TCase *t = tcase_create("load");
	tcase_add_unchecked_fixture(t, setup, teardown);
	tcase_add_test(t, defaults);
	tcase_add_test(t, full_server_section);
	tcase_add_test(t, unknown_keys);
	tcase_add_test(t, bad_listen);
	tcase_add_test(t, database_section);
	tcase_add_test(t, bad_numbers);
	tcase_add_test(t, zone_errors);
	tcase_add_test(t, yaml_errors);
	tcase_add_test(t, parse_listen);
	tcase_add_test(t, override_listen);
	tcase_add_test(t, log_section);
	tcase_add_test(t, health_rule_settings);
	tcase_add_test(t, diff_keys);
	tcase_add_test(t, steer_section);
	tcase_add_test(t, numeric_keys);
	tcase_add_test(t, cutover_window_settings);
	tcase_add_test(t, steer_sources);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(conf_suite)
