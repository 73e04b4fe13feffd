/* SPDX-License-Identifier: MIT */
/* bench_prims.cpp: libstdcl's primitives (clsort, clsort_by_key, clscan,
 * clreduce) beside Boost.Compute on the same OpenCL device and the C++
 * standard library on the host; bench/prims_cub.cu is the CUDA anchor (CUB),
 * with the same data and the same RESULT lines.
 *
 *   build/bench/bench_prims [-c cpu|gpu|dev] [-d devnum] [--min LOG2] [--max LOG2]
 *                           [-r reps] [-w warmups] [--ops sort,pairs,scan,reduce,sort64]
 *                           [--no-boost] [--no-host] [--host-limit SEC] [--prep upload|copy]
 *
 * Operations, each at n = 2^min, 2^(min+2), ..., 2^max (default 2^10..2^28):
 *   sort    32-bit unsigned keys, ascending              rate: Gkeys/s (n / time)
 *   pairs   the same keys with 32-bit values (by key)    rate: Gkeys/s
 *   scan    inclusive sum of 32-bit unsigned integers    rate: GB/s of 2 n 4 bytes
 *   reduce  sum of floats                                rate: GB/s of n 4 bytes
 *   sort64  64-bit unsigned keys, ascending (only with --ops; libstdcl only:
 *           Boost and the host skip it)                 rate: Gkeys/s
 * Implementations:
 *   stdcl   clsort / clsort_by_key / clscan / clreduce on device devnum of
 *           the context (default stdgpu, else stdcpu), CL_EVENT_WAIT; keys
 *           (and values) are uploaded again before every run (a waited
 *           clmsync, not timed), so every sort sorts unsorted data; with
 *           --prep copy, copied instead on the device (clmcopy, waited, not
 *           timed) from an unsorted copy there, so that the host's caches
 *           are not flushed by a copy of the whole input before each run
 *   boost   boost::compute::sort / sort_by_key / inclusive_scan / reduce on
 *           boost::compute::vectors in the same cl_context, on a queue of
 *           its own for the same device, queue.finish() inside the timed
 *           region (built when <boost/compute.hpp> is there)
 *   host    std::sort (pairs: std::stable_sort of (key, value) pairs by key)
 *           on a copy, sequential std::inclusive_scan, a sequential float
 *           loop; one thread.  Above 2^26 only when one run is expected to
 *           take at most --host-limit seconds (default 3): predicted from
 *           the last smaller size, else from one trial run
 * A time is the median of reps timed runs (default 7) after warmups untimed
 * ones (default 2), wall clock (CLOCK_MONOTONIC) around the call.  Data:
 * splitmix64 from fixed seeds, identical in prims_cub.  Each libstdcl and
 * Boost result is checked once per size, outside timing: sorted and the same
 * keys (sum and hashed sum), values following their keys (libstdcl: stably,
 * as documented), the scan equal to a host scan, the sum within 1e-4
 * (relative) of a double-precision host sum.
 *
 * Output: header lines, then one line per (operation, n, implementation):
 *   RESULT op=sort n=16777216 impl=stdcl ms=0.712 rate=23.56 unit=Gkeys/s
 *   SKIP op=sort n=268435456 impl=host reason="..."
 *   ERROR op=scan n=1024 impl=stdcl call=clscan msg="<clerror()>"  (next size)
 *   FAIL op=pairs n=1024 impl=stdcl msg="..."
 * A wrong Boost result gets a FAIL line (with its time) instead of RESULT:
 * Boost.Compute's float reduce on a CPU device, for one, sums long chunks
 * sequentially in float and stops growing at 2^24 per chunk.
 * Exit status: 0; 1 at the first wrong libstdcl result (after its FAIL line)
 * or without the context; 2 for bad options. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdcl.h>

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <functional>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "bench_info.h"
#include "bench_stats.h"

/* -DBENCH_NO_BOOST builds without Boost.Compute even where it is installed. */
#if !defined(BENCH_NO_BOOST) && defined(__has_include)
#if __has_include(<boost/compute.hpp>)
#define HAVE_BOOST_COMPUTE 1
#endif
#endif
#ifdef HAVE_BOOST_COMPUTE
#include <boost/compute/algorithm/copy.hpp>
#include <boost/compute/algorithm/inclusive_scan.hpp>
#include <boost/compute/algorithm/reduce.hpp>
#include <boost/compute/algorithm/sort.hpp>
#include <boost/compute/algorithm/sort_by_key.hpp>
#include <boost/compute/command_queue.hpp>
#include <boost/compute/container/vector.hpp>
#include <boost/compute/context.hpp>
#include <boost/compute/device.hpp>
#include <boost/version.hpp>
#endif

