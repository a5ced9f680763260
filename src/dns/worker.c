/* SPDX-License-Identifier: MIT */
/* Worker threads: one libuv loop each, RCU-QSBR readers of the snapshot. */
#include "dns/worker.h"
#include "common/log.h"
#include "common/net.h"
#include "dns/dnstap.h"
#include "dns/net_tcp.h"
#include "dns/net_udp.h"
#include "dns/snapshot.h"
#include "dns/tally.h"
#include "dnssec/dnssec.h"
#include "common/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <urcu-qsbr.h>

void worker__online(qctx_t *q)
{
	rcu_thread_online();
	q->snap = snapshot_get();
	q->now = (uint32_t)time(NULL);
}

void worker__offline(qctx_t *q)
{
	q->snap = NULL;
	wdb_reader_release(q->wdb);
	rcu_thread_offline();
}

/* A handed-over socket for @l of @type, or a newly bound one. */
static int listen_fd(const conf_listen_t *l, int type, int *adopt,
                     size_t nadopt)
{
	int fd = net_adopt(adopt, nadopt, l, type);
	if (fd >= 0)
		return fd;
	return type == SOCK_DGRAM ? net_udp_bind(l) : net_tcp_bind(l);
}

worker_t *workers_create(const conf_t *conf, unsigned n, weightdb_t *db,
                         int *adopt, size_t nadopt, char *err, size_t errlen)
{
	worker_t *ws = xcalloc(n, sizeof(*ws));
	unsigned per = (conf->tcp_max_clients + n - 1) / n;
	unsigned src = tcp_guard_share(conf->tcp_max_per_source, n);
	for (unsigned i = 0; i < n; i++) {
		worker_t *w = &ws[i];
		w->id = i;
		w->nlisten = conf->nlisten;
		w->udp = xcalloc(conf->nlisten, sizeof(*w->udp));
		w->tcp = xcalloc(conf->nlisten, sizeof(*w->tcp));
		w->tcp_max = per ? per : 1;
		w->tcp_idle_ms = conf->tcp_idle_timeout * 1000;
		w->tcp_out = xmalloc(WORKER_TCP_OUT);
		w->tcp_guard = tcp_guard_new(w->tcp_max, src,
		                             conf->tcp_source_prefix_v4,
		                             conf->tcp_source_prefix_v6);
		w->db = db;
		w->q.rng = ((uint64_t)getpid() << 32) ^ (uint64_t)time(NULL) ^
		           (0x9E3779B97F4A7C15ull * (i + 1));
		if (db && !(w->q.wdb = wdb_reader_new(db))) {
			snprintf(err, errlen, "database: cannot create a reader");
			goto fail;
		}
		if (db)
			w->q.memo = gslb_memo_new();
		/* Every query thread gets a signer when there is a store
		 * (signing is enabled there); the cache only with a dnssec
		 * section at start, as a restart sizes it. */
		dnssec_conf_t dc;
		if (dnssec_conf_load(conf, &dc, err, errlen) == 0) {
			w->sig_cache = dc.keystore ? dc.cache_entries : 0;
			dnssec_conf_clear(&dc);
		}
		if (db)
			w->q.dsig = dnssec_thread_new(w->sig_cache);
		w->q.cookies = cookie_mac_new();
		for (size_t k = 0; k < conf->nlisten; k++) {
			const conf_listen_t *l = &conf->listen[k];
			int fd = listen_fd(l, SOCK_DGRAM, adopt, nadopt);
			if (fd < 0) {
				snprintf(err, errlen, "cannot bind UDP %s: %s", l->text,
				         strerror(-fd));
				goto fail;
			}
			if (!(w->udp[k] = net_udp_new(w, fd))) {
				snprintf(err, errlen, "database: cannot create a reader");
				goto fail;
			}
			fd = listen_fd(l, SOCK_STREAM, adopt, nadopt);
			if (fd < 0) {
				snprintf(err, errlen, "cannot bind TCP %s: %s", l->text,
				         strerror(-fd));
				goto fail;
			}
			w->tcp[k] = net_tcp_new(w, fd);
		}
	}
	return ws;
fail:
	for (unsigned i = 0; i < n; i++) {
		for (size_t k = 0; k < ws[i].nlisten; k++) {
			if (ws[i].udp[k])
				net_udp_close(ws[i].udp[k]);
			if (ws[i].tcp[k])
				net_tcp_close(ws[i].tcp[k]);
		}
		free(ws[i].udp);
		free(ws[i].tcp);
		free(ws[i].tcp_out);
		tcp_guard_free(ws[i].tcp_guard);
		wdb_reader_free(ws[i].q.wdb);
		gslb_memo_free(ws[i].q.memo);
		dnssec_thread_free(ws[i].q.dsig);
		cookie_mac_free(ws[i].q.cookies);
	}
	free(ws);
	return NULL;
}

