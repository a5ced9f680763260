/* SPDX-License-Identifier: MIT */
/* The steering records in the store (steer_rec.h): service settings,
 * budgets and spend, pushed inputs and the one reader of their
 * samples. */
#include "common/util.h"
#include "steer/steer_rec.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

int steer_service_on(json_t *svc)
{
	const char *st = json_string_value(json_object_get(svc, "steering"));
	return st && (strcmp(st, "dynamic") == 0 || strcmp(st, "shadow") == 0);
}

void steer_service_policy(json_t *svc, steer_policy_t *p)
{
	const char *name = json_string_value(json_object_get(svc, "policy"));
	if (!name || steer_policy_named(name, p))
		steer_policy_named("custom", p);
	json_t *w = json_object_get(svc, "steer_weights");
	if (json_is_object(w)) {
		p->success = json_number_value(json_object_get(w, "success"));
		p->latency = json_number_value(json_object_get(w, "latency"));
		p->cost = json_number_value(json_object_get(w, "cost"));
	}
}

const char *steer_limits_text(unsigned lim, char *buf, size_t size)
{
	static const char *const names[] = { "floor", "max-step",
		"max-change", "below min-step", "SLA", "over budget",
		"no fresh input", "all below SLA", "capacity",
		"held against its trend", "returning to the operator's weights" };
	return util_flags_text(names, sizeof(names) / sizeof(names[0]), lim, buf, size);
}

const char *steer_spend_key(char *buf, size_t size, const char *name,
                            unsigned days, uint32_t t)
{
	uint32_t start, end;
	steer_period_bounds(days, t, &start, &end);
	time_t tt = (time_t)start;
	struct tm tm;
	gmtime_r(&tt, &tm);
	if (days == 0)
		snprintf(buf, size, "p|%s|%04d-%02d", name, tm.tm_year + 1900, tm.tm_mon + 1);
	else
		snprintf(buf, size, "p|%s|%04d-%02d-%02d/%ud", name, tm.tm_year + 1900,
		         tm.tm_mon + 1, tm.tm_mday, days);
	return buf;
}

/* The period of budget object @b (0, the month, when it says none). */
static unsigned budget_period(json_t *b)
{
	unsigned days = 0;
	const char *p = json_string_value(json_object_get(b, "period"));
	if (!p || steer_period_parse(p, &days))
		days = 0;
	return days;
}

unsigned steer_provider_period(wdb_txn_t *t, const char *name)
{
	json_t *b = wdb_get(t, WDB_BUDGET, name);
	unsigned days = budget_period(b);
	json_decref(b);
	return days;
}

int steer_budget_read(wdb_txn_t *t, const char *name, uint32_t now,
                      double *spent, json_t **budget)
{
	json_t *b = wdb_get(t, WDB_BUDGET, name);
	unsigned days = budget_period(b);
	char key[200];
	json_t *rec = wdb_get(t, WDB_STEERIN, steer_spend_key(key, sizeof(key), name, days, now));
	double s = steer_spend_of(rec);
	json_decref(rec);
	int st = b ? steer_budget_state(json_number_value(json_object_get(b, "limit")),
	                                json_number_value(json_object_get(b, "alert")), s,
	                                days, now) : 0;
	if (spent)
		*spent = s;
	if (budget)
		*budget = b;
	else
		json_decref(b);
	return st;
}

double steer_spend_of(json_t *rec)
{
	json_t *p = json_object_get(rec, "pushed");
	return json_is_number(p) ? json_number_value(p)
	                         : json_number_value(json_object_get(rec, "derived"));
}

static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

int steer_input_key(unsigned k, const char *id, const char *region,
                    const char *isp, char *key, size_t size)
{
	const char *keys[4][2] = { { region, isp }, { region, "*" }, { "*", isp },
	                           { "*", "*" } };
	if (k >= 4)
		return 0;
	for (unsigned j = 0; j < k; j++)
		if (strcmp(keys[j][0], keys[k][0]) == 0 && strcmp(keys[j][1], keys[k][1]) == 0)
			return 0;
	snprintf(key, size, "n|%.64s|%.64s|%.64s", id, keys[k][0], keys[k][1]);
	return 1;
}

int steer_input_from(wdb_txn_t *t, const char *id, const char *region,
                     const char *isp, char *out, size_t size)
{
	for (unsigned k = 0; k < 4; k++) {
		char key[300];
		if (!steer_input_key(k, id, region, isp, key, sizeof(key)))
			continue;
		json_t *rec = wdb_get(t, WDB_STEERIN, key);
		const char *from = json_string_value(json_object_get(rec, "from"));
		if (from)
			snprintf(out, size, "%s", from);
		json_decref(rec);
		if (from)
			return 1;
	}
	return 0;
}

/* The time of sample @e of a "samples" array. */
static uint32_t sample_time(json_t *e)
{
	return (uint32_t)json_integer_value(json_array_get(e, 0));
}

void steer_sample_add(json_t *rec, uint32_t t, double success, double latency,
                      uint32_t now, double keep, double skew)
{
	json_t *s = json_object_get(rec, "samples");
	if (!json_is_array(s)) {
		s = json_array();
		json_object_set_new(rec, "samples", s);
	}
	/* In time order, whatever order the pushes came in (--at). */
	size_t at = json_array_size(s);
	while (at > 0 && sample_time(json_array_get(s, at - 1)) > t)
		at--;
	json_array_insert_new(s, at, json_pack("[I, o, o]", (json_int_t)t,
	                                       num_or_null(success), num_or_null(latency)));
	/* S3-9: what no window of now reads goes, cut at now and never at
	 * the newest sample (one dated ahead would push every real one
	 * out): the oldest beyond STEER_MAX_SAMPLES or older than @keep,
	 * and a sample dated beyond the skew (written before pushes were
	 * checked), which no reader takes for a measurement. */
	while (json_array_size(s) &&
	       (double)sample_time(json_array_get(s, json_array_size(s) - 1)) >
	       (double)now + skew)
		json_array_remove(s, json_array_size(s) - 1);
	while (json_array_size(s) > STEER_MAX_SAMPLES ||
	       (json_array_size(s) &&
	        (double)sample_time(json_array_get(s, 0)) < (double)now - keep))
		json_array_remove(s, 0);
}

unsigned steer_samples_read(json_t *rec, uint32_t from, uint32_t now, double skew,
                            steer_sample_t *s)
{
	json_t *a = json_object_get(rec, "samples"), *e;
	size_t i;
	unsigned n = 0;
	json_array_foreach(a, i, e) {
		uint32_t t = sample_time(e);
		if (t < from || (double)t > (double)now + skew)
			continue;
		if (n == STEER_MAX_SAMPLES)
			break;
		json_t *x = json_array_get(e, 1), *y = json_array_get(e, 2);
		/* Within the skew a sample is one of now: the feeder's clock
		 * runs a little ahead. */
		s[n].time = t > now ? now : t;
		s[n].success = json_is_number(x) ? json_number_value(x) : NAN;
		s[n].latency = json_is_number(y) ? json_number_value(y) : NAN;
		n++;
	}
	return n;
}
