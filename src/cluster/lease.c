/* SPDX-License-Identifier: MIT */
/* The lease thread of a cluster instance: its member key on a lease,
 * the campaign for the leader key (standing aside while it holds local
 * overrides), and its views of the nodes published for the others
 * (S4-6).  See cluster_int.h. */
#include "cluster/cluster.h"
#include "cluster/clog.h"
#include "cluster/etcd.h"
#include "cluster/feed.h"
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

/* Election ------------------------------------------------------ */

/* One campaign: the leader key is created with our lease only when it
 * is absent (etcd transaction comparing its create revision with 0);
 * else we learn who leads, and take back a key that is still ours (etcd
 * was unreachable for a while, the lease lived).  The key goes with the
 * lease, so a dead leader's goes within the lease time. */
static void campaign(cluster_t *c, etcd_t *e)
{
	char key[512], err[1024], lease[32];
	snprintf(key, sizeof(key), "%sleader", c->cc.prefix);
	snprintf(lease, sizeof(lease), "%lld", (long long)c->lease);
	json_t *v = json_pack("{s:s, s:s, s:s, s:i}", "name", c->cc.name,
	                      "region", c->cc.region, "isp", c->cc.isp, "pid", (int)getpid());
	char *text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(v);
	char *bk = etcd_b64(key, strlen(key)), *bv = etcd_b64(text, strlen(text));
	free(text);
	json_t *req = json_pack("{s:[{s:s, s:s, s:s, s:s}], s:[{s:{s:s, s:s, s:s}}], "
	                        "s:[{s:{s:s}}]}",
	                        "compare", "target", "CREATE", "key", bk, "result", "EQUAL",
	                        "create_revision", "0",
	                        "success", "request_put", "key", bk, "value", bv, "lease", lease,
	                        "failure", "request_range", "key", bk);
	free(bk);
	free(bv);
	json_t *ans = NULL;
	int rc = etcd_post(e, "/v3/kv/txn", req, &ans, err, sizeof(err));
	json_decref(req);
	if (rc) {
		log_debug("cluster: campaign: %s", err);
		return;
	}
	int64_t ep = 0;
	if (json_is_true(json_object_get(ans, "succeeded"))) {
		ep = etcd_int(json_object_get(ans, "header"), "revision");
		log_notice("cluster: %s elected to make the automatic decisions (epoch %lld)",
		           c->cc.name, (long long)ep);
	} else {
		json_t *r = json_object_get(json_array_get(json_object_get(ans, "responses"), 0),
		                            "response_range");
		etcd_kv_t kv;
		if (!etcd_kv_parse(json_array_get(json_object_get(r, "kvs"), 0), &kv)) {
			if (kv.lease == c->lease)
				ep = kv.create_rev;
			pthread_mutex_lock(&c->vmu);
			cluster__leader_event(c, &kv, 0);
			pthread_mutex_unlock(&c->vmu);
			etcd_kv_clear(&kv);
		}
	}
	json_decref(ans);
	if (ep) {
		pthread_mutex_lock(&c->vmu);
		snprintf(c->leader, sizeof(c->leader), "%s", c->cc.name);
		pthread_mutex_unlock(&c->vmu);
	}
	__atomic_store_n(&c->epoch, ep, __ATOMIC_RELAXED);
}

/* An instance that holds declared local overrides does not make the
 * automatic decisions: its health thread reads the overridden table,
 * and its promotions or shares would carry an override of one instance
 * to all.  While elected, it gives the leader key up (a delete compared
 * with its epoch), and another instance is elected at once. */
