/* SPDX-License-Identifier: MIT */
/* gslbd's start-up, main loop and shut-down: --check, the store, the
 * first snapshot and the workers, then the threads and the main loop
 * until SIGTERM or SIGINT (daemon_main()). */
#include "config.h"
#include "daemon/daemon_int.h"
#include "common/handover.h"
#include "common/log.h"
#include "common/net.h"
#include "common/util.h"
#include "dns/cookie.h"
#include "dns/snapshot.h"
#include "cluster/keyfiles.h"
#include "dnssec/dnssec.h"
#include "gslb/geo.h"
#include "probe/probe.h"
#include "steer/steer.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

conf_t *g_conf;
worker_t *g_workers;
weightdb_t *g_db;
health_t *g_health;
unsigned g_nworkers;
const daemon_opts_t *g_opts;
stats_t *g_stats;
api_t *g_api;
cluster_t *g_cluster;               /* NULL: standalone */
cookie_share_t *g_cookie_share;
static dnstap_t *g_dnstap;          /* NULL: dnstap off */
dnstap_conf_t g_dnstap_conf;        /* as applied at start */
int64_t g_started;
int g_draining;                     /* handed over (--replace): finishing */

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

conf_t *daemon__load_conf(const daemon_opts_t *o, char *err, size_t errlen)
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
	conf_t *c = daemon__load_conf(o, err, sizeof(err));
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
	api_conf_t ac;
	if (api_conf_load(c, &ac, err, sizeof(err))) {
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
	cookie_set_t *cs;
	if (cookie_load(c, &cs, err, sizeof(err))) {
		fprintf(stderr, "gslbd: %s\n", err);
		bad = 1;
	}
	cookie_free(cs);
	cluster_conf_t cc;
	if (cluster_conf_load(c, &cc, err, sizeof(err))) {
		fprintf(stderr, "gslbd: %s\n", err);
		bad = 1;
	} else {
		cluster_conf_free(&cc);
	}
	dnssec_conf_t nc;
	if (dnssec_conf_load(c, &nc, err, sizeof(err))) {
		fprintf(stderr, "gslbd: %s\n", err);
		bad = 1;
	} else {
		dnssec_conf_clear(&nc);
	}
	if (!bad)
		printf("%s: ok\n", c->path);
	conf_free(c);
	return bad;
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

/* Creates the workers (g_workers, g_nworkers), their sockets bound or
 * taken from those handed over; closes the handed-over sockets no
 * listener takes.  Returns 0 or -1 after logging why. */
static int create_workers(void)
{
	char err[1024];
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
	return 0;
}

/* dnstap (g_dnstap), when the configuration names a socket: its I/O
 * thread and the workers' queues.  Returns 0 or -1 after logging why. */
static int start_dnstap(void)
{
	char err[1024];
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
	return 0;
}

/* Opens the store, publishes the first snapshot and creates the workers
 * (their sockets bound), then drops privileges and detaches.  Returns 0
 * or -1 after logging why. */
static int start_server(const daemon_opts_t *o)
{
	char err[1024];
	g_conf = daemon__load_conf(o, err, sizeof(err));
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
	if (o->daemonize && daemon__daemonize_begin())
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
	dnssec_use_store(g_db);     /* signing keys' metadata, per snapshot */
	/* --replace loads everything before it takes the sockets over, so
	 * that a configuration or zone that cannot start leaves the running
	 * daemon alone. */
	int take = 1;
	if (!o->replace && daemon__lock_store(g_conf->db_path))
		return -1;
	unsigned failed;
	snapshot_t *s = snapshot_build(g_conf, NULL, &failed, err, sizeof(err));
	if (!s) {
		log_err("cannot start: %s", err);
		return -1;
	}
	snapshot_publish(s);
	if (o->replace && ((take = daemon__replace_take(g_conf->db_path)) < 0 ||
	                   (take == 1 && daemon__lock_store(g_conf->db_path))))
		return -1;
	if (check_listen_free(g_conf, g_adopt, g_nadopt))
		return -1;
	g_conf->tcp_max_clients = daemon__raise_nofile(g_conf->tcp_max_clients);
	if (create_workers())
		return -1;
	rrl_t *rl;
	if (daemon__load_rrl(g_conf, &rl, err, sizeof(err))) {
		log_err("%s", err);
		return -1;
	}
	rrl_publish(rl);
	cookie_set_t *cs;
	if (cookie_load(g_conf, &cs, err, sizeof(err))) {
		log_err("%s", err);
		return -1;
	}
	cookie_publish(cs);
	/* After the fork of -d (the I/O thread must be the child's) and
	 * before the workers start (each takes its queue). */
	if (start_dnstap())
		return -1;
	if (daemon__drop_privileges(g_conf->user))
		return -1;
	if (o->pidfile && daemon__write_pidfile(o->pidfile))
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

/* The main loop's own handles: the signals it acts on, the store's
 * flush and the systemd watchdog. */
typedef struct {
	uv_signal_t hup, term, intr, usr2;
	uv_timer_t sync, watchdog;
} main_handles_t;

static void handles_start(uv_loop_t *loop, main_handles_t *m)
{
	uv_signal_init(loop, &m->usr2);
	uv_signal_start(&m->usr2, daemon__on_signal, SIGUSR2);
	uv_signal_init(loop, &m->hup);
	uv_signal_init(loop, &m->term);
	uv_signal_init(loop, &m->intr);
	uv_signal_start(&m->hup, daemon__on_signal, SIGHUP);
	uv_signal_start(&m->term, daemon__on_signal, SIGTERM);
	uv_signal_start(&m->intr, daemon__on_signal, SIGINT);
	uv_timer_init(loop, &m->sync);
	uv_timer_start(&m->sync, daemon__on_sync, 1000, 1000);
	uv_timer_init(loop, &m->watchdog);
	if (sd_watchdog_enabled(0, &g_watchdog_usec) > 0) {
		uint64_t ms = g_watchdog_usec / 2000;
		uv_timer_start(&m->watchdog, daemon__on_watchdog, ms ? ms : 1, ms ? ms : 1);
	}
	signal(SIGPIPE, SIG_IGN);
}

/* Starts the workers, the cluster (cluster mode), the health thread and
 * the statistics endpoint, in that order.  Returns 0, or 1 after
 * logging why and stopping those already started. */
/* Cluster mode: the signing keys' files that come from etcd go into
 * the keystore (made, 0700, when absent), and the elected instance's
 * rollovers write their steps to etcd (restart to change). */
static void cluster_keys(void)
{
	char err[512];
	dnssec_conf_t dc;
	if (dnssec_conf_load(g_conf, &dc, err, sizeof(err)))
		return;      /* said by the snapshot's build already */
	cluster_keyfile_use(dc.keystore);
	dnssec_conf_clear(&dc);
}

/* Cluster mode: the cookie secret is shared through etcd, unless a
 * secret file wins or cookies are off (restart to change).  0, or -1
 * (logged). */
static int start_cookie_share(const cluster_conf_t *cc)
{
	char err[1024];
	cookie_conf_t ck;
	if (!g_cluster)
		return 0;
	if (cookie_conf_load(g_conf, &ck, err, sizeof(err))) {
		log_err("%s", err);
		return -1;
	}
	if (ck.enable && ck.secret_file)
		log_notice("cookies: the secret file %s wins over the secret the "
		           "cluster shares through etcd", ck.secret_file);
	else if (ck.enable &&
	         !(g_cookie_share = cookie_share_start(cc, g_cluster, ck.rotate,
	                                                err, sizeof(err))))
		log_err("%s", err);
	int rc = ck.enable && !ck.secret_file && !g_cookie_share ? -1 : 0;
	cookie_conf_clear(&ck);
	return rc;
}

/* The names of the current snapshot's geoip sources (geo_names()), for
 * the API's check of a region or ISP a change names: walked once per
 * snapshot, at the first change that needs them, since the walk of a
 * large database costs the main loop a moment. */
static struct {
	json_t *names[2];
	unsigned n;
	uint64_t generation;
} g_api_geo;

static void api_geo_add(const char *name, void *arg)
{
	json_object_set_new(arg, name, json_true());
	g_api_geo.n++;
}

static void api_area_names(wdb_area_known_t *k)
{
	/* The main thread publishes snapshots, so it reads the current one
	 * without RCU: nobody else frees it. */
	const snapshot_t *snap = snapshot_get();
	if (!snap)
		return;
	if (!g_api_geo.names[0] || g_api_geo.generation != snap->generation) {
		for (int f = 0; f < 2; f++) {
			json_decref(g_api_geo.names[f]);
			g_api_geo.names[f] = json_object();
		}
		g_api_geo.n = 0;
		g_api_geo.generation = snap->generation;
		for (int f = 0; f < 2; f++)
			if (geo_names(snap->geo, f, api_geo_add, g_api_geo.names[f]))
				log_warning("api: the GeoIP database cannot be read whole; its "
				            "%s names may be missing", f ? "ISP" : "region");
	}
	for (int f = 0; f < 2; f++)
		json_object_update(k->names[f], g_api_geo.names[f]);
	k->ngeo += g_api_geo.n;
}

/* The HTTP API, last: it writes the store the others serve.  A failure
 * stops what start_threads() started. */
static int start_api(uv_loop_t *loop, const health_conf_t *hc)
{
	char err[1024];
	api_conf_t ac;
	api_env_t env = { .db = g_db, .settle = hc->settle, .cluster = g_cluster != NULL,
	                  .cl = g_cluster, .probe_interval = hc->interval,
	                  .probe_timeout = hc->timeout, .conf = &g_conf,
	                  .area_names = api_area_names,
	                  .keep = steer_conf_keep(&hc->steer), .skew = hc->steer.skew,
	                  .conf_path = g_conf->path, .cut = hc->cut,
	                  .steer = hc->steer, .snapshot = snapshot_get };
	if (!api_conf_load(g_conf, &ac, err, sizeof(err)) &&
	    (g_api = api_start(&ac, loop, &env, err, sizeof(err))))
		return 0;
	log_err("%s", err);
	stats_stop(g_stats);
	g_stats = NULL;
	health_stop(g_health);
	g_health = NULL;
	cookie_share_stop(g_cookie_share);
	cluster_stop(g_cluster);
	workers_stop(g_workers, g_nworkers);
	return 1;
}

static int start_threads(uv_loop_t *loop)
{
	char err[1024];
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
	daemon__replace_finish();
	/* Cluster mode: the table follows etcd (restart to change).  Started
	 * before the health thread, whose first turn must already know it
	 * is in cluster mode (S4-6: views, the election and the quorum
	 * verdicts), or it would decide and steer alone into its store. */
	cluster_conf_t cc;
	cluster_keys();
	if (cluster_conf_load(g_conf, &cc, err, sizeof(err)) ||
	    (cc.enabled && !(g_cluster = cluster_start(&cc, g_db, err, sizeof(err))))) {
		log_err("%s", err);
		cluster_conf_free(&cc);
		workers_stop(g_workers, g_nworkers);
		return 1;
	}
	cluster_dnssec_rollovers(g_cluster);
	if (start_cookie_share(&cc)) {
		cluster_conf_free(&cc);
		cluster_stop(g_cluster);
		workers_stop(g_workers, g_nworkers);
		return 1;
	}
	cluster_conf_free(&cc);
	health_conf_t hc;
	if (health_conf_load(g_conf, &hc, err, sizeof(err)) ||
	    !(g_health = health_start(&hc, g_db, cluster_health_hooks(g_cluster), err,
	                              sizeof(err)))) {
		log_err("%s", err);
		cookie_share_stop(g_cookie_share);
		cluster_stop(g_cluster);
		workers_stop(g_workers, g_nworkers);
		return 1;
	}
	daemon__keep_set(&hc);
	stats_provider_t sp = { daemon__metrics, daemon__healthy, NULL };
	if (!(g_stats = stats_start(&sc, loop, &sp, err, sizeof(err)))) {
		log_err("%s", err);
		health_stop(g_health); /* uses the cluster's hooks */
		cookie_share_stop(g_cookie_share);
		cluster_stop(g_cluster);
		workers_stop(g_workers, g_nworkers);
		return 1;
	}
	return start_api(loop, &hc);
}

/* After the main loop: stops the threads in the reverse order and
 * closes the loop's handles. */
static void stop_all(uv_loop_t *loop, main_handles_t *m)
{
	log_counters();
	api_stop(g_api);
	for (int f = 0; f < 2; f++) {
		json_decref(g_api_geo.names[f]);
		g_api_geo.names[f] = NULL;
	}
	stats_stop(g_stats);
	health_stop(g_health); /* uses the cluster's hooks */
	cookie_share_stop(g_cookie_share);
	cluster_stop(g_cluster);
	workers_stop(g_workers, g_nworkers);
	/* After the workers: what they queued is flushed to the collector. */
	dnstap_free(g_dnstap);
	g_dnstap = NULL;
	dnstap_conf_clear(&g_dnstap_conf);
	rrl_publish(NULL);
	uv_close((uv_handle_t *)&m->hup, NULL);
	uv_close((uv_handle_t *)&m->term, NULL);
	uv_close((uv_handle_t *)&m->intr, NULL);
	uv_close((uv_handle_t *)&m->usr2, NULL);
	if (g_child) {   /* the new daemon runs on without us */
		uv_close((uv_handle_t *)g_child, daemon__child_closed);
		g_child = NULL;
	}
	uv_close((uv_handle_t *)&m->sync, NULL);
	uv_close((uv_handle_t *)&m->watchdog, NULL);
	daemon__ctl_stop();
	daemon__hand_drop();
	if (g_draining)
		uv_close((uv_handle_t *)&g_drain_timer, NULL);
	uv_run(loop, UV_RUN_DEFAULT);
	uv_loop_close(loop);
}

/* Starts the workers and the health thread, runs the main loop (signals,
 * the store's flush) until SIGTERM or SIGINT, then stops them.  Returns
 * 0, or 1 when a thread could not start. */
static int run(void)
{
	uv_loop_t *loop = uv_default_loop();
	main_handles_t m;
	handles_start(loop, &m);
	if (start_threads(loop))
		return 1;
	daemon__ctl_start(loop);
	for (size_t i = 0; i < g_conf->nlisten; i++)
		log_info("serving on %s (UDP and TCP), %u workers",
		         g_conf->listen[i].text, g_nworkers);
	/* Every listener is bound and every zone loaded. */
	daemon__notify_ready("serving");
	daemon__daemonize_ready();

	uv_run(loop, UV_RUN_DEFAULT);

	sd_notify(0, "STOPPING=1\nSTATUS=shutting down");
	stop_all(loop, &m);
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
	if (o->pidfile && daemon__pidfile_is_ours(o->pidfile))
		unlink(o->pidfile);
	conf_free(g_conf);
	free(abs_conf);
	return 0;
}
