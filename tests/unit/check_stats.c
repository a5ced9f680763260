/* SPDX-License-Identifier: MIT */
/* Metrics: the exposition format, the families rendered from a sample,
 * the stats section and its allow list. */
#include "common/log.h"
#include "stats/expo.h"
#include "stats/metrics.h"
#include "stats/stats.h"
#include "unit.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

static int has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = text; (p = strstr(p, line)); p++)
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || !p[n]))
			return 1;
	return 0;
}

START_TEST(expo_escapes_and_formats)
{
	expo_t e;
	expo_init(&e);
	expo_family(&e, "x_total", EXPO_COUNTER, "a \\ b\nc");
	const char *l[] = { "zone", "a\"b\\c\nd", "k", "v" };
	expo_sample_u64(&e, "x_total", l, 2, 18446744073709551615ull);
	expo_sample(&e, "y", NULL, 0, 0.25);
	expo_sample(&e, "y", NULL, 0, 1.0 / 0.0);
	ck_assert(has_line(e.buf, "# HELP x_total a \\\\ b\\nc"));
	ck_assert(has_line(e.buf, "# TYPE x_total counter"));
	ck_assert(has_line(e.buf, "x_total{zone=\"a\\\"b\\\\c\\nd\",k=\"v\"} 18446744073709551615"));
	ck_assert(has_line(e.buf, "y 0.25"));
	ck_assert(has_line(e.buf, "y +Inf"));
	/* Growth past the first buffer keeps every line. */
	for (int i = 0; i < 2000; i++)
		expo_sample_u64(&e, "z", NULL, 0, (uint64_t)i);
	ck_assert(has_line(e.buf, "z 0"));
	ck_assert(has_line(e.buf, "z 1999"));
	ck_assert_uint_eq(strlen(e.buf), e.len);
	expo_free(&e);
}
END_TEST

START_TEST(render_sample)
{
	stats_sample_t s;
	memset(&s, 0, sizeof(s));
	s.version = "9.9";
	s.started = 1700000000;
	s.workers = 2;
	s.alive = 1;
	s.counters[STATS_UDP][STAT_QUERIES] = 10;
	s.counters[STATS_UDP][STAT_NOERROR] = 6;
	s.counters[STATS_UDP][STAT_NODATA] = 1;
	s.counters[STATS_UDP][STAT_NXDOMAIN] = 3;
	s.counters[STATS_TCP][STAT_QUERIES] = 4;
	s.counters[STATS_TCP][STAT_REFUSED] = 4;
	s.tcp[TCP_REFUSED_SOURCE] = 90;
	s.tcp[TCP_REFUSED_FULL] = 2;
	s.tcp[TCP_CLOSED_PRESSURE] = 7;
	s.tcp[TCP_CLOSED_IDLE] = 5;
	s.tcp_open = 12;
	stats_zone_t z[] = { { "cdn.example.test", 2026, 1700000100 } };
	s.zones = z;
	s.nzones = 1;
	s.snapshot_generation = 3;
	expo_t e;
	expo_init(&e);
	stats_render(&s, &e);
	ck_assert(has_line(e.buf, "gslbd_build_info{version=\"9.9\"} 1"));
	ck_assert(has_line(e.buf, "gslbd_up 1"));
	ck_assert(has_line(e.buf, "gslbd_queries_total{transport=\"udp\"} 10"));
	ck_assert(has_line(e.buf, "gslbd_queries_total{transport=\"tcp\"} 4"));
	/* NODATA is a NOERROR response, and also counted on its own. */
	ck_assert(has_line(e.buf, "gslbd_responses_total{transport=\"udp\",rcode=\"NOERROR\"} 7"));
	ck_assert(has_line(e.buf, "gslbd_nodata_responses_total{transport=\"udp\"} 1"));
	ck_assert(has_line(e.buf, "gslbd_responses_total{transport=\"udp\",rcode=\"NXDOMAIN\"} 3"));
	ck_assert(has_line(e.buf, "gslbd_responses_total{transport=\"tcp\",rcode=\"REFUSED\"} 4"));
	/* TCP hoarding (S1-12): refusals and the server's closes by reason. */
	ck_assert(has_line(e.buf, "gslbd_tcp_connections 12"));
	ck_assert(has_line(e.buf, "gslbd_tcp_connections_refused_total{reason=\"per-source\"} 90"));
	ck_assert(has_line(e.buf, "gslbd_tcp_connections_refused_total{reason=\"full\"} 2"));
	ck_assert(has_line(e.buf, "gslbd_tcp_connections_closed_total{reason=\"pressure\"} 7"));
	ck_assert(has_line(e.buf, "gslbd_tcp_connections_closed_total{reason=\"idle\"} 5"));
	ck_assert(has_line(e.buf, "gslbd_zone_serial{zone=\"cdn.example.test\"} 2026"));
	ck_assert(has_line(e.buf, "gslbd_zone_loaded_timestamp_seconds{zone=\"cdn.example.test\"} 1700000100"));
	ck_assert(has_line(e.buf, "gslbd_snapshot_publications_total 3"));
	/* Every sample's family is declared before it. */
	ck_assert(strstr(e.buf, "# TYPE gslbd_queries_total counter") <
	          strstr(e.buf, "gslbd_queries_total{"));
	expo_free(&e);
}
END_TEST

