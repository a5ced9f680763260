/* SPDX-License-Identifier: MIT */
/* HTTP and HTTPS probes through libcurl's multi interface, driven by the
 * engine's libuv loop: status, body match, handshake times, certificate
 * expiry (S1-1, S4-2). */
#include "probe/probe_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

void probe__http_free(probe_run_t *r)
{
	curl_multi_remove_handle(r->e->multi, r->easy);
	curl_easy_cleanup(r->easy);
	curl_slist_free_all(r->headers);
	curl_slist_free_all(r->connect_to);
	free(r);
}

/* Why transfer @r failed with @cc (not CURLE_OK). */
static probe_failure_t http_failure(probe_run_t *r, CURLcode cc)
{
	long os_errno = 0;
	switch (cc) {
	case CURLE_OPERATION_TIMEDOUT:
		return PROBE_FAIL_TIMEOUT;
	case CURLE_COULDNT_RESOLVE_HOST:
		return PROBE_FAIL_RESOLVE;
	case CURLE_COULDNT_CONNECT:
		curl_easy_getinfo(r->easy, CURLINFO_OS_ERRNO, &os_errno);
		return os_errno == ECONNREFUSED ? PROBE_FAIL_REFUSED : PROBE_FAIL_CONNECT;
	case CURLE_SSL_CONNECT_ERROR:
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_CIPHER:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CRL_BADFILE:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
	case CURLE_SSL_INVALIDCERTSTATUS:
		return PROBE_FAIL_TLS;
	default:
		return PROBE_FAIL_OTHER;
	}
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
	res->total_ms = t_total > 0 ? secs_ms(t_total) : probe__ms_since(r->t0);
	res->status_ok = code >= r->spec.expect_lo && code <= r->spec.expect_hi;
	res->body_ok = r->spec.match[0] ? r->matched : 1;
	if (r->spec.kind == PROBE_HTTPS)
		res->cert_days_left = cert_days_left(r->easy);
	/* S1-3: the request, the answer's headers and the body read. */
	long req = 0, hdr = 0;
	curl_easy_getinfo(r->easy, CURLINFO_REQUEST_SIZE, &req);
	curl_easy_getinfo(r->easy, CURLINFO_HEADER_SIZE, &hdr);
	res->bytes = probe_wire_bytes(r->spec.kind, res->connected,
	                              req > 0 ? (uint64_t)req : 0,
	                              (hdr > 0 ? (uint64_t)hdr : 0) + r->body_len);
	if (cc != CURLE_OK) {
		res->timed_out = cc == CURLE_OPERATION_TIMEDOUT;
		snprintf(res->error, sizeof(res->error), "%.*s",
		         (int)sizeof(res->error) - 1,
		         r->errbuf[0] ? r->errbuf : curl_easy_strerror(cc));
		res->status_ok = 0;
		if (r->spec.match[0])
			res->body_ok = 0;
		res->failure = (uint8_t)http_failure(r, cc);
	} else if (!res->status_ok) {
		res->failure = PROBE_FAIL_HTTP_STATUS;
		snprintf(res->error, sizeof(res->error),
		         "status %ld not in %u-%u", code, r->spec.expect_lo,
		         r->spec.expect_hi);
	} else if (!res->body_ok) {
		res->failure = PROBE_FAIL_BODY;
		snprintf(res->error, sizeof(res->error),
		         "body has no '%.80s'%s", r->spec.match,
		         r->body_cut ? " in its first 64 KiB" : "");
	}
}

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
		probe__run_unlink(r);
		/* Removing the handle may call the socket callback; it is
		 * allowed here, outside any curl callback. */
		curl_multi_remove_handle(e->multi, r->easy);
		r->cb(&r->res, r->arg);
		probe__http_free(r);
	}
	e->dispatching--;
	if (e->dying && !e->dispatching)
		probe__engine_finish_free(e);
}

static void sock_closed(uv_handle_t *h)
{
	sock_t *s = h->data;
	probe_engine_t *e = s->e;
	free(s);
	probe__engine_unref(e);
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

int probe__http_start(probe_run_t *r)
{
	const probe_spec_t *s = &r->spec;
	CURL *c = r->easy = curl_easy_init();
	char *url = NULL;
	int ok = c != NULL;
	long tmo = (long)probe__timeout_ms(s);

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


void probe__http_engine_init(probe_engine_t *e)
{
	curl_multi_setopt(e->multi, CURLMOPT_SOCKETFUNCTION, curl_sock_cb);
	curl_multi_setopt(e->multi, CURLMOPT_SOCKETDATA, e);
	curl_multi_setopt(e->multi, CURLMOPT_TIMERFUNCTION, curl_timer_cb);
	curl_multi_setopt(e->multi, CURLMOPT_TIMERDATA, e);
}

void probe__http_engine_close(probe_engine_t *e)
{
	/* Socket callbacks for the removed handles may still run in here. */
	curl_multi_cleanup(e->multi);
	e->multi = NULL;
	while (e->socks)
		sock_close(e->socks);
}
