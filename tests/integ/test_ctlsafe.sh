#!/bin/bash
# gslbctl's operator safety: apply checks the format version and every
# key and refuses to delete much without --force (--dry-run shows the
# difference); rollback undoes the newest change of the same user and
# walks back when repeated, also while the health thread writes; cutover
# ids are never reused; status and writes say when no gslbd serves the
# store; and the silent no-ops are errors or warnings.
. "$(dirname "$0")/lib.sh"
gslb_zone 'static A 192.0.2.80' 'lab NS ns.lab' 'ns.lab A 192.0.2.81'
cat > "$T/over.nets" <<'EON'
192.0.2.0/24    region=cn-bj isp=ctcc
198.51.100.0/24 region=cn-sh isp=cucc
EON
DEAD=$((PORT + 3000))   # nothing listens here: b's probe fails
write_conf gslb.test z.zone "geoip:
  nets: over.nets
health:
  interval: 1
  timeout: 0.5
  settle: 2"
G="$ROOT/$B/gslbctl"
trap 'stop_httpds; cleanup' EXIT
# expect_rc "description" RC "regex of the output" gslbctl-args...
expect_rc() {
	local what=$1 want=$2 re=$3
	shift 3
	local out rc=0
	out=$(CTL "$@" 2>&1) || rc=$?
	if [ "$rc" = "$want" ] && grep -Eq -- "$re" <<<"$out"; then ok "$what"
	else fail "$what (rc=$rc, want $want): $out"; fi
}
unchanged() { # description
	[ "$(CTL export)" = "$before" ] && ok "$1: the table is unchanged" ||
		fail "$1: the table changed"
	[ "$(CTL log | wc -l)" = "$nlog" ] && ok "$1: no audit record" || fail "$1: audit grew"
}

# 3. No daemon: status says so, a write warns and still succeeds.
out=$(CTL service add www.gslb.test --ttl 30 2>&1); rc=$?
[ $rc = 0 ] && expect_has "$out" "warning: no gslbd serves .*db" "a write without gslbd warns, exit 0" ||
	fail "write without gslbd: rc=$rc $out"
CTL node add a --addr 192.0.2.1 --region cn-bj --isp ctcc >/dev/null 2>&1
CTL node add b --addr 192.0.2.2 --probe "tcp://127.0.0.1:$DEAD" >/dev/null 2>&1
for i in $(seq 9); do CTL service add s$i.gslb.test >/dev/null 2>&1; done
CTL weight set www.gslb.test a=10 b=5 >/dev/null 2>&1
CTL weight set www.gslb.test --region cn-bj a=10 >/dev/null 2>&1
expect_has "$(CTL status)" "^gslbd is not running: there is no health data" "status before any daemon ran"

# 5. One line per change in the log.
CTL node set a --admin down >/dev/null 2>&1
out=$(CTL log)
expect_has "$out" "gslbctl:[a-z]+ +node set a admin=down$" "log: node set in one line"
expect_has "$out" "gslbctl:[a-z]+ +weight set www\.gslb\.test \*/\* a=10 b=5$" "log: weight row in one line"
expect_has "$out" "gslbctl:[a-z]+ +weight set www\.gslb\.test cn-bj/\* a=10$" "log: a region row"
[ "$(CTL log --limit 2 | wc -l)" = 2 ] && ok "log --limit 2: two lines" || fail "log --limit 2"
expect_has "$(CTL log --limit 1)" "node set a admin=down" "log --limit 1 is the newest"
[ "$(CTL log --since 2000-01-01T08:00+08:00 | wc -l)" = "$(CTL log | wc -l)" ] &&
	ok "log --since with an offset" || fail "log --since with an offset"
[ -z "$(CTL log --since 2999-01-01T00:00:00Z)" ] && ok "log --since the future: nothing" ||
	fail "log --since the future"
expect_rc "log --since with a bad time" 1 "--since yesterday: give a change id or an RFC 3339" log --since yesterday
expect_rc "log --since 2026-13-45T00:00Z" 1 "RFC 3339" log --since 2026-13-45T00:00Z
out=$(CTL --json log --limit 1)
expect_has "$out" '"user": "[a-z]+' "audit records carry the user"
expect_has "$out" '"host": "' "audit records carry the host"
CTL node set a --admin auto >/dev/null 2>&1

