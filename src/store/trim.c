/* SPDX-License-Identifier: MIT */
/* Retention and room: weightdb_trim() (audit, history, pushed inputs)
 * and weightdb_make_room() (room for health decisions), each in one
 * write transaction that commits only when it deleted something. */
#include "store/weightdb.h"
#include "store/weightdb_int.h"
#include "common/util.h"

#include <string.h>

/* LMDB hands out the pages a commit freed only to a write two commits
 * later: the one right after it may still need them, for the snapshot
 * before it (mdb_find_oldest() counts from the writer's own id minus
 * one).  So the room a trim made is usable by the caller's next write
 * only after one more commit: this one, a counter in the meta table.
 * Without it, in a full map, that write failed as full although the
 * trim had freed enough -- whenever no other process happened to commit
 * in between. */
static void settle(weightdb_t *db)
{
	char err[300];
	wdb_txn_t *t = wdb_begin(db, "trim", err, sizeof(err));
	if (t && !wdb_set_meta_u64(t, "roomsettle", wdb_meta_u64(t, "roomsettle") + 1))
		wdb__commit_free(t, err, sizeof(err));
	else if (t)
		wdb_abort(t);
}

/* Ends trim transaction @t after deleting (@max - @budget) records or
 * failing with @rc: with nothing deleted, no commit, so no write at all.
 * Returns the number deleted or an error. */
static int trim_end(wdb_txn_t *t, int rc, unsigned max, unsigned budget)
{
	if (rc || budget == max) {
		wdb_abort(t);
		return rc;
	}
	char err[300];
	weightdb_t *db = t->db;
	if ((rc = wdb__commit_free(t, err, sizeof(err))))
		return rc;
	settle(db);
	return (int)(max - budget);
}

/* Begins a trim transaction, the pair of trim_end(). */
static wdb_txn_t *trim_begin(weightdb_t *db)
{
	char err[300];
	return wdb_begin(db, "trim", err, sizeof(err));
}

int weightdb_trim(weightdb_t *db, const wdb_trim_t *w, unsigned max)
{
	wdb_txn_t *t = trim_begin(db);
	if (!t)
		return GSLB_EIO;
	unsigned budget = max;
	int rc = 0;
	if (w->audit_before)
		rc = wdb__audit_trim(t, w->audit_before, &budget);
	if (!rc && w->history_before)
		rc = wdb__history_trim_n(t, w->history_before, &budget);
	if (!rc && (w->inputs_before || w->spend_before))
		rc = wdb__inputs_trim(t, w, &budget);
	return trim_end(t, rc, max, budget);
}

/* Room for health decisions (weightdb.h, WDB_ROOM_SHARE).  Each round
 * deletes what both tables hold of their oldest second, so that audit
 * records and history samples leave in time order together. */
int weightdb_make_room(weightdb_t *db, unsigned max, int force,
                       wdb_room_t *out)
{
	memset(out, 0, sizeof(*out));
	wdb_marks_t m;
	wdb__marks(db, &m);
	out->map = m.map;
	MDB_txn *rt;
	if (mdb_txn_begin(db->env, NULL, MDB_RDONLY, &rt))
		return GSLB_EIO;
	uint64_t live = out->live_before = out->live_after =
	        wdb__live_bytes(rt, db);
	mdb_txn_abort(rt);
	if (live <= m.high && !force)
		return 0;
	wdb_txn_t *t = trim_begin(db);
	if (!t)
		return GSLB_EIO;
	unsigned budget = max;
	int rc = 0;
	while (!rc && budget && (live > m.low || (force && budget == max))) {
		uint32_t ta = 0, th = 0;
		int ha = wdb__audit_oldest(t, &ta) == 0;
		int hh = wdb__history_oldest(t, &th) == 0;
		if (!ha && !hh)
			break;              /* nothing of them is left */
		uint32_t when = !hh || (ha && ta < th) ? ta : th;
		unsigned start = budget, b = budget;
		if (ha && ta == when && !(rc = wdb__audit_trim(t, when + 1, &budget)))
			out->audit += b - budget;
		b = budget;
		if (!rc && hh && th == when &&
		    !(rc = wdb__history_trim_n(t, when + 1, &budget)))
			out->history += b - budget;
		if (budget == start)
			break;              /* a record without a time: no further */
		out->newest = when;
		live = wdb__live_bytes(t->txn, db);
	}
	if (!rc && out->audit)
		rc = wdb_set_meta_u64(t, "roomaudit",
		                      wdb_meta_u64(t, "roomaudit") + out->audit);
	if (!rc && out->history)
		rc = wdb_set_meta_u64(t, "roomhist",
		                      wdb_meta_u64(t, "roomhist") + out->history);
	if (!rc)
		out->live_after = live;
	return trim_end(t, rc, max, budget);
}
