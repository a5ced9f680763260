/* SPDX-License-Identifier: MIT */
/* The health thread: probe scheduling, verdicts, pools, decisions.
 *
 * Thread safety: everything here runs on the health thread, except
 * health_start() and health_stop() (main thread), which only create and
 * join it and send one uv_async_send().
 *
 * Life of a node: sync() mirrors the node table from LMDB within 0.25 s of
 * a change (probes added, changed or removed take effect then; a removed
 * probe is cancelled at once; pushed metrics are read then too).  Each
 * probe runs on its own interval, spread over the interval so that
 * probes never start together.  Every result is a round: the node is
 * scored (score.c) and its state machine advances:
 *
 *   up (>= 80, full weight) <-> derated (60..80, weight x derate-factor)
 *     -> demoted after demote-after consecutive degraded rounds
 *        (score < 60, or two abnormal dimensions at once: S0-8, S1-4),
 *        or at once when every probe fails to connect (S4-4);
 *   demoted -> restored after restore-after consecutive rounds at >= 60
 *        with no fault (S0-8, S4-7);
 *   one abnormal dimension alone is low confidence: a gray switch moves
 *        gray-share of the node's weight away and watches gray-watch
 *        seconds; still abnormal then -> demoted, recovered -> cancelled
 *        (S1-10).
 * Decisions of one tick are written together in one transaction with
 * their audit record (S0-9: an atomic re-pool), together with standby
 * promotions (S0-10: validated first; a failed check changes nothing). */
#include "config.h"
#include "health/health.h"
#include "common/hash.h"
#include "common/log.h"
#include "health/probe.h"
#include "common/util.h"

#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <uv.h>

#define MAX_PROBES 3             /* per node (S1-3) */
/* Points beyond the 80 boundary a score must go to switch between up
 * and derated: about the spread that scheduling noise alone gives the
 * latency and jitter dimensions of a healthy node probed over a busy
 * loop (measured with 10,000 nodes: probe times of 50-120 ms). */
#define HEALTH_GRADE_MARGIN 5.0
#define GEO_NAME_MAX_H 32

enum { H_UNKNOWN, H_UP, H_DERATED, H_DEMOTED };
static const char *const state_names[] = { "unknown", "up", "derated", "demoted" };

typedef struct hnode hnode_t;

typedef struct hprobe {
	probe_spec_t spec;
	char text[640];              /* canonical form, to see changes */
	double next_due;             /* loop time, s */
	probe_run_t *run;
	hnode_t *node;
	probe_result_t last;
	uint32_t last_time;          /* unix time of the last result, 0 none */
	uint32_t cert_warned;        /* last certificate-expiry warning */
} hprobe_t;

struct hnode {
	char id[64];
	char pool[16];
	char admin[8];
	char region[GEO_NAME_MAX_H];
	char isp[GEO_NAME_MAX_H];
	cutover_effect_t cut;        /* applied cutover effect */
	unsigned profiles;           /* score profiles asked for by the
	                                services using the node: bit
	                                1 << score_profile_t; 0 = global */
	long capacity;
	hprobe_t probe[MAX_PROBES];
	unsigned nprobe;
	score_sample_t win[SCORE_WINDOW];
	unsigned nwin;
	score_metrics_t metrics;
	score_result_t last;
	/* the decision state, mirrored in the health record */
	int state;
	int promoted;
	char promoted_for[64];
	int gray;
	uint32_t gray_since;
	uint32_t since;
	uint32_t moved_at;           /* last change that moved traffic */
	uint32_t restored_at;        /* last restore, for flap damping */
	unsigned flaps;              /* recent demote-after-restore cycles */
	unsigned lowconf;            /* consecutive low-confidence rounds */
	unsigned grade_rounds;       /* consecutive rounds asking up<->derated */
	char reason[200];
	unsigned degraded, good;
	/* bookkeeping */
	int seen, dirty, changed, status_dirty, removed;
	uint32_t status_at;          /* last status/history write */
	uint32_t fr_high_since;      /* pushed failure rate high since (S1-2) */
	int region_loaded;           /* S2-6: most of its region is loaded */
	int shadow_grade;            /* grade under health.shadow-profile,
	                                SCORE_GRADE_UNKNOWN before the first */
	double shadow_score;
	int metrics_suspect;         /* pushed metrics put the score below
	                                usable: probe fast until a round
	                                confirms or clears it */
};

struct health {
	health_conf_t c;
	weightdb_t *db;
	uv_loop_t loop;
	uv_timer_t tick;
	uv_async_t stop;
	pthread_t thread;
	probe_engine_t *probes;
	hnode_t **node;              /* sorted by id */
	size_t n, cap;
	double last_sync, last_cutover, last_status, last_trim;
	char what[1024];             /* audit text of the pending decisions */
	json_t *windows;             /* cutover windows, refreshed by sync */
	json_t *loaded;              /* S2-6: regions in regional load */
	json_t *rows;                /* weight rows while windows exist */
	uint64_t table_gen;          /* wdb_table_generation() last read */
	uint64_t metrics_gen;        /* wdb_metrics_generation() last read */
	int have_changes;
};

/* Configuration ------------------------------------------------------ */

/* Four dimension weights (S0-6 order: loss, latency, connect, jitter;
 * S2-2 order: network, service, load, stability), per-business
 * configurable (S2-2); they need not add up to 100. */
static int read_weights(const conf_t *c, const ynode_t *v, const char *what,
                        double *w, char *err, size_t errlen)
{
	if (v->kind != YNODE_SEQ || v->n != 4)
		return conf_sfail(c, v, err, errlen, "%s must be a list of 4 numbers", what);
	double sum = 0;
	for (int i = 0; i < 4; i++) {
		if (conf_snumber(c, v->items[i], what, 0, 100, &w[i], err, errlen))
			return -1;
		sum += w[i];
	}
	if (sum <= 0)
		return conf_sfail(c, v, err, errlen, "%s: the weights add up to 0", what);
	return 0;
}

