/* SPDX-License-Identifier: MIT */
/* The dnssec section, the keys of the signed zones, and the signer of
 * each query thread. */
#include "dnssec/dnssec.h"
#include "dnssec/keydb.h"
#include "dnssec/rrsig.h"
#include "dnssec/sigcache.h"
#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static weightdb_t *g_db;
static uint64_t g_gen;        /* "dnssecgen" at the last load tried */

void dnssec_use_store(weightdb_t *db)
{
	g_db = db;
}

/* The store's dnssecgen counter, or @dflt when it cannot be read. */
static uint64_t store_gen(uint64_t dflt)
{
	wdb_txn_t *t = g_db ? wdb_begin_read(g_db) : NULL;
	if (!t)
		return dflt;
	uint64_t g = wdb_meta_u64(t, "dnssecgen");
	wdb_abort(t);
	return g;
}

int dnssec_store_changed(void)
{
	return g_db && store_gen(g_gen) != g_gen;
}

/* The configuration ------------------------------------------------ */

/* Reads parent-servers: a list of addresses (IP or IP@PORT). */
static int conf_parents(const conf_t *c, const ynode_t *v, dnssec_conf_t *o,
                        char *err, size_t errlen)
{
	if (v->kind != YNODE_SEQ)
		return conf_sfail(c, v, err, errlen, "dnssec: parent-servers must "
		                  "be a list of addresses (IP or IP@PORT)");
	o->parents = xcalloc(v->n ? v->n : 1, sizeof(char *));
	for (size_t i = 0; i < v->n; i++) {
		const ynode_t *a = v->items[i];
		conf_listen_t l;
		if (a->kind != YNODE_SCALAR || !a->value ||
		    conf_parse_listen(a->value, &l))
			return conf_sfail(c, a, err, errlen, "dnssec: parent-servers: "
			                  "'%s' is not IP or IP@PORT",
			                  a->kind == YNODE_SCALAR && a->value ? a->value :
			                  "");
		o->parents[o->nparents++] = xstrdup(l.text);  /* "IP@PORT" */
	}
	return 0;
}

int dnssec_conf_load(const conf_t *c, dnssec_conf_t *o, char *err,
                     size_t errlen)
{
	memset(o, 0, sizeof(*o));
	o->cache_entries = SIGCACHE_DEFAULT;
	o->dnskey_ttl = 3600;
	o->publish_safety = 3600;
	o->retire_safety = 3600;
	o->max_zone_ttl = 86400;
	o->ds_check_interval = 3600;
	const ynode_t *s = c->root ? ynode_get(c->root, "dnssec") : NULL;
	if (!s)
		return 0;
	static const char *const keys[] = {
		"keystore", "signature-cache", "dnskey-ttl", "zsk-lifetime",
		"ksk-lifetime", "csk-lifetime", "publish-safety", "retire-safety",
		"max-zone-ttl", "ds-check-interval", "parent-servers", NULL };
	if (conf_skeys(c, s, "dnssec", keys, err, errlen))
		return -1;
	/* The cache's upper bound keeps one thread's table (520 bytes an
	 * entry) below 8 GB; a week is the longest DNSKEY TTL a
	 * signature window (DNSSEC_WINDOW) outlives, and the longest TTL
	 * (and margin) a rollover waits for. */
	const conf_num_t nums[] = {
		CONF_NUM("signature-cache", 0, 1 << 24, &o->cache_entries),
		CONF_NUM("dnskey-ttl", 0, 604800, &o->dnskey_ttl),
		CONF_NUM("zsk-lifetime", 0, 4e9, &o->zsk_lifetime),
		CONF_NUM("ksk-lifetime", 0, 4e9, &o->ksk_lifetime),
		CONF_NUM("csk-lifetime", 0, 4e9, &o->csk_lifetime),
		CONF_NUM("publish-safety", 0, 604800, &o->publish_safety),
		CONF_NUM("retire-safety", 0, 604800, &o->retire_safety),
		CONF_NUM("max-zone-ttl", 0, 604800, &o->max_zone_ttl),
		CONF_NUM("ds-check-interval", 1, 86400, &o->ds_check_interval),
	};
	for (size_t i = 0; i < s->n; i++) {
		const char *k = s->keys[i]->value;
		const ynode_t *v = s->items[i];
		int r = conf_snum_key(c, k, v, nums, sizeof(nums) / sizeof(nums[0]),
		                      err, errlen);
		if (r < 0)
			goto fail;
		if (r > 0)
			continue;
		if (!strcmp(k, "parent-servers")) {
			if (conf_parents(c, v, o, err, errlen))
				goto fail;
			continue;
		}
		/* keystore */
		if (v->kind != YNODE_SCALAR || !v->value || !v->value[0]) {
			conf_sfail(c, v, err, errlen, "dnssec: keystore must be a "
			           "directory name");
			goto fail;
		}
		free(o->keystore);
		o->keystore = conf_path(c, v->value);
	}
	if (!o->keystore) {
		conf_sfail(c, s, err, errlen, "dnssec: keystore is missing (the "
		           "directory of the private key files)");
		goto fail;
	}
	return 0;
fail:
	dnssec_conf_clear(o);
	return -1;
}

