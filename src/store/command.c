/* SPDX-License-Identifier: MIT */
/* What each gslbctl command does to the store (command.h). */
#include "store/command.h"

#include <string.h>

int wdb_command_read_only(const char *cmd, int argc, char *const *argv)
{
	static const char *const readers[] = { "status", "export", "explain",
	                                       "history", "log", NULL };
	if (strcmp(cmd, "cluster") == 0)
		return !(argc > 1 && strcmp(argv[0], "overrides") == 0 &&
		         strcmp(argv[1], "list") != 0);
	for (const char *const *r = readers; *r; r++)
		if (strcmp(cmd, *r) == 0)
			return 1;
	if (strcmp(cmd, "api") == 0)
		return argc > 1 && strcmp(argv[1], "list") == 0;
	if (strcmp(cmd, "steer") == 0)
		return !(argc > 0 && strcmp(argv[0], "unpin") == 0);
	if (strcmp(cmd, "dnssec") == 0)
		return argc > 0 && (strcmp(argv[0], "list") == 0 ||
		                    strcmp(argv[0], "status") == 0 ||
		                    strcmp(argv[0], "ds") == 0);
	if (strcmp(cmd, "apply") == 0 || strcmp(cmd, "rollback") == 0) {
		for (int i = 0; i < argc; i++)
			if (strcmp(argv[i], "--dry-run") == 0)
				return 1;
		return 0;
	}
	if (strcmp(cmd, "service") != 0 && strcmp(cmd, "node") != 0 &&
	    strcmp(cmd, "weight") != 0 && strcmp(cmd, "cutover") != 0 &&
	    strcmp(cmd, "budget") != 0 && strcmp(cmd, "release") != 0)
		return 0;
	return argc > 0 && (strcmp(argv[0], "list") == 0 || strcmp(argv[0], "show") == 0);
}

wdb_cmd_class_t wdb_command_class(const char *cmd, int argc, char *const *argv)
{
	/* The tokens are the API's own keys: only admin lists or makes
	 * them, whatever the store sees. */
	if (strcmp(cmd, "api") == 0)
		return WDB_CMD_CHANGES;
	/* stats asks the daemon's statistics endpoint, not the store. */
	if (strcmp(cmd, "stats") == 0 || wdb_command_read_only(cmd, argc, argv))
		return WDB_CMD_READS;
	if (strcmp(cmd, "metrics") == 0)
		return WDB_CMD_OPERATES;
	/* A node's admin state alone, as PATCH /v1/nodes/ID does. */
	if (strcmp(cmd, "node") == 0 && argc == 4 && strcmp(argv[0], "set") == 0 &&
	    strcmp(argv[2], "--admin") == 0)
		return WDB_CMD_OPERATES;
	if (strcmp(cmd, "release") == 0 && argc > 0 &&
	    (strcmp(argv[0], "start") == 0 || strcmp(argv[0], "pause") == 0 ||
	     strcmp(argv[0], "resume") == 0 || strcmp(argv[0], "abort") == 0))
		return WDB_CMD_OPERATES;
	return WDB_CMD_CHANGES;
}
