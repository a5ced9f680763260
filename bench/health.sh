#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/health.sh: the health-thread targets, measured against
# the real gslbd on loopback with real HTTP servers that really fail.
#
#  react1  1 s probes: a node whose server refuses connections ("down"),
#          answers 503 ("err") or answers 503 slowly ("slowerr") leaves
#          the answers; then the server is fixed and the node must come
#          back only after its three confirmations (>= 2 probe intervals).
#  react10 the same with the default 10 s probes (hard failure and 503).
#  cost    10,000 nodes, one HTTP probe each every 10 s (1,000 probes/s)
#          against nginx on 127.0.0.1; gslbd CPU (process and per thread)
#          over MEASURE seconds, nginx request rate, LMDB write rate.
#
# Usage: bench/health.sh            (all parts)
# Knobs (environment): PARTS="react1 react10 cost", REPS1=10, REPS10=3,
#   NODES=10000, NGINX_PORTS=8, SETTLE=25, MEASURE=60, PERF=0 (1: also a
#   10 s perf record -g of gslbd while settling, into cost/perf.data), BASE_PORT=16400,
#   GSLBD, GSLBCTL (binaries; default build/).
# Output: bench/out/health-DATE/ (bench/out/health-latest points there):
#   results.csv (one row per measured event), cost.txt, summary.md, the
#   configurations and logs.  Every process started here is stopped by PID
#   on exit; every wait is bounded.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
GSLBD=${GSLBD:-$ROOT/build/gslbd}
GSLBCTL=${GSLBCTL:-$ROOT/build/gslbctl}
PARTS=${PARTS:-react1 react10 cost}
REPS1=${REPS1:-10}
REPS10=${REPS10:-3}
NODES=${NODES:-10000}
NGINX_PORTS=${NGINX_PORTS:-8}
SETTLE=${SETTLE:-25}
MEASURE=${MEASURE:-60}
PERF=${PERF:-0}
BASE_PORT=${BASE_PORT:-16400}
OUT=$ROOT/bench/out/health-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT"
ln -sfn "$(basename "$OUT")" "$ROOT/bench/out/health-latest"
for b in "$GSLBD" "$GSLBCTL"; do
	[ -x "$b" ] || { echo "missing $b: run make first" >&2; exit 1; }
done
command -v dig >/dev/null || { echo "dig is required" >&2; exit 1; }

PIDS=()           # every process started here, stopped by PID on exit
GPID=             # the running gslbd
cleanup() {
	local p
	for p in "${PIDS[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${PIDS[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$p" 2>/dev/null
	done
}
trap cleanup EXIT
trap 'exit 130' INT TERM
log() { echo "[$(date +%T)] $*" | tee -a "$OUT/run.log" >&2; }

# Milliseconds, without forking (bash 5 EPOCHREALTIME).
now_ms() { local t=${EPOCHREALTIME/[.,]/}; NOW=$(( t / 1000 )); }

{
	echo "date: $(date -u +%FT%TZ)"
	echo "host: $(uname -srm), nproc $(nproc)"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
	echo "gslbd: $("$GSLBD" -V 2>&1), commit $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- src || echo ' + uncommitted src changes')"
	echo "nginx: $(nginx -v 2>&1 || echo none)"
	echo "dig: $(dig -v 2>&1)"
	echo "loadavg at start: $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "PARTS=$PARTS REPS1=$REPS1 REPS10=$REPS10 NODES=$NODES MEASURE=$MEASURE SETTLE=$SETTLE"
} > "$OUT/env.txt"
echo "scenario,interval_s,rep,event,ms,check" > "$OUT/results.csv"

