// SPDX-License-Identifier: MIT
// launch_cuda.cu: the CUDA anchor of bench_core's launch rows: the same empty
// kernel of six arguments (two pointers, four scalars), one block of one
// thread, launched the three ways of rows (1s), (1w) and (1t):
//
//   stream  n launches back to back on one stream, then one cudaStreamSynchronize
//   wait    each launch followed by cudaStreamSynchronize
//   step    three launches, then cudaStreamSynchronize, n/3 times
//
//   build/bench/launch_cuda [-b batches] [-t ms]
//
// Each row is timed in batches (default 31) of about -t ms each (default 10;
// the launch count of a batch is calibrated first); the figure is the median
// over batches of the time per launch, and its 25th-75th percentile.  The
// first launches (module load) run before any timing.  Output: one line per
// row, "RESULT impl=cuda row=NAME us_per_launch=X p25=Y p75=Z launches=N".
// Build: make bench-cuda.  Exit status: 0; 1 on a CUDA failure; 2 for bad options.
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static const char* prog = "launch_cuda";

#define CUDA_CHECK(call)                                                                                   \
    do {                                                                                                   \
        cudaError_t e_ = (call);                                                                           \
        if (e_ != cudaSuccess) {                                                                           \
            fprintf(stderr, "%s: %s failed: %s\n", prog, #call, cudaGetErrorString(e_));                   \
            exit(1);                                                                                       \
        }                                                                                                  \
    } while (0)

__global__ void six(float* a, float* b, float s, int n, unsigned m, float t) {}

static float* d_small;
static float* d_big;
static cudaStream_t stream;

static void launch(int k)
{
    six<<<1, 1, 0, stream>>>(d_small, d_big, 1.5f, k, 7u, 0.5f);
}

// n launches the row's way; returns the launches made.
static long run_row(int row, long n)
{
    if (row == 0) {
        for (long i = 0; i < n; ++i) launch(int(i));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        return n;
    }
    if (row == 1) {
        for (long i = 0; i < n; ++i) {
            launch(int(i));
            CUDA_CHECK(cudaStreamSynchronize(stream));
        }
        return n;
    }
    long steps = std::max(1L, n / 3);
    for (long i = 0; i < steps; ++i) {
        for (int j = 0; j < 3; ++j) launch(int(3 * i + j));
        CUDA_CHECK(cudaStreamSynchronize(stream));
    }
    return 3 * steps;
}

static double seconds_of(int row, long n, long* made)
{
    auto t0 = std::chrono::steady_clock::now();
    *made = run_row(row, n);
    auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double>(t1 - t0).count();
}

int main(int argc, char** argv)
{
    int batches = 31;
    double batch_ms = 10;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-b") && i + 1 < argc)
            batches = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-t") && i + 1 < argc)
            batch_ms = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [-b batches] [-t ms]\n", prog);
            return 2;
        }
    }
    if (batches < 1 || !(batch_ms > 0)) {
        fprintf(stderr, "%s: -b and -t must be positive\n", prog);
        return 2;
    }
    CUDA_CHECK(cudaMalloc(&d_small, 1024 * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&d_big, 1 << 20));
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    long made = 0;
    for (int row = 0; row < 3; ++row) seconds_of(row, 100, &made);  // module load, first launches
    CUDA_CHECK(cudaGetLastError());

    static const char* const names[3] = {"stream", "wait", "step"};
    for (int row = 0; row < 3; ++row) {
        long n = 64;  // calibrate: a batch of about batch_ms
        while (true) {
            double s = seconds_of(row, n, &made);
            if (s * 1e3 >= batch_ms / 4 || n > (1L << 24)) {
                n = std::max(3L, long(double(n) * batch_ms / (s * 1e3)));
                break;
            }
            n *= 4;
        }
        std::vector<double> us;
        for (int b = 0; b < batches; ++b) {
            double s = seconds_of(row, n, &made);
            us.push_back(s * 1e6 / double(made));
        }
        CUDA_CHECK(cudaGetLastError());
        std::sort(us.begin(), us.end());
        auto at = [&](double q) { return us[size_t(q * double(us.size() - 1) + 0.5)]; };
        printf("RESULT impl=cuda row=%s us_per_launch=%.3f p25=%.3f p75=%.3f launches=%ld\n", names[row], at(0.5),
               at(0.25), at(0.75), made);
    }
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(d_small));
    CUDA_CHECK(cudaFree(d_big));
    return 0;
}
