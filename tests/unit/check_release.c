/* SPDX-License-Identifier: MIT */
/* Gray releases (S4-10): the decision of one evaluation (guards, widening,
 * completion, rollback, pause), every guard with its figure absent,
 * stale and present, the parsers of steps, durations and guards, and the
 * record's checks; pure but for the observer of the guards' figures,
 * which reads a store made for the test. */
#include "steer/release.h"
#include "steer/release_run.h"
#include "unit.h"
#include "store_fixture.h"

#include <string.h>

#define NOW 1700000000u

/* A running release at step @step of 1,5,25,50,100 % every 600 s, begun
 * @ago seconds before NOW, with guards success>=99 and score>=80. */
static release_t rel(unsigned step, uint32_t ago)
{
	release_t r;
	char err[200];
	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(release_parse_steps("1,5,25,50,100", r.steps, &r.nsteps, err,
	                                     sizeof(err)), 0);
	r.state = RELEASE_RUNNING;
	r.step = step;
	r.every = 600;
	r.since = NOW - ago;
	ck_assert_int_eq(release_parse_guard("success>=99", &r.guard[0], err, sizeof(err)), 0);
	ck_assert_int_eq(release_parse_guard("score>=80", &r.guard[1], err, sizeof(err)), 0);
	r.nguards = 2;
	return r;
}

static const release_obs_t good[2] = { { .has = 1, .value = 99.5, .early = 0 }, { .has = 1, .value = 90, .early = 0 } };

START_TEST(widens_after_every_with_guards_held)
{
	release_t r = rel(0, 599);
	int broken;
	ck_assert_int_eq(release_step(&r, good, NOW, &broken), RELEASE_KEEP);
	r.since = NOW - 600;
	ck_assert_int_eq(release_step(&r, good, NOW, &broken), RELEASE_WIDEN);
	ck_assert_int_eq(broken, -1);
	/* From 50 % the next step is 100 %: the release completes. */
	r.step = 3;
	ck_assert_int_eq(release_step(&r, good, NOW, &broken), RELEASE_COMPLETE);
	/* A guard exactly at its bound holds. */
	release_obs_t edge[2] = { { .has = 1, .value = 99, .early = 0 }, { .has = 1, .value = 80, .early = 0 } };
	ck_assert_int_eq(release_step(&r, edge, NOW, &broken), RELEASE_COMPLETE);
}
END_TEST

START_TEST(waits_without_input)
{
	release_t r = rel(1, 700);
	release_obs_t none[2] = { { .has = 1, .value = 99.9, .early = 0 }, { .has = 0, .value = 0, .early = 0 } };
	int broken;
	ck_assert_int_eq(release_step(&r, none, NOW, &broken), RELEASE_WAIT);
	/* Before the step is due, missing input is nothing to report. */
	r.since = NOW - 10;
	ck_assert_int_eq(release_step(&r, none, NOW, &broken), RELEASE_KEEP);
	/* No guards at all: time alone widens. */
	r.nguards = 0;
	r.since = NOW - 600;
	ck_assert_int_eq(release_step(&r, NULL, NOW, &broken), RELEASE_WIDEN);
}
END_TEST

START_TEST(rolls_back_at_once)
{
	release_t r = rel(2, 5);
	release_obs_t bad[2] = { { .has = 1, .value = 98.9, .early = 0 }, { .has = 1, .value = 90, .early = 0 } };
	int broken;
	ck_assert_int_eq(release_step(&r, bad, NOW, &broken), RELEASE_ROLLBACK);
	ck_assert_int_eq(broken, 0);
	bad[0].value = 99.9;
	bad[1].value = 79;
	ck_assert_int_eq(release_step(&r, bad, NOW, &broken), RELEASE_ROLLBACK);
	ck_assert_int_eq(broken, 1);
	/* A figure of the second the step began (it may predate the step)
	 * breaks a guard at once after a widening, paused or not, but never
	 * holds one, and in the first step (it may be from before the
	 * start) breaks none. */
	release_obs_t early[2] = { { .has = 0, .value = 97, .early = 1 }, { .has = 1, .value = 90, .early = 0 } };
	ck_assert_int_eq(release_step(&r, early, NOW, &broken), RELEASE_ROLLBACK);
	ck_assert_int_eq(broken, 0);
	r.state = RELEASE_PAUSED;
	ck_assert_int_eq(release_step(&r, early, NOW, &broken), RELEASE_ROLLBACK);
	r.state = RELEASE_RUNNING;
	r.step = 0;
	ck_assert_int_eq(release_step(&r, early, NOW, &broken), RELEASE_KEEP);
	r.step = 2;
	early[0].value = 99.9;
	r.since = NOW - 600;
	ck_assert_int_eq(release_step(&r, early, NOW, &broken), RELEASE_WAIT);
	r.since = NOW - 5;
	/* A latency guard is kept from above. */
	char err[200];
	ck_assert_int_eq(release_parse_guard("latency<=150", &r.guard[0], err, sizeof(err)), 0);
	release_obs_t lat[2] = { { .has = 1, .value = 151, .early = 0 }, { .has = 1, .value = 90, .early = 0 } };
	ck_assert_int_eq(release_step(&r, lat, NOW, &broken), RELEASE_ROLLBACK);
	lat[0].value = 150;
	ck_assert_int_eq(release_step(&r, lat, NOW, &broken), RELEASE_KEEP);
}
END_TEST

