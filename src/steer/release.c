/* SPDX-License-Identifier: MIT */
/* Gray releases: the record's codec and the decision of one evaluation
 * (release.h, S4-10). */
#include "steer/release.h"
#include "common/num.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const state_names[RELEASE_STATE_COUNT] = {
	"running", "paused", "rolled-back", "aborted", "completed"
};
static const char *const metric_names[] = { "score", "success", "latency" };

const char *release_state_name(release_state_t state)
{
	return (unsigned)state < RELEASE_STATE_COUNT ? state_names[state] : "?";
}

int release_state_of(const char *name)
{
	for (int i = 0; name && i < RELEASE_STATE_COUNT; i++)
		if (strcmp(name, state_names[i]) == 0)
			return i;
	return -1;
}

int release_guard_holds(const release_guard_t *g, double v)
{
	return g->at_least ? v >= g->value : v <= g->value;
}

const char *release_obs_text(const release_guard_t *g, const release_obs_t *o,
                             char *buf, size_t size)
{
	const char *m = metric_names[g->metric];
	if (o->has || o->early)
		snprintf(buf, size, "%s %g", m, o->value);
	else
		snprintf(buf, size, "%s: %s (%s)", m, o->stale ? "stale" : "none",
		         o->why ? o->why : "no figure since the step began");
	return buf;
}

release_verdict_t release_step(const release_t *r, const release_obs_t *obs,
                               uint32_t now, int *broken)
{
	*broken = -1;
	if (r->state != RELEASE_RUNNING && r->state != RELEASE_PAUSED)
		return RELEASE_KEEP;
	/* A broken guard rolls back at once, paused or not: pausing stops
	 * the widening, never the watching. */
	for (unsigned i = 0; i < r->nguards; i++)
		if ((obs[i].has || (obs[i].early && r->step > 0)) &&
		    !release_guard_holds(&r->guard[i], obs[i].value)) {
			*broken = (int)i;
			return RELEASE_ROLLBACK;
		}
	if (r->state == RELEASE_PAUSED || r->step + 1 >= r->nsteps ||
	    now < r->since || now - r->since < r->every)
		return RELEASE_KEEP;
	/* Every guard must have been seen holding over the step: a guard
	 * without input is no evidence, so the step waits for it. */
	for (unsigned i = 0; i < r->nguards; i++)
		if (!obs[i].has)
			return RELEASE_WAIT;
	return r->steps[r->step + 1] >= 10000 ? RELEASE_COMPLETE : RELEASE_WIDEN;
}

/* Parses the percentage @s (at most two decimals) into basis points. */
static int parse_pct(const char *s, uint32_t *bp)
{
	static const num_range_t pct = { 0, 100, NUM_LO_OPEN, NULL, NULL };
	double v;
	if (num_parse(s, &pct, &v, NULL))
		return -1;
	double b = v * 100;
	if (fabs(b - round(b)) > 1e-6)
		return -1;
	*bp = (uint32_t)round(b);
	return 0;
}

int release_parse_steps(const char *s, uint32_t *steps, unsigned *n, char *err,
                        size_t errlen)
{
	char buf[512];
	if (!s || !*s || strlen(s) >= sizeof(buf)) {
		snprintf(err, errlen, "give steps as percentages, like 1,5,25,50,100");
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", s);
	*n = 0;
	char *save = NULL;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint32_t bp;
		if (*n == RELEASE_MAX_STEPS) {
			snprintf(err, errlen, "at most %d steps", RELEASE_MAX_STEPS);
			return -1;
		}
		if (parse_pct(tok, &bp)) {
			snprintf(err, errlen, "step '%s' is not a percentage above 0 and "
			         "at most 100 (two decimals at most)", tok);
			return -1;
		}
		if (*n && bp <= steps[*n - 1]) {
			snprintf(err, errlen, "step '%s' is not above the step before it: "
			         "steps must increase", tok);
			return -1;
		}
		steps[(*n)++] = bp;
	}
	if (!*n || steps[0] >= 10000) {
		snprintf(err, errlen, "give at least one step below 100");
		return -1;
	}
	if (s[strlen(s) - 1] == ',' || strstr(s, ",,") || s[0] == ',') {
		snprintf(err, errlen, "an empty step in '%s'", s);
		return -1;
	}
	return 0;
}

int release_parse_every(const char *s, uint32_t *secs, char *err, size_t errlen)
{
	static const char *const units[] = { "s", "m", "h", "d", NULL };
	static const double scale[] = { 1, 60, 3600, 86400 };
	static const num_range_t r = { RELEASE_EVERY_MIN, RELEASE_EVERY_MAX, NUM_WHOLE,
	                               units, scale };
	double v;
	if (num_parse(s, &r, &v, NULL)) {
		snprintf(err, errlen, "'%s' is not a duration from %us to %ud (like 90s, "
		         "10m, 2h)", s ? s : "", RELEASE_EVERY_MIN, RELEASE_EVERY_MAX / 86400);
		return -1;
	}
	*secs = (uint32_t)v;
	return 0;
}

