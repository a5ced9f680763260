/* SPDX-License-Identifier: MIT */
/* Online signing's pure parts and its signer: canonical RRset order and
 * wire form (RFC 4034 §6), RRSIG fields, NSEC type bitmaps with NXNAME
 * (RFC 9824), the validity windows, the signature cache's LRU eviction,
 * signatures that verify, from the cache without allocating, and the
 * cache key of a GSLB answer's records, which hits only the same RRset. */
#include "common/util.h"
#include "dnssec/dnssec.h"
#include "dnssec/key.h"
#include "dnssec/rrsig.h"
#include "dnssec/sigcache.h"
#include "unit.h"

#include <openssl/crypto.h>
#include <string.h>

/* OpenSSL's allocations, counted from the first one on (the constructor
 * runs before main, so before OpenSSL allocates anything). */
static unsigned long g_allocs;
static void *count_malloc(size_t n, const char *f, int l)
{
	(void)f, (void)l;
	__atomic_add_fetch(&g_allocs, 1, __ATOMIC_RELAXED);
	return malloc(n);
}
static void *count_realloc(void *p, size_t n, const char *f, int l)
{
	(void)f, (void)l;
	__atomic_add_fetch(&g_allocs, 1, __ATOMIC_RELAXED);
	return realloc(p, n);
}
static void count_free(void *p, const char *f, int l)
{
	(void)f, (void)l;
	free(p);
}
__attribute__((constructor)) static void count_init(void)
{
	CRYPTO_set_mem_functions(count_malloc, count_realloc, count_free);
}

/* Appends one record (16-bit length, rdata) to an RRset buffer. */
static size_t rr_add(uint8_t *set, size_t at, const void *rd, uint16_t len)
{
	wr16(set + at, len);
	memcpy(set + at + 2, rd, len);
	return at + 2 + len;
}

static const uint8_t owner[] = "\x03www\x04gslb\x04test";

START_TEST(canon_sorted_and_deduplicated)
{
	uint8_t set[64], out[256], scratch[256];
	size_t n = 0;
	n = rr_add(set, n, "\xc0\x00\x02\x03", 4);
	n = rr_add(set, n, "\xc0\x00\x02\x01", 4);
	n = rr_add(set, n, "\xc0\x00\x02\x03", 4);   /* a duplicate */
	n = rr_add(set, n, "\xc0\x00\x02\x02", 4);
	size_t len = dnssec_canon_rrset(out, sizeof(out), 0, owner, 1, 300, 4, set,
	                                scratch, sizeof(scratch));
	size_t ol = sizeof(owner);                     /* with the root label */
	ck_assert_uint_eq(len, 3 * (ol + 10 + 4));
	for (int i = 0; i < 3; i++) {
		const uint8_t *r = out + i * (ol + 10 + 4);
		ck_assert_int_eq(memcmp(r, owner, ol), 0);
		ck_assert_uint_eq(rd16(r + ol), 1);        /* A */
		ck_assert_uint_eq(rd16(r + ol + 2), 1);    /* IN */
		ck_assert_uint_eq(rd32(r + ol + 4), 300);
		ck_assert_uint_eq(rd16(r + ol + 8), 4);
		ck_assert_uint_eq(r[ol + 13], i + 1);      /* .1, .2, .3 */
	}
}
END_TEST

