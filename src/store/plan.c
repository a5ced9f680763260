/* SPDX-License-Identifier: MIT */
/* Answer plans: encoding (with the usability rules) and decoding. */
#include "store/plan.h"
#include "store/keys.h"
#include "store/weightdb.h"
#include "common/hash.h"
#include "common/util.h"

#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t plan_id_hash(const char *id, size_t len)
{
	return hash_fnv32(id, len);
}

/* Whether reason @why may go with usable flag @usable. */
static int why_valid(uint8_t why, int usable)
{
	unsigned d = why & PLAN_WHY_MASK;
	if (d >= PLAN_WHY_COUNT)
		return 0;
	if (d == PLAN_WHY_NONE)
		return 1;
	return usable == (d == PLAN_WHY_USABLE || d == PLAN_WHY_ADMIN_UP);
}

int plan_decode(const uint8_t *d, size_t len, plan_t *p)
{
	if (len < 4 || d[0] < 1 || d[0] > PLAN_VERSION || d[1] > PLAN_MAX_NODES)
		return -1;
	/* Version 1 nodes lack the reason byte, versions 1 and 2 the
	 * spill (see plan.h). */
	size_t hdr = d[0] == 1 ? 16 : 17;
	size_t o = d[0] >= 3 ? 6 : 4;
	if (len < o)
		return -1;
	p->n = d[1];
	unsigned rel = (unsigned)d[2] << 8 | d[3];
	p->release_slot = 0;
	p->release_bp = (uint16_t)(rel & ~PLAN_HAS_RELEASE);
	p->spill_bp = d[0] >= 3 ? (uint16_t)((unsigned)d[4] << 8 | d[5]) : 0;
	if ((!(rel & PLAN_HAS_RELEASE) && rel) || p->release_bp > PLAN_RELEASE_ALL ||
	    p->spill_bp > PLAN_RELEASE_ALL)
		return -1;
	for (unsigned i = 0; i < p->n; i++) {
		plan_node_t *n = &p->node[i];
		if (o + hdr > len)
			return -1;
		n->weight = rd32(d + o);
		n->idhash = rd32(d + o + 4);
		n->flags = d[o + 8];
		n->n4 = d[o + 9];
		n->n6 = d[o + 10];
		n->cname_len = d[o + 11];
		n->short_until = rd32(d + o + 12);
		n->why = hdr == 17 ? d[o + 16] : PLAN_WHY_NONE;
		if (!why_valid(n->why, (n->flags & PLAN_USABLE) != 0))
			return -1;
		o += hdr;
		size_t need = (size_t)n->n4 * 4 + (size_t)n->n6 * 16 + n->cname_len + 1;
		if (o + need > len)
			return -1;
		n->a4 = d + o;
		o += (size_t)n->n4 * 4;
		n->a6 = d + o;
		o += (size_t)n->n6 * 16;
		n->cname = d + o;
		if (n->cname_len && dname_len(n->cname, n->cname_len) != n->cname_len)
			return -1;
		o += n->cname_len;
		n->id_len = d[o++];
		if (o + n->id_len > len)
			return -1;
		n->id = (const char *)d + o;
		o += n->id_len;
	}
	if (o != len)
		return -1;
	if (rel & PLAN_HAS_RELEASE) {
		/* Exactly one release node. */
		for (unsigned i = 0; i < p->n; i++)
			if (p->node[i].flags & PLAN_RELEASE) {
				if (p->release_slot)
					return -1;
				p->release_slot = (uint8_t)(i + 1);
			}
		if (!p->release_slot)
			return -1;
	}
	return 0;
}

static void put32(uint8_t *p, uint32_t v) { wr32(p, v); }

json_t *plan_row_weights(json_t *row, int dynamic)
{
	json_t *w = json_object_get(row, "weights");
	json_t *s = json_object_get(json_object_get(row, "steer"), "weights");
	if (!dynamic || !json_is_object(s) || json_object_size(s) != json_object_size(w))
		return w;
	const char *id;
	json_t *v;
	/* Shares for other nodes (the operator changed the row since):
	 * the operator's weights until the engine runs again. */
	json_object_foreach(w, id, v) {
		json_t *sv = json_object_get(s, id);
		if (!json_is_integer(sv) || json_integer_value(sv) < 0)
			return w;
	}
	return s;
}

