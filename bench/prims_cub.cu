// SPDX-License-Identifier: MIT
// prims_cub.cu: the CUDA anchor of bench_prims: CUB's radix sort, scan and
// reduce on the same data and sizes, with the same RESULT lines (impl=cub, or
// cub-host with --clock host).
//
//   build/bench/prims_cub [--min LOG2] [--max LOG2] [-r reps] [-w warmups] [--clock events|host]
//                         [--ops sort,pairs,scan,reduce,sort64,reduce_host] [--prep none|upload|copy]
//
// Operations, each at n = 2^min, 2^(min+2), ..., 2^max (default 2^10..2^28),
// on device 0:
//   sort    cub::DeviceRadixSort::SortKeys, uint32 keys         Gkeys/s
//   pairs   cub::DeviceRadixSort::SortPairs, uint32 -> uint32   Gkeys/s
//   scan    cub::DeviceScan::InclusiveSum, uint32               GB/s of 2 n 4 bytes
//   reduce  cub::DeviceReduce::Sum, float (result on the device) GB/s of n 4 bytes
//   sort64  cub::DeviceRadixSort::SortKeys, uint64 keys (only with --ops) Gkeys/s
//   reduce_host  reduce, then its result copied to the host (cudaMemcpy): a
//           call that ends with the sum on the host, as clreduce's does; timed
//           with the host's clock around both (only with --ops)     GB/s of n 4 bytes
// The sorts read one array and write another, so every run sorts the
// unsorted input, which stays on the device between runs (--prep none, the
// default).  For a comparison in bench_prims's forms, the sorts' input is
// restored before each run, not timed: --prep upload copies it from the data
// into a host array and from there to the device (cudaMemcpy, as bench_prims's
// upload writes its host copy and clmsyncs it), --prep copy copies it from an
// unsorted copy on the device (cudaMemcpy, device to device, then
// cudaDeviceSynchronize).  Temporary storage is allocated once per (operation, n),
// outside timing.  A time is the median of reps runs (default 7) after
// warmups (default 2), each timed with cudaEvents recorded around the call;
// with --clock host, with the host's clock around the call and a
// cudaStreamSynchronize after it (impl=cub-host), as bench_prims times a
// CL_EVENT_WAIT call: the launches and the host's notice of the end included.
// The data are bench_prims's (splitmix64, the same seeds); the last run's
// result is checked as there (sorted, same keys; values follow their keys,
// stably; the scan equal to a host scan; the sum within 1e-4 of a double
// sum).  A size that does not fit in device memory gets a SKIP line.
// Build: make bench-cuda (NVCCFLAGS="-O3 -std=c++17 -arch=sm_90" for CUB's
// tuning of the card: without -arch, nvcc's default architecture's is used).
// Exit status: 0; 1 on a CUDA failure or a wrong result; 2 for bad options.
#include <cub/cub.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

static const char* prog = "prims_cub";
static bool g_host_clock = false;  // --clock host
enum Prep { PREP_NONE, PREP_UPLOAD, PREP_COPY };
static Prep g_prep = PREP_NONE;  // --prep, for the sorts
static const char* impl_name() { return g_host_clock ? "cub-host" : "cub"; }

#define CUDA_CHECK(call)                                                     \
    do {                                                                     \
        cudaError_t e_ = (call);                                             \
        if (e_ != cudaSuccess) {                                             \
            fprintf(stderr, "%s: %s failed: %s\n", prog, #call,              \
                    cudaGetErrorString(e_));                                 \
            exit(1);                                                         \
        }                                                                    \
    } while (0)

enum Op { OP_SORT, OP_PAIRS, OP_SCAN, OP_REDUCE, OP_SORT64, OP_REDUCE_HOST, OP_COUNT };
static const char* const op_names[OP_COUNT] = {"sort", "pairs", "scan", "reduce", "sort64", "reduce_host"};

