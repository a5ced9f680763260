/* SPDX-License-Identifier: MIT */
/* The steering engine's arithmetic: from measured success, latency and
 * cost per node of one weight row to the row's next shares (S3-3, S3-5,
 * S3-6, S3-8, S3-9, S2-3, S2-7).
 *
 * Everything here is pure: no I/O, no allocation, no clock of its own
 * (the caller passes the time), no state between calls.  Any thread may
 * call it.  The same inputs always give the same shares, which is what
 * `gslbctl steer replay` relies on (S3-7).
 *
 * Shares are integers in basis points of a row (STEER_TOTAL = 100 %), so
 * that a decision stored as JSON and read back is bit for bit the one
 * that was made. */
#ifndef GSLB_STEER_H
#define GSLB_STEER_H

#include <stddef.h>
#include <stdint.h>

#define STEER_TOTAL 10000u        /* a row's shares add up to this */
#define STEER_MAX_NODES 64        /* nodes per row (PLAN_MAX_NODES) */
#define STEER_MAX_WINDOWS 3       /* aggregation windows (S3-9) */
#define STEER_MAX_SAMPLES 64      /* samples kept per input */
#define STEER_ID_MAX 64

/** The steer section of gslbd.conf (see gslbd.conf(5)). */
typedef struct steer_conf {
	double interval;          /* s between evaluations (60, S3-3) */
	double tau;               /* EMA time constant, s (300, S3-3) */
	unsigned windows[STEER_MAX_WINDOWS]; /* s (60, 300, 900; S3-9) */
	unsigned nwindows;
	double stale;             /* an input older than this is stale (300,
	                             S2-7) */
	double skew;              /* s a pushed sample may be dated ahead of
	                             this clock (60): later is refused, and
	                             never read as a measurement of now */
	double min_step;          /* share points: smaller moves are not made
	                             (2, S3-3) */
	double max_step;          /* share points per node per evaluation
	                             (10, S3-8) */
	double max_hour;          /* share points per node per change
	                             window (50, S3-8) */
	double change_window;     /* evaluations: the window of max_hour (60,
	                             an hour at the default interval; S3-8),
	                             so that it compresses with interval */
	double sharpness;         /* the exponent of the smoothed score in a
	                             target share (3, S3-3) */
	double floor;             /* share points every candidate keeps (5) */
	double headroom;          /* % of a node's capacity kept free: the
	                             ceiling of its share (20, S1-6) */
	double sla;               /* success below this, twice, takes a node
	                             out (98 %, S3-5) */
	unsigned sla_after;       /* consecutive evaluations below (2, S3-9) */
	unsigned restore_after;   /* consecutive evaluations at or above the
	                             SLA to come back (3, S0-8) */
	double success_good, success_bad;  /* % (99.9, 95; S2-3) */
	double latency_good, latency_bad;  /* ms (20, 200; S2-3) */
	double budget_boost;      /* cost weight factor past a budget's alert
	                             level (3, S3-6) */
	double input_keep;        /* s an input record not pushed again is
	                             kept (1 day; 0: for ever); never less
	                             than the longest window and stale */
	double spend_keep;        /* s a spend record is kept after the end
	                             of its budget period (400 days, S3-6;
	                             0: for ever) */
} steer_conf_t;

/** The weights of a service's score terms (S3-3; --policy, --weights). */
typedef struct steer_policy {
	double success, latency, cost;
} steer_policy_t;

/** One timestamped measurement; a NaN field was not measured. */
typedef struct steer_sample {
	uint32_t time;
	double success;           /* % of requests that succeeded */
	double latency;           /* ms */
} steer_sample_t;

/** One candidate node of a row, as the engine sees it. */
typedef struct steer_in {
	char id[STEER_ID_MAX];
	uint32_t base;            /* the operator's weight */
	int has_success, has_latency, has_cost;
	double success;           /* aggregated (steer_aggregate()) */
	double success_now;       /* the shortest window's median: the SLA
	                             assertion's input */
	double latency;
	double cost;              /* price per GB */
	int over_budget;          /* its provider passed the alert level */
	int32_t prev;             /* applied share, -1: the operator's */
	int has_ema;
	double ema;               /* smoothed score before this step */
	unsigned sla_low, sla_good; /* consecutive evaluations */
	int sla_out;              /* out for the SLA (S3-5) */
	uint32_t hour_start;      /* the change window's start (S3-8) */
	uint32_t hour_moved;      /* share moved in it, basis points */
	int dir;                  /* the way its share last moved: -1, 0, 1 */
	int has_ceiling;
	uint32_t ceiling;         /* the most its capacity allows, bp (S1-6;
	                             steer_ceilings()) */
} steer_in_t;

/* What limited or shaped a node's share (steer_out_t.limits). */
enum {
	STEER_LIM_FLOOR = 1,      /* raised to the floor */
	STEER_LIM_STEP = 2,       /* the move was cut to max-step */
	STEER_LIM_HOUR = 4,       /* the move was cut by max-change */
	STEER_LIM_MIN = 8,        /* the move was below min-step: not made */
	STEER_LIM_SLA = 16,       /* out for the SLA */
	STEER_LIM_BUDGET = 32,    /* its provider is over the budget alert */
	STEER_LIM_UNKNOWN = 64,   /* no fresh input: scored conservatively */
	STEER_LIM_ALLSLA = 128,   /* every node is below the SLA: none out */
	STEER_LIM_CAPACITY = 256, /* held at its capacity ceiling (S1-6) */
	STEER_LIM_HOLD = 512,     /* a move back against its last one, smaller
	                             than twice min-step: not made */
	STEER_LIM_RETURN = 1024,  /* no fresh input for the row: on its way
	                             back to the operator's weights (S2-7) */
};

