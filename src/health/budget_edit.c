/* SPDX-License-Identifier: MIT */
/* Providers' budgets listed, set and deleted by gslbctl and the HTTP API
 * (budget_edit.h). */
#include "health/budget_edit.h"
#include "health/push.h"
#include "steer/steer.h"
#include "steer/steer_rec.h"

#include <stdio.h>
#include <string.h>

static int collect_obj(const char *key, json_t *val, void *obj)
{
	json_object_set(obj, key, val);
	return 0;
}

json_t *budget_list_view(wdb_txn_t *t, uint32_t now)
{
	json_t *all = json_object(), *b;
	wdb_each(t, WDB_BUDGET, NULL, collect_obj, all);
	const char *name;
	json_object_foreach(all, name, b) {
		double spent;
		int st = steer_budget_read(t, name, now, &spent, NULL);
		static const char *const states[] = { "within", "over alert", "exhausted" };
		json_object_set_new(b, "spent", json_real(spent));
		json_object_set_new(b, "state", json_string(states[st]));
	}
	return all;
}

/* Whether @name is a provider's name; else the reason for command @sub
 * in @err. */
static int name_ok(const char *sub, const char *name, char *err, size_t errlen)
{
	if (name && push_valid_word(name, 0))
		return 1;
	snprintf(err, errlen, "budget %s: give a provider name like cdn-a", sub);
	return 0;
}

int budget_set(wdb_txn_t *t, const char *name, const budget_in_t *in,
               char *what, size_t wlen, char *err, size_t errlen,
               const char **field)
{
	*field = NULL;
	if (!name_ok("set", name, err, errlen))
		return WDB_EDIT_BAD;
	json_t *b = wdb_get(t, WDB_BUDGET, name);
	if (!b)
		b = json_pack("{s:s, s:f}", "period", "month", "alert", 80.0);
	double d;
	int rc = WDB_EDIT_BAD;
	const char *limit = in->doc ? "limit" : "--limit";
	if (in->limit && push_parse_real("budget set", limit, in->limit, 0, 1e15, &d,
	                                 err, errlen)) {
		*field = "limit";
		goto out;
	}
	if (in->limit)
		json_object_set_new(b, "limit", json_real(d));
	if (in->alert && push_parse_real("budget set", in->doc ? "alert" : "--alert",
	                                 in->alert, 1, 100, &d, err, errlen)) {
		*field = "alert";
		goto out;
	}
	if (in->alert)
		json_object_set_new(b, "alert", json_real(d));
	if (in->period) {
		unsigned days;
		char text[16];
		if (steer_period_parse(in->period, &days)) {
			snprintf(err, errlen, "budget set: %s %s: give day, week, month or a "
			         "number of days from 1 to %d such as 10d", in->doc ? "period" :
			         "--period", in->period, STEER_PERIOD_MAX);
			*field = "period";
			goto out;
		}
		json_object_set_new(b, "period", json_string(steer_period_text(days, text,
		                                                               sizeof(text))));
	}
	if (!json_is_number(json_object_get(b, "limit"))) {
		snprintf(err, errlen, "budget set: %s is required", limit);
		*field = "limit";
		goto out;
	}
	int wrc = wdb_set(t, WDB_BUDGET, name, b);
	if (wrc) {
		snprintf(err, errlen, "writing %s: %s; nothing was changed", name,
		         wdb_strerror(wrc));
		rc = WDB_EDIT_STORE;
		goto out;
	}
	snprintf(what, wlen, "budget set %s", name);
	rc = WDB_EDIT_OK;
out:
	json_decref(b);
	return rc;
}

int budget_delete(wdb_txn_t *t, const char *name, char *what, size_t wlen,
                  char *err, size_t errlen)
{
	if (!name_ok("del", name, err, errlen))
		return WDB_EDIT_BAD;
	json_t *old = wdb_get(t, WDB_BUDGET, name);
	if (!old) {
		snprintf(err, errlen, "budget del: provider %s has no budget", name);
		return WDB_EDIT_ABSENT;
	}
	json_decref(old);
	int rc = wdb_set(t, WDB_BUDGET, name, NULL);
	if (rc) {
		snprintf(err, errlen, "deleting %s: %s; nothing was changed", name,
		         wdb_strerror(rc));
		return WDB_EDIT_STORE;
	}
	snprintf(what, wlen, "budget del %s", name);
	return WDB_EDIT_OK;
}
