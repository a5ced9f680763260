/* SPDX-License-Identifier: MIT */
/* DNS Cookies: the RFC 9018 server cookie against the examples of its
 * Appendix A, the lifetime of a cookie, the previous secret, the COOKIE
 * option in edns_parse(), the secret file, and that the query path's
 * cookie arithmetic allocates nothing. */
#include "unit.h"
#include "dns/cookie.h"
#include "dns/edns.h"

#include <arpa/inet.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* OpenSSL's allocations, counted from before its first one. */
static unsigned long n_alloc;
static void *count_malloc(size_t n, const char *f, int l)
{
	(void)f, (void)l;
	n_alloc++;
	return malloc(n);
}
static void *count_realloc(void *p, size_t n, const char *f, int l)
{
	(void)f, (void)l;
	n_alloc++;
	return realloc(p, n);
}
static void count_free(void *p, const char *f, int l)
{
	(void)f, (void)l;
	free(p);
}

static size_t unhex(const char *h, uint8_t *out)
{
	size_t n = strlen(h) / 2;
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		sscanf(h + 2 * i, "%2x", &v);
		out[i] = (uint8_t)v;
	}
	return n;
}

static void tohex(const uint8_t *in, size_t n, char *out)
{
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", in[i]);
}

static size_t ip_of(const char *text, uint8_t *ip)
{
	if (inet_pton(AF_INET, text, ip) == 1)
		return 4;
	ck_assert_int_eq(inet_pton(AF_INET6, text, ip), 1);
	return 16;
}

/* A thread's contexts keyed with @cur and, if not NULL, @prev. */
static cookie_mac_t *keyed(const char *cur, const char *prev)
{
	cookie_keys_t k = { .n = prev ? 2 : 1 };
	unhex(cur, k.key[0]);
	if (prev)
		unhex(prev, k.key[1]);
	cookie_mac_t *m = cookie_mac_new();
	cookie_mac_key(m, &k);
	return m;
}

/* The query's COOKIE option @query from @ip at @now: checks the kind and
 * the reply's option against @want (hex). */
static void expect(cookie_mac_t *m, const char *query, const char *ip,
                   uint32_t now, cookie_kind_t kind, const char *want)
{
	uint8_t opt[40], a[16], out[COOKIE_OUT_LEN];
	size_t len = unhex(query, opt), alen = ip_of(ip, a);
	ck_assert_int_eq(cookie_check(m, opt, len, a, alen, now, out), kind);
	char got[2 * COOKIE_OUT_LEN + 1];
	tohex(out, COOKIE_OUT_LEN, got);
	ck_assert_str_eq(got, want);
}

#define SECRET1 "e5e973e5a6b2a43f48e7dc849e37bfcf"

START_TEST(rfc9018_a1_new_cookie)
{
	cookie_mac_t *m = keyed(SECRET1, NULL);
	expect(m, "2464c4abcf10c957", "198.51.100.100", 1559731985,
	       COOKIE_CLIENT, "2464c4abcf10c957010000005cf79f111f8130c3eee29480");
	/* cookie_make() itself, twice: the key survives re-initialisation. */
	uint8_t c[8], ip[4], sc[16];
	unhex("2464c4abcf10c957", c);
	ip_of("198.51.100.100", ip);
	for (int i = 0; i < 2; i++) {
		cookie_make(m, 0, c, 1559731985, ip, 4, sc);
		char got[33];
		tohex(sc, 16, got);
		ck_assert_str_eq(got, "010000005cf79f111f8130c3eee29480");
	}
	cookie_mac_free(m);
}
END_TEST

START_TEST(rfc9018_a2_renewed_after_half_an_hour)
{
	/* 40 minutes later: valid, but due for a fresh one. */
	cookie_mac_t *m = keyed(SECRET1, NULL);
	expect(m, "2464c4abcf10c957010000005cf79f111f8130c3eee29480",
	       "198.51.100.100", 1559734385, COOKIE_VALID,
	       "2464c4abcf10c957010000005cf7a871d4a564a1442aca77");
	cookie_mac_free(m);
}
END_TEST

