#!/bin/bash
# The HTTP API's log and rollback in cluster mode, with a real 3-member
# etcd and 2 gslbd instances on loopback, each serving the API: GET
# /v1/log on ns2 answers the cluster's log, the same records gslbctl
# log --json gives, named by revision, with changes made through ns1's
# API and through gslbctl; POST /v1/rollback/REVISION through ns1 undoes
# one of them through etcd (S3-7), a dry run first that writes nothing,
# then for real: both instances answer with the undo and the cluster's
# log has it as api:NAME; a rollback refused by a guard, or of a
# revision the log lacks, in gslbctl's words; with etcd stopped, 503
# and nothing written (S0-10); etcd back, the rollback of gslbctl's
# change through the API brings back the table both started from; the
# steering engine's change undone by a pin.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/cluster_lib.sh"
. "$(dirname "$0")/api_lib.sh"
gslb_zone
for i in 1 2; do api_ns_conf "$i"; done
NSPID[3]=
etcd_cluster_start || exit 1
CTLN 1 service add www.gslb.test --ttl 60 --answers 2 >/dev/null
CTLN 1 node add a --addr 192.0.2.1 >/dev/null
CTLN 1 node add b --addr 192.0.2.2 >/dev/null
CTLN 1 weight set www.gslb.test a=10 b=10 >/dev/null
tok() { CTLN "$1" api token add "$2" --role "$3" | awk '/^token /{ print $3 }'; }
AT1=$(tok 1 boss1 admin)
OT1=$(tok 1 ops1 operate)
RT2=$(tok 2 reader2 read)
[ -n "$AT1" ] && [ -n "$OT1" ] && [ -n "$RT2" ] && ok "tokens on both instances" ||
	{ fail "tokens: '$AT1' '$OT1' '$RT2'"; exit 1; }
ns_start 1
ns_start 2
wait_all 100 www.gslb.test "192.0.2.1 192.0.2.2" && ok "start: both instances answer" ||
	fail "start: $(qn 1 www.gslb.test) / $(qn 2 www.gslb.test)"

