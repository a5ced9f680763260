/* SPDX-License-Identifier: MIT */
/* The weight store: one LMDB environment with named sub-databases.
 *
 *   meta      "schema" -> version; "seq" -> last audit id;
 *             "clusterrev" -> the etcd revision applied (cluster mode);
 *             "cluster" -> the prefix of the cluster the store is a
 *             member's copy of (a string: wdb_meta_str())
 *   services  name -> JSON service object
 *   svcrec    name -> svc_rec_t (binary, derived, read by the workers)
 *   nodes     id -> JSON node object
 *   weights   "service|region|isp" -> JSON row object
 *   plans     "service|region|isp" -> binary answer plan (store/plan.h),
 *             rebuilt in the same write transaction as any change that
 *             affects it, so a query needs one get per row it tries
 *   health    node id -> JSON health decision (audited, feeds plans)
 *   status    node id -> JSON live score, dimensions, last probes
 *   metrics   node id -> JSON pushed passive metrics with timestamps
 *   history   "node|" + big-endian time -> JSON score sample (bounded)
 *   histtime  big-endian time + "node" -> nothing: the history in time
 *             order, so that trimming deletes from the front
 *   cutovers  window id -> JSON cutover window (audited; the health
 *             thread turns it into node health records)
 *   audit     big-endian id -> JSON change record (appended in id
 *             order, which is time order; trimmed from the front)
 *   budgets   provider name -> JSON budget (limit, period, alert; S3-6)
 *   steerin   "n|node|region|isp" -> JSON recent pushed samples of the
 *             steering inputs (success, latency); "p|provider|YYYY-MM"
 *             -> JSON spend of a provider in a month (S3-6); each with
 *             WDB_RETAIN_FROM, the time its retention counts from, so
 *             that weightdb_trim() bounds the table
 *   steer     "service|region|isp" -> JSON state of the steering engine
 *             for the row (smoothed scores, SLA counters, the last
 *             evaluation): data, not audited; the shares it decides go
 *             into the weight row's "steer" object, audited (S3-7)
 *   noderows  node id -> the keys of the weight rows that name it
 *             (sorted duplicates): kept in the same transaction as the
 *             rows, so that a node change rebuilds the plans of its rows
 *             without reading every row.  Schema 2; a store of schema 1
 *             gets it built at its first read-write open.
 *   dnssec    "ZONE" -> JSON signing state of a zone (enabled, algorithm
 *             of its new keys); "ZONE|TAG" -> JSON key metadata (key tag,
 *             algorithm, flags, role, state, the keystore file, created,
 *             published and active times): the operator's, audited, in
 *             no plan (src/dnssec/keydb.h).  Opened, empty, by any
 *             gslbd that knows it: the schema stays 2.
 *   overrides "KIND/KEY" -> JSON declared local override of a table
 *             object in cluster mode ("node/a": the patch this instance
 *             applies over the cluster's object, the cluster's object,
 *             who and when; cluster/override.h).  Opened, empty, like
 *             dnssec: the schema stays 2.
 *   apitokens token name -> JSON HTTP API token: role, the SHA-256 of
 *             the token (never the token), created, expires, revoked
 *             (api/token.h).  Audited, in no plan; opened, empty, like
 *             dnssec: the schema stays 2.
 *
 * Every MDB_* type stays inside src/store/ (weightdb_int.h).  Writers
 * (gslbctl, the health thread) validate, then commit one write
 * transaction together with its audit record; an abort is the rollback
 * (S0-10, S3-8).  Readers (workers) hold one short read-only transaction
 * per batch of packets.
 *
 * Caveats inherited from LMDB: no long read transactions, one transaction
 * per thread at a time, never use an environment across fork(). */
#ifndef GSLB_WEIGHTDB_H
#define GSLB_WEIGHTDB_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Row keys are part of the interface: gslbctl and the health thread
 * compose and split them with the codec of keys.h. */
#include "store/keys.h"

#define WDB_SCHEMA 2
#define WDB_NAME_MAX 64       /* region, ISP and node id names */

typedef struct weightdb weightdb_t;
typedef struct wdb_reader wdb_reader_t;
typedef struct wdb_txn wdb_txn_t;

