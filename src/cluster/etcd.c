/* SPDX-License-Identifier: MIT */
/* The etcd v3 JSON gateway client: one curl handle per etcd_t, requests
 * tried on each endpoint in turn, the watch stream read line by line.
 * See etcd.h for the thread-safety rule. */
#include "cluster/etcd.h"
#include "common/log.h"
#include "common/util.h"

#include <curl/curl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The longest answer we accept: a full range of a large table (100,000
 * rows of a few hundred bytes each, base64) fits many times. */
#define ETCD_MAX_BODY ((size_t)1 << 30)

struct etcd {
	CURL *curl;
	char *endpoints[CLUSTER_MAX_ENDPOINTS];
	size_t n, good;          /* good: the endpoint that answered last */
	long timeout_ms;
	int bulk;                /* the request under way is a bulk one */
	int transient;           /* the last try failed in a way that may
	                            pass: an election, a lost answer */
	unsigned retry_ms;       /* etcd_set_retry() */
	unsigned retries;        /* tries again so far */
	char *ca, *cert, *key, *user, *password;
	char *token;             /* from /v3/auth/authenticate */
};

typedef struct buf {
	char *p;
	size_t len, cap;
} buf_t;

static void buf_add(buf_t *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = xrealloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = 0;
}

static size_t on_body(char *data, size_t sz, size_t nm, void *arg)
{
	buf_t *b = arg;
	if (b->len + sz * nm > ETCD_MAX_BODY)
		return 0;
	buf_add(b, data, sz * nm);
	return sz * nm;
}

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static void curl_init_once(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

etcd_t *etcd_new(const cluster_conf_t *cc)
{
	pthread_once(&curl_once, curl_init_once);
	etcd_t *e = xcalloc(1, sizeof(*e));
	e->curl = curl_easy_init();
	if (!e->curl)
		abort();
	for (size_t i = 0; i < cc->nendpoints; i++)
		e->endpoints[e->n++] = xstrdup(cc->endpoints[i]);
	e->timeout_ms = (long)(cc->timeout * 1000);
	e->ca = cc->ca ? xstrdup(cc->ca) : NULL;
	e->cert = cc->cert ? xstrdup(cc->cert) : NULL;
	e->key = cc->key ? xstrdup(cc->key) : NULL;
	e->user = cc->user ? xstrdup(cc->user) : NULL;
	e->password = cc->password ? xstrdup(cc->password) : NULL;
	return e;
}

void etcd_free(etcd_t *e)
{
	if (!e)
		return;
	curl_easy_cleanup(e->curl);
	for (size_t i = 0; i < e->n; i++)
		free(e->endpoints[i]);
	free(e->ca);
	free(e->cert);
	free(e->key);
	free(e->user);
	free(e->password);
	free(e->token);
	free(e);
}

const char *etcd_endpoint(const etcd_t *e)
{
	return e->endpoints[e->good];
}

/* Sets up the handle for a POST of @body to @url. */
static struct curl_slist *prepare(etcd_t *e, const char *url, const char *body,
                                  long timeout_ms)
{
	CURL *c = e->curl;
	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
	                 e->timeout_ms < 1000 ? e->timeout_ms : 1000L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
	if (e->ca)
		curl_easy_setopt(c, CURLOPT_CAINFO, e->ca);
	if (e->cert) {
		curl_easy_setopt(c, CURLOPT_SSLCERT, e->cert);
		curl_easy_setopt(c, CURLOPT_SSLKEY, e->key);
	}
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/json");
	if (e->token) {
		char auth[600];
		snprintf(auth, sizeof(auth), "Authorization: %s", e->token);
		h = curl_slist_append(h, auth);
	}
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	return h;
}

/* One POST to endpoint @i.  Returns 0 with *@out, GSLB_EIO (try another
 * endpoint) or GSLB_EINVAL (etcd's own refusal). */
static int post_one(etcd_t *e, size_t i, const char *path, const char *body,
                    json_t **out, char *err, size_t errlen)
{
	char url[512];
	snprintf(url, sizeof(url), "%s%s", e->endpoints[i], path);
	buf_t b = { 0 };
	long limit = e->bulk && e->timeout_ms < ETCD_BULK_TIMEOUT_MS ?
	             ETCD_BULK_TIMEOUT_MS : e->timeout_ms;
	struct curl_slist *h = prepare(e, url, body, limit);
	curl_easy_setopt(e->curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e->curl, CURLOPT_WRITEDATA, &b);
	CURLcode cc = curl_easy_perform(e->curl);
	curl_slist_free_all(h);
	long status = 0;
	curl_easy_getinfo(e->curl, CURLINFO_RESPONSE_CODE, &status);
	if (cc != CURLE_OK) {
		snprintf(err, errlen, "%s: %s", e->endpoints[i], curl_easy_strerror(cc));
		free(b.p);
		/* A member that is not there at all will not be there in a
		 * second either; one that took the request and did not answer
		 * (a leader that went, a timeout) may. */
		if (cc != CURLE_COULDNT_CONNECT && cc != CURLE_COULDNT_RESOLVE_HOST)
			e->transient = 1;
		return GSLB_EIO;
	}
	json_t *j = b.p ? json_loadb(b.p, b.len, 0, NULL) : NULL;
	free(b.p);
	if (!j) {
		snprintf(err, errlen, "%s: HTTP %ld, not a JSON answer", e->endpoints[i],
		         status);
		return GSLB_EIO;
	}
	if (status != 200) {
		const char *m = json_string_value(json_object_get(j, "message"));
		if (!m)
			m = json_string_value(json_object_get(j, "error"));
		snprintf(err, errlen, "%s: %s", e->endpoints[i], m ? m : "error");
		/* A member without a leader or a quorum: another may do.  (m
		 * lives in j: read it before j goes.) */
		int retry = status >= 500 || (m && (strstr(m, "leader") ||
		            strstr(m, "timed out") || strstr(m, "unhealthy")));
		json_decref(j);
		e->transient |= retry;
		return retry ? GSLB_EIO : GSLB_EINVAL;
	}
	*out = j;
	return 0;
}

/* Gets a token with the configured user and password. */
static int authenticate(etcd_t *e, size_t i, char *err, size_t errlen)
{
	json_t *req = json_pack("{s:s, s:s}", "name", e->user, "password", e->password);
	char *body = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	free(e->token);
	e->token = NULL;
	json_t *ans = NULL;
	int rc = post_one(e, i, "/v3/auth/authenticate", body, &ans, err, errlen);
	free(body);
	if (rc)
		return rc;
	const char *tok = json_string_value(json_object_get(ans, "token"));
	if (tok)
		e->token = xstrdup(tok);
	json_decref(ans);
	if (!e->token) {
		snprintf(err, errlen, "%s: no token for user %s", e->endpoints[i], e->user);
		return GSLB_EINVAL;
	}
	return 0;
}

/* One try of etcd_post() over every endpoint. */
static int post_try(etcd_t *e, const char *path, const char *text, json_t **out,
                    char *err, size_t errlen)
{
	int rc = GSLB_EIO;
	e->transient = 0;
	for (size_t k = 0; k < e->n; k++) {
		size_t i = (e->good + k) % e->n;
		if (e->user && !e->token && (rc = authenticate(e, i, err, errlen))) {
			if (rc == GSLB_EIO)
				continue;
			break;
		}
		rc = post_one(e, i, path, text, out, err, errlen);
		if (rc == GSLB_EINVAL && e->user && strstr(err, "token")) {
			/* An expired token: once more with a new one. */
			if (!(rc = authenticate(e, i, err, errlen)))
				rc = post_one(e, i, path, text, out, err, errlen);
		}
		if (rc != GSLB_EIO) {
			if (!rc)
				e->good = i;
			break;
		}
	}
	return rc;
}

int etcd_post(etcd_t *e, const char *path, json_t *body, json_t **out,
              char *err, size_t errlen)
{
	char *text = json_dumps(body, JSON_COMPACT);
	if (!text) {
		snprintf(err, errlen, "cannot encode a request to etcd");
		return GSLB_EINVAL;
	}
	int64_t end = util_mono_ms() + e->retry_ms;
	unsigned wait = 200;
	int rc;
	while ((rc = post_try(e, path, text, out, err, errlen)) == GSLB_EIO &&
	       e->transient && util_mono_ms() + wait <= end) {
		usleep(wait * 1000);
		wait = wait * 2 > 1000 ? 1000 : wait * 2;
		e->retries++;
	}
	free(text);
	return rc;
}

void etcd_set_retry(etcd_t *e, unsigned budget_ms)
{
	e->retry_ms = budget_ms;
}

unsigned etcd_retries(const etcd_t *e)
{
	return e->retries;
}

int etcd_post_bulk(etcd_t *e, const char *path, json_t *body, json_t **out,
                   char *err, size_t errlen)
{
	e->bulk = 1;
	int rc = etcd_post(e, path, body, out, err, errlen);
	e->bulk = 0;
	return rc;
}

/* The members' state, asked when a request failed ------------------- */

/* One POST of "{}" to @path at endpoint @i within @ms: the HTTP status
 * (0: no answer) and the JSON body in *@out when there is one. */
static long ask_one(etcd_t *e, size_t i, const char *path, long ms, json_t **out)
{
	char url[512];
	snprintf(url, sizeof(url), "%s%s", e->endpoints[i], path);
	buf_t b = { 0 };
	struct curl_slist *h = prepare(e, url, "{}", ms);
	curl_easy_setopt(e->curl, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(e->curl, CURLOPT_WRITEDATA, &b);
	CURLcode cc = curl_easy_perform(e->curl);
	curl_slist_free_all(h);
	long status = 0;
	if (cc == CURLE_OK)
		curl_easy_getinfo(e->curl, CURLINFO_RESPONSE_CODE, &status);
	*out = status && b.p ? json_loadb(b.p, b.len, 0, NULL) : NULL;
	free(b.p);
	return status;
}

/* The member list's name of the member whose client URL is @url, into
 * @name; the URL itself when the list does not have it. */
static void member_name(json_t *list, const char *url, char *name, size_t n)
{
	size_t i, k;
	json_t *m, *u;
	json_array_foreach(json_object_get(list, "members"), i, m)
		json_array_foreach(json_object_get(m, "clientURLs"), k, u)
			if (json_string_value(u) && strcmp(json_string_value(u), url) == 0 &&
			    json_string_value(json_object_get(m, "name"))) {
				snprintf(name, n, "%s", json_string_value(json_object_get(m, "name")));
				return;
			}
	snprintf(name, n, "%s", url);
}

void etcd_health(etcd_t *e, etcd_health_t *h)
{
	memset(h, 0, sizeof(*h));
	long ms = e->timeout_ms < 1000 ? e->timeout_ms : 1000;
	json_t *list = NULL;
	int answered[CLUSTER_MAX_ENDPOINTS] = { 0 };
	for (size_t i = 0; i < e->n; i++) {
		json_t *st = NULL;
		long status = ask_one(e, i, "/v3/maintenance/status", ms, &st);
		if (!status) {
			json_decref(st);
			continue;
		}
		answered[i] = 1;
		h->answering++;
		/* A member without a leader says "leader" 0 or "no leader". */
		if (status == 200 && etcd_int(st, "leader") != 0 &&
		    !json_array_size(json_object_get(st, "errors")))
			h->leader = 1;
		json_decref(st);
		/* The member list is served from a member's own state, with or
		 * without a quorum. */
		if (!list && ask_one(e, i, "/v3/cluster/member/list", ms, &list) != 200) {
			json_decref(list);
			list = NULL;
		}
	}
	size_t n = json_array_size(json_object_get(list, "members"));
	h->members = n > e->n ? (unsigned)n : (unsigned)e->n;
	size_t len = 0;
	for (size_t i = 0; i < e->n; i++) {
		if (!answered[i])
			continue;
		char name[200];
		member_name(list, e->endpoints[i], name, sizeof(name));
		int w = snprintf(h->names + len, sizeof(h->names) - len, "%s%s",
		                 len ? ", " : "", name);
		if (w < 0 || (size_t)w >= sizeof(h->names) - len)
			break;
		len += (size_t)w;
	}
	json_decref(list);
}

const char *etcd_health_state(const etcd_health_t *h)
{
	if (!h->answering)
		return "unreachable";
	if (h->leader)
		return "up";
	return h->answering * 2 <= h->members ? "no-quorum" : "no-leader";
}

void etcd_health_text(const etcd_health_t *h, const char *err, char *out,
                      size_t outlen)
{
	const char *st = etcd_health_state(h);
	if (!strcmp(st, "unreachable"))
		snprintf(out, outlen, "etcd is unreachable: %s", err);
	else if (!strcmp(st, "no-quorum"))
		snprintf(out, outlen, "no quorum: %u of %u members answer (%s)",
		         h->answering, h->members, h->names);
	else if (!strcmp(st, "no-leader"))
		snprintf(out, outlen, "no leader: %u of %u members answer (%s), "
		         "electing: %s", h->answering, h->members, h->names, err);
	else
		snprintf(out, outlen, "etcd failed: %s", err);
}

/* Base64, by OpenSSL's EVP block codec ------------------------------ */

char *etcd_b64(const char *s, size_t n)
{
	char *o = xmalloc((n + 2) / 3 * 4 + 1);
	EVP_EncodeBlock((unsigned char *)o, (const unsigned char *)s, (int)n);
	return o;                   /* EVP_EncodeBlock ends it with a NUL */
}

char *etcd_unb64(const char *s, size_t *n)
{
	size_t len = strlen(s);
	char *o = xmalloc(len / 4 * 3 + 4);
	/* EVP_DecodeBlock decodes whole groups of four and counts the bytes
	 * the padding stands for; those are taken off again. */
	int k = len % 4 ? -1 : EVP_DecodeBlock((unsigned char *)o,
	                                      (const unsigned char *)s, (int)len);
	if (k < 0) {
		free(o);
		return NULL;
	}
	for (size_t i = len; i > 0 && s[i - 1] == '=' && k > 0; i--)
		k--;
	o[k] = 0;
	if (n)
		*n = (size_t)k;
	return o;
}

char *etcd_prefix_end_b64(const char *prefix)
{
	size_t n = strlen(prefix);
	char *end = xstrdup(prefix);
	/* The prefix always ends in a printable character below 0xff here
	 * (our keys are text), so incrementing the last byte is the end. */
	end[n - 1]++;
	char *b = etcd_b64(end, n);
	free(end);
	return b;
}

/* Answers --------------------------------------------------------- */

int64_t etcd_int(const json_t *obj, const char *field)
{
	const json_t *v = json_object_get(obj, field);
	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_string(v))
		return strtoll(json_string_value(v), NULL, 10);
	return 0;
}

int etcd_kv_parse(const json_t *kv, etcd_kv_t *out)
{
	memset(out, 0, sizeof(*out));
	const char *k = json_string_value(json_object_get(kv, "key"));
	const char *v = json_string_value(json_object_get(kv, "value"));
	if (!k || !(out->key = etcd_unb64(k, NULL)))
		return GSLB_EINVAL;
	out->value = etcd_unb64(v ? v : "", &out->value_len);
	if (!out->value) {
		etcd_kv_clear(out);
		return GSLB_EINVAL;
	}
	out->create_rev = etcd_int(kv, "create_revision");
	out->mod_rev = etcd_int(kv, "mod_revision");
	out->version = etcd_int(kv, "version");
	out->lease = etcd_int(kv, "lease");
	return 0;
}

void etcd_kv_clear(etcd_kv_t *kv)
{
	free(kv->key);
	free(kv->value);
	kv->key = kv->value = NULL;
}

json_t *etcd_range_req(const char *key, int prefix)
{
	json_t *r = json_object();
	char *k = etcd_b64(key, strlen(key));
	json_object_set_new(r, "key", json_string(k));
	free(k);
	if (prefix) {
		char *end = etcd_prefix_end_b64(key);
		json_object_set_new(r, "range_end", json_string(end));
		free(end);
	}
	return r;
}

int etcd_range_at(etcd_t *e, const char *prefix, int64_t rev, json_t **out,
                  char *err, size_t errlen)
{
	json_t *req = etcd_range_req(prefix, 1);
	json_object_set_new(req, "revision", json_integer(rev));
	int rc = etcd_post_bulk(e, "/v3/kv/range", req, out, err, errlen);
	json_decref(req);
	return rc;
}

int etcd_kvs_each(const json_t *range, int (*fn)(const etcd_kv_t *kv, void *arg),
                  void *arg)
{
	size_t i;
	json_t *kvj;
	int rc = 0;
	json_array_foreach(json_object_get(range, "kvs"), i, kvj) {
		etcd_kv_t kv;
		if (etcd_kv_parse(kvj, &kv))
			continue;
		rc = fn(&kv, arg);
		etcd_kv_clear(&kv);
		if (rc)
			break;
	}
	return rc;
}

int etcd_get(etcd_t *e, const char *key, int prefix, int64_t *rev,
             int (*fn)(const etcd_kv_t *kv, void *arg), void *arg,
             char *err, size_t errlen)
{
	json_t *req = etcd_range_req(key, prefix), *ans = NULL;
	int rc = etcd_post(e, "/v3/kv/range", req, &ans, err, errlen);
	json_decref(req);
	if (rc)
		return rc;
	if (rev)
		*rev = etcd_int(json_object_get(ans, "header"), "revision");
	if (fn)
		rc = etcd_kvs_each(ans, fn, arg);
	json_decref(ans);
	return rc;
}

/* Leases ---------------------------------------------------------- */

int etcd_lease_grant(etcd_t *e, unsigned ttl, int64_t *id, char *err,
                     size_t errlen)
{
	json_t *req = json_pack("{s:i}", "TTL", (int)ttl), *ans = NULL;
	int rc = etcd_post(e, "/v3/lease/grant", req, &ans, err, errlen);
	json_decref(req);
	if (rc)
		return rc;
	*id = etcd_int(ans, "ID");
	json_decref(ans);
	if (!*id) {
		snprintf(err, errlen, "%s: no lease granted", etcd_endpoint(e));
		return GSLB_EIO;
	}
	return 0;
}

int etcd_lease_keepalive(etcd_t *e, int64_t id, char *err, size_t errlen)
{
	char ids[32];
	snprintf(ids, sizeof(ids), "%lld", (long long)id);
	json_t *req = json_pack("{s:s}", "ID", ids), *ans = NULL;
	int rc = etcd_post(e, "/v3/lease/keepalive", req, &ans, err, errlen);
	json_decref(req);
	if (rc)
		return rc;
	/* An expired lease is renewed with a TTL of 0 (left out). */
	int64_t ttl = etcd_int(json_object_get(ans, "result"), "TTL");
	json_decref(ans);
	if (ttl <= 0) {
		snprintf(err, errlen, "lease %s has expired", ids);
		return GSLB_ENOENT;
	}
	return 0;
}

/* Watch ----------------------------------------------------------- */

typedef struct watch_ctx {
	buf_t line;
	int (*fn)(const json_t *, void *);
	int (*stop)(void *);
	void *arg;
	int rc;                 /* what fn returned */
} watch_ctx_t;

/* The stream is one JSON object per line. */
static size_t on_watch(char *data, size_t sz, size_t nm, void *arg)
{
	watch_ctx_t *w = arg;
	size_t n = sz * nm;
	buf_add(&w->line, data, n);
	char *nl;
	while (!w->rc && (nl = memchr(w->line.p, '\n', w->line.len))) {
		size_t l = (size_t)(nl - w->line.p);
		json_t *j = json_loadb(w->line.p, l, 0, NULL);
		memmove(w->line.p, nl + 1, w->line.len - l - 1);
		w->line.len -= l + 1;
		w->line.p[w->line.len] = 0;
		const json_t *res = json_object_get(j, "result");
		if (res)
			w->rc = w->fn(res, w->arg);
		json_decref(j);
	}
	if (w->line.len > ETCD_MAX_BODY)
		return 0;
	return w->rc ? 0 : n;
}

static int on_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c,
                       curl_off_t d)
{
	watch_ctx_t *w = arg;
	return w->stop && w->stop(w->arg);
}

