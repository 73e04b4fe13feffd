#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# perf_gpu_run.sh: the runtime-speed figures on the 2x H200 machine, in one call of
# well under 8 minutes: builds with the project's own ./configure && make (the
# recipe of gpu_common.sh; no CMocka there: tests are not built), then runs
# bench_core on stdgpu device 0 (registry lookups at 1e3..1e6 live allocations,
# 16 threads, clarg_set_global, clmsync 64 MiB against pageable and pinned raw
# transfers) and nbody_multi on 1 and 2 GPUs at N = 32768, 131072 and 1048576;
# "profile": nbody_multi on one GPU with STDCL_PROFILE off and on in turn (six
# pairs at N = 32768 and at 131072, the profile written to a file), and the
# median of the per-pair ratios of ms/step (on/off; gpu_common.sh's
# stats_median); "ab": bench_core of this tree and of a baseline tree in turn,
# twice each (BASE_TAR names a `git archive` tar of the baseline commit,
# carried with the run; bench_core's options are AB_ARGS, default
# "-n 1000 -T 16 -b 21": the rows, not the 1e6 fill);
# "overlap": bench_overlap (a kernel and a NOWAIT clmsync of 64 MiB on one GPU)
# with STDCL_OVERLAP=1 and 0 in turn, twice each; "check": make all and make
# check-gpu (the tests need CMocka: set CMOCKA_CFLAGS and CMOCKA_LIBS to a
# carried copy).
# Every result is a text file under $OUT (default /tmp/perf-gpu-out).
#
#   bench/perf_gpu_run.sh [core] [nbody] [profile] [ab] [overlap] [check]   (default: core nbody)
set -u
. "$(dirname "$0")/gpu_common.sh"
RES=${OUT:-/tmp/perf-gpu-out}
mkdir -p "$RES"
WHAT=${*:-core nbody}
gpu_icd
gpu_caches
start=$(date +%s)
gpu_machine > "$RES/machine.txt" 2>&1
cat "$RES/machine.txt"

echo "== build (./configure && make)"
gpu_build lib tools examples bench > "$RES/build.txt" 2>&1
rc=$?
tail -5 "$RES/build.txt"
if [ $rc -ne 0 ] || [ ! -x build/bench/bench_core ] || [ ! -x build/examples/nbody/nbody_multi ]; then
    echo "build failed (status $rc): see $RES/build.txt"
    exit 1
fi
echo "build: $(( $(date +%s) - start )) s"

case " $WHAT " in *" core "*)
    echo "== bench_core -c gpu (device 0)"
    timeout 240 build/bench/bench_core -c gpu -n 1000,10000,100000,1000000 -T 16 -b 21 \
        > "$RES/bench_core_gpu.txt" 2> "$RES/bench_core_gpu.err"
    echo "exit status $?" >> "$RES/bench_core_gpu.txt"
    cat "$RES/bench_core_gpu.txt"
    echo "elapsed: $(( $(date +%s) - start )) s"
    ;;
esac

