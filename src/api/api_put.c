/* SPDX-License-Identifier: MIT */
/* The HTTP API's creating and replacing writes: PUT of one service,
 * node or weight row in the shape GET gives it, and POST /v1/apply of a
 * whole table document as gslbctl export writes it.  Both run gslbctl
 * apply's checks (store/apply.h), so a document refused by one is
 * refused by the other with the same text; a PUT is an apply of the
 * store's table with that one object created or replaced. */
#include "api/api_int.h"
#include "store/apply.h"
#include "store/change.h"
#include "store/keys.h"

#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the texts of the checks call the document: the request's body.
 * gslbctl apply of a file of that name says the same. */
#define DOC_NAME "body"

/* The status of a class of store/apply.h. */
static unsigned class_status(int cls)
{
	switch (cls) {
	case WDB_EDIT_ABSENT:
		return MHD_HTTP_NOT_FOUND;
	case WDB_EDIT_REFUSED:
		return MHD_HTTP_UNPROCESSABLE_CONTENT;
	case WDB_EDIT_BAD:
		return MHD_HTTP_BAD_REQUEST;
	default:
		return MHD_HTTP_CONFLICT;
	}
}

static void check_error(const wdb_apply_err_t *e, api_resp_t *r)
{
	api_error(r, class_status(e->cls), *e->field ? e->field : NULL, "%s", e->msg);
}

static void opts_of(const api_env_t *env, wdb_apply_opts_t *op)
{
	*op = (wdb_apply_opts_t){
		.conf = env->conf ? *env->conf : NULL,
		.probe_interval = env->probe_interval,
		.probe_timeout = env->probe_timeout,
	};
}

/* The region and ISP names known before the change: the store's (in
 * @t) and the geoip sources'. */
static void area_known(const api_env_t *env, wdb_txn_t *t, wdb_area_known_t *k)
{
	wdb_area_known_init(t, k);
	if (env->area_names)
		env->area_names(k);
}

/* URL argument @name as a yes or no (absent: no) in *@on; 0, or -1
 * with the error (400) in @r. */
static int flag_arg(const api_req_t *q, const char *name, int *on, api_resp_t *r)
{
	const char *v = q->arg ? q->arg(q, name) : NULL;
	*on = 0;
	if (!v || strcmp(v, "0") == 0 || strcmp(v, "false") == 0)
		return 0;
	if (!*v || strcmp(v, "1") == 0 || strcmp(v, "true") == 0) {
		*on = 1;
		return 0;
	}
	api_error(r, MHD_HTTP_BAD_REQUEST, name, "%s=%s: give 1 or 0", name, v);
	return -1;
}

/* @diff of wdb_table_diff() as the API answers it: "added", "changed"
 * and "removed", each with the keys of every list.  A new object. */
static json_t *diff_view(json_t *diff)
{
	return json_pack("{s:O, s:O, s:O}", "added", json_object_get(diff, "added"),
	                 "changed", json_object_get(diff, "changed"),
	                 "removed", json_object_get(diff, "deleted"));
}

/* The tables {"services": T[0], ...} of @k (references kept). */
static json_t *table_of(json_t *k[3])
{
	json_t *o = json_object();
	for (int i = 0; i < 3; i++)
		json_object_set(o, wdb_doc_lists[i], k[i]);
	return o;
}

/* The id of @kind the path gives, canonical as the store keys it, in
 * @out; 0, or -1 when it is no such id. */
static int path_key(const wdb_apply_opts_t *op, int kind, const char *id,
                    char *out, size_t size)
{
	wdb_apply_err_t e;
	if (kind == WDB_SERVICE)
		return wdb_service_name(op->conf, id, out, size, &e) ? -1 : 0;
	if (kind == WDB_NODE) {
		snprintf(out, size, "%s", id);
		return 0;
	}
	wdb_row_parts_t p;
	char svc[1100], reg[256], isp[256];
	if (wdb_row_split(id, strlen(id), &p) || p.svc_len >= 1000 ||
	    p.region_len >= sizeof(reg) || p.isp_len >= sizeof(isp))
		return -1;
	snprintf(svc, sizeof(svc), "%.*s", (int)p.svc_len, p.svc);
	snprintf(reg, sizeof(reg), "%.*s", (int)p.region_len, p.region);
	snprintf(isp, sizeof(isp), "%.*s", (int)p.isp_len, p.isp);
	char name[1100];
	if (wdb_service_name(op->conf, svc, name, sizeof(name), &e))
		return -1;
	wdb_row_key(out, size, name, reg, isp);
	return 0;
}

