/* SPDX-License-Identifier: MIT */
/* Decisions into the store: a round's verdict applied to the node and
 * worded for the log and the audit record, the re-pool of standby.c
 * (S0-9, S0-10, S1-6), and the writes of health, status and history
 * records.
 *
 * Thread safety: health thread only.
 *
 * Decisions of one tick are written together in one transaction with
 * their audit record (S0-9: an atomic re-pool), together with standby
 * promotions (S0-10: validated first; a failed check changes nothing).
 * A failed commit leaves the nodes marked changed: the next tick retries
 * the whole re-pool. */
#include "config.h"
#include "health/health_int.h"
#include "common/log.h"
#include "common/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void health__note(health_t *h, const char *fmt, ...)
{
	size_t l = strlen(h->what);
	if (l + 8 >= sizeof(h->what))
		return;
	if (l)
		h->what[l++] = ';', h->what[l++] = ' ', h->what[l] = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(h->what + l, sizeof(h->what) - l, fmt, ap);
	va_end(ap);
	h->have_changes = 1;
}

/* Applying verdicts ------------------------------------------------------ */

/* The reason of a change of state, in the operator's words, with the
 * configured grade boundaries. */
static void reason_text(const health_t *h, const hnode_t *n, const verdict_t *d,
                        char *why, size_t len)
{
	const score_config_t *sc = &h->c.score;
	switch (d->reason) {
	case VERDICT_HARD_FAILURE:
		snprintf(why, len, "hard failure: every probe failed to connect%s (%s)",
		         n->nprobe < 2 && h->c.hard_confirm ? ", twice" : "",
		         n->probe[0].last.error[0] ? n->probe[0].last.error : "no connection");
		break;
	case VERDICT_RESTORED:
		if (!n->nprobe && n->last.unknown)
			snprintf(why, len, "restored: %u consecutive pushes with the failure "
			         "rate at or below %g%% (now %.1f%%)", d->rounds,
			         n->fr_limit > 0 ? n->fr_limit : h->c.failure_rate, d->score);
		else
			snprintf(why, len, "restored: %u consecutive good rounds (score %.0f)",
			         d->rounds, d->score);
		break;
	case VERDICT_STALE: {
		static const char *const what[] = {
			"its last verdict is kept", "weight x derate-factor",
			"out until fresh inputs restore it" };
		snprintf(why, len, "stale: no input fresher than %us; was %s, %s",
		         (unsigned)sc->fresh_s, verdict_state_name(n->v.state),
		         what[h->c.stale]);
		break;
	}
	case VERDICT_FRESH:
		snprintf(why, len, "fresh inputs again%s",
		         d->next.state == VERDICT_DEMOTED ? ": out until restored" : "");
		break;
	case VERDICT_PASSIVE_FAULT:
		snprintf(why, len, "fault: request failure rate %.1f%% above %g%% for %us, "
		         "%u rounds", d->score, n->fr_limit > 0 ? n->fr_limit : h->c.failure_rate,
		         d->fault_for, d->rounds);
		break;
	case VERDICT_FAULT:
		snprintf(why, len, "fault: %s%s%sin %u consecutive rounds",
		         d->abnormal & SCORE_AB_STATUS ? "bad status, " : "",
		         d->abnormal & SCORE_AB_CONNECT ? "connect failure, " : "",
		         d->abnormal & SCORE_AB_LATENCY ? "slow answer, " : "",
		         d->rounds);
		break;
	case VERDICT_LOW_SCORE:
		snprintf(why, len, "score %.0f < %g in %u consecutive rounds",
		         d->score, sc->usable, d->rounds);
		break;
	case VERDICT_GRAY_PERSISTED:
		snprintf(why, len, "low-confidence fault for %.0f s, its share moved "
		         "gradually to healthy alternates",
		         (double)(d->next.since - n->v.gray_since));
		break;
	case VERDICT_FIRST_UP:
		if (!n->nprobe && n->last.unknown)
			snprintf(why, len, "failure rate %.1f%% at or below %g%%",
			         n->metrics.value[METRIC_FAILURE_RATE],
			         n->fr_limit > 0 ? n->fr_limit : h->c.failure_rate);
		else
			snprintf(why, len, "score at or above %g", sc->good);
		break;
	case VERDICT_FIRST_DERATED:
		snprintf(why, len, "score %.0f in %g..%g: weight x %.2f", d->score,
		         sc->usable, sc->good, h->c.derate_factor);
		break;
	case VERDICT_DERATE:
		snprintf(why, len, "score %.0f in %g..%g for %u rounds: weight x %.2f",
		         d->score, sc->usable, sc->good, d->rounds, h->c.derate_factor);
		break;
	case VERDICT_UNDERATE:
		snprintf(why, len, "score %.0f at or above %g for %u rounds", d->score,
		         sc->good, d->rounds);
		break;
	default:
		snprintf(why, len, "%s", n->reason);
		break;
	}
}

