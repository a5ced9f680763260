/* SPDX-License-Identifier: MIT */
/* Pushed measurements through etcd (feed.h): gslbctl's put, and each
 * gslbd's application of them, exactly once per store. */
#include "cluster/feed.h"
#include "cluster/sync.h"
#include "common/log.h"
#include "common/util.h"
#include "health/push.h"
#include "steer/steer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cluster_feed_key(const char *prefix, const char *ekey)
{
	size_t pl = strlen(prefix);
	return strncmp(ekey, prefix, pl) == 0 && strncmp(ekey + pl, "metrics/", 8) == 0;
}

static json_t *b64_json(const char *s)
{
	char *b = etcd_b64(s, strlen(s));
	json_t *j = json_string(b);
	free(b);
	return j;
}

int cluster_feed_put(etcd_t *e, const char *prefix, const char *instance,
                     const char *actor, json_t *lines, uint32_t at, double keep,
                     double skew, int64_t *rev, char *err, size_t errlen)
{
	/* The lease ends the push once no window reads its samples. */
	unsigned ttl = keep >= 1 ? (unsigned)ceil(keep) : 1;
	int64_t lease = 0;
	int rc = etcd_lease_grant(e, ttl, &lease, err, errlen);
	if (rc)
		return rc;
	char ls[32], base[600];
	snprintf(ls, sizeof(ls), "%lld", (long long)lease);
	/* Unique without coordination: the time, the instance, the
	 * process and the lease id (unique in etcd). */
	snprintf(base, sizeof(base), "%smetrics/%u-%s-%d-%llx", prefix, at, instance,
	         (int)getpid(), (unsigned long long)lease);
	json_t *ops = json_array();
	size_t n = json_array_size(lines);
	for (size_t from = 0, chunk = 0; from < n; chunk++) {
		size_t to = from + FEED_CHUNK_LINES < n ? from + FEED_CHUNK_LINES : n;
		json_t *part = json_array();
		for (size_t i = from; i < to; i++)
			json_array_append(part, json_array_get(lines, i));
		json_t *v = json_pack("{s:I, s:f, s:f, s:s, s:s, s:o}", "at", (json_int_t)at,
		                      "keep", keep, "skew", skew, "by", actor, "instance", instance,
		                      "lines", part);
		char *text = json_dumps(v, JSON_COMPACT);
		json_decref(v);
		char key[640];
		snprintf(key, sizeof(key), "%s/%04zu", base, chunk);
		json_array_append_new(ops, json_pack("{s:{s:o, s:o, s:s}}", "request_put",
		                      "key", b64_json(key), "value", b64_json(text),
		                      "lease", ls));
		free(text);
		from = to;
	}
	json_t *req = json_pack("{s:o}", "success", ops), *ans = NULL;
	rc = etcd_post(e, "/v3/kv/txn", req, &ans, err, errlen);
	json_decref(req);
	if (!rc)
		*rev = etcd_int(json_object_get(ans, "header"), "revision");
	json_decref(ans);
	return rc;
}

/* Applies the lines of push @v (one chunk) into @t; returns how many
 * passed, or a store error with @err. */
static int apply_chunk(wdb_txn_t *t, int64_t rev, json_t *v, char *err,
                       size_t errlen)
{
	uint32_t at = (uint32_t)json_integer_value(json_object_get(v, "at"));
	double keep = json_number_value(json_object_get(v, "keep"));
	/* The gslbctl that validated the push set the limits: every store
	 * checks and keeps it the same way, against the push's own time. */
	json_t *sk = json_object_get(v, "skew");
	steer_conf_t dflt;
	steer_conf_default(&dflt);
	double skew = json_is_number(sk) ? json_number_value(sk) : dflt.skew;
	size_t i;
	json_t *line;
	int n = 0;
	json_array_foreach(json_object_get(v, "lines"), i, line) {
		char *argv[PUSH_MAX_WORDS + 1], msg[400], why[600];
		int argc = push_words(line, argv, PUSH_MAX_WORDS + 1);
		int rc = push_apply(t, argc, argv, at, keep, skew, msg, sizeof(msg), why,
		                    sizeof(why));
		if (rc == GSLB_EINVAL) {
			/* Validated by gslbctl against the table of then: a node
			 * deleted since is no reason to lose the rest. */
			log_warning("cluster: pushed metrics of revision %lld from %s: %s; "
			            "line skipped", (long long)rev,
			            json_string_value(json_object_get(v, "instance")) ?: "?", why);
			continue;
		}
		if (rc) {
			snprintf(err, errlen, "pushed metrics of revision %lld: %s",
			         (long long)rev, why);
			return rc;
		}
		n++;
	}
	return n;
}

