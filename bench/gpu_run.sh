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
# The GPU machine (Ubuntu 24.04, no network) has autoconf, make, pkg-config
# and nvcc, and nettle's run-time library (libnettle.so.8) but not its
# headers (nettle-dev).  --prepare, run here, copies nettle's headers into
# build-deps/nettle/ (an ignored folder: carry it with the run); there the
# script then configures with NETTLE_CFLAGS=-Ibuild-deps/nettle/include and
# NETTLE_LIBS=-l:libnettle.so.8.  configure is generated there by the
# Makefile (autoconf); tools/install_deps.sh is skipped (STDCL_SKIP_DEPS=1:
# apt cannot reach anything there).  No CMocka there: the tests are not built.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
DEPS=build-deps/nettle

if [ "${1:-}" = --prepare ]; then
    [ -f /usr/include/nettle/sha2.h ] || { echo "gpu_run.sh: install nettle-dev first" >&2; exit 1; }
    rm -rf "$DEPS" && mkdir -p "$DEPS/include" && cp -r /usr/include/nettle "$DEPS/include/" &&
        echo "gpu_run.sh: nettle headers in $DEPS (carry build-deps with the run)"
    exit
fi

RES=${OUT:-/tmp/gpu-out}
mkdir -p "$RES"
WHAT=${*:-core nbody cache}
[ -w /etc/OpenCL/vendors ] && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
export POCL_CACHE_DIR=/tmp/pocl-cache STDCL_CACHE_DIR=/tmp/stdcl-cache
mkdir -p "$POCL_CACHE_DIR" "$STDCL_CACHE_DIR"

{
    date -u; uname -r; nvidia-smi -L; nproc; grep -m1 'model name' /proc/cpuinfo
    clinfo -l 2>&1
} > "$RES/machine.txt" 2>&1
cat "$RES/machine.txt"

# The library, tools, examples and benchmarks, built by the Makefile.
export STDCL_SKIP_DEPS=1
if [ ! -f /usr/include/nettle/sha2.h ] && [ -f "$DEPS/include/nettle/sha2.h" ]; then
    export NETTLE_CFLAGS="-I$ROOT/$DEPS/include" NETTLE_LIBS="-l:libnettle.so.8"
fi
rm -f config.mk config.status
make -j"$(nproc)" lib tools examples bench > "$RES/build.log" 2>&1 || {
    tail -30 "$RES/build.log"
    echo "gpu_run.sh: the build failed (log: $RES/build.log)" >&2
    exit 1
}
grep -A12 '^configure: *$' "$RES/build.log" | head -14

echo "== stdclinfo"
STDCL_TRACE=ctx build/bin/stdclinfo 2>&1 | tee "$RES/stdclinfo.txt"
echo "== hello_stdcl on every GPU, 5 runs (exit status checks the release at exit)"
for i in 1 2 3 4 5; do
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
    rm -rf "$STDCL_CACHE_DIR"/*
    (cd examples/nbody && for i in 1 2 3 4 5 6; do ../../build/bench/bench_clopen nbody_kern.cl; done) \
        2>&1 | tee "$RES/clopen.txt"
    ;;
esac
