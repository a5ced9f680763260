/* SPDX-License-Identifier: MIT */
/* Answer plans: the materialised answer set of one weight row (service,
 * region, ISP), as the store keeps it.
 *
 * A plan holds every candidate node with its effective weight, whether it
 * is usable and why (the reason is decided here, once, by the rules of
 * plan.c, and only read by everything else), its addresses or CNAME
 * target.  The store encodes plans with
 * plan_encode() in the same write transaction as any change they depend
 * on (txn.c); workers and `gslbctl explain` decode them with
 * plan_decode() and pick with gslb/policy.h.  Decoding allocates nothing.
 *
 * Binary layout (all integers big-endian):
 *   u8 version (3) | u8 node count | u16 release (see below) |
 *   u16 spill (see below)
 *   per node: u32 weight | u32 id hash | u8 flags | u8 n4 | u8 n6 |
 *             u8 cname length | u32 short-TTL-until (unix time) |
 *             u8 reason (PLAN_WHY_*) |
 *             n4 x 4 bytes | n6 x 16 bytes | cname (wire) |
 *             u8 id length | id
 * Version 2 is the same without the spill; version 1 also lacks the
 * reason byte.  A store written before
 * reasons existed keeps version 1 plans until a change rebuilds them, so
 * they still decode, with the reason PLAN_WHY_NONE.
 *
 * A gray release (S4-10) marks one node PLAN_RELEASE and puts
 * PLAN_HAS_RELEASE plus the share of the row's clients it may answer, 0
 * to PLAN_RELEASE_ALL basis points, in the header's u16 (0 in plans
 * without a release, and in version 1 plans, where it was reserved), so
 * that decoding a plan without a release tests one bit.
 *
 * The spill (S1-6, S4-3) is the share of the row's clients, 0 to
 * PLAN_RELEASE_ALL basis points, that the row's nodes cannot carry
 * within their capacity less the headroom: those clients are answered
 * from the next level of the row chain (gslb.c).  Only a static row
 * whose weight row holds a measured demand has one (plan_capacity()). */
#ifndef GSLB_PLAN_H
#define GSLB_PLAN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define PLAN_VERSION 3        /* the version plan_encode() writes */
#define PLAN_MAX_NODES 64     /* nodes per weight row */
#define PLAN_MAX_ADDRS 8      /* addresses per node and family */

enum {
	PLAN_USABLE = 1,          /* may be handed out */
	PLAN_CNAME = 2,           /* answers with a CNAME (multi-CDN) */
	PLAN_RELEASE = 4,         /* the node of a gray release (S4-10) */
};

#define PLAN_RELEASE_ALL 10000u   /* a release share of every client, bp */
#define PLAN_HAS_RELEASE 0x8000u  /* header bit: a node is PLAN_RELEASE */


/* Why a node is or is not usable, as plan_encode() decided.  The low
 * nibble is the decision; the high bits say what scaled a usable node's
 * weight.  The values are stored: never renumber them. */
enum {
	PLAN_WHY_NONE = 0,        /* not recorded (a version 1 plan) */
	PLAN_WHY_USABLE = 1,      /* usable: health and admin "auto" agree */
	PLAN_WHY_ADMIN_UP = 2,    /* usable: admin "up" forces it in */
	PLAN_WHY_ADMIN_DOWN = 3,  /* not usable: admin "down" */
	PLAN_WHY_ADMIN_DRAIN = 4, /* not usable: admin "drain" (S0-11) */
	PLAN_WHY_UNHEALTHY = 5,   /* not usable: the health verdict */
	PLAN_WHY_STANDBY = 6,     /* not usable: standby, not promoted (S0-9) */
	PLAN_WHY_WEIGHT0 = 7,     /* not usable: its effective weight is 0 */
	PLAN_WHY_COUNT,
	PLAN_WHY_MASK = 0x0f,     /* the decision */
	PLAN_WHY_DERATED = 0x10,  /* weight scaled by the health verdict */
	PLAN_WHY_CUTOVER = 0x20,  /* weight scaled by a cutover (S0-3) */
	PLAN_WHY_PREWARM = 0x40,  /* a standby's pre-warm share (S0-4) */
	PLAN_WHY_CAPACITY = 0x80, /* held at its capacity ceiling (S1-6) */
};

