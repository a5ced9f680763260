/* SPDX-License-Identifier: MIT */
/* gslbctl dnssec: enable a zone's signing, make keys, and show them with
 * the DS records for the parent zone.
 *
 * A key is made in the keystore (dnssec.keystore of gslbd.conf) and its
 * metadata committed in one audited transaction; a key whose commit
 * fails leaves no file behind.  gslbd loads the keys within a second
 * (it polls the store's "dnssecgen" counter), or at its next start. */
#include "ctl/ctl.h"
#include "common/util.h"
#include "dnssec/dnssec.h"
#include "dnssec/keydb.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The zone @arg names, as the store keys it (lowercase presentation
 * form, no final dot), into @out; dies unless it is a configured zone
 * (with -c). */
static void zone_arg(const char *cmd, const char *arg, char *out, size_t size)
{
	uint8_t wire[256], low[256];
	char buf[1100];
	if (!dname_from_str(arg, wire) || wire[0] == 0)
		ctl_die("dnssec %s: '%s' is not a zone name", cmd, arg);
	dname_copy_lower(low, wire);
	dname_to_str(low, buf, sizeof(buf));
	size_t l = strlen(buf);
	if (l > 1)
		buf[l - 1] = 0;
	snprintf(out, size, "%s", buf);
	if (!ctl_conf)
		return;
	for (size_t i = 0; i < ctl_conf->nzones; i++)
		if (dname_equal(low, ctl_conf->zones[i].dname))
			return;
	ctl_die("dnssec %s: %s is not a zone of %s", cmd, out, ctl_conf->path);
}

/* The keystore of the configuration; dies without one. */
static char *keystore(const char *cmd)
{
	char err[512];
	dnssec_conf_t dc;
	if (!ctl_conf)
		ctl_die("dnssec %s: needs the configuration's keystore: give -c CONF "
		        "(with a dnssec: keystore: DIR section), not -d", cmd);
	if (dnssec_conf_load(ctl_conf, &dc, err, sizeof(err)))
		ctl_die("%s", err);
	if (!dc.keystore)
		ctl_die("dnssec %s: %s has no dnssec: keystore: DIR section", cmd,
		        ctl_conf->path);
	/* A keystore that is not there yet is made, for the owner only. */
	if (mkdir(dc.keystore, 0700) && errno != EEXIST)
		ctl_die("dnssec %s: keystore %s: %s", cmd, dc.keystore, strerror(errno));
	if (access(dc.keystore, W_OK | X_OK))
		ctl_die("dnssec %s: keystore %s: not a directory this user can write",
		        cmd, dc.keystore);
	return dc.keystore;
}

/* The --algorithm option among @argv[@from..]; ECDSA P-256 by default. */
static int alg_opt(const char *cmd, int argc, char **argv, int from)
{
	int alg = DNSSEC_ALG_ECDSAP256;
	for (int i = from; i < argc; i++) {
		if (strcmp(argv[i], "--algorithm") != 0)
			ctl_usage_die("dnssec %s: unknown option '%s'", cmd, argv[i]);
		if (i + 1 >= argc)
			ctl_usage_die("dnssec %s: --algorithm needs a value (ecdsap256 "
			              "or ed25519)", cmd);
		alg = dnssec_alg_parse(argv[++i]);
		if (!alg)
			ctl_die("dnssec %s: --algorithm %s: give ecdsap256 (13) or "
			        "ed25519 (15)", cmd, argv[i]);
	}
	return alg;
}

static void refuse_cluster(const char *cmd)
{
	if (ctl_cluster_on())
		ctl_die("dnssec %s: signing keys are kept per instance, and this "
		        "store is one of a cluster: not supported yet", cmd);
}

/* Commits @t (as ctl_commit() does) and removes @files (a JSON array of
 * paths) when the commit fails, so that a refused change leaves no key
 * file.  Returns the change id. */
static int64_t commit_keys(wdb_txn_t *t, const char *what, json_t *files)
{
	char err[512];
	int64_t id = wdb_commit(t, what, err, sizeof(err));
	if (id < 0) {
		size_t i;
		json_t *f;
		json_array_foreach(files, i, f)
			unlink(json_string_value(f));
		ctl_die("%s; nothing was changed", err);
	}
	return id;
}

/* Makes a key of @alg for @zone in @t; appends its file to @files. */
static json_t *make_key(wdb_txn_t *t, const char *ks, const char *zone,
                        int alg, json_t *files)
{
	char err[512];
	json_t *rec = keydb_keygen(t, ks, zone, alg, (int64_t)time(NULL), err,
	                           sizeof(err));
	if (!rec) {
		size_t i;
		json_t *f;
		json_array_foreach(files, i, f)
			unlink(json_string_value(f));
		ctl_die("dnssec: %s", err);
	}
	char *path = keydb_path(ks, json_string_value(json_object_get(rec, "file")));
	json_array_append_new(files, json_string(path));
	free(path);
	return rec;
}