int health_conf_load(const conf_t *c, health_conf_t *o, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	o->interval = 10;
	o->timeout = 2;
	o->fast_interval = 0;
	o->demote_after = 2;
	o->restore_after = 3;
	o->derate_factor = 0.5;
	o->settle = 300;
	o->gray_share = 10;
	o->gray_watch = 120;
	o->standby_headroom = 20;
	o->history_keep = 86400;
	o->tick = 0.1;
	o->flap_window = 300;
	o->failure_rate_window = SCORE_FAILURE_RATE_FAULT_S;
	o->shadow_profile = -1;
	score_config_default(&o->score);
	const ynode_t *s = ynode_get(c->root, "health");
	if (s) {
		static const char *const keys[] = {
			"interval", "timeout", "fast-interval", "demote-after",
			"restore-after", "derate-factor", "settle", "gray-share",
			"gray-watch", "standby-headroom", "history-keep", "tick",
			"shadow", "profile", "shadow-profile", "latency-threshold",
			"freshness",
			"flap-window", "failure-rate-window", "weights-probe",
			"weights-four", "grade-good",
			"grade-usable",
			"veto-level", "veto-factor", NULL
		};
		if (conf_skeys(c, s, "health", keys, err, errlen))
			return -1;
		for (size_t i = 0; i < s->n; i++) {
			const char *k = s->keys[i]->value;
			const ynode_t *v = s->items[i];
			double d;
			int rc = 0;
#define NUM(name, lo, hi, dst) \
			else if (strcmp(k, name) == 0) { \
				rc = conf_snumber(c, v, name, lo, hi, &d, err, errlen); \
				dst = d; }
			if (strcmp(k, "shadow") == 0)
				rc = conf_sbool(c, v, k, &o->shadow, err, errlen);
			else if (strcmp(k, "weights-probe") == 0)
				rc = read_weights(c, v, k, o->score.w_probe, err, errlen);
			else if (strcmp(k, "weights-four") == 0)
				rc = read_weights(c, v, k, o->score.w_four, err, errlen);
			else if (strcmp(k, "profile") == 0 || strcmp(k, "shadow-profile") == 0) {
				int pf = -1;
				if (v->kind == YNODE_SCALAR && strcmp(v->value, "probe") == 0)
					pf = SCORE_PROFILE_PROBE;
				else if (v->kind == YNODE_SCALAR && strcmp(v->value, "four") == 0)
					pf = SCORE_PROFILE_FOUR;
				if (pf < 0)
					rc = conf_sfail(c, v, err, errlen,
					                "%s must be probe (S0-6) or four (S2-2)", k);
				else if (k[0] == 'p')
					o->score.profile = (score_profile_t)pf;
				else
					o->shadow_profile = pf;
			}
			NUM("interval", 0.2, 3600, o->interval)
			NUM("timeout", 0.1, 60, o->timeout)
			NUM("fast-interval", 0.2, 3600, o->fast_interval)
			NUM("demote-after", 1, 100, o->demote_after)
			NUM("restore-after", 1, 100, o->restore_after)
			NUM("derate-factor", 0, 1, o->derate_factor)
			NUM("settle", 0, 86400, o->settle)
			NUM("gray-share", 0, 100, o->gray_share)
			NUM("gray-watch", 0, 86400, o->gray_watch)
			NUM("standby-headroom", 0, 90, o->standby_headroom)
			NUM("history-keep", 0, 90 * 86400.0, o->history_keep)
			NUM("tick", 0.01, 1, o->tick)
			NUM("flap-window", 0, 86400, o->flap_window)
			NUM("failure-rate-window", 1, 3600, o->failure_rate_window)
			NUM("grade-good", 1, 100, o->score.good)
			NUM("grade-usable", 0, 99, o->score.usable)
			NUM("latency-threshold", 0.001, 60, o->score.latency_threshold_ms)
			NUM("freshness", 1, 86400, o->score.fresh_s)
			NUM("veto-level", 0, 1, o->score.veto_level)
			NUM("veto-factor", 0, 1, o->score.veto_factor)
#undef NUM
			if (rc)
				return -1;
			if (strcmp(k, "latency-threshold") == 0)
				o->score.latency_threshold_ms *= 1000; /* given in s */
		}
		if (o->score.usable >= o->score.good)
			return conf_sfail(c, ynode_get(s, "grade-usable"), err, errlen,
			                  "grade-usable (%g) must be below grade-good (%g)",
			                  o->score.usable, o->score.good);
		const ynode_t *t = ynode_get(s, "timeout");
		if (o->timeout >= o->interval)
			return conf_sfail(c, t ? t : s, err, errlen,
			                  "health timeout (%g s) must be below the interval (%g s)",
			                  o->timeout, o->interval);
	}
	if (o->fast_interval <= 0 || o->fast_interval > o->interval)
		o->fast_interval = o->interval; /* S0-7: never slower than normal */
	return cutover_conf_load(c, &o->cut, err, errlen);
}

/* Node table ----------------------------------------------------------- */

static hnode_t *find_node(health_t *h, const char *id, size_t *pos)
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

