/* SPDX-License-Identifier: MIT */
/* test_prims.c: clsort, clsort_by_key and clscan: every key and element type,
 * both orders, floats' -0.0, infinities and NaNs of either sign, stability,
 * values of every size from 1 to 16 bytes, n = 0, 1, 7, 1000, 2^20 + 3 and
 * 2^24, CL_EVENT_NOWAIT joined by clwait, in place, interior pointers, both
 * devices, the GPU kernels on a CPU (STDCL_PRIMS_LAYOUT=gpu), calls from
 * several threads at once, and every bad argument (an error, a message,
 * nothing written).  Results are checked
 * against orders and scans computed here, not by the library.  On stdcpu, or
 * on stdgpu with STDCL_TEST_CONTEXT=gpu (make check-gpu). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <pthread.h>

#include <cmocka.h>

#include <stdcl.h>

#include "test_util.h"

static CLCONTEXT* g_cp;

/* Where the test itself is sanitized (ASan, TSan), what only the kernels
 * change is left out: the largest arrays (2^24 keys; 2^20 + 3 for every type),
 * whose host checks took most of the run, the GPU kernels on a CPU, and the
 * scans of four of the six types, whose programs compile again in a sanitized
 * tree (its kernel include folder differs).  The library's host code runs the
 * same for any n, layout and type. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
static const int g_big = 0;
#else
static const int g_big = 1;
#endif

static const struct {
    int type;
    size_t size;
    const char* name;
} g_types[] = {{CL_REDUCE_INT, 4, "int"},     {CL_REDUCE_UINT, 4, "uint"},   {CL_REDUCE_LONG, 8, "long"},
               {CL_REDUCE_ULONG, 8, "ulong"}, {CL_REDUCE_FLOAT, 4, "float"}, {CL_REDUCE_DOUBLE, 8, "double"}};

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static int is_fp(int type) { return type == CL_REDUCE_FLOAT || type == CL_REDUCE_DOUBLE; }

static double as_double(int type, const void* p)
{
    switch (type) {
    case CL_REDUCE_FLOAT: return *(const float*)p;
    case CL_REDUCE_DOUBLE: return *(const double*)p;
    default: return 0;
    }
}

/* The order clsort promises, written out: -1, 0 (equal: ties) or 1. */
static int key_cmp(int type, const void* a, const void* b)
{
    switch (type) {
    case CL_REDUCE_INT: return (*(const int32_t*)a > *(const int32_t*)b) - (*(const int32_t*)a < *(const int32_t*)b);
    case CL_REDUCE_UINT:
        return (*(const uint32_t*)a > *(const uint32_t*)b) - (*(const uint32_t*)a < *(const uint32_t*)b);
    case CL_REDUCE_LONG: return (*(const int64_t*)a > *(const int64_t*)b) - (*(const int64_t*)a < *(const int64_t*)b);
    case CL_REDUCE_ULONG:
        return (*(const uint64_t*)a > *(const uint64_t*)b) - (*(const uint64_t*)a < *(const uint64_t*)b);
    default: {
        double x = as_double(type, a), y = as_double(type, b);
        int nx = isnan(x), ny = isnan(y);
        if (nx || ny) return nx - ny; /* every NaN after everything else; NaNs tie */
        if (x == 0 && y == 0) return (signbit(y) != 0) - (signbit(x) != 0); /* -0.0 before +0.0 */
        return (x > y) - (x < y);
    }
    }
}

/* Key i of a test array: pattern 0 random over the whole range, 1 few
 * distinct values, 2 sorted, 3 reversed; floats also get the special values
 * every 13th key. */
static void make_key(int type, void* dst, size_t i, size_t n, int pattern, uint64_t seed)
{
    uint64_t r = mix(seed * 1000003u + i);
    if (pattern == 1) r %= 5;
    if (pattern == 2) r = i * 7919;
    if (pattern == 3) r = (n - i) * 7919;
    switch (type) {
    case CL_REDUCE_INT: *(int32_t*)dst = pattern == 0 ? (int32_t)r : (int32_t)r - 3; break;
    case CL_REDUCE_UINT: *(uint32_t*)dst = (uint32_t)r; break;
    case CL_REDUCE_LONG: *(int64_t*)dst = pattern == 0 ? (int64_t)r : (int64_t)r - 3; break;
    case CL_REDUCE_ULONG: *(uint64_t*)dst = r; break;
    default: {
        static const double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, -NAN, 1e-310, -1e-310, 3.5, -3.5};
        double v = pattern == 0 ? ((double)(int64_t)r / 9.2e15) : (double)(int64_t)r - 3.0;
        if (i % 13 == 5) v = special[(r >> 8) % 10];
        if (type == CL_REDUCE_FLOAT)
            *(float*)dst = (float)v;
        else
            *(double*)dst = v;
    }
    }
}

/* keys: n keys of es bytes, sorted?  (descending: the order reversed, NaNs
 * first.)  Returns the first bad index, or n. */
static size_t first_unsorted(int type, const char* keys, size_t n, size_t es, int desc)
{
    for (size_t i = 1; i < n; i++) {
        int c = key_cmp(type, keys + (i - 1) * es, keys + i * es);
        if (desc ? c < 0 : c > 0) return i;
    }
    return n;
}

/* Sorts keys (n, es bytes each), with values (vs bytes each, value i holding
 * i in its first bytes), on device dn of g_cp; checks the order, that every
 * key is there once (values: the pairing and, for equal keys, the input
 * order).  vs 0: clsort. */