START_TEST(canon_shorter_prefix_first_and_names_lowered)
{
	uint8_t set[64], out[256], scratch[256];
	size_t n = 0;
	/* TXT: "abc" before "ab" in the zone; "ab" sorts first (RFC 4034
	 * §6.3, the shorter of two when one is the other's prefix); TXT
	 * rdata keeps its case. */
	n = rr_add(set, n, "\x03" "aBc", 4);
	n = rr_add(set, n, "\x02" "aB", 3);
	size_t len = dnssec_canon_rrset(out, sizeof(out), 0, owner, 16, 60, 2, set,
	                                scratch, sizeof(scratch));
	size_t ol = sizeof(owner);
	ck_assert_uint_eq(len, 2 * (ol + 10) + 3 + 4);
	ck_assert_int_eq(memcmp(out + ol + 10, "\x02" "aB", 3), 0);
	ck_assert_int_eq(memcmp(out + 2 * (ol + 10) + 3, "\x03" "aBc", 4), 0);
	/* CNAME: the target is lowercased (RFC 4034 §6.2, item 3). */
	n = rr_add(set, 0, "\x03WWW\x07" "Example\x00", 13);
	len = dnssec_canon_rrset(out, sizeof(out), 0, owner, 5, 60, 1, set,
	                         scratch, sizeof(scratch));
	ck_assert_int_eq(memcmp(out + ol + 10, "\x03www\x07" "example\x00", 13), 0);
	/* Too small a buffer: 0, never a partial form. */
	ck_assert_uint_eq(dnssec_canon_rrset(out, ol + 5, 0, owner, 5, 60, 1, set,
	                                     scratch, sizeof(scratch)), 0);
}
END_TEST

START_TEST(rrsig_head_fields)
{
	uint8_t out[300];
	size_t n = dnssec_rrsig_head(out, 28, 13, 3, 30, 2000000000u, 1000000000u,
	                             4242, (const uint8_t *)"\x04GSLB\x04test");
	ck_assert_uint_eq(n, 18 + 11);
	ck_assert_uint_eq(rd16(out), 28);                 /* type covered */
	ck_assert_uint_eq(out[2], 13);                    /* algorithm */
	ck_assert_uint_eq(out[3], 3);                     /* labels */
	ck_assert_uint_eq(rd32(out + 4), 30);             /* original TTL */
	ck_assert_uint_eq(rd32(out + 8), 2000000000u);    /* expiration */
	ck_assert_uint_eq(rd32(out + 12), 1000000000u);   /* inception */
	ck_assert_uint_eq(rd16(out + 16), 4242);          /* key tag */
	ck_assert_int_eq(memcmp(out + 18, "\x04gslb\x04test", 11), 0);
	ck_assert_uint_eq(dnssec_labels(owner), 3);
	ck_assert_uint_eq(dnssec_labels((const uint8_t *)"\x01*\x04gslb\x04test"), 2);
	ck_assert_uint_eq(dnssec_labels((const uint8_t *)""), 0);
}
END_TEST

START_TEST(nsec_bitmaps)
{
	uint8_t b[80];
	/* A, RRSIG, NSEC: window 0, 6 bytes (RFC 4034 §4.3's example). */
	uint16_t t1[] = { 47, 1, 46 };
	size_t n = dnssec_nsec_bitmap(b, t1, 3);
	ck_assert_uint_eq(n, 8);
	ck_assert_int_eq(memcmp(b, "\x00\x06\x40\x00\x00\x00\x00\x03", 8), 0);
	/* RFC 9824 NXDOMAIN: RRSIG, NSEC, NXNAME (128, byte 16). */
	uint16_t t2[] = { 46, 47, 128 };
	n = dnssec_nsec_bitmap(b, t2, 3);
	ck_assert_uint_eq(n, 2 + 17);
	ck_assert_uint_eq(b[1], 17);
	ck_assert_uint_eq(b[2 + 5], 0x03);                /* 46, 47 */
	ck_assert_uint_eq(b[2 + 16], 0x80);               /* 128 */
	/* CAA (257) opens window 1; duplicates count once. */
	uint16_t t3[] = { 257, 1, 1 };
	n = dnssec_nsec_bitmap(b, t3, 3);
	ck_assert_uint_eq(n, 3 + 3);
	ck_assert_int_eq(memcmp(b, "\x00\x01\x40\x01\x01\x40", 6), 0);
}
END_TEST