START_TEST(rfc9018_a3_other_client_reserved_bytes_hashed)
{
	cookie_mac_t *m = keyed(SECRET1, NULL);
	uint8_t opt[24], a[4], out[COOKIE_OUT_LEN];
	unhex("fc93fc62807ddb8601abcdef5cf78f71a314227b6679ebf5", opt);
	ip_of("203.0.113.203", a);
	/* Inside its hour, with the reserved bytes it came with: valid. */
	ck_assert_int_eq(cookie_check(m, opt, 24, a, 4, 0x5cf78f71 + 60, out),
	                 COOKIE_VALID);
	/* The example's own time is 1 h 52 min after: expired, a fresh one. */
	expect(m, "fc93fc62807ddb8601abcdef5cf78f71a314227b6679ebf5",
	       "203.0.113.203", 1559734700, COOKIE_INVALID,
	       "fc93fc62807ddb86010000005cf7a9acf73a7810aca2381e");
	cookie_mac_free(m);
}
END_TEST

START_TEST(rfc9018_a4_ipv6_previous_secret)
{
	/* Made with the old secret, which is still accepted; re-issued with
	 * the new one. */
	cookie_mac_t *m = keyed("445536bcd2513298075a5d379663c962",
	                        "dd3bdf9344b678b185a6f5cb60fca715");
	expect(m, "22681ab97d52c298010000005cf7c57926556bd0934c72f8",
	       "2001:db8:220:1:59de:d0f4:8769:82b8", 1559741961, COOKIE_VALID,
	       "22681ab97d52c298010000005cf7c609a6bb79d16625507a");
	cookie_mac_free(m);
	/* Without the old secret it is not ours. */
	m = keyed("445536bcd2513298075a5d379663c962", NULL);
	expect(m, "22681ab97d52c298010000005cf7c57926556bd0934c72f8",
	       "2001:db8:220:1:59de:d0f4:8769:82b8", 1559741961, COOKIE_INVALID,
	       "22681ab97d52c298010000005cf7c609a6bb79d16625507a");
	cookie_mac_free(m);
}
END_TEST

/* The A.1 cookie checked at @now: its kind, and whether it was kept. */
static cookie_kind_t at(cookie_mac_t *m, uint32_t now, int *kept)
{
	uint8_t opt[24], a[4], out[COOKIE_OUT_LEN];
	unhex("2464c4abcf10c957010000005cf79f111f8130c3eee29480", opt);
	ip_of("198.51.100.100", a);
	cookie_kind_t k = cookie_check(m, opt, 24, a, 4, now, out);
	*kept = memcmp(out, opt, 24) == 0;
	return k;
}

START_TEST(lifetime)
{
	cookie_mac_t *m = keyed(SECRET1, NULL);
	const uint32_t ts = 1559731985;
	int kept;
	ck_assert_int_eq(at(m, ts, &kept), COOKIE_VALID);
	ck_assert(kept);
	ck_assert_int_eq(at(m, ts + 1800, &kept), COOKIE_VALID);
	ck_assert(kept);                       /* half an hour: still kept */
	ck_assert_int_eq(at(m, ts + 1801, &kept), COOKIE_VALID);
	ck_assert(!kept);                      /* then re-issued */
	ck_assert_int_eq(at(m, ts + 3600, &kept), COOKIE_VALID);
	ck_assert_int_eq(at(m, ts + 3601, &kept), COOKIE_INVALID);
	ck_assert_int_eq(at(m, ts - 300, &kept), COOKIE_VALID);  /* skew */
	ck_assert_int_eq(at(m, ts - 301, &kept), COOKIE_INVALID);
	ck_assert_int_eq(at(m, ts + 0x80000000u, &kept), COOKIE_INVALID);
	cookie_mac_free(m);
}
END_TEST

START_TEST(previous_secret_reissues_at_once)
{
	/* A young cookie of the previous secret is valid but replaced, so
	 * that the previous secret can be dropped at the next rotation. */
	cookie_mac_t *m = keyed("445536bcd2513298075a5d379663c962", SECRET1);
	int kept;
	ck_assert_int_eq(at(m, 1559731985 + 10, &kept), COOKIE_VALID);
	ck_assert(!kept);
	cookie_mac_free(m);
}
END_TEST

