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
 * The layout (geo_int.h geo_ctable_t): per range a start and a 16- or
 * 32-bit index into the distinct results, whose names are shared too;
 * IPv6 keyed by its high 64 bits, a /64 cut finer found in the fine part.
 *
 * Thread safety: built inside geo_open(), read-only afterwards; the
 * lookup allocates nothing and takes no lock. */
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

/* An open-addressing set of indexes + 1 into an array of items of one
 * size (0 = free), to give each distinct item one index. */
typedef struct {
	uint32_t *slot;
	size_t cap;
} dedup_t;

typedef struct {
	geo_t *g;
	unsigned bits;              /* 32 or 128 */
	geo_ctable_t *t;
	size_t cap, fcap;
	size_t limit;               /* ranges over all families */
	size_t *total;
	dedup_t dres, dname;
	int fine;                   /* inside a cut IPv6 /64 */
	int over;
} build_t;

/* The index of @item (of @size bytes) in *@arr of *@n items, appended
 * when new. */
static uint32_t dedup(dedup_t *d, void **arr, size_t *n, size_t size,
                      const void *item)
{
	if (*n * 2 >= d->cap) {
		size_t ncap = d->cap ? d->cap * 2 : 1024;
		uint32_t *s = xcalloc(ncap, sizeof(*s));
		for (size_t i = 0; i < *n; i++) {
			size_t h = hash_fnv64((char *)*arr + i * size, size) & (ncap - 1);
			while (s[h])
				h = (h + 1) & (ncap - 1);
			s[h] = (uint32_t)i + 1;
		}
		free(d->slot);
		d->slot = s;
		d->cap = ncap;
	}
	size_t h = hash_fnv64(item, size) & (d->cap - 1);
	while (d->slot[h]) {
		if (memcmp((char *)*arr + (d->slot[h] - 1) * size, item, size) == 0)
			return d->slot[h] - 1;
		h = (h + 1) & (d->cap - 1);
	}
	if ((*n & (*n - 1)) == 0)       /* 0, 1, 2, 4...: double */
		*arr = xrealloc(*arr, (*n ? *n * 2 : 1) * size);
	memcpy((char *)*arr + *n * size, item, size);
	d->slot[h] = (uint32_t)++*n;
	return (uint32_t)(*n - 1);
}

static uint32_t name_id(build_t *b, const char *name)
{
	char k[GEO_NAME_MAX] = { 0 };
	memcpy(k, name, strnlen(name, GEO_NAME_MAX - 1));
	return dedup(&b->dname, (void **)&b->g->names, &b->g->nnames, sizeof(k), k);
}

static uint32_t result_id(build_t *b, const geo_result_t *r)
{
	geo_res_t k;
	memset(&k, 0, sizeof(k));
	k.region = name_id(b, r->region);
	k.isp = name_id(b, r->isp);
	k.prefix_len = r->prefix_len;
	k.source = r->source;
	k.lochash = (hash_words(r->region, strlen(r->region), 0) *
	             0x9E3779B97F4A7C15ull ^
	             hash_words(r->isp, strlen(r->isp), 0)) | 1;
	return dedup(&b->dres, (void **)&b->g->res, &b->g->nres, sizeof(k), &k);
}

/* The first @n bytes of @a as a big-endian number. */
static inline uint64_t load_be(const uint8_t *a, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v = v << 8 | a[i];
	return v;
}

/* Appends a range of the fine part (the group of the cut /64 begun
 * last) starting at @a with result @id. */
static void append_fine(build_t *b, const uint8_t *a, uint32_t id)
{
	geo_ctable_t *t = b->t;
	if (t->nf > t->foff[t->ng - 1] && t->fr[t->nf - 1] == id)
		return;
	if (*b->total >= b->limit) {
		b->over = 1;
		return;
	}
	if (t->nf == b->fcap) {
		b->fcap = b->fcap ? b->fcap * 2 : 64;
		t->fr = xrealloc(t->fr, b->fcap * sizeof(*t->fr));
		t->flo = xrealloc(t->flo, b->fcap * sizeof(*t->flo));
	}
	t->flo[t->nf] = load_be(a + 8, 8);
	t->fr[t->nf++] = id;
	(*b->total)++;
}

