#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# run_nbody.sh: builds and runs the NBody programs and their baselines side
# by side, and prints one comparison table.
#
#   bench/run_nbody.sh [options]        (from the top of the source tree)
#
# Programs (each prints a line `RESULT impl=... n=... ms_per_step=...`):
#   stdcl        examples/nbody/nbody.c          libstdcl, one device
#   stdcl_multi  examples/nbody/nbody_multi.c    libstdcl, 1..K devices
#   opencl       bench/nbody_raw_opencl.c        plain OpenCL, same kernel file,
#                                                same build options
#   native       bench/nbody_native.cpp          g++ -O3 -march=native
#                                                -ffast-math -fopenmp
#   cuda         bench/nbody_cuda.cu             nvcc -O3 -use_fast_math
#                                                -arch=sm_90 (plain tiled port)
# What cannot run is skipped with a note: no build/lib/libstdcl.so -> no
# stdcl rows; no nvcc or no NVIDIA GPU -> no cuda; no OpenCL GPU -> CPU rows
# only.  Everything is built into $OUT/bin (default build/bench-nbody).
#
# Options:
#   --gpu-sizes "N ..."   GPU sizes (default: 131072 262144 1048576)
#   --cpu-sizes "N ..."   CPU sizes (default: 16384 32768)
#   --no-gpu | --no-cpu   skip that half
#   --max-devices K       nbody_multi up to K devices (default: all GPUs)
#   --sweep               first try GPU kernel variants (-D NBODY_IPT, _UNROLL,
#                         _JSPLIT, work-group size) with the plain OpenCL
#                         baseline at each GPU size, print each and the best,
#                         then run the table with the best variant per size
#   --variants "OPTS;..." the variants --sweep tries (';'-separated -o strings;
#                         a leading "wg=128 " sets -w)
#   --opts "OPTS"         extra kernel build options for every OpenCL run
#   --check               also run each OpenCL/CUDA program once with --check
#   --quick               fewer steps (for a smoke test)
#   --out DIR             build and result folder (default build/bench-nbody)
#
# The library must be built first (make; on the GPU machine,
# bench/gpu_run.sh builds it with ./configure && make, then calls this
# script).
# On the GPU machine (NVIDIA OpenCL is not registered there by default):
#   echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
#   bench/run_nbody.sh --check --gpu-sizes "65536 131072 262144 1048576"
#   bench/run_nbody.sh --sweep --no-cpu       (tries the kernel variants)
# (the script registers NVIDIA's ICD itself when it can write there).
set -u

ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=$ROOT/build/bench-nbody
GPU_SIZES="131072 262144 1048576"
CPU_SIZES="16384 32768"
DO_GPU=1
DO_CPU=1
MAXDEV=0
SWEEP=0
CHECK=0
QUICK=0
EXTRA_OPTS=""
# Variants for --sweep: the default (IPT=2 UNROLL=8 JSPLIT=4 on NVIDIA) and
# its neighbours; see the tuning notes at the top of nbody_kern.cl.
VARIANTS="wg=256 ;\
wg=256 -D NBODY_JSPLIT=1;\
wg=256 -D NBODY_JSPLIT=2;\
wg=256 -D NBODY_UNROLL=16;\
wg=128 -D NBODY_JSPLIT=2;\
wg=512 -D NBODY_IPT=4 -D NBODY_JSPLIT=4;\
wg=256 -D NBODY_IPT=4 -D NBODY_JSPLIT=4;\
wg=256 -D NBODY_IPT=4 -D NBODY_JSPLIT=1;\
wg=256 -D NBODY_IPT=1 -D NBODY_UNROLL=16 -D NBODY_JSPLIT=2;\
wg=256 -D NBODY_IPT=8 -D NBODY_JSPLIT=4;\
wg=256 -D NBODY_RSQRT=1"

while [ $# -gt 0 ]; do
    case "$1" in
    --gpu-sizes) GPU_SIZES=$2; shift ;;
    --cpu-sizes) CPU_SIZES=$2; shift ;;
    --no-gpu) DO_GPU=0 ;;
    --no-cpu) DO_CPU=0 ;;
    --max-devices) MAXDEV=$2; shift ;;
    --sweep) SWEEP=1 ;;
    --variants) VARIANTS=$2; shift ;;
    --opts) EXTRA_OPTS=$2; shift ;;
    --check) CHECK=1 ;;
    --quick) QUICK=1 ;;
    --out) OUT=$2; shift ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "run_nbody.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
    shift
done

