#!/bin/bash
# Nearest steering under the real daemon, time compressed (evaluation
# every second): latency pushed per region sends each region's answers to
# its lowest-latency node; noise within the switch margin moves nothing;
# a node worse beyond the margin loses its row after two evaluations
# (S4-5); a node at capacity keeps capacity minus headroom and the rest
# spills to the next-nearest (S4-3, S1-6); a node taken out moves its row
# at once (S4-4); every move is audited with its reason; bad settings are
# refused and change nothing.
. "$(dirname "$0")/lib.sh"

geo_two_regions
gslb_zone
write_conf gslb.test z.zone "geoip:
  database: geo.mmdb
steer:
  interval: 1
  tau: 1
  windows: [4]
  stale: 8
  min-step: 1"

CTL service add www.gslb.test --ttl 30 --answers 1 >/dev/null
for n in a:1 b:2 c:3; do CTL node add "${n%:*}" --addr "192.0.2.${n#*:}" >/dev/null; done
for r in "--region cn-gz --isp ctcc" "--region cn-bj --isp cucc"; do
	# shellcheck disable=SC2086
	CTL weight set www.gslb.test $r a=100 b=100 c=100 >/dev/null
done

# Bad settings are refused and change nothing.
out=$(CTL service set www.gslb.test --steering nearest --switch-margin 150% 2>&1); rc=$?
[ $rc = 1 ] && expect_has "$out" "--switch-margin 150%: give a percentage below 100" \
	"a margin of 150% refused" || fail "--switch-margin 150%: rc $rc: $out"
out=$(CTL service set www.gslb.test --steering nearest --headroom 95 2>&1)
expect_has "$out" "--headroom 95: give a percentage from 0 to 90" "a headroom of 95% refused"
out=$(CTL service set www.gslb.test --switch-margin 10ms 2>&1); rc=$?
[ $rc = 1 ] && expect_has "$out" "switch margin and headroom go with nearest steering" \
	"a margin without nearest steering refused" || fail "margin on a static service: rc $rc: $out"
expect_not "$(CTL export)" "nearest|switch_margin" "refused settings left nothing behind"
CTL export | python3 -c "
import json, sys
d = json.load(sys.stdin)
d['services'][0].update(steering='nearest', switch_margin='15 percent')
json.dump(d, open('$T/bad.json', 'w'))"
out=$(CTL apply --force "$T/bad.json" 2>&1)
expect_has "$out" "switch_margin must be a string like" "apply: a bad margin refused"

gslbd_start

# The latency of each node seen from each region, one file per (node,
# region) under $T/m, pushed over and over in the background while
# $T/feeding exists, for at most 5 minutes: one batch a round, as a
# feeder would, so that a slow machine (sanitizers, load) cannot make a
# round outlast steer.stale.
mkdir -p "$T/m"
set_m() { echo "$2" > "$T/m/.$1"; mv "$T/m/.$1" "$T/m/$1"; }
for k in a:gz:20 b:gz:60 c:gz:80 a:bj:70 b:bj:50 c:bj:15; do set_m "${k%:*}" "${k##*:}"; done
touch "$T/feeding"
(
	end=$((SECONDS + $(tscale 300)))
	while [ -e "$T/feeding" ] && [ $SECONDS -lt $end ]; do
		for f in "$T"/m/*; do
			k=${f##*/} n=${k%:*} r=${k#*:}
			[ "$r" = gz ] && reg="--region cn-gz --isp ctcc" || reg="--region cn-bj --isp cucc"
			# A node leaves the feed when its files go.
			v=$(cat "$f" 2>/dev/null) || continue
			echo "$n $reg latency=$v"
		done | CTL metrics push --file - >/dev/null || echo "FAIL - metrics push --file"
		echo >> "$T/rounds"
		sleep 0.2
	done
) &
FEEDER=$!
trap 'rm -f "$T/feeding"; kill $FEEDER 2>/dev/null; wait $FEEDER 2>/dev/null; cleanup' EXIT
# rounds: the feeder's rounds so far; fed N: N more rounds came after
# the call (waits as long as the deadline allows).
rounds() { wc -l < "$T/rounds" 2>/dev/null || echo 0; }
fed() {
	local want=$(( $(rounds) + $1 ))
	for _ in $(tseq 100); do [ "$(rounds)" -ge "$want" ] && return 0; sleep 0.1; done
	return 1
}
fed 2 || fail "the feeder pushed nothing"
CTL service set www.gslb.test --steering nearest --switch-margin 20% --headroom 20% >/dev/null ||
	fail "service set --steering nearest"
