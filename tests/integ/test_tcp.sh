#!/bin/bash
# TCP per RFC 7766: pipelined queries on one connection all answered (also
# when they arrive split or byte by byte), the idle timeout, the client
# limit (one worker: exact; two workers: never above the total), and slow,
# silent, half-open or non-reading clients that never block the others.
. "$(dirname "$0")/lib.sh"

{
	big_txt_zone t.test
} > "$T/t.test.zone"
write_conf_zones '  workers: 1
  tcp-idle-timeout: 2
  tcp-max-clients: 4' t.test=t.test.zone
gslbd_start

# Pipelining: three queries in one write, three answers, matched by ID.
res=$(py <<'EOF'
import dnsraw
s = dnsraw.tcp_connect()
msgs = [dnsraw.query("www.t.test", 1, qid=101),
        dnsraw.query("big.t.test", 16, qid=102),
        dnsraw.query("nothing.t.test", 1, qid=103)]
s.sendall(b"".join(dnsraw.frame(m) for m in msgs))
got = {}
for _ in range(3):
    r = dnsraw.parse(dnsraw.tcp_read(s))
    got[r["id"]] = (r["rcode"], len(r["an"]), r["tc"])
print(sorted(got.items()))
EOF
)
expect_has "$res" "^\[\(101, \(0, 1, 0\)\), \(102, \(0, 60, 0\)\), \(103, \(3, 0, 0\)\)\]$" \
	"three pipelined queries in one write: all answered ($res)"

# Sixty large answers (about 200 KB) asked for in one write: their
# responses go out together, more than one batch's room, all of them,
# whole and in order.
res=$(py <<'EOF'
import dnsraw
s = dnsraw.tcp_connect()
s.sendall(b"".join(dnsraw.frame(dnsraw.query("big.t.test", 16, qid=i))
                   for i in range(60)))
got, size = [], 0
for _ in range(60):
    m = dnsraw.tcp_read(s)
    if m is None:
        break
    size += len(m)
    r = dnsraw.parse(m)
    got.append((r["id"], len(r["an"]), r["tc"]))
print("ok %d" % size if got == [(i, 60, 0) for i in range(60)] else "got %s" % got)
EOF
)
expect_has "$res" "^ok [0-9]{6}$" "sixty pipelined large answers: all whole and in order ($res)"

# Twenty queries, sent one byte at a time and then in odd-sized chunks.
res=$(py <<'EOF'
import dnsraw, time
s = dnsraw.tcp_connect()
data = b"".join(dnsraw.frame(dnsraw.query("www.t.test", 1, qid=i))
                for i in range(20))
for i in range(0, 40):            # the first queries byte by byte
    s.send(data[i:i + 1])
    time.sleep(0.002)
i = 40
while i < len(data):              # the rest in 7-byte pieces
    s.send(data[i:i + 7])
    i += 7
ids = []
for _ in range(20):
    m = dnsraw.tcp_read(s)
    if m is None:
        break
    ids.append(dnsraw.parse(m)["id"])
print("ok" if ids == list(range(20)) else "got %s" % ids)
EOF
)
expect_has "$res" "^ok$" "queries split across writes: all answered in order ($res)"

# kdig and dig over TCP.
out=$(kdig @127.0.0.1 -p "$PORT" +tcp +norec +time=2 +retry=0 big.t.test TXT 2>&1)
expect_has "$out" "ANSWER: 60" "kdig +tcp: 60 TXT"
expect_has "$out" "\(TCP\)" "kdig used TCP"
out=$(q www.t.test A +tcp +keepopen)
expect_has "$out" "192\.0\.2\.10" "dig +tcp +keepopen"

