/* SPDX-License-Identifier: MIT */
/* Listening sockets shared by the UDP and TCP modules. */
#include "common/net.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* The inode of the socket bound to @l, from /proc/net/{udp,tcp}{,6}
 * (addresses there are in host byte order per 32-bit word, as hex). */
static unsigned long socket_inode(const conf_listen_t *l, int type)
{
	char path[32], want[64];
	int v6 = l->addr.ss_family == AF_INET6;
	snprintf(path, sizeof(path), "/proc/net/%s%s",
	         type == SOCK_DGRAM ? "udp" : "tcp", v6 ? "6" : "");
	if (v6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)&l->addr;
		const uint32_t *w = (const uint32_t *)&a->sin6_addr;
		snprintf(want, sizeof(want), "%08X%08X%08X%08X:%04X", w[0], w[1],
		         w[2], w[3], ntohs(a->sin6_port));
	} else {
		const struct sockaddr_in *a = (const struct sockaddr_in *)&l->addr;
		snprintf(want, sizeof(want), "%08X:%04X", a->sin_addr.s_addr,
		         ntohs(a->sin_port));
	}
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	char line[512], local[80];
	unsigned long inode = 0;
	while (!inode && fgets(line, sizeof(line), f)) {
		unsigned long ino;
		/* sl local rem st tx:rx tr:when retrnsmt uid timeout inode */
		if (sscanf(line, " %*s %79s %*s %*s %*s %*s %*s %*s %*s %lu", local,
		           &ino) == 2 && strcmp(local, want) == 0)
			inode = ino;
	}
	fclose(f);
	return inode;
}

/* The first process with a descriptor on socket @inode. */
static int socket_owner(unsigned long inode, char *who, size_t wholen)
{
	char want[48];
	snprintf(want, sizeof(want), "socket:[%lu]", inode);
	DIR *proc = opendir("/proc");
	if (!proc)
		return 0;
	struct dirent *p;
	int found = 0;
	while (!found && (p = readdir(proc))) {
		char *end;
		long pid = strtol(p->d_name, &end, 10);
		if (*end || pid <= 0 || pid == (long)getpid())
			continue;
		char fdd[64];
		snprintf(fdd, sizeof(fdd), "/proc/%ld/fd", pid);
		DIR *fds = opendir(fdd);
		if (!fds)
			continue;
		struct dirent *f;
		while (!found && (f = readdir(fds))) {
			char link[600], target[64];
			snprintf(link, sizeof(link), "%s/%s", fdd, f->d_name);
			ssize_t n = readlink(link, target, sizeof(target) - 1);
			if (n <= 0)
				continue;
			target[n] = 0;
			if (strcmp(target, want) != 0)
				continue;
			char comm[64] = "?", cpath[64];
			snprintf(cpath, sizeof(cpath), "/proc/%ld/comm", pid);
			FILE *c = fopen(cpath, "r");
			if (c) {
				if (fgets(comm, sizeof(comm), c))
					comm[strcspn(comm, "\n")] = 0;
				fclose(c);
			}
			snprintf(who, wholen, "pid %ld (%s)", pid, comm);
			found = 1;
		}
		closedir(fds);
	}
	closedir(proc);
	return found;
}

int net_in_use(const conf_listen_t *l, int type, char *who, size_t wholen)
{
	int fd = socket(l->addr.ss_family, type | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	int on = 1;
	if (type == SOCK_STREAM)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (l->addr.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof(on));
	int busy = bind(fd, (const struct sockaddr *)&l->addr, l->addrlen) < 0 &&
	           errno == EADDRINUSE;
	close(fd);
	if (!busy)
		return 0;
	unsigned long ino = socket_inode(l, type);
	if (!ino || !socket_owner(ino, who, wholen))
		snprintf(who, wholen, "another process");
	return 1;
}

/* Whether socket @fd is of @type and bound to @l. */
static int bound_to(int fd, const conf_listen_t *l, int type)
{
	int t = 0;
	socklen_t tl = sizeof(t);
	struct sockaddr_storage a;
	socklen_t al = sizeof(a);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &t, &tl) < 0 || t != type ||
	    getsockname(fd, (struct sockaddr *)&a, &al) < 0 ||
	    a.ss_family != l->addr.ss_family)
		return 0;
	if (a.ss_family == AF_INET) {
		const struct sockaddr_in *x = (const struct sockaddr_in *)&a,
		                         *y = (const struct sockaddr_in *)&l->addr;
		return x->sin_port == y->sin_port &&
		       x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	const struct sockaddr_in6 *x = (const struct sockaddr_in6 *)&a,
	                          *y = (const struct sockaddr_in6 *)&l->addr;
	return x->sin6_port == y->sin6_port &&
	       memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr)) == 0;
}

int net_adopt(int *fds, size_t n, const conf_listen_t *l, int type)
{
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0 && bound_to(fds[i], l, type)) {
			int fd = fds[i];
			fds[i] = -1;
			return fd;
		}
	return -1;
}