START_TEST(windows)
{
	uint32_t s, i, e, s2, i2, e2;
	uint32_t t0 = 2000u * DNSSEC_WINDOW;
	dnssec_window(t0, &s, &i, &e);
	ck_assert_uint_eq(s, t0);
	ck_assert_uint_eq(i, t0 - DNSSEC_WINDOW);
	ck_assert_uint_eq(e, t0 + 2 * DNSSEC_WINDOW);
	/* The whole week has one window; the next second starts the next. */
	dnssec_window(t0 + DNSSEC_WINDOW - 1, &s2, &i2, &e2);
	ck_assert_uint_eq(s2, s);
	ck_assert_uint_eq(i2, i);
	ck_assert_uint_eq(e2, e);
	dnssec_window(t0 + DNSSEC_WINDOW, &s2, &i2, &e2);
	ck_assert_uint_eq(s2, t0 + DNSSEC_WINDOW);
	/* Overlap: the next window's signatures were valid from this one's
	 * start, and this one's stay valid through the next. */
	ck_assert_uint_eq(i2, s);
	ck_assert_uint_gt(e, s2 + DNSSEC_WINDOW - 1);
}
END_TEST

START_TEST(cache_hits_compare_bytes_and_evict_lru)
{
	sigcache_t *c = sigcache_new(1);        /* one set of SIGCACHE_WAYS */
	ck_assert_uint_eq(sigcache_capacity(c), SIGCACHE_WAYS);
	uint8_t sig[64], got[64];
	uint8_t data[SIGCACHE_WAYS + 2][16];
	for (int i = 0; i < SIGCACHE_WAYS + 2; i++) {
		memset(data[i], 'a' + i, sizeof(data[i]));
	}
	/* Fill the set; the same hash for every entry: only the bytes tell
	 * them apart. */
	for (int i = 0; i < SIGCACHE_WAYS; i++) {
		memset(sig, i, sizeof(sig));
		ck_assert_int_eq(sigcache_put(c, 7, 1, data[i], 16, sig, 64), 0);
	}
	ck_assert_uint_eq(sigcache_used(c), SIGCACHE_WAYS);
	ck_assert_uint_eq(sigcache_get(c, 7, 1, data[2], 16, got), 64);
	ck_assert_uint_eq(got[0], 2);
	ck_assert_uint_eq(sigcache_get(c, 7, 2, data[2], 16, got), 0); /* key */
	ck_assert_uint_eq(sigcache_get(c, 7, 1, data[SIGCACHE_WAYS], 16, got), 0);
	/* Entry 0 used again: entry 1 is now the least recently used. */
	ck_assert_uint_eq(sigcache_get(c, 7, 1, data[0], 16, got), 64);
	memset(sig, 9, sizeof(sig));
	ck_assert_int_eq(sigcache_put(c, 7, 1, data[SIGCACHE_WAYS], 16, sig, 64), 1);
	ck_assert_uint_eq(sigcache_get(c, 7, 1, data[1], 16, got), 0);
	ck_assert_uint_eq(sigcache_get(c, 7, 1, data[0], 16, got), 64);
	ck_assert_uint_eq(sigcache_get(c, 7, 1, data[SIGCACHE_WAYS], 16, got), 64);
	ck_assert_uint_eq(got[0], 9);
	ck_assert_uint_eq(sigcache_used(c), SIGCACHE_WAYS);
	/* Data beyond SIGCACHE_DATA_MAX is not kept. */
	static uint8_t big[SIGCACHE_DATA_MAX + 1];
	ck_assert_int_eq(sigcache_put(c, 8, 1, big, sizeof(big), sig, 64), 0);
	ck_assert_uint_eq(sigcache_get(c, 8, 1, big, sizeof(big), got), 0);
	sigcache_free(c);
}
END_TEST

/* Signs an A RRset with a new key of @alg through dnssec_rrsig() twice
 * and checks the fields, the signature and the cache. */
