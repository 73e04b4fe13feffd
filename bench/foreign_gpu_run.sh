#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# foreign_gpu_run.sh: other OpenCL libraries on libstdcl memory, on the GPU
# machine, in one call.  Builds the tree (./configure && make), then:
#   - test_foreign on stdgpu, ROUNDS times with the transfer queue and
#     ROUNDS times without (STDCL_OVERLAP=0): plain kernels between
#     libstdcl's NOWAIT transfers, both directions;
#   - examples/blas (CLBlast SGEMM/DGEMM on clmalloc memory) and
#     examples/fft (clFFT) with --check on stdgpu, ROUNDS times each;
#   - make check-gpu;
#   - bench_blas (CLBlast SGEMM on clmalloc memory against plain cl_mem
#     buffers) and cublas_sgemm (cuBLAS, TF32 off), alternating, twice;
#   - bench_core's transfer and stream rows for this tree and, when
#     build-deps/base.tar holds another tree (git archive of the commit to
#     compare with), for that tree's library, alternating.
# Needs the Debian packages in build-deps/debs (CMocka, nettle's headers,
# CLBlast, clFFT: apt-get download them here) unpacked there; carry
# build-deps.  Results go to $OUT (default /tmp/gpu-out).
#
#   bench/foreign_gpu_run.sh [check] [bench]        (default: both)
set -u
. "$(dirname "$0")/gpu_common.sh"
RES=${OUT:-/tmp/gpu-out}
ROUNDS=${ROUNDS:-10}
WHAT=" ${*:-check bench} "
mkdir -p "$RES"
for f in build-deps/debs/*.deb; do dpkg -x "$f" /; done
ldconfig
gpu_icd
gpu_caches
gpu_machine > "$RES/machine.txt" 2>&1
cat "$RES/machine.txt"
gpu_build lib tools tests examples bench > "$RES/build.log" 2>&1 || {
    tail -40 "$RES/build.log"
    exit 1
}
grep -A16 '^configure: *$' "$RES/build.log" | head -18
make build/bench/cublas_sgemm >> "$RES/build.log" 2>&1 || echo "cublas_sgemm: not built"

if [[ $WHAT == *" check "* ]]; then
{
    echo "== test_foreign on stdgpu, $ROUNDS runs each"
    for ov in 1 0; do
        pass=0
        for _ in $(seq "$ROUNDS"); do
            (cd build/tests && STDCL_TEST_CONTEXT=gpu STDCL_OVERLAP=$ov timeout 120 ./test_foreign > /tmp/tf.log 2>&1) &&
                pass=$((pass + 1)) || tail -5 /tmp/tf.log
        done
        echo "STDCL_OVERLAP=$ov: $pass of $ROUNDS runs passed"
    done
    for ex in blas fft; do
        [ -d "build/examples/$ex" ] || { echo "examples/$ex: not built"; continue; }
        for p in build/examples/$ex/*; do
            [ -x "$p" ] && [ -f "$p" ] || continue
            pass=0
            for _ in $(seq "$ROUNDS"); do
                (cd "$(dirname "$p")" && timeout 120 "./$(basename "$p")" -c gpu --check \
                    > /tmp/ex.log 2>&1) && pass=$((pass + 1)) || tail -5 /tmp/ex.log
            done
            echo "$p -c gpu --check: $pass of $ROUNDS runs passed"
            tail -3 /tmp/ex.log
        done
    done
} 2>&1 | tee "$RES/correctness.txt"

make check-gpu > "$RES/check-gpu.log" 2>&1
tail -3 "$RES/check-gpu.log"
grep -h "failed" build/check-gpu/*.log 2>/dev/null | head -5
fi
[[ $WHAT == *" bench "* ]] || exit 0

{
    for r in 1 2; do
        echo "== round $r"
        build/bench/bench_blas -c gpu
        [ -x build/bench/cublas_sgemm ] && build/bench/cublas_sgemm 4096 8192
        echo "== bench_overlap, then with the kernel queue taken (-q)"
        build/bench/bench_overlap -c gpu
        build/bench/bench_overlap -c gpu -q
    done
} 2>&1 | tee "$RES/blas.txt"

if [ -f build-deps/base.tar ]; then
    rm -rf /tmp/base && mkdir -p /tmp/base && tar -xf build-deps/base.tar -C /tmp/base &&
        (cd /tmp/base && gpu_build lib bench > "$RES/base-build.log" 2>&1) || echo "base: build failed"
fi
{
    for r in 1 2; do
        for tree in "$ROOT" /tmp/base; do
            [ -x "$tree/build/bench/bench_core" ] || continue
            echo "== $tree, round $r: streams"
            "$tree/build/bench/bench_core" -c gpu -s -b 11
            echo "== $tree, round $r: core rows"
            "$tree/build/bench/bench_core" -c gpu -n 1000 -b 11
        done
    done
} > "$RES/core.txt" 2>&1
grep -E "^==|clmsync|stream|\(1s|\(2\)|\(7\)" "$RES/core.txt" | head -80
