#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# prims_gpu_run.sh: clsort, clsort_by_key, clscan and clreduce against their
# anchors on the GPU machine, in one call.  Builds the tree (gpu_common.sh's
# recipe) and the CUDA baselines (make bench-cuda, for the card's
# architecture, so that CUB uses its tuning for it), then runs
#   gpu  build/bench/bench_prims -c gpu --min 10 --max 28  (libstdcl, Boost.Compute, host)
#   cub  build/bench/prims_cub --min 10 --max 28           (CUB)
#   cpu  build/bench/bench_prims -c cpu --max 24           (PoCL)
# Boost.Compute is header-only: where the machine has no Boost, carry a tar
# of this machine's (tar -C /usr/include -cJf build-deps/boost.tar.xz boost,
# 9 MB; carry build-deps); without it bench_prims says that it skipped Boost.
# Results: $OUT (default /tmp/prims-gpu-out)/prims_{gpu,cub,cpu}.txt (the
# RESULT lines: grep '^RESULT'), machine.txt, build.txt.
#
#   bench/prims_gpu_run.sh [gpu] [cub] [cpu]        (default: all three)
set -u
. "$(dirname "$0")/gpu_common.sh"
RES=${OUT:-/tmp/prims-gpu-out}
WHAT=" ${*:-gpu cub cpu} "
mkdir -p "$RES"
gpu_icd
gpu_caches
gpu_machine > "$RES/machine.txt" 2>&1
cat "$RES/machine.txt"
if [ ! -f /usr/include/boost/compute.hpp ] && [ -f build-deps/boost.tar.xz ]; then
    mkdir -p build-deps/boost && tar -xJf build-deps/boost.tar.xz -C build-deps/boost &&
        export CPPFLAGS="${CPPFLAGS:-} -isystem $ROOT/build-deps/boost"
fi
start=$(date +%s)
gpu_build lib bench > "$RES/build.txt" 2>&1 || { tail -40 "$RES/build.txt"; exit 1; }
if [[ $WHAT == *" cub "* ]]; then
    cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '. ')
    make bench-cuda NVCCFLAGS="-O3 -std=c++17 -arch=sm_${cc:-90}" >> "$RES/build.txt" 2>&1 ||
        { tail -20 "$RES/build.txt"; echo "bench-cuda: build failed"; }
fi
echo "build: $(( $(date +%s) - start )) s"

# bench NAME COMMAND...: COMMAND's output to $RES/NAME.txt, its lines shown
bench() {
    local name=$1
    shift
    echo "== $*"
    timeout 540 "$@" > "$RES/$name.txt" 2>&1
    echo "exit status $?" >> "$RES/$name.txt"
    grep -E '^(RESULT|SKIP|ERROR|FAIL|boost:|device:)|exit status|failed' "$RES/$name.txt"
    echo "elapsed: $(( $(date +%s) - start )) s"
}
[[ $WHAT == *" gpu "* ]] && bench prims_gpu build/bench/bench_prims -c gpu --min 10 --max 28
[[ $WHAT == *" cub "* ]] && bench prims_cub build/bench/prims_cub --min 10 --max 28
[[ $WHAT == *" cpu "* ]] && bench prims_cpu build/bench/bench_prims -c cpu --max 24
echo "results in $RES: $(ls "$RES" | tr '\n' ' ')"