expect_has "$(CTL export)" '"switch_margin": "20%"' "export: the switch margin"
# share REGION NODE-ADDR: per mille of 500 answers to the region's clients.
share() {
	local sub
	[ "$1" = gz ] && sub=101.6.1.0/24 || sub=101.7.1.0/24
	for _ in $(seq 500); do echo "www.gslb.test A +subnet=$sub"; done > "$T/batch"
	dig @127.0.0.1 -p "$PORT" +short +tries=1 +time=2 -f "$T/batch" > "$T/picks"
	echo $(( $(grep -c "^$2\$" "$T/picks") * 1000 / $(grep -c . "$T/picks") ))
}
# choice REGION: the row's choice from steer show.
choice() {
	local key
	[ "$1" = gz ] && key="www.gslb.test|cn-gz|ctcc" || key="www.gslb.test|cn-bj|cucc"
	CTL --json steer show www.gslb.test | python3 -c "
import json, sys
for r in json.load(sys.stdin):
    if r['row'] == '$key' and r['steered']:
        print(r.get('current', ''))"
}
is() { [ "$(choice "$1")" = "$2" ]; }

# 1. Each region goes to its lowest-latency node.
wait_until 15 is gz a && wait_until 5 is bj c && ok "cn-gz to a, cn-bj to c" ||
	fail "first choices: gz $(choice gz), bj $(choice bj): $(CTL steer show www.gslb.test)"
s=$(share gz 192.0.2.1)
[ "$s" -ge 990 ] && ok "dig: a answers all of cn-gz ($s per mille)" || fail "dig: a answers $s per mille of cn-gz"
s=$(share bj 192.0.2.3)
[ "$s" -ge 990 ] && ok "dig: c answers all of cn-bj ($s per mille)" || fail "dig: c answers $s per mille of cn-bj"
out=$(CTL explain www.gslb.test --client 101.6.1.1)
expect_has "$out" "^steering +nearest, switch margin 20%, headroom 20%" "explain: nearest steering"
expect_has "$out" "^  a +100 +1 +20\.0 " "explain: a ranks first at 20 ms"
expect_has "$(CTL log)" "nearest www\.gslb\.test\|cn-gz\|ctcc: a is the nearest \(20 ms\)" \
	"log: the first choice with its reason"
expect_has "$(CTL status www.gslb.test)" "nearest: a stays the nearest|nearest: a is the nearest" \
	"status: the row's choice"

# 2. Noise within the margin: b comes within 10 % of a, back and forth,
# for 6 evaluations: no switch.  Each value is held one evaluation
# interval (1 s) after the feeder pushed it: time passes to show that
# the noise moves nothing.
mark=$(wc -l < "$T/gslbd.log")
for l in 19 21 18 22 18 21; do set_m b:gz $l; set_m a:gz $((40 - l)); fed 1; sleep 1; done
is gz a && ok "noise within the margin: cn-gz stays on a" || fail "switched on noise: $(choice gz)"
expect_not "$(tail -n +"$mark" "$T/gslbd.log")" "cn-gz\|ctcc: (b|a) -> " "no switch in the log"

# 3. a worsens beyond the margin: one pending evaluation, then the move.
set_m a:gz 20
set_m b:gz 18
# Both pushed, and two evaluations (1 s each) on them, so that the
# noise above is behind the smoothing (tau 1 s) before a worsens.
fed 1
sleep 2
mark=$(wc -l < "$T/gslbd.log")
set_m a:gz 90
wait_until 10 is gz b && ok "a worse beyond the margin: cn-gz moves to b" ||
	fail "no move to b: $(CTL steer show www.gslb.test)"
log=$(tail -n +"$mark" "$T/gslbd.log")
expect_has "$log" "cn-gz\|ctcc: a stays: b \([0-9]+ ms\) better than a .* 1 of 2 evaluations" \
	"log: one pending evaluation"
