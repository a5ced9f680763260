/* SPDX-License-Identifier: MIT */
/* The weight store: row key codecs, what a commit's audit record holds,
 * the plans and service records rebuilt with a change, and that a
 * rejected change leaves nothing behind (S0-10).  Each test opens a
 * real LMDB store in its own temporary directory. */
#include "common/util.h"
#include "store/keys.h"
#include "store/plan.h"
#include "store/weightdb.h"
#include "store_fixture.h"
#include "unit.h"

#include <fcntl.h>
#include <lmdb.h>
#include <limits.h>
#include <unistd.h>
#include <pthread.h>
#include <time.h>
#include <string.h>

/* Key codecs ----------------------------------------------------------- */

START_TEST(row_key_compose_split)
{
	char k[64];
	ck_assert_str_eq(wdb_row_key(k, sizeof(k), "www.cdn.test", "cn-bj", "ctcc"),
	                 "www.cdn.test|cn-bj|ctcc");
	ck_assert_uint_eq(wdb_row_keyn(k, sizeof(k), "www.cdn.testXX", 12, "*", "*"),
	                  strlen("www.cdn.test|*|*"));
	ck_assert_str_eq(k, "www.cdn.test|*|*");

	wdb_row_parts_t p;
	const char *key = "www.cdn.test|cn-bj|ctcc";
	ck_assert_int_eq(wdb_row_split(key, strlen(key), &p), 0);
	ck_assert_uint_eq(p.svc_len, 12);
	ck_assert_mem_eq(p.svc, "www.cdn.test", 12);
	ck_assert_uint_eq(p.region_len, 5);
	ck_assert_mem_eq(p.region, "cn-bj", 5);
	ck_assert_uint_eq(p.isp_len, 4);
	ck_assert_mem_eq(p.isp, "ctcc", 4);

	/* A counted key: what follows @len is not read. */
	ck_assert_int_eq(wdb_row_split("a|b|cXYZ", 5, &p), 0);
	ck_assert_uint_eq(p.isp_len, 1);
	/* Empty fields are fields. */
	ck_assert_int_eq(wdb_row_split("||", 2, &p), 0);
	ck_assert_uint_eq(p.svc_len + p.region_len + p.isp_len, 0);
	/* Fewer than three fields: the service part is still given. */
	ck_assert_int_eq(wdb_row_split("svc", 3, &p), -1);
	ck_assert_uint_eq(p.svc_len, 3);
	ck_assert_int_eq(wdb_row_split("svc|reg", 7, &p), -1);
	ck_assert_uint_eq(p.svc_len, 3);
}
END_TEST

START_TEST(row_key_limits)
{
	char k[16];
	/* "abc|de|fg" is 9 bytes: fits in 10 with its NUL, not in 9. */
	ck_assert_uint_eq(wdb_row_keyn(k, 10, "abc", 3, "de", "fg"), 9);
	ck_assert_str_eq(k, "abc|de|fg");
	ck_assert_uint_eq(wdb_row_keyn(k, 9, "abc", 3, "de", "fg"), 0);
	ck_assert_str_eq(k, "");
	ck_assert_str_eq(wdb_row_key(k, 5, "abc", "de", "fg"), "");
	ck_assert_uint_eq(wdb_row_prefix(k, sizeof(k), "abc"), 4);
	ck_assert_str_eq(k, "abc|");
	ck_assert_uint_eq(wdb_row_prefix(k, 4, "abc"), 0);
	ck_assert_str_eq(k, "");
	/* Every row key of a service starts with its prefix, and no key of
	 * a service whose name extends it does. */
	char row[64], pre[64];
	wdb_row_key(row, sizeof(row), "a.test", "*", "*");
	wdb_row_prefix(pre, sizeof(pre), "a.test");
	ck_assert_int_eq(strncmp(row, pre, strlen(pre)), 0);
	wdb_row_key(row, sizeof(row), "a.test.x", "*", "*");
	ck_assert_int_ne(strncmp(row, pre, strlen(pre)), 0);
}
END_TEST

START_TEST(row_key_kind)
{
	static const struct { const char *reg, *isp; wdb_row_kind_t kind; } c[] = {
		{ "cn-bj", "ctcc", WDB_ROW_REGION_ISP },
		{ "cn-bj", "*", WDB_ROW_REGION },
		{ "*", "ctcc", WDB_ROW_ISP },
		{ "*", "*", WDB_ROW_DEFAULT },
		/* Only the lone "*" is the wildcard. */
		{ "**", "*x", WDB_ROW_REGION_ISP },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char k[64];
		wdb_row_key(k, sizeof(k), "s.test", c[i].reg, c[i].isp);
		wdb_row_parts_t p;
		ck_assert_int_eq(wdb_row_split(k, strlen(k), &p), 0);
		ck_assert_msg(wdb_row_kind(&p) == c[i].kind, "%s", k);
	}
}
END_TEST

/* A store per test ------------------------------------------------------- */

static char g_dir[PATH_MAX];
static weightdb_t *g_db;

static const char base_json[] =
	"{\"services\": [{\"name\": \"www.s.test\", \"ttl\": 60, \"short_ttl\": 10,"
	"                 \"answers\": 2, \"all_down\": \"fallback\","
	"                 \"sticky\": true, \"shadow\": false}],"
	" \"nodes\": [{\"id\": \"n1\", \"addrs\": [\"192.0.2.1\"], \"cname\": null,"
	"              \"admin\": \"auto\", \"pool\": \"primary\"},"
	"             {\"id\": \"n2\", \"addrs\": [\"2001:db8::2\"], \"cname\": null,"
	"              \"admin\": \"auto\", \"pool\": \"primary\"}],"
	" \"weights\": [{\"service\": \"www.s.test\", \"region\": \"cn-bj\","
	"                \"isp\": \"*\", \"weights\": {\"n1\": 10}},"
	"              {\"service\": \"www.s.test\", \"region\": \"*\","
	"                \"isp\": \"*\", \"weights\": {\"n1\": 5, \"n2\": 7}}]}";

static void setup(void)
{
	ck_assert_int_eq(fx_mkdtemp(g_dir, "store"), 0);
	char p[PATH_MAX + 8], err[512];
	snprintf(p, sizeof(p), "%s/db", g_dir);
	g_db = weightdb_open(p, err, sizeof(err));
	ck_assert_msg(g_db != NULL, "%s", err);
}

static void teardown(void)
{
	weightdb_close(g_db);
	g_db = NULL;
	ck_assert_int_eq(fx_rmrf(g_dir), 0);
}

static int64_t apply(const char *what, const char *json_text, char *err,
                     size_t errlen)
{
	return fx_apply(g_db, "test:unit", what, json_text, err, errlen);
}

/* The plan of a row as a worker reads it: 0 and *@p, or GSLB_ENOENT. */
static int read_plan(const char *svc, const char *reg, const char *isp,
                     plan_t *p)
{
	wdb_reader_t *r = wdb_reader_new(g_db);
	ck_assert_ptr_nonnull(r);
	const uint8_t *d;
	size_t len;
	int rc = wdb_plan(r, svc, strlen(svc), reg, isp, &d, &len);
	if (rc == 0)
		ck_assert_int_eq(plan_decode(d, len, p), 0);
	wdb_reader_release(r);
	wdb_reader_free(r);
	return rc;
}

