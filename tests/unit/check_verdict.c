/* SPDX-License-Identifier: MIT */
/* The verdict, round by round: confirmations, hard failures, hysteresis,
 * flap damping, multi-dimension faults, the gray switch, stale inputs and
 * passive faults (S0-8, S4-4, S4-5, S4-7, S1-4, S1-10, S2-7, S1-2). */
#include "health/verdict.h"
#include "unit.h"

#include <string.h>

#define T0 1000000u

/* The defaults of gslbd.conf(5), read the way the daemon reads them. */
static health_conf_t conf(void)
{
	health_conf_t c;
	char err[256] = "";
	conf_t empty = { .path = "" };
	ynode_t root = { .kind = YNODE_MAP };
	empty.root = &root;
	ck_assert_msg(health_conf_load(&empty, &c, err, sizeof(err)) == 0, "%s", err);
	return c;
}

static score_result_t res(double score, uint8_t abnormal)
{
	score_result_t r;
	memset(&r, 0, sizeof(r));
	r.score = score;
	r.abnormal = abnormal;
	r.n_abnormal = (uint8_t)(!!(abnormal & SCORE_AB_STATUS) +
	                         !!(abnormal & SCORE_AB_CONNECT) +
	                         !!(abnormal & SCORE_AB_LATENCY));
	for (int i = 0; i < 4; i++)
		r.dim[i] = score / 100;
	return r;
}

/* A round at @now: the window scores @window, the newest sample @last
 * with the @abnormal dimensions; one probe that connected. */
static verdict_round_t rnd(uint32_t now, double window, double last,
                           uint8_t abnormal)
{
	verdict_round_t r;
	memset(&r, 0, sizeof(r));
	r.now = now;
	r.window = res(window, 0);
	r.last = res(last, abnormal);
	r.rest = res(last, 0);
	r.nwin = SCORE_WINDOW;
	r.nprobe = 1;
	return r;
}

/* Runs @r on @n and carries the state over, as the thread does. */
static verdict_t step(const health_conf_t *c, verdict_node_t *n,
                      const verdict_round_t *r)
{
	verdict_t d;
	verdict_round(c, n, r, &d);
	*n = d.next;
	return d;
}

static verdict_node_t node_in(verdict_state_t s)
{
	verdict_node_t n;
	memset(&n, 0, sizeof(n));
	n.state = s;
	n.since = n.moved_at = T0 - 3600;
	return n;
}

/* S0-8: two consecutive degraded rounds demote a node; the first alone
 * moves nothing. */
START_TEST(s0_8_two_degraded_rounds_demote)
{
	health_conf_t c = conf();
	verdict_node_t n = node_in(VERDICT_UP);
	verdict_round_t r = rnd(T0, 50, 50, 0);
	verdict_t d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_KEEP);
	ck_assert_int_eq(n.state, VERDICT_UP);
	ck_assert_uint_eq(n.degraded, 1);
	ck_assert_uint_eq(n.moved_at, T0 - 3600);
	ck_assert_int_eq(d.standby, VERDICT_STANDBY_NONE);
	r = rnd(T0 + 10, 45, 45, 0);
	d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_LOW_SCORE);
	ck_assert_int_eq(n.state, VERDICT_DEMOTED);
	ck_assert_uint_eq(d.rounds, 2);
	ck_assert_double_eq(d.score, 45);
	ck_assert_uint_eq(n.since, T0 + 10);
	ck_assert_uint_eq(n.moved_at, T0 + 10);
	ck_assert_int_eq(d.standby, VERDICT_STANDBY_PROMOTE);
}
END_TEST

/* S0-8 in a cutover window: the round's confirmation count (cutover.
 * confirm-rounds for an affected node inside its window) replaces
 * demote-after, for demotion and for derating; a round that passes none
 * (outside every window) keeps S0-8: one degraded round moves nothing,
 * even under a configuration whose in-window rule is one round. */
START_TEST(s0_8_confirmation_given_by_the_round)
{
	health_conf_t c = conf();
	c.cut.confirm_rounds = 1;
	verdict_node_t n = node_in(VERDICT_UP);
	verdict_round_t r = rnd(T0, 50, 50, 0);
	verdict_t d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_KEEP);
	ck_assert_int_eq(n.state, VERDICT_UP);
	n = node_in(VERDICT_UP);
	r.confirm = 1;
	d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_LOW_SCORE);
	ck_assert_int_eq(n.state, VERDICT_DEMOTED);
	ck_assert_uint_eq(d.rounds, 1);
	/* Derating (60..80) follows the same count. */
	n = node_in(VERDICT_UP);
	r = rnd(T0, 70, 70, 0);
	r.confirm = 1;
	d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_DERATE);
	/* A larger count waits for more rounds. */
	n = node_in(VERDICT_UP);
	for (unsigned i = 0; i < 2; i++) {
		r = rnd(T0 + i, 50, 50, 0);
		r.confirm = 3;
		d = step(&c, &n, &r);
		ck_assert_int_eq(n.state, VERDICT_UP);
	}
	r = rnd(T0 + 2, 50, 50, 0);
	r.confirm = 3;
	d = step(&c, &n, &r);
	ck_assert_int_eq(n.state, VERDICT_DEMOTED);
}
END_TEST

/* S0-8: a single bad probe never moves traffic: one degraded round
 * followed by a good one leaves the node up, its count reset. */
