/* SPDX-License-Identifier: MIT */
/* Listening sockets shared by the UDP and TCP modules. */
#ifndef GSLB_NET_H
#define GSLB_NET_H

#include "common/conf.h"

/** Opens a non-blocking socket of @type (SOCK_DGRAM or SOCK_STREAM) with
 * SO_REUSEPORT, so that every worker binds its own socket to the same
 * address and the kernel spreads the load, and binds it to @l (IPv6
 * sockets are IPv6-only: an IPv4 address is configured on its own).
 * Returns the fd or -errno. */
int net_socket_bind(const conf_listen_t *l, int type);

/** Whether another socket already serves @l with @type: a bind without
 * SO_REUSEPORT (and, for UDP, without SO_REUSEADDR, which on Linux would
 * share a UDP port) fails with EADDRINUSE exactly then.  A TCP probe sets
 * SO_REUSEADDR so that connections in TIME_WAIT from a previous run do
 * not count.  When in use, names the holder in @who ("pid 123 (gslbd)",
 * or "another process" when /proc does not tell) and returns 1; returns 0
 * when free or when the probe cannot tell. */
int net_in_use(const conf_listen_t *l, int type, char *who, size_t wholen);

/** Takes from @fds[0..n) a socket of @type bound to exactly @l (one a
 * running gslbd handed over, see handover.h), marks its slot -1 and
 * returns it; returns -1 when none is left. */
int net_adopt(int *fds, size_t n, const conf_listen_t *l, int type);

#endif
