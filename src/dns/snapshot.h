/* SPDX-License-Identifier: MIT */
/* The published state: everything a query reads hangs off one immutable
 * snapshot_t.  The main thread builds a new one, swaps the pointer and
 * frees the old one after an RCU grace period (liburcu, QSBR flavour).
 *
 * Readers (workers) must be RCU-online while they hold the pointer from
 * snapshot_get(); see worker.c. */
#ifndef GSLB_SNAPSHOT_H
#define GSLB_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>

#include "common/conf.h"
#include "gslb/geo.h"
#include "dns/zone.h"
#include "dnssec/dnssec.h"

typedef struct snapshot {
	zone_t **zones;           /* as configured; NULL where never loaded */
	size_t nzones;
	zone_t **ztable;          /* by apex hash, open addressing */
	uint32_t zmask;
	uint64_t apex_labels;     /* bit L: a zone's apex has L labels (bit 63:
	                             63 or more), so that only suffixes of
	                             those lengths are hashed and looked up */
	uint8_t identity[256];    /* NSID and CH TXT id.server */
	uint8_t identity_len;
	uint8_t version[256];     /* CH TXT version.bind */
	uint8_t version_len;
	uint16_t udp_max_payload;
	uint8_t max_cname_chain;
	uint64_t generation;      /* increases with every publication */
	geo_t *geo;               /* client location (geoip section) */
	dnssec_set_t *dnssec;     /* the signed zones' keys; NULL: none */
} snapshot_t;

/** Builds a snapshot for @conf, loading every zone.  A zone that fails to
 * load keeps its version from @old (if any) and the error is logged with
 * file and line; @nfailed counts them.  Returns NULL, with the reason in
 * @err, when a zone failed and there is no older version of it (start-up)
 * or when the geoip section cannot be loaded (a reload then keeps the
 * running snapshot whole), or when the keys of a signed zone cannot be
 * loaded (dnssec_set_load(): a reload then keeps the running snapshot,
 * so no answer is ever signed with less than the zone's keys).  A zone reloaded with a serial before its
 * previous one is served and warned about (snapshot_serial_lt()). */
snapshot_t *snapshot_build(const conf_t *conf, const snapshot_t *old,
                           unsigned *nfailed, char *err, size_t errlen);

/** Whether zone serial @a is before @b (RFC 1982 serial arithmetic:
 * 4294967295 is before 1; two serials 2^31 apart are neither). */
int snapshot_serial_lt(uint32_t a, uint32_t b);

/** Finds the zone that @lname (lowercase wire, @labels labels) belongs to:
 * the longest apex that is a suffix.  Returns NULL if none. */
const zone_t *snapshot_find_zone(const snapshot_t *s, const uint8_t *lname,
                                 unsigned labels);

/** Publishes @s as the current snapshot and frees the previous one after
 * a grace period.  Main thread only. */
void snapshot_publish(snapshot_t *s);

/** The current snapshot (RCU-protected: the caller must be online). */
const snapshot_t *snapshot_get(void);

/** Frees @s and the zones that no other snapshot holds. */
void snapshot_free(snapshot_t *s);

#endif
