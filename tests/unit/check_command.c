/* SPDX-License-Identifier: MIT */
/* What each gslbctl command does to the store (store/command.h): the
 * read-only ones gslbctl opens the store read-only for, and the role
 * POST /v1/run asks to run each. */
#include "store/command.h"
#include "unit.h"

#include <stdio.h>
#include <string.h>

/* The class of the command line @line (words split on spaces). */
static wdb_cmd_class_t cls(const char *line)
{
	static char buf[512];
	char *w[32];
	int n = 0;
	snprintf(buf, sizeof(buf), "%s", line);
	for (char *s = strtok(buf, " "); s && n < 32; s = strtok(NULL, " "))
		w[n++] = s;
	return wdb_command_class(w[0], n - 1, w + 1);
}

START_TEST(reads)
{
	static const char *const lines[] = {
		"service list", "service show www.test", "node list", "node show a",
		"weight list", "weight show www.test", "status", "export", "log",
		"explain www.test --client 192.0.2.1", "history a", "stats",
		"apply --dry-run -", "rollback --dry-run", "steer show www.test",
		"dnssec status z.test", "cluster status", "cluster overrides list",
		"release list", "cutover list", "budget list", NULL,
	};
	for (const char *const *l = lines; *l; l++)
		ck_assert_msg(cls(*l) == WDB_CMD_READS, "%s: %d", *l, cls(*l));
}
END_TEST

START_TEST(operates)
{
	static const char *const lines[] = {
		"node set a --admin drain", "node set a --admin auto",
		"metrics push a loss=0.1", "metrics push --file -",
		"release start www.test --node a --steps 1,100 --every 1m",
		"release pause www.test", "release resume www.test",
		"release abort www.test", NULL,
	};
	for (const char *const *l = lines; *l; l++)
		ck_assert_msg(cls(*l) == WDB_CMD_OPERATES, "%s: %d", *l, cls(*l));
}
END_TEST

START_TEST(changes)
{
	/* More than the admin state on the line, the tokens (even their
	 * list), the unknown: admin. */
	static const char *const lines[] = {
		"node set a --admin drain --region cn-bj", "node set a --region cn-bj",
		"node add a --addr 192.0.2.1", "node del a", "service add www.test",
		"weight set www.test a=1", "apply -", "rollback", "cutover del c1",
		"api token list", "api token add x --role read", "steer unpin www.test",
		"cluster overrides drop", "dnssec keygen z.test", "frobnicate", NULL,
	};
	for (const char *const *l = lines; *l; l++)
		ck_assert_msg(cls(*l) == WDB_CMD_CHANGES, "%s: %d", *l, cls(*l));
}
END_TEST

START_TEST(read_only_is_gslbctls)
{
	/* api token list only reads the store, though only admin runs it. */
	char *w[] = { "token", "list" };
	ck_assert_int_eq(wdb_command_read_only("api", 2, w), 1);
	char *x[] = { "set", "a", "--admin", "drain" };
	ck_assert_int_eq(wdb_command_read_only("node", 4, x), 0);
	ck_assert_int_eq(wdb_command_read_only("stats", 0, x), 0);
}
END_TEST

static Suite *command_suite(void)
{
	Suite *s = suite_create("command");
	TCase *t = tcase_create("class");
	tcase_add_test(t, reads);
	tcase_add_test(t, operates);
	tcase_add_test(t, changes);
	tcase_add_test(t, read_only_is_gslbctls);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(command_suite)
