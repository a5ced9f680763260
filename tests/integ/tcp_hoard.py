# SPDX-License-Identifier: MIT
# Clients of test_tcp_hoard.sh, each from its own loopback source
# address (bind() to 127.0.0.x before connect()): a hoarder that opens
# idle connections (or connections that ask once, then hold) and reopens
# those the server closes, clients that ask one question over a new
# connection every 100 ms, a slowloris client, and idle clients that
# asked once.  Every loop is bounded in time and count.  Prints one line
# of key=value figures.  TEST_TIME_FACTOR lengthens how long a client
# waits for an answer, not what is counted.
#
#   python3 tcp_hoard.py hoard SECONDS NCONN REOPEN   # REOPEN: 0, 1, ask
#   python3 tcp_hoard.py asked NCONN WAIT
import os
import select
import socket
import sys
import threading
import time

import dnsraw

HOST = "127.0.0.1"
PORT = int(os.environ["PORT"])
FACTOR = max(1.0, float(os.environ.get("TEST_TIME_FACTOR", "1")))


def connect(src, timeout=3.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.bind((src, 0))
    s.connect((HOST, PORT))
    return s


def closed_by_server(s, wait):
    """True when the server closed @s within @wait seconds."""
    try:
        r, _, _ = select.select([s], [], [], wait)
        return bool(r) and s.recv(16) == b""
    except OSError:
        return True


def reap(conns, wait):
    """Takes out of @conns (and closes) those the server closed, waiting
    at most @wait seconds for the first; returns how many."""
    if not conns:
        time.sleep(wait)
        return 0
    n = 0
    r, _, _ = select.select(conns, [], [], wait)
    for s in r:
        try:
            gone = s.recv(16) == b""
        except OSError:
            gone = True
        if gone:
            n += 1
            conns.remove(s)
            s.close()
    return n


class Asker(threading.Thread):
    """A new TCP connection every 100 ms with one query: counts answers."""

    def __init__(self, src, seconds):
        super().__init__(daemon=True)
        self.src, self.seconds = src, seconds
        self.asked = self.answered = 0
        self.worst = 0.0
        self.errors = {}

    def run(self):
        end = time.time() + self.seconds
        qid = 0
        while time.time() < end and self.asked < 1000:
            qid = (qid + 1) & 0xffff
            self.asked += 1
            t0 = time.time()
            try:
                s = connect(self.src, timeout=2.0 * FACTOR)
                s.sendall(dnsraw.frame(dnsraw.query("www.t.test", qid=qid)))
                m = dnsraw.tcp_read(s)
                if m is not None and dnsraw.parse(m)["id"] == qid:
                    self.answered += 1
                    self.worst = max(self.worst, time.time() - t0)
                else:
                    self.errors["noanswer"] = self.errors.get("noanswer", 0) + 1
                s.close()
            except OSError as e:
                k = type(e).__name__
                self.errors[k] = self.errors.get(k, 0) + 1
            time.sleep(0.1)


class Slowloris(threading.Thread):
    """One byte a second of a query that never completes: the seconds
    until the server closes the connection (None: still open)."""

    def __init__(self, src, seconds):
        super().__init__(daemon=True)
        self.src, self.seconds = src, seconds
        self.closed = None

    def run(self):
        msg = b"\x00\xff" + b"\x12" * 200    # announces 255 bytes, sends few
        try:
            s = connect(self.src)
        except OSError:
            self.closed = 0.0
            return
        t0 = time.time()
        for i in range(int(self.seconds)):
            try:
                s.send(msg[i:i + 1])
            except OSError:
                self.closed = time.time() - t0
                return
            if closed_by_server(s, 1.0):
                self.closed = time.time() - t0
                return
        s.close()


class SlowReader(threading.Thread):
    """Asks 3000 large answers (about 10 MB) at once, reads nothing for
    @pause seconds, then everything: how many whole answers came, and
    how the stream ended (eof: at a message boundary; cut: inside a
    message; reset)."""

    def __init__(self, src, pause):
        super().__init__(daemon=True)
        self.src, self.pause = src, pause
        self.whole, self.end = 0, "none"

    def run(self):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.bind((self.src, 0))
        s.settimeout(15)
        s.connect((HOST, PORT))
        q = dnsraw.frame(dnsraw.query("big.t.test", 16))
        s.settimeout(0.2)
        for _ in range(3000):
            try:
                s.send(q)
            except OSError:
                break
        time.sleep(self.pause)
        s.settimeout(15)
        buf = b""
        end = time.time() + 20
        while time.time() < end:
            try:
                d = s.recv(65536)
            except ConnectionResetError:
                self.end = "reset"
                break
            except OSError:
                self.end = "timeout"
                break
            if not d:
                self.end = "eof"
                break
            buf += d
            while len(buf) >= 2 and len(buf) >= 2 + (buf[0] << 8 | buf[1]):
                buf = buf[2 + (buf[0] << 8 | buf[1]):]
                self.whole += 1
        if self.end == "eof" and buf:
            self.end = "cut"


def hoarded(ask, qid):
    """A connection of the hoarder; with @ask, it has asked once and read
    the answer (a held connection that the server cannot tell from a
    resolver's that went quiet)."""
    s = connect("127.0.0.2")
    if ask:
        s.sendall(dnsraw.frame(dnsraw.query("www.t.test", qid=qid)))
        if dnsraw.tcp_read(s) is None:
            s.close()
            raise ConnectionResetError("closed before its answer")
    return s


def hoard(seconds, nconn, reopen):
    """127.0.0.2 opens @nconn idle connections (and, with @reopen, opens a
    new one for each the server closes; with "ask", each asks once first)
    while 127.0.0.3-6 ask every 100 ms and 127.0.0.7 trickles a query."""
    ask = reopen == "ask"
    askers = [Asker("127.0.0.%d" % i, seconds) for i in range(3, 7)]
    slow = Slowloris("127.0.0.7", seconds)
    for a in askers:
        a.start()
    time.sleep(0.3)
    conns, opened, closed_fast = [], 0, 0
    for _ in range(nconn):
        try:
            conns.append(hoarded(ask, opened))
            opened += 1
        except OSError:
            closed_fast += 1
    # Those the server closed at once: seen within one second.
    end = time.time() + 1.0
    while time.time() < end:
        closed_fast += reap(conns, 0.1)
    kept_after_1s = len(conns)
    slow.start()
    end = time.time() + seconds - 1.3
    while time.time() < end and opened < 20000:
        reap(conns, 0.05)
        if reopen:
            while len(conns) < nconn and opened < 20000:
                try:
                    conns.append(hoarded(ask, opened))
                    opened += 1
                except OSError:
                    break
    # The hoarder's survivors still answer (per-source: untouched); at
    # most 3 s for all (those never accepted would each wait out their
    # timeout).
    still = 0
    end = time.time() + 3.0 * FACTOR
    for i, s in enumerate(conns):
        left = end - time.time()
        if left <= 0:
            break
        try:
            s.settimeout(min(3.0, left))
            s.sendall(dnsraw.frame(dnsraw.query("www.t.test", qid=i)))
            m = dnsraw.tcp_read(s)
            still += m is not None and dnsraw.parse(m)["id"] == i
        except OSError:
            pass
    for a in askers:
        a.join(seconds + 5)
    slow.join(seconds + 5)
    asked = sum(a.asked for a in askers)
    answered = sum(a.answered for a in askers)
    worst = max(a.worst for a in askers)
    errors = {}
    for a in askers:
        for k, v in a.errors.items():
            errors[k] = errors.get(k, 0) + v
    print("opened=%d closed_fast=%d kept=%d still=%d asked=%d answered=%d "
          "worst=%.2f slow=%s errors=%s" % (opened, closed_fast, kept_after_1s, still,
                                  asked, answered, worst,
                                  "open" if slow.closed is None
                                  else "%.1f" % slow.closed,
                                  ",".join("%s:%d" % kv for kv in
                                           sorted(errors.items())) or "none"))


def asked(nconn, wait):
    """127.0.0.8 opens @nconn connections that each ask once, then stay
    quiet: how many the server has closed after @wait seconds."""
    conns = []
    for i in range(nconn):
        try:
            s = connect("127.0.0.8")
            s.sendall(dnsraw.frame(dnsraw.query("www.t.test", qid=i)))
            if dnsraw.tcp_read(s) is not None:
                conns.append(s)
        except OSError:
            pass
    reader = SlowReader("127.0.0.9", 2.0)
    reader.start()
    t0 = time.time()
    closed, last = 0, 0.0
    end = t0 + wait
    live = list(conns)
    while live and time.time() < end:
        n = reap(live, 0.1)
        if n:
            closed += n
            last = time.time() - t0
    reader.join(30)
    print("answered=%d closed=%d last=%.1f reader=%d:%s" % (
        len(conns), closed, last, reader.whole, reader.end))


if __name__ == "__main__":
    if sys.argv[1] == "hoard":
        hoard(float(sys.argv[2]), int(sys.argv[3]),
              sys.argv[4] if sys.argv[4] == "ask" else sys.argv[4] == "1")
    else:
        asked(int(sys.argv[2]), float(sys.argv[3]))
