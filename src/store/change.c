/* SPDX-License-Identifier: MIT */
/* The operator's table as one document (the shape apply accepts, the
 * difference apply writes and the guard against deleting too much) and
 * the audit log read as history (who made a change, which change a bare
 * rollback undoes, one line per change for `gslbctl log`).  Pure
 * functions on JSON: store/change.h. */
#include "store/change.h"
#include "store/keys.h"
#include "common/util.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const wdb_doc_lists[3] = { "services", "nodes", "weights" };

/* The keys an object of each list may hold: what gslbctl writes. */
static const char *const service_keys[] = {
	"name", "ttl", "short_ttl", "answers", "all_down", "sticky", "shadow",
	"profile", "max_failure_rate", "steering", "policy", "steer_weights", "sla",
	"switch_margin", "headroom", "score_weights", "probe_budget",
	"release",    /* a gray release (S4-10), checked by gslbctl apply */
	NULL
};
static const char *const node_keys[] = {
	"id", "addrs", "cname", "region", "isp", "capacity", "pool", "admin",
	"probes", "short_until", "provider", "cost_per_gb", "probe_budget", NULL
};
static const char *const weight_keys[] = {
	"service", "region", "isp", "weights", NULL
};
static const char *const *const list_keys[3] = {
	service_keys, node_keys, weight_keys
};

static int in_set(const char *k, const char *const *set)
{
	for (; *set; set++)
		if (strcmp(k, *set) == 0)
			return 1;
	return 0;
}

__attribute__((format(printf, 3, 4)))
static int doc_fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

int wdb_doc_check(json_t *doc, char *err, size_t errlen)
{
	if (!json_is_object(doc))
		return doc_fail(err, errlen, "the top level must be an object");
	json_t *v = json_object_get(doc, "version");
	if (!v)
		return doc_fail(err, errlen, "version: missing (a document written by "
		                "export has \"version\": %d)", WDB_FORMAT_VERSION);
	if (!json_is_integer(v) || json_integer_value(v) != WDB_FORMAT_VERSION)
		return doc_fail(err, errlen, "version: this gslbctl reads version %d "
		                "only", WDB_FORMAT_VERSION);
	const char *key;
	json_t *val;
	json_object_foreach(doc, key, val) {
		int k;
		for (k = 0; k < 3; k++)
			if (strcmp(key, wdb_doc_lists[k]) == 0)
				break;
		if (k == 3) {
			if (strcmp(key, "version") != 0)
				return doc_fail(err, errlen, "%s: unknown key", key);
			continue;
		}
		if (!json_is_array(val))
			return doc_fail(err, errlen, "%s: must be a list", key);
		size_t i;
		json_t *o;
		json_array_foreach(val, i, o) {
			if (!json_is_object(o))
				return doc_fail(err, errlen, "%s[%zu]: must be an object",
				                key, i);
			const char *f;
			json_t *fv;
			json_object_foreach(o, f, fv)
				if (!in_set(f, list_keys[k]))
					return doc_fail(err, errlen, "%s[%zu].%s: unknown key",
					                key, i, f);
		}
	}
	return 0;
}

