/* SPDX-License-Identifier: MIT */
/* POST /v1/run: a gslbctl command run by the daemon as the token's
 * user, so that `gslbctl --server` gives what gslbctl gives on the
 * daemon's machine, word for word (api_int.h).
 *
 * The command is the daemon's own gslbctl binary, started with execv
 * (never a shell) as `gslbctl -c CONF [--json] ARGV...`, CONF being the
 * daemon's configuration (and so its store).  Its standard input is the
 * request's "stdin" (else /dev/null); its standard output and error are
 * read through pipes on the main loop, and the connection waits,
 * suspended, until the command has ended.  Limits (S3-8): API_RUN_MAX
 * commands at once (429 beyond), api.run-timeout seconds each (then the
 * command is killed: 504), API_RUN_MAX_OUTPUT bytes of each output (then
 * it is killed: 502).
 *
 * What the argv may hold: no global option that picks another
 * configuration, store or server, and no name of a file on the daemon's
 * machine (apply and metrics push --file take "-", the file's content
 * coming as "stdin").  Main thread only. */
#include "api/api_int.h"
#include "common/log.h"
#include "common/util.h"
#include "store/command.h"

#include <errno.h>
#include <limits.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

#define API_RUN_MAX 4
/* After the kill, the pipes are given this long to close. */
#define API_RUN_KILL_GRACE 2000      /* milliseconds */
#define API_RUN_MAX_OUTPUT (8u << 20) /* bytes of stdout, and of stderr */
#define API_RUN_MAX_ARGS 128
#define API_RUN_MAX_ARG 4096
#define API_RUN_MAX_NAME 255

typedef struct out_buf {
	char *b;
	size_t len;
	int eof;
} out_buf_t;

struct api_run {
	api_runner_t *rn;
	api_run_t *next;           /* the runner's list */
	uv_process_t proc;
	uv_pipe_t in, out, err;
	uv_timer_t timer;
	uv_write_t wr;
	char *input;
	size_t input_len;
	int has_in;                /* the stdin pipe was made */
	out_buf_t o, e;
	int exited, finished, timed_out, too_big;
	int64_t status;
	int term_signal;
	unsigned handles;          /* handles not closed yet */
	char cmd[64];              /* the command's name, for messages */
	api_run_done_fn done;      /* NULL once cancelled */
	void *arg;
};

struct api_runner {
	uv_loop_t *loop;
	char exe[PATH_MAX];        /* gslbctl; "" when none was found */
	char conf[PATH_MAX];       /* the daemon's configuration */
	api_run_t *runs;
	unsigned n;
	unsigned timeout;          /* seconds */
	size_t max_output;         /* bytes of each output */
	int stopped;
};

/* The gslbctl installed beside this gslbd: in its directory (the build
 * tree, where gslbd and gslbctl are side by side) or in ../bin (an
 * install puts gslbd in PREFIX/sbin and gslbctl in PREFIX/bin). */
static void find_gslbctl(char *out, size_t size)
{
	char self[PATH_MAX], path[PATH_MAX + 32];
	*out = 0;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return;
	self[n] = 0;
	char *slash = strrchr(self, '/');
	if (!slash)
		return;
	*slash = 0;
	static const char *const tries[] = { "%s/gslbctl", "%s/../bin/gslbctl" };
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), tries[i], self);
		char real[PATH_MAX];
		if (access(path, X_OK) == 0 && realpath(path, real)) {
			snprintf(out, size, "%s", real);
			return;
		}
	}
}

api_runner_t *api_runner_new(uv_loop_t *loop, const char *conf_path,
                             unsigned timeout)
{
	api_runner_t *rn = xcalloc(1, sizeof(*rn));
	rn->loop = loop;
	rn->timeout = timeout;
	/* The tests reach the limit with a small one. */
	const char *mo = getenv("GSLBD_TEST_RUN_MAX_OUTPUT");
	rn->max_output = mo && atol(mo) > 0 ? (size_t)atol(mo) : API_RUN_MAX_OUTPUT;
	find_gslbctl(rn->exe, sizeof(rn->exe));
	if (!conf_path || !realpath(conf_path, rn->conf))
		snprintf(rn->conf, sizeof(rn->conf), "%s", conf_path ? conf_path : "");
	if (!*rn->exe)
		log_warning("api: no gslbctl beside this gslbd: POST /v1/run answers 503");
	return rn;
}

