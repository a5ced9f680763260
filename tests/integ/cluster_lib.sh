# SPDX-License-Identifier: MIT
# Helpers of the cluster tests (test_cluster*.sh), sourced after lib.sh:
# a 3-member etcd cluster on loopback with data directories under $T, and
# 3 gslbd instances (ns1..ns3) sharing it, each with its own port, store
# and configuration $T/nsI/gslbd.conf.  Everything started here is
# stopped by PID on exit.
#
#   etcd_start I / etcd_stop I       # member I (1..3)
#   ns_start I [ENDPOINTS] / ns_stop I   # gslbd nsI
#   CTLN I ARGS...                   # gslbctl -c $T/nsI/gslbd.conf
#   qn I NAME [TYPE]                 # dig +short at nsI
#   scrape I                         # nsI's /metrics (port PORT + 20 + I)
#   mval TEXT NAME                   # the value of sample NAME in TEXT
#   feeder_start FN                  # FN I for each instance, every 0.3 s
command -v etcd >/dev/null || { echo "etcd is not installed (contrib/deps.sh)"; exit 1; }
# etcd's ports: 1000 above the test's base port (run alone: plus 20 per
# test script by a hash of its name), a client and a peer port per member.
if [ -n "${TEST_SLOTTED:-}" ]; then
	EBASE=$(( ${TESTPORT:-15300} + 1000 ))
else
	EBASE=$(( ${TESTPORT:-15300} + 1000 + $(printf '%s' "$TESTNAME" | cksum | cut -d' ' -f1) % 40 * 20 ))
fi
ECLIENT() { echo $((EBASE + 2 * $1)); }
EPEER() { echo $((EBASE + 2 * $1 + 1)); }
EALL="http://127.0.0.1:$(ECLIENT 1),http://127.0.0.1:$(ECLIENT 2),http://127.0.0.1:$(ECLIENT 3)"
declare -A EPID NSPID NSPORT
export ETCDCTL_API=3
ETCDCTL() { etcdctl --endpoints="$EALL" --command-timeout=3s "$@"; }

etcd_start() { # member
	local i=$1 cl="" j
	for j in 1 2 3; do cl="$cl${cl:+,}e$j=http://127.0.0.1:$(EPEER $j)"; done
	mkdir -p "$T/etcd$i"
	local state=new
	[ -e "$T/etcd$i/member" ] && state=existing
	# Large transactions for `gslbctl apply`, and quick elections.
	etcd --name "e$i" --data-dir "$T/etcd$i" \
		--listen-client-urls "http://127.0.0.1:$(ECLIENT "$i")" \
		--advertise-client-urls "http://127.0.0.1:$(ECLIENT "$i")" \
		--listen-peer-urls "http://127.0.0.1:$(EPEER "$i")" \
		--initial-advertise-peer-urls "http://127.0.0.1:$(EPEER "$i")" \
		--initial-cluster "$cl" --initial-cluster-state "$state" \
		--initial-cluster-token "gslbd-$EBASE" \
		--max-txn-ops 100000 --max-request-bytes 33554432 \
		--heartbeat-interval 100 --election-timeout 1000 \
		>>"$T/etcd$i.log" 2>&1 &
	EPID[$i]=$!
}

etcd_stop() { # member
	local p=${EPID[$1]}
	[ -n "$p" ] || return 0
	kill "$p" 2>/dev/null
	for _ in $(tseq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	EPID[$1]=
}

# Waits (at most 15 s) until the cluster has a leader and takes writes.
etcd_wait() {
	for _ in $(tseq 150); do
		ETCDCTL put /probe x >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "etcd did not come up"; tail -5 "$T"/etcd*.log
	return 1
}

# Waits (at most 15 s) until member I itself answers on its client URL
# as a healthy member of the cluster (etcd_wait is satisfied by any).
etcd_member_wait() { # member
	for _ in $(tseq 150); do
		etcdctl --endpoints="http://127.0.0.1:$(ECLIENT "$1")" --command-timeout=2s \
			endpoint health >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	echo "etcd member e$1 did not come up"; tail -5 "$T/etcd$1.log"
	return 1
}

# The member that leads now (1..3), empty when none.
etcd_leader() {
	local i
	for i in 1 2 3; do
		[ -n "${EPID[$i]}" ] || continue
		etcdctl --endpoints="http://127.0.0.1:$(ECLIENT "$i")" endpoint status -w json 2>/dev/null |
			python3 -c 'import json,sys
d=json.load(sys.stdin)[0]["Status"]
sys.exit(0 if d["leader"]==d["header"]["member_id"] else 1)' 2>/dev/null && { echo "$i"; return; }
	done
}

# Writes nsI's configuration: zone gslb.test from $T/z.zone, its own
# port and store, and the cluster section (ENDPOINTS: a YAML list).
ns_conf() { # i [endpoints]
	local i=$1 eps=${2:-}
	[ -n "$eps" ] || eps="[ \"http://127.0.0.1:$(ECLIENT 1)\", \"http://127.0.0.1:$(ECLIENT 2)\", \"http://127.0.0.1:$(ECLIENT 3)\" ]"
	NSPORT[$i]=$((PORT + i))
	mkdir -p "$T/ns$i"
	cp "$T/z.zone" "$T/ns$i/z.zone"
	cat > "$T/ns$i/gslbd.conf" <<EOC
server:
  listen: [ "127.0.0.1@${NSPORT[$i]}" ]
  workers: 1
  identity: ns$i
stats:
  listen: [ "127.0.0.1@$((PORT + 20 + i))" ]
database:
  path: db
zones:
  - name: gslb.test
    file: z.zone
health:
  interval: 1
  timeout: 0.9
  settle: 5
  flap-window: 0
cluster:
  etcd: $eps
  prefix: /gslbd/
  name: ns$i
  vantage: { region: r$i, isp: i$i }
  lease-ttl: ${LEASE_TTL:-3}
  timeout: 1
EOC
}

scrape() { # i
	python3 -c "import sys, urllib.request
sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode())" \
		"http://127.0.0.1:$((PORT + 20 + $1))/metrics" 2>/dev/null
}

