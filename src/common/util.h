/* SPDX-License-Identifier: MIT */
/* Error codes, allocation that aborts on failure, and wire-format domain
 * name helpers shared by the zone loader and the query path.
 *
 * The dname_* functions work on uncompressed wire names (length-prefixed
 * labels ending with the root label) and never allocate, so the query path
 * may call them. */
#ifndef GSLB_UTIL_H
#define GSLB_UTIL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <string.h>

/* Errors: 0 or a negative code mirroring errno (the libuv model). */
#define GSLB_ENOMEM   (-ENOMEM)
#define GSLB_EINVAL   (-EINVAL)
#define GSLB_ENOENT   (-ENOENT)
#define GSLB_EEXIST   (-EEXIST)
#define GSLB_ERANGE   (-ERANGE)
#define GSLB_EIO      (-EIO)
#define GSLB_EPARSE   (-EBADMSG)
#define GSLB_ENOSPC   (-ENOSPC)
/* A conditional write found what it was decided from changed since:
 * nothing was written; decide again from the newer data. */
#define GSLB_EAGAIN   (-EAGAIN)

/** Returns a static description of a GSLB_E* code. */
const char *gslb_strerror(int err);

/** malloc/calloc/realloc/strdup that abort the process when memory is
 * exhausted (allowed at load time only, never on the query path). */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
void *xmemdup(const void *p, size_t n);

#define DNAME_MAXLEN 255
#define DNAME_MAXLABELS 128

/** Lowercase table for ASCII; bytes >= 0x80 map to themselves. */
extern const uint8_t dname_lower[256];

/** Length of the uncompressed wire name at @n (including the root label),
 * or 0 if it is longer than @max bytes or malformed. */
size_t dname_len(const uint8_t *n, size_t max);

/** Number of labels of wire name @n, not counting the root label. */
unsigned dname_labels(const uint8_t *n);

/** Copies wire name @src to @dst in lowercase; returns its length. */
size_t dname_copy_lower(uint8_t *dst, const uint8_t *src);

/** Case-insensitive equality of two uncompressed wire names. */
int dname_equal(const uint8_t *a, const uint8_t *b);

/** Returns a pointer to the suffix of @n that has @keep labels. */
const uint8_t *dname_suffix(const uint8_t *n, unsigned keep);

/** Returns non-zero if @n equals @zone or lies below it. */
int dname_is_sub(const uint8_t *n, const uint8_t *zone);

/** A hash of a wire name, case-insensitive, for in-memory tables. */
uint32_t dname_hash(const uint8_t *n);

/** dname_hash() of a name whose length in bytes @len is known. */
uint32_t dname_hash_len(const uint8_t *n, size_t len);

/** Parses the possibly compressed name at @pkt[*pos] into @out
 * (uncompressed, original case), advancing *pos past it.  Returns the
 * name length, or 0 if the name is malformed (bad pointer, pointer loop,
 * overlong label or name, truncated). */
size_t dname_unpack(const uint8_t *pkt, size_t len, size_t *pos,
                    uint8_t *out);

/** Advances *pos past the possibly compressed name at @pkt[*pos] without
 * following pointers.  Returns 0, or -1 if malformed. */
int dname_skip(const uint8_t *pkt, size_t len, size_t *pos);

/** Writes the presentation form of wire name @n ("www.example.") into
 * @buf of @size bytes (escaping as RFC 1035 §5.1) and returns @buf. */
char *dname_to_str(const uint8_t *n, char *buf, size_t size);

/** Parses presentation name @s (absolute or relative to nothing: a final
 * dot is optional) into wire form; returns its length or 0 on error. */
size_t dname_from_str(const char *s, uint8_t *out);

/** The edit distance between @a and @b: the fewest insertions,
 * deletions, substitutions and swaps of two neighbouring characters
 * that turn one into the other (optimal string alignment), as for "did
 * you mean" hints.  Allocates while it runs; frees before it returns. */
unsigned util_edit_distance(const char *a, const char *b);

/** Seconds of CLOCK_MONOTONIC_COARSE: a cheap clock (vDSO, no system
 * call) for liveness beats, which need neither precision nor wall time. */
static inline int64_t util_mono_sec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (int64_t)ts.tv_sec;
}

/** Milliseconds of CLOCK_MONOTONIC, for deadlines and durations. */
static inline int64_t util_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/** The CLOCK_REALTIME time @ms milliseconds from now, as
 * pthread_cond_timedwait() takes a deadline. */
static inline struct timespec util_deadline_ms(unsigned ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	return ts;
}

static inline uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}
static inline uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}
static inline void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}
static inline void wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

/* The names of the bits set in @bits (bit i named @names[i], @n names),
 * comma-separated, in @buf of @size; "-" when none is set.  Returns @buf. */
const char *util_flags_text(const char *const *names, unsigned n, unsigned bits,
                            char *buf, size_t size);

#endif
