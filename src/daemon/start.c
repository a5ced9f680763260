/* SPDX-License-Identifier: MIT */
/* gslbd: start-up, threads, signals and reload orchestration. */
#include "config.h"
#include "daemon/daemon.h"
#include "cluster/cluster.h"
#include "common/conf.h"
#include "common/handover.h"
#include "health/health.h"
#include "probe/probe.h"
#include "gslb/geo.h"
#include "common/log.h"
#include "common/net.h"
#include "dns/dnstap.h"
#include "dns/rrl.h"
#include "dns/snapshot.h"
#include "common/util.h"
#include "store/weightdb.h"
#include "dns/tally.h"
#include "dns/worker.h"
#include "stats/metrics.h"
#include "stats/stats.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

static conf_t *g_conf;
static worker_t *g_workers;
static weightdb_t *g_db;
static health_t *g_health;
static uint32_t g_history_keep;   /* health.history-keep, seconds */
static uint32_t g_input_keep;     /* steer.input-keep, seconds (0: all) */
static uint32_t g_spend_keep;     /* steer.spend-keep, seconds (0: all) */
static int g_trim_due = 1;        /* trim at the next second (main loop) */
static unsigned g_nworkers;
static const daemon_opts_t *g_opts;
static stats_t *g_stats;
static cluster_t *g_cluster;  /* NULL: standalone */
static dnstap_t *g_dnstap;          /* NULL: dnstap off */
static dnstap_conf_t g_dnstap_conf; /* as applied at start */
static int64_t g_started;
static int g_draining;              /* handed over (--replace): finishing */

/* Reads the geoip section (database, maps, nets file) once to prove it is
 * valid; the error is "FILE:LINE: reason". */
static int check_geoip(const conf_t *c, char *err, size_t errlen)
{
	geo_allow_compile(0); /* --check exits after; no table to build */
	geo_t *g = geo_open(c, err, errlen);
	if (!g)
		return -1;
	geo_close(g);
	return 0;
}

static conf_t *load_conf(const daemon_opts_t *o, char *err, size_t errlen)
{
	conf_t *c = conf_load(o->conf_path, err, errlen);
	if (!c)
		return NULL;
	if (o->nlisten &&
	    conf_override_listen(c, o->listen, o->nlisten, err, errlen)) {
		conf_free(c);
		return NULL;
	}
	if (o->workers)
		c->workers = o->workers;
	return c;
}

static int do_check(const daemon_opts_t *o)
{
	char err[4096];
	conf_t *c = load_conf(o, err, sizeof(err));
	if (!c) {
		fprintf(stderr, "gslbd: %s\n", err);
		return 1;
	}
	int bad = 0;
	for (size_t i = 0; i < c->nzones; i++) {
		zone_t *z = zone_load(c->zones[i].dname, c->zones[i].file, err,
		                      sizeof(err));
		if (!z) {
			fprintf(stderr, "gslbd: zone %s: %s\n", c->zones[i].name, err);
			bad = 1;
			continue;
		}
		printf("zone %s: serial %u, %zu names: ok\n", c->zones[i].name,
		       z->serial, z->nnodes);
		zone_free(z);
	}
	health_conf_t hc;
	if (health_conf_load(c, &hc, err, sizeof(err))) {
		fprintf(stderr, "gslbd: %s\n", err);
		bad = 1;
	}
	if (check_geoip(c, err, sizeof(err))) {
		fprintf(stderr, "gslbd: %s\n", err);
		bad = 1;
	}
	if (conf_check_host(c, err, sizeof(err))) {
		fprintf(stderr, "gslbd: %s\n", err);
		bad = 1;
	}
	stats_conf_t sc;
	if (stats_conf_load(c, &sc, err, sizeof(err))) {
		fprintf(stderr, "gslbd: %s\n", err);
		bad = 1;
	}
	rrl_t *rl;
	if (rrl_load(c, 1, 0, &rl, err, sizeof(err))) {
		fprintf(stderr, "gslbd: %s\n", err);
		bad = 1;
	}
	dnstap_conf_t dc;
	if (dnstap_conf_load(c, &dc, err, sizeof(err))) {
		fprintf(stderr, "gslbd: %s\n", err);
		bad = 1;
	} else {
		dnstap_conf_clear(&dc);
	}
	cluster_conf_t cc;
	if (cluster_conf_load(c, &cc, err, sizeof(err))) {
		fprintf(stderr, "gslbd: %s\n", err);
		bad = 1;
	} else {
		cluster_conf_free(&cc);
	}
	if (!bad)
		printf("%s: ok\n", c->path);
	conf_free(c);
	return bad;
}

/* The rrl section for the running UDP threads: one table each, the rate
 * shared by the workers' threads of one listen address. */
static int load_rrl(const conf_t *c, rrl_t **out, char *err, size_t errlen)
{
	return rrl_load(c, g_nworkers, g_nworkers * (unsigned)g_workers[0].nlisten,
	                out, err, errlen);
}

