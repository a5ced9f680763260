/* SPDX-License-Identifier: MIT */
/* An operator's change of the table written to etcd: the store
 * transaction that validated it (gslbctl's command, a request of gslbd's
 * HTTP API) becomes one etcd transaction that compares the change
 * marker and the mod revision of each object written with what the
 * store read, and puts the objects, the key files their signing key
 * records name, the marker (with a nonce) and the change's record in
 * the cluster's log (clog.h).  Then the local store gets the change at
 * once, unless that would skip revisions it has not applied yet (the
 * watch then applies it in order).  See sync.h for the layout.
 *
 * No state: safe on any thread with its own etcd client (etcd.h). */
#ifndef GSLB_CLUSTER_COMMIT_H
#define GSLB_CLUSTER_COMMIT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster/etcd.h"
#include "store/weightdb.h"

/** What cluster_commit() made of a change. */
typedef enum cluster_commit_class {
	CLUSTER_COMMIT_OK = 0,       /* written to etcd */
	CLUSTER_COMMIT_LOCAL,        /* nothing of the cluster's table (pushed
	                                metrics only): the caller commits the
	                                transaction locally, still open */
	CLUSTER_COMMIT_INVALID,      /* the store's checks refused it */
	CLUSTER_COMMIT_UNAVAILABLE,  /* etcd did not answer (no member, no
	                                quorum, no leader): nothing written */
	CLUSTER_COMMIT_REFUSED,      /* etcd answered with an error, or a key
	                                file could not be read: nothing
	                                written */
	CLUSTER_COMMIT_RACE,         /* someone else changed the table since
	                                the store read it: nothing written */
} cluster_commit_class_t;

/* cluster_writer_t.marker: the change marker may be at any revision the
 * store reflects (gslbd's watch keeps the store current, so there is no
 * read of its own before the change). */
#define CLUSTER_MARKER_STORE INT64_C(-1)

/** Who writes, and where. */
typedef struct cluster_writer {
	etcd_t *etcd;              /* the writer's client (its thread's) */
	weightdb_t *db;            /* the local store */
	const char *prefix;        /* the cluster's prefix, "/gslbd/" */
	const char *instance;      /* this instance's name, in the records */
	const char *keystore;      /* where key files are read (NULL: none) */
	int64_t marker;            /* the change marker's mod revision read
	                              before the change was validated, or
	                              CLUSTER_MARKER_STORE */
	int read_first;            /* read the change marker before the write
	                              (gslbctl did already): without a quorum
	                              the read fails and leaves nothing behind,
	                              where a write that a member took and
	                              could not commit in time may still be
	                              committed later */
	unsigned delay_ms;         /* tests: a sleep between the store's read
	                              and the write to etcd, to make two
	                              writers race for certain */
} cluster_writer_t;

/** What a change written to etcd left. */
typedef struct cluster_commit_out {
	int64_t rev;               /* the etcd revision of the change */
	unsigned retries;          /* tries again the write took (etcd was
	                              electing a leader or lost an answer) */
	int local;                 /* 1: in the local store too; 0: left to
	                              the watch (the store lacked earlier
	                              revisions); -1: the local write failed,
	                              the reason in local_err */
	char local_err[512];
} cluster_commit_out_t;

/** Writes the shared changes of @t (a write transaction of @w->db,
 * changed and not committed) as @actor, described by @what, to etcd.
 * Returns CLUSTER_COMMIT_OK with @out filled and @t ended;
 * CLUSTER_COMMIT_LOCAL with @t untouched; or another class with the
 * message in @err (the words gslbctl prints: "cluster: the table was
 * changed by someone else since it was read; nothing was written;
 * retry") and @t ended. */
cluster_commit_class_t cluster_commit(const cluster_writer_t *w, wdb_txn_t *t,
                                      const char *what, const char *actor,
                                      cluster_commit_out_t *out, char *err,
                                      size_t errlen);

/** Whether @t changes anything of the cluster's table (else it is a
 * CLUSTER_COMMIT_LOCAL change). */
int cluster_commit_shared(wdb_txn_t *t);

/** The reason a request of @e failed with @rc (@err its message), for a
 * message: when no member answered it, what the members say ("no
 * quorum: 1 of 3 members answer (e1)"); else @refused and @err.
 * Returns @out. */
const char *cluster_etcd_why(etcd_t *e, int rc, const char *err,
                             const char *refused, char *out, size_t n);

/** Whether a table key under @prefix changed in etcd from revision
 * @from to @to, as etcd holds it at revision @at.  Any doubt (etcd did
 * not answer) counts as a change. */
int cluster_changed_in(etcd_t *e, const char *prefix, int64_t from,
                       int64_t to, int64_t at);

#endif
