#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check_faults.sh: fault injection over libstdcl (`make check-faults`, and a
# stride of it in `make check`).
#
#   tools/check_faults.sh [--stride S] [--repeat R | --every] [--modes M]
#                         [--kinds cl,alloc] [--until FN] [--jobs J]
#                         [--timeout T] [--valgrind] [--keep DIR]
#
# Runs build/tests/faults/fault_workload under build/tests/faults/faultcl_shim.so
# (LD_PRELOAD), which fails one OpenCL call made by libstdcl (kind cl) or one
# allocation made by libstdcl (kind alloc) per run, in each memory mode:
# zc (devices as PoCL reports them: zero-copy) and copy (FAULTCL_NO_UNIFIED=1
# and STDCL_PIN_MIN=16384, so that the workload's larger allocations are pinned:
# no unified memory, the copy path a GPU takes; STDCL_PROFILE on; and the
# polled waits of STDCL_WAIT=block, as on NVIDIA).
#
# First, per mode, a run with nothing injected and FAULTCL_TRACE=1 lists every
# counted call and allocation with its site (return address in libstdcl.so);
# it must be clean, reach every OpenCL function libstdcl imports, and every
# such function must be interposed by the shim.  Then the injection points:
# every call number K, except that when one (function, site) repeats more than
# R times (--repeat, default 4: the 4096 NOWAIT transfers of the workload, the
# device queries of each context) only its first R and its last occurrence
# are taken; --every takes every K.  --until FN keeps only the points before
# the first call of the OpenCL function FN in that run: --until
# clCreateProgramWithSource is the load (platforms, default contexts).
# --stride S then takes every S-th point.
#
# Each run gets a fresh program cache (STDCL_CACHE_DIR: round 1 compiles and
# stores, round 2 loads from the cache) and a warm PoCL cache, and a time limit
# (--timeout, default 60 s).  It is classified:
#   clean     exit 0 (the workload checked the error return, that clerror()
#             names the injected call or error, and exact results after it)
#   crash     killed by a signal, or a sanitizer's (or valgrind's) error report
#   hang      over the time limit
#   leak      LeakSanitizer (or valgrind) found host memory lost, or the
#             shim's ledger found an OpenCL object libstdcl made and never
#             released at exit
#   overrel   libstdcl released an OpenCL object more often than it held it
#             (the driver may free it under a later user)
#   wrong     wrong results, a failure with nothing injected, or no recovery
#   nomsg     an error return with clerror() NULL
#   unnamed   a clerror() message that does not name the injected call
#   other     any other exit status
# A run whose injection point was not reached (the call sequence changed) is
# counted as "missed", not as a failure.
#
# Output: one line per run that is not clean (mode, kind, K, what was
# injected where, the class, the site as function and file:line, and the tail
# of the workload's stderr), then a table of counts per mode and kind and the
# functions injected.  Exit status 0 only when every run is clean.
#
# Environment: BUILD_DIR (default build).  The script runs itself under
# tools/test_env.sh (PoCL with two devices, fresh cache folders).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
self="$top/tools/check_faults.sh"

