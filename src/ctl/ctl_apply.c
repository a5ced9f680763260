/* SPDX-License-Identifier: MIT */
/* gslbctl export and apply: the whole weight table as one JSON document,
 * and making the store equal to such a document in one audited change. */
#include "ctl/ctl.h"
#include "ctl/ctl_release.h"
#include "ctl/ctl_steer.h"
#include "common/util.h"
#include "gslb/geo.h"
#include "gslb/policy.h"
#include "probe/probe.h"
#include "store/change.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The operator's part of each stored object of one kind, into an array
 * (export) or an object by key (apply's view of the store). */
typedef struct {
	int kind;
	json_t *out;
} doc_collect_t;

static int doc_collect(const char *key, json_t *val, void *arg)
{
	doc_collect_t *c = arg;
	json_t *v = wdb_doc_object(c->kind, val);
	if (json_is_array(c->out))
		json_array_append_new(c->out, v);
	else
		json_object_set_new(c->out, key, v);
	return 0;
}

/* The objects of kind @k as a document holds them, in @out (an array or
 * an object). */
static void doc_read(wdb_txn_t *t, int k, json_t *out)
{
	doc_collect_t c = { k, out };
	wdb_each(t, (wdb_kind_t)k, NULL, doc_collect, &c);
}

static json_t *export_all(wdb_txn_t *t)
{
	json_t *out = json_pack("{s:i}", "version", WDB_FORMAT_VERSION);
	/* The steering engine's shares are derived, not the operator's
	 * table: wdb_doc_object() leaves them out. */
	for (int k = 0; k < 3; k++) {
		json_t *list = json_array();
		doc_read(t, k, list);
		json_object_set_new(out, wdb_doc_lists[k], list);
	}
	return out;
}

int ctl_cmd_export(int argc, char **argv)
{
	ctl_no_more_args("export", argc, argv, 0);
	wdb_txn_t *t = ctl_begin_read();
	json_t *all = export_all(t);
	wdb_abort(t);
	ctl_print_json(all);
	json_decref(all);
	return 0;
}

/* Checks service object @o (services[@idx]) and fills in defaults; its
 * key (the canonical name) goes to @key. */
static void apply_check_service(json_t *o, size_t idx, char *key, size_t keysize)
{
	const char *n = json_string_value(json_object_get(o, "name"));
	if (!n)
		ctl_die("apply: services[%zu] has no name", idx);
	ctl_service_name(n, key, keysize);
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
			ctl_die("apply: service %s: %s must be a number from %d to %ld",
			    key, nums[i], i == 2, maxs[i]);
	}
	const char *ad = json_string_value(json_object_get(o, "all_down"));
	ctl_one_of("all_down", ad ? ad : "open", ctl_all_down_set);
	if (!ad)
		json_object_set_new(o, "all_down", json_string("open"));
	if (!json_object_get(o, "sticky"))
		json_object_set_new(o, "sticky", json_false());
	if (!json_object_get(o, "shadow"))
		json_object_set_new(o, "shadow", json_false());
	if (!json_is_boolean(json_object_get(o, "sticky")) ||
	    !json_is_boolean(json_object_get(o, "shadow")))
		ctl_die("apply: service %s: sticky and shadow must be true or false", key);
	if (json_integer_value(json_object_get(o, "short_ttl")) >
	    json_integer_value(json_object_get(o, "ttl")))
		ctl_die("apply: service %s: short_ttl is longer than ttl", key);
	json_t *pf = json_object_get(o, "profile");
	const char *pv = json_string_value(pf);
	if (pf && (!pv || (strcmp(pv, "probe") != 0 && strcmp(pv, "four") != 0)))
		ctl_die("apply: service %s: profile must be \"probe\" or \"four\" "
		    "(leave it out for the default)", key);
	ctl_release_check(o, key);
	ctl_steer_apply_service(o, key);
	ctl_score_apply_service(o, key);
}

/* apply --allow-special: node addresses no client can use pass (a lab). */
static int apply_allow_special;

