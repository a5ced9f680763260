/* SPDX-License-Identifier: MIT */
/* The gray release controller against the store (S4-10): reads each
 * running or paused release's guards, runs release_step() and writes what
 * it decided into the service's release record, audited, in one write
 * transaction that also rebuilds the plans of the rows concerned.
 *
 * release_run() runs on the health thread once a second, never on a
 * worker, and between those runs for the guards alone as soon as pushed
 * steering inputs reach the store (release_inputs_moved()), so that a
 * broken guard rolls back within one evaluation wherever in the second
 * its figure arrives; the share it decides reaches the queries through
 * the plans.  In cluster mode only the elected instance runs it, and
 * hands its decisions to the cluster (steer_publish_fn) instead of
 * committing them: every instance applies them from etcd. */
#ifndef GSLB_RELEASE_RUN_H
#define GSLB_RELEASE_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "steer/release.h"
#include "steer/steer_run.h"
#include "store/weightdb.h"

/* Seconds between evaluations: a broken guard rolls back within this
 * much of its input arriving, and a step lasts at most this much more
 * than its --every. */
#define RELEASE_EVAL_EVERY 1.0

/** Fills @obs[0..@r->nguards) for release @rel (its record) of service
 * as read in @t at @now: the node's live score (status record), and the
 * newest pushed success and latency taken after the second the step
 * began (or, marked early, in that second), from the most specific input
 * record of the release's region and ISP, read with steer_samples_read()
 * under @c (the skew) like the steering windows.  A figure that does not
 * exist (no status, an unmonitored node, no push) or none over the step
 * (stale) is marked so with the reason, and has no value.  Used by the
 * controller and by `gslbctl release show`. */
void release_observe(wdb_txn_t *t, const steer_conf_t *c, json_t *rel,
                     const release_t *r, uint32_t now, release_obs_t *obs);

/** One evaluation of every release at @now under steering settings @c:
 * widens, completes or rolls back what release_step() says, in one
 * write transaction (none when nothing changes); a step held for a
 * missing figure gets that as its reason, once.  With @guards_only, only rollbacks: widening keeps
 * its schedule.  With @publish (cluster mode: the elected instance), the
 * changed services go to @publish(@arg, {"service": {name: object},
 * "base": the etcd revision the store reflects}, audit text, ...)
 * instead, and the local store gets them from etcd like every instance;
 * GSLB_EAGAIN from @publish (the store has not caught up with a change
 * in etcd yet) is returned as is, nothing logged.  Returns the number
 * of releases changed, or a negative error with the reason in @err. */
int release_run(weightdb_t *db, const steer_conf_t *c, uint32_t now,
                int guards_only, steer_publish_fn publish, void *arg, char *err,
                size_t errlen);

/** Whether the pushed steering inputs in @db moved since *@seen (a
 * generation, updated; 0 before the first call, which counts as a
 * move).  One read of the store's meta table: cheap enough for every
 * tick of the health thread. */
int release_inputs_moved(weightdb_t *db, uint64_t *seen);

#endif
