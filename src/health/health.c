/* SPDX-License-Identifier: MIT */
/* The health thread and its scheduling: one libuv loop that syncs the
 * node mirror, starts each probe on its interval, turns each result into
 * a round (score, verdict, decision) and flushes the decisions to the
 * store.
 *
 * Thread safety: everything here runs on the health thread, except
 * health_start() and health_stop() (main thread), which only create and
 * join it and send one uv_async_send().
 *
 * Each probe runs on its own interval, spread over the interval so that
 * probes never start together; a node under suspicion runs at the fast
 * interval (S0-7, S2-8).  Every result is a round: health__evaluate()
 * scores the node and applies the verdict (verdict.c); the tick then
 * writes what changed (repool.c). */
#include "config.h"
#include "health/health_int.h"
#include "steer/steer_run.h"
#include "steer/release_run.h"
#include "common/log.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

uint32_t health__wall(void)
{
	return (uint32_t)time(NULL);
}

double health__mono(void)
{
	return (double)uv_hrtime() / 1e9;
}

double health__loop_now(health_t *h)
{
	return (double)uv_now(&h->loop) / 1000.0;
}

/* Fresh passive metrics (S1-2, S2-2) that pull the score below usable
 * make the node a suspect at once: its probes run now and then at the
 * fast interval (S0-7 "a node whose score is falling", S2-8), so the
 * confirmations of S0-8 follow within seconds instead of waiting for the
 * next slow round.  The metrics alone never count as a round. */
void health__metrics_arrived(health_t *h, hnode_t *n)
{
	score_result_t r;
	/* Once a round has judged the node degraded (or it is out), the
	 * next rounds come at the fast interval anyway, and an extra probe
	 * would only shorten the 10 s between confirmations (S0-8). */
	if (!n->nwin || n->v.state == VERDICT_DEMOTED || n->v.degraded)
		return;
	health__node_score(h, n, n->win, n->nwin, health__wall(), &r);
	if (r.unknown || r.score >= h->c.score.usable)
		return;
	n->v.metrics_suspect = 1;
	double now = health__loop_now(h);
	for (unsigned i = 0; i < n->nprobe; i++)
		if (!n->probe[i].run && n->probe[i].next_due > now)
			n->probe[i].next_due = now;
	log_info("node %s: pushed metrics put the score at %.0f: probing now", n->id,
	         r.score);
}

/* A probe result into the statistics: its duration by kind, and why it
 * failed; an answer later than health.latency-threshold counts as slow
 * (the abnormal latency of S1-4). */
static void count_probe(health_t *h, const hprobe_t *p, const probe_result_t *r)
{
	unsigned k = (unsigned)p->spec.kind < HSTATS_KINDS ? (unsigned)p->spec.kind : 0;
	hstats_observe(&h->stats.probe_duration[k], r->total_ms / 1000.0);
	h->stats.probes[k]++;
	unsigned f = r->failure;
	if (f == PROBE_OK && !(r->connected && r->status_ok && r->body_ok))
		f = PROBE_FAIL_OTHER;
	if (f == PROBE_OK && r->total_ms > h->c.score.latency_threshold_ms)
		f = HSTATS_FAIL_SLOW;
	if (f != PROBE_OK)
		h->stats.failures[k][f < HSTATS_FAILS ? f : PROBE_FAIL_OTHER]++;
}

/* Publishes the statistics for the endpoint (hstats.h): built here,
 * swapped under the lock, the old one freed by its last reader. */
