/* SPDX-License-Identifier: MIT */
/* The unannounced-cutover detector (S0-1, S0-8, S2-6): an area whose
 * nodes fall together opens a window after two evaluations, one noisy
 * node never does, and the window ends only after three recovered
 * evaluations. */
#include "health/autocut.h"
#include "health/cutover.h"
#include "unit.h"

#include <string.h>

static autocut_conf_t conf(void)
{
	autocut_conf_t c;
	autocut_conf_default(&c);
	return c;
}

/* A node is falling 10 points under its own stable score or below
 * usable; 9 points under is noise. */
START_TEST(s0_1_node_falling)
{
	autocut_conf_t c = conf();
	ck_assert_int_eq(autocut_node_falling(&c, 86, 95, 60, 0), 0);
	ck_assert_int_eq(autocut_node_falling(&c, 85, 95, 60, 0), 1);
	ck_assert_int_eq(autocut_node_falling(&c, 59, -1, 60, 0), 1);
	ck_assert_int_eq(autocut_node_falling(&c, 70, -1, 60, 0), 0);
	ck_assert_int_eq(autocut_node_falling(&c, -1, 95, 60, 0), 0);
	ck_assert_int_eq(autocut_node_falling(&c, -1, 95, 60, 1), 1);
}
END_TEST

/* The stable score learns only while the node is quiet. */
START_TEST(s0_1_stable_score)
{
	ck_assert(autocut_stable(-1, 90, 0) == 90);
	ck_assert(autocut_stable(90, 74, 0) == 90);
	ck_assert(autocut_stable(90, 74, 1) == 89);
	ck_assert(autocut_stable(90, -1, 1) == 90);
}
END_TEST

/* Seven nodes of an area: three or more falling (and half of them) is
 * the area falling; two is not (two coincident noisy nodes), nor three
 * of a twenty-node area. */
START_TEST(s2_6_area_falls_together)
{
	autocut_conf_t c = conf();
	ck_assert_int_eq(autocut_area_falls(&c, 7, 4), 1);
	ck_assert_int_eq(autocut_area_falls(&c, 6, 3), 1);
	ck_assert_int_eq(autocut_area_falls(&c, 7, 3), 0);
	ck_assert_int_eq(autocut_area_falls(&c, 7, 2), 0);
	ck_assert_int_eq(autocut_area_falls(&c, 2, 2), 0);
	ck_assert_int_eq(autocut_area_falls(&c, 20, 3), 0);
	ck_assert_int_eq(autocut_area_falls(&c, 0, 0), 0);
}
END_TEST

/* One noisy node, falling at every other evaluation or even at every
 * one, never opens a window. */
START_TEST(s0_8_one_noisy_node_never_opens)
{
	autocut_conf_t c = conf();
	autocut_area_t a;
	memset(&a, 0, sizeof(a));
	for (int i = 0; i < 100; i++)
		ck_assert_int_eq(autocut_step(&c, &a, 7, 1), AUTOCUT_KEEP);
	/* A whole area falling for one evaluation at a time is not
	 * confirmed either. */
	for (int i = 0; i < 100; i++)
		ck_assert_int_eq(autocut_step(&c, &a, 7, i % 2 ? 7 : 1), AUTOCUT_KEEP);
	ck_assert_int_eq(a.open, 0);
}
END_TEST

/* Two consecutive falling evaluations open; three recovered ones
 * close; a recovery interrupted by a falling evaluation starts again;
 * a single node still noisy does not hold the window open. */
START_TEST(s0_8_open_and_close_with_confirmation)
{
	autocut_conf_t c = conf();
	autocut_area_t a;
	memset(&a, 0, sizeof(a));
	ck_assert_int_eq(autocut_step(&c, &a, 7, 5), AUTOCUT_KEEP);
	ck_assert_int_eq(autocut_step(&c, &a, 7, 5), AUTOCUT_OPEN);
	ck_assert_int_eq(a.open, 1);
	ck_assert_int_eq(autocut_step(&c, &a, 7, 6), AUTOCUT_KEEP);
	ck_assert_int_eq(autocut_step(&c, &a, 7, 0), AUTOCUT_KEEP);
	ck_assert_int_eq(autocut_step(&c, &a, 7, 0), AUTOCUT_KEEP);
	ck_assert_int_eq(autocut_step(&c, &a, 7, 2), AUTOCUT_KEEP);  /* not yet */
	ck_assert_int_eq(autocut_step(&c, &a, 7, 1), AUTOCUT_KEEP);
	ck_assert_int_eq(autocut_step(&c, &a, 7, 0), AUTOCUT_KEEP);
	ck_assert_int_eq(autocut_step(&c, &a, 7, 1), AUTOCUT_CLOSE);
	ck_assert_int_eq(a.open, 0);
}
END_TEST

/* The settings in the cutover section, with their bounds. */
START_TEST(s0_1_settings)
{
	cutover_conf_t c;
	char err[256] = "";
	conf_t empty = { .path = "" };
	ynode_t root = { .kind = YNODE_MAP };
	empty.root = &root;
	ck_assert_msg(cutover_conf_load(&empty, &c, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(c.autocut.on, 1);
	ck_assert_int_eq(c.autocut.min_nodes, 3);
	ck_assert_int_eq(c.autocut.confirm, 2);
	ck_assert_int_eq(c.autocut.recover, 3);
	ck_assert(c.autocut.share == 0.5);
	ck_assert(c.autocut.drop == 10);
	autocut_conf_t a = conf();
	ynode_t v = { .kind = YNODE_SCALAR, .value = "40" };
	ck_assert_int_eq(autocut_conf_key(&empty, "auto-share", &v, &a, err, sizeof(err)), 1);
	ck_assert(a.share == 0.4);
	ck_assert_int_eq(autocut_conf_key(&empty, "impact-low", &v, &a, err, sizeof(err)), 0);
	ynode_t one = { .kind = YNODE_SCALAR, .value = "1" };
	ck_assert_int_eq(autocut_conf_key(&empty, "auto-min-nodes", &one, &a, err, sizeof(err)), -1);
	ynode_t off = { .kind = YNODE_SCALAR, .value = "off" };
	ck_assert_int_eq(autocut_conf_key(&empty, "auto", &off, &a, err, sizeof(err)), 1);
	ck_assert_int_eq(a.on, 0);
}
END_TEST

static Suite *autocut_suite(void)
{
	Suite *s = suite_create("autocut");
	TCase *t = tcase_create("core");
	tcase_add_test(t, s0_1_node_falling);
	tcase_add_test(t, s0_1_stable_score);
	tcase_add_test(t, s2_6_area_falls_together);
	tcase_add_test(t, s0_8_one_noisy_node_never_opens);
	tcase_add_test(t, s0_8_open_and_close_with_confirmation);
	tcase_add_test(t, s0_1_settings);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(autocut_suite)
