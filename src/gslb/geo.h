/* SPDX-License-Identifier: MIT */
/* Client location: a client address -> {region, ISP, prefix length}, from
 * an operator CIDR file (which wins) or a MaxMind DB read through
 * libmaxminddb with configurable lookup paths and value maps.
 *
 * A geo_t is immutable once geo_open() returns; any number of threads may
 * call geo_lookup() at once.  geo_lookup() allocates nothing. */
#ifndef GSLB_GEO_H
#define GSLB_GEO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/conf.h"

#define GEO_NAME_MAX 32   /* region and ISP names, with the final NUL */

typedef enum {
	GEO_SRC_NONE = 0,     /* nothing matched: region and ISP are "*" */
	GEO_SRC_NETS,         /* the operator's CIDR file (geoip.nets) */
	GEO_SRC_MMDB,         /* the MaxMind DB (geoip.database) */
} geo_source_t;

typedef struct geo_result {
	char region[GEO_NAME_MAX];  /* "*" when unknown */
	char isp[GEO_NAME_MAX];     /* "*" when unknown */
	uint8_t prefix_len;         /* length of the network that decided, in
	                               the client's family (IPv4: 0..32);
	                               this becomes the ECS scope */
	uint8_t source;             /* geo_source_t */
	uint8_t want_network;       /* set by the caller: fill network */
	uint64_t lochash;           /* a hash of (region, isp), never 0, from
	                               the compiled table; 0 otherwise */
	char network[64];           /* "36.110.0.0/16", for explain; "" unless
	                               want_network was set */
} geo_result_t;

typedef struct geo geo_t;

/** Opens the database and reads the CIDR file named by the geoip section
 * of @c (c->root), validating every key (errors "FILE:LINE: reason" in
 * @err, the CIDR file's own line for a bad line there).  Returns NULL on
 * error.  A configuration without a geoip section gives a geo_t that
 * answers GEO_SRC_NONE for everything. */
geo_t *geo_open(const conf_t *c, char *err, size_t errlen);

/** Looks up @addr (AF_INET or AF_INET6; an IPv4-mapped IPv6 address is
 * treated as IPv4).  Always fills @out; returns its source. */
geo_source_t geo_lookup(const geo_t *g, const struct sockaddr *addr,
                        geo_result_t *out);

/** Whether geo_open() builds the compiled location table when the
 * configuration asks for it (default yes).  Programs that locate only a
 * few clients (gslbctl, gslbd --check) turn it off: the table costs a
 * walk of the whole database.  Call before the first geo_open(). */
void geo_allow_compile(int on);

/** Whether geoip.edns-client-subnet is on (default on). */
int geo_use_ecs(const geo_t *g);

/** A name geo_names() found; @arg is its caller's. */
typedef void (*geo_name_fn)(const char *name, void *arg);

/** Calls @fn for every region (@isp 0) or ISP (@isp 1) name a lookup in
 * @g can give: those of the CIDR file's lines, and the field's value
 * (through its path and map, lowercased) in every record of the MaxMind
 * DB, found by reading each node of its search tree once.  A name may
 * come more than once; "*" never does.  The walk costs time in the size
 * of the database (for gslbctl, not for the query path).  Returns 0, or
 * -1 when the database's tree cannot be read (then some names may be
 * missing). */
int geo_names(const geo_t *g, int isp, geo_name_fn fn, void *arg);

/** Frees @g and closes its database; NULL is allowed. */
void geo_close(geo_t *g);

/** A static name of @s for logs and explain: "none", "nets" or "mmdb". */
const char *geo_source_str(geo_source_t s);

#endif