/* The gray switch's news, logged and audited before a change of state of
 * the same round. */
static void apply_gray(health_t *h, hnode_t *n, const verdict_t *d)
{
	switch (d->gray) {
	case VERDICT_GRAY_ON:
		n->changed = 1;
		log_info("node %s: gray switch, %u%% of its share moves away, watched %.0f s",
		         n->id, d->next.gray_pct, h->c.gray_watch);
		health__note(h, "node %s gray switch %u%% (one abnormal dimension)", n->id,
		             d->next.gray_pct);
		break;
	case VERDICT_GRAY_STEP:
		n->changed = 1;
		log_info("node %s: gray switch, not recovered and the alternates are up: "
		         "%u%% of its share moved away", n->id, d->next.gray_pct);
		health__note(h, "node %s gray switch %u%%", n->id, d->next.gray_pct);
		break;
	case VERDICT_GRAY_HELD:
		log_info("node %s: gray switch held at %u%%: no alternate of its rows is up",
		         n->id, d->next.gray_pct);
		break;
	case VERDICT_GRAY_OFF:
		n->changed = 1;
		log_info("node %s: gray switch cancelled, the node recovered", n->id);
		health__note(h, "node %s gray switch cancelled", n->id);
		break;
	default:
		break;
	}
}

typedef struct {
	health_t *h;
	const hnode_t *n;
	int ok;
} alt_t;

/* wdb_each() over the weight rows: whether a row naming @a->n has another
 * node that serves and is up (S1-10: "if the alternate is fine"). */
static int alt_row(const char *key, json_t *row, void *arg)
{
	alt_t *a = arg;
	json_t *w = json_object_get(row, "weights");
	(void)key;
	if (!json_object_get(w, a->n->id))
		return 0;
	const char *id;
	json_t *v;
	json_object_foreach(w, id, v) {
		const hnode_t *o = health__find_node(a->h, id, NULL);
		if (!o || o == a->n || json_integer_value(v) <= 0 ||
		    strcmp(o->admin, "down") == 0 || strcmp(o->admin, "drain") == 0 ||
		    (strcmp(o->pool, "standby") == 0 && !o->promoted))
			continue;
		if (strcmp(o->admin, "up") == 0 || (o->v.state == VERDICT_UP && !o->v.gray)) {
			a->ok = 1;
			return 1;
		}
	}
	return 0;
}

/* Whether @n has a healthy alternate.  Asked only of a gray switch past
 * its watch, so the walk over the rows is rare. */
static int alternate_ok(health_t *h, const hnode_t *n)
{
	wdb_txn_t *t = wdb_begin_read(h->db);
	if (!t)
		return 0;
	alt_t a = { h, n, 0 };
	wdb_each(t, WDB_WEIGHT, NULL, alt_row, &a);
	wdb_abort(t);
	return a.ok;
}

/* Probes @n again at once (the probes not running now). */
static void probe_now(health_t *h, hnode_t *n)
{
	double now = health__loop_now(h);
	for (unsigned i = 0; i < n->nprobe; i++)
		if (!n->probe[i].run && n->probe[i].next_due > now)
			n->probe[i].next_due = now;
}

/* The statistics of a round (hstats.h): transitions, recoveries, flaps,
 * and the detection time of a demotion (S1-7): from the first round that
 * was not clean (degraded, refused, low confidence, gray or suspect) to
 * the demotion; the switch time runs from there to the commit. */
