/* SPDX-License-Identifier: MIT */
/* The checks, difference and write of a table document (apply.h). */
#include "store/apply.h"
#include "store/apply_int.h"
#include "common/net.h"
#include "common/util.h"
#include "gslb/geo.h"
#include "gslb/policy.h"
#include "health/push.h"
#include "health/score.h"
#include "probe/probe.h"
#include "steer/nearest.h"
#include "steer/nearest_run.h"
#include "steer/release.h"
#include "store/change.h"
#include "store/keys.h"

#include <arpa/inet.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const wdb_all_down_set[] = { "open", "fallback", "empty", NULL };
const char *const wdb_pool_set[] = { "primary", "standby", NULL };
const char *const wdb_steering_set[] = { "static", "dynamic", "shadow", "nearest", NULL };
const char *const wdb_policy_set[] = { "live", "vod", "custom", NULL };

/* The checks below say fail(e, CLASS, FIELD, TEXT...). */
#define fail wdb__apply_fail

int wdb__apply_fail(wdb_apply_err_t *e, int cls, const char *field,
                    const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	e->cls = cls;
	snprintf(e->field, sizeof(e->field), "%s", field ? field : "");
	return cls;
}

int wdb_in_set(const char *v, const char *const *set)
{
	for (; v && *set; set++)
		if (strcmp(v, *set) == 0)
			return 1;
	return 0;
}

/* "OPT V: not a valid choice" unless @v is in @set. */
static int one_of(const char *opt, const char *v, const char *const *set,
                  wdb_apply_err_t *e)
{
	if (wdb_in_set(v, set))
		return 0;
	return fail(e, WDB_EDIT_BAD, opt, "%s %s: not a valid choice", opt, v);
}

int wdb_service_name(const conf_t *conf, const char *name, char *out,
                     size_t size, wdb_apply_err_t *e)
{
	uint8_t wire[256], low[256];
	char buf[1100];
	if (!dname_from_str(name, wire) || wire[0] == 0)
		return fail(e, WDB_EDIT_BAD, "name", "service name '%s' is not a valid "
		            "domain name", name);
	dname_copy_lower(low, wire);
	dname_to_str(low, buf, sizeof(buf));
	size_t l = strlen(buf);
	if (l > 1)
		buf[l - 1] = 0;
	if (strchr(buf, WDB_KEY_SEP) || strchr(buf, '\\'))
		return fail(e, WDB_EDIT_BAD, "name", "service name '%s' has characters "
		            "that are not allowed", name);
	snprintf(out, size, "%s", buf);
	if (!conf)
		return 0;
	for (size_t i = 0; i < conf->nzones; i++) {
		if (dname_equal(low, conf->zones[i].dname))
			return fail(e, WDB_EDIT_BAD, "name", "service name '%s' is the apex "
			            "of zone %s: use a name below it", name, conf->zones[i].name);
		if (dname_is_sub(low, conf->zones[i].dname))
			return 0;
	}
	return fail(e, WDB_EDIT_BAD, "name", "service name '%s' is outside our zones "
	            "(%s)", name, conf->nzones ? conf->zones[0].name : "none configured");
}

int wdb_node_addr_check(const char *id, const char *addr, json_t *addrs,
                        int allow, wdb_apply_err_t *e)
{
	const char *special = net_addr_special(addr);
	if (special && !allow)
		return fail(e, WDB_EDIT_BAD, "addrs", "node %s: address %s is %s, which "
		            "no client can use (give --allow-special for a lab)", id, addr,
		            special);
	/* The same address twice would be a duplicate record in answers. */
	struct in6_addr a, b;
	int fam = strchr(addr, ':') ? AF_INET6 : AF_INET;
	inet_pton(fam, addr, &a);
	size_t i;
	json_t *x;
	json_array_foreach(addrs, i, x) {
		const char *o = json_string_value(x);
		if (o && (strchr(o, ':') ? AF_INET6 : AF_INET) == fam &&
		    inet_pton(fam, o, &b) == 1 &&
		    memcmp(&a, &b, fam == AF_INET ? 4 : 16) == 0)
			return fail(e, WDB_EDIT_BAD, "addrs", "node %s: address %s is given "
			            "twice", id, addr);
	}
	return 0;
}

