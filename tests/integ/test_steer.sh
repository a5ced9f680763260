#!/bin/bash
# The steering engine under the real daemon, time compressed (interval
# 1 s, tau 2 s): pushed success and latency per (region, ISP) move the
# shares of each row on its own, seen in dig's answers and in explain;
# every automatic change is audited and replays identically; a provider
# past its budget loses share; a node below the SLA leaves at once;
# stale inputs hand the row back to the operator's weights step by step;
# a node at half its peer's score keeps a ninth; a static service
# ignores all of it.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/steer_lib.sh"
# The change window is 12 evaluations here (60 by default): the moves of
# one section free their allowance before the next section needs it, on
# a busy machine too.
steer_setup "" "change-window: 12"

CTL service add www.gslb.test --ttl 30 --answers 1 >/dev/null
CTL node add a --addr 192.0.2.1 --provider cdn-a --cost-per-gb 0.02 >/dev/null
CTL node add b --addr 192.0.2.2 --provider cdn-b --cost-per-gb 0.02 >/dev/null
for r in "--region cn-gz --isp ctcc" "--region cn-bj --isp cucc"; do
	# shellcheck disable=SC2086
	CTL weight set www.gslb.test $r a=50 b=50 >/dev/null
done
gslbd_start

# The current measurements of each node in each row, pushed over and
# over by the feeder (steer_lib.sh).
for k in a:gz b:gz a:bj b:bj; do set_m $k "success=99.9 latency=20"; done
start_feeder

# 1. Static (the default): measurements change nothing.
set_m b:gz "success=98.5 latency=200"
# Time passes to show that nothing is steered: three evaluation
# intervals (1 s).
sleep 3
[ -z "$(weight gz b 2>/dev/null)" ] && ok "static service: no engine shares" ||
	fail "static service got engine shares: $(weight gz b)"
out=$(CTL steer show www.gslb.test 2>&1) && fail "steer show on a static service" ||
	expect_has "$out" "does not steer" "steer show: a static service does not steer"
s=$(share gz 192.0.2.2)
within "$s" 440 560 && ok "static: b keeps its half in cn-gz ($s per mille)" ||
	fail "static: b got $s per mille"

# 2. Dynamic: b is slow in cn-gz only; its share there falls step by step
# and dig follows; cn-bj stays even.  Latency weighs 0.8, success 0.2:
# b scores 0.2 x 0.71 = 0.14 and keeps the floor (5 %); the weights the
# other way round would score it 0.57 and leave it about 25 %.
CTL service set www.gslb.test --steering dynamic --weights success=0.2,latency=0.8,cost=0 >/dev/null
expect_b_slow_in_gz 20 "pushed latency"
floor_b_gz() { [ "$(weight gz b)" = 500 ]; }
wait_until 20 floor_b_gz && ok "b at the floor in cn-gz (500 bp)" ||
	fail "b not at the floor in cn-gz: $(weight gz b) bp"
w=$(weight gz b)
want=$(( ${w:-5000} / 10 ))
s=$(share gz 192.0.2.2)
within "$s" $((want - 50)) $((want + 50)) &&
	ok "dig: b answers $s per mille in cn-gz, the engine says $want" ||
	fail "dig: b answers $s per mille in cn-gz, the engine says $want"
out=$(CTL explain www.gslb.test --client 101.6.1.1)
expect_has "$out" "steering +dynamic" "explain: the row is steered"
expect_has "$out" "^  b +50 +98\.50 +200\.0 " "explain: b's inputs (success, latency)"
expect_has "$(CTL log)" "steer www\.gslb\.test\|cn-gz\|ctcc: .*b .*success 98\.50, latency 200 ms" \
	"log: the automatic change with its reason and inputs"

# 3. Replay: the recorded decisions come out identical.
out=$(CTL steer replay www.gslb.test 2>&1) && ok "steer replay exits 0" || fail "steer replay: $out"
expect_has "$out" "^([1-9][0-9]*) decision\(s\) replayed, \1 identical, 0 different" \
	"replay: every decision identical"
out=$(CTL steer replay www.gslb.test --from 2000-01-01T00:00:00Z --to 2000-01-02T00:00:00Z)
expect_has "$out" "^0 decision" "replay: a window without decisions is empty"

