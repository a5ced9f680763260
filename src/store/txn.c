/* SPDX-License-Identifier: MIT */
/* Write transactions: objects in and out of the named databases, and the
 * commit that validates references, rebuilds the plans of every service a
 * change touches and appends the audit record, all in one LMDB write
 * transaction (S0-9, S0-10). */
#include "store/weightdb.h"
#include "store/keys.h"
#include "store/plan.h"
#include "store/weightdb_int.h"
#include "common/log.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const kind_names[] = {
	"service", "node", "weight", "health", "status", "metrics", "cutover",
	"budget", "steerin", "steer", "dnssec", "override", "apitoken"
};
static const int kind_dbi[] = { DBI_SERVICES, DBI_NODES, DBI_WEIGHTS,
                                DBI_HEALTH, DBI_STATUS, DBI_METRICS,
                                DBI_CUTOVERS, DBI_BUDGETS, DBI_STEERIN,
                                DBI_STEER, DBI_DNSSEC, DBI_OVERRIDES,
                                DBI_APITOKENS };

/* Data, not decisions: neither audited nor part of any plan. */
static int is_data(wdb_kind_t kind)
{
	return kind == WDB_STATUS || kind == WDB_METRICS ||
	       kind == WDB_STEERIN || kind == WDB_STEER;
}

/* The bytes of @t's data but the audit log's, which makes way by
 * itself (weightdb_make_room()). */
static uint64_t table_bytes(wdb_txn_t *t)
{
	MDB_stat st;
	uint64_t live = wdb__live_bytes(t->txn, t->db);
	if (mdb_stat(t->txn, t->db->dbi[DBI_AUDIT], &st) == 0)
		live -= (st.ms_branch_pages + st.ms_leaf_pages +
		         st.ms_overflow_pages) * (uint64_t)st.ms_psize;
	return live;
}

wdb_txn_t *wdb_begin(weightdb_t *db, const char *actor, char *err,
                     size_t errlen)
{
	if (db->read_only) {
		snprintf(err, errlen, "database %s: opened read-only", db->path);
		return NULL;
	}
	wdb_txn_t *t = xcalloc(1, sizeof(*t));
	int rc = mdb_txn_begin(db->env, NULL, 0, &t->txn);
	if (rc) {
		snprintf(err, errlen, "database %s: %s", db->path, mdb_strerror(rc));
		free(t);
		return NULL;
	}
	t->db = db;
	if (db->leave_room)
		t->live_begin = table_bytes(t);
	t->actor = xstrdup(actor);
	t->changes = json_array();
	t->notes = json_object();
	t->services = json_object();
	t->nodes = json_object();
	return t;
}

void wdb_txn_note(wdb_txn_t *t, const char *field, json_t *val)
{
	json_object_set_new(t->notes, field, val);
}

wdb_txn_t *wdb_begin_read(weightdb_t *db)
{
	wdb_txn_t *t = xcalloc(1, sizeof(*t));
	if (mdb_txn_begin(db->env, NULL, MDB_RDONLY, &t->txn)) {
		free(t);
		return NULL;
	}
	t->db = db;
	t->read_only = 1;
	t->actor = xstrdup("");
	t->changes = json_array();
	t->notes = json_object();
	t->services = json_object();
	t->nodes = json_object();
	return t;
}

void wdb_abort(wdb_txn_t *t)
{
	if (!t)
		return;
	if (t->txn)
		mdb_txn_abort(t->txn);
	json_decref(t->changes);
	json_decref(t->notes);
	json_decref(t->services);
	json_decref(t->nodes);
	free(t->actor);
	free(t);
}

static json_t *get_json(MDB_txn *txn, MDB_dbi dbi, const char *key)
{
	MDB_val k = { strlen(key), (void *)key }, v;
	if (mdb_get(txn, dbi, &k, &v))
		return NULL;
	return json_loadb(v.mv_data, v.mv_size, 0, NULL);
}

json_t *wdb_get(wdb_txn_t *t, wdb_kind_t kind, const char *key)
{
	return get_json(t->txn, t->db->dbi[kind_dbi[kind]], key);
}

int wdb__fail(wdb_txn_t *t, int rc)
{
	if (rc && !t->rc)
		t->rc = rc;
	return rc;
}

