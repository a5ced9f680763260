/* SPDX-License-Identifier: MIT */
/* Zones: RFC 1035 master files parsed with ldns into an immutable lookup
 * structure with wire-format RRsets, ready to be copied into answers.
 *
 * A zone_t never changes after zone_load() returns; any number of worker
 * threads may read it at once.  Names in the structure are lowercase. */
#ifndef GSLB_ZONE_H
#define GSLB_ZONE_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

enum {
	RR_A = 1, RR_NS = 2, RR_CNAME = 5, RR_SOA = 6, RR_PTR = 12,
	RR_MX = 15, RR_TXT = 16, RR_AAAA = 28, RR_SRV = 33, RR_DNAME = 39,
	RR_OPT = 41, RR_DS = 43, RR_RRSIG = 46, RR_NSEC = 47, RR_DNSKEY = 48,
	RR_NSEC3 = 50, RR_CDS = 59, RR_CDNSKEY = 60, RR_TKEY = 249, RR_TSIG = 250, RR_IXFR = 251,
	RR_AXFR = 252, RR_MAILB = 253, RR_MAILA = 254, RR_ANY = 255,
};

typedef struct znode znode_t;

/** One RRset: @count RRs stored back to back in @rdata as a 16-bit
 * length followed by uncompressed wire rdata. */
typedef struct zrrset {
	uint16_t type;
	uint16_t count;
	uint32_t ttl;
	uint32_t size;          /* bytes in rdata */
	uint8_t *rdata;
	const znode_t **targets;/* NS, MX, SRV: in-zone target of each RR or
	                           NULL, for additional-section addresses */
} zrrset_t;

enum {
	ZNODE_APEX = 1,         /* the zone's apex */
	ZNODE_DELEG = 2,        /* NS below the apex: a zone cut */
	ZNODE_WILDCARD = 4,     /* has a "*" child */
	ZNODE_CNAME = 8,        /* holds a CNAME (and nothing else) */
};

struct znode {
	const uint8_t *name;    /* lowercase wire name */
	uint32_t hash;
	uint8_t namelen;
	uint8_t flags;
	uint16_t nrrsets;       /* 0: an empty non-terminal */
	zrrset_t *rrsets;
	znode_t *next;          /* hash chain */
};

typedef struct zone {
	uint8_t apex[256];      /* lowercase wire name */
	size_t apex_len;        /* its length in bytes */
	unsigned apex_labels;
	const znode_t *apex_node;
	const zrrset_t *soa;
	uint32_t neg_ttl;       /* min(SOA TTL, SOA MINIMUM), RFC 2308 §5 */
	uint32_t serial;
	int64_t loaded;         /* unix time of zone_load() */
	znode_t **table;
	uint32_t mask;
	size_t nnodes;
	char *file;
	unsigned refs;          /* snapshots holding it (main thread only) */
} zone_t;

/** Loads the zone @apex (wire) from master file @file.  Returns the zone
 * or NULL with "FILE:LINE: reason" in @err. */
zone_t *zone_load(const uint8_t *apex, const char *file, char *err,
                  size_t errlen);

/** Finds the node of lowercase wire name @name (length @len, hash @h). */
const znode_t *zone_find(const zone_t *z, const uint8_t *name, size_t len,
                         uint32_t h);

/** Finds the RRset of @type at @node, or NULL. */
static inline const zrrset_t *znode_rrset(const znode_t *n, uint16_t type)
{
	for (uint16_t i = 0; i < n->nrrsets; i++)
		if (n->rrsets[i].type == type)
			return &n->rrsets[i];
	return NULL;
}

/** Whether static data of @z answers lowercase wire name @name, which
 * a GSLB service of that name would then never do (query_process()
 * answers a service only where the zone has no data of its own): the
 * name holds records, or lies at or below a delegation.  Writes why to
 * @why.  Returns 1 or 0. */
int zone_claims(const zone_t *z, const uint8_t *name, char *why, size_t whylen);

void zone_free(zone_t *z);

#endif
