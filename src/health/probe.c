/* SPDX-License-Identifier: MIT */
/* Probe parsing and the probe engine: TCP connects on libuv, HTTP(S)
 * through libcurl's multi interface driven by the same libuv loop.
 *
 * Invariants:
 * - Every live run is on its engine's list; it leaves the list when it
 *   completes or is cancelled, before its callback runs, so the engine
 *   never reports a run twice.
 * - A TCP run owns a timer, maybe a TCP handle and maybe a getaddrinfo
 *   request; it is freed when the last of them has called back (refs).
 * - An HTTP run owns only a curl easy handle and is freed synchronously.
 * - curl tells us through the socket callback which descriptors to watch;
 *   each gets a uv_poll_t in a sock_t that lives until its close callback.
 * - The engine struct is freed when its timer and every sock_t are closed
 *   (refs), so the loop has to run once after probe_engine_free. */
#include "health/probe.h"
#include "config.h"
#include "common/util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <curl/curl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* Parsing ----------------------------------------------------------- */

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

/* Engine ------------------------------------------------------------ */

typedef struct sock sock_t;

struct probe_engine {
	uv_loop_t *loop;
	CURLM *multi;
	uv_timer_t timer;        /* curl's CURLMOPT_TIMERFUNCTION timer */
	char *user_agent;
	probe_run_t *runs;       /* live runs, doubly linked */
	sock_t *socks;           /* descriptors curl asked us to watch */
	int refs;                /* open handles: timer + socks */
	int dispatching;         /* inside check_done (user callbacks) */
	int dying;               /* probe_engine_free was called */
};

struct sock {
	uv_poll_t poll;
	curl_socket_t fd;
	probe_engine_t *e;
	sock_t *next, *prev;
};