static void check_sort(int type, size_t es, size_t n, size_t vs, int pattern, unsigned dn, int flags)
{
    char* k = (char*)clmalloc(g_cp, n ? n * es : 1, 0);
    char* v = vs ? (char*)clmalloc(g_cp, n ? n * vs : 1, 0) : NULL;
    char* in = (char*)malloc(n ? n * es : 1);
    assert_non_null(k);
    assert_non_null(in);
    for (size_t i = 0; i < n; i++) {
        make_key(type, in + i * es, i, n, pattern, (uint64_t)n + (uint64_t)type * 31u + (uint64_t)vs);
        if (vs) {
            memset(v + i * vs, 0xA5, vs);
            uint32_t ix = (uint32_t)i;
            memcpy(v + i * vs, &ix, vs < 4 ? vs : 4);
        }
    }
    memcpy(k, in, n * es);
    assert_non_null(clmsync(g_cp, dn, k, CL_MEM_DEVICE | CL_EVENT_WAIT));
    if (vs) assert_non_null(clmsync(g_cp, dn, v, CL_MEM_DEVICE | CL_EVENT_WAIT));
    int rc = vs ? clsort_by_key(g_cp, dn, k, v, n, type, vs, flags) : clsort(g_cp, dn, k, n, type, flags);
    if (rc != 0) fail_msg("sort of %zu keys of type %d (values %zu bytes) on device %u: %d %s", n, type, vs, dn, rc,
                          clerror());
    if (flags & CL_EVENT_NOWAIT) assert_non_null(clwait(g_cp, dn, CL_KERNEL_EVENT));
    assert_non_null(clmsync(g_cp, dn, k, CL_MEM_HOST | CL_EVENT_WAIT));
    if (vs) assert_non_null(clmsync(g_cp, dn, v, CL_MEM_HOST | CL_EVENT_WAIT));
    int desc = (flags & CL_SORT_DESCENDING) != 0;
    size_t bad = first_unsorted(type, k, n, es, desc);
    if (bad != n) fail_msg("type %d, n %zu, pattern %d, desc %d, values %zu: out of order at %zu", type, n, pattern, desc, vs, bad);
    /* The same keys: as many of each bit pattern (a multiset hash), and NaNs. */
    uint64_t hin = 0, hout = 0, xin = 0, xout = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t a = 0, b = 0;
        memcpy(&a, in + i * es, es);
        memcpy(&b, k + i * es, es);
        hin += mix(a);
        hout += mix(b);
        xin ^= mix(a + 1);
        xout ^= mix(b + 1);
    }
    assert_true(hin == hout && xin == xout);
    if (vs) {
        unsigned char* seen = (unsigned char*)calloc(n ? n : 1, 1);
        for (size_t i = 0; i < n; i++) {
            uint32_t ix = 0;
            memcpy(&ix, v + i * vs, vs < 4 ? vs : 4);
            if (vs < 4) ix &= (uint32_t)((1ull << (8 * vs)) - 1);
            /* Values of fewer than 4 bytes hold the index's low bytes only. */
            if (vs >= 4 || n <= (1ull << (8 * vs))) {
                assert_true(ix < n);
                assert_false(seen[ix]);
                seen[ix] = 1;
                if (memcmp(k + i * es, in + (size_t)ix * es, es) != 0)
                    fail_msg("type %d, n %zu, values %zu: key %zu is not the key of its value (%u)", type, n, vs, i, ix);
                if (i > 0 && memcmp(k + (i - 1) * es, k + i * es, es) == 0) {
                    uint32_t prev = 0;
                    memcpy(&prev, v + (i - 1) * vs, vs < 4 ? vs : 4);
                    if (vs < 4) prev &= (uint32_t)((1ull << (8 * vs)) - 1);
                    if (prev >= ix) fail_msg("type %d, n %zu, values %zu: equal keys out of input order at %zu", type, n, vs, i);
                }
            }
            for (size_t b = 4; b < vs; b++) assert_int_equal((unsigned char)v[i * vs + b], 0xA5);
        }
        free(seen);
    }
    free(in);
    clfree(k);
    clfree(v);
}

static int setup(void** state)
{
    (void)state;
    const char* which = getenv("STDCL_TEST_CONTEXT");
    if (which && !strcmp(which, "gpu")) {
        g_cp = stdgpu;
        if (!g_cp) {
            fprintf(stderr, "test_prims: STDCL_TEST_CONTEXT=gpu and no stdgpu\n");
            return -1;
        }
        return 0;
    }
    if (tu_need_two_cpu_devices() != 0) return -1;
    g_cp = stdcpu;
    return 0;
}

static int teardown(void** state)
{
    (void)state;
    return 0;
}

static void test_clsort_every_type_and_order_at_small_sizes(void** state)
{
    (void)state;
    const size_t sizes[] = {0, 1, 2, 7, 1000, 4097};
    for (size_t t = 0; t < tu_countof(g_types); t++)
        for (size_t s = 0; s < tu_countof(sizes); s++)
            for (int pattern = 0; pattern < 4; pattern++)
                for (int desc = 0; desc < 2; desc++)
                    check_sort(g_types[t].type, g_types[t].size, sizes[s], 0, pattern, 0,
                               desc ? CL_SORT_DESCENDING : 0);
}