static void runner_maybe_free(api_runner_t *rn)
{
	if (rn->stopped && !rn->runs)
		free(rn);
}

static void on_closed(uv_handle_t *h)
{
	api_run_t *run = h->data;
	if (--run->handles)
		return;
	api_runner_t *rn = run->rn;
	for (api_run_t **p = &rn->runs; *p; p = &(*p)->next)
		if (*p == run) {
			*p = run->next;
			break;
		}
	rn->n--;
	free(run->input);
	free(run->o.b);
	free(run->e.b);
	free(run);
	runner_maybe_free(rn);
}

static void close_one(api_run_t *run, uv_handle_t *h)
{
	if (!uv_is_closing(h))
		uv_close(h, on_closed);
}

/* @n bytes of @b as a JSON string, bytes that are no UTF-8 as '?'. */
static json_t *text_json(const char *b, size_t n)
{
	json_t *s = json_stringn(b, n);
	if (s)
		return s;
	char *c = xmalloc(n + 1);
	size_t i = 0;
	while (i < n) {
		unsigned char ch = (unsigned char)b[i];
		size_t len = ch < 0x80 ? 1 : (ch >> 5) == 6 ? 2 : (ch >> 4) == 14 ? 3
		           : (ch >> 3) == 30 ? 4 : 0;
		json_t *one = len && i + len <= n ? json_stringn(b + i, len) : NULL;
		if (one) {
			memcpy(c + i, b + i, len);
			json_decref(one);
			i += len;
		} else {
			c[i++] = '?';
		}
	}
	s = json_stringn(c, n);
	free(c);
	return s ? s : json_string("");
}

/* The command has ended (or is given up on): its answer, then its
 * handles close. */
static void finish(api_run_t *run)
{
	if (run->finished)
		return;
	run->finished = 1;
	api_resp_t r = { 0, NULL, 0, 0 };
	if (run->timed_out) {
		api_error(&r, MHD_HTTP_GATEWAY_TIMEOUT, NULL, "gslbctl %s: no end after "
		          "%u s: stopped (a change it had not committed is not made)",
		          run->cmd, run->rn->timeout);
	} else if (run->too_big) {
		api_error(&r, MHD_HTTP_BAD_GATEWAY, NULL, "gslbctl %s: more than %zu "
		          "bytes of output: stopped (a change it had not committed is "
		          "not made)", run->cmd, run->rn->max_output);
	} else {
		/* Killed by a signal: the shell's convention, 128 + the signal. */
		int64_t code = run->term_signal ? 128 + run->term_signal : run->status;
		r.status = MHD_HTTP_OK;
		r.body = json_pack("{s:I, s:o, s:o}", "exit", (json_int_t)code,
		                   "stdout", text_json(run->o.b ? run->o.b : "", run->o.len),
		                   "stderr", text_json(run->e.b ? run->e.b : "", run->e.len));
	}
	if (run->done)
		run->done(run->arg, &r);
	else
		json_decref(r.body);
	run->done = NULL;
	if (!run->exited)
		uv_process_kill(&run->proc, SIGKILL);
	uv_timer_stop(&run->timer);
	close_one(run, (uv_handle_t *)&run->timer);
	close_one(run, (uv_handle_t *)&run->out);
	close_one(run, (uv_handle_t *)&run->err);
	if (run->has_in)
		close_one(run, (uv_handle_t *)&run->in);
	if (run->exited)
		close_one(run, (uv_handle_t *)&run->proc);
	/* else on_exit closes it, after the kill */
}

static void maybe_done(api_run_t *run)
{
	if (run->exited && run->o.eof && run->e.eof)
		finish(run);
}

static void on_exit_cb(uv_process_t *p, int64_t status, int term_signal)
{
	api_run_t *run = p->data;
	run->exited = 1;
	run->status = status;
	run->term_signal = term_signal;
	if (run->finished)
		close_one(run, (uv_handle_t *)&run->proc);
	else
		maybe_done(run);
}

static void on_grace(uv_timer_t *t)
{
	finish(t->data);
}

