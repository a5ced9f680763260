/* SPDX-License-Identifier: MIT */
/* Shared helpers of the check unit tests. */
#ifndef GSLB_TEST_UNIT_H
#define GSLB_TEST_UNIT_H

#include <check.h>
#include <stdlib.h>

/* Runs one suite and exits with its verdict (the main of each test). */
#define UNIT_MAIN(suite_fn)                                              \
	int main(void)                                                   \
	{                                                                \
		SRunner *sr = srunner_create(suite_fn());                \
		srunner_run_all(sr, CK_NORMAL);                          \
		int failed = srunner_ntests_failed(sr);                  \
		srunner_free(sr);                                        \
		return failed ? EXIT_FAILURE : EXIT_SUCCESS;             \
	}

#endif
