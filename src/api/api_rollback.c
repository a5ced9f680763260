/* SPDX-License-Identifier: MIT */
/* The HTTP API's rollback: POST /v1/rollback/CHANGE-ID undoes one change
 * as a new audited change (S3-7, S3-8), or with ?dry_run=1 says what it
 * would write; the undo is gslbctl rollback's (store/rollback.h), with
 * its checks and texts.  In cluster mode the change is named by its
 * cluster revision and read from the cluster's log in etcd, and the
 * undo goes to etcd through api_commit(), as gslbctl rollback's does. */
#include "api/api_int.h"
#include "store/change.h"
#include "store/rollback.h"
#include "store/plan.h"

#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The summary line of one undo entry @c, as gslbctl rollback --dry-run
 * prints it. */
static json_t *entry_summary(json_t *c)
{
	char line[1000];
	json_t *one = json_pack("{s:s, s:[O]}", "what", "", "changes", c);
	wdb_change_summary(one, line, sizeof(line));
	json_decref(one);
	return json_string(line);
}

/* Whether @v, the value of ?dry_run, asks for a dry run: into *@dry, or
 * -1 when it is no yes or no. */
static int dry_arg(const char *v, int *dry)
{
	static const char *const yes[] = { "", "1", "true", "yes", NULL };
	static const char *const no[] = { "0", "false", "no", NULL };
	*dry = 0;
	if (!v)
		return 0;
	for (const char *const *s = yes; *s; s++)
		if (strcmp(v, *s) == 0)
			return *dry = 1, 0;
	for (const char *const *s = no; *s; s++)
		if (strcmp(v, *s) == 0)
			return 0;
	return -1;
}

/* The steering engine's change @rec: its rows pinned at the shares
 * before it. */
static void pin(const api_env_t *env, const api_req_t *q, json_t *rec,
                int64_t id, int dry, wdb_txn_t *t, api_resp_t *r)
{
	json_t *rows;
	char err[600];
	if (wdb_rollback_pins(t, rec, id, q->user, q->now, &rows, err, sizeof(err))) {
		wdb_abort(t);
		api_error(r, MHD_HTTP_UNPROCESSABLE_CONTENT, "id", "%s", err);
		return;
	}
	/* The weights each row answers with once pinned, in basis points
	 * (or the operator's weights), as gslbctl prints them. */
	json_t *pins = json_object(), *row;
	const char *key;
	int wrc = 0;
	json_object_foreach(rows, key, row) {
		json_object_set(pins, key, plan_row_weights(row, 1));
		if (!dry && !wrc && (wrc = wdb_set(t, WDB_WEIGHT, key, row)))
			snprintf(err, sizeof(err), "writing %s: %s; nothing was changed", key,
			         wdb_strerror(wrc));
	}
	json_decref(rows);
	if (dry || wrc) {
		wdb_abort(t);
		if (wrc) {
			json_decref(pins);
			api_error(r, MHD_HTTP_CONFLICT, NULL, "%s", err);
			return;
		}
		r->status = MHD_HTTP_OK;
		r->body = json_pack("{s:b, s:I, s:o}", "dry_run", 1, "undoes",
		                    (json_int_t)id, "pins", pins);
		return;
	}
	wdb_txn_note(t, "undoes", json_integer(id));
	char what[200];
	snprintf(what, sizeof(what), "rollback %lld: steering pinned", (long long)id);
	int64_t change = api_commit(env, t, what, r);
	if (change < 0) {
		json_decref(pins);
		return;
	}
	r->status = MHD_HTTP_OK;
	r->body = json_pack("{s:I, s:s, s:I, s:o}", "change", (json_int_t)change,
	                    "what", what, "undoes", (json_int_t)id, "pins", pins);
}

/* Cluster mode: the record of revision @id in the cluster's log
 * (cluster_log_get()), or NULL: none (@r untouched), or etcd did not
 * answer (503 in @r: nothing can be undone that cannot be read). */
static json_t *cluster_record(const api_env_t *env, long long id, api_resp_t *r)
{
	json_t *recs;
	char err[1024];
	if (cluster_log_get(env->cl, id, 0, &recs, err, sizeof(err))) {
		api_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "cluster: %s; the "
		          "cluster's change log cannot be read; nothing was written", err);
		return NULL;
	}
	json_t *rec = json_incref(json_array_get(recs, 0));
	json_decref(recs);
	return rec;
}

