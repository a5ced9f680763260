/* SPDX-License-Identifier: MIT */
/* The metric families gslbd exports. */
#include "stats/metrics.h"

#include "health/cutover.h"

#include <stdio.h>
#include <string.h>

static const char *const transports[STATS_NTRANSPORT] = { "udp", "tcp" };

/* A family of @type with one sample per transport. */
static void per_transport_as(expo_t *e, const stats_sample_t *s,
                             const char *name, expo_type_t type,
                             const char *help, int stat)
{
	expo_family(e, name, type, help);
	for (int t = 0; t < STATS_NTRANSPORT; t++) {
		const char *l[] = { "transport", transports[t] };
		expo_sample_u64(e, name, l, 1, s->counters[t][stat]);
	}
}

/* A counter family with one sample per transport. */
static void per_transport(expo_t *e, const stats_sample_t *s, const char *name,
                          const char *help, int stat)
{
	per_transport_as(e, s, name, EXPO_COUNTER, help, stat);
}

/* Online signing: the signatures made and the query threads'
 * signature caches (dns/qsign.c counts them). */
static void dnssec(expo_t *e, const stats_sample_t *s)
{
	per_transport(e, s, "gslbd_dnssec_signatures_total",
	              "RRSIG signatures made (cache misses that were signed), "
	              "by transport.", STAT_DNSSEC_SIGNATURES);
	per_transport(e, s, "gslbd_dnssec_cache_hits_total",
	              "RRSIGs served from the signature cache, by transport.",
	              STAT_DNSSEC_HITS);
	per_transport(e, s, "gslbd_dnssec_cache_misses_total",
	              "RRSIGs not in the signature cache, by transport.",
	              STAT_DNSSEC_MISSES);
	per_transport(e, s, "gslbd_dnssec_cache_evictions_total",
	              "Signature cache entries replaced by newer ones, by "
	              "transport.", STAT_DNSSEC_EVICTIONS);
	per_transport_as(e, s, "gslbd_dnssec_cache_entries", EXPO_GAUGE,
	                 "Signatures the query threads' caches hold, by transport.",
	                 STAT_DNSSEC_ENTRIES);
}

static void responses(expo_t *e, const stats_sample_t *s)
{
	/* NODATA is a NOERROR response; the query path counts the two apart
	 * (gslbd_nodata_responses_total keeps the NODATA share). */
	static const struct { const char *rcode; int stat, plus; } rc[] = {
		{ "NOERROR", STAT_NOERROR, STAT_NODATA },
		{ "NXDOMAIN", STAT_NXDOMAIN, -1 },
		{ "REFUSED", STAT_REFUSED, -1 },
		{ "FORMERR", STAT_FORMERR, -1 },
		{ "NOTIMP", STAT_NOTIMP, -1 },
		{ "SERVFAIL", STAT_SERVFAIL, -1 },
		{ "other", STAT_OTHER, -1 },
	};
	const char *name = "gslbd_responses_total";
	expo_family(e, name, EXPO_COUNTER, "Responses sent, by transport and RCODE.");
	for (int t = 0; t < STATS_NTRANSPORT; t++)
		for (size_t i = 0; i < sizeof(rc) / sizeof(rc[0]); i++) {
			const char *l[] = { "transport", transports[t], "rcode", rc[i].rcode };
			uint64_t v = s->counters[t][rc[i].stat];
			if (rc[i].plus >= 0)
				v += s->counters[t][rc[i].plus];
			expo_sample_u64(e, name, l, 2, v);
		}
}

/* DNS Cookies: the queries' COOKIE options by kind, and the BADCOOKIE
 * responses rate limiting sent instead of TC. */
