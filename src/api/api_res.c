/* SPDX-License-Identifier: MIT */
/* The HTTP API's resources (api.h): the table read in the shape of
 * gslbctl export, a node's admin state and the deletes written through
 * the functions gslbctl uses (store/edit.h), the audit log. */
#include "api/api_int.h"
#include "store/change.h"
#include "store/edit.h"

#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The LIST of path @p (after "/v1/": LIST or LIST/ID), for LIST in
 * wdb_doc_lists (the order of wdb_kind_t), or -1; the slash after it,
 * or NULL, in *@slash. */
static int list_kind(const char *p, const char **slash)
{
	*slash = strchr(p, '/');
	size_t ll = *slash ? (size_t)(*slash - p) : strlen(p);
	for (int k = 0; k < 3; k++)
		if (strlen(wdb_doc_lists[k]) == ll && strncmp(p, wdb_doc_lists[k], ll) == 0)
			return k;
	return -1;
}

typedef struct {
	int kind;
	json_t *arr;
} collect_t;

static int collect(const char *key, json_t *val, void *arg)
{
	collect_t *c = arg;
	json_array_append_new(c->arr, wdb_doc_object(c->kind, val));
	return 0;
}

static json_t *read_list(wdb_txn_t *t, int kind)
{
	collect_t c = { kind, json_array() };
	wdb_each(t, (wdb_kind_t)kind, NULL, collect, &c);
	return c.arr;
}

/* GET /v1/status: the generation, the newest change, the table's size. */
static void get_status(const api_env_t *env, wdb_txn_t *t, api_resp_t *r)
{
	json_t *o = json_object();
	for (int k = 0; k < 3; k++) {
		json_t *l = read_list(t, k);
		json_object_set_new(o, wdb_doc_lists[k], json_integer((json_int_t)json_array_size(l)));
		json_decref(l);
	}
	json_object_set_new(o, "generation", json_integer((json_int_t)r->generation));
	json_object_set_new(o, "last_change", json_integer(wdb_audit_last(env->db)));
	json_object_set_new(o, "cluster", json_boolean(env->cluster));
	r->body = o;
}

static int collect_audit(int64_t id, json_t *rec, void *arg)
{
	json_array_append(arg, rec);
	return 0;
}

/* GET /v1/log: the newest 50 changes, oldest first, as gslbctl log
 * --json gives them: in cluster mode the cluster's log in etcd, each
 * record named by its revision as on every instance (cluster/clog.h);
 * 503 when etcd does not answer, rather than this store's own log,
 * whose ids a rollback would take for revisions. */
static void get_log(const api_env_t *env, api_resp_t *r)
{
	if (env->cluster && env->cl) {
		json_t *recs;
		char err[1024];
		if (cluster_log_get(env->cl, 0, 50, &recs, err, sizeof(err))) {
			api_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "cluster: %s; the "
			          "cluster's change log cannot be read", err);
			return;
		}
		r->body = json_pack("{s:o}", "changes", recs);
		return;
	}
	int64_t last = wdb_audit_last(env->db);
	json_t *arr = json_array();
	wdb_audit_each(env->db, last > 50 ? last - 50 : 0, collect_audit, arr);
	r->body = json_pack("{s:o}", "changes", arr);
}

static void get(const api_env_t *env, const api_req_t *q, wdb_txn_t *t,
                api_resp_t *r)
{
	const char *p = q->path + 4;   /* after "/v1/" */
	const char *slash;
	int kind = list_kind(p, &slash);
	if (strcmp(p, "status") == 0) {
		get_status(env, t, r);
	} else if (strcmp(p, "log") == 0) {
		get_log(env, r);
		if (r->status)
			return;
	} else if (strcmp(p, "export") == 0) {
		json_t *doc = json_pack("{s:i}", "version", WDB_FORMAT_VERSION);
		for (int k = 0; k < 3; k++)
			json_object_set_new(doc, wdb_doc_lists[k], read_list(t, k));
		r->body = doc;
	} else if (kind >= 0 && !slash) {
		r->body = json_pack("{s:o}", wdb_doc_lists[kind], read_list(t, kind));
	} else if (kind >= 0 && slash[1] && !strchr(slash + 1, '/')) {
		json_t *o = wdb_get(t, (wdb_kind_t)kind, slash + 1);
		if (!o) {
			api_error(r, MHD_HTTP_NOT_FOUND, "id", "%s %s: not found",
			          wdb_doc_lists[kind], slash + 1);
			return;
		}
		r->body = wdb_doc_object(kind, o);
		json_decref(o);
	} else {
		api_error(r, MHD_HTTP_NOT_FOUND, NULL, "%s: no such resource", q->path);
		return;
	}
	r->status = MHD_HTTP_OK;
}

