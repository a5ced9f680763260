#!/bin/bash
# Malformed packets never crash or hang the server: every file of the fuzz
# corpus plus generated malformed packets (seeded mutations, garbage) are
# sent over UDP (IPv4 and IPv6) and over TCP (framed, pipelined, and with
# length prefixes that lie), while slow clients hold connections open; then
# dig must still get correct answers and the process must be alive.
. "$(dirname "$0")/lib.sh"
cp "$ROOT/zones/cdn.example.test.zone" "$T/"
write_conf cdn.example.test cdn.example.test.zone
gslbd_start

out=$(PORT=$PORT ROOT=$ROOT timeout 120 python3 - <<'EOF' 2>&1
import os, random, select, socket, struct, sys, time
sys.path.insert(0, os.path.join(os.environ["ROOT"], "tests/fuzz"))
import gen_corpus as g

PORT = int(os.environ["PORT"])
corpus_dir = os.path.join(os.environ["ROOT"], "tests/fuzz/corpus")
pkts = []
for f in sorted(os.listdir(corpus_dir)):
    with open(os.path.join(corpus_dir, f), "rb") as fp:
        pkts.append(fp.read()[:65535])
ncorpus = len(pkts)
pkts += [p for _, p in g.seeds()]

# Seeded mutations of the seeds and plain garbage: reproducible.
rnd = random.Random(20261129)
seeds = [p for _, p in g.seeds() if len(p) >= 12]
for i in range(1500):
    p = bytearray(rnd.choice(seeds))
    for _ in range(rnd.randint(1, 8)):
        k = rnd.randrange(6)
        if k == 0 and p:
            p[rnd.randrange(len(p))] = rnd.randrange(256)
        elif k == 1 and p:
            del p[rnd.randrange(len(p)):]
        elif k == 2:
            p[rnd.randrange(len(p) + 1):0] = bytes(rnd.randrange(256)
                                                    for _ in range(rnd.randint(1, 16)))
        elif k == 3 and len(p) > 14:
            o = rnd.randrange(12, len(p) - 1)  # a compression pointer
            p[o:o + 2] = bytes([0xC0 | rnd.randrange(64), rnd.randrange(256)])
        elif k == 4 and len(p) >= 12:
            o = rnd.choice([4, 6, 8, 10])      # a count
            p[o:o + 2] = struct.pack("!H", rnd.choice([0, 1, 2, 255, 65535]))
        elif k == 5 and len(p) >= 3:
            p[2] &= 0x7F                       # keep QR clear: answerable
    pkts.append(bytes(p))
for i in range(300):
    pkts.append(bytes(rnd.randrange(256) for _ in range(rnd.randint(0, 600))))
# Oversize labels and long pointer chains built on purpose.
hdr = g.header()
pkts.append(hdr + b"\x3f" + b"x" * 63 + b"\x40" + b"y" * 64 + b"\0\0\1\0\1")
chain, prev = bytearray(hdr) + b"\x01a\0", 12
for i in range(200):  # each pointer goes back to the one before it
    off = len(chain)
    chain += bytes([0xC0 | prev >> 8, prev & 0xFF])
    prev = off
pkts.append(bytes(chain[:12]) + b"\xc0\x0c\0\1\0\1" + bytes(chain[12:]))
pkts.append(hdr[:4] + b"\xff\xff" * 4 + b"\xc0\x0c" * 3000)

errors = []

def check_reply(r, what):
    if len(r) < 12 or not r[2] & 0x80:
        errors.append("%s: bad reply %r" % (what, r[:16]))

def udp_flood(family, host):
    try:
        s = socket.socket(family, socket.SOCK_DGRAM)
        s.connect((host, PORT))
    except OSError as e:
        print("udp %s: skipped (%s)" % (host, e))
        return 0
    s.setblocking(False)
    replies = 0
    def drain(wait):
        nonlocal replies
        end = time.time() + wait
        while True:
            left = end - time.time()
            if left <= 0 or not select.select([s], [], [], left)[0]:
                return
            try:
                r = s.recv(65535)
            except (BlockingIOError, ConnectionRefusedError):
                continue
            replies += 1
            check_reply(r, "udp")
            if len(r) > 1232:
                errors.append("udp reply of %d bytes" % len(r))
    for i, p in enumerate(pkts):
        try:
            s.send(p)
        except OSError:
            pass
        if i % 50 == 49:
            drain(0.02)
    drain(1.0)
    s.close()
    return replies

def frame(p):
    return struct.pack("!H", len(p)) + p

def tcp_session(data, expect_min=0):
    """Sends @data, half-closes, reads frames until EOF or 5 s."""
    s = socket.create_connection(("127.0.0.1", PORT), timeout=5)
    try:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
    except OSError:
        pass
    buf = b""
    end = time.time() + 5
    while time.time() < end:
        try:
            chunk = s.recv(65536)
        except (socket.timeout, OSError):
            break
        if not chunk:
            break
        buf += chunk
    s.close()
    n = 0
    while len(buf) >= 2:
        ln = struct.unpack("!H", buf[:2])[0]
        if len(buf) < 2 + ln:
            errors.append("tcp: partial frame")
            break
        check_reply(buf[2:2 + ln], "tcp")
        buf = buf[2 + ln:]
        n += 1
    if n < expect_min:
        errors.append("tcp: %d replies, wanted at least %d" % (n, expect_min))
    return n

t0 = time.time()
r4 = udp_flood(socket.AF_INET, "127.0.0.1")
r6 = udp_flood(socket.AF_INET6, "::1")
print("udp: %d packets, %d + %d replies" % (len(pkts), r4, r6))

# Slow clients hold connections open meanwhile: a length prefix that
# promises more than is sent, and a lone byte of a prefix.
slow = []
for data in (b"\x01\x00" + pkts[0][:10], b"\x00", b"\xff\xff" + b"\0" * 100):
    c = socket.create_connection(("127.0.0.1", PORT), timeout=5)
    c.sendall(data)
    slow.append(c)

# Framed and pipelined: batches of 100 on one connection.
tcp_replies = 0
valid = g.query("static." + g.ZONE, 1)
for i in range(0, len(pkts), 100):
    batch = [p for p in pkts[i:i + 100] if len(p) <= 65535]
    tcp_replies += tcp_session(b"".join(frame(p) for p in batch)
                               + frame(valid), 0)
print("tcp: %d replies" % tcp_replies)

# Length prefixes that lie.  Each session ends with a valid query that
# must be answered when the framing before it was still consistent.
lies = [
    (b"\x00\x00" + frame(valid), 1),             # zero-length message first
    (b"\x00\x05" + valid[:5] + frame(valid), 1), # short message, then valid
    (frame(valid)[:2] + valid + b"junk", 1),     # trailing junk, no frame
    (struct.pack("!H", len(valid) - 4) + valid + frame(valid), 1),
    (struct.pack("!H", len(valid) + 40) + valid, 0),  # promises more, EOF
    (b"\xff\xff" + valid * 3, 0),
    (b"\x00\x0b" + valid[:11] + frame(valid), 1),    # 11 bytes: dropped
    (frame(valid)[:1], 0),                       # half a length prefix
    (b"\x00\x0c" + g.header(qd=0) + frame(valid), 2),
]
for data, want in lies:
    tcp_session(data, want)
for c in slow:
    c.close()
print("elapsed %.1fs" % (time.time() - t0))
for e in errors[:20]:
    print("ERROR", e)
print("errors: %d" % len(errors))
if r4 == 0 or tcp_replies == 0:
    print("ERROR no replies at all")
EOF
)
echo "$out"
expect_has "$out" "^errors: 0$" "every reply well formed"
expect_not "$out" "^ERROR" "no errors from the sender"
expect_has "$out" "^tcp: [1-9][0-9]* replies" "TCP answered"

