/* SPDX-License-Identifier: MIT */
/* The LMDB environment (open, schema check, sync) and the workers'
 * readers: one read-only transaction per batch of packets, renewed on
 * first use and reset at the end of the batch. */
#include "store/weightdb.h"
#include "store/keys.h"
#include "store/weightdb_int.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *const dbi_names[DBI_COUNT] = {
	"meta", "services", "svcrec", "nodes", "weights", "plans", "audit",
	"health", "status", "metrics", "history", "cutovers", "histtime",
	"budgets", "steerin", "steer", "noderows", "dnssec", "overrides", "apitokens"
};

static int mkdir_p(const char *path)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(buf, 0755);
			*p = '/';
		}
	return mkdir(buf, 0755) == 0 || errno == EEXIST ? 0 : -errno;
}

int wdb__code(int rc)
{
	switch (rc) {
	case 0: return 0;
	case MDB_MAP_FULL: return GSLB_ENOSPC;
	case MDB_NOTFOUND: return GSLB_ENOENT;
	default: return GSLB_EIO;
	}
}

const char *wdb_strerror(int rc)
{
	return rc == GSLB_ENOSPC ? WDB_FULL_MSG : gslb_strerror(rc);
}

/* @n bytes as the configuration writes them: 16G, 1M, 512K, or bytes. */
static void size_text(uint64_t n, char *buf, size_t len)
{
	static const char units[] = "GMK";
	for (int i = 0; i < 3; i++) {
		uint64_t u = (uint64_t)1 << (10 * (3 - i));
		if (n >= u && n % u == 0) {
			snprintf(buf, len, "%llu%c", (unsigned long long)(n / u), units[i]);
			return;
		}
	}
	if (n >= (1 << 20))
		snprintf(buf, len, "%.1fM", (double)n / (1 << 20));
	else
		snprintf(buf, len, "%llu bytes", (unsigned long long)n);
}

const char *wdb_full_msg(weightdb_t *db, char *buf, size_t len)
{
	MDB_envinfo info;
	mdb_env_info(db->env, &info);
	char map[32];
	size_text(info.me_mapsize, map, sizeof(map));
	snprintf(buf, len, "store full: its map of %s (database.map-size) has no "
	         "room for this change beside what it keeps for health "
	         "decisions; raise database.map-size and restart gslbd, or "
	         "delete what the table no longer needs", map);
	return buf;
}

const char *wdb_room_msg(const wdb_room_t *r, char *buf, size_t len)
{
	char map[32], before[32], after[32], upto[40];
	size_text(r->map, map, sizeof(map));
	size_text(r->live_before, before, sizeof(before));
	size_text(r->live_after, after, sizeof(after));
	time_t w = (time_t)r->newest;
	struct tm tm;
	gmtime_r(&w, &tm);
	strftime(upto, sizeof(upto), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(buf, len, "store at %s of its %s map (database.map-size): "
	         "deleted the %u oldest audit records and %u score history "
	         "samples (up to %s) to keep room for health decisions; now at "
	         "%s", before, map, r->audit, r->history, upto, after);
	return buf;
}

uint64_t wdb__live_bytes(MDB_txn *txn, weightdb_t *db)
{
	MDB_stat st;
	uint64_t pages = 2;                 /* LMDB's two meta pages */
	size_t psize = 4096;
	/* 0 and 1: LMDB's free list and main tree, then ours. */
	for (int i = -2; i < DBI_COUNT; i++) {
		MDB_dbi d = i < 0 ? (MDB_dbi)(i + 2) : db->dbi[i];
		if (mdb_stat(txn, d, &st) == 0) {
			pages += st.ms_branch_pages + st.ms_leaf_pages +
			         st.ms_overflow_pages;
			psize = st.ms_psize;
		}
	}
	return pages * psize;
}

void wdb__marks(weightdb_t *db, wdb_marks_t *m)
{
	MDB_envinfo info;
	mdb_env_info(db->env, &info);
	uint64_t map = info.me_mapsize;
	uint64_t share = map / WDB_ROOM_SHARE;
	if (share < WDB_ROOM_MIN)
		share = WDB_ROOM_MIN;
	m->map = map;
	m->limit = map > share ? map - share : 0;
	m->high = map > 2 * share ? map - 2 * share : 0;
	m->low = map > 3 * share ? map - 3 * share : 0;
}

/* Builds the time index of a history written before it existed: once,
 * at the first read-write open (meta "histtime" marks it done). */
static int index_history(MDB_txn *txn, weightdb_t *db)
{
	MDB_val mk = { 8, "histtime" }, mv;
	if (mdb_get(txn, db->dbi[DBI_META], &mk, &mv) == 0)
		return 0;
	MDB_cursor *c;
	int rc = mdb_cursor_open(txn, db->dbi[DBI_HISTORY], &c);
	if (rc)
		return rc;
	MDB_val k, v;
	for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
		if (k.mv_size < 5 || k.mv_size > WDB_HISTORY_KEY_MAX)
			continue;
		uint8_t ik[WDB_HISTORY_KEY_MAX];
		const uint8_t *kd = k.mv_data;
		/* "node|" + time  ->  time + "node" */
		memcpy(ik, kd + k.mv_size - 4, 4);
		memcpy(ik + 4, kd, k.mv_size - 5);
		MDB_val ikv = { k.mv_size - 1, ik }, empty = { 0, "" };
		if ((rc = mdb_put(txn, db->dbi[DBI_HISTTIME], &ikv, &empty, 0)))
			break;
	}
	mdb_cursor_close(c);
	if (rc != MDB_NOTFOUND)
		return rc;
	mv = (MDB_val){ 1, "1" };
	return mdb_put(txn, db->dbi[DBI_META], &mk, &mv, 0);
}