static void publish_stats(health_t *h)
{
	size_t nw = json_array_size(h->windows);
	hstats_t *s = hstats_new(&h->stats, h->n, nw);
	uint32_t now = health__wall();
	s->published = now;
	s->nsource = source_stats(h->src, s->source, SOURCE_MAX);
	for (size_t i = 0; i < h->n; i++) {
		const hnode_t *n = h->node[i];
		hstats_node_t *o = &s->node[i];
		snprintf(o->id, sizeof(o->id), "%s", n->id);
		o->state = n->unmonitored ? HSTATS_UNMONITORED :
		           hstats_state_index(verdict_shown_state(&n->v));
		o->score = n->last.unknown ? -1 : n->last.score;
		memcpy(o->dim, n->last.dim, sizeof(o->dim));
		o->profile = (score_profile_t)n->last.profile;
		o->promoted = (uint8_t)n->promoted;
		health__probe_budget(h, h->node[i]);
		o->probe_rate = n->probe_rate;
		o->probe_budget = n->probe_budget;
		o->probe_over = (uint8_t)n->probe_over;
	}
	for (size_t i = 0; i < nw; i++) {
		json_t *w = json_array_get(h->windows, i);
		const char *id = json_string_value(json_object_get(w, "id"));
		snprintf(s->window[i].id, sizeof(s->window[i].id), "%s", id ? id : "");
		s->window[i].phase = cutover_phase_name(
			cutover_window_phase(&h->c.cut, w, (time_t)now));
	}
	pthread_mutex_lock(&h->pub_lock);
	hstats_t *old = h->pub;
	h->pub = s;
	pthread_mutex_unlock(&h->pub_lock);
	hstats_put(old);
}

hstats_t *health_stats_get(health_t *h)
{
	pthread_mutex_lock(&h->pub_lock);
	hstats_t *s = h->pub;
	if (s)
		__atomic_add_fetch(&s->refs, 1, __ATOMIC_ACQ_REL);
	pthread_mutex_unlock(&h->pub_lock);
	return s;
}

/* A certificate this close to expiry is reported (S4-2: probing with the
 * real protocol catches expired certificates; better to warn before). */
#define CERT_WARN_DAYS 14

static void on_result(const probe_result_t *r, void *arg)
{
	hprobe_t *p = arg;
	hnode_t *n = p->node;
	p->run = NULL;
	p->last = *r;
	p->last_time = health__wall();
	/* S1-3: the probe's cost, over the time since its last result. */
	double mono = health__mono();
	p->gap = p->last_mono > 0 ? mono - p->last_mono : p->spec.interval_s;
	p->last_mono = mono;
	p->last_bytes = r->bytes;
	/* S4-9: the probed latency of the node's area. */
	if (r->connected && !r->timed_out)
		hstats_latency(&n->owner->stats, n->region, n->isp, HSTATS_LAT_PROBED,
		               r->total_ms / 1000.0);
	count_probe(n->owner, p, r);
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
	    n->v.state != VERDICT_UP || n->v.gray || n->v.degraded ||
	    n->v.lowconf || n->v.metrics_suspect || n->cut.phase == CUT_IN_WINDOW)
		return;
	double lat = x->latency_ms > 0 ? x->latency_ms : 1;
	double *st = &n->metrics.stable_ms;
	*st = *st > 0 ? *st + (lat - *st) * STABLE_WEIGHT : lat;
}

/* S0-7, S2-8: a node under suspicion is probed at the fast interval:
 * one out or derated, with a degraded round, a gray switch or an
 * unconfirmed refused connection pending, a node whose score has fallen
 * below good (S0-7 "a node whose score is falling"), and every node of a
 * cutover window. */
static int suspect(const health_t *h, const hnode_t *n)
{
	return n->v.state == VERDICT_DEMOTED || n->v.state == VERDICT_DERATED ||
	       n->v.degraded || n->v.gray || n->v.metrics_suspect || n->v.refused ||
	       (!n->last.unknown && n->nwin && n->last.score < h->c.score.good) ||
	       cutover_fast_probe(&n->cut);
}

/* S2-7: nothing but a new input makes a round, so a node whose inputs
 * stop (a metrics feed that went quiet) would keep its verdict without a
 * word.  Once a second, a node with a verdict whose newest input (probe
 * result, or pushed metric as stored) is older than health.freshness
 * gets a round: the verdict marks it stale. */
static void stale_check(health_t *h)
{
	uint32_t now = health__wall(), fresh = h->c.score.fresh_s;
	for (size_t i = 0; i < h->n; i++) {
		hnode_t *n = h->node[i];
		if (n->v.stale || n->v.state == VERDICT_UNKNOWN || n->dirty)
			continue;
		uint32_t newest = n->nwin ? n->win[n->nwin - 1].time : 0;
		for (int k = 0; k < METRIC_COUNT; k++)
			if (n->metrics.time[k] > newest)
				newest = n->metrics.time[k];
		/* newest 0: no input since the thread started (probes of a
		 * restarted daemon not back yet): nothing went stale. */
		if (newest && now > fresh && newest < now - fresh)
			health__evaluate(h, n);
	}
}

