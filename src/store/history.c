/* SPDX-License-Identifier: MIT */
/* Score history: per-node samples keyed by node and time, appended by
 * the health thread, trimmed by age and read back oldest first (S2-10). */
#include "store/weightdb.h"
#include "store/weightdb_int.h"
#include "common/util.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* A sample lives under two keys: "node|time" (read per node, oldest
 * first) and time + "node" in the time index (trimmed from the front).
 * Both are written and deleted together. */

int wdb_history_add(wdb_txn_t *t, const char *node, uint32_t time, json_t *sample)
{
	if (t->read_only)
		return GSLB_EINVAL;
	json_t *n = wdb_get(t, WDB_NODE, node);
	if (!n)
		return GSLB_ENOENT;  /* deleted meanwhile: not a failed write */
	json_decref(n);
	uint8_t kb[WDB_HISTORY_KEY_MAX], ib[WDB_HISTORY_KEY_MAX];
	char *s = json_dumps(sample, JSON_COMPACT);
	if (!s)
		return wdb__fail(t, GSLB_ENOMEM);
	MDB_val k = { wdb__history_key(kb, node, time), kb }, v = { strlen(s), s };
	MDB_val ik = { wdb__histtime_key(ib, node, time), ib }, empty = { 0, "" };
	int rc = mdb_put(t->txn, t->db->dbi[DBI_HISTORY], &k, &v, 0);
	if (!rc)
		rc = mdb_put(t->txn, t->db->dbi[DBI_HISTTIME], &ik, &empty, 0);
	free(s);
	return rc ? wdb__fail(t, wdb__code(rc)) : 0;
}

int wdb__history_trim_n(wdb_txn_t *t, uint32_t before, unsigned *budget)
{
	MDB_cursor *c;
	int rc = mdb_cursor_open(t->txn, t->db->dbi[DBI_HISTTIME], &c);
	if (rc)
		return wdb__fail(t, wdb__code(rc));
	MDB_val k, v;
	while (*budget > 0 && (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST)) == 0) {
		const uint8_t *kd = k.mv_data;
		if (k.mv_size < 4 || k.mv_size > WDB_HISTORY_KEY_MAX - 1 ||
		    rd32(kd) >= before)
			break;              /* the first sample to keep */
		/* time + "node"  ->  "node|" + time */
		uint8_t hk[WDB_HISTORY_KEY_MAX];
		memcpy(hk, kd + 4, k.mv_size - 4);
		hk[k.mv_size - 4] = WDB_KEY_SEP;
		memcpy(hk + k.mv_size - 3, kd, 4);
		MDB_val hkv = { k.mv_size + 1, hk };
		rc = mdb_del(t->txn, t->db->dbi[DBI_HISTORY], &hkv, NULL);
		if (rc && rc != MDB_NOTFOUND)
			break;
		if ((rc = mdb_cursor_del(c, 0)))
			break;
		(*budget)--;
	}
	mdb_cursor_close(c);
	return rc && rc != MDB_NOTFOUND ? wdb__fail(t, wdb__code(rc)) : 0;
}

int wdb__history_oldest(wdb_txn_t *t, uint32_t *when)
{
	MDB_cursor *c;
	if (mdb_cursor_open(t->txn, t->db->dbi[DBI_HISTTIME], &c))
		return GSLB_EIO;
	MDB_val k, v;
	int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST);
	if (rc == 0 && k.mv_size >= 4)
		*when = rd32(k.mv_data);
	mdb_cursor_close(c);
	return rc == 0 && k.mv_size >= 4 ? 0 : GSLB_ENOENT;
}

int wdb_history_trim(wdb_txn_t *t, uint32_t before)
{
	unsigned budget = UINT_MAX;
	return wdb__history_trim_n(t, before, &budget);
}

int wdb__history_drop(wdb_txn_t *t, const char *node)
{
	uint8_t kb[WDB_HISTORY_KEY_MAX];
	size_t kl = wdb__history_key(kb, node, 0);
	MDB_cursor *c;
	int rc = mdb_cursor_open(t->txn, t->db->dbi[DBI_HISTORY], &c);
	if (rc)
		return wdb__fail(t, wdb__code(rc));
	MDB_val k, v;
	for (;;) {
		k = (MDB_val){ kl, kb };
		rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
		if (rc || k.mv_size != kl || memcmp(k.mv_data, kb, kl - 4) != 0)
			break;
		uint8_t ib[WDB_HISTORY_KEY_MAX];
		MDB_val ik = { wdb__histtime_key(ib, node,
		                 rd32((const uint8_t *)k.mv_data + kl - 4)), ib };
		rc = mdb_del(t->txn, t->db->dbi[DBI_HISTTIME], &ik, NULL);
		if (rc && rc != MDB_NOTFOUND)
			break;
		if ((rc = mdb_cursor_del(c, 0)))
			break;
	}
	mdb_cursor_close(c);
	return rc && rc != MDB_NOTFOUND ? wdb__fail(t, wdb__code(rc)) : 0;
}

int wdb_history_each(weightdb_t *db, const char *node, uint32_t since,
                     int (*fn)(uint32_t time, json_t *sample, void *arg),
                     void *arg)
{
	MDB_txn *txn;
	MDB_cursor *c;
	if (mdb_txn_begin(db->env, NULL, MDB_RDONLY, &txn))
		return GSLB_EIO;
	if (mdb_cursor_open(txn, db->dbi[DBI_HISTORY], &c)) {
		mdb_txn_abort(txn);
		return GSLB_EIO;
	}
	uint8_t kb[WDB_HISTORY_KEY_MAX];
	size_t kl = wdb__history_key(kb, node, since);
	MDB_val k = { kl, kb }, v;
	int rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
	while (rc == 0 && k.mv_size == kl && memcmp(k.mv_data, kb, kl - 4) == 0) {
		json_t *j = json_loadb(v.mv_data, v.mv_size, 0, NULL);
		if (j) {
			int stop = fn(rd32((uint8_t *)k.mv_data + kl - 4), j, arg);
			json_decref(j);
			if (stop)
				break;
		}
		rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
	}
	mdb_cursor_close(c);
	mdb_txn_abort(txn);
	return 0;
}
