#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/feed.sh: the volume of pushed measurements in cluster mode, for
# docs/CLUSTER.md.  One etcd member with etcd's default request limits
# and one gslbd on loopback; a table of 1,000 nodes; a feeder's round of
# 1,000 nodes x 10 rows (10,000 lines: success and latency per region
# and ISP) pushed ROUNDS times (default 5) with `gslbctl metrics push
# --file`.  Prints per round gslbctl's wall time (validation on its
# store and the etcd transaction), the size of the push in etcd, and
# the time gslbd took to apply it to its store (its debug log line).
# Everything under a temporary directory, stopped by PID at exit.
# Usage: bench/feed.sh  (from the top of the tree, after make)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${B:-build}
BASE=${BENCHPORT:-36600}
ROUNDS=${ROUNDS:-5}
TAG=feed
. "$ROOT/bench/etcd1.sh"

# etcd's default request size (1.5 MiB): a round must fit it.  Its
# operations per transaction are raised for the apply of the table (a
# round takes 5).
etcd_start f1 --max-txn-ops 2000
printf '$ORIGIN big.test.\n$TTL 300\n@ IN SOA ns1 hostmaster 1 3600 600 86400 60\n@ IN NS ns1\nns1 IN A 127.0.0.1\n' \
	> "$T/z.zone"
printf 'server:\n  listen: [ "127.0.0.1@%s" ]\n  workers: 1\ndatabase:\n  path: db\nzones:\n  - name: big.test\n    file: z.zone\ncluster:\n  etcd: [ "%s" ]\n  name: feed1\n' \
	"$((BASE + 10))" "$EP" > "$T/gslbd.conf"
CTL() { "$ROOT/$B/gslbctl" -c "$T/gslbd.conf" "$@"; }
# 1,000 nodes in one apply.
python3 -c '
import json
print(json.dumps({"version": 1, "nodes": [
    {"id": "n%04d" % i, "addrs": ["10.0.%d.%d" % (i >> 8, i & 255 or 1)]}
    for i in range(1000)]}))' > "$T/nodes.json"
CTL apply "$T/nodes.json" >/dev/null 2>"$T/apply.err" || die "apply: $(cat "$T/apply.err")"
"$ROOT/$B/gslbd" -v -c "$T/gslbd.conf" >"$T/gslbd.log" 2>&1 &
GPID=$!
for _ in $(seq 300); do
	grep -q "resynced from etcd" "$T/gslbd.log" && break
	sleep 0.1
done
python3 -c '
for i in range(1000):
    for r in ("cn-bj", "cn-gz", "cn-sh", "cn-cd", "cn-wh"):
        for isp in ("ctcc", "cucc"):
            print("n%04d --region %s --isp %s success=99.7 latency=28" % (i, r, isp))' > "$T/round.txt"
echo "round: $(wc -l < "$T/round.txt") lines, $(wc -c < "$T/round.txt") bytes of text"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$ROUNDS"); do
	t0=$(date +%s%N)
	out=$(CTL metrics push --file "$T/round.txt" 2>&1) || die "push: $out"
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	rev=$(sed -n 's/.*(revision \([0-9]*\)).*/\1/p' <<<"$out")
	applied=
	for _ in $(seq 600); do
		applied=$(sed -n "s/.*revision $rev: \([0-9]*\) pushed measurements applied in \([0-9]*\) ms.*/\1 lines in \2 ms/p" "$T/gslbd.log")
		[ -n "$applied" ] && break
		sleep 0.1
	done
	kb=$(ETCDCTL_API=3 etcdctl --endpoints="$EP" get --prefix /gslbd/metrics/ \
		--rev "$rev" -w json | python3 -c '
import json, sys, base64
rev = int(sys.argv[1])
ks = [k for k in json.load(sys.stdin).get("kvs", []) if int(k["mod_revision"]) == rev]
print(len(ks), sum(len(base64.b64decode(k["value"])) for k in ks))' "$rev")
	echo "round $r: gslbctl ${ms} ms; in etcd: ${kb% *} keys, ${kb#* } bytes; gslbd applied ${applied:-nothing within 60 s}"
done
echo "live pushes in etcd: $(ETCDCTL_API=3 etcdctl --endpoints="$EP" get --prefix /gslbd/metrics/ --keys-only | grep -c .) keys"
echo "gslbd RSS: $(ps -o rss= -p "$GPID") kB; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
