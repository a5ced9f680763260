/* SPDX-License-Identifier: MIT */
/* Reads the cluster section of gslbd.conf into a cluster_conf_t.  No
 * state: safe on any thread. */
#include "cluster/cluster_conf.h"
#include "common/util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A name of this instance, a region or an ISP: a short word. */
static int valid_word(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n >= CLUSTER_NAME_MAX)
		return 0;
	for (; *s; s++)
		if (!(isalnum((unsigned char)*s) || *s == '-' || *s == '_' || *s == '.'))
			return 0;
	return 1;
}

static int scalar(const conf_t *c, const ynode_t *v, const char *what,
                  char *err, size_t errlen)
{
	if (v->kind != YNODE_SCALAR || !v->value[0])
		return conf_sfail(c, v, err, errlen, "cluster: %s must be a string", what);
	return 0;
}

static int word(const conf_t *c, const ynode_t *v, const char *what, char *out,
                char *err, size_t errlen)
{
	if (scalar(c, v, what, err, errlen))
		return -1;
	if (!valid_word(v->value))
		return conf_sfail(c, v, err, errlen,
		                  "cluster: %s '%s': use letters, digits, '-', '_' "
		                  "and '.' (at most %d)", what, v->value,
		                  CLUSTER_NAME_MAX - 1);
	snprintf(out, CLUSTER_NAME_MAX, "%s", v->value);
	return 0;
}

/* etcd: one URL or a list of them. */
static int read_endpoints(const conf_t *c, const ynode_t *v, cluster_conf_t *o,
                          char *err, size_t errlen)
{
	const ynode_t *one[1] = { v };
	const ynode_t *const *items = one;
	size_t n = 1;
	if (v->kind == YNODE_SEQ) {
		items = (const ynode_t *const *)v->items;
		n = v->n;
	}
	if (n == 0 || n > CLUSTER_MAX_ENDPOINTS)
		return conf_sfail(c, v, err, errlen,
		                  "cluster: etcd must list 1 to %d endpoints",
		                  CLUSTER_MAX_ENDPOINTS);
	for (size_t i = 0; i < n; i++) {
		const ynode_t *e = items[i];
		if (scalar(c, e, "etcd endpoint", err, errlen))
			return -1;
		const char *u = e->value;
		if ((strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0) ||
		    !strchr(u, ':') || strlen(u) > 200 || strchr(u, ' '))
			return conf_sfail(c, e, err, errlen,
			                  "cluster: etcd endpoint '%s' must be "
			                  "http://HOST:PORT or https://HOST:PORT", u);
		char *s = xstrdup(u);
		size_t l = strlen(s);
		while (l && s[l - 1] == '/')
			s[--l] = 0;
		o->endpoints[o->nendpoints++] = s;
	}
	return 0;
}

static int read_prefix(const conf_t *c, const ynode_t *v, cluster_conf_t *o,
                       char *err, size_t errlen)
{
	if (scalar(c, v, "prefix", err, errlen))
		return -1;
	size_t l = strlen(v->value);
	if (v->value[0] != '/' || v->value[l - 1] != '/' || l >= sizeof(o->prefix) ||
	    strchr(v->value, ' '))
		return conf_sfail(c, v, err, errlen,
		                  "cluster: prefix '%s' must start and end with '/'",
		                  v->value);
	snprintf(o->prefix, sizeof(o->prefix), "%s", v->value);
	return 0;
}

static int read_vantage(const conf_t *c, const ynode_t *v, cluster_conf_t *o,
                        char *err, size_t errlen)
{
	static const char *const keys[] = { "region", "isp", NULL };
	if (conf_skeys(c, v, "cluster.vantage", keys, err, errlen))
		return -1;
	const ynode_t *r = ynode_get(v, "region"), *i = ynode_get(v, "isp");
	if (r && word(c, r, "vantage.region", o->region, err, errlen))
		return -1;
	if (i && word(c, i, "vantage.isp", o->isp, err, errlen))
		return -1;
	return 0;
}

static int read_tls(const conf_t *c, const ynode_t *v, cluster_conf_t *o,
                    char *err, size_t errlen)
{
	static const char *const keys[] = { "ca", "cert", "key", NULL };
	if (conf_skeys(c, v, "cluster.tls", keys, err, errlen))
		return -1;
	char **dst[] = { &o->ca, &o->cert, &o->key };
	for (int i = 0; keys[i]; i++) {
		const ynode_t *f = ynode_get(v, keys[i]);
		if (!f)
			continue;
		if (scalar(c, f, keys[i], err, errlen))
			return -1;
		*dst[i] = conf_path(c, f->value);
	}
	if (!o->cert != !o->key)
		return conf_sfail(c, v, err, errlen,
		                  "cluster: tls.cert and tls.key go together");
	return 0;
}

