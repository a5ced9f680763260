/* SPDX-License-Identifier: MIT */
/* The elected instance's decisions into etcd: the health thread's
 * records flattened into operations, written in transactions of at most
 * TXN_OPS under its leadership epoch, with the change record.  See
 * cluster_int.h. */
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

/* @records' kinds flattened: [kind, key, record] of every kind's
 * records, in order. */
static json_t *flatten_records(json_t *records)
{
	json_t *flat = json_array();
	const char *kname;
	json_t *recs;
	json_object_foreach(records, kname, recs) {
		wdb_kind_t kind;
		if (!cluster_kind_by_name(kname, &kind))
			continue;
		const char *key;
		json_t *rec;
		json_object_foreach(recs, key, rec)
			json_array_append_new(flat, json_pack("[i, s, O]", (int)kind, key, rec));
	}
	return flat;
}

/* The writes of @flat from *@next on into @ops, as many as one
 * transaction takes besides the "decided" record and the log's; with
 * @base, the compares that each key is unchanged since into @unchanged;
 * each change, for the log, into @logged.  Moves *@next past them. */
static void record_ops(const cluster_t *c, json_t *flat, size_t *next,
                       json_int_t base, json_t *ops, json_t *unchanged,
                       json_t *logged)
{
	char below[32];
	snprintf(below, sizeof(below), "%lld", (long long)base + 1);
	size_t nflat = json_array_size(flat);
	for (; *next < nflat && json_array_size(ops) < TXN_OPS - 2; (*next)++) {
		json_t *f = json_array_get(flat, *next);
		char key[1024];
		cluster_key(key, sizeof(key), c->cc.prefix,
		            (wdb_kind_t)json_integer_value(json_array_get(f, 0)),
		            json_string_value(json_array_get(f, 1)));
		char *bk = etcd_b64(key, strlen(key));
		if (base)
			json_array_append_new(unchanged, json_pack("{s:s, s:s, s:s, s:s}",
			                      "target", "MOD", "key", bk, "result", "LESS",
			                      "mod_revision", below));
		json_t *rec = json_array_get(f, 2);
		json_array_append_new(logged, json_pack("{s:s, s:O, s:O}", "kind",
		    cluster_kind_name((wdb_kind_t)json_integer_value(json_array_get(f, 0))),
		    "key", json_array_get(f, 1), "after", rec));
		if (json_is_null(rec)) {
			json_array_append_new(ops, json_pack("{s:{s:s}}",
			                      "request_delete_range", "key", bk));
		} else {
			char *v = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
			char *bv = etcd_b64(v, strlen(v));
			json_array_append_new(ops, json_pack("{s:{s:s, s:s}}", "request_put",
			                      "key", bk, "value", bv));
			free(v);
			free(bv);
		}
		free(bk);
	}
}

/* Whether the changes @logged are all of the steering engine's state. */
static int only_state(json_t *logged)
{
	size_t i;
	json_t *l;
	json_array_foreach(logged, i, l)
		if (strcmp(json_string_value(json_object_get(l, "kind")) ?: "", "steer") != 0)
			return 0;
	return 1;
}

/* The "decided" record's put: who decided @what, at @now, under
 * @epoch. */
static json_t *decided_op(const cluster_t *c, const char *what, const char *now,
                          int64_t epoch)
{
	char dk[512];
	snprintf(dk, sizeof(dk), "%sdecided", c->cc.prefix);
	json_t *rec = json_pack("{s:s, s:s, s:s, s:s, s:I}", "actor", c->actor,
	                        "what", what, "time", now, "instance", c->cc.name,
	                        "epoch", (json_int_t)epoch);
	char *rv = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(rec);
	char *bk = etcd_b64(dk, strlen(dk)), *bv = etcd_b64(rv, strlen(rv));
	free(rv);
	json_t *op = json_pack("{s:{s:s, s:s}}", "request_put", "key", bk, "value", bv);
	free(bk);
	free(bv);
	return op;
}

/* One transaction of @ops, if the leader key is still of @epoch and the
 * @unchanged compares hold (both taken).  Returns 0, the error of the
 * request, GSLB_EAGAIN (a record moved since @base) or GSLB_EINVAL (no
 * longer the leader: the epoch is dropped). */
