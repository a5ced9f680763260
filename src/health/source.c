/* SPDX-License-Identifier: MIT */
/* Pull sources of steering and health inputs: steer.sources read from
 * the configuration, Prometheus answers turned into push lines, and the
 * thread that fetches and writes them (source.h). */
#include "config.h"
#include "health/source.h"
#include "health/push.h"
#include "health/score.h"
#include "common/log.h"
#include "common/util.h"

#include <curl/curl.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The inputs a query may give besides the health metrics: the steering
 * inputs of a region and ISP (push.c's success=, latency=, bytes=). */
static const char *const steer_inputs[] = { "success", "latency", "bytes", NULL };

static int is_steer_input(const char *input)
{
	for (int i = 0; steer_inputs[i]; i++)
		if (strcmp(input, steer_inputs[i]) == 0)
			return 1;
	return 0;
}

int source_input_known(const char *input)
{
	return is_steer_input(input) || score_metric_parse(input) >= 0;
}

/* Configuration ----------------------------------------------------- */

/* A scalar @v of @what into @dst (of @size): non-empty, shorter than
 * @size. */
static int read_text(const conf_t *c, const ynode_t *v, const char *what, char *dst,
                     size_t size, char *err, size_t errlen)
{
	if (v->kind != YNODE_SCALAR || !v->value || !v->value[0])
		return conf_sfail(c, v, err, errlen, "steer sources: %s must be a non-empty "
		                  "string", what);
	if (strlen(v->value) >= size)
		return conf_sfail(c, v, err, errlen, "steer sources: %s is longer than %zu "
		                  "characters", what, size - 1);
	memcpy(dst, v->value, strlen(v->value) + 1);
	return 0;
}

static int read_queries(const conf_t *c, const ynode_t *v, source_def_t *d, char *err,
                        size_t errlen)
{
	if (v->kind != YNODE_MAP || v->n < 1 || v->n > SOURCE_QUERIES_MAX)
		return conf_sfail(c, v, err, errlen, "steer sources %s: queries must map 1 to "
		                  "%d inputs to PromQL expressions", d->name, SOURCE_QUERIES_MAX);
	for (size_t i = 0; i < v->n; i++) {
		const char *in = v->keys[i]->value;
		if (!source_input_known(in)) {
			char known[400] = "success, latency, bytes";
			for (int m = 0; m < METRIC_COUNT; m++) {
				size_t l = strlen(known);
				snprintf(known + l, sizeof(known) - l, ", %s",
				         score_metric_name((metric_t)m));
			}
			return conf_sfail(c, v->keys[i], err, errlen, "steer sources %s: unknown "
			                  "input '%s' (known: %s)", d->name, in, known);
		}
		source_query_t *q = &d->q[d->nq++];
		snprintf(q->input, sizeof(q->input), "%s", in);
		if (read_text(c, v->items[i], in, q->promql, sizeof(q->promql), err, errlen))
			return -1;
	}
	return 0;
}

static int read_source(const conf_t *c, const ynode_t *m, const source_conf_t *all,
                       source_def_t *d, char *err, size_t errlen)
{
	static const char *const keys[] = { "name", "url", "interval", "timeout",
		"node-label", "region-label", "isp-label", "queries", NULL };
	if (m->kind != YNODE_MAP)
		return conf_sfail(c, m, err, errlen, "steer sources: each source must be a map "
		                  "with name, url and queries");
	if (conf_skeys(c, m, "steer sources", keys, err, errlen))
		return -1;
	memset(d, 0, sizeof(*d));
	d->interval = 10;
	d->timeout = 2;
	strcpy(d->node_label, "node");
	strcpy(d->region_label, "region");
	strcpy(d->isp_label, "isp");
	const ynode_t *name = ynode_get(m, "name"), *url = ynode_get(m, "url"),
	              *q = ynode_get(m, "queries");
	if (!name || !url || !q)
		return conf_sfail(c, m, err, errlen, "steer sources: a source needs name, url "
		                  "and queries");
	if (read_text(c, name, "name", d->name, sizeof(d->name), err, errlen))
		return -1;
	if (!push_valid_word(d->name, 0))
		return conf_sfail(c, name, err, errlen, "steer sources: name %s: use a short "
		                  "lowercase word such as edge", d->name);
	for (unsigned i = 0; i < all->n; i++)
		if (strcmp(all->s[i].name, d->name) == 0)
			return conf_sfail(c, name, err, errlen, "steer sources: two sources are "
			                  "named %s", d->name);
	if (read_text(c, url, "url", d->url, sizeof(d->url), err, errlen))
		return -1;
	if (strncmp(d->url, "http://", 7) && strncmp(d->url, "https://", 8))
		return conf_sfail(c, url, err, errlen, "steer sources %s: url %s must start "
		                  "with http:// or https://", d->name, d->url);
	size_t ul = strlen(d->url);
	while (ul > 8 && d->url[ul - 1] == '/')
		d->url[--ul] = 0;
	for (size_t i = 0; i < m->n; i++) {
		const char *k = m->keys[i]->value;
		const ynode_t *v = m->items[i];
		int rc = 0;
		if (strcmp(k, "interval") == 0)
			rc = conf_snumber(c, v, "steer sources interval", 1, 3600, &d->interval,
			                  err, errlen);
		else if (strcmp(k, "timeout") == 0)
			rc = conf_snumber(c, v, "steer sources timeout", 0.1, 60, &d->timeout, err,
			                  errlen);
		else if (strcmp(k, "node-label") == 0)
			rc = read_text(c, v, k, d->node_label, sizeof(d->node_label), err, errlen);
		else if (strcmp(k, "region-label") == 0)
			rc = read_text(c, v, k, d->region_label, sizeof(d->region_label), err, errlen);
		else if (strcmp(k, "isp-label") == 0)
			rc = read_text(c, v, k, d->isp_label, sizeof(d->isp_label), err, errlen);
		if (rc)
			return -1;
	}
	if (d->timeout >= d->interval)
		return conf_sfail(c, m, err, errlen, "steer sources %s: timeout (%g s) must be "
		                  "below interval (%g s)", d->name, d->timeout, d->interval);
	return read_queries(c, q, d, err, errlen);
}

int source_conf_load(const conf_t *c, source_conf_t *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	const ynode_t *steer = ynode_get(c->root, "steer");
	const ynode_t *v = steer ? ynode_get(steer, "sources") : NULL;
	if (!v)
		return 0;
	if (v->kind != YNODE_SEQ || v->n > SOURCE_MAX)
		return conf_sfail(c, v, err, errlen, "steer sources must be a list of at most %d "
		                  "sources", SOURCE_MAX);
	for (size_t i = 0; i < v->n; i++) {
		if (read_source(c, v->items[i], out, &out->s[out->n], err, errlen))
			return -1;
		out->n++;
	}
	return 0;
}

/* Answers into push lines ---------------------------------------------- */

/* The label @name of @metric, or "*" when it has none (a figure for
 * every region or ISP). */
static const char *label_or_star(json_t *metric, const char *name)
{
	const char *v = json_string_value(json_object_get(metric, name));
	return v && v[0] ? v : "*";
}

/* The value of a vector element ([time, "text"]): 0 with *@out, or -1
 * when it is no finite number (NaN, Inf, text). */
static int sample_value(json_t *e, double *out)
{
	const char *text = json_string_value(json_array_get(json_object_get(e, "value"), 1));
	if (!text)
		return -1;
	char *end;
	errno = 0;
	double d = strtod(text, &end);
	if (!*text || *end || errno || !isfinite(d))
		return -1;
	*out = d;
	return 0;
}

static void note_unusable(unsigned *unusable, char *why, size_t whylen,
                          const char *fmt, const char *a, const char *b)
{
	if (!(*unusable)++)
		snprintf(why, whylen, fmt, a, b);
}

/* Adds the samples of one query's answer @body to the push lines of
 * @steer (steering inputs, one line per node, region and ISP) and
 * @health (health metrics, one line per node), keyed
 * "node|region|isp": each sample appends its "input=value" word.
 * Returns 0, or -1 when @body is no instant vector. */
static int add_answer(const source_def_t *d, const source_query_t *q, const char *body,
                      json_t *steer, json_t *health, unsigned *unusable, char *why,
                      size_t whylen)
{
	json_t *root = json_loads(body, 0, NULL);
	json_t *data = json_object_get(root, "data");
	json_t *result = json_object_get(data, "result");
	const char *status = json_string_value(json_object_get(root, "status"));
	const char *type = json_string_value(json_object_get(data, "resultType"));
	if (!status || strcmp(status, "success") || !type || strcmp(type, "vector") ||
	    !json_is_array(result)) {
		json_decref(root);
		return -1;
	}
	int st = is_steer_input(q->input);
	size_t i;
	json_t *e;
	json_array_foreach(result, i, e) {
		json_t *metric = json_object_get(e, "metric");
		const char *node = json_string_value(json_object_get(metric, d->node_label));
		double v;
		if (!node || !node[0]) {
			note_unusable(unusable, why, whylen, "%s: a sample without the %s label",
			              q->input, d->node_label);
			continue;
		}
		if (sample_value(e, &v)) {
			note_unusable(unusable, why, whylen, "%s of node %s is not a number",
			              q->input, node);
			continue;
		}
		const char *region = st ? label_or_star(metric, d->region_label) : "*";
		const char *isp = st ? label_or_star(metric, d->isp_label) : "*";
		char key[3 * SOURCE_LABEL_MAX + 8], word[96];
		snprintf(key, sizeof(key), "%s|%s|%s", node, region, isp);
		json_t *groups = st ? steer : health, *line = json_object_get(groups, key);
		if (!line) {
			line = st ? json_pack("[s, s, s, s, s]", node, "--region", region, "--isp", isp)
			          : json_pack("[s]", node);
			json_object_set_new(groups, key, line);
		}
		snprintf(word, sizeof(word), "%s=%.17g", q->input, v);
		json_array_append_new(line, json_string(word));
	}
	json_decref(root);
	return 0;
}

unsigned source_lines(const source_def_t *d, const char *const *bodies, json_t *lines,
                      unsigned *unusable, char *why, size_t whylen)
{
	json_t *steer = json_object(), *health = json_object();
	unsigned good = 0;
	for (unsigned i = 0; i < d->nq; i++)
		if (bodies[i] && add_answer(d, &d->q[i], bodies[i], steer, health, unusable,
		                            why, whylen) == 0)
			good++;
	const char *key;
	json_t *g;
	json_object_foreach(steer, key, g)
		json_array_append(lines, g);
	json_object_foreach(health, key, g)
		json_array_append(lines, g);
	json_decref(steer);
	json_decref(health);
	return good;
}

/* The thread ---------------------------------------------------------- */

/* The most an answer may hold: a vector of some 100,000 samples. */
#define BODY_MAX (32u << 20)
/* Refused lines are logged at most this often per source, seconds. */
#define REJECT_LOG_EVERY 60

typedef struct {
	char *data;
	size_t len, cap;
	int over;
} body_t;

struct source {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stop;
	int changed;                  /* new settings since the last look */
	source_conf_t conf;           /* under mu */
	double keep, skew;            /* under mu */
	weightdb_t *db;
	source_stat_t stat[SOURCE_MAX]; /* under mu */
	int64_t next[SOURCE_MAX];     /* thread only: monotonic ms due */
	int64_t reject_logged[SOURCE_MAX]; /* thread only */
	CURL *curl;                   /* thread only */
};

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	body_t *b = arg;
	size_t len = size * n;
	if (b->len + len + 1 > BODY_MAX) {
		b->over = 1;
		return 0;
	}
	if (b->len + len + 1 > b->cap) {
		b->cap = (b->len + len + 1) * 2;
		b->data = xrealloc(b->data, b->cap);
	}
	memcpy(b->data + b->len, p, len);
	b->len += len;
	b->data[b->len] = 0;
	return len;
}

