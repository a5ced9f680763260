/* SPDX-License-Identifier: MIT */
/* gslbctl: manage services, nodes and weight rows in the weight store,
 * explain answers, show the audit log and roll changes back.
 *
 * Every command validates everything first and then commits one LMDB
 * write transaction with its audit record; a rejected command writes
 * nothing (S0-10, S3-8).  gslbd sees a commit at its next batch of
 * packets: no reload, no signal. */
#include "config.h"
#include "common/conf.h"
#include "health/cutover.h"
#include "gslb/geo.h"
#include "health/health.h"
#include "health/probe.h"
#include "health/score.h"
#include "gslb/gslb.h"
#include "common/log.h"
#include "gslb/policy.h"
#include "common/util.h"
#include "store/weightdb.h"
#include "dns/edns.h"
#include "dns/zone.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <getopt.h>
#include <jansson.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static conf_t *g_conf;        /* NULL with -d */
static weightdb_t *g_db;
static int g_json;
static char g_actor[128];

__attribute__((format(printf, 1, 2), noreturn))
static void die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("gslbctl: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(1);
}

static void usage(FILE *f)
{
	fputs(
"usage: gslbctl [-c CONF | -d DBDIR] [--json] COMMAND [ARGS]\n"
"  service add|set NAME [--ttl N] [--short-ttl N] [--answers N]\n"
"                       [--all-down open|fallback|empty] [--sticky|--no-sticky]\n"
"                       [--shadow|--no-shadow] [--profile probe|four|default]\n"
"  service del|show NAME          service list\n"
"  node add|set ID (--addr IP [--addr IP]... | --cname TARGET) [--region R]\n"
"                  [--isp I] [--capacity N] [--pool primary|standby]\n"
"                  [--admin up|down|drain|auto] [--probe \"URL [OPTS]\"]...\n"
"                  [--no-probes]\n"
"  node del|show ID               node list\n"
"  weight set SERVICE [--region R] [--isp I] NODE=W [NODE=W]...\n"
"  weight del SERVICE [--region R] [--isp I]\n"
"  weight list [SERVICE]\n"
"  explain SERVICE --client IP[/LEN] [--type A|AAAA]\n"
"  export                         apply FILE\n"
"  log [--since TIME|ID]          rollback [CHANGE-ID]\n"
"  metrics push NODE KEY=VALUE...  status [SERVICE]\n"
"  history NODE [--since TIME] [--dimensions]\n"
"  cutover add --region R [--isp I] [--node ID]... --start TIME --end TIME\n"
"              [--impact low|medium|high | --derate PCT] [--prewarm PCT] [--note TEXT]\n"
"  cutover list|show ID|del ID\n"
"TIME is RFC 3339 UTC (2026-12-01T02:00:00Z); --since ID starts at that change.\n", f);
}

/* Validation ------------------------------------------------------ */

/* Region and ISP names: short lowercase words ("*" is the wildcard of
 * weight rows, never a node's own). */
static int valid_word(const char *s, int star_ok)
{
	if (star_ok && strcmp(s, "*") == 0)
		return 1;
	size_t n = strlen(s);
	if (n == 0 || n >= GEO_NAME_MAX)
		return 0;
	for (const char *p = s; *p; p++)
		if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) ||
		      *p == '-' || *p == '_' || *p == '.'))
			return 0;
	return 1;
}

static int valid_node_id(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 63)
		return 0;
	for (const char *p = s; *p; p++)
		if (!(isalnum((unsigned char)*p) || *p == '-' || *p == '_' || *p == '.'))
			return 0;
	return 1;
}

/* A service name: a valid DNS name inside one of our zones (when the
 * configuration is known), not a zone apex.  Returns the canonical form
 * (lowercase, no final dot) in @out. */
static void check_service_name(const char *name, char *out, size_t size)
{
	uint8_t wire[256], low[256];
	char buf[1100];
	if (!dname_from_str(name, wire) || wire[0] == 0)
		die("service name '%s' is not a valid domain name", name);
	dname_copy_lower(low, wire);
	dname_to_str(low, buf, sizeof(buf));
	size_t l = strlen(buf);
	if (l > 1)
		buf[l - 1] = 0;
	if (strchr(buf, '|') || strchr(buf, '\\'))
		die("service name '%s' has characters that are not allowed", name);
	snprintf(out, size, "%s", buf);
	if (!g_conf)
		return;
	for (size_t i = 0; i < g_conf->nzones; i++) {
		if (dname_equal(low, g_conf->zones[i].dname))
			die("service name '%s' is the apex of zone %s: use a name below it",
			    name, g_conf->zones[i].name);
		if (dname_is_sub(low, g_conf->zones[i].dname))
			return;
	}
	die("service name '%s' is outside our zones (%s)", name,
	    g_conf->nzones ? g_conf->zones[0].name : "none configured");
}

static long parse_num(const char *opt, const char *v, long min, long max)
{
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (!*v || *end || errno || n < min || n > max)
		die("%s %s: must be a whole number from %ld to %ld", opt, v, min, max);
	return n;
}

static const char *one_of(const char *opt, const char *v, const char *const *set)
{
	for (; *set; set++)
		if (strcmp(v, *set) == 0)
			return *set;
	die("%s %s: not a valid choice", opt, v);
}

/* The health section's defaults (probe interval and timeout, settle). */
static health_conf_t g_hc;

/* Database --------------------------------------------------------- */

/* wdb_each() callbacks: collect values or keys into a JSON array. */
static int collect_value(const char *key, json_t *val, void *arr)
{
	(void)key;
	json_array_append(arr, val);
	return 0;
}

static int collect_key(const char *key, json_t *val, void *arr)
{
	(void)val;
	json_array_append_new(arr, json_string(key));
	return 0;
}

typedef struct {
	const char *id;
	json_t *rows;
} node_refs_t;

/* Collects the keys of the weight rows that name node nr->id. */
static int rows_using_node(const char *key, json_t *row, void *arg)
{
	node_refs_t *nr = arg;
	if (json_object_get(json_object_get(row, "weights"), nr->id))
		json_array_append_new(nr->rows, json_string(key));
	return 0;
}

typedef struct {
	const char *since_time;
	json_t *out;
} log_filter_t;

static int log_collect(int64_t id, json_t *rec, void *arg)
{
	log_filter_t *lf = arg;
	(void)id;
	const char *tm = json_string_value(json_object_get(rec, "time"));
	/* RFC 3339 UTC strings compare in time order. */
	if (lf->since_time && tm && strcmp(tm, lf->since_time) < 0)
		return 0;
	json_array_append(lf->out, rec);
	return 0;
}

static wdb_txn_t *begin(void)
{
	char err[512];
	wdb_txn_t *t = wdb_begin(g_db, g_actor, err, sizeof(err));
	if (!t)
		die("%s", err);
	return t;
}

static void commit(wdb_txn_t *t, const char *what)
{
	char err[512];
	int64_t id = wdb_commit(t, what, err, sizeof(err));
	if (id < 0)
		die("%s; nothing was changed", err);
	if (g_json)
		printf("{\"change\": %lld}\n", (long long)id);
	else
		printf("change %lld: %s\n", (long long)id, what);
}

static void print_json(json_t *j)
{
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
	puts(s);
	free(s);
}

/* service ----------------------------------------------------------- */

static const char *const all_down_set[] = { "open", "fallback", "empty", NULL };

static const char *const profile_set[] = { "probe", "four", "default", NULL };