static int read_service(const char *svc, svc_rec_t *out)
{
	wdb_reader_t *r = wdb_reader_new(g_db);
	ck_assert_ptr_nonnull(r);
	int rc = wdb_service(r, svc, strlen(svc), out);
	wdb_reader_release(r);
	wdb_reader_free(r);
	return rc;
}

/* weightdb_trim() of audit records older than @audit and history older
 * than @history (0: none), at most @max. */
static int trim_by(weightdb_t *db, uint32_t audit, uint32_t history, unsigned max)
{
	wdb_trim_t w = { .audit_before = audit, .history_before = history };
	return weightdb_trim(db, &w, max);
}

/* Sets n1's admin state to @admin; returns whether n1 is usable in the
 * plan of row (www.s.test, cn-bj, *). */
static int n1_admin(const char *admin)
{
	char err[512], json[200];
	snprintf(json, sizeof(json), "{\"nodes\": [{\"id\": \"n1\", \"addrs\": "
	         "[\"192.0.2.1\"], \"admin\": \"%s\"}]}", admin);
	ck_assert_int_gt(apply(admin, json, err, sizeof(err)), 0);
	plan_t p;
	ck_assert_int_eq(read_plan("www.s.test", "cn-bj", "*", &p), 0);
	return (p.node[0].flags & PLAN_USABLE) != 0;
}

START_TEST(commit_builds_plans)
{
	char err[512];
	ck_assert_int_eq(apply("base", base_json, err, sizeof(err)), 1);
	svc_rec_t s;
	ck_assert_int_eq(read_service("www.s.test", &s), 0);
	ck_assert_uint_eq(s.ttl, 60);
	ck_assert_uint_eq(s.short_ttl, 10);
	ck_assert_uint_eq(s.answers, 2);
	ck_assert_uint_eq(s.all_down, SVC_ALL_DOWN_FALLBACK);
	ck_assert_uint_eq(s.flags, SVC_STICKY | SVC_CLIENT_ROWS | SVC_ROW_KNOWN |
	                           SVC_ROW_REGION | SVC_ROW_DEFAULT);
	plan_t p;
	ck_assert_int_eq(read_plan("www.s.test", "cn-bj", "*", &p), 0);
	ck_assert_uint_eq(p.n, 1);
	ck_assert_uint_eq(p.node[0].weight, 10);
	ck_assert_int_eq(read_plan("www.s.test", "*", "*", &p), 0);
	ck_assert_uint_eq(p.n, 2);
	ck_assert_int_eq(read_plan("www.s.test", "cn-gd", "*", &p), GSLB_ENOENT);
	ck_assert_int_eq(read_service("nothing.s.test", &s), GSLB_ENOENT);

	/* A node change rebuilds the plans that name it. */
	ck_assert(!n1_admin("down"));
}
END_TEST

/* A long-lived reader (a worker's) caches its lookups within one
 * snapshot and sees every commit at its next batch: changed rows, rows
 * that appear after a cached miss, services that go. */
START_TEST(reader_cache_follows_commits)
{
	char err[512];
	ck_assert_int_eq(apply("base", base_json, err, sizeof(err)), 1);
	wdb_reader_t *r = wdb_reader_new(g_db);
	ck_assert_ptr_nonnull(r);
	const uint8_t *d1, *d2, *d;
	size_t l1, l2, l;
	plan_t p;
	svc_rec_t s;
	ck_assert_int_eq(wdb_plan(r, "www.s.test", 10, "cn-bj", "*", &d1, &l1), 0);
	ck_assert_int_eq(wdb_plan(r, "www.s.test", 10, "cn-gd", "*", &d, &l), GSLB_ENOENT);
	ck_assert_int_eq(wdb_service(r, "www.s.test", 10, &s), 0);
	wdb_reader_release(r);
	/* The next batch, nothing committed: the same bytes, from the cache
	 * and from LMDB alike. */
	ck_assert_int_eq(wdb_plan(r, "www.s.test", 10, "cn-bj", "*", &d2, &l2), 0);
	ck_assert_ptr_eq(d1, d2);
	ck_assert_uint_eq(l1, l2);
	ck_assert_int_eq(wdb_plan(r, "www.s.test", 10, "cn-gd", "*", &d, &l), GSLB_ENOENT);
	wdb_reader_release(r);

	ck_assert_int_gt(apply("change", "{\"weights\": ["
	                       "{\"service\": \"www.s.test\", \"region\": \"cn-bj\","
	                       " \"isp\": \"*\", \"weights\": {\"n1\": 3}},"
	                       "{\"service\": \"www.s.test\", \"region\": \"cn-gd\","
	                       " \"isp\": \"*\", \"weights\": {\"n2\": 4}},"
	                       "{\"service\": \"www.s.test\", \"region\": \"*\","
	                       " \"isp\": \"*\", \"weights\": {\"n1\": 5, \"n2\": 7}}]}",
	                       err, sizeof(err)), 0);
	ck_assert_int_eq(wdb_plan(r, "www.s.test", 10, "cn-bj", "*", &d, &l), 0);
	ck_assert_int_eq(plan_decode(d, l, &p), 0);
	ck_assert_uint_eq(p.node[0].weight, 3);
	ck_assert_int_eq(wdb_plan(r, "www.s.test", 10, "cn-gd", "*", &d, &l), 0);
	ck_assert_int_eq(plan_decode(d, l, &p), 0);
	ck_assert_uint_eq(p.node[0].weight, 4);
	wdb_reader_release(r);

	wdb_txn_t *t = wdb_begin(g_db, "test:unit", err, sizeof(err));
	ck_assert_ptr_nonnull(t);
	char key[256];
	wdb_row_key(key, sizeof(key), "www.s.test", "cn-bj", "*");
	ck_assert_int_eq(wdb_set(t, WDB_WEIGHT, key, NULL), 0);
	ck_assert_int_gt(wdb_commit(t, "row del", err, sizeof(err)), 0);
	ck_assert_int_eq(wdb_plan(r, "www.s.test", 10, "cn-bj", "*", &d, &l), GSLB_ENOENT);
	ck_assert_int_eq(wdb_service(r, "www.s.test", 10, &s), 0);
	wdb_reader_release(r);
	wdb_reader_free(r);
}
END_TEST

/* Collects the ids that wdb_audit_each() visits. */
static int collect_id(int64_t id, json_t *rec, void *arg)
{
	json_t *ids = arg;
	ck_assert_int_eq(json_integer_value(json_object_get(rec, "id")), id);
	json_array_append_new(ids, json_integer(id));
	return 0;
}

