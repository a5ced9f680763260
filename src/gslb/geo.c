/* SPDX-License-Identifier: MIT */
/* Client location: the geoip section, the operator's CIDR file compiled
 * into binary tries, and per-query MaxMind DB lookups.
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
#include "gslb/geo.h"
#include "common/util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <maxminddb.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* A lookup path deeper than this is surely a mistake; GeoIP2 paths have
 * three or four elements. */
#define GEO_PATH_MAX 16

typedef struct {
	char *key;                  /* the raw MMDB value, as text */
	size_t keylen;
	char name[GEO_NAME_MAX];    /* our name, lowercase */
} geo_map_entry_t;

typedef struct {
	const char **path;          /* NULL-terminated, for MMDB_aget_value */
	int has_map;
	geo_map_entry_t *map;       /* sorted by key, case-insensitively */
	size_t nmap;
} geo_field_t;

/* One node of a binary trie.  Node 0 is the root, so 0 in child[] means
 * "no child". */
typedef struct {
	uint32_t child[2];
	int32_t entry;              /* index into geo->nets, or -1 */
} geo_node_t;

typedef struct {
	geo_node_t *node;
	size_t n, cap;
} geo_trie_t;

typedef struct {
	char region[GEO_NAME_MAX];  /* "" = not given: the MMDB decides */
	char isp[GEO_NAME_MAX];
	int line;
} geo_net_t;

struct geo {
	int have_mmdb;
	MMDB_s mmdb;
	geo_field_t field[2];       /* region, isp */
	geo_trie_t trie[2];         /* IPv4, IPv6 */
	geo_net_t *nets;
	size_t nnets, capnets;
	int ecs;
};

enum { F_REGION, F_ISP };

/* ---------------------------------------------------------------- load */

typedef struct {
	const char *file;
	char *err;
	size_t errlen;
} ctx_t;

__attribute__((format(printf, 3, 4)))
static int fail(ctx_t *x, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(x->err, x->errlen, "%s:%d: %s", x->file, line, msg);
	return -1;
}

/* Checks a region or ISP name and copies it lowercased into @out:
 * 1..GEO_NAME_MAX-1 bytes of letters, digits, '-', '_', '.', or "*". */
static int name_copy(const char *s, char out[GEO_NAME_MAX])
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

/* Case-insensitive ASCII comparison of two counted strings. */
static int keycmp(const char *a, size_t al, const char *b, size_t bl)
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
	return keycmp(a->key, a->keylen, b->key, b->keylen);
}

static int parse_path(ctx_t *x, const char *key, const ynode_t *v,
                      geo_field_t *f)
{
	if (v->kind != YNODE_SEQ)
		return fail(x, v->line, "geoip.%s must be a list of keys, e.g. "
		            "[ %s ] or [ subdivisions, 0, iso_code ]", key, key);
	if (v->n == 0 || v->n > GEO_PATH_MAX)
		return fail(x, v->line, "geoip.%s needs 1 to %d keys, not %zu",
		            key, GEO_PATH_MAX, v->n);
	const char **p = xcalloc(v->n + 1, sizeof(*p));
	for (size_t i = 0; i < v->n; i++) {
		const ynode_t *e = v->items[i];
		if (e->kind != YNODE_SCALAR || !e->value[0]) {
			for (size_t j = 0; j < i; j++)
				free((char *)p[j]);
			free(p);
			return fail(x, e->line, "geoip.%s: key %zu must be a map key "
			            "or an array index, not %s", key, i + 1,
			            e->kind == YNODE_SCALAR ? "empty" :
			            e->kind == YNODE_SEQ ? "a list" : "a map");
		}
		p[i] = xstrdup(e->value);
	}
	f->path = p;
	return 0;
}