START_TEST(s0_8_one_bad_probe_moves_nothing)
{
	health_conf_t c = conf();
	verdict_node_t n = node_in(VERDICT_UP);
	for (int i = 0; i < 5; i++) {
		verdict_round_t bad = rnd(T0 + 20 * i, 55, 0, SCORE_AB_CONNECT);
		verdict_round_t good = rnd(T0 + 20 * i + 10, 90, 90, 0);
		verdict_t d = step(&c, &n, &bad);
		ck_assert_int_eq(d.reason, VERDICT_KEEP);
		ck_assert_uint_eq(d.weight_pct, 100);
		d = step(&c, &n, &good);
		ck_assert_int_eq(d.reason, VERDICT_KEEP);
		ck_assert_int_eq(d.gray, VERDICT_GRAY_SAME);
		ck_assert_int_eq(n.state, VERDICT_UP);
		ck_assert_uint_eq(n.degraded, 0);
	}
	ck_assert_uint_eq(n.moved_at, T0 - 3600);
}
END_TEST

/* S0-8: three consecutive good rounds restore a demoted node; a bad round
 * between them starts the count again. */
START_TEST(s0_8_three_good_rounds_restore)
{
	health_conf_t c = conf();
	verdict_node_t n = node_in(VERDICT_DEMOTED);
	n.degraded = 7;
	/* The window still holds the outage: its score does not matter. */
	verdict_round_t r = rnd(T0, 20, 90, 0);
	ck_assert_int_eq(step(&c, &n, &r).reason, VERDICT_KEEP);
	r = rnd(T0 + 10, 20, 90, 0);
	ck_assert_int_eq(step(&c, &n, &r).reason, VERDICT_KEEP);
	ck_assert_uint_eq(n.good, 2);
	r = rnd(T0 + 20, 20, 40, 0);          /* a bad round: start again */
	ck_assert_int_eq(step(&c, &n, &r).reason, VERDICT_KEEP);
	ck_assert_uint_eq(n.good, 0);
	ck_assert_uint_eq(verdict_restore_keep(&n, SCORE_WINDOW), 1);
	for (unsigned i = 1; i <= 2; i++) {
		r = rnd(T0 + 20 + 10 * i, 20, 90, 0);
		ck_assert_int_eq(step(&c, &n, &r).reason, VERDICT_KEEP);
		ck_assert_int_eq(n.state, VERDICT_DEMOTED);
	}
	ck_assert_uint_eq(verdict_restore_keep(&n, SCORE_WINDOW), 3);
	r = rnd(T0 + 50, 20, 90, 0);
	verdict_t d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_RESTORED);
	ck_assert_int_eq(n.state, VERDICT_UP);
	ck_assert_uint_eq(d.rounds, 3);
	ck_assert_uint_eq(d.keep, 3);          /* the outage leaves the window */
	ck_assert_uint_eq(n.degraded, 0);      /* spent while it was out */
	ck_assert_uint_eq(n.restored_at, T0 + 50);
	ck_assert_uint_eq(n.moved_at, T0 + 50);
	ck_assert_int_eq(d.standby, VERDICT_STANDBY_RELEASE);
	ck_assert_uint_eq(d.weight_pct, 100);
}
END_TEST

/* S0-8: the restored state follows the good rounds alone (rest): usable
 * but not good comes back derated; a round with an abnormal dimension is
 * not a good round. */
START_TEST(s0_8_restore_to_derated)
{
	health_conf_t c = conf();
	verdict_node_t n = node_in(VERDICT_DEMOTED);
	verdict_round_t r = rnd(T0, 30, 70, SCORE_AB_LATENCY);
	step(&c, &n, &r);
	ck_assert_uint_eq(n.good, 0);
	verdict_t d;
	for (unsigned i = 0; i < 3; i++) {
		r = rnd(T0 + 10 + 10 * i, 30, 70, 0);
		r.rest = res(70, 0);
		r.nwin = 2;                    /* fewer samples than good rounds */
		d = step(&c, &n, &r);
	}
	ck_assert_int_eq(d.reason, VERDICT_RESTORED);
	ck_assert_int_eq(n.state, VERDICT_DERATED);
	ck_assert_uint_eq(d.keep, 2);
	ck_assert_uint_eq(d.weight_pct, 50);
}
END_TEST

/* S4-4: a hard failure (every probe fails to connect) is out at once;
 * some probes failing is not a hard failure, and probes without a result
 * do not count as failing. */
START_TEST(s4_4_hard_failure_out_at_once)
{
	health_conf_t c = conf();
	verdict_node_t n = node_in(VERDICT_UP);
	verdict_round_t r = rnd(T0, 85, 0, SCORE_AB_CONNECT);
	r.nprobe = 3;
	r.refused = 2;
	verdict_t d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_KEEP);
	ck_assert_int_eq(n.state, VERDICT_UP);
	r.nprobe = 0, r.refused = 0;            /* no probe: nothing to judge */
	ck_assert_int_eq(step(&c, &n, &r).reason, VERDICT_KEEP);
	r = rnd(T0 + 1, 85, 0, SCORE_AB_CONNECT);
	r.nprobe = 3;
	r.refused = 3;
	d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_HARD_FAILURE);
	ck_assert_int_eq(n.state, VERDICT_DEMOTED);
	ck_assert_uint_eq(n.since, T0 + 1);
	ck_assert_int_eq(d.standby, VERDICT_STANDBY_PROMOTE);
	/* Still failing: counted, no second change. */
	d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_KEEP);
	ck_assert_uint_eq(n.good, 0);
}
END_TEST

/* S4-5: between up and derated a score must cross the good boundary by
 * VERDICT_GRADE_MARGIN points, for demote-after rounds to derate and
 * restore-after rounds to come back. */
