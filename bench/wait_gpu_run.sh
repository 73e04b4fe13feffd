#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# wait_gpu_run.sh: the wait policies (STDCL_WAIT) and the timeline
# (STDCL_TIMELINE) on the GPU machine, each part in one call of under 10
# minutes.  Builds with the project's ./configure && make (CMocka and nettle's
# headers from build-deps/debs), then:
#   wait     bench_wait -c gpu (kernels of 10 us, 100 us, 1 ms, 100 ms, or
#            WAIT_TARGETS, waited for by clfork(WAIT) and by clwait: wall
#            time, CPU time) with STDCL_WAIT=driver, block and the default
#            (auto) in turn, and block and auto with the commit before where
#            build-deps/before.tar is there, twice;
#   core     bench_core -c gpu -n 1000 -T 16 -b 21 (its launch rows against
#            raw OpenCL, which waits in the driver): the commit before the
#            wait policies and the timeline (build-deps/before.tar, from
#            `git archive`, built beside), then this tree with the default
#            and with block, in turn, twice;
#   stencil  bench_stencil -c gpu (a launch-bound Jacobi beside its raw
#            original) with driver, the default and block in turn, twice;
#   timeline nbody_multi -d 1 --bench (N 131072, 100 steps): the commit
#            before against this tree, timeline off, three pairs; this tree
#            with STDCL_TIMELINE off and on in turn (N 32768 x 400 steps and
#            131072 x 100), four pairs each; then one timeline of
#            nbody_multi kept (timeline_nbody_multi_gpu.json) and checked;
#   tests    test_wait and test_timeline on stdgpu, then make check-gpu in
#            what time is left.
# Results: text files under $OUT (default /tmp/wait-gpu-out).
#
#   bench/wait_gpu_run.sh [wait] [core] [stencil] [timeline] [tests]
#   (default: wait core stencil timeline)
set -u
. "$(dirname "$0")/gpu_common.sh"
RES=${OUT:-/tmp/wait-gpu-out}
mkdir -p "$RES"
WHAT=${*:-wait core stencil timeline}
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
    if [ -f build-deps/before.tar ]; then
        rm -rf /tmp/before && mkdir -p /tmp/before && tar -xf build-deps/before.tar -C /tmp/before &&
            (cd /tmp/before && gpu_build lib examples bench 2>&1 | tail -3)
        echo "before: $(cat /tmp/before/.commit 2>/dev/null), built after $(( $(date +%s) - start )) s"
    fi
} > "$RES/machine.txt" 2>&1
cat "$RES/machine.txt"
[ -x build/bench/bench_wait ] || { echo "build failed"; exit 1; }

case " $WHAT " in *" wait "*)
    targets=${WAIT_TARGETS:-0.01,0.1,1,100}
    for round in 1 2; do
        if [ -x /tmp/before/build/bench/bench_wait ]; then
            for p in block auto; do
                echo "== round $round, the commit before ($(cat /tmp/before/.commit 2>/dev/null)), STDCL_WAIT=$p"
                (cd /tmp/before && STDCL_WAIT=$p timeout 100 build/bench/bench_wait -c gpu -r 11 -t "$targets")
            done
        fi
        for p in driver block auto; do
            echo "== round $round, STDCL_WAIT=$p"
            STDCL_WAIT=$p timeout 100 build/bench/bench_wait -c gpu -r 11 -t "$targets"
        done
    done > "$RES/wait.txt" 2>&1
    echo "wait: $(( $(date +%s) - start )) s"
esac
case " $WHAT " in *" core "*)
    for round in 1 2; do
        if [ -x /tmp/before/build/bench/bench_core ]; then
            echo "== round $round, the commit before ($(cat /tmp/before/.commit 2>/dev/null))"
            (cd /tmp/before && timeout 60 build/bench/bench_core -c gpu -n 1000 -T 16 -b 21)
        fi
        for p in auto block; do
            echo "== round $round, STDCL_WAIT=$p"
            STDCL_WAIT=$p timeout 60 build/bench/bench_core -c gpu -n 1000 -T 16 -b 21
        done
    done > "$RES/core.txt" 2>&1
    echo "core: $(( $(date +%s) - start )) s"