static int parse_map(ctx_t *x, const char *key, const ynode_t *v,
                     geo_field_t *f)
{
	if (v->kind != YNODE_MAP)
		return fail(x, v->line, "geoip.%s must be a map of database value: "
		            "name, e.g. { \"4134\": ctcc }", key);
	f->has_map = 1;
	f->map = xcalloc(v->n ? v->n : 1, sizeof(*f->map));
	for (size_t i = 0; i < v->n; i++) {
		const ynode_t *k = v->keys[i], *val = v->items[i];
		if (!k->value[0])
			return fail(x, k->line, "geoip.%s: empty key", key);
		if (val->kind != YNODE_SCALAR)
			return fail(x, val->line, "geoip.%s: the value of '%s' must be "
			            "a name", key, k->value);
		geo_map_entry_t *e = &f->map[f->nmap];
		if (name_copy(val->value, e->name))
			return fail(x, val->line, "geoip.%s: '%s' is not a name (1 to "
			            "%d letters, digits, '-', '_' or '.', or \"*\")",
			            key, val->value, GEO_NAME_MAX - 1);
		e->key = xstrdup(k->value);
		e->keylen = strlen(e->key);
		f->nmap++;
		for (size_t j = 0; j + 1 < f->nmap; j++)
			if (map_entry_cmp(&f->map[j], e) == 0)
				return fail(x, k->line, "geoip.%s: '%s' is given twice "
				            "(keys ignore case)", key, k->value);
	}
	qsort(f->map, f->nmap, sizeof(*f->map), map_entry_cmp);
	return 0;
}

static int parse_onoff(ctx_t *x, const ynode_t *v, int *out)
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
	return fail(x, v->line, "geoip.edns-client-subnet must be on or off");
}

static uint32_t trie_new_node(geo_trie_t *t)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 256;
		t->node = xrealloc(t->node, t->cap * sizeof(*t->node));
	}
	geo_node_t *n = &t->node[t->n];
	n->child[0] = n->child[1] = 0;
	n->entry = -1;
	return (uint32_t)t->n++;
}

static inline unsigned bit_at(const uint8_t *a, unsigned i)
{
	return a[i >> 3] >> (7 - (i & 7)) & 1;
}

/* Adds @a/@len to the trie; returns the node that holds it. */
static geo_node_t *trie_insert(geo_trie_t *t, const uint8_t *a, unsigned len)
{
	if (!t->n)
		trie_new_node(t);
	uint32_t i = 0;
	for (unsigned d = 0; d < len; d++) {
		unsigned b = bit_at(a, d);
		if (!t->node[i].child[b]) {
			uint32_t c = trie_new_node(t);  /* may move t->node */
			t->node[i].child[b] = c;
		}
		i = t->node[i].child[b];
	}
	return &t->node[i];
}

/* Parses "ADDR[/LEN]" into @a (16 bytes), the family's bit count and the
 * length.  Returns NULL or a reason. */
static const char *parse_cidr(char *s, uint8_t *a, unsigned *bits,
                              unsigned *len)
{
	char *slash = strchr(s, '/');
	if (slash)
		*slash = 0;
	memset(a, 0, 16);
	if (inet_pton(AF_INET, s, a) == 1) {
		*bits = 32;
	} else if (inet_pton(AF_INET6, s, a) == 1) {
		struct in6_addr a6;
		memcpy(&a6, a, sizeof(a6));
		*bits = 128;
		if (IN6_IS_ADDR_V4MAPPED(&a6))
			return "IPv4-mapped networks never match (clients are "
			       "looked up as IPv4): write the IPv4 network";
	} else {
		return "not an IPv4 or IPv6 network (ADDR/LEN)";
	}
	*len = *bits;
	if (slash) {
		char *end;
		const char *p = slash + 1;
		errno = 0;
		unsigned long l = strtoul(p, &end, 10);
		if (!isdigit((unsigned char)*p) || *end || errno || l > *bits)
			return *bits == 32 ? "the prefix length must be 0 to 32"
			                   : "the prefix length must be 0 to 128";
		*len = (unsigned)l;
	}
	for (unsigned i = *len; i < *bits; i++)
		if (bit_at(a, i))
			return "the address has bits set beyond the prefix length";
	return NULL;
}

