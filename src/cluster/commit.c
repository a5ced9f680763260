/* SPDX-License-Identifier: MIT */
/* An operator's change written to etcd in one compared transaction, and
 * into the local store (commit.h): gslbctl's writes and gslbd's API's. */
#include "cluster/commit.h"
#include "cluster/clog.h"
#include "cluster/keyfiles.h"
#include "cluster/sync.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *cluster_etcd_why(etcd_t *e, int rc, const char *err,
                             const char *refused, char *out, size_t n)
{
	if (rc != GSLB_EIO) {
		snprintf(out, n, "%s%s", refused, err);
		return out;
	}
	etcd_health_t h;
	etcd_health(e, &h);
	etcd_health_text(&h, err, out, n);
	return out;
}

/* The changes of @t that live in etcd, as [{kind, key, before, after}]. */
static json_t *shared_changes(wdb_txn_t *t)
{
	json_t *out = json_array();
	size_t i;
	json_t *c;
	json_array_foreach(wdb_changes(t), i, c) {
		wdb_kind_t kind;
		int shared = cluster_kind_by_name(
			json_string_value(json_object_get(c, "kind")), &kind);
		if (shared)
			json_array_append_new(out, json_pack("{s:O, s:O, s:O, s:O}",
			    "kind", json_object_get(c, "kind"), "key", json_object_get(c, "key"),
			    "before", json_object_get(c, "before"),
			    "after", json_object_get(c, "after")));
	}
	return out;
}

int cluster_commit_shared(wdb_txn_t *t)
{
	size_t i;
	json_t *c;
	wdb_kind_t kind;
	json_array_foreach(wdb_changes(t), i, c)
		if (cluster_kind_by_name(json_string_value(json_object_get(c, "kind")), &kind))
			return 1;
	return 0;
}

static json_t *b64_str(const char *s, size_t n)
{
	char *b = etcd_b64(s, n);
	json_t *j = json_string(b);
	free(b);
	return j;
}

/* Read at @at, so that a key changed again since still counts.  Keys
 * deleted in between are not seen (only the elected instance deletes
 * without the marker, rarely: a health record or a steering state of
 * something gone). */
int cluster_changed_in(etcd_t *e, const char *prefix, int64_t from,
                       int64_t to, int64_t at)
{
	if (to < from)
		return 0;
	char ck[512], err[1024];
	snprintf(ck, sizeof(ck), "%sconfig/", prefix);
	json_t *req = etcd_range_req(ck, 1), *ans = NULL;
	json_object_set_new(req, "count_only", json_true());
	json_object_set_new(req, "revision", json_integer(at));
	json_object_set_new(req, "min_mod_revision", json_integer(from));
	json_object_set_new(req, "max_mod_revision", json_integer(to));
	int rc = etcd_post(e, "/v3/kv/range", req, &ans, err, sizeof(err));
	json_decref(req);
	int64_t n = rc ? 1 : etcd_int(ans, "count");
	json_decref(ans);
	return n > 0;
}

/* The writes of @changes into @ops; with @base, the compares that each
 * key is unchanged since into @cmp. */
static void change_ops(const char *prefix, json_t *changes, int64_t base,
                       json_t *cmp, json_t *ops)
{
	char br[32];
	snprintf(br, sizeof(br), "%lld", (long long)base + 1);
	size_t i;
	json_t *c;
	json_array_foreach(changes, i, c) {
		wdb_kind_t kind = WDB_SERVICE;
		char ek[1024];
		if (!cluster_kind_by_name(json_string_value(json_object_get(c, "kind")), &kind))
			continue;
		cluster_key(ek, sizeof(ek), prefix, kind,
		            json_string_value(json_object_get(c, "key")));
		if (base > 0)
			json_array_append_new(cmp, json_pack("{s:s, s:o, s:s, s:s}",
			    "target", "MOD", "key", b64_str(ek, strlen(ek)),
			    "result", "LESS", "mod_revision", br));
		json_t *after = json_object_get(c, "after");
		if (json_is_null(after)) {
			json_array_append_new(ops, json_pack("{s:{s:o}}", "request_delete_range",
			    "key", b64_str(ek, strlen(ek))));
		} else {
			char *v = json_dumps(after, JSON_COMPACT | JSON_SORT_KEYS);
			json_array_append_new(ops, json_pack("{s:{s:o, s:o}}", "request_put",
			    "key", b64_str(ek, strlen(ek)), "value", b64_str(v, strlen(v))));
			free(v);
		}
	}
}

