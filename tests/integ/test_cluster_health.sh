#!/bin/bash
# Cluster mode's health per vantage (S4-6) and its elected writer, with a
# real 3-member etcd and 3 gslbd instances on loopback.  Each instance
# reaches node n1 (and n2) through its own HTTP server: the test hook
# GSLBD_TEST_PROBE_MAP rewrites the probe's address per instance, so a
# test blocks a node from one vantage by switching that instance's
# server to refusing connections.
#   5. a node refused from one vantage stays in every answer, shown as
#      partial with the failing vantage; refused from two of three it
#      leaves the answers of all three within the confirmation time of a
#      refused connection (2 s with 1 s probes) plus 1 s;
#   4. a killed gslbd's views go with its lease and the quorum is
#      recomputed; the killed leader is replaced within the lease time,
#      and standby promotions and releases go on, none made twice; so do
#      the phases of a cutover window whose leader dies during it.
. "$(dirname "$0")/lib.sh"
LEASE_TTL=3
. "$(dirname "$0")/cluster_lib.sh"
gslb_zone
# n1 and n2 are probed at a port of their own that no server listens on;
# instance I maps it to its server HI_I (n1) or HJ_I (n2).  The standbys
# are probed at one shared server.
PN1=$((PORT + 3100)); PN2=$((PORT + 3101)); HS=$((PORT + 3102))
declare -A H1 H2
for i in 1 2 3; do H1[$i]=$((PORT + 3110 + i)); H2[$i]=$((PORT + 3120 + i)); done
trap 'stop_httpds; cluster_cleanup' EXIT
for i in 1 2 3; do start_httpd "${H1[$i]}"; start_httpd "${H2[$i]}"; done
start_httpd "$HS"
mode() { echo "$2" > "$T/mode$1"; }
nsup() { # i
	GSLBD_TEST_PROBE_MAP="127.0.0.1:$PN1=127.0.0.1:${H1[$1]},127.0.0.1:$PN2=127.0.0.1:${H2[$1]}" \
		ns_start "$1"
}
for i in 1 2 3; do
	ns_conf "$i"
	printf 'cutover:\n  notice: 6\n  prewarm-lead: 3\n  ramp: 2\n' >> "$T/ns$i/gslbd.conf"
done
etcd_cluster_start || exit 1
CTLN 1 service add www.gslb.test --ttl 60 --short-ttl 5 --answers 4 >/dev/null
CTLN 1 node add n1 --addr 192.0.2.1 --region rc --probe "http://127.0.0.1:$PN1/health" >/dev/null
CTLN 1 node add n2 --addr 192.0.2.2 --probe "http://127.0.0.1:$PN2/health" >/dev/null
CTLN 1 node add s1 --addr 192.0.2.11 --pool standby --probe "tcp://127.0.0.1:$HS" >/dev/null
CTLN 1 node add s2 --addr 192.0.2.12 --pool standby --probe "tcp://127.0.0.1:$HS" >/dev/null
CTLN 1 weight set www.gslb.test n1=10 n2=10 s1=10 s2=10 >/dev/null
for i in 1 2 3; do nsup "$i"; done
both="192.0.2.1 192.0.2.2"
wait_all 100 www.gslb.test "$both" && ok "three instances answer n1 and n2" ||
	fail "start: $(qn 1 www.gslb.test) / $(qn 2 www.gslb.test) / $(qn 3 www.gslb.test)"

