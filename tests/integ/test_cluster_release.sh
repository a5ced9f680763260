#!/bin/bash
# Gray releases in cluster mode (S4-10), with a real 3-member etcd and 3
# gslbd instances on loopback: a release started through ns2's gslbctl
# is written through etcd; only the elected instance widens and rolls
# back, through etcd, so each step is audited once, by it, in every
# instance's log, and all three answer the same client networks with the
# new node; pause and resume through any instance reach all three; when
# the elected instance dies mid-release, the next one goes on from the
# stored step, none taken twice and none skipped; a guard broken by a
# push to every instance rolls the release back on all three.
. "$(dirname "$0")/lib.sh"
LEASE_TTL=3
. "$(dirname "$0")/cluster_lib.sh"
gslb_zone
for i in 1 2 3; do ns_conf "$i"; done
etcd_cluster_start || exit 1
CTLN 1 service add www.gslb.test --ttl 30 >/dev/null || fail "service add"
CTLN 1 node add a --addr 192.0.2.1 >/dev/null
CTLN 1 node add b --addr 192.0.2.2 >/dev/null
CTLN 1 node add new --addr 192.0.2.9 >/dev/null
CTLN 1 weight set www.gslb.test a=50 b=50 new=50 >/dev/null
for i in 1 2 3; do ns_start "$i"; done

# The new node's success, as a feeder pushes it to every instance (the
# figures stay in the store they reach).
echo 99.9 > "$T/success"
feed() { CTLN "$1" metrics push new success="$(cat "$T/success")"; }
feeder_start feed

leader_now() { CTLN "${1:-1}" cluster status 2>/dev/null | sed -n 's/^leader: ns//p'; }
field() { # i name: the release's field in nsI's store
	CTLN "$1" --json release show www.gslb.test 2>/dev/null | python3 -c "
import json, sys; print(json.load(sys.stdin)['release']['$2'])" 2>/dev/null
}
# The controller's records in nsI's audit log, oldest first: "ACTOR
# STATE PERCENT SINCE" for each change of the release's state or share.
rel_log() {
	CTLN "$1" --json log --limit 1000 2>/dev/null | python3 -c "
import json, sys
for r in json.load(sys.stdin)['records']:
    if not r.get('what', '').startswith('release www.gslb.test: node new '):
        continue
    for c in r.get('changes', []):
        a = (c.get('after') or {}).get('release')
        if c.get('kind') == 'service' and a:
            print(r.get('actor'), a['state'], a['percent'], a['since'])"
}
# in_set I: the client networks (of 200 /24s) that nsI answers with new.
for n in $(seq 0 199); do
	echo "www.gslb.test A +subnet=10.$((n / 100)).$((n % 100)).0/24"
done > "$T/batch"
in_set() {
	dig @127.0.0.1 -p "${NSPORT[$1]}" +short +tries=1 +time=2 -f "$T/batch" > "$T/picks$1"
	[ "$(grep -c . "$T/picks$1")" -eq 200 ] || { echo "short answers"; return 1; }
	grep -n '^192\.0\.2\.9$' "$T/picks$1" | cut -d: -f1 | tr '\n' ' '
}
pct_all() { # percent: 0 once every running instance's store holds it
	local i
	for i in 1 2 3; do
		[ -n "${NSPID[$i]}" ] || continue
		[ "$(field "$i" percent)" = "$1" ] || return 1
	done
}
state_all() { # state
	local i
	for i in 1 2 3; do
		[ -n "${NSPID[$i]}" ] || continue
		[ "$(field "$i" state)" = "$1" ] || return 1
	done
}

L=
for _ in $(tseq 50); do L=$(leader_now); [[ "$L" =~ ^[123]$ ]] && break; sleep 0.1; done
[[ "$L" =~ ^[123]$ ]] && ok "ns$L is elected" || fail "no elected instance: '$L'"

# 1. Started through ns2: the release is in etcd, so in every store.
# Many steps, so that it is still under way whenever the checks run.
STEPS=10,20,30,40,50,60,70,80,90,92,94,96,98,100
CTLN 2 release start www.gslb.test --node new --steps $STEPS \
	--every 3s --guard 'success>=99' >/dev/null && ok "release started through ns2" ||
	fail "release start through ns2"
ETCDCTL get /gslbd/config/service/www.gslb.test --print-value-only | grep -q '"release"' &&
	ok "the release is in etcd" || fail "no release in etcd"