static void count_round(health_t *h, hnode_t *n, const verdict_node_t *was,
                        const verdict_t *d)
{
	const verdict_node_t *v = &d->next;
	double now = health__mono();
	int bad = v->degraded || v->refused || v->lowconf || v->gray ||
	          v->metrics_suspect;
	if (v->state == VERDICT_DEMOTED && was->state != VERDICT_DEMOTED) {
		hstats_observe(&h->stats.detection, n->bad_since ? now - n->bad_since : 0);
		n->demoted_at = now;
		n->bad_since = 0;
		/* A demotion soon after a restore counts as a flap (S4-7);
		 * any other demotion resets the verdict's count. */
		if (v->flaps)
			h->stats.flaps++;
	} else if (v->state != VERDICT_DEMOTED) {
		n->demoted_at = 0;
		if (!bad)
			n->bad_since = 0;
		else if (!n->bad_since)
			n->bad_since = now;
	}
	if (d->reason == VERDICT_RESTORED)
		h->stats.recoveries++;
	unsigned from = hstats_state_index(verdict_shown_state(was)),
	         to = hstats_state_index(verdict_shown_state(v));
	if (from != to)
		h->stats.transitions[from][to]++;
}

/* Applies decision @d to @n; @rest is the score of the samples a restore
 * keeps; @extra: an affected node in a cutover window gets an extra probe
 * round at once. */
static void apply(health_t *h, hnode_t *n, const verdict_t *d,
                  const score_result_t *rest, int extra)
{
	const char *was = verdict_shown_state(&n->v);
	char why[200];
	if (verdict_changes_state(d->reason))
		reason_text(h, n, d, why, sizeof(why));
	count_round(h, n, &n->v, d);
	n->v = d->next;
	apply_gray(h, n, d);
	if (d->retry) {
		/* S4-4 with S0-8: confirm a refused connection at once. */
		probe_now(h, n);
		log_info("node %s: every probe failed to connect: probing again to confirm",
		         n->id);
	} else if (extra) {
		probe_now(h, n);
		log_debug("node %s: degraded in cutover window %s: probing again at once",
		          n->id, n->cut.window);
	}
	if (d->keep) {
		/* The outage is behind: score from the good rounds only. */
		memmove(n->win, n->win + n->nwin - d->keep, d->keep * sizeof(n->win[0]));
		n->nwin = d->keep;
		n->last = *rest;
	}
	if (!verdict_changes_state(d->reason))
		return;
	snprintf(n->reason, sizeof(n->reason), "%s", why);
	n->changed = 1;
	log_info("%snode %s: %s -> %s (%s)", h->c.shadow ? "shadow: " : "", n->id,
	         was, verdict_shown_state(&n->v), why);
	health__note(h, "node %s %s: %s", n->id, verdict_shown_state(&n->v), why);
}

void health__evaluate(health_t *h, hnode_t *n)
{
	verdict_round_t r;
	memset(&r, 0, sizeof(r));
	r.now = health__wall();
	health__node_score(h, n, n->win, n->nwin, r.now, &n->last);
	n->status_dirty = 1;
	health__shadow_profile(h, n, r.now);
	r.window = n->last;
	r.nwin = n->nwin;
	if (n->nwin)
		health__node_score(h, n, n->win + n->nwin - 1, 1, r.now, &r.last);
	else
		r.last = r.window; /* metrics only: the round is the push */
	if (!n->nwin) {
		r.rest = r.window;
	} else if (n->v.state == VERDICT_DEMOTED) {
		unsigned keep = verdict_restore_keep(&n->v, n->nwin);
		health__node_score(h, n, n->win + n->nwin - keep, keep, r.now, &r.rest);
	}
	r.nprobe = n->nprobe;
	for (unsigned i = 0; i < n->nprobe; i++)
		if (n->probe[i].last_time && !n->probe[i].last.connected)
			r.refused++;
	if (n->v.gray && r.now - n->v.gray_since >= h->c.gray_watch)
		r.alt_ok = (uint8_t)alternate_ok(h, n);
	r.fr_pct = n->metrics.value[METRIC_FAILURE_RATE];
	r.fr_time = n->metrics.time[METRIC_FAILURE_RATE];
	r.fr_high_since = n->fr_high_since;
	r.fr_limit = n->fr_limit;
	unsigned need = cutover_confirm_rounds(&h->c.cut, &n->cut, h->c.demote_after);
	r.confirm = need;
	verdict_t d;
	verdict_round(&h->c, &n->v, &r, &d);
	/* S0-7, S0-8 in a window: a degraded sample of an affected node (the
	 * newest probe's score, a fault, or a degraded round) is confirmed
	 * or forgiven by an extra round at once, not one interval later. */
	int bad = n->nwin && (r.last.score < h->c.score.usable ||
	                      r.last.n_abnormal >= 2 || d.next.degraded > 0);
	int extra = cutover_extra_probe(&n->cut, d.next.state == VERDICT_DEMOTED,
	                                bad, n->extra, need);
	n->extra = bad && !verdict_changes_state(d.reason) ? n->extra + extra : 0;
	apply(h, n, &d, &r.rest, extra);
}

