/* SPDX-License-Identifier: MIT */
/* gslbctl log and rollback: the audit log of the weight store, one line
 * per change, and the undo of one change as a new audited change (S3-7,
 * S3-8).  Which change a bare rollback undoes is the pure rule of
 * wdb_rollback_pick() (store/change.h). */
#include "ctl/ctl.h"
#include "ctl/ctl_steer.h"
#include "cluster/clog.h"
#include "ctl/ctl_override.h"
#include "health/cutover.h"
#include "store/change.h"
#include "store/rollback.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
	int has_since_time;
	time_t since_time;
	int automatic;            /* --auto: only the daemon's own changes */
	json_t *out;
} log_filter_t;

static int log_collect(int64_t id, json_t *rec, void *arg)
{
	log_filter_t *lf = arg;
	(void)id;
	time_t tm;
	if (lf->automatic && !wdb_audit_automatic(rec))
		return 0;
	const char *ts = json_string_value(json_object_get(rec, "time"));
	if (lf->has_since_time && ts && cutover_parse_time(ts, &tm) == 0 &&
	    tm < lf->since_time)
		return 0;
	json_array_append(lf->out, rec);
	return 0;
}

static int collect_rec(int64_t id, json_t *rec, void *arr)
{
	(void)id;
	json_array_append(arr, rec);
	return 0;
}

/* Whether the records of log_records() are the cluster's (named by
 * revision) rather than this store's own. */
static int from_cluster;

/* The change log after id @since, oldest first: in cluster mode the
 * cluster's, the same on every instance (cluster/clog.h), each record's
 * id its revision; this store's own when standalone, or when etcd
 * cannot be read (said on stderr). */
static json_t *log_records(const char *cmd, int64_t since)
{
	char err[1024];
	json_t *recs = NULL;
	if (ctl_cluster_on()) {
		int rc = cluster_log_read(ctl_cluster_etcd(), ctl_cluster_conf()->prefix, &recs,
		                          err, sizeof(err));
		if (!rc) {
			from_cluster = 1;
			for (size_t i = json_array_size(recs); i-- > 0;)
				if (json_integer_value(json_object_get(json_array_get(recs, i), "id")) <= since)
					json_array_remove(recs, i);
			return recs;
		}
		fprintf(stderr, "gslbctl: %s: cannot read the cluster's change log (%s): "
		        "this instance's own log follows, numbered by its own ids, not "
		        "by cluster revision\n", cmd, err);
	}
	recs = json_array();
	int rc = wdb_audit_each(ctl_db, since, collect_rec, recs);
	if (rc < 0)
		ctl_die("%s: cannot read the audit log: %s", cmd, wdb_strerror(rc));
	return recs;
}

/* How a change is named: by its cluster revision, or its local id. */
static const char *change_noun(void)
{
	return from_cluster ? "cluster revision" : "change";
}

/* Whether @v is a change id: digits only (a time has '-' and ':'). */
static int is_id(const char *v)
{
	return *v && strspn(v, "0123456789") == strlen(v);
}

/* The inputs of one automatic change @c, compact: for a row the steering
 * engine moved, each node's operator weight, measurements, price, budget
 * state, ceiling and new share; for a health decision, the node's state
 * and why; else what it changed. */