/* The health thread's publication and the store, rendered. */
START_TEST(render_health_and_store)
{
	hstats_counters_t c;
	hstats_init(&c);
	hstats_observe(&c.probe_duration[PROBE_HTTP], 0.00390625);
	hstats_observe(&c.probe_duration[PROBE_HTTP], 0.25);
	c.probes[PROBE_HTTP] = 2;
	c.failures[PROBE_TCP][PROBE_FAIL_REFUSED] = 4;
	c.failures[PROBE_HTTP][HSTATS_FAIL_SLOW] = 1;
	c.transitions[hstats_state_index("up")][hstats_state_index("demoted")] = 2;
	hstats_observe(&c.detection, 3.5);
	hstats_observe(&c.switch_time, 0.02);
	c.recoveries = 1;
	c.promotions = 1;
	hstats_t *h = hstats_new(&c, 2, 1);
	h->published = 1700000200;
	snprintf(h->node[0].id, sizeof(h->node[0].id), "n1");
	h->node[0].state = hstats_state_index("demoted");
	h->node[0].score = 12.5;
	h->node[0].dim[0] = 0.25;
	h->node[0].dim[1] = -1;
	h->node[0].dim[2] = 1;
	h->node[0].dim[3] = -1;
	snprintf(h->node[1].id, sizeof(h->node[1].id), "n2");
	h->node[1].score = -1;
	h->node[1].profile = SCORE_PROFILE_FOUR;
	h->node[1].dim[0] = h->node[1].dim[1] = h->node[1].dim[2] = -1;
	h->node[1].dim[3] = 0.5;
	h->node[1].promoted = 1;
	snprintf(h->window[0].id, sizeof(h->window[0].id), "w1");
	h->window[0].phase = "in-window";
	wdb_info_t wi = { .table_generation = 7, .last_audit_id = 40,
	                   .last_commit = 1700000000, .map_size = 1 << 20,
	                   .used = 65536, .full = 0 };
	stats_sample_t s;
	memset(&s, 0, sizeof(s));
	s.version = "9.9";
	s.health = h;
	s.health_beat_age = 0;
	s.store = &wi;
	s.now = 1700000030;
	expo_t e;
	expo_init(&e);
	stats_render(&s, &e);
	ck_assert(has_line(e.buf, "gslbd_health_node_score{node=\"n1\"} 12.5"));
	/* An unknown score is absent, never a made-up figure. */
	ck_assert(!strstr(e.buf, "gslbd_health_node_score{node=\"n2\"}"));
	ck_assert(has_line(e.buf, "gslbd_health_node_state{node=\"n1\",state=\"demoted\"} 1"));
	ck_assert(has_line(e.buf, "gslbd_health_node_state{node=\"n1\",state=\"up\"} 0"));
	ck_assert(has_line(e.buf, "gslbd_health_node_state{node=\"n2\",state=\"unknown\"} 1"));
	ck_assert(has_line(e.buf, "gslbd_health_node_dimension_ratio{node=\"n1\",profile=\"probe\",dimension=\"loss\"} 0.25"));
	ck_assert(has_line(e.buf, "gslbd_health_node_dimension_ratio{node=\"n1\",profile=\"probe\",dimension=\"connect\"} 1"));
	ck_assert(!strstr(e.buf, "dimension=\"latency\""));
	ck_assert(has_line(e.buf, "gslbd_health_node_dimension_ratio{node=\"n2\",profile=\"four\",dimension=\"stability\"} 0.5"));
	ck_assert(has_line(e.buf, "gslbd_health_standbys_promoted 1"));
	ck_assert(has_line(e.buf, "# TYPE gslbd_health_probe_duration_seconds histogram"));
	ck_assert(has_line(e.buf, "gslbd_health_probe_duration_seconds_bucket{kind=\"http\",le=\"0.005\"} 1"));
	ck_assert(has_line(e.buf, "gslbd_health_probe_duration_seconds_bucket{kind=\"http\",le=\"0.1\"} 1"));
	ck_assert(has_line(e.buf, "gslbd_health_probe_duration_seconds_bucket{kind=\"http\",le=\"0.25\"} 2"));
	ck_assert(has_line(e.buf, "gslbd_health_probe_duration_seconds_bucket{kind=\"http\",le=\"+Inf\"} 2"));
	ck_assert(has_line(e.buf, "gslbd_health_probe_duration_seconds_count{kind=\"http\"} 2"));
	ck_assert(has_line(e.buf, "gslbd_health_probe_duration_seconds_sum{kind=\"http\"} 0.25390625"));
	ck_assert(has_line(e.buf, "gslbd_health_probe_duration_seconds_count{kind=\"tcp\"} 0"));
	ck_assert(has_line(e.buf, "gslbd_health_probe_failures_total{kind=\"tcp\",reason=\"refused\"} 4"));
	ck_assert(has_line(e.buf, "gslbd_health_probe_failures_total{kind=\"http\",reason=\"slow\"} 1"));
	ck_assert(has_line(e.buf, "gslbd_health_probe_failures_total{kind=\"https\",reason=\"tls\"} 0"));
	ck_assert(has_line(e.buf, "gslbd_health_state_transitions_total{from=\"up\",to=\"demoted\"} 2"));
	ck_assert(!strstr(e.buf, "from=\"up\",to=\"up\""));
	ck_assert(has_line(e.buf, "gslbd_health_detection_seconds_bucket{le=\"2\"} 0"));
	ck_assert(has_line(e.buf, "gslbd_health_detection_seconds_bucket{le=\"4\"} 1"));
	ck_assert(has_line(e.buf, "gslbd_health_detection_seconds_sum 3.5"));
	ck_assert(has_line(e.buf, "gslbd_health_switch_seconds_bucket{le=\"0.1\"} 1"));
	ck_assert(has_line(e.buf, "gslbd_health_recoveries_total 1"));
	ck_assert(has_line(e.buf, "gslbd_health_standby_promotions_total 1"));
	ck_assert(has_line(e.buf, "gslbd_health_published_timestamp_seconds 1700000200"));
	ck_assert(has_line(e.buf, "gslbd_cutover_window_phase{window=\"w1\",phase=\"in-window\"} 1"));
	ck_assert(has_line(e.buf, "gslbd_cutover_window_phase{window=\"w1\",phase=\"ramp\"} 0"));
	ck_assert(has_line(e.buf, "gslbd_store_table_generation 7"));
	ck_assert(has_line(e.buf, "gslbd_store_audited_commits_total 40"));
	ck_assert(has_line(e.buf, "gslbd_store_last_commit_age_seconds 30"));
	ck_assert(has_line(e.buf, "gslbd_store_map_size_bytes 1048576"));
	ck_assert(has_line(e.buf, "gslbd_store_used_bytes 65536"));
	ck_assert(has_line(e.buf, "gslbd_store_full 0"));
	expo_free(&e);
	hstats_put(h);

	/* Before the first publication the counters show as zero. */
	s.health = NULL;
	s.store = NULL;
	expo_init(&e);
	stats_render(&s, &e);
	ck_assert(has_line(e.buf, "gslbd_health_detection_seconds_count 0"));
	ck_assert(has_line(e.buf, "gslbd_health_detection_seconds_bucket{le=\"+Inf\"} 0"));
	ck_assert(has_line(e.buf, "gslbd_health_recoveries_total 0"));
	ck_assert(!strstr(e.buf, "gslbd_store_"));
	ck_assert(!strstr(e.buf, "gslbd_cluster_"));   /* standalone */
	expo_free(&e);
}
END_TEST

