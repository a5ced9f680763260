/* SPDX-License-Identifier: MIT */
/* Zone loading with ldns and the immutable lookup structure. */
#include "dns/zone.h"
#include "common/log.h"
#include "common/util.h"

#include <ldns/ldns.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* One parsed RR and where it came from, for error messages. */
typedef struct {
	ldns_rr *rr;
	const char *file;
	int line;
} lrr_t;

typedef struct {
	lrr_t *v;
	size_t n, cap;
	char **files;           /* names of every file read (owned) */
	size_t nfiles;
	char *err;
	size_t errlen;
	unsigned nerr;          /* errors found so far */
} reader_t;

/* Errors listed in full before the rest are only counted: enough to fix a
 * file in one go, few enough to fit the callers' buffers. */
#define ZONE_MAX_ERRORS 10

/* Records an error as "FILE:LINE: reason", one line each, so that an
 * operator sees every error of a zone at once, not one per try. */
__attribute__((format(printf, 4, 5)))
static int zfail(reader_t *r, const char *file, int line, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->nerr++;
	if (r->nerr > ZONE_MAX_ERRORS)
		return -1;
	size_t used = r->nerr > 1 ? strlen(r->err) : 0;
	if (used + 1 < r->errlen)
		snprintf(r->err + used, r->errlen - used, "%s%s:%d: %s",
		         used ? "\n" : "", file, line, msg);
	return -1;
}

/* ldns reports "$INCLUDE" but not its argument: re-read the bytes it
 * consumed to find the file name and optional origin. */
static int include_args(FILE *fp, long from, long to, char *file,
                        size_t filelen, char *origin, size_t originlen)
{
	if (to <= from || to - from > 4096)
		return -1;
	char buf[4097];
	long save = ftell(fp);
	if (fseek(fp, from, SEEK_SET) != 0)
		return -1;
	size_t n = fread(buf, 1, (size_t)(to - from), fp);
	fseek(fp, save, SEEK_SET);
	buf[n] = 0;
	char *p = strstr(buf, "$INCLUDE");
	if (!p)
		return -1;
	p += 8;
	origin[0] = 0;
	char f[1024], o[1024];
	int k = sscanf(p, " %1023s %1023s", f, o);
	if (k < 1 || f[0] == ';')
		return -1;
	snprintf(file, filelen, "%s", f);
	if (k == 2 && o[0] != ';')
		snprintf(origin, originlen, "%s", o);
	return 0;
}

/* Skips blank and comment-only lines, counting them.  ldns would skip
 * them too but count them into the entry that follows, whose line would
 * then be unknown. */
static void skip_blank(FILE *fp, int *line)
{
	for (;;) {
		long start = ftell(fp);
		int c;
		do
			c = fgetc(fp);
		while (c == ' ' || c == '\t' || c == '\r');
		if (c == ';')
			while ((c = fgetc(fp)) != EOF && c != '\n')
				;
		if (c != '\n') {
			/* Leading blanks of an entry are significant: keep them. */
			if (c != EOF)
				fseek(fp, start, SEEK_SET);
			return;
		}
		(*line)++;
	}
}