// The i-th output (from 0) of splitmix64 seeded with seed: bench_prims.cpp's.
static inline uint64_t splitmix64_at(uint64_t seed, uint64_t i)
{
    uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static const uint64_t SEED_KEYS = 0x5eed0001, SEED_SCAN = 0x5eed0002, SEED_FLOAT = 0x5eed0003;

static double rate_of(Op op, size_t n, double s)
{
    if (op == OP_SORT || op == OP_PAIRS || op == OP_SORT64) return (double)n / s * 1e-9;
    if (op == OP_SCAN) return 2.0 * n * 4 / s * 1e-9;
    return (double)n * 4 / s * 1e-9;
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t m = v.size();
    return m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
}

static void fail(Op op, size_t n, const char* msg)
{
    printf("FAIL op=%s n=%zu impl=cub msg=\"%s\"\n", op_names[op], n, msg);
    exit(1);
}

// cudaMalloc that gives back nullptr (and clears the error) when it does not fit.
template <class T> static T* try_malloc(size_t bytes)
{
    void* p = nullptr;
    if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) {
        cudaGetLastError();
        return nullptr;
    }
    return static_cast<T*>(p);
}

// What runs before each timed call, not timed: nothing unless --prep.
static const std::function<void()> no_prep = [] {};

// The median seconds of reps calls of call() after warmups, each after prep()
// and timed with cudaEvents recorded around it.
template <class F>
static double time_median(F&& call, int reps, int warmups, cudaEvent_t e0, cudaEvent_t e1,
                          const std::function<void()>& prep)
{
    std::vector<double> t;
    for (int r = -warmups; r < reps; r++) {
        prep();
        CUDA_CHECK(cudaEventRecord(e0));
        CUDA_CHECK(call());
        CUDA_CHECK(cudaEventRecord(e1));
        CUDA_CHECK(cudaEventSynchronize(e1));
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 0) t.push_back(1e-3 * ms);
    }
    CUDA_CHECK(cudaGetLastError());
    return median(t);
}

// The median seconds of reps calls of call() after warmups, each after prep()
// and timed with the host's clock (call() ends with the result on the host).
template <class F>
static double time_median_host(F&& call, int reps, int warmups, const std::function<void()>& prep = no_prep)
{
    std::vector<double> t;
    for (int r = -warmups; r < reps; r++) {
        prep();
        auto t0 = std::chrono::steady_clock::now();
        CUDA_CHECK(call());
        auto t1 = std::chrono::steady_clock::now();
        if (r >= 0) t.push_back(std::chrono::duration<double>(t1 - t0).count());
    }
    CUDA_CHECK(cudaGetLastError());
    return median(t);
}

// The median seconds of a call as --clock says: cudaEvents around it, or the
// host's clock around it and a cudaStreamSynchronize.
template <class F>
static double time_call(F&& call, int reps, int warmups, cudaEvent_t e0, cudaEvent_t e1,
                        const std::function<void()>& prep = no_prep)
{
    if (!g_host_clock) return time_median(call, reps, warmups, e0, e1, prep);
    auto synced = [&]() -> cudaError_t {
        cudaError_t e = call();
        return e != cudaSuccess ? e : cudaStreamSynchronize(0);
    };
    return time_median_host(synced, reps, warmups, prep);
}

