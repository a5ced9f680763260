/* SPDX-License-Identifier: MIT */
/* The probe engine: libcurl's global state, the list of live runs, and
 * the public start, cancel and free of probe.h; the probes themselves are
 * in probe_tcp.c and probe_http.c.  Invariants: see probe_int.h. */
#include "probe/probe_int.h"
#include "config.h"
#include "common/util.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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

const char *probe_failure_name(probe_failure_t f)
{
	static const char *const names[PROBE_FAIL_COUNT] = {
		[PROBE_OK] = "ok",
		[PROBE_FAIL_REFUSED] = "refused",
		[PROBE_FAIL_CONNECT] = "connect",
		[PROBE_FAIL_TIMEOUT] = "timeout",
		[PROBE_FAIL_RESOLVE] = "resolve",
		[PROBE_FAIL_TLS] = "tls",
		[PROBE_FAIL_HTTP_STATUS] = "http_status",
		[PROBE_FAIL_BODY] = "body",
		[PROBE_FAIL_OTHER] = "other",
	};
	return (unsigned)f < PROBE_FAIL_COUNT ? names[f] : "other";
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

void probe__run_unlink(probe_run_t *r)
{
	if (r->prev)
		r->prev->next = r->next;
	else
		r->e->runs = r->next;
	if (r->next)
		r->next->prev = r->prev;
	r->next = r->prev = NULL;
}

uint32_t probe__ms_since(uint64_t t0)
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

uint64_t probe__timeout_ms(const probe_spec_t *s)
{
	double ms = s->timeout_s * 1000.0;
	return ms < 1 ? 1 : (uint64_t)ms;
}

void probe__engine_unref(probe_engine_t *e)
{
	if (--e->refs == 0) {
		free(e->user_agent);
		free(e);
	}
}

static void engine_timer_closed(uv_handle_t *h)
{
	probe__engine_unref(h->data);
}

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
	probe__http_engine_init(e);
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
	int rc = s->kind == PROBE_TCP ? probe__tcp_start(r) : probe__http_start(r);
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
		probe__tcp_finish(r, 0);
	} else {
		r->done = 1;
		probe__run_unlink(r);
		probe__http_free(r);
	}
}

/* Second half of probe_engine_free, once no callback is on the stack. */
void probe__engine_finish_free(probe_engine_t *e)
{
	probe__http_engine_close(e);
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
		probe__engine_finish_free(e);
}

uint32_t probe_wire_bytes(int kind, int connected, uint64_t sent, uint64_t received)
{
	uint64_t b = sent + received;
	b += connected ? PROBE_TCP_WIRE_BYTES : 60;  /* a SYN */
	if (connected && kind == PROBE_HTTPS)
		b += PROBE_TLS_WIRE_BYTES;
	return b > UINT32_MAX ? UINT32_MAX : (uint32_t)b;
}

double probe_bytes_rate(unsigned n, const uint32_t *bytes, const double *gap_s)
{
	double rate = 0;
	for (unsigned i = 0; i < n; i++)
		if (gap_s[i] > 0)
			rate += bytes[i] / gap_s[i];
	return rate;
}
