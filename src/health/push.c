/* SPDX-License-Identifier: MIT */
/* One `metrics push` validated and written into a store transaction
 * (push.h): health metrics, steering inputs and spend. */
#include "health/push.h"
#include "common/num.h"
#include "health/cutover.h"
#include "health/score.h"
#include "steer/steer_rec.h"
#include "common/util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Longest metric name of a health push. */
#define METRIC_NAME_MAX 64

int push_valid_word(const char *s, int star_ok)
{
	if (star_ok && strcmp(s, "*") == 0)
		return 1;
	size_t n = strlen(s);
	if (n == 0 || n >= PUSH_WORD_MAX)
		return 0;
	for (const char *p = s; *p; p++)
		if (!(islower((unsigned char)*p) || isdigit((unsigned char)*p) ||
		      *p == '-' || *p == '_' || *p == '.'))
			return 0;
	return 1;
}

/* Whether @s names a feeder (--from): 1 to PUSH_FROM_MAX - 1 printable
 * characters without spaces, such as "prometheus:edge" or "feeder-1". */
static int valid_from(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n >= PUSH_FROM_MAX)
		return 0;
	for (const char *p = s; *p; p++)
		if (!isgraph((unsigned char)*p))
			return 0;
	return 1;
}

/* The inputs of a steering or spend push (S3-2, S3-6), KEY=VALUE with a
 * VALUE from 0 to hi: the one table that parses them, tells them from
 * health metrics and lists them in errors. */
typedef enum { IN_SUCCESS, IN_LATENCY, IN_BYTES, IN_SPENT, IN_COUNT } input_t;
static const struct {
	const char *name;
	double hi;
} inputs[IN_COUNT] = {
	[IN_SUCCESS] = { "success", 100 },      /* percent of requests */
	[IN_LATENCY] = { "latency", 600000 },   /* ms */
	[IN_BYTES] = { "bytes", 1e18 },         /* served since the last push */
	[IN_SPENT] = { "spent", 1e15 },         /* a provider's spend */
};

/* The input that word @a (KEY=VALUE) gives, or -1. */
static int input_of(const char *a)
{
	for (int i = 0; i < IN_COUNT; i++) {
		size_t l = strlen(inputs[i].name);
		if (strncmp(a, inputs[i].name, l) == 0 && a[l] == '=')
			return i;
	}
	return -1;
}

/* Appends to @buf (of @size) the names of the inputs [@from, @to) as
 * "success=, latency=" (@eq) or "success, latency". */
static void input_list(char *buf, size_t size, int from, int to, int eq)
{
	for (int i = from; i < to; i++) {
		size_t l = strlen(buf);
		snprintf(buf + l, size - l, "%s%s%s", i > from ? ", " : "", inputs[i].name,
		         eq ? "=" : "");
	}
}

/* The error of a push: its text into @err, GSLB_EINVAL. */
static int bad(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return GSLB_EINVAL;
}

/* Error @rc of a push, the word @i of its argv at fault noted in *@word
 * (when asked for: push_apply_word()). */
static int at_word(int *word, int i, int rc)
{
	if (word)
		*word = i;
	return rc;
}

/* Writes @val (which it takes) under (@kind, @key). */
static int put(wdb_txn_t *t, wdb_kind_t kind, const char *key, json_t *val,
               char *err, size_t errlen)
{
	int rc = wdb_set(t, kind, key, val);
	json_decref(val);
	if (rc)
		snprintf(err, errlen, "writing %s: %s; nothing was changed", key,
		         wdb_strerror(rc));
	return rc;
}

int push_parse_real(const char *cmd, const char *what, const char *v, double lo,
                    double hi, double *out, char *err, size_t errlen)
{
	const num_range_t r = { lo, hi, 0, NULL, NULL };
	if (num_parse(v, &r, out, NULL))
		return bad(err, errlen, "%s: %s %s: give a number from %g to %g", cmd, what,
		           v, lo, hi);
	return 0;
}

