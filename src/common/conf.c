/* SPDX-License-Identifier: MIT */
/* gslbd.conf parsing and validation. */
#include "common/conf.h"
#include "common/num.h"
#include "common/conf_listen.h"
#include "common/log.h"
#include "common/util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <pwd.h>
#include <strings.h>

typedef struct {
	const conf_t *c;
	char *err;
	size_t errlen;
} ctx_t;

__attribute__((format(printf, 3, 4)))
static int fail(ctx_t *x, const ynode_t *n, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(x->err, x->errlen, "%s:%d: %s", x->c->path, n ? n->line : 1, msg);
	return -1;
}

/* Checks that every key of @map is one of the NULL-terminated @allowed. */
static int check_keys(ctx_t *x, const ynode_t *map, const char *section,
                      const char *const *allowed)
{
	for (size_t i = 0; i < map->n; i++) {
		const char *k = map->keys[i]->value;
		const char *const *a;
		for (a = allowed; *a; a++)
			if (strcmp(*a, k) == 0)
				break;
		if (!*a)
			return fail(x, map->keys[i], "unknown key '%s' in %s", k, section);
	}
	return 0;
}

static int get_map(ctx_t *x, const ynode_t *n, const char *what)
{
	if (n->kind != YNODE_MAP)
		return fail(x, n, "%s must be a map of key: value", what);
	return 0;
}

static int get_str(ctx_t *x, const ynode_t *n, const char *what, char **out)
{
	if (n->kind != YNODE_SCALAR)
		return fail(x, n, "%s must be a single value", what);
	free(*out);
	*out = xstrdup(n->value);
	return 0;
}

static int get_uint(ctx_t *x, const ynode_t *n, const char *what,
                    unsigned min, unsigned max, unsigned *out)
{
	if (n->kind != YNODE_SCALAR)
		return fail(x, n, "%s must be a number", what);
	const num_range_t r = { min, max, NUM_WHOLE, NULL, NULL };
	double v;
	if (num_parse(n->value, &r, &v, NULL))
		return fail(x, n, "%s must be a whole number from %u to %u, not '%s'",
		            what, min, max, n->value);
	*out = (unsigned)v;
	return 0;
}

/* A whole number with an optional unit suffix: @units lists the
 * suffixes and @scale their multipliers. */
static int get_scaled(ctx_t *x, const ynode_t *n, const char *what,
                      const char *const *units, const double *scale, uint64_t min,
                      uint64_t max, const char *range, uint64_t *out)
{
	if (n->kind != YNODE_SCALAR)
		return fail(x, n, "%s must be a number", what);
	const num_range_t r = { (double)min, (double)max, NUM_WHOLE, units, scale };
	double v;
	if (num_parse(n->value, &r, &v, NULL))
		return fail(x, n, "%s must be %s, not '%s'", what, range, n->value);
	*out = (uint64_t)v;
	return 0;
}

/* database: path, map-size (bytes, K/M/G), audit-keep (seconds, m/h/d). */
static int parse_database(ctx_t *x, conf_t *c, const ynode_t *s)
{
	static const char *const keys[] = { "path", "map-size", "audit-keep", NULL };
	if (get_map(x, s, "database") || check_keys(x, s, "database", keys))
		return -1;
	const ynode_t *v;
	if ((v = ynode_get(s, "path"))) {
		char *p = NULL;
		if (get_str(x, v, "database.path", &p))
			return -1;
		free(c->db_path);
		c->db_path = conf_path(c, p);
		free(p);
	}
	static const char *const bytes_units[] = { "K", "M", "G", NULL };
	static const double bytes[] = { 1024, 1024 * 1024, 1024 * 1024 * 1024 };
	if ((v = ynode_get(s, "map-size")) &&
	    get_scaled(x, v, "database.map-size", bytes_units, bytes, 1 << 20,
	               (uint64_t)1 << 40, "bytes from 1M to 1024G (suffix K, M or G)",
	               &c->db_map_size))
		return -1;
	static const char *const secs_units[] = { "m", "h", "d", NULL };
	static const double secs[] = { 60, 3600, 86400 };
	uint64_t keep = c->db_audit_keep;
	if ((v = ynode_get(s, "audit-keep")) &&
	    get_scaled(x, v, "database.audit-keep", secs_units, secs, 0,
	               (uint64_t)3650 * 86400,
	               "seconds from 0 (keep all) to 3650d (suffix m, h or d)", &keep))
		return -1;
	c->db_audit_keep = (uint32_t)keep;
	return 0;
}

