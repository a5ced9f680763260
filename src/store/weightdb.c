/* SPDX-License-Identifier: MIT */
/* LMDB environment, readers, audited write transactions, plan rebuilds. */
#include "store/weightdb.h"
#include "common/log.h"
#include "store/plan.h"
#include "common/util.h"

#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

enum { DBI_META, DBI_SERVICES, DBI_SVCREC, DBI_NODES, DBI_WEIGHTS, DBI_PLANS,
       DBI_AUDIT, DBI_HEALTH, DBI_STATUS, DBI_METRICS, DBI_HISTORY,
       DBI_CUTOVERS, DBI_COUNT };
static const char *const dbi_names[DBI_COUNT] = {
	"meta", "services", "svcrec", "nodes", "weights", "plans", "audit",
	"health", "status", "metrics", "history", "cutovers"
};

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

static const char *const kind_names[] = {
	"service", "node", "weight", "health", "status", "metrics", "cutover"
};
static const int kind_dbi[] = { DBI_SERVICES, DBI_NODES, DBI_WEIGHTS,
                                DBI_HEALTH, DBI_STATUS, DBI_METRICS,
                                DBI_CUTOVERS };

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

weightdb_t *weightdb_open(const char *path, char *err, size_t errlen)
{
	weightdb_t *db = xcalloc(1, sizeof(*db));
	db->path = xstrdup(path);
	int rc = mkdir_p(path);
	if (rc) {
		snprintf(err, errlen, "database %s: %s", path, strerror(-rc));
		goto fail;
	}
	MDB_txn *txn = NULL;
	if ((rc = mdb_env_create(&db->env)) ||
	    (rc = mdb_env_set_maxdbs(db->env, 32)) ||
	    (rc = mdb_env_set_maxreaders(db->env, 1024)) ||
	    /* A sparse file: the map only reserves address space. */
	    (rc = mdb_env_set_mapsize(db->env, (size_t)16 << 30)) ||
	    (rc = mdb_env_open(db->env, path, MDB_NOTLS, 0644))) {
		snprintf(err, errlen, "database %s: %s", path, mdb_strerror(rc));
		goto fail;
	}
	if ((rc = mdb_txn_begin(db->env, NULL, 0, &txn))) {
		snprintf(err, errlen, "database %s: %s", path, mdb_strerror(rc));
		goto fail;
	}
	for (int i = 0; i < DBI_COUNT; i++)
		if ((rc = mdb_dbi_open(txn, dbi_names[i], MDB_CREATE, &db->dbi[i]))) {
			snprintf(err, errlen, "database %s: %s: %s", path, dbi_names[i],
			         mdb_strerror(rc));
			mdb_txn_abort(txn);
			goto fail;
		}
	MDB_val k = { 6, "schema" }, v;
	rc = mdb_get(txn, db->dbi[DBI_META], &k, &v);
	if (rc == MDB_NOTFOUND) {
		uint8_t ver[4];
		wr32(ver, WDB_SCHEMA);
		v = (MDB_val){ 4, ver };
		rc = mdb_put(txn, db->dbi[DBI_META], &k, &v, 0);
	} else if (rc == 0 && (v.mv_size != 4 || rd32(v.mv_data) > WDB_SCHEMA)) {
		snprintf(err, errlen, "database %s: schema version %u is newer than "
		         "this gslbd understands (%d)", path,
		         v.mv_size == 4 ? rd32(v.mv_data) : 0, WDB_SCHEMA);
		mdb_txn_abort(txn);
		goto fail;
	}
	if (rc || (rc = mdb_txn_commit(txn))) {
		snprintf(err, errlen, "database %s: %s", path, mdb_strerror(rc));
		goto fail;
	}
	return db;
fail:
	if (db->env)
		mdb_env_close(db->env);
	free(db->path);
	free(db);
	return NULL;
}

void weightdb_set_nosync(weightdb_t *db)
{
	mdb_env_set_flags(db->env, MDB_NOSYNC, 1);
}

