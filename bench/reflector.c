/* SPDX-License-Identifier: MIT */
/* bench/reflector.c: the floor of bench/compare.sh.
 *
 * A UDP "server" that does nothing but what every DNS server must do on
 * UDP: block in recvmmsg(MSG_WAITFORONE) for a batch of up to 32
 * datagrams (the same receive loop as gslbd's src/dns/net_udp.c), set the
 * QR bit of each, and sendmmsg them back to their senders.  No parsing, no
 * lookup, no answer: its CPU per query is the kernel's cost of receiving
 * and sending one datagram on this machine, plus a wake-up per batch.
 * dnsperf counts the echoed query as an answer (same id, QR set).
 *
 *     reflector ADDRESS@PORT        (IPv4 or IPv6, e.g. 127.0.0.1@15550)
 *
 * Built by bench/compare.sh with gcc -O2; stops on SIGTERM/SIGINT. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define BATCH 32
#define BUFSZ 4096

static struct mmsghdr msg[BATCH];
static struct iovec iov[BATCH];
static struct sockaddr_storage from[BATCH];
static unsigned char buf[BATCH][BUFSZ];

int main(int argc, char **argv)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	char host[INET6_ADDRSTRLEN + 1], *at;
	int fd, one = 1, sz = 4 << 20;

	if (argc != 2 || !(at = strrchr(argv[1], '@')) ||
	    (size_t)(at - argv[1]) >= sizeof(host)) {
		fprintf(stderr, "usage: %s ADDRESS@PORT\n", argv[0]);
		return 2;
	}
	memcpy(host, argv[1], at - argv[1]);
	host[at - argv[1]] = 0;
	memset(&ss, 0, sizeof(ss));
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(atoi(at + 1));
		sl = sizeof(*s4);
	} else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(atoi(at + 1));
		sl = sizeof(*s6);
	} else {
		fprintf(stderr, "reflector: bad address %s\n", host);
		return 2;
	}
	fd = socket(ss.ss_family, SOCK_DGRAM, 0);
	if (fd < 0) {
		perror("socket");
		return 1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* Same buffer sizes as gslbd's UDP sockets. */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &sz, sizeof(sz));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0) {
		perror("bind");
		return 1;
	}
	for (int i = 0; i < BATCH; i++) {
		iov[i].iov_base = buf[i];
		msg[i].msg_hdr.msg_iovlen = 1;
	}
	for (;;) {
		for (int i = 0; i < BATCH; i++) {   /* compaction moved them */
			iov[i].iov_len = BUFSZ;
			msg[i].msg_hdr.msg_iov = &iov[i];
			msg[i].msg_hdr.msg_name = &from[i];
			msg[i].msg_hdr.msg_namelen = sizeof(from[i]);
		}
		int n = recvmmsg(fd, msg, BATCH, MSG_WAITFORONE, NULL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			perror("recvmmsg");
			return 1;
		}
		int m = 0;
		for (int i = 0; i < n; i++) {
			if (msg[i].msg_len < 12)   /* not a DNS header: drop */
				continue;
			buf[i][2] |= 0x80;         /* QR: a response */
			iov[i].iov_len = msg[i].msg_len;
			if (m != i)                /* compact the batch */
				msg[m].msg_hdr = msg[i].msg_hdr;
			m++;
		}
		for (int done = 0; done < m;) {
			int k = sendmmsg(fd, msg + done, m - done, 0);
			if (k < 0) {
				if (errno == EINTR)
					continue;
				break;             /* drop the rest, as a server would */
			}
			done += k;
		}
	}
}
