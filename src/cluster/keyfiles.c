/* SPDX-License-Identifier: MIT */
/* The signing keys' private halves through etcd (cluster/keyfiles.h). */
#include "cluster/keyfiles.h"
#include "common/log.h"
#include "common/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *g_dir;        /* set once at start */

void cluster_keyfile_use(const char *keystore)
{
	free(g_dir);
	g_dir = keystore ? xstrdup(keystore) : NULL;
	if (g_dir && mkdir(g_dir, 0700) && errno != EEXIST)
		log_warning("cluster: cannot make the keystore %s: %s", g_dir,
		            strerror(errno));
}

const char *cluster_keyfile_dir(void)
{
	return g_dir;
}

int cluster_keyfile_name_ok(const char *file)
{
	return file && file[0] && !strchr(file, '/') && strcmp(file, ".") &&
	       strcmp(file, "..") && strlen(file) < 200;
}

int cluster_keyfile_key(const char *prefix, const char *ekey,
                        const char **file)
{
	size_t pl = strlen(prefix);
	if (strncmp(ekey, prefix, pl) != 0 || strncmp(ekey + pl, "keystore/", 9) != 0)
		return 0;
	*file = ekey + pl + 9;
	return cluster_keyfile_name_ok(*file);
}

/* The bytes of @path (at most KEYFILE_MAX) into @buf; their number, or
 * -1 (errno set). */
static ssize_t read_small(const char *path, char *buf)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, KEYFILE_MAX);
	int e = errno;
	close(fd);
	errno = e;
	return n;
}

static char *path_of(const char *dir, const char *file)
{
	size_t n = strlen(dir) + strlen(file) + 2;
	char *p = xmalloc(n);
	snprintf(p, n, "%s/%s", dir, file);
	return p;
}

int cluster_keyfile_ops(const char *prefix, const char *keystore,
                        json_t *changes, json_t *ops, char *err,
                        size_t errlen)
{
	size_t i;
	json_t *c;
	json_array_foreach(changes, i, c) {
		const char *kind = json_string_value(json_object_get(c, "kind"));
		const char *file = json_string_value(json_object_get(
			json_object_get(c, "after"), "file"));
		if (!kind || strcmp(kind, "dnssec") || !file)
			continue;
		if (!keystore || !cluster_keyfile_name_ok(file)) {
			snprintf(err, errlen, "key file %s: %s", file,
			         keystore ? "not a file name" : "no dnssec: keystore");
			return -1;
		}
		char buf[KEYFILE_MAX], *path = path_of(keystore, file);
		ssize_t n = read_small(path, buf);
		/* A record that named the file before (a retire, a rollover's
		 * later step): the file went to etcd with the record that
		 * first named it, so one lost here holds nothing up. */
		const char *was = json_string_value(json_object_get(
			json_object_get(c, "before"), "file"));
		if (n < 0 && errno == ENOENT && was && !strcmp(was, file)) {
			free(path);
			continue;
		}
		if (n <= 0) {
			snprintf(err, errlen, "key file %s: %s: the cluster's other "
			         "instances need it", path, n < 0 ? strerror(errno) : "empty");
			free(path);
			return -1;
		}
		free(path);
		char ek[512];
		snprintf(ek, sizeof(ek), "%skeystore/%s", prefix, file);
		char *bk = etcd_b64(ek, strlen(ek)), *bv = etcd_b64(buf, (size_t)n);
		explicit_bzero(buf, sizeof(buf));
		json_array_append_new(ops, json_pack("{s:{s:s, s:s}}", "request_put",
		                      "key", bk, "value", bv));
		explicit_bzero(bv, strlen(bv));
		free(bk);
		free(bv);
	}
	return 0;
}

int cluster_keyfile_write(const char *keystore, const char *file,
                          const char *data, size_t len, char *err,
                          size_t errlen)
{
	if (!cluster_keyfile_name_ok(file) || len == 0 || len > KEYFILE_MAX) {
		snprintf(err, errlen, "key file '%s' from etcd: not a key file", file);
		return -1;
	}
	char buf[KEYFILE_MAX], *path = path_of(keystore, file);
	ssize_t n = read_small(path, buf);
	int same = n == (ssize_t)len && memcmp(buf, data, len) == 0;
	explicit_bzero(buf, sizeof(buf));
	if (same) {
		free(path);
		return 0;
	}
	size_t tl = strlen(path) + 16;
	char *tmp = xmalloc(tl);
	snprintf(tmp, tl, "%s.etcd-tmp", path);
	unlink(tmp);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	int rc = -1;
	if (fd >= 0 && write(fd, data, len) == (ssize_t)len && fsync(fd) == 0 &&
	    close(fd) == 0) {
		fd = -1;
		rc = rename(tmp, path);
	}
	if (rc)
		snprintf(err, errlen, "key file %s from etcd: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
	if (rc)
		unlink(tmp);
	free(tmp);
	free(path);
	return rc ? -1 : 1;
}

typedef struct load {
	const char *prefix;
	int written, failed;
} load_t;

static int load_one(const etcd_kv_t *kv, void *arg)
{
	load_t *l = arg;
	const char *file;
	char err[512];
	if (!cluster_keyfile_key(l->prefix, kv->key, &file))
		return 0;
	int rc = cluster_keyfile_write(g_dir, file, kv->value, kv->value_len, err,
	                               sizeof(err));
	if (rc < 0) {
		log_err("cluster: %s", err);
		l->failed++;
	} else {
		l->written += rc;
	}
	return 0;
}

int cluster_keyfile_load(etcd_t *e, const char *prefix, char *err,
                         size_t errlen)
{
	if (!g_dir)
		return 0;
	char key[512];
	snprintf(key, sizeof(key), "%skeystore/", prefix);
	load_t l = { prefix, 0, 0 };
	int rc = etcd_get(e, key, 1, NULL, load_one, &l, err, errlen);
	return rc ? rc : l.written;
}

int cluster_keyfile_reload(weightdb_t *db, const char *actor)
{
	char err[512];
	wdb_txn_t *t = wdb_begin(db, actor, err, sizeof(err));
	if (!t)
		return -1;
	if (wdb_set_meta_u64(t, "dnssecgen", wdb_meta_u64(t, "dnssecgen") + 1)) {
		wdb_abort(t);
		return -1;
	}
	if (wdb_commit(t, "signing key files written from etcd", err, sizeof(err)) < 0) {
		log_err("cluster: %s", err);
		return -1;
	}
	return 0;
}