static int read_file(reader_t *r, const char *file, ldns_rdf *origin_in,
                     int depth, const char *from_file, int from_line)
{
	if (depth > 8)
		return zfail(r, from_file, from_line, "$INCLUDE nested too deeply");
	FILE *fp = fopen(file, "r");
	struct stat st;
	/* A directory opens, but every read fails without reaching EOF: the
	 * loop below would never end ("$INCLUDE ." hung the loader). */
	if (fp && fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(fp);
		fp = NULL;
		errno = EISDIR;
	}
	if (!fp) {
		if (from_file)
			return zfail(r, from_file, from_line, "cannot open %s: %s",
			             file, strerror(errno));
		return zfail(r, file, 0, "cannot open: %s", strerror(errno));
	}
	r->files = xrealloc(r->files, (r->nfiles + 1) * sizeof(*r->files));
	const char *fname = r->files[r->nfiles++] = xstrdup(file);

	ldns_rdf *origin = ldns_rdf_clone(origin_in);
	ldns_rdf *prev = NULL;
	uint32_t ttl = LDNS_DEFAULT_TTL;
	int line = 1, rc = 0;
	while (skip_blank(fp, &line), !feof(fp) && !ferror(fp)) {
		ldns_rr *rr = NULL;
		long before = ftell(fp);
		/* ldns advances @line past the entry it read, so the entry (or
		 * the first line of a parenthesised one) is on line_before. */
		int line_before = line;
		ldns_status s = ldns_rr_new_frm_fp_l(&rr, fp, &ttl, &origin, &prev,
		                                     &line);
		if (s == LDNS_STATUS_OK) {
			if (r->n == r->cap) {
				r->cap = r->cap ? r->cap * 2 : 256;
				r->v = xrealloc(r->v, r->cap * sizeof(*r->v));
			}
			r->v[r->n++] = (lrr_t){ rr, fname, line_before };
			continue;
		}
		if (s == LDNS_STATUS_SYNTAX_EMPTY || s == LDNS_STATUS_SYNTAX_TTL ||
		    s == LDNS_STATUS_SYNTAX_ORIGIN)
			continue;
		if (s == LDNS_STATUS_SYNTAX_INCLUDE) {
			char inc[1024], org[1024], path[2048];
			if (include_args(fp, before, ftell(fp), inc, sizeof(inc), org,
			                 sizeof(org))) {
				rc = zfail(r, fname, line_before,
				           "$INCLUDE needs a file name");
				break;
			}
			const char *slash = strrchr(fname, '/');
			if (inc[0] != '/' && slash)
				snprintf(path, sizeof(path), "%.*s/%s",
				         (int)(slash - fname), fname, inc);
			else
				snprintf(path, sizeof(path), "%s", inc);
			ldns_rdf *o = origin;
			ldns_rdf *tmp = NULL;
			if (org[0]) {
				if (ldns_str2rdf_dname(&tmp, org) != LDNS_STATUS_OK) {
					rc = zfail(r, fname, line_before,
					           "bad $INCLUDE origin '%s'", org);
					break;
				}
				if (!ldns_dname_str_absolute(org)) {
					/* A relative origin needs one to append:
					 * an empty "$ORIGIN" leaves none. */
					ldns_status cs = origin ? ldns_dname_cat(tmp, origin)
					                        : LDNS_STATUS_NULL;
					if (cs != LDNS_STATUS_OK) {
						ldns_rdf_deep_free(tmp);
						rc = zfail(r, fname, line_before,
						           "bad $INCLUDE origin '%s'", org);
						break;
					}
				}
				o = tmp;
			}
			if (!o) {
				/* A bad "$ORIGIN" left none to hand down. */
				rc = zfail(r, fname, line_before,
				           "$INCLUDE without a valid $ORIGIN before it");
				break;
			}
			rc = read_file(r, path, o, depth + 1, fname, line_before);
			ldns_rdf_deep_free(tmp);
			if (rc)
				break;
			continue;
		}
		/* A bad entry: note it and read on, to report every one. */
		rc = zfail(r, fname, line_before, "%s", ldns_get_errorstr_by_id(s));
	}
	if (!rc && ferror(fp))
		rc = zfail(r, fname, line, "read error");
	ldns_rdf_deep_free(origin);
	ldns_rdf_deep_free(prev);
	fclose(fp);
	return rc;
}

/* Node table ------------------------------------------------------ */

static void table_grow(zone_t *z)
{
	uint32_t nmask = z->mask ? z->mask * 2 + 1 : 255;
	znode_t **nt = xcalloc((size_t)nmask + 1, sizeof(*nt));
	for (uint32_t i = 0; z->mask && i <= z->mask; i++) {
		znode_t *n = z->table[i];
		while (n) {
			znode_t *next = n->next;
			n->next = nt[n->hash & nmask];
			nt[n->hash & nmask] = n;
			n = next;
		}
	}
	free(z->table);
	z->table = nt;
	z->mask = nmask;
}

