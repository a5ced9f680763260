/* SPDX-License-Identifier: MIT */
/* The operator's CIDR file (geoip.nets): parsed into one binary trie per
 * family at load time, walked per query for the longest matching line
 * and the ECS scope around the client.  Written only inside geo_open(). */
#include "gslb/geo_int.h"
#include "common/util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* By hand, because snprintf and inet_ntop took more time than the whole
 * MMDB lookup. */
void geo__format_net(const uint8_t *a, unsigned bits, unsigned len,
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

static int parse_nets_line(geo_ctx_t *x, geo_t *g, char *s, int line)
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
		return geo__fail(x, line, "'%s': %s", cidr, why);
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
			return geo__fail(x, line, "'%s%s': expected region=NAME or "
			                 "isp=NAME", tok, eq ? "=..." : "");
		if (dst[0])
			return geo__fail(x, line, "%s= is given twice", tok);
		if (geo__name_copy(eq + 1, dst))
			return geo__fail(x, line, "%s='%s' is not a name (1 to %d letters, "
			                 "digits, '-', '_' or '.', or \"*\")", tok, eq + 1,
			                 GEO_NAME_MAX - 1);
	}
	if (!net.region[0] && !net.isp[0])
		return geo__fail(x, line, "%s: needs region=NAME, isp=NAME or both",
		                 cidr);
	geo_node_t *n = trie_insert(&g->trie[bits == 128], a, len);
	if (n->entry >= 0) {
		char nb[64];
		geo__format_net(a, bits, len, nb);
		return geo__fail(x, line, "%s is already given on line %d", nb,
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

int geo__load_nets(geo_ctx_t *conf_x, const ynode_t *v, const conf_t *c,
                     geo_t *g)
{
	if (v->kind != YNODE_SCALAR || !v->value[0])
		return geo__fail(conf_x, v->line, "geoip.nets must be a file name");
	char *path = conf_path(c, v->value);
	FILE *f = fopen(path, "r");
	if (!f) {
		geo__fail(conf_x, v->line, "geoip.nets %s: %s", path, strerror(errno));
		free(path);
		return -1;
	}
	geo_ctx_t x = { path, conf_x->err, conf_x->errlen };
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
		rc = geo__fail(&x, line, "read error: %s", strerror(errno));
	free(buf);
	fclose(f);
	free(path);
	return rc;
}

/* Walks the trie along @a.  Returns the longest matching line (or NULL)
 * and sets *scope to the length of the largest block around @a on which
 * that result holds: the walk stops at depth d when the child towards @a
 * is missing, so @a/(d+1) holds no line; if the node has no child at all,
 * @a/d is the node's own network and d is enough. */
const geo_net_t *geo__nets_walk(const geo_t *g, const geo_trie_t *t,
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