json_t *wdb_doc_object(int kind, json_t *o)
{
	json_t *v = json_object();
	const char *f;
	json_t *fv;
	json_object_foreach(o, f, fv)
		if (in_set(f, list_keys[kind]))
			json_object_set(v, f, fv);
	return v;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The keys of @a and of @b (objects or NULL), each once, sorted: a
 * NULL-terminated array to free(); the strings live in *@keys, to
 * json_decref() after it. */
static const char **union_keys(json_t *a, json_t *b, json_t **keys, size_t *n)
{
	*keys = json_object();
	json_object_update(*keys, a);
	json_object_update(*keys, b);
	const char **sorted = xcalloc(json_object_size(*keys) + 1, sizeof(*sorted));
	const char *key;
	json_t *o;
	*n = 0;
	json_object_foreach(*keys, key, o)
		sorted[(*n)++] = key;
	qsort(sorted, *n, sizeof(*sorted), cmp_str);
	return sorted;
}

json_t *wdb_table_diff(json_t *have, json_t *want)
{
	json_t *d = json_pack("{s:{s:[], s:[], s:[]}, s:{s:[], s:[], s:[]}, s:{s:[], s:[], s:[]}}",
		"added", "services", "nodes", "weights",
		"changed", "services", "nodes", "weights",
		"deleted", "services", "nodes", "weights");
	for (int k = 0; k < 3; k++) {
		json_t *h = json_object_get(have, wdb_doc_lists[k]);
		json_t *w = json_object_get(want, wdb_doc_lists[k]);
		/* Keys in key order, as the store lists them. */
		json_t *keys;
		size_t n;
		const char **sorted = union_keys(h, w, &keys, &n);
		for (size_t i = 0; i < n; i++) {
			json_t *a = json_object_get(h, sorted[i]);
			json_t *b = json_object_get(w, sorted[i]);
			const char *what = !a ? "added" : !b ? "deleted" :
			                   json_equal(a, b) ? NULL : "changed";
			if (what)
				json_array_append_new(json_object_get(json_object_get(d, what),
				                      wdb_doc_lists[k]), json_string(sorted[i]));
		}
		free(sorted);
		json_decref(keys);
	}
	return d;
}

size_t wdb_diff_count(json_t *diff, const char *what)
{
	size_t n = 0;
	for (int k = 0; k < 3; k++)
		n += json_array_size(json_object_get(json_object_get(diff, what),
		                                     wdb_doc_lists[k]));
	return n;
}

int wdb_diff_needs_force(json_t *diff, size_t rows, char *why, size_t whylen)
{
	json_t *del = json_object_get(diff, "deleted");
	json_t *svcs = json_object_get(del, "services");
	size_t drows = json_array_size(json_object_get(del, "weights"));
	size_t len = 0;
	*why = 0;
	if (json_array_size(svcs)) {
		len += (size_t)snprintf(why, whylen, "service%s",
		                        json_array_size(svcs) > 1 ? "s" : "");
		size_t i;
		json_t *s;
		json_array_foreach(svcs, i, s) {
			if (len >= whylen)
				break;
			len += (size_t)snprintf(why + len, whylen - len, "%s %s",
			                        i ? "," : "", json_string_value(s));
		}
	}
	/* More than the share, counted exactly: drows / rows > pct / 100. */
	int rows_over = drows * 100 > rows * WDB_DELETE_SHARE_PCT;
	if (rows_over && len < whylen)
		snprintf(why + len, whylen - len, "%s%zu of %zu weight rows",
		         len ? " and " : "", drows, rows);
	return json_array_size(svcs) > 0 || rows_over;
}

/* Audit records as history ----------------------------------------- */

int wdb_audit_by_user(json_t *rec, const char *user)
{
	const char *u = json_string_value(json_object_get(rec, "user"));
	const char *actor = json_string_value(json_object_get(rec, "actor"));
	if (actor && strncmp(user, "api:", 4) == 0)
		return strcmp(actor, user) == 0;
	if (!actor || strncmp(actor, "gslbctl:", 8) != 0)
		return 0;
	return strcmp(u ? u : actor + 8, user) == 0;
}

int wdb_audit_automatic(json_t *rec)
{
	const char *actor = json_string_value(json_object_get(rec, "actor"));
	/* In cluster mode the elected instance's decisions say so. */
	return json_is_true(json_object_get(rec, "automatic")) ||
	       (actor && (strcmp(actor, "health") == 0 || strncmp(actor, "gslbd:", 6) == 0));
}

int64_t wdb_audit_undoes(json_t *rec)
{
	json_t *u = json_object_get(rec, "undoes");
	if (json_is_integer(u))
		return json_integer_value(u);
	const char *what = json_string_value(json_object_get(rec, "what"));
	long long id;
	char end;
	if (what && sscanf(what, "rollback %lld%c", &id, &end) == 1 && id > 0)
		return id;
	return 0;
}

/* Whether audit record @rec changed the operator's table (services,
 * nodes, weight rows, cutover windows). */
static int changes_table(json_t *rec)
{
	static const char *const table[] = { "service", "node", "weight", "cutover", NULL };
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(rec, "changes"), i, c) {
		const char *k = json_string_value(json_object_get(c, "kind"));
		if (k && in_set(k, table))
			return 1;
	}
	return 0;
}

