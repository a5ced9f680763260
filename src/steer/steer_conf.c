/* SPDX-License-Identifier: MIT */
/* Reads the steer section of gslbd.conf (the steering engine's timing,
 * limits and reference thresholds) into a steer_conf_t.  No state: safe
 * on any thread. */
#include "steer/steer_conf.h"

#include <string.h>

/* windows: a list of 1 to STEER_MAX_WINDOWS durations in seconds, in
 * increasing order (S3-9). */
static int read_windows(const conf_t *c, const ynode_t *v, steer_conf_t *o,
                        char *err, size_t errlen)
{
	if (v->kind != YNODE_SEQ || v->n < 1 || v->n > STEER_MAX_WINDOWS)
		return conf_sfail(c, v, err, errlen,
		                  "windows must be a list of 1 to %d durations in seconds",
		                  STEER_MAX_WINDOWS);
	for (size_t i = 0; i < v->n; i++) {
		double d;
		if (conf_snumber(c, v->items[i], "windows", 1, 86400, &d, err, errlen))
			return -1;
		o->windows[i] = (unsigned)d;
		if (i && o->windows[i] <= o->windows[i - 1])
			return conf_sfail(c, v->items[i], err, errlen,
			                  "windows must be in increasing order");
	}
	o->nwindows = (unsigned)v->n;
	return 0;
}

int steer_conf_load(const conf_t *c, steer_conf_t *o, char *err, size_t errlen)
{
	steer_conf_default(o);
	const ynode_t *s = ynode_get(c->root, "steer");
	if (!s)
		return 0;
	static const char *const keys[] = {
		"interval", "tau", "windows", "stale", "clock-skew", "min-step", "max-step",
		"max-change-per-hour", "max-change", "change-window", "sharpness", "floor", "headroom", "sla", "sla-after",
		"restore-after", "success-good", "success-bad", "latency-good",
		"latency-bad", "budget-boost", "input-keep", "spend-keep", "sources", NULL
	};
	if (conf_skeys(c, s, "steer", keys, err, errlen))
		return -1;
	const conf_num_t nums[] = {
		CONF_NUM("interval", 1, 3600, &o->interval),
		CONF_NUM("tau", 0, 86400, &o->tau),
		CONF_NUM("stale", 1, 86400, &o->stale),
		CONF_NUM("clock-skew", 0, 3600, &o->skew),
		CONF_NUM("min-step", 0, 100, &o->min_step),
		CONF_NUM("max-step", 0.1, 100, &o->max_step),
		/* max-change-per-hour: the older name of max-change, from when
		 * its window was an hour whatever the interval (S3-8). */
		CONF_NUM("max-change-per-hour", 0.1, 100, &o->max_hour),
		CONF_NUM("max-change", 0.1, 100, &o->max_hour),
		CONF_NUM("change-window", 1, 100000, &o->change_window),
		CONF_NUM("sharpness", 0, 10, &o->sharpness),
		CONF_NUM("floor", 0, 50, &o->floor),
		CONF_NUM("headroom", 0, 90, &o->headroom),
		CONF_NUM("sla", 0, 100, &o->sla),
		CONF_NUM("sla-after", 1, 100, &o->sla_after),
		CONF_NUM("restore-after", 1, 100, &o->restore_after),
		CONF_NUM("success-good", 0, 100, &o->success_good),
		CONF_NUM("success-bad", 0, 100, &o->success_bad),
		CONF_NUM("latency-good", 0, 60000, &o->latency_good),
		CONF_NUM("latency-bad", 0, 60000, &o->latency_bad),
		CONF_NUM("budget-boost", 1, 100, &o->budget_boost),
		CONF_NUM("input-keep", 0, 3650 * 86400.0, &o->input_keep),
		CONF_NUM("spend-keep", 0, 3650 * 86400.0, &o->spend_keep),
	};
	for (size_t i = 0; i < s->n; i++) {
		const char *k = s->keys[i]->value;
		const ynode_t *v = s->items[i];
		/* sources: the health thread's pull sources (health/source.c). */
		int rc = strcmp(k, "sources") == 0 ? 0
		         : strcmp(k, "windows") == 0 ? read_windows(c, v, o, err, errlen)
		         : conf_snum_key(c, k, v, nums, sizeof(nums) / sizeof(nums[0]), err, errlen);
		if (rc < 0)
			return -1;
	}
	if (ynode_get(s, "max-change") && ynode_get(s, "max-change-per-hour"))
		return conf_sfail(c, s, err, errlen,
		                  "steer max-change and max-change-per-hour are one setting: "
		                  "give max-change only");
	if (o->success_good <= o->success_bad)
		return conf_sfail(c, s, err, errlen,
		                  "steer success-good (%g) must be above success-bad (%g)",
		                  o->success_good, o->success_bad);
	if (o->latency_good >= o->latency_bad)
		return conf_sfail(c, s, err, errlen,
		                  "steer latency-good (%g) must be below latency-bad (%g)",
		                  o->latency_good, o->latency_bad);
	/* An input record younger than the longest window or the staleness
	 * limit may still hold samples that count. */
	double longest = o->windows[o->nwindows - 1] > o->stale ?
	                 o->windows[o->nwindows - 1] : o->stale;
	if (o->input_keep && o->input_keep < longest)
		return conf_sfail(c, s, err, errlen,
		                  "steer input-keep (%g) must be 0 or at least the longest "
		                  "window and stale (%g)", o->input_keep, longest);
	if (o->min_step > o->max_step)
		return conf_sfail(c, s, err, errlen,
		                  "steer min-step (%g) must not exceed max-step (%g)",
		                  o->min_step, o->max_step);
	return 0;
}