wait_until 10 state_all running && ok "every store holds the running release" ||
	fail "release states: $(field 1 state) $(field 2 state) $(field 3 state)"

# 2. Widening on schedule, decided by the elected instance.  Paused
# through ns3 once at 30 % or more, written through etcd: the share then
# holds everywhere while the answers are compared.
above() { local v; v=$(field "$1" percent); [ -n "$v" ] && [ "$v" -ge "$2" ]; }
if wait_until 30 above "$L" 30; then ok "widened to $(field "$L" percent) %"
else fail "not widened to 30 %: $(field "$L" percent)"; fi
CTLN 3 release pause www.gslb.test >/dev/null && ok "paused through ns3" || fail "pause through ns3"
ETCDCTL get /gslbd/config/service/www.gslb.test --print-value-only | grep -q '"state":"paused"' &&
	ok "the pause is in etcd" || fail "pause not in etcd"
wait_until 10 state_all paused && ok "every store holds the pause" ||
	fail "not paused everywhere: $(field 1 state) $(field 2 state) $(field 3 state)"
p=$(field "$L" percent)
wait_until 10 pct_all "$p" && ok "all three stand at $p %" ||
	fail "shares differ: $(field 1 percent) $(field 2 percent) $(field 3 percent)"
same=0
for _ in $(tseq 20); do
	for i in 1 2 3; do S[$i]=$(in_set "$i"); done
	[ -n "${S[1]}" ] && [ "${S[1]}" = "${S[2]}" ] && [ "${S[1]}" = "${S[3]}" ] && { same=1; break; }
	sleep 0.3
done
n=$(wc -w <<<"${S[1]}")
[ $same = 1 ] && ok "at $p %, all three answer the same $n of 200 networks with new" ||
	fail "the instances answer different networks with new: ${S[1]} / ${S[2]} / ${S[3]}"
lo=$((p * 2 - 24)); hi=$((p * 2 + 24))
[ "$n" -ge "$lo" ] && [ "$n" -le "$hi" ] && ok "$n of 200 networks at $p %" ||
	fail "$n of 200 networks at $p %"
for i in 1 2 3; do rel_log "$i" > "$T/rel$i"; done
cmp -s "$T/rel1" "$T/rel2" && cmp -s "$T/rel1" "$T/rel3" &&
	ok "the three audit logs hold the same $(grep -c . "$T/rel1") release changes" ||
	fail "release logs differ: $(paste -sd, "$T/rel1") / $(paste -sd, "$T/rel2") / $(paste -sd, "$T/rel3")"
expect_not "$(cat "$T/rel1" "$T/rel2" "$T/rel3")" "^(cluster:ns[^$L] |gslbd:release)" \
	"every step was decided by ns$L"