/* What the statistics endpoint reports about the store. */
START_TEST(store_info)
{
	char err[512];
	wdb_info_t wi;
	ck_assert_int_eq(weightdb_info(g_db, &wi), 0);
	ck_assert_uint_eq(wi.last_audit_id, 0);
	ck_assert_int_eq(wi.last_commit, 0);
	ck_assert_uint_eq(wi.map_size, WDB_MAP_SIZE_DEFAULT);
	ck_assert_uint_gt(wi.used, 0);
	uint64_t gen = wi.table_generation, used = wi.used;
	int64_t before = (int64_t)time(NULL);
	ck_assert_int_eq(apply("first change", base_json, err, sizeof(err)), 1);
	ck_assert_int_eq(weightdb_info(g_db, &wi), 0);
	ck_assert_uint_eq(wi.last_audit_id, 1);
	ck_assert_int_ge(wi.last_commit, before);
	ck_assert_int_le(wi.last_commit, (int64_t)time(NULL));
	ck_assert_uint_gt(wi.table_generation, gen);
	ck_assert_uint_ge(wi.used, used);
	ck_assert_int_eq(wi.full, 0);
}
END_TEST

/* Each generation counter moves with its own kind only: the health
 * thread re-reads the table, the metrics or the steering inputs (the
 * release guards, S4-10) only when theirs moved. */
static void generations(uint64_t g[3])
{
	wdb_txn_t *t = wdb_begin_read(g_db);
	ck_assert_ptr_nonnull(t);
	g[0] = wdb_table_generation(t);
	g[1] = wdb_metrics_generation(t);
	g[2] = wdb_inputs_generation(t);
	wdb_abort(t);
}

static void put_one(wdb_kind_t kind, const char *key, const char *text)
{
	char err[512];
	wdb_txn_t *t = wdb_begin(g_db, "test:unit", err, sizeof(err));
	ck_assert_ptr_nonnull(t);
	json_t *v = json_loads(text, 0, NULL);
	ck_assert_int_eq(wdb_set(t, kind, key, v), 0);
	json_decref(v);
	ck_assert_int_ge(wdb_commit(t, "generations", err, sizeof(err)), 0);
}

START_TEST(generations_by_kind)
{
	char err[512];
	uint64_t a[3], b[3];
	ck_assert_int_eq(apply("first change", base_json, err, sizeof(err)), 1);
	generations(a);
	put_one(WDB_STEERIN, "n|n1|*|*", "{\"samples\": [[1, 99.5, null]]}");
	generations(b);
	ck_assert_uint_eq(b[0], a[0]);
	ck_assert_uint_eq(b[1], a[1]);
	ck_assert_uint_eq(b[2], a[2] + 1);
	put_one(WDB_METRICS, "n1", "{\"error_rate\": 1}");
	generations(a);
	ck_assert_uint_eq(a[0], b[0]);
	ck_assert_uint_eq(a[1], b[1] + 1);
	ck_assert_uint_eq(a[2], b[2]);
}
END_TEST

START_TEST(audit_record)
{
	char err[512];
	ck_assert_int_eq(wdb_audit_last(g_db), 0);
	ck_assert_int_eq(apply("first change", base_json, err, sizeof(err)), 1);
	json_t *rec = wdb_audit_get(g_db, 1);
	ck_assert_ptr_nonnull(rec);
	ck_assert_int_eq(json_integer_value(json_object_get(rec, "id")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(rec, "actor")),
	                 "test:unit");
	ck_assert_str_eq(json_string_value(json_object_get(rec, "what")),
	                 "first change");
	/* RFC 3339, UTC: 2026-11-30T17:28:36Z */
	const char *time = json_string_value(json_object_get(rec, "time"));
	ck_assert_ptr_nonnull(time);
	ck_assert_uint_eq(strlen(time), 20);
	ck_assert_int_eq(time[10], 'T');
	ck_assert_int_eq(time[19], 'Z');
	/* One change per object: kind, key, before and after. */
	json_t *ch = json_object_get(rec, "changes");
	ck_assert_uint_eq(json_array_size(ch), 5);
	int kinds[3] = { 0 };
	size_t i;
	json_t *c;
	json_array_foreach(ch, i, c) {
		const char *kind = json_string_value(json_object_get(c, "kind"));
		const char *key = json_string_value(json_object_get(c, "key"));
		ck_assert_ptr_nonnull(kind);
		ck_assert_ptr_nonnull(key);
		ck_assert(json_is_null(json_object_get(c, "before")));
		ck_assert(json_is_object(json_object_get(c, "after")));
		if (!strcmp(kind, "service")) {
			kinds[0]++;
			ck_assert_str_eq(key, "www.s.test");
		} else if (!strcmp(kind, "node")) {
			kinds[1]++;
		} else if (!strcmp(kind, "weight")) {
			kinds[2]++;
			ck_assert_int_eq(strncmp(key, "www.s.test|", 11), 0);
		}
	}
	ck_assert_int_eq(kinds[0], 1);
	ck_assert_int_eq(kinds[1], 2);
	ck_assert_int_eq(kinds[2], 2);
	json_decref(rec);

	/* A second change records what was there before. */
	ck_assert_int_eq(apply("reweigh", "{\"weights\": [{\"service\":"
	                       " \"www.s.test\", \"region\": \"*\", \"isp\": \"*\","
	                       " \"weights\": {\"n2\": 1}}]}", err, sizeof(err)), 2);
	rec = wdb_audit_get(g_db, 2);
	ch = json_object_get(rec, "changes");
	ck_assert_uint_eq(json_array_size(ch), 1);
	c = json_array_get(ch, 0);
	ck_assert_str_eq(json_string_value(json_object_get(c, "key")),
	                 "www.s.test|*|*");
	json_t *before = json_object_get(json_object_get(c, "before"), "weights");
	json_t *after = json_object_get(json_object_get(c, "after"), "weights");
	ck_assert_int_eq(json_integer_value(json_object_get(before, "n1")), 5);
	ck_assert_ptr_null(json_object_get(after, "n1"));
	ck_assert_int_eq(json_integer_value(json_object_get(after, "n2")), 1);
	json_decref(rec);
	ck_assert_int_eq(wdb_audit_last(g_db), 2);

	/* Live data (status, metrics) is not audited. */
	wdb_txn_t *t = wdb_begin(g_db, "test:unit", err, sizeof(err));
	ck_assert_ptr_nonnull(t);
	json_t *st = json_pack("{s:i}", "score", 80);
	ck_assert_int_eq(wdb_set(t, WDB_STATUS, "n1", st), 0);
	json_decref(st);
	ck_assert_int_eq(wdb_commit(t, "status", err, sizeof(err)), 0);
	ck_assert_int_eq(wdb_audit_last(g_db), 2);

	json_t *ids = json_array();
	wdb_audit_each(g_db, 1, collect_id, ids);
	ck_assert_uint_eq(json_array_size(ids), 1);
	ck_assert_int_eq(json_integer_value(json_array_get(ids, 0)), 2);
	json_decref(ids);
	ck_assert_ptr_null(wdb_audit_get(g_db, 3));
}
END_TEST