int wdb_steer_weights_ok(json_t *w)
{
	static const char *const terms[] = { "success", "latency", "cost" };
	if (!json_is_object(w) || json_object_size(w) != 3)
		return 0;
	double sum = 0;
	for (int i = 0; i < 3; i++) {
		json_t *v = json_object_get(w, terms[i]);
		if (!json_is_number(v) || !(json_number_value(v) >= 0 &&
		                            json_number_value(v) <= WDB_WEIGHT_TERM_MAX))
			return 0;
		sum += json_number_value(v);
	}
	return sum > 0;
}

/* The service's keys of the steering engine (S3-1..S3-9). */
static int check_steer_service(json_t *o, const char *key, wdb_apply_err_t *e)
{
	json_t *st = json_object_get(o, "steering"), *p = json_object_get(o, "policy");
	json_t *w = json_object_get(o, "steer_weights"), *sla = json_object_get(o, "sla");
	if (st && (!json_is_string(st) || strcmp(json_string_value(st), "static") == 0 ||
	           !wdb_in_set(json_string_value(st), wdb_steering_set)))
		return fail(e, WDB_EDIT_BAD, "steering", "apply: service %s: steering must "
		            "be \"dynamic\", \"shadow\" or \"nearest\" (leave it out for "
		            "static)", key);
	if (p && (!json_is_string(p) || !wdb_in_set(json_string_value(p), wdb_policy_set)))
		return fail(e, WDB_EDIT_BAD, "policy", "apply: service %s: policy must be "
		            "\"live\", \"vod\" or \"custom\"", key);
	if (w && !wdb_steer_weights_ok(w))
		return fail(e, WDB_EDIT_BAD, "steer_weights", "apply: service %s: "
		            "steer_weights must be {\"success\": A, \"latency\": B, "
		            "\"cost\": C}, each from 0 to %g, adding up to more than 0", key,
		            WDB_WEIGHT_TERM_MAX);
	if (w && (!p || strcmp(json_string_value(p), "custom") != 0))
		return fail(e, WDB_EDIT_BAD, "steer_weights", "apply: service %s: "
		            "steer_weights go with \"policy\": \"custom\"", key);
	if (sla && (!json_is_number(sla) || !(json_number_value(sla) >= 0 &&
	                                      json_number_value(sla) <= 100)))
		return fail(e, WDB_EDIT_BAD, "sla", "apply: service %s: sla must be a "
		            "number from 0 to 100", key);
	json_t *m = json_object_get(o, "switch_margin"), *h = json_object_get(o, "headroom");
	double d;
	int ms;
	if (m && (!json_is_string(m) || nearest_margin_parse(json_string_value(m), &d, &ms)))
		return fail(e, WDB_EDIT_BAD, "switch_margin", "apply: service %s: "
		            "switch_margin must be a string like \"15%%\" or \"10ms\"", key);
	if (h && (!json_is_number(h) || !(json_number_value(h) >= 0 &&
	                                  json_number_value(h) <= 90)))
		return fail(e, WDB_EDIT_BAD, "headroom", "apply: service %s: headroom "
		            "must be a number from 0 to 90", key);
	if (!nearest_service_on(o) && (m || h)) {
		const char *name = json_string_value(json_object_get(o, "name"));
		return fail(e, WDB_EDIT_BAD, m ? "switch_margin" : "headroom", "apply: "
		            "service %s: switch margin and headroom go with nearest "
		            "steering (--steering nearest)", name ? name : "?");
	}
	return 0;
}

/* A probe_budget of service or node @key (@what). */
static int check_budget(json_t *o, const char *what, const char *key,
                        wdb_apply_err_t *e)
{
	json_t *b = json_object_get(o, "probe_budget");
	if (b && (!json_is_number(b) || json_number_value(b) < 1))
		return fail(e, WDB_EDIT_BAD, "probe_budget", "apply: %s %s: probe_budget "
		            "must be bytes per second, 1 or more (leave it out for the "
		            "default)", what, key);
	return 0;
}

