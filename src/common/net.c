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

const char *net_addr_special(const char *text)
{
	struct in_addr a4;
	struct in6_addr a6;
	if (inet_pton(AF_INET, text, &a4) == 1) {
		const uint8_t *b = (const uint8_t *)&a4;
		if (b[0] == 0)
			return "an unspecified (0.0.0.0/8) address";
		if (b[0] == 127)
			return "a loopback address";
		if (b[0] >= 224 && b[0] <= 239)
			return "a multicast address";
		if (b[0] == 255 && b[1] == 255 && b[2] == 255 && b[3] == 255)
			return "the broadcast address";
		if (b[0] >= 240)
			return "a reserved (240.0.0.0/4) address";
		return NULL;
	}
	if (inet_pton(AF_INET6, text, &a6) != 1)
		return NULL;
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	const uint8_t *b = a6.s6_addr;
	if (IN6_IS_ADDR_UNSPECIFIED(&a6))
		return "the unspecified address ::";
	if (IN6_IS_ADDR_LOOPBACK(&a6))
		return "the loopback address ::1";
	if (b[0] == 0xff)
		return "a multicast address";
	if (memcmp(b, mapped, 12) == 0)
		return "an IPv4-mapped address (give the IPv4 address itself)";
	return NULL;
}

int net_prefix_parse(const char *text, net_prefix_t *p)
{
	char host[64];
	const char *slash = strchr(text, '/');
	size_t hl = slash ? (size_t)(slash - text) : strlen(text);
	if (hl == 0 || hl >= sizeof(host))
		return -1;
	memcpy(host, text, hl);
	host[hl] = 0;
	memset(p, 0, sizeof(*p));
	unsigned max;
	if (inet_pton(AF_INET, host, p->addr) == 1)
		p->family = AF_INET, max = 32;
	else if (inet_pton(AF_INET6, host, p->addr) == 1)
		p->family = AF_INET6, max = 128;
	else
		return -1;
	p->bits = max;
	if (slash) {
		char *end;
		unsigned long b = strtoul(slash + 1, &end, 10);
		if (!slash[1] || *end || b > max)
			return -1;
		p->bits = (unsigned)b;
	}
	/* Host bits must be clear: 10.1.2.3/8 is a typo, not a network. */
	for (unsigned b = p->bits; b < max; b++)
		if (p->addr[b / 8] & (0x80u >> (b % 8)))
			return -1;
	return 0;
}

int net_prefix_allowed(const net_prefix_t *pfx, size_t n, const struct sockaddr *addr)
{
	if (!n)
		return 1;
	const unsigned char *a;
	int fam = addr->sa_family;
	unsigned char mapped[4];
	if (fam == AF_INET) {
		a = (const unsigned char *)&((const struct sockaddr_in *)addr)->sin_addr;
	} else if (fam == AF_INET6) {
		a = (const unsigned char *)&((const struct sockaddr_in6 *)addr)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)a)) {
			memcpy(mapped, a + 12, 4);
			a = mapped;
			fam = AF_INET;
		}
	} else {
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		const net_prefix_t *p = &pfx[i];
		if (p->family != fam)
			continue;
		unsigned full = p->bits / 8, rest = p->bits % 8;
		if (memcmp(a, p->addr, full) != 0)
			continue;
		if (rest && ((a[full] ^ p->addr[full]) & (0xff00u >> rest) & 0xff))
			continue;
		return 1;
	}
	return 0;
}