START_TEST(rejected_change_leaves_nothing)
{
	char err[512];
	ck_assert_int_eq(apply("base", base_json, err, sizeof(err)), 1);
	plan_t before_plan;
	ck_assert_int_eq(read_plan("www.s.test", "*", "*", &before_plan), 0);

	/* A row naming a node that does not exist, in the same change as a
	 * valid new service and a valid node change. */
	int64_t rc = apply("bad", "{\"services\": [{\"name\": \"new.s.test\","
	                   " \"ttl\": 5, \"answers\": 1, \"all_down\": \"open\"}],"
	                   " \"nodes\": [{\"id\": \"n2\", \"addrs\": [\"192.0.2.99\"],"
	                   " \"admin\": \"auto\"}],"
	                   " \"weights\": [{\"service\": \"new.s.test\","
	                   " \"region\": \"*\", \"isp\": \"*\","
	                   " \"weights\": {\"ghost\": 1}}]}", err, sizeof(err));
	ck_assert_int_eq(rc, GSLB_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "new.s.test|*|*"));
	ck_assert_ptr_nonnull(strstr(err, "unknown node 'ghost'"));

	/* No audit record, no object, no plan, no service record. */
	ck_assert_int_eq(wdb_audit_last(g_db), 1);
	wdb_txn_t *t = wdb_begin_read(g_db);
	ck_assert_ptr_null(wdb_get(t, WDB_SERVICE, "new.s.test"));
	ck_assert_ptr_null(wdb_get(t, WDB_WEIGHT, "new.s.test|*|*"));
	json_t *n2 = wdb_get(t, WDB_NODE, "n2");
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(n2, "addrs"), 0)),
	                 "2001:db8::2");
	json_decref(n2);
	wdb_abort(t);
	svc_rec_t s;
	ck_assert_int_eq(read_service("new.s.test", &s), GSLB_ENOENT);
	plan_t p;
	ck_assert_int_eq(read_plan("new.s.test", "*", "*", &p), GSLB_ENOENT);
	/* The plans of the service that was there are as they were. */
	ck_assert_int_eq(read_plan("www.s.test", "*", "*", &p), 0);
	ck_assert_uint_eq(p.n, before_plan.n);
	for (unsigned i = 0; i < p.n; i++) {
		ck_assert_uint_eq(p.node[i].weight, before_plan.node[i].weight);
		ck_assert_uint_eq(p.node[i].n6, before_plan.node[i].n6);
	}

	/* Deleting a service that still has rows is refused as a whole. */
	t = wdb_begin(g_db, "test:unit", err, sizeof(err));
	wdb_set(t, WDB_SERVICE, "www.s.test", NULL);
	ck_assert_int_eq(wdb_commit(t, "del", err, sizeof(err)), GSLB_EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "weight row"));
	ck_assert_int_eq(read_service("www.s.test", &s), 0);
	ck_assert_int_eq(wdb_audit_last(g_db), 1);

	/* An aborted transaction is a rollback too. */
	t = wdb_begin(g_db, "test:unit", err, sizeof(err));
	wdb_set(t, WDB_WEIGHT, "www.s.test|*|*", NULL);
	wdb_abort(t);
	ck_assert_int_eq(read_plan("www.s.test", "*", "*", &p), 0);
	ck_assert_int_eq(wdb_audit_last(g_db), 1);
}
END_TEST

/* Collects the times that wdb_history_each() visits. */
static int collect_sample(uint32_t time, json_t *sample, void *arg)
{
	ck_assert_int_eq(json_integer_value(json_object_get(sample, "score")),
	                 time);
	json_array_append_new(arg, json_integer(time));
	return 0;
}

START_TEST(history_samples)
{
	char err[512];
	/* History is kept only for nodes that exist. */
	ck_assert_int_eq(apply("nodes", "{\"nodes\": [{\"id\": \"n1\","
	                       " \"addrs\": [\"192.0.2.1\"]}, {\"id\": \"n10\","
	                       " \"addrs\": [\"192.0.2.10\"]}]}", err, sizeof(err)), 1);
	wdb_txn_t *t = wdb_begin(g_db, "test:unit", err, sizeof(err));
	for (uint32_t tm = 100; tm < 110; tm++) {
		json_t *s = json_pack("{s:i}", "score", (int)tm);
		ck_assert_int_eq(wdb_history_add(t, "n1", tm, s), 0);
		ck_assert_int_eq(wdb_history_add(t, "n10", tm, s), 0);
		json_decref(s);
	}
	ck_assert_int_eq(wdb_history_trim(t, 103), 0);
	ck_assert_int_eq(wdb_commit(t, "history", err, sizeof(err)), 0);
	json_t *seen = json_array();
	wdb_history_each(g_db, "n1", 105, collect_sample, seen);
	/* n1 only (not n10), from 105 on, oldest first. */
	ck_assert_uint_eq(json_array_size(seen), 5);
	for (size_t i = 0; i < 5; i++)
		ck_assert_int_eq(json_integer_value(json_array_get(seen, i)), 105 + i);
	json_decref(seen);
	seen = json_array();
	wdb_history_each(g_db, "n1", 0, collect_sample, seen);
	ck_assert_uint_eq(json_array_size(seen), 7);   /* 103..109 */
	json_decref(seen);
}
END_TEST


/* Store hardening --------------------------------------------------- */

/* A probed n1 with a verdict, its status, metrics and history. */
static void n1_demoted(void)
{
	char err[512];
	ck_assert_int_gt(apply("base", base_json, err, sizeof(err)), 0);
	ck_assert_int_gt(apply("probe n1", "{\"nodes\": [{\"id\": \"n1\","
	                       " \"addrs\": [\"192.0.2.1\"], \"admin\": \"auto\","
	                       " \"probes\": [\"http://192.0.2.1/\"]}],"
	                       " \"health\": {\"n1\": {\"state\": \"demoted\","
	                       " \"usable\": false, \"reason\": \"probe failed\"}}}",
	                       err, sizeof(err)), 0);
	wdb_txn_t *t = wdb_begin(g_db, "health", err, sizeof(err));
	json_t *st = json_pack("{s:f}", "score", 10.0);
	ck_assert_int_eq(wdb_set(t, WDB_STATUS, "n1", st), 0);
	ck_assert_int_eq(wdb_set(t, WDB_METRICS, "n1", st), 0);
	ck_assert_int_eq(wdb_history_add(t, "n1", 1000, st), 0);
	ck_assert_int_eq(wdb_history_add(t, "n2", 1000, st), 0);
	json_decref(st);
	ck_assert_int_ge(wdb_commit(t, "health", err, sizeof(err)), 0);
	plan_t p;
	ck_assert_int_eq(read_plan("www.s.test", "cn-bj", "*", &p), 0);
	ck_assert_uint_eq(p.node[0].flags & PLAN_USABLE, 0);
}

static int count_sample(uint32_t time, json_t *sample, void *arg)
{
	(void)time;
	(void)sample;
	(*(int *)arg)++;
	return 0;
}

/* Deleting a node deletes every record about it in the same change, so
 * the node added again under its id starts without the old verdict. */
