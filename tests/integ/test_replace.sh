#!/bin/bash
# gslbd --replace: a new daemon takes the listening sockets and the store
# lock of the running one, which finishes its queries and exits.  Under a
# bounded load (dnsperf over UDP, and a client that checks every answer
# over UDP and TCP) the daemon is replaced twice: no query goes
# unanswered, every answer is right, each old process exits, the new one
# serves and holds the lock, and a plain second start is still refused.
# SIGUSR2 makes the daemon start its own replacement, as under systemd.
. "$(dirname "$0")/lib.sh"
gslb_zone 'www A 192.0.2.80'
write_conf gslb.test z.zone
sed -i 's/^server:/server:\n  log-level: info/' "$T/gslbd.conf"
OTHERS=
trap 'cleanup; for p in $OTHERS; do kill "$p" 2>/dev/null; done' EXIT

# --replace with nothing to replace starts as usual.
gslbd_start --replace
A=$PID
expect_has "$(cat "$T/gslbd.log")" "--replace: no gslbd answers on .*/db/gslbd\.ctl; starting as usual" \
	"--replace with no daemon running starts as usual"
[ -S "$T/db/gslbd.ctl" ] && ok "the daemon listens on db/gslbd.ctl" || fail "no control socket"

# A --replace whose configuration is broken leaves the running one alone.
printf 'server: [\n' > "$T/broken.conf"
out=$(timeout 10 "$GSLBD" -c "$T/broken.conf" --replace 2>&1); rc=$?
[ "$rc" -eq 1 ] && ok "--replace with a broken configuration exits 1" || fail "broken --replace: exit $rc"
kill -0 "$A" 2>/dev/null && ok "the running daemon is left alone" || fail "the running daemon died"
[ "$(cat "$T/db/gslbd.lock")" = "$A" ] && ok "the lock file still names it" || fail "lock: $(cat "$T/db/gslbd.lock")"

# The load: dnsperf at 1500 queries/s, and a checking client: two UDP
# loops and a TCP connection that is kept
# open, each query waiting for its answer.  A TCP client whose connection
# the old daemon closes after it went quiet reconnects and asks again
# (RFC 7766 clients must); those are counted as retries, never as lost.
# Both run until the second hand-over is done (the file $T/stop, and
# SIGINT for dnsperf, which then counts what it had in flight as
# interrupted, not lost), 30 s at most.
for _ in $(seq 20); do echo "www.gslb.test A"; echo "ns1.gslb.test A"; done > "$T/queries"
timeout 40 dnsperf -s 127.0.0.1 -p "$PORT" -d "$T/queries" -l 30 -Q 1500 -c 4 -t 3 \
	> "$T/dnsperf.out" 2>&1 &
PERF=$!
py "$T/stop" > "$T/check.out" <<'EOF' &
import dnsraw, os, socket, struct, sys, threading, time
END = time.time() + 28
STOP = sys.argv[1]
res = {"udp": 0, "tcp": 0, "lost": 0, "bad": 0, "retries": 0}
lock = threading.Lock()
def good(raw):
    r = dnsraw.parse(raw)
    return r["rcode"] == 0 and len(r["an"]) == 1 and \
        ".".join(str(b) for b in r["an"][0][4]) == "192.0.2.80"
def count(k, n=1):
    with lock:
        res[k] += n
def udp_loop(base):
    i = 0
    while time.time() < END and not os.path.exists(STOP):
        raw = dnsraw.udp(dnsraw.query("www.gslb.test", qid=(base + i) & 0xFFFF),
                         timeout=2)
        i += 1
        count("udp")
        if raw is None:
            count("lost")
        elif not good(raw):
            count("bad")
def tcp_loop():
    s, i = None, 0
    while time.time() < END and not os.path.exists(STOP):
        msg = dnsraw.query("www.gslb.test", qid=i & 0xFFFF)
        i += 1
        count("tcp")
        for attempt in range(3):
            try:
                if s is None:
                    s = dnsraw.tcp_connect()
                s.sendall(dnsraw.frame(msg))
                raw = dnsraw.tcp_read(s)
                if raw is None:
                    raise OSError("closed")
                if not good(raw):
                    count("bad")
                break
            except OSError:
                if s:
                    s.close()
                s = None
                count("retries")
        else:
            count("lost")
        time.sleep(0.005)
ts = [threading.Thread(target=udp_loop, args=(k * 20000,)) for k in range(2)]
ts.append(threading.Thread(target=tcp_loop))
for t in ts:
    t.start()
for t in ts:
    t.join()