/* The change marker's put under key @mk: who changed @what, when, from
 * which instance, how many records, and the nonce. */
static json_t *marker_op(const char *mk, const char *instance, const char *actor,
                         const char *what, size_t count, const char *nonce)
{
	char now[40];
	time_t tt = time(NULL);
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_t *rec = json_pack("{s:s, s:s, s:s, s:s, s:I, s:s}", "actor", actor,
	                        "what", what, "time", now, "instance", instance,
	                        "count", (json_int_t)count, "nonce", nonce);
	char *rv = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(rec);
	json_t *op = json_pack("{s:{s:o, s:o}}", "request_put",
	    "key", b64_str(mk, strlen(mk)), "value", b64_str(rv, strlen(rv)));
	free(rv);
	return op;
}

static int find_nonce(const etcd_kv_t *kv, void *arg)
{
	json_t *v = json_loadb(kv->value, kv->value_len, 0, NULL);
	const char **want = arg;
	const char *got = json_string_value(json_object_get(v, "nonce"));
	if (got && strcmp(got, want[0]) == 0)
		*(int64_t *)want[1] = kv->mod_rev;
	json_decref(v);
	return 0;
}

/* After a retried write etcd refused as changed since it was read: the
 * revision at which the change marker carries @nonce, that is, at which
 * an earlier try whose answer was lost did write this change; 0 when
 * another change came first. */
static int64_t written_by_us(etcd_t *e, const char *mk, const char *nonce)
{
	char err[1024];
	int64_t at = 0;
	const char *arg[2] = { nonce, (const char *)&at };
	if (etcd_get(e, mk, 0, NULL, find_nonce, (void *)arg, err, sizeof(err)))
		return 0;
	return at;
}

/* The change written at @rev into the local store too, unless it would
 * skip decisions the store does not hold yet: the elected instance's
 * decisions do not move the change marker, so the store may lack some
 * while being at the last change, and applying @rev would mark it as
 * past them (the watch would skip them).  The watch then applies them
 * and the change in order (or the next full read does). */
static void apply_local(const cluster_writer_t *w, int64_t rev, json_t *changes,
                        const char *actor, const char *what,
                        cluster_commit_out_t *out)
{
	int64_t local = cluster_local_rev(w->db);
	if (cluster_changed_in(w->etcd, w->prefix, local + 1, rev - 1, rev)) {
		out->local = 0;
		return;
	}
	int rc = cluster_apply_change(w->db, rev, changes, actor, what, NULL,
	                              out->local_err, sizeof(out->local_err));
	out->local = rc < 0 ? -1 : 1;
}

/* The compare of the write: the change marker @mk moves with every
 * operator's change; it is still at the revision read (gslbctl's read
 * before the command), or at one the store reflects, @base (gslbd's
 * store, kept current by the watch).  The elected instance's decisions
 * (health, steering, a release's steps) write their objects without
 * it.  So each object written must also be unchanged since the revision
 * the store reflected (change_ops()): a release pause read before a
 * step the elected instance then took must not write the older step
 * back (S4-10: no step twice). */
static json_t *marker_compare(const cluster_writer_t *w, const char *mk,
                              int64_t base)
{
	char mr[32];
	int store = w->marker == CLUSTER_MARKER_STORE;
	snprintf(mr, sizeof(mr), "%lld", (long long)(store ? base + 1 : w->marker));
	return json_pack("[{s:s, s:o, s:s, s:s}]", "target", "MOD",
	    "key", b64_str(mk, strlen(mk)), "result", store ? "LESS" : "EQUAL",
	    "mod_revision", mr);
}

/* The puts of the key files the signing key records of @changes name,
 * into @ops: every instance gets a key's file with its record.  Returns
 * 0, or -1 with @err. */
static int keyfile_part(const cluster_writer_t *w, json_t *changes, json_t *ops,
                        char *err, size_t errlen)
{
	size_t i, ndnssec = 0;
	json_t *c;
	json_array_foreach(changes, i, c)
		ndnssec += !strcmp(json_string_value(json_object_get(c, "kind")), "dnssec");
	if (!ndnssec)
		return 0;
	return cluster_keyfile_ops(w->prefix, w->keystore, changes, ops, err, errlen)
	       ? -1 : 0;
}

