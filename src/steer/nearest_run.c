/* SPDX-License-Identifier: MIT */
/* Nearest steering against the store (nearest_run.h): each row's
 * latencies, loads and usability gathered, nearest_step() run, and the
 * shares written into the weight row like the steering engine's, with
 * the reason in the audit record (S4-1, S4-3, S4-4, S4-5). */
#include "steer/nearest_run.h"
#include "steer/decide.h"
#include "steer/steer_run.h"
#include "store/keys.h"
#include "store/plan.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int nearest_service_on(json_t *svc)
{
	const char *st = json_string_value(json_object_get(svc, "steering"));
	return st && strcmp(st, "nearest") == 0;
}

void nearest_service_conf(json_t *svc, const steer_conf_t *sc, nearest_conf_t *c)
{
	memset(c, 0, sizeof(*c));
	const char *m = json_string_value(json_object_get(svc, "switch_margin"));
	if (!m || nearest_margin_parse(m, &c->margin, &c->margin_ms))
		nearest_margin_parse(NEAREST_MARGIN_DEFAULT, &c->margin, &c->margin_ms);
	json_t *h = json_object_get(svc, "headroom");
	c->headroom = json_is_number(h) ? json_number_value(h) : NEAREST_HEADROOM_DEFAULT;
	/* S4-7: the same smoothing as the steering engine's (tau). */
	c->alpha = sc->tau > 0 ? 1 - exp(-sc->interval / sc->tau) : 1;
	c->min_step = sc->min_step;
}

/* Why node record @node may not take answers (what plan.c would not let
 * answer, less the derating: a hard failure is a removal, S4-4), in
 * words for a reason ("is down"); NULL when it may. */
static const char *node_out(json_t *node)
{
	if (!node)
		return "was deleted";
	const char *admin = json_string_value(json_object_get(node, "admin"));
	const char *pool = json_string_value(json_object_get(node, "pool"));
	json_t *h = json_object_get(node, "health");
	if (admin && strcmp(admin, "down") == 0)
		return "is down";
	if (admin && strcmp(admin, "drain") == 0)
		return "drained";
	if (admin && strcmp(admin, "up") == 0)
		return NULL;
	if (pool && strcmp(pool, "standby") == 0 &&
	    !json_is_true(json_object_get(h, "promoted")))
		return "is a standby";
	return json_is_false(json_object_get(h, "usable")) ? "failed hard" : NULL;
}

static int index_of(const nearest_in_t *in, unsigned n, const char *id)
{
	for (unsigned i = 0; id && i < n; i++)
		if (strcmp(in[i].id, id) == 0)
			return (int)i;
	return -1;
}

/* The text of node @i's latency for a reason. */
static const char *lat_text(const nearest_out_t *o, char *buf, size_t size)
{
	if (o->has_ema)
		snprintf(buf, size, "%.0f ms", o->ema);
	else
		snprintf(buf, size, "no latency data");
	return buf;
}

/* Decision codec --------------------------------------------------- */

/* The decision of one step: everything nearest_step() read, so that
 * replaying it gives the same shares (S3-7), with the shares it gave the
 * row's nodes (@nreal of @n: the rest had left the row). */
static json_t *decision_json(const nearest_conf_t *c, uint32_t now, int hard_only,
                             const nearest_row_t *was, unsigned n, unsigned nreal,
                             const nearest_in_t *in, const nearest_out_t *out)
{
	json_t *ins = json_array(), *outs = json_object();
	for (unsigned i = 0; i < n; i++) {
		const nearest_in_t *x = &in[i];
		json_t *j = steer_decision_in(x->id, x->base, x->prev);
		json_object_set_new(j, "ok", json_integer(x->usable));
		if (x->has_latency)
			json_object_set_new(j, "l", json_real(x->latency));
		if (x->has_ema)
			json_object_set_new(j, "ema", json_real(x->ema));
		if (x->has_load) {
			json_object_set_new(j, "ld", json_real(x->load));
			json_object_set_new(j, "new", json_boolean(x->load_new));
			json_object_set_new(j, "cp", json_real(x->cap_prev));
		}
		json_array_append_new(ins, j);
		if (i < nreal)
			json_object_set_new(outs, x->id, json_integer(out[i].share));
	}
	return json_pack("{s:I, s:b, s:{s:f, s:i, s:f, s:f, s:f}, s:[i, i, i], s:o, s:o}",
		"at", (json_int_t)now, "hard", hard_only, "conf", "margin", c->margin,
		"margin_ms", c->margin_ms, "headroom", c->headroom, "alpha", c->alpha,
		"min_step", c->min_step, "was", was->current, was->challenger, (int)was->streak,
		"in", ins, "out", outs);
}

