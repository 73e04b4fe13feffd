#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_tests.sh: runs the test programs and counts their CMocka results.
#
#   tools/run_tests.sh                    every $BUILD_DIR/tests/test_* program,
#                                         test_memory, test_launch, test_threads,
#                                         test_errors and test_foreign again with
#                                         STDCL_OVERLAP=0 (one queue per device:
#                                         the pass "pass_overlap"),
#                                         test_launch, test_reduce, test_prims
#                                         and test_foreign under
#                                         STDCL_CHECK=sync
#                                         (the pass "pass_sync"),
#                                         test_memory, test_launch, test_reduce,
#                                         test_prims, test_stress, test_examples and
#                                         test_foreign under the
#                                         ordering fuzzer in copy mode
#                                         (TEST_ORDER_FUZZ=0: not),
#                                         then tests/check_exports.sh,
#                                         tests/check_man.sh,
#                                         tests/check_install.sh,
#                                         tests/check_spdx.sh,
#                                         tests/check_prims_cl.sh,
#                                         tests/check_sync_programs.sh,
#                                         tests/sync_model.py (check_sync_model),
#                                         tests/check_run_tests.sh,
#                                         tools/check_faults.sh at a stride
#                                         ($FAULTS_STRIDE, default 40) and
#                                         the fuzz targets' seeds and
#                                         $FUZZ_MUTANTS (default 1000)
#                                         mutants of each, without libFuzzer
#                                         (tests/fuzz/run_fuzz.sh --replay)
#   tools/run_tests.sh test_x[,test_y] [filter]
#                                         only those programs (names in
#                                         $BUILD_DIR/tests, or paths;
#                                         check_exports, check_man,
#                                         check_install, check_spdx,
#                                         check_prims_cl, check_run_tests,
#                                         check_faults, check_fuzz,
#                                         check_sync_programs and
#                                         check_sync_model are ten), passing
#                                         filter (a CMocka test-name pattern,
#                                         e.g. 'test_clfree_*') as argv[1]
#
# Each program runs through tools/test_env.sh (PoCL with two devices, fresh
# cache folders but PoCL's, which the run shares: below) with build/tests as its current directory, where the
# Makefile copies tests/*.cl; its output is printed whole when it ends
# (TEST_JOBS below), as it runs when one runs at a time.  CMocka's
# "[  PASSED  ] N test(s)." and "[  FAILED  ] N test(s)" lines are summed; a
# program that exits non-zero (crash, sanitizer report, timeout) without a
# FAILED line counts as one failure, one that prints no summary and exits 0
# as one pass.  A program whose only fault is LeakSanitizer's own fatal
# error (its tracer, not a leak) runs once more, and the summary says so.
# Before the summary, each failed program's reasons are printed again (its
# failure and sanitizer lines, then its last lines).  The last line is
# exactly "N passed, N failed"; the exit status is 1 when anything failed.
#
# Environment: STDCL_TEST_ENV (NAME=VALUE words every program gets, e.g.
# STDCL_ZERO_COPY=0: see tools/test_env.sh), BUILD_DIR (default build; make asan uses build-asan),
# TEST_TIMEOUT (seconds per program, default 300), TEST_JOBS (programs and
# checks run at once, each one's output printed whole when it ends; default
# the machine's cores, at most 4; 1: one after another, output as it comes),
# TEST_SKIP (comma-separated
# program, check or pass names the whole run leaves out, each program said on
# one line: .ci/run's sanitizer steps use it).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-build}
case $build in /*) ;; *) build=$top/$build ;; esac
timeout_s=${TEST_TIMEOUT:-300}

# PoCL's compiled kernels are shared by the programs and passes of one run (a
# folder in the build, emptied first): a kernel is compiled once per run
# instead of once per program and pass (the primitives' programs, CLBlast's
# GEMM: about 2 of make check's 9 minutes on 2 cores).  libstdcl's own cache
# stays cold for every program (tools/test_env.sh).  TEST_POCL_CACHE_DIR
# names another folder, kept as it is (.ci/run and make asan ... keep one
# between their steps).
if [ -z "${TEST_POCL_CACHE_DIR:-}" ]; then
    export TEST_POCL_CACHE_DIR=$build/test-pocl-cache
    rm -rf "$TEST_POCL_CACHE_DIR"
fi

programs=()
run_exports=0
run_man=0
run_install=0
run_spdx=0
run_primscl=0
run_self=0
run_faults=0
run_fuzz=0
run_syncprog=0
run_syncmodel=0
filter=
if [ $# -ge 1 ]; then
    filter=${2:-}
    for name in ${1//,/ }; do
        case $(basename "$name") in
            check_exports|check_exports.sh) run_exports=1 ;;
            check_man|check_man.sh) run_man=1 ;;
            check_install|check_install.sh) run_install=1 ;;
            check_spdx|check_spdx.sh) run_spdx=1 ;;
            check_prims_cl|check_prims_cl.sh) run_primscl=1 ;;
            check_run_tests|check_run_tests.sh) run_self=1 ;;
            check_faults|check_faults.sh) run_faults=1 ;;
            check_fuzz|run_fuzz.sh) run_fuzz=1 ;;
            check_sync_programs|check_sync_programs.sh) run_syncprog=1 ;;
            check_sync_model|sync_model.py) run_syncmodel=1 ;;
            *) if [[ $name == */* ]]; then   # a path: that program
                   programs+=("$(cd "$(dirname "$name")" 2>/dev/null && pwd)/$(basename "$name")")
               else
                   programs+=("$build/tests/$name")
               fi ;;
        esac
    done
