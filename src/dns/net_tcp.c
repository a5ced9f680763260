/* SPDX-License-Identifier: MIT */
/* TCP framing, limits and idle timeouts (RFC 7766), and the defence
 * against clients that hoard connections (S1-12, dns/tcp_guard.h).
 *
 * Hoarding: a new connection from a source that holds its share
 * (server.tcp-max-per-source) is closed at once; at 90 % of the worker's
 * slots a newcomer evicts a connection that has not sent a whole query
 * yet (of the source holding the most, among the oldest: evictee()),
 * with every slot taken one that asked and went quiet (of a source
 * holding more than one), and timers armed from then on (and running
 * ones, at the crossing) get the shrunk idle time.  A connection whose answer is being written is
 * never closed by either: its idle timer lets the write finish (see
 * on_idle()). */
#include "dns/net_tcp.h"
#include "common/net.h"
#include "common/log.h"
#include "dns/dnstap.h"
#include "dns/query.h"
#include "common/util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Stop reading from a client while this much of its output is still
 * queued: a client that does not read cannot make us buffer without
 * bound (RFC 7766 §6.2.3 lets us pause it). */
#define TCP_WRITE_HIGH (256 * 1024)
#define TCP_BUF_INIT 2048
#define TCP_MSG_MAX (65535 + 2)

/* Connections accepted per readiness of a listener before the loop
 * turns to everything else: libuv's own listener accepts until the
 * queue is empty, so a client that reconnects as fast as it is evicted
 * keeps the queue full and the worker in accept() while every other
 * client's query waits unread (S1-12). */
#define TCP_ACCEPT_BATCH 16

/* After accept() fails for want of descriptors or memory, the listener
 * rests this long: the pending connections wait in the kernel's queue
 * rather than being accepted and reset, and the loop is not spun. */
#define TCP_ACCEPT_REST_MS 100

struct net_tcp {
	uv_poll_t poll;          /* readable: connections to accept */
	uv_timer_t rest;         /* TCP_ACCEPT_REST_MS after EMFILE & co. */
	int fd;
	int started;             /* poll and rest initialised */
	unsigned pending;        /* handles still to close */
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
	int counted;             /* in the worker's tcp_guard */
	int inq[2];              /* in the worker's queue Q_FRESH (no whole
	                            query yet) or Q_QUIET (asked) */
	int linger;              /* idle with an answer being written: shuts
	                            down when written (on_idle()) */
	uv_shutdown_t shut;      /* that shutdown (shut.handle set: sent) */
	tcp_src_t src;           /* its source, as the guard counts it */
	unsigned pending;        /* handles still to close */
	struct conn *prev, *next;/* the worker's open connections */
	struct conn *qprev[2], *qnext[2]; /* in those queues */
} conn_t;

/* The worker's queues of connections (tcp_queue[]), oldest first: the
 * candidates for eviction (evictee()). */
enum { Q_FRESH, Q_QUIET };

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

/* Takes @c out of its worker's queue @k (Q_*), if it is in it. */
static void q_unlink(conn_t *c, int k)
{
	struct conn_queue *q = &c->w->tcp_queue[k];
	if (!c->inq[k])
		return;
	c->inq[k] = 0;
	if (c->qprev[k])
		c->qprev[k]->qnext[k] = c->qnext[k];
	else
		q->head = c->qnext[k];
	if (c->qnext[k])
		c->qnext[k]->qprev[k] = c->qprev[k];
	else
		q->tail = c->qprev[k];
	c->qprev[k] = c->qnext[k] = NULL;
}

/* Puts @c at the end (the newest) of its worker's queue @k. */
static void q_push(conn_t *c, int k)
{
	struct conn_queue *q = &c->w->tcp_queue[k];
	q_unlink(c, k);
	c->inq[k] = 1;
	c->qprev[k] = q->tail;
	if (q->tail)
		q->tail->qnext[k] = c;
	else
		q->head = c;
	q->tail = c;
}

static void conn_close(conn_t *c)
{
	if (c->closing)
		return;
	q_unlink(c, Q_FRESH);
	q_unlink(c, Q_QUIET);
	if (c->counted) {
		c->counted = 0;
		tcp_guard_del(c->w->tcp_guard, &c->src);
		if (!tcp_guard_pressed(c->w->tcp_guard))
			c->w->tcp_pressed = 0;
	}
	c->closing = 1;
	c->pending = 2;
	uv_close((uv_handle_t *)&c->idle, conn_closed);
	uv_close((uv_handle_t *)&c->h, conn_closed);
}