int wdb__put_raw(wdb_txn_t *t, int dbi, const char *key, const void *data,
                   size_t len)
{
	MDB_val k = { strlen(key), (void *)key }, v = { len, (void *)data };
	int rc = mdb_put(t->txn, t->db->dbi[dbi], &k, &v, 0);
	return rc ? wdb__fail(t, wdb__code(rc)) : 0;
}

int wdb__del_raw(wdb_txn_t *t, int dbi, const char *key)
{
	MDB_val k = { strlen(key), (void *)key };
	int rc = mdb_del(t->txn, t->db->dbi[dbi], &k, NULL);
	return rc && rc != MDB_NOTFOUND ? wdb__fail(t, wdb__code(rc)) : 0;
}

/* The service part of a weight row key, NUL-terminated. */
static void row_service(const char *key, char *svc, size_t size)
{
	wdb_row_parts_t p;
	wdb_row_split(key, strlen(key), &p);
	size_t n = p.svc_len < size ? p.svc_len : size - 1;
	memcpy(svc, p.svc, n);
	svc[n] = 0;
}

/* The fields of a health record that are a verdict about the node's
 * own health; the others (cutover derating and pre-warm, a standby's
 * promotion, the short-TTL deadline) come from elsewhere. */
static const char *const verdict_fields[] = {
	"state", "usable", "effective_weight_pct", "reason", "since", "gray",
	"gray_since", "score", "moved_at", NULL
};

static int has_probes(json_t *node)
{
	return json_array_size(json_object_get(node, "probes")) > 0;
}

/* @rec (a health record) without its verdict fields: a new reference, or
 * NULL when nothing that matters is left. */
static json_t *without_verdict(json_t *rec)
{
	json_t *r = json_deep_copy(rec);
	for (const char *const *f = verdict_fields; *f; f++)
		json_object_del(r, *f);
	if (!json_object_get(r, "cutover_phase") &&
	    !json_is_true(json_object_get(r, "promoted"))) {
		json_decref(r);
		return NULL;
	}
	return r;
}

static int set_one(wdb_txn_t *t, wdb_kind_t kind, const char *key, json_t *val);


/* Deletes the pushed steering inputs of node @id ("n|ID|..."). */
static int drop_steer_inputs(wdb_txn_t *t, const char *id)
{
	char prefix[300];
	snprintf(prefix, sizeof(prefix), "n|%s|", id);
	json_t *keys = json_array();
	wdb__each_raw(t->txn, t->db->dbi[DBI_STEERIN], prefix, wdb__collect_key, keys);
	size_t i;
	json_t *k;
	int rc = 0;
	json_array_foreach(keys, i, k)
		if (!rc)
			rc = wdb__del_raw(t, DBI_STEERIN, json_string_value(k));
	json_decref(keys);
	return rc;
}

/* The meta key of node @id's birth stamp (wdb_node_born()); node ids
 * are far shorter than LMDB's key limit (511). */
#define BORN_KEY_MAX 511
static MDB_val born_key(const char *id, char buf[BORN_KEY_MAX + 1])
{
	int n = snprintf(buf, BORN_KEY_MAX + 1, "born:%s", id);
	return (MDB_val){ n > BORN_KEY_MAX ? BORN_KEY_MAX : (size_t)n, buf };
}

static uint64_t generation(wdb_txn_t *t, const char *name);

/* Stamps node @id as added by this commit (wdb_node_born()), or drops
 * its stamp (@gone). */
static int stamp_birth(wdb_txn_t *t, const char *id, int gone)
{
	char kb[BORN_KEY_MAX + 1];
	MDB_val k = born_key(id, kb);
	uint64_t gen = generation(t, "tablegen") + 1;  /* what this commit makes it */
	MDB_val v = { 8, &gen };
	int rc = gone ? mdb_del(t->txn, t->db->dbi[DBI_META], &k, NULL) :
	                mdb_put(t->txn, t->db->dbi[DBI_META], &k, &v, 0);
	return rc && rc != MDB_NOTFOUND ? wdb__fail(t, wdb__code(rc)) : 0;
}

/* Node @id was stored as @node (NULL: deleted) over @before (NULL: new):
 * the records about it follow in the same transaction (weightdb.h,
 * wdb_set()). A node that loses its last probe loses the verdict the
 * probes gave it; its pushed metrics, if any, judge it from then on. */