print("udp=%(udp)d tcp=%(tcp)d lost=%(lost)d bad=%(bad)d retries=%(retries)d" % res)
EOF
CHECK=$!
OTHERS="$PERF $CHECK"

# Waits (at most 10 s) until process $1 has exited.
gone() {
	for _ in $(tseq 100); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	return 1
}
# Replaces the daemon $PID with a new one (log $T/$1.log), then checks
# that the old one exits and the new one holds the lock.
replace() { # name
	local old=$PID
	"$GSLBD" -c "$T/gslbd.conf" --replace >>"$T/$1.log" 2>&1 &
	PID=$!
	OTHERS="$OTHERS $old"
	if gone "$old"; then ok "$1: the old daemon (pid $old) exited"
	else fail "$1: the old daemon (pid $old) still runs"; fi
	wait "$old" 2>/dev/null
	kill -0 "$PID" 2>/dev/null && ok "$1: the new daemon (pid $PID) runs" || fail "$1: new daemon died"
	[ "$(cat "$T/db/gslbd.lock")" = "$PID" ] && ok "$1: the lock file names the new daemon" ||
		fail "$1: lock file: $(cat "$T/db/gslbd.lock")"
}
# Time passes under the load between the hand-overs, so that each one
# has queries in flight: 2 s into it, and 2 s after the first.
loaded() { kill -0 "$PERF" 2>/dev/null && kill -0 "$CHECK" 2>/dev/null; }
sleep 2
replace B
B=$PID
sleep 2
loaded && ok "the second hand-over comes while the load runs" ||
	fail "the load ended before the second hand-over"
replace C
sleep 1
touch "$T/stop"
kill -INT "$PERF" 2>/dev/null
wait "$PERF"
wait "$CHECK"

perf=$(cat "$T/dnsperf.out")
sent=$(awk '/Queries sent:/ { print $3 }' <<<"$perf")
lost=$(awk '/Queries lost:/ { print $3 }' <<<"$perf")
if [ "${sent:-0}" -gt 5000 ] && [ "$lost" = 0 ]; then
	ok "dnsperf: $sent queries, none lost"
else
	fail "dnsperf: sent ${sent:-?}, lost ${lost:-?}"; echo "$perf" | sed 's/^/    /'
fi
# What was in flight when dnsperf was stopped counts as interrupted, not
# completed: every completed query is NOERROR.
done_q=$(awk '/Queries completed:/ { print $3 }' <<<"$perf")
expect_has "$perf" "Response codes: +NOERROR ${done_q:-x} \(100\.00%\)" "dnsperf: every answer NOERROR"
res=$(cat "$T/check.out")
if [[ $res =~ udp=([0-9]+)\ tcp=([0-9]+)\ lost=0\ bad=0 ]] && [ "${BASH_REMATCH[1]}" -gt 200 ] &&
	[ "${BASH_REMATCH[2]}" -gt 100 ]; then
	ok "checked answers over UDP and TCP: every one right ($res)"
else
	fail "checked answers: $res"
fi

# What the processes said.
alog=$(cat "$T/gslbd.log")
expect_has "$alog" "hand-over: gslbd pid $B took [0-9]+ socket\(s\)" "the first daemon handed its sockets to B"
expect_has "$alog" "exiting in favour of gslbd pid $B" "the first daemon exited in favour of B"
blog=$(cat "$T/B.log")
expect_has "$blog" "--replace: took 8 socket\(s\) and the store lock from gslbd pid $A" \
	"B took 2 workers x 2 addresses x UDP and TCP and the lock"
expect_has "$blog" "exiting in favour of gslbd pid $PID" "B exited in favour of C"
expect_has "$(cat "$T/C.log")" "--replace: gslbd pid $B stopped listening" "C saw B stop listening"

# The last one serves, alone, and a plain second start is refused.
out=$(q www.gslb.test A +short)
[ "$out" = 192.0.2.80 ] && ok "C answers over UDP" || fail "C over UDP: '$out'"
out=$(q www.gslb.test A +short +tcp)
[ "$out" = 192.0.2.80 ] && ok "C answers over TCP" || fail "C over TCP: '$out'"
out=$(timeout 10 "$GSLBD" -c "$T/gslbd.conf" 2>&1); rc=$?
[ "$rc" -eq 1 ] && ok "a plain second start exits 1" || fail "plain second start: exit $rc"
expect_has "$out" "database .*/db is already served by gslbd pid $PID; stop it first" \
	"the refusal names the new daemon"
