/* SPDX-License-Identifier: MIT */
/* Probe strings: probe_parse() and probe_format().  The URL is read with
 * libcurl's URL API.  No state: safe on any thread. */
#include "health/probe.h"

#include <ctype.h>
#include <curl/curl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int fail(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int host_char_ok(int c)
{
	return isalnum(c) || c == '.' || c == '-' || c == '_';
}

#define FAIL(...) fail(err, errlen, __VA_ARGS__)

/* Splits the authority of @url (after the scheme) into host and port. */
static int parse_url(const char *url, probe_spec_t *o, char *err,
                     size_t errlen)
{
	const char *p;
	if (!strncasecmp(url, "tcp://", 6)) {
		o->kind = PROBE_TCP, p = url + 6;
	} else if (!strncasecmp(url, "http://", 7)) {
		o->kind = PROBE_HTTP, p = url + 7, o->port = 80;
	} else if (!strncasecmp(url, "https://", 8)) {
		o->kind = PROBE_HTTPS, p = url + 8, o->port = 443;
	} else {
		return FAIL("probe '%s': URL must start with "
		            "tcp://, http:// or https://", url);
	}
	if (strlen(url) >= sizeof(o->url))
		return FAIL("probe '%.40s...': URL longer than "
		            "%zu characters", url, sizeof(o->url) - 1);
	for (const char *c = url; *c; c++)
		if ((unsigned char)*c <= 0x20 || *c == 0x7f)
			return FAIL("probe '%s': control character "
			            "in the URL", url);
	size_t alen = strcspn(p, "/?#");
	const char *end = p + alen, *portp = NULL;
	if (memchr(p, '@', alen))
		return FAIL("probe '%s': credentials in the URL "
		            "are not supported", url);
	const char *h = p;
	size_t hlen;
	if (*p == '[') {
		const char *rb = memchr(p, ']', alen);
		if (!rb)
			return FAIL("probe '%s': missing ']' after "
			            "the IPv6 address", url);
		h = p + 1, hlen = (size_t)(rb - h);
		if (rb + 1 < end && rb[1] != ':')
			return FAIL("probe '%s': expected ':PORT' "
			            "after ']'", url);
		if (rb + 1 < end)
			portp = rb + 2;
		char a[INET6_ADDRSTRLEN + 16];
		size_t alen6 = strcspn(h, "%]");
		struct in6_addr in6;
		if (alen6 >= INET6_ADDRSTRLEN) alen6 = INET6_ADDRSTRLEN - 1;
		memcpy(a, h, alen6), a[alen6] = 0;
		if (inet_pton(AF_INET6, a, &in6) != 1)
			return FAIL("probe '%s': '%.*s' is not an "
			            "IPv6 address", url, (int)hlen, h);
	} else {
		const char *colon = memchr(p, ':', alen);
		hlen = colon ? (size_t)(colon - p) : alen;
		if (colon) {
			portp = colon + 1;
			if (memchr(portp, ':', (size_t)(end - portp)))
				return FAIL("probe '%s': an IPv6 "
				            "address must be in brackets", url);
		}
		for (size_t i = 0; i < hlen; i++)
			if (!host_char_ok((unsigned char)h[i]))
				return FAIL("probe '%s': bad character "
				            "'%c' in the host", url, h[i]);
	}
	if (hlen == 0)
		return FAIL("probe '%s': no host", url);
	if (hlen >= sizeof(o->host))
		return FAIL("probe '%s': host too long", url);
	memcpy(o->host, h, hlen), o->host[hlen] = 0;
	if (portp) {
		size_t plen = (size_t)(end - portp);
		unsigned long v = 0;
		int ok = plen > 0 && plen <= 5;
		for (size_t i = 0; ok && i < plen; i++)
			ok = isdigit((unsigned char)portp[i]),
			v = v * 10 + (unsigned long)(portp[i] - '0');
		if (!ok || v == 0 || v > 65535)
			return FAIL("probe '%s': bad port '%.*s' "
			            "(1-65535)", url, (int)plen, portp);
		o->port = (uint16_t)v;
	} else if (o->kind == PROBE_TCP) {
		return FAIL("probe '%s': a tcp:// probe needs a "
		            "port (tcp://HOST:PORT)", url);
	}
	if (o->kind == PROBE_TCP && *end)
		return FAIL("probe '%s': a tcp:// URL has no path",
		            url);
	memcpy(o->url, url, strlen(url) + 1);
	return 0;
}

