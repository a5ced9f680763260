/* SPDX-License-Identifier: MIT */
/* dnstap logging: the dnstap section, message encoding with protobuf-c,
 * the GSLB extra, and libfstrm's I/O thread with one queue per query
 * thread.
 *
 * Thread safety: see dnstap.h.  The query threads only encode into a
 * buffer of their own and call fstrm_iothr_submit() on their own SPSC
 * queue; the I/O thread frees each buffer with free() once it has been
 * written or discarded. */
#include "dns/dnstap.h"
#include "config.h"
#include "common/log.h"
#include "common/util.h"
#include "common/ytree.h"

#include "dnstap.pb-c.h"

#include <fstrm.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

/* The Frame Streams content type of dnstap, which collectors check. */
#define DNSTAP_CONTENT_TYPE "protobuf:dnstap.Dnstap"

/* Frames a query thread may have waiting for the I/O thread.  A response
 * and its query take two; at 8192 a thread rides out about 4000 queries
 * of a collector's stall before it drops.  The queue itself is 256 KiB a
 * thread (32-byte entries), allocated at start; the waiting messages,
 * a few hundred bytes each, only while the collector lags (fstrm allows
 * 2..16384, a power of two). */
#define DNSTAP_QUEUE_SIZE 8192

/* Seconds between the I/O thread's attempts to reach an absent
 * collector: a failed connect() on a Unix socket costs next to nothing,
 * and a restarted collector gets data again within a second. */
#define DNSTAP_REOPEN 1

/* Longest GSLB extra: "gslb service=" and a name of up to 253 characters,
 * " row=" and two names, " node=" and up to POLICY_MAX_ANSWERS ids. */
#define DNSTAP_EXTRA_MAX 1024

struct dnstap_queue {
	dnstap_t *d;
	struct fstrm_iothr_queue *q;
};

struct dnstap {
	dnstap_conf_t conf;          /* a copy */
	struct fstrm_iothr *iothr;
	dnstap_queue_t *queues;
	unsigned nqueues;
};

/* Configuration ------------------------------------------------------- */

static int read_str(const conf_t *c, const ynode_t *v, const char *what,
                    char **out, char *err, size_t errlen)
{
	if (v->kind != YNODE_SCALAR)
		return conf_sfail(c, v, err, errlen, "dnstap.%s must be a string",
		                  what);
	free(*out);
	*out = xstrdup(v->value);
	return 0;
}

int dnstap_conf_load(const conf_t *c, dnstap_conf_t *o, char *err,
                     size_t errlen)
{
	memset(o, 0, sizeof(*o));
	const ynode_t *s = c->root ? ynode_get(c->root, "dnstap") : NULL;
	if (!s)
		return 0;
	static const char *const keys[] = { "socket", "queries", "responses",
	                                    "identity", "version", NULL };
	if (conf_skeys(c, s, "dnstap", keys, err, errlen))
		return -1;
	o->queries = o->responses = 1;
	const ynode_t *sock = NULL;
	char *path = NULL;
	for (size_t i = 0; i < s->n; i++) {
		const char *k = s->keys[i]->value;
		const ynode_t *v = s->items[i];
		int rc = 0;
		if (strcmp(k, "socket") == 0) {
			sock = v;
			rc = read_str(c, v, k, &path, err, errlen);
		} else if (strcmp(k, "queries") == 0) {
			rc = conf_sbool(c, v, "dnstap.queries", &o->queries, err,
			                errlen);
		} else if (strcmp(k, "responses") == 0) {
			rc = conf_sbool(c, v, "dnstap.responses", &o->responses, err,
			                errlen);
		} else if (strcmp(k, "identity") == 0) {
			rc = read_str(c, v, k, &o->identity, err, errlen);
		} else if (strcmp(k, "version") == 0) {
			rc = read_str(c, v, k, &o->version, err, errlen);
		}
		if (rc) {
			free(path);
			dnstap_conf_clear(o);
			return -1;
		}
	}
	if (!path || !*path) {
		free(path);
		dnstap_conf_clear(o);
		return conf_sfail(c, sock ? sock : s, err, errlen,
		                  "dnstap.socket is required: the path of the "
		                  "collector's Frame Streams Unix socket");
	}
	o->socket = conf_path(c, path);
	free(path);
	struct sockaddr_un sun;
	if (strlen(o->socket) >= sizeof(sun.sun_path)) {
		conf_sfail(c, sock, err, errlen,
		           "dnstap.socket: '%s' is longer than a Unix socket "
		           "path may be (%zu bytes)", o->socket,
		           sizeof(sun.sun_path) - 1);
		dnstap_conf_clear(o);
		return -1;
	}
	if (!o->identity)
		o->identity = xstrdup(c->identity);
	if (!o->version)
		o->version = xstrdup("gslbd " PACKAGE_VERSION);
	return 0;
}

