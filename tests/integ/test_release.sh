#!/bin/bash
# Gray releases (S4-10) under the real daemon, time compressed (--every
# 10 s): a stable set of client networks, asked with dig +subnet, gets the
# new node, growing step by step and never losing anyone; the others
# never see it; pause holds the step, resume goes on, 100 % completes; a
# success guard broken by a push rolls back within one evaluation, with
# an audit record and a log line naming it; abort takes the node out;
# the commands validate, status and explain show the release and export
# round-trips through apply.
. "$(dirname "$0")/lib.sh"

gslb_zone
write_conf gslb.test z.zone
CTL service add www.gslb.test --ttl 30 >/dev/null
CTL service add two.gslb.test --ttl 30 >/dev/null
CTL node add a --addr 192.0.2.1 >/dev/null
CTL node add b --addr 192.0.2.2 >/dev/null
CTL node add new --addr 192.0.2.9 >/dev/null
CTL node add other --addr 192.0.2.10 >/dev/null
CTL weight set www.gslb.test a=50 b=50 new=50 >/dev/null
CTL weight set two.gslb.test a=50 new=50 >/dev/null
gslbd_start

# The success of node new as a feeder pushes it every 0.3 s while
# $T/feeding exists (for at most 3 minutes).
echo 99.9 > "$T/success"
touch "$T/feeding"
(
	end=$((SECONDS + $(tscale 180)))
	while [ -e "$T/feeding" ] && [ $SECONDS -lt $end ]; do
		CTL metrics push new success="$(cat "$T/success")" >/dev/null
		sleep 0.3
	done
) &
FEEDER=$!
trap 'rm -f "$T/feeding"; kill $FEEDER 2>/dev/null; wait $FEEDER 2>/dev/null; cleanup' EXIT

# in_set: the client networks (of 300 /24s) that get new, one a line.
for i in $(seq 0 299); do
	echo "www.gslb.test A +subnet=10.$((i / 100)).$((i % 100)).0/24"
