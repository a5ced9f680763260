/* SPDX-License-Identifier: MIT */
/* Reads the health section of gslbd.conf (and, through cutover.c, the
 * cutover section) into a health_conf_t.  No state: safe on any thread. */
#include "health/health_conf.h"
#include "steer/steer_conf.h"
#include "probe/probe.h"

#include <string.h>

/* Four dimension weights (S0-6 order: loss, latency, connect, jitter;
 * S2-2 order: network, service, load, stability), per-business
 * configurable (S2-2); they need not add up to 100. */
static int read_weights(const conf_t *c, const ynode_t *v, const char *what,
                        double *w, char *err, size_t errlen)
{
	if (v->kind != YNODE_SEQ || v->n != 4)
		return conf_sfail(c, v, err, errlen, "%s must be a list of 4 numbers", what);
	double sum = 0;
	for (int i = 0; i < 4; i++) {
		if (conf_snumber(c, v->items[i], what, 0, 100, &w[i], err, errlen))
			return -1;
		sum += w[i];
	}
	if (sum <= 0)
		return conf_sfail(c, v, err, errlen, "%s: the weights add up to 0", what);
	return 0;
}

static void set_defaults(health_conf_t *o)
{
	memset(o, 0, sizeof(*o));
	o->interval = 10;
	o->timeout = 2;
	o->fast_interval = 0;
	o->demote_after = 2;
	o->restore_after = 3;
	o->derate_factor = 0.5;
	o->settle = 300;
	o->gray_share = 10;
	o->gray_watch = 120;
	o->gray_step = 10;
	o->hard_confirm = 1;
	o->standby_headroom = 20;
	o->probe_budget = PROBE_BUDGET_DEFAULT;
	o->history_keep = 86400;
	o->tick = 0.1;
	o->flap_window = 300;
	o->failure_rate_window = SCORE_FAILURE_RATE_FAULT_S;
	o->failure_rate = SCORE_FAILURE_RATE_FAULT_PCT;
	o->stale = HEALTH_STALE_KEEP;
	o->shadow_profile = -1;
	score_config_default(&o->score);
}

/* profile: and shadow-profile: name a score profile. */
static int read_profile(const conf_t *c, const char *k, const ynode_t *v,
                        health_conf_t *o, char *err, size_t errlen)
{
	int pf = -1;
	if (v->kind == YNODE_SCALAR && strcmp(v->value, "probe") == 0)
		pf = SCORE_PROFILE_PROBE;
	else if (v->kind == YNODE_SCALAR && strcmp(v->value, "four") == 0)
		pf = SCORE_PROFILE_FOUR;
	/* probe: the four dimensions of S0-6; four: the four groups of S2-2. */
	if (pf < 0)
		return conf_sfail(c, v, err, errlen, "%s must be probe or four", k);
	if (k[0] == 'p')
		o->score.profile = (score_profile_t)pf;
	else
		o->shadow_profile = pf;
	return 0;
}

/* stale: keep, derate or down (S2-7). */
static int read_stale(const conf_t *c, const ynode_t *v, health_conf_t *o,
                      char *err, size_t errlen)
{
	static const char *const names[] = { "keep", "derate", "down" };
	for (int i = 0; i < 3; i++)
		if (v->kind == YNODE_SCALAR && strcmp(v->value, names[i]) == 0) {
			o->stale = (health_stale_t)i;
			return 0;
		}
	return conf_sfail(c, v, err, errlen, "stale must be keep, derate or down");
}