/** The engine's view of one node after a step. */
typedef struct steer_out {
	double ns, nl, nc;        /* normalised inputs, -1: not used */
	double raw;               /* score of this step, 0..1 */
	double ema;               /* smoothed score */
	int has_ema;              /* 0: the smoothing starts afresh */
	unsigned sla_low, sla_good;
	int sla_out;
	uint32_t target;          /* where the score wants it, bp */
	uint32_t share;           /* the share applied from now, bp */
	unsigned limits;          /* STEER_LIM_* */
	uint32_t hour_start, hour_moved;
	int dir;                  /* the way its share last moved */
} steer_out_t;

/** What a step decided for the row. */
typedef enum {
	STEER_KEEP = 0,           /* shares unchanged */
	STEER_CHANGE,             /* new shares */
	STEER_REVERT,             /* no fresh input at all, and the shares
	                             are back at the operator's weights
	                             (S2-7): the engine lets go of the row */
} steer_verdict_t;

/** The length in seconds of the change window of @c (S3-8):
 * change_window evaluations of interval seconds. */
double steer_change_window_s(const steer_conf_t *c);

/** Fills @c with the defaults of gslbd.conf(5). */
void steer_conf_default(steer_conf_t *c);

/** How long pushed samples are read and kept under @c, in seconds: the
 * longest window, or the staleness limit if that is longer.  A push
 * older than this could never count. */
double steer_conf_keep(const steer_conf_t *c);

/** The policy named @name ("live", "vod" or "custom", whose weights are
 * the defaults 0.5, 0.3, 0.2).  Returns 0, or -1 for an unknown name. */
int steer_policy_named(const char *name, steer_policy_t *out);

/** Linear normalisation (S2-3): 1 at or better than @good, 0 at or worse
 * than @bad, linear between; works both ways (@good above or below
 * @bad). */
double steer_normalize(double v, double good, double bad);

/** Aggregates field @which (0 success, 1 latency) of samples @s[0..@n)
 * at @now (S3-9): the median of each window (which drops outliers), then
 * the mean of the windows that hold a sample.  *@now_out (may be NULL)
 * gets the shortest non-empty window's median.  Returns 1 with the value
 * in *@out when the newest sample of that field is fresh (S2-7), else 0. */
int steer_aggregate(const steer_conf_t *c, const steer_sample_t *s,
                    unsigned n, uint32_t now, int which, double *out,
                    double *now_out);

#define STEER_PERIOD_MAX 366  /* days of the longest budget period */

/** Reads a budget period: "month" (0: the calendar month, UTC), "day"
 * (1), "week" (7) or "Nd", N from 1 to STEER_PERIOD_MAX days, into
 * *@days.  Returns 0, or -1 for anything else. */
int steer_period_parse(const char *text, unsigned *days);

/** The text of period @days (steer_period_parse()) into @buf: "month",
 * "day", "week" or "Nd".  Returns @buf. */
const char *steer_period_text(unsigned days, char *buf, size_t size);

/** The period of @days that holds @t, [*@start, *@end) in unix time:
 * the calendar month (UTC) for 0, else the run of @days days counted
 * from Monday 1970-01-05 00:00 UTC (a day for 1, a week from Monday for
 * 7). */
void steer_period_bounds(unsigned days, uint32_t t, uint32_t *start,
                         uint32_t *end);

/** Whether spend @spent of a budget of @limit per period @days
 * (steer_period_bounds()) passes @alert_pct of the budget pro-rated to
 * the part of the period gone at @now (at least a thirtieth of it, so
 * that the first hours of a period do not turn any spend into an alert)
 * (S3-6).  Returns 0 (within), 1 (past the alert level) or 2 (past the
 * whole limit). */
int steer_budget_state(double limit, double alert_pct, double spent,
                       unsigned days, uint32_t now);

/** The demand of a row (S1-6), in the unit of its nodes' capacities,
 * estimated from the @n nodes @in with a capacity @cap[i] > 0, a known
 * load @util[i] (percent of capacity; NaN unknown) and a share above 0
 * (in[i].prev, or the operator's share when the row has none): their
 * load over their share.  Returns it, or 0 when it is unknown. */
double steer_demand(unsigned n, const double *cap, const double *util,
                    const steer_in_t *in);

/** The capacity ceilings (S1-6) of the @n nodes @in of a row whose
 * demand is @demand (steer_demand(); 0: unknown, no ceiling): node i
 * with capacity @cap[i] > 0 may carry at most (100 - @headroom) % of it.
 * Sets in[i].has_ceiling and in[i].ceiling (basis points, at most
 * STEER_TOTAL).  Returns how many got one. */
unsigned steer_ceilings(double headroom, unsigned n, const double *cap,
                        double demand, steer_in_t *in);

/** Rounds shares @x[0..@n) (adding up to about 1; negative ones count
 * as 0) to basis points in @out adding up to STEER_TOTAL exactly: floors,
 * then the largest remainders (ties to the lower index) get the points
 * left, so the result is deterministic.  All zero when nothing is
 * positive. */
void steer_round_shares(const double *x, unsigned n, uint32_t *out);

/** One evaluation of a row of @n nodes (@n <= STEER_MAX_NODES) at @now:
 * scores, smooths, aims each node at its weight times its smoothed
 * score to the power sharpness, applies the SLA, floor, capacity
 * ceilings (the excess goes to the other candidates by score), holds a
 * small move back against a node's last one, applies the step and
 * change-window limits and fills @out[0..@n).  A row without any fresh
 * input moves back to the operator's weights under the same limits and
 * is let go (STEER_REVERT) once there.  Returns what it decided. */
steer_verdict_t steer_step(const steer_conf_t *c, const steer_policy_t *p,
                           uint32_t now, unsigned n, const steer_in_t *in,
                           steer_out_t *out);

#endif