/* GET URL/api/v1/query?query=@promql.  Returns the body (free it), or
 * NULL with the reason in @why. */
static char *fetch(CURL *c, const source_def_t *d, const char *promql, char *why,
                   size_t whylen)
{
	char *enc = curl_easy_escape(c, promql, 0);
	size_t ul = strlen(d->url) + strlen(enc) + 32;
	char *url = xmalloc(ul);
	snprintf(url, ul, "%s/api/v1/query?query=%s", d->url, enc);
	curl_free(enc);
	body_t b = { 0 };
	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)(d->timeout * 1000));
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)(d->timeout * 1000));
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "gslbd-source/" PACKAGE_VERSION);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	CURLcode rc = curl_easy_perform(c);
	long code = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	free(url);
	if (rc != CURLE_OK || code != 200) {
		if (b.over)
			snprintf(why, whylen, "the answer is larger than %u MB", BODY_MAX >> 20);
		else if (rc != CURLE_OK)
			snprintf(why, whylen, "%s", curl_easy_strerror(rc));
		else
			snprintf(why, whylen, "HTTP status %ld%s%.200s", code, b.data ? ": " : "",
			         b.data ? b.data : "");
		free(b.data);
		return NULL;
	}
	return b.data ? b.data : xstrdup("");
}

/* Writes @lines of source @name through the push language, in one
 * transaction.  Counts what was stored and refused. */