/* What the workers read for a service name (binary, versioned). */
enum { SVC_ALL_DOWN_OPEN = 0, SVC_ALL_DOWN_FALLBACK = 1, SVC_ALL_DOWN_EMPTY = 2 };
enum {
	SVC_STICKY = 1,
	SVC_CLIENT_ROWS = 2,      /* has rows other than (*,*) */
	/* Which kinds of rows exist, so that a query skips the gets of the
	 * chain levels the service has no row for (valid with SVC_ROW_KNOWN). */
	SVC_ROW_REGION_ISP = 4, SVC_ROW_REGION = 8, SVC_ROW_ISP = 16,
	SVC_ROW_DEFAULT = 32, SVC_ROW_KNOWN = 64,
};
typedef struct svc_rec {
	uint8_t version;
	uint8_t answers;
	uint8_t all_down;
	uint8_t flags;
	uint32_t ttl;
	uint32_t short_ttl;
} svc_rec_t;

/* Object kinds.  SERVICE, NODE and WEIGHT are the operator's table;
 * HEALTH holds the health thread's decisions per node (state, usable,
 * effective weight, short-TTL deadline): like the table, a change of it is
 * audited and rebuilds the plans that name the node.  STATUS (live scores
 * and probe results) and METRICS (pushed passive metrics) are data, not
 * decisions: neither audited nor part of any plan.  BUDGET is the
 * operator's (audited); STEERIN (pushed steering inputs) and STEER (the
 * engine's state) are data like METRICS.  DNSSEC (signing keys'
 * metadata) is the operator's too, audited, and touches no plan.
 * OVERRIDE (cluster mode) holds the declared local overrides of this
 * instance (cluster/override.h): audited, in no plan itself (the object
 * it overrides is).  APITOKEN (the HTTP API's tokens) is the operator's,
 * audited, and touches no plan nor the table's generation. */
typedef enum { WDB_SERVICE, WDB_NODE, WDB_WEIGHT, WDB_HEALTH, WDB_STATUS,
               WDB_METRICS, WDB_CUTOVER, WDB_BUDGET, WDB_STEERIN, WDB_STEER,
               WDB_DNSSEC, WDB_OVERRIDE, WDB_APITOKEN, WDB_KIND_COUNT } wdb_kind_t;

/* The default map size: the most the store may ever hold.  The map is a
 * sparse file's address space, so a large value costs nothing. */
#define WDB_MAP_SIZE_DEFAULT ((size_t)16 << 30)

/* What a write that finds the map full reports where the store is not
 * at hand (wdb_strerror()); with it, the message names the map size
 * too. */
#define WDB_FULL_MSG "store full: raise database.map-size and restart " \
                     "gslbd, or delete what the table no longer needs"

/* Room for health decisions (DESIGN-NOTES "Room in the store"): the top
 * WDB_ROOM_SHARE of the map (at least WDB_ROOM_MIN bytes) is kept for
 * the daemon's writes: a write of a process opened with
 * wdb_options_t.leave_room (gslbctl) that would leave the store's data
 * in it is refused.  Past the next share down (the high-water mark)
 * weightdb_make_room() deletes audit records and score history, oldest
 * first, until the data is below the share under that (the low-water
 * mark): a 1M map keeps 128K, trims past 768K, down to 640K. */
#define WDB_ROOM_SHARE 8
#define WDB_ROOM_MIN ((uint64_t)128 << 10)

/** How weightdb_open_opts() opens the store. */
typedef struct wdb_options {
	/* The map size in bytes (database.map-size).  0: the size the store
	 * records (set by gslbd at its start), or WDB_MAP_SIZE_DEFAULT for a
	 * new store.  LMDB never maps less than the data already uses. */
	size_t map_size;
	/* MDB_RDONLY: no write transaction, not even at open, so that
	 * readers never take the write lock and a user without write access
	 * to data.mdb can read.  The user still needs write access to
	 * lock.mdb (LMDB registers its readers there). */
	int read_only;
	/* Log (once) when a write finds the store full, and when writes
	 * succeed again: gslbd sets it, gslbctl reports to its caller. */
	int log_full;
	/* A process that is not the store's owner (gslbctl): the map size
	 * it is configured with (database.map-size; 0: none given).  A new
	 * store, or one gslbd never opened, is created and mapped with it
	 * and records it; a store that records a size is mapped at the
	 * smaller of the two, so that this process never grows the data
	 * past what gslbd maps.  Ignored with map_size. */
	size_t conf_map_size;
	/* Writes stop short of the room kept for health decisions
	 * (WDB_ROOM_SHARE): gslbctl sets it, gslbd's own writes use it. */
	int leave_room;
} wdb_options_t;

/** Opens (creating directory, environment and sub-databases when
 * missing, unless read-only) the store at @path as @o says (NULL: the
 * recorded map size, read-write, quiet).  Returns NULL with the reason
 * in @err. */