void dnstap_conf_clear(dnstap_conf_t *dc)
{
	free(dc->socket);
	free(dc->identity);
	free(dc->version);
	memset(dc, 0, sizeof(*dc));
}

static int str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

int dnstap_conf_equal(const dnstap_conf_t *a, const dnstap_conf_t *b)
{
	return str_eq(a->socket, b->socket) && a->queries == b->queries &&
	       a->responses == b->responses &&
	       str_eq(a->identity, b->identity) && str_eq(a->version, b->version);
}

/* Encoding ------------------------------------------------------------ */

/* Sets the address field @addr (and @port) from @sa; returns the socket
 * family, or 0 for another. */
static int set_addr(const struct sockaddr *sa, ProtobufCBinaryData *addr,
                    protobuf_c_boolean *has_addr, uint32_t *port,
                    protobuf_c_boolean *has_port)
{
	if (!sa)
		return 0;
	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
		addr->data = (uint8_t *)&in->sin_addr;
		addr->len = 4;
		*port = ntohs(in->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
		addr->data = (uint8_t *)&in6->sin6_addr;
		addr->len = 16;
		*port = ntohs(in6->sin6_port);
	} else {
		return 0;
	}
	*has_addr = *has_port = 1;
	return sa->sa_family == AF_INET ? DNSTAP__SOCKET_FAMILY__INET
	                                : DNSTAP__SOCKET_FAMILY__INET6;
}

static void set_bytes(const void *p, size_t len, ProtobufCBinaryData *f,
                      protobuf_c_boolean *has)
{
	if (!p || !len)
		return;
	f->data = (uint8_t *)p;
	f->len = len;
	*has = 1;
}

uint8_t *dnstap_encode(const dnstap_msg_t *m, size_t *len)
{
	Dnstap__Message msg = DNSTAP__MESSAGE__INIT;
	Dnstap__Dnstap d = DNSTAP__DNSTAP__INIT;
	d.type = DNSTAP__DNSTAP__TYPE__MESSAGE;
	d.message = &msg;
	if (m->identity)
		set_bytes(m->identity, strlen(m->identity), &d.identity,
		          &d.has_identity);
	if (m->version)
		set_bytes(m->version, strlen(m->version), &d.version,
		          &d.has_version);
	set_bytes(m->extra, m->extralen, &d.extra, &d.has_extra);

	msg.type = m->type == DNSTAP_AUTH_RESPONSE ?
	           DNSTAP__MESSAGE__TYPE__AUTH_RESPONSE :
	           DNSTAP__MESSAGE__TYPE__AUTH_QUERY;
	msg.has_socket_protocol = 1;
	msg.socket_protocol = m->tcp ? DNSTAP__SOCKET_PROTOCOL__TCP
	                             : DNSTAP__SOCKET_PROTOCOL__UDP;
	int fam = set_addr(m->client, &msg.query_address, &msg.has_query_address,
	                   &msg.query_port, &msg.has_query_port);
	int lfam = set_addr(m->local, &msg.response_address,
	                    &msg.has_response_address, &msg.response_port,
	                    &msg.has_response_port);
	if (fam || lfam) {
		msg.has_socket_family = 1;
		msg.socket_family = (Dnstap__SocketFamily)(fam ? fam : lfam);
	}
	msg.has_query_time_sec = msg.has_query_time_nsec = 1;
	msg.query_time_sec = (uint64_t)m->qtime.tv_sec;
	msg.query_time_nsec = (uint32_t)m->qtime.tv_nsec;
	if (m->type == DNSTAP_AUTH_RESPONSE) {
		msg.has_response_time_sec = msg.has_response_time_nsec = 1;
		msg.response_time_sec = (uint64_t)m->rtime.tv_sec;
		msg.response_time_nsec = (uint32_t)m->rtime.tv_nsec;
		set_bytes(m->wire, m->wirelen, &msg.response_message,
		          &msg.has_response_message);
	} else {
		set_bytes(m->wire, m->wirelen, &msg.query_message,
		          &msg.has_query_message);
	}
	size_t n = dnstap__dnstap__get_packed_size(&d);
	uint8_t *buf = malloc(n ? n : 1);
	if (!buf)
		return NULL;
	*len = dnstap__dnstap__pack(&d, buf);
	return buf;
}

