/* SPDX-License-Identifier: MIT */
/* TCP per RFC 7766: one SO_REUSEPORT listening socket per worker and
 * listen address; pipelined queries, each answered with the length prefix
 * and the message in one write, an idle timeout, a per-worker client
 * limit, and back-pressure so that a slow reader never holds up others. */
#ifndef GSLB_NET_TCP_H
#define GSLB_NET_TCP_H

#include "common/conf.h"
#include "dns/worker.h"

/** Opens, binds and listens on the TCP socket for @l; fd or -errno. */
int net_tcp_bind(const conf_listen_t *l);

/** Creates the listener of worker @w for socket @fd (owned from now). */
net_tcp_t *net_tcp_new(worker_t *w, int fd);

/** Starts accepting (on the worker's thread). */
int net_tcp_start(net_tcp_t *t);

/** Closes the listener (on the worker's thread). */
void net_tcp_close(net_tcp_t *t);

/** The listener's socket (it stays the listener's). */
int net_tcp_fd(const net_tcp_t *t);

/** Hand-over: every open connection of @w gets the worker's (now short)
 * idle time from now on, and closes once quiet for it (on its thread). */
void net_tcp_drain_conns(worker_t *w);

/** Closes every open connection of worker @w (on its thread). */
void net_tcp_close_conns(worker_t *w);

#endif
