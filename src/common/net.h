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

#endif