static int apply_lines(source_t *s, const char *name, json_t *lines, double keep,
                       double skew, uint64_t *stored, uint64_t *refused, char *why,
                       size_t whylen)
{
	char err[512];
	wdb_txn_t *t = wdb_begin(s->db, "gslbd:source", err, sizeof(err));
	if (!t) {
		snprintf(why, whylen, "the store: %s", err);
		return -1;
	}
	char from[PUSH_FROM_MAX];
	snprintf(from, sizeof(from), "prometheus:%s", name);
	uint32_t now = (uint32_t)time(NULL);
	size_t i;
	json_t *line;
	json_array_foreach(lines, i, line) {
		char *argv[PUSH_MAX_WORDS + 3], msg[400], bad[600];
		int argc = push_words(line, argv, PUSH_MAX_WORDS + 1);
		argv[argc++] = "--from";
		argv[argc++] = from;
		int rc = push_apply(t, argc, argv, now, keep, skew, msg, sizeof(msg), bad,
		                    sizeof(bad));
		if (rc == GSLB_EINVAL) {
			/* A node or row the table does not have: the rest counts. */
			if (!(*refused)++)
				snprintf(why, whylen, "%s", bad);
			continue;
		}
		if (rc) {
			wdb_abort(t);
			snprintf(why, whylen, "the store: %s", gslb_strerror(rc));
			return -1;
		}
		(*stored)++;
	}
	if (wdb_commit(t, "metrics", err, sizeof(err)) < 0) {
		snprintf(why, whylen, "the store: %s", err);
		return -1;
	}
	return 0;
}

