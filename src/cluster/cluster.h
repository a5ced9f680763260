/* SPDX-License-Identifier: MIT */
/* gslbd's side of cluster mode: a thread that keeps the local store
 * equal to the table in etcd (full range at start and after a compaction
 * or a broken history, then the watch, each revision applied in one LMDB
 * transaction through the store's usual write path), and a thread that
 * keeps this instance's lease and its member key alive, campaigns for
 * the leader key (the elected instance makes the automatic decisions)
 * and publishes this instance's health views on the lease.  The query path
 * is not involved: the workers read the local store as in standalone
 * mode, so answers go on through any etcd outage.
 *
 * Thread safety: cluster_start() and cluster_stop() on the main thread;
 * cluster_info() from any thread. */
#ifndef GSLB_CLUSTER_H
#define GSLB_CLUSTER_H

#include <stdint.h>

#include "cluster/cluster_conf.h"
#include "cluster/commit.h"
#include "health/health.h"
#include "store/weightdb.h"

typedef struct cluster cluster_t;

/** What the daemon reports about the cluster. */
typedef struct cluster_info {
	int connected;         /* the watch is up and etcd has a quorum */
	int64_t revision;      /* the etcd revision the local store reflects */
	uint64_t resyncs;      /* full resyncs done */
	uint64_t applied;      /* revisions applied from the watch */
	int elected;           /* this instance makes the automatic decisions */
	int64_t last_apply;    /* unix time the store was last brought up to
	                          etcd (a revision applied or a full read);
	                          0: not yet */
	uint64_t decisions;    /* decision transactions this instance wrote
	                          while elected */
	uint64_t conflicts;    /* decision writes etcd refused: another
	                          instance had been elected meanwhile */
	/* The quorum verdict over the live instances' views, counted over
	 * the nodes that have views: in the answers with no vantage seeing
	 * them down, in while seen down by fewer than the quorum
	 * (partial), out (down). */
	unsigned nodes_up, nodes_partial, nodes_down;
	/* While etcd fails: the members in its member list, those that
	 * answer (0 when none does, or etcd is up), and the account
	 * ("no quorum: 1 of 3 members answer (e1)"; "" while up). */
	unsigned etcd_members, etcd_answering;
	char etcd_why[400];
	/* The check of the table against etcd's (cluster/verify.h): the
	 * last comparison found it different; comparisons that did; the
	 * declared local overrides the store holds. */
	int diverged;
	uint64_t divergences;
	unsigned overrides;
	uint64_t checks, full_checks;  /* comparisons, and the full ones */
} cluster_info_t;

/** Starts the cluster threads for @cc (copied) on @db.  Returns NULL
 * with @err when a thread cannot start; an unreachable etcd is no error
 * (the threads retry, and say so in the log). */
cluster_t *cluster_start(const cluster_conf_t *cc, weightdb_t *db, char *err,
                         size_t errlen);
/** Stops the threads (within about a second) and frees @c; NULL is
 * fine.  The lease is revoked so that this instance's keys go at once. */
void cluster_stop(cluster_t *c);
/** Fills @out (the verdict counts combine every node's views, under the
 * views' lock: called at a scrape, never on the query path). */
void cluster_info(cluster_t *c, cluster_info_t *out);

/** The hooks that connect the health thread to @c (health_start();
 * S4-6): its views published, the election, the combined verdicts and
 * the elected instance's decisions written to etcd.  Owned by @c; NULL
 * for NULL.  Stop the health thread before cluster_stop(). */
const health_cluster_t *cluster_health_hooks(cluster_t *c);

/** Whether @c (NULL: no) is the elected instance now. */
int cluster_elected(cluster_t *c);

/** Makes the rollovers of dnssec/roll.h write their steps to etcd
 * through @c (NULL: the local store again); the caller runs
 * roll_tick() only while cluster_elected(). */
void cluster_dnssec_rollovers(cluster_t *c);

/** Writes the change of @t (a write transaction of the store @c
 * mirrors, changed and not committed) by @actor, described by @what, to
 * etcd (cluster/commit.h), through the main thread's own client: each
 * request within cluster.timeout per member, a leader election waited
 * out for one more timeout; refused at once while the cluster threads
 * know etcd fails (cluster_info()'s etcd_why).  Returns
 * CLUSTER_COMMIT_OK with the change's revision in *@rev (the local
 * store has it, or the watch applies it soon); CLUSTER_COMMIT_LOCAL
 * with @t untouched (only local data: the caller commits it); another
 * class with gslbctl's words in @err, @t ended.  Main thread only; it
 * waits for etcd. */
cluster_commit_class_t cluster_write(cluster_t *c, wdb_txn_t *t,
                                     const char *what, const char *actor,
                                     int64_t *rev, char *err, size_t errlen);

/** Puts the validated pushes @lines (each an array of the words after
 * "push") of time @at into etcd's feed (cluster/feed.h) by @actor,
 * through the main thread's client as cluster_write() does, from where
 * every instance applies them, this one included.  Returns 0 with the
 * revision in *@rev, GSLB_EIO when etcd does not answer (refused at
 * once while the cluster threads know it fails) or another error, with
 * gslbctl's words in @err; nothing written on an error. */
int cluster_feed_write(cluster_t *c, const char *actor, json_t *lines,
                       uint32_t at, double keep, double skew, int64_t *rev,
                       char *err, size_t errlen);

/** Reads the cluster's change log (cluster/clog.h; cluster_log.c)
 * through the main thread's client, as cluster_write() reaches etcd:
 * the record of
 * revision @rev alone when @rev > 0 (an empty array when the log has
 * none), else the newest @newest records (all when 0), oldest first,
 * each named by its revision ("id" and "revision"), into *@recs (a new
 * array).  Returns 0; GSLB_EIO when etcd does not answer (refused at
 * once while the cluster threads know it fails), or another error,
 * with the reason in @err ("etcd is unreachable: ...", "no quorum: 1 of
 * 3 members answer (e1)"; without "cluster: " before it).  Main thread
 * only; it waits for etcd (within cluster.timeout a member). */
int cluster_log_get(cluster_t *c, int64_t rev, long newest, json_t **recs,
                    char *err, size_t errlen);

#endif
