/* SPDX-License-Identifier: MIT */
/* Changes shared by gslbctl and the HTTP API (edit.h). */
#include "store/edit.h"

#include <stdio.h>
#include <string.h>

const char *const wdb_admin_set[] = { "auto", "up", "down", "drain", NULL };

int wdb_node_admin(json_t *n, const char *opt, const char *admin, int64_t now,
                   double settle, char *err, size_t errlen)
{
	const char *a = NULL;
	for (const char *const *s = wdb_admin_set; *s && admin; s++)
		if (strcmp(admin, *s) == 0)
			a = *s;
	if (!a) {
		snprintf(err, errlen, "%s %s: not a valid choice", opt, admin ? admin : "");
		return -1;
	}
	const char *was = json_string_value(json_object_get(n, "admin"));
	if (!was || strcmp(was, a) != 0)
		/* S0-11, S1-8: answers of its rows carry the short TTL while
		 * the change settles. */
		json_object_set_new(n, "short_until", json_integer(now + (json_int_t)settle));
	json_object_set_new(n, "admin", json_string(a));
	return 0;
}