# gslbd --------------------------------------------------------------------
# gslbd_conf DIR PORT HEALTH-YAML
gslbd_conf() {
	mkdir -p "$1"
	cat > "$1/z.zone" <<'EOZ'
$TTL 300
@   SOA ns1 host 1 3600 600 86400 120
    NS  ns1
ns1 A   192.0.2.53
EOZ
	cat > "$1/gslbd.conf" <<EOC
server:
  listen: [ "127.0.0.1@$2" ]
  workers: 2
  identity: bench.ns
database:
  path: db
zones:
  - name: health.test
    file: z.zone
$3
EOC
}
gslbd_start() { # DIR PORT
	"$GSLBD" -c "$1/gslbd.conf" >>"$1/gslbd.log" 2>&1 &
	GPID=$!
	PIDS+=("$GPID")
	for _ in $(seq 100); do
		dig @127.0.0.1 -p "$2" +time=1 +tries=1 id.server CH TXT >/dev/null 2>&1 && return 0
		kill -0 "$GPID" 2>/dev/null || break
		sleep 0.1
	done
	echo "gslbd did not start:" >&2
	cat "$1/gslbd.log" >&2
	exit 1
}
stop_pid() { # PID [signal]
	kill -"${2:-TERM}" "$1" 2>/dev/null
	for _ in $(seq 100); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
	kill -9 "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# Reaction times ----------------------------------------------------------
# One service answering every node (answers 3), three nodes, each probed
# on its own tests/integ/httpd.py server; node 2 is the one broken.
react() { # NAME INTERVAL TIMEOUT LATENCY-THRESHOLD SLOW REPS "EVENTS"
	local name=$1 iv=$2 tmo=$3 lat=$4 slow=$5 reps=$6 events=$7
	local D=$OUT/$name port=$((BASE_PORT + 100 * iv)) hp=() hpids=()
	local ctl=("$GSLBCTL" -c "$D/gslbd.conf")
	local health
	# Every repetition breaks the same node soon after it came back, which
	# the anti-flap damping (flap-window) would answer with ever more
	# confirmations: the reaction runs measure single events, so it is off.
	if [ "$iv" = 10 ]; then
		# the defaults: interval 10, timeout 2, threshold 2 s
		health="health:
  flap-window: 0"
	else
		health="health:
  interval: $iv
  timeout: $tmo
  latency-threshold: $lat
  settle: 30
  flap-window: 0"
	fi
	gslbd_conf "$D" "$port" "$health"
	local i p
	for i in 1 2 3; do
		p=$((port + 10 + i))
		hp+=("$p")
		echo ok > "$D/mode$i"
		python3 "$ROOT/tests/integ/httpd.py" "$p" "$D/mode$i" "$slow" 1800 >>"$D/httpd$i.log" 2>&1 &
		PIDS+=("$!")
		hpids+=("$!")
	done
	sleep 0.5
	for i in 0 1 2; do
		# a server that could not bind its port exits at once: stop here
		kill -0 "${hpids[$i]}" 2>/dev/null || { echo "httpd on port ${hp[$i]} died:" >&2; cat "$D/httpd$((i + 1)).log" >&2; exit 1; }
		for _ in $(seq 50); do
			python3 -c "import socket; socket.create_connection(('127.0.0.1', ${hp[$i]}), 0.2)" 2>/dev/null && break
			sleep 0.1
		done
	done
	local popt="interval=$iv timeout=$tmo"
	"${ctl[@]}" service add www.health.test --ttl 60 --short-ttl 5 --answers 3 >/dev/null
	for i in 1 2 3; do
		"${ctl[@]}" node add "h$i" --addr "192.0.2.$i" \
			--probe "http://127.0.0.1:${hp[$((i - 1))]}/health $popt" >/dev/null
	done
	"${ctl[@]}" weight set www.health.test h1=10 h2=10 h3=10 >/dev/null
	gslbd_start "$D" "$port"
	log "$name: gslbd on port $port, probes every $iv s (timeout $tmo s), $reps repetitions of: $events"

	# present ADDR: 0 if in the answer, 1 if absent, 2 if no usable answer
	present() {
		local a
		a=$(dig @127.0.0.1 -p "$port" +norec +time=1 +tries=1 +short www.health.test A 2>/dev/null) || return 2
		[ -n "$a" ] || return 2
		grep -qx "$1" <<<"$a" && return 0
		return 1
	}
	# wait_until ADDR in|out T0 MAX_S -> WAITED = ms from T0 to the first
	# query (its send time) that showed the wanted state, or "timeout"
	wait_until() {
		local addr=$1 want=$2 t0=$3 max=$(( $4 * 1000 )) rc
		while :; do
			now_ms
			local tq=$NOW
			[ $((tq - t0)) -gt "$max" ] && { WAITED=timeout; return 1; }
			present "$addr"; rc=$?
			if { [ "$want" = in ] && [ $rc = 0 ]; } || { [ "$want" = out ] && [ $rc = 1 ]; }; then
				WAITED=$((tq - t0))
				return 0
			fi
			sleep 0.05
		done
	}
	all_up() { # bounded: waits until h1..h3 are up and answered
		local n
		for _ in $(seq $(( (iv * 8 + 15) * 5 ))); do
			n=$("${ctl[@]}" status 2>/dev/null | grep -cE '^h[123] +up ')
			if [ "$n" = 3 ] && present 192.0.2.1 && present 192.0.2.2 && present 192.0.2.3; then
				return 0
			fi
			sleep 0.2
		done
		return 1
	}
	local rep ev t0 ms hold_bad chk
	for rep in $(seq "$reps"); do
		for ev in $events; do
			if ! all_up; then
				log "$name rep $rep: nodes not all up; status:"
				"${ctl[@]}" status >&2
				echo "$name,$iv,$rep,$ev,setup,FAIL" >> "$OUT/results.csv"
				continue
			fi
			# a random phase against the probe schedule
			sleep "$(awk -v r=$RANDOM -v i="$iv" 'BEGIN { printf "%.3f", r / 32768 * i }')"
			echo "$ev" > "$D/mode2"
			now_ms; t0=$NOW
			local outmax=$(( iv * 4 + 5 ))
			if wait_until 192.0.2.2 out "$t0" "$outmax"; then
				ms=$WAITED
				[ "$ev" = down ] && target=2000 || target=3000
				[ "$iv" = 10 ] && target=21000
				[ "$ms" -le "$target" ] && chk=ok || chk=MISS
			else
				ms=timeout chk=FAIL
			fi
			echo "$name,$iv,$rep,${ev}_out,$ms,$chk" >> "$OUT/results.csv"
			log "$name rep $rep: $ev -> out of the answers after $ms ms ($chk)"
			# hold the failure for one interval: the node must stay out
			hold_bad=0
			now_ms; local th=$NOW
			while now_ms; [ $((NOW - th)) -lt $((iv * 1000)) ]; do
				present 192.0.2.2 && hold_bad=$((hold_bad + 1))
				sleep 0.2
			done
			[ "$hold_bad" = 0 ] || log "$name rep $rep: node answered $hold_bad times while still failing"
			echo "$name,$iv,$rep,${ev}_flaps,$hold_bad,$([ "$hold_bad" = 0 ] && echo ok || echo FAIL)" >> "$OUT/results.csv"
			# recovery: back only after three good rounds (>= 2 intervals)
			echo ok > "$D/mode2"
			now_ms; t0=$NOW
			if wait_until 192.0.2.2 in "$t0" $(( iv * 7 + 5 )); then
				ms=$WAITED
				[ "$ms" -ge $(( iv * 2000 )) ] && chk=ok || chk=EARLY
			else
				ms=timeout chk=FAIL
			fi
			echo "$name,$iv,$rep,${ev}_back,$ms,$chk" >> "$OUT/results.csv"
			log "$name rep $rep: fixed -> back in the answers after $ms ms ($chk)"
		done
	done
	"${ctl[@]}" log > "$D/audit.txt" 2>&1
	"${ctl[@]}" status > "$D/status.txt" 2>&1
	stop_pid "$GPID"
	for p in "${hpids[@]}"; do stop_pid "$p"; done
}

# Cost --------------------------------------------------------------------
task_ticks() { # PID -> lines "TID COMM TICKS" for every thread
	local t
	for t in /proc/"$1"/task/*; do
		local s
		s=$(cat "$t/stat" 2>/dev/null) || continue
		s=${s##*) }   # fields after comm
		set -- $s
		echo "${t##*/} $(cat "$t/comm" 2>/dev/null) $(( ${12} + ${13} ))"
	done
}
proc_ticks() { local s; s=$(cat /proc/"$1"/stat); s=${s##*) }; set -- $s; echo $(( ${12} + ${13} )); }
nginx_requests() { curl -s "http://127.0.0.1:$1/status" | awk 'NR == 3 { print $3 }'; }

cost() {
	command -v nginx >/dev/null || { echo "nginx missing (apt-get install nginx)" >&2; return 1; }
	command -v curl >/dev/null || { echo "curl missing" >&2; return 1; }
	local D=$OUT/cost port=$((BASE_PORT + 50)) np0=$((BASE_PORT + 60))
	local sport=$((np0 + NGINX_PORTS)) HZ
	HZ=$(getconf CLK_TCK)
	mkdir -p "$D/nginx/logs"
	{
		echo "daemon off; master_process on; worker_processes 1;"
		echo "pid $D/nginx/nginx.pid; error_log $D/nginx/error.log warn;"
		echo "events { worker_connections 8192; }"
		echo "http {"
		echo "  access_log off; keepalive_timeout 5;"
		echo "  server {"
		for i in $(seq 0 $((NGINX_PORTS - 1))); do echo "    listen 127.0.0.1:$((np0 + i)) backlog=4096;"; done
		echo "    location / { default_type text/plain; return 200 \"ok\"; }"
		echo "  }"
		echo "  server { listen 127.0.0.1:$sport; location / { stub_status; } }"
		echo "}"
	} > "$D/nginx/nginx.conf"
	nginx -p "$D/nginx" -c "$D/nginx/nginx.conf" >"$D/nginx/stdout.log" 2>&1 &
	local NPID=$!
	PIDS+=("$NPID")
	for _ in $(seq 50); do curl -s -o /dev/null "http://127.0.0.1:$np0/" && break; sleep 0.1; done
	curl -s "http://127.0.0.1:$np0/x" | grep -q ok || { echo "nginx did not start" >&2; cat "$D/nginx/"*.log >&2; return 1; }

	gslbd_conf "$D" "$port" ""
	# The table: NODES nodes, one HTTP probe each at the default 10 s,
	# spread over the nginx ports; 50 nodes per service row.
	python3 - "$NODES" "$np0" "$NGINX_PORTS" > "$D/table.json" <<'EOP'
import json, sys
n, p0, np = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
nodes, weights, services = [], [], []
for i in range(n):
    nodes.append({"id": "n%05d" % i, "addrs": ["10.%d.%d.%d" % (i >> 16, (i >> 8) & 255, i & 255)],
                  "region": "*", "isp": "*", "capacity": 1000, "pool": "primary", "admin": "auto",
                  "probes": ["http://127.0.0.1:%d/health/n%05d interval=10 timeout=2" % (p0 + i % np, i)]})
for s in range((n + 49) // 50):
    name = "s%03d.health.test" % s
    services.append({"name": name, "ttl": 60, "short_ttl": 10, "answers": 2,
                     "all_down": "open", "sticky": False})
    weights.append({"service": name, "region": "*", "isp": "*",
                    "weights": {"n%05d" % i: 10 for i in range(s * 50, min(n, s * 50 + 50))}})
json.dump({"version": 1, "services": services, "nodes": nodes, "weights": weights}, sys.stdout)
EOP
	local ctl=("$GSLBCTL" -c "$D/gslbd.conf")
	now_ms; local ta=$NOW
	"${ctl[@]}" apply "$D/table.json" > "$D/apply.txt" 2>&1 || { echo "apply failed:" >&2; cat "$D/apply.txt" >&2; return 1; }
	now_ms
	log "cost: applied $NODES nodes in $((NOW - ta)) ms; starting gslbd on port $port"
	gslbd_start "$D" "$port"
	now_ms; local tstart=$NOW
	# Settle: every node probed at least once, i.e. no node left in
	# "unknown" (bounded), then SETTLE s more.
	local seen=0 up=0
	for _ in $(seq 30); do
		sleep 2
		seen=$("${ctl[@]}" status 2>/dev/null | grep -cE '^n[0-9]+ +(up|derated|demoted) ')
		[ "$seen" -ge "$NODES" ] && break
	done
	now_ms
	log "cost: $seen of $NODES nodes probed after $(( (NOW - tstart) / 1000 )) s; settling $SETTLE s more"
	if [ "$PERF" = 1 ] && command -v perf >/dev/null; then
		# the profile is taken while settling, not in the measured window
		timeout 30 perf record -g -o "$D/perf.data" -p "$GPID" -- sleep 10 > "$D/perf-record.log" 2>&1
		sleep $(( SETTLE > 10 ? SETTLE - 10 : 0 ))
	else
		sleep "$SETTLE"
	fi
	"${ctl[@]}" status 2>/dev/null > "$D/status-before.txt"
	up=$(grep -cE '^n[0-9]+ +up ' "$D/status-before.txt")

	local r0 r1 p0 p1 io0 io1 log0 log1 sz0 sz1 tk0 tk1
	r0=$(nginx_requests "$sport")
	p0=$(proc_ticks "$GPID")
	tk0=$(task_ticks "$GPID")
	io0=$(grep -E '^(wchar|write_bytes)' /proc/"$GPID"/io | awk '{print $2}' | paste -sd' ')
	log0=$(grep -c ' -> ' "$D/gslbd.log")
	sz0=$(du -sk "$D/db" | cut -f1)
	now_ms; local t0=$NOW
	local nginx_t0
	nginx_t0=$(for c in $NPID $(pgrep -P "$NPID"); do proc_ticks "$c"; done | paste -sd+ | bc)
	log "cost: measuring $MEASURE s"
	sleep "$MEASURE"
	now_ms; local t1=$NOW
	r1=$(nginx_requests "$sport")
	p1=$(proc_ticks "$GPID")
	tk1=$(task_ticks "$GPID")
	io1=$(grep -E '^(wchar|write_bytes)' /proc/"$GPID"/io | awk '{print $2}' | paste -sd' ')
	log1=$(grep -c ' -> ' "$D/gslbd.log")
	sz1=$(du -sk "$D/db" | cut -f1)
	local nginx_t1
	nginx_t1=$(for c in $NPID $(pgrep -P "$NPID"); do proc_ticks "$c"; done | paste -sd+ | bc)
	local secs
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1000 }')
	{
		echo "nodes: $NODES (one HTTP probe each, interval 10 s, timeout 2 s), nginx ports: $NGINX_PORTS"
		echo "nodes up at the start of the window: $up of $NODES"
		echo "window: $secs s, clock ticks $HZ/s"
		awk -v a="$r0" -v b="$r1" -v s="$secs" 'BEGIN { printf "nginx requests: %d (%.1f /s, the probe rate)\n", b - a, (b - a) / s }'
		awk -v a="$p0" -v b="$p1" -v s="$secs" -v hz="$HZ" 'BEGIN { printf "gslbd process CPU: %.2f s = %.3f of one core\n", (b - a) / hz, (b - a) / hz / s }'
		awk -v a="$nginx_t0" -v b="$nginx_t1" -v s="$secs" -v hz="$HZ" 'BEGIN { printf "nginx CPU (master + workers): %.3f of one core\n", (b - a) / hz / s }'
		echo "per thread (tid comm cpu-fraction):"
		join <(sort <<<"$tk0") <(sort <<<"$tk1") | awk -v s="$secs" -v hz="$HZ" '
			{ d = ($5 - $3) / hz / s; line[NR] = sprintf("  %s %s %.3f", $1, $2, d); sum += d
			  if (d > best) { best = d; bi = NR } }
			END { for (i = 1; i <= NR; i++)
				print line[i] (i == bi ? "   <- the health thread (by elimination: without DNS load the main thread and the workers are idle)" : "")
			      printf "  (sum of the threads present at both ends: %.3f)\n", sum }'
		set -- $io0; local w0=$1 b0=$2; set -- $io1
		awk -v a="$w0" -v b="$1" -v c="$b0" -v d="$2" -v s="$secs" 'BEGIN {
			printf "gslbd write syscalls bytes (wchar): %.1f KB/s; block-layer writes (write_bytes): %.1f KB/s\n",
			       (b - a) / 1024 / s, (d - c) / 1024 / s }'
		awk -v a="$log0" -v b="$log1" -v s="$secs" 'BEGIN { printf "node state changes logged by gslbd in the window: %d (%.1f /s)\n", b - a, (b - a) / s }'
		echo "LMDB directory: $sz0 KB -> $sz1 KB"
	} > "$D/cost.txt"
	cat "$D/cost.txt" | tee -a "$OUT/run.log" >&2
	"${ctl[@]}" status 2>/dev/null > "$D/status-after.txt"
	{
		echo "node states at the end of the window:"
		awk '/^n[0-9]+ / { print $2 }' "$D/status-after.txt" | sort | uniq -c
		echo "last probe time (ms) as measured by gslbd, at the end of the window:"
		grep -oE '^n[0-9]+ .* ok [0-9]+ms' "$D/status-after.txt" | grep -oE '[0-9]+ms$' | tr -d ms | sort -n |
			awk '{ v[NR] = $1 } END { if (NR) printf "  n %d, median %d, p90 %d, max %d\n", NR, v[int((NR + 1) / 2)], v[int(NR * 0.9)], v[NR] }'
	} >> "$D/cost.txt"
	tail -n 6 "$D/cost.txt" | tee -a "$OUT/run.log" >&2
	stop_pid "$GPID"
	stop_pid "$NPID" QUIT
}

summary() {
	{
		echo "| scenario | event | n | median (ms) | max (ms) | target | checks |"
		echo "|---|---|--:|--:|--:|---|---|"
		awk -F, 'NR > 1 && $5 ~ /^[0-9]+$/ && $4 !~ /_flaps$/ { k = $1 " | " $4; v[k] = v[k] " " $5; n[k]++
			if ($6 != "ok") bad[k]++ }
			NR > 1 && $5 !~ /^[0-9]+$/ { k = $1 " | " $4; n[k]++; bad[k]++ }
			NR > 1 && $4 ~ /_flaps$/ && $5 != 0 { flap[$1 " | " $4]++ }
			END { for (k in v) print k "\t" n[k] "\t" bad[k] + 0 "\t" v[k] }' "$OUT/results.csv" |
		sort | while IFS=$'\t' read -r k n bad vals; do
			read -ra a <<<"$vals"
			sorted=($(printf '%s\n' "${a[@]}" | sort -n))
			cnt=${#sorted[@]}
			if [ $((cnt % 2)) = 1 ]; then med=${sorted[$((cnt / 2))]}
			else med=$(( (sorted[cnt / 2 - 1] + sorted[cnt / 2]) / 2 )); fi
			max=${sorted[$((cnt - 1))]}
			case "$k" in
			*react10*_out) tgt="≤ 21000" ;;
			*down_out) tgt="≤ 2000" ;;
			*_out) tgt="≤ 3000" ;;
			*react10*_back) tgt="≥ 20000 (2 intervals)" ;;
			*_back) tgt="≥ 2000 (2 intervals)" ;;
			esac
			echo "| ${k/ | / | } | $n | $med | $max | $tgt | $((n - bad))/$n ok |"
		done
		awk -F, '$4 ~ /_flaps$/ { t++; if ($5 != 0) f++ } END { if (t) printf "\nNode answered while still failing: %d of %d holds.\n", f, t }' "$OUT/results.csv"
	} > "$OUT/summary.md"
	[ -f "$OUT/cost/cost.txt" ] && { echo; echo '```'; cat "$OUT/cost/cost.txt"; echo '```'; } >> "$OUT/summary.md"
	cat "$OUT/summary.md"
}

for part in $PARTS; do
	case $part in
	react1) react react1 1 0.5 0.3 0.4 "$REPS1" "down err slowerr" ;;
	react10) react react10 10 2 2 3 "$REPS10" "down err" ;;
	cost) cost ;;
	*) echo "unknown part $part" >&2; exit 2 ;;
	esac
done
summary
log "done: $OUT"