int wdb__noderows(MDB_txn *txn, MDB_dbi dbi, const char *key, size_t keylen,
                  json_t *row, int del)
{
	const char *id;
	json_t *w;
	json_object_foreach(json_object_get(row, "weights"), id, w) {
		MDB_val k = { strlen(id), (void *)id }, v = { keylen, (void *)key };
		int rc = del ? mdb_del(txn, dbi, &k, &v)
		             : mdb_put(txn, dbi, &k, &v, MDB_NODUPDATA);
		if (rc && rc != MDB_NOTFOUND && rc != MDB_KEYEXIST)
			return rc;
	}
	return 0;
}

/* Builds the node -> row index of a store of schema 1 (weightdb.h):
 * once, at the first read-write open, in one transaction with the
 * schema's update, so that a store is either of schema 1 without the
 * index or of schema 2 with all of it. */
static int index_rows(MDB_txn *txn, weightdb_t *db)
{
	MDB_val sk = { 6, "schema" }, sv;
	if (mdb_get(txn, db->dbi[DBI_META], &sk, &sv) == 0 && sv.mv_size == 4 &&
	    rd32(sv.mv_data) >= 2)
		return 0;
	int rc = mdb_drop(txn, db->dbi[DBI_NODEROWS], 0);
	MDB_cursor *c;
	if (rc || (rc = mdb_cursor_open(txn, db->dbi[DBI_WEIGHTS], &c)))
		return rc;
	MDB_val k, v;
	size_t rows = 0;
	for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0;
	     rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
		json_t *row = json_loadb(v.mv_data, v.mv_size, 0, NULL);
		rc = wdb__noderows(txn, db->dbi[DBI_NODEROWS], k.mv_data, k.mv_size,
		                   row, 0);
		json_decref(row);
		if (rc)
			break;
		rows++;
	}
	mdb_cursor_close(c);
	if (rc != MDB_NOTFOUND)
		return rc;
	uint8_t ver[4];
	wr32(ver, WDB_SCHEMA);
	sv = (MDB_val){ 4, ver };
	if ((rc = mdb_put(txn, db->dbi[DBI_META], &sk, &sv, 0)))
		return rc;
	log_notice("database %s: indexed the weight rows of every node (%zu "
	           "rows); the store is now of schema %d", db->path, rows,
	           WDB_SCHEMA);
	return 0;
}

/* Records the map size in meta "mapsize" when it changed (@missing:
 * only when none is recorded), for adopt_map_size().  (LMDB's own meta
 * page keeps the largest size any process ever used, never a smaller
 * one, so it cannot serve.) */
static int record_map_size(MDB_txn *txn, weightdb_t *db, int missing)
{
	MDB_envinfo info;
	mdb_env_info(db->env, &info);
	uint8_t vb[8];
	wdb__id_key(vb, (uint64_t)info.me_mapsize);
	MDB_val k = { 7, "mapsize" }, v;
	if (mdb_get(txn, db->dbi[DBI_META], &k, &v) == 0 && v.mv_size == 8 &&
	    (missing || memcmp(v.mv_data, vb, 8) == 0))
		return 0;
	v = (MDB_val){ 8, vb };
	return mdb_put(txn, db->dbi[DBI_META], &k, &v, 0);
}

