/* SPDX-License-Identifier: MIT */
/* Cutover windows at their boundary times: phases (announced,
 * pre-derated, in-window, ramp, done) and their effect on a node: the
 * derating, the standby's pre-warm share, the short TTL and fast probing
 * (S0-2, S0-3, S0-4, S0-7, S0-11); and the times they are given in. */
#include "health/cutover.h"
#include "unit.h"

#include <string.h>

#define START 1796061600            /* 2026-12-01T02:00+08:00 */
#define END (START + 3 * 3600)      /* a three-hour window (S0-12) */
#define DERATE 60u                  /* not its own complement (100 - 60) */
#define PREWARM 40u

static cutover_conf_t conf(void)
{
	cutover_conf_t c;
	char err[256] = "";
	conf_t empty = { .path = "" };
	ynode_t root = { .kind = YNODE_MAP };
	empty.root = &root;
	memset(&c, 0, sizeof(c));
	ck_assert_msg(cutover_conf_load(&empty, &c, err, sizeof(err)) == 0, "%s", err);
	c.settle = 300;                 /* health.settle's default */
	return c;
}

/* One window over region r-a (all ISPs), as gslbctl stores it. */
static json_t *windows(void)
{
	return json_pack("[{s:s, s:s, s:s, s:I, s:I, s:i, s:i}]", "id", "c1",
	                 "region", "r-a", "isp", "*", "start", (json_int_t)START,
	                 "end", (json_int_t)END, "derate_pct", (int)DERATE,
	                 "prewarm_pct", (int)PREWARM);
}

/* The effect on an affected primary (@standby 0) or on a standby in an
 * affected row (@standby 1) at @now. */
static cutover_effect_t at(const cutover_conf_t *c, int standby, time_t now)
{
	json_t *w = windows();
	cutover_effect_t e;
	if (standby)
		cutover_effect(c, w, "sb", "r-b", "isp-x", 1, 1, now, &e);
	else
		cutover_effect(c, w, "a1", "r-a", "isp-x", 0, 0, now, &e);
	json_decref(w);
	return e;
}

START_TEST(defaults)
{
	cutover_conf_t c = conf();
	ck_assert_double_eq(c.notice, 86400);   /* S0-2: 24 h ahead */
	ck_assert_double_eq(c.prewarm_lead, 3600);
	ck_assert_double_eq(c.ramp, 600);
	ck_assert_uint_eq(c.impact[0], 70);     /* S0-3: 50-70 % */
	ck_assert_uint_eq(c.impact[1], 60);
	ck_assert_uint_eq(c.impact[2], 50);
	ck_assert_uint_eq(c.prewarm, 35);       /* S0-4: 30-40 % */
	ck_assert_double_eq(c.short_ttl_lead, 300);
	ck_assert_uint_eq(c.confirm_rounds, 2);  /* as S0-8 outside */
}
END_TEST

/* S0-2: a window announced more than the notice ahead changes nothing
 * yet; the notice period starts exactly at start - 24 h. */
START_TEST(s0_2_announced_until_the_notice)
{
	cutover_conf_t c = conf();
	cutover_effect_t e = at(&c, 0, START - 86400 - 1);
	ck_assert_int_eq(e.phase, CUT_ANNOUNCED);
	ck_assert_uint_eq(e.weight_pct, 100);
	ck_assert_uint_eq(e.short_until, 0);
	ck_assert_str_eq(e.window, "c1");
	ck_assert(!cutover_fast_probe(&e));
	e = at(&c, 1, START - 86400 - 1);
	ck_assert_uint_eq(e.prewarm_pct, 0);
	e = at(&c, 0, START - 86400);
	ck_assert_int_eq(e.phase, CUT_PREDERATED);
}
END_TEST

/* S0-3: from the notice to the end of the window the affected nodes run
 * at the window's derating level; no fast probing and no in-window rules
 * before the start, and no short TTL before start - short-ttl-lead. */