START_TEST(node_delete_takes_its_records)
{
	char err[512];
	n1_demoted();
	wdb_txn_t *t = wdb_begin_read(g_db);
	uint64_t born = wdb_node_born(t, "n1");
	ck_assert_uint_gt(born, 0);             /* stamped when added */
	ck_assert_uint_le(born, wdb_table_generation(t));
	wdb_abort(t);
	t = wdb_begin(g_db, "test:unit", err, sizeof(err));
	json_t *row = json_pack("{s:s, s:s, s:s, s:{s:i}}", "service", "www.s.test",
	                        "region", "*", "isp", "*", "weights", "n2", 7);
	ck_assert_int_eq(wdb_set(t, WDB_WEIGHT, "www.s.test|cn-bj|*", NULL), 0);
	ck_assert_int_eq(wdb_set(t, WDB_WEIGHT, "www.s.test|*|*", row), 0);
	ck_assert_int_eq(wdb_set(t, WDB_NODE, "n1", NULL), 0);
	json_decref(row);
	ck_assert_int_gt(wdb_commit(t, "node del n1", err, sizeof(err)), 0);

	t = wdb_begin_read(g_db);
	ck_assert_ptr_null(wdb_get(t, WDB_HEALTH, "n1"));
	ck_assert_ptr_null(wdb_get(t, WDB_STATUS, "n1"));
	ck_assert_ptr_null(wdb_get(t, WDB_METRICS, "n1"));
	ck_assert_uint_eq(wdb_node_born(t, "n1"), 0);   /* the stamp went too */
	wdb_abort(t);
	int n = 0;
	wdb_history_each(g_db, "n1", 0, count_sample, &n);
	ck_assert_int_eq(n, 0);
	wdb_history_each(g_db, "n2", 0, count_sample, &n);
	ck_assert_int_eq(n, 1);                 /* n2's history stays */

	/* A late write about the deleted node is refused, harmlessly. */
	t = wdb_begin(g_db, "health", err, sizeof(err));
	json_t *h = json_pack("{s:s, s:b}", "state", "demoted", "usable", 0);
	ck_assert_int_eq(wdb_set(t, WDB_HEALTH, "n1", h), GSLB_ENOENT);
	ck_assert_int_eq(wdb_history_add(t, "n1", 2000, h), GSLB_ENOENT);
	json_decref(h);
	ck_assert_int_ge(wdb_commit(t, "health", err, sizeof(err)), 0);

	/* Added again: no verdict, in the answers. */
	ck_assert_int_gt(apply("n1 again", "{\"nodes\": [{\"id\": \"n1\","
	                       " \"addrs\": [\"192.0.2.1\"], \"admin\": \"auto\"}],"
	                       " \"weights\": [{\"service\": \"www.s.test\","
	                       " \"region\": \"cn-bj\", \"isp\": \"*\","
	                       " \"weights\": {\"n1\": 10}}]}", err, sizeof(err)), 0);
	t = wdb_begin_read(g_db);
	ck_assert_ptr_null(wdb_get(t, WDB_HEALTH, "n1"));
	/* A new node under the old id: a new stamp, that of this commit
	 * (nothing of the old verdict carries over). */
	ck_assert_uint_gt(wdb_node_born(t, "n1"), born);
	ck_assert_uint_eq(wdb_node_born(t, "n1"), wdb_table_generation(t));
	wdb_abort(t);
	plan_t p;
	ck_assert_int_eq(read_plan("www.s.test", "cn-bj", "*", &p), 0);
	ck_assert_uint_ne(p.node[0].flags & PLAN_USABLE, 0);
}
END_TEST

static int add_row_key(const char *row, void *arg)
{
	json_array_append_new(arg, json_string(row));
	return 0;
}

/* The keys of the rows that name @id, as a JSON array text (sorted). */
static char *node_rows(const char *id)
{
	wdb_txn_t *t = wdb_begin_read(g_db);
	json_t *a = json_array();
	ck_assert_int_eq(wdb_node_rows(t, id, add_row_key, a), 0);
	wdb_abort(t);
	char *s = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	return s;
}

#define ASSERT_ROWS(id, want) do { char *s_ = node_rows(id); \
	ck_assert_str_eq(s_, want); free(s_); } while (0)

/* Sets meta "schema" to @ver and empties the noderows index, with LMDB
 * itself: a store as an older gslbd left it (@ver 1), or an index that
 * is lost (@ver 2), which shows that commits read it. */
static void raw_unindex(uint32_t ver)
{
	char p[PATH_MAX + 8], err[512];
	snprintf(p, sizeof(p), "%s/db", g_dir);
	weightdb_close(g_db);
	MDB_env *env;
	MDB_txn *txn;
	MDB_dbi meta, ix;
	ck_assert_int_eq(mdb_env_create(&env), 0);
	ck_assert_int_eq(mdb_env_set_maxdbs(env, 32), 0);
	ck_assert_int_eq(mdb_env_open(env, p, MDB_NOTLS, 0644), 0);
	ck_assert_int_eq(mdb_txn_begin(env, NULL, 0, &txn), 0);
	ck_assert_int_eq(mdb_dbi_open(txn, "meta", 0, &meta), 0);
	ck_assert_int_eq(mdb_dbi_open(txn, "noderows", MDB_DUPSORT, &ix), 0);
	ck_assert_int_eq(mdb_drop(txn, ix, ver < 2), 0);
	uint8_t vb[4];
	wr32(vb, ver);
	MDB_val k = { 6, "schema" }, v = { 4, vb };
	ck_assert_int_eq(mdb_put(txn, meta, &k, &v, 0), 0);
	ck_assert_int_eq(mdb_txn_commit(txn), 0);
	mdb_env_close(env);
	g_db = weightdb_open(p, err, sizeof(err));
	ck_assert_msg(g_db != NULL, "%s", err);
}

/* The node -> row index follows every row change in the commit's
 * transaction, a node change rebuilds the plans of the rows it names
 * through it (not by reading every row), and a store without it (schema
 * 1) gets it at its first read-write open. */
START_TEST(node_row_index)
{
	char err[512];
	ck_assert_int_gt(apply("base", base_json, err, sizeof(err)), 0);
	ASSERT_ROWS("n1", "[\"www.s.test|*|*\",\"www.s.test|cn-bj|*\"]");
	ASSERT_ROWS("n2", "[\"www.s.test|*|*\"]");
	ASSERT_ROWS("n3", "[]");
	/* A row that drops n1 and one deleted: their entries go. */
	ck_assert_int_gt(apply("rows", "{\"weights\": [{\"service\": \"www.s.test\","
	                       " \"region\": \"*\", \"isp\": \"*\","
	                       " \"weights\": {\"n2\": 7}}]}", err, sizeof(err)), 0);
	ASSERT_ROWS("n1", "[\"www.s.test|cn-bj|*\"]");
	wdb_txn_t *t = wdb_begin(g_db, "test:unit", err, sizeof(err));
	ck_assert_int_eq(wdb_set(t, WDB_WEIGHT, "www.s.test|cn-bj|*", NULL), 0);
	/* Not committed: the index is that of the transaction. */
	json_t *a = json_array();
	ck_assert_int_eq(wdb_node_rows(t, "n1", add_row_key, a), 0);
	ck_assert_uint_eq(json_array_size(a), 0);
	json_decref(a);
	wdb_abort(t);
	ASSERT_ROWS("n1", "[\"www.s.test|cn-bj|*\"]");

	/* A lost index: a node change no longer reaches the plan, which
	 * shows that the commit reads the index, not the rows. */
	raw_unindex(2);
	ASSERT_ROWS("n1", "[]");
	ck_assert(n1_admin("down"));   /* the plan was not rebuilt */

	/* Schema 1: the open builds the index, and node changes reach the
	 * plans again. */
	raw_unindex(1);
	ASSERT_ROWS("n1", "[\"www.s.test|cn-bj|*\"]");
	ASSERT_ROWS("n2", "[\"www.s.test|*|*\"]");
	ck_assert(n1_admin("auto"));
	ck_assert(!n1_admin("down"));
}
END_TEST

