#!/bin/bash
# A cluster member's store and the break-glass path, with a real 3-member
# etcd and 3 gslbd instances on loopback: a plain local write to a
# member's store is refused (exit 1, the message says to write through
# the cluster or use --local-override); a store changed behind the
# daemon's back is found different from etcd's table at its revision
# (cluster status, /metrics, the log) and read again from etcd; with
# every etcd member stopped, `gslbctl --local-override` drains a node on
# one instance only, which says so (cluster status, /metrics, the log at
# warning level, the audit log) and keeps it through a restart and after
# etcd is back (it then stands aside from the automatic decisions),
# until `cluster overrides push` writes it to the cluster
# (every instance drains the node); a second override, a weight, is
# dropped after another outage and the instance answers the cluster's
# table again.  The health thread goes on probing through the outages.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
gslb_zone
for i in 1 2 3; do
	ns_conf "$i"
	echo "  verify-interval: 1" >> "$T/ns$i/gslbd.conf"
done
HP=$((PORT + 30))
start_httpd "$HP"
etcd_cluster_start || exit 1
CTLN 1 service add www.gslb.test --ttl 60 --answers 3 >/dev/null
CTLN 1 node add a --addr 192.0.2.1 >/dev/null
CTLN 1 node add b --addr 192.0.2.2 >/dev/null
CTLN 1 node add c --addr 192.0.2.3 --probe "http://127.0.0.1:$HP/" >/dev/null
CTLN 1 weight set www.gslb.test a=10 b=10 c=10 >/dev/null
for i in 1 2 3; do ns_start "$i"; done
ALL="192.0.2.1 192.0.2.2 192.0.2.3"
wait_all 100 www.gslb.test "$ALL" && ok "start: the three instances answer" ||
	fail "start: $(qn 1 www.gslb.test) / $(qn 2 www.gslb.test) / $(qn 3 www.gslb.test)"
CTL_D() { local i=$1; shift; "$ROOT/$B/gslbctl" -d "$T/ns$i/db" "$@"; }
# metric_is I NAME VALUE: waits (5 s) until nsI's /metrics says so.
metric_is() {
	for _ in $(tseq 50); do
		[ "$(mval "$(scrape "$1")" "$2")" = "$3" ] && return 0
		sleep 0.1
	done
	return 1
}

# 1. A plain local write to a member's store: refused, nothing written.
before=$(export_of 1)
out=$(CTL_D 1 node set a --admin drain 2>&1)
rc=$?
[ $rc = 1 ] && grep -q "is the local copy of cluster /gslbd/ (at etcd revision [0-9]*).*write through the cluster.*--local-override; nothing was changed" <<<"$out" &&
	ok "a local write to a member's store is refused and says why" || fail "local write: rc=$rc: $out"
[ "$(export_of 1)" = "$before" ] && [ "$(qn 1 www.gslb.test)" = "$ALL" ] &&
	ok "the refused local write changed nothing" || fail "the refused write changed the store"
out=$(CTLN 1 --local-override node set a --admin drain 2>&1)
rc=$?
[ $rc = 1 ] && grep -q "etcd is reachable" <<<"$out" &&
	ok "--local-override is refused while etcd answers" || fail "--local-override with etcd up: rc=$rc: $out"
out=$(CTLN 1 cluster status 2>&1)
expect_has "$out" "^local store at revision [0-9]+: up to date" "cluster status: up to date at start"
# Up to date, the store is named by etcd's own revision (the store's
# last applied one is older: health views and leases move etcd's).
# (The elected instance's first decisions may still be on their way.)
for _ in $(tseq 50); do
	out=$(CTLN 1 cluster status 2>&1)
	erev=$(sed -n 's/^etcd: reachable at .*, revision \([0-9]*\), last change at .*/\1/p' <<<"$out")
	lrev=$(sed -n 's/^local store at revision \([0-9]*\): up to date/\1/p' <<<"$out")
	[ -n "$erev" ] && [ "$erev" = "$lrev" ] && break
	sleep 0.1
done
[ -n "$erev" ] && [ "$erev" = "$lrev" ] && ok "cluster status: up to date at etcd's revision $erev" ||
	fail "cluster status: etcd at '$erev', the store said at '$lrev'"

