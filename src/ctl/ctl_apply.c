/* SPDX-License-Identifier: MIT */
/* gslbctl export and apply: the whole weight table as one JSON document,
 * and making the store equal to such a document in one audited change. */
#include "ctl/ctl.h"
#include "common/util.h"
#include "gslb/geo.h"
#include "gslb/policy.h"
#include "health/probe.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

static json_t *export_all(wdb_txn_t *t)
{
	json_t *out = json_pack("{s:i, s:[], s:[], s:[]}", "version", WDB_SCHEMA,
	                        "services", "nodes", "weights");
	static const char *const keys[] = { "services", "nodes", "weights" };
	for (int k = 0; k < 3; k++) {
		wdb_each(t, (wdb_kind_t)k, NULL, ctl_collect_value, json_object_get(out, keys[k]));
	}
	/* The steering engine's shares are derived, not the operator's
	 * table: they stay out of the export. */
	size_t i;
	json_t *row;
	json_array_foreach(json_object_get(out, "weights"), i, row)
		json_object_del(row, "steer");
	return out;
}

int ctl_cmd_export(int argc, char **argv)
{
	(void)argv;
	if (argc)
		ctl_die("export: unexpected argument '%s'", argv[0]);
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
}

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
	json_array_foreach(addrs, i, a) {
		struct in_addr a4;
		struct in6_addr a6;
		const char *s = json_string_value(a);
		if (!s || (inet_pton(AF_INET, s, &a4) != 1 && inet_pton(AF_INET6, s, &a6) != 1))
			ctl_die("apply: node %s: bad address in addrs", id);
	}
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
	ctl_one_of("admin", admin ? admin : "auto", ctl_admin_set);
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
	/* The steering engine's shares are its own to write. */
	json_object_del(o, "steer");
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

int ctl_cmd_apply(int argc, char **argv)
{
	if (argc != 1)
		ctl_die("apply: give exactly one FILE (JSON, as written by export)");
	json_error_t je;
	json_t *in = json_load_file(argv[0], 0, &je);
	if (!in && je.line > 0)
		ctl_die("apply: %s:%d: %s", argv[0], je.line, je.text);
	if (!in)
		ctl_die("apply: %s", je.text);
	if (!json_is_object(in))
		ctl_die("apply: %s: the top level must be an object", argv[0]);
	wdb_txn_t *t = ctl_begin();
	static const char *const keys[] = { "services", "nodes", "weights" };
	json_t *want[3];
	for (int k = 0; k < 3; k++) {
		want[k] = json_object();
		json_t *arr = json_object_get(in, keys[k]);
		if (arr && !json_is_array(arr))
			ctl_die("apply: %s: '%s' must be a list", argv[0], keys[k]);
		size_t i;
		json_t *o;
		json_array_foreach(arr, i, o) {
			char key[1300];
			apply_check((wdb_kind_t)k, o, i, key, sizeof(key));
			if (json_object_get(want[k], key))
				ctl_die("apply: %s: %s '%s' appears twice", argv[0], keys[k], key);
			json_object_set(want[k], key, o);
		}
	}
	/* Make the store equal to the file: delete what it lacks, write
	 * what differs; references are checked when plans are rebuilt. */
	unsigned changed = 0;
	for (int k = 2; k >= 0; k--) {
		json_t *have = json_array();
		wdb_each(t, (wdb_kind_t)k, NULL, ctl_collect_key, have);
		size_t i;
		json_t *key;
		json_array_foreach(have, i, key)
			if (!json_object_get(want[k], json_string_value(key))) {
				ctl_set(t, (wdb_kind_t)k, json_string_value(key), NULL);
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
				ctl_set(t, (wdb_kind_t)k, key, o);
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
	ctl_commit(t, what);
	return 0;
}

