#!/bin/bash
# The HTTP API's creating and replacing writes against the real daemon
# over TLS, with curl: PUT of each kind (create 201, replace 200, the
# same PUT again changes nothing), the path's id against the body's,
# POST /v1/apply with and without dry_run, and that both refuse what
# gslbctl apply refuses with the same text, word for word (the checks of
# store/apply.h): unknown keys, wrong types, bad and special addresses,
# the wrong version, a row naming a node the document drops.  Roles,
# If-Match, the audit's user and host, and the DNS answers after a PUT.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/api_lib.sh"
gslb_zone
geo_two_regions
write_conf gslb.test z.zone "api:
  listen: [ \"127.0.0.1@$APORT\" ]
  tls-cert: api.crt
  tls-key: api.key
  rate: 1000
geoip:
  database: geo.mmdb"

CTL service add www.gslb.test >/dev/null
for n in 1 2; do CTL node add n$n --addr 192.0.2.$n >/dev/null; done
CTL weight set www.gslb.test n1=1 >/dev/null
RT=$(tok reader --role read)
OT=$(tok deployer --role operate)
AT=$(tok boss --role admin)

gslbd_start
wait_tcp "$APORT" 2>/dev/null || true
body() { tail -n +2 <<<"$1"; }
# jget OUTPUT EXPR: a value of the answer's JSON (j), printed as JSON.
jget() { body "$1" | python3 -c 'import json, sys; j = json.load(sys.stdin); print(json.dumps(eval(sys.argv[1]), sort_keys=True))' "$2"; }
# same_apply API-OUTPUT MESSAGE DOCUMENT: gslbctl apply of DOCUMENT, as a
# file named body, fails with the API's error, word for word.
same_apply() {
	local api=$1 msg=$2 ctl
	printf '%s\n' "$3" >"$T/body"
	ctl=$(cd "$T" && CTL apply body 2>&1) && { fail "$msg: gslbctl apply succeeded"; return; }
	[ "gslbctl: $(errtext "$api")" = "$ctl" ] && ok "$msg" ||
		fail "$msg: API '$(errtext "$api")', gslbctl '$ctl'"
}
ROW_WWW='/v1/weights/www.gslb.test%7C*%7C*'
ROW_NEW='/v1/weights/new.gslb.test%7C*%7C*'
SVC='{"name": "new.gslb.test", "ttl": 60, "short_ttl": 5, "answers": 1}'
N3='{"id": "n3", "addrs": ["192.0.2.3"], "region": "*", "isp": "*"}'

# Refused by role or If-Match: nothing changes.
before=$(CTL export)
G0=$(gen_now)
for t in RT OT; do
	out=$(call "${!t}" PUT /v1/services/new.gslb.test -d "$SVC")
	[ "$(code "$out")" = 403 ] && ok "$t: PUT refused (403)" || fail "$t PUT: $out"
	out=$(call "${!t}" POST /v1/apply -d "$before")
	[ "$(code "$out")" = 403 ] && ok "$t: apply refused (403)" || fail "$t apply: $out"
	out=$(call "${!t}" POST '/v1/apply?dry_run=1' -d "$before")
	[ "$(code "$out")" = 403 ] && ok "$t: a dry run too needs admin (403)" || fail "$t dry: $out"
done
expect_has "$(call "$OT" PUT /v1/nodes/n3 -d "$N3")" "this change needs role admin" \
	"operate: the reason is the role"
out=$(call "$AT" PUT /v1/services/new.gslb.test -d "$SVC" -H 'If-Match: "1"')
[ "$(code "$out")" = 412 ] && expect_has "$out" "the table is at generation" "PUT, stale If-Match: 412" ||
	fail "PUT 412: $out"
out=$(call "$AT" POST /v1/apply -d "$before" -H 'If-Match: "1"')
[ "$(code "$out")" = 412 ] && ok "apply, stale If-Match: 412" || fail "apply 412: $out"
out=$(call "$AT" GET /v1/apply)
[ "$(code "$out")" = 405 ] && ok "GET /v1/apply: 405" || fail "GET apply: $out"
out=$(call "$AT" POST '/v1/apply?dry_run=maybe' -d "$before")
[ "$(code "$out")" = 400 ] && expect_has "$out" '"field": "dry_run"' "dry_run=maybe: 400 naming it" ||
	fail "dry_run=maybe: $out"

# Bad input: 400 naming the field, gslbctl apply's text word for word.
out=$(call "$AT" PUT /v1/nodes/n3 -d '{"id": "n4", "addrs": ["192.0.2.4"]}')
[ "$(code "$out")" = 400 ] && expect_has "$out" '"field": "id"' "id of the body not the path's: 400 naming id" ||
	fail "mismatch: $out"
expect_has "$out" "the path names node n3, the body n4" "the text names both"
out=$(call "$AT" PUT /v1/services/www.gslb.test -d "$SVC")
[ "$(code "$out")" = 400 ] && expect_has "$out" '"field": "name"' "a service's name not the path's: 400" ||
	fail "svc mismatch: $out"
out=$(call "$AT" PUT "$ROW_WWW" -d '{"service": "www.gslb.test", "region": "cn-bj", "weights": {"n1": 1}}')
[ "$(code "$out")" = 400 ] && expect_has "$out" '"field": "region"' "a row's region not the path's: 400 naming region" ||
	fail "row mismatch: $out"
out=$(call "$AT" PUT /v1/nodes/n5 -d '{"id": "n5", "adress": ["192.0.2.5"]}')
[ "$(code "$out")" = 400 ] && expect_has "$out" '"field": "adress"' "unknown key: 400 naming it" ||
	fail "unknown key: $out"
same_apply "$out" "unknown key: gslbctl apply's text" '{"version": 1, "nodes": [{"id": "n5", "adress": ["192.0.2.5"]}]}'
out=$(call "$AT" PUT /v1/services/bad.gslb.test -d '{"name": "bad.gslb.test", "ttl": "sixty"}')
[ "$(code "$out")" = 400 ] && expect_has "$out" '"field": "ttl"' "ttl of the wrong type: 400 naming ttl" ||
	fail "type: $out"
same_apply "$out" "wrong type: gslbctl apply's text" '{"version": 1, "services": [{"name": "bad.gslb.test", "ttl": "sixty"}]}'
out=$(call "$AT" PUT /v1/nodes/n5 -d '{"id": "n5", "addrs": ["192.0.2.300"]}')
[ "$(code "$out")" = 400 ] && expect_has "$out" '"field": "addrs"' "a bad address: 400 naming addrs" ||
	fail "bad addr: $out"
same_apply "$out" "bad address: gslbctl apply's text" '{"version": 1, "nodes": [{"id": "n5", "addrs": ["192.0.2.300"]}]}'
out=$(call "$AT" PUT /v1/nodes/n5 -d '{"id": "n5", "addrs": ["127.0.0.1"]}')
[ "$(code "$out")" = 400 ] && expect_has "$out" "which no client can use" "a special address: 400" ||
	fail "special: $out"
same_apply "$out" "special address: gslbctl apply's text" '{"version": 1, "nodes": [{"id": "n5", "addrs": ["127.0.0.1"]}]}'
out=$(call "$AT" PUT /v1/nodes/n6 -d '{"id": "n6", "addrs": ["192.0.2.6"], "region": "cn-bjj"}')
[ "$(code "$out")" = 400 ] && expect_has "$out" '"field": "region"' "a region no client is in: 400 naming region" ||
	fail "area: $out"
expect_has "$out" "did you mean cn-bj\\?" "with the GeoIP database's nearest name"
same_apply "$out" "that region: gslbctl apply's text" '{"version": 1, "nodes": [{"id": "n6", "addrs": ["192.0.2.6"], "region": "cn-bjj"}]}'
out=$(call "$AT" PUT /v1/services/out.example -d '{"name": "out.example"}')
[ "$(code "$out")" = 400 ] && expect_has "$out" "is outside our zones" "a service outside the zones: 400" ||
	fail "zone: $out"
out=$(call "$AT" PUT "$ROW_NEW" -d '{"weights": {"n1": 1}}')
[ "$(code "$out")" = 422 ] && expect_has "$out" "service new.gslb.test is not in the file" \
	"a row of a service the store lacks: 422" || fail "row ref: $out"
out=$(call "$AT" PUT "$ROW_WWW" -d '{"weights": {"ghost": 1}}')
[ "$(code "$out")" = 422 ] && expect_has "$out" "unknown node 'ghost'" "a row naming an unknown node: 422" ||
	fail "node ref: $out"
out=$(call "$AT" PUT /v1/nodes/n5 -d '[1]')
[ "$(code "$out")" = 400 ] && ok "a body not an object: 400" || fail "array: $out"
# The same checks for a whole document.
doc_with() { python3 -c "import json, sys; d = json.loads(sys.argv[1]); $2; print(json.dumps(d))" "$before"; }
v2=$(doc_with "" 'd["version"] = 2')
out=$(call "$AT" POST /v1/apply -d "$v2")
[ "$(code "$out")" = 400 ] && expect_has "$out" '"field": "version"' "apply, version 2: 400 naming version" ||
	fail "version: $out"
same_apply "$out" "version: gslbctl apply's text" "$v2"
drop1=$(doc_with "" 'd["nodes"] = [n for n in d["nodes"] if n["id"] != "n1"]')
out=$(call "$AT" POST /v1/apply -d "$drop1")
[ "$(code "$out")" = 422 ] && expect_has "$out" "unknown node 'n1'; nothing was changed" \
	"apply dropping a node a row still names: 422" || fail "guard: $out"
same_apply "$out" "that guard: gslbctl apply's text" "$drop1"
bad=$(doc_with "" 'd["nodes"][0]["addrs"] = ["224.0.0.1"]')
out=$(call "$AT" POST /v1/apply -d "$bad")
[ "$(code "$out")" = 400 ] && ok "apply with a multicast address: 400" || fail "apply private: $out"
same_apply "$out" "that address: gslbctl apply's text" "$bad"
[ "$(CTL export)" = "$before" ] && ok "nothing refused changed the table" ||
	fail "changed: $(diff <(echo "$before") <(CTL export))"
[ "$(gen_now)" = "$G0" ] && ok "nor the generation" || fail "generation moved: $(gen_now)"

# PUT: create, the same again, replace; each kind.
out=$(call "$AT" PUT /v1/services/new.gslb.test -d "$SVC")
[ "$(code "$out")" = 201 ] && ok "PUT of a new service: 201" || fail "create svc: $out"
expect_has "$out" '"what": "service add new.gslb.test"' "in gslbctl's words"
G1=$(etag)
[ -n "$G1" ] && [ "$G1" != "$G0" ] && ok "the answer carries the new generation" || fail "ETag $G1 after $G0"
rec=$(last_rec)
expect_has "$rec" '"actor": "api:boss"' "audit: the actor is api:NAME"
expect_has "$rec" '"host": "127.0.0.1"' "audit: the client's address is the host"
got=$(call "$RT" GET /v1/services/new.gslb.test)
put=$(call "$AT" PUT /v1/services/new.gslb.test -d "$(body "$got")")
[ "$(code "$put")" = 200 ] && [ "$(jget "$put" 'j["change"]')" = null ] &&
	ok "PUT of what GET gives: 200, change null" || fail "idempotent: $put"
[ "$(gen_now)" = "$G1" ] && ok "and the generation stays" || fail "generation moved on the same PUT"
out=$(call "$AT" PUT /v1/services/new.gslb.test -d "$SVC")
[ "$(jget "$out" 'j["change"]')" = null ] && ok "the first PUT's body again: no change either" || fail "again: $out"
out=$(call "$AT" PUT /v1/services/NEW.gslb.test. -d '{"name": "new.gslb.test", "ttl": 120, "short_ttl": 5}' -H "If-Match: $G1")
[ "$(code "$out")" = 200 ] && expect_has "$out" '"what": "service set new.gslb.test"' \
	"replacing (the name in any case), with If-Match: 200" || fail "replace: $out"
[ "$(jget "$out" 'j["diff"]["changed"]["services"]')" = '["new.gslb.test"]' ] &&
	ok "the diff names the service changed" || fail "diff: $out"
expect_has "$(CTL --json service show new.gslb.test)" '"ttl": 120' "gslbctl sees the new ttl"
out=$(call "$AT" PUT /v1/nodes/n3 -d "$N3")
[ "$(code "$out")" = 201 ] && ok "PUT of a new node: 201" || fail "n3: $out"
out=$(call "$AT" PUT /v1/nodes/n3 -d '{"addrs": ["192.0.2.33"], "region": "cn-gz", "isp": "ctcc"}')
[ "$(code "$out")" = 200 ] && [ "$(jget "$out" 'j["node"]["addrs"]')" = '["192.0.2.33"]' ] &&
	ok "replacing it, the id from the path: 200" || fail "n3 replace: $out"
[ "$(jget "$out" 'j["warnings"]')" = '[]' ] && ok "a region the GeoIP database gives: no warning" ||
	fail "warnings: $out"
got=$(call "$RT" GET /v1/nodes/n3)
out=$(call "$AT" PUT /v1/nodes/n3 -d "$(body "$got")")
[ "$(jget "$out" 'j["change"]')" = null ] && ok "the node as GET gives it: no change" || fail "n3 again: $out"
out=$(call "$AT" PUT "$ROW_NEW" -d '{"service": "new.gslb.test", "region": "*", "isp": "*", "weights": {"n3": 1}}')
[ "$(code "$out")" = 201 ] && expect_has "$out" '"what": "weight set new.gslb.test region=\* isp=\*"' \
	"PUT of a new row: 201, gslbctl's words" || fail "row: $out"
expect_has "$(q new.gslb.test A +short)" "^192\.0\.2\.33$" "DNS answers the new service with the new node"
expect_has "$(q www.gslb.test A +short)" "^192\.0\.2\.1$" "www still answers n1"
out=$(call "$AT" PUT "$ROW_WWW" -d '{"weights": {"n2": 1}}')
[ "$(code "$out")" = 200 ] && ok "replacing www's row: 200" || fail "www row: $out"
expect_has "$(q www.gslb.test A +short)" "^192\.0\.2\.2$" "DNS answers www with n2 after the PUT"
got=$(call "$RT" GET "$ROW_WWW")
out=$(call "$AT" PUT "$ROW_WWW" -d "$(body "$got")")
[ "$(jget "$out" 'j["change"]')" = null ] && ok "the row as GET gives it: no change" || fail "row again: $out"

# POST /v1/apply: dry run, apply, the same again, the delete guard.
now=$(CTL export)
want=$(python3 -c 'import json, sys; d = json.loads(sys.argv[1]); d["services"] = [dict(s, ttl=90) if s["name"] == "www.gslb.test" else s for s in d["services"]]; print(json.dumps(d))' "$now")
G2=$(gen_now)
out=$(call "$AT" POST '/v1/apply?dry_run=1' -d "$want")
[ "$(code "$out")" = 200 ] && [ "$(jget "$out" 'j["diff"]["changed"]')" = '{"nodes": [], "services": ["www.gslb.test"], "weights": []}' ] &&
	ok "a dry run answers the diff" || fail "dry: $out"
[ "$(jget "$out" 'j["change"]')" = null ] && ok "and no change" || fail "dry change: $out"
[ "$(gen_now)" = "$G2" ] && [ "$(CTL export)" = "$now" ] && ok "a dry run writes nothing" ||
	fail "the dry run wrote"
out=$(call "$AT" POST /v1/apply -d "$want" -H "If-Match: $G2")
[ "$(code "$out")" = 200 ] && expect_has "$out" '"what": "apply body \(\+0 ~1 -0\)"' \
	"apply: 200, in gslbctl apply's words" || fail "apply: $out"
[ "$(jget "$out" 'j["change"]')" != null ] && ok "with a change id" || fail "no change id: $out"
expect_has "$(CTL --json service show www.gslb.test)" '"ttl": 90' "gslbctl sees what the apply wrote"
rec=$(last_rec)
expect_has "$rec" '"actor": "api:boss"' "the apply's audit: api:NAME"
expect_has "$rec" '"host": "127.0.0.1"' "the apply's audit: the client's host"
G3=$(gen_now)
out=$(call "$AT" POST /v1/apply -d "$want")
[ "$(code "$out")" = 200 ] && [ "$(jget "$out" 'j["change"]')" = null ] && [ "$(gen_now)" = "$G3" ] &&
	ok "the same document again: no change" || fail "apply again: $out"
nosvc=$(python3 -c 'import json, sys; d = json.loads(sys.argv[1]); d["services"] = [s for s in d["services"] if s["name"] != "new.gslb.test"]; d["weights"] = [w for w in d["weights"] if w["service"] != "new.gslb.test"]; print(json.dumps(d))' "$want")
out=$(call "$AT" POST /v1/apply -d "$nosvc")
[ "$(code "$out")" = 422 ] && expect_has "$out" "would delete service new.gslb.test and 1 of 2 weight rows" \
	"deleting a service needs force: 422" || fail "force: $out"
[ "$(gen_now)" = "$G3" ] && ok "and writes nothing" || fail "the refused apply wrote"
out=$(call "$AT" POST '/v1/apply?force=1' -d "$nosvc")
[ "$(code "$out")" = 200 ] && [ "$(jget "$out" 'j["diff"]["removed"]["services"]')" = '["new.gslb.test"]' ] &&
	ok "with force=1: applied, the diff names what went" || fail "forced: $out"
expect_not "$(CTL service list)" "new.gslb.test" "gslbctl no longer lists the service"
finish