/* One evaluation of source @i (settings @d copied out of the lock). */
static void evaluate(source_t *s, unsigned i, const source_def_t *d, double keep,
                     double skew)
{
	char *bodies[SOURCE_QUERIES_MAX] = { 0 };
	char why[600] = "", fwhy[600] = "";
	unsigned fetched = 0;
	for (unsigned q = 0; q < d->nq; q++) {
		char w[400];
		if ((bodies[q] = fetch(s->curl, d, d->q[q].promql, w, sizeof(w))))
			fetched++;
		else if (!fwhy[0])
			snprintf(fwhy, sizeof(fwhy), "query %s: %s", d->q[q].input, w);
	}
	json_t *lines = json_array();
	unsigned unusable = 0;
	unsigned good = source_lines(d, (const char *const *)bodies, lines, &unusable, why,
	                             sizeof(why));
	if (good < fetched && !fwhy[0])
		snprintf(fwhy, sizeof(fwhy), "an answer is no instant vector of the query "
		         "API (a range query, or not Prometheus)");
	for (unsigned q = 0; q < d->nq; q++)
		free(bodies[q]);
	unsigned failed = d->nq - good;
	uint64_t stored = 0, refused = unusable;
	char awhy[600] = "";
	int arc = json_array_size(lines) ? apply_lines(s, d->name, lines, keep, skew,
	                                               &stored, &refused, awhy,
	                                               sizeof(awhy)) : 0;
	json_decref(lines);
	if (arc) {
		failed = d->nq;
		snprintf(fwhy, sizeof(fwhy), "%s", awhy);
	}
	if (!why[0])
		snprintf(why, sizeof(why), "%s", awhy);
	pthread_mutex_lock(&s->mu);
	source_stat_t *st = &s->stat[i];
	int was_up = st->up || !st->evaluations;
	st->evaluations++;
	st->failures += failed;
	st->samples += stored;
	st->rejected += refused;
	st->up = !failed;
	if (!failed)
		st->last_success = (int64_t)time(NULL);
	pthread_mutex_unlock(&s->mu);
	if (failed && was_up)
		log_warning("steer source %s: %s; %u of %u queries failed: their inputs age "
		            "until it answers again (stale after steer stale)", d->name, fwhy,
		            failed, d->nq);
	else if (!failed && !was_up)
		log_notice("steer source %s: answering again", d->name);
	int64_t now = util_mono_sec();
	if (refused && now - s->reject_logged[i] >= REJECT_LOG_EVERY) {
		s->reject_logged[i] = now;
		log_warning("steer source %s: %llu figures refused, the first: %s", d->name,
		            (unsigned long long)refused, why);
	}
}

