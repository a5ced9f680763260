/* SPDX-License-Identifier: MIT */
/* The cookie secret shared through etcd (cluster/cookie_share.h).
 *
 * The value of <prefix>cookie-secret is a JSON object: {"generation": N,
 * "born": unix time, "current": base64, "previous": base64 (absent at
 * generation 1)}, each secret COOKIE_SECRET_LEN bytes.  Whoever can read
 * the prefix in etcd can make valid server cookies: the secret is as
 * protected as the table itself (etcd's TLS and authentication).
 *
 * One thread: read the key (create it when absent), offer it, watch it
 * until it changes, the stream breaks, or (elected) its lifetime is
 * over, then rotate it with a transaction on its mod revision, so that
 * two instances that both believe they are elected rotate it once. */
#include "cluster/cookie_share.h"
#include "cluster/etcd.h"
#include "common/log.h"
#include "common/util.h"
#include "dns/cookie.h"

#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

struct cookie_share {
	cluster_t *cl;
	etcd_t *e;
	pthread_t thread;
	char key[300];
	unsigned rotate;
	int stop;                /* atomic */
	uint64_t gen;            /* atomic: last read from etcd */
	int kept;                /* atomic: etcd failed, the secret kept */
	uint32_t born;           /* the current secret's, as read */
	int64_t mod_rev;         /* the key's, as read */
	cookie_keys_t keys;      /* as read */
};

/* The secret @name of @v (base64 of COOKIE_SECRET_LEN bytes) into @out:
 * 0, or -1 when absent or malformed. */
static int secret_of(const json_t *v, const char *name, uint8_t *out)
{
	const char *b = json_string_value(json_object_get(v, name));
	size_t n = 0;
	char *raw = b ? etcd_unb64(b, &n) : NULL;
	int ok = raw && n == COOKIE_SECRET_LEN;
	if (ok)
		memcpy(out, raw, COOKIE_SECRET_LEN);
	if (raw)
		explicit_bzero(raw, n);
	free(raw);
	return ok ? 0 : -1;
}

/* Parses the value of the key (@kv) into @s: 0, or -1 (logged). */
static int parse_value(cookie_share_t *s, const etcd_kv_t *kv)
{
	json_t *v = json_loadb(kv->value, kv->value_len, 0, NULL);
	cookie_keys_t k = { .n = 1 };
	json_int_t gen = json_integer_value(json_object_get(v, "generation"));
	json_int_t born = json_integer_value(json_object_get(v, "born"));
	int rc = -1;
	if (gen > 0 && born > 0 && !secret_of(v, "current", k.key[0])) {
		if (!secret_of(v, "previous", k.key[1]))
			k.n = 2;
		s->keys = k;
		s->born = (uint32_t)born;
		s->mod_rev = kv->mod_rev;
		rc = 0;
		__atomic_store_n(&s->gen, (uint64_t)gen, __ATOMIC_RELAXED);
	} else {
		log_warning("cookies: %s in etcd is not a cookie secret "
		            "(generation, born, current): ignored", s->key);
	}
	json_decref(v);
	explicit_bzero(&k, sizeof(k));
	return rc;
}

/* Writes generation @gen of the secret (@k, born @born) if the key's mod
 * revision is still @rev (0: the key is absent).  Returns 1 when written,
 * 0 when another write came first, or an error of etcd_post(). */
static int put_if(cookie_share_t *s, int64_t rev, uint64_t gen, uint32_t born,
                  const cookie_keys_t *k, char *err, size_t errlen)
{
	char *cur = etcd_b64((const char *)k->key[0], COOKIE_SECRET_LEN);
	json_t *v = json_pack("{s:I, s:I, s:s}", "generation", (json_int_t)gen,
	                      "born", (json_int_t)born, "current", cur);
	free(cur);
	if (k->n > 1) {
		char *prev = etcd_b64((const char *)k->key[1], COOKIE_SECRET_LEN);
		json_object_set_new(v, "previous", json_string(prev));
		free(prev);
	}
	char *text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
	json_decref(v);
	char *bk = etcd_b64(s->key, strlen(s->key));
	char *bv = etcd_b64(text, strlen(text));
	explicit_bzero(text, strlen(text));
	free(text);
	char r[32];
	snprintf(r, sizeof(r), "%lld", (long long)rev);
	json_t *req = json_pack("{s:[{s:s, s:s, s:s, s:s}], s:[{s:{s:s, s:s}}]}",
	                        "compare", "target", rev ? "MOD" : "CREATE",
	                        "key", bk, "result", "EQUAL",
	                        rev ? "mod_revision" : "create_revision", r,
	                        "success", "request_put", "key", bk, "value", bv);
	free(bk);
	free(bv);
	json_t *ans = NULL;
	int rc = etcd_post(s->e, "/v3/kv/txn", req, &ans, err, errlen);
	json_decref(req);
	if (rc == 0)
		rc = json_is_true(json_object_get(ans, "succeeded"));
	json_decref(ans);
	return rc;
}

static int one_kv(const etcd_kv_t *kv, void *arg)
{
	cookie_share_t *s = arg;
	return strcmp(kv->key, s->key) == 0 ? parse_value(s, kv) : 0;
}

/* Reads the key, creating it from this instance's secret when absent, and
 * offers it; its header revision in *@rev.  0 or an error (in @err). */
