/* SPDX-License-Identifier: MIT */
/* Answer plans: the usability reason each node is encoded with, and a
 * decoder that stays strict about the layout and the reasons. */
#include "store/plan.h"
#include "unit.h"

#include <stdlib.h>
#include <string.h>

static json_t *nodes;

static json_t *node_of(const char *id, void *arg)
{
	(void)arg;
	return json_object_get(nodes, id);
}

/* Encodes a one-node row for node @node (JSON text) with weight @w and
 * decodes it into @p; returns the encoding (free() it). */
static uint8_t *one(const char *node, int w, int shadow, plan_t *p, size_t *len)
{
	json_error_t je;
	nodes = json_object();
	json_t *n = json_loads(node, 0, &je);
	ck_assert_ptr_nonnull(n);
	json_object_set_new(nodes, "n1", n);
	json_t *row = json_pack("{s:{s:i}}", "weights", "n1", w);
	uint8_t *b;
	char err[200];
	ck_assert_int_eq(plan_encode(row, node_of, NULL, shadow, &b, len, err,
	                             sizeof(err)), 0);
	ck_assert_int_eq(plan_decode(b, *len, p), 0);
	ck_assert_uint_eq(p->n, 1);
	json_decref(row);
	json_decref(nodes);
	return b;
}

static uint8_t why_of(const char *node, int w, int shadow, uint32_t *eff, int *usable)
{
	plan_t p;
	size_t len;
	free(one(node, w, shadow, &p, &len));
	*eff = p.node[0].weight;
	*usable = (p.node[0].flags & PLAN_USABLE) != 0;
	return p.node[0].why;
}

#define ADDR "\"addrs\": [\"192.0.2.1\"]"