START_TEST(pause_and_ended)
{
	release_t r = rel(0, 10000);
	r.state = RELEASE_PAUSED;
	int broken;
	/* Paused: never widens, but a broken guard still rolls back. */
	ck_assert_int_eq(release_step(&r, good, NOW, &broken), RELEASE_KEEP);
	release_obs_t bad[2] = { { .has = 1, .value = 50, .early = 0 }, { .has = 1, .value = 90, .early = 0 } };
	ck_assert_int_eq(release_step(&r, bad, NOW, &broken), RELEASE_ROLLBACK);
	/* Ended releases do nothing. */
	for (int s = RELEASE_ROLLED_BACK; s <= RELEASE_COMPLETED; s++) {
		r.state = (release_state_t)s;
		ck_assert_int_eq(release_step(&r, bad, NOW, &broken), RELEASE_KEEP);
	}
	/* The last step below 100 % holds there. */
	char err[200];
	ck_assert_int_eq(release_parse_steps("1,10", r.steps, &r.nsteps, err, sizeof(err)), 0);
	r.state = RELEASE_RUNNING;
	r.step = 1;
	ck_assert_int_eq(release_step(&r, good, NOW, &broken), RELEASE_KEEP);
	/* A clock that went back does not widen. */
	r.step = 0;
	r.since = NOW + 100;
	ck_assert_int_eq(release_step(&r, good, NOW, &broken), RELEASE_KEEP);
}
END_TEST

START_TEST(parse_steps)
{
	uint32_t st[RELEASE_MAX_STEPS];
	unsigned n;
	char err[200];
	ck_assert_int_eq(release_parse_steps("0.5,1,5,25,50,100", st, &n, err, sizeof(err)), 0);
	ck_assert_uint_eq(n, 6);
	ck_assert_uint_eq(st[0], 50);
	ck_assert_uint_eq(st[5], 10000);
	static const char *const bad[] = { "", "0,5", "5,5", "5,1", "1,101", "100",
		"1,,5", "1,5,", "abc", "1.234", "-1,5", NULL };
	for (const char *const *b = bad; *b; b++)
		ck_assert_msg(release_parse_steps(*b, st, &n, err, sizeof(err)) == -1,
		              "steps '%s' accepted", *b);
	ck_assert_int_eq(release_parse_steps("5,1", st, &n, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "increase"));
}
END_TEST

START_TEST(parse_every_and_guards)
{
	uint32_t s;
	char err[200];
	ck_assert_int_eq(release_parse_every("10m", &s, err, sizeof(err)), 0);
	ck_assert_uint_eq(s, 600);
	ck_assert_int_eq(release_parse_every("2", &s, err, sizeof(err)), 0);
	ck_assert_uint_eq(s, 2);
	ck_assert_int_eq(release_parse_every("1h", &s, err, sizeof(err)), 0);
	ck_assert_uint_eq(s, 3600);
	static const char *const bad_every[] = { "", "0", "0s", "10x", "m", "31d",
		"-5", "99999999999999999999", NULL };
	for (const char *const *b = bad_every; *b; b++)
		ck_assert_msg(release_parse_every(*b, &s, err, sizeof(err)) == -1,
		              "every '%s' accepted", *b);
	release_guard_t g;
	char txt[64];
	ck_assert_int_eq(release_parse_guard("success>=99.5", &g, err, sizeof(err)), 0);
	ck_assert_str_eq(release_guard_text(&g, txt, sizeof(txt)), "success>=99.5");
	static const char *const bad_guard[] = { "score>80", "score<=80", "latency>=5",
		"success>=101", "success>=", "cpu>=5", "score>=x", "", NULL };
	for (const char *const *b = bad_guard; *b; b++)
		ck_assert_msg(release_parse_guard(*b, &g, err, sizeof(err)) == -1,
		              "guard '%s' accepted", *b);
}
END_TEST

