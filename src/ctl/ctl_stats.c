/* SPDX-License-Identifier: MIT */
/* gslbctl stats: the counters of the running daemon, read from its
 * statistics endpoint (the stats.listen of the configuration, GET
 * /metrics over HTTP with libcurl), for operators without Prometheus.
 *
 * It shows what a scrape shows, family by family, and knows nothing of
 * the families themselves: the reader of the exposition format
 * (stats/expo.h) turns the text into JSON, and a family added to the
 * daemon appears here without a change. */
#include "config.h"
#include "ctl/ctl.h"
#include "stats/expo.h"
#include "stats/stats.h"

#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A scrape never takes longer than this: the endpoint answers from the
 * daemon's main loop at once, or the daemon is in trouble. */
#define STATS_TIMEOUT_MS 5000L
/* Larger than any scrape of a sane table (a line per service, row and
 * node is well under 1 KiB), small enough to refuse a wrong server. */
#define STATS_MAX_BODY (64u << 20)

typedef struct {
	char *buf;
	size_t len, cap;
} body_t;

static size_t body_write(char *p, size_t size, size_t n, void *arg)
{
	body_t *b = arg;
	size_t len = size * n;
	if (b->len + len + 1 > STATS_MAX_BODY)
		return 0;   /* libcurl fails the transfer: too large */
	if (b->len + len + 1 > b->cap) {
		b->cap = (b->len + len + 1) * 2;
		b->buf = realloc(b->buf, b->cap);
		if (!b->buf)
			ctl_die("stats: out of memory");
	}
	memcpy(b->buf + b->len, p, len);
	b->len += len;
	b->buf[b->len] = 0;
	return len;
}

/* The URL of /metrics at listen address @l; a wildcard address is asked
 * on the loopback address of its family. */
static void metrics_url(const conf_listen_t *l, char *url, size_t size)
{
	char host[INET6_ADDRSTRLEN];
	unsigned port;
	if (l->addr.ss_family == AF_INET6) {
		struct sockaddr_in6 a = *(const struct sockaddr_in6 *)&l->addr;
		if (IN6_IS_ADDR_UNSPECIFIED(&a.sin6_addr))
			a.sin6_addr = in6addr_loopback;
		inet_ntop(AF_INET6, &a.sin6_addr, host, sizeof(host));
		port = ntohs(a.sin6_port);
		snprintf(url, size, "http://[%s]:%u/metrics", host, port);
	} else {
		struct sockaddr_in a = *(const struct sockaddr_in *)&l->addr;
		if (a.sin_addr.s_addr == htonl(INADDR_ANY))
			a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		inet_ntop(AF_INET, &a.sin_addr, host, sizeof(host));
		port = ntohs(a.sin_port);
		snprintf(url, size, "http://%s:%u/metrics", host, port);
	}
}

/* GETs @url into @b.  Returns 0, or -1 with the reason in @why. */
static int scrape(CURL *c, const char *url, body_t *b, char *why, size_t whylen)
{
	char cerr[CURL_ERROR_SIZE] = "";
	long status = 0;
	b->len = 0;
	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http");
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, STATS_TIMEOUT_MS);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "gslbctl/" PACKAGE_VERSION);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_PROXY, "");   /* the daemon, never a proxy */
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, body_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, b);
	CURLcode rc = curl_easy_perform(c);
	if (rc != CURLE_OK) {
		/* gslbd closes connections from outside stats.allow at once. */
		int closed = rc == CURLE_GOT_NOTHING || rc == CURLE_RECV_ERROR;
		snprintf(why, whylen, "%s: %s%s", url, *cerr ? cerr : curl_easy_strerror(rc),
		         closed ? " (is this host in stats.allow?)" : "");
		return -1;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	if (status == 403)
		snprintf(why, whylen, "%s: refused (HTTP 403): this host is not in stats.allow", url);
	else if (status != 200)
		snprintf(why, whylen, "%s: answered HTTP %ld, not the metrics", url, status);
	else if (!b->len)
		snprintf(why, whylen, "%s: answered with nothing", url);
	else
		return 0;
	return -1;
}

