/* SPDX-License-Identifier: MIT */
/* libmicrohttpd daemons on the libuv main loop (httpd.h). */
#include "common/httpd.h"

#include <arpa/inet.h>
#include <netinet/in.h>

static void arm(httpd_ep_t *ep);

static void on_timer(uv_timer_t *t)
{
	httpd_ep_t *ep = t->data;
	MHD_run(ep->d);
	arm(ep);
}

static void on_poll(uv_poll_t *p, int status, int events)
{
	(void)status;
	(void)events;
	httpd_ep_t *ep = p->data;
	MHD_run(ep->d);
	arm(ep);
}

/* libmicrohttpd's own timeouts (idle connections) run from a timer. */
static void arm(httpd_ep_t *ep)
{
	MHD_UNSIGNED_LONG_LONG ms;
	if (MHD_get_timeout(ep->d, &ms) == MHD_YES)
		uv_timer_start(&ep->timer, on_timer, ms, 0);
	else
		uv_timer_stop(&ep->timer);
}

unsigned httpd_flags(const struct sockaddr_storage *addr, uint16_t *port)
{
	unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
	if (addr->ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	*port = ntohs(addr->ss_family == AF_INET6 ?
	              ((const struct sockaddr_in6 *)addr)->sin6_port :
	              ((const struct sockaddr_in *)addr)->sin_port);
	return flags;
}

void httpd_add(httpd_set_t *s, uv_loop_t *loop, struct MHD_Daemon *d)
{
	httpd_ep_t *ep = &s->ep[s->nep++];
	const union MHD_DaemonInfo *info = MHD_get_daemon_info(d, MHD_DAEMON_INFO_EPOLL_FD);
	ep->d = d;
	ep->set = s;
	uv_poll_init(loop, &ep->poll, info->epoll_fd);
	uv_timer_init(loop, &ep->timer);
	ep->poll.data = ep->timer.data = ep;
	uv_poll_start(&ep->poll, UV_READABLE, on_poll);
	arm(ep);
}

void httpd_kick(httpd_set_t *s, struct MHD_Daemon *d)
{
	for (size_t i = 0; i < s->nep; i++)
		if (s->ep[i].d == d) {
			MHD_run(d);
			arm(&s->ep[i]);
		}
}

static void on_closed(uv_handle_t *h)
{
	httpd_ep_t *ep = h->data;
	httpd_set_t *s = ep->set;
	/* The daemon goes with its endpoint's timer; the owner only with the
	 * last handle, whichever it is: libuv does not run close callbacks
	 * in the order of uv_close(), and every handle lives in the owner. */
	if (h == (uv_handle_t *)&ep->timer) {
		MHD_stop_daemon(ep->d);
		ep->d = NULL;
	}
	if (--s->closing == 0)
		s->on_free(s->owner);
}

void httpd_stop(httpd_set_t *s)
{
	if (!s->nep) {
		s->on_free(s->owner);
		return;
	}
	s->closing = 2 * (unsigned)s->nep;
	for (size_t i = 0; i < s->nep; i++) {
		uv_close((uv_handle_t *)&s->ep[i].poll, on_closed);
		uv_close((uv_handle_t *)&s->ep[i].timer, on_closed);
	}
}