# One run (called through xargs): one_run MODE KIND K -> a result file.
if [ "${1:-}" = --one ]; then
    mode=$2 kind=$3 k=$4
    work=$FAULTS_WORK
    run="$work/runs/$mode-$kind-$k"
    rm -rf "$run"
    mkdir -p "$run/stdcl" "$run/tmp"
    env_args=(FAULTCL_REPORT="$run/report" STDCL_CACHE_DIR="$run/stdcl" TMPDIR="$run/tmp")
    # Copy mode: the workload's 16 KiB allocations are pinned (the threshold
    # lowered from 256 KiB), the rest pageable: both host-memory paths; and
    # the profile at exit is on (its retained events, its queries, its file).
    # Its waits poll (STDCL_WAIT=block, the GPU's default): the status
    # queries, markers and flushes of a polled wait are injection points too.
    [ "$mode" = copy ] && env_args+=(FAULTCL_NO_UNIFIED=1 STDCL_PIN_MIN=16384 STDCL_PROFILE="$run/profile.txt"
                                     STDCL_WAIT=block)
    if [ "$kind" = cl ]; then env_args+=(FAULTCL_FAIL_AT="$k"); else env_args+=(FAULTCL_ALLOC_FAIL_AT="$k"); fi
    [ "$k" = 0 ] && env_args+=(FAULTCL_TRACE=1)
    prefix=()
    lsan="suppressions=$top/tools/lsan.supp:print_suppressions=0:exitcode=23"
    if [ -n "${FAULTS_VALGRIND:-}" ]; then
        # Memory errors only (use after free...); leaks stay LeakSanitizer's
        # and the ledger's, and LeakSanitizer cannot run under valgrind.
        prefix=(valgrind -q --leak-check=no --error-exitcode=139)
        lsan="detect_leaks=0"
    fi
    timeout -k 5 "$FAULTS_TIMEOUT" env "${env_args[@]}" LD_PRELOAD="$FAULTS_SHIM" \
        LSAN_OPTIONS="$lsan" \
        "${prefix[@]}" "$FAULTS_WORKLOAD" "$FAULTS_KERNELS" > "$run/out" 2>&1
    rc=$?
    report="$run/report"
    [ -f "$report" ] || : > "$report"
    cls=clean
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then cls=hang
    elif grep -q '^overrelease' "$report"; then cls=overrel
    elif [ "$rc" -gt 128 ] || grep -q -e 'ERROR: AddressSanitizer' -e 'runtime error:' -e 'Invalid read' \
             -e 'DEADLYSIGNAL' -e 'Sanitizer: SEGV' -e 'terminate called' \
             -e 'Invalid write' -e 'Invalid free' "$run/out"; then cls=crash
    elif [ "$rc" -eq 23 ] || grep -q -e 'ERROR: LeakSanitizer' -e 'definitely lost' "$run/out" \
             || grep -q '^leak ' "$report"; then cls=leak
    elif [ "$rc" -eq 10 ]; then cls=wrong
    elif [ "$rc" -eq 11 ]; then cls=nomsg
    elif [ "$rc" -eq 12 ]; then cls=unnamed
    elif [ "$rc" -ne 0 ]; then cls=other
    elif [ "$k" != 0 ] && ! grep -q '^inject' "$report"; then cls=missed
    fi
    inj=$(grep -m1 '^inject' "$report" | cut -d' ' -f3-)
    echo "$mode $kind $k $cls rc=$rc ${inj:--}" > "$run/result"
    # Keep what the summary needs; drop the rest (the cache) at once.
    rm -rf "$run/stdcl" "$run/tmp"
    exit 0
fi

# Under the test environment (PoCL with two devices, fresh caches).
if [ -z "${STDCL_TEST_TMPDIR:-}" ]; then
    exec bash "$top/tools/test_env.sh" bash "$self" "$@"
fi

stride=1 repeat=4 modes="zc,copy" kinds="cl,alloc" jobs=2 tmo=60 keep= valgrind= until=
while [ $# -gt 0 ]; do
    case $1 in
        --stride) stride=$2; shift 2 ;;
        --repeat) repeat=$2; shift 2 ;;
        --every) repeat=1000000000; shift ;;
        --modes) modes=$2; shift 2 ;;
        --kinds) kinds=$2; shift 2 ;;
        --jobs) jobs=$2; shift 2 ;;
        --timeout) tmo=$2; shift 2 ;;
        --valgrind) valgrind=1; shift ;;
        --until) until=$2; shift 2 ;;
        --keep) keep=$2; shift 2 ;;
        *) echo "check_faults: unknown option $1 (see the comment at the top of $0)" >&2; exit 2 ;;
    esac
done
case "$stride$repeat$jobs$tmo" in *[!0-9]*) echo "check_faults: numbers expected" >&2; exit 2 ;; esac

