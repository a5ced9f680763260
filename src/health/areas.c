/* SPDX-License-Identifier: MIT */
/* Unannounced cutovers on the health thread: once per fast interval,
 * the nodes of each area (region, ISP) that are falling are counted, the
 * area's state is stepped (autocut.h), and an automatic cutover window
 * is opened or ended in the store, audited, when the area falls
 * together or has recovered (S0-1, S0-2, S0-3, S0-4, S0-8, S2-6).  The
 * window then acts as an announced one (cutover.h, nodes.c).
 *
 * Thread safety: health thread only. */
#include "health/health_int.h"
#include "common/log.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/** One area's detector state. */
struct health_area {
	char region[HEALTH_GEO_NAME_MAX];
	char isp[HEALTH_GEO_NAME_MAX];
	autocut_area_t s;
	char window[32];             /* the automatic window while open */
	unsigned known, falling, seen;
};

static health_area_t *area_get(health_t *h, const char *region, const char *isp)
{
	for (size_t i = 0; i < h->nareas; i++)
		if (strcmp(h->areas[i].region, region) == 0 &&
		    strcmp(h->areas[i].isp, isp) == 0)
			return &h->areas[i];
	h->areas = xrealloc(h->areas, (h->nareas + 1) * sizeof(*h->areas));
	health_area_t *a = &h->areas[h->nareas++];
	memset(a, 0, sizeof(*a));
	snprintf(a->region, sizeof(a->region), "%s", region);
	snprintf(a->isp, sizeof(a->isp), "%s", isp);
	return a;
}

/* Whether node @n counts in its area: a primary with a region, monitored
 * and not taken out by the operator. */
static int counts(const hnode_t *n)
{
	return strcmp(n->pool, "standby") != 0 && strcmp(n->region, "*") != 0 &&
	       !n->unmonitored && strcmp(n->admin, "down") != 0 &&
	       strcmp(n->admin, "drain") != 0;
}

/* Another window, announced or automatic, that is live for the area:
 * an announced one decides, and an automatic one found in the store (a
 * restart) is taken up as this area's. */
static int live_window(health_t *h, health_area_t *a, time_t now)
{
	size_t i;
	json_t *w;
	json_array_foreach(h->windows, i, w) {
		cutover_phase_t ph = cutover_window_phase(&h->c.cut, w, now);
		if (ph == CUT_DONE || json_array_size(json_object_get(w, "nodes")))
			continue;
		const char *r = json_string_value(json_object_get(w, "region"));
		const char *s = json_string_value(json_object_get(w, "isp"));
		if (!r || strcmp(r, a->region) != 0 ||
		    (s && strcmp(s, "*") != 0 && strcmp(s, a->isp) != 0))
			continue;
		const char *id = json_string_value(json_object_get(w, "id"));
		if (json_is_true(json_object_get(w, "auto")) && ph == CUT_IN_WINDOW &&
		    id && (!a->s.open || strcmp(id, a->window) == 0)) {
			a->s.open = 1;
			snprintf(a->window, sizeof(a->window), "%s", id);
			return 0;
		}
		if (!json_is_true(json_object_get(w, "auto")))
			return 1;
	}
	return 0;
}

static int max_id(const char *key, json_t *w, void *arg)
{
	(void)key;
	const char *id = json_string_value(json_object_get(w, "id"));
	unsigned *m = arg;
	if (id && id[0] == 'c' && (unsigned)atoi(id + 1) > *m)
		*m = (unsigned)atoi(id + 1);
	return 0;
}

