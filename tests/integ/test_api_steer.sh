#!/bin/bash
# The HTTP API and the steering engine, against the real daemon over
# TLS with curl: a change of the engine's shares rolled back through the
# API pins the row at the shares before it (dry run first), as gslbctl
# rollback does, and POST /v1/steer/SERVICE/unpin hands the row back to
# the engine as gslbctl steer unpin does, with its guards and texts; and
# a cutover window's ISP checked against the GeoIP database.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/api_lib.sh"
. "$(dirname "$0")/steer_lib.sh"
steer_setup "api:
  listen: [ \"127.0.0.1@$APORT\" ]
  tls-cert: api.crt
  tls-key: api.key
  rate: 1000"
CTL service add www.gslb.test --ttl 30 --answers 1 >/dev/null
CTL service add alt.gslb.test --ttl 30 >/dev/null
CTL node add a --addr 192.0.2.1 >/dev/null
CTL node add b --addr 192.0.2.2 >/dev/null
CTL weight set www.gslb.test --region cn-gz --isp ctcc a=60 b=40 >/dev/null
CTL weight set www.gslb.test --region cn-bj --isp cucc a=50 b=50 >/dev/null
CTL weight set alt.gslb.test a=1 >/dev/null
CTL service set www.gslb.test --steering dynamic --weights success=0.3,latency=0.7,cost=0 >/dev/null
RT=$(tok reader --role read)
OT=$(tok deployer --role operate)
AT=$(tok boss --role admin)
gslbd_start
wait_tcp "$APORT" 2>/dev/null || true
same_text() { # API-OUTPUT MESSAGE PREFIX GSLBCTL-ARGS...
	local api=$1 msg=$2 pre=$3
	shift 3
	local ctl
	ctl=$(CTL "$@" 2>&1) && { fail "$msg: gslbctl $* succeeded"; return; }
	[ "gslbctl: $pre$(errtext "$api")" = "$ctl" ] && ok "$msg" ||
		fail "$msg: API '$(errtext "$api")', gslbctl '$ctl'"
}
for k in a:gz b:gz a:bj b:bj; do set_m $k "success=99.9 latency=20"; done
start_feeder
trap 'stop_feeder; cleanup' EXIT

# b is slow in cn-gz: the engine moves the row.
set_m b:gz "success=99.9 latency=200"
low_b() { w=$(weight gz b); [ -n "$w" ] && [ "$w" -le 3000 ]; }
wait_until 20 low_b || fail "b did not lose share: $(CTL steer show www.gslb.test)"
first=$(CTL --json log --auto | python3 -c "
import json, sys
for r in json.load(sys.stdin)['records']:
    if r['actor'] == 'gslbd:steer' and any(i.get('row') == 'www.gslb.test|cn-gz|ctcc' for i in r['inputs']):
        print(r['id']); break")
[ -n "$first" ] && ok "the engine's first change of the row: $first" || fail "no change of the engine"

# GET /v1/steer/SERVICE is gslbctl steer show --json, but for what the
# engine changes between the two reads: compared with the feeder
# stopped and the inputs gone stale the next evaluations change nothing
# more than "evaluated_at", which is left out.
stop_feeder
trap cleanup EXIT
sleep 1
out=$(call "$RT" GET /v1/steer/www.gslb.test)
tail -n +2 <<<"$out" > "$T/api.json"
CTL --json steer show www.gslb.test > "$T/ctl.json"
if [ "$(code "$out")" = 200 ] && python3 - "$T/api.json" "$T/ctl.json" <<'EOP'
import json, sys
a, c = (json.load(open(f)) for f in sys.argv[1:3])
strip = lambda rows: [{k: v for k, v in r.items() if k != "evaluated_at"} for r in rows]
sys.exit(0 if a and strip(a) == strip(c) else 1)
EOP
then ok "GET /v1/steer/SERVICE is gslbctl steer show --json"
else fail "steer show: API $(head -c 1500 "$T/api.json"), gslbctl $(head -c 1500 "$T/ctl.json")"; fi
out=$(call "$RT" GET /v1/steer/alt.gslb.test)
[ "$(code "$out")" = 422 ] && ok "steering of a service that does not steer: 422" || fail "alt: $out"
same_text "$out" "that refusal: gslbctl's text" "steer show: " steer show alt.gslb.test
out=$(call "$RT" GET /v1/steer/nope.gslb.test)
[ "$(code "$out")" = 404 ] && ok "steering of an unknown service: 404" || fail "nope: $out"
start_feeder
trap 'stop_feeder; cleanup' EXIT

out=$(call "$AT" POST "/v1/rollback/$first?dry_run=1")
[ "$(code "$out")" = 200 ] && expect_has "$out" '"pins": \{' "a dry rollback of the engine's change: the pins" ||
	fail "dry: $out"
expect_has "$(tail -n +2 <<<"$out")" '"www.gslb.test\|cn-gz\|ctcc": \{' "the cn-gz row, at the operator's weights"
expect_has "$(tail -n +2 <<<"$out")" '"a": 60' "a at the operator's 60"
[ -z "$(CTL steer show www.gslb.test | grep pinned)" ] && ok "the dry run pinned nothing" || fail "dry run pinned"
out=$(call "$OT" POST "/v1/rollback/$first")
[ "$(code "$out")" = 403 ] && ok "an operate token rolling back the engine: 403" || fail "operate: $out"
out=$(call "$AT" POST "/v1/rollback/$first")
[ "$(code "$out")" = 200 ] && expect_has "$out" "\"what\": \"rollback $first: steering pinned\"" \
	"rolled back: gslbctl's words" || fail "rollback: $out"
rec=$(last_rec)
expect_has "$rec" '"actor": "api:boss"' "audit: the pin's actor is api:NAME"
expect_has "$(CTL steer show www.gslb.test)" "pinned by boss at .*\(rollback of change $first\)" \
	"gslbctl steer show: pinned by the token's name"
sleep 2
[ -z "$(weight gz b)" ] && ok "the pinned row stays at the operator's weights" ||
	fail "pinned row moved: b has $(weight gz b) bp"

# Unpin: refused ones first.
out=$(call "$RT" POST /v1/steer/www.gslb.test/unpin)
[ "$(code "$out")" = 403 ] && ok "a read token unpinning: 403" || fail "read: $out"
out=$(call "$OT" POST /v1/steer/nope.gslb.test/unpin)
[ "$(code "$out")" = 404 ] && expect_has "$out" '"field": "service"' "an unknown service: 404 naming it" ||
	fail "nope: $out"
same_text "$out" "an unknown service: gslbctl's text" "steer unpin: " steer unpin nope.gslb.test
out=$(call "$OT" POST /v1/steer/www.gslb.test/unpin -d '{"region": "cn-bj", "isp": "cucc"}')
[ "$(code "$out")" = 422 ] && ok "a row not pinned: 422" || fail "bj: $out"
same_text "$out" "a row not pinned: gslbctl's text" "steer unpin: " steer unpin www.gslb.test --region cn-bj --isp cucc
out=$(call "$OT" POST /v1/steer/alt.gslb.test/unpin)
[ "$(code "$out")" = 422 ] && ok "a service without a pinned row: 422" || fail "alt: $out"
same_text "$out" "no pinned row: gslbctl's text" "steer unpin: " steer unpin alt.gslb.test
out=$(call "$OT" POST /v1/steer/www.gslb.test/unpin -d '{"region": "Cn GZ"}')
[ "$(code "$out")" = 400 ] && expect_has "$out" '"field": "region"' "a region that is no name: 400 naming it" ||
	fail "bad region: $out"
out=$(call "$OT" POST /v1/steer/www.gslb.test/unpin -d '{"row": 1}')
[ "$(code "$out")" = 400 ] && ok "an unknown key: 400" || fail "row: $out"
out=$(call "$OT" GET /v1/steer/www.gslb.test/unpin)
[ "$(code "$out")" = 405 ] && ok "GET of unpin: 405" || fail "GET: $out"
out=$(call "$OT" POST /v1/steer/www.gslb.test/unpin -H 'If-Match: "1"')
[ "$(code "$out")" = 412 ] && ok "a stale If-Match: 412" || fail "412: $out"
expect_has "$(CTL steer show www.gslb.test)" "pinned by boss" "none of them unpinned the row"
out=$(call "$OT" POST /v1/steer/www.gslb.test/unpin -d '{"region": "cn-gz", "isp": "ctcc"}')
[ "$(code "$out")" = 200 ] && expect_has "$out" '"what": "steer unpin www.gslb.test\|cn-gz\|ctcc"' \
	"an operate token unpins the row: gslbctl's words" || fail "unpin: $out"
expect_has "$(last_rec)" '"actor": "api:deployer"' "audit: the unpin's actor is api:NAME"
expect_not "$(CTL steer show www.gslb.test)" "pinned by" "gslbctl sees the row unpinned"
wait_until 20 low_b && ok "the engine moves b down again" ||
	fail "unpinned row not steered: $(CTL steer show www.gslb.test)"
stop_feeder
trap cleanup EXIT

# A cutover window's ISP is checked against the GeoIP database the
# daemon serves, as gslbctl -c checks it.
at() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
S=$(at $(( $(date +%s) + 86400 * 30 ))) E=$(at $(( $(date +%s) + 86400 * 30 + 3600 )))
out=$(call "$AT" POST /v1/cutovers -d "{\"nodes\": [\"a\"], \"isp\": \"ctcx\", \"start\": \"$S\", \"end\": \"$E\"}")
[ "$(code "$out")" = 400 ] && expect_has "$out" '"field": "isp"' "a window's ISP no client is in: 400 naming it" ||
	fail "ctcx: $out"
same_text "$out" "that ISP: gslbctl's text" "cutover add: " cutover add --node a --isp ctcx --start "$S" --end "$E"
out=$(call "$AT" POST /v1/cutovers -d "{\"nodes\": [\"a\"], \"isp\": \"ctcc\", \"start\": \"$S\", \"end\": \"$E\"}")
[ "$(code "$out")" = 201 ] && ok "a window of an ISP the database knows: 201" || fail "ctcc: $out"
finish
