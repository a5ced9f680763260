/* SPDX-License-Identifier: MIT */
/* gslbctl in cluster mode: the table lives in etcd.  A write command is
 * validated on the local store exactly as in standalone mode (brought up
 * to date from etcd first), then its changes go to etcd in one
 * transaction that compares the revision of the last change with the one
 * read, together with the change's audit record; the local store gets
 * them at once (unless that would skip decisions it has not applied
 * yet), the other instances through their watch.  And `cluster
 * status` (members, leader) and `cluster health` (every vantage's view
 * of each node: the latency matrix, S4-6). */
#include "config.h"
#include "ctl/ctl.h"
#include "ctl/ctl_override.h"
#include "cluster/clog.h"
#include "cluster/cluster_conf.h"
#include "cluster/etcd.h"
#include "cluster/feed.h"
#include "cluster/keyfiles.h"
#include "cluster/sync.h"
#include "common/util.h"
#include "dnssec/dnssec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static cluster_conf_t ccf;
static etcd_t *ce;             /* NULL: standalone */
static int64_t marker_read;    /* revision of the last change read */
static int synced;
static int quiet;              /* ctl_cluster_quiet() */
static int64_t written_rev;    /* ctl_cluster_revision() */

void ctl_cluster_quiet(int q)
{
	quiet = q;
}

int64_t ctl_cluster_revision(void)
{
	return written_rev;
}

int ctl_cluster_on(void)
{
	return ce != NULL;
}

etcd_t *ctl_cluster_etcd(void)
{
	return ce;
}

const cluster_conf_t *ctl_cluster_conf(void)
{
	return &ccf;
}

/* How long a write is tried again while etcd elects a leader or lost
 * the answer: five request timeouts (10 s by default). */
static unsigned retry_budget_ms(void)
{
	return (unsigned)(ccf.timeout * 5 * 1000);
}

void ctl_cluster_init(void)
{
	char err[1024];
	if (!ctl_conf)
		return;
	if (cluster_conf_load(ctl_conf, &ccf, err, sizeof(err)))
		ctl_die("%s", err);
	if (!ccf.enabled)
		return;
	ce = etcd_new(&ccf);
	etcd_set_retry(ce, retry_budget_ms());
}

void ctl_cluster_done(void)
{
	etcd_free(ce);
	ce = NULL;
	cluster_conf_free(&ccf);
}

/* The reason a request to etcd failed with @rc, for a message: when no
 * member answered it, what the members say ("no quorum: 1 of 3 members
 * answer (e1)"); else @refused and etcd's own message. */
static const char *etcd_why(int rc, const char *err, const char *refused,
                            char *out, size_t n)
{
	if (rc != GSLB_EIO) {
		snprintf(out, n, "%s%s", refused, err);
		return out;
	}
	etcd_health_t h;
	etcd_health(ce, &h);
	etcd_health_text(&h, err, out, n);
	return out;
}

/* Brings the local store up to the last change in etcd, so that the
 * command validates against the cluster's table. */
