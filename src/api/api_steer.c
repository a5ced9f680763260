/* SPDX-License-Identifier: MIT */
/* The HTTP API's steering: GET /v1/steer/SERVICE shows each row as
 * gslbctl --json steer show does, and the release of pinned shares
 * (S3-8), POST
 * /v1/steer/SERVICE/unpin, with an optional body {"region": R, "isp":
 * I} naming one row (else every pinned row of the service), hands the
 * rows back to the steering engine as gslbctl steer unpin does
 * (steer/steer_edit.h).  Role operate: like a drain, it changes no
 * operator weight. */
#include "api/api_int.h"
#include "health/push.h"
#include "steer/steer_edit.h"

#include <microhttpd.h>
#include <stdio.h>
#include <string.h>

/* Reads the optional body @q into *@region and *@isp (pointing into
 * *@b, which the caller frees).  Returns 0, or -1 with the error (400)
 * in @r. */
static int read_body(const api_req_t *q, json_t **b, const char **region,
                     const char **isp, api_resp_t *r)
{
	*b = NULL;
	if (strspn(q->body, " \t\r\n") == q->body_len)
		return 0;   /* no body: every pinned row */
	if (!(*b = api_body_object(q, r)))
		return -1;
	const char *k;
	json_t *v;
	json_object_foreach(*b, k, v) {
		int reg = strcmp(k, "region") == 0;
		if (!reg && strcmp(k, "isp") != 0) {
			api_error(r, MHD_HTTP_BAD_REQUEST, k, "%s: unknown key (a row is named "
			          "by region and isp)", k);
			return -1;
		}
		const char *s = json_string_value(v);
		if (!s || (strcmp(s, "*") != 0 && !push_valid_word(s, 0))) {
			api_error(r, MHD_HTTP_BAD_REQUEST, k, "%s: a short lowercase name like "
			          "%s, or *", k, reg ? "cn-gd" : "ctcc");
			return -1;
		}
		*(reg ? region : isp) = s;
	}
	return 0;
}

static void unpin(const api_env_t *env, const api_req_t *q, const char *svc,
                  api_resp_t *r)
{
	json_t *b, *keys;
	const char *region = NULL, *isp = NULL;
	if (read_body(q, &b, &region, &isp, r)) {
		json_decref(b);
		return;
	}
	wdb_txn_t *t = api_begin_write(env, q, r);
	char what[1500], err[1500];
	int rc;
	if (!t) {
		/* the error is in @r */
	} else if (!api_match_ok(q, wdb_table_generation(t), r)) {
		wdb_abort(t);
	} else if ((rc = steer_unpin_rows(t, svc, region, isp, &keys, what,
	                                  sizeof(what), err, sizeof(err)))) {
		wdb_abort(t);
		api_error(r, rc == WDB_EDIT_ABSENT ? MHD_HTTP_NOT_FOUND
		          : rc == WDB_EDIT_REFUSED ? MHD_HTTP_UNPROCESSABLE_CONTENT
		          : MHD_HTTP_CONFLICT, rc == WDB_EDIT_ABSENT ? "service" : NULL,
		          "%s", err);
	} else {
		int64_t id = api_commit(env, t, what, r);
		if (id >= 0) {
			r->status = MHD_HTTP_OK;
			r->body = json_pack("{s:I, s:s, s:O}", "change", (json_int_t)id,
			                    "what", what, "unpinned", keys);
		}
		json_decref(keys);
	}
	json_decref(b);
}

/* GET /v1/steer/SERVICE: as gslbctl --json steer show gives it. */
static void show(const api_env_t *env, const api_req_t *q, const char *svc,
                 api_resp_t *r)
{
	wdb_txn_t *t = api_begin_read(env, r);
	if (!t)
		return;
	json_t *rows;
	char err[2500];
	int rc = steer_service_view(t, &env->steer, svc, (uint32_t)q->now, &rows, err,
	                            sizeof(err));
	wdb_abort(t);
	if (rc) {
		api_error(r, rc == WDB_EDIT_ABSENT ? MHD_HTTP_NOT_FOUND
		          : MHD_HTTP_UNPROCESSABLE_CONTENT, "service", "%s", err);
		return;
	}
	r->status = MHD_HTTP_OK;
	r->body = rows;
}

int api_steer_route(const api_env_t *env, const api_req_t *q, api_resp_t *r)
{
	const char *p = q->path + 4;   /* after "/v1/" */
	if (strncmp(p, "steer/", 6) != 0)
		return 0;
	const char *s = p + 6, *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	char svc[1100];
	if (!n || n >= sizeof(svc) || (slash && strcmp(slash, "/unpin") != 0)) {
		api_error(r, MHD_HTTP_NOT_FOUND, NULL, "%s: no such resource (GET "
		          "/v1/steer/SERVICE, POST /v1/steer/SERVICE/unpin)", q->path);
		return 1;
	}
	snprintf(svc, sizeof(svc), "%.*s", (int)n, s);
	int read = strcmp(q->method, "GET") == 0 || strcmp(q->method, "HEAD") == 0;
	if (!slash && read)
		show(env, q, svc, r);
	else if (!slash || strcmp(q->method, "POST") != 0)
		api_error(r, MHD_HTTP_METHOD_NOT_ALLOWED, NULL, "%s %s: not a request of "
		          "steering (GET /v1/steer/SERVICE, POST /v1/steer/SERVICE/unpin)",
		          q->method, q->path);
	else if (api_role_ok(q, API_ROLE_OPERATE, r))
		unpin(env, q, svc, r);
	return 1;
}