/* Reads a number of seconds from @v into @out within [lo, hi]. */
static int parse_seconds(const char *word, const char *v, double lo,
                         double hi, double *out, char *err, size_t errlen)
{
	char *e;
	double d = strtod(v, &e);
	if (!*v || *e || !isfinite(d) || d < lo || d > hi)
		return FAIL("%s: must be between %g and %g s",
		            word, lo, hi);
	*out = d;
	return 0;
}

static int parse_status(const char *s, const char **end, unsigned *out)
{
	unsigned v = 0;
	int n = 0;
	while (isdigit((unsigned char)*s) && n < 4)
		v = v * 10 + (unsigned)(*s++ - '0'), n++;
	*end = s;
	*out = v;
	return n == 3 && v >= 100 && v <= 599 ? 0 : -1;
}

int probe_parse(const char *text, double interval_s, double timeout_s,
                probe_spec_t *out, char *err, size_t errlen)
{
	probe_spec_t o;
	char buf[2048], *save = NULL;
	enum { O_INTERVAL = 1, O_TIMEOUT = 2, O_EXPECT = 4, O_MATCH = 8,
	       O_HOST = 16, O_INSECURE = 32 };
	unsigned seen = 0;

	memset(&o, 0, sizeof(o));
	o.interval_s = interval_s, o.timeout_s = timeout_s;
	o.expect_lo = 200, o.expect_hi = 399;
	if (!text || strlen(text) >= sizeof(buf))
		return FAIL("probe: text missing or longer than "
		            "%zu characters", sizeof(buf) - 1);
	memcpy(buf, text, strlen(text) + 1);
	char *w = strtok_r(buf, " \t", &save);
	if (!w)
		return FAIL("probe: empty (expected a URL)");
	if (parse_url(w, &o, err, errlen))
		return -1;
	const char *url = o.url;
	while ((w = strtok_r(NULL, " \t", &save))) {
		char *eq = strchr(w, '=');
		const char *v = eq ? eq + 1 : NULL;
		size_t klen = eq ? (size_t)(eq - w) : strlen(w);
		unsigned bit;
#define KEY(k) (klen == sizeof(k) - 1 && !strncmp(w, k, klen))
		if (KEY("interval") && v)
			bit = O_INTERVAL;
		else if (KEY("timeout") && v)
			bit = O_TIMEOUT;
		else if (KEY("expect") && v)
			bit = O_EXPECT;
		else if (KEY("match") && v)
			bit = O_MATCH;
		else if (KEY("host") && v)
			bit = O_HOST;
		else if (KEY("insecure") && !v)
			bit = O_INSECURE;
		else
			return FAIL("probe '%s': unknown option "
			            "'%s' (interval=S timeout=S expect=LO-HI "
			            "match=TEXT host=NAME insecure)", url, w);
#undef KEY
		if (seen & bit)
			return FAIL("probe '%s': '%.*s' given twice",
			            url, (int)klen, w);
		seen |= bit;
		if (o.kind != PROBE_HTTPS && bit == O_INSECURE)
			return FAIL("insecure: only for https:// "
			            "probes");
		if (o.kind == PROBE_TCP && bit >= O_EXPECT)
			return FAIL("%s: only for http:// and "
			            "https:// probes", w);
		switch (bit) {
		case O_INTERVAL:
			if (parse_seconds(w, v, PROBE_INTERVAL_MIN,
			                  PROBE_INTERVAL_MAX, &o.interval_s,
			                  err, errlen))
				return -1;
			o.has_interval = 1;
			break;
		case O_TIMEOUT:
			if (parse_seconds(w, v, PROBE_TIMEOUT_MIN,
			                  PROBE_TIMEOUT_MAX, &o.timeout_s, err,
			                  errlen))
				return -1;
			o.has_timeout = 1;
			break;
		case O_EXPECT: {
			const char *e;
			unsigned lo, hi;
			int bad = parse_status(v, &e, &lo);
			hi = lo;
			if (!bad && *e == '-')
				bad = parse_status(e + 1, &e, &hi);
			if (bad || *e || hi < lo)
				return FAIL("%s: must be a status or "
				            "a range LO-HI within 100-599", w);
			o.expect_lo = (uint16_t)lo, o.expect_hi = (uint16_t)hi;
			break;
		}
		case O_MATCH:
			if (!*v || strlen(v) >= sizeof(o.match))
				return FAIL("match=: text must have 1 to %zu "
				            "characters", sizeof(o.match) - 1);
			memcpy(o.match, v, strlen(v) + 1);
			break;
		case O_HOST: {
			/* A name, optionally with :port or an IPv6 literal in
			 * brackets: nothing that could break the header. */
			size_t n = strlen(v);
			if (!n || n >= sizeof(o.host_header))
				return FAIL("%s: name must have 1 to "
				            "%zu characters", w,
				            sizeof(o.host_header) - 1);
			for (size_t i = 0; i < n; i++)
				if (!host_char_ok((unsigned char)v[i]) &&
				    !strchr(":[]", v[i]))
					return FAIL("%s: bad character '%c' "
					            "in the name", w, v[i]);
			memcpy(o.host_header, v, n + 1);
			break;
		}
		case O_INSECURE:
			o.insecure = 1;
			break;
		}
	}
	if (!o.has_interval &&
	    (!isfinite(o.interval_s) || o.interval_s < PROBE_INTERVAL_MIN ||
	     o.interval_s > PROBE_INTERVAL_MAX))
		return FAIL("probe '%s': default interval %g s out "
		            "of range", url, o.interval_s);
	if (!o.has_timeout &&
	    (!isfinite(o.timeout_s) || o.timeout_s < PROBE_TIMEOUT_MIN ||
	     o.timeout_s > PROBE_TIMEOUT_MAX))
		return FAIL("probe '%s': default timeout %g s out "
		            "of range", url, o.timeout_s);
	if (o.timeout_s >= o.interval_s)
		return FAIL("probe '%s': timeout must be below the "
		            "interval (timeout %g s, interval %g s)", url,
		            o.timeout_s, o.interval_s);
	*out = o;
	return 0;
}