# 3b. Shadow: the engine goes on computing and recording, the answers
# are the operator's again at once.
CTL service set www.gslb.test --steering shadow >/dev/null
s=$(share gz 192.0.2.2)
within "$s" 440 560 && ok "shadow: dig gives b the operator's half again ($s per mille)" ||
	fail "shadow: b answers $s per mille"
w=$(weight gz b)
[ -n "$w" ] && [ "$w" -le 1000 ] && ok "shadow: steer show keeps the engine's share ($w bp)" ||
	fail "shadow: engine share of b is '$w'"
expect_has "$(CTL explain www.gslb.test --client 101.6.1.1)" "^steering +shadow" "explain: shadow"
CTL service set www.gslb.test --steering dynamic >/dev/null
s=$(share gz 192.0.2.2)
[ "$s" -le 150 ] && ok "dynamic again: the engine's share answers ($s per mille)" ||
	fail "dynamic again: b answers $s per mille"

# 4. Budget: equal quality, then cdn-a spends its month at once: a's
# share falls in both rows, seen in cn-bj (cn-gz has used most of its
# hourly limit, S3-8, on b's fall and return).
set_m b:gz "success=99.9 latency=20"
CTL service set www.gslb.test --weights success=0.4,latency=0.3,cost=0.3 >/dev/null
even() { w=$(weight gz a); [ -n "$w" ] && within "$w" 4800 5200; }
wait_until 20 even && ok "equal quality and price: even again" || fail "not even: $(weight gz a)"
CTL budget set cdn-a --limit 100 --period month --alert 80 >/dev/null
CTL metrics push --provider cdn-a spent=150 >/dev/null
expect_has "$(CTL budget list)" "^cdn-a .* exhausted" "budget list: cdn-a exhausted"
low_a() { w=$(weight bj a); [ -n "$w" ] && [ "$w" -le 3000 ]; }
if wait_until 20 low_a; then ok "cdn-a over budget: a down to $(weight bj a) bp in cn-bj"
else fail "a did not lose share over budget: $(CTL steer show www.gslb.test)"; fi
s=$(share bj 192.0.2.1)
[ "$s" -le 350 ] && ok "dig: a answers $s per mille in cn-bj" || fail "dig: a still answers $s per mille"
expect_has "$(CTL explain www.gslb.test --client 101.7.1.1)" "cdn-a budget exhausted" \
	"explain: the budget state"
CTL budget del cdn-a >/dev/null

# 5. SLA: b's success falls below 98 % in cn-bj: out at once.
set_m b:bj "success=90 latency=20"
zero_b() { [ "$(weight bj b)" = 0 ]; }
if wait_until 20 zero_b; then ok "b below the SLA in cn-bj: weight 0"
else fail "b not out for the SLA: $(CTL steer show www.gslb.test)"; fi
s=$(share bj 192.0.2.2)
[ "$s" = 0 ] && ok "dig: b no longer answers in cn-bj" || fail "dig: b still answers $s per mille in cn-bj"
expect_has "$(CTL explain www.gslb.test --client 101.7.1.1)" "^  b .*SLA" "explain: b out for the SLA"

# 6. Stale (S2-7): the feed stops.  For a pause shorter than stale (8 s)
# the shares stay; then each row goes back to the operator's weights by
# max-step (20 points an evaluation) and the change window's allowance
# (100 points in 12 evaluations here, partly used by the moves above),
# not at once: b in cn-bj, out for the SLA, passes through shares
# between 0 and 50 % on its way back to half.
stop_feeder
paused=$SECONDS
seen=
while [ $((SECONDS - paused)) -lt 4 ]; do seen+=" $(weight bj b)"; sleep 0.3; done
[ "$(tr ' ' '\n' <<<"$seen" | sort -u | tr -d '\n')" = 0 ] &&
	ok "a pause shorter than stale keeps the shares (b in cn-bj:$seen)" ||
	fail "the shares moved within stale: b in cn-bj:$seen"
stale() { [ -z "$(weight gz a)" ] && [ -z "$(weight bj b)" ]; }
# stale (8 s), a change window to wait out at worst (12 s), three steps.
end=$((SECONDS + $(tscale 30)))
steps=
while [ $SECONDS -lt $end ] && ! stale; do
	w=$(weight bj b)
	[ -n "$w" ] && [ "$w" -gt 0 ] && [ "$w" -lt 5000 ] && steps+=" $w"
	sleep 0.2
