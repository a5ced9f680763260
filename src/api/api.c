/* SPDX-License-Identifier: MIT */
/* The HTTP API's server: libmicrohttpd on the main loop, TLS, the
 * limits of the api section, the token and its rate (api.h). */
#include "api/api_int.h"
#include "common/httpd.h"
#include "common/log.h"
#include "common/util.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* A connection idle (or as slow as idle) this long is closed. */
#define API_IDLE_TIMEOUT 10
#define API_RATE_SLOTS 64

typedef struct rate_slot {
	char name[API_TOKEN_NAME_MAX + 1];
	int64_t sec;
	unsigned n;
} rate_slot_t;

_Static_assert(API_MAX_LISTEN <= HTTPD_MAX_LISTEN, "a daemon for each listen");

struct api {
	api_conf_t conf;
	api_env_t env;
	char *cert, *key;          /* PEM text, kept while served */
	httpd_set_t http;
	rate_slot_t rate[API_RATE_SLOTS];
	api_runner_t *runner;      /* POST /v1/run */
	struct conn_req *waiting;  /* connections suspended for a run */
};

/* A request being read, or waiting for its command (POST /v1/run):
 * its connection is suspended until the answer is in @resp. */
typedef struct conn_req {
	char *body;
	size_t len;
	int too_big;
	api_t *a;
	struct MHD_Connection *conn;
	api_run_t *run;            /* the command still running */
	struct conn_req *next;     /* api_t's waiting list */
	int ready;                 /* @resp is the answer to send */
	api_resp_t resp;
} conn_req_t;

/* The length of the UTF-8 sequence at @s (of @n bytes), 0 when it is
 * none (overlong, a surrogate, above U+10FFFF, or cut short). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned c = s[0];
	size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3
	             : (c & 0xf8) == 0xf0 ? 4 : 0;
	if (!len || len > n || (len == 2 && c < 0xc2))
		return len == 1 ? 1 : 0;
	unsigned cp = len == 1 ? c : c & (0x7f >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

/* Replaces in @s each byte that is not part of valid UTF-8 by '?'. */
static void utf8_clean(char *s)
{
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		size_t l = utf8_len((const unsigned char *)s + i, n - i);
		if (!l) {
			s[i++] = '?';
			continue;
		}
		i += l;
	}
}

void api_error(api_resp_t *r, unsigned status, const char *field,
               const char *fmt, ...)
{
	char msg[600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	json_decref(r->body);
	r->status = status;
	/* A text or field quoting the request (a path with a byte that is
	 * no UTF-8) is still sent, such bytes as '?': JSON holds UTF-8
	 * only. */
	char f[200];
	if (field)
		snprintf(f, sizeof(f), "%s", field);
	utf8_clean(msg);
	if (field)
		utf8_clean(f);
	r->body = json_pack("{s:s, s:o}", "error", msg,
	                    "field", field ? json_string(f) : json_null());
}

static enum MHD_Result send_resp(struct MHD_Connection *conn, api_resp_t *r)
{
	char *text = r->body ? json_dumps(r->body, JSON_INDENT(2) | JSON_SORT_KEYS)
	                     : xstrdup("{}");
	json_decref(r->body);
	size_t len = strlen(text);
	text = xrealloc(text, len + 2);
	text[len++] = '\n';
	text[len] = 0;
	struct MHD_Response *m =
		MHD_create_response_from_buffer(len, text, MHD_RESPMEM_MUST_FREE);
	if (!m) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(m, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	MHD_add_response_header(m, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (r->has_gen) {
		char etag[32];
		snprintf(etag, sizeof(etag), "\"%llu\"", (unsigned long long)r->generation);
		MHD_add_response_header(m, MHD_HTTP_HEADER_ETAG, etag);
	}
	enum MHD_Result ret = MHD_queue_response(conn, r->status, m);
	MHD_destroy_response(m);
	return ret;
}

static void client_host(struct MHD_Connection *conn, char *out, size_t size)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	snprintf(out, size, "unknown");
	if (!ci || !ci->client_addr)
		return;
	const struct sockaddr *sa = ci->client_addr;
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, out, size);
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, out, size);
}

/* Whether token @name may make one more request this second. */
static int rate_ok(api_t *a, const char *name, int64_t now)
{
	rate_slot_t *free_slot = NULL, *oldest = &a->rate[0];
	for (size_t i = 0; i < API_RATE_SLOTS; i++) {
		rate_slot_t *s = &a->rate[i];
		if (strcmp(s->name, name) == 0) {
			if (s->sec != now)
				s->sec = now, s->n = 0;
			return ++s->n <= a->conf.rate;
		}
		if (!*s->name && !free_slot)
			free_slot = s;
		if (s->sec < oldest->sec)
			oldest = s;
	}
	rate_slot_t *s = free_slot ? free_slot : oldest;
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->sec = now;
	s->n = 1;
	return 1;
}