static void kill_now(api_run_t *run)
{
	if (!run->exited)
		uv_process_kill(&run->proc, SIGKILL);
	/* The answer waits for the pipes to close, but not for long. */
	uv_timer_start(&run->timer, on_grace, API_RUN_KILL_GRACE, 0);
}

static void on_timeout(uv_timer_t *t)
{
	api_run_t *run = t->data;
	run->timed_out = 1;
	kill_now(run);
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
	static char chunk[65536];   /* main thread only; consumed in on_read */
	(void)h;
	(void)hint;
	*buf = uv_buf_init(chunk, sizeof(chunk));
}

static void on_read(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
	api_run_t *run = s->data;
	out_buf_t *o = s == (uv_stream_t *)&run->out ? &run->o : &run->e;
	if (n < 0) {
		o->eof = 1;
		uv_read_stop(s);
		maybe_done(run);
		return;
	}
	if (n == 0 || run->too_big || run->finished)
		return;
	if (o->len + (size_t)n > run->rn->max_output) {
		run->too_big = 1;
		kill_now(run);
		return;
	}
	o->b = xrealloc(o->b, o->len + (size_t)n + 1);
	memcpy(o->b + o->len, buf->base, (size_t)n);
	o->len += (size_t)n;
	o->b[o->len] = 0;
}

static void on_written(uv_write_t *w, int status)
{
	api_run_t *run = w->data;
	(void)status;   /* a command that reads no input closes it first */
	/* The end of the input: the command sees EOF. */
	close_one(run, (uv_handle_t *)&run->in);
}

/* Words of argv to check --------------------------------------------- */

/* The global options that may come before the command: they change only
 * what is printed, or add a check.  Every other one is refused: -c,
 * --config, -d, --db and --create pick another configuration or store;
 * --server, --token-file and --cacert another server; --local-override
 * writes past the cluster, which only someone at the machine may
 * decide. */
static const char *const global_ok[] = {
	"--json", "-j", "--offline", "--allow-unknown-location", "--help", "-h",
	"--version", "-V", NULL
};
static const char *const global_no[] = {
	"-c", "--config", "-d", "--db", "--create", "--server", "--token-file",
	"--cacert", "--local-override", NULL
};

static int in_set(const char *s, const char *const *set)
{
	for (; *set; set++)
		if (strcmp(s, *set) == 0)
			return 1;
	return 0;
}

/* The global option @o's name, without "=VALUE" or a value joined to a
 * short option, in @out. */
static void option_name(const char *o, char *out, size_t size)
{
	size_t n = strcspn(o, "=");
	if (o[1] != '-' && n > 2)
		n = 2;
	snprintf(out, size, "%.*s", (int)n, o);
}

/* Checks the words of @argv (@argc): 0 with the command's index in *@ci
 * (@argc when there is none), or -1 with the error in @r. */
static int check_globals(int argc, char **argv, int *ci, api_resp_t *r)
{
	int i;
	for (i = 0; i < argc && argv[i][0] == '-'; i++) {
		if (in_set(argv[i], global_ok))
			continue;
		char name[64];
		option_name(argv[i], name, sizeof(name));
		if (in_set(name, global_no))
			api_error(r, MHD_HTTP_BAD_REQUEST, "argv", "option %s is not taken "
			          "through the API: the daemon's own configuration, store and "
			          "cluster are used", name);
		else
			api_error(r, MHD_HTTP_BAD_REQUEST, "argv", "option %s is not taken "
			          "through the API (before the command: --json, --offline, "
			          "--allow-unknown-location)", argv[i]);
		return -1;
	}
	*ci = i;
	return 0;
}

/* Refuses an argument that names a file on the daemon's machine:
 * apply FILE and metrics push --file FILE take "-" here, the file's
 * content coming as "stdin".  @argv: the words after the command. */
