/* SPDX-License-Identifier: MIT */
/* Levelled logging to stderr, syslog or the journal, with suppression of
 * repeats. */
#include "common/log.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <systemd/sd-journal.h>
#include <time.h>
#include <unistd.h>

/* The targets and the most verbose level among them.  Both change only
 * under log_lock; log_max is read without it by log_enabled() (relaxed
 * atomics: a stale value for one line is harmless, a torn one is not
 * possible, and ThreadSanitizer sees the intent). */
static log_target_t log_targets[LOG_MAX_TARGETS] = {
	{ LOG_TARGET_STDERR, GSLB_LOG_INFO, 0 }
};
static size_t log_ntargets = 1;
static int log_max = GSLB_LOG_INFO;
static int log_syslog_open;
static int log_journal_stream = -1;  /* stderr is journald's: unknown yet */

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

int log_level_parse(const char *name)
{
	for (int l = GSLB_LOG_ERR; l <= GSLB_LOG_DEBUG; l++)
		if (strcmp(name, log_names[l]) == 0)
			return l;
	return -1;
}

/* Call with log_lock held. */
static void update_max(void)
{
	int max = 0;
	for (size_t i = 0; i < log_ntargets; i++) {
		if (log_targets[i].level > max)
			max = log_targets[i].level;
		if (log_targets[i].kind == LOG_TARGET_SYSLOG && !log_syslog_open) {
			openlog("gslbd", LOG_PID | LOG_NDELAY, LOG_DAEMON);
			log_syslog_open = 1;
		}
	}
	__atomic_store_n(&log_max, max, __ATOMIC_RELAXED);
}

void log_configure(const log_target_t *t, size_t n)
{
	if (n > LOG_MAX_TARGETS)
		n = LOG_MAX_TARGETS;
	pthread_mutex_lock(&log_lock);
	memcpy(log_targets, t, n * sizeof(*t));
	log_ntargets = n;
	update_max();
	pthread_mutex_unlock(&log_lock);
}

void log_set_level(int level)
{
	pthread_mutex_lock(&log_lock);
	for (size_t i = 0; i < log_ntargets; i++)
		log_targets[i].level = level;
	update_max();
	pthread_mutex_unlock(&log_lock);
}

int log_enabled(int level)
{
	return level <= __atomic_load_n(&log_max, __ATOMIC_RELAXED);
}

void log_use_syslog(int on)
{
	if (!on)
		return;
	pthread_mutex_lock(&log_lock);
	for (size_t i = 0; i < log_ntargets; i++)
		if (log_targets[i].kind == LOG_TARGET_STDERR)
			log_targets[i].kind = LOG_TARGET_SYSLOG;
	update_max();
	pthread_mutex_unlock(&log_lock);
}

/* Whether stderr is the stream journald gave us (systemd sets
 * JOURNAL_STREAM to "DEVICE:INODE" of it; a redirected stderr keeps the
 * variable but not the file). */
static int journal_stream(void)
{
	if (log_journal_stream >= 0)
		return log_journal_stream;
	log_journal_stream = 0;
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	if (js && sscanf(js, "%llu:%llu", &dev, &ino) == 2 &&
	    fstat(STDERR_FILENO, &st) == 0 &&
	    (unsigned long long)st.st_dev == dev &&
	    (unsigned long long)st.st_ino == ino)
		log_journal_stream = 1;
	return log_journal_stream;
}

static void write_stderr(int level, int local, const char *text)
{
	char line[640];
	int n;
	if (journal_stream()) {
		/* journald stamps the time itself. */
		n = snprintf(line, sizeof(line), "<%d>%s: %s\n", level,
		             log_names[level & 7], text);
	} else {
		struct timespec ts;
		struct tm tm;
		char stamp[40];
		clock_gettime(CLOCK_REALTIME, &ts);
		if (local) {
			localtime_r(&ts.tv_sec, &tm);
			strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S%z", &tm);
			/* RFC 3339 wants the offset as +08:00. */
			size_t l = strlen(stamp);
			if (l >= 5) {
				memmove(stamp + l - 1, stamp + l - 2, 3);
				stamp[l - 2] = ':';
			}
		} else {
			gmtime_r(&ts.tv_sec, &tm);
			strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
		}
		n = snprintf(line, sizeof(line), "%s gslbd[%d]: %s: %s\n", stamp,
		             (int)getpid(), log_names[level & 7], text);
	}
	if (n > (int)sizeof(line) - 1)
		n = sizeof(line) - 1, line[n - 1] = '\n';
	ssize_t w = write(STDERR_FILENO, line, (size_t)n);
	(void)w;
}

/* Call with log_lock held. */
static void log_write(int level, const char *text)
{
	for (size_t i = 0; i < log_ntargets; i++) {
		const log_target_t *t = &log_targets[i];
		if (level > t->level)
			continue;
		switch (t->kind) {
		case LOG_TARGET_SYSLOG:
			syslog(level, "%s", text);
			break;
		case LOG_TARGET_JOURNAL:
			sd_journal_send("MESSAGE=%s", text, "PRIORITY=%d", level,
			                "SYSLOG_IDENTIFIER=gslbd", NULL);
			break;
		default:
			write_stderr(level, t->local_time, text);
		}
	}
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
