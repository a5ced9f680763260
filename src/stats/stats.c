/* SPDX-License-Identifier: MIT */
/* The statistics endpoint on the main loop (libmicrohttpd). */
#include "stats/stats.h"
#include "common/httpd.h"
#include "common/log.h"
#include "common/net.h"
#include "common/util.h"

#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Section parsing --------------------------------------------------- */

/* Calls @fn for each scalar of @v (one scalar or a sequence of them). */
static int each_item(const conf_t *c, const ynode_t *v, const char *what,
                     size_t max, char *err, size_t errlen,
                     int (*fn)(const ynode_t *item, size_t i, void *arg), void *arg)
{
	const ynode_t *const *items = (const ynode_t *const *)&v;
	size_t n = 1;
	if (v->kind == YNODE_SEQ) {
		items = (const ynode_t *const *)v->items;
		n = v->n;
	}
	if (n > max)
		return conf_sfail(c, v, err, errlen, "stats.%s: at most %zu entries",
		                  what, max);
	for (size_t i = 0; i < n; i++) {
		if (items[i]->kind != YNODE_SCALAR)
			return conf_sfail(c, items[i], err, errlen,
			                  "stats.%s: each entry is one address", what);
		if (fn(items[i], i, arg))
			return conf_sfail(c, items[i], err, errlen,
			                  "stats.%s: '%s' is not %s", what, items[i]->value,
			                  strcmp(what, "listen") == 0 ?
			                  "ADDR@PORT (e.g. 127.0.0.1@9153)" :
			                  "an address or ADDR/LEN network");
	}
	return 0;
}

static int add_listen(const ynode_t *item, size_t i, void *arg)
{
	stats_conf_t *o = arg;
	if (conf_parse_listen(item->value, &o->listen[i]))
		return -1;
	o->listen[i].line = item->line;
	o->nlisten = i + 1;
	return 0;
}

static int add_allow(const ynode_t *item, size_t i, void *arg)
{
	stats_conf_t *o = arg;
	if (net_prefix_parse(item->value, &o->allow[i]))
		return -1;
	o->nallow = i + 1;
	return 0;
}

int stats_conf_load(const conf_t *c, stats_conf_t *o, char *err, size_t errlen)
{
	static const char *const keys[] = { "listen", "allow", NULL };
	memset(o, 0, sizeof(*o));
	const ynode_t *s = ynode_get(c->root, "stats"), *v;
	if (!s)
		return 0;
	if (conf_skeys(c, s, "stats", keys, err, errlen))
		return -1;
	if ((v = ynode_get(s, "listen")) &&
	    each_item(c, v, "listen", STATS_MAX_LISTEN, err, errlen, add_listen, o))
		return -1;
	if ((v = ynode_get(s, "allow")) &&
	    each_item(c, v, "allow", STATS_MAX_ALLOW, err, errlen, add_allow, o))
		return -1;
	if (!o->nlisten && o->nallow)
		return conf_sfail(c, s, err, errlen,
		                  "stats: allow without listen serves nothing");
	return 0;
}

int stats_allowed(const stats_conf_t *c, const struct sockaddr *addr)
{
	return net_prefix_allowed(c->allow, c->nallow, addr);
}

/* The server ----------------------------------------------------------- */

_Static_assert(STATS_MAX_LISTEN <= HTTPD_MAX_LISTEN, "a daemon for each listen");

struct stats {
	stats_conf_t conf;
	stats_provider_t p;
	httpd_set_t http;
	uv_loop_t *loop;
};

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status,
                             const char *type, char *body, size_t len)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	enum MHD_Result ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result text(struct MHD_Connection *conn, unsigned status,
                            const char *msg)
{
	char *b = xstrdup(msg);
	return reply(conn, status, "text/plain; charset=utf-8", b, strlen(b));
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn,
                                  const char *url, const char *method,
                                  const char *version, const char *upload,
                                  size_t *upload_len, void **state)
{
	stats_t *s = cls;
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
		return text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "GET only\n");
	if (strcmp(url, "/metrics") == 0) {
		expo_t e;
		expo_init(&e);
		s->p.metrics(&e, s->p.arg);
		/* The buffer goes to libmicrohttpd, which frees it. */
		return reply(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8",
		             e.buf, e.len);
	}
	if (strcmp(url, "/healthz") == 0) {
		char why[512] = "", body[600];
		if (s->p.healthy(why, sizeof(why), s->p.arg)) {
			snprintf(body, sizeof(body), "ok\n%s%s", why, *why ? "\n" : "");
			return text(conn, MHD_HTTP_OK, body);
		}
		snprintf(body, sizeof(body), "unhealthy: %s\n", why);
		return text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, body);
	}
	return text(conn, MHD_HTTP_NOT_FOUND, "not found: try /metrics or /healthz\n");
}

static enum MHD_Result on_accept(void *cls, const struct sockaddr *addr,
                                 socklen_t addrlen)
{
	stats_t *s = cls;
	return stats_allowed(&s->conf, addr) ? MHD_YES : MHD_NO;
}

/* A stats connection that is idle this long is closed. */
#define STATS_IDLE_TIMEOUT 10

stats_t *stats_start(const stats_conf_t *c, uv_loop_t *loop,
                     const stats_provider_t *p, char *err, size_t errlen)
{
	stats_t *s = xcalloc(1, sizeof(*s));
	s->conf = *c;
	s->p = *p;
	s->loop = loop;
	s->http.owner = s;
	s->http.on_free = free;
	for (size_t i = 0; i < c->nlisten; i++) {
		const conf_listen_t *l = &s->conf.listen[i];
		uint16_t port;
		unsigned flags = httpd_flags(&l->addr, &port);
		struct MHD_Daemon *d =
			MHD_start_daemon(flags, port, on_accept, s, on_request, s,
			                 MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)&l->addr,
			                 MHD_OPTION_CONNECTION_TIMEOUT,
			                 (unsigned)STATS_IDLE_TIMEOUT,
			                 MHD_OPTION_END);
		if (!d) {
			snprintf(err, errlen, "stats: cannot serve on %s (address in use or "
			         "not local?)", l->text);
			stats_stop(s);
			return NULL;
		}
		httpd_add(&s->http, loop, d);
		log_info("stats: serving /metrics and /healthz on %s", l->text);
	}
	return s;
}

void stats_stop(stats_t *s)
{
	if (s)
		httpd_stop(&s->http);
}
