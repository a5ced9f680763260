/* SPDX-License-Identifier: MIT */
/* The daemon gslbd: the options of its command line, and the life of the
 * process they start (--check, or start-up, the main loop and shut-down).
 * Only main.c includes it; daemon/ is gslbd's own, not in libgslbd.a.
 *
 * Thread safety: main thread only. */
#ifndef GSLB_DAEMON_H
#define GSLB_DAEMON_H

#include <stddef.h>

/** gslbd's command line, as main.c parsed it. */
typedef struct daemon_opts {
	const char *conf_path;
	char **listen;
	size_t nlisten;
	int check;
	int daemonize;
	int verbose;
	const char *pidfile;
	unsigned workers;
	int replace;            /* --replace: take over a running gslbd */
} daemon_opts_t;

/** Runs gslbd as @o says: --check, or the daemon until SIGTERM or
 * SIGINT.  @argc and @argv are the command line (SIGUSR2 starts the
 * replacement with it); @o must live as long as the process (a reload
 * reads it), and its listen array stays the caller's.  Returns the exit
 * status. */
int daemon_main(int argc, char **argv, daemon_opts_t *o);

#endif