void ctl_cluster_sync(const char *actor)
{
	char err[1024];
	int64_t rev = 0;
	if (synced || ctl_override_sync() || !ce) {
		synced = 1;
		return;
	}
	int rc = cluster_marker(ce, ccf.prefix, &rev, &marker_read, err, sizeof(err));
	if (!rc && cluster_local_rev(ctl_db) < marker_read)
		rc = cluster_resync(ctl_db, ce, ccf.prefix, actor, &rev, &marker_read,
		                    err, sizeof(err));
	if (rc < 0) {
		char why[1400];
		ctl_die("cluster: %s; nothing was written", etcd_why(rc, err, "", why,
		        sizeof(why)));
	}
	synced = 1;
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

static json_t *b64_str(const char *s, size_t n)
{
	char *b = etcd_b64(s, n);
	json_t *j = json_string(b);
	free(b);
	return j;
}

/* Whether a table key changed in etcd from revision @from to @to, as
 * etcd holds it at revision @at.  Any doubt (etcd did not answer)
 * counts as a change. */
static int changed_in(int64_t from, int64_t to, int64_t at);

/* Whether a table key changed in etcd after revision @local (what the
 * store holds) and before @rev (this command's change): the elected
 * instance's decisions do not move the change marker, so the store may
 * lack some while being at the last change.  Applying @rev here would
 * then mark the store as past them, and gslbd's watch would skip them.
 * Read at @rev, so that a key changed again since still counts.  Keys
 * deleted in between are not seen (only the elected instance deletes
 * without the marker, rarely: a health record or a steering state of
 * something gone).  Any doubt (etcd did not answer) counts as a change. */
static int changed_in(int64_t from, int64_t to, int64_t at)
{
	if (to < from)
		return 0;
	char ck[512], err[1024];
	snprintf(ck, sizeof(ck), "%sconfig/", ccf.prefix);
	json_t *req = etcd_range_req(ck, 1), *ans = NULL;
	json_object_set_new(req, "count_only", json_true());
	json_object_set_new(req, "revision", json_integer(at));
	json_object_set_new(req, "min_mod_revision", json_integer(from));
	json_object_set_new(req, "max_mod_revision", json_integer(to));
	int rc = etcd_post(ce, "/v3/kv/range", req, &ans, err, sizeof(err));
	json_decref(req);
	int64_t n = rc ? 1 : etcd_int(ans, "count");
	json_decref(ans);
	return n > 0;
}

static int changed_between(int64_t local, int64_t rev)
{
	return changed_in(local + 1, rev - 1, rev);
}

/* The writes of @changes into @ops; with @base, the compares that each
 * key is unchanged since into @cmp. */
static void change_ops(json_t *changes, int64_t base, json_t *cmp, json_t *ops)
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
		cluster_key(ek, sizeof(ek), ccf.prefix, kind,
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

/* The change marker's put under key @mk: who changed @what, when, and
 * how many records. */
static json_t *marker_op(const char *mk, const char *actor, const char *what,
                         size_t count, const char *nonce)
{
	char now[40];
	time_t tt = time(NULL);
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(now, sizeof(now), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_t *rec = json_pack("{s:s, s:s, s:s, s:s, s:I, s:s}", "actor", actor,
	                        "what", what, "time", now, "instance", ccf.name,
	                        "count", (json_int_t)count, "nonce", nonce);
	char *rv = json_dumps(rec, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(rec);
	json_t *op = json_pack("{s:{s:o, s:o}}", "request_put",
	    "key", b64_str(mk, strlen(mk)), "value", b64_str(rv, strlen(rv)));
	free(rv);
	return op;
}

/* A change written to etcd at @rev: into the local store too, when that
 * skips nothing, and the change printed.  Takes @changes. */
static void apply_and_report(int64_t rev, json_t *changes, const char *actor,
                             const char *what)
{
	char err[1024];
	int rc;
	int64_t id = 0;
	/* The local store gets the change at once, unless it would skip
	 * decisions it does not hold yet: gslbd's watch then applies them
	 * and the change in order (or the next full read does). */
	if (changed_between(cluster_local_rev(ctl_db), rev))
		rc = 0;
	else
		rc = cluster_apply(ctl_db, rev, changes, actor, what, &id, err, sizeof(err));
	json_decref(changes);
	if (rc < 0)
		fprintf(stderr, "gslbctl: written to the cluster at revision %lld, but "
		        "not to the local store (%s): gslbd applies it from etcd\n",
		        (long long)rev, err);
	/* Named by the cluster's revision, the same on every instance (the
	 * local audit id differs from one store to the next), in --json
	 * too: "change" is the revision, as `log` and `rollback` name it. */
	(void)id;
	written_rev = rev;
	if (quiet)
		return;
	if (ctl_json)
		ctl_print_commit(json_pack("{s:I, s:I}", "change", (json_int_t)rev,
		                           "revision", (json_int_t)rev));
	else
		printf("cluster revision %lld: %s\n", (long long)rev, what);
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
static int64_t written_by_us(const char *mk, const char *nonce)
{
	char err[1024];
	int64_t at = 0;
	const char *arg[2] = { nonce, (const char *)&at };
	if (etcd_get(ce, mk, 0, NULL, find_nonce, (void *)arg, err, sizeof(err)))
		return 0;
	return at;
}

/* The puts of the key files the signing key records of @changes name
 * (cluster/keyfiles.h), from the configuration's keystore, into @ops:
 * every instance gets a key's file with its record.  Dies when one
 * cannot be read. */
static void keyfile_ops(json_t *changes, json_t *ops)
{
	char err[1024];
	dnssec_conf_t dc = { 0 };
	size_t i, n = 0;
	json_t *c;
	json_array_foreach(changes, i, c)
		n += !strcmp(json_string_value(json_object_get(c, "kind")), "dnssec");
	if (!n)
		return;
	if (ctl_conf && dnssec_conf_load(ctl_conf, &dc, err, sizeof(err)))
		ctl_die("%s; nothing was written", err);
	int rc = cluster_keyfile_ops(ccf.prefix, dc.keystore, changes, ops, err,
	                             sizeof(err));
	dnssec_conf_clear(&dc);
	if (rc) {
		json_decref(changes);
		ctl_die("dnssec: %s; nothing was written", err);
	}
}

int ctl_cluster_commit(wdb_txn_t *t, const char *what, const char *actor)
{
	char err[1024];
	if (ctl_override_commit(t, what, actor))
		return 1;
	if (!ce) {
		ctl_override_guard(t);
		return 0;
	}
	if (wdb_check(t, err, sizeof(err)))
		ctl_die("%s; nothing was changed", err);
	json_t *changes = shared_changes(t);
	if (json_array_size(changes) == 0) {
		/* Only local data (pushed metrics): the local store, as in
		 * standalone mode. */
		json_decref(changes);
		return 0;
	}
	/* The etcd revision the store reflected when the change was
	 * validated. */
	int64_t base = (int64_t)wdb_meta_u64(t, "clusterrev");
	/* The change's audit record goes with it: the cluster's log, the
	 * same on every instance (clog.h). */
	json_t *rec = wdb_audit_record(t, what);
	json_object_set_new(rec, "instance", json_string(ccf.name));
	wdb_abort(t);
	/* The tests widen the window between reading and writing to make
	 * two writers race for certain. */
	const char *delay = getenv("GSLBCTL_TEST_CLUSTER_DELAY_MS");
	if (delay)
		usleep((useconds_t)atoi(delay) * 1000);
	char mk[512];
	snprintf(mk, sizeof(mk), "%schange", ccf.prefix);
	json_t *ops = json_array();
	/* The change marker moves with every operator's change; the
	 * elected instance's decisions (health, steering, a release's
	 * steps) write their objects without it.  So each object written
	 * must also be unchanged since the revision the store reflected:
	 * a release pause read before a step the elected instance then
	 * took must not write the older step back (S4-10: no step twice). */
	char mr[32];
	snprintf(mr, sizeof(mr), "%lld", (long long)marker_read);
	json_t *cmp = json_pack("[{s:s, s:o, s:s, s:s}]", "target", "MOD",
	    "key", b64_str(mk, strlen(mk)), "result", "EQUAL", "mod_revision", mr);
	change_ops(changes, base, cmp, ops);
	keyfile_ops(changes, ops);
	/* The nonce tells, after a retry, our own earlier write (whose
	 * answer was lost) from someone else's. */
	uint64_t rnd = 0;
	if (getentropy(&rnd, sizeof(rnd)))
		rnd = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32;
	char nonce[40];
	snprintf(nonce, sizeof(nonce), "%016llx", (unsigned long long)rnd);
	json_array_append_new(ops, marker_op(mk, actor, what, json_array_size(changes),
	                                     nonce));
	json_array_append_new(ops, cluster_log_op(ccf.prefix, rec));
	json_t *req = json_pack("{s:o, s:o}", "compare", cmp, "success", ops);
	json_t *ans = NULL;
	unsigned before = etcd_retries(ce);
	int rc = etcd_post(ce, "/v3/kv/txn", req, &ans, err, sizeof(err));
	unsigned retries = etcd_retries(ce) - before;
	json_decref(req);
	if (rc) {
		char why[1400];
		json_decref(changes);
		ctl_die("cluster: %s; nothing was written%s",
		        etcd_why(rc, err, "etcd refused the change: ", why, sizeof(why)),
		        retries ? " (tried again for a while)" : "");
	}
	int ok = json_is_true(json_object_get(ans, "succeeded"));
	int64_t rev = etcd_int(json_object_get(ans, "header"), "revision");
	json_decref(ans);
	if (!ok && retries && (rev = written_by_us(mk, nonce)) > 0)
		ok = 1;
	if (!ok) {
		json_decref(changes);
		ctl_die("cluster: the table was changed by someone else since it was "
		        "read; nothing was written; retry");
	}
	if ((retries = etcd_retries(ce)))
		fprintf(stderr, "gslbctl: cluster: etcd was electing a leader or lost "
		        "an answer; the change went through after %u retr%s\n", retries,
		        retries == 1 ? "y" : "ies");
	marker_read = rev;
	apply_and_report(rev, changes, actor, what);
	return 1;
}

int ctl_cluster_push(json_t *lines, uint32_t at, double keep, double skew,
                     int64_t *rev)
{
	char err[1024], actor[160];
	if (!ce)
		return 0;
	snprintf(actor, sizeof(actor), "gslbctl:%s", ctl_user);
	int rc = cluster_feed_put(ce, ccf.prefix, ccf.name, actor, lines, at, keep, skew,
	                          rev, err, sizeof(err));
	if (rc) {
		char why[1400];
		ctl_die("cluster: %s; nothing was written", etcd_why(rc, err,
		        "etcd refused the measurements: ", why, sizeof(why)));
	}
	return 1;
}

/* cluster status ------------------------------------------------- */

static int collect_member(const etcd_kv_t *kv, void *arg)
{
	json_t *v = json_loadb(kv->value, kv->value_len, 0, NULL);
	const char *name = strrchr(kv->key, '/');
	if (v && name)
		json_object_set_new(arg, name + 1, v);
	else
		json_decref(v);
	return 0;
}

/* cluster health: the latency matrix ------------------------------ */

/* One view into {node: {instance: view}}. */
static int collect_view(const etcd_kv_t *kv, void *arg)
{
	size_t pl = strlen(ccf.prefix) + 7; /* "health/" */
	const char *k = kv->key + pl, *slash = strrchr(k, '/');
	json_t *v = json_loadb(kv->value, kv->value_len, 0, NULL);
	if (!slash || !v) {
		json_decref(v);
		return 0;
	}
	char node[512];
	snprintf(node, sizeof(node), "%.*s", (int)(slash - k), k);
	json_t *per = json_object_get(arg, node);
	if (!per)
		json_object_set_new(arg, node, per = json_object());
	json_object_set_new(per, slash + 1, v);
	return 0;
}

/* `cluster health [NODE]`: every live instance's view of each node (or
 * of NODE), with the decision the local store holds (S4-6). */
static int cluster_health(const char *node)
{
	char err[1024], key[600];
	if (node && (!*node || strchr(node, '/')))
		ctl_die("cluster health: bad node name '%s'", node);
	snprintf(key, sizeof(key), "%shealth/%s%s", ccf.prefix, node ? node : "",
	         node ? "/" : "");
	json_t *views = json_object();
	int rc = etcd_get(ce, key, 1, NULL, collect_view, views, err, sizeof(err));
	if (rc) {
		char why[1400];
		json_decref(views);
		ctl_die("cluster: %s", etcd_why(rc, err, "etcd refused the read: ", why,
		        sizeof(why)));
	}
	if (node && !json_object_size(views)) {
		json_decref(views);
		ctl_die("cluster health: no instance publishes a view of node '%s'", node);
	}
	wdb_txn_t *t = ctl_begin_read();
	json_t *out = json_object();
	const char *id;
	json_t *per;
	json_object_foreach(views, id, per) {
		json_t *h = wdb_get(t, WDB_HEALTH, id);
		json_t *d = json_pack("{s:O, s:s?, s:s?, s:O?}", "views", per,
		    "state", json_string_value(json_object_get(h, "state")),
		    "reason", json_string_value(json_object_get(h, "reason")),
		    "down_from", json_object_get(h, "down_from"));
		json_object_set_new(d, "partial",
		                    json_boolean(json_is_true(json_object_get(h, "partial"))));
		json_object_set_new(out, id, d);
		json_decref(h);
	}
	wdb_abort(t);
	json_decref(views);
	if (ctl_json) {
		ctl_print_json(out);
		json_decref(out);
		return 0;
	}
	printf("%-18s %-10s %-16s %-8s %6s %5s  %s\n", "NODE", "VANTAGE", "REGION/ISP",
	       "STATE", "WEIGHT", "SCORE", "PROBES (connect/total ms)");
	json_t *d;
	json_object_foreach(out, id, d) {
		const char *inst;
		json_t *v;
		json_object_foreach(json_object_get(d, "views"), inst, v) {
			char where[140], probes[600] = "";
			snprintf(where, sizeof(where), "%s/%s",
			         json_string_value(json_object_get(v, "region")) ?: "-",
			         json_string_value(json_object_get(v, "isp")) ?: "-");
			size_t i, l = 0;
			json_t *p;
			json_array_foreach(json_object_get(v, "probes"), i, p)
				if (l < sizeof(probes))
					l += (size_t)snprintf(probes + l, sizeof(probes) - l, "%s%s %s %lld/%lld",
					    i ? ", " : "", json_string_value(json_object_get(p, "probe")),
					    json_is_true(json_object_get(p, "ok")) ? "ok" : "FAIL",
					    json_integer_value(json_object_get(p, "connect_ms")),
					    json_integer_value(json_object_get(p, "total_ms")));
			double sc = json_number_value(json_object_get(v, "score"));
			char scs[16] = "-";
			if (sc >= 0)
				snprintf(scs, sizeof(scs), "%.0f", sc);
			printf("%-18s %-10s %-16s %-8s %5lld%% %5s  %s\n", id, inst, where,
			       json_string_value(json_object_get(v, "state")) ?: "?",
			       json_integer_value(json_object_get(v, "pct")), scs,
			       *probes ? probes : "-");
		}
		const char *st = json_string_value(json_object_get(d, "state"));
		printf("%-18s decision: %s%s%s\n", id,
		       json_is_true(json_object_get(d, "partial")) ? "partial" : st ? st : "none yet",
		       st ? " - " : "",
		       json_string_value(json_object_get(d, "reason")) ?: "");
	}
	json_decref(out);
	return 0;
}

int ctl_cmd_cluster(int argc, char **argv)
{
	char err[1024], key[512];
	if (argc >= 1 && strcmp(argv[0], "health") == 0 && argc <= 2) {
		if (!ce) {
			fprintf(stderr, "gslbctl: cluster health: %s has no cluster section "
			        "(standalone)\n", ctl_conf ? ctl_conf->path : "-d");
			return 1;
		}
		return cluster_health(argc == 2 ? argv[1] : NULL);
	}
	if (argc >= 1 && strcmp(argv[0], "overrides") == 0)
		return ctl_cluster_overrides(argc - 1, argv + 1);
	if (argc != 1 || strcmp(argv[0], "status") != 0) {
		fprintf(stderr, "gslbctl: usage: cluster status | cluster health [NODE] | "
		        "cluster overrides [list|push|drop]\n");
		return 2;
	}
	if (!ce) {
		fprintf(stderr, "gslbctl: cluster status: %s has no cluster section "
		        "(standalone)\n", ctl_conf ? ctl_conf->path : "-d");
		return 1;
	}
	/* The state as it is now: no waiting out an election. */
	etcd_set_retry(ce, 0);
	int64_t local = cluster_local_rev(ctl_db), rev = 0, marker = 0;
	json_t *out = json_pack("{s:s, s:s, s:I}", "name", ccf.name, "prefix", ccf.prefix,
	                        "local_revision", (json_int_t)local);
	int rc = cluster_marker(ce, ccf.prefix, &rev, &marker, err, sizeof(err));
	char why[1400] = "";
	if (rc) {
		etcd_health_t h = { 0 };
		if (rc == GSLB_EIO)
			etcd_health(ce, &h);
		etcd_health_text(&h, err, why, sizeof(why));
		const char *st = etcd_health_state(&h);
		json_object_set_new(out, "etcd", json_string(strcmp(st, "up") ? st : "error"));
		json_object_set_new(out, "error", json_string(why));
		json_object_set_new(out, "etcd_members", json_integer(h.members));
		json_object_set_new(out, "etcd_members_answering", json_integer(h.answering));
	} else {
		json_object_set_new(out, "etcd", json_string(etcd_endpoint(ce)));
		json_object_set_new(out, "revision", json_integer(rev));
		json_object_set_new(out, "last_change", json_integer(marker));
		json_object_set_new(out, "up_to_date", json_boolean(local >= marker));
		/* Up to date and no table key changed since: the store holds
		 * the table of etcd's current revision. */
		int64_t reflects = local >= marker && !changed_in(local + 1, rev, rev) ?
		                   rev : local;
		json_object_set_new(out, "table_revision", json_integer(reflects));
		/* "diverged" and "overrides": ctl_cluster_check() */
		json_t *members = json_object(), *leader = json_object();
		snprintf(key, sizeof(key), "%smembers/", ccf.prefix);
		etcd_get(ce, key, 1, NULL, collect_member, members, err, sizeof(err));
		json_object_set_new(out, "members", members);
		snprintf(key, sizeof(key), "%sleader", ccf.prefix);
		etcd_get(ce, key, 0, NULL, collect_member, leader, err, sizeof(err));
		json_t *l = json_object_get(leader, "leader");
		json_object_set(out, "leader", l ? json_object_get(l, "name") : json_null());
		json_decref(leader);
	}
	int diverged = ctl_cluster_check(out, rc == 0);
	ctl_dnssec_missing(out);
	if (ctl_json) {
		ctl_emit(json_incref(out));
	} else {
		printf("instance %s, prefix %s\n", ccf.name, ccf.prefix);
		if (rc && !strcmp(json_string_value(json_object_get(out, "etcd")),
		                  "unreachable")) {
			printf("etcd: unreachable (%s)\n", err);
			printf("local store at revision %lld\n", (long long)local);
		} else if (rc) {
			printf("etcd: %s\n", why);
			printf("local store at revision %lld\n", (long long)local);
		} else {
			printf("etcd: reachable at %s, revision %lld, last change at %lld\n",
			       etcd_endpoint(ce), (long long)rev, (long long)marker);
			printf("local store at revision %lld: %s\n",
			       (long long)json_integer_value(json_object_get(out, "table_revision")),
			       diverged ? "DIVERGED: its table differs from etcd's at that "
			       "revision (changed outside the cluster)" :
			       local >= marker ? "up to date" : "behind");
			const char *l = json_string_value(json_object_get(out, "leader"));
			printf("leader: %s\n", l ? l : "none");
			const char *name;
			json_t *m;
			json_object_foreach(json_object_get(out, "members"), name, m)
				printf("member %s: vantage %s/%s\n", name,
				       json_string_value(json_object_get(m, "region")) ?: "-",
				       json_string_value(json_object_get(m, "isp")) ?: "-");
		}
		ctl_cluster_check_print(out);
		ctl_dnssec_missing_print(out);
	}
	json_decref(out);
	return rc ? 1 : 0;
}
