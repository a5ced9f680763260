/* SPDX-License-Identifier: MIT */
/* Per-source connection counts, admission and pressure of the TCP front
 * end (S1-12). */
#include "dns/tcp_guard.h"
#include "common/hash.h"
#include "common/util.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/* One source with open connections; count 0 marks a free slot. */
typedef struct slot {
	tcp_src_t src;
	uint32_t count;
} slot_t;

struct tcp_guard {
	unsigned max, per_source, pressure_at;
	unsigned v4_prefix, v6_prefix;
	unsigned open;
	unsigned bits;            /* the table has 1 << bits slots */
	uint64_t seed;            /* keys the hash: sources a client picks
	                             cannot be aimed at one run of slots */
	uint64_t stat[TCP_STAT_MAX]; /* relaxed atomics */
	slot_t *slot;
};

tcp_guard_t *tcp_guard_new(unsigned max_clients, unsigned per_source,
                           unsigned v4_prefix, unsigned v6_prefix)
{
	tcp_guard_t *g = xcalloc(1, sizeof(*g));
	g->max = max_clients ? max_clients : 1;
	g->per_source = per_source;
	g->pressure_at = tcp_guard_pressure_at(g->max);
	g->v4_prefix = v4_prefix;
	g->v6_prefix = v6_prefix;
	/* At most one slot per open connection: twice as many keeps the
	 * linear probes short and the table never full. */
	g->bits = 4;
	while ((1u << g->bits) < 2u * g->max && g->bits < 31)
		g->bits++;
	if (getrandom(&g->seed, sizeof(g->seed), GRND_NONBLOCK) != sizeof(g->seed))
		g->seed = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL);
	g->slot = xcalloc((size_t)1 << g->bits, sizeof(*g->slot));
	return g;
}

void tcp_guard_free(tcp_guard_t *g)
{
	if (!g)
		return;
	free(g->slot);
	free(g);
}

/* Keeps the first @bits bits of the 16 bytes at @a. */
static void mask(uint8_t *a, unsigned bits)
{
	for (unsigned i = 0; i < 16; i++) {
		if (bits >= 8) {
			bits -= 8;
			continue;
		}
		a[i] &= (uint8_t)(0xff << (8 - bits));
		bits = 0;
	}
}

void tcp_guard_source(const tcp_guard_t *g, const struct sockaddr *sa,
                      tcp_src_t *out)
{
	memset(out, 0, sizeof(*out));
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)sa;
		out->a[10] = out->a[11] = 0xff;
		memcpy(out->a + 12, &s4->sin_addr, 4);
		mask(out->a, 96 + g->v4_prefix);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)sa;
		memcpy(out->a, &s6->sin6_addr, 16);
		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
			mask(out->a, 96 + g->v4_prefix);
		else
			mask(out->a, g->v6_prefix);
	}
}

/* The home slot of @src: the high bits of the seeded hash (the high
 * bits of a product depend on every bit of its operands). */
static size_t home(const tcp_guard_t *g, const tcp_src_t *src)
{
	uint64_t h = (hash_words(src->a, 16, 0) ^ g->seed) * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> (64 - g->bits));
}

/* The slot holding @src, or the free one where it would go. */
static size_t find(const tcp_guard_t *g, const tcp_src_t *src)
{
	size_t m = ((size_t)1 << g->bits) - 1, i = home(g, src);
	while (g->slot[i].count && memcmp(&g->slot[i].src, src, sizeof(*src)))
		i = (i + 1) & m;
	return i;
}

unsigned tcp_guard_of(const tcp_guard_t *g, const tcp_src_t *src)
{
	return g->slot[find(g, src)].count;
}

unsigned tcp_guard_open(const tcp_guard_t *g)
{
	return g->open;
}

int tcp_guard_pressed(const tcp_guard_t *g)
{
	return g->open >= g->pressure_at;
}

tcp_verdict_t tcp_guard_verdict(const tcp_guard_t *g, const tcp_src_t *src,
                                unsigned victim, unsigned quiet)
{
	if (g->per_source && tcp_guard_of(g, src) >= g->per_source)
		return TCP_REFUSE_SOURCE;
	int full = g->open >= g->max;
	if (full && quiet > 1 && quiet > victim)
		return TCP_ADMIT_EVICT_QUIET;
	if (g->open >= g->pressure_at && victim > 1)
		return TCP_ADMIT_EVICT;
	if (full)
		return victim ? TCP_ADMIT_EVICT : TCP_REFUSE_FULL;
	return TCP_ADMIT;
}

void tcp_guard_add(tcp_guard_t *g, const tcp_src_t *src)
{
	size_t i = find(g, src);
	if (!g->slot[i].count)
		g->slot[i].src = *src;
	g->slot[i].count++;
	g->open++;
}

void tcp_guard_del(tcp_guard_t *g, const tcp_src_t *src)
{
	size_t m = ((size_t)1 << g->bits) - 1, i = find(g, src);
	if (!g->slot[i].count)
		return;
	g->open--;
	if (--g->slot[i].count)
		return;
	/* The slot is free: move back later entries of the run whose home
	 * does not lie cyclically in (i, j], so that no probe stops early
	 * (deletion without tombstones in linear probing). */
	for (size_t j = (i + 1) & m; g->slot[j].count; j = (j + 1) & m) {
		size_t h = home(g, &g->slot[j].src);
		int stays = i <= j ? (i < h && h <= j) : (i < h || h <= j);
		if (stays)
			continue;
		g->slot[i] = g->slot[j];
		g->slot[j].count = 0;
		i = j;
	}
}

size_t tcp_guard_pick(const unsigned *counts, size_t n)
{
	size_t best = 0;
	for (size_t i = 1; i < n; i++)
		if (counts[i] > counts[best])
			best = i;
	return best;
}

unsigned tcp_guard_idle_ms(const tcp_guard_t *g, unsigned idle_ms)
{
	return tcp_guard_pressed(g) ? tcp_guard_shrunk_ms(idle_ms) : idle_ms;
}

unsigned tcp_guard_share(unsigned per_source, unsigned workers)
{
	if (!per_source || !workers)
		return per_source;
	return (per_source + workers - 1) / workers;
}

void tcp_guard_count(tcp_guard_t *g, int i)
{
	__atomic_add_fetch(&g->stat[i], 1, __ATOMIC_RELAXED);
}

uint64_t tcp_guard_stat(const tcp_guard_t *g, int i)
{
	return __atomic_load_n(&g->stat[i], __ATOMIC_RELAXED);
}
