/* SPDX-License-Identifier: MIT */
/* Wire-format name helpers: unpacking compressed names (pointer loops,
 * forward pointers, overlong names), presentation round trips and
 * case-insensitive comparison. */
#include "common/net.h"
#include "common/num.h"
#include "common/util.h"
#include "unit.h"

#include <ctype.h>
#include <string.h>

START_TEST(unpack_plain_and_pointer)
{
	/* 12 bytes of header, "www.example.test", then "a" + pointer. */
	uint8_t pkt[64] = { 0 };
	static const uint8_t name[] = "\x03www\x07" "example\x04test";
	memcpy(pkt + 12, name, sizeof(name)); /* with the root label */
	size_t second = 12 + sizeof(name);
	pkt[second] = 1, pkt[second + 1] = 'a';
	pkt[second + 2] = 0xC0, pkt[second + 3] = 12 + 4; /* example.test */
	size_t len = second + 4;

	uint8_t out[256];
	size_t pos = 12;
	ck_assert_uint_eq(dname_unpack(pkt, len, &pos, out), sizeof(name));
	ck_assert_uint_eq(pos, second);
	ck_assert_mem_eq(out, name, sizeof(name));

	pos = second;
	ck_assert_uint_eq(dname_unpack(pkt, len, &pos, out), 2 + 14);
	ck_assert_uint_eq(pos, len); /* just past the pointer */
	ck_assert_mem_eq(out, "\x01" "a\x07" "example\x04test", 16);
}
END_TEST

START_TEST(unpack_pointer_loops)
{
	uint8_t out[256];
	size_t pos;
	/* A pointer to itself. */
	uint8_t self[] = { 0, 0, 0xC0, 2 };
	pos = 2;
	ck_assert_uint_eq(dname_unpack(self, sizeof(self), &pos, out), 0);
	ck_assert_uint_eq(pos, 2); /* unchanged on error */
	/* A backward pointer to a label followed by the same pointer: each
	 * hop goes back, yet the walk never ends without a bound. */
	uint8_t loop[] = { 1, 'a', 0xC0, 0 };
	pos = 2;
	ck_assert_uint_eq(dname_unpack(loop, sizeof(loop), &pos, out), 0);
	pos = 0;
	ck_assert_uint_eq(dname_unpack(loop, sizeof(loop), &pos, out), 0);
	/* Two pointers pointing at each other. */
	uint8_t pair[] = { 0xC0, 2, 0xC0, 0 };
	pos = 2;
	ck_assert_uint_eq(dname_unpack(pair, sizeof(pair), &pos, out), 0);
	pos = 0;
	ck_assert_uint_eq(dname_unpack(pair, sizeof(pair), &pos, out), 0);
}
END_TEST

START_TEST(unpack_forward_and_bad_pointers)
{
	uint8_t out[256];
	size_t pos = 0;
	uint8_t fwd[] = { 0xC0, 2, 1, 'a', 0 };
	ck_assert_uint_eq(dname_unpack(fwd, sizeof(fwd), &pos, out), 0);
	uint8_t oob[] = { 1, 'a', 0xFF, 0xFF };
	pos = 0;
	ck_assert_uint_eq(dname_unpack(oob, sizeof(oob), &pos, out), 0);
	/* A pointer cut in half by the end of the packet. */
	uint8_t half[] = { 0, 0xC0 };
	pos = 1;
	ck_assert_uint_eq(dname_unpack(half, sizeof(half), &pos, out), 0);
	/* The 0x40 and 0x80 label types are reserved (RFC 6891 §5). */
	uint8_t ext[] = { 0x41, 'a', 0 };
	pos = 0;
	ck_assert_uint_eq(dname_unpack(ext, sizeof(ext), &pos, out), 0);
	uint8_t ext2[] = { 0x80, 'a', 0 };
	pos = 0;
	ck_assert_uint_eq(dname_unpack(ext2, sizeof(ext2), &pos, out), 0);
	/* Truncated: label runs past the end, or no root label. */
	uint8_t trunc[] = { 5, 'a', 'b' };
	pos = 0;
	ck_assert_uint_eq(dname_unpack(trunc, sizeof(trunc), &pos, out), 0);
	uint8_t noroot[] = { 1, 'a' };
	pos = 0;
	ck_assert_uint_eq(dname_unpack(noroot, sizeof(noroot), &pos, out), 0);
}
END_TEST

