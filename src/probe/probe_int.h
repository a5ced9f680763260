/* SPDX-License-Identifier: MIT */
/* Internals shared by the probe engine (probe.c), TCP probes
 * (probe_tcp.c) and HTTP(S) probes (probe_http.c).  Not for use outside
 * those files.
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
#ifndef GSLB_PROBE_INT_H
#define GSLB_PROBE_INT_H

#include <curl/curl.h>
#include <stdint.h>
#include <uv.h>

#include "probe/probe.h"

/** A descriptor curl asked the engine to watch (probe_http.c). */
typedef struct sock sock_t;

/** The engine: one curl multi handle on one libuv loop, and its runs. */
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

/** A watched descriptor: lives until its poll handle's close callback. */
struct sock {
	uv_poll_t poll;
	curl_socket_t fd;
	probe_engine_t *e;
	sock_t *next, *prev;
};

/** One run of a probe, TCP or HTTP(S); owned by its engine. */
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

/* probe.c */

/** Takes @r off its engine's list of live runs. */
void probe__run_unlink(probe_run_t *r);

/** Milliseconds since uv_hrtime() @t0, saturated. */
uint32_t probe__ms_since(uint64_t t0);

/** The timeout of @s in milliseconds, at least 1. */
uint64_t probe__timeout_ms(const probe_spec_t *s);

/** Drops one of the engine's handle references; the last frees it. */
void probe__engine_unref(probe_engine_t *e);

/** Second half of probe_engine_free, once no callback is on the stack. */
void probe__engine_finish_free(probe_engine_t *e);

/* probe_tcp.c */

/** Starts TCP run @r (its timer, then a connect or a name lookup);
 * returns 0.  Failures are reported through the run's callback. */
int probe__tcp_start(probe_run_t *r);

/** Ends TCP run @r: closes what it holds and reports its result unless
 * @report is 0 (cancelled).  The run is freed once every handle is
 * closed. */
void probe__tcp_finish(probe_run_t *r, int report);

/* probe_http.c */

/** Installs curl's socket and timer callbacks on @e's multi handle. */
void probe__http_engine_init(probe_engine_t *e);

/** Frees @e's multi handle and closes every watched descriptor. */
void probe__http_engine_close(probe_engine_t *e);

/** Starts HTTP(S) run @r on the engine's multi handle; 0, or -1 (nothing
 * allocated is left behind; the caller frees @r). */
int probe__http_start(probe_run_t *r);

/** Removes HTTP run @r from the multi handle and frees it. */
void probe__http_free(probe_run_t *r);

#endif
