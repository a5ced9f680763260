/* SPDX-License-Identifier: MIT */
/* Between the files of store/apply.h (apply.c, apply_area.c). */
#ifndef GSLB_STORE_APPLY_INT_H
#define GSLB_STORE_APPLY_INT_H

#include "store/apply.h"

/** Fills @e with class @cls, key @field (NULL: none) and the text;
 * returns @cls. */
int wdb__apply_fail(wdb_apply_err_t *e, int cls, const char *field,
                    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