weightdb_t *weightdb_open_opts(const char *path, const wdb_options_t *o,
                               char *err, size_t errlen);
/** weightdb_open_opts() with @o NULL. */
weightdb_t *weightdb_open(const char *path, char *err, size_t errlen);
void weightdb_close(weightdb_t *db);

/** What the statistics report about a store. */
typedef struct wdb_info {
	uint64_t table_generation;   /* as wdb_table_generation() */
	uint64_t last_audit_id;      /* the newest audit record, 0: none */
	int64_t last_commit;         /* its time (unix), 0: none */
	uint64_t map_size;           /* bytes the store may grow to */
	uint64_t used;               /* bytes up to the highest page in use:
	                                a write fails once it needs more
	                                than map_size */
	int full;                    /* the last write of this process found
	                                the map full */
	uint64_t live;               /* bytes of pages holding data (the rest
	                                of `used` is free for reuse) */
	uint64_t room_audit;         /* audit records and history samples */
	uint64_t room_history;       /* weightdb_make_room() deleted, ever */
} wdb_info_t;

/** Fills @out for @db with one short read transaction.  Returns 0 or an
 * error. */
int weightdb_info(weightdb_t *db, wdb_info_t *out);

/** A description of store error @rc: WDB_FULL_MSG for GSLB_ENOSPC. */
const char *wdb_strerror(int rc);
/** What a write that finds @db full reports: WDB_FULL_MSG with the map
 * size, into @buf.  Returns @buf. */
const char *wdb_full_msg(weightdb_t *db, char *buf, size_t len);

/** What weightdb_make_room() did. */
typedef struct wdb_room {
	uint64_t map;                /* the map size */
	uint64_t live_before;        /* bytes holding data before, and */
	uint64_t live_after;         /* after the trim */
	unsigned audit, history;     /* records deleted */
	uint32_t newest;             /* the time of the newest one deleted */
} wdb_room_t;

/** Keeps room for health decisions: when the data passes the high-water
 * mark (WDB_ROOM_SHARE), deletes audit records and history samples
 * oldest first (both tables together, by time), at most @max, until it
 * is below the low-water mark or nothing of them is left, in a write
 * transaction of its own; counts them in the store (meta "roomaudit",
 * "roomhist": wdb_info_t).  Below the mark it reads only, unless
 * @force (a write of the caller's just found the map full: pages freed
 * by the last commits are reused only after a later one), which
 * deletes at least the records of the oldest second.  Returns the
 * number deleted (0: none needed) with @out filled, or a negative
 * error. */
int weightdb_make_room(weightdb_t *db, unsigned max, int force,
                       wdb_room_t *out);
/** What weightdb_make_room() did, as gslbd logs it and gslbctl notes
 * it, into @buf.  Returns @buf. */
const char *wdb_room_msg(const wdb_room_t *r, char *buf, size_t len);

/* The field of every "steerin" record that says from when its
 * retention counts (unix time): the last push of an input record, the
 * end of the budget period of a spend record.  Written by the pushes
 * (health/push.h), read by weightdb_trim(). */
#define WDB_RETAIN_FROM "retain_from"

/** What weightdb_trim() deletes: the records older than each time (unix
 * times; 0: none of that kind). */
typedef struct wdb_trim {
	uint32_t audit_before;    /* audit records (S3-7) */
	uint32_t history_before;  /* score history samples (S2-10) */
	uint32_t inputs_before;   /* steering input records ("n|") whose
	                             WDB_RETAIN_FROM is older */
	uint32_t spend_before;    /* spend records ("p|") likewise */
	uint32_t now;             /* the WDB_RETAIN_FROM given to a record
	                             that has none (written before it was
	                             kept), so that it goes a retention later */
} wdb_trim_t;

/** Deletes what @w says, at most @max records, in a write transaction
 * of its own.  Audit records and history samples go oldest first: both
 * tables are in time order, so the work is the records deleted, never a
 * scan.  The steering inputs and spend records are looked at a part of
 * the table at a time (WDB_SWEEP records per call, from where the last
 * call stopped), so a call costs the same however large the table is;
 * a stamp given to a record without WDB_RETAIN_FROM counts as one of
 * the @max.  Returns the number of records deleted or stamped (@max:
 * call again) or a negative error. */
int weightdb_trim(weightdb_t *db, const wdb_trim_t *w, unsigned max);

/** Commits of this process no longer wait for the disk; weightdb_sync()
 * then flushes, from a thread of the caller's choosing.  gslbd uses this
 * so that the health thread's commits never stall its probes on fsync:
 * the main thread syncs once a second.  LMDB keeps the store consistent
 * (on file systems that keep write order, as ext4 and xfs do); a power
 * loss can lose the last second of health decisions, which the thread
 * makes again. */