static void cookies(expo_t *e, const stats_sample_t *s)
{
	static const struct { const char *kind; int stat; } k[] = {
		{ "client_only", STAT_COOKIE_CLIENT },
		{ "valid", STAT_COOKIE_VALID },
		{ "invalid", STAT_COOKIE_INVALID },
		{ "malformed", STAT_COOKIE_MALFORMED },
	};
	const char *name = "gslbd_cookie_queries_total";
	expo_family(e, name, EXPO_COUNTER,
	            "Queries with a DNS COOKIE option, by transport and kind: a "
	            "client cookie only, a valid or an invalid server cookie, or "
	            "malformed (answered FORMERR).");
	for (int t = 0; t < STATS_NTRANSPORT; t++)
		for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) {
			const char *l[] = { "transport", transports[t], "kind", k[i].kind };
			expo_sample_u64(e, name, l, 2, s->counters[t][k[i].stat]);
		}
	per_transport(e, s, "gslbd_badcookie_responses_total",
	              "BADCOOKIE responses with a fresh server cookie that rate "
	              "limiting sent instead of a truncated one, by transport.",
	              STAT_BADCOOKIE);
}

static void zones(expo_t *e, const stats_sample_t *s)
{
	expo_family(e, "gslbd_zone_serial", EXPO_GAUGE,
	            "SOA serial of the zone version served.");
	for (size_t i = 0; i < s->nzones; i++) {
		const char *l[] = { "zone", s->zones[i].name };
		expo_sample_u64(e, "gslbd_zone_serial", l, 1, s->zones[i].serial);
	}
	expo_family(e, "gslbd_zone_loaded_timestamp_seconds", EXPO_GAUGE,
	            "When the zone version served was read from its file (unix time).");
	for (size_t i = 0; i < s->nzones; i++) {
		const char *l[] = { "zone", s->zones[i].name };
		expo_sample(e, "gslbd_zone_loaded_timestamp_seconds", l, 1,
		            (double)s->zones[i].loaded);
	}
}

/* The traffic share per node per region and ISP. */
static void answers(expo_t *e, const stats_sample_t *s)
{
	const char *name = "gslbd_gslb_answers_total";
	expo_family(e, name, EXPO_COUNTER,
	            "GSLB answers by service, the row that answered (its level, "
	            "region and ISP) and the node given (\"\" for none).");
	for (size_t i = 0; i < s->nanswers; i++) {
		const stats_answer_t *a = &s->answers[i];
		const char *l[] = { "service", a->service, "level", a->level,
		                    "region", a->region, "isp", a->isp, "node", a->node };
		expo_sample_u64(e, name, l, 5, a->count);
	}
	expo_family(e, "gslbd_gslb_answers_overflow_total", EXPO_COUNTER,
	            "GSLB answers not broken down by node because a thread's "
	            "table of combinations was full.");
	expo_sample_u64(e, "gslbd_gslb_answers_overflow_total", NULL, 0,
	                s->answers_overflow);
}

/* A histogram family's samples: cumulative _bucket lines with le, then
 * _sum and _count, under @nl label pairs @l (at most 2). */
static void histogram(expo_t *e, const char *name, const hstats_hist_t *h,
                      const char *const *l, size_t nl)
{
	char bucket[96], sum[96], count[96], le[32];
	snprintf(bucket, sizeof(bucket), "%s_bucket", name);
	snprintf(sum, sizeof(sum), "%s_sum", name);
	snprintf(count, sizeof(count), "%s_count", name);
	const char *bl[8];
	if (nl)
		memcpy(bl, l, 2 * nl * sizeof(*l));
	bl[2 * nl] = "le";
	bl[2 * nl + 1] = le;
	uint64_t cum = 0;
	for (unsigned i = 0; i <= h->nle; i++) {
		cum += h->bucket[i];
		if (i < h->nle)
			snprintf(le, sizeof(le), "%g", h->le[i]);
		else
			snprintf(le, sizeof(le), "+Inf");
		expo_sample_u64(e, bucket, bl, nl + 1, cum);
	}
	expo_sample(e, sum, l, nl, h->sum);
	expo_sample_u64(e, count, l, nl, h->count);
}

static void counter1(expo_t *e, const char *name, const char *help, uint64_t v)
{
	expo_family(e, name, EXPO_COUNTER, help);
	expo_sample_u64(e, name, NULL, 0, v);
}

