#!/bin/bash
# Connection hoarding over TCP (S1-12), with several loopback sources
# (127.0.0.x) against a table of 50 connections on one worker:
#  1. per-source limit: one source opening 100 idle connections keeps 10
#     (server.tcp-max-per-source), the other 90 are closed at once, the
#     10 still answer, and other sources asking every 100 ms are all
#     answered; one log line for the 90;
#  2. pressure, no per-source limit: one source holding more connections
#     than the table and reopening every one closed, while others ask
#     every 100 ms over new connections: every one of their queries is
#     answered; a slowloris client (a byte a second) is closed within
#     the shrunk idle time, not the 10 s of tcp-idle-timeout;
#  3. connections that asked once and went quiet, over 90 % of the
#     table: closed after the shrunk idle time (1 s), not 10 s; a client
#     that asked for 10 MB of answers and reads none for 2 s (past that
#     time) is not cut mid-answer: what was queued for it arrives whole,
#     then the connection closes;
#  4. held connections, no per-source limit: one source holding 2x (one
#     worker) and 4x (two workers, 25 slots each) the table with
#     connections that each asked once and went quiet, reopening every
#     one closed, while others ask every 100 ms over new connections:
#     every one of their queries is answered, none refused for a full
#     table (the newcomer evicts a quiet connection of the hoarder);
#  5. the open-file limit: a soft limit under what tcp-max-clients needs
#     is raised; a hard limit under it lowers the table to what fits
#     (logged), so that a hoarder of idle connections over that table
#     meets the eviction and others are still answered; and a limit
#     lowered under the running daemon makes accept() fail: logged once,
#     the listener rests instead of spinning, and it serves again once
#     the hoarder is gone.
# Counters of /metrics move with each.
. "$(dirname "$0")/lib.sh"

SPORT=$((PORT + 1))
{
	big_txt_zone t.test
} > "$T/t.test.zone"
conf() { # per-source-limit [workers]
	write_conf_zones "  workers: ${2:-1}
  tcp-idle-timeout: 10
  tcp-max-clients: 50
  tcp-max-per-source: $1" t.test=t.test.zone
	cat >> "$T/gslbd.conf" <<EOC
stats:
  listen: [ "127.0.0.1@$SPORT" ]
  allow: [ "127.0.0.0/8" ]
EOC
}
metric() { # name{labels} -> value
	python3 - "$SPORT" "$1" <<'EOP'
import sys, urllib.request
body = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1],
                              timeout=5).read().decode()
for line in body.splitlines():
    if line.startswith(sys.argv[2] + " "):
        print(int(float(line.split()[-1])))
        break
else:
    print("absent")
EOP
}
hoard() { py "$@" < "$ROOT/tests/integ/tcp_hoard.py"; }
# The figures a run printed, as shell variables (opened=... answered=...).
figures() { local kv; for kv in $1; do printf -v "f_${kv%%=*}" '%s' "${kv#*=}"; done; }
# Every query of the other clients (at least 20) answered, in the run
# whose figures are loaded: WHAT.
all_answered() { # what
	if [ -n "${f_asked:-}" ] && [ "$f_asked" -ge 20 ] && [ "$f_answered" = "$f_asked" ]; then
		ok "$1: every other client's query answered ($f_answered of $f_asked, slowest ${f_worst}s)"
	else
		fail "$1: every other client's query answered: $res"
	fi
}
num_between() { awk -v v="$1" -v a="$2" -v b="$3" 'BEGIN { exit !(v + 0 == v && v >= a && v <= b) }'; }

# 1. The per-source limit.
conf 10
gslbd_start
res=$(hoard hoard 4 100 0)
echo "# per-source: $res"
figures "$res"
if [ "${f_kept:-}" = 10 ] && [ "${f_closed_fast:-}" = 90 ]; then
	ok "one source, 100 connections: 10 kept, 90 closed at once ($res)"
else
	fail "one source, 100 connections: 10 kept, 90 closed at once: $res"
fi
expect_has "${f_still:-}" "^10$" "the source's 10 connections still answer"
all_answered "the per-source limit"
expect_has "$(metric 'gslbd_tcp_connections_refused_total{reason="per-source"}')" "^90$" \
	"gslbd_tcp_connections_refused_total{reason=per-source} counts the 90"
expect_has "$(metric 'gslbd_tcp_connections_refused_total{reason="full"}')" "^0$" \
	"nothing refused for a full table"
n=$(grep -c "tcp: closed a new connection from 127.0.0.2" "$T/gslbd.log")
expect_has "$n" "^1$" "90 refusals, one log line"
gslbd_stop || fail "clean exit"

# 2. Pressure: no per-source limit, the hoarder reopens what is closed.
conf 0
gslbd_start
res=$(hoard hoard 5 200 1)
echo "# pressure: $res"
figures "$res"
all_answered "a hoarder over the table"
if [ "${f_opened:-0}" -gt 200 ]; then
	ok "the hoarder's connections were evicted and reopened ($f_opened opened)"
else
	fail "the hoarder's connections were evicted and reopened: $res"
fi
# Shrunk idle time 1 s (a tenth of 10 s): closed well before 10 s, at
# the latest by the shrunk time plus a second for the byte's wait.
if num_between "${f_slow:-open}" 0 2.5; then
	ok "slowloris closed within the shrunk idle time (${f_slow}s)"
else
	fail "slowloris closed within the shrunk idle time: $res"
