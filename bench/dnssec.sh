#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# bench/dnssec.sh: what online signing costs, server CPU per answered
# query with DO, gslbd signed against the same answers unsigned and
# against knotd and PowerDNS signing online (docs/BENCHMARKS.md, "Online
# signing, CPU per answer").  The machinery is bench/compare.sh's: every
# server in a cpuacct group of its own (bench/cpu.sh), every thread of it
# pinned to the server CPU of the placement, dnsperf in a group of its
# own on the other CPU, both placements, RUNS rounds with every workload
# against every server in turn; server CPU per answered query = the
# group's cpuacct.usage delta / completed queries.
#
# Servers (one worker each, all up for the whole run, the inputs of
# bench/compare.sh: the demo zone, bench.test, the generated GeoIP
# database and weight table):
#   gslbd      unsigned
#   gslbd_sig  the same, both zones signed (`gslbctl dnssec enable`: one
#              ECDSA P-256 key each, keystore of the run's own)
#   knotd      `dnssec-signing: off` and mod-onlinesign (P-256, its
#              default policy); set.bench.test from mod-geoip (geodb,
#              key [ region ]) before it when knot-module-geoip is there
#   pdns       pdns_server, bind backend, `bind-dnssec-db` and
#              `pdnsutil secure-zone` (P-256), signing live; its packet
#              cache off (cache-ttl=0) so that every answer is built, as
#              the others build theirs; its signature cache on
#   pdns_plain the same without DNSSEC (static only): what signing adds
#              to PowerDNS's own answer
# Workloads, every query with DO (dnsperf -c $CLIENTS -q $OUTSTANDING
# -T 1 -t 2 -l $DURATION):
#   static     static.cdn.example.test A, dnsperf -D; the signature
#              cache warm (one RRset repeated)
#   geo-pick   www.bench.test A, ECS from the 288 /24s of compare.sh,
#              weighted pick of one node (bench/wireq.py --do: dnsperf's
#              -D does not reach -B messages); gslbd only (neither knotd
#              nor PowerDNS picks by weight within a location)
#   geo-set    set.bench.test A, the same ECS: every node of the region;
#              gslbd and knotd
#   nx         a random-name flood: NXNAMES (400000) unique names
#              RANDOM.cdn.example.test A, -D, so no signature cache
#              helps; no server rate limits (gslbd has no rrl section)
# Before measuring, every server's signed answers are checked with dig
# (RRSIGs present, the right addresses), and for nx the signatures a new
# name costs are counted: the RRSIGs of the answer to a second random
# name that differ from the first's (ECDSA signatures are randomised, so
# a signature made again differs; one from a cache does not).
#
# Needs: root, cgroup v1 cpuacct, 2 CPUs, dnsperf, dig, python3, perl,
# gslbd built; for the peers knot (knotd, knotc) with knot-module-geoip,
# pdns-server and pdns-backend-bind (pdns_server, pdnsutil; sqlite3 for
# the DNSSEC database; `contrib/deps.sh --bench` installs them all).
# None of these is needed by the test suite.
# Run it under `flock /tmp/gslbd-bench.lock`.
#
# Knobs: RUNS (3), DURATION (8), CLIENTS (20), OUTSTANDING (200),
# BASE_PORT (30000; servers at +1..+5), SERVERS ("gslbd gslbd_sig knotd
# pdns pdns_plain"), WORKLOADS ("static geo-pick geo-set nx"), PLACEMENTS ("0:1
# 1:0"), NXNAMES (400000), PERF (1: after the runs, `perf record` of
# gslbd and gslbd_sig under the static, geo-pick and nx workloads, on
# the last placement: the shares per object and the user-space symbols
# in perf-SERVER-WORKLOAD.txt), GSLBD, GSLBCTL, CG_PREFIX (gslbd-dnssec-).
#
# Output: bench/out/dnssec-YYYYmmdd-HHMMSS/ (bench/out/dnssec-latest):
# results.csv, summary.md, env.txt, fresh.txt, raw/, configurations and
# logs.  `bench/dnssec.sh --summary DIR` prints the tables again.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BASE_PORT=${BASE_PORT:-30000}
SERVERS=${SERVERS:-"gslbd gslbd_sig knotd pdns pdns_plain"}
WORKLOADS=${WORKLOADS:-"static geo-pick geo-set nx"}
NXNAMES=${NXNAMES:-400000}
PERF=${PERF:-1}
export CG_PREFIX=${CG_PREFIX:-gslbd-dnssec-}
ZONE=cdn.example.test
. bench/lib.sh
compare_knobs

