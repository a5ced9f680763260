/* SPDX-License-Identifier: MIT */
/* Probe strings, and real TCP/HTTP/HTTPS probes on a libuv loop against
 * servers this test starts on 127.0.0.1 (S1-1, S1-3, S4-2). */
#include "probe/probe.h"
#include "unit.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Parsing ------------------------------------------------------------ */

static probe_spec_t parse_ok(const char *text)
{
	probe_spec_t s;
	char err[256] = "";
	int rc = probe_parse(text, 10, 2, &s, err, sizeof(err));
	ck_assert_msg(rc == 0, "'%s' refused: %s", text, err);
	return s;
}

START_TEST(parse_defaults_and_fields)
{
	probe_spec_t s = parse_ok("http://10.0.0.1/health");
	ck_assert_int_eq(s.kind, PROBE_HTTP);
	ck_assert_str_eq(s.host, "10.0.0.1");
	ck_assert_int_eq(s.port, 80);
	ck_assert(s.interval_s == 10 && s.timeout_s == 2);
	ck_assert_int_eq(s.expect_lo, 200);
	ck_assert_int_eq(s.expect_hi, 399);
	ck_assert_str_eq(s.match, "");
	ck_assert_int_eq(s.has_interval, 0);

	s = parse_ok("https://[2001:db8::1]:8443/api?x=1 interval=30 "
	             "timeout=1.5 expect=200-204 match=\"ok\" host=api.example "
	             "insecure");
	ck_assert_int_eq(s.kind, PROBE_HTTPS);
	ck_assert_str_eq(s.host, "2001:db8::1");
	ck_assert_int_eq(s.port, 8443);
	ck_assert(s.interval_s == 30 && s.timeout_s == 1.5);
	ck_assert_int_eq(s.expect_lo, 200);
	ck_assert_int_eq(s.expect_hi, 204);
	ck_assert_str_eq(s.match, "\"ok\"");
	ck_assert_str_eq(s.host_header, "api.example");
	ck_assert_int_eq(s.insecure, 1);
	ck_assert_str_eq(s.url, "https://[2001:db8::1]:8443/api?x=1");

	s = parse_ok("tcp://192.0.2.7:443 timeout=0.5");
	ck_assert_int_eq(s.kind, PROBE_TCP);
	ck_assert_int_eq(s.port, 443);
	ck_assert(s.timeout_s == 0.5 && s.interval_s == 10);

	s = parse_ok("https://edge.example.net expect=503 match=a=b");
	ck_assert_int_eq(s.port, 443);
	ck_assert_str_eq(s.host, "edge.example.net");
	ck_assert_int_eq(s.expect_lo, 503);
	ck_assert_int_eq(s.expect_hi, 503);
	ck_assert_str_eq(s.match, "a=b");
}
END_TEST