static void sign_and_verify(int alg)
{
	char err[256];
	dnssec_key_t *k = dnssec_key_generate(alg, DNSSEC_FLAGS_CSK, err, sizeof(err));
	ck_assert_msg(k != NULL, "%s", err);
	dnssec_zone_t z = { .nkeys = 1 };
	z.apex_len = dname_copy_lower(z.apex, (const uint8_t *)"\x04gslb\x04test");
	z.keys[0] = k;
	dnssec_thread_t *t = dnssec_thread_new(64);
	uint8_t set[32], rd[DNSSEC_RRSIG_MAX], rd2[DNSSEC_RRSIG_MAX];
	size_t n = rr_add(set, 0, "\xc0\x00\x02\x50", 4);
	n = rr_add(set, n, "\xc0\x00\x02\x10", 4);
	uint32_t now = 2000u * DNSSEC_WINDOW + 1234;
	unsigned what;
	unsigned long a0 = g_allocs;
	size_t len = dnssec_rrsig(t, &z, 0, now, owner, 1, 30, 2, set, rd, &what);
	unsigned long miss_allocs = g_allocs - a0;
	ck_assert_uint_eq(what, DNSSEC_MADE);
	ck_assert_uint_eq(len, 18 + 11 + 64);
	ck_assert_uint_eq(rd[2], alg);
	ck_assert_uint_eq(rd16(rd + 16), dnssec_key_tag(k));
	/* The signed data: the head, then the RRset in canonical form. */
	uint8_t data[512], scratch[64];
	memcpy(data, rd, 18 + 11);
	size_t dl = dnssec_canon_rrset(data, sizeof(data), 18 + 11, owner, 1, 30, 2,
	                               set, scratch, sizeof(scratch));
	ck_assert(dnssec_key_verify(k, data, dl, rd + 29, 64));
	/* A flipped bit of the data must not verify (the check checks). */
	data[dl - 1] ^= 1;
	ck_assert(!dnssec_key_verify(k, data, dl, rd + 29, 64));
	/* The same RRset again: from the cache, with no allocation at all. */
	a0 = g_allocs;
	size_t len2 = dnssec_rrsig(t, &z, 0, now + 60, owner, 1, 30, 2, set, rd2, &what);
	ck_assert_uint_eq(g_allocs - a0, 0);
	ck_assert_uint_eq(what, DNSSEC_HIT);
	ck_assert_uint_eq(len2, len);
	ck_assert_int_eq(memcmp(rd, rd2, len), 0);
	/* Another RRset: a signature made once the library is warm. */
	uint8_t set3[16];
	rr_add(set3, 0, "\xc0\x00\x02\x51", 4);
	a0 = g_allocs;
	ck_assert_uint_gt(dnssec_rrsig(t, &z, 0, now, owner, 1, 30, 1, set3, rd2,
	                               &what), 0);
	ck_assert_uint_eq(what, DNSSEC_MADE);
	fprintf(stderr, "check_dnssec: %s: allocations in OpenSSL of a signature "
	        "made: %lu the first, %lu later; from the cache: 0\n",
	        dnssec_alg_name(alg), miss_allocs, g_allocs - a0);
	/* Many signatures through the thread's reused context: each
	 * verifies (ECDSA: r and s of 31 or 33 bytes in DER among them). */
	dnssec_md_t *md = dnssec_md_new();
	for (unsigned i = 0; i < 1000; i++) {
		uint8_t msg[8], sg[DNSSEC_SIG_MAX];
		memcpy(msg, &i, sizeof(i));
		memcpy(msg + 4, &alg, sizeof(i));
		ck_assert_uint_eq(dnssec_key_sign(k, md, msg, sizeof(msg), sg), 64);
		ck_assert_msg(dnssec_key_verify(k, msg, sizeof(msg), sg, 64),
		              "signature %u does not verify", i);
	}
	dnssec_md_free(md);
	/* Ed25519 is deterministic: a second signer makes the same bytes. */
	if (alg == DNSSEC_ALG_ED25519) {
		dnssec_thread_t *t2 = dnssec_thread_new(0);
		dnssec_rrsig(t2, &z, 0, now, owner, 1, 30, 2, set, rd2, &what);
		ck_assert_uint_eq(what, DNSSEC_MADE);
		ck_assert_int_eq(memcmp(rd, rd2, len), 0);
		dnssec_thread_free(t2);
	}
	/* DS digest: 32 bytes, and the DNSKEY base64 round trip. */
	size_t kl;
	const uint8_t *dk = dnssec_key_dnskey(k, &kl);
	ck_assert_uint_eq(kl, alg == DNSSEC_ALG_ED25519 ? 36 : 68);
	char b64[100];
	uint8_t back[80];
	dnssec_b64_encode(dk + 4, kl - 4, b64);
	ck_assert_int_eq(dnssec_b64_decode(b64, back, sizeof(back)), (int)(kl - 4));
	ck_assert_int_eq(memcmp(back, dk + 4, kl - 4), 0);
	dnssec_thread_free(t);
	dnssec_key_free(k);
}

