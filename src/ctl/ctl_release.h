/* SPDX-License-Identifier: MIT */
/* gslbctl's gray release commands and the views through which status,
 * explain and apply reach them (ctl_release.c, S4-10). */
#ifndef GSLB_CTL_RELEASE_H
#define GSLB_CTL_RELEASE_H

#include "ctl/ctl.h"

/** release start|list|show|pause|resume|abort. */
int ctl_cmd_release(int argc, char **argv);

/** The views of the releases of service @svc ("" or NULL: every
 * service), read in @t, as `release list` shows them: a new array. */
json_t *ctl_releases(wdb_txn_t *t, const char *svc);

/** Prints views of ctl_releases() as the `release list` table. */
void ctl_release_table(json_t *views);

#endif