BIN=$OUT/bin
RES=$OUT/results.txt
LOG=$OUT/log.txt
mkdir -p "$BIN" || exit 1
: > "$RES"
: > "$LOG"
note() { echo "run_nbody.sh: $*" >&2; echo "note: $*" >> "$LOG"; }

# ---------------------------------------------------------------------------
# Environment
# ---------------------------------------------------------------------------
export POCL_CACHE_DIR=${POCL_CACHE_DIR:-$OUT/pocl-cache}
mkdir -p "$POCL_CACHE_DIR"
if [ -d /etc/OpenCL/vendors ] && [ ! -e /etc/OpenCL/vendors/nvidia.icd ] &&
   { ldconfig -p 2>/dev/null | grep -q libnvidia-opencl.so.1; } &&
   [ -w /etc/OpenCL/vendors ]; then
    echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd &&
        note "registered NVIDIA OpenCL (/etc/OpenCL/vendors/nvidia.icd)"
fi
# The programs find nbody_kern.cl here.
export STDCL_KERNEL_PATH=$ROOT/examples/nbody
export NBODY_KERNEL=$ROOT/examples/nbody/nbody_kern.cl

CC=${CC:-cc}
CXX=${CXX:-g++}
NVCC=${NVCC:-$(command -v nvcc || ls /usr/local/cuda/bin/nvcc 2>/dev/null || true)}
PNG_FLAGS=""
PNG_LIBS=""
if pkg-config --exists libpng 2>/dev/null; then
    PNG_FLAGS="-DHAVE_PNG=1 $(pkg-config --cflags libpng)"
    PNG_LIBS=$(pkg-config --libs libpng)
fi

# ---------------------------------------------------------------------------
# Build
# ---------------------------------------------------------------------------
build() { # name, command...
    local name=$1
    shift
    echo "+ $*" >> "$LOG"
    if "$@" >> "$LOG" 2>&1; then
        return 0
    fi
    note "could not build $name (see $LOG)"
    return 1
}

HAVE_RAW=0 HAVE_NATIVE=0 HAVE_CUDA=0 HAVE_STDCL=0
# The baselines share the examples' host code (options, physics, check).
COMMON="$ROOT/examples/nbody/nbody_common.c"
build opencl $CC -std=gnu99 -O3 -fopenmp -I"$ROOT/include" -I"$ROOT/examples/nbody" $PNG_FLAGS \
    "$ROOT/bench/nbody_raw_opencl.c" "$COMMON" -o "$BIN/nbody_raw_opencl" -lOpenCL $PNG_LIBS -lm &&
    HAVE_RAW=1
build native $CXX -std=c++17 -O3 -march=native -ffast-math -fopenmp -I"$ROOT/examples/nbody" \
    $PNG_FLAGS "$ROOT/bench/nbody_native.cpp" -x c "$COMMON" -x none -o "$BIN/nbody_native" \
    $PNG_LIBS && HAVE_NATIVE=1
if [ -n "$NVCC" ] && command -v nvidia-smi > /dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q GPU; then
    build cuda "$NVCC" -O3 -use_fast_math -arch=sm_90 -I"$ROOT/examples/nbody" $PNG_FLAGS \
        "$ROOT/bench/nbody_cuda.cu" "$COMMON" $PNG_LIBS \
        -o "$BIN/nbody_cuda" && HAVE_CUDA=1
else
    note "no nvcc or no NVIDIA GPU: skipping the CUDA baseline"
fi
LIBDIR=$ROOT/build/lib
if [ -e "$LIBDIR/libstdcl.so" ]; then
    ok=1
    for p in nbody nbody_multi; do
        build $p $CC -std=gnu99 -O2 -fopenmp -I"$ROOT/include" $PNG_FLAGS \
            "$ROOT/examples/nbody/$p.c" "$ROOT/examples/nbody/nbody_common.c" \
            "$ROOT/examples/nbody/nbody_stdcl.c" \
            -o "$BIN/$p" -L"$LIBDIR" -Wl,-rpath,"$LIBDIR" -lstdcl -lOpenCL $PNG_LIBS -lm || ok=0
    done
    [ $ok = 1 ] && HAVE_STDCL=1
else
    note "no $LIBDIR/libstdcl.so (build the library first: make): skipping stdcl rows"
fi

# ---------------------------------------------------------------------------
# Devices
# ---------------------------------------------------------------------------
HAVE_CLGPU=0
NGPU=0
if [ $HAVE_RAW = 1 ] && "$BIN/nbody_raw_opencl" -c gpu -n 4096 -s 1 -q > /dev/null 2>> "$LOG"; then
    HAVE_CLGPU=1
    NGPU=$( (clinfo -l 2>/dev/null || true) | awk '/Platform #/{p=$0} /Device #/{ if (tolower(p) ~ /nvidia|cuda/) n++ } END{print n+0}')
    [ "$NGPU" -gt 0 ] || NGPU=1
