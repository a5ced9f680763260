/* SPDX-License-Identifier: MIT */
/* FNV-1a hashing, the one hash of small keys in gslbd: zone names,
 * node ids in plans, sticky client networks, probe start offsets.
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

#endif
