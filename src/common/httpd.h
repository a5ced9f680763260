/* SPDX-License-Identifier: MIT */
/* libmicrohttpd daemons on the libuv main loop: each daemon's epoll
 * descriptor is watched by a uv_poll_t, its own timeouts (idle
 * connections) by a uv_timer_t, and MHD_run() serves whatever is ready.
 * The metrics endpoint and the HTTP API serve through it.  Main loop
 * only. */
#ifndef GSLB_COMMON_HTTPD_H
#define GSLB_COMMON_HTTPD_H

#include <microhttpd.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <uv.h>

#define HTTPD_MAX_LISTEN 8

typedef struct httpd_set httpd_set_t;

typedef struct httpd_ep {
	struct MHD_Daemon *d;
	uv_poll_t poll;
	uv_timer_t timer;
	httpd_set_t *set;
} httpd_ep_t;

/* The daemons of one server, kept inside its owner (the whole owner is
 * freed by @on_free once the last handle has closed). */
struct httpd_set {
	httpd_ep_t ep[HTTPD_MAX_LISTEN];
	size_t nep;
	unsigned closing;           /* handles whose close is still pending */
	void (*on_free)(void *owner);
	void *owner;
};

/** MHD_start_daemon()'s flags for @addr (epoll, error log, IPv6 when it
 * is an IPv6 address) and, in *@port, its port. */
unsigned httpd_flags(const struct sockaddr_storage *addr, uint16_t *port);

/** Serves daemon @d (started with httpd_flags()) from @loop.  At most
 * HTTPD_MAX_LISTEN a set. */
void httpd_add(httpd_set_t *s, uv_loop_t *loop, struct MHD_Daemon *d);

/** Serves daemon @d of @s now (what a resumed connection asks for, as
 * libmicrohttpd wants after MHD_resume_connection() when the loop is
 * not its own).  Not from inside one of @d's callbacks. */
void httpd_kick(httpd_set_t *s, struct MHD_Daemon *d);

/** Stops every daemon of @s and calls s->on_free(s->owner) once all of
 * their handles have closed (at once when there are none). */
void httpd_stop(httpd_set_t *s);

#endif