unsigned workers_dnstap_queues(unsigned n, size_t nlisten)
{
	return n * (unsigned)(1 + nlisten);
}

void workers_set_dnstap(worker_t *ws, unsigned n, dnstap_t *d)
{
	unsigned idx = 0;
	for (unsigned i = 0; i < n; i++) {
		ws[i].dnstap = dnstap_queue(d, idx++);
		for (size_t k = 0; k < ws[i].nlisten; k++)
			net_udp_set_dnstap(ws[i].udp[k], dnstap_queue(d, idx++));
	}
}

static void on_beat(uv_timer_t *t)
{
	worker_t *w = t->data;
	__atomic_store_n(&w->beat, util_mono_sec(), __ATOMIC_RELAXED);
}

static void on_stop(uv_async_t *a)
{
	worker_t *w = a->data;
	uv_close((uv_handle_t *)&w->beat_timer, NULL);
	for (size_t k = 0; k < w->nlisten; k++)
		net_udp_stop(w->udp[k]);     /* wake them all, then join */
	for (size_t k = 0; k < w->nlisten; k++) {
		net_udp_close(w->udp[k]);
		if (w->tcp[k])
			net_tcp_close(w->tcp[k]);
	}
	net_tcp_close_conns(w);
	uv_close((uv_handle_t *)&w->stop, NULL);
	uv_close((uv_handle_t *)&w->release, NULL);
}

/* Hand-over, on the worker's thread: the new process reads the same
 * listening sockets, so closing our descriptors loses nothing queued. */
static void on_release(uv_async_t *a)
{
	worker_t *w = a->data;
	if (w->draining)
		return;
	for (size_t k = 0; k < w->nlisten; k++) {
		net_udp_release(w->udp[k]);
		net_tcp_close(w->tcp[k]);
		w->tcp[k] = NULL;
	}
	w->tcp_idle_ms = WORKER_DRAIN_IDLE_MS;
	net_tcp_drain_conns(w);
	__atomic_store_n(&w->draining, 1, __ATOMIC_RELEASE);
}

static void *worker_main(void *arg)
{
	worker_t *w = arg;
	rcu_register_thread();
	rcu_thread_offline();
	uv_run(&w->loop, UV_RUN_DEFAULT);
	rcu_unregister_thread();
	return NULL;
}

void workers_enable_tally(worker_t *ws, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		ws[i].q.tally = tally_new();
		for (size_t k = 0; k < ws[i].nlisten; k++)
			net_udp_qctx(ws[i].udp[k])->tally = tally_new();
	}
}

void workers_each_tally(const worker_t *ws, unsigned n,
                        void (*fn)(const struct tally *t, void *arg), void *arg)
{
	for (unsigned i = 0; i < n; i++) {
		if (ws[i].q.tally)
			fn(ws[i].q.tally, arg);
		for (size_t k = 0; k < ws[i].nlisten; k++) {
			const qctx_t *q = net_udp_qctx(ws[i].udp[k]);
			if (q->tally)
				fn(q->tally, arg);
		}
	}
}

