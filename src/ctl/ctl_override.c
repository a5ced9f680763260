/* SPDX-License-Identifier: MIT */
/* gslbctl and a cluster member's local store: a plain local write to it
 * refused (it would make this instance answer apart from the others
 * with nothing saying so); the break-glass path for an etcd outage,
 * --local-override, whose changes stay declared overrides of this
 * instance (cluster/override.h) until `cluster overrides push` writes
 * them to the cluster or `cluster overrides drop` drops them; and the
 * check of the table against etcd's (cluster/digest.h) for `cluster
 * status`. */
#include "config.h"
#include "ctl/ctl.h"
#include "ctl/ctl_override.h"
#include "cluster/digest.h"
#include "cluster/override.h"
#include "cluster/sync.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ctl_local_override;

/* The cluster prefix @t's store is a copy of into @p: 1, or 0 when it
 * is no member's. */
static int member_of(wdb_txn_t *t, char *p, size_t n)
{
	if (wdb_meta_str(t, "cluster", p, n) && *p)
		return 1;
	/* A store that took an etcd revision before gslbd recorded its
	 * cluster in it (the first full read does). */
	snprintf(p, n, "(not recorded yet)");
	return wdb_meta_u64(t, "clusterrev") > 0;
}

static int changes_shared(wdb_txn_t *t)
{
	size_t i;
	json_t *c;
	wdb_kind_t k;
	json_array_foreach(wdb_changes(t), i, c)
		if (cluster_kind_by_name(json_string_value(json_object_get(c, "kind")), &k))
			return 1;
	return 0;
}

void ctl_override_guard(wdb_txn_t *t)
{
	char p[256];
	if (!member_of(t, p, sizeof(p)) || !changes_shared(t))
		return;
	/* Test-only (tests/integ/test_cluster_override.sh): the table
	 * changed behind the cluster's back, as a divergence to detect. */
	if (getenv("GSLBCTL_TEST_LOCAL_WRITE"))
		return;
	long long rev = (long long)wdb_meta_u64(t, "clusterrev");
	wdb_abort(t);
	ctl_die("database %s is the local copy of cluster %s (at etcd revision %lld): "
	        "a local write would make this instance answer apart from the others; "
	        "write through the cluster (gslbctl -c with the configuration's "
	        "cluster section) or, while etcd is down, use --local-override; "
	        "nothing was changed", ctl_db_path, p, rev);
}

int ctl_override_sync(void)
{
	char err[1024];
	int64_t rev, marker;
	if (!ctl_local_override)
		return 0;
	etcd_t *e = ctl_cluster_etcd();
	if (!e)
		return 1;
	etcd_set_retry(e, 0);
	if (cluster_marker(e, ctl_cluster_conf()->prefix, &rev, &marker, err,
	                   sizeof(err)) == 0)
		ctl_die("--local-override: etcd is reachable (revision %lld): write "
		        "through the cluster, without --local-override; nothing was changed",
		        (long long)rev);
	return 1;
}

/* Records the changes of @t as overrides; returns how many, with the
 * records' keys in @keys. */
static size_t record_overrides(wdb_txn_t *t, const char *what, const char *actor,
                               int64_t rev, json_t *keys)
{
	json_t *changes = json_deep_copy(wdb_changes(t)), *c;
	size_t i, n = 0;
	json_array_foreach(changes, i, c) {
		wdb_kind_t k;
		const char *kn = json_string_value(json_object_get(c, "kind"));
		const char *key = json_string_value(json_object_get(c, "key"));
		if (!cluster_kind_by_name(kn, &k))
			continue;    /* local data, not the cluster's table */
		json_t *before = json_object_get(c, "before"), *after = json_object_get(c, "after");
		json_t *patch;
		char why[600];
		if (!cluster_override_allowed(k, key, json_is_null(before) ? NULL : before,
		                              json_is_null(after) ? NULL : after, &patch, why,
		                              sizeof(why)))
			ctl_die("--local-override: %s; nothing was changed", why);
		int rc = cluster_override_put(t, k, key, before, patch, actor, what, rev);
		json_decref(patch);
		if (rc)
			ctl_die("--local-override: %s %s: %s; nothing was changed", kn, key,
			        wdb_strerror(rc));
		char ok[600];
		cluster_override_key(ok, sizeof(ok), k, key);
		json_array_append_new(keys, json_string(ok));
		n++;
	}
	json_decref(changes);
	return n;
}

