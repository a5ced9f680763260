/* SPDX-License-Identifier: MIT */
/* Listen addresses of gslbd.conf and of the command line. */
#include "common/conf_listen.h"
#include "common/util.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int conf_parse_listen(const char *text, conf_listen_t *out)
{
	char host[64];
	unsigned long port = 53;
	const char *at = strrchr(text, '@');
	size_t hl = at ? (size_t)(at - text) : strlen(text);
	if (hl == 0 || hl >= sizeof(host))
		return GSLB_EINVAL;
	memcpy(host, text, hl);
	host[hl] = 0;
	if (at) {
		char *end;
		if (!isdigit((unsigned char)at[1]))
			return GSLB_EINVAL;
		port = strtoul(at + 1, &end, 10);
		if (*end || port == 0 || port > 65535)
			return GSLB_EINVAL;
	}
	memset(out, 0, sizeof(*out));
	struct sockaddr_in *s4 = (struct sockaddr_in *)&out->addr;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&out->addr;
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		out->addrlen = sizeof(*s4);
	} else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		out->addrlen = sizeof(*s6);
	} else {
		return GSLB_EINVAL;
	}
	snprintf(out->text, sizeof(out->text), "%s@%lu", host, port);
	return 0;
}

int conf__is_wildcard(const conf_listen_t *l)
{
	if (l->addr.ss_family == AF_INET)
		return ((const struct sockaddr_in *)&l->addr)->sin_addr.s_addr == INADDR_ANY;
	return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)&l->addr)->sin6_addr);
}

int conf_override_listen(conf_t *c, char **addrs, size_t n, char *err,
                         size_t errlen)
{
	conf_listen_t *l = xcalloc(n, sizeof(*l));
	for (size_t i = 0; i < n; i++)
		if (conf_parse_listen(addrs[i], &l[i])) {
			snprintf(err, errlen,
			         "-l %s: listen address must be ADDR@PORT, e.g. 127.0.0.1@5300",
			         addrs[i]);
			free(l);
			return GSLB_EINVAL;
		} else if (conf__is_wildcard(&l[i])) {
			snprintf(err, errlen, "-l " CONF__WILDCARD_MSG, l[i].text);
			free(l);
			return GSLB_EINVAL;
		}
	free(c->listen);
	c->listen = l;
	c->nlisten = n;
	return 0;
}
