/* SPDX-License-Identifier: MIT */
/* The hand-over between two daemons of one store: --replace (the new
 * side), the old side's release and drain, and SIGUSR2, which starts the
 * replacement. */
#include "daemon/daemon_int.h"
#include "common/handover.h"
#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

/* Hand-over (--replace, common/handover.h) ------------------------------
 *
 * The running daemon listens on DB/gslbd.ctl.  A new one started with
 * --replace loads its configuration, zones and store, connects, and gets
 * a duplicate of every listening socket and of the store lock's file;
 * its workers read those sockets at once.  It then says "serving": the
 * old daemon closes its listeners, stops its UDP reads (what it has read
 * it answers), stops its health thread and statistics endpoint, says
 * "released", and exits once its TCP connections have gone quiet.  The
 * sockets never close in between, so a datagram or connection queued in
 * them is read by one process or the other; the lock, a lock of the open
 * file, stays held by the new process's copy when the old one exits. */

/* How long either side waits for the other's next message. */
#define HANDOVER_TIMEOUT_MS 30000

/* New side. */
static int g_ho_conn = -1;       /* to the old daemon until it released */
int *g_adopt;                    /* its sockets (slot -1: taken) */
size_t g_nadopt;
static int g_old_pid;

/* Old side. */
int g_hand_fd = -1;              /* the replacing process, while it takes over */
uv_poll_t *g_hand_poll;
int g_new_pid;
uv_timer_t g_drain_timer;
static int64_t g_drain_deadline; /* util_mono_sec() */

/* --replace: takes the sockets and the store lock of the gslbd serving
 * @dir.  Returns 0, 1 when no gslbd answers there (start as usual), or
 * -1 after logging why. */
int daemon__replace_take(const char *dir)
{
	char err[512], msg[HANDOVER_MSG_MAX];
	int fd = handover_connect(dir, err, sizeof(err));
	if (fd == -ENOENT || fd == -ECONNREFUSED) {
		log_info("--replace: no gslbd answers on %s/%s; starting as usual",
		         dir, HANDOVER_NAME);
		return 1;
	}
	if (fd < 0) {
		log_err("--replace: %s", err);
		return -1;
	}
	struct ucred cr;
	socklen_t cl = sizeof(cr);
	g_old_pid = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) == 0 ?
	            (int)cr.pid : 0;
	snprintf(msg, sizeof(msg), "replace %d", (int)getpid());
	int *fds = NULL, n = handover_send(fd, msg);
	if (n == 0)
		n = handover_recv_fds(fd, &fds, HANDOVER_TIMEOUT_MS, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "hand-over: %s", strerror(-n));
	if (n < 1) {
		log_err("--replace: gslbd pid %d: %s", g_old_pid,
		        n < 0 ? err : "no store lock handed over");
		free(fds);
		close(fd);
		return -1;
	}
	g_lock_fd = fds[0];
	g_adopt = fds;
	g_nadopt = (size_t)n;
	g_adopt[0] = -1;
	g_ho_conn = fd;
	log_info("--replace: took %d socket(s) and the store lock from gslbd pid %d",
	         n - 1, g_old_pid);
	return 0;
}

/* --replace, once our workers read the sockets: the old daemon stops
 * listening; then the store lock and the control socket are ours. */
void daemon__replace_finish(void)
{
	if (g_ho_conn < 0)
		return;
	char msg[HANDOVER_MSG_MAX] = "";
	/* Under systemd (a replacement started by SIGUSR2 from inside the
	 * unit) the service's main process is this one from now on. */
	sd_notifyf(0, "MAINPID=%d", (int)getpid());
	int rc = handover_send(g_ho_conn, "serving");
	if (!rc)
		rc = handover_recv(g_ho_conn, msg, sizeof(msg), HANDOVER_TIMEOUT_MS);
	if (rc > 0 && strcmp(msg, "released") == 0)
		log_info("--replace: gslbd pid %d stopped listening; it finishes the "
		         "queries in flight and exits", g_old_pid);
	else
		log_warning("--replace: gslbd pid %d did not confirm that it stopped "
		            "listening (%s)", g_old_pid,
		            rc < 0 ? strerror(-rc) : rc == 0 ? "it went away" : msg);
	close(g_ho_conn);
	g_ho_conn = -1;
	daemon__lock_write_pid(g_conf->db_path);
}

static void hand_closed(uv_handle_t *h)
{
	free(h);
}

/* Old side: drops the connection of a replacing process. */
void daemon__hand_drop(void)
{
	if (g_hand_poll) {
		uv_close((uv_handle_t *)g_hand_poll, hand_closed);
		g_hand_poll = NULL;
	}
	if (g_hand_fd >= 0)
		close(g_hand_fd);
	g_hand_fd = -1;
}

/* Old side, every 100 ms once handed over: the first tick (after the
 * statistics endpoint's sockets closed) says "released"; the daemon
 * stops when its connections are gone, at the latest after
 * server.tcp-idle-timeout. */
