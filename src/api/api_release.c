/* SPDX-License-Identifier: MIT */
/* The HTTP API's gray releases (S4-10): /v1/releases lists them,
 * /v1/releases/SERVICE shows one with what its guards observe, and POST
 * /v1/releases/SERVICE/start starts one and /pause, /resume and /abort
 * change its state, with
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
	wdb_txn_t *t = api_begin_read(env, r);
	if (!t)
		return;
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

/* Text @v of body key @k into @buf (@size bytes): a string as it is, a
 * number as written, an array of numbers joined by commas (steps);
 * NULL for none, -1 with the error (400) in @r for another value. */
static int text_of(const char *k, json_t *v, char *buf, size_t size,
                   const char **out, api_resp_t *r)
{
	*out = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (json_is_string(v)) {
		*out = json_string_value(v);
		return 0;
	}
	size_t len = 0, i;
	json_t *e;
	if (json_is_number(v)) {
		snprintf(buf, size, "%.17g", json_number_value(v));
	} else if (json_is_array(v) && json_array_size(v)) {
		*buf = '\0';
		json_array_foreach(v, i, e) {
			if (!json_is_number(e))
				goto bad;
			len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%.17g",
			                        i ? "," : "", json_number_value(e));
		}
	} else {
		goto bad;
	}
	*out = buf;
	return 0;
bad:
	api_error(r, MHD_HTTP_BAD_REQUEST, k, "%s: must be a %s", k,
	          strcmp(k, "steps") == 0 ? "list of percentages" : "string or a number");
	return -1;
}

/* POST /v1/releases/SERVICE/start: gslbctl release start; operate, and
 * admin when "weight" joins the node to the rows (an operator weight). */
static void start(const api_env_t *env, const api_req_t *q, const char *name,
                  api_resp_t *r)
{
	json_t *b = api_body_object(q, r);
	if (!b)
		return;
	static const char *const keys[] = { "node", "region", "isp", "steps", "every",
		"weight", NULL };
	release_start_in_t in = { .doc = 1 };
	const char **slot[] = { &in.node, &in.region, &in.isp, &in.steps, &in.every,
		&in.weight };
	char bufs[6][400];
	const char *k;
	json_t *v;
	json_object_foreach(b, k, v) {
		int i = 0;
		while (keys[i] && strcmp(keys[i], k) != 0)
			i++;
		if (keys[i]) {
			if (text_of(k, v, bufs[i], sizeof(bufs[i]), slot[i], r))
				goto out;
		} else if (strcmp(k, "guards") == 0 && (json_is_array(v) || json_is_null(v))) {
			in.guards = json_is_array(v) ? v : NULL;
		} else {
			api_error(r, MHD_HTTP_BAD_REQUEST, k, strcmp(k, "guards") == 0 ?
			          "%s: must be a list of texts like success>=99.5" :
			          "%s: unknown key (a release has node, region, isp, steps, "
			          "every, guards and weight)", k);
			goto out;
		}
	}
	if (in.weight && !api_role_ok(q, API_ROLE_ADMIN, r))
		goto out;
	wdb_txn_t *t = api_begin_write(env, q, r);
	char what[1500], err[1500];
	const char *field;
	int rc;
	if (!t) {
		/* the error is in @r */
	} else if (!api_match_ok(q, wdb_table_generation(t), r)) {
		wdb_abort(t);
	} else if ((rc = release_start(t, name, &in, (uint32_t)q->now, what,
	                               sizeof(what), err, sizeof(err), &field))) {
		wdb_abort(t);
		api_error(r, rc == WDB_EDIT_ABSENT ? MHD_HTTP_NOT_FOUND
		          : rc == WDB_EDIT_REFUSED ? MHD_HTTP_UNPROCESSABLE_CONTENT
		          : rc == WDB_EDIT_BAD ? MHD_HTTP_BAD_REQUEST : MHD_HTTP_CONFLICT,
		          field, "%s", err);
	} else {
		int64_t id = api_commit(env, t, what, r);
		if (id >= 0) {
			r->status = MHD_HTTP_CREATED;
			r->body = json_pack("{s:I, s:s}", "change", (json_int_t)id, "what", what);
		}
	}
out:
	json_decref(b);
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
	static const char *const actions[] = { "start", "pause", "resume", "abort", NULL };
	const char *const *a = actions;
	while (action && *a && strcmp(*a, action) != 0)
		a++;
	if (action && !*a) {
		api_error(r, MHD_HTTP_NOT_FOUND, "action", "%s: not an action of a "
		          "release (start, pause, resume, abort)", action);
	} else if (!action || strcmp(q->method, "POST") != 0) {
		api_error(r, MHD_HTTP_METHOD_NOT_ALLOWED, NULL, "%s %s: not a change the "
		          "API makes (POST /v1/releases/SERVICE/start, pause, resume or "
		          "abort)", q->method, q->path);
	} else if (api_role_ok(q, API_ROLE_OPERATE, r)) {
		if (strcmp(action, "start") == 0)
			start(env, q, name, r);
		else
			change(env, q, name, action, r);
	}
	return 1;
}
