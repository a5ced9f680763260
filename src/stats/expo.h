/* SPDX-License-Identifier: MIT */
/* The Prometheus text exposition format (version 0.0.4): a growing text
 * buffer with one call per family header and one per sample, so that the
 * metric code says what it exports and this file alone knows the syntax
 * (escaping of help text and label values, float formatting).
 *
 * Not for the query path: it allocates.  One expo_t per scrape, used by
 * one thread. */
#ifndef GSLB_EXPO_H
#define GSLB_EXPO_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

typedef struct expo {
	char *buf;                /* NUL-terminated text; owned */
	size_t len, cap;
} expo_t;

typedef enum { EXPO_COUNTER, EXPO_GAUGE, EXPO_HISTOGRAM } expo_type_t;

/** Starts an empty buffer. */
void expo_init(expo_t *e);

/** Frees the buffer. */
void expo_free(expo_t *e);

/** Writes the "# HELP" and "# TYPE" lines of family @name. */
void expo_family(expo_t *e, const char *name, expo_type_t type,
                 const char *help);

/** Writes one sample of @name with @nlabels label pairs (@labels holds
 * name, value, name, value, ...; values are escaped here). */
void expo_sample(expo_t *e, const char *name, const char *const *labels,
                 size_t nlabels, double value);

/** The same for a counter or integer gauge, printed exactly. */
void expo_sample_u64(expo_t *e, const char *name, const char *const *labels,
                     size_t nlabels, uint64_t value);

/** Reads the exposition text @text (what a scrape of /metrics returns)
 * into a new JSON array of families, in their order: each an object
 * {name, type, help, samples}, a sample {name, labels: {name: value},
 * value}, the value an integer when the text is one, a real otherwise,
 * and "NaN", "+Inf" or "-Inf" as strings.  Histogram series (_bucket,
 * _sum, _count) belong to their family.  Returns NULL with "line N:
 * reason" in @err when the text is not in the format.  The caller owns
 * the result. */
json_t *expo_parse(const char *text, char *err, size_t errlen);

#endif
