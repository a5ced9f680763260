# SPDX-License-Identifier: MIT
# Shared helpers of the integration tests: each test sources this file,
# starts the real gslbd on loopback ports with its own configuration and
# zones in a private directory, queries it with real clients (dig, kdig,
# drill), and stops it by PID on exit.
#
#   . "$(dirname "$0")/lib.sh"
#   gslbd_start [extra gslbd args]     # uses $T/gslbd.conf; sets $PORT, $PID
#   q NAME TYPE [dig args]             # dig @127.0.0.1 -p $PORT, full output
#   expect_status OUT STATUS ; expect_has OUT REGEX ; expect_not OUT REGEX
#   ok "message" / fail "message"      # fail exits non-zero at the end
#   CTL ARGS...                        # gslbctl -c $T/gslbd.conf (remote: below)
#   gslb_zone [RECORD...]              # $T/z.zone: zone gslb.test
#   expect_flag OUT FLAG / expect_noflag OUT FLAG   # header flags (aa, tc)
#   expect_count OUT SECTION N         # SECTION: ANSWER, AUTHORITY, ...
#   section OUT SECTION                # the RR lines of one section
#   py [args] <<'EOF' ... EOF          # python3 with dnsraw.py importable
#   write_conf_zones "SERVER-YAML" NAME=FILE...   # several zones at once
#   wait_until SECONDS CONDITION...    # polls CONDITION every 0.3 s
#   mini_zone FILE TTL OCTET           # a zone of SOA, NS, ns1 and www
#   unbound_stubs PORT ZONE...         # Unbound stub zones to gslbd
#   stop_pid PID                       # SIGTERM, SIGKILL after 5 s (cleanup uses it)
#   tseq N                             # 1..N scaled: for _ in $(tseq 50)
#   tscale N                           # N scaled by TEST_TIME_FACTOR
#
# Deadlines: every wait in these tests polls for its condition and gives
# up after a deadline; TEST_TIME_FACTOR (default 1, may be fractional)
# multiplies every deadline, for a slow or busy machine or a sanitizer
# build.  It lengthens only the time a test is willing to wait, never
# what it measures: a test that passes at 1 passes at 3, only later when
# it fails.
#
# Remote mode (GSLB_TEST_REMOTE=1, tests/run.sh's remote/ entries): the
# same test, with every CTL run while the test's gslbd is up going
# through gslbd's HTTP API (gslbctl --server, POST /v1/run) instead of
# the local store; see "Remote mode" below.  CTL_ACTOR and CTL_HOST are
# the audit's actor and host of such a change in the mode the test runs
# in (a regex and a text), for the checks of the log.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=${B:-build}
GSLBD="$ROOT/$B/gslbd"
TESTNAME=$(basename "$0" .sh)
REMOTE=${GSLB_TEST_REMOTE:-}
[ "$REMOTE" = 0 ] && REMOTE=
# A remote run has a tree (and, run alone, a port) of its own.
[ -n "$REMOTE" ] && TESTNAME=${TESTNAME}_remote
# Separate trees per base port, so that two suites can run side by side.
T="$ROOT/tests/tmp/${TESTPORT:-15300}/$TESTNAME"
rm -rf "$T"
mkdir -p "$T"
# Each test script gets its own port: the base port of its slot in
# tests/run.sh (TEST_SLOTTED, one test at a time there), or, run alone,
# the base port plus a hash of its name.
if [ -n "${TEST_SLOTTED:-}" ]; then
	PORT=${TESTPORT:-15300}
else
	PORT=$(( ${TESTPORT:-15300} + $(printf '%s' "$TESTNAME" | cksum | cut -d' ' -f1) % 2000 ))
fi
PID=
FAILS=0
CHECKS=0
# TEST_TIME_FACTOR in thousandths, for shell arithmetic.
TF_MILLI=$(awk -v f="${TEST_TIME_FACTOR:-1}" 'BEGIN { m = int(f * 1000 + 0.5); print (m < 1000 ? 1000 : m) }')
export TEST_TIME_FACTOR=${TEST_TIME_FACTOR:-1}

