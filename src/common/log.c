/* SPDX-License-Identifier: MIT */
/* Levelled logging to stderr or syslog, with suppression of repeats. */
#include "common/log.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

static int log_level = GSLB_LOG_INFO;
static int log_syslog;

/* Repeat suppression: an identical line within 10 s of the previous one is
 * counted, not written; the count is reported with the next different
 * line.  The mutex guards only this small state, never the query path. */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char log_last[512];
static time_t log_last_time;
static unsigned log_repeats;

static const char *const log_names[] = {
	"emerg", "alert", "crit", "error", "warning", "notice", "info", "debug"
};

void log_set_level(int level) { log_level = level; }

int log_enabled(int level) { return level <= log_level; }

void log_use_syslog(int on)
{
	log_syslog = on;
	if (on)
		openlog("gslbd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

static void log_write(int level, const char *text)
{
	if (log_syslog) {
		syslog(level, "%s", text);
		return;
	}
	char line[640];
	struct timespec ts;
	struct tm tm;
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	int n = snprintf(line, sizeof(line),
	                 "%04d-%02d-%02dT%02d:%02d:%02d gslbd[%d]: %s: %s\n",
	                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
	                 tm.tm_hour, tm.tm_min, tm.tm_sec, (int)getpid(),
	                 log_names[level & 7], text);
	if (n > (int)sizeof(line) - 1)
		n = sizeof(line) - 1, line[n - 1] = '\n';
	ssize_t w = write(STDERR_FILENO, line, (size_t)n);
	(void)w;
}

void log_vmsg(int level, const char *fmt, va_list ap)
{
	if (!log_enabled(level))
		return;
	char text[512];
	vsnprintf(text, sizeof(text), fmt, ap);
	time_t now = time(NULL);

	pthread_mutex_lock(&log_lock);
	if (strcmp(text, log_last) == 0 && now - log_last_time < 10) {
		log_repeats++;
		pthread_mutex_unlock(&log_lock);
		return;
	}
	if (log_repeats) {
		char rep[64];
		snprintf(rep, sizeof(rep), "last message repeated %u times",
		         log_repeats);
		log_write(level, rep);
		log_repeats = 0;
	}
	memcpy(log_last, text, sizeof(log_last));
	log_last_time = now;
	log_write(level, text);
	pthread_mutex_unlock(&log_lock);
}

void log_msg(int level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}