/* A node whose probes are removed loses the verdict they gave it but
 * keeps its cutover derating (S2-7: its pushes, if any, judge it next). */
START_TEST(no_probes_clears_verdict)
{
	char err[512];
	n1_demoted();
	ck_assert_int_gt(apply("cutover", "{\"health\": {\"n1\": {\"state\": \"demoted\","
	                       " \"usable\": false, \"cutover_phase\": \"notice\","
	                       " \"cutover_pct\": 60}}}", err, sizeof(err)), 0);
	ck_assert_int_gt(apply("no probes", "{\"nodes\": [{\"id\": \"n1\","
	                       " \"addrs\": [\"192.0.2.1\"], \"admin\": \"auto\","
	                       " \"probes\": []}]}", err, sizeof(err)), 0);
	wdb_txn_t *t = wdb_begin_read(g_db);
	json_t *h = wdb_get(t, WDB_HEALTH, "n1");
	wdb_abort(t);
	ck_assert_ptr_nonnull(h);
	ck_assert_ptr_null(json_object_get(h, "state"));
	ck_assert_ptr_null(json_object_get(h, "usable"));
	ck_assert_int_eq(json_integer_value(json_object_get(h, "cutover_pct")), 60);
	json_decref(h);
	plan_t p;
	ck_assert_int_eq(read_plan("www.s.test", "cn-bj", "*", &p), 0);
	ck_assert_uint_ne(p.node[0].flags & PLAN_USABLE, 0);
	ck_assert_uint_eq(p.node[0].weight, 6);       /* 10 x 60% */

	/* Pushed metrics judge a probe-less node from then on: a verdict
	 * written for it now is its own and is kept. */
	ck_assert_int_gt(apply("pushes", "{\"health\": {\"n1\": {\"state\": \"demoted\","
	                       " \"usable\": false}}}", err, sizeof(err)), -1);
	t = wdb_begin_read(g_db);
	h = wdb_get(t, WDB_HEALTH, "n1");
	wdb_abort(t);
	ck_assert_ptr_nonnull(h);
	ck_assert_str_eq(json_string_value(json_object_get(h, "state")), "demoted");
	json_decref(h);
	ck_assert_int_eq(read_plan("www.s.test", "cn-bj", "*", &p), 0);
	ck_assert_uint_eq(p.node[0].flags & PLAN_USABLE, 0);
}
END_TEST

typedef struct {
	weightdb_t *db;
	int rc;
} writer_arg_t;

static void *writer(void *arg)
{
	writer_arg_t *w = arg;
	char err[512];
	wdb_txn_t *t = wdb_begin(w->db, "test:writer", err, sizeof(err));
	if (!t) {
		w->rc = -1;
		return NULL;
	}
	json_t *s = json_pack("{s:s, s:i, s:i, s:i, s:s}", "name", "w.s.test",
	                      "ttl", 60, "short_ttl", 10, "answers", 1, "all_down", "open");
	wdb_set(t, WDB_SERVICE, "w.s.test", s);
	json_decref(s);
	w->rc = (int)wdb_commit(t, "writer", err, sizeof(err));
	return NULL;
}

/* A read transaction never holds back a writer of another thread, and
 * keeps seeing the store as of its start. */
START_TEST(read_txn_does_not_block_writers)
{
	char err[512];
	ck_assert_int_gt(apply("base", base_json, err, sizeof(err)), 0);
	wdb_txn_t *r = wdb_begin_read(g_db);
	ck_assert_ptr_nonnull(r);
	json_t *s = wdb_get(r, WDB_SERVICE, "www.s.test");
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(wdb_set(r, WDB_SERVICE, "x.s.test", s), GSLB_EINVAL);
	json_decref(s);

	writer_arg_t w = { g_db, 0 };
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, writer, &w), 0);
	/* Were the writer waiting for the reader, this would hang (and the
	 * test time out): the reader is still open. */
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	ck_assert_int_gt(w.rc, 0);
	ck_assert_ptr_null(wdb_get(r, WDB_SERVICE, "w.s.test"));
	wdb_abort(r);
	r = wdb_begin_read(g_db);
	s = wdb_get(r, WDB_SERVICE, "w.s.test");
	ck_assert_ptr_nonnull(s);
	json_decref(s);
	wdb_abort(r);
}
END_TEST

/* A store opened read-only reads without a write transaction, even at
 * open, and refuses to write. */
START_TEST(read_only_open)
{
	char err[512], p[PATH_MAX + 8];
	ck_assert_int_gt(apply("base", base_json, err, sizeof(err)), 0);
	snprintf(p, sizeof(p), "%s/db", g_dir);
	wdb_options_t o = { .read_only = 1 };
	/* LMDB: one environment per file and process. */
	weightdb_close(g_db);
	g_db = NULL;
	weightdb_t *ro = weightdb_open_opts(p, &o, err, sizeof(err));
	ck_assert_msg(ro != NULL, "%s", err);
	wdb_txn_t *t = wdb_begin_read(ro);
	json_t *n = wdb_get(t, WDB_NODE, "n1");
	ck_assert_ptr_nonnull(n);
	json_decref(n);
	wdb_abort(t);
	ck_assert_ptr_null(wdb_begin(ro, "test:unit", err, sizeof(err)));
	ck_assert_ptr_nonnull(strstr(err, "read-only"));
	weightdb_close(ro);
	g_db = weightdb_open(p, err, sizeof(err));  /* for teardown */
	/* No store there: an error, not a new store. */
	snprintf(p, sizeof(p), "%s/none", g_dir);
	ck_assert_ptr_null(weightdb_open_opts(p, &o, err, sizeof(err)));
}
END_TEST

/* Adds node @id (with a note of @pad bytes) in a commit of its own. */
static int64_t add_padded(weightdb_t *db, const char *id, size_t pad)
{
	char err[512], *note = xcalloc(1, pad + 1);
	memset(note, 'x', pad);
	wdb_txn_t *t = wdb_begin(db, "test:unit", err, sizeof(err));
	ck_assert_ptr_nonnull(t);
	json_t *n = json_pack("{s:s, s:[s], s:s}", "id", id, "addrs", "192.0.2.1",
	                      "note", note);
	wdb_set(t, WDB_NODE, id, n);
	json_decref(n);
	free(note);
	return wdb_commit(t, "node add", err, sizeof(err));
}