# N (a whole number of seconds, tenths, rounds...) times TEST_TIME_FACTOR,
# rounded up.
tscale() { echo $(( ($1 * TF_MILLI + 999) / 1000 )); }
# 1 .. N scaled: the count of a polling loop, `for _ in $(tseq 50)`.
tseq() { seq "$(tscale "$1")"; }

# Stops the process PID (if it runs): SIGTERM, then SIGKILL after 5 s.
stop_pid() { # pid
	if [ -n "$1" ] && kill -0 "$1" 2>/dev/null; then
		kill "$1" 2>/dev/null
		for _ in $(tseq 50); do kill -0 "$1" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$1" 2>/dev/null
	fi
	return 0
}

# In remote mode, a test that sent no command through the API (finish
# says so; this for the tests that end without finish) fails.
cleanup() {
	stop_pid "$PID"
	if [ -n "$REMOTE" ] && [ ! -s "$T/remote.calls" ]; then
		[ -n "${REMOTE_TOLD:-}" ] || echo "FAIL - remote mode: no command went through the API"
		exit 1
	fi
}
trap cleanup EXIT

ok()   { CHECKS=$((CHECKS + 1)); echo "ok   - $*"; }
fail() { CHECKS=$((CHECKS + 1)); FAILS=$((FAILS + 1)); echo "FAIL - $*"; }

# Runs CONDITION (a command and its arguments) every 0.3 s until it
# succeeds (0) or SECONDS (scaled) have passed (1).
wait_until() {
	local end=$((SECONDS + $(tscale "$1")))
	shift
	while [ $SECONDS -lt $end ]; do
		"$@" && return 0
		sleep 0.3
	done
	return 1
}

# Writes a minimal configuration for one zone; tests may write their own.
write_conf() { # zone-name zone-file [extra yaml...]
	cat > "$T/gslbd.conf" <<EOC
server:
  listen: [ "127.0.0.1@$PORT", "::1@$PORT" ]
  workers: 2
  identity: test.ns
  tcp-idle-timeout: 3
database:
  path: db
zones:
  - name: $1
    file: $2
${3:-}
EOC
}

# Writes a configuration serving several zones; the first argument holds
# extra lines for the server section (indented by two spaces), or "".
write_conf_zones() { # server-yaml name=file...
	local extra=$1 z
	shift
	{
		echo "server:"
		echo "  listen: [ \"127.0.0.1@$PORT\", \"::1@$PORT\" ]"
		if [ -n "$extra" ]; then echo "$extra"; fi
		grep -q '^  workers:' <<<"$extra" || echo "  workers: 2"
		grep -q '^  identity:' <<<"$extra" || echo "  identity: test.ns"
		grep -q '^  tcp-idle-timeout:' <<<"$extra" ||
			echo "  tcp-idle-timeout: 3"
		echo "database:"
		echo "  path: db"
		echo "zones:"
		for z in "$@"; do
			echo "  - name: ${z%%=*}"
			echo "    file: ${z#*=}"
		done
	} > "$T/gslbd.conf"
}

# gslbctl on this test's configuration.
CTL_LOCAL() { "$ROOT/$B/gslbctl" -c "$T/gslbd.conf" "$@"; }
CTL() {
	if remote_up && remote_ok "$@"; then
		local who=tester
		[ "${SUDO_USER:-}" != "$REMOTE_SUDO_USER" ] && who=$SUDO_USER
		remote_token "$who"
		echo "$*" >>"$T/remote.calls"
		"$ROOT/$B/gslbctl" --server "https://127.0.0.1:$REMOTE_APORT" \
			--token-file "$T/remote-$who.tok" --cacert "$T/remote.crt" "$@"
	else
		CTL_LOCAL "$@"
	fi
}