void dnssec_conf_clear(dnssec_conf_t *o)
{
	free(o->keystore);
	o->keystore = NULL;
	for (unsigned i = 0; i < o->nparents; i++)
		free(o->parents[i]);
	free(o->parents);
	o->parents = NULL;
	o->nparents = 0;
}

unsigned dnssec_role_use(const char *role)
{
	if (!role)
		return 0;
	if (!strcmp(role, "csk"))
		return DNSSEC_USE_KEYSET | DNSSEC_USE_ZONE;
	if (!strcmp(role, "ksk"))
		return DNSSEC_USE_KEYSET;
	if (!strcmp(role, "zsk"))
		return DNSSEC_USE_ZONE;
	return 0;
}

/* The keys of the signed zones --------------------------------------- */

void dnssec_set_free(dnssec_set_t *s)
{
	if (!s)
		return;
	for (unsigned i = 0; i < s->nzones; i++) {
		dnssec_zone_t *z = &s->zones[i];
		for (unsigned k = 0; k < z->nkeys; k++)
			dnssec_key_free(z->keys[k]);
		free(z->dnskey_rdata);
		free(z->cds_rdata);
		free(z->cdnskey_rdata);
	}
	free(s->zones);
	free(s);
}

/* Appends record @rd (@l bytes) to the RRset at *@set of *@size bytes. */
static void rr_append(uint8_t **set, size_t *size, const uint8_t *rd, size_t l)
{
	*set = xrealloc(*set, *size + 2 + l);
	wr16(*set + *size, (uint16_t)l);
	memcpy(*set + *size + 2, rd, l);
	*size += 2 + l;
}

/* Appends a DNSKEY record (@rd, @l bytes: key @tag of @alg) to @z's
 * RRset, and its CDS and CDNSKEY when @cds (RFC 7344 §3: the same rdata
 * as DS and DNSKEY). */
static int dnskey_add(dnssec_zone_t *z, const uint8_t *rd, size_t l,
                      unsigned tag, int alg, int cds)
{
	rr_append(&z->dnskey_rdata, &z->dnskey_size, rd, l);
	z->dnskey_count++;
	if (!cds)
		return 0;
	uint8_t ds[4 + 32];
	wr16(ds, (uint16_t)tag);
	ds[2] = (uint8_t)alg;
	ds[3] = 2;
	if (dnssec_ds_digest(z->apex, rd, l, ds + 4))
		return -1;
	rr_append(&z->cds_rdata, &z->cds_size, ds, sizeof(ds));
	rr_append(&z->cdnskey_rdata, &z->cdnskey_size, rd, l);
	z->cds_count++;
	return 0;
}

/* Whether @z has an active key for each use (DNSSEC_USE_*); @extra: the
 * uses of active keys whose private half is missing. */
static int zone_covered(const dnssec_zone_t *z, unsigned extra,
                        const char *name, char *err, size_t errlen)
{
	unsigned u = extra;
	for (unsigned k = 0; k < z->nkeys; k++)
		u |= z->use[k];
	if (u == (DNSSEC_USE_KEYSET | DNSSEC_USE_ZONE))
		return 0;
	snprintf(err, errlen, "zone %s: no active key signs %s (a %s is "
	         "needed: gslbctl dnssec keygen %s --role %s)", name,
	         u & DNSSEC_USE_KEYSET ? "its data" : "its DNSKEY set",
	         u & DNSSEC_USE_KEYSET ? "ZSK" : "KSK", name,
	         u & DNSSEC_USE_KEYSET ? "zsk" : "ksk");
	return -1;
}