const znode_t *zone_find(const zone_t *z, const uint8_t *name, size_t len,
                         uint32_t h)
{
	for (const znode_t *n = z->table[h & z->mask]; n; n = n->next)
		if (n->hash == h && n->namelen == len &&
		    memcmp(n->name, name, len) == 0)
			return n;
	return NULL;
}

/* Finds or creates the node of lowercase @name and its ancestors up to
 * the apex (empty non-terminals). */
static znode_t *node_get(zone_t *z, const uint8_t *name)
{
	size_t len = dname_len(name, DNAME_MAXLEN);
	uint32_t h = dname_hash(name);
	znode_t *n = (znode_t *)zone_find(z, name, len, h);
	if (n)
		return n;
	if (z->nnodes * 2 >= z->mask)
		table_grow(z);
	n = xcalloc(1, sizeof(*n));
	n->name = xmemdup(name, len);
	n->namelen = (uint8_t)len;
	n->hash = h;
	n->next = z->table[h & z->mask];
	z->table[h & z->mask] = n;
	z->nnodes++;
	if (dname_labels(name) > z->apex_labels) {
		const uint8_t *parent = name + name[0] + 1;
		znode_t *p = node_get(z, parent);
		if (name[0] == 1 && name[1] == '*')
			p->flags |= ZNODE_WILDCARD;
	}
	return n;
}

static const uint8_t *rdata_target(uint16_t type, const uint8_t *rd,
                                   uint16_t len)
{
	size_t off;
	switch (type) {
	case RR_NS: off = 0; break;
	case RR_MX: off = 2; break;
	case RR_SRV: off = 6; break;
	default: return NULL;
	}
	if (len <= off || !dname_len(rd + off, (size_t)len - off))
		return NULL;
	return rd + off;
}

