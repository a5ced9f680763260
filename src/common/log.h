/* SPDX-License-Identifier: MIT */
/* Levelled logging to stderr, syslog or the systemd journal, with
 * suppression of repeats.
 *
 * Several targets may be active at once, each with its own level (the
 * `log:` section of gslbd.conf).  On stderr a line carries a UTC
 * timestamp ending in Z (or the local time with its offset), unless
 * stderr is the journal's own stream (JOURNAL_STREAM names it): then the
 * line starts with the syslog priority "<N>" instead, which journald
 * reads, so `journalctl -p err` filters gslbd's lines.
 *
 * Thread safety: every function may be called from any thread; a line is
 * written with one write(2), so lines from different threads never mix.
 * Never log per packet above GSLB_LOG_DEBUG. */
#ifndef GSLB_LOG_H
#define GSLB_LOG_H

#include <stdarg.h>
#include <stddef.h>

enum {
	GSLB_LOG_ERR = 3,
	GSLB_LOG_WARNING = 4,
	GSLB_LOG_NOTICE = 5,
	GSLB_LOG_INFO = 6,
	GSLB_LOG_DEBUG = 7,
};

typedef enum {
	LOG_TARGET_STDERR = 0,
	LOG_TARGET_SYSLOG,        /* syslog(3), ident "gslbd", facility daemon */
	LOG_TARGET_JOURNAL,       /* sd_journal_send(3), SYSLOG_IDENTIFIER=gslbd */
} log_target_kind_t;

#define LOG_MAX_TARGETS 4

/** One place lines go to. */
typedef struct log_target {
	log_target_kind_t kind;
	int level;                /* the most verbose level written there */
	int local_time;           /* stderr: local time with offset, not UTC */
} log_target_t;

/** Replaces the targets by the @n (at most LOG_MAX_TARGETS) of @t.  The
 * default, before any call, is stderr at GSLB_LOG_INFO in UTC. */
void log_configure(const log_target_t *t, size_t n);
/** Sets the level of every target (gslbd -v, gslbctl). */
void log_set_level(int level);
/** Sends what goes to stderr to syslog instead (gslbd -d detaches from
 * the terminal). */
void log_use_syslog(int on);
/** Returns non-zero if lines at @level would be written somewhere. */
int log_enabled(int level);
/** Parses a level name (error, warning, notice, info, debug); returns
 * the level or -1. */
int log_level_parse(const char *name);
/** Writes one line; printf format, no trailing newline needed. */
void log_msg(int level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void log_vmsg(int level, const char *fmt, va_list ap);

#define log_err(...)     log_msg(GSLB_LOG_ERR, __VA_ARGS__)
#define log_warning(...) log_msg(GSLB_LOG_WARNING, __VA_ARGS__)
#define log_notice(...)  log_msg(GSLB_LOG_NOTICE, __VA_ARGS__)
#define log_info(...)    log_msg(GSLB_LOG_INFO, __VA_ARGS__)
#define log_debug(...) \
	do { if (log_enabled(GSLB_LOG_DEBUG)) \
		log_msg(GSLB_LOG_DEBUG, __VA_ARGS__); } while (0)

#endif
