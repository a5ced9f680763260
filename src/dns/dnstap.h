/* SPDX-License-Identifier: MIT */
/* dnstap query and response logging: the dnstap section, the encoding of
 * AUTH_QUERY and AUTH_RESPONSE messages (protobuf, schema dnstap.proto)
 * with the GSLB decision in the extra field, and their hand-over to
 * libfstrm's I/O thread, which writes them as Frame Streams to a Unix
 * socket.
 *
 * Thread safety: a dnstap_t is made and freed by the main thread, before
 * the query threads start and after they stop; it cannot change while
 * they run (a changed section needs a restart).  Each query thread owns
 * one dnstap_queue_t, an fstrm single-producer queue, so the query path
 * takes no lock: it encodes into a malloc'd buffer that the I/O thread
 * frees once written or discarded.  When the queue is full the message
 * is dropped and counted; nothing on the query path waits for the
 * collector. */
#ifndef GSLB_DNSTAP_H
#define GSLB_DNSTAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "common/conf.h"
#include "dns/query.h"

/** The dnstap section of gslbd.conf, validated. */
typedef struct dnstap_conf {
	char *socket;        /* resolved path; NULL: no section, dnstap off */
	int queries;         /* log AUTH_QUERY messages (default 1) */
	int responses;       /* log AUTH_RESPONSE messages (default 1) */
	char *identity;      /* default server.identity; "" sends none */
	char *version;       /* default "gslbd VERSION"; "" sends none */
} dnstap_conf_t;

/** Reads the dnstap section of @c into @out (dnstap off without a
 * section).  Returns 0, or -1 with "FILE:LINE: reason" in @err and
 * nothing to free.  On success the caller owns @out's strings
 * (dnstap_conf_clear()). */
int dnstap_conf_load(const conf_t *c, dnstap_conf_t *out, char *err,
                     size_t errlen);

/** Frees the strings of @dc (not @dc itself). */
void dnstap_conf_clear(dnstap_conf_t *dc);

/** Non-zero when @a and @b configure the same logging. */
int dnstap_conf_equal(const dnstap_conf_t *a, const dnstap_conf_t *b);

/* Encoding (pure; used by the query threads and the unit test) ------- */

enum { DNSTAP_AUTH_QUERY = 1, DNSTAP_AUTH_RESPONSE = 2 };

/** One message to encode.  Addresses are AF_INET or AF_INET6 (both of
 * the same family); NULL fields are left out. */
typedef struct dnstap_msg {
	int type;                      /* DNSTAP_AUTH_* */
	int tcp;                       /* socket protocol TCP, else UDP */
	const struct sockaddr *client; /* query address and port */
	const struct sockaddr *local;  /* response address and port */
	struct timespec qtime;         /* when the query was received */
	struct timespec rtime;         /* responses: when it was sent */
	const uint8_t *wire;           /* the query or the response */
	size_t wirelen;
	const char *identity;          /* "" or NULL: none */
	const char *version;           /* "" or NULL: none */
	const char *extra;             /* NULL: none */
	size_t extralen;
} dnstap_msg_t;

/** Encodes @m as a serialised dnstap.Dnstap into a new buffer (free()
 * it), its length in *@len; NULL when memory is short. */
uint8_t *dnstap_encode(const dnstap_msg_t *m, size_t *len);

/** Writes the GSLB extra of a response into @buf (capacity @cap):
 * "gslb service=NAME row=REGION,ISP node=ID[,ID...]", NAME the service
 * name in lowercase without the final dot, REGION and ISP the row's key
 * ("*" for a wildcard), node "-" when no node was picked (NODATA).
 * @svc is the service name in wire format, @g the resolution that
 * answered.  Returns the length, or 0 when it does not fit. */
size_t dnstap_gslb_extra(char *buf, size_t cap, const uint8_t *svc,
                         const gslb_result_t *g);

/** Finds the GSLB service name in response @resp of @len bytes: the
 * QNAME, followed through @hops - 1 CNAMEs of the answer section
 * (qctx_t.gslb_hops).  Writes it (wire, original case) into @out
 * (DNAME_MAXLEN + 1 bytes).  Returns 0, or -1 when the response does not
 * show it (truncated, malformed). */
int dnstap_gslb_service(const uint8_t *resp, size_t len, unsigned hops,
                        uint8_t *out);

/* The running logger ------------------------------------------------- */

typedef struct dnstap dnstap_t;
typedef struct dnstap_queue dnstap_queue_t;

/** Starts the fstrm I/O thread for @dc (dnstap on: dc->socket set) with
 * @nqueues input queues, one per query thread.  The collector need not
 * be there: the I/O thread connects when it appears and reconnects
 * after a loss, and discards what is queued in the meantime.  @dc is
 * copied.  Returns the logger (free with dnstap_free()), or NULL with
 * the reason in @err.  Call after fork() (threads do not survive it). */
dnstap_t *dnstap_new(const dnstap_conf_t *dc, unsigned nqueues, char *err,
                     size_t errlen);

/** Flushes what is queued to the collector (if connected), stops the I/O
 * thread and frees @d (NULL is fine).  The query threads must have
 * stopped. */
void dnstap_free(dnstap_t *d);

/** Input queue @idx (< nqueues) of @d, for one query thread; owned by
 * @d. */
dnstap_queue_t *dnstap_queue(dnstap_t *d, unsigned idx);

/** Logs one exchange on the calling thread's queue @dq: the query @in of
 * @inlen bytes from @c (received at @qtime) to our address @local, and,
 * when @outlen > 0, the response @out that is sent.  A response answered
 * by a GSLB service (q->gslb_hops) carries the decision in extra; the
 * caller must still hold the store read the result points into.  Counts
 * STAT_DNSTAP_MESSAGES and STAT_DNSTAP_DROPPED in q->stats. */
void dnstap_log(dnstap_queue_t *dq, qctx_t *q, const client_t *c,
                const struct sockaddr *local, const struct timespec *qtime,
                const uint8_t *in, size_t inlen, const uint8_t *out,
                size_t outlen);

#endif
