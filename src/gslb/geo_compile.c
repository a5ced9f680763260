/* SPDX-License-Identifier: MIT */
/* The compiled location table: at load, the address space of each family
 * is cut into the blocks on which geo_lookup()'s result cannot change,
 * each block is located once by the full lookup (geo_lookup() before the
 * table exists) (CIDR file, MaxMind DB,
 * paths, maps, scope), and a query then costs one binary search instead
 * of a trie walk, an MMDB tree walk and the decoding of the record's
 * fields (the per-query cost of the ECS path, docs/BENCHMARKS.md).
 *
 * The blocks: both sources are binary tries over the address bits (the
 * CIDR file's trie, the MaxMind DB's search tree), and the full lookup
 * reads nothing but the path of the address through each.  Below a
 * point where neither trie branches any more (the MMDB reached a record
 * or the empty network, the CIDR trie has no deeper line), every address
 * takes the same path and gets the same result, scope included.  So the
 * common refinement of the two tries is a partition into CIDR blocks on
 * each of which the result is constant, and one lookup per block gives
 * exactly what the full lookup would give for any address in it.
 * Adjacent blocks with the same result are merged into one range.
 *
 * Thread safety: built inside geo_open(), read-only afterwards. */
#include "gslb/geo_int.h"
#include "common/hash.h"
#include "common/log.h"
#include "common/util.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

/* The MMDB side of a position in the walk: a search node, or a leaf (a
 * record or the empty network: nothing below it differs). */
#define MM_LEAF UINT32_MAX

typedef struct {
	geo_t *g;
	unsigned bits;              /* 32 or 128 */
	geo_ctable_t *t;
	size_t cap;
	size_t limit;               /* ranges over all families */
	size_t *total;
	uint32_t *hidx;             /* result dedup: index + 1, 0 = free */
	size_t hcap;
	int over;
} build_t;

static uint32_t result_id(build_t *b, const geo_result_t *r)
{
	geo_t *g = b->g;
	geo_res_t k;
	memset(&k, 0, sizeof(k));
	memcpy(k.region, r->region, GEO_NAME_MAX);
	memcpy(k.isp, r->isp, GEO_NAME_MAX);
	k.prefix_len = r->prefix_len;
	k.source = r->source;
	k.lochash = (hash_words(k.region, strlen(k.region), 0) *
	             0x9E3779B97F4A7C15ull ^
	             hash_words(k.isp, strlen(k.isp), 0)) | 1;
	if (g->nres * 2 >= b->hcap) {
		size_t ncap = b->hcap ? b->hcap * 2 : 1024;
		uint32_t *n = xcalloc(ncap, sizeof(*n));
		for (size_t i = 0; i < g->nres; i++) {
			size_t h = hash_fnv64(&g->res[i], sizeof(g->res[i])) & (ncap - 1);
			while (n[h])
				h = (h + 1) & (ncap - 1);
			n[h] = (uint32_t)i + 1;
		}
		free(b->hidx);
		b->hidx = n;
		b->hcap = ncap;
	}
	size_t h = hash_fnv64(&k, sizeof(k)) & (b->hcap - 1);
	while (b->hidx[h]) {
		if (memcmp(&g->res[b->hidx[h] - 1], &k, sizeof(k)) == 0)
			return b->hidx[h] - 1;
		h = (h + 1) & (b->hcap - 1);
	}
	g->res = xrealloc(g->res, (g->nres + 1) * sizeof(*g->res));
	g->res[g->nres] = k;
	b->hidx[h] = (uint32_t)++g->nres;
	return (uint32_t)(g->nres - 1);
}

/* The first @n bytes of @a as a big-endian number. */
static inline uint64_t load_be(const uint8_t *a, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v = v << 8 | a[i];
	return v;
}

/* Block @a/@d is one cell: locate its first address, append or extend. */
static void emit(build_t *b, const uint8_t *a)
{
	geo_result_t r;
	memset(&r, 0, sizeof(r));
	if (b->bits == 32) {
		struct sockaddr_in s = { .sin_family = AF_INET };
		memcpy(&s.sin_addr, a, 4);
		geo_lookup(b->g, (const struct sockaddr *)&s, &r);
	} else {
		struct sockaddr_in6 s = { .sin6_family = AF_INET6 };
		memcpy(&s.sin6_addr, a, 16);
		geo_lookup(b->g, (const struct sockaddr *)&s, &r);
	}
	uint32_t id = result_id(b, &r);
	geo_ctable_t *t = b->t;
	if (t->n && t->res[t->n - 1] == id)
		return;
	if (*b->total >= b->limit) {
		b->over = 1;
		return;
	}
	if (t->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 256;
		t->res = xrealloc(t->res, b->cap * sizeof(*t->res));
		if (b->bits == 32)
			t->s4 = xrealloc(t->s4, b->cap * sizeof(*t->s4));
		else
			t->s6 = xrealloc(t->s6, b->cap * sizeof(*t->s6));
	}
	if (b->bits == 32)
		t->s4[t->n] = load_be(a, 4);
	else
		t->s6[t->n] = (geo_key6_t){ load_be(a, 8), load_be(a + 8, 8) };
	t->res[t->n++] = id;
	(*b->total)++;
}

