#!/bin/bash
# gslbctl --server: commands run by a remote gslbd through POST /v1/run
# give the same standard output, standard error and exit status as
# gslbctl on the daemon's machine, word for word (--json too); the audit
# records the token's name and the client; the token's role, the
# options that would pick another configuration or store and the names
# of files on the daemon's machine are refused; the limits (time, output,
# commands at once) and a command running when gslbd stops.
#
# Reads run both ways on the daemon's store.  A write runs through the
# API on the daemon's store (A) and locally on a second store (B) that
# has had the same changes; their outputs are compared word for word
# but for the change's id ("change N"), since the daemon's health thread
# records its own decisions on A only (a new node's first verdict), and
# the id the API gave is checked against A's log instead.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/api_lib.sh"
gslb_zone
SPORT=$((PORT + 2))
write_conf gslb.test z.zone "api:
  listen: [ \"127.0.0.1@$APORT\" ]
  tls-cert: api.crt
  tls-key: api.key
  rate: 1000
stats:
  listen: [ \"127.0.0.1@$SPORT\" ]"
# api.run-timeout's range, checked with the configuration.
sed 's/^  rate: 1000$/  rate: 1000\n  run-timeout: 0/' "$T/gslbd.conf" >"$T/bad.conf"
out=$("$GSLBD" -c "$T/bad.conf" --check 2>&1) && fail "run-timeout 0 accepted" ||
	expect_has "$out" "run-timeout" "check: run-timeout 0 is out of range"
sed 's/^  rate: 1000$/  rate: 1000\n  run-timeout: 3600/' "$T/gslbd.conf" >"$T/good.conf"
out=$("$GSLBD" -c "$T/good.conf" --check 2>&1) && ok "check: run-timeout 3600 passes" ||
	fail "run-timeout 3600: $out"
mkdir -p "$T/twin"
cp "$T/gslbd.conf" "$T/z.zone" "$T/api.crt" "$T/api.key" "$T/twin/"
CTLB() { "$ROOT/$B/gslbctl" -c "$T/twin/gslbd.conf" "$@"; }
# The same setup in both stores.
for c in CTL CTLB; do
	$c --offline service add www.gslb.test >/dev/null
	$c --offline node add n1 --addr 192.0.2.1 >/dev/null
done
tok() { # name role -> the token, made in A (and a twin in B, to keep the ids equal)
	CTLB --offline api token add "$1" --role "$2" >/dev/null
	CTL --offline api token add "$1" --role "$2" | awk '/^token /{ print $3 }'
}
tok boss admin >"$T/admin.tok"
tok deployer operate >"$T/operate.tok"
tok reader read >"$T/read.tok"
chmod 600 "$T"/*.tok

gslbd_start
wait_tcp "$APORT" 2>/dev/null || true
# RT admin|operate|read|wrong ARGS...: gslbctl --server against the
# daemon with that token; R: with the admin one.
RT() { local t=$1; shift; "$ROOT/$B/gslbctl" --server "$U" --token-file "$T/$t.tok" --cacert "$T/api.crt" "$@"; }
R() { RT admin "$@"; }

# same MESSAGE LOCAL-FN ARGS...: gslbctl with the local function (CTL:
# the daemon's own store, CTLB: the twin store) and through the API
# give the same stdout, stderr and exit status (both() runs them).
# With IN=FILE, both read FILE as standard input.  With NORM=1, the
# change ids are taken out of both before the comparison.
both() { # local-fn args...: runs both ways; 0 when all is the same
	local loc=$1
	shift
	lc=0 rc=0
	$loc "$@" <"${IN:-/dev/null}" >"$T/l.out" 2>"$T/l.err" || lc=$?
	R "$@" <"${IN:-/dev/null}" >"$T/r.out" 2>"$T/r.err" || rc=$?
	cp "$T/r.out" "$T/r.raw"
	if [ -n "${NORM:-}" ]; then
		sed -Ei 's/^change [0-9]+: /change N: /; s/"change": [0-9]+/"change": N/' \
			"$T/l.out" "$T/r.out"
	fi
	[ "$lc" = "$rc" ] && cmp -s "$T/l.out" "$T/r.out" && cmp -s "$T/l.err" "$T/r.err"
}
same() {
	local msg=$1 loc=$2
	shift 2
	# A read is asked again once when the two differ: they may have
	# straddled a second, and the output carries its time ("generated").
	if both "$loc" "$@" || { [ "$loc" = CTL ] && both "$loc" "$@"; }; then
		ok "$msg (exit $rc)"
	else
		fail "$msg: exit local $lc remote $rc; stdout: $(diff "$T/l.out" "$T/r.out" | head -5); stderr: $(diff "$T/l.err" "$T/r.err" | head -5)"
	fi
}
# A write: through the API on A, locally on B (--offline: B has no
# daemon to warn about).
same_w() { local msg=$1; shift; NORM=1 same "$msg" CTLB --offline "$@"; }
same_r() { local msg=$1; shift; same "$msg" CTL "$@"; }

# The audit record of the newest change in A but for the health
# thread's own.
last_rec() {
	CTL --json log --limit 5 | python3 -c '
import json, sys
recs = [r for r in json.load(sys.stdin)["records"] if r.get("actor") != "health"]
print(json.dumps(recs[-1], indent=2) if recs else "")'
}
# call's body of a POST /v1/run
run() { local t=$1 body=$2; call "$(cat "$T/$t.tok")" POST /v1/run -H 'Content-Type: application/json' -d "$body"; }

# Writes, both ways.
same_w "service add" service add img.gslb.test --ttl 60 --answers 2
id=$(sed -n 's/^change \([0-9]*\): .*/\1/p' "$T/r.raw")
expect_has "$(CTL log --since "$id" --limit 1)" "^ *$id .*api:boss .*service add img.gslb.test" \
	"the change id the API gave is the daemon's store's"
same_w "service add --json" service add vod.gslb.test --json
same_w "node add" node add n2 --addr 192.0.2.2 --region cn-bj --isp ctcc
same_w "node add, --json before the command" --json node add n3 --addr 192.0.2.3
same_w "weight set" weight set www.gslb.test n1=100 n2=50
same_w "weight set --json" weight set img.gslb.test n2=10 n3=20 --json
same_w "weight set, one node" weight set vod.gslb.test n3=5
rec=$(last_rec)
expect_has "$rec" '"actor": "api:boss"' "audit: the actor is api:NAME"
expect_has "$rec" '"user": "boss"' "audit: the user is the token's name"
expect_has "$rec" '"host": "127.0.0.1"' "audit: the host is the client's address"
expect_has "$rec" '"what": "weight set vod.gslb.test region=\* isp=\*"' "audit: gslbctl's words"
[ "$(CTL export)" = "$(CTLB export)" ] && ok "both stores hold the same table" ||
	fail "the stores differ: $(diff <(CTL export) <(CTLB export) | head)"

# apply FILE: the file is read on the client and sent as stdin.
CTL export | python3 -c '
import json, sys
d = json.load(sys.stdin)
d["services"].append({"name": "new.gslb.test"})
print(json.dumps(d, indent=1))' >"$T/doc.json"
cd "$T"
same_r "apply --dry-run FILE" apply --dry-run doc.json
same_w "apply FILE" apply doc.json
same_w "apply FILE again: nothing to change" apply doc.json
IN=$T/doc.json same_r "apply - (standard input)" apply --dry-run -
same_w "apply of a file that is not there" apply nothere.json
printf '{"version": 1, "services": [' >"$T/bad.json"
same_w "apply of a broken file" apply bad.json
expect_has "$(last_rec)" '"what": "apply doc.json \(\+1 ~0 -0\)"' "audit: the file's name, as given"
cd "$ROOT"

# Admin state and metrics.
same_w "node set --admin drain" node set n2 --admin drain
same_w "node set --admin auto (undrain)" node set n2 --admin auto
same_w "node set of something else" node set n3 --region cn-sh --isp cmcc
id=$(sed -n 's/^change \([0-9]*\): .*/\1/p' "$T/r.raw")
out=$(R rollback --dry-run 2>&1) && expect_has "$out" "^rollback would undo change $id \(.* api:boss: node set n3\)" \
	"a bare rollback through the API picks the token's own last change" || fail "rollback: $out"
printf 'n1 loss=0.1\n' >"$T/m.txt"
same_w "metrics push --file" metrics push --file "$T/m.txt"
same_w "metrics push --file of a file that is not there" metrics push --file "$T/none.txt"

# Reads, both ways on the daemon's store.
same_r "service list" service list
same_r "service list --json" --json service list
same_r "service show" service show img.gslb.test
same_r "node list" node list
same_r "node show --json" node show n2 --json
same_r "weight show" weight show www.gslb.test
same_r "weight list --json" weight list --json
same_r "status" status
same_r "status --json" status --json
same_r "log" log
same_r "log --json --limit 3" log --json --limit 3
same_r "export" export
same_r "explain" explain vod.gslb.test --client 192.0.2.99
same_r "an unknown node: exit 1, same text" node show ghost
same_r "a bad weight: exit 1, same text" weight set www.gslb.test n1=-3
same_r "a usage error: exit 2, same text" node frob
same_r "an unknown command: exit 2 and the usage" frobnicate
same_r "an argument too many: exit 2, same text" node list extra
expect_has "$(CTL --help)" "--server URL --token-file FILE" "the usage names --server"
out=$(R stats 2>&1) && expect_has "$out" "queries" "stats: the daemon's counters through the API" ||
	fail "stats: $out"

# Roles.
out=$(RT read node add n9 --addr 192.0.2.9 2>&1); rc=$?
[ "$rc" = 1 ] && expect_has "$out" "^gslbctl: --server .*: HTTP 403: token reader has role read: gslbctl node add needs role admin$" \
	"a read token's write: 403, exit 1" || fail "read write: $rc $out"
out=$(RT read node list 2>&1) && expect_has "$out" "^n1 " "a read token reads" || fail "read: $out"
out=$(RT operate node set n1 --admin drain 2>&1) && expect_has "$out" "node set n1" \
	"an operate token drains" || fail "operate drain: $out"
expect_has "$(last_rec)" '"actor": "api:deployer"' "audit: the operate token's name"
out=$(RT operate node set n1 --admin auto --region cn-bj 2>&1); rc=$?
[ "$rc" = 1 ] && expect_has "$out" "HTTP 403: token deployer has role operate: gslbctl node set needs role admin" \
	"operate: more than the admin state needs admin" || fail "operate set: $rc $out"
out=$(RT operate metrics push n1 loss=0.2 2>&1) && ok "operate pushes metrics" || fail "operate push: $out"
out=$(RT operate api token list 2>&1); rc=$?
[ "$rc" = 1 ] && expect_has "$out" "HTTP 403" "the tokens are admin's" || fail "operate tokens: $rc $out"
out=$(RT operate rollback 2>&1); rc=$?
[ "$rc" = 1 ] && expect_has "$out" "HTTP 403" "operate: no rollback" || fail "operate rollback: $rc $out"

# Refused options and files (the body as another client would send it).
before=$(CTL export)
for o in -c --config -d --db --server --token-file --cacert; do
	out=$(run admin "{\"argv\": [\"$o\", \"/tmp/x\", \"node\", \"list\"]}")
	[ "$(code "$out")" = 400 ] && expect_has "$out" "option $o is not taken through the API" \
		"refused: $o" || fail "$o: $out"
done
for o in --create --local-override --config=/tmp/x -c/tmp/x --conf; do
	out=$(run admin "{\"argv\": [\"$o\", \"node\", \"list\"]}")
	[ "$(code "$out")" = 400 ] && expect_has "$out" '"field": "argv"' "refused: $o" || fail "$o: $out"
done
out=$(run admin '{"argv": ["--offline", "--allow-unknown-location", "node", "list"]}')
[ "$(code "$out")" = 200 ] && expect_has "$out" '"exit": 0' "the harmless options pass" || fail "harmless: $out"
out=$(run admin '{"argv": ["apply", "/etc/passwd"]}')
[ "$(code "$out")" = 400 ] && expect_has "$out" "apply /etc/passwd: the API reads no file on the daemon's machine" \
	"apply FILE naming a file of the daemon's machine: 400" || fail "apply file: $out"
out=$(run admin '{"argv": ["apply", "--dry-run", "--json", "/etc/passwd"]}')
[ "$(code "$out")" = 400 ] && ok "the same after options" || fail "apply file 2: $out"
out=$(run admin '{"argv": ["metrics", "push", "--file", "/etc/passwd"]}')
[ "$(code "$out")" = 400 ] && expect_has "$out" "metrics push --file /etc/passwd: the API reads no file" "metrics push --file FILE: 400" ||
	fail "push file: $out"
out=$(run admin '{"argv": ["metrics", "push", "--file", "-"], "stdin": "n1 loss=0.3\n", "stdin_name": "m.txt"}')
[ "$(code "$out")" = 200 ] && expect_has "$out" "1 measurement from m.txt stored" "metrics push --file - with stdin: 200" ||
	fail "push stdin: $out"
[ "$(CTL export)" = "$before" ] && ok "no refused request changed the table" || fail "changed"
out=$("$ROOT/$B/gslbctl" --server "$U" --token-file "$T/admin.tok" -d "$T/db" node list 2>&1); rc=$?
[ "$rc" = 2 ] && expect_has "$out" "give no -c, -d" "gslbctl --server with -d: usage error" || fail "-d: $rc $out"

# Bad requests.
out=$(run admin '{"argv": "node list"}')
[ "$(code "$out")" = 400 ] && expect_has "$out" '"field": "argv"' "argv not an array: 400" || fail "argv str: $out"
out=$(run admin '{"argv": []}')
[ "$(code "$out")" = 400 ] && ok "an empty argv: 400" || fail "empty: $out"
out=$(run admin '{"argv": ["node", "list"], "shell": true}')
[ "$(code "$out")" = 400 ] && expect_has "$out" '"field": "shell"' "an unknown key: 400 naming it" || fail "key: $out"
out=$(run admin '{"argv": ["node", "list"], "stdin_name": "a\nb"}')
[ "$(code "$out")" = 400 ] && ok "a stdin_name with a newline: 400" || fail "name: $out"
out=$(run admin '{"argv": ["node", "list"], "json": true}')
[ "$(code "$out")" = 200 ] && expect_has "$out" '\\"id\\": \\"n1\\"' "json: true gives --json's output" || fail "json: $out"
out=$(call "$(cat "$T/admin.tok")" GET /v1/run)
[ "$(code "$out")" = 405 ] && ok "GET /v1/run: 405" || fail "GET: $out"
out=$(run admin '{"argv": ["node", "list", "; touch /tmp/gslbd-remote-x"]}')
[ "$(code "$out")" = 200 ] && expect_has "$out" '"exit": 2' "no shell: the words are gslbctl's arguments" ||
	fail "shell: $out"
[ ! -e /tmp/gslbd-remote-x ] && ok "nothing ran a shell" || fail "a shell ran"

# The client's own errors.
out=$("$ROOT/$B/gslbctl" --server "$U" --token-file "$T/none.tok" node list 2>&1); rc=$?
[ "$rc" = 1 ] && expect_has "$out" "^gslbctl: --token-file .*none.tok: No such file" "no token file: exit 1" ||
	fail "no token file: $rc $out"
echo "gslbd_$(printf '0%.0s' $(seq 64))" >"$T/wrong.tok"
out=$(RT wrong node list 2>&1); rc=$?
[ "$rc" = 1 ] && expect_has "$out" "HTTP 401: unknown token" "a wrong token: 401, exit 1" || fail "wrong: $rc $out"
out=$("$ROOT/$B/gslbctl" --server "$U" --token-file "$T/admin.tok" node list 2>&1); rc=$?
[ "$rc" = 1 ] && expect_has "$out" "^gslbctl: --server $U: .*certificate" \
	"a certificate not trusted (no --cacert): exit 1" || fail "tls: $rc $out"
out=$("$ROOT/$B/gslbctl" --server "https://127.0.0.1:$((PORT + 3))" --token-file "$T/admin.tok" node list 2>&1); rc=$?
[ "$rc" = 1 ] && expect_has "$out" "^gslbctl: --server https://127.0.0.1:$((PORT + 3)): .*" \
	"no server there: exit 1" || fail "refused: $rc $out"
out=$("$ROOT/$B/gslbctl" --server "$U" node list 2>&1); rc=$?
[ "$rc" = 2 ] && expect_has "$out" "go together" "--server without --token-file: usage error" || fail "no tf: $rc $out"

expect_has "$(q www.gslb.test A +short)" "192.0.2.[12]" "DNS answers www throughout"

# The limits: a command held past api.run-timeout is killed (504), and
# a fifth one while four run is refused (429).
gslbd_stop || fail "gslbd did not stop cleanly"
sed -i 's/^  rate: 1000$/  rate: 1000\n  run-timeout: '"$(tscale 2)"'/' "$T/gslbd.conf"
# Each command waits longer than the time limit.
GSLBCTL_TEST_DELAY_MS=$((4000 * TF_MILLI / 1000 + 2000)) gslbd_start
wait_tcp "$APORT" 2>/dev/null || true
before=$(CTL export)
for i in 1 2 3 4; do
	R node add "slow$i" --addr "192.0.2.$((100 + i))" >"$T/slow$i.out" 2>&1 &
	echo $! >"$T/slow$i.pid"
done
# running N: this gslbd has started N node commands.
running() { [ "$(grep -c "gslbd\[$PID\].*runs gslbctl node (pid" "$T/gslbd.log")" -ge "$1" ]; }
wait_until 5 running 4 || fail "the four commands did not all start"
out=$(R node list 2>&1); rc=$?
[ "$rc" = 1 ] && expect_has "$out" "HTTP 429: 4 gslbctl commands run already" "a fifth command at once: 429, exit 1" ||
	fail "fifth: $rc $out"
for i in 1 2 3 4; do wait "$(cat "$T/slow$i.pid")"; echo "rc=$?" >>"$T/slow$i.out"; done
out=$(cat "$T/slow1.out")
expect_has "$out" "HTTP 504: gslbctl node: no end after [0-9]+ s: stopped" "a command past run-timeout: 504"
expect_has "$out" "^rc=1$" "and exit 1"
[ "$(CTL export)" = "$before" ] && ok "the killed commands changed nothing" ||
	fail "changed: $(diff <(echo "$before") <(CTL export))"
expect_not "$(ps -o comm= --ppid "$PID")" "gslbctl" "no gslbctl left running"

# A command still running when gslbd stops: killed, and its client told.
R node add slow9 --addr 192.0.2.109 >"$T/stop.out" 2>&1 &
cpid=$!
wait_until 5 running 5 || fail "the command did not start"
child=$(ps -o pid=,comm= --ppid "$PID" | awk '$2 == "gslbctl" { print $1 }')
[ -n "$child" ] && ok "the command runs as gslbd's child" || fail "no gslbctl child of gslbd"
gslbd_stop && ok "gslbd stops cleanly with a command running" || fail "gslbd's exit"
wait "$cpid"; rc=$?
[ "$rc" = 1 ] && expect_has "$(cat "$T/stop.out")" "HTTP 503: gslbd is stopping: the command was stopped" \
	"its client: a clear message, exit 1" || fail "client at stop: $rc $(cat "$T/stop.out")"
[ -z "$child" ] || ! kill -0 "$child" 2>/dev/null && ok "the command was killed" || fail "gslbctl $child still runs"
expect_not "$(CTL node list)" "^slow9 " "and changed nothing"

# A command that writes more than the output limit (made small here) is
# stopped: 502.
GSLBD_TEST_RUN_MAX_OUTPUT=1000 gslbd_start
wait_tcp "$APORT" 2>/dev/null || true
out=$(R frobnicate 2>&1); rc=$?
[ "$rc" = 1 ] && expect_has "$out" "HTTP 502: gslbctl frobnicate: more than 1000 bytes of output: stopped" \
	"more output than the limit: 502, exit 1" || fail "502: $rc $out"
out=$(R node show n1 2>&1) && ok "a short output passes" || fail "short: $out"
finish