static int publish_txn(cluster_t *c, int64_t epoch, json_int_t base, json_t *ops,
                       json_t *unchanged, char *err, size_t errlen)
{
	char lk[512], ep[32];
	snprintf(lk, sizeof(lk), "%sleader", c->cc.prefix);
	snprintf(ep, sizeof(ep), "%lld", (long long)epoch);
	char *bk = etcd_b64(lk, strlen(lk));
	json_t *cmp = json_pack("[{s:s, s:s, s:s, s:s}]", "target", "CREATE",
	                        "key", bk, "result", "EQUAL", "create_revision", ep);
	json_array_extend(cmp, unchanged);
	json_decref(unchanged);
	/* Refused, the answer says who holds the leader key: still
	 * this epoch means a record moved, not the election. */
	json_t *req = json_pack("{s:o, s:o, s:[{s:{s:s}}]}", "compare", cmp,
	                        "success", ops, "failure", "request_range", "key", bk);
	free(bk);
	json_t *ans = NULL;
	int rc = etcd_post(c->he, "/v3/kv/txn", req, &ans, err, errlen);
	json_decref(req);
	if (rc)
		return rc;
	int ok = json_is_true(json_object_get(ans, "succeeded"));
	json_t *held = json_array_get(json_object_get(json_object_get(
		json_array_get(json_object_get(ans, "responses"), 0), "response_range"),
		"kvs"), 0);
	int still = etcd_int(held, "create_revision") == epoch;
	json_decref(ans);
	if (!ok && base && still) {
		snprintf(err, errlen, "the table moved since the decisions were "
		         "made: not written");
		return GSLB_EAGAIN;
	}
	if (!ok) {
		__atomic_add_fetch(&c->conflicts, 1, __ATOMIC_RELAXED);
		int64_t mine = epoch;
		__atomic_compare_exchange_n(&c->epoch, &mine, 0, 0, __ATOMIC_RELAXED,
		                            __ATOMIC_RELAXED);
		snprintf(err, errlen, "no longer the elected instance: decisions "
		         "not written");
		return GSLB_EINVAL;
	}
	__atomic_add_fetch(&c->decisions, 1, __ATOMIC_RELAXED);
	return 0;
}

/* The leader's decisions into etcd (health records, the steering
 * engine's rows and state, the gray release controller's services):
 * each transaction compares the leader key's create revision with the
 * epoch the decisions were made under, so that an instance that lost
 * the election (and may not know it yet) writes nothing, and no
 * decision is made twice.  With "base" in @records (the etcd revision
 * the local store reflected when the decisions were made), each record
 * must also be unchanged in etcd since then: an operator's change made
 * meanwhile is not overwritten, and a decision whose predecessor has not
 * reached the local store yet is not made again from the older state
 * (S4-10: no release step twice).  Such a refusal is GSLB_EAGAIN and
 * leaves the leadership alone. */
int cluster__publish(void *arg, int64_t epoch, json_t *records,
                        const char *what, char *err, size_t errlen)
{
	cluster_t *c = arg;
	if (!c->he)
		c->he = etcd_new(&c->cc);
	char now[40];
	time_t tt = time(NULL);
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_t *flat = flatten_records(records);
	json_int_t base = json_integer_value(json_object_get(records, "base"));
	size_t next = 0, nflat = json_array_size(flat);
	while (next < nflat) {
		json_t *ops = json_array(), *unchanged = json_array(), *logged = json_array();
		record_ops(c, flat, &next, base, ops, unchanged, logged);
		json_array_append_new(ops, decided_op(c, what, now, epoch));
		/* The decisions' record in the cluster's change log (clog.h),
		 * unless they are only the steering engine's state, written
		 * every round without changing an answer: in the stores' own
		 * logs, not in etcd's, where they would push the operators'
		 * changes out within hours. */
		if (!only_state(logged))
			json_array_append_new(ops, cluster_log_op_max(c->cc.prefix, json_pack(
			    "{s:s, s:s, s:s, s:O, s:s, s:I, s:b}", "time", now, "actor", c->actor,
			    "what", what, "changes", logged, "instance", c->cc.name,
			    "epoch", (json_int_t)epoch, "automatic", 1), CLUSTER_LOG_AUTO_MAX));
		json_decref(logged);
		int rc = publish_txn(c, epoch, base, ops, unchanged, err, errlen);
		if (rc) {
			json_decref(flat);
			return rc;
		}
	}
	json_decref(flat);
	return 0;
}

