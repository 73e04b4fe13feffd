#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""mpi_scaling_model.py: the scaling model of BENCHMARKS.md for nbody_mpi on P GPUs
(one rank per GPU, ranks on different hosts), from figures measured on one host.

Per step, on each of P GPUs, with N bodies, R interactions/s per GPU:
  compute   T_c   = N^2 / (P R)                  (all blocks' kernels)
  own block T_own = (N/P)^2 / R                  (runs during the exchange)
  exchange  T_x   = 16 N (P-1)/P / B  + ceil(log2 P) a  + 16 N / M
                    (Allgather of 16-byte bodies over links of B bytes/s with
                    latency a per round, plus the host copies in and out of the
                    exchange buffer at M bytes/s)
  transfers T_io  = k 16 N (P-1)/P + P l          (host <-> GPU copies of the other
                    blocks and one launch per source block, on the GPU's queue:
                    not hidden; k fitted from the two-rank measurement)
  step      T     = T_c + T_io + max(0, T_x - T_own)
  efficiency E    = T_c / T
The exchange is hidden while T_x <= T_own, i.e. (bandwidth term alone)
  N >= 16 P (P-1) R / B.

Inputs (measured on the GPU machine by bench/mpi_gpu_run.sh):
  --rate R     one GPU's interactions/s at large N (nbody_multi -d 1)
  --n N --t1 T1 --t2 T2 [--t4 T4]
               ms/step at one N on one GPU and on two (and four) ranks, one GPU
               each: k is the least-squares fit of
               T_P - T1/P - P l = k 16 N (P-1)/P  over the P measured, and the
               model's T_P is printed beside each measured one
Assumptions (not measured; override): --latency a (5 us), --launch l (8 us),
--memcpy M (10 GB/s).  The kernel keeps its rate only while each GPU holds enough
bodies to fill it; below --nsat bodies per GPU (65536: the smallest size measured
at full rate) the model scales R down in proportion, an extrapolation.
"""
import argparse
import math


def model(N, P, R, B, k, a, l, M, nsat):
    Rp = R * min(1.0, (N / P) / nsat) if nsat else R
    t_c = N * N / (P * Rp)
    t_own = (N / P) ** 2 / Rp
    t_x = 16 * N * (P - 1) / P / B + math.ceil(math.log2(P)) * a + 16 * N / M if P > 1 else 0
    t_io = k * 16 * N * (P - 1) / P + P * l if P > 1 else 0
    t = t_c + t_io + max(0.0, t_x - t_own)
    return t_c, t_own, t_x, t_io, t, (N * N / R / P) / t


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rate", type=float, required=True)
    ap.add_argument("--n", type=float, required=True)
    ap.add_argument("--t1", type=float, required=True, help="ms/step, one GPU, at --n")
    ap.add_argument("--t2", type=float, required=True, help="ms/step, two ranks, at --n")
    ap.add_argument("--t4", type=float, default=None, help="ms/step, four ranks, at --n")
    ap.add_argument("--latency", type=float, default=5e-6)
    ap.add_argument("--launch", type=float, default=8e-6)
    ap.add_argument("--memcpy", type=float, default=10e9)
    ap.add_argument("--nsat", type=float, default=65536)
    ap.add_argument("--sizes", default="131072,1048576,8388608,67108864")
    ap.add_argument("--gpus", default="2,4,8,64,512")
    o = ap.parse_args()

    n, t1 = o.n, o.t1 * 1e-3
    measured = {2: o.t2 * 1e-3}
    if o.t4 is not None:
        measured[4] = o.t4 * 1e-3
    # Least squares through the origin: y_P = k x_P.
    xs = {P: 16 * n * (P - 1) / P for P in measured}
    ys = {P: measured[P] - t1 / P - P * o.launch for P in measured}
    k = max(0.0, sum(xs[P] * ys[P] for P in measured) / sum(xs[P] ** 2 for P in measured))
    print(f"fitted: host<->GPU cost k = {k * 1e12:.1f} ps/byte ({1 / k / 1e9 if k else float('inf'):.1f} GB/s "
          f"effective) from N = {n:.0f}: one GPU {o.t1} ms, " +
          ", ".join(f"{P} ranks {measured[P] * 1e3:g} ms" for P in measured) + "\n")
    print("Measured against the model on one host (no network: T_x = 0):\n")
    print("| GPUs | measured ms/step | model ms/step | measured / 1 GPU | model / 1 GPU |")
    print("|---:|---:|---:|---:|---:|")
    print(f"| 1 | {o.t1:.4g} | {o.t1:.4g} | 1.000 | 1.000 |")
    for P in measured:
        t_model = t1 / P + k * 16 * n * (P - 1) / P + P * o.launch
        print(f"| {P} | {measured[P] * 1e3:.4g} | {t_model * 1e3:.4g} | {t1 / measured[P]:.3f} | "
              f"{t1 / t_model:.3f} |")
    print()
    links = [("100 Gb/s", 100e9 / 8), ("400 Gb/s", 400e9 / 8)]
    sizes = [float(s) for s in o.sizes.split(",")]
    gpus = [int(p) for p in o.gpus.split(",")]

    print("Smallest N whose exchange hides behind the own-block kernel (T_x <= T_own):\n")
    print("| GPUs | " + " | ".join(f"N at {name}" for name, _ in links) + " |")
    print("|---:|" + "---:|" * len(links))
    for P in gpus:
        row = []
        for _, B in links:
            lo, hi = 1.0, 1e12  # bisection on N (T_x - T_own is negative past one root)
            for _ in range(200):
                mid = math.sqrt(lo * hi)
                _, t_own, t_x, *_ = model(mid, P, o.rate, B, k, o.latency, o.launch, o.memcpy, 0)
                lo, hi = (lo, mid) if t_x <= t_own else (mid, hi)
            row.append(f"{hi:.3g}")
        print(f"| {P} | " + " | ".join(row) + " |")

    print("\nPredicted efficiency E = T_c / T (and ms/step), per link speed:\n")
    print("| N | GPUs | bodies/GPU | T_c ms | T_own ms | " +
          " | ".join(f"T_x ms {name} | E {name}" for name, _ in links) + " | T_io ms |")
    print("|---:|---:|---:|---:|---:|" + "---:|---:|" * len(links) + "---:|")
    for N in sizes:
        for P in gpus:
            cells = []
            for _, B in links:
                t_c, t_own, t_x, t_io, t, e = model(N, P, o.rate, B, k, o.latency, o.launch, o.memcpy, o.nsat)
                cells += [f"{t_x * 1e3:.3g}", f"{e:.2f}"]
            print(f"| {N:.0f} | {P} | {N / P:.0f} | {t_c * 1e3:.4g} | {t_own * 1e3:.3g} | " + " | ".join(cells) +
                  f" | {t_io * 1e3:.3g} |")


if __name__ == "__main__":
    main()
