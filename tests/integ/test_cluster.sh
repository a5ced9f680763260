#!/bin/bash
# Cluster mode with a real 3-member etcd and 3 gslbd instances on
# loopback: a change made through any instance reaches the answers of all
# three within a second; two writers racing on one row: one wins, the
# other is refused and nothing is lost; the etcd leader stopped: answers
# never fail and writes succeed after the election; every etcd member
# stopped: answers go on, gslbctl refuses and writes nothing, and all
# instances catch up when etcd is back, one that was down meanwhile too;
# history compacted past an instance's revision: it resyncs and ends
# equal to the others.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
gslb_zone
for i in 1 2 3; do ns_conf "$i"; done
# gslbd --check reads the section and names file and line of an error.
out=$("$GSLBD" -c "$T/ns1/gslbd.conf" --check 2>&1) && ok "--check accepts the cluster section" ||
	fail "--check: $out"
sed 's/^  lease-ttl: .*/  lease-ttl: 1/' "$T/ns1/gslbd.conf" > "$T/bad.conf"
out=$("$GSLBD" -c "$T/bad.conf" --check 2>&1)
expect_has "$out" "bad.conf:[0-9]+: cluster.lease-ttl must be a number from 2 to 600" "--check names a bad cluster value"
etcd_cluster_start || exit 1
CTLN 1 service add www.gslb.test --ttl 60 --answers 2 >/dev/null
CTLN 2 node add a --addr 192.0.2.1 >/dev/null
CTLN 3 node add b --addr 192.0.2.2 >/dev/null
CTLN 1 weight set www.gslb.test a=10 b=10 >/dev/null
for i in 1 2 3; do ns_start "$i"; done
if wait_all 50 www.gslb.test "192.0.2.1 192.0.2.2"; then
	ok "start: the three instances answer the table written before they ran"
else fail "start: $(qn 1 www.gslb.test) / $(qn 2 www.gslb.test) / $(qn 3 www.gslb.test)"; fi

# 1. A change through any instance's configuration is in the answers of
# all three within 1 s: the lag from the start of gslbctl to the last
# instance answering it, over 100 changes.
# Measured in one python process (raw UDP queries): dig's own start-up
# would dominate the figure on a loaded machine.
cat > "$T/lag.py" <<'PY'
import os, socket, subprocess, time, dnsraw
ports = [int(os.environ[p]) for p in ("P1", "P2", "P3")]
def answers(port):
    r = dnsraw.udp(dnsraw.query("www.gslb.test"), timeout=1.0, port=port,
                   host="127.0.0.1")
    if not r:
        return None
    return sorted(socket.inet_ntoa(rd) for n, t, c, ttl, rd in dnsraw.parse(r)["an"] if t == 1)
lags, late, refused = [], 0, 0
# How long a change may take before it counts as late: 3 s, scaled.
wait = 3 * max(1.0, float(os.environ.get("TEST_TIME_FACTOR", "1")))
for k in range(1, 101):
    via = k % 3 + 1
    addr = "198.51.100.%d" % k
    want = sorted(["192.0.2.2", addr])
    t0 = time.monotonic()
    rc = subprocess.run([os.environ["GSLBCTL"], "-c", "%s/ns%d/gslbd.conf" % (os.environ["T"], via),
                         "node", "set", "a", "--addr", addr], capture_output=True).returncode
    if rc:
        refused += 1
        continue
    while time.monotonic() - t0 < wait:
        if all(answers(p) == want for p in ports):
            lags.append((time.monotonic() - t0) * 1000)
            break
        time.sleep(0.005)
    else:
        late += 1