int push_parse_time(const char *cmd, const char *opt, const char *v, uint32_t *out,
                    char *err, size_t errlen)
{
	time_t t;
	if (cutover_parse_time(v, &t) == 0 && t >= 0) {
		*out = (uint32_t)t;
		return 0;
	}
	if (!isdigit((unsigned char)v[0]))
		return bad(err, errlen, "%s: %s %s: use RFC 3339 (2026-12-01T02:00:00Z) or "
		           "unix time", cmd, opt, v);
	const num_range_t r = { 0, INT32_MAX, NUM_WHOLE, NULL, NULL };
	double n;
	if (num_parse(v, &r, &n, NULL))
		return bad(err, errlen, "%s %s: must be a whole number from 0 to %ld", opt, v,
		           (long)INT32_MAX);
	*out = (uint32_t)n;
	return 0;
}

/* A pushed time as RFC 3339 into @buf. */
static const char *time_text(uint32_t t, char *buf, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;
	if (!gmtime_r(&tt, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, size, "%u", t);
	return buf;
}

/* S2-7, S3-9: a sample is dated by the clock of the host that takes it
 * in (@now).  Refuses time @at (of --at @text) more than @skew seconds
 * ahead of it, which would read as a measurement of now for as long as
 * it stays ahead, and, when @keep > 0, older than @keep, which no window
 * could ever read.  Returns 0 or GSLB_EINVAL with the time and the
 * limit in @err. */
static int check_time(const char *text, uint32_t at, uint32_t now, double keep,
                      double skew, char *err, size_t errlen)
{
	char t[40], n[40];
	if ((double)at > (double)now + skew)
		return bad(err, errlen, "metrics push: --at %s (%s) is %.0f s ahead of this "
		           "host's clock (%s); steer clock-skew allows %g s: fix the feeder's "
		           "clock or its time; nothing was stored", text,
		           time_text(at, t, sizeof(t)), (double)at - now,
		           time_text(now, n, sizeof(n)), skew);
	if (keep > 0 && (double)at < (double)now - keep)
		return bad(err, errlen, "metrics push: --at %s (%s) is %.0f s old: older "
		           "than the %g s the steering windows read (the longest steer window "
		           "or steer stale), so it could never count; nothing was stored",
		           text, time_text(at, t, sizeof(t)), (double)now - at, keep);
	return 0;
}

/* The steering input record @key in @t, or a new empty one. */
static json_t *input_record(wdb_txn_t *t, const char *key)
{
	json_t *rec = wdb_get(t, WDB_STEERIN, key);
	return rec ? rec : json_object();
}

/* The spend record of provider @name for the budget period holding @at
 * (its key into @key), or a new one, stamped with the end of that
 * period: its retention (steer.spend-keep) counts from there (S3-6). */
static json_t *spend_record(wdb_txn_t *t, const char *name, uint32_t at, char *key,
                            size_t size)
{
	unsigned days = steer_provider_period(t, name);
	steer_spend_key(key, size, name, days, at);
	uint32_t start, end;
	steer_period_bounds(days, at, &start, &end);
	json_t *rec = input_record(t, key);
	json_object_set_new(rec, WDB_RETAIN_FROM, json_integer(end));
	return rec;
}

/* metrics push NODE KEY=VALUE... (health metrics, S1-2). */
static int push_health(wdb_txn_t *t, int argc, char *const *argv, uint32_t now,
                       char *msg, size_t msize, char *err, size_t errlen, int *word)
{
	const char *id = argv[1];
	json_t *node = wdb_get(t, WDB_NODE, id);
	if (!node)
		return at_word(word, 1, bad(err, errlen, "metrics push: node %s does not "
		                            "exist", id));
	json_decref(node);
	json_t *m = wdb_get(t, WDB_METRICS, id);
	if (!m)
		m = json_object();
	const char *from = PUSH_FROM_DEFAULT;
	int from_at = 0;
	for (int i = 2; i + 1 < argc; i++)
		if (strcmp(argv[i], "--from") == 0)
			from = argv[from_at = i + 1];
	if (!valid_from(from)) {
		json_decref(m);
		return at_word(word, from_at, bad(err, errlen, "metrics push: --from %s: "
		               "give the feeder's name, without spaces, below %d "
		               "characters", from, PUSH_FROM_MAX));
	}
	for (int i = 2; i < argc; i++) {
		if (strcmp(argv[i], "--from") == 0) {
			if (++i == argc) {
				json_decref(m);
				return at_word(word, i - 1, bad(err, errlen, "metrics push: "
				               "--from needs a value"));
			}
			continue;
		}
		const char *eq = strchr(argv[i], '=');
		if (!eq) {
			json_decref(m);
			return at_word(word, i, bad(err, errlen, "metrics push: '%s' is not "
			                            "KEY=VALUE", argv[i]));
		}
		char name[METRIC_NAME_MAX];
		snprintf(name, sizeof(name), "%.*s", (int)(eq - argv[i]), argv[i]);
		int k = eq - argv[i] < METRIC_NAME_MAX ? score_metric_parse(name) : -1;
		if (k < 0) {
			/* Every name a push takes, from the tables that
			 * parse them: health metrics, then the inputs. */
			char known[600] = "health: ";
			for (int j = 0; j < METRIC_COUNT; j++) {
				size_t l = strlen(known);
				snprintf(known + l, sizeof(known) - l, "%s%s", j ? ", " : "",
				         score_metric_name((metric_t)j));
			}
			strcat(known, "; steering, with --region, --isp, --at: ");
			input_list(known, sizeof(known), IN_SUCCESS, IN_SPENT, 0);
			strcat(known, "; spend, with --provider: ");
			input_list(known, sizeof(known), IN_SPENT, IN_COUNT, 0);
			json_decref(m);
			return at_word(word, i, bad(err, errlen, "metrics push: unknown "
			               "metric '%.*s' (known: %s)", (int)(eq - argv[i]),
			               argv[i], known));
		}
		static const num_range_t any = { -HUGE_VAL, HUGE_VAL, 0, NULL, NULL };
		double v = 0;
		if (num_parse(eq + 1, &any, &v, NULL) || score_metric_check((metric_t)k, v)) {
			json_decref(m);
			return at_word(word, i, bad(err, errlen, "metrics push: %s=%s: value "
			                            "out of range", name, eq + 1));
		}
		json_t *e = json_pack("{s:f, s:I, s:s}", "value", v, "time", (json_int_t)now,
		                      "from", from);
		if (k == METRIC_FAILURE_RATE && v > SCORE_FAILURE_RATE_FAULT_PCT) {
			/* S1-2: remember since when the rate has been high. */
			json_t *prev = json_object_get(m, name);
			json_int_t since = json_integer_value(json_object_get(prev, "high_since"));
			json_object_set_new(e, "high_since", json_integer(since ? since : now));
		}
		json_object_set_new(m, name, e);
	}
	snprintf(msg, msize, "metrics of %s stored", id);
	return put(t, WDB_METRICS, id, m, err, errlen);
}

/* metrics push --provider NAME [--at TIME] spent=X */
static int push_spend(wdb_txn_t *t, int argc, char *const *argv, uint32_t now,
                      double skew, char *msg, size_t msize, char *err, size_t errlen,
                      int *word)
{
	const char *name = NULL, *at_text = NULL;
	int name_at = 1, at_at = 0;
	uint32_t at = now;
	double spent = NAN;
	for (int i = 1; i < argc; i++) {
		int rc = 0;
		if (strcmp(argv[i], "--provider") == 0 && i + 1 < argc)
			name = argv[name_at = ++i];
		else if (strcmp(argv[i], "--at") == 0 && i + 1 < argc) {
			at_text = argv[at_at = ++i];
			rc = push_parse_time("metrics push", "--at", at_text, &at, err, errlen);
		} else if (input_of(argv[i]) == IN_SPENT)
			rc = push_parse_real("metrics push", inputs[IN_SPENT].name,
			                     strchr(argv[i], '=') + 1, 0, inputs[IN_SPENT].hi,
			                     &spent, err, errlen);
		else
			rc = bad(err, errlen, "metrics push --provider: unexpected '%s' (usage: "
			         "metrics push --provider NAME [--at TIME] spent=AMOUNT)", argv[i]);
		if (rc)
			return at_word(word, i, rc);
	}
	if (!name || !push_valid_word(name, 0))
		return at_word(word, name_at, bad(err, errlen, "metrics push: --provider "
		               "needs a provider name like cdn-a"));
	if (isnan(spent))
		return bad(err, errlen, "metrics push --provider %s: give spent=AMOUNT", name);
	/* A past period's spend may come late (an invoice); a future one
	 * is a wrong clock. */
	if (at_text && check_time(at_text, at, now, 0, skew, err, errlen))
		return at_word(word, at_at, GSLB_EINVAL);
	char key[200];
	json_t *rec = spend_record(t, name, at, key, sizeof(key));
	json_object_set_new(rec, "pushed", json_real(spent));
	json_object_set_new(rec, "pushed_at", json_integer(at));
	snprintf(msg, msize, "spend of %s for %s stored", name, key + strlen(name) + 3);
	return put(t, WDB_STEERIN, key, rec, err, errlen);
}

/* Whether a row reads the inputs pushed for (@region, @isp) of its
 * nodes: row (R, I) reads those of (R, I), (R, *), (*, I) and (*, *)
 * (steer__row_input()), so a push fits a row when each of its region
 * and ISP is the row's or "*".  Collects the rows' pairs for the error
 * of a push that fits none. */
typedef struct {
	const char *region, *isp;
	int fits;
	unsigned shown, more;
	char list[600];
} row_fit_t;

static int part_is(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && strncmp(s, word, n) == 0;
}

static int row_fit(const char *row, void *arg)
{
	row_fit_t *f = arg;
	wdb_row_parts_t p;
	if (wdb_row_split(row, strlen(row), &p))
		return 0;
	if ((strcmp(f->region, "*") == 0 || part_is(p.region, p.region_len, f->region)) &&
	    (strcmp(f->isp, "*") == 0 || part_is(p.isp, p.isp_len, f->isp))) {
		f->fits = 1;
		return 1;
	}
	/* The options that push for this row: its region and ISP, each
	 * left out where the row has "*"; a (*, *) row takes only pushes
	 * for the node as a whole. */
	char opt[200] = "";
	int any_r = part_is(p.region, p.region_len, "*");
	int any_i = part_is(p.isp, p.isp_len, "*");
	if (any_r && any_i)
		return 0;
	snprintf(opt, sizeof(opt), "%s%.*s%s%s%.*s", any_r ? "" : "--region ",
	         any_r ? 0 : (int)p.region_len, p.region, !any_r && !any_i ? " " : "",
	         any_i ? "" : "--isp ", any_i ? 0 : (int)p.isp_len, p.isp);
	/* Distinct pairs: the same pair in several services once. */
	size_t ol = strlen(opt), l = strlen(f->list);
	for (const char *q = f->list; (q = strstr(q, opt)); q += ol)
		if ((q[ol] == ',' || q[ol] == 0) && (q == f->list || q[-1] == ' '))
			return 0;
	if (f->shown == 8 || l + ol + 3 >= sizeof(f->list)) {
		f->more++;
		return 0;
	}
	snprintf(f->list + l, sizeof(f->list) - l, "%s%s", l ? ", " : "", opt);
	f->shown++;
	return 0;
}

/* S3-9: inputs are kept per region and ISP for the rows that read
 * them; a push that no row of node @id reads would be stored and never
 * used, so it is refused with the pairs the node's rows can take. */
static int push_fits_rows(wdb_txn_t *t, const char *id, const char *region,
                          const char *isp, char *err, size_t errlen)
{
	if (strcmp(region, "*") == 0 && strcmp(isp, "*") == 0)
		return 0;
	row_fit_t f = { .region = region, .isp = isp };
	if (wdb_node_rows(t, id, row_fit, &f) < 0)
		return bad(err, errlen, "metrics push: cannot read the rows of node %s", id);
	if (f.fits)
		return 0;
	char what[100], more[40] = "";
	if (strcmp(region, "*") && strcmp(isp, "*"))
		snprintf(what, sizeof(what), "region %s, ISP %s", region, isp);
	else
		snprintf(what, sizeof(what), strcmp(region, "*") ? "region %s" : "ISP %s",
		         strcmp(region, "*") ? region : isp);
	if (f.more)
		snprintf(more, sizeof(more), " and %u more", f.more);
	if (!f.shown)
		return bad(err, errlen, "metrics push: node %s is in no row for %s, nor in "
		           "any row of one region or ISP: push for the node as a whole "
		           "(without --region and --isp)", id, what);
	return bad(err, errlen, "metrics push: node %s is in no row for %s; push for "
	           "one of its rows (%s%s) or for the node as a whole (without "
	           "--region and --isp)", id, what, f.list, more);
}

/* metrics push NODE [--region R] [--isp I] [--at T] success= latency=
 * bytes= (steering inputs, S3-2, S3-6). */
static int push_steer(wdb_txn_t *t, int argc, char *const *argv, uint32_t now,
                      double keep, double skew, char *msg, size_t msize, char *err,
                      size_t errlen, int *word)
{
	const char *id = argv[1], *region = "*", *isp = "*", *at_text = NULL;
	const char *from = PUSH_FROM_DEFAULT;
	int region_at = 0, isp_at = 0, at_at = 0, bytes_at = 0;
	uint32_t at = now;
	double val[IN_COUNT] = { NAN, NAN, NAN, NAN };
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		int rc = 0;
		if (strncmp(a, "--", 2) == 0 && !v)
			return at_word(word, i, bad(err, errlen, "metrics push: %s needs a "
			                            "value", a));
		int is_region = strcmp(a, "--region") == 0, k = input_of(a);
		if (is_region || strcmp(a, "--isp") == 0) {
			if (!push_valid_word(v, 0))
				return at_word(word, i + 1, bad(err, errlen, "metrics push: %s %s: "
				               "use a short lowercase name like %s", a, v,
				               is_region ? "cn-bj" : "ctcc"));
			*(is_region ? &region : &isp) = v;
			*(is_region ? &region_at : &isp_at) = ++i;
		} else if (strcmp(a, "--at") == 0) {
			rc = push_parse_time("metrics push", "--at", v, &at, err, errlen);
			at_text = v;
			at_at = ++i;
		} else if (strcmp(a, "--from") == 0) {
			if (!valid_from(v))
				rc = bad(err, errlen, "metrics push: --from %s: give the feeder's "
				         "name, without spaces, below %d characters", v,
				         PUSH_FROM_MAX);
			from = v;
			i++;
		} else if (k == IN_SPENT) {
			rc = bad(err, errlen, "metrics push: spent= belongs to a provider: metrics "
			         "push --provider NAME spent=AMOUNT");
		} else if (k >= 0) {
			bytes_at = k == IN_BYTES ? i : bytes_at;
			rc = push_parse_real("metrics push", inputs[k].name,
			                     a + strlen(inputs[k].name) + 1, 0, inputs[k].hi,
			                     &val[k], err, errlen);
		} else {
			char names[200] = "";
			input_list(names, sizeof(names), IN_SUCCESS, IN_SPENT, 1);
			rc = bad(err, errlen, "metrics push: '%s' cannot go with %s, --region, "
			         "--isp or --at (push health metrics on their own)", a, names);
		}
		if (rc)
			return at_word(word, i, rc);
	}
	double success = val[IN_SUCCESS], latency = val[IN_LATENCY], bytes = val[IN_BYTES];
	if (isnan(success) && isnan(latency) && isnan(bytes))
		return bad(err, errlen, "metrics push: give success=, latency= or bytes=");
	/* Bytes alone only add to a period's spend, which may come late. */
	if (at_text && check_time(at_text, at, now,
	                          isnan(success) && isnan(latency) ? 0 : keep, skew, err,
	                          errlen))
		return at_word(word, at_at, GSLB_EINVAL);
	json_t *node = wdb_get(t, WDB_NODE, id);
	if (!node)
		return at_word(word, 1, bad(err, errlen, "metrics push: node %s does not "
		                            "exist", id));
	int rc = push_fits_rows(t, id, region, isp, err, errlen);
	if (rc) {
		json_decref(node);
		return at_word(word, region_at ? region_at : isp_at, rc);
	}
	if (!isnan(bytes)) {
		/* S3-6: spend derived from the bytes served times the price. */
		const char *prov = json_string_value(json_object_get(node, "provider"));
		json_t *cost = json_object_get(node, "cost_per_gb");
		if (!prov || !json_is_number(cost)) {
			json_decref(node);
			return at_word(word, bytes_at, bad(err, errlen, "metrics push: bytes= "
			               "needs node %s to have --provider and --cost-per-gb "
			               "(node set %s --provider NAME --cost-per-gb PRICE)",
			               id, id));
		}
		char key[200];
		json_t *rec = spend_record(t, prov, at, key, sizeof(key));
		double was = json_number_value(json_object_get(rec, "derived"));
		json_object_set_new(rec, "derived",
		                    json_real(was + bytes / 1e9 * json_number_value(cost)));
		rc = put(t, WDB_STEERIN, key, rec, err, errlen);
	}
	json_decref(node);
	if (!rc && (!isnan(success) || !isnan(latency))) {
		char key[300];
		snprintf(key, sizeof(key), "n|%s|%s|%s", id, region, isp);
		json_t *rec = input_record(t, key);
		steer_sample_add(rec, at, success, latency, now, keep, skew);
		/* Where the newest sample came from: explain and steer show
		 * name it. */
		json_object_set_new(rec, "from", json_string(from));
		/* Refreshed now: steer.input-keep counts from here. */
		json_object_set_new(rec, WDB_RETAIN_FROM, json_integer(now));
		rc = put(t, WDB_STEERIN, key, rec, err, errlen);
	}
	if (!rc)
		snprintf(msg, msize, "metrics of %s for region %s, ISP %s stored", id, region,
		         isp);
	return rc;
}