/* The DS records of the zone's keys that have the SEP flag and are
 * published or active: what the parent zone needs. */
static json_t *ds_list(json_t *keys, const char *zone)
{
	json_t *out = json_array();
	size_t i;
	json_t *k;
	json_array_foreach(keys, i, k) {
		const char *st = json_string_value(json_object_get(k, "state"));
		json_int_t flags = json_integer_value(json_object_get(k, "flags"));
		char ds[300];
		if (!st || (strcmp(st, "active") && strcmp(st, "published")) ||
		    !(flags & 1) || keydb_ds(k, zone, ds, sizeof(ds)))
			continue;
		json_array_append_new(out, json_string(ds));
	}
	return out;
}

/* The DS lines of @ds under a heading, when there are any. */
static void print_ds(json_t *ds)
{
	size_t i;
	json_t *d;
	if (json_array_size(ds))
		printf("DS for the parent zone:\n");
	json_array_foreach(ds, i, d)
		printf("  %s\n", json_string_value(d));
}

static void print_after(const char *zone, int64_t id, const char *what,
                        json_t *key, json_t *ds)
{
	if (ctl_json) {
		json_t *doc = json_pack("{s:I, s:s, s:O, s:O}", "change", (json_int_t)id,
		                        "zone", zone, "key", key, "ds", ds);
		ctl_print_json(doc);
		json_decref(doc);
	} else {
		printf("change %lld: %s\n", (long long)id, what);
		printf("key %lld (%s) made for zone %s\n",
		       (long long)json_integer_value(json_object_get(key, "tag")),
		       json_string_value(json_object_get(key, "algorithm_name")), zone);
		print_ds(ds);
		printf("gslbd signs with it within a second (a running one reloads)\n");
	}
	ctl_warn_no_daemon();
}

static int cmd_enable(int argc, char **argv, int keygen)
{
	const char *cmd = keygen ? "keygen" : "enable";
	if (argc < 2)
		ctl_usage_die("dnssec %s: give a zone", cmd);
	char zone[300];
	zone_arg(cmd, argv[1], zone, sizeof(zone));
	int alg = alg_opt(cmd, argc, argv, 2);
	refuse_cluster(cmd);
	char *ks = keystore(cmd);
	wdb_txn_t *t = ctl_begin();
	json_t *zr = keydb_zone(t, zone);
	int on = zr && json_is_true(json_object_get(zr, "enabled"));
	if (!keygen && on)
		ctl_die("dnssec enable: zone %s is signed already (dnssec status %s)",
		        zone, zone);
	if (keygen && !on)
		ctl_die("dnssec keygen: zone %s is not signed: dnssec enable %s makes "
		        "its first key", zone, zone);
	json_t *files = json_array();
	json_t *key = NULL;
	char what[400];
	if (!keygen) {
		json_t *rec = json_pack("{s:s, s:b, s:i, s:s, s:I}", "zone", zone,
		                        "enabled", 1, "algorithm", alg,
		                        "algorithm_name", dnssec_alg_name(alg),
		                        "enabled_at", (json_int_t)time(NULL));
		ctl_set(t, WDB_DNSSEC, zone, rec);
		json_decref(rec);
		snprintf(what, sizeof(what), "dnssec enable %s (%s)", zone,
		         dnssec_alg_name(alg));
	} else {
		snprintf(what, sizeof(what), "dnssec keygen %s (%s)", zone,
		         dnssec_alg_name(alg));
	}
	key = make_key(t, ks, zone, alg, files);
	json_t *keys = keydb_keys(t, zone);
	json_t *ds = ds_list(keys, zone);
	int64_t id = commit_keys(t, what, files);
	print_after(zone, id, what, key, ds);
	json_decref(keys);
	json_decref(ds);
	json_decref(key);
	json_decref(files);
	json_decref(zr);
	free(ks);
	return 0;
}

/* The view of key record @k that list and status show. */
static json_t *key_view(json_t *k)
{
	json_t *v = json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o}",
	                      "zone", ctl_field(k, "zone"), "tag", ctl_field(k, "tag"),
	                      "algorithm", ctl_field(k, "algorithm"),
	                      "algorithm_name", ctl_field(k, "algorithm_name"),
	                      "flags", ctl_field(k, "flags"),
	                      "role", ctl_field(k, "role"),
	                      "state", ctl_field(k, "state"),
	                      "file", ctl_field(k, "file"));
	static const char *const times[] = { "created", "published", "active" };
	for (int i = 0; i < 3; i++)
		ctl_set_time(v, times[i],
		             json_integer_value(json_object_get(k, times[i])));
	return v;
}