static void gauge1(expo_t *e, const char *name, const char *help, double v)
{
	expo_family(e, name, EXPO_GAUGE, help);
	expo_sample(e, name, NULL, 0, v);
}

/* The TCP front end's connections: open now, refused at accept and
 * closed by the server, by reason (S1-12). */
static void tcp(expo_t *e, const stats_sample_t *s)
{
	gauge1(e, "gslbd_tcp_connections",
	       "TCP connections open now (closing ones included).",
	       (double)s->tcp_open);
	const char *name = "gslbd_tcp_connections_refused_total";
	expo_family(e, name, EXPO_COUNTER,
	            "New TCP connections closed at once: per-source (the "
	            "client's network held server.tcp-max-per-source), full "
	            "(every slot taken by a client that had asked something).");
	const char *ls[] = { "reason", "per-source" }, *lf[] = { "reason", "full" };
	expo_sample_u64(e, name, ls, 1, s->tcp[TCP_REFUSED_SOURCE]);
	expo_sample_u64(e, name, lf, 1, s->tcp[TCP_REFUSED_FULL]);
	name = "gslbd_tcp_connections_closed_total";
	expo_family(e, name, EXPO_COUNTER,
	            "TCP connections the server closed: pressure (evicted for a "
	            "newcomer before sending a whole query, the table being 90% "
	            "full), idle (quiet for the idle time, shrunk under pressure).");
	const char *lp[] = { "reason", "pressure" }, *li[] = { "reason", "idle" };
	expo_sample_u64(e, name, lp, 1, s->tcp[TCP_CLOSED_PRESSURE]);
	expo_sample_u64(e, name, li, 1, s->tcp[TCP_CLOSED_IDLE]);
}

/* Per node: score, state, dimensions; the standbys serving. */
static void health_nodes(expo_t *e, const hstats_t *hp)
{
	const char *name = "gslbd_health_node_score";
	expo_family(e, name, EXPO_GAUGE,
	            "Quality score of the node, 0-100 (absent while unknown).");
	for (size_t i = 0; i < hp->nnode; i++)
		if (hp->node[i].score >= 0) {
			const char *l[] = { "node", hp->node[i].id };
			expo_sample(e, name, l, 1, hp->node[i].score);
		}
	name = "gslbd_health_node_state";
	expo_family(e, name, EXPO_GAUGE,
	            "1 for the node's health state, 0 for the others.");
	for (size_t i = 0; i < hp->nnode; i++)
		for (unsigned st = 0; st < HSTATS_SHOWN_STATES; st++) {
			const char *l[] = { "node", hp->node[i].id,
			                    "state", hstats_state_name(st) };
			expo_sample_u64(e, name, l, 2, hp->node[i].state == st);
		}
	name = "gslbd_health_node_dimension_ratio";
	expo_family(e, name, EXPO_GAUGE,
	            "Each dimension of the node's score, 0-1, under the profile "
	            "it was scored with (absent without input).");
	for (size_t i = 0; i < hp->nnode; i++)
		for (int d = 0; d < 4; d++)
			if (hp->node[i].dim[d] >= 0) {
				const hstats_node_t *n = &hp->node[i];
				const char *l[] = { "node", n->id, "profile",
				                    n->profile == SCORE_PROFILE_FOUR ? "four" : "probe",
				                    "dimension", score_dimension_name(n->profile, d) };
				expo_sample(e, name, l, 3, n->dim[d]);
			}
	/* S1-3: what each node's probes cost, against their budget. */
	name = "gslbd_health_probe_bytes_per_second";
	expo_family(e, name, EXPO_GAUGE,
	            "Bytes per second the node's probes cost on the wire, both "
	            "ways, estimated from their last results.");
	for (size_t i = 0; i < hp->nnode; i++) {
		const char *l[] = { "node", hp->node[i].id };
		expo_sample(e, name, l, 1, hp->node[i].probe_rate);
	}
	name = "gslbd_health_probe_budget_bytes_per_second";
	expo_family(e, name, EXPO_GAUGE,
	            "The probe budget of the node, bytes per second.");
	for (size_t i = 0; i < hp->nnode; i++) {
		const char *l[] = { "node", hp->node[i].id };
		expo_sample(e, name, l, 1, hp->node[i].probe_budget);
	}
	name = "gslbd_health_probe_over_budget";
	expo_family(e, name, EXPO_GAUGE,
	            "1 while the node's probes cost more than their budget.");
	for (size_t i = 0; i < hp->nnode; i++) {
		const char *l[] = { "node", hp->node[i].id };
		expo_sample_u64(e, name, l, 1, hp->node[i].probe_over);
	}
	uint64_t promoted = 0;
	for (size_t i = 0; i < hp->nnode; i++)
		promoted += hp->node[i].promoted;
	gauge1(e, "gslbd_health_standbys_promoted",
	       "Standby nodes serving in place of a primary now.", (double)promoted);
}

