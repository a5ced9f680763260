#!/bin/bash
# Probing inside an announced cutover window, against real HTTP servers:
# a degraded sample of an affected node is followed by an extra probe at
# once (not one fast interval later), so one bad probe is forgiven and a
# real failure is confirmed within a second; a node outside the window
# keeps the normal schedule, and one bad probe moves nothing on either.
. "$(dirname "$0")/lib.sh"
gslb_zone
write_conf gslb.test z.zone "health:
  interval: 8
  timeout: 1
  fast-interval: 4
cutover:
  notice: 2
  prewarm-lead: 2
  ramp: 2"
HA=$((PORT + 3000)); HB=$((PORT + 3001))
trap 'stop_httpds; cleanup' EXIT
start_httpd "$HA"
start_httpd "$HB"
CTL service add www.gslb.test --answers 2 >/dev/null
CTL node add a1 --addr 192.0.2.1 --region r-a --isp isp-x --probe "http://127.0.0.1:$HA/health" >/dev/null
CTL node add b1 --addr 192.0.2.2 --region r-b --isp isp-x --probe "http://127.0.0.1:$HB/health" >/dev/null
CTL weight set www.gslb.test a1=100 b1=100 >/dev/null
gslbd_start
wait_up 2 150 || fail "nodes not up: $(CTL status)"
at() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
hits() { wc -l < "$T/mode$1.hits"; }
# Waits for the probes number N and N+1 of port $1 (at most 15 s) and
# prints the seconds between them.
gap() { # port n
	for _ in $(tseq 150); do [ "$(hits "$1")" -ge $(($2 + 1)) ] && break; sleep 0.1; done
	awk -v a="$2" -v b=$(($2 + 1)) 'NR == a { x = $1 } NR == b { printf "%.2f", $1 - x }' \
		"$T/mode$1.hits"
}

now=$(date +%s)
start=$((now + 3))
CTL cutover add --region r-a --start "$(at $start)" --end "$(at $((now + 600)))" \
	--derate 60 >/dev/null && ok "cutover added" || fail "cutover add"
for _ in $(tseq 100); do
	CTL status | grep -q "cutover c1 in-window" && break
	sleep 0.1
done
expect_has "$(CTL status)" "cutover c1 in-window" "a1 is in its window"
# In the window a1 is probed every 4 s (the fast interval): let one
# regular round pass so that the schedule is settled.
h=$(hits "$HA"); gap "$HA" "$h" >/dev/null

# One bad probe on each node.  The extra probe comes at once (well under
# a second on a quiet machine), the regular one a fast interval (4 s)
# later: the bounds, 2 s and 3 s, are generous on both sides and still
# tell the two apart.
h=$(hits "$HA"); echo err1 > "$T/mode$HA"
g=$(gap "$HA" $((h + 1)))
awk -v g="$g" 'BEGIN { exit !(g != "" && g < 2.0) }' &&
	ok "in the window: a bad probe is followed by another within $g s" ||
	fail "in the window: next probe after the bad one came after '$g' s"
h=$(hits "$HB"); echo err1 > "$T/mode$HB"
g=$(gap "$HB" $((h + 1)))
awk -v g="$g" 'BEGIN { exit !(g != "" && g >= 3.0) }' &&
	ok "outside the window: the next probe keeps the fast interval ($g s)" ||
	fail "outside the window: next probe after '$g' s"
# Time passes to show that one bad probe moves nothing: a1's good
# extra probe is in (above), and a second bad round would have come
# within this second.
sleep 1
out=$(CTL log)
expect_not "$out" "node a1 demoted" "in the window: one bad probe moves nothing"
expect_not "$out" "node b1 demoted" "outside the window: one bad probe moves nothing"

# a1 fails for good: the confirmation follows at once.
h=$(hits "$HA"); echo err > "$T/mode$HA"
g=$(gap "$HA" $((h + 1)))
awk -v g="$g" 'BEGIN { exit !(g != "" && g < 2.0) }' &&
	ok "in the window: failing node confirmed by a probe $g s after the first" ||
	fail "confirmation probe after '$g' s"
for _ in $(tseq 50); do CTL log | grep -q "node a1 demoted" && break; sleep 0.2; done
expect_has "$(CTL log)" "node a1 demoted: .*2 consecutive rounds" "a1 demoted after its two rounds"
n=$(( $(hits "$HA") - h ))
# Time passes to show that the extra probes stop: 3 s, less than the
# fast interval (4 s), hold at most one regular probe.
sleep 3
n2=$(( $(hits "$HA") - h ))
[ "$n2" -le $((n + 1)) ] && ok "demoted: no more extra probes ($n then $n2)" ||
	fail "probes kept coming after the demotion: $n then $n2"
finish
