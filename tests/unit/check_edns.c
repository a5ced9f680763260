/* SPDX-License-Identifier: MIT */
/* EDNS OPT and Client Subnet parsing (RFC 6891, RFC 7871 §6). */
#include "dns/edns.h"
#include "unit.h"

#include <string.h>

/* Builds an OPT RR body (from CLASS on) with one option. */
static size_t opt(uint8_t *b, uint16_t payload, uint8_t version, int dobit,
                  uint16_t code, const uint8_t *data, uint16_t len)
{
	b[0] = payload >> 8, b[1] = payload & 0xff;
	b[2] = 0, b[3] = version, b[4] = dobit ? 0x80 : 0, b[5] = 0;
	uint16_t rdlen = code ? 4 + len : 0;
	b[6] = rdlen >> 8, b[7] = rdlen & 0xff;
	if (code) {
		b[8] = code >> 8, b[9] = code & 0xff;
		b[10] = len >> 8, b[11] = len & 0xff;
		if (len)
			memcpy(b + 12, data, len);
	}
	return 8 + rdlen;
}

START_TEST(plain_opt)
{
	uint8_t b[64];
	edns_t e;
	size_t n = opt(b, 4096, 0, 1, 0, NULL, 0);
	ck_assert_int_eq(edns_parse(b, n, &e), (int)n);
	ck_assert_int_eq(e.payload, 4096);
	ck_assert_int_eq(e.do_bit, 1);
	ck_assert_int_eq(e.version, 0);
	ck_assert_int_eq(e.ecs, 0);
}
END_TEST

START_TEST(small_payload_raised_to_512)
{
	uint8_t b[64];
	edns_t e;
	size_t n = opt(b, 100, 0, 0, 0, NULL, 0);
	ck_assert_int_eq(edns_parse(b, n, &e), (int)n);
	ck_assert_int_eq(e.payload, 512);
}
END_TEST

START_TEST(ecs_valid_v4_24)
{
	uint8_t b[64], ecs[] = { 0, 1, 24, 0, 198, 51, 100 };
	edns_t e;
	size_t n = opt(b, 1232, 0, 0, EDNS_OPT_ECS, ecs, sizeof(ecs));
	ck_assert_int_eq(edns_parse(b, n, &e), (int)n);
	ck_assert_int_eq(e.ecs, 1);
	ck_assert_int_eq(e.ecs_family, 1);
	ck_assert_int_eq(e.ecs_source, 24);
	ck_assert_int_eq(e.ecs_addr[2], 100);
}
END_TEST

START_TEST(ecs_bad_family)
{
	uint8_t b[64], ecs[] = { 0, 3, 24, 0, 1, 2, 3 };
	edns_t e;
	ck_assert_int_lt(edns_parse(b, opt(b, 1232, 0, 0, EDNS_OPT_ECS, ecs,
	                                   sizeof(ecs)), &e), 0);
}
END_TEST

START_TEST(ecs_address_longer_than_prefix)
{
	uint8_t b[64], ecs[] = { 0, 1, 16, 0, 10, 1, 2, 3 };
	edns_t e;
	ck_assert_int_lt(edns_parse(b, opt(b, 1232, 0, 0, EDNS_OPT_ECS, ecs,
	                                   sizeof(ecs)), &e), 0);
}
END_TEST

START_TEST(ecs_bits_beyond_prefix)
{
	uint8_t b[64], ecs[] = { 0, 1, 23, 0, 10, 1, 3 }; /* /23 with bit 24 set */
	edns_t e;
	ck_assert_int_lt(edns_parse(b, opt(b, 1232, 0, 0, EDNS_OPT_ECS, ecs,
	                                   sizeof(ecs)), &e), 0);
}
END_TEST

START_TEST(ecs_nonzero_scope)
{
	uint8_t b[64], ecs[] = { 0, 1, 24, 8, 10, 1, 2 };
	edns_t e;
	ck_assert_int_lt(edns_parse(b, opt(b, 1232, 0, 0, EDNS_OPT_ECS, ecs,
	                                   sizeof(ecs)), &e), 0);
}
END_TEST

START_TEST(ecs_v6_prefix_too_long)
{
	uint8_t b[64], ecs[21] = { 0, 2, 129, 0 };
	edns_t e;
	ck_assert_int_lt(edns_parse(b, opt(b, 1232, 0, 0, EDNS_OPT_ECS, ecs,
	                                   sizeof(ecs)), &e), 0);
}
END_TEST

START_TEST(option_overruns_rdata)
{
	uint8_t b[64];
	edns_t e;
	size_t n = opt(b, 1232, 0, 0, 65001, (const uint8_t *)"abcd", 4);
	b[11] = 9; /* option length past the end */
	ck_assert_int_lt(edns_parse(b, n, &e), 0);
}
END_TEST

START_TEST(unknown_option_ignored_nsid_seen)
{
	uint8_t b[64];
	edns_t e;
	size_t n = opt(b, 1232, 0, 0, EDNS_OPT_NSID, NULL, 0);
	ck_assert_int_eq(edns_parse(b, n, &e), (int)n);
	ck_assert_int_eq(e.nsid, 1);
	n = opt(b, 1232, 0, 0, 65001, (const uint8_t *)"xy", 2);
	ck_assert_int_eq(edns_parse(b, n, &e), (int)n);
	ck_assert_int_eq(e.nsid, 0);
}
END_TEST

START_TEST(write_echoes_ecs_with_scope)
{
	uint8_t b[64], out[128], ecs[] = { 0, 1, 24, 0, 198, 51, 100 };
	edns_t e;
	edns_parse(b, opt(b, 1232, 0, 1, EDNS_OPT_ECS, ecs, sizeof(ecs)), &e);
	size_t n = edns_write(out, &e, 1232, 0, NULL, 0, 16);
	ck_assert_uint_eq(n, edns_size(&e, 0));
	ck_assert_int_eq(out[0], 0);          /* root owner */
	ck_assert_int_eq(out[2], 41);         /* OPT */
	ck_assert_int_eq(out[7], 0x80);       /* DO echoed */
	ck_assert_int_eq(out[16], 1);         /* family */
	ck_assert_int_eq(out[17], 24);        /* source */
	ck_assert_int_eq(out[18], 16);        /* scope */
	ck_assert_int_eq(out[21], 100);
}
END_TEST

static Suite *edns_suite(void)
{
	Suite *s = suite_create("edns");
	TCase *t = tcase_create("parse");
	tcase_add_test(t, plain_opt);
	tcase_add_test(t, small_payload_raised_to_512);
	tcase_add_test(t, ecs_valid_v4_24);
	tcase_add_test(t, ecs_bad_family);
	tcase_add_test(t, ecs_address_longer_than_prefix);
	tcase_add_test(t, ecs_bits_beyond_prefix);
	tcase_add_test(t, ecs_nonzero_scope);
	tcase_add_test(t, ecs_v6_prefix_too_long);
	tcase_add_test(t, option_overruns_rdata);
	tcase_add_test(t, unknown_option_ignored_nsid_seen);
	tcase_add_test(t, write_echoes_ecs_with_scope);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(edns_suite)
