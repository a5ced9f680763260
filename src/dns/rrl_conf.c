/* SPDX-License-Identifier: MIT */
/* Response rate limiting (S1-12): the rrl section of gslbd.conf and the
 * client prefixes it names (rrl.h has the contract; rrl.c the accounts).
 * Runs on the main thread at load and reload only. */
#include "dns/rrl.h"
#include "common/util.h"
#include "common/ytree.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Limits of the settings.  BIND caps its rates at 1000 and its window
 * at 3600; a rate up to a million lets a lab or a benchmark run every
 * response through the accounts without any client reaching the limit.
 * The credit arithmetic stays inside 32 bits: the deepest debt, window *
 * rate units, must stay below 2^31 (RRL_DEBT_MAX, checked at load). */
#define RRL_RATE_MAX 1000000u
#define RRL_DEBT_MAX 2147483647u
#define RRL_WINDOW_MAX 3600u
#define RRL_SLIP_MAX 10u                 /* as BIND */
#define RRL_TABLE_MIN 1024u
#define RRL_TABLE_DEFAULT 65536u         /* 1 MiB a thread */

static int net_bits_max(uint8_t family)
{
	return family == 4 ? 32 : 128;
}

void rrl_net_mask(rrl_net_t *n, unsigned len)
{
	if (len >= n->len)
		return;
	unsigned bytes = net_bits_max(n->family) / 8;
	unsigned full = len / 8;
	if (len % 8)
		n->addr[full++] &= (uint8_t)(0xFF00u >> (len % 8));
	memset(n->addr + full, 0, bytes - full);
	n->len = (uint8_t)len;
}

int rrl_net_contains(const rrl_net_t *net, const rrl_net_t *a)
{
	if (net->family != a->family || a->len < net->len)
		return 0;
	unsigned full = net->len / 8, rest = net->len % 8;
	if (memcmp(net->addr, a->addr, full))
		return 0;
	if (!rest)
		return 1;
	uint8_t m = (uint8_t)(0xFF00u >> rest);
	return (net->addr[full] & m) == (a->addr[full] & m);
}

int rrl_net_parse(const char *text, rrl_net_t *out)
{
	char host[64];
	const char *slash = strchr(text, '/');
	size_t hl = slash ? (size_t)(slash - text) : strlen(text);
	if (hl == 0 || hl >= sizeof(host))
		return GSLB_EINVAL;
	memcpy(host, text, hl);
	host[hl] = 0;
	memset(out, 0, sizeof(*out));
	if (inet_pton(AF_INET, host, out->addr) == 1)
		out->family = 4;
	else if (inet_pton(AF_INET6, host, out->addr) == 1)
		out->family = 6;
	else
		return GSLB_EINVAL;
	unsigned max = (unsigned)net_bits_max(out->family);
	out->len = (uint8_t)max;
	if (slash) {
		const char *d = slash + 1;
		unsigned long len = 0;
		if (!*d || strlen(d) > 3)
			return GSLB_EINVAL;
		for (; *d; d++) {
			if (!isdigit((unsigned char)*d))
				return GSLB_EINVAL;
			len = len * 10 + (unsigned long)(*d - '0');
		}
		if (len > max)
			return GSLB_EINVAL;
		rrl_net_mask(out, (unsigned)len);
	}
	return 0;
}

/* What a bad value is called in messages. */
static const char *shown(const ynode_t *v)
{
	return v->kind == YNODE_SCALAR ? v->value : "a list or map";
}

/* A whole number in [lo, hi], with the wording of conf.c's errors. */
static int read_uint(const conf_t *c, const ynode_t *v, const char *what,
                     unsigned lo, unsigned hi, unsigned *out, char *err,
                     size_t errlen)
{
	if (v->kind == YNODE_SCALAR && isdigit((unsigned char)v->value[0])) {
		char *end;
		errno = 0;
		unsigned long n = strtoul(v->value, &end, 10);
		if (!*end && !errno && n >= lo && n <= hi) {
			*out = (unsigned)n;
			return 0;
		}
	}
	return conf_sfail(c, v, err, errlen,
	                  "rrl.%s must be a whole number from %u to %u, "
	                  "not '%s'", what, lo, hi, shown(v));
}