# 2. A store changed behind the daemon's back (the test-only escape of
# gslbctl): found different from etcd's table at its revision, said so
# by cluster status (gslbd stopped) and, once gslbd runs, by its log and
# /metrics, and read again from etcd.
ns_stop 2
out=$(GSLBCTL_TEST_LOCAL_WRITE=1 CTL_D 2 node set b --admin drain 2>&1) ||
	fail "the test-only local write: $out"
out=$(CTLN 2 cluster status 2>&1)
expect_has "$out" "^local store at revision [0-9]+: DIVERGED: its table differs from etcd's" \
	"cluster status: a store changed outside the cluster is diverged"
out=$(CTLN 2 --json cluster status 2>&1)
python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["diverged"] is True and d["overrides"] == [], d' <<<"$out" &&
	ok "cluster status --json: diverged" || fail "cluster status --json: $out"
ns_start 2
wait_all 100 www.gslb.test "$ALL" && ok "divergence: the instance reads the table from etcd again and answers as the others" ||
	fail "divergence: ns2 answers $(qn 2 www.gslb.test)"
grep -q "cluster: the local table differs from etcd's at revision [0-9]* .*reading the table from etcd again" "$T/ns2.log" &&
	ok "divergence: logged" || fail "divergence: not in the log: $(grep cluster: "$T/ns2.log" | tail -3)"
metric_is 2 gslbd_cluster_divergences_total 1 && metric_is 2 gslbd_cluster_table_diverged 0 &&
	ok "divergence: /metrics counts it, and the table matches again" ||
	fail "divergence: metrics $(scrape 2 | grep -E 'diverge')"
out=$(CTLN 2 cluster status 2>&1)
expect_has "$out" "^local store at revision [0-9]+: up to date" "cluster status: up to date after the resync"
# Between full checks the check reads only the store's records since the
# one before; a change behind the back of the running daemon is found by
# it (and confirmed by a full one).  A change through the cluster meanwhile is none.
inc() { scrape 2 | awk '$1 == "gslbd_cluster_table_checks_total{kind=\"incremental\"}" { print $2 }'; }
i0=$(inc)
CTLN 1 weight set www.gslb.test a=10 b=10 c=20 >/dev/null || fail "weight set through ns1"
for _ in $(tseq 100); do [ "$(inc)" -ge $((i0 + 2)) ] 2>/dev/null && break; sleep 0.1; done
[ "$(inc)" -ge $((i0 + 2)) ] 2>/dev/null && metric_is 2 gslbd_cluster_divergences_total 1 &&
	ok "incremental checks run between full ones, a change through the cluster no divergence" ||
	fail "incremental checks: $(scrape 2 | grep -E 'table_checks|diverge')"
out=$(GSLBCTL_TEST_LOCAL_WRITE=1 CTL_D 2 node set c --admin drain 2>&1) ||
	fail "the test-only local write with gslbd running: $out"
metric_is 2 gslbd_cluster_divergences_total 2 && wait_all 100 www.gslb.test "$ALL" &&
	ok "a change behind the running daemon's back: found and read from etcd again" ||
	fail "running divergence: $(qn 2 www.gslb.test) $(scrape 2 | grep -E 'table_checks|diverge')"

# 3. Every etcd member stopped: a plain local write is still refused;
# --local-override drains a on ns1 only, which says so everywhere.
for i in 1 2 3; do etcd_stop "$i"; done
out=$(CTL_D 1 node set a --admin drain 2>&1)
[ $? = 1 ] && grep -q "is the local copy of cluster" <<<"$out" &&
	ok "etcd down: a plain local write is still refused" || fail "etcd down: local write: $out"
hbefore=$(CTLN 1 --json status 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["daemon"]["health_time"])')
out=$(CTLN 1 --local-override node set a --admin drain 2>&1)
rc=$?
echo "# $out" | head -3
[ $rc = 0 ] && grep -q "warning: local override on this instance only (cluster /gslbd/): node a: admin drain (since .*cluster overrides push.*cluster overrides drop" <<<"$out" &&
	ok "etcd down: --local-override drains a, with a warning" || fail "--local-override: rc=$rc: $out"
