/* SPDX-License-Identifier: MIT */
/* Nearest steering's arithmetic: per weight row (region, ISP), the
 * usable nodes ranked by smoothed latency, the row's choice kept until
 * another node is better by the switch margin for NEAREST_CONFIRM
 * evaluations in a row, and the row's shares filled in that order up to
 * each node's capacity minus the headroom (S4-1, S4-3, S4-4, S4-5, S4-7,
 * S1-6).
 *
 * Everything here is pure: no I/O, no allocation, no clock, no state
 * between calls; any thread may call it.  Shares are basis points of the
 * row (STEER_TOTAL), written into the weight row exactly like the
 * steering engine's (steer.h), so the query path reads them through the
 * plan and costs the same. */
#ifndef GSLB_NEAREST_H
#define GSLB_NEAREST_H

#include <stdint.h>

#include "steer/steer.h"

/* S4-5: a better node must stay better by the margin in this many
 * consecutive evaluations before the row moves to it. */
#define NEAREST_CONFIRM 2

/* S4-3: a node less than this many points of its capacity below its
 * limit keeps its share.  The load of a finite set of sticky clients
 * does not follow the share exactly (a share of 72.7 % of 200 client
 * subnets can be 75 % of them): raising the share at every dip below
 * the limit would take the node over it at the next step. */
#define NEAREST_CAP_BAND 5.0

#define NEAREST_MARGIN_DEFAULT "15%"
#define NEAREST_HEADROOM_DEFAULT 20.0   /* S1-6: keep 20 % spare */

/** A nearest service's settings (gslbctl service set --steering nearest). */
typedef struct nearest_conf {
	double margin;            /* the switch margin (S4-5) ... */
	int margin_ms;            /* ... in ms when set, else in percent of
	                             the current node's latency */
	double headroom;          /* % of a node's capacity kept free */
	double alpha;             /* EMA factor per evaluation (S4-7) */
	double min_step;          /* share points: a spill move smaller than
	                             this on every node is not made */
} nearest_conf_t;

/** One node of a row as nearest steering sees it. */
typedef struct nearest_in {
	char id[STEER_ID_MAX];
	uint32_t base;            /* the operator's weight; 0: not a candidate */
	int usable;               /* 0: failed hard (demoted, drained, down,
	                             out for the SLA): leaves at once (S4-4) */
	int has_latency;
	double latency;           /* this evaluation's latency for the row, ms */
	int has_ema;
	double ema;               /* smoothed latency before this step */
	int has_load;
	double load;              /* % of its capacity in use (bandwidth) */
	int load_new;             /* the load was measured since the last step */
	uint32_t load_at;         /* when (kept for the next step) */
	double cap_prev;          /* the limit the last step set, 0..1 */
	int32_t prev;             /* applied share, bp; -1: none yet */
} nearest_in_t;

/** A row's state between evaluations; -1 for no node. */
typedef struct nearest_row {
	int current;              /* the row's choice (index into the row) */
	int challenger;           /* the node better by the margin ... */
	unsigned streak;          /* ... in this many evaluations in a row */
} nearest_row_t;

/* Why a node got the share it got (nearest_out_t.limits). */
enum {
	NEAREST_LIM_DOWN = 1,     /* failed hard: no share */
	NEAREST_LIM_NODATA = 2,   /* no latency for the row: ranked after
	                             the measured nodes, by weight; the
	                             row's choice keeps its last smoothed
	                             latency instead */
	NEAREST_LIM_CAP = 4,      /* held to capacity minus headroom */
	NEAREST_LIM_SPILL = 8,    /* takes what nearer nodes could not */
	NEAREST_LIM_FULL = 16,    /* every node is at its capacity: the rest
	                             stays on the row's choice */
	NEAREST_LIM_MIN = 32,     /* the move was below min-step: not made */
};

/** One node after a step. */
typedef struct nearest_out {
	int has_ema;
	double ema;               /* smoothed latency, ms */
	unsigned rank;            /* 1 = the row's choice; 0: not a candidate */
	double cap;               /* the most of the row it may take, 0..1 */
	uint32_t share;           /* bp applied from now */
	unsigned limits;          /* NEAREST_LIM_* */
} nearest_out_t;

/** What a step decided. */
typedef enum {
	NEAREST_KEEP = 0,         /* nothing changed */
	NEAREST_FIRST,            /* the row's first choice */
	NEAREST_PENDING,          /* a better node, not yet confirmed */
	NEAREST_SWITCH,           /* better by the margin, confirmed: moved */
	NEAREST_HARD,             /* the choice (or a spill node) failed hard:
	                             moved at once */
	NEAREST_SPILL,            /* same choice, shares moved for capacity */
	NEAREST_NONE,             /* no usable candidate: shares unchanged */
} nearest_verdict_t;

/* S4-6: the most live vantages (name servers) of one node read for a
 * row; a delegation has a handful of name servers, never this many. */
#define NEAREST_VANTAGE_MAX 16
/* The longest instance, region or ISP name of a vantage, with the NUL
 * (cluster.name and the vantage's names; longer ones are cut). */
#define NEAREST_VNAME_MAX 64

/** One live vantage's view of a node (S4-6): the instance that probes
 * it, where from, and its probes' time. */
