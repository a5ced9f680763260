#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/nodechange.sh: the cost of a node change on a large table.
# Builds a standalone store of 1,000 services, 10,000 nodes and 100,000
# weight rows (the table of bench/cluster.sh) with one `gslbctl apply`,
# then times RUNS `gslbctl node set` changes of one node's address and
# RUNS `gslbctl node show` (the cost of gslbctl itself, no commit), and
# prints the median and the maximum of each.  The commit of a node
# change rebuilds the plans of the rows that name the node; this shows
# what finding those rows costs.
# Usage: bench/nodechange.sh  (from the top of the tree, after make;
# GSLBCTL=path picks another gslbctl, RUNS=N the number of changes)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
G=${GSLBCTL:-$ROOT/${B:-build}/gslbctl}
RUNS=${RUNS:-20}
T=$(mktemp -d /tmp/gslbd-nodechange.XXXXXX)
trap 'rm -rf "$T"' EXIT
python3 - > "$T/table.json" <<'PY'
import json
nodes = [{"id": "n%05d" % i, "addrs": ["10.%d.%d.%d" % (i >> 16, i >> 8 & 255, i & 255 or 1)],
          "region": "r%d" % (i // 10 % 10), "isp": "i%d" % (i % 10), "admin": "auto",
          "pool": "primary", "capacity": 0, "cname": None} for i in range(10000)]
services, weights = [], []
for s in range(1000):
    name = "s%03d.big.test" % s
    services.append({"name": name, "ttl": 60, "short_ttl": 10, "answers": 2,
                     "all_down": "open", "sticky": False, "shadow": False})
    for k in range(100):
        a, c = (s * 100 + k) % 10000, (s * 100 + k + 5000) % 10000
        reg, isp = ("r%d" % (k // 10), "i%d" % (k % 10)) if k < 99 else ("*", "*")
        weights.append({"service": name, "region": reg, "isp": isp,
                        "weights": {"n%05d" % a: 10, "n%05d" % c: 10}})
json.dump({"version": 1, "services": services, "nodes": nodes, "weights": weights}, open("/dev/stdout", "w"))
PY
t0=$(date +%s%N)
"$G" -d "$T/db" --create apply "$T/table.json" >/dev/null 2>"$T/apply.err" ||
	{ echo "bench: apply failed: $(tail -3 "$T/apply.err")" >&2; exit 1; }
echo "table of 100,000 rows applied in $(( ($(date +%s%N) - t0) / 1000000 )) ms"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
# ms CMD...: runs CMD, prints its wall time in ms.
ms() {
	local t=$(date +%s%N)
	"$@" >/dev/null 2>&1 || { echo "bench: $* failed" >&2; exit 1; }
	echo $(( ($(date +%s%N) - t) / 1000000 ))
}
stats() { sort -n | awk '{ v[NR] = $1 } END { printf "median %d ms, max %d ms\n", v[int((NR + 1) / 2)], v[NR] }'; }
for i in $(seq "$RUNS"); do ms "$G" -d "$T/db" node set n04242 --addr "10.200.0.$i"; done |
	{ printf "node set (%s changes): " "$RUNS"; stats; }
for i in $(seq "$RUNS"); do ms "$G" -d "$T/db" node show n04242; done |
	{ printf "node show (gslbctl alone): "; stats; }
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
