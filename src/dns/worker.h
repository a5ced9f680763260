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
	qctx_t q;
	weightdb_t *db;          /* for the UDP threads' readers; may be NULL */
	net_udp_t **udp;         /* one per listen address */
	net_tcp_t **tcp;         /* one per listen address */
	size_t nlisten;
	unsigned tcp_clients;    /* open connections of this worker */
	unsigned tcp_max;        /* this worker's share of tcp-max-clients */
	unsigned tcp_idle_ms;
	struct conn *tcp_conns;  /* open connections (net_tcp.c) */
	uint8_t *tcp_out;        /* 2 + 65535 bytes: framed response scratch */
	dnstap_queue_t *dnstap;  /* the TCP side's dnstap queue; NULL: off */
	uv_timer_t beat_timer;   /* proves the loop runs, once a second */
	int64_t beat;            /* atomic: util_mono_sec() of its last run */
	int ready;
} worker_t;

/** Creates @n workers with sockets bound to every address of @conf (so
 * that privileges can be dropped afterwards), each with a reader of the
 * weight store @db (NULL: static answers only).  Returns NULL with a
 * message in @err if a socket cannot be bound. */
worker_t *workers_create(const conf_t *conf, unsigned n, weightdb_t *db,
                         char *err, size_t errlen);

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

/** Sums counter @stat over all workers, UDP and TCP. */
uint64_t workers_stat(const worker_t *w, unsigned n, int stat);

/* Hooks between worker.c and the network modules: around every batch a
 * thread answers with query context @q, it goes RCU-online and takes the
 * snapshot and the time, then drops them and its store read. */
void worker__online(qctx_t *q);
void worker__offline(qctx_t *q);

#endif