/* Checks node object @o (nodes[@idx]) and fills in defaults. */
static void apply_check_node(json_t *o, size_t idx, char *key, size_t keysize)
{
	const char *id = json_string_value(json_object_get(o, "id"));
	if (!id || !ctl_valid_node_id(id))
		ctl_die("apply: nodes[%zu]: missing or bad id", idx);
	snprintf(key, keysize, "%s", id);
	json_t *addrs = json_object_get(o, "addrs");
	size_t i;
	json_t *a;
	json_t *seen = json_array();
	json_array_foreach(addrs, i, a) {
		struct in_addr a4;
		struct in6_addr a6;
		const char *s = json_string_value(a);
		if (!s || (inet_pton(AF_INET, s, &a4) != 1 && inet_pton(AF_INET6, s, &a6) != 1))
			ctl_die("apply: node %s: bad address in addrs", id);
		ctl_check_addr(id, s, seen, apply_allow_special);
		json_array_append(seen, a);
	}
	json_decref(seen);
	const char *cn = json_string_value(json_object_get(o, "cname"));
	uint8_t w[256];
	if (cn && (!dname_from_str(cn, w) || !w[0]))
		ctl_die("apply: node %s: bad cname", id);
	if (!json_array_size(addrs) && !cn)
		ctl_die("apply: node %s: needs addrs or cname", id);
	if (json_array_size(addrs) && cn)
		ctl_die("apply: node %s: addrs and cname exclude each other", id);
	static const char *const words[] = { "region", "isp" };
	for (int k = 0; k < 2; k++) {
		const char *v = json_string_value(json_object_get(o, words[k]));
		if (!v)
			json_object_set_new(o, words[k], json_string("*"));
		else if (strcmp(v, "*") != 0 && !ctl_valid_word(v, 0))
			ctl_die("apply: node %s: bad %s '%s'", id, words[k], v);
	}
	const char *pool = json_string_value(json_object_get(o, "pool"));
	ctl_one_of("pool", pool ? pool : "primary", ctl_pool_set);
	const char *admin = json_string_value(json_object_get(o, "admin"));
	ctl_one_of("admin", admin ? admin : "auto", wdb_admin_set);
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
		if (!json_is_string(pr) || probe_parse(json_string_value(pr), ctl_hc.interval,
		                                       ctl_hc.timeout, &ps, perr, sizeof(perr)))
			ctl_die("apply: node %s: probe: %s", id,
			    json_is_string(pr) ? perr : "not a string");
	}
	ctl_steer_apply_node(o, id);
	ctl_probe_budget_apply(o, "node", id);
}

/* Checks weight row @o (weights[@idx]) and canonicalises its names. */
static void apply_check_weight(json_t *o, size_t idx, char *key, size_t keysize)
{
	const char *svc = json_string_value(json_object_get(o, "service"));
	const char *r0 = json_string_value(json_object_get(o, "region"));
	const char *i0 = json_string_value(json_object_get(o, "isp"));
	if (!svc)
		ctl_die("apply: weights[%zu] has no service", idx);
	char name[1100], reg[GEO_NAME_MAX + 1], isp[GEO_NAME_MAX + 1];
	ctl_service_name(svc, name, sizeof(name));
	/* Copies: the object's strings are replaced below. */
	snprintf(reg, sizeof(reg), "%s", r0 ? r0 : "*");
	snprintf(isp, sizeof(isp), "%s", i0 ? i0 : "*");
	if (!ctl_valid_word(reg, 1) || !ctl_valid_word(isp, 1))
		ctl_die("apply: weights[%zu]: bad region or isp", idx);
	json_object_set_new(o, "service", json_string(name));
	json_object_set_new(o, "region", json_string(reg));
	json_object_set_new(o, "isp", json_string(isp));
	json_t *ws = json_object_get(o, "weights");
	if (!json_is_object(ws) || !json_object_size(ws))
		ctl_die("apply: weight row %s %s %s: weights must map node ids to numbers",
		    name, reg, isp);
	const char *id;
	json_t *w;
	json_object_foreach(ws, id, w)
		if (!json_is_integer(w) || json_integer_value(w) < 0 ||
		    json_integer_value(w) > 1000000)
			ctl_die("apply: weight row %s %s %s: weight of %s must be 0 to 1000000",
			    name, reg, isp, id);
	wdb_row_key(key, keysize, name, reg, isp);
}

/* Validates one object of an apply file; dies naming it.  Writes its
 * store key to @key. */
static void apply_check(wdb_kind_t kind, json_t *o, size_t idx, char *key,
                        size_t keysize)
{
	static const char *const what[] = { "services", "nodes", "weights" };
	if (!json_is_object(o))
		ctl_die("apply: %s[%zu] is not an object", what[kind], idx);
	if (kind == WDB_SERVICE)
		apply_check_service(o, idx, key, keysize);
	else if (kind == WDB_NODE)
		apply_check_node(o, idx, key, keysize);
	else
		apply_check_weight(o, idx, key, keysize);
}

