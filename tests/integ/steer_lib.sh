#!/bin/bash
# Helpers of the steering tests (sourced after lib.sh): a GeoIP database
# with two rows (cn-gz/ctcc from 101.6.0.0/16, cn-bj/cucc from
# 101.7.0.0/16), a feeder that pushes each node's current measurements
# in the background as a RUM pipeline would, and the shares of service
# www.gslb.test seen by `steer show` and by dig.

# steer_setup [SECTIONS] [STEER-KEYS]: the GeoIP database, the zone and
# gslbd.conf with time compressed steering (an evaluation every second,
# tau 2 s, short windows, generous step limits), SECTIONS (YAML, such as
# a health section) added and each "key: value" line of STEER-KEYS in
# place of the default of that key.
steer_setup() {
	local steer="  interval: 1
  tau: 2
  windows: [4, 8]
  stale: 8
  min-step: 1
  max-step: 20
  max-change: 100
  floor: 5" line
	while IFS= read -r line; do
		[ -n "$line" ] || continue
		steer=$(grep -v "^  ${line%%:*}:" <<<"$steer")
		steer+=$'\n'"  $line"
	done <<<"${2-}"
	geo_two_regions
	gslb_zone
	write_conf gslb.test z.zone "geoip:
  database: geo.mmdb
${1-}
steer:
$steer"
}

# set_m NODE:ROW "KEY=VALUE...": the measurements the feeder pushes for
# NODE in ROW (gz, bj, or - for the node as a whole), one file each.
set_m() { mkdir -p "$T/m"; echo "$2" > "$T/m/$1"; }

# Pushes every file of $T/m in one batch (one process, one transaction,
# as a pipeline would each round), then runs feed_hook when the test
# defines one, every 0.2 s while $T/feeding exists, for at most 5
# minutes.
start_feeder() {
	touch "$T/feeding"
	(
		end=$((SECONDS + $(tscale 300)))
		while [ -e "$T/feeding" ] && [ $SECONDS -lt $end ]; do
			for f in "$T"/m/*; do
				k=${f##*/} n=${k%:*} r=${k#*:}
				case $r in
				gz) reg="--region cn-gz --isp ctcc" ;;
				bj) reg="--region cn-bj --isp cucc" ;;
				*) reg= ;;
				esac
				echo "$n $reg $(cat "$f")"
			done | CTL metrics push --file - >/dev/null || echo "FAIL - metrics push --file"
			if declare -F feed_hook >/dev/null; then feed_hook; fi
			sleep 0.2
		done
	) &
	FEEDER=$!
	trap 'rm -f "$T/feeding"; kill $FEEDER 2>/dev/null; wait $FEEDER 2>/dev/null; stop_httpds; cleanup' EXIT
}

stop_feeder() { rm -f "$T/feeding"; wait "$FEEDER"; }

# row_key gz|bj: the weight row of the row's clients.
row_key() { [ "$1" = gz ] && echo "www.gslb.test|cn-gz|ctcc" || echo "www.gslb.test|cn-bj|cucc"; }

# steer_field gz|bj NODE FIELD: FIELD of NODE in the row's `steer show`.
steer_field() {
	CTL --json steer show www.gslb.test | python3 -c "
import json, sys
for r in json.load(sys.stdin):
    if r['row'] == '$(row_key "$1")':
        print(r['nodes']['$2'].get('$3', ''))"
}

# weight gz|bj NODE: the engine's share of NODE in the row in basis
# points, from steer show (empty: the operator's weights).
weight() {
	CTL --json steer show www.gslb.test | python3 -c "
import json, sys
for r in json.load(sys.stdin):
    if r['row'] == '$(row_key "$1")':
        print(r['nodes']['$2']['weight'] if r['steered'] else '')"
}

# share gz|bj NODE-ADDR: per mille of 1000 answers to the row's clients.
share() {
	local sub
	[ "$1" = gz ] && sub=101.6.1.0/24 || sub=101.7.1.0/24
	for _ in $(seq 1000); do echo "www.gslb.test A +subnet=$sub"; done > "$T/batch"
	dig @127.0.0.1 -p "$PORT" +short +tries=1 +time=2 -f "$T/batch" > "$T/picks"
	echo $(( $(grep -c "^$2\$" "$T/picks") * 1000 / $(grep -c . "$T/picks") ))
}

within() { [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }

# expect_b_slow_in_gz SECONDS WHAT: node b, slow in cn-gz only, falls to
# 10 % or less of that row within SECONDS (scaled) while cn-bj stays
# even; WHAT names the inputs in the check's text.
expect_b_slow_in_gz() {
	low_b_gz() { w=$(weight gz b); [ -n "$w" ] && [ "$w" -le 1000 ]; }
	if wait_until "$1" low_b_gz; then ok "$2: slow b loses share in cn-gz (now $(weight gz b) bp)"
	else fail "$2: b's share in cn-gz did not fall: $(CTL steer show www.gslb.test)"; fi
	local wbj
	wbj=$(weight bj b)
	[ -z "$wbj" ] || within "$wbj" 4900 5100 && ok "cn-bj unchanged (b: ${wbj:-operator weight})" ||
		fail "cn-bj moved: b has $wbj bp"
}
