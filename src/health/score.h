/* SPDX-License-Identifier: MIT */
/* Quality scores: pure arithmetic, no I/O, no allocation, no globals.
 *
 * Two profiles (selectable per service or globally):
 *  - SCORE_PROFILE_PROBE (S0-6): packet loss 35 %, latency 30 %, connect
 *    success 25 %, route jitter 10 %, computed from a node's recent probe
 *    results;
 *  - SCORE_PROFILE_FOUR (S2-2): network 30 %, service 30 %, load 25 %,
 *    stability 15 %, from probe results and pushed passive metrics.
 * Every input is normalised with score_normalize() (S2-3), a key input
 * below the veto level multiplies the score by a penalty (S2-4), and an
 * input older than the freshness limit hands its weight to the fresh
 * inputs of its dimension (S2-7); with no fresh input at all the node is
 * SCORE_UNKNOWN. */
#ifndef GSLB_SCORE_H
#define GSLB_SCORE_H

#include <stdint.h>

#define SCORE_WINDOW 16          /* probe results kept per node */
#define SCORE_RECENT 4           /* newest good answers that give route
                                    jitter (S0-6) */
/* A spike must also be this many ms slower than its neighbours: on a
 * 1 ms loopback path a 4 ms answer is three times slower and still
 * nothing (score.c, S3-9). */
#define SCORE_OUTLIER_FLOOR_MS 10.0

typedef enum { SCORE_PROFILE_PROBE = 0, SCORE_PROFILE_FOUR = 1 } score_profile_t;

/** One probe result. */
typedef struct score_sample {
	uint32_t time;               /* unix time of the result */
	uint8_t connected;           /* TCP (and TLS) connect succeeded */
	uint8_t status_ok;           /* HTTP status expected (1 for TCP probes) */
	uint8_t body_ok;             /* body match (1 when not asked) */
	uint8_t timed_out;
	uint32_t connect_ms;         /* connect time */
	uint32_t latency_ms;         /* total time to the answer */
} score_sample_t;

/* Pushed passive metrics (gslbctl metrics push), S1-2 and S2-2. */
typedef enum {
	METRIC_LOSS,                 /* percent */
	METRIC_RTT_MS,
	METRIC_CONNECT_MS,
	METRIC_HTTP_5XX,             /* percent of responses */
	METRIC_HIT_RATIO,            /* percent */
	METRIC_ORIGIN_SUCCESS,       /* percent */
	METRIC_BANDWIDTH,            /* percent of capacity */
	METRIC_CPU,                  /* percent */
	METRIC_MEMORY,               /* percent */
	METRIC_DISK,                 /* percent */
	METRIC_RESTARTS,             /* count in the window */
	METRIC_VOLATILITY,           /* 0..1 */
	METRIC_FAILURE_RATE,         /* percent of requests failing */
	METRIC_COUNT
} metric_t;

typedef struct score_metrics {
	double value[METRIC_COUNT];
	uint32_t time[METRIC_COUNT]; /* 0: never pushed */
	double stable_ms;            /* the node's stable-period probe latency,
	                                the reference of route jitter (S0-6);
	                                0: not known yet */
} score_metrics_t;

/** Tunables, with the defaults of score_config_default(). */
typedef struct score_config {
	score_profile_t profile;
	double w_probe[4];           /* loss, latency, connect, jitter: 35 30 25 10 */
	double w_four[4];            /* network, service, load, stability: 30 30 25 15 */
	double latency_good_ms, latency_bad_ms;   /* 20, 200 (S2-3) */
	double connect_good_ms, connect_bad_ms;   /* 30, 300 */
	double jitter_good_ms, jitter_bad_ms;     /* 5, 100 */
	double latency_threshold_ms; /* 2000: a slower answer is abnormal (S1-4) */
	double veto_level;           /* 0.2 (S2-4) */
	double veto_factor;          /* 0.5: score multiplier on veto */
	uint32_t fresh_s;            /* 300: inputs older are stale (S2-7) */
	double good, usable;         /* grades 80 and 60 (S0-6, S2-5) */
	double latency_alpha;        /* 0.5: EMA weight of the newest answer in
	                                the latency dimension (S4-7, S3-9) */
	double outlier_factor;       /* 3: an answer slower than this times
	                                both neighbours is a spike, dropped
	                                from latency and jitter (S3-9);
	                                0: keep every answer */
	unsigned loss_forgive;       /* 1: failed samples of the window not
	                                counted as loss while the newest
	                                sample succeeds (S0-8; see score.c) */
} score_config_t;

