/* SPDX-License-Identifier: MIT */
/* The HTTP API's provider budgets (S3-6): GET /v1/budgets lists them
 * with their spend as gslbctl --json budget list does; PUT and DELETE
 * /v1/budgets/PROVIDER set and delete one (role admin) with the checks
 * and texts of gslbctl budget (health/budget_edit.h). */
#include "api/api_int.h"
#include "health/budget_edit.h"

#include <microhttpd.h>
#include <stdio.h>
#include <string.h>

static void get(const api_env_t *env, const api_req_t *q, api_resp_t *r)
{
	wdb_txn_t *t = api_begin_read(env, r);
	if (!t)
		return;
	r->status = MHD_HTTP_OK;
	r->body = budget_list_view(t, (uint32_t)q->now);
	wdb_abort(t);
}

/* Reads body @b ({"limit": N, "alert": N, "period": TEXT}) into @in,
 * the numbers written as text into @num (two slots of 40 bytes).
 * Returns 0, or -1 with the error (400) in @r. */
static int read_body(json_t *b, budget_in_t *in, char num[2][40], api_resp_t *r)
{
	const char *k;
	json_t *v;
	in->doc = 1;
	json_object_foreach(b, k, v) {
		int lim = strcmp(k, "limit") == 0, alert = strcmp(k, "alert") == 0;
		if (json_is_null(v))
			continue;
		if (lim || alert) {
			char *buf = num[lim ? 0 : 1];
			if (json_is_integer(v))
				snprintf(buf, 40, "%lld", (long long)json_integer_value(v));
			else if (json_is_real(v))
				snprintf(buf, 40, "%.17g", json_real_value(v));
			else {
				api_error(r, MHD_HTTP_BAD_REQUEST, k, "%s: must be a number", k);
				return -1;
			}
			*(lim ? &in->limit : &in->alert) = buf;
		} else if (strcmp(k, "period") == 0) {
			if (!json_is_string(v)) {
				api_error(r, MHD_HTTP_BAD_REQUEST, k, "%s: must be a string", k);
				return -1;
			}
			in->period = json_string_value(v);
		} else if (strcmp(k, "spent") == 0 || strcmp(k, "state") == 0) {
			continue;   /* what budget list adds: read, never written */
		} else {
			api_error(r, MHD_HTTP_BAD_REQUEST, k, "%s: unknown key (a budget has "
			          "limit, alert and period)", k);
			return -1;
		}
	}
	return 0;
}

/* PUT (set) or DELETE of the budget of provider @name. */
static void write_one(const api_env_t *env, const api_req_t *q, const char *name,
                      int del, api_resp_t *r)
{
	json_t *b = NULL;
	budget_in_t in = { 0 };
	char num[2][40];
	if (!del && (!(b = api_body_object(q, r)) || read_body(b, &in, num, r))) {
		json_decref(b);
		return;
	}
	wdb_txn_t *t = api_begin_write(env, q, r);
	char what[300], err[600];
	const char *field = "provider";
	int rc;
	if (!t) {
		/* the error is in @r */
	} else if (!api_match_ok(q, wdb_table_generation(t), r)) {
		wdb_abort(t);
	} else if ((rc = del ? budget_delete(t, name, what, sizeof(what), err, sizeof(err))
	                     : budget_set(t, name, &in, what, sizeof(what), err,
	                                  sizeof(err), &field))) {
		wdb_abort(t);
		api_error(r, rc == WDB_EDIT_ABSENT ? MHD_HTTP_NOT_FOUND
		          : rc == WDB_EDIT_BAD ? MHD_HTTP_BAD_REQUEST : MHD_HTTP_CONFLICT,
		          rc == WDB_EDIT_STORE ? NULL : field ? field : "provider", "%s", err);
	} else {
		int64_t id = api_commit(env, t, what, r);
		if (id >= 0) {
			r->status = MHD_HTTP_OK;
			r->body = json_pack("{s:I, s:s}", "change", (json_int_t)id, "what", what);
		}
	}
	json_decref(b);
}

int api_budget_route(const api_env_t *env, const api_req_t *q, api_resp_t *r)
{
	const char *p = q->path + 4;   /* after "/v1/" */
	if (strncmp(p, "budgets", 7) != 0 || (p[7] && p[7] != '/'))
		return 0;
	const char *name = p[7] ? p + 8 : NULL;
	int read = strcmp(q->method, "GET") == 0 || strcmp(q->method, "HEAD") == 0;
	if (name && (!*name || strchr(name, '/'))) {
		api_error(r, MHD_HTTP_NOT_FOUND, NULL, "%s: no such resource", q->path);
	} else if (read && !name) {
		get(env, q, r);
	} else if (name && (strcmp(q->method, "PUT") == 0 ||
	                    strcmp(q->method, "DELETE") == 0)) {
		if (api_role_ok(q, API_ROLE_ADMIN, r))
			write_one(env, q, name, strcmp(q->method, "DELETE") == 0, r);
	} else {
		api_error(r, MHD_HTTP_METHOD_NOT_ALLOWED, NULL, "%s %s: not a request of "
		          "budgets (GET /v1/budgets; PUT or DELETE /v1/budgets/PROVIDER)",
		          q->method, q->path);
	}
	return 1;
}