static int read_key(cookie_share_t *s, int64_t *rev, char *err, size_t errlen)
{
	for (int tries = 0; tries < 3; tries++) {
		s->mod_rev = 0;
		int rc = etcd_get(s->e, s->key, 0, rev, one_kv, s, err, errlen);
		if (rc)
			return rc;
		if (s->mod_rev) {
			cookie_offer(&s->keys, __atomic_load_n(&s->gen, __ATOMIC_RELAXED));
			return 0;
		}
		/* Absent: the secret this instance has makes the first
		 * generation, so its clients' cookies stay valid. */
		cookie_keys_t k = { .n = 1 };
		cookie_keys_t mine;
		if (cookie_current(&mine) == 0)
			memcpy(k.key[0], mine.key[0], COOKIE_SECRET_LEN);
		else if (getrandom(k.key[0], COOKIE_SECRET_LEN, 0) != COOKIE_SECRET_LEN)
			return GSLB_EIO;
		rc = put_if(s, 0, 1, (uint32_t)time(NULL), &k, err, errlen);
		explicit_bzero(&k, sizeof(k));
		explicit_bzero(&mine, sizeof(mine));
		if (rc < 0)
			return rc;
		if (rc == 1)
			log_notice("cookies: created the cluster's secret in etcd (%s)",
			           s->key);
	}
	snprintf(err, errlen, "%s: created and gone again", s->key);
	return GSLB_EIO;
}

/* Whether the elected instance's rotation is due. */
static int rotation_due(const cookie_share_t *s)
{
	uint32_t now = (uint32_t)time(NULL);
	if (!s->born || now < s->born || now - s->born < s->rotate)
		return 0;
	cluster_info_t ci;
	cluster_info(s->cl, &ci);
	return ci.elected;
}

/* The watch's stop test, about once a second: stopping, or a rotation
 * to make. */
static int watch_stop(void *arg)
{
	cookie_share_t *s = arg;
	return __atomic_load_n(&s->stop, __ATOMIC_RELAXED) || rotation_due(s);
}

/* Any event on the key ends the watch: the key is read again. */
static int on_result(const json_t *result, void *arg)
{
	(void)arg;
	return json_array_size(json_object_get(result, "events")) > 0;
}

/* The elected instance's rotation: a new current secret, the current one
 * still accepted. */
static void rotate(cookie_share_t *s)
{
	char err[1024];
	cookie_keys_t k = { .n = 2 };
	if (getrandom(k.key[0], COOKIE_SECRET_LEN, 0) != COOKIE_SECRET_LEN)
		return;
	memcpy(k.key[1], s->keys.key[0], COOKIE_SECRET_LEN);
	uint64_t gen = __atomic_load_n(&s->gen, __ATOMIC_RELAXED) + 1;
	int rc = put_if(s, s->mod_rev, gen, (uint32_t)time(NULL), &k, err,
	                sizeof(err));
	explicit_bzero(&k, sizeof(k));
	if (rc == 1)
		log_notice("cookies: rotated the cluster's secret to generation %llu",
		           (unsigned long long)gen);
	else if (rc < 0)
		log_warning("cookies: cannot rotate the cluster's secret: %s", err);
}

/* Sleeps about a second unless stopping. */
static void pause_1s(cookie_share_t *s)
{
	for (int i = 0; i < 10 && !__atomic_load_n(&s->stop, __ATOMIC_RELAXED); i++)
		usleep(100000);
}

/* Notes an etcd failure (@err): the secret in use is kept; logged once
 * per outage. */
static void keep(cookie_share_t *s, const char *err)
{
	if (__atomic_exchange_n(&s->kept, 1, __ATOMIC_RELAXED))
		return;
	log_warning("cookies: cannot read the cluster's secret from etcd (%s): "
	            "keeping the secret in use (generation %llu) until it can",
	            err, (unsigned long long)__atomic_load_n(&s->gen,
	                                                     __ATOMIC_RELAXED));
}

static void *run(void *arg)
{
	cookie_share_t *s = arg;
	char err[1024];
	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		int64_t rev = 0;
		if (read_key(s, &rev, err, sizeof(err))) {
			keep(s, err);
			pause_1s(s);
			continue;
		}
		if (__atomic_exchange_n(&s->kept, 0, __ATOMIC_RELAXED))
			log_notice("cookies: etcd answers again: the cluster's secret "
			           "is generation %llu", (unsigned long long)s->gen);
		if (rotation_due(s)) {
			rotate(s);
			continue;
		}
		int rc = etcd_watch(s->e, s->key, rev + 1, on_result, watch_stop, s,
		                    err, sizeof(err));
		if (rc < 0) {
			keep(s, err);
			pause_1s(s);
		}
	}
	return NULL;
}

cookie_share_t *cookie_share_start(const cluster_conf_t *cc, cluster_t *cl,
                                   unsigned rotate_s, char *err, size_t errlen)
{
	cookie_share_t *s = xcalloc(1, sizeof(*s));
	s->cl = cl;
	s->rotate = rotate_s;
	/* A test hook: rotations seconds apart rather than hours. */
	const char *t = getenv("GSLBD_TEST_COOKIE_ROTATE");
	if (t && atoi(t) > 0)
		s->rotate = (unsigned)atoi(t);
	snprintf(s->key, sizeof(s->key), "%scookie-secret", cc->prefix);
	s->e = etcd_new(cc);
	cookie_shared(1);
	if (pthread_create(&s->thread, NULL, run, s)) {
		snprintf(err, errlen, "cookies: cannot start the thread that shares "
		         "the secret");
		etcd_free(s->e);
		free(s);
		return NULL;
	}
	return s;
}

void cookie_share_stop(cookie_share_t *s)
{
	if (!s)
		return;
	__atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
	pthread_join(s->thread, NULL);
	etcd_free(s->e);
	explicit_bzero(s, sizeof(*s));
	free(s);
}

void cookie_share_info(const cookie_share_t *s, uint64_t *gen, int *kept)
{
	*gen = s ? cookie_shared_gen() : 0;
	*kept = s ? __atomic_load_n(&s->kept, __ATOMIC_RELAXED) : 0;
}