/* Decisions -> store ------------------------------------------------------ */

static json_t *health_record(health_t *h, const hnode_t *n)
{
	int pct = (int)verdict_node_weight_pct(&h->c, &n->v);
	uint32_t su = n->v.moved_at ? n->v.moved_at + (uint32_t)h->c.settle : 0;
	if (n->cut.short_until > su)
		su = n->cut.short_until;
	json_t *rec = json_pack("{s:s, s:b, s:i, s:I, s:I, s:s, s:b, s:s, s:b, s:I, s:f}",
		"state", verdict_state_name(n->v.state),
		"usable", n->v.state != VERDICT_DEMOTED,
		"effective_weight_pct", pct,
		"short_until", (json_int_t)su,
		"since", (json_int_t)n->v.since,
		"reason", n->reason,
		"promoted", n->promoted,
		"promoted_for", n->promoted_for,
		"gray", n->v.gray,
		"gray_since", (json_int_t)n->v.gray_since,
		"score", n->last.unknown ? -1.0 : n->last.score);
	json_object_set_new(rec, "moved_at", json_integer(n->v.moved_at));
	/* S2-7: what the state rests on, for status and explain. */
	if (n->v.stale)
		json_object_set_new(rec, "stale", json_true());
	if (n->unmonitored)
		json_object_set_new(rec, "unmonitored", json_true());
	if (n->v.gray) {
		json_object_set_new(rec, "gray_pct", json_integer(n->v.gray_pct));
		json_object_set_new(rec, "gray_step_at", json_integer(n->v.gray_step_at));
		json_object_set_new(rec, "gray_held", json_boolean(n->v.gray_held));
	}
	if (n->cut.phase != CUT_NONE) {
		json_object_set_new(rec, "cutover_pct", json_integer(n->cut.weight_pct));
		json_object_set_new(rec, "prewarm_pct", json_integer(n->cut.prewarm_pct));
		json_object_set_new(rec, "cutover_phase",
		                    json_string(cutover_phase_name(n->cut.phase)));
		json_object_set_new(rec, "cutover_window", json_string(n->cut.window));
	}
	return rec;
}

/* Test hook: when the environment names a file with
 * GSLBD_TEST_HEALTH_FAIL_FILE and that file holds a count above 0, the
 * next health commit fails as if the store had refused it, and the count
 * goes down by one.  Lets the tests prove that a failed commit leaves
 * nothing applied (S0-10).  Unset in production: one getenv() at start. */
static int test_commit_fails(health_t *h)
{
	if (!h->fail_file)
		return 0;
	FILE *f = fopen(h->fail_file, "r+");
	if (!f)
		return 0;
	int left = 0;
	if (fscanf(f, "%d", &left) != 1 || left <= 0) {
		fclose(f);
		return 0;
	}
	rewind(f);
	fprintf(f, "%d\n", left - 1);
	fclose(f);
	return 1;
}

/* Live status and history of a node are written in the transaction of
 * every decision about it, so that `status` never shows a decision next
 * to the score and probes of an older one (one commit, one story);
 * between decisions at most every STATUS_EVERY seconds, and only when
 * @due (once a second): with 10,000 nodes, writing every result would
 * make each second's commit a large one. */