# Idle timeout: a silent connection is closed after about 2 s; one that
# asked something is closed 2 s after its last query.
res=$(py <<'EOF'
import dnsraw, time
s = dnsraw.tcp_connect(timeout=8)
t0 = time.time()
d = s.recv(10)
t1 = time.time() - t0
s = dnsraw.tcp_connect(timeout=8)
time.sleep(1.2)
s.sendall(dnsraw.frame(dnsraw.query("www.t.test")))
t0 = time.time()
r = dnsraw.tcp_read(s)
end = s.recv(10)
t2 = time.time() - t0
print("silent=%s:%.1f asked=%s:%s:%.1f" % (d == b"", t1, r is not None,
                                           end == b"", t2))
EOF
)
# Between 1.5 s and 3 s, halfway to twice the setting (4 s), which is
# not the setting: the figure of the rule, not scaled.
if [[ $res =~ ^silent=True:([0-9.]+)\ asked=True:True:([0-9.]+)$ ]] &&
   awk -v a="${BASH_REMATCH[1]}" -v b="${BASH_REMATCH[2]}" \
	'BEGIN { exit !(a >= 1.5 && a <= 3 && b >= 1.5 && b <= 3) }'; then
	ok "idle connections closed after tcp-idle-timeout ($res)"
else
	fail "idle connections closed after tcp-idle-timeout: $res"
fi

# A half-open client (length prefix and part of a message) is not kept
# alive by trickling bytes: closed 2 s after it connected, not 2 s after
# its last byte (which would be after 6 s or never), and not at twice the
# setting (4 s).  The close is seen as it comes (select), not at the next
# byte.
res=$(py <<'EOF'
import dnsraw, time, select, socket
s = dnsraw.tcp_connect(timeout=8)
m = dnsraw.frame(dnsraw.query("www.t.test"))
t0 = time.time()
closed = None
for i in range(6):               # one byte every 0.8 s: never a whole query
    try:
        s.send(m[i:i + 1])
        if select.select([s], [], [], 0.8)[0] and s.recv(1) == b"":
            closed = time.time() - t0
            break
    except OSError:
        closed = time.time() - t0
        break
if closed is None:
    s.settimeout(3)
    try:
        if s.recv(10) == b"":
            closed = time.time() - t0
    except OSError:
        closed = time.time() - t0
print("closed after %.1f" % closed if closed is not None else "still open")
EOF
)
if [[ $res =~ ^closed\ after\ ([0-9.]+)$ ]] &&
   awk -v a="${BASH_REMATCH[1]}" 'BEGIN { exit !(a >= 1.5 && a <= 3) }'; then
	ok "a trickling half-open client is closed by the idle timer ($res)"
else
	fail "a trickling half-open client is closed by the idle timer: $res"
fi

# Slow clients never block others: with one worker, a silent client, a
# half message, and a client that never reads its answers, dig still gets
# answers over TCP and UDP at once.
py <<'EOF' > "$T/slow.out" 2>&1 &
import dnsraw, time, struct, socket
silent = dnsraw.tcp_connect()
half = dnsraw.tcp_connect()
half.sendall(struct.pack("!H", 200) + b"\x12\x34\x00")
noread = dnsraw.tcp_connect()
noread.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
q = dnsraw.frame(dnsraw.query("big.t.test", 16))
noread.settimeout(0.2)
sent = 0
for _ in range(3000):            # about 9 MB of answers nobody reads
    try:
        noread.send(q)
        sent += 1
    except OSError:
        break
print("sent %d" % sent, flush=True)
time.sleep(1.5)
EOF
SLOW=$!
wait_until 10 grep -q '^sent' "$T/slow.out" || fail "the slow clients did not start: $(cat "$T/slow.out")"
# The slow clients hold their slots until the 2 s idle timeout: a server
# they blocked would let these 1 s queries time out.
out=$(q www.t.test A +tcp +time=1)
expect_has "$out" "192\.0\.2\.10" "TCP answer beside slow clients"
out=$(q big.t.test TXT +tcp +time=1)
expect_count "$out" ANSWER 60 "big TCP answer beside a client that does not read"
out=$(q www.t.test A +time=1)
expect_has "$out" "192\.0\.2\.10" "UDP answer beside slow clients"
wait "$SLOW"
expect_has "$(cat "$T/slow.out")" "^sent [0-9]+" "the slow clients ran"
# Their slots are free again: no connection to the server is left.
tcp_clients() { ss -tnH state established "( sport = :$PORT )" 2>/dev/null | grep -c .; }
no_tcp_clients() { [ "$(tcp_clients)" = 0 ]; }
wait_until 10 no_tcp_clients || fail "connections of the slow clients left: $(tcp_clients)"

