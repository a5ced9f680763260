#!/bin/bash
# The HTTP API's deletes against the real daemon over TLS, with curl:
# each kind (service, node, weight row), the role they need, If-Match,
# gslbctl's deletion guards with the same texts (store/edit.h), the
# audit's user and host, that a refused delete changes nothing, and that
# gslbctl sees the API's change and the API gslbctl's.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/api_lib.sh"
gslb_zone
write_conf gslb.test z.zone "api:
  listen: [ \"127.0.0.1@$APORT\" ]
  tls-cert: api.crt
  tls-key: api.key
  rate: 1000"

for s in www alt old; do CTL service add $s.gslb.test >/dev/null; done
for n in 1 2 3; do CTL node add n$n --addr 192.0.2.$n >/dev/null; done
CTL weight set www.gslb.test n1=1 n2=1 >/dev/null
CTL weight set alt.gslb.test n3=1 >/dev/null
CTL weight set old.gslb.test n2=1 >/dev/null
RT=$(tok reader --role read)
OT=$(tok deployer --role operate)
AT=$(tok boss --role admin)

gslbd_start
wait_tcp "$APORT" 2>/dev/null || true
# same_text API-OUTPUT MESSAGE GSLBCTL-ARGS...: the API's error is
# gslbctl's, word for word.
same_text() {
	local api=$1 msg=$2
	shift 2
	local ctl
	ctl=$(CTL "$@" 2>&1) && { fail "$msg: gslbctl $* succeeded"; return; }
	[ "gslbctl: $(errtext "$api")" = "$ctl" ] && ok "$msg" ||
		fail "$msg: API '$(errtext "$api")', gslbctl '$ctl'"
}
ROW_WWW='/v1/weights/www.gslb.test%7C*%7C*'
ROW_ALT='/v1/weights/alt.gslb.test%7C*%7C*'

# Refused: nothing changes.
before=$(CTL export)
G0=$(gen_now)
out=$(call "$RT" DELETE /v1/nodes/n1)
[ "$(code "$out")" = 403 ] && expect_has "$out" "role read: it may only read" "read token deleting: 403" || fail "read: $out"
out=$(call "$OT" DELETE /v1/nodes/n1)
[ "$(code "$out")" = 403 ] && expect_has "$out" "role operate: this change needs role admin" \
	"operate token deleting: 403" || fail "operate: $out"
out=$(call "$AT" DELETE /v1/nodes/n1)
[ "$(code "$out")" = 422 ] && expect_has "$out" 'node n1 is used by weight row\(s\) .*www.gslb.test\|\*\|\*.*; remove it there first' \
	"a node still in a row: 422 naming the row" || fail "guard: $out"
expect_has "$out" '"field": "id"' "the guard names the id"
same_text "$out" "gslbctl refuses the node's delete with the same text" node del n1
out=$(call "$AT" DELETE /v1/nodes/ghost)
[ "$(code "$out")" = 404 ] && ok "DELETE of an unknown node: 404" || fail "ghost: $out"
same_text "$out" "gslbctl: the same text for the unknown node" node del ghost
out=$(call "$AT" DELETE /v1/services/nope.gslb.test)
[ "$(code "$out")" = 404 ] && ok "DELETE of an unknown service: 404" || fail "nope: $out"
same_text "$out" "gslbctl: the same text for the unknown service" service del nope.gslb.test
out=$(call "$AT" DELETE '/v1/weights/www.gslb.test%7C*%7Cctcc')
[ "$(code "$out")" = 404 ] && ok "DELETE of an absent row: 404" || fail "row: $out"
same_text "$out" "gslbctl: the same text for the absent row" weight del www.gslb.test --isp ctcc
out=$(call "$AT" DELETE /v1/weights/www.gslb.test)
[ "$(code "$out")" = 404 ] && expect_has "$out" "not a row's key \(SERVICE\|REGION\|ISP\)" \
	"a key that is no row's: 404 saying the shape" || fail "key: $out"
out=$(call "$AT" DELETE "$ROW_WWW" -H 'If-Match: "1"')
[ "$(code "$out")" = 412 ] && expect_has "$out" "the table is at generation" "stale If-Match: 412" || fail "412: $out"
out=$(call "$AT" DELETE /v1/status)
[ "$(code "$out")" = 405 ] && ok "DELETE of something else: 405" || fail "status: $out"
out=$(call "$AT" DELETE /v1/nodes/n1/x)
[ "$(code "$out")" = 405 ] && ok "DELETE below an object: 405" || fail "n1/x: $out"
out=$(call "$AT" POST /v1/nodes/n1 -d "{}")
[ "$(code "$out")" = 405 ] && ok "POST to a node: 405" || fail "POST: $out"
[ "$(CTL export)" = "$before" ] && ok "no refused delete changed the table" ||
	fail "changed: $(diff <(echo "$before") <(CTL export))"
[ "$(gen_now)" = "$G0" ] && ok "nor the generation" || fail "generation moved: $(gen_now)"

# A row, then the node it held.
out=$(call "$AT" DELETE "$ROW_ALT" -H "If-Match: $G0")
[ "$(code "$out")" = 200 ] && expect_has "$out" '"what": "weight del alt.gslb.test region=\* isp=\*"' \
	"DELETE of a row with If-Match: 200, gslbctl's words" || fail "row: $out"
G1=$(etag)
[ -n "$G1" ] && [ "$G1" != "$G0" ] && ok "the answer carries the new generation" || fail "ETag $G1 after $G0"
[ "$(gen_now)" = "$G1" ] && ok "status agrees with that generation" || fail "status $(gen_now), answer $G1"
expect_not "$(CTL weight list)" "alt.gslb.test" "gslbctl no longer lists alt's row"
rec=$(last_rec)
expect_has "$rec" '"user": "boss"' "audit: the token's name is the user"
expect_has "$rec" '"host": "127.0.0.1"' "audit: the client's address is the host"
expect_has "$rec" '"actor": "api:boss"' "audit: the actor is api:NAME"
out=$(call "$AT" DELETE /v1/nodes/n3)
[ "$(code "$out")" = 200 ] && ok "the node out of every row: deleted" || fail "n3: $out"
out=$(CTL node show n3 2>&1) && fail "gslbctl still shows n3" ||
	expect_has "$out" "node n3 does not exist" "gslbctl sees n3 gone"
G2=$(gen_now)
out=$(call "$AT" DELETE /v1/nodes/n3)
[ "$(code "$out")" = 404 ] && ok "the same DELETE again: 404" || fail "again: $out"
[ "$(gen_now)" = "$G2" ] && ok "and it changed nothing" || fail "generation moved on a second DELETE"

# A service goes with its rows, as with gslbctl service del.
out=$(call "$AT" DELETE /v1/services/old.gslb.test)
[ "$(code "$out")" = 200 ] && ok "DELETE of a service: 200" || fail "old: $out"
out=$(call "$RT" GET /v1/weights)
expect_not "$out" "old.gslb.test" "its row went with it"
expect_not "$(CTL service list)" "old.gslb.test" "gslbctl no longer lists the service"
expect_has "$(last_rec)" '"what": "service del old.gslb.test"' "audit: the service's delete"

# gslbctl's change seen by the API, and the API's delete of it by gslbctl.
CTL node add n9 --addr 192.0.2.9 >/dev/null
out=$(call "$RT" GET /v1/nodes/n9)
[ "$(code "$out")" = 200 ] && ok "the API sees gslbctl's new node" || fail "n9: $out"
G3=$(etag)
out=$(call "$AT" DELETE /v1/nodes/n9 -H "If-Match: $G3")
[ "$(code "$out")" = 200 ] && ok "and deletes it at that generation" || fail "n9 del: $out"
expect_not "$(CTL node list)" "^n9 " "gslbctl sees n9 gone"

expect_has "$(q www.gslb.test A +short)" "192.0.2.[12]" "DNS answers www throughout"
expect_has "$(CTL node list)" "^n1 " "n1, still in www's row, is kept"
finish