/* The keys a reload cannot apply, because what they configure is made
 * once at start: the sockets and the threads serving them, the user, the
 * open store, the statistics endpoint, dnstap's connection and the
 * cluster's etcd client.  A section name covers all its keys.  Everything
 * else applies on SIGHUP: server identity, version, udp-max-payload,
 * max-cname-chain and log-level, zones, geoip, log, rrl,
 * database.audit-keep, and the health, cutover and steer sections
 * (handed to the health thread). */
static const char *const restart_keys[] = {
	"server.listen", "server.workers", "server.user",
	"server.tcp-idle-timeout", "server.tcp-max-clients",
	"database.path", "database.map-size", "stats", "dnstap", "cluster", NULL
};

static int needs_restart(const char *path)
{
	for (int i = 0; restart_keys[i]; i++) {
		size_t n = strlen(restart_keys[i]);
		if (strncmp(path, restart_keys[i], n) == 0 &&
		    (path[n] == 0 || path[n] == '.'))
			return 1;
	}
	return 0;
}

typedef struct {
	unsigned restart;   /* changed keys that wait for a restart */
	int dnstap;         /* one of them in the dnstap section */
} reload_count_t;

/* Names one changed key of a reload, and counts it in @arg (a
 * reload_count_t) when it waits for a restart. */
static void reload_key(const char *path, const char *old, const char *new,
                       void *arg)
{
	reload_count_t *rc = arg;
	if (!needs_restart(path)) {
		log_info("reload: %s: %s -> %s", path, old ? old : "(default)",
		         new ? new : "(default)");
		return;
	}
	rc->restart++;
	rc->dnstap |= strncmp(path, "dnstap", 6) == 0;
	log_warning("reload: %s changed (%s -> %s): needs a restart; keeping "
	            "the old value", path, old ? old : "(default)",
	            new ? new : "(default)");
}

/* The retention settings of the health and steer sections (trim_store()). */
static void keep_set(const health_conf_t *hc)
{
	g_history_keep = (uint32_t)hc->history_keep;
	g_input_keep = (uint32_t)hc->steer.input_keep;
	g_spend_keep = (uint32_t)hc->steer.spend_keep;
}

/* SIGHUP: re-read the zone files and the configuration; every changed
 * key is applied or named as needing a restart.  Zones that fail keep
 * their previous version. */
static void reload_run(void)
{
	char err[1024];
	log_info("reload: reading %s", g_opts->conf_path);
	conf_t *c = load_conf(g_opts, err, sizeof(err));
	if (!c) {
		log_err("reload failed, keeping the running configuration: %s", err);
		return;
	}
	rrl_t *rl;
	if (load_rrl(c, &rl, err, sizeof(err))) {
		log_err("reload failed, keeping the running configuration: %s", err);
		conf_free(c);
		return;
	}
	/* Sections only a restart applies are checked all the same, so that
	 * the next start does not fail on what this reload accepted. */
	dnstap_conf_t dc;
	stats_conf_t sc;
	health_conf_t hc;
	if (dnstap_conf_load(c, &dc, err, sizeof(err))) {
		log_err("reload failed, keeping the running configuration: %s", err);
		rrl_free(rl);
		conf_free(c);
		return;
	}
	if (stats_conf_load(c, &sc, err, sizeof(err)) ||
	    health_conf_load(c, &hc, err, sizeof(err))) {
		log_err("reload failed, keeping the running configuration: %s", err);
		dnstap_conf_clear(&dc);
		rrl_free(rl);
		conf_free(c);
		return;
	}
	unsigned failed = 0;
	const snapshot_t *old = snapshot_get();
	snapshot_t *s = snapshot_build(c, old, &failed, err, sizeof(err));
	if (!s) {
		log_err("reload failed: %s", err);
		dnstap_conf_clear(&dc);
		rrl_free(rl);
		conf_free(c);
		return;
	}
	snapshot_publish(s);
	rrl_publish(rl);
	/* The log level first, so that the lines naming the changes follow
	 * the new one. */
	log_configure(c->log, c->nlog);
	if (g_opts->verbose)
		log_set_level(GSLB_LOG_DEBUG);
	reload_count_t cnt = { 0, 0 };
	conf_diff(g_conf, c, reload_key, &cnt);
	/* dnstap's identity and version default to server.identity and
	 * server.version, which apply to queries at once but reach the
	 * dnstap writer only at a restart. */
	if (!cnt.dnstap && !dnstap_conf_equal(&dc, &g_dnstap_conf)) {
		cnt.restart++;
		log_warning("reload: the dnstap identity or version (from "
		            "server.identity or server.version) needs a restart; "
		            "keeping the old value");
	}
	dnstap_conf_clear(&dc);
	conf_keep_restart(c, g_conf);
	conf_free(g_conf);
	g_conf = c;
	g_trim_due = 1;   /* a keep setting may have changed */
	if (g_health)
		health_reconfigure(g_health, &hc);
	keep_set(&hc);
	if (failed)
		log_warning("reload: %u zone(s) kept their previous version", failed);
	else if (cnt.restart)
		log_info("reload: done; %u change(s) named above need a restart",
		         cnt.restart);
	else
		log_info("reload: done");
}

