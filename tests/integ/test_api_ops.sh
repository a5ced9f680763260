#!/bin/bash
# The HTTP API's operations against the real daemon over TLS, with curl:
# cutover windows (list, show, announce, withdraw) with gslbctl cutover's
# checks and texts; rollback of a change, dry or not, with gslbctl
# rollback's undo and guards; gray releases started, shown, paused,
# resumed and aborted as gslbctl release does; providers' budgets set
# and deleted as gslbctl budget does; explain as gslbctl explain; the
# roles they need, If-Match, the audit's actor, and that the API's
# answers are gslbctl's word for word.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/api_lib.sh"
gslb_zone
write_conf gslb.test z.zone "api:
  listen: [ \"127.0.0.1@$APORT\" ]
  tls-cert: api.crt
  tls-key: api.key
  rate: 1000"

CTL service add www.gslb.test >/dev/null
CTL service add alt.gslb.test >/dev/null
CTL node add a1 --addr 192.0.2.1 --region r-a --isp isp-x >/dev/null
CTL node add a2 --addr 192.0.2.2 --region r-a --isp isp-y >/dev/null
CTL node add b1 --addr 192.0.2.3 --region r-b --isp isp-x >/dev/null
CTL weight set www.gslb.test a1=1 a2=1 b1=1 >/dev/null
CTL weight set alt.gslb.test b1=1 >/dev/null
RT=$(tok reader --role read)
OT=$(tok deployer --role operate)
AT=$(tok boss --role admin)

gslbd_start
wait_tcp "$APORT" 2>/dev/null || true
field() { tail -n +2 <<<"$1" | python3 -c 'import json, sys; print(json.load(sys.stdin)["field"])'; }
# same_text API-OUTPUT MESSAGE PREFIX GSLBCTL-ARGS...: the API's error,
# after PREFIX ("cutover add: "), is gslbctl's word for word.
same_text() {
	local api=$1 msg=$2 pre=$3
	shift 3
	local ctl
	ctl=$(CTL "$@" 2>&1) && { fail "$msg: gslbctl $* succeeded"; return; }
	[ "gslbctl: $pre$(errtext "$api")" = "$ctl" ] && ok "$msg" ||
		fail "$msg: API '$(errtext "$api")', gslbctl '$ctl'"
}
# status_is OUT CODE FIELD MESSAGE: the answer's status and, for an
# error, the field it names ("-": no check).
status_is() {
	local out=$1 want=$2 f=$3 msg=$4
	if [ "$(code "$out")" != "$want" ]; then fail "$msg: $out"; return; fi
	if [ "$f" != - ] && [ "$(field "$out")" != "$f" ]; then
		fail "$msg: field $(field "$out"), not $f: $out"; return
	fi
	ok "$msg"
}
# same_doc API-OUTPUT MESSAGE GSLBCTL-ARGS...: the API's body is
# gslbctl's --json document but for its "format" and "generated".
same_doc() {
	local api=$1 msg=$2
	shift 2
	tail -n +2 <<<"$api" > "$T/api.json"
	CTL --json "$@" > "$T/ctl.json" 2>&1
	if python3 - "$T/api.json" "$T/ctl.json" <<'EOP'
import json, sys
a = json.load(open(sys.argv[1]))
c = json.load(open(sys.argv[2]))
for k in ("format", "generated", "generated_unix"):
    c.pop(k, None)
sys.exit(0 if a == c and a else 1)
EOP
	then ok "$msg"; else fail "$msg: API $(cat "$T/api.json"), gslbctl $(cat "$T/ctl.json")"; fi
}
at() { date -u -d "@$1" +%Y-%m-%dT%H:%M:%SZ; }
NOW=$(date +%s)
S=$(at $((NOW + 86400 * 30)))
E=$(at $((NOW + 86400 * 30 + 7200)))
PAST=$(at $((NOW - 3600)))

### Cutover windows.
before=$(CTL export; CTL cutover list)
G0=$(gen_now)
body() { printf '{"region": "r-a", "start": "%s", "end": "%s"%s}' "$S" "$E" "${1:-}"; }
out=$(call "$RT" POST /v1/cutovers -d "$(body)")
status_is "$out" 403 - "a read token announcing a window: 403"
out=$(call "$OT" POST /v1/cutovers -d "$(body)")
[ "$(code "$out")" = 403 ] && expect_has "$out" "role operate: this change needs role admin" \
	"an operate token announcing a window: 403" || fail "operate: $out"
out=$(call "$AT" POST /v1/cutovers -d '{"region": "r-a",')
status_is "$out" 400 None "malformed JSON: 400"
out=$(call "$AT" POST /v1/cutovers -d "$(body ', "colour": "red"')")
status_is "$out" 400 colour "an unknown key: 400 naming it"
out=$(call "$AT" POST /v1/cutovers -d "$(body ', "derate_pct": "55"')")
status_is "$out" 400 derate_pct "derate_pct as a string: 400 naming it"
out=$(call "$AT" POST /v1/cutovers -d "$(body ', "nodes": "a1"')")
status_is "$out" 400 nodes "nodes not an array: 400 naming it"
out=$(call "$AT" POST /v1/cutovers -d "{\"start\": \"$S\", \"end\": \"$E\"}")
status_is "$out" 400 region "no area: 400 naming region"
expect_has "$out" "region or nodes is required: the area the cutover affects" "no area: the reason"
out=$(call "$AT" POST /v1/cutovers -d '{"region": "r-a", "start": "tomorrow", "end": "later"}')
status_is "$out" 400 start "an unreadable start: 400 naming it"
expect_has "$out" "start tomorrow: use RFC 3339 with an offset" "an unreadable start: gslbctl's words"
out=$(call "$AT" POST /v1/cutovers -d "$(body ', "derate_pct": 150')")
status_is "$out" 400 derate_pct "derate_pct 150: 400 naming it"
expect_has "$out" "derate_pct 150: must be a whole number from 1 to 100" "derate_pct 150: the range"
out=$(call "$AT" POST /v1/cutovers -d "$(body ', "impact": "huge"')")
status_is "$out" 400 impact "impact huge: 400"
out=$(call "$AT" POST /v1/cutovers -d "$(body ', "impact": "low", "derate_pct": 40')")
status_is "$out" 400 derate_pct "impact and derate_pct together: 400"
expect_has "$out" "give impact or derate_pct, not both" "impact and derate_pct: the reason"
out=$(call "$AT" POST /v1/cutovers -d "{\"region\": \"r-a\", \"start\": \"$E\", \"end\": \"$S\"}")
status_is "$out" 400 end "ends before it starts: 400"
same_text "$out" "ends before it starts: gslbctl's text" "cutover add: " cutover add --region r-a --start "$E" --end "$S"
out=$(call "$AT" POST /v1/cutovers -d "{\"region\": \"r-a\", \"start\": \"$(at $((NOW - 7200)))\", \"end\": \"$PAST\"}")
status_is "$out" 422 end "a window in the past: 422"
same_text "$out" "a window in the past: gslbctl's text" "cutover add: " cutover add --region r-a --start "$(at $((NOW - 7200)))" --end "$PAST"
out=$(call "$AT" POST /v1/cutovers -d "{\"region\": \"r-z\", \"start\": \"$S\", \"end\": \"$E\"}")
status_is "$out" 422 region "a region no node is in: 422"
expect_has "$out" "region r-z: no node is in that region" "a region no node is in: the reason"
out=$(call "$AT" POST /v1/cutovers -d "{\"nodes\": [\"a1\", \"ghost\"], \"start\": \"$S\", \"end\": \"$E\"}")
status_is "$out" 422 nodes "a node that does not exist: 422"
expect_has "$out" "nodes ghost: no such node" "a node that does not exist: the reason"
out=$(call "$AT" POST /v1/cutovers -d "$(body)" -H 'If-Match: "1"')
status_is "$out" 412 - "a stale If-Match: 412"
out=$(call "$AT" PUT /v1/cutovers/c1 -d "$(body)")
status_is "$out" 405 - "PUT of a window: 405"
expect_has "$out" "announce a window with POST /v1/cutovers" "PUT: says how instead"
out=$(call "$RT" GET /v1/cutovers/c1)
status_is "$out" 404 id "GET of an absent window: 404"
same_text "$out" "an absent window: gslbctl's text" "" cutover show c1
out=$(call "$AT" DELETE /v1/cutovers/c1)
status_is "$out" 404 id "DELETE of an absent window: 404"
same_text "$out" "DELETE of an absent window: gslbctl's text" "" cutover del c1
[ "$(CTL export; CTL cutover list)" = "$before" ] && ok "no refused request changed the table" ||
	fail "changed: $(CTL cutover list)"
[ "$(gen_now)" = "$G0" ] && ok "nor the generation" || fail "generation moved: $(gen_now)"

out=$(call "$AT" POST /v1/cutovers -H "If-Match: $G0" \
	-d "$(body ', "isp": "isp-x", "impact": "high", "note": "fibre work"')")
status_is "$out" 201 - "an admin announcing a window with If-Match: 201"
expect_has "$out" "\"what\": \"cutover add c1 region=r-a isp=isp-x $S..$E derate 50%\"" \
	"the answer has gslbctl's words and the high impact's level"
expect_has "$out" '"id": "c1"' "the store named it c1"
rec=$(last_rec)
expect_has "$rec" '"actor": "api:boss"' "audit: the actor is api:NAME"
expect_has "$rec" '"host": "127.0.0.1"' "audit: the client's address is the host"
expect_has "$rec" "\"what\": \"cutover add c1 " "audit: gslbctl's words"
expect_has "$(CTL cutover list)" "^c1 +r-a +isp-x .* fibre work" "gslbctl lists the API's window"
out=$(call "$AT" POST /v1/cutovers -d "$(body ', "isp": "isp-x", "impact": "high", "note": "again"')")
status_is "$out" 200 - "the very same window again: 200"
expect_has "$out" '"change": null' "and no change"
expect_has "$out" "the same window exists already as c1; nothing to change" "gslbctl's words for it"
out=$(call "$AT" POST /v1/cutovers -d "$(body ', "isp": "isp-x", "derate_pct": 30')")
status_is "$out" 422 - "an overlapping window with other settings: 422"
same_text "$out" "the overlap: gslbctl's text" "cutover add: " cutover add --region r-a --isp isp-x \
	--start "$S" --end "$E" --derate 30
CTL cutover add --node b1 --start "$S" --end "$E" --derate 40 >/dev/null
out=$(call "$RT" GET /v1/cutovers)
status_is "$out" 200 - "a read token lists the windows"
same_doc "$out" "the list is gslbctl's cutover list --json" cutover list
out=$(call "$RT" GET /v1/cutovers/c2)
status_is "$out" 200 - "a read token shows gslbctl's window"
same_doc "$out" "a window is gslbctl's cutover show --json" cutover show c2
G1=$(etag)
out=$(call "$OT" DELETE /v1/cutovers/c2)
status_is "$out" 403 - "an operate token withdrawing a window: 403"
out=$(call "$AT" DELETE /v1/cutovers/c2 -H "If-Match: $G1")
status_is "$out" 200 - "an admin withdrawing it at that generation: 200"
expect_has "$out" '"what": "cutover del c2"' "the answer has gslbctl's words"
expect_has "$(last_rec)" '"what": "cutover del c2"' "audit: the withdrawal"
expect_not "$(CTL cutover list)" "^c2 " "gslbctl no longer lists c2"
out=$(call "$AT" POST /v1/cutovers -d "{\"nodes\": [\"b1\"], \"start\": \"$S\", \"end\": \"$E\"}")
expect_has "$out" '"id": "c3"' "a new window never takes a withdrawn one's id"

### Rollback.
chg() { python3 -c 'import json, sys; print(json.load(sys.stdin)["change"])'; }
X=$(CTL --json node set a2 --admin drain | chg)
before=$(CTL export; CTL cutover list)
G0=$(gen_now)
out=$(call "$RT" POST "/v1/rollback/$X")
status_is "$out" 403 - "a read token rolling back: 403"
out=$(call "$OT" POST "/v1/rollback/$X?dry_run=1")
status_is "$out" 403 - "an operate token rolling back, even dry: 403"
out=$(call "$AT" POST /v1/rollback/abc)
status_is "$out" 400 id "a change id that is no number: 400 naming id"
same_text "$out" "a change id that is no number: gslbctl's text" "" rollback abc
out=$(call "$AT" POST /v1/rollback/99999)
status_is "$out" 404 id "a change that does not exist: 404"
same_text "$out" "a change that does not exist: gslbctl's text" "rollback: " rollback 99999
out=$(call "$AT" POST "/v1/rollback/$X?dry_run=maybe")
status_is "$out" 400 dry_run "dry_run=maybe: 400 naming it"
out=$(call "$AT" GET "/v1/rollback/$X")
status_is "$out" 405 - "GET of a rollback: 405"
out=$(call "$AT" POST /v1/rollback)
status_is "$out" 404 - "a rollback naming no change: 404"
out=$(call "$AT" POST "/v1/rollback/$X" -H 'If-Match: "1"')
status_is "$out" 412 - "a rollback with a stale If-Match: 412"
out=$(call "$AT" POST "/v1/rollback/$X?dry_run=1")
status_is "$out" 200 - "a dry run: 200"
expect_has "$out" '"dry_run": true' "it says it is one"
tail -n +2 <<<"$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["summary"])
for c in d["changes"]: print("  " + c["summary"])' > "$T/api.txt"
CTL rollback "$X" --dry-run > "$T/ctl.txt"
[ "$(tail -n +2 "$T/ctl.txt")" = "$(tail -n +2 "$T/api.txt")" ] &&
	ok "the dry run's changes are gslbctl rollback --dry-run's lines" ||
	fail "dry run: API $(cat "$T/api.txt"), gslbctl $(cat "$T/ctl.txt")"
expect_has "$(head -1 "$T/ctl.txt")" ": $(head -1 "$T/api.txt")\); --dry-run" \
	"and its summary is the one gslbctl names"
[ "$(CTL export; CTL cutover list)" = "$before" ] && ok "no dry run or refused rollback changed the table" ||
	fail "changed: $(CTL export)"
[ "$(gen_now)" = "$G0" ] && ok "nor the generation" || fail "generation moved: $(gen_now)"
out=$(call "$AT" POST "/v1/rollback/$X" -H "If-Match: $G0")
status_is "$out" 200 - "a rollback at the generation: 200"
expect_has "$out" "\"what\": \"rollback $X\"" "gslbctl's words for it"
rec=$(last_rec)
expect_has "$rec" '"actor": "api:boss"' "audit: the rollback's actor is api:NAME"
expect_has "$rec" "\"undoes\": $X" "audit: it undoes change $X"
expect_has "$(CTL node show a2)" "^admin +auto" "gslbctl sees a2's admin state restored"
out=$(call "$AT" POST "/v1/rollback/$X")
status_is "$out" 422 id "the same rollback again: 422, the node changed since"
same_text "$out" "that guard: gslbctl's text" "rollback: " rollback "$X"
# The API's own change undone through the API: the window announced is
# withdrawn.
C1=$(CTL --json log | python3 -c '
import json, sys
print([r["id"] for r in json.load(sys.stdin)["records"] if r["what"].startswith("cutover add c1 ")][0])')
out=$(call "$AT" POST "/v1/rollback/$C1")
status_is "$out" 200 - "the API's window announcement rolled back"
expect_not "$(CTL cutover list)" "^c1 " "and gslbctl no longer lists c1"

### Gray releases.
REL=/v1/releases/www.gslb.test/start
out=$(call "$RT" POST $REL -d '{"node": "a1", "steps": [10, 100], "every": "1h"}')
status_is "$out" 403 - "a read token starting a release: 403"
out=$(call "$OT" POST $REL -d '{"node": "a1", "steps": [10, 100], "every": "1h", "weight": 5}')
status_is "$out" 403 - "an operate token joining rows with a weight: 403 (admin)"
out=$(call "$OT" POST $REL -d '{"steps": "10,100", "every": "1h"}')
status_is "$out" 400 node "no node: 400 naming it"
out=$(call "$OT" POST $REL -d '{"node": "a1", "steps": "10,5", "every": "1h"}')
status_is "$out" 400 steps "steps that do not increase: 400 naming them"
ctl=$(CTL release start www.gslb.test --node a1 --steps 10,5 --every 1h 2>&1)
[ "gslbctl: release start: --$(errtext "$out")" = "$ctl" ] && ok "those steps: gslbctl's text, the input named by its key" ||
	fail "steps: API '$(errtext "$out")', gslbctl '$ctl'"
out=$(call "$OT" POST $REL -d '{"node": "a1", "steps": "10,100", "every": "1h", "guards": ["score>80"]}')
status_is "$out" 400 guards "a guard that is none: 400"
out=$(call "$OT" POST $REL -d '{"node": "a1", "steps": {"a": 1}, "every": "1h"}')
status_is "$out" 400 steps "steps as an object: 400"
out=$(call "$OT" POST $REL -d '{"node": "ghost", "steps": "10,100", "every": "1h"}')
status_is "$out" 422 node "a node that does not exist: 422"
same_text "$out" "that node: gslbctl's text" "release start: " release start www.gslb.test --node ghost --steps 10,100 --every 1h
out=$(call "$OT" POST /v1/releases/nope.gslb.test/start -d '{"node": "a1", "steps": "10,100", "every": "1h"}')
status_is "$out" 404 service "a service that does not exist: 404"
same_text "$out" "that service: gslbctl's text" "release start: " release start nope.gslb.test --node a1 --steps 10,100 --every 1h
[ -z "$(CTL release list | tail -n +2)" ] && ok "no refused start wrote a release" || fail "started: $(CTL release list)"
out=$(call "$OT" POST $REL -d '{"node": "a1", "steps": [10, 100], "every": "1h", "guards": ["success>=99"]}')
status_is "$out" 201 - "an operate token starts a release: 201"
expect_has "$out" '"what": "release start www.gslb.test node a1 at 10% \(steps 10,100 every 3600s\)"' \
	"gslbctl's words for it"
expect_has "$(last_rec)" '"actor": "api:deployer"' "audit: the start's actor is api:NAME"
out=$(call "$OT" POST $REL -d '{"node": "a2", "steps": [10, 100], "every": "1h"}')
status_is "$out" 422 service "a second release of the service: 422"
out=$(call "$RT" GET /v1/releases)
status_is "$out" 200 - "a read token lists the releases"
same_doc "$out" "the list is gslbctl's release list --json" release list
out=$(call "$RT" GET /v1/releases/www.gslb.test)
status_is "$out" 200 - "a read token shows a release"
same_doc "$out" "a release with what its guards see is gslbctl's release show --json" \
	release show www.gslb.test
out=$(call "$RT" GET /v1/releases/nope.gslb.test)
status_is "$out" 404 service "the release of an unknown service: 404"
same_text "$out" "an unknown service: gslbctl's text" "release show: " release show nope.gslb.test
before=$(CTL export; CTL release list)
G0=$(gen_now)
out=$(call "$RT" POST /v1/releases/www.gslb.test/pause)
status_is "$out" 403 - "a read token pausing a release: 403"
out=$(call "$OT" POST /v1/releases/www.gslb.test/explode)
status_is "$out" 404 action "an action releases do not have: 404 naming it"
out=$(call "$OT" GET /v1/releases/www.gslb.test/pause)
status_is "$out" 405 - "GET of an action: 405"
out=$(call "$OT" POST /v1/releases/www.gslb.test)
status_is "$out" 405 - "POST to a release without an action: 405"
out=$(call "$OT" POST /v1/releases/alt.gslb.test/pause)
status_is "$out" 404 service "pausing a service without a release: 404"
same_text "$out" "no release: gslbctl's text" "release pause: " release pause alt.gslb.test
out=$(call "$OT" POST /v1/releases/www.gslb.test/resume)
status_is "$out" 422 service "resuming a running release: 422"
same_text "$out" "that guard: gslbctl's text" "release resume: " release resume www.gslb.test
out=$(call "$OT" POST /v1/releases/www.gslb.test/pause -H 'If-Match: "1"')
status_is "$out" 412 - "pausing with a stale If-Match: 412"
[ "$(CTL export; CTL release list)" = "$before" ] && ok "no refused action changed the table" ||
	fail "changed: $(CTL release list)"
[ "$(gen_now)" = "$G0" ] && ok "nor the generation" || fail "generation moved: $(gen_now)"
out=$(call "$OT" POST /v1/releases/www.gslb.test/pause -H "If-Match: $G0")
status_is "$out" 200 - "an operate token pauses the release: 200"
expect_has "$out" '"what": "release pause www.gslb.test node a1"' "gslbctl's words for it"
rec=$(last_rec)
expect_has "$rec" '"actor": "api:deployer"' "audit: the actor is api:NAME"
expect_has "$rec" '"what": "release pause www.gslb.test node a1"' "audit: the pause"
expect_has "$(CTL release list)" "www.gslb.test +a1 .* paused " "gslbctl lists it paused"
out=$(call "$OT" POST /v1/releases/www.gslb.test/resume)
status_is "$out" 200 - "and resumes it"
expect_has "$(CTL release list)" "www.gslb.test +a1 .* running " "gslbctl lists it running"
out=$(call "$OT" POST /v1/releases/www.gslb.test/abort)
status_is "$out" 200 - "and aborts it"
out=$(call "$OT" POST /v1/releases/www.gslb.test/abort)
status_is "$out" 422 service "aborting it again: 422"
same_text "$out" "that guard: gslbctl's text" "release abort: " release abort www.gslb.test

### Providers' budgets.
before=$(CTL export; CTL budget list)
G0=$(gen_now)
out=$(call "$RT" PUT /v1/budgets/cdn-a -d '{"limit": 1000}')
status_is "$out" 403 - "a read token setting a budget: 403"
out=$(call "$OT" PUT /v1/budgets/cdn-a -d '{"limit": 1000}')
status_is "$out" 403 - "an operate token setting a budget: 403"
out=$(call "$AT" PUT /v1/budgets/Bad_Name -d '{"limit": 10}')
status_is "$out" 400 provider "a provider name that is none: 400 naming it"
same_text "$out" "that name: gslbctl's text" "" budget set Bad_Name --limit 10
out=$(call "$AT" PUT /v1/budgets/cdn-a -d '{}')
status_is "$out" 400 limit "a new budget without a limit: 400 naming it"
expect_has "$out" "budget set: limit is required" "no limit: gslbctl's words, by key"
out=$(call "$AT" PUT /v1/budgets/cdn-a -d '{"limit": -5}')
status_is "$out" 400 limit "a negative limit: 400"
expect_has "$out" "budget set: limit -5: give a number from 0 to 1e\+15" "a negative limit: the range"
out=$(call "$AT" PUT /v1/budgets/cdn-a -d '{"limit": 5, "period": "fortnight"}')
status_is "$out" 400 period "a period that is none: 400"
out=$(call "$AT" PUT /v1/budgets/cdn-a -d '{"limit": "5"}')
status_is "$out" 400 limit "a limit as a string: 400"
out=$(call "$AT" PUT /v1/budgets/cdn-a -d '{"limit": 5, "colour": 1}')
status_is "$out" 400 colour "an unknown key: 400"
out=$(call "$AT" PUT /v1/budgets/cdn-a -d '{"limit": 5}' -H 'If-Match: "1"')
status_is "$out" 412 - "a stale If-Match: 412"
out=$(call "$AT" DELETE /v1/budgets/cdn-b)
status_is "$out" 404 provider "deleting a budget there is not: 404"
same_text "$out" "no budget: gslbctl's text" "" budget del cdn-b
out=$(call "$AT" POST /v1/budgets/cdn-a -d '{"limit": 5}')
status_is "$out" 405 - "POST of a budget: 405"
[ "$(CTL export; CTL budget list)" = "$before" ] && ok "no refused request changed the budgets" ||
	fail "changed: $(CTL budget list)"
[ "$(gen_now)" = "$G0" ] && ok "nor the generation" || fail "generation moved: $(gen_now)"
out=$(call "$AT" PUT /v1/budgets/cdn-a -H "If-Match: $G0" -d '{"limit": 1000, "alert": 90, "period": "week"}')
status_is "$out" 200 - "an admin sets a budget: 200"
expect_has "$out" '"what": "budget set cdn-a"' "gslbctl's words for it"
expect_has "$(last_rec)" '"actor": "api:boss"' "audit: the actor is api:NAME"
expect_has "$(CTL budget list)" "^cdn-a +1000\.00 +week +90% " "gslbctl lists the API's budget"
out=$(call "$AT" PUT /v1/budgets/cdn-a -d '{"alert": 70}')
status_is "$out" 200 - "a change of the alert alone keeps the rest"
expect_has "$(CTL budget list)" "^cdn-a +1000\.00 +week +70% " "gslbctl sees the limit and period kept"
out=$(call "$RT" GET /v1/budgets)
status_is "$out" 200 - "a read token lists the budgets"
same_doc "$out" "the list is gslbctl's budget list --json" budget list
out=$(call "$AT" DELETE /v1/budgets/cdn-a)
status_is "$out" 200 - "an admin deletes the budget"
expect_not "$(CTL budget list)" "^cdn-a " "gslbctl no longer lists it"

### Explain.
out=$(call "$RT" GET '/v1/explain?service=alt.gslb.test&client=192.0.2.77/24')
status_is "$out" 200 - "a read token explains an answer"
same_doc "$out" "the explanation is gslbctl's explain --json" explain alt.gslb.test --client 192.0.2.77/24
expect_has "$out" '"from": "ECS option"' "IP/LEN is sent as a Client Subnet option"
out=$(call "$RT" GET '/v1/explain?service=z.gslb.test&client=192.0.2.77&type=AAAA')
status_is "$out" 200 - "a name without a service: the zone's answer"
same_doc "$out" "and it is gslbctl's" explain z.gslb.test --client 192.0.2.77 --type AAAA
out=$(call "$RT" GET '/v1/explain?service=alt.gslb.test')
status_is "$out" 400 client "no client: 400 naming it"
out=$(call "$RT" GET '/v1/explain?client=192.0.2.77')
status_is "$out" 400 service "no name: 400 naming it"
out=$(call "$RT" GET '/v1/explain?service=alt.gslb.test&client=192.0.2.400')
status_is "$out" 400 client "a client that is no address: 400"
same_text "$out" "that client: gslbctl's text" "explain: " explain alt.gslb.test --client 192.0.2.400
out=$(call "$RT" GET '/v1/explain?service=alt.gslb.test&client=192.0.2.7/33')
status_is "$out" 400 client "an IPv4 prefix over 32: 400"
same_text "$out" "that prefix: gslbctl's text" "explain: " explain alt.gslb.test --client 192.0.2.7/33
out=$(call "$RT" GET '/v1/explain?service=alt.gslb.test&client=192.0.2.7&type=BOGUS')
status_is "$out" 400 type "a type that is none: 400"
same_text "$out" "that type: gslbctl's text" "explain: " explain alt.gslb.test --client 192.0.2.7 --type BOGUS
out=$(call "$AT" POST '/v1/explain?service=alt.gslb.test&client=192.0.2.7')
status_is "$out" 405 - "POST to explain: 405"

expect_has "$(q www.gslb.test A +short)" "192.0.2.[123]" "DNS answers www throughout"
finish