int workers_start(worker_t *ws, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		worker_t *w = &ws[i];
		int rc = uv_loop_init(&w->loop);
		if (!rc)
			rc = uv_async_init(&w->loop, &w->stop, on_stop);
		w->stop.data = w;
		if (!rc)
			rc = uv_async_init(&w->loop, &w->release, on_release);
		w->release.data = w;
		if (!rc)
			rc = uv_timer_init(&w->loop, &w->beat_timer);
		w->beat_timer.data = w;
		w->beat = util_mono_sec();
		if (!rc)
			rc = uv_timer_start(&w->beat_timer, on_beat, 1000, 1000);
		for (size_t k = 0; !rc && k < w->nlisten; k++) {
			rc = net_udp_start(w->udp[k]);
			if (!rc)
				rc = net_tcp_start(w->tcp[k]);
		}
		if (rc) {
			log_err("worker %u: %s", i, uv_strerror(rc));
			return rc;
		}
		if (pthread_create(&w->thread, NULL, worker_main, w))
			return GSLB_ENOMEM;
		w->ready = 1;
	}
	return 0;
}

void workers_stop(worker_t *ws, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (ws[i].ready)
			uv_async_send(&ws[i].stop);
	for (unsigned i = 0; i < n; i++) {
		if (ws[i].ready) {
			pthread_join(ws[i].thread, NULL);
			uv_loop_close(&ws[i].loop);
		}
		free(ws[i].udp);
		free(ws[i].tcp);
		free(ws[i].tcp_out);
		tcp_guard_free(ws[i].tcp_guard);
		free(ws[i].q.tally);
		wdb_reader_free(ws[i].q.wdb);
		gslb_memo_free(ws[i].q.memo);
		dnssec_thread_free(ws[i].q.dsig);
		cookie_mac_free(ws[i].q.cookies);
	}
	free(ws);
}

size_t workers_fds(const worker_t *ws, unsigned n, int *out, size_t max)
{
	size_t k = 0;
	for (unsigned i = 0; i < n; i++)
		for (size_t j = 0; j < ws[i].nlisten; j++) {
			if (k < max)
				out[k] = net_udp_fd(ws[i].udp[j]);
			k++;
			if (ws[i].tcp[j]) {
				if (k < max)
					out[k] = net_tcp_fd(ws[i].tcp[j]);
				k++;
			}
		}
	return k;
}

void workers_release(worker_t *ws, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (ws[i].ready)
			uv_async_send(&ws[i].release);
}

uint64_t workers_stat_tcp(const worker_t *ws, unsigned n, int stat)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < n; i++)
		sum += tcp_guard_stat(ws[i].tcp_guard, stat);
	return sum;
}

uint64_t workers_tcp_open(const worker_t *ws, unsigned n)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < n; i++)
		sum += __atomic_load_n(&ws[i].tcp_clients, __ATOMIC_RELAXED);
	return sum;
}

int workers_drained(const worker_t *ws, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (!__atomic_load_n(&ws[i].draining, __ATOMIC_ACQUIRE) ||
		    __atomic_load_n(&ws[i].tcp_clients, __ATOMIC_RELAXED))
			return 0;
	return 1;
}

int workers_alive(const worker_t *ws, unsigned n, int64_t max_age,
                  char *what, size_t whatlen)
{
	int64_t now = util_mono_sec();
	for (unsigned i = 0; i < n; i++) {
		int64_t b = __atomic_load_n(&ws[i].beat, __ATOMIC_RELAXED);
		if (now - b > max_age) {
			snprintf(what, whatlen, "worker %u has not run for %lld s", i,
			         (long long)(now - b));
			return -1;
		}
		for (size_t k = 0; k < ws[i].nlisten; k++) {
			b = net_udp_beat(ws[i].udp[k]);
			if (now - b > max_age) {
				snprintf(what, whatlen,
				         "worker %u's UDP thread has not run for %lld s",
				         i, (long long)(now - b));
				return -1;
			}
		}
	}
	return 0;
}

uint64_t workers_stat_udp(const worker_t *ws, unsigned n, int stat)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < n; i++)
		for (size_t k = 0; k < ws[i].nlisten; k++)
			if (ws[i].udp[k])
				sum += net_udp_stat(ws[i].udp[k], stat);
	return sum;
}

uint64_t workers_stat(const worker_t *ws, unsigned n, int stat)
{
	uint64_t sum = 0;
	for (unsigned i = 0; i < n; i++) {
		sum += __atomic_load_n(&ws[i].q.stats[stat], __ATOMIC_RELAXED);
		for (size_t k = 0; k < ws[i].nlisten; k++)
			if (ws[i].udp[k])
				sum += net_udp_stat(ws[i].udp[k], stat);
	}
	return sum;
}
