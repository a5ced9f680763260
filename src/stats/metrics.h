/* SPDX-License-Identifier: MIT */
/* The metric families gslbd exports, rendered from a sample of the
 * daemon's state that the caller takes first (stats_sample_t), so that
 * what is exported, under which names and labels, is one pure function
 * that unit tests can call without a running daemon.
 *
 * Naming follows Prometheus conventions: the gslbd_ prefix, _total for
 * counters, base units (seconds, bytes, ratios), and labels of bounded
 * cardinality: transport, rcode, zone, service, row, node and cutover
 * window take as many values as the configuration and the weight store
 * hold; probe kind, failure kind and state a fixed few. */
#ifndef GSLB_METRICS_H
#define GSLB_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "dns/query.h"
#include "dns/tcp_guard.h"
#include "health/hstats.h"
#include "store/weightdb.h"
#include "stats/expo.h"

enum { STATS_UDP, STATS_TCP, STATS_NTRANSPORT };

/** One zone as served. */
typedef struct stats_zone {
	const char *name;         /* presentation form, no final dot */
	uint32_t serial;
	int64_t loaded;           /* unix time the served version was read */
} stats_zone_t;

/** GSLB answers of one (service, row, node), summed over the threads. */
typedef struct stats_answer {
	const char *service;
	const char *level;        /* the row's kind: "region,isp" ... "*,*" */
	const char *region, *isp; /* the row's key ("*" for any) */
	const char *node;         /* "" when no node was picked */
	uint64_t count;
} stats_answer_t;

/** Cluster mode as the scrape finds it (daemon/sample.c copies it from
 * cluster_info(): stats/ does not include cluster/). */
typedef struct stats_cluster {
	int reachable;            /* the watch on etcd is up */
	int64_t revision;         /* the etcd revision the store reflects */
	int64_t last_apply;       /* unix time of the last revision applied or
	                             full read; 0: none yet */
	uint64_t resyncs;         /* full reads of the table */
	uint64_t applied;         /* revisions applied from the watch */
	int leader;               /* this instance makes the decisions */
	uint64_t decisions;       /* decision writes of this instance */
	uint64_t conflicts;       /* decision writes refused by etcd */
	unsigned nodes_up, nodes_partial, nodes_down; /* quorum verdicts */
	unsigned etcd_members;    /* while etcd fails: in its member list */
	unsigned etcd_answering;  /* and those answering; 0 while etcd is up */
	uint64_t cookie_gen;      /* the shared cookie secret's generation */
	int cookie_kept;          /* etcd fails: the cookie secret is kept */
	int diverged;             /* the table differs from etcd's */
	uint64_t divergences;     /* checks that found it so */
	unsigned overrides;       /* declared local overrides */
	uint64_t checks, full_checks; /* table checks, and the full ones */
	unsigned keys_missing;    /* signing keys whose file is missing */
} stats_cluster_t;

/** What one scrape reports, taken by the caller. */
typedef struct stats_sample {
	const char *version;      /* PACKAGE_VERSION */
	int64_t started;          /* unix time the process started */
	uint64_t counters[STATS_NTRANSPORT][STAT_MAX]; /* dns/query.h STAT_* */
	uint64_t tcp[TCP_STAT_MAX]; /* dns/tcp_guard.h TCP_*, all workers */
	uint64_t tcp_open;        /* TCP connections open now */
	const stats_zone_t *zones;
	size_t nzones;
	uint64_t snapshot_generation; /* publications of the snapshot */
	unsigned workers;
	int alive;                /* every worker and health thread runs */
	const stats_answer_t *answers;
	size_t nanswers;
	uint64_t answers_overflow; /* answers no tally entry was left for */
	const hstats_t *health;   /* the health thread's publication; NULL:
	                             none yet (its counters are shown as 0) */
	int64_t health_beat_age;  /* seconds since the health thread ticked */
	const wdb_info_t *store;  /* NULL: the store could not be read */
	const stats_cluster_t *cluster; /* NULL: standalone (no family) */
	int64_t now;              /* unix time of the scrape */
} stats_sample_t;

/** Appends every family of @s to @e. */
void stats_render(const stats_sample_t *s, expo_t *e);

#endif
