#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# A real HTTP server on 127.0.0.1 for the health tests and bench/health.sh,
# whose behaviour a test switches by writing one word into MODEFILE:
#   ok      200 "healthy"            err      503 at once
#   slow    200 after SLOW seconds   slowerr  503 after SLOW seconds
#   hang    accept, never answer     down     listener closed (refused)
#   err1    503 once, then ok (the server writes "ok" into MODEFILE)
#   blink   ok, but the listener closes for 0.04 s at random moments 0.3 to
#           0.5 s apart, so a probe now and then is refused and a retry
#           0.1 to 0.2 s on is not (random, so that the gaps never keep
#           step with probes that come every whole second)
# Each request appends its arrival time to MODEFILE.hits, so that a test
# can see how often a node is probed.
# Usage: python3 httpd.py PORT MODEFILE [SLOW] [LIFETIME]
# Bounded: exits by itself after LIFETIME seconds (default 300).
import random
import socket
import sys
import threading
import time

port, modefile = int(sys.argv[1]), sys.argv[2]
slow = float(sys.argv[3]) if len(sys.argv) > 3 else 3.0
deadline = time.time() + (float(sys.argv[4]) if len(sys.argv) > 4 else 300)


def mode():
    try:
        with open(modefile) as f:
            return f.read().strip() or "ok"
    except OSError:
        return "ok"


def serve(conn):
    try:
        conn.settimeout(10)
        conn.recv(4096)
        with open(modefile + ".hits", "a") as f:
            f.write("%.3f\n" % time.time())
        m = mode()
        if m == "err1":
            with open(modefile, "w") as f:
                f.write("ok\n")
            m = "err"
        if m == "hang":
            time.sleep(10)
            return
        if m in ("slow", "slowerr"):
            time.sleep(slow)
        bad = m in ("err", "slowerr")
        status = "503 Service Unavailable" if bad else "200 OK"
        body = b"sick\n" if bad else b"healthy\n"
        conn.sendall(b"HTTP/1.1 " + status.encode() + b"\r\nContent-Length: " +
                     str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n" + body)
    except OSError:
        pass
    finally:
        conn.close()


def listener():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", port))
    s.listen(64)
    s.settimeout(0.05)
    return s


sock = listener()
blink_at = 0.0
while time.time() < deadline:
    if mode() == "blink" and time.time() >= blink_at:
        # Refuse for a moment: shorter than the health thread's tick, so
        # that its immediate second probe finds the listener back.
        blink_at = time.time() + random.uniform(0.3, 0.5)
        sock.close()
        time.sleep(0.04)
        sock = listener()
        continue
    if mode() == "down":
        if sock:
            sock.close()
            sock = None
        time.sleep(0.05)
        continue
    if not sock:
        sock = listener()
    try:
        c, _ = sock.accept()
    except socket.timeout:
        continue
    threading.Thread(target=serve, args=(c,), daemon=True).start()