static double loop_now(health_t *h)
{
	return (double)uv_now(&h->loop) / 1000.0;
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

static int state_of(const char *s)
{
	for (int i = 0; i < 4; i++)
		if (s && strcmp(s, state_names[i]) == 0)
			return i;
	return H_UNKNOWN;
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
	n->fr_high_since = 0;
	const char *k;
	json_t *v;
	json_object_foreach(m, k, v) {
		int id = score_metric_parse(k);
		if (id < 0)
			continue;
		n->metrics.value[id] = json_real_value(json_object_get(v, "value")) +
		                       (double)json_integer_value(json_object_get(v, "value"));
		n->metrics.time[id] = (uint32_t)json_integer_value(json_object_get(v, "time"));
		if (id == METRIC_FAILURE_RATE)
			n->fr_high_since = (uint32_t)json_integer_value(
				json_object_get(v, "high_since"));
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

static int suspect(const hnode_t *n);
static uint32_t wall(void);
static void node_score(health_t *h, const hnode_t *n, const score_sample_t *s,
                       unsigned k, uint32_t now, score_result_t *out);

/* Fresh passive metrics (S1-2, S2-2) that pull the score below usable
 * make the node a suspect at once: its probes run now and then at the
 * fast interval (S0-7 "a node whose score is falling", S2-8), so the
 * confirmations of S0-8 follow within seconds instead of waiting for the
 * next slow round.  The metrics alone never count as a round. */
static void metrics_arrived(health_t *h, hnode_t *n)
{
	score_result_t r;
	/* Once a round has judged the node degraded (or it is out), the
	 * next rounds come at the fast interval anyway, and an extra probe
	 * would only shorten the 10 s between confirmations (S0-8). */
	if (!n->nwin || n->state == H_DEMOTED || n->degraded)
		return;
	node_score(h, n, n->win, n->nwin, wall(), &r);
	if (r.unknown || r.score >= h->c.score.usable)
		return;
	n->metrics_suspect = 1;
	double now = loop_now(h);
	for (unsigned i = 0; i < n->nprobe; i++)
		if (!n->probe[i].run && n->probe[i].next_due > now)
			n->probe[i].next_due = now;
	log_info("node %s: pushed metrics put the score at %.0f: probing now", n->id,
	         r.score);
}

static void node_metrics(health_t *h, hnode_t *n, json_t *m)
{
	uint32_t pushed = newest_metric(&n->metrics);
	load_metrics(n, m);
	if (newest_metric(&n->metrics) > pushed)
		metrics_arrived(h, n);
}

/* wdb_each() over the metrics: a push changed only metrics, so only they
 * are read (with 10,000 nodes pushing, re-reading the node table on every
 * push would stall the probes' loop). */
static int sync_metrics_one(const char *id, json_t *m, void *arg)
{
	health_t *h = arg;
	hnode_t *n = find_node(h, id, NULL);
	if (n)
		node_metrics(h, n, m);
	return 0;
}

static int sync_node(const char *id, json_t *node, void *arg)
{
	sync_t *s = arg;
	health_t *h = s->h;
	size_t pos;
	hnode_t *n = find_node(h, id, &pos);
	if (!n) {
		n = xcalloc(1, sizeof(*n));
		snprintf(n->id, sizeof(n->id), "%s", id);
		n->cut.weight_pct = 100; /* no window: full weight */
		n->shadow_grade = SCORE_GRADE_UNKNOWN;
		if (h->n == h->cap) {
			h->cap = h->cap ? h->cap * 2 : 64;
			h->node = xrealloc(h->node, h->cap * sizeof(*h->node));
		}
		memmove(h->node + pos + 1, h->node + pos, (h->n - pos) * sizeof(*h->node));
		h->node[pos] = n;
		h->n++;
		/* Cold start: the last persisted decision, never a blind "up". */
		json_t *rec = wdb_get(s->t, WDB_HEALTH, id);
		if (rec) {
			n->state = state_of(json_string_value(json_object_get(rec, "state")));
			n->promoted = json_is_true(json_object_get(rec, "promoted"));
			const char *pf = json_string_value(json_object_get(rec, "promoted_for"));
			snprintf(n->promoted_for, sizeof(n->promoted_for), "%s", pf ? pf : "");
			n->gray = json_is_true(json_object_get(rec, "gray"));
			n->gray_since = (uint32_t)json_integer_value(json_object_get(rec, "gray_since"));
			n->since = (uint32_t)json_integer_value(json_object_get(rec, "since"));
			n->moved_at = (uint32_t)json_integer_value(json_object_get(rec, "moved_at"));
			const char *r = json_string_value(json_object_get(rec, "reason"));
			snprintf(n->reason, sizeof(n->reason), "%s", r ? r : "");
			json_decref(rec);
		}
	}
	n->seen = 1;
	const char *pool = json_string_value(json_object_get(node, "pool"));
	const char *admin = json_string_value(json_object_get(node, "admin"));
	snprintf(n->pool, sizeof(n->pool), "%s", pool ? pool : "primary");
	snprintf(n->admin, sizeof(n->admin), "%s", admin ? admin : "auto");
	n->capacity = (long)json_integer_value(json_object_get(node, "capacity"));
	const char *reg = json_string_value(json_object_get(node, "region"));
	const char *isp = json_string_value(json_object_get(node, "isp"));
	snprintf(n->region, sizeof(n->region), "%s", reg ? reg : "*");
	snprintf(n->isp, sizeof(n->isp), "%s", isp ? isp : "*");
	json_t *m = wdb_get(s->t, WDB_METRICS, id);
	node_metrics(h, n, m);
	json_decref(m);

	/* Probes: rebuild the set when any text changed. */
	json_t *probes = json_object_get(node, "probes");
	size_t np = json_array_size(probes);
	if (np > MAX_PROBES)
		np = MAX_PROBES;
	int same = np == n->nprobe;
	for (size_t i = 0; same && i < np; i++)
		same = strcmp(n->probe[i].text, json_string_value(json_array_get(probes, i))
		                                 ?: "") == 0;
	if (same)
		return 0;
	cancel_probes(n);
	n->nprobe = 0;
	n->nwin = 0;
	double now = loop_now(h);
	for (size_t i = 0; i < np; i++) {
		const char *text = json_string_value(json_array_get(probes, i));
		hprobe_t *p = &n->probe[n->nprobe];
		char perr[256];
		memset(p, 0, sizeof(*p));
		if (!text || probe_parse(text, h->c.interval, h->c.timeout, &p->spec,
		                         perr, sizeof(perr))) {
			log_warning("node %s: ignoring probe '%s': %s", id, text ? text : "?",
			            text ? perr : "not a string");
			continue;
		}
		snprintf(p->text, sizeof(p->text), "%s", text);
		p->node = n;
		p->next_due = now + spread(id, (unsigned)i, p->spec.interval_s);
		n->nprobe++;
	}
	return 0;
}

static void note(health_t *h, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

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
			hnode_t *o = find_node(h, id, NULL);
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
		if (n->state == H_DEMOTED || strcmp(n->admin, "down") == 0 ||
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
			note(h, "node %s cutover %s %s weight %u%% prewarm %u%%", n->id,
			     e.window[0] ? e.window : n->cut.window,
			     cutover_phase_name(e.phase), e.weight_pct, e.prewarm_pct);
		}
		n->cut = e;
		n->changed = 1;
	}
}

/* Score profiles per service (S2-2: selectable per service).  A node is
 * scored under the profile of every service whose rows name it, and the
 * lowest of those scores decides its state: health is per node, and a
 * node that one service's profile finds degraded is degraded for the
 * service that asked the stricter question.  Nodes in no row, or only in
 * rows of services on the default, use health.profile. */
typedef struct {
	health_t *h;
	json_t *svc;                 /* service name -> profile bit */
} profiles_t;

static int collect_profile(const char *key, json_t *svc, void *arg)
{
	profiles_t *p = arg;
	const char *pf = json_string_value(json_object_get(svc, "profile"));
	unsigned bit = 1u << (pf && strcmp(pf, "four") == 0 ? SCORE_PROFILE_FOUR :
	                      pf && strcmp(pf, "probe") == 0 ? SCORE_PROFILE_PROBE :
	                      p->h->c.score.profile);
	json_object_set_new(p->svc, key, json_integer(bit));
	return 0;
}

static int row_profiles(const char *key, json_t *row, void *arg)
{
	profiles_t *p = arg;
	wdb_row_parts_t parts;
	if (wdb_row_split(key, strlen(key), &parts))
		return 0;
	char svc[1100];
	snprintf(svc, sizeof(svc), "%.*s", (int)parts.svc_len, parts.svc);
	unsigned bit = (unsigned)json_integer_value(json_object_get(p->svc, svc));
	const char *id;
	json_t *v;
	json_object_foreach(json_object_get(row, "weights"), id, v) {
		hnode_t *n = find_node(p->h, id, NULL);
		if (n)
			n->profiles |= bit;
	}
	return 0;
}

static void sync_profiles(health_t *h, wdb_txn_t *t)
{
	profiles_t p = { h, json_object() };
	unsigned global = 1u << h->c.score.profile, any_other = 0;
	wdb_each(t, WDB_SERVICE, NULL, collect_profile, &p);
	const char *k;
	json_t *v;
	json_object_foreach(p.svc, k, v)
		any_other |= (unsigned)json_integer_value(v) & ~global;
	for (size_t i = 0; i < h->n; i++)
		h->node[i]->profiles = 0;
	/* With every service on the global profile there is nothing to
	 * map, and a large table is not walked. */
	if (any_other)
		wdb_each(t, WDB_WEIGHT, NULL, row_profiles, &p);
	json_decref(p.svc);
}

/* S2-6 dynamic weights: "during a regional degradation every node's load
 * score drops together and the score stops discriminating: raise the
 * service and stability weights for that region".  A region is in
 * regional load when at least REGION_MIN_NODES of its nodes have fresh
 * load metrics and REGION_LOAD_SHARE of those score below REGION_LOAD_LOW
 * on the load dimension; its nodes are then scored (four profile) with
 * half the load weight, the other half going in equal parts to service
 * and stability. */
#define REGION_MIN_NODES 3
#define REGION_LOAD_SHARE 0.75
#define REGION_LOAD_LOW 0.5

/* The score configuration of node @n under profile @pf: health's own,
 * with the S2-6 weights when the node's region is in regional load. */
static score_config_t profile_config(const health_t *h, const hnode_t *n, int pf)
{
	score_config_t c = h->c.score;
	c.profile = (score_profile_t)pf;
	if (pf == SCORE_PROFILE_FOUR && n->region_loaded) {
		double moved = c.w_four[2] / 2;
		c.w_four[2] -= moved;
		c.w_four[1] += moved / 2;
		c.w_four[3] += moved / 2;
	}
	return c;
}

/* Recomputes which regions are in regional load; once a second. */
static void region_load(health_t *h)
{
	uint32_t now = (uint32_t)time(NULL);
	json_t *count = json_object();          /* region -> [known, low] */
	for (size_t i = 0; i < h->n; i++) {
		hnode_t *n = h->node[i];
		const uint32_t *mt = n->metrics.time;
		if (strcmp(n->region, "*") == 0 ||
		    !(mt[METRIC_BANDWIDTH] | mt[METRIC_CPU] | mt[METRIC_MEMORY] | mt[METRIC_DISK]))
			continue;                       /* no region, or no load metric */
		score_config_t c = profile_config(h, n, SCORE_PROFILE_FOUR);
		score_result_t r;
		score_evaluate(&c, NULL, 0, &n->metrics, now, &r);
		if (r.dim[2] < 0)
			continue;                       /* no fresh load metric */
		json_t *e = json_object_get(count, n->region);
		if (!e) {
			e = json_pack("[i, i]", 0, 0);
			json_object_set_new(count, n->region, e);
		}
		json_array_set_new(e, 0, json_integer(json_integer_value(json_array_get(e, 0)) + 1));
		if (r.dim[2] < REGION_LOAD_LOW)
			json_array_set_new(e, 1, json_integer(json_integer_value(json_array_get(e, 1)) + 1));
	}
	json_t *loaded = json_object();
	const char *reg;
	json_t *e;
	json_object_foreach(count, reg, e) {
		json_int_t known = json_integer_value(json_array_get(e, 0));
		json_int_t low = json_integer_value(json_array_get(e, 1));
		if (known >= REGION_MIN_NODES && low >= REGION_LOAD_SHARE * (double)known) {
			json_object_set_new(loaded, reg, json_true());
			if (!json_object_get(h->loaded, reg))
				log_info("region %s: load low on %lld of %lld nodes: service and "
				         "stability weigh more in its scores (S2-6)", reg,
				         (long long)low, (long long)known);
		}
	}
	json_object_foreach(h->loaded, reg, e)
		if (!json_object_get(loaded, reg))
			log_info("region %s: regional load is over, normal weights (S2-6)", reg);
	json_decref(h->loaded);
	h->loaded = loaded;
	json_decref(count);
	for (size_t i = 0; i < h->n; i++)
		h->node[i]->region_loaded = json_object_get(loaded, h->node[i]->region) != NULL;
}

/* The node's score under every profile it is asked for; the lowest
 * counts (see sync_profiles).  An unknown result (no fresh input) yields
 * to a known one. */
static void node_score(health_t *h, const hnode_t *n, const score_sample_t *s,
                       unsigned k, uint32_t now, score_result_t *out)
{
	unsigned mask = n->profiles ? n->profiles : 1u << h->c.score.profile;
	int have = 0;
	for (int pf = SCORE_PROFILE_PROBE; pf <= SCORE_PROFILE_FOUR; pf++) {
		if (!(mask & (1u << pf)))
			continue;
		score_config_t c = profile_config(h, n, pf);
		score_result_t r;
		score_evaluate(&c, s, k, &n->metrics, now, &r);
		if (!have || (out->unknown && !r.unknown) ||
		    (!r.unknown && r.score < out->score))
			*out = r;
		have = 1;
	}
}

static const char *profile_text(health_t *h, const hnode_t *n)
{
	unsigned mask = n->profiles ? n->profiles : 1u << h->c.score.profile;
	static const char *const names[] = { "", "probe", "four", "probe+four" };
	return names[mask & 3];
}

static void free_node(hnode_t *n)
{
	cancel_probes(n);
	free(n);
}

/* How often the store's table generation is checked (s): an operator's
 * change or a metrics push reaches the thread within this. */
#define SYNC_EVERY 0.25

static void sync_nodes(health_t *h, int cutovers_due)
{
	wdb_txn_t *t = wdb_begin_read(h->db);
	if (!t) {
		log_warning("health: cannot read the weight store");
		return;
	}
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
		wdb_abort(t);
		if (cutovers_due)
			apply_cutovers(h, h->rows);
		return;
	}
	h->table_gen = gen;
	h->metrics_gen = mgen;
	for (size_t i = 0; i < h->n; i++)
		h->node[i]->seen = 0;
	sync_t s = { h, t, 0 };
	wdb_each(t, WDB_NODE, NULL, sync_node, &s);
	sync_profiles(h, t);
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
	wdb_abort(t);
	/* Nodes gone from the table: stop their probes now. */
	size_t o = 0;
	for (size_t i = 0; i < h->n; i++) {
		if (h->node[i]->seen)
			h->node[o++] = h->node[i];
		else
			free_node(h->node[i]);
	}
	h->n = o;
	h->rows = rows;
	apply_cutovers(h, rows);
}

/* Verdicts ------------------------------------------------------------- */

static uint32_t wall(void)
{
	return (uint32_t)time(NULL);
}

static void note(health_t *h, const char *fmt, ...)
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

static void set_state(health_t *h, hnode_t *n, int state, const char *why)
{
	if (n->state == state && strcmp(n->reason, why) == 0)
		return;
	int was = n->state;
	n->state = state;
	n->since = wall();
	if (state == H_DEMOTED && was != H_DEMOTED) {
		if (n->restored_at && h->c.flap_window > 0 &&
		    n->since - n->restored_at < h->c.flap_window) {
			if (n->flaps < 4)
				n->flaps++;
		} else {
			n->flaps = 0;
		}
	}
	snprintf(n->reason, sizeof(n->reason), "%s", why);
	n->changed = 1;
	/* The first verdict on a new node moves no traffic. */
	if (!(was == H_UNKNOWN && state == H_UP))
		n->moved_at = n->since;
	if (was != state) {
		log_info("%snode %s: %s -> %s (%s)", h->c.shadow ? "shadow: " : "",
		         n->id, state_names[was], state_names[state], why);
		note(h, "node %s %s: %s", n->id, state_names[state], why);
	}
}

static int fully_probed_hard_fail(const hnode_t *n)
{
	/* S4-4: a hard failure is every probe of the node failing to
	 * connect in its latest run. */
	if (!n->nprobe)
		return 0;
	for (unsigned i = 0; i < n->nprobe; i++)
		if (!n->probe[i].last_time || n->probe[i].last.connected)
			return 0;
	return 1;
}

/* S2-9: a new scoring model runs beside the live one, only scoring and
 * alerting.  The node is scored under health.shadow-profile as well, and
 * a change of its grade there (good, usable, degraded) that the live
 * profile does not share is logged once, with both scores; status shows
 * the shadow score.  Nothing else depends on it. */
static void shadow_profile(health_t *h, hnode_t *n, uint32_t now)
{
	if (h->c.shadow_profile < 0)
		return;
	score_config_t c = profile_config(h, n, h->c.shadow_profile);
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
		         profile_text(h, n), grades[live + 1], n->last.unknown ? -1.0 : n->last.score,
		         g != live ? ": the profiles disagree" : "");
	n->shadow_grade = g;
}

