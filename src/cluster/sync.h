/* SPDX-License-Identifier: MIT */
/* The operator's table between etcd and the local store: where each
 * object lives in etcd, the full resync (range, then the difference
 * written into LMDB) and the application of one etcd revision's changes.
 *
 * Layout under the cluster prefix P:
 *   P config/KIND/KEY  the object (KIND service, node, weight, cutover or
 *                      budget), the same JSON as the local store holds;
 *                      KIND health: the elected instance's decision about
 *                      a node (the store's health record, with the
 *                      combined verdict of every vantage); KIND steer:
 *                      the steering engine's state of a row, written by
 *                      the elected instance with the shares it puts in
 *                      the row (S3-3)
 *   P change           the audit record of the last change ({actor,
 *                      what, time, instance, count}); every writer puts it
 *                      in the same transaction as its change and compares
 *                      its revision with the one it read, so no update is
 *                      lost
 *   P members/NAME     a live instance (on its lease)
 *   P decided          the audit record of the last decision of the
 *                      elected instance (the "change" of its writes)
 *   P health/NODE/NAME one instance's view of a node (on its lease):
 *                      its verdict, weight, score and the latency of each
 *                      probe (cluster/quorum.h), the latency matrix
 *   P leader           the instance that makes automatic decisions (on
 *                      its lease; created only when absent)
 *
 * The store's meta "clusterrev" is the etcd revision the local table
 * reflects, "changerev" the revision of the last operator's change in
 * it (P change's); a change of revision R is applied only when clusterrev < R,
 * inside the same LMDB transaction, so gslbd's watch and gslbctl may
 * both apply without going back in time.  Thread-safe as the store is:
 * one transaction per thread. */
#ifndef GSLB_CLUSTER_SYNC_H
#define GSLB_CLUSTER_SYNC_H

#include <jansson.h>
#include <stdint.h>

#include "cluster/etcd.h"
#include "store/weightdb.h"

/** Whether @kind is kept in etcd (service, node, weight, cutover,
 * budget, and the elected instance's decisions: health, steer). */
int cluster_kind_shared(wdb_kind_t kind);

/** The shared kind named @name ("node") in *@kind: 1, or 0 when
 * @name is no kind kept in etcd. */
int cluster_kind_by_name(const char *name, wdb_kind_t *kind);

/** The name of shared kind @kind ("node"), NULL for a kind not kept in
 * etcd. */
const char *cluster_kind_name(wdb_kind_t kind);

/** Writes the etcd key of (@kind, @key) under @prefix into @out. */
void cluster_key(char *out, size_t size, const char *prefix, wdb_kind_t kind,
                 const char *key);

/** Splits etcd key @ekey under @prefix: returns 1 with the kind and a
 * pointer to the object key inside @ekey when it is a table key, else 0. */
int cluster_parse_key(const char *prefix, const char *ekey, wdb_kind_t *kind,
                      const char **key);

/** Opens the write transaction (of @actor on @db) that applies what etcd
 * revision @rev brings, unless the store's meta counter @counter
 * ("clusterrev" for the table, "feedrev" for pushed measurements)
 * already holds @rev or a later one: the caller moves @counter to @rev
 * in the same transaction.  Returns 1 with the transaction in *@t, 0
 * when there is nothing to apply (*@t NULL), or GSLB_EIO with @err. */
int cluster_begin_rev(weightdb_t *db, const char *actor, const char *counter,
                      int64_t rev, wdb_txn_t **t, char *err, size_t errlen);

/** Applies @changes ([{kind, key, after}], "after" null for a deletion)
 * of etcd revision @rev to @db on behalf of @actor, with audit text
 * @what, unless the store already reflects @rev.  Returns 1 applied (the
 * audit id in *@id when non-NULL), 0 already there, or a negative error
 * with @err. */
int cluster_apply(weightdb_t *db, int64_t rev, json_t *changes,
                  const char *actor, const char *what, int64_t *id,
                  char *err, size_t errlen);

/** As cluster_apply(), for a revision that moved the change marker (an
 * operator's change: P change was written with it): the store records
 * @rev as the revision of its last change too (meta "changerev"). */
int cluster_apply_change(weightdb_t *db, int64_t rev, json_t *changes,
                         const char *actor, const char *what, int64_t *id,
                         char *err, size_t errlen);

/** Reads the whole table and the last change's revision from etcd in one
 * transaction and makes the local store equal to it, unless it already
 * reflects a later revision.  *@rev: the revision read; *@marker: the
 * revision of the last change (0: none).  Returns the number of objects
 * changed (>= 0) or an error with @err (GSLB_EIO: etcd unreachable). */
int cluster_resync(weightdb_t *db, etcd_t *e, const char *prefix,
                   const char *actor, int64_t *rev, int64_t *marker,
                   char *err, size_t errlen);

/** As cluster_resync(), also when the store already reflects the
 * revision read (not a later one): after a divergence (the table found
 * different from etcd's at the same revision, cluster/digest.h).  Keeps
 * the declared overrides (cluster/override.h).  Returns the objects
 * changed or an error with @err. */
int cluster_resync_force(weightdb_t *db, etcd_t *e, const char *prefix,
                         const char *actor, int64_t *rev, char *err,
                         size_t errlen);

/** Reads the table from etcd in one transaction, at revision @at (0:
 * the current one), into *@table ({kind name: {key: object}}, a new
 * reference), with the revision read in *@rev and the last change's in
 * *@marker.  Returns 0 or an error with @err (GSLB_EIO: etcd
 * unreachable; a revision compacted away is etcd's error). */
int cluster_read_table(etcd_t *e, const char *prefix, int64_t at,
                       json_t **table, int64_t *rev, int64_t *marker,
                       char *err, size_t errlen);

/** The revision of the last change (*@marker, 0: none) and the store's
 * current revision (*@rev).  Returns 0 or an error with @err. */
int cluster_marker(etcd_t *e, const char *prefix, int64_t *rev,
                   int64_t *marker, char *err, size_t errlen);

/** The etcd revision @db reflects (meta "clusterrev"). */
int64_t cluster_local_rev(weightdb_t *db);

/** The revision of the last operator's change @db reflects (meta
 * "changerev": the change marker's, as the full read found it or as a
 * change applied moved it): the same on every instance that is up to
 * date, while "clusterrev" also counts revisions of other keys that a
 * full read happened to see. */
int64_t cluster_local_change(weightdb_t *db);

#endif
