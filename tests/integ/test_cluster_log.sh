#!/bin/bash
# The cluster's change log, with a real 3-member etcd and 3 gslbd
# instances on loopback: each change's audit record travels with it
# through etcd, so `gslbctl log` shows the same records in the same
# order, named by the same revisions, on every instance, also on one
# that was down through 50 changes (no "resync" record in their place);
# a change is named by its cluster revision everywhere (the write's
# line, --json, the log, metrics push); a rollback by revision through
# ns2 undoes the change made through ns1 on every instance; and the
# elected instance keeps the log in etcd to cluster.log-keep records.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
gslb_zone
for i in 1 2 3; do ns_conf "$i"; done
etcd_cluster_start || exit 1
CTLN 1 service add www.gslb.test --ttl 60 --answers 3 >/dev/null
CTLN 1 node add a --addr 192.0.2.1 >/dev/null
CTLN 1 node add b --addr 192.0.2.2 >/dev/null
CTLN 1 node add c --addr 192.0.2.3 >/dev/null
out=$(CTLN 1 weight set www.gslb.test a=10 b=10 c=10 2>&1)
expect_has "$out" "^cluster revision [0-9]+: weight set www.gslb.test" "a write names its cluster revision"
for i in 1 2 3; do ns_start "$i"; done
ALL="192.0.2.1 192.0.2.2 192.0.2.3"
wait_all 100 www.gslb.test "$ALL" && ok "start: the three instances answer" ||
	fail "start: $(qn 1 www.gslb.test) / $(qn 2 www.gslb.test) / $(qn 3 www.gslb.test)"

# up_to_date I: nsI's store holds etcd's last change (10 s).
up_to_date() {
	for _ in $(tseq 100); do
		CTLN "$1" cluster status 2>/dev/null | grep -q "^local store at revision [0-9]*: up to date" &&
			return 0
		sleep 0.1
	done
	return 1
}
# same_log: `gslbctl log` is the same on the three instances (10 s:
# the elected instance's decisions may still be on their way).
same_log() {
	for _ in $(tseq 100); do
		L1=$(CTLN 1 log 2>&1); L2=$(CTLN 2 log 2>&1); L3=$(CTLN 3 log 2>&1)
		[ -n "$L1" ] && [ "$L1" = "$L2" ] && [ "$L1" = "$L3" ] && return 0
		sleep 0.1
	done
	return 1
}

# 1. ns3 down through 50 changes made through ns1 and ns2 in turn.
ns_stop 3
revs=()
for n in $(seq 1 50); do
	w=$((n % 2 + 1))
	out=$(CTLN "$w" weight set www.gslb.test a=$((n + 10)) b=10 c=10 2>&1) ||
		{ fail "change $n through ns$w: $out"; break; }
	revs+=("$(sed -n 's/^cluster revision \([0-9]*\): .*/\1/p' <<<"$out")")