static int stand_aside(cluster_t *c, etcd_t *e)
{
	cluster_verify_info_t vi;
	cluster_verify_info(c->verify, &vi);
	int64_t ep = __atomic_load_n(&c->epoch, __ATOMIC_RELAXED);
	if (!vi.overrides || !ep)
		return vi.overrides > 0;
	char key[512], err[1024], er[32];
	snprintf(key, sizeof(key), "%sleader", c->cc.prefix);
	snprintf(er, sizeof(er), "%lld", (long long)ep);
	char *bk = etcd_b64(key, strlen(key));
	json_t *req = json_pack("{s:[{s:s, s:s, s:s, s:s}], s:[{s:{s:s}}]}",
	                        "compare", "target", "CREATE", "key", bk, "result", "EQUAL",
	                        "create_revision", er,
	                        "success", "request_delete_range", "key", bk);
	free(bk);
	json_t *ans = NULL;
	if (etcd_post(e, "/v3/kv/txn", req, &ans, err, sizeof(err)) == 0) {
		log_notice("cluster: %s holds local overrides: it gives up making the "
		           "automatic decisions until they are pushed or dropped", c->cc.name);
		cluster__set_epoch(c, 0);
	}
	json_decref(req);
	json_decref(ans);
	return 1;
}

/* Views out ------------------------------------------------------- */

/* Whether view @a and @b differ in what the quorum reads. */
int cluster__verdict_moved(json_t *a, json_t *b)
{
	static const char *const f[] = { "state", "pct", "stale" };
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
		if (!json_equal(json_object_get(a, f[i]), json_object_get(b, f[i])))
			return 1;
	return 0;
}

/* Puts this instance's views that moved (at once) or only aged (every
 * VIEW_REFRESH_MS) under P health/NODE/NAME with the member lease, in
 * transactions of TXN_OPS. */
static void publish_views(cluster_t *c, etcd_t *e)
{
	int64_t now = util_mono_ms();
	json_t *todo = json_object();
	pthread_mutex_lock(&c->vmu);
	const char *node;
	json_t *v;
	json_object_foreach(c->mine, node, v) {
		json_t *was = json_object_get(c->sent, node);
		json_t *wv = json_array_get(was, 0);
		if (!was || cluster__verdict_moved(v, wv) ||
		    (!json_equal(v, wv) &&
		     now - json_integer_value(json_array_get(was, 1)) >= VIEW_REFRESH_MS))
			json_object_set_new(todo, node, json_deep_copy(v));
	}
	pthread_mutex_unlock(&c->vmu);
	char lease[32], err[1024];
	snprintf(lease, sizeof(lease), "%lld", (long long)c->lease);
	json_t *ops = json_array(), *batch = json_array();
	void *it = json_object_iter(todo);
	while (it || json_array_size(ops)) {
		if (it) {
			node = json_object_iter_key(it);
			v = json_object_iter_value(it);
			char key[512];
			snprintf(key, sizeof(key), "%shealth/%s/%s", c->cc.prefix, node, c->cc.name);
			json_t *pv = json_deep_copy(v);
			json_object_set_new(pv, "instance", json_string(c->cc.name));
			json_object_set_new(pv, "region", json_string(c->cc.region));
			json_object_set_new(pv, "isp", json_string(c->cc.isp));
			char *text = json_dumps(pv, JSON_COMPACT | JSON_SORT_KEYS);
			json_decref(pv);
			char *bk = etcd_b64(key, strlen(key)), *bv = etcd_b64(text, strlen(text));
			free(text);
			json_array_append_new(ops, json_pack("{s:{s:s, s:s, s:s}}", "request_put",
			                      "key", bk, "value", bv, "lease", lease));
			free(bk);
			free(bv);
			json_array_append_new(batch, json_string(node));
			it = json_object_iter_next(todo, it);
			if (it && json_array_size(ops) < TXN_OPS)
				continue;
		}
		json_t *req = json_pack("{s:o}", "success", ops), *ans = NULL;
		ops = json_array();
		int rc = etcd_post(e, "/v3/kv/txn", req, &ans, err, sizeof(err));
		json_decref(req);
		json_decref(ans);
		if (rc) {
			log_debug("cluster: publishing views: %s", err);
			break;
		}
		size_t i;
		json_t *n;
		json_array_foreach(batch, i, n)
			json_object_set_new(c->sent, json_string_value(n), json_pack("[O, I]",
			    json_object_get(todo, json_string_value(n)), (json_int_t)now));
		json_array_clear(batch);
	}
	json_decref(ops);
	json_decref(batch);
	json_decref(todo);
}

