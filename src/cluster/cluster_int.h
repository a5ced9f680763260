/* SPDX-License-Identifier: MIT */
/* The cluster threads' shared state (cluster.c: the watch and the
 * handle; lease.c: the lease thread; publish.c: the health thread's
 * decisions into etcd; cluster_log.c: the main thread's reads of the
 * change log).  Internal to cluster/. */
#ifndef GSLB_CLUSTER_INT_H
#define GSLB_CLUSTER_INT_H

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>

#include "cluster/cluster.h"
#include "cluster/etcd.h"
#include "cluster/verify.h"

/* Retry delays after etcd failed: from RETRY_MIN_MS doubling up to
 * RETRY_MAX_MS, so that a restarted etcd is seen within seconds while an
 * outage of hours costs a request every few seconds. */
#define RETRY_MIN_MS 200
#define RETRY_MAX_MS 5000

/* The lease thread's step: views that moved are published within this,
 * and a leader key that went is campaigned for within it. */
#define STEP_MS 100
/* A view whose verdict did not move (only its latencies and score) is
 * published again at most this often: the latency matrix stays fresh
 * without a write per probe result. */
#define VIEW_REFRESH_MS 30000
/* Operations per etcd transaction: below etcd's default --max-txn-ops
 * (128), so that no setting of etcd is needed for the views. */
#define TXN_OPS 100
/* The elected instance trims the cluster's change log this often. */
#define LOG_TRIM_MS 5000

struct cluster {
	cluster_conf_t cc;
	weightdb_t *db;
	char actor[CLUSTER_NAME_MAX + 16];
	pthread_t watch_thr, lease_thr;
	int watch_started, lease_started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;                 /* under mu; read unlocked by stop_cb */
	int64_t rev;              /* last revision applied or read */
	int need_resync;
	int connected;            /* atomic; -1 until the first try */
	/* What the members said when etcd last failed (watch thread; the
	 * text under vmu): how many answer, of how many. */
	unsigned etcd_members, etcd_answering;   /* atomic */
	int etcd_noted;                          /* atomic: etcd_why is set */
	char etcd_why[400];                      /* under vmu, with: */
	char etcd_key[64];                       /* the state and counts */
	uint64_t resyncs, applied; /* atomic */
	int64_t last_apply;       /* atomic: unix time, cluster_info_t */
	uint64_t decisions, conflicts; /* atomic: cluster_info_t */
	int64_t lease;            /* atomic; written by the lease thread */
	int kick;                 /* under mu: the lease thread has work */
	/* S4-6: every live instance's view of every node, from the watch:
	 * {node: {instance: view}}; this instance's own views from the
	 * health thread {node: view}; and the leader's name.  Under vmu. */
	pthread_mutex_t vmu;
	json_t *views, *mine;
	char leader[CLUSTER_NAME_MAX];
	uint64_t vgen;            /* atomic: moves with any view */
	json_t *sent;             /* lease thread: {node: [view, mono ms]} */
	int64_t roll_rev;         /* the etcd revision of our last rollover
	                             step, while elected as roll_epoch
	                             (health thread) */
	int64_t roll_epoch;
	int64_t epoch;            /* atomic: our leader key's create revision */
	etcd_t *he;               /* the health thread's client (publish) */
	etcd_t *re;               /* the main thread's: key rollovers */
	etcd_t *we;               /* the main thread's: the API's writes
	                             (cluster_write()) */
	health_cluster_t hooks;
	cluster_verify_t *verify; /* the table checked against etcd's */
};

/* Whether the cluster threads are asked to stop. */
int cluster__stopping(cluster_t *c);

/* Sleeps @ms unless stopped or kicked first.  Returns whether to stop. */
int cluster__nap(cluster_t *c, unsigned ms);

/* Sets the leadership epoch (0: not elected), saying so when it ends. */
void cluster__set_epoch(cluster_t *c, int64_t ep);

/* Notes why etcd failed (no quorum, unreachable), logged when it changes. */
void cluster__note_etcd(cluster_t *c, etcd_t *e, const char *why);

/* The leader key changed (@del: it went). */
void cluster__leader_event(cluster_t *c, const etcd_kv_t *kv, int del);

/* What the cluster threads know of etcd failing (what /healthz and
 * cluster_info() say) into @why, "" while it answers. */
void cluster__known_failure(cluster_t *c, char *why, size_t n);

/* The main thread's own etcd client (created at the first call; freed
 * by cluster_stop()).  A leader election (about a second) is waited
 * out, no more: the main loop waits with the writer. */
etcd_t *cluster__writer(cluster_t *c);

/* The lease thread (lease.c): member key, campaign, views. */
void *cluster__lease_main(void *arg);

/* Whether two views of a node differ in their verdict. */
int cluster__verdict_moved(json_t *a, json_t *b);

/* The health thread's publish hook (publish.c): decisions into etcd
 * under the leadership epoch, in transactions of at most TXN_OPS. */
int cluster__publish(void *arg, int64_t epoch, json_t *records,
                     const char *what, char *err, size_t errlen);

/* The elected instance's rollover steps into etcd (keyroll.c): a
 * roll_commit_fn of dnssec/roll.h. */
int cluster__dnssec_commit(void *arg, wdb_txn_t *t, const char *what,
                           char *err, size_t errlen);

#endif
