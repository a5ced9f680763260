/* SPDX-License-Identifier: MIT */
/* Internals shared by the store's files (weightdb.c, txn.c, audit.c,
 * history.c, keys.c): the handles' layouts and the raw LMDB helpers.
 * Nothing outside src/store/ includes this header, so MDB_* types stay
 * inside the store. */
#ifndef GSLB_WEIGHTDB_INT_H
#define GSLB_WEIGHTDB_INT_H

#include <jansson.h>
#include <lmdb.h>
#include <stddef.h>
#include <stdint.h>

#include "store/weightdb.h"

/* The named sub-databases (weightdb.h lists what each holds). */
enum { DBI_META, DBI_SERVICES, DBI_SVCREC, DBI_NODES, DBI_WEIGHTS, DBI_PLANS,
       DBI_AUDIT, DBI_HEALTH, DBI_STATUS, DBI_METRICS, DBI_HISTORY,
       DBI_CUTOVERS, DBI_COUNT };

struct weightdb {
	MDB_env *env;
	MDB_dbi dbi[DBI_COUNT];
	char *path;
};

struct wdb_reader {
	weightdb_t *db;
	MDB_txn *txn;
	int active;
};

struct wdb_txn {
	weightdb_t *db;
	MDB_txn *txn;
	char *actor;
	json_t *changes;      /* [{kind, key, before, after}] */
	json_t *services;     /* set of services whose plans must be rebuilt */
	json_t *nodes;        /* set of nodes that changed */
	int table_changed;    /* the operator's table changed */
	int metrics_changed;  /* pushed metrics changed */
};

/** Stores @len bytes of @data under NUL-terminated @key in sub-database
 * @dbi of @t.  Returns 0 or GSLB_EIO. */
int wdb__put_raw(wdb_txn_t *t, int dbi, const char *key, const void *data,
                 size_t len);

/** Deletes @key from sub-database @dbi of @t; a missing key is no error.
 * Returns 0 or GSLB_EIO. */
int wdb__del_raw(wdb_txn_t *t, int dbi, const char *key);

/** Calls @fn for every record of @dbi whose key starts with @prefix
 * (NULL: all), in key order, until @fn returns non-zero.  The values
 * point into @txn.  Returns what @fn last returned, 0 when it never
 * stopped, or GSLB_EIO. */
int wdb__each_raw(MDB_txn *txn, MDB_dbi dbi, const char *prefix,
                  int (*fn)(const MDB_val *k, const MDB_val *v, void *arg),
                  void *arg);

/** Appends the audit record of @t (its actor, @what, its changes) with
 * the next id and advances meta "seq", inside @t.  Returns the id (> 0)
 * or GSLB_EIO with the reason in @err; the caller then aborts @t. */
int64_t wdb__audit_append(wdb_txn_t *t, const char *what, char *err,
                          size_t errlen);

/** The 8-byte big-endian form of audit id @id (the audit key and the
 * value of meta "seq"), and back. */
void wdb__id_key(uint8_t kb[8], uint64_t id);
uint64_t wdb__id_of(const uint8_t kb[8]);

/* A history key: the node id (at most 200 bytes), the separator and a
 * big-endian time. */
#define WDB_HISTORY_KEY_MAX 256

/** Writes the history key of (@node, @time) into @k.  Returns its
 * length. */
size_t wdb__history_key(uint8_t k[WDB_HISTORY_KEY_MAX], const char *node,
                        uint32_t time);

#endif
