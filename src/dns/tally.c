/* SPDX-License-Identifier: MIT */
/* The GSLB answer tally: per-thread counts by service, row and node. */
#include "dns/tally.h"
#include "common/hash.h"
#include "common/util.h"

#include <stdio.h>
#include <string.h>

tally_t *tally_new(void)
{
	return xcalloc(1, sizeof(tally_t));
}

/* The row's key fields: the region and ISP it names ("*" for any). */
static void row_fields(const gslb_result_t *g, const char **reg, const char **isp)
{
	int by_reg = g->row == GSLB_ROW_REGION_ISP || g->row == GSLB_ROW_REGION;
	int by_isp = g->row == GSLB_ROW_REGION_ISP || g->row == GSLB_ROW_ISP;
	*reg = by_reg ? g->geo.region : "*";
	*isp = by_isp ? g->geo.isp : "*";
}

static void count(tally_t *t, uint64_t h, const char *svc, size_t len,
                  const gslb_result_t *g, const char *reg, const char *isp,
                  const char *node, size_t nlen)
{
	if (!h)
		h = 1;                    /* 0 marks an empty slot */
	for (unsigned i = 0; i < TALLY_PROBE; i++) {
		tally_entry_t *e = &t->slot[(h + i) & (TALLY_SLOTS - 1)];
		uint64_t k = e->key;      /* the owner's own write: no race */
		if (k == h) {
			__atomic_store_n(&e->count, e->count + 1, __ATOMIC_RELAXED);
			return;
		}
		if (k)
			continue;
		/* A new entry: its strings first, then the key (release). */
		if (len >= sizeof(e->service))
			len = sizeof(e->service) - 1;
		memcpy(e->service, svc, len);
		e->service[len] = 0;
		snprintf(e->region, sizeof(e->region), "%s", reg);
		snprintf(e->isp, sizeof(e->isp), "%s", isp);
		if (nlen >= sizeof(e->node))
			nlen = sizeof(e->node) - 1;
		memcpy(e->node, node, nlen);
		e->node[nlen] = 0;
		e->level = (uint8_t)g->row;
		__atomic_store_n(&e->count, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&e->key, h, __ATOMIC_RELEASE);
		return;
	}
	__atomic_store_n(&t->overflow, t->overflow + 1, __ATOMIC_RELAXED);
}

void tally_add(tally_t *t, const char *svc, size_t len, const gslb_result_t *g)
{
	if (!t)
		return;
	const char *reg, *isp;
	row_fields(g, &reg, &isp);
	/* One hash of the service and row, then one step per node: the
	 * node's id hash is already in the plan. */
	uint64_t h = (hash_words(svc, len, 0) ^ (uint64_t)g->row) * 1099511628211ull;
	h = (h ^ hash_words(reg, strlen(reg), 0)) * 1099511628211ull;
	h ^= hash_words(isp, strlen(isp), 0);
	if (!g->npicked) {
		count(t, h, svc, len, g, reg, isp, "", 0);
		return;
	}
	for (unsigned i = 0; i < g->npicked; i++) {
		const plan_node_t *n = &g->plan.node[g->picked[i]];
		uint64_t hn = (h ^ ((uint64_t)n->idhash << 17 | n->idhash)) *
		              1099511628211ull;
		count(t, hn, svc, len, g, reg, isp, n->id, n->id_len);
	}
}

void tally_each(const tally_t *t,
                void (*fn)(const tally_entry_t *e, uint64_t count, void *arg),
                void *arg)
{
	if (!t)
		return;
	for (unsigned i = 0; i < TALLY_SLOTS; i++) {
		const tally_entry_t *e = &t->slot[i];
		if (!__atomic_load_n(&e->key, __ATOMIC_ACQUIRE))
			continue;
		fn(e, __atomic_load_n(&e->count, __ATOMIC_RELAXED), arg);
	}
}

uint64_t tally_overflow(const tally_t *t)
{
	return t ? __atomic_load_n(&t->overflow, __ATOMIC_RELAXED) : 0;
}
