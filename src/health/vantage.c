/* SPDX-License-Identifier: MIT */
/* The health thread in cluster mode (S4-6: a per-entry probe matrix,
 * never one global boolean).  Every instance publishes its own view of
 * each node through the cluster's hooks; only the elected instance
 * decides, from the combined verdict of all live instances' views, and
 * its decisions (health records with standby promotions and cutover
 * phases) go to etcd, from where every instance's store gets them.
 *
 * Thread safety: health thread only (the hooks are set by health_start()
 * before the thread runs). */
#include "config.h"
#include "health/health_int.h"
#include "common/log.h"
#include "common/util.h"

#include <stdio.h>
#include <string.h>

verdict_state_t health__decided(const health_t *h, const hnode_t *n)
{
	return h->cl_epoch ? (verdict_state_t)n->cl.state : n->v.state;
}

/* The failing vantages of a stored record ("partial" or "down_from"). */
static void failing_of(json_t *rec, char *out, size_t size)
{
	json_t *arr = json_object_get(rec, "down_from");
	size_t i, l = 0;
	json_t *v;
	out[0] = 0;
	json_array_foreach(arr, i, v)
		if (l < size)
			l += (size_t)snprintf(out + l, size - l, "%s%s", i ? " " : "",
			                      json_string_value(v) ?: "");
}

/* Elected: the decisions in the store (made by the previous leader) are
 * taken as this instance's own, so that nothing is decided twice, and
 * every node is looked at again with the views of now. */
static void take_over(health_t *h)
{
	wdb_txn_t *t = wdb_begin_read(h->db);
	for (size_t i = 0; i < h->n; i++) {
		hnode_t *n = h->node[i];
		json_t *rec = t ? wdb_get(t, WDB_HEALTH, n->id) : NULL;
		n->promoted = json_is_true(json_object_get(rec, "promoted"));
		const char *pf = json_string_value(json_object_get(rec, "promoted_for"));
		snprintf(n->promoted_for, sizeof(n->promoted_for), "%s", pf ? pf : "");
		memset(&n->cl, 0, sizeof(n->cl));
		n->cl.state = verdict_state_parse(json_string_value(json_object_get(rec, "state")));
		n->cl.pct = rec ? (unsigned)json_integer_value(json_object_get(rec,
		                                                "effective_weight_pct")) : 100;
		json_t *vt = json_object_get(rec, "vantages");
		n->cl.views = (unsigned)json_integer_value(json_object_get(vt, "views"));
		n->cl.down = (unsigned)json_integer_value(json_object_get(vt, "down"));
		n->cl.quorum = (unsigned)json_integer_value(json_object_get(vt, "quorum"));
		failing_of(rec, n->cl.failing, sizeof(n->cl.failing));
		/* A cutover phase this instance reached while another
		 * decided: its own news now, since it writes it. */
		const char *ph = json_string_value(json_object_get(rec, "cutover_phase"));
		if (n->cut.phase != CUT_NONE &&
		    strcmp(ph ? ph : "none", cutover_phase_name(n->cut.phase)) != 0)
			health__note(h, "node %s cutover %s %s weight %u%% prewarm %u%%", n->id,
			             n->cut.window, cutover_phase_name(n->cut.phase),
			             n->cut.weight_pct, n->cut.prewarm_pct);
		n->cl_since = (uint32_t)json_integer_value(json_object_get(rec, "since"));
		n->cl_moved = (uint32_t)json_integer_value(json_object_get(rec, "moved_at"));
		n->changed = 1;
		json_decref(rec);
	}
	if (t)
		wdb_abort(t);
}

/* The combined verdict of every node again, after a view moved. */
static void recombine(health_t *h, const health_cluster_t *cl)
{
	uint32_t now = health__wall();
	for (size_t i = 0; i < h->n; i++) {
		hnode_t *n = h->node[i];
		health_combined_t c;
		cl->combined(cl->arg, n->id, &c);
		/* No vantage has a verdict (their instances are starting,
		 * or gone): the last decision stands. */
		if (c.state == VERDICT_UNKNOWN && n->cl.state != VERDICT_UNKNOWN)
			continue;
		if (c.state == n->cl.state && c.pct == n->cl.pct && c.views == n->cl.views &&
		    c.down == n->cl.down && c.quorum == n->cl.quorum &&
		    strcmp(c.failing, n->cl.failing) == 0)
			continue;
		int moved = (c.state == VERDICT_DEMOTED) != (n->cl.state == VERDICT_DEMOTED) ||
		            c.pct != n->cl.pct;
		if (c.state != n->cl.state) {
			char seen[300];
			if (c.down)
				snprintf(seen, sizeof(seen), "down from %u of %u vantages: %s",
				         c.down, c.views, c.failing);
			else
				snprintf(seen, sizeof(seen), "%s from all %u vantages",
				         verdict_state_name(c.state), c.views);
			log_info("node %s: %s -> %s: %s (%u take it out)", n->id,
			         verdict_state_name(n->cl.state), verdict_state_name(c.state),
			         seen, c.quorum);
			health__note(h, "node %s %s: %s", n->id, verdict_state_name(c.state), seen);
			n->cl_since = now;
		} else if (strcmp(c.failing, n->cl.failing) != 0 && c.down) {
			log_info("node %s: partial: down from %s only (%u of %u vantages, %u "
			         "take it out): stays in the answers", n->id, c.failing,
			         c.down, c.views, c.quorum);
			health__note(h, "node %s partial: down from %s", n->id, c.failing);
		}
		if (moved)
			n->cl_moved = now;
		n->cl = c;
		n->changed = 1;
	}
}