static int cmd_service(int argc, char **argv)
{
	if (argc < 1)
		die("service: missing subcommand (add, set, del, show, list)");
	const char *sub = argv[0];
	if (strcmp(sub, "list") == 0) {
		wdb_txn_t *t = begin();
		json_t *all = json_array();
		wdb_each(t, WDB_SERVICE, NULL, collect_value, all);
		wdb_abort(t);
		if (g_json) {
			print_json(all);
		} else {
			printf("%-36s %6s %6s %7s %-8s %-6s %-6s %s\n", "SERVICE", "TTL",
			       "SHORT", "ANSWERS", "ALL-DOWN", "STICKY", "SHADOW", "PROFILE");
			size_t i;
			json_t *s;
			json_array_foreach(all, i, s)
				printf("%-36s %6lld %6lld %7lld %-8s %-6s %-6s %s\n",
				       json_string_value(json_object_get(s, "name")),
				       json_integer_value(json_object_get(s, "ttl")),
				       json_integer_value(json_object_get(s, "short_ttl")),
				       json_integer_value(json_object_get(s, "answers")),
				       json_string_value(json_object_get(s, "all_down")),
				       json_is_true(json_object_get(s, "sticky")) ? "yes" : "no",
				       json_is_true(json_object_get(s, "shadow")) ? "yes" : "no",
				       json_string_value(json_object_get(s, "profile")) ?: "default");
		}
		json_decref(all);
		return 0;
	}
	if (argc < 2)
		die("service %s: missing service name", sub);
	char name[1100];
	check_service_name(argv[1], name, sizeof(name));
	wdb_txn_t *t = begin();
	json_t *old = wdb_get(t, WDB_SERVICE, name);
	if (strcmp(sub, "show") == 0) {
		if (!old)
			die("service %s does not exist", name);
		print_json(old);
		json_decref(old);
		wdb_abort(t);
		return 0;
	}
	if (strcmp(sub, "del") == 0) {
		if (argc > 2)
			die("service del: unexpected argument '%s'", argv[2]);
		if (!old)
			die("service %s does not exist", name);
		/* Its weight rows go with it, in the same change. */
		char prefix[1200];
		snprintf(prefix, sizeof(prefix), "%s|", name);
		json_t *rows = json_array();
		wdb_each(t, WDB_WEIGHT, prefix, collect_key, rows);
		size_t i;
		json_t *k;
		json_array_foreach(rows, i, k)
			wdb_set(t, WDB_WEIGHT, json_string_value(k), NULL);
		json_decref(rows);
		wdb_set(t, WDB_SERVICE, name, NULL);
		json_decref(old);
		char what[1200];
		snprintf(what, sizeof(what), "service del %s", name);
		commit(t, what);
		return 0;
	}
	int add = strcmp(sub, "add") == 0;
	if (!add && strcmp(sub, "set") != 0)
		die("service: unknown subcommand '%s'", sub);
	if (add && old)
		die("service %s already exists (use 'service set')", name);
	if (!add && !old)
		die("service %s does not exist (use 'service add')", name);
	json_t *s = old ? json_deep_copy(old) : json_pack("{s:s, s:i, s:i, s:i, s:s, s:b, s:b}",
		"name", name, "ttl", 30, "short_ttl", 10, "answers", 1,
		"all_down", "open", "sticky", 0, "shadow", 0);
	json_decref(old);
	for (int i = 2; i < argc; i++) {
		const char *o = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(o, "--sticky") == 0) {
			json_object_set_new(s, "sticky", json_true());
			continue;
		}
		if (strcmp(o, "--no-sticky") == 0) {
			json_object_set_new(s, "sticky", json_false());
			continue;
		}
		if (strcmp(o, "--shadow") == 0 || strcmp(o, "--no-shadow") == 0) {
			/* S2-9: health verdicts are computed and logged but do
			 * not change this service's answers. */
			json_object_set_new(s, "shadow", json_boolean(o[2] == 's'));
			continue;
		}
		if (!v)
			die("service %s: %s needs a value", sub, o);
		i++;
		if (strcmp(o, "--profile") == 0) {
			/* The score profile of the nodes this service uses
			 * (S0-6 or S2-2); "default" follows health.profile. */
			if (strcmp(one_of(o, v, profile_set), "default") == 0)
				json_object_del(s, "profile");
			else
				json_object_set_new(s, "profile", json_string(v));
		} else if (strcmp(o, "--ttl") == 0)
			json_object_set_new(s, "ttl", json_integer(parse_num(o, v, 0, 604800)));
		else if (strcmp(o, "--short-ttl") == 0)
			json_object_set_new(s, "short_ttl", json_integer(parse_num(o, v, 0, 604800)));
		else if (strcmp(o, "--answers") == 0)
			json_object_set_new(s, "answers",
			                    json_integer(parse_num(o, v, 1, POLICY_MAX_ANSWERS)));
		else if (strcmp(o, "--all-down") == 0)
			json_object_set_new(s, "all_down", json_string(one_of(o, v, all_down_set)));
		else
			die("service %s: unknown option '%s'", sub, o);
	}
	if (json_integer_value(json_object_get(s, "short_ttl")) >
	    json_integer_value(json_object_get(s, "ttl")))
		die("service %s: --short-ttl %lld is longer than --ttl %lld", name,
		    json_integer_value(json_object_get(s, "short_ttl")),
		    json_integer_value(json_object_get(s, "ttl")));
	wdb_set(t, WDB_SERVICE, name, s);
	json_decref(s);
	char what[1200];
	snprintf(what, sizeof(what), "service %s %s", sub, name);
	commit(t, what);
	return 0;
}

/* node ------------------------------------------------------------- */

static const char *const pool_set[] = { "primary", "standby", NULL };
static const char *const admin_set[] = { "auto", "up", "down", "drain", NULL };

static void print_node_row(json_t *n)
{
	char addrs[512] = "";
	size_t i;
	json_t *a;
	json_array_foreach(json_object_get(n, "addrs"), i, a) {
		size_t l = strlen(addrs);
		snprintf(addrs + l, sizeof(addrs) - l, "%s%s", l ? "," : "",
		         json_string_value(a));
	}
	const char *cname = json_string_value(json_object_get(n, "cname"));
	printf("%-20s %-10s %-8s %-8s %-6s %8lld  %s\n",
	       json_string_value(json_object_get(n, "id")),
	       json_string_value(json_object_get(n, "region")),
	       json_string_value(json_object_get(n, "isp")),
	       json_string_value(json_object_get(n, "pool")),
	       json_string_value(json_object_get(n, "admin")),
	       json_integer_value(json_object_get(n, "capacity")),
	       cname ? cname : addrs);
}

static int cmd_node(int argc, char **argv)
{
	if (argc < 1)
		die("node: missing subcommand (add, set, del, show, list)");
	const char *sub = argv[0];
	if (strcmp(sub, "list") == 0) {
		wdb_txn_t *t = begin();
		json_t *all = json_array();
		wdb_each(t, WDB_NODE, NULL, collect_value, all);
		wdb_abort(t);
		if (g_json) {
			print_json(all);
		} else {
			printf("%-20s %-10s %-8s %-8s %-6s %8s  %s\n", "NODE", "REGION",
			       "ISP", "POOL", "ADMIN", "CAPACITY", "ADDRESSES");
			size_t i;
			json_t *n;
			json_array_foreach(all, i, n)
				print_node_row(n);
		}
		json_decref(all);
		return 0;
	}
	if (argc < 2)
		die("node %s: missing node id", sub);
	const char *id = argv[1];
	if (!valid_node_id(id))
		die("node id '%s': use 1 to 63 letters, digits, '-', '_' or '.'", id);
	wdb_txn_t *t = begin();
	json_t *old = wdb_get(t, WDB_NODE, id);
	if (strcmp(sub, "show") == 0) {
		if (!old)
			die("node %s does not exist", id);
		print_json(old);
		json_decref(old);
		wdb_abort(t);
		return 0;
	}
	char what[300];
	if (strcmp(sub, "del") == 0) {
		if (!old)
			die("node %s does not exist", id);
		json_t *rows = json_array();
		node_refs_t nr = { id, rows };
		wdb_each(t, WDB_WEIGHT, NULL, rows_using_node, &nr);
		if (json_array_size(rows)) {
			char *list = json_dumps(rows, JSON_COMPACT);
			die("node %s is used by weight row(s) %s; remove it there first",
			    id, list);
		}
		json_decref(rows);
		wdb_set(t, WDB_NODE, id, NULL);
		json_decref(old);
		snprintf(what, sizeof(what), "node del %s", id);
		commit(t, what);
		return 0;
	}
	int add = strcmp(sub, "add") == 0;
	if (!add && strcmp(sub, "set") != 0)
		die("node: unknown subcommand '%s'", sub);
	if (add && old)
		die("node %s already exists (use 'node set')", id);
	if (!add && !old)
		die("node %s does not exist (use 'node add')", id);
	json_t *n = old ? json_deep_copy(old) : json_pack("{s:s, s:[], s:n, s:s, s:s, s:i, s:s, s:s}",
		"id", id, "addrs", "cname", "region", "*", "isp", "*", "capacity", 0,
		"pool", "primary", "admin", "auto");
	json_decref(old);
	json_t *addrs = NULL, *probes = NULL;
	const char *cname = NULL;
	for (int i = 2; i < argc; i++) {
		const char *o = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(o, "--no-probes") == 0) {
			json_object_set_new(n, "probes", json_array());
			continue;
		}
		if (!v)
			die("node %s: %s needs a value", sub, o);
		i++;
		if (strcmp(o, "--addr") == 0) {
			struct in6_addr a6;
			struct in_addr a4;
			if (inet_pton(AF_INET, v, &a4) != 1 && inet_pton(AF_INET6, v, &a6) != 1)
				die("node %s: --addr %s is not an IPv4 or IPv6 address", id, v);
			if (!addrs)
				addrs = json_array();
			size_t fam = 0, j;
			json_t *a;
			int v6 = strchr(v, ':') != NULL;
			json_array_foreach(addrs, j, a)
				fam += (strchr(json_string_value(a), ':') != NULL) == v6;
			if (fam >= PLAN_MAX_ADDRS)
				die("node %s: at most %d addresses per family", id, PLAN_MAX_ADDRS);
			json_array_append_new(addrs, json_string(v));
		} else if (strcmp(o, "--cname") == 0) {
			uint8_t w[256];
			if (!dname_from_str(v, w) || w[0] == 0)
				die("node %s: --cname %s is not a valid domain name", id, v);
			cname = v;
		} else if (strcmp(o, "--region") == 0) {
			if (!valid_word(v, 0))
				die("node %s: --region %s: use a short lowercase name like cn-bj", id, v);
			json_object_set_new(n, "region", json_string(v));
		} else if (strcmp(o, "--isp") == 0) {
			if (!valid_word(v, 0))
				die("node %s: --isp %s: use a short lowercase name like ctcc", id, v);
			json_object_set_new(n, "isp", json_string(v));
		} else if (strcmp(o, "--capacity") == 0) {
			json_object_set_new(n, "capacity",
			                    json_integer(parse_num(o, v, 0, 1000000000)));
		} else if (strcmp(o, "--pool") == 0) {
			json_object_set_new(n, "pool", json_string(one_of(o, v, pool_set)));
		} else if (strcmp(o, "--admin") == 0) {
			const char *a = one_of(o, v, admin_set);
			const char *was = json_string_value(json_object_get(n, "admin"));
			if (!was || strcmp(was, a) != 0)
				/* S0-11, S1-8: answers of its rows carry the short
				 * TTL while the change settles. */
				json_object_set_new(n, "short_until",
				                    json_integer(time(NULL) + (json_int_t)g_hc.settle));
			json_object_set_new(n, "admin", json_string(a));
		} else if (strcmp(o, "--probe") == 0) {
			probe_spec_t ps;
			char perr[300], text[700];
			if (probe_parse(v, g_hc.interval, g_hc.timeout, &ps, perr, sizeof(perr)))
				die("node %s: --probe: %s", id, perr);
			probe_format(&ps, text, sizeof(text));
			if (!probes)
				probes = json_array();
			if (json_array_size(probes) >= 3)
				die("node %s: at most 3 probes per node", id);
			json_array_append_new(probes, json_string(text));
		} else {
			die("node %s: unknown option '%s'", sub, o);
		}
	}
	if (addrs && cname)
		die("node %s: give either --addr or --cname, not both", id);
	if (probes)
		json_object_set_new(n, "probes", probes);
	if (addrs) {
		json_object_set_new(n, "addrs", addrs);
		json_object_set_new(n, "cname", json_null());
	} else if (cname) {
		char buf[1100];
		uint8_t w[256];
		dname_from_str(cname, w);
		dname_to_str(w, buf, sizeof(buf));
		json_object_set_new(n, "cname", json_string(buf));
		json_object_set_new(n, "addrs", json_array());
	}
	if (!json_array_size(json_object_get(n, "addrs")) &&
	    !json_is_string(json_object_get(n, "cname")))
		die("node %s: needs --addr IP (repeatable) or --cname TARGET", id);
	wdb_set(t, WDB_NODE, id, n);
	json_decref(n);
	snprintf(what, sizeof(what), "node %s %s", sub, id);
	commit(t, what);
	return 0;
}

