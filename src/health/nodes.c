/* SPDX-License-Identifier: MIT */
/* The health thread's mirror of the store's nodes: their pools, probes,
 * pushed metrics, score profiles and cutover effects, and the scores
 * computed from them.
 *
 * Thread safety: health thread only.  The store is read in one short read
 * transaction per sync (LMDB caveat: no long read transactions); what is
 * read is copied into the mirror, so nothing here holds the store open.
 *
 * Life of a node: health__sync_nodes() mirrors the node table within
 * SYNC_EVERY of a change (probes added, changed or removed take effect
 * then; a removed probe is cancelled at once; pushed metrics are read
 * then too).  A new node starts from its persisted decision, never from
 * a blind "up". */
#include "config.h"
#include "health/health_int.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

hnode_t *health__find_node(health_t *h, const char *id, size_t *pos)
{
	size_t lo = 0, hi = h->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(h->node[mid]->id, id);
		if (c == 0) {
			if (pos)
				*pos = mid;
			return h->node[mid];
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (pos)
		*pos = lo;
	return NULL;
}

/* Spreads the first run of a probe over its interval (no thundering
 * herd): a stable offset from the node id and probe index. */
static double spread(const char *id, unsigned idx, double interval)
{
	uint32_t x = hash_fnv32_step(hash_fnv32(id, strlen(id)), (uint8_t)idx);
	return interval * (double)(x % 1000) / 1000.0;
}

static void cancel_probes(hnode_t *n)
{
	for (unsigned i = 0; i < n->nprobe; i++)
		if (n->probe[i].run) {
			probe_cancel(n->probe[i].run);
			n->probe[i].run = NULL;
		}
}

typedef struct {
	health_t *h;
	wdb_txn_t *t;
	int first;
} sync_t;

static void load_metrics(hnode_t *n, json_t *m)
{
	double stable = n->metrics.stable_ms;  /* learnt here, not pushed */
	memset(&n->metrics, 0, sizeof(n->metrics));
	n->metrics.stable_ms = stable;
	const char *k;
	json_t *v;
	json_object_foreach(m, k, v) {
		int id = score_metric_parse(k);
		if (id < 0)
			continue;
		n->metrics.value[id] = json_real_value(json_object_get(v, "value")) +
		                       (double)json_integer_value(json_object_get(v, "value"));
		n->metrics.time[id] = (uint32_t)json_integer_value(json_object_get(v, "time"));
	}
}

static uint32_t newest_metric(const score_metrics_t *m)
{
	uint32_t t = 0;
	for (int i = 0; i < METRIC_COUNT; i++)
		if (m->time[i] > t)
			t = m->time[i];
	return t;
}

/* S1-2, S3-5: since when the pushed failure rate has been above the
 * node's limit, from the pushes the thread sees (every push reaches it
 * within SYNC_EVERY; the limit may differ per node, so the thread keeps
 * this itself).  After a restart the first push seen starts the count. */
static void track_failure_rate(health_t *h, hnode_t *n, uint32_t was)
{
	uint32_t t = n->metrics.time[METRIC_FAILURE_RATE];
	if (!t || t == was)
		return;
	double limit = n->fr_limit > 0 ? n->fr_limit : h->c.failure_rate;
	if (n->metrics.value[METRIC_FAILURE_RATE] > limit)
		n->fr_high_since = n->fr_high_since ? n->fr_high_since : t;
	else
		n->fr_high_since = 0;
}

/* S2-7: a node judged on pushed metrics alone goes stale when its
 * pushes stop, and under health.stale keep it then keeps its last
 * verdict at full weight; the operator who kept that default is told
 * once per node (probed nodes never go stale: a failed probe is an
 * input). */
static void warn_push_only(health_t *h, hnode_t *n)
{
	int push_only = !n->nprobe && !n->unmonitored && newest_metric(&n->metrics);
	if (push_only && h->c.stale == HEALTH_STALE_KEEP && !n->stale_warned)
		log_warning("node %s has no probe: its verdict rests on pushed metrics alone, "
		            "and should they stop it keeps its last verdict at full weight "
		            "(health.stale keep); give it a probe, or set health.stale to "
		            "derate or down", n->id);
	n->stale_warned = push_only && h->c.stale == HEALTH_STALE_KEEP;
}

static void node_metrics(health_t *h, hnode_t *n, json_t *m)
{
	uint32_t pushed = newest_metric(&n->metrics);
	uint32_t fr_was = n->metrics.time[METRIC_FAILURE_RATE];
	uint32_t rtt_was = n->metrics.time[METRIC_RTT_MS];
	load_metrics(n, m);
	/* S4-9: a newly pushed latency of the node, into its area's. */
	if (n->metrics.time[METRIC_RTT_MS] > rtt_was)
		hstats_latency(&h->stats, n->region, n->isp, HSTATS_LAT_PUSHED,
		               n->metrics.value[METRIC_RTT_MS] / 1000.0);
	track_failure_rate(h, n, fr_was);
	if (n->unmonitored && newest_metric(&n->metrics)) {
		n->unmonitored = 0; /* a first push: health has a say again */
		n->changed = 1;
		n->reason[0] = 0;
	}
	if (newest_metric(&n->metrics) > pushed) {
		/* A node without probes is judged on its pushes: each one is
		 * a round (S1-2). */
		if (!n->nprobe)
			n->dirty = 1;
		else
			health__metrics_arrived(h, n);
	}
}

/* wdb_each() over the metrics: a push changed only metrics, so only they
 * are read (with 10,000 nodes pushing, re-reading the node table on every
 * push would stall the probes' loop). */
static int sync_metrics_one(const char *id, json_t *m, void *arg)
{
	health_t *h = arg;
	hnode_t *n = health__find_node(h, id, NULL);
	if (n) {
		node_metrics(h, n, m);
		warn_push_only(h, n);   /* its probes are known: not a new node */
	}
	return 0;
}

/* A node new to the mirror, at @pos of the sorted table.  Cold start:
 * it takes the last persisted decision, never a blind "up". */
static hnode_t *add_node(health_t *h, wdb_txn_t *t, const char *id, size_t pos)
{
	hnode_t *n = xcalloc(1, sizeof(*n));
	n->owner = h;
	snprintf(n->id, sizeof(n->id), "%s", id);
	n->cut.weight_pct = 100; /* no window: full weight */
	n->shadow_grade = SCORE_GRADE_UNKNOWN;
	n->auto_stable = -1;
	if (h->n == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 64;
		h->node = xrealloc(h->node, h->cap * sizeof(*h->node));
	}
	memmove(h->node + pos + 1, h->node + pos, (h->n - pos) * sizeof(*h->node));
	h->node[pos] = n;
	h->n++;
	json_t *rec = wdb_get(t, WDB_HEALTH, id);
	if (rec) {
		n->v.state = verdict_state_parse(json_string_value(json_object_get(rec, "state")));
		n->promoted = json_is_true(json_object_get(rec, "promoted"));
		const char *pf = json_string_value(json_object_get(rec, "promoted_for"));
		snprintf(n->promoted_for, sizeof(n->promoted_for), "%s", pf ? pf : "");
		n->v.gray = json_is_true(json_object_get(rec, "gray"));
		n->v.gray_since = (uint32_t)json_integer_value(json_object_get(rec, "gray_since"));
		n->v.gray_pct = (unsigned)json_integer_value(json_object_get(rec, "gray_pct"));
		n->v.gray_step_at = (uint32_t)json_integer_value(json_object_get(rec, "gray_step_at"));
		n->v.gray_held = json_is_true(json_object_get(rec, "gray_held"));
		n->v.since = (uint32_t)json_integer_value(json_object_get(rec, "since"));
		n->v.moved_at = (uint32_t)json_integer_value(json_object_get(rec, "moved_at"));
		n->v.stale = json_is_true(json_object_get(rec, "stale"));
		n->unmonitored = json_is_true(json_object_get(rec, "unmonitored"));
		const char *r = json_string_value(json_object_get(rec, "reason"));
		snprintf(n->reason, sizeof(n->reason), "%s", r ? r : "");
		json_decref(rec);
	}
	return n;
}

/* Test hook: GSLBD_TEST_PROBE_MAP="FROM=TO,..." makes this instance
 * probe TO wherever a probe names FROM (an address and port), so that a
 * test gives each instance of a cluster its own path to a node (and
 * blocks one vantage only).  Unset in production: one getenv() at start.
 * Writes the probe to run into @out (empty: as written); returns
 * whether it was mapped. */
static int map_probe(const char *map, const char *text, char *out, size_t size)
{
	out[0] = 0;
	for (const char *m = map; m && *m;) {
		const char *eq = strchr(m, '='), *end = strchr(m, ',');
		if (!end)
			end = m + strlen(m);
		char from[128];
		const char *at;
		if (eq && eq < end && eq > m && (size_t)(eq - m) < sizeof(from)) {
			snprintf(from, sizeof(from), "%.*s", (int)(eq - m), m);
			if ((at = strstr(text, from))) {
				snprintf(out, size, "%.*s%.*s%s", (int)(at - text), text,
				         (int)(end - eq - 1), eq + 1, at + strlen(from));
				return 1;
			}
		}
		m = *end ? end + 1 : end;
	}
	return 0;
}

/* Probes: the set is rebuilt (and the window emptied) when any text
 * changed; running probes of the old set are cancelled. */
static void sync_probes(health_t *h, hnode_t *n, json_t *probes)
{
	const char *id = n->id;
	size_t np = json_array_size(probes);
	if (np > HEALTH_MAX_PROBES)
		np = HEALTH_MAX_PROBES;
	int same = np == n->nprobe;
	for (size_t i = 0; same && i < np; i++)
		same = strcmp(n->probe[i].text, json_string_value(json_array_get(probes, i))
		                                 ?: "") == 0;
	if (same)
		return;
	cancel_probes(n);
	n->nprobe = 0;
	n->nwin = 0;
	double now = health__loop_now(h);
	for (size_t i = 0; i < np; i++) {
		const char *text = json_string_value(json_array_get(probes, i));
		hprobe_t *p = &n->probe[n->nprobe];
		char perr[256];
		memset(p, 0, sizeof(*p));
		char mapped[sizeof(p->text)] = "";
		if (text && map_probe(h->probe_map, text, mapped, sizeof(mapped)))
			log_notice("node %s: test hook: probe '%s' goes to '%s'", id, text, mapped);
		if (!text || probe_parse(mapped[0] ? mapped : text, h->c.interval,
		                         h->c.timeout, &p->spec, perr, sizeof(perr))) {
			log_warning("node %s: ignoring probe '%s': %s", id, text ? text : "?",
			            text ? perr : "not a string");
			continue;
		}
		snprintf(p->text, sizeof(p->text), "%s", text);
		p->node = n;
		p->next_due = now + spread(id, (unsigned)i, p->spec.interval_s);
		n->nprobe++;
	}
}

static int sync_node(const char *id, json_t *node, void *arg)
{
	sync_t *s = arg;
	health_t *h = s->h;
	size_t pos;
	hnode_t *n = health__find_node(h, id, &pos);
	uint64_t born = wdb_node_born(s->t, id);
	if (n && n->born != born) {
		/* Deleted and added again since the last sync: a new node
		 * under an old id, which starts afresh -- nothing of the old
		 * one's probes, window or verdict carries over. */
		health__free_node(n);
		memmove(h->node + pos, h->node + pos + 1, (h->n - pos - 1) * sizeof(*h->node));
		h->n--;
		n = NULL;
	}
	if (!n) {
		n = add_node(h, s->t, id, pos);
		n->born = born;
	}
	n->seen = 1;
	const char *pool = json_string_value(json_object_get(node, "pool"));
	const char *admin = json_string_value(json_object_get(node, "admin"));
	snprintf(n->pool, sizeof(n->pool), "%s", pool ? pool : "primary");
	/* S0-9, S0-11: an operator taking a primary out (or putting it
	 * back) re-pools its standby like a verdict does (repool.c). */
	if (n->admin[0] && strcmp(n->admin, admin ? admin : "auto") != 0)
		n->changed = 1;
	snprintf(n->admin, sizeof(n->admin), "%s", admin ? admin : "auto");
	n->capacity = (long)json_integer_value(json_object_get(node, "capacity"));
	n->budget_own = json_number_value(json_object_get(node, "probe_budget"));
	const char *reg = json_string_value(json_object_get(node, "region"));
	const char *isp = json_string_value(json_object_get(node, "isp"));
	snprintf(n->region, sizeof(n->region), "%s", reg ? reg : "*");
	snprintf(n->isp, sizeof(n->isp), "%s", isp ? isp : "*");
	json_t *m = wdb_get(s->t, WDB_METRICS, id);
	node_metrics(h, n, m);
	json_decref(m);

	sync_probes(h, n, json_object_get(node, "probes"));
	/* S2-7: no probe and no pushed metric: health has no input and no
	 * say.  The node serves as configured, and says so; a verdict it
	 * had (its probes were removed) goes with its inputs. */
	int unmon = !n->nprobe && !newest_metric(&n->metrics);
	if (unmon != n->unmonitored) {
		n->unmonitored = unmon;
		n->changed = n->status_dirty = 1;
		if (unmon) {
			verdict_node_t clean;
			memset(&clean, 0, sizeof(clean));
			n->v = clean;
			snprintf(n->reason, sizeof(n->reason), "unmonitored: no probe, no metrics");
			log_info("node %s: unmonitored (no probe, no metrics): served as configured",
			         n->id);
		}
	}
	warn_push_only(h, n);
	return 0;
}

static int collect_window(const char *key, json_t *val, void *arr)
{
	(void)key;
	json_array_append(arr, val);
	return 0;
}

/* Whether standby @n shares a weight row with a node that a live window
 * affects. */
static int in_affected_row(health_t *h, json_t *rows, const hnode_t *n,
                           time_t now)
{
	size_t i;
	json_t *r;
	json_array_foreach(rows, i, r) {
		json_t *w = json_object_get(r, "weights");
		if (!json_object_get(w, n->id))
			continue;
		const char *id;
		json_t *v;
		json_object_foreach(w, id, v) {
			hnode_t *o = health__find_node(h, id, NULL);
			if (!o || o == n || strcmp(o->pool, "standby") == 0)
				continue;
			size_t k;
			json_t *win;
			json_array_foreach(h->windows, k, win)
				if (cutover_window_phase(&h->c.cut, win, now) != CUT_DONE &&
				    cutover_affects(win, o->id, o->region, o->isp))
					return 1;
		}
	}
	return 0;
}

/* Applies the cutover windows to every node; a change of phase, factor
 * or pre-warm share is a decision like any other (one audited commit). */
static void apply_cutovers(health_t *h, json_t *rows)
{
	time_t now = time(NULL);
	for (size_t i = 0; i < h->n; i++) {
		hnode_t *n = h->node[i];
		int standby = strcmp(n->pool, "standby") == 0;
		cutover_effect_t e;
		cutover_effect(&h->c.cut, h->windows, n->id, n->region, n->isp, standby,
		               standby && rows && in_affected_row(h, rows, n, now), now, &e);
		/* S0-4: only a healthy standby is pre-warmed. */
		if (health__decided(h, n) == VERDICT_DEMOTED || strcmp(n->admin, "down") == 0 ||
		    strcmp(n->admin, "drain") == 0)
			e.prewarm_pct = 0;
		if (e.phase == n->cut.phase && e.weight_pct == n->cut.weight_pct &&
		    e.prewarm_pct == n->cut.prewarm_pct &&
		    e.short_until == n->cut.short_until)
			continue;
		if (e.phase != n->cut.phase || e.weight_pct != n->cut.weight_pct ||
		    e.prewarm_pct != n->cut.prewarm_pct) {
			log_info("node %s: cutover %s %s, weight %u%%, pre-warm %u%%", n->id,
			         e.window[0] ? e.window : n->cut.window,
			         cutover_phase_name(e.phase), e.weight_pct, e.prewarm_pct);
			health__note(h, "node %s cutover %s %s weight %u%% prewarm %u%%", n->id,
			     e.window[0] ? e.window : n->cut.window,
			     cutover_phase_name(e.phase), e.weight_pct, e.prewarm_pct);
		}
		n->cut = e;
		n->changed = 1;
	}
}

void health__probe_budget(health_t *h, hnode_t *n)
{
	uint32_t bytes[HEALTH_MAX_PROBES];
	double gap[HEALTH_MAX_PROBES];
	for (unsigned k = 0; k < n->nprobe; k++) {
		bytes[k] = n->probe[k].last_bytes;
		gap[k] = n->probe[k].last_mono > 0 ? n->probe[k].gap : 0;
	}
	n->probe_rate = probe_bytes_rate(n->nprobe, bytes, gap);
	n->probe_budget = n->budget_own > 0 ? n->budget_own :
	                  n->budget_svc > 0 ? n->budget_svc : h->c.probe_budget;
	int over = n->probe_rate > n->probe_budget;
	/* S1-3: probe traffic stays near 0.5 % of the node's bandwidth. */
	if (over && !n->probe_over)
		log_warning("node %s: its probes cost %.0f bytes/s, over their budget of "
		            "%.0f bytes/s", n->id, n->probe_rate, n->probe_budget);
	else if (!over && n->probe_over)
		log_info("node %s: its probes cost %.0f bytes/s, within their budget of "
		         "%.0f bytes/s again", n->id, n->probe_rate, n->probe_budget);
	n->probe_over = over;
}

void health__free_node(hnode_t *n)
{
	cancel_probes(n);
	json_decref(n->sla_rows);
	free(n);
}


void health__sync_nodes(health_t *h, int cutovers_due)
{
	wdb_txn_t *t = wdb_begin_read(h->db);
	if (!t) {
		log_warning("health: cannot read the weight store");
		return;
	}
	health__sync_in(h, t, cutovers_due);
	wdb_abort(t);
}

void health__sync_in(health_t *h, wdb_txn_t *t, int cutovers_due)
{
	/* Re-read the table only when an operator changed it: with 10,000
	 * nodes the parse alone would stall the probes' loop every second.
	 * Cutover effects depend on the time and are applied regardless. */
	uint64_t gen = wdb_table_generation(t);
	uint64_t mgen = wdb_metrics_generation(t);
	if (gen == h->table_gen && h->last_sync > 0) {
		if (mgen != h->metrics_gen) {
			h->metrics_gen = mgen;
			wdb_each(t, WDB_METRICS, NULL, sync_metrics_one, h);
		}
		if (cutovers_due)
			apply_cutovers(h, h->rows);
		return;
	}
	/* S4-4: an operator's change (a node down or drained, a weight 0,
	 * a node out of a row) moves the nearest rows it touches now, as a
	 * health decision does, not at the next steer.interval. */
	if (h->last_sync > 0)
		h->steer_hard = 1;
	h->table_gen = gen;
	h->metrics_gen = mgen;
	for (size_t i = 0; i < h->n; i++)
		h->node[i]->seen = 0;
	sync_t s = { h, t, 0 };
	wdb_each(t, WDB_NODE, NULL, sync_node, &s);
	health__sync_profiles(h, t);
	json_decref(h->windows);
	h->windows = json_array();
	wdb_each(t, WDB_CUTOVER, NULL, collect_window, h->windows);
	json_decref(h->rows);
	json_t *rows = h->rows = NULL;
	if (json_array_size(h->windows)) {
		/* Standbys that share a row with an affected node are
		 * pre-warmed (S0-4): find those rows. */
		rows = json_array();
		wdb_each(t, WDB_WEIGHT, NULL, collect_window, rows);
	}
	/* Nodes gone from the table: stop their probes now. */
	size_t o = 0;
	for (size_t i = 0; i < h->n; i++) {
		if (h->node[i]->seen)
			h->node[o++] = h->node[i];
		else
			health__free_node(h->node[i]);
	}
	h->n = o;
	h->rows = rows;
	apply_cutovers(h, rows);
}

/* S2-9: a new scoring model runs beside the live one, only scoring and
 * alerting.  The node is scored under health.shadow-profile as well, and
 * a change of its grade there (good, usable, degraded) that the live
 * profile does not share is logged once, with both scores; status shows
 * the shadow score.  Nothing else depends on it. */
void health__shadow_profile(health_t *h, hnode_t *n, uint32_t now)
{
	if (h->c.shadow_profile < 0)
		return;
	score_config_t c = health__profile_config(h, n, h->c.shadow_profile, NULL);
	score_result_t r;
	score_evaluate(&c, n->win, n->nwin, &n->metrics, now, &r);
	n->shadow_score = r.unknown ? -1 : r.score;
	int g = score_grade(&c, n->shadow_score);
	if (g == n->shadow_grade)
		return;
	int live = score_grade(&h->c.score, n->last.unknown ? -1 : n->last.score);
	static const char *const grades[] = { "unknown", "degraded", "usable", "good" };
	if (n->shadow_grade != SCORE_GRADE_UNKNOWN || g != live)
		log_msg(g != live ? GSLB_LOG_WARNING : GSLB_LOG_INFO, "shadow profile %s: node %s %s (score %.0f), live profile %s: %s "
		         "(score %.0f)%s", c.profile == SCORE_PROFILE_FOUR ? "four" : "probe",
		         n->id, grades[g + 1], n->shadow_score,
		         health__profile_text(h, n), grades[live + 1], n->last.unknown ? -1.0 : n->last.score,
		         g != live ? ": the profiles disagree" : "");
	n->shadow_grade = g;
}