init=$(export_of 1)
callI() { local i=$1; shift; U="https://127.0.0.1:$(AP "$i")" call "$@"; }
errtext() { tail -n +2 <<<"$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["error"])'; }
jget() { tail -n +2 <<<"$1" | python3 -c "import json, sys; print(json.load(sys.stdin)$2)"; }
marker_rev() {
	ETCDCTL get /gslbd/change -w json 2>/dev/null | python3 -c '
import json, sys
kvs = json.load(sys.stdin).get("kvs") or [{}]
print(kvs[0].get("mod_revision", 0))'
}
J=(-H 'Content-Type: application/json')

# 1. A change through ns1's API and one through gslbctl on ns1; ns2's
# GET /v1/log names both by their cluster revision.
out=$(callI 1 "$AT1" PATCH /v1/nodes/a "${J[@]}" -d '{"admin":"drain"}')
[ "$(code "$out")" = 200 ] && ok "PATCH of node a through ns1: 200" || fail "PATCH: $out"
r1=$(jget "$out" '["change"]')
CTLN 1 weight set www.gslb.test a=10 b=20 >/dev/null && ok "gslbctl weight set on ns1" || fail "weight set"
r2=$(marker_rev)
[ "$r2" -gt "$r1" ] 2>/dev/null && ok "gslbctl's change at revision $r2, after $r1" || fail "revisions '$r1' '$r2'"
out=$(callI 2 "$RT2" GET /v1/log)
[ "$(code "$out")" = 200 ] && ok "GET /v1/log on ns2 with a read token: 200" || fail "log: $out"
tail -n +2 <<<"$out" >"$T/apilog"
python3 - "$T/apilog" "$r1" "$r2" <<'PY' && ok "ns2's log: revision $r1 by api:boss1 from ns1, $r2 by gslbctl" || fail "ns2's log: $(cat "$T/apilog")"
import json, sys
recs = {r["id"]: r for r in json.load(open(sys.argv[1]))["changes"]}
a, g = recs.get(int(sys.argv[2])), recs.get(int(sys.argv[3]))
assert a and a["revision"] == a["id"] and a["actor"] == "api:boss1", a
assert a["what"] == "node set a" and a["instance"] == "ns1" and a["user"] == "boss1", a
assert g and g["actor"].startswith("gslbctl:") and g["what"].startswith("weight set www.gslb.test"), g
PY
CTLN 2 --json log >"$T/ctllog"
python3 - "$T/apilog" "$T/ctllog" <<'PY' && ok "GET /v1/log gives the records of gslbctl log --json, field for field" ||
import json, sys
api = json.load(open(sys.argv[1]))["changes"]
ctl = json.load(open(sys.argv[2]))["records"][-50:]
assert api and [r["id"] for r in api] == [r["id"] for r in ctl], ([r["id"] for r in api], [r["id"] for r in ctl])
for a, c in zip(api, ctl):
    # gslbctl adds the summary line and the time as a number.
    for k in set(a) | set(c):
        if k not in ("summary", "time", "time_unix"):
            assert a.get(k) == c.get(k), (a["id"], k, a.get(k), c.get(k))
PY
	fail "API's and gslbctl's logs differ: $(diff <(python3 -m json.tool "$T/apilog") <(python3 -m json.tool "$T/ctllog") | head -20)"

# 2. The rollback of revision r1 (node a drained) through ns1's API.
out=$(callI 1 "$OT1" POST "/v1/rollback/$r1")
[ "$(code "$out")" = 403 ] && ok "rollback with an operate token: 403" || fail "operate: $out"
before=$(export_of 1)
m0=$(marker_rev)
out=$(callI 1 "$AT1" POST "/v1/rollback/$r1?dry_run=1")
[ "$(code "$out")" = 200 ] && expect_has "$out" '"dry_run": true' "dry run: 200, dry_run true" || fail "dry run: $out"
[ "$(jget "$out" '["undoes"]')" = "$r1" ] && ok "the dry run undoes revision $r1" || fail "undoes: $out"
api_lines=$(jget "$out" '["changes"][0]["summary"]')
ctl_lines=$(CTLN 2 rollback --dry-run "$r1" 2>&1 | sed -n 's/^  //p')
[ -n "$api_lines" ] && [ "$api_lines" = "$ctl_lines" ] && ok "its undo in gslbctl rollback --dry-run's words ($api_lines)" ||
	fail "dry-run lines: API '$api_lines', gslbctl '$ctl_lines'"
[ "$(marker_rev)" = "$m0" ] && [ "$(export_of 1)" = "$before" ] && ok "the dry run wrote nothing" ||
	fail "dry run wrote: marker $(marker_rev) after $m0"
expect_has "$(qn 2 www.gslb.test)" "^192.0.2.2$" "a still out of ns2's answers"
out=$(callI 1 "$AT1" POST "/v1/rollback/$r1")
[ "$(code "$out")" = 200 ] && ok "rollback of revision $r1 through ns1: 200" || fail "rollback: $out"
rb=$(jget "$out" '["change"]')
[ "$(jget "$out" '["what"]')" = "rollback revision $r1" ] && ok "in gslbctl's words: rollback revision $r1" ||
	fail "what: $out"
[ "$rb" = "$(marker_rev)" ] && ok "the answer's change is the etcd revision of the rollback ($rb)" ||
	fail "change '$rb', etcd at $(marker_rev)"
wait_all 100 www.gslb.test "192.0.2.1 192.0.2.2" && ok "a is back in the answers of both instances" ||
	fail "after the rollback: $(qn 1 www.gslb.test) / $(qn 2 www.gslb.test)"
expect_has "$(CTLN 2 --json node show a)" '"admin": "auto"' "gslbctl on ns2 sees a back to auto"
CTLN 2 --json log >"$T/ctllog"
python3 - "$T/ctllog" "$rb" "$r1" <<'PY' && ok "gslbctl log on ns2: revision $rb by api:boss1 from ns1 undoes $r1" || fail "log: $(tail -c 1500 "$T/ctllog")"
import json, sys
recs = {r["id"]: r for r in json.load(open(sys.argv[1]))["records"]}
r = recs[int(sys.argv[2])]
assert r["actor"] == "api:boss1" and r["instance"] == "ns1", r
assert r["what"] == "rollback revision " + sys.argv[3] and r["undoes"] == int(sys.argv[3]), r
PY
out=$(callI 2 "$RT2" GET /v1/log)
expect_has "$out" "\"what\": \"rollback revision $r1\"" "and so does ns2's GET /v1/log"

# 3. Refused: the same rollback again (a guard of store/rollback.c), a
# revision the log lacks; in gslbctl's words, nothing written.
m0=$(marker_rev)
out=$(callI 1 "$AT1" POST "/v1/rollback/$r1")
ctl=$(CTLN 2 rollback "$r1" 2>&1)
[ "$(code "$out")" = 422 ] && ok "rollback of $r1 again: 422" || fail "again: $out"
[ "gslbctl: rollback: $(errtext "$out")" = "$ctl" ] && ok "gslbctl's text: $ctl" ||
	fail "API '$(errtext "$out")', gslbctl '$ctl'"
expect_has "$ctl" "^gslbctl: rollback: node a changed again after cluster revision $r1; " "the guard names the cluster revision"
out=$(callI 1 "$AT1" POST "/v1/rollback/$((rb + 100000))")
ctl=$(CTLN 2 rollback "$((rb + 100000))" 2>&1)
[ "$(code "$out")" = 404 ] && [ "gslbctl: rollback: $(errtext "$out")" = "$ctl" ] &&
	ok "a revision not in the log: 404, gslbctl's text ($ctl)" || fail "absent: $out / $ctl"
out=$(callI 1 "$AT1" POST "/v1/rollback/$r2" -H 'If-Match: "1"')
[ "$(code "$out")" = 412 ] && ok "a stale If-Match: 412" || fail "If-Match: $out"
[ "$(marker_rev)" = "$m0" ] && ok "nothing written by the refused rollbacks" ||
	fail "written: marker $(marker_rev) after $m0"

# 4. etcd stopped: the rollback and the log answer 503, nothing written.
before=$(export_of 1)
etcd_stop 1; etcd_stop 2; etcd_stop 3
codes=""
for _ in $(tseq 20); do
	out=$(callI 1 "$AT1" POST "/v1/rollback/$r2")
	codes="$codes $(code "$out")"
	grep -q "unreachable" <<<"$out" && break
	sleep 0.5
done
[ -z "$(tr -d ' 503' <<<"$codes")" ] && ok "etcd stopped: every rollback refused with 503 (${codes# })" ||
	fail "statuses with etcd stopped:$codes"
expect_has "$(errtext "$out")" "^cluster: etcd is unreachable: .*; nothing was written$" \
	"the error says etcd is unreachable and nothing was written"
out=$(callI 1 "$AT1" POST "/v1/rollback/$r2?dry_run=1")
[ "$(code "$out")" = 503 ] && ok "a dry run too: 503" || fail "dry run, etcd down: $out"
out=$(callI 2 "$RT2" GET /v1/log)
[ "$(code "$out")" = 503 ] && expect_has "$(errtext "$out")" "^cluster: .*; the cluster's change log cannot be read$" \
	"GET /v1/log on ns2: 503, the log cannot be read" || fail "log, etcd down: $out"
[ "$(export_of 1)" = "$before" ] && ok "ns1's table unchanged" || fail "ns1 changed"
expect_has "$(qn 1 www.gslb.test)" "192.0.2.1 192.0.2.2" "DNS answers throughout"
etcd_cluster_start || exit 1
[ "$(marker_rev)" = "$m0" ] && ok "etcd back: no change in etcd either" || fail "etcd: marker $(marker_rev) after $m0"

# 5. etcd back: the rollback of gslbctl's change (revision r2) through
# the API; with the first one undone too, the table is the initial one.
reachable() { [ "$(mval "$(scrape 1)" gslbd_cluster_etcd_reachable)" = 1 ]; }
wait_until 20 reachable && ok "ns1 reaches etcd again" || fail "ns1 does not reach etcd"
out=$(callI 1 "$AT1" POST "/v1/rollback/$r2")
[ "$(code "$out")" = 200 ] && [ "$(jget "$out" '["what"]')" = "rollback revision $r2" ] &&
	ok "rollback of gslbctl's revision $r2 through ns1: 200" || fail "rollback of $r2: $out"
rb2=$(jget "$out" '["change"]')
on2() { [ "$(export_of 2)" = "$init" ]; }
wait_until 10 on2 && ok "ns2's table is the initial one again" ||
	fail "ns2: $(diff <(echo "$init") <(export_of 2))"
expect_has "$(CTLN 2 log --limit 1)" "^ *$rb2 .* api:boss1 +rollback revision $r2: weight set www.gslb.test \*/\* a=10 b=10$" \
	"gslbctl log on ns2 prints it under revision $rb2"

# 6. A change of shares by the steering engine, named by its revision,
# is undone by pinning the row (S3-8): a record of the engine's put in
# the cluster's log by hand, whose row was as the table has it now (the
# one gslbctl's change r2 found).
CTLN 2 --json log >"$T/ctllog"
python3 - "$T/ctllog" "$r2" >"$T/steer.json" <<'PY'
import json, sys
rec = {r["id"]: r for r in json.load(open(sys.argv[1]))["records"]}[int(sys.argv[2])]
c = rec["changes"][0]
after = dict(c["before"], steer={"shares": {"a": 9000, "b": 1000}})
print(json.dumps({"time": rec["time"], "actor": "gslbd:steer", "what": "steer " + c["key"],
                  "changes": [{"kind": "weight", "key": c["key"], "before": c["before"], "after": after}]}))
PY
ETCDCTL put /gslbd/log/00000000steer "$(cat "$T/steer.json")" >/dev/null && ok "an engine's record put in the cluster's log" ||
	fail "put: $(cat "$T/steer.json")"
sr=$(ETCDCTL get /gslbd/log/00000000steer -w json | python3 -c 'import json, sys; print(json.load(sys.stdin)["kvs"][0]["create_revision"])')
m0=$(marker_rev)
out=$(callI 1 "$AT1" POST "/v1/rollback/$sr?dry_run=1")
[ "$(code "$out")" = 200 ] && expect_has "$out" '"pins": \{' "dry rollback of the engine's revision $sr: the pins" ||
	fail "dry pin: $out"
[ "$(marker_rev)" = "$m0" ] && ok "the dry run wrote nothing" || fail "dry pin wrote: $(marker_rev) after $m0"
out=$(callI 1 "$AT1" POST "/v1/rollback/$sr")
[ "$(code "$out")" = 200 ] && [ "$(jget "$out" '["what"]')" = "rollback $sr: steering pinned" ] &&
	ok "rollback of revision $sr through ns1: gslbctl's words, steering pinned" || fail "pin: $out"
[ "$(jget "$out" '["change"]')" = "$(marker_rev)" ] && ok "written to etcd (revision $(marker_rev))" ||
	fail "change $(jget "$out" '["change"]'), etcd at $(marker_rev)"
wrow() { mdb_dump -p -s weights "$T/ns$1/db" 2>/dev/null | grep -A1 '^ www.gslb.test|\*|\*$' | tail -1; }
pinned() { wrow 2 | grep -q "\"pin\":{\"at\":[0-9]*,\"by\":\"boss1\",\"change\":$sr}"; }
wait_until 10 pinned && ok "ns2's row is pinned by boss1 for revision $sr" || fail "ns2: $(wrow 2)"
finish