static void test_clsort_large_arrays(void** state)
{
    (void)state;
    for (size_t t = 0; t < tu_countof(g_types); t++)
        if (g_big || t == 0)
            check_sort(g_types[t].type, g_types[t].size, (1u << 20) + 3, 0, 0, 0, t % 2 ? CL_SORT_DESCENDING : 0);
    if (g_big) check_sort(CL_REDUCE_UINT, 4, 1u << 24, 0, 0, 0, 0);
}

static void test_clsort_by_key_is_stable_for_every_value_size(void** state)
{
    (void)state;
    check_sort(CL_REDUCE_INT, 4, 200, 1, 1, 0, 0); /* one-byte values: the index fits */
    for (size_t vs = 1; vs <= 16; vs++) {
        check_sort(CL_REDUCE_INT, 4, 1000, vs, 1, 0, 0);
        check_sort(CL_REDUCE_DOUBLE, 8, 1000, vs, 0, 0, vs % 2 ? CL_SORT_DESCENDING : 0);
    }
    for (size_t t = 0; t < tu_countof(g_types); t++)
        for (int desc = 0; desc < 2; desc++)
            check_sort(g_types[t].type, g_types[t].size, 70001, 4, 1, 0, desc ? CL_SORT_DESCENDING : 0);
    check_sort(CL_REDUCE_UINT, 4, (1u << 20) + 3, 8, 1, 0, 0);
    if (g_big) check_sort(CL_REDUCE_FLOAT, 4, (1u << 20) + 3, 4, 0, 0, 0);
}

static void test_clsort_nowait_and_the_second_device(void** state)
{
    (void)state;
    unsigned last = clgetndev(g_cp) - 1;
    check_sort(CL_REDUCE_FLOAT, 4, 100003, 0, 0, 0, CL_EVENT_NOWAIT);
    check_sort(CL_REDUCE_LONG, 8, 100003, 4, 1, last, CL_EVENT_NOWAIT | CL_SORT_DESCENDING);
    check_sort(CL_REDUCE_UINT, 4, 100003, 0, 2, last, 0);
}

/* The GPU kernels (work-groups of 256 ranking in local memory) on a CPU
 * device: the portable path of GPUs without NVIDIA's warp instructions. */
static void test_clsort_gpu_kernels_on_a_cpu(void** state)
{
    (void)state;
    if (!g_big) skip();
    setenv("STDCL_PRIMS_LAYOUT", "gpu", 1);
    check_sort(CL_REDUCE_INT, 4, 7, 0, 0, 0, 0);
    check_sort(CL_REDUCE_FLOAT, 4, 9001, 0, 0, 0, CL_SORT_DESCENDING);
    check_sort(CL_REDUCE_ULONG, 8, 9001, 0, 1, 0, 0);
    check_sort(CL_REDUCE_DOUBLE, 8, 5000, 12, 0, 0, 0);
    check_sort(CL_REDUCE_UINT, 4, 70001, 4, 1, 0, CL_SORT_DESCENDING);
    unsetenv("STDCL_PRIMS_LAYOUT");
}

/* A sort of part of an allocation (an interior pointer) leaves the rest alone. */
static void test_clsort_interior_pointer_sorts_that_part_only(void** state)
{
    (void)state;
    enum { M = 5000 };
    int* a = (int*)clmalloc(g_cp, M * sizeof(int), 0);
    assert_non_null(a);
    for (int i = 0; i < M; i++) a[i] = M - i;
    assert_non_null(clmsync(g_cp, 0, a, CL_MEM_DEVICE));
    assert_int_equal(clsort(g_cp, 0, a + 1000, 2000, CL_REDUCE_INT, 0), 0);
    assert_non_null(clmsync(g_cp, 0, a, CL_MEM_HOST));
    for (int i = 0; i < M; i++) {
        int want = i < 1000 || i >= 3000 ? M - i : (M - 2999) + (i - 1000);
        if (a[i] != want) fail_msg("a[%d] = %d, want %d", i, a[i], want);
    }
    clfree(a);
}

/* The host's scan of n elements of type at in (as clscan's contract says). */
static void host_scan(int type, int op, int excl, const void* in, void* out, size_t n)
{
#define HS(T, ID_MIN, ID_MAX, MINF, MAXF)                                                                             \
    do {                                                                                                               \
        const T* x = (const T*)in;                                                                                     \
        T* y = (T*)out;                                                                                                \
        T acc = op == CL_REDUCE_SUM ? (T)0 : op == CL_REDUCE_MIN ? ID_MIN : ID_MAX;                                    \
        for (size_t i = 0; i < n; i++) {                                                                               \
            T v = x[i], nx = op == CL_REDUCE_SUM ? (T)(acc + v) : op == CL_REDUCE_MIN ? MINF(acc, v) : MAXF(acc, v); \
            y[i] = excl ? acc : nx;                                                                                    \
            acc = nx;                                                                                                  \
        }                                                                                                              \
    } while (0)
#define IMIN(a, b) ((b) < (a) ? (b) : (a))
#define IMAX(a, b) ((b) > (a) ? (b) : (a))
    switch (type) {
    case CL_REDUCE_INT: {
        /* Wrapping sums, as unsigned. */
        const int32_t* x = (const int32_t*)in;
        int32_t* y = (int32_t*)out;
        int32_t acc = op == CL_REDUCE_SUM ? 0 : op == CL_REDUCE_MIN ? INT32_MAX : INT32_MIN;
        for (size_t i = 0; i < n; i++) {
            int32_t nx = op == CL_REDUCE_SUM ? (int32_t)((uint32_t)acc + (uint32_t)x[i])
                         : op == CL_REDUCE_MIN ? IMIN(acc, x[i])
                                               : IMAX(acc, x[i]);
            y[i] = excl ? acc : nx;
            acc = nx;
        }
        break;
    }
    case CL_REDUCE_LONG: {
        const int64_t* x = (const int64_t*)in;
        int64_t* y = (int64_t*)out;
        int64_t acc = op == CL_REDUCE_SUM ? 0 : op == CL_REDUCE_MIN ? INT64_MAX : INT64_MIN;
        for (size_t i = 0; i < n; i++) {
            int64_t nx = op == CL_REDUCE_SUM ? (int64_t)((uint64_t)acc + (uint64_t)x[i])
                         : op == CL_REDUCE_MIN ? IMIN(acc, x[i])
                                               : IMAX(acc, x[i]);
            y[i] = excl ? acc : nx;
            acc = nx;
        }
        break;
    }
    case CL_REDUCE_UINT: HS(uint32_t, UINT32_MAX, 0, IMIN, IMAX); break;
    case CL_REDUCE_ULONG: HS(uint64_t, UINT64_MAX, 0, IMIN, IMAX); break;
    case CL_REDUCE_FLOAT: HS(float, INFINITY, -INFINITY, fminf, fmaxf); break;
    default: HS(double, INFINITY, -INFINITY, fmin, fmax); break;
    }
#undef HS
}