expect_has "$log" "cn-gz\|ctcc: a -> b: .*better by more than 20% in 2 evaluations" "log: the switch"
n=$(grep -c "cn-gz|ctcc: a stays: b" <<< "$log")
[ "$n" -le 2 ] && ok "moved within two evaluations of the worsening ($n pending)" ||
	fail "$n pending evaluations before the move"
expect_has "$(CTL log)" "cn-gz\|ctcc: a -> b: .*; shares a 0\.00% b 100\.00%" "audit: the move and its reason"
s=$(share gz 192.0.2.2)
[ "$s" -ge 990 ] && ok "dig: b answers all of cn-gz ($s per mille)" || fail "dig: b answers $s per mille of cn-gz"
s=$(share bj 192.0.2.3)
[ "$s" -ge 990 ] && ok "dig: cn-bj still on c ($s per mille)" || fail "dig: c answers $s per mille of cn-bj"

# 4. Capacity: b runs at 100 % of its capacity; it keeps 80 % of the row
# (20 % headroom) and the rest spills to the next-nearest, c (a is 90 ms).
set_m c:gz 40
CTL metrics push b bandwidth=100 >/dev/null
spilled() { [ "$(share gz 192.0.2.3)" -ge 150 ]; }
if wait_until 10 spilled; then
	sb=$(share gz 192.0.2.2) sc=$(share gz 192.0.2.3)
	[ "$sb" -ge 740 ] && [ "$sb" -le 860 ] && [ "$sc" -ge 140 ] && [ "$sc" -le 260 ] &&
		ok "dig: b keeps $sb, c takes $sc per mille" || fail "dig: b $sb, c $sc per mille"
else
	fail "no spill: $(CTL steer show www.gslb.test)"
fi
expect_has "$(CTL steer show www.gslb.test)" "^  c .* +20\.00  spill" "steer show: c takes the spill"
expect_has "$(CTL log)" "b at 100% of capacity, keeps 80\.00% of the row \(headroom 20%\)" \
	"audit: the capacity limit"
is gz b && ok "the row's choice is still b" || fail "choice moved to $(choice gz)"
CTL metrics push b bandwidth=10 >/dev/null

# 5. Hard failure: b is taken out; the row goes to c at once.
t0=$(date +%s%N)
CTL node set b --admin down >/dev/null
wait_until 10 is gz c && ok "b down: cn-gz to c at once ($(( ($(date +%s%N) - t0) / 1000000 )) ms)" ||
	fail "b down: choice $(choice gz)"
expect_has "$(CTL log)" "cn-gz\|ctcc: b is down, c at once" "audit: the hard failure"
s=$(share gz 192.0.2.3)
[ "$s" -ge 990 ] && ok "dig: c answers all of cn-gz ($s per mille)" || fail "dig: c answers $s per mille"

# 5b. Operator changes that take a node out of a row move it at once,
# not at the next evaluation: gslbd again with an evaluation every 300 s
# (the one at start keeps cn-gz and cn-bj on c; b is down).
gslbd_stop || fail "gslbd did not stop cleanly"
sed -i 's/^  interval: 1$/  interval: 300/' "$T/gslbd.conf"
gslbd_start
# answers REGION NODE-ADDR: dig gives all of 200 answers of the region to NODE.
answers() {
	local sub
	[ "$1" = gz ] && sub=101.6.1.0/24 || sub=101.7.1.0/24
	for _ in $(seq 200); do echo "www.gslb.test A +subnet=$sub"; done > "$T/batch"
	dig @127.0.0.1 -p "$PORT" +short +tries=1 +time=2 -f "$T/batch" > "$T/picks"
	[ "$(sort -u "$T/picks")" = "$2" ]
}
# moved WHAT REGION ADDR: within 10 s (scaled), well inside the 300 s
# interval, with the time it took.
moved() {
	local t0
	t0=$(date +%s%N)
	wait_until 10 answers "$2" "$3" &&
		ok "$1: dig gives cn-$2 to $3 at once ($(( ($(date +%s%N) - t0) / 1000000 )) ms)" ||
		fail "$1: cn-$2 not on $3: $(sort "$T/picks" | uniq -c | tr '\n' ' ')"
}
moved "restart" gz 192.0.2.3
moved "restart" bj 192.0.2.3
CTL node set b --admin auto >/dev/null
# Time passes to show that nothing moves before the next evaluation,
# 300 s away: 2 s are more than the moves above took.
sleep 2
answers gz 192.0.2.3 && answers bj 192.0.2.3 && ok "b back: no move before the evaluation" ||
	fail "b back moved a row: $(sort "$T/picks" | uniq -c | tr '\n' ' ')"
