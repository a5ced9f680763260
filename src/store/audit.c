/* SPDX-License-Identifier: MIT */
/* Audit records: the append-only log of every committed change (S3-7),
 * written inside the change's own transaction and read back for
 * `gslbctl log` and rollbacks. */
#include "store/weightdb.h"
#include "store/weightdb_int.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static json_t *now_rfc3339(void)
{
	char buf[40];
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_string(buf);
}

json_t *wdb_audit_record(wdb_txn_t *t, const char *what)
{
	json_t *rec = json_pack("{s:o, s:s, s:s, s:O}", "time", now_rfc3339(),
	                        "actor", t->actor, "what", what, "changes", t->changes);
	/* Who, from where: the writer's notes (user, undoes...) never
	 * replace the fields above.  The host is this machine's name unless
	 * the writer notes the one the change came from (the HTTP API: the
	 * client's address). */
	char host[256];
	if (rec && !json_object_get(t->notes, "host") &&
	    gethostname(host, sizeof(host)) == 0) {
		host[sizeof(host) - 1] = 0;
		json_object_set_new(rec, "host", json_string(host));
	}
	if (rec)
		json_object_update_missing(rec, t->notes);
	return rec;
}

int64_t wdb__audit_append(wdb_txn_t *t, const char *what, char *err,
                          size_t errlen)
{
	/* The id: one more than meta "seq". */
	uint64_t seq = 0;
	MDB_val k = { 3, "seq" }, v;
	if (mdb_get(t->txn, t->db->dbi[DBI_META], &k, &v) == 0 && v.mv_size == 8)
		seq = wdb__id_of(v.mv_data);
	seq++;
	uint8_t sb[8];
	wdb__id_key(sb, seq);
	v = (MDB_val){ 8, sb };
	json_t *rec = wdb_audit_record(t, what);
	/* The id first, as in every record written before. */
	json_t *full = rec ? json_pack("{s:I}", "id", (json_int_t)seq) : NULL;
	if (full)
		json_object_update(full, rec);
	json_decref(rec);
	rec = full;
	char *text = rec ? json_dumps(rec, JSON_COMPACT) : NULL;
	json_decref(rec);
	if (!text) {
		snprintf(err, errlen, "database: cannot encode the audit record");
		return GSLB_ENOMEM;
	}
	MDB_val ak = { 8, sb }, av = { strlen(text), text };
	int rc;
	if ((rc = mdb_put(t->txn, t->db->dbi[DBI_META], &k, &v, 0)) ||
	    (rc = mdb_put(t->txn, t->db->dbi[DBI_AUDIT], &ak, &av, MDB_APPEND))) {
		rc = wdb__code(rc);
		if (rc == GSLB_ENOSPC)
			wdb_full_msg(t->db, err, errlen);
		else
			snprintf(err, errlen, "database: cannot append the audit record");
		free(text);
		return rc;
	}
	free(text);
	return (int64_t)seq;
}

/* The "time" member of the top-level object of audit record @d (@n
 * bytes) into @out, without parsing the record: a record can hold a
 * whole table's diff, tens of MB, whose parse takes seconds.  The scan
 * skips strings and nested values, so only a top-level key counts; the
 * member comes second in every record written here, so the scan stops
 * within the first few dozen bytes.  Returns 0, or -1 if there is none
 * (the caller then parses). */
static int record_time(const char *d, size_t n, char *out, size_t outlen)
{
	int depth = 0;
	for (size_t i = 0; i < n; i++) {
		char c = d[i];
		if (c == '{' || c == '[') {
			depth++;
		} else if (c == '}' || c == ']') {
			if (--depth <= 0)
				return -1;
		} else if (c == '"') {
			size_t s = ++i;
			while (i < n && d[i] != '"')
				i += d[i] == '\\' ? 2 : 1;
			if (i >= n)
				return -1;
			size_t e = i, j = i + 1;
			while (j < n && (d[j] == ' ' || d[j] == '\n' || d[j] == '\t' || d[j] == '\r'))
				j++;
			if (depth != 1 || j >= n || d[j] != ':' || e - s != 4 ||
			    memcmp(d + s, "time", 4) != 0)
				continue;
			for (j++; j < n && (d[j] == ' ' || d[j] == '\n' || d[j] == '\t' || d[j] == '\r'); j++)
				;
			if (j >= n || d[j] != '"')
				return -1;
			size_t vs = ++j;
			while (j < n && d[j] != '"' && d[j] != '\\')
				j++;
			if (j >= n || d[j] != '"' || j - vs >= outlen)
				return -1;
			memcpy(out, d + vs, j - vs);
			out[j - vs] = 0;
			return 0;
		}
	}
	return -1;
}