int ctl_override_commit(wdb_txn_t *t, const char *what, const char *actor)
{
	char err[1024], p[256], full[600];
	if (!ctl_local_override)
		return 0;
	if (!member_of(t, p, sizeof(p)))
		ctl_die("--local-override: database %s is no cluster member's copy: "
		        "write without it; nothing was changed", ctl_db_path);
	if (wdb_check(t, err, sizeof(err)))
		ctl_die("%s; nothing was changed", err);
	int64_t rev = (int64_t)wdb_meta_u64(t, "clusterrev");
	json_t *keys = json_array(), *k;
	if (!record_overrides(t, what, actor, rev, keys))
		ctl_die("--local-override: the command changes nothing of the cluster's "
		        "table; nothing was changed");
	json_t *recs = json_array();
	size_t i;
	json_array_foreach(keys, i, k)
		json_array_append_new(recs, wdb_get(t, WDB_OVERRIDE, json_string_value(k)));
	json_decref(keys);
	snprintf(full, sizeof(full), "local override: %s", what);
	int64_t id = wdb_commit(t, full, err, sizeof(err));
	if (id < 0)
		ctl_die("%s; nothing was changed", err);
	json_array_foreach(recs, i, k) {
		char text[800];
		fprintf(stderr, "gslbctl: warning: local override on this instance only "
		        "(cluster %s): %s; it stays until 'gslbctl cluster overrides push' "
		        "writes it to the cluster or 'gslbctl cluster overrides drop' drops "
		        "it\n", p, cluster_override_text(k, text, sizeof(text)));
	}
	json_decref(recs);
	if (ctl_json)
		ctl_print_commit(json_pack("{s:I, s:b, s:I}", "change", (json_int_t)id,
		                           "override", 1, "revision", (json_int_t)rev));
	else
		printf("local override at cluster revision %lld: %s\n", (long long)rev, what);
	return 1;
}

/* cluster overrides ----------------------------------------------- */

static json_t *read_overrides(void)
{
	wdb_txn_t *t = ctl_begin_read();
	json_t *ovs = cluster_override_list(t);
	wdb_abort(t);
	return ovs;
}

/* "node a, weight www|*|*": the overrides of @ovs for an audit text. */
static void names_of(json_t *ovs, char *out, size_t n)
{
	const char *k;
	json_t *rec;
	size_t l = 0;
	out[0] = 0;
	json_object_foreach(ovs, k, rec)
		if (l < n)
			l += (size_t)snprintf(out + l, n - l, "%s%s %s", l ? ", " : "",
			                      json_string_value(json_object_get(rec, "kind")),
			                      json_string_value(json_object_get(rec, "key")));
}

static int list_overrides(json_t *ovs)
{
	if (ctl_json) {
		json_t *arr = json_array();
		const char *k;
		json_t *rec;
		json_object_foreach(ovs, k, rec)
			json_array_append(arr, rec);
		ctl_emit(json_pack("{s:o}", "overrides", arr));
		return 0;
	}
	if (!json_object_size(ovs))
		printf("no local overrides\n");
	const char *k;
	json_t *rec;
	json_object_foreach(ovs, k, rec) {
		char text[800];
		printf("override %s\n", cluster_override_text(rec, text, sizeof(text)));
	}
	return 0;
}

/* The override records of @ovs deleted, in one local transaction with
 * the objects set to @restore's choice: the cluster's object (drop), or
 * left as they are (after a push). */
static int64_t end_overrides(json_t *ovs, int restore, const char *what)
{
	char err[1024], actor[160];
	snprintf(actor, sizeof(actor), "gslbctl:%s", ctl_user);
	wdb_txn_t *t = wdb_begin(ctl_db, actor, err, sizeof(err));
	if (!t)
		ctl_die("%s", err);
	wdb_txn_note(t, "user", json_string(ctl_user));
	const char *ok;
	json_t *rec;
	json_object_foreach(ovs, ok, rec) {
		wdb_kind_t k;
		const char *key = json_string_value(json_object_get(rec, "key"));
		if (restore && key &&
		    cluster_kind_by_name(json_string_value(json_object_get(rec, "kind")), &k)) {
			json_t *c = json_object_get(rec, "cluster");
			ctl_set(t, k, key, json_is_null(c) ? NULL : c);
		}
		ctl_set(t, WDB_OVERRIDE, ok, NULL);
	}
	int64_t id = wdb_commit(t, what, err, sizeof(err));
	if (id < 0)
		ctl_die("%s", err);
	return id;
}