typedef struct plan_node {
	uint32_t weight;
	uint32_t idhash;
	uint8_t flags;
	uint8_t why;              /* PLAN_WHY_* */
	uint8_t n4, n6, cname_len;
	uint32_t short_until;
	const uint8_t *a4;        /* n4 x 4 bytes */
	const uint8_t *a6;        /* n6 x 16 bytes */
	const uint8_t *cname;     /* wire name */
	const char *id;           /* not NUL-terminated */
	uint8_t id_len;
} plan_node_t;

typedef struct plan {
	uint8_t n;
	uint8_t release_slot;     /* 1 + index of the PLAN_RELEASE node, 0:
	                             none (so a zeroed plan has none) */
	uint16_t release_bp;      /* its share of the row's clients, bp */
	uint16_t spill_bp;        /* the row's clients sent to the next
	                             level of the chain, bp (S1-6) */
	plan_node_t node[PLAN_MAX_NODES];
} plan_t;

/** Decodes @len bytes at @data into @p (pointers into @data).
 * Returns 0, or -1 if the plan is malformed: a length that does not
 * add up, an unknown version or reason, or a reason that contradicts the
 * usable flag. */
int plan_decode(const uint8_t *data, size_t len, plan_t *p);

/** S1-6, S4-3: a static row's weights held within its nodes'
 * capacities.  @w[0..@n) are the weights after health and cutover
 * scaling, @usable which nodes may be handed out, @cap their capacities
 * (0: none, no ceiling), @demand what the whole row carries in the unit
 * of the capacities (0: unknown, nothing is held) and @headroom the
 * percent of a capacity kept free.  Each usable node's share of the
 * row is its weight over the usable weights; a node above
 * cap * (100 - headroom) % / demand is held there and the excess goes
 * to the usable nodes still below their ceiling, by weight; what no
 * node can take is the spill.  When a node was held, @w is rewritten
 * in basis points of the part of the row answered, @capped[i] set for
 * the held nodes, and the spill returned in basis points; otherwise
 * nothing changes and 0 is returned.  Pure. */
uint32_t plan_capacity(unsigned n, uint32_t *w, const uint8_t *usable,
                       const double *cap, double demand, double headroom,
                       uint8_t *capped);

/** Encodes the plan of weight row @row ({"weights": {id: w}, and
 * "release": {"node": id, "bp": share} for a row under a gray release,
 * and "capacity": {"demand": D, "headroom": H} for a static row whose
 * demand was measured (plan_capacity())}) given the
 * node objects (looked up with @node_of) into a new buffer (*@out, free()
 * it), in the current version, each node with its usability reason.  @shadow: the service runs in shadow mode (S2-9), health and
 * cutover decisions are left out.  Returns 0 or -1 with the reason in
 * @err. */
int plan_encode(json_t *row, json_t *(*node_of)(const char *id, void *arg),
                void *arg, int shadow, uint8_t **out, size_t *outlen,
                char *err, size_t errlen);

/** The weights the plan of weight row @row uses (a borrowed reference):
 * when its service steers dynamically (@dynamic) and the row holds the
 * steering engine's shares ("steer": {"weights": {id: bp}}) for exactly
 * the nodes of the operator's "weights", those shares (S3-3); otherwise
 * the operator's weights, as a static service always has them. */
json_t *plan_row_weights(json_t *row, int dynamic);

/** Whether gray release @rel (a service's "release" object) concerns
 * weight row (@region, @isp) with weights @weights: the release is not
 * completed, its node is in the row and its "region" and "isp" (absent:
 * any) match the row's.  Then *@node (borrowed from @rel) and *@bp, the
 * share of the row's clients it answers now, are set.  Returns 1 or 0. */
int plan_release_row(json_t *rel, const char *region, const char *isp,
                     json_t *weights, const char **node, uint32_t *bp);

/** plan_release_row() for the weight row of key @key
 * ("service|region|isp").  Returns 1 or 0 (0 also for a key that is no
 * row's). */
int plan_release_key(json_t *rel, const char *key, json_t *weights,
                     const char **node, uint32_t *bp);

/** 32-bit hash of a node id, as stored in plans. */
uint32_t plan_id_hash(const char *id, size_t len);

#endif