START_TEST(record_checks)
{
	json_error_t je;
	json_t *j = json_loads("{\"node\": \"n\", \"steps\": [1, 5, 100], \"every\": 60,"
		"\"guards\": [\"score>=80\"], \"state\": \"running\", \"step\": 1,"
		"\"percent\": 5, \"since\": 1700000000}", 0, &je);
	release_t r;
	char err[200];
	ck_assert_int_eq(release_from_json(j, &r, err, sizeof(err)), 0);
	ck_assert_uint_eq(r.nsteps, 3);
	ck_assert_uint_eq(r.step, 1);
	ck_assert_uint_eq(r.nguards, 1);
	static const char *const breaks[][2] = {
		{ "state", "\"gone\"" }, { "steps", "[5, 1]" }, { "every", "0" },
		{ "step", "3" }, { "guards", "[\"cpu>=1\"]" }, { "percent", "101" },
		{ "node", "5" }, { "since", "-1" }, { "region", "1" },
	};
	for (size_t i = 0; i < sizeof(breaks) / sizeof(breaks[0]); i++) {
		json_t *c = json_deep_copy(j);
		json_object_set_new(c, breaks[i][0], json_loads(breaks[i][1],
		                    JSON_DECODE_ANY, &je));
		ck_assert_msg(release_from_json(c, &r, err, sizeof(err)) == -1,
		              "%s=%s accepted", breaks[i][0], breaks[i][1]);
		json_decref(c);
	}
	json_decref(j);
	ck_assert_int_eq(release_state_of("rolled-back"), RELEASE_ROLLED_BACK);
	ck_assert_int_eq(release_state_of("x"), -1);
}
END_TEST


/* S4-10, S2-7: each guard, its figure absent (the node has none at
 * all), stale (none over the step) and present.  Absent and stale are
 * never read: they neither hold nor break the guard, the due step waits,
 * and their text names what is missing, never a number. */
START_TEST(guards_absent_stale_present)
{
	static const char *const guards[] = { "score>=80", "success>=99", "latency<=200" };
	static const double holds[] = { 90, 99.5, 150 }, breaks[] = { 70, 90, 900 };
	for (unsigned g = 0; g < 3; g++) {
		release_t r = rel(1, 700);
		char err[200], text[300];
		ck_assert_int_eq(release_parse_guard(guards[g], &r.guard[0], err,
		                                     sizeof(err)), 0);
		r.nguards = 1;
		int broken;
		/* Absent: a value left in the struct is never read. */
		release_obs_t o = { .value = 6.90679e-310, .why = "no probe" };
		ck_assert_int_eq(release_step(&r, &o, NOW, &broken), RELEASE_WAIT);
		ck_assert_int_eq(broken, -1);
		release_obs_text(&r.guard[0], &o, text, sizeof(text));
		ck_assert_msg(strstr(text, ": none (no probe)") && !strstr(text, "e-310"),
		              "%s: %s", guards[g], text);
		r.since = NOW - 5;
		ck_assert_int_eq(release_step(&r, &o, NOW, &broken), RELEASE_KEEP);
		/* Stale: the node had one, none since the step began. */
		r.since = NOW - 700;
		o.value = breaks[g];
		o.stale = 1;
		o.why = "none since the step began";
		ck_assert_int_eq(release_step(&r, &o, NOW, &broken), RELEASE_WAIT);
		release_obs_text(&r.guard[0], &o, text, sizeof(text));
		ck_assert_msg(strstr(text, ": stale (none since") != NULL, "%s", text);
		/* Present: read, holds or breaks. */
		release_obs_t p = { .has = 1, .value = holds[g] };
		ck_assert_int_eq(release_step(&r, &p, NOW, &broken), RELEASE_WIDEN);
		p.value = breaks[g];
		ck_assert_int_eq(release_step(&r, &p, NOW, &broken), RELEASE_ROLLBACK);
		ck_assert_int_eq(broken, 0);
		release_obs_text(&r.guard[0], &p, text, sizeof(text));
		char want[64];
		snprintf(want, sizeof(want), " %g", breaks[g]);
		ck_assert_msg(strstr(text, want) != NULL, "%s", text);
	}
}
END_TEST

/* A store with node n (no probe) in rows of service s, and status and
 * pushed samples as each case writes them. */
static const char *const fixture =
	"{\"services\": [{\"name\": \"s.test\"}],"
	" \"nodes\": [{\"id\": \"n\", \"addrs\": [\"192.0.2.1\"]}],"
	" \"weights\": [{\"service\": \"s.test\", \"region\": \"*\", \"isp\": \"*\","
	"               \"weights\": {\"n\": 1}}]}";

/* Writes (@kind, @key, @json) into @db. */
static void put(weightdb_t *db, wdb_kind_t kind, const char *key, const char *json)
{
	char err[300];
	wdb_txn_t *t = wdb_begin(db, "test", err, sizeof(err));
	ck_assert_msg(t != NULL, "%s", err);
	json_t *v = json ? json_loads(json, 0, NULL) : NULL;
	ck_assert(!json || v);
	ck_assert_int_eq(wdb_set(t, kind, key, v), 0);
	json_decref(v);
	ck_assert_msg(wdb_commit(t, "test", err, sizeof(err)) >= 0, "%s", err);
}