static int push_overrides(json_t *ovs)
{
	char names[1000], what[1200];
	names_of(ovs, names, sizeof(names));
	snprintf(what, sizeof(what), "local overrides of %s pushed to the cluster: %s",
	         ctl_cluster_conf()->name, names);
	/* The table holds each object with its override: written to etcd
	 * as any change, against the cluster's table brought up to date. */
	wdb_txn_t *t = ctl_begin();
	const char *ok;
	json_t *rec;
	json_object_foreach(ovs, ok, rec) {
		wdb_kind_t k;
		const char *key = json_string_value(json_object_get(rec, "key"));
		if (!key || !cluster_kind_by_name(json_string_value(json_object_get(rec, "kind")), &k))
			continue;
		json_t *cur = wdb_get(t, k, key);
		if (cur)
			ctl_set(t, k, key, cur);
		else
			fprintf(stderr, "gslbctl: %s %s: deleted in the cluster meanwhile; its "
			        "override is dropped\n", json_string_value(json_object_get(rec, "kind")),
			        key);
		json_decref(cur);
	}
	ctl_commit(t, what);
	end_overrides(ovs, 0, what);
	return 0;
}

int ctl_cluster_overrides(int argc, char **argv)
{
	const char *sub = argc > 0 ? argv[0] : "list";
	ctl_no_more_args("cluster overrides", argc, argv, 1);
	json_t *ovs = read_overrides();
	int rc = 0;
	if (strcmp(sub, "list") == 0) {
		rc = list_overrides(ovs);
	} else if (strcmp(sub, "push") != 0 && strcmp(sub, "drop") != 0) {
		ctl_usage_die("usage: cluster overrides [list|push|drop]");
	} else if (!json_object_size(ovs)) {
		printf("no local overrides to %s\n", sub);
	} else if (sub[0] == 'p') {
		if (!ctl_cluster_etcd())
			ctl_die("cluster overrides push: %s has no cluster section: give the "
			        "member's configuration (-c)", ctl_conf ? ctl_conf->path : "-d");
		rc = push_overrides(ovs);
	} else {
		char names[1000], what[1200];
		names_of(ovs, names, sizeof(names));
		snprintf(what, sizeof(what), "local overrides dropped: %s", names);
		int64_t id = end_overrides(ovs, 1, what);
		/* A change of this store alone, at the revision it holds: as
		 * the override itself was said. */
		int64_t rev = cluster_local_rev(ctl_db);
		if (ctl_json)
			ctl_print_commit(json_pack("{s:I, s:b, s:I}", "change",
			                           (json_int_t)id, "local", 1,
			                           "revision", (json_int_t)rev));
		else
			printf("local change at cluster revision %lld: %s; the cluster's "
			       "table applies again\n", (long long)rev, what);
	}
	json_decref(ovs);
	return rc;
}

/* cluster status ----------------------------------------------------- */

int ctl_cluster_check(json_t *out, int etcd_up)
{
	json_t *ovs = read_overrides(), *arr = json_array(), *rec;
	const char *k;
	json_object_foreach(ovs, k, rec)
		json_array_append(arr, rec);
	json_decref(ovs);
	json_object_set_new(out, "overrides", arr);
	if (!etcd_up)
		return 0;
	cluster_digest_t mine, theirs = { 0, 0 };
	int64_t rev = 0, at, marker;
	json_t *table = NULL;
	char err[1024];
	if (cluster_digest_store(ctl_db, &mine, &rev, NULL) || rev <= 0 ||
	    cluster_read_table(ctl_cluster_etcd(), ctl_cluster_conf()->prefix, rev, &table,
	                       &at, &marker, err, sizeof(err)))
		return 0;    /* nothing to compare (yet), or compacted away */
	cluster_digest_table(table, &theirs);
	json_decref(table);
	int diverged = !cluster_digest_equal(&mine, &theirs);
	json_object_set_new(out, "diverged", json_boolean(diverged));
	return diverged;
}

void ctl_cluster_check_print(json_t *out)
{
	size_t i;
	json_t *rec;
	json_array_foreach(json_object_get(out, "overrides"), i, rec) {
		char text[800];
		printf("override on this instance: %s: push or drop it (gslbctl cluster "
		       "overrides push|drop)\n", cluster_override_text(rec, text, sizeof(text)));
	}
}