START_TEST(parse_errors_name_the_bad_part)
{
	static const struct { const char *text, *msg; } bad[] = {
		{ "", "empty" },
		{ "ftp://x", "probe 'ftp://x': URL must start with tcp://, "
		             "http:// or https://" },
		{ "tcp://10.0.0.1", "needs a port" },
		{ "tcp://10.0.0.1:0", "bad port '0'" },
		{ "http://10.0.0.1:99999/", "bad port '99999'" },
		{ "http://h:8x/", "bad port '8x'" },
		{ "tcp://10.0.0.1:80/x", "has no path" },
		{ "http:///x", "no host" },
		{ "http://2001:db8::1/", "must be in brackets" },
		{ "http://[2001:db8::1/", "missing ']'" },
		{ "http://[zz::1]/", "not an IPv6 address" },
		{ "http://u:p@h/", "credentials" },
		{ "http://h!/", "bad character '!'" },
		{ "http://h/ timeout=0", "timeout=0: must be between 0.1 and "
		                         "60 s" },
		{ "http://h/ timeout=abc", "timeout=abc: must be between" },
		{ "http://h/ interval=0.01", "interval=0.01: must be between" },
		{ "http://h/ interval=5 timeout=5", "timeout must be below the "
		                                    "interval" },
		{ "http://h/ interval=1", "timeout must be below the "
		                          "interval" },
		{ "http://h/ expect=600", "expect=600: must be a status" },
		{ "http://h/ expect=300-200", "expect=300-200: must be" },
		{ "http://h/ expect=2xx", "expect=2xx" },
		{ "http://h/ match=", "match=: text must have" },
		{ "http://h/ host=a\"b", "host=a\"b: bad character" },
		{ "http://h/ insecure", "insecure: only for https://" },
		{ "tcp://h:1 match=x", "match=x: only for http:// and "
		                       "https://" },
		{ "tcp://h:1 expect=200", "expect=200: only for http" },
		{ "http://h/ retries=3", "unknown option 'retries=3'" },
		{ "http://h/ insecure=1", "unknown option 'insecure=1'" },
		{ "https://h/ timeout=1 timeout=1", "'timeout' given twice" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		probe_spec_t s;
		char err[256] = "";
		int rc = probe_parse(bad[i].text, 10, 2, &s, err, sizeof(err));
		ck_assert_msg(rc == -1, "'%s' accepted", bad[i].text);
		ck_assert_msg(strstr(err, bad[i].msg), "'%s': got \"%s\", "
		              "expected \"%s\"", bad[i].text, err, bad[i].msg);
	}
	/* Defaults that break the timeout < interval rule are reported. */
	probe_spec_t s;
	char err[256] = "";
	ck_assert_int_eq(probe_parse("http://h/", 1, 2, &s, err, sizeof(err)),
	                 -1);
	ck_assert_ptr_nonnull(strstr(err, "below the interval"));
}
END_TEST

START_TEST(format_round_trips)
{
	static const char *texts[] = {
		"http://10.0.0.1/health",
		"tcp://192.0.2.7:443",
		"tcp://[::1]:8080 interval=1 timeout=0.3",
		"https://[2001:db8::1]:8443/api?x=1 interval=30 timeout=1.5 "
		"expect=200-204 match=ok host=api.example insecure",
		"http://h/ expect=503 match=a=b timeout=0.1 interval=0.2",
		"https://edge.example.net/ interval=15 "
		"timeout=1.23456789012345",
		"HTTP://Upper.Example:81/Path",
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		probe_spec_t a = parse_ok(texts[i]), b;
		char t1[1200], t2[1200], err[256] = "";
		probe_format(&a, t1, sizeof(t1));
		ck_assert_msg(probe_parse(t1, 10, 2, &b, err, sizeof(err)) == 0,
		              "'%s' -> '%s': %s", texts[i], t1, err);
		ck_assert_msg(!memcmp(&a, &b, sizeof(a)),
		              "'%s' -> '%s' differs", texts[i], t1);
		probe_format(&b, t2, sizeof(t2));
		ck_assert_str_eq(t1, t2);
	}
	/* Canonical order and omitted defaults. */
	probe_spec_t s = parse_ok("https://h/ insecure host=x match=y "
	                          "expect=200-399 timeout=1");
	char t[1200];
	probe_format(&s, t, sizeof(t));
	ck_assert_str_eq(t, "https://h/ timeout=1 match=y host=x insecure");
	/* A short buffer truncates, NUL-terminated. */
	probe_format(&s, t, 8);
	ck_assert_str_eq(t, "https:/");
}
END_TEST

/* A tiny HTTP server on a thread ---------------------------------- */

typedef struct {
	int lfd, stop[2];
	uint16_t port;
	pthread_t th;
	int hang[16], nhang;
} srv_t;

static srv_t srv;

static int listen_tcp(uint16_t *port, int backlog)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	ck_assert_int_ge(fd, 0);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(fd, backlog), 0);
	getsockname(fd, (struct sockaddr *)&a, &al);
	*port = ntohs(a.sin_port);
	return fd;
}

/* A port nothing listens on: bound, then closed (connects are refused). */
static uint16_t closed_port(void)
{
	uint16_t p;
	close(listen_tcp(&p, 1));
	return p;
}

static void send_all(int fd, const char *b, size_t n)
{
	while (n) {
		ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
		if (k <= 0)
			return;
		b += k, n -= (size_t)k;
	}
}

static void reply(int fd, const char *status, const char *body)
{
	char h[256];
	snprintf(h, sizeof(h), "HTTP/1.1 %s\r\nContent-Length: %zu\r\n"
	         "Connection: close\r\n\r\n", status, strlen(body));
	send_all(fd, h, strlen(h));
	send_all(fd, body, strlen(body));
}

