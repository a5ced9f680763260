/* SPDX-License-Identifier: MIT */
/* Between the API's server (api.c) and its resources (api_res.c). */
#ifndef GSLB_API_INT_H
#define GSLB_API_INT_H

#include <jansson.h>
#include <stdint.h>

#include "api/api.h"
#include "api/token.h"

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

/** Runs request @q against the store of @env into @r. */
void api_route(const api_env_t *env, const api_req_t *q, api_resp_t *r);

#endif
