#!/bin/bash
# gslbd -d: the starting process returns once the detached daemon serves
# (or with its failure), and the daemon holds LMDB's locks, so that a
# gslbctl write does not reset the reader table under it.
. "$(dirname "$0")/lib.sh"
gslb_zone
write_conf gslb.test z.zone
CTL service add www.gslb.test >/dev/null
CTL node add n1 --addr 192.0.2.1 >/dev/null
CTL weight set www.gslb.test n1=1 >/dev/null

"$GSLBD" -d -c "$T/gslbd.conf" -p "$T/gslbd.pid" >"$T/start.log" 2>&1
rc=$?
PID=$(cat "$T/gslbd.pid" 2>/dev/null)
[ "$rc" -eq 0 ] && ok "gslbd -d returns 0" || fail "gslbd -d returned $rc: $(cat "$T/start.log")"
[ -n "$PID" ] && kill -0 "$PID" 2>/dev/null && ok "the daemon runs (pid $PID)" || { fail "no daemon"; finish; exit 1; }
# No wait: the parent returned only once the daemon answers.
out=$(q www.gslb.test A +short)
[ "$out" = 192.0.2.1 ] && ok "answers as soon as gslbd -d returned" || fail "first answer: '$out'"
# S1-8: a service added without --ttl answers with a 30 s TTL.
t=$(q www.gslb.test A +noall +answer | awk 'NR == 1 { print $2 }')
[ "$t" = 30 ] && ok "default service TTL 30 s" || fail "default TTL: $t"
readers() { mdb_stat -r "$T/db" 2>/dev/null | awk -v p="$PID" '$1 == p' | wc -l; }
n0=$(readers)
[ "$n0" -ge 1 ] && ok "mdb_stat -r lists the daemon's readers ($n0)" || fail "no reader of pid $PID before a write"
# Queries over UDP and TCP make every thread use its reader.
for i in 1 2 3 4 5 6; do q www.gslb.test A +short >/dev/null; q www.gslb.test A +short +tcp >/dev/null; done
CTL node add n2 --addr 192.0.2.2 >/dev/null
CTL weight set www.gslb.test n2=1 >/dev/null
n1=$(readers)
[ "$n1" -ge "$n0" ] && ok "after gslbctl writes the daemon's readers are still registered ($n1)" ||
	fail "readers of pid $PID: $n0 before the write, $n1 after"
n2_answers() { out=$(q www.gslb.test A +short); [ "$out" = 192.0.2.2 ]; }
wait_until 5 n2_answers
[ "$out" = 192.0.2.2 ] && ok "the write is in the answers" || fail "after the write: '$out'"

# A failing start is an exit status and a message, not a silent child.
kill "$PID"
for _ in $(tseq 50); do kill -0 "$PID" 2>/dev/null || break; sleep 0.1; done
PID=
write_conf gslb.test missing.zone
"$GSLBD" -d -c "$T/gslbd.conf" -p "$T/bad.pid" >"$T/bad.log" 2>&1
rc=$?
[ "$rc" -ne 0 ] && ok "gslbd -d with a missing zone exits $rc" || fail "gslbd -d with a missing zone returned 0"
expect_has "$(cat "$T/bad.log")" "missing\.zone" "the reason is printed by the starting process"
finish