/* The keys of @kind's objects that name them, filled from the path when
 * the body leaves them out (a row's service, region and ISP), and else
 * held to agree with it: 0, or -1 with the error (400) in @r. */
static int body_names(const wdb_apply_opts_t *op, int kind, const char *id,
                      json_t *b, const char *key, api_resp_t *r)
{
	static const char *const idk[] = { "name", "id" };
	char want[1300];
	if (kind != WDB_WEIGHT) {
		if (!json_object_get(b, idk[kind]))
			json_object_set_new(b, idk[kind], json_string(id));
		if (key && (path_key(op, kind, id, want, sizeof(want)) ||
		            strcmp(want, key) != 0)) {
			api_error(r, MHD_HTTP_BAD_REQUEST, idk[kind], "%s: the path names %s "
			          "%s, the body %s", idk[kind], kind ? "node" : "service", id,
			          json_string_value(json_object_get(b, idk[kind])));
			return -1;
		}
		return 0;
	}
	wdb_row_parts_t p;
	if (wdb_row_split(id, strlen(id), &p)) {
		api_error(r, MHD_HTTP_BAD_REQUEST, "id", "weight row %s: not a row's key "
		          "(SERVICE|REGION|ISP)", id);
		return -1;
	}
	const char *part[3] = { "service", "region", "isp" };
	const char *pv[3] = { p.svc, p.region, p.isp };
	size_t pl[3] = { p.svc_len, p.region_len, p.isp_len };
	for (int i = 0; i < 3; i++)
		if (!json_object_get(b, part[i]))
			json_object_set_new(b, part[i], json_stringn(pv[i], pl[i]));
	if (!key)
		return 0;
	wdb_row_parts_t k;
	if (!path_key(op, kind, id, want, sizeof(want)) && strcmp(want, key) == 0)
		return 0;
	wdb_row_split(key, strlen(key), &k);
	const char *kv[3] = { k.svc, k.region, k.isp };
	size_t kl[3] = { k.svc_len, k.region_len, k.isp_len };
	int bad = 0;
	while (bad < 2 && pl[bad] == kl[bad] && memcmp(pv[bad], kv[bad], pl[bad]) == 0)
		bad++;
	api_error(r, MHD_HTTP_BAD_REQUEST, part[bad], "%s: the path names weight "
	          "row %s, the body's row is %s", part[bad], id, key);
	return -1;
}

/* Checks PUT body @b of @kind at path id @id as apply checks the one
 * object of a document (its keys, their values and defaults), with the
 * path's names where it leaves them out; its store key in @key.
 * Returns 0, or -1 with the error in @r. */
static int put_body(const wdb_apply_opts_t *op, int kind, const char *id,
                    json_t *b, char *key, size_t keysize, api_resp_t *r)
{
	char err[600];
	wdb_apply_err_t e;
	if (body_names(op, kind, id, b, NULL, r))
		return -1;
	/* The body as the one object of a document: its keys are the ones
	 * a document's objects may hold. */
	json_t *doc = json_pack("{s:i, s:[O]}", "version", WDB_FORMAT_VERSION,
	                        wdb_doc_lists[kind], b);
	int bad = wdb_doc_check(doc, err, sizeof(err));
	json_decref(doc);
	if (bad) {
		const char *dot = strchr(err, '.'), *colon = strstr(err, ": ");
		char field[128] = "";
		if (dot && colon && dot < colon)
			snprintf(field, sizeof(field), "%.*s", (int)(colon - dot - 1), dot + 1);
		api_error(r, MHD_HTTP_BAD_REQUEST, *field ? field : NULL,
		          "apply: %s: %s; nothing was changed", DOC_NAME, err);
		return -1;
	}
	if (wdb_apply_check(op, (wdb_kind_t)kind, b, 0, key, keysize, &e)) {
		check_error(&e, r);
		return -1;
	}
	return body_names(op, kind, id, b, key, r);
}

