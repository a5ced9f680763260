/* SPDX-License-Identifier: MIT */
/* Pinned steering shares released by gslbctl and the HTTP API
 * (steer_edit.h). */
#include "steer/steer_edit.h"
#include "steer/nearest.h"
#include "steer/nearest_run.h"
#include "steer/steer_rec.h"
#include "store/keys.h"
#include "store/plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int collect_key(const char *key, json_t *val, void *arr)
{
	(void)val;
	json_array_append_new(arr, json_string(key));
	return 0;
}

int steer_unpin_rows(wdb_txn_t *t, const char *svc, const char *region,
                     const char *isp, json_t **keys, char *what, size_t wlen,
                     char *err, size_t errlen)
{
	*keys = NULL;
	json_t *s = wdb_get(t, WDB_SERVICE, svc);
	if (!s) {
		snprintf(err, errlen, "service %s does not exist", svc);
		return WDB_EDIT_ABSENT;
	}
	json_decref(s);
	json_t *all = json_array(), *done = json_array(), *k;
	char key[1300];
	if (region || isp) {
		json_array_append_new(all, json_string(wdb_row_key(key, sizeof(key), svc,
			region ? region : "*", isp ? isp : "*")));
	} else {
		wdb_row_prefix(key, sizeof(key), svc);
		wdb_each(t, WDB_WEIGHT, key, collect_key, all);
	}
	size_t wl = (size_t)snprintf(what, wlen, "steer unpin"), i;
	int rc = WDB_EDIT_OK;
	json_array_foreach(all, i, k) {
		const char *kk = json_string_value(k);
		json_t *row = wdb_get(t, WDB_WEIGHT, kk);
		if (!json_object_get(row, "pin")) {
			json_decref(row);
			continue;
		}
		json_object_del(row, "pin");
		int wrc = wdb_set(t, WDB_WEIGHT, kk, row);
		json_decref(row);
		if (wrc) {
			snprintf(err, errlen, "writing %s: %s; nothing was changed", kk,
			         wdb_strerror(wrc));
			rc = WDB_EDIT_STORE;
			break;
		}
		if (wl < wlen)
			wl += (size_t)snprintf(what + wl, wlen - wl, "%s %s",
			                       json_array_size(done) ? "," : "", kk);
		json_array_append(done, k);
	}
	json_decref(all);
	if (!rc && !json_array_size(done)) {
		rc = WDB_EDIT_REFUSED;
		if (region || isp)
			snprintf(err, errlen, "row %s --region %s --isp %s is not pinned", svc,
			         region ? region : "*", isp ? isp : "*");
		else
			snprintf(err, errlen, "service %s has no pinned row", svc);
	}
	if (rc)
		json_decref(done);
	else
		*keys = done;
	return rc;
}

/* The view of node @id of a row: the engine's record of it @n (NULL:
 * none) with the operator's weight @base and the weight in force, from
 * @applied. */
static json_t *node_view(json_t *n, json_t *base, json_t *applied, const char *id)
{
	json_t *j = n ? json_deep_copy(n) : json_object();
	json_object_set(j, "base", base);
	json_object_set_new(j, "weight", json_integer(
		json_integer_value(json_object_get(applied, id))));
	return j;
}

json_t *nearest_row_view(wdb_txn_t *t, const steer_conf_t *sc, const char *key,
                         json_t *svc)
{
	nearest_conf_t c;
	nearest_service_conf(svc, sc, &c);
	const char *m = json_string_value(json_object_get(svc, "switch_margin"));
	json_t *out = json_pack("{s:s, s:s, s:s, s:f}", "row", key, "mode", "nearest",
		"switch_margin", m ? m : NEAREST_MARGIN_DEFAULT, "headroom", c.headroom);
	json_t *row = wdb_get(t, WDB_WEIGHT, key);
	json_t *state = wdb_get(t, WDB_STEER, key);
	const char *mode = json_string_value(json_object_get(state, "mode"));
	if (!mode || strcmp(mode, "nearest") != 0) {
		json_decref(state);
		state = NULL;
	}
	json_t *applied = plan_row_weights(row, 1);
	int steered = applied != json_object_get(row, "weights");
	json_object_set_new(out, "steered", json_boolean(steered));
	json_object_set_new(out, "evaluated_at", json_integer(json_integer_value(
		json_object_get(state, "at"))));
	static const char *const keys[] = { "verdict", "reason", "current", "challenger",
	                                    "streak", NULL };
	for (const char *const *k = keys; *k; k++)
		if (json_object_get(state, *k))
			json_object_set(out, *k, json_object_get(state, *k));
	if (!state)
		json_object_set_new(out, "verdict", json_string("not evaluated yet"));
	json_t *nodes = json_object();
	const char *id;
	json_t *w;
	json_object_foreach(json_object_get(row, "weights"), id, w) {
		json_t *n = json_object_get(json_object_get(state, "nodes"), id);
		json_t *j = node_view(n, w, applied, id);
		char lim[200];
		json_object_set_new(j, "limits_text", json_string(nearest_limits_text(
			(unsigned)json_integer_value(json_object_get(n, "limits")), lim, sizeof(lim))));
		json_object_set_new(nodes, id, j);
	}
	json_object_set_new(out, "nodes", nodes);
	json_decref(row);
	json_decref(state);
	return out;
}

