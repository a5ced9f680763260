/* SPDX-License-Identifier: MIT */
/* The checks of a table document that gslbctl apply and the HTTP API
 * share (store/apply.c): the class and text of each fault, the key it
 * names, the defaults filled in, the references between objects, the
 * region/ISP check with its hint and warnings, and the write of a
 * difference on a real store. */
#include "store/apply.h"
#include "store/change.h"
#include "store/keys.h"
#include "store_fixture.h"
#include "unit.h"

#include <string.h>

static const wdb_apply_opts_t plain = { NULL, 10, 2, 0, 0 };

/* Checks @json as object 0 of @kind: the class, into @e. */
static int check(wdb_kind_t kind, const char *json, char *key, wdb_apply_err_t *e)
{
	json_t *o = json_loads(json, 0, NULL);
	ck_assert_ptr_nonnull(o);
	char k[1300];
	int rc = wdb_apply_check(&plain, kind, o, 0, key ? key : k, 1300, e);
	json_decref(o);
	return rc;
}

START_TEST(service_checks)
{
	wdb_apply_err_t e;
	char key[1300];
	ck_assert_int_eq(check(WDB_SERVICE, "{\"name\": \"WWW.Example.Test.\"}", key, &e), 0);
	ck_assert_str_eq(key, "www.example.test");
	ck_assert_int_eq(check(WDB_SERVICE, "{\"name\": \"a.test\", \"ttl\": \"x\"}", NULL, &e),
	                 WDB_EDIT_BAD);
	ck_assert_str_eq(e.msg, "apply: service a.test: ttl must be a number from 0 to 604800");
	ck_assert_str_eq(e.field, "ttl");
	ck_assert_int_eq(check(WDB_SERVICE, "{\"name\": \"a.test\", \"ttl\": 5, \"short_ttl\": 9}",
	                       NULL, &e), WDB_EDIT_BAD);
	ck_assert_str_eq(e.msg, "apply: service a.test: short_ttl is longer than ttl");
	ck_assert_int_eq(check(WDB_SERVICE, "{\"name\": \"a.test\", \"all_down\": \"shut\"}",
	                       NULL, &e), WDB_EDIT_BAD);
	ck_assert_str_eq(e.msg, "all_down shut: not a valid choice");
	ck_assert_int_eq(check(WDB_SERVICE, "{\"ttl\": 5}", NULL, &e), WDB_EDIT_BAD);
	ck_assert_str_eq(e.msg, "apply: services[0] has no name");
	ck_assert_str_eq(e.field, "name");
	ck_assert_int_eq(check(WDB_SERVICE, "{\"name\": \"a.test\", \"steering\": \"static\"}",
	                       NULL, &e), WDB_EDIT_BAD);
	ck_assert_str_eq(e.field, "steering");
	ck_assert_int_eq(check(WDB_SERVICE, "{\"name\": \"a.test\", \"headroom\": 10}",
	                       NULL, &e), WDB_EDIT_BAD);
	ck_assert_str_eq(e.msg, "apply: service a.test: switch margin and headroom go "
	                 "with nearest steering (--steering nearest)");
}
END_TEST

START_TEST(service_defaults)
{
	wdb_apply_err_t e;
	char key[1300];
	json_t *o = json_pack("{s:s}", "name", "a.test");
	ck_assert_int_eq(wdb_apply_check(&plain, WDB_SERVICE, o, 0, key, sizeof(key), &e), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "ttl")), 30);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "short_ttl")), 10);
	ck_assert_int_eq(json_integer_value(json_object_get(o, "answers")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(o, "all_down")), "open");
	ck_assert(json_is_false(json_object_get(o, "sticky")));
	json_decref(o);
}
END_TEST