/* weight ----------------------------------------------------------- */

static void row_opts(const char *cmd, int *i, int argc, char **argv,
                     const char **region, const char **isp)
{
	while (*i < argc && strncmp(argv[*i], "--", 2) == 0) {
		const char *o = argv[*i];
		if (*i + 1 >= argc)
			die("%s: %s needs a value", cmd, o);
		const char *v = argv[*i + 1];
		if (strcmp(o, "--region") == 0) {
			if (!valid_word(v, 1))
				die("%s: --region %s: use a short lowercase name or *", cmd, v);
			*region = v;
		} else if (strcmp(o, "--isp") == 0) {
			if (!valid_word(v, 1))
				die("%s: --isp %s: use a short lowercase name or *", cmd, v);
			*isp = v;
		} else {
			die("%s: unknown option '%s'", cmd, o);
		}
		*i += 2;
	}
}

static void print_row(const char *key, json_t *row)
{
	printf("%-36s %-10s %-8s ",
	       json_string_value(json_object_get(row, "service")),
	       json_string_value(json_object_get(row, "region")),
	       json_string_value(json_object_get(row, "isp")));
	const char *id;
	json_t *w;
	int first = 1;
	json_object_foreach(json_object_get(row, "weights"), id, w) {
		printf("%s%s=%lld", first ? "" : " ", id, json_integer_value(w));
		first = 0;
	}
	putchar('\n');
	(void)key;
}

static int cmd_weight(int argc, char **argv)
{
	if (argc < 1)
		die("weight: missing subcommand (set, del, list)");
	const char *sub = argv[0];
	if (strcmp(sub, "list") == 0) {
		char name[1100], prefix[1200] = "";
		if (argc > 1) {
			check_service_name(argv[1], name, sizeof(name));
			snprintf(prefix, sizeof(prefix), "%s|", name);
		}
		wdb_txn_t *t = begin();
		json_t *all = json_array();
		wdb_each(t, WDB_WEIGHT, *prefix ? prefix : NULL, collect_value, all);
		wdb_abort(t);
		if (g_json) {
			print_json(all);
		} else {
			printf("%-36s %-10s %-8s %s\n", "SERVICE", "REGION", "ISP", "WEIGHTS");
			size_t i;
			json_t *r;
			json_array_foreach(all, i, r)
				print_row(NULL, r);
		}
		json_decref(all);
		return 0;
	}
	int set = strcmp(sub, "set") == 0;
	if (!set && strcmp(sub, "del") != 0)
		die("weight: unknown subcommand '%s'", sub);
	if (argc < 2)
		die("weight %s: missing service name", sub);
	char name[1100];
	check_service_name(argv[1], name, sizeof(name));
	const char *region = "*", *isp = "*";
	int i = 2;
	row_opts("weight", &i, argc, argv, &region, &isp);
	wdb_txn_t *t = begin();
	json_t *svc = wdb_get(t, WDB_SERVICE, name);
	if (!svc)
		die("service %s does not exist (add it with 'service add')", name);
	json_decref(svc);
	char key[1300];
	wdb_row_key(key, sizeof(key), name, region, isp);
	char what[1500];
	if (!set) {
		if (i < argc)
			die("weight del: unexpected argument '%s'", argv[i]);
		json_t *old = wdb_get(t, WDB_WEIGHT, key);
		if (!old)
			die("weight row %s --region %s --isp %s does not exist", name, region, isp);
		json_decref(old);
		wdb_set(t, WDB_WEIGHT, key, NULL);
		snprintf(what, sizeof(what), "weight del %s region=%s isp=%s", name, region, isp);
		commit(t, what);
		return 0;
	}
	if (i >= argc)
		die("weight set: give at least one NODE=WEIGHT");
	json_t *weights = json_object();
	for (; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		if (!eq)
			die("weight set: '%s' is not NODE=WEIGHT", argv[i]);
		*eq = 0;
		const char *id = argv[i];
		if (!valid_node_id(id))
			die("weight set: '%s' is not a valid node id", id);
		char opt[100];
		snprintf(opt, sizeof(opt), "weight of %s", id);
		long w = parse_num(opt, eq + 1, 0, 1000000);
		json_t *node = wdb_get(t, WDB_NODE, id);
		if (!node)
			die("weight set: node %s does not exist (add it with 'node add')", id);
		json_decref(node);
		if (json_object_get(weights, id))
			die("weight set: node %s is given twice", id);
		if (json_object_size(weights) >= PLAN_MAX_NODES)
			die("weight set: at most %d nodes per row", PLAN_MAX_NODES);
		json_object_set_new(weights, id, json_integer(w));
	}
	json_t *row = json_pack("{s:s, s:s, s:s, s:o}", "service", name,
	                        "region", region, "isp", isp, "weights", weights);
	wdb_set(t, WDB_WEIGHT, key, row);
	json_decref(row);
	snprintf(what, sizeof(what), "weight set %s region=%s isp=%s", name, region, isp);
	commit(t, what);
	return 0;
}

/* explain ----------------------------------------------------------- */

/* The service object @name, read in a short read-only transaction. */
static json_t *wdb_get_ro(const char *name)
{
	wdb_txn_t *t = wdb_begin_read(g_db);
	json_t *s = t ? wdb_get(t, WDB_SERVICE, name) : NULL;
	wdb_abort(t);
	return s;
}

