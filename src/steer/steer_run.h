/* SPDX-License-Identifier: MIT */
/* The steering engine against the store: one evaluation of every weight
 * row of every dynamically steered service (S3-1, S3-3), the records it
 * keeps, and the codec of its decisions for explain and replay (S3-7).
 *
 * steer_run() runs on the health thread (its own timer, every
 * steer.interval), never on a worker: the shares it decides go into the
 * weight rows in one audited write transaction that also rebuilds their
 * plans, so a query reads them through the plan like any weight.
 *
 * The records (weightdb.h): pushed inputs in "steerin", the engine's
 * state per row in "steer" (data), and in the weight row the applied
 * shares with the decision that made them:
 *   "steer": {"weights": {id: bp}, "at": T, "verdict": "change",
 *             "decision": {"at": T, "conf": {...}, "policy": [s, l, c],
 *                          "in": [{id, base, ...}], "out": {id: bp}}}
 * A decision holds everything steer_step() read, so that replaying it
 * gives the same shares.  The readers and writers of the other steering
 * records (services, budgets and spend, pushed samples) are in
 * steer_rec.h, which this header includes. */
#ifndef GSLB_STEER_RUN_H
#define GSLB_STEER_RUN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "steer/nearest.h"
#include "steer/steer.h"
#include "steer/steer_rec.h"
#include "store/weightdb.h"

/** Writes what one run decided elsewhere than the local store (cluster
 * mode): @records is {"weight": {row key: row, or null}, "steer": {row
 * key: engine state, or null}} (borrowed), @what the audit text.
 * Returns 0, or an error with @err when nothing of it was written. */
typedef int (*steer_publish_fn)(void *arg, json_t *records, const char *what,
                                char *err, size_t errlen);

/** Evaluates every row of every service with "steering": "dynamic" or
 * "nearest" (nearest_run.h) at @now under @c, and drops the engine's
 * shares from the rows of services
 * that no longer steer.  One write transaction; the changed rows carry
 * their decision and the audit record says what moved and why.  With
 * @publish (cluster mode: the elected instance), the rows and the
 * engine's state are evaluated in a transaction that is then aborted,
 * and handed to @publish(@arg, ...) instead, so that every instance
 * gets the same shares from the shared table.  With @vantages (cluster
 * mode), nearest rows read the live vantages' probe latencies through
 * @vantages(@arg, ...) where no latency was pushed for them (S4-6,
 * nearest_latency_source()).  @sla_out (may be NULL;
 * an object the caller owns) gets, once the transaction is committed or
 * published, every node taken out for the SLA (S3-5) in a row of a
 * dynamic (not shadow) service: id -> [row keys].  Returns the number of
 * rows whose shares changed, or a negative error with the reason in
 * @err (and nothing in @sla_out). */
int steer_run(weightdb_t *db, const steer_conf_t *c, uint32_t now,
              steer_publish_fn publish, nearest_vantage_fn vantages, void *arg,
              json_t *sla_out, char *err, size_t errlen);

/** Between the regular runs, after a health decision: evaluates only
 * the rows of nearest services, and changes one only when a node with a
 * share failed hard (S4-4: it leaves at once, not at the next run).
 * @publish, @vantages and @arg as for steer_run().  Returns as
 * steer_run(). */
int steer_run_hard(weightdb_t *db, const steer_conf_t *c, uint32_t now,
                   steer_publish_fn publish, nearest_vantage_fn vantages, void *arg,
                   char *err, size_t errlen);

/** Reads decision @d (as steer_run() stores it) into @c, @p, @now and
 * @in[0..*@n) for steer_step().  Returns 0 or -1 if it is malformed. */
int steer_decision_read(json_t *d, steer_conf_t *c, steer_policy_t *p,
                        uint32_t *now, unsigned *n, steer_in_t *in);

/** The fresh input @which (0 success, 1 latency) of node @id for the row
 * (@region, @isp) in @t at @now, aggregated by steer_aggregate() into
 * *@out (and the shortest window's median into *@now_out, may be NULL):
 * from the most specific of the node's input records for the row's
 * region and ISP, then either alone, then the node as a whole; which
 * of these four gave it goes into *@level (1..4; may be NULL).  Returns
 * 1, or 0 when none is fresh.  Internal to the steering engines. */
int steer__row_input(wdb_txn_t *t, const steer_conf_t *c, uint32_t now,
                     const char *id, const char *region, const char *isp,
                     int which, double *out, double *now_out, int *level);

#endif
