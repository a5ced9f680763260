/* SPDX-License-Identifier: MIT */
/* UDP: one SO_REUSEPORT socket per worker and listen address, read and
 * answered in batches with recvmmsg/sendmmsg from a uv_poll_t.  libuv's
 * own UDP handle answers one datagram per system call; batching both ways
 * is what keeps the per-query CPU cost at the level of Knot and NSD. */
#ifndef GSLB_NET_UDP_H
#define GSLB_NET_UDP_H

#include "conf.h"
#include "worker.h"

/** Opens and binds the UDP socket for @l; returns the fd or -errno. */
int net_udp_bind(const conf_listen_t *l);

/** Creates the UDP handle of worker @w for socket @fd (owned from now). */
net_udp_t *net_udp_new(worker_t *w, int fd);

/** Starts reading (on the worker's thread). */
int net_udp_start(net_udp_t *u);

/** Closes the handle and the socket; frees @u after the close. */
void net_udp_close(net_udp_t *u);

#endif
