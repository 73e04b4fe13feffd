#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# prims_ab_gpu_run.sh: the primitives of this tree against those of another
# commit on the GPU machine, in one call of under 10 minutes.  Builds this
# tree and build-deps/before.tar (`git archive COMMIT`, with the commit's
# name in .commit), then:
#   tests   test_prims and test_reduce on stdgpu (NVIDIA's warp path included)
#   bench   bench_prims -c gpu --min 20 --max 26 (sort, pairs, scan, reduce),
#           the other commit and this tree in turn, twice
#   cub     with bench: CUB (make bench-cuda's prims_cub, the same sizes and
#           operations) in each round beside them
#   regs    NVIDIA's compiler's figures for each kernel the library builds
#           (STDCL_BUILD_OPTIONS=-cl-nv-verbose STDCL_TRACE=log), this tree and
#           each variant
#   prof    the profile (STDCL_PROFILE) of bench_prims at each size, this tree
#           and each variant: profile-NAME-LOG2.txt
#   gaps    the timeline (STDCL_TIMELINE) of bench_prims at each size, this
#           tree and each variant, read by tools/timeline_gaps.py: a waited
#           call's launch, device time, idle between its kernels and the
#           host's notice of its end (gaps.txt)
#   calls   where the host's time goes in a call: each op of OPS at each
#           size, bench_prims under bench/clcalls_shim.c, the last run's OpenCL
#           calls and the host's time between them (calls.txt), this tree
#   cubprof CUB's kernels, each timed (nsys's cuda_gpu_kern_sum), at each size
#           (cub_kernels.txt), where nsys is installed
#   check   make check-gpu in the time left
# Results: $OUT (default /tmp/prims-ab-out): machine.txt, tests.txt,
# regs.txt, bench.txt (RESULT lines, each run's tree named), check_gpu.txt.
#
#   bench/prims_ab_gpu_run.sh [tests] [regs] [prof] [gaps] [calls] [cubprof] [bench] [cub] [check]
#   (default: tests bench cub check)
# OPS (default sort,pairs,scan,reduce), ROUNDS (default 2), MIN and MAX (log2
# sizes, default 20 and 26) shape the bench; CUB_OPS (default OPS) CUB's
# (reduce_host: its sum brought to the host, as clreduce's is); PREPS (default
# upload; "upload copy" both) how bench_prims restores the keys before each
# run (--prep), this tree and the variants (the other commit: upload); CUB_PREPS
# (default none; "none upload copy" all three) how prims_cub does (--prep); CUB_CLOCKS
# (default events; "events host" both) how CUB is timed (prims_cub --clock). BENCH_ARGS
# (say "-r 31 -w 5") go to both bench_prims and prims_cub in the bench step.  VARIANTS, one per line
# "NAME FILES SEDSCRIPT" or "NAME patch PATCHFILE" (a path from the tree's top,
# build-deps/x.patch say, applied with git apply): for each, a copy of this
# tree with FILES (comma-separated) so edited or the patch applied (a
# tuning constant, say) is built too, tested (test_prims) and benched beside
# (VARIANT and VARIANT_FILE: one variant named "variant").
set -u
. "$(dirname "$0")/gpu_common.sh"
RES=${OUT:-/tmp/prims-ab-out}
WHAT=" ${*:-tests bench cub check} "
mkdir -p "$RES"
for d in build-deps/debs/*.deb; do [ -f "$d" ] && dpkg -x "$d" /; done
ldconfig
gpu_icd
gpu_caches
start=$(date +%s)
{
    gpu_machine
    if [[ $WHAT == *" tests "* || $WHAT == *" check "* ]]; then gpu_build lib tools tests examples bench; else gpu_build lib bench; fi 2>&1 | tail -3
    echo "this tree built after $(( $(date +%s) - start )) s"
    if [[ $WHAT == *" cub "* ]]; then
        cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d '. ')
        make bench-cuda NVCCFLAGS="-O3 -std=c++17 -arch=sm_${cc:-90}" 2>&1 | tail -3
        echo "CUB built after $(( $(date +%s) - start )) s"
    fi
    if [ -f build-deps/before.tar ]; then
        rm -rf /tmp/before && mkdir -p /tmp/before && tar -xf build-deps/before.tar -C /tmp/before &&
            (cd /tmp/before && gpu_build lib bench 2>&1 | tail -3)
        echo "before: $(cat /tmp/before/.commit 2>/dev/null), built after $(( $(date +%s) - start )) s"
    fi
    rm -rf /tmp/v-*  # an earlier call's variants
    while read -r name file script; do
        [ -n "$name" ] || continue
        rm -rf "/tmp/v-$name" && mkdir -p "/tmp/v-$name" &&
            tar --exclude=./build --exclude=./build-deps -cf - . | tar -xf - -C "/tmp/v-$name" &&
            if [ "$file" = patch ]; then (cd "/tmp/v-$name" && git apply "$ROOT/$script"); else
                for f in ${file//,/ }; do sed -i "$script" "/tmp/v-$name/$f"; done; fi &&
            (cd "/tmp/v-$name" && gpu_build lib bench build/tests/test_prims 2>&1 | tail -3)
        echo "variant $name: $script in $file, built after $(( $(date +%s) - start )) s"
        echo "variant $name" > "/tmp/v-$name/.commit"
    done <<< "${VARIANTS:-${VARIANT:+variant ${VARIANT_FILE} ${VARIANT}}}"
} > "$RES/machine.txt" 2>&1
cat "$RES/machine.txt"
[[ $WHAT == *" tests "* ]] && {
    for t in test_prims test_reduce; do
        (cd build/tests && STDCL_TEST_CONTEXT=gpu timeout 200 ./$t 2>&1 | tail -4; echo "$t: exit status ${PIPESTATUS[0]}")
    done
    for v in /tmp/v-*; do
        [ -x "$v/build/tests/test_prims" ] || continue
        (cd "$v/build/tests" && cp "$ROOT"/build/tests/*.cl . 2>/dev/null
         STDCL_TEST_CONTEXT=gpu timeout 200 ./test_prims 2>&1 | tail -4; echo "$(cat "$v/.commit") test_prims: exit status ${PIPESTATUS[0]}")
    done
} > "$RES/tests.txt" 2>&1
[ -f "$RES/tests.txt" ] && grep "exit status" "$RES/tests.txt"
# What NVIDIA's compiler says of the programs the library builds (ptxas:
# registers, stack frame, spills, shared memory), for this tree and each variant.
[[ $WHAT == *" regs "* ]] && for tree in "$ROOT" /tmp/v-*; do
    [ -x "$tree/build/bench/bench_prims" ] || continue
    echo "== $( [ "$tree" = "$ROOT" ] && echo this tree || cat "$tree/.commit")"
    (cd "$tree" && CUDA_CACHE_DISABLE=1 STDCL_CACHE=0 STDCL_BUILD_OPTIONS=-cl-nv-verbose STDCL_TRACE=log timeout 60 \
        build/bench/bench_prims -c gpu --min 10 --max 10 --ops "${OPS:-sort,pairs,scan,reduce}" -r 1 -w 0 --no-boost --no-host 2>&1 |
        grep -E "compiler log of|Compiling entry|stack frame|Used [0-9]+ registers")
done > "$RES/regs.txt" 2>&1
# Where a call's device time goes: the profile of bench_prims (STDCL_PROFILE:
# each kernel of the primitives under its own row), one size a run.
[[ $WHAT == *" prof "* ]] && for tree in "$ROOT" /tmp/v-*; do
    [ -x "$tree/build/bench/bench_prims" ] || continue
    name=$( [ "$tree" = "$ROOT" ] && echo this || cat "$tree/.commit" | tr ' ' '-')
    for l in $(seq "${MIN:-20}" 2 "${MAX:-26}"); do
        (cd "$tree" && STDCL_PROFILE="$RES/profile-$name-$l.txt" timeout 60 build/bench/bench_prims -c gpu --min "$l" \
            --max "$l" --ops "${OPS:-sort,pairs,scan,reduce}" --no-boost --no-host > /dev/null 2>&1)
    done
done
[[ $WHAT == *" gaps "* ]] && for tree in "$ROOT" /tmp/v-*; do
    [ -x "$tree/build/bench/bench_prims" ] || continue
    for l in $(seq "${MIN:-20}" 2 "${MAX:-26}"); do
        echo "== $( [ "$tree" = "$ROOT" ] && echo this tree || cat "$tree/.commit"), 2^$l"
        (cd "$tree" && STDCL_TIMELINE=/tmp/gaps.json timeout 60 build/bench/bench_prims -c gpu --min "$l" --max "$l" \
            --ops "${OPS:-sort,pairs,scan,reduce}" --no-boost --no-host > /dev/null 2>&1)
        python3 "$ROOT/tools/timeline_gaps.py" /tmp/gaps.json --min-commands 1 --kernels
    done
done > "$RES/gaps.txt" 2>&1
[[ $WHAT == *" calls "* ]] && for op in $(echo "${OPS:-sort,pairs,scan,reduce}" | tr , ' '); do
    for l in $(seq "${MIN:-20}" 2 "${MAX:-26}"); do
        for prep in ${PREPS:-upload}; do
            echo "== $op, 2^$l, --prep $prep"
            LD_PRELOAD=$ROOT/build/bench/clcalls_shim.so CLCALLS_OUT=/tmp/calls.txt CLCALLS_KEEP=60 timeout 60 \
                build/bench/bench_prims -c gpu --min "$l" --max "$l" --ops "$op" -r 5 -w 2 --no-boost --no-host \
                --prep "$prep" 2>&1 | grep RESULT
            # The last timed run's calls, from the prep's last call on.
            awk '/^mark run: / { n = NR } { line[NR] = $0 } END { for (i = n - 3; i <= NR; i++) if (i > 0) print line[i] }' \
                /tmp/calls.txt
        done
    done
done > "$RES/calls.txt" 2>&1
if [[ $WHAT == *" cubprof "* ]]; then
    nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
    if [ -z "$nsys" ] || [ ! -x build/bench/prims_cub ]; then
        echo "cubprof: no nsys or no prims_cub on this machine"
    else
        for l in $(seq "${MIN:-20}" 2 "${MAX:-26}"); do
            echo "== CUB, 2^$l: $nsys"
            rm -f /tmp/cubprof.nsys-rep /tmp/cubprof.sqlite
            timeout 120 "$nsys" profile -o /tmp/cubprof -t cuda --force-overwrite true build/bench/prims_cub --min "$l" \
                --max "$l" --ops "${CUB_OPS:-${OPS:-sort,pairs,scan,reduce}}" > /dev/null 2>&1
            timeout 120 "$nsys" stats -q --report cuda_gpu_kern_sum --format csv /tmp/cubprof.nsys-rep 2>&1 | cut -c1-300
        done
    fi > "$RES/cub_kernels.txt" 2>&1
fi
[[ $WHAT == *" bench "* ]] && for round in $(seq 1 "${ROUNDS:-2}"); do
    for tree in /tmp/before "$ROOT" /tmp/v-*; do
        [ -x "$tree/build/bench/bench_prims" ] || continue
        for prep in $([ "$tree" = /tmp/before ] && echo upload || echo "${PREPS:-upload}"); do
            echo "== round $round: $( [ "$tree" = "$ROOT" ] && echo this tree || cat "$tree/.commit")$(
                [ "$prep" = upload ] || echo ", --prep $prep")"
            (cd "$tree" && timeout 120 build/bench/bench_prims -c gpu --min "${MIN:-20}" --max "${MAX:-26}" \
                --ops "${OPS:-sort,pairs,scan,reduce}" --no-boost --no-host $([ "$prep" = upload ] || echo "--prep $prep") ${BENCH_ARGS:-} \
                2>&1 | grep -E '^RESULT|FAIL|rror')
        done
    done
    if [[ $WHAT == *" cub "* ]] && [ -x build/bench/prims_cub ]; then
        for clock in ${CUB_CLOCKS:-events}; do
            for prep in ${CUB_PREPS:-none}; do
                echo "== round $round: CUB ($clock clock)$([ "$prep" = none ] || echo ", --prep $prep")"
                timeout 120 build/bench/prims_cub --min "${MIN:-20}" --max "${MAX:-26}" --clock "$clock" ${BENCH_ARGS:-} \
                    --ops "${CUB_OPS:-${OPS:-sort,pairs,scan,reduce}}" --prep "$prep" 2>&1 | grep -E '^RESULT|FAIL|rror'
            done
        done
    fi
done > "$RES/bench.txt" 2>&1
echo "bench: $(( $(date +%s) - start )) s"
left=$(( 570 - ($(date +%s) - start) ))
if [[ $WHAT == *" check "* ]] && [ $left -gt 60 ]; then
    timeout -k 5 $left make check-gpu > "$RES/check_gpu.txt" 2>&1
    echo "exit status $? (limit $left s)" >> "$RES/check_gpu.txt"
    tail -3 "$RES/check_gpu.txt"
fi