/* Cluster mode's families (S4-6), present only with a cluster. */
/* S4-9: latency by area and source, with bounded areas.  A probed
 * 30 ms and 150 ms in (cn-bj, ctcc) and a pushed 8 ms there; 40 more
 * areas fill the 32 kept and the rest count as "other"; the probe
 * budget figures of S1-3 per node. */
START_TEST(s4_9_area_latency)
{
	hstats_counters_t c;
	hstats_init(&c);
	hstats_latency(&c, "cn-bj", "ctcc", HSTATS_LAT_PROBED, 0.03);
	hstats_latency(&c, "cn-bj", "ctcc", HSTATS_LAT_PROBED, 0.15);
	hstats_latency(&c, "cn-bj", "ctcc", HSTATS_LAT_PUSHED, 0.008);
	for (int i = 0; i < 40; i++) {
		char r[16];
		snprintf(r, sizeof(r), "r%d", i);
		hstats_latency(&c, r, "x", HSTATS_LAT_PROBED, 1);
	}
	ck_assert_uint_eq(c.narea, HSTATS_AREAS_MAX);
	ck_assert_uint_eq(c.area[HSTATS_AREAS_MAX].latency[HSTATS_LAT_PROBED].count, 9);
	hstats_t *h = hstats_new(&c, 1, 0);
	snprintf(h->node[0].id, sizeof(h->node[0].id), "n1");
	h->node[0].score = -1;
	h->node[0].probe_rate = 700;
	h->node[0].probe_budget = 500;
	h->node[0].probe_over = 1;
	stats_sample_t s;
	memset(&s, 0, sizeof(s));
	s.version = "9.9";
	s.health = h;
	expo_t e;
	expo_init(&e);
	stats_render(&s, &e);
	const char *b = "gslbd_area_latency_seconds_bucket{source=\"probed\",region=\"cn-bj\",isp=\"ctcc\"";
	char line[256];
	snprintf(line, sizeof(line), "%s,le=\"0.02\"} 0", b);
	ck_assert(has_line(e.buf, line));
	snprintf(line, sizeof(line), "%s,le=\"0.05\"} 1", b);
	ck_assert(has_line(e.buf, line));
	snprintf(line, sizeof(line), "%s,le=\"0.2\"} 2", b);
	ck_assert(has_line(e.buf, line));
	ck_assert(has_line(e.buf, "gslbd_area_latency_seconds_bucket{source=\"pushed\",region=\"cn-bj\",isp=\"ctcc\",le=\"0.01\"} 1"));
	ck_assert(has_line(e.buf, "gslbd_area_latency_seconds_count{source=\"probed\",region=\"other\",isp=\"other\"} 9"));
	/* "other" has no pushed series: it never counted one. */
	ck_assert(!strstr(e.buf, "source=\"pushed\",region=\"other\""));
	ck_assert(!strstr(e.buf, "region=\"r39\""));
	ck_assert(has_line(e.buf, "gslbd_health_probe_bytes_per_second{node=\"n1\"} 700"));
	ck_assert(has_line(e.buf, "gslbd_health_probe_budget_bytes_per_second{node=\"n1\"} 500"));
	ck_assert(has_line(e.buf, "gslbd_health_probe_over_budget{node=\"n1\"} 1"));
	expo_free(&e);
	hstats_put(h);
}
END_TEST