START_TEST(s4_5_hysteresis_between_up_and_derated)
{
	health_conf_t c = conf();
	verdict_node_t n = node_in(VERDICT_UP);
	verdict_round_t r;
	for (unsigned i = 0; i < 10; i++) {     /* 75.5: inside the margin */
		r = rnd(T0 + i, 80 - VERDICT_GRADE_MARGIN + 0.5, 80, 0);
		ck_assert_int_eq(step(&c, &n, &r).reason, VERDICT_KEEP);
		ck_assert_uint_eq(n.grade_rounds, 0);
	}
	r = rnd(T0 + 20, 74, 74, 0);
	ck_assert_int_eq(step(&c, &n, &r).reason, VERDICT_KEEP);
	ck_assert_uint_eq(n.grade_rounds, 1);
	verdict_t d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_DERATE);
	ck_assert_int_eq(n.state, VERDICT_DERATED);
	ck_assert_uint_eq(d.rounds, 2);
	ck_assert_uint_eq(d.weight_pct, 50);
	ck_assert_uint_eq(n.moved_at, T0 + 20);
	/* Derated: 84.5 is not enough to come back, 85 is, three times. */
	for (unsigned i = 0; i < 10; i++) {
		r = rnd(T0 + 30 + i, 80 + VERDICT_GRADE_MARGIN - 0.5, 90, 0);
		ck_assert_int_eq(step(&c, &n, &r).reason, VERDICT_KEEP);
	}
	r = rnd(T0 + 50, 85, 85, 0);
	ck_assert_int_eq(step(&c, &n, &r).reason, VERDICT_KEEP);
	ck_assert_int_eq(step(&c, &n, &r).reason, VERDICT_KEEP);
	d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_UNDERATE);
	ck_assert_int_eq(n.state, VERDICT_UP);
	ck_assert_uint_eq(d.rounds, 3);
	ck_assert_uint_eq(d.weight_pct, 100);
}
END_TEST

/* S4-5: a new node takes its first grade at once, without the margin;
 * its first "up" moves no traffic. */
START_TEST(s4_5_first_grade_at_once)
{
	health_conf_t c = conf();
	verdict_node_t n;
	memset(&n, 0, sizeof(n));
	verdict_round_t r = rnd(T0, 80, 80, 0);
	verdict_t d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_FIRST_UP);
	ck_assert_uint_eq(n.since, T0);
	ck_assert_uint_eq(n.moved_at, 0);
	memset(&n, 0, sizeof(n));
	r = rnd(T0, 79.9, 80, 0);
	d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_FIRST_DERATED);
	ck_assert_int_eq(n.state, VERDICT_DERATED);
	ck_assert_uint_eq(n.moved_at, T0);
	/* The boundaries are the configured grades. */
	c.score.good = 90;
	memset(&n, 0, sizeof(n));
	r = rnd(T0, 85, 85, 0);
	ck_assert_int_eq(step(&c, &n, &r).reason, VERDICT_FIRST_DERATED);
}
END_TEST

/* Demotes @n at @now with a hard failure: one probe refused, and
 * refused again by the immediate retry (S4-4 with S0-8). */
static void hard_out(const health_conf_t *c, verdict_node_t *n, uint32_t now)
{
	verdict_round_t r = rnd(now, 0, 0, SCORE_AB_CONNECT);
	r.refused = 1;
	verdict_t d = step(c, n, &r);
	if (n->state != VERDICT_DEMOTED) {
		ck_assert_int_eq(d.reason, VERDICT_KEEP);
		ck_assert_int_eq(d.retry, 1);
		d = step(c, n, &r);
	}
	ck_assert_int_eq(d.reason, VERDICT_HARD_FAILURE);
}

/* Good rounds from @now, 10 s apart, until @n is restored; returns how
 * many it took. */
static unsigned rounds_to_restore(const health_conf_t *c, verdict_node_t *n,
                                  uint32_t now)
{
	for (unsigned i = 1; i <= 100; i++) {
		verdict_round_t r = rnd(now + 10 * i, 30, 90, 0);
		if (step(c, n, &r).reason == VERDICT_RESTORED)
			return i;
	}
	return 0;
}

/* S4-7: a node demoted again within flap-window of its restore needs
 * twice the confirmations per flap, up to VERDICT_FLAPS_MAX doublings;
 * a demotion after a quiet flap-window starts over. */
START_TEST(s4_7_flap_damping)
{
	health_conf_t c = conf();
	verdict_node_t n = node_in(VERDICT_UP);
	uint32_t t = T0;
	hard_out(&c, &n, t);
	ck_assert_uint_eq(n.flaps, 0);
	ck_assert_uint_eq(rounds_to_restore(&c, &n, t), 3);
	unsigned need = 3;
	for (unsigned f = 1; f <= VERDICT_FLAPS_MAX + 2; f++) {
		t = n.restored_at + (uint32_t)c.flap_window - 1;
		hard_out(&c, &n, t);
		unsigned flaps = f < VERDICT_FLAPS_MAX ? f : VERDICT_FLAPS_MAX;
		ck_assert_uint_eq(n.flaps, flaps);
		need = 3u << flaps;
		ck_assert_uint_eq(rounds_to_restore(&c, &n, t), need);
	}
	ck_assert_uint_eq(need, 48);
	/* Quiet for a whole flap-window: the count starts again. */
	t = n.restored_at + (uint32_t)c.flap_window;
	hard_out(&c, &n, t);
	ck_assert_uint_eq(n.flaps, 0);
	ck_assert_uint_eq(rounds_to_restore(&c, &n, t), 3);
	/* flap-window 0 turns the damping off. */
	c.flap_window = 0;
	hard_out(&c, &n, n.restored_at + 1);
	ck_assert_uint_eq(n.flaps, 0);
}
END_TEST

/* S1-4: one abnormal dimension alone is not a fault; two at once are,
 * even with a good score, and demote after demote-after rounds. */
