#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# mpi_gpu_run.sh: NBody across MPI ranks against one process on several GPUs, in
# one call on the GPU machine (2 or 4 GPUs, Open MPI).  Builds with the project's
# own ./configure && make (the recipe of gpu_common.sh; carry `configure` when
# the machine has no autoconf), then for each N and each count g of GPUS runs,
# REPEAT times interleaved:
#   nbody_multi -d g          one process, g GPUs (g = 1: the baseline)
#   mpirun -np g nbody_mpi    g ranks, one GPU each (STDGPU_LOCK=auto STDGPU_MAX_NDEV=1)
# and prints one table (best run of each: interactions/s, ratio to one GPU, and
# the ranks against nbody_multi on as many GPUs).  Also --check on two ranks and
# stdclinfo under mpirun (which GPU each rank leased).  Results: $OUT (default
# /tmp/mpi-gpu-out): table.txt, results.txt (RESULT lines), log.txt.
#
#   bench/mpi_gpu_run.sh                      # GPU: N = 131072 1048576
#   CTX=cpu SIZES=4096 RATE=2e9 bench/mpi_gpu_run.sh   # the same on PoCL
#
# GPUS (the device counts, default "1 2"; "1 2 4" on a four-GPU machine),
# SIZES, REPEAT (2), CTX (gpu|cpu), RATE (interactions/s that sizes the steps:
# about 1.5 s of timed work per run), MPIRUN_ARGS (default --bind-to none),
# SKIP_BUILD=1 (use build/ as it is).
set -u
. "$(dirname "$0")/gpu_common.sh"
RES=${OUT:-/tmp/mpi-gpu-out}
mkdir -p "$RES"
CTX=${CTX:-gpu}
SIZES=${SIZES:-131072 1048576}
GPUS=${GPUS:-1 2}
REPEAT=${REPEAT:-2}
RATE=${RATE:-2e12}
X=$(echo "$CTX" | tr a-z A-Z)
LOG=$RES/log.txt
: > "$LOG"
: > "$RES/results.txt"

[ "$CTX" = gpu ] && gpu_icd
gpu_caches
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# MPIRUN_ARGS is a list of words: split on purpose.
# shellcheck disable=SC2206
MPIRUN=(mpirun --oversubscribe ${MPIRUN_ARGS:---bind-to none})

{
    gpu_machine
    mpirun --version 2>&1 | head -1
} > "$RES/machine.txt" 2>&1
cat "$RES/machine.txt"

if [ "${SKIP_BUILD:-0}" != 1 ]; then
    [ -x configure ] || command -v autoconf > /dev/null ||
        { echo "no configure and no autoconf: carry configure" >&2; exit 1; }
    gpu_build lib tools examples >> "$LOG" 2>&1 || { tail -30 "$LOG"; echo "build failed" >&2; exit 1; }
fi
grep -q 'HAVE_MPI = 1' config.mk || { echo "configure found no working mpicc" >&2; exit 1; }
NB=$ROOT/build/examples/nbody
NM=$ROOT/build/examples/nbody_mpi
LEASE=(-x "STD${X}_LOCK=auto" -x "STD${X}_MAX_NDEV=1")

echo "== stdclinfo under mpirun -np 2 (each rank's lease)" | tee -a "$LOG"
"${MPIRUN[@]}" -np 2 "${LEASE[@]}" sh -c "$ROOT/build/bin/stdclinfo; sleep 1" 2>&1 |
    grep -E '^rank|why: std'"$CTX"'|^std'"$CTX"': none|warning' | tee "$RES/stdclinfo.txt"

echo "== --check on two ranks" | tee -a "$LOG"
(cd "$NM" && "${MPIRUN[@]}" -np 2 "${LEASE[@]}" ./nbody_mpi -c "$CTX" --check -q) 2>&1 |
    tee "$RES/check.txt" | grep -E '^check'

# run TAG COMMAND...: the RESULT line, tagged; the rest to the log.
run() {
    local tag=$1 out
    shift
    echo "+ $*" >> "$LOG"
    out=$("$@" 2>> "$LOG")
    echo "$out" >> "$LOG"
    local line
    line=$(echo "$out" | grep '^RESULT' | head -1)
    if [ -n "$line" ]; then echo "tag=$tag $line" | tee -a "$RES/results.txt"; else echo "tag=$tag FAILED"; fi
}

for n in $SIZES; do
    read -r s b <<< "$(awk -v n="$n" -v r="$RATE" 'BEGIN{ s = int(1.5 * r / (n * n));
        if (s < 5) s = 5; if (s > 200) s = 200; b = int(s / 5); if (b < 1) b = 1; print s, b }')"
    common=(-c "$CTX" -n "$n" -s "$s" -b "$b" --bench -q)
    for rep in $(seq "$REPEAT"); do
        echo "== N=$n, steps $s in bursts of $b, run $rep"
        for g in $GPUS; do
            (cd "$NB" && run "multi$g" ./nbody_multi -d "$g" "${common[@]}")
            (cd "$NM" && run "mpi$g" "${MPIRUN[@]}" -np "$g" "${LEASE[@]}" ./nbody_mpi "${common[@]}")
        done
    done
done

# The table: best (lowest ms/step) run of each program at each N.
awk -v gpus="$GPUS" '
    function val(key,   i, kv) { for (i = 1; i <= NF; i++) { split($i, kv, "="); if (kv[1] == key) return kv[2] } return "" }
    /RESULT/ {
        t = val("tag"); n = val("n"); ms = val("ms_per_step") + 0
        if (!((t, n) in best) || ms < best[t, n]) { best[t, n] = ms; ips[t, n] = val("interactions_per_s") }
        if (!(n in seen)) { seen[n] = 1; order[++nn] = n }
    }
    END {
        ng = split(gpus, gs, " ")
        print "| program | N | GPUs | ranks | ms/step | interactions/s | / 1 GPU | / nbody_multi, as many GPUs |"
        print "|---|---:|---:|---:|---:|---:|---:|---:|"
        for (i = 1; i <= nn; i++) {
            n = order[i]; base = best["multi1", n]
            for (j = 1; j <= ng; j++) for (k = 0; k < 2; k++) {
                g = gs[j]; t = (k ? "mpi" : "multi") g
                lab = k ? sprintf("nbody_mpi, %d rank(s), 1 GPU each", g) : sprintf("nbody_multi, 1 process, %d GPU(s)", g)
                if (!((t, n) in best)) { printf "| %s | %s | %d | %d | FAILED | | | |\n", lab, n, g, k ? g : 1; continue }
                x = base > 0 ? sprintf("%.3f", base / best[t, n]) : ""
                y = (k && (("multi" g, n) in best)) ? sprintf("%.3f", best["multi" g, n] / best[t, n]) : ""
                printf "| %s | %s | %d | %d | %.4f | %s | %s | %s |\n", lab, n, g, k ? g : 1, best[t, n], ips[t, n], x, y
            }
        }
    }' "$RES/results.txt" | tee "$RES/table.txt"
