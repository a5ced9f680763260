/* SPDX-License-Identifier: MIT */
/* The operator's table between etcd and the local store (see sync.h for
 * the layout in etcd and the revision rule). */
#include "cluster/sync.h"
#include "cluster/override.h"
#include "common/log.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct { wdb_kind_t kind; const char *name; } shared[] = {
	{ WDB_SERVICE, "service" }, { WDB_NODE, "node" },
	{ WDB_WEIGHT, "weight" }, { WDB_CUTOVER, "cutover" },
	{ WDB_BUDGET, "budget" },
	/* The signing keys' metadata and the zones' rollovers, so that
	 * every instance signs with the same keys (their files travel as
	 * P keystore/FILE, cluster/keyfiles.h). */
	{ WDB_DNSSEC, "dnssec" },
	/* The elected instance's decisions (S4-6): last, after the nodes
	 * they are about; and the steering engine's state of each row, so
	 * that a new elected instance goes on from its predecessor's. */
	{ WDB_HEALTH, "health" }, { WDB_STEER, "steer" },
};
#define NSHARED (sizeof(shared) / sizeof(shared[0]))

const char *cluster_kind_name(wdb_kind_t kind)
{
	for (size_t i = 0; i < NSHARED; i++)
		if (shared[i].kind == kind)
			return shared[i].name;
	return NULL;
}

static int kind_of(const char *name, size_t len, wdb_kind_t *kind)
{
	for (size_t i = 0; i < NSHARED; i++)
		if (strlen(shared[i].name) == len && memcmp(shared[i].name, name, len) == 0) {
			*kind = shared[i].kind;
			return 1;
		}
	return 0;
}

int cluster_kind_by_name(const char *name, wdb_kind_t *kind)
{
	return name && kind_of(name, strlen(name), kind);
}

int cluster_kind_shared(wdb_kind_t kind)
{
	return cluster_kind_name(kind) != NULL;
}

void cluster_key(char *out, size_t size, const char *prefix, wdb_kind_t kind,
                 const char *key)
{
	snprintf(out, size, "%sconfig/%s/%s", prefix, cluster_kind_name(kind), key);
}

int cluster_parse_key(const char *prefix, const char *ekey, wdb_kind_t *kind,
                      const char **key)
{
	size_t pl = strlen(prefix);
	if (strncmp(ekey, prefix, pl) != 0 || strncmp(ekey + pl, "config/", 7) != 0)
		return 0;
	const char *k = ekey + pl + 7, *slash = strchr(k, '/');
	if (!slash || !slash[1] || !kind_of(k, (size_t)(slash - k), kind))
		return 0;
	*key = slash + 1;
	return 1;
}

/* The kind of a change record by its name ("node"). */
static int change_kind(json_t *c, wdb_kind_t *kind)
{
	return cluster_kind_by_name(json_string_value(json_object_get(c, "kind")), kind);
}

int cluster_begin_rev(weightdb_t *db, const char *actor, const char *counter,
                      int64_t rev, wdb_txn_t **t, char *err, size_t errlen)
{
	if (!(*t = wdb_begin(db, actor, err, errlen)))
		return GSLB_EIO;
	if ((int64_t)wdb_meta_u64(*t, counter) >= rev) {
		wdb_abort(*t);
		*t = NULL;
		return 0;
	}
	return 1;
}

/* cluster_apply(); with @change, @rev moved the change marker (an
 * operator's change): the store's "changerev" follows. */
