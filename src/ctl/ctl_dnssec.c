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
#include "dnssec/roll.h"

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
	char *dir = dc.keystore;
	dc.keystore = NULL;          /* the caller's; the rest is freed */
	dnssec_conf_clear(&dc);
	return dir;
}

/* The options of enable, keygen and import. */
typedef struct key_opts {
	int alg;                   /* --algorithm; ECDSA P-256 by default */
	int split;                 /* --split (enable) */
	const char *role;          /* --role; NULL: by the zone */
	const char *state;         /* --state (import): active by default */
} key_opts_t;

/* The options among @argv[@from..] that command @cmd takes (@allowed:
 * a for --algorithm, s --split, r --role, t --state). */
static void key_opts(const char *cmd, int argc, char **argv, int from,
                     const char *allowed, key_opts_t *o)
{
	memset(o, 0, sizeof(*o));
	o->alg = DNSSEC_ALG_ECDSAP256;
	o->state = "active";
	for (int i = from; i < argc; i++) {
		const char *a = argv[i];
		char c = !strcmp(a, "--algorithm") ? 'a' : !strcmp(a, "--split") ?
		         's' : !strcmp(a, "--role") ? 'r' : !strcmp(a, "--state") ?
		         't' : 0;
		if (!c || !strchr(allowed, c))
			ctl_usage_die("dnssec %s: unknown option '%s'", cmd, a);
		if (c == 's') {
			o->split = 1;
			continue;
		}
		if (i + 1 >= argc)
			ctl_usage_die("dnssec %s: %s needs a value", cmd, a);
		const char *v = argv[++i];
		if (c == 'a' && !(o->alg = dnssec_alg_parse(v)))
			ctl_die("dnssec %s: --algorithm %s: give ecdsap256 (13) or "
			        "ed25519 (15)", cmd, v);
		if (c == 'r' && !dnssec_role_use(v))
			ctl_die("dnssec %s: --role %s: give csk, ksk or zsk", cmd, v);
		if (c == 't' && strcmp(v, "active") && strcmp(v, "published"))
			ctl_die("dnssec %s: --state %s: give active or published", cmd, v);
		if (c == 'r')
			o->role = v;
		if (c == 't')
			o->state = v;
	}
}

/* The key files made by a change not committed yet: removed if gslbctl
 * exits before (a change etcd refused leaves no key file). */
static json_t *g_pending;

static void unlink_pending(void)
{
	size_t i;
	json_t *f;
	json_array_foreach(g_pending, i, f)
		unlink(json_string_value(f));
}

/* Commits @t (as ctl_commit() does) and removes @files (a JSON array of
 * paths) when the commit fails, so that a refused change leaves no key
 * file.  Returns the change id; -1 in cluster mode, where the change
 * went through etcd and its revision is printed. */
static int64_t commit_keys(wdb_txn_t *t, const char *what, json_t *files)
{
	char err[512];
	if (ctl_cluster_on()) {
		g_pending = files;
		atexit(unlink_pending);
		ctl_cluster_quiet(1);
		ctl_commit(t, what);
		ctl_cluster_quiet(0);
		g_pending = NULL;
		return -1;
	}
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

/* Removes the files of @files (a JSON array of paths) and dies with
 * @err: a change refused leaves no key file. */
static void die_unlinking(json_t *files, const char *err)
{
	size_t i;
	json_t *f;
	json_array_foreach(files, i, f)
		unlink(json_string_value(f));
	ctl_die("dnssec: %s", err);
}

/* Appends to @files the path of the key file of record @rec. */
static void note_file(json_t *files, const char *ks, json_t *rec)
{
	char *path = keydb_path(ks, json_string_value(json_object_get(rec, "file")));
	json_array_append_new(files, json_string(path));
	free(path);
}

/* Makes a key of @alg and @role for @zone in @t; appends its file to
 * @files. */
static json_t *make_key(wdb_txn_t *t, const char *ks, const char *zone,
                        int alg, const char *role, json_t *files)
{
	char err[512];
	json_t *rec = keydb_keygen(t, ks, zone, alg, role, "active",
	                           (int64_t)time(NULL), err, sizeof(err));
	if (!rec)
		die_unlinking(files, err);
	note_file(files, ks, rec);
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
		if (id < 0)   /* through the cluster: its revision */
			json_object_set_new(doc, "revision",
			                    json_integer(ctl_cluster_revision()));
		ctl_print_json(doc);
		json_decref(doc);
	} else {
		if (id >= 0)
			printf("change %lld: %s\n", (long long)id, what);
		else
			printf("cluster revision %lld: %s\n",
			       (long long)ctl_cluster_revision(), what);
		printf("key %lld (%s) made for zone %s\n",
		       (long long)json_integer_value(json_object_get(key, "tag")),
		       json_string_value(json_object_get(key, "algorithm_name")), zone);
		print_ds(ds);
		printf("gslbd signs with it within a second (a running one reloads)\n");
	}
	ctl_warn_no_daemon();
}