namespace {

/* ------------------------------------------------------------------------ */
/* Options, data, checks                                                     */
/* ------------------------------------------------------------------------ */

enum Op { OP_SORT, OP_PAIRS, OP_SCAN, OP_REDUCE, OP_SORT64, OP_COUNT };
const char* const op_names[OP_COUNT] = {"sort", "pairs", "scan", "reduce", "sort64"};

struct Options {
    const char* ctxname = nullptr;
    unsigned devnum = 0;
    int min_log2 = 10, max_log2 = 28;
    int reps = 7, warmups = 2;
    bool ops[OP_COUNT] = {true, true, true, true, false};  // sort64 when asked for (--ops)
    bool boost = true, host = true;
    bool prep_copy = false;  // --prep copy
    double host_limit = 3.0;
} opt;

double now()
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* The i-th output (from 0) of splitmix64 seeded with seed; prims_cub.cu has
 * the same. */
inline uint64_t splitmix64_at(uint64_t seed, uint64_t i)
{
    uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
const uint64_t SEED_KEYS = 0x5eed0001, SEED_SCAN = 0x5eed0002, SEED_FLOAT = 0x5eed0003;

void fill_u32(std::vector<uint32_t>& v, uint64_t seed)
{
    for (size_t i = 0; i < v.size(); i++) v[i] = (uint32_t)(splitmix64_at(seed, i) >> 32);
}
/* Floats in [0, 1), multiples of 2^-24. */
void fill_float(std::vector<float>& v, uint64_t seed)
{
    for (size_t i = 0; i < v.size(); i++) v[i] = (float)(splitmix64_at(seed, i) >> 40) * (1.0f / 16777216.0f);
}

/* Order-independent fingerprint of a multiset of keys. */
struct KeySum {
    uint64_t plain = 0, hashed = 0;
    bool operator==(const KeySum& o) const { return plain == o.plain && hashed == o.hashed; }
};
template <class K> KeySum key_sum(const K* k, size_t n)
{
    KeySum s;
    for (size_t i = 0; i < n; i++) {
        s.plain += k[i];
        s.hashed += splitmix64_at(0, k[i]);
    }
    return s;
}

/* "" when keys[0..n-1] is an ascending permutation of the keys summed in
 * want, else what is wrong. */
template <class K> std::string check_sorted(const K* keys, size_t n, const KeySum& want)
{
    char msg[160];
    for (size_t i = 1; i < n; i++)
        if (keys[i - 1] > keys[i]) {
            snprintf(msg, sizeof msg, "keys[%zu] = %llu > keys[%zu] = %llu", i - 1, (unsigned long long)keys[i - 1], i,
                     (unsigned long long)keys[i]);
            return msg;
        }
    if (!(key_sum(keys, n) == want)) return "sorted, but not the same keys as the input";
    return "";
}

/* "" when keys[0..n-1] is ascending and vals[i] is the input position of
 * keys[i] (the values were 0..n-1), each position once; stable: equal keys
 * keep their values ascending. */
std::string check_pairs(const uint32_t* keys, const uint32_t* vals, const uint32_t* orig, size_t n, bool stable)
{
    char msg[200];
    std::vector<bool> seen(n, false);
    for (size_t i = 0; i < n; i++) {
        if (i && keys[i - 1] > keys[i]) {
            snprintf(msg, sizeof msg, "keys[%zu] = %u > keys[%zu] = %u", i - 1, keys[i - 1], i, keys[i]);
            return msg;
        }
        uint32_t v = vals[i];
        if (v >= n || seen[v]) {
            snprintf(msg, sizeof msg, "values[%zu] = %u: %s", i, v, v >= n ? "not an input position" : "repeated");
            return msg;
        }
        seen[v] = true;
        if (orig[v] != keys[i]) {
            snprintf(msg, sizeof msg, "values[%zu] = %u, but input key %u is %u, not keys[%zu] = %u", i, v, v, orig[v],
                     i, keys[i]);
            return msg;
        }
        if (stable && i && keys[i - 1] == keys[i] && vals[i - 1] > v) {
            snprintf(msg, sizeof msg, "not stable: equal keys %u at %zu and %zu carry values %u then %u", keys[i], i - 1,
                     i, vals[i - 1], v);
            return msg;
        }
    }
    return "";
}

std::string check_scan(const uint32_t* got, const std::vector<uint32_t>& want)
{
    for (size_t i = 0; i < want.size(); i++)
        if (got[i] != want[i]) {
            char msg[120];
            snprintf(msg, sizeof msg, "out[%zu] = %u, host scan %u", i, got[i], want[i]);
            return msg;
        }
    return "";
}

std::string check_sum(double got, double want)
{
    if (std::fabs(got - want) <= 1e-4 * std::fabs(want) + 1e-3) return "";
    char msg[120];
    snprintf(msg, sizeof msg, "sum %.9g, double-precision host sum %.9g", got, want);
    return msg;
}

/* ------------------------------------------------------------------------ */
/* Timing and lines                                                          */
/* ------------------------------------------------------------------------ */

/* Runs prep() then run() warmups + reps times, timing run() alone; the
 * median of the timed runs in *median.  false as soon as either fails. */
bool time_runs(const std::function<bool()>& prep, const std::function<bool()>& run, double* median)
{
    // Under bench/clcalls_shim.c, each timed run's ends are marked among the
    // OpenCL calls.
    static auto mark = (void (*)(const char*))dlsym(RTLD_DEFAULT, "clcalls_mark");
    std::vector<double> t;
    for (int r = -opt.warmups; r < opt.reps; r++) {
        if (!prep()) return false;
        if (mark) mark("run");
        double t0 = now();
        if (!run()) return false;
        double dt = now() - t0;
        if (mark) mark("run ends");
        if (r >= 0) t.push_back(dt);
    }
    *median = bench_median(t.data(), (int)t.size());
    return true;
}

double rate_of(Op op, size_t n, double s)
{
    switch (op) {
    case OP_SORT:
    case OP_SORT64:
    case OP_PAIRS: return (double)n / s * 1e-9;
    case OP_SCAN: return 2.0 * n * 4 / s * 1e-9;
    default: return (double)n * 4 / s * 1e-9;
    }
}
const char* unit_of(Op op) { return op <= OP_PAIRS || op == OP_SORT64 ? "Gkeys/s" : "GB/s"; }

void result_line(Op op, size_t n, const char* impl, double s)
{
    printf("RESULT op=%s n=%zu impl=%s ms=%.4g rate=%.4g unit=%s\n", op_names[op], n, impl, s * 1e3, rate_of(op, n, s),
           unit_of(op));
    fflush(stdout);
}
/* quotes in the message become apostrophes: the value stays one field */
std::string quoted(const std::string& s)
{
    std::string q = s;
    std::replace(q.begin(), q.end(), '"', '\'');
    std::replace(q.begin(), q.end(), '\n', ' ');
    return "\"" + q + "\"";
}
void skip_line(Op op, size_t n, const char* impl, const std::string& why)
{
    printf("SKIP op=%s n=%zu impl=%s reason=%s\n", op_names[op], n, impl, quoted(why).c_str());
    fflush(stdout);
}
void error_line(Op op, size_t n, const char* impl, const char* call, const char* msg)
{
    printf("ERROR op=%s n=%zu impl=%s call=%s msg=%s\n", op_names[op], n, impl, call,
           quoted(msg ? msg : "(no message)").c_str());
    fflush(stdout);
}
void fail_line(Op op, size_t n, const char* impl, const std::string& msg)
{
    printf("FAIL op=%s n=%zu impl=%s msg=%s\n", op_names[op], n, impl, quoted(msg).c_str());
    fflush(stdout);
}

/* The input of one (operation, n): keys (sort, pairs; the values are
 * 0..n-1), integers (scan) or floats (reduce), and what the checks need. */
struct Input {
    std::vector<uint32_t> u; /* keys, or the scan's input */
    std::vector<uint64_t> u64; /* sort64's keys */
    std::vector<float> f;    /* reduce */
    KeySum keys;             /* sort */
    std::vector<uint32_t> scan; /* the host's inclusive scan */
    double sum = 0;          /* reduce, in double */
};

Input make_input(Op op, size_t n)
{
    Input in;
    if (op == OP_REDUCE) {
        in.f.resize(n);
        fill_float(in.f, SEED_FLOAT);
        for (float x : in.f) in.sum += x;
        return in;
    }
    if (op == OP_SORT64) {
        in.u64.resize(n);
        for (size_t i = 0; i < n; i++) in.u64[i] = splitmix64_at(SEED_KEYS, i);
        in.keys = key_sum(in.u64.data(), n);
        return in;
    }
    in.u.resize(n);
    fill_u32(in.u, op == OP_SCAN ? SEED_SCAN : SEED_KEYS);
    if (op == OP_SORT) in.keys = key_sum(in.u.data(), n);
    if (op == OP_SCAN) {
        in.scan.resize(n);
        std::inclusive_scan(in.u.begin(), in.u.end(), in.scan.begin());
    }
    return in;
}

/* ------------------------------------------------------------------------ */
/* libstdcl                                                                  */
/* ------------------------------------------------------------------------ */

/* The clmalloc arrays of one run, freed on every path. */
struct ClArrays {
    CLCONTEXT* cp;
    void* p[2] = {nullptr, nullptr};
    explicit ClArrays(CLCONTEXT* c) : cp(c) {}
    ~ClArrays()
    {
        for (void* q : p)
            if (q) clfree(q);
    }
};

/* One RESULT line, or an ERROR line when a call fails; FAIL and exit(1) on a
 * wrong result. */
void run_stdcl(CLCONTEXT* cp, Op op, size_t n, const Input& in)
{
    const unsigned dn = opt.devnum;
    const size_t bytes = n * (op == OP_SORT64 ? 8 : 4);
    ClArrays a(cp), orig(cp);  // orig: the unsorted inputs on the device (--prep copy)
    int nbuf = op == OP_PAIRS || op == OP_SCAN ? 2 : 1;
    const bool copy = opt.prep_copy && (op == OP_SORT || op == OP_SORT64 || op == OP_PAIRS);
    for (int i = 0; i < nbuf; i++)
        if (!(a.p[i] = clmalloc(cp, bytes, CL_MEM_RW)) || (copy && !(orig.p[i] = clmalloc(cp, bytes, CL_MEM_RW)))) {
            error_line(op, n, "stdcl", "clmalloc", clerror());
            return;
        }
    uint32_t* k = (uint32_t*)a.p[0];
    uint32_t* v = (uint32_t*)a.p[1];
    const char* failed = nullptr; /* the call that failed */
    auto sync = [&](void* p, int dir) {
        if (clmsync(cp, dn, p, dir | CL_EVENT_WAIT)) return true;
        failed = "clmsync";
        return false;
    };
    /* the inputs on the host and on the device; sort and pairs do it again
     * before each run */
    auto upload = [&]() {
        if (op == OP_REDUCE)
            memcpy(k, in.f.data(), bytes);
        else if (op == OP_SORT64)
            memcpy(k, in.u64.data(), bytes);
        else
            memcpy(k, in.u.data(), bytes);
        if (op == OP_PAIRS)
            for (size_t i = 0; i < n; i++) v[i] = (uint32_t)i;
        return sync(k, CL_MEM_DEVICE) && (op != OP_PAIRS || sync(v, CL_MEM_DEVICE));
    };
    if (!upload()) {
        error_line(op, n, "stdcl", failed, clerror());
        return;
    }
    std::function<bool()> restore = upload;
    if (copy) {
        for (int i = 0; i < nbuf; i++)
            if (!clmcopy(cp, dn, a.p[i], orig.p[i], CL_EVENT_WAIT)) {
                error_line(op, n, "stdcl", "clmcopy", clerror());
                return;
            }
        restore = [&] {
            for (int i = 0; i < nbuf; i++)
                if (!clmcopy(cp, dn, orig.p[i], a.p[i], CL_EVENT_WAIT)) {
                    failed = "clmcopy";
                    return false;
                }
            return true;
        };
    }
    float rsum = 0;
    std::function<bool()> prep = [] { return true; }, run;
    switch (op) {
    case OP_SORT:
        prep = restore;
        run = [&] { return clsort(cp, dn, k, n, CL_REDUCE_UINT, CL_EVENT_WAIT) == 0 || ((failed = "clsort"), false); };
        break;
    case OP_SORT64:
        prep = restore;
        run = [&] { return clsort(cp, dn, k, n, CL_REDUCE_ULONG, CL_EVENT_WAIT) == 0 || ((failed = "clsort"), false); };
        break;
    case OP_PAIRS:
        prep = restore;
        run = [&] {
            return clsort_by_key(cp, dn, k, v, n, CL_REDUCE_UINT, 4, CL_EVENT_WAIT) == 0 ||
                ((failed = "clsort_by_key"), false);
        };
        break;
    case OP_SCAN:
        run = [&] {
            return clscan(cp, dn, k, v, n, CL_REDUCE_UINT, CL_REDUCE_SUM, CL_EVENT_WAIT) == 0 ||
                ((failed = "clscan"), false);
        };
        break;
    default:
        run = [&] {
            return clreduce(cp, dn, k, n, CL_REDUCE_FLOAT, CL_REDUCE_SUM, &rsum) == 0 || ((failed = "clreduce"), false);
        };
        break;
    }
    double med;
    if (!time_runs(prep, run, &med)) {
        error_line(op, n, "stdcl", failed, clerror());
        return;
    }
    /* the last run's result, brought back */
    std::string bad;
    if (op == OP_SORT) {
        if (!sync(k, CL_MEM_HOST)) return error_line(op, n, "stdcl", failed, clerror());
        bad = check_sorted(k, n, in.keys);
    } else if (op == OP_SORT64) {
        if (!sync(k, CL_MEM_HOST)) return error_line(op, n, "stdcl", failed, clerror());
        bad = check_sorted((const uint64_t*)k, n, in.keys);
    } else if (op == OP_PAIRS) {
        if (!sync(k, CL_MEM_HOST) || !sync(v, CL_MEM_HOST)) return error_line(op, n, "stdcl", failed, clerror());
        bad = check_pairs(k, v, in.u.data(), n, true);
    } else if (op == OP_SCAN) {
        if (!sync(v, CL_MEM_HOST)) return error_line(op, n, "stdcl", failed, clerror());
        bad = check_scan(v, in.scan);
    } else {
        bad = check_sum(rsum, in.sum);
    }
    if (!bad.empty()) {
        fail_line(op, n, "stdcl", bad);
        exit(1);
    }
    result_line(op, n, "stdcl", med);
}

/* ------------------------------------------------------------------------ */
/* Boost.Compute                                                             */
/* ------------------------------------------------------------------------ */

#ifdef HAVE_BOOST_COMPUTE
namespace bc = boost::compute;

void run_boost(bc::context& ctx, bc::command_queue& q, Op op, size_t n, const Input& in)
{
    if (op == OP_SORT64) return skip_line(op, n, "boost", "not measured: 32-bit keys only");
    const size_t bytes = n * 4;
    /* what the arrays and Boost's temporaries take, roughly: a radix sort
     * doubles its arrays, a scan and a reduce keep partial sums */
    const size_t need = op == OP_SORT ? 2 * bytes : op == OP_PAIRS ? 4 * bytes : op == OP_SCAN ? 3 * bytes : 2 * bytes;
    const bc::device dev = q.get_device();
    const cl_ulong gmem = dev.get_info<cl_ulong>(CL_DEVICE_GLOBAL_MEM_SIZE);
    const cl_ulong maxalloc = dev.get_info<cl_ulong>(CL_DEVICE_MAX_MEM_ALLOC_SIZE);
    if (need > 0.9 * (double)gmem || bytes > maxalloc) {
        char why[160];
        snprintf(why, sizeof why, "needs about %.2f GiB, arrays of %.2f GiB; the device has %.2f GiB, arrays up to %.2f GiB",
                 need / 1073741824.0, bytes / 1073741824.0, gmem / 1073741824.0, maxalloc / 1073741824.0);
        return skip_line(op, n, "boost", why);
    }
    std::string bad;
    double med = 0;
    try {
        if (op == OP_SORT || op == OP_PAIRS) {
            bc::vector<cl_uint> k(n, ctx);
            bc::vector<cl_uint> v(op == OP_PAIRS ? n : 1, ctx);
            std::vector<uint32_t> iota(op == OP_PAIRS ? n : 0);
            std::iota(iota.begin(), iota.end(), 0u);
            auto prep = [&] {
                bc::copy(in.u.begin(), in.u.end(), k.begin(), q);
                if (op == OP_PAIRS) bc::copy(iota.begin(), iota.end(), v.begin(), q);
                q.finish();
                return true;
            };
            auto run = [&] {
                if (op == OP_PAIRS)
                    bc::sort_by_key(k.begin(), k.end(), v.begin(), q);
                else
                    bc::sort(k.begin(), k.end(), q);
                q.finish();
                return true;
            };
            time_runs(prep, run, &med);
            std::vector<uint32_t> hk(n), hv(op == OP_PAIRS ? n : 0);
            bc::copy(k.begin(), k.end(), hk.begin(), q);
            if (op == OP_PAIRS) {
                bc::copy(v.begin(), v.end(), hv.begin(), q);
                bad = check_pairs(hk.data(), hv.data(), in.u.data(), n, false);
            } else {
                bad = check_sorted(hk.data(), n, in.keys);
            }
        } else if (op == OP_SCAN) {
            bc::vector<cl_uint> x(n, ctx), y(n, ctx);
            bc::copy(in.u.begin(), in.u.end(), x.begin(), q);
            q.finish();
            auto run = [&] {
                bc::inclusive_scan(x.begin(), x.end(), y.begin(), q);
                q.finish();
                return true;
            };
            time_runs([] { return true; }, run, &med);
            std::vector<uint32_t> hy(n);
            bc::copy(y.begin(), y.end(), hy.begin(), q);
            bad = check_scan(hy.data(), in.scan);
        } else {
            bc::vector<float> x(n, ctx);
            bc::copy(in.f.begin(), in.f.end(), x.begin(), q);
            q.finish();
            float s = 0;
            auto run = [&] {
                bc::reduce(x.begin(), x.end(), &s, q); /* to the host: blocking */
                q.finish();
                return true;
            };
            time_runs([] { return true; }, run, &med);
            bad = check_sum(s, in.sum);
        }
    } catch (const std::exception& e) {
        /* an allocation that did not fit shows here (at first use) */
        return error_line(op, n, "boost", "boost::compute", e.what());
    }
    if (!bad.empty()) { /* the anchor's own fault: shown, not fatal */
        char t[80];
        snprintf(t, sizeof t, " (ms=%.4g rate=%.4g %s)", med * 1e3, rate_of(op, n, med), unit_of(op));
        return fail_line(op, n, "boost", bad + t);
    }
    result_line(op, n, "boost", med);
}
#endif

/* ------------------------------------------------------------------------ */
/* Host                                                                      */
/* ------------------------------------------------------------------------ */

volatile float g_sink;

/* The median of the last host run of each operation, and its n. */
double host_last_s[OP_COUNT];
size_t host_last_n[OP_COUNT];

/* One run's expected seconds at n from the last smaller size; 0 when unknown. */
double host_predict(Op op, size_t n)
{
    if (!host_last_n[op]) return 0;
    double r = (double)n / host_last_n[op];
    if (op <= OP_PAIRS) r *= std::log2((double)n) / std::log2((double)host_last_n[op]);
    return host_last_s[op] * r;
}

void run_host(Op op, size_t n, const Input& in)
{
    if (op == OP_SORT64) return skip_line(op, n, "host", "not measured: 32-bit keys only");
    const bool big = n > ((size_t)1 << 26);
    char why[200];
    double pred = host_predict(op, n);
    if (big && pred > opt.host_limit) {
        snprintf(why, sizeof why, "one run would take about %.1f s (from n=%zu), over --host-limit %.3g s", pred,
                 host_last_n[op], opt.host_limit);
        return skip_line(op, n, "host", why);
    }
    std::vector<uint32_t> k;
    std::vector<std::pair<uint32_t, uint32_t>> kv;
    std::vector<uint32_t> out;
    std::function<bool()> prep = [] { return true; }, run;
    switch (op) {
    case OP_SORT:
        prep = [&] {
            k = in.u;
            return true;
        };
        run = [&] {
            std::sort(k.begin(), k.end());
            return true;
        };
        break;
    case OP_PAIRS:
        prep = [&] {
            kv.resize(n);
            for (size_t i = 0; i < n; i++) kv[i] = {in.u[i], (uint32_t)i};
            return true;
        };
        run = [&] {
            std::stable_sort(kv.begin(), kv.end(),
                             [](const std::pair<uint32_t, uint32_t>& a, const std::pair<uint32_t, uint32_t>& b) {
                                 return a.first < b.first;
                             });
            return true;
        };
        break;
    case OP_SCAN:
        out.resize(n);
        run = [&] {
            std::inclusive_scan(in.u.begin(), in.u.end(), out.begin());
            return true;
        };
        break;
    default:
        run = [&] {
            float s = 0;
            const float* x = in.f.data();
            for (size_t i = 0; i < n; i++) s += x[i];
            g_sink = s; /* a float summed in order drifts: shown by nobody, checked by nobody */
            return true;
        };
        break;
    }
    if (big && pred == 0) { /* nothing to predict from: one trial run */
        prep();
        double t0 = now();
        run();
        double dt = now() - t0;
        if (dt > opt.host_limit) {
            snprintf(why, sizeof why, "a trial run took %.1f s, over --host-limit %.3g s", dt, opt.host_limit);
            host_last_s[op] = dt;
            host_last_n[op] = n;
            return skip_line(op, n, "host", why);
        }
    }
    double med;
    time_runs(prep, run, &med);
    host_last_s[op] = med;
    host_last_n[op] = n;
    result_line(op, n, "host", med);
}

/* ------------------------------------------------------------------------ */
/* main                                                                      */
/* ------------------------------------------------------------------------ */

[[noreturn]] void usage(const char* prog, const char* why)
{
    if (why) fprintf(stderr, "%s: %s\n", prog, why);
    fprintf(stderr,
            "usage: %s [-c cpu|gpu|dev] [-d devnum] [--min LOG2] [--max LOG2] [-r reps] [-w warmups]\n"
            "       [--ops sort,pairs,scan,reduce,sort64] [--no-boost] [--no-host] [--host-limit SEC]\n"
            "       [--prep upload|copy]\n",
            prog);
    exit(2);
}

long parse_int(const char* prog, const char* name, const char* s, long lo, long hi)
{
    char* end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < lo || v > hi) {
        char msg[120];
        snprintf(msg, sizeof msg, "%s: '%s' is not an integer in %ld..%ld", name, s, lo, hi);
        usage(prog, msg);
    }
    return v;
}

void parse_ops(const char* prog, const char* s)
{
    for (bool& b : opt.ops) b = false;
    std::string list = s;
    size_t pos = 0;
    while (pos <= list.size()) {
        size_t end = list.find(',', pos);
        if (end == std::string::npos) end = list.size();
        std::string w = list.substr(pos, end - pos);
        int i = 0;
        while (i < OP_COUNT && w != op_names[i]) i++;
        if (i == OP_COUNT) usage(prog, ("--ops: unknown operation '" + w + "'").c_str());
        opt.ops[i] = true;
        pos = end + 1;
    }
}

} // namespace

