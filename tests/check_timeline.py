#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_timeline.py: checks a timeline written by STDCL_TIMELINE (test_timeline
runs it on the file its worker wrote).

  check_timeline.py FILE --devices N [--kernel NAME] [--threads T]

Checks that FILE is JSON in the Trace Event format, and:
  - every event has ph, pid and (but the process name) tid; every "X" event
    has ts >= 0 and dur >= 0 and ends within the process's life
    (otherData.seconds);
  - each of the N devices of the first context with commands has a track
    named after it, the kernel NAME on it (with its work-items) and
    transfers both ways (with bytes and GB/s);
  - on each track the commands do not overlap (an in-order queue), and on
    each device every kernel starts after the end of the upload before it
    and ends before the start of the download after it (the kernel and
    transfer tracks share the device's clock);
  - every flow start ("s") has its end ("f") with the same id, on a device
    track, no earlier than the start;
  - at least T host threads are named and have spans.
Prints one line per failed check; the exit status is 1 when any failed.
"""
import argparse
import json
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--devices", type=int, required=True)
    ap.add_argument("--kernel", default="add")
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    bad = []
    with open(a.file) as f:
        doc = json.load(f)
    ev = doc["traceEvents"]
    other = doc["otherData"]
    life_us = other["seconds"] * 1e6
    names = {}
    for e in ev:
        for k in ("ph", "pid"):
            if k not in e:
                bad.append("an event without %s: %r" % (k, e))
        if e["ph"] == "M" and e["name"] == "thread_name":
            names[e["tid"]] = e["args"]["name"]
        if e["ph"] == "X":
            if e["ts"] < 0 or e["dur"] < 0 or e["ts"] + e["dur"] > life_us + 1:
                bad.append("%s at %.1f us for %.1f us: outside the process's %.1f us" %
                           (e["name"], e["ts"], e["dur"], life_us))
    tracks = {}
    for e in ev:
        if e["ph"] == "X" and e["cat"] != "host":
            tracks.setdefault(e["tid"], []).append(e)
    # The devices of the first context with commands: "<label> device <i>: ..."
    dev_tracks = {}
    label = None
    for tid in sorted(tracks):
        n = names.get(tid, "")
        lab, _, rest = n.partition(" device ")
        if label is None:
            label = lab
        if lab != label:
            continue
        dev_tracks.setdefault(int(rest.split(":")[0]), []).append(tid)
    if len(dev_tracks) != a.devices:
        bad.append("%d device(s) with commands in %s, not %d" % (len(dev_tracks), label, a.devices))
    for d, tids in sorted(dev_tracks.items()):
        cmds = sorted((e for t in tids for e in tracks[t]), key=lambda e: e["ts"])
        kernels = [e for e in cmds if e["cat"] == "kernel" and e["name"] == a.kernel]
        ups = [e for e in cmds if e["cat"] == "to_device"]
        downs = [e for e in cmds if e["cat"] == "to_host"]
        if not kernels or not ups or not downs:
            bad.append("device %d: %d %s kernel(s), %d upload(s), %d download(s)" %
                       (d, len(kernels), a.kernel, len(ups), len(downs)))
            continue
        for k in kernels:
            if k["args"].get("work_items", 0) <= 0:
                bad.append("device %d: kernel %s without work_items" % (d, a.kernel))
            before = [u for u in ups if u["ts"] <= k["ts"]]
            after = [w for w in downs if w["ts"] >= k["ts"]]
            if not before or before[-1]["ts"] + before[-1]["dur"] > k["ts"] + 1:
                bad.append("device %d: kernel at %.1f us does not start after an upload ends" % (d, k["ts"]))
            if not after or k["ts"] + k["dur"] > after[0]["ts"] + 1:
                bad.append("device %d: kernel ending at %.1f us does not end before a download starts" %
                           (d, k["ts"] + k["dur"]))
        for u in ups + downs:
            if u["args"].get("bytes", 0) <= 0 or (u["args"].get("moved") and "GB_per_s" not in u["args"]):
                bad.append("device %d: transfer %s without bytes or GB/s: %r" % (d, u["name"], u["args"]))
        for t in tids:
            seq = sorted(tracks[t], key=lambda e: e["ts"])
            for x, y in zip(seq, seq[1:]):
                if x["ts"] + x["dur"] > y["ts"] + 1:
                    bad.append("track %s: %s and %s overlap" % (names.get(t), x["name"], y["name"]))
    starts = {e["id"]: e for e in ev if e["ph"] == "s"}
    ends = {e["id"]: e for e in ev if e["ph"] == "f"}
    if set(starts) != set(ends):
        bad.append("%d flow start(s) without an end" % len(set(starts) ^ set(ends)))
    for i, s in starts.items():
        f = ends.get(i)
        if f and (f["ts"] + 1 < s["ts"] or f["tid"] not in tracks):
            bad.append("flow %s: ends at %.1f us on track %s, before its start at %.1f us" %
                       (i, f["ts"], f["tid"], s["ts"]))
    host = {e["tid"] for e in ev if e["ph"] == "X" and e["cat"] == "host"}
    host_named = {t for t in host if names.get(t, "").startswith("host thread")}
    if len(host_named) < a.threads:
        bad.append("%d named host thread(s) with spans, not %d" % (len(host_named), a.threads))
    for b in bad:
        print("check_timeline: " + b)
    if not bad:
        print("check_timeline: %s: %d commands on %d device(s), %d host thread(s): ok" %
              (a.file, other["commands"], len(dev_tracks), len(host_named)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