int plan_release_key(json_t *rel, const char *key, json_t *weights,
                     const char **node, uint32_t *bp)
{
	char region[WDB_NAME_MAX + 1], isp[WDB_NAME_MAX + 1];
	return !wdb_row_area(key, region, isp, sizeof(region)) &&
	       plan_release_row(rel, region, isp, weights, node, bp);
}

int plan_release_row(json_t *rel, const char *region, const char *isp,
                     json_t *weights, const char **node, uint32_t *bp)
{
	const char *id = json_string_value(json_object_get(rel, "node"));
	const char *st = json_string_value(json_object_get(rel, "state"));
	const char *rr = json_string_value(json_object_get(rel, "region"));
	const char *ri = json_string_value(json_object_get(rel, "isp"));
	if (!id || !st || strcmp(st, "completed") == 0 || !json_object_get(weights, id) ||
	    (rr && strcmp(rr, region) != 0) || (ri && strcmp(ri, isp) != 0))
		return 0;
	/* S4-10: the share in force, in basis points of the row's clients;
	 * a rolled-back or aborted release holds 0 (the node answers
	 * nobody). */
	double pct = json_number_value(json_object_get(rel, "percent"));
	*node = id;
	*bp = pct <= 0 ? 0 : pct >= 100 ? PLAN_RELEASE_ALL : (uint32_t)(pct * 100 + 0.5);
	return 1;
}

/* Scales *@w by the percentage @pct when it is an integer; returns
 * whether that lowered it. */
static int scale(uint32_t *w, json_t *pct)
{
	if (!json_is_integer(pct))
		return 0;
	uint32_t was = *w;
	*w = (uint32_t)((uint64_t)*w * (uint64_t)json_integer_value(pct) / 100);
	return *w < was;
}

/* Whether @node may be handed out (PLAN_WHY_USABLE or PLAN_WHY_ADMIN_UP,
 * with the PLAN_WHY_* bits of what scaled it) or why not, and its weight
 * after health and cutover scaling.  These are the only usability rules:
 * workers, status and explain read the result from the plan.  The admin
 * state overrides health: "up" forces the node in, "down" and "drain"
 * take it out (S0-11: drained nodes leave the answers at once), "auto"
 * lets the health decision rule.  A standby node serves only once
 * promoted (S0-9). */
static uint8_t node_usable(json_t *node, uint32_t *w, int shadow)
{
	const char *admin = json_string_value(json_object_get(node, "admin"));
	const char *pool = json_string_value(json_object_get(node, "pool"));
	/* S2-9: a service in shadow mode ignores health and cutover
	 * decisions; the health thread still scores, decides and logs. */
	json_t *h = shadow ? NULL : json_object_get(node, "health");
	uint8_t mod = 0;
	if (admin && strcmp(admin, "down") == 0)
		return PLAN_WHY_ADMIN_DOWN;
	if (admin && strcmp(admin, "drain") == 0)
		return PLAN_WHY_ADMIN_DRAIN;
	if (admin && strcmp(admin, "up") == 0)
		return *w > 0 ? PLAN_WHY_ADMIN_UP : PLAN_WHY_WEIGHT0;
	if (scale(w, json_object_get(h, "effective_weight_pct")))
		mod |= PLAN_WHY_DERATED;
	/* Cutover pre-derating (S0-3) scales on top of health. */
	if (scale(w, json_object_get(h, "cutover_pct")))
		mod |= PLAN_WHY_CUTOVER;
	if (pool && strcmp(pool, "standby") == 0 &&
	    !json_is_true(json_object_get(h, "promoted"))) {
		/* A standby serves before promotion only while it is being
		 * pre-warmed for a cutover, with that share (S0-4). */
		json_int_t pw = json_integer_value(json_object_get(h, "prewarm_pct"));
		if (pw <= 0)
			return PLAN_WHY_STANDBY;
		*w = (uint32_t)((uint64_t)*w * (uint64_t)pw / 100);
		mod |= PLAN_WHY_PREWARM;
	}
	if (json_is_false(json_object_get(h, "usable")))
		return PLAN_WHY_UNHEALTHY;
	return *w > 0 ? (uint8_t)(PLAN_WHY_USABLE | mod) : PLAN_WHY_WEIGHT0;
}

/* S1-6, S4-3: see plan.h.  The same water-filling as the steering
 * engine's ceilings (steer.c, cap_targets()), by operator weight since a
 * static row has no scores, and with a spill where the engine runs every
 * node equally over: a static row has the next level of its chain. */