# Remote mode.  gslbd_start adds an api section to $T/gslbd.conf (a port
# of its own, 3190 above the DNS port, beyond the probe servers', and a
# self-signed certificate for 127.0.0.1) and, once, an admin token
# "tester" made with the local gslbctl (a change in the log, before the
# daemon starts); then CTL runs gslbctl --server while that gslbd runs.
# The user is the token's name: SUDO_USER=NAME CTL ..., a change of user
# NAME locally, is one of token NAME remotely (an admin token made when
# first used).  Before, after, and for what the API refuses by design
# (a configuration or store of its own: -c, -d, --create,
# --local-override; the API's tokens), CTL stays local.
REMOTE_APORT=$((PORT + 3190))
CTL_ACTOR='gslbctl:[a-z]+'
CTL_HOST=$(hostname 2>/dev/null || echo localhost)
if [ -n "$REMOTE" ]; then
	CTL_ACTOR='api:tester'
	CTL_HOST=127.0.0.1
fi
REMOTE_PID=
# The SUDO_USER the test was started with (sudo's) is the test's own
# user, "tester"; one the test sets for a command is another.
REMOTE_SUDO_USER=${SUDO_USER:-}
# The daemon started in remote mode runs, and is not stopped (SIGSTOP:
# a test that makes changes while gslbd cannot look makes them locally).
remote_up() {
	local st=
	[ -n "$REMOTE_PID" ] && [ "$REMOTE_PID" = "$PID" ] || return 1
	read -r _ _ st _ 2>/dev/null <"/proc/$PID/stat" || return 1
	[ "$st" != T ] && [ "$st" != t ] && [ "$st" != Z ]
}
remote_ok() { # gslbctl args: 0 when they may run through the API
	local a
	for a in "$@"; do
		case $a in
		-c | -c* | --config* | -d | -d* | --db* | --create | --local-override) return 1 ;;
		-*) ;;
		api) return 1 ;;
		*) return 0 ;;
		esac
	done
	return 0
}
# kill -STOP / -CONT of the test's gslbd returns once its main thread
# (the API's) has stopped or runs again: the signal takes effect a little
# later, and a CTL right after a kill -STOP must already be local.
if [ -n "$REMOTE" ]; then
	kill() {
		builtin kill "$@" || return
		local want st
		case $1 in
		-STOP | -SIGSTOP | -19) want=T ;;
		-CONT | -SIGCONT | -18) want=R ;;
		*) return 0 ;;
		esac
		[ "${2:-}" = "$PID" ] || return 0
		for _ in $(seq 200); do
			read -r _ _ st _ 2>/dev/null <"/proc/$PID/stat" || return 0
			case $want$st in TT | Tt | R[!Tt]) return 0 ;; esac
			sleep 0.01
		done
		return 0
	}
fi
# Called by gslbd_start in remote mode, before the daemon starts.
remote_setup() {
	if ! grep -q '^# remote mode$' "$T/gslbd.conf"; then
		grep -q '^api:' "$T/gslbd.conf" &&
			{ echo "remote mode: the test has an api section of its own"; exit 1; }
		[ -f "$T/remote.crt" ] ||
			openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost \
				-addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
				-keyout "$T/remote.key" -out "$T/remote.crt" >/dev/null 2>&1 ||
			{ echo "remote mode: openssl req failed"; exit 1; }
		printf '# remote mode\napi:\n  listen: [ "127.0.0.1@%s" ]\n  tls-cert: %s\n  tls-key: %s\n  rate: 100000\n' \
			"$REMOTE_APORT" "$T/remote.crt" "$T/remote.key" >>"$T/gslbd.conf"
	fi
	remote_token tester
}
# remote_token NAME: $T/remote-NAME.tok, an admin token NAME in the
# test's store, made by the local gslbctl if the store lacks it (once a
# store: a test may start again on a new one).
remote_token() { # name
	local f="$T/remote-$1.tok"
	# Checked once for each daemon started (in a file: CTL runs in
	# subshells).
	[ -s "$f" ] && [ "$(cat "$T/remote-$1.pid" 2>/dev/null)" = "$PID" ] && return 0
	if ! env -u SUDO_USER "$ROOT/$B/gslbctl" -c "$T/gslbd.conf" --json api token list 2>/dev/null |
		grep -q "\"name\": \"$1\""; then
		env -u SUDO_USER "$ROOT/$B/gslbctl" -c "$T/gslbd.conf" --offline \
			api token add "$1" --role admin | awk '/^token /{ print $3 }' >"$f"
		chmod 600 "$f"
	fi
	[ -s "$f" ] || { echo "remote mode: no token $1"; exit 1; }
	echo "$PID" >"$T/remote-$1.pid"
}

