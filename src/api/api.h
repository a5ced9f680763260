/* SPDX-License-Identifier: MIT */
/* The HTTP API for automation, served by libmicrohttpd (HTTPS with
 * GnuTLS, TLS 1.2 or later, when the api section names a certificate)
 * on the main thread's libuv loop, as the statistics endpoint is.
 *
 * Every request carries "Authorization: Bearer TOKEN" (api/token.h);
 * the token's role decides what it may do.  Bodies and answers are
 * JSON; an error is {"error": TEXT, "field": KEY or null} with a 4xx
 * status (503 when etcd does not answer in cluster mode), and nothing
 * is written.  A read answers with the table generation it reflects
 * (ETag: in cluster mode the cluster revision of the last change the
 * local store holds, the same on every instance that is up to date);
 * a write may send If-Match with it and is refused (412) when the table
 * changed since.  Each change is one store transaction with its audit
 * record, written as user "the token's name" from host "the client's
 * address"; in cluster mode it is validated on the local store and
 * written to etcd as gslbctl's changes are (cluster/commit.h).
 *
 * The main thread writes the store for a change, and waits for etcd in
 * cluster mode (within cluster.timeout a member): the query path is not
 * touched (the workers read the plans the commit publishes).
 * Thread safety: main thread only. */
#ifndef GSLB_API_H
#define GSLB_API_H

#include <stddef.h>
#include <uv.h>

#include "api/api_conf.h"
#include "cluster/cluster.h"
#include "store/apply.h"
#include "health/cutover.h"
#include "steer/steer.h"
#include "store/weightdb.h"

typedef struct api api_t;

/** What the API takes from the daemon. */
typedef struct api_env {
	weightdb_t *db;
	double settle;             /* health.settle: the short-TTL period */
	int cluster;               /* cluster mode: writes go through etcd */
	cluster_t *cl;             /* cluster mode: the daemon's cluster, whose
	                              cluster_write() the writes go through */
	double probe_interval;     /* health.interval and health.timeout: */
	double probe_timeout;      /* the defaults of a node's probes */
	conf_t *const *conf;       /* the daemon's configuration (its zones),
	                            * through the pointer a reload replaces */
	/* Adds to @k the region and ISP names a client can be located in,
	 * from the geoip sources the daemon serves (NULL: none known). */
	void (*area_names)(wdb_area_known_t *k);
	double keep;               /* s pushed steering samples are kept
	                            * (steer_conf_keep()) */
	double skew;               /* steer clock-skew: how far ahead of now
	                            * a pushed sample may be dated */
	const char *conf_path;     /* the configuration file, for POST /v1/run */
	cutover_conf_t cut;        /* the cutover section: impact levels and
	                              the default pre-warm of a new window */
	steer_conf_t steer;        /* the steer section: what a release's
	                              guards read */
	/* The snapshot the workers answer from now (main thread: no RCU
	 * read side needed), for /v1/explain; NULL when there is none. */
	const struct snapshot *(*snapshot)(void);
} api_env_t;

/** Starts serving @c on @loop (an empty api_t when @c is not enabled).
 * Returns NULL with the reason in @err. */
api_t *api_start(const api_conf_t *c, uv_loop_t *loop, const api_env_t *env,
                 char *err, size_t errlen);

/** Stops serving and frees @a (NULL allowed); its handles close on the
 * loop. */
void api_stop(api_t *a);

#endif