static int node_records(wdb_txn_t *t, const char *id, json_t *node,
                        json_t *before)
{
	int rc = !node || !before ? stamp_birth(t, id, !node) : 0;
	if (rc)
		return rc;
	json_t *h = wdb_get(t, WDB_HEALTH, id);
	if (!node) {
		if (h)
			rc = set_one(t, WDB_HEALTH, id, NULL);
		if (!rc)
			rc = set_one(t, WDB_STATUS, id, NULL);
		if (!rc)
			rc = set_one(t, WDB_METRICS, id, NULL);
		if (!rc)
			rc = wdb__history_drop(t, id);
		if (!rc)
			rc = drop_steer_inputs(t, id);
	} else if (before && has_probes(before) && !has_probes(node)) {
		if (h) {
			json_t *keep = without_verdict(h);
			if (!keep || !json_equal(keep, h))
				rc = set_one(t, WDB_HEALTH, id, keep);
			json_decref(keep);
		}
		/* The live score and last results of probes that are gone. */
		if (!rc)
			rc = set_one(t, WDB_STATUS, id, NULL);
	}
	json_decref(h);
	return rc;
}

int wdb_set(wdb_txn_t *t, wdb_kind_t kind, const char *key, json_t *val)
{
	if (t->read_only)
		return GSLB_EINVAL;
	if (kind == WDB_NODE) {
		json_t *before = wdb_get(t, WDB_NODE, key);
		int rc = set_one(t, kind, key, val);
		if (!rc)
			rc = node_records(t, key, val, before);
		json_decref(before);
		return rc;
	}
	if (val && (kind == WDB_HEALTH || kind == WDB_STATUS || kind == WDB_METRICS)) {
		json_t *node = wdb_get(t, WDB_NODE, key);
		if (!node)
			return GSLB_ENOENT;   /* not a failed write: see weightdb.h */
		json_decref(node);
		return set_one(t, kind, key, val);
	}
	return set_one(t, kind, key, val);
}

static int set_one(wdb_txn_t *t, wdb_kind_t kind, const char *key, json_t *val)
{
	json_t *before = wdb_get(t, kind, key);
	int rc = 0;
	/* The node -> row index follows the row: the entries of the nodes
	 * it named go, those of the nodes it names come. */
	if (kind == WDB_WEIGHT) {
		MDB_dbi ix = t->db->dbi[DBI_NODEROWS];
		size_t kl = strlen(key);
		rc = wdb__noderows(t->txn, ix, key, kl, before, 1);
		if (!rc)
			rc = wdb__noderows(t->txn, ix, key, kl, val, 0);
		if (rc) {
			json_decref(before);
			return wdb__fail(t, wdb__code(rc));
		}
	}
	if (val) {
		char *s = json_dumps(val, JSON_COMPACT | JSON_SORT_KEYS);
		rc = s ? wdb__put_raw(t, kind_dbi[kind], key, s, strlen(s))
		       : wdb__fail(t, GSLB_ENOMEM);
		free(s);
	} else {
		rc = wdb__del_raw(t, kind_dbi[kind], key);
	}
	if (rc) {
		json_decref(before);
		return rc;
	}
	if (!before && !val) {
		return 0; /* nothing was there: no change */
	}
	if (kind == WDB_METRICS)
		t->metrics_changed = 1;
	else if (kind == WDB_DNSSEC)
		t->dnssec_changed = 1;
	else if (kind == WDB_STEERIN)
		t->inputs_changed = 1;
	else if (kind != WDB_HEALTH && kind != WDB_DNSSEC && kind != WDB_OVERRIDE &&
	         kind != WDB_APITOKEN &&
	         !is_data(kind))
		t->table_changed = 1;
	if (is_data(kind)) {
		json_decref(before);
		return 0; /* data, not decisions: no audit, no plan */
	}
	json_array_append_new(t->changes, json_pack("{s:s, s:s, s:o, s:O}",
		"kind", kind_names[kind], "key", key,
		"before", before ? before : json_null(),
		"after", val ? val : json_null()));
	char svc[256];
	switch (kind) {
	case WDB_SERVICE:
		json_object_set_new(t->services, key, json_true());
		break;
	case WDB_WEIGHT:
		row_service(key, svc, sizeof(svc));
		json_object_set_new(t->services, svc, json_true());
		break;
	case WDB_NODE:
	case WDB_HEALTH:
		json_object_set_new(t->nodes, key, json_true());
		break;
	default:
		break;
	}
	return 0;
}