cluster_commit_class_t cluster_commit(const cluster_writer_t *w, wdb_txn_t *t,
                                      const char *what, const char *actor,
                                      cluster_commit_out_t *out, char *err,
                                      size_t errlen)
{
	char msg[1024];
	int rc;
	memset(out, 0, sizeof(*out));
	if (wdb_check(t, msg, sizeof(msg))) {
		snprintf(err, errlen, "%s; nothing was changed", msg);
		return CLUSTER_COMMIT_INVALID;
	}
	json_t *changes = shared_changes(t);
	if (json_array_size(changes) == 0) {
		/* Only local data (pushed metrics): the local store, as in
		 * standalone mode. */
		json_decref(changes);
		return CLUSTER_COMMIT_LOCAL;
	}
	/* The etcd revision the store reflected when the change was
	 * validated. */
	int64_t base = (int64_t)wdb_meta_u64(t, "clusterrev");
	/* The change's audit record goes with it: the cluster's log, the
	 * same on every instance (clog.h). */
	json_t *rec = wdb_audit_record(t, what);
	json_object_set_new(rec, "instance", json_string(w->instance));
	wdb_abort(t);
	int64_t now, marker;
	if (w->read_first && (rc = cluster_marker(w->etcd, w->prefix, &now, &marker,
	                                          msg, sizeof(msg)))) {
		char why[1400];
		snprintf(err, errlen, "cluster: %s; nothing was written",
		         cluster_etcd_why(w->etcd, rc, msg, "", why, sizeof(why)));
		json_decref(changes);
		json_decref(rec);
		return rc == GSLB_EIO ? CLUSTER_COMMIT_UNAVAILABLE : CLUSTER_COMMIT_REFUSED;
	}
	if (w->delay_ms)
		usleep((useconds_t)w->delay_ms * 1000);
	char mk[512];
	snprintf(mk, sizeof(mk), "%schange", w->prefix);
	json_t *ops = json_array();
	json_t *cmp = marker_compare(w, mk, base);
	change_ops(w->prefix, changes, base, cmp, ops);
	if (keyfile_part(w, changes, ops, msg, sizeof(msg))) {
		snprintf(err, errlen, "dnssec: %s; nothing was written", msg);
		json_decref(changes);
		json_decref(rec);
		json_decref(cmp);
		json_decref(ops);
		return CLUSTER_COMMIT_REFUSED;
	}
	/* The nonce tells, after a retry, our own earlier write (whose
	 * answer was lost) from someone else's. */
	uint64_t rnd = 0;
	if (getentropy(&rnd, sizeof(rnd)))
		rnd = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32;
	char nonce[40];
	snprintf(nonce, sizeof(nonce), "%016llx", (unsigned long long)rnd);
	json_array_append_new(ops, marker_op(mk, w->instance, actor, what,
	                                     json_array_size(changes), nonce));
	json_array_append_new(ops, cluster_log_op(w->prefix, rec));
	json_t *req = json_pack("{s:o, s:o}", "compare", cmp, "success", ops);
	json_t *ans = NULL;
	unsigned before = etcd_retries(w->etcd);
	rc = etcd_post(w->etcd, "/v3/kv/txn", req, &ans, msg, sizeof(msg));
	out->retries = etcd_retries(w->etcd) - before;
	json_decref(req);
	if (rc) {
		char why[1400];
		json_decref(changes);
		snprintf(err, errlen, "cluster: %s; nothing was written%s",
		         cluster_etcd_why(w->etcd, rc, msg, "etcd refused the change: ",
		                          why, sizeof(why)),
		         out->retries ? " (tried again for a while)" : "");
		return rc == GSLB_EIO ? CLUSTER_COMMIT_UNAVAILABLE : CLUSTER_COMMIT_REFUSED;
	}
	int ok = json_is_true(json_object_get(ans, "succeeded"));
	int64_t rev = etcd_int(json_object_get(ans, "header"), "revision");
	json_decref(ans);
	if (!ok && out->retries && (rev = written_by_us(w->etcd, mk, nonce)) > 0)
		ok = 1;
	if (!ok) {
		json_decref(changes);
		snprintf(err, errlen, "cluster: the table was changed by someone else "
		         "since it was read; nothing was written; retry");
		return CLUSTER_COMMIT_RACE;
	}
	out->rev = rev;
	apply_local(w, rev, changes, actor, what, out);
	json_decref(changes);
	return CLUSTER_COMMIT_OK;
}