/* Waits up to @ms unless the test is stopping; returns 1 if stopping. */
static int srv_wait(int ms)
{
	struct pollfd p = { .fd = srv.stop[0], .events = POLLIN };
	return poll(&p, 1, ms) > 0;
}

static void serve(int fd)
{
	char req[4096], path[256] = "", host[256] = "";
	size_t n = 0;
	while (n < sizeof(req) - 1) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (poll(&p, 1, 1000) <= 0)
			break;
		ssize_t k = recv(fd, req + n, sizeof(req) - 1 - n, 0);
		if (k <= 0)
			break;
		n += (size_t)k, req[n] = 0;
		if (strstr(req, "\r\n\r\n"))
			break;
	}
	req[n] = 0;
	sscanf(req, "GET %255s", path);
	const char *h = strstr(req, "\r\nHost: ");
	if (h)
		sscanf(h + 8, "%255[^\r]", host);
	char body[512];
	if (!strcmp(path, "/ok")) {
		snprintf(body, sizeof(body), "service healthy host=%s\n", host);
		reply(fd, "200 OK", body);
	} else if (!strcmp(path, "/fail")) {
		reply(fd, "503 Service Unavailable", "down for maintenance\n");
	} else if (!strcmp(path, "/redirect")) {
		const char *m = "HTTP/1.1 302 Found\r\nLocation: /ok\r\n"
		                "Content-Length: 0\r\nConnection: close\r\n"
		                "\r\n";
		send_all(fd, m, strlen(m));
	} else if (!strcmp(path, "/slow")) {
		if (!srv_wait(1500))
			reply(fd, "200 OK", "late\n");
	} else if (!strcmp(path, "/split")) {
		/* "abcdef" in two segments 50 ms apart: a match of "cde"
		 * spans the two write callbacks. */
		int one = 1;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		const char *hd = "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n"
		                 "Connection: close\r\n\r\nabc";
		send_all(fd, hd, strlen(hd));
		srv_wait(50);
		send_all(fd, "def", 3);
	} else if (!strcmp(path, "/big")) {
		/* 100 KiB of filler, then a marker past the 64 KiB limit. */
		static char big[100 * 1024 + 16];
		memset(big, 'x', 100 * 1024);
		memcpy(big, "EARLY", 5);
		strcpy(big + 100 * 1024, "LATE");
		reply(fd, "200 OK", big);
	} else if (!strcmp(path, "/hang") && srv.nhang < 16) {
		srv.hang[srv.nhang++] = fd;   /* never answered */
		return;
	} else {
		reply(fd, "404 Not Found", "no\n");
	}
	close(fd);
}

