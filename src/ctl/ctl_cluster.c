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
#include "cluster/cluster_conf.h"
#include "cluster/commit.h"
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

/* The reason a request to etcd failed with @rc, for a message
 * (cluster/commit.h). */
static const char *etcd_why(int rc, const char *err, const char *refused,
                            char *out, size_t n)
{
	return cluster_etcd_why(ce, rc, err, refused, out, n);
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

/* Whether a table key changed in etcd from revision @from to @to, as
 * etcd holds it at revision @at (cluster/commit.h). */
static int changed_in(int64_t from, int64_t to, int64_t at)
{
	return cluster_changed_in(ce, ccf.prefix, from, to, at);
}

/* The keystore the signing key records of @t name their files in (a
 * new string), NULL when @t changes no such record.  Dies when the
 * configuration's dnssec section does not load. */
static char *keystore_for(wdb_txn_t *t)
{
	char err[1024];
	dnssec_conf_t dc = { 0 };
	size_t i, n = 0;
	json_t *c;
	json_array_foreach(wdb_changes(t), i, c)
		n += !strcmp(json_string_value(json_object_get(c, "kind")), "dnssec");
	if (!n)
		return NULL;
	if (ctl_conf && dnssec_conf_load(ctl_conf, &dc, err, sizeof(err))) {
		wdb_abort(t);
		ctl_die("%s; nothing was written", err);
	}
	char *ks = dc.keystore ? xstrdup(dc.keystore) : NULL;
	dnssec_conf_clear(&dc);
	return ks;
}

int ctl_cluster_commit(wdb_txn_t *t, const char *what, const char *actor)
{
	char err[1400];
	if (ctl_override_commit(t, what, actor))
		return 1;
	if (!ce) {
		ctl_override_guard(t);
		return 0;
	}
	/* The tests widen the window between reading and writing to make
	 * two writers race for certain. */
	const char *delay = getenv("GSLBCTL_TEST_CLUSTER_DELAY_MS");
	char *keystore = keystore_for(t);
	cluster_writer_t w = {
		.etcd = ce, .db = ctl_db, .prefix = ccf.prefix, .instance = ccf.name,
		.keystore = keystore, .marker = marker_read,
		.delay_ms = delay ? (unsigned)atoi(delay) : 0,
	};
	cluster_commit_out_t out;
	cluster_commit_class_t rc = cluster_commit(&w, t, what, actor, &out, err,
	                                           sizeof(err));
	free(keystore);
	if (rc == CLUSTER_COMMIT_LOCAL)
		return 0;
	if (rc != CLUSTER_COMMIT_OK)
		ctl_die("%s", err);
	unsigned retries = etcd_retries(ce);
	if (retries)
		fprintf(stderr, "gslbctl: cluster: etcd was electing a leader or lost "
		        "an answer; the change went through after %u retr%s\n", retries,
		        retries == 1 ? "y" : "ies");
	marker_read = out.rev;
	if (out.local < 0)
		fprintf(stderr, "gslbctl: written to the cluster at revision %lld, but "
		        "not to the local store (%s): gslbd applies it from etcd\n",
		        (long long)out.rev, out.local_err);
	/* Named by the cluster's revision, the same on every instance (the
	 * local audit id differs from one store to the next), in --json
	 * too: "change" is the revision, as `log` and `rollback` name it. */
	written_rev = out.rev;
	if (quiet)
		return 1;
	if (ctl_json)
		ctl_print_commit(json_pack("{s:I, s:I}", "change", (json_int_t)out.rev,
		                           "revision", (json_int_t)out.rev));
	else
		printf("cluster revision %lld: %s\n", (long long)out.rev, what);
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
