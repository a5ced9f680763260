/* SPDX-License-Identifier: MIT */
/* gslbd's cluster threads: the table from etcd into the local store
 * (resync, watch), and this instance's lease and member key.  See
 * cluster.h; the layout in etcd is in sync.h. */
#include "cluster/cluster.h"
#include "cluster/etcd.h"
#include "cluster/feed.h"
#include "cluster/keyfiles.h"
#include "cluster/quorum.h"
#include "cluster/sync.h"
#include "cluster/verify.h"
#include "common/log.h"
#include "common/util.h"
#include "health/verdict.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cluster/cluster_int.h"


int cluster__stopping(cluster_t *c)
{
	return __atomic_load_n(&c->stop, __ATOMIC_RELAXED);
}

static int stop_cb(void *arg)
{
	return cluster__stopping(arg);
}

/* Sleeps @ms unless stopped first.  Returns whether to stop. */
int cluster__nap(cluster_t *c, unsigned ms)
{
	struct timespec ts = util_deadline_ms(ms);
	pthread_mutex_lock(&c->mu);
	while (!c->stop && !c->kick && pthread_cond_timedwait(&c->cv, &c->mu, &ts) == 0)
		;
	int s = c->stop;
	c->kick = 0;
	pthread_mutex_unlock(&c->mu);
	return s;
}

/* Wakes the lease thread (a view moved, the leader key went). */
static void kick(cluster_t *c)
{
	pthread_mutex_lock(&c->mu);
	c->kick = 1;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
}

void cluster__set_epoch(cluster_t *c, int64_t ep)
{
	int64_t was = __atomic_exchange_n(&c->epoch, ep, __ATOMIC_RELAXED);
	if (was && !ep)
		log_notice("cluster: %s is no longer the elected instance", c->cc.name);
}

/* Views ----------------------------------------------------------- */

/* Splits "P health/NODE/INSTANCE": 1 with the two parts, else 0. */
static int view_key(const cluster_t *c, const char *ekey, char *node,
                    size_t nsize, const char **inst)
{
	size_t pl = strlen(c->cc.prefix);
	if (strncmp(ekey + pl, "health/", 7) != 0)
		return 0;
	const char *k = ekey + pl + 7, *slash = strrchr(k, '/');
	if (!slash || slash == k || !slash[1] || (size_t)(slash - k) >= nsize)
		return 0;
	snprintf(node, nsize, "%.*s", (int)(slash - k), k);
	*inst = slash + 1;
	return 1;
}

/* A view put (@kv->value) or deleted (@del) by the watch or a range;
 * under vmu. */
static void view_event(cluster_t *c, const etcd_kv_t *kv, int del)
{
	char node[256];
	const char *inst;
	if (!view_key(c, kv->key, node, sizeof(node), &inst))
		return;
	json_t *per = json_object_get(c->views, node);
	if (del) {
		if (per)
			json_object_del(per, inst);
		if (per && !json_object_size(per))
			json_object_del(c->views, node);
	} else {
		json_t *v = json_loadb(kv->value, kv->value_len, 0, NULL);
		if (!json_is_object(v)) {
			json_decref(v);
			return;
		}
		if (!per) {
			per = json_object();
			json_object_set_new(c->views, node, per);
		}
		json_object_set_new(per, inst, v);
	}
	__atomic_add_fetch(&c->vgen, 1, __ATOMIC_RELAXED);
}

/* The leader key put or deleted; under vmu. */
void cluster__leader_event(cluster_t *c, const etcd_kv_t *kv, int del)
{
	if (del) {
		c->leader[0] = 0;
		cluster__set_epoch(c, 0);
		kick(c); /* campaign now: takeover within the lease time */
		return;
	}
	json_t *v = json_loadb(kv->value, kv->value_len, 0, NULL);
	const char *name = json_string_value(json_object_get(v, "name"));
	snprintf(c->leader, sizeof(c->leader), "%s", name ? name : "?");
	if (kv->lease != __atomic_load_n(&c->lease, __ATOMIC_RELAXED))
		cluster__set_epoch(c, 0);
	json_decref(v);
}

