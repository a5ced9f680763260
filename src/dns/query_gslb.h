/* SPDX-License-Identifier: MIT */
/* The GSLB side of query_process() (dns/query.c only): a name looked up
 * as a service and its answer written.  Nothing here allocates. */
#ifndef GSLB_QUERY_GSLB_H
#define GSLB_QUERY_GSLB_H

#include "dns/wire.h"
#include "dnssec/dnssec.h"
#include "gslb/gslb.h"

/** Looks @name (lowercase wire) up as a GSLB service for @qtype.
 * Returns 1 and fills @g when it is one, 0 when it is not, -1 when the
 * weight store cannot be read (the query then gets SERVFAIL). */
int qg_find(wbuf_t *w, const uint8_t *name, size_t len, uint16_t qtype,
            gslb_result_t *g);

/** Writes the answer for GSLB service @name from @g (gslb_resolve()).
 * Address nodes contribute their records of the asked type; a CNAME node
 * picked first answers with its CNAME alone (RFC 7871 §7.2.1).  Every
 * response for the name, NODATA and truncated ones included, carries
 * the scope and TTL that gslb_resolve() decided (RFC 7871 §7.4).  With
 * @sz (a signed zone, DO set) the RRset written gets its RRSIGs, and a
 * NODATA its compact denial, which keeps the scope: whether the row has
 * a node of the asked family depends on the client too.  @lowner: the
 * lowercase name the records are owned by. */
int qg_answer(wbuf_t *w, const zone_t *z, const dnssec_zone_t *sz,
              const uint8_t *owner, const uint8_t *lowner,
              const gslb_result_t *g, uint16_t qtype);

#endif