/* S4-9: latency by area (region, ISP) and source: each node's probes
 * and its pushed rtt_ms, in its area; bounded (hstats.h). */
static void area_latency(expo_t *e, const hstats_counters_t *c)
{
	static const char *const src[HSTATS_LAT_SOURCES] = { "probed", "pushed" };
	const char *name = "gslbd_area_latency_seconds";
	expo_family(e, name, EXPO_HISTOGRAM,
	            "Latency to the nodes of each region and ISP: their probes' "
	            "answer times (probed) and their pushed rtt_ms (pushed).");
	for (unsigned a = 0; a <= HSTATS_AREAS_MAX; a++) {
		if (a >= c->narea && a < HSTATS_AREAS_MAX)
			continue;
		const hstats_area_t *ar = &c->area[a];
		for (int k = 0; k < HSTATS_LAT_SOURCES; k++) {
			if (a == HSTATS_AREAS_MAX && !ar->latency[k].count)
				continue;     /* "other" only once it counted */
			const char *l[] = { "source", src[k], "region", ar->region,
			                    "isp", ar->isp };
			histogram(e, name, &ar->latency[k], l, 3);
		}
	}
}

/* Per probe kind: durations, results and failures; the state
 * transitions. */
static void health_probes(expo_t *e, const hstats_counters_t *c)
{
	const char *name = "gslbd_health_probe_duration_seconds";
	expo_family(e, name, EXPO_HISTOGRAM,
	            "Duration of the probes, by kind (tcp, http, https).");
	for (unsigned k = 0; k < HSTATS_KINDS; k++) {
		const char *l[] = { "kind", hstats_kind_name(k) };
		histogram(e, name, &c->probe_duration[k], l, 1);
	}
	name = "gslbd_health_probes_total";
	expo_family(e, name, EXPO_COUNTER, "Probe results, by kind.");
	for (unsigned k = 0; k < HSTATS_KINDS; k++) {
		const char *l[] = { "kind", hstats_kind_name(k) };
		expo_sample_u64(e, name, l, 1, c->probes[k]);
	}
	name = "gslbd_health_probe_failures_total";
	expo_family(e, name, EXPO_COUNTER,
	            "Failed probes by kind and reason (refused, connect, timeout, "
	            "resolve, tls, http_status, body, other), and answers slower "
	            "than the latency threshold (slow).");
	for (unsigned k = 0; k < HSTATS_KINDS; k++)
		for (unsigned f = 1; f < HSTATS_FAILS; f++) {
			const char *l[] = { "kind", hstats_kind_name(k),
			                    "reason", hstats_fail_name(f) };
			expo_sample_u64(e, name, l, 2, c->failures[k][f]);
		}
	name = "gslbd_health_state_transitions_total";
	expo_family(e, name, EXPO_COUNTER,
	            "Changes of a node's health state, by the states before and after.");
	for (unsigned f = 0; f < HSTATS_STATES; f++)
		for (unsigned t = 0; t < HSTATS_STATES; t++)
			if (f != t) {
				const char *l[] = { "from", hstats_state_name(f),
				                    "to", hstats_state_name(t) };
				expo_sample_u64(e, name, l, 2, c->transitions[f][t]);
			}
}

