/* SPDX-License-Identifier: MIT */
/* Internals shared by the files of the health thread: its node mirror
 * (nodes.c), the application of verdicts and the writes to the store
 * (repool.c), standby promotion (standby.c), and the thread with its
 * scheduling (health.c).
 *
 * Thread safety: everything declared here belongs to the health thread;
 * only health_start(), health_stop() and health_reconfigure() run on the
 * main thread: the first two touch a health_t only before the thread
 * starts and after it is joined, the third only its pending settings,
 * under their mutex.
 * Not for use outside src/health/. */
#ifndef GSLB_HEALTH_INT_H
#define GSLB_HEALTH_INT_H

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <uv.h>

#include "health/health.h"
#include "health/hstats.h"
#include "probe/probe.h"
#include "health/verdict.h"

#define HEALTH_MAX_PROBES 3      /* per node (S1-3) */
/* How often the store's table generation is checked (s): an operator's
 * change or a metrics push reaches the thread within this. */
#define SYNC_EVERY 0.25
#define HEALTH_GEO_NAME_MAX 32
/* S2-2: distinct service weights a node is scored under at most; more
 * services with weights of their own share the node's scores. */
#define HEALTH_MAX_WSETS 4

typedef struct hnode hnode_t;
typedef struct health_area health_area_t;   /* areas.c */

/** One probe of a node and its latest result. */
typedef struct hprobe {
	probe_spec_t spec;
	char text[640];              /* canonical form, to see changes */
	double next_due;             /* loop time, s */
	probe_run_t *run;            /* running, owned by the probe engine */
	hnode_t *node;
	probe_result_t last;
	uint32_t last_time;          /* unix time of the last result, 0 none */
	uint32_t cert_warned;        /* last certificate-expiry warning */
	uint32_t last_bytes;         /* S1-3: the wire bytes of the last result */
	double last_mono;            /* when it came (health__mono()), 0 none */
	double gap;                  /* s between the last two results */
} hprobe_t;

/** The health thread's mirror of one node of the store. */
struct hnode {
	health_t *owner;
	char id[64];
	char pool[16];
	char admin[8];
	char region[HEALTH_GEO_NAME_MAX];
	char isp[HEALTH_GEO_NAME_MAX];
	cutover_effect_t cut;        /* applied cutover effect */
	unsigned profiles;           /* score profiles asked for by the
	                                services using the node: bit
	                                1 << score_profile_t; 0 = global */
	unsigned nwsets;             /* S2-2: the weights services using the
	                                node name for themselves, each a
	                                profile and its four weights */
	struct { score_profile_t profile; double w[4]; } wset[HEALTH_MAX_WSETS];
	long capacity;
	double budget_own;           /* S1-3: node set --probe-budget, 0 none */
	double budget_svc;           /* the lowest of its services', 0 none */
	double probe_budget;         /* bytes/s its probes may cost: the
	                                node's, else its services', else
	                                health.probe-budget */
	double probe_rate;           /* bytes/s its probes cost now */
	int probe_over;              /* over the budget (warned once) */
	hprobe_t probe[HEALTH_MAX_PROBES];
	unsigned nprobe;
	score_sample_t win[SCORE_WINDOW];
	unsigned nwin;
	score_metrics_t metrics;
	score_result_t last;
	/* the decision state, mirrored in the health record */
	verdict_node_t v;
	int promoted;
	char promoted_for[64];
	json_t *sla_rows;            /* rows of dynamic services where the
	                                steering engine took it out for the
	                                SLA (S3-5): [keys], or NULL */
	char reason[200];
	/* bookkeeping */
	int seen, dirty, changed, status_dirty, removed;
	uint64_t born;               /* wdb_node_born() when mirrored */
	uint32_t status_at;          /* last status/history write */
	uint32_t fr_high_since;      /* pushed failure rate above fr_limit
	                                since (S1-2), from the pushes seen */
	double fr_limit;             /* the lowest max-failure-rate of the
	                                services naming it (S3-5); 0: the
	                                health.failure-rate default */
	int unmonitored;             /* no probe and no pushed metric: health
	                                has no say (S2-7) */
	int stale_warned;            /* judged on pushes alone under
	                                health.stale keep: said once (S2-7) */
	int region_loaded;           /* S2-6: most of its region is loaded */
	double auto_stable;          /* its stable score, the reference of
	                                "falling" (autocut.h); -1 none yet */
	unsigned extra;              /* extra probe rounds run in a cutover
	                                window since its last good sample
	                                (cutover_extra_probe()) */
	/* cluster mode (vantage.c): the combined verdict of every live
	 * instance's view, as last decided, and when it moved */
	health_combined_t cl;
	uint32_t cl_since, cl_moved;
	int shadow_grade;            /* grade under health.shadow-profile,
	                                SCORE_GRADE_UNKNOWN before the first */
	double shadow_score;
	/* reaction times (hstats.h), monotonic seconds, 0: none */
	double bad_since;            /* first bad round since the last good one */
	double demoted_at;           /* demotion not yet committed */
};

