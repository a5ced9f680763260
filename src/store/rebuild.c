/* SPDX-License-Identifier: MIT */
/* The plans of a service rebuilt inside the commit that changes it: each
 * weight row's plan (its CNAME loop check, steering shares, gray
 * release, S4-10) and the service's svcrec record. */
#include "store/weightdb.h"
#include "store/keys.h"
#include "store/plan.h"
#include "store/weightdb_int.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
	wdb_txn_t *t;
	json_t *cache;        /* node id -> node object, for this rebuild */
	char *err;
	size_t errlen;
	int rc;
	int client_rows;
	int kinds;            /* SVC_ROW_* seen */
	int shadow;           /* the service ignores health (S2-9) */
	int dynamic;          /* the service steers dynamically (S3-3) */
	const char *svc;
	json_t *release;      /* the service's gray release (S4-10), or NULL */
} rebuild_t;

static json_t *node_of(const char *id, void *arg)
{
	rebuild_t *r = arg;
	json_t *n = json_object_get(r->cache, id);
	if (n)
		return n;
	n = wdb_get(r->t, WDB_NODE, id);
	if (!n)
		return NULL;
	/* The health decision travels with the node into the plan. */
	json_t *h = wdb_get(r->t, WDB_HEALTH, id);
	if (h)
		json_object_set_new(n, "health", h);
	json_object_set_new(r->cache, id, n);
	return n;
}

/* Whether CNAME target @cname (presentation, final dot or not) is
 * service name @svc (lowercase, no final dot). */
static int cname_is(const char *cname, const char *svc)
{
	size_t n = strlen(cname), m = strlen(svc);
	if (n && cname[n - 1] == '.')
		n--;
	return n == m && strncasecmp(cname, svc, n) == 0;
}

static int rebuild_row(const char *key, json_t *row, void *arg)
{
	rebuild_t *r = arg;
	uint8_t *plan;
	size_t len;
	char msg[300];
	/* A CNAME node that points at the row's own service sends clients
	 * round in a loop. */
	const char *id;
	json_t *wv;
	json_object_foreach(json_object_get(row, "weights"), id, wv) {
		const char *cn = json_string_value(json_object_get(node_of(id, r), "cname"));
		if (cn && cname_is(cn, r->svc)) {
			snprintf(r->err, r->errlen, "weight row %s: node %s is a CNAME to "
			         "the service itself, an answer that loops", key, id);
			r->rc = GSLB_EINVAL;
			return 1;
		}
	}
	/* The steering engine's shares replace the operator's weights
	 * (plan.c decides when); health scales them like any weight. */
	json_t *w = plan_row_weights(row, r->dynamic);
	json_t *use = json_pack("{s:O}", "weights", w);
	/* S1-6: a static row's measured demand holds its nodes within
	 * their capacities (plan_capacity()); the engines of steered and
	 * nearest rows hold theirs in their shares. */
	json_t *capj = json_object_get(row, "capacity");
	if (!r->dynamic && json_is_object(capj))
		json_object_set(use, "capacity", capj);
	/* S4-10: a gray release of one of the row's nodes goes into the
	 * plan with the share of clients it answers now. */
	const char *rel_node;
	uint32_t rel_bp;
	if (plan_release_key(r->release, key, json_object_get(row, "weights"),
	                     &rel_node, &rel_bp)) {
		json_object_set_new(use, "release", json_pack("{s:s, s:I}", "node", rel_node,
		                                              "bp", (json_int_t)rel_bp));
	}
	int erc = plan_encode(use, node_of, r, r->shadow, &plan, &len, msg,
	                      sizeof(msg));
	json_decref(use);
	if (erc) {
		snprintf(r->err, r->errlen, "weight row %s: %s", key, msg);
		r->rc = GSLB_EINVAL;
		return 1;
	}
	int prc = wdb__put_raw(r->t, DBI_PLANS, key, plan, len);
	if (prc)
		r->rc = prc;   /* the commit reports the cause (t->rc) */
	free(plan);
	/* Note which kinds of rows the service has (gslb_chain()). */
	static const int kind_flag[] = { SVC_ROW_REGION_ISP, SVC_ROW_REGION,
	                                 SVC_ROW_ISP, SVC_ROW_DEFAULT };
	wdb_row_parts_t parts;
	wdb_row_split(key, strlen(key), &parts);
	wdb_row_kind_t kind = wdb_row_kind(&parts);
	r->kinds |= kind_flag[kind];
	if (kind != WDB_ROW_DEFAULT)
		r->client_rows = 1;
	return r->rc != 0;
}

int wdb__collect_key(const MDB_val *k, const MDB_val *v, void *arg)
{
	json_t *keys = arg;
	json_array_append_new(keys, json_stringn(k->mv_data, k->mv_size));
	return 0;
}

static const char *const all_down_names[] = { "open", "fallback", "empty" };

int wdb__rebuild_service(wdb_txn_t *t, const char *svc, json_t *cache,
                           char *err, size_t errlen)
{
	char prefix[300];
	wdb_row_prefix(prefix, sizeof(prefix), svc);
	json_t *old = json_array();
	wdb__each_raw(t->txn, t->db->dbi[DBI_PLANS], prefix, wdb__collect_key, old);
	size_t i;
	json_t *k;
	json_array_foreach(old, i, k)
		wdb__del_raw(t, DBI_PLANS, json_string_value(k));
	json_decref(old);

	json_t *s = wdb_get(t, WDB_SERVICE, svc);
	if (!s) {
		wdb__del_raw(t, DBI_SVCREC, svc);
		/* Rows of a deleted service are an error. */
		json_t *rows = json_array();
		wdb__each_raw(t->txn, t->db->dbi[DBI_WEIGHTS], prefix, wdb__collect_key, rows);
		size_t n = json_array_size(rows);
		json_decref(rows);
		if (n) {
			snprintf(err, errlen, "service %s does not exist but has %zu weight row(s)",
			         svc, n);
			return GSLB_EINVAL;
		}
		return 0;
	}
	const char *steering = json_string_value(json_object_get(s, "steering"));
	rebuild_t r = { t, cache, err, errlen, 0, 0, 0,
	                json_is_true(json_object_get(s, "shadow")),
	                steering && (strcmp(steering, "dynamic") == 0 ||
	                             strcmp(steering, "nearest") == 0), svc,
	                json_object_get(s, "release") };
	wdb_each(t, WDB_WEIGHT, prefix, rebuild_row, &r);
	if (r.rc) {
		json_decref(s);
		return r.rc;
	}
	uint8_t rec[12] = { 1 };
	rec[1] = (uint8_t)json_integer_value(json_object_get(s, "answers"));
	const char *ad = json_string_value(json_object_get(s, "all_down"));
	for (int j = 0; j < 3; j++)
		if (ad && strcmp(ad, all_down_names[j]) == 0)
			rec[2] = (uint8_t)j;
	rec[3] = (uint8_t)((json_is_true(json_object_get(s, "sticky")) ? SVC_STICKY : 0) |
	                   (r.client_rows ? SVC_CLIENT_ROWS : 0) |
	                   r.kinds | SVC_ROW_KNOWN);
	wr32(rec + 4, (uint32_t)json_integer_value(json_object_get(s, "ttl")));
	wr32(rec + 8, (uint32_t)json_integer_value(json_object_get(s, "short_ttl")));
	json_decref(s);
	return wdb__put_raw(t, DBI_SVCREC, svc, rec, sizeof(rec));
}
