/* SPDX-License-Identifier: MIT */
/* EDNS(0) (RFC 6891): the OPT record of a query, parsed in place, and the
 * OPT record of its response, with NSID (RFC 5001) and Client Subnet
 * (RFC 7871), and the COOKIE option (RFC 7873) carried through: dns/cookie.c
 * decides what it means.  Pure functions: no allocation, no global
 * state. */
#ifndef GSLB_EDNS_H
#define GSLB_EDNS_H

#include <stddef.h>
#include <stdint.h>

enum {
	EDNS_OPT_NSID = 3,
	EDNS_OPT_ECS = 8,
	EDNS_OPT_COOKIE = 10,
};

/** What a query's OPT record said. */
typedef struct edns {
	uint8_t present;       /* the query had an OPT record */
	uint8_t version;       /* EDNS version (only 0 is served) */
	uint8_t do_bit;        /* DNSSEC OK, echoed (RFC 3225) */
	uint8_t nsid;          /* NSID requested */
	uint16_t payload;      /* advertised UDP size, raised to 512 */
	uint8_t ecs;           /* a valid Client Subnet option was present */
	uint8_t ecs_source;    /* SOURCE PREFIX-LENGTH */
	uint16_t ecs_family;   /* 1 = IPv4, 2 = IPv6 */
	uint8_t ecs_addr[16];  /* address, zero beyond the source prefix */
	uint8_t cookie_bad;    /* a COOKIE option of a length other than 8 or
	                          16..40 (RFC 7873 §5.2.2) */
	uint8_t cookie_len;    /* the first COOKIE option's length, 0: none;
	                          query.c puts the reply's there (24 bytes) */
	uint8_t cookie[40];    /* its content */
} edns_t;

/** Parses the OPT RR whose CLASS field starts at @p (after the owner and
 * TYPE), @len bytes being available.  Fills @e and returns the number of
 * bytes the RR used after the TYPE field, or -1 when the record or one of
 * its options is malformed (the query then gets FORMERR).  A Client Subnet
 * option is validated per RFC 7871 §6: known family, source prefix within
 * the family's length, address exactly ceil(source/8) bytes with no bits
 * set beyond the prefix, and scope 0.  A COOKIE option is copied (the
 * first one; later ones are ignored) or, of a wrong length, flagged in
 * cookie_bad for the caller, which answers FORMERR when it serves
 * cookies. */
int edns_parse(const uint8_t *p, size_t len, edns_t *e);

/** Size of the OPT RR that edns_write() will produce for @e. */
size_t edns_size(const edns_t *e, size_t nsid_len);

/** Writes the response OPT RR at @out: our @payload, extended RCODE bits
 * @ext_rcode (RCODE >> 4), DO echoed, NSID @nsid (when requested and
 * @nsid_len > 0), ECS echoed with @scope and the COOKIE option of @e
 * (cookie_len > 0).  Returns bytes written;
 * @out must have edns_size() bytes. */
size_t edns_write(uint8_t *out, const edns_t *e, uint16_t payload,
                  uint8_t ext_rcode, const uint8_t *nsid, size_t nsid_len,
                  uint8_t scope);

#endif