static int add_rr(reader_t *r, zone_t *z, const lrr_t *l, ldns_buffer *buf)
{
	ldns_rr *rr = l->rr;
	char owner[1100];
	uint8_t lname[256];
	const ldns_rdf *o = ldns_rr_owner(rr);
	const uint8_t *wname = ldns_rdf_data(o);
	dname_copy_lower(lname, wname);
	dname_to_str(lname, owner, sizeof(owner));
	uint16_t type = (uint16_t)ldns_rr_get_type(rr);

	if (ldns_rr_get_class(rr) != LDNS_RR_CLASS_IN)
		return zfail(r, l->file, l->line, "%s: only class IN is served", owner);
	if (!dname_is_sub(lname, z->apex))
		return zfail(r, l->file, l->line, "%s is outside the zone", owner);
	if (type == RR_SOA && !dname_equal(lname, z->apex))
		return zfail(r, l->file, l->line, "%s: SOA is only allowed at the apex",
		             owner);
	if (type == RR_OPT || type == RR_TSIG || type == RR_TKEY ||
	    (type >= RR_IXFR && type <= RR_ANY) || type == 0)
		return zfail(r, l->file, l->line, "%s: type %u cannot be zone data",
		             owner, type);

	ldns_buffer_clear(buf);
	if (ldns_rr_rdata2buffer_wire(buf, rr) != LDNS_STATUS_OK ||
	    ldns_buffer_position(buf) > 65535)
		return zfail(r, l->file, l->line, "%s: cannot encode rdata", owner);
	size_t rdlen = ldns_buffer_position(buf);
	const uint8_t *rd = ldns_buffer_begin(buf);

	znode_t *n = node_get(z, lname);
	zrrset_t *s = (zrrset_t *)znode_rrset(n, type);
	if (!s) {
		n->rrsets = xrealloc(n->rrsets, (n->nrrsets + 1) * sizeof(*n->rrsets));
		s = &n->rrsets[n->nrrsets++];
		memset(s, 0, sizeof(*s));
		s->type = type;
		s->ttl = ldns_rr_ttl(rr);
	} else {
		/* RRsets are sets (RFC 2181 §5): drop exact duplicates. */
		const uint8_t *p = s->rdata, *end = s->rdata + s->size;
		while (p < end) {
			uint16_t ln = rd16(p);
			if (ln == rdlen && memcmp(p + 2, rd, rdlen) == 0)
				return 0;
			p += 2 + ln;
		}
		if (s->count == 65535)
			return zfail(r, l->file, l->line, "%s: RRset too large", owner);
		if (ldns_rr_ttl(rr) != s->ttl) {
			/* RFC 2181 §5.2: one TTL per RRset; serve the lowest. */
			log_warning("%s:%d: %s: TTL differs within the RRset, using the lowest",
			            l->file, l->line, owner);
			if (ldns_rr_ttl(rr) < s->ttl)
				s->ttl = ldns_rr_ttl(rr);
		}
	}
	if (type == RR_CNAME && s->count > 0)
		return zfail(r, l->file, l->line, "%s: more than one CNAME", owner);
	if (type == RR_SOA && s->count > 0)
		return zfail(r, l->file, l->line, "%s: more than one SOA", owner);
	s->rdata = xrealloc(s->rdata, s->size + 2 + rdlen);
	wr16(s->rdata + s->size, (uint16_t)rdlen);
	memcpy(s->rdata + s->size + 2, rd, rdlen);
	s->size += 2 + (uint32_t)rdlen;
	s->count++;

	/* CNAME and other data (RFC 1034 §3.6.2); DNSSEC types may coexist. */
	int has_cname = znode_rrset(n, RR_CNAME) != NULL;
	int has_other = 0;
	for (uint16_t i = 0; i < n->nrrsets; i++) {
		uint16_t t = n->rrsets[i].type;
		if (t != RR_CNAME && t != RR_RRSIG && t != RR_NSEC)
			has_other = 1;
	}
	if (has_cname && has_other)
		return zfail(r, l->file, l->line, "%s: CNAME beside other data", owner);
	if (has_cname)
		n->flags |= ZNODE_CNAME;
	return 0;
}

static void link_targets(zone_t *z)
{
	for (uint32_t i = 0; i <= z->mask; i++)
		for (znode_t *n = z->table[i]; n; n = n->next) {
			if (n->nrrsets && dname_equal(n->name, z->apex))
				n->flags |= ZNODE_APEX;
			else if (znode_rrset(n, RR_NS))
				n->flags |= ZNODE_DELEG;
			for (uint16_t k = 0; k < n->nrrsets; k++) {
				zrrset_t *s = &n->rrsets[k];
				if (s->type != RR_NS && s->type != RR_MX && s->type != RR_SRV)
					continue;
				s->targets = xcalloc(s->count, sizeof(*s->targets));
				const uint8_t *p = s->rdata;
				for (uint16_t j = 0; j < s->count; j++) {
					uint16_t ln = rd16(p);
					const uint8_t *t = rdata_target(s->type, p + 2, ln);
					uint8_t lt[256];
					if (t && dname_is_sub(t, z->apex)) {
						size_t tl = dname_copy_lower(lt, t);
						s->targets[j] = zone_find(z, lt, tl, dname_hash(lt));
					}
					p += 2 + ln;
				}
			}
		}
}