void weightdb_set_nosync(weightdb_t *db);
/** Flushes committed transactions to disk. */
int weightdb_sync(weightdb_t *db);

/* Readers --------------------------------------------------------- */

/** A reader for one thread (allocated once, at start-up). */
wdb_reader_t *wdb_reader_new(weightdb_t *db);
void wdb_reader_free(wdb_reader_t *r);
/** Releases the read transaction if held (end of a batch). */
void wdb_reader_release(wdb_reader_t *r);
/** The snapshot (LMDB transaction id) the reader reads while it holds its
 * transaction: results read under one id stay valid while later batches
 * renew to the same id (weightdb.c, "Readers"). */
size_t wdb_reader_txnid(const wdb_reader_t *r);
/** Takes the reader's transaction if it does not hold it yet.  Returns
 * its id (wdb_reader_txnid()), or 0 when the store cannot be read. */
size_t wdb_reader_begin(wdb_reader_t *r);
/** Reads the service record of lowercase presentation name @name (no
 * final dot).  The transaction is taken on first use after a release.
 * Returns 0, GSLB_ENOENT, or another error. */
int wdb_service(wdb_reader_t *r, const char *name, size_t len, svc_rec_t *out);
/** Finds the plan of row (@svc, @region, @isp); @data stays valid until
 * wdb_reader_release().  Returns 0 or GSLB_ENOENT. */
int wdb_plan(wdb_reader_t *r, const char *svc, size_t svclen,
             const char *region, const char *isp, const uint8_t **data,
             size_t *len);

/* Writers --------------------------------------------------------- */

/** Begins a write transaction on behalf of @actor (e.g. "gslbctl:root"). */
wdb_txn_t *wdb_begin(weightdb_t *db, const char *actor, char *err,
                     size_t errlen);
/** Begins a read-only transaction usable with wdb_get() and wdb_each();
 * end it with wdb_abort().  Writers are never blocked by it, and it sees
 * the store as of its start (LMDB caveat: keep it short).  wdb_set() on
 * it fails with GSLB_EINVAL. */
wdb_txn_t *wdb_begin_read(weightdb_t *db);

/** The JSON object of (@kind, @key), a new reference, or NULL. */
json_t *wdb_get(wdb_txn_t *t, wdb_kind_t kind, const char *key);
/** Stores (@val non-NULL) or deletes (@val NULL) an object; records the
 * before/after pair for the audit record.  Returns 0 or an error; a
 * failed write also makes wdb_commit() refuse with its cause.
 *
 * The records about a node live and die with it:
 * - deleting a node deletes its health, status, metrics and history in
 *   the same transaction, so a node added again under the same id starts
 *   without the old verdict;
 * - a node without probes has no health verdict (nothing would ever
 *   evaluate it again): storing such a node drops the verdict fields of
 *   its health record, keeping only cutover derating and a standby's
 *   promotion, and a health record written for it later is stripped the
 *   same way; its status record (live score, last probe results) goes;
 * - a health, status or metrics record of a node that does not exist is
 *   refused with GSLB_ENOENT (a late write of the health thread about a
 *   node just deleted); this is not a failed write: the transaction
 *   stays good. */
int wdb_set(wdb_txn_t *t, wdb_kind_t kind, const char *key, json_t *val);
/** Adds field @field with value @val (which it takes) to the audit
 * record @t's commit writes, beside id, time, actor, what and changes
 * (which it never replaces) and "host" (the machine's name, unless
 * noted: the HTTP API notes the client's address): gslbctl notes its "user", and a rollback the change it
 * "undoes". */
void wdb_txn_note(wdb_txn_t *t, const char *field, json_t *val);
/** The audit record @t's commit as @what would write, without its id:
 * time, actor, what, changes, host and the notes (new reference; NULL
 * when out of memory).  Cluster mode sends it with the change. */
json_t *wdb_audit_record(wdb_txn_t *t, const char *what);
/** The next cutover window number, never one used before in this store,
 * even by a window deleted or rolled back since: one more than the
 * highest of @floor (the highest number in use), the counter kept in
 * meta "cutoverseq" and, while that counter is not yet kept, every
 * window id in the audit log.  Advances the counter inside @t, so an
 * aborted @t gives the number back.  Returns it, or 0 on a failed
 * write. */