/* The reaction times of demotions (S1-7, S1-11), recoveries, flaps,
 * promotions and the thread's commits. */
static void health_reactions(expo_t *e, const hstats_counters_t *c)
{
	const char *name = "gslbd_health_detection_seconds";
	expo_family(e, name, EXPO_HISTOGRAM,
	            "Detection time of each demotion: from the node's first bad "
	            "round to the verdict that takes it out.");
	histogram(e, name, &c->detection, NULL, 0);
	name = "gslbd_health_switch_seconds";
	expo_family(e, name, EXPO_HISTOGRAM,
	            "Switch time of each demotion: from the verdict to the commit "
	            "of the answer plans without the node.");
	histogram(e, name, &c->switch_time, NULL, 0);
	counter1(e, "gslbd_health_recoveries_total",
	         "Demoted nodes restored automatically after good rounds.",
	         c->recoveries);
	counter1(e, "gslbd_health_flaps_total",
	         "Demotions soon after a restore (within the flap window).", c->flaps);
	counter1(e, "gslbd_health_standby_promotions_total",
	         "Standby nodes promoted in place of a primary.", c->promotions);
	counter1(e, "gslbd_health_commits_total",
	         "Commits of health decisions and status to the weight store.",
	         c->commits);
	counter1(e, "gslbd_health_commit_failures_total",
	         "Commits of the health thread that failed (retried whole).",
	         c->commit_failures);
}

/* The phase of each cutover window. */
static void cutover_windows(expo_t *e, const hstats_t *hp)
{
	const char *name = "gslbd_cutover_window_phase";
	expo_family(e, name, EXPO_GAUGE,
	            "1 for the phase a cutover window is in, 0 for the others.");
	static const cutover_phase_t phases[] = { CUT_ANNOUNCED, CUT_PREDERATED,
	                                          CUT_IN_WINDOW, CUT_RAMP, CUT_DONE };
	for (size_t i = 0; i < hp->nwindow; i++)
		for (size_t p = 0; p < sizeof(phases) / sizeof(phases[0]); p++) {
			const char *ph = cutover_phase_name(phases[p]);
			const char *l[] = { "window", hp->window[i].id, "phase", ph };
			expo_sample_u64(e, name, l, 2, strcmp(hp->window[i].phase, ph) == 0);
		}
}

/* The pull sources of steering inputs (steer.sources), one series each. */
static void steer_sources(expo_t *e, const hstats_t *hp)
{
	static const struct {
		const char *name, *help;
		expo_type_t type;
	} f[] = {
		{ "gslbd_steer_source_up", "1 while the last evaluation of a pull source "
		  "read every query; 0 while one fails (its inputs age, never zero).",
		  EXPO_GAUGE },
		{ "gslbd_steer_source_evaluations_total", "Evaluations of a pull source.",
		  EXPO_COUNTER },
		{ "gslbd_steer_source_failures_total", "Queries of a pull source that "
		  "failed (no answer, an HTTP error, a timeout, not an instant vector).",
		  EXPO_COUNTER },
		{ "gslbd_steer_source_samples_total", "Figures a pull source stored.",
		  EXPO_COUNTER },
		{ "gslbd_steer_source_rejected_total", "Figures of a pull source that were "
		  "not stored (a node or row the table does not have, a value out of "
		  "range, no node label).", EXPO_COUNTER },
		{ "gslbd_steer_source_last_success_timestamp_seconds", "When a pull source "
		  "last read every query (unix time; 0 before).", EXPO_GAUGE },
	};
	for (size_t k = 0; k < sizeof(f) / sizeof(f[0]); k++) {
		expo_family(e, f[k].name, f[k].type, f[k].help);
		for (unsigned i = 0; i < hp->nsource; i++) {
			const source_stat_t *st = &hp->source[i];
			const double v[] = { st->up, (double)st->evaluations, (double)st->failures,
			                     (double)st->samples, (double)st->rejected,
			                     (double)st->last_success };
			const char *l[] = { "source", st->name };
			expo_sample(e, f[k].name, l, 1, v[k]);
		}
	}
}

