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

/* A history key: the node id (at most 200 bytes), the separator and a
 * big-endian time. */
#define WDB_HISTORY_KEY_MAX 256

/* The named sub-databases (weightdb.h lists what each holds). */
enum { DBI_META, DBI_SERVICES, DBI_SVCREC, DBI_NODES, DBI_WEIGHTS, DBI_PLANS,
       DBI_AUDIT, DBI_HEALTH, DBI_STATUS, DBI_METRICS, DBI_HISTORY,
       DBI_CUTOVERS, DBI_HISTTIME, DBI_BUDGETS, DBI_STEERIN, DBI_STEER,
       DBI_NODEROWS, DBI_DNSSEC, DBI_OVERRIDES, DBI_APITOKENS, DBI_COUNT };

struct weightdb {
	MDB_env *env;
	MDB_dbi dbi[DBI_COUNT];
	char *path;
	int read_only;        /* opened with MDB_RDONLY: no write transaction */
	int log_full;         /* log when the store fills up and recovers */
	int leave_room;       /* writes stop short of the room kept for health
	                         decisions (wdb_options_t) */
	int full;             /* the last write of this process hit the map size */
	int64_t full_logged;  /* util_mono_sec() of the last "store full" log */
	int full_said;        /* that log is not yet followed by a success */
	/* The oldest audit record as the last trim saw it (audit.c): its
	 * key, size and time, so that a record too young to go is not
	 * parsed again at every trim (one apply of a large table is one
	 * record of tens of MB).  Only the trimming thread uses them. */
	uint64_t audit_head_id;
	size_t audit_head_size;
	char audit_head_time[32];
	/* Where the sweep of the steering inputs stopped (inputs.c): the
	 * last key it looked at, 0 bytes to start from the first.  Only the
	 * trimming thread uses it. */
	char sweep_key[512];
	size_t sweep_len;
};

/* A reader's cache of lookups (weightdb.c, "Readers"): direct-mapped,
 * WDB_CACHE_SLOTS entries of one service record or plan each, valid for
 * the snapshot (LMDB transaction id) they were read from. */
#define WDB_CACHE_SLOTS 512
#define WDB_CACHE_KEY 104     /* longer keys are not cached */

typedef struct {
	size_t txnid;         /* the snapshot of the entry; 0 = empty */
	uint64_t hash;
	uint8_t dbi;          /* DBI_SVCREC or DBI_PLANS */
	uint8_t klen;
	uint8_t found;        /* 0: the key is absent (a cached miss) */
	const void *data;     /* into the map: valid while the snapshot is */
	size_t len;
	char key[WDB_CACHE_KEY];
} wdb_cslot_t;

struct wdb_reader {
	weightdb_t *db;
	MDB_txn *txn;
	int active;
	size_t txnid;         /* the snapshot of the last renew */
	wdb_cslot_t *cache;   /* WDB_CACHE_SLOTS */
};

struct wdb_txn {
	weightdb_t *db;
	MDB_txn *txn;
	char *actor;
	json_t *changes;      /* [{kind, key, before, after}] */
	json_t *notes;        /* more fields of the audit record (wdb_txn_note()) */
	json_t *services;     /* set of services whose plans must be rebuilt */
	json_t *nodes;        /* set of nodes that changed */
	int table_changed;    /* the operator's table changed */
	int metrics_changed;  /* pushed metrics changed */
	int dnssec_changed;   /* signing keys or zones changed */
	int inputs_changed;   /* pushed steering inputs changed */
	int rc;               /* the first failed write (sticky): commit refuses */
	int read_only;        /* from wdb_begin_read(): wdb_set() refuses */
	uint64_t live_begin;  /* the bytes of all but the audit log at the start
	                         (leave_room) */
};

/** The bytes of the pages that hold data in @txn (meta pages, every
 * sub-database's tree and the free list's own tree; not the free pages
 * a write reuses): O(1), from the trees' page counts. */
uint64_t wdb__live_bytes(MDB_txn *txn, weightdb_t *db);

