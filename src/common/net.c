/* SPDX-License-Identifier: MIT */
/* Listening sockets shared by the UDP and TCP modules. */
#include "common/net.h"

#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

int net_socket_bind(const conf_listen_t *l, int type)
{
	int fd = socket(l->addr.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	int on = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &on, sizeof(on));
	if (l->addr.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on));
	if (bind(fd, (const struct sockaddr *)&l->addr, l->addrlen) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	return fd;
}
