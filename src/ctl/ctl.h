/* SPDX-License-Identifier: MIT */
/* gslbctl's shared state and helpers, and the entry point of each command
 * group (one ctl_*.c file per group).
 *
 * gslbctl is a short-lived, single-threaded process: the globals below are
 * set once by main() before any command runs and never change after.  A
 * helper that finds an error prints it and exits (ctl_die()), so commands
 * read as straight-line validation followed by one commit. */
#ifndef GSLB_CTL_H
#define GSLB_CTL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "common/conf.h"
#include "health/health.h"
#include "store/apply.h"
#include "store/edit.h"
#include "store/weightdb.h"

/** The configuration read with -c; NULL when the store was named with -d
 * (then commands that need zones or GeoIP settings refuse to run). */
extern conf_t *ctl_conf;

/** The weight store every command reads and writes; open for the whole
 * run. */
extern weightdb_t *ctl_db;

/** Non-zero when --json was given: commands print JSON, not tables. */
extern int ctl_json;

/** The health section's settings (probe defaults, settle time, cutover
 * levels), or its defaults when there is no configuration. */
extern health_conf_t ctl_hc;

/* The pools and all-down modes, each NULL-terminated, for ctl_one_of()
 * (store/apply.h; the admin states: wdb_admin_set, store/edit.h). */
#define ctl_all_down_set wdb_all_down_set
#define ctl_pool_set wdb_pool_set

/** Where the input that ctl_die() reports on came from ("FILE:LINE"),
 * or NULL: set while a command reads its input from a file, so that
 * every error names the line. */
extern const char *ctl_die_where;

/** Ends gslbctl with @status after an error (output flushed). */
__attribute__((noreturn))
void ctl_exit(int status);
/** Prints "gslbctl: " (and ctl_die_where) and the message to stderr and
 * exits with status 1.  Nothing has been committed when a command dies. */
__attribute__((format(printf, 1, 2), noreturn))
void ctl_die(const char *fmt, ...);

/** Prints "gslbctl: " and the message to stderr and exits with status 2:
 * the command line itself is wrong (an unknown subcommand or option, an
 * argument too many).  Nothing has been committed. */
__attribute__((format(printf, 1, 2), noreturn))
void ctl_usage_die(const char *fmt, ...);

/** Dies as ctl_usage_die() when command @cmd got more than @want
 * arguments (@argc at @argv), naming the first one too many. */
void ctl_no_more_args(const char *cmd, int argc, char **argv, int want);

/** The user this gslbctl runs for (the sudo user when there is one):
 * the "user" of its audit records and whose changes a bare rollback
 * undoes. */
extern const char *ctl_user;

/** Whose changes a bare rollback undoes (store/change.h): ctl_user, or
 * "api:NAME" when gslbd runs this gslbctl for a token (GSLBCTL_ACTOR). */
const char *ctl_rollback_user(void);

/** The name standard input goes by in messages and audit texts ("apply
 * stdin"): GSLBCTL_INPUT_NAME when gslbd runs this gslbctl for POST
 * /v1/run with a client's file as standard input (the file's name on the
 * client), else "stdin". */
const char *ctl_stdin_name(void);

/** Whether a gslbd serves the store now (it holds DB/gslbd.lock). */
int ctl_daemon_running(void);

/** After a write: warns on stderr when no gslbd serves the store (the
 * exit status stays 0), unless ctl_offline. */
void ctl_warn_no_daemon(void);

/** --offline: the store is written with no gslbd on purpose (a first
 * bootstrap, an image build): no warning that none serves it. */
extern int ctl_offline;
/** The store's directory (-d, or the configuration's). */
extern const char *ctl_db_path;

/** {"running": BOOL, "health_time": "RFC 3339 UTC" or null}: whether a
 * gslbd serves the store and the newest health status in it (read in
 * @t).  A new reference. */
json_t *ctl_daemon_state(wdb_txn_t *t);