int main(int argc, char** argv)
{
    const char* prog = "bench_prims";
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        bool more = i + 1 < argc;
        if (!strcmp(a, "-c") && more)
            opt.ctxname = argv[++i];
        else if (!strcmp(a, "-d") && more)
            opt.devnum = (unsigned)parse_int(prog, "-d", argv[++i], 0, 1023);
        else if (!strcmp(a, "--min") && more)
            opt.min_log2 = (int)parse_int(prog, "--min", argv[++i], 0, 32);
        else if (!strcmp(a, "--max") && more)
            opt.max_log2 = (int)parse_int(prog, "--max", argv[++i], 0, 32);
        else if (!strcmp(a, "-r") && more)
            opt.reps = (int)parse_int(prog, "-r", argv[++i], 1, 1000);
        else if (!strcmp(a, "-w") && more)
            opt.warmups = (int)parse_int(prog, "-w", argv[++i], 0, 1000);
        else if (!strcmp(a, "--ops") && more)
            parse_ops(prog, argv[++i]);
        else if (!strcmp(a, "--no-boost"))
            opt.boost = false;
        else if (!strcmp(a, "--no-host"))
            opt.host = false;
        else if (!strcmp(a, "--prep") && more) {
            const char* w = argv[++i];
            if (strcmp(w, "upload") && strcmp(w, "copy")) usage(prog, "--prep: upload or copy");
            opt.prep_copy = !strcmp(w, "copy");
        }
        else if (!strcmp(a, "--host-limit") && more) {
            char* end;
            opt.host_limit = strtod(argv[++i], &end);
            if (*end || !(opt.host_limit >= 0)) usage(prog, "--host-limit: seconds, >= 0");
        } else
            usage(prog, nullptr);
    }
    if (opt.min_log2 > opt.max_log2) usage(prog, "--min is larger than --max");
    if (opt.max_log2 > 31) usage(prog, "--max: at most 31 (the values are 32-bit positions)");

    CLCONTEXT* cp = !opt.ctxname                  ? (stdgpu ? stdgpu : stdcpu)
        : !strcmp(opt.ctxname, "cpu")             ? stdcpu
        : !strcmp(opt.ctxname, "gpu")             ? stdgpu
        : !strcmp(opt.ctxname, "dev")             ? stddev
                                                  : (usage(prog, "-c: cpu, gpu or dev"), nullptr);
    bench_print_machine(prog);
    bench_print_command(argc, argv);
    bench_print_context("context", cp);
    if (!cp) {
        fprintf(stderr, "%s: no such context: %s\n", prog, clerror() ? clerror() : "none");
        return 1;
    }
    if (opt.devnum >= clgetndev(cp)) {
        fprintf(stderr, "%s: -d %u: the context has %u device(s)\n", prog, opt.devnum, clgetndev(cp));
        return 2;
    }
    char dname[256] = "";
    clGetDeviceInfo(stdcl_device(cp, opt.devnum), CL_DEVICE_NAME, sizeof dname, dname, nullptr);
    printf("device:   %u (%s)\n", opt.devnum, dname);
    printf("runs:     n = 2^%d..2^%d (every other power), median of %d after %d warm-up(s), wall clock\n",
           opt.min_log2, opt.max_log2, opt.reps, opt.warmups);