int nearest_decision_read(json_t *d, nearest_conf_t *c, uint32_t *now, int *hard_only,
                          nearest_row_t *was, unsigned *n, nearest_in_t *in)
{
	json_t *cj = json_object_get(d, "conf"), *w = json_object_get(d, "was");
	json_t *ins = json_object_get(d, "in");
	if (!json_is_object(cj) || json_array_size(w) != 3 || !json_is_array(ins) ||
	    json_array_size(ins) > STEER_MAX_NODES)
		return -1;
	memset(c, 0, sizeof(*c));
	c->margin = json_number_value(json_object_get(cj, "margin"));
	c->margin_ms = (int)json_integer_value(json_object_get(cj, "margin_ms"));
	c->headroom = json_number_value(json_object_get(cj, "headroom"));
	c->alpha = json_number_value(json_object_get(cj, "alpha"));
	c->min_step = json_number_value(json_object_get(cj, "min_step"));
	*now = (uint32_t)json_integer_value(json_object_get(d, "at"));
	*hard_only = json_is_true(json_object_get(d, "hard"));
	was->current = (int)json_integer_value(json_array_get(w, 0));
	was->challenger = (int)json_integer_value(json_array_get(w, 1));
	was->streak = (unsigned)json_integer_value(json_array_get(w, 2));
	size_t i;
	json_t *e;
	*n = 0;
	json_array_foreach(ins, i, e) {
		nearest_in_t *x = &in[i];
		memset(x, 0, sizeof(*x));
		if (steer_decision_node(e, x->id, sizeof(x->id), &x->base, &x->prev))
			return -1;
		x->usable = (int)json_integer_value(json_object_get(e, "ok"));
		if ((x->has_latency = json_is_number(json_object_get(e, "l"))))
			x->latency = json_number_value(json_object_get(e, "l"));
		if ((x->has_ema = json_is_number(json_object_get(e, "ema"))))
			x->ema = json_number_value(json_object_get(e, "ema"));
		if ((x->has_load = json_is_number(json_object_get(e, "ld")))) {
			x->load = json_number_value(json_object_get(e, "ld"));
			x->load_new = json_is_true(json_object_get(e, "new"));
			x->cap_prev = json_number_value(json_object_get(e, "cp"));
		}
		(*n)++;
	}
	return 0;
}

/* The oldest view of a live vantage that is read, in seconds, unless
 * steer.stale is longer: a view whose verdict holds is published again
 * only every 30 s (cluster.c, VIEW_REFRESH_MS), so three refreshes.  A
 * vantage that dies takes its views with it (its lease). */
#define NEAREST_VIEW_AGE 90

/* The words for where node latency @src came from (@v, @used as
 * nearest_latency_source() left them) into @buf. */
static void source_text(nearest_src_t src, const nearest_vantage_t *v, unsigned nv,
                        uint32_t used, char *buf, size_t size)
{
	static const char *const words[] = { "none", "pushed for the row",
		"probes from its region and ISP", "probes from its region",
		"pushed for the ISP or the node" };
	size_t l = (size_t)snprintf(buf, size, "%s", words[src]);
	for (unsigned i = 0, k = 0; i < nv && l < size; i++)
		if (used & (1u << i))
			l += (size_t)snprintf(buf + l, size - l, "%s%s (%s/%s)", k++ ? ", " : ": ",
			                      v[i].name, v[i].region, v[i].isp);
}

/* One evaluation of a row: what its steps share. */
typedef struct {
	wdb_txn_t *t;
	const steer_conf_t *sc;
	uint32_t now;
	const char *key;
	json_t *svc;
	int hard_only;
	nearest_vantage_fn vantages;
	void *varg;
	nearest_conf_t c;
	steer_walk_t w;
	int restore;          /* the row's last shares come from the state */
	unsigned n, nreal;    /* nodes in the step, of them in the row */
	nearest_row_t was, nr;
	nearest_verdict_t v;
	char why[600];        /* the reason, for the log, the audit, explain */
	size_t wl;
} nrun_t;

static nearest_in_t step_in[STEER_MAX_NODES];
static nearest_out_t step_out[STEER_MAX_NODES];
static const char *gone[STEER_MAX_NODES];    /* why a node may not answer */
static char src[STEER_MAX_NODES][300];       /* where its latency came from */