else
    note "no OpenCL GPU: CPU rows only"
fi
[ $DO_GPU = 0 ] && HAVE_CLGPU=0
[ "$MAXDEV" -gt 0 ] && [ "$NGPU" -gt "$MAXDEV" ] && NGPU=$MAXDEV
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "host: $(uname -n), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
    command -v nvidia-smi > /dev/null 2>&1 && nvidia-smi -L 2>/dev/null
    command -v clinfo > /dev/null 2>&1 && clinfo -l 2>/dev/null
} >> "$LOG"

# ---------------------------------------------------------------------------
# Runs
# ---------------------------------------------------------------------------
# steps_for N RATE: about 1.5 s of timed work at RATE interactions/s, in
# 5 bursts (the programs report the median burst).
steps_for() {
    awk -v n="$1" -v r="$2" -v q="$QUICK" 'BEGIN{
        s = int(1.5 * r / (n * n)); if (q) s = int(s / 5);
        if (s < 5) s = 5; if (s > 200) s = 200; b = int(s / 5); if (b < 1) b = 1;
        print s, b }'
}

# run TAG COMMAND...: runs, keeps its RESULT line (tagged), logs the rest.
run() {
    local tag=$1
    shift
    echo "+ $*" >> "$LOG"
    local out
    out=$("$@" 2>> "$LOG")
    local rc=$?
    echo "$out" >> "$LOG"
    local line
    line=$(echo "$out" | grep '^RESULT' | tail -1)
    if [ -n "$line" ]; then
        echo "$line tag=$tag" >> "$RES"
    fi
    if [ $rc -ne 0 ]; then
        note "exit status $rc: $*"
    fi
    echo "$out" | grep -E '^check' >&2
    return $rc
}

# run_opts: "wg=128 -D X" -> sets W and O
split_variant() {
    W=""
    O="$1"
    case "$1" in
    wg=*) W=${1%% *}; W=${W#wg=}; O=${1#wg=$W}; O=${O# } ;;
    esac
}

declare -A BEST_W BEST_O
if [ $SWEEP = 1 ] && [ $HAVE_CLGPU = 1 ]; then
    echo "== sweep of the GPU kernel variants (plain OpenCL baseline, one GPU)" >&2
    IFS=';' read -r -a VLIST <<< "$VARIANTS"
    for n in $GPU_SIZES; do
        read -r s b <<< "$(steps_for "$n" 2e12)"
        best=0
        for v in "${VLIST[@]}"; do
            v=$(echo "$v" | sed 's/^ *//; s/ *$//')
            split_variant "$v"
            line=$("$BIN/nbody_raw_opencl" -c gpu -n "$n" -s "$s" -b "$b" --bench -q \
                   ${W:+-w "$W"} -o "$O $EXTRA_OPTS" 2>> "$LOG" | grep '^RESULT')
            ips=$(echo "$line" | sed -n 's/.*interactions_per_s=\([^ ]*\).*/\1/p')
            printf "sweep n=%-8s %-62s %s\n" "$n" "[${v}]" "${ips:-failed}" | tee -a "$LOG" >&2
            if [ -n "$ips" ] && awk -v a="$ips" -v b="$best" 'BEGIN{exit !(a > b)}'; then
                best=$ips
                BEST_W[$n]=$W
                BEST_O[$n]=$O
            fi
        done
        echo "sweep n=$n best: wg=${BEST_W[$n]:-default} ${BEST_O[$n]:-} -> $best" | tee -a "$LOG" >&2
    done
fi