mark=$(wc -l < "$T/gslbd.log")
CTL node set c --admin drain >/dev/null
moved "c drained" gz 192.0.2.2
moved "c drained" bj 192.0.2.2
expect_has "$(tail -n +"$mark" "$T/gslbd.log")" "cn-gz\|ctcc: c drained, b at once" "log: c drained, b at once"
CTL node set c --admin auto >/dev/null
# As above: nothing moves before the evaluation, 300 s away.
sleep 2
answers gz 192.0.2.2 && answers bj 192.0.2.2 && ok "c back: no move before the evaluation" ||
	fail "c back moved a row: $(sort "$T/picks" | uniq -c | tr '\n' ' ')"
# The operator's weights would split these rows between a and c: dig
# sees nearest steering's choice only.
CTL weight set www.gslb.test --region cn-gz --isp ctcc a=100 b=0 c=100 >/dev/null
moved "b weight 0 in cn-gz" gz 192.0.2.3
answers bj 192.0.2.2 && ok "cn-bj stays on b" || fail "cn-bj left b: $(sort "$T/picks" | uniq -c | tr '\n' ' ')"
expect_has "$(CTL log)" "cn-gz\|ctcc: b has weight 0, c at once" "audit: weight 0, c at once"
CTL weight set www.gslb.test --region cn-bj --isp cucc a=100 c=100 >/dev/null
moved "b out of the cn-bj row" bj 192.0.2.3
expect_has "$(CTL log)" "cn-bj\|cucc: b left the row, c at once" "audit: b left the row"
# b leaves the feed first: two rounds of pushes after its files go.
rm -f "$T"/m/b:*
fed 2 || fail "the feeder stopped"
CTL weight set www.gslb.test --region cn-gz --isp ctcc a=100 c=50 >/dev/null
CTL node del b >/dev/null && ok "node del b once no row has it" || fail "node del b"
# Time passes to show that the rows stay put (the next evaluation is
# 300 s away).
sleep 1
answers gz 192.0.2.3 && answers bj 192.0.2.3 && ok "b deleted: the rows keep c" ||
	fail "b deleted: a row left c: $(sort "$T/picks" | uniq -c | tr '\n' ' ')"
CTL node set c --admin down >/dev/null
moved "c down" gz 192.0.2.1
moved "c down" bj 192.0.2.1
expect_has "$(CTL log)" "cn-bj\|cucc: c is down, a at once" "audit: c down, a at once"
CTL node set c --admin auto >/dev/null

# 5c. Replay: every recorded nearest decision (first choices, the switch,
# the spill, the hard moves and the rows given back their shares) comes
# out identical from its recorded inputs.
out=$(CTL steer replay www.gslb.test 2>&1) && ok "steer replay exits 0" || fail "steer replay: $out"
expect_has "$out" "^([1-9][0-9]*) decision\(s\) replayed, \1 identical, 0 different$" \
	"replay: every nearest decision identical"
n=$(grep -c "cn-gz|ctcc  identical" <<< "$out")
[ "$n" -ge 5 ] && ok "replay: $n decisions of cn-gz" || fail "replay: $n decisions of cn-gz: $out"

# 6. Static again: the operator's weights answer (b is gone).
CTL service set www.gslb.test --steering static >/dev/null
expect_not "$(CTL export)" "switch_margin" "static: the nearest settings go"
s=$(share bj 192.0.2.3)
[ "$s" -ge 420 ] && [ "$s" -le 580 ] && ok "static: c back to half of cn-bj ($s per mille)" ||
	fail "static: c answers $s per mille of cn-bj"

finish