/* Room for health decisions: gslbctl (conf_map_size, leave_room) creates
 * the store with its configured map and records it; its writes stop
 * short of the top eighth; past the high-water mark the audit log makes
 * way oldest first, counted; a write that shrinks the data is never
 * refused. */
START_TEST(room_for_health)
{
	char err[512], p[PATH_MAX + 8];
	snprintf(p, sizeof(p), "%s/room", g_dir);
	wdb_options_t o = { .conf_map_size = 1 << 20, .leave_room = 1 };
	weightdb_t *db = weightdb_open_opts(p, &o, err, sizeof(err));
	ck_assert_msg(db != NULL, "%s", err);
	wdb_info_t wi;
	ck_assert_int_eq(weightdb_info(db, &wi), 0);
	ck_assert_uint_eq(wi.map_size, 1 << 20);
	weightdb_close(db);
	/* A later open without a size of its own maps the recorded one. */
	db = weightdb_open(p, err, sizeof(err));
	ck_assert_msg(db != NULL, "%s", err);
	ck_assert_int_eq(weightdb_info(db, &wi), 0);
	ck_assert_uint_eq(wi.map_size, 1 << 20);
	weightdb_close(db);
	/* Configured for more than recorded: the recorded one. */
	o.conf_map_size = 64 << 20;
	db = weightdb_open_opts(p, &o, err, sizeof(err));
	ck_assert_msg(db != NULL, "%s", err);
	ck_assert_int_eq(weightdb_info(db, &wi), 0);
	ck_assert_uint_eq(wi.map_size, 1 << 20);
	/* Table growth: refused before the last 128K, which stays free. */
	int64_t rc = 0;
	int i;
	for (i = 0; i < 2000 && rc >= 0; i++) {
		char id[32];
		snprintf(id, sizeof(id), "t%d", i);
		rc = add_padded(db, id, 1500);
	}
	ck_assert_int_eq(rc, GSLB_ENOSPC);
	ck_assert_int_eq(weightdb_info(db, &wi), 0);
	ck_assert_uint_le(wi.live, (1 << 20) - (128 << 10));
	ck_assert_uint_gt(wi.live, (1 << 20) - (256 << 10));
	/* Past the high-water mark the audit log makes way, oldest first. */
	wdb_room_t r;
	int n = weightdb_make_room(db, 100000, 0, &r);
	ck_assert_int_gt(n, 0);              /* past 768K: trimmed */
	ck_assert_uint_eq(r.audit, (unsigned)n);
	ck_assert_uint_le(r.live_after, r.live_before);
	ck_assert_ptr_null(wdb_audit_get(db, 1));   /* oldest first */
	ck_assert_int_eq(weightdb_info(db, &wi), 0);
	ck_assert_uint_eq(wi.room_audit, (uint64_t)n);
	/* Deleting nodes shrinks the table: never refused, though the audit
	 * record of the deletion holds them. */
	wdb_txn_t *t = wdb_begin(db, "test:unit", err, sizeof(err));
	for (int k = 0; k < 3; k++) {
		char id[32];
		snprintf(id, sizeof(id), "t%d", k);
		wdb_set(t, WDB_NODE, id, NULL);
	}
	ck_assert_msg(wdb_commit(t, "node del", err, sizeof(err)) > 0, "%s", err);
	char msg[512];
	wdb_room_msg(&r, msg, sizeof(msg));
	ck_assert_ptr_nonnull(strstr(msg, "oldest audit records"));
	ck_assert_ptr_nonnull(strstr(msg, "of its 1M map (database.map-size)"));
	weightdb_close(db);
}
END_TEST

/* A full map refuses the write with the remedy and changes nothing;
 * trimming makes room again. */
