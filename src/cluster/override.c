/* SPDX-License-Identifier: MIT */
/* Declared local overrides in cluster mode (see override.h). */
#include "cluster/override.h"
#include "cluster/sync.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void cluster_override_key(char *out, size_t size, wdb_kind_t kind,
                          const char *key)
{
	snprintf(out, size, "%s/%s", cluster_kind_name(kind), key);
}

json_t *cluster_override_merge(json_t *cluster, json_t *patch)
{
	if (!cluster)
		return NULL;
	json_t *m = json_deep_copy(cluster);
	json_object_update(m, patch);
	return m;
}

/* The top-level fields of @after that differ from @before's, into
 * @patch; 0, or -1 when a field of @before is gone from @after. */
static int shallow_diff(json_t *before, json_t *after, json_t *patch)
{
	const char *f;
	json_t *v;
	json_object_foreach(before, f, v)
		if (!json_object_get(after, f))
			return -1;
	json_object_foreach(after, f, v) {
		json_t *b = json_object_get(before, f);
		if (!b || !json_equal(b, v))
			json_object_set(patch, f, v);
	}
	return 0;
}

int cluster_override_allowed(wdb_kind_t kind, const char *key, json_t *before,
                             json_t *after, json_t **patch, char *why,
                             size_t whylen)
{
	const char *only = kind == WDB_NODE ? "admin" : kind == WDB_WEIGHT ? "weights" : NULL;
	const char *name = cluster_kind_name(kind);
	*patch = NULL;
	if (!only || !before || !after) {
		snprintf(why, whylen, "%s %s: %s", name ? name : "record", key,
		         !only ? "only a node's admin drain or down, or a weight row's "
		         "weights, can be overridden" : before ? "cannot be deleted by an "
		         "override" : "cannot be created by an override");
		return 0;
	}
	json_t *p = json_object();
	int gone = shallow_diff(before, after, p);
	/* A drain also sets the deadline of its short TTL (S0-11). */
	size_t extra = kind == WDB_NODE && json_object_get(p, "short_until") ? 1 : 0;
	if (gone || json_object_size(p) != 1 + extra || !json_object_get(p, only)) {
		char fields[300] = "";
		size_t l = 0;
		const char *f;
		json_t *v;
		json_object_foreach(p, f, v)
			if (l < sizeof(fields))
				l += (size_t)snprintf(fields + l, sizeof(fields) - l, " %s", f);
		json_decref(p);
		snprintf(why, whylen, "%s %s: an override changes only %s (this changes%s%s)",
		         name, key, kind == WDB_NODE ? "the admin state (drain or down)" :
		         "the weights", fields, gone ? " and removes fields" : "");
		return 0;
	}
	const char *adm = json_string_value(json_object_get(p, "admin"));
	if (kind == WDB_NODE && (!adm || (strcmp(adm, "drain") && strcmp(adm, "down")))) {
		json_decref(p);
		snprintf(why, whylen, "node %s: an override sets admin drain or down, not %s",
		         key, adm ? adm : "that");
		return 0;
	}
	*patch = p;
	return 1;
}

int cluster_override_put(wdb_txn_t *t, wdb_kind_t kind, const char *key,
                         json_t *cluster, json_t *patch, const char *actor,
                         const char *what, int64_t rev)
{
	char ok[600], now[40];
	cluster_override_key(ok, sizeof(ok), kind, key);
	time_t tt = time(NULL);
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_t *rec = wdb_get(t, WDB_OVERRIDE, ok);
	if (rec) {
		json_object_update(json_object_get(rec, "patch"), patch);
	} else {
		rec = json_pack("{s:s, s:s, s:O, s:O}", "kind", cluster_kind_name(kind),
		                "key", key, "patch", patch,
		                "cluster", cluster ? cluster : json_null());
	}
	json_object_set_new(rec, "actor", json_string(actor));
	json_object_set_new(rec, "time", json_string(now));
	json_object_set_new(rec, "what", json_string(what));
	json_object_set_new(rec, "revision", json_integer(rev));
	int rc = wdb_set(t, WDB_OVERRIDE, ok, rec);
	json_decref(rec);
	return rc;
}

int cluster_override_keep(wdb_txn_t *t, wdb_kind_t kind, const char *key,
                          json_t *val, json_t **out)
{
	char ok[600];
	if (kind != WDB_NODE && kind != WDB_WEIGHT)
		return 0;
	cluster_override_key(ok, sizeof(ok), kind, key);
	json_t *rec = wdb_get(t, WDB_OVERRIDE, ok);
	if (!rec)
		return 0;
	json_object_set(rec, "cluster", val ? val : json_null());
	int rc = wdb_set(t, WDB_OVERRIDE, ok, rec);
	if (!rc)
		*out = cluster_override_merge(val, json_object_get(rec, "patch"));
	json_decref(rec);
	return rc ? rc : 1;
}

static int collect(const char *key, json_t *val, void *arg)
{
	json_object_set(arg, key, val);
	return 0;
}

json_t *cluster_override_list(wdb_txn_t *t)
{
	json_t *out = json_object();
	wdb_each(t, WDB_OVERRIDE, NULL, collect, out);
	return out;
}

const char *cluster_override_text(json_t *rec, char *out, size_t size)
{
	char patch[300] = "";
	size_t l = 0;
	const char *f;
	json_t *v;
	json_object_foreach(json_object_get(rec, "patch"), f, v) {
		if (strcmp(f, "short_until") == 0)
			continue;    /* the drain's own deadline */
		char *s = json_is_string(v) ? NULL :
		          json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
		if (l < sizeof(patch))
			l += (size_t)snprintf(patch + l, sizeof(patch) - l, "%s%s %s", l ? ", " : "",
			                      f, s ? s : json_string_value(v));
		free(s);
	}
	snprintf(out, size, "%s %s: %s (since %s, %s, at etcd revision %lld)",
	         json_string_value(json_object_get(rec, "kind")) ?: "?",
	         json_string_value(json_object_get(rec, "key")) ?: "?", patch,
	         json_string_value(json_object_get(rec, "time")) ?: "?",
	         json_string_value(json_object_get(rec, "actor")) ?: "?",
	         (long long)json_integer_value(json_object_get(rec, "revision")));
	return out;
}
