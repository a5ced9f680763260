/* SPDX-License-Identifier: MIT */
/* Signals (SIGHUP, SIGUSR2, SIGTERM, SIGINT) and systemd's watchdog. */
#include "daemon/daemon_int.h"
#include "common/log.h"

#include <stdio.h>
#include <systemd/sd-daemon.h>

/* Whether the health thread runs (1), or why not (0). */
int daemon__health_alive_why(int64_t max_age, char *why, size_t whylen)
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
uint64_t g_watchdog_usec;

void daemon__on_watchdog(uv_timer_t *t)
{
	static int complained;
	char what[128];
	if (g_draining)   /* its UDP threads have stopped on purpose */
		return;
	int64_t max_age = (int64_t)(g_watchdog_usec / 2000000);
	if (max_age < 2)
		max_age = 2;
	if (workers_alive(g_workers, g_nworkers, max_age, what, sizeof(what)) ||
	    !daemon__health_alive_why(max_age, what, sizeof(what))) {
		if (!complained++)
			log_err("watchdog: %s; not telling systemd that gslbd is alive", what);
		return;
	}
	complained = 0;
	sd_notify(0, "WATCHDOG=1");
}

void daemon__on_signal(uv_signal_t *h, int signum)
{
	if (signum == SIGUSR2) {
		daemon__replace_self(h->loop);
		return;
	}
	if (signum == SIGHUP) {
		if (g_draining)
			log_info("reload: ignored, this process has handed over");
		else
			daemon__reload();
		return;
	}
	log_info("signal %d: shutting down", signum);
	uv_stop(h->loop);
}
