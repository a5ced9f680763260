/* SPDX-License-Identifier: MIT */
/* The undo of one audited change, shared by gslbctl and the HTTP API
 * (rollback.h). */
#include "store/rollback.h"

#include <stdio.h>
#include <string.h>

int wdb_rollback_kind(json_t *c)
{
	static const char *const names[] = { "service", "node", "weight", "cutover" };
	static const wdb_kind_t kinds[] = { WDB_SERVICE, WDB_NODE, WDB_WEIGHT, WDB_CUTOVER };
	const char *kn = json_string_value(json_object_get(c, "kind")) ?: "";
	for (int k = 0; k < 4; k++)
		if (strcmp(kn, names[k]) == 0)
			return (int)kinds[k];
	return -1;
}

/* Whether @changes holds a change of node @id.  Deleting a node (or
 * taking its probes) changes its health record in the same change; the
 * undo restores the node, never the old verdict. */
static int node_changed(json_t *changes, const char *id)
{
	size_t i;
	json_t *c;
	json_array_foreach(changes, i, c)
		if (strcmp(json_string_value(json_object_get(c, "kind")) ?: "", "node") == 0 &&
		    strcmp(json_string_value(json_object_get(c, "key")) ?: "", id) == 0)
			return 1;
	return 0;
}

int wdb_rollback_undo(wdb_txn_t *t, json_t *rec, int64_t id, const char *noun,
                      json_t **undo, char *err, size_t errlen)
{
	json_t *changes = json_object_get(rec, "changes");
	*undo = NULL;
	if (!json_array_size(changes)) {
		snprintf(err, errlen, "%s %lld changed nothing", noun, (long long)id);
		return WDB_EDIT_REFUSED;
	}
	if (json_is_true(json_object_get(rec, "objects_left_out"))) {
		snprintf(err, errlen, "%s %lld was too large for the cluster's log to "
		         "keep its objects; restore them with apply from an export",
		         noun, (long long)id);
		return WDB_EDIT_REFUSED;
	}
	json_t *u = json_array();
	/* Undo in reverse order; a later change to the same object makes the
	 * undo ambiguous, so it is refused. */
	for (size_t i = json_array_size(changes); i-- > 0;) {
		json_t *c = json_array_get(changes, i);
		const char *kn = json_string_value(json_object_get(c, "kind"));
		const char *key = json_string_value(json_object_get(c, "key"));
		int kind = wdb_rollback_kind(c);
		if (kind < 0 && node_changed(changes, key))
			continue;   /* went with its node: a restored node starts afresh */
		if (kind < 0) {
			snprintf(err, errlen, "%s %lld is a health decision; set the node's "
			         "admin state instead", noun, (long long)id);
			goto refused;
		}
		if (!json_object_get(c, "before")) {
			snprintf(err, errlen, "%s %lld is a decision of the elected instance; "
			         "pin the row's shares or set the node's admin state instead",
			         noun, (long long)id);
			goto refused;
		}
		json_t *now = wdb_get(t, (wdb_kind_t)kind, key);
		json_t *after = json_object_get(c, "after");
		int same = (json_is_null(after) && !now) ||
		           (now && json_equal(now, after));
		if (!same) {
			json_decref(now);
			snprintf(err, errlen, "%s %s changed again after %s %lld; roll back "
			         "the later change first", kn, key, noun, (long long)id);
			goto refused;
		}
		json_array_append_new(u, json_pack("{s:s, s:s, s:o, s:O}", "kind", kn,
			"key", key, "before", now ? now : json_null(),
			"after", json_object_get(c, "before")));
	}
	*undo = u;
	return WDB_EDIT_OK;
refused:
	json_decref(u);
	return WDB_EDIT_REFUSED;
}

int wdb_rollback_is_steer(json_t *rec)
{
	const char *actor = json_string_value(json_object_get(rec, "actor"));
	return actor && strcmp(actor, "gslbd:steer") == 0;
}

int wdb_rollback_pins(wdb_txn_t *t, json_t *rec, int64_t id, const char *user,
                      int64_t now, json_t **rows, char *err, size_t errlen)
{
	json_t *out = json_object();
	size_t i;
	json_t *c;
	*rows = NULL;
	json_array_foreach(json_object_get(rec, "changes"), i, c) {
		const char *kind = json_string_value(json_object_get(c, "kind"));
		const char *key = json_string_value(json_object_get(c, "key"));
		if (!kind || strcmp(kind, "weight") != 0 || !key)
			continue;
		json_t *before = json_object_get(c, "before");
		json_t *cur = wdb_get(t, WDB_WEIGHT, key);
		if (!cur || !json_is_object(before) ||
		    !json_equal(json_object_get(cur, "weights"), json_object_get(before, "weights"))) {
			json_decref(cur);
			json_decref(out);
			snprintf(err, errlen, "the operator's weights of row %s changed after "
			         "change %lld: they are in force, there is nothing to pin", key,
			         (long long)id);
			return WDB_EDIT_REFUSED;
		}
		json_t *pinned = json_deep_copy(cur);
		json_decref(cur);
		json_t *prev = json_object_get(before, "steer");
		if (prev)
			json_object_set(pinned, "steer", prev);
		else
			json_object_del(pinned, "steer");
		json_object_set_new(pinned, "pin", json_pack("{s:s, s:I, s:I}", "by", user,
			"at", (json_int_t)now, "change", (json_int_t)id));
		json_object_set_new(out, key, pinned);
	}
	if (!json_object_size(out)) {
		json_decref(out);
		snprintf(err, errlen, "change %lld moved no weight row", (long long)id);
		return WDB_EDIT_REFUSED;
	}
	*rows = out;
	return WDB_EDIT_OK;
}