uint64_t wdb_cutover_next_id(wdb_txn_t *t, uint64_t floor);
/** Calls @fn for every object of @kind whose key starts with @prefix
 * (NULL: all), in key order; stops when @fn returns non-zero. */
int wdb_each(wdb_txn_t *t, wdb_kind_t kind, const char *prefix,
             int (*fn)(const char *key, json_t *val, void *arg), void *arg);
/** Calls @fn with the key of every weight row that names node @id in
 * @t (NUL-terminated, valid during the call), in key order, until @fn
 * returns non-zero.  Reads the node -> row index: the work is the rows
 * of @id, never a scan of the table.  Returns what @fn last returned, 0
 * when it never stopped, or GSLB_EIO. */
int wdb_node_rows(wdb_txn_t *t, const char *id,
                  int (*fn)(const char *row, void *arg), void *arg);
/** Validates references, rebuilds the affected plans, appends the audit
 * record describing @what and commits.  Returns the audit id (> 0) or a
 * negative error with the reason in @err; on error nothing is written. */
int64_t wdb_commit(wdb_txn_t *t, const char *what, char *err, size_t errlen);
void wdb_abort(wdb_txn_t *t);
/** Runs the checks of wdb_commit() (references, plans rebuilt) inside
 * @t without committing, so that a caller can validate a change that is
 * stored elsewhere first (cluster mode).  Returns 0 (@t stays open: read
 * wdb_changes(), then wdb_abort() or wdb_commit()) or an error with the
 * reason in @err, @t then aborted and freed. */
int wdb_check(wdb_txn_t *t, char *err, size_t errlen);
/** The changes of @t so far: [{kind, key, before, after}] (borrowed;
 * valid until @t ends). */
json_t *wdb_changes(wdb_txn_t *t);
/** An unsigned counter @name of the store's meta table (0 if unset),
 * read in @t; and its update, inside @t (0 or an error).  Names in use:
 * "tablegen", "metricsgen", "inputsgen", "clusterrev", "changerev"
 * (cluster/sync.h), "feedrev", "dnssecgen" (bumped by every commit that
 * changes the dnssec table). */
uint64_t wdb_meta_u64(wdb_txn_t *t, const char *name);
int wdb_set_meta_u64(wdb_txn_t *t, const char *name, uint64_t v);
/** A string @name of the store's meta table into @out (of @size; ""
 * and 0 when unset, 1 when set), read in @t; and its update, inside @t
 * (0 or an error).  Names in use: "cluster" (weightdb.h, meta). */
int wdb_meta_str(wdb_txn_t *t, const char *name, char *out, size_t size);
int wdb_set_meta_str(wdb_txn_t *t, const char *name, const char *v);

/** Calls @fn for every audit record with id > @since_id, oldest first,
 * using its own read transaction. */
int wdb_audit_each(weightdb_t *db, int64_t since_id,
                   int (*fn)(int64_t id, json_t *rec, void *arg), void *arg);
/** The audit record @id (new reference) or NULL. */
json_t *wdb_audit_get(weightdb_t *db, int64_t id);
/** The newest audit id, 0 if none. */
int64_t wdb_audit_last(weightdb_t *db);

/** A counter bumped by every commit that changes the operator's table
 * (services, nodes, weights, cutovers). */
uint64_t wdb_table_generation(wdb_txn_t *t);
/** When node @id was added: the table generation of the commit that
 * added it (0: before stamps were kept, or no such node).  A node
 * deleted and added again under its id gets a new stamp, so that a
 * reader that missed both changes still sees a different node. */
uint64_t wdb_node_born(wdb_txn_t *t, const char *id);
/** A counter bumped by every commit that changes pushed metrics. */
uint64_t wdb_metrics_generation(wdb_txn_t *t);
/** A counter bumped by every commit that changes pushed steering inputs
 * ("steerin": success, latency, bytes, spend). */
uint64_t wdb_inputs_generation(wdb_txn_t *t);

/** Appends a score sample of @node at @time to the history.  Returns 0,
 * GSLB_ENOENT (no such node: nothing written, the transaction stays
 * good) or a write error. */
int wdb_history_add(wdb_txn_t *t, const char *node, uint32_t time, json_t *sample);
/** Deletes history samples older than @before (all nodes), oldest first,
 * stopping at the first sample to keep.  Returns 0 or an error. */
int wdb_history_trim(wdb_txn_t *t, uint32_t before);
/** Calls @fn for the samples of @node at or after @since, oldest first. */
int wdb_history_each(weightdb_t *db, const char *node, uint32_t since,
                     int (*fn)(uint32_t time, json_t *sample, void *arg),
                     void *arg);

#endif
