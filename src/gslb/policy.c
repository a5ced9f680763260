/* SPDX-License-Identifier: MIT */
/* The weighted pick: random by weight, or sticky by rendezvous hashing. */
#include "gslb/policy.h"

#include <math.h>

unsigned policy_usable(const plan_t *p)
{
	unsigned c = 0;
	for (unsigned i = 0; i < p->n; i++)
		c += (p->node[i].flags & PLAN_USABLE) && p->node[i].weight > 0;
	return c;
}

/* xorshift64*: a fast per-thread generator; quality is ample for
 * spreading answers by weight. */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t x = *s ? *s : 0x9E3779B97F4A7C15ull;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545F4914F6CDD1Dull;
}

uint64_t policy_random(uint64_t *rng)
{
	return rng_next(rng);
}

/* Any fixed odd constant: it only keeps release buckets apart from the
 * sticky pick's hashes of the same key. */
#define RELEASE_SALT 0x7F4A7C159E3779B9ull

/* splitmix64 finaliser: mixes a client key with a node hash. */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

uint32_t policy_release_bucket(uint64_t key, uint32_t idhash)
{
	/* Mixed with the release node's hash, so that each release draws
	 * its own clients rather than the same first percent every time. */
	return (uint32_t)(mix64(key ^ RELEASE_SALT ^ ((uint64_t)idhash << 32 | idhash)) %
	                  PLAN_RELEASE_ALL);
}

/* Whether node @n may answer: it has a weight, is usable (or @all) and
 * can answer the type @need asks for (CNAME nodes always can).  Inlined:
 * the pick tests every node of a plan with it. */
static inline __attribute__((always_inline)) int
candidate(const plan_node_t *n, int all, unsigned need)
{
	if (n->weight == 0 || (!all && !(n->flags & PLAN_USABLE)))
		return 0;
	return (n->flags & PLAN_CNAME) ||
	       !(((need & POLICY_NEED_V4) && !n->n4) || ((need & POLICY_NEED_V6) && !n->n6));
}

/* The pick of policy_pick() into @idx[@first..), leaving out node @skip
 * (-1: none).  Inlined twice, so that the pick of a plan without a
 * release, with the constants -1 and 0, costs what it did before
 * releases existed. */
static inline __attribute__((always_inline)) unsigned
pick(const plan_t *p, unsigned want, int all, int sticky, uint64_t key,
     unsigned need, uint64_t *rng, uint8_t *idx, int skip, unsigned first)
{
	uint8_t cand[PLAN_MAX_NODES];
	double score[PLAN_MAX_NODES];
	uint64_t total = 0;
	unsigned nc = 0;
	for (unsigned i = 0; i < p->n; i++) {
		const plan_node_t *n = &p->node[i];
		if ((int)i == skip || !candidate(n, all, need))
			continue;
		cand[nc] = (uint8_t)i;
		total += n->weight;
		if (sticky) {
			/* Weighted rendezvous hashing: score = -w / ln(u), u in
			 * (0,1) from the hash of (client, node); the highest
			 * scores win, and each node's share follows its weight. */
			uint64_t h = mix64(key ^ ((uint64_t)n->idhash << 32 | n->idhash));
			double u = ((double)(h >> 11) + 0.5) / 9007199254740992.0;
			score[nc] = -(double)n->weight / log(u);
		}
		nc++;
	}
	if (want > POLICY_MAX_ANSWERS)
		want = POLICY_MAX_ANSWERS;
	if (want > nc + first)
		want = nc + first;
	for (unsigned k = first; k < want; k++) {
		unsigned best = 0;
		if (sticky) {
			for (unsigned j = 1; j < nc; j++)
				if (score[j] > score[best])
					best = j;
		} else {
			uint64_t r = rng_next(rng) % total;
			for (best = 0; best + 1 < nc; best++) {
				uint32_t w = p->node[cand[best]].weight;
				if (r < w)
					break;
				r -= w;
			}
			total -= p->node[cand[best]].weight;
		}
		idx[k] = cand[best];
		/* Remove the pick: distinct nodes per answer. */
		cand[best] = cand[nc - 1];
		score[best] = score[nc - 1];
		nc--;
	}
	return want;
}

unsigned policy_pick(const plan_t *p, unsigned want, int all, int sticky,
                     uint64_t key, unsigned need, uint64_t *rng, uint8_t *idx)
{
	if (!p->release_slot)
		return pick(p, want, all, sticky, key, need, rng, idx, -1, 0);
	/* S4-10: a gray release.  The clients whose bucket is below the
	 * share get its node first; nobody else ever sees it.  Widening the
	 * share keeps everyone already in. */
	unsigned skip = p->release_slot - 1u, first = 0;
	const plan_node_t *rn = &p->node[skip];
	if (want && policy_release_bucket(key, rn->idhash) < p->release_bp &&
	    candidate(rn, all, need))
		idx[first++] = (uint8_t)skip;
	return pick(p, want, all, sticky, key, need, rng, idx, (int)skip, first);
}