static json_t *auto_inputs(json_t *c)
{
	const char *kind = json_string_value(json_object_get(c, "kind")) ?: "";
	const char *key = json_string_value(json_object_get(c, "key")) ?: "";
	json_t *after = json_object_get(c, "after");
	json_t *d = json_object_get(json_object_get(after, "steer"), "decision");
	if (strcmp(kind, "weight") == 0 && d) {
		static const char *const keep[] = { "base", "s", "l", "c", "ob", "cap", NULL };
		json_t *nodes = json_object(), *e;
		size_t i;
		json_array_foreach(json_object_get(d, "in"), i, e) {
			json_t *n = json_object();
			for (const char *const *k = keep; *k; k++)
				if (json_object_get(e, *k))
					json_object_set(n, *k, json_object_get(e, *k));
			json_object_set(n, "share", json_object_get(json_object_get(d, "out"),
				json_string_value(json_object_get(e, "id"))));
			json_object_set_new(nodes, json_string_value(json_object_get(e, "id")), n);
		}
		return json_pack("{s:s, s:o}", "row", key, "nodes", nodes);
	}
	if (strcmp(kind, "weight") == 0)
		return json_pack("{s:s, s:s}", "row", key, "result", "operator's weights");
	if (strcmp(kind, "health") == 0 && json_is_object(after)) {
		static const char *const keep[] = { "state", "reason", "score",
			"effective_weight_pct", "promoted", "promoted_for", "cutover_phase",
			"cutover_window", "cutover_pct", NULL };
		json_t *n = json_pack("{s:s}", "node", key);
		for (const char *const *k = keep; *k; k++)
			if (json_object_get(after, *k))
				json_object_set(n, *k, json_object_get(after, *k));
		return n;
	}
	return json_pack("{s:s, s:s}", "kind", kind, "key", key);
}

int ctl_cmd_log(int argc, char **argv)
{
	int64_t since_id = 0;
	long limit = 0;
	log_filter_t lf = { 0, 0, 0, json_array() };
	for (int i = 0; i < argc; i += 2) {
		const char *o = argv[i];
		if (strcmp(o, "--auto") == 0) {
			lf.automatic = 1;
			i--;
			continue;
		}
		if (strcmp(o, "--since") != 0 && strcmp(o, "--limit") != 0)
			ctl_usage_die("log: %s '%s' (usage: log [--auto] [--since TIME|ID] [--limit N])",
			    o[0] == '-' ? "unknown option" : "unexpected argument", o);
		if (i + 1 >= argc)
			ctl_usage_die("log: %s needs a value", o);
		const char *v = argv[i + 1];
		if (strcmp(o, "--limit") == 0)
			limit = ctl_parse_num("log: --limit", v, 1, INT32_MAX);
		else if (is_id(v))
			since_id = ctl_parse_num("log: --since", v, 1, INT32_MAX) - 1;
		else if (cutover_parse_time(v, &lf.since_time) == 0)
			lf.has_since_time = 1;
		else
			ctl_die("log: --since %s: give a change id or an RFC 3339 time "
			    "(2026-12-01T02:00:00Z, 2026-12-01T10:00+08:00)", v);
	}
	json_t *all = lf.out, *recs = log_records("log", since_id);
	size_t i;
	json_t *r;
	json_array_foreach(recs, i, r)
		log_collect(0, r, &lf);
	json_decref(recs);
	/* --limit N: the newest N, still oldest first. */
	while (limit && json_array_size(all) > (size_t)limit)
		json_array_remove(all, 0);
	char line[1000];
	json_array_foreach(all, i, r) {
		wdb_change_summary(r, line, sizeof(line));
		if (ctl_json) {
			json_object_set_new(r, "summary", json_string(line));
			ctl_set_time(r, "time", ctl_parse_utc(json_string_value(
				json_object_get(r, "time"))));
			if (lf.automatic) {
				/* The inputs instead of the whole objects. */
				json_t *in = json_array(), *c;
				size_t k;
				json_array_foreach(json_object_get(r, "changes"), k, c)
					json_array_append_new(in, auto_inputs(c));
				json_object_set_new(r, "inputs", in);
				json_object_del(r, "changes");
			}
		} else {
			printf("%5lld  %s  %-16s %s\n",
			       json_integer_value(json_object_get(r, "id")),
			       json_string_value(json_object_get(r, "time")),
			       json_string_value(json_object_get(r, "actor")), line);
		}
	}
	if (ctl_json)
		ctl_emit(json_pack("{s:O}", "records", all));
	json_decref(all);
	return 0;
}

/* The undo of audit record @rec (change @id): dies when it cannot be
 * undone (store/rollback.h). */
static json_t *undo_of(wdb_txn_t *t, json_t *rec, int64_t id)
{
	json_t *undo;
	char err[600];
	if (wdb_rollback_undo(t, rec, id, change_noun(), &undo, err, sizeof(err)))
		ctl_die("rollback: %s", err);
	return undo;
}