/* Commits the key @key that @t adds to @zone with audit text @what
 * (removing @files if the commit fails), prints it with the zone's DS
 * records, and frees @key and @files. */
static void finish_key(wdb_txn_t *t, const char *zone, const char *what,
                       json_t *key, json_t *files)
{
	json_t *keys = keydb_keys(t, zone);
	json_t *ds = ds_list(keys, zone);
	int64_t id = commit_keys(t, what, files);
	print_after(zone, id, what, key, ds);
	json_decref(keys);
	json_decref(ds);
	json_decref(key);
	json_decref(files);
}

/* The role of a key keygen or import adds to zone record @zr: the one
 * given, else a ZSK in a split zone, a CSK in another. */
static const char *add_role(const key_opts_t *o, json_t *zr)
{
	if (o->role)
		return o->role;
	return json_is_true(json_object_get(zr, "split")) ? "zsk" : "csk";
}

static int cmd_enable(int argc, char **argv, int keygen)
{
	const char *cmd = keygen ? "keygen" : "enable";
	if (argc < 2)
		ctl_usage_die("dnssec %s: give a zone", cmd);
	char zone[300];
	zone_arg(cmd, argv[1], zone, sizeof(zone));
	key_opts_t o;
	key_opts(cmd, argc, argv, 2, keygen ? "ar" : "as", &o);
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
		json_t *rec = json_pack("{s:s, s:b, s:i, s:s, s:I, s:b}", "zone", zone,
		                        "enabled", 1, "algorithm", o.alg,
		                        "algorithm_name", dnssec_alg_name(o.alg),
		                        "enabled_at", (json_int_t)time(NULL),
		                        "split", o.split);
		ctl_set(t, WDB_DNSSEC, zone, rec);
		json_decref(rec);
		snprintf(what, sizeof(what), "dnssec enable %s (%s%s)", zone,
		         dnssec_alg_name(o.alg), o.split ? ", KSK and ZSK" : "");
		/* Split: the KSK first, then the ZSK the output names. */
		if (o.split)
			json_decref(make_key(t, ks, zone, o.alg, "ksk", files));
		key = make_key(t, ks, zone, o.alg, o.split ? "zsk" : "csk", files);
	} else {
		const char *role = add_role(&o, zr);
		snprintf(what, sizeof(what), "dnssec keygen %s (%s %s)", zone,
		         dnssec_alg_name(o.alg), role);
		key = make_key(t, ks, zone, o.alg, role, files);
	}
	finish_key(t, zone, what, key, files);
	json_decref(zr);
	free(ks);
	return 0;
}

/* dnssec import ZONE FILE [--role R] [--state S]: the key of a PEM or
 * BIND private-key file, copied into the keystore as PEM. */
static int cmd_import(int argc, char **argv)
{
	if (argc < 3)
		ctl_usage_die("dnssec import: give a zone and a key file");
	char zone[300], err[512];
	zone_arg("import", argv[1], zone, sizeof(zone));
	key_opts_t o;
	key_opts("import", argc, argv, 3, "rt", &o);
	char *ks = keystore("import");
	wdb_txn_t *t = ctl_begin();
	json_t *zr = keydb_zone(t, zone);
	if (!zr || !json_is_true(json_object_get(zr, "enabled")))
		ctl_die("dnssec import: zone %s is not signed: dnssec enable %s first",
		        zone, zone);
	const char *role = add_role(&o, zr);
	dnssec_key_t *k = dnssec_key_import(argv[2], keydb_role_flags(role), err,
	                                    sizeof(err));
	if (!k)
		ctl_die("dnssec import: %s", err);
	json_t *files = json_array();
	json_t *key = keydb_add(t, ks, zone, k, role, o.state, (int64_t)time(NULL),
	                        err, sizeof(err));
	dnssec_key_free(k);
	if (!key)
		die_unlinking(files, err);
	note_file(files, ks, key);
	char what[1400];
	snprintf(what, sizeof(what), "dnssec import %s key %lld (%s %s, %s) from %s",
	         zone, (long long)json_integer_value(json_object_get(key, "tag")),
	         json_string_value(json_object_get(key, "algorithm_name")), role,
	         o.state, argv[2]);
	finish_key(t, zone, what, key, files);
	json_decref(zr);
	free(ks);
	return 0;
}

