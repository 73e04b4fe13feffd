#!/bin/sh
# SPDX-License-Identifier: MIT
# check_sync_c.sh: a generated program of tests/sync_model.py printed as C (as
# --shrink prints a disagreement) builds against this tree's libstdcl and runs
# under STDCL_CHECK=sync,fill, with the same findings as the same program run
# through tests/helper_syncrun.  Seed 41393: most kinds of operation, two plain
# OpenCL kernels on stdcl_queue's queue among them, and one finding.
#
#   tests/check_sync_c.sh [BUILD_DIR]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
tmp=${STDCL_TEST_TMPDIR:-${TMPDIR:-/tmp}}/check_sync_c.$$
mkdir -p "$tmp"
trap 'rm -rf "$tmp"' EXIT
seed=41393
python3 "$top/tests/sync_model.py" --emit-c $seed > "$tmp/p.c"
grep -q 'stdcl_queue' "$tmp/p.c" || { echo "seed $seed: no plain command in the program" >&2; exit 1; }
${STDCL_TEST_CC:-cc} ${STDCL_TEST_CFLAGS:-} -I"$top/include" -I"$build/include" -o "$tmp/p" "$tmp/p.c" \
    -L"$build/lib" -Wl,-rpath,"$build/lib" -lstdcl -lOpenCL
STDCL_CHECK=sync,fill STDCL_ZERO_COPY=0 "$tmp/p" > "$tmp/out" 2> "$tmp/err"
# The runner's findings for the same program, as sync_model.py reads them.
python3 "$top/tests/sync_model.py" --emit-text $seed |
    STDCL_CHECK=sync,fill STDCL_ZERO_COPY=0 "$build/tests/helper_syncrun" > "$tmp/runner"
c=$(grep -c '^stdcl: sync check: [^n]' "$tmp/err" || true)
r=$(grep -c '^finding ' "$tmp/runner" || true)
echo "seed $seed as C: $c finding(s), through helper_syncrun: $r"
[ "$c" = "$r" ] || { cat "$tmp/err" >&2; exit 1; }
