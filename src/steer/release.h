/* SPDX-License-Identifier: MIT */
/* Gray releases (S4-10): a new node answers a growing, stable share of a
 * service's clients, watched by guards, widened step by step and rolled
 * back at once when a guard breaks.
 *
 * This file is the pure part: the record's codec and checks, the parsers
 * of the operator's steps, durations and guards, and release_step(), the
 * decision of one evaluation.  No I/O, no clock of its own (the caller
 * passes the time), no state between calls; any thread may call it.
 *
 * A release lives in its service's object as "release" (gslbctl writes
 * it, the health thread's release_run() moves it, both audited):
 *   {"node": ID, "region": R, "isp": I (both optional: any),
 *    "steps": [1, 5, 25, 50, 100] (percent), "every": seconds,
 *    "guards": ["score>=80", "success>=99", "latency<=200"],
 *    "state": "running" | "paused" | "rolled-back" | "aborted" |
 *             "completed",
 *    "step": index of the current step, "percent": the share in force,
 *    "since": when the current step (or a resume) began, "started": T,
 *    "reason": why it last changed}
 * The plans of the rows it concerns carry the share (store/plan.h). */
#ifndef GSLB_RELEASE_H
#define GSLB_RELEASE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#define RELEASE_MAX_STEPS 16
#define RELEASE_MAX_GUARDS 8
#define RELEASE_EVERY_MIN 1u           /* s: time-compressed drills */
#define RELEASE_EVERY_MAX (30u * 86400) /* s: a month per step at most */

typedef enum { RELEASE_SCORE = 0, RELEASE_SUCCESS, RELEASE_LATENCY } release_metric_t;

/** One guard: @metric must stay >= (@at_least) or <= @value. */
typedef struct release_guard {
	release_metric_t metric;
	int at_least;
	double value;
} release_guard_t;

typedef enum {
	RELEASE_RUNNING = 0, RELEASE_PAUSED, RELEASE_ROLLED_BACK, RELEASE_ABORTED,
	RELEASE_COMPLETED, RELEASE_STATE_COUNT
} release_state_t;

/** A release as release_step() reads it. */
typedef struct release {
	release_state_t state;
	unsigned nsteps;
	uint32_t steps[RELEASE_MAX_STEPS];  /* basis points, increasing */
	unsigned step;                      /* index of the current step */
	uint32_t every;                     /* s each step is watched */
	uint32_t since;                     /* start of the current step */
	unsigned nguards;
	release_guard_t guard[RELEASE_MAX_GUARDS];
} release_t;

/** What the controller measured for one guard since the step began.
 * @value is a figure only with @has or @early: a guard whose figure
 * does not exist is never read (neither held nor broken by it). */
typedef struct release_obs {
	int has;                  /* 0: no input since the step began */
	double value;
	int early;                /* has 0, but @value is a figure of the
	                             second the step began: it may predate
	                             the step, so it never holds the guard,
	                             and breaks it only after a widening
	                             (the node was serving the release) */
	int stale;                /* neither: the node had the figure, but
	                             none since the step began (or its score
	                             rests on stale inputs); 0 with neither:
	                             it has no such figure at all */
	const char *why;          /* neither: why there is no figure, for
	                             the log and release show (static text,
	                             may be NULL) */
} release_obs_t;

typedef enum {
	RELEASE_KEEP = 0,         /* nothing to do yet */
	RELEASE_WAIT,             /* the step is due but a guard has no
	                             input over it: not widened */
	RELEASE_WIDEN,            /* on to the next step */
	RELEASE_COMPLETE,         /* the next step is 100 %: done, the node
	                             is a normal node of its rows */
	RELEASE_ROLLBACK,         /* a guard broke: back to 0 % at once */
} release_verdict_t;

/** One evaluation of release @r at @now with the observations @obs
 * (one per guard).  A guard broken in a running or paused release rolls
 * it back (*@broken: its index), an early figure included past the
 * first step (a push in the second a widening took effect must not wait
 * for the next second; one in the second of the start may be of the
 * node before the release); a running release whose step has lasted
 * @r->every with every guard held widens, or completes when the next
 * step is 100 %; one that reached its last step below 100 % holds
 * there.  Returns the verdict. */
release_verdict_t release_step(const release_t *r, const release_obs_t *obs,
                               uint32_t now, int *broken);

/** The observation @o of guard @g as text into @buf: "success 99.5",
 * or, without a figure, "success: none (WHY)" or "success: stale
 * (WHY)".  Returns @buf. */
const char *release_obs_text(const release_guard_t *g, const release_obs_t *o,
                             char *buf, size_t size);

/** Whether observation @v keeps guard @g. */
int release_guard_holds(const release_guard_t *g, double v);

/** Parses steps @s ("1,5,25,50,100": percent, strictly increasing, in
 * (0, 100], at most two decimals, at least one below 100) into @steps
 * (basis points) and *@n.  Returns 0 or -1 with the reason in @err. */
int release_parse_steps(const char *s, uint32_t *steps, unsigned *n,
                        char *err, size_t errlen);

/** Parses duration @s ("90", "90s", "10m", "2h", "1d") into *@secs,
 * within RELEASE_EVERY_MIN..RELEASE_EVERY_MAX.  Returns 0 or -1 with the
 * reason in @err. */
int release_parse_every(const char *s, uint32_t *secs, char *err, size_t errlen);

/** Parses guard @s ("score>=80", "success>=99", "latency<=150") into
 * @g.  Score and success are kept from below (>=), latency (ms) from
 * above (<=).  Returns 0 or -1 with the reason in @err. */
int release_parse_guard(const char *s, release_guard_t *g, char *err, size_t errlen);

/** The guard's text as the operator writes it, into @buf.  Returns @buf. */
const char *release_guard_text(const release_guard_t *g, char *buf, size_t size);

/** The name of @state ("running", ...), and back (-1: unknown). */
const char *release_state_name(release_state_t state);
int release_state_of(const char *name);

/** Reads and checks release record @j into @r.  Returns 0 or -1 with
 * what is wrong in @err. */
int release_from_json(json_t *j, release_t *r, char *err, size_t errlen);

/** The percentage of basis points @bp as a JSON number (an integer when
 * whole).  A new reference. */
json_t *release_pct_json(uint32_t bp);

#endif
