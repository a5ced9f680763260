# SPDX-License-Identifier: MIT
# Raw DNS messages for the integration tests, standard library only: what
# dig, kdig and drill refuse to send (bad opcodes, several questions, QR
# set, pipelined TCP) is built here byte by byte.  Loopback only.
import os
import socket
import struct
import time

PORT = int(os.environ.get("PORT", "0"))
HOST = os.environ.get("HOST", "127.0.0.1")


def name_wire(name):
    out = b""
    for label in name.strip(".").split("."):
        if label:
            out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def query(name, qtype=1, qclass=1, qid=0x1234, flags=0, opcode=0,
          qdcount=None, edns=None, questions=None, ar=b"", arcount=0):
    """A query message.  edns: None or (payload, version, do, options)."""
    qs = questions if questions is not None else [(name, qtype, qclass)]
    body = b"".join(name_wire(n) + struct.pack("!HH", t, c)
                    for n, t, c in qs)
    if edns is not None:
        payload, version, do, opts = edns
        rd = b"".join(struct.pack("!HH", code, len(v)) + v
                      for code, v in opts)
        ar = struct.pack("!BHHBBHH", 0, 41, payload, 0, version,
                         0x8000 if do else 0, len(rd)) + rd + ar
        arcount += 1
    hflags = flags | (opcode & 0xF) << 11
    qd = len(qs) if qdcount is None else qdcount
    return struct.pack("!HHHHHH", qid, hflags, qd, 0, 0, arcount) + body + ar


def udp(msg, timeout=2.0, port=None, host=None):
    """Sends @msg over UDP and returns the reply, or None on timeout."""
    fam = socket.AF_INET6 if ":" in (host or HOST) else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.settimeout(timeout)
    try:
        s.sendto(msg, (host or HOST, port or PORT))
        return s.recv(65535)
    except socket.timeout:
        return None
    finally:
        s.close()


def bound_udp(addr):
    """A non-blocking UDP socket bound to @addr (IPv4) with a large
    receive buffer, for floods that read their replies in batches."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 21)
    s.bind((addr, 0))
    s.setblocking(False)
    return s


def drain_replies(socks, wait, each):
    """Waits up to @wait seconds for replies on the non-blocking @socks
    and calls each(sock, reply) for every reply there is by then."""
    import select
    r, _, _ = select.select(socks, [], [], wait)
    for s in r:
        while True:
            try:
                m = s.recv(4096)
            except BlockingIOError:
                break
            each(s, m)


def paced_flood(socks, msg, count, secs, drain, each=None):
    """Sends @msg @count times over @secs seconds, evenly paced, from
    @socks in turn; between sends calls each(elapsed) (for probes) and
    drain(wait) (to read replies), then drains for one more second.
    Returns how many were sent."""
    start = time.time()
    sent = 0
    while sent < count:
        now = time.time() - start
        due = min(count, int(count * now / secs) + 1)
        while sent < due:
            socks[sent % len(socks)].sendto(msg, (HOST, PORT))
            sent += 1
        if each:
            each(now)
        drain(0.001)
    end = time.time() + 1.0
    while time.time() < end:
        drain(0.05)
    return sent


def tcp_connect(timeout=3.0, port=None, src=None):
    """A TCP connection to the server, from the loopback address @src
    when given (one client each, for the per-source accounting)."""
    return socket.create_connection((HOST, port or PORT), timeout=timeout,
                                    source_address=(src, 0) if src else None)


def frame(msg):
    return struct.pack("!H", len(msg)) + msg


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def tcp_read(s):
    """One framed message, or None when the server closed."""
    hdr = recv_exact(s, 2)
    if hdr is None:
        return None
    return recv_exact(s, struct.unpack("!H", hdr)[0])


def _name(msg, off):
    labels = []
    jumped = False
    end = off
    for _ in range(128):
        ln = msg[off]
        if ln & 0xC0 == 0xC0:
            if not jumped:
                end = off + 2
            off = (ln & 0x3F) << 8 | msg[off + 1]
            jumped = True
            continue
        if ln == 0:
            if not jumped:
                end = off + 1
            return ".".join(labels) + ".", end
        labels.append(msg[off + 1:off + 1 + ln].decode("latin-1"))
        off += 1 + ln
    raise ValueError("name loop")


def parse(msg):
    """Header fields and sections: {'id','flags','rcode','opcode','qd',
    'an','ns','ar' (lists of (name,type,class,ttl,rdata))}."""
    qid, flags, qd, an, ns, ar = struct.unpack("!HHHHHH", msg[:12])
    r = {"id": qid, "flags": flags, "rcode": flags & 0xF,
         "opcode": flags >> 11 & 0xF, "qr": flags >> 15, "aa": flags >> 10 & 1,
         "tc": flags >> 9 & 1, "counts": (qd, an, ns, ar), "len": len(msg)}
    off = 12
    r["question"] = []
    for _ in range(qd):
        n, off = _name(msg, off)
        r["question"].append((n,) + struct.unpack("!HH", msg[off:off + 4]))
        off += 4
    for sec, cnt in (("an", an), ("ns", ns), ("ar", ar)):
        rrs = []
        for _ in range(cnt):
            n, off = _name(msg, off)
            t, c, ttl, rdlen = struct.unpack("!HHIH", msg[off:off + 10])
            off += 10
            rrs.append((n, t, c, ttl, msg[off:off + rdlen]))
            off += rdlen
        r[sec] = rrs
    for n, t, c, ttl, rd in r["ar"]:
        if t == 41:
            r["rcode"] |= (ttl >> 24) << 4
            r["edns_payload"] = c
    return r
