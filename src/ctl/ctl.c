/* SPDX-License-Identifier: MIT */
/* gslbctl: option parsing, dispatch to the command groups (ctl_*.c) and
 * the helpers they share.
 *
 * Every command validates everything first and then commits one LMDB
 * write transaction with its audit record; a rejected command writes
 * nothing (S0-10, S3-8).  gslbd sees a commit at its next batch of
 * packets: no reload, no signal. */
#include "config.h"
#include "ctl/ctl.h"
#include "ctl/ctl_steer.h"
#include "ctl/ctl_release.h"
#include "common/log.h"
#include "common/net.h"
#include "common/util.h"
#include "dns/zone.h"
#include "gslb/geo.h"
#include "health/push.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

conf_t *ctl_conf;        /* NULL with -d */
weightdb_t *ctl_db;
int ctl_json;
health_conf_t ctl_hc;
static char ctl_actor[128];    /* "gslbctl:USER", the audit records' actor */
const char *ctl_user;
static const char *ctl_db_path;

const char *const ctl_all_down_set[] = { "open", "fallback", "empty", NULL };
const char *const ctl_pool_set[] = { "primary", "standby", NULL };
const char *const ctl_admin_set[] = { "auto", "up", "down", "drain", NULL };

const char *ctl_die_where;

/* "gslbctl: [WHERE: ]MESSAGE" on stderr. */
__attribute__((format(printf, 1, 0)))
static void say(const char *fmt, va_list ap)
{
	fputs("gslbctl: ", stderr);
	if (ctl_die_where)
		fprintf(stderr, "%s: ", ctl_die_where);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void ctl_exit(int status)
{
	/* The command stops where the error found it: its transaction,
	 * the store's reader slot and what it had built go with the
	 * process, as they would with exit().  _exit() after flushing
	 * skips only the exit handlers, of which gslbctl has none but the
	 * sanitizer build's leak check, which would report as leaks the
	 * objects an error leaves behind. */
	fflush(NULL);
	_exit(status);
}

void ctl_die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
	ctl_exit(1);
}

void ctl_usage_die(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	say(fmt, ap);
	va_end(ap);
	ctl_exit(2);
}

void ctl_no_more_args(const char *cmd, int argc, char **argv, int want)
{
	if (argc > want)
		ctl_usage_die("%s: unexpected argument '%s'", cmd, argv[want]);
}