START_TEST(s1_4_two_abnormal_dimensions_fault)
{
	health_conf_t c = conf();
	verdict_node_t n = node_in(VERDICT_UP);
	verdict_round_t r = rnd(T0, 90, 90, SCORE_AB_LATENCY);
	ck_assert_int_eq(step(&c, &n, &r).reason, VERDICT_KEEP);
	ck_assert_uint_eq(n.degraded, 0);
	r = rnd(T0 + 10, 90, 60, SCORE_AB_STATUS | SCORE_AB_LATENCY);
	ck_assert_int_eq(step(&c, &n, &r).reason, VERDICT_KEEP);
	ck_assert_uint_eq(n.degraded, 1);
	r.now += 10;
	verdict_t d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_FAULT);
	ck_assert_int_eq(n.state, VERDICT_DEMOTED);
	ck_assert_uint_eq(d.abnormal, SCORE_AB_STATUS | SCORE_AB_LATENCY);
	ck_assert_uint_eq(d.rounds, 2);
}
END_TEST

/* S1-10: one abnormal dimension for two rounds is low confidence: a gray
 * switch moves gray-share of the weight away; recovered, it is
 * cancelled; */
START_TEST(s1_10_gray_switch_and_cancel)
{
	health_conf_t c = conf();
	verdict_node_t n = node_in(VERDICT_UP);
	verdict_round_t r = rnd(T0, 90, 90, SCORE_AB_LATENCY);
	verdict_t d = step(&c, &n, &r);
	ck_assert_int_eq(d.gray, VERDICT_GRAY_SAME);
	ck_assert_uint_eq(n.lowconf, 1);
	r.now = T0 + 10;
	d = step(&c, &n, &r);
	ck_assert_int_eq(d.gray, VERDICT_GRAY_ON);
	ck_assert_int_eq(d.reason, VERDICT_KEEP);
	ck_assert_int_eq(n.gray, 1);
	ck_assert_uint_eq(n.gray_since, T0 + 10);
	ck_assert_uint_eq(n.moved_at, T0 + 10);
	ck_assert_uint_eq(d.weight_pct, 90);
	r.now = T0 + 20;
	ck_assert_int_eq(step(&c, &n, &r).gray, VERDICT_GRAY_SAME);
	r = rnd(T0 + 30, 90, 90, 0);
	d = step(&c, &n, &r);
	ck_assert_int_eq(d.gray, VERDICT_GRAY_OFF);
	ck_assert_int_eq(n.gray, 0);
	ck_assert_uint_eq(n.moved_at, T0 + 30);
	ck_assert_uint_eq(d.weight_pct, 100);
	ck_assert_int_eq(n.state, VERDICT_UP);
}
END_TEST

/* S1-10: ... still abnormal after gray-watch seconds, with a healthy
 * alternate, the share moves on and at last the node is out (the steps
 * themselves: s1_10_gray_switch_moves_gradually). */
START_TEST(s1_10_gray_switch_persists)
{
	health_conf_t c = conf();
	verdict_node_t n = node_in(VERDICT_UP);
	verdict_round_t r = rnd(T0, 90, 90, SCORE_AB_STATUS);
	r.alt_ok = 1;
	step(&c, &n, &r);
	r.now = T0 + 10;
	ck_assert_int_eq(step(&c, &n, &r).gray, VERDICT_GRAY_ON);
	r.now = T0 + 10 + (uint32_t)c.gray_watch - 1;
	ck_assert_int_eq(step(&c, &n, &r).reason, VERDICT_KEEP);
	ck_assert_uint_eq(n.gray_pct, 10);
	r.now++;
	verdict_t d;
	for (int i = 0; i < 10 && n.state != VERDICT_DEMOTED; i++, r.now += (uint32_t)c.gray_step)
		d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_GRAY_PERSISTED);
	ck_assert_int_eq(n.state, VERDICT_DEMOTED);
	ck_assert_int_eq(n.gray, 0);
	ck_assert_int_eq(d.standby, VERDICT_STANDBY_PROMOTE);
}
END_TEST

/* S4-4 with S0-8: a single refused connection (or connect timeout) of
 * a one-probe node moves nothing; it asks for an immediate second probe,
 * and a second refusal is the hard failure, out at once.  A second probe
 * that connects ends it.  hard-failure-confirm off: out at the first. */
START_TEST(s4_4_s0_8_hard_failure_confirmed)
{
	health_conf_t c = conf();
	verdict_node_t n = node_in(VERDICT_UP);
	verdict_round_t r = rnd(T0, 85, 0, SCORE_AB_CONNECT);
	r.refused = 1;
	verdict_t d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_KEEP);
	ck_assert_int_eq(d.retry, 1);
	ck_assert_int_eq(n.state, VERDICT_UP);
	ck_assert_uint_eq(d.weight_pct, 100);
	/* The retry connects: one lost SYN never moved traffic. */
	verdict_round_t g = rnd(T0 + 1, 85, 90, 0);
	d = step(&c, &n, &g);
	ck_assert_int_eq(d.reason, VERDICT_KEEP);
	ck_assert_int_eq(d.retry, 0);
	ck_assert_uint_eq(n.refused, 0);
	/* Refused, then refused again by the retry: out at once. */
	r.now = T0 + 10;
	ck_assert_int_eq(step(&c, &n, &r).retry, 1);
	r.now = T0 + 10;
	d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_HARD_FAILURE);
	ck_assert_int_eq(n.state, VERDICT_DEMOTED);
	ck_assert_int_eq(d.standby, VERDICT_STANDBY_PROMOTE);
	/* Two probe paths refusing confirm each other: no retry needed. */
	n = node_in(VERDICT_UP);
	r.nprobe = r.refused = 2;
	d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_HARD_FAILURE);
	ck_assert_int_eq(d.retry, 0);
	/* Without confirmation (hard-failure-confirm: off): at the first. */
	c.hard_confirm = 0;
	n = node_in(VERDICT_UP);
	r.nprobe = r.refused = 1;
	ck_assert_int_eq(step(&c, &n, &r).reason, VERDICT_HARD_FAILURE);
}
END_TEST

/* S1-10: past the watch, with a healthy alternate and the node not
 * recovered, the moved share grows gradually, doubling every gray-step
 * seconds (10, 20, 40, 80 %), and at 100 % the node is out. */
