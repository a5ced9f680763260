/* SPDX-License-Identifier: MIT */
/* Pushed measurements against a real store: a push for a region and
 * ISP is kept only when a row of its node reads it (S3-2, S3-9), and
 * the store's trim keeps the pushed inputs and the spend records of
 * budget periods (S3-6) bounded however long pushes go on. */
#include "common/util.h"
#include "health/push.h"
#include "health/source.h"
#include "steer/steer_rec.h"
#include "steer/steer_run.h"
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
	return push_apply(t, argc, argv, now, 900, 60, msg, sizeof(msg), err, errlen);
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

/* One round of pushes at @now: the inputs of node a for its rows, and
 * (while @gd) for cn-gd; bytes of cdn-a (daily budget); spend of cdn-b
 * (monthly, no budget).  Committed. */
static void round_at(uint32_t now, int gd)
{
	char err[1200];
	wdb_txn_t *t = wdb_begin(g_db, "test:unit", err, sizeof(err));
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(push(t, "a --region cn-bj --isp ctcc success=99 latency=20 "
	                      "bytes=2000000000", now, err, sizeof(err)), 0);
	if (gd)
		ck_assert_int_eq(push(t, "a --region cn-gd latency=30", now, err,
		                      sizeof(err)), 0);
	ck_assert_int_eq(push(t, "--provider cdn-b spent=7", now, err, sizeof(err)), 0);
	ck_assert_int_ge(wdb_commit(t, "metrics", err, sizeof(err)), 0);
}

static unsigned count_now(const char *prefix)
{
	wdb_txn_t *t = wdb_begin_read(g_db);
	unsigned n = count_in(t, prefix);
	wdb_abort(t);
	return n;
}

/* Compressed time: 400 days of pushes, one round a day, each followed by
 * the trim the daemon makes, with inputs kept 2 days after their last
 * push and spend 30 days after the end of its period.  The store stays
 * flat: one input record per pushed row (cn-gd's goes once it is no
 * longer pushed), 31 daily and at most 3 monthly spend records (a
 * February and the months around it), while
 * the spend of the current period stays whole (S3-6). */
START_TEST(trim_keeps_inputs_flat)
{
	char err[512];
	weightdb_set_nosync(g_db);
	wdb_txn_t *t = wdb_begin(g_db, "test:unit", err, sizeof(err));
	json_t *b = json_pack("{s:f, s:s, s:f}", "limit", 100.0, "period", "day",
	                      "alert", 80.0);
	ck_assert_int_eq(wdb_set(t, WDB_BUDGET, "cdn-a", b), 0);
	json_decref(b);
	ck_assert_int_gt(wdb_commit(t, "budget", err, sizeof(err)), 0);

	const uint32_t day0 = 1700006400u;          /* 2023-11-15 00:00 UTC */
	unsigned most_spend = 0, most_inputs = 0, spend_late = 0;
	for (uint32_t d = 0; d < 400; d++) {
		uint32_t now = day0 + d * 86400 + 43200;
		round_at(now, d < 30);
		wdb_trim_t w = { .inputs_before = now - 2 * 86400,
		                 .spend_before = now - 30 * 86400, .now = now };
		ck_assert_int_ge(weightdb_trim(g_db, &w, 20000), 0);
		unsigned sp = count_now("p|"), in = count_now("n|");
		if (sp > most_spend)
			most_spend = sp;
		if (in > most_inputs)
			most_inputs = in;
		if (d == 100)
			spend_late = sp;
	}
	ck_assert_uint_le(most_spend, 31 + 3);
	ck_assert_uint_le(most_inputs, 2);
	ck_assert_uint_eq(count_now("n|"), 1);      /* cn-gd's went */
	ck_assert_uint_le(count_now("p|cdn-a|"), 31);
	ck_assert_uint_le(count_now("p|cdn-b|"), 3);
	ck_assert_uint_le(count_now("p|"), spend_late + 1);
	/* Today's spend of cdn-a is whole: one push of 2 GB at 0.5. */
	t = wdb_begin_read(g_db);
	double spent = 0;
	steer_budget_read(t, "cdn-a", day0 + 399 * 86400 + 43200, &spent, NULL);
	wdb_abort(t);
	ck_assert_msg(spent > 0.99 && spent < 1.01, "today's spend %g", spent);
}
END_TEST

/* A record written before records carried their retention time gets
 * one at the first trim and goes a retention later; a trim of at most N
 * changes no more than N. */