json_t *steer_row_view(wdb_txn_t *t, const steer_conf_t *sc, const char *key,
                       uint32_t now)
{
	wdb_row_parts_t p;
	if (wdb_row_split(key, strlen(key), &p))
		return NULL;
	char svc[300];
	snprintf(svc, sizeof(svc), "%.*s", (int)p.svc_len, p.svc);
	json_t *s = wdb_get(t, WDB_SERVICE, svc);
	if (nearest_service_on(s)) {
		json_t *v = nearest_row_view(t, sc, key, s);
		json_decref(s);
		return v;
	}
	if (!steer_service_on(s)) {
		json_decref(s);
		return NULL;
	}
	int shadow = strcmp(json_string_value(json_object_get(s, "steering")), "shadow") == 0;
	steer_policy_t pol;
	steer_service_policy(s, &pol);
	json_t *out = json_pack("{s:s, s:s, s:{s:f, s:f, s:f}}", "row", key, "policy",
		json_string_value(json_object_get(s, "policy")) ?
		json_string_value(json_object_get(s, "policy")) : "custom",
		"weights", "success", pol.success, "latency", pol.latency, "cost", pol.cost);
	json_t *sla = json_object_get(s, "sla");
	json_object_set_new(out, "sla", json_real(json_is_number(sla) ? json_number_value(sla)
	                                                                : sc->sla));
	json_decref(s);
	json_t *row = wdb_get(t, WDB_WEIGHT, key);
	json_t *state = wdb_get(t, WDB_STEER, key);
	json_t *applied = plan_row_weights(row, 1);
	int steered = applied != json_object_get(row, "weights");
	json_object_set_new(out, "steered", json_boolean(steered));
	json_object_set_new(out, "shadow", json_boolean(shadow));
	json_object_set_new(out, "applied_at", json_integer(steered ?
		json_integer_value(json_object_get(json_object_get(row, "steer"), "at")) : 0));
	json_object_set_new(out, "evaluated_at", json_integer(json_integer_value(
		json_object_get(state, "at"))));
	json_t *verdict = json_object_get(state, "verdict");
	json_object_set_new(out, "verdict", verdict ? json_incref(verdict) :
	                    json_string("not evaluated yet"));
	json_t *pin = json_object_get(row, "pin");
	if (pin) {
		json_t *p2 = json_deep_copy(pin);
		wdb_json_time(p2, "at", json_integer_value(json_object_get(pin, "at")));
		json_object_set_new(out, "pinned", p2);
	}
	json_t *nodes = json_object();
	const char *id;
	json_t *w;
	json_object_foreach(json_object_get(row, "weights"), id, w) {
		json_t *n = json_object_get(json_object_get(state, "nodes"), id);
		json_t *j = node_view(n, w, applied, id);
		/* The limits that applied, and the capacity ceiling (S1-6)
		 * when it is below the whole row. */
		char lim[240];
		unsigned lims = (unsigned)json_integer_value(json_object_get(n, "limits"));
		json_t *ceil = json_object_get(n, "ceiling");
		int capped = json_is_integer(ceil) && json_integer_value(ceil) < STEER_TOTAL;
		steer_limits_text(lims, lim, sizeof(lim) - 40);
		if (capped)
			snprintf(lims ? lim + strlen(lim) : lim, 40, "%sceiling %.2f%%",
			         lims ? ", " : "", json_integer_value(ceil) / 100.0);
		json_object_set_new(j, "limits_text", json_string(lim));
		json_t *node = wdb_get(t, WDB_NODE, id);
		json_t *prov = json_object_get(node, "provider");
		if (prov) {
			json_object_set(j, "provider", prov);
			json_t *b;
			double spent;
			int st = steer_budget_read(t, json_string_value(prov), now,
			                           &spent, &b);
			if (b) {
				static const char *const states[] = { "within", "over alert", "exhausted" };
				json_object_set_new(j, "budget", json_pack("{s:f, s:f, s:s, s:s}",
					"spent", spent, "limit", json_number_value(json_object_get(b, "limit")),
					"state", states[st], "period",
					json_string_value(json_object_get(b, "period")) ?: "month"));
				json_decref(b);
			}
		}
		json_decref(node);
		char from[80], reg[80], isp[80];
		snprintf(reg, sizeof(reg), "%.*s", (int)p.region_len, p.region);
		snprintf(isp, sizeof(isp), "%.*s", (int)p.isp_len, p.isp);
		if (steer_input_from(t, id, reg, isp, from, sizeof(from)))
			json_object_set_new(j, "inputs_from", json_string(from));
		json_object_set_new(nodes, id, j);
	}
	json_object_set_new(out, "nodes", nodes);
	json_decref(row);
	json_decref(state);
	return out;
}

int steer_service_view(wdb_txn_t *t, const steer_conf_t *sc, const char *svc,
                       uint32_t now, json_t **rows, char *err, size_t errlen)
{
	*rows = NULL;
	json_t *s = wdb_get(t, WDB_SERVICE, svc);
	if (!s) {
		snprintf(err, errlen, "service %s does not exist", svc);
		return WDB_EDIT_ABSENT;
	}
	json_decref(s);
	char prefix[1200];
	wdb_row_prefix(prefix, sizeof(prefix), svc);
	json_t *keys = json_array(), *out = json_array(), *k;
	wdb_each(t, WDB_WEIGHT, prefix, collect_key, keys);
	size_t i;
	int rc = WDB_EDIT_OK;
	json_array_foreach(keys, i, k) {
		json_t *st = steer_row_view(t, sc, json_string_value(k), now);
		if (!st) {
			snprintf(err, errlen, "service %s does not steer (service set %s "
			         "--steering dynamic|shadow|nearest)", svc, svc);
			rc = WDB_EDIT_REFUSED;
			break;
		}
		json_array_append_new(out, st);
	}
	json_decref(keys);
	if (rc)
		json_decref(out);
	else
		*rows = out;
	return rc;
}