if kill -0 "$PID" 2>/dev/null; then ok "gslbd alive after the corpus"
else fail "gslbd died"; cat "$T/gslbd.log"; fi

out=$(q static.cdn.example.test A)
expect_status "$out" NOERROR "UDP still answers"
expect_has "$out" "flags: qr aa;" "authoritative answer"
expect_has "$out" "^static\.cdn\.example\.test\..*IN	A	192\.0\.2\.80" "A record over UDP"
out=$(q static.cdn.example.test AAAA +tcp)
expect_has "$out" "2001:db8::80" "AAAA over TCP"
out=$(dig @::1 -p "$PORT" +norec +time=2 +tries=1 www.lab.cdn.example.test A 2>&1)
expect_has "$out" "^lab\.cdn\.example\.test\..*IN	NS	ns\.lab" "referral over IPv6"
out=$(q nothing.cdn.example.test A +edns=0 +subnet=198.51.100.0/24)
expect_status "$out" NXDOMAIN "NXDOMAIN with ECS"
expect_has "$out" "CLIENT-SUBNET: 198\.51\.100\.0/24/0" "ECS echoed with scope 0"
out=$(q id.server TXT -c CH)
expect_has "$out" '"test\.ns"' "CH TXT id.server"
expect_not "$(cat "$T/gslbd.log")" "ERROR: AddressSanitizer|runtime error" \
	"no sanitizer reports in the server log"
if gslbd_stop; then ok "clean exit on SIGTERM"; else fail "exit status on SIGTERM"; fi
finish
