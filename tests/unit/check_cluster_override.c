/* SPDX-License-Identifier: MIT */
/* The table's digest (cluster/digest.h) and the declared local overrides
 * (cluster/override.h) over a real store: the digest does not depend on
 * the order objects are counted in and moves with any object; the
 * store's digest equals that of the same table read as etcd gives it,
 * with an override counted as the cluster's object; which changes may be
 * overrides; an override stays over what etcd later writes to its
 * object (the watch's path, cluster_apply()); the revision of the last
 * operator's change the store records (cluster_apply_change()); a
 * change of local data only that cluster_commit() leaves local. */
#include "cluster/commit.h"
#include "cluster/digest.h"
#include "cluster/override.h"
#include "cluster/sync.h"
#include "common/log.h"
#include "store_fixture.h"
#include "unit.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char dir[PATH_MAX];
static weightdb_t *db;

#define TABLE "{\"services\": [{\"name\": \"www.example.test\", \"ttl\": 60, " \
	"\"answers\": 2}], \"nodes\": [" \
	"{\"id\": \"a\", \"addrs\": [\"192.0.2.1\"], \"admin\": \"auto\"}, " \
	"{\"id\": \"b\", \"addrs\": [\"192.0.2.2\"], \"admin\": \"auto\"}], " \
	"\"weights\": [{\"service\": \"www.example.test\", \"region\": \"*\", " \
	"\"isp\": \"*\", \"weights\": {\"a\": 10, \"b\": 10}}]}"

static void setup(void)
{
	log_set_level(GSLB_LOG_ERR);
	ck_assert_int_eq(fx_mkdtemp(dir, "ovr"), 0);
	db = fx_store(dir, TABLE);
	ck_assert_ptr_nonnull(db);
}

static void teardown(void)
{
	weightdb_close(db);
	db = NULL;
	fx_rmrf(dir);
}

static json_t *J(const char *text)
{
	json_t *j = json_loads(text, JSON_DECODE_ANY, NULL);
	ck_assert_ptr_nonnull(j);
	return j;
}

/* The store's table as etcd would give it: {kind: {key: object}}. */
static int copy_kind(const char *key, json_t *val, void *arg)
{
	json_object_set(arg, key, val);
	return 0;
}

static json_t *table_of_store(void)
{
	json_t *tb = json_object();
	wdb_txn_t *t = wdb_begin_read(db);
	for (int k = 0; k < WDB_KIND_COUNT; k++) {
		const char *kn = cluster_kind_name((wdb_kind_t)k);
		if (!kn)
			continue;
		json_t *o = json_object();
		wdb_each(t, (wdb_kind_t)k, NULL, copy_kind, o);
		json_object_set_new(tb, kn, o);
	}
	wdb_abort(t);
	return tb;
}

START_TEST(digest_order_and_change)
{
	json_t *a = J("{\"id\": \"a\", \"w\": 1}"), *b = J("{\"id\": \"b\", \"w\": 2}");
	json_t *a2 = J("{\"w\": 1, \"id\": \"a\"}"), *a3 = J("{\"id\": \"a\", \"w\": 3}");
	cluster_digest_t d1 = { 0, 0 }, d2 = { 0, 0 }, d3 = { 0, 0 }, d4 = { 0, 0 };
	cluster_digest_add(&d1, WDB_NODE, "a", a);
	cluster_digest_add(&d1, WDB_NODE, "b", b);
	/* Another order, the same object with its keys in another order. */
	cluster_digest_add(&d2, WDB_NODE, "b", b);
	cluster_digest_add(&d2, WDB_NODE, "a", a2);
	ck_assert(cluster_digest_equal(&d1, &d2));
	ck_assert_uint_eq(d1.count, 2);
	/* One value changed; one object under another key or kind. */
	cluster_digest_add(&d3, WDB_NODE, "a", a3);
	cluster_digest_add(&d3, WDB_NODE, "b", b);
	ck_assert(!cluster_digest_equal(&d1, &d3));
	cluster_digest_add(&d4, WDB_NODE, "a", a);
	cluster_digest_add(&d4, WDB_SERVICE, "b", b);
	ck_assert(!cluster_digest_equal(&d1, &d4));
	json_decref(a);
	json_decref(a2);
	json_decref(a3);
	json_decref(b);
}
END_TEST

