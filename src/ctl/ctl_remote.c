/* SPDX-License-Identifier: MIT */
/* gslbctl --server URL: the command runs on a remote gslbd through its
 * HTTP API (POST /v1/run), which runs its own gslbctl on its own
 * configuration and store as the token's user; the answer's output and
 * exit status are printed and returned as they came, so the command
 * reads the same either way.  A file the command would read (apply
 * FILE, metrics push --file FILE) is read here and sent as the
 * command's standard input, the argument becoming "-".  Errors of the
 * request itself (connection, TLS, the API's 4xx and 5xx) print one
 * line and exit 1. */
#include "ctl/ctl_remote.h"
#include "common/util.h"

#include <curl/curl.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The server stops a command after its api.run-timeout (at most an
 * hour); this leaves it time to say so. */
#define REMOTE_TIMEOUT (3600 + 60)
#define REMOTE_CONNECT_TIMEOUT 10
#define REMOTE_MAX_TOKEN 4096

typedef struct {
	char *b;
	size_t len;
} rbuf_t;

static size_t on_body(char *p, size_t size, size_t n, void *arg)
{
	rbuf_t *b = arg;
	size_t len = size * n;
	b->b = xrealloc(b->b, b->len + len + 1);
	memcpy(b->b + b->len, p, len);
	b->len += len;
	b->b[b->len] = 0;
	return len;
}

/* The whole of @f into a new string (its length in *@len); NULL with
 * errno on a read error. */
static char *read_all(FILE *f, size_t *len)
{
	rbuf_t b = { xmalloc(1), 0 };
	char chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		on_body(chunk, 1, n, &b);
	if (ferror(f)) {
		free(b.b);
		return NULL;
	}
	b.b[b.len] = 0;
	*len = b.len;
	return b.b;
}

/* The token in file @path: its first line, without the white space
 * around it.  Never from the command line, where other users see it. */
static char *read_token(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		ctl_die("--token-file %s: %s", path, strerror(errno));
	char buf[REMOTE_MAX_TOKEN + 2];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	buf[strcspn(buf, "\r\n")] = 0;
	char *s = buf;
	while (*s == ' ' || *s == '\t')
		s++;
	size_t l = strlen(s);
	while (l && (s[l - 1] == ' ' || s[l - 1] == '\t'))
		s[--l] = 0;
	if (!l)
		ctl_die("--token-file %s: no token in it", path);
	return xstrdup(s);
}

/* The index in @argv (@argc words, the command first) of the argument
 * that names a file the command reads, or -1. */
static int file_arg(int argc, char **argv)
{
	if (strcmp(argv[0], "apply") == 0) {
		for (int i = 1; i < argc; i++)
			if (strncmp(argv[i], "--", 2) != 0)
				return i;
	} else if (strcmp(argv[0], "metrics") == 0 && argc > 3 &&
	           strcmp(argv[1], "push") == 0 && strcmp(argv[2], "--file") == 0) {
		return 3;
	}
	return -1;
}

/* The request's body: the words to run (@pre, the global options the
 * command keeps, then @argv), --json, and the file the command reads
 * as its standard input. */
static json_t *request_body(int argc, char **argv, const char *const *pre)
{
	json_t *words = json_array();
	for (const char *const *p = pre; *p; p++)
		json_array_append_new(words, json_string(*p));
	int fi = file_arg(argc, argv);
	json_t *body = json_pack("{s:o, s:b}", "argv", words, "json", ctl_json);
	for (int i = 0; i < argc; i++) {
		json_t *w = json_string(argv[i]);
		if (!w)
			ctl_die("argument '%s' is not UTF-8 text", argv[i]);
		json_array_append_new(words, i == fi ? json_string("-") : w);
		if (i == fi)
			json_decref(w);
	}
	if (fi < 0)
		return body;
	const char *path = argv[fi];
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	/* The texts gslbctl gives when it cannot read the file itself. */
	if (!f && strcmp(argv[0], "apply") == 0)
		ctl_die("apply: unable to open %s: %s", path, strerror(errno));
	if (!f)
		ctl_die("metrics push --file %s: %s", path, strerror(errno));
	size_t len;
	char *text = read_all(f, &len);
	int e = errno;
	if (f != stdin)
		fclose(f);
	if (!text)
		ctl_die("%s: %s", path, strerror(e));
	json_t *in = json_stringn(text, len);
	free(text);
	if (!in)
		ctl_die("%s: not UTF-8 text", f == stdin ? "stdin" : path);
	json_object_set_new(body, "stdin", in);
	if (f != stdin)
		json_object_set_new(body, "stdin_name", json_string(path));
	return body;
}

/* The error text of an API answer @b (its "error"), or the body. */
static const char *error_text(json_t *j, const rbuf_t *b)
{
	const char *e = json_string_value(json_object_get(j, "error"));
	return e ? e : b->len ? b->b : "(no answer)";
}

int ctl_remote_run(const char *server, const char *token_file, const char *cacert,
                   int argc, char **argv, const char *const *pre)
{
	char *token = read_token(token_file);
	json_t *body = request_body(argc, argv, pre);
	char *text = json_dumps(body, JSON_COMPACT);
	json_decref(body);
	if (!text)
		ctl_die("cannot encode the request as JSON");
	char url[2100], auth[REMOTE_MAX_TOKEN + 40], cerr[CURL_ERROR_SIZE] = "";
	size_t sl = strlen(server);
	while (sl && server[sl - 1] == '/')
		sl--;
	snprintf(url, sizeof(url), "%.*s/v1/run", (int)sl, server);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
	memset(token, 0, strlen(token));
	free(token);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != 0)
		ctl_die("--server: cannot initialise libcurl");
	CURL *c = curl_easy_init();
	if (!c)
		ctl_die("--server: cannot initialise libcurl");
	struct curl_slist *h = curl_slist_append(NULL, auth);
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Expect:");
	memset(auth, 0, sizeof(auth));
	rbuf_t b = { NULL, 0 };
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, text);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(text));
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)REMOTE_TIMEOUT);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)REMOTE_CONNECT_TIMEOUT);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	if (cacert)
		curl_easy_setopt(c, CURLOPT_CAINFO, cacert);
	CURLcode rc = curl_easy_perform(c);
	long status = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	curl_global_cleanup();
	free(text);
	if (rc != CURLE_OK)
		ctl_die("--server %s: %s", server, *cerr ? cerr : curl_easy_strerror(rc));
	json_t *j = b.b ? json_loadb(b.b, b.len, 0, NULL) : NULL;
	if (status != 200) {
		fprintf(stderr, "gslbctl: --server %s: HTTP %ld: %s\n", server, status,
		        error_text(j, &b));
		json_decref(j);
		free(b.b);
		ctl_exit(1);
	}
	json_t *out = json_object_get(j, "stdout"), *err = json_object_get(j, "stderr");
	json_t *ex = json_object_get(j, "exit");
	if (!json_is_string(out) || !json_is_string(err) || !json_is_integer(ex))
		ctl_die("--server %s: the answer is no command's result: %.200s", server,
		        b.b ? b.b : "");
	fwrite(json_string_value(out), 1, json_string_length(out), stdout);
	fflush(stdout);
	fwrite(json_string_value(err), 1, json_string_length(err), stderr);
	json_int_t code = json_integer_value(ex);
	json_decref(j);
	free(b.b);
	return code >= 0 && code <= 255 ? (int)code : 1;
}
