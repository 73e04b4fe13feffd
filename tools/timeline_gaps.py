#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""timeline_gaps.py: where the time of a waited-for call goes, from a
timeline that STDCL_TIMELINE wrote (Python's standard library only).

  tools/timeline_gaps.py TRACE.json [--min-commands N] [--kernels]

Each host thread's wait (a "wait" span) closes a batch: the device commands
that the thread enqueued and that ended after its wait before it and by this
one's end.  A batch with one of the thread's program builds in it, or with a
command enqueued before the wait before it, is left out; with --kernels, so
is a batch of transfers alone.  For the batches of at least N commands
(default 2), grouped by the commands' names, the medians in microseconds of:

  launch   the batch's first enqueue to its first command's start
  busy     the commands' device time, summed
  gaps     the device idle between the first command's start and the last
           one's end (commands the timeline does not show, such as a
           buffer fill, fall in here)
  notice   the last command's end to the end of the wait
  total    the first enqueue to the end of the wait

Where no two commands overlap, total = launch + busy + gaps + notice (busy
counts overlapping commands, on two queues, each in full).  Device times are
on the host's clock as the timeline puts them.
"""
import argparse
import json
import statistics
import sys
from collections import defaultdict


def load(path):
    with open(path) as f:
        d = json.load(f)
    return d["traceEvents"] if isinstance(d, dict) else d


def batches(events, min_commands, kernels_only=False):
    host_tids = {e["tid"] for e in events if e.get("ph") == "X" and e.get("cat") == "host"}
    builds = defaultdict(list)  # each host thread's program builds
    for e in events:
        if e.get("ph") == "X" and e["tid"] in host_tids and e.get("name", "").startswith("build"):
            builds[e["tid"]].append((e["ts"], e["ts"] + e["dur"]))
    # Each command's enqueue: the flow that starts on a host thread and ends at
    # the command's start on its queue.  A command belongs to the thread that
    # enqueued it; one without a flow is left out.
    starts = {e["id"]: (e["tid"], e["ts"]) for e in events if e.get("ph") == "s"}
    enq = {(e["tid"], e["ts"]): starts[e["id"]] for e in events if e.get("ph") == "f" and e.get("id") in starts}
    mine = defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and e["tid"] not in host_tids and (e["tid"], e["ts"]) in enq:
            thread, t = enq[(e["tid"], e["ts"])]
            mine[thread].append((e, t))
    out = []
    for thread, cmds in mine.items():
        cmds.sort(key=lambda c: c[0]["ts"] + c[0]["dur"])
        waits = sorted(e["ts"] + e["dur"] for e in events
                       if e.get("ph") == "X" and e["tid"] == thread and e.get("name", "").startswith("wait"))
        prev_end, i = float("-inf"), 0
        for end in waits:
            batch = []
            while i < len(cmds) and cmds[i][0]["ts"] + cmds[i][0]["dur"] <= end:
                if cmds[i][0]["ts"] + cmds[i][0]["dur"] > prev_end:
                    batch.append(cmds[i])
                i += 1
            before, prev_end = prev_end, end
            if len(batch) < min_commands or (kernels_only and not any(e.get("cat") == "kernel" for e, _ in batch)):
                continue
            t0 = min(t for _, t in batch)
            if t0 < before or any(b0 < end and b1 > t0 for b0, b1 in builds[thread]):
                continue  # enqueued before the wait before it, or a build in between
            out.append(figures([e for e, _ in batch], t0, end))
    return out


def figures(batch, t0, end):
    batch.sort(key=lambda e: e["ts"])
    first, last_end = batch[0]["ts"], max(e["ts"] + e["dur"] for e in batch)
    covered, reach = 0.0, first  # the union of the commands' spans
    for e in batch:
        s, f = max(e["ts"], reach), e["ts"] + e["dur"]
        if f > s:
            covered += f - s
        reach = max(reach, f)
    names = defaultdict(int)
    for e in batch:
        names[e["name"]] += 1
    key = ", ".join(f"{n} x {k}" if n > 1 else k for k, n in sorted(names.items()))
    return key, {"launch": first - t0, "busy": sum(e["dur"] for e in batch), "gaps": (last_end - first) - covered,
                 "notice": end - last_end, "total": end - t0}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--min-commands", type=int, default=2)
    ap.add_argument("--kernels", action="store_true", help="leave out the batches of transfers alone")
    a = ap.parse_args()
    try:
        found = batches(load(a.trace), a.min_commands, a.kernels)
    except (OSError, ValueError, KeyError) as err:
        print(f"timeline_gaps: {a.trace}: {err}", file=sys.stderr)
        return 1
    groups = defaultdict(list)
    for key, row in found:
        groups[key].append(row)
    if not groups:
        print(f"timeline_gaps: {a.trace}: no wait closes {a.min_commands} or more commands")
        return 0
    cols = ("launch", "busy", "gaps", "notice", "total")
    for key, rows in groups.items():
        med = {c: statistics.median(r[c] for r in rows) for c in cols}
        print(f"{len(rows)} waits of [{key}]")
        print("  median us: " + ", ".join(f"{c} {med[c]:.1f}" for c in cols))
    return 0


if __name__ == "__main__":
    sys.exit(main())
