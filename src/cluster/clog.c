/* SPDX-License-Identifier: MIT */
/* The cluster's change log in etcd (see clog.h). */
#include "cluster/clog.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* At most this many deletions a transaction: below etcd's default
 * --max-txn-ops (128). */
#define TRIM_TXN_OPS 100
#define TRIM_MAX 1000

static json_t *b64(const char *s, size_t n)
{
	char *b = etcd_b64(s, n);
	json_t *j = json_string(b);
	free(b);
	return j;
}

/* @rec without its objects: which it changed, and that they were left
 * out. */
static void slim(json_t *rec)
{
	json_t *only = json_array(), *c;
	size_t i;
	json_array_foreach(json_object_get(rec, "changes"), i, c)
		json_array_append_new(only, json_pack("{s:O, s:O}", "kind",
		    json_object_get(c, "kind"), "key", json_object_get(c, "key")));
	json_object_set_new(rec, "changes", only);
	json_object_set_new(rec, "objects_left_out", json_true());
}

json_t *cluster_log_op(const char *prefix, json_t *rec)
{
	return cluster_log_op_max(prefix, rec, CLUSTER_LOG_RECORD_MAX);
}

json_t *cluster_log_op_max(const char *prefix, json_t *rec, size_t max)
{
	uint64_t rnd = 0;
	if (getentropy(&rnd, sizeof(rnd)))
		rnd = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32 ^ (uint64_t)util_mono_ms();
	char key[600];
	snprintf(key, sizeof(key), "%slog/%016llx", prefix, (unsigned long long)rnd);
	/* The revision is the record's own create revision: not stored. */
	json_object_del(rec, "id");
	char *v = json_dumps(rec, JSON_COMPACT);
	if (v && strlen(v) > max) {
		free(v);
		slim(rec);
		v = json_dumps(rec, JSON_COMPACT);
	}
	json_decref(rec);
	json_t *op = json_pack("{s:{s:o, s:o}}", "request_put", "key", b64(key, strlen(key)),
	                       "value", v ? b64(v, strlen(v)) : json_string(""));
	free(v);
	return op;
}

/* A range of the log's keys, oldest first. */
static json_t *log_range(const char *prefix, int keys_only, long limit)
{
	char key[600];
	snprintf(key, sizeof(key), "%slog/", prefix);
	json_t *req = etcd_range_req(key, 1);
	json_object_set_new(req, "sort_order", json_string("ASCEND"));
	json_object_set_new(req, "sort_target", json_string("CREATE"));
	if (keys_only)
		json_object_set_new(req, "keys_only", json_true());
	if (limit > 0)
		json_object_set_new(req, "limit", json_integer(limit));
	return req;
}

/* One record of the log into the array @arg, named by its create
 * revision. */
static int log_record(const etcd_kv_t *kv, void *arg)
{
	json_t *rec = json_loadb(kv->value, kv->value_len, 0, NULL);
	if (json_is_object(rec)) {
		json_object_set_new(rec, "id", json_integer(kv->create_rev));
		json_object_set_new(rec, "revision", json_integer(kv->create_rev));
		json_array_append_new(arg, rec);
	} else {
		json_decref(rec);
	}
	return 0;
}

int cluster_log_read(etcd_t *e, const char *prefix, json_t **recs, char *err,
                     size_t errlen)
{
	json_t *req = log_range(prefix, 0, 0), *ans = NULL;
	int rc = etcd_post_bulk(e, "/v3/kv/range", req, &ans, err, errlen);
	json_decref(req);
	if (rc)
		return rc;
	*recs = json_array();
	etcd_kvs_each(ans, log_record, *recs);
	json_decref(ans);
	return 0;
}

int cluster_log_read_part(etcd_t *e, const char *prefix, int64_t rev,
                          long newest, json_t **recs, char *err, size_t errlen)
{
	json_t *req = log_range(prefix, 0, rev > 0 ? 1 : newest), *ans = NULL;
	if (rev > 0) {
		/* The record whose create revision is @rev: etcd filters. */
		json_object_set_new(req, "min_create_revision", json_integer(rev));
		json_object_set_new(req, "max_create_revision", json_integer(rev));
	} else if (newest > 0) {
		/* The newest first, so that the limit keeps them. */
		json_object_set_new(req, "sort_order", json_string("DESCEND"));
	}
	int rc = etcd_post(e, "/v3/kv/range", req, &ans, err, errlen);
	json_decref(req);
	if (rc)
		return rc;
	json_t *got = json_array();
	etcd_kvs_each(ans, log_record, got);
	json_decref(ans);
	if (rev <= 0 && newest > 0) {
		*recs = json_array();
		for (size_t i = json_array_size(got); i-- > 0;)
			json_array_append(*recs, json_array_get(got, i));
		json_decref(got);
	} else {
		*recs = got;
	}
	return 0;
}

int cluster_log_trim(etcd_t *e, const char *prefix, unsigned keep, unsigned *gone,
                     char *err, size_t errlen)
{
	*gone = 0;
	json_t *req = log_range(prefix, 1, 0), *ans = NULL;
	json_object_set_new(req, "count_only", json_true());
	json_object_del(req, "sort_order");
	json_object_del(req, "sort_target");
	int rc = etcd_post(e, "/v3/kv/range", req, &ans, err, errlen);
	json_decref(req);
	int64_t n = rc ? 0 : etcd_int(ans, "count");
	json_decref(ans);
	if (rc || n <= (int64_t)keep)
		return rc;
	long over = (long)(n - (int64_t)keep);
	req = log_range(prefix, 1, over > TRIM_MAX ? TRIM_MAX : over);
	ans = NULL;
	rc = etcd_post(e, "/v3/kv/range", req, &ans, err, errlen);
	json_decref(req);
	json_t *kvs = json_object_get(ans, "kvs");
	for (size_t i = 0; !rc && i < json_array_size(kvs); i += TRIM_TXN_OPS) {
		json_t *ops = json_array();
		for (size_t j = i; j < i + TRIM_TXN_OPS && j < json_array_size(kvs); j++)
			json_array_append_new(ops, json_pack("{s:{s:O}}", "request_delete_range",
			    "key", json_object_get(json_array_get(kvs, j), "key")));
		size_t nops = json_array_size(ops);
		json_t *txn = json_pack("{s:o}", "success", ops), *tans = NULL;
		rc = etcd_post(e, "/v3/kv/txn", txn, &tans, err, errlen);
		json_decref(txn);
		json_decref(tans);
		if (!rc)
			*gone += (unsigned)nops;
	}
	json_decref(ans);
	return rc;
}
