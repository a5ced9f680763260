/* SPDX-License-Identifier: MIT */
/* The digest of the table (see digest.h). */
#include "cluster/digest.h"
#include "cluster/override.h"
#include "cluster/sync.h"
#include "common/hash.h"
#include "common/util.h"

#include <stdlib.h>
#include <string.h>

/* A 64-bit finaliser (splitmix64's): the sum of FNV hashes alone would
 * let nearby hashes cancel out more easily. */
static uint64_t mix(uint64_t h)
{
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

void cluster_digest_add(cluster_digest_t *d, wdb_kind_t kind, const char *key,
                        json_t *val)
{
	char *s = json_dumps(val, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	const char *kn = cluster_kind_name(kind);
	uint64_t h = HASH_FNV64_INIT;
	/* kind, key and value, each ended by a zero byte that none holds */
	const char *parts[3] = { kn ? kn : "", key, s ? s : "" };
	for (int i = 0; i < 3; i++) {
		for (const char *p = parts[i]; *p; p++)
			h = hash_fnv64_step(h, (uint8_t)*p);
		h = hash_fnv64_step(h, 0);
	}
	free(s);
	d->sum += mix(h);
	d->count++;
}

int cluster_digest_equal(const cluster_digest_t *a, const cluster_digest_t *b)
{
	return a->sum == b->sum && a->count == b->count;
}

void cluster_digest_table(json_t *table, cluster_digest_t *d)
{
	json_t *nodes = json_object_get(table, "node");
	for (int k = 0; k < WDB_KIND_COUNT; k++) {
		const char *kn = cluster_kind_name((wdb_kind_t)k);
		if (!kn)
			continue;
		const char *key;
		json_t *v;
		json_object_foreach(json_object_get(table, kn), key, v) {
			if (k == WDB_HEALTH && !json_object_get(nodes, key))
				continue;
			cluster_digest_add(d, (wdb_kind_t)k, key, v);
		}
	}
}

typedef struct walk {
	cluster_digest_t *d;
	wdb_kind_t kind;
	json_t *overrides;    /* {"KIND/KEY": record} */
} walk_t;

static int add_local(const char *key, json_t *val, void *arg)
{
	walk_t *w = arg;
	char ok[600];
	cluster_override_key(ok, sizeof(ok), w->kind, key);
	json_t *rec = json_object_get(w->overrides, ok);
	if (rec)
		val = json_object_get(rec, "cluster");
	if (val && !json_is_null(val))
		cluster_digest_add(w->d, w->kind, key, val);
	return 0;
}

int cluster_digest_store(weightdb_t *db, cluster_digest_t *d, int64_t *rev,
                         unsigned *overrides)
{
	wdb_txn_t *t = wdb_begin_read(db);
	if (!t)
		return GSLB_EIO;
	memset(d, 0, sizeof(*d));
	*rev = (int64_t)wdb_meta_u64(t, "clusterrev");
	walk_t w = { d, WDB_SERVICE, cluster_override_list(t) };
	for (int k = 0; k < WDB_KIND_COUNT; k++) {
		if (!cluster_kind_shared((wdb_kind_t)k))
			continue;
		w.kind = (wdb_kind_t)k;
		wdb_each(t, w.kind, NULL, add_local, &w);
	}
	if (overrides)
		*overrides = (unsigned)json_object_size(w.overrides);
	json_decref(w.overrides);
	wdb_abort(t);
	return 0;
}