static void evaluate(health_t *h, hnode_t *n)
{
	uint32_t now = wall();
	node_score(h, n, n->win, n->nwin, now, &n->last);
	n->status_dirty = 1;
	shadow_profile(h, n, now);
	const score_result_t *r = &n->last;
	if (r->unknown)
		return; /* S2-7: no fresh data, keep the last decision */
	/* A round is degraded when the window's score is below "usable" or
	 * the round shows a fault (two abnormal dimensions, S1-4).  A single
	 * failed probe among good ones is forgiven by the score once a good
	 * round follows (score.c, loss_forgive), so it makes one degraded
	 * round at most and never moves traffic (S0-8); a node that keeps
	 * failing part of its probes stays below 60 round after round. */
	score_result_t r1;
	node_score(h, n, n->win + n->nwin - 1, 1, now, &r1);
	char why[200];
	int hard = fully_probed_hard_fail(n);
	int fault = r1.n_abnormal >= 2;
	/* S1-2: passive checks raise a fault of their own when requests
	 * have failed above 5 % for a whole minute, by the latest push. */
	uint32_t fr_time = n->metrics.time[METRIC_FAILURE_RATE];
	int passive = n->fr_high_since && fr_time + h->c.score.fresh_s >= now &&
	              fr_time - n->fr_high_since >= h->c.failure_rate_window &&
	              n->metrics.value[METRIC_FAILURE_RATE] > SCORE_FAILURE_RATE_FAULT_PCT;
	fault |= passive;
	int degraded = fault || r->score < h->c.score.usable;
	if (hard) {
		n->degraded++;
		n->good = 0;
		if (n->state != H_DEMOTED) {
			snprintf(why, sizeof(why), "hard failure: every probe failed to connect (%s)",
			         n->probe[0].last.error[0] ? n->probe[0].last.error : "no connection");
			set_state(h, n, H_DEMOTED, why);
		}
		return;
	}
	if (n->state == H_DEMOTED) {
		/* Restoration looks at the rounds themselves: the window still
		 * holds the outage.  Each good round counts; anything else
		 * starts the count again (S0-8, S4-7). */
		if (fault || r1.n_abnormal || r1.score < h->c.score.usable) {
			n->good = 0;
			return;
		}
		n->good++;
		/* S4-7 anti-flap: a node demoted again soon after a restore
		 * needs twice the confirmations, up to 16 times. */
		unsigned need = h->c.restore_after << n->flaps;
		if (n->good >= need) {
			snprintf(why, sizeof(why), "restored: %u consecutive good rounds (score %.0f)",
			         n->good, r1.score);
			n->gray = 0;
			n->lowconf = 0;
			/* The rounds counted while it was out are spent: a
			 * restored node needs demote-after new degraded rounds
			 * to leave again (S0-8). */
			n->degraded = 0;
			n->grade_rounds = 0;
			n->restored_at = now;
			/* The outage is behind: score from the good rounds only. */
			unsigned keep = n->good < n->nwin ? n->good : n->nwin;
			memmove(n->win, n->win + n->nwin - keep, keep * sizeof(n->win[0]));
			n->nwin = keep;
			node_score(h, n, n->win, n->nwin, now, &n->last);
			set_state(h, n, n->last.score >= h->c.score.good ? H_UP : H_DERATED, why);
		}
		return;
	}
	if (degraded) {
		n->good = 0;
		n->degraded++;
		if (n->state != H_DEMOTED && n->degraded >= h->c.demote_after) {
			if (passive)
				snprintf(why, sizeof(why), "fault: request failure rate %.1f%% "
				         "above 5%% for %us (S1-2), %u rounds",
				         n->metrics.value[METRIC_FAILURE_RATE],
				         fr_time - n->fr_high_since, n->degraded);
			else if (fault)
				snprintf(why, sizeof(why), "fault: %s%s%sin %u consecutive rounds",
				         r1.abnormal & SCORE_AB_STATUS ? "bad status, " : "",
				         r1.abnormal & SCORE_AB_CONNECT ? "connect failure, " : "",
				         r1.abnormal & SCORE_AB_LATENCY ? "slow answer, " : "",
				         n->degraded);
			else
				snprintf(why, sizeof(why), "score %.0f < %.0f in %u consecutive rounds",
				         r->score, h->c.score.usable, n->degraded);
			set_state(h, n, H_DEMOTED, why);
		}
		return;
	}
	n->degraded = 0;
	n->metrics_suspect = 0;
	n->lowconf = r1.n_abnormal == 1 ? n->lowconf + 1 : 0;
	/* Like every verdict, low confidence is confirmed over two rounds
	 * before it moves anything (S0-8). */
	if (n->lowconf >= 2) {
		if (!n->gray) {
			n->gray = 1;
			n->gray_since = now;
			n->moved_at = now;
			n->changed = 1;
			log_info("node %s: gray switch, %.0f%% of its share moves away for %.0f s",
			         n->id, h->c.gray_share, h->c.gray_watch);
			note(h, "node %s gray switch (one abnormal dimension)", n->id);
		} else if (now - n->gray_since >= h->c.gray_watch) {
			snprintf(why, sizeof(why), "low-confidence fault persisted %.0f s",
			         h->c.gray_watch);
			n->gray = 0;
			set_state(h, n, H_DEMOTED, why);
			return;
		}
	} else if (n->gray) {
		n->gray = 0;
		n->moved_at = now;
		n->changed = 1;
		log_info("node %s: gray switch cancelled, the node recovered", n->id);
		note(h, "node %s gray switch cancelled", n->id);
	}
	/* Up and derated: a switch needs the score on the other side of 80
	 * by a margin, for demote-after (to derate) or restore-after (to
	 * come back) rounds in a row.  A score that wanders around 80 with
	 * probe jitter keeps its current state (S4-5, S4-7); a new node
	 * takes its first grade at once. */
	double margin = HEALTH_GRADE_MARGIN;
	int want_up = r->score >= h->c.score.good + (n->state == H_DERATED ? margin : 0);
	int want_down = r->score < h->c.score.good - (n->state == H_UP ? margin : 0);
	if (n->state == H_UNKNOWN) {
		n->grade_rounds = 0;
		if (r->score >= h->c.score.good) {
			set_state(h, n, H_UP, "score at or above 80");
		} else {
			snprintf(why, sizeof(why), "score %.0f in 60..80: weight x %.2f",
			         r->score, h->c.derate_factor);
			set_state(h, n, H_DERATED, why);
		}
		return;
	}
	if ((n->state == H_UP && want_down) || (n->state == H_DERATED && want_up))
		n->grade_rounds++;
	else
		n->grade_rounds = 0;
	if (n->state == H_UP && n->grade_rounds >= h->c.demote_after) {
		snprintf(why, sizeof(why), "score %.0f in 60..80 for %u rounds: weight x %.2f",
		         r->score, n->grade_rounds, h->c.derate_factor);
		n->grade_rounds = 0;
		set_state(h, n, H_DERATED, why);
	} else if (n->state == H_DERATED && n->grade_rounds >= h->c.restore_after) {
		snprintf(why, sizeof(why), "score %.0f at or above 80 for %u rounds",
		         r->score, n->grade_rounds);
		n->grade_rounds = 0;
		set_state(h, n, H_UP, why);
	}
}

