/* SPDX-License-Identifier: MIT */
/* The table document and the audit log as history (store/change.c): the
 * shape apply accepts, the difference it writes, the guard against
 * deleting too much, which change a bare rollback undoes, and the one
 * line per change of `gslbctl log`. */
#include "store/change.h"
#include "unit.h"

#include <string.h>

static json_t *J(const char *text)
{
	json_error_t e;
	json_t *j = json_loads(text, 0, &e);
	ck_assert_msg(j != NULL, "bad JSON in the test: %s", e.text);
	return j;
}

static int doc_err(const char *text, char *err, size_t size)
{
	json_t *d = J(text);
	int rc = wdb_doc_check(d, err, size);
	json_decref(d);
	return rc;
}

START_TEST(doc_version_and_keys)
{
	char err[300];
	ck_assert_int_eq(doc_err("{}", err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "version: missing"));
	ck_assert_int_eq(doc_err("{\"version\": 2}", err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "version"));
	ck_assert_int_eq(doc_err("{\"version\": \"1\"}", err, sizeof(err)), -1);
	ck_assert_int_eq(doc_err("{\"version\": 1}", err, sizeof(err)), 0);
	ck_assert_int_eq(doc_err("{\"version\": 1, \"servcies\": []}", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "servcies: unknown key");
	ck_assert_int_eq(doc_err("{\"version\": 1, \"nodes\": [{\"id\": \"a\"}, "
	                         "{\"id\": \"b\", \"adress\": \"x\"}]}", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "nodes[1].adress: unknown key");
	ck_assert_int_eq(doc_err("{\"version\": 1, \"weights\": [{\"service\": \"s\", "
	                         "\"wieghts\": {}}]}", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "weights[0].wieghts: unknown key");
	ck_assert_int_eq(doc_err("{\"version\": 1, \"services\": {}}", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "services: must be a list");
	ck_assert_int_eq(doc_err("{\"version\": 1, \"services\": [3]}", err, sizeof(err)), -1);
	ck_assert_str_eq(err, "services[0]: must be an object");
	/* What gslbctl writes passes. */
	ck_assert_int_eq(doc_err("{\"version\": 1, \"services\": [{\"name\": \"s\", \"ttl\": 1, "
	                         "\"short_ttl\": 1, \"answers\": 1, \"all_down\": \"open\", "
	                         "\"sticky\": false, \"shadow\": false, \"profile\": \"four\", "
	                         "\"max_failure_rate\": 5.0}], \"nodes\": [{\"id\": \"a\", "
	                         "\"addrs\": [], \"cname\": null, \"region\": \"*\", \"isp\": \"*\", "
	                         "\"capacity\": 0, \"pool\": \"primary\", \"admin\": \"up\", "
	                         "\"probes\": [], \"short_until\": 5}]}", err, sizeof(err)), 0);
}
END_TEST

START_TEST(diff_and_guard)
{
	json_t *have = J("{\"services\": {\"a\": {\"ttl\": 1}, \"b\": {\"ttl\": 2}},"
	                 " \"nodes\": {\"n\": {}},"
	                 " \"weights\": {\"a|*|*\": {\"w\": 1}, \"a|x|*\": {\"w\": 1},"
	                 "  \"b|*|*\": {\"w\": 1}}}");
	json_t *want = J("{\"services\": {\"a\": {\"ttl\": 5}, \"c\": {}},"
	                 " \"nodes\": {\"n\": {}},"
	                 " \"weights\": {\"a|*|*\": {\"w\": 1}, \"c|*|*\": {\"w\": 2}}}");
	json_t *d = wdb_table_diff(have, want);
	json_t *exp = J("{\"added\": {\"services\": [\"c\"], \"nodes\": [], \"weights\": [\"c|*|*\"]},"
	                " \"changed\": {\"services\": [\"a\"], \"nodes\": [], \"weights\": []},"
	                " \"deleted\": {\"services\": [\"b\"], \"nodes\": [],"
	                "  \"weights\": [\"a|x|*\", \"b|*|*\"]}}");
	ck_assert(json_equal(d, exp));
	ck_assert_uint_eq(wdb_diff_count(d, "added"), 2);
	ck_assert_uint_eq(wdb_diff_count(d, "deleted"), 3);
	char why[200];
	ck_assert(wdb_diff_needs_force(d, 3, why, sizeof(why)));
	ck_assert_str_eq(why, "service b and 2 of 3 weight rows");
	json_decref(d);
	json_decref(exp);

	/* Rows only: exactly 10 % passes, one more needs --force. */
	json_t *rows = J("{\"deleted\": {\"services\": [], \"nodes\": [], \"weights\": [\"r1\"]}}");
	ck_assert(!wdb_diff_needs_force(rows, 10, why, sizeof(why)));
	ck_assert(wdb_diff_needs_force(rows, 9, why, sizeof(why)));
	ck_assert_str_eq(why, "1 of 9 weight rows");
	json_decref(rows);
	/* One service alone, its rows well under the share: --force all the
	 * same (its name would turn NXDOMAIN). */
	json_t *one = J("{\"deleted\": {\"services\": [\"b\"], \"nodes\": [], \"weights\": [\"b|*|*\"]}}");
	ck_assert(wdb_diff_needs_force(one, 100, why, sizeof(why)));
	ck_assert_str_eq(why, "service b");
	json_decref(one);
	/* Emptying the table, as {"version": 1} would. */
	json_t *none = J("{\"services\": {}, \"nodes\": {}, \"weights\": {}}");
	d = wdb_table_diff(have, none);
	ck_assert(wdb_diff_needs_force(d, 3, why, sizeof(why)));
	ck_assert_str_eq(why, "services a, b and 3 of 3 weight rows");
	json_decref(d);
	json_decref(none);
	json_decref(have);
	json_decref(want);
}
END_TEST

/* The operator's part of a stored object: a row's engine shares and pin
 * stay out, so a row the engine steers equals its export (S3-8). */
START_TEST(doc_object)
{
	json_t *row = J("{\"service\": \"a\", \"region\": \"*\", \"isp\": \"*\","
	                " \"weights\": {\"n\": 1}, \"steer\": {\"weights\": {\"n\": 10000}},"
	                " \"pin\": {\"by\": \"root\", \"at\": 1, \"change\": 3}}");
	json_t *v = wdb_doc_object(2, row);
	json_t *exp = J("{\"service\": \"a\", \"region\": \"*\", \"isp\": \"*\","
	                " \"weights\": {\"n\": 1}}");
	ck_assert(json_equal(v, exp));
	ck_assert_ptr_nonnull(json_object_get(row, "steer"));   /* a copy */
	json_t *have = json_pack("{s:{}, s:{}, s:{s:O}}", "services", "nodes", "weights",
	                         "a|*|*", v);
	json_t *want = json_pack("{s:{}, s:{}, s:{s:O}}", "services", "nodes", "weights",
	                         "a|*|*", exp);
	json_t *d = wdb_table_diff(have, want);
	ck_assert_uint_eq(wdb_diff_count(d, "changed"), 0);
	json_decref(d);
	json_decref(have);
	json_decref(want);
	json_decref(v);
	json_decref(exp);
	/* A service keeps its release, the operator's and the engine's. */
	json_t *svc = J("{\"name\": \"a\", \"ttl\": 30, \"release\": {\"node\": \"n\"}}");
	v = wdb_doc_object(0, svc);
	ck_assert(json_equal(v, svc));
	json_decref(v);
	json_decref(svc);
	json_decref(row);
}
END_TEST

/* An audit record of @actor (and "user" @user, NULL for an older record
 * without it) with one change of @kind, undoing @undoes when non-zero. */
static json_t *rec(int id, const char *actor, const char *user, const char *kind,
                   int undoes)
{
	char what[40];
	snprintf(what, sizeof(what), undoes ? "rollback %d" : "x", undoes);
	json_t *r = json_pack("{s:i, s:s, s:s, s:[{s:s, s:s, s:n, s:{}}]}", "id", id,
	                      "actor", actor, "what", what, "changes", "kind", kind,
	                      "key", "k", "before", "after");
	if (user)
		json_object_set_new(r, "user", json_string(user));
	if (undoes && id % 2)
		json_object_set_new(r, "undoes", json_integer(undoes));
	return r;
}

START_TEST(rollback_rule)
{
	json_t *l = json_array();
	json_array_append_new(l, rec(1, "gslbctl:ann", NULL, "weight", 0));
	json_array_append_new(l, rec(2, "gslbctl:ann", "ann", "node", 0));
	json_array_append_new(l, rec(3, "gslbctl:bob", "bob", "weight", 0));
	json_array_append_new(l, rec(4, "health", NULL, "health", 0));
	/* Another user's and the health thread's newer changes are skipped. */
	ck_assert_int_eq(wdb_rollback_pick(l, "ann"), 2);
	ck_assert_int_eq(wdb_rollback_pick(l, "bob"), 3);
	ck_assert_int_eq(wdb_rollback_pick(l, "eve"), 0);
	/* A token's changes are its own, not those of a user of its name. */
	json_array_append_new(l, rec(40, "api:bob", "bob", "node", 0));
	ck_assert_int_eq(wdb_rollback_pick(l, "api:bob"), 40);
	ck_assert_int_eq(wdb_rollback_pick(l, "bob"), 3);
	ck_assert_int_eq(wdb_rollback_pick(l, "api:ann"), 0);
	json_array_remove(l, json_array_size(l) - 1);
	/* A rollback is no target, and its target is undone: the next
	 * bare rollback walks further back. */
	json_array_append_new(l, rec(5, "gslbctl:ann", "ann", "node", 2));
	ck_assert_int_eq(wdb_rollback_pick(l, "ann"), 1);
	json_array_append_new(l, rec(6, "gslbctl:ann", "ann", "weight", 1));
	ck_assert_int_eq(wdb_rollback_pick(l, "ann"), 0);
	/* Rolling back the rollback 5 puts change 2 in force again. */
	json_array_append_new(l, rec(7, "gslbctl:ann", "ann", "node", 5));
	ck_assert_int_eq(wdb_rollback_pick(l, "ann"), 2);
	/* A gslbctl record that touched no table object (none such today,
	 * but a health record written by gslbctl) is no target either. */
	json_array_append_new(l, rec(8, "gslbctl:ann", "ann", "health", 0));
	ck_assert_int_eq(wdb_rollback_pick(l, "ann"), 2);
	json_decref(l);

	json_t *r = J("{\"actor\": \"gslbctl:ann\", \"what\": \"rollback 12\"}");
	ck_assert_int_eq(wdb_audit_undoes(r), 12);
	ck_assert(wdb_audit_by_user(r, "ann"));
	ck_assert(!wdb_audit_by_user(r, "an"));
	ck_assert(!wdb_audit_automatic(r));
	json_decref(r);
	r = J("{\"actor\": \"health\", \"what\": \"rollback 12 x\"}");
	ck_assert_int_eq(wdb_audit_undoes(r), 0);
	ck_assert(!wdb_audit_by_user(r, "health"));
	ck_assert(wdb_audit_automatic(r));
	json_decref(r);
	/* The steering engine's changes are automatic; an operator named
	 * like the daemon is not. */
	r = J("{\"actor\": \"gslbd:steer\"}");
	ck_assert(wdb_audit_automatic(r));
	json_decref(r);
	r = J("{\"actor\": \"gslbctl:gslbd\"}");
	ck_assert(!wdb_audit_automatic(r));
	json_decref(r);
	/* The elected instance's decisions in the cluster's log say so. */
	r = J("{\"actor\": \"cluster:ns1\", \"automatic\": true}");
	ck_assert(wdb_audit_automatic(r));
	json_decref(r);
	r = J("{\"actor\": \"cluster:ns1\", \"automatic\": false}");
	ck_assert(!wdb_audit_automatic(r));
	json_decref(r);
}
END_TEST

static void summary_is(const char *recj, const char *want)
{
	json_t *r = J(recj);
	char line[300];
	wdb_change_summary(r, line, sizeof(line));
	ck_assert_str_eq(line, want);
	json_decref(r);
}

START_TEST(summaries)
{
	summary_is("{\"what\": \"node set he-cu-2\", \"changes\": [{\"kind\": \"node\", "
	           "\"key\": \"he-cu-2\", \"before\": {\"id\": \"he-cu-2\", \"admin\": \"auto\"}, "
	           "\"after\": {\"id\": \"he-cu-2\", \"admin\": \"down\", \"short_until\": 9}}]}",
	           "node set he-cu-2 admin=down");
	summary_is("{\"what\": \"weight set\", \"changes\": [{\"kind\": \"weight\", "
	           "\"key\": \"www.example.test|cn-bj|*\", \"before\": null, "
	           "\"after\": {\"weights\": {\"a\": 10, \"b\": 5}}}]}",
	           "weight set www.example.test cn-bj/* a=10 b=5");
	/* A deleted node's health record goes with it, unmentioned. */
	summary_is("{\"what\": \"node del a\", \"changes\": [{\"kind\": \"node\", "
	           "\"key\": \"a\", \"before\": {\"id\": \"a\"}, \"after\": null}, "
	           "{\"kind\": \"health\", \"key\": \"a\", \"before\": {}, \"after\": null}]}",
	           "node del a");
	summary_is("{\"what\": \"rollback 3\", \"changes\": [{\"kind\": \"service\", "
	           "\"key\": \"s.test\", \"before\": {\"ttl\": 5}, \"after\": {\"ttl\": 30}}]}",
	           "rollback 3: service set s.test ttl=30");
	summary_is("{\"what\": \"x\", \"changes\": [{\"kind\": \"node\", \"key\": \"n\", "
	           "\"before\": null, \"after\": {\"id\": \"n\", \"addrs\": [\"192.0.2.1\", "
	           "\"2001:db8::1\"], \"cname\": null, \"capacity\": 5}}]}",
	           "node add n addrs=192.0.2.1,2001:db8::1 capacity=5");
	summary_is("{\"what\": \"health\", \"changes\": [{\"kind\": \"health\", \"key\": \"n\", "
	           "\"before\": {\"state\": \"up\", \"since\": 1}, "
	           "\"after\": {\"state\": \"demoted\", \"since\": 2}}]}",
	           "health n state=demoted");
	summary_is("{\"what\": \"health: b demoted (probe: refused)\", \"changes\": ["
	           "{\"kind\": \"health\", \"key\": \"b\", \"before\": null, "
	           "\"after\": {\"state\": \"demoted\"}}]}",
	           "health: b demoted (probe: refused)");
	/* An apply names itself, then its first changes and a count. */
	summary_is("{\"what\": \"apply t.json (+5 ~0 -0)\", \"changes\": ["
	           "{\"kind\": \"cutover\", \"key\": \"c1\", \"before\": {}, \"after\": null},"
	           "{\"kind\": \"cutover\", \"key\": \"c2\", \"before\": {}, \"after\": null},"
	           "{\"kind\": \"cutover\", \"key\": \"c3\", \"before\": {}, \"after\": null},"
	           "{\"kind\": \"cutover\", \"key\": \"c4\", \"before\": {}, \"after\": null},"
	           "{\"kind\": \"cutover\", \"key\": \"c5\", \"before\": {}, \"after\": null}]}",
	           "apply t.json (+5 ~0 -0): cutover del c1; cutover del c2; cutover del c3; "
	           "cutover del c4 (1 more)");
	/* Too long for the buffer: cut with "...". */
	json_t *r = J("{\"what\": \"x\", \"changes\": [{\"kind\": \"service\", \"key\": "
	              "\"a-rather-long-service-name.example.test\", \"before\": null, "
	              "\"after\": {\"ttl\": 30}}]}");
	char small[24];
	wdb_change_summary(r, small, sizeof(small));
	ck_assert_uint_lt(strlen(small), sizeof(small));
	ck_assert_ptr_nonnull(strstr(small, "..."));
	json_decref(r);
}
END_TEST

static Suite *change_suite(void)
{
	Suite *s = suite_create("change");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, doc_version_and_keys);
	tcase_add_test(tc, diff_and_guard);
	tcase_add_test(tc, doc_object);
	tcase_add_test(tc, rollback_rule);
	tcase_add_test(tc, summaries);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(change_suite)