START_TEST(reasons)
{
	static const struct {
		const char *node;
		int w, shadow;
		uint8_t why;
		uint32_t eff;
		int usable;
	} c[] = {
		{ "{" ADDR ", \"admin\": \"auto\"}", 100, 0, PLAN_WHY_USABLE, 100, 1 },
		{ "{" ADDR ", \"admin\": \"down\"}", 100, 0, PLAN_WHY_ADMIN_DOWN, 100, 0 },
		{ "{" ADDR ", \"admin\": \"drain\"}", 100, 0, PLAN_WHY_ADMIN_DRAIN, 100, 0 },
		{ "{" ADDR ", \"admin\": \"up\", \"health\": {\"usable\": false}}", 100, 0,
		  PLAN_WHY_ADMIN_UP, 100, 1 },
		{ "{" ADDR ", \"admin\": \"up\"}", 0, 0, PLAN_WHY_WEIGHT0, 0, 0 },
		{ "{" ADDR ", \"health\": {\"usable\": false}}", 100, 0, PLAN_WHY_UNHEALTHY, 100, 0 },
		/* Shadow mode (S2-9): the health verdict is left out. */
		{ "{" ADDR ", \"health\": {\"usable\": false}}", 100, 1, PLAN_WHY_USABLE, 100, 1 },
		{ "{" ADDR ", \"health\": {\"usable\": true, \"effective_weight_pct\": 20}}", 100, 0,
		  PLAN_WHY_USABLE | PLAN_WHY_DERATED, 20, 1 },
		{ "{" ADDR ", \"health\": {\"usable\": true, \"effective_weight_pct\": 100}}", 100, 0,
		  PLAN_WHY_USABLE, 100, 1 },
		{ "{" ADDR ", \"health\": {\"cutover_pct\": 50}}", 100, 0,
		  PLAN_WHY_USABLE | PLAN_WHY_CUTOVER, 50, 1 },
		{ "{" ADDR ", \"pool\": \"standby\"}", 100, 0, PLAN_WHY_STANDBY, 100, 0 },
		{ "{" ADDR ", \"pool\": \"standby\", \"health\": {\"prewarm_pct\": 10}}", 100, 0,
		  PLAN_WHY_USABLE | PLAN_WHY_PREWARM, 10, 1 },
		{ "{" ADDR ", \"pool\": \"standby\", \"health\": {\"promoted\": true}}", 100, 0,
		  PLAN_WHY_USABLE, 100, 1 },
		{ "{" ADDR "}", 0, 0, PLAN_WHY_WEIGHT0, 0, 0 },
		/* Derated to nothing: weight 0, not usable. */
		{ "{" ADDR ", \"health\": {\"effective_weight_pct\": 50}}", 1, 0, PLAN_WHY_WEIGHT0, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		uint32_t eff;
		int usable;
		uint8_t why = why_of(c[i].node, c[i].w, c[i].shadow, &eff, &usable);
		ck_assert_msg(why == c[i].why, "case %zu: reason %#x, want %#x", i, why, c[i].why);
		ck_assert_msg(eff == c[i].eff, "case %zu: weight %u, want %u", i, eff, c[i].eff);
		ck_assert_msg(usable == c[i].usable, "case %zu: usable %d", i, usable);
	}
}
END_TEST

/* The decoder refuses unknown reasons, reasons that contradict the usable
 * flag, and trailing or missing bytes; it still reads version 1. */
START_TEST(strict_decode)
{
	plan_t p;
	size_t len;
	uint8_t *b = one("{" ADDR "}", 5, 0, &p, &len);
	const size_t why_at = 6 + 16;      /* the first node's reason byte */
	ck_assert_uint_eq(b[0], PLAN_VERSION);
	ck_assert_uint_eq(b[why_at], PLAN_WHY_USABLE);
	b[why_at] = PLAN_WHY_COUNT;
	ck_assert_int_eq(plan_decode(b, len, &p), -1);
	b[why_at] = PLAN_WHY_ADMIN_DOWN;   /* not usable, but flagged usable */
	ck_assert_int_eq(plan_decode(b, len, &p), -1);
	b[why_at] = PLAN_WHY_USABLE;
	ck_assert_int_eq(plan_decode(b, len - 1, &p), -1);
	uint8_t *longer = malloc(len + 1);
	memcpy(longer, b, len);
	longer[len] = 0;
	ck_assert_int_eq(plan_decode(longer, len + 1, &p), -1);
	free(longer);
	/* A spill over every client is the most there is. */
	b[4] = 0x27, b[5] = 0x11;          /* 10001 bp */
	ck_assert_int_eq(plan_decode(b, len, &p), -1);
	b[4] = b[5] = 0;
	/* The same plan in version 2: without the spill. */
	uint8_t *v2 = malloc(len - 2);
	memcpy(v2, b, 4);
	memcpy(v2 + 4, b + 6, len - 6);
	v2[0] = 2;
	ck_assert_int_eq(plan_decode(v2, len - 2, &p), 0);
	ck_assert_uint_eq(p.spill_bp, 0);
	ck_assert_uint_eq(p.node[0].weight, 5);
	free(v2);
	/* The same plan in version 1: without the spill nor the reason
	 * byte. */
	uint8_t *v1 = malloc(len - 3);
	memcpy(v1, b, 4);
	memcpy(v1 + 4, b + 6, why_at - 6);
	memcpy(v1 + why_at - 2, b + why_at + 1, len - why_at - 1);
	v1[0] = 1;
	ck_assert_int_eq(plan_decode(v1, len - 3, &p), 0);
	ck_assert_uint_eq(p.node[0].why, PLAN_WHY_NONE);
	ck_assert_uint_eq(p.node[0].weight, 5);
	ck_assert(p.node[0].flags & PLAN_USABLE);
	ck_assert_uint_eq(p.node[0].n4, 1);
	free(v1);
	free(b);
}
END_TEST

/* S1-6, S4-3: a static row (a 50, b 30, c 20, each of capacity 100, a
 * demand of 200, headroom 20 %: each may carry 40 % of the row).  With
 * all three the shares 50/30/20 hold a at 40 %, its excess going to b
 * and c by weight (30:20); with c gone the 62.5/37.5 split of the
 * proportional rule would overload a, and both at 40 % leave 20 % that
 * the row cannot carry: the spill.  The steering engine would instead
 * run both over by their ceilings (no spill), and a node without a
 * capacity takes all the excess. */
START_TEST(s1_6_static_row_capacity)
{
	double cap[3] = { 100, 100, 100 };
	uint8_t capped[3];
	uint32_t w[3] = { 50, 30, 20 };
	uint8_t all[3] = { 1, 1, 1 }, no_c[3] = { 1, 1, 0 };
	ck_assert_uint_eq(plan_capacity(3, w, all, cap, 200, 20, capped), 0);
	ck_assert_uint_eq(w[0], 4000);
	ck_assert_uint_eq(w[1], 3600);     /* 30 % + 10 % x 30/50 */
	ck_assert_uint_eq(w[2], 2400);
	ck_assert(capped[0] && !capped[1] && !capped[2]);
	uint32_t w2[3] = { 50, 30, 20 };
	ck_assert_uint_eq(plan_capacity(3, w2, no_c, cap, 200, 20, capped), 2000);
	ck_assert_uint_eq(w2[0], 5000);    /* of the 80 % answered */
	ck_assert_uint_eq(w2[1], 5000);
	ck_assert_uint_eq(w2[2], 20);      /* not usable: untouched */
	ck_assert(capped[0] && capped[1]);
	/* b without a capacity has no ceiling: no spill. */
	double cap_a[3] = { 100, 0, 100 };
	uint32_t w3[3] = { 50, 30, 20 };
	ck_assert_uint_eq(plan_capacity(3, w3, no_c, cap_a, 200, 20, capped), 0);
	ck_assert_uint_eq(w3[0], 4000);
	ck_assert_uint_eq(w3[1], 6000);
	/* Within capacity, or no demand: the weights stay as they are. */
	uint32_t w4[3] = { 50, 30, 20 };
	ck_assert_uint_eq(plan_capacity(3, w4, no_c, cap, 100, 20, capped), 0);
	ck_assert_uint_eq(w4[0], 50);
	ck_assert_uint_eq(plan_capacity(3, w4, no_c, cap, 0, 20, capped), 0);
	ck_assert_uint_eq(w4[1], 30);
}
END_TEST

/* The encoded plan of that row with c down: the spill in the header and
 * the held nodes marked. */
START_TEST(s1_6_static_row_plan)
{
	json_error_t je;
	nodes = json_loads("{\"a\": {\"addrs\": [\"192.0.2.1\"], \"capacity\": 100},"
	                   " \"b\": {\"addrs\": [\"192.0.2.2\"], \"capacity\": 100},"
	                   " \"c\": {\"addrs\": [\"192.0.2.3\"], \"capacity\": 100,"
	                   " \"admin\": \"down\"}}", 0, &je);
	ck_assert_ptr_nonnull(nodes);
	json_t *row = json_pack("{s:{s:i, s:i, s:i}, s:{s:f, s:f}}", "weights", "a", 50,
	                        "b", 30, "c", 20, "capacity", "demand", 200.0,
	                        "headroom", 20.0);
	uint8_t *b;
	size_t len;
	char err[200];
	plan_t p;
	ck_assert_int_eq(plan_encode(row, node_of, NULL, 0, &b, &len, err, sizeof(err)), 0);
	ck_assert_int_eq(plan_decode(b, len, &p), 0);
	ck_assert_uint_eq(p.spill_bp, 2000);
	ck_assert_uint_eq(p.node[0].weight, 5000);
	ck_assert_uint_eq(p.node[0].why, PLAN_WHY_USABLE | PLAN_WHY_CAPACITY);
	ck_assert_uint_eq(p.node[2].why, PLAN_WHY_ADMIN_DOWN);
	free(b);
	/* Without the record: the operator's weights, no spill. */
	json_object_del(row, "capacity");
	ck_assert_int_eq(plan_encode(row, node_of, NULL, 0, &b, &len, err, sizeof(err)), 0);
	ck_assert_int_eq(plan_decode(b, len, &p), 0);
	ck_assert_uint_eq(p.spill_bp, 0);
	ck_assert_uint_eq(p.node[0].weight, 50);
	ck_assert_uint_eq(p.node[0].why, PLAN_WHY_USABLE);
	free(b);
	json_decref(row);
	json_decref(nodes);
}
END_TEST

static Suite *plan_suite(void)
{
	Suite *s = suite_create("plan");
	TCase *t = tcase_create("plan");
	tcase_add_test(t, reasons);
	tcase_add_test(t, strict_decode);
	tcase_add_test(t, s1_6_static_row_capacity);
	tcase_add_test(t, s1_6_static_row_plan);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(plan_suite)
