#!/bin/bash
# gslbctl: every validation error names the bad argument and leaves the
# store unchanged; log, rollback, export/apply round trips; concurrent runs.
. "$(dirname "$0")/lib.sh"
cat > "$T/z.zone" <<'EOZ'
@   3600 SOA ns1 host 1 3600 600 86400 120
    3600 NS  ns1
ns1 3600 A   192.0.2.53
EOZ
write_conf gslb.test z.zone

CTL service add www.gslb.test --ttl 30 --short-ttl 5 --answers 2 >/dev/null || fail "service add"
CTL node add n1 --addr 192.0.2.1 --region cn-bj --isp ctcc --capacity 100 >/dev/null || fail "node add"
CTL node add n2 --addr 2001:db8::2 >/dev/null || fail "node add v6"
CTL weight set www.gslb.test --region cn-bj n1=10 n2=5 >/dev/null || fail "weight set"
before=$(CTL export)
nlog=$(CTL log | wc -l)

# expect_reject "description" "regex of the message" gslbctl-args...
expect_reject() {
	local what=$1 re=$2
	shift 2
	local out rc=0
	out=$(CTL "$@" 2>&1) || rc=$?
	if [ $rc -ne 0 ] && grep -Eq -- "$re" <<<"$out"; then ok "rejected: $what"
	else fail "rejected: $what (rc=$rc): $out"; fi
}
expect_reject "unknown node in a row" "node nx does not exist" weight set www.gslb.test nx=5
expect_reject "negative weight" "weight of n1 -5: must be a whole number" weight set www.gslb.test n1=-5
expect_reject "weight not a number" "weight of n1 x" weight set www.gslb.test n1=x
expect_reject "node given twice" "node n1 is given twice" weight set www.gslb.test n1=1 n1=2
expect_reject "unknown service" "service other.gslb.test does not exist" weight set other.gslb.test n1=1
expect_reject "name outside our zones" "outside our zones" service add www.example.com
expect_reject "zone apex as a service" "is the apex of zone" service add gslb.test
expect_reject "bad address" "--addr 300.1.1.1 is not an IPv4 or IPv6 address" node add n3 --addr 300.1.1.1
expect_reject "address and CNAME" "either --addr or --cname" node add n3 --addr 192.0.2.3 --cname x.example
expect_reject "node without address" "needs --addr" node add n3
expect_reject "bad node id" "node id 'n 3'" node add "n 3" --addr 192.0.2.3
expect_reject "bad region" "--region CN_BJ!" node add n3 --addr 192.0.2.3 --region 'CN_BJ!'
expect_reject "bad pool" "--pool spare: not a valid choice" node add n3 --addr 192.0.2.3 --pool spare
expect_reject "existing node" "node n1 already exists" node add n1 --addr 192.0.2.3
expect_reject "node in use" "node n1 is used by weight row" node del n1
expect_reject "short TTL above TTL" "--short-ttl 100 is longer than --ttl 30" service set www.gslb.test --short-ttl 100
expect_reject "answers out of range" "--answers 0: must be" service set www.gslb.test --answers 0
expect_reject "bad all-down" "--all-down maybe: not a valid choice" service set www.gslb.test --all-down maybe
expect_reject "unknown option" "unknown option '--colour'" service set www.gslb.test --colour red
expect_reject "missing row" "does not exist" weight del www.gslb.test --region cn-sh
expect_reject "unknown change" "change 999 does not exist" rollback 999
echo '{ "services": [ ' > "$T/bad.json"
expect_reject "apply: bad JSON" "apply: .*bad\.json:[0-9]+: .*expected" apply "$T/bad.json"
expect_reject "apply: missing file" "apply: unable to open .*none\.json" apply "$T/none.json"
echo '{"version":1,"services":[{"name":"a.gslb.test"}],"weights":[{"service":"a.gslb.test","weights":{"ghost":1}}]}' > "$T/ref.json"
expect_reject "apply: row naming a missing node" "unknown node 'ghost'; nothing was changed" apply "$T/ref.json"
after=$(CTL export)
[ "$before" = "$after" ] && ok "store unchanged after all rejected commands" || fail "store changed"
[ "$(CTL log | wc -l)" = "$nlog" ] && ok "no audit record for rejected commands" || fail "audit grew"

# The audit log names every change; rollback undoes one as a new change.
out=$(CTL log)
expect_has "$out" "^ +4  [0-9T:-]+Z  gslbctl:[a-z]+ +weight set www\.gslb\.test cn-bj/\* n1=10 n2=5$" "log shows the weight change in one line"
CTL weight set www.gslb.test --region cn-bj n1=99 >/dev/null
out=$(CTL rollback)
expect_has "$out" "rollback 5" "rollback of the last change"
[ "$(CTL export)" = "$before" ] && ok "rollback restored the previous state" || fail "rollback state"
out=$(CTL --json log --since 6)
expect_has "$out" '"what": "rollback 5"' "the rollback is audited"
expect_has "$out" '"before":' "audit records carry before and after"
CTL weight set www.gslb.test --region cn-bj n1=7 >/dev/null
expect_reject "rollback of a change made obsolete" "changed again after change 4" rollback 4
CTL rollback >/dev/null