uint32_t plan_capacity(unsigned n, uint32_t *w, const uint8_t *usable,
                       const double *cap, double demand, double headroom,
                       uint8_t *capped)
{
	double T[PLAN_MAX_NODES], total = 0, spill = 0;
	int held = 0;
	if (demand <= 0 || n > PLAN_MAX_NODES)
		return 0;
	for (unsigned i = 0; i < n; i++) {
		capped[i] = 0;
		total += usable[i] ? w[i] : 0;
	}
	if (total <= 0)
		return 0;
	for (unsigned i = 0; i < n; i++)
		T[i] = usable[i] ? w[i] / total : 0;
	for (unsigned round = 0; round <= n; round++) {
		double excess = 0, room = 0;
		for (unsigned i = 0; i < n; i++) {
			if (!usable[i] || capped[i] || cap[i] <= 0)
				continue;
			double c = cap[i] * (100 - headroom) / 100 / demand;
			if (T[i] > c + 1e-12) {
				excess += T[i] - c;
				T[i] = c;
				capped[i] = 1;
				held = 1;
			}
		}
		if (excess <= 0)
			break;
		for (unsigned i = 0; i < n; i++)
			room += usable[i] && !capped[i] ? w[i] : 0;
		if (room <= 0) {
			spill = excess;  /* every usable node is at its ceiling */
			break;
		}
		for (unsigned i = 0; i < n; i++)
			if (usable[i] && !capped[i])
				T[i] += excess * w[i] / room;
	}
	if (!held)
		return 0;
	double served = 0;
	for (unsigned i = 0; i < n; i++)
		served += T[i];
	/* Every ceiling 0: all of the row spills, the weights stay. */
	for (unsigned i = 0; i < n && served > 0; i++)
		if (usable[i])
			w[i] = (uint32_t)lround(T[i] / served * PLAN_RELEASE_ALL);
	long sp = lround(spill * PLAN_RELEASE_ALL);
	return sp <= 0 ? 0 : sp >= PLAN_RELEASE_ALL ? PLAN_RELEASE_ALL : (uint32_t)sp;
}

/* plan_encode()'s last step for a static row with a measured demand
 * (@capj, the row's "capacity"): each usable node's weight in the
 * encoding @b (its node header at @hdr[i]) held within its capacity,
 * the held ones marked, and the spill into the plan header. */
static void encode_capacity(json_t *capj, uint8_t *b, const size_t *hdr,
                            const uint32_t *w0, const uint8_t *usable,
                            const double *cap, unsigned n)
{
	double demand = json_number_value(json_object_get(capj, "demand"));
	double headroom = json_number_value(json_object_get(capj, "headroom"));
	uint32_t w[PLAN_MAX_NODES];
	uint8_t capped[PLAN_MAX_NODES];
	memcpy(w, w0, n * sizeof(*w));
	if (demand <= 0 || headroom < 0 || headroom >= 100)
		return;
	uint32_t spill = plan_capacity(n, w, usable, cap, demand, headroom, capped);
	int held = 0;
	for (unsigned i = 0; i < n; i++) {
		if (!usable[i])
			continue;
		held |= capped[i];
		put32(b + hdr[i], w[i]);
		if (capped[i])
			b[hdr[i] + 16] |= PLAN_WHY_CAPACITY;
	}
	if (!held)
		return;
	b[4] = (uint8_t)(spill >> 8);
	b[5] = (uint8_t)(spill & 0xff);
}

/* The IPv4 then the IPv6 addresses of @node (at most PLAN_MAX_ADDRS of
 * each) into @b at @o; returns the offset after them. */
static size_t encode_addrs(json_t *node, uint8_t *b, size_t o, uint8_t *n4,
                           uint8_t *n6)
{
	size_t i;
	json_t *a;
	*n4 = *n6 = 0;
	json_array_foreach(json_object_get(node, "addrs"), i, a) {
		struct in_addr v4;
		if (inet_pton(AF_INET, json_string_value(a), &v4) == 1 &&
		    *n4 < PLAN_MAX_ADDRS) {
			memcpy(b + o, &v4, 4);
			o += 4;
			(*n4)++;
		}
	}
	json_array_foreach(json_object_get(node, "addrs"), i, a) {
		struct in6_addr v6;
		if (inet_pton(AF_INET6, json_string_value(a), &v6) == 1 &&
		    *n6 < PLAN_MAX_ADDRS) {
			memcpy(b + o, &v6, 16);
			o += 16;
			(*n6)++;
		}
	}
	return o;
}

