/* SPDX-License-Identifier: MIT */
/* TCP probes on libuv: a connect, after a name lookup on libuv's thread
 * pool when the host is not an address (S1-1, S1-3). */
#include "probe/probe_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
void probe__tcp_finish(probe_run_t *r, int report)
{
	if (r->done)
		return;
	r->done = 1;
	probe__run_unlink(r);
	uv_close((uv_handle_t *)&r->timer, tcp_closed);
	if (r->has_tcp)
		uv_close((uv_handle_t *)&r->tcp, tcp_closed);
	/* A queued lookup is cancelled and calls back with UV_EAI_CANCELED;
	 * one already running calls back later.  Either way it holds a ref. */
	if (r->gai.loop && r->gai.data)
		uv_cancel((uv_req_t *)&r->gai);
	if (report) {
		r->res.total_ms = probe__ms_since(r->t0);
		r->res.bytes = probe_wire_bytes(PROBE_TCP, r->res.connected, 0, 0);
		r->cb(&r->res, r->arg);
	}
}

static void tcp_timeout(uv_timer_t *t)
{
	probe_run_t *r = t->data;
	if (!r->sync_error) {
		r->res.timed_out = 1;
		r->res.failure = PROBE_FAIL_TIMEOUT;
		snprintf(r->res.error, sizeof(r->res.error),
		         "timed out after %llu ms",
		         (unsigned long long)probe__timeout_ms(&r->spec));
	}
	probe__tcp_finish(r, 1);
}

static void tcp_connected(uv_connect_t *req, int status)
{
	probe_run_t *r = req->data;
	if (r->done)        /* UV_ECANCELED from closing the handle */
		return;
	r->res.connect_ms = probe__ms_since(r->t_connect);
	if (status == 0) {
		r->res.connected = 1, r->res.status_ok = 1;
	} else if (status == UV_ECONNREFUSED) {
		r->res.failure = PROBE_FAIL_REFUSED;
		snprintf(r->res.error, sizeof(r->res.error),
		         "connection refused");
	} else {
		r->res.failure = PROBE_FAIL_CONNECT;
		snprintf(r->res.error, sizeof(r->res.error), "connect: %s",
		         uv_strerror(status));
	}
	probe__tcp_finish(r, 1);
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
		r->res.failure = rc == UV_ECONNREFUSED ? PROBE_FAIL_REFUSED :
		                 PROBE_FAIL_CONNECT;
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
			r->res.failure = PROBE_FAIL_RESOLVE;
			snprintf(r->res.error, sizeof(r->res.error),
			         "resolve '%.64s': %s", r->spec.host, status < 0
			         ? uv_strerror(status) : "no address");
			probe__tcp_finish(r, 1);
		} else {
			tcp_connect(r, ai->ai_addr);
		}
	}
	uv_freeaddrinfo(ai);
	tcp_unref(r);
}

int probe__tcp_start(probe_run_t *r)
{
	struct sockaddr_storage ss;
	uv_timer_init(r->e->loop, &r->timer);
	r->timer.data = r;
	r->refs = 1;
	uv_timer_start(&r->timer, tcp_timeout, probe__timeout_ms(&r->spec), 0);
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
