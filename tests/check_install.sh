#!/bin/sh
# SPDX-License-Identifier: MIT
# check_install.sh: an installed libstdcl can be found, used and moved.
#   1. `make install DESTDIR=<stage> PREFIX=/opt/stdcl-moved`: a prefix other
#      than the configured one (the installed tree is relocated); ldconfig
#      there prints nothing about the linker script libclelf.so;
#   2. tests/install/use_stdcl.c, built with `pkg-config stdcl` against the
#      staged tree, runs a kernel that includes <stdcl.h> (the library finds
#      its header folder from its own location) and prints "sum ok VERSION";
#   3. the same program built by CMake (tests/install/CMakeLists.txt:
#      find_package(stdcl 1.0), target stdcl::stdcl), and find_package(stdcl 2)
#      refused;
#   4. with libstdcl_fortran built (HAVE_FC=1 in config.mk):
#      tests/install/use_stdcl.f90 built with `pkg-config stdcl-fortran` and
#      by CMake (tests/install/fortran: find_package(stdcl COMPONENTS
#      fortran), target stdcl::fortran), and the same output;
#   5. `make uninstall` with the same DESTDIR and PREFIX leaves no file.
# Skips CMake (saying so) when cmake is not installed.  Run by
# tools/run_tests.sh; BUILD_DIR is the build folder (default build); the
# programs are compiled with STDCL_TEST_CC and STDCL_TEST_CFLAGS (a sanitized
# build's compiler and flags), as the other tests' programs are.
top=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-build}
case $build in /*) ;; *) build=$top/$build ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/stdcl-install.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
version=$(cat "$top/VERSION")
stage=$tmp/stage
prefix=/opt/stdcl-moved
root=$stage$prefix
cc=${STDCL_TEST_CC:-${CC:-cc}}
extra=${STDCL_TEST_CFLAGS:-}
status=0
fail() {
    echo "check_install: $*"
    status=1
}

if ! make -C "$top" --no-print-directory -s install BUILD="$build" DESTDIR="$stage" PREFIX="$prefix" \
        > "$tmp/install.log" 2>&1; then
    fail "make install DESTDIR=$stage PREFIX=$prefix failed:"
    sed 's/^/  /' "$tmp/install.log"
    exit 1
fi
libdir=$(dirname "$(find "$root" -name 'libstdcl.so' | head -n 1)")
[ -f "$libdir/pkgconfig/stdcl.pc" ] || fail "no stdcl.pc under $libdir/pkgconfig"
[ -f "$libdir/cmake/stdcl/stdclConfig.cmake" ] || fail "no stdclConfig.cmake under $libdir/cmake/stdcl"
# ldconfig passes over the linker script libclelf.so in silence (a script that
# does not begin "/* GNU ld script" gets "is not an ELF file" at every ldconfig).
if ldc=$(command -v ldconfig || command -v /sbin/ldconfig); then
    ldout=$("$ldc" -N -n "$libdir" 2>&1) || true
    case $ldout in *"not an ELF"*) fail "ldconfig on the installed libraries: $ldout" ;; esac
fi

# run NAME PROGRAM: runs it against the staged library, expecting "sum ok VERSION".
run() {
    out=$(LD_LIBRARY_PATH="$libdir" STDCL_CACHE=0 "$2" 2>&1)
    case $out in
        "sum ok $version") ;;
        *) fail "$1: the program printed:"; echo "$out" | sed 's/^/  /' ;;
    esac
}

# 2. pkg-config (the .pc holds the install prefix; the stage moves it).
pc="pkg-config --define-variable=prefix=$root"
if cflags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" $pc --cflags stdcl) &&
    libs=$(PKG_CONFIG_PATH="$libdir/pkgconfig" $pc --libs stdcl) &&
    ver=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --modversion stdcl); then
    [ "$ver" = "$version" ] || fail "pkg-config --modversion stdcl: $ver, want $version"
    # shellcheck disable=SC2086
    if $cc $extra -o "$tmp/use_pc" "$top/tests/install/use_stdcl.c" $cflags $libs > "$tmp/cc.log" 2>&1; then
        run "pkg-config build" "$tmp/use_pc"
    else
        fail "cc with pkg-config stdcl failed:"
        sed 's/^/  /' "$tmp/cc.log"
    fi
else
    fail "pkg-config stdcl failed with PKG_CONFIG_PATH=$libdir/pkgconfig"
fi

# 3. CMake.
cmake_note="; CMake not checked (cmake is not installed)"
if command -v cmake > /dev/null 2>&1; then
    cmake_note="; find_package(stdcl) checked"
    if cmake -S "$top/tests/install" -B "$tmp/cm" -DCMAKE_PREFIX_PATH="$root" -DCMAKE_C_COMPILER="$(command -v $cc)" \
            -DCMAKE_C_FLAGS="$extra" -DCMAKE_EXE_LINKER_FLAGS="$extra" > "$tmp/cmake.log" 2>&1 &&
        cmake --build "$tmp/cm" >> "$tmp/cmake.log" 2>&1; then
        run "CMake build" "$tmp/cm/use_stdcl"
    else
        fail "the CMake project failed:"
        sed 's/^/  /' "$tmp/cmake.log"
    fi
    sed 's/find_package(stdcl 1.0 REQUIRED)/find_package(stdcl 2 REQUIRED)/' "$top/tests/install/CMakeLists.txt" \
        > "$tmp/CMakeLists.txt"
    cp "$top/tests/install/use_stdcl.c" "$tmp/"
    if cmake -S "$tmp" -B "$tmp/cm2" -DCMAKE_PREFIX_PATH="$root" > "$tmp/cmake2.log" 2>&1; then
        fail "find_package(stdcl 2) accepted version $version"
    fi
fi

# 4. Fortran, when the tree was configured with a Fortran compiler.
fortran_note=
fc=$(sed -n 's/^FC = //p' "$top/config.mk" 2>/dev/null)
# A sanitized library needs its sanitizer's run-time first in the program too.
fextra=
for f in $extra; do
    case $f in -fsanitize* | -fno-sanitize*) fextra="$fextra $f" ;; esac
done
if grep -q '^HAVE_FC = 1' "$top/config.mk" 2>/dev/null; then
    fortran_note="; Fortran: pkg-config stdcl-fortran"
    if fflags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" $pc --cflags stdcl-fortran) &&
        flibs=$(PKG_CONFIG_PATH="$libdir/pkgconfig" $pc --libs stdcl-fortran); then
        # shellcheck disable=SC2086
        if (cd "$tmp" && $fc $fextra -o "$tmp/use_f_pc" "$top/tests/install/use_stdcl.f90" $fflags $flibs) \
                > "$tmp/fc.log" 2>&1; then
            run "Fortran pkg-config build" "$tmp/use_f_pc"
        else
            fail "$fc with pkg-config stdcl-fortran failed:"
            sed 's/^/  /' "$tmp/fc.log"
        fi
    else
        fail "pkg-config stdcl-fortran failed with PKG_CONFIG_PATH=$libdir/pkgconfig"
    fi
    if command -v cmake > /dev/null 2>&1; then
        fortran_note="$fortran_note and CMake's stdcl::fortran"
        if cmake -S "$top/tests/install/fortran" -B "$tmp/cmf" -DCMAKE_PREFIX_PATH="$root" \
                -DCMAKE_Fortran_COMPILER="$(command -v "$fc")" -DCMAKE_Fortran_FLAGS="$fextra" \
                -DCMAKE_EXE_LINKER_FLAGS="$fextra" > "$tmp/cmakef.log" 2>&1 &&
            cmake --build "$tmp/cmf" >> "$tmp/cmakef.log" 2>&1; then
            run "Fortran CMake build" "$tmp/cmf/use_stdcl_fortran"
        else
            fail "the Fortran CMake project failed:"
            sed 's/^/  /' "$tmp/cmakef.log"
        fi
    fi
fi

# 5. uninstall.
make -C "$top" --no-print-directory -s uninstall BUILD="$build" DESTDIR="$stage" PREFIX="$prefix" \
    > "$tmp/uninstall.log" 2>&1 || fail "make uninstall failed: $(cat "$tmp/uninstall.log")"
left=$(find "$stage" -type f -o -type l)
[ -z "$left" ] || fail "make uninstall left: $left"

[ $status -eq 0 ] && echo "check_install: installed under another prefix, pkg-config and CMake builds ran a kernel including <stdcl.h>$cmake_note$fortran_note; uninstall left nothing"
exit $status
