/* SPDX-License-Identifier: MIT */
/* Nearest steering against the store: one evaluation of a weight row of
 * a service with "steering": "nearest", run by steer_run() on the health
 * thread in its write transaction (never on a worker).
 *
 * The records (weightdb.h): the row's state in "steer" (data), with
 * "mode": "nearest", the row's choice, the challenger and its streak,
 * and per node the smoothed latency, load, rank, capacity limit and
 * share; in the weight row the applied shares like the steering
 * engine's:
 *   "steer": {"weights": {id: bp}, "at": T, "mode": "nearest",
 *             "verdict": "switch", "reason": "...",
 *             "decision": {"at": T, "hard": false, "conf": {...},
 *                          "was": [current, challenger, streak],
 *                          "in": [{id, base, ok, prev, l, ema, ...}],
 *                          "out": {id: bp}}}
 * A decision holds everything nearest_step() read, so that replaying it
 * gives the same shares (S3-7, as the engine's). */
#ifndef GSLB_NEAREST_RUN_H
#define GSLB_NEAREST_RUN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "steer/nearest.h"
#include "steer/steer.h"
#include "store/weightdb.h"

/** Whether service object @svc steers to the nearest node. */
int nearest_service_on(json_t *svc);

/** The nearest settings of service object @svc ("switch_margin",
 * "headroom", or their defaults) with the smoothing and min-step of
 * @sc, into @c. */
void nearest_service_conf(json_t *svc, const steer_conf_t *sc, nearest_conf_t *c);

/** Evaluates weight row @key (@row) of nearest service @svc in @t at
 * @now (nearest_step(), @hard_only as there) and writes its state and,
 * when they changed, its shares.  A node's latency for the row is its
 * pushed one or its live vantages' probes, by nearest_latency_source();
 * @vantages(@varg, ...) gives the views (NULL: standalone, none).
 * Appends the decision's words to @what (of @size, @len used).  Returns
 * 1 when the shares changed, 0 when not, or a negative error. */
int nearest_run_row(wdb_txn_t *t, const steer_conf_t *sc, uint32_t now,
                    const char *key, json_t *row, json_t *svc, int hard_only,
                    nearest_vantage_fn vantages, void *varg,
                    char *what, size_t size, size_t *len);

/** Reads decision @d (a weight row's "steer" "decision" written by
 * nearest_run_row()) into @c, *@now, *@hard_only, @was, *@n and
 * @in[0..*@n) (room for STEER_MAX_NODES), ready for nearest_step().
 * Returns 0, or -1 when @d is not a whole nearest decision. */
int nearest_decision_read(json_t *d, nearest_conf_t *c, uint32_t *now, int *hard_only,
                          nearest_row_t *was, unsigned *n, nearest_in_t *in);

#endif
