// SPDX-License-Identifier: MIT
// cublas_sgemm.cu: cuBLAS's SGEMM on the same problems as bench_blas (C = A B,
// n x n, FP32 with TF32 off), the CUDA baseline for CLBlast on libstdcl memory.
//
//   build/bench/cublas_sgemm [-r reps] [n ...]      (default 1024 4096 8192, 7)
//
// Each row: the median of reps timed runs after two warm-ups, each timed from
// the call to cudaDeviceSynchronize, in TFLOP/s (2 n^3 / time).
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char** argv)
{
    int reps = 7;
    std::vector<size_t> sizes;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "-r") && i + 1 < argc)
            reps = std::atoi(argv[++i]);
        else
            sizes.push_back(std::strtoul(argv[i], nullptr, 10));
    }
    if (sizes.empty()) sizes = {1024, 4096, 8192};
    cudaDeviceProp prop;
    cudaGetDeviceProperties(&prop, 0);
    cublasHandle_t h;
    if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) {
        std::fprintf(stderr, "cublas_sgemm: cublasCreate failed\n");
        return 1;
    }
    cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH);  // plain FP32: no TF32
    std::printf("cublas_sgemm: cuBLAS SGEMM (TF32 off), %s, median of %d\n", prop.name, reps);
    for (size_t n : sizes) {
        size_t bytes = n * n * sizeof(float);
        std::vector<float> host(n * n);
        for (size_t i = 0; i < n * n; i++) host[i] = float((i * 7) % 13) * 0.125f - 0.75f;
        float *a, *b, *c;
        if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess ||
            cudaMalloc(&c, bytes) != cudaSuccess) {
            std::fprintf(stderr, "cublas_sgemm: n = %zu: out of memory\n", n);
            return 1;
        }
        cudaMemcpy(a, host.data(), bytes, cudaMemcpyHostToDevice);
        cudaMemcpy(b, host.data(), bytes, cudaMemcpyHostToDevice);
        const float one = 1.0f, zero = 0.0f;
        std::vector<double> t;
        for (int r = -2; r < reps; r++) {
            auto t0 = std::chrono::steady_clock::now();
            // Row-major C = A B is column-major C^T = B^T A^T.
            cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(n), int(n), &one, b, int(n), a, int(n), &zero, c,
                        int(n));
            cudaDeviceSynchronize();
            double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (r >= 0) t.push_back(s);
        }
        std::sort(t.begin(), t.end());
        double med = t.size() % 2 ? t[t.size() / 2] : 0.5 * (t[t.size() / 2 - 1] + t[t.size() / 2]);
        std::printf("n = %5zu  cuBLAS %7.2f TFLOP/s\n", n, 2.0 * double(n) * double(n) * double(n) / med * 1e-12);
        cudaFree(a);
        cudaFree(b);
        cudaFree(c);
    }
    cublasDestroy(h);
    return 0;
}
