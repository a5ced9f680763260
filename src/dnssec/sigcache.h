/* SPDX-License-Identifier: MIT */
/* The signature cache of one query thread: the RRSIG signature of the
 * exact bytes a signature covers (RRSIG head with its key tag and
 * validity window, and the canonical RRset), with the key's id beside
 * them, so that a hit is only ever the signature of those bytes by that
 * key: the entry keeps the bytes and compares them, a hash only finds
 * the set.  A GSLB answer's records also have an entry under what the
 * signed data is made of (dnssec_rrsig_set(), dnssec.c): its bytes
 * cannot be taken for signed data's.
 *
 * Bounded and allocated once: SIGCACHE_WAYS entries per set, the least
 * recently used one of a set replaced, so memory never grows and the
 * cache is never cleared all at once (a new window or key simply misses
 * and its entries push the old ones out).  A lookup and an insertion
 * allocate nothing.  One thread only: each query thread has its own. */
#ifndef GSLB_DNSSEC_SIGCACHE_H
#define GSLB_DNSSEC_SIGCACHE_H

#include <stddef.h>
#include <stdint.h>

/* The most bytes of signed data an entry keeps: a GSLB answer of four
 * addresses under a 40-byte name is about 200, a compact NSEC about
 * 100 plus twice the name.  Larger data is signed every time. */
#define SIGCACHE_DATA_MAX 432
/* Entries per set: the LRU choice is made among these. */
#define SIGCACHE_WAYS 4
/* The default size (dnssec.signature-cache), per query thread: about
 * 2 MB each (520 bytes an entry). */
#define SIGCACHE_DEFAULT 4096

typedef struct sigcache sigcache_t;

/** A cache of at least @entries entries (rounded up to a power of two,
 * SIGCACHE_WAYS at least).  Aborts when memory is short (start-up). */
sigcache_t *sigcache_new(unsigned entries);
void sigcache_free(sigcache_t *c);

/** The hash sigcache_get() and sigcache_put() take for @len bytes at
 * @data signed by key @keyid.  Never 0. */
uint64_t sigcache_hash(const uint8_t *data, size_t len, uint64_t keyid);

/** Copies the cached signature of @data (@len bytes, hash @h) by key
 * @keyid into @sig and returns its length, or returns 0. */
size_t sigcache_get(sigcache_t *c, uint64_t h, uint64_t keyid,
                    const uint8_t *data, size_t len, uint8_t *sig);

/** Keeps signature @sig (@siglen bytes, 64 at most) of @data by @keyid;
 * data longer than SIGCACHE_DATA_MAX is not kept.  Returns 1 when it
 * replaced a live entry (an eviction), else 0. */
int sigcache_put(sigcache_t *c, uint64_t h, uint64_t keyid,
                 const uint8_t *data, size_t len, const uint8_t *sig,
                 size_t siglen);

/** The live entries, and the capacity. */
unsigned sigcache_used(const sigcache_t *c);
unsigned sigcache_capacity(const sigcache_t *c);

#endif