mval() { # text name-with-labels
	awk -v m="$2" '$1 == m { print $2 }' <<<"$1"
}

ns_start() { # i [endpoints]
	local i=$1
	[ -e "$T/ns$i/gslbd.conf" ] || ns_conf "$@"
	"$GSLBD" -c "$T/ns$i/gslbd.conf" >>"$T/ns$i.log" 2>&1 &
	NSPID[$i]=$!
	for _ in $(tseq 100); do
		dig @127.0.0.1 -p "${NSPORT[$i]}" +time=1 +tries=1 id.server CH TXT >/dev/null 2>&1 && return 0
		kill -0 "${NSPID[$i]}" 2>/dev/null || break
		sleep 0.1
	done
	echo "ns$i did not start; its log:"; cat "$T/ns$i.log"
	exit 1
}

ns_stop() { # i [signal]
	local p=${NSPID[$1]:-}
	[ -n "$p" ] || return 0
	kill "-${2:-TERM}" "$p" 2>/dev/null
	for _ in $(tseq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$p" 2>/dev/null
	wait "$p" 2>/dev/null
	NSPID[$1]=
}

cluster_cleanup() {
	local i
	for i in 1 2 3; do ns_stop "$i"; done
	for i in 1 2 3; do etcd_stop "$i"; done
	stop_httpds
	cleanup
}
trap cluster_cleanup EXIT
# A test stopped by its time limit still stops what it started.
trap 'exit 1' TERM INT

CTLN() { local i=$1; shift; "$ROOT/$B/gslbctl" -c "$T/ns$i/gslbd.conf" "$@"; }
qn() { # i name [type]
	dig @127.0.0.1 -p "${NSPORT[$1]}" +norec +time=1 +tries=1 +short "$2" "${3:-A}" 2>&1 |
		sort | tr '\n' ' ' | sed 's/ $//'
}
# wait_all TENTHS NAME "ANSWERS": 0 once every running instance answers so.
wait_all() {
	local i good
	for _ in $(tseq "$1"); do
		good=1
		for i in 1 2 3; do
			[ -n "${NSPID[$i]}" ] || continue
			[ "$(qn "$i" "$2")" = "$3" ] || { good=0; break; }
		done
		[ $good = 1 ] && return 0
		sleep 0.1
	done
	return 1
}
# ctl_in_delay PID: waits (at most 10 s) until the gslbctl of background
# job PID (a command or a function's subshell) sleeps in the delay of
# GSLBCTL_TEST_CLUSTER_DELAY_MS between its read and its write: its one
# sleep, seen as system call 230 (clock_nanosleep) in /proc.
ctl_in_delay() {
	local c
	for _ in $(tseq 100); do
		for c in "$1" $(pgrep -P "$1"); do
			[ "$(cat "/proc/$c/comm" 2>/dev/null)" = gslbctl ] &&
				[ "$(cut -d' ' -f1 "/proc/$c/syscall" 2>/dev/null)" = 230 ] && return 0
		done
		sleep 0.1
	done
	return 1
}
# The table as exported by nsI (services, nodes, weights, cutovers).
export_of() { CTLN "$1" export 2>&1; }

# Starts the 3 members and waits for a leader.
etcd_cluster_start() {
	etcd_start 1; etcd_start 2; etcd_start 3
	etcd_wait
}

# Pushed figures stay in the store they reach: a feeder calls FN I for
# every running instance I, in parallel, every 0.3 s while $T/feeding
# exists (at most 4 minutes), in the background; stopped at exit.
feeder_start() { # fn
	touch "$T/feeding"
	(
		end=$((SECONDS + $(tscale 240)))
		while [ -e "$T/feeding" ] && [ $SECONDS -lt $end ]; do
			for i in 1 2 3; do
				[ -n "${NSPID[$i]}" ] || continue
				"$1" "$i" >/dev/null 2>&1 &
			done
			wait
			sleep 0.3
		done
	) &
	FEEDER=$!
	trap 'rm -f "$T/feeding"; kill $FEEDER 2>/dev/null; wait $FEEDER 2>/dev/null; cluster_cleanup' EXIT
}
