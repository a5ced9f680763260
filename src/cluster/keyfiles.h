/* SPDX-License-Identifier: MIT */
/* The signing keys' private halves through etcd.  In cluster mode the
 * key metadata is part of the shared table (config/dnssec/...), and
 * each key's PEM file travels beside it as P keystore/FILE (the file's
 * bytes), put in the same transaction as the record that names it, so
 * that every instance gets the file with (or before) the record.  Each
 * gslbd writes the files it reads from etcd into its own keystore
 * (mode 0600, through a temporary file and a rename), never removes
 * one, and makes the key loading read the store again after a file
 * arrived.  Whoever can read the prefix in etcd can sign for the
 * zones: etcd must use TLS and authentication (docs/CLUSTER.md).
 *
 * Thread safety: the keystore path is set once at start, before the
 * cluster threads; the rest is called by one thread at a time per
 * etcd_t. */
#ifndef GSLB_CLUSTER_KEYFILES_H
#define GSLB_CLUSTER_KEYFILES_H

#include <jansson.h>
#include <stddef.h>

#include "cluster/etcd.h"
#include "store/weightdb.h"

/* A key file's size limit: a PKCS#8 PEM of either algorithm is near
 * 250 bytes. */
#define KEYFILE_MAX 8192

/** The keystore directory the watch writes into (NULL: none). */
void cluster_keyfile_use(const char *keystore);
const char *cluster_keyfile_dir(void);

/** Whether etcd key @ekey is a key file under @prefix: 1 with its file
 * name in *@file (pointing into @ekey), else 0. */
int cluster_keyfile_key(const char *prefix, const char *ekey,
                        const char **file);

/** Whether @file is a plain file name (no '/', not "." or ".."). */
int cluster_keyfile_name_ok(const char *file);

/** The puts (etcd transaction operations) of the key files that the
 * dnssec records of @changes ([{kind, key, before, after}]) name, read
 * from @keystore, appended to @ops; a file that is not in @keystore is
 * left out when "before" named it already (it is in etcd since).
 * Returns 0, or -1 with @err when a file named cannot be read. */
int cluster_keyfile_ops(const char *prefix, const char *keystore,
                        json_t *changes, json_t *ops, char *err,
                        size_t errlen);

/** Writes @len bytes at @data as @file into @keystore (0600) unless the
 * file holds them already.  Returns 1 written, 0 already there, -1 with
 * @err. */
int cluster_keyfile_write(const char *keystore, const char *file,
                          const char *data, size_t len, char *err,
                          size_t errlen);

/** Writes every key file under @prefix in etcd into the keystore
 * (cluster_keyfile_use()).  Returns how many were written (new or
 * changed), or an error of etcd with @err. */
int cluster_keyfile_load(etcd_t *e, const char *prefix, char *err,
                         size_t errlen);

/** Makes the daemon load the signing keys again (the store's
 * "dnssecgen" moves): after key files arrived.  Returns 0 or -1. */
int cluster_keyfile_reload(weightdb_t *db, const char *actor);

#endif