int etcd_watch(etcd_t *e, const char *prefix, int64_t start,
               int (*fn)(const json_t *result, void *arg),
               int (*stop)(void *arg), void *arg, char *err, size_t errlen)
{
	json_t *cr = etcd_range_req(prefix, 1);
	json_object_set_new(cr, "start_revision", json_integer(start));
	json_t *req = json_pack("{s:o}", "create_request", cr);
	char *body = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	int rc = GSLB_EIO;
	e->transient = 0;
	for (size_t k = 0; k < e->n; k++) {
		size_t i = (e->good + k) % e->n;
		if (e->user && !e->token && authenticate(e, i, err, errlen))
			continue;
		char url[512];
		snprintf(url, sizeof(url), "%s/v3/watch", e->endpoints[i]);
		watch_ctx_t w = { { 0 }, fn, stop, arg, 0 };
		struct curl_slist *h = prepare(e, url, body, 0);
		curl_easy_setopt(e->curl, CURLOPT_WRITEFUNCTION, on_watch);
		curl_easy_setopt(e->curl, CURLOPT_WRITEDATA, &w);
		curl_easy_setopt(e->curl, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(e->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
		curl_easy_setopt(e->curl, CURLOPT_XFERINFODATA, &w);
		CURLcode cc = curl_easy_perform(e->curl);
		curl_slist_free_all(h);
		free(w.line.p);
		if (w.rc) {
			rc = w.rc;
			break;
		}
		if (cc == CURLE_ABORTED_BY_CALLBACK) {
			rc = 0;
			break;
		}
		long status = 0;
		curl_easy_getinfo(e->curl, CURLINFO_RESPONSE_CODE, &status);
		snprintf(err, errlen, "%s: watch ended: %s", e->endpoints[i],
		         cc == CURLE_OK ? "closed by etcd" : curl_easy_strerror(cc));
		if (status == 200) {
			/* The stream was up: the caller starts again from where
			 * it got, on the next endpoint if this one is gone. */
			e->good = (i + 1) % e->n;
			break;
		}
	}
	free(body);
	return rc;
}
