/* SPDX-License-Identifier: MIT */
/* dnstap: one message of each type encoded and decoded back with the
 * generated unpack function (every field, extra included), the GSLB
 * extra's text for each row kind, the service name found in a response
 * through a CNAME chain, and the dnstap section's defaults and errors. */
#include "common/conf.h"
#include "common/log.h"
#include "common/util.h"
#include "dns/dnstap.h"
#include "unit.h"

#include "dnstap.pb-c.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void v4(struct sockaddr_in *sa, const char *addr, uint16_t port)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_port = htons(port);
	ck_assert_int_eq(inet_pton(AF_INET, addr, &sa->sin_addr), 1);
}

static void v6(struct sockaddr_in6 *sa, const char *addr, uint16_t port)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin6_family = AF_INET6;
	sa->sin6_port = htons(port);
	ck_assert_int_eq(inet_pton(AF_INET6, addr, &sa->sin6_addr), 1);
}

static void eq_bytes(ProtobufCBinaryData b, const void *p, size_t len)
{
	ck_assert_uint_eq(b.len, len);
	ck_assert_int_eq(memcmp(b.data, p, len), 0);
}

START_TEST(query_over_udp_v4)
{
	struct sockaddr_in client, local;
	v4(&client, "198.51.100.7", 40001);
	v4(&local, "192.0.2.53", 53);
	static const uint8_t wire[] = { 0x12, 0x34, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0,
	                                3, 'w', 'w', 'w', 0, 0, 1, 0, 1 };
	static const char extra[] = "gslb service=a.test row=*,* node=n1";
	dnstap_msg_t m = {
		.type = DNSTAP_AUTH_QUERY, .tcp = 0,
		.client = (struct sockaddr *)&client,
		.local = (struct sockaddr *)&local,
		.qtime = { 1700000000, 123456789 },
		.wire = wire, .wirelen = sizeof(wire),
		.identity = "ns1.test", .version = "gslbd 9",
		.extra = extra, .extralen = strlen(extra),
	};
	size_t len = 0;
	uint8_t *buf = dnstap_encode(&m, &len);
	ck_assert_ptr_nonnull(buf);
	Dnstap__Dnstap *d = dnstap__dnstap__unpack(NULL, len, buf);
	ck_assert_ptr_nonnull(d);
	ck_assert_int_eq(d->type, DNSTAP__DNSTAP__TYPE__MESSAGE);
	ck_assert(d->has_identity);
	eq_bytes(d->identity, "ns1.test", 8);
	ck_assert(d->has_version);
	eq_bytes(d->version, "gslbd 9", 7);
	ck_assert(d->has_extra);
	eq_bytes(d->extra, extra, strlen(extra));
	Dnstap__Message *msg = d->message;
	ck_assert_ptr_nonnull(msg);
	ck_assert_int_eq(msg->type, DNSTAP__MESSAGE__TYPE__AUTH_QUERY);
	ck_assert(msg->has_socket_family);
	ck_assert_int_eq(msg->socket_family, DNSTAP__SOCKET_FAMILY__INET);
	ck_assert(msg->has_socket_protocol);
	ck_assert_int_eq(msg->socket_protocol, DNSTAP__SOCKET_PROTOCOL__UDP);
	ck_assert(msg->has_query_address);
	eq_bytes(msg->query_address, &client.sin_addr, 4);
	ck_assert(msg->has_query_port);
	ck_assert_uint_eq(msg->query_port, 40001);
	ck_assert(msg->has_response_address);
	eq_bytes(msg->response_address, &local.sin_addr, 4);
	ck_assert(msg->has_response_port);
	ck_assert_uint_eq(msg->response_port, 53);
	ck_assert(msg->has_query_time_sec && msg->has_query_time_nsec);
	ck_assert_uint_eq(msg->query_time_sec, 1700000000);
	ck_assert_uint_eq(msg->query_time_nsec, 123456789);
	ck_assert(msg->has_query_message);
	eq_bytes(msg->query_message, wire, sizeof(wire));
	/* A query carries no response fields. */
	ck_assert(!msg->has_response_message);
	ck_assert(!msg->has_response_time_sec && !msg->has_response_time_nsec);
	ck_assert(!msg->has_query_zone && !msg->policy && !msg->has_http_protocol);
	dnstap__dnstap__free_unpacked(d, NULL);
	free(buf);
}
END_TEST