NOA="192.0.2.2 192.0.2.3"
[ "$(qn 1 www.gslb.test)" = "$NOA" ] && [ "$(qn 2 www.gslb.test)" = "$ALL" ] && [ "$(qn 3 www.gslb.test)" = "$ALL" ] &&
	ok "the override leaves ns1's answers only" ||
	fail "override answers: $(qn 1 www.gslb.test) / $(qn 2 www.gslb.test) / $(qn 3 www.gslb.test)"
out=$(CTLN 1 cluster status 2>&1)
expect_has "$out" "^override on this instance: node a: admin drain \(since .*, at etcd revision [0-9]+\)" \
	"etcd down: cluster status shows the override"
metric_is 1 gslbd_cluster_local_overrides 1 && metric_is 2 gslbd_cluster_local_overrides 0 &&
	ok "/metrics: one override on ns1, none on ns2" || fail "overrides metric: $(mval "$(scrape 1)" gslbd_cluster_local_overrides)"
for _ in $(tseq 30); do grep -q "warning: cluster: local override on this instance: node a: admin drain" "$T/ns1.log" && break; sleep 0.1; done
grep -q "warning: cluster: local override on this instance: node a: admin drain" "$T/ns1.log" &&
	ok "gslbd logs the override at warning level" || fail "no warning in ns1's log"
expect_has "$(CTLN 1 log --limit 3 2>&1)" "gslbctl:[a-z]+ +node set a admin=drain; override add node/a" "the override is in the audit log"
# The health thread goes on probing through the outage.
moved=0
for _ in $(tseq 50); do
	h=$(CTLN 1 --json status 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["daemon"]["health_time"])')
	[ -n "$h" ] && [ "$h" != None ] && [ "$h" != "$hbefore" ] && { moved=1; break; }
	sleep 0.2
done
[ $moved = 1 ] && ok "etcd down: the health thread goes on probing ($hbefore -> $h)" ||
	fail "etcd down: health data stays at $hbefore"
ns_stop 1
ns_start 1
[ "$(qn 1 www.gslb.test)" = "$NOA" ] && metric_is 1 gslbd_cluster_local_overrides 1 &&
	ok "the override survives a restart of gslbd" || fail "after the restart: $(qn 1 www.gslb.test)"

# 4. etcd back: the override stays (and says so), over a change the
# cluster makes to a meanwhile; then pushed: every instance drains a.
etcd_cluster_start || exit 1
out=$(CTLN 2 node set a --addr 192.0.2.11 2>&1)
expect_has "$out" "^cluster revision [0-9]+: node set a$" "a write names the change by the cluster's revision"
ALL2="192.0.2.11 192.0.2.2 192.0.2.3"
for _ in $(tseq 100); do
	[ "$(qn 2 www.gslb.test)" = "$ALL2" ] && [ "$(qn 3 www.gslb.test)" = "$ALL2" ] && break
	sleep 0.1
done
sleep 2
[ "$(qn 1 www.gslb.test)" = "$NOA" ] && [ "$(qn 2 www.gslb.test)" = "$ALL2" ] &&
	ok "etcd back: ns1 keeps its override, the others answer the cluster's change" ||
	fail "etcd back: $(qn 1 www.gslb.test) / $(qn 2 www.gslb.test)"
out=$(CTLN 1 cluster status 2>&1)
expect_has "$out" "^local store at revision [0-9]+: up to date" "etcd back: an override is no divergence"
expect_has "$out" "^override on this instance: node a: admin drain" "etcd back: cluster status still shows the override"
metric_is 1 gslbd_cluster_table_diverged 0 && ok "etcd back: /metrics: not diverged" || fail "etcd back: diverged"
# An instance with an override does not make the automatic decisions
# (they would carry its override to all).
for _ in $(tseq 50); do
	[ "$(mval "$(scrape 1)" gslbd_cluster_leader)" = 0 ] &&
		grep -q "^leader: ns[23]" <<<"$(CTLN 1 cluster status 2>&1)" && break
	sleep 0.1
