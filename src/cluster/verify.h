/* SPDX-License-Identifier: MIT */
/* The check that an instance's store holds the cluster's table: a thread
 * that compares the digest of the local table (cluster/digest.h) with
 * that of etcd's table at the store's revision: at start, before the
 * watch's first full read, then every cluster.verify-interval seconds.  A store that
 * differs is a divergence: logged as an error, counted, reported by
 * cluster_verify_info() (cluster status, /metrics), and the table is read
 * again from etcd in full (cluster_resync_force()), which keeps the
 * declared overrides (cluster/override.h): those are no divergence.  The
 * thread also watches the overrides the store holds, and logs each at
 * warning level when it appears and again at every check, until it is
 * pushed or dropped.
 *
 * Thread safety: start and stop on one thread; cluster_verify_info()
 * from any. */
#ifndef GSLB_CLUSTER_VERIFY_H
#define GSLB_CLUSTER_VERIFY_H

#include <stdint.h>

#include "cluster/cluster_conf.h"
#include "store/weightdb.h"

typedef struct cluster_verify cluster_verify_t;

/** What the check found. */
typedef struct cluster_verify_info {
	int diverged;             /* the last check found the table different */
	int64_t checked_rev;      /* the revision last compared (0: none yet) */
	uint64_t checks;          /* comparisons made */
	uint64_t full_checks;     /* of them, full ones (the others: from the
	                             store's audit records since the last) */
	uint64_t divergences;     /* comparisons that found a difference */
	unsigned overrides;       /* declared local overrides in the store */
} cluster_verify_info_t;

/** Starts the check of @db against the etcd of @cc (borrowed: it must
 * outlive the check), writing as @actor.  NULL when the thread cannot
 * start. */
cluster_verify_t *cluster_verify_start(const cluster_conf_t *cc, weightdb_t *db,
                                       const char *actor);
/** Stops the thread (within about a second) and frees @v; NULL is fine. */
void cluster_verify_stop(cluster_verify_t *v);
/** Waits until the first comparison is over (or failed, or @v stops):
 * the watch's first full read comes after it. */
void cluster_verify_wait_first(cluster_verify_t *v);
/** Fills @out. */
void cluster_verify_info(cluster_verify_t *v, cluster_verify_info_t *out);

#endif