fi
v=$(metric 'gslbd_tcp_connections_closed_total{reason="pressure"}')
if num_between "$v" 100 1000000; then
	ok "gslbd_tcp_connections_closed_total{reason=pressure} moved ($v)"
else
	fail "gslbd_tcp_connections_closed_total{reason=pressure} moved: $v"
fi
expect_has "$(grep -c 'tcp: worker 0 has .* connections open' "$T/gslbd.log")" "^1$" \
	"pressure logged once"

# 3. Quiet connections that asked once, over the pressure mark (45):
# the shrunk idle time closes them all.
wait_until 15 test "$(metric gslbd_tcp_connections)" -le 5 ||
	fail "the hoarder's connections are gone: $(metric gslbd_tcp_connections)"
idle0=$(metric 'gslbd_tcp_connections_closed_total{reason="idle"}')
res=$(hoard asked 48 8)
echo "# asked once: $res"
figures "$res"
if [ "${f_answered:-}" = 48 ] && [ "${f_closed:-}" = 48 ] && num_between "$f_last" 0.5 3; then
	ok "48 quiet connections closed after the shrunk idle time ($res)"
else
	fail "48 quiet connections closed after the shrunk idle time: $res"
fi
if [[ ${f_reader:-} =~ ^([0-9]+):eof$ ]] && [ "${BASH_REMATCH[1]}" -ge 10 ]; then
	ok "a slow reader's queued answers arrive whole before the close ($f_reader)"
else
	fail "a slow reader's queued answers arrive whole before the close: ${f_reader:-$res}"
fi
idle1=$(metric 'gslbd_tcp_connections_closed_total{reason="idle"}')
if num_between "$idle1" $((idle0 + 48)) 1000000; then
	ok "gslbd_tcp_connections_closed_total{reason=idle} counts them ($idle0 -> $idle1)"
else
	fail "gslbd_tcp_connections_closed_total{reason=idle} counts them: $idle0 -> $idle1"
fi
gslbd_stop || fail "clean exit"

# 4. Held connections that asked once, 2x and 4x the table.
for run in "2 1" "4 2"; do
	set -- $run
	conf 0 "$2"
	gslbd_start
	res=$(hoard hoard 5 $(($1 * 50)) ask)
	echo "# held ${1}x, $2 worker(s): $res"
	figures "$res"
	all_answered "${1}x the table held by one source, $2 worker(s)"
	if [ "${f_opened:-0}" -gt $(($1 * 50)) ]; then
		ok "the held connections made room and were reopened ($f_opened opened)"
	else
		fail "the held connections made room and were reopened: $res"
	fi
	expect_has "$(metric 'gslbd_tcp_connections_refused_total{reason="full"}')" "^0$" \
		"${1}x held: nobody refused for a full table"
	gslbd_stop || fail "clean exit"
done

# 5. The open-file limit.  Started under a limit of its own (the
# subshell's exec keeps the PID).
start_limited() { # soft hard
	( ulimit -Sn "$1" && ulimit -Hn "$2" && exec "$GSLBD" -c "$T/gslbd.conf" ) \
		>>"$T/gslbd.log" 2>&1 &
	PID=$!
	wait_until 10 dig @127.0.0.1 -p "$PORT" +time=1 +tries=1 id.server CH TXT ||
		fail "started under an open-file limit of $1 (hard $2)"
}
soft_nofile() { awk '/^Max open files/ { print $4 }' "/proc/$PID/limits"; }
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$PID/stat"; }
conf 0
start_limited 256 4096
expect_has "$(soft_nofile)" "^562$" "a soft open-file limit of 256 raised to 562 for 50 connections"
gslbd_stop || fail "clean exit"
write_conf_zones "  workers: 1
  tcp-idle-timeout: 10
  tcp-max-clients: 1000" t.test=t.test.zone
start_limited 300 300
expect_has "$(grep -c 'tcp-max-clients lowered from 1000 to 150: the open-file limit is 300' "$T/gslbd.log")" \
	"^1$" "a hard limit of 300: the table lowered to 150, logged"
res=$(hoard hoard 4 200 0)
echo "# lowered table: $res"
figures "$res"
all_answered "200 idle connections over the lowered table of 150"
expect_not "$(cat "$T/gslbd.log")" "cannot accept" "the lowered table fits: accept() never failed"
# Lowered under the running daemon: accept() fails for want of
# descriptors while the hoarder holds what it got.
prlimit --pid "$PID" --nofile=80:80
t0=$(cpu_ticks)
res=$(hoard hoard 3 200 0)
t1=$(cpu_ticks)
echo "# limit 80 under it: $res (CPU ticks $t0 -> $t1)"
expect_has "$(grep -c 'worker 0 cannot accept connections: Too many open files' "$T/gslbd.log")" \
	"^1$" "accept() failing for want of descriptors: logged once"
if [ $((t1 - t0)) -lt 150 ]; then
	ok "the listener rests while descriptors are short ($((t1 - t0)) ticks of CPU in 3 s)"
else
	fail "the listener rests while descriptors are short: $((t1 - t0)) ticks of CPU in 3 s"
fi
wait_until 10 dig @127.0.0.1 -p "$PORT" +tcp +time=1 +tries=1 www.t.test A ||
	fail "TCP answered again once the hoarder is gone"
expect_has "$(dig @127.0.0.1 -p "$PORT" +tcp +time=2 +tries=1 +short www.t.test A)" \
	"^192\.0\.2\.10$" "TCP answered again once the hoarder is gone"
gslbd_stop || fail "clean exit"
finish
