#!/bin/sh
# SPDX-License-Identifier: MIT
# install_deps.sh: installs the Debian packages that building and testing
# libstdcl needs, when some are missing.  Silent and fast when none is.
#
# As root: apt-get update && apt-get install of the missing ones.  As another
# user: prints the sudo command to run and exits 1.  On a system without
# dpkg: prints what is needed and exits 0 (configure then reports what it
# cannot find).  STDCL_SKIP_DEPS=1 skips the check.  The Makefile runs this
# before autoconf/configure; .ci/run runs it first of all.
PACKAGES="gcc g++ gfortran make autoconf pkg-config opencl-headers ocl-icd-opencl-dev
pocl-opencl-icd clinfo oclgrind nettle-dev libcmocka-dev libpng-dev valgrind
mandoc groff-base man-db openmpi-bin libopenmpi-dev libboost-dev cmake abigail-tools
libclblast-dev libclfft-dev python3"

[ "${STDCL_SKIP_DEPS:-0}" = 1 ] && exit 0

if ! command -v dpkg-query > /dev/null 2>&1; then
    cat >&2 <<MSG
install_deps.sh: not a Debian system; install the equivalents of:
  a C99 and C++17 compiler (gcc, g++), GNU make, autoconf, pkg-config,
  the OpenCL headers and ICD loader (libOpenCL.so, CL/cl.h),
  nettle (nettle/sha2.h, libnettle: the program cache's SHA-256),
  an OpenCL platform with a CPU device (PoCL), clinfo, CMocka (cmocka.h),
  mandoc, groff and man (the manual pages' check), CMake (the install
  check), abigail-tools (make check-abi), Open MPI (mpicc,
  mpirun: the MPI example and its tests), a Fortran compiler (gfortran:
  the module stdcl and libstdcl_fortran),
  Python 3 (the sync check's model, tests/sync_model.py), and optionally
  oclgrind and libpng.
MSG
    exit 0
fi

# Packages dpkg knows as installed ("ii"); everything else is missing.
# ($PACKAGES and $missing are split into words on purpose.)
# shellcheck disable=SC2086
installed=" $(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' $PACKAGES 2> /dev/null \
              | awk '$2 == "ii" { printf "%s ", $1 }')"
missing=
for p in $PACKAGES; do
    case $installed in
        *" $p "*) ;;
        *) missing="$missing $p" ;;
    esac
done
missing=${missing# }
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "install_deps.sh: missing Debian packages: $missing" >&2
    echo "install them with:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y --no-install-recommends $missing" >&2
    exit 1
fi

echo "install_deps.sh: installing $missing"
export DEBIAN_FRONTEND=noninteractive
# shellcheck disable=SC2086
apt-get update -q && apt-get install -y -q --no-install-recommends $missing
