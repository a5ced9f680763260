/* SPDX-License-Identifier: MIT */
/* Client location: the geoip section of the configuration and the lookup
 * that combines the operator's CIDR file (geo_nets.c) with the MaxMind DB
 * (geo_mmdb.c).
 *
 * Thread safety: a geo_t is written only inside geo_open(); afterwards
 * every field is read-only, and libmaxminddb lookups on an MMAP-mode
 * MMDB_s are safe from any number of threads.
 *
 * Rules (documented in gslbd.conf(5) and geoip/README.md):
 * - A line of the nets file beats the MaxMind DB, and the longest
 *   matching line wins.  A line that gives only one of region= and isp=
 *   leaves the other to the MaxMind DB.  "*" as a value says "unknown"
 *   and still decides (the MaxMind DB is not asked for that field).
 * - A MaxMind DB value (a string, or an integer written in decimal) goes
 *   through the field's map when the map is configured: a value the map
 *   lacks gives "*", so that an operator who lists the ISPs they serve
 *   never sees stray names in the weight table.  Without a map the value
 *   is used lowercased, or "*" if it is empty, longer than
 *   GEO_NAME_MAX - 1 bytes, has control characters, or is of another type
 *   (map, array, float, boolean, bytes).  Map keys match ASCII
 *   case-insensitively ("cn-bj" finds "CN-BJ").
 * - The source is GEO_SRC_NETS when a nets line matched, else
 *   GEO_SRC_MMDB when the MaxMind DB has a record for the address (even if
 *   the paths or maps turn it into "*"), else GEO_SRC_NONE.
 * - prefix_len is the ECS scope (RFC 7871 §7.2.1): the length of the
 *   largest network around the client on which the answer cannot change.
 *   Each source that was consulted contributes its length and the largest
 *   counts (DESIGN.md: "combine steps by taking the maximum"):
 *     - the MaxMind DB netmask of the record, or of the empty network when
 *       there is none, in the client's family (96 less for IPv4 in an
 *       IPv6 database, as Knot's geoip module does);
 *     - for the nets file, the matched line's length, made longer where a
 *       more specific line splits it, and for an address no line matches,
 *       the largest block around it that holds no line (both as the MMDB
 *       writer does when it splits networks).
 *   So an unknown client still gets a non-zero scope whenever another
 *   client nearby would get a different answer: scope 0 would let a
 *   resolver give the "unknown" answer to everyone.  Only a geo_t that
 *   knows nothing about the family (no geoip section, no lines, no
 *   database) answers 0. */
#include "gslb/geo_int.h"
#include "common/util.h"

#include <ctype.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---------------------------------------------------------------- load */

int geo__fail(geo_ctx_t *x, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(x->err, x->errlen, "%s:%d: %s", x->file, line, msg);
	return -1;
}

int geo__name_copy(const char *s, char out[GEO_NAME_MAX])
{
	size_t n = strlen(s);
	if (strcmp(s, "*") == 0) {
		strcpy(out, "*");
		return 0;
	}
	if (n == 0 || n >= GEO_NAME_MAX)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (!isalnum(ch) && ch != '-' && ch != '_' && ch != '.')
			return -1;
		out[i] = (char)tolower(ch);
	}
	out[n] = 0;
	return 0;
}

int geo__keycmp(const char *a, size_t al, const char *b, size_t bl)
{
	size_t n = al < bl ? al : bl;
	for (size_t i = 0; i < n; i++) {
		int ca = dname_lower[(unsigned char)a[i]];
		int cb = dname_lower[(unsigned char)b[i]];
		if (ca != cb)
			return ca - cb;
	}
	return al < bl ? -1 : al > bl;
}

static int map_entry_cmp(const void *pa, const void *pb)
{
	const geo_map_entry_t *a = pa, *b = pb;
	return geo__keycmp(a->key, a->keylen, b->key, b->keylen);
}

static int parse_path(geo_ctx_t *x, const char *key, const ynode_t *v,
                      geo_field_t *f)
{
	if (v->kind != YNODE_SEQ)
		return geo__fail(x, v->line, "geoip.%s must be a list of keys, e.g. "
		                 "[ %s ] or [ subdivisions, 0, iso_code ]", key, key);
	if (v->n == 0 || v->n > GEO_PATH_MAX)
		return geo__fail(x, v->line, "geoip.%s needs 1 to %d keys, not %zu",
		                 key, GEO_PATH_MAX, v->n);
	const char **p = xcalloc(v->n + 1, sizeof(*p));
	for (size_t i = 0; i < v->n; i++) {
		const ynode_t *e = v->items[i];
		if (e->kind != YNODE_SCALAR || !e->value[0]) {
			for (size_t j = 0; j < i; j++)
				free((char *)p[j]);
			free(p);
			return geo__fail(x, e->line, "geoip.%s: key %zu must be a map key "
			                 "or an array index, not %s", key, i + 1,
			                 e->kind == YNODE_SCALAR ? "empty" :
			                 e->kind == YNODE_SEQ ? "a list" : "a map");
		}
		p[i] = xstrdup(e->value);
	}
	f->path = p;
	return 0;
}