/* The checks of key record @r (of @tag) of zone @name before its file
 * is read: a role, a file, an algorithm served.  0 or -1 with @err. */
static int key_record_ok(json_t *r, const char *name, unsigned tag, char *err,
                         size_t errlen)
{
	const char *role = json_string_value(json_object_get(r, "role"));
	int alg = (int)json_integer_value(json_object_get(r, "algorithm"));
	if (!dnssec_role_use(role)) {
		snprintf(err, errlen, "zone %s: key %u: role '%s' is none of "
		         "csk, ksk, zsk", name, tag, role ? role : "");
		return -1;
	}
	if (!json_string_value(json_object_get(r, "file"))) {
		snprintf(err, errlen, "zone %s: key %u has no file", name, tag);
		return -1;
	}
	if (alg != DNSSEC_ALG_ECDSAP256 && alg != DNSSEC_ALG_ED25519) {
		snprintf(err, errlen, "zone %s: key %u: algorithm %d is not "
		         "served (13 ECDSAP256SHA256 or 15 ED25519)", name, tag, alg);
		return -1;
	}
	return 0;
}

/* The key of record @r (of @tag) of zone @name from the keystore, or
 * NULL with @err.  With @shared (cluster mode: the files come from
 * etcd) a file not in the keystore is no error: NULL with *@missing. */
static dnssec_key_t *key_of(const dnssec_conf_t *dc, json_t *r,
                            const char *name, unsigned tag, int shared,
                            int *missing, char *err, size_t errlen)
{
	const char *file = json_string_value(json_object_get(r, "file"));
	int alg = (int)json_integer_value(json_object_get(r, "algorithm"));
	int flags = (int)json_integer_value(json_object_get(r, "flags"));
	char *path = keydb_path(dc->keystore, file);
	*missing = shared && access(path, F_OK) && errno == ENOENT;
	if (*missing) {
		snprintf(err, errlen, "zone %s: key %u: key file %s is not in the "
		         "keystore", name, tag, path);
		free(path);
		return NULL;
	}
	dnssec_key_t *k = dnssec_key_load(path, alg, (uint16_t)flags, err, errlen);
	uint8_t want[DNSSEC_DNSKEY_MAX];
	size_t wl = keydb_dnskey(r, want), hl = 0;
	const uint8_t *have = k ? dnssec_key_dnskey(k, &hl) : NULL;
	if (k && (wl != hl || memcmp(want, have, hl) != 0)) {
		snprintf(err, errlen, "key file %s: holds key tag %u, not the "
		         "key %u of zone %s in the store (a file of another key?)",
		         path, dnssec_key_tag(k), tag, name);
		dnssec_key_free(k);
		k = NULL;
	}
	free(path);
	return k;
}

/* One key of zone @name (record @r, in @state) into @z: its DNSKEY (and
 * CDS), and it signs when active.  A key whose file is missing
 * (@shared only) is in the DNSKEY RRset from its record, and, active,
 * counted in @z->missing with its uses in *@muse.  0 or -1 with @err. */
static int zone_key(const dnssec_conf_t *dc, json_t *r, const char *name,
                    int active, int shared, dnssec_zone_t *z, unsigned *muse,
                    char *err, size_t errlen)
{
	unsigned tag = (unsigned)json_integer_value(json_object_get(r, "tag"));
	if (key_record_ok(r, name, tag, err, errlen))
		return -1;
	unsigned use = dnssec_role_use(json_string_value(json_object_get(r, "role")));
	int alg = (int)json_integer_value(json_object_get(r, "algorithm"));
	int missing;
	dnssec_key_t *k = key_of(dc, r, name, tag, shared, &missing, err, errlen);
	if (!k && !missing)
		return -1;
	uint8_t buf[DNSSEC_DNSKEY_MAX];
	size_t l = 0;
	const uint8_t *rd = k ? dnssec_key_dnskey(k, &l) : buf;
	if (!k)
		l = keydb_dnskey(r, buf);
	if (!l || dnskey_add(z, rd, l, tag, alg, json_is_true(json_object_get(r, "cds")))) {
		snprintf(err, errlen, "zone %s: key %u: cannot make its DNSKEY or "
		         "CDS", name, tag);
		dnssec_key_free(k);
		return -1;
	}
	if (missing) {
		/* Never an answer that cannot validate: DO queries of the
		 * zone are SERVFAIL until the file is there. */
		log_warning("%s%s", err, active ? ": the zone's signed answers are "
		            "SERVFAIL until it arrives" : " (not signing yet)");
		err[0] = 0;
		if (active) {
			z->missing++;
			*muse |= use;
		}
		return 0;
	}
	if (active && z->nkeys < DNSSEC_ZONE_KEYS) {
		z->use[z->nkeys] = (uint8_t)use;
		z->keys[z->nkeys++] = k;
		return 0;
	}
	dnssec_key_free(k);  /* published only: its DNSKEY is kept */
	if (!active)
		return 0;
	snprintf(err, errlen, "zone %s: more than %d active keys", name,
	         DNSSEC_ZONE_KEYS);
	return -1;
}