/* Decisions -> store ------------------------------------------------------ */

static json_t *health_record(health_t *h, const hnode_t *n)
{
	int pct = 100;
	if (n->state == H_DERATED)
		pct = (int)lround(h->c.derate_factor * 100);
	if (n->gray)
		pct = (int)lround(pct * (100 - h->c.gray_share) / 100);
	uint32_t su = n->moved_at ? n->moved_at + (uint32_t)h->c.settle : 0;
	if (n->cut.short_until > su)
		su = n->cut.short_until;
	json_t *rec = json_pack("{s:s, s:b, s:i, s:I, s:I, s:s, s:b, s:s, s:b, s:I, s:f}",
		"state", state_names[n->state],
		"usable", n->state != H_DEMOTED,
		"effective_weight_pct", pct,
		"short_until", (json_int_t)su,
		"since", (json_int_t)n->since,
		"reason", n->reason,
		"promoted", n->promoted,
		"promoted_for", n->promoted_for,
		"gray", n->gray,
		"gray_since", (json_int_t)n->gray_since,
		"score", n->last.unknown ? -1.0 : n->last.score);
	json_object_set_new(rec, "moved_at", json_integer(n->moved_at));
	if (n->cut.phase != CUT_NONE) {
		json_object_set_new(rec, "cutover_pct", json_integer(n->cut.weight_pct));
		json_object_set_new(rec, "prewarm_pct", json_integer(n->cut.prewarm_pct));
		json_object_set_new(rec, "cutover_phase",
		                    json_string(cutover_phase_name(n->cut.phase)));
		json_object_set_new(rec, "cutover_window", json_string(n->cut.window));
	}
	return rec;
}

