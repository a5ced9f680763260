/* SPDX-License-Identifier: MIT */
/* Key rollovers in cluster mode: the elected instance plans and makes
 * each step on its local store as a standalone gslbd does
 * (dnssec/roll_run.c), but the step's records go to etcd, with the file
 * of a key it made (cluster/keyfiles.h), in one transaction under its
 * leadership epoch; every instance, the elected one included, gets them
 * through the watch.  See cluster_int.h. */
#include "cluster/clog.h"
#include "cluster/cluster.h"
#include "cluster/etcd.h"
#include "cluster/keyfiles.h"
#include "cluster/sync.h"
#include "common/log.h"
#include "common/util.h"
#include "dnssec/roll.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "cluster/cluster_int.h"

static json_t *b64_json(const char *s)
{
	char *b = etcd_b64(s, strlen(s));
	json_t *j = json_string(b);
	free(b);
	return j;
}

/* The puts and deletes of the dnssec records of @changes into @ops, and
 * into @cmp the compares that each is unchanged since revision @base. */
static void record_ops(const cluster_t *c, json_t *changes, int64_t base,
                       json_t *ops, json_t *cmp)
{
	char below[32];
	snprintf(below, sizeof(below), "%lld", (long long)base + 1);
	size_t i;
	json_t *ch;
	json_array_foreach(changes, i, ch) {
		char key[1024];
		cluster_key(key, sizeof(key), c->cc.prefix, WDB_DNSSEC,
		            json_string_value(json_object_get(ch, "key")));
		json_array_append_new(cmp, json_pack("{s:s, s:o, s:s, s:s}", "target",
		                      "MOD", "key", b64_json(key), "result", "LESS",
		                      "mod_revision", below));
		json_t *after = json_object_get(ch, "after");
		if (json_is_null(after)) {
			json_array_append_new(ops, json_pack("{s:{s:o}}",
			                      "request_delete_range", "key", b64_json(key)));
			continue;
		}
		char *v = json_dumps(after, JSON_COMPACT | JSON_SORT_KEYS);
		json_array_append_new(ops, json_pack("{s:{s:o, s:o}}", "request_put",
		                      "key", b64_json(key), "value", b64_json(v)));
		free(v);
	}
}

/* The "decided" record's put: the elected instance's step @what. */
static json_t *decided_op(const cluster_t *c, const char *what, int64_t epoch)
{
	char dk[512], now[40];
	time_t tt = time(NULL);
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tm);
	snprintf(dk, sizeof(dk), "%sdecided", c->cc.prefix);
	json_t *rec = json_pack("{s:s, s:s, s:s, s:s, s:I}", "actor", "dnssec",
	                        "what", what, "time", now, "instance", c->cc.name,
	                        "epoch", (json_int_t)epoch);
	char *rv = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(rec);
	json_t *op = json_pack("{s:{s:o, s:o}}", "request_put", "key", b64_json(dk),
	                       "value", b64_json(rv));
	free(rv);
	return op;
}

int cluster__dnssec_commit(void *arg, wdb_txn_t *t, const char *what,
                           char *err, size_t errlen)
{
	cluster_t *c = arg;
	int64_t epoch = __atomic_load_n(&c->epoch, __ATOMIC_RELAXED);
	/* A store behind our own last step would plan that step again and
	 * have etcd refuse it, which holds the zone's rollover back for a
	 * minute: wait for the watch instead. */
	if (epoch && epoch == c->roll_epoch &&
	    (int64_t)wdb_meta_u64(t, "clusterrev") < c->roll_rev) {
		wdb_abort(t);
		return 1;
	}
	if (!epoch || wdb_check(t, err, errlen)) {
		if (!epoch)
			snprintf(err, errlen, "not the elected instance any more");
		wdb_abort(t);
		return -1;
	}
	/* @changes without "before", as the elected instance's decisions
	 * are logged (ctl_log.c: not for a rollback); @files with it, for
	 * the key files (keyfiles.h). */
	json_t *changes = json_array(), *files = json_array();
	size_t i;
	json_t *ch;
	json_array_foreach(wdb_changes(t), i, ch)
		if (!strcmp(json_string_value(json_object_get(ch, "kind")), "dnssec")) {
			json_array_append_new(changes, json_pack("{s:s, s:O, s:O}",
			    "kind", "dnssec", "key", json_object_get(ch, "key"),
			    "after", json_object_get(ch, "after")));
			json_array_append(files, ch);
		}
	int64_t base = (int64_t)wdb_meta_u64(t, "clusterrev");
	wdb_abort(t);
	char lk[512], ep[32];
	snprintf(lk, sizeof(lk), "%sleader", c->cc.prefix);
	snprintf(ep, sizeof(ep), "%lld", (long long)epoch);
	json_t *cmp = json_pack("[{s:s, s:o, s:s, s:s}]", "target", "CREATE",
	                        "key", b64_json(lk), "result", "EQUAL",
	                        "create_revision", ep);
	json_t *ops = json_array();
	int rc = cluster_keyfile_ops(c->cc.prefix, cluster_keyfile_dir(), files,
	                             ops, err, errlen);
	json_decref(files);
	record_ops(c, changes, base, ops, cmp);
	json_array_append_new(ops, decided_op(c, what, epoch));
	/* The step's record in the cluster's change log (clog.h), marked
	 * automatic as the elected instance's other decisions are. */
	char now[40];
	time_t tt = time(NULL);
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_array_append_new(ops, cluster_log_op_max(c->cc.prefix, json_pack(
	    "{s:s, s:s, s:s, s:O, s:s, s:I, s:b}", "time", now, "actor", "dnssec",
	    "what", what, "changes", changes, "instance", c->cc.name,
	    "epoch", (json_int_t)epoch, "automatic", 1), CLUSTER_LOG_AUTO_MAX));
	json_decref(changes);
	json_t *req = json_pack("{s:o, s:o}", "compare", cmp, "success", ops);
	json_t *ans = NULL;
	if (!c->re)
		c->re = etcd_new(&c->cc);
	if (!rc)
		rc = etcd_post(c->re, "/v3/kv/txn", req, &ans, err, errlen);
	json_decref(req);
	if (!rc && !json_is_true(json_object_get(ans, "succeeded"))) {
		snprintf(err, errlen, "etcd refused it: no longer the elected "
		         "instance, or the keys changed meanwhile");
		rc = -1;
	}
	if (!rc) {
		c->roll_rev = etcd_int(json_object_get(ans, "header"), "revision");
		c->roll_epoch = epoch;
	}
	json_decref(ans);
	if (!rc)
		__atomic_add_fetch(&c->decisions, 1, __ATOMIC_RELAXED);
	return rc ? -1 : 0;
}

int cluster_elected(cluster_t *c)
{
	return c && __atomic_load_n(&c->epoch, __ATOMIC_RELAXED) != 0;
}

void cluster_dnssec_rollovers(cluster_t *c)
{
	roll_set_commit(c ? cluster__dnssec_commit : NULL, c);
}