/* The observations of guards score>=80, success>=99, latency<=200 of a
 * release of n whose step began at @since, in @db at NOW. */
static void observe(weightdb_t *db, uint32_t since, release_obs_t *obs)
{
	steer_conf_t c;
	steer_conf_default(&c);
	release_t r = rel(1, NOW - since);
	char err[200];
	static const char *const g[3] = { "score>=80", "success>=99", "latency<=200" };
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(release_parse_guard(g[i], &r.guard[i], err, sizeof(err)), 0);
	r.nguards = 3;
	json_t *recj = json_pack("{s:s}", "node", "n");
	memset(obs, 0xff, sizeof(*obs) * 3);
	wdb_txn_t *t = wdb_begin_read(db);
	ck_assert(t != NULL);
	release_observe(t, &c, recj, &r, NOW, obs);
	wdb_abort(t);
	json_decref(recj);
}

/* The observer reads what exists and marks the rest: no status, an
 * unmonitored node, a stale score; no push, pushes from before the step
 * only, pushes over it; and a sample dated far ahead (stored before
 * pushes were checked) is no figure of now. */
START_TEST(observe_figures)
{
	char dir[PATH_MAX];
	ck_assert_int_eq(fx_mkdtemp(dir, "release"), 0);
	weightdb_t *db = fx_store(dir, fixture);
	ck_assert(db != NULL);
	release_obs_t o[3];
	observe(db, NOW - 100, o);
	for (int i = 0; i < 3; i++)
		ck_assert_msg(!o[i].has && !o[i].early && !o[i].stale && o[i].why, "guard %d", i);
	ck_assert_str_eq(o[0].why, "gslbd has not evaluated the node yet");
	ck_assert(strstr(o[1].why, "no success pushed for the node") != NULL);

	put(db, WDB_STATUS, "n", "{\"state\": \"up\", \"score\": 0, \"unmonitored\": true}");
	observe(db, NOW - 100, o);
	ck_assert(!o[0].has && !o[0].stale);
	ck_assert_str_eq(o[0].why, "the node has no probe and no pushed health metric");
	put(db, WDB_STATUS, "n", "{\"state\": \"up\", \"score\": 85, \"stale\": true}");
	observe(db, NOW - 100, o);
	ck_assert(!o[0].has && o[0].stale);
	put(db, WDB_STATUS, "n", "{\"state\": \"up\", \"score\": 85}");
	observe(db, NOW - 100, o);
	ck_assert(o[0].has && o[0].value == 85);

	/* Pushed before the step began (within the windows): stale. */
	char rec[300];
	snprintf(rec, sizeof(rec), "{\"samples\": [[%u, 99.9, 20]]}", NOW - 200);
	put(db, WDB_STEERIN, "n|n|*|*", rec);
	observe(db, NOW - 100, o);
	ck_assert_msg(!o[1].has && o[1].stale && !o[2].has && o[2].stale, "%d %d %d %d %d %d %s", o[1].has, o[1].early, o[1].stale, o[2].has, o[2].early, o[2].stale, o[1].why);
	ck_assert_str_eq(o[1].why, "no success pushed since the step began");
	/* Over the step, and one of 2037 after it: the real one is read. */
	snprintf(rec, sizeof(rec), "{\"samples\": [[%u, 99.9, 20], [%u, 50, 900], "
	         "[2145916800, 99.9, 20]]}", NOW - 200, NOW - 10);
	put(db, WDB_STEERIN, "n|n|*|*", rec);
	observe(db, NOW - 100, o);
	ck_assert(o[1].has && o[1].value == 50 && o[2].has && o[2].value == 900);
	/* The 2037 sample alone is no figure. */
	put(db, WDB_STEERIN, "n|n|*|*", "{\"samples\": [[2145916800, 99.9, 20]]}");
	observe(db, NOW - 100, o);
	ck_assert(!o[1].has && !o[1].early && !o[1].stale);
	weightdb_close(db);
	fx_rmrf(dir);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("release");
	TCase *t = tcase_create("core");
	tcase_add_test(t, widens_after_every_with_guards_held);
	tcase_add_test(t, waits_without_input);
	tcase_add_test(t, rolls_back_at_once);
	tcase_add_test(t, pause_and_ended);
	tcase_add_test(t, parse_steps);
	tcase_add_test(t, parse_every_and_guards);
	tcase_add_test(t, record_checks);
	tcase_add_test(t, guards_absent_stale_present);
	tcase_add_test(t, observe_figures);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(suite)
