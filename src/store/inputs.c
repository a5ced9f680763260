/* SPDX-License-Identifier: MIT */
/* Retention of the pushed steering inputs and spend records ("steerin",
 * weightdb.h): a sweep over the table, a part of it at each trim, that
 * deletes the records whose WDB_RETAIN_FROM has passed their retention
 * (S3-6, S3-9).  Runs on the trimming thread only. */
#include "store/weightdb.h"
#include "store/weightdb_int.h"
#include "common/util.h"

#include <string.h>

/* The WDB_RETAIN_FROM of record @v, read from its text without parsing
 * it (the records are written with JSON_COMPACT, and no other field
 * holds this name).  Returns 0 with *@out, or -1 when it has none. */
static int retain_from(const MDB_val *v, uint32_t *out)
{
	static const char f[] = "\"" WDB_RETAIN_FROM "\":";
	const char *p = memmem(v->mv_data, v->mv_size, f, sizeof(f) - 1);
	if (!p)
		return -1;
	const char *end = (const char *)v->mv_data + v->mv_size;
	uint64_t n = 0;
	int digits = 0;
	for (p += sizeof(f) - 1; p < end && *p >= '0' && *p <= '9' && digits < 11; p++) {
		n = n * 10 + (uint64_t)(*p - '0');
		digits++;
	}
	if (!digits || n > UINT32_MAX)
		return -1;
	*out = (uint32_t)n;
	return 0;
}

/* The cut of record key @k under @w: inputs_before for an input ("n|"),
 * spend_before for a spend record ("p|"), 0 (kept) for anything else. */
static uint32_t cut_of(const MDB_val *k, const wdb_trim_t *w)
{
	const char *d = k->mv_data;
	if (k->mv_size < 3 || d[1] != '|')
		return 0;
	return d[0] == 'n' ? w->inputs_before : d[0] == 'p' ? w->spend_before : 0;
}

/* Gives the record @key its WDB_RETAIN_FROM @now; a record that is not
 * a JSON object, which no reader can use, goes instead. */
static int stamp(wdb_txn_t *t, const char *key, uint32_t now)
{
	json_t *rec = wdb_get(t, WDB_STEERIN, key);
	int rc;
	if (json_is_object(rec)) {
		json_object_set_new(rec, WDB_RETAIN_FROM, json_integer(now));
		rc = wdb_set(t, WDB_STEERIN, key, rec);
	} else {
		rc = wdb_set(t, WDB_STEERIN, key, NULL);
	}
	json_decref(rec);
	return rc;
}

int wdb__inputs_trim(wdb_txn_t *t, const wdb_trim_t *w, unsigned *budget)
{
	weightdb_t *db = t->db;
	MDB_cursor *c;
	int rc = mdb_cursor_open(t->txn, db->dbi[DBI_STEERIN], &c);
	if (rc)
		return wdb__fail(t, wdb__code(rc));
	/* Look first, then change: the keys to delete and to stamp. */
	json_t *del = json_array(), *unstamped = json_array();
	MDB_val k = { db->sweep_len, db->sweep_key }, v;
	rc = mdb_cursor_get(c, &k, &v, db->sweep_len ? MDB_SET_RANGE : MDB_FIRST);
	if (rc == 0 && db->sweep_len && k.mv_size == db->sweep_len &&
	    memcmp(k.mv_data, db->sweep_key, k.mv_size) == 0)
		rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);   /* looked at last time */
	unsigned seen = 0;
	while (rc == 0 && seen < WDB_SWEEP &&
	       json_array_size(del) + json_array_size(unstamped) < *budget) {
		seen++;
		uint32_t cut = cut_of(&k, w), from;
		if (cut) {
			int none = retain_from(&v, &from);
			if (none || from < cut)
				json_array_append_new(none ? unstamped : del,
				                      json_stringn(k.mv_data, k.mv_size));
		}
		if (k.mv_size <= sizeof(db->sweep_key)) {
			memcpy(db->sweep_key, k.mv_data, k.mv_size);
			db->sweep_len = k.mv_size;
		}
		rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
	}
	mdb_cursor_close(c);
	if (rc == MDB_NOTFOUND) {
		db->sweep_len = 0;   /* the end: the next sweep starts again */
		rc = 0;
	}
	if (rc)
		rc = wdb__fail(t, wdb__code(rc));
	size_t i;
	json_t *key;
	json_array_foreach(del, i, key) {
		if (rc || (rc = wdb__del_raw(t, DBI_STEERIN, json_string_value(key))))
			break;
		t->inputs_changed = 1;
		(*budget)--;
	}
	json_array_foreach(unstamped, i, key) {
		if (rc || (rc = stamp(t, json_string_value(key), w->now)))
			break;
		(*budget)--;
	}
	json_decref(del);
	json_decref(unstamped);
	return rc;
}