/** The marks of room for health decisions in a map of @map bytes
 * (weightdb.h, WDB_ROOM_SHARE): writes of a leave_room process stop at
 * @limit, weightdb_make_room() trims past @high down to @low. */
typedef struct { uint64_t map, limit, high, low; } wdb_marks_t;
void wdb__marks(weightdb_t *db, wdb_marks_t *m);

/** The time (unix) of the oldest audit record and of the oldest history
 * sample in @t.  Return 0, or GSLB_ENOENT when there is none. */
int wdb__audit_oldest(wdb_txn_t *t, uint32_t *when);
int wdb__history_oldest(wdb_txn_t *t, uint32_t *when);

/** The GSLB_E* code of LMDB result @rc: GSLB_ENOSPC for a full map,
 * GSLB_ENOENT for a missing key, GSLB_EIO for anything else. */
int wdb__code(int rc);

/** Notes the failed write @rc in @t (the first one sticks, so that the
 * commit refuses with the real cause).  Returns @rc. */
int wdb__fail(wdb_txn_t *t, int rc);

/** Deletes every history sample of @node in @t, with its time index
 * entries.  Returns 0 or an error. */
int wdb__history_drop(wdb_txn_t *t, const char *node);

/** Deletes, oldest first, the history samples older than @before and
 * the audit records older than @before (unix times), at most *@budget of
 * them, which they decrease.  Both stop at the first record to keep.
 * Return 0 or an error. */
int wdb__history_trim_n(wdb_txn_t *t, uint32_t before, unsigned *budget);
int wdb__audit_trim(wdb_txn_t *t, uint32_t before, unsigned *budget);

/* The steering input and spend records looked at by one trim. */
#define WDB_SWEEP 4096

/** Looks at the next WDB_SWEEP records of "steerin" and deletes those
 * whose WDB_RETAIN_FROM is older than @w's inputs_before ("n|" keys) or
 * spend_before ("p|" keys), stamping those without one with @w's now;
 * at most *@budget of them, which it decreases.  Returns 0 or an
 * error. */
int wdb__inputs_trim(wdb_txn_t *t, const wdb_trim_t *w, unsigned *budget);

/** Writes the time index key of history sample (@node, @time) into @k:
 * the big-endian time first, so that the index sorts by time.  Returns
 * its length. */
size_t wdb__histtime_key(uint8_t k[WDB_HISTORY_KEY_MAX], const char *node,
                         uint32_t time);

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


/** Adds (@del 0) or removes (@del 1) the node -> row index entries of
 * weight row @key (@keylen bytes) for every node that @row (a weight row
 * object, NULL: none) names, in @txn.  Adding an entry that exists and
 * removing one that does not are no errors.  Returns 0 or an LMDB
 * error. */
int wdb__noderows(MDB_txn *txn, MDB_dbi dbi, const char *key, size_t keylen,
                  json_t *row, int del);

/** Writes the history key of (@node, @time) into @k.  Returns its
 * length. */
size_t wdb__history_key(uint8_t k[WDB_HISTORY_KEY_MAX], const char *node,
                        uint32_t time);

/** Appends the key of record @k to @arg (a JSON array), as a string; a
 * wdb__each_raw() callback that never stops. */
int wdb__collect_key(const MDB_val *k, const MDB_val *v, void *arg);

/** Rebuilds the svcrec record and every plan of service @svc inside @t
 * (rebuild.c), with @cache (node id -> node object) shared by the
 * services of one commit.  Returns 0, GSLB_EINVAL with the reason in
 * @err (a row that cannot be planned, rows of a deleted service), or a
 * write error left in t->rc. */
int wdb__rebuild_service(wdb_txn_t *t, const char *svc, json_t *cache,
                         char *err, size_t errlen);

/** Commits @t's LMDB transaction, bumping the generations its changes
 * touched, and frees @t; 0 or an error with @err (txn.c). */
int wdb__commit_free(wdb_txn_t *t, char *err, size_t errlen);

#endif
