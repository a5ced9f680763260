/* SPDX-License-Identifier: MIT */
/* The GSLB row chain: which weight rows a client is tried against, for
 * every combination of known and unknown region and ISP and of the row
 * levels a service has. */
#include "gslb/gslb.h"
#include "unit.h"

#include <stdio.h>
#include <string.h>

/* The oracle, derived differently from gslb_chain(): substitute the
 * client's fields into the four documented keys (region, ISP),
 * (region, *), (*, ISP), (*, *), drop repeated keys, then drop the keys
 * whose shape the service has no row of.  The shape of a key is what it
 * holds, not the level it came from. */
static unsigned oracle(const char *reg, const char *isp, int flags,
                       gslb_row_t out[4])
{
	const char *k[4][2] = { { reg, isp }, { reg, "*" }, { "*", isp }, { "*", "*" } };
	unsigned n = 0;
	const char *seen[4][2];
	unsigned nseen = 0;
	for (int i = 0; i < 4; i++) {
		int dup = 0;
		for (unsigned j = 0; j < nseen; j++)
			if (!strcmp(seen[j][0], k[i][0]) && !strcmp(seen[j][1], k[i][1]))
				dup = 1;
		if (dup)
			continue;
		seen[nseen][0] = k[i][0], seen[nseen][1] = k[i][1], nseen++;
		int ar = !strcmp(k[i][0], "*"), ai = !strcmp(k[i][1], "*");
		gslb_row_t shape = ar ? (ai ? GSLB_ROW_DEFAULT : GSLB_ROW_ISP)
		                      : (ai ? GSLB_ROW_REGION : GSLB_ROW_REGION_ISP);
		int kind = shape == GSLB_ROW_REGION_ISP ? SVC_ROW_REGION_ISP :
		           shape == GSLB_ROW_REGION ? SVC_ROW_REGION :
		           shape == GSLB_ROW_ISP ? SVC_ROW_ISP : SVC_ROW_DEFAULT;
		if ((flags & SVC_ROW_KNOWN) && !(flags & kind))
			continue;
		out[n++] = shape;
	}
	return n;
}

/* All 4 known/unknown combinations x all 16 sets of row levels (and the
 * store without level flags, which tries every level). */
START_TEST(chain_every_combination)
{
	static const char *regs[2] = { "cn-gz", "*" }, *isps[2] = { "ctcc", "*" };
	static const int kinds[4] = { SVC_ROW_REGION_ISP, SVC_ROW_REGION,
	                              SVC_ROW_ISP, SVC_ROW_DEFAULT };
	int checked = 0;
	for (int r = 0; r < 2; r++)
		for (int i = 0; i < 2; i++)
			for (int set = 0; set <= 16; set++) {
				int flags = 0;
				if (set < 16) {
					flags = SVC_ROW_KNOWN;
					for (int b = 0; b < 4; b++)
						if (set & (1 << b))
							flags |= kinds[b];
				}
				gslb_row_t got[4], want[4];
				unsigned ng = gslb_chain(regs[r], isps[i], flags, got);
				unsigned nw = oracle(regs[r], isps[i], flags, want);
				char what[80];
				snprintf(what, sizeof(what), "region=%s isp=%s levels=%d",
				         regs[r], isps[i], set);
				ck_assert_msg(ng == nw, "%s: %u levels, want %u", what, ng, nw);
				for (unsigned j = 0; j < nw; j++)
					ck_assert_msg(got[j] == want[j], "%s: level %u is %s, want %s",
					              what, j, gslb_row_name(got[j]),
					              gslb_row_name(want[j]));
				checked++;
			}
	ck_assert_int_eq(checked, 4 * 17);
}
END_TEST

/* The defect this guards against: a City-only database (region known,
 * ISP unknown) and a service with a (region, *) row and a (*, *) row but
 * no (region, ISP) row must still try the (region, *) row first. */
START_TEST(chain_region_only_client)
{
	gslb_row_t c[4];
	int flags = SVC_ROW_KNOWN | SVC_ROW_REGION | SVC_ROW_DEFAULT;
	ck_assert_uint_eq(gslb_chain("cn-gz", "*", flags, c), 2);
	ck_assert_int_eq(c[0], GSLB_ROW_REGION);
	ck_assert_int_eq(c[1], GSLB_ROW_DEFAULT);
}
END_TEST

/* The reverse: ISP known, region unknown, (*, ISP) and (*, *) rows. */
START_TEST(chain_isp_only_client)
{
	gslb_row_t c[4];
	int flags = SVC_ROW_KNOWN | SVC_ROW_ISP | SVC_ROW_DEFAULT;
	ck_assert_uint_eq(gslb_chain("*", "cmcc", flags, c), 2);
	ck_assert_int_eq(c[0], GSLB_ROW_ISP);
	ck_assert_int_eq(c[1], GSLB_ROW_DEFAULT);
}
END_TEST

/* Both known: the documented order, all four. */
START_TEST(chain_full_order)
{
	gslb_row_t c[4];
	ck_assert_uint_eq(gslb_chain("cn-bj", "ctcc", 0, c), 4);
	ck_assert_int_eq(c[0], GSLB_ROW_REGION_ISP);
	ck_assert_int_eq(c[1], GSLB_ROW_REGION);
	ck_assert_int_eq(c[2], GSLB_ROW_ISP);
	ck_assert_int_eq(c[3], GSLB_ROW_DEFAULT);
	/* Nothing known: only the default row can match. */
	ck_assert_uint_eq(gslb_chain("*", "*", 0, c), 1);
	ck_assert_int_eq(c[0], GSLB_ROW_DEFAULT);
	/* A service with no default row and an unknown client: no level. */
	ck_assert_uint_eq(gslb_chain("*", "*", SVC_ROW_KNOWN | SVC_ROW_REGION_ISP, c), 0);
}
END_TEST

static Suite *gslb_suite(void)
{
	Suite *s = suite_create("gslb");
	TCase *t = tcase_create("chain");
	tcase_add_test(t, chain_every_combination);
	tcase_add_test(t, chain_region_only_client);
	tcase_add_test(t, chain_isp_only_client);
	tcase_add_test(t, chain_full_order);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(gslb_suite)
