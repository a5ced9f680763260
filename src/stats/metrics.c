/* SPDX-License-Identifier: MIT */
/* The metric families gslbd exports. */
#include "stats/metrics.h"

#include <stdio.h>

static const char *const transports[STATS_NTRANSPORT] = { "udp", "tcp" };

/* A counter family with one sample per transport. */
static void per_transport(expo_t *e, const stats_sample_t *s, const char *name,
                          const char *help, int stat)
{
	expo_family(e, name, EXPO_COUNTER, help);
	for (int t = 0; t < STATS_NTRANSPORT; t++) {
		const char *l[] = { "transport", transports[t] };
		expo_sample_u64(e, name, l, 1, s->counters[t][stat]);
	}
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
	answers(e, s);
	zones(e, s);
	expo_family(e, "gslbd_snapshot_publications_total", EXPO_COUNTER,
	            "Publications of the served zones and settings (the start and "
	            "every reload).");
	expo_sample_u64(e, "gslbd_snapshot_publications_total", NULL, 0,
	                s->snapshot_generation);
}
