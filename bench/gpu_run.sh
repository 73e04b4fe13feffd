#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# gpu_run.sh: everything measured on the GPU machine, in one call (device time is
# scarce).  Builds the tree with the project's own ./configure && make (the
# library measured is the one shipped, version script included), checks it on
# the GPU(s), then times the core calls, NBody against its baselines, and a
# cold and warm clopen.  Results and logs go to $OUT (default /tmp/gpu-out).
#
#   bench/gpu_run.sh [core] [nbody] [cache]       (default: all three)
#   bench/gpu_run.sh --prepare                    (on this machine, first)
#
# The GPU machine has nettle's run-time library but not its headers:
# --prepare, run here, copies them into build-deps/nettle/ (an ignored
# folder: carry it with the run), where the build there finds them (see
# gpu_common.sh, which also holds the build recipe and the machine
# description).  No CMocka there: the tests are not built.
set -u
. "$(dirname "$0")/gpu_common.sh"

if [ "${1:-}" = --prepare ]; then
    [ -f /usr/include/nettle/sha2.h ] || { echo "gpu_run.sh: install nettle-dev first" >&2; exit 1; }
    rm -rf "$GPU_DEPS" && mkdir -p "$GPU_DEPS/include" && cp -r /usr/include/nettle "$GPU_DEPS/include/" &&
        echo "gpu_run.sh: nettle headers in $GPU_DEPS (carry build-deps with the run)"
    exit
fi

RES=${OUT:-/tmp/gpu-out}
mkdir -p "$RES"
WHAT=${*:-core nbody cache}
gpu_icd
gpu_caches
gpu_machine > "$RES/machine.txt" 2>&1
cat "$RES/machine.txt"

# The library, tools, examples and benchmarks, built by ./configure && make.
gpu_build lib tools examples bench > "$RES/build.log" 2>&1 || {
    tail -30 "$RES/build.log"
    echo "gpu_run.sh: the build failed (log: $RES/build.log)" >&2
    exit 1
}
grep -A12 '^configure: *$' "$RES/build.log" | head -14

echo "== stdclinfo"
STDCL_TRACE=ctx build/bin/stdclinfo 2>&1 | tee "$RES/stdclinfo.txt"
echo "== hello_stdcl on every GPU, 5 runs (exit status checks the release at exit)"
for _ in 1 2 3 4 5; do
    (cd build/examples/hello_stdcl && ./hello_stdcl 2048); echo "exit status $?"
done 2>&1 | tee "$RES/hello.txt"

case " $WHAT " in *" core "*)
    echo "== bench_core on stdgpu device 0"
    build/bench/bench_core -c gpu 2>&1 | tee "$RES/bench_core_gpu.txt"
    ;;
esac
case " $WHAT " in *" nbody "*)
    echo "== NBody"
    bash bench/run_nbody.sh ${NBODY_ARGS:---check} 2>&1 | tee "$RES/nbody.txt"
    cp build/bench-nbody/results.txt "$RES/nbody_results.txt" 2>/dev/null
    nb=build/bench-nbody/bin/nbody_multi
    [ -x $nb ] && (cd examples/nbody && ../../$nb -c gpu -n 131072 -s 1200 -q --png "$RES/nbody_gpu.png") 2>&1 | tail -2
    ;;
esac
case " $WHAT " in *" cache "*)
    echo "== clopen of the NBody kernel: cold, then 5 warm (bench_clopen)"
    rm -rf "${STDCL_CACHE_DIR:?}"/*
    (cd examples/nbody && for _ in 1 2 3 4 5 6; do ../../build/bench/bench_clopen nbody_kern.cl; done) \
        2>&1 | tee "$RES/clopen.txt"
    ;;
esac
