/* SPDX-License-Identifier: MIT */
/* The verdict: one round of a node's health state machine, pure.
 *
 * Invariant: only restore_round() takes a node out of demoted.  Each
 * helper works on out->next and reports only through @out. */
#include "health/verdict.h"

#include <math.h>
#include <string.h>

static const char *const state_names[] = { "unknown", "up", "derated", "demoted" };

const char *verdict_state_name(verdict_state_t s)
{
	return (unsigned)s < 4 ? state_names[s] : "unknown";
}

verdict_state_t verdict_state_parse(const char *name)
{
	for (int i = 0; i < 4; i++)
		if (name && strcmp(name, state_names[i]) == 0)
			return (verdict_state_t)i;
	return VERDICT_UNKNOWN;
}

const char *verdict_shown_state(const verdict_node_t *n)
{
	return n->stale ? "stale" : verdict_state_name(n->state);
}

int verdict_changes_state(verdict_reason_t r)
{
	return r != VERDICT_KEEP && r != VERDICT_NO_DATA;
}

unsigned verdict_weight_pct(const health_conf_t *c, verdict_state_t state,
                            unsigned gray_pct)
{
	int pct = 100;
	if (state == VERDICT_DERATED)
		pct = (int)lround(c->derate_factor * 100);
	if (gray_pct)
		pct = (int)lround(pct * (100.0 - (gray_pct > 100 ? 100 : gray_pct)) / 100);
	return pct > 0 ? (unsigned)pct : 0;
}

unsigned verdict_gray_next(unsigned pct)
{
	unsigned next = pct * 2;
	if (next < pct + VERDICT_GRAY_MIN_STEP)
		next = pct + VERDICT_GRAY_MIN_STEP;
	return next > 100 ? 100 : next;
}

verdict_standby_t verdict_standby(verdict_state_t state)
{
	return state == VERDICT_DEMOTED ? VERDICT_STANDBY_PROMOTE
	                                : VERDICT_STANDBY_RELEASE;
}

unsigned verdict_restore_keep(const verdict_node_t *node, unsigned nwin)
{
	unsigned good = node->good + 1;
	return good < nwin ? good : nwin;
}

int verdict_passive_fault_at(const health_conf_t *c, double limit_pct,
                             double fr_pct, uint32_t fr_time,
                             uint32_t fr_high_since, uint32_t now)
{
	return fr_high_since && fr_time + c->score.fresh_s >= now &&
	       fr_time - fr_high_since >= c->failure_rate_window &&
	       fr_pct > limit_pct;
}

int verdict_passive_fault(const health_conf_t *c, double fr_pct,
                          uint32_t fr_time, uint32_t fr_high_since,
                          uint32_t now)
{
	return verdict_passive_fault_at(c, c->failure_rate, fr_pct, fr_time,
	                                fr_high_since, now);
}

unsigned verdict_node_weight_pct(const health_conf_t *c,
                                 const verdict_node_t *n)
{
	unsigned pct = verdict_weight_pct(c, n->state, n->gray ? n->gray_pct : 0);
	if (n->stale && c->stale == HEALTH_STALE_DERATE) {
		unsigned d = verdict_weight_pct(c, VERDICT_DERATED, 0);
		if (d < pct)
			pct = d;
	}
	return pct;
}

/* A change of state at @now, with the bookkeeping that goes with it. */
static void move(const health_conf_t *c, verdict_t *out, verdict_state_t to,
                 verdict_reason_t why, uint32_t now)
{
	verdict_node_t *n = &out->next;
	verdict_state_t was = n->state;
	n->state = to;
	n->since = now;
	/* S4-7 anti-flap: a demotion soon after a restore counts as a flap;
	 * each one doubles the confirmations the next restore needs. */
	if (to == VERDICT_DEMOTED && was != VERDICT_DEMOTED) {
		if (n->restored_at && c->flap_window > 0 &&
		    now - n->restored_at < c->flap_window) {
			if (n->flaps < VERDICT_FLAPS_MAX)
				n->flaps++;
		} else {
			n->flaps = 0;
		}
	}
	/* The first verdict on a new node moves no traffic. */
	if (!(was == VERDICT_UNKNOWN && to == VERDICT_UP))
		n->moved_at = now;
	out->reason = why;
	out->standby = verdict_standby(to);
}

/* Ends a gray switch (the node recovered, or it is out). */
static void gray_clear(verdict_node_t *n)
{
	n->gray = 0;
	n->gray_held = 0;
	n->gray_pct = 0;
}