// What --prep runs before each run of a sort: device array dev[i] (bytes
// long) gets host[i] again, through a host array (upload) or from an unsorted
// copy on the device (copy).  The copies are allocated here; the caller frees
// them (*extra) after timing.
static std::function<void()> sort_prep(std::vector<const void*> host, std::vector<void*> dev, size_t bytes,
                                       std::vector<void*>* extra)
{
    if (g_prep == PREP_NONE) return no_prep;
    if (g_prep == PREP_UPLOAD) {
        auto stage = std::make_shared<std::vector<std::vector<char>>>(host.size(), std::vector<char>(bytes));
        return [=] {
            for (size_t i = 0; i < host.size(); i++) {
                memcpy((*stage)[i].data(), host[i], bytes);
                CUDA_CHECK(cudaMemcpy(dev[i], (*stage)[i].data(), bytes, cudaMemcpyHostToDevice));
            }
            CUDA_CHECK(cudaDeviceSynchronize());
        };
    }
    std::vector<void*> orig;
    for (size_t i = 0; i < host.size(); i++) {
        void* p = try_malloc<void>(bytes);
        if (!p) CUDA_CHECK(cudaErrorMemoryAllocation);
        CUDA_CHECK(cudaMemcpy(p, host[i], bytes, cudaMemcpyHostToDevice));
        orig.push_back(p);
        extra->push_back(p);
    }
    return [=] {
        for (size_t i = 0; i < dev.size(); i++)
            CUDA_CHECK(cudaMemcpy(dev[i], orig[i], bytes, cudaMemcpyDeviceToDevice));
        CUDA_CHECK(cudaDeviceSynchronize());
    };
}