# The client limit with one worker: 4 connections of 4 clients that have
# each asked something stay, the 5th client's is closed at once (nobody
# to evict: no connection without a query, and a client's only
# connection is not evicted; see test_tcp_hoard for those and for a
# source holding several); the 4 still answer; after one closes, a new
# one is accepted.
res=$(py <<'EOF'
import dnsraw, os, time
f = max(1.0, float(os.environ.get("TEST_TIME_FACTOR", "1")))
conns = [dnsraw.tcp_connect(src="127.0.0.%d" % (2 + i)) for i in range(4)]
for i, c in enumerate(conns):
    c.sendall(dnsraw.frame(dnsraw.query("www.t.test", qid=100 + i)))
    dnsraw.tcp_read(c)
time.sleep(0.2)
extra = dnsraw.tcp_connect(src="127.0.0.6")
extra.settimeout(2.0 * f)
try:
    r = extra.recv(10)
    rejected = r == b""
except OSError as e:
    rejected = not isinstance(e, TimeoutError)
answered = 0
for i, c in enumerate(conns):
    c.sendall(dnsraw.frame(dnsraw.query("www.t.test", qid=i)))
    m = dnsraw.tcp_read(c)
    answered += m is not None and dnsraw.parse(m)["id"] == i
conns.pop().close()
# A new connection is accepted once the server has seen the close: tried
# every 0.1 s for at most 5 s (scaled).
end = time.time() + 5 * f
ok = False
while not ok and time.time() < end:
    time.sleep(0.1)
    try:
        again = dnsraw.tcp_connect()
        again.sendall(dnsraw.frame(dnsraw.query("www.t.test", qid=9)))
        m = dnsraw.tcp_read(again)
        ok = m is not None and dnsraw.parse(m)["id"] == 9
        again.close()
    except OSError:
        pass
print("rejected=%s answered=%d again=%s" % (rejected, answered, ok))
EOF
)
expect_has "$res" "^rejected=True answered=4 again=True$" "tcp-max-clients 4 with one worker ($res)"
gslbd_stop || fail "clean exit"

# Two workers: the limit is split between them and never exceeded in total.
write_conf_zones '  workers: 2
  tcp-idle-timeout: 5
  tcp-max-clients: 4' t.test=t.test.zone
gslbd_start
res=$(py <<'EOF'
import dnsraw
alive = 0
conns = [dnsraw.tcp_connect() for _ in range(10)]
for i, c in enumerate(conns):
    c.settimeout(1.0)
    try:
        c.sendall(dnsraw.frame(dnsraw.query("www.t.test", qid=i)))
        m = dnsraw.tcp_read(c)
        alive += m is not None
    except OSError:
        pass
print("alive=%d" % alive)
EOF
)
if [[ $res =~ ^alive=([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -ge 1 ] &&
   [ "${BASH_REMATCH[1]}" -le 4 ]; then
	ok "two workers, 10 connections: at most 4 served ($res)"
else
	fail "two workers, 10 connections: at most 4 served: $res"
fi
tcp_answer() { out=$(q www.t.test A +tcp); grep -q "192\.0\.2\.10" <<<"$out"; }
wait_until 5 tcp_answer
expect_has "$out" "192\.0\.2\.10" "TCP answers again once those are closed"
finish