static void rfc3339(time_t t, char *out, size_t size)
{
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(out, size, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Opens (@open) or ends the automatic window of @a in one audited
 * commit.  Returns 0, or -1 (said) with nothing written. */
static int write_window(health_t *h, health_area_t *a, int open, time_t now)
{
	char err[512], what[400], st[32], en[32];
	wdb_txn_t *t = wdb_begin(h->db, "health", err, sizeof(err));
	if (!t) {
		log_warning("health: automatic cutover of %s/%s: %s", a->region, a->isp, err);
		return -1;
	}
	json_t *w;
	if (open) {
		unsigned m = 0;
		wdb_each(t, WDB_CUTOVER, NULL, max_id, &m);
		snprintf(a->window, sizeof(a->window), "c%llu",
		         (unsigned long long)wdb_cutover_next_id(t, m));
		const autocut_conf_t *ac = &h->c.cut.autocut;
		time_t end = now + (time_t)ac->max_open;
		rfc3339(now, st, sizeof(st));
		rfc3339(end, en, sizeof(en));
		char note[120];
		snprintf(note, sizeof(note), "automatic: %u of %u nodes falling",
		         a->falling, a->known);
		w = json_pack("{s:s, s:s, s:s, s:[], s:I, s:I, s:s, s:s, s:i, s:i, "
		              "s:s, s:s, s:b}", "id", a->window, "region", a->region,
		              "isp", a->isp, "nodes", "start", (json_int_t)now,
		              "end", (json_int_t)end, "start_text", st, "end_text", en,
		              "derate_pct", (int)(ac->derate ? ac->derate : h->c.cut.impact[1]),
		              "prewarm_pct", (int)h->c.cut.prewarm, "impact", "automatic",
		              "note", note, "auto", 1);
		snprintf(what, sizeof(what), "automatic cutover %s opened region=%s isp=%s: "
		         "%u of %u nodes falling together", a->window, a->region, a->isp,
		         a->falling, a->known);
	} else {
		w = wdb_get(t, WDB_CUTOVER, a->window);
		if (!w) {
			wdb_abort(t);
			return 0;       /* deleted by the operator meanwhile */
		}
		rfc3339(now, en, sizeof(en));
		json_object_set_new(w, "end", json_integer((json_int_t)now));
		json_object_set_new(w, "end_text", json_string(en));
		char note[200];
		snprintf(note, sizeof(note), "%s; ended: recovered",
		         json_string_value(json_object_get(w, "note")) ?: "automatic");
		json_object_set_new(w, "note", json_string(note));
		snprintf(what, sizeof(what), "automatic cutover %s ended region=%s isp=%s: "
		         "recovered (%u of %u nodes falling)", a->window, a->region, a->isp,
		         a->falling, a->known);
	}
	wdb_set(t, WDB_CUTOVER, a->window, w);
	json_decref(w);
	char full[450];
	snprintf(full, sizeof(full), "health: %s", what);
	if (wdb_commit(t, full, err, sizeof(err)) < 0) {
		log_warning("health: %s: %s", what, err);
		return -1;
	}
	log_notice("health: %s", what);
	return 0;
}

/* Counts the known and falling nodes of every area, and learns each
 * node's stable score where its area is quiet. */
static void count_areas(health_t *h)
{
	uint32_t now = health__wall();
	for (size_t i = 0; i < h->nareas; i++)
		h->areas[i].known = h->areas[i].falling = h->areas[i].seen = 0;
	const autocut_conf_t *ac = &h->c.cut.autocut;
	for (size_t i = 0; i < h->n; i++) {
		hnode_t *n = h->node[i];
		if (!counts(n))
			continue;
		health_area_t *a = area_get(h, n->region, n->isp);
		a->seen = 1;
		verdict_state_t st = health__decided(h, n);
		int out = st == VERDICT_DEMOTED || st == VERDICT_DERATED;
		/* Scored now, from the probe window and the pushed metrics as
		 * they stand: a round waits for a probe result (a minute
		 * apart for a healthy node, S0-7), pushed figures do not, and
		 * S0-1's first minute shows in them first. */
		score_result_t r;
		health__node_score(h, n, n->win, n->nwin, now, &r);
		double score = r.unknown ? -1 : r.score;
		if (score < 0 && !out)
			continue;
		int f = autocut_node_falling(ac, score, n->auto_stable,
		                             h->c.score.usable, out);
		n->auto_stable = autocut_stable(n->auto_stable, score,
		                                !f && !a->s.open && n->cut.phase == CUT_NONE);
		a->known++;
		a->falling += f;
	}
}

void health__areas(health_t *h)
{
	const autocut_conf_t *ac = &h->c.cut.autocut;
	/* Cluster mode: cutover windows come from the shared store, which
	 * this thread does not write; shadow mode decides nothing (S2-9). */
	if (!ac->on || h->c.shadow || health__cluster(h))
		return;
	count_areas(h);
	time_t now = time(NULL);
	for (size_t i = 0; i < h->nareas; i++) {
		health_area_t *a = &h->areas[i];
		if (live_window(h, a, now)) {
			a->s.falling_rounds = 0;
			continue;       /* announced: the operator's window decides */
		}
		autocut_action_t act = autocut_step(ac, &a->s, a->known, a->falling);
		if (act == AUTOCUT_KEEP)
			continue;
		if (write_window(h, a, act == AUTOCUT_OPEN, now) < 0)
			a->s.open = act != AUTOCUT_OPEN;   /* again next time */
	}
}

void health__areas_free(health_t *h)
{
	free(h->areas);
	h->areas = NULL;
	h->nareas = 0;
}