/* Tells systemd (Type=notify) what the daemon is doing; without
 * NOTIFY_SOCKET in the environment sd_notify() does nothing. */
static void notify_reloading(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	sd_notifyf(0, "RELOADING=1\nSTATUS=reloading\nMONOTONIC_USEC=%llu",
	           (unsigned long long)ts.tv_sec * 1000000ull +
	           (unsigned long long)ts.tv_nsec / 1000);
}

static void notify_ready(const char *what)
{
	sd_notifyf(0, "READY=1\nSTATUS=%s: %zu zone(s) on %zu address(es), %u worker(s)",
	           what, g_conf->nzones, g_conf->nlisten, g_nworkers);
}

static void reload(void)
{
	notify_reloading();
	reload_run();
	notify_ready("serving");
}

/* Retention: audit records older than database.audit-keep (S3-7),
 * score history older than health.history-keep (S2-10), pushed steering
 * inputs not pushed again for steer.input-keep and spend records of
 * budget periods that ended steer.spend-keep ago (S3-6) leave the store
 * every TRIM_EVERY seconds and right after a reload, in a write
 * transaction of their own (so that a full store, whose other writes
 * fail, can still make room), at most TRIM_BATCH records at a time: a
 * backlog (after lowering a keep setting) goes a batch a second, never
 * in one long transaction that would hold back the health thread's
 * writes.  With nothing to delete nothing is committed. */
#define TRIM_EVERY 10
#define TRIM_BATCH 20000
static void trim_store(void)
{
	static uint32_t last;
	uint32_t now = (uint32_t)time(NULL);
	if (!g_trim_due && now - last < TRIM_EVERY)
		return;
	last = now;
	uint32_t keep = g_conf->db_audit_keep;
	wdb_trim_t w = {
		.audit_before = keep && keep < now ? now - keep : 0,
		.history_before = g_history_keep < now ? now - g_history_keep : 0,
		.inputs_before = g_input_keep && g_input_keep < now ? now - g_input_keep : 0,
		.spend_before = g_spend_keep && g_spend_keep < now ? now - g_spend_keep : 0,
		.now = now,
	};
	int n = weightdb_trim(g_db, &w, TRIM_BATCH);
	g_trim_due = n == TRIM_BATCH;
	if (n < 0 && n != GSLB_ENOSPC)
		log_warning("database: cannot trim: %s", wdb_strerror(n));
}

/* Room for health decisions (S0-8, S4-4: a demotion must reach the
 * answers in its normal time whatever the audit log holds): checked
 * every second, the trim past the high-water mark goes oldest first
 * (weightdb_make_room()), a batch a second like the retention. */
static void make_room(void)
{
	wdb_room_t r;
	int n = weightdb_make_room(g_db, TRIM_BATCH, 0, &r);
	char msg[512];
	if (n > 0)
		log_warning("database %s: %s", g_conf->db_path,
		            wdb_room_msg(&r, msg, sizeof(msg)));
	else if (n < 0 && n != GSLB_ENOSPC)
		log_warning("database: cannot make room: %s", wdb_strerror(n));
}

/* The health thread commits without fsync; the disk catches up here,
 * off its loop, once a second. */
static void on_sync(uv_timer_t *t)
{
	trim_store();
	make_room();
	if (weightdb_sync(g_db))
		log_warning("database: cannot flush to disk");
}

/* Whether the health thread runs (1), or why not (0). */
static int health_alive_why(int64_t max_age, char *why, size_t whylen)
{
	if (!g_health || health_alive(g_health, max_age))
		return 1;
	snprintf(why, whylen, "the health thread has not run for over %lld s",
	         (long long)max_age);
	return 0;
}

/* The watchdog (WatchdogSec= in the unit): WATCHDOG=1 at half the
 * interval systemd gave, only while every worker loop, UDP thread and the
 * health thread has run within that half interval (each runs at least
 * once a second even when idle).  A stuck thread makes systemd restart the daemon. */
static uint64_t g_watchdog_usec;

static void on_watchdog(uv_timer_t *t)
{
	static int complained;
	char what[128];
	if (g_draining)   /* its UDP threads have stopped on purpose */
		return;
	int64_t max_age = (int64_t)(g_watchdog_usec / 2000000);
	if (max_age < 2)
		max_age = 2;
	if (workers_alive(g_workers, g_nworkers, max_age, what, sizeof(what)) ||
	    !health_alive_why(max_age, what, sizeof(what))) {
		if (!complained++)
			log_err("watchdog: %s; not telling systemd that gslbd is alive", what);
		return;
	}
	complained = 0;
	sd_notify(0, "WATCHDOG=1");
}

