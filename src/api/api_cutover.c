/* SPDX-License-Identifier: MIT */
/* The HTTP API's cutover windows (S0-2): /v1/cutovers lists them and
 * announces one (POST), /v1/cutovers/ID shows and withdraws one, with
 * the checks and texts of gslbctl cutover (health/cutover_edit.h). */
#include "api/api_int.h"
#include "health/cutover_edit.h"
#include "store/apply.h"

#include <microhttpd.h>
#include <stdio.h>
#include <string.h>

static int collect(const char *key, json_t *val, void *arr)
{
	(void)key;
	json_array_append(arr, val);
	return 0;
}

/* GET /v1/cutovers and /v1/cutovers/ID: as gslbctl --json cutover list
 * and show give them. */
static void get(const api_env_t *env, const api_req_t *q, const char *id,
                api_resp_t *r)
{
	wdb_txn_t *t = api_begin_read(env, r);
	if (!t)
		return;
	if (id) {
		json_t *w = wdb_get(t, WDB_CUTOVER, id);
		if (w) {
			r->status = MHD_HTTP_OK;
			r->body = json_pack("{s:o}", "cutover",
			                    cutover_window_view(&env->cut, w, q->now));
			json_decref(w);
		} else {
			api_error(r, MHD_HTTP_NOT_FOUND, "id", "cutover %s does not exist", id);
		}
	} else {
		json_t *all = json_array(), *views = json_array(), *w;
		size_t i;
		wdb_each(t, WDB_CUTOVER, NULL, collect, all);
		json_array_foreach(all, i, w)
			json_array_append_new(views, cutover_window_view(&env->cut, w, q->now));
		json_decref(all);
		r->status = MHD_HTTP_OK;
		r->body = json_pack("{s:o}", "cutovers", views);
	}
	wdb_abort(t);
}

/* The keys of a new window's body and their kinds: s a string, n a
 * number, a an array of node ids. */
static const struct {
	const char *key;
	char kind;
} body_keys[] = {
	{ "region", 's' }, { "isp", 's' }, { "nodes", 'a' }, { "start", 's' },
	{ "end", 's' }, { "impact", 's' }, { "derate_pct", 'n' },
	{ "prewarm_pct", 'n' }, { "note", 's' },
};

/* Reads body @b into @in (its strings point into @b; the numbers are
 * written as text into @num, two slots of 32 bytes), so that
 * cutover_window_add() checks them as it checks gslbctl's options.
 * Returns 0, or -1 with the error (400) in @r. */
static int read_body(json_t *b, cutover_add_t *in, char num[2][32],
                     api_resp_t *r)
{
	const char **slot[] = { &in->region, &in->isp, NULL, &in->start, &in->end,
		&in->impact, &in->derate, &in->prewarm, &in->note };
	const char *k;
	json_t *v;
	in->doc = 1;
	json_object_foreach(b, k, v) {
		size_t i = 0, n = sizeof(body_keys) / sizeof(body_keys[0]);
		while (i < n && strcmp(k, body_keys[i].key) != 0)
			i++;
		if (i == n) {
			api_error(r, MHD_HTTP_BAD_REQUEST, k, "%s: unknown key (a window "
			          "has region, isp, nodes, start, end, impact, derate_pct, "
			          "prewarm_pct and note)", k);
			return -1;
		}
		if (json_is_null(v))
			continue;      /* as if not given */
		switch (body_keys[i].kind) {
		case 's':
			if (!json_is_string(v)) {
				api_error(r, MHD_HTTP_BAD_REQUEST, k, "%s: must be a string", k);
				return -1;
			}
			*slot[i] = json_string_value(v);
			break;
		case 'n': {
			char *buf = num[slot[i] == &in->derate ? 0 : 1];
			if (json_is_integer(v))
				snprintf(buf, 32, "%lld", (long long)json_integer_value(v));
			else if (json_is_real(v))
				snprintf(buf, 32, "%g", json_real_value(v));
			else {
				api_error(r, MHD_HTTP_BAD_REQUEST, k, "%s: must be a number", k);
				return -1;
			}
			*slot[i] = buf;
			break;
		}
		default:
			if (!json_is_array(v)) {
				api_error(r, MHD_HTTP_BAD_REQUEST, k, "%s: must be an array of "
				          "node ids", k);
				return -1;
			}
			in->nodes = v;
		}
	}
	return 0;
}

/* cutover_window_add()'s area check: the ISP name against the names
 * of the store's nodes and rows and of the geoip sources the daemon
 * serves, as PUT checks a row's (store/apply.h), without the "cutover
 * add: " the other texts leave out too. */
static int check_area(void *arg, wdb_txn_t *t, const char *cmd, int isp,
                      const char *v, char *err, size_t errlen)
{
	const api_env_t *env = arg;
	wdb_apply_opts_t op = { .conf = env->conf ? *env->conf : NULL };
	wdb_area_known_t k;
	wdb_apply_err_t e;
	json_t *warnings = json_array();
	wdb_area_known_init(t, &k);
	if (env->area_names)
		env->area_names(&k);
	int rc = wdb_area_check(&op, &k, cmd, isp, v, warnings, &e);
	wdb_area_known_free(&k);
	json_decref(warnings);
	if (!rc)
		return 0;
	size_t pl = strlen(cmd);
	snprintf(err, errlen, "%s", strncmp(e.msg, cmd, pl) == 0 && e.msg[pl] == ':'
	         ? e.msg + pl + 2 : e.msg);
	return -1;
}