got=$(awk '{ print $1, $3 }' "$T/rel1" | paste -sd,)
want=$(for v in $(tr , ' ' <<<"${STEPS#10,}"); do [ "$v" -le "$p" ] && echo "cluster:ns$L $v"; done | paste -sd,)
[ "$got" = "$want" ] && ok "one record per step, by ns$L: $got" || fail "step records: $got, expected $want"
# On schedule, by the controller's own times: each step lasted --every
# (3 s), at most two evaluations more on a loaded machine.
st=$(CTLN "$L" --json release show www.gslb.test | python3 -c "
import json, sys; print(json.load(sys.stdin)['release']['started_unix'])")
d=$(awk -v s="$st" '{ print $4 - s; s = $4 }' "$T/rel1" | paste -sd,)
[[ "$d" =~ ^[345](,[345])+$ ]] && ok "steps lasted $d s (every 3 s)" || fail "steps lasted $d s"

# 3. Resumed through ns1; the elected instance dies mid-release: the
# next one goes on from the stored step.
CTLN 1 release resume www.gslb.test >/dev/null && ok "resumed through ns1" || fail "resume"
wait_until 10 state_all running || fail "not running everywhere after resume"
wait_until 15 above "$L" $((p + 10)) && ok "ns$L widened to $(field "$L" percent) %" ||
	fail "no widening after resume: $(field "$L" percent)"
# A pause read before the elected instance's next step and written
# after it (the test hook holds gslbctl 4 s between the two; a step
# comes every 3 s) is refused rather than written over the step, which
# would rewind the release and have the step taken and audited again.
Q=$(( L % 3 + 1 ))
out=$(GSLBCTL_TEST_CLUSTER_DELAY_MS=4000 CTLN "$Q" release pause www.gslb.test 2>&1); rc=$?
[ $rc = 1 ] && grep -q "changed by someone else" <<<"$out" &&
	ok "a pause read before a step and written after it is refused" ||
	fail "a stale pause through ns$Q: rc $rc: $out"
ETCDCTL get /gslbd/config/service/www.gslb.test --print-value-only | grep -q '"state":"running"' &&
	ok "etcd still holds the running release" || fail "the stale pause was written"
ns_stop "$L" KILL
NSPID[$L]=
killed=$(date +%s)
O1=$(( L % 3 + 1 ))
N=
for _ in $(tseq 100); do
	N=$(leader_now "$O1")
	[[ "$N" =~ ^[123]$ ]] && [ "$N" != "$L" ] && break
	sleep 0.1
done
[[ "$N" =~ ^[123]$ ]] && [ "$N" != "$L" ] && ok "ns$N is elected $(( $(date +%s) - killed )) s after ns$L was killed" ||
	fail "no new leader: '$N'"
O=$(( 6 - L - N ))
pk=$(field "$N" percent)
sk=$(field "$N" step)
step_from() { local v; v=$(field "$1" step); [ -n "$v" ] && [ "$v" -ge "$2" ]; }
wait_until 30 step_from "$N" $((sk + 2)) && ok "ns$N goes on: from $pk to $(field "$N" percent) %" ||
	fail "the release stalled under ns$N at $(field "$N" percent) %"
# Held there (the guards still watch a paused release).
CTLN "$N" release pause www.gslb.test >/dev/null || fail "pause through ns$N"
wait_until 10 state_all paused || fail "not paused on ns$N and ns$O"
rel_log "$N" > "$T/relN"
rel_log "$O" > "$T/relO"
cmp -s "$T/relN" "$T/relO" && ok "ns$N and ns$O hold the same release changes" ||
	fail "release logs differ: $(paste -sd, "$T/relN") / $(paste -sd, "$T/relO")"
# Every step once, in order, from the first to where it stands: no step
# taken twice, none skipped, across the change of leader.
got=$(awk '$2 == "running" { print $3 }' "$T/relN" | paste -sd,)
want=$(tr ',' '\n' <<<"${STEPS#10,}" | awk -v last="$(field "$N" percent)" '$1 <= last' | paste -sd,)
[ "$got" = "$want" ] && ok "each step audited once: $got" || fail "steps audited: $got, expected $want"
tail -1 "$T/relN" | grep -q "^cluster:ns$N " && ok "the last step was decided by ns$N" ||
	fail "last step: $(tail -1 "$T/relN")"
grep -q "^cluster:ns$L " "$T/relN" && ok "the steps before the kill were decided by ns$L" ||
	fail "no step by ns$L: $(paste -sd, "$T/relN")"

# 4. A broken guard, pushed to every instance: rolled back on all.
echo 90 > "$T/success"
for i in 1 2 3; do [ -n "${NSPID[$i]}" ] && CTLN "$i" metrics push new success=90 >/dev/null; done
pushed=$(date +%s)
if wait_until 10 state_all rolled-back; then ok "rolled back on every instance"
else fail "not rolled back everywhere: $(field "$N" state) $(field "$O" state)"; fi
lag=$(( $(CTLN "$N" --json release show www.gslb.test | python3 -c "
import json, sys; print(json.load(sys.stdin)['release']['since_unix'])") - pushed ))
[ "$lag" -le 1 ] && ok "the elected instance rolled back $lag s after the push" ||
	fail "rolled back $lag s after the push"
pct_all 0 && ok "0 % everywhere" || fail "not 0 % everywhere"
for i in "$N" "$O"; do
	s=$(in_set "$i")
	[ -z "$s" ] && ok "ns$i answers no network with new" || fail "ns$i still answers new to: $s"
done
rel_log "$O" > "$T/relO"
[ "$(grep -c ' rolled-back ' "$T/relO")" = 1 ] && grep -q "^cluster:ns$N rolled-back 0 " "$T/relO" &&
	ok "one rollback audited, by ns$N" || fail "rollback records: $(grep rolled "$T/relO" | paste -sd,)"
expect_has "$(cat "$T/ns$N.log")" "release www\.gslb\.test: node new rolled back from [0-9]+% to 0%: guard success>=99 broke" \
	"ns$N logs the rollback"
expect_not "$(cat "$T/ns$O.log")" "release www\.gslb\.test: node new rolled back" \
	"ns$O, not elected, decided nothing"

rm -f "$T/feeding"
finish
