/* SPDX-License-Identifier: MIT */
/* What each gslbctl command does to the store: whether it only reads
 * it (gslbctl then opens the store read-only) and how much it changes
 * (the HTTP API's role for running it through POST /v1/run).  One
 * list, so that gslbctl and the API never disagree on which command
 * writes.  Pure: no store access. */
#ifndef GSLB_STORE_COMMAND_H
#define GSLB_STORE_COMMAND_H

/** How much a command changes, in the order of the API's roles. */
typedef enum {
	WDB_CMD_READS = 1,   /* reads only */
	WDB_CMD_OPERATES,    /* a node's admin state, metrics, a release's steps */
	WDB_CMD_CHANGES      /* anything else */
} wdb_cmd_class_t;

/** Whether command @cmd with its @argc arguments @argv (the words after
 * the command, the late --json and --allow-unknown-location taken out)
 * only reads the store. */
int wdb_command_read_only(const char *cmd, int argc, char *const *argv);

/** The class of command @cmd with its arguments (as above): reads for
 * the read-only ones and `stats`; operates for `node set ID --admin
 * STATE` (drain, undrain: nothing else on the line), `metrics push` and
 * `release start|pause|resume|abort`; changes for everything else,
 * `api` (tokens) and unknown commands included. */
wdb_cmd_class_t wdb_command_class(const char *cmd, int argc, char *const *argv);

#endif
