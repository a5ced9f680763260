#!/bin/bash
# Nearest steering in cluster mode, with a real 3-member etcd and 3 gslbd
# instances on loopback, each a name server in its own region:
#   - without any feeder, each region's row goes to the node that is
#     fastest from the name server in that region (S4-6: the per-vantage
#     probe latencies are the latency matrix; S4-1): ns1 in cn-bj reaches
#     node a fast and b slowly, ns2 in cn-gz the reverse (each instance
#     has its own path to a node through the test hook
#     GSLBD_TEST_PROBE_MAP, to an HTTP server that answers at once or
#     after a delay); every instance answers so (dig +subnet);
#   - a latency pushed for a row with `gslbctl metrics push --file` to an
#     instance that is not the elected one reaches every store and, being
#     the clients' own, wins over the probes: the row moves on all three;
#   - a bad push through it writes nothing to etcd.
. "$(dirname "$0")/lib.sh"
LEASE_TTL=3
. "$(dirname "$0")/cluster_lib.sh"

geo_two_regions
gslb_zone
# Nodes a and b are probed at ports no server listens on; each instance
# maps them to the fast server (FAST) or the slow one (SLOW, 0.15 s).
# Just above the instances' DNS and statistics ports (PORT + 1..23), so
# that every port stays within the test's range.
PA=$((PORT + 40)); PB=$((PORT + 41)); FAST=$((PORT + 42)); SLOW=$((PORT + 43))
trap 'rm -f "$T/feeding"; stop_httpds; cluster_cleanup' EXIT
start_httpd "$FAST"
echo slow > "$T/mode$SLOW"
python3 "$ROOT/tests/integ/httpd.py" "$SLOW" "$T/mode$SLOW" 0.15 >/dev/null 2>&1 &
echo $! >> "$T/httpd.pids"
wait_tcp "$SLOW"
declare -A MAPA MAPB VANT
MAPA[1]=$FAST; MAPB[1]=$SLOW; VANT[1]="{ region: cn-bj, isp: cucc }"
MAPA[2]=$SLOW; MAPB[2]=$FAST; VANT[2]="{ region: cn-gz, isp: ctcc }"
MAPA[3]=$FAST; MAPB[3]=$FAST; VANT[3]="{ region: cn-sh, isp: cmcc }"
for i in 1 2 3; do
	ns_conf "$i"
	sed -i "s/^  vantage: .*/  vantage: ${VANT[$i]}/" "$T/ns$i/gslbd.conf"
	cp "$T/geo.mmdb" "$T/ns$i/geo.mmdb"
	printf 'geoip:\n  database: geo.mmdb\nsteer:\n  interval: 1\n  tau: 1\n  windows: [4]\n  stale: 8\n  min-step: 1\n' \
		>> "$T/ns$i/gslbd.conf"
done
etcd_cluster_start || exit 1
CTLN 1 service add www.gslb.test --ttl 30 --answers 1 >/dev/null || fail "service add"
CTLN 2 node add a --addr 192.0.2.1 --probe "http://127.0.0.1:$PA/health" >/dev/null
CTLN 3 node add b --addr 192.0.2.2 --probe "http://127.0.0.1:$PB/health" >/dev/null
for r in "--region cn-gz --isp ctcc" "--region cn-bj --isp cucc"; do
	# shellcheck disable=SC2086
	CTLN 1 weight set www.gslb.test $r a=100 b=100 >/dev/null || fail "weight set $r"
done
CTLN 1 service set www.gslb.test --steering nearest --switch-margin 20% >/dev/null ||
	fail "service set --steering nearest"
nsup() { # i
	GSLBD_TEST_PROBE_MAP="127.0.0.1:$PA=127.0.0.1:${MAPA[$1]},127.0.0.1:$PB=127.0.0.1:${MAPB[$1]}" \
		ns_start "$1"
}
for i in 1 2 3; do nsup "$i"; done

leader_now() { CTLN 1 cluster status 2>/dev/null | sed -n 's/^leader: ns//p'; }
L=
for _ in $(tseq 100); do L=$(leader_now); [[ "$L" =~ ^[123]$ ]] && break; sleep 0.1; done
[[ "$L" =~ ^[123]$ ]] && ok "ns$L is elected" || fail "no elected instance: '$L'"