int64_t wdb_rollback_pick(json_t *recs, const char *user)
{
	/* id -> true while undone, walking forward: a rollback undoes its
	 * target, and a rollback of a rollback gives the first target back. */
	json_t *undone = json_object();
	size_t i;
	json_t *r;
	char k[32];
	json_array_foreach(recs, i, r) {
		int64_t t = wdb_audit_undoes(r);
		if (!t)
			continue;
		snprintf(k, sizeof(k), "%lld", (long long)t);
		json_object_set_new(undone, k, json_true());
		/* @t itself a rollback: what it undid is in force again. */
		for (size_t j = 0; j < i; j++) {
			json_t *o = json_array_get(recs, j);
			if (json_integer_value(json_object_get(o, "id")) != t)
				continue;
			int64_t t2 = wdb_audit_undoes(o);
			if (t2) {
				snprintf(k, sizeof(k), "%lld", (long long)t2);
				json_object_del(undone, k);
			}
			break;
		}
	}
	int64_t pick = 0;
	for (i = json_array_size(recs); i-- > 0 && !pick;) {
		r = json_array_get(recs, i);
		int64_t id = json_integer_value(json_object_get(r, "id"));
		snprintf(k, sizeof(k), "%lld", (long long)id);
		if (wdb_audit_by_user(r, user) && !wdb_audit_undoes(r) &&
		    changes_table(r) && !json_object_get(undone, k))
			pick = id;
	}
	json_decref(undone);
	return pick;
}

/* Summaries ---------------------------------------------------------- */

/* A growing line of at most @size bytes; what does not fit is dropped
 * and noted in @cut. */
typedef struct {
	char *buf;
	size_t size, len;
	int cut;
} line_t;

__attribute__((format(printf, 2, 3)))
static void put(line_t *l, const char *fmt, ...)
{
	if (l->cut)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(l->buf + l->len, l->size - l->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= l->size - l->len) {
		l->cut = 1;
		l->buf[l->len] = 0;
		return;
	}
	l->len += (size_t)n;
}

/* Writes value @v as an operator reads it: strings bare, lists joined
 * by commas, null as "-", objects as compact JSON. */
static void put_value(line_t *l, json_t *v)
{
	if (!v || json_is_null(v)) {
		put(l, "-");
	} else if (json_is_string(v)) {
		put(l, "%s", json_string_value(v));
	} else if (json_is_array(v)) {
		size_t i;
		json_t *e;
		if (!json_array_size(v))
			put(l, "-");
		json_array_foreach(v, i, e) {
			if (i)
				put(l, ",");
			put_value(l, e);
		}
	} else {
		char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_SORT_KEYS);
		put(l, "%s", s ? s : "?");
		free(s);
	}
}

/* Fields that follow from others or change by themselves: they say
 * nothing an operator looks for in the log. */
static const char *const quiet_fields[] = {
	"id", "name", "service", "region", "isp", "weights", "short_until",
	"since", "moved_at", "gray_since", "score", NULL
};

/* Writes " field=value" for each field of @after that differs from
 * @before (NULL for an added object), in key order. */
static void put_fields(line_t *l, json_t *before, json_t *after, int all)
{
	json_t *keys;
	size_t n;
	const char **sorted = union_keys(before, after, &keys, &n);
	for (size_t i = 0; i < n; i++) {
		json_t *a = json_object_get(before, sorted[i]);
		json_t *b = json_object_get(after, sorted[i]);
		if (in_set(sorted[i], quiet_fields) || (a && b && json_equal(a, b)))
			continue;
		if (all && (!b || json_is_null(b)))
			continue;
		put(l, " %s=", sorted[i]);
		put_value(l, b);
	}
	free(sorted);
	json_decref(keys);
}