START_TEST(render_cluster)
{
	stats_sample_t s;
	memset(&s, 0, sizeof(s));
	s.version = "1.0";
	s.now = 1700000030;
	stats_cluster_t c = { .reachable = 0, .revision = 4242,
	                      .last_apply = 1700000000, .resyncs = 3, .applied = 17,
	                      .leader = 1, .decisions = 5, .conflicts = 2,
	                      .nodes_up = 7, .nodes_partial = 1, .nodes_down = 2,
	                      .etcd_members = 3, .etcd_answering = 1 };
	s.cluster = &c;
	expo_t e;
	expo_init(&e);
	stats_render(&s, &e);
	ck_assert(has_line(e.buf, "# TYPE gslbd_cluster_etcd_reachable gauge"));
	ck_assert(has_line(e.buf, "gslbd_cluster_etcd_reachable 0"));
	ck_assert(has_line(e.buf, "gslbd_cluster_revision 4242"));
	ck_assert(has_line(e.buf, "gslbd_cluster_last_apply_age_seconds 30"));
	ck_assert(has_line(e.buf, "gslbd_cluster_resyncs_total 3"));
	ck_assert(has_line(e.buf, "gslbd_cluster_applied_revisions_total 17"));
	ck_assert(has_line(e.buf, "gslbd_cluster_leader 1"));
	ck_assert(has_line(e.buf, "gslbd_cluster_decision_writes_total 5"));
	ck_assert(has_line(e.buf, "gslbd_cluster_write_conflicts_total 2"));
	ck_assert(has_line(e.buf, "gslbd_cluster_quorum_nodes{state=\"up\"} 7"));
	ck_assert(has_line(e.buf, "gslbd_cluster_quorum_nodes{state=\"partial\"} 1"));
	ck_assert(has_line(e.buf, "gslbd_cluster_quorum_nodes{state=\"down\"} 2"));
	ck_assert(has_line(e.buf, "gslbd_cluster_etcd_members 3"));
	ck_assert(has_line(e.buf, "gslbd_cluster_etcd_members_answering 1"));
	expo_free(&e);
	/* The table checks by kind: the incremental ones are the others. */
	c.checks = 61;
	c.full_checks = 2;
	expo_init(&e);
	stats_render(&s, &e);
	ck_assert(has_line(e.buf, "# TYPE gslbd_cluster_table_checks_total counter"));
	ck_assert(has_line(e.buf, "gslbd_cluster_table_checks_total{kind=\"full\"} 2"));
	ck_assert(has_line(e.buf, "gslbd_cluster_table_checks_total{kind=\"incremental\"} 59"));
	expo_free(&e);
	/* Nothing applied yet: no age, never a made-up one. */
	c.last_apply = 0;
	expo_init(&e);
	stats_render(&s, &e);
	ck_assert(has_line(e.buf, "# TYPE gslbd_cluster_last_apply_age_seconds gauge"));
	ck_assert(!strstr(e.buf, "gslbd_cluster_last_apply_age_seconds 0"));
	expo_free(&e);
}
END_TEST