START_TEST(s0_3_prederated_from_the_notice)
{
	cutover_conf_t c = conf();
	static const time_t t[] = { START - 86400, START - 3600, START - 1 };
	for (unsigned i = 0; i < 3; i++) {
		cutover_effect_t e = at(&c, 0, t[i]);
		ck_assert_int_eq(e.phase, CUT_PREDERATED);
		ck_assert_uint_eq(e.weight_pct, DERATE);
		ck_assert_uint_eq(e.prewarm_pct, 0);
		ck_assert_uint_eq(e.short_until, t[i] < START - 300 ? 0 : END + 300);
		ck_assert(!cutover_fast_probe(&e));
		ck_assert(!e.in_window);
	}
}
END_TEST

/* S0-11: the affected nodes' rows carry the short TTL from
 * short-ttl-lead before the start, so that no resolver holds a long-TTL
 * answer naming an affected node when the window opens; a lead longer
 * than the notice starts it while the window is only announced; a lead
 * of 0 starts it with the window.  A standby of an affected row is not
 * affected itself: its own record keeps the long TTL. */
START_TEST(s0_11_short_ttl_before_the_start)
{
	cutover_conf_t c = conf();
	cutover_effect_t e = at(&c, 0, START - 301);
	ck_assert_uint_eq(e.short_until, 0);
	e = at(&c, 0, START - 300);
	ck_assert_uint_eq(e.short_until, END + 300);
	ck_assert_uint_eq(e.weight_pct, DERATE);
	e = at(&c, 1, START - 300);
	ck_assert_uint_eq(e.short_until, 0);
	c.short_ttl_lead = 2 * 86400;
	e = at(&c, 0, START - 86400 - 1);
	ck_assert_int_eq(e.phase, CUT_ANNOUNCED);
	ck_assert_uint_eq(e.short_until, END + 300);
	c.short_ttl_lead = 0;
	e = at(&c, 0, START - 1);
	ck_assert_uint_eq(e.short_until, 0);
	e = at(&c, 0, START);
	ck_assert_uint_eq(e.short_until, END + 300);
}
END_TEST

/* S0-8 in a window: an affected node inside its window is confirmed by
 * cutover.confirm-rounds; before the window, after it, and for a standby
 * of an affected row, health.demote-after holds. */
START_TEST(s0_8_confirmation_in_the_window)
{
	cutover_conf_t c = conf();
	c.confirm_rounds = 1;
	cutover_effect_t e = at(&c, 0, START);
	ck_assert(e.in_window);
	ck_assert_uint_eq(cutover_confirm_rounds(&c, &e, 3), 1);
	e = at(&c, 0, START - 1);
	ck_assert_uint_eq(cutover_confirm_rounds(&c, &e, 3), 3);
	e = at(&c, 0, END);
	ck_assert(!e.in_window);
	ck_assert_uint_eq(cutover_confirm_rounds(&c, &e, 3), 3);
	e = at(&c, 1, START);
	ck_assert_int_eq(e.phase, CUT_IN_WINDOW);
	ck_assert(!e.in_window);
	ck_assert_uint_eq(cutover_confirm_rounds(&c, &e, 3), 3);
	/* A node outside the area, whatever the time. */
	json_t *w = windows();
	cutover_effect(&c, w, "o1", "r-b", "isp-x", 0, 0, START, &e);
	json_decref(w);
	ck_assert(!e.in_window);
	ck_assert_uint_eq(cutover_confirm_rounds(&c, &e, 2), 2);
}
END_TEST

/* S0-7, S0-8 in a window: a degraded sample of an affected node calls
 * for an extra probe round at once while it is still in the answers, at
 * most confirm-rounds of them in a row; never outside the window. */
