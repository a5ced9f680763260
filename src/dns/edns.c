/* SPDX-License-Identifier: MIT */
/* EDNS(0) OPT parsing and writing, NSID, Client Subnet and COOKIE. */
#include "dns/edns.h"
#include "common/util.h"

#include <stddef.h>
#include <string.h>

static int parse_ecs(const uint8_t *p, uint16_t len, edns_t *e)
{
	if (e->ecs || len < 4)
		return -1;
	uint16_t family = rd16(p);
	uint8_t source = p[2], scope = p[3];
	unsigned maxbits = family == 1 ? 32 : family == 2 ? 128 : 0;
	if (!maxbits || source > maxbits || scope != 0)
		return -1;
	unsigned nbytes = (source + 7u) / 8u;
	if ((unsigned)len - 4 != nbytes)
		return -1;
	/* RFC 7871 §6: bits beyond SOURCE PREFIX-LENGTH must be zero. */
	if (source % 8 && (p[4 + nbytes - 1] & (0xFFu >> (source % 8))))
		return -1;
	e->ecs = 1;
	e->ecs_family = family;
	e->ecs_source = source;
	memset(e->ecs_addr, 0, sizeof(e->ecs_addr));
	memcpy(e->ecs_addr, p + 4, nbytes);
	return 0;
}

int edns_parse(const uint8_t *p, size_t len, edns_t *e)
{
	/* CLASS(2) TTL(4) RDLEN(2) RDATA */
	if (len < 8)
		return -1;
	memset(e, 0, offsetof(edns_t, cookie)); /* the content is copied */
	e->present = 1;
	e->payload = rd16(p);
	if (e->payload < 512)
		e->payload = 512; /* RFC 6891 §6.2.3 */
	/* TTL field: extended RCODE, VERSION, then the DO bit. */
	e->version = p[3];
	e->do_bit = (p[4] & 0x80) != 0;
	uint16_t rdlen = rd16(p + 6);
	if ((size_t)rdlen + 8 > len)
		return -1;
	const uint8_t *o = p + 8, *end = o + rdlen;
	while (o < end) {
		if (end - o < 4)
			return -1;
		uint16_t code = rd16(o), olen = rd16(o + 2);
		o += 4;
		if (olen > end - o)
			return -1;
		switch (code) {
		case EDNS_OPT_NSID:
			e->nsid = 1; /* the query's NSID payload must be empty; ignore */
			break;
		case EDNS_OPT_ECS:
			if (parse_ecs(o, olen, e))
				return -1;
			break;
		case EDNS_OPT_COOKIE:
			if (e->cookie_len || e->cookie_bad)
				break; /* the first one counts (RFC 7873 §5.2) */
			if (olen == 8 || (olen >= 16 && olen <= 40)) {
				e->cookie_len = (uint8_t)olen;
				memcpy(e->cookie, o, olen);
			} else {
				e->cookie_bad = 1;
			}
			break;
		default:
			break; /* unknown options are ignored (RFC 6891 §6.1.2) */
		}
		o += olen;
	}
	return 8 + rdlen;
}

size_t edns_size(const edns_t *e, size_t nsid_len)
{
	size_t n = 11;
	if (e->nsid && nsid_len)
		n += 4 + nsid_len;
	if (e->ecs)
		n += 8 + (e->ecs_source + 7u) / 8u;
	if (e->cookie_len)
		n += 4 + e->cookie_len;
	return n;
}

size_t edns_write(uint8_t *out, const edns_t *e, uint16_t payload,
                  uint8_t ext_rcode, const uint8_t *nsid, size_t nsid_len,
                  uint8_t scope)
{
	uint8_t *p = out;
	*p++ = 0;                 /* root owner */
	wr16(p, 41), p += 2;
	wr16(p, payload), p += 2;
	p[0] = ext_rcode;
	p[1] = 0;                 /* version 0 */
	p[2] = e->do_bit ? 0x80 : 0;
	p[3] = 0;
	p += 4;
	uint8_t *rdlen = p;
	p += 2;
	if (e->nsid && nsid_len) {
		wr16(p, EDNS_OPT_NSID);
		wr16(p + 2, (uint16_t)nsid_len);
		memcpy(p + 4, nsid, nsid_len);
		p += 4 + nsid_len;
	}
	if (e->ecs) {
		unsigned nbytes = (e->ecs_source + 7u) / 8u;
		wr16(p, EDNS_OPT_ECS);
		wr16(p + 2, (uint16_t)(4 + nbytes));
		wr16(p + 4, e->ecs_family);
		p[6] = e->ecs_source;
		p[7] = scope;
		memcpy(p + 8, e->ecs_addr, nbytes);
		p += 8 + nbytes;
	}
	if (e->cookie_len) {
		wr16(p, EDNS_OPT_COOKIE);
		wr16(p + 2, e->cookie_len);
		memcpy(p + 4, e->cookie, e->cookie_len);
		p += 4 + e->cookie_len;
	}
	wr16(rdlen, (uint16_t)(p - rdlen - 2));
	return (size_t)(p - out);
}