START_TEST(s1_10_gray_switch_moves_gradually)
{
	health_conf_t c = conf();
	verdict_node_t n = node_in(VERDICT_UP);
	verdict_round_t r = rnd(T0, 90, 90, SCORE_AB_LATENCY);
	r.alt_ok = 1;
	step(&c, &n, &r);
	r.now = T0 + 2;
	verdict_t d = step(&c, &n, &r);
	ck_assert_int_eq(d.gray, VERDICT_GRAY_ON);
	ck_assert_uint_eq(d.weight_pct, 90);
	uint32_t t = T0 + 2 + (uint32_t)c.gray_watch;
	static const unsigned moved[] = { 20, 40, 80 };
	for (int i = 0; i < 3; i++) {
		r.now = t + (uint32_t)(i * c.gray_step);
		d = step(&c, &n, &r);
		ck_assert_int_eq(d.gray, VERDICT_GRAY_STEP);
		ck_assert_int_eq(d.reason, VERDICT_KEEP);
		ck_assert_uint_eq(n.gray_pct, moved[i]);
		ck_assert_uint_eq(d.weight_pct, 100 - moved[i]);
		ck_assert_uint_eq(n.moved_at, r.now);
		/* No step before gray-step seconds have passed. */
		r.now += (uint32_t)c.gray_step - 1;
		d = step(&c, &n, &r);
		ck_assert_int_eq(d.gray, VERDICT_GRAY_SAME);
		ck_assert_uint_eq(n.gray_pct, moved[i]);
	}
	r.now = t + 3 * (uint32_t)c.gray_step;
	d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_GRAY_PERSISTED);
	ck_assert_int_eq(n.state, VERDICT_DEMOTED);
	ck_assert_int_eq(n.gray, 0);
	ck_assert_int_eq(d.standby, VERDICT_STANDBY_PROMOTE);
	ck_assert_uint_eq(verdict_gray_next(0), 10);
	ck_assert_uint_eq(verdict_gray_next(80), 100);
}
END_TEST

/* S1-10: "only if the alternate is fine": with no healthy alternate the
 * switch holds at its share, past the watch, and never demotes; once an
 * alternate is up the step comes at once. */
START_TEST(s1_10_gray_switch_holds_without_alternate)
{
	health_conf_t c = conf();
	verdict_node_t n = node_in(VERDICT_UP);
	verdict_round_t r = rnd(T0, 90, 90, SCORE_AB_LATENCY);
	step(&c, &n, &r);
	r.now = T0 + 2;
	ck_assert_int_eq(step(&c, &n, &r).gray, VERDICT_GRAY_ON);
	r.now = T0 + 2 + (uint32_t)c.gray_watch;
	verdict_t d = step(&c, &n, &r);
	ck_assert_int_eq(d.gray, VERDICT_GRAY_HELD);
	ck_assert_int_eq(n.gray_held, 1);
	for (uint32_t k = 1; k < 60; k++) {
		r.now += 10;
		d = step(&c, &n, &r);
		ck_assert_int_eq(d.reason, VERDICT_KEEP);
		ck_assert_int_eq(d.gray, VERDICT_GRAY_SAME);    /* held once */
		ck_assert_uint_eq(d.weight_pct, 90);
	}
	r.alt_ok = 1;
	r.now += 1;
	d = step(&c, &n, &r);
	ck_assert_int_eq(d.gray, VERDICT_GRAY_STEP);
	ck_assert_uint_eq(n.gray_pct, 20);
	ck_assert_int_eq(n.gray_held, 0);
}
END_TEST

/* S1-10: "back to the original if it recovers": a recovered round in the
 * middle of the gradual move gives the node its whole share back. */
START_TEST(s1_10_gray_switch_back_on_recovery)
{
	health_conf_t c = conf();
	verdict_node_t n = node_in(VERDICT_UP);
	verdict_round_t r = rnd(T0, 90, 90, SCORE_AB_STATUS);
	r.alt_ok = 1;
	step(&c, &n, &r);
	r.now = T0 + 2;
	step(&c, &n, &r);
	r.now = T0 + 2 + (uint32_t)c.gray_watch;
	step(&c, &n, &r);
	r.now += (uint32_t)c.gray_step;
	step(&c, &n, &r);
	ck_assert_uint_eq(n.gray_pct, 40);
	verdict_round_t g = rnd(r.now + 2, 90, 90, 0);
	verdict_t d = step(&c, &n, &g);
	ck_assert_int_eq(d.gray, VERDICT_GRAY_OFF);
	ck_assert_uint_eq(d.weight_pct, 100);
	ck_assert_int_eq(n.state, VERDICT_UP);
	ck_assert_uint_eq(n.gray_pct, 0);
}
END_TEST

/* S1-9 is not followed as worded (docs/DESIGN-NOTES.md): below usable the
 * node is not held at 20 % for three cycles; S0-8 and S2-5 rule, so the
 * first degraded round moves nothing (weight unchanged) and the second
 * demotes.  An operator who wants S1-9's three cycles sets demote-after
 * to 3. */
START_TEST(s1_9_no_twenty_percent_tier)
{
	health_conf_t c = conf();
	verdict_node_t n = node_in(VERDICT_DERATED);
	verdict_round_t r = rnd(T0, 50, 50, 0);
	verdict_t d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_KEEP);
	ck_assert_uint_eq(d.weight_pct, 50);
	r.now += 2;
	d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_LOW_SCORE);
	ck_assert_int_eq(n.state, VERDICT_DEMOTED);
	c.demote_after = 3;
	n = node_in(VERDICT_UP);
	for (int i = 0; i < 2; i++) {
		r.now += 2;
		d = step(&c, &n, &r);
		ck_assert_int_eq(d.reason, VERDICT_KEEP);
		ck_assert_uint_eq(d.weight_pct, 100);
	}
	r.now += 2;
	ck_assert_int_eq(step(&c, &n, &r).reason, VERDICT_LOW_SCORE);
}
END_TEST

