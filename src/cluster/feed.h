/* SPDX-License-Identifier: MIT */
/* Pushed measurements through etcd: in cluster mode `gslbctl metrics
 * push` (and `--file`) validates a push on its local store as in
 * standalone mode, then puts its words under P metrics/ instead of
 * committing them, and every gslbd's watch applies them into its own
 * store through push_apply() (health/push.h), the code of a local push.
 * So a feeder pushes to any one instance and every instance's store,
 * the elected one's included, gets the measurements.
 *
 * Layout: P metrics/TIME-INSTANCE-PID-NONCE/NNNN, one key per chunk of
 * at most FEED_CHUNK_LINES lines of one push, all chunks in one etcd
 * transaction (one revision), on a lease of the samples' retention: etcd
 * holds the pushes of that long and no more.  The value:
 *   {"at": T, "keep": S, "by": ACTOR, "instance": NAME,
 *    "lines": [[word, ...], ...]}
 * The pushes are not part of the compare-the-revision transactions of
 * the table (P change is not touched), so a feeder never meets "changed
 * by someone else", and an operator's write never meets a feeder's.
 *
 * Exactly once per store: the store's meta "feedrev" is the revision of
 * the last push applied, and a push of revision R is applied only when
 * feedrev < R, in the same LMDB transaction that moves feedrev.
 *
 * Thread safety: as the store's (one transaction per thread) and
 * etcd_t's (one thread at a time). */
#ifndef GSLB_CLUSTER_FEED_H
#define GSLB_CLUSTER_FEED_H

#include <jansson.h>
#include <stdint.h>

#include "cluster/etcd.h"
#include "store/weightdb.h"

/* Lines of one push per etcd key: about 60 bytes a line as JSON, so a
 * chunk stays near 120 KB (160 KB in base64), far below etcd's request
 * limit, while a round of 10,000 lines is 5 keys of one transaction. */
#define FEED_CHUNK_LINES 2000

/** Whether etcd key @ekey is a push under @prefix. */
int cluster_feed_key(const char *prefix, const char *ekey);

/** Puts the pushes @lines ([[word, ...]], borrowed; already validated)
 * of time @at, samples kept @keep seconds and dated at most @skew
 * seconds ahead of @at (push_apply()), by @actor through instance
 * @instance under @prefix, in one transaction on a new lease of @keep
 * seconds.  *@rev: the revision written.  Returns 0, or an error with
 * @err (GSLB_EIO: etcd unreachable) and nothing written. */
int cluster_feed_put(etcd_t *e, const char *prefix, const char *instance,
                     const char *actor, json_t *lines, uint32_t at, double keep,
                     double skew, int64_t *rev, char *err, size_t errlen);

/** Applies the pushes @values (the decoded values of one revision's
 * keys, in key order, borrowed) of revision @rev into @db, unless the
 * store already holds @rev.  A line that no longer passes (its node was
 * deleted since) is logged and skipped.  Returns the lines applied
 * (>= 0) or a store error with @err. */
int cluster_feed_apply(weightdb_t *db, int64_t rev, json_t *values,
                       char *err, size_t errlen);

/** Applies every push still in etcd under @prefix at revision @rev that
 * the store does not hold yet, in revision order (a full resync).
 * Returns 0 or an error with @err. */
int cluster_feed_load(weightdb_t *db, etcd_t *e, const char *prefix,
                      int64_t rev, char *err, size_t errlen);

#endif