static int parse_map(geo_ctx_t *x, const char *key, const ynode_t *v,
                     geo_field_t *f)
{
	if (v->kind != YNODE_MAP)
		return geo__fail(x, v->line, "geoip.%s must be a map of database value: "
		                 "name, e.g. { \"4134\": ctcc }", key);
	f->has_map = 1;
	f->map = xcalloc(v->n ? v->n : 1, sizeof(*f->map));
	for (size_t i = 0; i < v->n; i++) {
		const ynode_t *k = v->keys[i], *val = v->items[i];
		if (!k->value[0])
			return geo__fail(x, k->line, "geoip.%s: empty key", key);
		if (val->kind != YNODE_SCALAR)
			return geo__fail(x, val->line, "geoip.%s: the value of '%s' must be "
			                 "a name", key, k->value);
		geo_map_entry_t *e = &f->map[f->nmap];
		if (geo__name_copy(val->value, e->name))
			return geo__fail(x, val->line, "geoip.%s: '%s' is not a name (1 to "
			                 "%d letters, digits, '-', '_' or '.', or \"*\")",
			                 key, val->value, GEO_NAME_MAX - 1);
		e->key = xstrdup(k->value);
		e->keylen = strlen(e->key);
		f->nmap++;
		for (size_t j = 0; j + 1 < f->nmap; j++)
			if (map_entry_cmp(&f->map[j], e) == 0)
				return geo__fail(x, k->line, "geoip.%s: '%s' is given twice "
				                 "(keys ignore case)", key, k->value);
	}
	qsort(f->map, f->nmap, sizeof(*f->map), map_entry_cmp);
	return 0;
}

static int parse_onoff(geo_ctx_t *x, const char *key, const ynode_t *v,
                       int *out)
{
	static const char *const on[] = { "on", "yes", "true", NULL };
	static const char *const off[] = { "off", "no", "false", NULL };
	if (v->kind == YNODE_SCALAR) {
		for (int i = 0; on[i]; i++)
			if (strcasecmp(v->value, on[i]) == 0)
				return *out = 1, 0;
		for (int i = 0; off[i]; i++)
			if (strcasecmp(v->value, off[i]) == 0)
				return *out = 0, 0;
	}
	return geo__fail(x, v->line, "geoip.%s must be on or off", key);
}

/* geo_allow_compile(): set once, before any geo_open(). */
static int allow_compile = 1;

void geo_allow_compile(int on)
{
	allow_compile = on;
}

/* Fills a default path of one key ("region" or "isp"). */
static void default_path(geo_field_t *f, const char *key)
{
	if (f->path)
		return;
	f->path = xcalloc(2, sizeof(*f->path));
	f->path[0] = xstrdup(key);
}

geo_t *geo_open(const conf_t *c, char *err, size_t errlen)
{
	static const char *const keys[] = { "database", "region", "isp",
		"region-map", "isp-map", "nets", "edns-client-subnet", "compile",
		NULL };
	geo_t *g = xcalloc(1, sizeof(*g));
	g->ecs = 1;
	g->compile = 1;
	geo_ctx_t x = { c->path, err, errlen };
	const ynode_t *s = c->root ? ynode_get(c->root, "geoip") : NULL;
	if (!s)
		goto done;
	if (s->kind != YNODE_MAP) {
		geo__fail(&x, s->line, "geoip must be a map of key: value");
		goto fail;
	}
	/* Keys first, so that a typo is reported before any file is read. */
	for (size_t i = 0; i < s->n; i++) {
		const char *k = s->keys[i]->value;
		const char *const *a;
		for (a = keys; *a; a++)
			if (strcmp(*a, k) == 0)
				break;
		if (!*a) {
			geo__fail(&x, s->keys[i]->line, "unknown key '%s' in geoip", k);
			goto fail;
		}
	}
	const ynode_t *v;
	if ((v = ynode_get(s, "region")) &&
	    parse_path(&x, "region", v, &g->field[GEO_F_REGION]))
		goto fail;
	if ((v = ynode_get(s, "isp")) &&
	    parse_path(&x, "isp", v, &g->field[GEO_F_ISP]))
		goto fail;
	if ((v = ynode_get(s, "region-map")) &&
	    parse_map(&x, "region-map", v, &g->field[GEO_F_REGION]))
		goto fail;
	if ((v = ynode_get(s, "isp-map")) &&
	    parse_map(&x, "isp-map", v, &g->field[GEO_F_ISP]))
		goto fail;
	if ((v = ynode_get(s, "edns-client-subnet")) &&
	    parse_onoff(&x, "edns-client-subnet", v, &g->ecs))
		goto fail;
	if ((v = ynode_get(s, "compile")) &&
	    parse_onoff(&x, "compile", v, &g->compile))
		goto fail;
	if ((v = ynode_get(s, "database")) && geo__open_mmdb(&x, v, c, g))
		goto fail;
	if ((v = ynode_get(s, "nets")) && geo__load_nets(&x, v, c, g))
		goto fail;
done:
	default_path(&g->field[GEO_F_REGION], "region");
	default_path(&g->field[GEO_F_ISP], "isp");
	if (allow_compile && g->compile && (g->have_mmdb || g->nnets))
		geo__compile(g, GEO_COMPILE_MAX);
	return g;
fail:
	geo_close(g);
	return NULL;
}