/* Appends one "FILE:LINE: reason" line to @err. */
__attribute__((format(printf, 5, 6)))
static void add_problem(const conf_t *c, int line, char *err, size_t errlen,
                        const char *fmt, ...)
{
	char msg[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	size_t used = strlen(err);
	if (used + 1 < errlen)
		snprintf(err + used, errlen - used, "%s%s:%d: %s", used ? "\n" : "",
		         c->path, line ? line : 1, msg);
}

int conf_check_host(const conf_t *c, char *err, size_t errlen)
{
	err[0] = 0;
	if (c->user && *c->user && !getpwnam(c->user))
		add_problem(c, c->user_line, err, errlen,
		            "server.user: there is no user '%s' on this host", c->user);
	for (size_t i = 0; i < c->nlisten; i++) {
		const conf_listen_t *l = &c->listen[i];
		/* Binding the address with port 0 (any free port) tells whether
		 * it is one of this host's, without touching the real port. */
		struct sockaddr_storage a = l->addr;
		if (a.ss_family == AF_INET)
			((struct sockaddr_in *)&a)->sin_port = 0;
		else
			((struct sockaddr_in6 *)&a)->sin6_port = 0;
		int fd = socket(a.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		if (bind(fd, (struct sockaddr *)&a, l->addrlen) < 0 &&
		    errno == EADDRNOTAVAIL)
			add_problem(c, l->line, err, errlen,
			            "listen %s: not an address of this host", l->text);
		close(fd);
	}
	return err[0] ? -1 : 0;
}

char *conf_path(const conf_t *c, const char *path)
{
	if (path[0] == '/' || !c->dir)
		return xstrdup(path);
	size_t n = strlen(c->dir) + strlen(path) + 2;
	char *p = xmalloc(n);
	snprintf(p, n, "%s/%s", c->dir, path);
	return p;
}

static int parse_server(ctx_t *x, conf_t *c, const ynode_t *s)
{
	static const char *const keys[] = {
		"listen", "workers", "identity", "version", "user",
		"udp-max-payload", "tcp-idle-timeout", "tcp-max-clients",
		"tcp-max-per-source", "tcp-source-prefix-v4", "tcp-source-prefix-v6",
		"max-cname-chain", "log-level", NULL
	};
	/* The keys that take a whole number: range and field. */
	const struct { const char *k; unsigned lo, hi, *to; } num[] = {
		{ "udp-max-payload", 512, 4096, &c->udp_max_payload },
		{ "tcp-idle-timeout", 1, 3600, &c->tcp_idle_timeout },
		{ "tcp-max-clients", 1, 1000000, &c->tcp_max_clients },
		{ "tcp-max-per-source", 0, 1000000, &c->tcp_max_per_source },
		{ "tcp-source-prefix-v4", 1, 32, &c->tcp_source_prefix_v4 },
		{ "tcp-source-prefix-v6", 1, 128, &c->tcp_source_prefix_v6 },
		{ "max-cname-chain", 0, 16, &c->max_cname_chain },
	};
	if (get_map(x, s, "server") || check_keys(x, s, "server", keys))
		return -1;
	for (size_t i = 0; i < s->n; i++) {
		const char *k = s->keys[i]->value;
		const ynode_t *v = s->items[i];
		size_t m = 0;
		while (m < sizeof(num) / sizeof(num[0]) && strcmp(k, num[m].k))
			m++;
		if (m < sizeof(num) / sizeof(num[0])) {
			if (get_uint(x, v, k, num[m].lo, num[m].hi, num[m].to))
				return -1;
		} else if (strcmp(k, "listen") == 0) {
			const ynode_t *const *items = (const ynode_t *const *)&v;
			size_t n = 1;
			if (v->kind == YNODE_SEQ) {
				items = (const ynode_t *const *)v->items;
				n = v->n;
			}
			if (n == 0)
				return fail(x, v, "listen needs at least one address");
			c->listen = xcalloc(n, sizeof(*c->listen));
			c->nlisten = n;
			for (size_t j = 0; j < n; j++) {
				if (items[j]->kind != YNODE_SCALAR ||
				    conf_parse_listen(items[j]->value, &c->listen[j]))
					return fail(x, items[j],
					            "listen address must be ADDR@PORT, e.g. 127.0.0.1@5300 or ::1@5300");
				if (conf__is_wildcard(&c->listen[j]))
					return fail(x, items[j], "listen " CONF__WILDCARD_MSG, c->listen[j].text);
				c->listen[j].line = items[j]->line;
			}
		} else if (strcmp(k, "workers") == 0) {
			if (v->kind == YNODE_SCALAR && strcmp(v->value, "auto") == 0)
				c->workers = 0;
			else if (get_uint(x, v, "workers ('auto' or a number)", 1, 256,
			                  &c->workers))
				return -1;
		} else if (strcmp(k, "identity") == 0) {
			if (get_str(x, v, k, &c->identity))
				return -1;
			if (strlen(c->identity) > 255)
				return fail(x, v, "identity is longer than 255 bytes");
		} else if (strcmp(k, "version") == 0) {
			if (get_str(x, v, k, &c->version))
				return -1;
			if (strlen(c->version) > 255)
				return fail(x, v, "version is longer than 255 bytes");
		} else if (strcmp(k, "user") == 0) {
			if (get_str(x, v, k, &c->user))
				return -1;
			c->user_line = v->line;
		} else if (strcmp(k, "log-level") == 0) {
			if (v->kind != YNODE_SCALAR)
				return fail(x, v, "log-level must be a single word");
			c->log_level = log_level_parse(v->value);
			if (c->log_level < 0)
				return fail(x, v, "log-level must be error, warning, notice, info or debug");
		}
	}
	return 0;
}

/* log: a list of { target, level, time }, or one such map. */
static int parse_log(ctx_t *x, conf_t *c, const ynode_t *l)
{
	static const char *const keys[] = { "target", "level", "time", NULL };
	static const char *const kinds[] = { "stderr", "syslog", "journal" };
	const ynode_t *const *items = (const ynode_t *const *)&l;
	size_t n = 1;
	if (l->kind == YNODE_SEQ) {
		items = (const ynode_t *const *)l->items;
		n = l->n;
	}
	if (n == 0 || n > LOG_MAX_TARGETS)
		return fail(x, l, "log needs 1 to 4 targets");
	c->nlog = 0;
	for (size_t i = 0; i < n; i++) {
		const ynode_t *e = items[i], *v;
		log_target_t *t = &c->log[c->nlog++];
		if (get_map(x, e, "a log target") || check_keys(x, e, "log", keys))
			return -1;
		if (!(v = ynode_get(e, "target")) || v->kind != YNODE_SCALAR)
			return fail(x, e, "a log target needs 'target: stderr', 'syslog' or 'journal'");
		t->kind = (log_target_kind_t)-1;
		for (int k = 0; k < 3; k++)
			if (strcmp(v->value, kinds[k]) == 0)
				t->kind = (log_target_kind_t)k;
		if ((int)t->kind < 0)
			return fail(x, v, "log target must be stderr, syslog or journal");
		for (size_t j = 0; j + 1 < c->nlog; j++)
			if (c->log[j].kind == t->kind)
				return fail(x, v, "log target is listed twice");
		t->level = c->log_level;
		if ((v = ynode_get(e, "level"))) {
			t->level = v->kind == YNODE_SCALAR ? log_level_parse(v->value) : -1;
			if (t->level < 0)
				return fail(x, v, "log level must be error, warning, notice, info or debug");
		}
		if ((v = ynode_get(e, "time"))) {
			if (t->kind != LOG_TARGET_STDERR)
				return fail(x, v, "log time applies to the stderr target only");
			if (v->kind != YNODE_SCALAR ||
			    (strcmp(v->value, "utc") && strcmp(v->value, "local")))
				return fail(x, v, "log time must be utc or local");
			t->local_time = strcmp(v->value, "local") == 0;
		}
	}
	return 0;
}

static int parse_zones(ctx_t *x, conf_t *c, const ynode_t *z)
{
	static const char *const keys[] = { "name", "file", NULL };
	if (z->kind != YNODE_SEQ)
		return fail(x, z, "zones must be a list of { name, file }");
	c->zones = xcalloc(z->n, sizeof(*c->zones));
	for (size_t i = 0; i < z->n; i++) {
		const ynode_t *e = z->items[i];
		conf_zone_t *cz = &c->zones[c->nzones++];
		cz->line = e->line;
		if (get_map(x, e, "a zone entry") || check_keys(x, e, "zone", keys))
			return -1;
		const ynode_t *name = ynode_get(e, "name");
		const ynode_t *file = ynode_get(e, "file");
		if (!name)
			return fail(x, e, "zone entry without 'name'");
		if (!file)
			return fail(x, e, "zone '%s' without 'file'",
			            name->kind == YNODE_SCALAR ? name->value : "?");
		if (get_str(x, name, "zone name", &cz->name))
			return -1;
		uint8_t wire[256];
		if (!dname_from_str(cz->name, wire))
			return fail(x, name, "'%s' is not a valid domain name", cz->name);
		dname_copy_lower(cz->dname, wire);
		char buf[1024];
		dname_to_str(cz->dname, buf, sizeof(buf));
		size_t bl = strlen(buf);
		if (bl > 1)
			buf[bl - 1] = 0; /* no final dot */
		free(cz->name);
		cz->name = xstrdup(buf);
		for (size_t j = 0; j + 1 < c->nzones; j++)
			if (dname_equal(c->zones[j].dname, cz->dname))
				return fail(x, name, "zone '%s' is listed twice", cz->name);
		char *f = NULL;
		if (get_str(x, file, "zone file", &f))
			return -1;
		cz->file = conf_path(c, f);
		free(f);
	}
	return 0;
}

static int parse_simple_path(ctx_t *x, conf_t *c, const ynode_t *s,
                             const char *section, const char *key,
                             const char *const *keys, char **out)
{
	if (get_map(x, s, section) || check_keys(x, s, section, keys))
		return -1;
	const ynode_t *v = ynode_get(s, key);
	if (!v)
		return 0;
	char *p = NULL;
	if (get_str(x, v, key, &p))
		return -1;
	free(*out);
	*out = conf_path(c, p);
	free(p);
	return 0;
}

conf_t *conf_load(const char *path, char *err, size_t errlen)
{
	conf_t *c = xcalloc(1, sizeof(*c));
	c->path = xstrdup(path);
	const char *slash = strrchr(path, '/');
	c->dir = slash ? xmemdup(path, (size_t)(slash - path) + 1)
	               : xstrdup(".");
	if (slash)
		c->dir[slash - path] = 0;
	c->identity = xstrdup("");
	c->version = xstrdup("");
	c->udp_max_payload = 1232;
	c->tcp_idle_timeout = 10;
	c->tcp_max_clients = 1000;
	c->tcp_max_per_source = 100;         /* S1-12 */
	c->tcp_source_prefix_v4 = 32;
	c->tcp_source_prefix_v6 = 64;
	c->max_cname_chain = 8;
	c->log_level = GSLB_LOG_INFO;
	c->db_path = xstrdup("/var/lib/gslbd");
	c->db_map_size = (uint64_t)16 << 30;
	c->db_audit_keep = 90 * 86400;       /* S3-7: 90 days */

	ctx_t x = { c, err, errlen };
	c->root = yaml_load_file(path, err, errlen);
	if (!c->root)
		goto fail;
	/* health, cutover, steer, rrl, dnstap, cluster, dnssec and cookies
	 * are validated by their own modules. */
	static const char *const top[] = { "server", "zones", "database", "geoip",
	                                   "health", "cutover", "log", "stats",
	                                   "rrl", "dnstap", "cluster", "steer",
	                                   "dnssec", "cookies", "api", NULL };
	if (get_map(&x, c->root, "the configuration") ||
	    check_keys(&x, c->root, "the configuration", top))
		goto fail;
	const ynode_t *n;
	if ((n = ynode_get(c->root, "server")) && parse_server(&x, c, n))
		goto fail;
	/* After server: a target without a level takes server.log-level. */
	c->log[0] = (log_target_t){ LOG_TARGET_STDERR, c->log_level, 0 };
	c->nlog = 1;
	if ((n = ynode_get(c->root, "log")) && parse_log(&x, c, n))
		goto fail;
	if (!(n = ynode_get(c->root, "zones"))) {
		fail(&x, c->root, "no 'zones' section: at least one zone is needed");
		goto fail;
	}
	if (parse_zones(&x, c, n))
		goto fail;
	if ((n = ynode_get(c->root, "database")) && parse_database(&x, c, n))
		goto fail;
	/* The geoip section is validated in full by geo.c; only the
	 * database path is needed here. */
	static const char *const geokeys[] = { "database", "region", "isp",
		"region-map", "isp-map", "nets", "edns-client-subnet", "compile", NULL };
	if ((n = ynode_get(c->root, "geoip")) &&
	    parse_simple_path(&x, c, n, "geoip", "database", geokeys,
	                      &c->geoip_path))
		goto fail;
	if (!c->nlisten) {
		c->listen = xcalloc(1, sizeof(*c->listen));
		c->nlisten = 1;
		conf_parse_listen("127.0.0.1@53", &c->listen[0]);
	}
	return c;
fail:
	conf_free(c);
	return NULL;
}

void conf_free(conf_t *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->nzones; i++) {
		free(c->zones[i].name);
		free(c->zones[i].file);
	}
	free(c->zones);
	free(c->listen);
	free(c->identity);
	free(c->version);
	free(c->user);
	free(c->db_path);
	free(c->geoip_path);
	free(c->path);
	free(c->dir);
	ynode_free(c->root);
	free(c);
}

/* Section helpers ------------------------------------------------------ */

int conf_sfail(const conf_t *c, const ynode_t *n, char *err, size_t errlen,
               const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(err, errlen, "%s:%d: %s", c->path, n ? n->line : 1, msg);
	return -1;
}

int conf_skeys(const conf_t *c, const ynode_t *map, const char *section,
               const char *const *allowed, char *err, size_t errlen)
{
	ctx_t x = { c, err, errlen };
	if (get_map(&x, map, section))
		return -1;
	return check_keys(&x, map, section, allowed);
}

int conf_snumber(const conf_t *c, const ynode_t *n, const char *what,
                 double min, double max, double *out, char *err, size_t errlen)
{
	if (n->kind != YNODE_SCALAR)
		return conf_sfail(c, n, err, errlen, "%s must be a number", what);
	const num_range_t r = { min, max, 0, NULL, NULL };
	double v;
	if (num_parse(n->value, &r, &v, NULL))
		return conf_sfail(c, n, err, errlen, "%s must be a number from %g to %g, not '%s'",
		                  what, min, max, n->value);
	*out = v;
	return 0;
}

int conf_snum_key(const conf_t *c, const char *k, const ynode_t *v,
                  const conf_num_t *keys, size_t n, char *err, size_t errlen)
{
	for (size_t i = 0; i < n; i++) {
		if (strcmp(k, keys[i].name) != 0)
			continue;
		double d;
		if (conf_snumber(c, v, k, keys[i].min, keys[i].max, &d, err, errlen))
			return -1;
		if (keys[i].is_unsigned)
			*(unsigned *)keys[i].dst = (unsigned)d;
		else
			*(double *)keys[i].dst = d;
		return 1;
	}
	return 0;
}

int conf_sbool(const conf_t *c, const ynode_t *n, const char *what, int *out,
               char *err, size_t errlen)
{
	static const char *const yes[] = { "on", "yes", "true" };
	static const char *const no[] = { "off", "no", "false" };
	if (n->kind == YNODE_SCALAR)
		for (int i = 0; i < 3; i++) {
			if (strcmp(n->value, yes[i]) == 0)
				return *out = 1, 0;
			if (strcmp(n->value, no[i]) == 0)
				return *out = 0, 0;
		}
	return conf_sfail(c, n, err, errlen, "%s must be on or off", what);
}

/* Whether two YAML subtrees say the same. */
static int ynode_same(const ynode_t *a, const ynode_t *b)
{
	if (!a || !b)
		return a == b;
	if (a->kind != b->kind || a->n != b->n)
		return 0;
	if (a->kind == YNODE_SCALAR)
		return strcmp(a->value ? a->value : "", b->value ? b->value : "") == 0;
	for (size_t i = 0; i < a->n; i++)
		if ((a->kind == YNODE_MAP && !ynode_same(a->keys[i], b->keys[i])) ||
		    !ynode_same(a->items[i], b->items[i]))
			return 0;
	return 1;
}

static const char *ynode_text(const ynode_t *n)
{
	if (!n)
		return NULL;
	return n->kind == YNODE_SCALAR ? (n->value ? n->value : "") : "...";
}

/* The differing keys of one section, @name, in @a and @b (either may be
 * NULL, as an absent section).  Maps compare key by key, anything else
 * as a whole. */
static size_t diff_section(const char *name, const ynode_t *a, const ynode_t *b,
                           conf_diff_fn fn, void *arg)
{
	char path[256];
	if ((a && a->kind != YNODE_MAP) || (b && b->kind != YNODE_MAP)) {
		if (ynode_same(a, b))
			return 0;
		fn(name, ynode_text(a), ynode_text(b), arg);
		return 1;
	}
	size_t n = 0;
	for (size_t i = 0; b && i < b->n; i++) {
		const char *k = b->keys[i]->value;
		const ynode_t *old = a ? ynode_get(a, k) : NULL;
		if (ynode_same(old, b->items[i]))
			continue;
		snprintf(path, sizeof(path), "%s.%s", name, k);
		fn(path, ynode_text(old), ynode_text(b->items[i]), arg);
		n++;
	}
	for (size_t i = 0; a && i < a->n; i++) {
		const char *k = a->keys[i]->value;
		if (b && ynode_get(b, k))
			continue;
		snprintf(path, sizeof(path), "%s.%s", name, k);
		fn(path, ynode_text(a->items[i]), NULL, arg);
		n++;
	}
	return n;
}

size_t conf_diff(const conf_t *a, const conf_t *b, conf_diff_fn fn, void *arg)
{
	const ynode_t *ra = a->root, *rb = b->root;
	size_t n = 0;
	for (size_t i = 0; rb && rb->kind == YNODE_MAP && i < rb->n; i++) {
		const char *k = rb->keys[i]->value;
		n += diff_section(k, ra ? ynode_get(ra, k) : NULL, rb->items[i], fn, arg);
	}
	for (size_t i = 0; ra && ra->kind == YNODE_MAP && i < ra->n; i++) {
		const char *k = ra->keys[i]->value;
		if (!rb || !ynode_get(rb, k))
			n += diff_section(k, ra->items[i], NULL, fn, arg);
	}
	return n;
}

void conf_keep_restart(conf_t *dst, const conf_t *src)
{
	free(dst->listen);
	dst->listen = xmemdup(src->listen, src->nlisten * sizeof(*src->listen));
	dst->nlisten = src->nlisten;
	dst->workers = src->workers;
	free(dst->user);
	dst->user = src->user ? xstrdup(src->user) : NULL;
	dst->user_line = src->user_line;
	dst->tcp_idle_timeout = src->tcp_idle_timeout;
	dst->tcp_max_clients = src->tcp_max_clients;
	dst->tcp_max_per_source = src->tcp_max_per_source;
	dst->tcp_source_prefix_v4 = src->tcp_source_prefix_v4;
	dst->tcp_source_prefix_v6 = src->tcp_source_prefix_v6;
	free(dst->db_path);
	dst->db_path = xstrdup(src->db_path);
	dst->db_map_size = src->db_map_size;
}