static int check_files(const char *cmd, int argc, char **argv, api_resp_t *r)
{
	const char *file = NULL, *what = cmd;
	if (strcmp(cmd, "apply") == 0) {
		for (int i = 0; i < argc && !file; i++)
			if (strncmp(argv[i], "--", 2) != 0 && strcmp(argv[i], "-") != 0)
				file = argv[i];
	} else if (strcmp(cmd, "metrics") == 0 && argc > 2 &&
	           strcmp(argv[0], "push") == 0 && strcmp(argv[1], "--file") == 0 &&
	           strcmp(argv[2], "-") != 0) {
		file = argv[2];
		what = "metrics push --file";
	}
	if (!file)
		return 0;
	api_error(r, MHD_HTTP_BAD_REQUEST, "argv", "%s %s: the API reads no file on "
	          "the daemon's machine: give - and send the file's content as stdin "
	          "(gslbctl --server does)", what, file);
	return -1;
}

/* The words of @argv (@argc) without the options gslbctl also takes
 * after the command (ctl.c: take_late_options()), into @out; returns
 * how many. */
static int without_late(int argc, char **argv, char **out)
{
	int n = 0;
	for (int i = 0; i < argc; i++)
		if (strcmp(argv[i], "--json") != 0 &&
		    strcmp(argv[i], "--allow-unknown-location") != 0)
			out[n++] = argv[i];
	return n;
}

static const char *class_role[] = {
	[WDB_CMD_READS] = "read", [WDB_CMD_OPERATES] = "operate",
	[WDB_CMD_CHANGES] = "admin",
};

/* The request's body: argv (its words copied into @words, @nwords),
 * json, stdin and stdin_name.  Returns 0, or -1 with the error in @r. */
static int read_body(json_t *b, char **words, int *nwords, int *json,
                     const char **input, size_t *input_len, const char **name,
                     api_resp_t *r)
{
	const char *k;
	json_t *v;
	*nwords = 0;
	*json = 0;
	*input = *name = NULL;
	*input_len = 0;
	json_object_foreach(b, k, v) {
		if (strcmp(k, "argv") == 0) {
			if (!json_is_array(v) || !json_array_size(v) ||
			    json_array_size(v) > API_RUN_MAX_ARGS) {
				api_error(r, MHD_HTTP_BAD_REQUEST, k, "argv: must be an array of "
				          "1 to %d strings (the words after gslbctl)", API_RUN_MAX_ARGS);
				return -1;
			}
			size_t i;
			json_t *w;
			json_array_foreach(v, i, w) {
				const char *s = json_string_value(w);
				if (!s || strlen(s) != json_string_length(w) ||
				    strlen(s) > API_RUN_MAX_ARG) {
					api_error(r, MHD_HTTP_BAD_REQUEST, k, "argv[%zu]: must be a "
					          "string of at most %d bytes, without NUL", i,
					          API_RUN_MAX_ARG);
					return -1;
				}
				words[(*nwords)++] = (char *)s;
			}
		} else if (strcmp(k, "json") == 0) {
			if (!json_is_boolean(v)) {
				api_error(r, MHD_HTTP_BAD_REQUEST, k, "json: must be true or false");
				return -1;
			}
			*json = json_is_true(v);
		} else if (strcmp(k, "stdin") == 0) {
			if (!json_is_string(v)) {
				api_error(r, MHD_HTTP_BAD_REQUEST, k, "stdin: must be a string");
				return -1;
			}
			*input = json_string_value(v);
			*input_len = json_string_length(v);
		} else if (strcmp(k, "stdin_name") == 0) {
			const char *s = json_string_value(v);
			int good = s && *s && strlen(s) <= API_RUN_MAX_NAME &&
			           strlen(s) == json_string_length(v);
			for (const char *p = s; good && *p; p++)
				if ((unsigned char)*p < 0x20 || *p == 0x7f)
					good = 0;
			if (!good) {
				api_error(r, MHD_HTTP_BAD_REQUEST, k, "stdin_name: must be 1 to %d "
				          "printable bytes (the file's name, for messages)",
				          API_RUN_MAX_NAME);
				return -1;
			}
			*name = s;
		} else {
			api_error(r, MHD_HTTP_BAD_REQUEST, k, "%s: unknown key (argv, json, "
			          "stdin, stdin_name)", k);
			return -1;
		}
	}
	if (!*nwords) {
		api_error(r, MHD_HTTP_BAD_REQUEST, "argv", "argv: missing (the words "
		          "after gslbctl, e.g. [\"node\", \"list\"])");
		return -1;
	}
	return 0;
}