/* One thread's signer with keys of both algorithms in turn, more keys
 * than it keeps contexts for, and a key freed and another made in its
 * place: every signature verifies with its own key. */
START_TEST(sign_mixed_keys)
{
	char err[256];
	dnssec_key_t *k[12];
	for (int i = 0; i < 12; i++) {
		k[i] = dnssec_key_generate(i % 2 ? DNSSEC_ALG_ED25519 : DNSSEC_ALG_ECDSAP256,
		                           DNSSEC_FLAGS_CSK, err, sizeof(err));
		ck_assert_msg(k[i] != NULL, "%s", err);
	}
	dnssec_md_t *md = dnssec_md_new();
	uint8_t msg[16] = "mixed", sg[DNSSEC_SIG_MAX];
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 12; i++) {
			msg[8] = (uint8_t)i;
			ck_assert_uint_eq(dnssec_key_sign(k[i], md, msg, sizeof(msg), sg), 64);
			ck_assert_msg(dnssec_key_verify(k[i], msg, sizeof(msg), sg, 64),
			              "round %d key %d", round, i);
		}
		/* A new key, perhaps at the freed one's address. */
		dnssec_key_free(k[round]);
		k[round] = dnssec_key_generate(round % 2 ? DNSSEC_ALG_ED25519 :
		                               DNSSEC_ALG_ECDSAP256, DNSSEC_FLAGS_CSK, err,
		                               sizeof(err));
		ck_assert_ptr_nonnull(k[round]);
	}
	dnssec_md_free(md);
	for (int i = 0; i < 12; i++)
		dnssec_key_free(k[i]);
}
END_TEST

/* Whether @rd (@len bytes of RRSIG rdata, signer @apex of @apex_len
 * bytes) is @k's signature of the RRset @owner/@type/@ttl of @count
 * records at @set: the signed data made again from the RRSIG's head and
 * the canonical RRset, as a validator does. */
static int signs(const dnssec_key_t *k, const uint8_t *rd, size_t len,
                 size_t apex_len, uint16_t type, uint32_t ttl, uint16_t count,
                 const uint8_t *set)
{
	uint8_t data[512], scratch[256];
	size_t head = 18 + apex_len;
	if (len != head + 64 || rd16(rd) != type || rd32(rd + 4) != ttl)
		return 0;
	memcpy(data, rd, head);
	size_t dl = dnssec_canon_rrset(data, sizeof(data), head, owner, type, ttl,
	                               count, set, scratch, sizeof(scratch));
	return dl && dnssec_key_verify(k, data, dl, rd + head, 64);
}

/* Signs @count records (@n bytes at @set) through dnssec_rrsig_set(),
 * checks that what comes back is @k's signature of exactly them, and
 * returns what the signer did. */
static unsigned sign_set(dnssec_thread_t *t, const dnssec_zone_t *z,
                         const dnssec_key_t *k, uint32_t now, uint32_t ttl,
                         uint16_t count, const uint8_t *set, size_t n,
                         uint8_t *rd)
{
	unsigned what = 0;
	size_t len = dnssec_rrsig_set(t, z, 0, now, owner, 1, ttl, count, set, n,
	                              rd, &what);
	ck_assert_msg(signs(k, rd, len, z->apex_len, 1, ttl, count, set),
	              "not the signature of these %u records", (unsigned)count);
	return what;
}

/* The key by the records as written (a GSLB answer's address set): the
 * same set hits; another set (another region's nodes, a node drained),
 * another TTL, window, signer or key misses, and what it gets is the
 * signature of its own records; the same records in another order find
 * the content-keyed entry. */