/* Loads the keys of zone @name into @z; @shared: cluster mode. */
static int zone_keys(wdb_txn_t *t, const dnssec_conf_t *dc, const char *name,
                     int shared, dnssec_zone_t *z, char *err, size_t errlen)
{
	json_t *keys = keydb_keys(t, name);
	size_t i;
	json_t *r;
	int rc = 0;
	unsigned muse = 0;
	json_array_foreach(keys, i, r) {
		const char *state = json_string_value(json_object_get(r, "state"));
		int active = state && strcmp(state, "active") == 0;
		if (!state || (!active && strcmp(state, "published") != 0))
			continue;        /* retired, or a state of a later gslbd */
		if ((rc = zone_key(dc, r, name, active, shared, z, &muse, err, errlen)))
			break;
	}
	json_decref(keys);
	if (!rc && !z->nkeys && !z->missing) {
		snprintf(err, errlen, "zone %s: signing is enabled but the zone has "
		         "no active key (gslbctl dnssec keygen %s)", name, name);
		rc = -1;
	}
	if (!rc)
		rc = zone_covered(z, muse, name, err, errlen);
	return rc;
}

static unsigned g_missing;    /* atomic: dnssec_keys_missing() */

unsigned dnssec_keys_missing(void)
{
	return __atomic_load_n(&g_missing, __ATOMIC_RELAXED);
}