/* POST /v1/rollback/ID[?dry_run=1]: admin. */
static void rollback(const api_env_t *env, const api_req_t *q, const char *ids,
                     api_resp_t *r)
{
	int dry;
	if (dry_arg(q->arg ? q->arg(q, "dry_run") : NULL, &dry)) {
		api_error(r, MHD_HTTP_BAD_REQUEST, "dry_run", "dry_run %s: give 1 or 0",
		          q->arg ? q->arg(q, "dry_run") : NULL);
		return;
	}
	char *end;
	long long id = strtoll(ids, &end, 10);
	if (!*ids || *end || strspn(ids, "0123456789") != strlen(ids) || id < 1 ||
	    id > INT32_MAX) {
		/* gslbctl's words for its argument. */
		api_error(r, MHD_HTTP_BAD_REQUEST, "id", "rollback %s: must be a whole "
		          "number from 1 to %ld", ids, (long)INT32_MAX);
		return;
	}
	/* In cluster mode the change is the cluster's, named by its
	 * revision, as gslbctl rollback reads it. */
	int cluster = env->cluster && env->cl;
	const char *noun = cluster ? "cluster revision" : "change";
	json_t *rec = cluster ? cluster_record(env, id, r) : wdb_audit_get(env->db, id);
	if (!rec) {
		if (!r->status)
			api_error(r, MHD_HTTP_NOT_FOUND, "id", "%s %lld does not exist%s",
			          noun, id, cluster ? " in the cluster's log" : "");
		return;
	}
	wdb_txn_t *t = dry ? wdb_begin_read(env->db) : api_begin_write(env, q, r);
	if (!t) {
		if (dry)
			api_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "store busy: try again");
		json_decref(rec);
		return;
	}
	if (!dry && !api_match_ok(q, wdb_table_generation(t), r)) {
		wdb_abort(t);
		json_decref(rec);
		return;
	}
	if (wdb_rollback_is_steer(rec)) {
		pin(env, q, rec, id, dry, t, r);
		json_decref(rec);
		return;
	}
	json_t *undo;
	char err[600], line[1000];
	if (wdb_rollback_undo(t, rec, id, noun, &undo, err, sizeof(err))) {
		wdb_abort(t);
		json_decref(rec);
		api_error(r, MHD_HTTP_UNPROCESSABLE_CONTENT, "id", "%s", err);
		return;
	}
	wdb_change_summary(rec, line, sizeof(line));
	json_decref(rec);
	size_t i;
	json_t *c;
	int wrc = 0;
	json_array_foreach(undo, i, c) {
		json_t *v = json_object_get(c, "after");
		if (!dry && !wrc &&
		    (wrc = wdb_set(t, (wdb_kind_t)wdb_rollback_kind(c),
		                   json_string_value(json_object_get(c, "key")),
		                   json_is_null(v) ? NULL : v)))
			snprintf(err, sizeof(err), "%s %s: %s; nothing was changed",
			         json_is_null(v) ? "deleting" : "writing",
			         json_string_value(json_object_get(c, "key")), wdb_strerror(wrc));
		json_object_set_new(c, "summary", entry_summary(c));
	}
	json_t *doc = json_pack("{s:I, s:s, s:o}", "undoes", (json_int_t)id,
	                        "summary", line, "changes", undo);
	if (dry || wrc) {
		wdb_abort(t);
		if (wrc) {
			json_decref(doc);
			api_error(r, MHD_HTTP_CONFLICT, NULL, "%s", err);
			return;
		}
		json_object_set_new(doc, "dry_run", json_true());
		r->status = MHD_HTTP_OK;
		r->body = doc;
		return;
	}
	wdb_txn_note(t, "undoes", json_integer(id));
	char what[200];
	snprintf(what, sizeof(what), "rollback %s%lld", cluster ? "revision " : "", id);
	int64_t change = api_commit(env, t, what, r);
	if (change < 0) {
		json_decref(doc);
		return;
	}
	json_object_set_new(doc, "change", json_integer(change));
	json_object_set_new(doc, "what", json_string(what));
	r->status = MHD_HTTP_OK;
	r->body = doc;
}

int api_rollback_route(const api_env_t *env, const api_req_t *q, api_resp_t *r)
{
	const char *p = q->path + 4;   /* after "/v1/" */
	if (strncmp(p, "rollback", 8) != 0 || (p[8] && p[8] != '/'))
		return 0;
	if (strcmp(q->method, "POST") != 0) {
		api_error(r, MHD_HTTP_METHOD_NOT_ALLOWED, NULL, "%s %s: a rollback is "
		          "POST /v1/rollback/CHANGE-ID (?dry_run=1 to see it first)",
		          q->method, q->path);
		return 1;
	}
	if (!p[8] || !p[9] || strchr(p + 9, '/')) {
		api_error(r, MHD_HTTP_NOT_FOUND, NULL, "%s: name the change: "
		          "/v1/rollback/CHANGE-ID", q->path);
		return 1;
	}
	if (api_role_ok(q, API_ROLE_ADMIN, r))
		rollback(env, q, p + 9, r);
	return 1;
}
