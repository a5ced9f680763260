/* SPDX-License-Identifier: MIT */
/* The wire side of signing, with no keys and no state: validity windows,
 * the RRSIG rdata before its signature, the canonical form of an RRset
 * (RFC 4034 §6) that a signature covers, and NSEC type bitmaps
 * (RFC 4034 §4.1.2).  Pure functions: no allocation, unit-tested. */
#ifndef GSLB_DNSSEC_RRSIG_H
#define GSLB_DNSSEC_RRSIG_H

#include <stddef.h>
#include <stdint.h>

enum {
	DNSSEC_T_RRSIG = 46, DNSSEC_T_NSEC = 47, DNSSEC_T_DNSKEY = 48,
	DNSSEC_T_NXNAME = 128,         /* RFC 9824 §3: the name does not exist */
};

/* Validity windows.  Signatures are made for fixed weeks: the one a
 * time falls in starts at a multiple of DNSSEC_WINDOW (unix time), and
 * its signatures are valid from one window before that start (clock
 * skew of validators, and overlap with the previous window's
 * signatures still in caches) to two windows after it.  So every
 * signature served has at least one week left, an RRset signed twice
 * in one week gets the same RRSIG fields (Ed25519: the same bytes),
 * and no validity period depends on when the process started. */
#define DNSSEC_WINDOW (7u * 86400u)

/** The window of unix time @now: its start, and the inception and
 * expiration of its signatures. */
void dnssec_window(uint32_t now, uint32_t *start, uint32_t *inception,
                   uint32_t *expiration);

/** The RRSIG Labels field of owner @name (wire): its labels, not the
 * root, and not a leading "*" (RFC 4034 §3.1.3). */
unsigned dnssec_labels(const uint8_t *name);

/** Writes the RRSIG rdata up to the signature (RFC 4034 §3.1) into @out
 * (18 + the signer's length bytes): covered @type, @alg, @labels,
 * original @ttl, @expiration, @inception, @tag and @signer (lowercase
 * wire, uncompressed).  Returns the bytes written. */
size_t dnssec_rrsig_head(uint8_t *out, uint16_t type, uint8_t alg,
                         uint8_t labels, uint32_t ttl, uint32_t expiration,
                         uint32_t inception, uint16_t tag,
                         const uint8_t *signer);

/* At most this many records in one RRset to sign (a larger one is an
 * error): the order of the records is sorted in a table of this size. */
#define DNSSEC_RRSET_MAX 256

/** Appends to @out (@cap bytes, @used of them in use) the RRset as the
 * signature covers it (RFC 4034 §3.1.8.1, §6.2, §6.3): each record as
 * owner @lowner (lowercase wire), @type, class IN, @ttl, RDLENGTH and
 * rdata, the names in the rdata of the types RFC 4034 §6.2 lists (as
 * RFC 6840 §5.1 left it) lowercased, the records sorted by rdata and
 * duplicates dropped.  @rdata holds @count records, each a 16-bit
 * length and the rdata (the zone's RRset form); @scratch
 * (@scratchcap bytes) holds the lowercased copies while sorting.
 * Returns the new number of bytes used, or 0 when it does not fit. */
size_t dnssec_canon_rrset(uint8_t *out, size_t cap, size_t used,
                          const uint8_t *lowner, uint16_t type, uint32_t ttl,
                          uint16_t count, const uint8_t *rdata,
                          uint8_t *scratch, size_t scratchcap);

/** Writes the NSEC type bitmap (RFC 4034 §4.1.2) of the @n types @types
 * (any order, duplicates allowed) into @out, which must have room for
 * 2 + 32 bytes per window used (34 * 256 at most; 2 windows, 68 bytes,
 * for all the types below 512).  Returns the bytes written. */
size_t dnssec_nsec_bitmap(uint8_t *out, const uint16_t *types, unsigned n);

#endif
