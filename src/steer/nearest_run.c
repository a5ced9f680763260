/* SPDX-License-Identifier: MIT */
/* Nearest steering against the store (nearest_run.h): each row's
 * latencies, loads and usability gathered, nearest_step() run, and the
 * shares written into the weight row like the steering engine's, with
 * the reason in the audit record (S4-1, S4-3, S4-4, S4-5). */
#include "steer/nearest_run.h"
#include "steer/steer_run.h"
#include "store/keys.h"
#include "store/plan.h"

#include <math.h>
#include <stdarg.h>
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

/* Appends to @what (of @size, used @*len). */
static void add(char *what, size_t size, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void add(char *what, size_t size, size_t *len, const char *fmt, ...)
{
	if (*len >= size - 1)
		return;
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(what + *len, size - *len, fmt, ap);
	va_end(ap);
	if (k > 0)
		*len += (size_t)k;
	if (*len >= size)
		*len = size - 1;
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
		json_t *j = json_pack("{s:s, s:I, s:i, s:I}", "id", x->id, "base",
			(json_int_t)x->base, "ok", x->usable, "prev", (json_int_t)x->prev);
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
		const char *id = json_string_value(json_object_get(e, "id"));
		if (!id)
			return -1;
		snprintf(x->id, sizeof(x->id), "%s", id);
		x->base = (uint32_t)json_integer_value(json_object_get(e, "base"));
		x->usable = (int)json_integer_value(json_object_get(e, "ok"));
		x->prev = (int32_t)json_integer_value(json_object_get(e, "prev"));
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

int nearest_run_row(wdb_txn_t *t, const steer_conf_t *sc, uint32_t now,
                    const char *key, json_t *row, json_t *svc, int hard_only,
                    nearest_vantage_fn vantages, void *varg,
                    char *what, size_t size, size_t *len)
{
	char region[WDB_NAME_MAX + 1], isp[WDB_NAME_MAX + 1];
	if (wdb_row_area(key, region, isp, sizeof(region)))
		return 0;
	nearest_conf_t c;
	nearest_service_conf(svc, sc, &c);
	json_t *weights = json_object_get(row, "weights");
	json_t *applied = plan_row_weights(row, 1);
	int steered = applied != weights;
	json_t *state = wdb_get(t, WDB_STEER, key);
	if (!json_is_string(json_object_get(state, "mode")) ||
	    strcmp(json_string_value(json_object_get(state, "mode")), "nearest") != 0) {
		/* The steering engine's state: nearest starts afresh. */
		json_decref(state);
		state = NULL;
	}
	if (hard_only && !state) {
		return 0;
	}
	json_t *snodes = json_object_get(state, "nodes");
	const char *id0;
	json_t *w0;

	/* S4-4: an operator's change took effect on the row.  A rewritten
	 * row (weight set) carries the operator's weights only: its last
	 * shares come back from the state, so that the row goes on as
	 * nearest steering left it, less the nodes taken out. */
	int restore = state && !steered;
	json_t *sshares = json_object();
	if (restore) {
		json_object_foreach(snodes, id0, w0)
			json_object_set(sshares, id0, json_object_get(w0, "share"));
	}
	static nearest_in_t in[STEER_MAX_NODES];
	static nearest_out_t out[STEER_MAX_NODES];
	static const char *gone[STEER_MAX_NODES];
	static char src[STEER_MAX_NODES][300];
	static nearest_vantage_t vt[NEAREST_VANTAGE_MAX];
	unsigned n = 0;
	const char *id;
	json_t *w;
	json_object_foreach(weights, id, w) {
		if (n == STEER_MAX_NODES)
			break;
		nearest_in_t *x = &in[n++];
		memset(x, 0, sizeof(*x));
		snprintf(x->id, sizeof(x->id), "%s", id);
		x->base = (uint32_t)json_integer_value(w);
		x->prev = steered ? (int32_t)json_integer_value(json_object_get(applied, id)) :
		          restore ? (int32_t)json_integer_value(json_object_get(sshares, id)) : -1;
		json_t *sn = json_object_get(snodes, id);
		if ((x->has_ema = json_is_number(json_object_get(sn, "ema"))))
			x->ema = json_number_value(json_object_get(sn, "ema"));
		json_t *node = wdb_get(t, WDB_NODE, id);
		gone[n - 1] = x->base ? node_out(node) : "has weight 0";
		x->usable = node_out(node) == NULL;
		json_decref(node);
		/* S4-1, S4-6: the clients' pushed latency for the row, or
		 * the probes of the name servers in their region. */
		double agg, pushed = 0;
		int level = 0;
		if (!steer__row_input(t, sc, now, id, region, isp, 1, &agg, &pushed, &level))
			level = 0;
		unsigned nv = vantages ? vantages(varg, id, vt, NEAREST_VANTAGE_MAX) : 0;
		uint32_t used;
		uint32_t fresh = sc->stale > NEAREST_VIEW_AGE ? (uint32_t)sc->stale :
		                 NEAREST_VIEW_AGE;
		nearest_src_t from = nearest_latency_source(level, pushed, vt, nv, region, isp,
		                                            now, fresh, &x->latency, &used);
		x->has_latency = from != NEAREST_SRC_NONE;
		source_text(from, vt, nv, used, src[n - 1], sizeof(src[n - 1]));
		/* S4-3, S1-6: the load is the pushed bandwidth, in percent
		 * of the node's capacity, while it is fresh. */
		json_t *m = wdb_get(t, WDB_METRICS, id);
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
	/* Nodes with a share, or the row's choice, that have left the row
	 * since: in the step as taken out (weight 0, not usable), so that
	 * their share moves now; not written back. */
	unsigned nreal = n;
	const char *scur = json_string_value(json_object_get(state, "current"));
	json_object_foreach(snodes, id0, w0) {
		if (n == STEER_MAX_NODES || json_object_get(weights, id0) ||
		    (json_integer_value(json_object_get(w0, "share")) <= 0 &&
		     !(scur && strcmp(scur, id0) == 0)))
			continue;
		nearest_in_t *x = &in[n];
		memset(x, 0, sizeof(*x));
		snprintf(x->id, sizeof(x->id), "%s", id0);
		x->prev = (int32_t)json_integer_value(json_object_get(w0, "share"));
		gone[n++] = "left the row";
	}
	json_decref(sshares);
	nearest_row_t was = { -1, -1, 0 }, nr;
	if (state) {
		was.current = index_of(in, n, json_string_value(json_object_get(state, "current")));
		was.challenger = index_of(in, n, json_string_value(json_object_get(state,
		                                                    "challenger")));
		was.streak = (unsigned)json_integer_value(json_object_get(state, "streak"));
	}
	nearest_verdict_t v = nearest_step(&c, n, in, &was, hard_only, &nr, out);
	/* Between evaluations nothing is stepped: the state stays as the
	 * last evaluation left it, and a rewritten row gets its shares
	 * back. */
	int keep_state = hard_only && v == NEAREST_KEEP;
	if (keep_state && !restore) {
		json_decref(state);
		return 0;
	}

	/* The reason, worded once for the log, the audit and explain. */
	char why[600], a[40], b[40];
	size_t wl = 0;
	why[0] = 0;
	const char *cur = nr.current >= 0 ? in[nr.current].id : NULL;
	const char *old = was.current >= 0 ? in[was.current].id : NULL;
	switch (v) {
	case NEAREST_FIRST:
		add(why, sizeof(why), &wl, "%s is the nearest (%s)", cur,
		    lat_text(&out[nr.current], a, sizeof(a)));
		break;
	case NEAREST_SWITCH:
		add(why, sizeof(why), &wl, "%s -> %s: %s against %s, better by more than %g%s "
		    "in %d evaluations", old, cur, lat_text(&out[nr.current], a, sizeof(a)),
		    lat_text(&out[was.current], b, sizeof(b)), c.margin,
		    c.margin_ms ? " ms" : "%", NEAREST_CONFIRM);
		break;
	case NEAREST_PENDING:
		add(why, sizeof(why), &wl, "%s stays: %s (%s) better than %s (%s) by more than "
		    "%g%s, %u of %d evaluations", cur, in[nr.challenger].id,
		    lat_text(&out[nr.challenger], a, sizeof(a)), cur,
		    lat_text(&out[nr.current], b, sizeof(b)), c.margin,
		    c.margin_ms ? " ms" : "%", nr.streak, NEAREST_CONFIRM);
		break;
	case NEAREST_HARD:
		if (old && strcmp(old, cur) != 0) {
			add(why, sizeof(why), &wl, "%s %s, %s at once", old,
			    gone[was.current] ? gone[was.current] : "failed hard", cur);
		} else {
			for (unsigned i = 0; i < n; i++)
				if (in[i].prev > 0 && gone[i])
					add(why, sizeof(why), &wl, "%s %s, ", in[i].id, gone[i]);
			add(why, sizeof(why), &wl, "its share moves at once");
		}
		break;
	case NEAREST_NONE:
		add(why, sizeof(why), &wl, "no usable node, shares unchanged");
		break;
	default:
		add(why, sizeof(why), &wl, "%s stays the nearest (%s)", cur ? cur : "-",
		    cur ? lat_text(&out[nr.current], a, sizeof(a)) : "-");
		break;
	}
	for (unsigned i = 0; i < n; i++)
		if (out[i].limits & (NEAREST_LIM_CAP | NEAREST_LIM_FULL) && out[i].rank)
			add(why, sizeof(why), &wl, "; %s at %.0f%% of capacity, keeps %.2f%% of "
			    "the row (headroom %g%%)", in[i].id, in[i].load, out[i].share / 100.0,
			    c.headroom);

	json_decref(state);
	/* Between evaluations the state's per-node figures stay as the last
	 * evaluation left them. */
	if (!keep_state) {
		json_t *nodes = json_object();
		for (unsigned i = 0; i < nreal; i++) {
			/* A node out of the ranking had no limit set and its
			 * load was not acted on: it comes back without a limit
			 * and its load counts as new then. */
			json_t *j = json_pack("{s:i, s:f, s:I, s:i, s:b}", "rank", (int)out[i].rank,
				"cap", out[i].rank ? out[i].cap : 1.0, "share",
				(json_int_t)out[i].share, "limits", (int)out[i].limits, "usable",
				in[i].usable);
			if (out[i].has_ema)
				json_object_set_new(j, "ema", json_real(out[i].ema));
			if (in[i].has_latency && !hard_only) {
				json_object_set_new(j, "latency", json_real(in[i].latency));
				json_object_set_new(j, "source", json_string(src[i]));
			}
			if (in[i].has_load)
				json_object_set_new(j, "load", json_real(in[i].load));
			if (in[i].has_load && out[i].rank)
				json_object_set_new(j, "load_at", json_integer(in[i].load_at));
			json_object_set_new(nodes, in[i].id, j);
		}
		json_t *st = json_pack("{s:I, s:s, s:s, s:s, s:o}", "at", (json_int_t)now, "mode",
			"nearest", "verdict", nearest_verdict_name(v), "reason", why, "nodes", nodes);
		if (cur)
			json_object_set_new(st, "current", json_string(cur));
		if (nr.challenger >= 0) {
			json_object_set_new(st, "challenger", json_string(in[nr.challenger].id));
			json_object_set_new(st, "streak", json_integer(nr.streak));
		}
		json_object_set_new(st, "margin", json_string(json_string_value(json_object_get(
			svc, "switch_margin")) ? json_string_value(json_object_get(svc, "switch_margin")) :
			NEAREST_MARGIN_DEFAULT));
		json_object_set_new(st, "headroom", json_real(c.headroom));
		int rc = wdb_set(t, WDB_STEER, key, st);
		json_decref(st);
		if (rc)
			return rc;
	}
	int changed = restore;
	for (unsigned i = 0; i < nreal; i++)
		changed |= in[i].prev < 0 || (uint32_t)in[i].prev != out[i].share;
	if (v == NEAREST_PENDING || (changed && v != NEAREST_NONE))
		add(what, size, len, "%snearest %s: %s", *len ? "; " : "", key, why);
	if (!changed || v == NEAREST_NONE)
		return 0;
	json_t *sw = json_object();
	add(what, size, len, "; shares");
	for (unsigned i = 0; i < nreal; i++) {
		json_object_set_new(sw, in[i].id, json_integer(out[i].share));
		if (out[i].share || in[i].prev > 0)
			add(what, size, len, " %s %.2f%%", in[i].id, out[i].share / 100.0);
	}
	json_t *nw = json_deep_copy(row);
	json_object_set_new(nw, "steer", json_pack("{s:o, s:I, s:s, s:s, s:s, s:o}",
		"weights", sw, "at", (json_int_t)now, "verdict", nearest_verdict_name(v),
		"mode", "nearest", "reason", why, "decision",
		decision_json(&c, now, hard_only, &was, n, nreal, in, out)));
	int rc = wdb_set(t, WDB_WEIGHT, key, nw);
	json_decref(nw);
	return rc ? rc : 1;
}
