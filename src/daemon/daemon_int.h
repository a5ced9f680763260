/* SPDX-License-Identifier: MIT */
/* What the files of daemon/ share: the process's state and the calls
 * between its concerns (start.c: start-up, the main loop and shut-down;
 * reload.c; retention.c; signals.c with the watchdog; process.c:
 * privileges, -d, the store lock and the pid file; replace.c: the
 * hand-over of --replace and SIGUSR2; control.c: the control socket;
 * sample.c: the statistics endpoint's view).  Not for use outside this
 * folder.
 *
 * Thread safety: main thread only, unless said otherwise; the globals
 * are set at start-up and by the main loop's handlers. */
#ifndef GSLB_DAEMON_INT_H
#define GSLB_DAEMON_INT_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "api/api.h"
#include "cluster/cluster.h"
#include "cluster/cookie_share.h"
#include "common/conf.h"
#include "daemon/daemon.h"
#include "dns/dnstap.h"
#include "dns/rrl.h"
#include "dns/worker.h"
#include "health/health.h"
#include "stats/expo.h"
#include "stats/stats.h"
#include "store/weightdb.h"

/* start.c: the running daemon. */
extern conf_t *g_conf;              /* the configuration in force */
extern worker_t *g_workers;         /* g_nworkers of them */
extern weightdb_t *g_db;
extern health_t *g_health;          /* NULL once handed over */
extern unsigned g_nworkers;
extern const daemon_opts_t *g_opts; /* the command line */
extern stats_t *g_stats;            /* NULL once handed over */
extern api_t *g_api;                /* NULL once handed over */
extern cluster_t *g_cluster;        /* NULL: standalone */
extern cookie_share_t *g_cookie_share; /* NULL: standalone, or a secret
                                          file, or cookies off */
extern dnstap_conf_t g_dnstap_conf; /* as applied at start */
extern int64_t g_started;           /* time of the start */
extern int g_draining;              /* handed over (--replace): finishing */

/** Reads the configuration of @o (its file, with the command line's
 * listen addresses and workers).  Returns it (the caller frees it with
 * conf_free()), or NULL with the reason in @err. */
conf_t *daemon__load_conf(const daemon_opts_t *o, char *err, size_t errlen);

/* reload.c: SIGHUP. */

/** The rrl section of @c for the running workers into *@out.  Returns
 * 0, or an error with @err. */
int daemon__load_rrl(const conf_t *c, rrl_t **out, char *err, size_t errlen);

/** Tells systemd that the daemon serves, with @what as its status. */
void daemon__notify_ready(const char *what);

/** The reload of SIGHUP: the configuration and zones read again, every
 * change applied or named as needing a restart, systemd told. */
void daemon__reload(void);

/* retention.c: trimming and flushing the store. */
extern int g_trim_due;              /* trim at the next second (main loop) */

/** Takes the retention settings of the health and steer sections of
 * @hc for the trims to come. */
void daemon__keep_set(const health_conf_t *hc);

/** The main loop's timer, once a second: the store's retention trim,
 * room for health decisions, and the flush to disk. */
void daemon__on_sync(uv_timer_t *t);

/* signals.c: signals and the watchdog. */
extern uint64_t g_watchdog_usec;    /* WatchdogSec= of the unit, 0: none */

/** Whether the health thread has run within @max_age seconds (1), or
 * why not in @why (0).  1 when there is no health thread. */
int daemon__health_alive_why(int64_t max_age, char *why, size_t whylen);

/** The watchdog's timer: WATCHDOG=1 while every thread runs. */
void daemon__on_watchdog(uv_timer_t *t);

/** SIGHUP (reload), SIGUSR2 (replace), SIGTERM and SIGINT (stop). */
void daemon__on_signal(uv_signal_t *h, int signum);

/* process.c: privileges, -d, the store lock, the pid file. */
extern int g_lock_fd;               /* DB/gslbd.lock, held; -1: none */

/** Switches to @user (server.user; NULL or empty: stays).  Returns 0
 * or -1 after logging why. */
int daemon__drop_privileges(const char *user);

/** Raises the soft open-file limit to what @tcp_max_clients connections
 * and the rest need, as far as the hard limit goes.  Returns how many
 * TCP connections fit: @tcp_max_clients, or fewer (logged) when the
 * limit stays under the need. */
unsigned daemon__raise_nofile(unsigned tcp_max_clients);

/** -d: forks; the parent waits for daemon__daemonize_ready() of the
 * child and exits with its status.  Returns 0 in the child, or -1. */
int daemon__daemonize_begin(void);

/** -d: the child serves; the parent is told, the terminal left. */
void daemon__daemonize_ready(void);

/** Writes our pid into the lock file of the store in @dir. */
void daemon__lock_write_pid(const char *dir);

/** Takes the lock of the store in @dir (one daemon per store).  Returns
 * 0, or -1 after logging why (another daemon has it). */
int daemon__lock_store(const char *dir);

/** Writes our pid into @path.  Returns 0 or -1 after logging why. */
int daemon__write_pidfile(const char *path);

/** Whether the pid file @path names this process. */
int daemon__pidfile_is_ours(const char *path);

/* replace.c: the hand-over (--replace, SIGUSR2). */
extern int *g_adopt;                /* sockets handed over (slot -1: taken) */
extern size_t g_nadopt;
extern int g_hand_fd;               /* the replacing process, while it takes over */
extern uv_poll_t *g_hand_poll;
extern int g_new_pid;               /* the replacing process's pid */
extern uv_timer_t g_drain_timer;    /* running once handed over */
extern char **g_argv;               /* the command line, for SIGUSR2 */
extern int g_argc;
extern char g_exe[4096];            /* readlink /proc/self/exe at start */
extern uv_process_t *g_child;       /* the replacement SIGUSR2 started */

/** --replace: takes the sockets and the store lock of the gslbd serving
 * @dir.  Returns 0, 1 when no gslbd answers there (start as usual), or
 * -1 after logging why. */
int daemon__replace_take(const char *dir);

/** --replace, once our workers read the sockets: the old daemon stops
 * listening; the lock and the control socket are ours. */
void daemon__replace_finish(void);

/** Old side: drops the connection of a replacing process. */
void daemon__hand_drop(void);

/** Old side: the replacing process's connection is readable. */
void daemon__on_hand(uv_poll_t *p, int status, int events);

/** Frees the handle of the replacement SIGUSR2 started, once closed. */
void daemon__child_closed(uv_handle_t *h);

/** SIGUSR2: starts this daemon's replacement on @loop. */
void daemon__replace_self(uv_loop_t *loop);

/* control.c: the control socket, DB/gslbd.ctl. */
extern int g_ctl_owned;             /* DB/gslbd.ctl is ours: unlink at exit */

/** Listens on the control socket on @loop for a replacing process. */
void daemon__ctl_start(uv_loop_t *loop);

/** Stops listening on the control socket (nothing when not). */
void daemon__ctl_stop(void);

/* sample.c: the statistics endpoint's view (stats_provider_t). */

/** Whether every thread runs (1), or why not in @why (0). */
int daemon__healthy(char *why, size_t whylen, void *arg);

/** Renders the daemon's sample into @e (a scrape). */
void daemon__metrics(expo_t *e, void *arg);

#endif