json_t *api_body_object(const api_req_t *q, api_resp_t *r)
{
	json_error_t je;
	json_t *b = json_loadb(q->body, q->body_len, JSON_REJECT_DUPLICATES, &je);
	if (!b) {
		api_error(r, MHD_HTTP_BAD_REQUEST, NULL,
		          "malformed JSON at line %d column %d: %s", je.line, je.column,
		          je.text);
		return NULL;
	}
	if (!json_is_object(b)) {
		api_error(r, MHD_HTTP_BAD_REQUEST, NULL, "the body must be a JSON object");
		json_decref(b);
		return NULL;
	}
	return b;
}

/* The write under way: the main thread serves one request at a time,
 * and api_route() clears this before and after each.  In cluster mode
 * the generation a write's If-Match names is the revision of the last
 * change the store held when the write began (its transaction's),
 * whatever the resource passes to api_match_ok(). */
static struct {
	const api_req_t *q;
	int cluster;
	uint64_t rev;
	char actor[128];
} g_write;

/* The generation of the table as @t reads it: in cluster mode the etcd
 * revision of the last change the store reflects (cluster/sync.h's
 * "changerev": the same number on every instance that is up to date,
 * the one gslbctl prints as "cluster revision N" and the API's answer
 * to a write names as its change), else the store's table generation.
 * Neither moves with the health thread's decisions. */
static uint64_t generation(const api_env_t *env, wdb_txn_t *t)
{
	return env->cluster ? wdb_meta_u64(t, "changerev")
	                    : wdb_table_generation(t);
}

wdb_txn_t *api_begin_read(const api_env_t *env, api_resp_t *r)
{
	wdb_txn_t *t = wdb_begin_read(env->db);
	if (!t) {
		api_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "store busy: try again");
		return NULL;
	}
	r->generation = generation(env, t);
	r->has_gen = 1;
	return t;
}

int api_match_ok(const api_req_t *q, uint64_t gen, api_resp_t *r)
{
	if (!q->if_match || strcmp(q->if_match, "*") == 0)
		return 1;
	if (g_write.q == q && g_write.cluster)
		gen = g_write.rev;
	char want[32];
	snprintf(want, sizeof(want), "\"%llu\"", (unsigned long long)gen);
	if (strcmp(q->if_match, want) == 0)
		return 1;
	api_error(r, MHD_HTTP_PRECONDITION_FAILED, NULL,
	          "If-Match %s: the table is at generation %s now", q->if_match, want);
	return 0;
}

/* Checks PATCH /v1/nodes/ID body @b against node @n and applies it to
 * @n.  Returns 0, or -1 with the error in @r. */
static int patch_node(const api_env_t *env, const api_req_t *q, json_t *b,
                      json_t *n, api_resp_t *r)
{
	const char *k;
	json_t *v;
	char err[300];
	json_object_foreach(b, k, v) {
		if (strcmp(k, "admin") != 0) {
			api_error(r, MHD_HTTP_BAD_REQUEST, k, "%s: unknown key (a node's "
			          "admin state is what PATCH changes)", k);
			return -1;
		}
		if (!json_is_string(v)) {
			api_error(r, MHD_HTTP_BAD_REQUEST, k, "%s: must be a string", k);
			return -1;
		}
		if (wdb_node_admin(n, "admin", json_string_value(v), q->now, env->settle,
		                   err, sizeof(err))) {
			api_error(r, MHD_HTTP_BAD_REQUEST, k, "%s", err);
			return -1;
		}
	}
	return 0;
}