/* Node @x's usability, latency and load.  S4-1, S4-6: the clients'
 * pushed latency for the row, or the probes of the name servers in
 * their region; S4-3, S1-6: the load is the pushed bandwidth, in
 * percent of the node's capacity, while it is fresh. */
static void near_node(nrun_t *r, nearest_in_t *x, json_t *sn, unsigned i)
{
	static nearest_vantage_t vt[NEAREST_VANTAGE_MAX];
	const steer_conf_t *sc = r->sc;
	uint32_t now = r->now;
	json_t *node = wdb_get(r->t, WDB_NODE, x->id);
	gone[i] = x->base ? node_out(node) : "has weight 0";
	x->usable = node_out(node) == NULL;
	json_decref(node);
	double agg, pushed = 0;
	int level = 0;
	if (!steer__row_input(r->t, sc, now, x->id, r->w.region, r->w.isp, 1, &agg,
	                      &pushed, &level))
		level = 0;
	unsigned nv = r->vantages ? r->vantages(r->varg, x->id, vt, NEAREST_VANTAGE_MAX) : 0;
	uint32_t used;
	uint32_t fresh = sc->stale > NEAREST_VIEW_AGE ? (uint32_t)sc->stale :
	                 NEAREST_VIEW_AGE;
	nearest_src_t from = nearest_latency_source(level, pushed, vt, nv, r->w.region,
	                                            r->w.isp, now, fresh, &x->latency,
	                                            &used);
	x->has_latency = from != NEAREST_SRC_NONE;
	source_text(from, vt, nv, used, src[i], sizeof(src[i]));
	json_t *m = wdb_get(r->t, WDB_METRICS, x->id);
	json_t *bw = json_object_get(m, "bandwidth");
	uint32_t bt = (uint32_t)json_integer_value(json_object_get(bw, "time"));
	if (bw && (bt >= now || now - bt <= sc->stale)) {
		x->has_load = 1;
		x->load = json_number_value(json_object_get(bw, "value"));
		x->load_at = bt;
		json_t *was_at = json_object_get(sn, "load_at");
		x->load_new = !json_is_integer(was_at) ||
		              (uint32_t)json_integer_value(was_at) < bt;
		json_t *cp = json_object_get(sn, "cap");
		x->cap_prev = json_is_number(cp) ? json_number_value(cp) : 1;
	}
	json_decref(m);
}

/* The step's inputs: the row's nodes, then those with a share, or the
 * row's choice, that have left the row since -- in the step as taken
 * out (weight 0, not usable), so that their share moves now; not
 * written back -- and the row's choice and challenger. */
static void near_inputs(nrun_t *r)
{
	json_t *snodes = json_object_get(r->w.state, "nodes");
	const char *id0;
	json_t *w0;
	/* S4-4: an operator's change took effect on the row.  A rewritten
	 * row (weight set) carries the operator's weights only: its last
	 * shares come back from the state, so that the row goes on as
	 * nearest steering left it, less the nodes taken out. */
	r->restore = r->w.state && !r->w.steered;
	static steer_walk_node_t wn[STEER_MAX_NODES];
	unsigned n = steer_walk_nodes(&r->w, wn);
	for (unsigned i = 0; i < n; i++) {
		nearest_in_t *x = &step_in[i];
		memset(x, 0, sizeof(*x));
		snprintf(x->id, sizeof(x->id), "%s", wn[i].id);
		x->base = wn[i].base;
		x->prev = r->w.steered ? wn[i].applied : !r->restore ? -1 :
		          (int32_t)json_integer_value(json_object_get(wn[i].sn, "share"));
		x->has_ema = wn[i].has_ema;
		x->ema = wn[i].ema;
		near_node(r, x, wn[i].sn, i);
	}
	r->nreal = n;
	const char *scur = json_string_value(json_object_get(r->w.state, "current"));
	json_object_foreach(snodes, id0, w0) {
		if (n == STEER_MAX_NODES || json_object_get(r->w.weights, id0) ||
		    (json_integer_value(json_object_get(w0, "share")) <= 0 &&
		     !(scur && strcmp(scur, id0) == 0)))
			continue;
		nearest_in_t *x = &step_in[n];
		memset(x, 0, sizeof(*x));
		snprintf(x->id, sizeof(x->id), "%s", id0);
		x->prev = (int32_t)json_integer_value(json_object_get(w0, "share"));
		gone[n++] = "left the row";
	}
	r->n = n;
	r->was = (nearest_row_t){ -1, -1, 0 };
	if (r->w.state) {
		json_t *st = r->w.state;
		r->was.current = index_of(step_in, n, json_string_value(json_object_get(st, "current")));
		r->was.challenger = index_of(step_in, n, json_string_value(json_object_get(st,
		                                                      "challenger")));
		r->was.streak = (unsigned)json_integer_value(json_object_get(st, "streak"));
	}
}

