/* SPDX-License-Identifier: MIT */
/* UDP sockets, batched receive and reply, one blocking thread per socket.
 *
 * Each worker's UDP socket (one per listen address, SO_REUSEPORT) has a
 * thread of its own that blocks in recvmmsg(MSG_WAITFORONE): it wakes on
 * the first datagram, takes every datagram already queued with it,
 * answers them and sends the answers with one sendmmsg.  Two system calls
 * per batch and no readiness round trip: with the event loop's poll, each
 * wake-up also cost an epoll_wait and a final read that found nothing,
 * about a quarter more system calls per query at loopback rates, where
 * system calls are most of the cost.  TCP stays on the worker's loop.
 *
 * RCU: the thread is offline while it waits and online only while it
 * answers a batch (the snapshot and the weight store are read then).
 * Stop: net_udp_close() sets the flag and shuts the socket down, which
 * wakes the blocked read; a 1 s receive timeout backs that up. */
#include "dns/net_udp.h"
#include "common/net.h"
#include "common/log.h"
#include "dns/dnstap.h"
#include "dns/query.h"
#include "dns/rrl.h"
#include "dnssec/dnssec.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <urcu-qsbr.h>

/* Datagrams read and answered per system call. */
#define UDP_BATCH 32
#define UDP_INBUF 4096
#define UDP_OUTBUF 4096