/* The one restore path of a demoted node, for rounds of probes and of
 * passive checks alike: a @bad round starts the count again, a good one
 * counts, and restore-after of them in a row (S0-8), twice that per flap
 * (S4-7), bring it back to @to with everything of the outage cleared;
 * @score is the figure the decision names. */
static void restore_count(const health_conf_t *c, const verdict_round_t *r,
                          int bad, double score, verdict_state_t to,
                          verdict_t *out)
{
	verdict_node_t *n = &out->next;
	if (bad) {
		n->good = 0;
		return;
	}
	n->good++;
	/* S4-7: a node demoted again soon after a restore needs twice the
	 * confirmations per flap. */
	unsigned need = c->restore_after << n->flaps;
	if (n->good < need)
		return;
	out->rounds = n->good;
	out->score = score;
	out->keep = n->good < r->nwin ? n->good : r->nwin; /* as verdict_restore_keep */
	gray_clear(n);
	n->lowconf = 0;
	/* The rounds counted while it was out are spent: a restored node
	 * needs demote-after new degraded rounds to leave again (S0-8). */
	n->degraded = 0;
	n->grade_rounds = 0;
	n->restored_at = r->now;
	n->refused = 0;
	move(c, out, to, VERDICT_RESTORED, r->now);
}

/* A demoted node: restoration looks at the rounds themselves, since the
 * window still holds the outage.  Each good round counts; anything else
 * starts the count again (S0-8, S4-7).  The outage is behind: the state
 * follows the good rounds only. */
static void restore_round(const health_conf_t *c, const verdict_round_t *r,
                          int fault, verdict_t *out)
{
	restore_count(c, r, fault || r->last.n_abnormal || r->last.score < c->score.usable,
	              r->last.score,
	              r->rest.score >= c->score.good ? VERDICT_UP : VERDICT_DERATED, out);
}

/* The consecutive rounds that demote (or derate) the node in round @r:
 * health.demote-after (S0-8), or the in-window rule the caller passes. */
static unsigned demote_need(const health_conf_t *c, const verdict_round_t *r)
{
	return r->confirm ? r->confirm : c->demote_after;
}

/* A degraded round of a node that is not out: demote-after of them in a
 * row demote it (S0-8); the reason names what was wrong. */
static void degraded_round(const health_conf_t *c, const verdict_round_t *r,
                           int passive, int fault, verdict_t *out)
{
	verdict_node_t *n = &out->next;
	n->good = 0;
	n->degraded++;
	if (n->degraded < demote_need(c, r))
		return;
	out->rounds = n->degraded;
	out->score = r->window.score;
	verdict_reason_t why = VERDICT_LOW_SCORE;
	if (passive) {
		why = VERDICT_PASSIVE_FAULT;
		out->score = r->fr_pct;
		out->fault_for = r->fr_time - r->fr_high_since;
	} else if (fault) {
		why = VERDICT_FAULT;
		out->abnormal = r->last.abnormal;
	}
	gray_clear(n);
	move(c, out, VERDICT_DEMOTED, why, r->now);
}

/* Low confidence (S1-10): one abnormal dimension alone, confirmed over
 * two rounds like every verdict (S0-8), moves gray-share of the node's
 * weight to the other nodes of its rows (the alternates).  After
 * gray-watch seconds, if the node has still not recovered, the moved
 * share doubles every gray-step seconds, but only while an alternate is
 * up (r->alt_ok): moving load onto alternates that are themselves
 * failing would make things worse, so the step waits (held) until one
 * is.  At 100 % the node is out.  A round without the abnormal dimension
 * cancels the switch: the whole share goes back to the node.
 * Returns 1 if the node was demoted. */
