/* SPDX-License-Identifier: MIT */
/* Probe strings: probe_parse() and probe_format().  The URL is read with
 * libcurl's URL API.  No state: safe on any thread. */
#include "probe/probe.h"

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

/* libcurl's URL parser splits the URL, checks IPv6 literals and port
 * ranges.  It is more lenient than probe strings have ever been, so the
 * raw text is held to the old rules too:
 *  - curl skips missing or extra slashes ("http:///x" is host x to it):
 *    here the host must follow "//";
 *  - curl percent-decodes a host name ("h%41" is "hA") and takes UTF-8:
 *    here a name is letters, digits, '.', '-' and '_';
 *  - curl reads "h:" as no port and "h:000080" as 80: here a port is 1 to
 *    5 digits, 1-65535.
 * curl's error codes do not say which part is bad; the messages name it
 * from the raw authority. */

/* The raw port text of authority [@a, @end): after "]:" for an IPv6
 * literal, else after the first ':'.  NULL when there is no ':'. */
static const char *raw_port(const char *a, const char *end, size_t *plen)
{
	const char *c;
	if (*a == '[') {
		const char *rb = memchr(a, ']', (size_t)(end - a));
		c = rb && rb + 1 < end && rb[1] == ':' ? rb + 1 : NULL;
	} else {
		c = memchr(a, ':', (size_t)(end - a));
	}
	if (!c)
		return NULL;
	*plen = (size_t)(end - c - 1);
	return c + 1;
}

/* A message for curl's refusal @uc of @url, whose authority is
 * [@a, @end). */
static int url_error(const char *url, const char *a, const char *end,
                     CURLUcode uc, char *err, size_t errlen)
{
	const char *rb = *a == '[' ? memchr(a, ']', (size_t)(end - a)) : NULL;
	const char *colon = memchr(a, ':', (size_t)(end - a)), *pt;
	size_t plen;
	if (memchr(a, '@', (size_t)(end - a)))
		return FAIL("probe '%s': credentials in the URL "
		            "are not supported", url);
	switch (uc) {
	case CURLUE_BAD_IPV6:
		if (*a == '[' && !rb)
			return FAIL("probe '%s': missing ']' after "
			            "the IPv6 address", url);
		if (rb)
			return FAIL("probe '%s': '%.*s' is not an "
			            "IPv6 address", url, (int)(rb - a - 1), a + 1);
		break;
	case CURLUE_BAD_PORT_NUMBER:
		if (rb && rb + 1 < end && rb[1] != ':')
			return FAIL("probe '%s': expected ':PORT' "
			            "after ']'", url);
		if (!rb && colon && memchr(colon + 1, ':', (size_t)(end - colon - 1)))
			return FAIL("probe '%s': an IPv6 "
			            "address must be in brackets", url);
		for (const char *c = a; !rb && c < (colon ? colon : end); c++)
			if (!host_char_ok((unsigned char)*c))
				return FAIL("probe '%s': bad character "
				            "'%c' in the host", url, *c);
		if (colon == a)
			return FAIL("probe '%s': no host", url);
		if ((pt = raw_port(a, end, &plen)))
			return FAIL("probe '%s': bad port '%.*s' "
			            "(1-65535)", url, (int)plen, pt);
		break;
	case CURLUE_BAD_HOSTNAME:
		for (const char *c = a; c < (colon ? colon : end); c++)
			if (!host_char_ok((unsigned char)*c))
				return FAIL("probe '%s': bad character "
				            "'%c' in the host", url, *c);
		break;
	case CURLUE_NO_HOST:
		return FAIL("probe '%s': no host", url);
	case CURLUE_BAD_LOGIN:
	case CURLUE_BAD_USER:
	case CURLUE_BAD_PASSWORD:
		return FAIL("probe '%s': credentials in the URL "
		            "are not supported", url);
	default:
		break;
	}
	return FAIL("probe '%s': %s", url, curl_url_strerror(uc));
}

/* The host of parsed URL @u into @o: an IPv6 literal without brackets
 * (with its zone after '%'), else a name or IPv4 address whose raw text
 * [@a, @hend) keeps to host_char_ok. */
static int url_host(CURLU *u, const char *url, const char *a,
                    const char *hend, probe_spec_t *o, char *err,
                    size_t errlen)
{
	char *host = NULL, *zone = NULL;
	if (curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK)
		return FAIL("probe '%s': no host", url);
	char buf[sizeof(o->host) + 64];
	if (host[0] == '[') {
		curl_url_get(u, CURLUPART_ZONEID, &zone, 0);
		snprintf(buf, sizeof(buf), "%.*s%s%s", (int)strcspn(host + 1, "]"),
		         host + 1, zone ? "%" : "", zone ? zone : "");
	} else {
		snprintf(buf, sizeof(buf), "%s", host);
	}
	curl_free(host);
	curl_free(zone);
	if (*a != '[')
		for (const char *c = a; c < hend; c++)
			if (!host_char_ok((unsigned char)*c))
				return FAIL("probe '%s': bad character "
				            "'%c' in the host", url, *c);
	if (!buf[0])
		return FAIL("probe '%s': no host", url);
	if (strlen(buf) >= sizeof(o->host))
		return FAIL("probe '%s': host too long", url);
	memcpy(o->host, buf, strlen(buf) + 1);
	return 0;
}

