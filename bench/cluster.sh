#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/cluster.sh: cluster mode's figures for docs/CLUSTER.md.
#   1. Initial sync of a large table: 1,000 services, 10,000 nodes and
#      100,000 weight rows (99 (region, ISP) rows and the (*, *) row
#      per service, 2 nodes each) written into etcd, then a gslbd with an empty store started
#      on it: the time of its full read (its log line "resynced from etcd
#      ... in N ms" and the wall time until it answers the last service),
#      its peak and current RSS, and the size of its store.
#   2. The watch lag at 100 changes per second for 10 s: each change
#      points the row of lag.big.test at another node (one etcd
#      transaction, as gslbctl writes it: the object and the change
#      record), and a poller asks gslbd every millisecond; the lag of a
#      change is from its write to the first answer with the new
#      address.  Then 50 changes of a node's address at 10 per second:
#      the store's commit of a node change rebuilds the plans of the rows
#      naming it, found through its index of node rows (it read every
#      row before, which bounded that rate on a large table).
#   3. The cost of the check of the table against etcd's
#      (cluster.verify-interval, here VERIFY_INTERVAL, default 20 s):
#      gslbd's debug line of each of its first CHECKS (default 4) checks
#      with the wall time and its own CPU time: full comparisons (etcd's
#      table read, the store's walked: the one after the sync, the
#      largest, is reported) and incremental ones (the store's audit
#      records since the check before; their median), each as a share of
#      one core at the default interval, 60 s.
# One etcd member and one gslbd on loopback (ports BENCHPORT.., default
# 36500), everything under a temporary directory, stopped by PID at exit.
# SERVICES=N (default 1000) scales the table: N services of 100 rows
# each, so SERVICES=10000 is a table of 1,000,000 rows.
# Usage: bench/cluster.sh  (from the top of the tree, after make)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${B:-build}
BASE=${BENCHPORT:-36500}
TAG=cluster
SERVICES=${SERVICES:-1000}
[[ $SERVICES =~ ^[1-9][0-9]*$ ]] || { echo "SERVICES must be a whole number" >&2; exit 2; }
# Service names s000 .. s999 (wider for more), the last one asked for.
W=$(( ${#SERVICES} > 4 ? ${#SERVICES} - 1 : 3 ))
LAST=$(printf "s%0${W}d.big.test" $((SERVICES - 1)))
. "$ROOT/bench/etcd1.sh"

etcd_start b1 --max-txn-ops 200000 --max-request-bytes 67108864 --quota-backend-bytes 8589934592
cat > "$T/z.zone" <<EOF
\$ORIGIN big.test.
\$TTL 300
@ IN SOA ns1 hostmaster 1 3600 600 86400 60
@ IN NS ns1
ns1 IN A 127.0.0.1
EOF
cat > "$T/gslbd.conf" <<EOF
server:
  listen: [ "127.0.0.1@$((BASE + 10))" ]
  workers: 1
  log-level: debug
database:
  path: db
zones:
  - name: big.test
    file: z.zone
cluster:
  etcd: [ "$EP" ]
  name: bench1
  verify-interval: ${VERIFY_INTERVAL:-20}
EOF
CTL() { "$ROOT/$B/gslbctl" -c "$T/gslbd.conf" "$@"; }
# One object of each kind through gslbctl, the templates of the others.
FIRST=$(printf "s%0${W}d.big.test" 0)
CTL service add "$FIRST" --ttl 60 --answers 2 >/dev/null || die "gslbctl"
CTL node add n00000 --addr 10.0.0.1 --region r0 --isp i0 >/dev/null
CTL node add n00001 --addr 10.0.0.2 --region r0 --isp i0 >/dev/null
CTL weight set "$FIRST" --region r0 --isp i0 n00000=10 n00001=10 >/dev/null
CTL service add lag.big.test --ttl 60 >/dev/null
CTL node add lag0 --addr 10.255.0.0 >/dev/null
CTL weight set lag.big.test lag0=10 >/dev/null

t0=$(date +%s%N)
python3 - "$EP" "$SERVICES" "$W" <<'PY' || die "filling etcd failed"
import base64, json, sys, urllib.request
ep, nsvc, width = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sname = lambda s: "s%0*d.big.test" % (width, s)
b = lambda s: base64.b64encode(s.encode()).decode()
ub = lambda s: base64.b64decode(s).decode()
def post(path, body):
    req = urllib.request.Request(ep + path, json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req, timeout=120))
def get(key):
    r = post("/v3/kv/range", {"key": b(key)})
    return json.loads(ub(r["kvs"][0]["value"]))
svc = get("/gslbd/config/service/" + sname(0))
node = get("/gslbd/config/node/n00000")
row = get("/gslbd/config/weight/%s|r0|i0" % sname(0))
change = get("/gslbd/change")
ops = []
def flush():
    global ops
    if ops:
        post("/v3/kv/txn", {"success": ops})
        ops = []
def put(key, val):
    ops.append({"request_put": {"key": b(key), "value": b(json.dumps(val, sort_keys=True, separators=(",", ":")))}})
    if len(ops) >= 5000:
        flush()
for i in range(10000):
    n = dict(node, id="n%05d" % i, addrs=["10.%d.%d.%d" % (i >> 16, i >> 8 & 255, i & 255 or 1)],
             region="r%d" % (i // 10 % 10), isp="i%d" % (i % 10))
    put("/gslbd/config/node/n%05d" % i, n)
for s in range(nsvc):
    name = sname(s)
    put("/gslbd/config/service/" + name, dict(svc, name=name))
    for k in range(100):
        a, c = (s * 100 + k) % 10000, (s * 100 + k + 5000) % 10000
        # 99 (region, ISP) rows and the (*, *) row that answers the bench.
        reg, isp = ("r%d" % (k // 10), "i%d" % (k % 10)) if k < 99 else ("*", "*")
        put("/gslbd/config/weight/%s|%s|%s" % (name, reg, isp),
            dict(row, service=name, region=reg, isp=isp,
                 weights={"n%05d" % a: 10, "n%05d" % c: 10}))
lag = get("/gslbd/config/node/lag0")
for k in range(1, 1001):
    put("/gslbd/config/node/lag%d" % k, dict(lag, id="lag%d" % k,
        addrs=["10.255.%d.%d" % (k >> 8, k & 255)]))
put("/gslbd/change", dict(change, what="bench table", count=nsvc * 101 + 11001))
flush()
PY
echo "etcd filled with $((SERVICES * 101 + 11001)) objects ($((SERVICES * 100)) weight rows) in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
echo "load average before the sync: $(cut -d' ' -f1-3 /proc/loadavg)"

t0=$(date +%s%N)
"$ROOT/$B/gslbd" -c "$T/gslbd.conf" >"$T/gslbd.log" 2>&1 &
GPID=$!
synced=
for _ in $(seq 36000); do
	grep -q "resynced from etcd" "$T/gslbd.log" && { synced=1; break; }
	kill -0 "$GPID" 2>/dev/null || die "gslbd died: $(tail -3 "$T/gslbd.log")"
	sleep 0.1
done
[ -n "$synced" ] || die "no full sync within an hour"
for _ in $(seq 600); do
	[ -n "$(dig @127.0.0.1 -p $((BASE + 10)) +short +time=1 +tries=1 "$LAST" A)" ] && break
	sleep 0.1
done
wall=$(( ($(date +%s%N) - t0) / 1000000 ))
grep -o "resynced from etcd.*" "$T/gslbd.log" | head -1
echo "initial sync: $wall ms from the start of gslbd to its answer for the last service"
# The wall time follows the machine's load; gslbd's own CPU time does not
# (utime + stime of every thread, in clock ticks).
awk -v hz="$(getconf CLK_TCK)" '{ printf "gslbd CPU until its answer: %.2f s (user %.2f, system %.2f)\n", ($14 + $15) / hz, $14 / hz, $15 / hz }' "/proc/$GPID/stat"
awk '/^VmHWM|^VmRSS/ { printf "gslbd %s %d MiB\n", $1, $2 / 1024 }' "/proc/$GPID/status"
echo "store: $(du -sm "$T/db" | cut -f1) MiB on disk"
echo "load average after the sync: $(cut -d' ' -f1-3 /proc/loadavg)"

PYTHONPATH="$ROOT/tests/integ" python3 - "$EP" $((BASE + 10)) <<'PY'
import base64, json, socket, sys, threading, time, urllib.request
import dnsraw
ep, port = sys.argv[1], int(sys.argv[2])
b = lambda s: base64.b64encode(s.encode()).decode()
def post(path, body):
    req = urllib.request.Request(ep + path, json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req, timeout=30))
def get(key):
    r = post("/v3/kv/range", {"key": b(key)})
    return json.loads(base64.b64decode(r["kvs"][0]["value"]))
# The row runs end on node lag1000, whose address the node run moves.
node, row = get("/gslbd/config/node/lag1000"), get("/gslbd/config/weight/lag.big.test|*|*")
def run(kind, rate, count, first):
    """count changes at rate per second: "row" points lag.big.test's row
    at node lagK (10.255.K), "node" moves lag1000's address to 10.254.K."""
    sent, seen, stop = {}, {}, [False]
    def poll():
        q = dnsraw.query("lag.big.test")
        while not stop[0]:
            r = dnsraw.udp(q, timeout=0.5, port=port, host="127.0.0.1")
            if r:
                now = time.monotonic()
                for n, t, c, ttl, rd in dnsraw.parse(r)["an"]:
                    if t == 1:
                        seen.setdefault(socket.inet_ntoa(rd), now)
            time.sleep(0.001)
    th = threading.Thread(target=poll)
    th.start()
    start = time.monotonic()
    for k in range(first, first + count):
        due = start + (k - first + 1) / rate
        while time.monotonic() < due:
            time.sleep(0.0005)
        if kind == "row":
            addr = "10.255.%d.%d" % (k >> 8, k & 255)
            key, val = "/gslbd/config/weight/lag.big.test|*|*", dict(row, weights={"lag%d" % k: 10})
        else:
            addr = "10.254.%d.%d" % (k >> 8, k & 255)
            key, val = "/gslbd/config/node/lag1000", dict(node, addrs=[addr])
        rec = json.dumps({"actor": "bench", "what": "bench " + kind, "count": 1})
        sent[addr] = time.monotonic()
        post("/v3/kv/txn", {"success": [
            {"request_put": {"key": b(key), "value": b(json.dumps(val, sort_keys=True, separators=(",", ":")))}},
            {"request_put": {"key": b("/gslbd/change"), "value": b(rec)}}]})
    real = count / (time.monotonic() - start)
    last = addr
    end = time.monotonic() + 120
    while last not in seen and time.monotonic() < end:
        time.sleep(0.05)
    stop[0] = True
    th.join()
    lags = sorted((seen[a] - t) * 1000 for a, t in sent.items() if a in seen)
    n = len(lags)
    if not n:
        print("watch lag, %s changes: none seen in the answers" % kind)
        return
    print("watch lag, %s changes at %.0f/s for %.0f s: %d of %d seen in the answers "
          "(the others were replaced before a poll saw them); median %.0f ms, p99 %.0f ms, "
          "max %.0f ms" % (kind, real, count / rate, n, count, lags[(n - 1) // 2],
                           lags[min(n - 1, int(n * 0.99))], lags[-1]))
run("row", 100.0, 1000, 1)
run("node", 10.0, 50, 1)
PY
CHECKS=${CHECKS:-4}
for _ in $(seq $(( (${VERIFY_INTERVAL:-20} * (CHECKS + 1) + 120) * 10 ))); do
	[ "$(grep -c "table checked against etcd's" "$T/gslbd.log")" -ge "$CHECKS" ] && break
	kill -0 "$GPID" 2>/dev/null || die "gslbd died: $(tail -3 "$T/gslbd.log")"
	sleep 0.1
done
checks=$(grep -o "table checked against etcd's.*" "$T/gslbd.log" | head -"$CHECKS")
echo "$checks"
# cost KIND WHICH LINES: the median or max CPU time of LINES, and its
# share of a core.
cost() {
	sed -n 's/.*(\([0-9]*\) ms of CPU.*/\1/p' <<<"$3" | sort -n | awk -v k="$1" -v w="$2" '{ v[NR] = $1 }
		END { if (NR) { x = w == "max" ? v[NR] : v[int((NR + 1) / 2)]
		      printf "%s check of the table: %s %d ms of CPU, %.2f%% of a core every 60 s\n",
		      k, w, x, x / 600 } }'
}
cost full max "$(grep -v "records since the last check" <<<"$checks")"
cost incremental median "$(grep "records since the last check" <<<"$checks")"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