static int range_view(const etcd_kv_t *kv, void *arg)
{
	view_event(arg, kv, 0);
	return 0;
}

/* Reads every view at revision @rev (the one the table was read at, so
 * the watch goes on from there).  Returns 0 or an error. */
static int load_views(cluster_t *c, etcd_t *e, int64_t rev, char *err,
                      size_t errlen)
{
	char key[512];
	snprintf(key, sizeof(key), "%shealth/", c->cc.prefix);
	json_t *ans = NULL;
	int rc = etcd_range_at(e, key, rev, &ans, err, errlen);
	if (rc)
		return rc;
	pthread_mutex_lock(&c->vmu);
	json_object_clear(c->views);
	etcd_kvs_each(ans, range_view, c);
	__atomic_add_fetch(&c->vgen, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&c->vmu);
	json_decref(ans);
	return 0;
}

/* What the members say when a request of @e failed with @why (e NULL:
 * a request went through), kept for the log, /healthz and the metrics:
 * "no quorum: 1 of 3 members answer (e1)" rather than "unreachable" when
 * some members are there.  The watch and the lease thread both report:
 * without a quorum the watch stream stays open (nothing is written, so
 * nothing arrives), while the lease cannot be renewed. */
void cluster__note_etcd(cluster_t *c, etcd_t *e, const char *why)
{
	char text[400] = "";
	if (!e && !__atomic_load_n(&c->etcd_noted, __ATOMIC_RELAXED))
		return;
	/* Logged when the state or the counts move, not each time the
	 * error's text does (another endpoint tried, another curl error). */
	char key[64] = "";
	if (e) {
		etcd_health_t h;
		etcd_health(e, &h);
		etcd_health_text(&h, why, text, sizeof(text));
		snprintf(key, sizeof(key), "%s %u/%u", etcd_health_state(&h), h.answering,
		         h.members);
		__atomic_store_n(&c->etcd_members, h.members, __ATOMIC_RELAXED);
		__atomic_store_n(&c->etcd_answering, h.answering, __ATOMIC_RELAXED);
	} else {
		__atomic_store_n(&c->etcd_answering, 0, __ATOMIC_RELAXED);
	}
	pthread_mutex_lock(&c->vmu);
	int same = strcmp(c->etcd_key, key) == 0;
	snprintf(c->etcd_key, sizeof(c->etcd_key), "%s", key);
	snprintf(c->etcd_why, sizeof(c->etcd_why), "%s", text);
	pthread_mutex_unlock(&c->vmu);
	__atomic_store_n(&c->etcd_noted, e != NULL, __ATOMIC_RELAXED);
	if (same)
		return;
	if (e)
		log_warning("cluster: %s; answering from the local store, retrying",
		            text);
	else
		log_notice("cluster: etcd reachable again, table at revision %lld",
		           (long long)c->rev);
}

/* The watch's state: up, or down for the reason @why (a request of @e). */
static void set_connected(cluster_t *c, int up, etcd_t *e, const char *why)
{
	if (up && __atomic_load_n(&c->connected, __ATOMIC_RELAXED) == 1)
		return; /* every event of the watch: nothing to do */
	int was = __atomic_exchange_n(&c->connected, up, __ATOMIC_RELAXED);
	if (up && was < 0)
		return; /* the first contact is logged by the resync */
	cluster__note_etcd(c, up ? NULL : e, why);
}

/* The changes of one revision, collected from the watch. */
typedef struct group {
	int64_t rev;
	json_t *changes;          /* [{kind, key, after}] */
	json_t *feed;             /* pushed metrics: [value] in key order */
	int keyfiles;             /* signing key files written */
	int change;               /* the change marker moved: an operator's */
	char actor[160];
	char what[400];
} group_t;