START_TEST(node_checks)
{
	wdb_apply_err_t e;
	ck_assert_int_eq(check(WDB_NODE, "{\"id\": \"n\", \"addrs\": [\"192.0.2.1\"]}", NULL, &e), 0);
	ck_assert_int_eq(check(WDB_NODE, "{\"id\": \"n\", \"addrs\": [\"192.0.2.300\"]}", NULL, &e),
	                 WDB_EDIT_BAD);
	ck_assert_str_eq(e.msg, "apply: node n: bad address in addrs");
	ck_assert_str_eq(e.field, "addrs");
	ck_assert_int_eq(check(WDB_NODE, "{\"id\": \"n\", \"addrs\": [\"127.0.0.1\"]}", NULL, &e),
	                 WDB_EDIT_BAD);
	ck_assert_str_eq(e.msg, "node n: address 127.0.0.1 is a loopback address, which "
	                 "no client can use (give --allow-special for a lab)");
	ck_assert_int_eq(check(WDB_NODE, "{\"id\": \"n\", \"addrs\": [\"192.0.2.1\", "
	                       "\"192.0.2.1\"]}", NULL, &e), WDB_EDIT_BAD);
	ck_assert_str_eq(e.msg, "node n: address 192.0.2.1 is given twice");
	ck_assert_int_eq(check(WDB_NODE, "{\"id\": \"n\"}", NULL, &e), WDB_EDIT_BAD);
	ck_assert_str_eq(e.msg, "apply: node n: needs addrs or cname");
	ck_assert_int_eq(check(WDB_NODE, "{\"id\": \"n n\", \"addrs\": [\"192.0.2.1\"]}",
	                       NULL, &e), WDB_EDIT_BAD);
	ck_assert_str_eq(e.msg, "apply: nodes[0]: missing or bad id");
	ck_assert_int_eq(check(WDB_NODE, "{\"id\": \"n\", \"addrs\": [\"192.0.2.1\"], "
	                       "\"pool\": \"spare\"}", NULL, &e), WDB_EDIT_BAD);
	ck_assert_str_eq(e.msg, "pool spare: not a valid choice");
	ck_assert_int_eq(check(WDB_NODE, "{\"id\": \"n\", \"addrs\": [\"192.0.2.1\"], "
	                       "\"probes\": [\"gopher://x\"]}", NULL, &e), WDB_EDIT_BAD);
	ck_assert_str_eq(e.field, "probes");
	ck_assert_int_eq(check(WDB_NODE, "{\"id\": \"n\", \"addrs\": [\"192.0.2.1\"], "
	                       "\"cost_per_gb\": -1}", NULL, &e), WDB_EDIT_BAD);
	ck_assert_str_eq(e.field, "cost_per_gb");
}
END_TEST

START_TEST(weight_checks)
{
	wdb_apply_err_t e;
	char key[1300];
	ck_assert_int_eq(check(WDB_WEIGHT, "{\"service\": \"A.test\", \"weights\": {\"n\": 3}}",
	                       key, &e), 0);
	ck_assert_str_eq(key, "a.test|*|*");
	ck_assert_int_eq(check(WDB_WEIGHT, "{\"service\": \"a.test\", \"weights\": {}}", NULL, &e),
	                 WDB_EDIT_BAD);
	ck_assert_str_eq(e.msg, "apply: weight row a.test * *: weights must map node ids "
	                 "to numbers");
	ck_assert_int_eq(check(WDB_WEIGHT, "{\"service\": \"a.test\", \"region\": \"B J\", "
	                       "\"weights\": {\"n\": 1}}", NULL, &e), WDB_EDIT_BAD);
	ck_assert_str_eq(e.field, "region");
	ck_assert_int_eq(check(WDB_WEIGHT, "{\"service\": \"a.test\", \"weights\": {\"n\": -1}}",
	                       NULL, &e), WDB_EDIT_BAD);
	ck_assert_str_eq(e.msg, "apply: weight row a.test * *: weight of n must be 0 to 1000000");
}
END_TEST

START_TEST(document_read)
{
	wdb_apply_err_t e;
	json_t *want[3];
	json_t *doc = json_loads("{\"version\": 2}", 0, NULL);
	ck_assert_int_eq(wdb_apply_read(&plain, doc, "f", want, &e), WDB_EDIT_BAD);
	ck_assert_str_eq(e.msg, "apply: f: version: this gslbctl reads version 1 only; "
	                 "nothing was changed");
	ck_assert_str_eq(e.field, "version");
	ck_assert_ptr_null(want[0]);
	json_decref(doc);
	doc = json_loads("{\"version\": 1, \"nodes\": [{\"id\": \"n\", \"adress\": []}]}", 0, NULL);
	ck_assert_int_eq(wdb_apply_read(&plain, doc, "f", want, &e), WDB_EDIT_BAD);
	ck_assert_str_eq(e.msg, "apply: f: nodes[0].adress: unknown key; nothing was changed");
	ck_assert_str_eq(e.field, "adress");
	json_decref(doc);
	doc = json_loads("{\"version\": 1, \"services\": [{\"name\": \"a.test\"}],"
	                 " \"weights\": [{\"service\": \"a.test\", \"weights\": {\"ghost\": 1}}]}",
	                 0, NULL);
	ck_assert_int_eq(wdb_apply_read(&plain, doc, "f", want, &e), WDB_EDIT_REFUSED);
	ck_assert_str_eq(e.msg, "apply: f: weight row a.test */*: unknown node 'ghost'; "
	                 "nothing was changed");
	json_decref(doc);
	doc = json_loads("{\"version\": 1, \"services\": [{\"name\": \"a.test\"}, "
	                 "{\"name\": \"A.test\"}]}", 0, NULL);
	ck_assert_int_eq(wdb_apply_read(&plain, doc, "f", want, &e), WDB_EDIT_BAD);
	ck_assert_str_eq(e.msg, "apply: f: services 'a.test' appears twice");
	json_decref(doc);
	doc = json_loads("{\"version\": 1, \"services\": [{\"name\": \"a.test\"}]}", 0, NULL);
	ck_assert_int_eq(wdb_apply_read(&plain, doc, "f", want, &e), 0);
	ck_assert_ptr_nonnull(json_object_get(want[WDB_SERVICE], "a.test"));
	/* The document is not changed: the defaults go to the copies. */
	ck_assert_ptr_null(json_object_get(json_array_get(json_object_get(doc, "services"), 0),
	                                   "ttl"));
	for (int k = 0; k < 3; k++)
		json_decref(want[k]);
	json_decref(doc);
}
END_TEST

