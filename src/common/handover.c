/* SPDX-License-Identifier: MIT */
/* The control socket of gslbd --replace: descriptors passed with
 * SCM_RIGHTS over a Unix SOCK_SEQPACKET socket (see handover.h). */
#include "common/handover.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Descriptors per message: the kernel refuses more than SCM_MAX_FD (253)
 * in one; 2 sockets per worker and listen address can be more. */
#define HANDOVER_CHUNK 200

/* The socket's address.  A database directory whose path does not fit
 * into sun_path (108 bytes) is reached through /proc/self/fd/N of the
 * directory, opened into *@dirfd (the caller closes it after bind or
 * connect; -1 when not needed). */
static int sock_addr(const char *dir, struct sockaddr_un *a, int *dirfd,
                     char *err, size_t errlen)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	*dirfd = -1;
	int n = snprintf(a->sun_path, sizeof(a->sun_path), "%s/%s", dir,
	                 HANDOVER_NAME);
	if (n > 0 && (size_t)n < sizeof(a->sun_path))
		return 0;
	*dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (*dirfd < 0) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -errno;
	}
	snprintf(a->sun_path, sizeof(a->sun_path), "/proc/self/fd/%d/%s", *dirfd,
	         HANDOVER_NAME);
	return 0;
}

int handover_listen(const char *dir, char *err, size_t errlen)
{
	struct sockaddr_un a;
	int dfd;
	if (sock_addr(dir, &a, &dfd, err, errlen))
		return -1;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "control socket: %s", strerror(errno));
		goto fail;
	}
	/* Only our user (or root) may connect; handover_accept() checks the
	 * peer again in case the directory is shared. */
	mode_t old = umask(077);
	unlink(a.sun_path);
	int rc = bind(fd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (rc < 0 || listen(fd, 4) < 0) {
		snprintf(err, errlen, "control socket %s/%s: %s", dir, HANDOVER_NAME,
		         strerror(errno));
		close(fd);
		goto fail;
	}
	if (dfd >= 0)
		close(dfd);
	return fd;
fail:
	if (dfd >= 0)
		close(dfd);
	return -1;
}

void handover_unlink(const char *dir)
{
	struct sockaddr_un a;
	int dfd;
	char err[256];
	if (sock_addr(dir, &a, &dfd, err, sizeof(err)))
		return;
	unlink(a.sun_path);
	if (dfd >= 0)
		close(dfd);
}

int handover_connect(const char *dir, char *err, size_t errlen)
{
	struct sockaddr_un a;
	int dfd, rc = sock_addr(dir, &a, &dfd, err, errlen);
	if (rc)
		return rc;
	int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		snprintf(err, errlen, "control socket: %s", strerror(errno));
	} else if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		rc = -errno;
		snprintf(err, errlen, "%s/%s: %s", dir, HANDOVER_NAME, strerror(errno));
		close(fd);
	} else {
		rc = fd;
	}
	if (dfd >= 0)
		close(dfd);
	return rc;
}

int handover_accept(int lfd, char *err, size_t errlen)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "control socket: %s", strerror(errno));
		return -1;
	}
	struct ucred cr;
	socklen_t cl = sizeof(cr);
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0 ||
	    (cr.uid != 0 && cr.uid != getuid())) {
		snprintf(err, errlen, "control socket: refusing pid %d of uid %u "
		         "(not our user)", (int)cr.pid, (unsigned)cr.uid);
		close(fd);
		return -1;
	}
	return fd;
}

/* Sends @msg with descriptors @fds[0..n) (n may be 0). */
static int send_msg(int fd, const char *msg, const int *fds, size_t n)
{
	struct iovec iov = { (void *)msg, strlen(msg) };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * HANDOVER_CHUNK)];
	} u;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	if (n) {
		memset(&u, 0, sizeof(u));
		m.msg_control = u.buf;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * n);
		struct cmsghdr *c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
	}
	ssize_t r;
	do
		r = sendmsg(fd, &m, MSG_NOSIGNAL);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : 0;
}

int handover_send(int fd, const char *msg)
{
	return send_msg(fd, msg, NULL, 0);
}

/* Receives one message and the descriptors with it (appended to
 * @fds[*nfds..max), any beyond closed). */
static int recv_msg(int fd, char *msg, size_t len, int timeout_ms, int *fds,
                    size_t *nfds, size_t max)
{
	struct pollfd p = { fd, POLLIN, 0 };
	int pr;
	do
		pr = poll(&p, 1, timeout_ms);
	while (pr < 0 && errno == EINTR);
	if (pr < 0)
		return -errno;
	if (pr == 0)
		return -ETIMEDOUT;
	struct iovec iov = { msg, len - 1 };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int) * HANDOVER_CHUNK)];
	} u;
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
	                    .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	ssize_t r;
	do
		r = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	msg[r] = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		int got[HANDOVER_CHUNK];
		memcpy(got, CMSG_DATA(c), k * sizeof(int));
		for (size_t i = 0; i < k; i++) {
			if (fds && *nfds < max)
				fds[(*nfds)++] = got[i];
			else
				close(got[i]);
		}
	}
	if (m.msg_flags & MSG_CTRUNC)
		return -EMSGSIZE;
	return (int)r;
}

int handover_recv(int fd, char *msg, size_t len, int timeout_ms)
{
	return recv_msg(fd, msg, len, timeout_ms, NULL, NULL, 0);
}

int handover_send_fds(int fd, const int *fds, size_t n)
{
	char hdr[HANDOVER_MSG_MAX];
	snprintf(hdr, sizeof(hdr), "fds %zu", n);
	int rc = send_msg(fd, hdr, NULL, 0);
	for (size_t i = 0; !rc && i < n; i += HANDOVER_CHUNK)
		rc = send_msg(fd, "more", fds + i,
		              n - i < HANDOVER_CHUNK ? n - i : HANDOVER_CHUNK);
	return rc;
}

int handover_recv_fds(int fd, int **out, int timeout_ms, char *err,
                      size_t errlen)
{
	char msg[HANDOVER_MSG_MAX];
	int rc = recv_msg(fd, msg, sizeof(msg), timeout_ms, NULL, NULL, 0);
	unsigned long n;
	char *end;
	if (rc <= 0 || strncmp(msg, "fds ", 4) != 0 ||
	    (n = strtoul(msg + 4, &end, 10), *end) || n > 1u << 20) {
		if (rc < 0)
			snprintf(err, errlen, "hand-over: %s", strerror(-rc));
		else if (rc == 0)
			snprintf(err, errlen, "hand-over: the running gslbd closed "
			         "the control connection");
		else
			snprintf(err, errlen, "hand-over: the running gslbd answered '%s'",
			         msg);
		return rc < 0 ? rc : -EPROTO;
	}
	int *fds = xcalloc(n ? n : 1, sizeof(*fds));
	size_t got = 0;
	while (got < n) {
		size_t before = got;
		rc = recv_msg(fd, msg, sizeof(msg), timeout_ms, fds, &got, n);
		if (rc <= 0 || strcmp(msg, "more") != 0 || got == before) {
			snprintf(err, errlen, "hand-over: %s after %zu of %lu sockets",
			         rc < 0 ? strerror(-rc) : "unexpected answer", got, n);
			for (size_t i = 0; i < got; i++)
				close(fds[i]);
			free(fds);
			return rc < 0 ? rc : -EPROTO;
		}
	}
	*out = fds;
	return (int)n;
}