START_TEST(trim_stamps_old_records)
{
	char err[512];
	wdb_txn_t *t = wdb_begin(g_db, "test:unit", err, sizeof(err));
	json_t *old = json_pack("{s:f}", "pushed", 5.0);
	char key[40];
	for (int m = 1; m <= 5; m++) {
		snprintf(key, sizeof(key), "p|cdn-z|2020-%02d", m);
		ck_assert_int_eq(wdb_set(t, WDB_STEERIN, key, old), 0);
	}
	json_decref(old);
	ck_assert_int_ge(wdb_commit(t, "old", err, sizeof(err)), 0);
	const uint32_t now = 1700000000u;
	wdb_trim_t w = { .spend_before = now - 86400, .now = now };
	ck_assert_int_eq(weightdb_trim(g_db, &w, 3), 3);
	ck_assert_int_eq(weightdb_trim(g_db, &w, 3), 2);
	ck_assert_int_eq(weightdb_trim(g_db, &w, 3), 0);
	ck_assert_uint_eq(count_now("p|"), 5);      /* stamped, kept */
	w.spend_before = now + 1;
	ck_assert_int_eq(weightdb_trim(g_db, &w, 100), 5);
	ck_assert_uint_eq(count_now("p|"), 0);
}
END_TEST

/* --from names the feeder: kept with the steering inputs and with each
 * health metric, "push" without it; steer_input_from() finds the most
 * specific record of a row; a name with a space or too long is refused. */
START_TEST(push_from)
{
	char err[1200], from[80];
	wdb_txn_t *t = wdb_begin(g_db, "test:unit", err, sizeof(err));
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(push(t, "a --region cn-bj --isp ctcc success=99 --from prometheus:edge",
	                      1700000000u, err, sizeof(err)), 0);
	ck_assert_int_eq(push(t, "a latency=20", 1700000000u, err, sizeof(err)), 0);
	ck_assert_int_eq(steer_input_from(t, "a", "cn-bj", "ctcc", from, sizeof(from)), 1);
	ck_assert_str_eq(from, "prometheus:edge");
	/* A row of another region reads only a's (*, *) record: gslbctl's. */
	ck_assert_int_eq(steer_input_from(t, "a", "cn-gd", "cmcc", from, sizeof(from)), 1);
	ck_assert_str_eq(from, "push");
	ck_assert_int_eq(steer_input_from(t, "b", "cn-bj", "ctcc", from, sizeof(from)), 0);
	/* The same record pushed again without --from. */
	ck_assert_int_eq(push(t, "a --region cn-bj --isp ctcc success=98", 1700000000u, err,
	                      sizeof(err)), 0);
	steer_input_from(t, "a", "cn-bj", "ctcc", from, sizeof(from));
	ck_assert_str_eq(from, "push");
	/* Health metrics, either side of the metric. */
	ck_assert_int_eq(push(t, "b cpu=40 --from feeder-1 bandwidth=30", 1700000000u, err,
	                      sizeof(err)), 0);
	json_t *m = wdb_get(t, WDB_METRICS, "b");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(m, "cpu"), "from")),
	                 "feeder-1");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(m, "bandwidth"),
	                                                   "from")), "feeder-1");
	json_decref(m);
	ck_assert_int_eq(push(t, "b cpu=41", 1700000000u, err, sizeof(err)), 0);
	m = wdb_get(t, WDB_METRICS, "b");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(m, "cpu"), "from")),
	                 "push");
	json_decref(m);
	char longname[200];
	snprintf(longname, sizeof(longname), "a success=99 --from %0100d", 7);
	ck_assert_int_eq(push(t, longname, 1700000000u, err, sizeof(err)), GSLB_EINVAL);
	ck_assert_msg(strstr(err, "--from"), "%s", err);
	ck_assert_int_eq(push(t, "b cpu=40 --from", 1700000000u, err, sizeof(err)), GSLB_EINVAL);
	wdb_abort(t);
}
END_TEST

/* push_apply_word() names the word of a refused push: the node, an
 * option's value, a KEY=VALUE, or 0 for the push as a whole; the HTTP
 * API names the sample's field from it. */