build=${BUILD_DIR:-build}
case $build in /*) ;; *) build=$top/$build ;; esac
export FAULTS_SHIM="$build/tests/faults/faultcl_shim.so"
export FAULTS_WORKLOAD="$build/tests/faults/fault_workload"
export FAULTS_KERNELS="$top/tests/faults/fault_kernels.cl"
export FAULTS_TIMEOUT=$tmo FAULTS_VALGRIND=$valgrind
lib=$(readlink -f "$build/lib/libstdcl.so")
for f in "$FAULTS_SHIM" "$FAULTS_WORKLOAD" "$lib"; do
    [ -f "$f" ] || { echo "check_faults: $f is missing (run make first)" >&2; exit 1; }
done
if nm -D "$lib" | grep -q -e ' __asan_' -e ' __tsan_' -e ' __ubsan_'; then
    echo "check_faults: skipped: $lib is built with a sanitizer (run it on the plain build: the shim's malloc stands in front of the sanitizer's)"
    exit 0
fi
[ -n "$valgrind" ] && ! command -v valgrind > /dev/null && { echo "check_faults: no valgrind" >&2; exit 1; }

if [ -n "$keep" ]; then
    work=$keep
    rm -rf "$work"
    mkdir -p "$work"
else
    work="$STDCL_TEST_TMPDIR/faults"
    mkdir -p "$work"
fi
export FAULTS_WORK=$work
mkdir -p "$work/runs"
failures=0

# Every OpenCL function libstdcl imports must be interposed.
imports=$(nm -D --undefined-only "$lib" | awk '{ sub(/@.*/, "", $2); if ($2 ~ /^cl[A-Z]/) print $2 }' | sort -u)
shimmed=$(nm -D --defined-only "$FAULTS_SHIM" | awk '$3 ~ /^cl[A-Z]/ { print $3 }' | sort -u)
missing=$(comm -23 <(echo "$imports") <(echo "$shimmed"))
if [ -n "$missing" ]; then
    echo "check_faults: libstdcl imports OpenCL functions the shim does not interpose:" $missing
    failures=$((failures + 1))
fi
releases=$(echo "$imports" | grep '^clRelease' | tr '\n' ' ')
injectable=$(echo "$imports" | grep -v '^clRelease' | sort -u)