typedef struct nearest_vantage {
	char name[NEAREST_VNAME_MAX];
	char region[NEAREST_VNAME_MAX], isp[NEAREST_VNAME_MAX];
	int ok;                   /* it has probe results, all of them good */
	double ms;                /* their mean total time, ms */
	uint32_t at;              /* when the view was taken (unix time) */
} nearest_vantage_t;

/** Fills @out[0..@max) with the live vantages' views of node @node
 * (cluster mode: every instance's published view, S4-6) and returns how
 * many. */
typedef unsigned (*nearest_vantage_fn)(void *arg, const char *node,
                                       nearest_vantage_t *out, unsigned max);

/** Where a node's latency for a row came from (S4-1, S4-6), in the
 * order of precedence: the most specific measurement wins, and at equal
 * specificity the clients' own (pushed) over the name servers' probes. */
typedef enum {
	NEAREST_SRC_NONE = 0,     /* no fresh latency: ranked after the rest */
	NEAREST_SRC_PUSHED,       /* pushed for the row's region (and ISP) */
	NEAREST_SRC_PROBE_ISP,    /* probes from vantages in the row's region
	                             and ISP */
	NEAREST_SRC_PROBE_REGION, /* probes from vantages in its region */
	NEAREST_SRC_PUSHED_WIDE,  /* pushed for the ISP alone, or for the
	                             node as a whole */
} nearest_src_t;

/** The latency of a node for the row (@region, @isp) at @now (S4-1,
 * S4-6).  @pushed_level: which of the node's pushed input records gave a
 * fresh latency @pushed (steer__row_input(): 1 the row's region and
 * ISP, 2 its region alone, 3 its ISP alone, 4 the node as a whole; 0
 * none).  @v[0..@nv): the live vantages' views of the node; a view
 * counts when its probes all succeeded and it is at most @fresh seconds
 * old.  The choice: pushed at levels 1-2; else the mean of the views
 * from the row's region and ISP; else of those from its region; else
 * pushed at levels 3-4; else none.  A row of region "*" has no vantage.
 * @nv is at most NEAREST_VANTAGE_MAX.  The latency goes into *@ms, and
 * into *@used the views averaged (bit i for @v[i]; 0 for a pushed one).
 * Returns the source. */
nearest_src_t nearest_latency_source(int pushed_level, double pushed,
                                     const nearest_vantage_t *v, unsigned nv,
                                     const char *region, const char *isp,
                                     uint32_t now, uint32_t fresh, double *ms,
                                     uint32_t *used);

/** Parses switch margin @s ("15%", "15" or "10ms") into *@v and *@ms.
 * Returns 0, or -1 when it is not a percentage in (0, 100) or a time in
 * (0, 10000] ms. */
int nearest_margin_parse(const char *s, double *v, int *ms);

/** Whether smoothed latency @cand is better than @cur by margin @c. */
int nearest_better(const nearest_conf_t *c, double cand, double cur);

/** The order of row @in[0..@n) into @order (indices; returns how many):
 * usable candidates with latency by smoothed latency, then those without
 * by weight (highest first); ties keep the row's order.  @ema[i] and
 * @has[i] are the smoothed latencies. */
unsigned nearest_rank(unsigned n, const nearest_in_t *in, const double *ema,
                      const int *has, unsigned *order);

/** Fills row fractions @share[0..@m) of the nodes @order[0..@m) (@cap
 * their capacity limits, 0..1) in that order: each takes what it may of
 * what the ones before left; what nobody may take goes to the first.
 * Sets NEAREST_LIM_* in @lim[order[k]].  Returns 1 when everyone was
 * full, else 0. */
int nearest_fill(unsigned m, const unsigned *order, const double *cap,
                 double *share, unsigned *lim);

/** The most of the row node @in may take under @c: with a fresh load of
 * L % and room R = 100 - headroom, a node serving P of the row may serve
 * P * R / L (its load is taken to follow its shares, so every row scaling
 * this way brings it to R), or keeps P while R - NEAREST_CAP_BAND <= L <=
 * R; a node serving none of it may take the rest while L < R.  1 without load data.  A load already acted on keeps the
 * last limit (@in->cap_prev): the controller moves on new measurements
 * only, or one figure would shrink the share at every step. */
double nearest_cap(const nearest_conf_t *c, const nearest_in_t *in);

/** One evaluation of a row of @n nodes (@n <= STEER_MAX_NODES) from
 * state @was into @row and @out[0..@n).  @hard_only: an evaluation
 * between the regular ones, after a hard failure: latencies, loads and
 * streaks are not stepped, and only a failed node with a share moves
 * anything.  Returns what it decided. */
nearest_verdict_t nearest_step(const nearest_conf_t *c, unsigned n,
                               const nearest_in_t *in, const nearest_row_t *was,
                               int hard_only, nearest_row_t *row,
                               nearest_out_t *out);

/** The word for verdict @v ("keep", "first", ...). */
const char *nearest_verdict_name(nearest_verdict_t v);

/** The text of limits @lim (NEAREST_LIM_*), comma-separated, into
 * @buf; "-" for none.  Returns @buf. */
const char *nearest_limits_text(unsigned lim, char *buf, unsigned size);

#endif
