/* SPDX-License-Identifier: MIT */
/* Online signing as the query path uses it: the `dnssec:` section, the
 * signing keys of every signed zone (loaded from the store's metadata
 * and the keystore's PEM files with every snapshot build, so a start or
 * a reload with a bad key fails, naming the file, and never serves an
 * answer that cannot validate), and each query thread's signer with its
 * signature cache.
 *
 * Thread safety: a dnssec_set_t is immutable once loaded; it hangs off
 * the snapshot and is freed with it after a grace period.  A
 * dnssec_thread_t belongs to one query thread. */
#ifndef GSLB_DNSSEC_H
#define GSLB_DNSSEC_H

#include <stddef.h>
#include <stdint.h>

#include "common/conf.h"
#include "dnssec/key.h"
#include "store/weightdb.h"

/** The `dnssec:` section. */
typedef struct dnssec_conf {
	char *keystore;            /* keystore: the directory of the PEM
	                              files (resolved); NULL: no section */
	unsigned cache_entries;    /* signature-cache: entries per query
	                              thread (a restart applies it) */
	unsigned dnskey_ttl;       /* dnskey-ttl: TTL of DNSKEY RRsets */
	/* Rollovers (dnssec/roll.h), all in seconds; a lifetime of 0 never
	 * rolls that role's keys. */
	unsigned zsk_lifetime, ksk_lifetime, csk_lifetime;
	unsigned publish_safety;   /* margin after the DNSKEY TTL */
	unsigned retire_safety;    /* margin after the zone's TTLs, DS TTL */
	unsigned max_zone_ttl;     /* the largest TTL the zone's answers carry */
	unsigned ds_check_interval;/* between two DS queries to the parent */
	char **parents;            /* parent-servers: "ADDR" or "ADDR@PORT";
	                              none: the resolvers of resolv.conf */
	unsigned nparents;
} dnssec_conf_t;

/** Reads the `dnssec:` section of @c into @o.  Returns 0, or -1 with
 * "FILE:LINE: reason" in @err. */
int dnssec_conf_load(const conf_t *c, dnssec_conf_t *o, char *err,
                     size_t errlen);
/** Frees what dnssec_conf_load() allocated in @o. */
void dnssec_conf_clear(dnssec_conf_t *o);

/** The daemon's open store, which dnssec_set_load() reads: set once at
 * start (NULL: none; then no zone is signed). */
void dnssec_use_store(weightdb_t *db);

/** Whether the store's signing keys or zones changed since the last
 * dnssec_set_load() (one read of the store's "dnssecgen" counter): the
 * daemon then reloads, so that `gslbctl dnssec` takes effect within a
 * second, as the weight table's changes do.  Main thread only. */
int dnssec_store_changed(void);

/* Keys one zone signs with; more are refused at load. */
#define DNSSEC_ZONE_KEYS 4

/* What a key signs, by its role: a KSK the key set (DNSKEY, CDS and
 * CDNSKEY), a ZSK everything else, a CSK both. */
enum { DNSSEC_USE_KEYSET = 1, DNSSEC_USE_ZONE = 2 };

/** The DNSSEC_USE_* bits of role @role ("csk", "ksk", "zsk"), or 0. */
unsigned dnssec_role_use(const char *role);

/** The bit of DNSSEC_USE_* whose keys sign an RRset of @type. */
static inline unsigned dnssec_type_use(uint16_t type)
{
	return type == 48 || type == 59 || type == 60 ? DNSSEC_USE_KEYSET :
	       DNSSEC_USE_ZONE;
}

/** A signed zone.  Exposed for the query path, which reads it on every
 * signed answer. */
typedef struct dnssec_zone {
	uint8_t apex[256];         /* lowercase wire name */
	size_t apex_len;
	unsigned nkeys;            /* the keys that sign (active) */
	dnssec_key_t *keys[DNSSEC_ZONE_KEYS];
	uint8_t use[DNSSEC_ZONE_KEYS]; /* DNSSEC_USE_* of each */
	/* The DNSKEY RRset (active and published keys) in the zone's RRset
	 * form: each record a 16-bit length and its rdata. */
	uint16_t dnskey_count;
	uint32_t dnskey_ttl;
	uint8_t *dnskey_rdata;
	size_t dnskey_size;
	/* CDS (digest type 2) and CDNSKEY of the keys the parent is to have
	 * a DS of (RFC 7344, while a KSK or CSK rolls), the same form;
	 * count 0: none published. */
	uint16_t cds_count;
	uint8_t *cds_rdata, *cdnskey_rdata;
	size_t cds_size, cdnskey_size;
	/* Cluster mode: active keys whose private half is not in this
	 * instance's keystore (yet); while any is, the zone's answers to
	 * DO queries are SERVFAIL (qs_zone()). */
	unsigned missing;
} dnssec_zone_t;

