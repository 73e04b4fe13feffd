#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check_gpu.sh: make check-gpu.  On a machine with an OpenCL GPU, runs what
# PoCL's CPU devices cannot show (their commands finish fast and in order):
#   - helper_overlap's ordering scenarios on stdgpu (clmsync, clfork,
#     clmcopy, clreduce, the bdt_nbody loop, rand() after a build), with the
#     transfer queue and with one queue per device (STDCL_OVERLAP=0);
#   - test_stress's mix of every call on stdgpu, test_exit's exit() and
#     clcontext_destroy with 16 threads in calls, test_argtypes's scalar
#     conversions, test_foreign's plain OpenCL commands between libstdcl's
#     (with the transfer queue and without), test_wait's waits under each
#     STDCL_WAIT policy, test_synccheck's seeded sync
#     bugs, test_reduce's sums and test_prims's sorts and scans, with the check and without
#     (when CMocka was found);
#   - every example with --check (stddev and stdgpu held to the GPU's
#     platform), once compiling its kernels in the process (STDCL_CACHE=0),
#     once from a warm program cache, and once under STDCL_CHECK=sync,error
#     (no finding);
#   - the STDCL 1.6 programs of tests/compat on the GPU, compiled in the
#     process, from a cold and from a warm program cache: the three outputs
#     must be equal, and equal to a PoCL run's within 1e-3 (relative);
#   - with the Fortran module built: the Fortran test programs of
#     tests/fortran and tests/compat/fortran on stdgpu (each checks its own
#     results), and the Fortran examples (nbody_fortran --check, matvec).
# Each check is one pass or one failure; the last line is "N passed, N
# failed"; the exit status is 1 when anything failed, 2 when there is no GPU.
# Logs go to $CHECK_GPU_LOG (default build/check-gpu).  BUILD_DIR: the build
# folder (default build).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-build}
case $build in /*) ;; *) build=$top/$build ;; esac
logs=${CHECK_GPU_LOG:-$build/check-gpu}
rm -rf "$logs" && mkdir -p "$logs" || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stdcl-check-gpu.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# The GPU's platform: the first platform stdgpu was made on.
gpu_platform=$("$build/bin/stdclinfo" 2>/dev/null | sed -n "s/^  why: stdgpu: platform '\([^']*\)'.*/\1/p" | head -n 1)
if [ -z "$gpu_platform" ]; then
    echo "check_gpu: no GPU (stdgpu is empty: $build/bin/stdclinfo)" >&2
    "$build/bin/stdclinfo" 2>&1 | head -n 20 >&2
    exit 2
fi
echo "check_gpu: stdgpu on '$gpu_platform'"

passed=0
failed=0
failures=()
n=0
# check NAME [VAR=value...] -- COMMAND...: runs COMMAND in $dir (or the
# current folder) with the variables set, its output in $logs/NN-name.log;
# exit status 0 passes.
check() {
    local name=$1 vars=() log
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do vars+=("$1"); shift; done
    shift
    n=$((n + 1))
    log=$logs/$(printf '%02d' $n)-$(echo "$name" | tr -c 'A-Za-z0-9_.\n-' '_').log
    local rc=0
    (cd "${dir:-.}" && env "${vars[@]}" timeout -k 10 "${limit:-600}" "$@") > "$log" 2>&1 || rc=$?
    echo "check_gpu: exit status $rc" >> "$log"
    if [ $rc -eq 0 ]; then
        passed=$((passed + 1))
        echo "ok   $name"
    else
        failed=$((failed + 1))
        failures+=("$name")
        echo "FAIL $name (log: $log)"
        tail -n 8 "$log" | sed 's/^/     /'
    fi
}

# A fresh program cache per check, and PoCL's in the temporary folder.
export POCL_CACHE_DIR=$tmp/pocl
cache() { rm -rf "$tmp/cache" && mkdir -p "$tmp/cache" && echo "$tmp/cache"; }

dir=$build/tests
for ov in 1 0; do
    check "ordering scenarios on stdgpu (STDCL_OVERLAP=$ov)" STDCL_TEST_CONTEXT=gpu STDCL_OVERLAP=$ov \
        STDCL_CACHE_DIR="$(cache)" -- ./helper_overlap
done
if [ -x "$build/tests/test_stress" ]; then
    limit=$((${STRESS_SECONDS:-5} + 120))  # a hang is a failure, not a stalled run
    check "test_stress on stdgpu" STDCL_TEST_CONTEXT=gpu STDCL_STRESS_SECONDS=${STRESS_SECONDS:-5} \
        STDCL_STRESS_EXPECT_COPY=1 STDCL_CACHE_DIR="$(cache)" -- ./test_stress test_stress_mixed_calls_verified
    limit=
