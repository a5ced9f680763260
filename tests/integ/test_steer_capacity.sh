#!/bin/bash
# The steering engine's capacity ceiling (S1-6) under the real daemon,
# time compressed: a fast node would take most of its row, but its
# pushed load says the row's demand would fill its capacity beyond the
# headroom, so its share stops at the ceiling and the rest goes to the
# other node; dig follows.  Without a capacity the ceiling does not
# apply.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/steer_lib.sh"

steer_setup "" "headroom: 20
stale: 30"

CTL service add www.gslb.test --ttl 30 --answers 1 >/dev/null
CTL node add a --addr 192.0.2.1 --capacity 1000 >/dev/null
CTL node add b --addr 192.0.2.2 >/dev/null
CTL weight set www.gslb.test --region cn-gz --isp ctcc a=50 b=50 >/dev/null
CTL service set www.gslb.test --steering dynamic --weights success=0.2,latency=0.8,cost=0 >/dev/null
gslbd_start

# a is fast, b slow: the scores alone would give a about 92 % (latency
# weighs 0.8: b scores 0.29; the weights the other way round would score
# it 0.82 and give a 60 %, below the ceiling).  The row's
# demand is 1200 (a's capacity is 1000): a's load follows its share, as
# it would once resolvers follow the answers.
set_m a:gz "success=99.9 latency=20"
set_m b:gz "success=99.9 latency=180"
feed_hook() {
	local w c
	w=$(weight gz a)
	c=$(( ${w:-5000} * 120 / 100 ))
	# A node is at most fully loaded (bandwidth is in percent of its
	# capacity, 100 at most): past 83 % of the row a would be, and a
	# load left unpushed would leave the engine with the figure of an
	# older share (a busy machine's slow feeder let it get there).
	[ "$c" -gt 10000 ] && c=10000
	CTL metrics push a bandwidth=$((c / 100)).$(printf %02d $((c % 100))) >/dev/null
}
start_feeder

# 80 % of 1000 over a demand of 1200: two thirds of the row at most.
capped() { w=$(weight gz a); [ -n "$w" ] && within "$w" 6500 6670; }
if wait_until 25 capped; then ok "a held at its capacity ceiling ($(weight gz a) bp)"
else fail "a not held at its ceiling: $(CTL steer show www.gslb.test)"; fi
# Time passes to show that a does not pass its ceiling: three
# evaluation intervals (1 s).
sleep 3
w=$(weight gz a)
[ -n "$w" ] && [ "$w" -le 6670 ] && ok "a stays at or below the ceiling ($w bp)" ||
	fail "a went past its ceiling: $w bp"
# The ceiling follows the demand measured from the pushed loads; a
# feeder that read a's share just before a move (a busy machine) pushes
# a load a little off, and the ceiling moves by as much: 63 to 69 %.
expect_has "$(CTL steer show www.gslb.test)" "^  a .*capacity, ceiling 6[3-9]\.[0-9]{2}%" "steer show: the capacity limit and the ceiling"
expect_has "$(steer_field gz a ceiling)" "^6[3-9][0-9][0-9]$" "steer show --json: the ceiling"
s=$(share gz 192.0.2.1)
within "$s" 610 720 && ok "dig: a answers $s per mille, its ceiling is 667" ||
	fail "dig: a answers $s per mille, its ceiling is 667"
expect_has "$(CTL explain www.gslb.test --client 101.6.1.1)" "^  a .*capacity" \
	"explain: the capacity limit"

# No capacity: no ceiling, the scores alone decide.
CTL node set a --capacity 0 >/dev/null
free() { w=$(weight gz a); [ -n "$w" ] && [ "$w" -ge 8500 ]; }
if wait_until 25 free; then ok "no capacity, no ceiling: a up to $(weight gz a) bp"
else fail "a still capped without a capacity: $(CTL steer show www.gslb.test)"; fi
[ -z "$(steer_field gz a ceiling)" ] && ok "no ceiling shown without a capacity" ||
	fail "a ceiling without a capacity: $(steer_field gz a ceiling)"

# Bad input changes nothing.
sed 's/headroom: 20/headroom: 95/' "$T/gslbd.conf" > "$T/bad.conf"
out=$("$GSLBD" -c "$T/bad.conf" --check 2>&1); rc=$?
[ $rc = 1 ] && expect_has "$out" "bad.conf:[0-9]+: headroom" "--check: headroom 95 refused" ||
	fail "--check accepted headroom 95: $out"

stop_feeder
finish
