/* SPDX-License-Identifier: MIT */
/* Announced ISP cutover windows (割接): pre-derating, standby pre-warm,
 * fast probing and short TTLs in the window, a gradual return after it
 * (S0-2, S0-3, S0-4, S0-7, S0-12, S1-6).
 *
 * Pure functions: given the windows and a node, what the node's weight
 * factor, pre-warm share, phase and short-TTL deadline are at a time.
 * The health thread applies them; gslbctl validates and shows them. */
#ifndef GSLB_CUTOVER_H
#define GSLB_CUTOVER_H

#include <jansson.h>
#include <stdint.h>
#include <time.h>

#include "common/conf.h"
#include "health/autocut.h"

typedef struct cutover_conf {
	double notice;            /* pre-derating starts this long before (86400 s, S0-2) */
	double prewarm_lead;      /* standby share grows over this long (3600 s, S0-4) */
	double ramp;              /* weights return to normal over this long (600 s) */
	double settle;            /* short TTL after the end: health.settle,
	                             set by health_conf_load */
	unsigned impact[3];       /* low, medium, high: 70, 60, 50 % (S0-3) */
	unsigned prewarm;         /* default pre-warm share, 35 % (S0-4) */
	double short_ttl_lead;    /* affected rows carry the short TTL from
	                             this long before the start (300 s, S0-11) */
	unsigned confirm_rounds;  /* degraded rounds that demote an affected
	                             node inside its window (2, S0-8 in-window) */
	autocut_conf_t autocut;   /* unannounced cutovers (cutover.auto-*) */
} cutover_conf_t;

typedef enum {
	CUT_NONE = 0,             /* not affected */
	CUT_ANNOUNCED,            /* known, notice not reached yet */
	CUT_PREDERATED,           /* inside the notice period (S0-3) */
	CUT_IN_WINDOW,            /* the window itself (S0-7: fast probes) */
	CUT_RAMP,                 /* after the end, weights coming back */
	CUT_DONE,
} cutover_phase_t;

/** The effect of all windows on one node at time @now. */
typedef struct cutover_effect {
	cutover_phase_t phase;    /* the most advanced phase touching the node */
	unsigned weight_pct;      /* weight factor, 100 = normal */
	unsigned prewarm_pct;     /* standby: share of its weight handed out */
	uint32_t short_until;     /* answers of its rows carry the short TTL */
	uint8_t in_window;        /* an affected node (not a standby) inside a
	                             window: the in-window confirmation and
	                             extra probe rounds apply */
	char window[32];          /* id of the window deciding the phase */
} cutover_effect_t;

/** Reads the cutover section of @c (defaults when absent) into @out,
 * all but @out->settle, which is health.settle and is filled in by
 * health_conf_load().  Returns 0, or -1 with "FILE:LINE: reason" in @err. */
int cutover_conf_load(const conf_t *c, cutover_conf_t *out, char *err,
                      size_t errlen);

/** Parses an RFC 3339 time with an offset ("2026-12-01T02:00+08:00",
 * seconds optional, "Z" allowed).  Returns 0 or -1. */
int cutover_parse_time(const char *s, time_t *out);

/** The effect on node (@id, @region, @isp, @standby) of the windows in
 * @windows (a JSON array of window objects, see gslbctl(8)) at @now.
 * @in_affected_row: the node shares a weight row with an affected node
 * (a standby there is pre-warmed, S0-4). */
void cutover_effect(const cutover_conf_t *c, json_t *windows, const char *id,
                    const char *region, const char *isp, int standby,
                    int in_affected_row, time_t now, cutover_effect_t *out);

/** Whether window @w affects node (@id, @region, @isp). */
int cutover_affects(json_t *w, const char *id, const char *region,
                    const char *isp);

/** The phase of window @w itself at @now (for listings). */
cutover_phase_t cutover_window_phase(const cutover_conf_t *c, json_t *w,
                                     time_t now);

/** Whether a node under effect @e is probed at the fast interval: while
 * a window that touches it is in progress (S0-7). */
int cutover_fast_probe(const cutover_effect_t *e);

/** The consecutive degraded rounds that demote (or derate) a node under
 * effect @e: c->confirm_rounds while it is an affected node inside a
 * window, else @normal (health.demote-after, S0-8). */
unsigned cutover_confirm_rounds(const cutover_conf_t *c,
                                const cutover_effect_t *e, unsigned normal);

/** Whether a round of a node under effect @e calls for an extra probe
 * round at once: the node is affected and inside a window, still in the
 * answers (@demoted 0), the round's newest sample is degraded
 * (@sample_degraded), and fewer than @need (the confirmations that demote
 * it) extra rounds have run since its last good sample (@extra).  So a
 * degraded sample is confirmed or forgiven within one probe's time, and
 * a node never gets more than @need extra rounds in a row. */
int cutover_extra_probe(const cutover_effect_t *e, int demoted,
                        int sample_degraded, unsigned extra, unsigned need);

/** The name of phase @p ("none", "announced", "pre-derated",
 * "in-window", "ramp", "done"; static). */
const char *cutover_phase_name(cutover_phase_t p);

#endif
