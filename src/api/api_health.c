/* SPDX-License-Identifier: MIT */
/* The HTTP API's health view: GET /v1/health[?service=NAME] answers the
 * nodes and weight rows of gslbctl --json status [NAME] (store/status.h):
 * each node's health decision, live status and score, each row's
 * configured and effective weights. */
#include "api/api_int.h"
#include "store/apply.h"
#include "store/status.h"

#include <microhttpd.h>
#include <stdio.h>
#include <string.h>

static void health(const api_env_t *env, const api_req_t *q, api_resp_t *r)
{
	const char *given = q->arg ? q->arg(q, "service") : NULL;
	char name[1100] = "";
	wdb_apply_err_t e;
	if (given && wdb_service_name(env->conf ? *env->conf : NULL, given, name,
	                              sizeof(name), &e)) {
		api_error(r, MHD_HTTP_BAD_REQUEST, "service", "%s", e.msg);
		return;
	}
	wdb_txn_t *t = api_begin_read(env, r);
	if (!t)
		return;
	json_t *svc = *name ? wdb_get(t, WDB_SERVICE, name) : NULL;
	if (*name && !svc) {
		api_error(r, MHD_HTTP_NOT_FOUND, "service", "service %s does not exist",
		          name);
	} else {
		r->status = MHD_HTTP_OK;
		r->body = wdb_status_view(env->db, t, name);
	}
	json_decref(svc);
	wdb_abort(t);
}

int api_health_route(const api_env_t *env, const api_req_t *q, api_resp_t *r)
{
	if (strcmp(q->path, "/v1/health") != 0)
		return 0;
	if (strcmp(q->method, "GET") != 0 && strcmp(q->method, "HEAD") != 0)
		api_error(r, MHD_HTTP_METHOD_NOT_ALLOWED, NULL, "%s /v1/health: the "
		          "health view only reads (GET)", q->method);
	else
		health(env, q, r);
	return 1;
}