static int gray_round(const health_conf_t *c, const verdict_round_t *r,
                      verdict_t *out)
{
	verdict_node_t *n = &out->next;
	n->lowconf = r->last.n_abnormal == 1 ? n->lowconf + 1 : 0;
	if (n->lowconf >= 2) {
		if (!n->gray) {
			n->gray = 1;
			n->gray_held = 0;
			n->gray_pct = (unsigned)lround(c->gray_share);
			if (n->gray_pct == 0)
				n->gray_pct = 1; /* still a switch: shows and steps */
			n->gray_since = n->gray_step_at = r->now;
			n->moved_at = r->now;
			out->gray = VERDICT_GRAY_ON;
			return 0;
		}
		if (n->gray_pct == 0) /* a switch persisted before gray_pct */
			n->gray_pct = (unsigned)lround(c->gray_share) ?: 1;
		if (r->now - n->gray_since < c->gray_watch)
			return 0;
		if (!r->alt_ok) {
			if (!n->gray_held) {
				n->gray_held = 1;
				out->gray = VERDICT_GRAY_HELD;
			}
			return 0;
		}
		/* The first step comes right after the watch; a step that
		 * was held comes as soon as an alternate is up again; the
		 * others every gray-step seconds. */
		int stepped = n->gray_step_at >= n->gray_since + (uint32_t)c->gray_watch &&
		              n->gray_step_at > n->gray_since;
		if (stepped && !n->gray_held && r->now - n->gray_step_at < c->gray_step)
			return 0;
		n->gray_held = 0;
		n->gray_pct = verdict_gray_next(n->gray_pct);
		n->gray_step_at = r->now;
		n->moved_at = r->now;
		out->score = r->window.score;
		if (n->gray_pct >= 100) {
			gray_clear(n);
			move(c, out, VERDICT_DEMOTED, VERDICT_GRAY_PERSISTED, r->now);
			return 1;
		}
		out->gray = VERDICT_GRAY_STEP;
	} else if (n->gray) {
		gray_clear(n);
		n->moved_at = r->now;
		out->gray = VERDICT_GRAY_OFF;
	}
	return 0;
}

/* Up and derated (S4-5, S4-7): a switch needs the score on the other side
 * of the good boundary by a margin, for demote-after (to derate) or
 * restore-after (to come back) rounds in a row.  A score that wanders
 * around the boundary with probe jitter keeps its current state; a new
 * node takes its first grade at once. */
static void grade_round(const health_conf_t *c, const verdict_round_t *r,
                        verdict_t *out)
{
	verdict_node_t *n = &out->next;
	double score = r->window.score, good = c->score.good;
	double margin = VERDICT_GRADE_MARGIN;
	out->score = score;
	if (n->state == VERDICT_UNKNOWN) {
		n->grade_rounds = 0;
		if (score >= good)
			move(c, out, VERDICT_UP, VERDICT_FIRST_UP, r->now);
		else
			move(c, out, VERDICT_DERATED, VERDICT_FIRST_DERATED, r->now);
		return;
	}
	int want_up = score >= good + (n->state == VERDICT_DERATED ? margin : 0);
	int want_down = score < good - (n->state == VERDICT_UP ? margin : 0);
	if ((n->state == VERDICT_UP && want_down) ||
	    (n->state == VERDICT_DERATED && want_up))
		n->grade_rounds++;
	else
		n->grade_rounds = 0;
	if (n->state == VERDICT_UP && n->grade_rounds >= demote_need(c, r)) {
		out->rounds = n->grade_rounds;
		n->grade_rounds = 0;
		move(c, out, VERDICT_DERATED, VERDICT_DERATE, r->now);
	} else if (n->state == VERDICT_DERATED &&
	           n->grade_rounds >= c->restore_after) {
		out->rounds = n->grade_rounds;
		n->grade_rounds = 0;
		move(c, out, VERDICT_UP, VERDICT_UNDERATE, r->now);
	}
}

/* The failure-rate limit of the round: the node's own (S3-5) or
 * health.failure-rate. */
static double fr_limit(const health_conf_t *c, const verdict_round_t *r)
{
	return r->fr_limit > 0 ? r->fr_limit : c->failure_rate;
}

/* A round of a node without probes whose only fresh input is the pushed
 * failure rate (S1-2, S3-5): the rate above the limit for the window is
 * a fault, confirmed like any other (demote-after rounds, S0-8); pushes
 * below the limit are good rounds, restore-after of them restore it.
 * There is no score: the node is up or out. */
static void passive_round(const health_conf_t *c, const verdict_round_t *r,
                          verdict_t *out)
{
	verdict_node_t *n = &out->next;
	int passive = verdict_passive_fault_at(c, fr_limit(c, r), r->fr_pct,
	                                       r->fr_time, r->fr_high_since, r->now);
	n->refused = 0;
	if (n->state == VERDICT_DEMOTED) {
		restore_count(c, r, passive || r->fr_pct > fr_limit(c, r), r->fr_pct,
		              VERDICT_UP, out);
	} else if (passive) {
		degraded_round(c, r, 1, 1, out);
	} else {
		n->degraded = 0;
		n->good = 0;
		if (n->state == VERDICT_UNKNOWN)
			move(c, out, VERDICT_UP, VERDICT_FIRST_UP, r->now);
		else if (n->state == VERDICT_DERATED)
			move(c, out, VERDICT_UP, VERDICT_UNDERATE, r->now);
	}
}