/* Begins the group of the cut /64 @a in the fine part. */
static void begin_group(build_t *b, const uint8_t *a)
{
	geo_ctable_t *t = b->t;
	if ((t->ng & (t->ng - 1)) == 0) {   /* 0, 1, 2, 4...: double */
		size_t cap = t->ng ? t->ng * 2 : 1;
		t->fhi = xrealloc(t->fhi, cap * sizeof(*t->fhi));
		t->foff = xrealloc(t->foff, (cap + 1) * sizeof(*t->foff));
	}
	t->fhi[t->ng] = load_be(a, 8);
	t->foff[t->ng++] = (uint32_t)t->nf;
	t->foff[t->ng] = (uint32_t)t->nf;
}

/* Appends a range starting at @a with result @id to the table (or to its
 * fine part), unless it continues the range before it. */
static void append(build_t *b, const uint8_t *a, uint32_t id)
{
	geo_ctable_t *t = b->t;
	if (b->fine) {
		append_fine(b, a, id);
		return;
	}
	if (t->n && t->r32[t->n - 1] == id)   /* cut /64s too: by fhi */
		return;
	if (*b->total >= b->limit) {
		b->over = 1;
		return;
	}
	if (t->n == b->cap) {
		b->cap = b->cap ? b->cap * 2 : 256;
		t->r32 = xrealloc(t->r32, b->cap * sizeof(*t->r32));
		if (b->bits == 32)
			t->s4 = xrealloc(t->s4, b->cap * sizeof(*t->s4));
		else
			t->s6 = xrealloc(t->s6, b->cap * sizeof(*t->s6));
	}
	if (b->bits == 32)
		t->s4[t->n] = (uint32_t)load_be(a, 4);
	else
		t->s6[t->n] = load_be(a, 8);
	t->r32[t->n++] = id;
	(*b->total)++;
}

