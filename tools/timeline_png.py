#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""timeline_png.py: draws a timeline that STDCL_TIMELINE wrote as a PNG, for
a look without a browser (Perfetto or chrome://tracing show the same file
with zoom and details).  Python's standard library only.

  tools/timeline_png.py TRACE.json OUT.png [--width PX] [--from MS] [--to MS]
                        [--arrows]

One row per track: the host threads (waits and builds), then each device's
queues (kernels, transfers to the device, to the host, device copies), in
the file's order; a time axis in milliseconds from the library's load.
--from/--to show a window of the run; --arrows draws a line from each enqueue
to its command's start.
"""
import argparse
import json
import struct
import sys
import zlib

# A 5 x 7 font: each glyph is 7 rows of 5 bits (high bit left).
FONT = {
    " ": [0, 0, 0, 0, 0, 0, 0], "0": [14, 17, 19, 21, 25, 17, 14], "1": [4, 12, 4, 4, 4, 4, 14],
    "2": [14, 17, 1, 2, 4, 8, 31], "3": [30, 1, 1, 14, 1, 1, 30], "4": [2, 6, 10, 18, 31, 2, 2],
    "5": [31, 16, 30, 1, 1, 17, 14], "6": [6, 8, 16, 30, 17, 17, 14], "7": [31, 1, 2, 4, 8, 8, 8],
    "8": [14, 17, 17, 14, 17, 17, 14], "9": [14, 17, 17, 15, 1, 2, 12], "A": [14, 17, 17, 31, 17, 17, 17],
    "B": [30, 17, 17, 30, 17, 17, 30], "C": [14, 17, 16, 16, 16, 17, 14], "D": [28, 18, 17, 17, 17, 18, 28],
    "E": [31, 16, 16, 30, 16, 16, 31], "F": [31, 16, 16, 30, 16, 16, 16], "G": [14, 17, 16, 23, 17, 17, 15],
    "H": [17, 17, 17, 31, 17, 17, 17], "I": [14, 4, 4, 4, 4, 4, 14], "J": [7, 2, 2, 2, 2, 18, 12],
    "K": [17, 18, 20, 24, 20, 18, 17], "L": [16, 16, 16, 16, 16, 16, 31], "M": [17, 27, 21, 21, 17, 17, 17],
    "N": [17, 17, 25, 21, 19, 17, 17], "O": [14, 17, 17, 17, 17, 17, 14], "P": [30, 17, 17, 30, 16, 16, 16],
    "Q": [14, 17, 17, 17, 21, 18, 13], "R": [30, 17, 17, 30, 20, 18, 17], "S": [15, 16, 16, 14, 1, 1, 30],
    "T": [31, 4, 4, 4, 4, 4, 4], "U": [17, 17, 17, 17, 17, 17, 14], "V": [17, 17, 17, 17, 17, 10, 4],
    "W": [17, 17, 17, 21, 21, 21, 10], "X": [17, 17, 10, 4, 10, 17, 17], "Y": [17, 17, 10, 4, 4, 4, 4],
    "Z": [31, 1, 2, 4, 8, 16, 31], ".": [0, 0, 0, 0, 0, 12, 12], ",": [0, 0, 0, 0, 12, 4, 8],
    ":": [0, 12, 12, 0, 12, 12, 0], "-": [0, 0, 0, 31, 0, 0, 0], "_": [0, 0, 0, 0, 0, 0, 31],
    "(": [2, 4, 8, 8, 8, 4, 2], ")": [8, 4, 2, 2, 2, 4, 8], "/": [1, 1, 2, 4, 8, 16, 16],
    "'": [4, 4, 8, 0, 0, 0, 0], "+": [0, 4, 4, 31, 4, 4, 0], "=": [0, 0, 31, 0, 31, 0, 0],
    "%": [24, 25, 2, 4, 8, 19, 3], "#": [10, 10, 31, 10, 31, 10, 10], "?": [14, 17, 1, 2, 4, 0, 4],
}

COLORS = {
    "kernel": (52, 101, 164), "to_device": (78, 154, 6), "to_host": (206, 92, 0), "copy": (117, 80, 123),
    "wait": (170, 170, 170), "wait (polled)": (140, 170, 200), "build": (143, 89, 2), "other": (100, 100, 100),
}


class Canvas:
    def __init__(self, w, h):
        self.w, self.h = w, h
        self.px = bytearray(b"\xff" * (w * h * 3))

    def rect(self, x0, y0, x1, y1, c):
        x0, x1 = max(0, int(x0)), min(self.w, int(x1))
        y0, y1 = max(0, int(y0)), min(self.h, int(y1))
        if x1 <= x0 or y1 <= y0:
            return
        row = bytes(c) * (x1 - x0)
        for y in range(y0, y1):
            o = (y * self.w + x0) * 3
            self.px[o:o + len(row)] = row

    def line(self, x0, y0, x1, y1, c):
        n = int(max(abs(x1 - x0), abs(y1 - y0))) + 1
        for i in range(n + 1):
            t = i / n
            x, y = int(x0 + (x1 - x0) * t), int(y0 + (y1 - y0) * t)
            if 0 <= x < self.w and 0 <= y < self.h:
                o = (y * self.w + x) * 3
                self.px[o:o + 3] = bytes(c)

    def text(self, x, y, s, c=(0, 0, 0), limit=None):
        for ch in s.upper():
            if limit is not None and x + 6 > limit:
                break
            g = FONT.get(ch, FONT["?"])
            for r, bits in enumerate(g):
                for k in range(5):
                    if bits & (16 >> k):
                        self.rect(x + k, y + r, x + k + 1, y + r + 1, c)
            x += 6
        return x

    def png(self):
        raw = b"".join(b"\x00" + bytes(self.px[y * self.w * 3:(y + 1) * self.w * 3]) for y in range(self.h))

        def chunk(kind, data):
            return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff)
        return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0)) +
                chunk(b"IDAT", zlib.compress(raw, 6)) + chunk(b"IEND", b""))


def color_of(e):
    if e.get("cat") == "host":
        n = e["name"]
        return COLORS["build"] if n.startswith("build") else COLORS.get(n, COLORS["other"])
    return COLORS.get(e.get("cat"), COLORS["other"])


def nice_step(span_ms, ticks=10):
    raw = span_ms / ticks
    p = 10 ** len(str(int(raw))) / 10 if raw >= 1 else 1
    while p > raw:
        p /= 10
    for m in (1, 2, 5, 10):
        if p * m >= raw:
            return p * m
    return p * 10


def main():
    ap = argparse.ArgumentParser(description="draws an STDCL_TIMELINE file as a PNG")
    ap.add_argument("trace")
    ap.add_argument("out")
    ap.add_argument("--width", type=int, default=1600)
    ap.add_argument("--from", dest="t0", type=float, default=None, help="ms from the library's load")
    ap.add_argument("--to", dest="t1", type=float, default=None, help="ms from the library's load")
    ap.add_argument("--arrows", action="store_true")
    a = ap.parse_args()
    with open(a.trace) as f:
        doc = json.load(f)
    ev = doc["traceEvents"]
    names, order = {}, {}
    for e in ev:
        if e["ph"] == "M" and e["name"] == "thread_name":
            names[e["tid"]] = e["args"]["name"]
        if e["ph"] == "M" and e["name"] == "thread_sort_index":
            order[e["tid"]] = e["args"]["sort_index"]
    spans = [e for e in ev if e["ph"] == "X"]
    if not spans:
        print("timeline_png: %s has no commands or spans" % a.trace, file=sys.stderr)
        return 1
    used = sorted({e["tid"] for e in spans}, key=lambda t: (order.get(t, t), t))
    lo = min(e["ts"] for e in spans) / 1e3 if a.t0 is None else a.t0
    hi = max(e["ts"] + e["dur"] for e in spans) / 1e3 if a.t1 is None else a.t1
    if hi <= lo:
        hi = lo + 1e-3
    left, top, row, right = 330, 40, 26, 20
    legend = 30
    h = top + row * len(used) + legend + 10
    c = Canvas(a.width, h)
    span_px = a.width - left - right

    def x_of(ms):
        return left + (ms - lo) / (hi - lo) * span_px
    step = nice_step(hi - lo)
    t = (int(lo / step) + 1) * step if lo % step else lo
    while t <= hi + 1e-9:
        x = x_of(t)
        c.rect(x, top - 6, x + 1, top + row * len(used), (225, 225, 225))
        c.text(int(x) - 10, top - 20, ("%g" % round(t, 6)))
        t += step
    c.text(8, top - 20, "MS FROM LOAD")
    ypos = {}
    for i, tid in enumerate(used):
        y = top + i * row
        ypos[tid] = y
        if i % 2:
            c.rect(0, y, a.width, y + row, (246, 246, 246))
        label = names.get(tid, "track %d" % tid)
        room = (left - 12) // 6
        if len(label) > room:  # keep both ends: the context and device, and the queue
            label = label[:room // 2 - 1] + ".." + label[-(room - room // 2 - 1):]
        c.text(6, y + 9, label, limit=left - 6)
    for e in spans:
        y = ypos[e["tid"]]
        x0, x1 = x_of(e["ts"] / 1e3), x_of((e["ts"] + e["dur"]) / 1e3)
        if x1 < left or x0 > a.width - right:
            continue
        x0, x1 = max(x0, left), min(x1, a.width - right)
        c.rect(x0, y + 4, max(x1, x0 + 1), y + row - 4, color_of(e))
    if a.arrows:
        starts = {e["id"]: e for e in ev if e["ph"] == "s"}
        for e in ev:
            s = starts.get(e.get("id")) if e["ph"] == "f" else None
            if s and s["tid"] in ypos and e["tid"] in ypos:
                xs, xe = x_of(s["ts"] / 1e3), x_of(e["ts"] / 1e3)
                if left <= xs <= a.width - right and left <= xe <= a.width - right:
                    c.line(xs, ypos[s["tid"]] + row / 2, xe, ypos[e["tid"]] + row / 2, (200, 60, 60))
    x, y = left, top + row * len(used) + 12
    for label, key in (("KERNEL", "kernel"), ("TO DEVICE", "to_device"), ("TO HOST", "to_host"),
                       ("DEVICE COPY", "copy"), ("WAIT", "wait"), ("WAIT (POLLED)", "wait (polled)"),
                       ("BUILD", "build")):
        c.rect(x, y, x + 14, y + 8, COLORS[key])
        x = c.text(x + 18, y, label) + 16
    with open(a.out, "wb") as f:
        f.write(c.png())
    print("timeline_png: %s: %d tracks, %.3f to %.3f ms" % (a.out, len(used), lo, hi))
    return 0


if __name__ == "__main__":
    sys.exit(main())
