#!/bin/bash
# One gslbd per address and per store: a second daemon on the same
# address or the same weight store refuses to start and names who has it,
# instead of silently taking part of the traffic through SO_REUSEPORT.
. "$(dirname "$0")/lib.sh"
gslb_zone
write_conf gslb.test z.zone
gslbd_start
FIRST=$PID

# The same configuration: the store is taken.
out=$(timeout 10 "$GSLBD" -c "$T/gslbd.conf" 2>&1); rc=$?
[ "$rc" -eq 1 ] && ok "second gslbd on the same store exits 1" || fail "second gslbd: exit $rc"
expect_has "$out" "database .*/db is already served by gslbd pid $FIRST; stop it first" "the message names the store and the pid"
# Another store, the same address.
sed 's|path: db|path: db2|' "$T/gslbd.conf" > "$T/other.conf"
out=$(timeout 10 "$GSLBD" -c "$T/other.conf" 2>&1); rc=$?
[ "$rc" -eq 1 ] && ok "second gslbd on the same address exits 1" || fail "same address: exit $rc"
expect_has "$out" "listen 127\.0\.0\.1@$PORT is already served by pid $FIRST \(gslbd\)" "the message names the address and the process"
# The first one still answers everything.
out=$(q ns1.gslb.test A +short)
[ "$out" = 192.0.2.53 ] && ok "the first daemon still answers" || fail "first daemon: '$out'"
# A port held by another kind of process.
python3 -c "
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(('127.0.0.1', 0))
print(s.getsockname()[1], flush=True)
time.sleep(20)" > "$T/holder.port" &
HOLDER=$!
for _ in $(tseq 50); do [ -s "$T/holder.port" ] && break; sleep 0.1; done
OPORT=$(cat "$T/holder.port")
out=$(timeout 10 "$GSLBD" -c "$T/other.conf" -l "127.0.0.1@$OPORT" 2>&1); rc=$?
[ "$rc" -eq 1 ] && ok "a port held by another program: exit 1" || fail "held port: exit $rc"
expect_has "$out" "listen 127\.0\.0\.1@$OPORT is already served by pid $HOLDER \(python3\)" "names the other program"
kill "$HOLDER"; wait "$HOLDER" 2>/dev/null
# After the first stops, a new one starts on the same store and address
# (connections in TIME_WAIT from it do not count).
q ns1.gslb.test A +tcp +short >/dev/null
gslbd_stop
gslbd_start
ok "a new gslbd starts once the first has stopped"
[ "$(cat "$T/db/gslbd.lock")" = "$PID" ] && ok "the lock file holds the serving pid" || fail "lock file: $(cat "$T/db/gslbd.lock")"
finish