/* Prints what @undo writes, one object a line. */
static void print_undo(FILE *f, json_t *undo)
{
	size_t i;
	json_t *c;
	char line[1000];
	json_array_foreach(undo, i, c) {
		json_t *one = json_pack("{s:s, s:[O]}", "what", "", "changes", c);
		wdb_change_summary(one, line, sizeof(line));
		fprintf(f, "  %s\n", line);
		json_decref(one);
	}
}

/* Record @id of the change log (log_records()), NULL when there is
 * none. */
static json_t *record_of(int64_t id)
{
	if (!ctl_cluster_on())
		return wdb_audit_get(ctl_db, id);
	json_t *recs = log_records("rollback", 0), *r, *found = NULL;
	size_t i;
	json_array_foreach(recs, i, r)
		if (json_integer_value(json_object_get(r, "id")) == id)
			found = json_incref(r);
	json_decref(recs);
	return found;
}

int ctl_cmd_rollback(int argc, char **argv)
{
	int dry = 0;
	const char *ids = NULL;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--dry-run") == 0)
			dry = 1;
		else if (strcmp(argv[i], "--force") == 0)
			continue;   /* once needed for a deletion; kept for scripts */
		else if (argv[i][0] == '-')
			ctl_usage_die("rollback: unknown option '%s'", argv[i]);
		else if (ids)
			ctl_usage_die("rollback: unexpected argument '%s'", argv[i]);
		else
			ids = argv[i];
	}
	int64_t id;
	if (ids) {
		id = ctl_parse_num("rollback", ids, 1, INT32_MAX);
	} else {
		/* The newest change of this user that is not undone: health
		 * decisions, other users' changes and rollbacks are skipped,
		 * so repeating walks further back (gslbctl(8)). */
		json_t *recs = log_records("rollback", 0);
		id = wdb_rollback_pick(recs, ctl_rollback_user());
		json_decref(recs);
		if (!id)
			ctl_die("rollback: %s has no change left to roll back (name one: "
			    "rollback ID, see log)", ctl_user);
	}
	json_t *rec = record_of(id);
	if (!rec)
		ctl_die("rollback: %s %lld does not exist%s", change_noun(), (long long)id,
		        from_cluster ? " in the cluster's log" : "");
	/* S3-8: an automatic change of shares is undone by pinning the
	 * shares before it, or the engine would make it again. */
	if (wdb_rollback_is_steer(rec)) {
		int rc = ctl_steer_rollback(rec, id, dry);
		json_decref(rec);
		return rc;
	}
	wdb_txn_t *t = dry ? ctl_begin_read() : ctl_begin();
	json_t *undo = undo_of(t, rec, id);
	char line[1000];
	wdb_change_summary(rec, line, sizeof(line));
	/* No deletion guard: undo_of() deletes only what change @id added,
	 * each object still as that change wrote it, so the rollback brings
	 * back the table that change found; a file that is not what the
	 * operator thinks, which apply's guard is about, cannot happen here
	 * (gslbctl(8); --force is accepted and changes nothing). */
	if (dry) {
		wdb_abort(t);
		printf("rollback would undo %s %lld (%s %s: %s); --dry-run: "
		       "nothing was written\n", change_noun(), (long long)id,
		       json_string_value(json_object_get(rec, "time")),
		       json_string_value(json_object_get(rec, "actor")), line);
		print_undo(stdout, undo);
	} else {
		size_t i;
		json_t *c;
		json_array_foreach(undo, i, c) {
			json_t *v = json_object_get(c, "after");
			ctl_set(t, (wdb_kind_t)wdb_rollback_kind(c),
			        json_string_value(json_object_get(c, "key")),
			        json_is_null(v) ? NULL : v);
		}
		wdb_txn_note(t, "undoes", json_integer(id));
		if (!ctl_json)
			printf("undoing %s %lld: %s\n", change_noun(), (long long)id, line);
		char what[200];
		snprintf(what, sizeof(what), "rollback %s%lld", from_cluster ? "revision " : "",
		         (long long)id);
		ctl_commit(t, what);
	}
	json_decref(undo);
	json_decref(rec);
	return 0;
}
