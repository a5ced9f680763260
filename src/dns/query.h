/* SPDX-License-Identifier: MIT */
/* The only way to answer: a query in wire format in, a response in wire
 * format out.  No sockets, no libuv, no allocation, no locks, so network
 * code, tests and fuzzers all call the same function.
 *
 * Thread safety: a qctx_t belongs to one thread; the snapshot it reads is
 * immutable.  The caller keeps the snapshot alive (RCU-online) while
 * query_process() runs. */
#ifndef GSLB_QUERY_H
#define GSLB_QUERY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "dns/cookie.h"
#include "dns/edns.h"
#include "gslb/gslb.h"
#include "dns/snapshot.h"
#include "store/weightdb.h"

/* RCODEs, including the extended ones carried in OPT. */
enum {
	RCODE_NOERROR = 0, RCODE_FORMERR = 1, RCODE_SERVFAIL = 2,
	RCODE_NXDOMAIN = 3, RCODE_NOTIMP = 4, RCODE_REFUSED = 5,
	RCODE_NOTAUTH = 9, RCODE_BADVERS = 16, RCODE_BADCOOKIE = 23,
};

/** Who sent the query. */
typedef struct client {
	const struct sockaddr *addr;   /* the resolver's address */
	int tcp;                       /* arrived over TCP: no size limit */
} client_t;

/* Counters kept per worker and summed on read (no atomics). */
enum {
	STAT_QUERIES, STAT_NOERROR, STAT_NXDOMAIN, STAT_NODATA, STAT_REFUSED,
	STAT_FORMERR, STAT_NOTIMP, STAT_SERVFAIL, STAT_OTHER, STAT_DROPPED,
	STAT_TRUNCATED, STAT_EDNS, STAT_ECS,
	STAT_RRL_DROPPED,   /* rate limiting (dns/rrl.h): not sent */
	STAT_RRL_SLIPPED,   /* rate limiting: sent truncated instead */
	STAT_GSLB,          /* answers of GSLB services */
	STAT_GSLB_SHORT,    /* ... with the short TTL */
	STAT_GSLB_OPEN,     /* ... from a row with no usable node (fail open) */
	STAT_GSLB_NONE,     /* ... with no node (no row, all-down empty, or no
	                       node of the asked family) */
	STAT_DNSTAP_MESSAGES, /* dnstap (dns/dnstap.h): handed to its queue */
	STAT_DNSTAP_DROPPED,  /* dnstap: dropped, the queue being full */
	STAT_DNSSEC_SIGNATURES, /* signatures made (dns/qsign.h) */
	STAT_DNSSEC_HITS,       /* signatures found in the thread's cache */
	STAT_DNSSEC_MISSES,     /* signatures not found there */
	STAT_DNSSEC_EVICTIONS,  /* cache entries replaced by newer ones */
	STAT_DNSSEC_ENTRIES,    /* a gauge, not a counter: the entries the
	                           thread's cache holds */
	STAT_COOKIE_CLIENT,   /* cookies (dns/cookie.h): a client cookie only */
	STAT_COOKIE_VALID,    /* ... with a valid server cookie of ours */
	STAT_COOKIE_INVALID,  /* ... with a server cookie not ours or expired */
	STAT_COOKIE_MALFORMED,/* ... of a wrong length: FORMERR */
	STAT_BADCOOKIE,       /* rate limiting's slips sent as BADCOOKIE */
	STAT_MAX
};

/* Adds to a per-thread counter.  Only the owning thread writes it, so a
 * relaxed atomic store of the incremented value is enough for readers on
 * other threads (workers_stat(), the statistics endpoint) to see whole
 * values: on x86-64 and arm64 it is a plain store, no lock and no
 * read-modify-write, and it tells ThreadSanitizer what is meant. */
#define STAT_ADD(stats, i, n) \
	__atomic_store_n(&(stats)[i], (stats)[i] + (n), __ATOMIC_RELAXED)
#define STAT_INC(stats, i) STAT_ADD(stats, i, 1)

#define QCTX_COMP_MAX 96

/** What query_process() did with one query, for `gslbctl explain`: it is
 * filled only when qctx_t.trail points to one, so that explain prints the
 * decisions of the very code that answers dig, never a re-derivation.
 * The caller zeroes it before the query.  Pointers stay valid until the
 * next query on the same qctx_t and while the store reader is held. */
typedef struct query_trail {
	gslb_trail_t gslb;             /* the service resolution, if any */
	const gslb_result_t *res;      /* NULL unless a service answered: its
	                                  location, plan (each node with its
	                                  reason), pick, TTL and scope */
	const zone_t *zone;            /* the zone that answered, or NULL */
	uint8_t rcode;                 /* the response's RCODE (extended too) */
	uint8_t ecs;                   /* the response carries an ECS option */
	uint8_t scope;                 /* its scope prefix length */
} query_trail_t;

/** Per-thread scratch space of query_process(). */
typedef struct qctx {
	const snapshot_t *snap;        /* set by the caller before each batch */
	uint16_t comp[QCTX_COMP_MAX];  /* offsets of names for compression */
	unsigned ncomp;
	uint64_t stats[STAT_MAX];
	/* GSLB: set up once per thread, or per batch where noted. */
	wdb_reader_t *wdb;             /* NULL: no weight store, static only */
	gslb_memo_t *memo;             /* with wdb: resolutions of this thread */
	uint32_t now;                  /* unix time, per batch */
	uint64_t rng;                  /* weighted-pick state */
	const edns_t *edns;            /* per query: the query's OPT */
	const struct sockaddr *src;    /* per query: the resolver */
	gslb_client_t client;          /* per query: who to locate */
	uint8_t scope;                 /* per query: ECS scope to return */
	gslb_result_t gslb;            /* per query scratch (large) */
	uint16_t gslb_hops;            /* per query: 0, or 1 + the CNAMEs
	                                  followed before the GSLB service in
	                                  `gslb` answered (dnstap reads it) */
	query_trail_t *trail;          /* NULL (workers), or explain's record */
	struct tally *tally;           /* answers by service, row and node;
	                                  NULL when nobody reads them */
	struct dnssec_thread *dsig;    /* the thread's signer and signature
	                                  cache; NULL: answers are not signed */
	cookie_mac_t *cookies;         /* this thread's DNS Cookie contexts;
	                                  NULL: no cookies (explain, tests) */
	uint8_t cookie;                /* per query: its cookie_kind_t, which
	                                  rate limiting reads */
	struct rrl_table *rrl;         /* the UDP thread's rate-limit table,
	                                  per batch; NULL: not limited here
	                                  (TCP, explain, tests, rrl off) */
	uint8_t rrl_done;              /* per query: rate limiting charged it
	                                  before signing (dns/qsign.h); the
	                                  front end must not charge again */
} qctx_t;

/** Answers the query @in of @inlen bytes into @out (capacity @outcap,
 * at least 512; 65535 for TCP).  Returns the response length, or 0 when
 * the packet must be dropped (too short to carry a header, a response,
 * or a signed answer that rate limiting withheld: q->rrl_done). */
size_t query_process(qctx_t *q, const client_t *c, const uint8_t *in,
                     size_t inlen, uint8_t *out, size_t outcap);

#endif