START_TEST(unpack_overlong)
{
	uint8_t pkt[600], out[256];
	size_t pos, o = 0;
	/* 255 bytes: three 63-byte labels and one of 61, plus the root. */
	for (int i = 0; i < 3; i++) {
		pkt[o++] = 63;
		memset(pkt + o, 'a', 63);
		o += 63;
	}
	pkt[o++] = 61;
	memset(pkt + o, 'b', 61);
	o += 61;
	pkt[o++] = 0;
	ck_assert_uint_eq(o, 255);
	pos = 0;
	ck_assert_uint_eq(dname_unpack(pkt, o, &pos, out), 255);
	ck_assert_uint_eq(dname_len(pkt, o), 255);
	/* One more byte in the last label: 256. */
	pkt[192] = 62;
	memset(pkt + 193, 'b', 62);
	pkt[255] = 0;
	pos = 0;
	ck_assert_uint_eq(dname_unpack(pkt, 256, &pos, out), 0);
	ck_assert_uint_eq(dname_len(pkt, 256), 0);
	pos = 0;
	ck_assert_int_eq(dname_skip(pkt, 256, &pos), -1);
	/* Overlong only through a pointer: 200 bytes + pointer to 128. */
	o = 0;
	for (int i = 0; i < 4; i++) {
		pkt[o++] = 49;
		memset(pkt + o, 'c', 49);
		o += 49;
	}
	pkt[o++] = 0;             /* 201 bytes, fine alone */
	size_t p2 = o;
	for (int i = 0; i < 2; i++) {
		pkt[o++] = 49;
		memset(pkt + o, 'd', 49);
		o += 49;
	}
	pkt[o++] = 0xC0, pkt[o++] = 0;
	pos = 0;
	ck_assert_uint_eq(dname_unpack(pkt, o, &pos, out), 201);
	pos = p2;
	ck_assert_uint_eq(dname_unpack(pkt, o, &pos, out), 0);
	/* dname_skip does not follow pointers and accepts it. */
	pos = p2;
	ck_assert_int_eq(dname_skip(pkt, o, &pos), 0);
	ck_assert_uint_eq(pos, o);
}
END_TEST

START_TEST(str_round_trip)
{
	static const char *const names[] = {
		"www.example.test.", "a.", ".", "x\\.y.example.",
		"with\\032space.test.", "semi\\;colon.test.", "\\000\\255.test.",
		"back\\\\slash.test.",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		uint8_t w[256];
		char buf[1100];
		size_t l = dname_from_str(names[i], w);
		ck_assert_msg(l > 0, "%s", names[i]);
		ck_assert_uint_eq(dname_len(w, sizeof(w)), l);
		ck_assert_str_eq(dname_to_str(w, buf, sizeof(buf)), names[i]);
	}
	uint8_t w[256];
	/* The final dot is optional; escapes decode. */
	ck_assert_uint_eq(dname_from_str("www.example.test", w), 18);
	ck_assert_mem_eq(w, "\x03www\x07" "example\x04test", 18);
	ck_assert_uint_eq(dname_from_str("\\065b", w), 4);
	ck_assert_mem_eq(w, "\x02" "Ab", 4);
}
END_TEST

/* Every byte value in every label position: the text form reads back
 * as the same wire name (the whole-label copy and the escapes agree). */
START_TEST(str_round_trip_random)
{
	uint64_t x = 88172645463325252ull;
	for (int round = 0; round < 20000; round++) {
		uint8_t w[256], back[256];
		size_t o = 0;
		unsigned labels = 1 + round % 5;
		for (unsigned i = 0; i < labels; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			uint8_t l = (uint8_t)(1 + x % 40);
			w[o++] = l;
			for (uint8_t k = 0; k < l; k++) {
				x ^= x << 13, x ^= x >> 7, x ^= x << 17;
				/* Mostly plain, sometimes any byte. */
				w[o++] = (uint8_t)(x % 8 ? 'a' + (x >> 8) % 26 : (x >> 16) & 0xff);
			}
		}
		w[o++] = 0;
		char buf[1100];
		dname_to_str(w, buf, sizeof(buf));
		ck_assert_uint_eq(dname_from_str(buf, back), o);
		ck_assert_mem_eq(back, w, o);
	}
}
END_TEST