/* A process that gives no map size of its own (gslbctl) maps what gslbd
 * recorded, or less when it is configured with less (@conf, 0: none):
 * with a larger map it could grow the data past the daemon's, whose
 * readers would then fail (MDB_MAP_RESIZED).  A store that records no
 * size is mapped at @conf.  Called with no transaction active, as
 * mdb_env_set_mapsize() wants. */
static int adopt_map_size(weightdb_t *db, uint64_t conf)
{
	MDB_txn *txn;
	int rc = mdb_txn_begin(db->env, NULL, MDB_RDONLY, &txn);
	if (rc)
		return rc;
	MDB_val k = { 7, "mapsize" }, v;
	uint64_t size = 0;
	if (mdb_get(txn, db->dbi[DBI_META], &k, &v) == 0 && v.mv_size == 8)
		size = wdb__id_of(v.mv_data);
	mdb_txn_abort(txn);
	if (conf && (!size || conf < size))
		size = conf;
	/* LMDB never maps less than the data uses. */
	return size ? mdb_env_set_mapsize(db->env, (size_t)size) : 0;
}

/* Why a read-write open of the store at @path failed with EACCES or
 * EPERM: the file (or the directory, to create one in) this user cannot
 * write, its owner and what to do, into @err. */
static void write_denied(const char *path, int rc, char *err, size_t errlen)
{
	static const char *const files[] = { "lock.mdb", "data.mdb", NULL };
	char p[4200];
	struct stat st;
	int i;
	for (i = 0; files[i]; i++) {
		snprintf(p, sizeof(p), "%s/%s", path, files[i]);
		if (stat(p, &st) == 0 ? access(p, W_OK) != 0 : access(path, W_OK) != 0)
			break;
	}
	if (!files[i] || stat(p, &st) != 0) {
		snprintf(p, sizeof(p), "%s", path);
		if (stat(p, &st) != 0)
			st.st_uid = (uid_t)-1, st.st_mode = 0;
	}
	struct passwd *pw = getpwuid(st.st_uid);
	char owner[64];
	if (pw)
		snprintf(owner, sizeof(owner), "%s", pw->pw_name);
	else
		snprintf(owner, sizeof(owner), "uid %ld", (long)st.st_uid);
	snprintf(err, errlen, "database %s: cannot write %s (owned by %s, mode "
	         "%04o): %s; a change needs write access to the store: run it as "
	         "%s, the user that owns the store (the one gslbd runs as), or "
	         "give the store's files to the user that must write them "
	         "(chown -R USER %s)", path, p, owner,
	         (unsigned)(st.st_mode & 07777), mdb_strerror(rc), owner, path);
}

static int file_exists(const char *dir, const char *name)
{
	char p[4200];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return stat(p, &st) == 0;
}

/* A failed step of the open: LMDB's @rc in @err.  Returns -1. */
static int open_fail(const weightdb_t *db, int rc, char *err, size_t errlen)
{
	snprintf(err, errlen, "database %s: %s", db->path, mdb_strerror(rc));
	return -1;
}

/* Opening, step 1: the environment at db->path, created, sized and
 * opened.  No size of our own: the store's recorded one
 * (adopt_map_size(), later), or the configured one or else the default
 * for a new store.  Returns 0, or -1 with @err. */
static int open_env(weightdb_t *db, const wdb_options_t *o, char *err,
                    size_t errlen)
{
	const char *path = db->path;
	int exists = file_exists(path, "data.mdb");
	size_t map = o->map_size ? o->map_size : exists ? 0 :
	             o->conf_map_size ? o->conf_map_size : WDB_MAP_SIZE_DEFAULT;
	int rc;
	if ((rc = mdb_env_create(&db->env)) ||
	    (rc = mdb_env_set_maxdbs(db->env, 32)) ||
	    (rc = mdb_env_set_maxreaders(db->env, 1024)) ||
	    (map && (rc = mdb_env_set_mapsize(db->env, map))) ||
	    (rc = mdb_env_open(db->env, path,
	                       MDB_NOTLS | (o->read_only ? MDB_RDONLY : 0), 0644))) {
		if (o->read_only && (rc == EACCES || rc == EPERM))
			snprintf(err, errlen, "database %s: %s (reading needs write "
			         "access to %s/lock.mdb, where readers register)", path,
			         mdb_strerror(rc), path);
		else if (rc == EACCES || rc == EPERM)
			write_denied(path, rc, err, errlen);
		else
			snprintf(err, errlen, "database %s: %s", path, mdb_strerror(rc));
		return -1;
	}
	return 0;
}