/* The elected instance's steering and release decisions into the
 * shared table, under its leadership epoch (steer_publish_fn). */
static int publish_decisions(void *arg, json_t *records, const char *what,
                             char *err, size_t errlen)
{
	health_t *h = arg;
	const health_cluster_t *cl = health__cluster(h);
	if (!cl || !h->cl_epoch) {
		snprintf(err, errlen, "%.40s: no longer the elected instance", what);
		return GSLB_EINVAL;
	}
	return cl->publish(cl->arg, h->cl_epoch, records, what, err, errlen);
}

/* The live vantages' views of a node, for nearest steering on the
 * elected instance (nearest_vantage_fn). */
static unsigned steer_vantages(void *arg, const char *node, nearest_vantage_t *out,
                               unsigned max)
{
	health_t *h = arg;
	const health_cluster_t *cl = __atomic_load_n(&h->cl, __ATOMIC_ACQUIRE);
	return cl && cl->vantages ? cl->vantages(cl->arg, node, out, max) : 0;
}

/* Starts the probes of @n that are due at @now, and evaluates its
 * newest round if it has one. */
static void tick_node(health_t *h, hnode_t *n, double now)
{
	for (unsigned k = 0; k < n->nprobe; k++) {
		hprobe_t *p = &n->probe[k];
		if (p->run || p->next_due > now)
			continue;
		double iv = suspect(h, n) && h->c.fast_interval < p->spec.interval_s ?
		            h->c.fast_interval : p->spec.interval_s;
		p->next_due = now + iv;
		p->run = probe_start(h->probes, &p->spec, on_result, p);
	}
	if (!n->dirty)
		return;
	n->dirty = 0;
	health__evaluate(h, n);
	learn_stable(n);
	/* A node that has just become suspect does not wait
	 * out the normal interval its probes were scheduled
	 * with: the next run comes at the fast interval. */
	if (suspect(h, n))
		for (unsigned k = 0; k < n->nprobe; k++) {
			hprobe_t *p = &n->probe[k];
			if (!p->run && p->next_due > now + h->c.fast_interval)
				p->next_due = now + h->c.fast_interval;
		}
}

/* S3-1, S3-3: the steering engine runs here, off the query path,
 * every steer.interval; its shares reach the workers through the
 * plans it rebuilds. */
static void tick_steer(health_t *h, double now)
{
	if (now - h->last_steer >= h->c.steer.interval) {
		/* Cluster mode: only the elected instance runs the engine,
		 * and its shares go to etcd like its other decisions. */
		const health_cluster_t *cl = health__cluster(h);
		char err[512];
		if (!cl || h->cl_epoch) {
			json_t *sla = json_object();
			if (steer_run(h->db, &h->c.steer, health__wall(),
			              cl ? publish_decisions : NULL, cl ? steer_vantages : NULL, h,
			              sla, err, sizeof(err)) < 0)
				log_warning("%s", err);
			else
				health__steer_sla(h, sla);
			json_decref(sla);
		}
		h->last_steer = now;
		h->steer_hard = 0;
	} else if (h->steer_hard) {
		/* S4-4: a node demoted since the last run leaves the nearest
		 * rows now, not at the next steer.interval. */
		const health_cluster_t *cl = health__cluster(h);
		char err[512];
		if ((!cl || h->cl_epoch) &&
		    steer_run_hard(h->db, &h->c.steer, health__wall(),
		                   cl ? publish_decisions : NULL, cl ? steer_vantages : NULL, h,
		                   err, sizeof(err)) < 0)
			log_warning("%s", err);
		h->steer_hard = 0;
	}
}

/* S4-10: the gray release controller, off the query path too:
 * every RELEASE_EVAL_EVERY, and for the guards alone at the first
 * tick after pushed figures reach the store, so that a broken guard
 * does not wait for the next evaluation.  Cluster mode: only the
 * elected instance decides, and its decisions go to etcd. */
