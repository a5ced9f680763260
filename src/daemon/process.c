/* SPDX-License-Identifier: MIT */
/* The process: its open-file limit, privileges (server.user), detaching
 * (-d), the store lock (one daemon per store) and the pid file. */
#include "daemon/daemon_int.h"
#include "common/log.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <unistd.h>

/* Descriptors beside the TCP connections: listeners (two per address
 * and worker), the store, GeoIP, logs, probes, the statistics and API
 * servers, etcd, dnstap. */
#define NOFILE_BESIDE_TCP 512

unsigned daemon__raise_nofile(unsigned tcp_max_clients)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return tcp_max_clients;
	rlim_t need = (rlim_t)tcp_max_clients + NOFILE_BESIDE_TCP;
	if (rl.rlim_cur < need) {
		rlim_t hard = rl.rlim_max;
		rl.rlim_cur = hard == RLIM_INFINITY || hard >= need ? need : hard;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur >= need)
		return tcp_max_clients;
	/* What is left beside the others' share, half of the limit at
	 * least: a table that fits means a crowd meets the eviction of
	 * hoarders (S1-12), not accept() failing for every newcomer. */
	rlim_t fit = rl.rlim_cur > 2 * NOFILE_BESIDE_TCP
	           ? rl.rlim_cur - NOFILE_BESIDE_TCP : rl.rlim_cur / 2;
	if (fit < 1)
		fit = 1;
	log_warning("server.tcp-max-clients lowered from %u to %llu: the "
	            "open-file limit is %llu and the hard limit does not let it "
	            "rise to %llu (LimitNOFILE=, ulimit -Hn)", tcp_max_clients,
	            (unsigned long long)fit, (unsigned long long)rl.rlim_cur,
	            (unsigned long long)need);
	return (unsigned)fit;
}

int daemon__drop_privileges(const char *user)
{
	if (!user || !*user)
		return 0;
	struct passwd *pw = getpwnam(user);
	if (!pw) {
		log_err("server.user: unknown user '%s'", user);
		return -1;
	}
	if (getuid() == pw->pw_uid)
		return 0;
	if (setgroups(0, NULL) < 0 || setgid(pw->pw_gid) < 0 ||
	    setuid(pw->pw_uid) < 0) {
		log_err("server.user %s: cannot switch: %s", user, strerror(errno));
		return -1;
	}
	log_info("running as user %s", user);
	return 0;
}

/* -d: the process that was started waits, through a pipe, until the
 * detached child serves (or fails), and exits with its status, so that
 * `gslbd -d && dig ...` works and a failed start is an exit status.  The
 * child opens the weight store and its readers only after the fork:
 * LMDB's locks do not survive fork(), and a store opened before it would
 * be served without a lock on lock.mdb (the next gslbctl would then
 * reset the reader table under the daemon). */
static int g_ready_fd = -1;

int daemon__daemonize_begin(void)
{
	int p[2];
	if (pipe(p) < 0) {
		fprintf(stderr, "gslbd: pipe: %s\n", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		fprintf(stderr, "gslbd: fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid > 0) {
		close(p[1]);
		char st = 1;
		ssize_t n;
		do
			n = read(p[0], &st, 1);
		while (n < 0 && errno == EINTR);
		_exit(n == 1 ? st : 1);
	}
	close(p[0]);
	g_ready_fd = p[1];
	setsid();
	if (chdir("/") < 0)
		return -1;
	return 0;
}

/* The detached child serves: tell the waiting parent, then leave the
 * terminal (log lines for stderr go to syslog from now on). */
void daemon__daemonize_ready(void)
{
	if (g_ready_fd < 0)
		return;
	char st = 0;
	ssize_t w = write(g_ready_fd, &st, 1);
	(void)w;
	close(g_ready_fd);
	g_ready_fd = -1;
	log_use_syslog(1);
	int fd = open("/dev/null", O_RDWR);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		if (fd > STDERR_FILENO)
			close(fd);
	}
}

/* One daemon per store: an exclusive lock on DB/gslbd.lock, held for
 * the life of the process (a lock of the open file, so it goes with the
 * process however it ends), with the pid in the file for the message a
 * second daemon prints and for gslbctl. */
int g_lock_fd = -1;

/* Our pid into the lock file (at start, and after a hand-over, when the
 * lock passed to us with the old daemon's descriptor). */
void daemon__lock_write_pid(const char *dir)
{
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(g_lock_fd, 0) < 0 || pwrite(g_lock_fd, buf, (size_t)len, 0) != len)
		log_warning("database %s: cannot write the pid into %s/gslbd.lock",
		            dir, dir);
}

int daemon__lock_store(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/gslbd.lock", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0) {
		log_err("database %s: cannot open %s: %s", dir, path, strerror(errno));
		return -1;
	}
	/* gslbctl probes the lock with a shared try-lock that it drops at
	 * once (to tell whether a daemon serves the store): retry for up
	 * to a second before taking a held lock for another daemon. */
	int locked = -1;
	for (int i = 0; i < 20 && (locked = flock(fd, LOCK_EX | LOCK_NB)) < 0 &&
	                errno == EWOULDBLOCK; i++)
		usleep(50 * 1000);
	if (locked < 0) {
		char pid[32] = "";
		ssize_t n = pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = 0;
		pid[strcspn(pid, "\n")] = 0;
		log_err("database %s is already served by gslbd%s%s; stop it first",
		        dir, *pid ? " pid " : "", pid);
		close(fd);
		return -1;
	}
	g_lock_fd = fd;
	daemon__lock_write_pid(dir);
	return 0;
}

int daemon__write_pidfile(const char *path)
{
	FILE *f = fopen(path, "w");
	if (!f) {
		log_err("pidfile %s: %s", path, strerror(errno));
		return -1;
	}
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	return 0;
}

/* Whether the pid file names this process. */
int daemon__pidfile_is_ours(const char *path)
{
	char buf[32] = "";
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	int ok = fgets(buf, sizeof(buf), f) && atoi(buf) == (int)getpid();
	fclose(f);
	return ok;
}