static int cmd_explain(int argc, char **argv)
{
	if (argc < 1)
		die("explain: missing service name");
	char name[1100];
	check_service_name(argv[0], name, sizeof(name));
	const char *client = NULL;
	uint16_t qtype = RR_A;
	for (int i = 1; i < argc; i += 2) {
		if (i + 1 >= argc)
			die("explain: %s needs a value", argv[i]);
		if (strcmp(argv[i], "--client") == 0)
			client = argv[i + 1];
		else if (strcmp(argv[i], "--type") == 0) {
			if (strcasecmp(argv[i + 1], "A") == 0)
				qtype = RR_A;
			else if (strcasecmp(argv[i + 1], "AAAA") == 0)
				qtype = RR_AAAA;
			else
				die("explain: --type %s: use A or AAAA", argv[i + 1]);
		} else
			die("explain: unknown option '%s'", argv[i]);
	}
	if (!client)
		die("explain: --client IP[/LEN] is required");
	if (!g_conf)
		die("explain needs the configuration (-c) for the GeoIP settings");

	/* --client IP/LEN is read as an ECS option, a bare IP as the
	 * resolver's address: exactly what the server would see. */
	char ip[64];
	snprintf(ip, sizeof(ip), "%s", client);
	char *slash = strchr(ip, '/');
	long plen = -1;
	if (slash) {
		*slash = 0;
		plen = parse_num("--client prefix", slash + 1, 0, 128);
	}
	edns_t e;
	memset(&e, 0, sizeof(e));
	struct sockaddr_storage src;
	memset(&src, 0, sizeof(src));
	struct in_addr a4;
	struct in6_addr a6;
	if (inet_pton(AF_INET, ip, &a4) == 1) {
		if (plen > 32)
			die("explain: --client %s: an IPv4 prefix is at most 32", client);
		((struct sockaddr_in *)&src)->sin_family = AF_INET;
		((struct sockaddr_in *)&src)->sin_addr = a4;
		e.ecs_family = 1;
		memcpy(e.ecs_addr, &a4, 4);
	} else if (inet_pton(AF_INET6, ip, &a6) == 1) {
		((struct sockaddr_in6 *)&src)->sin6_family = AF_INET6;
		((struct sockaddr_in6 *)&src)->sin6_addr = a6;
		e.ecs_family = 2;
		memcpy(e.ecs_addr, &a6, 16);
	} else {
		die("explain: --client %s is not an IP address", client);
	}
	if (plen >= 0) {
		e.present = e.ecs = 1;
		e.ecs_source = (uint8_t)plen;
		for (unsigned b = (unsigned)plen; b < 128; b++)
			e.ecs_addr[b / 8] &= (uint8_t)~(0x80u >> (b % 8));
	}
	char err[1024];
	geo_t *geo = geo_open(g_conf, err, sizeof(err));
	if (!geo)
		die("%s", err);
	gslb_client_t c;
	gslb_client_from(&c, (struct sockaddr *)&src,
	                 e.ecs && geo_use_ecs(geo) ? e.ecs_family : 0,
	                 e.ecs_addr, e.ecs_source);
	wdb_reader_t *r = wdb_reader_new(g_db);
	static gslb_result_t g;
	g.geo.want_network = 1; /* explain shows the network */
	uint64_t rng = (uint64_t)time(NULL) ^ (uint64_t)getpid() << 32;
	int rc = gslb_resolve(r, geo, name, strlen(name), qtype, &c,
	                      (uint32_t)time(NULL), &rng, &g);
	if (rc == GSLB_ENOENT)
		die("service %s does not exist", name);
	if (rc)
		die("cannot read the weight store");

	/* Reasons come from the node objects themselves. */
	wdb_txn_t *t = begin();
	json_t *out = json_object();
	char caddr[64];
	if (c.addr.ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&c.addr)->sin6_addr, caddr, sizeof(caddr));
	else
		inet_ntop(AF_INET, &((struct sockaddr_in *)&c.addr)->sin_addr, caddr, sizeof(caddr));
	static const char *const srcs[] = { "none", "nets file", "GeoIP database" };
	json_object_set_new(out, "service", json_string(name));
	json_object_set_new(out, "client", json_pack("{s:s, s:s}", "address", caddr,
		"from", c.from_ecs ? "ECS option" : "resolver address"));
	json_object_set_new(out, "location", json_pack("{s:s, s:s, s:s, s:s, s:i}",
		"region", g.geo.region, "isp", g.geo.isp, "network",
		g.geo.network[0] ? g.geo.network : "-", "source", srcs[g.geo.source],
		"prefix_len", g.geo.prefix_len));
	json_object_set_new(out, "row", json_string(gslb_row_name(g.row)));
	json_t *cands = json_array();
	for (unsigned i = 0; g.row != GSLB_ROW_NONE && i < g.plan.n; i++) {
		const plan_node_t *pn = &g.plan.node[i];
		char id[80];
		snprintf(id, sizeof(id), "%.*s", pn->id_len, pn->id);
		json_t *node = wdb_get(t, WDB_NODE, id);
		const char *why = "usable";
		if (!(pn->flags & PLAN_USABLE)) {
			const char *admin = node ? json_string_value(json_object_get(node, "admin")) : NULL;
			if (pn->weight == 0)
				why = "weight 0";
			else if (admin && strcmp(admin, "down") == 0)
				why = "admin down";
			else if (admin && strcmp(admin, "drain") == 0)
				why = "admin drain";
			else if (json_is_string(json_object_get(node, "pool")) &&
			         strcmp(json_string_value(json_object_get(node, "pool")), "standby") == 0)
				why = "standby, not promoted";
			else
				why = "unhealthy";
		} else if (pn->weight == 0) {
			why = "weight 0";
		} else if ((pn->flags & PLAN_CNAME) && qtype) {
			why = "usable (CNAME)";
		} else if ((qtype == RR_A && !pn->n4) || (qtype == RR_AAAA && !pn->n6)) {
			why = "usable, but has no address of the asked type";
		}
		char whybuf[200];
		json_t *hh = wdb_get(t, WDB_HEALTH, id);
		const char *ph = json_string_value(json_object_get(hh, "cutover_phase"));
		if (ph) {
			snprintf(whybuf, sizeof(whybuf), "%s; cutover %s %s (weight %lld%%, pre-warm %lld%%)",
			         why, json_string_value(json_object_get(hh, "cutover_window")), ph,
			         json_integer_value(json_object_get(hh, "cutover_pct")),
			         json_integer_value(json_object_get(hh, "prewarm_pct")));
			why = whybuf;
		}
		const char *hs = json_string_value(json_object_get(hh, "state"));
		if (hs && strcmp(why, "unhealthy") == 0) {
			snprintf(whybuf, sizeof(whybuf), "health %s: %s", hs,
			         json_string_value(json_object_get(hh, "reason")));
			why = whybuf;
		}
		int picked = 0;
		for (unsigned k = 0; k < g.npicked; k++)
			picked |= g.picked[k] == i;
		json_array_append_new(cands, json_pack("{s:s, s:i, s:s, s:b}",
			"node", id, "weight", (json_int_t)pn->weight, "status", why,
			"picked", picked));
		json_decref(hh);
		json_decref(node);
	}
	wdb_abort(t);
	json_object_set_new(out, "candidates", cands);
	json_object_set_new(out, "failed_open", json_boolean(g.failed_open));
	json_object_set_new(out, "ttl", json_integer(g.ttl));
	json_object_set_new(out, "ttl_reason", json_string(g.short_ttl ?
		"short TTL: a node of the row changed state recently" : "the service's TTL"));
	json_object_set_new(out, "ecs_scope", json_integer(c.from_ecs ? g.scope : 0));
	json_object_set_new(out, "sticky", json_boolean(g.svc.flags & SVC_STICKY));
	json_t *svcj = wdb_get_ro(name);
	int shadow = json_is_true(json_object_get(svcj, "shadow"));
	json_decref(svcj);
	json_object_set_new(out, "shadow", json_boolean(shadow));
	if (g_json) {
		print_json(out);
	} else {
		printf("service   %s\n", name);
		printf("client    %s (%s)\n", caddr, c.from_ecs ? "ECS option" : "resolver address");
		printf("location  region=%s isp=%s network=%s source=%s\n", g.geo.region,
		       g.geo.isp, g.geo.network[0] ? g.geo.network : "-", srcs[g.geo.source]);
		printf("row       %s%s\n", gslb_row_name(g.row),
		       g.row == GSLB_ROW_NONE ? " (no weight row: NODATA)" : "");
		size_t i;
		json_t *cd;
		json_array_foreach(cands, i, cd)
			printf("  %-20s weight %-8lld %s%s\n",
			       json_string_value(json_object_get(cd, "node")),
			       json_integer_value(json_object_get(cd, "weight")),
			       json_string_value(json_object_get(cd, "status")),
			       json_is_true(json_object_get(cd, "picked")) ? "  <- picked" : "");
		if (g.failed_open)
			printf("no usable node: answering as if all were healthy (all-down open)\n");
		if (g.row != GSLB_ROW_NONE && !g.npicked)
			printf("no usable node: NODATA (all-down empty)\n");
		printf("ttl       %u (%s)\n", g.ttl, g.short_ttl ?
		       "short: a node of the row changed state recently" : "the service's TTL");
		printf("ecs scope %u%s\n", c.from_ecs ? g.scope : 0,
		       c.from_ecs ? "" : " (no ECS in the query)");
		if (shadow)
			printf("shadow    health verdicts are logged, not applied (S2-9)\n");
		if (g.svc.flags & SVC_STICKY)
			printf("sticky    the same client network keeps its node\n");
		else
			printf("pick      weighted random: another query may get another node\n");
	}
	json_decref(out);
	wdb_reader_free(r);
	geo_close(geo);
	return 0;
}

/* export / apply ------------------------------------------------------ */

static json_t *export_all(wdb_txn_t *t)
{
	json_t *out = json_pack("{s:i, s:[], s:[], s:[]}", "version", WDB_SCHEMA,
	                        "services", "nodes", "weights");
	static const char *const keys[] = { "services", "nodes", "weights" };
	for (int k = 0; k < 3; k++) {
		wdb_each(t, (wdb_kind_t)k, NULL, collect_value, json_object_get(out, keys[k]));
	}
	return out;
}

static int cmd_export(int argc, char **argv)
{
	(void)argv;
	if (argc)
		die("export: unexpected argument '%s'", argv[0]);
	wdb_txn_t *t = begin();
	json_t *all = export_all(t);
	wdb_abort(t);
	print_json(all);
	json_decref(all);
	return 0;
}

