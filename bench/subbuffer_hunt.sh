#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# subbuffer_hunt.sh: on the GPU machine, the raw-OpenCL sub-buffer program
# (bench/subbuffer_threads, no libstdcl) many times, to count the faults of
# NVIDIA's driver (BENCHMARKS.md, Table 10.3).  Compiles the program alone
# (gcc, -lOpenCL: seconds, no tree build), then for each variant in VARIANTS
# runs it 8 processes at a time, 16 threads and 3 s each, for SECS_EACH
# seconds (default 120):
#   raw      one queue per device, kernels of each thread's own
#   raw-k    -k: kernels shared by the threads, as libstdcl shares them
#   raw-x    -x: a transfer queue per device, as libstdcl's STDCL_OVERLAP
#   raw-kx   -k -x
#   raw-L    -L: one lock around sub-buffer creation, launches and releases
#   raw-n    -n: no sub-buffers (the buffer with element offsets)
#   raw-kL, raw-nL   -k -L, -n -L
# Writes $OUT/hunt.txt (per variant: runs and exit statuses; 139 is a
# segmentation fault) and $OUT/hunt.tgz (the failing runs' output).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
RES=${OUT:-/tmp/gpu-out}
EACH=${SECS_EACH:-120}
work=/tmp/subbuffer-hunt
rm -rf "$work" && mkdir -p "$work" "$RES" || exit 1
[ -w /etc/OpenCL/vendors ] && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
gcc -O2 -o "$work/sbt" "$top/bench/subbuffer_threads.c" -lOpenCL -lpthread || exit 1
{
    date -u
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
    git -C "$top" log --oneline -1 2>/dev/null
} > "$RES/hunt.txt"
for v in ${VARIANTS:-raw raw-x raw-L}; do
    case $v in
        raw) flags= ;;
        raw-k) flags=-k ;;
        raw-x) flags=-x ;;
        raw-kx) flags="-k -x" ;;
        raw-L) flags=-L ;;
        raw-n) flags=-n ;;
        raw-kL) flags="-k -L" ;;
        raw-nL) flags="-n -L" ;;
        *) echo "subbuffer_hunt: unknown variant $v" >&2; exit 2 ;;
    esac
    end=$(($(date +%s) + EACH))
    i=0
    : > "$work/$v.runs"
    while [ "$(date +%s)" -lt $end ]; do
        for _ in 1 2 3 4 5 6 7 8; do
            i=$((i + 1))
            (
                # shellcheck disable=SC2086
                timeout -k 5 60 "$work/sbt" -t 16 -s 3 $flags > "$work/$v.$i.log" 2>&1
                rc=$?
                echo "$i $rc" >> "$work/$v.runs"
                [ $rc -eq 0 ] && rm -f "$work/$v.$i.log"
            ) 2> /dev/null &
        done
        wait
    done
    echo "$v ($flags): $(wc -l < "$work/$v.runs") runs, exit statuses: $(awk '{print $2}' "$work/$v.runs" |
        sort | uniq -c | awk '{printf "%s x%s  ", $2, $1}')" | tee -a "$RES/hunt.txt"
done
tar czf "$RES/hunt.tgz" --exclude=sbt -C /tmp subbuffer-hunt
