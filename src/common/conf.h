/* SPDX-License-Identifier: MIT */
/* gslbd.conf: YAML parsed with libyaml, validated into an immutable
 * conf_t.  Every error names the file and line.  Relative paths are taken
 * from the configuration file's directory.  See gslbd.conf(5). */
#ifndef GSLB_CONF_H
#define GSLB_CONF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/log.h"
#include "common/ytree.h"

typedef struct conf_listen {
	struct sockaddr_storage addr;
	socklen_t addrlen;
	char text[80];            /* as written: "127.0.0.1@5300" */
	int line;                 /* in the configuration file; 0: -l */
} conf_listen_t;

typedef struct conf_zone {
	char *name;               /* presentation form, lowercase, no final dot */
	uint8_t dname[256];       /* wire form, lowercase */
	char *file;               /* resolved path */
	int line;                 /* line of the entry in the config file */
} conf_zone_t;

typedef struct conf {
	char *path;               /* the configuration file */
	char *dir;                /* its directory */
	conf_listen_t *listen;
	size_t nlisten;
	unsigned workers;         /* 0 = one per CPU */
	char *identity;           /* "" hides CH TXT id.server and NSID */
	char *version;            /* "" hides CH TXT version.bind */
	char *user;               /* NULL: keep the starting user */
	int user_line;
	unsigned udp_max_payload; /* 512..4096, default 1232 */
	unsigned tcp_idle_timeout;/* seconds, default 10 */
	unsigned tcp_max_clients; /* default 1000 */
	unsigned tcp_max_per_source; /* connections of one source, default
	                                100, 0: no limit */
	unsigned tcp_source_prefix_v4; /* a source's network: /32 */
	unsigned tcp_source_prefix_v6; /* ... and /64 */
	unsigned max_cname_chain; /* default 8 */
	int log_level;            /* server.log-level: the default target's */
	log_target_t log[LOG_MAX_TARGETS]; /* the log section, or stderr at
	                                      log_level when it is absent */
	size_t nlog;
	conf_zone_t *zones;
	size_t nzones;
	char *db_path;            /* database.path, resolved */
	uint64_t db_map_size;     /* database.map-size, bytes, default 16G */
	uint32_t db_audit_keep;   /* database.audit-keep, seconds (0: all),
	                             default 90 days */
	char *geoip_path;         /* geoip.database, resolved; may be NULL */
	ynode_t *root;            /* the whole tree, for sections of other modules */
} conf_t;

/** Reads and validates @path.  Returns a new conf_t (free with conf_free)
 * or NULL with "FILE:LINE: reason" in @err. */
conf_t *conf_load(const char *path, char *err, size_t errlen);

/** Parses "ADDR@PORT" or "ADDR" (port 53) into @out; returns 0 or
 * GSLB_EINVAL. */
int conf_parse_listen(const char *text, conf_listen_t *out);

/** Replaces the listen list with @n addresses given on the command line.
 * Returns 0, or GSLB_EINVAL naming the bad one in @err. */
int conf_override_listen(conf_t *c, char **addrs, size_t n, char *err,
                         size_t errlen);

/** Checks what the host must provide and --check can see without
 * binding the listen ports: server.user exists, and every listen address
 * is an address of this host.  Returns 0, or -1 with every problem in
 * @err, one "FILE:LINE: reason" per line. */
int conf_check_host(const conf_t *c, char *err, size_t errlen);

/** Resolves @path relative to the configuration directory (new string). */
char *conf_path(const conf_t *c, const char *path);

void conf_free(conf_t *c);

/** One difference between two configurations: the key @path
 * ("health.interval", or a whole section such as "zones" when it is not
 * a map), with its text in each (NULL when absent; "..." when a list or
 * a map). */
typedef void (*conf_diff_fn)(const char *path, const char *old_text,
                             const char *new_text, void *arg);

/** Calls @fn for every key of a section (and every section that is not
 * a map) whose value differs between @a and @b, in the order of @b then
 * the keys only @a has.  Returns how many differ. */
size_t conf_diff(const conf_t *a, const conf_t *b, conf_diff_fn fn, void *arg);

/** Moves into @dst the values of @src that only a restart applies (listen
 * addresses, workers, user, TCP limits, database path and map size),
 * freeing @dst's own; @src keeps copies. */
void conf_keep_restart(conf_t *dst, const conf_t *src);

/* Helpers for modules that validate their own section of the tree
 * (health, cutover): each writes "FILE:LINE: reason" into @err and
 * returns -1 on error, 0 otherwise. */
int conf_sfail(const conf_t *c, const ynode_t *n, char *err, size_t errlen,
               const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/** Checks that @map is a map whose keys are all in NULL-terminated @allowed. */
int conf_skeys(const conf_t *c, const ynode_t *map, const char *section,
               const char *const *allowed, char *err, size_t errlen);
/** Reads a number in [@min, @max]. */
int conf_snumber(const conf_t *c, const ynode_t *n, const char *what,
                 double min, double max, double *out, char *err, size_t errlen);

/** One numeric key of a module's section: its name, allowed range and
 * the field it goes into (a double or an unsigned). */
typedef struct conf_num {
	const char *name;
	double min, max;
	int is_unsigned;          /* @dst is an unsigned (the value is cut to
	                             a whole number), else a double */
	void *dst;
} conf_num_t;

/** A conf_num_t for key @name in [@lo, @hi] read into *@dst, a double or
 * an unsigned; any other type of field does not compile. */
#define CONF_NUM(name, lo, hi, dst) \
	{ (name), (lo), (hi), _Generic((dst), double *: 0, unsigned *: 1), (dst) }

/** Reads key @k with value @v if it is one of the @n numeric keys @keys.
 * Returns 1 when it was (the value is in its field), 0 when @k is none
 * of them, -1 for a value that is not a number in range (conf_snumber(),
 * nothing written). */
int conf_snum_key(const conf_t *c, const char *k, const ynode_t *v,
                  const conf_num_t *keys, size_t n, char *err, size_t errlen);

/** Reads on/off, yes/no, true/false. */
int conf_sbool(const conf_t *c, const ynode_t *n, const char *what, int *out,
               char *err, size_t errlen);

#endif
