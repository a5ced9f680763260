#!/bin/bash
# POST /v1/metrics against the real daemon over TLS, with curl: a batch
# of health metrics, steering inputs and a spend stored in one change
# and seen by gslbctl; a bad sample refuses the whole batch with a 400
# naming its index and field and gslbctl's text, word for word (one code
# path: push_apply_word(), health/push.h); the role it needs (operate);
# a body over api.max-body refused with 413; 1,000 samples in one
# request (S1-2, S3-2, S3-6, S3-9).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/api_lib.sh"
gslb_zone
write_conf gslb.test z.zone "api:
  listen: [ \"127.0.0.1@$APORT\" ]
  tls-cert: api.crt
  tls-key: api.key
  max-body: 400000
  rate: 1000"

CTL service add www.gslb.test --steering dynamic >/dev/null
CTL node add a --addr 192.0.2.1 --provider cdn-a --cost-per-gb 0.5 >/dev/null
CTL node add b --addr 192.0.2.2 >/dev/null
CTL weight set www.gslb.test --region cn-gz --isp ctcc a=1 b=1 >/dev/null
CTL weight set www.gslb.test a=1 >/dev/null
RT=$(tok reader --role read)
OT=$(tok feeder --role operate)
AT=$(tok boss --role admin)

gslbd_start
wait_tcp "$APORT" 2>/dev/null || true
field() { tail -n +2 <<<"$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["field"])'; }
post() { call "$1" POST /v1/metrics -H 'Content-Type: application/json' --data-binary "$2"; }
# The store's pushed data, as mdb_dump shows it (not our own code).
metrics_dump() { mdb_dump -p -s metrics "$T/db" 2>/dev/null; mdb_dump -p -s steerin "$T/db" 2>/dev/null; }
# same_text API-OUTPUT INDEX LINE MESSAGE: the API's error is
# "samples[INDEX]: " and gslbctl's for LINE as the first line of --file,
# word for word.
same_text() {
	local api=$1 i=$2 line=$3 msg=$4 ctl
	ctl=$(echo "$line" | CTL metrics push --file - 2>&1) && { fail "$msg: gslbctl took '$line'"; return; }
	[ "gslbctl: stdin:1: ${ctl#gslbctl: stdin:1: }" = "$ctl" ] || { fail "$msg: gslbctl said '$ctl'"; return; }
	[ "$(errtext "$api")" = "samples[$i]: ${ctl#gslbctl: stdin:1: }" ] && ok "$msg" ||
		fail "$msg: API '$(errtext "$api")', gslbctl '$ctl'"
}

# 1. A batch: health metrics, steering inputs for a row and for the node,
# a spend, all in one change.
NOW=$(date +%s)
out=$(post "$OT" '{"samples": [
  {"node": "a", "loss": 0.3, "rtt_ms": 45},
  {"node": "a", "region": "cn-gz", "isp": "ctcc", "success": 99.5, "latency": 20, "from": "rum"},
  {"node": "b", "success": 98, "at": '"$NOW"'},
  {"node": "a", "bytes": 2000000000},
  {"provider": "cdn-a", "spent": 12.5}]}')
[ "$(code "$out")" = 200 ] && expect_has "$out" '"pushed": 5' "a batch of 5: 200, pushed 5" ||
	fail "batch: $out"
st=$(CTL --json steer show www.gslb.test 2>&1)
dump=$(metrics_dump)
expect_has "$dump" '"loss":\{"from":"push","time":[0-9]+,"value":0.(3|29999)' "a's loss is in the store's metrics"
expect_has "$dump" '"rtt_ms":\{"from":"push","time":[0-9]+,"value":45' "and its rtt_ms"
expect_has "$dump" 'n\|a\|cn-gz\|ctcc' "a's input for (cn-gz, ctcc) is stored"
expect_has "$dump" '\[[0-9]+,99.5,20.0\]' "with its success and latency"
expect_has "$dump" "\\[$NOW,98.0,null\\]" "b's input for the node as a whole, at its time"
expect_has "$dump" '"derived":1.0,"pushed":12.5' "cdn-a's spend: pushed, and derived from a's bytes"
expect_has "$st" '"inputs_from": "rum"' "gslbctl steer show names the feeder of a's sample"
# Metrics are data, not decisions: no audit record, as for gslbctl's.
expect_not "$(CTL --json log --limit 20)" '"actor": "api:feeder"' "no audit record for pushed data"
# The same sample through gslbctl is stored the same way.
CTL metrics push b --from rum loss=0.3 rtt_ms=45 >/dev/null
b=$(mdb_dump -p -s metrics "$T/db" | grep -A1 '^ b$' | tail -1 | sed 's/"time":[0-9]*//g')
a=$(mdb_dump -p -s metrics "$T/db" | grep -A1 '^ a$' | tail -1 | sed 's/"time":[0-9]*//g; s/"from":"push"/"from":"rum"/g')
[ "$a" = "$b" ] && ok "a sample through the API is stored as gslbctl stores it" || fail "API $a, gslbctl $b"

# 2. A bad sample refuses the whole batch: nothing is stored.
before=$(metrics_dump)
bad_batch() { # index sample... : samples 0..index-1 good, then the bad one
	local good='{"node": "b", "loss": 1.5}' s=""
	for ((j = 0; j < $1; j++)); do s+="$good, "; done
	post "$OT" "{\"samples\": [$s$2]}"
}
out=$(bad_batch 2 '{"node": "ghost", "loss": 1}')
[ "$(code "$out")" = 400 ] && [ "$(field "$out")" = "samples[2].node" ] &&
	ok "an unknown node: 400 naming samples[2].node" || fail "ghost: $out"
same_text "$out" 2 "ghost loss=1" "the unknown node: gslbctl's text"
out=$(bad_batch 1 '{"node": "b", "loss": 1, "nope": 3}')
[ "$(code "$out")" = 400 ] && [ "$(field "$out")" = "samples[1].nope" ] &&
	ok "an unknown metric: 400 naming samples[1].nope" || fail "nope: $out"
same_text "$out" 1 "b loss=1 nope=3" "the unknown metric: gslbctl's text"
out=$(bad_batch 3 '{"node": "a", "region": "cn-bj", "success": 99}')
[ "$(code "$out")" = 400 ] && [ "$(field "$out")" = "samples[3].region" ] &&
	ok "a region none of a's rows reads: 400 naming samples[3].region" || fail "cn-bj: $out"
same_text "$out" 3 "a --region cn-bj success=99" "the row refusal: gslbctl's text"
out=$(bad_batch 0 '{"node": "a", "success": 120}')
[ "$(code "$out")" = 400 ] && [ "$(field "$out")" = "samples[0].success" ] &&
	ok "success out of range: 400 naming samples[0].success" || fail "120: $out"
same_text "$out" 0 "a success=120" "the range: gslbctl's text"
out=$(bad_batch 1 '{"node": "a", "success": 99, "at": "2000-01-01T00:00:00Z"}')
[ "$(code "$out")" = 400 ] && [ "$(field "$out")" = "samples[1].at" ] &&
	ok "a sample too old to count: 400 naming samples[1].at" || fail "old: $out"
expect_has "$(errtext "$out")" "older than the .* steering windows read" "the age refusal says why"
out=$(bad_batch 1 '{"node": "b", "bytes": 100}')
[ "$(code "$out")" = 400 ] && [ "$(field "$out")" = "samples[1].bytes" ] &&
	ok "bytes of a node without a price: 400 naming samples[1].bytes" || fail "bytes: $out"
same_text "$out" 1 "b bytes=100" "the price refusal: gslbctl's text"
out=$(bad_batch 1 '{"node": "a", "region": "cn-gz"}')
[ "$(code "$out")" = 400 ] && [ "$(field "$out")" = "samples[1]" ] &&
	ok "a sample without a measurement: 400 naming samples[1]" || fail "empty: $out"
same_text "$out" 1 "a --region cn-gz" "the missing measurement: gslbctl's text"
out=$(bad_batch 1 '{"node": "a", "loss": "high"}')
[ "$(code "$out")" = 400 ] && [ "$(field "$out")" = "samples[1].loss" ] &&
	expect_has "$out" "must be a number" "a value that is no number: 400" || fail "string: $out"
out=$(bad_batch 1 '{"loss": 1}')
[ "$(code "$out")" = 400 ] && [ "$(field "$out")" = "samples[1].node" ] &&
	ok "a sample without a node: 400 naming samples[1].node" || fail "no node: $out"
out=$(bad_batch 1 '{"node": "--provider", "spent": 1}')
[ "$(code "$out")" = 400 ] && [ "$(field "$out")" = "samples[1].node" ] &&
	ok "a node that reads as an option: 400" || fail "--provider node: $out"
out=$(bad_batch 1 '[1]')
[ "$(code "$out")" = 400 ] && [ "$(field "$out")" = "samples[1]" ] &&
	ok "a sample that is no object: 400" || fail "array sample: $out"
out=$(post "$OT" '{"samples": {"node": "a"}}')
[ "$(code "$out")" = 400 ] && [ "$(field "$out")" = "samples" ] &&
	ok "samples that are no array: 400 naming samples" || fail "object: $out"
out=$(post "$OT" '{"samples": [], "extra": 1}')
[ "$(code "$out")" = 400 ] && [ "$(field "$out")" = "extra" ] &&
	ok "an unknown key of the body: 400 naming it" || fail "extra: $out"
out=$(post "$OT" '{"samples": [')
[ "$(code "$out")" = 400 ] && expect_has "$out" "malformed JSON" "malformed JSON: 400" || fail "json: $out"
[ "$(metrics_dump)" = "$before" ] && ok "no refused batch stored anything" ||
	fail "stored: $(diff <(echo "$before") <(metrics_dump))"

# 3. Roles, methods, cluster-free single instance.
out=$(post "$RT" '{"samples": [{"node": "a", "loss": 1}]}')
[ "$(code "$out")" = 403 ] && expect_has "$out" "role read: it may only read" \
	"a read token: 403" || fail "read: $out"
out=$(post "" '{"samples": [{"node": "a", "loss": 1}]}')
[ "$(code "$out")" = 401 ] && ok "no token: 401" || fail "no token: $out"
out=$(post "$AT" '{"samples": [{"node": "a", "loss": 2}]}')
[ "$(code "$out")" = 200 ] && ok "an admin token may push too" || fail "admin: $out"
out=$(call "$OT" GET /v1/metrics)
[ "$(code "$out")" = 405 ] && ok "GET /v1/metrics: 405" || fail "GET: $out"
[ "$(metrics_dump | grep -c .)" -gt 0 ] || fail "no dump"

# 4. A body over api.max-body: 413, nothing read.
before=$(metrics_dump)
python3 -c '
import json
print(json.dumps({"samples": [{"node": "a", "loss": 0.5, "from": "x" * 40}] * 6000}))' >"$T/big.json"
out=$(call "$OT" POST /v1/metrics -H 'Content-Type: application/json' --data-binary @"$T/big.json")
[ "$(code "$out")" = 413 ] && expect_has "$out" "body over 400000 bytes \(api.max-body\)" \
	"a body over max-body: 413" || fail "413: $(head -c 300 <<<"$out")"
[ "$(metrics_dump)" = "$before" ] && ok "and nothing stored" || fail "413 stored something"

# More than 5,000 samples in one request: 400, however small they are.
python3 -c '
import json
print(json.dumps({"samples": [{"node": "a", "loss": 1}] * 5001}))' >"$T/many.json"
out=$(call "$OT" POST /v1/metrics -H 'Content-Type: application/json' --data-binary @"$T/many.json")
[ "$(code "$out")" = 400 ] && [ "$(field "$out")" = samples ] &&
	expect_has "$out" "samples: 5001 in one request, at most 5000" "5,001 samples: 400" ||
	fail "5001: $(head -c 300 <<<"$out")"
[ "$(metrics_dump)" = "$before" ] && ok "and nothing stored" || fail "5001 stored something"

# 5. 1,000 samples in one request: stored in one change.
python3 -c '
import json
s = []
for i in range(1000):
    if i % 2:
        s.append({"node": "a", "region": "cn-gz", "isp": "ctcc", "success": 90 + i % 10, "latency": 10 + i % 50})
    else:
        s.append({"node": "b", "loss": (i % 30) / 10, "rtt_ms": 20 + i % 40})
print(json.dumps({"samples": s}))' >"$T/k.json"
size=$(stat -c %s "$T/k.json")
out=$(call "$OT" POST /v1/metrics -H 'Content-Type: application/json' --data-binary @"$T/k.json")
[ "$(code "$out")" = 200 ] && expect_has "$out" '"pushed": 1000' \
	"1,000 samples ($size bytes) in one request: pushed 1000" || fail "1000: $(head -c 300 <<<"$out")"
dump=$(metrics_dump)
expect_has "$dump" '"rtt_ms":\{"from":"push","time":[0-9]+,"value":58' "b's last sample of the thousand is the one kept"
expect_has "$dump" '\[[0-9]+,99.0,59.0\]\]' "a's last sample of the thousand is the newest of its input"
expect_has "$(q www.gslb.test A +short)" "192.0.2.[12]" "DNS answers www throughout"
finish
