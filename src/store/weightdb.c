/* SPDX-License-Identifier: MIT */
/* The LMDB environment (open, schema check, sync) and the workers'
 * readers: one read-only transaction per batch of packets, renewed on
 * first use and reset at the end of the batch. */
#include "store/weightdb.h"
#include "store/keys.h"
#include "store/weightdb_int.h"
#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const dbi_names[DBI_COUNT] = {
	"meta", "services", "svcrec", "nodes", "weights", "plans", "audit",
	"health", "status", "metrics", "history", "cutovers"
};

static int mkdir_p(const char *path)
{
	char buf[4096];
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++)
		if (*p == '/') {
			*p = 0;
			mkdir(buf, 0755);
			*p = '/';
		}
	return mkdir(buf, 0755) == 0 || errno == EEXIST ? 0 : -errno;
}

weightdb_t *weightdb_open(const char *path, char *err, size_t errlen)
{
	weightdb_t *db = xcalloc(1, sizeof(*db));
	db->path = xstrdup(path);
	int rc = mkdir_p(path);
	if (rc) {
		snprintf(err, errlen, "database %s: %s", path, strerror(-rc));
		goto fail;
	}
	MDB_txn *txn = NULL;
	if ((rc = mdb_env_create(&db->env)) ||
	    (rc = mdb_env_set_maxdbs(db->env, 32)) ||
	    (rc = mdb_env_set_maxreaders(db->env, 1024)) ||
	    /* A sparse file: the map only reserves address space. */
	    (rc = mdb_env_set_mapsize(db->env, (size_t)16 << 30)) ||
	    (rc = mdb_env_open(db->env, path, MDB_NOTLS, 0644))) {
		snprintf(err, errlen, "database %s: %s", path, mdb_strerror(rc));
		goto fail;
	}
	if ((rc = mdb_txn_begin(db->env, NULL, 0, &txn))) {
		snprintf(err, errlen, "database %s: %s", path, mdb_strerror(rc));
		goto fail;
	}
	for (int i = 0; i < DBI_COUNT; i++)
		if ((rc = mdb_dbi_open(txn, dbi_names[i], MDB_CREATE, &db->dbi[i]))) {
			snprintf(err, errlen, "database %s: %s: %s", path, dbi_names[i],
			         mdb_strerror(rc));
			mdb_txn_abort(txn);
			goto fail;
		}
	MDB_val k = { 6, "schema" }, v;
	rc = mdb_get(txn, db->dbi[DBI_META], &k, &v);
	if (rc == MDB_NOTFOUND) {
		uint8_t ver[4];
		wr32(ver, WDB_SCHEMA);
		v = (MDB_val){ 4, ver };
		rc = mdb_put(txn, db->dbi[DBI_META], &k, &v, 0);
	} else if (rc == 0 && (v.mv_size != 4 || rd32(v.mv_data) > WDB_SCHEMA)) {
		snprintf(err, errlen, "database %s: schema version %u is newer than "
		         "this gslbd understands (%d)", path,
		         v.mv_size == 4 ? rd32(v.mv_data) : 0, WDB_SCHEMA);
		mdb_txn_abort(txn);
		goto fail;
	}
	if (rc || (rc = mdb_txn_commit(txn))) {
		snprintf(err, errlen, "database %s: %s", path, mdb_strerror(rc));
		goto fail;
	}
	return db;
fail:
	if (db->env)
		mdb_env_close(db->env);
	free(db->path);
	free(db);
	return NULL;
}

void weightdb_set_nosync(weightdb_t *db)
{
	mdb_env_set_flags(db->env, MDB_NOSYNC, 1);
}

int weightdb_sync(weightdb_t *db)
{
	return mdb_env_sync(db->env, 1) ? GSLB_EIO : 0;
}

void weightdb_close(weightdb_t *db)
{
	if (!db)
		return;
	mdb_env_close(db->env);
	free(db->path);
	free(db);
}

/* Readers --------------------------------------------------------- */

wdb_reader_t *wdb_reader_new(weightdb_t *db)
{
	wdb_reader_t *r = xcalloc(1, sizeof(*r));
	r->db = db;
	if (mdb_txn_begin(db->env, NULL, MDB_RDONLY, &r->txn)) {
		free(r);
		return NULL;
	}
	mdb_txn_reset(r->txn);
	return r;
}

void wdb_reader_free(wdb_reader_t *r)
{
	if (!r)
		return;
	mdb_txn_abort(r->txn);
	free(r);
}

void wdb_reader_release(wdb_reader_t *r)
{
	if (r && r->active) {
		mdb_txn_reset(r->txn);
		r->active = 0;
	}
}

static int reader_take(wdb_reader_t *r)
{
	if (r->active)
		return 0;
	if (mdb_txn_renew(r->txn))
		return GSLB_EIO;
	r->active = 1;
	return 0;
}

int wdb_service(wdb_reader_t *r, const char *name, size_t len, svc_rec_t *out)
{
	if (reader_take(r))
		return GSLB_EIO;
	MDB_val k = { len, (void *)name }, v;
	int rc = mdb_get(r->txn, r->db->dbi[DBI_SVCREC], &k, &v);
	if (rc)
		return GSLB_ENOENT;
	const uint8_t *d = v.mv_data;
	if (v.mv_size < 12 || d[0] != 1)
		return GSLB_EIO;
	out->version = d[0];
	out->answers = d[1];
	out->all_down = d[2];
	out->flags = d[3];
	out->ttl = rd32(d + 4);
	out->short_ttl = rd32(d + 8);
	return 0;
}

int wdb_plan(wdb_reader_t *r, const char *svc, size_t svclen,
             const char *region, const char *isp, const uint8_t **data,
             size_t *len)
{
	char key[512];
	size_t kl = wdb_row_keyn(key, sizeof(key), svc, svclen, region, isp);
	if (!kl || reader_take(r))
		return GSLB_EIO;
	MDB_val k = { kl, key }, v;
	if (mdb_get(r->txn, r->db->dbi[DBI_PLANS], &k, &v))
		return GSLB_ENOENT;
	*data = v.mv_data;
	*len = v.mv_size;
	return 0;
}