/* Prints one key of @diff's list @what of kind @k as a line "  SIGN
 * KIND NAME" to @f; a weight row as "SERVICE REGION/ISP". */
static void print_key(FILE *f, char sign, int k, const char *key)
{
	static const char *const kind[] = { "service", "node", "weight" };
	wdb_row_parts_t p;
	if (k == WDB_WEIGHT && wdb_row_split(key, strlen(key), &p) == 0)
		fprintf(f, "  %c weight %.*s %.*s/%.*s\n", sign, (int)p.svc_len, p.svc,
		        (int)p.region_len, p.region, (int)p.isp_len, p.isp);
	else
		fprintf(f, "  %c %s %s\n", sign, kind[k], key);
}

/* Prints the lines of @diff under @what ("added"...) with @sign. */
static void print_diff_part(FILE *f, json_t *diff, const char *what, char sign)
{
	for (int k = 0; k < 3; k++) {
		size_t i;
		json_t *key;
		json_array_foreach(json_object_get(json_object_get(diff, what),
		                                   wdb_doc_lists[k]), i, key)
			print_key(f, sign, k, json_string_value(key));
	}
}

/* Each weight row of @want names a service and nodes of @want: a row
 * that would not build is named here, before anything is written. */
static void apply_check_refs(json_t *want[3], const char *file)
{
	const char *key;
	json_t *row;
	json_object_foreach(want[WDB_WEIGHT], key, row) {
		const char *svc = json_string_value(json_object_get(row, "service"));
		if (!json_object_get(want[WDB_SERVICE], svc))
			ctl_die("apply: %s: weight row %s %s/%s: service %s is not in the file; "
			    "nothing was changed", file, svc,
			    json_string_value(json_object_get(row, "region")),
			    json_string_value(json_object_get(row, "isp")), svc);
		const char *id;
		json_t *w;
		json_object_foreach(json_object_get(row, "weights"), id, w)
			if (!json_object_get(want[WDB_NODE], id))
				ctl_die("apply: %s: weight row %s %s/%s: unknown node '%s'; "
				    "nothing was changed", file, svc,
				    json_string_value(json_object_get(row, "region")),
				    json_string_value(json_object_get(row, "isp")), id);
	}
}

/* Reads @path ("-": standard input) into @want (kind -> {store key:
 * object}), validated and with the defaults filled in; dies naming the
 * first problem, and the document as @file. */
static void apply_read(const char *path, const char *file, json_t *want[3])
{
	json_error_t je;
	json_t *in = strcmp(path, "-") == 0 ? json_loadf(stdin, 0, &je)
	                                    : json_load_file(path, 0, &je);
	if (!in && je.line > 0)
		ctl_die("apply: %s:%d: %s", file, je.line, je.text);
	if (!in)
		ctl_die("apply: %s", je.text);
	char err[600];
	if (wdb_doc_check(in, err, sizeof(err)))
		ctl_die("apply: %s: %s; nothing was changed", file, err);
	for (int k = 0; k < 3; k++) {
		want[k] = json_object();
		size_t i;
		json_t *o;
		json_array_foreach(json_object_get(in, wdb_doc_lists[k]), i, o) {
			char key[1300];
			apply_check((wdb_kind_t)k, o, i, key, sizeof(key));
			if (json_object_get(want[k], key))
				ctl_die("apply: %s: %s '%s' appears twice", file,
				    wdb_doc_lists[k], key);
			json_object_set(want[k], key, o);
		}
	}
	json_decref(in);
	apply_check_refs(want, file);
}

/* The regions and ISPs of the nodes and rows @diff adds or changes
 * (from @want) are names clients are located in, as for node add and
 * weight set (nodes only when the geoip sources name any); what the
 * file leaves as it is passes unchecked. */
static void apply_check_areas(wdb_txn_t *t, const char *file, json_t *diff,
                              json_t *want[3])
{
	static const char *const parts[] = { "added", "changed" };
	for (int k = ctl_area_geo(t, "apply") ? 1 : 2; k < 3; k++)
		for (int p = 0; p < 2; p++) {
			size_t i;
			json_t *key;
			json_array_foreach(json_object_get(json_object_get(diff, parts[p]),
			                                   wdb_doc_lists[k]), i, key) {
				json_t *o = json_object_get(want[k], json_string_value(key));
				char cmd[1500];
				if (k == 1)
					snprintf(cmd, sizeof(cmd), "apply %s: node %s", file,
					         json_string_value(key));
				else
					snprintf(cmd, sizeof(cmd), "apply %s: weight row %s", file,
					         json_string_value(json_object_get(o, "service")));
				for (int f = 0; f < 2; f++) {
					const char *v = json_string_value(
						json_object_get(o, f ? "isp" : "region"));
					if (v)
						ctl_check_area(t, cmd, f, v);
				}
			}
		}
}