typedef struct {
	health_t *h;
	hnode_t *demoted;
	hnode_t *pick;
} standby_t;

/* S0-9, S0-10, S1-6: a row that loses a primary gets a healthy standby of
 * the same row, with capacity for the load it takes over. */
static int find_standby(const char *key, json_t *row, void *arg)
{
	standby_t *s = arg;
	json_t *w = json_object_get(row, "weights");
	if (!json_object_get(w, s->demoted->id))
		return 0;
	const char *id;
	json_t *v;
	json_object_foreach(w, id, v) {
		hnode_t *c = find_node(s->h, id, NULL);
		if (!c || c == s->demoted || strcmp(c->pool, "standby") != 0 ||
		    c->promoted || c->state == H_DEMOTED || c->state == H_UNKNOWN ||
		    strcmp(c->admin, "down") == 0 || strcmp(c->admin, "drain") == 0)
			continue;
		double usable_cap = (double)c->capacity * (100 - s->h->c.standby_headroom) / 100;
		if (s->demoted->capacity > 0 && usable_cap < (double)s->demoted->capacity) {
			log_info("standby %s cannot take over %s: capacity %ld, needs %ld + %.0f%% headroom",
			         c->id, s->demoted->id, c->capacity, s->demoted->capacity,
			         s->h->c.standby_headroom);
			continue;
		}
		s->pick = c;
		return 1;
	}
	(void)key;
	return 0;
}