struct probe_run {
	probe_engine_t *e;
	probe_run_t *next, *prev;
	probe_spec_t spec;
	probe_cb cb;
	void *arg;
	probe_result_t res;
	uint64_t t0;             /* uv_hrtime at start */
	int done;                /* reported or cancelled */
	/* TCP */
	int refs;                /* timer, tcp handle, getaddrinfo */
	int has_tcp;
	int sync_error;          /* connect failed at once: report it */
	uint64_t t_connect;
	uv_timer_t timer;
	uv_tcp_t tcp;
	uv_connect_t conn;
	uv_getaddrinfo_t gai;
	/* HTTP */
	CURL *easy;
	struct curl_slist *headers;   /* Host: override */
	struct curl_slist *connect_to;
	char errbuf[CURL_ERROR_SIZE];
	size_t body_len;         /* bytes of body seen */
	int body_cut;            /* we stopped the transfer at the limit */
	int matched;
	size_t carry_len;        /* tail of the previous chunk for matching */
	char carry[sizeof(((probe_spec_t *)0)->match)];
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;
static int global_rc;

static void global_init_once(void)
{
	global_rc = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK
	            ? 0 : GSLB_EIO;
}

int probe_global_init(void)
{
	pthread_once(&global_once, global_init_once);
	return global_rc;
}

void probe_global_cleanup(void)
{
	curl_global_cleanup();
}

static void run_link(probe_engine_t *e, probe_run_t *r)
{
	r->e = e;
	r->next = e->runs, r->prev = NULL;
	if (e->runs)
		e->runs->prev = r;
	e->runs = r;
}

static void run_unlink(probe_run_t *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		r->e->runs = r->next;
	if (r->next)
		r->next->prev = r->prev;
	r->next = r->prev = NULL;
}

static uint32_t ms_since(uint64_t t0)
{
	uint64_t d = (uv_hrtime() - t0) / 1000000;
	return d > UINT32_MAX ? UINT32_MAX : (uint32_t)d;
}

static void result_init(probe_result_t *res, const probe_spec_t *s)
{
	memset(res, 0, sizeof(*res));
	res->cert_days_left = -1;
	res->body_ok = s->match[0] ? 0 : 1;
}

static uint64_t timeout_ms(const probe_spec_t *s)
{
	double ms = s->timeout_s * 1000.0;
	return ms < 1 ? 1 : (uint64_t)ms;
}

/* TCP probes ------------------------------------------------------- */

static void tcp_unref(probe_run_t *r)
{
	if (--r->refs == 0)
		free(r);
}

static void tcp_closed(uv_handle_t *h)
{
	tcp_unref(h->data);
}

/* Ends a TCP run: closes what it holds and reports @r->res unless it was
 * cancelled (@report 0).  The run is freed once every handle is closed. */
static void tcp_finish(probe_run_t *r, int report)
{
	if (r->done)
		return;
	r->done = 1;
	run_unlink(r);
	uv_close((uv_handle_t *)&r->timer, tcp_closed);
	if (r->has_tcp)
		uv_close((uv_handle_t *)&r->tcp, tcp_closed);
	/* A queued lookup is cancelled and calls back with UV_EAI_CANCELED;
	 * one already running calls back later.  Either way it holds a ref. */
	if (r->gai.loop && r->gai.data)
		uv_cancel((uv_req_t *)&r->gai);
	if (report) {
		r->res.total_ms = ms_since(r->t0);
		r->cb(&r->res, r->arg);
	}
}

static void tcp_timeout(uv_timer_t *t)
{
	probe_run_t *r = t->data;
	if (!r->sync_error) {
		r->res.timed_out = 1;
		snprintf(r->res.error, sizeof(r->res.error),
		         "timed out after %llu ms",
		         (unsigned long long)timeout_ms(&r->spec));
	}
	tcp_finish(r, 1);
}

static void tcp_connected(uv_connect_t *req, int status)
{
	probe_run_t *r = req->data;
	if (r->done)        /* UV_ECANCELED from closing the handle */
		return;
	r->res.connect_ms = ms_since(r->t_connect);
	if (status == 0) {
		r->res.connected = 1, r->res.status_ok = 1;
	} else if (status == UV_ECONNREFUSED) {
		snprintf(r->res.error, sizeof(r->res.error),
		         "connection refused");
	} else {
		snprintf(r->res.error, sizeof(r->res.error), "connect: %s",
		         uv_strerror(status));
	}
	tcp_finish(r, 1);
}

static void tcp_connect(probe_run_t *r, const struct sockaddr *sa)
{
	int rc = uv_tcp_init(r->e->loop, &r->tcp);
	if (rc == 0) {
		r->tcp.data = r;
		r->has_tcp = 1, r->refs++;
		r->conn.data = r;
		r->t_connect = uv_hrtime();
		rc = uv_tcp_connect(&r->conn, &r->tcp, sa, tcp_connected);
	}
	if (rc < 0) {
		/* Report from the timer, never from within probe_start. */
		snprintf(r->res.error, sizeof(r->res.error), "connect: %s",
		         uv_strerror(rc));
		r->sync_error = 1;
		uv_timer_start(&r->timer, tcp_timeout, 0, 0);
	}
}

static void tcp_resolved(uv_getaddrinfo_t *req, int status,
                         struct addrinfo *ai)
{
	probe_run_t *r = req->data;
	req->data = NULL;
	if (!r->done) {
		if (status < 0 || !ai) {
			snprintf(r->res.error, sizeof(r->res.error),
			         "resolve '%.64s': %s", r->spec.host, status < 0
			         ? uv_strerror(status) : "no address");
			tcp_finish(r, 1);
		} else {
			tcp_connect(r, ai->ai_addr);
		}
	}
	uv_freeaddrinfo(ai);
	tcp_unref(r);
}

static int tcp_start(probe_run_t *r)
{
	struct sockaddr_storage ss;
	uv_timer_init(r->e->loop, &r->timer);
	r->timer.data = r;
	r->refs = 1;
	uv_timer_start(&r->timer, tcp_timeout, timeout_ms(&r->spec), 0);
	if (uv_ip4_addr(r->spec.host, r->spec.port,
	                (struct sockaddr_in *)&ss) == 0 ||
	    uv_ip6_addr(r->spec.host, r->spec.port,
	                (struct sockaddr_in6 *)&ss) == 0) {
		tcp_connect(r, (struct sockaddr *)&ss);
		return 0;
	}
	char port[8];
	struct addrinfo hints;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	snprintf(port, sizeof(port), "%u", r->spec.port);
	r->gai.data = r;
	int rc = uv_getaddrinfo(r->e->loop, &r->gai, tcp_resolved,
	                        r->spec.host, port, &hints);
	if (rc < 0) {
		r->gai.data = NULL;
		snprintf(r->res.error, sizeof(r->res.error),
		         "resolve '%.64s': %s", r->spec.host, uv_strerror(rc));
		r->sync_error = 1;
		uv_timer_start(&r->timer, tcp_timeout, 0, 0);
	} else {
		r->refs++;
	}
	return 0;
}

/* HTTP(S) probes --------------------------------------------------- */

/* Feeds a body chunk to the substring search.  Only the last len-1 bytes
 * of the previous chunks are kept (carry), so a match split across chunks
 * is found without buffering the body. */
static void body_search(probe_run_t *r, const char *d, size_t n)
{
	const char *m = r->spec.match;
	size_t ml = strlen(m);
	if (!ml || r->matched)
		return;
	if (r->carry_len) {
		char win[2 * sizeof(r->carry)];
		size_t take = n < ml - 1 ? n : ml - 1;
		memcpy(win, r->carry, r->carry_len);
		memcpy(win + r->carry_len, d, take);
		if (memmem(win, r->carry_len + take, m, ml)) {
			r->matched = 1;
			return;
		}
	}
	if (memmem(d, n, m, ml)) {
		r->matched = 1;
		return;
	}
	/* Keep the last ml-1 bytes of carry+chunk. */
	size_t keep = ml - 1;
	if (n >= keep) {
		memcpy(r->carry, d + n - keep, keep);
	} else {
		size_t old = r->carry_len + n > keep ? keep - n : r->carry_len;
		memmove(r->carry, r->carry + r->carry_len - old, old);
		memcpy(r->carry + old, d, n);
		keep = old + n;
	}
	r->carry_len = keep;
}

static size_t http_write(char *d, size_t size, size_t nmemb, void *arg)
{
	probe_run_t *r = arg;
	size_t n = size * nmemb;
	size_t room = PROBE_BODY_MAX - r->body_len;
	if (n > room) {
		/* Enough read: a health answer is small, and a probe must not
		 * download a large object.  Returning short stops the transfer
		 * (CURLE_WRITE_ERROR, which http_done does not count as an
		 * error). */
		body_search(r, d, room);
		r->body_len += room;
		r->body_cut = 1;
		return 0;
	}
	body_search(r, d, n);
	r->body_len += n;
	return n;
}

/* Days from now to the leaf certificate's "Expire date", or -1.  OpenSSL
 * prints it as "Mon DD HH:MM:SS YYYY GMT" (ASN1_TIME_print). */
static int32_t cert_days_left(CURL *easy)
{
	struct curl_certinfo *ci = NULL;
	if (curl_easy_getinfo(easy, CURLINFO_CERTINFO, &ci) != CURLE_OK ||
	    !ci || ci->num_of_certs < 1)
		return -1;
	for (struct curl_slist *l = ci->certinfo[0]; l; l = l->next) {
		static const char key[] = "Expire date:";
		if (strncmp(l->data, key, sizeof(key) - 1))
			continue;
		struct tm tm;
		memset(&tm, 0, sizeof(tm));
		const char *p = l->data + sizeof(key) - 1;
		while (*p == ' ')
			p++;
		if (!strptime(p, "%b %d %H:%M:%S %Y", &tm))
			return -1;
		time_t exp = timegm(&tm);
		double days = floor(difftime(exp, time(NULL)) / 86400.0);
		if (days < INT32_MIN)
			days = INT32_MIN;
		return days > INT32_MAX ? INT32_MAX : (int32_t)days;
	}
	return -1;
}

static uint32_t secs_ms(double s)
{
	return s <= 0 ? 0 : s * 1000 >= UINT32_MAX ? UINT32_MAX
	                                           : (uint32_t)(s * 1000 + 0.5);
}

static void http_free(probe_run_t *r)
{
	curl_multi_remove_handle(r->e->multi, r->easy);
	curl_easy_cleanup(r->easy);
	curl_slist_free_all(r->headers);
	curl_slist_free_all(r->connect_to);
	free(r);
}

/* Fills the result of a finished transfer. */
static void http_result(probe_run_t *r, CURLcode cc)
{
	probe_result_t *res = &r->res;
	long code = 0;
	double t_dns = 0, t_conn = 0, t_app = 0, t_total = 0;
	curl_easy_getinfo(r->easy, CURLINFO_RESPONSE_CODE, &code);
	curl_easy_getinfo(r->easy, CURLINFO_NAMELOOKUP_TIME, &t_dns);
	curl_easy_getinfo(r->easy, CURLINFO_CONNECT_TIME, &t_conn);
	curl_easy_getinfo(r->easy, CURLINFO_APPCONNECT_TIME, &t_app);
	curl_easy_getinfo(r->easy, CURLINFO_TOTAL_TIME, &t_total);
	if (r->body_cut && cc == CURLE_WRITE_ERROR)
		cc = CURLE_OK;
	res->status = code > 0 && code < 1000 ? (uint16_t)code : 0;
	/* curl's times run from the start of the transfer, so TLS completion
	 * (APPCONNECT) already includes the TCP connect; name resolution is
	 * taken out to measure the handshakes only. */
	double t_hs = r->spec.kind == PROBE_HTTPS ? t_app : t_conn;
	if (r->spec.kind == PROBE_HTTPS)
		res->connected = t_app > 0 || code > 0;
	else
		res->connected = t_conn > 0 || code > 0;
	if (res->connected)
		res->connect_ms = secs_ms(t_hs - t_dns);
	res->total_ms = t_total > 0 ? secs_ms(t_total) : ms_since(r->t0);
	res->status_ok = code >= r->spec.expect_lo && code <= r->spec.expect_hi;
	res->body_ok = r->spec.match[0] ? r->matched : 1;
	if (r->spec.kind == PROBE_HTTPS)
		res->cert_days_left = cert_days_left(r->easy);
	if (cc != CURLE_OK) {
		res->timed_out = cc == CURLE_OPERATION_TIMEDOUT;
		snprintf(res->error, sizeof(res->error), "%.*s",
		         (int)sizeof(res->error) - 1,
		         r->errbuf[0] ? r->errbuf : curl_easy_strerror(cc));
		res->status_ok = 0;
		if (r->spec.match[0])
			res->body_ok = 0;
	} else if (!res->status_ok) {
		snprintf(res->error, sizeof(res->error),
		         "status %ld not in %u-%u", code, r->spec.expect_lo,
		         r->spec.expect_hi);
	} else if (!res->body_ok) {
		snprintf(res->error, sizeof(res->error),
		         "body has no '%.80s'%s", r->spec.match,
		         r->body_cut ? " in its first 64 KiB" : "");
	}
}

static void engine_finish_free(probe_engine_t *e);

/* Reports every transfer curl has finished.  User callbacks may start or
 * cancel runs, or free the engine (deferred to the end of this loop). */
static void check_done(probe_engine_t *e)
{
	CURLMsg *m;
	int left;
	e->dispatching++;
	while (!e->dying && (m = curl_multi_info_read(e->multi, &left))) {
		if (m->msg != CURLMSG_DONE)
			continue;
		probe_run_t *r = NULL;
		CURLcode cc = m->data.result;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE,
		                  (char **)&r);
		if (!r || r->done)
			continue;
		r->done = 1;
		http_result(r, cc);
		run_unlink(r);
		/* Removing the handle may call the socket callback; it is
		 * allowed here, outside any curl callback. */
		curl_multi_remove_handle(e->multi, r->easy);
		r->cb(&r->res, r->arg);
		http_free(r);
	}
	e->dispatching--;
	if (e->dying && !e->dispatching)
		engine_finish_free(e);
}

