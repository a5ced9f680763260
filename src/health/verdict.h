/* SPDX-License-Identifier: MIT */
/* The verdict: the health state machine of one node as a pure function.
 * Given the node's decision state, the scores of one round (score.c) and
 * the configuration, it returns the next state and a reason code; no
 * I/O, no logging, no clock, no allocation.  The health thread applies
 * the decision, writes it to the store and words the reason for the log
 * and the audit record.
 *
 *   up (>= good, full weight) <-> derated (usable..good, weight x
 *     derate-factor), with a margin around the good boundary (S4-5);
 *   up or derated -> demoted after demote-after consecutive degraded
 *     rounds (score below usable, or two abnormal dimensions at once, or
 *     a passive failure-rate fault: S0-8, S1-4, S1-2; an affected node
 *     inside an announced cutover window needs cutover.confirm-rounds
 *     instead, passed in the round), or at once on a
 *     confirmed hard failure: every probe fails to connect, confirmed by
 *     another probe path or by a second, immediate probe (S4-4, S0-8);
 *   demoted -> restored after restore-after consecutive good rounds,
 *     twice that per recent flap (S0-8, S4-7);
 *   one abnormal dimension alone for two rounds is low confidence: a
 *     gray switch moves gray-share away; after gray-watch seconds the
 *     moved share doubles every gray-step seconds while the alternates
 *     are healthy, and at 100 % the node is demoted; a round without the
 *     abnormal dimension cancels it (S1-10);
 *   a node without probes is judged on its pushed metrics alone: each
 *   push is a round, the failure rate above its limit for the window
 *   demotes it after demote-after rounds and restore-after rounds below
 *   the limit restore it (S1-2, S3-5, S0-8);
 *   a node whose inputs all went stale is marked stale and handled by
 *   health.stale: keep the last verdict, derate it, or demote it; a node
 *   that never had an input changes nothing (S2-7).
 *
 * Thread safety: none needed; everything is passed in and out. */
#ifndef GSLB_VERDICT_H
#define GSLB_VERDICT_H

#include <stdint.h>

#include "health/health_conf.h"
#include "health/score.h"

/* Points beyond the good boundary a score must go to switch between up
 * and derated (S4-5): about the spread that scheduling noise alone gives
 * the latency and jitter dimensions of a healthy node probed over a busy
 * loop (measured with 10,000 nodes: probe times of 50-120 ms). */
#define VERDICT_GRADE_MARGIN 5.0

/* At most this many doublings of restore-after for a node that flaps
 * (S4-7): 16 times the confirmations. */
#define VERDICT_FLAPS_MAX 4

/* A gray switch grows by at least this many points a step (S1-10), so
 * that a small or zero gray-share still reaches 100 % in a few steps. */
#define VERDICT_GRAY_MIN_STEP 10

/** A node's state as the store and gslbctl name it. */
typedef enum {
	VERDICT_UNKNOWN = 0,         /* no verdict yet */
	VERDICT_UP,                  /* full weight */
	VERDICT_DERATED,             /* weight x derate-factor */
	VERDICT_DEMOTED              /* out of the answers */
} verdict_state_t;

/** The decision state of a node, carried from round to round (and
 * partly persisted in its health record). */
typedef struct verdict_node {
	verdict_state_t state;
	uint32_t since;              /* last change of state */
	uint32_t moved_at;           /* last change that moved traffic */
	uint32_t restored_at;        /* last restore, for flap damping */
	unsigned flaps;              /* recent demote-after-restore cycles */
	unsigned degraded;           /* consecutive degraded rounds */
	unsigned good;               /* consecutive good rounds while demoted */
	unsigned lowconf;            /* consecutive low-confidence rounds */
	unsigned grade_rounds;       /* consecutive rounds asking up<->derated */
	uint8_t gray;                /* a gray switch is on (S1-10) */
	uint8_t gray_held;           /* its next step waits for a healthy
	                                alternate */
	unsigned gray_pct;           /* share moved away while gray, 1..100 */
	uint32_t gray_step_at;       /* last growth of gray_pct */
	unsigned refused;            /* consecutive rounds in which every
	                                probe failed to connect (S4-4) */
	uint8_t metrics_suspect;     /* pushed metrics pulled the score below
	                                usable; a round that is not degraded
	                                clears it */
	uint32_t gray_since;
	uint8_t stale;               /* every input went stale (S2-7) */
} verdict_node_t;

/** What one round tells about a node. */
typedef struct verdict_round {
	uint32_t now;                /* unix time of the round */
	score_result_t window;       /* the score of the whole window */
	score_result_t last;         /* the score of the newest sample alone:
	                                the round itself */
	score_result_t rest;         /* the score of the newest
	                                verdict_restore_keep() samples; read only
	                                when a demoted node is restored */
	unsigned nwin;               /* samples in the window */
	unsigned nprobe;             /* probes of the node */
	unsigned refused;            /* probes whose latest result did not
	                                connect (probes without a result yet
	                                do not count) */
	uint8_t alt_ok;              /* another node of the node's rows serves
	                                and is up: a gray switch may move more
	                                (S1-10); read only past the watch */
	/* The latest push of the failure_rate metric (S1-2). */
	double fr_pct;               /* percent of requests failing */
	uint32_t fr_time;            /* 0: never pushed */
	uint32_t fr_high_since;      /* above the limit since; 0: not above */
	double fr_limit;             /* the node's limit in percent (S3-5);
	                                0: health.failure-rate */
	unsigned confirm;            /* degraded rounds that demote or derate
	                                the node in this round
	                                (cutover_confirm_rounds(): fewer inside
	                                an announced window); 0:
	                                health.demote-after (S0-8) */
} verdict_round_t;