static void replace_self(uv_loop_t *loop);

static void on_signal(uv_signal_t *h, int signum)
{
	if (signum == SIGUSR2) {
		replace_self(h->loop);
		return;
	}
	if (signum == SIGHUP) {
		if (g_draining)
			log_info("reload: ignored, this process has handed over");
		else
			reload();
		return;
	}
	log_info("signal %d: shutting down", signum);
	uv_stop(h->loop);
}

static int drop_privileges(const char *user)
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

static int daemonize_begin(void)
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
static void daemonize_ready(void)
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
static int g_lock_fd = -1;

/* Our pid into the lock file (at start, and after a hand-over, when the
 * lock passed to us with the old daemon's descriptor). */
static void lock_write_pid(const char *dir)
{
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	if (ftruncate(g_lock_fd, 0) < 0 || pwrite(g_lock_fd, buf, (size_t)len, 0) != len)
		log_warning("database %s: cannot write the pid into %s/gslbd.lock",
		            dir, dir);
}

static int lock_store(const char *dir)
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
	lock_write_pid(dir);
	return 0;
}

/* How many sockets of @type for @l are among the @n handed over. */
static unsigned count_adopted(const int *fds, size_t n, const conf_listen_t *l,
                              int type)
{
	if (!n)
		return 0;
	int tmp[n];
	memcpy(tmp, fds, n * sizeof(*fds));
	unsigned k = 0;
	while (net_adopt(tmp, n, l, type) >= 0)
		k++;
	return k;
}

/* Refuses addresses that another process serves: with SO_REUSEPORT a
 * second server would silently take part of the traffic.  Addresses whose
 * sockets were handed over (@adopt) are ours. */
static int check_listen_free(const conf_t *c, const int *adopt, size_t nadopt)
{
	int bad = 0;
	for (size_t i = 0; i < c->nlisten; i++) {
		char who[128];
		if (count_adopted(adopt, nadopt, &c->listen[i], SOCK_DGRAM))
			continue;
		if (net_in_use(&c->listen[i], SOCK_DGRAM, who, sizeof(who)) ||
		    net_in_use(&c->listen[i], SOCK_STREAM, who, sizeof(who))) {
			log_err("listen %s is already served by %s; stop it first",
			        c->listen[i].text, who);
			bad = 1;
		}
	}
	return bad ? -1 : 0;
}

static int write_pidfile(const char *path)
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
static int *g_adopt;             /* its sockets (slot -1: taken) */
static size_t g_nadopt;
static int g_old_pid;

/* Old side. */
static int g_ctl_fd = -1;        /* listening control socket */
static int g_ctl_owned;          /* DB/gslbd.ctl is ours: unlink at exit */
static uv_poll_t g_ctl_poll;
static int g_hand_fd = -1;       /* the replacing process, while it takes over */
static uv_poll_t *g_hand_poll;
static int g_new_pid;
static uv_timer_t g_drain_timer;
static int64_t g_drain_deadline; /* util_mono_sec() */

/* --replace: takes the sockets and the store lock of the gslbd serving
 * @dir.  Returns 0, 1 when no gslbd answers there (start as usual), or
 * -1 after logging why. */
static int replace_take(const char *dir)
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
static void replace_finish(void)
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
	lock_write_pid(g_conf->db_path);
}

static void hand_closed(uv_handle_t *h)
{
	free(h);
}

/* Old side: drops the connection of a replacing process. */
static void hand_drop(void)
{
	if (g_hand_poll) {
		uv_close((uv_handle_t *)g_hand_poll, hand_closed);
		g_hand_poll = NULL;
	}
	if (g_hand_fd >= 0)
		close(g_hand_fd);
	g_hand_fd = -1;
}

static void ctl_stop(void)
{
	if (g_ctl_fd < 0)
		return;
	uv_poll_stop(&g_ctl_poll);
	uv_close((uv_handle_t *)&g_ctl_poll, NULL);
	close(g_ctl_fd);
	g_ctl_fd = -1;
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
		hand_drop();
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
	health_stop(g_health);
	g_health = NULL;
	ctl_stop();
	g_ctl_owned = 0;
	uv_poll_stop(g_hand_poll);
	unsigned idle = g_conf->tcp_idle_timeout;
	g_drain_deadline = util_mono_sec() + (idle > 2 ? idle : 2);
	uv_timer_init(loop, &g_drain_timer);
	uv_timer_start(&g_drain_timer, on_drain, 0, 100);
}