START_TEST(s0_7_extra_probe_in_the_window)
{
	cutover_conf_t c = conf();
	cutover_effect_t e = at(&c, 0, START + 10);
	ck_assert(cutover_extra_probe(&e, 0, 1, 0, 2));  /* one bad sample */
	ck_assert(cutover_extra_probe(&e, 0, 1, 1, 2));  /* one extra run */
	ck_assert(!cutover_extra_probe(&e, 0, 1, 2, 2)); /* bounded */
	ck_assert(!cutover_extra_probe(&e, 1, 1, 1, 2)); /* out already */
	ck_assert(!cutover_extra_probe(&e, 0, 0, 0, 2)); /* a good sample */
	e = at(&c, 0, START - 10);
	ck_assert(!cutover_extra_probe(&e, 0, 1, 0, 2));
	e = at(&c, 0, END + 10);
	ck_assert(!cutover_extra_probe(&e, 0, 1, 0, 2));
	e = at(&c, 1, START + 10);                       /* a standby */
	ck_assert(!cutover_extra_probe(&e, 0, 1, 0, 2));
}
END_TEST

/* S0-4: the standby's share is nothing until start - prewarm-lead, grows
 * in steps of 5 over the lead, and is the full pre-warm share in the
 * window; the standby itself is not derated. */
START_TEST(s0_4_prewarm_grows_before_the_start)
{
	cutover_conf_t c = conf();
	cutover_effect_t e = at(&c, 1, START - 86400);
	ck_assert_int_eq(e.phase, CUT_PREDERATED);
	ck_assert_uint_eq(e.prewarm_pct, 0);
	e = at(&c, 1, START - 3600);
	ck_assert_uint_eq(e.prewarm_pct, 0);
	e = at(&c, 1, START - 1800);            /* half way: 20 % */
	ck_assert_uint_eq(e.prewarm_pct, PREWARM / 2);
	e = at(&c, 1, START - 1);               /* 39.99 %, down to a step */
	ck_assert_uint_eq(e.prewarm_pct, 35);
	ck_assert_uint_eq(e.weight_pct, 100);
	e = at(&c, 1, START);
	ck_assert_int_eq(e.phase, CUT_IN_WINDOW);
	ck_assert_uint_eq(e.prewarm_pct, PREWARM);
	ck_assert_uint_eq(e.weight_pct, 100);
	/* A standby in no affected row and outside the area: untouched. */
	json_t *w = windows();
	cutover_effect(&c, w, "sb", "r-b", "isp-x", 1, 0, START, &e);
	json_decref(w);
	ck_assert_int_eq(e.phase, CUT_NONE);
	ck_assert_uint_eq(e.prewarm_pct, 0);
}
END_TEST

/* S0-3, S0-7, S0-11: in the window the derating holds, answers carry the
 * short TTL until settle after the end, and the node is probed fast. */
START_TEST(s0_3_in_window)
{
	cutover_conf_t c = conf();
	static const time_t t[] = { START, START + 3600, END - 1 };
	for (unsigned i = 0; i < 3; i++) {
		cutover_effect_t e = at(&c, 0, t[i]);
		ck_assert_int_eq(e.phase, CUT_IN_WINDOW);
		ck_assert_uint_eq(e.weight_pct, DERATE);
		ck_assert_uint_eq(e.short_until, END + 300);
		ck_assert(cutover_fast_probe(&e));
	}
}
END_TEST

/* S0-3: after the end the weights come back over the ramp in steps of 5;
 * the standby's share fades the same way; probing is normal again. */