static int flush_group(cluster_t *c, group_t *g)
{
	if (!g->rev)
		return 0;
	char err[512];
	int rc = 0;
	if (json_array_size(g->changes)) {
		/* A revision that moved the change marker is an operator's
		 * change: the store's "changerev" follows it (sync.h). */
		rc = (g->change ? cluster_apply_change : cluster_apply)(c->db,
		        g->rev, g->changes, g->actor, g->what, NULL, err, sizeof(err));
		if (rc < 0) {
			log_err("cluster: revision %lld: %s; resyncing in full",
			        (long long)g->rev, err);
			c->need_resync = 1;
		} else if (rc > 0) {
			__atomic_add_fetch(&c->applied, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&c->last_apply, (int64_t)time(NULL), __ATOMIC_RELAXED);
			log_info("cluster: applied revision %lld: %s (%s)",
			         (long long)g->rev, g->what, g->actor);
		}
	}
	if (rc >= 0 && json_array_size(g->feed)) {
		/* Pushed metrics (feed.h): their own revisions, apart from
		 * the table's; a failure to write them is the store's, and a
		 * full read applies them again. */
		int64_t t0 = util_mono_ms();
		int n = cluster_feed_apply(c->db, g->rev, g->feed, err, sizeof(err));
		if (n < 0) {
			log_err("cluster: revision %lld: %s; resyncing in full",
			        (long long)g->rev, err);
			c->need_resync = 1;
			rc = n;
		} else {
			log_debug("cluster: revision %lld: %d pushed measurements applied in "
			          "%lld ms", (long long)g->rev, n, (long long)(util_mono_ms() - t0));
		}
		json_array_clear(g->feed);
	}
	/* A key file whose record did not change with it (written again):
	 * the keys are loaded again all the same. */
	if (g->keyfiles && cluster_keyfile_reload(c->db, c->actor))
		c->need_resync = 1;
	g->keyfiles = 0;
	if (rc >= 0)
		__atomic_store_n(&c->rev, g->rev, __ATOMIC_RELAXED);
	json_array_clear(g->changes);
	g->rev = 0;
	g->change = 0;
	return rc < 0;
}

static void group_event(cluster_t *c, group_t *g, const json_t *ev)
{
	etcd_kv_t kv;
	if (etcd_kv_parse(json_object_get(ev, "kv"), &kv))
		return;
	const char *type = json_string_value(json_object_get(ev, "type"));
	int del = type && strcmp(type, "DELETE") == 0;
	if (kv.mod_rev != g->rev) {
		flush_group(c, g);
		g->rev = kv.mod_rev;
		snprintf(g->actor, sizeof(g->actor), "etcd");
		snprintf(g->what, sizeof(g->what), "change in etcd at revision %lld",
		         (long long)kv.mod_rev);
	}
	wdb_kind_t kind;
	const char *key;
	size_t pl = strlen(c->cc.prefix);
	if (cluster_parse_key(c->cc.prefix, kv.key, &kind, &key)) {
		json_t *v = del ? json_null() : json_loadb(kv.value, kv.value_len, 0, NULL);
		if (v)
			json_array_append_new(g->changes, json_pack("{s:s, s:s, s:o}",
			    "kind", cluster_kind_name(kind), "key", key, "after", v));
	} else if (cluster_feed_key(c->cc.prefix, kv.key)) {
		/* A lease that ended deletes a push: nothing to undo. */
		json_t *v = del ? NULL : json_loadb(kv.value, kv.value_len, 0, NULL);
		if (json_is_object(v))
			json_array_append(g->feed, v);
		json_decref(v);
	} else if (cluster_keyfile_key(c->cc.prefix, kv.key, &key)) {
		/* Before the revision's records are applied: the key that
		 * names the file finds it when the keys are loaded. */
		char err[512];
		int w = del || !cluster_keyfile_dir() ? 0 :
		        cluster_keyfile_write(cluster_keyfile_dir(), key, kv.value,
		                              kv.value_len, err, sizeof(err));
		if (w < 0)
			log_err("cluster: %s", err);
		g->keyfiles |= w > 0;
	} else if (strncmp(kv.key + pl, "health/", 7) == 0) {
		pthread_mutex_lock(&c->vmu);
		view_event(c, &kv, del);
		pthread_mutex_unlock(&c->vmu);
	} else if (strcmp(kv.key + pl, "leader") == 0) {
		pthread_mutex_lock(&c->vmu);
		cluster__leader_event(c, &kv, del);
		pthread_mutex_unlock(&c->vmu);
	} else if (!del && (strcmp(kv.key + pl, "change") == 0 ||
	                    strcmp(kv.key + pl, "decided") == 0)) {
		json_t *rec = json_loadb(kv.value, kv.value_len, 0, NULL);
		g->change |= strcmp(kv.key + pl, "change") == 0;
		const char *a = json_string_value(json_object_get(rec, "actor"));
		const char *w = json_string_value(json_object_get(rec, "what"));
		if (a)
			snprintf(g->actor, sizeof(g->actor), "%s", a);
		if (w)
			snprintf(g->what, sizeof(g->what), "%s", w);
		json_decref(rec);
	}
	etcd_kv_clear(&kv);
}