/* A service's score_weights: the four dimensions of one profile. */
static int check_score_weights(json_t *o, const char *key, wdb_apply_err_t *e)
{
	json_t *w = json_object_get(o, "score_weights");
	if (!w)
		return 0;
	const char *names[4];
	double vals[4], out[4];
	unsigned n = 0;
	score_profile_t pf;
	const char *k;
	json_t *v;
	if (json_is_object(w) && json_object_size(w) == 4)
		json_object_foreach(w, k, v) {
			names[n] = k;
			vals[n++] = json_is_number(v) ? json_number_value(v) : -1;
		}
	if (n == 4 && !score_weights_named(names, vals, n, &pf, out))
		return 0;
	return fail(e, WDB_EDIT_BAD, "score_weights", "apply: service %s: score_weights "
	            "must name the four dimensions of one profile, each with a weight "
	            "of 0 to 100 (leave it out for the defaults)", key);
}

/* Checks service object @o (services[@idx]) and fills in defaults; its
 * key (the canonical name) goes to @key. */
static int check_service(const wdb_apply_opts_t *op, json_t *o, size_t idx,
                         char *key, size_t keysize, wdb_apply_err_t *e)
{
	const char *n = json_string_value(json_object_get(o, "name"));
	if (!n)
		return fail(e, WDB_EDIT_BAD, "name", "apply: services[%zu] has no name", idx);
	if (wdb_service_name(op->conf, n, key, keysize, e))
		return e->cls;
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
			return fail(e, WDB_EDIT_BAD, nums[i], "apply: service %s: %s must be "
			            "a number from %d to %ld", key, nums[i], i == 2, maxs[i]);
	}
	const char *ad = json_string_value(json_object_get(o, "all_down"));
	if (one_of("all_down", ad ? ad : "open", wdb_all_down_set, e))
		return e->cls;
	if (!ad)
		json_object_set_new(o, "all_down", json_string("open"));
	if (!json_object_get(o, "sticky"))
		json_object_set_new(o, "sticky", json_false());
	if (!json_object_get(o, "shadow"))
		json_object_set_new(o, "shadow", json_false());
	if (!json_is_boolean(json_object_get(o, "sticky")) ||
	    !json_is_boolean(json_object_get(o, "shadow")))
		return fail(e, WDB_EDIT_BAD, json_is_boolean(json_object_get(o, "sticky"))
		            ? "shadow" : "sticky", "apply: service %s: sticky and shadow "
		            "must be true or false", key);
	if (json_integer_value(json_object_get(o, "short_ttl")) >
	    json_integer_value(json_object_get(o, "ttl")))
		return fail(e, WDB_EDIT_BAD, "short_ttl", "apply: service %s: short_ttl is "
		            "longer than ttl", key);
	json_t *pf = json_object_get(o, "profile");
	const char *pv = json_string_value(pf);
	if (pf && (!pv || (strcmp(pv, "probe") != 0 && strcmp(pv, "four") != 0)))
		return fail(e, WDB_EDIT_BAD, "profile", "apply: service %s: profile must "
		            "be \"probe\" or \"four\" (leave it out for the default)", key);
	json_t *rel = json_object_get(o, "release");
	release_t r;
	char err[300];
	if (rel && release_from_json(rel, &r, err, sizeof(err)))
		return fail(e, WDB_EDIT_BAD, "release", "apply: service %s: %s", key, err);
	if (check_steer_service(o, key, e) || check_budget(o, "service", key, e) ||
	    check_score_weights(o, key, e))
		return e->cls;
	return 0;
}

/* Region and ISP names: short lowercase words ("*" is the wildcard of
 * weight rows, never a node's own); the names a push may give are the
 * names clients are located in. */
int wdb_area_word_ok(const char *s, int star_ok)
{
	_Static_assert(PUSH_WORD_MAX == GEO_NAME_MAX, "push names are GeoIP names");
	return push_valid_word(s, star_ok);
}