/* Element i of a scan's input: small integers (float sums stay exact), large
 * ones for the integer sums (they wrap), and NaNs in float MIN and MAX. */
static void make_elem(int type, int op, void* dst, size_t i, uint64_t seed)
{
    uint64_t r = mix(seed * 7777u + i);
    int64_t small = (int64_t)(r % 201) - 100;
    switch (type) {
    case CL_REDUCE_INT: *(int32_t*)dst = op == CL_REDUCE_SUM ? (int32_t)r : (int32_t)small; break;
    case CL_REDUCE_UINT: *(uint32_t*)dst = (uint32_t)r; break;
    case CL_REDUCE_LONG: *(int64_t*)dst = (int64_t)r; break;
    case CL_REDUCE_ULONG: *(uint64_t*)dst = r; break;
    case CL_REDUCE_FLOAT: *(float*)dst = op != CL_REDUCE_SUM && i % 11 == 3 ? NAN : (float)small; break;
    default: *(double*)dst = op != CL_REDUCE_SUM && i % 11 == 3 ? NAN : (double)small; break;
    }
}

/* clscan of n elements (in place when inplace) on device dn, or every device
 * (CL_ALL_DEVICES: each brings back its slice), against host_scan. */
static void check_scan(size_t t, int op, int excl, size_t n, int inplace, unsigned dn, int flags)
{
    const int type = g_types[t].type;
    const size_t es = g_types[t].size;
    char* in = (char*)clmalloc(g_cp, n * es + 64, 0);
    char* out = inplace ? in : (char*)clmalloc(g_cp, n * es + 64, 0);
    char* want = (char*)malloc(n * es + 1);
    assert_non_null(in);
    assert_non_null(out);
    for (size_t i = 0; i < n; i++) make_elem(type, op, in + i * es, i, n + t);
    host_scan(type, op, excl, in, want, n);
    unsigned nd = clgetndev(g_cp);
    for (unsigned d = 0; d < nd; d++)
        if (dn == CL_ALL_DEVICES || d == dn) assert_non_null(clmsync(g_cp, d, in, CL_MEM_DEVICE));
    int rc = clscan(g_cp, dn, in, out, n, type, op, flags | (excl ? CL_SCAN_EXCLUSIVE : 0));
    if (rc != 0) fail_msg("clscan of %zu %s: %d %s", n, g_types[t].name, rc, clerror());
    if (dn == CL_ALL_DEVICES) {
        for (unsigned d = 0; d < nd; d++) {
            size_t first = n / nd * d + (d < n % nd ? d : n % nd), count = n / nd + (d < n % nd ? 1 : 0);
            if (flags & CL_EVENT_NOWAIT) assert_non_null(clwait(g_cp, d, CL_KERNEL_EVENT));
            if (count) assert_non_null(clmsyncn(g_cp, d, out + first * es, count * es, CL_MEM_HOST));
        }
    } else {
        if (flags & CL_EVENT_NOWAIT) assert_non_null(clwait(g_cp, dn, CL_KERNEL_EVENT));
        assert_non_null(clmsync(g_cp, dn, out, CL_MEM_HOST));
    }
    for (size_t i = 0; i < n; i++)
        if (memcmp(out + i * es, want + i * es, es) != 0) {
            double g = is_fp(type) ? as_double(type, out + i * es) : 0, w = is_fp(type) ? as_double(type, want + i * es) : 0;
            if (!(isnan(g) && isnan(w)))
                fail_msg("clscan %s op %d excl %d n %zu inplace %d device %d: element %zu differs (%g, want %g)",
                         g_types[t].name, op, excl, n, inplace, (int)dn, i, g, w);
        }
    free(want);
    if (!inplace) clfree(out);
    clfree(in);
}

static void test_clscan_every_type_op_and_kind(void** state)
{
    (void)state;
    const size_t sizes[] = {1, 7, 1000, 4097, 100003};
    for (size_t t = 0; t < tu_countof(g_types); t++)
        for (int op = CL_REDUCE_SUM; op <= CL_REDUCE_MAX; op++)
            for (int excl = 0; excl < 2; excl++)
                for (size_t s = 0; s < tu_countof(sizes); s++)
                    if (g_big || t == 0 || t == 5) check_scan(t, op, excl, sizes[s], s % 2, 0, 0);
    check_scan(g_big ? 1 : 0, CL_REDUCE_SUM, 0, (1u << 20) + 3, 0, 0, 0);
    if (g_big) check_scan(4, CL_REDUCE_MAX, 1, (1u << 20) + 3, 1, 0, CL_EVENT_NOWAIT);
}