START_TEST(response_over_tcp_v6)
{
	struct sockaddr_in6 client, local;
	v6(&client, "2001:db8::7", 51000);
	v6(&local, "2001:db8::53", 5300);
	static const uint8_t wire[] = { 0x12, 0x34, 0x84, 0, 0, 1, 0, 0, 0, 0, 0,
	                                0, 0, 0, 1, 0, 1 };
	dnstap_msg_t m = {
		.type = DNSTAP_AUTH_RESPONSE, .tcp = 1,
		.client = (struct sockaddr *)&client,
		.local = (struct sockaddr *)&local,
		.qtime = { 1700000001, 5 }, .rtime = { 1700000001, 900 },
		.wire = wire, .wirelen = sizeof(wire),
		.identity = "", .version = NULL,
	};
	size_t len = 0;
	uint8_t *buf = dnstap_encode(&m, &len);
	ck_assert_ptr_nonnull(buf);
	Dnstap__Dnstap *d = dnstap__dnstap__unpack(NULL, len, buf);
	ck_assert_ptr_nonnull(d);
	/* An empty identity, no version and no extra are left out. */
	ck_assert(!d->has_identity && !d->has_version && !d->has_extra);
	Dnstap__Message *msg = d->message;
	ck_assert_int_eq(msg->type, DNSTAP__MESSAGE__TYPE__AUTH_RESPONSE);
	ck_assert_int_eq(msg->socket_family, DNSTAP__SOCKET_FAMILY__INET6);
	ck_assert_int_eq(msg->socket_protocol, DNSTAP__SOCKET_PROTOCOL__TCP);
	eq_bytes(msg->query_address, &client.sin6_addr, 16);
	ck_assert_uint_eq(msg->query_port, 51000);
	eq_bytes(msg->response_address, &local.sin6_addr, 16);
	ck_assert_uint_eq(msg->response_port, 5300);
	ck_assert_uint_eq(msg->query_time_sec, 1700000001);
	ck_assert_uint_eq(msg->query_time_nsec, 5);
	ck_assert(msg->has_response_time_sec && msg->has_response_time_nsec);
	ck_assert_uint_eq(msg->response_time_sec, 1700000001);
	ck_assert_uint_eq(msg->response_time_nsec, 900);
	ck_assert(msg->has_response_message);
	eq_bytes(msg->response_message, wire, sizeof(wire));
	ck_assert(!msg->has_query_message);
	dnstap__dnstap__free_unpacked(d, NULL);
	free(buf);
}
END_TEST

/* A result whose plan has nodes "bj-ct-1", "bj-ct-2" and "sh-1". */
static void result(gslb_result_t *g, gslb_row_t row, unsigned npicked)
{
	static const char *const ids[] = { "bj-ct-1", "bj-ct-2", "sh-1" };
	memset(g, 0, sizeof(*g));
	strcpy(g->geo.region, "cn-bj");
	strcpy(g->geo.isp, "ctcc");
	g->row = row;
	g->plan.n = 3;
	for (unsigned i = 0; i < 3; i++) {
		g->plan.node[i].id = ids[i];
		g->plan.node[i].id_len = (uint8_t)strlen(ids[i]);
	}
	for (unsigned i = 0; i < npicked; i++)
		g->picked[i] = (uint8_t)i;
	g->npicked = (uint8_t)npicked;
}

START_TEST(gslb_extra_text)
{
	uint8_t svc[DNAME_MAXLEN + 1];
	dname_from_str("WWW.Cdn.Example.Test.", svc);
	gslb_result_t g;
	char buf[512];
	result(&g, GSLB_ROW_REGION_ISP, 2);
	size_t n = dnstap_gslb_extra(buf, sizeof(buf), svc, &g);
	ck_assert_str_eq(buf, "gslb service=www.cdn.example.test row=cn-bj,ctcc "
	                      "node=bj-ct-1,bj-ct-2");
	ck_assert_uint_eq(n, strlen(buf));
	result(&g, GSLB_ROW_REGION, 1);
	dnstap_gslb_extra(buf, sizeof(buf), svc, &g);
	ck_assert_str_eq(buf, "gslb service=www.cdn.example.test row=cn-bj,* "
	                      "node=bj-ct-1");
	result(&g, GSLB_ROW_ISP, 3);
	dnstap_gslb_extra(buf, sizeof(buf), svc, &g);
	ck_assert_str_eq(buf, "gslb service=www.cdn.example.test row=*,ctcc "
	                      "node=bj-ct-1,bj-ct-2,sh-1");
	/* NODATA: nothing picked. */
	result(&g, GSLB_ROW_DEFAULT, 0);
	dnstap_gslb_extra(buf, sizeof(buf), svc, &g);
	ck_assert_str_eq(buf, "gslb service=www.cdn.example.test row=*,* node=-");
	/* Too small a buffer: nothing, never a cut text. */
	result(&g, GSLB_ROW_REGION_ISP, 2);
	ck_assert_uint_eq(dnstap_gslb_extra(buf, 40, svc, &g), 0);
}
END_TEST