summarise() {  # summarise CSV
  python3 - "$(dirname "$1")" "$ROOT/bench" <<'EOF'
import os, sys
sys.path.insert(0, sys.argv[2])
from cgsum import Runs, fmt as f
d = sys.argv[1]
fresh = {}
if os.path.exists(os.path.join(d, "fresh.txt")):
    for l in open(os.path.join(d, "fresh.txt")):
        k, v = l.split()
        fresh[k] = int(v)
WL = {"static": "static A, DO, one RRset repeated",
      "geo-pick": "ECS → weighted pick, DO (288 subnets)",
      "geo-set": "ECS → address set, DO (288 subnets)",
      "nx": "random-name NXDOMAIN flood, DO"}
SV = ["gslbd", "gslbd_sig", "knotd", "pdns", "pdns_plain"]
R = Runs(os.path.join(d, "results.csv"), SV, list(WL))
servers, wls, places, nruns, med, per_query = R.servers, R.wls, R.places, R.nruns, R.med, R.per_query
def ratio(a, b, w):
    x, y = per_query(a, w), per_query(b, w)
    return x / y if x is not None and y else None
print("Each figure: per placement the median of %d run(s), then the mean of the "
      "%d placement(s) (server CPU:dnsperf CPU = %s)." % (nruns, len(places), ", ".join(places)))
print()
print("Server CPU per answered query, ratios (lower is better for gslbd_sig):")
print()
print("| workload | gslbd_sig ÷ gslbd (signed ÷ unsigned) | per placement | gslbd_sig ÷ knotd | gslbd_sig ÷ pdns |")
print("|---|--:|---|--:|--:|")
for w in wls:
    pp = []
    for p in places:
        a, b = med("gslbd_sig", w, p), med("gslbd", w, p)
        pp.append("%s %s" % (p, f(a / b if a is not None and b else None)))
    print("| %s | %s | %s | %s | %s |" % (WL.get(w, w), f(ratio("gslbd_sig", "gslbd", w)),
          ", ".join(pp), f(ratio("gslbd_sig", "knotd", w)), f(ratio("gslbd_sig", "pdns", w))))
print()
print("Absolute server CPU per answered query (µs), mean of the placements:")
print()
print("| workload | " + " | ".join(servers) + " |")
print("|---|" + "--:|" * len(servers))
for w in wls:
    print("| %s | %s |" % (WL.get(w, w), " | ".join(f(per_query(s, w)) for s in servers)))
if "nx" in wls:
    print()
    print("Random-name flood: answers per second of one core (10^6 ÷ µs per answer), "
          "signatures a new name costs (fresh.txt) and signatures made per second of one core:")
    print()
    print("| server | µs per answer | answers / core-s | signatures per new name | signatures / core-s |")
    print("|---|--:|--:|--:|--:|")
    for s in servers:
        u = per_query(s, "nx")
        if u is None:
            continue
        n = fresh.get(s)
        print("| %s | %s | %.0f | %s | %s |" % (s, f(u), 1e6 / u, "—" if n is None else n,
              "—" if n is None else "%.0f" % (n * 1e6 / u)))
print()
R.per_run(client_cpu=False)
EOF
}

summary_mode "$@"

# --- checks ------------------------------------------------------------------
has() { case " $SERVERS " in *" $1 "*) return 0 ;; esac; return 1; }
for t in dnsperf dig taskset setsid perl python3; do
  command -v "$t" >/dev/null || die "$t not found"
done
[ -x "$GSLBD" ] && [ -x "$GSLBCTL" ] || die "gslbd/gslbctl not built (run make)"
has knotd && { command -v knotd >/dev/null && command -v knotc >/dev/null || die "knotd not found (Debian: knot)"; }
{ has pdns || has pdns_plain; } && { command -v pdns_server >/dev/null && command -v pdnsutil >/dev/null ||
  die "pdns_server not found (Debian: pdns-server pdns-backend-bind)"; }
