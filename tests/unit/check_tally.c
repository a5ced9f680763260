/* SPDX-License-Identifier: MIT */
/* The GSLB answer tally: counts by service, row and node, the strings of
 * each entry, overflow when the table is full. */
#include "dns/tally.h"
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A result that picked node @id (or none) from row @row of (@reg, @isp). */
static void result(gslb_result_t *g, gslb_row_t row, const char *reg,
                   const char *isp, const char *id)
{
	memset(g, 0, sizeof(*g));
	g->row = row;
	snprintf(g->geo.region, sizeof(g->geo.region), "%s", reg);
	snprintf(g->geo.isp, sizeof(g->geo.isp), "%s", isp);
	if (id) {
		g->plan.n = 1;
		g->plan.node[0].id = id;
		g->plan.node[0].id_len = (uint8_t)strlen(id);
		g->plan.node[0].idhash = plan_id_hash(id, strlen(id));
		g->picked[0] = 0;
		g->npicked = 1;
	}
}

typedef struct { char line[64][600]; unsigned n; } seen_t;

static void collect(const tally_entry_t *e, uint64_t count, void *arg)
{
	seen_t *s = arg;
	ck_assert_uint_lt(s->n, 64);
	snprintf(s->line[s->n++], sizeof(s->line[0]), "%s %u %s %s %s=%llu",
	         e->service, e->level, e->region, e->isp, e->node,
	         (unsigned long long)count);
}

static int has(const seen_t *s, const char *line)
{
	for (unsigned i = 0; i < s->n; i++)
		if (!strcmp(s->line[i], line))
			return 1;
	return 0;
}

START_TEST(counts_by_service_row_node)
{
	tally_t *t = tally_new();
	gslb_result_t g;
	result(&g, GSLB_ROW_REGION_ISP, "cn-bj", "ctcc", "bj-1");
	for (int i = 0; i < 5; i++)
		tally_add(t, "www.x.test", 10, &g);
	result(&g, GSLB_ROW_REGION, "cn-bj", "ctcc", "bj-2");
	tally_add(t, "www.x.test", 10, &g);
	result(&g, GSLB_ROW_DEFAULT, "cn-gd", "cmcc", NULL);
	tally_add(t, "www.x.test", 10, &g);
	tally_add(t, "www.x.test", 10, &g);
	seen_t s = { .n = 0 };
	tally_each(t, collect, &s);
	ck_assert_uint_eq(s.n, 3);
	/* The row's key: its region and ISP only where the row names them. */
	ck_assert(has(&s, "www.x.test 1 cn-bj ctcc bj-1=5"));
	ck_assert(has(&s, "www.x.test 2 cn-bj * bj-2=1"));
	ck_assert(has(&s, "www.x.test 4 * * =2"));
	ck_assert_uint_eq(tally_overflow(t), 0);
	tally_add(NULL, "www.x.test", 10, &g);  /* counting off: no effect */
	free(t);
}
END_TEST

START_TEST(overflow_when_full)
{
	tally_t *t = tally_new();
	gslb_result_t g;
	char id[32];
	unsigned added = TALLY_SLOTS + 100;
	for (unsigned i = 0; i < added; i++) {
		snprintf(id, sizeof(id), "n%u", i);
		result(&g, GSLB_ROW_DEFAULT, "*", "*", id);
		tally_add(t, "www.x.test", 10, &g);
	}
	unsigned entries = 0;
	for (unsigned i = 0; i < TALLY_SLOTS; i++)
		entries += t->slot[i].key != 0;
	/* Every answer is either in an entry or counted as overflow. */
	ck_assert_uint_eq(entries + tally_overflow(t), added);
	ck_assert_uint_gt(tally_overflow(t), 0);
	free(t);
}
END_TEST

static Suite *tally_suite(void)
{
	Suite *s = suite_create("tally");
	TCase *t = tcase_create("tally");
	tcase_add_test(t, counts_by_service_row_node);
	tcase_add_test(t, overflow_when_full);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(tally_suite)