/* Appends a resource record: owner as a pointer to @ptr, type, class IN,
 * TTL 60, then @rdata. */
static size_t rr(uint8_t *p, size_t pos, uint16_t ptr, uint16_t type,
                 const uint8_t *rdata, uint16_t rdlen)
{
	wr16(p + pos, (uint16_t)(0xC000 | ptr));
	wr16(p + pos + 2, type);
	wr16(p + pos + 4, 1);
	wr32(p + pos + 6, 60);
	wr16(p + pos + 10, rdlen);
	memcpy(p + pos + 12, rdata, rdlen);
	return pos + 12 + rdlen;
}

START_TEST(service_name_through_cnames)
{
	/* Q: Alias.Test A; AN: alias.test CNAME svc.test, svc.test A. */
	uint8_t p[512];
	memset(p, 0, 12);
	p[2] = 0x84;
	wr16(p + 4, 1);
	wr16(p + 6, 2);
	size_t pos = 12 + dname_from_str("Alias.Test.", p + 12);
	wr16(p + pos, 1);
	wr16(p + pos + 2, 1);
	pos += 4;
	uint8_t target[64];
	size_t tl = dname_from_str("svc.test.", target);
	size_t cname_at = pos + 12;   /* where the CNAME's RDATA starts */
	pos = rr(p, pos, 12, 5, target, (uint16_t)tl);
	static const uint8_t a[] = { 192, 0, 2, 1 };
	pos = rr(p, pos, (uint16_t)cname_at, 1, a, 4);

	uint8_t out[DNAME_MAXLEN + 1], want[DNAME_MAXLEN + 1];
	ck_assert_int_eq(dnstap_gslb_service(p, pos, 1, out), 0);
	dname_from_str("Alias.Test.", want);
	ck_assert(dname_equal(out, want));
	ck_assert_int_eq(dnstap_gslb_service(p, pos, 2, out), 0);
	ck_assert(dname_equal(out, target));
	/* A hop the answer does not show, a truncated response, no hop. */
	ck_assert_int_eq(dnstap_gslb_service(p, pos, 3, out), -1);
	ck_assert_int_eq(dnstap_gslb_service(p, pos, 0, out), -1);
	p[2] |= 0x02;
	ck_assert_int_eq(dnstap_gslb_service(p, pos, 1, out), -1);
	p[2] &= (uint8_t)~0x02;
	/* Cut short anywhere: never read past the end. */
	for (size_t n = 0; n < pos; n++)
		dnstap_gslb_service(p, n, 2, out);
}
END_TEST

/* The section ------------------------------------------------------- */

#define DIR_TEMPLATE "/tmp/check_dnstap-XXXXXX"
static char dir[sizeof(DIR_TEMPLATE)];
static char cfg_path[300];

static void write_file(const char *name, const char *text)
{
	char path[300];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

#define BASE "server:\n  identity: ns.test\n" \
             "zones:\n  - name: example.test\n    file: example.test.zone\n"

/* Loads BASE plus @section; returns dnstap_conf_load()'s result, with
 * @dc filled on success and the message in @err otherwise. */
static int load(const char *section, dnstap_conf_t *dc, char *err,
                size_t errlen)
{
	char text[1024];
	snprintf(text, sizeof(text), "%s%s", BASE, section);
	write_file("gslbd.conf", text);
	conf_t *c = conf_load(cfg_path, err, errlen);
	ck_assert_msg(c != NULL, "%s", err);
	int rc = dnstap_conf_load(c, dc, err, errlen);
	conf_free(c);
	return rc;
}

static void setup(void)
{
	memcpy(dir, DIR_TEMPLATE, sizeof(dir));
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cfg_path, sizeof(cfg_path), "%s/gslbd.conf", dir);
	log_set_level(GSLB_LOG_ERR);
	write_file("example.test.zone",
	           "$ORIGIN example.test.\n@ 3600 IN SOA ns1 h 1 3600 600 86400 300\n"
	           "@ 3600 IN NS ns1\nns1 3600 IN A 192.0.2.1\n");
}