static int on_watch(const json_t *res, void *arg)
{
	cluster_t *c = arg;
	set_connected(c, 1, NULL, NULL);
	int64_t compacted = etcd_int(res, "compact_revision");
	if (compacted || json_is_true(json_object_get(res, "canceled"))) {
		log_notice("cluster: etcd history compacted past revision %lld; "
		           "resyncing in full", (long long)c->rev);
		c->need_resync = 1;
		return 1;
	}
	group_t g = { 0, json_array(), json_array(), 0, 0, "", "" };
	size_t i;
	json_t *ev;
	json_array_foreach(json_object_get(res, "events"), i, ev)
		group_event(c, &g, ev);
	flush_group(c, &g);
	json_decref(g.changes);
	json_decref(g.feed);
	return c->need_resync || cluster__stopping(c);
}

static void *watch_main(void *arg)
{
	cluster_t *c = arg;
	etcd_t *e = etcd_new(&c->cc);
	char err[1024];
	unsigned delay = RETRY_MIN_MS;
	c->need_resync = 1;
	cluster_verify_wait_first(c->verify);
	while (!cluster__stopping(c)) {
		if (c->need_resync) {
			int64_t rev = 0, marker = 0, t0 = util_mono_ms();
			/* The key files first, so that the records the full read
			 * brings find theirs; then once more for those put
			 * meanwhile. */
			int kf = cluster_keyfile_load(e, c->cc.prefix, err, sizeof(err));
			int rc = kf < 0 ? kf : cluster_resync(c->db, e, c->cc.prefix, c->actor,
			                                      &rev, &marker, err, sizeof(err));
			if (rc < 0) {
				set_connected(c, 0, e, err);
				if (cluster__nap(c, delay))
					break;
				delay = delay * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : delay * 2;
				continue;
			}
			int kf2 = cluster_keyfile_load(e, c->cc.prefix, err, sizeof(err));
			/* Files written while the store's records stayed (a
			 * restart after a file went): the keys are loaded again. */
			if (kf > 0 || kf2 > 0)
				cluster_keyfile_reload(c->db, c->actor);
			kf = kf2;
			if (kf < 0 || load_views(c, e, rev, err, sizeof(err)) ||
			    cluster_feed_load(c->db, e, c->cc.prefix, rev, err, sizeof(err))) {
				set_connected(c, 0, e, err);
				if (cluster__nap(c, delay))
					break;
				continue;
			}
			c->need_resync = 0;
			int64_t local = cluster_local_rev(c->db);
			__atomic_store_n(&c->rev, local > rev ? local : rev, __ATOMIC_RELAXED);
			__atomic_add_fetch(&c->resyncs, 1, __ATOMIC_RELAXED);
			__atomic_store_n(&c->last_apply, (int64_t)time(NULL), __ATOMIC_RELAXED);
			set_connected(c, 1, NULL, NULL);
			log_info("cluster: resynced from etcd at revision %lld: %d objects "
			         "changed in %lld ms", (long long)rev, rc,
			         (long long)(util_mono_ms() - t0));
		}
		int rc = etcd_watch(e, c->cc.prefix, c->rev + 1, on_watch, stop_cb, c,
		                    err, sizeof(err));
		if (cluster__stopping(c))
			break;
		if (rc == GSLB_EIO) {
			set_connected(c, 0, e, err);
			if (cluster__nap(c, delay))
				break;
			delay = delay * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : delay * 2;
		} else {
			delay = RETRY_MIN_MS;
		}
	}
	etcd_free(e);
	return NULL;
}