/* Validates one object of an apply file; dies naming it. */
static void apply_check(wdb_kind_t kind, json_t *o, size_t idx, char *key,
                        size_t keysize)
{
	static const char *const what[] = { "services", "nodes", "weights" };
	if (!json_is_object(o))
		die("apply: %s[%zu] is not an object", what[kind], idx);
	if (kind == WDB_SERVICE) {
		const char *n = json_string_value(json_object_get(o, "name"));
		if (!n)
			die("apply: services[%zu] has no name", idx);
		check_service_name(n, key, keysize);
		json_object_set_new(o, "name", json_string(key));
		static const char *const nums[] = { "ttl", "short_ttl", "answers" };
		static const long defs[] = { 30, 10, 1 };
		static const long maxs[] = { 604800, 604800, POLICY_MAX_ANSWERS };
		for (int i = 0; i < 3; i++) {
			json_t *v = json_object_get(o, nums[i]);
			if (!v)
				json_object_set_new(o, nums[i], json_integer(defs[i]));
			else if (!json_is_integer(v) || json_integer_value(v) < (i == 2) ||
			         json_integer_value(v) > maxs[i])
				die("apply: service %s: %s must be a number from %d to %ld",
				    key, nums[i], i == 2, maxs[i]);
		}
		const char *ad = json_string_value(json_object_get(o, "all_down"));
		one_of("all_down", ad ? ad : "open", all_down_set);
		if (!ad)
			json_object_set_new(o, "all_down", json_string("open"));
		if (!json_object_get(o, "sticky"))
			json_object_set_new(o, "sticky", json_false());
		if (!json_object_get(o, "shadow"))
			json_object_set_new(o, "shadow", json_false());
		if (!json_is_boolean(json_object_get(o, "sticky")) ||
		    !json_is_boolean(json_object_get(o, "shadow")))
			die("apply: service %s: sticky and shadow must be true or false", key);
		if (json_integer_value(json_object_get(o, "short_ttl")) >
		    json_integer_value(json_object_get(o, "ttl")))
			die("apply: service %s: short_ttl is longer than ttl", key);
		json_t *pf = json_object_get(o, "profile");
		const char *pv = json_string_value(pf);
		if (pf && (!pv || (strcmp(pv, "probe") != 0 && strcmp(pv, "four") != 0)))
			die("apply: service %s: profile must be \"probe\" or \"four\" "
			    "(leave it out for the default)", key);
	} else if (kind == WDB_NODE) {
		const char *id = json_string_value(json_object_get(o, "id"));
		if (!id || !valid_node_id(id))
			die("apply: nodes[%zu]: missing or bad id", idx);
		snprintf(key, keysize, "%s", id);
		json_t *addrs = json_object_get(o, "addrs");
		size_t i;
		json_t *a;
		json_array_foreach(addrs, i, a) {
			struct in_addr a4;
			struct in6_addr a6;
			const char *s = json_string_value(a);
			if (!s || (inet_pton(AF_INET, s, &a4) != 1 && inet_pton(AF_INET6, s, &a6) != 1))
				die("apply: node %s: bad address in addrs", id);
		}
		const char *cn = json_string_value(json_object_get(o, "cname"));
		uint8_t w[256];
		if (cn && (!dname_from_str(cn, w) || !w[0]))
			die("apply: node %s: bad cname", id);
		if (!json_array_size(addrs) && !cn)
			die("apply: node %s: needs addrs or cname", id);
		if (json_array_size(addrs) && cn)
			die("apply: node %s: addrs and cname exclude each other", id);
		static const char *const words[] = { "region", "isp" };
		for (int k = 0; k < 2; k++) {
			const char *v = json_string_value(json_object_get(o, words[k]));
			if (!v)
				json_object_set_new(o, words[k], json_string("*"));
			else if (strcmp(v, "*") != 0 && !valid_word(v, 0))
				die("apply: node %s: bad %s '%s'", id, words[k], v);
		}
		const char *pool = json_string_value(json_object_get(o, "pool"));
		one_of("pool", pool ? pool : "primary", pool_set);
		const char *admin = json_string_value(json_object_get(o, "admin"));
		one_of("admin", admin ? admin : "auto", admin_set);
		if (!pool)
			json_object_set_new(o, "pool", json_string("primary"));
		if (!admin)
			json_object_set_new(o, "admin", json_string("auto"));
		if (!json_object_get(o, "addrs"))
			json_object_set_new(o, "addrs", json_array());
		if (!json_object_get(o, "cname"))
			json_object_set_new(o, "cname", json_null());
		if (!json_object_get(o, "capacity"))
			json_object_set_new(o, "capacity", json_integer(0));
		json_t *pr;
		json_array_foreach(json_object_get(o, "probes"), i, pr) {
			probe_spec_t ps;
			char perr[300];
			if (!json_is_string(pr) || probe_parse(json_string_value(pr), g_hc.interval,
			                                       g_hc.timeout, &ps, perr, sizeof(perr)))
				die("apply: node %s: probe: %s", id,
				    json_is_string(pr) ? perr : "not a string");
		}
	} else {
		const char *svc = json_string_value(json_object_get(o, "service"));
		const char *r0 = json_string_value(json_object_get(o, "region"));
		const char *i0 = json_string_value(json_object_get(o, "isp"));
		if (!svc)
			die("apply: weights[%zu] has no service", idx);
		char name[1100], reg[GEO_NAME_MAX + 1], isp[GEO_NAME_MAX + 1];
		check_service_name(svc, name, sizeof(name));
		/* Copies: the object's strings are replaced below. */
		snprintf(reg, sizeof(reg), "%s", r0 ? r0 : "*");
		snprintf(isp, sizeof(isp), "%s", i0 ? i0 : "*");
		if (!valid_word(reg, 1) || !valid_word(isp, 1))
			die("apply: weights[%zu]: bad region or isp", idx);
		json_object_set_new(o, "service", json_string(name));
		json_object_set_new(o, "region", json_string(reg));
		json_object_set_new(o, "isp", json_string(isp));
		json_t *ws = json_object_get(o, "weights");
		if (!json_is_object(ws) || !json_object_size(ws))
			die("apply: weight row %s %s %s: weights must map node ids to numbers",
			    name, reg, isp);
		const char *id;
		json_t *w;
		json_object_foreach(ws, id, w)
			if (!json_is_integer(w) || json_integer_value(w) < 0 ||
			    json_integer_value(w) > 1000000)
				die("apply: weight row %s %s %s: weight of %s must be 0 to 1000000",
				    name, reg, isp, id);
		wdb_row_key(key, keysize, name, reg, isp);
	}
}

static int cmd_apply(int argc, char **argv)
{
	if (argc != 1)
		die("apply: give exactly one FILE (JSON, as written by export)");
	json_error_t je;
	json_t *in = json_load_file(argv[0], 0, &je);
	if (!in && je.line > 0)
		die("apply: %s:%d: %s", argv[0], je.line, je.text);
	if (!in)
		die("apply: %s", je.text);
	if (!json_is_object(in))
		die("apply: %s: the top level must be an object", argv[0]);
	wdb_txn_t *t = begin();
	static const char *const keys[] = { "services", "nodes", "weights" };
	json_t *want[3];
	for (int k = 0; k < 3; k++) {
		want[k] = json_object();
		json_t *arr = json_object_get(in, keys[k]);
		if (arr && !json_is_array(arr))
			die("apply: %s: '%s' must be a list", argv[0], keys[k]);
		size_t i;
		json_t *o;
		json_array_foreach(arr, i, o) {
			char key[1300];
			apply_check((wdb_kind_t)k, o, i, key, sizeof(key));
			if (json_object_get(want[k], key))
				die("apply: %s: %s '%s' appears twice", argv[0], keys[k], key);
			json_object_set(want[k], key, o);
		}
	}
	/* Make the store equal to the file: delete what it lacks, write
	 * what differs; references are checked when plans are rebuilt. */
	unsigned changed = 0;
	for (int k = 2; k >= 0; k--) {
		json_t *have = json_array();
		wdb_each(t, (wdb_kind_t)k, NULL, collect_key, have);
		size_t i;
		json_t *key;
		json_array_foreach(have, i, key)
			if (!json_object_get(want[k], json_string_value(key))) {
				wdb_set(t, (wdb_kind_t)k, json_string_value(key), NULL);
				changed++;
			}
		json_decref(have);
	}
	for (int k = 0; k < 3; k++) {
		const char *key;
		json_t *o;
		json_object_foreach(want[k], key, o) {
			json_t *old = wdb_get(t, (wdb_kind_t)k, key);
			if (!old || !json_equal(old, o)) {
				wdb_set(t, (wdb_kind_t)k, key, o);
				changed++;
			}
			json_decref(old);
		}
		json_decref(want[k]);
	}
	json_decref(in);
	if (!changed) {
		wdb_abort(t);
		printf("apply: the store already equals %s; nothing to change\n", argv[0]);
		return 0;
	}
	char what[1200];
	snprintf(what, sizeof(what), "apply %s (%u objects)", argv[0], changed);
	commit(t, what);
	return 0;
}

/* log / rollback ------------------------------------------------------ */