static void repool(health_t *h, wdb_txn_t *t)
{
	for (size_t i = 0; i < h->n; i++) {
		hnode_t *n = h->node[i];
		if (!n->changed)
			continue;
		if (n->state == H_DEMOTED && strcmp(n->pool, "primary") == 0) {
			standby_t s = { h, n, NULL };
			wdb_each(t, WDB_WEIGHT, NULL, find_standby, &s);
			if (s.pick) {
				s.pick->promoted = 1;
				snprintf(s.pick->promoted_for, sizeof(s.pick->promoted_for), "%s", n->id);
				s.pick->since = s.pick->moved_at = wall();
				s.pick->changed = 1;
				log_info("node %s: standby promoted in place of %s", s.pick->id, n->id);
				note(h, "standby %s promoted for %s", s.pick->id, n->id);
			}
		} else if (n->state != H_DEMOTED) {
			/* The primary is back: its standby returns to the pool. */
			for (size_t k = 0; k < h->n; k++) {
				hnode_t *sb = h->node[k];
				if (sb->promoted && strcmp(sb->promoted_for, n->id) == 0) {
					sb->promoted = 0;
					sb->promoted_for[0] = 0;
					sb->since = sb->moved_at = wall();
					sb->changed = 1;
					log_info("node %s: back to standby, %s is restored", sb->id, n->id);
					note(h, "standby %s released (%s restored)", sb->id, n->id);
				}
			}
		}
	}
}

/* Live status and history of a node are written when its decision
 * changed, else at most every STATUS_EVERY seconds: with 10,000 nodes,
 * writing every result would make each second's commit a large one. */
#define STATUS_EVERY 5
static int status_wanted(const hnode_t *n, uint32_t now)
{
	return n->status_dirty && (n->changed || now - n->status_at >= STATUS_EVERY);
}

static void flush(health_t *h, int status_due)
{
	int any = 0;
	uint32_t now = wall();
	for (size_t i = 0; i < h->n && !any; i++)
		any = h->node[i]->changed || (status_due && status_wanted(h->node[i], now));
	if (!any)
		return;
	char err[512];
	wdb_txn_t *t = wdb_begin(h->db, "health", err, sizeof(err));
	if (!t) {
		log_warning("health: %s", err);
		return;
	}
	if (!h->c.shadow)
		repool(h, t);
	for (size_t i = 0; i < h->n; i++) {
		hnode_t *n = h->node[i];
		if (n->changed && !h->c.shadow) {
			json_t *rec = health_record(h, n);
			wdb_set(t, WDB_HEALTH, n->id, rec);
			json_decref(rec);
		}
		if (status_due && status_wanted(n, now)) {
			n->status_at = now;
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
			json_t *st = json_pack("{s:f, s:o, s:b, s:b, s:i, s:s, s:I, s:i, s:i, s:o, s:b}",
				"score", n->last.unknown ? -1.0 : n->last.score, "dims", dims,
				"unknown", n->last.unknown, "vetoed", n->last.vetoed,
				"abnormal", n->last.abnormal, "state", state_names[n->state],
				"updated", (json_int_t)now, "degraded_rounds", n->degraded,
				"good_rounds", n->good, "probes", probes, "shadow", h->c.shadow);
			json_object_set_new(st, "profile", json_string(profile_text(h, n)));
			if (h->c.shadow_profile >= 0)
				json_object_set_new(st, "shadow_score", json_real(n->shadow_score));
			wdb_set(t, WDB_STATUS, n->id, st);
			json_decref(st);
			json_t *hs = json_pack("{s:f, s:s}", "score",
			                       n->last.unknown ? -1.0 : n->last.score,
			                       "state", state_names[n->state]);
			wdb_history_add(t, n->id, now, hs);
			json_decref(hs);
			n->status_dirty = 0;
		}
	}
	if (status_due && now - h->last_trim > 60) {
		wdb_history_trim(t, now - (uint32_t)h->c.history_keep);
		h->last_trim = now;
	}
	char what[1100];
	snprintf(what, sizeof(what), "health: %s", h->what[0] ? h->what : "state");
	if (wdb_commit(t, what, err, sizeof(err)) < 0) {
		log_warning("health: cannot commit (%s); will retry", err);
		return;
	}
	for (size_t i = 0; i < h->n; i++)
		h->node[i]->changed = 0;
	h->what[0] = 0;
	h->have_changes = 0;
}

