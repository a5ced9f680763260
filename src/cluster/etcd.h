/* SPDX-License-Identifier: MIT */
/* A small etcd v3 client over its JSON gateway (POST /v3/kv/range,
 * /v3/kv/txn, /v3/watch, /v3/lease/...), with libcurl and jansson.  Keys
 * and values travel base64-encoded; 64-bit numbers arrive as strings, and
 * fields at their default (0, false, PUT) are left out by the gateway.
 *
 * Thread safety: an etcd_t is used by one thread at a time (it owns one
 * curl handle).  Each thread that talks to etcd makes its own. */
#ifndef GSLB_CLUSTER_ETCD_H
#define GSLB_CLUSTER_ETCD_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster/cluster_conf.h"

typedef struct etcd etcd_t;

/* The time limit of one bulk request (etcd_post_bulk()): reading 111,000
 * objects (16 MB in etcd, about 30 MB of JSON) took 0.2 to 1.1 s inside
 * etcd alone on a loaded 2-core machine, and more than the default 2 s
 * with the gateway's encoding and our parse; 60 s leaves a wide margin
 * and still ends a request to a hung member. */
#define ETCD_BULK_TIMEOUT_MS 60000

/** One key-value pair of an answer, decoded: @key and @value are
 * NUL-terminated copies owned by the caller (etcd_kv_clear()). */
typedef struct etcd_kv {
	char *key;
	char *value;
	size_t value_len;
	int64_t create_rev, mod_rev, version, lease;
} etcd_kv_t;

/** A client for the endpoints, TLS and credentials of @cc (copied).
 * Never fails (allocation failure aborts). */
etcd_t *etcd_new(const cluster_conf_t *cc);
void etcd_free(etcd_t *e);

/** POSTs @body (not stolen) to gateway @path ("/v3/kv/range") and stores
 * the JSON answer in *@out (new reference).  Tries the endpoint that last
 * answered first, then the others, each within the configured timeout.
 * Returns 0; GSLB_EIO when no endpoint answered (the reason in @err); or
 * GSLB_EINVAL when etcd answered with an error (its message in @err). */
int etcd_post(etcd_t *e, const char *path, json_t *body, json_t **out,
              char *err, size_t errlen);

/** etcd_post() for a whole table (the full read of a resync): the time
 * limit of one request is ETCD_BULK_TIMEOUT_MS, or the configured
 * timeout if longer, since etcd's gateway builds an answer of tens of
 * megabytes before it sends a byte. */
int etcd_post_bulk(etcd_t *e, const char *path, json_t *body, json_t **out,
                   char *err, size_t errlen);

/** Makes etcd_post() try again while its failure may pass (no leader
 * during an election, a member that took the request and did not
 * answer), never when no member could be reached at all: for at most
 * @budget_ms a request, 0.2 s after the first try, doubling up to 1 s.
 * 0 (the default) tries once.  A write retried this way must be
 * idempotent (a compare in its transaction). */
void etcd_set_retry(etcd_t *e, unsigned budget_ms);

/** The tries again made so far by @e's requests. */
unsigned etcd_retries(const etcd_t *e);

/** What the members say when a request failed. */
typedef struct etcd_health {
	unsigned members;      /* in the member list, at least the endpoints */
	unsigned answering;    /* endpoints that answered at all */
	int leader;            /* one of them knows a leader */
	char names[256];       /* the answering members' names, ", "-joined */
} etcd_health_t;

/** Asks every endpoint for its status (within a second each) and one
 * that answers for the member list, both served without a quorum. */
void etcd_health(etcd_t *e, etcd_health_t *h);

/** "unreachable" (no member answers), "no-quorum" (at most half of the
 * members answer, none knows a leader), "no-leader" (more answer, while
 * they elect one) or "up". */
const char *etcd_health_state(const etcd_health_t *h);

/** A one-line account of @h after a failure @err: "etcd is unreachable:
 * ERR", "no quorum: 1 of 3 members answer (e1)", "no leader: ...". */
void etcd_health_text(const etcd_health_t *h, const char *err, char *out,
                      size_t outlen);

/** The endpoint that answered last (for messages). */
const char *etcd_endpoint(const etcd_t *e);

/** Base64 of @n bytes at @s (new string). */
char *etcd_b64(const char *s, size_t n);
/** Decodes base64 @s into a new NUL-terminated buffer, its length in
 * *@n.  Returns NULL when @s is not base64. */
char *etcd_unb64(const char *s, size_t *n);
/** The key after every key that starts with @prefix (the range end of a
 * prefix), base64 (new string). */
char *etcd_prefix_end_b64(const char *prefix);

/** A 64-bit field of an answer: a string of digits or a number, 0 when
 * absent. */
int64_t etcd_int(const json_t *obj, const char *field);
/** Decodes answer object @kv into @out.  Returns 0 or GSLB_EINVAL. */
int etcd_kv_parse(const json_t *kv, etcd_kv_t *out);
void etcd_kv_clear(etcd_kv_t *kv);

/** A range request object for @key, or for every key under it when
 * @prefix (new reference). */
json_t *etcd_range_req(const char *key, int prefix);

/** Reads every key under @prefix as of revision @rev in one bulk request
 * (etcd_post_bulk()): the answer object in *@out.  Returns 0 or the
 * error of etcd_post_bulk(). */
int etcd_range_at(etcd_t *e, const char *prefix, int64_t rev, json_t **out,
                  char *err, size_t errlen);

/** Calls @fn for each key of range answer @range (an object with
 * "kvs"), decoded, in the answer's order, until @fn returns non-zero;
 * entries that do not decode are passed over.  Returns what @fn
 * returned last, or 0. */
int etcd_kvs_each(const json_t *range, int (*fn)(const etcd_kv_t *kv, void *arg),
                  void *arg);

/** Reads the keys under @prefix (or only @prefix when !@all) and calls
 * @fn for each; the header revision goes into *@rev.  Returns 0 or the
 * error of etcd_post(). */
int etcd_get(etcd_t *e, const char *key, int prefix, int64_t *rev,
             int (*fn)(const etcd_kv_t *kv, void *arg), void *arg,
             char *err, size_t errlen);

/** Grants a lease of @ttl seconds; its id in *@id.  0 or an error. */
int etcd_lease_grant(etcd_t *e, unsigned ttl, int64_t *id, char *err,
                     size_t errlen);
/** Renews lease @id once.  Returns 0, GSLB_ENOENT when the lease has
 * expired, or an error. */
int etcd_lease_keepalive(etcd_t *e, int64_t id, char *err, size_t errlen);

/** Watches every key under @prefix from revision @start, calling @fn
 * with each "result" object of the stream (borrowed) until @fn returns
 * non-zero, @stop(@arg) returns non-zero (checked about once a second),
 * or the stream breaks.  Returns what @fn returned, 0 when stopped, or
 * GSLB_EIO with the reason in @err when the stream broke. */
int etcd_watch(etcd_t *e, const char *prefix, int64_t start,
               int (*fn)(const json_t *result, void *arg),
               int (*stop)(void *arg), void *arg, char *err, size_t errlen);

#endif