int plan_encode(json_t *row, json_t *(*node_of)(const char *id, void *arg),
                void *arg, int shadow, uint8_t **out, size_t *outlen,
                char *err, size_t errlen)
{
	json_t *weights = json_object_get(row, "weights");
	json_t *rel = json_object_get(row, "release");
	const char *rel_node = json_string_value(json_object_get(rel, "node"));
	json_int_t rel_bp = json_integer_value(json_object_get(rel, "bp"));
	if (rel_bp < 0 || rel_bp > PLAN_RELEASE_ALL)
		rel_bp = 0;
	int has_rel = 0;
	size_t cap = 6 + json_object_size(weights) * (17 + 8 * 4 + 8 * 16 + 256 + 256);
	uint8_t *b = xmalloc(cap);
	size_t o = 6;
	unsigned n = 0;
	/* Per node, for the capacity step (encode_capacity()). */
	size_t hdrs[PLAN_MAX_NODES];
	uint32_t ws[PLAN_MAX_NODES];
	uint8_t usables[PLAN_MAX_NODES];
	double caps[PLAN_MAX_NODES];
	const char *id;
	json_t *wv;
	if (json_object_size(weights) > PLAN_MAX_NODES) {
		snprintf(err, errlen, "a row holds at most %d nodes", PLAN_MAX_NODES);
		free(b);
		return -1;
	}
	json_object_foreach(weights, id, wv) {
		json_t *node = node_of(id, arg);
		if (!node) {
			snprintf(err, errlen, "unknown node '%s'", id);
			free(b);
			return -1;
		}
		uint32_t w = (uint32_t)json_integer_value(wv);
		uint8_t why = node_usable(node, &w, shadow);
		int usable = (why & PLAN_WHY_MASK) == PLAN_WHY_USABLE ||
		             why == PLAN_WHY_ADMIN_UP;
		uint8_t *hdr = b + o;
		hdrs[n] = o;
		ws[n] = w;
		usables[n] = (uint8_t)usable;
		caps[n] = (double)json_integer_value(json_object_get(node, "capacity"));
		o += 17;
		uint8_t n4, n6;
		o = encode_addrs(node, b, o, &n4, &n6);
		uint8_t cl = 0;
		const char *cname = json_string_value(json_object_get(node, "cname"));
		if (cname && *cname) {
			cl = (uint8_t)dname_from_str(cname, b + o);
			if (!cl) {
				snprintf(err, errlen, "node '%s': bad CNAME target", id);
				free(b);
				return -1;
			}
			o += cl;
		}
		size_t idl = strlen(id);
		b[o++] = (uint8_t)idl;
		memcpy(b + o, id, idl);
		o += idl;
		/* The later of the operator's and the health thread's
		 * short-TTL deadlines (S0-11, S1-8). */
		json_t *su = json_object_get(node, "short_until");
		json_t *hsu = shadow ? NULL :
		              json_object_get(json_object_get(node, "health"), "short_until");
		uint32_t short_until = json_is_integer(su) ?
		                       (uint32_t)json_integer_value(su) : 0;
		if (json_is_integer(hsu) && (uint32_t)json_integer_value(hsu) > short_until)
			short_until = (uint32_t)json_integer_value(hsu);
		put32(hdr, w);
		put32(hdr + 4, plan_id_hash(id, idl));
		int is_rel = rel_node && strcmp(rel_node, id) == 0;
		has_rel |= is_rel;
		hdr[8] = (uint8_t)((usable ? PLAN_USABLE : 0) | (cl ? PLAN_CNAME : 0) |
		                   (is_rel ? PLAN_RELEASE : 0));
		hdr[9] = n4;
		hdr[10] = n6;
		hdr[11] = cl;
		put32(hdr + 12, short_until);
		hdr[16] = why;
		n++;
	}
	b[0] = PLAN_VERSION;
	b[1] = (uint8_t)n;
	/* The release node may be missing from the row: then no release. */
	unsigned rel_hdr = has_rel ? PLAN_HAS_RELEASE | (unsigned)rel_bp : 0;
	b[2] = (uint8_t)(rel_hdr >> 8);
	b[3] = (uint8_t)(rel_hdr & 0xff);
	b[4] = b[5] = 0;
	json_t *capj = json_object_get(row, "capacity");
	if (capj)
		encode_capacity(capj, b, hdrs, ws, usables, caps, n);
	*out = b;
	*outlen = o;
	return 0;
}