/* The time of the oldest audit record, (@k, @v), as db->audit_head_time
 * ("" when it has none): remembered, so that a record too young to go is
 * not parsed again at every trim. */
static const char *head_time(weightdb_t *db, const MDB_val *k, const MDB_val *v)
{
	uint64_t id = k->mv_size == 8 ? wdb__id_of(k->mv_data) : 0;
	if (!id || id != db->audit_head_id || v->mv_size != db->audit_head_size) {
		char *ht = db->audit_head_time;
		if (record_time(v->mv_data, v->mv_size, ht, sizeof(db->audit_head_time))) {
			json_t *rec = json_loadb(v->mv_data, v->mv_size, 0, NULL);
			const char *tm_s = json_string_value(json_object_get(rec, "time"));
			snprintf(ht, sizeof(db->audit_head_time), "%s", tm_s ? tm_s : "");
			json_decref(rec);
		}
		db->audit_head_id = id;
		db->audit_head_size = v->mv_size;
	}
	return db->audit_head_time;
}

int wdb__audit_oldest(wdb_txn_t *t, uint32_t *when)
{
	MDB_cursor *c;
	if (mdb_cursor_open(t->txn, t->db->dbi[DBI_AUDIT], &c))
		return GSLB_EIO;
	MDB_val k, v;
	int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST);
	struct tm tm = { 0 };
	const char *ht = rc ? NULL : head_time(t->db, &k, &v);
	const char *end = ht ? strptime(ht, "%Y-%m-%dT%H:%M:%SZ", &tm) : NULL;
	mdb_cursor_close(c);
	if (!end || *end)
		return GSLB_ENOENT;
	*when = (uint32_t)timegm(&tm);
	return 0;
}

/* S3-7: records older than database.audit-keep go, oldest first.  Ids
 * follow commit order, so the first record not older than @before ends
 * the walk (a clock stepped back only keeps a few records longer). */
int wdb__audit_trim(wdb_txn_t *t, uint32_t before, unsigned *budget)
{
	char cut[40];
	time_t b = (time_t)before;
	struct tm tm;
	gmtime_r(&b, &tm);
	strftime(cut, sizeof(cut), "%Y-%m-%dT%H:%M:%SZ", &tm);
	MDB_cursor *c;
	int rc = mdb_cursor_open(t->txn, t->db->dbi[DBI_AUDIT], &c);
	if (rc)
		return wdb__fail(t, wdb__code(rc));
	MDB_val k, v;
	while (*budget > 0 && (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST)) == 0) {
		const char *ht = head_time(t->db, &k, &v);
		/* RFC 3339 UTC strings compare in time order. */
		if (!ht[0] || strcmp(ht, cut) >= 0)
			break;
		if ((rc = mdb_cursor_del(c, 0)))
			break;
		(*budget)--;
	}
	mdb_cursor_close(c);
	return rc && rc != MDB_NOTFOUND ? wdb__fail(t, wdb__code(rc)) : 0;
}

typedef struct {
	int (*fn)(int64_t id, json_t *rec, void *arg);
	void *arg;
	int64_t since;
} audit_each_t;

static int audit_cb(const MDB_val *k, const MDB_val *v, void *arg)
{
	audit_each_t *a = arg;
	if (k->mv_size != 8)
		return 0;
	int64_t id = (int64_t)wdb__id_of(k->mv_data);
	if (id <= a->since)
		return 0;
	json_t *rec = json_loadb(v->mv_data, v->mv_size, 0, NULL);
	if (!rec)
		return 0;
	int rc = a->fn(id, rec, a->arg);
	json_decref(rec);
	return rc;
}