START_TEST(not_ours)
{
	cookie_mac_t *m = keyed(SECRET1, NULL);
	uint8_t opt[40], a[4], out[COOKIE_OUT_LEN];
	ip_of("198.51.100.101", a);  /* another address */
	unhex("2464c4abcf10c957010000005cf79f111f8130c3eee29480", opt);
	ck_assert_int_eq(cookie_check(m, opt, 24, a, 4, 1559731985, out),
	                 COOKIE_INVALID);
	ip_of("198.51.100.100", a);
	opt[8] = 2;                  /* another version */
	ck_assert_int_eq(cookie_check(m, opt, 24, a, 4, 1559731985, out),
	                 COOKIE_INVALID);
	opt[8] = 1;
	opt[23] ^= 1;                /* another hash */
	ck_assert_int_eq(cookie_check(m, opt, 24, a, 4, 1559731985, out),
	                 COOKIE_INVALID);
	/* Another server's format: 8 or 32 bytes of server cookie. */
	ck_assert_int_eq(cookie_check(m, opt, 16, a, 4, 1559731985, out),
	                 COOKIE_INVALID);
	ck_assert_int_eq(cookie_check(m, opt, 40, a, 4, 1559731985, out),
	                 COOKIE_INVALID);
	ck_assert_int_eq(cookie_check(m, opt, 15, a, 4, 1559731985, out),
	                 COOKIE_MALFORMED);
	ck_assert_int_eq(cookie_check(m, opt, 41, a, 4, 1559731985, out),
	                 COOKIE_MALFORMED);
	cookie_mac_free(m);
}
END_TEST

START_TEST(no_allocation_per_cookie)
{
	cookie_mac_t *m = keyed(SECRET1, NULL);
	cookie_keys_t k = { .n = 2 };
	unhex(SECRET1, k.key[1]);
	unhex("445536bcd2513298075a5d379663c962", k.key[0]);
	unsigned long before = n_alloc;
	uint8_t opt[24], a[4], out[COOKIE_OUT_LEN];
	unhex("2464c4abcf10c957010000005cf79f111f8130c3eee29480", opt);
	ip_of("198.51.100.100", a);
	for (int i = 0; i < 1000; i++) {
		cookie_check(m, opt, 24, a, 4, 1559731985 + (uint32_t)i, out);
		cookie_check(m, opt, 8, a, 4, 1559731985, out);
	}
	cookie_mac_key(m, &k);   /* a rotation re-keys without allocating */
	ck_assert_int_eq(cookie_check(m, opt, 24, a, 4, 1559731985, out),
	                 COOKIE_VALID);
	ck_assert_uint_eq(n_alloc, before);
	cookie_mac_free(m);
}
END_TEST

/* An OPT RR's CLASS.. RDATA with one COOKIE option of @n bytes, then
 * (when @n2) a second one. */
static size_t opt_rr(uint8_t *p, size_t n, size_t n2)
{
	size_t rd = 4 + n + (n2 ? 4 + n2 : 0);
	uint8_t *o = p;
	*o++ = 0x04, *o++ = 0xd0;        /* payload 1232 */
	memset(o, 0, 4), o += 4;
	*o++ = (uint8_t)(rd >> 8), *o++ = (uint8_t)rd;
	*o++ = 0, *o++ = 10, *o++ = 0, *o++ = (uint8_t)n;
	for (size_t i = 0; i < n; i++)
		*o++ = (uint8_t)(0xa0 + i);
	if (n2) {
		*o++ = 0, *o++ = 10, *o++ = 0, *o++ = (uint8_t)n2;
		memset(o, 0x55, n2), o += n2;
	}
	return (size_t)(o - p);
}

START_TEST(edns_cookie_option)
{
	uint8_t p[128];
	edns_t e;
	static const struct { size_t n; int bad; } c[] = {
		{ 0, 1 }, { 7, 1 }, { 8, 0 }, { 9, 1 }, { 15, 1 }, { 16, 0 },
		{ 24, 0 }, { 40, 0 }, { 41, 1 },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		size_t len = opt_rr(p, c[i].n, 0);
		ck_assert_int_eq(edns_parse(p, len, &e), (int)len);
		ck_assert_int_eq(e.cookie_bad, c[i].bad);
		ck_assert_uint_eq(e.cookie_len, c[i].bad ? 0 : c[i].n);
	}
	/* The first option counts; a second is ignored. */
	size_t len = opt_rr(p, 8, 9);
	ck_assert_int_eq(edns_parse(p, len, &e), (int)len);
	ck_assert_uint_eq(e.cookie_len, 8);
	ck_assert_int_eq(e.cookie_bad, 0);
	ck_assert_int_eq(e.cookie[0], 0xa0);
	/* Written back: size and bytes. */
	uint8_t out[64];
	e.cookie_len = 24;
	ck_assert_uint_eq(edns_size(&e, 0), 11 + 4 + 24);
	ck_assert_uint_eq(edns_write(out, &e, 1232, 0, NULL, 0, 0), 11 + 4 + 24);
	ck_assert_int_eq(out[11], 0);
	ck_assert_int_eq(out[12], 10);
	ck_assert_int_eq(out[14], 24);
	ck_assert_int_eq(out[15], 0xa0);
}
END_TEST