START_TEST(store_equals_etcd_table)
{
	cluster_digest_t mine, theirs = { 0, 0 };
	int64_t rev = -1;
	unsigned ovs = 9;
	json_t *tb = table_of_store();
	ck_assert_int_eq(cluster_digest_store(db, &mine, &rev, &ovs), 0);
	ck_assert_int_eq(rev, 0);
	ck_assert_uint_eq(ovs, 0);
	ck_assert_uint_eq(mine.count, 4);       /* service, a, b, the row */
	cluster_digest_table(tb, &theirs);
	ck_assert(cluster_digest_equal(&mine, &theirs));
	/* A decision about a node the table does not have: not counted
	 * (the store never keeps one). */
	json_object_set_new(json_object_get(tb, "health"), "gone", J("{\"state\": \"up\"}"));
	memset(&theirs, 0, sizeof(theirs));
	cluster_digest_table(tb, &theirs);
	ck_assert(cluster_digest_equal(&mine, &theirs));
	/* etcd's copy of b differs: found. */
	json_object_set_new(json_object_get(json_object_get(tb, "node"), "b"), "admin",
	                    json_string("drain"));
	memset(&theirs, 0, sizeof(theirs));
	cluster_digest_table(tb, &theirs);
	ck_assert(!cluster_digest_equal(&mine, &theirs));
	json_decref(tb);
}
END_TEST

START_TEST(allowed_overrides)
{
	char why[600];
	json_t *p = NULL;
	json_t *n = J("{\"id\": \"a\", \"addrs\": [\"192.0.2.1\"], \"admin\": \"auto\"}");
	json_t *drain = J("{\"id\": \"a\", \"addrs\": [\"192.0.2.1\"], \"admin\": \"drain\", "
	                  "\"short_until\": 100}");
	json_t *up = J("{\"id\": \"a\", \"addrs\": [\"192.0.2.1\"], \"admin\": \"up\"}");
	json_t *moved = J("{\"id\": \"a\", \"addrs\": [\"192.0.2.9\"], \"admin\": \"down\"}");
	ck_assert_int_eq(cluster_override_allowed(WDB_NODE, "a", n, drain, &p, why,
	                                          sizeof(why)), 1);
	ck_assert_str_eq(json_string_value(json_object_get(p, "admin")), "drain");
	ck_assert_ptr_null(json_object_get(p, "addrs"));
	json_decref(p);
	ck_assert_int_eq(cluster_override_allowed(WDB_NODE, "a", n, up, &p, why,
	                                          sizeof(why)), 0);
	ck_assert_ptr_nonnull(strstr(why, "drain or down, not up"));
	ck_assert_int_eq(cluster_override_allowed(WDB_NODE, "a", n, moved, &p, why,
	                                          sizeof(why)), 0);
	ck_assert_ptr_nonnull(strstr(why, "this changes addrs admin"));
	ck_assert_int_eq(cluster_override_allowed(WDB_NODE, "a", NULL, n, &p, why,
	                                          sizeof(why)), 0);
	ck_assert_ptr_nonnull(strstr(why, "cannot be created"));
	ck_assert_int_eq(cluster_override_allowed(WDB_SERVICE, "www", n, n, &p, why,
	                                          sizeof(why)), 0);
	ck_assert_ptr_nonnull(strstr(why, "only a node's admin drain or down, or a "
	                                  "weight row's weights"));
	json_t *r = J("{\"service\": \"s\", \"weights\": {\"a\": 1}}");
	json_t *r2 = J("{\"service\": \"s\", \"weights\": {\"a\": 0}}");
	ck_assert_int_eq(cluster_override_allowed(WDB_WEIGHT, "s|*|*", r, r2, &p, why,
	                                          sizeof(why)), 1);
	json_decref(p);
	json_decref(r);
	json_decref(r2);
	json_decref(n);
	json_decref(drain);
	json_decref(up);
	json_decref(moved);
}
END_TEST

/* Node a of the store. */
static json_t *node_a(void)
{
	wdb_txn_t *t = wdb_begin_read(db);
	json_t *n = wdb_get(t, WDB_NODE, "a");
	wdb_abort(t);
	ck_assert_ptr_nonnull(n);
	return n;
}

START_TEST(override_kept_over_etcd)
{
	char err[512];
	json_t *before = node_a();
	json_t *tb = table_of_store();    /* the cluster's table */
	/* The override: a drained on this instance, as gslbctl records it. */
	wdb_txn_t *t = wdb_begin(db, "test", err, sizeof(err));
	json_t *patch = J("{\"admin\": \"drain\"}");
	json_t *drained = cluster_override_merge(before, patch);
	ck_assert_int_eq(wdb_set(t, WDB_NODE, "a", drained), 0);
	ck_assert_int_eq(cluster_override_put(t, WDB_NODE, "a", before, patch, "test",
	                                      "node set a", 5), 0);
	ck_assert_int_gt(wdb_commit(t, "override", err, sizeof(err)), 0);
	/* Not a divergence: the digest counts the cluster's object. */
	cluster_digest_t mine, theirs = { 0, 0 };
	int64_t rev;
	unsigned ovs;
	ck_assert_int_eq(cluster_digest_store(db, &mine, &rev, &ovs), 0);
	ck_assert_uint_eq(ovs, 1);
	cluster_digest_table(tb, &theirs);
	ck_assert(cluster_digest_equal(&mine, &theirs));
	/* etcd changes a's address (revision 7): the store takes it and
	 * keeps the drain; the override's cluster object follows etcd. */
	json_t *moved = json_deep_copy(before);
	json_object_set_new(moved, "addrs", J("[\"192.0.2.11\"]"));
	json_t *changes = json_pack("[{s:s, s:s, s:O}]", "kind", "node", "key", "a",
	                            "after", moved);
	ck_assert_int_eq(cluster_apply(db, 7, changes, "etcd", "change", NULL, err,
	                               sizeof(err)), 1);
	json_t *now = node_a();
	ck_assert_str_eq(json_string_value(json_object_get(now, "admin")), "drain");
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(now, "addrs"), 0)),
	                 "192.0.2.11");
	t = wdb_begin_read(db);
	json_t *ovl = cluster_override_list(t);
	wdb_abort(t);
	json_t *rec = json_object_get(ovl, "node/a");
	ck_assert_ptr_nonnull(rec);
	ck_assert(json_equal(json_object_get(rec, "cluster"), moved));
	char text[800];
	ck_assert_ptr_nonnull(strstr(cluster_override_text(rec, text, sizeof(text)),
	                             "node a: admin drain (since "));
	json_decref(ovl);
	json_decref(now);
	json_decref(changes);
	json_decref(moved);
	json_decref(drained);
	json_decref(patch);
	json_decref(tb);
	json_decref(before);
}
END_TEST

