/* SPDX-License-Identifier: MIT */
/* The Prometheus text exposition format: written for /metrics, read
 * back for gslbctl stats. */
#include "stats/expo.h"
#include "common/util.h"

#include <errno.h>
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

/* Reading ------------------------------------------------------------ */

/* The reader is the writer's inverse, for `gslbctl stats`, which shows
 * an operator what /metrics says.  It accepts the lines the writer
 * produces and the rest of format 0.0.4 (untyped samples, timestamps,
 * comments), and rejects anything else with the line it is on. */

typedef struct {
	const char *p;            /* the next character */
	unsigned line;
	char *err;
	size_t errlen;
} rd_t;

__attribute__((format(printf, 2, 3)))
static int rd_fail(rd_t *r, const char *fmt, ...)
{
	int n = snprintf(r->err, r->errlen, "line %u: ", r->line);
	va_list ap;
	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < r->errlen)
		vsnprintf(r->err + n, r->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -1;
}

static int name_char(char c, int first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       c == ':' || (!first && c >= '0' && c <= '9');
}

/* Reads a metric or label name into @out (@size bytes). */
static int rd_name(rd_t *r, char *out, size_t size, const char *what)
{
	size_t n = 0;
	if (!name_char(*r->p, 1))
		return rd_fail(r, "expected a %s", what);
	while (name_char(*r->p, n == 0)) {
		if (n + 1 >= size)
			return rd_fail(r, "%s too long", what);
		out[n++] = *r->p++;
	}
	out[n] = 0;
	return 0;
}

/* Reads text up to the end of the line (@quoted: up to the closing
 * quote), undoing the escapes, as a new JSON string in *@out. */
static int rd_text(rd_t *r, int quoted, json_t **out)
{
	size_t cap = 64, n = 0;
	char *b = xmalloc(cap);
	for (;;) {
		char c = *r->p;
		if (!c || c == '\n') {
			if (quoted) {
				free(b);
				return rd_fail(r, "label value without its closing quote");
			}
			break;
		}
		r->p++;
		if (quoted && c == '"')
			break;
		if (c == '\\') {
			char e = *r->p;
			if (e == 'n')
				c = '\n';
			else if (e == '\\' || (quoted && e == '"'))
				c = e;
			else {
				free(b);
				return rd_fail(r, "unknown escape \\%c", e ? e : ' ');
			}
			r->p++;
		}
		if (n + 2 > cap)
			b = xrealloc(b, cap *= 2);
		b[n++] = c;
	}
	*out = json_stringn(b, n);
	free(b);
	return *out ? 0 : rd_fail(r, "text that is not UTF-8");
}

/* Reads "{name="value",...}" into the new object *@labels. */
static int rd_labels(rd_t *r, json_t **labels)
{
	*labels = json_object();
	if (*r->p != '{')
		return 0;
	r->p++;
	while (*r->p != '}') {
		char name[128];
		json_t *v;
		if (rd_name(r, name, sizeof(name), "label name"))
			return -1;
		if (r->p[0] != '=' || r->p[1] != '"')
			return rd_fail(r, "label %s: expected =\"", name);
		r->p += 2;
		if (rd_text(r, 1, &v))
			return -1;
		json_object_set_new(*labels, name, v);
		if (*r->p == ',')
			r->p++;
		else if (*r->p != '}')
			return rd_fail(r, "expected , or } after label %s", name);
	}
	r->p++;
	return 0;
}

/* Reads a sample value: an integer when it is one that fits, else a
 * real; NaN and the infinities, which JSON lacks, as strings. */
static int rd_value(rd_t *r, json_t **out)
{
	char v[64];
	size_t n = 0;
	while (*r->p && *r->p != ' ' && *r->p != '\n' && n + 1 < sizeof(v))
		v[n++] = *r->p++;
	v[n] = 0;
	if (!strcmp(v, "NaN") || !strcmp(v, "+Inf") || !strcmp(v, "-Inf")) {
		*out = json_string(v);
		return 0;
	}
	char *end;
	errno = 0;
	long long i = strtoll(v, &end, 10);
	if (n && !*end && !errno) {
		*out = json_integer(i);
		return 0;
	}
	double d = strtod(v, &end);
	if (!n || *end || !isfinite(d))
		return rd_fail(r, "'%s' is not a sample value", v);
	*out = json_real(d);
	return 0;
}