static int cmd_log(int argc, char **argv)
{
	int64_t since_id = 0;
	const char *since_time = NULL;
	for (int i = 0; i < argc; i += 2) {
		if (strcmp(argv[i], "--since") != 0 || i + 1 >= argc)
			die("log: usage: log [--since TIME|ID]");
		const char *v = argv[i + 1];
		if (isdigit((unsigned char)v[0]) && !strchr(v, '-'))
			since_id = parse_num("--since", v, 1, INT32_MAX) - 1;
		else
			since_time = v;
	}
	json_t *all = json_array();
	log_filter_t lf = { since_time, all };
	wdb_audit_each(g_db, since_id, log_collect, &lf);
	if (g_json) {
		print_json(all);
	} else {
		size_t i;
		json_t *r;
		json_array_foreach(all, i, r)
			printf("%5lld  %s  %-16s %s\n",
			       json_integer_value(json_object_get(r, "id")),
			       json_string_value(json_object_get(r, "time")),
			       json_string_value(json_object_get(r, "actor")),
			       json_string_value(json_object_get(r, "what")));
	}
	json_decref(all);
	return 0;
}

static int cmd_rollback(int argc, char **argv)
{
	int64_t id = argc > 0 ? parse_num("rollback", argv[0], 1, INT32_MAX)
	                      : wdb_audit_last(g_db);
	if (argc > 1)
		die("rollback: unexpected argument '%s'", argv[1]);
	if (id <= 0)
		die("rollback: there is no change to roll back");
	json_t *rec = wdb_audit_get(g_db, id);
	if (!rec)
		die("rollback: change %lld does not exist", (long long)id);
	json_t *changes = json_object_get(rec, "changes");
	if (!json_array_size(changes))
		die("rollback: change %lld changed nothing", (long long)id);
	wdb_txn_t *t = begin();
	/* Undo in reverse order; a later change to the same object makes the
	 * undo ambiguous, so it is refused. */
	for (size_t i = json_array_size(changes); i-- > 0;) {
		json_t *c = json_array_get(changes, i);
		const char *kn = json_string_value(json_object_get(c, "kind"));
		const char *key = json_string_value(json_object_get(c, "key"));
		wdb_kind_t kind;
		if (strcmp(kn, "service") == 0)
			kind = WDB_SERVICE;
		else if (strcmp(kn, "node") == 0)
			kind = WDB_NODE;
		else if (strcmp(kn, "weight") == 0)
			kind = WDB_WEIGHT;
		else if (strcmp(kn, "cutover") == 0)
			kind = WDB_CUTOVER;
		else
			die("rollback: change %lld is a health decision; set the node's "
			    "admin state instead", (long long)id);
		json_t *now = wdb_get(t, kind, key);
		json_t *after = json_object_get(c, "after");
		int same = (json_is_null(after) && !now) ||
		           (now && json_equal(now, after));
		json_decref(now);
		if (!same)
			die("rollback: %s %s changed again after change %lld; roll back the later change first",
			    kn, key, (long long)id);
		json_t *before = json_object_get(c, "before");
		wdb_set(t, kind, key, json_is_null(before) ? NULL : before);
	}
	json_decref(rec);
	char what[200];
	snprintf(what, sizeof(what), "rollback %lld", (long long)id);
	commit(t, what);
	return 0;
}

/* cutover ----------------------------------------------------------------- */

static int has_region(const char *key, json_t *node, void *arg)
{
	(void)key;
	const char *r = json_string_value(json_object_get(node, "region"));
	return r && strcmp(r, arg) == 0;
}

static void print_window(json_t *w)
{
	char nodes[300] = "";
	size_t i;
	json_t *n;
	json_array_foreach(json_object_get(w, "nodes"), i, n) {
		size_t l = strlen(nodes);
		snprintf(nodes + l, sizeof(nodes) - l, "%s%s", l ? "," : "", json_string_value(n));
	}
	cutover_phase_t ph = cutover_window_phase(&g_hc.cut, w, time(NULL));
	printf("%-6s %-8s %-6s %-22s %-22s %6lld%% %6lld%%  %-11s %s%s%s\n",
	       json_string_value(json_object_get(w, "id")),
	       json_string_value(json_object_get(w, "region")),
	       json_string_value(json_object_get(w, "isp")),
	       json_string_value(json_object_get(w, "start_text")),
	       json_string_value(json_object_get(w, "end_text")),
	       json_integer_value(json_object_get(w, "derate_pct")),
	       json_integer_value(json_object_get(w, "prewarm_pct")),
	       cutover_phase_name(ph), nodes, *nodes ? " " : "",
	       json_string_value(json_object_get(w, "note")) ?: "");
}

/* metrics / status / history ------------------------------------------- */

static int cmd_metrics(int argc, char **argv)
{
	if (argc < 1 || strcmp(argv[0], "push") != 0)
		die("metrics: usage: metrics push NODE KEY=VALUE...");
	if (argc < 3)
		die("metrics push: give a node and at least one KEY=VALUE");
	const char *id = argv[1];
	wdb_txn_t *t = begin();
	json_t *node = wdb_get(t, WDB_NODE, id);
	if (!node)
		die("metrics push: node %s does not exist", id);
	json_decref(node);
	json_t *m = wdb_get(t, WDB_METRICS, id);
	if (!m)
		m = json_object();
	json_int_t now = time(NULL);
	for (int i = 2; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		if (!eq)
			die("metrics push: '%s' is not KEY=VALUE", argv[i]);
		*eq = 0;
		int k = score_metric_parse(argv[i]);
		if (k < 0) {
			char known[400] = "";
			for (int j = 0; j < METRIC_COUNT; j++) {
				size_t l = strlen(known);
				snprintf(known + l, sizeof(known) - l, "%s%s", j ? ", " : "",
				         score_metric_name((metric_t)j));
			}
			die("metrics push: unknown metric '%s' (known: %s)", argv[i], known);
		}
		char *end;
		errno = 0;
		double v = strtod(eq + 1, &end);
		if (!eq[1] || *end || errno || score_metric_check((metric_t)k, v))
			die("metrics push: %s=%s: value out of range", argv[i], eq + 1);
		json_t *e = json_pack("{s:f, s:I}", "value", v, "time", now);
		if (k == METRIC_FAILURE_RATE && v > SCORE_FAILURE_RATE_FAULT_PCT) {
			/* S1-2: remember since when the rate has been high. */
			json_t *prev = json_object_get(m, argv[i]);
			json_int_t since = json_integer_value(json_object_get(prev, "high_since"));
			json_object_set_new(e, "high_since", json_integer(since ? since : now));
		}
		json_object_set_new(m, argv[i], e);
	}
	wdb_set(t, WDB_METRICS, id, m);
	json_decref(m);
	char err[512];
	if (wdb_commit(t, "metrics", err, sizeof(err)) < 0)
		die("%s", err);
	if (!g_json)
		printf("metrics of %s stored\n", id);
	return 0;
}

static const char *ago(uint32_t t, char *buf, size_t size)
{
	uint32_t now = (uint32_t)time(NULL);
	if (!t)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%us", now > t ? now - t : 0);
	return buf;
}

