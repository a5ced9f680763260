/* SPDX-License-Identifier: MIT */
/* The MaxMind DB: opened in MMAP mode at load time (libmaxminddb lookups
 * on it are then safe from any number of threads), looked up per query
 * through the configured paths and value maps. */
#include "gslb/geo_int.h"
#include "common/util.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>

int geo__open_mmdb(geo_ctx_t *x, const ynode_t *v, const conf_t *c, geo_t *g)
{
	if (v->kind != YNODE_SCALAR || !v->value[0])
		return geo__fail(x, v->line, "geoip.database must be a file name");
	char *path = conf_path(c, v->value);
	errno = 0;
	int rc = MMDB_open(path, MMDB_MODE_MMAP, &g->mmdb);
	int e = errno;
	if (rc != MMDB_SUCCESS) {
		if ((rc == MMDB_FILE_OPEN_ERROR || rc == MMDB_IO_ERROR) && e)
			geo__fail(x, v->line, "geoip.database %s: %s (%s)", path,
			          MMDB_strerror(rc), strerror(e));
		else
			geo__fail(x, v->line, "geoip.database %s: %s", path,
			          MMDB_strerror(rc));
		free(path);
		return -1;
	}
	free(path);
	g->have_mmdb = 1;
	return 0;
}

static int map_find(const geo_field_t *f, const char *s, size_t len,
                    char out[GEO_NAME_MAX])
{
	size_t lo = 0, hi = f->nmap;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const geo_map_entry_t *e = &f->map[mid];
		int r = geo__keycmp(s, len, e->key, e->keylen);
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

int geo__mmdb_lookup(const geo_t *g, const struct sockaddr *q,
                     unsigned bits, int need_region, int need_isp,
                     geo_result_t *out, unsigned *scope)
{
	int merr;
	MMDB_lookup_result_s r = MMDB_lookup_sockaddr(&g->mmdb, q, &merr);
	/* An IPv6 client and an IPv4-only database give an error: the
	 * database says nothing about the family, so no scope. */
	if (merr != MMDB_SUCCESS)
		return 0;
	unsigned nm = r.netmask;
	/* IPv4 lives in ::/96 of an IPv6 database. */
	if (bits == 32 && g->mmdb.metadata.ip_version == 6)
		nm = nm > 96 ? nm - 96 : 0;
	if (nm > *scope)
		*scope = nm;
	if (!r.found_entry)
		return 0;
	if (need_region)
		field_get(&g->field[GEO_F_REGION], &r.entry, out->region);
	if (need_isp)
		field_get(&g->field[GEO_F_ISP], &r.entry, out->isp);
	return 1;
}

/* A set of data offsets (each stored plus one: 0 is a free slot), open
 * addressing, at most half full. */
typedef struct {
	uint64_t *slot;
	size_t cap, n;
} offset_set_t;

/* Adds @off to @s; returns 1 when it was not there yet. */
static int offset_add(offset_set_t *s, uint64_t off)
{
	if (2 * (s->n + 1) > s->cap) {
		offset_set_t b = { xcalloc(s->cap ? 2 * s->cap : 1024, sizeof(uint64_t)),
		                   s->cap ? 2 * s->cap : 1024, 0 };
		for (size_t i = 0; i < s->cap; i++)
			if (s->slot[i])
				offset_add(&b, s->slot[i] - 1);
		free(s->slot);
		*s = b;
	}
	/* Fibonacci hashing: offsets are spread, but aligned. */
	size_t h = (size_t)((off * 0x9E3779B97F4A7C15ull) >> 20) & (s->cap - 1);
	for (; s->slot[h]; h = (h + 1) & (s->cap - 1))
		if (s->slot[h] == off + 1)
			return 0;
	s->slot[h] = off + 1;
	s->n++;
	return 1;
}

int geo__mmdb_names(const geo_t *g, int f, geo_name_fn fn, void *arg)
{
	offset_set_t seen = { NULL, 0, 0 };
	int rc = 0;
	/* Every node of the tree once, in storage order: the records of
	 * both families and of every depth, without following paths. */
	for (uint32_t i = 0; i < g->mmdb.metadata.node_count; i++) {
		MMDB_search_node_s node;
		if (MMDB_read_node((MMDB_s *)&g->mmdb, i, &node) != MMDB_SUCCESS) {
			rc = -1;
			break;
		}
		for (int side = 0; side < 2; side++) {
			uint8_t type = side ? node.right_record_type : node.left_record_type;
			MMDB_entry_s e = side ? node.right_record_entry : node.left_record_entry;
			if (type != MMDB_RECORD_TYPE_DATA || !offset_add(&seen, e.offset))
				continue;
			char name[GEO_NAME_MAX];
			field_get(&g->field[f], &e, name);
			if (strcmp(name, "*") != 0)
				fn(name, arg);
		}
	}
	free(seen.slot);
	return rc;
}