/* PUT /v1/LIST/ID: admin.  Creates (201) or replaces (200) one object;
 * the same object again changes nothing ("change": null). */
static void put_one(const api_env_t *env, const api_req_t *q, int kind,
                    const char *id, api_resp_t *r)
{
	static const char *const one[] = { "service", "node", "weight" };
	if (!api_role_ok(q, API_ROLE_ADMIN, r))
		return;
	json_t *b = api_body_object(q, r);
	if (!b)
		return;
	wdb_apply_opts_t op;
	wdb_apply_err_t e;
	opts_of(env, &op);
	json_t *have[3] = { NULL }, *want[3] = { NULL }, *diff = NULL;
	json_t *warnings = json_array();
	char key[1300];
	wdb_txn_t *t = NULL;
	if (put_body(&op, kind, id, b, key, sizeof(key), r))
		goto out;
	if (!(t = api_begin_write(env, q, r)) ||
	    !api_match_ok(q, wdb_table_generation(t), r))
		goto out;
	wdb_apply_have(t, have);
	for (int k = 0; k < 3; k++)
		want[k] = json_copy(have[k]);
	json_object_set(want[kind], key, b);
	json_t *ht = table_of(have), *wt = table_of(want);
	diff = wdb_table_diff(ht, wt);
	json_decref(ht);
	json_decref(wt);
	wdb_area_known_t known;
	area_known(env, t, &known);
	int rc = wdb_apply_check_refs(want, DOC_NAME, &e);
	if (!rc)
		rc = wdb_apply_check_areas(&op, &known, DOC_NAME, diff, want, warnings, &e);
	wdb_area_known_free(&known);
	if (rc) {
		check_error(&e, r);
		goto out;
	}
	int created = !json_object_get(have[kind], key);
	json_t *ans = json_pack("{s:O, s:o, s:O}", one[kind], b, "diff",
	                        diff_view(diff), "warnings", warnings);
	if (!wdb_diff_count(diff, "added") && !wdb_diff_count(diff, "changed")) {
		/* The object is as the body says already: no change, no
		 * audit record (idempotent). */
		json_object_set_new(ans, "change", json_null());
		r->status = MHD_HTTP_OK;
		r->body = ans;
		goto out;
	}
	if (wdb_apply_write(env->db, t, diff, want, &e)) {
		json_decref(ans);
		check_error(&e, r);
		goto out;
	}
	/* gslbctl's words for the same change. */
	char what[1500];
	if (kind == WDB_WEIGHT)
		snprintf(what, sizeof(what), "weight set %s region=%s isp=%s",
		         json_string_value(json_object_get(b, "service")),
		         json_string_value(json_object_get(b, "region")),
		         json_string_value(json_object_get(b, "isp")));
	else
		snprintf(what, sizeof(what), "%s %s %s", one[kind], created ? "add" : "set",
		         key);
	int64_t change = api_commit(env, t, what, r);
	t = NULL;              /* committed or, on error, aborted */
	if (change < 0) {
		json_decref(ans);
		goto out;
	}
	json_object_set_new(ans, "change", json_integer((json_int_t)change));
	json_object_set_new(ans, "what", json_string(what));
	r->status = created ? MHD_HTTP_CREATED : MHD_HTTP_OK;
	r->body = ans;
out:
	if (t)
		wdb_abort(t);
	for (int k = 0; k < 3; k++) {
		json_decref(have[k]);
		json_decref(want[k]);
	}
	json_decref(diff);
	json_decref(warnings);
	json_decref(b);
}

/* POST /v1/apply[?dry_run=1][&force=1]: admin.  Makes the store equal
 * to the body, an export document, in one change; with dry_run answers
 * the difference and writes nothing. */