[ "$(nproc)" -ge 2 ] || die "needs 2 CPUs (server on one, dnsperf on the other)"
[ -n "$CPU_CG" ] || die "needs root and cgroup v1 cpuacct at $CG_ROOT"
[[ $BASE_PORT =~ ^[0-9]+$ ]] && [ "$BASE_PORT" -ge 1024 ] && [ "$BASE_PORT" -le 65500 ] ||
  die "BASE_PORT must be a port from 1024 to 65500 (servers use BASE_PORT+1..5)"

OUT=$ROOT/bench/out/dnssec-$(date +%Y%m%d-%H%M%S)
mkdir -p "$OUT/raw"
ln -sfn "$(basename "$OUT")" "$ROOT/bench/out/dnssec-latest"
i=0
for s in $SERVERS; do i=$((i + 1)); PORT[$s]=$((BASE_PORT + i)); done

{ env_info $SERVERS
  { has pdns || has pdns_plain; } && echo "pdns: $(dpkg-query -W -f '${Version}' pdns-server 2>/dev/null)"
  echo "knot-module-geoip: $(dpkg-query -W -f '${Version}' knot-module-geoip 2>/dev/null || echo none)"
  echo "settings: RUNS=$RUNS DURATION=$DURATION CLIENTS=$CLIENTS OUTSTANDING=$OUTSTANDING PLACEMENTS='$PLACEMENTS' WORKLOADS='$WORKLOADS' SERVERS='$SERVERS' NXNAMES=$NXNAMES"
} > "$OUT/env.txt"

# --- inputs ----------------------------------------------------------------
echo "bench: generating inputs in $OUT" >&2
GEN="python3 $ROOT/bench/gslbgen.py"
compare_inputs "$OUT" "$ZONE"
for q in geo-set geo-pick; do python3 bench/wireq.py --do < "$OUT/$q.txt" > "$OUT/$q-do.bin"; done
python3 - "$NXNAMES" "$ZONE" > "$OUT/nx.txt" <<'EOF'
import random, sys
r = random.Random(7)
seen = set()
while len(seen) < int(sys.argv[1]):
    seen.add("%012x" % r.getrandbits(48))
for n in seen:
    print("%s.%s A" % (n, sys.argv[2]))
EOF

gslbd_setup() {  # gslbd_setup NAME [SIGNED]
  local n=$1 d=$OUT/$1 z
  compare_gslbd "$d" "${PORT[$n]}" "$OUT" "$ZONE" "${2:+$(printf 'dnssec:\n  keystore: %s' "$d/keys")}"
  if [ -n "${2:-}" ]; then
    mkdir -p -m 700 "$d/keys"
    for z in $ZONE bench.test; do
      "$GSLBCTL" -c "$d/gslbd.conf" --offline dnssec enable $z >> "$d/apply.log" 2>&1 ||
        { cat "$d/apply.log" >&2; die "$n: dnssec enable $z failed"; }
    done
  fi
  declare -g -a "CMD_$n=(\"\$GSLBD\" -c \"\$d/gslbd.conf\" -w 1)"
}
has gslbd && gslbd_setup gslbd
has gslbd_sig && gslbd_setup gslbd_sig signed

KNOT_GEO=
if has knotd; then
  d=$OUT/knotd; compare_dir "$d" "$OUT" "$ZONE"
  $GEN compare-knot > "$d/geo.conf"
  knot_conf() { compare_knot_conf "$d" "${PORT[knotd]}" "$OUT" "$ZONE" "$1" mod-onlinesign; }
  knot_conf 1 > "$d/knot.conf"
  if knotc -c "$d/knot.conf" conf-check > "$d/conf-check.log" 2>&1; then
    KNOT_GEO=1
  else
    echo "bench: knotd without its geoip module (see $d/conf-check.log): no knotd geo-set" >&2
    knot_conf "" > "$d/knot.conf"
  fi
  CMD_knotd=(knotd -c "$d/knot.conf")
fi