static void tick_release(health_t *h, double now)
{
	int full = now - h->last_release >= RELEASE_EVAL_EVERY;
	int moved = release_inputs_moved(h->db, &h->inputs_gen);
	const health_cluster_t *cl = health__cluster(h);
	if ((full || moved || h->release_retry) && (!cl || h->cl_epoch)) {
		char err[512];
		int rc = release_run(h->db, &h->c.steer, health__wall(), !full,
		                     cl ? publish_decisions : NULL, h, err, sizeof(err));
		/* GSLB_EAGAIN: this store has not yet applied a change that
		 * etcd holds (the previous decision, an operator's): decided
		 * again at the next tick, from the newer state. */
		h->release_retry = rc == GSLB_EAGAIN;
		if (rc < 0 && rc != GSLB_EAGAIN)
			log_warning("%s", err);
		if (full && !h->release_retry)
			h->last_release = now;
	} else if (full) {
		h->last_release = now;
		h->release_retry = 0;
	}
}

static void on_tick(uv_timer_t *t)
{
	health_t *h = t->data;
	double now = health__loop_now(h);
	__atomic_store_n(&h->beat, util_mono_sec(), __ATOMIC_RELAXED);
	if (now - h->last_sync >= SYNC_EVERY || h->last_sync == 0) {
		int cut_due = now - h->last_cutover >= 1.0;
		health__sync_nodes(h, cut_due);
		if (cut_due)
			h->last_cutover = now;
		h->last_sync = now;
	}
	for (size_t i = 0; i < h->n; i++)
		tick_node(h, h->node[i], now);
	/* S0-8: an area is judged once per fast interval, so its two
	 * confirmations are two rounds of its nodes' fast probes. */
	if (now - h->last_areas >= h->c.fast_interval) {
		health__areas(h);
		h->last_areas = now;
	}
	int status_due = now - h->last_status >= 1.0;
	if (status_due) {
		health__region_load(h);
		stale_check(h);
	}
	health__flush(h, status_due);
	if (status_due) {
		h->last_status = now;
		publish_stats(h);
	}
	tick_steer(h, now);
	tick_release(h, now);
}

/* The default interval and timeout of the probes that do not set their
 * own: each spec is parsed again from its text.  A probe that now comes
 * sooner is brought forward; one that now comes later keeps the run it
 * was scheduled for. */
static void reparse_probes(health_t *h)
{
	double now = health__loop_now(h);
	for (size_t i = 0; i < h->n; i++) {
		hnode_t *n = h->node[i];
		for (unsigned k = 0; k < n->nprobe; k++) {
			hprobe_t *p = &n->probe[k];
			probe_spec_t spec;
			char perr[256];
			if (probe_parse(p->text, h->c.interval, h->c.timeout, &spec, perr,
			                sizeof(perr)))
				continue;  /* parsed before with the same text */
			p->spec = spec;
			if (p->next_due > now + spec.interval_s)
				p->next_due = now + spec.interval_s;
		}
	}
}

/* health_reconfigure(), on the thread: swaps the settings in. */
static void on_reconf(uv_async_t *a)
{
	health_t *h = a->data;
	pthread_mutex_lock(&h->reconf_mu);
	health_conf_t *nc = h->pending;
	h->pending = NULL;
	pthread_mutex_unlock(&h->reconf_mu);
	if (!nc)
		return;
	double tick = h->c.tick;
	h->c = *nc;
	free(nc);
	h->src = source_reconfigure(h->src, &h->c.sources, h->db, steer_conf_keep(&h->c.steer),
	                            h->c.steer.skew);
	reparse_probes(h);
	if (h->c.tick != tick) {
		uint64_t ms = (uint64_t)(h->c.tick * 1000);
		uv_timer_set_repeat(&h->tick, ms ? ms : 1);
		uv_timer_again(&h->tick);
	}
	log_info("health: new settings: probing every %.1f s (fast %.1f s), "
	         "demote after %u, restore after %u, grades %g/%g%s",
	         h->c.interval, h->c.fast_interval, h->c.demote_after,
	         h->c.restore_after, h->c.score.good, h->c.score.usable,
	         h->c.shadow ? ", shadow mode" : "");
}