const health_cluster_t *health__cluster(health_t *h)
{
	const health_cluster_t *cl = __atomic_load_n(&h->cl, __ATOMIC_ACQUIRE);
	if (!cl)
		return NULL;
	int64_t ep = cl->leader(cl->arg);
	if (ep != h->cl_epoch) {
		if (ep) {
			log_notice("cluster: elected (epoch %lld): this instance makes the "
			           "automatic decisions", (long long)ep);
			take_over(h);
		} else {
			log_notice("cluster: no longer the elected instance: its decisions "
			           "come from etcd");
		}
		h->cl_epoch = ep;
		h->cl_gen = 0;
	}
	if (ep) {
		uint64_t g = cl->views_gen(cl->arg);
		if (g != h->cl_gen || !g) {
			h->cl_gen = g;
			recombine(h, cl);
		}
	}
	return cl;
}

void health__view(health_t *h, const health_cluster_t *cl, const hnode_t *n,
                  uint32_t now)
{
	json_t *probes = json_array();
	for (unsigned k = 0; k < n->nprobe; k++) {
		const hprobe_t *p = &n->probe[k];
		if (!p->last_time)
			continue;
		json_array_append_new(probes, json_pack("{s:s, s:b, s:i, s:i, s:s, s:I}",
			"probe", p->text,
			"ok", p->last.connected && p->last.status_ok && p->last.body_ok,
			"connect_ms", (int)p->last.connect_ms, "total_ms", (int)p->last.total_ms,
			"error", p->last.error, "time", (json_int_t)p->last_time));
	}
	verdict_state_t s = n->unmonitored ? VERDICT_UNKNOWN : n->v.state;
	json_t *v = json_pack("{s:s, s:i, s:f, s:b, s:o, s:I}",
		"state", verdict_state_name(s),
		"pct", (int)verdict_node_weight_pct(&h->c, &n->v),
		"score", n->last.unknown ? -1.0 : n->last.score,
		"stale", n->v.stale, "probes", probes, "time", (json_int_t)now);
	cl->view(cl->arg, n->id, v);
	json_decref(v);
}

/* The fields of a health record that make the decision: a record whose
 * fields are all equal to the stored one's is not written again. */
static const char *const decision_fields[] = {
	"state", "usable", "effective_weight_pct", "promoted", "promoted_for",
	"cutover_pct", "prewarm_pct", "cutover_phase", "cutover_window",
	"down_from", "vantages", "unmonitored", "short_until", NULL
};

void health__cluster_record(health_t *h, wdb_txn_t *t, const hnode_t *n,
                            json_t *rec, json_t *out)
{
	const health_combined_t *c = &n->cl;
	json_object_set_new(rec, "state", json_string(verdict_state_name(c->state)));
	json_object_set_new(rec, "usable", json_boolean(c->state != VERDICT_DEMOTED));
	json_object_set_new(rec, "effective_weight_pct", json_integer(c->pct));
	json_object_set_new(rec, "since", json_integer(n->cl_since));
	json_object_set_new(rec, "moved_at", json_integer(n->cl_moved));
	uint32_t su = n->cl_moved ? n->cl_moved + (uint32_t)h->c.settle : 0;
	if (n->cut.short_until > su)
		su = n->cut.short_until;
	json_object_set_new(rec, "short_until", json_integer(su));
	/* The gray switch and staleness are this instance's own view: the
	 * combined weight already holds what each view moved away. */
	json_object_set_new(rec, "gray", json_false());
	json_object_del(rec, "gray_pct");
	json_object_del(rec, "gray_step_at");
	json_object_del(rec, "gray_held");
	json_object_del(rec, "stale");
	char why[300];
	if (c->state == VERDICT_UNKNOWN)
		snprintf(why, sizeof(why), "no vantage has a verdict yet");
	else if (c->state == VERDICT_DEMOTED)
		snprintf(why, sizeof(why), "down from %u of %u vantages (%s), %u take it out",
		         c->down, c->views, c->failing, c->quorum);
	else if (c->down)
		snprintf(why, sizeof(why), "partial: down from %s only (%u of %u vantages, "
		         "%u take it out)", c->failing, c->down, c->views, c->quorum);
	else
		snprintf(why, sizeof(why), "%s from all %u vantages", verdict_state_name(c->state),
		         c->views);
	json_object_set_new(rec, "reason", json_string(why));
	json_object_set_new(rec, "vantages", json_pack("{s:i, s:i, s:i}", "views",
	                    (int)c->views, "down", (int)c->down, "quorum", (int)c->quorum));
	if (c->down) {
		json_t *arr = json_array();
		char buf[sizeof(c->failing)];
		snprintf(buf, sizeof(buf), "%s", c->failing);
		for (char *sp, *tok = strtok_r(buf, " ", &sp); tok; tok = strtok_r(NULL, " ", &sp))
			json_array_append_new(arr, json_string(tok));
		json_object_set_new(rec, "down_from", arr);
		if (c->state != VERDICT_DEMOTED)
			json_object_set_new(rec, "partial", json_true());
	}
	json_t *old = wdb_get(t, WDB_HEALTH, n->id);
	/* A node without probes keeps only a promotion or a cutover effect
	 * in its record (the store strips the rest): with neither, there is
	 * nothing to write. */
	if (!old && !n->nprobe && !n->promoted && n->cut.phase == CUT_NONE)
		return;
	int same = old != NULL;
	for (const char *const *f = decision_fields; same && *f; f++) {
		json_t *a = json_object_get(old, *f), *b = json_object_get(rec, *f);
		same = (!a && !b) || (a && b && json_equal(a, b));
	}
	json_decref(old);
	if (!same)
		json_object_set(out, n->id, rec);
}
