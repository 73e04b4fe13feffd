#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_fuzz.sh: builds the libFuzzer targets of tests/fuzz (make fuzz-build)
# and runs each for a while (`make fuzz`), or replays their seeds and
# mutants of them through the replay programs (`make check`: --replay).
#
#   tests/fuzz/run_fuzz.sh [--seconds N] [--seeds-only] [--skip-without-clang] [name...]
#   tests/fuzz/run_fuzz.sh --replay M [name...]
#
#   --replay M              no libFuzzer: $BUILD_DIR/fuzz-replay/replay_<name>
#                           (make fuzz-replay; gcc, the library's own
#                           build) runs every seed and M mutants of each,
#                           the same ones every run (replay_main.cpp); its
#                           failing input is saved as
#                           $BUILD_DIR/fuzz/artifacts/<name>/failed-input
#
#   --seconds N             how long each target runs (default 60)
#   --seeds-only            start from the seeds alone and keep nothing found
#                           (make check: each run takes as long, whatever
#                           earlier runs found)
#   --skip-without-clang    when $FUZZ_CXX (default clang++) cannot build a
#                           libFuzzer program with ASan and UBSan, say so in
#                           one line and exit 0 (make check); without it that
#                           is a failure (make fuzz)
#   name...                 only these targets (cache_entry, clcc, clsopen,
#                           env, include_scan; default: every
#                           tests/fuzz/fuzz_<name>.cpp)
#
# Each target starts from its seeds, tests/fuzz/corpus/<name>/ (never written
# to), and from what earlier runs found, $BUILD_DIR/fuzz/corpus/<name>/ (new
# inputs go there), with tests/fuzz/<name>.dict when there is one.  It runs
# in an empty folder of its own, with TMPDIR in /dev/shm (else in
# $BUILD_DIR/fuzz/tmp/) and no STDCL_* variable of the caller.  A crash, a
# sanitizer report, a failed check (abort), a timeout (10 s for one input) or
# more than 2 GiB of memory ends the target: its input is saved as
# $BUILD_DIR/fuzz/artifacts/<name>/crash-* (or timeout-*, oom-*), the end of
# its log is printed, and the run fails.  Rerun one input:
# $BUILD_DIR/fuzz/fuzz_<name> FILE.  Whole logs: $BUILD_DIR/fuzz/logs/<name>.log.
# One line per target says how it went (runs, runs per second, and libFuzzer's
# last coverage line: cov = code edges reached, ft = features, corp = corpus);
# the exit status is 1 when any target failed (or could not be built).
# FUZZ_STRICT=1 turns off the targets' detours around known library bugs
# (tests/fuzz/crashes/README).
#
# Environment: BUILD_DIR (default build), FUZZ_CXX (default clang++), MAKE,
# FUZZ_STRICT.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-build}
case $build in /*) ;; *) build=$top/$build ;; esac
cxx=${FUZZ_CXX:-clang++}

seconds=60
skip_missing=0
seeds_only=0
replay=
names=()
while [ $# -gt 0 ]; do
    case $1 in
        --seconds) seconds=$2; shift 2 ;;
        --replay) replay=$2; shift 2 ;;
        --seeds-only) seeds_only=1; shift ;;
        --skip-without-clang) skip_missing=1; shift ;;
        -*) echo "usage: $0 [--seconds N] [--seeds-only] [--skip-without-clang] [--replay M] [name...]" >&2; exit 2 ;;
        *) names+=("$1"); shift ;;
    esac
done
if [ ${#names[@]} -eq 0 ]; then
    for f in "$top"/tests/fuzz/fuzz_*.cpp; do
        n=$(basename "$f" .cpp)
        names+=("${n#fuzz_}")
    done
fi

# No STDCL_* setting of the caller reaches the targets (each sets its own).
for v in $(compgen -e); do
    case $v in STDCL_*) unset "$v" ;; esac
done

# The targets' scratch files (cache folders, headers, written for every
# input) go to a tmpfs when there is one: on ext4, a file renamed over another
# (publish_file, every input) is written out to the disk, a hundred times
# slower.
tmp_base=$build/fuzz/tmp
[ -d /dev/shm ] && [ -w /dev/shm ] && tmp_base=/dev/shm/stdcl-fuzz-$$
trap 'rm -rf "$tmp_base"' EXIT
rel=${build#"$top"/}

if [ -n "$replay" ]; then
    case $replay in ''|*[!0-9]*) echo "run_fuzz: --replay wants a count of mutants" >&2; exit 2 ;; esac
    if ! ${MAKE:-make} -s --no-print-directory -C "$top" BUILD="$rel" \
            $(printf "$rel/fuzz-replay/replay_%s " "${names[@]}"); then
        echo "run_fuzz: the replay programs did not build"
        exit 1
    fi
    failed=()
    for name in "${names[@]}"; do
        art=$build/fuzz/artifacts/$name
        log=$build/fuzz/logs/$name-replay.log
        run=$build/fuzz/run/$name
        tmp=$tmp_base/$name
        rm -rf "$run" "$tmp"
        mkdir -p "$art" "$(dirname "$log")" "$run" "$tmp"
        opts=(-m "$replay")
        [ -f "$top/tests/fuzz/$name.dict" ] && opts+=(-x "$top/tests/fuzz/$name.dict")
        (cd "$run" && TMPDIR=$tmp REPLAY_ARTIFACTS=$art "$build/fuzz-replay/replay_$name" "${opts[@]}" \
            "$top/tests/fuzz/corpus/$name") > "$log" 2>&1
        rc=$?
        rm -rf "$run" "$tmp"
        if [ $rc -eq 0 ]; then
            echo "run_fuzz: $name: ok: $(sed -n 's/^replay: //p' "$log" | tail -n 1)"
        else
            echo "run_fuzz: $name: FAILED (exit status $rc); the end of $log:"
            tail -n 40 "$log" | sed 's/^/    /'
            failed+=("$name")
        fi
    done
    if [ ${#failed[@]} -ne 0 ]; then
        echo "run_fuzz: failed: ${failed[*]} (rerun: $build/fuzz-replay/replay_<name> $build/fuzz/artifacts/<name>/failed-input)"
        exit 1
    fi
    echo "run_fuzz: ${#names[@]} targets, their seeds and $replay mutants of each: no check failed"
    exit 0
fi

# Can $cxx build a libFuzzer program with the sanitizers?  (Debian: the clang
# package; libFuzzer comes with its compiler-rt.)
probe=$(mktemp -d "${TMPDIR:-/tmp}/stdcl-fuzz-probe.XXXXXX") || exit 1
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' > "$probe/p.cpp"
if ! "$cxx" -fsanitize=fuzzer,address,undefined "$probe/p.cpp" -o "$probe/p" > /dev/null 2>&1; then
    rm -rf "$probe"
    if [ $skip_missing -eq 1 ]; then
        echo "run_fuzz: skipped: $cxx cannot build libFuzzer programs (apt-get install clang to run the fuzz targets)"
        exit 0
    fi
    echo "run_fuzz: $cxx cannot build libFuzzer programs with -fsanitize=fuzzer,address,undefined" \
         "(install clang, or set FUZZ_CXX)" >&2
    exit 1
fi
rm -rf "$probe"

# The build: the Makefile's fuzz-build target, into $build/fuzz.
jobs=$(nproc 2> /dev/null || echo 2)
echo "run_fuzz: building ${names[*]} in $rel/fuzz (make fuzz-build)"
if ! ${MAKE:-make} -s --no-print-directory -C "$top" -j"$jobs" BUILD="$rel" FUZZ_CXX="$cxx" \
        $(printf "$rel/fuzz/fuzz_%s " "${names[@]}"); then
    echo "run_fuzz: the fuzz targets did not build"
    exit 1
fi

export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}

failed=()
for name in "${names[@]}"; do
    prog=$build/fuzz/fuzz_$name
    seeds=$top/tests/fuzz/corpus/$name
    found=$build/fuzz/corpus/$name
    art=$build/fuzz/artifacts/$name
    log=$build/fuzz/logs/$name.log
    run=$build/fuzz/run/$name
    tmp=$tmp_base/$name
    [ $seeds_only -eq 1 ] && found=$tmp_base/$name-corpus
    rm -rf "$run" "$tmp"
    mkdir -p "$found" "$art" "$(dirname "$log")" "$run" "$tmp" "$seeds"
    opts=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
          -artifact_prefix="$art/")
    [ -f "$top/tests/fuzz/$name.dict" ] && opts+=(-dict="$top/tests/fuzz/$name.dict")
    # clcc warns about every #include it cannot find: its own stderr goes
    # (libFuzzer's and the sanitizers' reports still come out).
    [ "$name" = clcc ] && opts+=(-close_fd_mask=2)
    before=$(ls "$art")
    (cd "$run" && TMPDIR=$tmp "$prog" "${opts[@]}" "$found" "$seeds") > "$log" 2>&1
    rc=$?
    rm -rf "$run" "$tmp"
    # libFuzzer's last status line ("#N DONE cov: C ft: F corp: ...") and final stats.
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
    cov=$(grep -E '^#[0-9]+' "$log" | tail -n 1 |
          sed -n 's/.*\(cov: [0-9]*\) \(ft: [0-9]*\) \(corp: [^ ]*\).*/\1 \2 \3/p')
    if [ $rc -eq 0 ]; then
        echo "run_fuzz: $name: ok: ${runs:-?} runs in ${seconds} s (${rate:-?}/s), ${cov:-no coverage line}"
    else
        echo "run_fuzz: $name: FAILED (exit status $rc) after ${runs:-?} runs; the end of $log:"
        tail -n 40 "$log" | sed 's/^/    /'
        comm -13 <(printf '%s\n' "$before" | sort) <(ls "$art" | sort) | sed "s|^|    input saved: $art/|"
        failed+=("$name")
    fi
done
if [ ${#failed[@]} -ne 0 ]; then
    echo "run_fuzz: failed: ${failed[*]} (rerun one input: $build/fuzz/fuzz_<name> <input>)"
    exit 1
fi
echo "run_fuzz: ${#names[@]} targets, ${seconds} s each: no crash"
