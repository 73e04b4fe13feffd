#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# sync_model.py: the sync check held to a model over generated programs.
#
#   python3 tests/sync_model.py [--count N] [--seed S] [--devices D]
#                                      [--runner PATH] [--zero-copy 0|1] [-v]
#                                      [--no-plain] [--narrow] [--shrink SEED]
#
# Generates N programs (seeds S, S+1, ...), each a correct use of libstdcl's
# transfers, kernels and waits over 1 to 4 allocations on 1 or D devices, from
# which one sync (an upload, a download or a wait) is then dropped half the
# time.  A reference model of the sync rules (STDCL-SPEC 5a), written apart
# from the check, says of each program whether a read sees stale bytes (a
# host read, or a kernel read on a device), a transfer overwrites the only
# copy of a change, or a host access races a NOWAIT command, and at which
# operation.  The programs run in tests/helper_syncrun (built with the
# tests) under STDCL_CHECK=sync in the test environment; the runner also says
# which host reads saw values other than one coherent copy would hold (the
# ground truth, where a host read shows it).  Prints one line per
# disagreement (the program, what the model and the check and the run said)
# and the totals; exits 1 on a disagreement.
import argparse
import os
import random
import re
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = [4, 8, 60, 1024, 4096, 5000, 8192, 12288, 65536, 262144 * 4]