/* Writes sample value @v as /metrics wrote it: integers exactly. */
static void print_value(json_t *v, char *buf, size_t size)
{
	if (json_is_integer(v))
		snprintf(buf, size, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, size, "%.15g", json_real_value(v));
	else
		snprintf(buf, size, "%s", json_string_value(v) ?: "?");
}

/* Prints one family: a heading with its type and help, then a line per
 * sample with its series suffix and labels; times are also shown in
 * UTC. */
static void print_family(json_t *f)
{
	const char *name = json_string_value(json_object_get(f, "name"));
	size_t nl = strlen(name);
	int is_time = (nl > 18 && strcmp(name + nl - 18, "_timestamp_seconds") == 0) ||
	              (nl > 13 && strcmp(name + nl - 13, "_time_seconds") == 0);
	printf("%s (%s): %s\n", name, json_string_value(json_object_get(f, "type")),
	       json_string_value(json_object_get(f, "help")));
	size_t i;
	json_t *s;
	json_array_foreach(json_object_get(f, "samples"), i, s) {
		char lab[512] = "", val[64], when[40] = "";
		const char *sn = json_string_value(json_object_get(s, "name"));
		size_t l = (size_t)snprintf(lab, sizeof(lab), "%s", sn + nl);
		const char *k;
		json_t *v;
		json_object_foreach(json_object_get(s, "labels"), k, v)
			if (l < sizeof(lab))
				l += (size_t)snprintf(lab + l, sizeof(lab) - l, "%s%s=%s",
				                      l ? " " : "", k, json_string_value(v));
		print_value(json_object_get(s, "value"), val, sizeof(val));
		if (is_time && json_is_number(json_object_get(s, "value")))
			ctl_utc((int64_t)json_number_value(json_object_get(s, "value")),
			        when, sizeof(when));
		printf("  %-58s %16s%s%s\n", *lab ? lab : "-", val, *when ? "  " : "", when);
	}
}

int ctl_cmd_stats(int argc, char **argv)
{
	if (argc > 0)
		ctl_die("stats: unexpected argument '%s'", argv[0]);
	if (!ctl_conf)
		ctl_die("stats: needs -c CONF: the statistics endpoint is the "
		        "stats.listen of the configuration");
	stats_conf_t sc;
	char err[1024];
	if (stats_conf_load(ctl_conf, &sc, err, sizeof(err)))
		ctl_die("%s", err);
	if (!sc.nlisten)
		ctl_die("stats: %s has no stats.listen: gslbd serves no statistics "
		        "endpoint (see gslbd.conf(5))", ctl_conf->path);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
		ctl_die("stats: cannot initialise libcurl");
	CURL *c = curl_easy_init();
	if (!c)
		ctl_die("stats: cannot initialise libcurl");
	/* Every listen address is tried in turn, so that one the daemon
	 * could not bind, or a family this host lacks, does not hide the
	 * others. */
	body_t b = { 0 };
	char url[128], why[1200] = "";
	size_t i;
	for (i = 0; i < sc.nlisten; i++) {
		char one[400];
		metrics_url(&sc.listen[i], url, sizeof(url));
		if (scrape(c, url, &b, one, sizeof(one)) == 0)
			break;
		size_t l = strlen(why);
		snprintf(why + l, sizeof(why) - l, "%s%s", l ? "; " : "", one);
	}
	curl_easy_cleanup(c);
	curl_global_cleanup();
	if (i == sc.nlisten)
		ctl_die("stats: gslbd does not answer on its statistics endpoint: %s", why);
	json_t *fams = expo_parse(b.buf, err, sizeof(err));
	free(b.buf);
	if (!fams)
		ctl_die("stats: %s did not answer in the metrics format: %s", url, err);
	if (ctl_json) {
		ctl_emit(json_pack("{s:s, s:o}", "endpoint", url, "families", fams));
		return 0;
	}
	printf("# gslbd statistics from %s\n", url);
	json_t *f;
	json_array_foreach(fams, i, f) {
		putchar('\n');
		print_family(f);
	}
	json_decref(fams);
	return 0;
}
