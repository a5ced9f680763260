#!/bin/bash
# The HTTP API's writes in cluster mode, with a real 3-member etcd and 2
# gslbd instances on loopback, each serving the API: a PATCH and a
# DELETE through ns1's API reach the answers of both instances and the
# cluster's log (actor api:NAME, from instance ns1); the generation is
# the etcd revision, the same on both instances, and If-Match is
# compared with it (a stale one refused, nothing written); while etcd
# has no quorum or is stopped, a write is refused with 503 and changes
# nothing; two writers racing on one node (two instances' APIs, or the
# API and gslbctl): one wins, the other gets gslbctl's words (S0-10:
# a refused change leaves nothing).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
. "$(dirname "$0")/api_lib.sh"
gslb_zone
for i in 1 2; do api_ns_conf "$i"; done
NSPID[3]=
etcd_cluster_start || exit 1
CTLN 1 service add www.gslb.test --ttl 60 --answers 2 >/dev/null
CTLN 1 service add alt.gslb.test --ttl 60 >/dev/null
CTLN 1 node add a --addr 192.0.2.1 >/dev/null
CTLN 1 node add b --addr 192.0.2.2 >/dev/null
CTLN 1 node add c --addr 192.0.2.3 >/dev/null
CTLN 1 weight set www.gslb.test a=10 b=10 >/dev/null
CTLN 1 weight set alt.gslb.test c=10 >/dev/null
# The tokens are each instance's own (not in the cluster's table).
tok() { CTLN "$1" api token add "$2" --role "$3" | awk '/^token /{ print $3 }'; }
AT1=$(tok 1 boss1 admin)
AT2=$(tok 2 boss2 admin)
RT1=$(tok 1 reader1 read)
RT2=$(tok 2 reader2 read)
[ -n "$AT1" ] && [ -n "$AT2" ] && [ -n "$RT1" ] && [ -n "$RT2" ] &&
	ok "a token on each instance" || { fail "tokens: '$AT1' '$AT2'"; exit 1; }
ns_start 1
ns_start 2
wait_all 100 www.gslb.test "192.0.2.1 192.0.2.2" && ok "start: both instances answer" ||
	fail "start: $(qn 1 www.gslb.test) / $(qn 2 www.gslb.test)"