/* The child's environment: ours, with the audit's actor and host (S3-7:
 * the change is the token's, from its client) and the input's name set
 * (and nothing of those inherited). */
static char **child_env(const api_req_t *q, const char *name)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = xcalloc(n + 4, sizeof(*env));
	size_t k = 0;
	static const char *const drop[] = { "GSLBCTL_ACTOR=", "GSLBCTL_HOST=",
	                                    "GSLBCTL_INPUT_NAME=", "SUDO_USER=", NULL };
	for (size_t i = 0; i < n; i++) {
		int keep = 1;
		for (const char *const *d = drop; *d; d++)
			if (strncmp(environ[i], *d, strlen(*d)) == 0)
				keep = 0;
		if (keep)
			env[k++] = xstrdup(environ[i]);
	}
	char buf[API_RUN_MAX_NAME + 200];
	snprintf(buf, sizeof(buf), "GSLBCTL_ACTOR=api:%s", q->user);
	env[k++] = xstrdup(buf);
	snprintf(buf, sizeof(buf), "GSLBCTL_HOST=%s", q->host);
	env[k++] = xstrdup(buf);
	if (name) {
		snprintf(buf, sizeof(buf), "GSLBCTL_INPUT_NAME=%s", name);
		env[k++] = xstrdup(buf);
	}
	return env;
}

static void free_strv(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}

/* Starts the child of @run with @args; 0, or a libuv error. */
static int spawn(api_runner_t *rn, api_run_t *run, char **args, char **env)
{
	uv_stdio_container_t io[3];
	uv_pipe_init(rn->loop, &run->out, 0);
	uv_pipe_init(rn->loop, &run->err, 0);
	uv_timer_init(rn->loop, &run->timer);
	run->handles = 3;
	run->out.data = run->err.data = run->timer.data = run->proc.data = run;
	if (run->input) {
		uv_pipe_init(rn->loop, &run->in, 0);
		run->in.data = run;
		run->has_in = 1;
		run->handles++;
		io[0].flags = UV_CREATE_PIPE | UV_READABLE_PIPE;
		io[0].data.stream = (uv_stream_t *)&run->in;
	} else {
		io[0].flags = UV_IGNORE;   /* /dev/null */
	}
	io[1].flags = io[2].flags = UV_CREATE_PIPE | UV_WRITABLE_PIPE;
	io[1].data.stream = (uv_stream_t *)&run->out;
	io[2].data.stream = (uv_stream_t *)&run->err;
	uv_process_options_t po = {
		.exit_cb = on_exit_cb, .file = rn->exe, .args = args, .env = env,
		.cwd = "/", .stdio_count = 3, .stdio = io,
	};
	/* The process handle is one to close even when the spawn fails. */
	run->handles++;
	int rc = uv_spawn(rn->loop, &run->proc, &po);
	if (rc)
		return rc;
	uv_read_start((uv_stream_t *)&run->out, on_alloc, on_read);
	uv_read_start((uv_stream_t *)&run->err, on_alloc, on_read);
	if (run->input) {
		uv_buf_t b = uv_buf_init(run->input, (unsigned)run->input_len);
		run->wr.data = run;
		if (uv_write(&run->wr, (uv_stream_t *)&run->in, &b, 1, on_written))
			close_one(run, (uv_handle_t *)&run->in);
	}
	uv_timer_start(&run->timer, on_timeout, (uint64_t)rn->timeout * 1000, 0);
	return 0;
}

/* The checks of @q's command; the words to run in @args (a new array
 * of borrowed strings) and the run's command in @cmd.  0, or -1 with
 * the error in @r. */