START_TEST(area_names)
{
	conf_t conf;
	memset(&conf, 0, sizeof(conf));
	wdb_apply_opts_t op = plain;
	wdb_apply_err_t e;
	wdb_area_known_t k = { { json_object(), json_object() }, 0 };
	json_object_set_new(k.names[0], "cn-bj", json_true());
	json_t *warnings = json_array();
	/* Without the configuration: a warning, never a refusal. */
	ck_assert_int_eq(wdb_area_check(&op, &k, "c", 0, "cn-bjj", warnings, &e), 0);
	ck_assert_int_eq(json_array_size(warnings), 1);
	op.conf = &conf;
	/* Geoip sources that name nothing: a warning too. */
	ck_assert_int_eq(wdb_area_check(&op, &k, "c", 0, "cn-bjj", warnings, &e), 0);
	ck_assert_int_eq(json_array_size(warnings), 2);
	k.ngeo = 1;
	ck_assert_int_eq(wdb_area_check(&op, &k, "c", 0, "cn-bj", warnings, &e), 0);
	ck_assert_int_eq(wdb_area_check(&op, &k, "c", 0, "*", warnings, &e), 0);
	ck_assert_int_eq(wdb_area_check(&op, &k, "c", 0, "cn-bjj", warnings, &e), WDB_EDIT_BAD);
	ck_assert_str_eq(e.field, "region");
	ck_assert(strstr(e.msg, "c: --region cn-bjj: no client is located in that region") == e.msg);
	ck_assert_ptr_nonnull(strstr(e.msg, "(did you mean cn-bj?)"));
	op.allow_unknown_location = 1;
	ck_assert_int_eq(wdb_area_check(&op, &k, "c", 0, "cn-bjj", warnings, &e), 0);
	ck_assert_int_eq(json_array_size(warnings), 3);
	json_decref(warnings);
	wdb_area_known_free(&k);
}
END_TEST

#define APPLY_JSON                                                       \
	"{\"nodes\": [" FX_NODE("a", "\"192.0.2.1\"", "") ","             \
	FX_NODE("b", "\"192.0.2.2\"", "") "],"                            \
	" \"services\": [" FX_SVC("s1", "open", "") "],"                  \
	" \"weights\": [" FX_ROW("s1", "*", "*", "\"a\": 1") "]}"

START_TEST(write_difference)
{
	char dir[PATH_MAX], err[600];
	ck_assert_int_eq(fx_mkdtemp(dir, "apply"), 0);
	weightdb_t *db = fx_store(dir, APPLY_JSON);
	ck_assert_ptr_nonnull(db);
	wdb_txn_t *t = wdb_begin(db, "test", err, sizeof(err));
	ck_assert_ptr_nonnull(t);
	json_t *have[3], *want[3];
	wdb_apply_have(t, have);
	ck_assert_int_eq(json_object_size(have[WDB_NODE]), 2);
	/* The table with node b at a new address. */
	for (int k = 0; k < 3; k++)
		want[k] = json_deep_copy(have[k]);
	json_object_set_new(json_object_get(want[WDB_NODE], "b"), "addrs",
	                    json_pack("[s]", "192.0.2.22"));
	json_t *ht = json_pack("{s:O, s:O, s:O}", "services", have[0], "nodes", have[1],
	                       "weights", have[2]);
	json_t *wt = json_pack("{s:O, s:O, s:O}", "services", want[0], "nodes", want[1],
	                       "weights", want[2]);
	json_t *diff = wdb_table_diff(ht, wt);
	ck_assert_int_eq(wdb_diff_count(diff, "changed"), 1);
	wdb_apply_err_t e;
	ck_assert_int_eq(wdb_apply_write(db, t, diff, want, &e), 0);
	json_t *b = wdb_get(t, WDB_NODE, "b");
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(b, "addrs"), 0)),
	                 "192.0.2.22");
	json_decref(b);
	ck_assert_int_gt(wdb_commit(t, "apply test", err, sizeof(err)), 0);
	json_decref(diff);
	json_decref(ht);
	json_decref(wt);
	for (int k = 0; k < 3; k++) {
		json_decref(have[k]);
		json_decref(want[k]);
	}
	weightdb_close(db);
	fx_rmrf(dir);
}
END_TEST

static Suite *apply_suite(void)
{
	Suite *s = suite_create("apply");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, service_checks);
	tcase_add_test(tc, service_defaults);
	tcase_add_test(tc, node_checks);
	tcase_add_test(tc, weight_checks);
	tcase_add_test(tc, document_read);
	tcase_add_test(tc, area_names);
	tcase_add_test(tc, write_difference);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(apply_suite)