/* Log lines of the guard, at most one a minute per kind, over all
 * workers: a flood of refusals is one line, not one per connection. */
enum { LOG_SOURCE, LOG_FULL, LOG_PRESSURE, LOG_ACCEPT, LOG_KINDS };
#define TCP_LOG_EVERY 60
static int64_t g_logged[LOG_KINDS] = { INT64_MIN, INT64_MIN, INT64_MIN,
                                        INT64_MIN };

static int log_due(int kind)
{
	int64_t now = util_mono_sec();
	int64_t last = __atomic_load_n(&g_logged[kind], __ATOMIC_RELAXED);
	if (last != INT64_MIN && now - last < TCP_LOG_EVERY)
		return 0;
	return __atomic_compare_exchange_n(&g_logged[kind], &last, now, 0,
	                                   __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

static const char *peer_str(const struct sockaddr_storage *ss, char *buf,
                            size_t len)
{
	const void *a = ss->ss_family == AF_INET6
	              ? (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr
	              : (const void *)&((const struct sockaddr_in *)ss)->sin_addr;
	if (!inet_ntop(ss->ss_family, a, buf, (socklen_t)len))
		snprintf(buf, len, "?");
	return buf;
}

/* The idle timer: closes @t's connection, quiet for its idle time.  One
 * whose answer is still being written (a large or pipelined one to a
 * slow reader) is not cut mid-answer: it lingers, answering nothing
 * more, and closes once the write is done, or after one more
 * tcp-idle-timeout (full, never shrunk) if its client does not read
 * even then (S1-12).  Once written, our side is shut down (FIN after
 * the last byte) and the connection closes at the client's EOF: what it
 * still sends is read and dropped meanwhile (on_read()), since a close
 * with unread input is a reset, which throws away what the kernel has
 * not sent yet. */
static void on_idle(uv_timer_t *t)
{
	conn_t *c = t->data;
	if (c->h.write_queue_size > 0 && !c->linger) {
		c->linger = 1;
		uv_timer_start(&c->idle, on_idle, c->w->tcp_idle_ms, 0);
		return;
	}
	tcp_guard_count(c->w->tcp_guard, TCP_CLOSED_IDLE);
	conn_close(c);
}

/* (Re)arms @c's idle timer: shrunk under pressure. */
static void idle_arm(conn_t *c)
{
	unsigned ms = tcp_guard_idle_ms(c->w->tcp_guard, c->w->tcp_idle_ms);
	uv_timer_start(&c->idle, on_idle, ms, ms);
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

static void on_shutdown(uv_shutdown_t *req, int status)
{
	conn_t *c = req->data;
	if (status < 0)
		conn_close(c);           /* no-op when already closing */
}

/* A lingering connection's answer is written: FIN after it, then read
 * (and drop) until the client's EOF or the end of the linger time. */
static void linger_done(conn_t *c)
{
	if (c->shut.handle)
		return;
	c->shut.data = c;
	if (uv_shutdown(&c->shut, (uv_stream_t *)&c->h, on_shutdown)) {
		conn_close(c);
		return;
	}
	if (c->paused) {
		c->paused = 0;
		conn_resume(c);
	}
}

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
	else if (c->linger && q == 0)
		linger_done(c);
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
	if (c->linger)
		return;               /* dropped: see on_idle() */
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
	if (answered) {
		idle_arm(c);
		q_unlink(c, Q_FRESH);
		q_push(c, Q_QUIET);
	}
	if (c->h.write_queue_size > TCP_WRITE_HIGH) {
		c->paused = 1;
		uv_read_stop(s);
	}
}

static void conn_resume(conn_t *c)
{
	uv_read_start((uv_stream_t *)&c->h, on_alloc, on_read);
}

/* The pressure mark was crossed: running timers longer than the shrunk
 * idle time are cut to it, so that connections opened before the crowd
 * (a hoarder's first thousand) do not keep their full time. */
static void pressure_begins(worker_t *w)
{
	unsigned ms = tcp_guard_idle_ms(w->tcp_guard, w->tcp_idle_ms);
	for (conn_t *c = w->tcp_conns; c; c = c->next)
		if (!c->closing && !c->linger && uv_timer_get_due_in(&c->idle) > ms)
			uv_timer_start(&c->idle, on_idle, ms, ms);
	if (log_due(LOG_PRESSURE))
		log_notice("tcp: worker %u has %u of its %u connections open: "
		           "connections without a query yet make room for new "
		           "ones, idle ones close after %u ms (logged at most "
		           "once a minute)", w->id, tcp_guard_open(w->tcp_guard),
		           w->tcp_max, ms);
}

/* Whether @c, in the queue Q_QUIET, may be evicted: it has no query
 * unanswered, not even in part, and no answer being written, so closing
 * it cuts nothing (S1-12). */
static int quiet_now(const conn_t *c)
{
	return c->len == 0 && c->h.write_queue_size == 0 && !c->linger;
}

/* Whether bytes from @c's client wait in the kernel, not read yet. */
static int unread(const conn_t *c)
{
	uv_os_fd_t fd;
	int n = 0;
	if (uv_fileno((const uv_handle_t *)&c->h, &fd))
		return 0;
	return ioctl(fd, FIONREAD, &n) == 0 && n > 0;
}

/* The candidate to evict for a newcomer (S1-12): among the
 * TCP_EVICT_SCAN oldest connections of the worker's queue @k (Q_*), those
 * that may go (any without a whole query; quiet_now() ones that asked),
 * one of the source holding the most (tcp_guard_pick()), with that count
 * in @count; NULL and 0 when there is none. */
static conn_t *evictee(worker_t *w, int k, unsigned *count)
{
	conn_t *cand[TCP_EVICT_SCAN];
	unsigned counts[TCP_EVICT_SCAN];
	size_t n = 0, seen = 0;
	for (conn_t *c = w->tcp_queue[k].head; c && seen < TCP_EVICT_SCAN;
	     c = c->qnext[k], seen++) {
		if (k == Q_QUIET && !quiet_now(c))
			continue;
		cand[n] = c;
		counts[n++] = tcp_guard_of(w->tcp_guard, &c->src);
	}
	*count = 0;
	if (!n)
		return NULL;
	size_t i = tcp_guard_pick(counts, n);
	/* A quiet one whose next query is already in the kernel's buffer
	 * is not quiet: closing it would reset the connection and lose
	 * that query.  A few picks at most, one ioctl each. */
	for (int tries = 0; k == Q_QUIET && counts[i] && unread(cand[i]);
	     tries++) {
		counts[i] = 0;         /* 0: not a candidate (the verdict) */
		if (tries < 3)
			i = tcp_guard_pick(counts, n);
	}
	*count = counts[i];
	return cand[i];
}

/* Closes the new connection @c, counted as @stat (TCP_REFUSED_*) and
 * logged as @kind at most once a minute with the reason @why; -1. */
static int refuse(conn_t *c, int stat, int kind, const char *why)
{
	tcp_guard_t *g = c->w->tcp_guard;
	char a[INET6_ADDRSTRLEN];
	tcp_guard_count(g, stat);
	if (log_due(kind))
		log_notice("tcp: closed a new connection from %s on worker %u: %s; "
		           "%llu so far (logged at most once a minute)",
		           peer_str(&c->peer, a, sizeof(a)), c->w->id, why,
		           (unsigned long long)tcp_guard_stat(g, stat));
	conn_close(c);
	return -1;
}

/* The guard's verdict on the new connection @c (S1-12): 0 and @c counted
 * (after evicting the oldest connection without a query, if asked), or
 * -1 and @c closing (counted as refused, and logged at most once a
 * minute per reason). */
static int admit(conn_t *c)
{
	worker_t *w = c->w;
	tcp_guard_t *g = w->tcp_guard;
	tcp_guard_source(g, (struct sockaddr *)&c->peer, &c->src);
	/* Candidates are looked for only where the verdict needs them. */
	unsigned vcount = 0, qcount = 0;
	conn_t *victim = tcp_guard_pressed(g) ? evictee(w, Q_FRESH, &vcount)
	                                      : NULL;
	conn_t *quiet = tcp_guard_open(g) >= w->tcp_max
	              ? evictee(w, Q_QUIET, &qcount) : NULL;
	switch (tcp_guard_verdict(g, &c->src, vcount, qcount)) {
	case TCP_REFUSE_SOURCE:
		/* Closed at once rather than queued (RFC 7766 §6.2.2): the
		 * client retries or uses UDP, the source's other connections
		 * are untouched. */
		return refuse(c, TCP_REFUSED_SOURCE, LOG_SOURCE, "its network holds "
		              "its share of server.tcp-max-per-source");
	case TCP_REFUSE_FULL:
		return refuse(c, TCP_REFUSED_FULL, LOG_FULL, "every slot of "
		              "server.tcp-max-clients is taken by a client that has "
		              "asked something");
	case TCP_ADMIT_EVICT:
		/* One without a whole query: it is writing nothing (an answer
		 * needs a query), so nothing is cut mid-answer. */
		tcp_guard_count(g, TCP_CLOSED_PRESSURE);
		conn_close(victim);
		break;
	case TCP_ADMIT_EVICT_QUIET:
		/* One that asked and has had every answer written: closing it
		 * is the idle close come early (RFC 7766 §6.2.3). */
		tcp_guard_count(g, TCP_CLOSED_PRESSURE);
		conn_close(quiet);
		break;
	case TCP_ADMIT:
		break;
	}
	tcp_guard_add(g, &c->src);
	c->counted = 1;
	q_push(c, Q_FRESH);
	int pressed = tcp_guard_pressed(g);
	if (pressed && !w->tcp_pressed)
		pressure_begins(w);
	w->tcp_pressed = pressed;
	return 0;
}

/* Takes the accepted socket @fd from peer @peer into worker @w. */
static void conn_new(worker_t *w, int fd, const struct sockaddr_storage *peer)
{
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
	if (uv_tcp_open(&c->h, fd) != 0) {
		close(fd);
		conn_close(c);
		return;
	}
	c->peer = *peer;
	if (admit(c) < 0)
		return;
	if (w->dnstap) {
		int len = sizeof(c->local);
		uv_tcp_getsockname(&c->h, (struct sockaddr *)&c->local, &len);
	}
	uv_tcp_nodelay(&c->h, 1);
	c->cap = TCP_BUF_INIT;
	c->buf = xmalloc(c->cap);
	idle_arm(c);
	uv_read_start((uv_stream_t *)&c->h, on_alloc, on_read);
}

static void on_listen(uv_poll_t *p, int status, int events);

static void on_rest(uv_timer_t *tm)
{
	net_tcp_t *t = tm->data;
	uv_poll_start(&t->poll, UV_READABLE, on_listen);
}

/* The listener is readable: at most TCP_ACCEPT_BATCH connections now,
 * the rest at the loop's next turn (the poll is level-triggered). */
static void on_listen(uv_poll_t *p, int status, int events)
{
	net_tcp_t *t = p->data;
	(void)events;
	if (status < 0)
		return;
	for (int i = 0; i < TCP_ACCEPT_BATCH; i++) {
		struct sockaddr_storage peer;
		socklen_t len = sizeof(peer);
		int fd = accept4(t->fd, (struct sockaddr *)&peer, &len,
		                 SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd >= 0) {
			conn_new(t->w, fd, &peer);
			continue;
		}
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		    errno == ENOMEM) {
			int e = errno;
			if (log_due(LOG_ACCEPT))
				log_warning("tcp: worker %u cannot accept connections: %s "
				            "(%u of its connections open); new ones wait "
				            "%d ms in the kernel's queue (logged at most "
				            "once a minute)", t->w->id, strerror(e),
				            tcp_guard_open(t->w->tcp_guard),
				            TCP_ACCEPT_REST_MS);
			uv_poll_stop(&t->poll);
			uv_timer_start(&t->rest, on_rest, TCP_ACCEPT_REST_MS, 0);
			return;
		}
		/* ECONNABORTED, EPROTO, EINTR...: that one is gone, go on. */
	}
}

int net_tcp_start(net_tcp_t *t)
{
	int rc = uv_poll_init_socket(&t->w->loop, &t->poll, t->fd);
	if (rc)
		return rc;
	if ((rc = uv_timer_init(&t->w->loop, &t->rest))) {
		uv_close((uv_handle_t *)&t->poll, NULL);
		return rc;
	}
	t->poll.data = t->rest.data = t;
	t->started = 1;
	return uv_poll_start(&t->poll, UV_READABLE, on_listen);
}

static void listener_closed(uv_handle_t *h)
{
	net_tcp_t *t = h->data;
	if (--t->pending)
		return;
	close(t->fd);
	free(t);
}

void net_tcp_close(net_tcp_t *t)
{
	if (t->started) {
		t->pending = 2;
		uv_close((uv_handle_t *)&t->poll, listener_closed);
		uv_close((uv_handle_t *)&t->rest, listener_closed);
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