/* The health thread's hooks -------------------------------------- */

static int64_t hook_leader(void *arg)
{
	cluster_t *c = arg;
	return __atomic_load_n(&c->epoch, __ATOMIC_RELAXED);
}

static uint64_t hook_views_gen(void *arg)
{
	cluster_t *c = arg;
	return __atomic_load_n(&c->vgen, __ATOMIC_RELAXED);
}

static void hook_combined(void *arg, const char *node, health_combined_t *out)
{
	cluster_t *c = arg;
	pthread_mutex_lock(&c->vmu);
	cluster_combine(json_object_get(c->views, node), c->cc.quorum, out);
	pthread_mutex_unlock(&c->vmu);
}

static void hook_view(void *arg, const char *node, json_t *view)
{
	cluster_t *c = arg;
	pthread_mutex_lock(&c->vmu);
	json_t *was = json_object_get(c->mine, node);
	int moved = !was || cluster__verdict_moved(was, view);
	json_object_set_new(c->mine, node, json_deep_copy(view));
	pthread_mutex_unlock(&c->vmu);
	if (moved)
		kick(c);
}

/* Every live instance's view of @node, as nearest steering reads it
 * (S4-6): the vantage, whether all its probes succeeded, and their mean
 * total time. */
static unsigned hook_vantages(void *arg, const char *node, nearest_vantage_t *out,
                              unsigned max)
{
	cluster_t *c = arg;
	unsigned n = 0;
	pthread_mutex_lock(&c->vmu);
	const char *inst;
	json_t *v;
	json_object_foreach(json_object_get(c->views, node), inst, v) {
		if (n == max)
			break;
		nearest_vantage_t *o = &out[n++];
		snprintf(o->name, sizeof(o->name), "%s", inst);
		snprintf(o->region, sizeof(o->region), "%s",
		         json_string_value(json_object_get(v, "region")) ?: "");
		snprintf(o->isp, sizeof(o->isp), "%s",
		         json_string_value(json_object_get(v, "isp")) ?: "");
		o->at = (uint32_t)json_integer_value(json_object_get(v, "time"));
		size_t i, k = 0;
		json_t *p;
		double sum = 0;
		o->ok = 1;
		json_array_foreach(json_object_get(v, "probes"), i, p) {
			o->ok &= json_is_true(json_object_get(p, "ok"));
			sum += (double)json_integer_value(json_object_get(p, "total_ms"));
			k++;
		}
		/* A view of stale inputs says nothing of now. */
		o->ok &= k > 0 && !json_is_true(json_object_get(v, "stale"));
		o->ms = k ? sum / (double)k : 0;
	}
	pthread_mutex_unlock(&c->vmu);
	return n;
}

static void copy_conf(cluster_conf_t *dst, const cluster_conf_t *src)
{
	*dst = *src;
	for (size_t i = 0; i < src->nendpoints; i++)
		dst->endpoints[i] = xstrdup(src->endpoints[i]);
	char **s[] = { &dst->ca, &dst->cert, &dst->key, &dst->user, &dst->password };
	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		if (*s[i])
			*s[i] = xstrdup(*s[i]);
}

