/* SPDX-License-Identifier: MIT */
/* SIGHUP: the configuration and the zones read again, every changed key
 * applied or named as needing a restart; systemd told (Type=notify). */
#include "config.h"
#include "daemon/daemon_int.h"
#include "common/log.h"
#include "dns/cookie.h"
#include "dns/snapshot.h"
#include "stats/stats.h"

#include <string.h>
#include <systemd/sd-daemon.h>
#include <time.h>

/* The rrl section for the running UDP threads: one table each, the rate
 * shared by the workers' threads of one listen address. */
int daemon__load_rrl(const conf_t *c, rrl_t **out, char *err, size_t errlen)
{
	return rrl_load(c, g_nworkers, g_nworkers * (unsigned)g_workers[0].nlisten,
	                out, err, errlen);
}

/* The keys a reload cannot apply, because what they configure is made
 * once at start: the sockets and the threads serving them, the user, the
 * open store, the statistics endpoint, dnstap's connection and the
 * cluster's etcd client.  A section name covers all its keys.  Everything
 * else applies on SIGHUP: server identity, version, udp-max-payload,
 * max-cname-chain and log-level, zones, geoip, log, rrl, dnssec (its
 * keys and keystore; the signature cache's size waits for a restart),
 * database.audit-keep, and the health, cutover and steer sections
 * (handed to the health thread). */
static const char *const restart_keys[] = {
	"server.listen", "server.workers", "server.user",
	"server.tcp-idle-timeout", "server.tcp-max-clients",
	"server.tcp-max-per-source", "server.tcp-source-prefix-v4",
	"server.tcp-source-prefix-v6",
	"database.path", "database.map-size", "stats", "api", "dnstap", "cluster",
	"dnssec.signature-cache", NULL
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

/* SIGHUP: re-read the zone files and the configuration; every changed
 * key is applied or named as needing a restart.  Zones that fail keep
 * their previous version. */
static void reload_run(void)
{
	char err[1024];
	log_info("reload: reading %s", g_opts->conf_path);
	conf_t *c = daemon__load_conf(g_opts, err, sizeof(err));
	if (!c) {
		log_err("reload failed, keeping the running configuration: %s", err);
		return;
	}
	rrl_t *rl;
	if (daemon__load_rrl(c, &rl, err, sizeof(err))) {
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
	cookie_set_t *cs;
	if (cookie_load(c, &cs, err, sizeof(err))) {
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
		cookie_free(cs);
		dnstap_conf_clear(&dc);
		rrl_free(rl);
		conf_free(c);
		return;
	}
	snapshot_publish(s);
	rrl_publish(rl);
	cookie_publish(cs);
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
	daemon__keep_set(&hc);
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

void daemon__notify_ready(const char *what)
{
	sd_notifyf(0, "READY=1\nSTATUS=%s: %zu zone(s) on %zu address(es), %u worker(s)",
	           what, g_conf->nzones, g_conf->nlisten, g_nworkers);
}

void daemon__reload(void)
{
	notify_reloading();
	reload_run();
	daemon__notify_ready("serving");
}