/* Scheduling ------------------------------------------------------------- */

/* A certificate this close to expiry is reported (S4-2: probing with the
 * real protocol catches expired certificates; better to warn before). */
#define CERT_WARN_DAYS 14

static void on_result(const probe_result_t *r, void *arg)
{
	hprobe_t *p = arg;
	hnode_t *n = p->node;
	p->run = NULL;
	p->last = *r;
	p->last_time = wall();
	if (r->cert_days_left >= 0 && r->cert_days_left < CERT_WARN_DAYS &&
	    p->last_time - p->cert_warned >= 86400) {
		/* Once a day per probe: the repeat filter of log.c only
		 * folds identical consecutive lines. */
		p->cert_warned = p->last_time;
		log_warning("node %s: the certificate of %s expires in %d days",
		            n->id, p->spec.url, (int)r->cert_days_left);
	}
	if (n->nwin == SCORE_WINDOW) {
		memmove(n->win, n->win + 1, (SCORE_WINDOW - 1) * sizeof(n->win[0]));
		n->nwin--;
	}
	score_sample_t *s = &n->win[n->nwin++];
	s->time = p->last_time;
	s->connected = r->connected;
	s->status_ok = r->status_ok;
	s->body_ok = r->body_ok;
	s->timed_out = r->timed_out;
	s->connect_ms = r->connect_ms;
	s->latency_ms = r->total_ms;
	n->dirty = 1;
}

/* The stable-period latency of a node, the reference of route jitter
 * (S0-6): a slow moving average of its successful probe times, learnt
 * only while the node is up and nothing is under suspicion or inside a
 * cutover window, so a degrading path does not become the reference. */
#define STABLE_WEIGHT (1.0 / 16)
static void learn_stable(hnode_t *n)
{
	const score_sample_t *x = n->nwin ? &n->win[n->nwin - 1] : NULL;
	if (!x || !x->connected || x->timed_out || !x->status_ok || !x->body_ok ||
	    n->state != H_UP || n->gray || n->degraded || n->lowconf ||
	    n->metrics_suspect || n->cut.phase == CUT_IN_WINDOW)
		return;
	double lat = x->latency_ms > 0 ? x->latency_ms : 1;
	double *st = &n->metrics.stable_ms;
	*st = *st > 0 ? *st + (lat - *st) * STABLE_WEIGHT : lat;
}

/* S0-7, S2-8: a node under suspicion is probed at the fast interval. */
static int suspect(const hnode_t *n)
{
	return n->state == H_DEMOTED || n->state == H_DERATED || n->degraded ||
	       n->gray || n->metrics_suspect || n->cut.phase == CUT_IN_WINDOW;
}

static void on_tick(uv_timer_t *t)
{
	health_t *h = t->data;
	double now = loop_now(h);
	if (now - h->last_sync >= SYNC_EVERY || h->last_sync == 0) {
		int cut_due = now - h->last_cutover >= 1.0;
		sync_nodes(h, cut_due);
		if (cut_due)
			h->last_cutover = now;
		h->last_sync = now;
	}
	for (size_t i = 0; i < h->n; i++) {
		hnode_t *n = h->node[i];
		for (unsigned k = 0; k < n->nprobe; k++) {
			hprobe_t *p = &n->probe[k];
			if (p->run || p->next_due > now)
				continue;
			double iv = suspect(n) && h->c.fast_interval < p->spec.interval_s ?
			            h->c.fast_interval : p->spec.interval_s;
			p->next_due = now + iv;
			p->run = probe_start(h->probes, &p->spec, on_result, p);
		}
		if (n->dirty) {
			n->dirty = 0;
			evaluate(h, n);
			learn_stable(n);
		}
	}
	int status_due = now - h->last_status >= 1.0;
	if (status_due)
		region_load(h);
	flush(h, status_due);
	if (status_due)
		h->last_status = now;
}

static void on_stop(uv_async_t *a)
{
	health_t *h = a->data;
	uv_timer_stop(&h->tick);
	for (size_t i = 0; i < h->n; i++)
		free_node(h->node[i]);
	h->n = 0;
	probe_engine_free(h->probes);
	h->probes = NULL;
	json_decref(h->windows);
	h->windows = NULL;
	json_decref(h->loaded);
	h->loaded = NULL;
	json_decref(h->rows);
	h->rows = NULL;
	uv_close((uv_handle_t *)&h->tick, NULL);
	uv_close((uv_handle_t *)&h->stop, NULL);
}

static void *health_main(void *arg)
{
	health_t *h = arg;
	uv_run(&h->loop, UV_RUN_DEFAULT);
	return NULL;
}

health_t *health_start(const health_conf_t *hc, weightdb_t *db, char *err,
                       size_t errlen)
{
	health_t *h = xcalloc(1, sizeof(*h));
	h->c = *hc;
	h->db = db;
	if (uv_loop_init(&h->loop)) {
		snprintf(err, errlen, "health: cannot create its event loop");
		free(h);
		return NULL;
	}
	h->probes = probe_engine_new(&h->loop, "gslbd-health/" PACKAGE_VERSION);
	uv_timer_init(&h->loop, &h->tick);
	uv_async_init(&h->loop, &h->stop, on_stop);
	h->tick.data = h->stop.data = h;
	uint64_t ms = (uint64_t)(h->c.tick * 1000);
	uv_timer_start(&h->tick, on_tick, 0, ms ? ms : 1);
	if (pthread_create(&h->thread, NULL, health_main, h)) {
		snprintf(err, errlen, "health: cannot start its thread");
		return NULL;
	}
	log_info("health: probing every %.1f s (fast %.1f s), demote after %u, restore after %u%s",
	         h->c.interval, h->c.fast_interval, h->c.demote_after, h->c.restore_after,
	         h->c.shadow ? ", shadow mode" : "");
	return h;
}

void health_stop(health_t *h)
{
	if (!h)
		return;
	uv_async_send(&h->stop);
	pthread_join(h->thread, NULL);
	uv_run(&h->loop, UV_RUN_DEFAULT);
	uv_loop_close(&h->loop);
	free(h->node);
	free(h);
}