lags.sort()
n = len(lags)
med = lags[(n - 1) // 2] if n else -1
p99 = lags[min(n - 1, int(n * 0.99 + 0.999) - 1)] if n else -1
print("%d %d %d %.0f %.0f %.0f" % (n, late, refused, med, p99, lags[-1] if n else -1))
PY
out=$(GSLBCTL="$ROOT/$B/gslbctl" T="$T" P1=${NSPORT[1]} P2=${NSPORT[2]} P3=${NSPORT[3]} \
	PYTHONPATH="$ROOT/tests/integ" timeout "$(tscale 300)" python3 "$T/lag.py")
read -r n late refused median p99 max <<<"$out"
echo "    change to answers on all three: median ${median} ms, p99 ${p99} ms, max ${max} ms over $n changes (load average $(cut -d' ' -f1 /proc/loadavg))"
# The median must be within 1 s; the tail is recorded (docs/CLUSTER.md)
# but only bounded by 3 s (scaled) here, since it follows the machine's
# load.
[ "$n" = 100 ] && [ "${median%.*}" -le 1000 ] &&
	ok "100 changes reached all three (median $median ms, p99 $p99 ms)" ||
	fail "changes: $n within $(tscale 3) s, $late later, $refused refused, median $median ms"
out=$(CTLN 3 log 2>&1 | tail -1)
expect_has "$out" "node set a" "ns3's audit log records the change made through another instance"

# 6. Two writers race on one row from different instances: the one that
# writes second read a revision that is gone, is refused, writes nothing.
# The slow writer waits DELAY ms between its read and its write (3 s,
# scaled: long enough for the quick one on a loaded machine); the quick
# one starts once the slow one has read.
DELAY=$(( $(tscale 3) * 1000 ))
CTLN 1 weight set www.gslb.test a=10 b=10 >/dev/null
GSLBCTL_TEST_CLUSTER_DELAY_MS=$DELAY CTLN 1 weight set www.gslb.test a=1 b=10 >"$T/race1.out" 2>&1 &
r1=$!
ctl_in_delay "$r1" || fail "race: the slow writer did not reach its delay"
CTLN 2 weight set www.gslb.test a=10 b=2 >"$T/race2.out" 2>&1; rc2=$?
wait $r1; rc1=$?
[ $rc2 = 0 ] && ok "race: the quick writer through ns2 wins" || fail "race: ns2 refused: $(cat "$T/race2.out")"
[ $rc1 = 1 ] && grep -q "changed by someone else.*nothing was written; retry" "$T/race1.out" &&
	ok "race: the slow writer through ns1 is refused with 'changed by someone else, retry'" ||
	fail "race: ns1 got rc $rc1: $(cat "$T/race1.out")"
row() { ETCDCTL get '/gslbd/config/weight/www.gslb.test|*|*' --print-value-only; }
expect_has "$(row)" '"a": ?10.*"b": ?2' "race: etcd holds the winner's row"
winner_row() { CTLN "$1" weight list www.gslb.test | grep -Eq "b=2|b +2|\"b\": ?2"; }
for i in 1 2 3; do
	wait_until 5 winner_row "$i"
	expect_has "$(CTLN "$i" weight list www.gslb.test)" "b=2|b +2|\"b\": ?2" "race: ns$i holds the winner's row"
done
# Both slow, both in their delay at once (the second starts once the
# first has read): exactly one wins.
GSLBCTL_TEST_CLUSTER_DELAY_MS=$DELAY CTLN 1 weight set www.gslb.test a=3 b=3 >"$T/race1.out" 2>&1 &
r1=$!
ctl_in_delay "$r1" || fail "race of two: the first did not reach its delay"
GSLBCTL_TEST_CLUSTER_DELAY_MS=$DELAY CTLN 3 weight set www.gslb.test a=4 b=4 >"$T/race3.out" 2>&1 &
r3=$!
ctl_in_delay "$r3" || fail "race of two: the second did not reach its delay"
wait $r1; rc1=$?
wait $r3; rc3=$?
[ $((rc1 + rc3)) = 1 ] && ok "race of two slow writers: exactly one wins" ||
	fail "race of two slow writers: rc $rc1 and $rc3"

# 2. The etcd leader stops: queries never fail meanwhile, and a write
# succeeds again after the election.
leader=$(etcd_leader)
[ -n "$leader" ] || fail "no etcd leader found"
# Raw UDP queries to the three instances every 20 ms for 8 s, in one
# python process; every query without an answer is counted.
GSLBCTL= T="$T" P1=${NSPORT[1]} P2=${NSPORT[2]} P3=${NSPORT[3]} PYTHONPATH="$ROOT/tests/integ" \
	timeout 60 python3 - >"$T/qloop" <<'PY' &
import os, time, dnsraw
ports = [int(os.environ[p]) for p in ("P1", "P2", "P3")]
sent = failed = 0
open(os.environ["T"] + "/qloop.started", "w").close()
end = time.monotonic() + 8
while time.monotonic() < end:
    for p in ports:
        r = dnsraw.udp(dnsraw.query("www.gslb.test"), timeout=1.0, port=p, host="127.0.0.1")
        sent += 1
        if not r or dnsraw.parse(r)["rcode"] != 0 or not dnsraw.parse(r)["an"]:
            failed += 1
    time.sleep(0.02)
print(sent, failed)
PY
qloop=$!
wait_until 10 test -e "$T/qloop.started" || fail "the query loop did not start"
etcd_stop "$leader"
t0=$(date +%s%N)
wrote=0
for _ in $(tseq 100); do
	if CTLN 2 node set b --addr 192.0.2.22 >/dev/null 2>>"$T/ctl.err"; then wrote=1; break; fi
	sleep 0.1
done
el=$(( ($(date +%s%N) - t0) / 1000000 ))
[ $wrote = 1 ] && ok "leader e$leader stopped: a write succeeded after $el ms" ||
	fail "leader e$leader stopped: no write succeeded in 10 s: $(tail -1 "$T/ctl.err")"
wait $qloop
read -r sent qfail < "$T/qloop"
[ "${qfail:-x}" = 0 ] && ok "leader stopped: $sent queries to the three instances, none failed" ||
	fail "leader stopped: ${qfail:-?} of ${sent:-?} queries failed"
wait_all 20 www.gslb.test "192.0.2.22 198.51.100.100" && ok "the write after the election is in all answers" ||
	fail "after the election: $(qn 1 www.gslb.test) / $(qn 2 www.gslb.test) / $(qn 3 www.gslb.test)"
etcd_start "$leader"
etcd_wait

# 3. Every etcd member stops: answers go on from each store, gslbctl says
# etcd is unreachable and writes nothing; ns3 stops too; etcd back, a
# change through ns1; ns3 back: all three catch up.
for i in 1 2 3; do etcd_stop "$i"; done
before=$(CTLN 1 export)
out=$(CTLN 1 node set b --addr 192.0.2.33 2>&1); rc=$?
[ $rc = 1 ] && grep -q "etcd is unreachable.*nothing was written" <<<"$out" &&
	ok "etcd down: gslbctl refuses: $out" || fail "etcd down: gslbctl rc $rc: $out"
[ "$(CTLN 1 export)" = "$before" ] && ok "etcd down: the local store is unchanged" ||
	fail "etcd down: the local store changed"
wait_all 5 www.gslb.test "192.0.2.22 198.51.100.100" && ok "etcd down: the three instances go on answering" ||
	fail "etcd down: $(qn 1 www.gslb.test) / $(qn 2 www.gslb.test) / $(qn 3 www.gslb.test)"
out=$(CTLN 1 cluster status 2>&1)
expect_has "$out" "etcd: unreachable" "etcd down: cluster status says so"
out=$(CTLN 1 --json cluster status 2>/dev/null)
python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["format"] == 1 and d["etcd"] == "unreachable" and d["name"] == "ns1"' <<<"$out" &&
	ok "etcd down: cluster status --json says so, in the versioned shape" ||
	fail "cluster status --json: $out"
# The members stop one after the other: gslbd may first log what it saw
# on the way (a watch closed, no quorum), then that none answers.
logged=0
for _ in $(tseq 100); do
	grep -q "cluster: etcd is unreachable: " "$T/ns2.log" && { logged=1; break; }
	sleep 0.1
done
[ $logged = 1 ] && ok "etcd down: gslbd logs it" || fail "etcd down: nothing in ns2's log"
m=$(scrape 2)
[ "$(mval "$m" gslbd_cluster_etcd_reachable)" = 0 ] && ok "etcd down: the metrics say etcd is unreachable" ||
	fail "etcd down: $(grep '^gslbd_cluster_etcd' <<<"$m")"
ns_stop 3
for i in 1 2 3; do etcd_start "$i"; done
etcd_wait
ok=0
for _ in $(tseq 50); do
	CTLN 1 node set b --addr 192.0.2.44 >/dev/null 2>&1 && { ok=1; break; }
	sleep 0.2
done
[ $ok = 1 ] || fail "etcd back: the write through ns1 failed"
ns_start 3
wait_all 50 www.gslb.test "192.0.2.44 198.51.100.100" &&
	ok "etcd back: all three answer the change made while ns3 was down" ||
	fail "etcd back: $(qn 1 www.gslb.test) / $(qn 2 www.gslb.test) / $(qn 3 www.gslb.test)"
grep -q "etcd reachable again" "$T/ns1.log" && ok "etcd back: gslbd logs it" || fail "etcd back: nothing in ns1's log"

# 7. History compacted past an instance's revision: ns3 watches member 3
# only; member 3 stops, changes go on through ns1, the history is
# compacted, member 3 comes back: ns3 resyncs and ends equal.
ns_stop 3
rm -f "$T/ns3/gslbd.conf"
ns_conf 3 "[ \"http://127.0.0.1:$(ECLIENT 3)\" ]"
ns_start 3
# ns3 has read the table from member 3 before member 3 stops.
same_as_1() { [ "$(export_of 3)" = "$(export_of 1)" ]; }
wait_until 10 same_as_1 || fail "ns3 did not read the table from member 3"
etcd_stop 3
for k in 1 2 3 4 5; do CTLN 1 node set a --addr "203.0.113.$k" >/dev/null || fail "write $k with member 3 down"; done
CTLN 2 node add c --addr 192.0.2.3 >/dev/null
CTLN 2 weight set www.gslb.test a=5 b=5 c=5 >/dev/null
rev=$(ETCDCTL endpoint status -w json 2>/dev/null | python3 -c 'import json,sys; print(max(int(s["Status"]["header"]["revision"]) for s in json.load(sys.stdin)))')
ETCDCTL compact "$rev" >/dev/null && ok "history compacted at revision $rev" || fail "compaction failed"
etcd_start 3
ok=0
for _ in $(tseq 100); do
	[ "$(export_of 3)" = "$(export_of 1)" ] && { ok=1; break; }
	sleep 0.1
done
[ $ok = 1 ] && ok "compaction: ns3 ends equal to ns1 (exports compared)" || fail "compaction: ns3 differs from ns1"
[ "$(export_of 2)" = "$(export_of 1)" ] && ok "ns2 equal to ns1" || fail "ns2 differs from ns1"
grep -q "compacted past revision" "$T/ns3.log" && ok "compaction: ns3 logged its full resync" ||
	fail "compaction: no resync in ns3's log"

# The cluster metrics of the three instances: promtool accepts each
# scrape; all reach etcd and hold the same revision; exactly one is
# elected; ns3 counts its full reads (the start and the compaction).
for _ in $(tseq 50); do
	for i in 1 2 3; do M[$i]=$(scrape "$i"); done
	r1=$(mval "${M[1]}" gslbd_cluster_revision)
	[ -n "$r1" ] && [ "$(mval "${M[2]}" gslbd_cluster_revision)" = "$r1" ] &&
		[ "$(mval "${M[3]}" gslbd_cluster_revision)" = "$r1" ] && break
	sleep 0.1
done
for i in 1 2 3; do
	out=$(promtool check metrics <<<"${M[$i]}" 2>&1) && ok "ns$i: promtool check metrics accepts the scrape" ||
		fail "ns$i: promtool check metrics: $out"
done
[ "$(mval "${M[2]}" gslbd_cluster_revision)" = "$r1" ] && [ "$(mval "${M[3]}" gslbd_cluster_revision)" = "$r1" ] &&
	ok "metrics: the three stores hold etcd revision $r1" ||
	fail "metrics: revisions $(for i in 1 2 3; do mval "${M[$i]}" gslbd_cluster_revision; done | tr '\n' ' ')"
n=0; e=0
for i in 1 2 3; do
	n=$((n + $(mval "${M[$i]}" gslbd_cluster_leader)))
	e=$((e + $(mval "${M[$i]}" gslbd_cluster_etcd_reachable)))
done
[ $e = 3 ] && ok "metrics: the three reach etcd" || fail "metrics: $e of 3 reach etcd"
[ $n = 1 ] && ok "metrics: exactly one instance is elected" || fail "metrics: $n elected"
rs=$(mval "${M[3]}" gslbd_cluster_resyncs_total)
[ "${rs:-0}" -ge 2 ] && ok "metrics: ns3 counted $rs full reads" || fail "metrics: ns3 resyncs '$rs'"
ap=$(mval "${M[1]}" gslbd_cluster_applied_revisions_total)
[ "${ap:-0}" -ge 5 ] && ok "metrics: ns1 applied $ap revisions from its watch" || fail "metrics: ns1 applied '$ap'"
age=$(mval "${M[1]}" gslbd_cluster_last_apply_age_seconds)
[ -n "$age" ] && [ "${age%.*}" -lt 60 ] && ok "metrics: ns1's last change from etcd $age s ago" ||
	fail "metrics: last apply age '$age'"
expect_has "${M[1]}" '^gslbd_cluster_quorum_nodes\{state="partial"\} 0$' "metrics: no node partial"
finish
