/* SPDX-License-Identifier: MIT */
/* The check of the local table against etcd's, and the overrides'
 * reminders (see verify.h). */
#include "cluster/verify.h"
#include "cluster/digest.h"
#include "cluster/etcd.h"
#include "cluster/override.h"
#include "cluster/sync.h"
#include "common/log.h"
#include "common/util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The step of the thread: a new override is logged within it. */
#define STEP_MS 500
/* Every this many checks the comparison is a full one, whatever the
 * incremental ones found (an hour at the default interval). */
#define FULL_EVERY 60
/* Records since the last check that touch more objects than this (a
 * full read, a large apply) cost about what a full check costs to look
 * at: it is made instead. */
#define DELTA_MAX 10000

struct cluster_verify {
	const cluster_conf_t *cc;
	weightdb_t *db;
	char actor[CLUSTER_NAME_MAX + 16];
	pthread_t thr;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;                 /* under mu */
	int first_done;           /* under mu: the first comparison is over */
	cluster_verify_info_t info;   /* under mu */
	json_t *seen;             /* thread: {"KIND/KEY": time} logged */
	/* The incremental check's starting point: the store's audit id up
	 * to which the table is known to be etcd's (0: none, compare in
	 * full), and the checks since the last full one.  Thread only. */
	int64_t agreed_id;
	unsigned since_full;
};

/* Sleeps @ms unless stopped first.  Returns whether to stop. */
static int nap(cluster_verify_t *v, unsigned ms)
{
	struct timespec ts = util_deadline_ms(ms);
	pthread_mutex_lock(&v->mu);
	while (!v->stop && pthread_cond_timedwait(&v->cv, &v->mu, &ts) == 0)
		;
	int s = v->stop;
	pthread_mutex_unlock(&v->mu);
	return s;
}

/* Logs the overrides that are new (or, with @all, every one), at
 * warning level: an instance that answers apart from the cluster keeps
 * saying so. */
static void note_overrides(cluster_verify_t *v, int all)
{
	wdb_txn_t *t = wdb_begin_read(v->db);
	if (!t)
		return;
	json_t *ovs = cluster_override_list(t), *rec;
	wdb_abort(t);
	const char *key;
	json_object_foreach(ovs, key, rec) {
		const char *tm = json_string_value(json_object_get(rec, "time"));
		const char *was = json_string_value(json_object_get(v->seen, key));
		if (!all && was && tm && strcmp(was, tm) == 0)
			continue;
		char text[800];
		log_warning("cluster: local override on this instance: %s; it stays until "
		            "'gslbctl cluster overrides push' writes it to the cluster or "
		            "'gslbctl cluster overrides drop' drops it",
		            cluster_override_text(rec, text, sizeof(text)));
	}
	json_object_foreach(v->seen, key, rec)
		if (!json_object_get(ovs, key))
			log_notice("cluster: local override of %s is gone (pushed or dropped)", key);
	json_object_clear(v->seen);
	json_object_foreach(ovs, key, rec)
		json_object_set(v->seen, key, json_object_get(rec, "time"));
	pthread_mutex_lock(&v->mu);
	v->info.overrides = (unsigned)json_object_size(ovs);
	pthread_mutex_unlock(&v->mu);
	json_decref(ovs);
}

/* One comparison; returns 1 when it found a divergence (and resynced),
 * 0 when the tables agree, -1 when it could not compare (no revision
 * yet, etcd unreachable, the revision compacted away). */
/* This thread's CPU time, in ms: what a check costs, beside its wait
 * for etcd. */
