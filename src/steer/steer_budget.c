/* SPDX-License-Identifier: MIT */
/* Budget periods and the pro-rated budget of the steering engine
 * (steer.h, S3-6).  Pure: no I/O, no allocation, the time passed in. */
#include "steer/steer.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

int steer_period_parse(const char *text, unsigned *days)
{
	if (strcmp(text, "month") == 0)
		*days = 0;
	else if (strcmp(text, "day") == 0)
		*days = 1;
	else if (strcmp(text, "week") == 0)
		*days = 7;
	else {
		unsigned n = 0;
		size_t i = 0;
		for (; text[i] >= '0' && text[i] <= '9' && n <= STEER_PERIOD_MAX; i++)
			n = n * 10 + (unsigned)(text[i] - '0');
		if (!i || text[0] == '0' || strcmp(text + i, "d") != 0 || n < 1 ||
		    n > STEER_PERIOD_MAX)
			return -1;
		*days = n;
	}
	return 0;
}

const char *steer_period_text(unsigned days, char *buf, size_t size)
{
	if (days == 0)
		snprintf(buf, size, "month");
	else if (days == 1)
		snprintf(buf, size, "day");
	else if (days == 7)
		snprintf(buf, size, "week");
	else
		snprintf(buf, size, "%ud", days);
	return buf;
}

void steer_period_bounds(unsigned days, uint32_t t, uint32_t *start,
                         uint32_t *end)
{
	if (days == 0) {
		time_t tt = (time_t)t;
		struct tm a;
		gmtime_r(&tt, &a);
		a.tm_mday = 1;
		a.tm_hour = a.tm_min = a.tm_sec = 0;
		struct tm b = a;
		b.tm_mon++;
		*start = (uint32_t)timegm(&a);
		*end = (uint32_t)timegm(&b);
		return;
	}
	/* Runs of days counted from a Monday, so that a week is Monday to
	 * Sunday: day 4 of the Unix epoch, 1970-01-05. */
	uint32_t day = t / 86400, first = 4;
	uint32_t k = day >= first ? (day - first) / days : 0;
	*start = (first + k * days) * 86400;
	*end = *start + days * 86400;
	if (day < first) {
		*start = 0;
		*end = first * 86400;
	}
}

int steer_budget_state(double limit, double alert_pct, double spent,
                       unsigned days, uint32_t now)
{
	if (limit <= 0)
		return 0;
	if (spent >= limit)
		return 2;
	uint32_t start, end;
	steer_period_bounds(days, now, &start, &end);
	double frac = ((double)now - start) / ((double)end - start);
	/* At least a thirtieth of the period (a day of a month), so that
	 * the first hours of a period do not turn any spend into an
	 * alert. */
	if (frac < 1.0 / 30)
		frac = 1.0 / 30;
	return spent >= limit * frac * alert_pct / 100 ? 1 : 0;
}