static void *source_main(void *arg)
{
	source_t *s = arg;
	s->curl = curl_easy_init();
	pthread_mutex_lock(&s->mu);
	while (!s->stop) {
		if (s->changed) {
			s->changed = 0;
			for (unsigned i = 0; i < s->conf.n; i++)
				s->next[i] = 0;
		}
		int64_t now = util_mono_ms(), soonest = now + 1000;
		for (unsigned i = 0; i < s->conf.n && !s->stop && !s->changed; i++) {
			if (s->next[i] > now) {
				if (s->next[i] < soonest)
					soonest = s->next[i];
				continue;
			}
			source_def_t *d = xmemdup(&s->conf.s[i], sizeof(*d));
			double keep = s->keep, skew = s->skew;
			s->next[i] = now + (int64_t)(d->interval * 1000);
			pthread_mutex_unlock(&s->mu);
			if (s->curl)
				evaluate(s, i, d, keep, skew);
			free(d);
			pthread_mutex_lock(&s->mu);
			now = util_mono_ms();
		}
		if (s->stop || s->changed)
			continue;
		int64_t wait = soonest - util_mono_ms();
		struct timespec ts = util_deadline_ms(wait < 1 ? 1 : (unsigned)wait);
		pthread_cond_timedwait(&s->cv, &s->mu, &ts);
	}
	pthread_mutex_unlock(&s->mu);
	if (s->curl)
		curl_easy_cleanup(s->curl);
	return NULL;
}

/* Settings @sc into @s (under its lock): the figures of a source that
 * keeps its name are kept. */
static void set_conf(source_t *s, const source_conf_t *sc, double keep, double skew)
{
	source_stat_t old[SOURCE_MAX];
	memcpy(old, s->stat, sizeof(old));
	unsigned oldn = s->conf.n;
	memset(s->stat, 0, sizeof(s->stat));
	for (unsigned i = 0; i < sc->n; i++) {
		snprintf(s->stat[i].name, sizeof(s->stat[i].name), "%s", sc->s[i].name);
		for (unsigned j = 0; j < oldn; j++)
			if (strcmp(old[j].name, sc->s[i].name) == 0)
				s->stat[i] = old[j];
	}
	s->conf = *sc;
	s->keep = keep;
	s->skew = skew;
	s->changed = 1;
}

source_t *source_start(const source_conf_t *sc, weightdb_t *db, double keep,
                       double skew)
{
	if (!sc->n)
		return NULL;
	source_t *s = xcalloc(1, sizeof(*s));
	s->db = db;
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	set_conf(s, sc, keep, skew);
	if (pthread_create(&s->thread, NULL, source_main, s)) {
		log_err("steer sources: cannot start their thread: %s", strerror(errno));
		pthread_mutex_destroy(&s->mu);
		pthread_cond_destroy(&s->cv);
		free(s);
		return NULL;
	}
	for (unsigned i = 0; i < sc->n; i++)
		log_info("steer source %s: %u queries to %s every %g s", sc->s[i].name,
		         sc->s[i].nq, sc->s[i].url, sc->s[i].interval);
	return s;
}

source_t *source_reconfigure(source_t *s, const source_conf_t *sc, weightdb_t *db,
                             double keep, double skew)
{
	if (!s)
		return source_start(sc, db, keep, skew);
	pthread_mutex_lock(&s->mu);
	set_conf(s, sc, keep, skew);
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
	return s;
}

void source_stop(source_t *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->mu);
	s->stop = 1;
	pthread_cond_signal(&s->cv);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->thread, NULL);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cv);
	free(s);
}

unsigned source_stats(source_t *s, source_stat_t *out, unsigned max)
{
	if (!s)
		return 0;
	pthread_mutex_lock(&s->mu);
	unsigned n = s->conf.n < max ? s->conf.n : max;
	memcpy(out, s->stat, n * sizeof(*out));
	pthread_mutex_unlock(&s->mu);
	return n;
}