START_TEST(str_rejects)
{
	uint8_t w[256];
	char s[400];
	ck_assert_uint_eq(dname_from_str("a..b", w), 0);
	ck_assert_uint_eq(dname_from_str(".a", w), 0);
	ck_assert_uint_eq(dname_from_str("\\256.test", w), 0);
	/* 63 is the longest label. */
	memset(s, 'a', 64);
	s[64] = 0;
	ck_assert_uint_eq(dname_from_str(s, w), 0);
	s[63] = 0;
	ck_assert_uint_eq(dname_from_str(s, w), 65);
	/* 255 bytes of wire name is the longest: 4 labels of 63 is 257. */
	size_t o = 0;
	for (int i = 0; i < 4; i++) {
		memset(s + o, 'a', 63);
		o += 63;
		s[o++] = '.';
	}
	s[o] = 0;
	ck_assert_uint_eq(dname_from_str(s, w), 0);
	s[63 * 3 + 3 + 61] = 0; /* last label of 61: exactly 255 */
	ck_assert_uint_eq(dname_from_str(s, w), 255);
}
END_TEST

START_TEST(to_str_small_buffer)
{
	uint8_t w[256];
	char buf[8];
	dname_from_str("abcdefgh.example.test", w);
	dname_to_str(w, buf, sizeof(buf));
	ck_assert_uint_lt(strlen(buf), sizeof(buf));
	dname_from_str("\\001\\002\\003\\004", w);
	dname_to_str(w, buf, sizeof(buf));
	ck_assert_uint_lt(strlen(buf), sizeof(buf));
	ck_assert_str_eq(dname_to_str(w, buf, 1), "");
}
END_TEST

/* The name hash ignores case in every byte position of its words and
 * tells apart names that differ anywhere, tail bytes included. */
START_TEST(hash_ignores_case)
{
	static const char *const names[] = {
		"a", "ab.c", "www.example.test", "abcdefg.h", "abcdefgh.ij",
		"s1.big.test", "0123456789.abcdefghijklmnopqrstuvwxyz.example",
	};
	uint32_t seen[sizeof(names) / sizeof(*names)];
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		char up[100];
		size_t l = strlen(names[i]);
		for (size_t k = 0; k <= l; k++)
			up[k] = (char)toupper((unsigned char)names[i][k]);
		uint8_t a[256], b[256], c[256];
		ck_assert_uint_gt(dname_from_str(names[i], a), 0);
		ck_assert_uint_gt(dname_from_str(up, b), 0);
		ck_assert_uint_eq(dname_hash(a), dname_hash(b));
		seen[i] = dname_hash(a);
		for (size_t j = 0; j < i; j++)
			ck_assert_uint_ne(seen[j], seen[i]);
		/* One byte changed, at each position: another hash. */
		size_t wl = dname_len(a, sizeof(a));
		for (size_t k = 1; k + 1 < wl; k++) {
			memcpy(c, a, wl);
			if (c[k] >= 'a' && c[k] <= 'z')
				c[k] = c[k] == 'z' ? 'y' : (uint8_t)(c[k] + 1);
			else
				continue;
			ck_assert_uint_ne(dname_hash(c), seen[i]);
		}
	}
}
END_TEST

START_TEST(equal_ignores_case)
{
	uint8_t a[256], b[256], c[256];
	dname_from_str("WwW.ExAmPlE.TeSt", a);
	dname_from_str("www.example.test", b);
	dname_from_str("www.example.tesu", c);
	ck_assert_int_eq(dname_equal(a, b), 1);
	ck_assert_int_eq(dname_equal(a, c), 0);
	ck_assert_uint_eq(dname_hash(a), dname_hash(b));
	/* Only ASCII letters fold: 0xC0 and 0xE0 differ. */
	static const uint8_t hi1[] = { 1, 0xC0, 0 }, hi2[] = { 1, 0xE0, 0 };
	ck_assert_int_eq(dname_equal(hi1, hi2), 0);
	/* "ab.c" and "a.bc" have the same letters but not the same labels. */
	dname_from_str("ab.c", a);
	dname_from_str("a.bc", b);
	ck_assert_int_eq(dname_equal(a, b), 0);
	uint8_t l[256];
	dname_from_str("WWW.Example.TEST", a);
	ck_assert_uint_eq(dname_copy_lower(l, a), 18);
	ck_assert_mem_eq(l, "\x03www\x07" "example\x04test", 18);
	/* Every byte value, at every offset within a word: only A-Z fold,
	 * and not one byte past the name is written. */
	for (unsigned lab = 1; lab <= 20; lab++) {
		for (unsigned base = 0; base < 256; base += 17) {
			uint8_t src[64], dst[64];
			src[0] = (uint8_t)lab;
			for (unsigned k = 0; k < lab; k++)
				src[1 + k] = (uint8_t)(base + k * 13);
			src[1 + lab] = 0;
			memset(dst, 0xAA, sizeof(dst));
			ck_assert_uint_eq(dname_copy_lower(dst, src), lab + 2);
			ck_assert_uint_eq(dst[0], lab);
			for (unsigned k = 0; k < lab; k++) {
				uint8_t ch = src[1 + k];
				ck_assert_uint_eq(dst[1 + k], ch >= 'A' && ch <= 'Z' ? ch + 32 : ch);
			}
			ck_assert_uint_eq(dst[1 + lab], 0);
			ck_assert_uint_eq(dst[2 + lab], 0xAA);
		}
	}
}
END_TEST

