/* SPDX-License-Identifier: MIT */
/* The weighted pick among a plan's nodes (store/plan.h): a weighted
 * random draw, or weighted rendezvous hashing for sticky services.
 * Picking allocates nothing; any number of threads may pick at once. */
#ifndef GSLB_POLICY_H
#define GSLB_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "store/plan.h"

#define POLICY_MAX_ANSWERS 8  /* nodes per answer */

/** Counts the usable nodes of @p with a weight above 0. */
unsigned policy_usable(const plan_t *p);

/** The gray release bucket of client key @key (the sticky key) for the
 * release node of id hash @idhash: 0 to PLAN_RELEASE_ALL - 1, the same
 * for the same client and node always.  A client is in the release
 * while its bucket is below the plan's release share (S4-10). */
uint32_t policy_release_bucket(uint64_t key, uint32_t idhash);

/** The next number of the per-thread generator @rng that the weighted
 * draw uses. */
uint64_t policy_random(uint64_t *rng);

/** Picks up to @want distinct nodes of @p, by weight, into @idx.
 * @all: consider nodes that are not usable too (fail open).  @sticky:
 * rendezvous hashing on @key (the client network), so that a client keeps
 * its node while it stays usable and removing a node moves only its own
 * clients (S4-8); otherwise a weighted random draw from @rng.  @need
 * (POLICY_NEED_*) leaves out address nodes without that family; CNAME
 * nodes always qualify.  A plan with a gray release answers its release
 * node first to the clients of @key inside the release (when it is a
 * candidate) and never to the others (S4-10).
 * Returns the number picked. */
enum { POLICY_NEED_V4 = 1, POLICY_NEED_V6 = 2 };
unsigned policy_pick(const plan_t *p, unsigned want, int all, int sticky,
                     uint64_t key, unsigned need, uint64_t *rng, uint8_t *idx);

#endif
