/* SPDX-License-Identifier: MIT */
/* The health thread: one thread with its own libuv loop that probes the
 * nodes, scores them, and turns confirmed verdicts into decisions in the
 * weight store (S0-6..S0-11, S1-1..S1-10, S2-1..S2-10, S4-2, S4-4..S4-7).
 *
 * Every decision (demote, restore, derate, gray switch, standby
 * promotion) is one LMDB write transaction with an audit record; the
 * workers see it at their next batch.  The workers never wait for this
 * thread: if it stalls they keep answering from the last commit. */
#ifndef GSLB_HEALTH_H
#define GSLB_HEALTH_H

#include <jansson.h>
#include <stddef.h>

#include <stdint.h>

#include "health/health_conf.h"
#include "health/hstats.h"
#include "steer/nearest.h"
#include "store/weightdb.h"

/** The health thread (opaque). */
typedef struct health health_t;

/* Cluster mode (S4-6) ---------------------------------------------
 * The health thread of each instance publishes its own view of every
 * node; the elected instance turns the views of all live instances into
 * one decision per node (and makes the standby promotions and cutover
 * phase changes), written to etcd; every instance, the elected one
 * included, gets the decisions into its store from etcd.  These hooks
 * are how the thread reaches the cluster code without depending on it
 * (daemon/start.c wires them); they are called on the health thread only. */

/* At most this many instances' views count for one node. */
#define HEALTH_COMBINED_MAX 64

/** What the views of all live instances say of one node together. */
typedef struct health_combined {
	int state;                   /* verdict_state_t; VERDICT_UNKNOWN: no
	                                instance has a verdict */
	unsigned pct;                /* effective weight, percent */
	unsigned views;              /* instances with a verdict */
	unsigned down;               /* of those, seeing it demoted */
	unsigned quorum;             /* down views that take it out */
	char failing[200];           /* the instances seeing it demoted,
	                                sorted, space-separated */
} health_combined_t;

/** The cluster's side, as the health thread calls it. */
typedef struct health_cluster {
	void *arg;
	/** The epoch of this instance's leadership (the etcd revision that
	 * created its leader key), 0 when another instance decides. */
	int64_t (*leader)(void *arg);
	/** A counter that moves whenever any instance's view moves. */
	uint64_t (*views_gen)(void *arg);
	/** The combined verdict of @node into @out. */
	void (*combined)(void *arg, const char *node, health_combined_t *out);
	/** This instance's own view of @node (borrowed), to publish. */
	void (*view)(void *arg, const char *node, json_t *view);
	/** Writes the decisions @records to the cluster on behalf of
	 * leadership @epoch, with audit text @what, in one etcd transaction
	 * per up to about a hundred records.  @records maps a kind of the
	 * shared table to its records: {"health": {node: health record},
	 * "weight": {row key: row}, "steer": {row key: the steering
	 * engine's state}, "service": {name: service object}}, null to
	 * delete.  An integer "base" in @records (the etcd revision the
	 * local store reflected when the decisions were made) writes them
	 * only if none of their keys changed in etcd since; otherwise
	 * GSLB_EAGAIN, the leadership kept.  Returns 0, or an error with
	 * @err when it was not written (no longer the leader, etcd
	 * unreachable, GSLB_EAGAIN): nothing of it then counts. */
	int (*publish)(void *arg, int64_t epoch, json_t *records, const char *what,
	               char *err, size_t errlen);
	/** Every live instance's view of a node, with its vantage and probe
	 * time: the latency matrix that nearest steering reads (S4-6). */
	nearest_vantage_fn vantages;
} health_cluster_t;

/** Starts the health thread on @db with a copy of @hc, connected to the
 * cluster through @cl (kept by pointer; NULL: standalone).  @db and what
 * the hooks use must outlive the thread: call health_stop() first.  The
 * hooks are in place before the thread's first turn, so that an
 * instance in cluster mode never decides as if standalone.  Returns the
 * handle (the caller stops it with health_stop), or NULL with the
 * reason in @err. */
health_t *health_start(const health_conf_t *hc, weightdb_t *db,
                       const health_cluster_t *cl, char *err, size_t errlen);

/** Hands new health and cutover settings @hc (copied) to the running
 * thread, which applies them at its next turn: every later probe, score,
 * verdict and cutover uses them; probe intervals and timeouts taken from
 * the defaults are recomputed (a shorter interval brings the next probe
 * forward), and a new tick takes effect at once.  Nothing else of the
 * thread's state (windows, verdicts, cutover phases) is reset.  Main
 * thread; returns at once. */
void health_reconfigure(health_t *h, const health_conf_t *hc);

/** Stops and joins the thread and frees @h; in-flight probes are
 * cancelled.  NULL is allowed. */
void health_stop(health_t *h);

/** Whether the health thread's loop has ticked within the last @max_age
 * seconds (it ticks every health.tick, 0.1 s by default, even when it has
 * nothing to probe).  Any thread. */
int health_alive(const health_t *h, int64_t max_age);

/** Seconds since the health thread's loop last ticked.  Any thread. */
int64_t health_beat_age(const health_t *h);

/** The health thread's latest statistics (published once a second), a
 * reference the caller drops with hstats_put(); NULL before the first
 * publication.  Any thread: it waits at most for a pointer swap. */
hstats_t *health_stats_get(health_t *h);

#endif