/* S0-7, S2-8: by default falling nodes and cutover windows are probed at
 * a fifth of the interval, never below 1 s nor above the interval. */
START_TEST(s0_7_fast_interval_default)
{
	health_conf_t c = conf();
	ck_assert_double_eq_tol(c.interval, 10, 1e-9);
	ck_assert_double_eq_tol(c.fast_interval, 2, 1e-9);
	ck_assert_int_eq(c.hard_confirm, 1);
	ck_assert_double_eq_tol(c.gray_step, 10, 1e-9);
}
END_TEST

/* Field by field: padding makes memcmp unreliable. */
static void same_node(const verdict_node_t *a, const verdict_node_t *b)
{
	ck_assert_int_eq(a->state, b->state);
	ck_assert_uint_eq(a->since, b->since);
	ck_assert_uint_eq(a->moved_at, b->moved_at);
	ck_assert_uint_eq(a->restored_at, b->restored_at);
	ck_assert_uint_eq(a->flaps, b->flaps);
	ck_assert_uint_eq(a->degraded, b->degraded);
	ck_assert_uint_eq(a->good, b->good);
	ck_assert_uint_eq(a->lowconf, b->lowconf);
	ck_assert_uint_eq(a->grade_rounds, b->grade_rounds);
	ck_assert_uint_eq(a->gray, b->gray);
	ck_assert_uint_eq(a->metrics_suspect, b->metrics_suspect);
	ck_assert_uint_eq(a->gray_since, b->gray_since);
	ck_assert_uint_eq(a->gray_pct, b->gray_pct);
	ck_assert_uint_eq(a->refused, b->refused);
}

/* S2-7: no fresh input at all moves no traffic under the default
 * health.stale (keep): a node with a verdict keeps its state and weight
 * and is marked stale, once; a node that never had one is left alone. */
START_TEST(s2_7_unknown_keeps_the_decision)
{
	health_conf_t c = conf();
	static const verdict_state_t states[] = {
		VERDICT_UNKNOWN, VERDICT_UP, VERDICT_DERATED, VERDICT_DEMOTED
	};
	for (unsigned i = 0; i < 4; i++) {
		verdict_node_t n = node_in(states[i]);
		n.degraded = 1, n.good = 1, n.lowconf = 1, n.grade_rounds = 1;
		n.metrics_suspect = 1;
		verdict_round_t r = rnd(T0, -1, -1, SCORE_AB_CONNECT | SCORE_AB_STATUS);
		r.window.unknown = 1;
		r.refused = 1;                 /* not even a hard failure */
		verdict_t d;
		verdict_round(&c, &n, &r, &d);
		ck_assert_int_eq(d.gray, VERDICT_GRAY_SAME);
		ck_assert_int_eq(d.standby, VERDICT_STANDBY_NONE);
		ck_assert_int_eq(d.next.state, n.state);
		ck_assert_uint_eq(d.weight_pct, verdict_weight_pct(&c, n.state, 0));
		if (states[i] == VERDICT_UNKNOWN) {
			/* unmonitored, or no result yet: nothing to keep */
			ck_assert_int_eq(d.reason, VERDICT_NO_DATA);
			same_node(&d.next, &n);
			ck_assert_int_eq(d.next.stale, 0);
			continue;
		}
		ck_assert_int_eq(d.reason, VERDICT_STALE);
		ck_assert_int_eq(d.next.stale, 1);
		ck_assert_str_eq(verdict_shown_state(&d.next), "stale");
		/* the confirmations counted before the gap are spent */
		ck_assert_uint_eq(d.next.degraded + d.next.good, 0);
		/* marked once: the next stale round changes nothing */
		verdict_node_t m = d.next;
		verdict_round(&c, &m, &r, &d);
		ck_assert_int_eq(d.reason, VERDICT_NO_DATA);
		same_node(&d.next, &m);
	}
}
END_TEST

/* S2-7: fresh inputs take the stale mark away (one audited change). */
START_TEST(s2_7_fresh_again)
{
	health_conf_t c = conf();
	verdict_node_t n = node_in(VERDICT_UP);
	n.stale = 1;
	verdict_round_t r = rnd(T0, 95, 95, 0);
	verdict_t d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_FRESH);
	ck_assert(verdict_changes_state(d.reason));
	ck_assert_int_eq(n.stale, 0);
	ck_assert_int_eq(n.state, VERDICT_UP);
	ck_assert_str_eq(verdict_shown_state(&n), "up");
}
END_TEST

/* S2-7 with health.stale: derate: neither full weight nor removal while
 * stale; the full weight comes back with fresh inputs. */
START_TEST(s2_7_stale_derate)
{
	health_conf_t c = conf();
	c.stale = HEALTH_STALE_DERATE;
	verdict_node_t n = node_in(VERDICT_UP);
	verdict_round_t r = rnd(T0, -1, -1, 0);
	r.window.unknown = 1;
	verdict_t d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_STALE);
	ck_assert_int_eq(n.state, VERDICT_UP);
	ck_assert_uint_eq(d.weight_pct, 50);
	ck_assert_uint_eq(verdict_node_weight_pct(&c, &n), 50);
	ck_assert_uint_eq(n.moved_at, T0);  /* traffic moved: short TTL */
	r = rnd(T0 + 10, 95, 95, 0);
	d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_FRESH);
	ck_assert_uint_eq(d.weight_pct, 100);
	ck_assert_uint_eq(n.moved_at, T0 + 10);
}
END_TEST

/* S2-7 with health.stale: down: the node is out (its standby comes in)
 * and needs restore-after good rounds to come back (S0-8). */
