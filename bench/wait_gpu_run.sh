#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# wait_gpu_run.sh: the wait policies (STDCL_WAIT) on the GPU machine, in one
# call of under 9 minutes.  Builds with the project's ./configure && make
# (CMocka from build-deps, as gpu_run.sh --prepare leaves it), then:
#   wait     bench_wait -c gpu (kernels of 10 us, 100 us, 1 ms, 100 ms waited
#            for by clfork(WAIT) and by clwait: wall time, CPU time) with
#            STDCL_WAIT=driver and block in turn, twice each;
#   core     bench_core -c gpu -n 1000 -T 16 -b 21 (its launch rows against
#            raw OpenCL, which waits in the driver) with driver and block in
#            turn, twice each;
#   stencil  bench_stencil -c gpu (a launch-bound Jacobi beside its raw
#            original) with driver and block in turn, twice each;
#   tests    test_wait on stdgpu, then make check-gpu in what time is left.
# Results: text files under $OUT (default /tmp/wait-gpu-out).
#
#   bench/wait_gpu_run.sh [wait] [core] [stencil] [tests]   (default: all)
set -u
. "$(dirname "$0")/gpu_common.sh"
RES=${OUT:-/tmp/wait-gpu-out}
mkdir -p "$RES"
WHAT=${*:-wait core stencil tests}
gpu_icd
gpu_caches
start=$(date +%s)
{
    gpu_machine
    echo "== build"
    if ls build-deps/debs/*.deb > /dev/null 2>&1; then
        for d in build-deps/debs/*.deb; do dpkg -x "$d" /; done
        ldconfig
    fi
    gpu_build lib tools tests examples bench 2>&1 | tail -5
    echo "build: $(( $(date +%s) - start )) s"
} > "$RES/machine.txt" 2>&1
cat "$RES/machine.txt"
[ -x build/bench/bench_wait ] || { echo "build failed"; exit 1; }

case " $WHAT " in *" wait "*)
    for round in 1 2; do
        for p in driver block; do
            echo "== round $round, STDCL_WAIT=$p"
            STDCL_WAIT=$p timeout 120 build/bench/bench_wait -c gpu -r 21
        done
    done > "$RES/wait.txt" 2>&1
    echo "wait: $(( $(date +%s) - start )) s"
esac
case " $WHAT " in *" core "*)
    for round in 1 2; do
        for p in driver block; do
            echo "== round $round, STDCL_WAIT=$p"
            STDCL_WAIT=$p timeout 90 build/bench/bench_core -c gpu -n 1000 -T 16 -b 21
        done
    done > "$RES/core.txt" 2>&1
    echo "core: $(( $(date +%s) - start )) s"
esac
case " $WHAT " in *" stencil "*)
    for round in 1 2; do
        for p in driver block; do
            echo "== round $round, STDCL_WAIT=$p"
            STDCL_WAIT=$p timeout 60 build/bench/bench_stencil -c gpu
        done
    done > "$RES/stencil.txt" 2>&1
    echo "stencil: $(( $(date +%s) - start )) s"
esac
case " $WHAT " in *" tests "*)
    (cd build/tests && STDCL_TEST_CONTEXT=gpu timeout 120 ./test_wait) > "$RES/test_wait.txt" 2>&1
    echo "exit status $?" >> "$RES/test_wait.txt"
    left=$(( 560 - ($(date +%s) - start) ))
    if [ $left -gt 60 ]; then
        timeout $left bash tools/check_gpu.sh > "$RES/check_gpu.txt" 2>&1
        echo "exit status $? (limit ${left} s)" >> "$RES/check_gpu.txt"
    fi
    echo "tests: $(( $(date +%s) - start )) s"
esac