/* What the health thread published: per node, per probe kind, the
 * transitions and the reaction times (S1-7, S1-11, S4-9). */
static void health(expo_t *e, const stats_sample_t *s)
{
	static const hstats_t none_pub;
	hstats_counters_t zero;
	const hstats_t *hp = s->health ? s->health : &none_pub;
	const hstats_counters_t *c = &hp->c;
	if (!s->health) {
		hstats_init(&zero);
		c = &zero;
	}
	gauge1(e, "gslbd_health_heartbeat_age_seconds",
	       "Seconds since the health thread's loop last ran (it runs ten "
	       "times a second).", (double)s->health_beat_age);
	gauge1(e, "gslbd_health_published_timestamp_seconds",
	       "When the health thread last published these figures (unix "
	       "time; once a second, 0 before the first).", (double)hp->published);

	health_nodes(e, hp);
	health_probes(e, c);
	area_latency(e, c);
	health_reactions(e, c);
	cutover_windows(e, hp);
	steer_sources(e, hp);
}

/* The weight store, as the main thread reads it at the scrape. */
static void store(expo_t *e, const stats_sample_t *s)
{
	const wdb_info_t *w = s->store;
	if (!w)
		return;
	gauge1(e, "gslbd_store_table_generation",
	       "Changes committed to the operator's table (services, nodes, "
	       "weights, cutover windows).", (double)w->table_generation);
	counter1(e, "gslbd_store_audited_commits_total",
	         "Commits with an audit record (by gslbd and gslbctl).",
	         w->last_audit_id);
	gauge1(e, "gslbd_store_last_commit_timestamp_seconds",
	       "Time of the newest audited commit (unix time, 0 for none).",
	       (double)w->last_commit);
	const char *name = "gslbd_store_last_commit_age_seconds";
	expo_family(e, name, EXPO_GAUGE,
	            "Seconds since the newest audited commit (absent without one).");
	if (w->last_commit)
		expo_sample(e, name, NULL, 0, (double)(s->now - w->last_commit));
	gauge1(e, "gslbd_store_map_size_bytes",
	       "The most the weight store may hold (database.map-size).",
	       (double)w->map_size);
	gauge1(e, "gslbd_store_used_bytes",
	       "Bytes of the weight store's map in use, up to its highest page.",
	       (double)w->used);
	gauge1(e, "gslbd_store_full",
	       "1 while the daemon's last write found the store full.", w->full);
	gauge1(e, "gslbd_store_live_bytes",
	       "Bytes of the weight store's map holding data (the rest up to "
	       "the highest page is free for reuse).", (double)w->live);
	const char *room = "gslbd_store_room_trimmed_total";
	expo_family(e, room, EXPO_COUNTER,
	            "Audit records and score history samples deleted, oldest "
	            "first, to keep room in the store for health decisions.");
	const char *la[] = { "table", "audit" }, *lh[] = { "table", "history" };
	expo_sample_u64(e, room, la, 1, w->room_audit);
	expo_sample_u64(e, room, lh, 1, w->room_history);
}

/* Cluster mode: etcd, the local copy's revision, the election and the
 * quorum verdicts (S4-6).  Absent in standalone mode. */
