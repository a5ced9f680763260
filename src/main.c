/* SPDX-License-Identifier: MIT */
/* gslbd: start-up, threads, signals and reload orchestration. */
#include "config.h"
#include "common/conf.h"
#include "health/health.h"
#include "health/probe.h"
#include "gslb/geo.h"
#include "common/log.h"
#include "dns/rrl.h"
#include "dns/snapshot.h"
#include "common/util.h"
#include "store/weightdb.h"
#include "dns/worker.h"

#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <uv.h>

typedef struct {
	const char *conf_path;
	char **listen;
	size_t nlisten;
	int check;
	int daemonize;
	int verbose;
	const char *pidfile;
	unsigned workers;
} opts_t;

static conf_t *g_conf;
static worker_t *g_workers;
static weightdb_t *g_db;
static health_t *g_health;
static unsigned g_nworkers;
static const opts_t *g_opts;

static void usage(FILE *f)
{
	fputs("usage: gslbd -c FILE [-l ADDR@PORT]... [-w N] [-f | -d] [-p PIDFILE] [-v]\n"
	      "       gslbd -c FILE --check\n"
	      "  -c, --config FILE   configuration (gslbd.conf(5))\n"
	      "  -l, --listen A@P    listen on A@P instead of server.listen (repeatable)\n"
	      "  -w, --workers N     worker threads (default: server.workers)\n"
	      "  -f, --foreground    stay in the foreground (the default)\n"
	      "  -d, --daemonize     detach and log to syslog\n"
	      "  -p, --pidfile FILE  write the process id to FILE\n"
	      "  -v, --verbose       log at debug level\n"
	      "      --check         validate configuration, zones and GeoIP database, then exit\n"
	      "  -V, --version       print the version\n", f);
}

/* Reads the geoip section (database, maps, nets file) once to prove it is
 * valid; the error is "FILE:LINE: reason". */
static int check_geoip(const conf_t *c, char *err, size_t errlen)
{
	geo_t *g = geo_open(c, err, errlen);
	if (!g)
		return -1;
	geo_close(g);
	return 0;
}

static conf_t *load_conf(const opts_t *o, char *err, size_t errlen)
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

