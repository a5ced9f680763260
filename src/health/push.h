/* SPDX-License-Identifier: MIT */
/* The language of `gslbctl metrics push`: one push (its words, as on
 * gslbctl's command line or one line of `--file`) validated and written
 * into a store transaction.  Health metrics (S1-2) go into the node's
 * metrics record, steering inputs (S3-2) into its input records per
 * region and ISP, spend (S3-6) into the provider's record of the period.
 *
 * gslbctl calls it for a push in standalone mode; in cluster mode every
 * gslbd's watch calls it again for the pushes that gslbctl put into etcd
 * (cluster/feed.h), so that a push reaches every instance's store through
 * the same code, with the same time and retention.
 *
 * Thread safety: none of its own; the transaction's rules apply. */
#ifndef GSLB_HEALTH_PUSH_H
#define GSLB_HEALTH_PUSH_H

#include <stddef.h>
#include <stdint.h>

#include "store/weightdb.h"

/* The longest region or ISP name a push may give, with the final NUL:
 * GEO_NAME_MAX of gslb/geo.h (which health/ may not include), the
 * longest name a client can be located in. */
#define PUSH_WORD_MAX 32

/* The longest feeder name of --from, with the final NUL, and the name
 * of a push that gives none. */
#define PUSH_FROM_MAX 64
#define PUSH_FROM_DEFAULT "push"

/* The most words one push may have (one line of --file). */
#define PUSH_MAX_WORDS 64

/** Whether @s is a region, ISP or provider name: a short lowercase word
 * of letters, digits and "-_.", below PUSH_WORD_MAX; "*" only when
 * @star_ok (the wildcard of weight rows). */
int push_valid_word(const char *s, int star_ok);

/** A number @v of option or key @what of command @cmd in [@lo, @hi] into
 * *@out.  Returns 0, or GSLB_EINVAL with "CMD: WHAT V: give a number
 * from LO to HI" in @err.  gslbctl's other steering options use it too. */
int push_parse_real(const char *cmd, const char *what, const char *v, double lo,
                    double hi, double *out, char *err, size_t errlen);

/** A time @v of option @opt of command @cmd, RFC 3339 (with Z or an
 * offset) or unix seconds, into *@out.  Returns 0, or GSLB_EINVAL with
 * the reason in @err. */
int push_parse_time(const char *cmd, const char *opt, const char *v, uint32_t *out,
                    char *err, size_t errlen);

/** The words of push line @line (a JSON array of strings, as gslbctl's
 * cluster pushes and the pull sources carry them) into @argv after
 * argv[0] "push", at most @max entries in all; the strings are
 * borrowed from @line.  Returns the count. */
int push_words(json_t *line, char **argv, int max);

/** Validates and applies one push into @t.  @argv[1..@argc) are its
 * words (argv[0], "push", is not read; nothing is modified): a node and
 * KEY=VALUE health metrics, or a node with success=, latency=, bytes=,
 * --region, --isp and --at, or --provider NAME [--at] spent=; health
 * metrics and steering inputs may name their feeder with --from NAME
 * (default "push"), kept beside them for explain and steer show.  @now is
 * the time of the push: the time of health metrics, the default of --at
 * and the clock every sample is checked and kept against; @keep how long
 * steering samples are kept, in seconds (steer_conf_keep()), @skew how
 * far ahead of @now --at may be (steer clock-skew).  A sample dated
 * beyond the skew, or success= or latency= older than @keep, is
 * refused (S2-7, S3-9): it would blind the windows or never count; a
 * spend may be of a past period, never of a future one.  Returns
 * 0 with what was stored in @msg, or GSLB_EINVAL with the error in @err
 * (the message gslbctl prints) and nothing written into @t, or the
 * store's error when a write failed. */
int push_apply(wdb_txn_t *t, int argc, char *const *argv, uint32_t now,
               double keep, double skew, char *msg, size_t msize, char *err,
               size_t errlen);

/** push_apply(), and on an error the index in @argv of the word it is
 * about into *@word: the node, an option's value or a KEY=VALUE; 0 when
 * it is about the push as a whole (a missing input).  The HTTP API names
 * the sample's field at fault from it (api/api_metrics.c). */
int push_apply_word(wdb_txn_t *t, int argc, char *const *argv, uint32_t now,
                    double keep, double skew, char *msg, size_t msize, char *err,
                    size_t errlen, int *word);

#endif