static int cmd_status(int argc, char **argv)
{
	char name[1100] = "";
	if (argc > 1)
		die("status: unexpected argument '%s'", argv[1]);
	if (argc == 1)
		check_service_name(argv[0], name, sizeof(name));
	wdb_txn_t *t = begin();
	json_t *out = json_pack("{s:[], s:[]}", "nodes", "rows");
	json_t *nodes = json_array();
	wdb_each(t, WDB_NODE, NULL, collect_value, nodes);
	json_t *rows = json_array();
	char prefix[1200];
	snprintf(prefix, sizeof(prefix), "%s|", name);
	wdb_each(t, WDB_WEIGHT, *name ? prefix : NULL, collect_value, rows);
	/* With a service, only its nodes. */
	json_t *want = json_object();
	size_t i;
	json_t *r;
	json_array_foreach(rows, i, r) {
		const char *id;
		json_t *w;
		json_object_foreach(json_object_get(r, "weights"), id, w)
			json_object_set_new(want, id, json_true());
	}
	json_t *n;
	json_array_foreach(nodes, i, n) {
		const char *id = json_string_value(json_object_get(n, "id"));
		if (*name && !json_object_get(want, id))
			continue;
		json_t *h = wdb_get(t, WDB_HEALTH, id);
		json_t *st = wdb_get(t, WDB_STATUS, id);
		json_t *e = json_pack("{s:s, s:O, s:O, s:O, s:O}", "node", id,
			"admin", json_object_get(n, "admin"), "pool", json_object_get(n, "pool"),
			"health", h ? h : json_null(), "status", st ? st : json_null());
		json_array_append_new(json_object_get(out, "nodes"), e);
		json_decref(h);
		json_decref(st);
	}
	/* Rows with their effective weights, from the plans the server reads. */
	wdb_reader_t *rd = wdb_reader_new(g_db);
	json_array_foreach(rows, i, r) {
		const char *svc = json_string_value(json_object_get(r, "service"));
		const char *reg = json_string_value(json_object_get(r, "region"));
		const char *isp = json_string_value(json_object_get(r, "isp"));
		const uint8_t *d;
		size_t dl;
		static plan_t p;
		json_t *members = json_array();
		if (rd && wdb_plan(rd, svc, strlen(svc), reg, isp, &d, &dl) == 0 &&
		    plan_decode(d, dl, &p) == 0)
			for (unsigned k = 0; k < p.n; k++) {
				char nid[80];
				snprintf(nid, sizeof(nid), "%.*s", p.node[k].id_len, p.node[k].id);
				json_t *cfg = json_object_get(json_object_get(r, "weights"), nid);
				json_array_append_new(members, json_pack("{s:s, s:O, s:i, s:b}",
					"node", nid, "weight", cfg ? cfg : json_null(),
					"effective", (json_int_t)p.node[k].weight,
					"usable", (p.node[k].flags & PLAN_USABLE) != 0));
			}
		wdb_reader_release(rd);
		json_array_append_new(json_object_get(out, "rows"), json_pack("{s:s, s:s, s:s, s:o}",
			"service", svc, "region", reg, "isp", isp, "nodes", members));
	}
	wdb_reader_free(rd);
	json_t *wins = json_array();
	wdb_each(t, WDB_CUTOVER, NULL, collect_value, wins);
	json_array_foreach(wins, i, r)
		json_object_set_new(r, "phase", json_string(cutover_phase_name(
			cutover_window_phase(&g_hc.cut, r, time(NULL)))));
	json_object_set(out, "cutovers", wins);
	wdb_abort(t);
	if (g_json) {
		print_json(out);
	} else {
		printf("%-18s %-9s %-6s %-8s %6s %-10s %-8s %-12s %s\n", "NODE", "STATE",
		       "ADMIN", "POOL", "SCORE", "PROFILE", "IN STATE", "LAST PROBE", "REASON");
		json_array_foreach(json_object_get(out, "nodes"), i, n) {
			/* JSON null where the node has no record yet. */
			json_t *h = json_object_get(n, "health");
			json_t *st = json_object_get(n, "status");
			if (json_is_null(h))
				h = NULL;
			if (json_is_null(st))
				st = NULL;
			char buf[32], lp[64] = "-";
			json_t *pr = json_array_get(json_object_get(st, "probes"), 0);
			if (pr)
				snprintf(lp, sizeof(lp), "%s %lldms",
				         json_is_true(json_object_get(pr, "ok")) ? "ok" : "FAIL",
				         json_integer_value(json_object_get(pr, "total_ms")));
			double sc = json_real_value(json_object_get(st, "score"));
			char scs[16] = "-";
			if (st && sc >= 0)
				snprintf(scs, sizeof(scs), "%.0f", sc);
			const char *state = h ? json_string_value(json_object_get(h, "state")) : NULL;
			const char *pf = json_string_value(json_object_get(st, "profile"));
			printf("%-18s %-9s %-6s %-8s %6s %-10s %-8s %-12s %s%s\n",
			       json_string_value(json_object_get(n, "node")),
			       state ? state : (st ? "unknown" : "no probe"),
			       json_string_value(json_object_get(n, "admin")),
			       json_string_value(json_object_get(n, "pool")), scs, pf ? pf : "-",
			       ago((uint32_t)json_integer_value(json_object_get(h, "since")), buf, sizeof(buf)),
			       lp,
			       h ? json_string_value(json_object_get(h, "reason")) : "",
			       json_is_true(json_object_get(h, "gray")) ? " [gray switch]" : "");
			const char *ph = json_string_value(json_object_get(h, "cutover_phase"));
			if (ph)
				printf("%-18s   cutover %s %s: weight %lld%%, pre-warm %lld%%\n", "",
				       json_string_value(json_object_get(h, "cutover_window")), ph,
				       json_integer_value(json_object_get(h, "cutover_pct")),
				       json_integer_value(json_object_get(h, "prewarm_pct")));
		}
		printf("\n%-30s %-10s %-8s %s\n", "SERVICE", "REGION", "ISP",
		       "NODE=EFFECTIVE/CONFIGURED (x = not usable)");
		json_array_foreach(json_object_get(out, "rows"), i, r) {
			printf("%-30s %-10s %-8s", json_string_value(json_object_get(r, "service")),
			       json_string_value(json_object_get(r, "region")),
			       json_string_value(json_object_get(r, "isp")));
			size_t k;
			json_t *m;
			json_array_foreach(json_object_get(r, "nodes"), k, m)
				printf(" %s=%lld/%lld%s", json_string_value(json_object_get(m, "node")),
				       json_integer_value(json_object_get(m, "effective")),
				       json_integer_value(json_object_get(m, "weight")),
				       json_is_true(json_object_get(m, "usable")) ? "" : "x");
			putchar('\n');
		}
		if (json_array_size(wins)) {
			printf("\n%-6s %-8s %-6s %-22s %-22s %7s %7s  %-11s %s\n", "CUTOVER",
			       "REGION", "ISP", "START", "END", "DERATE", "PREWARM", "PHASE",
			       "NODES NOTE");
			json_array_foreach(wins, i, r)
				print_window(r);
		}
	}
	json_decref(wins);
	json_decref(out);
	json_decref(nodes);
	json_decref(rows);
	json_decref(want);
	return 0;
}

static int history_collect(uint32_t tm, json_t *sample, void *arg)
{
	json_object_set_new(sample, "time", json_integer(tm));
	json_array_append(arg, sample);
	return 0;
}

static int cmd_history(int argc, char **argv)
{
	if (argc < 1)
		die("history: give a node id");
	uint32_t since = 0;
	int dims = 0;
	for (int i = 1; i < argc; i += 2) {
		if (strcmp(argv[i], "--dimensions") == 0) {
			dims = 1;
			i--;
			continue;
		}
		if (strcmp(argv[i], "--since") != 0 || i + 1 >= argc)
			die("history: usage: history NODE [--since TIME] [--dimensions]");
		struct tm tm;
		memset(&tm, 0, sizeof(tm));
		const char *end = strptime(argv[i + 1], "%Y-%m-%dT%H:%M:%S", &tm);
		if (end && (*end == 'Z' || !*end))
			since = (uint32_t)timegm(&tm);
		else if (isdigit((unsigned char)argv[i + 1][0]))
			since = (uint32_t)parse_num("--since", argv[i + 1], 0, INT32_MAX);
		else
			die("history: --since %s: use RFC 3339 UTC (2026-12-01T02:00:00Z) or unix time",
			    argv[i + 1]);
	}
	json_t *all = json_array();
	wdb_history_each(g_db, argv[0], since, history_collect, all);
	if (g_json) {
		print_json(all);
	} else {
		size_t i;
		json_t *s;
		json_array_foreach(all, i, s) {
			time_t tt = (time_t)json_integer_value(json_object_get(s, "time"));
			struct tm tm;
			char buf[40];
			gmtime_r(&tt, &tm);
			strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
			double sc = json_real_value(json_object_get(s, "score"));
			const char *st = json_string_value(json_object_get(s, "state"));
			if (dims)
				printf("%s  %6.1f  %-8s", buf, sc, st);
			else
				printf("%s  %6.1f  %s", buf, sc, st);
			/* S2-10: the dimensions behind the score, 0..1 each
			 * ("-" without input, or in records written before
			 * they were kept). */
			json_t *dv = json_object_get(s, "dims");
			for (size_t k = 0; dims && k < 4; k++) {
				double x = json_real_value(json_array_get(dv, k));
				if (json_array_get(dv, k) && x >= 0)
					printf("  %4.2f", x);
				else
					printf("  %4s", "-");
			}
			putchar('\n');
		}
	}
	json_decref(all);
	return 0;
}

static const char *const impact_set[] = { "low", "medium", "high", NULL };

