/* SPDX-License-Identifier: MIT */
/* Score history: per-node samples keyed by node and time, appended by
 * the health thread, trimmed by age and read back oldest first (S2-10). */
#include "store/weightdb.h"
#include "store/weightdb_int.h"
#include "common/util.h"

#include <stdlib.h>
#include <string.h>

int wdb_history_add(wdb_txn_t *t, const char *node, uint32_t time, json_t *sample)
{
	uint8_t kb[WDB_HISTORY_KEY_MAX];
	char *s = json_dumps(sample, JSON_COMPACT);
	MDB_val k = { wdb__history_key(kb, node, time), kb }, v = { strlen(s), s };
	int rc = mdb_put(t->txn, t->db->dbi[DBI_HISTORY], &k, &v, 0);
	free(s);
	return rc ? GSLB_EIO : 0;
}

int wdb_history_trim(wdb_txn_t *t, uint32_t before)
{
	MDB_cursor *c;
	if (mdb_cursor_open(t->txn, t->db->dbi[DBI_HISTORY], &c))
		return GSLB_EIO;
	MDB_val k, v;
	int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST);
	while (rc == 0) {
		if (k.mv_size >= 5 && rd32((uint8_t *)k.mv_data + k.mv_size - 4) < before)
			mdb_cursor_del(c, 0);
		rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
	}
	mdb_cursor_close(c);
	return 0;
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