static void cluster(expo_t *e, const stats_sample_t *s)
{
	const stats_cluster_t *c = s->cluster;
	if (!c)
		return;
	gauge1(e, "gslbd_cluster_etcd_reachable",
	       "1 while the watch on etcd is up and etcd has a quorum; 0 while "
	       "answers come from the local store alone.", c->reachable);
	gauge1(e, "gslbd_cluster_etcd_members_answering",
	       "While the watch on etcd is down: the etcd members that answer "
	       "at all (without a quorum, fewer than half of "
	       "gslbd_cluster_etcd_members); 0 while it is up or none answers.",
	       c->etcd_answering);
	gauge1(e, "gslbd_cluster_etcd_members",
	       "The members of etcd's member list when the watch last failed "
	       "(at least the endpoints configured; 0 before any failure).",
	       c->etcd_members);
	gauge1(e, "gslbd_cluster_revision",
	       "The etcd revision of the table the local store holds.",
	       (double)c->revision);
	const char *name = "gslbd_cluster_last_apply_age_seconds";
	expo_family(e, name, EXPO_GAUGE,
	            "Seconds since the local store last took a change from etcd "
	            "(a revision from the watch or a full read; absent before "
	            "the first).");
	if (c->last_apply)
		expo_sample(e, name, NULL, 0, (double)(s->now - c->last_apply));
	gauge1(e, "gslbd_cluster_cookie_secret_generation",
	       "The generation of the DNS Cookie secret shared through etcd "
	       "that this instance's answers use (0: none yet, or a secret "
	       "file wins).", (double)c->cookie_gen);
	gauge1(e, "gslbd_cluster_cookie_secret_kept",
	       "1 while etcd cannot be read and this instance keeps the DNS "
	       "Cookie secret it has (never a new one of its own).",
	       c->cookie_kept);
	gauge1(e, "gslbd_cluster_dnssec_keys_missing",
	       "Active signing keys whose private key is not in this "
	       "instance's keystore: the zones they sign answer SERVFAIL to "
	       "queries with DO until their files arrive from etcd.",
	       c->keys_missing);
	counter1(e, "gslbd_cluster_resyncs_total",
	         "Full reads of the table from etcd (the start, a compaction "
	         "past the store's revision, an apply that failed).", c->resyncs);
	counter1(e, "gslbd_cluster_applied_revisions_total",
	         "etcd revisions applied to the local store from the watch.",
	         c->applied);
	gauge1(e, "gslbd_cluster_leader",
	       "1 while this instance is the elected one that makes the automatic "
	       "decisions.", c->leader);
	counter1(e, "gslbd_cluster_decision_writes_total",
	         "Transactions of automatic decisions this instance wrote to etcd "
	         "while elected.", c->decisions);
	counter1(e, "gslbd_cluster_write_conflicts_total",
	         "Decision writes etcd refused because another instance had been "
	         "elected meanwhile (nothing was written).", c->conflicts);
	gauge1(e, "gslbd_cluster_table_diverged",
	       "1 when the last check found the local table different from "
	       "etcd's at the same revision (beside declared overrides): it was "
	       "changed outside the cluster, and is read from etcd again.",
	       c->diverged);
	counter1(e, "gslbd_cluster_divergences_total",
	         "Checks that found the local table different from etcd's.",
	         c->divergences);
	const char *tck = "gslbd_cluster_table_checks_total";
	expo_family(e, tck, EXPO_COUNTER,
	            "Checks of the local table against etcd's: full (etcd's table "
	            "read and the store's walked), incremental (the store's audit "
	            "records since the check before).");
	const char *lfull[] = { "kind", "full" }, *linc[] = { "kind", "incremental" };
	expo_sample_u64(e, tck, lfull, 1, c->full_checks);
	expo_sample_u64(e, tck, linc, 1, c->checks - c->full_checks);
	gauge1(e, "gslbd_cluster_local_overrides",
	       "Declared local overrides on this instance (gslbctl "
	       "--local-override): objects it answers from apart from the "
	       "cluster until they are pushed or dropped.", c->overrides);
	name = "gslbd_cluster_quorum_nodes";
	expo_family(e, name, EXPO_GAUGE,
	            "Nodes by the quorum verdict over the live instances' views: "
	            "up (no vantage sees them down), partial (seen down by fewer "
	            "than the quorum, still in the answers), down (out).");
	const struct { const char *st; unsigned n; } q[] = {
		{ "up", c->nodes_up }, { "partial", c->nodes_partial },
		{ "down", c->nodes_down },
	};
	for (size_t i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		const char *l[] = { "state", q[i].st };
		expo_sample_u64(e, name, l, 1, q[i].n);
	}
}