# callI I TOKEN METHOD PATH [curl args]: call against nsI's API.
callI() { local i=$1; shift; U="https://127.0.0.1:$(AP "$i")" call "$@"; }
errtext() { tail -n +2 <<<"$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["error"])'; }
jget() { tail -n +2 <<<"$1" | python3 -c "import json, sys; print(json.load(sys.stdin)$2)"; }
# gen I: nsI's generation (the ETag of GET /v1/status).
gen() { callI "$1" "$( [ "$1" = 1 ] && echo "$RT1" || echo "$RT2")" GET /v1/status >/dev/null; etag | tr -d '"'; }
# The revision of the last change in etcd (the change marker's).
marker_rev() {
	ETCDCTL get /gslbd/change -w json 2>/dev/null | python3 -c '
import json, sys
kvs = json.load(sys.stdin).get("kvs") or [{}]
print(kvs[0].get("mod_revision", 0))'
}
same_gen() { [ "$(gen 1)" = "$(gen 2)" ]; }
J=(-H 'Content-Type: application/json')

# 1. The generation is the etcd revision, the same on both instances.
wait_until 10 same_gen && ok "both instances at the same generation ($(gen 1))" ||
	fail "generations: ns1 $(gen 1), ns2 $(gen 2)"
out=$(callI 1 "$RT1" GET /v1/status)
expect_has "$out" '"cluster": true' "status says cluster mode"
[ "$(gen 1)" -ge "$(marker_rev)" ] && ok "the generation is an etcd revision (at or past the last change, $(marker_rev))" ||
	fail "generation $(gen 1), last change $(marker_rev)"

# 2. A PATCH through ns1 with the ETag ns2 gave: both instances drain a.
callI 2 "$RT2" GET /v1/nodes/a >/dev/null
E2=$(etag)
out=$(callI 1 "$AT1" PATCH /v1/nodes/a "${J[@]}" -H "If-Match: $E2" -d '{"admin":"drain"}')
[ "$(code "$out")" = 200 ] && expect_has "$out" '"admin": "drain"' "PATCH through ns1 with ns2's ETag: 200" ||
	fail "PATCH: $out"
rev=$(jget "$out" '["change"]')
E=$(etag | tr -d '"')
[ "$rev" = "$(marker_rev)" ] && ok "the answer's change is the etcd revision ($rev)" ||
	fail "change $rev, etcd's last change $(marker_rev)"
[ "$E" = "$rev" ] && ok "and so is its ETag" || fail "ETag $E, change $rev"
wait_all 100 www.gslb.test "192.0.2.2" && ok "a is out of the answers of both instances" ||
	fail "drained: $(qn 1 www.gslb.test) / $(qn 2 www.gslb.test)"
expect_has "$(CTLN 2 --json node show a)" '"admin": "drain"' "gslbctl on ns2 sees a drained"
wait_until 10 same_gen && [ "$(gen 2)" -ge "$rev" ] && ok "ns2's generation reaches the change's revision" ||
	fail "ns2 at $(gen 2), change $rev"
# The cluster's log, read through ns2: the API's record from ns1.
log=$(CTLN 2 --json log --limit 5 | python3 -c '
import json, sys
recs = [r for r in json.load(sys.stdin)["records"] if r.get("what") == "node set a"]
print(json.dumps(recs[-1], indent=2) if recs else "")')
expect_has "$log" '"actor": "api:boss1"' "cluster log: actor api:NAME"
expect_has "$log" '"instance": "ns1"' "cluster log: from instance ns1"
expect_has "$log" '"user": "boss1"' "cluster log: the token's name is the user"
expect_has "$log" '"host": "127.0.0.1"' "cluster log: the client's address is the host"
expect_has "$log" "\"revision\": $rev" "cluster log: named by the revision"

# 3. A DELETE through ns1: the service goes from both instances.
[ -n "$(qn 2 alt.gslb.test)" ] && ok "alt answered before" || fail "alt: '$(qn 2 alt.gslb.test)'"
out=$(callI 1 "$AT1" DELETE /v1/services/alt.gslb.test)
[ "$(code "$out")" = 200 ] && expect_has "$out" '"what": "service del alt.gslb.test"' \
	"DELETE of a service through ns1: 200, gslbctl's words" || fail "DELETE: $out"
drev=$(jget "$out" '["change"]')
wait_all 100 alt.gslb.test "" && ok "alt answers nothing on both instances" ||
	fail "alt: $(qn 1 alt.gslb.test) / $(qn 2 alt.gslb.test)"
expect_not "$(CTLN 2 service list)" "alt.gslb.test" "gslbctl on ns2 no longer lists alt"
log=$(CTLN 2 --json log --limit 5 | python3 -c '
import json, sys
recs = [r for r in json.load(sys.stdin)["records"] if r.get("what") == "service del alt.gslb.test"]
print(json.dumps(recs[-1], indent=2) if recs else "")')
expect_has "$log" '"actor": "api:boss1"' "the delete is in the cluster's log as api:boss1"
expect_has "$log" "\"revision\": $drev" "named by the answer's change"
expect_has "$(ETCDCTL get --prefix /gslbd/log/ --print-value-only 2>/dev/null | grep 'service del alt')" \
	'"actor":"api:boss1"' "etcd's log record of the delete names api:boss1"

# 3b. Measurements pushed through ns1's API go into etcd's feed, as
# gslbctl's do, and so into ns2's store too.
mdump() { mdb_dump -p -s metrics "$T/ns$1/db" 2>/dev/null | grep -A1 '^ b$' | tail -1; }
out=$(callI 1 "$AT1" POST /v1/metrics "${J[@]}" -d '{"samples": [{"node": "b", "loss": 0.3, "rtt_ms": 45}]}')
[ "$(code "$out")" = 200 ] && expect_has "$out" '"pushed": 1' "POST /v1/metrics through ns1: 200, pushed 1" ||
	fail "metrics: $out"
mrev=$(jget "$out" '["revision"]')
[ "$mrev" -gt "$drev" ] 2>/dev/null && ok "named by its cluster revision ($mrev)" || fail "revision '$mrev' after $drev"
m_on() { mdump "$1" | grep -q '"rtt_ms":{"from":"push","time":[0-9]*,"value":45'; }
wait_until 10 m_on 2 && ok "ns2's store has b's rtt_ms from ns1's API" || fail "ns2: $(mdump 2)"
m_on 1 && ok "and so has ns1's" || fail "ns1: $(mdump 1)"

# 4. A stale If-Match is refused and writes nothing.
wait_until 10 same_gen
before=$(export_of 1)
m0=$(marker_rev)
out=$(callI 2 "$AT2" PATCH /v1/nodes/b "${J[@]}" -H "If-Match: \"$rev\"" -d '{"admin":"drain"}')
[ "$(code "$out")" = 412 ] && [ "$(errtext "$out")" = "If-Match \"$rev\": the table is at generation \"$(gen 2)\" now" ] &&
	ok "If-Match of the revision before the DELETE: 412, naming the current one" || fail "stale: $out"
out=$(callI 1 "$AT1" DELETE /v1/nodes/c -H 'If-Match: "1"')
[ "$(code "$out")" = 412 ] && ok "If-Match \"1\": 412" || fail "stale 1: $out"
[ "$(marker_rev)" = "$m0" ] && [ "$(export_of 1)" = "$before" ] && ok "nothing was written" ||
	fail "written: marker $(marker_rev) after $m0"
out=$(callI 2 "$AT2" DELETE /v1/nodes/c -H "If-Match: \"$(gen 2)\"")
[ "$(code "$out")" = 200 ] && ok "the current generation through ns2: the DELETE of c goes through" ||
	fail "current: $out"
wait_until 10 same_gen

# 5. etcd without a quorum, then stopped: 503, nothing written.
before=$(export_of 1)
E1=$(gen 1)
etcd_stop 2
etcd_stop 3
# Until e1 knows it is alone it may say only that the request failed;
# every try is refused all the same.
codes=""
for _ in $(tseq 10); do
	t0=$SECONDS
	out=$(callI 1 "$AT1" PATCH /v1/nodes/b "${J[@]}" -d '{"admin":"drain"}')
	codes="$codes $(code "$out")"
	grep -q "no quorum" <<<"$out" && break
	sleep 0.5
done
echo "    statuses:$codes; the last refused write took $((SECONDS - t0)) s"
[ -z "$(tr -d ' 503' <<<"$codes")" ] && ok "without a quorum every write is refused with 503" ||
	fail "statuses without a quorum:$codes"
expect_has "$(errtext "$out")" "^cluster: no quorum: 1 of 3 members answer \(e1\); nothing was written" \
	"no quorum: in the words of gslbctl, naming the member that answers"
etcd_stop 1
# ns1 refuses at once with what its cluster threads last found, "no
# quorum" until they find no member at all.
codes=""
for _ in $(tseq 20); do
	out=$(callI 1 "$AT1" DELETE "/v1/weights/www.gslb.test%7C*%7C*")
	codes="$codes $(code "$out")"
	grep -q "unreachable" <<<"$out" && break
	sleep 0.5
done
[ -z "$(tr -d ' 503' <<<"$codes")" ] && ok "etcd stopped: every write refused with 503 (${codes# })" ||
	fail "statuses with etcd stopped:$codes"
expect_has "$(errtext "$out")" "^cluster: etcd is unreachable: .*; nothing was written$" \
	"etcd stopped: the error says etcd is unreachable"
t0=$(date +%s%N)
callI 1 "$AT1" DELETE "/v1/weights/www.gslb.test%7C*%7C*" >/dev/null
echo "    a write refused while ns1 knows etcd is down: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
ctl=$(CTLN 1 node set b --admin drain 2>&1)
expect_has "$ctl" "^gslbctl: cluster: etcd is unreachable: .*; nothing was written$" \
	"gslbctl says the same of its write"
m0=$(mdump 1)
out=$(callI 1 "$AT1" POST /v1/metrics "${J[@]}" -d '{"samples": [{"node": "b", "rtt_ms": 77}]}')
[ "$(code "$out")" = 503 ] && expect_has "$(errtext "$out")" "^cluster: etcd is unreachable: .*; nothing was written$" \
	"etcd stopped: a metrics push refused with 503, in the same words" || fail "metrics, etcd down: $out"
[ "$(mdump 1)" = "$m0" ] && ok "and not stored locally either" || fail "stored: $(mdump 1)"
out=$(callI 1 "$RT1" GET /v1/nodes/b)
[ "$(code "$out")" = 200 ] && expect_has "$out" '"admin": "auto"' "reads go on from the local store, b untouched" ||
	fail "read while etcd is down: $out"
[ "$(gen 1)" = "$E1" ] && [ "$(export_of 1)" = "$before" ] && ok "ns1's table and generation unchanged" ||
	fail "ns1 changed: generation $(gen 1) after $E1"
expect_has "$(qn 1 www.gslb.test)" "192.0.2.2" "DNS answers throughout"
etcd_cluster_start || exit 1
# ns1 refuses at once while it knows etcd fails: until its lease thread
# and its watch reach etcd again.
reachable() { [ "$(mval "$(scrape 1)" gslbd_cluster_etcd_reachable)" = 1 ]; }
wait_until 20 reachable && ok "ns1 reaches etcd again" || fail "ns1 does not reach etcd"
wait_until 20 same_gen
[ "$(export_of 2)" = "$before" ] && ok "etcd back: nothing of the refused writes anywhere" ||
	fail "after the outage: $(diff <(echo "$before") <(export_of 2))"
out=$(callI 1 "$AT1" PATCH /v1/nodes/b "${J[@]}" -d '{"admin":"drain"}')
[ "$(code "$out")" = 200 ] && ok "etcd back: the write goes through" || fail "after: $out"
out=$(callI 1 "$AT1" PATCH /v1/nodes/b "${J[@]}" -d '{"admin":"auto"}')
wait_until 10 same_gen

# 6. Two writers racing on node b, each validating before the other
# writes: ns1 waits between its read and its write.
ns_stop 1
GSLBD_TEST_CLUSTER_WRITE_DELAY_MS=$(tscale 3)000 ns_start 1
wait_until 10 same_gen
callI 1 "$AT1" PATCH /v1/nodes/b "${J[@]}" -d '{"admin":"drain"}' >"$T/race1" &
slow=$!
sleep 1
out=$(callI 2 "$AT2" PATCH /v1/nodes/b "${J[@]}" -d '{"admin":"down"}')
[ "$(code "$out")" = 200 ] && ok "ns2's write, made while ns1's waits: 200" || fail "ns2: $out"
wait "$slow"
out1=$(cat "$T/race1")
[ "$(code "$out1")" = 409 ] && ok "ns1's write, validated before: 409" || fail "ns1: $out1"
RACE="cluster: the table was changed by someone else since it was read; nothing was written; retry"
[ "$(errtext "$out1")" = "$RACE" ] && ok "in gslbctl's words" || fail "text: $(errtext "$out1")"
wait_until 10 same_gen
expect_has "$(CTLN 1 --json node show b)" '"admin": "down"' "the winner's change stands"
# gslbctl against the API: gslbctl validates, waits, and loses.
(GSLBCTL_TEST_CLUSTER_DELAY_MS=$(tscale 3)000 CTLN 1 node set b --admin auto >"$T/race2" 2>&1; echo $? >"$T/race2.rc") &
slow=$!
ctl_in_delay "$slow" || fail "gslbctl did not reach its delay"
out=$(callI 2 "$AT2" PATCH /v1/nodes/b "${J[@]}" -d '{"admin":"drain"}')
[ "$(code "$out")" = 200 ] && ok "the API's write while gslbctl waits: 200" || fail "API: $out"
wait "$slow"
[ "$(cat "$T/race2.rc")" = 1 ] && [ "$(cat "$T/race2")" = "gslbctl: $RACE" ] &&
	ok "gslbctl loses with the same words, exit 1" || fail "gslbctl: rc $(cat "$T/race2.rc"): $(cat "$T/race2")"
wait_until 10 same_gen
expect_has "$(CTLN 2 --json node show b)" '"admin": "drain"' "the API's change stands"
finish
