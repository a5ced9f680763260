/* SPDX-License-Identifier: MIT */
/* The deletes gslbctl and the HTTP API share (store/edit.c), on a real
 * store: what each returns, the guard of a node still in a row and its
 * text, a service's rows going with it, and that a refused delete
 * leaves the transaction's table as it was. */
#include "store/edit.h"
#include "store/keys.h"
#include "store_fixture.h"
#include "unit.h"

#include <string.h>

#define EDIT_JSON                                                        \
	"{\"nodes\": [" FX_NODE("a", "\"192.0.2.1\"", "") ","             \
	FX_NODE("b", "\"192.0.2.2\"", "") "],"                            \
	" \"services\": [" FX_SVC("s1", "open", "") "],"                  \
	" \"weights\": [" FX_ROW("s1", "*", "*", "\"a\": 1") "]}"

static char dir[PATH_MAX];

static weightdb_t *open_fixture(void)
{
	ck_assert_int_eq(fx_mkdtemp(dir, "edit"), 0);
	weightdb_t *db = fx_store(dir, EDIT_JSON);
	ck_assert_ptr_nonnull(db);
	return db;
}

static void close_fixture(weightdb_t *db)
{
	weightdb_close(db);
	fx_rmrf(dir);
}

static int has(wdb_txn_t *t, wdb_kind_t kind, const char *key)
{
	json_t *o = wdb_get(t, kind, key);
	json_decref(o);
	return o != NULL;
}

START_TEST(node_guard_and_absent)
{
	weightdb_t *db = open_fixture();
	char what[300], err[600];
	wdb_txn_t *t = wdb_begin(db, "test", err, sizeof(err));
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(wdb_node_delete(t, "a", what, sizeof(what), err, sizeof(err)),
	                 WDB_EDIT_REFUSED);
	ck_assert_str_eq(err, "node a is used by weight row(s) "
	                 "[\"s1.cdn.example.test|*|*\"]; remove it there first");
	ck_assert(has(t, WDB_NODE, "a"));
	ck_assert_int_eq(wdb_node_delete(t, "zz", what, sizeof(what), err, sizeof(err)),
	                 WDB_EDIT_ABSENT);
	ck_assert_str_eq(err, "node zz does not exist");
	ck_assert_int_eq(wdb_node_delete(t, "b", what, sizeof(what), err, sizeof(err)),
	                 WDB_EDIT_OK);
	ck_assert_str_eq(what, "node del b");
	ck_assert(!has(t, WDB_NODE, "b"));
	ck_assert_int_gt(wdb_commit(t, what, err, sizeof(err)), 0);
	close_fixture(db);
}
END_TEST

START_TEST(weight_keys)
{
	weightdb_t *db = open_fixture();
	char what[300], err[600];
	wdb_txn_t *t = wdb_begin(db, "test", err, sizeof(err));
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(wdb_weight_delete(t, "s1.cdn.example.test", what, sizeof(what),
	                                   err, sizeof(err)), WDB_EDIT_ABSENT);
	ck_assert_str_eq(err, "weight row s1.cdn.example.test: not a row's key "
	                 "(SERVICE|REGION|ISP)");
	ck_assert_int_eq(wdb_weight_delete(t, "s1.cdn.example.test|cn-bj|*", what,
	                                   sizeof(what), err, sizeof(err)), WDB_EDIT_ABSENT);
	ck_assert_str_eq(err, "weight row s1.cdn.example.test --region cn-bj --isp * "
	                 "does not exist");
	ck_assert_int_eq(wdb_weight_delete(t, "s1.cdn.example.test|*|*", what,
	                                   sizeof(what), err, sizeof(err)), WDB_EDIT_OK);
	ck_assert_str_eq(what, "weight del s1.cdn.example.test region=* isp=*");
	/* The row gone, its node may go in the same change. */
	ck_assert_int_eq(wdb_node_delete(t, "a", what, sizeof(what), err, sizeof(err)),
	                 WDB_EDIT_OK);
	ck_assert_int_gt(wdb_commit(t, what, err, sizeof(err)), 0);
	close_fixture(db);
}
END_TEST

START_TEST(service_takes_its_rows)
{
	weightdb_t *db = open_fixture();
	char what[300], err[600];
	wdb_txn_t *t = wdb_begin(db, "test", err, sizeof(err));
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(wdb_service_delete(t, "nope.test", what, sizeof(what), err,
	                                    sizeof(err)), WDB_EDIT_ABSENT);
	ck_assert_str_eq(err, "service nope.test does not exist");
	ck_assert_int_eq(wdb_service_delete(t, "s1.cdn.example.test", what, sizeof(what),
	                                    err, sizeof(err)), WDB_EDIT_OK);
	ck_assert_str_eq(what, "service del s1.cdn.example.test");
	ck_assert(!has(t, WDB_SERVICE, "s1.cdn.example.test"));
	ck_assert(!has(t, WDB_WEIGHT, "s1.cdn.example.test|*|*"));
	ck_assert_int_gt(wdb_commit(t, what, err, sizeof(err)), 0);
	close_fixture(db);
}
END_TEST

static Suite *edit_suite(void)
{
	Suite *s = suite_create("edit");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, node_guard_and_absent);
	tcase_add_test(tc, weight_keys);
	tcase_add_test(tc, service_takes_its_rows);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(edit_suite)