static void engine_unref(probe_engine_t *e)
{
	if (--e->refs == 0) {
		free(e->user_agent);
		free(e);
	}
}

static void engine_timer_closed(uv_handle_t *h)
{
	engine_unref(h->data);
}

static void sock_closed(uv_handle_t *h)
{
	sock_t *s = h->data;
	probe_engine_t *e = s->e;
	free(s);
	engine_unref(e);
}

static void sock_close(sock_t *s)
{
	probe_engine_t *e = s->e;
	if (s->prev)
		s->prev->next = s->next;
	else
		e->socks = s->next;
	if (s->next)
		s->next->prev = s->prev;
	uv_poll_stop(&s->poll);
	uv_close((uv_handle_t *)&s->poll, sock_closed);
}

static void sock_event(uv_poll_t *p, int status, int events)
{
	sock_t *s = p->data;
	probe_engine_t *e = s->e;
	int flags = 0, running;
	if (status < 0)
		flags = CURL_CSELECT_ERR;
	if (events & UV_READABLE)
		flags |= CURL_CSELECT_IN;
	if (events & UV_WRITABLE)
		flags |= CURL_CSELECT_OUT;
	curl_multi_socket_action(e->multi, s->fd, flags, &running);
	check_done(e);
}

/* CURLMOPT_SOCKETFUNCTION: curl says what to wait for on @fd. */
static int curl_sock_cb(CURL *easy, curl_socket_t fd, int what, void *arg,
                        void *sockp)
{
	probe_engine_t *e = arg;
	sock_t *s = sockp;
	if (what == CURL_POLL_REMOVE) {
		if (s) {
			sock_close(s);
			curl_multi_assign(e->multi, fd, NULL);
		}
		return 0;
	}
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return -1;
		if (uv_poll_init_socket(e->loop, &s->poll, fd) < 0) {
			free(s);
			return -1;
		}
		s->fd = fd, s->e = e, s->poll.data = s;
		s->next = e->socks;
		if (e->socks)
			e->socks->prev = s;
		e->socks = s;
		e->refs++;
		curl_multi_assign(e->multi, fd, s);
	}
	int ev = 0;
	if (what == CURL_POLL_IN || what == CURL_POLL_INOUT)
		ev |= UV_READABLE;
	if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT)
		ev |= UV_WRITABLE;
	uv_poll_start(&s->poll, ev, sock_event);
	return 0;
}

