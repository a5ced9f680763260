#!/bin/bash
# A new node joins its rows with its gray release (S4-10): `release
# start --weight` adds it to every row of the release with its final
# weight in the same change that starts the release at its first step,
# so dig never sees it answer more than that step's share of the client
# networks, not even right after the command.  A guard whose figure does
# not exist is never read: a score guard on a node without a probe is
# refused at the start, and a release whose success guard has no push
# holds its step and says which figure is missing and why.
. "$(dirname "$0")/lib.sh"

gslb_zone
write_conf gslb.test z.zone
CTL service add www.gslb.test --ttl 30 >/dev/null
CTL node add a --addr 192.0.2.1 >/dev/null
CTL node add b --addr 192.0.2.2 >/dev/null
CTL node add new --addr 192.0.2.9 >/dev/null
CTL weight set www.gslb.test a=50 b=50 >/dev/null
gslbd_start

for i in $(seq 0 299); do
	echo "www.gslb.test A +subnet=10.$((i / 100)).$((i % 100)).0/24"
done > "$T/batch"
# picks_new: of 300 client networks, how many get new first.
picks_new() {
	dig @127.0.0.1 -p "$PORT" +short +tries=1 +time=2 -f "$T/batch" > "$T/picks"
	[ "$(grep -c . "$T/picks")" -ge 300 ] || { echo short; return; }
	grep -c '^192\.0\.2\.9$' "$T/picks"
}

# 1. A score guard on a node that can have no score is refused, and
# nothing is written.
out=$(CTL release start www.gslb.test --node new --weight 50 --steps 10,100 \
	--every 1m --guard 'score>=80' 2>&1) && rc=0 || rc=$?
[ "$rc" = 1 ] && expect_has "$out" "--guard score>=80: node new has no probe and no pushed health metric" \
	"a score guard on a node without probes is refused" || fail "score guard: status $rc, $out"
expect_not "$(CTL weight list)" "new=" "the refused start added new to no row"
[ -z "$(CTL release list | tail -n +2)" ] && ok "and started no release" || fail "$(CTL release list)"

# 2. One command: new joins the row with weight 50 at 10 %.  With weight
# 50 beside a=50 and b=50 it would have a third of the networks; its
# release gives it a tenth.
CTL release start www.gslb.test --node new --weight 50 --steps 10,100 --every 1m \
	--guard 'success>=99' >/dev/null && ok "release start --weight" || fail "release start --weight failed"
most=0
for _ in 1 2 3 4 5; do
	n=$(picks_new)
	[ "$n" = short ] && { fail "short answers"; break; }
	[ "$n" -gt "$most" ] && most=$n
done
[ "$most" -ge 15 ] && [ "$most" -le 50 ] &&
	ok "right after the command new answers at most $most of 300 networks (10 %)" ||
	fail "new answered $most of 300 networks right after the command"
expect_has "$(CTL weight show www.gslb.test)" "a=50 b=50 new=50" "new is in the row with its final weight"
expect_has "$(CTL log | tail -1)" "weight set www\.gslb\.test \*/\* a=50 b=50 new=50; service set www\.gslb\.test release=.*\"percent\":10,.*\"state\":\"running\"" \
	"one audited change did both"

# 3. No success pushed: the figure is missing, never read; the step is
# held and says why, and nothing rolls back.
state() { CTL --json release show www.gslb.test | python3 -c "
import json, sys; print(json.load(sys.stdin)['release']['$1'])"; }
expect_has "$(CTL release show www.gslb.test)" "success>=99: no input since the step began: success: none \(no success pushed for the node" \
	"release show: which figure is missing and why"
CTL release abort www.gslb.test >/dev/null || fail "abort failed"
CTL release start www.gslb.test --node new --steps 10,100 --every 1s \
	--guard 'success>=99' >/dev/null || fail "1 s release start failed"
held() { state reason | grep -q "^held at 10%: guard success>=99 has no figure"; }
wait_until 10 held && ok "held at 10 %: $(state reason)" || fail "not held: $(state reason)"
[ "$(state state)" = running ] && ok "not rolled back for a missing figure" || fail "state $(state state)"
expect_has "$(cat "$T/gslbd.log")" "release www\.gslb\.test: node new held at 10%: guard success>=99 has no figure over the step \(success: none" \
	"the log says which figure is missing and why"
expect_not "$(cat "$T/gslbd.log")" "e-3[0-9][0-9]" "no uninitialised number in the log"

finish