static int read_exempt(const conf_t *c, const ynode_t *v, rrl_conf_t *o,
                       char *err, size_t errlen)
{
	const ynode_t *const *items = (const ynode_t *const *)&v;
	size_t n = 1;
	if (v->kind == YNODE_SEQ) {
		items = (const ynode_t *const *)v->items;
		n = v->n;
	} else if (v->kind != YNODE_SCALAR) {
		return conf_sfail(c, v, err, errlen,
		                  "rrl.exempt must be a list of addresses or "
		                  "prefixes, e.g. [ \"127.0.0.0/8\", "
		                  "\"::1\" ]");
	}
	free(o->exempt);
	o->exempt = n ? xcalloc(n, sizeof(*o->exempt)) : NULL;
	o->nexempt = n;
	for (size_t i = 0; i < n; i++) {
		const ynode_t *x = items[i];
		if (x->kind == YNODE_SCALAR &&
		    rrl_net_parse(x->value, &o->exempt[i]) == 0)
			continue;
		return conf_sfail(c, x, err, errlen,
		                  "rrl.exempt: '%s' is not an address or a "
		                  "prefix (ADDR or ADDR/LEN, e.g. 192.0.2.0/24 "
		                  "or 2001:db8::/32)", shown(x));
	}
	return 0;
}

/* The numeric keys of the section, their ranges and where they go. */
static const struct {
	const char *key;
	unsigned lo, hi;
	size_t off;
} rrl_keys[] = {
	{ "responses-per-second", 0, RRL_RATE_MAX, offsetof(rrl_conf_t, rate) },
	{ "window", 1, RRL_WINDOW_MAX, offsetof(rrl_conf_t, window) },
	{ "slip", 0, RRL_SLIP_MAX, offsetof(rrl_conf_t, slip) },
	{ "ipv4-prefix", 0, 32, offsetof(rrl_conf_t, v4_prefix) },
	{ "ipv6-prefix", 0, 128, offsetof(rrl_conf_t, v6_prefix) },
	{ "table-size", RRL_TABLE_MIN, RRL_TABLE_MAX,
	  offsetof(rrl_conf_t, table_size) },
};
#define RRL_NKEYS (sizeof(rrl_keys) / sizeof(rrl_keys[0]))

/* Reads one key of the section into @o; 0 or -1. */
static int read_key(const conf_t *c, const char *k, const ynode_t *v,
                    rrl_conf_t *o, char *err, size_t errlen)
{
	if (strcmp(k, "exempt") == 0)
		return read_exempt(c, v, o, err, errlen);
	for (size_t j = 0; j < RRL_NKEYS; j++) {
		if (strcmp(k, rrl_keys[j].key))
			continue;
		unsigned *dst = (unsigned *)((char *)o + rrl_keys[j].off);
		return read_uint(c, v, k, rrl_keys[j].lo, rrl_keys[j].hi, dst,
		                 err, errlen);
	}
	return 0; /* conf_skeys() refused unknown keys */
}

int rrl_conf_load(const conf_t *c, rrl_conf_t *o, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	o->window = 15;
	o->slip = 2;
	o->v4_prefix = 24;
	o->v6_prefix = 56;
	o->table_size = RRL_TABLE_DEFAULT;
	const ynode_t *s = c->root ? ynode_get(c->root, "rrl") : NULL;
	int have_exempt = 0;
	if (s) {
		const char *keys[RRL_NKEYS + 2];
		for (size_t j = 0; j < RRL_NKEYS; j++)
			keys[j] = rrl_keys[j].key;
		keys[RRL_NKEYS] = "exempt";
		keys[RRL_NKEYS + 1] = NULL;
		if (conf_skeys(c, s, "rrl", keys, err, errlen))
			return -1;
		for (size_t i = 0; i < s->n; i++) {
			const char *k = s->keys[i]->value;
			if (read_key(c, k, s->items[i], o, err, errlen)) {
				rrl_conf_clear(o);
				return -1;
			}
			have_exempt |= strcmp(k, "exempt") == 0;
		}
	}
	if ((uint64_t)o->window * o->rate > RRL_DEBT_MAX) {
		conf_sfail(c, s, err, errlen, "rrl: window (%u) times "
		           "responses-per-second (%u) must stay below %u",
		           o->window, o->rate, RRL_DEBT_MAX);
		rrl_conf_clear(o);
		return -1;
	}
	if (!have_exempt) {
		/* The host itself: local monitoring is never limited. */
		o->exempt = xcalloc(2, sizeof(*o->exempt));
		o->nexempt = 2;
		rrl_net_parse("127.0.0.0/8", &o->exempt[0]);
		rrl_net_parse("::1", &o->exempt[1]);
	}
	/* Round up to a power of two: the hash picks a bucket by mask. */
	unsigned size = RRL_TABLE_MIN;
	while (size < o->table_size)
		size <<= 1;
	o->table_size = size;
	return 0;
}

void rrl_conf_clear(rrl_conf_t *rc)
{
	free(rc->exempt);
	rc->exempt = NULL;
	rc->nexempt = 0;
}