#define STATUS_EVERY 5
static int status_wanted(const hnode_t *n, uint32_t now, int due)
{
	return n->changed ||
	       (due && n->status_dirty && now - n->status_at >= STATUS_EVERY);
}

/* The live status of @n and its history point at @now, into @t. */
static void write_status(health_t *h, wdb_txn_t *t, const hnode_t *n, uint32_t now)
{
	json_t *probes = json_array();
	for (unsigned k = 0; k < n->nprobe; k++) {
		const hprobe_t *p = &n->probe[k];
		if (!p->last_time)
			continue;
		json_array_append_new(probes, json_pack("{s:s, s:I, s:b, s:i, s:i, s:i, s:s, s:i}",
			"probe", p->text, "time", (json_int_t)p->last_time,
			"ok", p->last.connected && p->last.status_ok && p->last.body_ok,
			"status", p->last.status, "connect_ms", (int)p->last.connect_ms,
			"total_ms", (int)p->last.total_ms, "error", p->last.error,
			"cert_days_left", p->last.cert_days_left));
	}
	json_t *dims = json_pack("[f, f, f, f]", n->last.dim[0], n->last.dim[1],
	                         n->last.dim[2], n->last.dim[3]);
	/* No state of its own: the state is the decision's,
	 * in the health record written beside it. */
	json_t *st = json_pack("{s:f, s:o, s:b, s:b, s:i, s:I, s:i, s:i, s:o, s:b}",
		"score", n->last.unknown ? -1.0 : n->last.score, "dims", dims,
		"unknown", n->last.unknown, "vetoed", n->last.vetoed,
		"abnormal", n->last.abnormal, "updated", (json_int_t)now,
		"degraded_rounds", n->v.degraded, "good_rounds", n->v.good, "probes", probes, "shadow", h->c.shadow);
	json_object_set_new(st, "profile", json_string(health__profile_text(h, n)));
	/* S1-3: the probes' traffic and its budget. */
	json_object_set_new(st, "probe_bytes_per_s", json_real(n->probe_rate));
	json_object_set_new(st, "probe_budget", json_real(n->probe_budget));
	json_object_set_new(st, "probe_over_budget", json_boolean(n->probe_over));
	if (h->c.shadow_profile >= 0)
		json_object_set_new(st, "shadow_score", json_real(n->shadow_score));
	wdb_set(t, WDB_STATUS, n->id, st);
	json_decref(st);
	/* S2-10: each dimension's value goes with the score
	 * and state, so that a post-mortem reads why a score
	 * moved (-1: the dimension had no input). */
	json_t *hs = json_pack("{s:f, s:s, s:[f, f, f, f], s:s}", "score",
	                       n->last.unknown ? -1.0 : n->last.score,
	                       "state", verdict_shown_state(&n->v),
	                       "dims", n->last.dim[0], n->last.dim[1],
	                       n->last.dim[2], n->last.dim[3],
	                       "profile", health__profile_text(h, n));
	if (n->v.gray)
		json_object_set_new(hs, "gray_pct", json_integer(n->v.gray_pct));
	wdb_history_add(t, n->id, now, hs);
	json_decref(hs);
}

/* Publishes the cluster's records @pub (cluster mode) and commits @t
 * with audit text @what.  Returns the commit's change id, or < 0 with
 * @err when nothing was written. */
static int64_t commit_tick(health_t *h, wdb_txn_t *t, const health_cluster_t *cl,
                           json_t *pub, const char *what, char *err, size_t size)
{
	json_t *recs = json_object_size(pub) ? json_pack("{s:O}", "health", pub) : NULL;
	int prc = recs ? cl->publish(cl->arg, h->cl_epoch, recs, what, err, size) : 0;
	json_decref(recs);
	if (prc) {
		/* Not written to etcd: as a failed commit, nothing of the
		 * re-pool counts and the next tick tries again. */
		wdb_abort(t);
		return -1;
	}
	if (test_commit_fails(h)) {
		wdb_abort(t);
		snprintf(err, size, "test hook: commit refused");
		return -1;
	}
	return wdb_commit(t, what, err, size);
}

/* A commit that failed with @rc and @err: the re-pool in @undo is
 * undone. */