/** The thread.  node[] is sorted by id and owns its nodes. */
struct health {
	health_conf_t c;
	weightdb_t *db;
	uv_loop_t loop;
	uv_timer_t tick;
	uv_async_t stop;
	pthread_t thread;
	probe_engine_t *probes;
	hnode_t **node;              /* sorted by id */
	size_t n, cap;
	double last_sync, last_cutover, last_status;
	double last_steer;           /* loop time of the last steer_run() */
	double last_release;         /* loop time of the last release_run() */
	uint64_t inputs_gen;         /* wdb_inputs_generation() last read */
	int release_retry;           /* a guard check refused (GSLB_EAGAIN):
	                                again at the next tick */
	int steer_hard;              /* a health decision or an operator's
	                                change since: steer_run_hard() */
	char what[1024];             /* audit text of the pending decisions */
	json_t *windows;             /* cutover windows, refreshed by sync */
	json_t *loaded;              /* S2-6: regions in regional load */
	json_t *rows;                /* weight rows while windows exist */
	health_area_t *areas;        /* unannounced cutovers (areas.c) */
	size_t nareas;
	double last_areas;           /* loop time of the last evaluation */
	uint64_t table_gen;          /* wdb_table_generation() last read */
	uint64_t metrics_gen;        /* wdb_metrics_generation() last read */
	int have_changes;
	const char *fail_file;       /* test hook: GSLBD_TEST_HEALTH_FAIL_FILE
	                                (repool.c) */
	const char *probe_map;       /* test hook: GSLBD_TEST_PROBE_MAP
	                                (nodes.c) */
	int64_t beat;                /* atomic: util_mono_sec() of the last tick */
	hstats_counters_t stats;     /* counted by this thread (hstats.h) */
	uint64_t promotions_pending; /* promoted in the transaction under way */
	pthread_mutex_t pub_lock;    /* guards pub: a pointer swap */
	hstats_t *pub;               /* the latest publication, a reference */
	/* health_reconfigure(): the main thread leaves new settings here,
	 * under the mutex, and wakes the thread, which swaps them into c. */
	uv_async_t reconf;
	pthread_mutex_t reconf_mu;
	health_conf_t *pending;
	const health_cluster_t *cl;  /* atomic: cluster mode's hooks, or NULL */
	source_t *src;               /* the pull sources' thread, or NULL */
	int64_t cl_epoch;            /* leadership the decisions were made for */
	uint64_t cl_gen;             /* views_gen() last combined */
};

/* health.c: the clock and scheduling. */

/** The wall clock, unix seconds. */
uint32_t health__wall(void);

/** A monotonic clock in seconds with sub-millisecond precision (the
 * reaction times), unlike the loop's, which stands still within a
 * callback. */
double health__mono(void);

/** The loop's clock in seconds (the probes' schedule). */
double health__loop_now(health_t *h);

/** Takes the nodes that the steering engine has out for the SLA, @sla
 * (steer_run(): id -> [row keys]), as primaries out of their rows: a
 * node whose set of rows changed is re-pooled at the next flush, which
 * raises its standby or releases it (S3-5). */
void health__steer_sla(health_t *h, json_t *sla);

/** Fresh pushed metrics arrived for @n: if they pull its score below
 * usable, its probes run now (S0-7, S2-8). */
void health__metrics_arrived(health_t *h, hnode_t *n);

/* nodes.c: the mirror of the store's nodes. */

/** The node with @id, or NULL; @pos (may be NULL) gets its index, or
 * where it would go. */
hnode_t *health__find_node(health_t *h, const char *id, size_t *pos);

/** Mirrors the store's nodes, services and cutover windows if the store
 * changed since the last call (and the pushed metrics if only they did);
 * applies the cutover windows when @cutovers_due. */
