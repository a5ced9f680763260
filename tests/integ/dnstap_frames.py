#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Prints one line per dnstap message of a Frame Streams file, with what
# dnstap-read does not show: "TYPE PROTOCOL EXTRA" (EXTRA "-" when the
# message has none), TYPE and PROTOCOL as numbers of dnstap.proto
# (1 AUTH_QUERY, 2 AUTH_RESPONSE; 1 UDP, 2 TCP).
#
#   dnstap_frames.py FILE
import struct
import sys


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def fields(b):
    """The fields of a protobuf message: {number: [value, ...]}."""
    out, i = {}, 0
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 5:
            v, i = struct.unpack("<I", b[i:i + 4])[0], i + 4
        elif wt == 1:
            v, i = struct.unpack("<Q", b[i:i + 8])[0], i + 8
        else:
            raise ValueError("wire type %d" % wt)
        out.setdefault(num, []).append(v)
    return out


def frames(data):
    i = 0
    while i + 4 <= len(data):
        (n,) = struct.unpack("!I", data[i:i + 4])
        i += 4
        if n == 0:  # a control frame: its length, then the frame
            (c,) = struct.unpack("!I", data[i:i + 4])
            i += 4 + c
            continue
        yield data[i:i + n]
        i += n


with open(sys.argv[1], "rb") as f:
    blob = f.read()
for fr in frames(blob):
    d = fields(fr)
    m = fields(d.get(14, [b""])[0])
    extra = d.get(3, [b"-"])[0].decode()
    print(m.get(1, [0])[0], m.get(3, [0])[0], extra)
