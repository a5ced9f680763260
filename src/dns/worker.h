/* SPDX-License-Identifier: MIT */
/* Worker threads: each owns a libuv loop with its TCP sockets for every
 * listen address and a qctx_t, and, per listen address, a SO_REUSEPORT
 * UDP socket served by a thread of its own (net_udp.c) with its own
 * qctx_t.  The only things that cross threads are uv_async_send()
 * wake-ups, the stop flags and the snapshot pointer.
 *
 * RCU: every such thread is registered with liburcu (QSBR) and stays
 * offline while it waits; it goes online around every batch of packets
 * and every TCP read, the only places that read the snapshot. */
#ifndef GSLB_WORKER_H
#define GSLB_WORKER_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "common/conf.h"
#include "dns/query.h"
#include "dns/tcp_guard.h"
#include "store/weightdb.h"

typedef struct net_udp net_udp_t;
typedef struct net_tcp net_tcp_t;
typedef struct dnstap dnstap_t;
typedef struct dnstap_queue dnstap_queue_t;

typedef struct worker {
	unsigned id;
	pthread_t thread;
	uv_loop_t loop;
	uv_async_t stop;
	uv_async_t release;      /* hand-over: stop listening, drain */
	qctx_t q;
	weightdb_t *db;          /* for the UDP threads' readers; may be NULL */
	net_udp_t **udp;         /* one per listen address */
	net_tcp_t **tcp;         /* one per listen address */
	size_t nlisten;
	unsigned tcp_clients;    /* atomic: open connections of this worker */
	unsigned tcp_max;        /* this worker's share of tcp-max-clients */
	unsigned tcp_idle_ms;
	struct conn *tcp_conns;  /* open connections (net_tcp.c) */
	struct conn_queue {      /* connections, oldest first (net_tcp.c) */
		struct conn *head, *tail;
	} tcp_queue[2];          /* those without a whole query yet, and
	                            those that asked, by their last query */
	tcp_guard_t *tcp_guard;  /* per-source counts, pressure, counters */
	int tcp_pressed;         /* the guard is at its pressure mark: timers
	                            were cut when it was crossed */
	uint8_t *tcp_out;        /* WORKER_TCP_OUT bytes: the framed responses
	                            to one read, sent together */
	dnstap_queue_t *dnstap;  /* the TCP side's dnstap queue; NULL: off */
	uv_timer_t beat_timer;   /* proves the loop runs, once a second */
	int64_t beat;            /* atomic: util_mono_sec() of its last run */
	int ready;
	int draining;            /* atomic: released, no listener, short idle */
	unsigned sig_cache;      /* signature cache entries of each of its
	                            query threads (dnssec.signature-cache) */
} worker_t;

/** Room for the responses to one TCP read: two framed messages of the
 * largest size, so one always fits after a smaller one. */
#define WORKER_TCP_OUT (2 * (2 + 65535))

/** Creates @n workers with sockets bound to every address of @conf (so
 * that privileges can be dropped afterwards), each with a reader of the
 * weight store @db (NULL: static answers only).  Sockets of a running
 * gslbd handed over in @adopt[0..nadopt) are used first (net_adopt():
 * taken ones become -1, the caller closes the rest); the others are
 * bound.  Returns NULL with a message in @err if a socket cannot be
 * bound. */
worker_t *workers_create(const conf_t *conf, unsigned n, weightdb_t *db,
                         int *adopt, size_t nadopt, char *err, size_t errlen);

/** The listening sockets of the @n workers (UDP and TCP of every listen
 * address), for a hand-over: writes up to @max fds into @out (they stay
 * the workers') and returns how many there are. */
size_t workers_fds(const worker_t *w, unsigned n, int *out, size_t max);

/** Hand-over, after the new process serves: each worker closes its TCP
 * listeners, its UDP threads stop reading (without shutting the shared
 * sockets down), and its open connections close once idle for
 * WORKER_DRAIN_IDLE_MS.  Any thread; returns at once. */
void workers_release(worker_t *w, unsigned n);

/** Whether every one of the @n workers has been released and has no
 * open connection left (any thread). */
int workers_drained(const worker_t *w, unsigned n);

/** During a drain, a connection quiet for this long is closed: an answer
 * in flight has long been written, and a client sends its next query on
 * the same connection sooner or opens a new one to the new process. */
#define WORKER_DRAIN_IDLE_MS 1000

/** Gives every query context of the workers (their TCP loops and UDP
 * threads) a GSLB answer tally (dns/tally.h), before they start: only
 * when something will read them. */
void workers_enable_tally(worker_t *w, unsigned n);

/** Calls @fn with each query context's tally (NULL ones skipped). */
void workers_each_tally(const worker_t *w, unsigned n,
                        void (*fn)(const struct tally *t, void *arg), void *arg);

/** The dnstap queues @d needs: one per query thread of @n workers of
 * @nlisten listen addresses (each worker's loop and UDP threads). */
unsigned workers_dnstap_queues(unsigned n, size_t nlisten);

/** Gives every query thread of the @n workers its own queue of @d
 * (which must outlive them).  Before workers_start(). */
void workers_set_dnstap(worker_t *w, unsigned n, dnstap_t *d);

/** Starts the worker threads. */
int workers_start(worker_t *w, unsigned n);

/** Stops and joins the threads, then frees @w. */
void workers_stop(worker_t *w, unsigned n);

/** Checks that every worker loop and UDP thread has run within the last
 * @max_age seconds (each proves it at least once a second).  Returns 0,
 * or -1 with the first that has not in @what (for the log). */
int workers_alive(const worker_t *w, unsigned n, int64_t max_age,
                  char *what, size_t whatlen);

/** Sums counter @stat over the UDP threads of all workers. */
uint64_t workers_stat_udp(const worker_t *w, unsigned n, int stat);

/** Sums TCP counter @stat (dns/tcp_guard.h TCP_*) over all workers. */
uint64_t workers_stat_tcp(const worker_t *w, unsigned n, int stat);

/** Open TCP connections of all workers, closing ones included. */
uint64_t workers_tcp_open(const worker_t *w, unsigned n);

/** Sums counter @stat over all workers, UDP and TCP. */
uint64_t workers_stat(const worker_t *w, unsigned n, int stat);

/* Hooks between worker.c and the network modules: around every batch a
 * thread answers with query context @q, it goes RCU-online and takes the
 * snapshot and the time, then drops them and its store read. */
void worker__online(qctx_t *q);
void worker__offline(qctx_t *q);

#endif