static void engine_timeout(uv_timer_t *t)
{
	probe_engine_t *e = t->data;
	int running;
	curl_multi_socket_action(e->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	check_done(e);
}

/* CURLMOPT_TIMERFUNCTION: one timer for all of curl's deadlines.  curl
 * must not be re-entered from here, so even 0 ms goes through the loop. */
static int curl_timer_cb(CURLM *multi, long ms, void *arg)
{
	probe_engine_t *e = arg;
	if (ms < 0)
		uv_timer_stop(&e->timer);
	else
		uv_timer_start(&e->timer, engine_timeout, (uint64_t)ms, 0);
	return 0;
}

static int http_start(probe_run_t *r)
{
	const probe_spec_t *s = &r->spec;
	CURL *c = r->easy = curl_easy_init();
	char *url = NULL;
	int ok = c != NULL;
	long tmo = (long)timeout_ms(s);

	/* With host= on HTTPS, the name must also be the TLS server name
	 * and the name the certificate is checked against: the URL carries
	 * the name and CONNECT_TO sends the connection to the URL's address.
	 * On HTTP (or with a port or IPv6 literal in host=) a Host header is
	 * enough. */
	if (ok && s->host_header[0] && s->kind == PROBE_HTTPS &&
	    !strpbrk(s->host_header, ":[]")) {
		CURLU *u = curl_url();
		char ct[600];
		ok = u &&
		     !curl_url_set(u, CURLUPART_URL, s->url, 0) &&
		     !curl_url_set(u, CURLUPART_HOST, s->host_header, 0) &&
		     !curl_url_get(u, CURLUPART_URL, &url, 0);
		curl_url_cleanup(u);
		int v6 = strchr(s->host, ':') != NULL;
		snprintf(ct, sizeof(ct), "%s:%u:%s%s%s:%u", s->host_header,
		         s->port, v6 ? "[" : "", s->host, v6 ? "]" : "",
		         s->port);
		if (ok)
			ok = (r->connect_to = curl_slist_append(NULL, ct)) !=
			     NULL;
	} else if (ok && s->host_header[0]) {
		char h[sizeof(s->host_header) + 8];
		snprintf(h, sizeof(h), "Host: %s", s->host_header);
		ok = (r->headers = curl_slist_append(NULL, h)) != NULL;
	}
#define SET(opt, val) (ok = ok && curl_easy_setopt(c, opt, val) == CURLE_OK)
	SET(CURLOPT_URL, url ? url : s->url);
	SET(CURLOPT_PROTOCOLS_STR, "http,https");
	SET(CURLOPT_PRIVATE, r);
	SET(CURLOPT_ERRORBUFFER, r->errbuf);
	SET(CURLOPT_NOSIGNAL, 1L);
	SET(CURLOPT_TIMEOUT_MS, tmo);
	SET(CURLOPT_CONNECTTIMEOUT_MS, tmo);
	SET(CURLOPT_USERAGENT, r->e->user_agent);
	SET(CURLOPT_FOLLOWLOCATION, 0L);
	SET(CURLOPT_PROXY, "");           /* never through a proxy */
	SET(CURLOPT_FRESH_CONNECT, 1L);   /* measure real handshakes */
	SET(CURLOPT_FORBID_REUSE, 1L);
	SET(CURLOPT_WRITEFUNCTION, http_write);
	SET(CURLOPT_WRITEDATA, r);
	if (r->headers)
		SET(CURLOPT_HTTPHEADER, r->headers);
	if (r->connect_to)
		SET(CURLOPT_CONNECT_TO, r->connect_to);
	if (s->kind == PROBE_HTTPS) {
		SET(CURLOPT_SSL_VERIFYPEER, s->insecure ? 0L : 1L);
		SET(CURLOPT_SSL_VERIFYHOST, s->insecure ? 0L : 2L);
		SET(CURLOPT_CERTINFO, 1L);
	}
#undef SET
	curl_free(url);   /* curl copied it; the lists live with the run */
	if (ok && curl_multi_add_handle(r->e->multi, c) != CURLM_OK)
		ok = 0;
	if (!ok) {
		curl_easy_cleanup(c);
		curl_slist_free_all(r->headers);
		curl_slist_free_all(r->connect_to);
		return -1;
	}
	return 0;
}

/* Public ------------------------------------------------------------ */

probe_engine_t *probe_engine_new(uv_loop_t *loop, const char *user_agent)
{
	if (probe_global_init() < 0)
		return NULL;
	probe_engine_t *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->loop = loop;
	e->user_agent = strdup(user_agent ? user_agent
	                                  : PACKAGE_NAME "/" PACKAGE_VERSION);
	e->multi = curl_multi_init();
	if (!e->user_agent || !e->multi) {
		if (e->multi)
			curl_multi_cleanup(e->multi);
		free(e->user_agent);
		free(e);
		return NULL;
	}
	curl_multi_setopt(e->multi, CURLMOPT_SOCKETFUNCTION, curl_sock_cb);
	curl_multi_setopt(e->multi, CURLMOPT_SOCKETDATA, e);
	curl_multi_setopt(e->multi, CURLMOPT_TIMERFUNCTION, curl_timer_cb);
	curl_multi_setopt(e->multi, CURLMOPT_TIMERDATA, e);
	uv_timer_init(loop, &e->timer);
	e->timer.data = e;
	e->refs = 1;
	return e;
}

probe_run_t *probe_start(probe_engine_t *e, const probe_spec_t *s,
                         probe_cb cb, void *arg)
{
	if (!e || e->dying || !s || !cb)
		return NULL;
	probe_run_t *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->spec = *s;
	r->cb = cb, r->arg = arg;
	r->e = e;
	r->t0 = uv_hrtime();
	result_init(&r->res, s);
	int rc = s->kind == PROBE_TCP ? tcp_start(r) : http_start(r);
	if (rc < 0) {
		free(r);
		return NULL;
	}
	run_link(e, r);
	return r;
}

void probe_cancel(probe_run_t *r)
{
	if (!r || r->done)
		return;
	if (r->spec.kind == PROBE_TCP) {
		tcp_finish(r, 0);
	} else {
		r->done = 1;
		run_unlink(r);
		http_free(r);
	}
}

/* Second half of probe_engine_free, once no callback is on the stack. */
static void engine_finish_free(probe_engine_t *e)
{
	/* Socket callbacks for the removed handles may still run in here. */
	curl_multi_cleanup(e->multi);
	e->multi = NULL;
	while (e->socks)
		sock_close(e->socks);
	/* The timer holds the first ref: the struct goes with the last
	 * close callback, timer or socket. */
	uv_close((uv_handle_t *)&e->timer, engine_timer_closed);
}

void probe_engine_free(probe_engine_t *e)
{
	if (!e || e->dying)
		return;
	e->dying = 1;
	while (e->runs)
		probe_cancel(e->runs);
	if (!e->dispatching)
		engine_finish_free(e);
}
