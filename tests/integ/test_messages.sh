#!/bin/bash
# What operators read speaks their language and cannot drift from the
# code: no rule id in any message of src/, the list of known metrics in
# `metrics push`'s error comes from the tables that parse them, and the
# columns of `status` line up whatever the state.
. "$(dirname "$0")/lib.sh"
gslb_zone
write_conf gslb.test z.zone "health:
  interval: 1
  timeout: 0.5"
HP=$((PORT + 3000))
trap 'stop_httpds; cleanup' EXIT
start_httpd "$HP"

# 1. No rule id in a string of the code (comments may cite them).
out=$(python3 "$ROOT/tests/integ/rule_ids.py" "$ROOT/src" 2>&1) &&
	ok "no rule id in a message of src/" || fail "rule ids in messages: $out"
CTL service add www.gslb.test --ttl 30 --short-ttl 5 >/dev/null
out=$(CTL cutover add --start 2030-01-01T02:00:00Z --end 2030-01-01T03:00:00Z 2>&1) &&
	fail "cutover add without an area succeeded: $out"
expect_has "$out" "--region or --node is required" "cutover add without an area says what is missing"
expect_not "$out" "S[0-9]-[0-9]" "cutover add's error carries no rule id"

# 2. Every metric a push takes is in the list of known ones.
CTL node add a --addr 192.0.2.1 --probe "http://127.0.0.1:$HP/health" >/dev/null
CTL node add b --addr 192.0.2.2 >/dev/null
CTL weight set www.gslb.test a=1 b=1 >/dev/null
out=$(CTL metrics push a frob=1 2>&1) && fail "unknown metric accepted: $out"
expect_has "$out" "unknown metric 'frob'" "an unknown metric is named"
for m in loss rtt_ms failure_rate success latency bytes spent; do
	expect_has "$out" "[ :,]$m[,;) ]" "the known metrics include $m"
done
# Each metric the error lists is taken by a push (none listed that is
# not): the list and the parser are one table.
for m in $(sed -n 's/.*health: \([^;]*\);.*/\1/p' <<<"$out" | tr -d ,); do
	got=$(CTL metrics push a "$m=1" 2>&1) || fail "metric $m is listed but refused: $got"
done
got=$(CTL metrics push a success=99 latency=20 bytes=5 2>&1)
grep -q "needs node a to have --provider" <<<"$got" &&
	ok "success, latency and bytes are parsed as listed" || fail "steering push: $got"

# 3. The STATE column is as wide as its longest state.
gslbd_start
wait_until 15 sh -c "\"$ROOT/$B/gslbctl\" -c \"$T/gslbd.conf\" status | grep -q '^b  *unmonitored'" ||
	fail "b never shown unmonitored"
wait_up 1 100 || fail "a never up"
out=$(CTL status)
col() { # line word -> the column where WORD starts in LINE
	awk -v w="$2" '{ print index($0, w) }' <<<"$1"
}
hdr=$(grep '^NODE ' <<<"$out")
for n in a b; do
	line=$(grep "^$n " <<<"$out")
	[ "$(col "$line" auto)" = "$(col "$hdr" ADMIN)" ] &&
		ok "status: node $n's ADMIN column under its header" ||
		fail "status: node $n misaligned:"$'\n'"$hdr"$'\n'"$line"
done
finish