/* Appends @v in decimal at @p; returns the new end. */
static char *put_dec(char *p, unsigned v)
{
	char t[10];
	int n = 0;
	do {
		t[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = t[--n];
	return p;
}

/* Writes "ADDR/LEN" for @a masked to @len into @out (64 bytes or more),
 * in RFC 5952 form for IPv6.  By hand, because snprintf and inet_ntop
 * took more time than the whole MMDB lookup. */
static void format_net(const uint8_t *a, unsigned bits, unsigned len,
                       char *out)
{
	static const char hex[] = "0123456789abcdef";
	uint8_t m[16];
	char *p = out;
	memset(m, 0, sizeof(m));
	memcpy(m, a, len / 8);
	if (len % 8)
		m[len / 8] = (uint8_t)(a[len / 8] & (0xff00 >> (len % 8)));
	if (bits == 32) {
		for (int i = 0; i < 4; i++) {
			if (i)
				*p++ = '.';
			p = put_dec(p, m[i]);
		}
	} else {
		/* The longest run of two or more zero groups becomes "::". */
		int best = -1, bestlen = 1;
		for (int i = 0; i < 8;) {
			int j = i;
			while (j < 8 && !m[2 * j] && !m[2 * j + 1])
				j++;
			if (j - i > bestlen)
				best = i, bestlen = j - i;
			i = j > i ? j : i + 1;
		}
		for (int i = 0; i < 8; i++) {
			if (i == best) {
				*p++ = ':';
				*p++ = ':';
				i += bestlen - 1;
				continue;
			}
			if (i && i != best + bestlen)
				*p++ = ':';
			unsigned w = (unsigned)m[2 * i] << 8 | m[2 * i + 1];
			int started = 0;
			for (int sh = 12; sh >= 0; sh -= 4) {
				unsigned d = w >> sh & 15;
				if (d || started || sh == 0) {
					*p++ = hex[d];
					started = 1;
				}
			}
		}
	}
	*p++ = '/';
	p = put_dec(p, len);
	*p = 0;
}

static int parse_nets_line(ctx_t *x, geo_t *g, char *s, int line)
{
	char *save = NULL, *tok = strtok_r(s, " \t\r\n", &save);
	if (!tok)
		return 0;
	uint8_t a[16];
	unsigned bits, len;
	char cidr[128];
	snprintf(cidr, sizeof(cidr), "%s", tok);
	const char *why = parse_cidr(tok, a, &bits, &len);
	if (why)
		return fail(x, line, "'%s': %s", cidr, why);
	geo_net_t net;
	memset(&net, 0, sizeof(net));
	net.line = line;
	while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
		char *eq = strchr(tok, '=');
		char *dst;
		if (eq)
			*eq = 0;
		if (eq && strcmp(tok, "region") == 0)
			dst = net.region;
		else if (eq && strcmp(tok, "isp") == 0)
			dst = net.isp;
		else
			return fail(x, line, "'%s%s': expected region=NAME or "
			            "isp=NAME", tok, eq ? "=..." : "");
		if (dst[0])
			return fail(x, line, "%s= is given twice", tok);
		if (name_copy(eq + 1, dst))
			return fail(x, line, "%s='%s' is not a name (1 to %d letters, "
			            "digits, '-', '_' or '.', or \"*\")", tok, eq + 1,
			            GEO_NAME_MAX - 1);
	}
	if (!net.region[0] && !net.isp[0])
		return fail(x, line, "%s: needs region=NAME, isp=NAME or both",
		            cidr);
	geo_node_t *n = trie_insert(&g->trie[bits == 128], a, len);
	if (n->entry >= 0) {
		char nb[64];
		format_net(a, bits, len, nb);
		return fail(x, line, "%s is already given on line %d", nb,
		            g->nets[n->entry].line);
	}
	if (g->nnets == g->capnets) {
		g->capnets = g->capnets ? 2 * g->capnets : 64;
		g->nets = xrealloc(g->nets, g->capnets * sizeof(*g->nets));
	}
	n->entry = (int32_t)g->nnets;
	g->nets[g->nnets++] = net;
	return 0;
}

static int load_nets(ctx_t *conf_x, const ynode_t *v, const conf_t *c,
                     geo_t *g)
{
	if (v->kind != YNODE_SCALAR || !v->value[0])
		return fail(conf_x, v->line, "geoip.nets must be a file name");
	char *path = conf_path(c, v->value);
	FILE *f = fopen(path, "r");
	if (!f) {
		fail(conf_x, v->line, "geoip.nets %s: %s", path, strerror(errno));
		free(path);
		return -1;
	}
	ctx_t x = { path, conf_x->err, conf_x->errlen };
	char *buf = NULL;
	size_t cap = 0;
	int line = 0, rc = 0;
	while (getline(&buf, &cap, f) >= 0) {
		line++;
		char *hash = strchr(buf, '#');
		if (hash)
			*hash = 0;
		if ((rc = parse_nets_line(&x, g, buf, line)))
			break;
	}
	if (!rc && ferror(f))
		rc = fail(&x, line, "read error: %s", strerror(errno));
	free(buf);
	fclose(f);
	free(path);
	return rc;
}

static int open_mmdb(ctx_t *x, const ynode_t *v, const conf_t *c, geo_t *g)
{
	if (v->kind != YNODE_SCALAR || !v->value[0])
		return fail(x, v->line, "geoip.database must be a file name");
	char *path = conf_path(c, v->value);
	errno = 0;
	int rc = MMDB_open(path, MMDB_MODE_MMAP, &g->mmdb);
	int e = errno;
	if (rc != MMDB_SUCCESS) {
		if ((rc == MMDB_FILE_OPEN_ERROR || rc == MMDB_IO_ERROR) && e)
			fail(x, v->line, "geoip.database %s: %s (%s)", path,
			     MMDB_strerror(rc), strerror(e));
		else
			fail(x, v->line, "geoip.database %s: %s", path,
			     MMDB_strerror(rc));
		free(path);
		return -1;
	}
	free(path);
	g->have_mmdb = 1;
	return 0;
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
		"region-map", "isp-map", "nets", "edns-client-subnet", NULL };
	geo_t *g = xcalloc(1, sizeof(*g));
	g->ecs = 1;
	ctx_t x = { c->path, err, errlen };
	const ynode_t *s = c->root ? ynode_get(c->root, "geoip") : NULL;
	if (!s)
		goto done;
	if (s->kind != YNODE_MAP) {
		fail(&x, s->line, "geoip must be a map of key: value");
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
			fail(&x, s->keys[i]->line, "unknown key '%s' in geoip", k);
			goto fail;
		}
	}
	const ynode_t *v;
	if ((v = ynode_get(s, "region")) &&
	    parse_path(&x, "region", v, &g->field[F_REGION]))
		goto fail;
	if ((v = ynode_get(s, "isp")) &&
	    parse_path(&x, "isp", v, &g->field[F_ISP]))
		goto fail;
	if ((v = ynode_get(s, "region-map")) &&
	    parse_map(&x, "region-map", v, &g->field[F_REGION]))
		goto fail;
	if ((v = ynode_get(s, "isp-map")) &&
	    parse_map(&x, "isp-map", v, &g->field[F_ISP]))
		goto fail;
	if ((v = ynode_get(s, "edns-client-subnet")) &&
	    parse_onoff(&x, v, &g->ecs))
		goto fail;
	if ((v = ynode_get(s, "database")) && open_mmdb(&x, v, c, g))
		goto fail;
	if ((v = ynode_get(s, "nets")) && load_nets(&x, v, c, g))
		goto fail;
