# SPDX-License-Identifier: MIT
"""A stand-in for systemd's notification socket: binds a Unix datagram
socket at argv[1] and appends every message it receives, one per line
(newlines inside a message become '|'), to argv[2], each line prefixed
with the time since start in milliseconds.  When a message says READY=1 it
also asks the DNS server at 127.0.0.1:argv[3] for id.server and records
"ANSWERED" or "SILENT", so that a test can tell that READY came only once
the listeners answer.  Stops after argv[4] seconds.  For tests only."""
import os
import socket
import sys
import time

import dnsraw

path, out, port, limit = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
try:
    os.unlink(path)
except FileNotFoundError:
    pass
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
s.settimeout(0.2)
t0 = time.time()
with open(out, "a", buffering=1) as f:
    while time.time() - t0 < limit:
        try:
            msg = s.recv(4096).decode(errors="replace")
        except socket.timeout:
            continue
        f.write("%d %s\n" % ((time.time() - t0) * 1000, msg.replace("\n", "|")))
        if "READY=1" in msg.split("\n"):
            q = dnsraw.query("id.server", 16, qclass=3)
            u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            u.settimeout(1)
            try:
                u.sendto(q, ("127.0.0.1", port))
                u.recv(4096)
                f.write("ANSWERED\n")
            except OSError:
                f.write("SILENT\n")
            u.close()
