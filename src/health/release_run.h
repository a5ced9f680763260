/* SPDX-License-Identifier: MIT */
/* The gray release controller against the store (S4-10): reads each
 * running or paused release's guards, runs release_step() and writes what
 * it decided into the service's release record, audited, in one write
 * transaction that also rebuilds the plans of the rows concerned.
 *
 * release_run() runs on the health thread once a second, never on a
 * worker; the share it decides reaches the queries through the plans. */
#ifndef GSLB_RELEASE_RUN_H
#define GSLB_RELEASE_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "health/release.h"
#include "store/weightdb.h"

/* Seconds between evaluations: a broken guard rolls back within this
 * much of its input arriving, and a step lasts at most this much more
 * than its --every. */
#define RELEASE_EVAL_EVERY 1.0

/** Fills @obs[0..@r->nguards) for release @rel (its record) of service
 * as read in @t: the node's live score (status record), and the newest
 * pushed success and latency taken after the second the step began, from the
 * most specific input record of the release's region and ISP.  Used by
 * the controller and by `gslbctl release show`. */
void release_observe(wdb_txn_t *t, json_t *rel, const release_t *r,
                     release_obs_t *obs);

/** One evaluation of every release at @now: widens, completes or rolls
 * back what release_step() says, in one write transaction (none when
 * nothing changes).  Returns the number of releases changed, or a
 * negative error with the reason in @err. */
int release_run(weightdb_t *db, uint32_t now, char *err, size_t errlen);

#endif
