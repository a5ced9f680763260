/* SPDX-License-Identifier: MIT */
/* Numbers from text with their range and unit: the one reader of the
 * numbers of gslbd.conf, gslbctl's options and the push language
 * (durations, percentages, points, bytes).  Each caller words its own
 * error, naming what is wrong; this says only which kind it is. */
#ifndef GSLB_NUM_H
#define GSLB_NUM_H

#define NUM_WHOLE   1u  /* digits only (after a '-' when the range goes
                           below 0): no point, exponent, '+' or blank */
#define NUM_LO_OPEN 2u  /* the low end itself is out of range */
#define NUM_HI_OPEN 4u  /* the high end itself is out of range */

#define NUM_ESYNTAX (-1) /* not a number, or a unit that is not allowed */
#define NUM_ERANGE  (-2) /* a number out of the range */

/** What a number may be.  The range applies to the value in the base
 * unit (the number times its unit's scale). */
typedef struct {
	double lo, hi;
	unsigned flags;             /* NUM_* */
	const char *const *units;   /* the suffixes allowed right after the
	                               number, NULL-terminated; NULL: none */
	const double *scale;        /* the base units in one of each unit
	                               (NULL: 1 each) */
} num_range_t;

/** Reads @s: a number, then nothing or exactly one of r->units.
 * Returns 0 with the value in the base unit in *@out and the index of
 * the unit in *@unit (-1 for none; @unit may be NULL), NUM_ESYNTAX or
 * NUM_ERANGE (*@out is then left alone). */
int num_parse(const char *s, const num_range_t *r, double *out, int *unit);

#endif
