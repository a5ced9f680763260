/* SPDX-License-Identifier: MIT */
/* Numbers from text with their range and unit (num.h). */
#include "common/num.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The end of the whole number at @s (digits, after a '-' when @neg
 * allows one), or @s when there is none. */
static const char *whole_end(const char *s, int neg)
{
	const char *p = s + (neg && *s == '-');
	if (!isdigit((unsigned char)*p))
		return s;
	while (isdigit((unsigned char)*p))
		p++;
	return p;
}

/* The index of unit @end in @units, -1 for none (@end empty), or -2
 * when it is no unit of them. */
static int unit_of(const char *end, const char *const *units)
{
	if (!*end)
		return -1;
	for (int i = 0; units && units[i]; i++)
		if (strcmp(end, units[i]) == 0)
			return i;
	return -2;
}

int num_parse(const char *s, const num_range_t *r, double *out, int *unit)
{
	if (!s || !*s)
		return NUM_ESYNTAX;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	int overflow = errno == ERANGE;
	if (end == s || ((r->flags & NUM_WHOLE) && end != whole_end(s, r->lo < 0)))
		return NUM_ESYNTAX;
	int u = unit_of(end, r->units);
	if (u == -2)
		return NUM_ESYNTAX;
	if (u >= 0 && r->scale)
		v *= r->scale[u];
	/* NaN is in no range. */
	if (overflow || !(v >= r->lo && v <= r->hi) ||
	    ((r->flags & NUM_LO_OPEN) && v == r->lo) ||
	    ((r->flags & NUM_HI_OPEN) && v == r->hi))
		return NUM_ERANGE;
	*out = v;
	if (unit)
		*unit = u;
	return 0;
}
