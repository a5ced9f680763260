/* SPDX-License-Identifier: MIT */
/* Making the store equal to a table document (gslbctl apply, the HTTP
 * API's POST /v1/apply) or creating and replacing one object of it (the
 * API's PUT): the checks of every object, of the references between
 * them and of the names of regions and ISPs, the difference from the
 * store and its write.  One code path, so that gslbctl and the API
 * refuse the same input with the same text.
 *
 * Every check returns WDB_EDIT_OK (0) or the class of the fault
 * (store/edit.h: WDB_EDIT_BAD for input that is wrong in itself,
 * WDB_EDIT_REFUSED for a guard, WDB_EDIT_STORE for a failed write)
 * with the text, worded as gslbctl apply prints it after "gslbctl: ",
 * and the key at fault, in a wdb_apply_err_t.
 *
 * The value checks of keys that rooms above the store own (a release,
 * steering, score weights, probes) call those rooms' parsers: this file
 * is the one place of store/ that includes them (store/README.md). */
#ifndef GSLB_STORE_APPLY_H
#define GSLB_STORE_APPLY_H

#include <jansson.h>
#include <stddef.h>

#include "common/conf.h"
#include "store/edit.h"
#include "store/weightdb.h"

/** The highest price per GB a node may have (cost_per_gb). */
#define WDB_COST_PER_GB_MAX 1e6

/** The highest weight of one term of a service's steer_weights. */
#define WDB_WEIGHT_TERM_MAX 100.0

/** A service's all-down modes, a node's pools, a service's steering
 * modes and steering policies: each NULL-terminated. */
extern const char *const wdb_all_down_set[];
extern const char *const wdb_pool_set[];
extern const char *const wdb_steering_set[];
extern const char *const wdb_policy_set[];

/** Why a check failed. */
typedef struct wdb_apply_err {
	int cls;                   /* a WDB_EDIT_ class, 0 when none */
	char field[128];           /* the key at fault, "" when none */
	char msg[1600];            /* the text, as gslbctl apply prints it */
} wdb_apply_err_t;

/** What the checks take from their caller. */
typedef struct wdb_apply_opts {
	const conf_t *conf;        /* the zones service names must be in and
	                            * whether geoip settings are known; NULL:
	                            * neither is checked */
	double probe_interval;     /* health.interval and health.timeout, */
	double probe_timeout;      /* the defaults of a node's probes */
	int allow_special;         /* addresses no client can use pass */
	int allow_unknown_location;/* a region or ISP no client is in passes */
} wdb_apply_opts_t;

/** The region [0] and ISP [1] names known (keys of two objects): those
 * of the store's nodes and rows, and those a client can be located in
 * (@ngeo of them from the geoip sources). */
typedef struct wdb_area_known {
	json_t *names[2];
	unsigned ngeo;
} wdb_area_known_t;

/** Whether @s is a node's id: 1 to 63 letters, digits and "-_.". */
int wdb_node_id_ok(const char *s);

/** Whether @s is a region or ISP name: a short lowercase word, the
 * names a client is located in ("*", the wildcard of weight rows, only
 * when @star_ok). */
int wdb_area_word_ok(const char *s, int star_ok);

/** Whether @v is one of the NULL-terminated @set. */
int wdb_in_set(const char *v, const char *const *set);

/** Checks service name @name: a valid DNS name, inside one of the zones
 * of @conf (when not NULL) and not a zone's apex.  Writes its canonical
 * form (lowercase, no final dot) to @out.  Returns 0 or WDB_EDIT_BAD
 * with "service name 'NAME' is ..." in @e. */
int wdb_service_name(const conf_t *conf, const char *name, char *out,
                     size_t size, wdb_apply_err_t *e);

/** Checks address @addr of node @id against the addresses @addrs (a
 * JSON list, the node's others): refused unless @allow when no client
 * can use it (net_addr_special()), and when given twice.  Returns 0 or
 * WDB_EDIT_BAD with the text in @e. */
int wdb_node_addr_check(const char *id, const char *addr, json_t *addrs,
                        int allow, wdb_apply_err_t *e);

/** Whether @w is a whole steer_weights object: every term a number from
 * 0 to WDB_WEIGHT_TERM_MAX, the sum above 0. */
int wdb_steer_weights_ok(json_t *w);

/** Checks object @o, the @idx-th of list @kind (WDB_SERVICE, WDB_NODE or
 * WDB_WEIGHT) of a document, and fills in the defaults of the keys it
 * leaves out; its store key goes to @key.  Returns 0 or WDB_EDIT_BAD. */
int wdb_apply_check(const wdb_apply_opts_t *op, wdb_kind_t kind, json_t *o,
                    size_t idx, char *key, size_t keysize, wdb_apply_err_t *e);

/** Reads document @doc (not changed) into @want (kind -> {store key:
 * object}, new objects for the caller), each object checked
 * (wdb_apply_check()) and the references between them
 * (wdb_apply_check_refs()); @file names the document in the texts.
 * On error nothing is left in @want. */
int wdb_apply_read(const wdb_apply_opts_t *op, json_t *doc, const char *file,
                   json_t *want[3], wdb_apply_err_t *e);

/** Each weight row of @want names a service and nodes of @want: else
 * WDB_EDIT_REFUSED naming the first row that would not build. */
int wdb_apply_check_refs(json_t *want[3], const char *file, wdb_apply_err_t *e);

/** The store's table as documents hold it: @have (kind -> {key:
 * object}), new objects for the caller. */
void wdb_apply_have(wdb_txn_t *t, json_t *have[3]);

/** Starts @k with the region and ISP names of the store's nodes and
 * rows in @t (ngeo 0); the caller adds the geoip sources' names. */
void wdb_area_known_init(wdb_txn_t *t, wdb_area_known_t *k);

/** Frees the names of @k. */
void wdb_area_known_free(wdb_area_known_t *k);

/** Checks region (@isp 0) or ISP (@isp 1) name @v that command @cmd
 * gives against @k: "*" and known names pass; an unknown name passes
 * with a warning appended to @warnings (a JSON list) when the geoip
 * settings are not known (@op->conf NULL) or name nothing, or when
 * allow_unknown_location; else WDB_EDIT_BAD with the known names
 * nearest to it as the hint. */
int wdb_area_check(const wdb_apply_opts_t *op, const wdb_area_known_t *k,
                   const char *cmd, int isp, const char *v, json_t *warnings,
                   wdb_apply_err_t *e);

/** The regions and ISPs of the nodes and rows @diff adds or changes
 * (from @want) are names clients are located in (wdb_area_check()),
 * nodes only when the geoip sources name any; what @diff leaves as it
 * is passes unchecked.  Warnings go to @warnings. */
int wdb_apply_check_areas(const wdb_apply_opts_t *op, const wdb_area_known_t *k,
                          const char *file, json_t *diff, json_t *want[3],
                          json_t *warnings, wdb_apply_err_t *e);

/** Makes the store in @t equal to @want by @diff (wdb_table_diff() of
 * the store's table and @want): the rows go before the nodes and
 * services they name, and come after them.  Returns 0, or
 * WDB_EDIT_STORE with "writing KEY: reason; nothing was changed" (the
 * caller aborts @t; a full store @db is worded with its map size). */
int wdb_apply_write(weightdb_t *db, wdb_txn_t *t, json_t *diff,
                    json_t *want[3], wdb_apply_err_t *e);

#endif
