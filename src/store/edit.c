/* SPDX-License-Identifier: MIT */
/* Changes shared by gslbctl and the HTTP API (edit.h). */
#include "store/edit.h"
#include "store/keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void wdb_json_time(json_t *obj, const char *key, int64_t t)
{
	char ukey[64], buf[40];
	snprintf(ukey, sizeof(ukey), "%s_unix", key);
	if (t <= 0) {
		json_object_set_new(obj, key, json_null());
		json_object_set_new(obj, ukey, json_null());
		return;
	}
	time_t tt = (time_t)t;
	struct tm tm;
	if (!gmtime_r(&tt, &tm) || !strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, sizeof(buf), "%lld", (long long)t);
	json_object_set_new(obj, key, json_string(buf));
	json_object_set_new(obj, ukey, json_integer(t));
}

const char *const wdb_admin_set[] = { "auto", "up", "down", "drain", NULL };

int wdb_node_admin(json_t *n, const char *opt, const char *admin, int64_t now,
                   double settle, char *err, size_t errlen)
{
	const char *a = NULL;
	for (const char *const *s = wdb_admin_set; *s && admin; s++)
		if (strcmp(admin, *s) == 0)
			a = *s;
	if (!a) {
		snprintf(err, errlen, "%s %s: not a valid choice", opt, admin ? admin : "");
		return -1;
	}
	const char *was = json_string_value(json_object_get(n, "admin"));
	if (!was || strcmp(was, a) != 0)
		/* S0-11, S1-8: answers of its rows carry the short TTL while
		 * the change settles. */
		json_object_set_new(n, "short_until", json_integer(now + (json_int_t)settle));
	json_object_set_new(n, "admin", json_string(a));
	return 0;
}

/* Deletes @key of @kind in @t; on a failed write, the cause in @err. */
static int del_key(wdb_txn_t *t, wdb_kind_t kind, const char *key, char *err,
                   size_t errlen)
{
	int rc = wdb_set(t, kind, key, NULL);
	if (rc) {
		snprintf(err, errlen, "deleting %s: %s", key, wdb_strerror(rc));
		return WDB_EDIT_STORE;
	}
	return WDB_EDIT_OK;
}

static int collect_key(const char *key, json_t *val, void *arg)
{
	(void)val;
	json_array_append_new(arg, json_string(key));
	return 0;
}

int wdb_service_delete(wdb_txn_t *t, const char *name, char *what, size_t wlen,
                       char *err, size_t errlen)
{
	json_t *old = wdb_get(t, WDB_SERVICE, name);
	if (!old) {
		snprintf(err, errlen, "service %s does not exist", name);
		return WDB_EDIT_ABSENT;
	}
	json_decref(old);
	/* Its weight rows go with it, in the same change. */
	char prefix[1200];
	wdb_row_prefix(prefix, sizeof(prefix), name);
	json_t *rows = json_array();
	wdb_each(t, WDB_WEIGHT, prefix, collect_key, rows);
	size_t i;
	json_t *k;
	int rc = WDB_EDIT_OK;
	json_array_foreach(rows, i, k)
		if (!rc)
			rc = del_key(t, WDB_WEIGHT, json_string_value(k), err, errlen);
	json_decref(rows);
	if (!rc)
		rc = del_key(t, WDB_SERVICE, name, err, errlen);
	snprintf(what, wlen, "service del %s", name);
	return rc;
}

static int collect_row(const char *key, void *arg)
{
	json_array_append_new(arg, json_string(key));
	return 0;
}

int wdb_node_delete(wdb_txn_t *t, const char *id, char *what, size_t wlen,
                    char *err, size_t errlen)
{
	json_t *old = wdb_get(t, WDB_NODE, id);
	if (!old) {
		snprintf(err, errlen, "node %s does not exist", id);
		return WDB_EDIT_ABSENT;
	}
	json_decref(old);
	json_t *rows = json_array();
	wdb_node_rows(t, id, collect_row, rows);
	if (json_array_size(rows)) {
		char *list = json_dumps(rows, JSON_COMPACT);
		snprintf(err, errlen, "node %s is used by weight row(s) %s; remove it "
		         "there first", id, list ? list : "(cannot list them)");
		free(list);
		json_decref(rows);
		return WDB_EDIT_REFUSED;
	}
	json_decref(rows);
	/* Its health, status, metrics and history go with it, in the same
	 * change: a node added again under this id starts afresh. */
	snprintf(what, wlen, "node del %s", id);
	return del_key(t, WDB_NODE, id, err, errlen);
}

int wdb_weight_delete(wdb_txn_t *t, const char *key, char *what, size_t wlen,
                      char *err, size_t errlen)
{
	wdb_row_parts_t p;
	if (wdb_row_split(key, strlen(key), &p)) {
		snprintf(err, errlen, "weight row %s: not a row's key "
		         "(SERVICE|REGION|ISP)", key);
		return WDB_EDIT_ABSENT;
	}
	json_t *old = wdb_get(t, WDB_WEIGHT, key);
	if (!old) {
		snprintf(err, errlen, "weight row %.*s --region %.*s --isp %.*s "
		         "does not exist", (int)p.svc_len, p.svc, (int)p.region_len,
		         p.region, (int)p.isp_len, p.isp);
		return WDB_EDIT_ABSENT;
	}
	json_decref(old);
	snprintf(what, wlen, "weight del %.*s region=%.*s isp=%.*s", (int)p.svc_len,
	         p.svc, (int)p.region_len, p.region, (int)p.isp_len, p.isp);
	return del_key(t, WDB_WEIGHT, key, err, errlen);
}
