/* SPDX-License-Identifier: MIT */
/* Pinned steering shares released by gslbctl and the HTTP API
 * (steer_edit.h). */
#include "steer/steer_edit.h"
#include "store/keys.h"

#include <stdio.h>
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