int cluster_feed_apply(weightdb_t *db, int64_t rev, json_t *values, char *err,
                       size_t errlen)
{
	const char *by = json_string_value(json_object_get(json_array_get(values, 0), "by"));
	wdb_txn_t *t;
	int open = cluster_begin_rev(db, by ? by : "etcd", "feedrev", rev, &t, err, errlen);
	if (open <= 0)
		return open;
	size_t i;
	json_t *v;
	int n = 0, rc = 0;
	json_array_foreach(values, i, v) {
		if ((rc = apply_chunk(t, rev, v, err, errlen)) < 0)
			break;
		n += rc;
		rc = 0;
	}
	if (!rc && (rc = wdb_set_meta_u64(t, "feedrev", (uint64_t)rev)))
		snprintf(err, errlen, "%s", wdb_strerror(rc));
	if (rc) {
		wdb_abort(t);
		return rc;
	}
	const char *inst = json_string_value(json_object_get(json_array_get(values, 0),
	                                                     "instance"));
	char what[200];
	snprintf(what, sizeof(what), "metrics: %d pushed through %s", n, inst ? inst : "?");
	int64_t id = wdb_commit(t, what, err, errlen);
	return id < 0 ? (int)id : n;
}

/* qsort() of [rev, key, value] by revision, then key. */
static int by_rev(const void *a, const void *b)
{
	json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	json_int_t rx = json_integer_value(json_array_get(x, 0));
	json_int_t ry = json_integer_value(json_array_get(y, 0));
	if (rx != ry)
		return rx < ry ? -1 : 1;
	return strcmp(json_string_value(json_array_get(x, 1)),
	              json_string_value(json_array_get(y, 1)));
}

int cluster_feed_load(weightdb_t *db, etcd_t *e, const char *prefix, int64_t rev,
                      char *err, size_t errlen)
{
	char key[512];
	snprintf(key, sizeof(key), "%smetrics/", prefix);
	json_t *ans = NULL;
	int rc = etcd_range_at(e, key, rev, &ans, err, errlen);
	if (rc)
		return rc;
	json_t *kvs = json_object_get(ans, "kvs");
	size_t n = json_array_size(kvs), m = 0;
	json_t **all = xcalloc(n ? n : 1, sizeof(*all));
	for (size_t i = 0; i < n; i++) {
		etcd_kv_t kv;
		if (etcd_kv_parse(json_array_get(kvs, i), &kv))
			continue;
		json_t *v = json_loadb(kv.value, kv.value_len, 0, NULL);
		if (json_is_object(v))
			all[m++] = json_pack("[I, s, o]", (json_int_t)kv.mod_rev, kv.key, v);
		else
			json_decref(v);
		etcd_kv_clear(&kv);
	}
	json_decref(ans);
	qsort(all, m, sizeof(*all), by_rev);
	json_t *group = json_array();
	for (size_t i = 0; i < m && !rc; i++) {
		json_array_append(group, json_array_get(all[i], 2));
		json_int_t r = json_integer_value(json_array_get(all[i], 0));
		if (i + 1 < m && json_integer_value(json_array_get(all[i + 1], 0)) == r)
			continue;
		if ((rc = cluster_feed_apply(db, r, group, err, errlen)) > 0)
			rc = 0;
		json_array_clear(group);
	}
	json_decref(group);
	for (size_t i = 0; i < m; i++)
		json_decref(all[i]);
	free(all);
	return rc;
}