static int read_key(const conf_t *c, const char *k, const ynode_t *v,
                    cluster_conf_t *o, char *err, size_t errlen)
{
	double d;
	if (strcmp(k, "etcd") == 0)
		return read_endpoints(c, v, o, err, errlen);
	if (strcmp(k, "prefix") == 0)
		return read_prefix(c, v, o, err, errlen);
	if (strcmp(k, "name") == 0)
		return word(c, v, "name", o->name, err, errlen);
	if (strcmp(k, "vantage") == 0)
		return read_vantage(c, v, o, err, errlen);
	if (strcmp(k, "tls") == 0)
		return read_tls(c, v, o, err, errlen);
	if (strcmp(k, "user") == 0 || strcmp(k, "password") == 0) {
		if (scalar(c, v, k, err, errlen))
			return -1;
		*(k[0] == 'u' ? &o->user : &o->password) = xstrdup(v->value);
		return 0;
	}
	if (strcmp(k, "quorum") == 0) {
		if (v->kind == YNODE_SCALAR && strcmp(v->value, "majority") == 0) {
			o->quorum = 0;
			return 0;
		}
		if (conf_snumber(c, v, "cluster.quorum ('majority' or a number)", 1,
		                 CLUSTER_MAX_ENDPOINTS * 8, &d, err, errlen))
			return -1;
		o->quorum = (unsigned)d;
		return 0;
	}
	if (strcmp(k, "lease-ttl") == 0) {
		if (conf_snumber(c, v, "cluster.lease-ttl", 2, 600, &d, err, errlen))
			return -1;
		o->lease_ttl = (unsigned)d;
		return 0;
	}
	if (strcmp(k, "log-keep") == 0) {
		if (conf_snumber(c, v, "cluster.log-keep (records)", 10, 100000, &d, err,
		                 errlen))
			return -1;
		o->log_keep = (unsigned)d;
		return 0;
	}
	if (strcmp(k, "verify-interval") == 0)
		return conf_snumber(c, v, "cluster.verify-interval (seconds, 0: never)", 0,
		                    86400, &o->verify_interval, err, errlen);
	/* timeout */
	if (conf_snumber(c, v, "cluster.timeout", 0.1, 60, &d, err, errlen))
		return -1;
	o->timeout = d;
	return 0;
}

int cluster_conf_load(const conf_t *c, cluster_conf_t *o, char *err,
                      size_t errlen)
{
	static const char *const keys[] = { "etcd", "prefix", "name", "vantage",
	                                     "quorum", "lease-ttl", "timeout",
	                                     "verify-interval", "log-keep", "tls", "user", "password", NULL };
	memset(o, 0, sizeof(*o));
	snprintf(o->prefix, sizeof(o->prefix), "/gslbd/");
	o->lease_ttl = 5;
	o->timeout = 2;
	o->verify_interval = 60;
	o->log_keep = 10000;
	const ynode_t *s = c->root ? ynode_get(c->root, "cluster") : NULL;
	if (!s)
		return 0;
	if (s->kind != YNODE_MAP)
		return conf_sfail(c, s, err, errlen, "cluster must be a map");
	if (conf_skeys(c, s, "cluster", keys, err, errlen))
		return -1;
	for (size_t i = 0; i < s->n; i++)
		if (read_key(c, s->keys[i]->value, s->items[i], o, err, errlen)) {
			cluster_conf_free(o);
			return -1;
		}
	if (!o->nendpoints || !o->name[0]) {
		const char *what = !o->nendpoints ? "etcd" : "name";
		cluster_conf_free(o);
		return conf_sfail(c, s, err, errlen, "cluster: %s is required", what);
	}
	if (!o->user != !o->password) {
		cluster_conf_free(o);
		return conf_sfail(c, s, err, errlen,
		                  "cluster: user and password go together");
	}
	o->enabled = 1;
	return 0;
}

void cluster_conf_free(cluster_conf_t *o)
{
	for (size_t i = 0; i < o->nendpoints; i++)
		free(o->endpoints[i]);
	o->nendpoints = 0;
	free(o->ca);
	free(o->cert);
	free(o->key);
	free(o->user);
	free(o->password);
	o->ca = o->cert = o->key = o->user = o->password = NULL;
	o->enabled = 0;
}