static int cmd_cutover(int argc, char **argv)
{
	if (argc < 1)
		die("cutover: missing subcommand (add, list, show, del)");
	const char *sub = argv[0];
	wdb_txn_t *t = begin();
	if (strcmp(sub, "list") == 0) {
		json_t *all = json_array();
		wdb_each(t, WDB_CUTOVER, NULL, collect_value, all);
		wdb_abort(t);
		if (g_json) {
			size_t i;
			json_t *w;
			json_array_foreach(all, i, w)
				json_object_set_new(w, "phase", json_string(cutover_phase_name(
					cutover_window_phase(&g_hc.cut, w, time(NULL)))));
			print_json(all);
		} else {
			printf("%-6s %-8s %-6s %-22s %-22s %7s %7s  %-11s %s\n", "ID", "REGION",
			       "ISP", "START", "END", "DERATE", "PREWARM", "PHASE", "NODES NOTE");
			size_t i;
			json_t *w;
			json_array_foreach(all, i, w)
				print_window(w);
		}
		json_decref(all);
		return 0;
	}
	if (strcmp(sub, "show") == 0 || strcmp(sub, "del") == 0) {
		if (argc != 2)
			die("cutover %s: give one window id", sub);
		json_t *w = wdb_get(t, WDB_CUTOVER, argv[1]);
		if (!w)
			die("cutover %s does not exist", argv[1]);
		if (strcmp(sub, "show") == 0) {
			json_object_set_new(w, "phase", json_string(cutover_phase_name(
				cutover_window_phase(&g_hc.cut, w, time(NULL)))));
			print_json(w);
			json_decref(w);
			wdb_abort(t);
			return 0;
		}
		json_decref(w);
		wdb_set(t, WDB_CUTOVER, argv[1], NULL);
		char what[100];
		snprintf(what, sizeof(what), "cutover del %s", argv[1]);
		commit(t, what);
		return 0;
	}
	if (strcmp(sub, "add") != 0)
		die("cutover: unknown subcommand '%s'", sub);
	const char *region = NULL, *isp = "*", *start_s = NULL, *end_s = NULL;
	const char *impact = NULL, *note_s = "";
	long derate = -1, prewarm = g_hc.cut.prewarm;
	json_t *nodes = json_array();
	for (int i = 1; i < argc; i += 2) {
		const char *o = argv[i];
		if (i + 1 >= argc)
			die("cutover add: %s needs a value", o);
		const char *v = argv[i + 1];
		if (strcmp(o, "--region") == 0) {
			if (!valid_word(v, 0))
				die("cutover add: --region %s: use a short lowercase name like cn-gd", v);
			region = v;
		} else if (strcmp(o, "--isp") == 0) {
			if (!valid_word(v, 1))
				die("cutover add: --isp %s: use a short lowercase name like ctcc", v);
			isp = v;
		} else if (strcmp(o, "--node") == 0) {
			json_t *n = wdb_get(t, WDB_NODE, v);
			if (!n)
				die("cutover add: --node %s: no such node", v);
			json_decref(n);
			json_array_append_new(nodes, json_string(v));
		} else if (strcmp(o, "--start") == 0) {
			start_s = v;
		} else if (strcmp(o, "--end") == 0) {
			end_s = v;
		} else if (strcmp(o, "--impact") == 0) {
			impact = one_of(o, v, impact_set);
		} else if (strcmp(o, "--derate") == 0) {
			derate = parse_num(o, v, 1, 100);
		} else if (strcmp(o, "--prewarm") == 0) {
			prewarm = parse_num(o, v, 0, 100);
		} else if (strcmp(o, "--note") == 0) {
			note_s = v;
		} else {
			die("cutover add: unknown option '%s'", o);
		}
	}
	if (!region && !json_array_size(nodes))
		die("cutover add: --region or --node is required (S0-2: an affected area)");
	if (!region)
		region = "*"; /* the listed nodes are the area */
	if (!start_s || !end_s)
		die("cutover add: --start and --end are required (RFC 3339 with offset)");
	time_t start, end;
	if (cutover_parse_time(start_s, &start))
		die("cutover add: --start %s: use RFC 3339 with an offset, e.g. 2026-12-01T02:00+08:00", start_s);
	if (cutover_parse_time(end_s, &end))
		die("cutover add: --end %s: use RFC 3339 with an offset, e.g. 2026-12-01T05:00+08:00", end_s);
	if (end <= start)
		die("cutover add: the window ends (%s) before it starts (%s)", end_s, start_s);
	if (end <= time(NULL))
		die("cutover add: the window ends in the past (%s)", end_s);
	if (impact && derate >= 0)
		die("cutover add: give --impact or --derate, not both");
	unsigned level = derate >= 0 ? (unsigned)derate :
	                 g_hc.cut.impact[impact ? (strcmp(impact, "low") == 0 ? 0 :
	                                 strcmp(impact, "medium") == 0 ? 1 : 2) : 1];
	if (!json_array_size(nodes) && !wdb_each(t, WDB_NODE, NULL, has_region, (void *)region))
		die("cutover add: --region %s: no node is in that region", region);
	/* Overlaps: the same scope at overlapping times must agree. */
	json_t *all = json_array();
	wdb_each(t, WDB_CUTOVER, NULL, collect_value, all);
	size_t i;
	json_t *w;
	unsigned maxid = 0;
	json_array_foreach(all, i, w) {
		const char *wid = json_string_value(json_object_get(w, "id"));
		if (wid && wid[0] == 'c' && (unsigned)atoi(wid + 1) > maxid)
			maxid = (unsigned)atoi(wid + 1);
		if (strcmp(json_string_value(json_object_get(w, "region")) ?: "", region) ||
		    strcmp(json_string_value(json_object_get(w, "isp")) ?: "", isp) ||
		    !json_equal(json_object_get(w, "nodes"), nodes))
			continue;
		time_t ws = (time_t)json_integer_value(json_object_get(w, "start"));
		time_t we = (time_t)json_integer_value(json_object_get(w, "end"));
		if (we <= start || ws >= end)
			continue;
		if (ws == start && we == end &&
		    json_integer_value(json_object_get(w, "derate_pct")) == level &&
		    json_integer_value(json_object_get(w, "prewarm_pct")) == prewarm) {
			printf("cutover add: the same window exists already as %s; nothing to change\n", wid);
			wdb_abort(t);
			json_decref(all); /* wid points into it: free after use */
			json_decref(nodes);
			return 0;
		}
		die("cutover add: overlaps window %s (%s .. %s) for the same area with "
		    "different settings; change or delete that one", wid,
		    json_string_value(json_object_get(w, "start_text")),
		    json_string_value(json_object_get(w, "end_text")));
	}
	json_decref(all);
	char id[16];
	snprintf(id, sizeof(id), "c%u", maxid + 1);
	json_t *win = json_pack("{s:s, s:s, s:s, s:o, s:I, s:I, s:s, s:s, s:i, s:i, s:s, s:s}",
		"id", id, "region", region, "isp", isp, "nodes", nodes,
		"start", (json_int_t)start, "end", (json_int_t)end,
		"start_text", start_s, "end_text", end_s, "derate_pct", (int)level,
		"prewarm_pct", (int)prewarm, "impact", impact ? impact : (derate >= 0 ? "custom" : "medium"),
		"note", note_s);
	wdb_set(t, WDB_CUTOVER, id, win);
	json_decref(win);
	char what[300];
	snprintf(what, sizeof(what), "cutover add %s region=%s isp=%s %s..%s derate %u%%",
	         id, region, isp, start_s, end_s, level);
	commit(t, what);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "db", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *conf_path = NULL, *db_path = NULL;
	int ch;
	/* Options stop at the command: its own options follow it. */
	while ((ch = getopt_long(argc, argv, "+c:d:jhV", lopts, NULL)) != -1) {
		switch (ch) {
		case 'c': conf_path = optarg; break;
		case 'd': db_path = optarg; break;
		case 'j': g_json = 1; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("gslbctl %s\n", PACKAGE_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	/* --json may also follow the command. */
	for (int i = optind; i < argc; i++)
		if (strcmp(argv[i], "--json") == 0) {
			g_json = 1;
			memmove(argv + i, argv + i + 1, (size_t)(argc - i - 1) * sizeof(*argv));
			argc--;
			i--;
		}
	char err[1024];
	if (!db_path) {
		if (!conf_path)
			conf_path = "/etc/gslbd/gslbd.conf";
		g_conf = conf_load(conf_path, err, sizeof(err));
		if (!g_conf)
			die("%s", err);
		db_path = g_conf->db_path;
	} else if (conf_path) {
		die("give either -c CONF or -d DBDIR, not both");
	}
	log_set_level(GSLB_LOG_WARNING);
	if (g_conf) {
		if (health_conf_load(g_conf, &g_hc, err, sizeof(err)))
			die("%s", err);
	} else {
		conf_t empty = { .path = "" };
		ynode_t root = { .kind = YNODE_MAP };
		empty.root = &root;
		health_conf_load(&empty, &g_hc, err, sizeof(err));
	}
	g_db = weightdb_open(db_path, err, sizeof(err));
	if (!g_db)
		die("%s", err);
	const char *user = getenv("SUDO_USER");
	if (!user) {
		struct passwd *pw = getpwuid(getuid());
		user = pw ? pw->pw_name : "unknown";
	}
	snprintf(g_actor, sizeof(g_actor), "gslbctl:%s", user);

	const char *cmd = argv[optind];
	int n = argc - optind - 1;
	char **args = argv + optind + 1;
	int rc;
	if (strcmp(cmd, "service") == 0) rc = cmd_service(n, args);
	else if (strcmp(cmd, "node") == 0) rc = cmd_node(n, args);
	else if (strcmp(cmd, "weight") == 0) rc = cmd_weight(n, args);
	else if (strcmp(cmd, "explain") == 0) rc = cmd_explain(n, args);
	else if (strcmp(cmd, "export") == 0) rc = cmd_export(n, args);
	else if (strcmp(cmd, "apply") == 0) rc = cmd_apply(n, args);
	else if (strcmp(cmd, "log") == 0) rc = cmd_log(n, args);
	else if (strcmp(cmd, "rollback") == 0) rc = cmd_rollback(n, args);
	else if (strcmp(cmd, "metrics") == 0) rc = cmd_metrics(n, args);
	else if (strcmp(cmd, "status") == 0) rc = cmd_status(n, args);
	else if (strcmp(cmd, "history") == 0) rc = cmd_history(n, args);
	else if (strcmp(cmd, "cutover") == 0) rc = cmd_cutover(n, args);
	else {
		fprintf(stderr, "gslbctl: unknown command '%s'\n", cmd);
		usage(stderr);
		rc = 2;
	}
	weightdb_close(g_db);
	conf_free(g_conf);
	return rc;
}