struct net_udp {
	int fd;
	worker_t *w;
	pthread_t th;
	int started;
	int stop;                    /* atomic: set by net_udp_close() */
	int released;                /* atomic: handed over, never shut down */
	int64_t beat;                /* atomic: monotonic second of the last
	                                wake-up (a batch or the 1 s timeout) */
	qctx_t q;                    /* this thread's own query context */
	rrl_slot_t rrl;              /* its rate-limit table (S1-12) */
	dnstap_queue_t *dnstap;      /* its dnstap queue; NULL: off.  Set
	                                before the thread starts. */
	struct sockaddr_storage local; /* the bound address, for dnstap */
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
	u->q.rng = w->q.rng ^ (0x9E3779B97F4A7C15ull * (uint64_t)(fd + 1));
	if (w->db && !(u->q.wdb = wdb_reader_new(w->db))) {
		close(fd);
		free(u);
		return NULL;
	}
	if (w->db)
		u->q.memo = gslb_memo_new();
	if (w->q.dsig)
		u->q.dsig = dnssec_thread_new(w->sig_cache);
	u->q.cookies = cookie_mac_new();
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

static void *udp_main(void *arg)
{
	net_udp_t *u = arg;
	qctx_t *q = &u->q;
	rcu_register_thread();
	rcu_thread_offline();
	while (!__atomic_load_n(&u->stop, __ATOMIC_ACQUIRE)) {
		udp_batch(u);
		int n = recvmmsg(u->fd, u->in, UDP_BATCH, MSG_WAITFORONE, NULL);
		__atomic_store_n(&u->beat, util_mono_sec(), __ATOMIC_RELAXED);
		if (n <= 0)
			continue;
		worker__online(q);
		rrl_table_t *rl = rrl_slot_table(&u->rrl); /* NULL: off */
		q->rrl = rl;
		dnstap_queue_t *dt = u->dnstap;
		struct timespec now;  /* dnstap: when the batch arrived */
		if (dt)
			clock_gettime(CLOCK_REALTIME, &now);
		int nout = 0;
		for (int i = 0; i < n; i++) {
			if (u->in[i].msg_hdr.msg_flags & MSG_TRUNC) {
				STAT_INC(q->stats, STAT_DROPPED);
				continue;
			}
			client_t c = { (struct sockaddr *)&u->addr[i], 0 };
			size_t len = query_process(q, &c, u->inbuf[i], u->in[i].msg_len,
			                           u->outbuf[i], UDP_OUTBUF);
			if (!len && !q->rrl_done)
				continue;
			/* A signed answer was charged before it was signed
			 * (rrl_charge()); any other is charged as it is. */
			if (!len || (rl && !q->rrl_done &&
			             !(len = rrl_filter(rl, c.addr, u->outbuf[i], len,
			                                q->now, q->cookie, q->stats)))) {
				if (dt) /* withheld: the query only */
					dnstap_log(dt, q, &c, (struct sockaddr *)&u->local,
					           &now, u->inbuf[i], u->in[i].msg_len,
					           NULL, 0);
				continue;
			}
			if (dt)
				dnstap_log(dt, q, &c, (struct sockaddr *)&u->local, &now,
				           u->inbuf[i], u->in[i].msg_len, u->outbuf[i],
				           len);
			struct mmsghdr *m = &u->out[nout++];
			m->msg_hdr.msg_name = &u->addr[i];
			m->msg_hdr.msg_namelen = u->in[i].msg_hdr.msg_namelen;
			m->msg_hdr.msg_iov->iov_base = u->outbuf[i];
			m->msg_hdr.msg_iov->iov_len = len;
		}
		worker__offline(q);
		for (int sent = 0; sent < nout;) {
			int k = sendmmsg(u->fd, u->out + sent, (unsigned)(nout - sent), 0);
			if (k < 0) {
				if (errno == EINTR)
					continue;
				/* A full send buffer or an unreachable client:
				 * skip the datagram, as a lost reply would be. */
				STAT_INC(q->stats, STAT_DROPPED);
				sent++;
				continue;
			}
			sent += k;
		}
	}
	rcu_unregister_thread();
	return NULL;
}

void net_udp_set_dnstap(net_udp_t *u, dnstap_queue_t *dq)
{
	socklen_t sl = sizeof(u->local);
	if (getsockname(u->fd, (struct sockaddr *)&u->local, &sl) < 0)
		memset(&u->local, 0, sizeof(u->local));
	u->dnstap = dq;
}

int net_udp_start(net_udp_t *u)
{
	int fl = fcntl(u->fd, F_GETFL);
	if (fl < 0 || fcntl(u->fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		return -errno;
	/* The timeout also proves an idle thread alive (net_udp_beat()). */
	struct timeval tv = { 1, 0 };
	setsockopt(u->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	u->beat = util_mono_sec();
	int rc = pthread_create(&u->th, NULL, udp_main, u);
	if (rc)
		return -rc;
	u->started = 1;
	return 0;
}

void net_udp_stop(net_udp_t *u)
{
	__atomic_store_n(&u->stop, 1, __ATOMIC_RELEASE);
	/* Wakes a thread blocked in recvmmsg (it then reads 0).  A socket
	 * handed over is shared with the new process: shutting it down
	 * would stop that process's reads too, so the thread is left to
	 * its receive timeout. */
	if (!__atomic_load_n(&u->released, __ATOMIC_ACQUIRE))
		shutdown(u->fd, SHUT_RD);
}

void net_udp_release(net_udp_t *u)
{
	__atomic_store_n(&u->released, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&u->stop, 1, __ATOMIC_RELEASE);
}

int net_udp_fd(const net_udp_t *u)
{
	return u->fd;
}

void net_udp_close(net_udp_t *u)
{
	if (u->started) {
		net_udp_stop(u);
		pthread_join(u->th, NULL);
	}
	wdb_reader_free(u->q.wdb);
	gslb_memo_free(u->q.memo);
	dnssec_thread_free(u->q.dsig);
	cookie_mac_free(u->q.cookies);
	free(u->q.tally);
	close(u->fd);
	free(u);
}

qctx_t *net_udp_qctx(net_udp_t *u)
{
	return &u->q;
}

int64_t net_udp_beat(const net_udp_t *u)
{
	return __atomic_load_n(&u->beat, __ATOMIC_RELAXED);
}

uint64_t net_udp_stat(const net_udp_t *u, int stat)
{
	return __atomic_load_n(&u->q.stats[stat], __ATOMIC_RELAXED);
}
