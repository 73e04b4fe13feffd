#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sync_gpu_run.sh: the sync check on the GPU machine, in one call.  Builds the
# tree (./configure && make, CMocka and nettle's headers from build-deps/debs,
# as stress_gpu_run.sh), then on stdgpu: test_synccheck (the guide's split
# over two GPUs, commands on stdcl_queue), the sync model's generated programs
# (MODEL_COUNT, default 200), nbody_multi on every GPU with and without
# STDCL_CHECK=sync (N in SIZES, default 65536 and 131072, RUNS runs each,
# alternating, with NBODY_FLAGS such as --bench; MODEL_COUNT=0: no model),
# test_wait and test_timeline, then make check-gpu in the time left of 570 s
# (CHECK_GPU=0: not).  Results go
# to $OUT (default /tmp/gpu-out).
set -u
. "$(dirname "$0")/gpu_common.sh"
RES=${OUT:-/tmp/gpu-out}
mkdir -p "$RES"
for f in build-deps/debs/libcmocka*.deb build-deps/debs/nettle-dev*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done
ldconfig
gpu_icd
gpu_caches
gpu_machine > "$RES/machine.txt" 2>&1
cat "$RES/machine.txt"
start=$(date +%s)
gpu_build lib tools tests examples > "$RES/build.log" 2>&1 || { tail -40 "$RES/build.log"; exit 1; }
echo "built after $(($(date +%s) - start)) s"
echo "== test_synccheck on stdgpu"
(cd build/tests && STDCL_TEST_CONTEXT=gpu timeout -k 5 300 ./test_synccheck) > "$RES/synccheck.log" 2>&1
echo "status $?"; grep -E "PASSED|FAILED|skip" "$RES/synccheck.log" | head
echo "== the sync model on stdgpu, ${MODEL_COUNT:-200} programs"
[ "${MODEL_COUNT:-200}" = 0 ] || for plain in --no-plain ""; do
    STDCL_TEST_CONTEXT=gpu python3 tests/sync_model.py --runner build/tests/helper_syncrun --count "${MODEL_COUNT:-200}" \
        --seed 1 $plain --align 512 --devices "$(nvidia-smi -L | wc -l | awk '{print ($1 > 1) ? 2 : 1}')" > "$RES/model$plain.txt" 2>&1
    echo "-- ${plain:-with plain commands}"
    tail -12 "$RES/model$plain.txt"
done
echo "== nbody_multi on every GPU, with and without STDCL_CHECK=sync"
nb=build/examples/nbody/nbody_multi
ndev=$(nvidia-smi -L | wc -l)
# With build-deps/before.tar (`git archive COMMIT` and a .commit file) the
# library of that commit is built too, and its check runs beside
# (sync-before: nbody_multi's RUNPATH yields to LD_LIBRARY_PATH).
modes="off sync"
if [ -f build-deps/before.tar ]; then
    rm -rf /tmp/before && mkdir -p /tmp/before && tar -xf build-deps/before.tar -C /tmp/before &&
        (cd /tmp/before && gpu_build lib > /tmp/before.log 2>&1) && modes="off sync sync-before"
    echo "before: $(cat /tmp/before/.commit 2>/dev/null) ($modes)"
fi
for n in ${SIZES:-65536 131072}; do
for i in $(seq 1 "${RUNS:-3}"); do
    for mode in $modes; do
        t0=$(date +%s%N)
        if [ $mode = sync-before ]; then
            (cd examples/nbody && LD_LIBRARY_PATH=/tmp/before/build/lib STDCL_CHECK=sync ../../$nb -c gpu -d "$ndev" -n $n -s 200 -q ${NBODY_FLAGS:-}) > /tmp/nb.log 2>&1
        elif [ $mode = sync ]; then
            (cd examples/nbody && STDCL_CHECK=sync ../../$nb -c gpu -d "$ndev" -n $n -s 200 -q ${NBODY_FLAGS:-}) > /tmp/nb.log 2>&1
        else
            (cd examples/nbody && ../../$nb -c gpu -d "$ndev" -n $n -s 200 -q ${NBODY_FLAGS:-}) > /tmp/nb.log 2>&1
        fi
        rc=$?
        echo "N=$n $mode run $i: status $rc, $(( ($(date +%s%N) - t0) / 1000000 )) ms, $(grep -c 'sync check' /tmp/nb.log) findings, $(tail -1 /tmp/nb.log)"
    done
done
done | tee "$RES/nbody.txt"
echo "== test_wait and test_timeline on stdgpu"
for t in test_wait test_timeline; do
    (cd build/tests && STDCL_TEST_CONTEXT=gpu timeout -k 5 120 ./$t; echo "$t: exit status $?") >> "$RES/tests.txt" 2>&1
done
grep -E "exit status|PASSED|FAILED" "$RES/tests.txt"

[ "${CHECK_GPU:-1}" = 0 ] && exit 0
echo "== make check-gpu"
left=$(( 570 - ($(date +%s) - start) ))
timeout -k 5 "$left" make check-gpu > "$RES/check_gpu.log" 2>&1
echo "status $?"; tail -3 "$RES/check_gpu.log"