static void on_drain(uv_timer_t *t)
{
	if (g_hand_fd >= 0) {
		int rc = handover_send(g_hand_fd, "released");
		if (rc)
			log_warning("hand-over: cannot tell gslbd pid %d: %s", g_new_pid,
			            strerror(-rc));
		daemon__hand_drop();
	}
	int done = workers_drained(g_workers, g_nworkers);
	if (done || util_mono_sec() >= g_drain_deadline) {
		log_info("hand-over: %s; exiting in favour of gslbd pid %d",
		         done ? "every connection finished" :
		         "closing the connections still open", g_new_pid);
		uv_timer_stop(t);
		uv_stop(t->loop);
	}
}

/* Old side: the replacing process said "serving". */
static void hand_over(uv_loop_t *loop)
{
	log_info("hand-over: gslbd pid %d serves; stopping listening and "
	         "finishing the queries in flight", g_new_pid);
	g_draining = 1;
	workers_release(g_workers, g_nworkers);
	stats_stop(g_stats);
	g_stats = NULL;
	api_stop(g_api);
	g_api = NULL;
	health_stop(g_health);
	g_health = NULL;
	daemon__ctl_stop();
	g_ctl_owned = 0;
	uv_poll_stop(g_hand_poll);
	unsigned idle = g_conf->tcp_idle_timeout;
	g_drain_deadline = util_mono_sec() + (idle > 2 ? idle : 2);
	uv_timer_init(loop, &g_drain_timer);
	uv_timer_start(&g_drain_timer, on_drain, 0, 100);
}

void daemon__on_hand(uv_poll_t *p, int status, int events)
{
	char msg[HANDOVER_MSG_MAX];
	int rc = handover_recv(g_hand_fd, msg, sizeof(msg), 0);
	if (rc > 0 && strcmp(msg, "serving") == 0) {
		hand_over(p->loop);
		return;
	}
	log_warning("hand-over: gslbd pid %d %s before serving; serving on",
	            g_new_pid, rc > 0 ? "sent something else" : "went away");
	daemon__hand_drop();
}

/* SIGUSR2: the daemon starts its own replacement, the binary now at
 * the path it was started from with the same command line and
 * --replace.  As its child the new process stays in the systemd unit,
 * inherits NOTIFY_SOCKET and tells systemd its pid (MAINPID, with
 * NotifyAccess=all); the watchdog variable is made its own. */
char **g_argv;
int g_argc;
char g_exe[4096];                   /* readlink /proc/self/exe at start */
uv_process_t *g_child;

void daemon__child_closed(uv_handle_t *h)
{
	free(h);
}

static void on_child_exit(uv_process_t *p, int64_t status, int sig)
{
	if (status || sig)
		log_warning("replace: the new gslbd pid %d exited with status %lld%s%s; "
		            "serving on", p->pid, (long long)status,
		            sig ? ", signal " : "", sig ? strsignal(sig) : "");
	uv_close((uv_handle_t *)p, daemon__child_closed);
	if (g_child == p)
		g_child = NULL;
}

void daemon__replace_self(uv_loop_t *loop)
{
	if (g_draining || g_child || g_hand_fd >= 0) {
		log_warning("replace: a hand-over is already in progress");
		return;
	}
	char **args = xcalloc((size_t)g_argc + 4, sizeof(*args));
	int n = 0, have = 0;
	for (int i = 0; i < g_argc; i++) {
		have |= strcmp(g_argv[i], "--replace") == 0;
		args[n++] = g_argv[i];
	}
	if (!have)
		args[n++] = "--replace";
	/* The configuration by its absolute path: -d changed directory. */
	args[n++] = "-c";
	args[n++] = (char *)g_opts->conf_path;
	/* The environment, with WATCHDOG_PID naming the child (sd_watchdog_
	 * enabled() ignores a watchdog meant for another pid). */
	extern char **environ;
	size_t ne = 0;
	while (environ[ne])
		ne++;
	char **env = xcalloc(ne + 1, sizeof(*env));
	char wpid[64] = "";
	for (size_t i = 0; i < ne; i++)
		env[i] = strncmp(environ[i], "WATCHDOG_PID=", 13) == 0 ? wpid : environ[i];
	uv_stdio_container_t io[3];
	for (int i = 0; i < 3; i++)
		io[i] = (uv_stdio_container_t){ .flags = UV_INHERIT_FD, .data.fd = i };
	uv_process_options_t po = { .exit_cb = on_child_exit, .file = g_exe,
	                            .args = args, .env = env, .stdio_count = 3,
	                            .stdio = io };
	/* The child's pid is only known after the fork: it sets
	 * WATCHDOG_PID itself (see daemon_main()) when told so by this variable. */
	snprintf(wpid, sizeof(wpid), "WATCHDOG_PID=self");
	g_child = xcalloc(1, sizeof(*g_child));
	int rc = uv_spawn(loop, g_child, &po);
	if (rc) {
		log_err("replace: cannot start %s: %s", g_exe, uv_strerror(rc));
		free(g_child);
		g_child = NULL;
	} else {
		log_info("replace: started gslbd pid %d to take over", g_child->pid);
	}
	free(args);
	free(env);
}
