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
 * gives the same shares. */
#ifndef GSLB_STEER_RUN_H
#define GSLB_STEER_RUN_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "steer/nearest.h"
#include "steer/steer.h"
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

/** Whether service object @svc is steered: "steering" is "dynamic" or
 * "shadow" (S2-9: computed, recorded and explained, but its plans keep
 * the operator's weights). */
int steer_service_on(json_t *svc);

/** The policy of service object @svc: its "steer_weights" when set, else
 * its named "policy", else "custom" (steer.h). */
void steer_service_policy(json_t *svc, steer_policy_t *p);

/** Reads decision @d (as steer_run() stores it) into @c, @p, @now and
 * @in[0..*@n) for steer_step().  Returns 0 or -1 if it is malformed. */
int steer_decision_read(json_t *d, steer_conf_t *c, steer_policy_t *p,
                        uint32_t *now, unsigned *n, steer_in_t *in);

/** The text of limits @lim (STEER_LIM_*), comma-separated, into @buf;
 * "-" for none.  Returns @buf. */
const char *steer_limits_text(unsigned lim, char *buf, size_t size);

/** The key of provider @name's spend record for its budget period
 * @days (steer_period_parse()) holding @t into @buf: "p|NAME|YYYY-MM"
 * for a calendar month, "p|NAME|YYYY-MM-DD/Nd" (the first day) for
 * others.  Returns @buf. */
const char *steer_spend_key(char *buf, size_t size, const char *name,
                            unsigned days, uint32_t t);

/** The budget period of provider @name in @t: its budget's, or the
 * calendar month (0) when it has none. */
unsigned steer_provider_period(wdb_txn_t *t, const char *name);

/** The budget of provider @name in @t at @now: returns its state
 * (steer_budget_state(); 0 when it has no budget), with the spend of the
 * period in *@spent and the budget object in *@budget (new reference, or
 * NULL when there is none; both may be NULL). */
int steer_budget_read(wdb_txn_t *t, const char *name, uint32_t now,
                      double *spent, json_t **budget);

/** A provider's spend in the record @rec: the pushed figure when there
 * is one, else bytes times price. */
double steer_spend_of(json_t *rec);

/** Appends sample (@t, @success, @latency; NaN: not measured) to the
 * inputs record @rec (a "steerin" object, modified) at @now, keeping the
 * newest STEER_MAX_SAMPLES dated from @now - @keep to @now + @skew. */
void steer_sample_add(json_t *rec, uint32_t t, double success,
                      double latency, uint32_t now, double keep, double skew);

/** The one reader of pushed samples: steering windows, nearest latency
 * and release guards all see a node's measurements through it, so that
 * they never disagree about what it measured (S3-9, S4-1, S4-10).  The
 * samples of inputs record @rec (borrowed) dated from @from to @now +
 * @skew, oldest first, into @s[0..STEER_MAX_SAMPLES); one dated after
 * @now (within the skew) is read as of @now, one beyond it is no
 * measurement and skipped.  Returns how many. */
unsigned steer_samples_read(json_t *rec, uint32_t from, uint32_t now, double skew,
                            steer_sample_t *s);

/** The key of the @k-th (0 to 3) inputs record of node @id for the row
 * (@region, @isp), most specific first: the row's region and ISP, its
 * region, its ISP, the node as a whole; into @key.  Returns 1, or 0 when
 * that record is one of the earlier (a "*" of the row) or @k is past
 * the last. */
int steer_input_key(unsigned k, const char *id, const char *region,
                    const char *isp, char *key, size_t size);

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
