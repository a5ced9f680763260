/* SPDX-License-Identifier: MIT */
/* gslbd's cluster threads: the table from etcd into the local store
 * (resync, watch), and this instance's lease and member key.  See
 * cluster.h; the layout in etcd is in sync.h. */
#include "cluster/cluster.h"
#include "cluster/etcd.h"
#include "cluster/sync.h"
#include "common/log.h"
#include "common/util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Retry delays after etcd failed: from RETRY_MIN_MS doubling up to
 * RETRY_MAX_MS, so that a restarted etcd is seen within seconds while an
 * outage of hours costs a request every few seconds. */
#define RETRY_MIN_MS 200
#define RETRY_MAX_MS 5000

struct cluster {
	cluster_conf_t cc;
	weightdb_t *db;
	char actor[CLUSTER_NAME_MAX + 16];
	pthread_t watch_thr, lease_thr;
	int watch_started, lease_started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;                 /* under mu; read unlocked by stop_cb */
	int64_t rev;              /* last revision applied or read */
	int need_resync;
	int connected;            /* atomic */
	uint64_t resyncs, applied; /* atomic */
	int64_t lease;            /* lease thread only */
};

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int stopping(cluster_t *c)
{
	return __atomic_load_n(&c->stop, __ATOMIC_RELAXED);
}

static int stop_cb(void *arg)
{
	return stopping(arg);
}

/* Sleeps @ms unless stopped first.  Returns whether to stop. */
static int nap(cluster_t *c, unsigned ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&c->mu);
	while (!c->stop && pthread_cond_timedwait(&c->cv, &c->mu, &ts) == 0)
		;
	int s = c->stop;
	pthread_mutex_unlock(&c->mu);
	return s;
}

static void set_connected(cluster_t *c, int up, const char *why)
{
	int was = __atomic_exchange_n(&c->connected, up, __ATOMIC_RELAXED);
	if (was == up)
		return;
	if (up)
		log_notice("cluster: etcd reachable again, table at revision %lld",
		           (long long)c->rev);
	else
		log_warning("cluster: etcd unreachable (%s); answering from the local "
		            "store, retrying", why);
}

/* The changes of one revision, collected from the watch. */
typedef struct group {
	int64_t rev;
	json_t *changes;          /* [{kind, key, after}] */
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
		rc = cluster_apply(c->db, g->rev, g->changes, g->actor, g->what, NULL,
		                   err, sizeof(err));
		if (rc < 0) {
			log_err("cluster: revision %lld: %s; resyncing in full",
			        (long long)g->rev, err);
			c->need_resync = 1;
		} else if (rc > 0) {
			__atomic_add_fetch(&c->applied, 1, __ATOMIC_RELAXED);
			log_info("cluster: applied revision %lld: %s (%s)",
			         (long long)g->rev, g->what, g->actor);
		}
	}
	if (rc >= 0)
		__atomic_store_n(&c->rev, g->rev, __ATOMIC_RELAXED);
	json_array_clear(g->changes);
	g->rev = 0;
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
	} else if (!del && strcmp(kv.key + pl, "change") == 0) {
		json_t *rec = json_loadb(kv.value, kv.value_len, 0, NULL);
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
	set_connected(c, 1, NULL);
	int64_t compacted = etcd_int(res, "compact_revision");
	if (compacted || json_is_true(json_object_get(res, "canceled"))) {
		log_notice("cluster: etcd history compacted past revision %lld; "
		           "resyncing in full", (long long)c->rev);
		c->need_resync = 1;
		return 1;
	}
	group_t g = { 0, json_array(), "", "" };
	size_t i;
	json_t *ev;
	json_array_foreach(json_object_get(res, "events"), i, ev)
		group_event(c, &g, ev);
	flush_group(c, &g);
	json_decref(g.changes);
	return c->need_resync || stopping(c);
}

