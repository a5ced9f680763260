/* SPDX-License-Identifier: MIT */
/* The digest of the table: what tells that an instance's store holds
 * the table etcd holds at the store's revision (meta "clusterrev").
 * Each object of a kind kept in etcd (cluster/sync.h) counts as the
 * 64-bit hash of its kind, key and canonical JSON (compact, sorted
 * keys); the digest is the sum of those hashes and the count, so that it
 * does not depend on the order objects are read in, and one side may be
 * the store and the other etcd's range.  An object under a declared
 * local override (cluster/override.h) counts as the cluster's object.
 * A health decision about a node that is not in the table is not
 * counted (the store never keeps one).  Not a defence against an
 * adversary: a check that two copies agree.  Thread-safe. */
#ifndef GSLB_CLUSTER_DIGEST_H
#define GSLB_CLUSTER_DIGEST_H

#include <jansson.h>
#include <stdint.h>

#include "store/weightdb.h"

typedef struct cluster_digest {
	uint64_t sum;     /* the sum of the objects' hashes */
	uint64_t count;   /* the objects counted */
} cluster_digest_t;

/** Counts object (@kind, @key) = @val into @d. */
void cluster_digest_add(cluster_digest_t *d, wdb_kind_t kind, const char *key,
                        json_t *val);

/** Whether @a and @b are the digest of the same table. */
int cluster_digest_equal(const cluster_digest_t *a, const cluster_digest_t *b);

/** The digest of @table ({kind name: {key: object}}, as
 * cluster_read_table() gives it) into @d. */
void cluster_digest_table(json_t *table, cluster_digest_t *d);

/** The digest of the table @db holds into @d, with the revision it
 * reflects in *@rev and its overrides' count in *@overrides (when not
 * NULL), all of one read transaction.  Returns 0 or GSLB_EIO. */
int cluster_digest_store(weightdb_t *db, cluster_digest_t *d, int64_t *rev,
                         unsigned *overrides);

#endif