wdb_txn_t *api_begin_write(const api_env_t *env, const api_req_t *q,
                           api_resp_t *r)
{
	char actor[128], err[300];
	snprintf(actor, sizeof(actor), "api:%s", q->user);
	wdb_txn_t *t = wdb_begin(env->db, actor, err, sizeof(err));
	if (!t) {
		api_error(r, MHD_HTTP_CONFLICT, NULL, "%s", err);
		return NULL;
	}
	wdb_txn_note(t, "user", json_string(q->user));
	wdb_txn_note(t, "host", json_string(q->host));
	g_write.q = q;
	g_write.cluster = env->cluster;
	g_write.rev = generation(env, t);
	snprintf(g_write.actor, sizeof(g_write.actor), "%s", actor);
	return t;
}

/* Cluster mode: @t's change to etcd (cluster/commit.h), with gslbctl's
 * words on error: etcd not answering is 503 (nothing written, try
 * again), the rest 409.  Only local data is committed locally. */
static int64_t commit_cluster(const api_env_t *env, wdb_txn_t *t,
                              const char *what, api_resp_t *r)
{
	char err[1400];
	int64_t rev = 0;
	cluster_commit_class_t rc = cluster_write(env->cl, t, what,
	                                          g_write.actor, &rev, err,
	                                          sizeof(err));
	switch (rc) {
	case CLUSTER_COMMIT_OK:
		/* The answer's generation is the change's revision, which the
		 * store reflects now (or as soon as the watch applies it). */
		r->generation = (uint64_t)rev;
		r->has_gen = 1;
		return rev;
	case CLUSTER_COMMIT_LOCAL:
		break;
	case CLUSTER_COMMIT_UNAVAILABLE:
		api_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "%s", err);
		return -1;
	default:
		api_error(r, MHD_HTTP_CONFLICT, NULL, "%s", err);
		return -1;
	}
	int64_t change = wdb_commit(t, what, err, sizeof(err));
	if (change < 0)
		api_error(r, MHD_HTTP_CONFLICT, NULL, "%s; nothing was changed", err);
	return change;
}

int64_t api_commit(const api_env_t *env, wdb_txn_t *t, const char *what,
                   api_resp_t *r)
{
	if (env->cluster && env->cl)
		return commit_cluster(env, t, what, r);
	char err[600];
	int64_t change = wdb_commit(t, what, err, sizeof(err));
	if (change < 0)
		api_error(r, MHD_HTTP_CONFLICT, NULL, "%s; nothing was changed", err);
	return change;
}

/* PATCH /v1/nodes/ID {"admin": "drain"}: operate. */
static void write_node(const api_env_t *env, const api_req_t *q, const char *id,
                       api_resp_t *r)
{
	json_t *b = api_body_object(q, r);
	if (!b)
		return;
	wdb_txn_t *t = api_begin_write(env, q, r);
	if (!t) {
		json_decref(b);
		return;
	}
	json_t *old = wdb_get(t, WDB_NODE, id), *n = NULL;
	char what[300];
	if (!old) {
		api_error(r, MHD_HTTP_NOT_FOUND, "id", "node %s: not found", id);
	} else if (api_match_ok(q, wdb_table_generation(t), r) &&
	           !patch_node(env, q, b, (n = json_deep_copy(old)), r)) {
		snprintf(what, sizeof(what), "node set %s", id);
		wdb_set(t, WDB_NODE, id, n);   /* a failure: the commit refuses */
		int64_t change = api_commit(env, t, what, r);
		t = NULL;          /* committed or, on error, aborted */
		if (change >= 0) {
			r->status = MHD_HTTP_OK;
			r->body = json_pack("{s:I, s:o}", "change", (json_int_t)change,
			                    "node", wdb_doc_object(WDB_NODE, n));
		}
	}
	if (t)
		wdb_abort(t);
	json_decref(old);
	json_decref(n);
	json_decref(b);
}

/* DELETE /v1/LIST/ID: admin, with gslbctl's guards and texts
 * (store/edit.h): absent 404, still named by a row 422. */