void health__sync_nodes(health_t *h, int cutovers_due);
/** The same, read in @t (a write transaction about to record
 * decisions: they are then taken on the table it holds). */
void health__sync_in(health_t *h, wdb_txn_t *t, int cutovers_due);

/** Cancels @n's probes and frees it. */
void health__free_node(hnode_t *n);

/** Recomputes which regions are in regional load (S2-6). */
void health__region_load(health_t *h);

/** Scores samples @s[0..k) of node @n at @now under every profile the
 * node is asked for; the lowest known score counts. */
void health__node_score(health_t *h, const hnode_t *n,
                        const score_sample_t *s, unsigned k, uint32_t now,
                        score_result_t *out);

/** S1-3: updates @n's probe traffic and whether it is over its budget,
 * warning when it goes over and saying when it is back under. */
void health__probe_budget(health_t *h, hnode_t *n);

/** Maps the score profiles and weights of the services in @t onto the
 * nodes of their rows (profiles.c). */
void health__sync_profiles(health_t *h, wdb_txn_t *t);

/** The score configuration of @n under profile @pf, with weights @w
 * (NULL: the global ones) and the S2-6 shift in regional load. */
score_config_t health__profile_config(const health_t *h, const hnode_t *n, int pf,
                                      const double *w);

/** S2-2: the weights service @svc names for itself ("score_weights")
 * into @w, with their profile in *@pf.  Returns 0, or -1 when it names
 * none (or none valid). */
int health__service_weights(json_t *svc, score_profile_t *pf, double w[4]);

/** The profiles @n is scored under, as text ("probe", "four",
 * "probe+four"; static). */
const char *health__profile_text(health_t *h, const hnode_t *n);

/** Scores @n under health.shadow-profile too and logs a change of grade
 * there (S2-9); nothing else depends on it. */
void health__shadow_profile(health_t *h, hnode_t *n, uint32_t now);

/* areas.c: unannounced cutovers (S0-1, S2-6). */

/** Counts the falling nodes of every area and opens or ends automatic
 * cutover windows (one audited commit each). */
void health__areas(health_t *h);

/** Frees the areas' state. */
void health__areas_free(health_t *h);

/* repool.c: decisions and the store. */

/** Appends one printf-style line to the audit text of the next commit. */
void health__note(health_t *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/** Scores @n's newest round, runs the verdict and applies it. */
void health__evaluate(health_t *h, hnode_t *n);

/* standby.c: standby promotion. */

/** The standby fields of a node as they were before a re-pool, to undo
 * them if the commit fails (S0-10: never a half-applied pool). */
typedef struct {
	hnode_t *n;
	int promoted, changed;
	char promoted_for[64];
	uint32_t since, moved_at;
} health_undo_t;

/** What one re-pool changed, oldest first; starts zeroed, its @u freed
 * by the caller. */
typedef struct {
	health_undo_t *u;
	size_t n, cap;
} health_undo_log_t;

/** Promotes a standby in place of each changed primary that is out of
 * its rows (read in @t), and returns to the pool the standbys of
 * primaries that serve again; logs what it changed in @undo. */
void health__repool(health_t *h, wdb_txn_t *t, health_undo_log_t *undo);

/** Undoes what @l logged: the re-pool of a commit that failed. */
void health__undo_apply(health_undo_log_t *l);

/* vantage.c: cluster mode (S4-6). */

/** The cluster hooks, or NULL in standalone mode; follows a change of
 * leadership (the new leader takes the decisions in its store as its
 * own) and, on the leader, a change of any view (nodes whose combined
 * verdict moved are marked changed). */
const health_cluster_t *health__cluster(health_t *h);

/** The state decisions follow: the combined verdict on the leader of a
 * cluster, else the node's own. */
verdict_state_t health__decided(const health_t *h, const hnode_t *n);

/** Hands this instance's view of @n to the cluster. */
void health__view(health_t *h, const health_cluster_t *cl, const hnode_t *n,
                  uint32_t now);

/** The leader's health record @rec of @n with the combined verdict in
 * place of its own (state, usable, weight, reason, the failing
 * vantages); added to @out unless the store (@t) holds the same
 * decision. */
void health__cluster_record(health_t *h, wdb_txn_t *t, const hnode_t *n,
                            json_t *rec, json_t *out);

/** Writes the changed decisions (with the re-pool) and, if
 * @status_due, the live status and history, in one transaction. */
void health__flush(health_t *h, int status_due);

#endif