static void usage(FILE *f)
{
	fputs(
"usage: gslbctl [-c CONF | -d DBDIR [--create]] [--json] [--offline]\n"
"               [--allow-unknown-location] COMMAND [ARGS]\n"
"  service add|set NAME [--ttl N] [--short-ttl N] [--answers N]\n"
"                       [--all-down open|fallback|empty] [--sticky|--no-sticky]\n"
"                       [--shadow|--no-shadow] [--profile probe|four|default]\n"
"                       [--max-failure-rate PCT|default]\n"
"                       [--steering static|dynamic|shadow|nearest] [--policy live|vod|custom]\n"
"                       [--weights success=A,latency=B,cost=C] [--sla PCT|default]\n"
"                       [--switch-margin PCT%|MSms] [--headroom PCT%]\n"
"  service del|show NAME          service list\n"
"  node add|set ID (--addr IP [--addr IP]... | --cname TARGET) [--region R]\n"
"                  [--isp I] [--capacity N] [--pool primary|standby]\n"
"                  [--admin up|down|drain|auto] [--probe \"URL [OPTS]\"]...\n"
"                  [--no-probes] [--provider NAME] [--cost-per-gb PRICE]\n"
"  node del|show ID               node list\n"
"  weight set SERVICE [--region R] [--isp I] NODE=W [NODE=W]...\n"
"  weight del SERVICE [--region R] [--isp I]\n"
"  weight list [SERVICE]          weight show SERVICE [--region R] [--isp I]\n"
"  explain NAME --client IP[/LEN] [--type A|AAAA|TYPE]\n"
"  export                         apply [--dry-run] [--force] FILE|-\n"
"  log [--auto] [--since TIME|ID] [--limit N]\n"
"  rollback [--dry-run] [--force] [CHANGE-ID]\n"
"  metrics push NODE KEY=VALUE...  status [SERVICE]\n"
"  metrics push NODE [--region R] [--isp I] [--at TIME] [success=PCT]\n"
"               [latency=MS] [bytes=N]\n"
"  metrics push --provider NAME [--at TIME] spent=AMOUNT\n"
"  metrics push --file FILE|-\n"
"  budget set NAME --limit AMOUNT [--period day|week|month|Nd] [--alert PCT]\n"
"  budget del NAME                budget list\n"
"  steer show SERVICE             steer replay SERVICE [--from TIME] [--to TIME]\n"
"  steer unpin SERVICE [--region R] [--isp I]\n"
"  history NODE [--since TIME] [--dimensions]\n"
"  cutover add --region R [--isp I] [--node ID]... --start TIME --end TIME\n"
"              [--impact low|medium|high | --derate PCT] [--prewarm PCT] [--note TEXT]\n"
"  cutover list|show ID|del ID\n"
"  release start SERVICE --node ID [--region R] [--isp I] --steps 1,5,25,50,100\n"
"                --every 10m [--guard score>=N|success>=PCT|latency<=MS]...\n"
"  release list|show SERVICE|pause SERVICE|resume SERVICE|abort SERVICE\n"
"  cluster status                 cluster health [NODE]\n"
"  dnssec enable|keygen ZONE [--algorithm ecdsap256|ed25519]\n"
"  dnssec list                    dnssec status|ds ZONE\n"
"  stats                          (the daemon's counters, from stats.listen)\n"
"TIME is RFC 3339 (2026-12-01T02:00:00Z, 2026-12-01T10:00+08:00); --since ID\n"
"starts at that change.\n", f);
}

/* Validation ------------------------------------------------------ */

/* Region and ISP names: short lowercase words ("*" is the wildcard of
 * weight rows, never a node's own). */
int ctl_valid_word(const char *s, int star_ok)
{
	/* The names a push may give are the names clients are located in. */
	_Static_assert(PUSH_WORD_MAX == GEO_NAME_MAX, "push names are GeoIP names");
	return push_valid_word(s, star_ok);
}

int ctl_valid_node_id(const char *s)
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
void ctl_service_name(const char *name, char *out, size_t size)
{
	uint8_t wire[256], low[256];
	char buf[1100];
	if (!dname_from_str(name, wire) || wire[0] == 0)
		ctl_die("service name '%s' is not a valid domain name", name);
	dname_copy_lower(low, wire);
	dname_to_str(low, buf, sizeof(buf));
	size_t l = strlen(buf);
	if (l > 1)
		buf[l - 1] = 0;
	if (strchr(buf, WDB_KEY_SEP) || strchr(buf, '\\'))
		ctl_die("service name '%s' has characters that are not allowed", name);
	snprintf(out, size, "%s", buf);
	if (!ctl_conf)
		return;
	for (size_t i = 0; i < ctl_conf->nzones; i++) {
		if (dname_equal(low, ctl_conf->zones[i].dname))
			ctl_die("service name '%s' is the apex of zone %s: use a name below it",
			    name, ctl_conf->zones[i].name);
		if (dname_is_sub(low, ctl_conf->zones[i].dname))
			return;
	}
	ctl_die("service name '%s' is outside our zones (%s)", name,
	    ctl_conf->nzones ? ctl_conf->zones[0].name : "none configured");
}