api_role_t api_authorize(const api_env_t *env, const char *h, int64_t now,
                         char *name, api_resp_t *r)
{
	if (!h || strncmp(h, "Bearer ", 7) != 0 || !h[7]) {
		api_error(r, MHD_HTTP_UNAUTHORIZED, NULL,
		          "missing token: send Authorization: Bearer TOKEN");
		return API_ROLE_NONE;
	}
	char why[200];
	wdb_txn_t *t = wdb_begin_read(env->db);
	if (!t) {
		api_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "store busy: try again");
		return API_ROLE_NONE;
	}
	api_role_t role = api_token_find(t, h + 7, now, name, why, sizeof(why));
	wdb_abort(t);
	if (role == API_ROLE_NONE)
		api_error(r, MHD_HTTP_UNAUTHORIZED, NULL, "%s", why);
	return role;
}

/* The token of the request, checked: its role and name, or an error
 * in @r. */
static api_role_t authorize(api_t *a, struct MHD_Connection *conn, char *name,
                            int64_t now, api_resp_t *r)
{
	const char *h = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
	                                            MHD_HTTP_HEADER_AUTHORIZATION);
	api_role_t role = api_authorize(&a->env, h, now, name, r);
	if (role == API_ROLE_NONE)
		return API_ROLE_NONE;
	if (!rate_ok(a, name, now)) {
		api_error(r, MHD_HTTP_TOO_MANY_REQUESTS, NULL,
		          "token %s: more than %u requests a second", name, a->conf.rate);
		return API_ROLE_NONE;
	}
	return role;
}

static const char *conn_arg(const api_req_t *q, const char *name)
{
	struct MHD_Connection *conn = q->conn;
	const char *v = NULL;
	if (MHD_lookup_connection_value_n(conn, MHD_GET_ARGUMENT_KIND, name,
	                                  strlen(name), &v, NULL) != MHD_YES)
		return NULL;
	return v ? v : "";
}

static void unlink_waiting(conn_req_t *cr)
{
	for (conn_req_t **p = &cr->a->waiting; *p; p = &(*p)->next)
		if (*p == cr) {
			*p = cr->next;
			break;
		}
	cr->next = NULL;
}

/* Lets the server go on with @cr's connection: it calls on_request()
 * again, which sends cr->resp. */
static void resume(conn_req_t *cr)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(cr->conn, MHD_CONNECTION_INFO_DAEMON);
	MHD_resume_connection(cr->conn);
	if (ci)
		httpd_kick(&cr->a->http, ci->daemon);
}

/* The answer of a run: sent once the connection is resumed (MHD calls
 * on_request() again). */
static void run_done(void *arg, api_resp_t *r)
{
	conn_req_t *cr = arg;
	cr->resp = *r;
	cr->ready = 1;
	cr->run = NULL;
	unlink_waiting(cr);
	resume(cr);
}

static enum MHD_Result handle(api_t *a, struct MHD_Connection *conn,
                              const char *url, const char *method, conn_req_t *cr)
{
	api_resp_t r = { 0, NULL, 0, 0 };
	char name[API_TOKEN_NAME_MAX + 1] = "", host[64];
	int64_t now = time(NULL);
	if (cr->too_big) {
		api_error(&r, MHD_HTTP_CONTENT_TOO_LARGE, NULL,
		          "body over %u bytes (api.max-body)", a->conf.max_body);
		return send_resp(conn, &r);
	}
	api_role_t role = authorize(a, conn, name, now, &r);
	if (role == API_ROLE_NONE)
		return send_resp(conn, &r);
	client_host(conn, host, sizeof(host));
	api_req_t q = {
		.method = method, .path = url, .body = cr->body ? cr->body : "",
		.body_len = cr->len, .role = role, .user = name, .host = host, .now = now,
		.if_match = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
		                                        MHD_HTTP_HEADER_IF_MATCH),
		.arg = conn_arg, .conn = conn,
	};
	if (strcmp(url, "/v1/run") == 0 && strcmp(method, "POST") == 0) {
		/* The connection waits, suspended, for the command's end. */
		api_run_t *run = api_run_start(a->runner, &q, &r, run_done, cr);
		if (!run)
			return send_resp(conn, &r);
		cr->run = run;
		cr->conn = conn;
		cr->next = a->waiting;
		a->waiting = cr;
		MHD_suspend_connection(conn);
		return MHD_YES;
	}
	api_route(&a->env, &q, &r);
	return send_resp(conn, &r);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_len, void **state)
{
	api_t *a = cls;
	conn_req_t *cr = *state;
	if (cr && cr->ready) {
		cr->ready = 0;
		return send_resp(conn, &cr->resp);   /* takes the body */
	}
	if (cr && cr->run)
		return MHD_YES;    /* still running */
	if (!cr) {
		*state = cr = xcalloc(1, sizeof(*cr));
		cr->a = a;
		const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
		                                             MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl && strtoull(cl, NULL, 10) > a->conf.max_body)
			cr->too_big = 1;
		return MHD_YES;
	}
	if (*upload_len) {
		if (!cr->too_big && cr->len + *upload_len <= a->conf.max_body) {
			cr->body = xrealloc(cr->body, cr->len + *upload_len + 1);
			memcpy(cr->body + cr->len, upload, *upload_len);
			cr->len += *upload_len;
			cr->body[cr->len] = 0;
		} else {
			cr->too_big = 1;   /* the rest is read and dropped */
		}
		*upload_len = 0;
		return MHD_YES;
	}
	return handle(a, conn, url, method, cr);
}