static void teardown(void)
{
	char path[400];
	snprintf(path, sizeof(path), "%s/gslbd.conf", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/example.test.zone", dir);
	unlink(path);
	rmdir(dir);
}

START_TEST(section_defaults_and_values)
{
	char err[512];
	dnstap_conf_t dc;
	ck_assert_int_eq(load("", &dc, err, sizeof(err)), 0);
	ck_assert_ptr_null(dc.socket); /* no section: off */
	dnstap_conf_clear(&dc);

	ck_assert_int_eq(load("dnstap:\n  socket: tap.sock\n", &dc, err,
	                      sizeof(err)), 0);
	char want[400];
	snprintf(want, sizeof(want), "%s/tap.sock", dir);
	ck_assert_str_eq(dc.socket, want); /* relative to the file */
	ck_assert_int_eq(dc.queries, 1);
	ck_assert_int_eq(dc.responses, 1);
	ck_assert_str_eq(dc.identity, "ns.test"); /* server.identity */
	ck_assert(strncmp(dc.version, "gslbd ", 6) == 0);
	dnstap_conf_t same;
	ck_assert_int_eq(load("dnstap:\n  socket: tap.sock\n", &same, err,
	                      sizeof(err)), 0);
	ck_assert(dnstap_conf_equal(&dc, &same));
	dnstap_conf_clear(&same);

	dnstap_conf_t o;
	ck_assert_int_eq(load("dnstap:\n  socket: /run/t.sock\n  queries: no\n"
	                      "  responses: yes\n  identity: tap\n  version: \"\"\n",
	                      &o, err, sizeof(err)), 0);
	ck_assert_str_eq(o.socket, "/run/t.sock");
	ck_assert_int_eq(o.queries, 0);
	ck_assert_int_eq(o.responses, 1);
	ck_assert_str_eq(o.identity, "tap");
	ck_assert_str_eq(o.version, "");
	ck_assert(!dnstap_conf_equal(&dc, &o));
	dnstap_conf_clear(&o);
	dnstap_conf_clear(&dc);
}
END_TEST

START_TEST(section_errors)
{
	static const struct { const char *text, *msg; } bad[] = {
		{ "dnstap:\n  queries: yes\n", ":7: dnstap.socket is required" },
		{ "dnstap:\n  socket: \"\"\n", ":7: dnstap.socket is required" },
		{ "dnstap:\n  socket: t.sock\n  queries: maybe\n",
		  ":8: dnstap.queries must be on or off" },
		{ "dnstap:\n  socket: t.sock\n  responses: [ 1 ]\n",
		  ":8: dnstap.responses must be on or off" },
		{ "dnstap:\n  socket: t.sock\n  port: 6000\n", ":8: " },
		{ "dnstap:\n  socket: [ a, b ]\n", ":7: dnstap.socket must be a string" },
		{ "dnstap:\n  socket: /run/" "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		  "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
		  "x.sock\n", "longer than a Unix socket path" },
		{ "dnstap: yes\n", ":6: " },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char err[512] = "";
		dnstap_conf_t dc;
		ck_assert_int_eq(load(bad[i].text, &dc, err, sizeof(err)), -1);
		ck_assert_msg(strstr(err, bad[i].msg) != NULL, "%s: got '%s'",
		              bad[i].text, err);
	}
}
END_TEST

static Suite *dnstap_suite(void)
{
	Suite *s = suite_create("dnstap");
	TCase *t = tcase_create("encode");
	tcase_add_test(t, query_over_udp_v4);
	tcase_add_test(t, response_over_tcp_v6);
	tcase_add_test(t, gslb_extra_text);
	tcase_add_test(t, service_name_through_cnames);
	suite_add_tcase(s, t);
	t = tcase_create("section");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, section_defaults_and_values);
	tcase_add_test(t, section_errors);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(dnstap_suite)
