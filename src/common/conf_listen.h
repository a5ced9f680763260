/* SPDX-License-Identifier: MIT */
/* Listen addresses: what conf.c and the command line share beyond
 * conf_parse_listen() and conf_override_listen() (declared in conf.h). */
#ifndef GSLB_CONF_LISTEN_H
#define GSLB_CONF_LISTEN_H

#include "common/conf.h"

/** The reason a wildcard address (0.0.0.0, ::) is refused, a format for
 * its text: gslbd answers from the socket a query came in on and reads
 * no IP_PKTINFO, so on a wildcard socket a reply would leave from
 * whatever address the route picks, and clients waiting for the address
 * they asked would drop it. */
#define CONF__WILDCARD_MSG "%s: a wildcard address cannot be served, since " \
	"replies must leave from the address each query came to; list every " \
	"address instead (e.g. 192.0.2.53@53)"

/** Whether @l is a wildcard address. */
int conf__is_wildcard(const conf_listen_t *l);

#endif