/* Shortest of %.15g and %.17g that reads back to @v exactly. */
static void fmt_num(char *b, size_t n, double v)
{
	snprintf(b, n, "%.15g", v);
	if (strtod(b, NULL) != v)
		snprintf(b, n, "%.17g", v);
}

void probe_format(const probe_spec_t *s, char *buf, size_t size)
{
	char num[40];
	size_t len = 0;
#define ADD(...) do {                                                     \
		if (len < size) {                                         \
			int k_ = snprintf(buf + len, size - len, __VA_ARGS__); \
			len += k_ > 0 ? (size_t)k_ : 0;                   \
		}                                                         \
	} while (0)
	if (!size)
		return;
	buf[0] = 0;
	ADD("%s", s->url);
	if (s->has_interval) {
		fmt_num(num, sizeof(num), s->interval_s);
		ADD(" interval=%s", num);
	}
	if (s->has_timeout) {
		fmt_num(num, sizeof(num), s->timeout_s);
		ADD(" timeout=%s", num);
	}
	if (s->kind != PROBE_TCP) {
		if (s->expect_lo != 200 || s->expect_hi != 399) {
			if (s->expect_lo == s->expect_hi)
				ADD(" expect=%u", s->expect_lo);
			else
				ADD(" expect=%u-%u", s->expect_lo,
				    s->expect_hi);
		}
		if (s->match[0])
			ADD(" match=%s", s->match);
		if (s->host_header[0])
			ADD(" host=%s", s->host_header);
		if (s->insecure && s->kind == PROBE_HTTPS)
			ADD(" insecure");
	}
#undef ADD
}
