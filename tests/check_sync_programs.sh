#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# check_sync_programs.sh: every example and every STDCL 1.6 program of the
# tree, run under STDCL_CHECK=sync,error on two PoCL devices with
# STDCL_ZERO_COPY=1 (a laptop's setting), and with --both also =0: each must
# pass its own check (exit 0, no FAIL) and the sync check must find nothing.
# Under the check every device keeps a copy of its own, so the two settings
# run the same paths (--both shows it).
#
#   tests/check_sync_programs.sh [--both] [BUILD_DIR]     (default: build)
#
# Prints one line per program and setting ("ok" or "FAIL", the command and
# its last lines), then "N passed, N failed"; exits 1 on a failure.  A
# program not built (blas and fft without CLBlast and clFFT, the Fortran
# ones without a Fortran compiler) is listed as skipped.  nbody_mpi runs in
# test_mpi (two ranks under mpirun, both settings), not here.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
settings="1"
if [ "${1:-}" = --both ]; then
    settings="1 0"
    shift
fi
build=$(cd "${1:-$top/build}" && pwd) || exit 2
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
skipped=0

# one PROGRAM ARGS...: PROGRAM (relative to $build) in its own folder, once
# per setting.
one() {
    local prog=$1
    shift
    if [ ! -x "$build/$prog" ]; then
        echo "skip $prog (not built)"
        skipped=$((skipped + 1))
        return
    fi
    local zc rc log=$tmp/log
    for zc in $settings; do
        rc=0
        (cd "$(dirname "$build/$prog")" &&
            STDCL_TEST_ENV="STDCL_CHECK=sync,error STDCL_ZERO_COPY=$zc" timeout -k 5 300 \
                bash "$top/tools/test_env.sh" "./$(basename "$prog")" "$@") > "$log" 2>&1 || rc=$?
        if [ $rc -eq 0 ] && ! grep -q -e 'sync check' -e 'FAIL' "$log"; then
            passed=$((passed + 1))
            echo "ok   STDCL_ZERO_COPY=$zc $prog $*"
        else
            failed=$((failed + 1))
            echo "FAIL STDCL_ZERO_COPY=$zc $prog $* (exit status $rc)"
            tail -n 12 "$log" | sed 's/^/     /'
        fi
    done
}

# The examples, with --check where they take it (sizes as in test_examples).
one examples/nbody/nbody -c cpu -n 1024 -s 4 --check -q
one examples/nbody/nbody_multi -c cpu -d 2 -n 1024 -s 4 -b 2 --check -q
one examples/nbody_tile/nbody_tile -n 1000 --check
one examples/mixed_pointers/mixed_pointers -n 10007 --check
one examples/split_saxpy/split_saxpy -n 100003 --check
one examples/template_reduce/template_reduce -n 30001 --check
one examples/tiled_conv/tiled_conv -w 203 -h 157 --check
one examples/tiled_conv/tiled_conv -w 203 -h 157 --plain --check
one examples/blas/blas -n 203 -p s -r 2 --check
one examples/fft/fft -w 60 -h 42 -r 2 --check
one examples/particle_bins/particle_bins -n 100003 -g 17 --check
one examples/hello_stdcl/hello_stdcl
one examples/embedded_kernels/embedded_kernels
one examples/stdcl_hpp/stdcl_hpp
one examples/fortran/matvec
one examples/fortran/nbody_fortran --check -q -n 1000 -s 4

# The STDCL 1.6 programs: COPRTHR's examples and tutorial, the programs of
# tests/compat/stdcl16, and the Fortran one.
one tests/helper_compat_example1
one tests/helper_compat_example2
one tests/helper_compat_nbody 256 20 10
for p in "$build"/tests/compat/stdcl16/*/*; do
    case $p in *.*) continue ;; esac
    [ -f "$p" ] && [ -x "$p" ] || continue
    one "${p#"$build"/}"
done
one tests/compat/fortran/matvec16

echo "$passed passed, $failed failed ($skipped skipped)"
[ "$failed" -eq 0 ]