int push_words(json_t *line, char **argv, int max)
{
	int argc = 0;
	argv[argc++] = "push";
	size_t j;
	json_t *w;
	json_array_foreach(line, j, w)
		if (argc < max && json_is_string(w))
			argv[argc++] = (char *)json_string_value(w);
	return argc;
}

int push_apply(wdb_txn_t *t, int argc, char *const *argv, uint32_t now,
               double keep, double skew, char *msg, size_t msize, char *err,
               size_t errlen)
{
	return push_apply_word(t, argc, argv, now, keep, skew, msg, msize, err, errlen,
	                       NULL);
}

int push_apply_word(wdb_txn_t *t, int argc, char *const *argv, uint32_t now,
                    double keep, double skew, char *msg, size_t msize, char *err,
                    size_t errlen, int *word)
{
	if (word)
		*word = 0;
	if (argc < 3)
		return bad(err, errlen, "metrics push: give a node and at least one KEY=VALUE");
	int steer = strcmp(argv[1], "--provider") == 0;
	for (int i = 2; i < argc && !steer; i++) {
		if (strcmp(argv[i], "--from") == 0) {   /* either kind of push */
			i++;
			continue;
		}
		steer = strncmp(argv[i], "--", 2) == 0 || input_of(argv[i]) >= 0;
	}
	if (strcmp(argv[1], "--provider") == 0)
		return push_spend(t, argc, argv, now, skew, msg, msize, err, errlen, word);
	if (steer)
		return push_steer(t, argc, argv, now, keep, skew, msg, msize, err, errlen,
		                  word);
	return push_health(t, argc, argv, now, msg, msize, err, errlen, word);
}