/* The reason of verdict r->v, worded once into r->why. */
static void near_reason(nrun_t *r)
{
	char a[40], b[40];
	char *why = r->why;
	size_t size = sizeof(r->why), *wl = &r->wl;
	const nearest_row_t *nr = &r->nr, *was = &r->was;
	const nearest_conf_t *c = &r->c;
	const char *cur = nr->current >= 0 ? step_in[nr->current].id : NULL;
	const char *old = was->current >= 0 ? step_in[was->current].id : NULL;
	*wl = 0;
	why[0] = 0;
	switch (r->v) {
	case NEAREST_FIRST:
		steer_note(why, size, wl, "%s is the nearest (%s)", cur,
		           lat_text(&step_out[nr->current], a, sizeof(a)));
		break;
	case NEAREST_SWITCH:
		steer_note(why, size, wl, "%s -> %s: %s against %s, better by more than "
		           "%g%s in %d evaluations", old, cur,
		           lat_text(&step_out[nr->current], a, sizeof(a)),
		           lat_text(&step_out[was->current], b, sizeof(b)), c->margin,
		           c->margin_ms ? " ms" : "%", NEAREST_CONFIRM);
		break;
	case NEAREST_PENDING:
		steer_note(why, size, wl, "%s stays: %s (%s) better than %s (%s) by more "
		           "than %g%s, %u of %d evaluations", cur, step_in[nr->challenger].id,
		           lat_text(&step_out[nr->challenger], a, sizeof(a)), cur,
		           lat_text(&step_out[nr->current], b, sizeof(b)), c->margin,
		           c->margin_ms ? " ms" : "%", nr->streak, NEAREST_CONFIRM);
		break;
	case NEAREST_HARD:
		if (old && strcmp(old, cur) != 0) {
			steer_note(why, size, wl, "%s %s, %s at once", old,
			           gone[was->current] ? gone[was->current] : "failed hard", cur);
		} else {
			for (unsigned i = 0; i < r->n; i++)
				if (step_in[i].prev > 0 && gone[i])
					steer_note(why, size, wl, "%s %s, ", step_in[i].id, gone[i]);
			steer_note(why, size, wl, "its share moves at once");
		}
		break;
	case NEAREST_NONE:
		steer_note(why, size, wl, "no usable node, shares unchanged");
		break;
	default:
		steer_note(why, size, wl, "%s stays the nearest (%s)", cur ? cur : "-",
		           cur ? lat_text(&step_out[nr->current], a, sizeof(a)) : "-");
		break;
	}
	for (unsigned i = 0; i < r->n; i++)
		if (step_out[i].limits & (NEAREST_LIM_CAP | NEAREST_LIM_FULL) && step_out[i].rank)
			steer_note(why, size, wl, "; %s at %.0f%% of capacity, keeps %.2f%% of "
			           "the row (headroom %g%%)", step_in[i].id, step_in[i].load,
			           step_out[i].share / 100.0, c->headroom);
}

/* The row's state after the step: each node's figures and the row's
 * choice, written into the run's transaction. */