void stats_render(const stats_sample_t *s, expo_t *e)
{
	const char *bl[] = { "version", s->version };
	expo_family(e, "gslbd_build_info", EXPO_GAUGE,
	            "Always 1; the version is a label.");
	expo_sample_u64(e, "gslbd_build_info", bl, 1, 1);
	expo_family(e, "gslbd_process_start_time_seconds", EXPO_GAUGE,
	            "Start time of the process (unix time).");
	expo_sample(e, "gslbd_process_start_time_seconds", NULL, 0, (double)s->started);
	expo_family(e, "gslbd_up", EXPO_GAUGE,
	            "1 while every worker thread and the health thread run, as /healthz says.");
	expo_sample_u64(e, "gslbd_up", NULL, 0, s->alive ? 1 : 0);
	expo_family(e, "gslbd_workers", EXPO_GAUGE, "Worker threads.");
	expo_sample_u64(e, "gslbd_workers", NULL, 0, s->workers);

	per_transport(e, s, "gslbd_queries_total",
	              "Queries received, by transport.", STAT_QUERIES);
	responses(e, s);
	per_transport(e, s, "gslbd_nodata_responses_total",
	              "NOERROR responses without an answer (NODATA), by transport.",
	              STAT_NODATA);
	per_transport(e, s, "gslbd_truncated_responses_total",
	              "Responses truncated to fit the UDP size (TC set), by transport.",
	              STAT_TRUNCATED);
	per_transport(e, s, "gslbd_dropped_total",
	              "Packets dropped without an answer (too short, responses, "
	              "oversized, or a reply that could not be sent), by transport.",
	              STAT_DROPPED);
	per_transport(e, s, "gslbd_rrl_dropped_total",
	              "Responses withheld by response rate limiting, by transport "
	              "(TCP is never limited).", STAT_RRL_DROPPED);
	per_transport(e, s, "gslbd_rrl_slipped_total",
	              "Responses rate limiting sent truncated instead of dropping "
	              "them, by transport.", STAT_RRL_SLIPPED);
	per_transport(e, s, "gslbd_dnstap_messages_total",
	              "dnstap messages handed to the I/O thread for the collector, "
	              "by transport.", STAT_DNSTAP_MESSAGES);
	per_transport(e, s, "gslbd_dnstap_dropped_total",
	              "dnstap messages dropped because the queue to the I/O thread "
	              "was full (a slow collector), by transport.",
	              STAT_DNSTAP_DROPPED);
	per_transport(e, s, "gslbd_edns_queries_total",
	              "Queries with an EDNS OPT record, by transport.", STAT_EDNS);
	per_transport(e, s, "gslbd_ecs_queries_total",
	              "Queries with an EDNS Client Subnet option, by transport.", STAT_ECS);
	cookies(e, s);

	per_transport(e, s, "gslbd_gslb_responses_total",
	              "Responses for GSLB service names, by transport.", STAT_GSLB);
	per_transport(e, s, "gslbd_gslb_short_ttl_responses_total",
	              "GSLB responses with the short TTL (something in the row "
	              "moved recently), by transport.", STAT_GSLB_SHORT);
	per_transport(e, s, "gslbd_gslb_fail_open_responses_total",
	              "GSLB responses from a row with no usable node, answered as "
	              "if all were healthy (all-down open), by transport.",
	              STAT_GSLB_OPEN);
	per_transport(e, s, "gslbd_gslb_no_node_responses_total",
	              "GSLB responses without a node: no row, all-down empty, or "
	              "no node with the asked address family, by transport.",
	              STAT_GSLB_NONE);
	dnssec(e, s);
	tcp(e, s);
	answers(e, s);
	zones(e, s);
	expo_family(e, "gslbd_snapshot_publications_total", EXPO_COUNTER,
	            "Publications of the served zones and settings (the start and "
	            "every reload).");
	expo_sample_u64(e, "gslbd_snapshot_publications_total", NULL, 0,
	                s->snapshot_generation);
	health(e, s);
	store(e, s);
	cluster(e, s);
}
