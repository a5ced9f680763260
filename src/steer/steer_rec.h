/* SPDX-License-Identifier: MIT */
/* The steering records in the store and their readers: a service's
 * steering settings, the text of the engine's limits, providers' budgets
 * and spend, and the pushed inputs with their samples (S3-2, S3-6, S3-9).
 * The steering engine (steer_run.h), nearest steering, gray releases,
 * the push language and gslbctl all read and write these records
 * through the calls here; the records' layout is in steer_run.h and
 * store/weightdb.h.
 *
 * Thread safety: none of its own; the transaction's rules apply. */
#ifndef GSLB_STEER_REC_H
#define GSLB_STEER_REC_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "steer/steer.h"
#include "store/weightdb.h"

/** Whether service object @svc is steered: "steering" is "dynamic" or
 * "shadow" (S2-9: computed, recorded and explained, but its plans keep
 * the operator's weights). */
int steer_service_on(json_t *svc);

/** The policy of service object @svc: its "steer_weights" when set, else
 * its named "policy", else "custom" (steer.h). */
void steer_service_policy(json_t *svc, steer_policy_t *p);

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

/** Where the newest inputs of node @id for row (@region, @isp) came
 * from: the feeder named by the most specific of its inputs records
 * (steer_input_key()) that has one ("push" for gslbctl metrics push
 * without --from, "prometheus:NAME" for a pull source), into @out.
 * Returns 1, or 0 when no record of the row has any. */
int steer_input_from(wdb_txn_t *t, const char *id, const char *region,
                     const char *isp, char *out, size_t size);

#endif
