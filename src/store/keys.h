/* SPDX-License-Identifier: MIT */
/* Key codecs of the weight store's rows: the "service|region|isp" key of
 * a weight row and of its plan, composed, split and classified in one
 * place so that the separator and the shapes are known once.
 *
 * Every function here is pure: no I/O, no allocation, and any number of
 * threads may call them at once.  A service name never holds the
 * separator (gslbctl refuses such names), and region and ISP names are
 * words without it, so splitting at the first two separators is exact. */
#ifndef GSLB_KEYS_H
#define GSLB_KEYS_H

#include <stddef.h>

/* The separator between the fields of a row key. */
#define WDB_KEY_SEP '|'

/* The shape of a row: which of its fields are the wildcard "*". */
typedef enum {
	WDB_ROW_REGION_ISP = 0,   /* (region, ISP) */
	WDB_ROW_REGION,           /* (region, *) */
	WDB_ROW_ISP,              /* (*, ISP) */
	WDB_ROW_DEFAULT,          /* (*, *) */
} wdb_row_kind_t;

/* The fields of a row key, pointing into the key (not NUL-terminated). */
typedef struct wdb_row_parts {
	const char *svc, *region, *isp;
	size_t svc_len, region_len, isp_len;
} wdb_row_parts_t;

/** Composes the key of row (@svc of @svclen bytes, @region, @isp) into
 * @buf of @size bytes, NUL-terminated.  Returns the key's length without
 * the NUL, or 0 (and an empty @buf when @size > 0) when it does not fit. */
size_t wdb_row_keyn(char *buf, size_t size, const char *svc, size_t svclen,
                    const char *region, const char *isp);

/** wdb_row_keyn() for a NUL-terminated @svc.  Returns @buf, which holds
 * the empty string (never a row's key) when the key does not fit. */
const char *wdb_row_key(char *buf, size_t size, const char *svc,
                        const char *region, const char *isp);

/** Writes "@svc|", the prefix shared by every row key of service @svc,
 * into @buf of @size bytes (for wdb_each()).  Returns its length, or 0
 * (and an empty @buf when @size > 0) when it does not fit. */
size_t wdb_row_prefix(char *buf, size_t size, const char *svc);

/** Splits row key @key of @len bytes into @out.  The service part is
 * always filled (the whole key when there is no separator); region and
 * ISP only when the key has both separators.  Returns 0 for a key of
 * three fields, -1 otherwise. */
int wdb_row_split(const char *key, size_t len, wdb_row_parts_t *out);

/** The region and ISP of row key @key, NUL-terminated, into @region and
 * @isp of @size bytes each (cut to fit).  Returns 0, or -1 for a key that
 * is no row's. */
int wdb_row_area(const char *key, char *region, char *isp, size_t size);

/** The shape of a split row key (wdb_row_split() returned 0). */
wdb_row_kind_t wdb_row_kind(const wdb_row_parts_t *p);

#endif