static void test_clscan_over_every_device_carries_between_slices(void** state)
{
    (void)state;
    for (size_t t = 0; t < tu_countof(g_types); t++) {
        if (!g_big && t != 0 && t != 5) continue;
        check_scan(t, CL_REDUCE_SUM, 0, 100003, 0, CL_ALL_DEVICES, 0);
        check_scan(t, CL_REDUCE_MIN, 1, 1001, 1, CL_ALL_DEVICES, CL_EVENT_NOWAIT);
    }
    check_scan(0, CL_REDUCE_SUM, 1, 1, 0, CL_ALL_DEVICES, 0); /* fewer elements than devices */
}

/* The watchdog of test_clscan_nowait_over_every_device_returns_at_once: it
 * completes the gate itself if the call has not returned after 20 s. */
struct gate {
    cl_event ev;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int returned, fired;
};

static void* gate_watchdog(void* arg)
{
    struct gate* g = (struct gate*)arg;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 20;
    pthread_mutex_lock(&g->mu);
    while (!g->returned)
        if (pthread_cond_timedwait(&g->cv, &g->mu, &until) != 0) break;
    if (!g->returned) {
        g->fired = 1;
        clSetUserEventStatus(g->ev, CL_COMPLETE);
    }
    pthread_mutex_unlock(&g->mu);
    return NULL;
}

/* clscan(CL_ALL_DEVICES, CL_EVENT_NOWAIT) returns before its kernels run: every
 * device's queue is held by a barrier on a user event the test completes only
 * after the call returned (a call that waited on any device would wait for the
 * watchdog).  Then clwait joins the scans, and the slices carry from device to
 * device as in a waited call. */