/* Appends @n bytes of @s to @buf at *@pos; -1 when they do not fit. */
static int put(char *buf, size_t cap, size_t *pos, const char *s, size_t n)
{
	if (*pos + n >= cap)
		return -1;
	memcpy(buf + *pos, s, n);
	*pos += n;
	buf[*pos] = 0;
	return 0;
}

static int puts0(char *buf, size_t cap, size_t *pos, const char *s)
{
	return put(buf, cap, pos, s, strlen(s));
}

size_t dnstap_gslb_extra(char *buf, size_t cap, const uint8_t *svc,
                         const gslb_result_t *g)
{
	char name[DNAME_MAXLEN * 4 + 2];
	dname_to_str(svc, name, sizeof(name));
	size_t nl = strlen(name);
	if (nl > 1 && name[nl - 1] == '.')
		name[--nl] = 0;
	for (size_t i = 0; i < nl; i++)
		if (name[i] >= 'A' && name[i] <= 'Z')
			name[i] = (char)(name[i] - 'A' + 'a');
	int by_reg = g->row == GSLB_ROW_REGION_ISP || g->row == GSLB_ROW_REGION;
	int by_isp = g->row == GSLB_ROW_REGION_ISP || g->row == GSLB_ROW_ISP;
	size_t pos = 0;
	if (puts0(buf, cap, &pos, "gslb service=") ||
	    put(buf, cap, &pos, name, nl) ||
	    puts0(buf, cap, &pos, " row=") ||
	    puts0(buf, cap, &pos, by_reg ? g->geo.region : "*") ||
	    puts0(buf, cap, &pos, ",") ||
	    puts0(buf, cap, &pos, by_isp ? g->geo.isp : "*") ||
	    puts0(buf, cap, &pos, " node="))
		return 0;
	if (!g->npicked && puts0(buf, cap, &pos, "-"))
		return 0;
	for (unsigned i = 0; i < g->npicked; i++) {
		const plan_node_t *n = &g->plan.node[g->picked[i]];
		if ((i && puts0(buf, cap, &pos, ",")) ||
		    put(buf, cap, &pos, n->id, n->id_len))
			return 0;
	}
	return pos;
}

int dnstap_gslb_service(const uint8_t *resp, size_t len, unsigned hops,
                        uint8_t *out)
{
	if (len < 12 || hops == 0 || (resp[2] & 0x02) || rd16(resp + 4) != 1)
		return -1;
	size_t pos = 12;
	if (!dname_unpack(resp, len, &pos, out))
		return -1;
	pos += 4;
	unsigned an = rd16(resp + 6);
	uint8_t owner[DNAME_MAXLEN + 1];
	/* The answer holds the CNAMEs of the chain in order, then the
	 * service's records. */
	for (unsigned hop = 1, i = 0; hop < hops; i++) {
		if (i >= an || !dname_unpack(resp, len, &pos, owner) ||
		    pos + 10 > len)
			return -1;
		uint16_t type = rd16(resp + pos);
		uint16_t rdlen = rd16(resp + pos + 8);
		pos += 10;
		if (pos + rdlen > len)
			return -1;
		size_t next = pos + rdlen;
		if (type == 5 && dname_equal(owner, out)) {
			size_t p = pos;
			if (!dname_unpack(resp, len, &p, out))
				return -1;
			hop++;
		}
		pos = next;
	}
	return 0;
}

/* The running logger -------------------------------------------------- */

