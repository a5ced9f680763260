/* SPDX-License-Identifier: MIT */
/* TCP framing, limits and idle timeouts (RFC 7766). */
#include "dns/net_tcp.h"
#include "common/net.h"
#include "common/log.h"
#include "dns/dnstap.h"
#include "dns/query.h"
#include "common/util.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Stop reading from a client while this much of its output is still
 * queued: a client that does not read cannot make us buffer without
 * bound (RFC 7766 §6.2.3 lets us pause it). */
#define TCP_WRITE_HIGH (256 * 1024)
#define TCP_BUF_INIT 2048
#define TCP_MSG_MAX (65535 + 2)

struct net_tcp {
	uv_tcp_t handle;
	int fd;
	worker_t *w;
};

typedef struct conn {
	uv_tcp_t h;
	uv_timer_t idle;
	worker_t *w;
	struct sockaddr_storage peer;
	struct sockaddr_storage local; /* our address: only with dnstap */
	uint8_t *buf;            /* unprocessed bytes of the stream */
	size_t len, cap;
	int closing, eof, paused;
	unsigned pending;        /* handles still to close */
	struct conn *prev, *next;/* the worker's open connections */
} conn_t;

typedef struct wreq {
	uv_write_t req;
	conn_t *c;
	uint8_t data[];
} wreq_t;

int net_tcp_bind(const conf_listen_t *l)
{
	int fd = net_socket_bind(l, SOCK_STREAM);
	if (fd >= 0 && listen(fd, 1024) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}

net_tcp_t *net_tcp_new(worker_t *w, int fd)
{
	net_tcp_t *t = xcalloc(1, sizeof(*t));
	t->fd = fd;
	t->w = w;
	return t;
}

static void conn_closed(uv_handle_t *h)
{
	conn_t *c = h->data;
	if (--c->pending == 0) {
		__atomic_sub_fetch(&c->w->tcp_clients, 1, __ATOMIC_RELAXED);
		if (c->prev)
			c->prev->next = c->next;
		else
			c->w->tcp_conns = c->next;
		if (c->next)
			c->next->prev = c->prev;
		free(c->buf);
		free(c);
	}
}

static void conn_close(conn_t *c)
{
	if (c->closing)
		return;
	c->closing = 1;
	c->pending = 2;
	uv_close((uv_handle_t *)&c->idle, conn_closed);
	uv_close((uv_handle_t *)&c->h, conn_closed);
}

static void on_idle(uv_timer_t *t)
{
	conn_close(t->data);
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
	conn_t *c = h->data;
	if (c->cap - c->len < 512) {
		size_t ncap = c->cap * 2;
		if (ncap > TCP_MSG_MAX + 4096)
			ncap = TCP_MSG_MAX + 4096;
		if (ncap > c->cap) {
			c->buf = xrealloc(c->buf, ncap);
			c->cap = ncap;
		}
	}
	*buf = uv_buf_init((char *)c->buf + c->len, (unsigned)(c->cap - c->len));
}

static void conn_resume(conn_t *c);

static void on_write(uv_write_t *req, int status)
{
	wreq_t *r = (wreq_t *)req;
	conn_t *c = r->c;
	free(r);
	if (c->closing)
		return;
	if (status < 0) {
		conn_close(c);
		return;
	}
	size_t q = c->h.write_queue_size;
	if (c->eof && q == 0)
		conn_close(c);
	else if (c->paused && q < TCP_WRITE_HIGH / 2) {
		c->paused = 0;
		conn_resume(c);
	}
}

/* Sends @len bytes of framed responses: uv_try_write first (no
 * allocation, the usual case), a queued copy of the rest otherwise.
 * libuv refuses try_write while earlier writes are queued, so order is
 * kept. */
static void send_out(conn_t *c, const uint8_t *msg, size_t len)
{
	uv_buf_t b = uv_buf_init((char *)msg, (unsigned)len);
	int n = uv_try_write((uv_stream_t *)&c->h, &b, 1);
	if (n == (int)len)
		return;
	if (n < 0 && n != UV_EAGAIN) {
		conn_close(c);
		return;
	}
	size_t done = n > 0 ? (size_t)n : 0;
	wreq_t *r = xmalloc(sizeof(*r) + len - done);
	r->c = c;
	memcpy(r->data, msg + done, len - done);
	b = uv_buf_init((char *)r->data, (unsigned)(len - done));
	if (uv_write(&r->req, (uv_stream_t *)&c->h, &b, 1, on_write)) {
		free(r);
		conn_close(c);
	}
}

static void on_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf)
{
	conn_t *c = s->data;
	if (c->closing)
		return;
	if (nread < 0) {
		/* EOF: finish the writes in flight, then close. */
		if (nread == UV_EOF && c->h.write_queue_size > 0) {
			c->eof = 1;
			uv_read_stop(s);
		} else {
			conn_close(c);
		}
		return;
	}
	c->len += (size_t)nread;
	worker_t *w = c->w;
	size_t off = 0;
	int answered = 0;
	struct timespec now; /* dnstap: when the bytes arrived */
	if (w->dnstap)
		clock_gettime(CLOCK_REALTIME, &now);
	/* The responses to every query of this read go out in one write
	 * (a pipelining client sends many per segment): one system call
	 * and one segment instead of one per query. */
	size_t olen = 0;
	worker__online(&w->q);
	while (c->len - off >= 2 && !c->closing) {
		size_t mlen = rd16(c->buf + off);
		if (c->len - off < 2 + mlen)
			break;
		if (WORKER_TCP_OUT - olen < 2 + 65535) {
			send_out(c, w->tcp_out, olen);
			olen = 0;
			if (c->closing)
				break;
		}
		uint8_t *out = w->tcp_out + olen;
		client_t cl = { (struct sockaddr *)&c->peer, 1 };
		size_t rlen = query_process(&w->q, &cl, c->buf + off + 2, mlen,
		                            out + 2, 65535);
		if (rlen && w->dnstap)
			dnstap_log(w->dnstap, &w->q, &cl, (struct sockaddr *)&c->local,
			           &now, c->buf + off + 2, mlen, out + 2, rlen);
		off += 2 + mlen;
		answered = 1;
		if (!rlen)
			continue;
		wr16(out, (uint16_t)rlen);
		olen += 2 + rlen;
	}
	worker__offline(&w->q);
	if (olen && !c->closing)
		send_out(c, w->tcp_out, olen);
	if (off) {
		memmove(c->buf, c->buf + off, c->len - off);
		c->len -= off;
	}
	if (c->closing)
		return;
	/* The idle clock restarts only when a whole query arrived: a client
	 * that trickles bytes cannot hold a slot for ever. */
	if (answered)
		uv_timer_again(&c->idle);
	if (c->h.write_queue_size > TCP_WRITE_HIGH) {
		c->paused = 1;
		uv_read_stop(s);
	}
}