/* The elected instance keeps the cluster's change log to
 * cluster.log-keep records (clog.h), every LOG_TRIM_MS. */
static void trim_log(cluster_t *c, etcd_t *e)
{
	char err[1024];
	unsigned gone = 0;
	int rc = cluster_log_trim(e, c->cc.prefix, c->cc.log_keep, &gone, err, sizeof(err));
	if (rc)
		log_debug("cluster: keeping the change log to %u records: %s",
		          c->cc.log_keep, err);
	else if (gone)
		log_info("cluster: %u of the oldest records left the change log (it keeps %u)",
		         gone, c->cc.log_keep);
}

void *cluster__lease_main(void *arg)
{
	cluster_t *c = arg;
	etcd_t *e = etcd_new(&c->cc);
	char err[1024];
	/* Renewed three times per TTL: one lost renewal never loses it. */
	int64_t every_ms = c->cc.lease_ttl * 1000 / 3, next_keep = 0, next_campaign = 0;
	int64_t next_trim = 0;
	while (!cluster__stopping(c)) {
		int rc = 0;
		int64_t now = util_mono_ms();
		if (!c->lease) {
			int64_t id = 0;
			rc = etcd_lease_grant(e, c->cc.lease_ttl, &id, err, sizeof(err));
			if (!rc) {
				__atomic_store_n(&c->lease, id, __ATOMIC_RELAXED);
				if ((rc = put_member(c, e, err, sizeof(err))))
					__atomic_store_n(&c->lease, 0, __ATOMIC_RELAXED);
			}
			if (!rc) {
				log_info("cluster: member %s joined with lease %llx", c->cc.name,
				         (unsigned long long)c->lease);
				/* The views of a former lease went with it. */
				json_object_clear(c->sent);
				next_keep = now + every_ms;
				next_campaign = 0;
			}
		} else if (now >= next_keep) {
			rc = etcd_lease_keepalive(e, c->lease, err, sizeof(err));
			if (rc == GSLB_ENOENT) {
				log_warning("cluster: %s; joining again", err);
				__atomic_store_n(&c->lease, 0, __ATOMIC_RELAXED);
				cluster__set_epoch(c, 0);
				continue;
			}
			/* Unable to renew: the lease may run out before etcd
			 * is back, so stop deciding now. */
			if (rc)
				cluster__set_epoch(c, 0);
			next_keep = now + (rc ? RETRY_MIN_MS : every_ms);
		}
		if (rc) {
			log_debug("cluster: lease: %s", err);
			cluster__note_etcd(c, e, err);
		} else {
			cluster__note_etcd(c, NULL, NULL);
			pthread_mutex_lock(&c->vmu);
			int none = !c->leader[0];
			pthread_mutex_unlock(&c->vmu);
			/* A vacant leader key is campaigned for at once, an
			 * occupied one checked once per renewal. */
			/* Only once the table and the views are read: an
			 * instance that decided before would decide blind. */
			if (!stand_aside(c, e) && !__atomic_load_n(&c->epoch, __ATOMIC_RELAXED) &&
			    __atomic_load_n(&c->resyncs, __ATOMIC_RELAXED) &&
			    (none || now >= next_campaign)) {
				campaign(c, e);
				next_campaign = now + every_ms;
			}
			publish_views(c, e);
			if (__atomic_load_n(&c->epoch, __ATOMIC_RELAXED) && now >= next_trim) {
				trim_log(c, e);
				next_trim = now + LOG_TRIM_MS;
			}
		}
		if (cluster__nap(c, rc ? RETRY_MIN_MS * 5 : STEP_MS))
			break;
	}
	cluster__set_epoch(c, 0);
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