# 4. Silent no-ops.
before=$(CTL export); nlog=$(CTL log | wc -l)
expect_rc "service add of a name with static data" 1 "zone gslb.test answers this name itself" service add static.gslb.test
expect_rc "service add below a delegation" 1 "delegation lab\.gslb\.test" service add x.lab.gslb.test
expect_rc "weight set --region typo" 1 "--region cn-bjj: no client is located in that region.*did you mean cn-bj\?" weight set www.gslb.test --region cn-bjj a=1
expect_rc "weight set --isp typo" 1 "--isp ctc: no client is located in that ISP.*did you mean ctcc\?" weight set www.gslb.test --isp ctc a=1
expect_rc "history of an unknown node" 1 "history: node nx does not exist" history nx
expect_rc "service frob" 2 "service: unknown subcommand 'frob'" service frob
expect_rc "service frob NAME" 2 "service: unknown subcommand 'frob'" service frob www.gslb.test
expect_rc "node frob" 2 "node: unknown subcommand 'frob'" node frob a
expect_rc "node list with an extra argument" 2 "node list: unexpected argument 'x'" node list x
expect_rc "service show with an extra argument" 2 "unexpected argument 'x'" service show www.gslb.test x
expect_rc "weight list with an extra argument" 2 "unexpected argument 'x'" weight list www.gslb.test x
expect_rc "cutover list with an extra argument" 2 "unexpected argument 'x'" cutover list x
expect_rc "node del with an extra argument" 2 "unexpected argument 'x'" node del a x
# Bad answer data.
for a in 0.0.0.0 :: 127.0.0.1 ::1 224.0.0.1 ff02::1 255.255.255.255 ::ffff:192.0.2.1; do
	expect_rc "node add --addr $a" 1 "address $a is (an?|the) .*(unspecified|loopback|multicast|broadcast|IPv4-mapped)" node add z --addr "$a"
done
expect_rc "the same address twice" 1 "address 192\.0\.2\.9 is given twice" node add z --addr 192.0.2.9 --addr 192.0.2.9
expect_rc "the same IPv6 address twice, spelled two ways" 1 "given twice" node add z --addr 2001:db8::1 --addr 2001:db8:0::1
CTL node add loop --cname www.gslb.test. >/dev/null 2>&1
before=$(CTL export); nlog=$(CTL log | wc -l)
expect_rc "a CNAME node pointing at its own service" 1 "node loop is a CNAME to the service itself" weight set www.gslb.test loop=1 a=1
CTL export | python3 -c 'import json,sys; d=json.load(sys.stdin); d["nodes"][0]["addrs"]=["127.0.0.1"]; json.dump(d, sys.stdout)' > "$T/lo.json"
expect_rc "apply with a loopback node address" 1 "address 127\.0\.0\.1 is a loopback address" apply "$T/lo.json"
unchanged "rejected no-ops"
out=$(CTL node add lab1 --addr 127.0.0.1 --allow-special 2>&1) && ok "--allow-special lets a lab use loopback" ||
	fail "--allow-special: $out"
CTL node del lab1 >/dev/null 2>&1
CTL node del loop >/dev/null 2>&1
# A name the nets file knows is fine without a node in it.
out=$(CTL weight set www.gslb.test --region cn-sh a=1 2>&1) && ok "weight set --region known to the nets file" ||
	fail "weight set --region cn-sh: $out"
CTL weight del www.gslb.test --region cn-sh >/dev/null 2>&1
# -d: no store there is an error unless --create; without the geoip
# settings a strange region is a warning.
out=$("$G" -d "$T/nostore" node list 2>&1) && fail "-d without a store: $out" ||
	expect_has "$out" "no weight store there \(give --create" "-d without a store is an error"
[ ! -e "$T/nostore" ] && ok "-d without a store creates nothing" || fail "-d created $T/nostore"
out=$("$G" -d "$T/db" weight set www.gslb.test --region cn-bjj a=1 2>&1) &&
	expect_has "$out" "warning: weight set: --region cn-bjj: no node has that region" "-d: a strange region warns" ||
	fail "-d weight set --region cn-bjj: $out"
CTL weight del www.gslb.test --region cn-bjj >/dev/null 2>&1