/** Why the state changed, or that it did not. */
typedef enum {
	VERDICT_KEEP = 0,            /* the state stays (counters may move) */
	VERDICT_NO_DATA,             /* no fresh input: nothing moves (S2-7) */
	VERDICT_HARD_FAILURE,        /* -> demoted: no probe connects, confirmed
	                                (S4-4, S0-8) */
	VERDICT_PASSIVE_FAULT,       /* -> demoted: failure rate (S1-2) */
	VERDICT_FAULT,               /* -> demoted: two dimensions (S1-4) */
	VERDICT_LOW_SCORE,           /* -> demoted: below usable (S0-8) */
	VERDICT_GRAY_PERSISTED,      /* -> demoted: low confidence (S1-10) */
	VERDICT_RESTORED,            /* demoted -> up or derated (S0-8) */
	VERDICT_FIRST_UP,            /* unknown -> up */
	VERDICT_FIRST_DERATED,       /* unknown -> derated */
	VERDICT_DERATE,              /* up -> derated (S4-5) */
	VERDICT_UNDERATE,            /* derated -> up (S4-5) */
	VERDICT_STALE,               /* every input went stale: health.stale
	                                applies (S2-7) */
	VERDICT_FRESH                /* fresh inputs again after stale */
} verdict_reason_t;

/** A change of the gray switch that comes with a round (S1-10). */
typedef enum {
	VERDICT_GRAY_SAME = 0,
	VERDICT_GRAY_ON,             /* gray-share of the weight moves away */
	VERDICT_GRAY_OFF,            /* cancelled: the node recovered */
	VERDICT_GRAY_STEP,           /* the moved share grew (gray_pct) */
	VERDICT_GRAY_HELD            /* the step waits: no healthy alternate */
} verdict_gray_t;

/** What a re-pool does with a primary's standby (S0-9, S0-10). */
typedef enum {
	VERDICT_STANDBY_NONE = 0,
	VERDICT_STANDBY_PROMOTE,     /* the node is out: a standby takes over */
	VERDICT_STANDBY_RELEASE      /* the node serves: its standby goes back */
} verdict_standby_t;

/** The decision of one round. */
typedef struct verdict {
	verdict_node_t next;         /* the node's state after the round */
	verdict_reason_t reason;
	verdict_gray_t gray;         /* applied before the change of state */
	verdict_standby_t standby;   /* on a change of state, else NONE */
	unsigned weight_pct;         /* effective weight of next, 0..100 */
	unsigned keep;               /* on RESTORED: keep only the newest
	                                @keep samples (the outage is behind);
	                                0: keep the window */
	/* What the reason text needs. */
	double score;                /* the score the reason talks about */
	unsigned rounds;             /* the rounds it counts */
	uint8_t abnormal;            /* FAULT: SCORE_AB_* bits of the round */
	uint32_t fault_for;          /* PASSIVE_FAULT: seconds above the limit */
	uint8_t retry;               /* every probe failed to connect once:
	                                probe again now to confirm (S4-4) */
} verdict_t;

/** Runs one round of node @node through the state machine under @c.
 * @out is filled completely; @node and @round are not changed. */
void verdict_round(const health_conf_t *c, const verdict_node_t *node,
                   const verdict_round_t *round, verdict_t *out);

/** How many of a window's @nwin newest samples verdict_round() keeps if
 * this round restores @node: the caller scores them as round->rest. */
unsigned verdict_restore_keep(const verdict_node_t *node, unsigned nwin);

/** Whether a passive failure-rate fault holds at @now (S1-2): the rate
 * @fr_pct, pushed at @fr_time, has been above c->failure_rate since
 * @fr_high_since for failure-rate-window seconds, and the push is
 * fresh. */
int verdict_passive_fault(const health_conf_t *c, double fr_pct,
                          uint32_t fr_time, uint32_t fr_high_since,
                          uint32_t now);

/** verdict_passive_fault() with the limit @limit_pct instead of
 * c->failure_rate (a service's stricter SLA, S3-5). */
int verdict_passive_fault_at(const health_conf_t *c, double limit_pct,
                             double fr_pct, uint32_t fr_time,
                             uint32_t fr_high_since, uint32_t now);

/** The effective weight in percent of a node in decision state @n: as
 * verdict_weight_pct(), and at most derate-factor while stale under
 * health.stale: derate (S2-7). */
unsigned verdict_node_weight_pct(const health_conf_t *c,
                                 const verdict_node_t *n);

/** The effective weight in percent of a node in @state with @gray_pct
 * percent of it moved away by a gray switch (0: none): 100, derate-factor
 * when derated, less the moved share (S1-10, S2-5).  A demoted node keeps
 * the figure of its state; it is out of the answers anyway. */
unsigned verdict_weight_pct(const health_conf_t *c, verdict_state_t state,
                            unsigned gray_pct);

/** The share a gray switch moves after @pct once it grows (S1-10): twice
 * as much, at least VERDICT_GRAY_MIN_STEP points more, at most 100. */
unsigned verdict_gray_next(unsigned pct);

/** What the re-pool does for a primary whose decision changed and is now
 * in @state: a demoted one gets a standby, any other releases its own. */
verdict_standby_t verdict_standby(verdict_state_t state);

/** The state an operator is shown for @n (static): "stale" while every
 * input is stale (S2-7), else verdict_state_name(). */
const char *verdict_shown_state(const verdict_node_t *n);

/** The name of @s ("unknown", "up", "derated", "demoted"; static). */
const char *verdict_state_name(verdict_state_t s);

/** The state named @name; VERDICT_UNKNOWN for NULL or anything else. */
verdict_state_t verdict_state_parse(const char *name);

/** Whether @r moves the node to another state. */
int verdict_changes_state(verdict_reason_t r);

#endif