pdns_setup() {  # pdns_setup NAME [SIGNED]
  local n=$1 d=$OUT/$1 z
  compare_dir "$d" "$OUT" "$ZONE"
  cat > "$d/named.conf" <<EOC
zone "$ZONE" { type master; file "$d/$ZONE.zone"; };
zone "bench.test" { type master; file "$d/bench.test.zone"; };
EOC
  cat > "$d/pdns.conf" <<EOC
launch=bind
bind-config=$d/named.conf
local-address=127.0.0.1
local-port=${PORT[$n]}
socket-dir=$d
guardian=no
daemon=no
disable-syslog=yes
write-pid=no
receiver-threads=1
distributor-threads=1
cache-ttl=0
webserver=no
loglevel=4
EOC
  if [ -n "${2:-}" ]; then
    echo "bind-dnssec-db=$d/dnssec.db" >> "$d/pdns.conf"
    { pdnsutil --config-dir="$d" create-bind-db "$d/dnssec.db" &&
      for z in $ZONE bench.test; do pdnsutil --config-dir="$d" secure-zone $z; done; } \
      > "$d/pdnsutil.log" 2>&1 || { cat "$d/pdnsutil.log" >&2; die "$n: pdnsutil failed"; }
  fi
  declare -g -a "CMD_$n=(pdns_server --config-dir=\"\$d\")"
}
has pdns && pdns_setup pdns signed
has pdns_plain && pdns_setup pdns_plain

# --- start and check -------------------------------------------------------
first_place=${PLACEMENTS%% *}
SERVER_CPU=${first_place%:*}
ready_static() {  # ready_static SERVER: answers static A
  [[ $(dig +tries=1 +time=1 @127.0.0.1 -p "${PORT[$1]}" "static.$ZONE" A 2>/dev/null || true) == *$'\t192.0.2.80'* ]]
}
for s in $SERVERS; do
  declare -n cmd="CMD_$s"
  start_server "$s" "$OUT/$s/log" ready_static "$s" -- "${cmd[@]}"
  unset -n cmd
  echo "bench: $s on 127.0.0.1@${PORT[$s]} ($(wc -l < "$(cg_dir "$s")/tasks") threads)" >&2
done

dodig() {  # dodig SERVER NAME [ECS]: the answer and authority records, DO set
  dig +tries=1 +time=2 +dnssec +noall +answer +authority @127.0.0.1 -p "${PORT[$1]}" \
    "$2" A ${3:+"+subnet=$3"} | awk '$1 !~ /^;/ && NF' | tr -s ' \t' ' '
}
nrr() { awk -v t="$1" '$4 == t { n++ } END { print n + 0 }'; }
nsig() { awk -v t="$1" '$4 == "RRSIG" && $5 == t { n++ } END { print n + 0 }'; }
takes() {  # takes SERVER WORKLOAD
  case $1:$2 in
    knotd:geo-pick|pdns*:geo-*|pdns_plain:nx) return 1 ;;
    knotd:geo-set) [ -n "$KNOT_GEO" ] || return 1 ;;
  esac
  return 0
}
for s in $SERVERS; do
  want=1; case $s in gslbd|pdns_plain) want=0 ;; esac
  a=$(dodig "$s" "static.$ZONE")
  [ "$(nrr A <<<"$a")" = 1 ] && [ "$(nsig A <<<"$a")" = $want ] || die "$s: static A: $a"
  if takes "$s" geo-pick; then
    a=$(dodig "$s" www.bench.test 11.1.9.0/24)
    [[ $(awk '$4 == "A" { print $5 }' <<<"$a") =~ ^192\.0\.2\.[456]$ ]] && [ "$(nsig A <<<"$a")" = $want ] ||
      die "$s: www.bench.test: $a"
  fi
  if takes "$s" geo-set; then
    a=$(dodig "$s" set.bench.test 12.18.3.0/24)
    [ "$(awk '$4 == "A" { print $5 }' <<<"$a" | sort -V | tr '\n' ' ')" = "192.0.2.25 192.0.2.26 192.0.2.27 " ] &&
      [ "$(nsig A <<<"$a")" = $want ] || die "$s: set.bench.test: $a"
  fi
  # The signatures a new name costs: the RRSIGs of a second random name's
  # denial that are not in the first's.
  a=$(dodig "$s" "nxcheck1a.$ZONE"); b=$(dodig "$s" "nxcheck2b.$ZONE")
  [ $want = 0 ] || [ "$(nrr RRSIG <<<"$b")" -ge 1 ] || die "$s: a denial without RRSIG: $b"
  printf '%s\n' "$a" > "$OUT/$s/nx1.txt"; printf '%s\n' "$b" > "$OUT/$s/nx2.txt"
  echo "$s $(awk '$4 == "RRSIG"' "$OUT/$s/nx2.txt" | grep -c -v -x -F -f <(awk '$4 == "RRSIG"' "$OUT/$s/nx1.txt") || true)" >> "$OUT/fresh.txt"
  echo "bench: $s answers as expected" >&2
