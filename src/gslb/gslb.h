/* SPDX-License-Identifier: MIT */
/* GSLB names: for a service name, the client's (region, ISP) from the geo
 * module, the first matching weight row through the fallback chain
 * (region, ISP) -> (region, *) -> (*, ISP) -> (*, *), the weighted pick,
 * and the TTL and ECS scope of the answer.  Used by query.c for every
 * answer; `gslbctl explain` runs query.c with a trail (gslb_trail_t) and
 * prints what resolution recorded there, so the two always agree.
 *
 * No allocation: results point into the worker's LMDB read transaction,
 * valid until wdb_reader_release(). */
#ifndef GSLB_GSLB_H
#define GSLB_GSLB_H

#include <stdint.h>
#include <sys/socket.h>

#include "gslb/geo.h"
#include "gslb/policy.h"
#include "store/weightdb.h"

/* The network a sticky client is known by: its /24 (IPv4) or /56 (IPv6),
 * the usual granularity of ECS that resolvers send (RFC 7871 §11.1). */
#define GSLB_STICKY_V4 24
#define GSLB_STICKY_V6 56

typedef struct gslb_client {
	struct sockaddr_storage addr;  /* the address that locates the client */
	uint8_t from_ecs;              /* taken from the ECS option */
	uint8_t mapped;                /* an IPv4-mapped IPv6 address: located
	                                  as IPv4, but its scope and sticky
	                                  network count in IPv6 bits */
} gslb_client_t;

typedef enum {
	GSLB_ROW_NONE = 0, GSLB_ROW_REGION_ISP, GSLB_ROW_REGION, GSLB_ROW_ISP,
	GSLB_ROW_DEFAULT
} gslb_row_t;

typedef struct gslb_result {
	svc_rec_t svc;
	geo_result_t geo;
	gslb_row_t row;                /* which row answered */
	plan_t plan;                   /* the row's plan */
	plan_t spare;                  /* scratch for the fallback walk */
	uint8_t picked[POLICY_MAX_ANSWERS];
	uint8_t npicked;
	uint8_t failed_open;           /* no usable node: answered as if healthy */
	uint32_t ttl;
	uint8_t scope;                 /* ECS scope prefix length */
	uint8_t short_ttl;             /* the short TTL was chosen */
	uint8_t from_fallback;         /* all-down fallback: an earlier row
	                                  of the chain had no usable node;
	                                  or the client was spilled */
	uint8_t spilled;               /* S1-6: the client's row could not
	                                  carry it (its plan's spill): a
	                                  later level answered */
	uint64_t client_key;           /* the sticky key, when the service is
	                                  sticky or the row has a release */
} gslb_result_t;

/* What one level of the row chain gave (gslb_trail_t.level). */
typedef enum {
	GSLB_LEVEL_SKIPPED = 0,        /* not looked at: an earlier one answered */
	GSLB_LEVEL_NO_ROW,             /* the service has no such row */
	GSLB_LEVEL_NO_USABLE,          /* all-down fallback: no usable node,
	                                  so the next level was tried */
	GSLB_LEVEL_ANSWERED,           /* this row answered */
	GSLB_LEVEL_SPILLED,            /* this row is over its capacity and
	                                  spilled the client to the next
	                                  level with a usable node (S1-6) */
} gslb_level_t;

/* The decision trail of one resolution, for explain: filled only when
 * the caller passes one (workers pass NULL and pay one branch).  The
 * result itself (location, plan with each node's reason, pick, TTL,
 * scope) stays in the gslb_result_t; the trail adds what the result does
 * not keep: who was located and how the chain was walked. */
typedef struct gslb_trail {
	uint8_t resolved;              /* a service was resolved */
	gslb_client_t client;          /* the address that located the client */
	gslb_row_t chain[4];           /* the levels tried, in order */
	uint8_t level[4];              /* gslb_level_t of each */
	uint8_t nchain;
	uint8_t spill_level;           /* the level whose row spills, when */
	uint16_t spill_bp;             /* ... its plan has a spill (S1-6) */
} gslb_trail_t;

/** The row chain for a client located at (@region, @isp), either of them
 * "*" when unknown: the distinct rows (region, ISP), (region, *),
 * (*, ISP), (*, *) in that order, leaving out the ones that cannot match
 * (a level naming an unknown field is the same row as a later level, or
 * the same key as an earlier one) and, when @svc_flags carries
 * SVC_ROW_KNOWN, the levels the service has no row of.  A level is
 * judged by the key it really looks up: for a client of unknown ISP the
 * first level is the (region, *) row.  Writes at most 4 levels to @out
 * and returns how many.  Pure: no I/O, no allocation. */
unsigned gslb_chain(const char *region, const char *isp, int svc_flags,
                    gslb_row_t out[4]);

/** Chooses the address that locates the client: the ECS address
 * @ecs_addr (family @ecs_family as in RFC 7871: 1 IPv4, 2 IPv6; 0 when
 * the query had no valid option or ECS is off) when its source prefix
 * @ecs_source is not 0 and the address is routable, else the resolver's
 * @src. */
void gslb_client_from(gslb_client_t *c, const struct sockaddr *src,
                      unsigned ecs_family, const uint8_t *ecs_addr,
                      unsigned ecs_source);

/* A worker's memo of resolutions (gslb.c, "The memo"): the row that
 * answers a service for a (region, ISP) and its decoded plan, for the
 * store's current snapshot.  Allocated once per thread. */
typedef struct gslb_memo gslb_memo_t;
gslb_memo_t *gslb_memo_new(void);
void gslb_memo_free(gslb_memo_t *m);
/** How many resolutions the memo answered. */
uint64_t gslb_memo_hits(const gslb_memo_t *m);

/** Resolves service @name (lowercase presentation form, no final dot,
 * @len bytes) for a query of @qtype (A and AAAA pick only among nodes
 * that have such addresses).  Returns GSLB_ENOENT when @name is not a
 * service, 0 when @out holds the answer (npicked may be 0: NODATA), or
 * another error.  @memo: the worker's memo, or NULL.  @trail: NULL,
 * or where to record the walk (and then the location's network text
 * too); untouched unless @name is a service. */
int gslb_resolve(wdb_reader_t *r, gslb_memo_t *memo, const geo_t *geo,
                 const char *name, size_t len, uint16_t qtype,
                 const gslb_client_t *c, uint32_t now, uint64_t *rng,
                 gslb_result_t *out, gslb_trail_t *trail);

/** The service lowercase wire name @wire (@wlen bytes) is: 0 with its
 * key text (presentation form, no final dot) in *@key and *@klen and its
 * record in @svc; GSLB_ENOENT when it is none; or another error.  The
 * key text is written into @buf (@bufsize bytes, DNAME_MAXLEN * 4 + 2
 * suffice) unless @memo has it: *@key then points into the memo, valid
 * until the next call.  @memo may be NULL. */
int gslb_service(wdb_reader_t *r, gslb_memo_t *memo, const uint8_t *wire,
                 size_t wlen, char *buf, size_t bufsize, const char **key,
                 size_t *klen, svc_rec_t *svc);

/** gslb_resolve() for a service whose record gslb_service() has put in
 * out->svc already. */
int gslb_resolve_svc(wdb_reader_t *r, gslb_memo_t *memo, const geo_t *geo,
                     const char *name, size_t len, uint16_t qtype,
                     const gslb_client_t *c, uint32_t now, uint64_t *rng,
                     gslb_result_t *out, gslb_trail_t *trail);

/** The row names for explain ("region,isp" etc.). */
const char *gslb_row_name(gslb_row_t row);

#endif
