/* SPDX-License-Identifier: MIT */
/* gslbctl log and rollback: the audit log of the weight store, and the
 * undo of one change as a new audited change (S3-7, S3-8). */
#include "ctl/ctl.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef struct {
	const char *since_time;
	json_t *out;
} log_filter_t;

static int log_collect(int64_t id, json_t *rec, void *arg)
{
	log_filter_t *lf = arg;
	(void)id;
	const char *tm = json_string_value(json_object_get(rec, "time"));
	/* RFC 3339 UTC strings compare in time order. */
	if (lf->since_time && tm && strcmp(tm, lf->since_time) < 0)
		return 0;
	json_array_append(lf->out, rec);
	return 0;
}

int ctl_cmd_log(int argc, char **argv)
{
	int64_t since_id = 0;
	const char *since_time = NULL;
	for (int i = 0; i < argc; i += 2) {
		if (strcmp(argv[i], "--since") != 0 || i + 1 >= argc)
			ctl_die("log: usage: log [--since TIME|ID]");
		const char *v = argv[i + 1];
		if (isdigit((unsigned char)v[0]) && !strchr(v, '-'))
			since_id = ctl_parse_num("--since", v, 1, INT32_MAX) - 1;
		else
			since_time = v;
	}
	json_t *all = json_array();
	log_filter_t lf = { since_time, all };
	int rc = wdb_audit_each(ctl_db, since_id, log_collect, &lf);
	if (rc < 0)
		ctl_die("log: cannot read the audit log: %s", wdb_strerror(rc));
	if (ctl_json) {
		size_t i;
		json_t *r;
		json_array_foreach(all, i, r)
			ctl_set_time(r, "time", ctl_parse_utc(json_string_value(
				json_object_get(r, "time"))));
		ctl_emit(json_pack("{s:O}", "records", all));
	} else {
		size_t i;
		json_t *r;
		json_array_foreach(all, i, r)
			printf("%5lld  %s  %-16s %s\n",
			       json_integer_value(json_object_get(r, "id")),
			       json_string_value(json_object_get(r, "time")),
			       json_string_value(json_object_get(r, "actor")),
			       json_string_value(json_object_get(r, "what")));
	}
	json_decref(all);
	return 0;
}

/* Whether @changes holds a change of node @id.  Deleting a node (or
 * taking its probes) changes its health record in the same change; the
 * undo restores the node, never the old verdict. */
static int node_changed(json_t *changes, const char *id)
{
	size_t i;
	json_t *c;
	json_array_foreach(changes, i, c)
		if (strcmp(json_string_value(json_object_get(c, "kind")) ?: "", "node") == 0 &&
		    strcmp(json_string_value(json_object_get(c, "key")) ?: "", id) == 0)
			return 1;
	return 0;
}

int ctl_cmd_rollback(int argc, char **argv)
{
	int64_t id = argc > 0 ? ctl_parse_num("rollback", argv[0], 1, INT32_MAX)
	                      : wdb_audit_last(ctl_db);
	if (argc > 1)
		ctl_die("rollback: unexpected argument '%s'", argv[1]);
	if (id <= 0)
		ctl_die("rollback: there is no change to roll back");
	json_t *rec = wdb_audit_get(ctl_db, id);
	if (!rec)
		ctl_die("rollback: change %lld does not exist", (long long)id);
	json_t *changes = json_object_get(rec, "changes");
	if (!json_array_size(changes))
		ctl_die("rollback: change %lld changed nothing", (long long)id);
	wdb_txn_t *t = ctl_begin();
	/* Undo in reverse order; a later change to the same object makes the
	 * undo ambiguous, so it is refused. */
	for (size_t i = json_array_size(changes); i-- > 0;) {
		json_t *c = json_array_get(changes, i);
		const char *kn = json_string_value(json_object_get(c, "kind"));
		const char *key = json_string_value(json_object_get(c, "key"));
		wdb_kind_t kind;
		if (strcmp(kn, "service") == 0)
			kind = WDB_SERVICE;
		else if (strcmp(kn, "node") == 0)
			kind = WDB_NODE;
		else if (strcmp(kn, "weight") == 0)
			kind = WDB_WEIGHT;
		else if (strcmp(kn, "cutover") == 0)
			kind = WDB_CUTOVER;
		else if (node_changed(changes, key))
			continue;   /* went with its node: a restored node starts afresh */
		else
			ctl_die("rollback: change %lld is a health decision; set the node's "
			    "admin state instead", (long long)id);
		json_t *now = wdb_get(t, kind, key);
		json_t *after = json_object_get(c, "after");
		int same = (json_is_null(after) && !now) ||
		           (now && json_equal(now, after));
		json_decref(now);
		if (!same)
			ctl_die("rollback: %s %s changed again after change %lld; roll back the later change first",
			    kn, key, (long long)id);
		json_t *before = json_object_get(c, "before");
		ctl_set(t, kind, key, json_is_null(before) ? NULL : before);
	}
	json_decref(rec);
	char what[200];
	snprintf(what, sizeof(what), "rollback %lld", (long long)id);
	ctl_commit(t, what);
	return 0;
}

