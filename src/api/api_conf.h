/* SPDX-License-Identifier: MIT */
/* The api section of gslbd.conf:
 *   api:
 *     listen: [ "127.0.0.1@9154" ]   # default: 127.0.0.1@9154
 *     tls-cert: /etc/gslbd/api.crt   # PEM; with tls-key: HTTPS
 *     tls-key: /etc/gslbd/api.key
 *     allow: [ "10.0.0.0/8" ]        # default: anyone who reaches it
 *     max-body: 1048576              # bytes of a request body
 *     max-connections: 64
 *     rate: 20                       # requests per second per token
 *     run-timeout: 30                # seconds a POST /v1/run command may take
 * An absent section: no API.  A listen address that is not loopback
 * needs tls-cert and tls-key: a token must never cross a network in
 * clear. */
#ifndef GSLB_API_CONF_H
#define GSLB_API_CONF_H

#include <stddef.h>

#include "common/conf.h"
#include "common/net.h"

#define API_MAX_LISTEN 8
#define API_MAX_ALLOW 32
#define API_DEFAULT_LISTEN "127.0.0.1@9154"

typedef struct api_conf {
	int enabled;               /* the section is there */
	conf_listen_t listen[API_MAX_LISTEN];
	size_t nlisten;
	char cert[1024], key[1024]; /* paths, "" when not given */
	net_prefix_t allow[API_MAX_ALLOW];
	size_t nallow;             /* 0: anyone */
	unsigned max_body;         /* bytes */
	unsigned max_conn;
	unsigned rate;             /* requests per second per token */
	unsigned run_timeout;      /* seconds, for POST /v1/run */
} api_conf_t;

/** Reads the api section of @c into @o.  Returns 0, or -1 with
 * "FILE:LINE: reason" in @err. */
int api_conf_load(const conf_t *c, api_conf_t *o, char *err, size_t errlen);

/** Whether listen address @l is a loopback one (127/8, ::1). */
int api_listen_loopback(const conf_listen_t *l);

#endif