START_TEST(map_full)
{
	char err[512], p[PATH_MAX + 8];
	snprintf(p, sizeof(p), "%s/small", g_dir);
	/* gslbd's view: the log (stderr, here a file) says it once. */
	wdb_options_t o = { .map_size = 256 * 1024, .log_full = 1 };
	char logp[PATH_MAX + 8];
	snprintf(logp, sizeof(logp), "%s/log", g_dir);
	fflush(stderr);
	int saved = dup(2), lfd = open(logp, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	ck_assert_int_ge(lfd, 0);
	dup2(lfd, 2);
	weightdb_t *db = weightdb_open_opts(p, &o, err, sizeof(err));
	ck_assert_msg(db != NULL, "%s", err);
	int64_t rc = 0;
	int i;
	char pad[2000];
	memset(pad, 'x', sizeof(pad) - 1);
	pad[sizeof(pad) - 1] = 0;
	for (i = 0; i < 10000 && rc >= 0; i++) {
		wdb_txn_t *t = wdb_begin(db, "test:unit", err, sizeof(err));
		ck_assert_ptr_nonnull(t);
		char id[32];
		snprintf(id, sizeof(id), "n%d", i);
		json_t *n = json_pack("{s:s, s:[s], s:s}", "id", id, "addrs", "192.0.2.1",
		                      "note", pad);
		wdb_set(t, WDB_NODE, id, n);   /* the commit reports the cause */
		json_decref(n);
		rc = wdb_commit(t, "node add", err, sizeof(err));
	}
	ck_assert_int_eq(rc, GSLB_ENOSPC);
	char full[300];
	ck_assert_str_eq(err, wdb_full_msg(db, full, sizeof(full)));
	ck_assert_ptr_nonnull(strstr(err, "map of 256K (database.map-size)"));
	for (int k = 0; k < 3; k++) {             /* refused again and again */
		wdb_txn_t *t = wdb_begin(db, "test:unit", err, sizeof(err));
		json_t *n = json_pack("{s:s, s:[s], s:s}", "id", "x", "addrs",
		                      "192.0.2.1", "note", pad);
		wdb_set(t, WDB_NODE, "x", n);
		json_decref(n);
		ck_assert_int_eq(wdb_commit(t, "node add", err, sizeof(err)), GSLB_ENOSPC);
	}
	ck_assert_str_eq(wdb_strerror(GSLB_ENOSPC), WDB_FULL_MSG);
	int64_t last = wdb_audit_last(db);
	ck_assert_int_eq(last, i - 1);       /* the failed one left nothing */
	wdb_txn_t *t = wdb_begin_read(db);
	char id[32];
	snprintf(id, sizeof(id), "n%d", i - 1);
	ck_assert_ptr_null(wdb_get(t, WDB_NODE, id));
	wdb_abort(t);
	/* Trimming the audit log (everything is older than tomorrow) makes
	 * room for a write again. */
	ck_assert_int_gt(trim_by(db, (uint32_t)time(NULL) + 86400, 0, 100000), 0);
	ck_assert_ptr_null(wdb_audit_get(db, 1));
	t = wdb_begin(db, "test:unit", err, sizeof(err));
	json_t *n = json_pack("{s:s, s:[s]}", "id", id, "addrs", "192.0.2.1");
	ck_assert_int_eq(wdb_set(t, WDB_NODE, id, n), 0);
	json_decref(n);
	ck_assert_int_eq(wdb_commit(t, "node add", err, sizeof(err)), last + 1);
	/* Full again: the store still opens (gslbd restarting) and reads. */
	for (rc = 0, i = 0; i < 10000 && rc >= 0; i++) {
		t = wdb_begin(db, "test:unit", err, sizeof(err));
		snprintf(id, sizeof(id), "m%d", i);
		n = json_pack("{s:s, s:[s], s:s}", "id", id, "addrs", "192.0.2.1",
		              "note", pad);
		wdb_set(t, WDB_NODE, id, n);
		json_decref(n);
		rc = wdb_commit(t, "node add", err, sizeof(err));
	}
	ck_assert_int_eq(rc, GSLB_ENOSPC);
	last = wdb_audit_last(db);
	weightdb_close(db);
	wdb_options_t quiet = { .map_size = o.map_size };
	db = weightdb_open_opts(p, &quiet, err, sizeof(err));
	ck_assert_msg(db != NULL, "%s", err);
	ck_assert_int_eq(wdb_audit_last(db), last);
	weightdb_close(db);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	close(lfd);
	char logbuf[4096] = "";
	FILE *lf = fopen(logp, "r");
	ck_assert_ptr_nonnull(lf);
	size_t ln = fread(logbuf, 1, sizeof(logbuf) - 1, lf);
	logbuf[ln] = 0;
	fclose(lf);
	const char *first = strstr(logbuf, "store full: its map of 256K");
	ck_assert_msg(first != NULL, "log: %s", logbuf);
	/* Once: the refusals after the first say nothing more, the first
	 * success says so, and a second episode within ten minutes of the
	 * first log is not logged again (small writes that fit between
	 * large ones would otherwise make a stream of it). */
	const char *again = strstr(first, "writes succeed again");
	ck_assert_msg(again != NULL, "log: %s", logbuf);
	ck_assert_msg(strstr(first + 1, "store full: its map of 256K") == NULL, "logged twice: %s",
	              logbuf);
}
END_TEST

/* The room a trim makes is usable by the very next write, with no other
 * commit in between: in a map filled to its end by the audit log, a
 * change larger than what the last commits freed, right after making
 * room, goes in. */
START_TEST(room_usable_at_once)
{
	char err[512], p[PATH_MAX + 8];
	snprintf(p, sizeof(p), "%s/settle", g_dir);
	wdb_options_t o = { .map_size = 256 * 1024 };
	weightdb_t *db = weightdb_open_opts(p, &o, err, sizeof(err));
	ck_assert_msg(db != NULL, "%s", err);
	/* Nodes come and go: the table stays small, the audit log fills the
	 * map. */
	int64_t rc = 0;
	for (int i = 0; i < 10000 && rc >= 0; i++) {
		char id[32];
		snprintf(id, sizeof(id), "n%d", i);
		if ((rc = add_padded(db, id, 3000)) < 0)
			break;
		wdb_txn_t *t = wdb_begin(db, "test:unit", err, sizeof(err));
		wdb_set(t, WDB_NODE, id, NULL);
		rc = wdb_commit(t, "node del", err, sizeof(err));
	}
	ck_assert_int_eq(rc, GSLB_ENOSPC);
	wdb_room_t r;
	ck_assert_int_gt(weightdb_make_room(db, 100000, 1, &r), 0);
	/* Larger than any page the fill's last commit freed. */
	ck_assert_msg(add_padded(db, "after", 40000) > 0, "the first write after "
	              "making room was refused as full");
	weightdb_close(db);
}
END_TEST

/* Trimming deletes from the front in time order and stops at the first
 * record to keep. */
START_TEST(trim_by_time)
{
	char err[512];
	ck_assert_int_eq(apply("nodes", "{\"nodes\": [{\"id\": \"a\","
	                       " \"addrs\": [\"192.0.2.1\"]}, {\"id\": \"b\","
	                       " \"addrs\": [\"192.0.2.2\"]}]}", err, sizeof(err)), 1);
	wdb_txn_t *t = wdb_begin(g_db, "test:unit", err, sizeof(err));
	json_t *s = json_pack("{s:i}", "score", 1);
	for (uint32_t tm = 100; tm < 110; tm++) {
		/* b before a in key order, interleaved in time. */
		ck_assert_int_eq(wdb_history_add(t, "b", tm, s), 0);
		ck_assert_int_eq(wdb_history_add(t, "a", tm + 5, s), 0);
	}
	json_decref(s);
	ck_assert_int_eq(wdb_commit(t, "history", err, sizeof(err)), 0);
	/* At most 3 per call: b@100..102. */
	ck_assert_int_eq(trim_by(g_db, 0, 108, 3), 3);
	int na = 0, nb = 0;
	wdb_history_each(g_db, "b", 0, count_sample, &nb);
	ck_assert_int_eq(nb, 7);
	/* Then the rest before 108: b@103..107 and a@105..107. */
	ck_assert_int_eq(trim_by(g_db, 0, 108, 100), 8);
	ck_assert_int_eq(trim_by(g_db, 0, 108, 100), 0);
	nb = 0;
	wdb_history_each(g_db, "b", 0, count_sample, &nb);
	wdb_history_each(g_db, "a", 0, count_sample, &na);
	ck_assert_int_eq(nb, 2);    /* 108, 109 */
	ck_assert_int_eq(na, 7);    /* 108..114 */
	/* The audit record is newer than an hour ago: kept. */
	ck_assert_int_eq(trim_by(g_db, (uint32_t)time(NULL) - 3600, 0, 100), 0);
	json_t *a = wdb_audit_get(g_db, 1);
	ck_assert_ptr_nonnull(a);
	json_decref(a);
	/* Kept again (its time remembered, not parsed again), then old
	 * enough an hour later: the remembered time still lets it go. */
	ck_assert_int_eq(trim_by(g_db, (uint32_t)time(NULL) - 3600, 0, 100), 0);
	ck_assert_int_gt(trim_by(g_db, (uint32_t)time(NULL) + 3600, 0, 1), 0);
	a = wdb_audit_get(g_db, 1);
	ck_assert_ptr_null(a);
}
END_TEST

static Suite *store_suite(void)
{
	Suite *s = suite_create("store");
	TCase *t = tcase_create("keys");
	tcase_add_test(t, row_key_compose_split);
	tcase_add_test(t, row_key_limits);
	tcase_add_test(t, row_key_kind);
	suite_add_tcase(s, t);
	t = tcase_create("commit");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, commit_builds_plans);
	tcase_add_test(t, store_info);
	tcase_add_test(t, audit_record);
	tcase_add_test(t, rejected_change_leaves_nothing);
	tcase_add_test(t, history_samples);
	tcase_add_test(t, node_delete_takes_its_records);
	tcase_add_test(t, no_probes_clears_verdict);
	tcase_add_test(t, node_row_index);
	tcase_add_test(t, reader_cache_follows_commits);
	tcase_add_test(t, read_txn_does_not_block_writers);
	tcase_add_test(t, read_only_open);
	tcase_add_test(t, map_full);
	tcase_add_test(t, room_usable_at_once);
	tcase_add_test(t, room_for_health);
	tcase_add_test(t, trim_by_time);
	tcase_add_test(t, generations_by_kind);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(store_suite)
