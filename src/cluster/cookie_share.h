/* SPDX-License-Identifier: MIT */
/* The DNS Cookie secret shared by the instances of a cluster through
 * etcd (key <prefix>cookie-secret), so that a server cookie one instance
 * made is valid at every instance behind the same address (anycast).
 * The key is created once (a transaction that compares its create
 * revision with 0) from the first instance's secret; the elected
 * instance rotates it after cookies.rotate (the previous secret still
 * accepted); every instance watches it and hands what it reads to
 * dns/cookie.c (cookie_offer()), which the main thread publishes within
 * a second.  With etcd down an instance keeps the secret it has, never a
 * fresh one of its own that would invalidate its clients' cookies.
 *
 * Thread safety: cookie_share_start() and cookie_share_stop() on the main
 * thread; cookie_share_info() from any thread. */
#ifndef GSLB_CLUSTER_COOKIE_SHARE_H
#define GSLB_CLUSTER_COOKIE_SHARE_H

#include <stdint.h>

#include "cluster/cluster.h"
#include "cluster/cluster_conf.h"

typedef struct cookie_share cookie_share_t;

/** Starts the thread that shares the cookie secret for @cc (copied) of
 * cluster @cl (for the election), rotating every @rotate seconds while
 * elected.  Returns NULL with @err when the thread cannot start. */
cookie_share_t *cookie_share_start(const cluster_conf_t *cc, cluster_t *cl,
                                   unsigned rotate, char *err, size_t errlen);

/** Stops the thread (within about a second) and frees @s; NULL is fine. */
void cookie_share_stop(cookie_share_t *s);

/** The generation of the shared secret in use (published: 0 when none
 * yet) in *@gen, and whether this instance keeps the secret it has because
 * etcd cannot be read (1) in *@kept. */
void cookie_share_info(const cookie_share_t *s, uint64_t *gen, int *kept);

#endif