static void delete_one(const api_env_t *env, const api_req_t *q, int kind,
                       const char *id, api_resp_t *r)
{
	static int (*const del[3])(wdb_txn_t *, const char *, char *, size_t,
	                           char *, size_t) = {
		wdb_service_delete, wdb_node_delete, wdb_weight_delete,
	};
	wdb_txn_t *t = api_begin_write(env, q, r);
	if (!t)
		return;
	char what[1400], err[1400];
	if (!api_match_ok(q, wdb_table_generation(t), r)) {
		wdb_abort(t);
		return;
	}
	int rc = del[kind](t, id, what, sizeof(what), err, sizeof(err));
	if (rc) {
		wdb_abort(t);
		api_error(r, rc == WDB_EDIT_ABSENT ? MHD_HTTP_NOT_FOUND
		          : rc == WDB_EDIT_REFUSED ? MHD_HTTP_UNPROCESSABLE_CONTENT
		          : MHD_HTTP_CONFLICT, "id", "%s%s", err,
		          rc == WDB_EDIT_STORE ? "; nothing was changed" : "");
		return;
	}
	int64_t change = api_commit(env, t, what, r);
	if (change < 0)
		return;
	r->status = MHD_HTTP_OK;
	r->body = json_pack("{s:I, s:s}", "change", (json_int_t)change, "what", what);
}

/* The write @q asks for: its kind (-1 for PATCH of a node) and the
 * object's id in *@id, or -2 when it is no change the API makes. */
static int write_target(const api_req_t *q, const char **id)
{
	const char *slash;
	int kind = list_kind(q->path + 4, &slash);
	if (!slash || !slash[1] || strchr(slash + 1, '/'))
		return -2;
	*id = slash + 1;
	if (kind >= 0 && strcmp(q->method, "DELETE") == 0)
		return kind;
	if (kind == WDB_NODE && strcmp(q->method, "PATCH") == 0)
		return -1;
	return -2;
}

int api_role_ok(const api_req_t *q, api_role_t need, api_resp_t *r)
{
	if (q->role >= need)
		return 1;
	api_error(r, MHD_HTTP_FORBIDDEN, NULL, "token %s has role %s: %s",
	          q->user, api_role_name(q->role), q->role < API_ROLE_OPERATE
	          ? "it may only read" : "this change needs role admin");
	return 0;
}

/* The generation the answer reflects: the store's after the request
 * (unless a change written to etcd set its revision). */
static void set_generation(const api_env_t *env, api_resp_t *r)
{
	if (r->has_gen)
		return;
	wdb_txn_t *t = wdb_begin_read(env->db);
	if (t) {
		r->generation = generation(env, t);
		r->has_gen = 1;
		wdb_abort(t);
	}
}

/* The resources of their own files, asked in turn before the table's
 * (one line each). */
static const api_route_fn routes[] = {
	api_put_route,
	api_metrics_route,
	api_run_route,
	api_cutover_route,
	api_rollback_route,
	api_release_route,
	api_budget_route,
	api_steer_route,
	api_explain_route,
	api_health_route,
	NULL
};

void api_route(const api_env_t *env, const api_req_t *q, api_resp_t *r)
{
	if (strncmp(q->path, "/v1/", 4) != 0) {
		api_error(r, MHD_HTTP_NOT_FOUND, NULL, "%s: no such resource (the API "
		          "is under /v1/)", q->path);
		return;
	}
	memset(&g_write, 0, sizeof(g_write));
	for (size_t i = 0; routes[i]; i++)
		if (routes[i](env, q, r)) {
			set_generation(env, r);
			memset(&g_write, 0, sizeof(g_write));
			return;
		}
	int read = strcmp(q->method, "GET") == 0 || strcmp(q->method, "HEAD") == 0;
	if (read) {
		wdb_txn_t *t = api_begin_read(env, r);
		if (!t)
			return;
		get(env, q, t, r);
		wdb_abort(t);
		return;
	}
	const char *id = NULL;
	int kind = write_target(q, &id);
	if (kind == -2) {
		api_error(r, MHD_HTTP_METHOD_NOT_ALLOWED, NULL,
		          "%s %s: not a change the API makes", q->method, q->path);
		return;
	}
	/* PATCH of a node's admin state needs operate, deletes admin. */
	if (!api_role_ok(q, kind == -1 ? API_ROLE_OPERATE : API_ROLE_ADMIN, r))
		return;
	if (kind >= 0)
		delete_one(env, q, kind, id, r);
	else
		write_node(env, q, id, r);
	set_generation(env, r);
	memset(&g_write, 0, sizeof(g_write));
}
