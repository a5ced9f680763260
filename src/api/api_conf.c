/* SPDX-License-Identifier: MIT */
/* The api section of gslbd.conf (api_conf.h). */
#include "api/api_conf.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int api_listen_loopback(const conf_listen_t *l)
{
	if (l->addr.ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)&l->addr;
		return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
	}
	if (l->addr.ss_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)&l->addr)->sin6_addr);
	return 0;
}

/* The scalars of @v (one, or a sequence of them) into @out[0..max). */
static int scalars(const conf_t *c, const ynode_t *v, const char *what,
                   const ynode_t **out, size_t max, size_t *n, char *err,
                   size_t errlen)
{
	*n = 0;
	if (v->kind == YNODE_SCALAR) {
		out[(*n)++] = v;
		return 0;
	}
	if (v->kind != YNODE_SEQ)
		return conf_sfail(c, v, err, errlen, "api.%s: a list of addresses", what);
	if (v->n > max)
		return conf_sfail(c, v, err, errlen, "api.%s: at most %zu entries",
		                  what, max);
	for (size_t i = 0; i < v->n; i++) {
		if (v->items[i]->kind != YNODE_SCALAR)
			return conf_sfail(c, v->items[i], err, errlen,
			                  "api.%s: each entry is one address", what);
		out[(*n)++] = v->items[i];
	}
	return 0;
}

static int read_lists(const conf_t *c, const ynode_t *s, api_conf_t *o,
                      char *err, size_t errlen)
{
	const ynode_t *items[API_MAX_ALLOW], *v;
	size_t n;
	if ((v = ynode_get(s, "listen"))) {
		if (scalars(c, v, "listen", items, API_MAX_LISTEN, &n, err, errlen))
			return -1;
		for (size_t i = 0; i < n; i++) {
			if (conf_parse_listen(items[i]->value, &o->listen[i]))
				return conf_sfail(c, items[i], err, errlen, "api.listen: '%s' "
				                  "is not ADDR@PORT (e.g. 127.0.0.1@9154)",
				                  items[i]->value);
			o->listen[i].line = items[i]->line;
		}
		o->nlisten = n;
	}
	if ((v = ynode_get(s, "allow"))) {
		if (scalars(c, v, "allow", items, API_MAX_ALLOW, &n, err, errlen))
			return -1;
		for (size_t i = 0; i < n; i++)
			if (net_prefix_parse(items[i]->value, &o->allow[i]))
				return conf_sfail(c, items[i], err, errlen, "api.allow: '%s' is "
				                  "not an address or ADDR/LEN network",
				                  items[i]->value);
		o->nallow = n;
	}
	return 0;
}

static int read_path(const conf_t *c, const ynode_t *s, const char *k, char *out,
                     size_t size, char *err, size_t errlen)
{
	const ynode_t *v = ynode_get(s, k);
	if (!v)
		return 0;
	if (v->kind != YNODE_SCALAR || !*v->value)
		return conf_sfail(c, v, err, errlen, "api.%s: a file name", k);
	char *p = conf_path(c, v->value);
	snprintf(out, size, "%s", p);
	free(p);
	return 0;
}

int api_conf_load(const conf_t *c, api_conf_t *o, char *err, size_t errlen)
{
	static const char *const keys[] = { "listen", "tls-cert", "tls-key", "allow",
	                                    "max-body", "max-connections", "rate",
	                                    "run-timeout", NULL };
	memset(o, 0, sizeof(*o));
	o->max_body = 1 << 20;
	o->max_conn = 64;
	o->rate = 20;
	o->run_timeout = 30;
	const ynode_t *s = ynode_get(c->root, "api");
	if (!s)
		return 0;
	o->enabled = 1;
	if (s->kind != YNODE_MAP)
		return conf_sfail(c, s, err, errlen, "api: a map of settings");
	if (conf_skeys(c, s, "api", keys, err, errlen) ||
	    read_lists(c, s, o, err, errlen) ||
	    read_path(c, s, "tls-cert", o->cert, sizeof(o->cert), err, errlen) ||
	    read_path(c, s, "tls-key", o->key, sizeof(o->key), err, errlen))
		return -1;
	const conf_num_t nums[] = {
		CONF_NUM("max-body", 64, 64 << 20, &o->max_body),
		CONF_NUM("max-connections", 1, 10000, &o->max_conn),
		CONF_NUM("rate", 1, 100000, &o->rate),
		CONF_NUM("run-timeout", 1, 3600, &o->run_timeout),
	};
	for (size_t i = 0; i < s->n; i++)
		if (conf_snum_key(c, s->keys[i]->value, s->items[i], nums, 4, err, errlen) < 0)
			return -1;
	if (!o->nlisten) {
		conf_parse_listen(API_DEFAULT_LISTEN, &o->listen[0]);
		o->nlisten = 1;
	}
	if (!*o->cert != !*o->key)
		return conf_sfail(c, s, err, errlen,
		                  "api: tls-cert and tls-key go together");
	for (size_t i = 0; i < o->nlisten; i++)
		if (!*o->cert && !api_listen_loopback(&o->listen[i]))
			return conf_sfail(c, s, err, errlen, "api.listen: %s is not a "
			                  "loopback address: set tls-cert and tls-key, so "
			                  "that tokens never cross the network in clear",
			                  o->listen[i].text);
	return 0;
}