/* A node's id: 1 to 63 of letters, digits and "-_.". */
int wdb_node_id_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 63)
		return 0;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '-' || *p == '_' || *p == '.'))
			return 0;
	return 1;
}

/* Checks node object @o (nodes[@idx]) and fills in defaults. */
static int check_node(const wdb_apply_opts_t *op, json_t *o, size_t idx,
                      char *key, size_t keysize, wdb_apply_err_t *e)
{
	const char *id = json_string_value(json_object_get(o, "id"));
	if (!id || !wdb_node_id_ok(id))
		return fail(e, WDB_EDIT_BAD, "id", "apply: nodes[%zu]: missing or bad id",
		            idx);
	snprintf(key, keysize, "%s", id);
	json_t *addrs = json_object_get(o, "addrs");
	size_t i;
	json_t *a;
	json_t *seen = json_array();
	json_array_foreach(addrs, i, a) {
		struct in_addr a4;
		struct in6_addr a6;
		const char *s = json_string_value(a);
		int rc = 0;
		if (!s || (inet_pton(AF_INET, s, &a4) != 1 && inet_pton(AF_INET6, s, &a6) != 1))
			rc = fail(e, WDB_EDIT_BAD, "addrs", "apply: node %s: bad address in "
			          "addrs", id);
		else
			rc = wdb_node_addr_check(id, s, seen, op->allow_special, e);
		if (rc) {
			json_decref(seen);
			return rc;
		}
		json_array_append(seen, a);
	}
	json_decref(seen);
	const char *cn = json_string_value(json_object_get(o, "cname"));
	uint8_t w[256];
	if (cn && (!dname_from_str(cn, w) || !w[0]))
		return fail(e, WDB_EDIT_BAD, "cname", "apply: node %s: bad cname", id);
	if (!json_array_size(addrs) && !cn)
		return fail(e, WDB_EDIT_BAD, "addrs", "apply: node %s: needs addrs or "
		            "cname", id);
	if (json_array_size(addrs) && cn)
		return fail(e, WDB_EDIT_BAD, "cname", "apply: node %s: addrs and cname "
		            "exclude each other", id);
	static const char *const words[] = { "region", "isp" };
	for (int k = 0; k < 2; k++) {
		const char *v = json_string_value(json_object_get(o, words[k]));
		if (!v)
			json_object_set_new(o, words[k], json_string("*"));
		else if (strcmp(v, "*") != 0 && !wdb_area_word_ok(v, 0))
			return fail(e, WDB_EDIT_BAD, words[k], "apply: node %s: bad %s '%s'",
			            id, words[k], v);
	}
	const char *pool = json_string_value(json_object_get(o, "pool"));
	const char *admin = json_string_value(json_object_get(o, "admin"));
	if (one_of("pool", pool ? pool : "primary", wdb_pool_set, e) ||
	    one_of("admin", admin ? admin : "auto", wdb_admin_set, e))
		return e->cls;
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
		if (!json_is_string(pr) || probe_parse(json_string_value(pr),
		                                       op->probe_interval, op->probe_timeout,
		                                       &ps, perr, sizeof(perr)))
			return fail(e, WDB_EDIT_BAD, "probes", "apply: node %s: probe: %s", id,
			            json_is_string(pr) ? perr : "not a string");
	}
	json_t *p = json_object_get(o, "provider"), *c = json_object_get(o, "cost_per_gb");
	if (p && (!json_is_string(p) || !wdb_area_word_ok(json_string_value(p), 0)))
		return fail(e, WDB_EDIT_BAD, "provider", "apply: node %s: provider must be "
		            "a short lowercase name like \"cdn-a\"", id);
	if (c && (!json_is_number(c) || !(json_number_value(c) >= 0 &&
	                                  json_number_value(c) <= WDB_COST_PER_GB_MAX)))
		return fail(e, WDB_EDIT_BAD, "cost_per_gb", "apply: node %s: cost_per_gb "
		            "must be a number from 0 to %g", id, WDB_COST_PER_GB_MAX);
	return check_budget(o, "node", id, e);
}

