#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_env.sh: runs one command in the test environment, which
# tools/run_tests.sh uses for every test program and `make run` for the demo.
#
#   tools/test_env.sh [-C dir] [--keep-user-env] command [args...]
#
# The environment:
# - PoCL with two CPU devices: POCL_DEVICES="pthread pthread",
#   POCL_MAX_PTHREAD_COUNT=2;
# - POCL_CACHE_DIR, XDG_CACHE_HOME, STDCL_CACHE_DIR and TMPDIR in a fresh
#   temporary folder, removed when the command ends (every command starts
#   with cold caches; but POCL_CACHE_DIR is $TEST_POCL_CACHE_DIR when that
#   is set, as in make asan/tsan); STDCL_TEST_TMPDIR, a scratch folder in it
#   for the test's own files;
# - STDCL_TEST_SRCDIR, the absolute path of tests/ in the source tree;
# - STDCL_TEST_CC and STDCL_TEST_CFLAGS: how a test compiles a program
#   against this build (kept from the caller; default cc and nothing);
# - run-time options for sanitized builds (ASAN_OPTIONS ..., below);
# - every other STDCL_* and STDDEV/STDCPU/STDGPU/STDACC* variable of the
#   caller removed (STDCL_KERNEL_PATH, STDCL_TRACE, STDDEV=0 ... would
#   change what the tests see), except STDCL_STRESS_* (test_stress.c's
#   threads, seconds and seed, which `make stress` sets) and the NAME=VALUE
#   words of the caller's STDCL_TEST_ENV, set on purpose (run_tests.sh's
#   second passes: STDCL_TEST_ENV="STDCL_OVERLAP=0"); with --keep-user-env
#   (`make run`) the caller's are kept, so that `STDCL_PROFILE=1 make run`
#   or `STDCL_TRACE=all make run` does what it says (but STDCL_CACHE_DIR).
# With -C the command runs in dir.  Exits with the command's status.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)

dir=
keep_user=0
while [ $# -gt 0 ]; do
    case $1 in
        -C) dir=$2; shift 2 ;;
        --keep-user-env) keep_user=1; shift ;;
        *) break ;;
    esac
done
if [ $# -eq 0 ]; then
    echo "usage: $0 [-C dir] [--keep-user-env] command [args...]" >&2
    exit 2
fi

test_cc=${STDCL_TEST_CC:-cc}
test_cflags=${STDCL_TEST_CFLAGS:-}
test_env=${STDCL_TEST_ENV:-}
for v in $(compgen -e); do
    [ $keep_user = 1 ] && break
    case $v in
        STDCL_STRESS_*) ;;
        STDCL_*|STDDEV*|STDCPU*|STDGPU*|STDACC*) unset "$v" ;;
    esac
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/stdcl-test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir -p "$tmp/pocl" "$tmp/xdg" "$tmp/stdcl" "$tmp/tmp" "$tmp/scratch"

export POCL_DEVICES="${TEST_POCL_DEVICES:-pthread pthread}"  # TEST_POCL_DEVICES: more (tests/sync_model.py --devices 3)
export POCL_MAX_PTHREAD_COUNT=2
# TEST_POCL_CACHE_DIR (a folder, created if missing) keeps PoCL's compiled
# kernels from run to run instead: the sanitizer runs use one, since their
# PoCL compiles (LLVM's allocations, intercepted) are 3-5 times slower.  Only
# PoCL's cache: libstdcl's own (STDCL_CACHE_DIR) stays cold.
if [ -n "${TEST_POCL_CACHE_DIR:-}" ] && mkdir -p "$TEST_POCL_CACHE_DIR"; then
    export POCL_CACHE_DIR="$TEST_POCL_CACHE_DIR"
else
    export POCL_CACHE_DIR="$tmp/pocl"
fi
export XDG_CACHE_HOME="$tmp/xdg"
export STDCL_CACHE_DIR="$tmp/stdcl"
export TMPDIR="$tmp/tmp"
export STDCL_TEST_TMPDIR="$tmp/scratch"
export STDCL_TEST_SRCDIR="$top/tests"
# A test that compiles a program against the library uses these: the
# compiler and the extra flags (the sanitizer's, in make asan/tsan/ubsan)
# that the tree was built with.  Kept from the caller; make sets them.
export STDCL_TEST_CC="$test_cc"
export STDCL_TEST_CFLAGS="$test_cflags"
for kv in $test_env; do
    case $kv in
        [A-Za-z_]*=*) export "$kv" ;;
        *) echo "test_env.sh: STDCL_TEST_ENV word '$kv' is not NAME=VALUE" >&2; exit 2 ;;
    esac
done

# For programs built by make asan / tsan / ubsan (ignored by others); the
# caller's own options come after these, so they win.  run_tests.sh's stdbuf
# preloads a library before the ASan runtime; PoCL and LLVM leak at exit.
# intercept_tls_get_addr=0: up to GCC 13 the runtime takes a dynamic TLS
# block that starts 16 bytes into a page for glibc 2.19's layout and reads
# the two words before it as the block's bounds; since glibc 2.25 that is
# chance, and LeakSanitizer's tracer then dies at exit ("Tracer caught
# signal 11") in about one run in a few hundred.  Those blocks are plain
# malloc memory since 2.25, reached from the thread's DTV, so the leak
# check still sees what they point to.
export ASAN_OPTIONS="verify_asan_link_order=0:detect_leaks=1:intercept_tls_get_addr=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$top/tools/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# TSan sleeps 1 s (atexit_sleep_ms) before each process exits, to give
# other threads a moment to race with exit: 100 ms is as good a moment on
# an idle machine, and the suite starts some 200 processes.
export TSAN_OPTIONS="second_deadlock_stack=1:atexit_sleep_ms=100${TSAN_OPTIONS:+:$TSAN_OPTIONS}"

if [ -n "$dir" ]; then
    cd "$dir" || exit 1
fi
"$@"