int wdb_audit_each(weightdb_t *db, int64_t since_id,
                   int (*fn)(int64_t id, json_t *rec, void *arg), void *arg)
{
	MDB_txn *txn;
	if (mdb_txn_begin(db->env, NULL, MDB_RDONLY, &txn))
		return GSLB_EIO;
	audit_each_t a = { fn, arg, since_id };
	int rc = wdb__each_raw(txn, db->dbi[DBI_AUDIT], NULL, audit_cb, &a);
	mdb_txn_abort(txn);
	return rc;
}

json_t *wdb_audit_get(weightdb_t *db, int64_t id)
{
	MDB_txn *txn;
	if (mdb_txn_begin(db->env, NULL, MDB_RDONLY, &txn))
		return NULL;
	uint8_t kb[8];
	wdb__id_key(kb, (uint64_t)id);
	MDB_val k = { 8, kb }, v;
	json_t *rec = NULL;
	if (mdb_get(txn, db->dbi[DBI_AUDIT], &k, &v) == 0)
		rec = json_loadb(v.mv_data, v.mv_size, 0, NULL);
	mdb_txn_abort(txn);
	return rec;
}

int64_t wdb_audit_last(weightdb_t *db)
{
	MDB_txn *txn;
	if (mdb_txn_begin(db->env, NULL, MDB_RDONLY, &txn))
		return 0;
	MDB_val k = { 3, "seq" }, v;
	int64_t seq = 0;
	if (mdb_get(txn, db->dbi[DBI_META], &k, &v) == 0 && v.mv_size == 8)
		seq = (int64_t)wdb__id_of(v.mv_data);
	mdb_txn_abort(txn);
	return seq;
}

/* The number of cutover window id @key ("c12" -> 12), 0 for another. */
static uint64_t cutover_number(const char *key, size_t len)
{
	uint64_t n = 0;
	if (len < 2 || key[0] != 'c')
		return 0;
	for (size_t i = 1; i < len; i++) {
		if (key[i] < '0' || key[i] > '9' || n > UINT32_MAX)
			return 0;
		n = n * 10 + (uint64_t)(key[i] - '0');
	}
	return n;
}

static int audit_cutover_max(const MDB_val *k, const MDB_val *v, void *arg)
{
	(void)k;
	uint64_t *max = arg;
	json_t *rec = json_loadb(v->mv_data, v->mv_size, 0, NULL);
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(rec, "changes"), i, c) {
		const char *kind = json_string_value(json_object_get(c, "kind"));
		const char *key = json_string_value(json_object_get(c, "key"));
		uint64_t n = kind && key && strcmp(kind, "cutover") == 0 ?
		             cutover_number(key, strlen(key)) : 0;
		if (n > *max)
			*max = n;
	}
	json_decref(rec);
	return 0;
}

/* S0-2: a window id names one announcement for good; reusing the id of
 * a deleted window would make the audit log and any ticket that cites
 * the id ambiguous. */
uint64_t wdb_cutover_next_id(wdb_txn_t *t, uint64_t floor)
{
	MDB_val k = { 10, "cutoverseq" }, v;
	uint64_t last = 0;
	if (mdb_get(t->txn, t->db->dbi[DBI_META], &k, &v) == 0 && v.mv_size == 8)
		last = wdb__id_of(v.mv_data);
	else
		/* A store from before the counter: what the log remembers. */
		wdb__each_raw(t->txn, t->db->dbi[DBI_AUDIT], NULL, audit_cutover_max, &last);
	if (floor > last)
		last = floor;
	uint8_t b[8];
	wdb__id_key(b, last + 1);
	v = (MDB_val){ 8, b };
	int rc = mdb_put(t->txn, t->db->dbi[DBI_META], &k, &v, 0);
	if (rc) {
		wdb__fail(t, wdb__code(rc));
		return 0;
	}
	return last + 1;
}
