/* SPDX-License-Identifier: MIT */
/* The quorum verdict of cluster mode (S4-6): what the live instances'
 * views of one node say together.  Pure: no I/O, no clock, no state;
 * safe on any thread.
 *
 * A view is one instance's health of a node, as it publishes it under
 * PREFIX health/NODE/INSTANCE: {"state": "up"|"derated"|"demoted"|
 * "unknown", "pct": effective weight in percent, "score", "probes":
 * [{"probe", "ok", "connect_ms", "total_ms", "error"}], "region", "isp",
 * "time"}.  Views sit on their instance's lease, so the views present are
 * those of the live instances. */
#ifndef GSLB_CLUSTER_QUORUM_H
#define GSLB_CLUSTER_QUORUM_H

#include <jansson.h>

#include "health/health.h"

/** Combines @views ({instance: view}, borrowed) of one node into @out.
 * Only views with a verdict (up, derated or demoted) count: an instance
 * that has no verdict yet does not probe the node as far as the quorum
 * is concerned.  The node is demoted when at least @quorum of them see
 * it demoted (0: a majority of them; a @quorum above their number
 * counts as all of them); seen demoted by fewer, it is up or derated at
 * the median weight of the others, with the failing instances listed
 * (partial).  No view with a verdict: VERDICT_UNKNOWN. */
void cluster_combine(const json_t *views, unsigned quorum,
                     health_combined_t *out);

#endif
