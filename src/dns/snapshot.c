/* SPDX-License-Identifier: MIT */
/* Snapshot building, publication and grace-period reclamation. */
#include "dns/snapshot.h"
#include "common/log.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <urcu-qsbr.h>

static snapshot_t *current;
static uint64_t generation;

static void ztable_build(snapshot_t *s)
{
	uint32_t size = 16;
	while (size < s->nzones * 4)
		size *= 2;
	s->zmask = size - 1;
	s->ztable = xcalloc(size, sizeof(*s->ztable));
	for (size_t i = 0; i < s->nzones; i++) {
		zone_t *z = s->zones[i];
		if (!z)
			continue;
		uint32_t h = dname_hash(z->apex) & s->zmask;
		while (s->ztable[h])
			h = (h + 1) & s->zmask;
		s->ztable[h] = z;
		s->apex_labels |= 1ull << (z->apex_labels < 63 ? z->apex_labels : 63);
	}
}

const zone_t *snapshot_find_zone(const snapshot_t *s, const uint8_t *lname,
                                 unsigned labels)
{
	const uint8_t *n = lname, *end = lname;
	while (*end)
		end += *end + 1;
	end++;
	for (unsigned l = labels + 1; l-- > 0; n += *n + 1) {
		/* Most suffixes cannot be an apex: no zone has that many
		 * labels.  Hashing them was a third of a static answer. */
		if (!(s->apex_labels >> (l < 63 ? l : 63) & 1))
			continue;
		size_t len = (size_t)(end - n);
		uint32_t h = dname_hash_len(n, len) & s->zmask;
		for (const zone_t *z; (z = s->ztable[h]); h = (h + 1) & s->zmask)
			/* Both lowercase: equal bytes are equal names. */
			if (z->apex_len == len && memcmp(z->apex, n, len) == 0)
				return z;
	}
	return NULL;
}

static void set_text(uint8_t *dst, uint8_t *len, const char *src)
{
	size_t n = strlen(src);
	if (n > 255)
		n = 255;
	memcpy(dst, src, n);
	*len = (uint8_t)n;
}

/* The zone of apex @apex in @old, or NULL. */
static zone_t *old_zone(const snapshot_t *old, const uint8_t *apex)
{
	for (size_t j = 0; old && j < old->nzones; j++)
		if (old->zones[j] && dname_equal(old->zones[j]->apex, apex))
			return old->zones[j];
	return NULL;
}

int snapshot_serial_lt(uint32_t a, uint32_t b)
{
	/* RFC 1982 serial number arithmetic: a < b when b is ahead of a by
	 * less than half the space (2^31 apart is undefined: not "less"). */
	return a != b && (uint32_t)(b - a) < 0x80000000u;
}

snapshot_t *snapshot_build(const conf_t *conf, const snapshot_t *old,
                           unsigned *nfailed, char *err, size_t errlen)
{
	snapshot_t *s = xcalloc(1, sizeof(*s));
	s->nzones = conf->nzones;
	s->zones = xcalloc(s->nzones ? s->nzones : 1, sizeof(*s->zones));
	set_text(s->identity, &s->identity_len, conf->identity);
	set_text(s->version, &s->version_len, conf->version);
	s->udp_max_payload = (uint16_t)conf->udp_max_payload;
	s->max_cname_chain = (uint8_t)conf->max_cname_chain;
	*nfailed = 0;
	/* The GeoIP database and the CIDR file are read again on every
	 * build (reload); an error keeps the running snapshot. */
	s->geo = geo_open(conf, err, errlen);
	if (!s->geo) {
		free(s->zones);
		free(s);
		return NULL;
	}
	for (size_t i = 0; i < conf->nzones; i++) {
		const conf_zone_t *cz = &conf->zones[i];
		char zerr[600];
		zone_t *z = zone_load(cz->dname, cz->file, zerr, sizeof(zerr));
		if (z) {
			log_info("zone %s: loaded serial %u, %zu names, from %s",
			         cz->name, z->serial, z->nnodes, cz->file);
			/* A reload to a lower serial is served (it is the
			 * operator's file) but said: secondaries and resolvers
			 * that hold the higher one will not take it. */
			const zone_t *was = old_zone(old, cz->dname);
			if (was && snapshot_serial_lt(z->serial, was->serial))
				log_warning("zone %s: serial went backwards on reload, %u -> %u "
				            "(%s): secondaries that have %u will not transfer it; "
				            "give a serial above %u", cz->name, was->serial,
				            z->serial, cz->file, was->serial, was->serial);
		} else {
			(*nfailed)++;
			zone_t *prev = old_zone(old, cz->dname);
			if (!prev) {
				log_err("zone %s: %s", cz->name, zerr);
				if (*nfailed == 1)
					snprintf(err, errlen, "zone %s: %s", cz->name, zerr);
				continue;
			}
			log_err("zone %s: %s; keeping serial %u", cz->name, zerr,
			        prev->serial);
			z = prev;
		}
		z->refs++;
		s->zones[i] = z;
	}
	if (*nfailed && !old) {
		snapshot_free(s);
		return NULL;
	}
	if (dnssec_set_load(conf, &s->dnssec, err, errlen)) {
		log_err("%s", err);
		snapshot_free(s);
		return NULL;
	}
	ztable_build(s);
	s->generation = ++generation;
	return s;
}

void snapshot_publish(snapshot_t *s)
{
	/* Release: the new one is whole before it can be seen; C11 atomics
	 * rather than rcu_xchg_pointer() so that ThreadSanitizer sees the
	 * ordering (the same instructions on x86-64). */
	snapshot_t *old = __atomic_exchange_n(&current, s, __ATOMIC_ACQ_REL);
	if (old) {
		synchronize_rcu();
		snapshot_free(old);
	}
}

const snapshot_t *snapshot_get(void)
{
	return __atomic_load_n(&current, __ATOMIC_ACQUIRE);
}

void snapshot_free(snapshot_t *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nzones; i++)
		if (s->zones[i] && --s->zones[i]->refs == 0)
			zone_free(s->zones[i]);
	free(s->zones);
	free(s->ztable);
	geo_close(s->geo);
	dnssec_set_free(s->dnssec);
	free(s);
}
