/* SPDX-License-Identifier: MIT */
/* Active probes run on the health thread's libuv loop: TCP connect, and
 * HTTP/HTTPS through libcurl's multi interface driven by the same loop
 * (S1-1, S1-3, S4-2).  Every probe has its own timeout; results come back
 * through a callback on the loop's thread.  Nothing here blocks.
 *
 * Thread safety: an engine and its runs belong to the thread that runs
 * the loop; only probe_parse and probe_format may be called anywhere.
 *
 * Caveats:
 * - Call probe_global_init() once at start, before any thread starts:
 *   it runs curl_global_init(), which initialises OpenSSL and is not
 *   guaranteed to be thread-safe on every libcurl build.  probe_engine_new
 *   calls it too, as a fallback for tests and tools without threads.
 * - TCP probes resolve a host name with uv_getaddrinfo (libuv's thread
 *   pool) and connect to the first address only; HTTP(S) probes resolve
 *   through libcurl.  The timeout covers resolution too.
 * - HTTP(S) probes open a fresh connection each time (no reuse: the
 *   handshakes are part of what is measured, S4-2), follow no redirects,
 *   ignore proxy variables, and read at most 64 KiB of the body.
 * - probe_engine_free may be called from a probe callback; the callbacks
 *   of the other runs are then not called. */
#ifndef GSLB_PROBE_H
#define GSLB_PROBE_H

#include <stdint.h>
#include <uv.h>

typedef enum { PROBE_TCP, PROBE_HTTP, PROBE_HTTPS } probe_kind_t;

/** A probe as configured on a node:
 * "URL [interval=S] [timeout=S] [expect=200-399] [match=TEXT] [host=NAME]
 *  [insecure]", URL being tcp://H:P, http://... or https://... */
typedef struct probe_spec {
	probe_kind_t kind;
	char url[512];               /* as given */
	char host[256];              /* address or name to connect to */
	uint16_t port;
	double interval_s;           /* default from the health section */
	double timeout_s;
	uint16_t expect_lo, expect_hi; /* accepted HTTP status range */
	char match[256];             /* body substring, "" = none */
	char host_header[256];       /* "" = from the URL */
	uint8_t insecure;            /* HTTPS: skip certificate checks */
	uint8_t has_interval;        /* interval= was given (else a default) */
	uint8_t has_timeout;         /* timeout= was given (else a default) */
} probe_spec_t;

/* Limits of probe_parse, in seconds. */
#define PROBE_TIMEOUT_MIN  0.1
#define PROBE_TIMEOUT_MAX  60.0
#define PROBE_INTERVAL_MIN 0.2
#define PROBE_INTERVAL_MAX 3600.0
/* At most this much of an HTTP body is read (then the transfer stops). */
#define PROBE_BODY_MAX     (64 * 1024)

/** Why a probe failed (probe_failure_name() gives the names the
 * statistics use). */
typedef enum {
	PROBE_OK = 0,
	PROBE_FAIL_REFUSED,          /* the connection was refused */
	PROBE_FAIL_CONNECT,          /* another connect error (unreachable) */
	PROBE_FAIL_TIMEOUT,          /* no answer within the timeout */
	PROBE_FAIL_RESOLVE,          /* the host name did not resolve */
	PROBE_FAIL_TLS,              /* handshake or certificate refused */
	PROBE_FAIL_HTTP_STATUS,      /* a status outside expect= */
	PROBE_FAIL_BODY,             /* match= not found in the body */
	PROBE_FAIL_OTHER,            /* anything else (a reset, a bad reply) */
	PROBE_FAIL_COUNT
} probe_failure_t;

/* Times are in milliseconds.  connect_ms is the TCP (and TLS) handshake
 * time without name resolution; total_ms runs from the start of the probe
 * to its end, resolution included. */
typedef struct probe_result {
	uint8_t connected;           /* TCP (and TLS) connect succeeded */
	uint8_t timed_out;
	uint16_t status;             /* HTTP status, 0 for TCP or none */
	uint8_t status_ok;           /* within expect (TCP: 1 if connected) */
	uint8_t body_ok;             /* match found (1 when not asked) */
	uint32_t connect_ms;
	uint32_t total_ms;
	int32_t cert_days_left;      /* HTTPS: days until expiry, -1 unknown */
	char error[128];             /* "" on success */
	uint8_t failure;             /* probe_failure_t; PROBE_OK on success */
	uint32_t bytes;              /* S1-3: bytes the probe cost on the
	                                wire, both ways, estimated
	                                (probe_wire_bytes()) */
} probe_result_t;