else
    run_exports=1
    run_man=1
    run_install=1
    run_spdx=1
    run_primscl=1
    run_self=1
    run_faults=1
    run_fuzz=1
    run_syncprog=1
    run_syncmodel=1
    # TEST_SKIP also names checks: a sanitized run leaves out those that do not
    # involve the library's code (check_man, check_spdx) or are sanitized anyway
    # (check_fuzz: the fuzz targets are always built with ASan and UBSan).
    case ",${TEST_SKIP:-}," in *,check_exports,*) run_exports=0 ;; esac
    case ",${TEST_SKIP:-}," in *,check_man,*) run_man=0 ;; esac
    case ",${TEST_SKIP:-}," in *,check_install,*) run_install=0 ;; esac
    case ",${TEST_SKIP:-}," in *,check_spdx,*) run_spdx=0 ;; esac
    case ",${TEST_SKIP:-}," in *,check_prims_cl,*) run_primscl=0 ;; esac
    case ",${TEST_SKIP:-}," in *,check_run_tests,*) run_self=0 ;; esac
    case ",${TEST_SKIP:-}," in *,check_faults,*) run_faults=0 ;; esac
    case ",${TEST_SKIP:-}," in *,check_fuzz,*) run_fuzz=0 ;; esac
    case ",${TEST_SKIP:-}," in *,check_sync_programs,*|*,pass_sync,*) run_syncprog=0 ;; esac
    case ",${TEST_SKIP:-}," in *,check_sync_model,*|*,pass_sync,*) run_syncmodel=0 ;; esac
    for f in "$build"/tests/test_*; do
        case $(basename "$f") in *.*) continue ;; esac
        case ",${TEST_SKIP:-}," in
            *",$(basename "$f"),"*) echo "run_tests: $(basename "$f") left out (TEST_SKIP)"; continue ;;
        esac
        [ -f "$f" ] && [ -x "$f" ] && programs+=("$f")
    done
    if [ ${#programs[@]} -eq 0 ]; then
        echo "run_tests: no test programs in $build/tests (run make first)" >&2
    fi
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/stdcl-run-tests.XXXXXX") || exit 1
digests=$work/digests
: > "$digests"
trap 'rm -rf "$work"' EXIT

# Line-buffer the programs' stdout so that it interleaves with stderr.
linebuf=()
command -v stdbuf > /dev/null 2>&1 && linebuf=(stdbuf -oL -eL)

total_passed=0
total_failed=0
failures=()
reruns=()
times=()

count() { # count PASSED|FAILED LOG: sums CMocka's "N test(s)" lines of LOG
    sed -n "s/.*\[  $1  \] \([0-9][0-9]*\) test(s).*/\1/p" "$2" \
        | awk '{ s += $1 } END { print s + 0 }'
}

# digest NAME LOG: the lines of LOG that say why NAME failed (CMocka's failure
# lines, sanitizer and run_tests reports, then the last lines), kept for the
# end of the run, where a CI log that shows only its tail still has them.
digest() {
    {
        echo "--- $1"
        grep -E '^\[  (FAILED|ERROR) +\]|^\[ +ERROR +\]|Sanitizer|SUMMARY|runtime error|^run_tests:|Assertion|error:' "$2" | head -n 25
        echo "... its last lines:"
        tail -n 15 "$2"
    } >> "$digests"
}

# The programs, passes and checks run TEST_JOBS at a time (default: the
# machine's cores, at most 4), each in the background with its output in a
# file of its own, printed whole when it ends: a program's lines are never
# mixed with another's.  Each job writes its result to JOB.res: "P F RERAN
# SECONDS" (tests passed, failed, 1 if it ran again after LeakSanitizer's own
# failure, its time).  The longest come first (check_faults, check_sync_model,
# then long_programs below: a minute or more each on 2 cores in some step of
# .ci/run), so that the lanes end together.  TEST_JOBS=1 runs them one after another, as before.
jobs_max=${TEST_JOBS:-}
if [ -z "$jobs_max" ]; then
    jobs_max=$(nproc 2> /dev/null || echo 1)
    [ "$jobs_max" -gt 4 ] && jobs_max=4
fi
case $jobs_max in ''|*[!0-9]*|0) echo "run_tests: TEST_JOBS='$jobs_max' is not a positive number; 1" >&2; jobs_max=1 ;; esac
declare -A job_name=() job_kind=() job_pid=()  # by job id; job_pid: the running ones

# prog_job PATH ENV OUT: one test program, ENV as STDCL_TEST_ENV, its result in
# OUT.res (a fifth word "missing" when there is no such program).
prog_job() {
    local prog=$1 env=$2 out=$3 try rc passed failed reran=0 start=$SECONDS
    local name
    name=$(basename "$prog")${env:+ [$env]}
    echo "=== $name${filter:+ ($filter)}"
    if [ ! -x "$prog" ]; then
        echo "run_tests: $prog: no such test program"
        echo "0 1 0 0 missing" > "$out.res"
        return
    fi
    for try in 1 2; do
        STDCL_TEST_ENV="${STDCL_TEST_ENV:-}${env:+ $env}" timeout -k 10 "$timeout_s" bash "$top/tools/test_env.sh" -C "$(dirname "$prog")" \
            "${linebuf[@]}" "$prog" ${filter:+"$filter"} < /dev/null 2>&1 | tee "$out.try"
        rc=${PIPESTATUS[0]}
        passed=$(count PASSED "$out.try")
        failed=$(count FAILED "$out.try")
        # LeakSanitizer's own tracer sometimes fails at exit while other
        # threads (PoCL's) come and go ("LeakSanitizer has encountered a fatal
        # error"; google/sanitizers#1353): the leak check did not run, so
        # nothing was found either way.  Run the program once more, and say
        # so.  A leak report ("detected memory leaks") is never run again.
        if [ $try -eq 1 ] && [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ] &&
            grep -q 'LeakSanitizer has encountered a fatal error' "$out.try" &&
            ! grep -q 'detected memory leaks' "$out.try"; then
            echo "run_tests: $name: LeakSanitizer itself failed, not a test: running it once more"
            reran=1
            continue
        fi
        break
    done
    if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
        if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
            echo "run_tests: $name timed out after ${timeout_s}s: one failure"
        else
            echo "run_tests: $name exited with status $rc without a CMocka failure line: one failure"
        fi
        failed=1
    elif [ "$rc" -eq 0 ] && [ "$passed" -eq 0 ] && [ "$failed" -eq 0 ]; then
        echo "run_tests: $name printed no CMocka summary and exited 0: one pass"
        passed=1
    fi
    echo "$passed $failed $reran $((SECONDS - start))" > "$out.res"
}

# check_job NAME COMMAND... OUT: a check script, one pass or one failure.
check_job() {
    local name=$1 out=${!#} start=$SECONDS
    set -- "${@:2:$# - 2}"
    echo "=== $name"
    if BUILD_DIR=$build "$@" < /dev/null; then
        echo "1 0 0 $((SECONDS - start))" > "$out.res"
    else
        echo "0 1 0 $((SECONDS - start))" > "$out.res"
    fi
}

# collect ID: prints a finished job's output and counts its result.
collect() {
    local id=$1 out=$work/$1 name=${job_name[$1]} p=0 f=1 r=0 t=0 why=
    wait "${job_pid[$id]}" 2> /dev/null
    [ "$jobs_max" -eq 1 ] || cat "$out"
    [ -f "$out.res" ] && read -r p f r t why < "$out.res"
    [ -f "$out.res" ] || echo "run_tests: $name: its job ended without a result: one failure"
    total_passed=$((total_passed + p))
    total_failed=$((total_failed + f))
    [ "$r" -eq 1 ] && reruns+=("$name")
    if [ "$f" -ne 0 ]; then
        if [ "${job_kind[$id]}" = check ]; then
            failures+=("$name")
        else
            failures+=("$name (${why:-$f failed})")
        fi
        digest "$name" "$out"
    fi
    times+=("$(printf '%5d s  %s' "$t" "$name")")
    unset "job_pid[$id]"
}

# reap: collects every job that has ended; with "one", waits for one first
# while TEST_JOBS are running.
reap() {
    local id
    while :; do
        for id in "${!job_pid[@]}"; do
            if [ -f "$work/$id.res" ] || ! kill -0 "${job_pid[$id]}" 2> /dev/null; then
                collect "$id"
            fi
        done
        [ "${1:-}" = one ] && [ "${#job_pid[@]}" -ge "$jobs_max" ] || break
        wait -n 2> /dev/null || sleep 0.2
    done
}

nextid=0
# job NAME KIND ARGS...: starts a program (KIND prog: PATH ENV) or a check
# (KIND check: COMMAND...) once a lane is free; with TEST_JOBS=1 in the
# foreground, its output as it comes.
job() {
    local name=$1 kind=$2 id=$nextid
    shift 2
    reap one
    nextid=$((nextid + 1))
    job_name[$id]=$name
    job_kind[$id]=$kind
    if [ "$jobs_max" -eq 1 ]; then
        ${kind}_job "$@" "$work/$id" 2>&1 | tee "$work/$id"
        job_pid[$id]=0
        collect "$id"
    else
        ${kind}_job "$@" "$work/$id" > "$work/$id" 2>&1 &
        job_pid[$id]=$!
    fi
}
reap_all() {
    while [ "${#job_pid[@]}" -gt 0 ]; do
        wait -n 2> /dev/null || sleep 0.2
        reap
    done
}
prog() { # prog PATH [ENV]
    job "$(basename "$1")${2:+ [$2]}" prog "$1" "${2:-}"
}
check() { # check NAME COMMAND...
    job "$1" check "$@"
}

# A stride of the fault-injection sweep (make check-faults runs all of it):
# a few injection points per memory mode and kind, one pass or one failure.
[ $run_faults -eq 1 ] &&
    check "check_faults (stride ${FAULTS_STRIDE:-40})" bash "$top/tools/check_faults.sh" --stride "${FAULTS_STRIDE:-40}"
# The sync check's verdicts and fix lines against its reference model, over
# SYNC_MODEL_COUNT (default 120) generated programs from seed 1 in each memory
# mode, without plain OpenCL commands (tests/sync_model.py; make
# check-sync-model runs more, with them); and a generated program printed as C
# (as a shrunk disagreement is) builds and finds what the runner finds
# (tests/check_sync_c.sh).
[ $run_syncmodel -eq 1 ] &&
    check check_sync_model sh -c "python3 '$top/tests/sync_model.py' --runner '$build/tests/helper_syncrun' \
        --no-plain --count ${SYNC_MODEL_COUNT:-120} --zero-copy 0 && python3 '$top/tests/sync_model.py' \
        --runner '$build/tests/helper_syncrun' --no-plain --count ${SYNC_MODEL_COUNT:-120} --zero-copy 1 && \
        sh '$top/tests/check_sync_c.sh' '$build'"

# The programs, the longest first (on 2 cores, under a sanitizer too).
long_programs=" test_exit test_cache test_synccheck test_prims test_compat test_examples "
for long in $long_programs; do
    for prog in "${programs[@]}"; do
        [ "$(basename "$prog")" = "$long" ] && prog "$prog"
    done
done
for prog in "${programs[@]}"; do
    [[ $long_programs == *" $(basename "$prog") "* ]] && continue
    prog "$prog"
done

# The whole run: a second pass of the programs that order commands, with one
# queue per device (STDCL_OVERLAP=0): the results must be the same.
if [ $# -eq 0 ] && [[ ",${TEST_SKIP:-}," != *,pass_overlap,* ]]; then
    for name in test_memory test_launch test_threads test_errors test_foreign; do
        [ -x "$build/tests/$name" ] && prog "$build/tests/$name" "STDCL_OVERLAP=0"
    done
fi

# The whole run: the sync check (STDCL_CHECK=sync) finds no forgotten clmsync
# (either way) in the launch tests, clreduce, clsort and clscan: with the
# action "error" a finding fails the next call, and so the test.  Every example
# and STDCL 1.6 program is run under it by tests/check_sync_programs.sh (below).
# test_synccheck runs the seeded bugs in both modes.
if [ $# -eq 0 ] && [[ ",${TEST_SKIP:-}," != *,pass_sync,* ]]; then
    for name in test_launch test_reduce test_prims test_foreign; do
        [ -x "$build/tests/$name" ] && prog "$build/tests/$name" "STDCL_CHECK=sync,error STDCL_ZERO_COPY=0"
    done
fi

# The whole run: the programs that order commands (helper_overlap through
# test_memory, the launches and CL_EVENT_NOEVENT, clreduce, the stress mix, the examples' --check) once more under
# the ordering fuzzer (tests/order/README) in copy mode, where every command
# starts at a random time its dependencies allow and builds disturb rand() as
# NVIDIA's compiler does.  The fuzzer's seed is printed (ORDERCL_SEED replays
# it).  Not for sanitized builds (make asan...): the plain build covers it.
order_shim=$build/tests/order/ordercl_shim.so
if [ $# -eq 0 ] && [ -f "$order_shim" ] && [ "${TEST_ORDER_FUZZ:-1}" != 0 ] &&
    ! nm "$build/lib/libstdcl.a" 2> /dev/null | grep -q -E '__(asan|tsan|ubsan)_'; then
    for name in test_memory test_launch test_reduce test_prims test_stress test_examples test_foreign test_wait; do
        [ -x "$build/tests/$name" ] &&
            prog "$build/tests/$name" "STDCL_ZERO_COPY=0 LD_PRELOAD=$order_shim ORDERCL_RESEED=1"
    done
fi

# The exported symbols are the header's (tests/check_exports.sh).
[ $run_exports -eq 1 ] && check check_exports sh "$top/tests/check_exports.sh"
# The manual pages: every API name has one, each renders cleanly, and
# make install / uninstall handle them (see tests/check_man.sh).
[ $run_man -eq 1 ] && check check_man sh "$top/tests/check_man.sh"
# An installed tree, moved to another prefix, found by pkg-config and CMake
# (tests/check_install.sh).
[ $run_install -eq 1 ] && check check_install sh "$top/tests/check_install.sh"
# Every file the project wrote names its license (tests/check_spdx.sh).
[ $run_spdx -eq 1 ] && check check_spdx sh "$top/tests/check_spdx.sh"
# Every program the primitives build, compiled from its OpenCL C file with its
# build options (tests/check_prims_cl.sh).
[ $run_primscl -eq 1 ] && check check_prims_cl sh "$top/tests/check_prims_cl.sh"
# Every example and STDCL 1.6 program, silent under STDCL_CHECK=sync,error
# (tests/check_sync_programs.sh); left out with pass_sync.
[ $run_syncprog -eq 1 ] && check check_sync_programs bash "$top/tests/check_sync_programs.sh" "$build"
# This script's own counting and reports (tests/check_run_tests.sh).
[ $run_self -eq 1 ] && check check_run_tests sh "$top/tests/check_run_tests.sh"
# The fuzz targets of tests/fuzz without libFuzzer: their seeds and a fixed
# set of mutants of each, through the library as built here (run_fuzz.sh
# --replay; make fuzz is the coverage-guided search, with the sanitizers).
[ $run_fuzz -eq 1 ] &&
    check "check_fuzz (seeds and ${FUZZ_MUTANTS:-1000} mutants of each)" bash "$top/tests/fuzz/run_fuzz.sh" \
        --replay "${FUZZ_MUTANTS:-1000}"
reap_all

echo "=== time per program"
for t in "${times[@]+"${times[@]}"}"; do
    echo "$t"
done
echo "==="
if [ -s "$digests" ]; then
    echo "=== why they failed (the whole output is above)"
    cat "$digests"
    echo "==="
fi
for r in "${reruns[@]+"${reruns[@]}"}"; do
    echo "RAN AGAIN (LeakSanitizer failed, not the test): $r"
done
for f in "${failures[@]+"${failures[@]}"}"; do
    echo "FAILED: $f"
done
echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ]