void ctl_check_unclaimed(const char *cmd, const char *name)
{
	if (!ctl_conf)
		return;
	uint8_t w[256], low[256];
	if (!dname_from_str(name, w))
		return;
	dname_copy_lower(low, w);
	for (size_t i = 0; i < ctl_conf->nzones; i++) {
		const conf_zone_t *cz = &ctl_conf->zones[i];
		if (!dname_is_sub(low, cz->dname))
			continue;
		char err[600], why[300];
		zone_t *z = zone_load(cz->dname, cz->file, err, sizeof(err));
		if (!z)
			ctl_die("%s %s: cannot read the zone to check the name: %s", cmd, name, err);
		int claimed = zone_claims(z, low, why, sizeof(why));
		zone_free(z);
		if (claimed)
			ctl_die("%s %s: zone %s answers this name itself (%s, in %s), so a "
			    "service of that name would never be asked; remove that data "
			    "or choose another name", cmd, name, cz->name, why, cz->file);
		return;
	}
}

void ctl_check_addr(const char *id, const char *addr, json_t *addrs, int allow)
{
	const char *special = net_addr_special(addr);
	if (special && !allow)
		ctl_die("node %s: address %s is %s, which no client can use "
		    "(give --allow-special for a lab)", id, addr, special);
	/* The same address twice would be a duplicate record in answers. */
	struct in6_addr a, b;
	int fam = strchr(addr, ':') ? AF_INET6 : AF_INET;
	inet_pton(fam, addr, &a);
	size_t i;
	json_t *e;
	json_array_foreach(addrs, i, e) {
		const char *o = json_string_value(e);
		if (o && (strchr(o, ':') ? AF_INET6 : AF_INET) == fam &&
		    inet_pton(fam, o, &b) == 1 &&
		    memcmp(&a, &b, fam == AF_INET ? 4 : 16) == 0)
			ctl_die("node %s: address %s is given twice", id, addr);
	}
}

int ctl_allow_unknown_location;

/* The region [0] and ISP [1] names known, as keys: those a client can be
 * located in (the configured GeoIP database and CIDR file, geo_names())
 * and those the store's nodes and rows already use.  Built at the first
 * check, before the command has written anything, so that an apply's
 * own new names are not their own proof. */
static json_t *area_known[2];
static int area_geo;   /* how many names the geoip sources gave */

static void area_add(const char *name, void *arg)
{
	json_object_set_new(arg, name, json_true());
}

static void area_add_geo(const char *name, void *arg)
{
	area_add(name, arg);
	area_geo++;
}

static int area_of_record(const char *key, json_t *v, void *arg)
{
	(void)key;
	json_t **known = arg;
	for (int f = 0; f < 2; f++) {
		const char *s = json_string_value(json_object_get(v, f ? "isp" : "region"));
		if (s && strcmp(s, "*") != 0)
			area_add(s, known[f]);
	}
	return 0;
}

static void area_names(wdb_txn_t *t, const char *cmd)
{
	if (area_known[0])
		return;
	area_known[0] = json_object();
	area_known[1] = json_object();
	wdb_each(t, WDB_NODE, NULL, area_of_record, area_known);
	wdb_each(t, WDB_WEIGHT, NULL, area_of_record, area_known);
	if (!ctl_conf)
		return;
	char err[600];
	geo_allow_compile(0);   /* names only: no location table */
	geo_t *g = geo_open(ctl_conf, err, sizeof(err));
	if (!g)
		ctl_die("%s: cannot read the geoip settings: %s", cmd, err);
	for (int f = 0; f < 2; f++)
		if (geo_names(g, f, area_add_geo, area_known[f]))
			fprintf(stderr, "gslbctl: warning: %s: the GeoIP database cannot be "
			        "read whole; its %s names may be missing\n", cmd,
			        f ? "ISP" : "region");
	geo_close(g);
}

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Writes into @buf the known names of @known nearest to @v: "did you
 * mean cn-bj?" when some are a typo away (one edit in a short name, two
 * in a longer one), else "known: " and the first few in order. */