/* Opening, step 2: the named databases (created when writing) and the
 * schema version (recorded in a new store; one newer than this gslbd is
 * refused), in one transaction, committed rather than aborted so that
 * the handles opened in it stay.  Returns 0, or -1 with @err. */
static int open_tables(weightdb_t *db, const wdb_options_t *o, char *err,
                       size_t errlen)
{
	const char *path = db->path;
	MDB_txn *txn;
	int rc;
	if ((rc = mdb_txn_begin(db->env, NULL, o->read_only ? MDB_RDONLY : 0, &txn)))
		return open_fail(db, rc, err, errlen);
	for (int i = 0; i < DBI_COUNT; i++)
		if ((rc = mdb_dbi_open(txn, dbi_names[i],
		                       (o->read_only ? 0 : MDB_CREATE) |
		                       (i == DBI_NODEROWS ? MDB_DUPSORT : 0),
		                       &db->dbi[i]))) {
			snprintf(err, errlen, "database %s: %s: %s%s", path, dbi_names[i],
			         mdb_strerror(rc), o->read_only && rc == MDB_NOTFOUND ?
			         " (written by an older gslbd: open it read-write once)" : "");
			mdb_txn_abort(txn);
			return -1;
		}
	MDB_val k = { 6, "schema" }, v;
	rc = mdb_get(txn, db->dbi[DBI_META], &k, &v);
	if (rc == MDB_NOTFOUND && !o->read_only) {
		uint8_t ver[4];
		wr32(ver, WDB_SCHEMA);
		v = (MDB_val){ 4, ver };
		rc = mdb_put(txn, db->dbi[DBI_META], &k, &v, 0);
	} else if (rc == 0 && (v.mv_size != 4 || rd32(v.mv_data) > WDB_SCHEMA)) {
		snprintf(err, errlen, "database %s: schema version %u is newer than "
		         "this gslbd understands (%d)", path,
		         v.mv_size == 4 ? rd32(v.mv_data) : 0, WDB_SCHEMA);
		mdb_txn_abort(txn);
		return -1;
	}
	if (rc)
		mdb_txn_abort(txn);
	else
		rc = mdb_txn_commit(txn);
	if (rc) {
		char full[300];
		snprintf(err, errlen, "database %s: %s", path, rc == MDB_MAP_FULL ?
		         wdb_full_msg(db, full, sizeof(full)) : mdb_strerror(rc));
		return -1;
	}
	return 0;
}

/* Opening, step 3 (read-write, after the map is set): what may not fit
 * in a full store -- the upgrade of an older store (its history and
 * node -> row indexes) and the map size recorded.  A full map leaves
 * the store open: it still serves reads, and trimming or a larger map
 * makes room again.  Returns 0, or -1 with @err. */
static int upgrade(weightdb_t *db, const wdb_options_t *o, char *err,
                   size_t errlen)
{
	MDB_txn *txn;
	int rc = mdb_txn_begin(db->env, NULL, 0, &txn);
	if (rc)
		return open_fail(db, rc, err, errlen);
	if (!(rc = index_history(txn, db)))
		rc = index_rows(txn, db);
	if (!rc && (o->map_size || o->conf_map_size))
		rc = record_map_size(txn, db, !o->map_size);
	if (rc)
		mdb_txn_abort(txn);
	else
		rc = mdb_txn_commit(txn);
	if (rc == MDB_MAP_FULL) {
		db->full = 1;
		if (db->log_full) {
			db->full_logged = util_mono_sec();
			db->full_said = 1;
			char full[300];
			log_err("database %s: %s", db->path,
			        wdb_full_msg(db, full, sizeof(full)));
		}
		return 0;
	}
	return rc ? open_fail(db, rc, err, errlen) : 0;
}

