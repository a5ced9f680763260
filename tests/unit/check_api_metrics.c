/* SPDX-License-Identifier: MIT */
/* POST /v1/metrics through api_route() against a real store, without
 * a server: a batch stored in one transaction, the first bad sample
 * refusing the batch with its index and key, and the role it needs
 * (cluster mode's feed: tests/integ/test_cluster_api.sh). */
#include "api/api_int.h"
#include "store/weightdb.h"
#include "store_fixture.h"
#include "unit.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static char g_dir[PATH_MAX];
static weightdb_t *g_db;

static const char table[] =
	"{\"services\": [{\"name\": \"www.test\", \"ttl\": 60}],"
	" \"nodes\": [{\"id\": \"a\", \"addrs\": [\"192.0.2.1\"]},"
	"             {\"id\": \"b\", \"addrs\": [\"192.0.2.2\"]}],"
	" \"weights\": [{\"service\": \"www.test\", \"region\": \"cn-gz\","
	"                \"isp\": \"ctcc\", \"weights\": {\"a\": 10, \"b\": 10}}]}";

static void setup(void)
{
	ck_assert_int_eq(fx_mkdtemp(g_dir, "api-metrics"), 0);
	g_db = fx_store(g_dir, table);
	ck_assert_ptr_nonnull(g_db);
}

static void teardown(void)
{
	weightdb_close(g_db);
	g_db = NULL;
	ck_assert_int_eq(fx_rmrf(g_dir), 0);
}

/* POST /v1/metrics of @body as a token of @role; the answer into @r
 * (its body the caller's). */
static void post(const char *body, api_role_t role, api_resp_t *r)
{
	api_env_t env = { .db = g_db, .settle = 30, .cluster = 0, .keep = 900,
	                  .skew = 60 };
	api_req_t q = { .method = "POST", .path = "/v1/metrics", .body = body,
	                .body_len = strlen(body), .role = role, .user = "feeder",
	                .host = "192.0.2.9", .now = 1800000000 };
	memset(r, 0, sizeof(*r));
	api_route(&env, &q, r);
}

/* The metrics record of node @id, as JSON text ("" when none). */
static void metrics_of(const char *id, char *out, size_t size)
{
	wdb_txn_t *t = wdb_begin_read(g_db);
	ck_assert_ptr_nonnull(t);
	json_t *m = wdb_get(t, WDB_METRICS, id);
	char *s = m ? json_dumps(m, JSON_SORT_KEYS | JSON_COMPACT) : NULL;
	snprintf(out, size, "%s", s ? s : "");
	free(s);
	json_decref(m);
	wdb_abort(t);
}

static const char *field(const api_resp_t *r)
{
	return json_string_value(json_object_get(r->body, "field"));
}

static const char *error(const api_resp_t *r)
{
	return json_string_value(json_object_get(r->body, "error"));
}

START_TEST(batch_stored)
{
	api_resp_t r;
	char m[600];
	post("{\"samples\": [{\"node\": \"a\", \"loss\": 0.5},"
	     " {\"node\": \"b\", \"region\": \"cn-gz\", \"isp\": \"ctcc\","
	     "  \"success\": 99, \"latency\": 20}]}", API_ROLE_OPERATE, &r);
	ck_assert_uint_eq(r.status, 200);
	ck_assert_int_eq(json_integer_value(json_object_get(r.body, "pushed")), 2);
	json_decref(r.body);
	metrics_of("a", m, sizeof(m));
	ck_assert_msg(strstr(m, "\"loss\":{\"from\":\"push\",\"time\":1800000000,"
	              "\"value\":0.5}"), "%s", m);
}
END_TEST

START_TEST(bad_sample_refuses_all)
{
	api_resp_t r;
	char m[600];
	post("{\"samples\": [{\"node\": \"a\", \"loss\": 0.5},"
	     " {\"node\": \"b\", \"region\": \"cn-bj\", \"success\": 99}]}",
	     API_ROLE_OPERATE, &r);
	ck_assert_uint_eq(r.status, 400);
	ck_assert_str_eq(field(&r), "samples[1].region");
	static const char want[] = "samples[1]: metrics push: node b is in no row "
	                           "for region cn-bj; push for one of its rows";
	ck_assert_msg(strncmp(error(&r), want, sizeof(want) - 1) == 0, "%s", error(&r));
	json_decref(r.body);
	metrics_of("a", m, sizeof(m));
	ck_assert_str_eq(m, "");   /* the first sample went with the batch */
}
END_TEST

START_TEST(roles)
{
	api_resp_t r;
	char m[600];
	const char *one = "{\"samples\": [{\"node\": \"a\", \"loss\": 0.5}]}";
	post(one, API_ROLE_READ, &r);
	ck_assert_uint_eq(r.status, 403);
	json_decref(r.body);
	metrics_of("a", m, sizeof(m));
	ck_assert_str_eq(m, "");
	post(one, API_ROLE_OPERATE, &r);
	ck_assert_uint_eq(r.status, 200);
	json_decref(r.body);
	metrics_of("a", m, sizeof(m));
	ck_assert_msg(strstr(m, "\"loss\""), "%s", m);
	post(one, API_ROLE_ADMIN, &r);
	ck_assert_uint_eq(r.status, 200);
	json_decref(r.body);
}
END_TEST

static Suite *api_metrics_suite(void)
{
	Suite *s = suite_create("api_metrics");
	TCase *t = tcase_create("route");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, batch_stored);
	tcase_add_test(t, bad_sample_refuses_all);
	tcase_add_test(t, roles);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(api_metrics_suite)
