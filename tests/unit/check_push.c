/* SPDX-License-Identifier: MIT */
/* Pushed measurements against a real store: a push for a region and
 * ISP is kept only when a row of its node reads it (S3-2, S3-9). */
#include "common/util.h"
#include "health/push.h"
#include "store/weightdb.h"
#include "store_fixture.h"
#include "unit.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

static char g_dir[PATH_MAX];
static weightdb_t *g_db;

/* Node a is in rows (cn-bj, ctcc) of s1 and (cn-gd, *) of s2, node c
 * in s1's (*, *) only, node b in no row; a's provider pays per GB. */
static const char table[] =
	"{\"services\": [{\"name\": \"s1.test\", \"ttl\": 60},"
	"                {\"name\": \"s2.test\", \"ttl\": 60}],"
	" \"nodes\": [{\"id\": \"a\", \"addrs\": [\"192.0.2.1\"],"
	"              \"provider\": \"cdn-a\", \"cost_per_gb\": 0.5},"
	"             {\"id\": \"b\", \"addrs\": [\"192.0.2.2\"]},"
	"             {\"id\": \"c\", \"addrs\": [\"192.0.2.3\"]}],"
	" \"weights\": [{\"service\": \"s1.test\", \"region\": \"cn-bj\","
	"                \"isp\": \"ctcc\", \"weights\": {\"a\": 10}},"
	"              {\"service\": \"s2.test\", \"region\": \"cn-gd\","
	"                \"isp\": \"*\", \"weights\": {\"a\": 10}},"
	"              {\"service\": \"s1.test\", \"region\": \"*\","
	"                \"isp\": \"*\", \"weights\": {\"c\": 10}}]}";

static void setup(void)
{
	ck_assert_int_eq(fx_mkdtemp(g_dir, "push"), 0);
	g_db = fx_store(g_dir, table);
	ck_assert_ptr_nonnull(g_db);
}

static void teardown(void)
{
	weightdb_close(g_db);
	g_db = NULL;
	ck_assert_int_eq(fx_rmrf(g_dir), 0);
}

/* One push of the words of @line (as one line of --file) into @t at
 * @now; its result, with the error in @err. */
static int push(wdb_txn_t *t, const char *line, uint32_t now, char *err,
                size_t errlen)
{
	char buf[512], *argv[PUSH_MAX_WORDS + 1], *save = NULL, msg[400];
	int argc = 0;
	snprintf(buf, sizeof(buf), "%s", line);
	argv[argc++] = "push";
	for (char *w = strtok_r(buf, " ", &save); w && argc <= PUSH_MAX_WORDS;
	     w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	err[0] = 0;
	return push_apply(t, argc, argv, now, 900, msg, sizeof(msg), err, errlen);
}

static int count_one(const char *key, json_t *val, void *arg)
{
	(*(unsigned *)arg)++;
	return 0;
}

/* The steering input and spend records whose key starts with @prefix,
 * in @t. */
static unsigned count_in(wdb_txn_t *t, const char *prefix)
{
	unsigned n = 0;
	wdb_each(t, WDB_STEERIN, prefix, count_one, &n);
	return n;
}

/* A push for a region and ISP that none of the node's rows reads is
 * refused, naming the rows it could be for; one that a row reads (the
 * row's own pair, or its region or ISP alone) and a push for the node as
 * a whole are kept. */
START_TEST(push_needs_a_row)
{
	char err[1200];
	wdb_txn_t *t = wdb_begin(g_db, "test:unit", err, sizeof(err));
	ck_assert_ptr_nonnull(t);
	const char *good[] = {
		"a --region cn-bj --isp ctcc success=99",
		"a --region cn-bj success=99",
		"a --isp ctcc latency=20",
		"a --region cn-gd latency=20",
		"a success=99.5",
		"b success=99.5",
		"c latency=30",
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(push(t, good[i], 1700000000u, err, sizeof(err)) == 0,
		              "%s refused: %s", good[i], err);
	unsigned kept = count_in(t, "n|");
	ck_assert_uint_eq(kept, 7);   /* a: 5 pairs; b and c: (*, *) */

	/* (cn-gd, cmcc): the row (cn-gd, *) reads (cn-gd, *) and (*, *),
	 * never (cn-gd, cmcc). */
	ck_assert_int_eq(push(t, "a --region cn-gd --isp cmcc success=99", 1700000000u,
	                      err, sizeof(err)), GSLB_EINVAL);
	ck_assert_msg(strstr(err, "node a") && strstr(err, "region cn-gd, ISP cmcc"),
	              "%s", err);
	ck_assert_msg(strstr(err, "--region cn-bj --isp ctcc") &&
	              strstr(err, "--region cn-gd") && strstr(err, "as a whole"), "%s", err);
	ck_assert_int_eq(push(t, "a --region made-up-17 --isp ctcc success=99 latency=20",
	                      1700000000u, err, sizeof(err)), GSLB_EINVAL);
	ck_assert_msg(strstr(err, "region made-up-17"), "%s", err);
	ck_assert_int_eq(push(t, "a --isp cmcc latency=20", 1700000000u, err,
	                      sizeof(err)), GSLB_EINVAL);
	ck_assert_msg(strstr(err, "ISP cmcc"), "%s", err);
	/* No row at all, or only the row of every client. */
	ck_assert_int_eq(push(t, "b --region cn-bj success=99", 1700000000u, err,
	                      sizeof(err)), GSLB_EINVAL);
	ck_assert_msg(strstr(err, "node b") && strstr(err, "as a whole"), "%s", err);
	ck_assert_int_eq(push(t, "c --region cn-bj --isp ctcc success=99", 1700000000u,
	                      err, sizeof(err)), GSLB_EINVAL);
	ck_assert_msg(strstr(err, "node c") && strstr(err, "as a whole"), "%s", err);
	/* The refused pushes wrote nothing. */
	ck_assert_uint_eq(count_in(t, "n|"), kept);
	wdb_abort(t);
}
END_TEST

static Suite *push_suite(void)
{
	Suite *s = suite_create("push");
	TCase *t = tcase_create("store");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, push_needs_a_row);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(push_suite)