/** Prints "gslbd is not running: health data is from TIME" and a blank
 * line when @d (from ctl_daemon_state()) says no daemon runs. */
void ctl_print_daemon_state(json_t *d);

/** Whether @s is a region or ISP name: a short lowercase word; "*" too
 * when @star_ok (the wildcard of weight rows, never a node's own). */
int ctl_valid_word(const char *s, int star_ok);

/** Whether @s is a valid node id: 1 to 63 letters, digits, '-', '_', '.'. */
int ctl_valid_node_id(const char *s);

/** Checks that @name is a service name: a valid DNS name inside one of
 * our zones (when the configuration is known), not a zone apex.  Writes
 * the canonical form (lowercase, no final dot) to @out (@size bytes).
 * Dies on an invalid name. */
void ctl_service_name(const char *name, char *out, size_t size);

/** Dies when the static data of a zone (-c only) answers service name
 * @name itself (records at the name, or a delegation above it): a
 * service there would never be asked.  @cmd names the command. */
void ctl_check_unclaimed(const char *cmd, const char *name);

/* Region and ISP names (ctl_area.c). */

/** Set by --allow-unknown-location: ctl_check_area() keeps a name no
 * client is located in, with a warning. */
extern int ctl_allow_unknown_location;

/** Checks region (@isp 0) or ISP (@isp 1) name @v ("*" passes) that
 * command @cmd would write into @t against the names known: those the
 * configured GeoIP database and CIDR file can give (-c; the database is
 * walked once per process) and those the store's nodes and rows used
 * before the command.  Dies on an unknown name with the nearest known
 * ones, unless --allow-unknown-location was given (then it warns); with
 * -d, where the geoip settings are not known, it only warns. */
void ctl_check_area(wdb_txn_t *t, const char *cmd, int isp, const char *v);

/** Whether the configured geoip sources (-c) name any location, so that
 * a node's own region and ISP can be checked against them: without, a
 * node's names are the only ones there are (and rows are checked
 * against those). */
int ctl_area_geo(wdb_txn_t *t, const char *cmd);

/** The names ctl_check_area() checks against, built at the first call
 * (ctl_area.c owns them). */
const wdb_area_known_t *ctl_area_known(wdb_txn_t *t, const char *cmd);

/** The options of store/apply.h's checks as gslbctl's command line and
 * configuration give them, with @allow_special (--allow-special). */
void ctl_apply_opts(wdb_apply_opts_t *op, int allow_special);

/** Prints each text of @warnings (a JSON list) as "gslbctl: warning:
 * TEXT" on standard error. */
void ctl_warnings(json_t *warnings);

/** Dies when address @addr of node @id is one no client can use (unless
 * @allow: --allow-special) or is in @addrs (the node's addresses so far,
 * may be NULL) already. */
void ctl_check_addr(const char *id, const char *addr, json_t *addrs, int allow);

/** Parses the whole number @v of option @opt in [@min, @max]; dies
 * naming the option otherwise. */
long ctl_parse_num(const char *opt, const char *v, long min, long max);

/** Returns the member of the NULL-terminated @set equal to @v (a static
 * string); dies naming option @opt otherwise. */
const char *ctl_one_of(const char *opt, const char *v, const char *const *set);

/** wdb_each() callback: appends each value to the JSON array @arr (a
 * new reference; the array owns it). */
int ctl_collect_value(const char *key, json_t *val, void *arr);

/** wdb_each() callback: appends each key, as a JSON string, to @arr. */
int ctl_collect_key(const char *key, json_t *val, void *arr);

/** Begins a write transaction as this user; dies if the store is busy or
 * unreadable.  The caller commits it with ctl_commit() or aborts it. */
wdb_txn_t *ctl_begin(void);

/** Begins a read transaction (the store is open read-only for commands
 * that only read: see gslbctl(8)); the caller ends it with wdb_abort()
 * soon (LMDB caveat: no long read transactions). */
wdb_txn_t *ctl_begin_read(void);

