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
#include "common/num.h"
#include "ctl/ctl_steer.h"
#include "ctl/ctl_release.h"
#include "ctl/ctl_override.h"
#include "ctl/ctl_remote.h"
#include "common/log.h"
#include "common/util.h"
#include "dns/zone.h"
#include "gslb/geo.h"
#include "health/push.h"
#include "store/command.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
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
static const char *ctl_host;   /* GSLBCTL_HOST: the API client's address */
const char *ctl_db_path;

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
"               [--allow-unknown-location] [--local-override] COMMAND [ARGS]\n"
"       gslbctl --server URL --token-file FILE [--cacert FILE] [--json]\n"
"               [--offline] [--allow-unknown-location] COMMAND [ARGS]\n"
"  service add|set NAME [--ttl N] [--short-ttl N] [--answers N]\n"
"                       [--all-down open|fallback|empty] [--sticky|--no-sticky]\n"
"                       [--shadow|--no-shadow] [--profile probe|four|default]\n"
"                       [--score-weights DIM=W,DIM=W,DIM=W,DIM=W|default]\n"
"                       [--probe-budget BYTES|default]\n"
"                       [--max-failure-rate PCT|default]\n"
"                       [--steering static|dynamic|shadow|nearest] [--policy live|vod|custom]\n"
"                       [--weights success=A,latency=B,cost=C] [--sla PCT|default]\n"
"                       [--switch-margin PCT%|MSms] [--headroom PCT%]\n"
"  service del|show NAME          service list\n"
"  node add|set ID (--addr IP [--addr IP]... | --cname TARGET) [--region R]\n"
"                  [--isp I] [--capacity N] [--pool primary|standby]\n"
"                  [--admin up|down|drain|auto] [--probe \"URL [OPTS]\"]...\n"
"                  [--no-probes] [--provider NAME] [--cost-per-gb PRICE]\n"
"                  [--probe-budget BYTES|default]\n"
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
"  cluster overrides [list|push|drop]\n"
"  dnssec enable|keygen ZONE [--algorithm ecdsap256|ed25519]\n"
"  dnssec list                    dnssec status|ds ZONE\n"
"  stats                          (the daemon's counters, from stats.listen)\n"
"  api token add NAME --role read|operate|admin [--expires 90d]\n"
"  api token list                 api token revoke NAME\n"
"TIME is RFC 3339 (2026-12-01T02:00:00Z, 2026-12-01T10:00+08:00); --since ID\n"
"starts at that change.\n", f);
}

/* Validation ------------------------------------------------------ */

int ctl_valid_word(const char *s, int star_ok)
{
	return wdb_area_word_ok(s, star_ok);
}

int ctl_valid_node_id(const char *s)
{
	return wdb_node_id_ok(s);
}

void ctl_service_name(const char *name, char *out, size_t size)
{
	wdb_apply_err_t e;
	if (wdb_service_name(ctl_conf, name, out, size, &e))
		ctl_die("%s", e.msg);
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
	wdb_apply_err_t e;
	if (wdb_node_addr_check(id, addr, addrs, allow, &e))
		ctl_die("%s", e.msg);
}