#ifdef HAVE_BOOST_COMPUTE
    bc::context bctx;
    bc::command_queue bq;
    if (opt.boost) {
        try {
            bctx = bc::context(stdcl_clcontext(cp), true);
            bq = bc::command_queue(bctx, bc::device(stdcl_device(cp, opt.devnum), true));
            printf("boost:    Boost.Compute %s, libstdcl's cl_context, a queue of its own on device %u\n",
                   BOOST_LIB_VERSION, opt.devnum);
        } catch (const std::exception& e) {
            printf("boost:    skipped: no queue (%s)\n", e.what());
            opt.boost = false;
        }
    } else {
        printf("boost:    skipped (--no-boost)\n");
    }
#else
    if (opt.boost) printf("boost:    skipped (built without <boost/compute.hpp>)\n");
    else printf("boost:    skipped (--no-boost)\n");
    opt.boost = false;
#endif
    if (opt.host)
        printf("host:     std::sort, std::stable_sort (pairs), std::inclusive_scan, a float loop; one thread; "
               "above 2^26 when a run takes at most %.3g s\n",
               opt.host_limit);
    else
        printf("host:     skipped (--no-host)\n");
    fflush(stdout);

    for (int o = 0; o < OP_COUNT; o++) {
        if (!opt.ops[o]) continue;
        Op op = (Op)o;
        for (int l = opt.min_log2; l <= opt.max_log2; l += 2) {
            size_t n = (size_t)1 << l;
            Input in;
            try {
                in = make_input(op, n);
            } catch (const std::bad_alloc&) {
                printf("SKIP op=%s n=%zu impl=all reason=\"no host memory for the input\"\n", op_names[op], n);
                continue;
            }
            run_stdcl(cp, op, n, in);
#ifdef HAVE_BOOST_COMPUTE
            if (opt.boost) run_boost(bctx, bq, op, n, in);
#endif
            if (opt.host) {
                try {
                    run_host(op, n, in);
                } catch (const std::bad_alloc&) {
                    skip_line(op, n, "host", "no host memory for the copy");
                }
            }
        }
    }
    return 0;
}
