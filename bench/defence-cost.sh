#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/defence-cost.sh: what the defences cost, measured in one run
# (docs/BENCHMARKS.md, "Defence cost"):
#   cookies   server CPU per answered UDP query with DNS Cookies on
#             against off: every query carries a client cookie and a
#             valid server cookie of the server it goes to (the steady
#             state of a resolver with cookies), dnsperf -E 10:...;
#   hoard     TCP queries (dnsperf -m tcp) while one source holds twice
#             tcp-max-clients with connections that each asked once and
#             reopens each one closed (tests/integ/tcp_hoard.py, "ask"),
#             against no attack: queries per second, lost queries and
#             server CPU per answered query.
#
# Three gslbd servers, one worker each, up for the whole run, each in a
# cpuacct group of its own (bench/cpu.sh, as bench/compare.sh does),
# every thread pinned to the server CPU, dnsperf (and the hoarder) on the
# other: gslbd_cookie (cookies on), gslbd_nocookie (cookies.enable off),
# gslbd_tcp (tcp-max-clients 100, tcp-max-per-source 0: the hoarder is
# not stopped by the per-source limit, only by the pressure logic).
# Within each round every case runs in turn, so noise from other work on
# the machine lands on all of them.  Server CPU per answered query = the
# group's cpuacct.usage delta (ns, exact) / completed queries.
#
# Knobs: RUNS (5), DURATION (8), CLIENTS (20), OUTSTANDING (200), PLACEMENT
# ("0:1", server CPU:dnsperf CPU), BASE_PORT (31000; servers at +1..+3,
# the cookie servers' stats endpoints at +11, +12),
# GSLBD, CG_PREFIX (gslbd-defcost-).  Needs root, cgroup v1 cpuacct,
# dnsperf, dig.  Run it under `flock /tmp/gslbd-bench.lock`.
#
# Output: bench/out/defence-cost-YYYYmmdd-HHMMSS/ (and
# bench/out/defence-cost-latest): results.csv, summary.md, raw/.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS=${RUNS:-5}
DURATION=${DURATION:-8}
CLIENTS=${CLIENTS:-20}
OUTSTANDING=${OUTSTANDING:-200}
PLACEMENT=${PLACEMENT:-0:1}
BASE_PORT=${BASE_PORT:-31000}
GSLBD=${GSLBD:-$ROOT/build/gslbd}
export CG_PREFIX=${CG_PREFIX:-gslbd-defcost-}
SCPU=${PLACEMENT%:*} CCPU=${PLACEMENT#*:}
. bench/cpu.sh
die() { echo "bench: $*" >&2; exit 1; }
for t in dnsperf dig taskset setsid python3 curl; do
  command -v "$t" >/dev/null || die "$t not found"
done
[ -x "$GSLBD" ] || die "$GSLBD not built (run make)"
cg_check || exit 1

summarise() {  # summarise CSV
  python3 - "$1" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
by = {}
for r in rows:
    by.setdefault(r["case"], []).append(r)
def med(case, col):
    return statistics.median(float(r[col]) for r in by[case])
n = max(int(r["run"]) for r in rows)
print("Median of %d interleaved runs; server CPU per answered query in µs "
      "(cpuacct, every thread of the server)." % n)
print()
print("| case | qps | lost | server µs/query: runs | median |")
print("|---|--:|--:|---|--:|")
for c in ["cookie", "nocookie", "tcp", "tcp_hoard"]:
    if c not in by:
        continue
    runs = " ".join("%.2f" % float(r["server_us_per_query"]) for r in by[c])
    print("| %s | %.0f | %.0f | %s | %.2f |" % (c, med(c, "qps"), med(c, "lost"),
                                              runs, med(c, "server_us_per_query")))
print()
if "cookie" in by and "nocookie" in by:
    print("Cookies on ÷ off, server CPU per query: %.3f" %
          (med("cookie", "server_us_per_query") / med("nocookie", "server_us_per_query")))
if "tcp" in by and "tcp_hoard" in by:
    print("TCP under the held-connections attack ÷ without: qps %.3f, "
          "server CPU per query %.3f; hoarder connections opened per run "
          "(median): %.0f" %
          (med("tcp_hoard", "qps") / med("tcp", "qps"),
           med("tcp_hoard", "server_us_per_query") / med("tcp", "server_us_per_query"),
           med("tcp_hoard", "hoard_opened")))
EOF
}
if [ "${1:-}" = --summary ]; then summarise "$2/results.csv"; exit 0; fi

OUT=$ROOT/bench/out/defence-cost-$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$OUT/raw"
ln -sfn "$(basename "$OUT")" "$ROOT/bench/out/defence-cost-latest"
declare -A PORT=([gslbd_cookie]=$((BASE_PORT + 1)) [gslbd_nocookie]=$((BASE_PORT + 2))
                 [gslbd_tcp]=$((BASE_PORT + 3)))
SERVERS="gslbd_cookie gslbd_nocookie gslbd_tcp"
trap 'cg_stop_all' EXIT

setup() {  # setup NAME EXTRA-YAML
  local d=$OUT/$1
  mkdir -p "$d/db"
  cat > "$d/z.zone" <<'EOZ'
$ORIGIN bench.test.
$TTL 300
@       IN SOA ns1 hostmaster 1 3600 600 86400 300
@       IN NS  ns1
ns1     IN A   192.0.2.53
www     IN A   192.0.2.10
EOZ
  cat > "$d/gslbd.conf" <<EOC
server:
  listen: [ "127.0.0.1@${PORT[$1]}" ]
  workers: 1
  identity: ""
  version: ""
$2
database:
  path: $d/db
zones:
  - name: bench.test
    file: z.zone
EOC
}
setup gslbd_cookie ""
setup gslbd_nocookie ""
printf 'cookies:\n  enable: off\n' >> "$OUT/gslbd_nocookie/gslbd.conf"
# Both cookie servers with a stats endpoint (the same on both), read once
# at the end: every cookie query counted valid.
for s in gslbd_cookie gslbd_nocookie; do
  printf 'stats:\n  listen: [ "127.0.0.1@%s" ]\n' $((PORT[$s] + 10)) >> "$OUT/$s/gslbd.conf"
done
setup gslbd_tcp "  tcp-max-clients: 100
  tcp-max-per-source: 0
  tcp-idle-timeout: 10"
for s in $SERVERS; do
  cg_create "$s" || die "cannot create cgroup $(cg_dir "$s")"
  ( cd "$OUT/$s" && cg_exec "$s" setsid taskset -c "$SCPU" "$GSLBD" -c gslbd.conf ) \
    > "$OUT/$s/log" 2>&1 < /dev/null &
done
for s in $SERVERS; do
  for _ in $(seq 100); do
    dig @127.0.0.1 -p "${PORT[$s]}" +time=1 +tries=1 www.bench.test A >/dev/null 2>&1 && break
    sleep 0.1
  done
  dig @127.0.0.1 -p "${PORT[$s]}" +time=1 +tries=1 www.bench.test A >/dev/null ||
    die "$s did not start: $(cat "$OUT/$s/log")"
  cg_pin "$s" "$SCPU" || die "$s: cannot pin to CPU $SCPU"
done
cg_create dnsperf || die "cannot create cgroup $(cg_dir dnsperf)"
echo "www.bench.test A" > "$OUT/q.txt"
# A whole cookie (client + server) that gslbd_cookie validates: what a
# resolver sends once it has one.  gslbd_nocookie ignores the option.
cookie() {  # cookie NAME
  dig @127.0.0.1 -p "${PORT[$1]}" +time=1 +tries=1 +cookie=0123456789abcdef \
    www.bench.test A | sed -nE 's/^; COOKIE: ([0-9a-f]{48}).*/\1/p'
}
CK=$(cookie gslbd_cookie)
[ ${#CK} = 48 ] || die "gslbd_cookie gave no server cookie"
{ echo "settings: RUNS=$RUNS DURATION=$DURATION CLIENTS=$CLIENTS OUTSTANDING=$OUTSTANDING PLACEMENT=$PLACEMENT"
  echo "gslbd: $("$GSLBD" --version 2>&1 | head -1) ($GSLBD)"
  echo "kernel: $(uname -r); load before: $(cut -d' ' -f1-3 /proc/loadavg)"; } > "$OUT/env.txt"

CSV=$OUT/results.csv
echo "case,run,qps,sent,completed,lost,server_cpu_ns,server_us_per_query,hoard_opened" > "$CSV"
measure() {  # measure CASE RUN
  local c=$1 run=$2 s args raw u0 u1 hp= opened=0
  raw=$OUT/raw/$c-$run.txt
  case $c in
    cookie) s=gslbd_cookie; args=(-m udp -E "10:$CK") ;;
    nocookie) s=gslbd_nocookie; args=(-m udp -E "10:$CK") ;;
    tcp|tcp_hoard) s=gslbd_tcp; args=(-m tcp) ;;
  esac
  if [ "$c" = tcp_hoard ]; then
    # Twice the table (200 held connections), for the run and a second
    # more, on the dnsperf CPU.
    ( cd tests/integ && PORT=${PORT[$s]} PYTHONPATH=. exec taskset -c "$CCPU" \
        python3 tcp_hoard.py hoard $((DURATION + 2)) 200 ask ) > "$raw.hoard" 2>&1 &
    hp=$!
    sleep 1.5
  fi
  u0=$(cg_usage "$s")
  ( cg_exec dnsperf taskset -c "$CCPU" dnsperf -s 127.0.0.1 -p "${PORT[$s]}" \
      -l "$DURATION" -c "$CLIENTS" -T 1 -q "$OUTSTANDING" -t 2 -d "$OUT/q.txt" \
      "${args[@]}" ) > "$raw" 2>&1 < /dev/null || { cat "$raw" >&2; die "dnsperf failed: $c"; }
  u1=$(cg_usage "$s")
  if [ -n "$hp" ]; then
    wait "$hp" || true
    opened=$(sed -nE 's/.*opened=([0-9]+).*/\1/p' "$raw.hoard")
  fi
  awk -v c="$c" -v r="$run" -v du=$((u1 - u0)) -v op="${opened:-0}" '
    /Queries sent:/      { sent = $3 }
    /Queries completed:/ { done = $3 }
    /Queries lost:/      { lost = $3 }
    /Queries per second:/{ qps = $4 }
    END { printf "%s,%d,%.0f,%d,%d,%d,%.0f,%.4f,%d\n", c, r, qps, sent, done, lost,
                 du, (done > 0 ? du / 1000 / done : 0), op }' "$raw" | tee -a "$CSV" >&2
}
for run in $(seq "$RUNS"); do
  for c in ${CASES:-cookie nocookie tcp tcp_hoard}; do measure "$c" "$run"; done
done
# The cookies were all valid: counted so at the server.
valid=$(curl -s "http://127.0.0.1:$((PORT[gslbd_cookie] + 10))/metrics" |
  awk '$1 == "gslbd_cookie_queries_total{transport=\"udp\",kind=\"valid\"}" { print $2 }')
{ echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "gslbd_cookie: $valid queries with a valid server cookie, of $(awk -F, '$1 == "cookie" { n += $5 } END { print n }' "$CSV") completed"; } >> "$OUT/env.txt"
tail -1 "$OUT/env.txt" >&2
summarise "$CSV" | tee "$OUT/summary.md"