START_TEST(sub_and_suffix)
{
	uint8_t n[256], z[256], o[256];
	dname_from_str("a.b.Example.test", n);
	dname_from_str("example.TEST", z);
	dname_from_str("xample.test", o);
	ck_assert_int_eq(dname_is_sub(n, z), 1);
	ck_assert_int_eq(dname_is_sub(z, z), 1);
	ck_assert_int_eq(dname_is_sub(z, n), 0);
	ck_assert_int_eq(dname_is_sub(o, z), 0);
	ck_assert_uint_eq(dname_labels(n), 4);
	ck_assert_ptr_eq(dname_suffix(n, 2), n + 4);
	uint8_t root[1] = { 0 };
	ck_assert_int_eq(dname_is_sub(n, root), 1);
	ck_assert_uint_eq(dname_labels(root), 0);
}
END_TEST

START_TEST(special_addresses)
{
	static const char *const bad[] = { "0.0.0.0", "0.1.2.3", "127.0.0.1",
		"224.0.0.1", "239.255.255.255", "255.255.255.255", "240.0.0.1", "::",
		"::1", "ff02::1", "::ffff:192.0.2.1", NULL };
	for (const char *const *a = bad; *a; a++)
		ck_assert_msg(net_addr_special(*a) != NULL, "%s passed", *a);
	static const char *const good[] = { "192.0.2.1", "1.0.0.0", "223.255.255.255",
		"2001:db8::1", "fe80::1", "::2", "not an address", NULL };
	for (const char *const *a = good; *a; a++)
		ck_assert_msg(net_addr_special(*a) == NULL, "%s refused", *a);
	ck_assert_ptr_nonnull(strstr(net_addr_special("::ffff:10.0.0.1"), "IPv4-mapped"));
}
END_TEST

/* num_parse(): the one reader of numbers with ranges and units. */
START_TEST(num_ranges)
{
	double v = -1;
	const num_range_t r = { 0, 10, 0, NULL, NULL };
	ck_assert_int_eq(num_parse("2.5", &r, &v, NULL), 0);
	ck_assert_double_eq(v, 2.5);
	ck_assert_int_eq(num_parse("0", &r, &v, NULL), 0);
	ck_assert_int_eq(num_parse("10", &r, &v, NULL), 0);
	ck_assert_int_eq(num_parse("10.01", &r, &v, NULL), NUM_ERANGE);
	ck_assert_int_eq(num_parse("-0.5", &r, &v, NULL), NUM_ERANGE);
	ck_assert_int_eq(num_parse("1e999", &r, &v, NULL), NUM_ERANGE);
	ck_assert_double_eq(v, 10);         /* left alone on an error */
	/* NaN is in no range, and infinities only in an open one. */
	ck_assert_int_eq(num_parse("nan", &r, &v, NULL), NUM_ERANGE);
	ck_assert_int_eq(num_parse("inf", &r, &v, NULL), NUM_ERANGE);
	static const char *const bad[] = { "", "x", "5x", "5 ", "--1", "1,5", NULL };
	for (const char *const *b = bad; *b; b++)
		ck_assert_msg(num_parse(*b, &r, &v, NULL) == NUM_ESYNTAX, "'%s' read", *b);
	ck_assert_int_eq(num_parse(NULL, &r, &v, NULL), NUM_ESYNTAX);
	const num_range_t open = { 0, 100, NUM_LO_OPEN | NUM_HI_OPEN, NULL, NULL };
	ck_assert_int_eq(num_parse("0", &open, &v, NULL), NUM_ERANGE);
	ck_assert_int_eq(num_parse("100", &open, &v, NULL), NUM_ERANGE);
	ck_assert_int_eq(num_parse("0.001", &open, &v, NULL), 0);
	ck_assert_int_eq(num_parse("99.999", &open, &v, NULL), 0);
}
END_TEST