static void on_done(void *cls, struct MHD_Connection *conn, void **state,
                    enum MHD_RequestTerminationCode toe)
{
	conn_req_t *cr = *state;
	if (cr) {
		if (cr->run) {
			api_run_cancel(cr->run);
			unlink_waiting(cr);
		}
		if (cr->ready)
			json_decref(cr->resp.body);
		free(cr->body);
		free(cr);
		*state = NULL;
	}
}

static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr,
                                 socklen_t addrlen)
{
	api_t *a = cls;
	return net_prefix_allowed(a->conf.allow, a->conf.nallow, addr) ? MHD_YES : MHD_NO;
}

static char *read_pem(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "api: cannot read %s", path);
		return NULL;
	}
	char *buf = xmalloc(65537);
	size_t n = fread(buf, 1, 65536, f);
	fclose(f);
	buf[n] = 0;
	if (n == 0 || n == 65536) {
		snprintf(err, errlen, "api: %s is empty or too large for a PEM file", path);
		free(buf);
		return NULL;
	}
	return buf;
}

static struct MHD_Daemon *start_one(api_t *a, const conf_listen_t *l)
{
	uint16_t port;
	unsigned flags = httpd_flags(&l->addr, &port);
	const struct sockaddr *sa = (const struct sockaddr *)&l->addr;
	unsigned lim = a->conf.max_conn;
	flags |= MHD_ALLOW_SUSPEND_RESUME;   /* POST /v1/run waits for its command */
	if (!a->cert)
		return MHD_start_daemon(flags, port, on_accept, a, on_request, a,
		        MHD_OPTION_SOCK_ADDR, sa,
		        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)API_IDLE_TIMEOUT,
		        MHD_OPTION_CONNECTION_LIMIT, lim,
		        MHD_OPTION_NOTIFY_COMPLETED, on_done, a, MHD_OPTION_END);
	/* TLS 1.2 and 1.3 only. */
	return MHD_start_daemon(flags | MHD_USE_TLS, port, on_accept, a, on_request, a,
	        MHD_OPTION_SOCK_ADDR, sa,
	        MHD_OPTION_HTTPS_MEM_CERT, a->cert, MHD_OPTION_HTTPS_MEM_KEY, a->key,
	        MHD_OPTION_HTTPS_PRIORITIES,
	        "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2",
	        MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)API_IDLE_TIMEOUT,
	        MHD_OPTION_CONNECTION_LIMIT, lim,
	        MHD_OPTION_NOTIFY_COMPLETED, on_done, a, MHD_OPTION_END);
}

static void free_api(void *arg)
{
	api_t *a = arg;
	if (a->key)
		memset(a->key, 0, strlen(a->key));
	free(a->key);
	free(a->cert);
	free(a);
}

api_t *api_start(const api_conf_t *c, uv_loop_t *loop, const api_env_t *env,
                 char *err, size_t errlen)
{
	api_t *a = xcalloc(1, sizeof(*a));
	a->conf = *c;
	a->env = *env;
	a->http.owner = a;
	a->http.on_free = free_api;
	if (!c->enabled)
		return a;
	if (*c->cert && MHD_is_feature_supported(MHD_FEATURE_TLS) != MHD_YES) {
		snprintf(err, errlen, "api: this libmicrohttpd has no TLS");
		free(a);
		return NULL;
	}
	if (*c->cert && (!(a->cert = read_pem(c->cert, err, errlen)) ||
	                 !(a->key = read_pem(c->key, err, errlen)))) {
		api_stop(a);
		return NULL;
	}
	a->runner = api_runner_new(loop, env->conf_path, c->run_timeout);
	for (size_t i = 0; i < c->nlisten; i++) {
		const conf_listen_t *l = &a->conf.listen[i];
		struct MHD_Daemon *d = start_one(a, l);
		if (!d) {
			snprintf(err, errlen, "api: cannot serve on %s (address in use, not "
			         "local, or a certificate and key that do not load)", l->text);
			api_stop(a);
			return NULL;
		}
		httpd_add(&a->http, loop, d);
		log_info("api: serving %s on %s", a->cert ? "HTTPS" : "HTTP", l->text);
	}
	return a;
}

void api_stop(api_t *a)
{
	if (!a)
		return;
	/* A command still running is killed, and its connection answered
	 * before the server goes. */
	while (a->waiting) {
		conn_req_t *cr = a->waiting;
		a->waiting = cr->next;
		cr->next = NULL;
		api_run_cancel(cr->run);
		cr->run = NULL;
		cr->resp = (api_resp_t){ 0, NULL, 0, 0 };
		api_error(&cr->resp, MHD_HTTP_SERVICE_UNAVAILABLE, NULL,
		          "gslbd is stopping: the command was stopped");
		cr->ready = 1;
		resume(cr);
	}
	api_runner_stop(a->runner);
	a->runner = NULL;
	httpd_stop(&a->http);
}