# The uninjected run of each mode: clean, and the list of injection points.
points() { # points WORD FILE: the K to inject, from the trace lines "WORD K fn... site=..."
    awk -v W="$1" -v R="$repeat" -v U="$until" '
        U != "" && $1 == "call" && $3 == U { stop = 1 }
        stop { next }
        $1 == W { k = $2; key = $3 " " $NF; n[key]++; occ[k] = n[key]; kk[k] = key; order[++m] = k }
        END { for (i = 1; i <= m; i++) { k = order[i]; if (occ[k] <= R || occ[k] == n[kk[k]]) print k } }' "$2"
}
declare -A total_points
: > "$work/plan"
: > "$work/reached"
for mode in ${modes//,/ }; do
    bash "$self" --one "$mode" base 0
    res=$(cat "$work/runs/$mode-base-0/result")
    rep="$work/runs/$mode-base-0/report"
    if [ "$(echo "$res" | cut -d' ' -f4)" != clean ]; then
        echo "check_faults: $mode: the run with nothing injected is not clean: $res"
        tail -n 20 "$work/runs/$mode-base-0/out" | sed 's/^/    /'
        grep -e '^leak' -e '^overrelease' "$rep" | head -5 | sed 's/^/    /'
        failures=$((failures + 1))
        continue
    fi
    awk '$1 == "fn" { print $2 }' "$rep" >> "$work/reached"
    if [ -n "$until" ] && ! awk -v U="$until" '$1 == "call" && $3 == U { found = 1 } END { exit !found }' "$rep"; then
        echo "check_faults: $mode: --until $until: the run with nothing injected never calls it"
        failures=$((failures + 1))
        continue
    fi
    for kind in ${kinds//,/ }; do
        word=call
        [ "$kind" = alloc ] && word=alloc
        total_points[$mode-$kind]=$(awk -v W="$word" '$1 == W' "$rep" | wc -l)
        points "$word" "$rep" | awk -v S="$stride" '(NR - 1) % S == 0' | sed "s/^/$mode $kind /" >> "$work/plan"
    done
done
# Every OpenCL function libstdcl imports is reached in some mode (the copy
# path's transfers in copy mode, the zero-copy probe's map in the other).
unreached=$(comm -23 <(echo "$injectable") <(sort -u "$work/reached"))
if [ -n "$unreached" ] && [ "$modes" = zc,copy ]; then
    echo "check_faults: the workload does not reach:" $unreached
    failures=$((failures + 1))
fi
nplan=$(wc -l < "$work/plan")
echo "check_faults: $nplan runs (stride $stride, repeat $repeat${until:+, until $until}, jobs $jobs, timeout ${tmo}s${valgrind:+, valgrind})"

start=$(date +%s)
awk '{ print "--one", $1, $2, $3 }' "$work/plan" | xargs -P "$jobs" -n 4 bash "$self"
elapsed=$(( $(date +%s) - start ))

# One line per run that is not clean, with its site in the source.
sym() { # sym OFFSET: the innermost libstdcl source line of a return address, and its entry
    local off=$(( $1 - 1 )) fn loc first= last= outer=
    while IFS= read -r fn && IFS= read -r loc; do
        fn=${fn//(anonymous namespace)::/}
        fn=${fn%%(*}
        case $loc in
            */libstdcl/*) [ -z "$first" ] && first="$fn ${loc##*/libstdcl/}"; last=$fn ;;
            *) outer=$fn ;;
        esac
    done < <(addr2line -f -C -i -e "$lib" "$(printf '0x%x' "$off")" 2>/dev/null)
    # Out of line template code (std::vector growth...): its outermost function.
    [ -z "$first" ] && first="${outer:-?} (library template code; see the stack below)"
    echo "$first${last:+ in $last}"
}
cat "$work"/runs/*-cl-*/result "$work"/runs/*-alloc-*/result 2>/dev/null | sort -k1,1 -k2,2 -k3,3n > "$work/results"
while read -r mode kind k cls rc rest; do
    [ "$cls" = clean ] && continue
    [ "$cls" = missed ] && continue
    site=$(echo "$rest" | sed -n 's/.*site=libstdcl.so+\(0x[0-9a-f]*\).*/\1/p')
    where=
    [ -n "$site" ] && where=$(sym "$site")
    echo "FAULT $mode $kind K=$k $cls $rc injected: ${rest} at ${where:-?}"
    run="$work/runs/$mode-$kind-$k"
    grep -h -e '^overrelease' -e '^leak' "$run/report" | head -3 | sed 's/^/    ledger: /'
    grep -v -e 'error generated' -e '^$' "$run/out" | grep -v 'fk_undeclared' | tail -n 4 | cut -c1-300 | sed 's/^/    /'
done < "$work/results"

# The table.
echo "=== check_faults summary (${elapsed}s)"
classes="clean crash hang leak overrel wrong nomsg unnamed other missed"
printf '%-6s %-6s %7s %6s' mode kind points runs
for c in $classes; do printf ' %7s' "$c"; done
echo
bad=0
for mode in ${modes//,/ }; do
    for kind in ${kinds//,/ }; do
        runs=$(awk -v m="$mode" -v k="$kind" '$1 == m && $2 == k' "$work/results" | wc -l)
        printf '%-6s %-6s %7s %6s' "$mode" "$kind" "${total_points[$mode-$kind]:-0}" "$runs"
        for c in $classes; do
            n=$(awk -v m="$mode" -v k="$kind" -v c="$c" '$1 == m && $2 == k && $4 == c' "$work/results" | wc -l)
            printf ' %7s' "$n"
            case $c in clean|missed) ;; *) bad=$((bad + n)) ;; esac
        done
        echo
    done
done
fns=$(awk '$6 ~ /^cl/ { print $6 }' "$work/results" | sort -u | tr '\n' ' ')
echo "OpenCL functions injected: ${fns:-none}"
echo "Never injected (releases, by design): ${releases:-none}"
if [ "$bad" -ne 0 ] || [ "$failures" -ne 0 ]; then
    echo "check_faults: FAILED: $bad run(s) not clean, $failures setup failure(s)"
    exit 1
fi
echo "check_faults: every injected failure was answered cleanly"