void health_reconfigure(health_t *h, const health_conf_t *hc)
{
	health_conf_t *nc = xmemdup(hc, sizeof(*hc));
	pthread_mutex_lock(&h->reconf_mu);
	free(h->pending);
	h->pending = nc;
	pthread_mutex_unlock(&h->reconf_mu);
	uv_async_send(&h->reconf);
}

static void on_stop(uv_async_t *a)
{
	health_t *h = a->data;
	uv_timer_stop(&h->tick);
	for (size_t i = 0; i < h->n; i++)
		health__free_node(h->node[i]);
	h->n = 0;
	probe_engine_free(h->probes);
	h->probes = NULL;
	json_decref(h->windows);
	h->windows = NULL;
	json_decref(h->loaded);
	h->loaded = NULL;
	health__areas_free(h);
	json_decref(h->rows);
	h->rows = NULL;
	uv_close((uv_handle_t *)&h->tick, NULL);
	uv_close((uv_handle_t *)&h->stop, NULL);
	uv_close((uv_handle_t *)&h->reconf, NULL);
}

static void *health_main(void *arg)
{
	health_t *h = arg;
	uv_run(&h->loop, UV_RUN_DEFAULT);
	return NULL;
}

health_t *health_start(const health_conf_t *hc, weightdb_t *db,
                       const health_cluster_t *cl, char *err, size_t errlen)
{
	health_t *h = xcalloc(1, sizeof(*h));
	h->c = *hc;
	h->db = db;
	h->cl = cl;
	if (uv_loop_init(&h->loop)) {
		snprintf(err, errlen, "health: cannot create its event loop");
		free(h);
		return NULL;
	}
	h->probes = probe_engine_new(&h->loop, "gslbd-health/" PACKAGE_VERSION);
	h->fail_file = getenv("GSLBD_TEST_HEALTH_FAIL_FILE"); /* repool.c */
	h->probe_map = getenv("GSLBD_TEST_PROBE_MAP"); /* nodes.c */
	h->beat = util_mono_sec();
	hstats_init(&h->stats);
	pthread_mutex_init(&h->pub_lock, NULL);
	uv_timer_init(&h->loop, &h->tick);
	uv_async_init(&h->loop, &h->stop, on_stop);
	uv_async_init(&h->loop, &h->reconf, on_reconf);
	pthread_mutex_init(&h->reconf_mu, NULL);
	h->tick.data = h->stop.data = h->reconf.data = h;
	uint64_t ms = (uint64_t)(h->c.tick * 1000);
	uv_timer_start(&h->tick, on_tick, 0, ms ? ms : 1);
	/* Before the thread: from then on only it touches h->src. */
	h->src = source_start(&h->c.sources, db, steer_conf_keep(&h->c.steer), h->c.steer.skew);
	if (pthread_create(&h->thread, NULL, health_main, h)) {
		snprintf(err, errlen, "health: cannot start its thread");
		return NULL;
	}
	log_info("health: probing every %.1f s (fast %.1f s), demote after %u, restore after %u%s",
	         h->c.interval, h->c.fast_interval, h->c.demote_after, h->c.restore_after,
	         h->c.shadow ? ", shadow mode" : "");
	return h;
}

int64_t health_beat_age(const health_t *h)
{
	return util_mono_sec() - __atomic_load_n(&h->beat, __ATOMIC_RELAXED);
}

int health_alive(const health_t *h, int64_t max_age)
{
	return health_beat_age(h) <= max_age;
}

void health_stop(health_t *h)
{
	if (!h)
		return;
	uv_async_send(&h->stop);
	pthread_join(h->thread, NULL);
	source_stop(h->src);
	uv_run(&h->loop, UV_RUN_DEFAULT);
	uv_loop_close(&h->loop);
	hstats_put(h->pub);
	pthread_mutex_destroy(&h->pub_lock);
	pthread_mutex_destroy(&h->reconf_mu);
	free(h->pending);
	free(h->node);
	free(h);
}