/* The record of side @bit of MMDB search node @node: a node or MM_LEAF. */
static uint32_t mm_child(const geo_t *g, uint32_t node, unsigned bit)
{
	MMDB_search_node_s e;
	if (node == MM_LEAF ||
	    MMDB_read_node((MMDB_s *)&g->mmdb, node, &e) != MMDB_SUCCESS)
		return MM_LEAF;
	uint8_t type = bit ? e.right_record_type : e.left_record_type;
	uint64_t rec = bit ? e.right_record : e.left_record;
	return type == MMDB_RECORD_TYPE_SEARCH_NODE ? (uint32_t)rec : MM_LEAF;
}

/* Walks block @a/@d, @mm in the MMDB tree, @tn in the CIDR trie (0: no
 * line below; the root is never reached again as a child). */
static void walk(build_t *b, uint8_t *a, unsigned d, uint32_t mm,
                 uint32_t tn, int at_root)
{
	if (b->over)
		return;
	const geo_trie_t *tr = &b->g->trie[b->bits == 128];
	const geo_node_t *n = (tn || at_root) && tr->n ? &tr->node[tn] : NULL;
	int split = d < b->bits &&
	            (mm != MM_LEAF || (n && (n->child[0] || n->child[1])));
	/* An IPv4-mapped IPv6 address is located as IPv4: the IPv6 table
	 * never sees ::ffff:0:0/96, so it stays one block. */
	static const uint8_t v4mapped[12] = { [10] = 0xff, [11] = 0xff };
	if (b->bits == 128 && d == 96 && memcmp(a, v4mapped, 12) == 0)
		split = 0;
	if (!split) {
		emit(b, a);
		return;
	}
	for (unsigned bit = 0; bit < 2; bit++) {
		if (bit)
			a[d / 8] |= (uint8_t)(0x80 >> (d % 8));
		walk(b, a, d + 1, mm_child(b->g, mm, bit), n ? n->child[bit] : 0, 0);
		if (bit)
			a[d / 8] &= (uint8_t)~(0x80 >> (d % 8));
	}
}

/* The MMDB node where family @bits starts, or MM_LEAF (no database, no
 * tree for the family, or one record for all of it). */
static uint32_t mm_start(const geo_t *g, unsigned bits)
{
	if (!g->have_mmdb)
		return MM_LEAF;
	uint16_t v = g->mmdb.metadata.ip_version;
	if (bits == 128 && v == 4)
		return MM_LEAF;
	uint32_t node = 0;
	if (bits == 32 && v == 6)
		for (int i = 0; i < 96 && node != MM_LEAF; i++)
			node = mm_child(g, node, 0);
	return node;
}

void geo__compile(geo_t *g, size_t limit)
{
	size_t total = 0;
	build_t b = { .g = g, .limit = limit, .total = &total };
	for (unsigned f = 0; f < 2 && !b.over; f++) {
		uint8_t a[16] = { 0 };
		b.bits = f ? 128 : 32;
		b.t = &g->ct[f];
		b.cap = 0;
		uint32_t mm = mm_start(g, b.bits);
		walk(&b, a, 0, mm, 0, 1);
	}
	free(b.hidx);
	if (b.over) {
		geo__compiled_free(g);
		log_notice("geoip: more than %zu distinct networks; locating each "
		           "client in the database itself (slower per query)", limit);
		return;
	}
	g->compiled = 1;
	log_info("geoip: %zu IPv4 and %zu IPv6 ranges, %zu distinct results",
	         g->ct[0].n, g->ct[1].n, g->nres);
}

void geo__compiled_free(geo_t *g)
{
	for (int f = 0; f < 2; f++) {
		free(g->ct[f].s4);
		free(g->ct[f].s6);
		free(g->ct[f].res);
		memset(&g->ct[f], 0, sizeof(g->ct[f]));
	}
	free(g->res);
	g->res = NULL;
	g->nres = 0;
	g->compiled = 0;
}

const geo_res_t *geo__compiled_find(const geo_t *g, const uint8_t *a,
                                    unsigned bits)
{
	const geo_ctable_t *t = &g->ct[bits == 128];
	size_t lo = 0, n = t->n;    /* the last start <= a; start[0] is 0 */
	if (bits == 32) {
		uint32_t k = (uint32_t)load_be(a, 4);
		while (n > 1) {
			size_t half = n / 2;
			if (t->s4[lo + half] <= k)
				lo += half;
			n -= half;
		}
	} else {
		geo_key6_t k = { load_be(a, 8), load_be(a + 8, 8) };
		while (n > 1) {
			size_t half = n / 2;
			const geo_key6_t *m = &t->s6[lo + half];
			if (m->hi < k.hi || (m->hi == k.hi && m->lo <= k.lo))
				lo += half;
			n -= half;
		}
	}
	return &g->res[t->res[lo]];
}
