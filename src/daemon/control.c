/* SPDX-License-Identifier: MIT */
/* The control socket (DB/gslbd.ctl): where a replacing process asks for
 * the sockets and the store lock (replace.c). */
#include "daemon/daemon_int.h"
#include "common/handover.h"
#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int g_ctl_fd = -1;        /* listening control socket */
int g_ctl_owned;                 /* DB/gslbd.ctl is ours: unlink at exit */
static uv_poll_t g_ctl_poll;

void daemon__ctl_stop(void)
{
	if (g_ctl_fd < 0)
		return;
	uv_poll_stop(&g_ctl_poll);
	uv_close((uv_handle_t *)&g_ctl_poll, NULL);
	close(g_ctl_fd);
	g_ctl_fd = -1;
}

/* Old side: a process connects to the control socket. */
static void on_ctl(uv_poll_t *p, int status, int events)
{
	char err[256], msg[HANDOVER_MSG_MAX];
	int fd = handover_accept(g_ctl_fd, err, sizeof(err));
	if (fd < 0) {
		if (errno != EAGAIN)
			log_warning("%s", err);
		return;
	}
	int rc = handover_recv(fd, msg, sizeof(msg), 2000);
	if (rc <= 0 || strncmp(msg, "replace ", 8) != 0) {
		log_warning("control socket: no valid request from the peer");
		close(fd);
		return;
	}
	if (g_hand_fd >= 0) {
		snprintf(msg, sizeof(msg), "busy: gslbd pid %d takes over", g_new_pid);
		handover_send(fd, msg);
		close(fd);
		return;
	}
	g_new_pid = atoi(msg + 8);
	size_t n = 1 + workers_fds(g_workers, g_nworkers, NULL, 0);
	int *fds = xcalloc(n, sizeof(*fds));
	fds[0] = g_lock_fd;
	workers_fds(g_workers, g_nworkers, fds + 1, n - 1);
	rc = handover_send_fds(fd, fds, n);
	free(fds);
	if (rc) {
		log_warning("hand-over to gslbd pid %d: %s", g_new_pid, strerror(-rc));
		close(fd);
		return;
	}
	g_hand_fd = fd;
	g_hand_poll = xcalloc(1, sizeof(*g_hand_poll));
	uv_poll_init(p->loop, g_hand_poll, fd);
	uv_poll_start(g_hand_poll, UV_READABLE | UV_DISCONNECT, daemon__on_hand);
	log_info("hand-over: gslbd pid %d took %zu socket(s); serving until it does",
	         g_new_pid, n - 1);
}

/* Listens on DB/gslbd.ctl for a replacing process. */
void daemon__ctl_start(uv_loop_t *loop)
{
	char err[512];
	g_ctl_fd = handover_listen(g_conf->db_path, err, sizeof(err));
	if (g_ctl_fd < 0) {
		log_warning("%s; gslbd --replace cannot take over from this process",
		            err);
		return;
	}
	g_ctl_owned = 1;
	uv_poll_init(loop, &g_ctl_poll, g_ctl_fd);
	uv_poll_start(&g_ctl_poll, UV_READABLE, on_ctl);
}
