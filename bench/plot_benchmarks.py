#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""plot_benchmarks.py: the plots of BENCHMARKS.md (NBody, launch costs).

    python3 bench/plot_benchmarks.py [--out DIR]      (from the top of the source tree)

writes DIR/nbody_one_gpu.png, DIR/nbody_scaling.png and DIR/launch_costs.png
(DIR: docs/).  It measures
nothing: the numbers below are copied from BENCHMARKS.md, each table with a comment
naming the BENCHMARKS.md table it comes from.  Needs matplotlib (Debian:
python3-matplotlib).
"""
import argparse
import os
import sys

try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
except ImportError:
    sys.exit("plot_benchmarks.py: needs matplotlib (apt-get install python3-matplotlib)")

# BENCHMARKS.md, "Table 2.1. NBody on the H200 x2 host.": the
# one-GPU rows, interactions/s per N for each implementation.
ONE_GPU_N = [131072, 262144, 1048576]
ONE_GPU = {
    # label: interactions/s at each N of ONE_GPU_N
    "libstdcl (examples/nbody/nbody)": [1.966e12, 1.984e12, 2.030e12],
    "raw OpenCL, same kernel (bench/nbody_raw_opencl)": [1.966e12, 1.985e12, 2.030e12],
    "CUDA, tiled port (bench/nbody_cuda.cu)": [1.560e12, 1.633e12, 1.689e12],
}
ONE_GPU_STYLE = {
    "libstdcl (examples/nbody/nbody)": dict(color="tab:blue", marker="o", markersize=9, linestyle="-"),
    "raw OpenCL, same kernel (bench/nbody_raw_opencl)": dict(color="tab:orange", marker="x", markersize=9,
                                                              linestyle="--", markeredgewidth=2),
    "CUDA, tiled port (bench/nbody_cuda.cu)": dict(color="tab:green", marker="s", markersize=7, linestyle="-"),
}

# Speed-up over one GPU (the "/ 1 GPU" or "two / one" column of each table), by N.
# The speed-ups are strings exactly as BENCHMARKS.md prints them (the labels show them).
SCALING = [
    # (label, style, label offset in points, {N: ([GPUs], [speed-up])})
    # BENCHMARKS.md, "Table 2.2. NBody on the H200 x4 host.", column "/ 1 GPU"
    ("nbody_multi, one process (H200 x4 host, 2026-11-22)",
     dict(color="tab:blue", marker="o", linestyle="-"), (8, -14),
     {131072: ([1, 2, 4], ["1", "1.668", "2.704"]),
      1048576: ([1, 2, 4], ["1", "1.949", "3.821"])}),
    # BENCHMARKS.md, "Table 2.3. nbody_multi on one and two H200s.", the
    # first three rows ("this tree"), column "two / one"
    ("nbody_multi, one process (H200 x2 host, 2026-11-23)",
     dict(color="tab:purple", marker="D", linestyle="-"), (-40, 6),
     {131072: ([1, 2], ["1", "1.94"]),
      1048576: ([1, 2], ["1", "1.96"])}),
    # BENCHMARKS.md, "Table 4.4. One process and MPI ranks on one, two and four
    # H200s.", column "/ 1 GPU"
    ("nbody_multi, one process (H200 x4 host, 2026-11-27)",
     dict(color="tab:cyan", marker="o", linestyle="-", markersize=8), (8, 6),
     {131072: ([1, 2, 4], ["1", "1.944", "3.717"]),
      1048576: ([1, 2, 4], ["1", "1.963", "3.901"])}),
    ("nbody_mpi, one rank per GPU (H200 x4 host, 2026-11-27)",
     dict(color="tab:olive", marker="v", linestyle=":", markersize=9), (8, -16),
     {131072: ([1, 2, 4], ["1", "1.944", "3.630"]),
      1048576: ([1, 2, 4], ["1", "1.963", "3.901"])}),
    # BENCHMARKS.md, "Table 4.1. Two ranks against one process on two H200s.",
    # rows "nbody_mpi, 2 ranks, 1 GPU each", column "/ 1 GPU"
    ("nbody_mpi, one rank per GPU (H200 x2 host, 2026-11-23)",
     dict(color="tab:red", marker="^", linestyle="--", markersize=9), (8, 2),
     {131072: ([1, 2], ["1", "1.755"]),
      1048576: ([1, 2], ["1", "1.947"])}),
]


# BENCHMARKS.md, "Table 1.15. What a launch costs, per launch": microseconds per
# launch on one H200 for each way of launching, by pattern (None: not a way that
# pattern has).
LAUNCH_PATTERNS = ["stream: launches back to back,\none wait", "each launch waited for",
                   "time step: three launches,\none wait"]
LAUNCH_COSTS = [
    # (label, color, us per launch for each pattern)
    ("raw OpenCL, no events", "tab:orange", [4.67, 9.81, 8.66]),
    ("raw OpenCL, an event per launch kept to the wait", "tab:brown", [6.30, None, 11.27]),
    ("libstdcl, CL_EVENT_NOWAIT (the default form)", "tab:blue", [7.01, 10.50, 11.95]),
    ("libstdcl, CL_EVENT_NOWAIT | CL_EVENT_NOEVENT", "tab:cyan", [5.00, None, 9.18]),
    ("CUDA, <<<1, 1>>> on a stream", "tab:green", [3.71, 8.93, 5.44]),
]


def plot_launch_costs(path):
    fig, ax = plt.subplots(figsize=(10, 5.4))
    n = len(LAUNCH_COSTS)
    width = 0.8 / n
    for i, (label, color, values) in enumerate(LAUNCH_COSTS):
        for j, v in enumerate(values):
            if v is None:
                continue
            x = j + (i - (n - 1) / 2) * width
            ax.bar(x, v, width, color=color, label=label if j == 0 or (j == 1 and values[0] is None) else None)
            ax.annotate(f"{v:.1f}", (x, v), textcoords="offset points", xytext=(0, 2), ha="center", fontsize=8)
    ax.set_xticks(range(len(LAUNCH_PATTERNS)))
    ax.set_xticklabels(LAUNCH_PATTERNS)
    ax.set_ylabel("microseconds per launch")
    ax.set_ylim(0, 14)
    ax.set_title("What a launch of an empty six-argument kernel costs on one NVIDIA H200\n"
                 "(BENCHMARKS.md Table 1.15; lower is better)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(loc="upper left", fontsize=8.5)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_one_gpu(path):
    fig, ax = plt.subplots(figsize=(8, 5.2))
    for label, rates in ONE_GPU.items():
        ax.plot(ONE_GPU_N, [r / 1e12 for r in rates], label=label, **ONE_GPU_STYLE[label])
    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(ONE_GPU_N))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{int(x):,}"))
    ax.set_xlim(ONE_GPU_N[0] / 1.3, ONE_GPU_N[-1] * 1.3)
    ax.set_ylim(0, 2.5)
    ax.set_xlabel("N (bodies, log scale)")
    ax.set_ylabel("interactions/s (x 1e12)")
    ax.set_title("NBody on one NVIDIA H200: libstdcl, raw OpenCL and CUDA\n"
                 "(BENCHMARKS.md Table 2.1; higher is better)")
    ax.grid(True, alpha=0.3)
    ax.text(0.03, 0.30, "libstdcl = raw OpenCL (1.000) at every N;\nboth 1.20x-1.26x the CUDA port",
            transform=ax.transAxes, fontsize=9, bbox=dict(facecolor="white", edgecolor="lightgray"))
    ax.legend(loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def plot_scaling(path):
    sizes = [131072, 1048576]
    fig, axes = plt.subplots(1, len(sizes), figsize=(11, 5), sharey=True)
    for ax, n in zip(axes, sizes):
        ax.plot([1, 2, 4], [1, 2, 4], color="gray", linestyle=":", linewidth=2, label="ideal (speed-up = GPUs)")
        for label, style, offset, data in SCALING:
            if n in data:
                gpus, text = data[n]
                speedup = [float(t) for t in text]
                ax.plot(gpus, speedup, label=label, **style)
                for g, v, t in zip(gpus[1:], speedup[1:], text[1:]):
                    ax.annotate(f"{t}x", (g, v), textcoords="offset points", xytext=offset,
                                fontsize=9, color=style["color"])
        ax.set_xticks([1, 2, 4])
        ax.set_xlim(0.8, 4.6)
        ax.set_ylim(0.8, 4.3)
        ax.set_xlabel("number of GPUs (NVIDIA H200)")
        ax.set_title(f"N = {n:,} bodies")
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("speed-up over one GPU (x)")
    axes[0].legend(loc="upper left", fontsize=8.5)
    fig.suptitle("NBody speed-up against the number of GPUs (BENCHMARKS.md Tables 2.2, 2.3, 4.1 and 4.4)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description="Plot the figures of BENCHMARKS.md.")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap.add_argument("--out", default=os.path.join(root, "docs"), help="output folder (default: docs/)")
    o = ap.parse_args()
    os.makedirs(o.out, exist_ok=True)
    for name, fn in (("nbody_one_gpu.png", plot_one_gpu), ("nbody_scaling.png", plot_scaling),
                     ("launch_costs.png", plot_launch_costs)):
        path = os.path.join(o.out, name)
        fn(path)
        print(path)


if __name__ == "__main__":
    main()