static int64_t thread_cpu_ms(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int check_full(cluster_verify_t *v, etcd_t *e)
{
	int64_t t0 = util_mono_ms(), c0 = thread_cpu_ms();
	/* Read first: records committed meanwhile are looked at again by
	 * the next incremental check, which is harmless. */
	int64_t seq = wdb_audit_last(v->db);
	cluster_digest_t mine, theirs = { 0, 0 };
	int64_t rev = 0, at = 0, marker = 0;
	json_t *table = NULL;
	char err[1024];
	if (cluster_digest_store(v->db, &mine, &rev, NULL) || rev <= 0)
		return -1;
	if (cluster_read_table(e, v->cc->prefix, rev, &table, &at, &marker, err,
	                       sizeof(err))) {
		log_debug("cluster: cannot compare the table with etcd's at revision %lld: %s",
		          (long long)rev, err);
		return -1;
	}
	cluster_digest_table(table, &theirs);
	json_decref(table);
	int differ = !cluster_digest_equal(&mine, &theirs);
	log_debug("cluster: table checked against etcd's at revision %lld: %llu objects, "
	          "%lld ms (%lld ms of CPU in gslbd)", (long long)rev,
	          (unsigned long long)theirs.count, (long long)(util_mono_ms() - t0),
	          (long long)(thread_cpu_ms() - c0));
	v->agreed_id = differ ? 0 : seq;
	v->since_full = 0;
	pthread_mutex_lock(&v->mu);
	int was = v->info.diverged;
	v->info.checks++;
	v->info.full_checks++;
	v->info.checked_rev = rev;
	v->info.diverged = differ;
	if (differ)
		v->info.divergences++;
	pthread_mutex_unlock(&v->mu);
	if (!differ) {
		if (was)
			log_notice("cluster: the local table matches etcd's again at revision %lld",
			           (long long)rev);
		return 0;
	}
	log_err("cluster: the local table differs from etcd's at revision %lld (%llu "
	        "objects here, %llu in etcd, beside declared overrides): it was changed "
	        "outside the cluster; reading the table from etcd again", (long long)rev,
	        (unsigned long long)mine.count, (unsigned long long)theirs.count);
	int n = cluster_resync_force(v->db, e, v->cc->prefix, v->actor, &at, err,
	                             sizeof(err));
	if (n < 0)
		log_err("cluster: resync after the divergence: %s", err);
	else
		log_notice("cluster: resynced from etcd at revision %lld: %d objects changed",
		           (long long)at, n);
	return 1;
}

/* The objects the audit records after the agreed point changed, by
 * "KIND/KEY": the value before the first of them (@base), the last the
 * store holds (@local), and the last one etcd gave (@cluster). */
typedef struct delta {
	json_t *base, *local, *cluster;
	int64_t next_id, last_id;  /* the ids expected, in order */
	int full;                 /* a record only a full comparison judges */
	unsigned records;
} delta_t;

static int delta_rec(int64_t id, json_t *rec, void *arg)
{
	delta_t *d = arg;
	if (id > d->last_id)
		return 1;
	/* A record trimmed away (or an id skipped): not known. */
	if (id != d->next_id++) {
		d->full = 1;
		return 1;
	}
	d->records++;
	/* What the store got from etcd says the revision (cluster_apply(),
	 * a full read); any other commit is the store's own. */
	int from_etcd = json_object_get(rec, "revision") != NULL;
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(rec, "changes"), i, c) {
		const char *kn = json_string_value(json_object_get(c, "kind"));
		const char *key = json_string_value(json_object_get(c, "key"));
		wdb_kind_t kind;
		if (kn && strcmp(kn, "override") == 0) {
			d->full = 1;   /* counted as the cluster's object */
			return 1;
		}
		if (!key || !cluster_kind_by_name(kn, &kind))
			continue;
		char k[600];
		snprintf(k, sizeof(k), "%s/%s", kn, key);
		json_t *before = json_object_get(c, "before"), *after = json_object_get(c, "after");
		if (!json_object_get(d->base, k))
			json_object_set(d->base, k, before ? before : json_null());
		json_object_set(d->local, k, after ? after : json_null());
		if (from_etcd)
			json_object_set(d->cluster, k, after ? after : json_null());
	}
	if (json_object_size(d->local) > DELTA_MAX) {
		d->full = 1;
		return 1;
	}
	return 0;
}

/* The check between two full ones: the table agreed with etcd's at
 * audit id v->agreed_id, so it still does when each object changed
 * since holds what etcd last gave it (or, never given one since, what
 * it held then).  Reads only the store's records since that point: no
 * etcd read, no walk of the table.  What it cannot see (an object
 * changed without an audit record, a change etcd made that the watch
 * never delivered) is the full comparison's, every FULL_EVERY checks.
 * Returns 0 (agree), or -2 when a full comparison must decide. */