/* Checks weight row @o (weights[@idx]) and canonicalises its names. */
static int check_weight(const wdb_apply_opts_t *op, json_t *o, size_t idx,
                        char *key, size_t keysize, wdb_apply_err_t *e)
{
	const char *svc = json_string_value(json_object_get(o, "service"));
	const char *r0 = json_string_value(json_object_get(o, "region"));
	const char *i0 = json_string_value(json_object_get(o, "isp"));
	if (!svc)
		return fail(e, WDB_EDIT_BAD, "service", "apply: weights[%zu] has no "
		            "service", idx);
	char name[1100], reg[GEO_NAME_MAX + 1], isp[GEO_NAME_MAX + 1];
	if (wdb_service_name(op->conf, svc, name, sizeof(name), e)) {
		snprintf(e->field, sizeof(e->field), "service");
		return e->cls;
	}
	/* Copies: the object's strings are replaced below. */
	snprintf(reg, sizeof(reg), "%s", r0 ? r0 : "*");
	snprintf(isp, sizeof(isp), "%s", i0 ? i0 : "*");
	if (!wdb_area_word_ok(reg, 1) || !wdb_area_word_ok(isp, 1))
		return fail(e, WDB_EDIT_BAD, wdb_area_word_ok(reg, 1) ? "isp" : "region",
		            "apply: weights[%zu]: bad region or isp", idx);
	json_object_set_new(o, "service", json_string(name));
	json_object_set_new(o, "region", json_string(reg));
	json_object_set_new(o, "isp", json_string(isp));
	json_t *ws = json_object_get(o, "weights");
	if (!json_is_object(ws) || !json_object_size(ws))
		return fail(e, WDB_EDIT_BAD, "weights", "apply: weight row %s %s %s: "
		            "weights must map node ids to numbers", name, reg, isp);
	const char *id;
	json_t *w;
	json_object_foreach(ws, id, w)
		if (!json_is_integer(w) || json_integer_value(w) < 0 ||
		    json_integer_value(w) > 1000000)
			return fail(e, WDB_EDIT_BAD, "weights", "apply: weight row %s %s %s: "
			            "weight of %s must be 0 to 1000000", name, reg, isp, id);
	wdb_row_key(key, keysize, name, reg, isp);
	return 0;
}

int wdb_apply_check(const wdb_apply_opts_t *op, wdb_kind_t kind, json_t *o,
                    size_t idx, char *key, size_t keysize, wdb_apply_err_t *e)
{
	if (!json_is_object(o))
		return fail(e, WDB_EDIT_BAD, NULL, "apply: %s[%zu] is not an object",
		            wdb_doc_lists[kind], idx);
	if (kind == WDB_SERVICE)
		return check_service(op, o, idx, key, keysize, e);
	if (kind == WDB_NODE)
		return check_node(op, o, idx, key, keysize, e);
	return check_weight(op, o, idx, key, keysize, e);
}

int wdb_apply_check_refs(json_t *want[3], const char *file, wdb_apply_err_t *e)
{
	const char *key;
	json_t *row;
	json_object_foreach(want[WDB_WEIGHT], key, row) {
		const char *svc = json_string_value(json_object_get(row, "service"));
		if (!json_object_get(want[WDB_SERVICE], svc))
			return fail(e, WDB_EDIT_REFUSED, "service", "apply: %s: weight row "
			            "%s %s/%s: service %s is not in the file; nothing was "
			            "changed", file, svc,
			            json_string_value(json_object_get(row, "region")),
			            json_string_value(json_object_get(row, "isp")), svc);
		const char *id;
		json_t *w;
		json_object_foreach(json_object_get(row, "weights"), id, w)
			if (!json_object_get(want[WDB_NODE], id))
				return fail(e, WDB_EDIT_REFUSED, "weights", "apply: %s: weight "
				            "row %s %s/%s: unknown node '%s'; nothing was changed",
				            file, svc,
				            json_string_value(json_object_get(row, "region")),
				            json_string_value(json_object_get(row, "isp")), id);
	}
	return 0;
}

/* Keeps the key a document check names ("nodes[2].adress: unknown key")
 * as the field of @e. */