int wdb__each_raw(MDB_txn *txn, MDB_dbi dbi, const char *prefix,
                    int (*fn)(const MDB_val *k, const MDB_val *v, void *arg),
                    void *arg)
{
	MDB_cursor *c;
	if (mdb_cursor_open(txn, dbi, &c))
		return GSLB_EIO;
	size_t pl = prefix ? strlen(prefix) : 0;
	MDB_val k = { pl, (void *)prefix }, v;
	int rc = mdb_cursor_get(c, &k, &v, pl ? MDB_SET_RANGE : MDB_FIRST);
	int stop = 0;
	while (rc == 0 && !stop) {
		if (pl && (k.mv_size < pl || memcmp(k.mv_data, prefix, pl) != 0))
			break;
		stop = fn(&k, &v, arg);
		rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
	}
	mdb_cursor_close(c);
	return stop;
}

typedef struct {
	int (*fn)(const char *key, json_t *val, void *arg);
	void *arg;
} each_json_t;

static int each_json_cb(const MDB_val *k, const MDB_val *v, void *arg)
{
	each_json_t *e = arg;
	char key[512];
	size_t n = k->mv_size < sizeof(key) - 1 ? k->mv_size : sizeof(key) - 1;
	memcpy(key, k->mv_data, n);
	key[n] = 0;
	json_t *val = json_loadb(v->mv_data, v->mv_size, 0, NULL);
	if (!val)
		return 0;
	int rc = e->fn(key, val, e->arg);
	json_decref(val);
	return rc;
}

int wdb_each(wdb_txn_t *t, wdb_kind_t kind, const char *prefix,
             int (*fn)(const char *key, json_t *val, void *arg), void *arg)
{
	each_json_t e = { fn, arg };
	return wdb__each_raw(t->txn, t->db->dbi[kind_dbi[kind]], prefix, each_json_cb, &e);
}

/* Commit: references, plans (rebuild.c), audit ------------------- */

typedef struct {
	json_t *nodes;        /* changed node ids */
	json_t *services;     /* out: services to rebuild */
	json_t *missing;      /* deleted nodes still referenced: "row" list */
	wdb_txn_t *t;
} refs_t;

/* Notes the service of row @key for a rebuild. */
static int ref_service(const char *key, void *arg)
{
	refs_t *r = arg;
	char svc[256];
	row_service(key, svc, sizeof(svc));
	json_object_set_new(r->services, svc, json_true());
	return 0;
}

/* Whether the store has its node -> row index (schema 2).  A store
 * whose index could not be built at open (its map was full) is read in
 * full instead: slow, never wrong. */
static int indexed(wdb_txn_t *t)
{
	MDB_val k = { 6, "schema" }, v;
	return mdb_get(t->txn, t->db->dbi[DBI_META], &k, &v) == 0 &&
	       v.mv_size == 4 && rd32(v.mv_data) >= 2;
}

typedef struct {
	const char *id;
	int (*fn)(const char *row, void *arg);
	void *arg;
} scan_rows_t;

static int scan_row(const char *key, json_t *row, void *arg)
{
	scan_rows_t *s = arg;
	return json_object_get(json_object_get(row, "weights"), s->id) ?
	       s->fn(key, s->arg) : 0;
}

int wdb_node_rows(wdb_txn_t *t, const char *id,
                  int (*fn)(const char *row, void *arg), void *arg)
{
	if (!indexed(t)) {
		scan_rows_t s = { id, fn, arg };
		return wdb_each(t, WDB_WEIGHT, NULL, scan_row, &s);
	}
	MDB_cursor *c;
	if (mdb_cursor_open(t->txn, t->db->dbi[DBI_NODEROWS], &c))
		return GSLB_EIO;
	MDB_val k = { strlen(id), (void *)id }, v;
	int rc = mdb_cursor_get(c, &k, &v, MDB_SET_KEY), stop = 0;
	while (rc == 0 && !stop) {
		char key[512];
		size_t n = v.mv_size < sizeof(key) - 1 ? v.mv_size : sizeof(key) - 1;
		memcpy(key, v.mv_data, n);
		key[n] = 0;
		stop = fn(key, arg);
		rc = mdb_cursor_get(c, &k, &v, MDB_NEXT_DUP);
	}
	mdb_cursor_close(c);
	return stop ? stop : rc == MDB_NOTFOUND ? 0 : GSLB_EIO;
}

/* Generation counters in meta: "tablegen" (the operator's table),
 * "metricsgen" (pushed metrics) and "inputsgen" (pushed steering
 * inputs). */
