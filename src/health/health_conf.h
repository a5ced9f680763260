/* SPDX-License-Identifier: MIT */
/* The health section of gslbd.conf: probe timing, the confirmations and
 * factors of the verdict, scores and cutovers, with their defaults.
 *
 * Read once at start-up and on reload; the health thread gets its own
 * copy, so nothing here is shared between threads. */
#ifndef GSLB_HEALTH_CONF_H
#define GSLB_HEALTH_CONF_H

#include <stddef.h>

#include "common/conf.h"
#include "health/cutover.h"
#include "health/score.h"
#include "health/source.h"
#include "steer/steer.h"

/* The default fast interval (S0-7, S2-8): interval / HEALTH_FAST_DIVISOR,
 * at least HEALTH_FAST_MIN seconds (see health_conf.c). */
#define HEALTH_FAST_DIVISOR 5.0
#define HEALTH_FAST_MIN 1.0

/** What a node whose inputs all went stale gets (S2-7; health.stale). */
typedef enum {
	HEALTH_STALE_KEEP = 0,    /* the last verdict stays, shown as stale */
	HEALTH_STALE_DERATE,      /* at most derate-factor of its weight */
	HEALTH_STALE_DOWN         /* demoted until fresh inputs restore it */
} health_stale_t;

/** The health section of gslbd.conf (see gslbd.conf(5)). */
typedef struct health_conf {
	double interval;          /* default probe interval, s (10, S1-1) */
	double timeout;           /* default probe timeout, s (2) */
	double fast_interval;     /* suspects and cutover windows, s (S0-7,
	                             S2-8; default interval / 5, at least 1) */
	unsigned demote_after;    /* consecutive degraded rounds (2, S0-8) */
	unsigned restore_after;   /* consecutive good rounds (3, S0-8, S4-7) */
	double derate_factor;     /* weight factor for 60..80 (0.5, S2-5) */
	double settle;            /* short-TTL period after a change (300 s) */
	double gray_share;        /* share moved on low confidence (10 %, S1-10) */
	double gray_watch;        /* watch time before moving more (120 s) */
	double gray_step;         /* after the watch, the moved share doubles
	                             this often while the alternates are
	                             healthy (10 s, S1-10) */
	int hard_confirm;         /* a hard failure needs a second, immediate
	                             probe or another probe path (on, S4-4
	                             with S0-8) */
	double standby_headroom;  /* spare capacity kept (20 %, S1-6) */
	double probe_budget;      /* bytes/s a node's probes may cost
	                             (PROBE_BUDGET_DEFAULT, S1-3) */
	double history_keep;      /* seconds of score history (S2-10) */
	double tick;              /* scheduler tick, s (0.1) */
	double failure_rate_window; /* pushed failure_rate above
	                             failure_rate this long is a fault (60 s,
	                             S1-2) */
	double failure_rate;      /* the S1-2 limit in percent (5); a service
	                             may set a lower one (S3-5) */
	health_stale_t stale;     /* nodes without fresh inputs (keep, S2-7) */
	double flap_window;       /* a demotion this soon after a restore
	                             doubles the confirmations (300 s, S4-7;
	                             0 disables) */
	int shadow;               /* score and log only (S2-9) */
	int shadow_profile;       /* -1, or a score_profile_t scored beside
	                             the live one and only logged (S2-9) */
	score_config_t score;
	cutover_conf_t cut;       /* the cutover section */
	steer_conf_t steer;       /* the steer section (S3-3..S3-9) */
	source_conf_t sources;    /* steer.sources: pull sources of inputs */
} health_conf_t;

/** Reads the health, cutover and steer sections of @c into @out, with the
 * defaults of gslbd.conf(5) for what they do not say (all of them when
 * the sections are absent).  Returns 0, or -1 with "FILE:LINE: reason" in
 * @err; @out holds nothing of value then. */
int health_conf_load(const conf_t *c, health_conf_t *out, char *err,
                     size_t errlen);

#endif
