/* SPDX-License-Identifier: MIT */
/* Hashes of small keys.  FNV-1a serves the ones that are stored or
 * must stay stable (node ids in plans, sticky client networks, probe
 * start offsets); hash_words() the in-memory tables of the query path.
 *
 * FNV-1a is short, needs no table, and spreads short keys well enough for
 * these uses; none of them needs resistance to chosen inputs (the query
 * path hashes names to find zones, and a bucket collision costs a string
 * compare, not a wrong answer).  The state is threaded through the step
 * functions so that callers can hash pieces (a lowercased label at a
 * time) without building the key first. */
#ifndef GSLB_HASH_H
#define GSLB_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define HASH_FNV32_INIT 2166136261u               /* FNV offset basis */
#define HASH_FNV64_INIT 1469598103934665603ull

/** One FNV-1a step of 32 bits: folds byte @b into @h. */
static inline uint32_t hash_fnv32_step(uint32_t h, uint8_t b)
{
	return (h ^ b) * 16777619u;                   /* FNV 32-bit prime */
}

/** One FNV-1a step of 64 bits. */
static inline uint64_t hash_fnv64_step(uint64_t h, uint8_t b)
{
	return (h ^ b) * 1099511628211ull;            /* FNV 64-bit prime */
}

/** FNV-1a, 32 bits, of @len bytes at @p. */
static inline uint32_t hash_fnv32(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint32_t h = HASH_FNV32_INIT;
	for (size_t i = 0; i < len; i++)
		h = hash_fnv32_step(h, b[i]);
	return h;
}

/** FNV-1a, 64 bits, of @len bytes at @p. */
static inline uint64_t hash_fnv64(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint64_t h = HASH_FNV64_INIT;
	for (size_t i = 0; i < len; i++)
		h = hash_fnv64_step(h, b[i]);
	return h;
}

/** ASCII lowercase of the eight bytes of @w at once: 'A'..'Z' get 0x20,
 * every other byte (a DNS label length too, being < 'A') is kept. */
static inline uint64_t hash_lower8(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ull, high = ones * 0x80;
	uint64_t t = w & ~high;
	uint64_t a = t + ones * (0x80 - 'A');
	uint64_t z = t + ones * (0x80 - 'Z' - 1);
	uint64_t m = (a ^ z) & ~w & high;
	return w | (m >> 2);
}

/** A hash of @len bytes at @p, eight at a time (lowercased first when
 * @lower): for tables that live in memory only (zone and node tables,
 * the store readers' caches), where FNV's byte at a time was a tenth of
 * a query's instructions.  Never stored, so free to change. */
static inline uint64_t hash_words(const void *p, size_t len, int lower)
{
	const uint8_t *b = p;
	uint64_t h = 0x9E3779B97F4A7C15ull ^ len, w;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		memcpy(&w, b + i, 8);
		h = (h ^ (lower ? hash_lower8(w) : w)) * 0xBF58476D1CE4E5B9ull;
		h ^= h >> 29;
	}
	if (i < len) {
		w = 0;
		memcpy(&w, b + i, len - i);
		h = (h ^ (lower ? hash_lower8(w) : w)) * 0xBF58476D1CE4E5B9ull;
	}
	h = (h ^ (h >> 31)) * 0x94D049BB133111EBull;
	return h ^ (h >> 32);
}

#endif