static char dir[] = "/tmp/check_stats-XXXXXX";
static char path[256];

static conf_t *load(const char *stats, char *err, size_t errlen)
{
	snprintf(path, sizeof(path), "%s/gslbd.conf", dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "zones:\n  - name: example.test\n    file: x.zone\n%s", stats);
	fclose(f);
	return conf_load(path, err, errlen);
}

static void expect_stats_error(const char *stats, int line, const char *what)
{
	char err[1024], want[300];
	conf_t *c = load(stats, err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	stats_conf_t sc;
	ck_assert_msg(stats_conf_load(c, &sc, err, sizeof(err)) != 0, "accepted: %s", stats);
	snprintf(want, sizeof(want), "%s:%d: ", path, line);
	ck_assert_msg(strncmp(err, want, strlen(want)) == 0, "'%s' lacks '%s'", err, want);
	ck_assert_msg(strstr(err, what) != NULL, "'%s' lacks '%s'", err, what);
	conf_free(c);
}

static struct sockaddr_storage sa(const char *ip)
{
	struct sockaddr_storage s;
	memset(&s, 0, sizeof(s));
	if (inet_pton(AF_INET, ip, &((struct sockaddr_in *)&s)->sin_addr) == 1)
		s.ss_family = AF_INET;
	else if (inet_pton(AF_INET6, ip, &((struct sockaddr_in6 *)&s)->sin6_addr) == 1)
		s.ss_family = AF_INET6;
	return s;
}

START_TEST(section_and_allow)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	log_set_level(GSLB_LOG_ERR);
	char err[1024];
	conf_t *c = load("", err, sizeof(err));
	stats_conf_t sc;
	ck_assert_int_eq(stats_conf_load(c, &sc, err, sizeof(err)), 0);
	ck_assert_uint_eq(sc.nlisten, 0);
	conf_free(c);
	c = load("stats:\n  listen: [ \"127.0.0.1@9153\", \"::1@9153\" ]\n"
	         "  allow: [ \"10.0.0.0/8\", \"192.0.2.7\", \"2001:db8::/32\" ]\n",
	         err, sizeof(err));
	ck_assert_msg(c != NULL, "%s", err);
	ck_assert_int_eq(stats_conf_load(c, &sc, err, sizeof(err)), 0);
	ck_assert_uint_eq(sc.nlisten, 2);
	ck_assert_uint_eq(sc.nallow, 3);
	struct sockaddr_storage a;
	a = sa("10.200.1.1"); ck_assert(stats_allowed(&sc, (struct sockaddr *)&a));
	a = sa("11.0.0.1"); ck_assert(!stats_allowed(&sc, (struct sockaddr *)&a));
	a = sa("192.0.2.7"); ck_assert(stats_allowed(&sc, (struct sockaddr *)&a));
	a = sa("192.0.2.8"); ck_assert(!stats_allowed(&sc, (struct sockaddr *)&a));
	a = sa("2001:db8:ffff::1"); ck_assert(stats_allowed(&sc, (struct sockaddr *)&a));
	a = sa("2001:db9::1"); ck_assert(!stats_allowed(&sc, (struct sockaddr *)&a));
	/* An IPv4 client on an IPv6 socket is judged as IPv4. */
	a = sa("::ffff:10.1.2.3"); ck_assert(stats_allowed(&sc, (struct sockaddr *)&a));
	conf_free(c);
	expect_stats_error("stats:\n  listen: [ \"localhost:9153\" ]\n", 5, "ADDR@PORT");
	expect_stats_error("stats:\n  listen: [ \"127.0.0.1@9153\" ]\n  allow: [ \"10.1.2.3/8\" ]\n",
	                   6, "'10.1.2.3/8' is not an address or ADDR/LEN network");
	expect_stats_error("stats:\n  listen: [ \"127.0.0.1@9153\" ]\n  allow: [ \"::1/129\" ]\n",
	                   6, "not an address");
	expect_stats_error("stats:\n  lisen: [ \"127.0.0.1@9153\" ]\n", 5, "lisen");
	expect_stats_error("stats:\n  allow: [ \"::1\" ]\n", 5, "allow without listen");
	remove(path);
	remove(dir);
}
END_TEST

