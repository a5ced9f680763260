/* SPDX-License-Identifier: MIT */
/* The HTTP API's explain: GET /v1/explain?service=NAME&client=IP[/LEN]
 * [&type=T] answers why that client gets the answer it gets, as
 * gslbctl --json explain NAME --client IP[/LEN] [--type T] does
 * (dns/explain.h), from the snapshot the workers answer from.  IP/LEN
 * is sent as a Client Subnet option, a bare IP is the resolver. */
#include "api/api_int.h"
#include "dns/explain.h"
#include "steer/steer_edit.h"

#include <ldns/ldns.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* explain_json()'s steering view of a row. */
static json_t *steer_row(void *arg, wdb_txn_t *t, const char *key)
{
	const api_env_t *env = arg;
	return steer_row_view(t, &env->steer, key, (uint32_t)time(NULL));
}

static void explain(const api_env_t *env, const api_req_t *q, api_resp_t *r)
{
	const char *name = q->arg ? q->arg(q, "service") : NULL;
	const char *client = q->arg ? q->arg(q, "client") : NULL;
	const char *type = q->arg ? q->arg(q, "type") : NULL;
	char err[1300];
	explain_ask_t *a = calloc(1, sizeof(*a));
	explain_run_t *run = calloc(1, sizeof(*run));
	const snapshot_t *snap = env->snapshot ? env->snapshot() : NULL;
	uint16_t qtype = type ? (uint16_t)ldns_get_rr_type_by_name(type) : RR_A;
	if (a)
		a->qtype = qtype;
	if (!a || !run) {
		api_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "out of memory: try again");
	} else if (!name || !*name) {
		api_error(r, MHD_HTTP_BAD_REQUEST, "service", "give the name to explain: "
		          "?service=NAME&client=IP[/LEN]");
	} else if (!client || !*client) {
		api_error(r, MHD_HTTP_BAD_REQUEST, "client", "give the client: "
		          "?client=IP[/LEN] (IP/LEN is sent as a Client Subnet option)");
	} else if (explain_name(name, a, err, sizeof(err))) {
		api_error(r, MHD_HTTP_BAD_REQUEST, "service", "%s", err);
	} else if (!qtype) {
		/* gslbctl's words for its option. */
		api_error(r, MHD_HTTP_BAD_REQUEST, "type", "--type %s: not a record type "
		          "(A, AAAA, MX...)", type);
	} else if (explain_client(client, a, err, sizeof(err))) {
		api_error(r, MHD_HTTP_BAD_REQUEST, "client", "%s", err);
	} else if (!snap) {
		api_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "no zones loaded yet: try "
		          "again");
	} else if (explain_run(a, NULL, snap, env->db, run, err, sizeof(err))) {
		api_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "%s", err);
	} else {
		r->status = MHD_HTTP_OK;
		r->body = explain_json(a, run, steer_row, (void *)env);
	}
	if (run)
		explain_run_free(run);
	free(run);
	free(a);
}

int api_explain_route(const api_env_t *env, const api_req_t *q, api_resp_t *r)
{
	if (strcmp(q->path, "/v1/explain") != 0)
		return 0;
	if (strcmp(q->method, "GET") != 0 && strcmp(q->method, "HEAD") != 0)
		api_error(r, MHD_HTTP_METHOD_NOT_ALLOWED, NULL, "%s /v1/explain: explain "
		          "only reads (GET)", q->method);
	else
		explain(env, q, r);
	return 1;
}