typedef struct dnssec_set {
	dnssec_zone_t *zones;
	unsigned nzones;
} dnssec_set_t;

/** Loads the keys of every zone of @c that the store has signing
 * enabled for.  *@out is NULL when no zone is signed.  Returns 0, or -1
 * with the reason (the zone, the key, the file) in @err: signing
 * enabled without a keystore, a zone with no active key, a missing,
 * unreadable or loosely permitted key file, a key of another algorithm
 * than its record says, a key tag that does not match. */
int dnssec_set_load(const conf_t *c, dnssec_set_t **out, char *err,
                    size_t errlen);
void dnssec_set_free(dnssec_set_t *s);

/** The active keys of the last set loaded whose key file was missing
 * (cluster mode; for /metrics).  Any thread. */
unsigned dnssec_keys_missing(void);

/** The signed zone of apex @apex (lowercase wire), or NULL. */
static inline const dnssec_zone_t *dnssec_zone_find(const dnssec_set_t *s,
                                                    const uint8_t *apex,
                                                    size_t apex_len)
{
	for (unsigned i = 0; s && i < s->nzones; i++)
		if (s->zones[i].apex_len == apex_len &&
		    __builtin_memcmp(s->zones[i].apex, apex, apex_len) == 0)
			return &s->zones[i];
	return NULL;
}

/* A query thread's signer. */
typedef struct dnssec_thread dnssec_thread_t;

/** A signer with a cache of @cache_entries signatures (0: no cache).
 * Allocates everything it will use. */
dnssec_thread_t *dnssec_thread_new(unsigned cache_entries);
void dnssec_thread_free(dnssec_thread_t *t);

/* What dnssec_rrsig() did (bits of its *@what). */
enum { DNSSEC_HIT = 1, DNSSEC_MADE = 2, DNSSEC_EVICTED = 4 };

/* RRSIG rdata: the head (18 bytes and the signer) and the signature. */
#define DNSSEC_RRSIG_MAX (18 + 255 + DNSSEC_SIG_MAX)

/** Writes into @out (DNSSEC_RRSIG_MAX bytes) the RRSIG rdata of the RRset
 * (@lowner lowercase wire, @type, @ttl, @count records in the zone's
 * RRset form at @rdata) by key @ki of @z, for the window of @now.  A
 * signature of the same bytes by the same key in the cache is reused;
 * else one is made (OpenSSL allocates then) and kept.  Returns the rdata
 * length, or 0 when the RRset is too large to sign or the library
 * failed (the query is then answered SERVFAIL). */
size_t dnssec_rrsig(dnssec_thread_t *t, const dnssec_zone_t *z, unsigned ki,
                    uint32_t now, const uint8_t *lowner, uint16_t type,
                    uint32_t ttl, uint16_t count, const uint8_t *rdata,
                    uint8_t *out, unsigned *what);

/** dnssec_rrsig() for an RRset of @rdlen bytes at @rdata whose records
 * were just put together, a GSLB answer's: its cache key is what the
 * signed data is made of (key, window, signer, owner, type, TTL and the
 * records, addresses in byte order), not the canonical form, which is
 * only made on a miss.  Falls back to dnssec_rrsig() when the key does not fit an
 * entry or there is no cache. */
size_t dnssec_rrsig_set(dnssec_thread_t *t, const dnssec_zone_t *z,
                        unsigned ki, uint32_t now, const uint8_t *lowner,
                        uint16_t type, uint32_t ttl, uint16_t count,
                        const uint8_t *rdata, size_t rdlen, uint8_t *out,
                        unsigned *what);

/** The entries @t's cache holds now (for the metrics). */
unsigned dnssec_thread_cached(const dnssec_thread_t *t);

#endif