done
stale && ok "no fresh input: the operator's weights again" ||
	fail "still steered without fresh input: $(CTL steer show www.gslb.test)"
[ -n "$steps" ] && ok "back by steps, not at once (b in cn-bj:$(tr ' ' '\n' <<<"$steps" | uniq | tr '\n' ' '))" ||
	fail "b in cn-bj went back to the operator's weights at once"
expect_has "$(CTL log)" "b 0\.00% -> ([1-9]|1[0-9]|20)\.[0-9]+% .*returning to the operator's weights" \
	"log: the first step back, at most max-step (20 points)"
s=$(share bj 192.0.2.2)
within "$s" 440 560 && ok "dig: b back to half in cn-bj ($s per mille)" || fail "dig: b at $s per mille"
expect_has "$(CTL log)" "no fresh input, back to the operator's weights" "log: the revert"

# 7. Bad input changes nothing.
out=$(CTL metrics push a --region cn-gz success=120 2>&1); rc=$?
[ $rc = 1 ] && expect_has "$out" "success 120: give a number from 0 to 100" "success out of range refused" ||
	fail "success=120: rc $rc: $out"
out=$(CTL service set www.gslb.test --weights speed=1 2>&1)
expect_has "$out" "give success=A,latency=B,cost=C" "bad --weights refused"
out=$(CTL metrics push a --region CN-GZ success=99 2>&1)
expect_has "$out" "--region CN-GZ: use a short lowercase name" "bad region refused"
# Spend derived from bytes times price: 5 GB at 0.02.
CTL budget set cdn-b --limit 1000 >/dev/null
CTL metrics push b bytes=5000000000 >/dev/null
expect_has "$(CTL budget list)" "^cdn-b +1000\.00 +month +80% +0\.10 within" "bytes x price counted as spend"
# Other periods: spend counts per period; a new period starts from 0.
CTL budget set cdn-b --period week >/dev/null
expect_has "$(CTL budget list)" "^cdn-b +1000\.00 +week +80% +0\.00 within" "a weekly budget starts its own spend"
CTL metrics push b bytes=10000000000 >/dev/null
expect_has "$(CTL budget list)" "^cdn-b +1000\.00 +week +80% +0\.20 within" "bytes counted in the week"
CTL budget set cdn-b --period 10d >/dev/null
expect_has "$(CTL budget list)" "^cdn-b +1000\.00 +10d " "a budget of 10 days"
out=$(CTL budget set cdn-b --period year 2>&1); rc=$?
[ $rc = 1 ] && expect_has "$out" "--period year: give day, week, month or a number of days" \
	"bad --period refused" || fail "--period year: rc $rc: $out"
expect_has "$(CTL budget list)" "^cdn-b +1000\.00 +10d " "the refused period changed nothing"
CTL budget set cdn-b --period month >/dev/null
expect_has "$(CTL budget list)" "^cdn-b +1000\.00 +month +80% +0\.10 within" "back to the month's spend"
CTL node set b --provider none --cost-per-gb none >/dev/null
out=$(CTL metrics push b bytes=1000 2>&1)
expect_has "$out" "needs node b to have --provider and --cost-per-gb" "bytes without a price refused"

# 8. A batch push is one transaction: a bad line names the file and line,
# and the good lines before it are not written either.
spent() { CTL budget list | awk '$1 == "cdn-b" { print $5 }'; }
CTL node set b --provider cdn-b --cost-per-gb 0.02 >/dev/null
before=$(spent)
printf '# pipeline round\nb bytes=5000000000\n\na --region cn-gz latency=-1\n' > "$T/batch"
out=$(CTL metrics push --file "$T/batch" 2>&1); rc=$?
[ $rc = 1 ] && expect_has "$out" "$T/batch:4: metrics push: latency -1" "batch: bad line named" ||
	fail "batch with a bad line: rc $rc: $out"