static void *watch_main(void *arg)
{
	cluster_t *c = arg;
	etcd_t *e = etcd_new(&c->cc);
	char err[1024];
	unsigned delay = RETRY_MIN_MS;
	c->need_resync = 1;
	while (!stopping(c)) {
		if (c->need_resync) {
			int64_t rev = 0, marker = 0, t0 = mono_ms();
			int rc = cluster_resync(c->db, e, c->cc.prefix, c->actor, &rev, &marker,
			                        err, sizeof(err));
			if (rc < 0) {
				set_connected(c, 0, err);
				if (nap(c, delay))
					break;
				delay = delay * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : delay * 2;
				continue;
			}
			c->need_resync = 0;
			int64_t local = cluster_local_rev(c->db);
			__atomic_store_n(&c->rev, local > rev ? local : rev, __ATOMIC_RELAXED);
			__atomic_add_fetch(&c->resyncs, 1, __ATOMIC_RELAXED);
			set_connected(c, 1, NULL);
			log_info("cluster: resynced from etcd at revision %lld: %d objects "
			         "changed in %lld ms", (long long)rev, rc,
			         (long long)(mono_ms() - t0));
		}
		int rc = etcd_watch(e, c->cc.prefix, c->rev + 1, on_watch, stop_cb, c,
		                    err, sizeof(err));
		if (stopping(c))
			break;
		if (rc == GSLB_EIO) {
			set_connected(c, 0, err);
			if (nap(c, delay))
				break;
			delay = delay * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : delay * 2;
		} else {
			delay = RETRY_MIN_MS;
		}
	}
	etcd_free(e);
	return NULL;
}

/* The member key: this instance and its vantage, on the lease. */
static int put_member(cluster_t *c, etcd_t *e, char *err, size_t errlen)
{
	char key[512], lease[32];
	snprintf(key, sizeof(key), "%smembers/%s", c->cc.prefix, c->cc.name);
	snprintf(lease, sizeof(lease), "%lld", (long long)c->lease);
	json_t *v = json_pack("{s:s, s:s, s:s, s:i}", "name", c->cc.name,
	                      "region", c->cc.region, "isp", c->cc.isp,
	                      "pid", (int)getpid());
	char *text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(v);
	char *bk = etcd_b64(key, strlen(key)), *bv = etcd_b64(text, strlen(text));
	free(text);
	json_t *req = json_pack("{s:s, s:s, s:s}", "key", bk, "value", bv, "lease", lease);
	free(bk);
	free(bv);
	json_t *ans = NULL;
	int rc = etcd_post(e, "/v3/kv/put", req, &ans, err, errlen);
	json_decref(req);
	json_decref(ans);
	return rc;
}

static void *lease_main(void *arg)
{
	cluster_t *c = arg;
	etcd_t *e = etcd_new(&c->cc);
	char err[1024];
	/* Renewed three times per TTL: one lost renewal never loses it. */
	unsigned every_ms = c->cc.lease_ttl * 1000 / 3;
	while (!stopping(c)) {
		int rc = 0;
		if (!c->lease) {
			rc = etcd_lease_grant(e, c->cc.lease_ttl, &c->lease, err, sizeof(err));
			if (!rc && (rc = put_member(c, e, err, sizeof(err))))
				c->lease = 0;
			if (!rc)
				log_info("cluster: member %s joined with lease %llx", c->cc.name,
				         (unsigned long long)c->lease);
		} else {
			rc = etcd_lease_keepalive(e, c->lease, err, sizeof(err));
			if (rc == GSLB_ENOENT) {
				log_warning("cluster: %s; joining again", err);
				c->lease = 0;
				continue;
			}
		}
		if (rc)
			log_debug("cluster: lease: %s", err);
		if (nap(c, rc ? RETRY_MIN_MS * 5 : every_ms))
			break;
	}
	if (c->lease) {
		char id[32];
		snprintf(id, sizeof(id), "%lld", (long long)c->lease);
		json_t *req = json_pack("{s:s}", "ID", id), *ans = NULL;
		etcd_post(e, "/v3/lease/revoke", req, &ans, err, sizeof(err));
		json_decref(req);
		json_decref(ans);
	}
	etcd_free(e);
	return NULL;
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
	snprintf(c->actor, sizeof(c->actor), "cluster:%s", cc->name);
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	if (pthread_create(&c->watch_thr, NULL, watch_main, c)) {
		snprintf(err, errlen, "cluster: cannot start the watch thread");
		cluster_stop(c);
		return NULL;
	}
	c->watch_started = 1;
	if (pthread_create(&c->lease_thr, NULL, lease_main, c)) {
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
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->cv);
	cluster_conf_free(&c->cc);
	free(c);
}

void cluster_info(cluster_t *c, cluster_info_t *out)
{
	out->connected = __atomic_load_n(&c->connected, __ATOMIC_RELAXED);
	out->revision = __atomic_load_n(&c->rev, __ATOMIC_RELAXED);
	out->resyncs = __atomic_load_n(&c->resyncs, __ATOMIC_RELAXED);
	out->applied = __atomic_load_n(&c->applied, __ATOMIC_RELAXED);
}
