/* SPDX-License-Identifier: MIT */
/* Declared local overrides in cluster mode: the break-glass path by
 * which an operator changes one instance's copy of the table while etcd
 * is down (gslbctl --local-override).  An override is a record of the
 * store (WDB_OVERRIDE, key "KIND/KEY"):
 *
 *   { "kind": "node", "key": "a",
 *     "patch": { "admin": "drain" },   top-level fields set over
 *     "cluster": { ... } | null,       the cluster's object, kept current
 *     "actor", "time", "what",         who, when, the change
 *     "revision": N }                  the etcd revision it was made at
 *
 * The table holds the cluster's object with the patch over it.  Every
 * write from etcd to an overridden object (the watch, a full read)
 * updates "cluster" and keeps the patch over it, so an override is never
 * silently lost; it goes only when gslbctl pushes it to the cluster or
 * drops it.  The table's digest (cluster/digest.h) counts the cluster's
 * object, so a declared override is no divergence.  Which changes may be
 * overrides: a node's admin state drain or down, a weight row's
 * weights.  Pure functions over a store transaction: thread-safe as the
 * store is. */
#ifndef GSLB_CLUSTER_OVERRIDE_H
#define GSLB_CLUSTER_OVERRIDE_H

#include <jansson.h>
#include <stddef.h>

#include "store/weightdb.h"

/** The override record's key of (@kind, @key) into @out ("node/a"). */
void cluster_override_key(char *out, size_t size, wdb_kind_t kind,
                          const char *key);

/** The table's object for cluster object @cluster (NULL: none) under
 * @patch: a copy of @cluster with @patch's fields set over it, or NULL
 * when @cluster is NULL (an object the cluster deleted is not brought
 * back).  Returns a new reference. */
json_t *cluster_override_merge(json_t *cluster, json_t *patch);

/** Whether the change of (@kind, @key) from @before to @after may be
 * an override: 1 with the patch (new reference) in *@patch, else 0 with
 * the reason in @why ("only a node's admin drain or down, or a weight
 * row's weights, can be overridden"). */
int cluster_override_allowed(wdb_kind_t kind, const char *key, json_t *before,
                             json_t *after, json_t **patch, char *why,
                             size_t whylen);

/** Records in @t the override of (@kind, @key) by @patch, over the
 * cluster's object @cluster (used only when no override is there yet:
 * a second override of the same object keeps the first one's cluster
 * object and merges the patches).  Returns 0 or a store error. */
int cluster_override_put(wdb_txn_t *t, wdb_kind_t kind, const char *key,
                         json_t *cluster, json_t *patch, const char *actor,
                         const char *what, int64_t rev);

/** A write from etcd of (@kind, @key) to @val (NULL: a deletion) in @t:
 * when the object has an override, the override takes @val as the
 * cluster's object and *@out gets what the table holds instead (a new
 * reference, NULL for a deletion); returns 1.  Returns 0 (no override,
 * *@out untouched) or a store error. */
int cluster_override_keep(wdb_txn_t *t, wdb_kind_t kind, const char *key,
                          json_t *val, json_t **out);

/** Every override of @t's store: {"KIND/KEY": record} (new reference,
 * never NULL). */
json_t *cluster_override_list(wdb_txn_t *t);

/** One line about override record @rec into @out: "node a: admin drain
 * (since 2026-12-02T15:00:00Z, gslbctl:root, at etcd revision 42)". */
const char *cluster_override_text(json_t *rec, char *out, size_t size);

#endif
