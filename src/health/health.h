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

#include <stddef.h>

#include <stdint.h>

#include "health/health_conf.h"
#include "health/hstats.h"
#include "store/weightdb.h"

/** The health thread (opaque). */
typedef struct health health_t;

/** Starts the health thread on @db with a copy of @hc.  @db must outlive
 * the thread.  Returns the handle (the caller stops it with health_stop),
 * or NULL with the reason in @err. */
health_t *health_start(const health_conf_t *hc, weightdb_t *db, char *err,
                       size_t errlen);

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