class Model:
    """Per element of each allocation, the version each copy holds ('h' and each
    device) and the newest one; commands pending per device (NOWAIT) until a
    wait on that device or a waited command there."""

    def __init__(self, ndev):
        self.ndev = ndev
        self.n = {}
        self.cur = {}
        self.ver = {}
        self.pending = {d: [] for d in range(ndev)}
        self.v = 0
        self.next = 1000
        self.harm = None
        self.harms = []  # every harm, in order (harm: the first)
        # Pages (of 4096 bytes, per allocation) the host touched since the last
        # library call: the check sees the first access to a page between two
        # calls, judged by the word it touches, and nothing after it there.
        self.open = set()
        # Elements plain OpenCL commands (not announced) wrote on a device that
        # no library call on that allocation and device has looked at since:
        # the check learns of them at such a call (stdcl(7)).
        self.unseen = {}
        self.handed = set()  # allocations stdcl_mem handed out
        # (a, d, e): device d got element e of a from the host after device k
        # wrote it there and before anyone brought it back: the host's bytes may
        # as well be a rewrite of the same values, which the check cannot tell
        # from older ones (stdcl(7)).
        self.relayed = set()
        # (a, d, e): the host and a plain command on device d both changed
        # element e between two looks of the check (hw).
        self.ambiguous = set()
        # (a, e): the host's element was replaced by a transfer back from a
        # copy never given it (transfer).
        self.garbled = set()

    def new(self):
        self.v += 1
        return self.v

    def host_value(self):
        """The next value the program writes from the host (hw) or with a
        plain kernel: tests/helper_syncrun's counter, from 1000.  Versions are
        values where they are known, so that a copy older than the newest but
        holding the same value (a kernel's result that the host happens to
        write again) is not stale: the program cannot see the difference, nor
        can the check."""
        v = self.next
        self.next += 1
        return v

    @staticmethod
    def derive(fn, v):
        """The version kinc ("i": +7) or kcopy ("c": 3v + 1) computes from v:
        a 32-bit value where v is one, else a name for it."""
        if isinstance(v, int):
            x = (v + 7) if fn == "i" else (3 * v + 1)
            return (x + 2**31) % 2**32 - 2**31
        return (fn, v)

    def bad(self, op, kind, dev):
        if self.harm is None:
            self.harm = (op, kind, dev)
        self.harms.append((op, kind, dev))

    def alloc(self, a, nel):
        self.n[a] = nel
        v0 = ("init", self.new())  # what clmalloc's memory holds: no value the program wrote
        self.cur[a] = [v0] * nel
        self.ver[a] = {c: [v0] * nel for c in ["h"] + list(range(self.ndev))}
        # Device copies never given a value hold nothing the program wrote.
        for d in range(self.ndev):
            self.ver[a][d] = [None] * nel

    def holder(self, a, e):
        for c in list(range(self.ndev)) + ["h"]:
            if self.ver[a][c][e] == self.cur[a][e]:
                return c
        return None

    def overlaps(self, a, lo, n, g):
        return g["a"] == a and lo < g["off"] + g["n"] and g["off"] < lo + n

    def firsts(self, a, lo, n):
        """The element the host touches first in each page of a[lo, lo + n),
        where that page was not touched since the last library call: the
        accesses the check sees."""
        out = []
        for p in range(lo // 1024, (lo + n - 1) // 1024 + 1):
            if (a, p) not in self.open:
                out.append(max(lo, p * 1024))
        return out

    def host_access(self, op, a, lo, n, write):
        """A host access racing a pending command; seen by the check where a
        racing word is the first the host touches in its page since the last
        library call."""
        racing = []
        for d in range(self.ndev):
            for g in self.pending[d]:
                if g["a"] != a or not (g["kind"] == "dn" or (write and g["kind"] in ("up", "kread"))):
                    continue
                s, t = max(lo, g["off"]), min(lo + n, g["off"] + g["n"])
                if s < t and g.get("seen"):
                    self.bad(op, "race, unwatched", d)
                elif s < t:
                    racing.append((s, t, d))
        if not racing:
            return
        seen = [d for e in self.firsts(a, lo, n) for (s, t, d) in racing if s <= e < t]
        self.bad(op, "race" if seen else "race, unwatched", seen[0] if seen else racing[0][2])

    def settled(self, d):
        """A libstdcl call that waited on device d (-1: every device): the
        check looks at that device's pending commands and forgets those
        complete, which a race with them afterwards may then go unseen (the
        command may well have finished by then).  Another device's stay
        pending for the check: the program has not waited for them."""
        for o in range(self.ndev) if d < 0 else [d]:
            for g in self.pending[o]:
                g["seen"] = True

    def library_call(self, uses=()):
        self.open = set()
        for u in uses:
            # The check looks at device d's copy now and finds the plain
            # command's writes; where a newer version came from elsewhere (the
            # host, another device) since its last look, it cannot tell which
            # came first (stdcl(7)).
            a, d = u
            for e in self.unseen.pop(u, ()):
                if self.ver[a][d][e] != self.cur[a][e]:
                    self.ambiguous.add((a, d, e))

    def plain(self, op, d, a, lo, n):
        self.handed.add(a)
        self.kernel(op, d, [], [(a, lo, n)], True, fn="h")
        self.unseen.setdefault((a, d), set()).update(range(lo, lo + n))

    def touch(self, a, lo, n):
        for p in range(lo // 1024, (lo + n - 1) // 1024 + 1):
            self.open.add((a, p))

    def hw(self, op, a, lo, n):
        # Elements a plain command wrote on a device that no library call has
        # looked at since: the check sees both copies changed between two
        # looks and cannot order them (stdcl(7)).
        for (b, d), els in self.unseen.items():
            if b == a:
                self.ambiguous.update((a, d, e) for e in range(lo, lo + n) if e in els)
        self.host_access(op, a, lo, n, True)
        self.touch(a, lo, n)
        for e in range(lo, lo + n):
            v = self.host_value()
            self.cur[a][e] = v
            self.ver[a]["h"][e] = v
            self.garbled.discard((a, e))

    def hr(self, op, a, lo, n):
        self.host_access(op, a, lo, n, False)
        h, c = self.ver[a]["h"], self.cur[a]
        stale = next((e for e in range(lo, lo + n) if h[e] != c[e]), None)
        if stale is not None:
            # Seen where a page's first word touched since the last library call
            # is a stale one, not a plain command's result the check has not
            # looked at yet; past that word, beyond what the check watches
            # (stdcl(7)): a harm it cannot report, counted apart.
            seen = [e for e in self.firsts(a, lo, n) if h[e] != c[e]
                    and e not in self.unseen.get((a, self.holder(a, e)), ()) and (a, e) not in self.garbled]
            e = seen[0] if seen else stale
            self.bad(op, "stale host read" if seen else "stale host read, unwatched", self.holder(a, e))
        self.touch(a, lo, n)

    def transfer(self, op, d, a, lo, n, up, wait):
        for o in range(self.ndev):
            if o == d:
                continue
            for g in self.pending[o]:
                if self.overlaps(a, lo, n, g) and (g["kind"] == "dn" or (not up and g["kind"] == "up")):
                    self.bad(op, "race, unwatched" if g.get("seen") else "race", o)
        src, dst = ("h", d) if up else (d, "h")
        for e in range(lo, lo + n):
            sv, dv, cv = self.ver[a][src][e], self.ver[a][dst][e], self.cur[a][e]
            if up:
                self.ambiguous.discard((a, d, e))
                if sv != cv and isinstance(self.holder(a, e), int) and self.holder(a, e) != d:
                    self.relayed.add((a, d, e))
                else:
                    self.relayed.discard((a, d, e))
            if not up:
                # Back from a copy never given the element: the host's bytes are
                # replaced by ones nobody wrote, which the check does not judge
                # (programs bring back a whole array a kernel wrote part of), nor
                # a later host read of them, whoever held the newest (stdcl(7)).
                if sv is None:
                    self.garbled.add((a, e))
                else:
                    self.garbled.discard((a, e))
            if dv == cv and sv != cv and self.copies(a, e) == 1 and not (not up and sv is None):
                # A transfer back of memory stdcl_mem handed out, no command on it
                # announced: not checked for a lost host change (stdcl(7)).
                self.bad(op, "lost update, unwatched" if not up and a in self.handed else "lost update", d)
            self.ver[a][dst][e] = sv
        self.note(d, {"kind": "up" if up else "dn", "a": a, "off": lo, "n": n}, wait)

    def copies(self, a, e):
        return sum(1 for c in self.ver[a] if self.ver[a][c][e] == self.cur[a][e])

    def kernel(self, op, d, reads, writes, wait, copy_of=None, fn=None):
        """copy_of: the allocation whose elements (device d's, from 0) the
        writes copy as they are (clmcopy): the same values, so the same
        versions.  fn: the kernel's computation ("c": kcopy, "i": kinc), each
        written element a function of the element it reads (the first read
        range's, at the same place): a version is a value, so the same
        computation on the same version anywhere gives the same version (two
        devices that compute one result from the same input hold one value,
        and neither copy is older than the other)."""
        if fn == "h":  # a plain kernel: the program's values, as a host write's
            derived = [self.host_value() for _ in range(writes[0][2])]
        elif fn is not None:
            (ra, rlo, _), (wa, wlo, wn) = reads[0], writes[0]
            derived = [self.derive(fn, self.ver[ra][d][rlo + i]) for i in range(wn)]
        for (a, lo, n) in reads:
            for e in range(lo, lo + n):
                if self.ver[a][d][e] != self.cur[a][e]:
                    # A word never given, in memory stdcl_mem handed out with no
                    # command announced: not judged (stdcl(7)).
                    never = self.ver[a][d][e] is None and a in self.handed
                    # The newest is another device's, written there by a plain
                    # command that no library call on that device has looked at
                    # since: the check has not seen it (stdcl(7)).
                    unseen_elsewhere = any(o != d and self.ver[a][o][e] == self.cur[a][e] and
                                           e in self.unseen.get((a, o), ()) for o in range(self.ndev))
                    unwatched = never or unseen_elsewhere or (a, d, e) in self.relayed or (a, d, e) in self.ambiguous
                    self.bad(op, "stale kernel read, unwatched" if unwatched else "stale kernel read", d)
                    break
        for (a, lo, n) in writes:
            for e in range(lo, lo + n):
                self.relayed.discard((a, d, e))
                self.ambiguous.discard((a, d, e))
                if copy_of is not None:
                    v = self.ver[copy_of][d][e - lo]
                elif fn is not None:
                    v = derived[e - lo]
                else:
                    v = self.new()
                self.cur[a][e] = v
                self.ver[a][d][e] = v
        # A pending kernel reads its argument, not just the elements it uses:
        # the host must not write any of it until the kernel is waited for
        # (the API cannot know which elements a kernel reads).  A clmcopy reads
        # the bytes it copies, which the library knows: only those.
        for (a, lo, n) in reads:
            if all(w[0] != a for w in writes):
                span = (lo, n) if copy_of is not None else (0, self.n[a])
                self.note(d, {"kind": "kread", "a": a, "off": span[0], "n": span[1]}, wait)

    def note(self, d, g, wait):
        if wait:
            self.pending[d] = []
        else:
            self.pending[d].append(g)

    def free(self, a):
        """clfree: waits for the allocation's pending commands, then it is gone
        (an alloc of the same name is a new allocation)."""
        for d in range(self.ndev):
            self.pending[d] = [g for g in self.pending[d] if g["a"] != a]
        self.open = {(b, p) for (b, p) in self.open if b != a}
        self.unseen = {k: v for k, v in self.unseen.items() if k[0] != a}
        self.handed.discard(a)
        self.relayed = {x for x in self.relayed if x[0] != a}
        self.ambiguous = {x for x in self.ambiguous if x[0] != a}
        self.garbled = {x for x in self.garbled if x[0] != a}

    def wait(self, d):
        for o in range(self.ndev) if d < 0 else [d]:
            self.pending[o] = []


def generate(seed, ndev_max, plain=True, wide=True, align=128):
    """wide: clmcopy, interior pointers and clfree mid-program among the
    operations (--narrow leaves them out: the first generator's programs)."""
    r = random.Random(seed)
    ndev = r.choice([1, ndev_max]) if ndev_max > 1 else 1
    nalloc = r.randint(1, 4)
    ops = []
    m = Model(ndev)  # the program as written so far, kept correct
    for a in range(nalloc):
        size = r.choice(SIZES)
        ops.append(("alloc", a, size))
        m.alloc(a, size // 4)
        ops.append(("hw", a, 0, size // 4))
        m.hw(0, a, 0, size // 4)
    syncs = []  # indices of the syncs put in to keep it correct

    def rng(a):
        n = m.n[a]
        if r.random() < 0.4:
            return 0, n
        if r.random() < 0.5 and n >= 2048:  # page-aligned halves, as a split over devices
            h = n // 2
            return (0, h) if r.random() < 0.5 else (h, n - h)
        lo = r.randrange(n)
        return lo, r.randint(1, n - lo)

    def bring_to(c, a, lo, n):
        """Syncs that make copy c hold the newest version of a[lo, lo + n)."""
        runs = []  # (holder, first, end): contiguous elements c lacks, by the copy that has them
        for e in range(lo, lo + n):
            if m.ver[a][c][e] != m.cur[a][e]:
                h = m.holder(a, e)
                if runs and runs[-1][0] == h and runs[-1][2] == e:
                    runs[-1][2] = e + 1
                else:
                    runs.append([h, e, e + 1])
        for h, s, t in runs[:4]:
            if c == "h":
                emit(("dn", h, a, s, t - s, 1), sync=True)
            elif h == "h":
                emit(("up", c, a, s, t - s, 1), sync=True)
            else:
                emit(("dn", h, a, s, t - s, 1), sync=True)
                emit(("up", c, a, s, t - s, 1), sync=True)

    def emit(op, sync=False):
        if sync:
            syncs.append(len(ops))
        ops.append(op)
        apply(m, op, len(ops))

    for _ in range(r.randint(2, 10)):
        k = r.random()
        a = r.randrange(nalloc)
        if k < 0.2:
            lo, n = rng(a)
            bring_to("h", a, lo, n)  # the host writes part of what it has
            emit(("hw", a, lo, n))
        elif k < 0.4:
            lo, n = rng(a)
            bring_to("h", a, lo, n)
            emit(("hr", a, lo, n))
        elif k < 0.75 and nalloc >= 2:
            d = r.randrange(ndev)
            b = r.choice([x for x in range(nalloc) if x != a])
            n = min(m.n[a], m.n[b])
            cnt = r.randint(1, n)
            oo = r.randrange(m.n[a] - cnt + 1)
            io = r.randrange(m.n[b] - cnt + 1)
            bring_to(d, b, io, cnt)
            w = int(r.random() < 0.5)
            emit(("copy", d, a, oo, b, io, cnt, w))
            if not w:
                emit(("wait", d), sync=True)
        elif k < 0.8 and nalloc >= 2 and wide:
            # clmcopy of one allocation's device copy into another's.
            d = r.randrange(ndev)
            b = r.choice([x for x in range(nalloc) if x != a])
            bring_to(d, b, 0, min(m.n[a], m.n[b]))
            w = int(r.random() < 0.5)
            emit(("mcopy", d, a, b, w))
            if not w:
                emit(("wait", d), sync=True)
        elif k < 0.85 or not plain:
            d = r.randrange(ndev)
            lo, n = rng(a)
            what = "inc"
            step = max(1, align // 4)  # in ints
            if wide and r.random() < 0.3 and m.n[a] > step:
                # Through an interior pointer (a sub-buffer), aligned as the
                # device needs (CL_DEVICE_MEM_BASE_ADDR_ALIGN: 128 bytes on
                # PoCL, 512 on NVIDIA).
                lo = lo // step * step
                n = min(n, m.n[a] - lo)
                what = "iinc"
            bring_to(d, a, lo, n)
            w = int(r.random() < 0.5)
            emit((what, d, a, lo, n, w))
            if not w:
                emit(("wait", d), sync=True)
        else:
            # A plain OpenCL kernel on stdcl_queue's queue writes part of a.
            d = r.randrange(ndev)
            lo, n = rng(a)
            emit(("plain", d, a, lo, n))
        if wide and r.random() < 0.08:
            # One allocation freed (its pending commands waited for by clfree)
            # and another made in its place (often at the same address).
            a = r.randrange(nalloc)
            emit(("free", a))
            size = r.choice(SIZES)
            emit(("alloc", a, size))
            emit(("hw", a, 0, size // 4))
        if r.random() < 0.3:  # a NOWAIT transfer back, waited for
            d = r.randrange(ndev)
            a = r.randrange(nalloc)
            lo, n = rng(a)
            if all(m.ver[a][d][e] == m.cur[a][e] for e in range(lo, lo + n)):
                emit(("dn", d, a, lo, n, 0), sync=True)
                emit(("wait", d), sync=True)
    a = r.randrange(nalloc)
    lo, n = rng(a)
    bring_to("h", a, lo, n)
    emit(("hr", a, lo, n))
    dropped = None
    if syncs and r.random() < 0.5:
        dropped = r.choice(syncs)
        ops = ops[:dropped] + ops[dropped + 1:]
    return ndev, ops, dropped


def apply(m, op, idx):
    w = op[0]
    waited = (w in ("up", "dn", "inc", "iinc") and op[5]) or (w == "copy" and op[7]) or \
        (w == "mcopy" and op[4]) or w == "wait"
    if waited:
        m.settled(op[1])  # before the call's own command: those pending before it, on its device
    if w in ("up", "dn", "inc", "iinc"):
        m.library_call([(op[2], op[1])])
    elif w == "mcopy":
        m.library_call([(op[2], op[1]), (op[3], op[1])])
    elif w == "free":
        m.library_call()
    elif w == "copy":
        m.library_call([(op[2], op[1]), (op[4], op[1])])
    elif w == "wait":
        m.library_call()
    if w == "plain":
        m.plain(idx, op[1], op[2], op[3], op[4])
    if w == "alloc":
        m.alloc(op[1], op[2] // 4)
    elif w == "hw":
        m.hw(idx, op[1], op[2], op[3])
    elif w == "hr":
        m.hr(idx, op[1], op[2], op[3])
    elif w in ("up", "dn"):
        m.transfer(idx, op[1], op[2], op[3], op[4], w == "up", op[5])
    elif w == "wait":
        m.wait(op[1])
    elif w == "copy":
        _, d, a, oo, b, io, cnt, wt = op
        m.kernel(idx, d, [(b, io, cnt)], [(a, oo, cnt)], wt, fn="c")
    elif w in ("inc", "iinc"):
        _, d, a, lo, n, wt = op
        # iinc's argument starts at lo: a pending one holds a[lo:] (and the
        # model's kread notes the whole allocation either way).
        m.kernel(idx, d, [(a, lo, n)], [(a, lo, n)], wt, fn="i")
    elif w == "mcopy":
        _, d, dst, src, wt = op
        n = min(m.n[dst], m.n[src])
        m.kernel(idx, d, [(src, 0, n)], [(dst, 0, n)], wt, copy_of=src)
    elif w == "free":
        m.free(op[1])


def judge(ndev, ops, every=False):
    m = Model(ndev)
    for i, op in enumerate(ops, 1):
        apply(m, op, i)
    return m.harms if every else m.harm


def text(seed, ops):
    return "program %d\n" % seed + "".join(" ".join(str(x) for x in op) + "\n" for op in ops) + "end\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--devices", type=int, default=2)
    ap.add_argument("--runner", default=os.path.join(TOP, "build", "tests", "helper_syncrun"))
    ap.add_argument("--zero-copy", default="0")
    ap.add_argument("--no-plain", action="store_true",
                    help="no plain OpenCL commands on stdcl_queue's queue in the programs")
    ap.add_argument("--narrow", action="store_true",
                    help="no clmcopy, interior pointers or clfree mid-program (the first generator)")
    ap.add_argument("--align", type=int, default=128,
                    help="interior pointers' alignment in bytes, a multiple of 4 (default 128, PoCL's; 512 on NVIDIA)")
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--shrink", type=int, metavar="SEED",
                    help="shrink the program of SEED, on which the model and the check disagree, and print it "
                         "(also as C)")
    ap.add_argument("--emit-c", type=int, metavar="SEED",
                    help="print the program of SEED as C, as --shrink does (a test that it builds and runs)")
    ap.add_argument("--emit-text", type=int, metavar="SEED",
                    help="print the program of SEED as tests/helper_syncrun reads it")
    args = ap.parse_args()
    if args.shrink is not None:
        return shrink(args, args.shrink)
    if args.emit_text is not None:
        ndev, ops, _ = generate(args.emit_text, args.devices, not args.no_plain, not args.narrow, args.align)
        sys.stdout.write(text(args.emit_text, ops))
        return 0
    if args.emit_c is not None:
        ndev, ops, _ = generate(args.emit_c, args.devices, not args.no_plain, not args.narrow, args.align)
        sys.stdout.write(c_program(ndev, ops))
        return 0
    progs = {}
    for s in range(args.seed, args.seed + args.count):
        ndev, ops, dropped = generate(s, args.devices, not args.no_plain, not args.narrow, args.align)
        progs[s] = (ndev, ops, dropped, judge(ndev, ops))
    res, out = run(args, {s: p[1] for s, p in progs.items()})
    counts = {}
    bad = 0
    fixes = {}  # seed: the program with the first finding's fix applied
    for s, (ndev, ops, dropped, harm) in progs.items():
        r = res.get(s)
        if r is None:
            print("seed %d: no result from the runner" % s)
            bad += 1
            continue
        model = harm is not None
        check = bool(r["findings"])
        key = ("harmful" if model else "correct") + (" reported" if check else " silent")
        harmful = model
        if model and harm[1].endswith("unwatched"):
            # Beyond the check's reach by its documents: either verdict is its own.
            key = "harmful, beyond what the check watches, " + ("reported" if check else "silent")
            model = check
        counts[key] = counts.get(key, 0) + 1
        if r["errors"]:
            # A library call failed: no generated program is bad input.
            print("seed %d: a call failed: %s" % (s, r["errors"][0][:200]))
            bad += 1
        ground = r["wrong"]
        if ground is not None and not harmful:
            print("seed %d: the run read wrong values at op %d, the model says correct (model bug)" % (s, ground))
            bad += 1
        if model != check:
            bad += 1
            print("seed %d: model %s, check %s%s" % (s, harm, "reported" if check else "silent",
                                                     (": " + r["findings"][0][1][:160]) if check else ""))
            if args.verbose:
                sys.stdout.write(text(s, ops))
        if check and harmful:
            f = apply_fix(ops, r)
            if f is None:
                counts["fix: none offered"] = counts.get("fix: none offered", 0) + 1
            else:
                fixes[s] = f
    # Each fix is a promise: the program with it is right, and the check silent.
    # A program may hold several harms, each reported at its own operation:
    # where the fixed program's first finding lies after the operation the
    # fix was for (that finding is gone), its fix goes in too, as a user
    # applies them one after another (at most 4 in all).
    final, nfix = {}, {}
    pending = dict(fixes)
    for rnd in range(4):
        if not pending:
            break
        fres, fout = run(args, pending)
        nxt = {}
        for s, fops in pending.items():
            r = fres.get(s)
            prev = progs[s][1] if rnd == 0 else final_ops_prev[s]
            at = next(i for i, (a, b) in enumerate(zip(fops, prev + [None]), 1) if a != b)  # the fix's op
            if rnd < 3 and r is not None and r["findings"] and r["findings"][0][0] > at + 1:
                f2 = apply_fix(fops, r)
                if f2 is not None:
                    nxt[s] = f2
                    continue
            # A later finding with no fix line: the fixes so far kept their
            # promise; what is left is a harm the check reports without one.
            later_unfixed = (r is not None and r["findings"] and r["findings"][0][0] > at + 1 and
                             not r["fixes"][0])
            final[s] = (fops, r, later_unfixed)
            nfix[s] = rnd + 1
        final_ops_prev = {s: pending[s] for s in nxt}
        pending = nxt
    if fixes:
        for s in fixes:
            fops, r, later_unfixed = final[s]
            if later_unfixed:
                k = "fix: verified, a later finding without a fix line left"
                counts[k] = counts.get(k, 0) + 1
                continue
            harm = judge(progs[s][0], fops)
            at = next(i for i, (a, b) in enumerate(zip(fops, progs[s][1] + [None]), 1) if a != b)  # the fix's op
            if os.environ.get("SYNC_MODEL_DEBUG"):  # where the fix went, and every harm the model finds
                print("seed %d: fix at op %d, the model on it: %s" % (s, at, judge(progs[s][0], fops, every=True)))
            # Harms beyond what the check watches (a relay, a plain command's
            # results read before the next library call) are no fix's to undo:
            # where only such harms are left, the model alone judges (the values
            # they made wrong are read after the fix too), and the fix must leave
            # no harm it can see and the check silent.
            left = judge(progs[s][0], fops, every=True)
            unwatched_only = bool(left) and all(h[1].endswith("unwatched") for h in left)
            if unwatched_only:
                harm = None
                if r is not None:
                    r = dict(r, wrong=None)
            ok = r is not None and not r["findings"] and r["wrong"] is None and harm is None
            kind = "fix: verified" if ok and not unwatched_only else \
                "fix: verified, a harm beyond what the check watches left" if ok else "fix: broken"
            if ok and nfix[s] > 1:
                kind += " (with the fixes of %d later findings)" % (nfix[s] - 1)
            counts[kind] = counts.get(kind, 0) + 1
            if not ok:
                bad += 1
                print("seed %d: the fix %r leaves %s" % (s, res[s]["fixes"][0], (
                    "no result" if r is None else "a finding: " + r["findings"][0][1][:120] if r["findings"]
                    else "wrong values at op %s" % r["wrong"] if r["wrong"] is not None
                    else "a program the model judges harmful: %s" % (harm,))))
                if args.verbose:
                    sys.stdout.write(text(s, fops))
    for k in sorted(counts):
        print("%s: %d" % (k, counts[k]))
    print("%d programs, %d disagreements" % (len(progs), bad))
    if out.returncode != 0:
        print("runner exit status %d: %s" % (out.returncode, out.stderr[-2000:]))
        return 1
    return 1 if bad else 0


FIX = re.compile(r"(clmsyncn?)\(cp, (\d+), (?:\(char\*\))?ptr(?: \+ (\d+), (\d+))?, (CL_MEM_DEVICE|CL_MEM_HOST)\)")


def verdicts(ndev, ops, r):
    """(the model's verdict, the check's) of a program run: each 'harmful',
    'correct' or 'either' (a harm beyond what the check watches)."""
    harm = judge(ndev, ops)
    model = "correct" if harm is None else "either" if harm[1].endswith("unwatched") else "harmful: " + harm[1]
    return model, "harmful" if r and r["findings"] else "correct"


def shrink(args, seed):
    """The smallest program found by taking operations out of the program of
    seed while the model and the check keep disagreeing the same way."""
    ndev, ops, _ = generate(seed, args.devices, not args.no_plain, not args.narrow, args.align)
    res, _ = run(args, {0: ops})
    want = verdicts(ndev, ops, res.get(0))
    if want[0].split(":")[0] == want[1] or want[0] == "either":
        print("seed %d: the model and the check agree (%s)" % (seed, want[0]))
        return 1
    while True:
        cands = {}
        for i, op in enumerate(ops):
            if op[0] in ("alloc", "free"):
                continue
            if op[0] == "hw" and i and ops[i - 1][0] == "alloc" and ops[i - 1][1] == op[1]:
                continue  # an allocation's first values (the model takes clmalloc's bytes as the program's)
            cands[i] = ops[:i] + ops[i + 1:]
        res, _ = run(args, cands)
        pick = next((i for i in sorted(cands) if res.get(i) and not res[i]["errors"]
                     and verdicts(ndev, cands[i], res[i]) == want), None)
        if pick is None:
            break
        ops = cands[pick]
    print("seed %d, shrunk to %d operations: model %s, check %s" % (seed, len(ops), want[0], want[1]))
    sys.stdout.write(text(seed, ops))
    sys.stdout.write(c_program(ndev, ops))
    return 0


def c_program(ndev, ops):
    """The program as C over libstdcl's public API (the kernels of
    tests/helper_syncrun), to run under STDCL_CHECK=sync,fill."""
    out = ["/* sync_model.py --shrink: %d device(s); run with STDCL_CHECK=sync,fill STDCL_ZERO_COPY=0 */" % ndev,
           "#include <stdcl.h>", "#include <stdio.h>", "",
           "static const char* src =",
           '    "__kernel void kcopy(__global int* o, __global const int* in, int oo, int io)\\n"',
           '    "{ int i = get_global_id(0); o[oo + i] = 3 * in[io + i] + 1; }\\n"',
           '    "__kernel void kinc(__global int* a, int off) { int i = get_global_id(0); a[off + i] += 7; }\\n";',
           "/* A kernel of the program's own, built and enqueued with plain OpenCL. */",
           "static const char* raw_src =",
           '    "__kernel void qfill(__global int* a, int off, int v) { int i = get_global_id(0); a[off + i] = v + i; }\\n";',
           "", "int main(void)", "{",
           "    CLCONTEXT* cp = stdcpu;",
           "    void* h = clsopen(cp, src, CLLD_NOW);",
           "    cl_kernel kcopy = clsym(cp, h, \"kcopy\", 0), kinc = clsym(cp, h, \"kinc\", 0);",
           "    cl_program raw = clCreateProgramWithSource(stdcl_clcontext(cp), 1, &raw_src, NULL, NULL);",
           "    clBuildProgram(raw, 0, NULL, \"\", NULL, NULL);",
           "    cl_kernel qfill = clCreateKernel(raw, \"qfill\", NULL);",
           "    int* m[8] = {0};", "    int next = 1000, sum = 0;"]
    size = {}
    for op in ops:
        w = op[0]
        if w == "alloc":
            size[op[1]] = op[2] // 4
            out.append("    m[%d] = clmalloc(cp, %d, 0);" % (op[1], op[2]))
        elif w == "free":
            out.append("    clfree(m[%d]);" % op[1])
        elif w == "hw":
            out.append("    for (int i = %d; i < %d; i++) m[%d][i] = next++;" % (op[2], op[2] + op[3], op[1]))
        elif w == "hr":
            out.append("    for (int i = %d; i < %d; i++) sum += m[%d][i];" % (op[2], op[2] + op[3], op[1]))
        elif w in ("up", "dn"):
            fl = "CL_MEM_%s | CL_EVENT_%s" % ("DEVICE" if w == "up" else "HOST", "WAIT" if op[5] else "NOWAIT")
            if op[3] == 0 and op[4] == size[op[2]]:
                out.append("    clmsync(cp, %d, m[%d], %s);" % (op[1], op[2], fl))
            else:
                out.append("    clmsyncn(cp, %d, m[%d] + %d, %d, %s);" % (op[1], op[2], op[3], op[4] * 4, fl))
        elif w == "wait":
            out.append("    clwait(cp, %s, CL_ALL_EVENT);" % ("CL_ALL_DEVICES" if op[1] < 0 else op[1]))
        elif w == "copy":
            _, d, o, oo, i, io, n, wt = op
            out.append("    {")
            out.append("        clndrange_t ndr = clndrange_init1d(0, %d, 1);" % n)
            out.append("        clforka(cp, %d, kcopy, &ndr, CL_EVENT_%s, m[%d], m[%d], %d, %d);"
                       % (d, "WAIT" if wt else "NOWAIT", o, i, oo, io))
            out.append("    }")
        elif w in ("inc", "iinc"):
            _, d, a, lo, n, wt = op
            arg = "m[%d], %d" % (a, lo) if w == "inc" else "m[%d] + %d, 0" % (a, lo)
            out.append("    {")
            out.append("        clndrange_t ndr = clndrange_init1d(0, %d, 1);" % n)
            out.append("        clforka(cp, %d, kinc, &ndr, CL_EVENT_%s, %s);" % (d, "WAIT" if wt else "NOWAIT", arg))
            out.append("    }")
        elif w == "mcopy":
            out.append("    clmcopy(cp, %d, m[%d], m[%d], CL_EVENT_%s);" % (op[1], op[3], op[2],
                                                                          "WAIT" if op[4] else "NOWAIT"))
        elif w == "plain":
            # Not announced: on stdcl_queue's queue through stdcl_mem's object.
            _, d, a, lo, n = op
            out += ["    {",
                    "        /* a kernel of the program's own writes m[%d][%d..%d] on device %d */" % (a, lo, lo + n - 1, d),
                    "        cl_mem mo = stdcl_mem(cp, %d, m[%d]);" % (d, a),
                    "        int off = %d, v = next;" % lo,
                    "        size_t gs = %d;" % n,
                    "        clSetKernelArg(qfill, 0, sizeof mo, &mo);",
                    "        clSetKernelArg(qfill, 1, sizeof off, &off);",
                    "        clSetKernelArg(qfill, 2, sizeof v, &v);",
                    "        clEnqueueNDRangeKernel(stdcl_queue(cp, %d), qfill, 1, NULL, &gs, NULL, 0, NULL, NULL);" % d,
                    "        clFinish(stdcl_queue(cp, %d));" % d,
                    "        next += %d;" % n,
                    "    }"]
    out += ["    clwait(cp, CL_ALL_DEVICES, CL_ALL_EVENT);", "    printf(\"%d\\n\", sum);", "    return 0;", "}", ""]
    return "\n".join(out)


def apply_fix(ops, r):
    """The program with the first finding's fix line put in: before the
    operation it was printed at (a host read's finding: before the last host
    read up to there).  None where no fix line or it cannot be applied."""
    at, textf = r["findings"][0]
    fix = r["fixes"][0]
    if not fix:
        return None
    m = FIX.search(fix)
    if not m:
        return None
    # The allocation the finding names: the last one made before its
    # operation at that address (a freed allocation's address comes back).
    a = None
    for k, (i, op) in enumerate((i, op) for i, op in enumerate(ops, 1) if op[0] == "alloc"):
        if i < at and k < len(r["allocs"]) and r["allocs"][k] == (op[1], r["where"][0]):
            a = op[1]
    if a is None:
        return None
    # The allocation's size where the fix goes (an "alloc" after a "free"
    # makes another); a fix for an allocation freed since is not applied.
    idx0 = at - 1
    sizes = [op[2] // 4 for op in ops[:idx0] if op[0] == "alloc" and op[1] == a]
    if not sizes:
        return None
    nel = sizes[-1]
    call, d, off, ln, to = m.groups()
    lo, n = (int(off) // 4, int(ln) // 4) if call == "clmsyncn" else (0, nel)
    if lo + n > nel:
        return None
    new = ("up" if to == "CL_MEM_DEVICE" else "dn", int(d), a, lo, n, 1)
    # ops are numbered from 1 as the runner counts them
    idx = at - 1
    hm = re.match(r"the host reads byte (\d+) ", textf)
    if hm:
        # The read the finding names: the first host read of that allocation
        # and byte since the library call before the one that reported it.
        e = int(hm.group(1)) // 4
        start = idx - 1
        while start >= 0 and ops[start][0] in ("hr", "hw"):
            start -= 1
        idx = next((i for i in range(start + 1, at) if ops[i][0] == "hr" and ops[i][1] == a
                    and ops[i][2] <= e < ops[i][2] + ops[i][3]), None)
        if idx is None:
            return None
    return ops[:idx] + [new] + ops[idx:]


def run(args, programs):
    feed = "".join(text(s, ops) for s, ops in programs.items())
    env = dict(os.environ)
    # Every new device copy holds a poison pattern (fill): a word never sent reads as such.
    env["STDCL_TEST_ENV"] = "STDCL_CHECK=sync,fill STDCL_ZERO_COPY=%s" % args.zero_copy
    if args.devices > 2:  # PoCL with that many CPU devices (tools/test_env.sh)
        env["TEST_POCL_DEVICES"] = " ".join(["pthread"] * args.devices)
    if os.environ.get("STDCL_TEST_CONTEXT"):  # the runner's context (gpu: stdgpu)
        env["STDCL_TEST_ENV"] += " STDCL_TEST_CONTEXT=" + os.environ["STDCL_TEST_CONTEXT"]
    out = subprocess.run(["bash", os.path.join(TOP, "tools", "test_env.sh"), args.runner], input=feed,
                         capture_output=True, text=True, env=env, timeout=3600)
    res = {}
    cur = None
    errors = []  # the runner prints a call's error as it runs, before its program's summary
    for line in out.stdout.splitlines():
        if line.startswith("error "):
            errors.append(line[6:])
        elif line.startswith("program "):
            cur = int(line.split()[1])
            res[cur] = {"wrong": None, "findings": [], "fixes": [], "where": [], "errors": errors, "addr": {},
                        "allocs": []}
            errors = []
        elif cur is None:
            continue
        elif line.startswith("wrong "):
            res[cur]["wrong"] = int(line.split()[1])
        elif line.startswith("alloc "):
            res[cur]["addr"][line.split()[2]] = int(line.split()[1])
            res[cur]["allocs"].append((int(line.split()[1]), line.split()[2]))
        elif line.startswith("finding "):
            at, msg = line[8:].split(" ", 1)
            res[cur]["findings"].append((int(at), msg))
            res[cur]["where"].append(None)
            res[cur]["fixes"].append(None)
        elif line.startswith("where ") and res[cur]["where"]:
            res[cur]["where"][-1] = line[6:].split(",")[0]
        elif line.startswith("fix ") and res[cur]["fixes"]:
            res[cur]["fixes"][-1] = line[4:]
    return res, out


if __name__ == "__main__":
    sys.exit(main())