done > "$T/batch"
in_set() {
	dig @127.0.0.1 -p "$PORT" +short +tries=1 +time=2 -f "$T/batch" > "$T/picks"
	[ "$(grep -c . "$T/picks")" -eq 300 ] || { echo "short answers"; return 1; }
	grep -n '^192\.0\.2\.9$' "$T/picks" | cut -d: -f1
}
field() { CTL --json release show www.gslb.test | python3 -c "
import json, sys; print(json.load(sys.stdin)['release']['$1'])"; }
wait_for() {
	local end=$((SECONDS + $(tscale "$1")))
	shift
	while [ $SECONDS -lt $end ]; do
		"$@" && return 0
		sleep 0.2
	done
	return 1
}
pct_is() { [ "$(field percent)" = "$1" ]; }
state_is() { [ "$(field state)" = "$1" ]; }

# 1. Validation: each bad start is refused and changes nothing.
bad() { # exit-status message-regex args...
	local want=$1 re=$2 out rc
	shift 2
	out=$(CTL release start "$@" 2>&1) && rc=0 || rc=$?
	if [ "$rc" = "$want" ] && grep -Eq -- "$re" <<<"$out"; then ok "refused ($rc): $out"
	else fail "release start $*: status $rc, $out"; fi
}
G="--steps 10,30,60,100 --every 10s"
# shellcheck disable=SC2086
{
bad 1 "service nope.gslb.test does not exist" nope.gslb.test --node new $G
bad 1 "node ghost does not exist" www.gslb.test --node ghost $G
bad 1 "node other is in none of the weight rows" www.gslb.test --node other $G
bad 1 "no weight row for region eu" www.gslb.test --node new --region eu $G
bad 1 "steps must increase" www.gslb.test --node new --steps 10,5,100 --every 3s
bad 1 "not a percentage above 0 and at most 100" www.gslb.test --node new --steps 0,5 --every 3s
bad 1 "not a percentage" www.gslb.test --node new --steps 5,150 --every 3s
bad 1 "not a duration" www.gslb.test --node new --steps 5,100 --every 3x
bad 1 "guard 'score>80'" www.gslb.test --node new $G --guard 'score>80'
bad 1 "latency is kept from above" www.gslb.test --node new $G --guard 'latency>=5'
bad 2 "give --node" www.gslb.test $G
bad 2 "unknown option '--bogus'" www.gslb.test --node new $G --bogus 1
}
[ -z "$(CTL release list | tail -n +2)" ] && ok "nothing was written" ||
	fail "a refused start left: $(CTL release list)"
s=$(in_set)
[ -n "$s" ] && ok "before any release, new answers like any node ($(wc -l <<<"$s") of 300)" ||
	fail "new answered nobody before the release"

# 2. Start: 10 %, a stable set, the others never get new.
CTL release start www.gslb.test --node new $G --guard 'success>=99' >/dev/null &&
	ok "release started" || fail "release start failed"
# Paused while the 10 % step is looked at, however slow the machine.
CTL release pause www.gslb.test >/dev/null
observed() { CTL release show www.gslb.test | grep -q "success>=99: 99\.9, holds"; }
wait_for 5 observed && ok "show: the guard as observed" ||
	fail "show: $(CTL release show www.gslb.test)"
# shellcheck disable=SC2086
bad 1 "has a paused release of node new already" www.gslb.test --node new $G
# shellcheck disable=SC2086
bad 1 "node new is in a release of service www.gslb.test already" two.gslb.test --node new $G
s1=$(in_set)
n1=$(grep -c . <<<"$s1")
[ "$n1" -ge 15 ] && [ "$n1" -le 50 ] && ok "10 %: $n1 of 300 networks get new" ||
	fail "10 %: $n1 of 300 networks get new"
[ "$(in_set)" = "$s1" ] && ok "the same networks again (stable)" || fail "the set moved"
out=$(q www.gslb.test A +subnet=10.0.0.0/24)
expect_has "$out" "CLIENT-SUBNET: 10\.0\.0\.0/24/24" "ECS scope /24: the answer depends on the network"
first=$(head -1 <<<"$s1")
sub="10.$(((first - 1) / 100)).$(((first - 1) % 100)).7"
expect_has "$(CTL explain www.gslb.test --client "$sub")" "release +node new answers the clients below 10% .*: in the release" \
	"explain: a client inside the release"
outside=$(seq 300 | grep -vxF -f <(echo "$s1") | head -1)
sub="10.$(((outside - 1) / 100)).$(((outside - 1) % 100)).7"
expect_has "$(CTL explain www.gslb.test --client "$sub")" "outside, never given it" \
	"explain: a client outside the release"
expect_has "$(CTL status)" "^www\.gslb\.test +new +\* +\* +paused +10%" "status shows the release"
CTL release resume www.gslb.test >/dev/null

# 3. Widening on schedule, the set only grows.
t0=$SECONDS
if wait_for 16 pct_is 30; then ok "widened to 30 % $((SECONDS - t0)) s after the resume (every 10 s)"
else fail "not widened to 30 %: $(CTL release show www.gslb.test)"; fi
# Paused at once: the step holds however slow the checks below are.
CTL release pause www.gslb.test >/dev/null && ok "paused" || fail "pause failed"
s2=$(in_set)
n2=$(grep -c . <<<"$s2")
[ -z "$(comm -23 <(sort <<<"$s1") <(sort <<<"$s2"))" ] && ok "30 %: $n2 networks, every one of the 10 % still in" ||
	fail "networks left the release when it widened"
[ "$n2" -ge 60 ] && [ "$n2" -le 120 ] && ok "30 %: $n2 of 300" || fail "30 %: $n2 of 300"

# 4. Pause (made above) holds the step past --every; resume goes on to
# 60 % and then completes at 100 %.  Time passes to show that the
# paused step does not widen: --every (10 s) and one more second.
sleep 11
pct_is 30 && state_is paused && ok "paused: still 30 % after 11 s" ||
	fail "paused release moved: $(field percent) $(field state)"
out=$(CTL release pause www.gslb.test 2>&1) && fail "pause twice" ||
	expect_has "$out" "is paused, not running" "a second pause is refused"
CTL release resume www.gslb.test >/dev/null && ok "resumed" || fail "resume failed"
wait_for 16 pct_is 60 && ok "resumed: widened to 60 %" || fail "not widened after resume: $(field percent)"
# Held at 60 % while the set is read, however slow the machine.
CTL release pause www.gslb.test >/dev/null
s3=$(in_set)
CTL release resume www.gslb.test >/dev/null
[ -z "$(comm -23 <(sort <<<"$s2") <(sort <<<"$s3"))" ] && ok "60 %: $(grep -c . <<<"$s3") networks, none left" ||
	fail "networks left the release at 60 %"
wait_for 16 state_is completed && ok "completed after the 60 % step" || fail "not completed: $(field state)"
pct_is 100 && ok "completed at 100 %" || fail "completed at $(field percent)"
expect_has "$(CTL log)" "gslbd:release +service set www\.gslb\.test release=.*\"reason\":\"completed after 10s with every guard held" \
	"the completion is audited"

# 5. Rollback: a new release; the success guard breaks, back to 0 % at
# once, audited and logged.
CTL release start www.gslb.test --node new --steps 20,50,100 --every 30s \
	--guard 'success>=99' >/dev/null && ok "second release started" ||
	fail "second release start failed"
[ "$(field state)" = running ] && ok "an ended release is replaced by a new one" || fail "not running"
pct_is 20 || fail "second release not at 20 %"
echo 90 > "$T/success"
CTL metrics push new success=90 >/dev/null
pushed=$(date +%s)
# The controller's own time of the rollback ("since") against the push:
# one evaluation is 1 s; a loaded machine may add two (the figures are
# whole seconds).
if wait_for 10 state_is rolled-back; then
	lag=$(( $(CTL --json release show www.gslb.test | python3 -c "
import json, sys; print(json.load(sys.stdin)['release']['since_unix'])") - pushed ))
	[ "$lag" -le 3 ] && ok "rolled back ${lag} s after the push of success 90" ||
		fail "rolled back $lag s after the push"
else
	fail "no rollback: $(CTL release show www.gslb.test)"
fi
pct_is 0 && ok "rolled back to 0 %" || fail "rolled back to $(field percent)"
s=$(in_set)
[ -z "$s" ] && ok "after the rollback no network gets new" || fail "$(wc -l <<<"$s") networks still get new"
# At 0 % the row still splits its clients by network: its NODATA (no
# node has IPv6) is scoped like its addresses, and is kept no longer
# than they are (the service's TTL, 30 s, or its short TTL).
out=$(q www.gslb.test AAAA +subnet=10.0.0.0/24)
expect_has "$out" "CLIENT-SUBNET: 10\.0\.0\.0/24/24" "release at 0 %: NODATA with the release's /24 scope"
soa_ttl=$(section "$out" AUTHORITY | awk '$4 == "SOA" { print $2; exit }')
[ -n "$soa_ttl" ] && [ "$soa_ttl" -le 30 ] && ok "release at 0 %: NODATA's SOA TTL $soa_ttl <= 30" ||
	fail "release at 0 %: NODATA's SOA TTL ${soa_ttl:-none} > 30"
expect_has "$(CTL log)" "gslbd:release +service set www\.gslb\.test release=.*\"reason\":\"guard success>=99 broke \(success 90\)\".*\"state\":\"rolled-back\"" \
	"the rollback is audited with the broken guard"
expect_has "$(cat "$T/gslbd.log")" "release www\.gslb\.test: node new rolled back from 20% to 0%: guard success>=99 broke" \
	"the log line names the broken guard"
out=$(CTL release resume www.gslb.test 2>&1) && fail "resume of a rolled-back release" ||
	expect_has "$out" "rolled-back, not paused \(release start it again\)" "resume after a rollback is refused"

# 5b. A figure that breaks a guard just after an evaluation does not
# wait for the next one (S4-10: rollback within one evaluation): the
# controller checks the guards as soon as a push reaches the store.  A
# release of 1 s steps shows when an evaluation has just run (its share
# moves); the breaking push follows at once, and dig, polling networks
# of the release, times the new node's last answer.  The next regular
# evaluation is a second later: checked on the timer alone, the node
# would stay about that long.  The feeder stops here: the good figures
# come from the polling loop itself, one push at a time, so that none
# can land after the breaking push and hide it.
rm -f "$T/feeding"
wait "$FEEDER"
CTL metrics push new success=99.9 >/dev/null
CTL release start www.gslb.test --node new --steps 10,20,30,40,50,60,70,80,90,100 \
	--every 1s --guard 'success>=99' >/dev/null || fail "1 s release start failed"
head -5 <<<"$s1" | while read -r i; do
	echo "www.gslb.test A +subnet=10.$(((i - 1) / 100)).$(((i - 1) % 100)).0/24"
done > "$T/few"
pct_now() { CTL --json release show www.gslb.test | grep -o '"percent": [0-9.]*' | head -1; }
# Waits (at most 15 s) for the share to move, pushing the good figure
# and polling as fast as gslbctl runs; 0 when it just moved below 90 %.
just_widened() {
	local p0 p end=$((SECONDS + $(tscale 15)))
	p0=$(pct_now)
	while [ $SECONDS -lt $end ]; do
		CTL metrics push new success=99.9 >/dev/null
		p=$(pct_now)
		[ "$p" != "$p0" ] && { [[ "$p" =~ \ ([1-8]0)$ ]]; return; }
		sleep 0.02
	done
	return 1
}
has_new() { dig @127.0.0.1 -p "$PORT" +short +tries=1 +time=1 -f "$T/few" | grep -q '^192\.0\.2\.9$'; }
if just_widened && has_new; then
	CTL metrics push new success=90 >/dev/null
	t0=$(date +%s%N)
	gone=
	for _ in $(tseq 100); do
		has_new || { gone=$(date +%s%N); break; }
		sleep 0.01
	done
	if [ -n "$gone" ]; then
		ms=$(( (gone - t0) / 1000000 ))
		# Generous for a loaded machine, below the second the timer
		# alone would take.
		[ "$ms" -le 500 ] && ok "a push just after an evaluation: new out of the answers in $ms ms" ||
			fail "new out of the answers only $ms ms after the push"
	else
		fail "new still answered after 100 polls: $(CTL release show www.gslb.test)"
	fi
	expect_has "$(CTL release show www.gslb.test)" "rolled-back" "the 1 s release is rolled back"
else
	fail "the 1 s release did not widen or its networks lack new: $(CTL release show www.gslb.test)"
fi

# 6. Abort.
echo 99.9 > "$T/success"
CTL release start www.gslb.test --node new --steps 50,100 --every 1m >/dev/null
s=$(in_set)
[ -n "$s" ] && ok "third release: $(wc -l <<<"$s") networks get new" || fail "third release: nobody"
CTL release abort www.gslb.test >/dev/null && ok "aborted" || fail "abort failed"
s=$(in_set)
[ -z "$s" ] && ok "after abort no network gets new" || fail "after abort $(wc -l <<<"$s") get new"
# With the release node the only usable one, the clients outside the
# release fail open to the others rather than get nothing.
CTL node set a --admin down >/dev/null
CTL node set b --admin down >/dev/null
dig @127.0.0.1 -p "$PORT" +short +tries=1 +time=2 -f "$T/batch" > "$T/picks"
[ "$(grep -c '^192\.0\.2\.[12]$' "$T/picks")" -eq 300 ] &&
	ok "new the only usable node at 0 %: all 300 networks fail open to a and b" ||
	fail "with a and b down: $(sort "$T/picks" | uniq -c | tr '\n' ' ')"
CTL node set a --admin auto >/dev/null
CTL node set b --admin auto >/dev/null
out=$(CTL release abort www.gslb.test 2>&1); rc=$?
[ $rc = 1 ] && expect_has "$out" "is aborted already" "abort twice: status 1" || fail "abort twice: $rc $out"
out=$(CTL release pause nope.gslb.test 2>&1); rc=$?
[ $rc = 1 ] && ok "pause of an unknown service: status 1" || fail "pause unknown: $rc"
out=$(CTL release frobnicate 2>&1); rc=$?
[ $rc = 2 ] && ok "unknown subcommand: status 2" || fail "unknown subcommand: $rc"

# 7. --json, export and apply.
CTL --json release list | python3 -c "
import json, sys
d = json.load(sys.stdin)
r = d['releases'][0]
assert r['service'] == 'www.gslb.test' and r['state'] == 'aborted' and r['percent'] == 0, r
" && ok "release list --json" || fail "release list --json"
CTL export > "$T/export.json"
grep -q '"release"' "$T/export.json" && ok "export holds the release" || fail "export lacks the release"
out=$(CTL apply --dry-run "$T/export.json" 2>&1)
expect_has "$out" "would add 0, change 0, delete 0" "apply of the export: no change"
python3 - "$T/export.json" > "$T/bad.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d['services']:
    if 'release' in s:
        s['release']['steps'] = [50, 10]
print(json.dumps(d))
PY
out=$(CTL apply "$T/bad.json" 2>&1) && fail "apply took bad steps" ||
	expect_has "$out" "service www\.gslb\.test: release: steps must be increasing" "apply refuses a bad release"

rm -f "$T/feeding"
finish