static void on_hand(uv_poll_t *p, int status, int events)
{
	char msg[HANDOVER_MSG_MAX];
	int rc = handover_recv(g_hand_fd, msg, sizeof(msg), 0);
	if (rc > 0 && strcmp(msg, "serving") == 0) {
		hand_over(p->loop);
		return;
	}
	log_warning("hand-over: gslbd pid %d %s before serving; serving on",
	            g_new_pid, rc > 0 ? "sent something else" : "went away");
	hand_drop();
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
	uv_poll_start(g_hand_poll, UV_READABLE | UV_DISCONNECT, on_hand);
	log_info("hand-over: gslbd pid %d took %zu socket(s); serving until it does",
	         g_new_pid, n - 1);
}

/* SIGUSR2: the daemon starts its own replacement, the binary now at
 * the path it was started from with the same command line and
 * --replace.  As its child the new process stays in the systemd unit,
 * inherits NOTIFY_SOCKET and tells systemd its pid (MAINPID, with
 * NotifyAccess=all); the watchdog variable is made its own. */
static char **g_argv;
static int g_argc;
static char g_exe[4096];            /* readlink /proc/self/exe at start */
static uv_process_t *g_child;

static void child_closed(uv_handle_t *h)
{
	free(h);
}

static void on_child_exit(uv_process_t *p, int64_t status, int sig)
{
	if (status || sig)
		log_warning("replace: the new gslbd pid %d exited with status %lld%s%s; "
		            "serving on", p->pid, (long long)status,
		            sig ? ", signal " : "", sig ? strsignal(sig) : "");
	uv_close((uv_handle_t *)p, child_closed);
	if (g_child == p)
		g_child = NULL;
}

static void replace_self(uv_loop_t *loop)
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
	 * WATCHDOG_PID itself (see main()) when told so by this variable. */
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

/* Listens on DB/gslbd.ctl for a replacing process. */
static void ctl_start(uv_loop_t *loop)
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

/* Whether the pid file names this process. */
static int pidfile_is_ours(const char *path)
{
	char buf[32] = "";
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	int ok = fgets(buf, sizeof(buf), f) && atoi(buf) == (int)getpid();
	fclose(f);
	return ok;
}

/* Opens the store, publishes the first snapshot and creates the workers
 * (their sockets bound), then drops privileges and detaches.  Returns 0
 * or -1 after logging why. */
static int start_server(const daemon_opts_t *o)
{
	char err[1024];
	g_conf = load_conf(o, err, sizeof(err));
	if (!g_conf) {
		fprintf(stderr, "gslbd: %s\n", err);
		return -1;
	}
	log_configure(g_conf->log, g_conf->nlog);
	if (o->verbose)
		log_set_level(GSLB_LOG_DEBUG);
	if (conf_check_host(g_conf, err, sizeof(err))) {
		fprintf(stderr, "gslbd: %s\n", err);
		return -1;
	}
	if (o->daemonize && daemonize_begin())
		return -1;
	/* The weight store is created on first start (schema in
	 * weightdb.h); gslbctl may create it too. */
	wdb_options_t dbo = { .map_size = g_conf->db_map_size, .log_full = 1 };
	g_db = weightdb_open_opts(g_conf->db_path, &dbo, err, sizeof(err));
	if (!g_db) {
		log_err("%s", err);
		return -1;
	}
	weightdb_set_nosync(g_db);
	/* --replace loads everything before it takes the sockets over, so
	 * that a configuration or zone that cannot start leaves the running
	 * daemon alone. */
	int take = 1;
	if (!o->replace && lock_store(g_conf->db_path))
		return -1;
	unsigned failed;
	snapshot_t *s = snapshot_build(g_conf, NULL, &failed, err, sizeof(err));
	if (!s) {
		log_err("cannot start: %s", err);
		return -1;
	}
	snapshot_publish(s);
	if (o->replace && ((take = replace_take(g_conf->db_path)) < 0 ||
	                   (take == 1 && lock_store(g_conf->db_path))))
		return -1;
	if (check_listen_free(g_conf, g_adopt, g_nadopt))
		return -1;

	g_nworkers = g_conf->workers;
	if (!g_nworkers) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		g_nworkers = n > 0 ? (unsigned)n : 1;
	}
	/* Every socket handed over is served: closing one would drop what
	 * is queued in it.  More of them than workers means more workers
	 * until the next plain start. */
	unsigned configured = g_nworkers;
	for (size_t i = 0; i < g_conf->nlisten; i++) {
		unsigned k = count_adopted(g_adopt, g_nadopt, &g_conf->listen[i],
		                           SOCK_DGRAM);
		if (k > g_nworkers)
			g_nworkers = k;
	}
	if (g_nworkers != configured)
		log_notice("--replace: %u workers, one for each socket handed over "
		           "(%u configured, from the next plain start)",
		           g_nworkers, configured);
	g_workers = workers_create(g_conf, g_nworkers, g_db, g_adopt, g_nadopt,
	                           err, sizeof(err));
	if (!g_workers) {
		log_err("%s", err);
		return -1;
	}
	size_t dropped = 0;
	for (size_t i = 0; i < g_nadopt; i++)
		if (g_adopt[i] >= 0) {
			close(g_adopt[i]);
			dropped++;
		}
	if (dropped)
		log_notice("--replace: closed %zu socket(s) of addresses no longer "
		           "in the configuration", dropped);
	free(g_adopt);
	g_adopt = NULL;
	g_nadopt = 0;
	rrl_t *rl;
	if (load_rrl(g_conf, &rl, err, sizeof(err))) {
		log_err("%s", err);
		return -1;
	}
	rrl_publish(rl);
	/* After the fork of -d (the I/O thread must be the child's) and
	 * before the workers start (each takes its queue). */
	if (dnstap_conf_load(g_conf, &g_dnstap_conf, err, sizeof(err))) {
		log_err("%s", err);
		return -1;
	}
	if (g_dnstap_conf.socket) {
		g_dnstap = dnstap_new(&g_dnstap_conf,
		                      workers_dnstap_queues(g_nworkers,
		                                            g_workers[0].nlisten),
		                      err, sizeof(err));
		if (!g_dnstap) {
			log_err("%s", err);
			return -1;
		}
		workers_set_dnstap(g_workers, g_nworkers, g_dnstap);
		log_info("dnstap: logging %s%s%s to %s",
		         g_dnstap_conf.queries ? "queries" : "",
		         g_dnstap_conf.queries && g_dnstap_conf.responses ? " and " : "",
		         g_dnstap_conf.responses ? "responses" : "",
		         g_dnstap_conf.socket);
	}
	if (drop_privileges(g_conf->user))
		return -1;
	if (o->pidfile && write_pidfile(o->pidfile))
		return -1;
	return 0;
}