/* The revision of the last operator's change (sync.h "changerev",
 * the API's generation in cluster mode) moves with a change that moved
 * the marker, not with the elected instance's decisions, and never
 * back. */
START_TEST(change_revision)
{
	char err[512];
	json_t *a = node_a();
	json_object_set_new(a, "addrs", J("[\"192.0.2.21\"]"));
	json_t *changes = json_pack("[{s:s, s:s, s:O}]", "kind", "node", "key", "a",
	                            "after", a);
	ck_assert_int_eq(cluster_local_change(db), 0);
	ck_assert_int_eq(cluster_apply_change(db, 9, changes, "api:boss", "node set a",
	                                      NULL, err, sizeof(err)), 1);
	ck_assert_int_eq(cluster_local_change(db), 9);
	ck_assert_int_eq(cluster_local_rev(db), 9);
	/* A decision at 12: the table's revision moves, the change's not. */
	json_object_set_new(a, "addrs", J("[\"192.0.2.22\"]"));
	ck_assert_int_eq(cluster_apply(db, 12, changes, "etcd", "decision", NULL, err,
	                               sizeof(err)), 1);
	ck_assert_int_eq(cluster_local_rev(db), 12);
	ck_assert_int_eq(cluster_local_change(db), 9);
	/* An operator's change the store holds already changes nothing. */
	ck_assert_int_eq(cluster_apply_change(db, 11, changes, "api:boss", "node set a",
	                                      NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(cluster_local_change(db), 9);
	json_decref(changes);
	json_decref(a);
}
END_TEST

/* A change of local data only (an API token, pushed metrics) is the
 * caller's to commit locally: cluster_commit() leaves the transaction
 * open and never asks etcd (the writer has no client here). */
START_TEST(local_data_stays_local)
{
	char err[512];
	wdb_txn_t *t = wdb_begin(db, "test", err, sizeof(err));
	json_t *tok = J("{\"role\": \"read\", \"sha256\": \"00\", \"created\": 1}");
	ck_assert_int_eq(wdb_set(t, WDB_APITOKEN, "ci", tok), 0);
	ck_assert_int_eq(cluster_commit_shared(t), 0);
	cluster_writer_t w = { .etcd = NULL, .db = db, .prefix = "/gslbd/",
	                       .instance = "ns1", .marker = CLUSTER_MARKER_STORE,
	                       .read_first = 1 };
	cluster_commit_out_t out;
	ck_assert_int_eq(cluster_commit(&w, t, "api token add ci", "test", &out, err,
	                                sizeof(err)), CLUSTER_COMMIT_LOCAL);
	ck_assert_int_gt(wdb_commit(t, "api token add ci", err, sizeof(err)), 0);
	/* A node is the cluster's. */
	t = wdb_begin(db, "test", err, sizeof(err));
	json_t *a = node_a();
	json_object_set_new(a, "addrs", J("[\"192.0.2.31\"]"));
	ck_assert_int_eq(wdb_set(t, WDB_NODE, "a", a), 0);
	ck_assert_int_eq(cluster_commit_shared(t), 1);
	wdb_abort(t);
	json_decref(a);
	json_decref(tok);
}
END_TEST

static Suite *override_suite(void)
{
	Suite *s = suite_create("cluster_override");
	TCase *t = tcase_create("cluster_override");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, digest_order_and_change);
	tcase_add_test(t, store_equals_etcd_table);
	tcase_add_test(t, allowed_overrides);
	tcase_add_test(t, override_kept_over_etcd);
	tcase_add_test(t, change_revision);
	tcase_add_test(t, local_data_stays_local);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(override_suite)