done
[ ${#revs[@]} = 50 ] && ok "50 changes made through ns1 and ns2 while ns3 was down" ||
	fail "only ${#revs[@]} changes made"
ns_start 3
up_to_date 3 && ok "ns3 caught up" || fail "ns3: $(CTLN 3 cluster status 2>&1)"
same_log && ok "gslbctl log: the same on the three instances" ||
	{ fail "gslbctl log differs"; diff <(echo "$L1") <(echo "$L3") | head -20; }
n50=0
for r in "${revs[@]}"; do
	grep -Eq "^ *$r  [0-9T:-]+Z  gslbctl:[^ ]+ +weight set www.gslb.test " <<<"$L3" && n50=$((n50 + 1))
done
[ $n50 = 50 ] && ok "ns3's log holds each of the 50 changes under its cluster revision" ||
	{ fail "ns3's log holds $n50 of the 50 changes by revision"; tail -5 <<<"$L3"; }
grep -q "resync" <<<"$L3" && fail "ns3's log shows a resync record: $(grep resync <<<"$L3")" ||
	ok "no resync record in place of the changes"
# In order: the revisions increase down the log.
sort -n -c <(awk '{ print $1 }' <<<"$L3") 2>/dev/null && ok "the log is in the order of revisions" ||
	fail "the log is out of order"
j3=$(CTLN 3 --json log --limit 1 2>&1)
last=${revs[49]}
python3 - "$j3" "$last" <<'PY' && ok "log --json names the record by its revision" || fail "log --json: $j3"
import json, sys
r = json.loads(sys.argv[1])["records"][-1]
want = int(sys.argv[2])
sys.exit(0 if r["revision"] >= want and r["id"] == r["revision"] else 1)
PY
# The local audit record of a change applied from the watch carries the
# revision too (gslbd's log line says it).
grep -q "cluster: applied revision ${revs[10]}: weight set www.gslb.test" "$T/ns1.log" "$T/ns2.log" &&
	ok "gslbd logs the change by its revision" || fail "gslbd did not log revision ${revs[10]}"

# 2. Rollback by revision through ns2 of a change made through ns1.
out=$(CTLN 1 node set b --admin drain 2>&1)
rb=$(sed -n 's/^cluster revision \([0-9]*\): node set b.*/\1/p' <<<"$out")
[ -n "$rb" ] && ok "drain of b through ns1 at revision $rb" || fail "drain: $out"
wait_all 100 www.gslb.test "192.0.2.1 192.0.2.3" && ok "b is out on every instance" ||
	fail "drained: $(qn 1 www.gslb.test) / $(qn 2 www.gslb.test) / $(qn 3 www.gslb.test)"
out=$(CTLN 2 rollback --dry-run "$rb" 2>&1)
expect_has "$out" "^rollback would undo cluster revision $rb \(.* gslbctl:[^ ]+: node set b" "rollback --dry-run on ns2 names ns1's change"
out=$(CTLN 2 rollback "$rb" 2>&1)
grep -q "^undoing cluster revision $rb: node set b" <<<"$out" &&
	grep -Eq "^cluster revision [0-9]+: rollback revision $rb$" <<<"$out" &&
	ok "rollback $rb through ns2" || fail "rollback through ns2: $out"
wait_all 100 www.gslb.test "$ALL" && ok "the rollback reached every instance" ||
	fail "rolled back: $(qn 1 www.gslb.test) / $(qn 2 www.gslb.test) / $(qn 3 www.gslb.test)"
j=$(CTLN 3 --json log --limit 1 2>&1)
python3 - "$j" "$rb" <<'PY' && ok "ns3's log: the rollback undoes revision $rb" || fail "ns3's last record: $j"
import json, sys
r = json.loads(sys.argv[1])["records"][-1]
sys.exit(0 if r.get("undoes") == int(sys.argv[2]) else 1)
PY
out=$(CTLN 3 rollback "$rb" 2>&1)
[ $? = 1 ] && grep -q "changed again after cluster revision $rb" <<<"$out" &&
	ok "a second rollback of $rb through ns3 is refused" || fail "second rollback: $out"
same_log && ok "after the rollback: the same log on the three instances" || fail "logs differ after the rollback"

# 3. metrics push is named by its revision too.
out=$(CTLN 1 metrics push a cpu=50 2>&1)
expect_has "$out" "^cluster revision [0-9]+: metrics of a stored" "metrics push names its cluster revision"
out=$(CTLN 1 --json weight set www.gslb.test a=9 b=10 c=10 2>&1)
python3 - "$out" <<'PY' && ok "--json of a write: change is the revision" || fail "--json: $out"
import json, sys
d = json.loads(sys.argv[1])
sys.exit(0 if d["change"] == d["revision"] > 0 else 1)
PY

# 4. The log in etcd is kept to cluster.log-keep records.
nlog() { ETCDCTL get --prefix /gslbd/log/ --keys-only 2>/dev/null | grep -c '^/gslbd/log/'; }
before=$(nlog)
[ "$before" -gt 55 ] && ok "etcd holds $before log records" || fail "etcd holds $before log records"
for i in 1 2 3; do
	ns_stop "$i"
	echo "  log-keep: 20" >> "$T/ns$i/gslbd.conf"
	ns_start "$i"
done
last=$(CTLN 1 weight set www.gslb.test a=7 b=10 c=10 2>&1 | sed -n 's/^cluster revision \([0-9]*\): .*/\1/p')
for _ in $(tseq 200); do [ "$(nlog)" -le 20 ] && break; sleep 0.1; done
n=$(nlog)
[ "$n" -le 20 ] && [ "$n" -ge 15 ] && ok "log-keep 20: etcd keeps $n log records" || fail "log-keep 20: $n records"
grep -q "of the oldest records left the change log (it keeps 20)" "$T"/ns*.log &&
	ok "the elected instance logs the trim" || fail "no trim logged"
same_log && ok "after the trim: the same log on the three instances" || fail "logs differ after the trim"
[ "$(wc -l <<<"$L1")" -le 20 ] && grep -Eq "^ *$last  .* weight set www.gslb.test" <<<"$L1" &&
	ok "the log keeps the newest records" || fail "after the trim: $L1"

# 5. With etcd down, log says it shows this instance's own log.
for i in 1 2 3; do etcd_stop "$i"; done
out=$(CTLN 2 log 2>&1)
rc=$?
[ $rc = 0 ] && grep -q "cannot read the cluster's change log .*this instance's own log follows, numbered by its own ids" <<<"$out" &&
	grep -q "weight set www.gslb.test .* a=7 b=10 c=10" <<<"$out" &&
	ok "etcd down: log falls back to the local log and says so" || fail "etcd down: rc=$rc: $out"
finish