static void *srv_main(void *arg)
{
	for (;;) {
		struct pollfd p[2] = {
			{ .fd = srv.lfd, .events = POLLIN },
			{ .fd = srv.stop[0], .events = POLLIN },
		};
		if (poll(p, 2, -1) < 0 || p[1].revents)
			break;
		int fd = accept4(srv.lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			serve(fd);
	}
	return NULL;
}

static void srv_start(void)
{
	memset(&srv, 0, sizeof(srv));
	srv.lfd = listen_tcp(&srv.port, 64);
	ck_assert_int_eq(pipe(srv.stop), 0);
	ck_assert_int_eq(pthread_create(&srv.th, NULL, srv_main, NULL), 0);
}

static void srv_stop(void)
{
	ck_assert_int_eq(write(srv.stop[1], "x", 1), 1);
	pthread_join(srv.th, NULL);
	for (int i = 0; i < srv.nhang; i++)
		close(srv.hang[i]);
	close(srv.lfd), close(srv.stop[0]), close(srv.stop[1]);
}

/* Running probes ------------------------------------------------------ */

typedef struct {
	int calls;
	probe_result_t r;
	probe_engine_t *free_engine;  /* freed from the callback if set */
} got_t;

static void on_result(const probe_result_t *r, void *arg)
{
	got_t *g = arg;
	g->calls++;
	g->r = *r;
	if (g->free_engine)
		probe_engine_free(g->free_engine);
}

/* Frees the engine and checks that the loop closes with nothing left. */
static void finish_loop(uv_loop_t *loop, probe_engine_t *e)
{
	probe_engine_free(e);
	uv_run(loop, UV_RUN_DEFAULT);
	ck_assert_int_eq(uv_loop_close(loop), 0);
}

/* Runs one probe given as text (defaults: interval 10 s, timeout 2 s);
 * the %u in @fmt is replaced by @port. */
static probe_result_t probe(const char *fmt, unsigned port)
{
	char text[512], err[256] = "";
	probe_spec_t s;
	uv_loop_t loop;
	got_t g = { 0 };
	snprintf(text, sizeof(text), fmt, port);
	ck_assert_msg(probe_parse(text, 10, 2, &s, err, sizeof(err)) == 0,
	              "%s: %s", text, err);
	ck_assert_int_eq(uv_loop_init(&loop), 0);
	probe_engine_t *e = probe_engine_new(&loop, "gslbd-test/1");
	ck_assert_ptr_nonnull(e);
	ck_assert_ptr_nonnull(probe_start(e, &s, on_result, &g));
	ck_assert_int_eq(g.calls, 0);          /* never from probe_start */
	while (!g.calls && uv_run(&loop, UV_RUN_ONCE))
		;
	ck_assert_int_eq(g.calls, 1);
	finish_loop(&loop, e);
	ck_assert_int_eq(g.calls, 1);
	return g.r;
}

static void setup(void)
{
	ck_assert_int_eq(probe_global_init(), 0);
	srv_start();
}

static void teardown(void)
{
	srv_stop();
}

START_TEST(http_ok_with_match_and_host_header)
{
	probe_result_t r = probe("http://127.0.0.1:%u/ok match=host=probe."
	                         "example host=probe.example", srv.port);
	ck_assert_str_eq(r.error, "");
	ck_assert_int_eq(r.connected, 1);
	ck_assert_int_eq(r.timed_out, 0);
	ck_assert_int_eq(r.status, 200);
	ck_assert_int_eq(r.status_ok, 1);
	ck_assert_int_eq(r.body_ok, 1);
	ck_assert_int_eq(r.cert_days_left, -1);
	ck_assert_int_eq(r.failure, PROBE_OK);
	ck_assert_uint_lt(r.total_ms, 1000);
	ck_assert_uint_le(r.connect_ms, r.total_ms);
}
END_TEST

START_TEST(http_match_missing_and_split)
{
	probe_result_t r = probe("http://127.0.0.1:%u/ok match=sick", srv.port);
	ck_assert_int_eq(r.status_ok, 1);
	ck_assert_int_eq(r.body_ok, 0);
	ck_assert_ptr_nonnull(strstr(r.error, "body has no 'sick'"));
	ck_assert_str_eq(probe_failure_name(r.failure), "body");
	r = probe("http://127.0.0.1:%u/split match=cde", srv.port);
	ck_assert_str_eq(r.error, "");
	ck_assert_int_eq(r.body_ok, 1);
}
END_TEST

START_TEST(http_503_and_expect)
{
	probe_result_t r = probe("http://127.0.0.1:%u/fail", srv.port);
	ck_assert_int_eq(r.connected, 1);
	ck_assert_int_eq(r.status, 503);
	ck_assert_int_eq(r.status_ok, 0);
	ck_assert_int_eq(r.body_ok, 1);
	ck_assert_str_eq(r.error, "status 503 not in 200-399");
	ck_assert_str_eq(probe_failure_name(r.failure), "http_status");
	r = probe("http://127.0.0.1:%u/fail expect=500-599 match=maintenance",
	          srv.port);
	ck_assert_int_eq(r.status_ok, 1);
	ck_assert_int_eq(r.body_ok, 1);
	ck_assert_str_eq(r.error, "");
}
END_TEST

START_TEST(http_redirect_not_followed)
{
	probe_result_t r = probe("http://127.0.0.1:%u/redirect", srv.port);
	ck_assert_int_eq(r.status, 302);
	ck_assert_int_eq(r.status_ok, 1);
	r = probe("http://127.0.0.1:%u/redirect expect=200", srv.port);
	ck_assert_int_eq(r.status, 302);
	ck_assert_int_eq(r.status_ok, 0);
}
END_TEST

START_TEST(http_body_read_up_to_64k)
{
	probe_result_t r = probe("http://127.0.0.1:%u/big match=EARLY",
	                         srv.port);
	ck_assert_str_eq(r.error, "");
	ck_assert_int_eq(r.status_ok, 1);
	ck_assert_int_eq(r.body_ok, 1);
	r = probe("http://127.0.0.1:%u/big match=LATE", srv.port);
	ck_assert_int_eq(r.status_ok, 1);
	ck_assert_int_eq(r.body_ok, 0);
	ck_assert_ptr_nonnull(strstr(r.error, "first 64 KiB"));
}
END_TEST

START_TEST(http_slow_and_hang_time_out)
{
	static const char *paths[] = { "slow", "hang" };
	for (int i = 0; i < 2; i++) {
		char fmt[128];
		snprintf(fmt, sizeof(fmt),
		         "http://127.0.0.1:%%u/%s timeout=0.3", paths[i]);
		probe_result_t r = probe(fmt, srv.port);
		ck_assert_int_eq(r.timed_out, 1);
		ck_assert_int_eq(r.connected, 1);
		ck_assert_int_eq(r.status, 0);
		ck_assert_int_eq(r.status_ok, 0);
		ck_assert_uint_ge(r.total_ms, 250);
		ck_assert_uint_lt(r.total_ms, 1000);
		ck_assert_str_ne(r.error, "");
		ck_assert_str_eq(probe_failure_name(r.failure), "timeout");
	}
}
END_TEST

START_TEST(http_refused)
{
	probe_result_t r = probe("http://127.0.0.1:%u/ok", closed_port());
	ck_assert_int_eq(r.connected, 0);
	ck_assert_int_eq(r.timed_out, 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(r.status_ok, 0);
	ck_assert_str_ne(r.error, "");
	ck_assert_str_eq(probe_failure_name(r.failure), "refused");
}
END_TEST

START_TEST(tcp_connect_ok_and_refused)
{
	probe_result_t r = probe("tcp://127.0.0.1:%u", srv.port);
	ck_assert_str_eq(r.error, "");
	ck_assert_int_eq(r.connected, 1);
	ck_assert_int_eq(r.status_ok, 1);
	ck_assert_int_eq(r.body_ok, 1);
	ck_assert_int_eq(r.status, 0);
	ck_assert_uint_lt(r.connect_ms, 1000);
	r = probe("tcp://127.0.0.1:%u", closed_port());
	ck_assert_int_eq(r.connected, 0);
	ck_assert_int_eq(r.status_ok, 0);
	ck_assert_int_eq(r.timed_out, 0);
	ck_assert_str_eq(r.error, "connection refused");
	ck_assert_str_eq(probe_failure_name(r.failure), "refused");
}
END_TEST

START_TEST(tcp_by_name)
{
	/* "localhost" goes through uv_getaddrinfo (/etc/hosts, no DNS
	 * traffic); it may come back as ::1, where nothing listens. */
	probe_result_t r = probe("tcp://localhost:%u", srv.port);
	ck_assert_msg(r.connected ? !r.error[0]
	                          : !strcmp(r.error, "connection refused"),
	              "unexpected: %s", r.error);
}
END_TEST

START_TEST(tcp_timeout)
{
	/* With backlog 0 and its queue filled, Linux drops further SYNs,
	 * so a connect on loopback hangs until our timeout. */
	uint16_t port;
	int lfd = listen_tcp(&port, 0), fill[3];
	for (int i = 0; i < 3; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET,
		                         .sin_port = htons(port) };
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		fill[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
		connect(fill[i], (struct sockaddr *)&a, sizeof(a));
	}
	usleep(50 * 1000);
	probe_result_t r = probe("tcp://127.0.0.1:%u timeout=0.3", port);
	ck_assert_int_eq(r.timed_out, 1);
	ck_assert_int_eq(r.connected, 0);
	ck_assert_ptr_nonnull(strstr(r.error, "timed out after 300 ms"));
	ck_assert_str_eq(probe_failure_name(r.failure), "timeout");
	ck_assert_uint_ge(r.total_ms, 250);
	ck_assert_uint_lt(r.total_ms, 1000);
	for (int i = 0; i < 3; i++)
		close(fill[i]);
	close(lfd);
}
END_TEST

/* Many probes at once on one engine: curl multiplexes its sockets. */
START_TEST(many_concurrent)
{
	enum { N = 24 };
	uv_loop_t loop;
	got_t g[N];
	memset(g, 0, sizeof(g));
	ck_assert_int_eq(uv_loop_init(&loop), 0);
	probe_engine_t *e = probe_engine_new(&loop, NULL);
	for (int i = 0; i < N; i++) {
		char text[128];
		probe_spec_t s;
		snprintf(text, sizeof(text), i % 3 ? "http://127.0.0.1:%u/ok "
		         "match=healthy" : "tcp://127.0.0.1:%u", srv.port);
		ck_assert_int_eq(probe_parse(text, 10, 2, &s, NULL, 0), 0);
		ck_assert_ptr_nonnull(probe_start(e, &s, on_result, &g[i]));
	}
	int done = 0;
	while (done < N && uv_run(&loop, UV_RUN_ONCE))
		for (int i = done = 0; i < N; i++)
			done += g[i].calls;
	for (int i = 0; i < N; i++) {
		ck_assert_int_eq(g[i].calls, 1);
		ck_assert_msg(!g[i].r.error[0], "%d: %s", i, g[i].r.error);
		ck_assert_int_eq(g[i].r.body_ok, 1);
	}
	finish_loop(&loop, e);
}
END_TEST

static void fire(uv_timer_t *t)
{
	probe_cancel(t->data);
}

/* Cancelled runs never call back; freeing the engine with runs in flight
 * (TCP lookup and connect, HTTP waiting) leaves nothing behind. */
START_TEST(cancel_and_free_with_runs_in_flight)
{
	uv_loop_t loop;
	got_t g[6];
	probe_spec_t s[6];
	probe_run_t *r[6];
	uv_timer_t t;
	static const char *texts[6] = {
		"http://127.0.0.1:%u/hang", "http://127.0.0.1:%u/slow",
		"tcp://127.0.0.1:%u", "tcp://localhost:%u",
		"http://127.0.0.1:%u/hang", "tcp://localhost:%u",
	};
	memset(g, 0, sizeof(g));
	ck_assert_int_eq(uv_loop_init(&loop), 0);
	probe_engine_t *e = probe_engine_new(&loop, NULL);
	for (int i = 0; i < 6; i++) {
		char text[128];
		snprintf(text, sizeof(text), texts[i], srv.port);
		ck_assert_int_eq(probe_parse(text, 10, 2, &s[i], NULL, 0), 0);
		r[i] = probe_start(e, &s[i], on_result, &g[i]);
		ck_assert_ptr_nonnull(r[i]);
	}
	/* Cancel two at once (TCP connect in flight, lookup in flight), one
	 * HTTP run from a timer once it is waiting for its answer. */
	probe_cancel(r[2]);
	probe_cancel(r[3]);
	uv_timer_init(&loop, &t);
	t.data = r[0];
	uv_timer_start(&t, fire, 100, 0);
	for (int i = 0; i < 30; i++)
		uv_run(&loop, UV_RUN_NOWAIT), usleep(10 * 1000);
	/* r[5] (a lookup of localhost) may have completed by now. */
	for (int i = 0; i < 5; i++)
		ck_assert_msg(g[i].calls == 0, "run %d called back: %s", i,
		              g[i].r.error);
	uv_close((uv_handle_t *)&t, NULL);
	finish_loop(&loop, e);
	for (int i = 0; i < 5; i++)
		ck_assert_int_eq(g[i].calls, 0);
	ck_assert_int_le(g[5].calls, 1);
}
END_TEST

START_TEST(free_engine_from_callback)
{
	uv_loop_t loop;
	got_t a = { 0 }, b = { 0 };
	probe_spec_t s;
	char text[128];
	ck_assert_int_eq(uv_loop_init(&loop), 0);
	probe_engine_t *e = probe_engine_new(&loop, NULL);
	a.free_engine = e;
	snprintf(text, sizeof(text), "http://127.0.0.1:%u/ok", srv.port);
	ck_assert_int_eq(probe_parse(text, 10, 2, &s, NULL, 0), 0);
	ck_assert_ptr_nonnull(probe_start(e, &s, on_result, &a));
	snprintf(text, sizeof(text), "http://127.0.0.1:%u/hang", srv.port);
	ck_assert_int_eq(probe_parse(text, 10, 2, &s, NULL, 0), 0);
	ck_assert_ptr_nonnull(probe_start(e, &s, on_result, &b));
	uv_run(&loop, UV_RUN_DEFAULT);
	ck_assert_int_eq(a.calls, 1);
	ck_assert_int_eq(b.calls, 0);
	ck_assert_int_eq(uv_loop_close(&loop), 0);
}
END_TEST

/* HTTPS against openssl s_server ------------------------------------ */

static char tls_dir[64];
static pid_t tls_pid;
static uint16_t tls_port;
static int tls_skip;

static int run_quiet(char *const argv[])
{
	pid_t p = fork();
	if (p == 0) {
		int fd = open("/dev/null", O_RDWR);
		dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	int st = 0;
	if (p < 0 || waitpid(p, &st, 0) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void tls_setup(void)
{
	char key[128], crt[128], acc[32];
	ck_assert_int_eq(probe_global_init(), 0);
	tls_skip = 0, tls_pid = 0;
	snprintf(tls_dir, sizeof(tls_dir), "/tmp/gslbd-probe-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tls_dir));
	snprintf(key, sizeof(key), "%s/key.pem", tls_dir);
	snprintf(crt, sizeof(crt), "%s/cert.pem", tls_dir);
	char *req[] = { "openssl", "req", "-x509", "-newkey", "rsa:2048",
	                "-nodes", "-days", "30", "-subj", "/CN=localhost",
	                "-keyout", key, "-out", crt, NULL };
	if (run_quiet(req) != 0) {
		fprintf(stderr, "SKIP https tests: openssl cannot make a "
		        "certificate (is openssl installed?)\n");
		tls_skip = 1;
		return;
	}
	tls_port = closed_port();
	snprintf(acc, sizeof(acc), "127.0.0.1:%u", tls_port);
	char *srvv[] = { "openssl", "s_server", "-quiet", "-www", "-accept",
	                 acc, "-cert", crt, "-key", key, NULL };
	tls_pid = fork();
	ck_assert_int_ge(tls_pid, 0);
	if (tls_pid == 0) {
		int fd = open("/dev/null", O_RDWR);
		dup2(fd, 0), dup2(fd, 1), dup2(fd, 2);
		execvp(srvv[0], srvv);
		_exit(127);
	}
	/* Wait (up to 3 s) until it accepts connections. */
	for (int i = 0; i < 300; i++) {
		struct sockaddr_in a = { .sin_family = AF_INET,
		                         .sin_port = htons(tls_port) };
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		int ok = connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0;
		close(fd);
		if (ok)
			return;
		if (waitpid(tls_pid, NULL, WNOHANG) == tls_pid) {
			tls_pid = 0;
			break;
		}
		usleep(10 * 1000);
	}
	ck_abort_msg("openssl s_server did not start on %s", acc);
}

static void tls_teardown(void)
{
	char cmd[128];
	if (tls_pid > 0) {
		kill(tls_pid, SIGTERM);
		waitpid(tls_pid, NULL, 0);
	}
	if (tls_dir[0]) {
		snprintf(cmd, sizeof(cmd), "%s/key.pem", tls_dir);
		unlink(cmd);
		snprintf(cmd, sizeof(cmd), "%s/cert.pem", tls_dir);
		unlink(cmd);
		rmdir(tls_dir);
	}
}

START_TEST(https_insecure_and_verifying)
{
	if (tls_skip)
		return;
	probe_result_t r = probe("https://127.0.0.1:%u/ insecure", tls_port);
	ck_assert_msg(!r.error[0], "%s", r.error);
	ck_assert_int_eq(r.connected, 1);
	ck_assert_int_eq(r.status, 200);
	ck_assert_int_eq(r.status_ok, 1);
	ck_assert_int_ge(r.cert_days_left, 29);
	ck_assert_int_le(r.cert_days_left, 30);
	ck_assert_uint_le(r.connect_ms, r.total_ms);

	/* host= on HTTPS: SNI and Host are the name, the address the URL's. */
	r = probe("https://127.0.0.1:%u/ host=localhost insecure match=TLS",
	          tls_port);
	ck_assert_msg(!r.error[0], "%s", r.error);
	ck_assert_int_eq(r.status, 200);
	ck_assert_int_eq(r.body_ok, 1);

	/* Verified: the self-signed certificate is refused, a TLS connect
	 * failure. */
	r = probe("https://127.0.0.1:%u/", tls_port);
	ck_assert_int_eq(r.connected, 0);
	ck_assert_int_eq(r.status, 0);
	ck_assert_int_eq(r.status_ok, 0);
	ck_assert_int_eq(r.timed_out, 0);
	ck_assert_msg(strstr(r.error, "certificate"), "error: %s", r.error);
	ck_assert_str_eq(probe_failure_name(r.failure), "tls");
}
END_TEST

/* S1-3: the bytes a probe costs and a node's probe traffic.  An HTTP
 * probe of 80 bytes out and 200 in costs 680 with its connection; the
 * same over TLS 4680; a TCP probe 400, or a SYN when refused.  Three
 * probes of 1000, 1500 and 3000 bytes every 10, 15 and 30 s cost 300
 * bytes/s (each 100); a probe without a result yet counts nothing. */
START_TEST(s1_3_probe_bytes)
{
	ck_assert_uint_eq(probe_wire_bytes(PROBE_HTTP, 1, 80, 200), 680);
	ck_assert_uint_eq(probe_wire_bytes(PROBE_HTTPS, 1, 80, 200), 4680);
	ck_assert_uint_eq(probe_wire_bytes(PROBE_TCP, 1, 0, 0), 400);
	ck_assert_uint_eq(probe_wire_bytes(PROBE_TCP, 0, 0, 0), 60);
	ck_assert_uint_eq(probe_wire_bytes(PROBE_HTTPS, 0, 0, 0), 60);
	uint32_t bytes[4] = { 1000, 1500, 3000, 9999 };
	double gap[4] = { 10, 15, 30, 0 };
	ck_assert_double_eq_tol(probe_bytes_rate(4, bytes, gap), 300, 1e-9);
	/* A probe sped up to 2 s for a suspect costs five times more. */
	gap[0] = 2;
	ck_assert_double_eq_tol(probe_bytes_rate(4, bytes, gap), 700, 1e-9);
	/* The default budget: 0.5 % of 10 Mbit/s. */
	ck_assert_double_eq(PROBE_BUDGET_DEFAULT, 10e6 / 8 * 0.005);
}
END_TEST

static Suite *probe_suite(void)
{
	Suite *s = suite_create("probe");
	TCase *t = tcase_create("parse");
	tcase_add_test(t, parse_defaults_and_fields);
	tcase_add_test(t, parse_errors_name_the_bad_part);
	tcase_add_test(t, format_round_trips);
	suite_add_tcase(s, t);

	t = tcase_create("run");
	tcase_add_checked_fixture(t, setup, teardown);
	tcase_set_timeout(t, 10);
	tcase_add_test(t, http_ok_with_match_and_host_header);
	tcase_add_test(t, http_match_missing_and_split);
	tcase_add_test(t, http_503_and_expect);
	tcase_add_test(t, http_redirect_not_followed);
	tcase_add_test(t, http_body_read_up_to_64k);
	tcase_add_test(t, http_slow_and_hang_time_out);
	tcase_add_test(t, http_refused);
	tcase_add_test(t, tcp_connect_ok_and_refused);
	tcase_add_test(t, tcp_by_name);
	tcase_add_test(t, tcp_timeout);
	tcase_add_test(t, many_concurrent);
	tcase_add_test(t, cancel_and_free_with_runs_in_flight);
	tcase_add_test(t, free_engine_from_callback);
	suite_add_tcase(s, t);

	t = tcase_create("https");
	tcase_add_checked_fixture(t, tls_setup, tls_teardown);
	tcase_set_timeout(t, 15);
	tcase_add_test(t, https_insecure_and_verifying);
	tcase_add_test(t, s1_3_probe_bytes);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(probe_suite)