esac
case " $WHAT " in *" stencil "*)
    for round in 1 2; do
        for p in driver auto block; do
            echo "== round $round, STDCL_WAIT=$p"
            STDCL_WAIT=$p timeout 40 build/bench/bench_stencil -c gpu
        done
    done > "$RES/stencil.txt" 2>&1
    echo "stencil: $(( $(date +%s) - start )) s"
esac
# nbody_ms TREE ARGS...: nbody_multi's ms/step in TREE (this one or the
# commit before), run in its examples/nbody folder.
nbody_ms() {
    local tree=$1
    shift
    (cd "$tree/examples/nbody" && timeout 60 "$tree/build/examples/nbody/nbody_multi" -c gpu -d 1 "$@" -b 10 --bench -q 2>&1 |
        sed -n 's/.*ms_per_step[= ]*\([0-9.][0-9.]*\).*/\1/p' | tail -1)
}
case " $WHAT " in *" timeline "*)
    {
        if [ -x /tmp/before/build/examples/nbody/nbody_multi ]; then
            echo "== nbody_multi -d 1 -n 131072 -s 100, the commit before and this tree in turn (timeline off)"
            for i in 1 2 3; do
                a=$(nbody_ms /tmp/before -n 131072 -s 100) b=$(nbody_ms "$ROOT" -n 131072 -s 100)
                echo "pair $i: before ${a:-?} this ${b:-?} ms/step, this/before $(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0 && b > 0) printf "%.4f", b / a; else print "?" }')"
            done
        fi
        for spec in 32768:400 131072:100; do
            n=${spec%%:*} steps=${spec##*:}
            echo "== nbody_multi -d 1 -n $n -s $steps, STDCL_TIMELINE off and on in turn"
            for i in 1 2 3 4; do
                a=$(nbody_ms "$ROOT" -n $n -s $steps)
                b=$(STDCL_TIMELINE=/tmp/tl_$i.json nbody_ms "$ROOT" -n $n -s $steps)
                echo "N=$n pair $i: off ${a:-?} on ${b:-?} ms/step, on/off $(awk -v a="$a" -v b="$b" 'BEGIN { if (a > 0 && b > 0) printf "%.4f", b / a; else print "?" }'), file $(stat -c %s /tmp/tl_$i.json 2>/dev/null) bytes"
            done
        done
        echo "== one timeline: nbody_multi -c gpu -d 1 -n 131072 -s 20"
        t0=$(date +%s%N)
        (cd examples/nbody && STDCL_TIMELINE="$RES/timeline_nbody_multi_gpu.json" ../../build/examples/nbody/nbody_multi -c gpu -d 1 -n 131072 -s 20 -b 10 -q)
        echo "status $?, $(( ($(date +%s%N) - t0) / 1000000 )) ms wall"
        python3 tests/check_timeline.py "$RES/timeline_nbody_multi_gpu.json" --devices 1 --kernel nbody_kern_multi
        echo "check_timeline status $?"
    } > "$RES/timeline.txt" 2>&1
    echo "timeline: $(( $(date +%s) - start )) s"
esac
case " $WHAT " in *" tests "*)
    for t in test_wait test_timeline; do
        (cd build/tests && STDCL_TEST_CONTEXT=gpu timeout 120 ./$t; echo "$t: exit status $?") >> "$RES/tests.txt" 2>&1
    done
    left=$(( 560 - ($(date +%s) - start) ))
    if [ $left -gt 60 ]; then
        timeout $left bash tools/check_gpu.sh > "$RES/check_gpu.txt" 2>&1
        echo "exit status $? (limit ${left} s)" >> "$RES/check_gpu.txt"
    fi
    echo "tests: $(( $(date +%s) - start )) s"
esac
