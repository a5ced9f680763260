#!/bin/bash
# etcd on a bad night, with a real 3-member etcd and 2 gslbd instances on
# loopback: a write right after the etcd leader is stopped goes through
# (gslbctl tries again while etcd elects a new one, and says so); with two
# of three members stopped, gslbctl, `cluster status`, the log, /healthz
# and /metrics say "no quorum: 1 of 3 members answer (NAME)" rather than
# "unreachable", nothing is written and the answers go on; a write made
# while the quorum is gone goes through once a member is back within its
# retry time.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
gslb_zone
# A request timeout of 2 s: gslbctl tries again for 10 s (five timeouts).
for i in 1 2; do
	ns_conf "$i"
	sed -i 's/^  timeout: 1$/  timeout: 2/' "$T/ns$i/gslbd.conf"
done
etcd_cluster_start || exit 1
CTLN 1 service add www.gslb.test --ttl 60 --answers 2 >/dev/null
CTLN 1 node add a --addr 192.0.2.1 >/dev/null
CTLN 1 node add b --addr 192.0.2.2 >/dev/null
CTLN 1 weight set www.gslb.test a=10 b=10 >/dev/null
ns_start 1
ns_start 2
NSPID[3]=
wait_all 100 www.gslb.test "192.0.2.1 192.0.2.2" && ok "start: both instances answer" ||
	fail "start: $(qn 1 www.gslb.test) / $(qn 2 www.gslb.test)"

healthz() { # i
	curl -s -w '\n%{http_code}' "http://127.0.0.1:$((PORT + 20 + $1))/healthz" 2>&1
}

# 1. The leader stopped, a write at once: it goes through.
leader=$(etcd_leader)
[ -n "$leader" ] || { fail "no etcd leader"; exit 1; }
etcd_stop "$leader"
out=$(CTLN 1 node set a --addr 192.0.2.11 2>&1)
rc=$?
[ $rc = 0 ] && ok "a write right after the leader stopped goes through" ||
	fail "write after the leader stopped: rc=$rc: $out"
echo "# leader e$leader stopped; gslbctl said: $out"
wait_all 100 www.gslb.test "192.0.2.11 192.0.2.2" && ok "both instances answer that change" ||
	fail "after the election: $(qn 1 www.gslb.test) / $(qn 2 www.gslb.test)"
etcd_start "$leader"
etcd_wait || exit 1
# The member kept below may be the one just restarted: it must answer
# itself before the others go.
etcd_member_wait 1 || exit 1

# 2. Two of three members stopped: no quorum, said as such everywhere.
keep=1
for i in 2 3; do etcd_stop "$i"; done
before=$(CTLN 1 export 2>&1)
out=$(CTLN 1 node set a --admin drain 2>&1)
rc=$?
[ $rc = 1 ] && grep -q "no quorum: 1 of 3 members answer (e$keep).*nothing was written" <<<"$out" &&
	ok "no quorum: gslbctl says so, names the member that answers, and writes nothing" ||
	fail "no quorum: gslbctl rc=$rc: $out"
[ "$(CTLN 1 export 2>&1)" = "$before" ] && ok "no quorum: the local store is unchanged" ||
	fail "no quorum: the local store changed"
out=$(CTLN 1 cluster status 2>&1)
expect_has "$out" "^etcd: no quorum: 1 of 3 members answer \(e$keep\)" "no quorum: cluster status says so"
out=$(CTLN 1 --json cluster status 2>&1)
python3 -c 'import json,sys
d=json.load(sys.stdin)
assert d["etcd"] == "no-quorum" and d["etcd_members"] == 3 and d["etcd_members_answering"] == 1, d' <<<"$out" &&
	ok "no quorum: cluster status --json: no-quorum, 1 of 3" || fail "no quorum: --json: $out"
logged=0
for _ in $(tseq 200); do
	grep -q "cluster: no quorum: 1 of 3 members answer (e$keep)" "$T/ns1.log" && { logged=1; break; }
	sleep 0.1
done
if [ $logged = 1 ]; then
	ok "no quorum: gslbd logs it"
else fail "no quorum: gslbd's log: $(grep cluster: "$T/ns1.log" | tail -3)"; fi
got=
for _ in $(tseq 100); do
	m=$(scrape 1)
	got="$(mval "$m" gslbd_cluster_etcd_members_answering)/$(mval "$m" gslbd_cluster_etcd_members)/$(mval "$m" gslbd_cluster_etcd_reachable)"
	[ "$got" = "1/3/0" ] && break
	sleep 0.1
done
[ "$got" = "1/3/0" ] && ok "no quorum: /metrics: 1 of 3 members answer, etcd not reachable" ||
	fail "no quorum: metrics answering/members/reachable = $got"
h=$(healthz 1)
[ "$(tail -1 <<<"$h")" = 200 ] && grep -q "^cluster: no quorum: 1 of 3 members answer (e$keep)" <<<"$h" &&
	ok "no quorum: /healthz stays 200 (answers go on) and says why" || fail "no quorum: /healthz: $h"
[ "$(qn 1 www.gslb.test)" = "192.0.2.11 192.0.2.2" ] && [ "$(qn 2 www.gslb.test)" = "192.0.2.11 192.0.2.2" ] &&
	ok "no quorum: both instances answer from their stores" ||
	fail "no quorum: answers $(qn 1 www.gslb.test) / $(qn 2 www.gslb.test)"

# 3. A write while the quorum is gone, a member back 3 s later: the
# write goes through within its retry time, and says it retried.
(CTLN 1 node set b --addr 192.0.2.12 >"$T/w.out" 2>&1; echo $? >"$T/w.rc") &
wpid=$!
sleep 3   # the write is under way: its first try (2 s) fails for the quorum
etcd_start 2
wait "$wpid"
rc=$(cat "$T/w.rc")
[ "$rc" = 0 ] && grep -q "the change went through after [0-9]* retr" "$T/w.out" &&
	ok "a write across the lost quorum goes through and says it retried" ||
	fail "write across the lost quorum: rc=$rc: $(cat "$T/w.out")"
echo "# $(cat "$T/w.out" | tr '\n' ' ')"
wait_all 100 www.gslb.test "192.0.2.11 192.0.2.12" && ok "both instances answer it" ||
	fail "after the quorum came back: $(qn 1 www.gslb.test) / $(qn 2 www.gslb.test)"
ok_back=0
for _ in $(tseq 100); do
	h=$(healthz 1)
	[ "$(head -1 <<<"$h")" = ok ] && ! grep -q "^cluster:" <<<"$h" &&
		[ "$(mval "$(scrape 1)" gslbd_cluster_etcd_members_answering)" = 0 ] && { ok_back=1; break; }
	sleep 0.1
done
[ $ok_back = 1 ] && ok "quorum back: /healthz and /metrics clear" || fail "quorum back: /healthz: $h"
grep -q "cluster: etcd reachable again" "$T/ns1.log" && ok "quorum back: gslbd logs it" ||
	fail "quorum back: nothing in the log"
finish