/* The DNSSEC_USE_* bits the active keys of @keys but key @skip cover. */
static unsigned uses_without(json_t *keys, unsigned skip)
{
	unsigned u = 0;
	size_t i;
	json_t *k;
	json_array_foreach(keys, i, k) {
		const char *st = json_string_value(json_object_get(k, "state"));
		if (st && !strcmp(st, "active") &&
		    (unsigned)json_integer_value(json_object_get(k, "tag")) != skip)
			u |= dnssec_role_use(json_string_value(json_object_get(k, "role")));
	}
	return u;
}

/* dnssec retire ZONE TAG: the key leaves the DNSKEY RRset and signs no
 * more, at once. */
static int cmd_retire(int argc, char **argv)
{
	if (argc < 3)
		ctl_usage_die("dnssec retire: give a zone and a key tag");
	ctl_no_more_args("dnssec retire", argc, argv, 3);
	char zone[300], *end;
	zone_arg("retire", argv[1], zone, sizeof(zone));
	unsigned long tag = strtoul(argv[2], &end, 10);
	if (!argv[2][0] || *end || tag > 65535)
		ctl_die("dnssec retire: '%s' is not a key tag (0-65535)", argv[2]);
	wdb_txn_t *t = ctl_begin();
	json_t *zr = keydb_zone(t, zone);
	json_t *rec = keydb_key(t, zone, (unsigned)tag);
	if (!rec || !keydb_live(rec))
		ctl_die("dnssec retire: zone %s has no key %lu in its DNSKEY set "
		        "(dnssec status %s)", zone, tag, zone);
	json_t *roll = json_object_get(zr, "roll");
	if (roll && (json_integer_value(json_object_get(roll, "old")) == (json_int_t)tag ||
	             json_integer_value(json_object_get(roll, "new")) == (json_int_t)tag))
		ctl_die("dnssec retire: key %lu of zone %s is rolling (dnssec status "
		        "%s): the rollover withdraws the old key itself", tag, zone, zone);
	json_t *keys = keydb_keys(t, zone);
	const char *st = json_string_value(json_object_get(rec, "state"));
	unsigned left = uses_without(keys, (unsigned)tag);
	if (!strcmp(st, "active") && !(left & DNSSEC_USE_KEYSET))
		ctl_die("dnssec retire: key %lu is the last active key that signs "
		        "the DNSKEY set of %s: make its successor first (dnssec "
		        "keygen)", tag, zone);
	if (!strcmp(st, "active") && !(left & DNSSEC_USE_ZONE))
		ctl_die("dnssec retire: key %lu is the last active key that signs "
		        "the data of %s: make its successor first (dnssec keygen)",
		        tag, zone);
	json_object_del(rec, "cds");
	if (keydb_set_state(t, rec, "retired", (int64_t)time(NULL)))
		ctl_die("dnssec retire: cannot store the key record");
	char what[400];
	snprintf(what, sizeof(what), "dnssec retire %s key %lu", zone, tag);
	/* ctl_commit() prints the change (or its JSON). */
	ctl_commit(t, what);
	if (!ctl_json)
		printf("key %lu left the DNSKEY set of %s; its file stays in the "
		       "keystore\n", tag, zone);
	ctl_warn_no_daemon();
	json_decref(keys);
	json_decref(rec);
	json_decref(zr);
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
	static const char *const times[] = { "created", "published", "active",
	                                     "inactive", "retired" };
	json_object_set_new(v, "cds", json_boolean(json_is_true(json_object_get(k,
	                    "cds"))));
	for (int i = 0; i < 5; i++)
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

/* The rollover of zone record @zr (with @keys) as status shows it: the
 * one in progress, or the next one the lifetimes plan; the times need
 * the configuration (-c).  NULL: none. */
static json_t *roll_view(json_t *zr, json_t *keys)
{
	dnssec_conf_t dc;
	char err[512];
	int have = ctl_conf != NULL;
	if (have && dnssec_conf_load(ctl_conf, &dc, err, sizeof(err)))
		ctl_die("%s", err);
	json_t *r = json_object_get(zr, "roll");
	if (!have && !json_is_object(r))
		return NULL;
	json_t *v = json_is_object(r) ? json_deep_copy(r) : json_object();
	json_object_del(v, "since");
	ctl_set_time(v, "since", json_integer_value(json_object_get(r, "since")));
	if (have) {
		roll_plan_t p;
		/* The DS checks are the daemon's: the first one is shown. */
		roll_plan(&dc, zr, keys, (int64_t)time(NULL), 0, &p);
		dnssec_conf_clear(&dc);
		if (!p.step && !json_is_object(r)) {
			json_decref(v);
			return NULL;
		}
		json_object_set_new(v, "next_step", json_string(roll_step_name(p.step)));
		if (!json_is_object(r)) {
			json_object_set_new(v, "kind", json_string(p.kind));
			json_object_set_new(v, "old", json_integer(p.old_tag));
		}
		ctl_set_time(v, "next_at", p.at);
	}
	return v;
}

static void print_roll(json_t *v)
{
	if (!v) {
		printf("no rollover planned (dnssec: zsk-lifetime, ksk-lifetime, "
		       "csk-lifetime)\n");
		return;
	}
	const char *ph = json_string_value(json_object_get(v, "phase"));
	if (ph)
		printf("rollover: %s, key %lld to key %lld, phase %s since %s\n",
		       json_string_value(json_object_get(v, "kind")),
		       (long long)json_integer_value(json_object_get(v, "old")),
		       (long long)json_integer_value(json_object_get(v, "new")), ph,
		       json_string_value(json_object_get(v, "since")));
	else
		printf("next rollover: %s of key %lld\n",
		       json_string_value(json_object_get(v, "kind")),
		       (long long)json_integer_value(json_object_get(v, "old")));
	const char *step = json_string_value(json_object_get(v, "next_step"));
	if (step)
		printf("next step: %s, at %s\n", step,
		       json_string_value(json_object_get(v, "next_at")));
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
		json_t *rv = roll_view(zr, keys);
		json_t *doc = json_pack("{s:s, s:b, s:o, s:O, s:o}", "zone", zone,
		                        "signed", on, "keys", ctl_views(keys, key_view),
		                        "ds", ds, "rollover", rv ? rv : json_null());
		ctl_set_time(doc, "enabled_at",
		             json_integer_value(json_object_get(zr, "enabled_at")));
		ctl_emit(doc);
	} else {
		printf("zone %s: %s\n", zone, on ? "signed" : "not signed");
		if (json_array_size(keys))
			print_keys(keys);
		print_ds(ds);
		if (on) {
			json_t *rv = roll_view(zr, keys);
			print_roll(rv);
			json_decref(rv);
		}
	}
	json_decref(ds);
	json_decref(keys);
	json_decref(zr);
	return 0;
}