START_TEST(secret_file)
{
	char path[] = "/tmp/check_cookie_XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	const char *text = "# rotated\n445536bcd2513298075a5d379663c962\n\n"
	                   SECRET1 "\n";
	ck_assert_int_eq(write(fd, text, strlen(text)), (int)strlen(text));
	close(fd);
	cookie_keys_t k;
	char err[256];
	ck_assert_int_eq(cookie_secret_read(path, &k, err, sizeof(err)), 0);
	ck_assert_uint_eq(k.n, 2);
	ck_assert_int_eq(k.key[0][0], 0x44);
	ck_assert_int_eq(k.key[1][15], 0xcf);
	chmod(path, 0640);
	ck_assert_int_eq(cookie_secret_read(path, &k, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "open to group or others"));
	ck_assert_uint_eq(k.n, 0);
	FILE *f = fopen(path, "w");
	fputs("a\n", f);
	fclose(f);
	chmod(path, 0600);
	ck_assert_int_eq(cookie_secret_read(path, &k, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, ":1: a secret is 32 hex digits"));
	f = fopen(path, "w");
	fprintf(f, "%s\n%s\n%s\n", SECRET1, SECRET1, SECRET1);
	fclose(f);
	ck_assert_int_eq(cookie_secret_read(path, &k, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, ":3: at most 2 secrets"));
	unlink(path);
}
END_TEST