# The answer of instance I to a client of SUBNET (one dig +subnet).
ans() { # i subnet
	dig @127.0.0.1 -p "${NSPORT[$1]}" +norec +time=1 +tries=1 +short "+subnet=$2" \
		www.gslb.test A 2>/dev/null | head -1
}
BJ=101.7.0.0/24; GZ=101.6.0.0/24
# every_instance SUBNET ADDR: 0 when all three answer ADDR to the subnet
# five times each (a row at the operator's 50/50 would rarely pass).
every_instance() {
	local i
	for i in 1 2 3; do
		for _ in 1 2 3 4 5; do [ "$(ans "$i" "$1")" = "$2" ] || return 1; done
	done
}
# Probes alone: cn-bj's row to a (fast from ns1), cn-gz's to b (fast
# from ns2), on every instance.
if wait_until 40 every_instance "$BJ" 192.0.2.1; then
	ok "cn-bj's clients get a, fast from the cn-bj vantage, on all three"
else
	fail "cn-bj: $(ans 1 "$BJ") / $(ans 2 "$BJ") / $(ans 3 "$BJ"); $(CTLN "$L" steer show www.gslb.test 2>&1)"
fi
if wait_until 20 every_instance "$GZ" 192.0.2.2; then
	ok "cn-gz's clients get b, fast from the cn-gz vantage, on all three"
else
	fail "cn-gz: $(ans 1 "$GZ") / $(ans 2 "$GZ") / $(ans 3 "$GZ"); $(CTLN "$L" steer show www.gslb.test 2>&1)"
fi
# Many queries: each region's answers all go to its node.
for i in 1 2 3; do
	for sub in "$BJ" "$GZ"; do
		for _ in $(seq 100); do echo "www.gslb.test A +subnet=$sub"; done > "$T/batch"
		dig @127.0.0.1 -p "${NSPORT[$i]}" +short +tries=1 +time=2 -f "$T/batch" > "$T/picks"
		[ "$sub" = "$BJ" ] && want=192.0.2.1 || want=192.0.2.2
		got=$(grep -c "^$want\$" "$T/picks")
		[ "$got" -ge 95 ] && ok "ns$i: $got of 100 answers for $sub go to $want" ||
			fail "ns$i: $got of 100 answers for $sub go to $want: $(sort "$T/picks" | uniq -c | tr '\n' ' ')"
	done
done
out=$(CTLN "$L" steer show www.gslb.test)
expect_has "$out" "^  a .*latency probes from its region and ISP: ns1 \(cn-bj/cucc\)" \
	"steer show: a's latency for cn-bj comes from ns1's probes"
expect_has "$out" "^  b .*latency probes from its region and ISP: ns2 \(cn-gz/ctcc\)" \
	"steer show: b's latency for cn-gz comes from ns2's probes"

# A push through an instance that is not elected.
N=$(( L % 3 + 1 ))
before=$(ETCDCTL get --prefix /gslbd/metrics/ --keys-only | grep -c .)
printf 'a --region cn-bj --isp cucc latency=20\nzz --region cn-bj --isp cucc latency=5\n' > "$T/bad.txt"
out=$(CTLN "$N" metrics push --file "$T/bad.txt" 2>&1); rc=$?
[ $rc = 1 ] && expect_has "$out" "bad.txt:2: metrics push: node zz does not exist" \
	"ns$N: an unknown node refused with FILE:LINE" || fail "bad push: rc $rc: $out"
out=$(CTLN "$N" metrics push b --region cn-bj latency=abc 2>&1); rc=$?
[ $rc = 1 ] && expect_has "$out" "latency abc: give a number" "ns$N: a bad value refused" ||
	fail "bad value: rc $rc: $out"
after=$(ETCDCTL get --prefix /gslbd/metrics/ --keys-only | grep -c .)
[ "$after" = "$before" ] && ok "refused pushes wrote nothing to etcd ($after keys)" ||
	fail "refused pushes wrote to etcd: $before -> $after keys"

# The clients of cn-bj measure b faster than a (pushed for the row, so
# it wins over the probes): fed through ns$N only, every 0.5 s while
# $T/feeding exists, for at most 2 minutes.
printf '# cn-bj clients\nb --region cn-bj --isp cucc latency=5\na --region cn-bj --isp cucc latency=200\n' > "$T/round.txt"
out=$(CTLN "$N" metrics push --file "$T/round.txt" 2>&1)
expect_has "$out" "^cluster revision [0-9]+: 2 measurements from .*round.txt$" \
	"ns$N: metrics push --file goes to the cluster"
touch "$T/feeding"
(
	end=$((SECONDS + $(tscale 120)))
	while [ -e "$T/feeding" ] && [ $SECONDS -lt $end ]; do
		CTLN "$N" metrics push --file "$T/round.txt" >/dev/null 2>&1 || echo "FAIL - feeder push"
		sleep 0.5
	done
) &
FEEDER=$!
if wait_until 30 every_instance "$BJ" 192.0.2.2; then
	ok "a latency pushed to ns$N (not elected) moves cn-bj's row to b on all three"
