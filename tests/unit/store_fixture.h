/* SPDX-License-Identifier: MIT */
/* Test fixtures over real files: a temporary directory, a weight store
 * filled through the store API the way gslbctl fills it, and a MaxMind DB
 * built with geoip/build-demo.pl.  Shared by the unit tests and the query
 * fuzzer, so it uses no check macros: failures print and return an error
 * or NULL, and the caller asserts.
 *
 * Everything here is static inline: each test program includes it once
 * and uses what it needs. */
#ifndef GSLB_TEST_STORE_FIXTURE_H
#define GSLB_TEST_STORE_FIXTURE_H

#include "store/keys.h"
#include "store/weightdb.h"

#include <dirent.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/** Creates a fresh directory "$TMPDIR/gslbd-@tag-XXXXXX" into @dir (of
 * PATH_MAX bytes).  Returns 0 or -1. */
static inline int fx_mkdtemp(char *dir, const char *tag)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, PATH_MAX, "%s/gslbd-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp",
	         tag);
	return mkdtemp(dir) ? 0 : -1;
}

/** Removes @path and, for a directory, everything below it.  Returns 0
 * or -1 when something could not be removed. */
static inline int fx_rmrf(const char *path)
{
	struct stat st;
	if (lstat(path, &st))
		return -1;
	int rc = 0;
	if (S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
				continue;
			char sub[PATH_MAX];
			int n = snprintf(sub, sizeof(sub), "%s/%s", path,
			                 de->d_name);
			rc |= n < 0 || (size_t)n >= sizeof(sub) ? -1 : fx_rmrf(sub);
		}
		if (d)
			closedir(d);
		return rmdir(path) ? -1 : rc;
	}
	return unlink(path) ? -1 : rc;
}

/** Writes @text to @dir/@name.  Returns 0 or -1. */
static inline int fx_write(const char *dir, const char *name,
                           const char *text)
{
	char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f) ? -1 : 0;
}

/** Builds @dir/@mmdb from the network list @src_text (geoip/demo.txt's
 * format) with geoip/build-demo.pl, found under $GSLB_SRCDIR or the
 * current directory (the source tree, as tests/run.sh runs).  Returns 0
 * or -1. */
static inline int fx_mmdb(const char *dir, const char *mmdb,
                          const char *src_text)
{
	if (fx_write(dir, "geo-src.txt", src_text))
		return -1;
	const char *src = getenv("GSLB_SRCDIR");
	char cmd[3 * PATH_MAX];
	snprintf(cmd, sizeof(cmd),
	         "perl %s/geoip/build-demo.pl %s/geo-src.txt %s/%s",
	         src && *src ? src : ".", dir, dir, mmdb);
	if (system(cmd) != 0) {
		fprintf(stderr, "failed: %s\n", cmd);
		return -1;
	}
	return 0;
}

/** Applies @json_text, in the shape of `gslbctl export` ({"services":
 * [{name, ...}], "nodes": [{id, ...}], "weights": [{service, region,
 * isp, weights}], "health": {node: decision}}), to @db in one audited
 * change by @actor described by @what.  Returns the audit id (> 0), or a
 * negative error with the reason in @err. */
static inline int64_t fx_apply(weightdb_t *db, const char *actor,
                               const char *what, const char *json_text,
                               char *err, size_t errlen)
{
	json_error_t je;
	json_t *in = json_loads(json_text, 0, &je);
	if (!in) {
		snprintf(err, errlen, "fixture JSON line %d: %s", je.line, je.text);
		return -1;
	}
	wdb_txn_t *t = wdb_begin(db, actor, err, errlen);
	if (!t) {
		json_decref(in);
		return -1;
	}
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(in, "services"), i, o)
		wdb_set(t, WDB_SERVICE, json_string_value(json_object_get(o, "name")), o);
	json_array_foreach(json_object_get(in, "nodes"), i, o)
		wdb_set(t, WDB_NODE, json_string_value(json_object_get(o, "id")), o);
	json_array_foreach(json_object_get(in, "weights"), i, o) {
		char key[1024];
		wdb_row_key(key, sizeof(key),
		            json_string_value(json_object_get(o, "service")),
		            json_string_value(json_object_get(o, "region")),
		            json_string_value(json_object_get(o, "isp")));
		wdb_set(t, WDB_WEIGHT, key, o);
	}
	const char *id;
	json_object_foreach(json_object_get(in, "health"), id, o)
		wdb_set(t, WDB_HEALTH, id, o);
	json_decref(in);
	return wdb_commit(t, what, err, errlen);
}

