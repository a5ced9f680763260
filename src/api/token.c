/* SPDX-License-Identifier: MIT */
/* The HTTP API's tokens (token.h). */
#include "api/token.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <stdio.h>
#include <string.h>

static const char *const role_names[] = { "none", "read", "operate", "admin" };

api_role_t api_role_parse(const char *s)
{
	for (int r = API_ROLE_READ; r <= API_ROLE_ADMIN; r++)
		if (s && strcmp(s, role_names[r]) == 0)
			return (api_role_t)r;
	return API_ROLE_NONE;
}

const char *api_role_name(api_role_t r)
{
	return r <= API_ROLE_ADMIN ? role_names[r] : "none";
}

int api_token_name_ok(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > API_TOKEN_NAME_MAX)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '-' || *s == '_' || *s == '.'))
			return 0;
	return 1;
}

static void hex(const unsigned char *b, size_t n, char *out)
{
	static const char d[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = d[b[i] >> 4];
		out[2 * i + 1] = d[b[i] & 15];
	}
	out[2 * n] = 0;
}

int api_token_make(char *out)
{
	unsigned char b[32];
	if (RAND_bytes(b, sizeof(b)) != 1)
		return -1;
	memcpy(out, API_TOKEN_PREFIX, strlen(API_TOKEN_PREFIX));
	hex(b, sizeof(b), out + strlen(API_TOKEN_PREFIX));
	OPENSSL_cleanse(b, sizeof(b));
	return 0;
}

void api_token_hash(const char *tok, char *out)
{
	unsigned char md[32];
	unsigned len = 0;
	if (EVP_Digest(tok, strlen(tok), md, &len, EVP_sha256(), NULL) != 1 ||
	    len != sizeof(md))
		memset(md, 0, sizeof(md));
	hex(md, sizeof(md), out);
}

json_t *api_token_record(const char *tok, api_role_t role, int64_t created,
                         int64_t expires)
{
	char h[65];
	api_token_hash(tok, h);
	return json_pack("{s:s, s:s, s:I, s:I}", "role", api_role_name(role),
	                 "hash", h, "created", (json_int_t)created,
	                 "expires", (json_int_t)expires);
}

typedef struct {
	char hash[65];
	char name[API_TOKEN_NAME_MAX + 1];
	json_t *rec;
} find_t;

static int each_token(const char *key, json_t *val, void *arg)
{
	find_t *f = arg;
	const char *h = json_string_value(json_object_get(val, "hash"));
	/* Every record is compared, and each in constant time. */
	int same = h && strlen(h) == 64 && CRYPTO_memcmp(h, f->hash, 64) == 0;
	if (same && !f->rec) {
		f->rec = json_incref(val);
		snprintf(f->name, sizeof(f->name), "%s", key);
	}
	return 0;
}

api_role_t api_token_find(wdb_txn_t *t, const char *tok, int64_t now,
                          char *name, char *why, size_t whylen)
{
	find_t f = { .rec = NULL };
	api_token_hash(tok, f.hash);
	wdb_each(t, WDB_APITOKEN, NULL, each_token, &f);
	if (!f.rec) {
		snprintf(why, whylen, "unknown token");
		return API_ROLE_NONE;
	}
	api_role_t r = api_role_parse(json_string_value(json_object_get(f.rec, "role")));
	json_int_t exp = json_integer_value(json_object_get(f.rec, "expires"));
	if (json_integer_value(json_object_get(f.rec, "revoked"))) {
		snprintf(why, whylen, "token %s revoked", f.name);
		r = API_ROLE_NONE;
	} else if (exp && exp <= now) {
		snprintf(why, whylen, "token %s expired", f.name);
		r = API_ROLE_NONE;
	}
	json_decref(f.rec);
	snprintf(name, API_TOKEN_NAME_MAX + 1, "%s", f.name);
	return r;
}
