/* SPDX-License-Identifier: MIT */
/* The HTTP API's gray releases (S4-10): /v1/releases lists them,
 * /v1/releases/SERVICE shows one with what its guards observe, and POST
 * /v1/releases/SERVICE/pause, /resume and /abort change its state, with
 * the checks and texts of gslbctl release (steer/release_edit.h).  A
 * release is named by its service, as on gslbctl's command line. */
#include "api/api_int.h"
#include "steer/release_edit.h"

#include <microhttpd.h>
#include <stdio.h>
#include <string.h>

/* GET /v1/releases[/SERVICE]: as gslbctl --json release list and show
 * give them. */
static void get(const api_env_t *env, const api_req_t *q, const char *name,
                api_resp_t *r)
{
	wdb_txn_t *t = wdb_begin_read(env->db);
	if (!t) {
		api_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "store busy: try again");
		return;
	}
	r->generation = wdb_table_generation(t);
	r->has_gen = 1;
	if (!name) {
		r->status = MHD_HTTP_OK;
		r->body = json_pack("{s:o}", "releases", release_views(t, NULL));
		wdb_abort(t);
		return;
	}
	json_t *svc = wdb_get(t, WDB_SERVICE, name);
	json_t *rel = json_object_get(svc, "release");
	if (!rel) {
		api_error(r, MHD_HTTP_NOT_FOUND, "service", svc ? "service %s has no "
		          "release" : "service %s does not exist", name);
	} else {
		json_t *v = release_view(name, rel);
		json_object_set_new(v, "observed", release_observed(t, &env->steer, rel,
		                                                    (uint32_t)q->now));
		r->status = MHD_HTTP_OK;
		r->body = json_pack("{s:o}", "release", v);
	}
	json_decref(svc);
	wdb_abort(t);
}

/* POST /v1/releases/SERVICE/ACTION: operate. */
static void change(const api_env_t *env, const api_req_t *q, const char *name,
                   const char *action, api_resp_t *r)
{
	wdb_txn_t *t = api_begin_write(env, q, r);
	if (!t)
		return;
	char what[1300], err[1300];
	int rc;
	if (!api_match_ok(q, wdb_table_generation(t), r)) {
		wdb_abort(t);
	} else if ((rc = release_set_state(t, action, name, (uint32_t)q->now, what,
	                                   sizeof(what), err, sizeof(err)))) {
		wdb_abort(t);
		api_error(r, rc == WDB_EDIT_ABSENT ? MHD_HTTP_NOT_FOUND
		          : rc == WDB_EDIT_REFUSED ? MHD_HTTP_UNPROCESSABLE_CONTENT
		          : MHD_HTTP_CONFLICT, rc == WDB_EDIT_STORE ? NULL : "service",
		          "%s", err);
	} else {
		int64_t id = api_commit(env, t, what, r);
		if (id >= 0) {
			r->status = MHD_HTTP_OK;
			r->body = json_pack("{s:I, s:s}", "change", (json_int_t)id, "what", what);
		}
	}
}

int api_release_route(const api_env_t *env, const api_req_t *q, api_resp_t *r)
{
	const char *p = q->path + 4;   /* after "/v1/" */
	if (strncmp(p, "releases", 8) != 0 || (p[8] && p[8] != '/'))
		return 0;
	char name[1100] = "";
	const char *action = NULL;
	if (p[8]) {
		const char *s = p + 9, *slash = strchr(s, '/');
		size_t n = slash ? (size_t)(slash - s) : strlen(s);
		if (!n || n >= sizeof(name) || (slash && (!slash[1] || strchr(slash + 1, '/')))) {
			api_error(r, MHD_HTTP_NOT_FOUND, NULL, "%s: no such resource", q->path);
			return 1;
		}
		memcpy(name, s, n);
		name[n] = '\0';
		action = slash ? slash + 1 : NULL;
	}
	int read = strcmp(q->method, "GET") == 0 || strcmp(q->method, "HEAD") == 0;
	if (read && !action) {
		get(env, q, *name ? name : NULL, r);
		return 1;
	}
	static const char *const actions[] = { "pause", "resume", "abort", NULL };
	const char *const *a = actions;
	while (action && *a && strcmp(*a, action) != 0)
		a++;
	if (action && !*a) {
		api_error(r, MHD_HTTP_NOT_FOUND, "action", "%s: not an action of a "
		          "release (pause, resume, abort)", action);
	} else if (!action || strcmp(q->method, "POST") != 0) {
		api_error(r, MHD_HTTP_METHOD_NOT_ALLOWED, NULL, "%s %s: not a change the "
		          "API makes (POST /v1/releases/SERVICE/pause, resume or abort; a "
		          "release is started with gslbctl release start)", q->method,
		          q->path);
	} else if (api_role_ok(q, API_ROLE_OPERATE, r)) {
		change(env, q, name, action, r);
	}
	return 1;
}