/* The workers' counters, logged once at exit. */
static void log_counters(void)
{
	log_info("answered %llu queries (%llu NXDOMAIN, %llu REFUSED, "
	         "%llu FORMERR, %llu truncated, %llu dropped; rate limiting "
	         "dropped %llu and slipped %llu; dnstap wrote %llu messages "
	         "and dropped %llu)",
	         (unsigned long long)workers_stat(g_workers, g_nworkers, STAT_QUERIES),
	         (unsigned long long)workers_stat(g_workers, g_nworkers, STAT_NXDOMAIN),
	         (unsigned long long)workers_stat(g_workers, g_nworkers, STAT_REFUSED),
	         (unsigned long long)workers_stat(g_workers, g_nworkers, STAT_FORMERR),
	         (unsigned long long)workers_stat(g_workers, g_nworkers, STAT_TRUNCATED),
	         (unsigned long long)workers_stat(g_workers, g_nworkers, STAT_DROPPED),
	         (unsigned long long)workers_stat(g_workers, g_nworkers, STAT_RRL_DROPPED),
	         (unsigned long long)workers_stat(g_workers, g_nworkers, STAT_RRL_SLIPPED),
	         (unsigned long long)workers_stat(g_workers, g_nworkers, STAT_DNSTAP_MESSAGES),
	         (unsigned long long)workers_stat(g_workers, g_nworkers, STAT_DNSTAP_DROPPED));
}

/* The statistics endpoint's view of the daemon ------------------------- */

/* The threads that must run for the daemon to be healthy: a loop or UDP
 * thread silent for this long is stuck (each runs once a second). */
#define ALIVE_MAX_AGE 5

static int healthy(char *why, size_t whylen, void *arg)
{
	return workers_alive(g_workers, g_nworkers, ALIVE_MAX_AGE, why, whylen) == 0 &&
	       health_alive_why(ALIVE_MAX_AGE, why, whylen);
}

/* Sums the threads' GSLB answer tallies into @arg (a JSON object keyed
 * by the labels): scrape time only, so allocation is fine. */
static void sum_tally_entry(const tally_entry_t *t, uint64_t count, void *arg)
{
	char key[512];
	snprintf(key, sizeof(key), "%s\n%u\n%s\n%s\n%s", t->service, t->level,
	         t->region, t->isp, t->node);
	json_t *o = arg, *v = json_object_get(o, key);
	json_object_set_new(o, key, json_integer(
		(json_int_t)(count + (uint64_t)json_integer_value(v))));
}

static void sum_tally(const struct tally *t, void *arg)
{
	json_t **acc = arg;
	tally_each(t, sum_tally_entry, acc[0]);
	json_integer_set(acc[1], json_integer_value(acc[1]) +
	                 (json_int_t)tally_overflow(t));
}

