/* SPDX-License-Identifier: MIT */
/* The Prometheus text exposition format. */
#include "stats/expo.h"
#include "common/util.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void expo_init(expo_t *e)
{
	e->cap = 4096;
	e->buf = xmalloc(e->cap);
	e->buf[0] = 0;
	e->len = 0;
}

void expo_free(expo_t *e)
{
	free(e->buf);
	e->buf = NULL;
	e->len = e->cap = 0;
}

__attribute__((format(printf, 2, 3)))
static void put(expo_t *e, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(e->buf + e->len, e->cap - e->len, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if ((size_t)n < e->cap - e->len) {
			e->len += (size_t)n;
			return;
		}
		e->cap = (e->cap + (size_t)n) * 2;
		e->buf = xrealloc(e->buf, e->cap);
	}
}

/* Help text escapes backslash and newline; label values also the double
 * quote (exposition format 0.0.4). */
static void put_escaped(expo_t *e, const char *s, int quote)
{
	for (; *s; s++) {
		if (*s == '\\')
			put(e, "\\\\");
		else if (*s == '\n')
			put(e, "\\n");
		else if (quote && *s == '"')
			put(e, "\\\"");
		else
			put(e, "%c", *s);
	}
}

void expo_family(expo_t *e, const char *name, expo_type_t type,
                 const char *help)
{
	static const char *const types[] = { "counter", "gauge", "histogram" };
	put(e, "# HELP %s ", name);
	put_escaped(e, help, 0);
	put(e, "\n# TYPE %s %s\n", name, types[type]);
}

static void put_labels(expo_t *e, const char *const *labels, size_t n)
{
	if (!n)
		return;
	put(e, "{");
	for (size_t i = 0; i < n; i++) {
		put(e, "%s%s=\"", i ? "," : "", labels[2 * i]);
		put_escaped(e, labels[2 * i + 1], 1);
		put(e, "\"");
	}
	put(e, "}");
}

void expo_sample(expo_t *e, const char *name, const char *const *labels,
                 size_t nlabels, double value)
{
	put(e, "%s", name);
	put_labels(e, labels, nlabels);
	if (isnan(value))
		put(e, " NaN\n");
	else if (isinf(value))
		put(e, value > 0 ? " +Inf\n" : " -Inf\n");
	else
		put(e, " %.17g\n", value);
}

void expo_sample_u64(expo_t *e, const char *name, const char *const *labels,
                     size_t nlabels, uint64_t value)
{
	put(e, "%s", name);
	put_labels(e, labels, nlabels);
	put(e, " %llu\n", (unsigned long long)value);
}