/* S2-7: every input of a node that had a verdict went stale.  It is
 * marked stale once, and health.stale says what that does: keep the
 * verdict (the default: a broken metrics feed must not move traffic on
 * its own), derate the node, or take it out until fresh inputs restore
 * it with the usual confirmations.  A node that never had a verdict has
 * nothing to keep: it stays as it is (unmonitored or waiting). */
static void stale_round(const health_conf_t *c, const verdict_round_t *r,
                        verdict_t *out)
{
	verdict_node_t *n = &out->next;
	out->reason = VERDICT_NO_DATA;
	if (n->state == VERDICT_UNKNOWN || n->stale)
		return;
	n->stale = 1;
	n->good = n->degraded = n->lowconf = n->grade_rounds = 0;
	if (c->stale == HEALTH_STALE_DOWN && n->state != VERDICT_DEMOTED) {
		gray_clear(n);
		move(c, out, VERDICT_DEMOTED, VERDICT_STALE, r->now);
		return;
	}
	if (c->stale == HEALTH_STALE_DERATE && n->state != VERDICT_DEMOTED)
		n->moved_at = r->now;
	out->reason = VERDICT_STALE;
}

void verdict_round(const health_conf_t *c, const verdict_node_t *node,
                   const verdict_round_t *r, verdict_t *out)
{
	memset(out, 0, sizeof(*out));
	out->next = *node;
	verdict_node_t *n = &out->next;
	int fr_fresh = r->fr_time && r->fr_time + c->score.fresh_s >= r->now;
	if (r->window.unknown && !r->nprobe && fr_fresh) {
		passive_round(c, r, out);
	} else if (r->window.unknown) {
		stale_round(c, r, out);
	} else if (r->nprobe && r->refused == r->nprobe) {
		/* S4-4: a hard failure, every probe of the node failing to
		 * connect in its latest run, is out at once.  S0-8: a single
		 * bad probe never moves traffic, and one lost SYN or one
		 * connect timeout is a single bad probe.  So a hard failure
		 * is confirmed: by another probe path of the node failing too
		 * (two probes or more), or by a second probe that the health
		 * thread starts at once (retry).  A dead node is then out
		 * within its interval plus one connect attempt. */
		n->refused++;
		n->good = 0;
		if (c->hard_confirm && r->nprobe < 2 && n->refused < 2 &&
		    n->state != VERDICT_DEMOTED) {
			out->retry = 1;
		} else {
			n->degraded++;
			if (n->state != VERDICT_DEMOTED) {
				gray_clear(n);
				move(c, out, VERDICT_DEMOTED, VERDICT_HARD_FAILURE, r->now);
			}
		}
	} else {
		/* A round is degraded when the window's score is below usable
		 * or the round shows a fault: two abnormal dimensions (S1-4),
		 * or the passive checks' failure rate (S1-2).  A single failed
		 * probe among good ones is forgiven by the score once a good
		 * round follows (score.c, loss_forgive), so it makes one
		 * degraded round at most and never moves traffic (S0-8). */
		n->refused = 0;
		int passive = verdict_passive_fault_at(c, fr_limit(c, r), r->fr_pct,
		                                       r->fr_time, r->fr_high_since,
		                                       r->now);
		int fault = r->last.n_abnormal >= 2 || passive;
		if (n->state == VERDICT_DEMOTED) {
			restore_round(c, r, fault, out);
		} else if (fault || r->window.score < c->score.usable) {
			degraded_round(c, r, passive, fault, out);
		} else {
			n->degraded = 0;
			n->metrics_suspect = 0;
			if (!gray_round(c, r, out))
				grade_round(c, r, out);
		}
	}
	int fresh = !r->window.unknown || (!r->nprobe && fr_fresh);
	if (node->stale && fresh) {
		/* Fresh inputs again (S2-7): the stale mark goes; a node that
		 * stale took out comes back only through restore-after good
		 * rounds, like any demoted node. */
		n->stale = 0;
		if (c->stale == HEALTH_STALE_DERATE && n->state != VERDICT_DEMOTED)
			n->moved_at = r->now;
		if (!verdict_changes_state(out->reason))
			out->reason = VERDICT_FRESH;
	}
	out->weight_pct = verdict_node_weight_pct(c, n);
}
