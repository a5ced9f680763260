#!/bin/bash
# The weight store under the real daemon: a deleted node takes its health
# with it (a node added again under its id starts afresh), a node whose
# probes are removed loses the verdict nothing would re-evaluate, commands
# that only read work on a store the user may only read, and a full store
# refuses writes with the remedy while the daemon keeps answering.
. "$(dirname "$0")/lib.sh"
gslb_zone
write_conf gslb.test z.zone "health:
  interval: 1
  timeout: 0.9
  settle: 5
  flap-window: 0"
HP1=$((PORT + 3000))
RO=
trap 'stop_httpds; [ -n "$RO" ] && rm -rf "$RO"; cleanup' EXIT
start_httpd $HP1
mode() { echo "$2" > "$T/mode$1"; }
answers() { q www.gslb.test A +short | sort | tr '\n' ' ' | sed 's/ $//'; }
# wait_answers SECONDS "expected answers": 0 once dig gets them.
wait_answers() {
	for _ in $(tseq $(( $1 * 10 ))); do
		[ "$(answers)" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

CTL service add www.gslb.test --ttl 60 --short-ttl 5 --answers 2 >/dev/null
CTL node add a --addr 192.0.2.1 >/dev/null
CTL node add b --addr 192.0.2.2 --probe "http://127.0.0.1:$HP1/health" >/dev/null
CTL weight set www.gslb.test a=10 b=10 >/dev/null
gslbd_start

# demote_b: b's probe target refuses connections until b is out.
demote_b() {
	wait_answers 10 "192.0.2.1 192.0.2.2" || fail "b not in the answers at first"
	mode $HP1 down
	if wait_answers 10 "192.0.2.1"; then ok "$1: b demoted by its failing probe"
	else fail "$1: b was not demoted"; fi
	expect_has "$(CTL status)" "^b +demoted " "$1: status shows b demoted"
}

# 1. Deleted and added again under the same id, without probes: in the
# answers, no old verdict.
demote_b "delete"
CTL weight set www.gslb.test a=10 >/dev/null
out=$(CTL node del b 2>&1) && ok "node del b" || fail "node del b: $out"
CTL node add b --addr 192.0.2.2 >/dev/null
CTL weight set www.gslb.test a=10 b=10 >/dev/null
if wait_answers 10 "192.0.2.1 192.0.2.2"; then ok "b added again is in the answers"
else fail "b added again is not in the answers: $(answers)"; fi
out=$(CTL status)
expect_has "$out" "^b +(unmonitored|no record) " "status: b is unmonitored, no verdict"
expect_not "$out" "^b .*(demoted|hard failure)" "status: nothing left of b's old verdict"
out=$(CTL --json status)
# The health thread may have synced already: then b is "unknown",
# unmonitored and usable -- never its old "demoted".
[ "$(python3 -c 'import json,sys; d=json.load(sys.stdin); h=[n["health"] for n in d["nodes"] if n["node"]=="b"][0] or {}; print(h.get("state") in (None, "unknown") and h.get("usable") in (None, True))' <<<"$out")" = True ] &&
	ok "status --json: b has no verdict" || fail "status --json: b still has a verdict: $out"
# Deliberately: two health rounds (interval 1 s) pass, in which the
# health thread syncs; it must not bring the old verdict back.
sleep 2
[ "$(answers)" = "192.0.2.1 192.0.2.2" ] && ok "b still in the answers after the health thread synced" ||
	fail "b left the answers again: $(answers)"
# Only what the health thread wrote since b came back: unknown, never
# the old demotion.
out=$(CTL history b)
! grep -qE "demoted|hard|down" <<<"$out" && ok "b's old history went with it" ||
	fail "history of b survived: $out"

# 2. Probes removed from a demoted node: back to the operator's weights.
# (A node of its own: the health thread's memory of b is not the store's
# business.)
mode $HP1 ok
CTL node add c --addr 192.0.2.3 --probe "http://127.0.0.1:$HP1/health" >/dev/null
CTL weight set www.gslb.test a=10 c=10 >/dev/null
CTL node del b >/dev/null
wait_answers 10 "192.0.2.1 192.0.2.3" || fail "c not in the answers at first"
mode $HP1 down
if wait_answers 10 "192.0.2.1"; then ok "no-probes: c demoted by its failing probe"
else fail "no-probes: c was not demoted"; fi
expect_has "$(CTL status)" "^c +demoted " "no-probes: status shows c demoted"
CTL node set c --no-probes >/dev/null
if wait_answers 10 "192.0.2.1 192.0.2.3"; then ok "--no-probes: c back in the answers"
else fail "--no-probes: c still out: $(answers)"; fi
expect_has "$(CTL status)" "^c +(unmonitored|no record) " "--no-probes: status shows no verdict"
# Deliberately: two health rounds (interval 1 s) pass; the health thread
# must NOT take c out again.
sleep 2
[ "$(answers)" = "192.0.2.1 192.0.2.3" ] && ok "--no-probes: c stays in the answers" ||
	fail "--no-probes: c left the answers again: $(answers)"
out=$(CTL log | tail -3)
expect_has "$out" "node set c" "the verdict went in the operator's change"

# 2b. Deleted and added again, probes and all, while the health thread
# could not look (gslbd stopped): it still sees a new node, which starts
# afresh -- nothing of the old one's demotion comes back (the store
# stamps each node with the commit that added it).
CTL node add d --addr 192.0.2.4 --probe "http://127.0.0.1:$HP1/health" >/dev/null
CTL weight set www.gslb.test a=10 d=10 >/dev/null
for _ in $(tseq 100); do
	grep -qE "^d +demoted " <<<"$(CTL status)" && break
	sleep 0.1
done
expect_has "$(CTL status)" "^d +demoted " "re-added: d demoted by its failing probe"
kill -STOP "$PID"
CTL weight set www.gslb.test a=10 >/dev/null 2>&1
CTL node del d >/dev/null 2>&1
CTL node add d --addr 192.0.2.4 --probe "http://127.0.0.1:$HP1/health" >/dev/null 2>&1
CTL weight set www.gslb.test a=10 d=10 >/dev/null 2>&1
mode $HP1 ok
kill -CONT "$PID"
for _ in $(tseq 100); do
	grep -q "node d: unknown -> up" "$T/gslbd.log" && break
	sleep 0.1
done
expect_has "$(grep "node d: " "$T/gslbd.log")" "node d: unknown -> up" \
	"re-added: d starts afresh, from unknown (not from its old demotion)"
if wait_answers 10 "192.0.2.1 192.0.2.4"; then ok "re-added: d in the answers"
else fail "re-added: d not in the answers: $(answers)"; fi
expect_not "$(CTL status)" "^d +demoted " "re-added: status does not show d demoted"
out=$(CTL history d)
! grep -qE "demoted|hard|down" <<<"$out" && ok "re-added: nothing of d's old demotion came back" ||
	fail "re-added: d's old verdict came back: $out"
CTL weight set www.gslb.test a=10 c=10 >/dev/null
CTL node del d >/dev/null

# 3. Commands that only read, by a user who may only read the store: a
# copy in a directory of root's, data.mdb readable, lock.mdb writable.
ro_store
for c in "status" "export" "node list" "node show a" "service list" "weight list" "log" "history c" "cutover list"; do
	# shellcheck disable=SC2086
	if out=$(as_nobody $c 2>&1); then ok "read-only user: $c"
	else fail "read-only user: $c: $out"; fi
done
expect_has "$(as_nobody status)" "^a " "read-only user: status lists the nodes"
out=$(as_nobody node add c --addr 192.0.2.3 2>&1) && fail "read-only user could write" ||
	ok "read-only user: a write is refused ($(head -1 <<<"$out"))"
chmod 644 "$RO/db/lock.mdb"
out=$(as_nobody status 2>&1) && fail "status without access to lock.mdb" ||
	expect_has "$out" "lock.mdb" "without write access to lock.mdb: the error names it"
rm -rf "$RO"; RO=

# 4. A full store: a tiny map refuses writes with the remedy, writes
# nothing, and the daemon keeps answering.  a gets a probe, so that the
# health thread writes too.
mode $HP1 ok
CTL node set a --probe "http://127.0.0.1:$HP1/health" >/dev/null
gslbd_stop || fail "gslbd did not stop cleanly"
sed -i 's/^  path: db$/  path: db\n  map-size: 1M/' "$T/gslbd.conf"
gslbd_start
# fill N: a document with the table as it is plus N filler nodes.
CTL export > "$T/base.json"
fill() {
	python3 - "$T/base.json" "$1" > "$T/fill.json" <<'EOP'
import json, sys
d = json.load(open(sys.argv[1]))
for i in range(int(sys.argv[2])):
    d["nodes"].append({"id": "f%d" % i, "addrs": ["192.0.2.%d" % (i % 250 + 1)],
                       "region": "r%d" % i, "isp": "isp-%d" % i})
json.dump(d, sys.stdout)
EOP
}
full=
for k in $(seq 1 60); do
	fill $((k * 200))
	before=$(CTL export)
	out=$(CTL apply "$T/fill.json" 2>&1) || { full=$k; break; }
done
if [ -n "$full" ]; then ok "the 1M store filled up ($(( (full - 1) * 200 )) filler nodes in)"
else fail "the 1M store never filled"; fi
# Then small writes until even one node does not fit.
for i in $(seq 1 2000); do
	CTL node add "s$i" --addr 192.0.2.9 >/dev/null 2>&1 || break
done
before=$(CTL export)
out=$(CTL apply "$T/fill.json" 2>&1)
expect_has "$out" "store full: its map of 1M \(database.map-size\).*raise database.map-size" "gslbctl names the map size and the remedy"
expect_has "$out" "nothing was changed" "gslbctl says nothing was changed"
CTL apply "$T/fill.json" >/dev/null 2>&1; rc=$?
[ $rc = 1 ] && ok "a write to a full store exits 1" || fail "a write to a full store exited $rc"
[ "$(CTL export)" = "$before" ] && ok "export before and after the refused write: unchanged" ||
	fail "the refused write changed the store"
# The health thread's small writes (a's status) mostly reuse the pages
# freed by the previous ones; when one fails, gslbd says so once.  Six
# rounds deliberately pass: no second report must come meanwhile.
sleep 6
n=$(grep -c "error: database .*store full" "$T/gslbd.log")
[ "$n" -le 1 ] && ok "gslbd logged a full store at most once ($n)" ||
	fail "gslbd logged the full store $n times"
[ "$(answers)" = "192.0.2.1 192.0.2.3" ] && ok "the daemon still answers from what it holds" ||
	fail "answers with a full store: $(answers)"
# Deleting rows adds audit records (each holds what it deleted): the
# remedy is a shorter audit log.  Lower audit-keep and reload: the
# daemon trims the log and writes work again.
# Deliberately: a second passes, so that every audit record is older
# than the audit-keep (1 s) set below.
sleep 1
sed -i 's/^  map-size: 1M$/  map-size: 1M\n  audit-keep: 1/' "$T/gslbd.conf"
kill -HUP "$PID"
# The daemon trims right after the reload: a write works once it has.
add_g1() { out=$(CTL node add g1 --addr 192.0.2.9 2>&1); }
wait_until 5 add_g1 && ok "after audit-keep was lowered, writes work again" ||
	fail "still full after lowering audit-keep: $out"
CTL node del g1 >/dev/null
[ "$(answers)" = "192.0.2.1 192.0.2.3" ] && ok "answers after the trim" || fail "answers after the trim: $(answers)"
# A larger map: raise map-size and restart; what did not fit fits.
gslbd_stop || fail "gslbd did not stop cleanly"
sed -i 's/^  map-size: 1M$/  map-size: 64M/; /audit-keep/d' "$T/gslbd.conf"
gslbd_start
out=$(CTL apply "$T/fill.json" 2>&1) && ok "with map-size 64M the refused change fits" ||
	fail "map-size 64M: $out"
[ "$(answers)" = "192.0.2.1 192.0.2.3" ] && ok "answers after the restart" ||
	fail "answers after the restart: $(answers)"

echo "$CHECKS checks, $FAILS failed"
[ "$FAILS" = 0 ]
