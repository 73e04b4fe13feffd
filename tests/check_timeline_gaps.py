#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_timeline_gaps.py: tools/timeline_gaps.py against traces whose
answers are known: generated calls (a few kernels and transfers on one or
two queues, the enqueues, a wait) of one or two host threads at the same
times, with their launch, busy, gaps, notice and total worked out here from
the same numbers, plus the batches it must leave out (a build inside,
transfers alone under --kernels).

  tests/check_timeline_gaps.py PATH/TO/timeline_gaps.py [--seed N] [--count N]
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile

THREADS = {1: (1001, 1002), 2: (1003, 1004)}  # host thread: its queues


def x(tid, ts, dur, name, cat):
    return {"ph": "X", "pid": 1, "tid": tid, "ts": ts, "dur": dur, "name": name, "cat": cat}


class Trace:
    """The calls of one host thread on its two queues, from time 1000 on."""

    def __init__(self, host, flow0):
        self.ev, self.flow, self.t = [], flow0, 1000.0
        self.host, self.queues = host, THREADS[host]

    def call(self, rng, name, cmds, build=False):
        """One waited-for call of cmds (name, cat, queue) after the last; returns
        its figures."""
        self.t += rng.uniform(5, 50)
        t0 = self.t
        spans, enq_t = [], t0
        start = t0 + rng.uniform(1, 30)  # the first command's start
        for i, (cname, cat, q) in enumerate(cmds):
            if i:
                enq_t += rng.uniform(0.5, 5)
                if rng.random() < 0.3 and spans:  # on the other queue, overlapping
                    q = self.queues[1] if q == self.queues[0] else self.queues[0]
                    start = spans[-1][0] + rng.uniform(0, spans[-1][1] - spans[-1][0])
                else:
                    start = max(e for _, e in spans) + rng.choice([0.0, rng.uniform(0.5, 20)])
                start = max(start, enq_t)
            dur = rng.uniform(2, 200)
            q = self.queues[0] if q is None else q
            self.ev.append(x(q, start, dur, f"{name}: {cname}", cat))
            self.ev.append({"ph": "s", "pid": 1, "tid": self.host, "ts": enq_t, "id": self.flow, "name": "enqueue"})
            self.ev.append({"ph": "f", "bp": "e", "pid": 1, "tid": q, "ts": start, "id": self.flow, "name": "enqueue"})
            self.flow += 1
            spans.append((start, start + dur))
        first, last = min(s for s, _ in spans), max(e for _, e in spans)
        if build:
            self.ev.append(x(self.host, t0 + 0.2, 0.1, "build (compiled)", "host"))
        wait_start = enq_t + 0.1
        end = max(last, wait_start) + rng.uniform(1, 40)
        self.ev.append(x(self.host, wait_start, end - wait_start, "wait", "host"))
        self.t = end
        covered, reach = 0.0, first
        for s, e in sorted(spans):
            if e > max(s, reach):
                covered += e - max(s, reach)
            reach = max(reach, e)
        return {"launch": first - t0, "busy": sum(e - s for s, e in spans), "gaps": last - first - covered,
                "notice": end - last, "total": end - t0}


def run(tool, events, *args):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"traceEvents": events}, f)
    try:
        p = subprocess.run([sys.executable, tool, f.name, *args], capture_output=True, text=True, timeout=60)
    finally:
        os.unlink(f.name)
    if p.returncode != 0:
        raise AssertionError(f"timeline_gaps exited {p.returncode}: {p.stderr}")
    got, lines = {}, p.stdout.splitlines()
    for head, med in zip(lines[::2], lines[1::2]):
        n, key = head.split(" waits of [", 1)
        got[key.rstrip("]")] = (int(n), {k: float(v) for k, v in
                                         (kv.split() for kv in med.split(":", 1)[1].split(","))})
    return got


def key_of(name, cmds):
    counts = {}
    for cname, _, _ in cmds:
        counts[f"{name}: {cname}"] = counts.get(f"{name}: {cname}", 0) + 1
    return ", ".join(f"{n} x {k}" if n > 1 else k for k, n in sorted(counts.items()))


def one(tool, rng):
    """A trace of one or two host threads, each with a few kinds of call,
    repeated, at the same times; True when every median agrees."""
    events, want, kinds = [], {}, []
    for host in range(1, rng.randint(1, 2) + 1):
        tr = Trace(host, 100000 * host)
        mine = []
        for k in range(rng.randint(1, 3)):
            cmds = [(f"k{rng.randint(0, 2)}", "kernel", None) for _ in range(rng.randint(1, 5))]
            mine.append((f"thread{host} call{k}", cmds))
        mine.append((f"thread{host} clmsync", [("to device", "to_device", None)]))
        for _ in range(rng.randint(1, 7)):
            for name, cmds in mine:
                want.setdefault(key_of(name, cmds), []).append(tr.call(rng, name, cmds))
        tr.call(rng, mine[0][0], mine[0][1], build=True)  # left out: a build in it
        events += tr.ev
        kinds += mine
    ok = True
    for args, keep in ((["--min-commands", "1", "--kernels"], lambda name, cmds: not name.endswith("clmsync")),
                       (["--min-commands", "1"], lambda name, cmds: True),
                       (["--min-commands", "3"], lambda name, cmds: len(cmds) >= 3)):
        got = run(tool, events, *args)
        exp = {key_of(name, cmds): want[key_of(name, cmds)] for name, cmds in kinds if keep(name, cmds)}
        if set(got) != set(exp):
            print(f"check_timeline_gaps: {args}: groups {sorted(got)} where {sorted(exp)}")
            ok = False
            continue
        for k, rows in exp.items():
            n, med = got[k]
            if n != len(rows):
                print(f"check_timeline_gaps: {args}: [{k}]: {n} waits where {len(rows)}")
                ok = False
            for c in ("launch", "busy", "gaps", "notice", "total"):
                w = statistics.median(r[c] for r in rows)
                if abs(med[c] - w) > 0.06:
                    print(f"check_timeline_gaps: {args}: [{k}]: {c} {med[c]} where {w:.3f}")
                    ok = False
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--count", type=int, default=40)
    a = ap.parse_args()
    bad = 0
    for i in range(a.count):
        if not one(a.tool, random.Random(a.seed * 1000003 + i)):
            print(f"check_timeline_gaps: trace {i} of seed {a.seed} disagrees")
            bad += 1
    print(f"check_timeline_gaps: {a.count - bad} of {a.count} generated traces agree (seed {a.seed})")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