// One (operation, n): allocation, timing, check, its line.
static void run(Op op, size_t n, int reps, int warmups, cudaEvent_t e0, cudaEvent_t e1)
{
    const int ni = (int)n;
    const size_t bytes = n * 4;
    const bool reduce = op == OP_REDUCE || op == OP_REDUCE_HOST;
    std::vector<uint32_t> hu(reduce ? 0 : n);
    std::vector<float> hf(reduce ? n : 0);
    for (size_t i = 0; i < hu.size(); i++)
        hu[i] = (uint32_t)(splitmix64_at(op == OP_SCAN ? SEED_SCAN : SEED_KEYS, i) >> 32);
    for (size_t i = 0; i < hf.size(); i++)
        hf[i] = (float)(splitmix64_at(SEED_FLOAT, i) >> 40) * (1.0f / 16777216.0f);

    // the arrays: a (input keys / input), b (output keys / output), and for
    // pairs c (input values) and d (output values)
    int narr = op == OP_PAIRS ? 4 : reduce ? 1 : 2;
    void* arr[4] = {nullptr, nullptr, nullptr, nullptr};
    for (int i = 0; i < narr; i++)
        if (!(arr[i] = try_malloc<void>(bytes))) {
            for (int j = 0; j < i; j++) cudaFree(arr[j]);
            printf("SKIP op=%s n=%zu impl=cub reason=\"cudaMalloc of %zu bytes failed: no room\"\n", op_names[op], n,
                   bytes);
            return;
        }
    uint32_t *ka = (uint32_t*)arr[0], *kb = (uint32_t*)arr[1], *va = (uint32_t*)arr[2], *vb = (uint32_t*)arr[3];
    float* fx = (float*)arr[0];
    float* fsum = try_malloc<float>(sizeof(float));
    if (!fsum) CUDA_CHECK(cudaErrorMemoryAllocation);
    if (reduce)
        CUDA_CHECK(cudaMemcpy(fx, hf.data(), bytes, cudaMemcpyHostToDevice));
    else
        CUDA_CHECK(cudaMemcpy(ka, hu.data(), bytes, cudaMemcpyHostToDevice));
    std::vector<uint32_t> iota;
    if (op == OP_PAIRS) {
        iota.resize(n);
        std::iota(iota.begin(), iota.end(), 0u);
        CUDA_CHECK(cudaMemcpy(va, iota.data(), bytes, cudaMemcpyHostToDevice));
    }

    // temporary storage: its size, then once
    void* tmp = nullptr;
    size_t tmp_bytes = 0;
    auto call = [&]() -> cudaError_t {
        switch (op) {
        case OP_SORT: return cub::DeviceRadixSort::SortKeys(tmp, tmp_bytes, ka, kb, ni);
        case OP_PAIRS: return cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, ka, kb, va, vb, ni);
        case OP_SCAN: return cub::DeviceScan::InclusiveSum(tmp, tmp_bytes, ka, kb, ni);
        default: return cub::DeviceReduce::Sum(tmp, tmp_bytes, fx, fsum, ni);
        }
    };
    CUDA_CHECK(call());
    if (!(tmp = try_malloc<void>(tmp_bytes))) {
        for (int i = 0; i < narr; i++) cudaFree(arr[i]);
        cudaFree(fsum);
        printf("SKIP op=%s n=%zu impl=cub reason=\"cudaMalloc of %zu bytes of temporary storage failed: no room\"\n",
               op_names[op], n, tmp_bytes);
        return;
    }
    CUDA_CHECK(cudaDeviceSynchronize());

    float host_sum = 0;
    auto call_to_host = [&]() -> cudaError_t {
        cudaError_t e = call();
        return e != cudaSuccess ? e : cudaMemcpy(&host_sum, fsum, sizeof host_sum, cudaMemcpyDeviceToHost);
    };
    std::vector<void*> extra;  // --prep copy's unsorted copies
    std::function<void()> prep = no_prep;
    if (op == OP_SORT)
        prep = sort_prep({hu.data()}, {ka}, bytes, &extra);
    else if (op == OP_PAIRS)
        prep = sort_prep({hu.data(), iota.data()}, {ka, va}, bytes, &extra);
    const double s = op == OP_REDUCE_HOST ? time_median_host(call_to_host, reps, warmups)
                                          : time_call(call, reps, warmups, e0, e1, prep);
    for (void* p : extra) cudaFree(p);
    // the check, on the last run's result
    char msg[200];
    if (reduce) {
        float got = 0;
        CUDA_CHECK(cudaMemcpy(&got, fsum, sizeof got, cudaMemcpyDeviceToHost));
        if (op == OP_REDUCE_HOST && got != host_sum) fail(op, n, "the sum copied to the host is not the device's");
        double want = 0;
        for (float x : hf) want += x;
        if (std::fabs(got - want) > 1e-4 * std::fabs(want) + 1e-3) {
            snprintf(msg, sizeof msg, "sum %.9g, double-precision host sum %.9g", got, want);
            fail(op, n, msg);
        }
    } else {
        std::vector<uint32_t> out(n), vals(op == OP_PAIRS ? n : 0);
        CUDA_CHECK(cudaMemcpy(out.data(), kb, bytes, cudaMemcpyDeviceToHost));
        if (op == OP_PAIRS) CUDA_CHECK(cudaMemcpy(vals.data(), vb, bytes, cudaMemcpyDeviceToHost));
        if (op == OP_SCAN) {
            uint32_t s = 0;
            for (size_t i = 0; i < n; i++) {
                s += hu[i];
                if (out[i] != s) {
                    snprintf(msg, sizeof msg, "out[%zu] = %u, host scan %u", i, out[i], s);
                    fail(op, n, msg);
                }
            }
        } else {
            uint64_t want[2] = {0, 0}, got[2] = {0, 0};
            for (size_t i = 0; i < n; i++) {
                want[0] += hu[i];
                want[1] += splitmix64_at(0, hu[i]);
                got[0] += out[i];
                got[1] += splitmix64_at(0, out[i]);
                if (i && out[i - 1] > out[i]) {
                    snprintf(msg, sizeof msg, "keys[%zu] = %u > keys[%zu] = %u", i - 1, out[i - 1], i, out[i]);
                    fail(op, n, msg);
                }
                if (op == OP_PAIRS) {
                    uint32_t v = vals[i];
                    if (v >= n || hu[v] != out[i] || (i && out[i - 1] == out[i] && vals[i - 1] >= v)) {
                        snprintf(msg, sizeof msg, "values[%zu] = %u does not follow key %u (stably)", i, v, out[i]);
                        fail(op, n, msg);
                    }
                }
            }
            if (want[0] != got[0] || want[1] != got[1]) fail(op, n, "sorted, but not the same keys as the input");
        }
    }

    printf("RESULT op=%s n=%zu impl=%s ms=%.4g rate=%.4g unit=%s\n", op_names[op], n, impl_name(), s * 1e3, rate_of(op, n, s),
           op <= OP_PAIRS ? "Gkeys/s" : "GB/s");
    fflush(stdout);
    cudaFree(tmp);
    cudaFree(fsum);
    for (int i = 0; i < narr; i++) cudaFree(arr[i]);
}

