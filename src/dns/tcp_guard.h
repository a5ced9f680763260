/* SPDX-License-Identifier: MIT */
/* The TCP front end's defence against clients that hoard connections
 * (S1-12): the count of open connections per source in a fixed table,
 * the admission verdict for a new connection, the pressure mark and the
 * shrunk idle time, and the counters the metrics show.  Pure: no
 * sockets, no libuv, so the unit tests drive it directly.
 *
 * Thread-safety: one guard per worker (the worker's TCP loop is the only
 * one that changes it); only the counters are read by other threads,
 * with relaxed atomics.  Nothing allocates after tcp_guard_new(). */
#ifndef GSLB_TCP_GUARD_H
#define GSLB_TCP_GUARD_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/** The counters of a guard, summed over the workers for /metrics. */
enum {
	TCP_REFUSED_SOURCE,  /* new connection over tcp-max-per-source */
	TCP_REFUSED_FULL,    /* new connection, every slot taken, none to evict */
	TCP_CLOSED_PRESSURE, /* evicted for a newcomer: no query yet */
	TCP_CLOSED_IDLE,     /* closed by the idle timer (full or shrunk) */
	TCP_STAT_MAX
};

/** What to do with a new connection. */
typedef enum {
	TCP_ADMIT,           /* take it */
	TCP_ADMIT_EVICT,     /* evict the oldest connection without a query
	                        yet, then take it */
	TCP_ADMIT_EVICT_QUIET, /* evict a quiet connection (it asked, has
	                        nothing unanswered) of a source holding more
	                        than one, then take it */
	TCP_REFUSE_SOURCE,   /* close it: its source has its share */
	TCP_REFUSE_FULL      /* close it: no slot, and nobody to evict */
} tcp_verdict_t;

/** A source: the client address masked to its prefix, IPv4 as
 * ::ffff:a.b.c.d (so an IPv4-mapped IPv6 peer is the same source). */
typedef struct tcp_src {
	uint8_t a[16];
} tcp_src_t;

typedef struct tcp_guard tcp_guard_t;

/** The pressure mark for a table of @max connections: 90 % of it,
 * rounded up (900 of 1000, 45 of 50, 4 of 4).  From there on a
 * newcomer evicts, and idle times shrink. */
static inline unsigned tcp_guard_pressure_at(unsigned max)
{
	return max - max / 10;
}

/** The idle time under pressure for a normal one of @idle_ms: a tenth,
 * but not under TCP_PRESSURE_IDLE_MIN_MS (nor over @idle_ms).  NSD gives
 * new connections 200 ms once half its slots are taken and Knot allows
 * 500 ms for a whole message to arrive: a tenth of the 10 s default is
 * 1 s, time for a resolver's next pipelined query over a long path. */
#define TCP_PRESSURE_IDLE_MIN_MS 500
static inline unsigned tcp_guard_shrunk_ms(unsigned idle_ms)
{
	unsigned s = idle_ms / 10;
	if (s < TCP_PRESSURE_IDLE_MIN_MS)
		s = TCP_PRESSURE_IDLE_MIN_MS;
	return s < idle_ms ? s : idle_ms;
}

/** A guard for @max_clients connections (this worker's share), at most
 * @per_source of them from one source (0: no limit), sources being
 * IPv4 /@v4_prefix (1-32) and IPv6 /@v6_prefix (1-128) networks.  The
 * table has room for twice @max_clients sources, so it never fills.
 * Aborts when memory is short (start-up only); free with
 * tcp_guard_free(). */
tcp_guard_t *tcp_guard_new(unsigned max_clients, unsigned per_source,
                           unsigned v4_prefix, unsigned v6_prefix);

/** Frees @g (NULL is fine). */
void tcp_guard_free(tcp_guard_t *g);

/** The source of peer @sa under @g's prefixes, into @out (all zero for
 * an address family other than IPv4 and IPv6). */
void tcp_guard_source(const tcp_guard_t *g, const struct sockaddr *sa,
                      tcp_src_t *out);

/** The verdict for a new connection from @src, given the candidates to
 * evict (see tcp_guard_pick()): one without a whole query yet, whose
 * source holds @victim connections (0: none open), and a quiet one, that
 * asked and has nothing unanswered nor unwritten, whose source holds
 * @quiet (0: none):
 *   - the source holds its share already: TCP_REFUSE_SOURCE (checked
 *     first, so that nobody is evicted for a connection refused anyway);
 *   - every slot taken, with a quiet candidate whose source holds more
 *     than one, and more than the other candidate's: TCP_ADMIT_EVICT_QUIET
 *     (a hoarder's held connection goes before a connection another
 *     client has just opened);
 *   - at the pressure mark or above, with a candidate without a query
 *     whose source holds more than this one connection: TCP_ADMIT_EVICT;
 *   - every slot taken, with any candidate without a query:
 *     TCP_ADMIT_EVICT;
 *   - every slot taken, no candidate: TCP_REFUSE_FULL;
 *   - otherwise TCP_ADMIT.
 * A source's only connection is thus evicted only for want of a slot,
 * never while newcomers between the mark and the limit still fit: two
 * clients that connect at once do not evict each other's connection
 * before its query is read.  And a hoarder whose connections each asked
 * once before going quiet fills the table only until the next newcomer:
 * it makes room for it, rather than the newcomer being refused or the
 * lone connection of another client being evicted before its query is
 * read (S1-12). */
tcp_verdict_t tcp_guard_verdict(const tcp_guard_t *g, const tcp_src_t *src,
                                unsigned victim, unsigned quiet);

/** How many of the oldest connections without a query an eviction
 * looks at: bounded work per accept, enough to find a hoarder's among
 * them (a hoarder's connections are most of the oldest). */
#define TCP_EVICT_SCAN 64

/** The eviction pick among @n candidates, oldest first, whose sources
 * hold @counts[i] connections each: the one of the source with the most,
 * the oldest of those.  A client with one connection is thus evicted only
 * when no candidate's source holds more, so a hoarder that reopens
 * connections faster than others send their first query evicts its own,
 * not theirs.  Returns the index (0 when @n is 0). */
size_t tcp_guard_pick(const unsigned *counts, size_t n);

/** Counts an admitted connection from @src (after the verdict, and after
 * the eviction it asked for has been tcp_guard_del()eted). */
void tcp_guard_add(tcp_guard_t *g, const tcp_src_t *src);

/** Uncounts a connection from @src that tcp_guard_add() counted. */
void tcp_guard_del(tcp_guard_t *g, const tcp_src_t *src);

/** Open connections counted, and those of @src. */
unsigned tcp_guard_open(const tcp_guard_t *g);
unsigned tcp_guard_of(const tcp_guard_t *g, const tcp_src_t *src);

/** Whether @g is at its pressure mark or above. */
int tcp_guard_pressed(const tcp_guard_t *g);

/** The idle time to arm now for a normal one of @idle_ms: shrunk under
 * pressure (tcp_guard_shrunk_ms()), @idle_ms otherwise. */
unsigned tcp_guard_idle_ms(const tcp_guard_t *g, unsigned idle_ms);

/** The share of one source per worker: @per_source (0: none) over
 * @workers, rounded up, as tcp-max-clients is shared. */
unsigned tcp_guard_share(unsigned per_source, unsigned workers);

/** Adds one to counter @i (TCP_*) of @g (its worker's thread). */
void tcp_guard_count(tcp_guard_t *g, int i);

/** Counter @i of @g (any thread). */
uint64_t tcp_guard_stat(const tcp_guard_t *g, int i);

#endif