static uint64_t generation(wdb_txn_t *t, const char *name)
{
	MDB_val k = { strlen(name), (void *)name }, v;
	uint64_t gen = 0;
	if (mdb_get(t->txn, t->db->dbi[DBI_META], &k, &v) == 0 && v.mv_size == 8)
		memcpy(&gen, v.mv_data, 8);
	return gen;
}

static int bump(wdb_txn_t *t, const char *name)
{
	uint64_t gen = generation(t, name) + 1;
	MDB_val k = { strlen(name), (void *)name }, v = { 8, &gen };
	int rc = mdb_put(t->txn, t->db->dbi[DBI_META], &k, &v, 0);
	return rc ? wdb__fail(t, wdb__code(rc)) : 0;
}

/* The outcome of a write of this process: a full map is logged (when
 * asked to), at most once every FULL_LOG_EVERY seconds -- small writes
 * that fit between large ones that do not must not turn it into a
 * stream -- and the first success after a logged failure is logged. */
#define FULL_LOG_EVERY 600
static void note_full(weightdb_t *db, int full)
{
	int was = __atomic_exchange_n(&db->full, full, __ATOMIC_RELAXED);
	if (!db->log_full || was == full)
		return;
	int64_t now = util_mono_sec();
	if (full) {
		int64_t last = __atomic_load_n(&db->full_logged, __ATOMIC_RELAXED);
		if (last && now - last < FULL_LOG_EVERY)
			return;
		__atomic_store_n(&db->full_logged, now, __ATOMIC_RELAXED);
		__atomic_store_n(&db->full_said, 1, __ATOMIC_RELAXED);
		char msg[300];
		log_err("database %s: %s; answers go on from what it holds",
		        db->path, wdb_full_msg(db, msg, sizeof(msg)));
	} else if (__atomic_exchange_n(&db->full_said, 0, __ATOMIC_RELAXED)) {
		log_notice("database %s: writes succeed again", db->path);
	}
}

/* Describes failed write @rc in @err and aborts @t.  Returns @rc. */
static int fail_abort(wdb_txn_t *t, int rc, char *err, size_t errlen)
{
	if (rc == GSLB_ENOSPC)
		wdb_full_msg(t->db, err, errlen);
	else
		snprintf(err, errlen, "database %s: write failed: %s", t->db->path,
		         gslb_strerror(rc));
	note_full(t->db, rc == GSLB_ENOSPC);
	wdb_abort(t);
	return rc;
}

/* Commits @t's LMDB transaction and frees @t; 0 or an error with @err.
 * A change of the operator's table also bumps "tablegen", one of the
 * pushed metrics "metricsgen", one of the pushed steering inputs
 * "inputsgen" and one of the signing keys "dnssecgen", so that readers
 * polling them (the health thread, gslbd's key loading) re-read only
 * what changed. */
int wdb__commit_free(wdb_txn_t *t, char *err, size_t errlen)
{
	if ((t->table_changed && bump(t, "tablegen")) ||
	    (t->metrics_changed && bump(t, "metricsgen")) ||
	    (t->inputs_changed && bump(t, "inputsgen")) ||
	    (t->dnssec_changed && bump(t, "dnssecgen")))
		return fail_abort(t, t->rc, err, errlen);
	weightdb_t *db = t->db;
	/* A write that would take the store's data into the room kept for
	 * health decisions is refused; one that shrinks what is not the
	 * audit log never is (its audit record holds what it deleted), so
	 * that deleting makes room. */
	if (db->leave_room) {
		wdb_marks_t m;
		wdb__marks(db, &m);
		if (wdb__live_bytes(t->txn, db) > m.limit &&
		    table_bytes(t) > t->live_begin)
			return fail_abort(t, GSLB_ENOSPC, err, errlen);
	}
	int rc = mdb_txn_commit(t->txn);
	t->txn = NULL;
	wdb_abort(t); /* frees the rest; no transaction is left to abort */
	if (rc) {
		rc = wdb__code(rc);
		if (rc == GSLB_ENOSPC)
			wdb_full_msg(db, err, errlen);
		else
			snprintf(err, errlen, "database commit: %s", mdb_strerror(rc));
	}
	note_full(db, rc == GSLB_ENOSPC);
	return rc;
}

/* The commit's checks: references, and the plans of every service the
 * change touches rebuilt inside @t.  Returns 0, or an error with @err
 * after aborting @t. */