# Writes $T/z.zone, the minimal zone gslb.test for GSLB tests, with any
# extra records given as arguments, one record per argument.
# geo_mmdb: $T/geo.mmdb from the networks on stdin (geoip/build-demo.pl's
# columns: NETWORK REGION ISP ASN ...), kept in $T/geo.txt.
geo_mmdb() {
	cat > "$T/geo.txt"
	perl "$ROOT/geoip/build-demo.pl" "$T/geo.txt" "$T/geo.mmdb" >/dev/null ||
		{ echo "cannot build mmdb"; exit 1; }
}
# geo_two_regions: $T/geo.mmdb with two client networks, cn-gz/ctcc
# (101.6.0.0/16) and cn-bj/cucc (101.7.0.0/16).
geo_two_regions() {
	geo_mmdb <<'EOG'
101.6.0.0/16     cn-gz  ctcc  4134
101.7.0.0/16     cn-bj  cucc  4837
EOG
}

gslb_zone() {
	{
		echo '$TTL 300'
		echo '@   SOA ns1 host 1 3600 600 86400 120'
		echo '    NS  ns1'
		echo 'ns1 A   192.0.2.53'
		for r in "$@"; do echo "$r"; done
	} > "$T/z.zone"
}

# Prints a zone for ORIGIN with ns1, www and "big": 60 TXT records of 40
# bytes, about 3 kB, beyond any UDP limit the tests use.
big_txt_zone() { # origin
	cat <<EOZ
\$ORIGIN $1.
\$TTL 3600
@       IN SOA  ns1 hostmaster 1 3600 600 86400 300
        IN NS   ns1
ns1     IN A    192.0.2.1
www     IN A    192.0.2.10
EOZ
	for i in $(seq -w 1 60); do
		echo "big IN TXT \"record $i ...............................\""
	done
}

# After a SIGHUP, waits (at most 5 s) until NAME TYPE CLASS gets STATUS;
# leaves the last answer in $out.
wait_status() { # name type class status
	for _ in $(tseq 50); do
		out=$(q "$1" "$2" -c "$3")
		grep -q "status: $4" <<<"$out" && return 0
		sleep 0.1
	done
	return 1
}

# Waits until something accepts TCP connections on 127.0.0.1 PORT (at
# most 5 s), e.g. a probe target just started.
wait_tcp() { # port
	for _ in $(tseq 50); do
		python3 -c "import socket; socket.create_connection(('127.0.0.1', $1), 0.2)" 2>/dev/null &&
			return 0
		sleep 0.1
	done
	return 1
}

# Starts tests/integ/httpd.py on 127.0.0.1 PORT in mode "ok" (switch it
# by writing a mode into $T/modePORT; "slow" answers take 0.6 s) and waits
# until it listens.  stop_httpds stops every one started so.
start_httpd() { # port
	echo ok > "$T/mode$1"
	python3 "$ROOT/tests/integ/httpd.py" "$1" "$T/mode$1" 0.6 >/dev/null 2>&1 &
	echo $! >> "$T/httpd.pids"
	wait_tcp "$1"
}
stop_httpds() {
	[ -f "$T/httpd.pids" ] || return 0
	for p in $(cat "$T/httpd.pids"); do kill "$p" 2>/dev/null; done
}

