/* SPDX-License-Identifier: MIT */
/* UDP sockets, batched receive and reply. */
#include "net_udp.h"
#include "net.h"
#include "log.h"
#include "query.h"
#include "util.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Datagrams read and answered per system call.  32 covers a full
 * scheduler tick at loopback rates without making one batch long enough
 * to delay the TCP handles of the same loop. */
#define UDP_BATCH 32
/* Batches per readiness callback before returning to the loop (fairness
 * with TCP and timers). */
#define UDP_ROUNDS 8
#define UDP_INBUF 4096
#define UDP_OUTBUF 4096

struct net_udp {
	uv_poll_t poll;
	int fd;
	worker_t *w;
	struct mmsghdr in[UDP_BATCH], out[UDP_BATCH];
	struct iovec iov_in[UDP_BATCH], iov_out[UDP_BATCH];
	struct sockaddr_storage addr[UDP_BATCH];
	uint8_t inbuf[UDP_BATCH][UDP_INBUF];
	uint8_t outbuf[UDP_BATCH][UDP_OUTBUF];
};

int net_udp_bind(const conf_listen_t *l)
{
	int fd = net_socket_bind(l, SOCK_DGRAM);
	if (fd < 0)
		return fd;
	/* Room for bursts: the kernel caps these at net.core.*mem_max. */
	int buf = 4 << 20;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	return fd;
}

net_udp_t *net_udp_new(worker_t *w, int fd)
{
	net_udp_t *u = xcalloc(1, sizeof(*u));
	u->fd = fd;
	u->w = w;
	for (int i = 0; i < UDP_BATCH; i++) {
		u->iov_in[i] = (struct iovec){ u->inbuf[i], UDP_INBUF };
		u->in[i].msg_hdr.msg_iov = &u->iov_in[i];
		u->in[i].msg_hdr.msg_iovlen = 1;
		u->out[i].msg_hdr.msg_iov = &u->iov_out[i];
		u->out[i].msg_hdr.msg_iovlen = 1;
	}
	return u;
}

static void udp_batch(net_udp_t *u)
{
	for (int i = 0; i < UDP_BATCH; i++) {
		u->in[i].msg_hdr.msg_name = &u->addr[i];
		u->in[i].msg_hdr.msg_namelen = sizeof(u->addr[i]);
		u->in[i].msg_hdr.msg_flags = 0;
	}
}

static void on_readable(uv_poll_t *h, int status, int events)
{
	net_udp_t *u = h->data;
	if (status < 0)
		return;
	worker_t *w = u->w;
	for (int round = 0; round < UDP_ROUNDS; round++) {
		udp_batch(u);
		int n = recvmmsg(u->fd, u->in, UDP_BATCH, MSG_DONTWAIT, NULL);
		if (n <= 0)
			return; /* drained (EAGAIN): back to the loop */
		worker__online(w);
		int nout = 0;
		for (int i = 0; i < n; i++) {
			if (u->in[i].msg_hdr.msg_flags & MSG_TRUNC) {
				w->q.stats[STAT_DROPPED]++;
				continue;
			}
			client_t c = { (struct sockaddr *)&u->addr[i], 0 };
			size_t len = query_process(&w->q, &c, u->inbuf[i], u->in[i].msg_len,
			                           u->outbuf[i], UDP_OUTBUF);
			if (!len)
				continue;
			struct mmsghdr *m = &u->out[nout++];
			m->msg_hdr.msg_name = &u->addr[i];
			m->msg_hdr.msg_namelen = u->in[i].msg_hdr.msg_namelen;
			m->msg_hdr.msg_iov->iov_base = u->outbuf[i];
			m->msg_hdr.msg_iov->iov_len = len;
		}
		worker__offline(w);
		for (int sent = 0; sent < nout;) {
			int k = sendmmsg(u->fd, u->out + sent, (unsigned)(nout - sent), 0);
			if (k < 0) {
				if (errno == EINTR)
					continue;
				/* A full send buffer or an unreachable client: skip
				 * the datagram, as a lost reply would be. */
				w->q.stats[STAT_DROPPED]++;
				sent++;
				continue;
			}
			sent += k;
		}
		/* Read again rather than return to epoll after a short batch:
		 * while it was answered more queries have often arrived, and
		 * one recvmmsg that finds nothing costs less than a round
		 * through epoll_wait and a wake-up. */
	}
}

int net_udp_start(net_udp_t *u)
{
	int rc = uv_poll_init(&u->w->loop, &u->poll, u->fd);
	if (rc)
		return rc;
	u->poll.data = u;
	return uv_poll_start(&u->poll, UV_READABLE, on_readable);
}

static void on_close(uv_handle_t *h)
{
	net_udp_t *u = h->data;
	close(u->fd);
	free(u);
}

void net_udp_close(net_udp_t *u)
{
	if (uv_is_active((uv_handle_t *)&u->poll) ||
	    u->poll.type == UV_POLL) {
		uv_close((uv_handle_t *)&u->poll, on_close);
		return;
	}
	close(u->fd);
	free(u);
}
