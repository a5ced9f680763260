# SPDX-License-Identifier: MIT
# bench/etcd1.sh: sourced by the cluster benchmarks (cluster.sh, feed.sh)
# after they set ROOT, BASE and TAG.  One etcd member on loopback (client
# port BASE, peer port BASE+1) under a temporary directory $T, and the
# cleanup that stops it and gslbd ($GPID) by PID at exit.
T=$(mktemp -d "/tmp/gslbd-$TAG-bench.XXXXXX")
EP="http://127.0.0.1:$BASE"
EPID= GPID=
cleanup() {
	local p
	for p in $GPID $EPID; do
		kill "$p" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' TERM INT
die() { echo "bench: $*" >&2; exit 1; }
command -v etcd >/dev/null || die "etcd is not installed (contrib/deps.sh)"

# etcd_start NAME [ETCD OPTIONS...]: the member, ready to answer.
etcd_start() {
	local name=$1
	shift
	etcd --name "$name" --data-dir "$T/etcd" --listen-client-urls "$EP" \
		--advertise-client-urls "$EP" \
		--listen-peer-urls "http://127.0.0.1:$((BASE + 1))" \
		--initial-advertise-peer-urls "http://127.0.0.1:$((BASE + 1))" \
		--initial-cluster "$name=http://127.0.0.1:$((BASE + 1))" "$@" \
		>"$T/etcd.log" 2>&1 &
	EPID=$!
	for _ in $(seq 100); do
		ETCDCTL_API=3 etcdctl --endpoints="$EP" put /probe x >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	die "etcd did not start: $(tail -3 "$T/etcd.log")"
}