static int apply_rev(weightdb_t *db, int64_t rev, json_t *changes,
                     const char *actor, const char *what, int change,
                     int64_t *id, char *err, size_t errlen)
{
	wdb_txn_t *t;
	int open = cluster_begin_rev(db, actor, "clusterrev", rev, &t, err, errlen);
	if (open <= 0)
		return open;
	size_t i;
	json_t *c;
	int rc = 0;
	json_array_foreach(changes, i, c) {
		wdb_kind_t kind;
		const char *key = json_string_value(json_object_get(c, "key"));
		if (!key || !change_kind(c, &kind))
			continue;
		json_t *after = json_object_get(c, "after"), *kept = NULL;
		if (json_is_null(after))
			after = NULL;
		/* A declared override stays over the cluster's new object. */
		int ov = cluster_override_keep(t, kind, key, after, &kept);
		rc = ov < 0 ? ov : wdb_set(t, kind, key, ov ? kept : after);
		json_decref(kept);
		if (rc == GSLB_ENOENT && kind == WDB_HEALTH) {
			/* A decision about a node deleted meanwhile. */
			rc = 0;
			continue;
		}
		if (rc) {
			snprintf(err, errlen, "%s %s: %s", after ? "writing" : "deleting",
			         key, wdb_strerror(rc));
			wdb_abort(t);
			return rc;
		}
	}
	/* The local record names the change as every instance does. */
	wdb_txn_note(t, "revision", json_integer(rev));
	if ((rc = wdb_set_meta_u64(t, "clusterrev", (uint64_t)rev)) ||
	    (change && (rc = wdb_set_meta_u64(t, "changerev", (uint64_t)rev)))) {
		wdb_abort(t);
		snprintf(err, errlen, "%s", wdb_strerror(rc));
		return rc;
	}
	int64_t aid = wdb_commit(t, what, err, errlen);
	if (aid < 0)
		return (int)aid;
	if (id)
		*id = aid;
	return 1;
}

int cluster_apply(weightdb_t *db, int64_t rev, json_t *changes,
                  const char *actor, const char *what, int64_t *id,
                  char *err, size_t errlen)
{
	return apply_rev(db, rev, changes, actor, what, 0, id, err, errlen);
}

int cluster_apply_change(weightdb_t *db, int64_t rev, json_t *changes,
                         const char *actor, const char *what, int64_t *id,
                         char *err, size_t errlen)
{
	return apply_rev(db, rev, changes, actor, what, 1, id, err, errlen);
}

int64_t cluster_local_change(weightdb_t *db)
{
	wdb_txn_t *t = wdb_begin_read(db);
	if (!t)
		return 0;
	int64_t r = (int64_t)wdb_meta_u64(t, "changerev");
	wdb_abort(t);
	return r;
}

int64_t cluster_local_rev(weightdb_t *db)
{
	wdb_txn_t *t = wdb_begin_read(db);
	if (!t)
		return 0;
	int64_t r = (int64_t)wdb_meta_u64(t, "clusterrev");
	wdb_abort(t);
	return r;
}

int cluster_marker(etcd_t *e, const char *prefix, int64_t *rev,
                   int64_t *marker, char *err, size_t errlen)
{
	char key[512];
	snprintf(key, sizeof(key), "%schange", prefix);
	json_t *req = etcd_range_req(key, 0), *ans = NULL;
	json_object_set_new(req, "keys_only", json_true());
	int rc = etcd_post(e, "/v3/kv/range", req, &ans, err, errlen);
	json_decref(req);
	if (rc)
		return rc;
	*rev = etcd_int(json_object_get(ans, "header"), "revision");
	*marker = etcd_int(json_array_get(json_object_get(ans, "kvs"), 0), "mod_revision");
	json_decref(ans);
	return 0;
}

/* The etcd table: { kind name: { key: object } }. */
typedef struct table {
	json_t *by_kind[WDB_KIND_COUNT];
} table_t;

/* wdb_each() callback: differences of one local object with etcd's. */
typedef struct diff {
	wdb_txn_t *t;
	wdb_kind_t kind;
	json_t *want;      /* etcd's objects of this kind (entries removed as seen) */
	json_t *dels;      /* local keys that etcd does not have */
	int n;
} diff_t;

static int diff_local(const char *key, json_t *val, void *arg)
{
	diff_t *d = arg;
	json_t *w = json_object_get(d->want, key);
	if (!w)
		json_array_append_new(d->dels, json_string(key));
	else if (json_equal(w, val))
		json_object_del(d->want, key);
	return 0;
}

/* The objects of @tb under a declared override of @t's store: the
 * override takes etcd's object as the cluster's, and @tb what the table
 * is to hold (override.h). */
static int keep_overrides(wdb_txn_t *t, table_t *tb)
{
	json_t *ovs = cluster_override_list(t), *rec;
	const char *ok;
	int rc = 0;
	json_object_foreach(ovs, ok, rec) {
		wdb_kind_t k;
		const char *key = json_string_value(json_object_get(rec, "key"));
		if (!key || !cluster_kind_by_name(json_string_value(json_object_get(rec, "kind")), &k))
			continue;
		json_t *kept = NULL;
		if ((rc = cluster_override_keep(t, k, key, json_object_get(tb->by_kind[k], key),
		                                &kept)) < 0)
			break;
		rc = 0;
		if (kept)
			json_object_set_new(tb->by_kind[k], key, kept);
		else
			json_object_del(tb->by_kind[k], key);
	}
	json_decref(ovs);
	return rc;
}

