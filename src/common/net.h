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

/** Whether the IPv4 or IPv6 address @text is one that no client can
 * use as an answer: unspecified (0.0.0.0/8, ::), loopback (127/8, ::1),
 * multicast (224/4, ff00::/8), broadcast, reserved (240/4) or
 * IPv4-mapped IPv6.  Returns what it is ("a loopback address"), or NULL
 * for an ordinary address or text that is no address. */
const char *net_addr_special(const char *text);

/** An address network (the stats and api sections' allow lists). */
typedef struct net_prefix {
	int family;               /* AF_INET or AF_INET6 */
	unsigned char addr[16];
	unsigned bits;
} net_prefix_t;

/** Parses an address or ADDR/LEN network with its host bits clear
 * (10.1.2.3/8 is a typo, not a network).  Returns 0 or -1. */
int net_prefix_parse(const char *text, net_prefix_t *p);

/** Whether @addr (struct sockaddr_in or _in6; an IPv4-mapped IPv6
 * address counts as IPv4) is in one of @p[0..n); n 0: any is. */
int net_prefix_allowed(const net_prefix_t *p, size_t n, const struct sockaddr *addr);

#endif