static int check_incremental(cluster_verify_t *v)
{
	int64_t t0 = util_mono_ms(), c0 = thread_cpu_ms();
	wdb_txn_t *t = wdb_begin_read(v->db);
	if (!t)
		return -2;
	int64_t rev = (int64_t)wdb_meta_u64(t, "clusterrev");
	json_t *ovs = cluster_override_list(t);
	int overrides = json_object_size(ovs) > 0;
	json_decref(ovs);
	wdb_abort(t);
	delta_t d = { json_object(), json_object(), json_object(), v->agreed_id + 1,
	              wdb_audit_last(v->db), overrides, 0 };
	if (!d.full && wdb_audit_each(v->db, v->agreed_id, delta_rec, &d) < 0)
		d.full = 1;
	int differ = 0;
	const char *k;
	json_t *mine;
	json_object_foreach(d.local, k, mine) {
		json_t *want = json_object_get(d.cluster, k);
		if (!want)
			want = json_object_get(d.base, k);
		if (!json_equal(mine, want))
			differ = 1;
	}
	unsigned objects = (unsigned)json_object_size(d.local);
	json_decref(d.base);
	json_decref(d.local);
	json_decref(d.cluster);
	if (d.full || differ)
		return -2;
	log_debug("cluster: table checked against etcd's at revision %lld from the "
	          "store's %u records since the last check (%u objects): %lld ms (%lld ms "
	          "of CPU in gslbd)", (long long)rev, d.records, objects,
	          (long long)(util_mono_ms() - t0), (long long)(thread_cpu_ms() - c0));
	pthread_mutex_lock(&v->mu);
	v->info.checks++;
	v->info.checked_rev = rev;
	v->info.diverged = 0;
	pthread_mutex_unlock(&v->mu);
	v->agreed_id = d.last_id;
	v->since_full++;
	return 0;
}

/* One check: incremental after a full one agreed, full at start, after
 * a divergence, every FULL_EVERY checks and whenever the incremental
 * one cannot tell (check_full()'s returns). */
static int check(cluster_verify_t *v, etcd_t *e)
{
	if (v->agreed_id > 0 && v->since_full < FULL_EVERY - 1 &&
	    check_incremental(v) == 0)
		return 0;
	return check_full(v, e);
}

static void *verify_main(void *arg)
{
	cluster_verify_t *v = arg;
	etcd_t *e = etcd_new(v->cc);
	etcd_set_retry(e, 0);
	int64_t every = (int64_t)(v->cc->verify_interval * 1000), next = 0;
	int64_t remind_every = every > 0 ? every : 60000, remind = 0;
	/* The first comparison before the watch's first full read, which
	 * would otherwise repair a store changed while gslbd was stopped
	 * without a word. */
	if (every > 0) {
		int rc = check(v, e);
		next = util_mono_ms() + (rc == 0 ? every : rc > 0 ? 0 : STEP_MS);
	}
	pthread_mutex_lock(&v->mu);
	v->first_done = 1;
	pthread_cond_broadcast(&v->cv);
	pthread_mutex_unlock(&v->mu);
	while (!nap(v, STEP_MS)) {
		int64_t now = util_mono_ms();
		note_overrides(v, remind && now >= remind);
		if (!remind || now >= remind)
			remind = now + remind_every;
		if (every <= 0 || now < next)
			continue;
		int rc = check(v, e);
		/* After a divergence, check the resynced table at once; before
		 * the first comparison, try every step. */
		next = rc == 0 ? now + every : rc > 0 ? now : now + STEP_MS;
	}
	etcd_free(e);
	return NULL;
}

cluster_verify_t *cluster_verify_start(const cluster_conf_t *cc, weightdb_t *db,
                                       const char *actor)
{
	cluster_verify_t *v = xcalloc(1, sizeof(*v));
	v->cc = cc;
	v->db = db;
	snprintf(v->actor, sizeof(v->actor), "%s", actor);
	v->seen = json_object();
	pthread_mutex_init(&v->mu, NULL);
	pthread_cond_init(&v->cv, NULL);
	if (pthread_create(&v->thr, NULL, verify_main, v)) {
		pthread_mutex_destroy(&v->mu);
		pthread_cond_destroy(&v->cv);
		json_decref(v->seen);
		free(v);
		return NULL;
	}
	return v;
}

void cluster_verify_stop(cluster_verify_t *v)
{
	if (!v)
		return;
	pthread_mutex_lock(&v->mu);
	v->stop = 1;
	pthread_cond_broadcast(&v->cv);
	pthread_mutex_unlock(&v->mu);
	pthread_join(v->thr, NULL);
	pthread_mutex_destroy(&v->mu);
	pthread_cond_destroy(&v->cv);
	json_decref(v->seen);
	free(v);
}

void cluster_verify_wait_first(cluster_verify_t *v)
{
	if (!v)
		return;
	pthread_mutex_lock(&v->mu);
	while (!v->first_done && !v->stop)
		pthread_cond_wait(&v->cv, &v->mu);
	pthread_mutex_unlock(&v->mu);
}

void cluster_verify_info(cluster_verify_t *v, cluster_verify_info_t *out)
{
	memset(out, 0, sizeof(*out));
	if (!v)
		return;
	pthread_mutex_lock(&v->mu);
	*out = v->info;
	pthread_mutex_unlock(&v->mu);
}