static int word_of(wdb_txn_t *t, const char *line, char *err, size_t errlen)
{
	char buf[512], *argv[PUSH_MAX_WORDS + 1], *save = NULL, msg[400];
	int argc = 0, word = -1;
	snprintf(buf, sizeof(buf), "%s", line);
	argv[argc++] = "push";
	for (char *w = strtok_r(buf, " ", &save); w && argc <= PUSH_MAX_WORDS;
	     w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	ck_assert_int_eq(push_apply_word(t, argc, argv, 1700000000u, 900, 60, msg,
	                                 sizeof(msg), err, errlen, &word), GSLB_EINVAL);
	return word;
}

START_TEST(push_word_at_fault)
{
	char err[1200];
	wdb_txn_t *t = wdb_begin(g_db, "test:unit", err, sizeof(err));
	ck_assert_ptr_nonnull(t);
	ck_assert_int_eq(word_of(t, "ghost loss=1", err, sizeof(err)), 1);
	ck_assert_int_eq(word_of(t, "ghost success=1", err, sizeof(err)), 1);
	ck_assert_int_eq(word_of(t, "a loss=1 nope=2", err, sizeof(err)), 3);
	ck_assert_int_eq(word_of(t, "a loss=-5", err, sizeof(err)), 2);
	ck_assert_int_eq(word_of(t, "a --isp ctcc --region cn-xx success=9", err,
	                         sizeof(err)), 5);
	ck_assert_int_eq(word_of(t, "a --region BAD success=9", err, sizeof(err)), 3);
	ck_assert_int_eq(word_of(t, "a success=9 latency=-1", err, sizeof(err)), 3);
	ck_assert_int_eq(word_of(t, "a success=9 --at 1000", err, sizeof(err)), 4);
	ck_assert_int_eq(word_of(t, "b bytes=100", err, sizeof(err)), 2);
	ck_assert_int_eq(word_of(t, "a --region cn-bj --isp ctcc", err, sizeof(err)), 0);
	ck_assert_int_eq(word_of(t, "--provider cdn-a spent=x", err, sizeof(err)), 3);
	ck_assert_int_eq(word_of(t, "--provider BAD spent=1", err, sizeof(err)), 2);
	ck_assert_int_eq(word_of(t, "a loss=1 --from", err, sizeof(err)), 3);
	wdb_abort(t);
}
END_TEST

/* A pull source's answers into push lines: the steering inputs of one
 * node, region and ISP in one line, a health metric in a line of its
 * own, a sample without the node label or without a number counted as
 * unusable, a missing label as "*", and an answer that is no instant
 * vector (a matrix, an error) not counted as read. */
START_TEST(source_answers)
{
	source_def_t d = { .name = "edge", .nq = 5, .node_label = "node",
	                   .region_label = "region", .isp_label = "isp" };
	static const char *const in[] = { "success", "latency", "cpu", "bytes", "success" };
	for (unsigned i = 0; i < d.nq; i++)
		snprintf(d.q[i].input, sizeof(d.q[i].input), "%s", in[i]);
	const char *bodies[] = {
		"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
		"{\"metric\":{\"node\":\"a\",\"region\":\"cn-bj\",\"isp\":\"ctcc\"},"
		"\"value\":[1700000000.1,\"99.5\"]},"
		"{\"metric\":{\"node\":\"a\"},\"value\":[1700000000.1,\"97\"]},"
		"{\"metric\":{\"region\":\"cn-bj\"},\"value\":[1700000000.1,\"90\"]},"
		"{\"metric\":{\"node\":\"b\"},\"value\":[1700000000.1,\"NaN\"]}]}}",
		"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
		"{\"metric\":{\"node\":\"a\",\"region\":\"cn-bj\",\"isp\":\"ctcc\"},"
		"\"value\":[1700000000.1,\"25\"]}]}}",
		"{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":["
		"{\"metric\":{\"node\":\"a\",\"region\":\"cn-bj\"},"
		"\"value\":[1700000000.1,\"42\"]}]}}",
		"{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":[]}}",
		NULL,
	};
	json_t *lines = json_array();
	unsigned unusable = 0;
	char why[200] = "";
	ck_assert_uint_eq(source_lines(&d, bodies, lines, &unusable, why, sizeof(why)), 3);
	ck_assert_uint_eq(unusable, 2);
	ck_assert_msg(strstr(why, "without the node label"), "%s", why);
	char *text = json_dumps(lines, JSON_COMPACT);
	ck_assert_str_eq(text,
		"[[\"a\",\"--region\",\"cn-bj\",\"--isp\",\"ctcc\",\"success=99.5\","
		"\"latency=25\"],[\"a\",\"--region\",\"*\",\"--isp\",\"*\",\"success=97\"],"
		"[\"a\",\"cpu=42\"]]");
	free(text);
	json_decref(lines);
}
END_TEST

static Suite *push_suite(void)
{
	Suite *s = suite_create("push");
	TCase *t = tcase_create("store");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, push_needs_a_row);
	tcase_add_test(t, trim_keeps_inputs_flat);
	tcase_add_test(t, trim_stamps_old_records);
	tcase_add_test(t, push_from);
	tcase_add_test(t, push_word_at_fault);
	tcase_add_test(t, source_answers);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(push_suite)