int weightdb_sync(weightdb_t *db)
{
	return mdb_env_sync(db->env, 1) ? GSLB_EIO : 0;
}

void weightdb_close(weightdb_t *db)
{
	if (!db)
		return;
	mdb_env_close(db->env);
	free(db->path);
	free(db);
}

const char *wdb_row_key(char *buf, size_t size, const char *svc,
                        const char *region, const char *isp)
{
	snprintf(buf, size, "%s|%s|%s", svc, region, isp);
	return buf;
}

/* Readers --------------------------------------------------------- */

wdb_reader_t *wdb_reader_new(weightdb_t *db)
{
	wdb_reader_t *r = xcalloc(1, sizeof(*r));
	r->db = db;
	if (mdb_txn_begin(db->env, NULL, MDB_RDONLY, &r->txn)) {
		free(r);
		return NULL;
	}
	mdb_txn_reset(r->txn);
	return r;
}

void wdb_reader_free(wdb_reader_t *r)
{
	if (!r)
		return;
	mdb_txn_abort(r->txn);
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
	return 0;
}

int wdb_service(wdb_reader_t *r, const char *name, size_t len, svc_rec_t *out)
{
	if (reader_take(r))
		return GSLB_EIO;
	MDB_val k = { len, (void *)name }, v;
	int rc = mdb_get(r->txn, r->db->dbi[DBI_SVCREC], &k, &v);
	if (rc)
		return GSLB_ENOENT;
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
	size_t rl = strlen(region), il = strlen(isp);
	if (svclen + rl + il + 2 > sizeof(key) || reader_take(r))
		return GSLB_EIO;
	memcpy(key, svc, svclen);
	key[svclen] = '|';
	memcpy(key + svclen + 1, region, rl);
	key[svclen + 1 + rl] = '|';
	memcpy(key + svclen + 2 + rl, isp, il);
	MDB_val k = { svclen + rl + il + 2, key }, v;
	if (mdb_get(r->txn, r->db->dbi[DBI_PLANS], &k, &v))
		return GSLB_ENOENT;
	*data = v.mv_data;
	*len = v.mv_size;
	return 0;
}

/* Writers --------------------------------------------------------- */

wdb_txn_t *wdb_begin(weightdb_t *db, const char *actor, char *err,
                     size_t errlen)
{
	wdb_txn_t *t = xcalloc(1, sizeof(*t));
	int rc = mdb_txn_begin(db->env, NULL, 0, &t->txn);
	if (rc) {
		snprintf(err, errlen, "database %s: %s", db->path, mdb_strerror(rc));
		free(t);
		return NULL;
	}
	t->db = db;
	t->actor = xstrdup(actor);
	t->changes = json_array();
	t->services = json_object();
	t->nodes = json_object();
	return t;
}