# The elected instance, as gslbctl cluster status shows it.
leader_now() { CTLN 1 cluster status 2>/dev/null | sed -n 's/^leader: //p'; }
L=
for _ in $(tseq 50); do L=$(leader_now); [ -n "$L" ] && [ "$L" != none ] && break; sleep 0.1; done
L=${L#ns}
[[ "$L" =~ ^[123]$ ]] && ok "cluster status shows the elected instance: ns$L" || fail "no leader shown: '$L'"
# Every instance publishes a view of every node, with its latencies.
for _ in $(tseq 50); do
	[ "$(CTLN 1 cluster health n1 2>/dev/null | grep -Ec '^n1 +ns[123] .* up ')" = 3 ] && break
	sleep 0.1
done
out=$(CTLN 1 cluster health n1)
expect_has "$out" "^n1 +ns1 +r1/i1 +up +100% .*http://127.0.0.1:$PN1/health ok [0-9]+/[0-9]+" \
	"cluster health: ns1's view of n1 with its probe latency"
[ "$(grep -Ec '^n1 +ns[123] .* up ' <<<"$out")" = 3 ] && ok "cluster health: three vantages see n1 up" ||
	fail "cluster health: $out"
out=$(ETCDCTL get /gslbd/health/n1/ns2 --print-value-only)
expect_has "$out" '"region":"r2".*' "the view in etcd is readable JSON with its vantage"

# The two instances that do not lead (A, B), and the leader L.
others=()
for i in 1 2 3; do [ "$i" = "$L" ] || others+=("$i"); done
VA=${others[0]}; VB=${others[1]}

# 5a. n1 refused from A only: partial, still in every answer.
mode "${H1[$VA]}" down
ok_partial=0
for _ in $(tseq 60); do
	out=$(CTLN "$L" status 2>/dev/null)
	grep -Eq "^n1 +partial .*down from ns$VA only" <<<"$out" && { ok_partial=1; break; }
	sleep 0.1
done
[ $ok_partial = 1 ] && ok "n1 down from ns$VA only: status shows it partial with the failing vantage" ||
	fail "partial: $(grep '^n1' <<<"$out")"
# Deliberately: the confirmation time of a refused connection (2 s with
# 1 s probes) and a round more pass; a partial n1 must still be in.
sleep 3
wait_all 5 www.gslb.test "$both" && ok "partial n1 stays in the answers of all three" ||
	fail "partial: $(qn 1 www.gslb.test) / $(qn 2 www.gslb.test) / $(qn 3 www.gslb.test)"
expect_has "$(CTLN "$VB" status)" "^n1 +partial .*down from ns$VA only" "ns$VB's status shows the same"
expect_has "$(CTLN "$VA" explain www.gslb.test --client 127.0.0.1 2>&1)" "n1.*health partial: partial: down from ns$VA" \
	"explain names the partial verdict"
expect_has "$(CTLN "$VA" --json status)" '"down_from": \[ *"ns'"$VA"'" *\].*"partial": true|"partial": true' \
	"status --json carries it"
expect_has "$(CTLN 1 cluster health n1)" "^n1 +ns$VA .* demoted .*FAIL" "cluster health: ns$VA sees n1 demoted"

# 5b. Refused from B too: out of the answers of all three within the
# confirmation time of a refused connection (2 s with 1 s probes, as in
# standalone mode) plus 1 s.  Measured by raw UDP queries to the three
# instances every 20 ms from one python process, from the moment the
# server stops; printed, and bounded by twice that (6 s, scaled), for a
# loaded machine.
P1=${NSPORT[1]} P2=${NSPORT[2]} P3=${NSPORT[3]} PYTHONPATH="$ROOT/tests/integ" \
	timeout "$(tscale 60)" python3 - "$T/blocked" "$(tscale 15)" >"$T/outtime" <<'PY' &
import os, socket, sys, time, dnsraw
ports = [int(os.environ[p]) for p in ("P1", "P2", "P3")]
def has_n1(port):
    r = dnsraw.udp(dnsraw.query("www.gslb.test"), timeout=1.0, port=port, host="127.0.0.1")
    return r is None or any(t == 1 and socket.inet_ntoa(rd) == "192.0.2.1"
                            for n, t, c, ttl, rd in dnsraw.parse(r)["an"])
if not all(has_n1(p) for p in ports):
    print("n1 not in every answer before the block")
    sys.exit(0)
open(sys.argv[1] + ".ready", "w").close()
while not os.path.exists(sys.argv[1]):
    time.sleep(0.005)
t0 = time.monotonic()
while time.monotonic() - t0 < float(sys.argv[2]):
    if not any(has_n1(p) for p in ports):
        print(int((time.monotonic() - t0) * 1000))
        break
    time.sleep(0.02)
else:
    print("never")
PY
poller=$!
for _ in $(tseq 100); do [ -e "$T/blocked.ready" ] && break; sleep 0.1; done
mode "${H1[$VB]}" down
touch "$T/blocked"
wait $poller
ms=$(cat "$T/outtime")
[[ "$ms" =~ ^[0-9]+$ ]] && [ "$ms" -le $(( $(tscale 6) * 1000 )) ] &&
	ok "n1 down from 2 of 3 vantages: out of all three instances' answers in $ms ms (rule: 3000)" ||
	fail "n1 down from 2 of 3 vantages: out of all answers after $ms ms"
wait_all 30 www.gslb.test "192.0.2.11 192.0.2.2" && ok "n1 out of every answer, s1 in its place" ||
	fail "n1 down from 2 of 3: $(qn 1 www.gslb.test) / $(qn 2 www.gslb.test) / $(qn 3 www.gslb.test)"
out=$(qn "$L" www.gslb.test)
expect_has "$out" "192.0.2.11" "the standby s1 serves in n1's place"
expect_has "$(CTLN "$L" status)" "^n1 +demoted .*down from 2 of 3 vantages \(ns[123] ns[123]\)" \
	"status: n1 demoted, the two failing vantages named"

# 4a. Kill B (not the leader): its views go with its lease, the quorum is
# recomputed over the two left (n1 down from A only: partial, back in).
ns_stop "$VB" KILL
back=0
for _ in $(tseq 100); do
	wait_all 1 www.gslb.test "$both" && { back=1; break; }
	sleep 0.1
done
[ $back = 1 ] && ok "ns$VB killed: its views expired, n1 partial again and back in the answers" ||
	fail "ns$VB killed: $(qn "$L" www.gslb.test) / $(qn "$VA" www.gslb.test)"
out=$(CTLN "$L" cluster health n1)
grep -q "^n1 +ns$VB " <<<"$out" && fail "ns$VB's view is still there: $out" ||
	ok "cluster health: ns$VB's view is gone"
expect_has "$out" "decision: partial .*1 of 2 vantages" "the quorum is over the two live instances"
# B back (still refused from there): n1 out again.
nsup "$VB"
wait_all 100 www.gslb.test "192.0.2.11 192.0.2.2" &&
	ok "ns$VB back: n1 down from 2 of 3 again, out" || fail "ns$VB back: $(qn "$L" www.gslb.test)"

# 4b. Kill the leader while s1 stands in for n1.  Another takes over
# within the lease time; it releases s1 when n1 is back and promotes s2
# for n2, and nothing is decided twice.
expect_has "$(CTLN "$VA" log 2>&1)" "cluster:ns$L .*standby s1 promoted for n1" "s1 promoted by ns$L while n1 is out"
ns_stop "$L" KILL
t0=$(date +%s%N)
NL=
for _ in $(tseq 100); do
	NL=$(CTLN "$VA" cluster status 2>/dev/null | sed -n 's/^leader: ns//p')
	[ -n "$NL" ] && [ "$NL" != "$L" ] && break
	sleep 0.1
done
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
[[ "$NL" =~ ^[123]$ ]] && [ "$NL" != "$L" ] &&
	ok "leader ns$L killed: ns$NL elected after $ms ms (lease $LEASE_TTL s)" || fail "no new leader: '$NL'"
# Measured from the kill; the bound is generous: the lease plus 3 s,
# scaled.
[ $ms -le $(( LEASE_TTL * 1000 + $(tscale 3) * 1000 )) ] && ok "takeover within the lease time (+3 s): $ms ms" ||
	fail "takeover took $ms ms"
mode "${H1[$VA]}" ok; mode "${H1[$VB]}" ok
wait_all 100 www.gslb.test "$both" && ok "n1 back: the new leader released s1" ||
	fail "release: $(qn "$VA" www.gslb.test) / $(qn "$VB" www.gslb.test)"
mode "${H2[$VA]}" down; mode "${H2[$VB]}" down
wait_all 100 www.gslb.test "192.0.2.1 192.0.2.11" &&
	ok "n2 down from both live vantages: out, the new leader promoted s1 for it" ||
	fail "n2: $(qn "$VA" www.gslb.test) / $(qn "$VB" www.gslb.test)"
log=$(CTLN "$VA" log 2>&1)
# n1's standby: promoted and released in turn (it went out, back in when
# ns$VB died, out again, in again), never promoted twice in a row, and
# never promoted again by the new leader, which found it promoted.
seq=$(grep -Eo "standby s1 (promoted for n1|released)" <<<"$log" | awk '{print $3}' | tr '\n' ' ')
[ "$seq" = "promoted released promoted released " ] &&
	ok "s1 for n1: promoted and released in turn, none twice" || fail "s1 for n1: $seq"
grep -q "cluster:ns$NL .*standby s1 promoted for n1" <<<"$log" &&
	fail "the new leader promoted s1 for n1 again" || ok "the new leader did not promote s1 for n1 again"
n=$(grep -Ec "standby s[12] promoted for n2" <<<"$log")
[ "$n" = 1 ] && ok "one standby promoted for n2, once" || fail "standbys promoted for n2 $n times"
expect_has "$log" "cluster:ns$NL .*standby s1 promoted for n2" "the promotion is the new leader's"
[ "$(export_of "$VA")" = "$(export_of "$VB")" ] && ok "ns$VA and ns$VB hold the same table" ||
	fail "the tables differ"

# 4c. A cutover window on n1 (notice 6 s, ramp 2 s): ns$NL announces it
# and pre-derates n1 (at 6 s before the start), then dies: the 6 s leave
# room for the kill and the lease (3 s) to pass before the window on a
# loaded machine; the last instance, ns$W, takes over and
# moves it into the window, the ramp and out of it (phase none again).
# Each phase once.
W=$VA; [ "$W" = "$NL" ] && W=$VB
at() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
now=$(date +%s)
CTLN "$W" cutover add --region rc --derate 50 --start "$(at $((now + 8)))" \
	--end "$(at $((now + 11)))" >/dev/null || fail "cutover add"
phase() { CTLN "$W" log 2>&1 | grep -c "node n1 cutover [^ ]* $1 "; }
for _ in $(tseq 60); do [ "$(phase pre-derated)" = 1 ] && break; sleep 0.1; done
ns_stop "$NL" KILL
for _ in $(tseq 150); do [ "$(phase none)" -ge 1 ] && break; sleep 0.2; done
log=$(CTLN "$W" log 2>&1)
for ph in announced pre-derated in-window none; do
	n=$(grep -c "node n1 cutover [^ ]* $ph " <<<"$log")
	[ "$n" = 1 ] && ok "cutover phase $ph decided once" || fail "cutover phase $ph decided $n times"
done
expect_has "$log" "cluster:ns$NL .*node n1 cutover [^ ]* pre-derated" "ns$NL pre-derated n1"
expect_has "$log" "cluster:ns$W .*node n1 cutover [^ ]* in-window" "ns$W, elected after it, moved n1 into the window"
expect_has "$log" "cluster:ns$W .*node n1 cutover [^ ]* none" "and ended it after the ramp"
finish