/** wdb_set() that dies with the cause (a full store, say) when the write
 * fails; nothing is committed then. */
void ctl_set(wdb_txn_t *t, wdb_kind_t kind, const char *key, json_t *val);

/** Commits @t with the audit text @what and prints the change id (or
 * JSON); dies, with nothing changed, if the commit is refused. */
void ctl_commit(wdb_txn_t *t, const char *what);

/** Adds the members of @also (an object, taken) to the JSON line the
 * next commit prints (`api token add --json`: the token beside the
 * change, one document). */
void ctl_commit_also(json_t *also);

/** Prints the JSON line of a commit: @doc (taken) with what
 * ctl_commit_also() added, on one line. */
void ctl_print_commit(json_t *doc);

/** Prints @j indented, keys sorted, and a newline.  Does not take @j. */
void ctl_print_json(json_t *j);

/** Prints one cutover window as a line of the `cutover list` and
 * `status` tables, with its phase now. */
void ctl_print_window(json_t *w);

/** Returns cutover window @w as the read commands show it (gslbctl(8),
 * JSON OUTPUT), with its phase now; the caller owns it. */
json_t *ctl_window_view(json_t *w);

/* Output of the read commands (ctl_json.c). */

/** Prints the document @doc (an object) of a read command's --json
 * output, with its "format" version and "generated" time added, as
 * ctl_print_json() does.  Takes @doc. */
void ctl_emit(json_t *doc);

/** Sets @key of @obj to the unix time @t as RFC 3339 UTC
 * ("2026-12-01T02:00:00Z") and @key_unix to @t; both null when @t is 0
 * or less (never set). */
void ctl_set_time(json_t *obj, const char *key, int64_t t);

/** Writes the unix time @t as RFC 3339 UTC into @buf (@size bytes). */
void ctl_utc(int64_t t, char *buf, size_t size);

/** Returns the unix time of the RFC 3339 UTC time @s
 * ("2026-12-01T02:00:00Z", the Z optional), or 0 when @s is not one. */
int64_t ctl_parse_utc(const char *s);

/** Returns a new reference to @key of @obj, or JSON null without it. */
json_t *ctl_field(json_t *obj, const char *key);

/** Prints the fields @keys (NULL-terminated) of @obj, one "name value"
 * line each: the table of the `show` commands. */
void ctl_print_fields(json_t *obj, const char *const *keys);

/** Prints the object @view of a `show` command: with --json the
 * document {@key: @view}, else its fields @keys one a line.  Takes
 * @view; returns 0, the exit status. */
int ctl_show(const char *key, json_t *view, const char *const *keys);

/** Returns a new array of @view applied to each element of @arr (each
 * call returns a new reference, which the array takes). */
json_t *ctl_views(json_t *arr, json_t *(*view)(json_t *));

/** Returns a new array of @view applied to every object of @kind in
 * the store (key order), read in one read transaction. */
json_t *ctl_list(wdb_kind_t kind, json_t *(*view)(json_t *));

/** Writes the strings of array @arr into @buf (@size bytes), joined by
 * commas and cut at @size; "" for none.  Returns @buf. */
const char *ctl_join(json_t *arr, char *buf, size_t size);

/* The commands.  Each takes the arguments after its name (@argc of them
 * at @argv, which it may modify), returns the exit status and dies on an
 * error. */