START_TEST(s0_3_ramp_after_the_end)
{
	cutover_conf_t c = conf();
	static const struct { time_t t; unsigned w, pw; } steps[] = {
		{ END, 60, 40 },                /* the ramp starts at the level */
		{ END + 74, 60, 35 },           /* 64.9 % and 35.1 %: down to a step */
		{ END + 75, 65, 35 },
		{ END + 300, 80, 20 },
		{ END + 599, 95, 0 },
	};
	for (unsigned i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		cutover_effect_t e = at(&c, 0, steps[i].t);
		ck_assert_int_eq(e.phase, CUT_RAMP);
		ck_assert_msg(e.weight_pct == steps[i].w, "end+%ld: weight %u, want %u",
		              (long)(steps[i].t - END), e.weight_pct, steps[i].w);
		ck_assert_uint_eq(e.short_until, END + 300);
		ck_assert(!cutover_fast_probe(&e));
		e = at(&c, 1, steps[i].t);
		ck_assert_msg(e.prewarm_pct == steps[i].pw, "end+%ld: pre-warm %u, want %u",
		              (long)(steps[i].t - END), e.prewarm_pct, steps[i].pw);
	}
}
END_TEST

/* S0-11: at end + ramp the window is done: full weight, no pre-warm; the
 * short TTL lasts for the settle period when that outlasts the ramp. */
START_TEST(s0_11_done_and_settle)
{
	cutover_conf_t c = conf();
	cutover_effect_t e = at(&c, 0, END + 600);
	ck_assert_int_eq(e.phase, CUT_NONE);    /* a done window decides nothing */
	ck_assert_uint_eq(e.weight_pct, 100);
	ck_assert_uint_eq(e.short_until, 0);    /* settle 300 < ramp 600 */
	e = at(&c, 1, END + 600);
	ck_assert_uint_eq(e.prewarm_pct, 0);
	c.settle = 900;
	e = at(&c, 0, END + 600);
	ck_assert_uint_eq(e.weight_pct, 100);
	ck_assert_uint_eq(e.short_until, END + 900);
	e = at(&c, 0, END + 900);
	ck_assert_uint_eq(e.short_until, 0);
	json_t *w = windows();
	ck_assert_int_eq(cutover_window_phase(&c, json_array_get(w, 0), END + 600),
	                 CUT_DONE);
	json_decref(w);
}
END_TEST

/* S0-2: the phase of a window itself at each boundary. */
START_TEST(s0_2_window_phases_at_boundaries)
{
	cutover_conf_t c = conf();
	json_t *ws = windows(), *w = json_array_get(ws, 0);
	static const struct { time_t t; cutover_phase_t p; } b[] = {
		{ START - 86400 - 1, CUT_ANNOUNCED }, { START - 86400, CUT_PREDERATED },
		{ START - 1, CUT_PREDERATED }, { START, CUT_IN_WINDOW },
		{ END - 1, CUT_IN_WINDOW }, { END, CUT_RAMP },
		{ END + 599, CUT_RAMP }, { END + 600, CUT_DONE },
	};
	for (unsigned i = 0; i < sizeof(b) / sizeof(b[0]); i++)
		ck_assert_msg(cutover_window_phase(&c, w, b[i].t) == b[i].p,
		              "at %ld: %s", (long)(b[i].t - START),
		              cutover_phase_name(cutover_window_phase(&c, w, b[i].t)));
	ck_assert_str_eq(cutover_phase_name(CUT_PREDERATED), "pre-derated");
	json_decref(ws);
}
END_TEST

/* S0-2: the affected area is a region (one ISP or all), or a node set. */
START_TEST(s0_2_affected_area)
{
	json_t *w = json_pack("{s:s, s:s}", "region", "r-a", "isp", "isp-x");
	ck_assert(cutover_affects(w, "a1", "r-a", "isp-x"));
	ck_assert(!cutover_affects(w, "a2", "r-a", "isp-y"));
	ck_assert(!cutover_affects(w, "b1", "r-b", "isp-x"));
	json_object_set_new(w, "isp", json_string("*"));
	ck_assert(cutover_affects(w, "a2", "r-a", "isp-y"));
	json_object_del(w, "isp");
	ck_assert(cutover_affects(w, "a2", "r-a", "isp-y"));
	json_object_set_new(w, "nodes", json_pack("[s]", "b1"));
	ck_assert(cutover_affects(w, "b1", "r-b", "isp-x"));
	ck_assert(!cutover_affects(w, "a1", "r-a", "isp-x"));
	json_decref(w);
}
END_TEST