long ctl_parse_num(const char *opt, const char *v, long min, long max)
{
	const num_range_t r = { (double)min, (double)max, NUM_WHOLE, NULL, NULL };
	double n;
	if (num_parse(v, &r, &n, NULL))
		ctl_die("%s %s: must be a whole number from %ld to %ld", opt, v, min, max);
	return (long)n;
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
	if (ctl_host)
		wdb_txn_note(t, "host", json_string(ctl_host));
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

static json_t *g_commit_also;

void ctl_commit_also(json_t *also)
{
	json_decref(g_commit_also);
	g_commit_also = also;
}

void ctl_print_commit(json_t *doc)
{
	if (g_commit_also)
		json_object_update(doc, g_commit_also);
	ctl_commit_also(NULL);
	char *s = json_dumps(doc, 0);
	json_decref(doc);
	if (!s)
		ctl_die("cannot encode the output as JSON");
	puts(s);
	free(s);
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
		ctl_print_commit(json_pack("{s:I}", "change", (json_int_t)id));
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

/* --server URL, --token-file FILE and --cacert FILE: the command runs
 * on that gslbd (ctl_remote.c). */
static const char *remote_server, *remote_token, *remote_cacert;

/* Reads the options before the command into @conf_path, @db_path and
 * @create (and the globals they set).  Returns -1 to go on with the
 * command at argv[optind], else the exit status (after --help,
 * --version or a usage error). */
static int parse_options(int argc, char **argv, const char **conf_path,
                         const char **db_path, int *create)
{
	static const struct option lopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "db", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "create", no_argument, NULL, 'C' },
		{ "offline", no_argument, NULL, 'O' },
		{ "allow-unknown-location", no_argument, NULL, 'L' },
		{ "local-override", no_argument, NULL, 'o' },
		{ "server", required_argument, NULL, 'S' },
		{ "token-file", required_argument, NULL, 'T' },
		{ "cacert", required_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	int ch;
	/* Options stop at the command: its own options follow it. */
	while ((ch = getopt_long(argc, argv, "+c:d:jhV", lopts, NULL)) != -1) {
		switch (ch) {
		case 'c': *conf_path = optarg; break;
		case 'd': *db_path = optarg; break;
		case 'j': ctl_json = 1; break;
		case 'C': *create = 1; break;
		case 'O': ctl_offline = 1; break;
		case 'L': ctl_allow_unknown_location = 1; break;
		case 'o': ctl_local_override = 1; break;
		case 'S': remote_server = optarg; break;
		case 'T': remote_token = optarg; break;
		case 'A': remote_cacert = optarg; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("gslbctl %s\n", PACKAGE_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	return -1;
}

/* --json and --allow-unknown-location may also follow the command: sets
 * them and takes them out of argv[optind..*argc). */
static void take_late_options(int *argc, char **argv)
{
	for (int i = optind; i < *argc; i++)
		if (strcmp(argv[i], "--json") == 0 ||
		    strcmp(argv[i], "--allow-unknown-location") == 0) {
			*(argv[i][2] == 'j' ? &ctl_json : &ctl_allow_unknown_location) = 1;
			memmove(argv + i, argv + i + 1, (size_t)(*argc - i - 1) * sizeof(*argv));
			(*argc)--;
			i--;
		}
}

/* Loads the configuration (-c, or the default one without -d) into
 * ctl_conf.  Returns the store's directory. */
static const char *load_config(const char *conf_path, const char *db_path,
                                 int create)
{
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
	return db_path;
}

/* ctl_hc: the configuration's health section, or its defaults. */
static void load_health_settings(void)
{
	char err[1024];
	if (ctl_conf) {
		if (health_conf_load(ctl_conf, &ctl_hc, err, sizeof(err)))
			ctl_die("%s", err);
	} else {
		conf_t empty = { .path = "" };
		ynode_t root = { .kind = YNODE_MAP };
		empty.root = &root;
		health_conf_load(&empty, &ctl_hc, err, sizeof(err));
	}
}

/* Opens ctl_db for command @cmd with its arguments: read-only (no
 * write lock, not even at open) for a command that only reads
 * (store/command.h), so that it never stalls the health thread's writes
 * and works for a user who may only read the store.
 *
 * The map size: database.map-size for a store gslbd never opened,
 * never more than the one gslbd recorded (a larger one here would
 * let this process grow the data past what the daemon maps).  The
 * writes leave the room kept for health decisions, and make it
 * first when the store is short of it. */
static void open_store(const char *db_path, const char *cmd, int argc, char **argv)
{
	char err[1024];
	wdb_options_t o = { .read_only = wdb_command_read_only(cmd, argc, argv),
	                    .conf_map_size = ctl_conf ? ctl_conf->db_map_size : 0,
	                    .leave_room = 1 };
	ctl_db = weightdb_open_opts(db_path, &o, err, sizeof(err));
	if (!ctl_db)
		ctl_die("%s", err);
	wdb_room_t room;
	if (!o.read_only && weightdb_make_room(ctl_db, 20000, 0, &room) > 0)
		fprintf(stderr, "gslbctl: note: database %s: %s\n", db_path,
		        wdb_room_msg(&room, err, sizeof(err)));
}

/* ctl_user and ctl_actor: the user behind sudo, else the one running.
 * When gslbd runs this gslbctl for POST /v1/run it sets GSLBCTL_ACTOR
 * ("api:TOKEN-NAME") and GSLBCTL_HOST (the client's address), and the
 * change is recorded as the API's own are: user the token's name, host
 * the client.  These variables name no right: whoever may write the
 * store may write any audit text into it anyway. */
static void set_actor(void)
{
	const char *actor = getenv("GSLBCTL_ACTOR"), *host = getenv("GSLBCTL_HOST");
	if (actor && *actor) {
		const char *colon = strchr(actor, ':');
		snprintf(ctl_actor, sizeof(ctl_actor), "%s", actor);
		ctl_user = colon && colon[1] ? colon + 1 : actor;
		ctl_host = host && *host ? host : NULL;
		return;
	}
	const char *user = getenv("SUDO_USER");
	if (!user) {
		struct passwd *pw = getpwuid(getuid());
		user = pw ? pw->pw_name : "unknown";
	}
	snprintf(ctl_actor, sizeof(ctl_actor), "gslbctl:%s", user);
	ctl_user = user;
}

const char *ctl_rollback_user(void)
{
	return strncmp(ctl_actor, "api:", 4) == 0 ? ctl_actor : ctl_user;
}

const char *ctl_stdin_name(void)
{
	const char *n = getenv("GSLBCTL_INPUT_NAME");
	return n && *n ? n : "stdin";
}

/* The command groups that work on the store. */
static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "service", ctl_cmd_service },
	{ "node", ctl_cmd_node },
	{ "weight", ctl_cmd_weight },
	{ "explain", ctl_cmd_explain },
	{ "export", ctl_cmd_export },
	{ "apply", ctl_cmd_apply },
	{ "log", ctl_cmd_log },
	{ "rollback", ctl_cmd_rollback },
	{ "metrics", ctl_cmd_metrics },
	{ "budget", ctl_cmd_budget },
	{ "steer", ctl_cmd_steer },
	{ "status", ctl_cmd_status },
	{ "history", ctl_cmd_history },
	{ "cutover", ctl_cmd_cutover },
	{ "cluster", ctl_cmd_cluster },
	{ "release", ctl_cmd_release },
	{ "dnssec", ctl_cmd_dnssec },
	{ "api", ctl_cmd_api },
};

/* Runs command group @cmd; returns its exit status (2 when it is not
 * one). */
static int run_command(const char *cmd, int argc, char **argv)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(cmd, commands[i].name) == 0)
			return commands[i].run(argc, argv);
	fprintf(stderr, "gslbctl: unknown command '%s'\n", cmd);
	usage(stderr);
	return 2;
}

/* The command @argv (@argc words) on the gslbd of --server: no local
 * configuration or store is opened. */
static int run_remote(const char *conf_path, const char *db_path, int create,
                      int argc, char **argv)
{
	if (!remote_server || !remote_token)
		ctl_usage_die("--server URL and --token-file FILE go together");
	if (conf_path || db_path || create || ctl_local_override)
		ctl_usage_die("--server: give no -c, -d, --create or --local-override: "
		              "the server uses its own configuration and store");
	const char *pre[3];
	int n = 0;
	if (ctl_offline)
		pre[n++] = "--offline";
	if (ctl_allow_unknown_location)
		pre[n++] = "--allow-unknown-location";
	pre[n] = NULL;
	return ctl_remote_run(remote_server, remote_token, remote_cacert, argc, argv, pre);
}

int main(int argc, char **argv)
{
	const char *conf_path = NULL, *db_path = NULL;
	int create = 0;
	int rc = parse_options(argc, argv, &conf_path, &db_path, &create);
	if (rc >= 0)
		return rc;
	take_late_options(&argc, argv);
	if (remote_server || remote_token || remote_cacert)
		return run_remote(conf_path, db_path, create, argc - optind, argv + optind);
	ctl_db_path = db_path = load_config(conf_path, db_path, create);
	log_set_level(GSLB_LOG_WARNING);
	load_health_settings();
	/* The tests hold a command for a while (the time limit and the
	 * count of commands the API runs at once). */
	const char *delay = getenv("GSLBCTL_TEST_DELAY_MS");
	if (delay)
		usleep((useconds_t)atoi(delay) * 1000);
	const char *cmd = argv[optind];
	int n = argc - optind - 1;
	char **args = argv + optind + 1;
	if (strcmp(cmd, "stats") == 0) {
		/* Asks the daemon, not the store. */
		rc = ctl_cmd_stats(n, args);
		conf_free(ctl_conf);
		return rc;
	}
	open_store(db_path, cmd, n, args);
	set_actor();
	ctl_cluster_init();
	rc = run_command(cmd, n, args);
	ctl_cluster_done();
	weightdb_close(ctl_db);
	conf_free(ctl_conf);
	return rc;
}