/** Opens a new store at @dir/db and applies @json_text (fx_apply()).
 * Returns the store, or NULL after printing why. */
static inline weightdb_t *fx_store(const char *dir, const char *json_text)
{
	char p[PATH_MAX + 64], err[512];
	snprintf(p, sizeof(p), "%s/db", dir);
	weightdb_t *db = weightdb_open(p, err, sizeof(err));
	if (!db) {
		fprintf(stderr, "%s\n", err);
		return NULL;
	}
	if (fx_apply(db, "test:fixture", "fixture", json_text, err,
	             sizeof(err)) <= 0) {
		fprintf(stderr, "fixture: %s\n", err);
		weightdb_close(db);
		return NULL;
	}
	return db;
}

/* The GSLB data set of the fixtures ------------------------------------ */

/* Networks of the test MaxMind DB.  36.110.128.0/17 splits
 * 36.110.0.0/16, so a client in 36.110.0.0/17 is decided by a /17; the
 * 112.64.0.0/14 record has no region and the 198.51.100.0/24 one no ISP. */
#define FX_GEO_SRC                                                       \
	"36.110.0.0/16      cn-bj    ctcc   4134   CN  BJ\n"                 \
	"36.110.128.0/17    cn-tj    ctcc   4134   CN  TJ\n"                 \
	"123.112.0.0/12     cn-bj    cucc   4837   CN  BJ\n"                 \
	"14.16.0.0/12       cn-gd    ctcc   4134   CN  GD\n"                 \
	"112.64.0.0/14      -        cucc   4837\n"                          \
	"198.51.100.0/24    us-west  -      64500  US  CA\n"                 \
	"240e:e0::/28       cn-bj    ctcc   4134   CN  BJ\n"                 \
	"2001:db8:100::/40  us-west  other  64500  US  CA\n"

/* Services under cdn.example.test, each showing one behaviour:
 *   www       the four row levels: (cn-bj, ctcc) bj-ct, (cn-bj, *) bj-any
 *             (IPv4 only), (*, cucc) cu, (*, *) def
 *   fb        all_down fallback: its client rows are down, (*, *) is not
 *   fbnone    all_down fallback with every row down
 *   open      all_down open: (cn-bj, ctcc) down, (*, *) up
 *   empty     all_down empty: the same rows
 *   sticky    sticky, one row of four equal nodes s1..s4
 *   stickyrow sticky with a (cn-bj, *) row and a (*, *) row
 *   multi     three answers out of s1..s4
 *   cdn       a CNAME node (multi-CDN)
 *   short     a node within its short-TTL period (S0-11)
 *   rel       a gray release (S4-10) of s2 to a quarter of the clients of
 *             its (cn-bj, *) row; (*, *) def
 *   gw.edge   below the zone's wildcard; path is an empty non-terminal
 *   norows    a service without rows */
#define FX_NODE(id, addrs, extra)                                        \
	"{\"id\": \"" id "\", \"addrs\": [" addrs "], \"cname\": null,"  \
	" \"admin\": \"auto\", \"pool\": \"primary\"" extra "}"
#define FX_SVC(name, all_down, extra)                                    \
	"{\"name\": \"" name ".cdn.example.test\", \"ttl\": 60,"         \
	" \"short_ttl\": 10, \"answers\": 1, \"all_down\": \"" all_down  \
	"\", \"sticky\": false, \"shadow\": false" extra "}"
#define FX_ROW(svc, reg, isp, w)                                         \
	"{\"service\": \"" svc ".cdn.example.test\", \"region\": \"" reg \
	"\", \"isp\": \"" isp "\", \"weights\": {" w "}}"