/* Makes @db's table equal to @tb of etcd revision @rev, unless the store
 * reflects a later revision (or, without @force, @rev itself). */
static int apply_table(weightdb_t *db, table_t *tb, int64_t rev, int64_t marker,
                       int force, const char *actor, char *err, size_t errlen)
{
	wdb_txn_t *t;
	int open = cluster_begin_rev(db, actor, "clusterrev", rev + (force ? 1 : 0), &t,
	                             err, errlen);
	if (open <= 0)
		return open;
	int n = 0, rc = keep_overrides(t, tb);
	/* Nodes before the rows that name them is not needed (the commit
	 * checks references at its end), but deletions go first so that a
	 * row and its node may both go. */
	for (size_t i = 0; i < NSHARED && !rc; i++) {
		wdb_kind_t k = shared[i].kind;
		diff_t d = { t, k, tb->by_kind[k], json_array(), 0 };
		wdb_each(t, k, NULL, diff_local, &d);
		size_t j;
		json_t *key;
		json_array_foreach(d.dels, j, key) {
			if ((rc = wdb_set(t, k, json_string_value(key), NULL)))
				break;
			n++;
		}
		json_decref(d.dels);
		const char *ok;
		json_t *v;
		json_object_foreach(d.want, ok, v) {
			if (rc || (rc = wdb_set(t, k, ok, v))) {
				if (rc == GSLB_ENOENT && k == WDB_HEALTH) {
					rc = 0; /* about a node that is gone */
					continue;
				}
				break;
			}
			n++;
		}
	}
	if (!rc)
		rc = wdb_set_meta_u64(t, "clusterrev", (uint64_t)rev);
	if (!rc)
		rc = wdb_set_meta_u64(t, "changerev", (uint64_t)marker);
	/* etcd's table: what the incremental check counts as the cluster's
	 * (cluster/verify.c). */
	wdb_txn_note(t, "revision", json_integer(rev));
	if (rc) {
		snprintf(err, errlen, "resync: %s", wdb_strerror(rc));
		wdb_abort(t);
		return rc;
	}
	char what[80];
	snprintf(what, sizeof(what), "%s from etcd at revision %lld",
	         force ? "forced resync" : "resync", (long long)rev);
	int64_t id = wdb_commit(t, what, err, errlen);
	return id < 0 ? (int)id : n;
}

typedef struct {
	const char *prefix;
	json_t *table;
} table_arg_t;

/* One object of the cluster's table into the table of @arg (a
 * table_arg_t), under its kind. */
static int table_object(const etcd_kv_t *kv, void *arg)
{
	table_arg_t *ta = arg;
	wdb_kind_t kind;
	const char *key;
	json_t *v = json_loadb(kv->value, kv->value_len, 0, NULL);
	if (v && cluster_parse_key(ta->prefix, kv->key, &kind, &key)) {
		json_object_set_new(json_object_get(ta->table, cluster_kind_name(kind)),
		                    key, v);
	} else {
		log_warning("cluster: etcd key %s: not an object of ours; ignored",
		            kv->key);
		json_decref(v);
	}
	return 0;
}

