/* SPDX-License-Identifier: MIT */
/* POST /v1/metrics: a batch of metric pushes in one store transaction,
 * each sample turned into the words of one line of `gslbctl metrics
 * push --file` and validated and written by push_apply_word()
 * (health/push.h), the function gslbctl calls, so that the checks and
 * their texts are gslbctl's (S1-2, S2-7, S3-2, S3-6, S3-9). */
#include "api/api_int.h"
#include "common/util.h"
#include "health/push.h"

#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The sample's keys that are options of the push ("--KEY VALUE"); each
 * other key is KEY=VALUE, a health metric or a steering or spend input.
 * "node" is no option: it is the push's first word. */
/* The most samples one request may hold.  A batch is validated and
 * written on the main loop, in the store's one write transaction: a
 * steering sample costs some 0.1 ms (its record, up to
 * STEER_MAX_SAMPLES samples, is read and written again for each;
 * docs/BENCHMARKS.md, "HTTP API"), so at this size neither the loop
 * nor another writer waits more than about half a second; more go in
 * several requests. */
#define API_METRICS_MAX 5000

static const char *const options[] = { "provider", "region", "isp", "at", "from",
                                        NULL };

static int is_option(const char *k)
{
	for (size_t i = 0; options[i]; i++)
		if (strcmp(k, options[i]) == 0)
			return 1;
	return 0;
}

/* The words of one sample: argv (argv[0] "push"), the sample's key that
 * gave each word, and the text of the words made here. */
typedef struct {
	int argc;
	char *argv[PUSH_MAX_WORDS + 1];
	const char *key[PUSH_MAX_WORDS + 1];
	char text[PUSH_MAX_WORDS + 1][96];
} words_t;

/* Appends word @s from key @k (copied into the words' own text when
 * @copy).  Returns 0, -1 when the push has too many words, -2 when @s
 * is longer than any word a push takes. */
static int add(words_t *w, const char *k, const char *s, int copy)
{
	if (w->argc == PUSH_MAX_WORDS + 1)
		return -1;
	w->key[w->argc] = k;
	if (copy) {
		size_t n = strlen(s);
		if (n >= sizeof(w->text[0]))
			return -2;
		memcpy(w->text[w->argc], s, n + 1);
		s = w->text[w->argc];
	}
	w->argv[w->argc++] = (char *)s;
	return 0;
}

/* The text of number or string @v into @buf; NULL when it is neither. */
static const char *value_text(json_t *v, char *buf, size_t size)
{
	if (json_is_integer(v))
		snprintf(buf, size, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, size, "%.17g", json_real_value(v));
	else if (json_is_string(v))
		return json_string_value(v);
	else
		return NULL;
	return buf;
}

/* Sample @s (samples[@i]) into words @w: "push", the node, its options,
 * then KEY=VALUE for the rest, as a line of `metrics push --file`.
 * Returns 0, or -1 with the error (400) in @r. */
static int sample_words(json_t *s, size_t i, words_t *w, api_resp_t *r)
{
	char field[160];
	w->argc = 0;
	add(w, NULL, "push", 0);
	if (!json_is_object(s)) {
		snprintf(field, sizeof(field), "samples[%zu]", i);
		api_error(r, MHD_HTTP_BAD_REQUEST, field, "%s: must be an object of a "
		          "node (or provider) and its measurements", field);
		return -1;
	}
	json_t *node = json_object_get(s, "node"), *prov = json_object_get(s, "provider");
	/* A node is the push's first word: one that reads as an option
	 * ("--provider") would change what the push is. */
	if ((node && (!json_is_string(node) || json_string_value(node)[0] == '-')) ||
	    (!node && !prov)) {
		snprintf(field, sizeof(field), "samples[%zu].node", i);
		api_error(r, MHD_HTTP_BAD_REQUEST, field, "%s: %s", field, node ?
		          "must be a node's id" : "give the node (or, for a spend, the "
		          "provider)");
		return -1;
	}
	if (node)
		add(w, "node", json_string_value(node), 0);
	/* The provider first: a spend's push starts with it. */
	const char *k;
	json_t *v;
	for (int pass = 0; pass < 3; pass++) {
		json_object_foreach(s, k, v) {
			int want = strcmp(k, "node") == 0 ? -1 : strcmp(k, "provider") == 0 ? 0
			           : is_option(k) ? 1 : 2;
			if (want != pass)
				continue;
			char buf[64];
			const char *text = value_text(v, buf, sizeof(buf));
			snprintf(field, sizeof(field), "samples[%zu].%s", i, k);
			if (!text || (pass == 2 && !json_is_number(v)) ||
			    (pass < 2 && strcmp(k, "at") && !json_is_string(v))) {
				api_error(r, MHD_HTTP_BAD_REQUEST, field, "%s: must be a %s", field,
				          pass == 2 ? "number" : strcmp(k, "at") == 0
				          ? "time (RFC 3339 or unix seconds)" : "string");
				return -1;
			}
			char word[sizeof(w->text[0]) + 3];
			int full;
			if (pass < 2) {
				snprintf(word, sizeof(word), "--%.*s", (int)sizeof(w->text[0]), k);
				if (!(full = add(w, k, word, 1)))
					full = add(w, k, text, 1);
			} else {
				int len = snprintf(word, sizeof(word), "%s=%s", k, text);
				full = len < 0 || (size_t)len >= sizeof(w->text[0]) ? -2
				       : add(w, k, word, 1);
			}
			if (full == -1) {
				api_error(r, MHD_HTTP_BAD_REQUEST, field, "samples[%zu]: metrics "
				          "push: more than %d words on a line", i, PUSH_MAX_WORDS);
				return -1;
			}
			if (full) {
				api_error(r, MHD_HTTP_BAD_REQUEST, field, "%s: longer than any "
				          "name or value a push takes", field);
				return -1;
			}
		}
	}
	return 0;
}

