#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# sync_mutants.py: seeds sync slips into the project's examples, one at a
# time, and counts how many the sync check reports.
#
#   python3 tests/sync_mutants.py [--build DIR] [--only NAME] [--verbose]
#
# For each call of clmsync, clmsyncn, clwait or stdcl_wait in the examples
# below, a mutant is the example with that one call dropped: the call's name
# becomes a macro that does nothing and returns success (MUT_EV: a dummy
# event; MUT_INT: 0).  Each mutant is built with make (the example's source
# is changed in place and restored after) and run:
#   - harmful?  with --check in copy mode (STDCL_ZERO_COPY=0) under
#     STDCL_CHECK=fill (memory never given a value holds NaNs), and in
#     zero-copy mode under the ordering fuzzer (tests/order): a FAIL or a
#     crash in either makes the mutant harmful;
#   - reported?  on two PoCL devices in zero-copy mode (a laptop) with
#     STDCL_CHECK=sync: a "sync check" line on stderr.
# It prints one line per mutant and the totals: harmful and reported,
# harmful and missed, harmless and reported (a false finding), harmless and
# silent.  Runs from the top of a built tree (make all); PoCL with two CPU
# devices as tools/test_env.sh sets it up.  Takes some minutes.
import argparse
import os
import re
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# example source, program, its arguments with --check
EXAMPLES = [
    ("examples/nbody/nbody.c", "nbody/nbody", ["-c", "cpu", "-n", "512", "-s", "4", "-b", "2", "--check"]),
    ("examples/nbody/nbody_stdcl.c", "nbody/nbody_multi", ["-c", "cpu", "-n", "512", "-s", "4", "-b", "2", "--check"]),
    ("examples/mixed_pointers/mixed_pointers.c", "mixed_pointers/mixed_pointers", ["-n", "10007", "--check"]),
    ("examples/embedded_kernels/embedded_kernels.c", "embedded_kernels/embedded_kernels", []),
    ("examples/tiled_conv/tiled_conv.c", "tiled_conv/tiled_conv", ["-w", "203", "-h", "157", "--check"]),
    ("examples/blas/blas.c", "blas/blas", ["-n", "203", "-p", "s", "-r", "2", "--check"]),
]

CALL = re.compile(r"\b(clmsyncn|clmsync|clwait|stdcl_wait)\(")


def sites(text):
    """Offsets of the calls outside comments."""
    out = []
    for m in CALL.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        line = text[line_start : m.start()]
        if line.lstrip().startswith(("*", "/*", "//")):
            continue
        out.append((m.start(), m.group(1)))
    return out


def run(cmd, env, cwd, timeout=120):
    e = dict(os.environ)
    e.update(env)
    try:
        p = subprocess.run(
            ["bash", os.path.join(TOP, "tools/test_env.sh")] + cmd,
            cwd=cwd,
            env=e,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return 124, "", "timeout"


def passed(rc, out, prog):
    # The examples with --check print PASS/FAIL; the others print their own
    # verdict and exit non-zero when it is wrong.
    if rc != 0:
        return False
    return "FAIL" not in out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--only")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    build = os.path.join(TOP, a.build)
    shim = os.path.join(build, "tests/order/ordercl_shim.so")
    header = os.path.join(build, "sync_mutant.h")
    with open(header, "w") as f:
        f.write("#include <stdint.h>\n#define MUT_EV(...) ((cl_event)(uintptr_t)1)\n#define MUT_INT(...) 0\n")
    totals = {"harmful reported": 0, "harmful missed": 0, "harmless reported": 0, "harmless silent": 0}
    rows = []
    for src, prog, args in EXAMPLES:
        if a.only and a.only not in src:
            continue
        path = os.path.join(TOP, src)
        original = open(path).read()
        target = os.path.join(a.build, "examples", prog)
        exe = os.path.join(build, "examples", prog)
        cwd = os.path.dirname(exe)
        try:
            for off, name in sites(original):
                macro = "MUT_INT" if name == "stdcl_wait" else "MUT_EV"
                line_no = original.count("\n", 0, off) + 1
                mutant = original[:off] + macro + original[off + len(name) :]
                mutant = '#include "' + header + '"\n' + mutant
                with open(path, "w") as f:
                    f.write(mutant)
                b = subprocess.run(
                    ["make", target], cwd=TOP, capture_output=True, text=True, env=dict(os.environ, CFLAGS_EXTRA="")
                )
                label = "%s:%d %s" % (src, line_no, name)
                if b.returncode != 0:
                    rows.append("%-55s not built" % label)
                    continue
                rc1, o1, e1 = run(["./" + os.path.basename(exe)] + args, {
                    "STDCL_TEST_ENV": "STDCL_ZERO_COPY=0 STDCL_CHECK=fill"}, cwd)
                fuzz_env = "STDCL_ZERO_COPY=1"
                if os.path.exists(shim):
                    fuzz_env += " LD_PRELOAD=" + shim + " ORDERCL_RESEED=1"
                rc2, o2, e2 = run(["./" + os.path.basename(exe)] + args, {"STDCL_TEST_ENV": fuzz_env}, cwd)
                harmful = not passed(rc1, o1, prog) or not passed(rc2, o2, prog)
                rc3, o3, e3 = run(["./" + os.path.basename(exe)] + args, {
                    "STDCL_TEST_ENV": "STDCL_ZERO_COPY=1 STDCL_CHECK=sync"}, cwd)
                reported = "sync check" in e3
                key = ("harmful " if harmful else "harmless ") + ("reported" if reported else
                                                                   ("missed" if harmful else "silent"))
                totals[key] += 1
                rows.append("%-55s %s" % (label, key))
                if a.verbose:
                    print(rows[-1], "| copy+fill rc", rc1, "| fuzz rc", rc2, "| sync rc", rc3, flush=True)
                    for line in e3.splitlines():
                        if "sync check" in line:
                            print("    ", line[:160])
        finally:
            with open(path, "w") as f:
                f.write(original)
            subprocess.run(["make", target], cwd=TOP, capture_output=True)
    for r in rows:
        print(r)
    n = sum(totals.values())
    print("mutants: %d built and run" % n)
    for k, v in totals.items():
        print("%s: %d" % (k, v))
    return 0


if __name__ == "__main__":
    sys.exit(main())