static int validate(wdb_txn_t *t, char *err, size_t errlen)
{
	int rc = 0;
	if (t->read_only) {
		snprintf(err, errlen, "database: a read transaction cannot commit");
		wdb_abort(t);
		return GSLB_EINVAL;
	}
	/* A write that failed earlier (the caller may not have looked):
	 * its cause, and nothing is written. */
	if (t->rc)
		return fail_abort(t, t->rc, err, errlen);
	if (json_object_size(t->nodes)) {
		refs_t r = { t->nodes, t->services, NULL, t };
		const char *id;
		json_t *dummy;
		json_object_foreach(t->nodes, id, dummy)
			if (wdb_node_rows(t, id, ref_service, &r) < 0) {
				wdb_abort(t);
				snprintf(err, errlen, "database %s: the rows of node %s "
				         "cannot be read", t->db->path, id);
				return GSLB_EIO;
			}
	}
	json_t *cache = json_object();
	const char *svc;
	json_t *dummy;
	json_object_foreach(t->services, svc, dummy) {
		if ((rc = wdb__rebuild_service(t, svc, cache, err, errlen)))
			break;
	}
	json_decref(cache);
	/* A plan or service record that could not be written: its cause
	 * (before a validation error, which may only follow from it). */
	if (t->rc)
		return fail_abort(t, t->rc, err, errlen);
	if (rc) {
		wdb_abort(t);
		return rc;
	}
	return 0;
}

int wdb_check(wdb_txn_t *t, char *err, size_t errlen)
{
	return validate(t, err, errlen);
}

json_t *wdb_changes(wdb_txn_t *t)
{
	return t->changes;
}

int64_t wdb_commit(wdb_txn_t *t, const char *what, char *err, size_t errlen)
{
	int rc = validate(t, err, errlen);
	if (rc)
		return rc;
	/* Only data (status, metrics, history): no audit record. */
	if (json_array_size(t->changes) == 0)
		return wdb__commit_free(t, err, errlen);
	int64_t id = wdb__audit_append(t, what, err, errlen);
	if (id < 0) {
		note_full(t->db, id == GSLB_ENOSPC);
		wdb_abort(t);
		return id;
	}
	rc = wdb__commit_free(t, err, errlen);
	return rc ? rc : id;
}


uint64_t wdb_table_generation(wdb_txn_t *t)
{
	return generation(t, "tablegen");
}

uint64_t wdb_node_born(wdb_txn_t *t, const char *id)
{
	char kb[BORN_KEY_MAX + 1];
	MDB_val k = born_key(id, kb), v;
	uint64_t gen = 0;
	if (mdb_get(t->txn, t->db->dbi[DBI_META], &k, &v) == 0 && v.mv_size == 8)
		memcpy(&gen, v.mv_data, 8);
	return gen;
}

uint64_t wdb_metrics_generation(wdb_txn_t *t)
{
	return generation(t, "metricsgen");
}

uint64_t wdb_inputs_generation(wdb_txn_t *t)
{
	return generation(t, "inputsgen");
}

uint64_t wdb_meta_u64(wdb_txn_t *t, const char *name)
{
	return generation(t, name);
}

int wdb_set_meta_u64(wdb_txn_t *t, const char *name, uint64_t v)
{
	if (t->read_only)
		return GSLB_EINVAL;
	MDB_val k = { strlen(name), (void *)name }, d = { 8, &v };
	int rc = mdb_put(t->txn, t->db->dbi[DBI_META], &k, &d, 0);
	return rc ? wdb__fail(t, wdb__code(rc)) : 0;
}

int wdb_meta_str(wdb_txn_t *t, const char *name, char *out, size_t size)
{
	MDB_val k = { strlen(name), (void *)name }, v;
	if (size)
		out[0] = 0;
	if (mdb_get(t->txn, t->db->dbi[DBI_META], &k, &v) != 0 || !size)
		return 0;
	size_t n = v.mv_size < size - 1 ? v.mv_size : size - 1;
	memcpy(out, v.mv_data, n);
	out[n] = 0;
	return 1;
}

int wdb_set_meta_str(wdb_txn_t *t, const char *name, const char *v)
{
	if (t->read_only)
		return GSLB_EINVAL;
	MDB_val k = { strlen(name), (void *)name }, d = { strlen(v), (void *)v };
	int rc = mdb_put(t->txn, t->db->dbi[DBI_META], &k, &d, 0);
	return rc ? wdb__fail(t, wdb__code(rc)) : 0;
}