fi
if [ -x "$build/tests/test_exit" ]; then
    # exit() and clcontext_destroy while 16 threads are inside calls, 100 runs each.
    check "test_exit on stdgpu" STDCL_TEST_CONTEXT=gpu STDCL_CACHE_DIR="$(cache)" -- ./test_exit
fi
if [ -x "$build/tests/test_argtypes" ]; then
    check "test_argtypes on stdgpu" STDCL_TEST_CONTEXT=gpu STDCL_CACHE_DIR="$(cache)" -- ./test_argtypes
fi
if [ -x "$build/tests/test_foreign" ]; then
    # Plain OpenCL kernels between libstdcl's NOWAIT transfers, both directions,
    # on stdcl_queue and on queues of their own; with one queue per device too.
    check "test_foreign on stdgpu" STDCL_TEST_CONTEXT=gpu STDCL_CACHE_DIR="$(cache)" -- ./test_foreign
    check "test_foreign on stdgpu, one queue" STDCL_TEST_CONTEXT=gpu STDCL_OVERLAP=0 STDCL_CACHE_DIR="$(cache)" -- \
        ./test_foreign
fi
if [ -x "$build/tests/test_synccheck" ]; then
    check "test_synccheck on stdgpu (seeded sync bugs)" STDCL_TEST_CONTEXT=gpu STDCL_CACHE_DIR="$(cache)" -- \
        ./test_synccheck
fi
if [ -x "$build/tests/test_reduce" ]; then
    # clreduce: every type and operation, sizes and starts around its 16-byte loads.
    check "test_reduce on stdgpu" STDCL_TEST_CONTEXT=gpu STDCL_CACHE_DIR="$(cache)" -- ./test_reduce
fi
if [ -x "$build/tests/test_wait" ]; then
    # Every wait path under STDCL_WAIT=driver, block and yield; auto blocks on
    # NVIDIA; a 300 ms wait under block costs under a quarter of a core.
    check "test_wait on stdgpu (each wait policy)" STDCL_TEST_CONTEXT=gpu STDCL_CACHE_DIR="$(cache)" -- ./test_wait
fi
if [ -x "$build/tests/test_timeline" ]; then
    # STDCL_TIMELINE: both memory modes, each device's commands in order on
    # the host's clock (tests/check_timeline.py), one file per rank.
    check "test_timeline on stdgpu" STDCL_TEST_CONTEXT=gpu STDCL_CACHE_DIR="$(cache)" -- ./test_timeline
fi
if [ -x "$build/tests/test_quiet" ]; then
    check "test_quiet on stdgpu (the primitives' first builds write nothing to stderr)" STDCL_TEST_CONTEXT=gpu \
        STDCL_CACHE_DIR="$(cache)" -- ./test_quiet
fi
if [ -x "$build/tests/test_prims" ]; then
    # clsort, clsort_by_key and clscan: every type, size and flag, with the
    # GPU's own kernels (NVIDIA: its warp instructions), and under the sync check.
    check "test_prims on stdgpu" STDCL_TEST_CONTEXT=gpu STDCL_CACHE_DIR="$(cache)" -- ./test_prims
    check "test_prims on stdgpu under STDCL_CHECK=sync,error" STDCL_TEST_CONTEXT=gpu STDCL_CHECK=sync,error \
        STDCL_CACHE_DIR="$(cache)" -- ./test_prims
fi

# Examples: every program that takes --check, on the GPU's platform.
gpu_env=(STDDEV_PLATFORM_NAME="$gpu_platform" STDGPU_PLATFORM_NAME="$gpu_platform")
examples=(nbody/nbody nbody/nbody_multi nbody_tile/nbody_tile mixed_pointers/mixed_pointers split_saxpy/split_saxpy
          template_reduce/template_reduce tiled_conv/tiled_conv fortran/nbody_fortran blas/blas fft/fft
          particle_bins/particle_bins)
for ex in "${examples[@]}"; do
    [ -x "$build/examples/$ex" ] || continue
    dir=$build/examples/$(dirname "$ex")
    check "$(basename "$ex") --check, compiled in the process" "${gpu_env[@]}" STDCL_CACHE=0 -- \
        "./$(basename "$ex")" --check
    c=$(cache)
    check "$(basename "$ex") --check, from the program cache" "${gpu_env[@]}" STDCL_CACHE_DIR="$c" -- \
        sh -c "./$(basename "$ex") --check > /dev/null 2>&1; ./$(basename "$ex") --check"
    check "$(basename "$ex") --check under STDCL_CHECK=sync,error" "${gpu_env[@]}" STDCL_CHECK=sync,error \
        STDCL_CACHE_DIR="$(cache)" -- sh -c "./$(basename "$ex") --check 2>&1 | tee /dev/stderr | \
        { ! grep -q 'sync check'; }"