# 1. apply safety.
CTL export > "$T/all.json"
before=$(CTL export); nlog=$(CTL log | wc -l)
echo '{}' > "$T/empty.json"
expect_rc "apply {}" 1 "empty\.json: version: missing" apply "$T/empty.json"
head -c 300 "$T/all.json" > "$T/cut.json"
expect_rc "apply of a truncated file" 1 "cut\.json:[0-9]+: " apply "$T/cut.json"
echo '{"version": 2, "services": []}' > "$T/v2.json"
expect_rc "apply of format version 2" 1 "version: this gslbctl reads version 1 only" apply "$T/v2.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["servces"]=[]; json.dump(d, sys.stdout)' "$T/all.json" > "$T/k1.json"
expect_rc "apply: unknown top-level key" 1 "k1\.json: servces: unknown key; nothing was changed" apply "$T/k1.json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["nodes"][1]["adress"]="x"; json.dump(d, sys.stdout)' "$T/all.json" > "$T/k2.json"
expect_rc "apply: unknown key in a record" 1 "nodes\[1\]\.adress: unknown key" apply "$T/k2.json"
echo '{"version": 1}' > "$T/v1.json"
expect_rc "apply of an empty table" 1 "would delete services s1\.gslb\.test, .*www\.gslb\.test and 2 of 2 weight rows" apply "$T/v1.json"
expect_rc "apply of an empty table lists the deletions" 1 "  - weight www\.gslb\.test cn-bj/\*" apply "$T/v1.json"
# --dry-run exits as apply would: 1, it needs --force.
out=$(CTL apply --dry-run "$T/v1.json" 2>&1) && fail "apply --dry-run of an empty table: exit 0" ||
	ok "apply --dry-run of an empty table: exit 1, as the apply"
expect_has "$out" "needs --force: it deletes services" "--dry-run says it needs --force"
expect_has "$out" "would add 0, change 0, delete 14 object" "--dry-run counts"
expect_has "$out" "^  - service s9\.gslb\.test$" "--dry-run lists a deleted service"
expect_has "$out" "^  - node b$" "--dry-run lists a deleted node"
# One row of two deleted: over 10 %.
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["weights"]=[w for w in d["weights"] if w["region"]=="*"]; d["nodes"][0]["capacity"]=7; json.dump(d, sys.stdout)' "$T/all.json" > "$T/row.json"
expect_rc "apply deleting 1 of 2 rows" 1 "would delete 1 of 2 weight rows" apply "$T/row.json"
out=$(CTL apply --dry-run "$T/row.json")
expect_has "$out" "^  ~ node a$" "--dry-run lists a changed node"
expect_has "$out" "^  - weight www\.gslb\.test cn-bj/\*$" "--dry-run lists the deleted row"
unchanged "refused and dry-run applies"
out=$(CTL apply --force "$T/row.json" 2>&1) && ok "apply --force deletes the row" || fail "apply --force: $out"
expect_not "$(CTL weight list)" "cn-bj" "after apply --force the row is gone"
out=$(CTL apply "$T/all.json" 2>&1) && ok "apply adding the row back needs no --force" || fail "apply all: $out"

# 3. With the daemon: no note, no warning; b's probe fails, so the
# health thread writes its decision into the audit log.
gslbd_start
out=$(CTL status 2>&1)
expect_not "$out" "gslbd is not running" "status with gslbd running: no note"
out=$(CTL node set a --capacity 5 2>&1)
expect_not "$out" "warning" "a write with gslbd running: no warning"

# 2. rollback.
# X; its id as gslbctl prints it (the health thread may write right
# after it, so the newest record need not be X).
idx=$(CTL weight set www.gslb.test a=10 b=7 2>/dev/null | sed -n 's/^change \([0-9]*\): .*/\1/p')
SUDO_USER=otheruser CTL service set s1.gslb.test --ttl 60 >/dev/null 2>&1
CTL weight set www.gslb.test nx=1 >/dev/null 2>&1 && fail "weight set nx accepted"
# b's probe target comes up: the health thread writes b's recovery
# after X.
start_httpd $DEAD
for _ in $(tseq 60); do CTL log --since $((idx + 1)) | grep -q "  health " && break; sleep 0.5; done
expect_has "$(CTL log --since $((idx + 1)))" "^ +[0-9]+  [0-9T:-]+Z  health +health" "the health thread wrote after this user's change"
# The health thread may write at any time: only the other records count.
users_log() { CTL log | grep -Evc '^ +[0-9]+  [0-9T:-]+Z  health '; }
nlog=$(users_log)
out=$(CTL rollback --dry-run)
expect_has "$out" "would undo change $idx .*weight set www\.gslb\.test \*/\* a=10 b=7" "rollback --dry-run names this user's change, not another's"
expect_has "$out" "^  weight set www\.gslb\.test \*/\* a=10 b=5$" "rollback --dry-run shows the undo"
[ "$(users_log)" = "$nlog" ] && ok "rollback --dry-run writes nothing" || fail "rollback --dry-run wrote"
out=$(CTL rollback 2>&1)
expect_has "$out" "undoing change $idx: " "bare rollback undoes this user's newest change, past health and other users"
expect_has "$(CTL weight list www.gslb.test)" "a=10 b=5" "rollback restored the row"
expect_has "$(CTL --json service show s1.gslb.test)" '"ttl": 60' "the other user's change stays"
# Since the change undone: the health thread may have written after the
# rollback.
out=$(CTL --json log --since $((idx + 1)))
expect_has "$out" "\"undoes\": $idx" "the rollback record says what it undoes"
# Repeating walks further back: the capacity 5 change, not a redo.
out=$(CTL rollback 2>&1)
expect_not "$out" "undoing change $idx" "a second rollback does not redo"
expect_has "$out" "undoing change [0-9]+: node set a capacity=5" "a second rollback walks back"
out=$(SUDO_USER=otheruser CTL rollback 2>&1)
expect_has "$out" "service set s1\.gslb\.test ttl=60" "another user's rollback undoes that user's change"
# A rollback deletes only what its change added: a service just added,
# or one row of a small table, is not a mass deletion (no --force), and
# --dry-run exits as the rollback does.
out=$(SUDO_USER=nobody2 CTL service add new.gslb.test 2>&1)
out=$(SUDO_USER=nobody2 CTL weight set new.gslb.test a=1 2>&1)
rows=$(CTL --json weight list | python3 -c "import json,sys; print(len(json.load(sys.stdin)['rows']))")
[ "$rows" -lt 10 ] && ok "$rows weight rows: deleting one is more than 10 %" ||
	fail "the table has $rows rows: one row is not above the share"
