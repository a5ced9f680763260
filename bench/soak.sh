#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/soak.sh: an hour of mixed load on the real gslbd while its weights
# change every second and its probes flap, recording memory and errors
# (docs/ROBUSTNESS.md, "Soak").
#
#   gslbd      the demo zone, geoip/demo.mmdb, the demo weight table, the
#              statistics endpoint, 2 workers, on 127.0.0.1@15601
#   load       dnsperf over UDP at UDP_QPS (default 4000) replaying queries
#              with EDNS Client Subnet from 1,000 subnets over the demo
#              networks (GSLB names, static names, NXDOMAIN, AAAA), and a
#              second dnsperf over TCP at TCP_QPS (default 200)
#   changes    every second a gslbctl weight change on the cn-bj rows
#   probes     two real HTTP probe targets (tests/integ/httpd.py) whose
#              answers flip between ok and 503 every FLAP seconds (10), so
#              the health thread demotes and restores nodes all along
#   samples    every 60 s: VmRSS and VmHWM of gslbd, split by /proc/PID/smaps
#              into the store's memory map (data.mdb), anonymous memory
#              (heap, thread stacks) and other files; data.mdb's size; the
#              queries answered, the change count, error lines
#   keeps      database.audit-keep and health.history-keep short (AUDIT_KEEP,
#              HISTORY_KEEP, default 10m) so that trimming holds the store's
#              size and any growth left is the process's own
#
# At the end: dig checks of the answers, the store's export, gslbd's log
# scanned for errors, and a summary.md.  Every process started here is
# stopped by PID on exit.  Knobs: SECONDS_TOTAL (3600), UDP_QPS, TCP_QPS,
# FLAP, AUDIT_KEEP, HISTORY_KEEP, GSLBD, GSLBCTL.  Output: bench/out/soak-DATE/.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
TOTAL=${SECONDS_TOTAL:-3600}
UDP_QPS=${UDP_QPS:-4000}
TCP_QPS=${TCP_QPS:-200}
FLAP=${FLAP:-10}
AUDIT_KEEP=${AUDIT_KEEP:-10m}
HISTORY_KEEP=${HISTORY_KEEP:-600}
PORT=15601 SPORT=15602 H1=15603 H2=15604
OUT=$ROOT/bench/out/soak-$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$OUT"
# A copy of the binaries: a rebuild during the hour must not change them.
cp "${GSLBD:-$ROOT/build/gslbd}" "$OUT/gslbd"
cp "${GSLBCTL:-$ROOT/build/gslbctl}" "$OUT/gslbctl"
git -C "$ROOT" rev-parse HEAD > "$OUT/commit.txt" 2>/dev/null || true
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
trap cleanup EXIT

cp zones/cdn.example.test.zone "$OUT/"
cat > "$OUT/gslbd.conf" <<EOF
server:
  listen: [ "127.0.0.1@$PORT" ]
  workers: 2
  identity: soak.ns
database:
  path: db
  audit-keep: $AUDIT_KEEP
zones:
  - name: cdn.example.test
    file: cdn.example.test.zone
geoip:
  database: $ROOT/geoip/demo.mmdb
health:
  interval: 2
  timeout: 1
  settle: 30
  history-keep: $HISTORY_KEEP
stats:
  listen: [ "127.0.0.1@$SPORT" ]
EOF
CTL() { "$OUT/gslbctl" -c "$OUT/gslbd.conf" "$@"; }
CTL apply zones/demo-gslb.json >/dev/null
for h in $H1 $H2; do
	echo ok > "$OUT/mode$h"
	python3 tests/integ/httpd.py "$h" "$OUT/mode$h" 0.6 $((TOTAL + 300)) >/dev/null 2>&1 &
	PIDS+=($!)
done
CTL node set bj-ct-2 --probe "http://127.0.0.1:$H1/ interval=2" >/dev/null
CTL node set gd-cm-1 --probe "http://127.0.0.1:$H2/ interval=2" >/dev/null

"$OUT/gslbd" -c "$OUT/gslbd.conf" >"$OUT/gslbd.log" 2>&1 &
G=$!
PIDS+=($G)
for _ in $(seq 100); do
	dig @127.0.0.1 -p "$PORT" +time=1 +tries=1 id.server CH TXT >/dev/null 2>&1 && break
	sleep 0.1
done

# Queries: 1,000 ECS /24s over the demo networks and outside them.
python3 - "$OUT/queries.txt" <<'EOP'
import random, sys
random.seed(11)
nets = ["36.110", "123.112", "123.120", "14.16", "120.196", "112.64", "198.51", "203.0", "8.8", "1.2"]
names = [("www.cdn.example.test", "A")] * 5 + [("video.cdn.example.test", "A")] * 2 + \
        [("www.cdn.example.test", "AAAA"), ("api.cdn.example.test", "A"),
         ("static.cdn.example.test", "A"), ("img.cdn.example.test", "A"),
         ("nope.cdn.example.test", "A"), ("x.edge.cdn.example.test", "A")]
with open(sys.argv[1], "w") as f:
    for i in range(1000):
        n, t = random.choice(names)
        net = random.choice(nets)
        f.write("%s %s %s.%d.0/24\n" % (n, t, net, random.randrange(256)))
EOP
python3 bench/wireq.py < "$OUT/queries.txt" > "$OUT/queries.bin"
dnsperf -s 127.0.0.1 -p "$PORT" -B -d "$OUT/queries.bin" -c 8 -q 200 -Q "$UDP_QPS" \
	-l "$TOTAL" > "$OUT/dnsperf-udp.txt" 2>&1 &