int cluster_read_table(etcd_t *e, const char *prefix, int64_t at,
                       json_t **table, int64_t *rev, int64_t *marker,
                       char *err, size_t errlen)
{
	char mk[512], ck[512];
	snprintf(mk, sizeof(mk), "%schange", prefix);
	snprintf(ck, sizeof(ck), "%sconfig/", prefix);
	/* One transaction: the table and the last change's revision of the
	 * same moment. */
	json_t *r0 = etcd_range_req(mk, 0), *r1 = etcd_range_req(ck, 1);
	if (at > 0) {
		json_object_set_new(r0, "revision", json_integer(at));
		json_object_set_new(r1, "revision", json_integer(at));
	}
	json_t *req = json_pack("{s:[{s:o},{s:o}]}", "success",
	                        "request_range", r0, "request_range", r1);
	json_t *ans = NULL;
	int rc = etcd_post_bulk(e, "/v3/kv/txn", req, &ans, err, errlen);
	json_decref(req);
	if (rc)
		return rc;
	*rev = at > 0 ? at : etcd_int(json_object_get(ans, "header"), "revision");
	json_t *resp = json_object_get(ans, "responses");
	r0 = json_object_get(json_array_get(resp, 0), "response_range");
	r1 = json_object_get(json_array_get(resp, 1), "response_range");
	*marker = etcd_int(json_array_get(json_object_get(r0, "kvs"), 0), "mod_revision");
	*table = json_object();
	for (int k = 0; k < WDB_KIND_COUNT; k++)
		if (cluster_kind_name((wdb_kind_t)k))
			json_object_set_new(*table, cluster_kind_name((wdb_kind_t)k), json_object());
	table_arg_t ta = { prefix, *table };
	etcd_kvs_each(r1, table_object, &ta);
	json_decref(ans);
	return 0;
}

/* The store records whose copy it is (meta "cluster"), so that a local
 * write to it is refused (gslbctl(8)): once, audited. */
static void mark_member(weightdb_t *db, const char *prefix, const char *actor)
{
	char have[256], err[512] = "the store refused it", what[400];
	wdb_txn_t *t = wdb_begin_read(db);
	if (!t)
		return;
	wdb_meta_str(t, "cluster", have, sizeof(have));
	wdb_abort(t);
	if (strcmp(have, prefix) == 0 || !(t = wdb_begin(db, actor, err, sizeof(err))))
		return;
	snprintf(what, sizeof(what), "this store is the local copy of cluster %s", prefix);
	if (wdb_set_meta_str(t, "cluster", prefix) || wdb_commit(t, what, err, sizeof(err)) < 0)
		log_warning("cluster: cannot record the cluster in the store: %s", err);
}

/* A store that was up to date at a full read, from before it recorded
 * the last change's revision ("changerev"): recorded now, once. */
static void note_change(weightdb_t *db, int64_t marker, const char *actor)
{
	char err[512] = "the store refused it";
	wdb_txn_t *t = wdb_begin_read(db);
	if (!t)
		return;
	int64_t have = (int64_t)wdb_meta_u64(t, "changerev");
	int64_t at = (int64_t)wdb_meta_u64(t, "clusterrev");
	wdb_abort(t);
	if (have >= marker || at < marker || !(t = wdb_begin(db, actor, err, sizeof(err))))
		return;
	if (wdb_set_meta_u64(t, "changerev", (uint64_t)marker) ||
	    wdb_commit(t, "the revision of the cluster's last change recorded", err,
	               sizeof(err)) < 0)
		log_warning("cluster: cannot record the last change's revision: %s", err);
}

static int resync(weightdb_t *db, etcd_t *e, const char *prefix, int force,
                  const char *actor, int64_t *rev, int64_t *marker, char *err,
                  size_t errlen)
{
	json_t *table = NULL;
	int rc = cluster_read_table(e, prefix, 0, &table, rev, marker, err, errlen);
	if (rc)
		return rc;
	table_t tb;
	for (int k = 0; k < WDB_KIND_COUNT; k++) {
		const char *kn = cluster_kind_name((wdb_kind_t)k);
		tb.by_kind[k] = kn ? json_incref(json_object_get(table, kn)) : json_object();
	}
	json_decref(table);
	rc = apply_table(db, &tb, *rev, *marker, force, actor, err, errlen);
	if (rc >= 0) {
		mark_member(db, prefix, actor);
		note_change(db, *marker, actor);
	}
	for (int k = 0; k < WDB_KIND_COUNT; k++)
		json_decref(tb.by_kind[k]);
	return rc;
}

int cluster_resync(weightdb_t *db, etcd_t *e, const char *prefix,
                   const char *actor, int64_t *rev, int64_t *marker,
                   char *err, size_t errlen)
{
	return resync(db, e, prefix, 0, actor, rev, marker, err, errlen);
}

int cluster_resync_force(weightdb_t *db, etcd_t *e, const char *prefix,
                         const char *actor, int64_t *rev, char *err,
                         size_t errlen)
{
	int64_t marker;
	return resync(db, e, prefix, 1, actor, rev, &marker, err, errlen);
}