# Waits until `gslbctl status` shows COUNT nodes up with a score (at most
# TENTHS tenths of a second, default 100).
wait_up() { # count [tenths]
	for _ in $(tseq "${2:-100}"); do
		[ "$(CTL status | grep -cE ' up +[a-z]+ +[a-z]+ +[0-9]+ ')" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

# wait_for SECONDS "expected answers": polls the test's own answers()
# every 0.1 s until it prints the expected answers; prints the
# milliseconds it took (0), or "timeout (last: ...)" (1).  SECONDS is
# about the time the rule needs; the test waits three times that
# (scaled), so that a loaded machine does not fail it: the precise
# reaction times are the benchmark's (bench/health.sh), not the tests'.
wait_for() {
	local t0 got
	t0=$(date +%s%N)
	for _ in $(tseq $(( $1 * 30 ))); do
		got=$(answers)
		[ "$got" = "$2" ] && { echo $(( ($(date +%s%N) - t0) / 1000000 )); return 0; }
		sleep 0.1
	done
	echo "timeout (last: $got)"
	return 1
}

# ro_store: a copy of the test's store in $RO/db, a new directory of
# root's: data.mdb readable by all, lock.mdb writable by all (remove $RO
# at the end).  as_nobody ARGS... runs gslbctl -d $RO/db as user nobody.
ro_store() {
	RO=$(mktemp -d /tmp/gslbd-ro.XXXXXX)
	chmod 755 "$RO"
	mkdir "$RO/db"
	cp "$T/db/data.mdb" "$RO/db/"
	touch "$RO/db/lock.mdb"
	chmod 755 "$RO/db"; chmod 644 "$RO/db/data.mdb"; chmod 666 "$RO/db/lock.mdb"
}
as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$ROOT/$B/gslbctl" -d "$RO/db" "$@"; }

# Prints the server section of an Unbound configuration for a resolver
# on loopback port PORT, kept in DIR, with the modules MODULES and the
# subnetcache settings that send ECS to gslbd (test_subnetcache,
# test_dnssec); the caller adds trust anchors and stub zones.
unbound_server_conf() { # dir port modules
	cat <<EOU
server:
  interface: 127.0.0.1
  port: $2
  do-ip6: no
  do-not-query-localhost: no
  directory: "$1"
  pidfile: "$1/unbound.pid"
  logfile: "$1/unbound.log"
  use-syslog: no
  chroot: ""
  username: ""
  num-threads: 1
  verbosity: 1
  access-control: 127.0.0.0/8 allow
  module-config: "$3"
  send-client-subnet: 127.0.0.1
  client-subnet-always-forward: yes
  max-client-subnet-ipv4: 24
  qname-minimisation: no
  local-zone: "test." nodefault
EOU
}

# Prints Unbound's stub-zone clauses sending ZONE... to 127.0.0.1@PORT,
# and remote control off: the end of a configuration after
# unbound_server_conf (test_dnssec, test_dnsroll).
unbound_stubs() { # port zone...
	local port=$1 z
	shift
	for z in "$@"; do
		printf 'stub-zone:\n  name: "%s"\n  stub-addr: 127.0.0.1@%s\n' "$z" "$port"
	done
	printf 'remote-control:\n  control-enable: no\n'
}

# Writes FILE, a zone of its own (SOA, NS ns1, ns1 A ADDR) with
# www A 192.0.2.WWW and TTLs of TTL.
mini_zone() { # file ttl www-last-octet [ns1-address]
	cat > "$1" <<EOZ
\$TTL $2
@   SOA ns1 host 1 3600 600 86400 ${2}
    NS  ns1
ns1 A   ${4:-192.0.2.53}
www A   192.0.2.$3
EOZ
}

# Starts gslbd and waits until it answers (at most 10 s).
gslbd_start() {
	[ -n "$REMOTE" ] && remote_setup
	"$GSLBD" -c "$T/gslbd.conf" "$@" >>"$T/gslbd.log" 2>&1 &
	PID=$!
	for _ in $(tseq 100); do
		if dig @127.0.0.1 -p "$PORT" +time=1 +tries=1 id.server CH TXT >/dev/null 2>&1; then
			if [ -n "$REMOTE" ]; then
				wait_tcp "$REMOTE_APORT" ||
					{ echo "remote mode: the API does not listen; gslbd's log:"; cat "$T/gslbd.log"; exit 1; }
				REMOTE_PID=$PID
			fi
			return 0
		fi
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "gslbd did not start; its log:"
	cat "$T/gslbd.log"
	exit 1
}

# Sends SIGHUP and waits (at most 5 s) for "reload: done" in the log.
reload_done() {
	local before
	before=$(wc -l < "$T/gslbd.log")
	kill -HUP "$PID"
	for _ in $(tseq 50); do
		tail -n +$((before + 1)) "$T/gslbd.log" | grep -q "reload: done" && return 0
		sleep 0.1
	done
	fail "no reload in the log"
}

# The word after the word $2 in the line $1 ("sent 5 tc 2", tc: 2).
word_after() { awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' <<<"$1"; }

# Stops gslbd (SIGTERM) and checks that it exited cleanly.
gslbd_stop() {
	kill "$PID"
	local rc=0
	wait "$PID" || rc=$?
	PID=
	return $rc
}

q() { # name type [dig args...]
	local name=$1 type=$2
	shift 2
	dig @127.0.0.1 -p "$PORT" +norec +time=2 +tries=1 "$name" "$type" "$@" 2>&1
}

expect_status() { # output status message
	if grep -q "status: $2," <<<"$1"; then ok "${3:-status $2}"
	else fail "${3:-status $2}: got $(grep -o 'status: [A-Z]*' <<<"$1" || echo 'no answer')"; fi
}
expect_has() { # output regex message
	if grep -Eq -- "$2" <<<"$1"; then ok "${3:-has $2}"
	else fail "${3:-has $2}"; echo "$1" | sed 's/^/    /'; fi
}
expect_not() { # output regex message
	if grep -Eq -- "$2" <<<"$1"; then fail "${3:-lacks $2}"; echo "$1" | sed 's/^/    /'
	else ok "${3:-lacks $2}"; fi
}

# A client that must be answered throughout: @2 is "GOT/SENT" from a
# flood script, at least @3 sent and every one answered.
expect_all_answered() { # message got/sent min
	if [ "${2%/*}" = "${2#*/}" ] && [ "${2%/*}" -ge "$3" ]; then ok "$1: $2"
	else fail "$1: only $2"; fi
}
expect_flag() { # output flag [message]
	if grep -Eq "^;; flags:[^;]* $2[ ;]" <<<"$1"; then ok "${3:-flag $2 set}"
	else fail "${3:-flag $2 set}: $(grep -m1 '^;; flags:' <<<"$1")"; fi
}
expect_noflag() { # output flag [message]
	if grep -Eq "^;; flags:[^;]* $2[ ;]" <<<"$1"; then
		fail "${3:-flag $2 clear}: $(grep -m1 '^;; flags:' <<<"$1")"
	else ok "${3:-flag $2 clear}"; fi
}
expect_count() { # output ANSWER|AUTHORITY|ADDITIONAL n [message]
	local got
	got=$(grep -m1 -o "$2: [0-9]*" <<<"$1" | grep -o '[0-9]*$')
	if [ "$got" = "$3" ]; then ok "${4:-$2 count $3}"
	else fail "${4:-$2 count $3}: got ${got:-none}"; echo "$1" | sed 's/^/    /'; fi
}
section() { # output ANSWER|AUTHORITY|ADDITIONAL
	awk -v s=";; $2 SECTION:" '$0 == s { on = 1; next }
		/^;;/ || /^$/ { on = 0 } on' <<<"$1"
}

# python3 with tests/integ/dnsraw.py importable and PORT exported; the
# script comes on stdin, or as the first argument when that spans lines
# (`py "import ..." && ok ...`).  Bounded by a timeout like everything
# else.
py() {
	if [ $# -gt 0 ] && [[ $1 == *$'\n'* ]]; then
		local script=$1
		shift
		PORT=$PORT PYTHONPATH="$ROOT/tests/integ" timeout 30 python3 -c "$script" "$@"
		return
	fi
	PORT=$PORT PYTHONPATH="$ROOT/tests/integ" timeout 30 python3 - "$@"
}

# Ends the test: prints a summary and returns the exit status.
finish() {
	# Remote mode proves nothing if no command went through the API.
	if [ -n "$REMOTE" ]; then
		REMOTE_TOLD=1
		if [ -s "$T/remote.calls" ]; then ok "remote mode: $(wc -l <"$T/remote.calls") commands through the API"
		else fail "remote mode: no command went through the API"; fi
	fi
	echo "$CHECKS checks, $FAILS failed"
	if [ -n "$PID" ] && ! kill -0 "$PID" 2>/dev/null; then
		echo "FAIL - gslbd died during the test; its log:"; cat "$T/gslbd.log"; exit 1
	fi
	[ "$FAILS" -eq 0 ]
}
