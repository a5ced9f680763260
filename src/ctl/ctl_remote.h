/* SPDX-License-Identifier: MIT */
/* gslbctl --server: a command run by a remote gslbd (ctl_remote.c). */
#ifndef GSLB_CTL_REMOTE_H
#define GSLB_CTL_REMOTE_H

#include "ctl/ctl.h"

/** Runs command @argv (@argc words, the command first) on the gslbd at
 * @server (https://HOST:PORT) through POST /v1/run, with the token in
 * file @token_file and, when not NULL, the CA certificates of @cacert;
 * @pre: the global options to pass on (NULL-terminated).  Prints the
 * command's output and returns its exit status; dies with 1 when the
 * request fails. */
int ctl_remote_run(const char *server, const char *token_file, const char *cacert,
                   int argc, char **argv, const char *const *pre);

#endif