START_TEST(s2_7_stale_down)
{
	health_conf_t c = conf();
	c.stale = HEALTH_STALE_DOWN;
	verdict_node_t n = node_in(VERDICT_UP);
	verdict_round_t r = rnd(T0, -1, -1, 0);
	r.window.unknown = 1;
	verdict_t d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_STALE);
	ck_assert_int_eq(n.state, VERDICT_DEMOTED);
	ck_assert_int_eq(d.standby, VERDICT_STANDBY_PROMOTE);
	r = rnd(T0 + 10, 95, 95, 0);
	d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_FRESH);
	ck_assert_int_eq(n.state, VERDICT_DEMOTED);
	ck_assert_int_eq(n.stale, 0);
	r.now += 10;
	ck_assert_int_eq(step(&c, &n, &r).reason, VERDICT_KEEP);
	r.now += 10;
	d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_RESTORED);
	ck_assert_int_eq(n.state, VERDICT_UP);
}
END_TEST

/* A round of a node without probes whose only input is the pushed
 * failure rate: no score (window unknown), the push is the round. */
static verdict_round_t push(uint32_t now, double pct, uint32_t high_since)
{
	verdict_round_t r;
	memset(&r, 0, sizeof(r));
	r.now = now;
	r.window.unknown = 1;
	r.window.score = r.last.score = r.rest.score = -1;
	r.last.unknown = r.rest.unknown = 1;
	r.fr_pct = pct;
	r.fr_time = now;
	r.fr_high_since = high_since;
	return r;
}

/* S1-2: a node with pushed metrics only is judged on them: up while the
 * failure rate is low, demoted after the rate stayed above the limit for
 * the window and demote-after rounds (S0-8), restored after
 * restore-after pushes below it. */
START_TEST(s1_2_passive_only_node)
{
	health_conf_t c = conf();
	verdict_node_t n = node_in(VERDICT_UNKNOWN);
	verdict_round_t r = push(T0, 1, 0);
	verdict_t d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_FIRST_UP);
	ck_assert_uint_eq(d.weight_pct, 100);
	/* above the limit, but not for the window yet */
	uint32_t since = T0 + 10;
	for (uint32_t t = since; t < since + 60; t += 10) {
		r = push(t, 12, since);
		ck_assert_int_eq(step(&c, &n, &r).reason, VERDICT_KEEP);
		ck_assert_uint_eq(n.degraded, 0);
	}
	r = push(since + 60, 12, since);
	ck_assert_int_eq(step(&c, &n, &r).reason, VERDICT_KEEP);
	ck_assert_uint_eq(n.degraded, 1);
	r = push(since + 70, 12, since);
	d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_PASSIVE_FAULT);
	ck_assert_int_eq(n.state, VERDICT_DEMOTED);
	ck_assert_int_eq(d.standby, VERDICT_STANDBY_PROMOTE);
	/* still high: no good round */
	r = push(since + 80, 12, since);
	step(&c, &n, &r);
	ck_assert_uint_eq(n.good, 0);
	/* what an outage can leave on a node: the restore clears it, as the
	 * restore of a probed node does (one restore path) */
	n.gray = 1, n.gray_pct = 20, n.lowconf = 1;
	/* three pushes below the limit restore it (S0-8) */
	for (unsigned i = 1; i <= 3; i++) {
		r = push(since + 80 + 10 * i, 1, 0);
		d = step(&c, &n, &r);
		ck_assert_int_eq(d.reason, i < 3 ? VERDICT_KEEP : VERDICT_RESTORED);
	}
	ck_assert_int_eq(n.state, VERDICT_UP);
	ck_assert(!n.gray && !n.gray_pct && !n.lowconf);
	ck_assert_int_eq(d.standby, VERDICT_STANDBY_RELEASE);
	/* a stale failure rate is no round: the node goes stale */
	r = push(since + 500, 1, 0);
	r.fr_time = since + 110;
	ck_assert_int_eq(step(&c, &n, &r).reason, VERDICT_STALE);
}
END_TEST

/* S3-5, S1-2: the limit is health.failure-rate, or the node's own
 * (a service's SLA: success < 98 % is a failure rate above 2 %). */
START_TEST(s3_5_failure_rate_limit)
{
	health_conf_t c = conf();
	ck_assert_double_eq(c.failure_rate, 5);
	ck_assert(!verdict_passive_fault(&c, 3, T0, T0 - 60, T0));
	ck_assert(verdict_passive_fault_at(&c, 2, 3, T0, T0 - 60, T0));
	c.failure_rate = 2;
	ck_assert(verdict_passive_fault(&c, 3, T0, T0 - 60, T0));
	c.failure_rate = 5;
	verdict_node_t n = node_in(VERDICT_UP);
	verdict_round_t r = push(T0, 3, T0 - 60);
	ck_assert_uint_eq(step(&c, &n, &r).next.degraded, 0);
	r.fr_limit = 2;
	step(&c, &n, &r);
	r.now += 10, r.fr_time += 10;
	ck_assert_int_eq(step(&c, &n, &r).reason, VERDICT_PASSIVE_FAULT);
}
END_TEST

/* S2-7 and S1-2: a stale failure-rate push raises no passive fault. */
START_TEST(s2_7_stale_failure_rate_is_no_fault)
{
	health_conf_t c = conf();
	uint32_t now = T0;
	ck_assert(verdict_passive_fault(&c, 12, now, now - 60, now));
	ck_assert(verdict_passive_fault(&c, 12, now - c.score.fresh_s, now - 400,
	                                now));
	ck_assert(!verdict_passive_fault(&c, 12, now - c.score.fresh_s - 1,
	                                 now - 400, now));
}
END_TEST

/* S1-2: a request failure rate above 5 % for a whole minute is a fault of
 * its own, confirmed like the others; shorter or lower is not. */
