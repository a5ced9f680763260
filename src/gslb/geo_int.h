/* SPDX-License-Identifier: MIT */
/* Internals shared by the geo files: geo.c (the geoip section and the
 * lookup that combines the sources), geo_nets.c (the operator's CIDR
 * file) and geo_mmdb.c (the MaxMind DB).  Nothing outside src/gslb/geo*
 * includes this header. */
#ifndef GSLB_GEO_INT_H
#define GSLB_GEO_INT_H

#include <maxminddb.h>
#include <stddef.h>
#include <stdint.h>

#include "common/conf.h"
#include "common/ytree.h"
#include "gslb/geo.h"

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

/* A distinct result of the compiled table (geo_compile.c): the names are
 * indexes into geo->names, so that a result takes 24 bytes, and the many
 * ranges with the same result share it. */
typedef struct {
	uint64_t lochash;           /* geo_result_t.lochash */
	uint32_t region, isp;       /* indexes into geo->names */
	uint8_t prefix_len;
	uint8_t source;
} geo_res_t;

typedef struct {
	uint64_t hi, lo;            /* an IPv6 address, host order */
} geo_key6_t;

/* The index of a range whose /64 is cut by longer networks: its result is
 * found in the fine table (IPv6 only). */
#define GEO_RES_FINE UINT32_MAX

/* One family's ranges, sorted by start; the first starts at 0, each runs
 * to the next one's start.  The key is the whole IPv4 address, or the
 * high 64 bits of the IPv6 address: a /64 inside which the result changes
 * is one range whose index is GEO_RES_FINE, and its own ranges are a
 * group of the fine part: group k is the /64 fhi[k], its ranges
 * foff[k] to foff[k + 1] - 1 of flo (the low 64 bits of their starts,
 * the first 0) and fr.  The index of range i into geo->res is r16[i]
 * when there are fewer than 65,535 distinct results (0xffff then stands
 * for GEO_RES_FINE), else r32[i]. */
typedef struct {
	size_t n;
	uint32_t *s4;               /* IPv4 starts, host order */
	uint64_t *s6;               /* IPv6 starts: the high 64 bits */
	uint16_t *r16;
	uint32_t *r32;
	size_t ng, nf;              /* cut /64s, ranges inside them */
	uint64_t *fhi;              /* the cut /64s, sorted */
	uint32_t *foff;             /* ng + 1 offsets into flo and fr */
	uint64_t *flo;
	uint32_t *fr;               /* indexes into geo->res */
} geo_ctable_t;

/* The compiled table holds at most this many ranges (both families, the
 * fine ones included); beyond it, each client is located in the sources
 * themselves.  6 bytes an IPv4 range, 10 an IPv6 one (2 more each past
 * 65,534 distinct results) and 12 one inside a cut /64: at most about
 * 190 MiB at the limit. */
#define GEO_COMPILE_MAX 16000000

struct geo {
	int have_mmdb;
	MMDB_s mmdb;
	geo_field_t field[2];       /* region, isp */
	geo_trie_t trie[2];         /* IPv4, IPv6 */
	geo_net_t *nets;
	size_t nnets, capnets;
	int ecs;
	int compile;                /* geoip.compile (default on) */
	int compiled;               /* ct and res are in use */
	geo_ctable_t ct[2];         /* IPv4, IPv6 */
	geo_res_t *res;
	size_t nres;
	char (*names)[GEO_NAME_MAX];  /* the distinct region and ISP names */
	size_t nnames;
};

enum { GEO_F_REGION, GEO_F_ISP };

/* Where a configuration error is reported: "FILE:LINE: reason" in err. */
typedef struct {
	const char *file;
	char *err;
	size_t errlen;
} geo_ctx_t;

/** Writes "FILE:LINE: " and the formatted reason into @x's error buffer.
 * Returns -1, so that parsers can `return geo__fail(...)`. */
__attribute__((format(printf, 3, 4)))
int geo__fail(geo_ctx_t *x, int line, const char *fmt, ...);

/** Checks a region or ISP name and copies it lowercased into @out:
 * 1..GEO_NAME_MAX-1 bytes of letters, digits, '-', '_', '.', or "*".
 * Returns 0 or -1. */
int geo__name_copy(const char *s, char out[GEO_NAME_MAX]);

/** Case-insensitive ASCII comparison of two counted strings, as for
 * map keys: <0, 0 or >0. */
int geo__keycmp(const char *a, size_t al, const char *b, size_t bl);

/** Reads the CIDR file named by configuration value @v (relative to the
 * configuration's directory) into @g's tries.  Returns 0, or -1 with
 * the reason in @x (the CIDR file's own line for a bad line there). */
int geo__load_nets(geo_ctx_t *x, const ynode_t *v, const conf_t *c,
                   geo_t *g);

/** Walks trie @t along address @a of @bits bits.  Returns the longest
 * matching line (or NULL) and sets *@scope to the length of the largest
 * block around @a on which that result holds. */
const geo_net_t *geo__nets_walk(const geo_t *g, const geo_trie_t *t,
                                const uint8_t *a, unsigned bits,
                                unsigned *scope);

/** Writes "ADDR/LEN" for @a (of @bits bits) masked to @len into @out
 * (64 bytes or more), in RFC 5952 form for IPv6.  Allocates nothing. */
void geo__format_net(const uint8_t *a, unsigned bits, unsigned len,
                     char *out);

/** Opens the MaxMind DB named by configuration value @v into @g.
 * Returns 0, or -1 with the reason in @x. */
int geo__open_mmdb(geo_ctx_t *x, const ynode_t *v, const conf_t *c,
                   geo_t *g);

/** Looks @q (of @bits bits: 32 or 128) up in @g's MaxMind DB, filling
 * @out's region when @need_region and ISP when @need_isp, and raising
 * *@scope to the database's netmask in the client's family.  Returns 1
 * when the database has a record for the address, else 0.  Allocates
 * nothing. */
int geo__mmdb_lookup(const geo_t *g, const struct sockaddr *q,
                     unsigned bits, int need_region, int need_isp,
                     geo_result_t *out, unsigned *scope);

/** geo_names() for the MaxMind DB of @g and field @f (GEO_F_REGION or
 * GEO_F_ISP): every search node is read once and each distinct data
 * record decoded once.  Returns 0, or -1 when a node cannot be read. */
int geo__mmdb_names(const geo_t *g, int f, geo_name_fn fn, void *arg);

/** Builds @g's compiled table from its sources (at most @limit ranges;
 * beyond that it logs and leaves @g uncompiled).  Called once, at the
 * end of geo_open(). */
void geo__compile(geo_t *g, size_t limit);

/** Frees the compiled table of @g (and marks it uncompiled). */
void geo__compiled_free(geo_t *g);

/** The compiled result for address @a of @bits bits (32: IPv4, 128).
 * Allocates nothing, takes no lock. */
const geo_res_t *geo__compiled_find(const geo_t *g, const uint8_t *a,
                                    unsigned bits);

/** The name of index @i of the compiled table of @g. */
static inline const char *geo__name(const geo_t *g, uint32_t i)
{
	return g->names[i];
}

#endif