done
[ "$(mval "$(scrape 1)" gslbd_cluster_leader)" = 0 ] && grep -q "^leader: ns[23]" <<<"$(CTLN 1 cluster status 2>&1)" &&
	ok "etcd back: the instance with an override is not the elected one" ||
	fail "etcd back: leader $(CTLN 1 cluster status 2>&1 | grep leader)"
# Alone, it stays unelected.
ns_stop 2; ns_stop 3
sleep 5    # lease-ttl 3: the others' leader key is gone
[ "$(mval "$(scrape 1)" gslbd_cluster_leader)" = 0 ] && grep -q "^leader: none" <<<"$(CTLN 1 cluster status 2>&1)" &&
	ok "etcd back: alone, the instance with an override does not campaign" ||
	fail "alone: $(CTLN 1 cluster status 2>&1 | grep leader)"
ns_start 2; ns_start 3
out=$(CTLN 1 cluster overrides push 2>&1)
rc=$?
echo "# $out"
[ $rc = 0 ] && grep -q "local overrides of ns1 pushed to the cluster: node a" <<<"$out" &&
	ok "cluster overrides push writes it to the cluster" || fail "push: rc=$rc: $out"
wait_all 100 www.gslb.test "$NOA" && ok "pushed: every instance drains a" ||
	fail "pushed: $(qn 1 www.gslb.test) / $(qn 2 www.gslb.test) / $(qn 3 www.gslb.test)"
out=$(CTLN 3 node show a 2>&1)
expect_has "$out" "192\.0\.2\.11" "pushed: the cluster's address change stays"
metric_is 1 gslbd_cluster_local_overrides 0 && ok "pushed: no override left on ns1" || fail "pushed: overrides left"
expect_has "$(CTLN 1 cluster overrides 2>&1)" "^no local overrides" "pushed: cluster overrides lists none"

# 5. A second override, a weight, on ns3 through another outage, then
# dropped: ns3 answers the cluster's table again.
CTLN 1 node set a --admin auto >/dev/null
wait_all 100 www.gslb.test "$ALL2" || fail "a back: $(qn 3 www.gslb.test)"
for i in 1 2 3; do etcd_stop "$i"; done
out=$(CTLN 3 --local-override weight set www.gslb.test a=10 b=10 c=0 2>&1) || fail "weight override: $out"
NOC="192.0.2.11 192.0.2.2"
[ "$(qn 3 www.gslb.test)" = "$NOC" ] && [ "$(qn 1 www.gslb.test)" = "$ALL2" ] &&
	ok "a weight override on ns3 only" || fail "weight override: $(qn 3 www.gslb.test) / $(qn 1 www.gslb.test)"
out=$(CTLN 3 --local-override service set www.gslb.test --answers 2 2>&1)
[ $? = 1 ] && grep -q "only a node's admin drain or down, or a weight row's weights, can be overridden" <<<"$out" &&
	ok "--local-override refuses anything else" || fail "override of a service: $out"
etcd_cluster_start || exit 1
sleep 2
[ "$(qn 3 www.gslb.test)" = "$NOC" ] && ok "etcd back: the weight override stays" || fail "etcd back: $(qn 3 www.gslb.test)"
out=$(CTLN 3 cluster overrides drop 2>&1)
[ $? = 0 ] && grep -q "local overrides dropped: weight www.gslb.test" <<<"$out" &&
	ok "cluster overrides drop" || fail "drop: $out"
[ "$(qn 3 www.gslb.test)" = "$ALL2" ] && ok "dropped: ns3 answers the cluster's table again" ||
	fail "dropped: $(qn 3 www.gslb.test)"
metric_is 3 gslbd_cluster_local_overrides 0 && metric_is 3 gslbd_cluster_table_diverged 0 &&
	ok "dropped: no override, no divergence" || fail "dropped: metrics $(scrape 3 | grep -E '^gslbd_cluster_(local|table)')"
expect_has "$(CTLN 3 cluster status 2>&1)" "^local store at revision [0-9]+: up to date" "dropped: cluster status up to date"
grep -q "cluster: local override of weight/www.gslb.test|\*|\* is gone" "$T/ns3.log" &&
	ok "dropped: gslbd logs that the override is gone" || fail "dropped: not logged"
finish
