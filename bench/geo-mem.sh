#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/geo-mem.sh: idle RSS of gslbd with a given MaxMind DB, compiled
# (geoip.compile on) or not, the median of RUNS starts.  The demo zone and
# weights, one worker, no statistics endpoint; VmRSS read SETTLE seconds
# after the first answer.
#   bench/geo-mem.sh GSLBD MMDB on|off [PORT]
# Run inside the bench lock: flock /tmp/gslbd-bench.lock bench/geo-mem.sh ...
set -eu
gslbd=$(realpath "$1") mmdb=$(realpath "$2") compile=$3 port=${4:-1590}
src=$(cd "$(dirname "$0")/.." && pwd)
runs=${RUNS:-3} settle=${SETTLE:-3}
dir=$(mktemp -d /tmp/gslbd-geomem-XXXXXX)
trap 'rm -rf "$dir"' EXIT
cp "$src/zones/cdn.example.test.zone" "$dir/"
cat > "$dir/gslbd.conf" <<CONF
server:
  listen: [ "127.0.0.1@$port" ]
  workers: 1
zones:
  - name: cdn.example.test
    file: cdn.example.test.zone
database:
  path: db
geoip:
  database: $mmdb
  compile: $compile
CONF
"$src/build/gslbctl" --offline --allow-unknown-location -c "$dir/gslbd.conf" apply "$src/zones/demo-gslb.json" >/dev/null 2>&1
rss=()
for _ in $(seq "$runs"); do
	start=$(date +%s.%N)
	"$gslbd" -c "$dir/gslbd.conf" 2>"$dir/log" &
	pid=$!
	for _ in $(seq 600); do
		dig +time=1 +tries=1 -p "$port" @127.0.0.1 www.cdn.example.test A >/dev/null 2>&1 && break
		sleep 0.2
	done
	up=$(echo "$(date +%s.%N) - $start" | bc)
	sleep "$settle"
	r=$(awk '/^VmRSS/ { print $2 }' "/proc/$pid/status")
	kill "$pid"; wait "$pid" || true
	grep -o 'geoip: [^"]*' "$dir/log" | head -1 >&2 || true
	echo "start ${up}s VmRSS ${r} kB" >&2
	rss+=("$r")
done
printf '%s\n' "${rss[@]}" | sort -n | awk '{ a[NR] = $1 } END { printf "median VmRSS %.1f MiB\n", a[int((NR + 1) / 2)] / 1024 }'