static void test_clscan_nowait_over_every_device_returns_at_once(void** state)
{
    (void)state;
    const size_t n = 300007;
    unsigned nd = clgetndev(g_cp);
    int* in = (int*)clmalloc(g_cp, n * sizeof(int), 0);
    int* out = (int*)clmalloc(g_cp, n * sizeof(int), 0);
    int* want = (int*)malloc(n * sizeof(int));
    assert_non_null(in);
    assert_non_null(out);
    assert_non_null(want);
    for (size_t i = 0; i < n; i++) in[i] = (int)(mix(i) % 1000) - 500;
    host_scan(CL_REDUCE_INT, CL_REDUCE_SUM, 0, in, want, n);
    for (unsigned d = 0; d < nd; d++) assert_non_null(clmsync(g_cp, d, in, CL_MEM_DEVICE));
    /* Its programs built (a build waits), then every queue held. */
    assert_int_equal(clscan(g_cp, CL_ALL_DEVICES, in, out, n, CL_REDUCE_INT, CL_REDUCE_SUM, 0), 0);
    cl_context ctx = NULL;
    assert_int_equal(clGetCommandQueueInfo(stdcl_queue(g_cp, 0), CL_QUEUE_CONTEXT, sizeof ctx, &ctx, NULL), CL_SUCCESS);
    struct gate g = {NULL, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0};
    cl_int err = CL_SUCCESS;
    g.ev = clCreateUserEvent(ctx, &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_event held[8] = {NULL};
    assert_true(nd <= 8);
    for (unsigned d = 0; d < nd; d++) {
        cl_command_queue q = stdcl_queue(g_cp, d);
        assert_int_equal(clEnqueueBarrierWithWaitList(q, 1, &g.ev, &held[d]), CL_SUCCESS);
        clFlush(q);
    }
    pthread_t watchdog;
    assert_int_equal(pthread_create(&watchdog, NULL, gate_watchdog, &g), 0);
    int rc = clscan(g_cp, CL_ALL_DEVICES, in, out, n, CL_REDUCE_INT, CL_REDUCE_SUM, CL_EVENT_NOWAIT);
    pthread_mutex_lock(&g.mu);
    g.returned = 1;
    int fired = g.fired;
    pthread_cond_signal(&g.cv);
    pthread_mutex_unlock(&g.mu);
    cl_int status = CL_COMPLETE;
    clGetEventInfo(held[0], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
    if (!fired) clSetUserEventStatus(g.ev, CL_COMPLETE);
    pthread_join(watchdog, NULL);
    if (rc != 0) fail_msg("clscan NOWAIT over every device: %d %s", rc, clerror());
    if (fired) fail_msg("clscan(CL_ALL_DEVICES, CL_EVENT_NOWAIT) waited for its kernels (20 s, until the watchdog)");
    assert_true(status != CL_COMPLETE); /* the queues were still held when it returned */
    for (unsigned d = 0; d < nd; d++) {
        size_t first = n / nd * d + (d < n % nd ? d : n % nd), count = n / nd + (d < n % nd ? 1 : 0);
        assert_non_null(clwait(g_cp, d, CL_KERNEL_EVENT));
        assert_non_null(clmsyncn(g_cp, d, out + first, count * sizeof(int), CL_MEM_HOST));
        clReleaseEvent(held[d]);
    }
    for (size_t i = 0; i < n; i++)
        if (out[i] != want[i]) fail_msg("element %zu: %d, want %d", i, out[i], want[i]);
    clReleaseEvent(g.ev);
    free(want);
    clfree(out);
    clfree(in);
}

static void test_clscan_gpu_kernels_on_a_cpu(void** state)
{
    (void)state;
    if (!g_big) skip();
    setenv("STDCL_PRIMS_LAYOUT", "gpu", 1);
    check_scan(0, CL_REDUCE_SUM, 0, 9001, 0, 0, 0);
    check_scan(4, CL_REDUCE_MIN, 1, 9001, 1, 0, 0);
    check_scan(5, CL_REDUCE_SUM, 1, 70001, 0, CL_ALL_DEVICES, 0);
    /* The one-pass scan (all but float and double sums): every type, more tiles
     * than one look-back window (32 tiles of 8192 4-byte or 4096 8-byte
     * elements), whole tiles only, one element, in place, exclusive, NOWAIT,
     * over both devices; the state grows and is reused from call to call. */
    const size_t sizes[] = {270001, 8192, 1, 300001};
    for (size_t t = 0; t < tu_countof(g_types); t++)
        for (size_t s = 0; s < tu_countof(sizes); s++)
            check_scan(t, t == 4 ? CL_REDUCE_MAX : t == 5 ? CL_REDUCE_MIN : CL_REDUCE_SUM, (int)(s % 2), sizes[s],
                       (int)(t % 2), 0, s == 3 ? CL_EVENT_NOWAIT : 0);
    check_scan(2, CL_REDUCE_MAX, 0, 270001, 0, CL_ALL_DEVICES, CL_EVENT_NOWAIT);
    /* The same programs with the look-back turned off give the same results. */
    setenv("STDCL_SCAN_LOOKBACK", "0", 1);
    check_scan(1, CL_REDUCE_SUM, 1, 270001, 0, 0, 0);
    unsetenv("STDCL_SCAN_LOOKBACK");
    unsetenv("STDCL_PRIMS_LAYOUT");
}

static void test_clreduce_unsigned_types(void** state)
{
    (void)state;
    enum { M = 100003 };
    uint32_t* u = (uint32_t*)clmalloc(g_cp, M * 4, 0);
    uint64_t* ul = (uint64_t*)clmalloc(g_cp, M * 8, 0);
    uint32_t su = 0, mu = UINT32_MAX, xu = 0;
    uint64_t sl = 0, ml = UINT64_MAX, xl = 0;
    for (size_t i = 0; i < M; i++) {
        u[i] = (uint32_t)mix(i);
        ul[i] = mix(i + 5);
        su += u[i], sl += ul[i];
        mu = u[i] < mu ? u[i] : mu, ml = ul[i] < ml ? ul[i] : ml;
        xu = u[i] > xu ? u[i] : xu, xl = ul[i] > xl ? ul[i] : xl;
    }
    assert_non_null(clmsync(g_cp, 0, u, CL_MEM_DEVICE));
    assert_non_null(clmsync(g_cp, 0, ul, CL_MEM_DEVICE));
    uint32_t r32;
    uint64_t r64;
    assert_int_equal(clreduce(g_cp, 0, u, M, CL_REDUCE_UINT, CL_REDUCE_SUM, &r32), 0);
    assert_true(r32 == su);
    assert_int_equal(clreduce(g_cp, 0, u, M, CL_REDUCE_UINT, CL_REDUCE_MIN, &r32), 0);
    assert_true(r32 == mu);
    assert_int_equal(clreduce(g_cp, 0, u, M, CL_REDUCE_UINT, CL_REDUCE_MAX, &r32), 0);
    assert_true(r32 == xu);
    assert_int_equal(clreduce(g_cp, 0, ul, M, CL_REDUCE_ULONG, CL_REDUCE_SUM, &r64), 0);
    assert_true(r64 == sl);
    assert_int_equal(clreduce(g_cp, 0, ul, M, CL_REDUCE_ULONG, CL_REDUCE_MIN, &r64), 0);
    assert_true(r64 == ml);
    assert_int_equal(clreduce(g_cp, 0, ul, M, CL_REDUCE_ULONG, CL_REDUCE_MAX, &r64), 0);
    assert_true(r64 == xl);
    clfree(u);
    clfree(ul);
}

/* Each bad argument: the error, a message naming the call and the argument,
 * and the keys (host and device copy) as they were. */
static void expect_fail(int rc, int code, const char* words)
{
    const char* msg = clerror();
    if (rc != code) fail_msg("rc %d, want %d (%s)", rc, code, msg);
    assert_contains(msg, words);
}

static void test_bad_arguments_fail_with_a_message_and_write_nothing(void** state)
{
    (void)state;
    enum { M = 1000 };
    int* k = (int*)clmalloc(g_cp, M * sizeof(int), 0);
    int* v = (int*)clmalloc(g_cp, M * sizeof(int), 0);
    int* other = (int*)malloc(M * sizeof(int));
    for (int i = 0; i < M; i++) k[i] = M - i, v[i] = i;
    assert_non_null(clmsync(g_cp, 0, k, CL_MEM_DEVICE));
    assert_non_null(clmsync(g_cp, 0, v, CL_MEM_DEVICE));
    expect_fail(clsort(NULL, 0, k, M, CL_REDUCE_INT, 0), STDCL_EINVAL, "clsort");
    expect_fail(clsort(g_cp, 99, k, M, CL_REDUCE_INT, 0), STDCL_EINVAL, "clsort");
    expect_fail(clsort(g_cp, CL_ALL_DEVICES, k, M, CL_REDUCE_INT, 0), STDCL_EINVAL, "clsort: CL_ALL_DEVICES");
    expect_fail(clsort(g_cp, 0, k, M + 1, CL_REDUCE_INT, 0), STDCL_EINVAL, "pass the end of the allocation");
    expect_fail(clsort(g_cp, 0, k, M / 2 + 1, CL_REDUCE_LONG, 0), STDCL_EINVAL, "clsort: keys");
    expect_fail(clsort(g_cp, 0, (char*)k + 2, 10, CL_REDUCE_INT, 0), STDCL_EINVAL, "not aligned");
    expect_fail(clsort(g_cp, 0, other, M, CL_REDUCE_INT, 0), STDCL_ENOENT, "not memory returned by clmalloc");
    expect_fail(clsort(g_cp, 0, NULL, M, CL_REDUCE_INT, 0), STDCL_EINVAL, "keys is NULL");
    expect_fail(clsort(g_cp, 0, k, M, 0, 0), STDCL_EINVAL, "unknown key type 0");
    expect_fail(clsort(g_cp, 0, k, M, 7, 0), STDCL_EINVAL, "unknown key type 7");
    expect_fail(clsort(g_cp, 0, k, M, CL_REDUCE_INT, CL_SCAN_EXCLUSIVE), STDCL_EINVAL, "unknown flags");
    expect_fail(clsort(g_cp, 0, k, M, CL_REDUCE_INT, CL_EVENT_WAIT | CL_EVENT_NOWAIT), STDCL_EINVAL, "together");
    expect_fail(clsort_by_key(g_cp, 0, k, v, M, CL_REDUCE_INT, 0, 0), STDCL_EINVAL, "value_size 0");
    expect_fail(clsort_by_key(g_cp, 0, k, v, M, CL_REDUCE_INT, 17, 0), STDCL_EINVAL, "value_size 17");
    expect_fail(clsort_by_key(g_cp, 0, k, k, M, CL_REDUCE_INT, 4, 0), STDCL_EINVAL, "the same array");
    expect_fail(clsort_by_key(g_cp, 0, k, k + 10, 20, CL_REDUCE_INT, 4, 0), STDCL_EINVAL, "overlap");
    expect_fail(clsort_by_key(g_cp, 0, k, v, M, CL_REDUCE_INT, 8, 0), STDCL_EINVAL, "clsort_by_key: values");
    expect_fail(clsort_by_key(g_cp, 0, k, other, M, CL_REDUCE_INT, 4, 0), STDCL_ENOENT, "values");
    expect_fail(clscan(g_cp, 0, k, v, M, CL_REDUCE_INT, 0, 0), STDCL_EINVAL, "unknown operation 0");
    expect_fail(clscan(g_cp, 0, k, v, M, CL_REDUCE_INT, 4, 0), STDCL_EINVAL, "unknown operation 4");
    expect_fail(clscan(g_cp, 0, k, v, M, 9, CL_REDUCE_SUM, 0), STDCL_EINVAL, "unknown element type 9");
    expect_fail(clscan(g_cp, 0, k, k + 1, M - 1, CL_REDUCE_INT, CL_REDUCE_SUM, 0), STDCL_EINVAL, "overlap");
    expect_fail(clscan(g_cp, 0, k, v, M + 1, CL_REDUCE_INT, CL_REDUCE_SUM, 0), STDCL_EINVAL, "clscan: in");
    expect_fail(clscan(g_cp, 0, k, other, M, CL_REDUCE_INT, CL_REDUCE_SUM, 0), STDCL_ENOENT, "clscan: out");
    expect_fail(clscan(g_cp, 0, k, v, M, CL_REDUCE_INT, CL_REDUCE_SUM, CL_SORT_DESCENDING), STDCL_EINVAL,
                "unknown flags");
    /* Memory kernels only read is not written, nor memory they only write read. */
    int* ro = (int*)clmalloc(g_cp, M * sizeof(int), CL_MEM_RO);
    int* wo = (int*)clmalloc(g_cp, M * sizeof(int), CL_MEM_WO);
    assert_non_null(ro);
    assert_non_null(wo);
    expect_fail(clsort(g_cp, 0, ro, M, CL_REDUCE_INT, 0), STDCL_EINVAL, "is CL_MEM_RO (kernels only read it)");
    expect_fail(clsort_by_key(g_cp, 0, k, ro, M, CL_REDUCE_INT, 4, 0), STDCL_EINVAL, "values: the allocation");
    expect_fail(clsort(g_cp, 0, wo, M, CL_REDUCE_INT, 0), STDCL_EINVAL, "is CL_MEM_WO (kernels only write it)");
    expect_fail(clscan(g_cp, 0, k, ro, M, CL_REDUCE_INT, CL_REDUCE_SUM, 0), STDCL_EINVAL, "clscan: out");
    expect_fail(clscan(g_cp, 0, wo, v, M, CL_REDUCE_INT, CL_REDUCE_SUM, 0), STDCL_EINVAL, "clscan: in");
    expect_fail(clscan(g_cp, 0, wo, wo, M, CL_REDUCE_INT, CL_REDUCE_SUM, 0), STDCL_EINVAL, "CL_MEM_WO");
    int wsum = 12345;
    expect_fail(clreduce(g_cp, 0, wo, M, CL_REDUCE_INT, CL_REDUCE_SUM, &wsum), STDCL_EINVAL,
                "is CL_MEM_WO (kernels only write it), and clreduce reads it");
    assert_int_equal(wsum, 12345);
    /* A read-only input and a write-only output are what a scan wants. */
    for (int i = 0; i < M; i++) ro[i] = 1;
    assert_non_null(clmsync(g_cp, 0, ro, CL_MEM_DEVICE));
    assert_int_equal(clscan(g_cp, 0, ro, wo, M, CL_REDUCE_INT, CL_REDUCE_SUM, 0), 0);
    assert_non_null(clmsync(g_cp, 0, wo, CL_MEM_HOST));
    assert_int_equal(wo[M - 1], M);
    clfree(ro);
    clfree(wo);
    /* Nothing was written: the host copies, and the device copies brought back. */
    for (int i = 0; i < M; i++) assert_true(k[i] == M - i && v[i] == i);
    assert_non_null(clmsync(g_cp, 0, k, CL_MEM_HOST));
    assert_non_null(clmsync(g_cp, 0, v, CL_MEM_HOST));
    for (int i = 0; i < M; i++) assert_true(k[i] == M - i && v[i] == i);
    /* n == 0 is no error and does nothing. */
    assert_int_equal(clsort(g_cp, 0, k, 0, CL_REDUCE_INT, 0), 0);
    assert_int_equal(clscan(g_cp, 0, k, v, 0, CL_REDUCE_INT, CL_REDUCE_SUM, 0), 0);
    free(other);
    clfree(k);
    clfree(v);
}

/* Calls from several threads at once, on both devices: each gets its own
 * answer (calls on one context share its kernels and scratch memory one at a
 * time). */
struct thread_job {
    unsigned dn;
    uint64_t seed;
    int ok;
};

static void* thread_body(void* arg)
{
    struct thread_job* j = (struct thread_job*)arg;
    enum { M = 20011 };
    int32_t* k = (int32_t*)clmalloc(g_cp, M * sizeof(int32_t), 0);
    uint32_t* s = (uint32_t*)clmalloc(g_cp, M * sizeof(uint32_t), 0);
    j->ok = k && s;
    for (int round = 0; j->ok && round < 5; round++) {
        int64_t sum = 0;
        for (size_t i = 0; i < M; i++) {
            k[i] = (int32_t)mix(j->seed + (uint64_t)round * M + i);
            s[i] = (uint32_t)(i % 3);
            sum += k[i];
        }
        int flags = round % 2 ? CL_EVENT_NOWAIT : 0;
        j->ok = clmsync(g_cp, j->dn, k, CL_MEM_DEVICE) && clmsync(g_cp, j->dn, s, CL_MEM_DEVICE) &&
                clsort(g_cp, j->dn, k, M, CL_REDUCE_INT, flags) == 0 &&
                clscan(g_cp, j->dn, s, s, M, CL_REDUCE_UINT, CL_REDUCE_SUM, flags) == 0 &&
                (!flags || clwait(g_cp, j->dn, CL_KERNEL_EVENT)) && clmsync(g_cp, j->dn, k, CL_MEM_HOST) &&
                clmsync(g_cp, j->dn, s, CL_MEM_HOST);
        if (!j->ok) fprintf(stderr, "thread on device %u: %s\n", j->dn, clerror());
        for (size_t i = 0; j->ok && i < M; i++) {
            sum -= k[i];
            if (i > 0 && k[i - 1] > k[i]) j->ok = 0;
        }
        uint32_t run = 0;
        for (size_t i = 0; j->ok && i < M; i++) {
            run += (uint32_t)(i % 3);
            if (s[i] != run) j->ok = 0;
        }
        if (sum != 0) j->ok = 0;
    }
    clfree(k);
    clfree(s);
    return NULL;
}

static void test_calls_from_several_threads(void** state)
{
    (void)state;
    enum { T = 6 };
    pthread_t th[T];
    struct thread_job jobs[T];
    for (unsigned t = 0; t < T; t++) {
        jobs[t].dn = t % clgetndev(g_cp);
        jobs[t].seed = 1000u + t;
        jobs[t].ok = 0;
        assert_int_equal(pthread_create(&th[t], NULL, thread_body, &jobs[t]), 0);
    }
    for (unsigned t = 0; t < T; t++) {
        pthread_join(th[t], NULL);
        if (!jobs[t].ok) fail_msg("thread %u (device %u): a wrong result or a failed call", t, jobs[t].dn);
    }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_clsort_every_type_and_order_at_small_sizes),
    cmocka_unit_test(test_clsort_large_arrays),
    cmocka_unit_test(test_clsort_by_key_is_stable_for_every_value_size),
    cmocka_unit_test(test_clsort_nowait_and_the_second_device),
    cmocka_unit_test(test_clsort_gpu_kernels_on_a_cpu),
    cmocka_unit_test(test_clsort_interior_pointer_sorts_that_part_only),
    cmocka_unit_test(test_clscan_every_type_op_and_kind),
    cmocka_unit_test(test_clscan_over_every_device_carries_between_slices),
    cmocka_unit_test(test_clscan_nowait_over_every_device_returns_at_once),
    cmocka_unit_test(test_clscan_gpu_kernels_on_a_cpu),
    cmocka_unit_test(test_clreduce_unsigned_types),
    cmocka_unit_test(test_bad_arguments_fail_with_a_message_and_write_nothing),
    cmocka_unit_test(test_calls_from_several_threads),
};

int main(int argc, char** argv) { return tu_run_tests(argc, argv, "prims", tests, setup, teardown); }
