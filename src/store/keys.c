/* SPDX-License-Identifier: MIT */
/* Key codecs: row keys ("service|region|isp"), audit ids and history
 * keys, the only places that know how the store's keys are laid out. */
#include "store/keys.h"
#include "store/weightdb_int.h"
#include "common/util.h"

#include <string.h>

size_t wdb_row_keyn(char *buf, size_t size, const char *svc, size_t svclen,
                    const char *region, const char *isp)
{
	size_t rl = strlen(region), il = strlen(isp);
	size_t n = svclen + rl + il + 2;
	if (n + 1 > size) {
		if (size)
			buf[0] = 0;
		return 0;
	}
	memcpy(buf, svc, svclen);
	buf[svclen] = WDB_KEY_SEP;
	memcpy(buf + svclen + 1, region, rl);
	buf[svclen + 1 + rl] = WDB_KEY_SEP;
	memcpy(buf + svclen + 2 + rl, isp, il);
	buf[n] = 0;
	return n;
}

const char *wdb_row_key(char *buf, size_t size, const char *svc,
                        const char *region, const char *isp)
{
	wdb_row_keyn(buf, size, svc, strlen(svc), region, isp);
	return buf;
}

size_t wdb_row_prefix(char *buf, size_t size, const char *svc)
{
	size_t n = strlen(svc);
	if (n + 2 > size) {
		if (size)
			buf[0] = 0;
		return 0;
	}
	memcpy(buf, svc, n);
	buf[n] = WDB_KEY_SEP;
	buf[n + 1] = 0;
	return n + 1;
}

int wdb_row_area(const char *key, char *region, char *isp, size_t size)
{
	wdb_row_parts_t p;
	if (wdb_row_split(key, strlen(key), &p))
		return -1;
	snprintf(region, size, "%.*s", (int)p.region_len, p.region);
	snprintf(isp, size, "%.*s", (int)p.isp_len, p.isp);
	return 0;
}

int wdb_row_split(const char *key, size_t len, wdb_row_parts_t *out)
{
	memset(out, 0, sizeof(*out));
	out->svc = key;
	const char *bar = memchr(key, WDB_KEY_SEP, len);
	if (!bar) {
		out->svc_len = len;
		return -1;
	}
	out->svc_len = (size_t)(bar - key);
	const char *reg = bar + 1, *end = key + len;
	const char *bar2 = memchr(reg, WDB_KEY_SEP, (size_t)(end - reg));
	if (!bar2)
		return -1;
	out->region = reg;
	out->region_len = (size_t)(bar2 - reg);
	out->isp = bar2 + 1;
	out->isp_len = (size_t)(end - out->isp);
	return 0;
}

static int is_any(const char *s, size_t len)
{
	return len == 1 && s[0] == '*';
}

wdb_row_kind_t wdb_row_kind(const wdb_row_parts_t *p)
{
	int any_reg = is_any(p->region, p->region_len);
	int any_isp = is_any(p->isp, p->isp_len);
	return any_reg ? (any_isp ? WDB_ROW_DEFAULT : WDB_ROW_ISP)
	               : (any_isp ? WDB_ROW_REGION : WDB_ROW_REGION_ISP);
}

/* Audit ids ------------------------------------------------------------ */

/* Big-endian, so that LMDB's byte order is the ids' order and appending
 * (MDB_APPEND) stays valid.  Ids are given in commit order, so the audit
 * log is in time order too and trimming deletes from its front. */
void wdb__id_key(uint8_t kb[8], uint64_t id)
{
	wr32(kb, (uint32_t)(id >> 32));
	wr32(kb + 4, (uint32_t)id);
}

uint64_t wdb__id_of(const uint8_t kb[8])
{
	return (uint64_t)rd32(kb) << 32 | rd32(kb + 4);
}

/* History: "node|" + big-endian time (one node's samples in time order)
 * and the time index, big-endian time + "node" (all samples in time
 * order, for trimming from the front). ------------------------------ */

size_t wdb__history_key(uint8_t k[WDB_HISTORY_KEY_MAX], const char *node,
                        uint32_t time)
{
	size_t n = strlen(node);
	if (n > 200)
		n = 200;
	memcpy(k, node, n);
	k[n] = WDB_KEY_SEP;
	wr32(k + n + 1, time);
	return n + 5;
}

size_t wdb__histtime_key(uint8_t k[WDB_HISTORY_KEY_MAX], const char *node,
                         uint32_t time)
{
	size_t n = strlen(node);
	if (n > 200)
		n = 200;
	wr32(k, time);
	memcpy(k + 4, node, n);
	return n + 4;
}
