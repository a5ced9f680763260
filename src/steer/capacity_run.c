/* SPDX-License-Identifier: MIT */
/* The measured demand of static weight rows (S1-6, S4-3): see
 * capacity_run.h. */
#include "steer/capacity_run.h"
#include "steer/decide.h"
#include "store/plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A demand that moved less than this (relative) is not written again:
 * every write is an audited change that rebuilds the plan. */
#define CAP_DEMAND_BAND 0.05

typedef struct {
	wdb_txn_t *t;
	json_t *cache;        /* id -> node with its "health", as rebuilt */
} nodes_t;

/* The node object with its health decision, as the plan rebuild reads
 * it (store/rebuild.c), so that the shares computed here are the
 * served ones. */
static json_t *node_of(const char *id, void *arg)
{
	nodes_t *ns = arg;
	json_t *n = json_object_get(ns->cache, id);
	if (n || !(n = wdb_get(ns->t, WDB_NODE, id)))
		return n;
	json_t *h = wdb_get(ns->t, WDB_HEALTH, id);
	if (h)
		json_object_set_new(n, "health", h);
	json_object_set_new(ns->cache, id, n);
	return n;
}

/* The shares in force of @row (with its capacity record @capj) into
 * @in[0..return): the plan as encoded, each usable node's weight over
 * the usable weights, less the spill.  Also each node's capacity. */
static unsigned in_force(nodes_t *ns, json_t *row, json_t *capj, int shadow,
                         steer_in_t *in, double *cap)
{
	json_t *use = json_pack("{s:O}", "weights", json_object_get(row, "weights"));
	if (capj)
		json_object_set(use, "capacity", capj);
	uint8_t *b = NULL;
	size_t len;
	char err[200];
	plan_t p;
	unsigned n = 0;
	if (!plan_encode(use, node_of, ns, shadow, &b, &len, err, sizeof(err)) &&
	    !plan_decode(b, len, &p)) {
		double total = 0;
		for (unsigned i = 0; i < p.n; i++)
			total += p.node[i].flags & PLAN_USABLE ? p.node[i].weight : 0;
		double served = 1 - p.spill_bp / (double)PLAN_RELEASE_ALL;
		for (unsigned i = 0; i < p.n && i < STEER_MAX_NODES; i++, n++) {
			memset(&in[n], 0, sizeof(in[n]));
			snprintf(in[n].id, sizeof(in[n].id), "%.*s", p.node[i].id_len,
			         p.node[i].id);
			in[n].prev = total > 0 && (p.node[i].flags & PLAN_USABLE) ?
			             (int32_t)lround(p.node[i].weight / total * served * STEER_TOTAL) : 0;
			cap[n] = (double)json_integer_value(json_object_get(
				node_of(in[n].id, ns), "capacity"));
		}
	}
	free(b);
	json_decref(use);
	return n;
}

/* The pushed load of node @id in percent of its capacity, when it is
 * fresh under @c and newer than @since; else NaN. */
static double load_of(wdb_txn_t *t, const steer_conf_t *c, uint32_t now,
                      const char *id, uint32_t since)
{
	json_t *m = wdb_get(t, WDB_METRICS, id);
	json_t *bw = json_object_get(m, "bandwidth");
	json_t *v = json_object_get(bw, "value");
	uint32_t at = (uint32_t)json_integer_value(json_object_get(bw, "time"));
	double u = json_is_number(v) && at > since && (at >= now || now - at <= c->stale) ?
	           json_number_value(v) : NAN;
	json_decref(m);
	return u;
}

/* Whether the shares @in[0..@n) are the ones of @shares. */
static int same_shares(json_t *shares, const steer_in_t *in, unsigned n)
{
	if (!json_is_object(shares) || json_object_size(shares) != n)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		json_t *v = json_object_get(shares, in[i].id);
		if (!json_is_integer(v) || json_integer_value(v) != in[i].prev)
			return 0;
	}
	return 1;
}

static json_t *shares_json(const steer_in_t *in, unsigned n)
{
	json_t *o = json_object();
	for (unsigned i = 0; i < n; i++)
		json_object_set_new(o, in[i].id, json_integer(in[i].prev));
	return o;
}

/* The row @row with capacity record @capj (NULL: none) in place of its
 * own. */
static json_t *with_record(json_t *row, json_t *capj)
{
	json_t *nrow = json_deep_copy(row);
	if (capj)
		json_object_set_new(nrow, "capacity", capj);
	else
		json_object_del(nrow, "capacity");
	return nrow;
}

json_t *capacity_run_row(wdb_txn_t *t, const steer_conf_t *c, uint32_t now,
                         const char *key, json_t *row, json_t *svc,
                         char *what, size_t size, size_t *wl)
{
	json_t *old = json_object_get(row, "capacity");
	json_t *hr = json_object_get(svc, "headroom");
	double headroom = json_is_number(hr) ? json_number_value(hr) : c->headroom;
	nodes_t ns = { t, json_object() };
	static steer_in_t in[STEER_MAX_NODES];
	double cap[STEER_MAX_NODES], util[STEER_MAX_NODES];
	unsigned n = in_force(&ns, row, old, json_is_true(json_object_get(svc, "shadow")),
	                      in, cap);
	unsigned with_cap = 0;
	for (unsigned i = 0; i < n; i++)
		with_cap += cap[i] > 0;
	json_t *out = NULL;
	if (!with_cap) {
		/* No node of the row has a capacity: nothing to hold. */
		if (old) {
			steer_note(what, size, wl, "%scapacity %s: no node with a capacity",
			           *wl ? "; " : "", key);
			out = with_record(row, NULL);
		}
		json_decref(ns.cache);
		return out;
	}
	/* Shares other than the recorded ones: loads pushed before now
	 * were carried under those, the demand stays as measured. */
	int same = same_shares(json_object_get(old, "shares"), in, n);
	uint32_t at = same ? (uint32_t)json_integer_value(json_object_get(old, "at")) : now;
	for (unsigned i = 0; i < n; i++)
		util[i] = cap[i] > 0 ? load_of(t, c, now, in[i].id, at) : NAN;
	double was = json_number_value(json_object_get(old, "demand"));
	uint32_t measured = (uint32_t)json_integer_value(json_object_get(old, "measured"));
	double demand = same ? steer_demand(n, cap, util, in) : 0;
	if (demand > 0)
		measured = now;
	else if (was > 0 && now - measured <= c->stale)
		demand = was;      /* no fresh load under these shares yet */
	else
		demand = 0;        /* the loads went stale: no ceiling */
	int moved = (demand > 0) != (was > 0) ||
	            (demand > 0 && fabs(demand - was) > CAP_DEMAND_BAND * was);
	if (same && !moved &&
	    json_number_value(json_object_get(old, "headroom")) == headroom) {
		json_decref(ns.cache);
		return NULL;
	}
	json_t *rec = json_pack("{s:f, s:f, s:I, s:I, s:o}", "demand", moved ? demand : was,
	                        "headroom", headroom, "measured", (json_int_t)measured,
	                        "at", (json_int_t)at, "shares", shares_json(in, n));
	if (moved)
		steer_note(what, size, wl, "%scapacity %s: demand %.0f (headroom %g%%)",
		           *wl ? "; " : "", key, demand, headroom);
	else
		steer_note(what, size, wl, "%scapacity %s: shares in force recorded",
		           *wl ? "; " : "", key);
	out = with_record(row, rec);
	json_decref(ns.cache);
	return out;
}