static void metrics(expo_t *e, void *arg)
{
	stats_sample_t s;
	memset(&s, 0, sizeof(s));
	s.version = PACKAGE_VERSION;
	s.started = g_started;
	s.workers = g_nworkers;
	for (int st = 0; st < STAT_MAX; st++) {
		s.counters[STATS_UDP][st] = workers_stat_udp(g_workers, g_nworkers, st);
		s.counters[STATS_TCP][st] = workers_stat(g_workers, g_nworkers, st) -
		                            s.counters[STATS_UDP][st];
	}
	/* The main thread publishes snapshots, so it reads the current one
	 * without RCU: nobody else frees it. */
	const snapshot_t *snap = snapshot_get();
	stats_zone_t zs[snap->nzones ? snap->nzones : 1];
	for (size_t i = 0; i < snap->nzones; i++) {
		const zone_t *z = snap->zones[i];
		zs[s.nzones++] = (stats_zone_t){ g_conf->zones[i].name,
		                                 z ? z->serial : 0, z ? z->loaded : 0 };
	}
	s.zones = zs;
	s.snapshot_generation = snap->generation;
	char why[128];
	s.alive = healthy(why, sizeof(why), NULL);
	json_t *acc[2] = { json_object(), json_integer(0) };
	workers_each_tally(g_workers, g_nworkers, sum_tally, acc);
	size_t n = json_object_size(acc[0]), k = 0;
	stats_answer_t *ans = xcalloc(n ? n : 1, sizeof(*ans));
	char (*fields)[5][256] = xcalloc(n ? n : 1, sizeof(*fields));
	const char *key;
	json_t *v;
	json_object_foreach(acc[0], key, v) {
		char *f[5];
		const char *p = key;
		for (int i = 0; i < 5; i++) {
			size_t l = strcspn(p, "\n");
			snprintf(fields[k][i], sizeof(fields[k][i]), "%.*s", (int)l, p);
			f[i] = fields[k][i];
			p += l + (p[l] ? 1 : 0);
		}
		ans[k] = (stats_answer_t){ f[0], gslb_row_name((gslb_row_t)atoi(f[1])),
		                           f[2], f[3], f[4], (uint64_t)json_integer_value(v) };
		k++;
	}
	s.answers = ans;
	s.nanswers = k;
	s.answers_overflow = (uint64_t)json_integer_value(acc[1]);
	hstats_t *hs = g_health ? health_stats_get(g_health) : NULL;
	s.health = hs;
	s.health_beat_age = g_health ? health_beat_age(g_health) : 0;
	wdb_info_t wi;
	if (weightdb_info(g_db, &wi) == 0)
		s.store = &wi;
	stats_cluster_t sc;
	if (g_cluster) {
		cluster_info_t ci;
		cluster_info(g_cluster, &ci);
		sc = (stats_cluster_t){ ci.connected, ci.revision, ci.last_apply,
		                        ci.resyncs, ci.applied, ci.elected,
		                        ci.decisions, ci.conflicts, ci.nodes_up,
		                        ci.nodes_partial, ci.nodes_down };
		s.cluster = &sc;
	}
	s.now = (int64_t)time(NULL);
	stats_render(&s, e);
	hstats_put(hs);
	free(ans);
	free(fields);
	json_decref(acc[0]);
	json_decref(acc[1]);
}

/* Starts the workers and the health thread, runs the main loop (signals,
 * the store's flush) until SIGTERM or SIGINT, then stops them.  Returns
 * 0, or 1 when a thread could not start. */