/** service add|set|del|show|list (ctl_table.c). */
int ctl_cmd_service(int argc, char **argv);
/** node add|set|del|show|list (ctl_table.c). */
int ctl_cmd_node(int argc, char **argv);
/** weight set|del|list (ctl_table.c). */
int ctl_cmd_weight(int argc, char **argv);
/** explain NAME --client IP[/LEN] [--type T] (ctl_explain.c). */
int ctl_cmd_explain(int argc, char **argv);
/** export (ctl_apply.c). */
int ctl_cmd_export(int argc, char **argv);
/** apply FILE (ctl_apply.c). */
int ctl_cmd_apply(int argc, char **argv);
/** log [--since TIME|ID] (ctl_log.c). */
int ctl_cmd_log(int argc, char **argv);
/** rollback [CHANGE-ID] (ctl_log.c). */
int ctl_cmd_rollback(int argc, char **argv);
/** metrics push NODE KEY=VALUE... (ctl_status.c). */
int ctl_cmd_metrics(int argc, char **argv);
/** status [SERVICE] (ctl_status.c). */
int ctl_cmd_status(int argc, char **argv);
/** history NODE [--since TIME] (ctl_status.c). */
int ctl_cmd_history(int argc, char **argv);
/** cutover add|list|show|del (ctl_cutover.c). */
int ctl_cmd_cutover(int argc, char **argv);
/** cluster status: etcd, the revisions, the live instances (ctl_cluster.c). */
int ctl_cmd_cluster(int argc, char **argv);
/** dnssec enable|keygen|list|status|ds (ctl_dnssec.c). */
int ctl_cmd_dnssec(int argc, char **argv);
/** gslbctl api token add|list|revoke (ctl_api.c). */
int ctl_cmd_api(int argc, char **argv);

/* Cluster mode (ctl_cluster.c). */
/** Reads the cluster section of the configuration; dies on a bad one. */
void ctl_cluster_init(void);
/** Whether the configuration has a cluster section. */
int ctl_cluster_on(void);
/** In cluster mode, brings the local store up to the last change in etcd
 * before a write command reads it; dies (exit 1) when etcd is
 * unreachable.  No-op in standalone mode. */
void ctl_cluster_sync(const char *actor);
/** In cluster mode, validates @t and writes its shared changes to etcd
 * (refused when someone else changed the table since it was read), then
 * into the local store, and prints the change.  Returns 1 when it took
 * over @t (ended), 0 when the caller commits @t locally as usual. */
int ctl_cluster_commit(wdb_txn_t *t, const char *what, const char *actor);

/** With @quiet, ctl_cluster_commit() prints nothing (the caller prints
 * the change, with ctl_cluster_revision(): the revision it wrote). */
void ctl_cluster_quiet(int quiet);
int64_t ctl_cluster_revision(void);

/** cluster status: the signing keys (of the store's signed zones) whose
 * file is not in the configuration's keystore, into @out's
 * "dnssec_keys_missing"; and their lines. */
void ctl_dnssec_missing(json_t *out);
void ctl_dnssec_missing_print(json_t *out);
/** In cluster mode, writes the validated pushes @lines ([[word, ...]],
 * borrowed) of time @at, samples kept @keep seconds and dated at most
 * @skew seconds ahead, to etcd, from where
 * every gslbd applies them (cluster/feed.h): returns 1 with the
 * revision in *@rev, or dies when etcd does not take them (nothing
 * written).  Standalone: returns 0 and does nothing. */
int ctl_cluster_push(json_t *lines, uint32_t at, double keep, double skew,
                     int64_t *rev);
/** Frees what ctl_cluster_init() made. */
void ctl_cluster_done(void);

/** stats: the daemon's counters from its statistics endpoint
 * (ctl_stats.c).  Needs neither the store nor ctl_db. */
int ctl_cmd_stats(int argc, char **argv);

/** S2-2: applies service option @o (value @v) to @s if it is
 * --score-weights; returns 1 if it was, 0 if not; dies on a bad value
 * (ctl_score.c). */
int ctl_score_service_opt(json_t *s, const char *sub, const char *o, const char *v);
/** S1-3: applies --probe-budget (value @v) to node or service @obj
 * (@what names it in errors); returns 1 if @o was it, else 0. */
int ctl_probe_budget_opt(json_t *obj, const char *what, const char *o, const char *v);
/** The service's score weights as `service show` prints them
 * ("network=40,..." or "default"), a new reference. */
json_t *ctl_score_view(json_t *s);

#endif
