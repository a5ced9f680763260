/* SPDX-License-Identifier: MIT */
/* Answer plans: encoding (with the usability rules) and decoding. */
#include "store/plan.h"
#include "common/hash.h"
#include "common/util.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint32_t plan_id_hash(const char *id, size_t len)
{
	return hash_fnv32(id, len);
}

int plan_decode(const uint8_t *d, size_t len, plan_t *p)
{
	if (len < 4 || d[0] != 1 || d[1] > PLAN_MAX_NODES)
		return -1;
	p->n = d[1];
	size_t o = 4;
	for (unsigned i = 0; i < p->n; i++) {
		plan_node_t *n = &p->node[i];
		if (o + 16 > len)
			return -1;
		n->weight = rd32(d + o);
		n->idhash = rd32(d + o + 4);
		n->flags = d[o + 8];
		n->n4 = d[o + 9];
		n->n6 = d[o + 10];
		n->cname_len = d[o + 11];
		n->short_until = rd32(d + o + 12);
		o += 16;
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
	return o == len ? 0 : -1;
}

static void put32(uint8_t *p, uint32_t v) { wr32(p, v); }

/* Whether @node may be handed out, and its weight after health and
 * cutover scaling.  The admin state overrides health: "up" forces the
 * node in, "down" and "drain" take it out (S0-11: drained nodes leave the
 * answers at once), "auto" lets the health decision rule.  A standby node
 * serves only once promoted (S0-9). */
static int node_usable(json_t *node, uint32_t *w, int shadow)
{
	const char *admin = json_string_value(json_object_get(node, "admin"));
	const char *pool = json_string_value(json_object_get(node, "pool"));
	/* S2-9: a service in shadow mode ignores health and cutover
	 * decisions; the health thread still scores, decides and logs. */
	json_t *h = shadow ? NULL : json_object_get(node, "health");
	if (admin && (strcmp(admin, "down") == 0 || strcmp(admin, "drain") == 0))
		return 0;
	if (admin && strcmp(admin, "up") == 0)
		return *w > 0;
	json_t *pct = json_object_get(h, "effective_weight_pct");
	if (json_is_integer(pct))
		*w = (uint32_t)((uint64_t)*w * (uint64_t)json_integer_value(pct) / 100);
	/* Cutover pre-derating (S0-3) scales on top of health. */
	json_t *cut = json_object_get(h, "cutover_pct");
	if (json_is_integer(cut))
		*w = (uint32_t)((uint64_t)*w * (uint64_t)json_integer_value(cut) / 100);
	if (pool && strcmp(pool, "standby") == 0 &&
	    !json_is_true(json_object_get(h, "promoted"))) {
		/* A standby serves before promotion only while it is being
		 * pre-warmed for a cutover, with that share (S0-4). */
		json_int_t pw = json_integer_value(json_object_get(h, "prewarm_pct"));
		if (pw <= 0)
			return 0;
		*w = (uint32_t)((uint64_t)*w * (uint64_t)pw / 100);
	}
	if (json_is_false(json_object_get(h, "usable")))
		return 0;
	return *w > 0;
}

int plan_encode(json_t *row, json_t *(*node_of)(const char *id, void *arg),
                void *arg, int shadow, uint8_t **out, size_t *outlen,
                char *err, size_t errlen)
{
	json_t *weights = json_object_get(row, "weights");
	size_t cap = 4 + json_object_size(weights) * (16 + 8 * 4 + 8 * 16 + 256 + 256);
	uint8_t *b = xmalloc(cap);
	size_t o = 4;
	unsigned n = 0;
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
		int usable = node_usable(node, &w, shadow);
		uint8_t *hdr = b + o;
		o += 16;
		uint8_t n4 = 0, n6 = 0;
		size_t i;
		json_t *a;
		json_array_foreach(json_object_get(node, "addrs"), i, a) {
			struct in_addr v4;
			if (inet_pton(AF_INET, json_string_value(a), &v4) == 1 &&
			    n4 < PLAN_MAX_ADDRS) {
				memcpy(b + o, &v4, 4);
				o += 4;
				n4++;
			}
		}
		json_array_foreach(json_object_get(node, "addrs"), i, a) {
			struct in6_addr v6;
			if (inet_pton(AF_INET6, json_string_value(a), &v6) == 1 &&
			    n6 < PLAN_MAX_ADDRS) {
				memcpy(b + o, &v6, 16);
				o += 16;
				n6++;
			}
		}
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
		hdr[8] = (uint8_t)((usable ? PLAN_USABLE : 0) | (cl ? PLAN_CNAME : 0));
		hdr[9] = n4;
		hdr[10] = n6;
		hdr[11] = cl;
		put32(hdr + 12, short_until);
		n++;
	}
	b[0] = 1;
	b[1] = (uint8_t)n;
	b[2] = b[3] = 0;
	*out = b;
	*outlen = o;
	return 0;
}