/* The reader is the writer's inverse: what expo_* wrote reads back with
 * its escapes undone and its values exact; histogram series belong to
 * their family; text that is not the format is refused with its line. */
START_TEST(expo_parse_round_trip)
{
	expo_t e;
	expo_init(&e);
	expo_family(&e, "x_total", EXPO_COUNTER, "a \\ b\nc");
	const char *l[] = { "zone", "a\"b\\c\nd", "k", "v" };
	expo_sample_u64(&e, "x_total", l, 2, 9007199254740993ull);
	expo_family(&e, "y", EXPO_GAUGE, "Y.");
	expo_sample(&e, "y", NULL, 0, 0.25);
	expo_sample(&e, "y", NULL, 0, 1.0 / 0.0);
	expo_family(&e, "h_seconds", EXPO_HISTOGRAM, "H.");
	const char *b[] = { "le", "0.5" }, *inf[] = { "le", "+Inf" };
	expo_sample_u64(&e, "h_seconds_bucket", b, 1, 2);
	expo_sample_u64(&e, "h_seconds_bucket", inf, 1, 3);
	expo_sample(&e, "h_seconds_sum", NULL, 0, 1.5);
	expo_sample_u64(&e, "h_seconds_count", NULL, 0, 3);
	char err[200];
	json_t *f = expo_parse(e.buf, err, sizeof(err));
	ck_assert_msg(f != NULL, "%s", err);
	ck_assert_uint_eq(json_array_size(f), 3);
	json_t *x = json_array_get(f, 0);
	ck_assert_str_eq(json_string_value(json_object_get(x, "name")), "x_total");
	ck_assert_str_eq(json_string_value(json_object_get(x, "type")), "counter");
	ck_assert_str_eq(json_string_value(json_object_get(x, "help")), "a \\ b\nc");
	json_t *xs = json_array_get(json_object_get(x, "samples"), 0);
	ck_assert_int_eq(json_integer_value(json_object_get(xs, "value")), 9007199254740993ll);
	json_t *lb = json_object_get(xs, "labels");
	ck_assert_str_eq(json_string_value(json_object_get(lb, "zone")), "a\"b\\c\nd");
	ck_assert_str_eq(json_string_value(json_object_get(lb, "k")), "v");
	json_t *ys = json_object_get(json_array_get(f, 1), "samples");
	ck_assert(json_real_value(json_object_get(json_array_get(ys, 0), "value")) == 0.25);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(ys, 1), "value")), "+Inf");
	json_t *hs = json_object_get(json_array_get(f, 2), "samples");
	ck_assert_uint_eq(json_array_size(hs), 4);
	ck_assert_str_eq(json_string_value(json_object_get(
		json_object_get(json_array_get(hs, 1), "labels"), "le")), "+Inf");
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(hs, 3), "name")),
	                 "h_seconds_count");
	json_decref(f);
	expo_free(&e);

	/* Untyped samples, timestamps and other comments are the format too. */
	f = expo_parse("# a comment\nu{a=\"1\",} 7 1700000000000\n\nv 2\n", err, sizeof(err));
	ck_assert_msg(f != NULL, "%s", err);
	ck_assert_uint_eq(json_array_size(f), 2);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(f, 0), "type")), "untyped");
	json_decref(f);

	static const struct { const char *text, *msg; } bad[] = {
		{ "x 1\ny{a=\"b} 2\n", "line 2: label value without its closing quote" },
		{ "x one\n", "line 1: 'one' is not a sample value" },
		{ "x{a=1} 2\n", "line 1: label a: expected =\"" },
		{ "# TYPE x countr\n", "line 1: family x: unknown type 'countr'" },
		{ "x{a=\"\\t\"} 1\n", "line 1: unknown escape \\t" },
		{ "x 1 2 3\n", "line 1: x: bad timestamp" },
		{ "9x 1\n", "line 1: expected a metric name" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		ck_assert_msg(expo_parse(bad[i].text, err, sizeof(err)) == NULL, "%s accepted", bad[i].text);
		ck_assert_str_eq(err, bad[i].msg);
	}
}
END_TEST

static Suite *stats_suite(void)
{
	Suite *s = suite_create("stats");
	TCase *t = tcase_create("metrics");
	tcase_add_test(t, expo_escapes_and_formats);
	tcase_add_test(t, render_sample);
	tcase_add_test(t, render_health_and_store);
	tcase_add_test(t, render_cluster);
	tcase_add_test(t, section_and_allow);
	tcase_add_test(t, expo_parse_round_trip);
	tcase_add_test(t, s4_9_area_latency);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(stats_suite)