case " $WHAT " in *" nbody "*)
    echo "== nbody_multi --bench on 1 and 2 GPUs"
    nb="$ROOT/build/examples/nbody/nbody_multi"
    out="$RES/nbody_multi.txt"
    : > "$out"
    for spec in 32768:400 131072:100 1048576:10; do
        n=${spec%%:*} steps=${spec##*:}
        for k in 1 2; do
            echo "-- N=$n devices=$k steps=$steps" | tee -a "$out"
            (cd build/examples/nbody && timeout 90 "$nb" -c gpu -d $k -n $n -s $steps -b 10 --bench -q) >> "$out" 2>&1
            echo "exit status $?" >> "$out"
            tail -3 "$out"
        done
    done
    echo "elapsed: $(( $(date +%s) - start )) s"
    ;;
esac
case " $WHAT " in *" profile "*)
    echo "== nbody_multi -d 1 --bench, STDCL_PROFILE off and on in turn"
    nb="$ROOT/build/examples/nbody/nbody_multi"
    out="$RES/profile_nbody.txt"
    : > "$out"
    for spec in 32768:400 131072:100; do
        n=${spec%%:*} steps=${spec##*:}
        ratios=
        for i in 1 2 3 4 5 6; do
            pair=
            for m in 0 1; do
                prof=0
                [ $m = 1 ] && prof="$RES/profile_n${n}_$i.txt"
                ms=$(cd build/examples/nbody && STDCL_PROFILE=$prof timeout 90 "$nb" -c gpu -d 1 -n $n -s $steps -b 10 --bench -q 2>&1 |
                    sed -n 's/.*ms_per_step[= ]*\([0-9.][0-9.]*\).*/\1/p' | tail -1)
                pair="$pair ${ms:-?}"
            done
            set -- $pair
            r=$(awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.3f", b / a; else print "?" }')
            echo "N=$n pair $i: off $1 on $2 ms/step, on/off $r" | tee -a "$out"
            ratios="$ratios $r"
        done
        med=$(printf '%s\n' $ratios | stats_median)
        echo "N=$n: median on/off ratio ${med:-?} (pairs:$ratios)" | tee -a "$out"
    done
    echo "elapsed: $(( $(date +%s) - start )) s"
    ;;
esac
case " $WHAT " in *" overlap "*)
    echo "== bench_overlap -c gpu, STDCL_OVERLAP=1 and 0 in turn"
    for i in 1 2; do
        for ov in 1 0; do
            STDCL_OVERLAP=$ov timeout 120 build/bench/bench_overlap -c gpu -m 64 -r 21 \
                > "$RES/overlap_${ov}_$i.txt" 2>&1
            echo "exit status $?" >> "$RES/overlap_${ov}_$i.txt"
            cat "$RES/overlap_${ov}_$i.txt"
        done
    done
    echo "elapsed: $(( $(date +%s) - start )) s"
    ;;
esac
case " $WHAT " in *" check "*)
    # The tests need CMocka: configure finds it through CMOCKA_CFLAGS and
    # CMOCKA_LIBS when it is carried (libcmocka-dev unpacked with dpkg -x).
    echo "== make check-gpu"
    make -j"$(nproc)" all > "$RES/build_all.txt" 2>&1 || tail -20 "$RES/build_all.txt"
    CHECK_GPU_LOG=/tmp/check-gpu-logs make check-gpu 2>&1 | tee "$RES/check_gpu.txt" | tail -40
    tar -czf "$RES/check_gpu_logs.tgz" -C /tmp check-gpu-logs 2>/dev/null
    echo "elapsed: $(( $(date +%s) - start )) s"
    ;;
esac
case " $WHAT " in *" ab "*)
    echo "== bench_core -c gpu: baseline ($BASE_TAR) and this tree in turn"
    base=/tmp/stdcl-base
    rm -rf "$base" && mkdir -p "$base" && tar -xf "${BASE_TAR:?BASE_TAR names the baseline tar}" -C "$base" &&
        cp -r build-deps "$base/" 2>/dev/null
    (cd "$base" && gpu_build lib bench) > "$RES/build_base.txt" 2>&1 ||
        { echo "baseline build failed: see $RES/build_base.txt"; exit 1; }
    for i in 1 2; do
        for side in base new; do
            dir=$ROOT; [ $side = base ] && dir=$base
            (cd "$dir" && timeout 150 build/bench/bench_core -c gpu ${AB_ARGS:--n 1000 -T 16 -b 21}) \
                > "$RES/ab_${side}_$i.txt" 2> "$RES/ab_${side}_$i.err"
            echo "-- $side run $i (exit status $?)"
            grep -E '^\([0-9]' "$RES/ab_${side}_$i.txt"
        done
    done
    echo "elapsed: $(( $(date +%s) - start )) s"
    ;;
esac
echo "results in $RES: $(ls "$RES" | tr '\n' ' ')"