/* The family a sample named @name belongs to: the last one when the
 * name is its own or one of its histogram series, else a new untyped
 * family. */
static json_t *family_of(json_t *fams, const char *name)
{
	json_t *f = json_array_get(fams, json_array_size(fams) - 1);
	const char *fn = json_string_value(json_object_get(f, "name"));
	const char *ft = json_string_value(json_object_get(f, "type"));
	size_t l = fn ? strlen(fn) : 0;
	if (fn && strncmp(name, fn, l) == 0 &&
	    (!name[l] || ((!strcmp(ft, "histogram") || !strcmp(ft, "summary")) &&
	                  (!strcmp(name + l, "_bucket") || !strcmp(name + l, "_sum") ||
	                   !strcmp(name + l, "_count")))))
		return f;
	f = json_pack("{s:s, s:s, s:s, s:[]}", "name", name, "type", "untyped",
	              "help", "", "samples");
	json_array_append_new(fams, f);
	return f;
}

/* Reads "# HELP name text" or "# TYPE name type" into @fams; other
 * comments are skipped. */
static int rd_comment(rd_t *r, json_t *fams)
{
	static const char *const types[] = { "counter", "gauge", "histogram",
	                                     "summary", "untyped", NULL };
	int help = strncmp(r->p, "# HELP ", 7) == 0;
	if (!help && strncmp(r->p, "# TYPE ", 7) != 0) {
		r->p += strcspn(r->p, "\n");
		return 0;
	}
	r->p += 7;
	char name[256];
	if (rd_name(r, name, sizeof(name), "metric name"))
		return -1;
	if (*r->p == ' ')
		r->p++;
	json_t *f = json_array_get(fams, json_array_size(fams) - 1);
	if (!f || strcmp(json_string_value(json_object_get(f, "name")), name) != 0 ||
	    json_array_size(json_object_get(f, "samples"))) {
		f = json_pack("{s:s, s:s, s:s, s:[]}", "name", name, "type", "untyped",
		              "help", "", "samples");
		json_array_append_new(fams, f);
	}
	json_t *v;
	if (rd_text(r, 0, &v))
		return -1;
	if (help) {
		json_object_set_new(f, "help", v);
		return 0;
	}
	for (const char *const *t = types; *t; t++)
		if (strcmp(*t, json_string_value(v)) == 0) {
			json_object_set_new(f, "type", v);
			return 0;
		}
	rd_fail(r, "family %s: unknown type '%s'", name, json_string_value(v));
	json_decref(v);
	return -1;
}

/* Reads one sample line into the family it belongs to in @fams. */
static int rd_sample(rd_t *r, json_t *fams)
{
	char name[256];
	json_t *labels = NULL, *v = NULL;
	if (rd_name(r, name, sizeof(name), "metric name") || rd_labels(r, &labels))
		goto bad;
	if (*r->p != ' ') {
		rd_fail(r, "%s: expected a space before the value", name);
		goto bad;
	}
	r->p++;
	if (rd_value(r, &v))
		goto bad;
	if (*r->p == ' ') {       /* an optional timestamp, in ms */
		r->p++;
		if (strspn(r->p, "-0123456789") != strcspn(r->p, "\n")) {
			rd_fail(r, "%s: bad timestamp", name);
			goto bad;
		}
		r->p += strcspn(r->p, "\n");
	}
	json_array_append_new(json_object_get(family_of(fams, name), "samples"),
	                      json_pack("{s:s, s:o, s:o}", "name", name,
	                                "labels", labels, "value", v));
	return 0;
bad:
	json_decref(labels);
	json_decref(v);
	return -1;
}

json_t *expo_parse(const char *text, char *err, size_t errlen)
{
	rd_t r = { text, 1, err, errlen };
	json_t *fams = json_array();
	while (*r.p) {
		int rc = 0;
		if (*r.p == '#')
			rc = rd_comment(&r, fams);
		else if (*r.p != '\n')
			rc = rd_sample(&r, fams);
		if (rc) {
			json_decref(fams);
			return NULL;
		}
		if (*r.p && *r.p != '\n') {
			rd_fail(&r, "unexpected text after the sample");
			json_decref(fams);
			return NULL;
		}
		if (*r.p)
			r.p++;
		r.line++;
	}
	return fams;
}