cluster_t *cluster_start(const cluster_conf_t *cc, weightdb_t *db, char *err,
                         size_t errlen)
{
	cluster_t *c = xcalloc(1, sizeof(*c));
	copy_conf(&c->cc, cc);
	c->db = db;
	c->connected = -1; /* not tried yet: the first failure is logged too */
	snprintf(c->actor, sizeof(c->actor), "cluster:%s", cc->name);
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	pthread_mutex_init(&c->vmu, NULL);
	c->views = json_object();
	c->mine = json_object();
	c->sent = json_object();
	c->hooks = (health_cluster_t){ c, hook_leader, hook_views_gen, hook_combined,
	                               hook_view, cluster__publish, hook_vantages };
	if (!(c->verify = cluster_verify_start(&c->cc, db, c->actor))) {
		snprintf(err, errlen, "cluster: cannot start the verify thread");
		cluster_stop(c);
		return NULL;
	}
	if (pthread_create(&c->watch_thr, NULL, watch_main, c)) {
		snprintf(err, errlen, "cluster: cannot start the watch thread");
		cluster_stop(c);
		return NULL;
	}
	c->watch_started = 1;
	if (pthread_create(&c->lease_thr, NULL, cluster__lease_main, c)) {
		snprintf(err, errlen, "cluster: cannot start the lease thread");
		cluster_stop(c);
		return NULL;
	}
	c->lease_started = 1;
	log_info("cluster: instance %s, prefix %s, %zu etcd endpoints",
	         cc->name, cc->prefix, cc->nendpoints);
	return c;
}

void cluster_stop(cluster_t *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	__atomic_store_n(&c->stop, 1, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	if (c->watch_started)
		pthread_join(c->watch_thr, NULL);
	if (c->lease_started)
		pthread_join(c->lease_thr, NULL);
	cluster_verify_stop(c->verify);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->cv);
	pthread_mutex_destroy(&c->vmu);
	json_decref(c->views);
	json_decref(c->mine);
	json_decref(c->sent);
	etcd_free(c->he);
	etcd_free(c->re);
	etcd_free(c->we);
	cluster_conf_free(&c->cc);
	free(c);
}

void cluster_info(cluster_t *c, cluster_info_t *out)
{
	/* Without a quorum the watch stays open but nothing can change:
	 * not connected either. */
	out->connected = __atomic_load_n(&c->connected, __ATOMIC_RELAXED) > 0 &&
	                 !__atomic_load_n(&c->etcd_noted, __ATOMIC_RELAXED);
	out->revision = __atomic_load_n(&c->rev, __ATOMIC_RELAXED);
	out->resyncs = __atomic_load_n(&c->resyncs, __ATOMIC_RELAXED);
	out->applied = __atomic_load_n(&c->applied, __ATOMIC_RELAXED);
	out->elected = __atomic_load_n(&c->epoch, __ATOMIC_RELAXED) != 0;
	out->last_apply = __atomic_load_n(&c->last_apply, __ATOMIC_RELAXED);
	out->decisions = __atomic_load_n(&c->decisions, __ATOMIC_RELAXED);
	out->conflicts = __atomic_load_n(&c->conflicts, __ATOMIC_RELAXED);
	out->etcd_members = __atomic_load_n(&c->etcd_members, __ATOMIC_RELAXED);
	out->etcd_answering = __atomic_load_n(&c->etcd_answering, __ATOMIC_RELAXED);
	cluster_verify_info_t vi;
	cluster_verify_info(c->verify, &vi);
	out->diverged = vi.diverged;
	out->divergences = vi.divergences;
	out->overrides = vi.overrides;
	out->checks = vi.checks;
	out->full_checks = vi.full_checks;
	out->nodes_up = out->nodes_partial = out->nodes_down = 0;
	pthread_mutex_lock(&c->vmu);
	snprintf(out->etcd_why, sizeof(out->etcd_why), "%s", c->etcd_why);
	const char *node;
	json_t *per;
	json_object_foreach(c->views, node, per) {
		health_combined_t hc;
		cluster_combine(per, c->cc.quorum, &hc);
		if (!hc.views)
			continue;
		if (hc.state == VERDICT_DEMOTED)
			out->nodes_down++;
		else if (hc.down)
			out->nodes_partial++;
		else
			out->nodes_up++;
	}
	pthread_mutex_unlock(&c->vmu);
}