if [ $HAVE_CLGPU = 1 ]; then
    echo "== GPU runs" >&2
    for n in $GPU_SIZES; do
        read -r s b <<< "$(steps_for "$n" 2e12)"
        W=${BEST_W[$n]:-}
        O="${BEST_O[$n]:-} $EXTRA_OPTS"
        common=(-n "$n" -s "$s" -b "$b" --bench -q ${W:+-w "$W"})
        run gpu "$BIN/nbody_raw_opencl" -c gpu "${common[@]}" -o "$O"
        if [ $HAVE_STDCL = 1 ]; then
            run gpu "$BIN/nbody" -c gpu "${common[@]}" -o "$O"
            k=1
            while [ $k -le "$NGPU" ]; do
                run gpu "$BIN/nbody_multi" -c gpu -d $k "${common[@]}" -o "$O"
                k=$((k * 2))
            done
            if [ "$NGPU" -gt 2 ] && [ $((NGPU & (NGPU - 1))) -ne 0 ]; then
                run gpu "$BIN/nbody_multi" -c gpu -d "$NGPU" "${common[@]}" -o "$O"
            fi
        fi
        [ $HAVE_CUDA = 1 ] && run gpu "$BIN/nbody_cuda" "${common[@]}"
    done
    if [ $CHECK = 1 ]; then
        echo "== GPU checks" >&2
        W=${BEST_W[${GPU_SIZES%% *}]:-}
        O="${BEST_O[${GPU_SIZES%% *}]:-} $EXTRA_OPTS"
        run check "$BIN/nbody_raw_opencl" -c gpu --check -q ${W:+-w "$W"} -o "$O"
        if [ $HAVE_STDCL = 1 ]; then
            run check "$BIN/nbody" -c gpu --check -q ${W:+-w "$W"} -o "$O"
            run check "$BIN/nbody_multi" -c gpu --check -q ${W:+-w "$W"} -o "$O"
        fi
        [ $HAVE_CUDA = 1 ] && run check "$BIN/nbody_cuda" --check -q
    fi
fi

if [ $DO_CPU = 1 ]; then
    echo "== CPU runs" >&2
    for n in $CPU_SIZES; do
        read -r s b <<< "$(steps_for "$n" 4e9)"
        common=(-n "$n" -s "$s" -b "$b" --bench -q)
        [ $HAVE_RAW = 1 ] && run cpu "$BIN/nbody_raw_opencl" -c cpu "${common[@]}" -o "$EXTRA_OPTS"
        if [ $HAVE_STDCL = 1 ]; then
            run cpu "$BIN/nbody" -c cpu "${common[@]}" -o "$EXTRA_OPTS"
        fi
        [ $HAVE_NATIVE = 1 ] && run cpu "$BIN/nbody_native" "${common[@]}"
    done
    if [ $CHECK = 1 ]; then
        echo "== CPU checks" >&2
        [ $HAVE_RAW = 1 ] && run check "$BIN/nbody_raw_opencl" -c cpu --check -q -o "$EXTRA_OPTS"
        if [ $HAVE_STDCL = 1 ]; then
            run check "$BIN/nbody" -c cpu --check -q -o "$EXTRA_OPTS"
            run check "$BIN/nbody_multi" -c cpu --check -q -o "$EXTRA_OPTS"
        fi
        [ $HAVE_NATIVE = 1 ] && run check "$BIN/nbody_native" --check -q
    fi
fi

# ---------------------------------------------------------------------------
# Table
# ---------------------------------------------------------------------------
echo
awk '
function field(name,   i, kv) {
    for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == name) return substr($i, length(name) + 2) }
    return ""
}
$1 == "RESULT" && field("tag") != "check" {
    r++
    impl[r] = field("impl"); n[r] = field("n"); dev[r] = field("devices")
    ms[r] = field("ms_per_step"); ips[r] = field("interactions_per_s")
    where[r] = field("device"); wg[r] = field("wg"); bpw[r] = field("bpw")
    key = where[r] SUBSEP n[r]
    if (impl[r] == "opencl") base_cl[key] = ips[r]
    if (impl[r] == "native") base_nat[key] = ips[r]
    if (impl[r] == "cuda") base_cuda["gpu" SUBSEP n[r]] = ips[r]
    if (impl[r] == "stdcl") base_one[key] = ips[r]
}
function ratio(a, b) { return b > 0 ? sprintf("%.3f", a / b) : "-" }
END {
    printf "%-6s %-12s %9s %4s %11s %13s %9s %9s %9s %9s %9s\n",
        "where", "impl", "N", "devs", "ms/step", "interact/s", "GFLOPS", "/opencl", "/native", "/cuda", "/1dev"
    for (i = 1; i <= r; i++) {
        key = where[i] SUBSEP n[i]
        printf "%-6s %-12s %9s %4s %11.4f %13.4e %9.1f %9s %9s %9s %9s\n",
            where[i], impl[i], n[i], dev[i], ms[i], ips[i], ips[i] * 20e-9,
            ratio(ips[i], base_cl[key]), ratio(ips[i], base_nat[key]),
            ratio(ips[i], base_cuda["gpu" SUBSEP n[i]]),
            (impl[i] == "stdcl_multi" ? ratio(ips[i], base_one[key]) : "-")
    }
}' "$RES"
echo
echo "(GFLOPS at 20 flops/interaction; /X = interactions/s relative to X at the same N"
echo " and device type; /1dev = nbody_multi over the one-device stdcl nbody."
echo " RESULT lines: $RES; build and run log: $LOG)"
