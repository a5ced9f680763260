/* SPDX-License-Identifier: MIT */
/* The steer section of gslbd.conf, read into the engine's settings. */
#ifndef GSLB_STEER_CONF_H
#define GSLB_STEER_CONF_H

#include <stddef.h>

#include "common/conf.h"
#include "steer/steer.h"

/** Reads the steer section of @c into @o, with the defaults of
 * gslbd.conf(5) for what it does not say (all of them when it is
 * absent).  Returns 0, or -1 with "FILE:LINE: reason" in @err. */
int steer_conf_load(const conf_t *c, steer_conf_t *o, char *err,
                    size_t errlen);

#endif