static void area_hint(json_t *known, const char *v, char *buf, size_t size)
{
	size_t n = json_object_size(known), k = 0;
	if (!n) {
		snprintf(buf, size, "none is known");
		return;
	}
	const char **names = xcalloc(n, sizeof(*names));
	unsigned *dist = xcalloc(n, sizeof(*dist));
	const char *name;
	json_t *x;
	json_object_foreach(known, name, x)
		names[k++] = name;
	qsort(names, n, sizeof(*names), name_cmp);
	unsigned best = UINT_MAX;
	for (size_t i = 0; i < n; i++) {
		dist[i] = util_edit_distance(v, names[i]);
		best = dist[i] < best ? dist[i] : best;
	}
	int typo = best <= (strlen(v) < 5 ? 1u : 2u);
	size_t shown = 0, len = (size_t)snprintf(buf, size, "%s",
	                                         typo ? "did you mean " : "known: ");
	for (size_t i = 0; i < n && shown < (typo ? 3u : 8u) && len < size; i++) {
		if (typo && dist[i] != best)
			continue;
		len += (size_t)snprintf(buf + len, size - len, "%s%s",
		                        shown ? (typo ? " or " : ", ") : "", names[i]);
		shown++;
	}
	if (len < size && typo)
		snprintf(buf + len, size - len, "?");
	else if (len < size && n > shown)
		snprintf(buf + len, size - len, " and %zu more", n - shown);
	free(names);
	free(dist);
}

int ctl_area_geo(wdb_txn_t *t, const char *cmd)
{
	area_names(t, cmd);
	return area_geo > 0;
}

void ctl_check_area(wdb_txn_t *t, const char *cmd, int isp, const char *v)
{
	if (strcmp(v, "*") == 0)
		return;
	area_names(t, cmd);
	if (json_object_get(area_known[isp], v))
		return;
	const char *opt = isp ? "--isp" : "--region", *field = isp ? "ISP" : "region";
	if (!ctl_conf) {
		fprintf(stderr, "gslbctl: warning: %s: %s %s: no node has that %s, and "
		        "without -c the geoip settings are not known\n", cmd, opt, v,
		        isp ? "isp" : "region");
		return;
	}
	/* Without a GeoIP database or CIDR file that names any location,
	 * there is nothing to tell a typo from a new name by. */
	if (!area_geo) {
		fprintf(stderr, "gslbctl: warning: %s: %s %s: no node or row has that %s, "
		        "and the geoip settings name no location to check it against\n",
		        cmd, opt, v, field);
		return;
	}
	/* A name no lookup can give makes a row no client ever reaches: a
	 * typo such as cn-bjj.  Unless the operator says it is meant (a
	 * database about to be deployed gives it). */
	if (ctl_allow_unknown_location) {
		fprintf(stderr, "gslbctl: warning: %s: %s %s: no client is located in that "
		        "%s yet; kept (--allow-unknown-location)\n", cmd, opt, v, field);
		return;
	}
	char hint[700];
	area_hint(area_known[isp], v, hint, sizeof(hint));
	ctl_die("%s: %s %s: no client is located in that %s: the GeoIP database, the "
	        "CIDR file and the store's nodes and rows do not know it (%s); give "
	        "--allow-unknown-location if it is meant, for a database about to be "
	        "deployed", cmd, opt, v, field, hint);
}

long ctl_parse_num(const char *opt, const char *v, long min, long max)
{
	char *end;
	errno = 0;
	long n = strtol(v, &end, 10);
	if (!*v || *end || errno || n < min || n > max)
		ctl_die("%s %s: must be a whole number from %ld to %ld", opt, v, min, max);
	return n;
}

const char *ctl_one_of(const char *opt, const char *v, const char *const *set)
{
	for (; *set; set++)
		if (strcmp(v, *set) == 0)
			return *set;
	ctl_die("%s %s: not a valid choice", opt, v);
}

/* Database --------------------------------------------------------- */

/* wdb_each() callbacks: collect values or keys into a JSON array. */
int ctl_collect_value(const char *key, json_t *val, void *arr)
{
	(void)key;
	json_array_append(arr, val);
	return 0;
}

