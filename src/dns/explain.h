/* SPDX-License-Identifier: MIT */
/* Why a client gets the answer it gets, told by the query path itself:
 * gslbctl explain and the HTTP API's /v1/explain build the query dig
 * would send (EDNS, with a Client Subnet option for IP/LEN, from the
 * resolver address IP otherwise), answer it with query_process() and
 * turn the decision trail it recorded (query.h query_trail_t) and the
 * response into one document.  Nothing here decides anything: whether
 * a node is usable, and why, is what its plan says (store/plan.h).  The
 * steering view of the answering row comes from the caller, as dns/ may
 * not include steer/. */
#ifndef GSLB_EXPLAIN_H
#define GSLB_EXPLAIN_H

#include <jansson.h>
#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/conf.h"
#include "common/util.h"
#include "dns/query.h"
#include "dns/snapshot.h"
#include "gslb/gslb.h"
#include "store/weightdb.h"

/** What to explain: the question and the client. */
typedef struct explain_ask {
	uint8_t qname[DNAME_MAXLEN + 1];   /* wire, as given */
	size_t qlen;
	char name[1100];                   /* lowercase, no final dot */
	uint16_t qtype;
	const char *client;                /* as given */
	struct sockaddr_storage src;       /* the resolver's address */
	int ecs;                           /* send a Client Subnet option */
	uint8_t ecs_family, ecs_source;
	uint8_t ecs_addr[16];              /* zero beyond the prefix */
} explain_ask_t;

/** One run of the query path and what it left behind. */
typedef struct explain_run {
	weightdb_t *db;                    /* the store the answer reads */
	snapshot_t *own;                   /* a snapshot built for the run, or NULL */
	const snapshot_t *snap;
	qctx_t q;                          /* holds the store reader */
	query_trail_t trail;
	uint8_t out[65535];
	size_t len;
	int tcp;                           /* truncated over UDP: asked again */
} explain_run_t;

/** Reads name @arg into @a (as given, and lowercase without the final
 * dot).  Returns 0, or -1 with "'ARG' is not a valid domain name" in
 * @err. */
int explain_name(const char *arg, explain_ask_t *a, char *err, size_t errlen);

/** Reads client @client into @a: IP/LEN is sent as an ECS option, a
 * bare IP is the resolver's address, exactly what the server would see.
 * Returns 0, or -1 with the reason in @err ("--client X is not an IP
 * address"). */
int explain_client(const char *client, explain_ask_t *a, char *err,
                   size_t errlen);

/** Answers @a into @r through query_process() as gslbd would, with the
 * store @db and snapshot @snap (NULL: one built from @conf for the run,
 * as gslbctl does); a truncated UDP answer is asked again over TCP, as
 * dig does.  Returns 0, or -1 with the reason in @err.  The caller ends
 * @r with explain_run_free() in either case. */
int explain_run(const explain_ask_t *a, const conf_t *conf, const snapshot_t *snap,
                weightdb_t *db, explain_run_t *r, char *err, size_t errlen);

/** Frees what explain_run() took for @r. */
void explain_run_free(explain_run_t *r);

/** The steering view of weight row @key read in @t (NULL: the row's
 * service does not steer); @arg is the caller's. */
typedef json_t *(*explain_steer_fn)(void *arg, wdb_txn_t *t, const char *key);

/** The document of run @r of @a, as `gslbctl --json explain` prints it
 * but for its "format" and "generated": for a service answer the
 * client, its location, the row chain, the candidates, TTL, release and
 * (through @steer, may be NULL) steering; else the zone data's answer.
 * A new reference. */
json_t *explain_json(const explain_ask_t *a, const explain_run_t *r,
                     explain_steer_fn steer, void *arg);

#endif