/* One key of the health section; 0 or -1. */
static int read_key(const conf_t *c, const char *k, const ynode_t *v,
                    health_conf_t *o, char *err, size_t errlen)
{
	const conf_num_t nums[] = {
		CONF_NUM("interval", 0.2, 3600, &o->interval),
		CONF_NUM("timeout", 0.1, 60, &o->timeout),
		CONF_NUM("fast-interval", 0.2, 3600, &o->fast_interval),
		CONF_NUM("demote-after", 1, 100, &o->demote_after),
		CONF_NUM("restore-after", 1, 100, &o->restore_after),
		CONF_NUM("derate-factor", 0, 1, &o->derate_factor),
		CONF_NUM("settle", 0, 86400, &o->settle),
		CONF_NUM("gray-share", 0, 100, &o->gray_share),
		CONF_NUM("gray-watch", 0, 86400, &o->gray_watch),
		CONF_NUM("gray-step", 0, 3600, &o->gray_step),
		CONF_NUM("latency-ema-alpha", 0.01, 1, &o->score.latency_alpha),
		CONF_NUM("latency-outlier-factor", 0, 100, &o->score.outlier_factor),
		CONF_NUM("standby-headroom", 0, 90, &o->standby_headroom),
		CONF_NUM("probe-budget", 1, 1e12, &o->probe_budget),
		CONF_NUM("history-keep", 0, 90 * 86400.0, &o->history_keep),
		CONF_NUM("tick", 0.01, 1, &o->tick),
		CONF_NUM("flap-window", 0, 86400, &o->flap_window),
		CONF_NUM("failure-rate-window", 1, 3600, &o->failure_rate_window),
		CONF_NUM("failure-rate", 0, 100, &o->failure_rate),
		CONF_NUM("grade-good", 1, 100, &o->score.good),
		CONF_NUM("grade-usable", 0, 99, &o->score.usable),
		CONF_NUM("latency-threshold", 0.001, 60, &o->score.latency_threshold_ms),
		CONF_NUM("freshness", 1, 86400, &o->score.fresh_s),
		CONF_NUM("veto-level", 0, 1, &o->score.veto_level),
		CONF_NUM("veto-factor", 0, 1, &o->score.veto_factor),
	};
	int rc = conf_snum_key(c, k, v, nums, sizeof(nums) / sizeof(nums[0]), err, errlen);
	if (rc)
		rc = rc < 0 ? -1 : 0;   /* a number, read or refused */
	else if (strcmp(k, "shadow") == 0)
		rc = conf_sbool(c, v, k, &o->shadow, err, errlen);
	else if (strcmp(k, "hard-failure-confirm") == 0)
		rc = conf_sbool(c, v, k, &o->hard_confirm, err, errlen);
	else if (strcmp(k, "weights-probe") == 0)
		rc = read_weights(c, v, k, o->score.w_probe, err, errlen);
	else if (strcmp(k, "weights-four") == 0)
		rc = read_weights(c, v, k, o->score.w_four, err, errlen);
	else if (strcmp(k, "profile") == 0 || strcmp(k, "shadow-profile") == 0)
		rc = read_profile(c, k, v, o, err, errlen);
	else if (strcmp(k, "stale") == 0)
		rc = read_stale(c, v, o, err, errlen);
	if (rc)
		return -1;
	if (strcmp(k, "latency-threshold") == 0)
		o->score.latency_threshold_ms *= 1000; /* given in s */
	return 0;
}

static int read_section(const conf_t *c, const ynode_t *s, health_conf_t *o,
                        char *err, size_t errlen)
{
	static const char *const keys[] = {
		"interval", "timeout", "fast-interval", "demote-after",
		"restore-after", "derate-factor", "settle", "gray-share",
		"gray-watch", "standby-headroom", "probe-budget", "history-keep", "tick",
		"shadow", "profile", "shadow-profile", "latency-threshold",
		"freshness",
		"flap-window", "failure-rate-window", "weights-probe",
		"weights-four", "grade-good",
		"grade-usable",
		"veto-level", "veto-factor", "gray-step", "hard-failure-confirm",
		"latency-ema-alpha", "latency-outlier-factor", "failure-rate",
		"stale", NULL
	};
	if (conf_skeys(c, s, "health", keys, err, errlen))
		return -1;
	for (size_t i = 0; i < s->n; i++)
		if (read_key(c, s->keys[i]->value, s->items[i], o, err, errlen))
			return -1;
	if (o->score.usable >= o->score.good)
		return conf_sfail(c, ynode_get(s, "grade-usable"), err, errlen,
		                  "grade-usable (%g) must be below grade-good (%g)",
		                  o->score.usable, o->score.good);
	const ynode_t *t = ynode_get(s, "timeout");
	if (o->timeout >= o->interval)
		return conf_sfail(c, t ? t : s, err, errlen,
		                  "health timeout (%g s) must be below the interval (%g s)",
		                  o->timeout, o->interval);
	return 0;
}

int health_conf_load(const conf_t *c, health_conf_t *o, char *err, size_t errlen)
{
	set_defaults(o);
	const ynode_t *s = ynode_get(c->root, "health");
	if (s && read_section(c, s, o, err, errlen))
		return -1;
	/* S0-7, S2-8: falling nodes and cutover windows are probed faster.
	 * S0-7 gives 60 s and 10 s; with our 10 s default interval a fifth
	 * keeps a ratio near the seed's and still confirms a degraded round
	 * (S0-8) within seconds.  Never below 1 s, so that a large table of
	 * suspects cannot flood the probe loop, and never slower than the
	 * normal interval. */
	if (o->fast_interval <= 0) {
		o->fast_interval = o->interval / HEALTH_FAST_DIVISOR;
		if (o->fast_interval < HEALTH_FAST_MIN)
			o->fast_interval = HEALTH_FAST_MIN;
	}
	if (o->fast_interval > o->interval)
		o->fast_interval = o->interval;
	if (cutover_conf_load(c, &o->cut, err, errlen))
		return -1;
	o->cut.settle = o->settle; /* one setting for both short-TTL periods */
	if (steer_conf_load(c, &o->steer, err, errlen))
		return -1;
	return source_conf_load(c, &o->sources, err, errlen);
}
