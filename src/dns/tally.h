/* SPDX-License-Identifier: MIT */
/* The GSLB answer tally: per query thread, how many answers each
 * (service, row, node) got — the traffic share per node per region and
 * ISP that the statistics endpoint exports.
 *
 * A fixed-size open-addressing table, allocated at start (only when the
 * statistics endpoint is configured), so counting allocates nothing and
 * takes no lock: the owning thread is the only writer.  An entry's
 * strings are written before its key is published with a release store;
 * a reader on another thread (the main thread, at a scrape) loads the key
 * with acquire and then reads the strings and the count, which the owner
 * updates with relaxed atomic stores.  When the table is full, answers
 * for new combinations are counted as overflow rather than lost
 * silently. */
#ifndef GSLB_TALLY_H
#define GSLB_TALLY_H

#include <stddef.h>
#include <stdint.h>

#include "gslb/gslb.h"

/* Combinations kept per thread: services x rows x nodes answered by one
 * thread.  1024 entries of about 400 bytes: 400 KiB a thread. */
#define TALLY_SLOTS 1024
/* How far a key probes before the answer counts as overflow. */
#define TALLY_PROBE 16

typedef struct tally_entry {
	uint64_t key;             /* 0: empty; published last (release) */
	uint64_t count;           /* relaxed atomic; owner writes only */
	uint8_t level;            /* gslb_row_t of the row */
	char service[256];
	char region[32];          /* the row's region, "*" for any */
	char isp[32];             /* the row's ISP, "*" for any */
	char node[64];            /* "" when no node was picked */
} tally_entry_t;

typedef struct tally {
	tally_entry_t slot[TALLY_SLOTS];
	uint64_t overflow;        /* relaxed atomic */
} tally_t;

/** A new, empty tally (NULL-safe to free with free()). */
tally_t *tally_new(void);

/** Counts one answer of service @svc (@len bytes, lowercase, no final
 * dot) from result @g: one per picked node, or one with no node when
 * nothing was picked.  @t may be NULL (counting off). */
void tally_add(tally_t *t, const char *svc, size_t len, const gslb_result_t *g);

/** Calls @fn for each entry with a count (any thread). */
void tally_each(const tally_t *t,
                void (*fn)(const tally_entry_t *e, uint64_t count, void *arg),
                void *arg);

/** Answers that found no free entry (any thread). */
uint64_t tally_overflow(const tally_t *t);

#endif