/* The status of a class of store/edit.h. */
static unsigned status_of(int rc)
{
	return rc == WDB_EDIT_ABSENT ? MHD_HTTP_NOT_FOUND
	     : rc == WDB_EDIT_REFUSED ? MHD_HTTP_UNPROCESSABLE_CONTENT
	     : rc == WDB_EDIT_BAD ? MHD_HTTP_BAD_REQUEST : MHD_HTTP_CONFLICT;
}

/* POST /v1/cutovers: gslbctl cutover add.  201 with the new window, or
 * 200 when the very same window exists already (nothing written). */
static void add(const api_env_t *env, const api_req_t *q, api_resp_t *r)
{
	json_t *b = api_body_object(q, r);
	if (!b)
		return;
	cutover_add_t in = { 0 };
	char num[2][32];
	wdb_txn_t *t = NULL;
	if (read_body(b, &in, num, r) || !(t = api_begin_write(env, q, r))) {
		json_decref(b);
		return;
	}
	char id[32], what[300], err[600];
	const char *field;
	int rc;
	if (!api_match_ok(q, wdb_table_generation(t), r)) {
		wdb_abort(t);
	} else if ((rc = cutover_window_add(t, &env->cut, &in, (time_t)q->now, check_area,
	                                    (void *)env, id, sizeof(id), what, sizeof(what), err,
	                                    sizeof(err), &field))) {
		wdb_abort(t);
		api_error(r, status_of(rc), field, "%s", err);
	} else {
		json_t *w = wdb_get(t, WDB_CUTOVER, id);
		json_t *view = w ? cutover_window_view(&env->cut, w, q->now) : json_null();
		json_decref(w);
		if (!*what) {
			wdb_abort(t);
			r->status = MHD_HTTP_OK;
			r->body = json_pack("{s:n, s:s, s:s, s:o}", "change", "id", id,
			                    "message", err, "cutover", view);
		} else {
			int64_t change = api_commit(env, t, what, r);
			if (change >= 0) {
				r->status = MHD_HTTP_CREATED;
				r->body = json_pack("{s:I, s:s, s:s, s:o}", "change",
				                    (json_int_t)change, "id", id, "what", what,
				                    "cutover", view);
			} else {
				json_decref(view);
			}
		}
	}
	json_decref(b);
}

/* DELETE /v1/cutovers/ID: gslbctl cutover del. */
static void del(const api_env_t *env, const api_req_t *q, const char *id,
                api_resp_t *r)
{
	wdb_txn_t *t = api_begin_write(env, q, r);
	if (!t)
		return;
	char what[100], err[300];
	int rc;
	if (!api_match_ok(q, wdb_table_generation(t), r)) {
		wdb_abort(t);
	} else if ((rc = cutover_window_delete(t, id, what, sizeof(what), err,
	                                       sizeof(err)))) {
		wdb_abort(t);
		api_error(r, status_of(rc), "id", "%s", err);
	} else {
		int64_t change = api_commit(env, t, what, r);
		if (change >= 0) {
			r->status = MHD_HTTP_OK;
			r->body = json_pack("{s:I, s:s}", "change", (json_int_t)change,
			                    "what", what);
		}
	}
}

int api_cutover_route(const api_env_t *env, const api_req_t *q, api_resp_t *r)
{
	const char *p = q->path + 4;   /* after "/v1/" */
	if (strncmp(p, "cutovers", 8) != 0 || (p[8] && p[8] != '/'))
		return 0;
	const char *id = p[8] ? p + 9 : NULL;
	if (id && (!*id || strchr(id, '/'))) {
		api_error(r, MHD_HTTP_NOT_FOUND, NULL, "%s: no such resource", q->path);
		return 1;
	}
	int read = strcmp(q->method, "GET") == 0 || strcmp(q->method, "HEAD") == 0;
	if (read) {
		get(env, q, id, r);
	} else if (!id && strcmp(q->method, "POST") == 0) {
		if (api_role_ok(q, API_ROLE_ADMIN, r))
			add(env, q, r);
	} else if (id && strcmp(q->method, "DELETE") == 0) {
		if (api_role_ok(q, API_ROLE_ADMIN, r))
			del(env, q, id, r);
	} else {
		/* The store names a new window (never reusing the id of one
		 * deleted since): a window is announced by POST to the list
		 * and changed by withdrawing it and announcing another. */
		api_error(r, MHD_HTTP_METHOD_NOT_ALLOWED, NULL, "%s %s: not a change the "
		          "API makes (announce a window with POST /v1/cutovers, withdraw "
		          "one with DELETE /v1/cutovers/ID)", q->method, q->path);
	}
	return 1;
}