done:
	default_path(&g->field[F_REGION], "region");
	default_path(&g->field[F_ISP], "isp");
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

/* Walks the trie along @a.  Returns the longest matching line (or NULL)
 * and sets *scope to the length of the largest block around @a on which
 * that result holds: the walk stops at depth d when the child towards @a
 * is missing, so @a/(d+1) holds no line; if the node has no child at all,
 * @a/d is the node's own network and d is enough. */
static const geo_net_t *trie_walk(const geo_t *g, const geo_trie_t *t,
                                  const uint8_t *a, unsigned bits,
                                  unsigned *scope)
{
	const geo_net_t *best = NULL;
	uint32_t i = 0;
	for (unsigned d = 0;; d++) {
		const geo_node_t *n = &t->node[i];
		if (n->entry >= 0)
			best = &g->nets[n->entry];
		if (d == bits) {
			*scope = bits;
			break;
		}
		unsigned b = bit_at(a, d);
		if (!n->child[b]) {
			*scope = n->child[!b] ? d + 1 : d;
			break;
		}
		i = n->child[b];
	}
	return best;
}

static int map_find(const geo_field_t *f, const char *s, size_t len,
                    char out[GEO_NAME_MAX])
{
	size_t lo = 0, hi = f->nmap;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const geo_map_entry_t *e = &f->map[mid];
		int r = keycmp(s, len, e->key, e->keylen);
		if (r == 0) {
			memcpy(out, e->name, GEO_NAME_MAX);
			return 1;
		}
		if (r < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return 0;
}

/* Writes @v in decimal at the end of @buf (of 24 bytes); returns the
 * start. */
static char *u64_dec(uint64_t v, int neg, char *buf, size_t *len)
{
	char *p = buf + 23;
	*p = 0;
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	if (neg)
		*--p = '-';
	*len = (size_t)(buf + 23 - p);
	return p;
}

/* Reads field @f of @entry into @out ("*" when absent or unusable). */
static void field_get(const geo_field_t *f, MMDB_entry_s *entry,
                      char out[GEO_NAME_MAX])
{
	MMDB_entry_data_s d;
	char num[24];
	const char *s;
	size_t len;
	strcpy(out, "*");
	if (MMDB_aget_value(entry, &d, f->path) != MMDB_SUCCESS || !d.has_data)
		return;
	switch (d.type) {
	case MMDB_DATA_TYPE_UTF8_STRING:
		s = d.utf8_string;
		len = d.data_size;
		break;
	case MMDB_DATA_TYPE_UINT16:
		s = u64_dec(d.uint16, 0, num, &len);
		break;
	case MMDB_DATA_TYPE_UINT32:
		s = u64_dec(d.uint32, 0, num, &len);
		break;
	case MMDB_DATA_TYPE_UINT64:
		s = u64_dec(d.uint64, 0, num, &len);
		break;
	case MMDB_DATA_TYPE_INT32:
		s = u64_dec(d.int32 < 0 ? -(uint64_t)d.int32 : (uint64_t)d.int32,
		            d.int32 < 0, num, &len);
		break;
	default:
		return;
	}
	if (f->has_map) {
		map_find(f, s, len, out);
		return;
	}
	if (len == 0 || len >= GEO_NAME_MAX)
		return;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch < 0x20 || ch == 0x7f) {
			strcpy(out, "*");
			return;
		}
		out[i] = (char)dname_lower[ch];   /* ASCII only */
	}
	out[len] = 0;
}

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
			format_net(a, bits, 0, out->network);
		return GEO_SRC_NONE;
	}

	unsigned scope = 0;
	geo_source_t src = GEO_SRC_NONE;
	const geo_net_t *net = NULL;
	const geo_trie_t *t = &g->trie[bits == 128];
	if (t->n && (net = trie_walk(g, t, a, bits, &scope)))
		src = GEO_SRC_NETS;
	int need_region = !net || !net->region[0];
	int need_isp = !net || !net->isp[0];
	if (g->have_mmdb && (need_region || need_isp)) {
		int merr;
		MMDB_lookup_result_s r = MMDB_lookup_sockaddr(&g->mmdb, q, &merr);
		/* An IPv6 client and an IPv4-only database give an error: the
		 * database says nothing about the family, so no scope. */
		if (merr == MMDB_SUCCESS) {
			unsigned nm = r.netmask;
			/* IPv4 lives in ::/96 of an IPv6 database. */
			if (bits == 32 && g->mmdb.metadata.ip_version == 6)
				nm = nm > 96 ? nm - 96 : 0;
			if (nm > scope)
				scope = nm;
			if (r.found_entry) {
				if (need_region)
					field_get(&g->field[F_REGION], &r.entry,
					          out->region);
				if (need_isp)
					field_get(&g->field[F_ISP], &r.entry, out->isp);
				if (src == GEO_SRC_NONE)
					src = GEO_SRC_MMDB;
			}
		}
	}
	if (net && !need_region)
		memcpy(out->region, net->region, GEO_NAME_MAX);
	if (net && !need_isp)
		memcpy(out->isp, net->isp, GEO_NAME_MAX);
	out->prefix_len = (uint8_t)scope;
	out->source = (uint8_t)src;
	/* Text for people only: the answer path leaves it out. */
	if (out->want_network)
		format_net(a, bits, scope, out->network);
	return src;
}
