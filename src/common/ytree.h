/* SPDX-License-Identifier: MIT */
/* A YAML document read with libyaml into a small tree that remembers the
 * line of every node, so that configuration errors can name file and line.
 * Anchors, aliases and tags are rejected: configuration stays plain. */
#ifndef GSLB_YTREE_H
#define GSLB_YTREE_H

#include <stddef.h>

typedef enum { YNODE_SCALAR, YNODE_SEQ, YNODE_MAP } ynode_kind_t;

typedef struct ynode ynode_t;
struct ynode {
	ynode_kind_t kind;
	int line;          /* 1-based line in the file */
	char *value;       /* scalar text (YNODE_SCALAR) */
	int quoted;        /* the scalar was quoted: never a null or bool */
	size_t n;          /* children: items of a sequence, pairs of a map */
	ynode_t **keys;    /* map keys (scalars), n of them */
	ynode_t **items;   /* sequence items or map values, n of them */
};

/** Reads @path.  On success returns the root node (owned by the caller,
 * free with ynode_free); on failure returns NULL and writes
 * "FILE:LINE: reason" into @err. */
ynode_t *yaml_load_file(const char *path, char *err, size_t errlen);

/** The same for a string in memory; @name is used in messages. */
ynode_t *yaml_load_string(const char *text, size_t len, const char *name,
                          char *err, size_t errlen);

/** Value of @key in map @map, or NULL. */
ynode_t *ynode_get(const ynode_t *map, const char *key);

void ynode_free(ynode_t *n);

#endif