PIDS+=($!)
U=$!
dnsperf -s 127.0.0.1 -p "$PORT" -m tcp -B -d "$OUT/queries.bin" -c 4 -q 20 -Q "$TCP_QPS" \
	-l "$TOTAL" > "$OUT/dnsperf-tcp.txt" 2>&1 &
PIDS+=($!)
Tq=$!

metric() { curl -s "http://127.0.0.1:$SPORT/metrics" 2>/dev/null | awk -v m="$1" '$1 == m { print $2 }'; }
# RSS of gslbd by kind of mapping: the store's map, anonymous, other files.
smaps() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { f = (NF >= 6) ? $6 : "" }
	     /^Rss:/ { if (f ~ /data\.mdb$/) m += $2; else if (f == "" || f ~ /^\[/) a += $2; else o += $2 }
	     END { printf "%d,%d,%d", m, a, o }' /proc/$G/smaps
}
echo "time_s,rss_kib,hwm_kib,map_kib,anon_kib,files_kib,db_bytes,queries_udp,queries_tcp,changes,log_errors" > "$OUT/samples.csv"
start=$(date +%s)
changes=0
next_sample=0
next_flap=$FLAP
mode=ok
while :; do
	now=$(( $(date +%s) - start ))
	[ "$now" -ge "$TOTAL" ] && break
	kill -0 "$G" 2>/dev/null || { echo "gslbd died at $now s" >> "$OUT/errors.txt"; break; }
	w=$(( 50 + RANDOM % 100 ))
	CTL weight set www.cdn.example.test --region cn-bj --isp ctcc bj-ct-1=$w bj-ct-2=50 \
		>/dev/null 2>>"$OUT/ctl-errors.txt" && changes=$((changes + 1))
	if [ "$now" -ge "$next_flap" ]; then
		mode=$([ "$mode" = ok ] && echo err || echo ok)
		echo "$mode" > "$OUT/mode$H1"
		echo "$mode" > "$OUT/mode$H2"
		next_flap=$((next_flap + FLAP))
	fi
	if [ "$now" -ge "$next_sample" ]; then
		rss=$(awk '/^VmRSS/ { print $2 }' /proc/$G/status)
		hwm=$(awk '/^VmHWM/ { print $2 }' /proc/$G/status)
		echo "$now,$rss,$hwm,$(smaps),$(stat -c %s "$OUT/db/data.mdb"),$(metric 'gslbd_queries_total{transport="udp"}'),$(metric 'gslbd_queries_total{transport="tcp"}'),$changes,$(grep -c ': error: ' "$OUT/gslbd.log" || true)" >> "$OUT/samples.csv"
		next_sample=$((next_sample + 60))
	fi
	sleep 1
done
wait "$U" 2>/dev/null || true
wait "$Tq" 2>/dev/null || true
echo ok > "$OUT/mode$H1"; echo ok > "$OUT/mode$H2"
sleep 10

# The answers are still right.
{
	echo "# final checks"
	dig @127.0.0.1 -p "$PORT" www.cdn.example.test +subnet=14.16.1.0/24 +short
	dig @127.0.0.1 -p "$PORT" static.cdn.example.test +short +tcp
	dig @127.0.0.1 -p "$PORT" nope.cdn.example.test | grep -o 'status: [A-Z]*'
	CTL status
} > "$OUT/final.txt" 2>&1
kill "$G"; wait "$G" 2>/dev/null || true

python3 - "$OUT" <<'EOP'
import csv, re, sys
out = sys.argv[1]
rows = list(csv.DictReader(open(out + "/samples.csv")))
def dn(path):
    t = open(path).read()
    m = lambda k: re.search(k + r"\s*:\s*(\d+)", t)
    return {k: int(m(k).group(1)) if m(k) else None for k in ("Queries sent", "Queries completed", "Queries lost")}
u, t = dn(out + "/dnsperf-udp.txt"), dn(out + "/dnsperf-tcp.txt")
warm = rows[min(5, len(rows) - 1)]
last = rows[-1]
final = open(out + "/final.txt").read()
errs = sum(1 for l in open(out + "/gslbd.log") if ": error: " in l)
with open(out + "/summary.md", "w") as f:
    f.write("| figure | value |\n|---|---|\n")
    f.write("| duration | %s s |\n" % last["time_s"])
    f.write("| UDP queries sent / completed / lost | %s / %s / %s |\n" % (u["Queries sent"], u["Queries completed"], u["Queries lost"]))
    f.write("| TCP queries sent / completed / lost | %s / %s / %s |\n" % (t["Queries sent"], t["Queries completed"], t["Queries lost"]))
    f.write("| weight changes committed | %s |\n" % last["changes"])
    f.write("| RSS after warm-up (%s s) | %s KiB |\n" % (warm["time_s"], warm["rss_kib"]))
    f.write("| RSS at the end | %s KiB (%+d KiB) |\n" % (last["rss_kib"], int(last["rss_kib"]) - int(warm["rss_kib"])))
    f.write("| RSS high-water mark | %s KiB |\n" % last["hwm_kib"])
    for k, what in (("map_kib", "store map (data.mdb)"), ("anon_kib", "anonymous (heap, stacks)"), ("files_kib", "other files (libraries, mmdb)")):
        f.write("| RSS %s after warm-up / at the end | %s / %s KiB (%+d KiB) |\n" % (what, warm[k], last[k], int(last[k]) - int(warm[k])))
    f.write("| data.mdb after warm-up / at the end | %s / %s bytes |\n" % (warm["db_bytes"], last["db_bytes"]))
    f.write("| error lines in gslbd's log | %d |\n" % errs)
    f.write("| final answers | %s |\n" % " ".join(l for l in final.splitlines()[1:4]))
print(open(out + "/summary.md").read())
EOP
echo "soak: output in $OUT"