START_TEST(pick_key_hits_only_the_same_rrset)
{
	char err[256];
	dnssec_key_t *k = dnssec_key_generate(DNSSEC_ALG_ECDSAP256,
	                                      DNSSEC_FLAGS_CSK, err, sizeof(err));
	dnssec_key_t *k2 = dnssec_key_generate(DNSSEC_ALG_ECDSAP256,
	                                       DNSSEC_FLAGS_CSK, err, sizeof(err));
	ck_assert_ptr_nonnull(k);
	ck_assert_ptr_nonnull(k2);
	dnssec_zone_t z = { .nkeys = 1 };
	z.apex_len = dname_copy_lower(z.apex, (const uint8_t *)"\x04gslb\x04test");
	z.keys[0] = k;
	dnssec_thread_t *t = dnssec_thread_new(64);
	uint8_t set[64], back[64], two[64], other[64];
	uint8_t rd[DNSSEC_RRSIG_MAX], rd2[DNSSEC_RRSIG_MAX];
	size_t n = rr_add(set, 0, "\xc0\x00\x02\x19", 4);
	n = rr_add(set, n, "\xc0\x00\x02\x1a", 4);
	n = rr_add(set, n, "\xc0\x00\x02\x1b", 4);
	size_t nb = rr_add(back, 0, "\xc0\x00\x02\x1b", 4);
	nb = rr_add(back, nb, "\xc0\x00\x02\x1a", 4);
	nb = rr_add(back, nb, "\xc0\x00\x02\x19", 4);
	size_t n2 = rr_add(two, 0, "\xc0\x00\x02\x19", 4);   /* .27 drained */
	n2 = rr_add(two, n2, "\xc0\x00\x02\x1a", 4);
	size_t no = rr_add(other, 0, "\xc0\x00\x02\x19", 4); /* another region */
	no = rr_add(other, no, "\xc0\x00\x02\x1a", 4);
	no = rr_add(other, no, "\xc0\x00\x02\x1c", 4);
	uint32_t now = 2000u * DNSSEC_WINDOW + 1234;

	ck_assert_uint_eq(sign_set(t, &z, k, now, 30, 3, set, n, rd), DNSSEC_MADE);
	/* The same set, later in the window: the pick's entry, no
	 * allocation, the same signature. */
	unsigned what;
	unsigned long a0 = g_allocs;
	size_t len = dnssec_rrsig_set(t, &z, 0, now + 600, owner, 1, 30, 3, set, n,
	                              rd2, &what);
	ck_assert_uint_eq(g_allocs - a0, 0);
	ck_assert_uint_eq(what, DNSSEC_HIT);
	ck_assert_uint_eq(len, 18 + z.apex_len + 64);
	ck_assert_int_eq(memcmp(rd, rd2, 18 + z.apex_len + 64), 0);
	/* The records in another order (a shuffled answer): the same RRset,
	 * the same entry; the set has two, its signed data's and its own. */
	ck_assert_uint_eq(dnssec_thread_cached(t), 2);
	ck_assert_uint_eq(sign_set(t, &z, k, now, 30, 3, back, nb, rd2), DNSSEC_HIT);
	ck_assert_int_eq(memcmp(rd, rd2, 18 + z.apex_len + 64), 0);
	ck_assert_uint_eq(dnssec_thread_cached(t), 2);
	/* A changed set: a node drained, another region's nodes. */
	ck_assert_uint_eq(sign_set(t, &z, k, now, 30, 2, two, n2, rd2), DNSSEC_MADE);
	ck_assert_uint_eq(sign_set(t, &z, k, now, 30, 3, other, no, rd2), DNSSEC_MADE);
	/* A changed TTL (the short TTL of a failover, a weight row's). */
	ck_assert_uint_eq(sign_set(t, &z, k, now, 20, 3, set, n, rd2), DNSSEC_MADE);
	/* The next window. */
	ck_assert_uint_eq(sign_set(t, &z, k, now + DNSSEC_WINDOW, 30, 3, set, n, rd2),
	                  DNSSEC_MADE);
	ck_assert_uint_ne(rd32(rd2 + 8), rd32(rd + 8));
	/* Another key in the same place (a rollover, a reload). */
	z.keys[0] = k2;
	ck_assert_uint_eq(sign_set(t, &z, k2, now, 30, 3, set, n, rd2), DNSSEC_MADE);
	ck_assert(!signs(k, rd2, 18 + z.apex_len + 64, z.apex_len, 1, 30, 3, set));
	ck_assert_uint_eq(sign_set(t, &z, k2, now, 30, 3, set, n, rd2), DNSSEC_HIT);
	/* Another signer with the same key. */
	z.keys[0] = k;
	dnssec_zone_t z2 = z;
	z2.apex_len = dname_copy_lower(z2.apex, (const uint8_t *)"\x04test");
	ck_assert_uint_eq(sign_set(t, &z2, k, now, 30, 3, set, n, rd2), DNSSEC_MADE);
	/* And the first set, unchanged through all of it, still hits. */
	ck_assert_uint_eq(sign_set(t, &z, k, now, 30, 3, set, n, rd2), DNSSEC_HIT);
	ck_assert_int_eq(memcmp(rd, rd2, 18 + z.apex_len + 64), 0);
	/* The content-keyed path still finds what the pick path made. */
	dnssec_rrsig(t, &z, 0, now, owner, 1, 30, 2, two, rd2, &what);
	ck_assert_uint_eq(what, DNSSEC_HIT);
	dnssec_thread_free(t);
	/* No cache: signed every time, correctly. */
	t = dnssec_thread_new(0);
	ck_assert_uint_eq(sign_set(t, &z, k, now, 30, 3, set, n, rd2), DNSSEC_MADE);
	ck_assert_uint_eq(sign_set(t, &z, k, now, 30, 3, set, n, rd2), DNSSEC_MADE);
	dnssec_thread_free(t);
	dnssec_key_free(k);
	dnssec_key_free(k2);
}
END_TEST

