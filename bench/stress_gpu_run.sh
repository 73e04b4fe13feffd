#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# stress_gpu_run.sh: test_stress and test_exit on the GPU machine, many times,
# in one call.  Builds the tree (./configure && make), then:
#   - test_exit on stdgpu (exit() and clcontext_destroy while 16 threads are
#     inside calls, 100 runs each), unless EXIT=0;
#   - RUNS runs (default 500) of test_stress_mixed_calls_verified on stdgpu,
#     16 threads, STRESS_SECONDS each (default 3), PAR at a time (default 4),
#     each killed after 90 s (a hang), until DEADLINE seconds (default 480)
#     from the start have passed; with NO_INTERIOR=1 without sub-buffers;
#     with RAW=1 bench/subbuffer_threads instead (raw OpenCL, the same
#     sub-buffer pattern; NO_INTERIOR=1: its -n);
#   Each failing or hung run's whole output is kept (the first 40), and every
#   line a failure printed ("stress: failure", "stress: signal") is counted.
# Needs CMocka and nettle's headers from build-deps/debs (apt-get download
# them here), unpacked there; carry build-deps.  Results go to $OUT (default
# /tmp/gpu-out): summary.txt, runs.txt (one line a run), fail-N.log.
set -u
. "$(dirname "$0")/gpu_common.sh"
RES=${OUT:-/tmp/gpu-out}
RUNS=${RUNS:-500}
PAR=${PAR:-4}
DEADLINE=${DEADLINE:-480}
SECS=${STRESS_SECONDS:-3}
start=$(date +%s)
mkdir -p "$RES"
for f in build-deps/debs/libcmocka*.deb build-deps/debs/nettle-dev*.deb; do [ -f "$f" ] && dpkg -x "$f" /; done
ldconfig
gpu_icd
gpu_caches
gpu_machine > "$RES/machine.txt" 2>&1
if [ ! -x build/tests/test_stress ] || [ "${REBUILD:-1}" = 1 ]; then
    gpu_build lib tools tests bench > "$RES/build.log" 2>&1 || {
        tail -40 "$RES/build.log"
        exit 1
    }
fi
echo "built after $(($(date +%s) - start)) s"

if [ "${EXIT:-1}" = 1 ]; then
    (cd build/tests && STDCL_TEST_CONTEXT=gpu timeout -k 5 300 ./test_exit) > "$RES/test_exit.log" 2>&1
    echo "test_exit on stdgpu: status $? ($(grep -E 'exit:|PASSED|FAILED' "$RES/test_exit.log" | tr '\n' ' '))"
fi

one_run() {
    local i=$1 log=/tmp/stress-run-$1.log t0 rc
    t0=$(date +%s%N)
    if [ -n "${RAW:-}" ]; then
        timeout -k 5 90 build/bench/subbuffer_threads -t 16 -s "$SECS" ${NO_INTERIOR:+-n} > "$log" 2>&1
    else
        (cd build/tests && env STDCL_TEST_CONTEXT=gpu STDCL_STRESS_THREADS=16 STDCL_STRESS_SECONDS="$SECS" \
            ${NO_INTERIOR:+STDCL_STRESS_NO_INTERIOR=1} timeout -k 5 90 ./test_stress test_stress_mixed_calls_verified) \
            > "$log" 2>&1
    fi
    rc=$?
    printf '%d %d %d.%03d\n' "$i" "$rc" $((($(date +%s%N) - t0) / 1000000000)) \
        $(((($(date +%s%N) - t0) / 1000000) % 1000)) >> "$RES/runs.txt"
    if [ $rc -ne 0 ]; then
        local n
        n=$(ls "$RES"/fail-*.log 2>/dev/null | wc -l)
        if [ "$n" -lt 40 ]; then
            cp "$log" "$RES/fail-$i.log"
            # The crash handler's frames "lib.so(+0x12ab)": named here, where the binary is.
            grep -oE '^[^ ]+\(\+0x[0-9a-f]+\)' "$log" | while IFS= read -r fr; do
                printf '  %s: ' "$fr"
                (cd build/tests && addr2line -f -C -p -e "${fr%%(*}" "$(echo "$fr" | sed -E 's/.*\(\+(0x[0-9a-f]+)\)/\1/')" 2>&1 | head -1)
            done > "$RES/fail-$i.frames"
        fi
    fi
    rm -f "$log"
}

: > "$RES/runs.txt"
i=0
while [ $i -lt "$RUNS" ] && [ $(($(date +%s) - start)) -lt "$DEADLINE" ]; do
    for _ in $(seq "$PAR"); do
        i=$((i + 1))
        one_run $i &
    done
    wait
done
{
    what=test_stress
    [ -n "${RAW:-}" ] && what="raw OpenCL subbuffer_threads"
    echo "$what on the GPUs: $(wc -l < "$RES/runs.txt") runs," \
        "16 threads, $SECS s each, $PAR at a time ${NO_INTERIOR:+(no sub-buffers)}"
    echo "passed: $(awk '$2 == 0' "$RES/runs.txt" | wc -l)"
    echo "failed: $(awk '$2 != 0 && $2 != 124 && $2 != 137' "$RES/runs.txt" | wc -l)"
    echo "hung (killed after 90 s): $(awk '$2 == 124 || $2 == 137' "$RES/runs.txt" | wc -l)"
    echo "longest run: $(sort -k3 -g "$RES/runs.txt" | tail -1 | awk '{print $3}') s"
    echo "what the failing runs printed:"
    cat "$RES"/fail-*.log 2>/dev/null | grep -hE "stress: (failure|signal)|ERROR|thread [0-9]+:" | sort | uniq -c |
        sort -rn | head -20
} | tee "$RES/summary.txt"
echo "all took $(($(date +%s) - start)) s"
