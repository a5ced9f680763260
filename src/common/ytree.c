/* SPDX-License-Identifier: MIT */
/* libyaml event stream -> ynode_t tree with line numbers. */
#include "common/ytree.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

static void add_child(ynode_t *parent, ynode_t *key, ynode_t *item)
{
	parent->keys = xrealloc(parent->keys, (parent->n + 1) * sizeof(*parent->keys));
	parent->items = xrealloc(parent->items, (parent->n + 1) * sizeof(*parent->items));
	parent->keys[parent->n] = key;
	parent->items[parent->n] = item;
	parent->n++;
}

/* Builds the node that starts with event @ev (already parsed). */
static ynode_t *build(yaml_parser_t *p, yaml_event_t *ev, const char *name,
                      char *err, size_t errlen, int depth)
{
	ynode_t *n = xcalloc(1, sizeof(*n));
	n->line = (int)ev->start_mark.line + 1;
	if (depth > 32) {
		snprintf(err, errlen, "%s:%d: nesting too deep", name, n->line);
		free(n);
		return NULL;
	}
	switch (ev->type) {
	case YAML_SCALAR_EVENT:
		n->kind = YNODE_SCALAR;
		n->value = xmemdup(ev->data.scalar.value, ev->data.scalar.length + 1);
		n->quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE;
		return n;
	case YAML_ALIAS_EVENT:
		snprintf(err, errlen, "%s:%d: aliases are not supported", name, n->line);
		free(n);
		return NULL;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT: {
		int is_map = ev->type == YAML_MAPPING_START_EVENT;
		n->kind = is_map ? YNODE_MAP : YNODE_SEQ;
		for (;;) {
			yaml_event_t e;
			if (!yaml_parser_parse(p, &e)) {
				snprintf(err, errlen, "%s:%zu: %s", name,
				         p->problem_mark.line + 1,
				         p->problem ? p->problem : "syntax error");
				ynode_free(n);
				return NULL;
			}
			if (e.type == YAML_SEQUENCE_END_EVENT ||
			    e.type == YAML_MAPPING_END_EVENT) {
				yaml_event_delete(&e);
				return n;
			}
			ynode_t *key = NULL;
			if (is_map) {
				key = build(p, &e, name, err, errlen, depth + 1);
				yaml_event_delete(&e);
				if (!key) {
					ynode_free(n);
					return NULL;
				}
				if (key->kind != YNODE_SCALAR) {
					snprintf(err, errlen, "%s:%d: map keys must be plain words",
					         name, key->line);
					ynode_free(key);
					ynode_free(n);
					return NULL;
				}
				for (size_t i = 0; i < n->n; i++)
					if (strcmp(n->keys[i]->value, key->value) == 0) {
						snprintf(err, errlen, "%s:%d: duplicate key '%s'",
						         name, key->line, key->value);
						ynode_free(key);
						ynode_free(n);
						return NULL;
					}
				if (!yaml_parser_parse(p, &e)) {
					snprintf(err, errlen, "%s:%zu: %s", name,
					         p->problem_mark.line + 1,
					         p->problem ? p->problem : "syntax error");
					ynode_free(key);
					ynode_free(n);
					return NULL;
				}
			}
			ynode_t *item = build(p, &e, name, err, errlen, depth + 1);
			yaml_event_delete(&e);
			if (!item) {
				ynode_free(key);
				ynode_free(n);
				return NULL;
			}
			add_child(n, key, item);
		}
	}
	default:
		snprintf(err, errlen, "%s:%d: unexpected YAML event", name, n->line);
		free(n);
		return NULL;
	}
}

static ynode_t *load(yaml_parser_t *p, const char *name, char *err, size_t errlen)
{
	ynode_t *root = NULL;
	int done = 0;
	while (!done) {
		yaml_event_t e;
		if (!yaml_parser_parse(p, &e)) {
			snprintf(err, errlen, "%s:%zu: %s", name,
			         p->problem_mark.line + 1,
			         p->problem ? p->problem : "syntax error");
			ynode_free(root);
			return NULL;
		}
		switch (e.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_SCALAR_EVENT:
		case YAML_SEQUENCE_START_EVENT:
		case YAML_MAPPING_START_EVENT:
		case YAML_ALIAS_EVENT:
			if (root) {
				snprintf(err, errlen, "%s:%zu: only one YAML document is allowed",
				         name, e.start_mark.line + 1);
				yaml_event_delete(&e);
				ynode_free(root);
				return NULL;
			}
			root = build(p, &e, name, err, errlen, 0);
			if (!root) {
				yaml_event_delete(&e);
				return NULL;
			}
			break;
		default:
			break;
		}
		yaml_event_delete(&e);
	}
	if (!root) {
		snprintf(err, errlen, "%s:1: empty document", name);
		return NULL;
	}
	return root;
}

ynode_t *yaml_load_string(const char *text, size_t len, const char *name,
                          char *err, size_t errlen)
{
	yaml_parser_t p;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
	ynode_t *root = load(&p, name, err, errlen);
	yaml_parser_delete(&p);
	return root;
}

ynode_t *yaml_load_file(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	yaml_parser_t p;
	yaml_parser_initialize(&p);
	yaml_parser_set_input_file(&p, f);
	ynode_t *root = load(&p, path, err, errlen);
	yaml_parser_delete(&p);
	fclose(f);
	return root;
}

ynode_t *ynode_get(const ynode_t *map, const char *key)
{
	if (!map || map->kind != YNODE_MAP)
		return NULL;
	for (size_t i = 0; i < map->n; i++)
		if (strcmp(map->keys[i]->value, key) == 0)
			return map->items[i];
	return NULL;
}

void ynode_free(ynode_t *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++) {
		ynode_free(n->keys[i]);
		ynode_free(n->items[i]);
	}
	free(n->keys);
	free(n->items);
	free(n->value);
	free(n);
}