int release_parse_guard(const char *s, release_guard_t *g, char *err, size_t errlen)
{
	static const double maxs[] = { 100, 100, 600000 };
	for (int m = 0; m < 3; m++) {
		size_t l = strlen(metric_names[m]);
		if (strncmp(s, metric_names[m], l) != 0)
			continue;
		const char *op = s + l;
		int ge = strncmp(op, ">=", 2) == 0, le = strncmp(op, "<=", 2) == 0;
		if (!ge && !le)
			break;
		if (ge != (m != RELEASE_LATENCY)) {
			snprintf(err, errlen, "guard '%s': %s is kept %s (%s%s)", s,
			         metric_names[m], ge ? "from above" : "from below",
			         metric_names[m], ge ? "<=" : ">=");
			return -1;
		}
		const num_range_t r = { 0, maxs[m], 0, NULL, NULL };
		double v;
		if (num_parse(op + 2, &r, &v, NULL)) {
			snprintf(err, errlen, "guard '%s': the bound must be a number from 0 "
			         "to %g", s, maxs[m]);
			return -1;
		}
		g->metric = (release_metric_t)m;
		g->at_least = ge;
		g->value = v;
		return 0;
	}
	snprintf(err, errlen, "guard '%s': give score>=N, success>=PCT or latency<=MS", s);
	return -1;
}

const char *release_guard_text(const release_guard_t *g, char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%g", metric_names[g->metric], g->at_least ? ">=" : "<=",
	         g->value);
	return buf;
}

json_t *release_pct_json(uint32_t bp)
{
	return bp % 100 ? json_real(bp / 100.0) : json_integer(bp / 100);
}

int release_from_json(json_t *j, release_t *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	if (!json_is_object(j)) {
		snprintf(err, errlen, "release: not an object");
		return -1;
	}
	if (!json_is_string(json_object_get(j, "node"))) {
		snprintf(err, errlen, "release: no node");
		return -1;
	}
	static const char *const words[] = { "region", "isp" };
	for (int k = 0; k < 2; k++) {
		json_t *w = json_object_get(j, words[k]);
		if (w && !json_is_string(w)) {
			snprintf(err, errlen, "release: %s must be a string", words[k]);
			return -1;
		}
	}
	int st = release_state_of(json_string_value(json_object_get(j, "state")));
	if (st < 0) {
		snprintf(err, errlen, "release: state must be running, paused, "
		         "rolled-back, aborted or completed");
		return -1;
	}
	r->state = (release_state_t)st;
	json_t *steps = json_object_get(j, "steps"), *e;
	size_t i;
	if (!json_is_array(steps) || !json_array_size(steps) ||
	    json_array_size(steps) > RELEASE_MAX_STEPS) {
		snprintf(err, errlen, "release: steps must be a list of 1 to %d percentages",
		         RELEASE_MAX_STEPS);
		return -1;
	}
	json_array_foreach(steps, i, e) {
		double v = json_number_value(e);
		uint32_t bp = (uint32_t)round(v * 100);
		if (!json_is_number(e) || !(v > 0 && v <= 100) || fabs(v * 100 - bp) > 1e-6 ||
		    (i && bp <= r->steps[i - 1])) {
			snprintf(err, errlen, "release: steps must be increasing percentages "
			         "above 0 and at most 100");
			return -1;
		}
		r->steps[r->nsteps++] = bp;
	}
	if (r->steps[0] >= 10000) {
		snprintf(err, errlen, "release: give at least one step below 100");
		return -1;
	}
	json_t *every = json_object_get(j, "every");
	if (!json_is_integer(every) || json_integer_value(every) < RELEASE_EVERY_MIN ||
	    json_integer_value(every) > RELEASE_EVERY_MAX) {
		snprintf(err, errlen, "release: every must be whole seconds from %u to %u",
		         RELEASE_EVERY_MIN, RELEASE_EVERY_MAX);
		return -1;
	}
	r->every = (uint32_t)json_integer_value(every);
	json_t *step = json_object_get(j, "step");
	if (!json_is_integer(step) || json_integer_value(step) < 0 ||
	    json_integer_value(step) >= (json_int_t)r->nsteps) {
		snprintf(err, errlen, "release: step must be the index of one of its steps");
		return -1;
	}
	r->step = (unsigned)json_integer_value(step);
	json_t *since = json_object_get(j, "since");
	if (!json_is_integer(since) || json_integer_value(since) < 0 ||
	    json_integer_value(since) > UINT32_MAX) {
		snprintf(err, errlen, "release: since must be a unix time");
		return -1;
	}
	r->since = (uint32_t)json_integer_value(since);
	json_t *pct = json_object_get(j, "percent");
	if (!json_is_number(pct) || json_number_value(pct) < 0 ||
	    json_number_value(pct) > 100) {
		snprintf(err, errlen, "release: percent must be from 0 to 100");
		return -1;
	}
	json_t *guards = json_object_get(j, "guards");
	if (guards && (!json_is_array(guards) || json_array_size(guards) > RELEASE_MAX_GUARDS)) {
		snprintf(err, errlen, "release: guards must be a list of at most %d",
		         RELEASE_MAX_GUARDS);
		return -1;
	}
	json_array_foreach(guards, i, e) {
		const char *g = json_string_value(e);
		char gerr[200];
		if (!g || release_parse_guard(g, &r->guard[r->nguards], gerr, sizeof(gerr))) {
			snprintf(err, errlen, "release: %s", g ? gerr : "a guard is not a string");
			return -1;
		}
		r->nguards++;
	}
	return 0;
}