int ctl_cmd_apply(int argc, char **argv)
{
	int dry = 0, force = 0;
	const char *file = NULL;
	for (int i = 0; i < argc; i++) {
		if (strcmp(argv[i], "--dry-run") == 0)
			dry = 1;
		else if (strcmp(argv[i], "--force") == 0)
			force = 1;
		else if (strcmp(argv[i], "--allow-special") == 0)
			apply_allow_special = 1;
		else if (strncmp(argv[i], "--", 2) == 0)
			ctl_usage_die("apply: unknown option '%s'", argv[i]);
		else if (file)
			ctl_usage_die("apply: unexpected argument '%s' (give one FILE)", argv[i]);
		else
			file = argv[i];
	}
	if (!file)
		ctl_usage_die("apply: give one FILE (JSON, as written by export; - for "
		    "standard input)");
	json_t *want[3];
	const char *path = file;
	if (strcmp(path, "-") == 0)
		file = ctl_stdin_name();
	apply_read(path, file, want);
	wdb_txn_t *t = dry ? ctl_begin_read() : ctl_begin();
	json_t *have = json_object(), *wdoc = json_object();
	for (int k = 0; k < 3; k++) {
		json_t *h = json_object();
		doc_read(t, k, h);
		json_object_set_new(have, wdb_doc_lists[k], h);
		json_object_set_new(wdoc, wdb_doc_lists[k], want[k]);
	}
	json_t *diff = wdb_table_diff(have, wdoc);
	size_t nadd = wdb_diff_count(diff, "added"), nchg = wdb_diff_count(diff, "changed"),
	       ndel = wdb_diff_count(diff, "deleted");
	char why[1000];
	int risky = wdb_diff_needs_force(diff, json_object_size(json_object_get(have, "weights")),
	                                 why, sizeof(why));
	apply_check_areas(t, file, diff, want);
	if (dry) {
		wdb_abort(t);
		printf("apply %s: would add %zu, change %zu, delete %zu object(s)%s%s; "
		       "--dry-run: nothing was written\n", file, nadd, nchg, ndel,
		       risky && !force ? "; needs --force: it deletes " : "", risky && !force ? why : "");
		print_diff_part(stdout, diff, "added", '+');
		print_diff_part(stdout, diff, "changed", '~');
		print_diff_part(stdout, diff, "deleted", '-');
		/* The exit code of the apply it shows: refused without --force. */
		if (risky && !force)
			ctl_exit(1);
	} else if (risky && !force) {
		/* A truncated download or the wrong file must not empty the
		 * table: say what would go and change nothing. */
		fprintf(stderr, "gslbctl: apply: %s would delete %s; nothing was changed (check the file, "
		        "or give --force). It would delete:\n", file, why);
		print_diff_part(stderr, diff, "deleted", '-');
		ctl_exit(1);
	} else if (!nadd && !nchg && !ndel) {
		wdb_abort(t);
		printf("apply: the store already equals %s; nothing to change\n", file);
	} else {
		/* Make the store equal to the file: rows go before the nodes and
		 * services they name, and come after them. */
		for (int k = 2; k >= 0; k--) {
			size_t i;
			json_t *key;
			json_array_foreach(json_object_get(json_object_get(diff, "deleted"),
			                                   wdb_doc_lists[k]), i, key)
				ctl_set(t, (wdb_kind_t)k, json_string_value(key), NULL);
		}
		for (int k = 0; k < 3; k++) {
			static const char *const parts[] = { "added", "changed" };
			for (int p = 0; p < 2; p++) {
				size_t i;
				json_t *key;
				json_array_foreach(json_object_get(json_object_get(diff, parts[p]),
				                                   wdb_doc_lists[k]), i, key)
					ctl_set(t, (wdb_kind_t)k, json_string_value(key),
					        json_object_get(want[k], json_string_value(key)));
			}
		}
		char what[1200];
		snprintf(what, sizeof(what), "apply %s (+%zu ~%zu -%zu)", file, nadd, nchg, ndel);
		ctl_commit(t, what);
	}
	json_decref(diff);
	json_decref(have);
	json_decref(wdoc);
	return 0;
}