out=$(SUDO_USER=nobody2 CTL rollback --dry-run 2>&1) && ok "rollback --dry-run of a row added: exit 0" ||
	fail "rollback --dry-run of a row added: exit 1: $out"
out=$(SUDO_USER=nobody2 CTL rollback 2>&1) && ok "rollback of a row added needs no --force" ||
	fail "rollback of a row added: $out"
expect_not "$(CTL weight list)" "new\.gslb\.test" "the row it added is gone"
out=$(SUDO_USER=nobody2 CTL rollback 2>&1) && ok "rollback of a service added needs no --force" ||
	fail "rollback of a service added: $out"
expect_not "$(CTL service list)" "new\.gslb\.test" "the service it added is gone"
out=$(SUDO_USER=nobody2 CTL rollback --force 2>&1)
expect_has "$out" "nobody2 has no change left" "rollback --force is still accepted"
CTL export > "$T/now.json"
CTL apply --dry-run "$T/now.json" >/dev/null 2>&1 && ok "apply --dry-run of an equal file exits 0" ||
	fail "apply --dry-run of an equal file"
out=$(SUDO_USER=nobody3 CTL rollback 2>&1) && fail "rollback with no change of the user" ||
	expect_has "$out" "nobody3 has no change left to roll back" "a user without changes: nothing to roll back"

# Cutover ids are never reused, even after delete and rollback.
S=$(date -u -d '+2 days' +%Y-%m-%dT%H:%M:%SZ); E=$(date -u -d '+2 days 2 hours' +%Y-%m-%dT%H:%M:%SZ)
E2=$(date -u -d '+2 days 3 hours' +%Y-%m-%dT%H:%M:%SZ)
expect_has "$(CTL cutover add --region cn-bj --start "$S" --end "$E" 2>&1)" "cutover add c1 " "first window is c1"
CTL cutover del c1 >/dev/null 2>&1
expect_has "$(CTL cutover add --region cn-bj --start "$S" --end "$E" 2>&1)" "cutover add c2 " "after deleting c1 the next is c2"
CTL rollback >/dev/null 2>&1
expect_has "$(CTL cutover add --region cn-bj --start "$S" --end "$E2" 2>&1)" "cutover add c3 " "after rolling back c2 the next is c3"

# Two nodes with one address: one record in the answer.
CTL service add dup.gslb.test --answers 2 >/dev/null 2>&1
CTL node add d1 --addr 192.0.2.60 >/dev/null 2>&1
CTL node add d2 --addr 192.0.2.60 --addr 192.0.2.61 >/dev/null 2>&1
CTL weight set dup.gslb.test d1=1 d2=1 >/dev/null 2>&1
dup_answer() { out=$(q dup.gslb.test A +short | sort | tr '\n' ' '); [ "$out" = "192.0.2.60 192.0.2.61 " ]; }
wait_until 5 dup_answer
[ "$out" = "192.0.2.60 192.0.2.61 " ] && ok "no duplicate record when two nodes share an address" ||
	fail "answer with a shared address: $out"

# 3. After gslbd stops: status says since when its health data is.
gslbd_stop
out=$(CTL status)
expect_has "$out" "^gslbd is not running: health data is from 20[0-9-]+T[0-9:]+Z$" "status after gslbd stopped"
expect_has "$(CTL --json status)" '"running": false' "status --json: not running"
finish