static void post_apply(const api_env_t *env, const api_req_t *q, api_resp_t *r)
{
	int dry, force;
	if (!api_role_ok(q, API_ROLE_ADMIN, r) || flag_arg(q, "dry_run", &dry, r) ||
	    flag_arg(q, "force", &force, r))
		return;
	json_t *b = api_body_object(q, r);
	if (!b)
		return;
	wdb_apply_opts_t op;
	wdb_apply_err_t e;
	opts_of(env, &op);
	json_t *have[3] = { NULL }, *want[3] = { NULL }, *diff = NULL;
	json_t *warnings = json_array();
	wdb_txn_t *t = NULL;
	if (wdb_apply_read(&op, b, DOC_NAME, want, &e)) {
		check_error(&e, r);
		goto out;
	}
	if (dry) {
		if (!(t = wdb_begin_read(env->db))) {
			api_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "store busy: try again");
			goto out;
		}
	} else if (!(t = api_begin_write(env, q, r))) {
		goto out;
	}
	if (!api_match_ok(q, wdb_table_generation(t), r))
		goto out;
	wdb_apply_have(t, have);
	json_t *ht = table_of(have), *wt = table_of(want);
	diff = wdb_table_diff(ht, wt);
	json_decref(ht);
	json_decref(wt);
	size_t nadd = wdb_diff_count(diff, "added"), nchg = wdb_diff_count(diff, "changed"),
	       ndel = wdb_diff_count(diff, "deleted");
	char why[1000];
	int risky = wdb_diff_needs_force(diff, json_object_size(have[WDB_WEIGHT]),
	                                 why, sizeof(why));
	wdb_area_known_t known;
	area_known(env, t, &known);
	int rc = wdb_apply_check_areas(&op, &known, DOC_NAME, diff, want, warnings, &e);
	wdb_area_known_free(&known);
	if (rc) {
		check_error(&e, r);
		goto out;
	}
	json_t *ans = json_pack("{s:o, s:O}", "diff", diff_view(diff), "warnings", warnings);
	if (risky && !force) {
		/* A truncated or wrong document must not empty the table. */
		json_decref(ans);
		api_error(r, MHD_HTTP_UNPROCESSABLE_CONTENT, NULL, "apply: %s would "
		          "delete %s; nothing was changed (check the document, or send "
		          "force=1)", DOC_NAME, why);
		json_object_set_new(r->body, "diff", diff_view(diff));
		goto out;
	}
	if (dry || (!nadd && !nchg && !ndel)) {
		json_object_set_new(ans, "dry_run", json_boolean(dry));
		json_object_set_new(ans, "change", json_null());
		r->status = MHD_HTTP_OK;
		r->body = ans;
		goto out;
	}
	if (wdb_apply_write(env->db, t, diff, want, &e)) {
		json_decref(ans);
		check_error(&e, r);
		goto out;
	}
	char what[1200];
	snprintf(what, sizeof(what), "apply %s (+%zu ~%zu -%zu)", DOC_NAME, nadd, nchg,
	         ndel);
	int64_t change = api_commit(env, t, what, r);
	t = NULL;              /* committed or, on error, aborted */
	if (change < 0) {
		json_decref(ans);
		goto out;
	}
	json_object_set_new(ans, "dry_run", json_false());
	json_object_set_new(ans, "change", json_integer((json_int_t)change));
	json_object_set_new(ans, "what", json_string(what));
	r->status = MHD_HTTP_OK;
	r->body = ans;
out:
	if (t)
		wdb_abort(t);
	for (int k = 0; k < 3; k++) {
		json_decref(have[k]);
		json_decref(want[k]);
	}
	json_decref(diff);
	json_decref(warnings);
	json_decref(b);
}

int api_put_route(const api_env_t *env, const api_req_t *q, api_resp_t *r)
{
	const char *p = q->path + 4;   /* after "/v1/" */
	if (strcmp(p, "apply") == 0) {
		if (strcmp(q->method, "POST") == 0)
			post_apply(env, q, r);
		else
			api_error(r, MHD_HTTP_METHOD_NOT_ALLOWED, NULL, "%s %s: apply is "
			          "POST", q->method, q->path);
		return 1;
	}
	if (strcmp(q->method, "PUT") != 0)
		return 0;
	const char *slash = strchr(p, '/');
	if (!slash || !slash[1] || strchr(slash + 1, '/'))
		return 0;
	for (int k = 0; k < 3; k++)
		if (strlen(wdb_doc_lists[k]) == (size_t)(slash - p) &&
		    strncmp(p, wdb_doc_lists[k], (size_t)(slash - p)) == 0) {
			put_one(env, q, k, slash + 1, r);
			return 1;
		}
	return 0;
}