static void conn_resume(conn_t *c)
{
	uv_read_start((uv_stream_t *)&c->h, on_alloc, on_read);
}

static void on_connection(uv_stream_t *server, int status)
{
	net_tcp_t *t = server->data;
	worker_t *w = t->w;
	if (status < 0)
		return;
	conn_t *c = xcalloc(1, sizeof(*c));
	c->w = w;
	uv_tcp_init(&w->loop, &c->h);
	uv_timer_init(&w->loop, &c->idle);
	c->h.data = c->idle.data = c;
	__atomic_add_fetch(&w->tcp_clients, 1, __ATOMIC_RELAXED);
	c->next = w->tcp_conns;
	if (c->next)
		c->next->prev = c;
	w->tcp_conns = c;
	if (uv_accept(server, (uv_stream_t *)&c->h) != 0) {
		conn_close(c);
		return;
	}
	if (w->tcp_clients > w->tcp_max) {
		/* Over the limit: close at once rather than queue (RFC 7766
		 * §6.2.2); the client retries or uses UDP. */
		conn_close(c);
		return;
	}
	int len = sizeof(c->peer);
	uv_tcp_getpeername(&c->h, (struct sockaddr *)&c->peer, &len);
	if (w->dnstap) {
		len = sizeof(c->local);
		uv_tcp_getsockname(&c->h, (struct sockaddr *)&c->local, &len);
	}
	uv_tcp_nodelay(&c->h, 1);
	c->cap = TCP_BUF_INIT;
	c->buf = xmalloc(c->cap);
	uv_timer_start(&c->idle, on_idle, w->tcp_idle_ms, w->tcp_idle_ms);
	uv_read_start((uv_stream_t *)&c->h, on_alloc, on_read);
}

int net_tcp_start(net_tcp_t *t)
{
	int rc = uv_tcp_init(&t->w->loop, &t->handle);
	if (rc)
		return rc;
	t->handle.data = t;
	if ((rc = uv_tcp_open(&t->handle, t->fd)))
		return rc;
	return uv_listen((uv_stream_t *)&t->handle, 1024, on_connection);
}

static void listener_closed(uv_handle_t *h)
{
	free(h->data);
}

void net_tcp_close(net_tcp_t *t)
{
	if (t->handle.type == UV_TCP) {
		uv_close((uv_handle_t *)&t->handle, listener_closed);
		return;
	}
	close(t->fd);
	free(t);
}

int net_tcp_fd(const net_tcp_t *t)
{
	return t->fd;
}

void net_tcp_drain_conns(worker_t *w)
{
	for (conn_t *c = w->tcp_conns; c; c = c->next)
		if (!c->closing)
			uv_timer_start(&c->idle, on_idle, w->tcp_idle_ms, w->tcp_idle_ms);
}

void net_tcp_close_conns(worker_t *w)
{
	for (conn_t *c = w->tcp_conns; c; c = c->next)
		conn_close(c);
}