static void tick_failed(health_t *h, int64_t rc, health_undo_log_t *undo,
                        char *err, size_t size)
{
	/* S0-10: nothing of the re-pool stays applied; the decisions
	 * stay marked changed and the next tick retries them whole,
	 * so a retry picks the same standby, never a second one. */
	health__undo_apply(undo);
	h->stats.commit_failures++;
	log_warning("health: cannot commit (%s); will retry", err);
	/* A full map: room now, so that the retry at the next tick
	 * finds it (S0-8: a decision reaches the answers in its
	 * normal time, however full the audit log). */
	wdb_room_t room;
	if (rc == GSLB_ENOSPC &&
	    weightdb_make_room(h->db, 20000, 1, &room) > 0)
		log_warning("health: database: %s",
		            wdb_room_msg(&room, err, size));
}

/* A commit that went through: the status of @st_done[0..@nst) is
 * written as of @now, and the decisions are no longer pending. */
static void tick_committed(health_t *h, hnode_t **st_done, size_t nst, uint32_t now)
{
	for (size_t i = 0; i < nst; i++) {
		st_done[i]->status_at = now;
		st_done[i]->status_dirty = 0;
	}
	h->stats.commits++;
	h->stats.promotions += h->promotions_pending;
	double mono = health__mono();
	for (size_t i = 0; i < h->n; i++) {
		hnode_t *n = h->node[i];
		/* The demotion is in the plans the workers read. */
		if (n->changed && n->demoted_at && !h->c.shadow) {
			hstats_observe(&h->stats.switch_time, mono - n->demoted_at);
			n->demoted_at = 0;
		}
		n->changed = 0;
	}
	h->what[0] = 0;
	h->have_changes = 0;
}

void health__flush(health_t *h, int status_due)
{
	int any = 0;
	uint32_t now = health__wall();
	/* Cluster mode (vantage.c): only the elected instance decides, and
	 * its decisions go to etcd (@pub), not straight into the store. */
	const health_cluster_t *cl = health__cluster(h);
	int decide = !h->c.shadow && (!cl || h->cl_epoch);
	for (size_t i = 0; i < h->n && !any; i++)
		any = status_wanted(h->node[i], now, status_due);
	if (!any)
		return;
	char err[512];
	wdb_txn_t *t = wdb_begin(h->db, "health", err, sizeof(err));
	if (!t) {
		log_warning("health: %s", err);
		return;
	}
	/* The decisions go on the table this transaction holds: one
	 * changed since the last sync (a node deleted and added again, its
	 * probes removed) is mirrored first, so that nothing decided about
	 * the old table is written over the new one. */
	health__sync_in(h, t, 0);
	health_undo_log_t undo = { NULL, 0, 0 };
	h->promotions_pending = 0;
	json_t *pub = cl && decide ? json_object() : NULL;
	if (decide)
		health__repool(h, t, &undo);
	/* Status written in this transaction; marked done after the
	 * commit only. */
	size_t nst = 0;
	hnode_t **st_done = NULL;
	for (size_t i = 0; i < h->n; i++) {
		hnode_t *n = h->node[i];
		if (n->changed && decide) {
			/* S4-4: nearest rows leave a failed node at once. */
			h->steer_hard = 1;
			json_t *rec = health_record(h, n);
			if (pub)
				health__cluster_record(h, t, n, rec, pub);
			else
				wdb_set(t, WDB_HEALTH, n->id, rec);
			json_decref(rec);
		}
		if (!status_wanted(n, now, status_due))
			continue;
		if (cl)
			health__view(h, cl, n, now);
		st_done = xrealloc(st_done, (nst + 1) * sizeof(*st_done));
		st_done[nst++] = n;
		write_status(h, t, n, now);
	}
	char what[1100];
	snprintf(what, sizeof(what), "health: %s", h->what[0] ? h->what : "state");
	int64_t rc = commit_tick(h, t, cl, pub, what, err, sizeof(err));
	json_decref(pub);
	if (rc < 0)
		tick_failed(h, rc, &undo, err, sizeof(err));
	else
		tick_committed(h, st_done, nst, now);
	free(undo.u);
	free(st_done);
}