/* Writes one change {kind, key, before, after} of an audit record. */
static void put_change(line_t *l, json_t *c)
{
	const char *kind = json_string_value(json_object_get(c, "kind"));
	const char *key = json_string_value(json_object_get(c, "key"));
	json_t *before = json_object_get(c, "before");
	json_t *after = json_object_get(c, "after");
	if (json_is_null(before))
		before = NULL;
	if (json_is_null(after))
		after = NULL;
	if (!kind || !key)
		return;
	if (strcmp(kind, "weight") == 0) {
		wdb_row_parts_t p;
		if (wdb_row_split(key, strlen(key), &p) == 0)
			put(l, "weight %s %.*s %.*s/%.*s", after ? "set" : "del",
			    (int)p.svc_len, p.svc, (int)p.region_len, p.region,
			    (int)p.isp_len, p.isp);
		else
			put(l, "weight %s %s", after ? "set" : "del", key);
		const char *id;
		json_t *w;
		json_object_foreach(json_object_get(after, "weights"), id, w)
			put(l, " %s=%lld", id, (long long)json_integer_value(w));
		return;
	}
	if (strcmp(kind, "health") == 0) {
		put(l, "health %s", key);
		if (!after)
			put(l, " cleared");
		put_fields(l, before, after, 0);
		return;
	}
	put(l, "%s %s %s", kind, !before ? "add" : !after ? "del" : "set", key);
	if (after)
		put_fields(l, before, after, !before);
}

/* Whether @changes writes object (@kind, @key). */
static int writes(json_t *changes, const char *kind, const char *key)
{
	size_t i;
	json_t *c;
	json_array_foreach(changes, i, c)
		if (strcmp(json_string_value(json_object_get(c, "kind")) ?: "", kind) == 0 &&
		    strcmp(json_string_value(json_object_get(c, "key")) ?: "", key) == 0)
			return 1;
	return 0;
}

/* The changes a summary spells out before "(N more)". */
#define SUMMARY_CHANGES 4

void wdb_change_summary(json_t *rec, char *out, size_t size)
{
	if (!size)
		return;
	line_t l = { out, size > 4 ? size - 4 : size, 0, 0 };
	out[0] = 0;
	const char *what = json_string_value(json_object_get(rec, "what")) ?: "";
	json_t *changes = json_object_get(rec, "changes");
	/* The health thread and the steering engine word their decisions
	 * themselves, with their reasons ("health: b demoted ...", "steer
	 * SERVICE|REGION|ISP: b 50 -> 11 ...", "nearest SERVICE|REGION|ISP:
	 * a -> b ..."); only the bare "health:
	 * state" says less than the fields. */
	if ((strncmp(what, "health: ", 8) == 0 && strcmp(what, "health: state") != 0) ||
	    strncmp(what, "steer ", 6) == 0 || strncmp(what, "nearest ", 8) == 0) {
		put(&l, "%s", what);
		changes = NULL;
	}
	/* An apply or a rollback says so first: the lines below are its
	 * parts. */
	if (strncmp(what, "apply", 5) == 0 || wdb_audit_undoes(rec))
		put(&l, "%s:", what);
	size_t i, shown = 0, skipped = 0;
	json_t *c;
	json_array_foreach(changes, i, c) {
		const char *kind = json_string_value(json_object_get(c, "kind")) ?: "";
		const char *key = json_string_value(json_object_get(c, "key")) ?: "";
		/* A node's health record goes with the node (weightdb.h). */
		if (strcmp(kind, "health") == 0 && writes(changes, "node", key))
			continue;
		if (shown == SUMMARY_CHANGES) {
			skipped++;
			continue;
		}
		put(&l, "%s", l.len ? (shown ? "; " : " ") : "");
		put_change(&l, c);
		shown++;
	}
	if (skipped)
		put(&l, " (%zu more)", skipped);
	if (!shown && !l.len)
		put(&l, "%s", what);
	if (l.cut)
		snprintf(out + l.len, size - l.len, "...");
}