dnstap_t *dnstap_new(const dnstap_conf_t *dc, unsigned nqueues, char *err,
                     size_t errlen)
{
	struct fstrm_writer_options *wopt = fstrm_writer_options_init();
	fstrm_writer_options_add_content_type(wopt, DNSTAP_CONTENT_TYPE,
	                                      strlen(DNSTAP_CONTENT_TYPE));
	struct fstrm_unix_writer_options *uopt = fstrm_unix_writer_options_init();
	fstrm_unix_writer_options_set_socket_path(uopt, dc->socket);
	struct fstrm_writer *w = fstrm_unix_writer_init(uopt, wopt);
	fstrm_unix_writer_options_destroy(&uopt);
	fstrm_writer_options_destroy(&wopt);
	if (!w) {
		snprintf(err, errlen, "dnstap: cannot set up a writer for %s",
		         dc->socket);
		return NULL;
	}
	struct fstrm_iothr_options *iopt = fstrm_iothr_options_init();
	fstrm_iothr_options_set_num_input_queues(iopt, nqueues ? nqueues : 1);
	fstrm_iothr_options_set_input_queue_size(iopt, DNSTAP_QUEUE_SIZE);
	fstrm_iothr_options_set_reopen_interval(iopt, DNSTAP_REOPEN);
	fstrm_iothr_options_set_queue_model(iopt, FSTRM_IOTHR_QUEUE_MODEL_SPSC);
	struct fstrm_iothr *io = fstrm_iothr_init(iopt, &w);
	fstrm_iothr_options_destroy(&iopt);
	if (!io) {
		if (w)
			fstrm_writer_destroy(&w);
		snprintf(err, errlen, "dnstap: cannot start the I/O thread");
		return NULL;
	}
	dnstap_t *d = xcalloc(1, sizeof(*d));
	d->conf.socket = xstrdup(dc->socket);
	d->conf.queries = dc->queries;
	d->conf.responses = dc->responses;
	d->conf.identity = xstrdup(dc->identity ? dc->identity : "");
	d->conf.version = xstrdup(dc->version ? dc->version : "");
	d->iothr = io;
	d->nqueues = nqueues ? nqueues : 1;
	d->queues = xcalloc(d->nqueues, sizeof(*d->queues));
	for (unsigned i = 0; i < d->nqueues; i++) {
		d->queues[i].d = d;
		d->queues[i].q = fstrm_iothr_get_input_queue_idx(io, i);
	}
	return d;
}

void dnstap_free(dnstap_t *d)
{
	if (!d)
		return;
	/* Drains the queues into the writer and closes it (the collector
	 * gets a STOP frame) before the thread ends. */
	fstrm_iothr_destroy(&d->iothr);
	free(d->queues);
	dnstap_conf_clear(&d->conf);
	free(d);
}

dnstap_queue_t *dnstap_queue(dnstap_t *d, unsigned idx)
{
	return idx < d->nqueues ? &d->queues[idx] : NULL;
}

/* Encodes @m and hands it to the I/O thread, counting the outcome. */
static void submit(dnstap_queue_t *dq, qctx_t *q, const dnstap_msg_t *m)
{
	size_t len;
	uint8_t *buf = dnstap_encode(m, &len);
	if (buf && fstrm_iothr_submit(dq->d->iothr, dq->q, buf, len,
	                              fstrm_free_wrapper, NULL) ==
	           fstrm_res_success) {
		STAT_INC(q->stats, STAT_DNSTAP_MESSAGES);
		return;
	}
	free(buf);
	STAT_INC(q->stats, STAT_DNSTAP_DROPPED);
}

void dnstap_log(dnstap_queue_t *dq, qctx_t *q, const client_t *c,
                const struct sockaddr *local, const struct timespec *qtime,
                const uint8_t *in, size_t inlen, const uint8_t *out,
                size_t outlen)
{
	const dnstap_conf_t *dc = &dq->d->conf;
	dnstap_msg_t m = {
		.type = DNSTAP_AUTH_QUERY, .tcp = c->tcp, .client = c->addr,
		.local = local, .qtime = *qtime, .wire = in, .wirelen = inlen,
		.identity = dc->identity, .version = dc->version,
	};
	if (dc->queries)
		submit(dq, q, &m);
	if (!dc->responses || !outlen)
		return;
	m.type = DNSTAP_AUTH_RESPONSE;
	m.wire = out;
	m.wirelen = outlen;
	clock_gettime(CLOCK_REALTIME, &m.rtime);
	char extra[DNSTAP_EXTRA_MAX];
	uint8_t svc[DNAME_MAXLEN + 1];
	if (q->gslb_hops &&
	    dnstap_gslb_service(out, outlen, q->gslb_hops, svc) == 0 &&
	    (m.extralen = dnstap_gslb_extra(extra, sizeof(extra), svc, &q->gslb)))
		m.extra = extra;
	submit(dq, q, &m);
}