zone_t *zone_load(const uint8_t *apex, const char *file, char *err,
                  size_t errlen)
{
	reader_t r = { .err = err, .errlen = errlen };
	zone_t *z = xcalloc(1, sizeof(*z));
	z->apex_len = dname_copy_lower(z->apex, apex);
	z->apex_labels = dname_labels(z->apex);
	z->file = xstrdup(file);
	z->loaded = (int64_t)time(NULL);
	table_grow(z);

	char apex_str[1100];
	dname_to_str(z->apex, apex_str, sizeof(apex_str));
	ldns_rdf *origin = ldns_dname_new_frm_str(apex_str);
	int rc = origin ? read_file(&r, file, origin, 0, NULL, 0)
	                : zfail(&r, file, 0, "bad zone name %s", apex_str);
	ldns_rdf_deep_free(origin);

	ldns_buffer *buf = ldns_buffer_new(4096);
	for (size_t i = 0; i < r.n; i++)
		if (add_rr(&r, z, &r.v[i], buf))
			rc = -1;
	ldns_buffer_free(buf);
	for (size_t i = 0; i < r.n; i++)
		ldns_rr_free(r.v[i].rr);
	free(r.v);

	if (rc == 0) {
		const znode_t *a = zone_find(z, z->apex, dname_len(z->apex, 256),
		                             dname_hash(z->apex));
		const zrrset_t *soa = a ? znode_rrset(a, RR_SOA) : NULL;
		if (!soa)
			rc = zfail(&r, file, 0, "no SOA record at the apex %s", apex_str);
		else if (soa->count != 1)
			rc = zfail(&r, file, 0, "more than one SOA record at %s", apex_str);
		else if (!znode_rrset(a, RR_NS))
			rc = zfail(&r, file, 0, "no NS records at the apex %s", apex_str);
		else {
			z->apex_node = a;
			z->soa = soa;
			/* rdata: mname, rname, serial, refresh, retry, expire, minimum */
			const uint8_t *rd = soa->rdata + 2;
			uint16_t ln = rd16(soa->rdata);
			uint32_t minimum = rd32(rd + ln - 4);
			z->serial = rd32(rd + ln - 20);
			z->neg_ttl = soa->ttl < minimum ? soa->ttl : minimum;
			link_targets(z);
		}
	}
	for (size_t i = 0; i < r.nfiles; i++)
		free(r.files[i]);
	free(r.files);
	if (r.nerr > ZONE_MAX_ERRORS) {
		size_t used = strlen(err);
		snprintf(err + used, errlen - used, "\n(and %u more errors)",
		         r.nerr - ZONE_MAX_ERRORS);
	}
	if (rc) {
		zone_free(z);
		return NULL;
	}
	return z;
}

void zone_free(zone_t *z)
{
	if (!z)
		return;
	for (uint32_t i = 0; z->table && i <= z->mask; i++) {
		znode_t *n = z->table[i];
		while (n) {
			znode_t *next = n->next;
			for (uint16_t k = 0; k < n->nrrsets; k++) {
				free(n->rrsets[k].rdata);
				free(n->rrsets[k].targets);
			}
			free(n->rrsets);
			free((void *)n->name);
			free(n);
			n = next;
		}
	}
	free(z->table);
	free(z->file);
	free(z);
}

int zone_claims(const zone_t *z, const uint8_t *name, char *why, size_t whylen)
{
	unsigned labels = dname_labels(name);
	if (!dname_is_sub(name, z->apex) || labels <= z->apex_labels)
		return 0;
	char buf[1100];
	/* Walk down from the apex: a zone cut on the way takes the name out
	 * of our answers (a referral), as query_process() walks. */
	for (unsigned keep = z->apex_labels + 1; keep <= labels; keep++) {
		const uint8_t *s = dname_suffix(name, keep);
		const znode_t *n = zone_find(z, s, dname_len(s, 255), dname_hash(s));
		if (!n)
			return 0;
		if (n->flags & ZNODE_DELEG) {
			dname_to_str(n->name, buf, sizeof(buf));
			snprintf(why, whylen, "it lies in the delegation %s", buf);
			return 1;
		}
		if (keep == labels && n->nrrsets) {
			snprintf(why, whylen, "the zone file has %u record set(s) at that name",
			         (unsigned)n->nrrsets);
			return 1;
		}
	}
	return 0;
}