START_TEST(sign_ecdsa) { sign_and_verify(DNSSEC_ALG_ECDSAP256); }
END_TEST
START_TEST(sign_ed25519) { sign_and_verify(DNSSEC_ALG_ED25519); }
END_TEST

START_TEST(algorithm_names)
{
	ck_assert_int_eq(dnssec_alg_parse("ecdsap256"), 13);
	ck_assert_int_eq(dnssec_alg_parse("ed25519"), 15);
	ck_assert_int_eq(dnssec_alg_parse("15"), 15);
	ck_assert_int_eq(dnssec_alg_parse("rsasha256"), 0);
	ck_assert_str_eq(dnssec_alg_mnemonic(13), "ECDSAP256SHA256");
}
END_TEST

static Suite *dnssec_suite(void)
{
	Suite *s = suite_create("dnssec");
	TCase *t = tcase_create("wire");
	tcase_add_test(t, canon_sorted_and_deduplicated);
	tcase_add_test(t, canon_shorter_prefix_first_and_names_lowered);
	tcase_add_test(t, rrsig_head_fields);
	tcase_add_test(t, nsec_bitmaps);
	tcase_add_test(t, windows);
	suite_add_tcase(s, t);
	TCase *c = tcase_create("cache");
	tcase_add_test(c, cache_hits_compare_bytes_and_evict_lru);
	suite_add_tcase(s, c);
	TCase *k = tcase_create("sign");
	/* A thousand signatures and verifications a test: a fifth of a
	 * second on a quiet machine, many times that on a busy one.  The
	 * limit is a guard against a hang, not a speed target. */
	tcase_set_timeout(k, 30);
	tcase_add_test(k, sign_ecdsa);
	tcase_add_test(k, sign_ed25519);
	tcase_add_test(k, sign_mixed_keys);
	tcase_add_test(k, pick_key_hits_only_the_same_rrset);
	tcase_add_test(k, algorithm_names);
	suite_add_tcase(s, k);
	return s;
}

UNIT_MAIN(dnssec_suite)
