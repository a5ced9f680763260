/* SPDX-License-Identifier: MIT */
/* libFuzzer target: any bytes as one HTTP API request, through the
 * functions the server calls for it (api/api_int.h): api_authorize() on
 * its Authorization header, then api_route() against a weight store in
 * a temporary directory.  Every answer must be a 2xx or 4xx with a JSON
 * object as its body, and a 4xx's an {"error": TEXT, "field": ...}: a
 * bad request is the client's fault, never a 5xx, whatever it holds.
 * Built by `make fuzz`; the corpus (tests/fuzz/corpus-api) is replayed,
 * and mutated GSLB_FUZZ_MUTATE times, by `make check` (replay.c).
 *
 * The input is lines: METHOD, PATH, If-Match (empty: none),
 * Authorization (empty: none), then the body (the rest, any bytes).
 * The store holds a small table and tokens "Bearer r" (read), "Bearer
 * o" (operate), "Bearer a" (admin), "Bearer x" (expired) and "Bearer v"
 * (revoked); writes change it, so it is made anew every REBUILD inputs
 * to keep the objects the requests name. */
#include "api/api_int.h"
#include "common/log.h"
#include "common/util.h"
#include "../unit/store_fixture.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define REBUILD 200

static char dir[PATH_MAX];
static weightdb_t *db;
static unsigned inputs;

static const char table[] =
	"{\"services\": [{\"name\": \"www.gslb.test\", \"ttl\": 60},"
	"                {\"name\": \"img.gslb.test\", \"ttl\": 60}],"
	" \"nodes\": [{\"id\": \"a\", \"addrs\": [\"192.0.2.1\"],"
	"              \"provider\": \"cdn-a\", \"cost_per_gb\": 0.5},"
	"             {\"id\": \"b\", \"addrs\": [\"192.0.2.2\"]},"
	"             {\"id\": \"c\", \"addrs\": [\"192.0.2.3\"]}],"
	" \"weights\": [{\"service\": \"www.gslb.test\", \"region\": \"cn-gz\","
	"                \"isp\": \"ctcc\", \"weights\": {\"a\": 10, \"b\": 5}},"
	"              {\"service\": \"www.gslb.test\", \"region\": \"*\","
	"                \"isp\": \"*\", \"weights\": {\"a\": 10}},"
	"              {\"service\": \"img.gslb.test\", \"region\": \"*\","
	"                \"isp\": \"*\", \"weights\": {\"c\": 10}}]}";

static void die(const char *what, const char *err)
{
	fprintf(stderr, "fuzz: %s: %s\n", what, err);
	abort();
}

static void cleanup(void)
{
	weightdb_close(db);
	db = NULL;
	if (dir[0])
		fx_rmrf(dir);
}

/* The store, anew: the table and the tokens. */
static void build(void)
{
	char err[512];
	weightdb_close(db);
	if (dir[0])
		fx_rmrf(dir);
	if (fx_mkdtemp(dir, "fuzz-api"))
		die("mkdtemp", strerror(errno));
	if (!(db = fx_store(dir, table)))
		die("store", "cannot build");
	wdb_txn_t *t = wdb_begin(db, "test:fixture", err, sizeof(err));
	if (!t)
		die("store", err);
	static const struct { const char *name, *tok; api_role_t role; int64_t exp; }
	toks[] = {
		{ "reader", "r", API_ROLE_READ, 0 }, { "feeder", "o", API_ROLE_OPERATE, 0 },
		{ "boss", "a", API_ROLE_ADMIN, 0 }, { "old", "x", API_ROLE_ADMIN, 1 },
		{ "gone", "v", API_ROLE_ADMIN, 0 },
	};
	for (size_t i = 0; i < sizeof(toks) / sizeof(toks[0]); i++) {
		json_t *rec = api_token_record(toks[i].tok, toks[i].role, 1, toks[i].exp);
		if (strcmp(toks[i].name, "gone") == 0)
			json_object_set_new(rec, "revoked", json_integer(1));
		wdb_set(t, WDB_APITOKEN, toks[i].name, rec);
		json_decref(rec);
	}
	if (wdb_commit(t, "tokens", err, sizeof(err)) < 0)
		die("tokens", err);
}

/* The next line of [*@p, @end) into a new string (NULL for an empty
 * line when @empty_null); *@p moves past it. */
static char *line(const uint8_t **p, const uint8_t *end, int empty_null)
{
	const uint8_t *nl = memchr(*p, '\n', (size_t)(end - *p));
	size_t n = (size_t)((nl ? nl : end) - *p);
	char *s = NULL;
	if (n || !empty_null) {
		s = xmalloc(n + 1);
		memcpy(s, *p, n);
		s[n] = 0;
	}
	*p = nl ? nl + 1 : end;
	return s;
}

/* Dies unless @r is a 2xx or 4xx with a JSON object (4xx: with the
 * error's text and field). */
static void check(const api_resp_t *r, const char *method, const char *path)
{
	int ok = r->body && json_is_object(r->body) &&
	         ((r->status >= 200 && r->status < 300) ||
	          (r->status >= 400 && r->status < 500));
	if (ok && r->status >= 400) {
		json_t *f = json_object_get(r->body, "field");
		ok = json_is_string(json_object_get(r->body, "error")) &&
		     (json_is_null(f) || json_is_string(f));
	}
	char *text = r->body ? json_dumps(r->body, JSON_INDENT(2) | JSON_SORT_KEYS) : NULL;
	if (!ok || !text) {
		fprintf(stderr, "fuzz: %s %s: status %u, body %s\n", method, path,
		        r->status, text ? text : "(none)");
		abort();
	}
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!db || inputs++ % REBUILD == 0) {
		if (!db) {
			log_set_level(GSLB_LOG_ERR);
			atexit(cleanup);
		}
		build();
	}
	const uint8_t *p = data, *end = data + size;
	char *method = line(&p, end, 0), *path = line(&p, end, 0);
	char *if_match = line(&p, end, 1), *auth = line(&p, end, 1);
	size_t blen = (size_t)(end - p);
	char *body = xmalloc(blen + 1);
	memcpy(body, p, blen);
	body[blen] = 0;
	api_env_t env = { .db = db, .settle = 30, .keep = 900, .skew = 60 };
	api_resp_t r = { 0, NULL, 0, 0 };
	char name[API_TOKEN_NAME_MAX + 1] = "";
	int64_t now = 1800000000;
	api_role_t role = api_authorize(&env, auth, now, name, &r);
	if (role != API_ROLE_NONE) {
		api_req_t q = {
			.method = method, .path = path, .if_match = if_match, .body = body,
			.body_len = blen, .role = role, .user = name, .host = "192.0.2.99",
			.now = now,
		};
		api_route(&env, &q, &r);
	}
	check(&r, method, path);
	json_decref(r.body);
	free(method);
	free(path);
	free(if_match);
	free(auth);
	free(body);
	return 0;
}
