/* SPDX-License-Identifier: MIT */
/* gslbd: the command line, then the daemon (daemon/daemon.h). */
#include "config.h"
#include "common/util.h"
#include "daemon/daemon.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

static void usage(FILE *f)
{
	fputs("usage: gslbd -c FILE [-l ADDR@PORT]... [-w N] [-f | -d] [-p PIDFILE] [-v]\n"
	      "             [--replace]\n"
	      "       gslbd -c FILE --check\n"
	      "  -c, --config FILE   configuration (gslbd.conf(5))\n"
	      "  -l, --listen A@P    listen on A@P instead of server.listen (repeatable)\n"
	      "  -w, --workers N     worker threads (default: server.workers)\n"
	      "  -f, --foreground    stay in the foreground (the default)\n"
	      "  -d, --daemonize     detach and log to syslog\n"
	      "  -p, --pidfile FILE  write the process id to FILE\n"
	      "  -v, --verbose       log at debug level\n"
	      "      --check         validate configuration, zones and GeoIP database, then exit\n"
	      "      --replace       take over the sockets of the gslbd serving the same\n"
	      "                      store, then let it finish its queries and exit\n"
	      "  -V, --version       print the version\n", f);
}

/* Parses the command line into @o.  Returns -1 to go on, or the exit
 * status (0 for --version and --help, 2 for a bad command line). */
static int parse_args(int argc, char **argv, daemon_opts_t *o)
{
	static const struct option lopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "listen", required_argument, NULL, 'l' },
		{ "workers", required_argument, NULL, 'w' },
		{ "foreground", no_argument, NULL, 'f' },
		{ "daemonize", no_argument, NULL, 'd' },
		{ "pidfile", required_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "check", no_argument, NULL, 'C' },
		{ "replace", no_argument, NULL, 'R' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int ch;
	o->listen = xcalloc((size_t)argc, sizeof(*o->listen));
	while ((ch = getopt_long(argc, argv, "c:l:w:fdp:vVh", lopts, NULL)) != -1) {
		switch (ch) {
		case 'c': o->conf_path = optarg; break;
		case 'l': o->listen[o->nlisten++] = optarg; break;
		case 'w': {
			char *end;
			long n = strtol(optarg, &end, 10);
			if (*end || n < 1 || n > 256) {
				fprintf(stderr, "gslbd: -w %s: workers must be 1 to 256\n", optarg);
				return 2;
			}
			o->workers = (unsigned)n;
			break;
		}
		case 'f': o->daemonize = 0; break;
		case 'd': o->daemonize = 1; break;
		case 'p': o->pidfile = optarg; break;
		case 'v': o->verbose = 1; break;
		case 'C': o->check = 1; break;
		case 'R': o->replace = 1; break;
		case 'V': printf("gslbd %s\n", PACKAGE_VERSION); return 0;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "gslbd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return 2;
	}
	return -1;
}

int main(int argc, char **argv)
{
	/* Static: the daemon points here for the life of the process (reload
	 * reads it), and so does the listen array on every exit path. */
	static daemon_opts_t o = { .conf_path = "/etc/gslbd/gslbd.conf" };
	int rc = parse_args(argc, argv, &o);
	if (rc >= 0)
		return rc;
	rc = daemon_main(argc, argv, &o);
	free(o.listen);
	return rc;
}