weightdb_t *weightdb_open_opts(const char *path, const wdb_options_t *o,
                               char *err, size_t errlen)
{
	static const wdb_options_t defaults = { 0 };
	if (!o)
		o = &defaults;
	weightdb_t *db = xcalloc(1, sizeof(*db));
	db->path = xstrdup(path);
	db->read_only = o->read_only;
	db->log_full = o->log_full;
	db->leave_room = o->leave_room;
	int rc = o->read_only ? 0 : mkdir_p(path);
	if (rc) {
		snprintf(err, errlen, "database %s: %s", path, strerror(-rc));
		goto fail;
	}
	if (o->read_only && !file_exists(path, "data.mdb")) {
		snprintf(err, errlen, "database %s: no store there", path);
		goto fail;
	}
	if (open_env(db, o, err, errlen) || open_tables(db, o, err, errlen))
		goto fail;
	/* The map of a process without a size of its own (a reader's is
	 * always the store's), before anything that may grow the data. */
	rc = o->read_only ? adopt_map_size(db, 0) :
	     !o->map_size ? adopt_map_size(db, o->conf_map_size) : 0;
	if ((rc && open_fail(db, rc, err, errlen)) ||
	    (!o->read_only && upgrade(db, o, err, errlen)))
		goto fail;
	return db;
fail:
	if (db->env)
		mdb_env_close(db->env);
	free(db->path);
	free(db);
	return NULL;
}

weightdb_t *weightdb_open(const char *path, char *err, size_t errlen)
{
	return weightdb_open_opts(path, NULL, err, errlen);
}

void weightdb_set_nosync(weightdb_t *db)
{
	mdb_env_set_flags(db->env, MDB_NOSYNC, 1);
}

int weightdb_sync(weightdb_t *db)
{
	return mdb_env_sync(db->env, 1) ? GSLB_EIO : 0;
}

int weightdb_info(weightdb_t *db, wdb_info_t *out)
{
	memset(out, 0, sizeof(*out));
	MDB_envinfo info;
	MDB_stat st;
	mdb_env_info(db->env, &info);
	mdb_env_stat(db->env, &st);
	out->map_size = info.me_mapsize;
	out->used = ((uint64_t)info.me_last_pgno + 1) * st.ms_psize;
	out->full = __atomic_load_n(&db->full, __ATOMIC_RELAXED);
	MDB_txn *txn;
	int rc = mdb_txn_begin(db->env, NULL, MDB_RDONLY, &txn);
	if (rc)
		return wdb__code(rc);
	out->live = wdb__live_bytes(txn, db);
	static const char *const room[2] = { "roomaudit", "roomhist" };
	for (int i = 0; i < 2; i++) {
		MDB_val rk = { strlen(room[i]), (void *)room[i] }, rv;
		uint64_t n = 0;
		if (mdb_get(txn, db->dbi[DBI_META], &rk, &rv) == 0 && rv.mv_size == 8)
			memcpy(&n, rv.mv_data, 8);
		*(i ? &out->room_history : &out->room_audit) = n;
	}
	MDB_val k = { 8, "tablegen" }, v;
	if (mdb_get(txn, db->dbi[DBI_META], &k, &v) == 0 && v.mv_size == 8)
		memcpy(&out->table_generation, v.mv_data, 8);
	k = (MDB_val){ 3, "seq" };
	if (mdb_get(txn, db->dbi[DBI_META], &k, &v) == 0 && v.mv_size == 8) {
		out->last_audit_id = wdb__id_of(v.mv_data);
		uint8_t ak[8];
		wdb__id_key(ak, out->last_audit_id);
		k = (MDB_val){ 8, ak };
		if (mdb_get(txn, db->dbi[DBI_AUDIT], &k, &v) == 0) {
			json_t *rec = json_loadb(v.mv_data, v.mv_size, 0, NULL);
			const char *tm_s = json_string_value(json_object_get(rec, "time"));
			struct tm tm;
			memset(&tm, 0, sizeof(tm));
			if (tm_s && strptime(tm_s, "%Y-%m-%dT%H:%M:%SZ", &tm))
				out->last_commit = (int64_t)timegm(&tm);
			json_decref(rec);
		}
	}
	mdb_txn_abort(txn);
	return 0;
}

void weightdb_close(weightdb_t *db)
{
	if (!db)
		return;
	mdb_env_close(db->env);
	free(db->path);
	free(db);
}

/* Readers --------------------------------------------------------- */

/* Readers: one per thread, a read transaction renewed at the first
 * lookup of each batch and reset at its end (wdb_reader_release()).
 *
 * Each reader caches its lookups (the service record and the plan rows of
 * the queries it answers): a lookup costs a hash and a compare instead of
 * two B-tree descents.  An entry holds the pointer LMDB gave into the map
 * and is valid for the snapshot it was read from, i.e. while renewing
 * the transaction gives the same transaction id.  That is safe because
 * a snapshot's pages are only released by a later commit: as long as the
 * newest committed id is the entry's, no commit has freed them, and any
 * commit makes the next renew see a new id, which empties the cache at
 * once (entries of another id never match). */