/* Validates and writes every sample of @arr into @t, stopping at the
 * first that fails.  Returns the count, or -1 with the error in @r: 400
 * naming the sample and its field for a bad sample, 409 for the
 * store's. */
static long push_all(const api_env_t *env, const api_req_t *q, wdb_txn_t *t,
                     json_t *arr, json_t *lines, api_resp_t *r)
{
	words_t *w = xcalloc(1, sizeof(*w));
	size_t i;
	json_t *s;
	long n = 0;
	json_array_foreach(arr, i, s) {
		char msg[400], err[1200], field[160];
		int word = 0;
		if (sample_words(s, i, w, r)) {
			n = -1;
			break;
		}
		int rc = push_apply_word(t, w->argc, w->argv, (uint32_t)q->now, env->keep,
		                         env->skew, msg, sizeof(msg), err, sizeof(err), &word);
		if (rc == GSLB_EINVAL) {
			if (word > 0 && word < w->argc)
				snprintf(field, sizeof(field), "samples[%zu].%s", i, w->key[word]);
			else
				snprintf(field, sizeof(field), "samples[%zu]", i);
			api_error(r, MHD_HTTP_BAD_REQUEST, field, "samples[%zu]: %s", i, err);
			n = -1;
			break;
		}
		if (rc) {
			api_error(r, MHD_HTTP_CONFLICT, NULL, "samples[%zu]: %s", i, err);
			n = -1;
			break;
		}
		/* The words after "push", as gslbctl puts them in the feed. */
		json_t *words = json_array();
		for (int k = 1; k < w->argc; k++)
			json_array_append_new(words, json_string(w->argv[k]));
		json_array_append_new(lines, words);
		n++;
	}
	free(w);
	return n;
}

/* Cluster mode: the @n validated pushes @lines into etcd's feed by the
 * request's token; the answer as gslbctl --json gives it, with the
 * cluster's revision. */
static void feed_write(const api_env_t *env, const api_req_t *q, json_t *lines,
                       long n, api_resp_t *r)
{
	char actor[128], err[1600];
	int64_t rev = 0;
	snprintf(actor, sizeof(actor), "api:%s", q->user);
	int rc = cluster_feed_write(env->cl, actor, lines, (uint32_t)q->now, env->keep,
	                            env->skew, &rev, err, sizeof(err));
	if (rc) {
		api_error(r, rc == GSLB_EIO ? MHD_HTTP_SERVICE_UNAVAILABLE
		          : MHD_HTTP_CONFLICT, NULL, "%s", err);
		return;
	}
	r->status = MHD_HTTP_OK;
	r->body = json_pack("{s:I, s:I}", "pushed", (json_int_t)n, "revision",
	                    (json_int_t)rev);
}

/* POST /v1/metrics {"samples": [...]}: operate. */
static void post_metrics(const api_env_t *env, const api_req_t *q, api_resp_t *r)
{
	if (!api_role_ok(q, API_ROLE_OPERATE, r))
		return;
	json_t *b = api_body_object(q, r);
	if (!b)
		return;
	const char *k;
	json_t *v, *arr = json_object_get(b, "samples");
	json_object_foreach(b, k, v)
		if (strcmp(k, "samples") != 0) {
			api_error(r, MHD_HTTP_BAD_REQUEST, k, "%s: unknown key (the body is "
			          "{\"samples\": [...]})", k);
			json_decref(b);
			return;
		}
	if (!json_is_array(arr)) {
		api_error(r, MHD_HTTP_BAD_REQUEST, "samples", "samples: give an array of "
		          "samples, each {\"node\": ID, KEY: VALUE...}");
		json_decref(b);
		return;
	}
	if (json_array_size(arr) > API_METRICS_MAX) {
		api_error(r, MHD_HTTP_BAD_REQUEST, "samples", "samples: %zu in one "
		          "request, at most %d: send them in several", json_array_size(arr),
		          API_METRICS_MAX);
		json_decref(b);
		return;
	}
	wdb_txn_t *t = api_begin_write(env, q, r);
	if (!t) {
		json_decref(b);
		return;
	}
	json_t *lines = json_array();
	long n = push_all(env, q, t, arr, lines, r);
	json_decref(b);
	if (n < 0) {
		wdb_abort(t);   /* a bad sample refuses the whole batch */
		json_decref(lines);
		return;
	}
	if (env->cluster && n > 0) {
		/* As gslbctl's: validated here, then put into etcd's feed, from
		 * where every instance applies them (cluster/feed.h); stored
		 * here alone they would feed this instance only, not the
		 * elected one that steers. */
		wdb_abort(t);
		feed_write(env, q, lines, n, r);
		json_decref(lines);
		return;
	}
	json_decref(lines);
	/* gslbctl's words for the change, though pushed metrics are
	 * data, not decisions: no audit record (the change is 0). */
	if (api_commit(env, t, "metrics", r) < 0)
		return;
	r->status = MHD_HTTP_OK;
	r->body = json_pack("{s:I}", "pushed", (json_int_t)n);   /* as gslbctl --json */
}

int api_metrics_route(const api_env_t *env, const api_req_t *q, api_resp_t *r)
{
	if (strcmp(q->path, "/v1/metrics") != 0)
		return 0;
	if (strcmp(q->method, "POST") != 0) {
		api_error(r, MHD_HTTP_METHOD_NOT_ALLOWED, NULL, "%s %s: metrics are "
		          "pushed with POST", q->method, q->path);
		return 1;
	}
	post_metrics(env, q, r);
	return 1;
}