void geo_close(geo_t *g)
{
	if (!g)
		return;
	if (g->have_mmdb)
		MMDB_close(&g->mmdb);
	geo__compiled_free(g);
	for (int i = 0; i < 2; i++) {
		geo_field_t *f = &g->field[i];
		if (f->path)
			for (size_t j = 0; f->path[j]; j++)
				free((char *)f->path[j]);
		free(f->path);
		for (size_t j = 0; j < f->nmap; j++)
			free(f->map[j].key);
		free(f->map);
		free(g->trie[i].node);
	}
	free(g->nets);
	free(g);
}

int geo_use_ecs(const geo_t *g)
{
	return g ? g->ecs : 1;
}

const char *geo_source_str(geo_source_t s)
{
	switch (s) {
	case GEO_SRC_NETS:
		return "nets";
	case GEO_SRC_MMDB:
		return "mmdb";
	default:
		return "none";
	}
}

/* -------------------------------------------------------------- lookup */

geo_source_t geo_lookup(const geo_t *g, const struct sockaddr *addr,
                        geo_result_t *out)
{
	uint8_t a[16];
	unsigned bits;
	struct sockaddr_in sin;
	const struct sockaddr *q = addr;

	strcpy(out->region, "*");
	strcpy(out->isp, "*");
	out->prefix_len = 0;
	out->source = GEO_SRC_NONE;
	out->lochash = 0;
	out->network[0] = 0;
	memset(a, 0, sizeof(a));
	if (addr->sa_family == AF_INET) {
		memcpy(a, &((const struct sockaddr_in *)addr)->sin_addr, 4);
		bits = 32;
	} else if (addr->sa_family == AF_INET6) {
		const struct in6_addr *a6 =
			&((const struct sockaddr_in6 *)addr)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED(a6)) {
			memset(&sin, 0, sizeof(sin));
			sin.sin_family = AF_INET;
			memcpy(&sin.sin_addr, a6->s6_addr + 12, 4);
			memcpy(a, a6->s6_addr + 12, 4);
			q = (const struct sockaddr *)&sin;
			bits = 32;
		} else {
			memcpy(a, a6->s6_addr, 16);
			bits = 128;
		}
	} else {
		return GEO_SRC_NONE;
	}
	if (!g) {
		if (out->want_network)
			geo__format_net(a, bits, 0, out->network);
		return GEO_SRC_NONE;
	}

	/* The compiled table gives the same result in one search
	 * (geo_compile.c); explain's network text comes from the sources. */
	if (g->compiled && !out->want_network) {
		const geo_res_t *r = geo__compiled_find(g, a, bits);
		memcpy(out->region, geo__name(g, r->region), GEO_NAME_MAX);
		memcpy(out->isp, geo__name(g, r->isp), GEO_NAME_MAX);
		out->prefix_len = r->prefix_len;
		out->source = r->source;
		out->lochash = r->lochash;
		return (geo_source_t)r->source;
	}
	unsigned scope = 0;
	geo_source_t src = GEO_SRC_NONE;
	const geo_net_t *net = NULL;
	const geo_trie_t *t = &g->trie[bits == 128];
	if (t->n && (net = geo__nets_walk(g, t, a, bits, &scope)))
		src = GEO_SRC_NETS;
	int need_region = !net || !net->region[0];
	int need_isp = !net || !net->isp[0];
	if (g->have_mmdb && (need_region || need_isp) &&
	    geo__mmdb_lookup(g, q, bits, need_region, need_isp, out, &scope) &&
	    src == GEO_SRC_NONE)
		src = GEO_SRC_MMDB;
	if (net && !need_region)
		memcpy(out->region, net->region, GEO_NAME_MAX);
	if (net && !need_isp)
		memcpy(out->isp, net->isp, GEO_NAME_MAX);
	out->prefix_len = (uint8_t)scope;
	out->source = (uint8_t)src;
	/* Text for people only: the answer path leaves it out. */
	if (out->want_network)
		geo__format_net(a, bits, scope, out->network);
	return src;
}

int geo_names(const geo_t *g, int isp, geo_name_fn fn, void *arg)
{
	for (size_t i = 0; i < g->nnets; i++) {
		const char *n = isp ? g->nets[i].isp : g->nets[i].region;
		if (*n && strcmp(n, "*") != 0)   /* "": the database decides */
			fn(n, arg);
	}
	return g->have_mmdb ? geo__mmdb_names(g, isp ? GEO_F_ISP : GEO_F_REGION, fn, arg)
	                    : 0;
}
