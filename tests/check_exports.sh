#!/bin/sh
# SPDX-License-Identifier: MIT
# check_exports.sh: the library exports exactly the API of the public headers.
# Compares the dynamic symbols defined by libstdcl.so (nm -D --defined-only)
# with the names declared STDCL_API in the public headers (include/stdcl.h
# and include/stdcl_cache.h: tools/api_symbols.sh lists them), failing with
# every difference.  Run by tools/run_tests.sh as one more test; the library
# is $BUILD_DIR/lib/libstdcl.so (BUILD_DIR defaults to build).
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-build}
case $build in /*) ;; *) build=$top/$build ;; esac
lib=${1:-$build/lib/libstdcl.so}
shift $(( $# > 0 ? 1 : 0 ))
# The headers: the rest of the arguments, else api_symbols.sh's default.
NM=${NM:-nm}

if [ ! -e "$lib" ]; then
    echo "check_exports: $lib not found (run make first)" >&2
    exit 1
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

sh "$top/tools/api_symbols.sh" "$@" > "$tmp/header" || exit 1
# Defined dynamic symbols, less the linker's own section markers.
# (STDCL_1.0 and later nodes: the version definitions themselves.)
"$NM" -D --defined-only "$lib" | awk 'NF >= 3 { print $3 }' \
    | grep -v -x -E '_init|_fini|_edata|_end|__bss_start|STDCL_[0-9.]+' > "$tmp/versioned"
sed 's/@.*//' "$tmp/versioned" | LC_ALL=C sort -u > "$tmp/library"
# Every exported name carries a symbol version of ours (name@@STDCL_x.y).
grep -v -E '@@?STDCL_[0-9]+\.[0-9]+$' "$tmp/versioned" > "$tmp/unversioned"

LC_ALL=C comm -23 "$tmp/header" "$tmp/library" > "$tmp/missing"
LC_ALL=C comm -13 "$tmp/header" "$tmp/library" > "$tmp/extra"
status=0
if [ -s "$tmp/missing" ]; then
    echo "check_exports: declared STDCL_API in the headers but not exported by $(basename "$lib"):"
    sed 's/^/  /' "$tmp/missing"
    status=1
fi
if [ -s "$tmp/unversioned" ]; then
    echo "check_exports: exported without a STDCL_x.y symbol version (the version script):"
    sed 's/^/  /' "$tmp/unversioned"
    status=1
fi
if [ -s "$tmp/extra" ]; then
    echo "check_exports: exported by $(basename "$lib") but not declared STDCL_API:"
    sed 's/^/  /' "$tmp/extra"
    status=1
fi
if [ $status -eq 0 ]; then
    echo "check_exports: $(wc -l < "$tmp/header") symbols, library and header agree"
fi
exit $status