START_TEST(num_whole)
{
	double v = 0;
	const num_range_t r = { 1, 4096, NUM_WHOLE, NULL, NULL };
	ck_assert_int_eq(num_parse("512", &r, &v, NULL), 0);
	ck_assert_double_eq(v, 512);
	static const char *const bad[] = { "2.5", "1e3", "0x10", "+5", " 5", "-5", NULL };
	for (const char *const *b = bad; *b; b++)
		ck_assert_msg(num_parse(*b, &r, &v, NULL) == NUM_ESYNTAX, "'%s' read", *b);
	ck_assert_int_eq(num_parse("0", &r, &v, NULL), NUM_ERANGE);
	ck_assert_int_eq(num_parse("99999999999999999999", &r, &v, NULL), NUM_ERANGE);
	/* A minus only where the range goes below 0. */
	const num_range_t neg = { -10, 10, NUM_WHOLE, NULL, NULL };
	ck_assert_int_eq(num_parse("-5", &neg, &v, NULL), 0);
	ck_assert_double_eq(v, -5);
	const num_range_t nonneg = { 0, 10, NUM_WHOLE, NULL, NULL };
	ck_assert_int_eq(num_parse("-0", &nonneg, &v, NULL), NUM_ESYNTAX);
}
END_TEST

START_TEST(num_units)
{
	static const char *const units[] = { "s", "m", "h", "d", NULL };
	static const double scale[] = { 1, 60, 3600, 86400 };
	const num_range_t r = { 60, 30 * 86400, NUM_WHOLE, units, scale };
	double v = 0;
	int u = 9;
	ck_assert_int_eq(num_parse("90", &r, &v, &u), 0);
	ck_assert_double_eq(v, 90);
	ck_assert_int_eq(u, -1);
	ck_assert_int_eq(num_parse("10m", &r, &v, &u), 0);
	ck_assert_double_eq(v, 600);
	ck_assert_int_eq(u, 1);
	ck_assert_int_eq(num_parse("2d", &r, &v, &u), 0);
	ck_assert_double_eq(v, 2 * 86400);
	/* The range applies to the scaled value. */
	ck_assert_int_eq(num_parse("59s", &r, &v, &u), NUM_ERANGE);
	ck_assert_int_eq(num_parse("1m", &r, &v, &u), 0);
	ck_assert_int_eq(num_parse("31d", &r, &v, &u), NUM_ERANGE);
	static const char *const bad[] = { "10w", "10 m", "10mm", "m", "1.5h", NULL };
	for (const char *const *b = bad; *b; b++)
		ck_assert_msg(num_parse(*b, &r, &v, &u) == NUM_ESYNTAX, "'%s' read", *b);
	static const char *const pct[] = { "%", NULL };
	const num_range_t p = { 0, 90, 0, pct, NULL };
	ck_assert_int_eq(num_parse("20%", &p, &v, &u), 0);
	ck_assert_double_eq(v, 20);
	ck_assert_int_eq(u, 0);
	ck_assert_int_eq(num_parse("20", &p, &v, &u), 0);
	ck_assert_int_eq(num_parse("95%", &p, &v, &u), NUM_ERANGE);
	ck_assert_int_eq(num_parse("20ms", &p, &v, &u), NUM_ESYNTAX);
}
END_TEST

static Suite *util_suite(void)
{
	Suite *s = suite_create("util");
	TCase *t = tcase_create("dname");
	tcase_add_test(t, unpack_plain_and_pointer);
	tcase_add_test(t, unpack_pointer_loops);
	tcase_add_test(t, unpack_forward_and_bad_pointers);
	tcase_add_test(t, unpack_overlong);
	tcase_add_test(t, str_round_trip);
	tcase_add_test(t, str_round_trip_random);
	tcase_add_test(t, hash_ignores_case);
	tcase_add_test(t, str_rejects);
	tcase_add_test(t, to_str_small_buffer);
	tcase_add_test(t, equal_ignores_case);
	tcase_add_test(t, sub_and_suffix);
	tcase_add_test(t, special_addresses);
	suite_add_tcase(s, t);
	t = tcase_create("num");
	tcase_add_test(t, num_ranges);
	tcase_add_test(t, num_whole);
	tcase_add_test(t, num_units);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(util_suite)