/* Host and port of parsed URL @u into @o; [@a, @end) is the raw
 * authority. */
static int url_parts(CURLU *u, const char *url, const char *a,
                     const char *end, probe_spec_t *o, char *err,
                     size_t errlen)
{
	char *v = NULL;
	if (curl_url_get(u, CURLUPART_USER, &v, 0) == CURLUE_OK ||
	    curl_url_get(u, CURLUPART_PASSWORD, &v, 0) == CURLUE_OK) {
		curl_free(v);
		return FAIL("probe '%s': credentials in the URL "
		            "are not supported", url);
	}
	size_t plen = 0;
	const char *pt = raw_port(a, end, &plen);
	if (url_host(u, url, a, pt ? pt - 1 : end, o, err, errlen))
		return -1;
	if (!pt) {
		if (o->kind == PROBE_TCP)
			return FAIL("probe '%s': a tcp:// probe needs a "
			            "port (tcp://HOST:PORT)", url);
		return 0;
	}
	unsigned long port = 0;
	int ok = plen > 0 && plen <= 5;
	for (size_t i = 0; ok && i < plen; i++)
		ok = isdigit((unsigned char)pt[i]);
	if (ok && curl_url_get(u, CURLUPART_PORT, &v, 0) == CURLUE_OK) {
		port = strtoul(v, NULL, 10);
		curl_free(v);
	}
	if (!ok || port == 0 || port > 65535)
		return FAIL("probe '%s': bad port '%.*s' "
		            "(1-65535)", url, (int)plen, pt);
	o->port = (uint16_t)port;
	return 0;
}

/* Reads URL @url (the first word of a probe string) into @o: kind, host,
 * port and the URL itself. */
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
	if (alen == 0)
		return FAIL("probe '%s': no host", url);
	CURLU *u = curl_url();
	if (!u)
		return FAIL("probe '%s': out of memory", url);
	CURLUcode uc = curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME);
	int rc = uc ? url_error(url, p, p + alen, uc, err, errlen)
	            : url_parts(u, url, p, p + alen, o, err, errlen);
	curl_url_cleanup(u);
	if (rc)
		return -1;
	if (o->kind == PROBE_TCP && p[alen])
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

enum { O_INTERVAL = 1, O_TIMEOUT = 2, O_EXPECT = 4, O_MATCH = 8,
       O_HOST = 16, O_INSECURE = 32 };

/* The value @v of option word @w (its bit @bit) into @o. */
static int parse_option(probe_spec_t *o, unsigned bit, const char *w,
                        const char *v, char *err, size_t errlen)
{
	switch (bit) {
	case O_INTERVAL:
		if (parse_seconds(w, v, PROBE_INTERVAL_MIN, PROBE_INTERVAL_MAX,
		                  &o->interval_s, err, errlen))
			return -1;
		o->has_interval = 1;
		break;
	case O_TIMEOUT:
		if (parse_seconds(w, v, PROBE_TIMEOUT_MIN, PROBE_TIMEOUT_MAX,
		                  &o->timeout_s, err, errlen))
			return -1;
		o->has_timeout = 1;
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
		o->expect_lo = (uint16_t)lo, o->expect_hi = (uint16_t)hi;
		break;
	}
	case O_MATCH:
		if (!*v || strlen(v) >= sizeof(o->match))
			return FAIL("match=: text must have 1 to %zu "
			            "characters", sizeof(o->match) - 1);
		memcpy(o->match, v, strlen(v) + 1);
		break;
	case O_HOST: {
		/* A name, optionally with :port or an IPv6 literal in
		 * brackets: nothing that could break the header. */
		size_t n = strlen(v);
		if (!n || n >= sizeof(o->host_header))
			return FAIL("%s: name must have 1 to "
			            "%zu characters", w,
			            sizeof(o->host_header) - 1);
		for (size_t i = 0; i < n; i++)
			if (!host_char_ok((unsigned char)v[i]) &&
			    !strchr(":[]", v[i]))
				return FAIL("%s: bad character '%c' "
				            "in the name", w, v[i]);
		memcpy(o->host_header, v, n + 1);
		break;
	}
	case O_INSECURE:
		o->insecure = 1;
		break;
	}
	return 0;
}

int probe_parse(const char *text, double interval_s, double timeout_s,
                probe_spec_t *out, char *err, size_t errlen)
{
	probe_spec_t o;
	char buf[2048], *save = NULL;
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
		if (parse_option(&o, bit, w, v, err, errlen))
			return -1;
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