static void doc_field(const char *msg, wdb_apply_err_t *e)
{
	const char *colon = strstr(msg, ": ");
	const char *dot = colon ? memchr(msg, '.', (size_t)(colon - msg)) : NULL;
	const char *from = dot ? dot + 1 : msg;
	size_t n = colon ? (size_t)(colon - from) : 0;
	if (n && !memchr(from, '[', n))
		snprintf(e->field, sizeof(e->field), "%.*s", (int)n, from);
	else
		*e->field = 0;
}

int wdb_apply_read(const wdb_apply_opts_t *op, json_t *doc, const char *file,
                   json_t *want[3], wdb_apply_err_t *e)
{
	char err[600];
	for (int k = 0; k < 3; k++)
		want[k] = NULL;
	if (wdb_doc_check(doc, err, sizeof(err))) {
		fail(e, WDB_EDIT_BAD, NULL, "apply: %s: %s; nothing was changed", file, err);
		doc_field(err, e);
		return e->cls;
	}
	int rc = 0;
	for (int k = 0; k < 3 && !rc; k++) {
		want[k] = json_object();
		size_t i;
		json_t *o;
		json_array_foreach(json_object_get(doc, wdb_doc_lists[k]), i, o) {
			char key[1300];
			json_t *c = json_deep_copy(o);
			rc = wdb_apply_check(op, (wdb_kind_t)k, c, i, key, sizeof(key), e);
			if (!rc && json_object_get(want[k], key))
				rc = fail(e, WDB_EDIT_BAD, NULL, "apply: %s: %s '%s' appears "
				          "twice", file, wdb_doc_lists[k], key);
			if (!rc)
				json_object_set(want[k], key, c);
			json_decref(c);
			if (rc)
				break;
		}
	}
	if (!rc)
		rc = wdb_apply_check_refs(want, file, e);
	if (rc)
		for (int k = 0; k < 3; k++) {
			json_decref(want[k]);
			want[k] = NULL;
		}
	return rc;
}

/* The operator's part of each stored object, by key. */
typedef struct {
	int kind;
	json_t *out;
} have_t;

static int have_one(const char *key, json_t *val, void *arg)
{
	have_t *h = arg;
	json_object_set_new(h->out, key, wdb_doc_object(h->kind, val));
	return 0;
}

void wdb_apply_have(wdb_txn_t *t, json_t *have[3])
{
	for (int k = 0; k < 3; k++) {
		have_t h = { k, json_object() };
		wdb_each(t, (wdb_kind_t)k, NULL, have_one, &h);
		have[k] = h.out;
	}
}

/* Writes (@val) or deletes (NULL) @key of @kind. */
static int put(weightdb_t *db, wdb_txn_t *t, int kind, const char *key,
               json_t *val, wdb_apply_err_t *e)
{
	int rc = wdb_set(t, (wdb_kind_t)kind, key, val);
	char full[300];
	if (rc)
		return fail(e, WDB_EDIT_STORE, NULL, "%s %s: %s; nothing was changed",
		            val ? "writing" : "deleting", key, rc == GSLB_ENOSPC
		            ? wdb_full_msg(db, full, sizeof(full)) : wdb_strerror(rc));
	return 0;
}

int wdb_apply_write(weightdb_t *db, wdb_txn_t *t, json_t *diff,
                    json_t *want[3], wdb_apply_err_t *e)
{
	for (int k = 2; k >= 0; k--) {
		size_t i;
		json_t *key;
		json_array_foreach(json_object_get(json_object_get(diff, "deleted"),
		                                   wdb_doc_lists[k]), i, key)
			if (put(db, t, k, json_string_value(key), NULL, e))
				return e->cls;
	}
	static const char *const parts[] = { "added", "changed" };
	for (int k = 0; k < 3; k++)
		for (int p = 0; p < 2; p++) {
			size_t i;
			json_t *key;
			json_array_foreach(json_object_get(json_object_get(diff, parts[p]),
			                                   wdb_doc_lists[k]), i, key)
				if (put(db, t, k, json_string_value(key),
				        json_object_get(want[k], json_string_value(key)), e))
					return e->cls;
		}
	return 0;
}