/* S0-3: two windows on one node: the lower weight, the most advanced
 * phase and the later short-TTL deadline count. */
START_TEST(s0_3_overlapping_windows)
{
	cutover_conf_t c = conf();
	json_t *w = windows();
	json_array_append_new(w, json_pack("{s:s, s:s, s:I, s:I, s:i, s:i}",
		"id", "c2", "region", "r-a", "start", (json_int_t)(START - 600),
		"end", (json_int_t)(START + 600), "derate_pct", 70, "prewarm_pct", 30));
	cutover_effect_t e;
	cutover_effect(&c, w, "a1", "r-a", "isp-x", 0, 0, START - 60, &e);
	ck_assert_int_eq(e.phase, CUT_IN_WINDOW);
	ck_assert_str_eq(e.window, "c2");
	ck_assert_uint_eq(e.weight_pct, DERATE);
	/* c1 is within its short-TTL lead: the later short TTL counts. */
	ck_assert_uint_eq(e.short_until, END + 300);
	c.short_ttl_lead = 0;
	cutover_effect(&c, w, "a1", "r-a", "isp-x", 0, 0, START - 60, &e);
	ck_assert_uint_eq(e.short_until, START + 600 + 300);
	json_decref(w);
}
END_TEST

/* S0-2: times are RFC 3339 with an offset; seconds are optional. */
START_TEST(s0_2_times_with_an_offset)
{
	static const struct { const char *s; time_t t; } ok[] = {
		{ "2026-12-01T02:00+08:00", START },
		{ "2026-12-01T02:00:00+08:00", START },
		{ "2026-12-01T02:00:30+08:00", START + 30 },
		{ "2026-11-30T18:00Z", START },
		{ "2026-11-30T18:00:00z", START },
		{ "2026-11-30T12:30-05:30", START },
	};
	for (unsigned i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		time_t t = 0;
		ck_assert_msg(cutover_parse_time(ok[i].s, &t) == 0, "%s refused", ok[i].s);
		ck_assert_msg(t == ok[i].t, "%s: %ld", ok[i].s, (long)t);
	}
	static const char *const bad[] = {
		"2026-12-01T02:00",             /* no offset: no guessing */
		"2026-12-01T02:00+0800",
		"2026-12-01T02:00+08",
		"2026-12-01T02:00 +08:00",
		"2026-12-01T02:00:5Z",
		"2026-12-01T02:00+08:00x",
		"2026-12-01 02:00Z",
		"tomorrow",
		"",
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		time_t t = 0;
		ck_assert_msg(cutover_parse_time(bad[i], &t) == -1, "%s accepted", bad[i]);
	}
}
END_TEST

static Suite *cutover_suite(void)
{
	Suite *s = suite_create("cutover");
	TCase *t = tcase_create("core");
	tcase_add_test(t, defaults);
	tcase_add_test(t, s0_2_announced_until_the_notice);
	tcase_add_test(t, s0_3_prederated_from_the_notice);
	tcase_add_test(t, s0_11_short_ttl_before_the_start);
	tcase_add_test(t, s0_8_confirmation_in_the_window);
	tcase_add_test(t, s0_7_extra_probe_in_the_window);
	tcase_add_test(t, s0_4_prewarm_grows_before_the_start);
	tcase_add_test(t, s0_3_in_window);
	tcase_add_test(t, s0_3_ramp_after_the_end);
	tcase_add_test(t, s0_11_done_and_settle);
	tcase_add_test(t, s0_2_window_phases_at_boundaries);
	tcase_add_test(t, s0_2_affected_area);
	tcase_add_test(t, s0_3_overlapping_windows);
	tcase_add_test(t, s0_2_times_with_an_offset);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(cutover_suite)