# export -> apply into a fresh store -> export: identical.
CTL export > "$T/all.json"
"$ROOT/$B/gslbctl" -d "$T/db2" --create apply "$T/all.json" >/dev/null 2>&1
[ "$("$ROOT/$B/gslbctl" -d "$T/db2" export)" = "$(CTL export)" ] && ok "export/apply round trip" || fail "round trip"
out=$("$ROOT/$B/gslbctl" -d "$T/db2" apply "$T/all.json")
expect_has "$out" "nothing to change" "apply is idempotent"
# apply makes the store equal to the file: objects it lacks are removed.
echo '{"version":1,"services":[],"nodes":[{"id":"only","addrs":["192.0.2.9"]}],"weights":[]}' > "$T/small.json"
"$ROOT/$B/gslbctl" -d "$T/db2" apply --force "$T/small.json" >/dev/null 2>&1
out=$("$ROOT/$B/gslbctl" -d "$T/db2" node list)
expect_has "$out" "^only " "apply: the file's node is there"
expect_not "$out" "^n1 " "apply: nodes not in the file are gone"

# Concurrent runs: 20 node adds at once all land.
pids=()
for i in $(seq 20); do CTL node add c$i --addr 192.0.2.$((100 + i)) >/dev/null & pids+=($!); done
for p in "${pids[@]}"; do wait "$p"; done
[ "$(CTL node list | grep -c '^c[0-9]')" = 20 ] && ok "20 concurrent gslbctl runs all committed" || fail "concurrent adds"
# service del takes its rows along.
CTL service del www.gslb.test >/dev/null
[ -z "$(CTL weight list | grep www)" ] && ok "service del removes its weight rows" || fail "rows left"
CTL node del n1 >/dev/null && ok "node del once unused" || fail "node del"
# Region and ISP names are those clients can be located in: the GeoIP
# database (walked, here without maps), the CIDR file, the store's nodes
# and rows.  A typo is refused with the nearest names; a name meant for a
# database about to be deployed passes with --allow-unknown-location.
geo_two_regions
printf '10.9.0.0/16 region=cn-lab isp=labnet\n' > "$T/geo.nets"
sed 's|^  path: db$|  path: dbgeo|' "$T/gslbd.conf" > "$T/geo.conf"
printf 'geoip:\n  database: geo.mmdb\n  nets: geo.nets\n' >> "$T/geo.conf"
GC() { "$ROOT/$B/gslbctl" -c "$T/geo.conf" "$@"; }
expect_geo() { # "description" rc "regex" gslbctl-args...
	local what=$1 want=$2 re=$3 out rc=0
	shift 3
	out=$(GC "$@" 2>&1) || rc=$?
	if [ "$rc" = "$want" ] && grep -Eq -- "$re" <<<"$out"; then ok "$what"
	else fail "$what (rc=$rc, want $want): $out"; fi
}
GC service add w.gslb.test >/dev/null 2>&1
GC node add a --addr 192.0.2.1 >/dev/null 2>&1 || fail "node add a (no region)"
before=$(GC export)
expect_geo "weight set --region cn-bjj: refused, cn-bj suggested" 1 \
	"--region cn-bjj: no client is located in that region.*did you mean cn-bj\?" \
	weight set w.gslb.test --region cn-bjj a=1
expect_geo "weight set --isp ctc: refused, ctcc suggested" 1 "--isp ctc: .*did you mean ctcc\?" \
	weight set w.gslb.test --isp ctc a=1
expect_geo "a name far from all: the known ones listed" 1 \
	"--region zz-nowhere: .*known: cn-bj, cn-gz, cn-lab" weight set w.gslb.test --region zz-nowhere a=1
expect_geo "node add --region cn-gzz: refused" 1 "node add: --region cn-gzz: .*did you mean cn-gz\?" \
	node add b --addr 192.0.2.2 --region cn-gzz
expect_geo "cutover add --isp cuccc: refused" 1 "cutover add: --isp cuccc: .*did you mean cucc\?" \
	cutover add --node a --isp cuccc --start 2030-01-01T02:00:00Z --end 2030-01-01T03:00:00Z
[ "$(GC export)" = "$before" ] && ok "refused names leave the store as it was" || fail "store changed"
GC export > "$T/geo.json"
python3 - "$T/geo.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["weights"].append({"service": "w.gslb.test", "region": "cn-bjj", "isp": "*", "weights": {"a": 1}})
json.dump(d, open(sys.argv[1], "w"))
PY
expect_geo "apply of a row for cn-bjj: refused" 1 "apply .*weight row w.gslb.test: --region cn-bjj: .*did you mean cn-bj\?" \
	apply "$T/geo.json"
expect_geo "apply --dry-run says the same" 1 "--region cn-bjj: .*did you mean cn-bj\?" \
	apply --dry-run "$T/geo.json"
# Known names: from the database, the CIDR file, wildcards.
expect_geo "a region of the database" 0 "change" weight set w.gslb.test --region cn-bj --isp cucc a=1
expect_geo "a region and ISP of the CIDR file" 0 "change" weight set w.gslb.test --region cn-lab --isp labnet a=1
expect_geo "node add in a known region" 0 "change" node add b --addr 192.0.2.2 --region cn-gz --isp ctcc
# Meant: a database about to be deployed names cn-new.
expect_geo "--allow-unknown-location keeps cn-new, with a warning" 0 \
	"warning: .*--region cn-new: no client is located in that region yet" \
	--allow-unknown-location weight set w.gslb.test --region cn-new a=1
expect_geo "the flag also follows the command" 0 "change" \
	node add c --addr 192.0.2.3 --region cn-new2 --allow-unknown-location
# Once in the store, the name is known: the row can be changed again.
expect_geo "a row the store has: no flag needed" 0 "change" weight set w.gslb.test --region cn-new a=2
expect_geo "apply of the fresh export" 0 "nothing to change" apply <(GC export)
finish