/* Block @a is one cell: locate its first address, append or extend. */
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
	append(b, a, result_id(b, &r));
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
	/* A /64 cut finer: one range of the table, whose own ranges go to
	 * the fine part.  Every /64 holds the same result throughout but for
	 * these, so the table's IPv6 keys are 64 bits. */
	int cut = b->bits == 128 && d == 64;
	if (cut) {
		append(b, a, GEO_RES_FINE);
		begin_group(b, a);
		b->fine = 1;
	}
	for (unsigned bit = 0; bit < 2; bit++) {
		if (bit)
			a[d / 8] |= (uint8_t)(0x80 >> (d % 8));
		walk(b, a, d + 1, mm_child(b->g, mm, bit), n ? n->child[bit] : 0, 0);
		if (bit)
			a[d / 8] &= (uint8_t)~(0x80 >> (d % 8));
	}
	if (cut) {
		b->fine = 0;
		b->t->foff[b->t->ng] = (uint32_t)b->t->nf;
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

/* Gives @t's arrays their final sizes, and its indexes 16 bits when
 * @nres allows. */
static void shrink(geo_ctable_t *t, size_t nres)
{
	size_t n = t->n ? t->n : 1;
	if (t->s4)
		t->s4 = xrealloc(t->s4, n * sizeof(*t->s4));
	if (t->s6)
		t->s6 = xrealloc(t->s6, n * sizeof(*t->s6));
	if (t->nf) {
		t->flo = xrealloc(t->flo, t->nf * sizeof(*t->flo));
		t->fr = xrealloc(t->fr, t->nf * sizeof(*t->fr));
	}
	if (t->ng) {
		t->fhi = xrealloc(t->fhi, t->ng * sizeof(*t->fhi));
		t->foff = xrealloc(t->foff, (t->ng + 1) * sizeof(*t->foff));
	}
	if (nres < UINT16_MAX && t->r32) {
		t->r16 = xcalloc(n, sizeof(*t->r16));
		for (size_t i = 0; i < t->n; i++)
			t->r16[i] = t->r32[i] == GEO_RES_FINE ? UINT16_MAX
			                                      : (uint16_t)t->r32[i];
		free(t->r32);
		t->r32 = NULL;
	} else if (t->r32) {
		t->r32 = xrealloc(t->r32, n * sizeof(*t->r32));
	}
}

void geo__compile(geo_t *g, size_t limit)
{
	size_t total = 0;
	build_t b = { .g = g, .limit = limit, .total = &total };
	for (unsigned f = 0; f < 2 && !b.over; f++) {
		uint8_t a[16] = { 0 };
		b.bits = f ? 128 : 32;
		b.t = &g->ct[f];
		b.cap = b.fcap = 0;
		uint32_t mm = mm_start(g, b.bits);
		walk(&b, a, 0, mm, 0, 1);
	}
	free(b.dres.slot);
	free(b.dname.slot);
	if (b.over) {
		geo__compiled_free(g);
		log_notice("geoip: more than %zu distinct networks; locating each "
		           "client in the database itself (slower per query)", limit);
		return;
	}
	for (unsigned f = 0; f < 2; f++)
		shrink(&g->ct[f], g->nres);
	g->res = xrealloc(g->res, (g->nres ? g->nres : 1) * sizeof(*g->res));
	g->names = xrealloc(g->names, (g->nnames ? g->nnames : 1) *
	                    sizeof(*g->names));
	g->compiled = 1;
	log_info("geoip: %zu IPv4 and %zu IPv6 ranges (%zu inside cut /64s), "
	         "%zu distinct results, %zu names", g->ct[0].n,
	         g->ct[1].n + g->ct[1].nf, g->ct[1].nf, g->nres, g->nnames);
}

void geo__compiled_free(geo_t *g)
{
	for (int f = 0; f < 2; f++) {
		geo_ctable_t *t = &g->ct[f];
		free(t->s4);
		free(t->s6);
		free(t->r16);
		free(t->r32);
		free(t->fhi);
		free(t->foff);
		free(t->flo);
		free(t->fr);
		memset(t, 0, sizeof(*t));
	}
	free(g->res);
	free(g->names);
	g->res = NULL;
	g->names = NULL;
	g->nres = g->nnames = 0;
	g->compiled = 0;
}

/* The result index of range @i of @t. */
static inline uint32_t res_at(const geo_ctable_t *t, size_t i)
{
	if (t->r16)
		return t->r16[i] == UINT16_MAX ? GEO_RES_FINE : t->r16[i];
	return t->r32[i];
}

/* The result index for IPv6 address @a inside a cut /64: its group
 * (the /64 found among the cut ones), then the last range of the group
 * starting at or before @a (the first starts at the /64). */
static uint32_t fine_find(const geo_ctable_t *t, const uint8_t *a)
{
	uint64_t hi = load_be(a, 8), k = load_be(a + 8, 8);
	size_t lo = 0, n = t->ng;
	while (n > 1) {
		size_t half = n / 2;
		if (t->fhi[lo + half] <= hi)
			lo += half;
		n -= half;
	}
	size_t first = t->foff[lo];
	n = t->foff[lo + 1] - first;
	lo = first;
	while (n > 1) {
		size_t half = n / 2;
		if (t->flo[lo + half] <= k)
			lo += half;
		n -= half;
	}
	return t->fr[lo];
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
		return &g->res[res_at(t, lo)];
	}
	uint64_t k = load_be(a, 8);
	while (n > 1) {
		size_t half = n / 2;
		if (t->s6[lo + half] <= k)
			lo += half;
		n -= half;
	}
	uint32_t id = res_at(t, lo);
	return &g->res[id == GEO_RES_FINE ? fine_find(t, a) : id];
}