# A second --replace while one is in progress is refused by the old one:
# simulated with a client that asks and never says "serving".
py > "$T/busy.out" <<EOF &
import os, socket, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect("$T/db/gslbd.ctl")
s.send(b"replace 1")
print(s.recv(64).decode(), flush=True)
for _ in range(150):    # until the test is done, at most 15 s
    if os.path.exists("$T/release"):
        break
    time.sleep(0.1)
EOF
HOLD=$!
for _ in $(tseq 100); do [ -s "$T/busy.out" ] && break; sleep 0.1; done
out=$(timeout 10 "$GSLBD" -c "$T/gslbd.conf" --replace 2>&1); rc=$?
[ "$rc" -eq 1 ] && ok "a --replace during another hand-over exits 1" || fail "concurrent --replace: exit $rc"
expect_has "$out" "busy: gslbd pid 1 takes over" "and says that a hand-over is in progress"
expect_has "$(cat "$T/busy.out")" "^fds 9$" "the control socket hands over 8 sockets and the lock"
touch "$T/release"
wait "$HOLD"
aborted() { grep -q "hand-over: gslbd pid 1 went away before serving; serving on" "$T/C.log"; }
wait_until 10 aborted
expect_has "$(cat "$T/C.log")" "hand-over: gslbd pid 1 went away before serving; serving on" \
	"a replacement that goes away leaves the daemon serving"
out=$(q www.gslb.test A +short)
[ "$out" = 192.0.2.80 ] && ok "and it still answers" || fail "after an aborted hand-over: '$out'"

if gslbd_stop; then ok "clean exit of the last daemon"; else fail "exit status of the last daemon"; fi
[ -e "$T/db/gslbd.ctl" ] && fail "control socket left behind" || ok "the control socket is removed at exit"

# SIGUSR2, as under systemd (a stand-in notification socket and a 2 s
# watchdog): the daemon starts its own replacement, which tells systemd
# its pid (MAINPID), says READY and keeps the watchdog fed.
PYTHONPATH="$ROOT/tests/integ" timeout 40 python3 "$ROOT/tests/integ/notify.py" \
	"$T/notify.sock" "$T/notify.txt" "$PORT" 30 &
OTHERS="$OTHERS $!"
for _ in $(tseq 50); do [ -S "$T/notify.sock" ] && break; sleep 0.1; done
NOTIFY_SOCKET="$T/notify.sock" WATCHDOG_USEC=2000000 gslbd_start
OLD=$PID
kill -USR2 "$OLD"
if gone "$OLD"; then ok "SIGUSR2: the old daemon exited"; else fail "SIGUSR2: the old daemon still runs"; fi
NEW=$(cat "$T/db/gslbd.lock")
OTHERS="$OTHERS $NEW"
[ "$NEW" != "$OLD" ] && kill -0 "$NEW" 2>/dev/null && ok "SIGUSR2: gslbd pid $NEW took over" ||
	fail "SIGUSR2: lock names '$NEW'"
expect_has "$(cat "$T/gslbd.log")" "replace: started gslbd pid $NEW to take over" "the old daemon names its replacement"
out=$(q www.gslb.test A +short)
[ "$out" = 192.0.2.80 ] && ok "the replacement answers" || fail "replacement: '$out'"
before=$(wc -l < "$T/notify.txt")
dogs() { tail -n +$((before + 1)) "$T/notify.txt" | grep -c 'WATCHDOG=1$'; }
# Three watchdog pings after the replacement answered, two gaps between
# them, each measured by the stand-in's clock.
fed_dog() { [ "$(dogs)" -ge 3 ] && grep -q "MAINPID=$NEW$" "$T/notify.txt"; }
wait_until 15 fed_dog
n=$(cat "$T/notify.txt")
expect_has "$n" "^[0-9]+ MAINPID=$NEW$" "the replacement tells systemd its pid"
expect_has "$(sed -n '/MAINPID='"$NEW"'/,$p' <<<"$n")" "READY=1" "and READY after it"
w=$(dogs)
gap=$(tail -n +$((before + 1)) "$T/notify.txt" | awk '$2 == "WATCHDOG=1" {
	if (n++ && $1 - t > g) g = $1 - t; t = $1 } END { print g + 0 }')
# The watchdog's own figure (2 s, WATCHDOG_USEC): a longer gap would
# get the daemon killed.
[ "$w" -ge 3 ] && [ "$gap" -lt 2000 ] && ok "the replacement feeds the watchdog ($w pings, at most $gap ms apart)" ||
	fail "watchdog after SIGUSR2: $w pings, at most $gap ms apart"
kill "$NEW"
gone "$NEW" && ok "the replacement stops on SIGTERM" || fail "the replacement does not stop"
PID=
finish