const health_cluster_t *cluster_health_hooks(cluster_t *c)
{
	return c ? &c->hooks : NULL;
}

void cluster__known_failure(cluster_t *c, char *why, size_t n)
{
	*why = 0;
	if (__atomic_load_n(&c->etcd_noted, __ATOMIC_RELAXED)) {
		pthread_mutex_lock(&c->vmu);
		snprintf(why, n, "%s", c->etcd_why);
		pthread_mutex_unlock(&c->vmu);
	}
}

etcd_t *cluster__writer(cluster_t *c)
{
	if (!c->we) {
		c->we = etcd_new(&c->cc);
		etcd_set_retry(c->we, (unsigned)(c->cc.timeout * 1000));
	}
	return c->we;
}

int cluster_feed_write(cluster_t *c, const char *actor, json_t *lines,
                       uint32_t at, double keep, double skew, int64_t *rev,
                       char *err, size_t errlen)
{
	char why[sizeof(c->etcd_why)], msg[1024];
	cluster__known_failure(c, why, sizeof(why));
	if (*why) {
		snprintf(err, errlen, "cluster: %s; nothing was written", why);
		return GSLB_EIO;
	}
	etcd_t *e = cluster__writer(c);
	int rc = cluster_feed_put(e, c->cc.prefix, c->cc.name, actor, lines, at, keep,
	                          skew, rev, msg, sizeof(msg));
	if (rc)
		snprintf(err, errlen, "cluster: %s; nothing was written", cluster_etcd_why(
		         e, rc, msg, "etcd refused the measurements: ", why, sizeof(why)));
	return rc;
}

cluster_commit_class_t cluster_write(cluster_t *c, wdb_txn_t *t,
                                     const char *what, const char *actor,
                                     int64_t *rev, char *err, size_t errlen)
{
	/* While the watch or the lease thread knows etcd fails, a change of
	 * the table is refused at once rather than after the main loop
	 * waited out every member's timeout again. */
	char why[sizeof(c->etcd_why)];
	cluster__known_failure(c, why, sizeof(why));
	if (*why && cluster_commit_shared(t)) {
		snprintf(err, errlen, "cluster: %s; nothing was written", why);
		wdb_abort(t);
		return CLUSTER_COMMIT_UNAVAILABLE;
	}
	cluster__writer(c);
	/* Test-only (tests/integ/test_cluster_api.sh): a window between
	 * the store's read and the write, so that two writers race. */
	const char *delay = getenv("GSLBD_TEST_CLUSTER_WRITE_DELAY_MS");
	cluster_writer_t w = {
		.etcd = c->we, .db = c->db, .prefix = c->cc.prefix,
		.instance = c->cc.name, .keystore = cluster_keyfile_dir(),
		.marker = CLUSTER_MARKER_STORE, .read_first = 1,
		.delay_ms = delay ? (unsigned)atoi(delay) : 0,
	};
	cluster_commit_out_t out;
	cluster_commit_class_t rc = cluster_commit(&w, t, what, actor, &out, err,
	                                           errlen);
	if (rc != CLUSTER_COMMIT_OK)
		return rc;
	*rev = out.rev;
	if (out.retries)
		log_notice("cluster: %s (%s): etcd was electing a leader or lost "
		           "an answer; the change went through after %u retr%s",
		           what, actor, out.retries, out.retries == 1 ? "y" : "ies");
	if (out.local < 0)
		log_warning("cluster: %s (%s): written at revision %lld, but not to "
		            "the local store (%s): the watch applies it", what, actor,
		            (long long)out.rev, out.local_err);
	return rc;
}