static int near_state(nrun_t *r)
{
	json_t *nodes = json_object();
	for (unsigned i = 0; i < r->nreal; i++) {
		/* A node out of the ranking had no limit set and its load
		 * was not acted on: it comes back without a limit and its
		 * load counts as new then. */
		json_t *j = json_pack("{s:i, s:f, s:I, s:i, s:b}", "rank", (int)step_out[i].rank,
			"cap", step_out[i].rank ? step_out[i].cap : 1.0, "share",
			(json_int_t)step_out[i].share, "limits", (int)step_out[i].limits, "usable",
			step_in[i].usable);
		if (step_out[i].has_ema)
			json_object_set_new(j, "ema", json_real(step_out[i].ema));
		if (step_in[i].has_latency && !r->hard_only) {
			json_object_set_new(j, "latency", json_real(step_in[i].latency));
			json_object_set_new(j, "source", json_string(src[i]));
		}
		if (step_in[i].has_load)
			json_object_set_new(j, "load", json_real(step_in[i].load));
		if (step_in[i].has_load && step_out[i].rank)
			json_object_set_new(j, "load_at", json_integer(step_in[i].load_at));
		json_object_set_new(nodes, step_in[i].id, j);
	}
	json_t *st = json_pack("{s:I, s:s, s:s, s:s, s:o}", "at", (json_int_t)r->now,
		"mode", "nearest", "verdict", nearest_verdict_name(r->v), "reason", r->why,
		"nodes", nodes);
	if (r->nr.current >= 0)
		json_object_set_new(st, "current", json_string(step_in[r->nr.current].id));
	if (r->nr.challenger >= 0) {
		json_object_set_new(st, "challenger", json_string(step_in[r->nr.challenger].id));
		json_object_set_new(st, "streak", json_integer(r->nr.streak));
	}
	const char *margin = json_string_value(json_object_get(r->svc, "switch_margin"));
	json_object_set_new(st, "margin", json_string(margin ? margin : NEAREST_MARGIN_DEFAULT));
	json_object_set_new(st, "headroom", json_real(r->c.headroom));
	int rc = wdb_set(r->t, WDB_STEER, r->key, st);
	json_decref(st);
	return rc;
}

/* The shares into weight row @row, with the decision, and the words of
 * the change into the audit note @what.  Returns 1 when the row
 * changed, 0 when not, or an error. */
static int near_write(nrun_t *r, json_t *row, char *what, size_t size, size_t *len)
{
	int changed = r->restore;
	for (unsigned i = 0; i < r->nreal; i++)
		changed |= step_in[i].prev < 0 || (uint32_t)step_in[i].prev != step_out[i].share;
	if (r->v == NEAREST_PENDING || (changed && r->v != NEAREST_NONE))
		steer_note(what, size, len, "%snearest %s: %s", *len ? "; " : "", r->key,
		           r->why);
	if (!changed || r->v == NEAREST_NONE)
		return 0;
	json_t *sw = json_object();
	steer_note(what, size, len, "; shares");
	for (unsigned i = 0; i < r->nreal; i++) {
		json_object_set_new(sw, step_in[i].id, json_integer(step_out[i].share));
		if (step_out[i].share || step_in[i].prev > 0)
			steer_note(what, size, len, " %s %.2f%%", step_in[i].id, step_out[i].share / 100.0);
	}
	json_t *nw = json_deep_copy(row);
	json_object_set_new(nw, "steer", json_pack("{s:o, s:I, s:s, s:s, s:s, s:o}",
		"weights", sw, "at", (json_int_t)r->now, "verdict", nearest_verdict_name(r->v),
		"mode", "nearest", "reason", r->why, "decision",
		decision_json(&r->c, r->now, r->hard_only, &r->was, r->n, r->nreal, step_in, step_out)));
	int rc = wdb_set(r->t, WDB_WEIGHT, r->key, nw);
	json_decref(nw);
	return rc ? rc : 1;
}

int nearest_run_row(wdb_txn_t *t, const steer_conf_t *sc, uint32_t now,
                    const char *key, json_t *row, json_t *svc, int hard_only,
                    nearest_vantage_fn vantages, void *varg,
                    char *what, size_t size, size_t *len)
{
	nrun_t r = { .t = t, .sc = sc, .now = now, .key = key, .svc = svc,
	             .hard_only = hard_only, .vantages = vantages, .varg = varg };
	if (steer_walk_begin(t, key, row, &r.w))
		return 0;
	nearest_service_conf(svc, sc, &r.c);
	const char *mode = json_string_value(json_object_get(r.w.state, "mode"));
	if (!mode || strcmp(mode, "nearest") != 0)
		steer_walk_end(&r.w);  /* the steering engine's state: afresh */
	if (hard_only && !r.w.state)
		return 0;
	near_inputs(&r);
	r.v = nearest_step(&r.c, r.n, step_in, &r.was, hard_only, &r.nr, step_out);
	/* Between evaluations nothing is stepped: the state stays as the
	 * last evaluation left it (its per-node figures too), and a
	 * rewritten row gets its shares back. */
	int keep_state = hard_only && r.v == NEAREST_KEEP;
	steer_walk_end(&r.w);
	if (keep_state && !r.restore)
		return 0;
	near_reason(&r);
	int rc = keep_state ? 0 : near_state(&r);
	return rc ? rc : near_write(&r, row, what, size, len);
}
