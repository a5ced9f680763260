#!/bin/bash
# The HTTP API's health view against the real daemon: GET /v1/health
# answers the nodes and weight rows of `gslbctl --json status`, the
# same documents (a probed node up with its score, one demoted after its
# probes fail, one drained, the rows' effective weights); ?service=NAME
# narrows it as `status NAME` does; an unknown or malformed service, a
# write method and a missing token are refused.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/api_lib.sh"
gslb_zone
write_conf gslb.test z.zone "health:
  interval: 1
  timeout: 0.9
api:
  listen: [ \"127.0.0.1@$APORT\" ]
  tls-cert: api.crt
  tls-key: api.key
  rate: 1000"
HP1=$((PORT + 3000))
HP2=$((PORT + 3001))
start_httpd "$HP1"
start_httpd "$HP2"
trap 'stop_httpds; cleanup' EXIT

CTL service add www.gslb.test >/dev/null
CTL service add alt.gslb.test >/dev/null
CTL node add n1 --addr 192.0.2.1 --probe "tcp://127.0.0.1:$HP1" >/dev/null
CTL node add n2 --addr 192.0.2.2 --probe "tcp://127.0.0.1:$HP2" >/dev/null
CTL node add n3 --addr 192.0.2.3 >/dev/null
CTL weight set www.gslb.test n1=60 n2=40 >/dev/null
CTL weight set alt.gslb.test n3=1 >/dev/null
CTL node set n3 --admin drain >/dev/null
RT=$(CTL api token add watcher --role read | awk '/^token /{ print $3 }')
gslbd_start
wait_tcp "$APORT" 2>/dev/null || true
wait_up 2 100 || fail "n1 and n2 not up: $(CTL status)"
echo down > "$T/mode$HP2"
n2_down() { CTL --json status | grep -q '"state": "demoted"'; }
wait_until 20 n2_down || fail "n2 not demoted: $(CTL status)"

# the nodes and rows of a status document, without what moves with
# every probe round (the live status record, the score, its time)
view() {
	python3 -c '
import json, sys
d = json.loads(sys.stdin.read().split("\n", 1)[1] if sys.argv[1] == "api" else sys.stdin.read())
for n in d["nodes"]:
    n.pop("status", None); n.pop("score", None)
print(json.dumps({"nodes": d["nodes"], "rows": d["rows"]}, sort_keys=True, indent=1))' "$1"
}
# same [SERVICE]: the API's view is gslbctl's (tried 5 times: a
# decision between the two reads changes both)
same() {
	local q=${1:+?service=$1} a c
	for _ in 1 2 3 4 5; do
		a=$(call "$RT" GET "/v1/health$q" | view api)
		c=$(CTL --json status ${1:+"$1"} | view ctl)
		[ "$a" = "$c" ] && return 0
	done
	echo "    API: $a"; echo "    gslbctl: $c"
	return 1
}

out=$(call "$RT" GET /v1/health)
[ "$(code "$out")" = 200 ] && ok "GET /v1/health with a read token: 200" || fail "health: $out"
py "
import json
d = json.loads('''$(tail -n +2 <<<"$out")''')
n = {x['node']: x for x in d['nodes']}
assert n['n1']['state'] == 'up' and n['n1']['score'] is not None, n['n1']
assert n['n2']['state'] == 'demoted' and 'probe' in (n['n2']['reason'] or ''), n['n2']
assert n['n3']['admin'] == 'drain', n['n3']
rows = {(r['service'], r['region'], r['isp']): r for r in d['rows']}
w = {m['node']: m for m in rows[('www.gslb.test', '*', '*')]['nodes']}
assert w['n1']['weight'] == 60 and w['n1']['usable'] and not w['n2']['usable'], w
" && ok "n1 up with a score, n2 demoted with its reason, n3 drained, the row's effective weights" ||
	fail "health document: $out"
same && ok "the nodes and rows are gslbctl --json status's" || fail "differs from gslbctl status"
same alt.gslb.test && ok "?service=alt.gslb.test: gslbctl status alt.gslb.test's" ||
	fail "?service differs from gslbctl status alt.gslb.test"
out=$(call "$RT" GET "/v1/health?service=ALT.gslb.test.")
expect_has "$out" '"node": "n3"' "?service takes the name as gslbctl does (case, final dot)"
expect_not "$out" '"node": "n1"' "and shows only the service's nodes"
out=$(call "$RT" GET "/v1/health?service=nosuch.gslb.test")
[ "$(code "$out")" = 404 ] && expect_has "$out" "service nosuch.gslb.test does not exist" \
	"an unknown service: 404" || fail "unknown: $out"
out=$(call "$RT" GET "/v1/health?service=bad..name")
[ "$(code "$out")" = 400 ] && expect_has "$out" '"field": "service"' "a malformed name: 400 naming the field" ||
	fail "malformed: $out"
out=$(call "$RT" POST /v1/health -d '{}')
[ "$(code "$out")" = 405 ] && ok "POST: 405" || fail "POST: $out"
out=$(call "" GET /v1/health)
[ "$(code "$out")" = 401 ] && ok "no token: 401" || fail "no token: $out"
finish
