/* SPDX-License-Identifier: MIT */
/* Levelled logging to stderr or syslog, with suppression of repeats.
 *
 * Thread safety: every function may be called from any thread; a line is
 * written with one write(2), so lines from different threads never mix.
 * Never log per packet above GSLB_LOG_DEBUG. */
#ifndef GSLB_LOG_H
#define GSLB_LOG_H

#include <stdarg.h>

enum {
	GSLB_LOG_ERR = 3,
	GSLB_LOG_WARNING = 4,
	GSLB_LOG_NOTICE = 5,
	GSLB_LOG_INFO = 6,
	GSLB_LOG_DEBUG = 7,
};

/** Sets the most verbose level written (default GSLB_LOG_INFO). */
void log_set_level(int level);
/** Sends lines to syslog (ident "gslbd") instead of stderr. */
void log_use_syslog(int on);
/** Returns non-zero if lines at @level would be written. */
int log_enabled(int level);
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