wdb_reader_t *wdb_reader_new(weightdb_t *db)
{
	wdb_reader_t *r = xcalloc(1, sizeof(*r));
	r->db = db;
	if (mdb_txn_begin(db->env, NULL, MDB_RDONLY, &r->txn)) {
		free(r);
		return NULL;
	}
	mdb_txn_reset(r->txn);
	r->cache = xcalloc(WDB_CACHE_SLOTS, sizeof(*r->cache));
	return r;
}

void wdb_reader_free(wdb_reader_t *r)
{
	if (!r)
		return;
	mdb_txn_abort(r->txn);
	free(r->cache);
	free(r);
}

void wdb_reader_release(wdb_reader_t *r)
{
	if (r && r->active) {
		mdb_txn_reset(r->txn);
		r->active = 0;
	}
}

static int reader_take(wdb_reader_t *r)
{
	if (r->active)
		return 0;
	if (mdb_txn_renew(r->txn))
		return GSLB_EIO;
	r->active = 1;
	r->txnid = mdb_txn_id(r->txn);
	return 0;
}

size_t wdb_reader_txnid(const wdb_reader_t *r)
{
	return r->active ? r->txnid : 0;
}

size_t wdb_reader_begin(wdb_reader_t *r)
{
	return reader_take(r) ? 0 : r->txnid;
}

/* Looks @key up in sub-database @dbi through @r's cache.  Returns 0 with
 * the value in *@v, GSLB_ENOENT, or GSLB_EIO. */
static int reader_get(wdb_reader_t *r, unsigned dbi, const char *key,
                      size_t klen, MDB_val *v)
{
	if (reader_take(r))
		return GSLB_EIO;
	MDB_val k = { klen, (void *)key };
	if (klen > WDB_CACHE_KEY)
		return mdb_get(r->txn, r->db->dbi[dbi], &k, v) ? GSLB_ENOENT : 0;
	uint64_t h = hash_words(key, klen, 0) ^ dbi;
	wdb_cslot_t *c = &r->cache[h & (WDB_CACHE_SLOTS - 1)];
	if (c->txnid == r->txnid && c->hash == h && c->dbi == dbi &&
	    c->klen == klen && memcmp(c->key, key, klen) == 0) {
		v->mv_data = (void *)c->data;
		v->mv_size = c->len;
		return c->found ? 0 : GSLB_ENOENT;
	}
	int rc = mdb_get(r->txn, r->db->dbi[dbi], &k, v);
	if (rc && rc != MDB_NOTFOUND)
		return GSLB_ENOENT;   /* not cached: a fault, not an answer */
	c->txnid = r->txnid;
	c->hash = h;
	c->dbi = (uint8_t)dbi;
	c->klen = (uint8_t)klen;
	c->found = rc == 0;
	c->data = rc ? NULL : v->mv_data;
	c->len = rc ? 0 : v->mv_size;
	memcpy(c->key, key, klen);
	return rc ? GSLB_ENOENT : 0;
}

int wdb_service(wdb_reader_t *r, const char *name, size_t len, svc_rec_t *out)
{
	MDB_val v;
	int rc = reader_get(r, DBI_SVCREC, name, len, &v);
	if (rc)
		return rc;
	const uint8_t *d = v.mv_data;
	if (v.mv_size < 12 || d[0] != 1)
		return GSLB_EIO;
	out->version = d[0];
	out->answers = d[1];
	out->all_down = d[2];
	out->flags = d[3];
	out->ttl = rd32(d + 4);
	out->short_ttl = rd32(d + 8);
	return 0;
}

int wdb_plan(wdb_reader_t *r, const char *svc, size_t svclen,
             const char *region, const char *isp, const uint8_t **data,
             size_t *len)
{
	char key[512];
	size_t kl = wdb_row_keyn(key, sizeof(key), svc, svclen, region, isp);
	if (!kl)
		return GSLB_EIO;
	MDB_val v;
	int rc = reader_get(r, DBI_PLANS, key, kl, &v);
	if (rc)
		return rc;
	*data = v.mv_data;
	*len = v.mv_size;
	return 0;
}