wdb_txn_t *wdb_begin_read(weightdb_t *db)
{
	wdb_txn_t *t = xcalloc(1, sizeof(*t));
	if (mdb_txn_begin(db->env, NULL, MDB_RDONLY, &t->txn)) {
		free(t);
		return NULL;
	}
	t->db = db;
	t->actor = xstrdup("");
	t->changes = json_array();
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

static int put_raw(wdb_txn_t *t, int dbi, const char *key, const void *data,
                   size_t len)
{
	MDB_val k = { strlen(key), (void *)key }, v = { len, (void *)data };
	int rc = mdb_put(t->txn, t->db->dbi[dbi], &k, &v, 0);
	return rc ? GSLB_EIO : 0;
}

static int del_raw(wdb_txn_t *t, int dbi, const char *key)
{
	MDB_val k = { strlen(key), (void *)key };
	int rc = mdb_del(t->txn, t->db->dbi[dbi], &k, NULL);
	return rc && rc != MDB_NOTFOUND ? GSLB_EIO : 0;
}

/* The service part of a weight row key. */
static void row_service(const char *key, char *svc, size_t size)
{
	const char *bar = strchr(key, '|');
	size_t n = bar ? (size_t)(bar - key) : strlen(key);
	if (n >= size)
		n = size - 1;
	memcpy(svc, key, n);
	svc[n] = 0;
}

int wdb_set(wdb_txn_t *t, wdb_kind_t kind, const char *key, json_t *val)
{
	json_t *before = wdb_get(t, kind, key);
	int rc;
	if (val) {
		char *s = json_dumps(val, JSON_COMPACT | JSON_SORT_KEYS);
		rc = put_raw(t, kind_dbi[kind], key, s, strlen(s));
		free(s);
	} else {
		rc = del_raw(t, kind_dbi[kind], key);
	}
	if (rc) {
		json_decref(before);
		return rc;
	}
	if (kind == WDB_METRICS)
		t->metrics_changed = 1;
	else if (kind != WDB_HEALTH && kind != WDB_STATUS)
		t->table_changed = 1;
	if (kind == WDB_STATUS || kind == WDB_METRICS) {
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

static int each_raw(MDB_txn *txn, MDB_dbi dbi, const char *prefix,
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
	return each_raw(t->txn, t->db->dbi[kind_dbi[kind]], prefix, each_json_cb, &e);
}

/* Commit: references, plans, audit -------------------------------- */

typedef struct {
	wdb_txn_t *t;
	json_t *cache;        /* node id -> node object, for this rebuild */
	char *err;
	size_t errlen;
	int rc;
	int client_rows;
	int kinds;            /* SVC_ROW_* seen */
	int shadow;           /* the service ignores health (S2-9) */
	const char *svc;
} rebuild_t;

static json_t *node_of(const char *id, void *arg)
{
	rebuild_t *r = arg;
	json_t *n = json_object_get(r->cache, id);
	if (n)
		return n;
	n = wdb_get(r->t, WDB_NODE, id);
	if (!n)
		return NULL;
	/* The health decision travels with the node into the plan. */
	json_t *h = wdb_get(r->t, WDB_HEALTH, id);
	if (h)
		json_object_set_new(n, "health", h);
	json_object_set_new(r->cache, id, n);
	return n;
}

static int rebuild_row(const char *key, json_t *row, void *arg)
{
	rebuild_t *r = arg;
	uint8_t *plan;
	size_t len;
	char msg[300];
	if (plan_encode(row, node_of, r, r->shadow, &plan, &len,
	                       msg, sizeof(msg))) {
		snprintf(r->err, r->errlen, "weight row %s: %s", key, msg);
		r->rc = GSLB_EINVAL;
		return 1;
	}
	if (put_raw(r->t, DBI_PLANS, key, plan, len))
		r->rc = GSLB_EIO;
	free(plan);
	/* key is "service|region|isp": note which kind of row it is. */
	const char *reg = key + strlen(r->svc) + 1;
	const char *bar = strchr(reg, '|');
	int any_reg = reg[0] == '*' && reg + 1 == bar;
	int any_isp = bar && strcmp(bar + 1, "*") == 0;
	r->kinds |= any_reg ? (any_isp ? SVC_ROW_DEFAULT : SVC_ROW_ISP)
	                    : (any_isp ? SVC_ROW_REGION : SVC_ROW_REGION_ISP);
	if (!(any_reg && any_isp))
		r->client_rows = 1;
	return r->rc != 0;
}

static int collect_key(const MDB_val *k, const MDB_val *v, void *arg)
{
	json_t *keys = arg;
	json_array_append_new(keys, json_stringn(k->mv_data, k->mv_size));
	return 0;
}

static const char *const all_down_names[] = { "open", "fallback", "empty" };

/* Rebuilds the svcrec record and every plan of service @svc. */
static int rebuild_service(wdb_txn_t *t, const char *svc, json_t *cache,
                           char *err, size_t errlen)
{
	char prefix[300];
	snprintf(prefix, sizeof(prefix), "%s|", svc);
	json_t *old = json_array();
	each_raw(t->txn, t->db->dbi[DBI_PLANS], prefix, collect_key, old);
	size_t i;
	json_t *k;
	json_array_foreach(old, i, k)
		del_raw(t, DBI_PLANS, json_string_value(k));
	json_decref(old);

	json_t *s = wdb_get(t, WDB_SERVICE, svc);
	if (!s) {
		del_raw(t, DBI_SVCREC, svc);
		/* Rows of a deleted service are an error. */
		json_t *rows = json_array();
		each_raw(t->txn, t->db->dbi[DBI_WEIGHTS], prefix, collect_key, rows);
		size_t n = json_array_size(rows);
		json_decref(rows);
		if (n) {
			snprintf(err, errlen, "service %s does not exist but has %zu weight row(s)",
			         svc, n);
			return GSLB_EINVAL;
		}
		return 0;
	}
	rebuild_t r = { t, cache, err, errlen, 0, 0, 0,
	                json_is_true(json_object_get(s, "shadow")), svc };
	wdb_each(t, WDB_WEIGHT, prefix, rebuild_row, &r);
	if (r.rc) {
		json_decref(s);
		return r.rc;
	}
	uint8_t rec[12] = { 1 };
	rec[1] = (uint8_t)json_integer_value(json_object_get(s, "answers"));
	const char *ad = json_string_value(json_object_get(s, "all_down"));
	for (int j = 0; j < 3; j++)
		if (ad && strcmp(ad, all_down_names[j]) == 0)
			rec[2] = (uint8_t)j;
	rec[3] = (uint8_t)((json_is_true(json_object_get(s, "sticky")) ? SVC_STICKY : 0) |
	                   (r.client_rows ? SVC_CLIENT_ROWS : 0) |
	                   r.kinds | SVC_ROW_KNOWN);
	wr32(rec + 4, (uint32_t)json_integer_value(json_object_get(s, "ttl")));
	wr32(rec + 8, (uint32_t)json_integer_value(json_object_get(s, "short_ttl")));
	json_decref(s);
	return put_raw(t, DBI_SVCREC, svc, rec, sizeof(rec));
}

typedef struct {
	json_t *nodes;        /* changed node ids */
	json_t *services;     /* out: services to rebuild */
	json_t *missing;      /* deleted nodes still referenced: "row" list */
	wdb_txn_t *t;
} refs_t;

static int find_refs(const char *key, json_t *row, void *arg)
{
	refs_t *r = arg;
	const char *id;
	json_t *w;
	json_object_foreach(json_object_get(row, "weights"), id, w) {
		if (!json_object_get(r->nodes, id))
			continue;
		char svc[256];
		row_service(key, svc, sizeof(svc));
		json_object_set_new(r->services, svc, json_true());
	}
	return 0;
}

static json_t *now_rfc3339(void)
{
	char buf[40];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_string(buf);
}

/* Generation counters in meta: "tablegen" (the operator's table) and
 * "metricsgen" (pushed metrics). */
static uint64_t generation(wdb_txn_t *t, const char *name)
{
	MDB_val k = { strlen(name), (void *)name }, v;
	uint64_t gen = 0;
	if (mdb_get(t->txn, t->db->dbi[DBI_META], &k, &v) == 0 && v.mv_size == 8)
		memcpy(&gen, v.mv_data, 8);
	return gen;
}

static void bump(wdb_txn_t *t, const char *name)
{
	uint64_t gen = generation(t, name) + 1;
	MDB_val k = { strlen(name), (void *)name }, v = { 8, &gen };
	mdb_put(t->txn, t->db->dbi[DBI_META], &k, &v, 0);
}

/* Commits @t's LMDB transaction and frees @t; 0 or -1 with @err.  A
 * change of the operator's table also bumps "tablegen", and one of the
 * pushed metrics "metricsgen", so that readers polling them (the health
 * thread) re-read only what changed. */
static int commit_free(wdb_txn_t *t, char *err, size_t errlen)
{
	if (t->table_changed)
		bump(t, "tablegen");
	if (t->metrics_changed)
		bump(t, "metricsgen");
	int rc = mdb_txn_commit(t->txn);
	t->txn = NULL;
	wdb_abort(t); /* frees the rest; no transaction is left to abort */
	if (rc) {
		snprintf(err, errlen, "database commit: %s", mdb_strerror(rc));
		return -1;
	}
	return 0;
}

int64_t wdb_commit(wdb_txn_t *t, const char *what, char *err, size_t errlen)
{
	int rc = 0;
	if (json_object_size(t->nodes)) {
		refs_t r = { t->nodes, t->services, NULL, t };
		wdb_each(t, WDB_WEIGHT, NULL, find_refs, &r);
	}
	json_t *cache = json_object();
	const char *svc;
	json_t *dummy;
	json_object_foreach(t->services, svc, dummy) {
		if ((rc = rebuild_service(t, svc, cache, err, errlen)))
			break;
	}
	json_decref(cache);
	if (rc) {
		wdb_abort(t);
		return rc;
	}

	/* Only data (status, metrics, history): no audit record. */
	uint64_t seq = 0;
	if (json_array_size(t->changes) == 0)
		return commit_free(t, err, errlen) ? GSLB_EIO : 0;
	/* The audit record: id from meta "seq". */
	MDB_val k = { 3, "seq" }, v;
	if (mdb_get(t->txn, t->db->dbi[DBI_META], &k, &v) == 0 && v.mv_size == 8)
		seq = (uint64_t)rd32(v.mv_data) << 32 | rd32((uint8_t *)v.mv_data + 4);
	seq++;
	uint8_t sb[8];
	wr32(sb, (uint32_t)(seq >> 32));
	wr32(sb + 4, (uint32_t)seq);
	v = (MDB_val){ 8, sb };
	json_t *rec = json_pack("{s:I, s:o, s:s, s:s, s:O}", "id", (json_int_t)seq,
	                        "time", now_rfc3339(), "actor", t->actor,
	                        "what", what, "changes", t->changes);
	char *text = json_dumps(rec, JSON_COMPACT);
	json_decref(rec);
	MDB_val ak = { 8, sb }, av = { strlen(text), text };
	if ((rc = mdb_put(t->txn, t->db->dbi[DBI_META], &k, &v, 0)) ||
	    (rc = mdb_put(t->txn, t->db->dbi[DBI_AUDIT], &ak, &av, MDB_APPEND))) {
		snprintf(err, errlen, "database: %s", mdb_strerror(rc));
		free(text);
		wdb_abort(t);
		return GSLB_EIO;
	}
	free(text);
	return commit_free(t, err, errlen) ? GSLB_EIO : (int64_t)seq;
}

/* Audit reading ----------------------------------------------------- */

typedef struct {
	int (*fn)(int64_t id, json_t *rec, void *arg);
	void *arg;
	int64_t since;
} audit_each_t;

static int audit_cb(const MDB_val *k, const MDB_val *v, void *arg)
{
	audit_each_t *a = arg;
	if (k->mv_size != 8)
		return 0;
	const uint8_t *d = k->mv_data;
	int64_t id = (int64_t)((uint64_t)rd32(d) << 32 | rd32(d + 4));
	if (id <= a->since)
		return 0;
	json_t *rec = json_loadb(v->mv_data, v->mv_size, 0, NULL);
	if (!rec)
		return 0;
	int rc = a->fn(id, rec, a->arg);
	json_decref(rec);
	return rc;
}

int wdb_audit_each(weightdb_t *db, int64_t since_id,
                   int (*fn)(int64_t id, json_t *rec, void *arg), void *arg)
{
	MDB_txn *txn;
	if (mdb_txn_begin(db->env, NULL, MDB_RDONLY, &txn))
		return GSLB_EIO;
	audit_each_t a = { fn, arg, since_id };
	int rc = each_raw(txn, db->dbi[DBI_AUDIT], NULL, audit_cb, &a);
	mdb_txn_abort(txn);
	return rc;
}

json_t *wdb_audit_get(weightdb_t *db, int64_t id)
{
	MDB_txn *txn;
	if (mdb_txn_begin(db->env, NULL, MDB_RDONLY, &txn))
		return NULL;
	uint8_t kb[8];
	wr32(kb, (uint32_t)((uint64_t)id >> 32));
	wr32(kb + 4, (uint32_t)id);
	MDB_val k = { 8, kb }, v;
	json_t *rec = NULL;
	if (mdb_get(txn, db->dbi[DBI_AUDIT], &k, &v) == 0)
		rec = json_loadb(v.mv_data, v.mv_size, 0, NULL);
	mdb_txn_abort(txn);
	return rec;
}

int64_t wdb_audit_last(weightdb_t *db)
{
	MDB_txn *txn;
	if (mdb_txn_begin(db->env, NULL, MDB_RDONLY, &txn))
		return 0;
	MDB_val k = { 3, "seq" }, v;
	int64_t seq = 0;
	if (mdb_get(txn, db->dbi[DBI_META], &k, &v) == 0 && v.mv_size == 8)
		seq = (int64_t)((uint64_t)rd32(v.mv_data) << 32 |
		                rd32((uint8_t *)v.mv_data + 4));
	mdb_txn_abort(txn);
	return seq;
}

/* History ------------------------------------------------------------ */

static size_t history_key(uint8_t *k, const char *node, uint32_t time)
{
	size_t n = strlen(node);
	if (n > 200)
		n = 200;
	memcpy(k, node, n);
	k[n] = '|';
	wr32(k + n + 1, time);
	return n + 5;
}

int wdb_history_add(wdb_txn_t *t, const char *node, uint32_t time, json_t *sample)
{
	uint8_t kb[256];
	char *s = json_dumps(sample, JSON_COMPACT);
	MDB_val k = { history_key(kb, node, time), kb }, v = { strlen(s), s };
	int rc = mdb_put(t->txn, t->db->dbi[DBI_HISTORY], &k, &v, 0);
	free(s);
	return rc ? GSLB_EIO : 0;
}

int wdb_history_trim(wdb_txn_t *t, uint32_t before)
{
	MDB_cursor *c;
	if (mdb_cursor_open(t->txn, t->db->dbi[DBI_HISTORY], &c))
		return GSLB_EIO;
	MDB_val k, v;
	int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST);
	while (rc == 0) {
		if (k.mv_size >= 5 && rd32((uint8_t *)k.mv_data + k.mv_size - 4) < before)
			mdb_cursor_del(c, 0);
		rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
	}
	mdb_cursor_close(c);
	return 0;
}

int wdb_history_each(weightdb_t *db, const char *node, uint32_t since,
                     int (*fn)(uint32_t time, json_t *sample, void *arg),
                     void *arg)
{
	MDB_txn *txn;
	MDB_cursor *c;
	if (mdb_txn_begin(db->env, NULL, MDB_RDONLY, &txn))
		return GSLB_EIO;
	if (mdb_cursor_open(txn, db->dbi[DBI_HISTORY], &c)) {
		mdb_txn_abort(txn);
		return GSLB_EIO;
	}
	uint8_t kb[256];
	size_t kl = history_key(kb, node, since);
	MDB_val k = { kl, kb }, v;
	int rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
	while (rc == 0 && k.mv_size == kl && memcmp(k.mv_data, kb, kl - 4) == 0) {
		json_t *j = json_loadb(v.mv_data, v.mv_size, 0, NULL);
		if (j) {
			int stop = fn(rd32((uint8_t *)k.mv_data + kl - 4), j, arg);
			json_decref(j);
			if (stop)
				break;
		}
		rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
	}
	mdb_cursor_close(c);
	mdb_txn_abort(txn);
	return 0;
}

uint64_t wdb_table_generation(wdb_txn_t *t)
{
	return generation(t, "tablegen");
}

uint64_t wdb_metrics_generation(wdb_txn_t *t)
{
	return generation(t, "metricsgen");
}