// sort64: 64-bit keys, bench_prims's (splitmix64 of SEED_KEYS, all 64 bits).
static void run_sort64(size_t n, int reps, int warmups, cudaEvent_t e0, cudaEvent_t e1)
{
    const Op op = OP_SORT64;
    const size_t bytes = n * 8;
    std::vector<uint64_t> hk(n);
    for (size_t i = 0; i < n; i++) hk[i] = splitmix64_at(SEED_KEYS, i);
    uint64_t* ka = try_malloc<uint64_t>(bytes);
    uint64_t* kb = ka ? try_malloc<uint64_t>(bytes) : nullptr;
    void* tmp = nullptr;
    size_t tmp_bytes = 0;
    auto call = [&]() { return cub::DeviceRadixSort::SortKeys(tmp, tmp_bytes, ka, kb, (int)n); };
    if (kb) CUDA_CHECK(call());
    if (!kb || !(tmp = try_malloc<void>(tmp_bytes))) {
        cudaFree(ka);
        cudaFree(kb);
        printf("SKIP op=%s n=%zu impl=cub reason=\"cudaMalloc failed: no room\"\n", op_names[op], n);
        return;
    }
    CUDA_CHECK(cudaMemcpy(ka, hk.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<void*> extra;  // --prep copy's unsorted copy
    const double s = time_call(call, reps, warmups, e0, e1, sort_prep({hk.data()}, {ka}, bytes, &extra));
    for (void* p : extra) cudaFree(p);
    std::vector<uint64_t> out(n);
    CUDA_CHECK(cudaMemcpy(out.data(), kb, bytes, cudaMemcpyDeviceToHost));
    uint64_t want[2] = {0, 0}, got[2] = {0, 0};
    char msg[200];
    for (size_t i = 0; i < n; i++) {
        want[0] += hk[i];
        want[1] += splitmix64_at(0, hk[i]);
        got[0] += out[i];
        got[1] += splitmix64_at(0, out[i]);
        if (i && out[i - 1] > out[i]) {
            snprintf(msg, sizeof msg, "keys[%zu] > keys[%zu]", i - 1, i);
            fail(op, n, msg);
        }
    }
    if (want[0] != got[0] || want[1] != got[1]) fail(op, n, "sorted, but not the same keys as the input");
    printf("RESULT op=%s n=%zu impl=%s ms=%.4g rate=%.4g unit=Gkeys/s\n", op_names[op], n, impl_name(), s * 1e3,
           rate_of(op, n, s));
    fflush(stdout);
    cudaFree(tmp);
    cudaFree(ka);
    cudaFree(kb);
}

static void usage(const char* why)
{
    if (why) fprintf(stderr, "%s: %s\n", prog, why);
    fprintf(stderr,
            "usage: %s [--min LOG2] [--max LOG2] [-r reps] [-w warmups] "
            "[--ops sort,pairs,scan,reduce,sort64,reduce_host] [--clock events|host] [--prep none|upload|copy]\n",
            prog);
    exit(2);
}

static long parse_int(const char* name, const char* s, long lo, long hi)
{
    char* end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi) {
        fprintf(stderr, "%s: %s: '%s' is not an integer in %ld..%ld\n", prog, name, s, lo, hi);
        exit(2);
    }
    return v;
}

int main(int argc, char** argv)
{
    int min_log2 = 10, max_log2 = 28, reps = 7, warmups = 2;
    bool ops[OP_COUNT] = {true, true, true, true, false, false};  // sort64, reduce_host when asked for (--ops)
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        bool more = i + 1 < argc;
        if (!strcmp(a, "--min") && more)
            min_log2 = (int)parse_int("--min", argv[++i], 0, 30);
        else if (!strcmp(a, "--max") && more)
            max_log2 = (int)parse_int("--max", argv[++i], 0, 30);
        else if (!strcmp(a, "-r") && more)
            reps = (int)parse_int("-r", argv[++i], 1, 1000);
        else if (!strcmp(a, "-w") && more)
            warmups = (int)parse_int("-w", argv[++i], 0, 1000);
        else if (!strcmp(a, "--clock") && more) {
            const char* c = argv[++i];
            if (strcmp(c, "events") && strcmp(c, "host")) usage("--clock: events or host");
            g_host_clock = !strcmp(c, "host");
        } else if (!strcmp(a, "--prep") && more) {
            const char* w = argv[++i];
            if (!strcmp(w, "none"))
                g_prep = PREP_NONE;
            else if (!strcmp(w, "upload"))
                g_prep = PREP_UPLOAD;
            else if (!strcmp(w, "copy"))
                g_prep = PREP_COPY;
            else
                usage("--prep: none, upload or copy");
        } else if (!strcmp(a, "--ops") && more) {
            std::string list = argv[++i];
            std::fill(ops, ops + OP_COUNT, false);
            size_t pos = 0;
            while (pos <= list.size()) {
                size_t end = list.find(',', pos);
                if (end == std::string::npos) end = list.size();
                std::string w = list.substr(pos, end - pos);
                int k = 0;
                while (k < OP_COUNT && w != op_names[k]) k++;
                if (k == OP_COUNT) usage(("--ops: unknown operation '" + w + "'").c_str());
                ops[k] = true;
                pos = end + 1;
            }
        } else
            usage(nullptr);
    }
    if (min_log2 > max_log2) usage("--min is larger than --max");

    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        fprintf(stderr, "%s: no CUDA device\n", prog);
        return 1;
    }
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    int rt = 0, drv = 0;
    CUDA_CHECK(cudaRuntimeGetVersion(&rt));
    CUDA_CHECK(cudaDriverGetVersion(&drv));
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    printf("%s: CUB %d.%d.%d, CUDA runtime %d.%d, driver %d.%d\n", prog, CUB_VERSION / 100000,
           CUB_VERSION / 100 % 1000, CUB_VERSION % 100, rt / 1000, rt % 1000 / 10, drv / 1000, drv % 1000 / 10);
    printf("device:   0 (%s, sm_%d%d, %.1f GiB, %.1f GiB free)\n", prop.name, prop.major, prop.minor,
           total_b / 1073741824.0, free_b / 1073741824.0);
    printf("runs:     n = 2^%d..2^%d (every other power), median of %d after %d warm-up(s), %s\n", min_log2,
           max_log2, reps, warmups,
           g_host_clock ? "host clock around the call and a cudaStreamSynchronize" : "cudaEvents around the call");
    printf("prep:     %s\n", g_prep == PREP_NONE     ? "none (the sorts' input stays on the device)"
                             : g_prep == PREP_UPLOAD ? "upload (the sorts' input through a host array before each run)"
                                                     : "copy (the sorts' input from a copy on the device before each run)");
    fflush(stdout);

    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    for (int o = 0; o < OP_COUNT; o++) {
        if (!ops[o]) continue;
        for (int l = min_log2; l <= max_log2; l += 2)
            if (o == OP_SORT64)
                run_sort64((size_t)1 << l, reps, warmups, e0, e1);
            else
                run((Op)o, (size_t)1 << l, reps, warmups, e0, e1);
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    return 0;
}