static int check_request(const api_runner_t *rn, const api_req_t *q, json_t *b,
                         char ***args, const char **name, const char **input,
                         size_t *input_len, char *cmd, size_t cmdlen, api_resp_t *r)
{
	char *words[API_RUN_MAX_ARGS], *rest[API_RUN_MAX_ARGS];
	int nwords, json, ci;
	if (read_body(b, words, &nwords, &json, input, input_len, name, r) ||
	    check_globals(nwords, words, &ci, r))
		return -1;
	wdb_cmd_class_t cls = WDB_CMD_READS;  /* no command: help or usage */
	snprintf(cmd, cmdlen, "%s", ci < nwords ? words[ci] : "");
	if (ci < nwords) {
		int nrest = without_late(nwords - ci - 1, words + ci + 1, rest);
		if (check_files(words[ci], nrest, rest, r))
			return -1;
		cls = wdb_command_class(words[ci], nrest, rest);
	}
	if ((int)q->role < (int)cls) {
		api_error(r, MHD_HTTP_FORBIDDEN, NULL, "token %s has role %s: gslbctl "
		          "%s%s%s needs role %s", q->user, api_role_name(q->role), cmd,
		          ci + 1 < nwords ? " " : "", ci + 1 < nwords ? words[ci + 1] : "",
		          class_role[cls]);
		return -1;
	}
	if (!*rn->exe) {
		api_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "this gslbd finds no "
		          "gslbctl beside it to run the command");
		return -1;
	}
	char **a = xcalloc((size_t)nwords + 5, sizeof(*a));
	int n = 0;
	a[n++] = (char *)rn->exe;
	a[n++] = "-c";
	a[n++] = (char *)rn->conf;
	if (json)
		a[n++] = "--json";
	for (int i = 0; i < nwords; i++)
		a[n++] = words[i];
	*args = a;
	return 0;
}

api_run_t *api_run_start(api_runner_t *rn, const api_req_t *q, api_resp_t *r,
                         api_run_done_fn done, void *arg)
{
	json_t *b = api_body_object(q, r);
	if (!b)
		return NULL;
	char **args = NULL, cmd[64];
	const char *name, *input;
	size_t input_len;
	if (check_request(rn, q, b, &args, &name, &input, &input_len, cmd,
	                  sizeof(cmd), r)) {
		json_decref(b);
		return NULL;
	}
	if (rn->n >= API_RUN_MAX) {
		api_error(r, MHD_HTTP_TOO_MANY_REQUESTS, NULL, "%u gslbctl commands "
		          "run already: try again when one has ended", rn->n);
		free(args);
		json_decref(b);
		return NULL;
	}
	api_run_t *run = xcalloc(1, sizeof(*run));
	run->rn = rn;
	run->done = done;
	run->arg = arg;
	snprintf(run->cmd, sizeof(run->cmd), "%s", *cmd ? cmd : "(no command)");
	if (input) {
		run->input = xmalloc(input_len + 1);
		memcpy(run->input, input, input_len);
		run->input_len = input_len;
	}
	char **env = child_env(q, name);
	run->next = rn->runs;
	rn->runs = run;
	rn->n++;
	int rc = spawn(rn, run, args, env);
	free(args);
	free_strv(env);
	json_decref(b);
	if (rc) {
		api_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "cannot run %s: %s",
		          rn->exe, uv_strerror(rc));
		run->done = NULL;
		run->exited = 1;   /* there is no process to wait for */
		run->finished = 1;
		close_one(run, (uv_handle_t *)&run->proc);
		close_one(run, (uv_handle_t *)&run->timer);
		close_one(run, (uv_handle_t *)&run->out);
		close_one(run, (uv_handle_t *)&run->err);
		if (run->has_in)
			close_one(run, (uv_handle_t *)&run->in);
		return NULL;
	}
	log_info("api: %s@%s runs gslbctl %s (pid %d)", q->user, q->host, run->cmd,
	         run->proc.pid);
	return run;
}

void api_run_cancel(api_run_t *run)
{
	run->done = NULL;
	if (!run->exited)
		uv_process_kill(&run->proc, SIGKILL);
}

void api_runner_stop(api_runner_t *rn)
{
	if (!rn)
		return;
	rn->stopped = 1;
	for (api_run_t *run = rn->runs; run; run = run->next)
		if (!run->exited)
			uv_process_kill(&run->proc, SIGKILL);
	runner_maybe_free(rn);
}

int api_run_route(const api_env_t *env, const api_req_t *q, api_resp_t *r)
{
	if (strcmp(q->path, "/v1/run") != 0)
		return 0;
	/* A POST is run by the server before the routes (api.c). */
	api_error(r, MHD_HTTP_METHOD_NOT_ALLOWED, NULL, "%s /v1/run: POST a "
	          "command to run", q->method);
	return 1;
}
