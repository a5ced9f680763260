/* SPDX-License-Identifier: MIT */
/* What the health thread tells the statistics endpoint: per node score,
 * state and dimensions, probe durations and failures, state transitions,
 * the reaction times of a demotion (detection and switch), recoveries,
 * flaps, standby promotions and the cutover windows' phases.
 *
 * The health thread counts into its own hstats_counters_t (no atomics:
 * only it writes them) and, once a second, publishes an immutable
 * hstats_t: a copy of the counters plus the per-node and per-window
 * figures.  A reader (the main thread, at a scrape) takes a reference
 * with health_stats_get() and returns it with health_stats_put().  The
 * two meet only on a mutex held for a pointer swap and a reference
 * count, so a scrape never holds up the probes and the workers never see
 * any of it.
 *
 * Cardinality: one series per node of the table and per cutover window
 * in the store (both bounded by what an operator configures), per probe
 * kind (3), failure kind (9) and state pair (5 x 5). */
#ifndef GSLB_HSTATS_H
#define GSLB_HSTATS_H

#include <stddef.h>
#include <stdint.h>

#include "probe/probe.h"
#include "health/score.h"
#include "health/source.h"

/* Probe kinds as counted: tcp, http, https (probe_kind_t). */
#define HSTATS_KINDS 3
/* Failure kinds: probe_failure_t's, and "slow" (an answer that came, but
 * later than health.latency-threshold: an abnormal latency, S1-4). */
#define HSTATS_FAIL_SLOW PROBE_FAIL_COUNT
#define HSTATS_FAILS (PROBE_FAIL_COUNT + 1)
/* States a verdict moves between: unknown, up, derated, demoted,
 * stale (the transitions counted).  A node without probes or pushed
 * metrics is shown "unmonitored" besides (S2-7: served as configured),
 * so that a scrape tells it from a node not judged yet. */
#define HSTATS_STATES 5
#define HSTATS_UNMONITORED HSTATS_STATES
#define HSTATS_SHOWN_STATES (HSTATS_STATES + 1)
#define HSTATS_BUCKETS_MAX 16

/** A histogram with fixed upper bounds (seconds). */
typedef struct hstats_hist {
	const double *le;            /* upper bounds, ascending; static */
	unsigned nle;                /* how many (+Inf is implied) */
	uint64_t bucket[HSTATS_BUCKETS_MAX + 1]; /* per bucket, not
	                                cumulative; [nle] is above the last */
	uint64_t count;
	double sum;
} hstats_hist_t;

/* S4-9: latency by area, from probes and from pushes.  The areas are
 * the (region, ISP) pairs of the nodes measured, at most
 * HSTATS_AREAS_MAX; the ones past that are counted as region and ISP
 * "other", so the series stay bounded whatever the table holds. */
#define HSTATS_AREAS_MAX 32
#define HSTATS_AREA_NAME 32
enum { HSTATS_LAT_PROBED = 0, HSTATS_LAT_PUSHED = 1, HSTATS_LAT_SOURCES = 2 };

typedef struct hstats_area {
	char region[HSTATS_AREA_NAME], isp[HSTATS_AREA_NAME];
	hstats_hist_t latency[HSTATS_LAT_SOURCES];
} hstats_area_t;

/** What the health thread counts as it goes. */
typedef struct hstats_counters {
	hstats_area_t area[HSTATS_AREAS_MAX + 1]; /* [narea] is "other" */
	unsigned narea;
	hstats_hist_t probe_duration[HSTATS_KINDS];
	uint64_t probes[HSTATS_KINDS];
	uint64_t failures[HSTATS_KINDS][HSTATS_FAILS];
	uint64_t transitions[HSTATS_STATES][HSTATS_STATES]; /* [from][to] */
	hstats_hist_t detection;     /* first bad round -> demotion (S1-7) */
	hstats_hist_t switch_time;   /* demotion -> its re-pool committed */
	uint64_t recoveries;         /* demoted -> restored automatically */
	uint64_t flaps;              /* demotions soon after a restore (S4-7) */
	uint64_t promotions;         /* standbys promoted, committed */
	uint64_t commits;            /* decision commits */
	uint64_t commit_failures;
} hstats_counters_t;

/** One node as published. */
typedef struct hstats_node {
	char id[64];
	unsigned state;              /* 0..HSTATS_SHOWN_STATES-1 */
	double score;                /* 0..100, -1 unknown */
	double dim[4];               /* 0..1, -1 without input */
	score_profile_t profile;     /* the profile of dim[] */
	unsigned weight_pct;         /* effective weight 0..100 */
	uint8_t promoted;            /* a standby serving for a primary */
	double probe_rate;           /* S1-3: its probes' bytes/s */
	double probe_budget;         /* the budget of that, bytes/s */
	uint8_t probe_over;          /* over the budget */
} hstats_node_t;

/** One cutover window as published. */
typedef struct hstats_window {
	char id[64];
	const char *phase;           /* cutover_phase_name(); static */
} hstats_window_t;

/** One publication (immutable once published). */
typedef struct hstats {
	int refs;                    /* atomic; health_stats_put() frees */
	int64_t published;           /* unix time */
	hstats_counters_t c;
	hstats_node_t *node;         /* sorted by id; owned */
	size_t nnode;
	hstats_window_t *window;     /* owned */
	size_t nwindow;
	source_stat_t source[SOURCE_MAX]; /* the pull sources' figures */
	unsigned nsource;
} hstats_t;

/** Starts @c empty, with the histograms' bounds. */
void hstats_init(hstats_counters_t *c);

/** Counts @v (seconds) into @h. */
void hstats_observe(hstats_hist_t *h, double v);

/** S4-9: counts latency @v (seconds) of a node of @region and @isp, from
 * @source (HSTATS_LAT_*), into its area of @c: a new area while there
 * are fewer than HSTATS_AREAS_MAX, else "other". */
void hstats_latency(hstats_counters_t *c, const char *region, const char *isp,
                    int source, double v);

/** The index of shown state @name ("unknown", "up", "derated",
 * "demoted", "stale", "unmonitored"); 0 for anything else. */
unsigned hstats_state_index(const char *name);

/** The name of shown state @i (static). */
const char *hstats_state_name(unsigned i);

/** The name of probe kind @k ("tcp", "http", "https"; static). */
const char *hstats_kind_name(unsigned k);

/** The name of failure kind @f: probe_failure_name(), or "slow". */
const char *hstats_fail_name(unsigned f);

/** A new publication with a reference for the caller, holding a copy of
 * @c and room for @nnode nodes and @nwindow windows (filled by the
 * caller). */
hstats_t *hstats_new(const hstats_counters_t *c, size_t nnode, size_t nwindow);

/** Drops a reference to @s (NULL allowed); the last one frees it. */
void hstats_put(hstats_t *s);

#endif