/* Loads and publishes the cookies section @yaml (after "cookies:\n"). */
static void publish(const char *yaml)
{
	char path[] = "/tmp/check_cookie_conf_XXXXXX", err[512];
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	dprintf(fd, "zones: []\ncookies:\n%s", yaml);
	close(fd);
	conf_t *c = conf_load(path, err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	cookie_set_t *s;
	ck_assert_int_eq(cookie_load(c, &s, err, sizeof(err)), 0);
	cookie_publish(s);
	conf_free(c);
	unlink(path);
}

/* The reply's cookie to the A.1 client cookie, or to @cookie. */
static cookie_kind_t ask(cookie_mac_t *m, const uint8_t *cookie, size_t len,
                         uint32_t now, uint8_t *out)
{
	uint8_t a[4];
	ip_of("198.51.100.100", a);
	ck_assert(cookie_sync(m));
	return cookie_check(m, cookie, len, a, 4, now, out);
}

START_TEST(generated_secret_rotates)
{
	publish("  rotate: 3600\n");
	uint32_t t0 = (uint32_t)time(NULL);   /* at or after the secret's birth */
	cookie_mac_t *m = cookie_mac_new();
	uint8_t client[8], first[COOKIE_OUT_LEN], out[COOKIE_OUT_LEN];
	unhex("2464c4abcf10c957", client);
	ck_assert_int_eq(ask(m, client, 8, t0, first), COOKIE_CLIENT);
	ck_assert_int_eq(ask(m, first, 24, t0 + 10, out), COOKIE_VALID);
	ck_assert_mem_eq(out, first, 24);     /* kept */
	/* Not yet due, nor with a clock set back. */
	cookie_tick(t0 - 5);
	ck_assert_int_eq(ask(m, first, 24, t0 + 10, out), COOKIE_VALID);
	ck_assert_mem_eq(out, first, 24);
	/* A reload keeps the generated secret. */
	publish("  rotate: 3600\n");
	ck_assert_int_eq(ask(m, first, 24, t0 + 10, out), COOKIE_VALID);
	ck_assert_mem_eq(out, first, 24);
	/* Rotated: the old secret is still accepted, its cookie re-issued. */
	cookie_tick(t0 + 3600);
	ck_assert_int_eq(ask(m, first, 24, t0 + 10, out), COOKIE_VALID);
	ck_assert_mem_ne(out + 16, first + 16, 8);
	uint8_t second[COOKIE_OUT_LEN];
	memcpy(second, out, sizeof(second));
	/* Rotated again: the first secret is gone, the second accepted. */
	cookie_tick(t0 + 7199);
	ck_assert_int_eq(ask(m, first, 24, t0 + 10, out), COOKIE_VALID);
	cookie_tick(t0 + 7200);
	ck_assert_int_eq(ask(m, first, 24, t0 + 10, out), COOKIE_INVALID);
	ck_assert_int_eq(ask(m, second, 24, t0 + 10, out), COOKIE_VALID);
	/* Off by reload: nothing to do for the query path. */
	publish("  enable: off\n");
	ck_assert(!cookie_sync(m));
	cookie_mac_free(m);
}
END_TEST

/* Cluster mode: the secrets the cluster offers replace the generated
 * ones at the next tick, are never rotated here, survive a reload, and
 * give way to a secret file. */
START_TEST(cluster_secret_offered)
{
	publish("  rotate: 3600\n");
	cookie_shared(1);
	uint32_t t0 = (uint32_t)time(NULL);
	cookie_keys_t mine, k = { .n = 1 };
	ck_assert_int_eq(cookie_current(&mine), 0);
	ck_assert_uint_eq(mine.n, 1);
	ck_assert_uint_eq(cookie_shared_gen(), 0);
	cookie_mac_t *m = cookie_mac_new();
	uint8_t client[8], first[COOKIE_OUT_LEN], out[COOKIE_OUT_LEN];
	unhex("2464c4abcf10c957", client);
	/* Not yet taken: the generated secret makes the cookie. */
	unhex("e5e973e5a6b2a43f48e7dc849e37bfcf", k.key[0]);
	cookie_offer(&k, 5);
	ck_assert_int_eq(ask(m, client, 8, t0, first), COOKIE_CLIENT);
	cookie_tick(t0);
	ck_assert_uint_eq(cookie_shared_gen(), 5);
	ck_assert_int_eq(ask(m, first, 24, t0 + 10, out), COOKIE_INVALID);
	ck_assert_int_eq(ask(m, client, 8, t0, first), COOKIE_CLIENT);
	/* Never rotated here, kept by a reload. */
	cookie_tick(t0 + 7200);
	publish("  rotate: 3600\n");
	ck_assert_uint_eq(cookie_shared_gen(), 5);
	ck_assert_int_eq(ask(m, first, 24, t0 + 10, out), COOKIE_VALID);
	ck_assert_mem_eq(out, first, 24);
	/* The next generation: the previous secret still accepted. */
	memcpy(k.key[1], k.key[0], COOKIE_SECRET_LEN);
	unhex("445536bcd2513298075a5d379663c962", k.key[0]);
	k.n = 2;
	cookie_offer(&k, 6);
	cookie_tick(t0 + 7201);
	ck_assert_uint_eq(cookie_shared_gen(), 6);
	ck_assert_int_eq(ask(m, first, 24, t0 + 10, out), COOKIE_VALID);
	ck_assert_mem_ne(out + 16, first + 16, 8);
	/* A secret file wins: offers are not taken. */
	char path[] = "/tmp/check_cookie_secret_XXXXXX", yaml[128];
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	dprintf(fd, "0123456789abcdef0123456789abcdef\n");
	close(fd);
	snprintf(yaml, sizeof(yaml), "  secret-file: %s\n", path);
	publish(yaml);
	cookie_offer(&k, 7);
	cookie_tick(t0 + 7202);
	ck_assert_uint_eq(cookie_shared_gen(), 0);
	ck_assert_int_eq(cookie_current(&mine), 0);
	uint8_t want[COOKIE_SECRET_LEN];
	unhex("0123456789abcdef0123456789abcdef", want);
	ck_assert_mem_eq(mine.key[0], want, COOKIE_SECRET_LEN);
	unlink(path);
	cookie_mac_free(m);
}
END_TEST

__attribute__((constructor)) static void count_openssl(void)
{
	if (!CRYPTO_set_mem_functions(count_malloc, count_realloc, count_free))
		abort();
}

static Suite *cookie_suite(void)
{
	Suite *s = suite_create("cookie");
	TCase *t = tcase_create("rfc9018");
	tcase_add_test(t, rfc9018_a1_new_cookie);
	tcase_add_test(t, rfc9018_a2_renewed_after_half_an_hour);
	tcase_add_test(t, rfc9018_a3_other_client_reserved_bytes_hashed);
	tcase_add_test(t, rfc9018_a4_ipv6_previous_secret);
	tcase_add_test(t, lifetime);
	tcase_add_test(t, previous_secret_reissues_at_once);
	tcase_add_test(t, not_ours);
	tcase_add_test(t, no_allocation_per_cookie);
	tcase_add_test(t, edns_cookie_option);
	tcase_add_test(t, secret_file);
	tcase_add_test(t, generated_secret_rotates);
	tcase_add_test(t, cluster_secret_offered);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(cookie_suite)