/* S1-3: what a probe costs beyond the bytes curl counts: the TCP
 * segments of a connection's opening and closing (about seven packets of
 * 40 to 60 bytes of headers), and a TLS handshake with a certificate
 * chain (a few kilobytes; curl does not count it). */
#define PROBE_TCP_WIRE_BYTES 400u
#define PROBE_TLS_WIRE_BYTES 4000u
/* S1-3: the probe budget when none is set, bytes per second: 0.5 % of a
 * 10 Mbit/s node, the smallest bandwidth an edge node has. */
#define PROBE_BUDGET_DEFAULT 6250.0

/** S1-3: the bytes on the wire of one probe of kind @kind
 * (probe_kind_t) that connected (@connected) and sent @sent and received
 * @received bytes of HTTP (0 for TCP probes): those, plus the TCP
 * segments of the connection (a SYN alone when it did not connect),
 * plus the TLS handshake of a connected HTTPS probe.  Pure. */
uint32_t probe_wire_bytes(int kind, int connected, uint64_t sent, uint64_t received);

/** S1-3: the probe traffic of a node, bytes per second: the sum over its
 * @n probes of the bytes of the last result @bytes[i] over the time
 * between its last two results @gap_s[i] (the probe's interval while it
 * has one result, 0: no result yet, not counted).  Pure. */
double probe_bytes_rate(unsigned n, const uint32_t *bytes, const double *gap_s);

typedef struct probe_engine probe_engine_t;
typedef struct probe_run probe_run_t;
typedef void (*probe_cb)(const probe_result_t *r, void *arg);

/** Initialises libcurl once per process (see Caveats); safe to call more
 * than once.  Returns 0, or GSLB_EIO if libcurl cannot start. */
int probe_global_init(void);

/** The name of failure @f ("refused", "connect", "timeout", "resolve",
 * "tls", "http_status", "body", "other"; "ok" for PROBE_OK; static). */
const char *probe_failure_name(probe_failure_t f);

/** Releases libcurl's global state at exit, after every engine is freed
 * and every thread but the caller has stopped. */
void probe_global_cleanup(void);

/** Parses a probe string; fills @out with defaults @interval_s and
 * @timeout_s for what it does not say.  Returns 0, or -1 with a message
 * naming the bad part in @err.
 *
 * Words are separated by spaces: the URL first, then options in any order,
 * each at most once.  match=TEXT takes the text up to the next space (no
 * quoting: a body substring with spaces cannot be given).  expect= takes
 * one status or a range LO-HI within 100-599.  expect, match, host and
 * insecure are refused on tcp:// probes, insecure on http:// ones.
 * Intervals are PROBE_INTERVAL_MIN..MAX, timeouts PROBE_TIMEOUT_MIN..MAX,
 * and the timeout must be below the interval. */
int probe_parse(const char *text, double interval_s, double timeout_s,
                probe_spec_t *out, char *err, size_t errlen);

/** Writes the canonical text of @s (for storage and display): the URL as
 * given, then interval and timeout only if they were given (so stored
 * probes follow later changes of the defaults), expect when not 200-399,
 * match, host and insecure.  probe_parse reads it back to the same spec
 * with the same defaults.  Truncates (always NUL-terminated) if @size is
 * short; 1200 bytes always suffice. */
void probe_format(const probe_spec_t *s, char *buf, size_t size);

/** Creates the engine on @loop (curl multi handle and its watchers).
 * @user_agent is copied; NULL means "gslbd/VERSION".  Returns NULL if
 * libcurl fails.  The caller owns the engine (probe_engine_free). */
probe_engine_t *probe_engine_new(uv_loop_t *loop, const char *user_agent);

/** Starts one probe; @cb is called exactly once, on the loop, unless the
 * run is cancelled first.  Returns a handle or NULL.  Never calls @cb from
 * within probe_start.  The handle is owned by the engine and becomes
 * invalid when @cb returns or probe_cancel is called; @s is copied. */
probe_run_t *probe_start(probe_engine_t *e, const probe_spec_t *s,
                         probe_cb cb, void *arg);

/** Cancels a run (its callback is not called).  @r must still be valid:
 * not already cancelled, and its callback not yet called. */
void probe_cancel(probe_run_t *r);

/** Cancels everything and frees the engine (the loop must then run once
 * to close its handles).  No probe callback is called afterwards.  NULL is
 * allowed. */
void probe_engine_free(probe_engine_t *e);

#endif