/** The verdict of one evaluation. */
typedef struct score_result {
	double score;                /* 0..100, or -1 when unknown */
	double dim[4];               /* per dimension 0..1, -1 when no input */
	uint8_t unknown;             /* no fresh input at all (S2-7) */
	uint8_t vetoed;              /* a key input fell below the veto level */
	uint8_t hard_fail;           /* every recent probe failed to connect (S4-4) */
	uint8_t abnormal;            /* abnormal dimensions in the last round:
	                                bit 0 status, 1 connect, 2 latency (S1-4) */
	uint8_t n_abnormal;          /* how many of those bits are set */
	uint8_t profile;             /* the score_profile_t of dim[] */
} score_result_t;

enum { SCORE_AB_STATUS = 1, SCORE_AB_CONNECT = 2, SCORE_AB_LATENCY = 4 };

/* S1-2: a request failure rate (pushed metric failure_rate) above this
 * percentage for this long raises a fault of its own. */
#define SCORE_FAILURE_RATE_FAULT_PCT 5.0
#define SCORE_FAILURE_RATE_FAULT_S 60

void score_config_default(score_config_t *c);

/** Linear normalisation (S2-3): 1 at or below @good, 0 at or above @bad,
 * linear between; @good may be above @bad for "higher is better". */
double score_normalize(double value, double good, double bad);

/** Piecewise normalisation of packet loss in percent (S2-3): full marks
 * up to 0.1 %, near zero above 3 %. */
double score_normalize_loss(double loss_pct);

/** Evaluates a node at time @now from its last @n samples (oldest first,
 * at most SCORE_WINDOW) and its pushed @m (may be NULL).  The last round
 * is the newest sample. */
void score_evaluate(const score_config_t *c, const score_sample_t *s,
                    unsigned n, const score_metrics_t *m, uint32_t now,
                    score_result_t *out);

/** The name of dimension @i (0..3) under profile @p: "loss", "latency",
 * "connect", "jitter" (probe) or "network", "service", "load",
 * "stability" (four); static. */
const char *score_dimension_name(score_profile_t p, int i);

/** S2-2: the weights a service names for itself, in place of the
 * global ones: @n pairs of dimension names @names (score_dimension_name())
 * and weights @vals (0 to 100).  All four dimensions of one profile must
 * be named, once each, and the weights may not add up to 0.  Returns 0
 * with the profile in *@pf and the weights in its order in @w, or -1. */
int score_weights_named(const char *const *names, const double *vals,
                        unsigned n, score_profile_t *pf, double w[4]);

/** Grades of a score (S0-6, S2-5). */
typedef enum {
	SCORE_GRADE_UNKNOWN = -1,    /* no fresh input (S2-7) */
	SCORE_GRADE_DEGRADED = 0,    /* below c->usable (60) */
	SCORE_GRADE_USABLE = 1,      /* c->usable up to c->good (60..80) */
	SCORE_GRADE_GOOD = 2         /* c->good (80) or more */
} score_grade_t;

/** The grade of @score under @c: >= good is GOOD, >= usable is USABLE,
 * lower is DEGRADED, a negative score (unknown) is UNKNOWN. */
score_grade_t score_grade(const score_config_t *c, double score);

/** Parses a metric name ("loss", "rtt_ms", ...); -1 if unknown. */
int score_metric_parse(const char *name);
/** The name of metric @m (a static string), NULL if @m is out of range. */
const char *score_metric_name(metric_t m);
/** Checks a pushed value's range; 0 or -1. */
int score_metric_check(metric_t m, double v);

#endif
