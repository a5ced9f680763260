/* SPDX-License-Identifier: MIT */
/* What steering (steer_run.c) and nearest steering (nearest_run.c)
 * share in deciding a weight row: the walk of the row's nodes with the
 * shares in force and the figures the last evaluation kept, the codec
 * of the fields every recorded input has (S3-7: a decision holds what
 * its step read, so that replaying it gives the same shares), and the
 * audit note the decisions of one run are worded into (gray releases'
 * too).
 *
 * Thread safety: none of its own; the transaction's rules apply. */
#ifndef GSLB_STEER_DECIDE_H
#define GSLB_STEER_DECIDE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "steer/steer.h"
#include "store/weightdb.h"

/** A weight row being decided. */
typedef struct {
	char region[WDB_NAME_MAX + 1], isp[WDB_NAME_MAX + 1];
	json_t *weights;      /* the operator's weights (the row's) */
	json_t *applied;      /* the weights in force (plan_row_weights()) */
	int steered;          /* they are an engine's shares */
	json_t *state;        /* the row's steering state (owned), or NULL */
} steer_walk_t;

/** One node of the row as both engines read it. */
typedef struct {
	const char *id;       /* into the row */
	uint32_t base;        /* the operator's weight */
	int32_t applied;      /* its share in force, bp; -1: the operator's
	                         weights are in force */
	json_t *sn;           /* its figures in the state, or NULL */
	int has_ema;
	double ema;           /* its smoothed figure there */
} steer_walk_node_t;

/** Begins the walk of weight row @key (@row) in @t.  Returns 0, or -1
 * when @key names no region and ISP (nothing to decide). */
int steer_walk_begin(wdb_txn_t *t, const char *key, json_t *row, steer_walk_t *w);

/** Drops the walk's state (the engine may have replaced it). */
void steer_walk_end(steer_walk_t *w);

/** The row's nodes, in its order, into @out (room for STEER_MAX_NODES;
 * nodes past that are not steered).  Returns their number. */
unsigned steer_walk_nodes(const steer_walk_t *w, steer_walk_node_t *out);

/** A recorded input's common fields: a new object {"id", "base",
 * "prev"}, to which the engine adds its own. */
json_t *steer_decision_in(const char *id, uint32_t base, int32_t prev);

/** Reads the common fields of recorded input @e into @id (@size bytes),
 * *@base and *@prev.  Returns 0, or -1 when @e has no id. */
int steer_decision_node(json_t *e, char *id, size_t size, uint32_t *base,
                        int32_t *prev);

/** Appends the words of @fmt to the audit note @buf (@size bytes, *@len
 * used), cut at @size. */
void steer_note(char *buf, size_t size, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
