#!/bin/sh
# SPDX-License-Identifier: MIT
# check_prims_cl.sh: every program the primitives build, compiled on its own
# from libstdcl/primitives/cl with the build options the library gives it:
# scan.cl for each element type, operation and layout, sort.cl for each key
# width and layout and with NVIDIA's warp instructions (wide pass for 4-byte
# values or not; for NVIDIA's PTX
# target), reduce.cl for each element type and operation.  With clang's OpenCL C front end
# (-fsyntax-only, warnings are errors); PoCL's Debian package brings
# clang-15.  Exits 0 with a line saying so when no clang is found.
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$top/libstdcl/primitives/cl
cc=
for c in ${PRIMS_CL_CLANG:-clang clang-19 clang-18 clang-17 clang-16 clang-15 clang-14}; do
    if command -v "$c" > /dev/null 2>&1; then cc=$c; break; fi
done
if [ -z "$cc" ]; then
    echo "check_prims_cl: skipped: no clang (apt-get install clang to compile the primitives' kernel files)"
    exit 0
fi
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
n=0 bad=0
compile() {
    n=$((n + 1))
    if ! "$cc" -x cl -cl-std=CL1.2 -fsyntax-only -Werror -Xclang -finclude-default-header -I"$dir" "$@" > "$tmp" 2>&1; then
        bad=$((bad + 1))
        echo "check_prims_cl: FAILED: $cc ... $*"
        head -20 "$tmp"
    fi
}
for layout in 0 1; do
    for type in 1 2 3 4 5 6; do
        for op in 1 2 3; do
            compile -D PRIM_TYPE=$type -D PRIM_OP=$op -D STDCL_LAYOUT_GPU=$layout "$dir/scan.cl"
        done
    done
    for bits in 32 64; do
        compile -D SORT_KEY_BITS=$bits -D STDCL_LAYOUT_GPU=$layout "$dir/sort.cl"
    done
done
# NVIDIA's: the warp vote through inline PTX (asm, a GNU keyword in clang's
# OpenCL C), with the macros libstdcl defines for an NVIDIA GPU, which also
# take the tiles in the groups' order (PRIM_GROUP_ORDER, common.h); with
# the wide pass for 4-byte values and without.
for bits in 32 64; do
    for wide in 0 1; do
        compile -fgnu-keywords -target nvptx64-nvidia-nvcl -D __NVIDIA__ -D __GPU__ -D SORT_KEY_BITS=$bits \
            -D STDCL_LAYOUT_GPU=1 -D STDCL_WANT_NV_WARP=1 -D SORT_PAIR4_WIDE=$wide "$dir/sort.cl"
    done
done
for type in 1 2 3 4 5 6; do
    compile -target nvptx64-nvidia-nvcl -D __NVIDIA__ -D __GPU__ -D PRIM_TYPE=$type -D PRIM_OP=1 -D STDCL_LAYOUT_GPU=1 \
        "$dir/scan.cl"
done
for type in 1 2 3 4 5 6; do
    for op in 1 2 3; do
        compile -D PRIM_TYPE=$type -D PRIM_OP=$op "$dir/reduce.cl"
    done
done
# A file that is not one of the variants fails (the check can fail).
if "$cc" -x cl -cl-std=CL1.2 -fsyntax-only -Xclang -finclude-default-header -I"$dir" -D PRIM_TYPE=9 -D PRIM_OP=1 \
    -D STDCL_LAYOUT_GPU=1 "$dir/scan.cl" > /dev/null 2>&1; then
    echo "check_prims_cl: FAILED: scan.cl took PRIM_TYPE=9"
    bad=$((bad + 1))
fi
echo "check_prims_cl: $((n - bad)) of $n programs compile with $cc"
[ "$bad" -eq 0 ]
