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
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
B=${B:-build}
GSLBD="$ROOT/$B/gslbd"
TESTNAME=$(basename "$0" .sh)
T="$ROOT/tests/tmp/$TESTNAME"
rm -rf "$T"
mkdir -p "$T"
# Each test script gets its own port: the base port plus a hash of its name.
PORT=$(( ${TESTPORT:-15300} + $(printf '%s' "$TESTNAME" | cksum | cut -d' ' -f1) % 2000 ))
PID=
FAILS=0
CHECKS=0

cleanup() {
	if [ -n "$PID" ] && kill -0 "$PID" 2>/dev/null; then
		kill "$PID" 2>/dev/null
		for _ in $(seq 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
		kill -9 "$PID" 2>/dev/null
	fi
}
trap cleanup EXIT

ok()   { CHECKS=$((CHECKS + 1)); echo "ok   - $*"; }
fail() { CHECKS=$((CHECKS + 1)); FAILS=$((FAILS + 1)); echo "FAIL - $*"; }

# Writes a minimal configuration for one zone; tests may write their own.
write_conf() { # zone-name zone-file [extra yaml...]
	cat > "$T/gslbd.conf" <<EOC
server:
  listen: [ "127.0.0.1@$PORT", "::1@$PORT" ]
  workers: 2
  identity: test.ns
  tcp-idle-timeout: 3
zones:
  - name: $1
    file: $2
${3:-}
EOC
}

# Starts gslbd and waits until it answers (at most 10 s).
gslbd_start() {
	"$GSLBD" -c "$T/gslbd.conf" "$@" >>"$T/gslbd.log" 2>&1 &
	PID=$!
	for _ in $(seq 100); do
		if dig @127.0.0.1 -p "$PORT" +time=1 +tries=1 id.server CH TXT >/dev/null 2>&1; then
			return 0
		fi
		kill -0 "$PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "gslbd did not start; its log:"
	cat "$T/gslbd.log"
	exit 1
}

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

# Ends the test: prints a summary and returns the exit status.
finish() {
	echo "$CHECKS checks, $FAILS failed"
	if [ -n "$PID" ] && ! kill -0 "$PID" 2>/dev/null; then
		echo "FAIL - gslbd died during the test; its log:"; cat "$T/gslbd.log"; exit 1
	fi
	[ "$FAILS" -eq 0 ]
}
