/* SPDX-License-Identifier: MIT */
/* The statistics endpoint's view of the daemon: whether it is healthy,
 * and the sample of a scrape (stats/metrics.h renders it). */
#include "config.h"
#include "daemon/daemon_int.h"
#include "common/util.h"
#include "dns/snapshot.h"
#include "dns/tally.h"
#include "dnssec/dnssec.h"
#include "stats/metrics.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The statistics endpoint's view of the daemon ------------------------- */

/* The threads that must run for the daemon to be healthy: a loop or UDP
 * thread silent for this long is stuck (each runs once a second). */
#define ALIVE_MAX_AGE 5

int daemon__healthy(char *why, size_t whylen, void *arg)
{
	if (workers_alive(g_workers, g_nworkers, ALIVE_MAX_AGE, why, whylen) ||
	    !daemon__health_alive_why(ALIVE_MAX_AGE, why, whylen))
		return 0;
	/* Answers go on from the local store while etcd fails: healthy,
	 * with the reason as a note. */
	*why = 0;
	if (g_cluster) {
		cluster_info_t ci;
		cluster_info(g_cluster, &ci);
		if (*ci.etcd_why)
			snprintf(why, whylen, "cluster: %s", ci.etcd_why);
	}
	return 1;
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

void daemon__metrics(expo_t *e, void *arg)
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
	for (int st = 0; st < TCP_STAT_MAX; st++)
		s.tcp[st] = workers_stat_tcp(g_workers, g_nworkers, st);
	s.tcp_open = workers_tcp_open(g_workers, g_nworkers);
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
	s.alive = daemon__healthy(why, sizeof(why), NULL);
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
		                        ci.nodes_partial, ci.nodes_down,
		                        ci.etcd_members, ci.etcd_answering, 0, 0,
		                        ci.diverged, ci.divergences, ci.overrides,
		                        ci.checks, ci.full_checks, 0 };
		cookie_share_info(g_cookie_share, &sc.cookie_gen, &sc.cookie_kept);
		sc.keys_missing = dnssec_keys_missing();
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
