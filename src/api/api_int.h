/* SPDX-License-Identifier: MIT */
/* Between the API's server (api.c) and its resources (api_res.c). */
#ifndef GSLB_API_INT_H
#define GSLB_API_INT_H

#include <jansson.h>
#include <stdint.h>

#include "api/api.h"
#include "api/token.h"

struct MHD_Connection;

/** One request as the resources see it. */
typedef struct api_req {
	const char *method;        /* "GET", "PATCH"... */
	const char *path;          /* the URL's path: "/v1/nodes/a" */
	const char *if_match;      /* the If-Match header, or NULL */
	const char *body;          /* NUL-terminated, "" when none */
	size_t body_len;
	api_role_t role;
	const char *user;          /* the token's name */
	const char *host;          /* the client's address */
	int64_t now;
	/* The value of URL argument @name ("?dry_run=1": "1"), "" when
	 * given without one, or NULL when not given. */
	const char *(*arg)(const struct api_req *q, const char *name);
	void *conn;                /* what arg() reads */
} api_req_t;

/** What a resource answers: the status, the body (a new reference) and
 * the generation the answer reflects (0: none). */
typedef struct api_resp {
	unsigned status;
	json_t *body;
	uint64_t generation;
	int has_gen;               /* generation is set */
} api_resp_t;

/** {"error": @msg, "field": @field or null} with @status into @r. */
void api_error(api_resp_t *r, unsigned status, const char *field,
               const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/** Begins a read of the store, the answer's generation (the table's,
 * in cluster mode the revision of the last change) set in @r; NULL with
 * the error (503) in @r. */
wdb_txn_t *api_begin_read(const api_env_t *env, api_resp_t *r);

/** The JSON object of body @q, or NULL with the error (400) in @r. */
json_t *api_body_object(const api_req_t *q, api_resp_t *r);

/** Whether If-Match (when sent) names generation @gen; else the error
 * (412) in @r.  Call it after api_begin_write(): in cluster mode the
 * generation compared is then the write transaction's (the revision of
 * the last change its store holds), whatever @gen says. */
int api_match_ok(const api_req_t *q, uint64_t gen, api_resp_t *r);

/** Begins a write as the request's token, from its client (the audit's
 * user and host); NULL with the error in @r. */
wdb_txn_t *api_begin_write(const api_env_t *env, const api_req_t *q,
                           api_resp_t *r);

/** Commits @t, described by @what: the change's id, or -1 with the
 * error in @r (@t aborted).  Every write of the API commits through
 * here.  In cluster mode the change goes to etcd (cluster_write()): the
 * id is then its cluster revision, also set as the answer's generation;
 * 503 when etcd does not answer, 409 when someone else changed the
 * table first, nothing written either way; a change of local data only
 * (pushed metrics) is committed locally. */
int64_t api_commit(const api_env_t *env, wdb_txn_t *t, const char *what,
                   api_resp_t *r);

/** Whether request @q's token has role @need or higher; else the error
 * (403) in @r. */
int api_role_ok(const api_req_t *q, api_role_t need, api_resp_t *r);

/** A resource kept in a file of its own: answers request @q into @r
 * and returns 1 when @q's path is its own, else 0 (api_route() then
 * asks the next one).  The read generation is set by api_route(). */
typedef int (*api_route_fn)(const api_env_t *env, const api_req_t *q,
                            api_resp_t *r);

/** /v1/cutovers[/ID]: the cutover windows (api_cutover.c). */
int api_cutover_route(const api_env_t *env, const api_req_t *q, api_resp_t *r);

/** /v1/rollback/CHANGE-ID (api_rollback.c). */
int api_rollback_route(const api_env_t *env, const api_req_t *q, api_resp_t *r);

/** /v1/releases[/SERVICE[/ACTION]] (api_release.c). */
int api_release_route(const api_env_t *env, const api_req_t *q, api_resp_t *r);

/** /v1/budgets[/PROVIDER] (api_budget.c). */
int api_budget_route(const api_env_t *env, const api_req_t *q, api_resp_t *r);

/** /v1/steer/SERVICE/unpin (api_steer.c). */
int api_steer_route(const api_env_t *env, const api_req_t *q, api_resp_t *r);

/** PUT of one service, node or weight row, and POST /v1/apply
 * (api_put.c). */
int api_put_route(const api_env_t *env, const api_req_t *q, api_resp_t *r);

/** GET /v1/explain?service=NAME&client=IP[/LEN][&type=T] (api_explain.c). */
int api_explain_route(const api_env_t *env, const api_req_t *q, api_resp_t *r);

/** GET /v1/health[?service=NAME]: the nodes and rows of gslbctl status
 * (api_health.c). */
int api_health_route(const api_env_t *env, const api_req_t *q, api_resp_t *r);

/** POST /v1/metrics: a batch of metric pushes (api_metrics.c). */
int api_metrics_route(const api_env_t *env, const api_req_t *q, api_resp_t *r);

/** The role of the token in Authorization header @h (NULL: none) at
 * time @now, its name into @name (API_TOKEN_NAME_MAX + 1 bytes); or
 * API_ROLE_NONE with the error (401) in @r.  The rate is not counted
 * here (api.c does). */
api_role_t api_authorize(const api_env_t *env, const char *h, int64_t now,
                         char *name, api_resp_t *r);

/* POST /v1/run (api_run.c): a gslbctl command run by the daemon, its
 * answer given when the command has ended. */
typedef struct api_runner api_runner_t;
typedef struct api_run api_run_t;

/** What a run answers, called on the main loop when it has ended; @r
 * (its body a new reference) is the callee's. */
typedef void (*api_run_done_fn)(void *arg, api_resp_t *r);

/** The commands' runner for the daemon's configuration @conf_path
 * (copied), on @loop, each command killed after @timeout seconds.  Free
 * with api_runner_stop(). */
api_runner_t *api_runner_new(uv_loop_t *loop, const char *conf_path,
                             unsigned timeout);

/** Kills what still runs; @rn goes once its last run has closed (NULL
 * allowed). */
void api_runner_stop(api_runner_t *rn);

/** Starts the command of POST /v1/run request @q (checked: its body,
 * its options, its files and the role it needs): the run, whose answer
 * comes to @done(@arg) later, or NULL with the answer (an error) in @r
 * at once. */
api_run_t *api_run_start(api_runner_t *rn, const api_req_t *q, api_resp_t *r,
                         api_run_done_fn done, void *arg);

/** Forgets @run's caller (its connection went): the command is killed,
 * @done is not called. */
void api_run_cancel(api_run_t *run);

/** /v1/run with another method than POST: 405. */
int api_run_route(const api_env_t *env, const api_req_t *q, api_resp_t *r);

/** Runs request @q against the store of @env into @r. */
void api_route(const api_env_t *env, const api_req_t *q, api_resp_t *r);

#endif
