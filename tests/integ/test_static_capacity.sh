#!/bin/bash
# Node capacities in a static row (S1-6, S4-3) under the real daemon: the
# row's demand is measured from the loads its nodes push, each node is
# held at its capacity less the headroom, and when a node leaves, the
# others take its share only as far as their capacity allows; what they
# cannot carry goes to the next level of the row chain.  dig and explain
# follow.  Without capacities the operator's weights rule again.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/steer_lib.sh"

steer_setup "" "headroom: 50
stale: 60"

CTL service add www.gslb.test --ttl 30 --answers 1 >/dev/null
CTL node add a --addr 192.0.2.11 --capacity 1000 >/dev/null
CTL node add b --addr 192.0.2.12 --capacity 1000 >/dev/null
CTL node add c --addr 192.0.2.13 --capacity 1000 >/dev/null
CTL node add d --addr 192.0.2.4 >/dev/null
CTL weight set www.gslb.test --region cn-gz --isp ctcc a=50 b=30 c=20 >/dev/null
CTL weight set www.gslb.test d=1 >/dev/null
gslbd_start

# Loads of a demand of 1200 (600 + 360 + 240 of capacities of 1000):
# with 50 % headroom a node carries at most 500 of it, 41.7 % of the row.
set_m a:- "bandwidth=60"
set_m b:- "bandwidth=36"
set_m c:- "bandwidth=24"
start_feeder

# The steering run that measured it says so in the daemon's log.
measured() { grep -Eq "capacity www.gslb.test\|cn-gz\|ctcc: demand 1(1[5-9]|2[0-4])[0-9] \(headroom 50%\)" "$T/gslbd.log"; }
if wait_until 20 measured; then ok "the row's demand measured"
else fail "no demand measured: $(grep capacity "$T/gslbd.log")"; fi

# All three up: a held at 41.7 % (the operator's 50 % would overload it),
# the excess to b and c by their weights.
held() { s=$(share gz 192.0.2.11); within "$s" 360 470; }
if wait_until 10 held; then ok "dig: a held at its capacity ($(share gz 192.0.2.11) per mille, weight 50 %)"
else fail "dig: a answers $(share gz 192.0.2.11) per mille, its ceiling is 417"; fi
expect_has "$(CTL explain www.gslb.test --client 101.6.1.1)" "^  a .*held at its capacity" \
	"explain: a held at its capacity"

# c leaves: a and b would get 62.5 and 37.5 %; a can carry 41.7 %, b too,
# and the 16.7 % left spill to the default row, d.
CTL node set c --admin down >/dev/null
s=$(share gz 192.0.2.4)
within "$s" 110 230 && ok "dig: c down, the row spills $s per mille to the next level" ||
	fail "dig: c down, d answers $s per mille, want about 167"
s=$(share gz 192.0.2.11)
within "$s" 360 470 && ok "dig: a still at its capacity ($s per mille)" ||
	fail "dig: a answers $s per mille with c down, its ceiling is 417"
# explain draws like a query: which of the row's clients spill is
# random (1 in 6 here), so ask until one stays in the row, then until
# one spills: 100 draws all miss with odds of 1 in 10^8, 30 with 1 in 240.
for _ in $(seq 100); do
	out=$(CTL explain www.gslb.test --client 101.6.1.1)
	grep -q "(not this one)" <<<"$out" && break
done
expect_has "$out" "^capacity  region,isp: over its nodes' capacity, 16\.6[0-9]?% of its clients go to the next level" \
	"explain: the spill of the row"
expect_has "$out" "^  b .*held at its capacity" "explain: b held at its capacity"
for _ in $(seq 100); do
	out=$(CTL explain www.gslb.test --client 101.6.1.1)
	grep -q "(this one does)" <<<"$out" && break
done
expect_has "$out" "^chain .*region,isp \(over capacity, spilled\) -> \*,\* \(answered\)" \
	"explain: a spilled client answered by the next level"
expect_has "$out" "^ttl .*spilled by a row over its capacity" "explain: a spilled answer has the short TTL"

# Without capacities no ceiling: the row takes c's share itself.
for n in a b c; do CTL node set $n --capacity 0 >/dev/null; done
none() { s=$(share gz 192.0.2.4); [ "$s" -le 5 ]; }
if wait_until 10 none; then ok "no capacities: no spill, the row answers all its clients"
else fail "still spilling without capacities: d answers $(share gz 192.0.2.4) per mille"; fi
s=$(share gz 192.0.2.11)
within "$s" 560 690 && ok "dig: a back to the operator's share of the row ($s per mille)" ||
	fail "dig: a answers $s per mille without capacities, want 625"
dropped() { grep -q "capacity www.gslb.test|cn-gz|ctcc: no node with a capacity" "$T/gslbd.log"; }
wait_until 10 dropped && ok "the row's capacity record dropped with the capacities" ||
	fail "the capacity record stays without capacities"

stop_feeder
finish