done
for ex in hello_stdcl/hello_stdcl embedded_kernels/embedded_kernels stdcl_hpp/stdcl_hpp fortran/matvec; do
    [ -x "$build/examples/$ex" ] || continue
    dir=$build/examples/$(dirname "$ex")
    check "$(basename "$ex")" "${gpu_env[@]}" STDCL_CACHE=0 -- "./$(basename "$ex")"
done

# The Fortran test programs (built when configure found a Fortran compiler):
# each uses stdgpu when it exists and exits non-zero on a wrong result.
for p in "$build"/tests/fortran/fortran_* "$build"/tests/compat/fortran/matvec16; do
    case $p in *.*) continue ;; esac
    [ -f "$p" ] && [ -x "$p" ] || continue
    case $(basename "$p") in fortran_stop | fortran_constants) continue ;; esac
    dir=$(dirname "$p")
    check "$(basename "$p") (Fortran) on stdgpu" "${gpu_env[@]}" STDCL_CACHE=0 -- "./$(basename "$p")"
done
dir=

# same A B: every line equal, numbers within 1e-3 (relative) or 1e-6.
same() {
    awk -v tol=1e-3 'NR == FNR { a[FNR] = $0; na = FNR; next }
        { nb = FNR; if (!(FNR in a)) { bad = 1; exit }
          n1 = split(a[FNR], x, /[ \t=,:()\[\]]+/); n2 = split($0, y, /[ \t=,:()\[\]]+/)
          if (n1 != n2) { bad = 1; exit }
          for (i = 1; i <= n1; i++) {
              if (x[i] == y[i]) continue
              if (x[i] !~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/ || y[i] !~ /^[-+]?[0-9.]+([eE][-+]?[0-9]+)?$/) { bad = 1; exit }
              d = x[i] - y[i]; if (d < 0) d = -d; m = x[i] < 0 ? -x[i] : x[i]
              if (d > tol * m && d > 1e-6) { bad = 1; exit } } }
        END { if (bad || na != nb) { print "differs at line " FNR; exit 1 } }' "$1" "$2"
}
# Lines that measure time differ from run to run.
untimed() { grep -v -i -E 'time|[0-9] *(ms|us|s)\b|seconds' "$1"; }

# compat PROGRAM [ARGS]: the three GPU runs and a PoCL run, compared.
compat() {
    local prog=$1 name out
    name=$(basename "$prog")
    out=$tmp/out-$name
    c=$(cache)
    check "$name (STDCL 1.6) on the GPU: compiled, cold cache, warm cache, PoCL" -- sh -c '
        set -e
        env '"STDDEV_PLATFORM_NAME='$gpu_platform' STDGPU_PLATFORM_NAME='$gpu_platform'"' STDCL_CACHE=0 "$1" > "$2.compiled"
        env '"STDDEV_PLATFORM_NAME='$gpu_platform' STDGPU_PLATFORM_NAME='$gpu_platform'"' STDCL_CACHE_DIR="$3" "$1" > "$2.cold"
        env '"STDDEV_PLATFORM_NAME='$gpu_platform' STDGPU_PLATFORM_NAME='$gpu_platform'"' STDCL_CACHE_DIR="$3" "$1" > "$2.warm"
        env STDDEV_PLATFORM_NAME=portable STDCL_CACHE=0 STDGPU=0 "$1" > "$2.pocl"
        echo "== compiled"; cat "$2.compiled"; echo "== warm"; cat "$2.warm"; echo "== pocl"; cat "$2.pocl"
        ' sh "$prog" "$out" "$c"
    if [ -f "$out.compiled" ] && [ -f "$out.warm" ]; then
        local why=
        cmp -s <(untimed "$out.compiled") <(untimed "$out.cold") || why="compiled and cold-cache outputs differ"
        cmp -s <(untimed "$out.compiled") <(untimed "$out.warm") || why="compiled and warm-cache outputs differ"
        same <(untimed "$out.compiled") <(untimed "$out.pocl") > /dev/null || why="${why:+$why; }GPU and PoCL outputs differ"
        if [ -n "$why" ]; then
            passed=$((passed - 1))
            failed=$((failed + 1))
            failures+=("$name: $why")
            echo "FAIL $name: $why"
            diff <(untimed "$out.compiled") <(untimed "$out.warm") | head -n 6 | sed 's/^/     /'
        fi
    fi
}
dir=$build/tests
for p in helper_compat_example1 helper_compat_example2 helper_compat_nbody; do
    [ -x "$build/tests/$p" ] && compat "$build/tests/$p"
done
for p in "$build"/tests/compat/stdcl16/*/*; do
    case $p in *.*) continue ;; esac
    [ -f "$p" ] && [ -x "$p" ] || continue
    dir=$(dirname "$p")
    compat "$p"
done

echo "=== check-gpu on '$gpu_platform'"
for f in "${failures[@]}"; do echo "failed: $f"; done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