[ "$(spent)" = "$before" ] && ok "batch: nothing written ($before)" || fail "batch wrote: $(spent) vs $before"
out=$(printf 'b bytes=5000000000\nb bytes=5000000000\n' | CTL metrics push --file - 2>&1)
expect_has "$out" "^2 measurements from stdin stored" "batch from stdin"
expect_has "$(CTL budget list)" "^cdn-b +1000\.00 +month +80% +0\.30 within" "batch: both lines counted"
out=$(CTL metrics push --file "$T/none" 2>&1)
expect_has "$out" "metrics push --file $T/none: No such file" "batch: missing file named"

# 8b. The score-to-share mapping (S3-3, steer.sharpness 3): in cn-bj b
# scores half of a (success 0.2, latency 0.8: b at 132.5 ms has latency
# score 0.375, 0.2 + 0.8 x 0.375 = 0.5); at equal weight its target is
# 1 / (1 + 2^3) of the row, 1111 bp (the square gave 2000, the plain
# score 3333), under a sixth; dig follows.
CTL service set www.gslb.test --weights success=0.2,latency=0.8,cost=0 >/dev/null
set_m b:bj "success=99.9 latency=132.5"
set_m b:gz "success=99.9 latency=20"
start_feeder
ninth_b() { local w; w=$(weight bj b); [ -n "$w" ] && within "$w" 1011 1211; }
if wait_until 20 ninth_b; then ok "b at half a's score: $(weight bj b) bp of cn-bj (a ninth)"
else fail "b at half a's score: $(weight bj b) bp, want 1111: $(CTL steer show www.gslb.test)"; fi
s=$(share bj 192.0.2.2)
within "$s" 61 161 && ok "dig: b answers $s per mille in cn-bj, under a sixth" ||
	fail "dig: b answers $s per mille in cn-bj"
stop_feeder

# 9. Export and apply round trip: the steering settings of services
# (policy, weights, SLA, nearest's margin and headroom) and nodes
# (provider, price) apply to a fresh store and export the same again;
# bad values are refused by name and change nothing.
CTL service set www.gslb.test --sla 99.5 >/dev/null
CTL service add near.gslb.test >/dev/null
CTL weight set near.gslb.test a=1 b=1 >/dev/null
CTL service set near.gslb.test --steering nearest --switch-margin 10ms --headroom 25 >/dev/null
FRESH() { "$ROOT/$B/gslbctl" -d "$T/fresh" "$@" 2>&1 | grep -v "no gslbd serves"; }
CTL export > "$T/e1.json"
expect_has "$(cat "$T/e1.json")" '"steer_weights"' "export: the policy's weights"
FRESH --create apply --force "$T/e1.json" >/dev/null
out=$(FRESH export)
[ "$out" = "$(cat "$T/e1.json")" ] && ok "export, apply to a fresh store, export: identical" ||
	fail "round trip differs: $(diff <(echo "$out") "$T/e1.json")"
bad() { # KEY-PATH VALUE MESSAGE: apply of e1.json with one value changed
	python3 -c "
import json, sys
d = json.load(open('$T/e1.json'))
lst, i, k = '$1'.split('.')
d[lst][int(i)][k] = json.loads(sys.argv[1])
json.dump(d, open('$T/bad.json', 'w'))" "$2"
	out=$("$ROOT/$B/gslbctl" -d "$T/fresh" apply --force "$T/bad.json" 2>&1)
	[ $? = 1 ] && expect_has "$out" "$3" "apply: $1 $2 refused" ||
		fail "apply: $1 $2 not refused with status 1: $out"
}
svc=$(python3 -c "
import json
print([s['name'] for s in json.load(open('$T/e1.json'))['services']].index('www.gslb.test'))")
bad "services.$svc.sla" 120 "service www\.gslb\.test: sla must be a number from 0 to 100"
bad "services.$svc.policy" '"fast"' "service www\.gslb\.test: policy must be \"live\", \"vod\" or \"custom\""
bad "services.$svc.steer_weights" '{"success": 0, "latency": 0, "cost": 0}' "steer_weights must be"
bad "services.$svc.steering" '"fastest"' "steering must be \"dynamic\", \"shadow\" or \"nearest\""
bad "nodes.0.provider" '"CDN A"' "node a: provider must be a short lowercase name"
bad "nodes.0.cost_per_gb" -1 "node a: cost_per_gb must be a number from 0"
[ "$(FRESH export)" = "$(cat "$T/e1.json")" ] && ok "refused applies changed nothing" ||
	fail "a refused apply changed the store"

finish