static void print_keys(json_t *keys)
{
	printf("%-24s %5s %-9s %5s %-4s %-9s %s\n", "ZONE", "TAG", "ALGORITHM",
	       "FLAGS", "ROLE", "STATE", "CREATED");
	size_t i;
	json_t *k;
	json_array_foreach(keys, i, k) {
		char when[40];
		ctl_utc(json_integer_value(json_object_get(k, "created")), when,
		        sizeof(when));
		printf("%-24s %5lld %-9s %5lld %-4s %-9s %s\n",
		       json_string_value(json_object_get(k, "zone")),
		       (long long)json_integer_value(json_object_get(k, "tag")),
		       json_string_value(json_object_get(k, "algorithm_name")),
		       (long long)json_integer_value(json_object_get(k, "flags")),
		       json_string_value(json_object_get(k, "role")),
		       json_string_value(json_object_get(k, "state")), when);
	}
}

static int collect_keys(const char *key, json_t *val, void *arr)
{
	if (strchr(key, '|'))
		json_array_append(arr, val);
	return 0;
}

static int cmd_list(int argc, char **argv)
{
	ctl_no_more_args("dnssec list", argc, argv, 1);
	wdb_txn_t *t = ctl_begin_read();
	json_t *all = json_array();
	wdb_each(t, WDB_DNSSEC, NULL, collect_keys, all);
	wdb_abort(t);
	if (ctl_json) {
		json_t *doc = json_pack("{s:o}", "keys", ctl_views(all, key_view));
		ctl_emit(doc);
	} else {
		print_keys(all);
	}
	json_decref(all);
	return 0;
}

static int cmd_status(int argc, char **argv, int ds_only)
{
	const char *cmd = ds_only ? "ds" : "status";
	if (argc < 2)
		ctl_usage_die("dnssec %s: give a zone", cmd);
	ctl_no_more_args(ds_only ? "dnssec ds" : "dnssec status", argc, argv, 2);
	char zone[300];
	zone_arg(cmd, argv[1], zone, sizeof(zone));
	wdb_txn_t *t = ctl_begin_read();
	json_t *zr = keydb_zone(t, zone);
	json_t *keys = keydb_keys(t, zone);
	wdb_abort(t);
	int on = zr && json_is_true(json_object_get(zr, "enabled"));
	json_t *ds = ds_list(keys, zone);
	if (ds_only) {
		if (!json_array_size(ds))
			ctl_die("dnssec ds: zone %s has no key (dnssec enable %s)", zone,
			        zone);
		if (ctl_json) {
			ctl_emit(json_pack("{s:s, s:O}", "zone", zone, "ds", ds));
		} else {
			size_t i;
			json_t *d;
			json_array_foreach(ds, i, d)
				printf("%s\n", json_string_value(d));
		}
	} else if (ctl_json) {
		json_t *doc = json_pack("{s:s, s:b, s:o, s:O}", "zone", zone,
		                        "signed", on, "keys", ctl_views(keys, key_view),
		                        "ds", ds);
		ctl_set_time(doc, "enabled_at",
		             json_integer_value(json_object_get(zr, "enabled_at")));
		ctl_emit(doc);
	} else {
		printf("zone %s: %s\n", zone, on ? "signed" : "not signed");
		if (json_array_size(keys))
			print_keys(keys);
		print_ds(ds);
	}
	json_decref(ds);
	json_decref(keys);
	json_decref(zr);
	return 0;
}

int ctl_cmd_dnssec(int argc, char **argv)
{
	if (argc < 1)
		ctl_usage_die("dnssec: missing subcommand (enable, keygen, list, "
		              "status, ds)");
	const char *sub = argv[0];
	if (strcmp(sub, "enable") == 0)
		return cmd_enable(argc, argv, 0);
	if (strcmp(sub, "keygen") == 0)
		return cmd_enable(argc, argv, 1);
	if (strcmp(sub, "list") == 0)
		return cmd_list(argc, argv);
	if (strcmp(sub, "status") == 0)
		return cmd_status(argc, argv, 0);
	if (strcmp(sub, "ds") == 0)
		return cmd_status(argc, argv, 1);
	ctl_usage_die("dnssec: unknown subcommand '%s' (enable, keygen, list, "
	              "status, ds)", sub);
}
