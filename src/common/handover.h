/* SPDX-License-Identifier: MIT */
/* The control socket through which a starting gslbd takes over the
 * listening sockets and the store lock of a running one (gslbd --replace).
 *
 * The running daemon listens on a Unix SOCK_SEQPACKET socket, gslbd.ctl in
 * its database directory, and accepts only peers of its own user or root.
 * The exchange, one message each:
 *
 *   new -> old   "replace PID"
 *   old -> new   "fds N", then the N descriptors (SCM_RIGHTS, in chunks)
 *   new -> old   "serving"       (the new workers read the sockets now)
 *   old -> new   "released"      (the old health thread and statistics
 *                                 endpoint have stopped)
 *
 * Both processes then hold the same open sockets: a datagram or a
 * connection queued in one of them is read by whichever process reads
 * first, so nothing queued is lost while the old one stops reading.
 * Nothing here knows about DNS; the functions block only where said. */
#ifndef GSLB_HANDOVER_H
#define GSLB_HANDOVER_H

#include <stddef.h>

/** File name of the control socket inside the database directory. */
#define HANDOVER_NAME "gslbd.ctl"

/** Longest message of the exchange, with its terminating NUL. */
#define HANDOVER_MSG_MAX 64

/** Binds and listens on DIR/gslbd.ctl (a stale file from a daemon that
 * is gone is replaced; the caller holds the store lock), mode 0600,
 * non-blocking.  Returns the listening fd, or -1 with the reason in
 * @err. */
int handover_listen(const char *dir, char *err, size_t errlen);

/** Removes DIR/gslbd.ctl (at the exit of the daemon that owns it). */
void handover_unlink(const char *dir);

/** Connects to DIR/gslbd.ctl (blocking).  Returns the fd, or a negative
 * errno (-ENOENT, -ECONNREFUSED: nothing listens there) with the
 * reason in @err. */
int handover_connect(const char *dir, char *err, size_t errlen);

/** Accepts a peer on listening socket @lfd and checks that it runs as our
 * user or as root.  Returns the connected fd (blocking), or -1 with the
 * reason in @err (nothing to accept, or a refused peer). */
int handover_accept(int lfd, char *err, size_t errlen);

/** Sends the text message @msg on @fd.  Returns 0 or -errno. */
int handover_send(int fd, const char *msg);

/** Receives one text message into @msg (@len bytes, NUL-terminated),
 * waiting at most @timeout_ms.  Returns its length, 0 when the peer
 * closed, or -errno (-ETIMEDOUT). */
int handover_recv(int fd, char *msg, size_t len, int timeout_ms);

/** Sends "fds N" and the @n descriptors @fds (which stay ours).
 * Returns 0 or -errno. */
int handover_send_fds(int fd, const int *fds, size_t n);

/** Receives what handover_send_fds() sent, waiting at most @timeout_ms
 * for each message.  Returns the number of descriptors (close-on-exec,
 * owned by the caller, in *@out, an array to free()), or -errno with the
 * reason in @err. */
int handover_recv_fds(int fd, int **out, int timeout_ms, char *err,
                      size_t errlen);

#endif