int dnssec_set_load(const conf_t *c, dnssec_set_t **out, char *err,
                    size_t errlen)
{
	*out = NULL;
	if (!g_db)
		return 0;
	dnssec_conf_t dc;
	if (dnssec_conf_load(c, &dc, err, errlen))
		return -1;
	/* Noted before the keys are read: a failed load is not tried again
	 * until the keys change again (or SIGHUP). */
	g_gen = store_gen(g_gen);
	wdb_txn_t *t = wdb_begin_read(g_db);
	if (!t) {
		snprintf(err, errlen, "dnssec: cannot read the store");
		dnssec_conf_clear(&dc);
		return -1;
	}
	dnssec_set_t *s = xcalloc(1, sizeof(*s));
	s->zones = xcalloc(c->nzones ? c->nzones : 1, sizeof(*s->zones));
	int rc = 0;
	unsigned missing = 0;
	/* Cluster mode: the key files come from etcd, and a zone whose file
	 * has not (yet) is loaded all the same, answering DO queries
	 * SERVFAIL, rather than failing the whole snapshot. */
	int shared = c->root && ynode_get(c->root, "cluster") != NULL;
	for (size_t i = 0; i < c->nzones && !rc; i++) {
		const conf_zone_t *cz = &c->zones[i];
		json_t *rec = keydb_zone(t, cz->name);
		int on = rec && json_is_true(json_object_get(rec, "enabled"));
		json_decref(rec);
		if (!on)
			continue;
		if (!dc.keystore) {
			snprintf(err, errlen, "zone %s: signing is enabled in the store, "
			         "but the configuration has no dnssec: keystore", cz->name);
			rc = -1;
			break;
		}
		struct stat st;
		if (stat(dc.keystore, &st) || !S_ISDIR(st.st_mode)) {
			snprintf(err, errlen, "dnssec: keystore %s is not a directory",
			         dc.keystore);
			rc = -1;
			break;
		}
		dnssec_zone_t *z = &s->zones[s->nzones++];
		z->apex_len = dname_copy_lower(z->apex, cz->dname);
		z->dnskey_ttl = dc.dnskey_ttl;
		rc = zone_keys(t, &dc, cz->name, shared, z, err, errlen);
		missing += z->missing;
		if (!rc)
			log_info("zone %s: signed with %u key(s), %u in DNSKEY%s",
			         cz->name, z->nkeys, (unsigned)z->dnskey_count,
			         z->missing ? ", a signing key missing: SERVFAIL to DO" : "");
	}
	wdb_abort(t);
	dnssec_conf_clear(&dc);
	if (!rc)
		__atomic_store_n(&g_missing, missing, __ATOMIC_RELAXED);
	if (rc || !s->nzones) {
		dnssec_set_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

/* The signer of a query thread --------------------------------------- */

/* The most bytes one signature covers: RRSIG head and canonical RRset.
 * An RRset larger than this is not signed (SERVFAIL); that is above
 * anything a GSLB answer or a sane static RRset needs. */
#define DNSSEC_SIGNED_MAX 16384

struct dnssec_thread {
	sigcache_t *cache;             /* NULL: signature-cache 0 */
	dnssec_md_t *md;
	uint8_t data[DNSSEC_SIGNED_MAX];
	uint8_t scratch[DNSSEC_SIGNED_MAX];
	uint8_t pick[SIGCACHE_DATA_MAX];  /* dnssec_rrsig_set()'s key */
};

dnssec_thread_t *dnssec_thread_new(unsigned cache_entries)
{
	dnssec_thread_t *t = xcalloc(1, sizeof(*t));
	t->cache = cache_entries ? sigcache_new(cache_entries) : NULL;
	t->md = dnssec_md_new();
	return t;
}

void dnssec_thread_free(dnssec_thread_t *t)
{
	if (!t)
		return;
	sigcache_free(t->cache);
	dnssec_md_free(t->md);
	free(t);
}

unsigned dnssec_thread_cached(const dnssec_thread_t *t)
{
	return t && t->cache ? sigcache_used(t->cache) : 0;
}

size_t dnssec_rrsig(dnssec_thread_t *t, const dnssec_zone_t *z, unsigned ki,
                    uint32_t now, const uint8_t *lowner, uint16_t type,
                    uint32_t ttl, uint16_t count, const uint8_t *rdata,
                    uint8_t *out, unsigned *what)
{
	const dnssec_key_t *k = z->keys[ki];
	uint32_t start, inc, exp;
	dnssec_window(now, &start, &inc, &exp);
	size_t head = dnssec_rrsig_head(t->data, type, (uint8_t)dnssec_key_alg(k),
	                                (uint8_t)dnssec_labels(lowner), ttl, exp,
	                                inc, dnssec_key_tag(k), z->apex);
	size_t len = dnssec_canon_rrset(t->data, sizeof(t->data), head, lowner,
	                                type, ttl, count, rdata, t->scratch,
	                                sizeof(t->scratch));
	*what = 0;
	if (!len)
		return 0;
	memcpy(out, t->data, head);
	uint64_t id = dnssec_key_id(k);
	uint64_t h = 0;
	size_t sl = 0;
	if (t->cache) {
		h = sigcache_hash(t->data, len, id);
		sl = sigcache_get(t->cache, h, id, t->data, len, out + head);
	}
	if (sl) {
		*what = DNSSEC_HIT;
		return head + sl;
	}
	sl = dnssec_key_sign(k, t->md, t->data, len, out + head);
	if (!sl)
		return 0;
	*what = DNSSEC_MADE;
	if (t->cache && sigcache_put(t->cache, h, id, t->data, len, out + head, sl))
		*what |= DNSSEC_EVICTED;
	return head + sl;
}

/* Sorts @rdlen bytes of records in the RRset form in place when they
 * all have one length of 16 bytes at most (addresses): a GSLB answer's
 * nodes come in a shuffled order, and one key for all its orders keeps
 * one entry per set instead of one per order.  Same-length records in
 * byte order are the canonical order (RFC 4034 §6.3); any order is the
 * same RRset, so this only decides which entry a set shares. */
static void sort_records(uint8_t *r, size_t rdlen)
{
	size_t l = rdlen >= 2 ? rd16(r) : 0, w = 2 + l;
	if (!l || l > 16 || rdlen % w)
		return;
	size_t n = rdlen / w;
	for (size_t i = 1; i < n; i++)
		if (rd16(r + i * w) != l)
			return;
	uint8_t tmp[18];
	for (size_t i = 1; i < n; i++) {
		size_t j = i;
		memcpy(tmp, r + i * w, w);
		for (; j > 0 && memcmp(r + (j - 1) * w + 2, tmp + 2, l) > 0; j--)
			memcpy(r + j * w, r + (j - 1) * w, w);
		memcpy(r + j * w, tmp, w);
	}
}

/* The key of an RRset by what the signed data is made of, in the
 * signature cache beside the signed data's own entries:
 *   u16 type | u8 0 | u32 TTL | u32 expiration | u32 inception |
 *   signer (the apex, wire) | owner (lowercase wire) | the records as
 *   written (16-bit length, rdata each), addresses in byte order.
 * The signed data (RRSIG head, canonical RRset) is a function of these
 * and of the key, whose id the cache compares as well: the algorithm
 * and key tag come from the key, the labels from the owner, the
 * canonical RRset from the owner, type, TTL and records.  So a hit is
 * the signature of the very RRset, whatever changed it: another row or
 * pick, a drained node (S0-11), a weight, capacity (S1-6) or release
 * (S4-10), a TTL, a reload, a key (docs/DESIGN-NOTES.md).  Byte 2 is the
 * algorithm in signed data and never 0 there: the two kinds of entry
 * cannot meet.  Returns its length, or 0 when it does not fit. */
static size_t pick_key(uint8_t *p, const dnssec_zone_t *z, uint32_t exp,
                       uint32_t inc, const uint8_t *lowner, uint16_t type,
                       uint32_t ttl, const uint8_t *rdata, size_t rdlen)
{
	size_t ol = dname_len(lowner, 255);
	size_t len = 15 + z->apex_len + ol + rdlen;
	if (!ol || len > SIGCACHE_DATA_MAX)
		return 0;
	wr16(p, type);
	p[2] = 0;
	wr32(p + 3, ttl);
	wr32(p + 7, exp);
	wr32(p + 11, inc);
	memcpy(p + 15, z->apex, z->apex_len);
	memcpy(p + 15 + z->apex_len, lowner, ol);
	memcpy(p + 15 + z->apex_len + ol, rdata, rdlen);
	sort_records(p + 15 + z->apex_len + ol, rdlen);
	return len;
}

size_t dnssec_rrsig_set(dnssec_thread_t *t, const dnssec_zone_t *z,
                        unsigned ki, uint32_t now, const uint8_t *lowner,
                        uint16_t type, uint32_t ttl, uint16_t count,
                        const uint8_t *rdata, size_t rdlen, uint8_t *out,
                        unsigned *what)
{
	const dnssec_key_t *k = z->keys[ki];
	uint32_t start, inc, exp;
	dnssec_window(now, &start, &inc, &exp);
	size_t kl = t->cache ? pick_key(t->pick, z, exp, inc, lowner, type, ttl,
	                                rdata, rdlen) : 0;
	if (!kl)
		return dnssec_rrsig(t, z, ki, now, lowner, type, ttl, count, rdata,
		                    out, what);
	uint64_t id = dnssec_key_id(k);
	uint64_t h = sigcache_hash(t->pick, kl, id);
	size_t head = dnssec_rrsig_head(out, type, (uint8_t)dnssec_key_alg(k),
	                                (uint8_t)dnssec_labels(lowner), ttl, exp,
	                                inc, dnssec_key_tag(k), z->apex);
	size_t sl = sigcache_get(t->cache, h, id, t->pick, kl, out + head);
	if (sl) {
		*what = DNSSEC_HIT;
		return head + sl;
	}
	/* The content-keyed path: the same records in another order, or
	 * reached by another pick, find their signature there; else one is
	 * made.  It writes the same head. */
	size_t n = dnssec_rrsig(t, z, ki, now, lowner, type, ttl, count, rdata,
	                        out, what);
	if (n > head && sigcache_put(t->cache, h, id, t->pick, kl, out + head,
	                             n - head))
		*what |= DNSSEC_EVICTED;
	return n;
}
