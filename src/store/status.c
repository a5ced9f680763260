/* SPDX-License-Identifier: MIT */
/* The health view of gslbctl status and of the HTTP API's GET
 * /v1/health (status.h): each node's health decision and live status,
 * each weight row's effective weights from the plans the server reads. */
#include "store/status.h"
#include "store/edit.h"
#include "store/plan.h"

#include <stdio.h>
#include <string.h>

static json_t *field(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);
	return v ? json_incref(v) : json_null();
}

static int collect_value(const char *key, json_t *val, void *arg)
{
	json_array_append(arg, val);
	return 0;
}

/* Adds to the status entry @e of a node the summary of its health
 * record @h and live status @st (either NULL): the state the table
 * shows, the score, the reason and since when. */
static void status_summary(json_t *e, json_t *h, json_t *st)
{
	const char *state = h ? json_string_value(json_object_get(h, "state")) : NULL;
	/* What the state rests on (S2-7): no input at all, or only stale
	 * ones (the reason says what was kept). */
	if (json_is_true(json_object_get(h, "unmonitored")))
		state = "unmonitored";
	else if (json_is_true(json_object_get(h, "stale")))
		state = "stale";
	else if (json_is_true(json_object_get(h, "partial")))
		state = "partial"; /* cluster mode, S4-6: down from a minority */
	json_object_set_new(e, "state", json_string(state ? state :
	                    st ? "unknown" : "no record"));
	/* No score where nothing was measured. */
	json_t *sc = json_object_get(st, "score");
	int measured = json_is_number(sc) && json_number_value(sc) >= 0 &&
	               !json_is_true(json_object_get(st, "unknown")) &&
	               !json_is_true(json_object_get(h, "unmonitored"));
	json_object_set_new(e, "score", measured ? json_real(json_number_value(sc)) : json_null());
	json_object_set_new(e, "reason", h ? field(h, "reason") : json_null());
	wdb_json_time(e, "state_since", json_integer_value(json_object_get(h, "since")));
}

/* Adds to out.nodes each node of @nodes (with a service @name, only
 * those its rows @rows name) with its health and status records. */
static void status_nodes(wdb_txn_t *t, const char *name, json_t *nodes,
                         json_t *rows, json_t *out)
{
	json_t *want = json_object();
	size_t i;
	json_t *r;
	json_array_foreach(rows, i, r) {
		const char *id;
		json_t *w;
		json_object_foreach(json_object_get(r, "weights"), id, w)
			json_object_set_new(want, id, json_true());
	}
	json_t *n;
	json_array_foreach(nodes, i, n) {
		const char *id = json_string_value(json_object_get(n, "id"));
		if (*name && !json_object_get(want, id))
			continue;
		json_t *h = wdb_get(t, WDB_HEALTH, id);
		json_t *st = wdb_get(t, WDB_STATUS, id);
		json_t *e = json_pack("{s:s, s:o, s:o, s:O, s:O}", "node", id,
			"admin", field(n, "admin"), "pool", field(n, "pool"),
			"health", h ? h : json_null(), "status", st ? st : json_null());
		status_summary(e, h, st);
		/* One state per node: the summary's.  The records' own
		 * (the raw verdict; a live status written before the status
		 * had none) would only contradict it. */
		json_object_del(h, "state");
		json_object_del(st, "state");
		json_array_append_new(json_object_get(out, "nodes"), e);
		json_decref(h);
		json_decref(st);
	}
	json_decref(want);
}

/* Adds to out.rows each weight row of @rows with its effective weights,
 * from the plans the server reads. */
static void status_rows(weightdb_t *db, wdb_txn_t *t, json_t *rows, json_t *out)
{
	wdb_reader_t *rd = wdb_reader_new(db);
	size_t i;
	json_t *r;
	json_array_foreach(rows, i, r) {
		const char *svc = json_string_value(json_object_get(r, "service"));
		const char *reg = json_string_value(json_object_get(r, "region"));
		const char *isp = json_string_value(json_object_get(r, "isp"));
		const uint8_t *d;
		size_t dl;
		static plan_t p;
		json_t *members = json_array();
		if (rd && wdb_plan(rd, svc, strlen(svc), reg, isp, &d, &dl) == 0 &&
		    plan_decode(d, dl, &p) == 0)
			for (unsigned k = 0; k < p.n; k++) {
				char nid[80];
				snprintf(nid, sizeof(nid), "%.*s", p.node[k].id_len, p.node[k].id);
				json_t *cfg = json_object_get(json_object_get(r, "weights"), nid);
				json_array_append_new(members, json_pack("{s:s, s:O, s:i, s:b}",
					"node", nid, "weight", cfg ? cfg : json_null(),
					"effective", (json_int_t)p.node[k].weight,
					"usable", (p.node[k].flags & PLAN_USABLE) != 0));
			}
		wdb_reader_release(rd);
		json_t *rj = json_pack("{s:s, s:s, s:s, s:o}", "service", svc, "region", reg,
		                       "isp", isp, "nodes", members);
		/* Nearest steering: the row's choice and why (S4-5). */
		char key[1200];
		wdb_row_key(key, sizeof(key), svc, reg, isp);
		json_t *st = wdb_get(t, WDB_STEER, key);
		const char *mode = json_string_value(json_object_get(st, "mode"));
		if (mode && strcmp(mode, "nearest") == 0)
			json_object_set_new(rj, "nearest", json_pack("{s:O?, s:O, s:O}",
				"choice", json_object_get(st, "current"),
				"verdict", json_object_get(st, "verdict"),
				"reason", json_object_get(st, "reason")));
		json_decref(st);
		json_array_append_new(json_object_get(out, "rows"), rj);
	}
	wdb_reader_free(rd);
}

json_t *wdb_status_view(weightdb_t *db, wdb_txn_t *t, const char *service)
{
	json_t *out = json_pack("{s:[], s:[]}", "nodes", "rows");
	json_t *nodes = json_array(), *rows = json_array();
	wdb_each(t, WDB_NODE, NULL, collect_value, nodes);
	char prefix[1200];
	wdb_row_prefix(prefix, sizeof(prefix), service);
	wdb_each(t, WDB_WEIGHT, *service ? prefix : NULL, collect_value, rows);
	status_nodes(t, service, nodes, rows, out);
	status_rows(db, t, rows, out);
	json_decref(nodes);
	json_decref(rows);
	return out;
}