int ctl_collect_key(const char *key, json_t *val, void *arr)
{
	(void)val;
	json_array_append_new(arr, json_string(key));
	return 0;
}

wdb_txn_t *ctl_begin_read(void)
{
	wdb_txn_t *t = wdb_begin_read(ctl_db);
	if (!t)
		ctl_die("database: cannot begin a read transaction");
	return t;
}

void ctl_set(wdb_txn_t *t, wdb_kind_t kind, const char *key, json_t *val)
{
	int rc = wdb_set(t, kind, key, val);
	char full[300];
	if (rc)
		ctl_die("%s %s: %s; nothing was changed", val ? "writing" : "deleting",
		    key, rc == GSLB_ENOSPC ? wdb_full_msg(ctl_db, full, sizeof(full)) :
		    wdb_strerror(rc));
}

wdb_txn_t *ctl_begin(void)
{
	char err[512];
	ctl_cluster_sync(ctl_actor);
	wdb_txn_t *t = wdb_begin(ctl_db, ctl_actor, err, sizeof(err));
	if (!t)
		ctl_die("%s", err);
	wdb_txn_note(t, "user", json_string(ctl_user));
	return t;
}

/* Whether a gslbd serves the store: it holds an exclusive flock on
 * DB/gslbd.lock while it runs (daemon/process.c).  A shared try-lock, dropped at
 * once, tells; a daemon starting in that instant retries its own lock
 * for a moment (daemon/process.c), so the probe never keeps it from starting. */
int ctl_daemon_running(void)
{
	static int known = -1;
	if (known >= 0)
		return known;
	char path[4200];
	snprintf(path, sizeof(path), "%s/gslbd.lock", ctl_db_path);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	known = 0;
	if (fd < 0)
		return known;
	if (flock(fd, LOCK_SH | LOCK_NB) < 0)
		known = errno == EWOULDBLOCK;
	else
		flock(fd, LOCK_UN);
	close(fd);
	return known;
}

int ctl_offline;

void ctl_warn_no_daemon(void)
{
	if (!ctl_offline && !ctl_daemon_running())
		fprintf(stderr, "gslbctl: warning: no gslbd serves %s: the change is "
		        "stored and is answered from when gslbd starts\n", ctl_db_path);
}

static int newest_update(const char *key, json_t *st, void *arg)
{
	(void)key;
	json_int_t *max = arg;
	json_int_t u = json_integer_value(json_object_get(st, "updated"));
	if (u > *max)
		*max = u;
	return 0;
}

json_t *ctl_daemon_state(wdb_txn_t *t)
{
	json_int_t newest = 0;
	wdb_each(t, WDB_STATUS, NULL, newest_update, &newest);
	json_t *d = json_pack("{s:b, s:n}", "running", ctl_daemon_running(),
	                      "health_time");
	if (newest) {
		char buf[40];
		time_t tt = (time_t)newest;
		struct tm tm;
		gmtime_r(&tt, &tm);
		strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
		json_object_set_new(d, "health_time", json_string(buf));
	}
	return d;
}

void ctl_print_daemon_state(json_t *d)
{
	if (json_is_true(json_object_get(d, "running")))
		return;
	const char *tm = json_string_value(json_object_get(d, "health_time"));
	if (tm)
		printf("gslbd is not running: health data is from %s\n\n", tm);
	else
		printf("gslbd is not running: there is no health data\n\n");
}

void ctl_commit(wdb_txn_t *t, const char *what)
{
	char err[512];
	if (ctl_cluster_commit(t, what, ctl_actor))
		return;
	int64_t id = wdb_commit(t, what, err, sizeof(err));
	if (id < 0)
		ctl_die("%s; nothing was changed", err);
	if (ctl_json)
		printf("{\"change\": %lld}\n", (long long)id);
	else
		printf("change %lld: %s\n", (long long)id, what);
	ctl_warn_no_daemon();
}

