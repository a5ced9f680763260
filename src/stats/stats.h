/* SPDX-License-Identifier: MIT */
/* The statistics endpoint: GET /metrics (Prometheus text format) and
 * GET /healthz, served by libmicrohttpd on the main thread's libuv loop.
 *
 * Served from the main loop, with libmicrohttpd's epoll descriptor
 * watched by a uv_poll_t, because the main thread publishes snapshots:
 * it reads the current one without joining RCU, and no extra thread
 * reads worker state.  A scrape costs the workers nothing: their counters
 * are plain per-thread integers summed here (dns/worker.h).
 *
 * Configuration (gslbd.conf):
 *   stats:
 *     listen: [ "127.0.0.1@9153" ]    # absent section: no endpoint
 *     allow: [ "127.0.0.0/8", "::1" ] # optional: who may ask
 * Thread safety: main thread only. */
#ifndef GSLB_STATS_H
#define GSLB_STATS_H

#include <stddef.h>
#include <uv.h>

#include "common/conf.h"
#include "common/net.h"
#include "stats/expo.h"

#define STATS_MAX_LISTEN 8
#define STATS_MAX_ALLOW 32

typedef net_prefix_t stats_prefix_t;

/** The stats section. */
typedef struct stats_conf {
	conf_listen_t listen[STATS_MAX_LISTEN];
	size_t nlisten;           /* 0: no endpoint */
	stats_prefix_t allow[STATS_MAX_ALLOW];
	size_t nallow;            /* 0: anyone who reaches a listen address */
} stats_conf_t;

/** Reads the stats section of @c into @o.  Returns 0, or -1 with
 * "FILE:LINE: reason" in @err. */
int stats_conf_load(const conf_t *c, stats_conf_t *o, char *err, size_t errlen);

/** Whether @addr (struct sockaddr_in or _in6) is allowed by @c. */
int stats_allowed(const stats_conf_t *c, const struct sockaddr *addr);

/** What the endpoint asks of the daemon at every request. */
typedef struct stats_provider {
	/** Appends every metric family to @e. */
	void (*metrics)(expo_t *e, void *arg);
	/** Returns 1 while the daemon answers queries and its threads run,
	 * with a note in @why for what is degraded but not unhealthy (etcd
	 * lost in cluster mode) or "" ; writes what is wrong into @why
	 * otherwise. */
	int (*healthy)(char *why, size_t whylen, void *arg);
	void *arg;
} stats_provider_t;

typedef struct stats stats_t;

/** Starts serving @c on @loop.  Returns NULL with the reason in @err when
 * an address cannot be bound; a configuration without listen addresses
 * gives an empty stats_t (nothing served). */
stats_t *stats_start(const stats_conf_t *c, uv_loop_t *loop,
                     const stats_provider_t *p, char *err, size_t errlen);

/** Stops serving and frees @s (NULL allowed).  Its handles are closed on
 * the loop: run the loop once more before closing it. */
void stats_stop(stats_t *s);

#endif
