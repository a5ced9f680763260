#!/bin/bash
# The HTTP API against the real daemon, over TLS with a certificate made
# here, with curl: every endpoint, the roles, If-Match, the audit's user
# and host, and each kind of bad input (4xx with a JSON error naming the
# field or reason, never 5xx, nothing written), while DNS answers go on.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/api_lib.sh"
gslb_zone
API_YAML="api:
  listen: [ \"127.0.0.1@$APORT\" ]
  tls-cert: api.crt
  tls-key: api.key
  max-body: 4096
  rate: 1000"
write_conf gslb.test z.zone "$API_YAML"

# The configuration check: no clear text off loopback, cert and key together.
cp "$T/gslbd.conf" "$T/good.conf"
write_conf gslb.test z.zone "api:
  listen: [ \"192.0.2.1@$APORT\" ]"
out=$("$GSLBD" -c "$T/gslbd.conf" --check 2>&1) && fail "non-loopback without TLS accepted" ||
	expect_has "$out" "192.0.2.1@$APORT is not a loopback address: set tls-cert and tls-key" \
		"check: a non-loopback listen without TLS is refused"
write_conf gslb.test z.zone "api:
  tls-cert: api.crt"
out=$("$GSLBD" -c "$T/gslbd.conf" --check 2>&1) && fail "cert without key accepted" ||
	expect_has "$out" "tls-cert and tls-key go together" "check: tls-cert needs tls-key"
write_conf gslb.test z.zone "api:
  rate: 0"
out=$("$GSLBD" -c "$T/gslbd.conf" --check 2>&1) && fail "rate 0 accepted" ||
	expect_has "$out" "api.rate|rate" "check: rate 0 is out of range"
write_conf gslb.test z.zone "api:
  lisen: x"
out=$("$GSLBD" -c "$T/gslbd.conf" --check 2>&1) && fail "unknown api key accepted" ||
	expect_has "$out" "lisen" "check: an unknown api key is named"
cp "$T/good.conf" "$T/gslbd.conf"
out=$("$GSLBD" -c "$T/gslbd.conf" --check 2>&1) && ok "check: the TLS api section passes" ||
	fail "check of the good configuration: $out"

CTL service add www.gslb.test >/dev/null
CTL node add n1 --addr 192.0.2.1 >/dev/null
CTL node add n2 --addr 192.0.2.2 >/dev/null
CTL weight set www.gslb.test n1=1 n2=1 >/dev/null

# Tokens: shown once, only the hash stored.
RT=$(tok reader --role read)
OT=$(tok deployer --role operate)
AT=$(tok boss --role admin)
XT=$(tok brief --role admin --expires 1s)
VT=$(tok gone --role read)
[[ $RT =~ ^gslbd_[0-9a-f]{64}$ ]] && ok "token add prints a token" || fail "token: '$RT'"
[ "$RT" != "$OT" ] && ok "tokens differ" || fail "same token twice"
grep -rqa "$RT" "$T/db" && fail "the token itself is in the store" || ok "the store holds no token in clear"
# --json: one document, the change and the token together.
out=$(CTL --json api token add piped --role read 2>/dev/null)
if python3 -c 'import json, sys; d = json.loads(sys.stdin.read()); assert d["name"] == "piped" and d["token"].startswith("gslbd_") and d["change"] > 0' <<<"$out"; then
	ok "token add --json: one document with the token and the change"
else
	fail "token add --json: one document with the token and the change: $out"
fi
out=$(CTL api token add reader --role read 2>&1) && fail "a second token of one name" ||
	expect_has "$out" "exists; revoke it first" "token add: a name in use is refused"
out=$(CTL api token add x --role root 2>&1) && fail "role root accepted" ||
	expect_has "$out" "--role root: not a valid choice" "token add: unknown role refused"
out=$(CTL api token add x --role read --expires soon 2>&1) && fail "--expires soon accepted" ||
	expect_has "$out" "--expires soon: a duration" "token add: bad --expires refused"
CTL api token revoke gone >/dev/null
out=$(CTL api token list)
expect_has "$out" "^reader +read " "token list: reader"
expect_has "$out" "^gone +read +[0-9TZ:-]+ +- +[0-9-]+T[0-9:]+Z$" "token list: gone shows its revocation"
out=$(CTL --json api token list)
expect_has "$out" '"name": "deployer"' "token list --json"
expect_not "$out" "hash|gslbd_" "token list shows neither hash nor token"

gslbd_start
wait_tcp "$APORT" 2>/dev/null || true

out=$(call "$RT" GET /v1/status)
[ "$(code "$out")" = 200 ] && ok "GET /v1/status: 200" || fail "status: $out"
expect_has "$out" '"nodes": 2' "status counts the nodes"
G0=$(etag)
[[ $G0 =~ ^\"[0-9]+\"$ ]] && ok "status carries the generation as ETag ($G0)" || fail "ETag: '$G0'"
expect_has "$(tr -d '\r' <"$T/h")" "^Content-Type: application/json" "JSON content type"
out=$(call "$RT" GET /v1/nodes)
expect_has "$out" '"id": "n1"' "GET /v1/nodes lists n1"
out=$(call "$RT" GET /v1/nodes/n2)
[ "$(code "$out")" = 200 ] && expect_has "$out" '"addrs"' "GET /v1/nodes/n2" || fail "node n2: $out"
out=$(call "$RT" GET /v1/services)
expect_has "$out" '"name": "www.gslb.test"|www.gslb.test' "GET /v1/services"
out=$(call "$RT" GET /v1/weights)
expect_has "$out" '"n1": 1' "GET /v1/weights"
out=$(call "$RT" GET /v1/export)
exp=$(CTL export)
py_same=$(python3 -c 'import json,sys; a=json.loads(sys.argv[1]); b=json.loads(sys.argv[2]); print(a==b)' \
	"$(tail -n +2 <<<"$out")" "$exp" 2>&1)
[ "$py_same" = True ] && ok "GET /v1/export is gslbctl export's document" || fail "export differs: $py_same"
out=$(call "$RT" GET /v1/log)
expect_has "$out" '"what": "weight set' "GET /v1/log"
out=$(call "$RT" GET /v1/nodes/nope)
[ "$(code "$out")" = 404 ] && expect_has "$out" '"field": "id"' "unknown node: 404 naming id" || fail "nope: $out"
out=$(call "$RT" GET /v1/nothing)
[ "$(code "$out")" = 404 ] && ok "unknown resource: 404" || fail "nothing: $out"
out=$(call "$RT" GET /metrics)
[ "$(code "$out")" = 404 ] && ok "outside /v1/: 404" || fail "/metrics: $out"

# Tokens refused: 401 with the reason.
out=$(call "" GET /v1/status)
[ "$(code "$out")" = 401 ] && expect_has "$out" "missing token" "no token: 401" || fail "none: $out"
out=$(call "gslbd_$(printf '0%.0s' $(seq 64))" GET /v1/status)
[ "$(code "$out")" = 401 ] && expect_has "$out" "unknown token" "wrong token: 401" || fail "wrong: $out"
out=$(call "$VT" GET /v1/status)
[ "$(code "$out")" = 401 ] && expect_has "$out" "token gone revoked" "revoked token: 401" || fail "revoked: $out"
expired() { [ "$(code "$(call "$XT" GET /v1/status)")" = 401 ]; }
wait_until 5 expired && expect_has "$(call "$XT" GET /v1/status)" "token brief expired" "expired token: 401" ||
	fail "expired: $(call "$XT" GET /v1/status)"
grep -q "$RT\|$OT\|$AT" "$T/gslbd.log" && fail "a token in the log" || ok "no token in the daemon's log"

# Writes: roles, bad input, If-Match; none of the refused ones writes.
# The node as configured (node show also tells its health, which moves
# on its own).
before=$(CTL export)
J=(-H "Content-Type: application/json")
out=$(call "$RT" PATCH /v1/nodes/n1 "${J[@]}" -d '{"admin":"drain"}')
[ "$(code "$out")" = 403 ] && expect_has "$out" "role read: it may only read" "read token writing: 403" || fail "read write: $out"
out=$(call "$OT" PATCH /v1/nodes/n1 "${J[@]}" -d '{"admin":"drain"')
[ "$(code "$out")" = 400 ] && expect_has "$out" "malformed JSON at line 1" "malformed JSON: 400" || fail "malformed: $out"
out=$(call "$OT" PATCH /v1/nodes/n1 "${J[@]}" -d '["drain"]')
[ "$(code "$out")" = 400 ] && expect_has "$out" "must be a JSON object" "a list body: 400" || fail "list: $out"
out=$(call "$OT" PATCH /v1/nodes/n1 "${J[@]}" -d '{"admin":"drain","adress":"x"}')
[ "$(code "$out")" = 400 ] && expect_has "$out" '"field": "adress"' "unknown key: 400 naming it" || fail "unknown key: $out"
out=$(call "$OT" PATCH /v1/nodes/n1 "${J[@]}" -d '{"admin":3}')
[ "$(code "$out")" = 400 ] && expect_has "$out" "admin: must be a string" "wrong type: 400" || fail "type: $out"
out=$(call "$OT" PATCH /v1/nodes/n1 "${J[@]}" -d '{"admin":"sleep"}')
[ "$(code "$out")" = 400 ] && expect_has "$out" "admin sleep: not a valid choice" "out of range: 400, gslbctl's text" || fail "range: $out"
out=$(CTL node set n1 --admin sleep 2>&1)
expect_has "$out" "--admin sleep: not a valid choice" "gslbctl gives the same text for the same check"
out=$(call "$OT" PATCH /v1/nodes/n1 "${J[@]}" -d '{"admin":"drain","admin":"up"}')
[ "$(code "$out")" = 400 ] && ok "duplicate key: 400" || fail "dup: $out"
big=$(head -c 8000 /dev/zero | tr '\0' 'a')
out=$(call "$OT" PATCH /v1/nodes/n1 "${J[@]}" -d "{\"admin\":\"$big\"}")
[ "$(code "$out")" = 413 ] && expect_has "$out" "body over 4096 bytes" "body over the limit: 413" || fail "big: $out"
out=$(call "$OT" PATCH /v1/nodes/n1 "${J[@]}" -H 'If-Match: "1"' -d '{"admin":"drain"}')
[ "$(code "$out")" = 412 ] && expect_has "$out" "the table is at generation" "stale If-Match: 412" || fail "412: $out"
out=$(call "$OT" PATCH /v1/nodes/nope "${J[@]}" -d '{"admin":"drain"}')
[ "$(code "$out")" = 404 ] && ok "PATCH of an unknown node: 404" || fail "nope: $out"
out=$(call "$OT" DELETE /v1/nodes/n1)
[ "$(code "$out")" = 403 ] && expect_has "$out" "this change needs role admin" "DELETE with operate: 403" ||
	fail "DELETE: $out"
[ "$(CTL export)" = "$before" ] && ok "no refused request changed n1" || fail "n1 changed: $(diff <(echo "$before") <(CTL export))"
[ "$(gen_now)" = "$G0" ] && ok "nor the generation" || fail "generation moved: $(gen_now)"

out=$(call "$OT" PATCH /v1/nodes/n1 "${J[@]}" -H "If-Match: $G0" -d '{"admin":"drain"}')
[ "$(code "$out")" = 200 ] && expect_has "$out" '"admin": "drain"' "operate token drains n1 with If-Match" || fail "drain: $out"
G1=$(etag)
[ "$G1" != "$G0" ] && ok "the answer carries the new generation" || fail "generation $G1"
expect_has "$(CTL --json node show n1)" '"admin": "drain"' "gslbctl sees n1 drained"
# The drain's record: the newest but for the health thread's own, which
# can come after it (the node's state follows the drain).
log=$(CTL --json log --limit 5 | python3 -c '
import json, sys
recs = [r for r in json.load(sys.stdin)["records"] if r.get("actor") != "health"]
print(json.dumps(recs[-1], indent=2) if recs else "")')
expect_has "$log" '"user": "deployer"' "audit: the token's name is the user"
expect_has "$log" '"host": "127.0.0.1"' "audit: the client's address is the host"
expect_has "$log" '"what": "node set n1"' "audit: the change as gslbctl words it"
drained() { ! q www.gslb.test A +short | grep -q 192.0.2.1; }
wait_until 5 drained && ok "DNS answers leave the drained node out" || fail "n1 still answered"
out=$(call "$AT" PATCH /v1/nodes/n1 "${J[@]}" -d '{"admin":"auto"}')
[ "$(code "$out")" = 200 ] && ok "admin token undrains" || fail "undrain: $out"
# The same PATCH again: idempotent, no new change recorded.
n=$(CTL --json log | grep -c '"id":')
out=$(call "$AT" PATCH /v1/nodes/n1 "${J[@]}" -d '{"admin":"auto"}')
[ "$(code "$out")" = 200 ] && ok "the same PATCH again: 200" || fail "again: $out"
expect_has "$(q www.gslb.test A +short)" "192.0.2" "DNS answers throughout"

# A slow client and many connections: bounded, and DNS goes on.
exec 7<>/dev/tcp/127.0.0.1/$APORT
out=$(call "$RT" GET /v1/status)
[ "$(code "$out")" = 200 ] && ok "a silent connection does not block others" || fail "slow: $out"
exec 7>&-
pids=()
for i in $(seq 20); do
	curl -sS --cacert "$T/api.crt" -o /dev/null -w '%{http_code}\n' -H "Authorization: Bearer $RT" \
		"$U/v1/nodes" >>"$T/codes" 2>&1 & pids+=($!)
done
wait "${pids[@]}"
[ "$(grep -c '^200$' "$T/codes")" = 20 ] && ok "20 parallel requests: all 200" || fail "parallel: $(sort "$T/codes" | uniq -c)"
expect_has "$(q www.gslb.test A +short)" "192.0.2" "DNS answers after 20 parallel API requests"
grep -q "^5" "$T/codes" && fail "a 5xx" || ok "no 5xx seen"
finish