done

# --- measure -----------------------------------------------------------------
CSV=$OUT/results.csv
echo "server,workload,placement,run,qps,avg_latency_ms,sent,completed,lost,server_cpu_ns,server_us_per_query,on_server_cpu,client_cpu_s" > "$CSV"
cg_create dnsperf || die "cannot create cgroup $(cg_dir dnsperf)"
wargs() {  # wargs WORKLOAD: dnsperf's query arguments
  case $1 in
    static) echo "-D -d $OUT/static.txt" ;;
    nx) echo "-D -d $OUT/nx.txt" ;;
    geo-set|geo-pick) echo "-B -d $OUT/$1-do.bin" ;;
  esac
}
measure() {  # measure SERVER WORKLOAD PLACEMENT RUN SCPU CCPU
  local s=$1 w=$2 raw line
  raw=$OUT/raw/$s-$w-${3/:/-}-$4.txt
  [ -n "$(cg_procs "$s")" ] || die "$s died"
  # shellcheck disable=SC2046
  line=$(cg_measure "$s" "$5" "$6" "$raw" -s 127.0.0.1 -p "${PORT[$s]}" -m udp \
      -l "$DURATION" -c "$CLIENTS" -T 1 -q "$OUTSTANDING" -t 2 $(wargs "$w")) ||
    { cat "$raw" >&2; die "dnsperf failed against $s/$w"; }
  echo "$s,$w,$3,$4,$line" | tee -a "$CSV" >&2
}
compare_rounds

# --- where the time goes ---------------------------------------------------
if [ "$PERF" = 1 ] && command -v perf >/dev/null; then
  last=${PLACEMENTS##* }; ccpu=${last#*:}   # the servers stay on the last placement's CPU
  for w in static geo-pick nx; do
    for s in gslbd gslbd_sig; do
      has "$s" || continue
      pid=$(cg_procs "$s" | head -1)
      perf record -q -F 4999 -p "$pid" -o "$OUT/perf-$s-$w.data" -- sleep $((DURATION + 1)) \
        > "$OUT/perf-$s-$w.log" 2>&1 &
      ppid=$!
      sleep 0.5
      ( cg_exec dnsperf taskset -c "$ccpu" dnsperf -s 127.0.0.1 -p "${PORT[$s]}" -m udp \
          -l "$DURATION" -c "$CLIENTS" -T 1 -q "$OUTSTANDING" -t 2 $(wargs "$w") ) \
        > "$OUT/raw/perf-$s-$w.txt" 2>&1 < /dev/null || true
      wait "$ppid" || true
      { perf report -i "$OUT/perf-$s-$w.data" --stdio --no-children --sort dso -g none 2> /dev/null |
          grep -v -e '^#' -e '^$' | head -8
        echo
        perf report -i "$OUT/perf-$s-$w.data" --stdio --no-children --sort dso,symbol \
          --percent-limit 0.3 -g none 2> /dev/null | grep -v -e '^#' -e '^$' -e '\[k\]' | head -30
      } > "$OUT/perf-$s-$w.txt" || true
      rm -f "$OUT/perf-$s-$w.data"
    done
  done
fi

{ echo "memory (VmRSS at the end, KiB):"
  for s in $SERVERS; do echo "  $s $(cg_rss_kb "$s")"; done
  echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"; } >> "$OUT/env.txt"
cleanup
trap - EXIT

SUM=$OUT/summary.md
{ echo "# bench/dnssec.sh, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo
  echo "RUNS=$RUNS DURATION=$DURATION CLIENTS=$CLIENTS OUTSTANDING=$OUTSTANDING; load $(grep '^load:' "$OUT/env.txt" | head -1 | cut -d' ' -f2-) at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end"
  echo
  summarise "$CSV"; } > "$SUM"
cat "$SUM"
echo "bench: raw results in $OUT" >&2