void ctl_print_json(json_t *j)
{
	char *s = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS);
	if (!s)
		ctl_die("cannot encode the output as JSON");
	puts(s);
	free(s);
}

/* Whether command @cmd with its arguments only reads the store: it then
 * opens it read-only (no write lock, not even at open), so that it never
 * stalls the health thread's writes and works for a user who may only
 * read the store. */
static int read_only_command(const char *cmd, int argc, char **argv)
{
	static const char *const readers[] = { "status", "export", "explain",
	                                       "history", "log", "cluster", NULL };
	for (const char *const *r = readers; *r; r++)
		if (strcmp(cmd, *r) == 0)
			return 1;
	if (strcmp(cmd, "steer") == 0)
		return !(argc > 0 && strcmp(argv[0], "unpin") == 0);
	if (strcmp(cmd, "dnssec") == 0)
		return argc > 0 && (strcmp(argv[0], "list") == 0 ||
		                    strcmp(argv[0], "status") == 0 ||
		                    strcmp(argv[0], "ds") == 0);
	if (strcmp(cmd, "apply") == 0 || strcmp(cmd, "rollback") == 0) {
		for (int i = 0; i < argc; i++)
			if (strcmp(argv[i], "--dry-run") == 0)
				return 1;
		return 0;
	}
	if (strcmp(cmd, "service") != 0 && strcmp(cmd, "node") != 0 &&
	    strcmp(cmd, "weight") != 0 && strcmp(cmd, "cutover") != 0 &&
	    strcmp(cmd, "budget") != 0 && strcmp(cmd, "release") != 0)
		return 0;
	return argc > 0 && (strcmp(argv[0], "list") == 0 || strcmp(argv[0], "show") == 0);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "db", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "create", no_argument, NULL, 'C' },
		{ "offline", no_argument, NULL, 'O' },
		{ "allow-unknown-location", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	const char *conf_path = NULL, *db_path = NULL;
	int ch, create = 0;
	/* Options stop at the command: its own options follow it. */
	while ((ch = getopt_long(argc, argv, "+c:d:jhV", lopts, NULL)) != -1) {
		switch (ch) {
		case 'c': conf_path = optarg; break;
		case 'd': db_path = optarg; break;
		case 'j': ctl_json = 1; break;
		case 'C': create = 1; break;
		case 'O': ctl_offline = 1; break;
		case 'L': ctl_allow_unknown_location = 1; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("gslbctl %s\n", PACKAGE_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	/* --json and --allow-unknown-location may also follow the command. */
	for (int i = optind; i < argc; i++)
		if (strcmp(argv[i], "--json") == 0 ||
		    strcmp(argv[i], "--allow-unknown-location") == 0) {
			*(argv[i][2] == 'j' ? &ctl_json : &ctl_allow_unknown_location) = 1;
			memmove(argv + i, argv + i + 1, (size_t)(argc - i - 1) * sizeof(*argv));
			argc--;
			i--;
		}
	char err[1024];
	if (!db_path) {
		if (!conf_path)
			conf_path = "/etc/gslbd/gslbd.conf";
		ctl_conf = conf_load(conf_path, err, sizeof(err));
		if (!ctl_conf)
			ctl_die("%s", err);
		db_path = ctl_conf->db_path;
	} else if (conf_path) {
		ctl_usage_die("give either -c CONF or -d DBDIR, not both");
	} else {
		/* A mistyped -d must not quietly make an empty store that
		 * every read then shows as an empty table. */
		char mdb[4200];
		struct stat sb;
		snprintf(mdb, sizeof(mdb), "%s/data.mdb", db_path);
		if (!create && stat(mdb, &sb) != 0)
			ctl_die("-d %s: no weight store there (give --create to make a new one)",
			    db_path);
	}
	ctl_db_path = db_path;
	log_set_level(GSLB_LOG_WARNING);
	if (ctl_conf) {
		if (health_conf_load(ctl_conf, &ctl_hc, err, sizeof(err)))
			ctl_die("%s", err);
	} else {
		conf_t empty = { .path = "" };
		ynode_t root = { .kind = YNODE_MAP };
		empty.root = &root;
		health_conf_load(&empty, &ctl_hc, err, sizeof(err));
	}
	const char *cmd = argv[optind];
	int n = argc - optind - 1;
	char **args = argv + optind + 1;
	if (strcmp(cmd, "stats") == 0) {
		/* Asks the daemon, not the store. */
		int rc = ctl_cmd_stats(n, args);
		conf_free(ctl_conf);
		return rc;
	}
	/* The map size: database.map-size for a store gslbd never opened,
	 * never more than the one gslbd recorded (a larger one here would
	 * let this process grow the data past what the daemon maps).  The
	 * writes leave the room kept for health decisions, and make it
	 * first when the store is short of it. */
	wdb_options_t o = { .read_only = read_only_command(cmd, n, args),
	                    .conf_map_size = ctl_conf ? ctl_conf->db_map_size : 0,
	                    .leave_room = 1 };
	ctl_db = weightdb_open_opts(db_path, &o, err, sizeof(err));
	if (!ctl_db)
		ctl_die("%s", err);
	wdb_room_t room;
	if (!o.read_only && weightdb_make_room(ctl_db, 20000, 0, &room) > 0)
		fprintf(stderr, "gslbctl: note: database %s: %s\n", db_path,
		        wdb_room_msg(&room, err, sizeof(err)));
	const char *user = getenv("SUDO_USER");
	if (!user) {
		struct passwd *pw = getpwuid(getuid());
		user = pw ? pw->pw_name : "unknown";
	}
	snprintf(ctl_actor, sizeof(ctl_actor), "gslbctl:%s", user);
	ctl_user = user;
	ctl_cluster_init();

	int rc;
	if (strcmp(cmd, "service") == 0) rc = ctl_cmd_service(n, args);
	else if (strcmp(cmd, "node") == 0) rc = ctl_cmd_node(n, args);
	else if (strcmp(cmd, "weight") == 0) rc = ctl_cmd_weight(n, args);
	else if (strcmp(cmd, "explain") == 0) rc = ctl_cmd_explain(n, args);
	else if (strcmp(cmd, "export") == 0) rc = ctl_cmd_export(n, args);
	else if (strcmp(cmd, "apply") == 0) rc = ctl_cmd_apply(n, args);
	else if (strcmp(cmd, "log") == 0) rc = ctl_cmd_log(n, args);
	else if (strcmp(cmd, "rollback") == 0) rc = ctl_cmd_rollback(n, args);
	else if (strcmp(cmd, "metrics") == 0) rc = ctl_cmd_metrics(n, args);
	else if (strcmp(cmd, "budget") == 0) rc = ctl_cmd_budget(n, args);
	else if (strcmp(cmd, "steer") == 0) rc = ctl_cmd_steer(n, args);
	else if (strcmp(cmd, "status") == 0) rc = ctl_cmd_status(n, args);
	else if (strcmp(cmd, "history") == 0) rc = ctl_cmd_history(n, args);
	else if (strcmp(cmd, "cutover") == 0) rc = ctl_cmd_cutover(n, args);
	else if (strcmp(cmd, "cluster") == 0) rc = ctl_cmd_cluster(n, args);
	else if (strcmp(cmd, "release") == 0) rc = ctl_cmd_release(n, args);
	else if (strcmp(cmd, "dnssec") == 0) rc = ctl_cmd_dnssec(n, args);
	else {
		fprintf(stderr, "gslbctl: unknown command '%s'\n", cmd);
		usage(stderr);
		rc = 2;
	}
	ctl_cluster_done();
	weightdb_close(ctl_db);
	conf_free(ctl_conf);
	return rc;
}
