# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# gpu_common.sh: what the GPU-machine scripts (gpu_run.sh, perf_gpu_run.sh,
# mpi_gpu_run.sh) share; each sources it first:
#
#   . "$(dirname "$0")/gpu_common.sh"
#
# Sourcing it sets ROOT (the top of the source tree) and changes into it.  The
# GPU machine (Ubuntu 24.04, no network) has autoconf, make, pkg-config and
# nvcc, and nettle's run-time library (libnettle.so.8) but not its headers:
# gpu_run.sh --prepare copies them into $GPU_DEPS here, and gpu_build uses
# them there (carry build-deps with the run).
#
#   gpu_icd                 registers NVIDIA's OpenCL with the ICD loader
#                           (/etc/OpenCL/vendors/nvidia.icd), when writable
#   gpu_caches              POCL_CACHE_DIR=/tmp/pocl-cache and
#                           STDCL_CACHE_DIR=/tmp/stdcl-cache, exported, created
#   gpu_machine             the machine, on stdout: date, kernel, GPUs, cores,
#                           CPU, the tree's commit and the OpenCL devices
#   gpu_build TARGET...     ./configure && make -j$(nproc) TARGET...
#   stats_quantile P        the P-quantile of the numbers on stdin
#   stats_median            their median
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 1
GPU_DEPS=build-deps/nettle

gpu_icd() {
    if [ -w /etc/OpenCL/vendors ]; then
        echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
    fi
}

gpu_caches() {
    export POCL_CACHE_DIR=/tmp/pocl-cache STDCL_CACHE_DIR=/tmp/stdcl-cache
    mkdir -p "$POCL_CACHE_DIR" "$STDCL_CACHE_DIR"
}

gpu_machine() {
    date -u
    uname -r
    nvidia-smi -L 2>/dev/null
    nproc
    grep -m1 'model name' /proc/cpuinfo
    git -C "$ROOT" log --oneline -1 2>/dev/null
    if command -v clinfo > /dev/null; then clinfo -l 2>&1; fi
}

# gpu_build TARGET...: configures and builds the tree in the current folder,
# output on stdout and stderr; its status is the build's.  configure is made
# with autoconf when it is missing; tools/install_deps.sh is skipped
# (STDCL_SKIP_DEPS=1: no package manager reaches anything there).
# NETTLE_CFLAGS, NETTLE_LIBS, CMOCKA_CFLAGS and CMOCKA_LIBS from the
# environment reach configure; without nettle's headers on the machine and
# without NETTLE_CFLAGS, the copy in $ROOT/$GPU_DEPS is used when it is there.
gpu_build() {
    export STDCL_SKIP_DEPS=1
    if [ -z "${NETTLE_CFLAGS:-}" ] && [ ! -f /usr/include/nettle/sha2.h ] &&
        [ -f "$ROOT/$GPU_DEPS/include/nettle/sha2.h" ]; then
        export NETTLE_CFLAGS="-I$ROOT/$GPU_DEPS/include" NETTLE_LIBS="-l:libnettle.so.8"
    fi
    { [ -x configure ] || autoconf; } && ./configure && make -j"$(nproc)" "$@"
}

# stats_quantile P: the P-quantile (0 <= P <= 1) of the numbers on stdin, one
# per line (other lines, such as "?" for a failed run, are skipped); nothing
# when there are none.  The rule, the same as bench_stats.h's: sorted
# ascending, the quantile lies at 0-based position h = P (n - 1), linearly
# interpolated between the two values around it.  So the median of an odd
# count is the middle value, of an even count the mean of the two middle
# values.
stats_quantile() {
    awk '$1 ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ { print $1 }' | sort -g |
        awk -v p="$1" '{ v[NR] = $1 }
            END {
                if (!NR) exit
                h = p * (NR - 1); i = int(h)
                x = v[i + 1]
                if (i + 1 < NR) x += (h - i) * (v[i + 2] - v[i + 1])
                print x
            }'
}

stats_median() {
    stats_quantile 0.5
}