static int do_check(const opts_t *o)
{
	char err[1024];
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
	rrl_t *rl;
	if (rrl_load(c, 1, 0, &rl, err, sizeof(err))) {
		fprintf(stderr, "gslbd: %s\n", err);
		bad = 1;
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

/* SIGHUP: re-read the zone files (and the settings a reload applies);
 * zones that fail keep their previous version. */
static void reload(void)
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
	unsigned failed = 0;
	const snapshot_t *old = snapshot_get();
	snapshot_t *s = snapshot_build(c, old, &failed, err, sizeof(err));
	if (!s) {
		log_err("reload failed: %s", err);
		rrl_free(rl);
		conf_free(c);
		return;
	}
	snapshot_publish(s);
	rrl_publish(rl);
	conf_free(g_conf);
	g_conf = c;
	if (failed)
		log_warning("reload: %u zone(s) kept their previous version", failed);
	else
		log_info("reload: done");
}

/* The health thread commits without fsync; the disk catches up here,
 * off its loop, once a second. */
static void on_sync(uv_timer_t *t)
{
	if (weightdb_sync(g_db))
		log_warning("database: cannot flush to disk");
}

static void on_signal(uv_signal_t *h, int signum)
{
	if (signum == SIGHUP) {
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

/* Parses the command line into @o.  Returns -1 to go on, or the exit
 * status (0 for --version and --help, 2 for a bad command line). */
static int parse_args(int argc, char **argv, opts_t *o)
{
	static const struct option lopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "listen", required_argument, NULL, 'l' },
		{ "workers", required_argument, NULL, 'w' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "daemonize", no_argument, NULL, 'd' },
		{ "pidfile", required_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "check", no_argument, NULL, 'C' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int ch;
	o->listen = xcalloc((size_t)argc, sizeof(*o->listen));
	while ((ch = getopt_long(argc, argv, "c:l:w:fdp:vVh", lopts, NULL)) != -1) {
		switch (ch) {
		case 'c': o->conf_path = optarg; break;
		case 'l': o->listen[o->nlisten++] = optarg; break;
		case 'w': {
			char *end;
			long n = strtol(optarg, &end, 10);
			if (*end || n < 1 || n > 256) {
				fprintf(stderr, "gslbd: -w %s: workers must be 1 to 256\n", optarg);
				return 2;
			}
			o->workers = (unsigned)n;
			break;
		}
		case 'f': o->daemonize = 0; break;
		case 'd': o->daemonize = 1; break;
		case 'p': o->pidfile = optarg; break;
		case 'v': o->verbose = 1; break;
		case 'C': o->check = 1; break;
		case 'V': printf("gslbd %s\n", PACKAGE_VERSION); return 0;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "gslbd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	return -1;
}

/* Opens the store, publishes the first snapshot and creates the workers
 * (their sockets bound), then drops privileges and detaches.  Returns 0
 * or -1 after logging why. */
static int start_server(const opts_t *o)
{
	char err[1024];
	g_conf = load_conf(o, err, sizeof(err));
	if (!g_conf) {
		fprintf(stderr, "gslbd: %s\n", err);
		return -1;
	}
	log_set_level(o->verbose ? GSLB_LOG_DEBUG : g_conf->log_level);
	/* The weight store is created on first start (schema in
	 * weightdb.h); gslbctl may create it too. */
	g_db = weightdb_open(g_conf->db_path, err, sizeof(err));
	if (!g_db) {
		log_err("%s", err);
		return -1;
	}
	weightdb_set_nosync(g_db);
	unsigned failed;
	snapshot_t *s = snapshot_build(g_conf, NULL, &failed, err, sizeof(err));
	if (!s) {
		log_err("cannot start: %s", err);
		return -1;
	}
	snapshot_publish(s);

	g_nworkers = g_conf->workers;
	if (!g_nworkers) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		g_nworkers = n > 0 ? (unsigned)n : 1;
	}
	g_workers = workers_create(g_conf, g_nworkers, g_db, err, sizeof(err));
	if (!g_workers) {
		log_err("%s", err);
		return -1;
	}
	rrl_t *rl;
	if (load_rrl(g_conf, &rl, err, sizeof(err))) {
		log_err("%s", err);
		return -1;
	}
	rrl_publish(rl);
	if (drop_privileges(g_conf->user))
		return -1;
	if (o->daemonize) {
		if (daemon(0, 0) < 0) {
			log_err("daemon: %s", strerror(errno));
			return -1;
		}
		log_use_syslog(1);
	}
	if (o->pidfile && write_pidfile(o->pidfile))
		return -1;
	return 0;
}

/* The workers' counters, logged once at exit. */
static void log_counters(void)
{
	log_info("answered %llu queries (%llu NXDOMAIN, %llu REFUSED, "
	         "%llu FORMERR, %llu truncated, %llu dropped; rate limiting "
	         "dropped %llu and slipped %llu)",
	         (unsigned long long)workers_stat(g_workers, g_nworkers, STAT_QUERIES),
	         (unsigned long long)workers_stat(g_workers, g_nworkers, STAT_NXDOMAIN),
	         (unsigned long long)workers_stat(g_workers, g_nworkers, STAT_REFUSED),
	         (unsigned long long)workers_stat(g_workers, g_nworkers, STAT_FORMERR),
	         (unsigned long long)workers_stat(g_workers, g_nworkers, STAT_TRUNCATED),
	         (unsigned long long)workers_stat(g_workers, g_nworkers, STAT_DROPPED),
	         (unsigned long long)workers_stat(g_workers, g_nworkers, STAT_RRL_DROPPED),
	         (unsigned long long)workers_stat(g_workers, g_nworkers, STAT_RRL_SLIPPED));
}

/* Starts the workers and the health thread, runs the main loop (signals,
 * the store's flush) until SIGTERM or SIGINT, then stops them.  Returns
 * 0, or 1 when a thread could not start. */
static int run(void)
{
	char err[1024];
	uv_loop_t *loop = uv_default_loop();
	uv_signal_t sig_hup, sig_term, sig_int;
	uv_signal_init(loop, &sig_hup);
	uv_signal_init(loop, &sig_term);
	uv_signal_init(loop, &sig_int);
	uv_signal_start(&sig_hup, on_signal, SIGHUP);
	uv_signal_start(&sig_term, on_signal, SIGTERM);
	uv_signal_start(&sig_int, on_signal, SIGINT);
	uv_timer_t sync_timer;
	uv_timer_init(loop, &sync_timer);
	uv_timer_start(&sync_timer, on_sync, 1000, 1000);
	signal(SIGPIPE, SIG_IGN);

	if (workers_start(g_workers, g_nworkers))
		return 1;
	health_conf_t hc;
	if (health_conf_load(g_conf, &hc, err, sizeof(err)) ||
	    !(g_health = health_start(&hc, g_db, err, sizeof(err)))) {
		log_err("%s", err);
		workers_stop(g_workers, g_nworkers);
		return 1;
	}
	for (size_t i = 0; i < g_conf->nlisten; i++)
		log_info("serving on %s (UDP and TCP), %u workers",
		         g_conf->listen[i].text, g_nworkers);

	uv_run(loop, UV_RUN_DEFAULT);

	log_counters();
	health_stop(g_health);
	workers_stop(g_workers, g_nworkers);
	rrl_publish(NULL);
	uv_close((uv_handle_t *)&sig_hup, NULL);
	uv_close((uv_handle_t *)&sig_term, NULL);
	uv_close((uv_handle_t *)&sig_int, NULL);
	uv_close((uv_handle_t *)&sync_timer, NULL);
	uv_run(loop, UV_RUN_DEFAULT);
	uv_loop_close(loop);
	return 0;
}

int main(int argc, char **argv)
{
	/* Static: g_opts points here for the life of the process (reload
	 * reads it), and so does the listen array on every exit path. */
	static opts_t o = { .conf_path = "/etc/gslbd/gslbd.conf" };
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	/* An absolute path: -d changes directory to /, and SIGHUP reads
	 * the file again. */
	char *abs_conf = realpath(o.conf_path, NULL);
	if (abs_conf)
		o.conf_path = abs_conf;
	g_opts = &o;
	/* libcurl's global state, before any thread exists. */
	if (probe_global_init()) {
		fprintf(stderr, "gslbd: cannot initialise libcurl\n");
		return 1;
	}
	if (o.check) {
		rc = do_check(&o);
		free(o.listen);
		return rc;
	}
	if (start_server(&o))
		return 1;
	if (run())
		return 1;
	snapshot_t *last = (snapshot_t *)snapshot_get();
	snapshot_free(last);
	conf_free(g_conf);
	weightdb_sync(g_db);
	weightdb_close(g_db);
	free(o.listen);
	free(abs_conf);
	if (o.pidfile)
		unlink(o.pidfile);
	return 0;
}