#define FX_GSLB_JSON                                                     \
	"{\"nodes\": ["                                                  \
	FX_NODE("bj-ct", "\"192.0.2.11\", \"2001:db8:11::1\"", "") ","   \
	FX_NODE("bj-any", "\"192.0.2.12\"", "") ","                      \
	FX_NODE("cu", "\"192.0.2.21\", \"2001:db8:21::1\"", "") ","      \
	FX_NODE("def", "\"192.0.2.1\", \"2001:db8::1\"", "") ","         \
	FX_NODE("down-1", "\"192.0.2.91\"", ", \"admin\": \"down\"") "," \
	FX_NODE("down-2", "\"192.0.2.92\"", ", \"admin\": \"down\"") "," \
	FX_NODE("s1", "\"192.0.2.101\"", "") ","                         \
	FX_NODE("s2", "\"192.0.2.102\"", "") ","                         \
	FX_NODE("s3", "\"192.0.2.103\"", "") ","                         \
	FX_NODE("s4", "\"192.0.2.104\"", "") ","                         \
	FX_NODE("drain", "\"192.0.2.31\"", ", \"short_until\": 4000000000") "," \
	"{\"id\": \"cdn\", \"addrs\": [], \"cname\": \"edge.other.example.\"," \
	" \"admin\": \"auto\", \"pool\": \"primary\"}"                   \
	"], \"services\": ["                                             \
	FX_SVC("www", "open", "") ","                                    \
	FX_SVC("fb", "fallback", "") ","                                 \
	FX_SVC("fbnone", "fallback", "") ","                             \
	FX_SVC("open", "open", "") ","                                   \
	FX_SVC("empty", "empty", "") ","                                 \
	FX_SVC("sticky", "open", ", \"sticky\": true") ","               \
	FX_SVC("stickyrow", "open", ", \"sticky\": true") ","            \
	FX_SVC("multi", "open", ", \"answers\": 3") ","                  \
	FX_SVC("cdn", "open", "") ","                                    \
	FX_SVC("short", "open", ", \"short_ttl\": 5") ","                \
	FX_SVC("rel", "open", ", \"release\": {\"node\": \"s2\","        \
	       " \"state\": \"running\", \"percent\": 25}") ","             \
	FX_SVC("gw.edge", "open", "") ","                                \
	FX_SVC("path", "open", "") ","                                   \
	FX_SVC("norows", "open", "")                                     \
	"], \"weights\": ["                                              \
	FX_ROW("www", "cn-bj", "ctcc", "\"bj-ct\": 100") ","              \
	FX_ROW("www", "cn-bj", "*", "\"bj-any\": 100") ","                \
	FX_ROW("www", "*", "cucc", "\"cu\": 100") ","                     \
	FX_ROW("www", "*", "*", "\"def\": 100") ","                       \
	FX_ROW("fb", "cn-bj", "ctcc", "\"down-1\": 100") ","              \
	FX_ROW("fb", "cn-bj", "*", "\"down-2\": 100") ","                 \
	FX_ROW("fb", "*", "*", "\"def\": 100") ","                        \
	FX_ROW("fbnone", "cn-bj", "ctcc", "\"down-1\": 100") ","          \
	FX_ROW("fbnone", "*", "*", "\"down-2\": 100") ","                 \
	FX_ROW("open", "cn-bj", "ctcc", "\"down-1\": 100") ","            \
	FX_ROW("open", "*", "*", "\"def\": 100") ","                      \
	FX_ROW("empty", "cn-bj", "ctcc", "\"down-1\": 100") ","           \
	FX_ROW("empty", "*", "*", "\"def\": 100") ","                     \
	FX_ROW("sticky", "*", "*", "\"s1\": 100, \"s2\": 100, \"s3\": 100, \"s4\": 100") "," \
	FX_ROW("stickyrow", "cn-bj", "*", "\"s1\": 100, \"s2\": 100") "," \
	FX_ROW("stickyrow", "*", "*", "\"s3\": 100, \"s4\": 100") ","     \
	FX_ROW("multi", "*", "*", "\"s1\": 100, \"s2\": 100, \"s3\": 100, \"s4\": 100") "," \
	FX_ROW("cdn", "*", "*", "\"cdn\": 100") ","                       \
	FX_ROW("short", "*", "*", "\"drain\": 100, \"def\": 100") ","     \
	FX_ROW("rel", "cn-bj", "*", "\"s1\": 100, \"s2\": 100") ","       \
	FX_ROW("rel", "*", "*", "\"def\": 100") ","                     \
	FX_ROW("gw.edge", "*", "*", "\"def\": 100") ","                   \
	FX_ROW("path", "*", "*", "\"def\": 100")                          \
	"]}"

#endif