else
	fail "cn-bj after the push: $(ans 1 "$BJ") / $(ans 2 "$BJ") / $(ans 3 "$BJ"); $(CTLN "$L" steer show www.gslb.test 2>&1)"
fi
every_instance "$GZ" 192.0.2.2 && ok "cn-gz's row stays on b" || fail "cn-gz moved: $(ans 1 "$GZ")"
expect_has "$(CTLN "$L" steer show www.gslb.test)" "^  b .*latency pushed for the row" \
	"steer show: b's latency for cn-bj is the pushed one"
# Each push is applied once in every store: 2 GB served by a at 1 per GB,
# pushed once through ns$N, is a spend of 2 in every instance's budget
# (read from its own store); an instance that starts on an empty store
# gets it from etcd, once too, and one restarted on its store does not
# count it again.
O=$(( 6 - L - N ))
CTLN 1 node set a --provider cdn-a --cost-per-gb 1 >/dev/null || fail "node set a --provider"
CTLN 1 budget set cdn-a --limit 1000 >/dev/null || fail "budget set"
CTLN "$N" metrics push a bytes=2000000000 >/dev/null || fail "push bytes"
spent() { # i
	CTLN "$1" --json budget list 2>/dev/null | python3 -c "
import json, sys
print('%.2f' % json.load(sys.stdin)['cdn-a']['spent'])" 2>/dev/null
}
spent_all() { local i; for i in 1 2 3; do [ "$(spent "$i")" = "$1" ] || return 1; done; }
wait_until 10 spent_all 2.00 && ok "every store counts the pushed bytes once: spent 2.00" ||
	fail "spent: $(spent 1) / $(spent 2) / $(spent 3)"
ns_stop "$O"
rm -rf "$T/ns$O/db"
nsup "$O"
spent_o() { [ "$(spent "$O")" = 2.00 ]; }
wait_until 10 spent_o && ok "ns$O started on an empty store: spent 2.00 from etcd" ||
	fail "ns$O on an empty store: spent $(spent "$O")"
ns_stop "$N"
logged=$(wc -l < "$T/ns$N.log")
nsup "$N"
resynced() { tail -n +$((logged + 1)) "$T/ns$N.log" | grep -q "resynced from etcd"; }
wait_until 10 resynced || fail "ns$N restarted: no resync in its log"
# Deliberately: a second of ns$N running on its store after the resync,
# in which a push applied twice would show.
sleep 1
[ "$(spent "$O")" = 2.00 ] && [ "$(spent "$N")" = 2.00 ] &&
	ok "ns$N restarted on its store: still 2.00, nothing applied twice" ||
	fail "spent later: ns$O $(spent "$O"), ns$N $(spent "$N")"

# Every store, not only the elected one's, holds the pushes: stop the
# instance pushed to and the elected one; the third, which was never
# pushed to, is elected and steers cn-bj on the pushed latency it got
# through etcd (while the feeder goes on through ns$N's gslbctl).
ns_stop "$N"
ns_stop "$L"
t0=$(date +%s)
E=
for _ in $(tseq 100); do
	E=$(CTLN "$O" cluster status 2>/dev/null | sed -n 's/^leader: ns//p')
	[ "$E" = "$O" ] && break
	sleep 0.1
done
[ "$E" = "$O" ] && ok "ns$O is elected" || fail "ns$O not elected: '$E'"
# bj_pushed: ns$O evaluated cn-bj after its election, on a pushed latency.
bj_pushed() {
	CTLN "$O" --json steer show www.gslb.test 2>/dev/null | python3 -c "
import json, sys
for r in json.load(sys.stdin):
    if r['row'].endswith('|cn-bj|cucc'):
        b = r['nodes']['b']
        sys.exit(0 if r['evaluated_at'] > $t0 + 1 and r.get('current') == 'b' and
                 b.get('source', '').startswith('pushed for the row') else 1)
sys.exit(1)"
}
if wait_until 20 bj_pushed; then
	ok "ns$O, never pushed to, steers cn-bj to b on the pushed latency"
else
	fail "ns$O: $(CTLN "$O" steer show www.gslb.test 2>&1)"
fi
[ "$(ans "$O" "$BJ")" = 192.0.2.2 ] && ok "ns$O answers cn-bj with b" || fail "ns$O answers cn-bj with $(ans "$O" "$BJ")"
rm -f "$T/feeding"
wait "$FEEDER" 2>/dev/null
finish