static int run(void)
{
	char err[1024];
	uv_loop_t *loop = uv_default_loop();
	uv_signal_t sig_hup, sig_term, sig_int, sig_usr2;
	uv_signal_init(loop, &sig_usr2);
	uv_signal_start(&sig_usr2, on_signal, SIGUSR2);
	uv_signal_init(loop, &sig_hup);
	uv_signal_init(loop, &sig_term);
	uv_signal_init(loop, &sig_int);
	uv_signal_start(&sig_hup, on_signal, SIGHUP);
	uv_signal_start(&sig_term, on_signal, SIGTERM);
	uv_signal_start(&sig_int, on_signal, SIGINT);
	uv_timer_t sync_timer, watchdog_timer;
	uv_timer_init(loop, &sync_timer);
	uv_timer_start(&sync_timer, on_sync, 1000, 1000);
	uv_timer_init(loop, &watchdog_timer);
	if (sd_watchdog_enabled(0, &g_watchdog_usec) > 0) {
		uint64_t ms = g_watchdog_usec / 2000;
		uv_timer_start(&watchdog_timer, on_watchdog, ms ? ms : 1, ms ? ms : 1);
	}
	signal(SIGPIPE, SIG_IGN);

	stats_conf_t sc;
	if (stats_conf_load(g_conf, &sc, err, sizeof(err))) {
		log_err("%s", err);
		return 1;
	}
	/* The answer tallies cost a hash per GSLB answer: only when the
	 * statistics endpoint will read them. */
	if (sc.nlisten)
		workers_enable_tally(g_workers, g_nworkers);
	if (workers_start(g_workers, g_nworkers))
		return 1;
	/* --replace: our workers read the sockets; the old daemon stops its
	 * health thread and statistics endpoint before ours start. */
	replace_finish();
	/* Cluster mode: the table follows etcd (restart to change).  Started
	 * before the health thread, whose first turn must already know it
	 * is in cluster mode (S4-6: views, the election and the quorum
	 * verdicts), or it would decide and steer alone into its store. */
	cluster_conf_t cc;
	if (cluster_conf_load(g_conf, &cc, err, sizeof(err)) ||
	    (cc.enabled && !(g_cluster = cluster_start(&cc, g_db, err, sizeof(err))))) {
		log_err("%s", err);
		cluster_conf_free(&cc);
		workers_stop(g_workers, g_nworkers);
		return 1;
	}
	cluster_conf_free(&cc);
	health_conf_t hc;
	if (health_conf_load(g_conf, &hc, err, sizeof(err)) ||
	    !(g_health = health_start(&hc, g_db, cluster_health_hooks(g_cluster), err,
	                              sizeof(err)))) {
		log_err("%s", err);
		cluster_stop(g_cluster);
		workers_stop(g_workers, g_nworkers);
		return 1;
	}
	keep_set(&hc);
	stats_provider_t sp = { metrics, healthy, NULL };
	if (!(g_stats = stats_start(&sc, loop, &sp, err, sizeof(err)))) {
		log_err("%s", err);
		health_stop(g_health); /* uses the cluster's hooks */
		cluster_stop(g_cluster);
		workers_stop(g_workers, g_nworkers);
		return 1;
	}
	ctl_start(loop);
	for (size_t i = 0; i < g_conf->nlisten; i++)
		log_info("serving on %s (UDP and TCP), %u workers",
		         g_conf->listen[i].text, g_nworkers);
	/* Every listener is bound and every zone loaded. */
	notify_ready("serving");
	daemonize_ready();

	uv_run(loop, UV_RUN_DEFAULT);

	sd_notify(0, "STOPPING=1\nSTATUS=shutting down");

	log_counters();
	stats_stop(g_stats);
	health_stop(g_health); /* uses the cluster's hooks */
	cluster_stop(g_cluster);
	workers_stop(g_workers, g_nworkers);
	/* After the workers: what they queued is flushed to the collector. */
	dnstap_free(g_dnstap);
	g_dnstap = NULL;
	dnstap_conf_clear(&g_dnstap_conf);
	rrl_publish(NULL);
	uv_close((uv_handle_t *)&sig_hup, NULL);
	uv_close((uv_handle_t *)&sig_term, NULL);
	uv_close((uv_handle_t *)&sig_int, NULL);
	uv_close((uv_handle_t *)&sig_usr2, NULL);
	if (g_child) {   /* the new daemon runs on without us */
		uv_close((uv_handle_t *)g_child, child_closed);
		g_child = NULL;
	}
	uv_close((uv_handle_t *)&sync_timer, NULL);
	uv_close((uv_handle_t *)&watchdog_timer, NULL);
	ctl_stop();
	hand_drop();
	if (g_draining)
		uv_close((uv_handle_t *)&g_drain_timer, NULL);
	uv_run(loop, UV_RUN_DEFAULT);
	uv_loop_close(loop);
	return 0;
}

int daemon_main(int argc, char **argv, daemon_opts_t *o)
{
	g_started = (int64_t)time(NULL);
	g_argc = argc;
	g_argv = argv;
	ssize_t el = readlink("/proc/self/exe", g_exe, sizeof(g_exe) - 1);
	g_exe[el > 0 ? el : 0] = 0;
	/* A replacement started by SIGUSR2 is told to take the watchdog
	 * over (its pid was not known before the fork). */
	const char *wp = getenv("WATCHDOG_PID");
	if (wp && strcmp(wp, "self") == 0) {
		char pid[32];
		snprintf(pid, sizeof(pid), "%d", (int)getpid());
		setenv("WATCHDOG_PID", pid, 1);
	}
	/* An absolute path: -d changes directory to /, and SIGHUP reads
	 * the file again. */
	char *abs_conf = realpath(o->conf_path, NULL);
	if (abs_conf)
		o->conf_path = abs_conf;
	g_opts = o;
	/* libcurl's global state, before any thread exists. */
	if (probe_global_init()) {
		fprintf(stderr, "gslbd: cannot initialise libcurl\n");
		return 1;
	}
	if (o->check)
		return do_check(o);
	if (start_server(o))
		return 1;
	if (run())
		return 1;
	snapshot_t *last = (snapshot_t *)snapshot_get();
	snapshot_free(last);
	weightdb_sync(g_db);
	weightdb_close(g_db);
	if (g_ctl_owned)
		handover_unlink(g_conf->db_path);
	/* After a hand-over the pid file names the new daemon. */
	if (o->pidfile && pidfile_is_ours(o->pidfile))
		unlink(o->pidfile);
	conf_free(g_conf);
	free(abs_conf);
	return 0;
}
