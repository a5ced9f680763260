/* SPDX-License-Identifier: MIT */
/* A set-associative LRU cache of signatures. */
#include "dnssec/sigcache.h"
#include "common/hash.h"
#include "common/util.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
	uint64_t hash;                 /* 0: empty */
	uint64_t keyid;
	uint32_t used;                 /* the clock of its last use */
	uint16_t len;
	uint8_t siglen;
	uint8_t sig[64];
	uint8_t data[SIGCACHE_DATA_MAX];
} entry_t;

struct sigcache {
	entry_t *e;
	uint32_t mask;                 /* sets - 1 */
	uint32_t clock;
	unsigned live;
};

sigcache_t *sigcache_new(unsigned entries)
{
	unsigned n = SIGCACHE_WAYS;
	while (n < entries && n < (1u << 28))
		n <<= 1;
	sigcache_t *c = xcalloc(1, sizeof(*c));
	c->e = xcalloc(n, sizeof(*c->e));
	c->mask = n / SIGCACHE_WAYS - 1;
	return c;
}

void sigcache_free(sigcache_t *c)
{
	if (!c)
		return;
	free(c->e);
	free(c);
}

uint64_t sigcache_hash(const uint8_t *data, size_t len, uint64_t keyid)
{
	uint64_t h = hash_words(data, len, 0) ^ (keyid * 0x9E3779B97F4A7C15ull);
	h ^= h >> 29;
	return h ? h : 1;
}

size_t sigcache_get(sigcache_t *c, uint64_t h, uint64_t keyid,
                    const uint8_t *data, size_t len, uint8_t *sig)
{
	if (len > SIGCACHE_DATA_MAX)
		return 0;
	entry_t *set = &c->e[(h & c->mask) * SIGCACHE_WAYS];
	for (unsigned i = 0; i < SIGCACHE_WAYS; i++) {
		entry_t *x = &set[i];
		if (x->hash == h && x->keyid == keyid && x->len == len &&
		    memcmp(x->data, data, len) == 0) {
			x->used = ++c->clock;
			memcpy(sig, x->sig, x->siglen);
			return x->siglen;
		}
	}
	return 0;
}

int sigcache_put(sigcache_t *c, uint64_t h, uint64_t keyid,
                 const uint8_t *data, size_t len, const uint8_t *sig,
                 size_t siglen)
{
	if (len > SIGCACHE_DATA_MAX || siglen > 64)
		return 0;
	entry_t *set = &c->e[(h & c->mask) * SIGCACHE_WAYS];
	entry_t *victim = &set[0];
	for (unsigned i = 0; i < SIGCACHE_WAYS; i++) {
		if (!set[i].hash) {
			victim = &set[i];
			break;
		}
		/* Oldest by the clock; unsigned differences keep the order
		 * right across a wrap of the clock. */
		if ((uint32_t)(c->clock - set[i].used) >
		    (uint32_t)(c->clock - victim->used))
			victim = &set[i];
	}
	int evicted = victim->hash != 0;
	if (!evicted)
		c->live++;
	victim->hash = h;
	victim->keyid = keyid;
	victim->used = ++c->clock;
	victim->len = (uint16_t)len;
	victim->siglen = (uint8_t)siglen;
	memcpy(victim->sig, sig, siglen);
	memcpy(victim->data, data, len);
	return evicted;
}

unsigned sigcache_used(const sigcache_t *c)
{
	return c->live;
}

unsigned sigcache_capacity(const sigcache_t *c)
{
	return (c->mask + 1) * SIGCACHE_WAYS;
}