START_TEST(s1_2_passive_failure_rate_fault)
{
	health_conf_t c = conf();
	ck_assert(!verdict_passive_fault(&c, 12, T0, T0 - 59, T0));
	ck_assert(!verdict_passive_fault(&c, SCORE_FAILURE_RATE_FAULT_PCT, T0,
	                                 T0 - 600, T0));
	ck_assert(!verdict_passive_fault(&c, 12, T0, 0, T0));
	verdict_node_t n = node_in(VERDICT_UP);
	verdict_round_t r = rnd(T0, 95, 95, 0);
	r.fr_pct = 12, r.fr_time = T0, r.fr_high_since = T0 - 60;
	ck_assert_int_eq(step(&c, &n, &r).reason, VERDICT_KEEP);
	ck_assert_uint_eq(n.degraded, 1);
	r.now += 10, r.fr_time += 10;
	verdict_t d = step(&c, &n, &r);
	ck_assert_int_eq(d.reason, VERDICT_PASSIVE_FAULT);
	ck_assert_int_eq(n.state, VERDICT_DEMOTED);
	ck_assert_double_eq(d.score, 12);
	ck_assert_uint_eq(d.fault_for, 70);
	ck_assert_uint_eq(d.rounds, 2);
	/* While the fault holds, good probe rounds do not restore. */
	r.now += 10, r.fr_time += 10;
	step(&c, &n, &r);
	ck_assert_uint_eq(n.good, 0);
}
END_TEST

/* A round that is not degraded clears the suspicion raised by pushed
 * metrics (S0-7, S2-8); a degraded one keeps it. */
START_TEST(s0_8_metrics_suspect_cleared_by_a_clean_round)
{
	health_conf_t c = conf();
	verdict_node_t n = node_in(VERDICT_UP);
	n.metrics_suspect = 1;
	verdict_round_t r = rnd(T0, 50, 50, 0);
	step(&c, &n, &r);
	ck_assert_int_eq(n.metrics_suspect, 1);
	r = rnd(T0 + 10, 90, 90, 0);
	step(&c, &n, &r);
	ck_assert_int_eq(n.metrics_suspect, 0);
}
END_TEST

/* S1-9, S2-5, S1-10: the effective weight of each state; names. */
START_TEST(weights_and_names)
{
	health_conf_t c = conf();
	ck_assert_uint_eq(verdict_weight_pct(&c, VERDICT_UP, 0), 100);
	ck_assert_uint_eq(verdict_weight_pct(&c, VERDICT_DERATED, 0), 50);
	ck_assert_uint_eq(verdict_weight_pct(&c, VERDICT_UP, 10), 90);
	ck_assert_uint_eq(verdict_weight_pct(&c, VERDICT_DERATED, 10), 45);
	ck_assert_uint_eq(verdict_weight_pct(&c, VERDICT_UP, 40), 60);
	ck_assert_uint_eq(verdict_weight_pct(&c, VERDICT_UP, 100), 0);
	c.derate_factor = 0.2;
	ck_assert_uint_eq(verdict_weight_pct(&c, VERDICT_DERATED, 0), 20);
	for (int s = VERDICT_UNKNOWN; s <= VERDICT_DEMOTED; s++)
		ck_assert_int_eq(verdict_state_parse(verdict_state_name(s)), s);
	ck_assert_str_eq(verdict_state_name(VERDICT_DEMOTED), "demoted");
	ck_assert_int_eq(verdict_state_parse("sideways"), VERDICT_UNKNOWN);
	ck_assert_int_eq(verdict_state_parse(NULL), VERDICT_UNKNOWN);
	ck_assert_int_eq(verdict_standby(VERDICT_DEMOTED), VERDICT_STANDBY_PROMOTE);
	ck_assert_int_eq(verdict_standby(VERDICT_DERATED), VERDICT_STANDBY_RELEASE);
}
END_TEST

static Suite *verdict_suite(void)
{
	Suite *s = suite_create("verdict");
	TCase *t = tcase_create("core");
	tcase_add_test(t, s0_8_two_degraded_rounds_demote);
	tcase_add_test(t, s0_8_one_bad_probe_moves_nothing);
	tcase_add_test(t, s0_8_confirmation_given_by_the_round);
	tcase_add_test(t, s0_8_three_good_rounds_restore);
	tcase_add_test(t, s0_8_restore_to_derated);
	tcase_add_test(t, s0_8_metrics_suspect_cleared_by_a_clean_round);
	tcase_add_test(t, s4_4_hard_failure_out_at_once);
	tcase_add_test(t, s4_5_hysteresis_between_up_and_derated);
	tcase_add_test(t, s4_5_first_grade_at_once);
	tcase_add_test(t, s4_7_flap_damping);
	tcase_add_test(t, s1_4_two_abnormal_dimensions_fault);
	tcase_add_test(t, s1_10_gray_switch_and_cancel);
	tcase_add_test(t, s1_10_gray_switch_persists);
	tcase_add_test(t, s1_10_gray_switch_moves_gradually);
	tcase_add_test(t, s1_10_gray_switch_holds_without_alternate);
	tcase_add_test(t, s1_10_gray_switch_back_on_recovery);
	tcase_add_test(t, s4_4_s0_8_hard_failure_confirmed);
	tcase_add_test(t, s1_9_no_twenty_percent_tier);
	tcase_add_test(t, s0_7_fast_interval_default);
	tcase_add_test(t, s2_7_unknown_keeps_the_decision);
	tcase_add_test(t, s2_7_fresh_again);
	tcase_add_test(t, s2_7_stale_derate);
	tcase_add_test(t, s2_7_stale_down);
	tcase_add_test(t, s1_2_passive_only_node);
	tcase_add_test(t, s3_5_failure_rate_limit);
	tcase_add_test(t, s2_7_stale_failure_rate_is_no_fault);
	tcase_add_test(t, s1_2_passive_failure_rate_fault);
	tcase_add_test(t, weights_and_names);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(verdict_suite)