int ctl_cmd_dnssec(int argc, char **argv)
{
	if (argc < 1)
		ctl_usage_die("dnssec: missing subcommand (enable, keygen, import, "
		              "retire, list, status, ds)");
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
	if (strcmp(sub, "import") == 0)
		return cmd_import(argc, argv);
	if (strcmp(sub, "retire") == 0)
		return cmd_retire(argc, argv);
	ctl_usage_die("dnssec: unknown subcommand '%s' (enable, keygen, import, "
	              "retire, list, status, ds)", sub);
}

/* cluster status: the signing keys this instance lacks ------------ */

/* The keys (active or published) of every signed zone of the store
 * whose file is not in the configuration's keystore, into @out's
 * "dnssec_keys_missing": [{zone, tag, state, file}].  In a cluster the
 * files come from etcd; a gslbd that lacks an active one answers the
 * zone's DO queries SERVFAIL. */
void ctl_dnssec_missing(json_t *out)
{
	char err[512];
	dnssec_conf_t dc;
	if (!ctl_conf || dnssec_conf_load(ctl_conf, &dc, err, sizeof(err)))
		return;
	json_t *miss = json_array();
	wdb_txn_t *t = ctl_begin_read();
	json_t *zones = keydb_zones(t);
	size_t i, j;
	json_t *z, *k;
	json_array_foreach(zones, i, z) {
		const char *zone = json_string_value(json_object_get(z, "zone"));
		if (!zone || !json_is_true(json_object_get(z, "enabled")))
			continue;
		json_t *keys = keydb_keys(t, zone);
		json_array_foreach(keys, j, k) {
			const char *file = json_string_value(json_object_get(k, "file"));
			if (!keydb_live(k) || !file)
				continue;
			char *path = dc.keystore ? keydb_path(dc.keystore, file) : NULL;
			if (!path || access(path, F_OK))
				json_array_append_new(miss, json_pack("{s:s, s:O, s:O, s:s}",
				    "zone", zone, "tag", json_object_get(k, "tag"),
				    "state", json_object_get(k, "state"), "file", file));
			free(path);
		}
		json_decref(keys);
	}
	json_decref(zones);
	wdb_abort(t);
	dnssec_conf_clear(&dc);
	json_object_set_new(out, "dnssec_keys_missing", miss);
}

void ctl_dnssec_missing_print(json_t *out)
{
	size_t i;
	json_t *m;
	json_array_foreach(json_object_get(out, "dnssec_keys_missing"), i, m) {
		const char *st = json_string_value(json_object_get(m, "state"));
		printf("dnssec: zone %s: key %lld (%s) is MISSING from the keystore "
		       "(%s)%s\n", json_string_value(json_object_get(m, "zone")),
		       json_integer_value(json_object_get(m, "tag")), st,
		       json_string_value(json_object_get(m, "file")),
		       st && !strcmp(st, "active") ? ": its queries with DO are "
		       "answered SERVFAIL" : "");
	}
}
