/* SPDX-License-Identifier: MIT */
/* UDP: one SO_REUSEPORT socket per worker and listen address, read and
 * answered in batches with recvmmsg/sendmmsg by a thread of its own that
 * blocks in the read (net_udp.c).  libuv's own UDP handle answers one
 * datagram per system call; batching both ways, with no readiness round
 * trip, is what keeps the per-query CPU cost at the level of Knot, NSD
 * and gdnsd. */
#ifndef GSLB_NET_UDP_H
#define GSLB_NET_UDP_H

#include "common/conf.h"
#include "dns/worker.h"

/** Opens and binds the UDP socket for @l; returns the fd or -errno. */
int net_udp_bind(const conf_listen_t *l);

#include <stdint.h>

/** Creates the UDP handle of worker @w for socket @fd (owned from now,
 * closed on failure), with its own query context and weight-store
 * reader; NULL when the reader cannot be made. */
net_udp_t *net_udp_new(worker_t *w, int fd);

typedef struct dnstap_queue dnstap_queue_t;

/** Makes the handle's thread log to dnstap queue @dq (owned by the
 * dnstap_t, which must outlive the thread).  Before net_udp_start(). */
void net_udp_set_dnstap(net_udp_t *u, dnstap_queue_t *dq);

/** Starts the handle's thread; 0 or -errno. */
int net_udp_start(net_udp_t *u);

/** Asks the thread to stop and wakes it; net_udp_close() joins it. */
void net_udp_stop(net_udp_t *u);

/** Hand-over: the thread stops reading within a second (its receive
 * timeout) without shutting the socket down, which the new process
 * shares; what it has read it still answers.  Any thread. */
void net_udp_release(net_udp_t *u);

/** The handle's socket (it stays the handle's). */
int net_udp_fd(const net_udp_t *u);

/** Stops and joins the thread, closes the socket and frees @u. */
void net_udp_close(net_udp_t *u);

/** The monotonic second (util_mono_sec()) at which the thread last woke
 * up; it wakes at least once a second while it runs (any thread). */
int64_t net_udp_beat(const net_udp_t *u);

/** The handle's query context (set it up before net_udp_start()). */
qctx_t *net_udp_qctx(net_udp_t *u);

/** Counter @stat of the handle's query context (any thread). */
uint64_t net_udp_stat(const net_udp_t *u, int stat);

#endif
