/* SPDX-License-Identifier: MIT */
/* Pull sources of steering and health inputs (steer.sources in
 * gslbd.conf): Prometheus servers whose PromQL queries give, per node
 * and optionally per region and ISP, the figures that `gslbctl metrics
 * push` would otherwise bring (success, latency, bytes, and the health
 * metrics such as load or bandwidth).
 *
 * A thread of its own evaluates each source at its interval, with a
 * timeout, over HTTP (libcurl) against the Prometheus query API, and
 * writes what it read through the push language (push.h), as one push
 * per node, region and ISP named "--from prometheus:NAME": the same
 * checks, the same records, in one store transaction per evaluation.
 * It never writes a figure it did not read: a query that fails, times
 * out or returns no sample for a node leaves that node's inputs to age
 * as a paused feeder's do, stale after steer.stale (S2-7, S3-9), never
 * zero.  The thread never touches the health thread's loop, so a slow
 * Prometheus cannot delay a probe.
 *
 * Thread safety: source_start(), source_reconfigure(), source_stop() and
 * source_stats() may be called from any one thread at a time (the health
 * thread's owner); the figures of source_stats() are a copy. */
#ifndef GSLB_HEALTH_SOURCE_H
#define GSLB_HEALTH_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/conf.h"
#include "store/weightdb.h"

#define SOURCE_MAX 4              /* sources in steer.sources */
#define SOURCE_QUERIES_MAX 8      /* queries of one source */
#define SOURCE_NAME_MAX 32
#define SOURCE_URL_MAX 512
#define SOURCE_LABEL_MAX 64
#define SOURCE_QUERY_MAX 1024     /* one PromQL expression */

/** One query: the input it gives (a push key: success, latency, bytes,
 * or a health metric's name) and its PromQL expression. */
typedef struct source_query {
	char input[32];
	char promql[SOURCE_QUERY_MAX];
} source_query_t;

/** One source as configured. */
typedef struct source_def {
	char name[SOURCE_NAME_MAX];
	char url[SOURCE_URL_MAX];     /* the server's base URL */
	double interval;              /* seconds between evaluations */
	double timeout;               /* seconds for one query */
	char node_label[SOURCE_LABEL_MAX];   /* default "node" */
	char region_label[SOURCE_LABEL_MAX]; /* default "region" */
	char isp_label[SOURCE_LABEL_MAX];    /* default "isp" */
	unsigned nq;
	source_query_t q[SOURCE_QUERIES_MAX];
} source_def_t;

/** steer.sources. */
typedef struct source_conf {
	unsigned n;
	source_def_t s[SOURCE_MAX];
} source_conf_t;

/** What one source did, for /metrics and the log. */
typedef struct source_stat {
	char name[SOURCE_NAME_MAX];
	int up;                       /* the last evaluation read every query */
	uint64_t evaluations;
	uint64_t failures;            /* queries that failed */
	uint64_t samples;             /* figures stored */
	uint64_t rejected;            /* figures the push language refused */
	int64_t last_success;         /* unix time of the last full read, 0 */
} source_stat_t;

/** Whether @input is a key a query may give. */
int source_input_known(const char *input);

/** Reads steer.sources of @c into @out (empty when absent).  Returns 0,
 * or -1 with "FILE:LINE: reason" in @err. */
int source_conf_load(const conf_t *c, source_conf_t *out, char *err,
                     size_t errlen);

/** One evaluation's result as push lines, the pure part: @bodies[i] is
 * the query API's JSON answer to query @d->q[i] (NULL: it failed).
 * Appends to @lines one array of words per push (without "push" and
 * "--from"); counts the samples it could not use (no node label, not a
 * number) into *@unusable and names the first in @why.  Returns the
 * number of queries whose answer was a valid instant vector. */
unsigned source_lines(const source_def_t *d, const char *const *bodies,
                      json_t *lines, unsigned *unusable, char *why,
                      size_t whylen);

typedef struct source source_t;

/** Starts the thread for @sc (NULL when it has no source) writing into
 * @db; @keep and @skew are the push language's limits
 * (steer_conf_keep(), steer clock-skew). */
source_t *source_start(const source_conf_t *sc, weightdb_t *db, double keep,
                       double skew);

/** New settings (a reload): sources kept by name keep their figures.
 * Starts the thread when @s is NULL and @sc has sources; returns the
 * handle to keep. */
source_t *source_reconfigure(source_t *s, const source_conf_t *sc,
                             weightdb_t *db, double keep, double skew);

/** Stops the thread (NULL allowed). */
void source_stop(source_t *s);

/** Copies the figures of up to @max sources into @out; returns how many. */
unsigned source_stats(source_t *s, source_stat_t *out, unsigned max);

#endif
