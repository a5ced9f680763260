/* SPDX-License-Identifier: MIT */
/* Unannounced cutovers: telling an area (a region and ISP) whose nodes
 * fall together from one noisy node, and when such an area has
 * recovered (S0-1, S0-2, S0-8, S2-6).
 *
 * Pure functions: no I/O, no allocation, no globals.  The health thread
 * (health.c) counts, once per evaluation, the nodes of each area that
 * are falling, steps the area's state here, and opens or closes an
 * automatic cutover window in the store when this says so; the window
 * then acts as an announced one (cutover.h). */
#ifndef GSLB_AUTOCUT_H
#define GSLB_AUTOCUT_H

#include "common/conf.h"

/** The cutover.auto-* settings (see gslbd.conf(5)). */
typedef struct autocut_conf {
	int on;                   /* cutover.auto: detection on (on) */
	unsigned min_nodes;       /* falling nodes that make an area fall (3) */
	double share;             /* ... and at least this share of its nodes
	                             with a known score (0.5) */
	double drop;              /* score points under the node's own stable
	                             score that make it falling (10) */
	unsigned confirm;         /* consecutive falling evaluations that
	                             open a window (2, S0-8) */
	unsigned recover;         /* consecutive recovered evaluations that
	                             close it (3, S0-8) */
	unsigned derate;          /* weight of the area's nodes in an
	                             automatic window, % (0: impact-medium) */
	double max_open;          /* longest an automatic window stays open,
	                             s (21600) */
} autocut_conf_t;

/** An area's state between evaluations; starts zeroed. */
typedef struct autocut_area {
	unsigned falling_rounds;  /* consecutive evaluations falling */
	unsigned ok_rounds;       /* consecutive evaluations recovered, while
	                             open */
	int open;                 /* an automatic window is open for it */
} autocut_area_t;

typedef enum {
	AUTOCUT_KEEP = 0,         /* nothing to do */
	AUTOCUT_OPEN,             /* open an automatic window now */
	AUTOCUT_CLOSE             /* the area recovered: end the window now */
} autocut_action_t;

/** Sets the defaults of @c. */
void autocut_conf_default(autocut_conf_t *c);

/** Reads key @k (value @v) of the cutover section if it is one of the
 * auto-* keys ("auto", "auto-min-nodes", ...).  Returns 1 when it was,
 * 0 when it is another key, -1 with "FILE:LINE: reason" in @err. */
int autocut_conf_key(const conf_t *c, const char *k, const ynode_t *v,
                     autocut_conf_t *o, char *err, size_t errlen);

/** Whether a node is falling: its @score (< 0: unknown, never falling)
 * is @c->drop points or more under its stable score @stable (< 0: not
 * learnt yet), or under @usable; or the verdict has it out or derated
 * (@out). */
int autocut_node_falling(const autocut_conf_t *c, double score, double stable,
                         double usable, int out);

/** The node's stable score after an evaluation with @score: a slow
 * average (1/16 per evaluation) learnt only while the node is not
 * falling and its area has no window open (@learn), so a degrading area
 * does not become its own reference.  @stable < 0: the first score. */
double autocut_stable(double stable, double score, int learn);

/** Whether an area with @known nodes of known score, @falling of them
 * falling, falls together this evaluation: at least min_nodes and at
 * least share of @known. */
int autocut_area_falls(const autocut_conf_t *c, unsigned known,
                       unsigned falling);

/** Steps area @a by one evaluation with @known and @falling, and says
 * what to do.  An area opens after confirm consecutive falling
 * evaluations, and closes after recover consecutive ones in which at
 * most (min_nodes - 1) / 2 of its nodes are falling (hysteresis: a
 * single noisy node neither opens nor holds a window). */
autocut_action_t autocut_step(const autocut_conf_t *c, autocut_area_t *a,
                              unsigned known, unsigned falling);

#endif
