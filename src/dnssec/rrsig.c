/* SPDX-License-Identifier: MIT */
/* Validity windows, RRSIG heads, canonical RRsets and NSEC bitmaps. */
#include "dnssec/rrsig.h"
#include "common/util.h"

#include <string.h>

void dnssec_window(uint32_t now, uint32_t *start, uint32_t *inception,
                   uint32_t *expiration)
{
	uint32_t s = now - now % DNSSEC_WINDOW;
	*start = s;
	*inception = s - DNSSEC_WINDOW;
	/* RFC 4034 §3.1.5: serial arithmetic, so a wrap in 2106 is fine. */
	*expiration = s + 2 * DNSSEC_WINDOW;
}

unsigned dnssec_labels(const uint8_t *name)
{
	unsigned n = dname_labels(name);
	if (n && name[0] == 1 && name[1] == '*')
		n--;
	return n;
}

size_t dnssec_rrsig_head(uint8_t *out, uint16_t type, uint8_t alg,
                         uint8_t labels, uint32_t ttl, uint32_t expiration,
                         uint32_t inception, uint16_t tag,
                         const uint8_t *signer)
{
	wr16(out, type);
	out[2] = alg;
	out[3] = labels;
	wr32(out + 4, ttl);
	wr32(out + 8, expiration);
	wr32(out + 12, inception);
	wr16(out + 16, tag);
	size_t sl = dname_copy_lower(out + 18, signer);
	return 18 + sl;
}

/* Lowercases the name at @p (uncompressed, within @end) in place;
 * returns its length, or 0 when it runs past @end. */
static size_t lower_name(uint8_t *p, const uint8_t *end)
{
	uint8_t *s = p;
	while (s < end && *s) {
		if (*s > 63 || s + *s + 1 > end)
			return 0;
		for (uint8_t i = 1; i <= *s; i++)
			s[i] = dname_lower[s[i]];
		s += *s + 1;
	}
	if (s >= end)
		return 0;
	return (size_t)(s - p) + 1;
}

/* Lowercases the names in rdata @rd (@len bytes) of @type, in place
 * (RFC 4034 §6.2 item 3, the types with names this server serves). */
static void lower_rdata(uint16_t type, uint8_t *rd, size_t len)
{
	const uint8_t *end = rd + len;
	size_t l;
	switch (type) {
	case 2: case 5: case 12: case 39:      /* NS, CNAME, PTR, DNAME */
		lower_name(rd, end);
		break;
	case 6:                                 /* SOA: MNAME, RNAME */
		if ((l = lower_name(rd, end)))
			lower_name(rd + l, end);
		break;
	case 15:                                /* MX */
		if (len > 2)
			lower_name(rd + 2, end);
		break;
	case 33:                                /* SRV */
		if (len > 6)
			lower_name(rd + 6, end);
		break;
	default:
		break;
	}
}

/* RFC 4034 §6.3: rdata compared as left-justified octet strings, the
 * shorter first when one is a prefix of the other. */
static int rd_cmp(const uint8_t *a, size_t al, const uint8_t *b, size_t bl)
{
	int c = memcmp(a, b, al < bl ? al : bl);
	if (c)
		return c;
	return al < bl ? -1 : al > bl;
}

size_t dnssec_canon_rrset(uint8_t *out, size_t cap, size_t used,
                          const uint8_t *lowner, uint16_t type, uint32_t ttl,
                          uint16_t count, const uint8_t *rdata,
                          uint8_t *scratch, size_t scratchcap)
{
	if (count > DNSSEC_RRSET_MAX)
		return 0;
	uint32_t off[DNSSEC_RRSET_MAX];
	uint16_t len[DNSSEC_RRSET_MAX];
	size_t sp = 0;
	const uint8_t *p = rdata;
	unsigned n = 0;
	for (uint16_t i = 0; i < count; i++) {
		uint16_t l = rd16(p);
		if (sp + l > scratchcap)
			return 0;
		memcpy(scratch + sp, p + 2, l);
		lower_rdata(type, scratch + sp, l);
		/* Insertion sort: RRsets are small, and this needs no
		 * memory of its own. */
		unsigned j = n;
		while (j > 0 && rd_cmp(scratch + off[j - 1], len[j - 1],
		                       scratch + sp, l) > 0) {
			off[j] = off[j - 1];
			len[j] = len[j - 1];
			j--;
		}
		/* RFC 4034 §6.3: duplicates are removed. */
		if (j > 0 && rd_cmp(scratch + off[j - 1], len[j - 1],
		                    scratch + sp, l) == 0) {
			memmove(off + j, off + j + 1, (n - j) * sizeof(*off));
			memmove(len + j, len + j + 1, (n - j) * sizeof(*len));
		} else {
			off[j] = (uint32_t)sp;
			len[j] = l;
			n++;
			sp += l;
		}
		p += 2 + l;
	}
	size_t ol = dname_len(lowner, 255);
	for (unsigned i = 0; i < n; i++) {
		if (used + ol + 10 + len[i] > cap)
			return 0;
		memcpy(out + used, lowner, ol);
		used += ol;
		wr16(out + used, type);
		wr16(out + used + 2, 1);
		wr32(out + used + 4, ttl);
		wr16(out + used + 8, len[i]);
		used += 10;
		memcpy(out + used, scratch + off[i], len[i]);
		used += len[i];
	}
	return used;
}

size_t dnssec_nsec_bitmap(uint8_t *out, const uint16_t *types, unsigned n)
{
	size_t o = 0;
	unsigned top = 0;
	for (unsigned i = 0; i < n; i++)
		if (types[i] >> 8 > top)
			top = types[i] >> 8;
	for (unsigned win = 0; win <= top; win++) {
		uint8_t bits[32] = { 0 };
		int maxb = -1;
		for (unsigned i = 0; i < n; i++) {
			if (types[i] >> 8 != win)
				continue;
			unsigned lo = types[i] & 0xFF;
			bits[lo / 8] |= (uint8_t)(0x80 >> (lo % 8));
			if ((int)(lo / 8) > maxb)
				maxb = (int)(lo / 8);
		}
		if (maxb < 0)
			continue;
		out[o++] = (uint8_t)win;
		out[o++] = (uint8_t)(maxb + 1);
		memcpy(out + o, bits, (size_t)maxb + 1);
		o += (size_t)maxb + 1;
	}
	return o;
}
