/* SPDX-License-Identifier: MIT */
/* test_reduce.c: clreduce: sum, min and max of float, double, int and long
 * arrays on one device and on both, sizes that are not multiples of
 * anything, interior pointers, both layouts (STDCL_REDUCE_LAYOUT), and every
 * bad argument.  On stdcpu's two PoCL devices; on stdgpu with
 * STDCL_TEST_CONTEXT=gpu (make check-gpu). */
#include <setjmp.h>
#include <stdarg.h>
#include <math.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <stdcl.h>

#include "test_util.h"

#define N 100003

static CLCONTEXT* g_cp;  /* stdcpu; stdgpu with STDCL_TEST_CONTEXT=gpu (make check-gpu) */
static unsigned g_dev1;  /* device 1, or 0 where the context has one device */
static float* g_f;
static double* g_d;
static int* g_i;
static long* g_l;

static void to_devices(void* p)
{
    for (unsigned d = 0; d < clgetndev(g_cp); d++) assert_non_null(clmsync(g_cp, d, p, CL_MEM_DEVICE));
}

static int setup(void** state)
{
    (void)state;
    const char* which = getenv("STDCL_TEST_CONTEXT");
    if (which && strcmp(which, "gpu") == 0) {
        if (!stdgpu) {
            fprintf(stderr, "test_reduce: STDCL_TEST_CONTEXT=gpu and no stdgpu\n");
            return -1;
        }
        g_cp = stdgpu;
    } else {
        if (tu_need_two_cpu_devices() != 0) return -1;
        g_cp = stdcpu;
    }
    g_dev1 = clgetndev(g_cp) > 1 ? 1 : 0;
    g_f = (float*)clmalloc(g_cp, N * sizeof(float), 0);
    g_d = (double*)clmalloc(g_cp, N * sizeof(double), 0);
    g_i = (int*)clmalloc(g_cp, N * sizeof(int), 0);
    g_l = (long*)clmalloc(g_cp, N * sizeof(long), 0);
    if (!g_f || !g_d || !g_i || !g_l) return -1;
    for (size_t k = 0; k < N; k++) {
        unsigned h = (unsigned)(k * 2654435761u);
        g_f[k] = (float)(h % 20001) / 100.0f - 100.0f;
        g_d[k] = (double)(h % 200001) / 1000.0 - 100.0;
        g_i[k] = (int)(h % 2000001) - 1000000;
        g_l[k] = (long)(h % 2000000001u) * 4096L - 4096000000000L;
    }
    for (unsigned d = 0; d < clgetndev(g_cp); d++) {
        clmsync(g_cp, d, g_f, CL_MEM_DEVICE);
        clmsync(g_cp, d, g_d, CL_MEM_DEVICE);
        clmsync(g_cp, d, g_i, CL_MEM_DEVICE);
        clmsync(g_cp, d, g_l, CL_MEM_DEVICE);
    }
    return 0;
}

static int teardown(void** state)
{
    (void)state;
    clfree(g_f);
    clfree(g_d);
    clfree(g_i);
    clfree(g_l);
    return 0;
}

/* The host's answer over x[0..n) of elem, summed in acc (one function a
 * type: host_f, host_d, host_i, host_l). */
#define HOST_REDUCE(name, elem, acc)                                                                                   \
    static acc name(const elem* x, size_t n, int op)                                                                   \
    {                                                                                                                  \
        acc a = x[0];                                                                                                  \
        for (size_t k = 1; k < n; k++)                                                                                 \
            a = op == CL_REDUCE_SUM ? a + x[k] : op == CL_REDUCE_MIN ? (x[k] < a ? x[k] : a) : (x[k] > a ? x[k] : a);  \
        return a;                                                                                                      \
    }
HOST_REDUCE(host_f, float, double)
HOST_REDUCE(host_d, double, double)
HOST_REDUCE(host_i, int, long long)
HOST_REDUCE(host_l, long, long)

/* Every type and op over x[off..off+n) on devnum. */
static void check_all(unsigned devnum, size_t off, size_t n)
{
    for (int op = CL_REDUCE_SUM; op <= CL_REDUCE_MAX; op++) {
        float rf = 0;
        double rd = 0;
        int ri = 0;
        long rl = 0;
        assert_int_equal(clreduce(g_cp, devnum, g_f + off, n, CL_REDUCE_FLOAT, op, &rf), 0);
        double wf = host_f(g_f + off, n, op);
        assert_float_equal(rf, wf, op == CL_REDUCE_SUM ? 1e-4 * (double)n : 0.0);
        assert_int_equal(clreduce(g_cp, devnum, g_d + off, n, CL_REDUCE_DOUBLE, op, &rd), 0);
        assert_float_equal(rd, host_d(g_d + off, n, op), op == CL_REDUCE_SUM ? 1e-9 * (double)n : 0.0);
        assert_int_equal(clreduce(g_cp, devnum, g_i + off, n, CL_REDUCE_INT, op, &ri), 0);
        assert_int_equal(ri, (int)host_i(g_i + off, n, op));
        assert_int_equal(clreduce(g_cp, devnum, g_l + off, n, CL_REDUCE_LONG, op, &rl), 0);
        assert_true(rl == host_l(g_l + off, n, op));
    }
}

static void test_clreduce_every_type_and_op_on_both_devices(void** state)
{
    (void)state;
    check_all(CL_ALL_DEVICES, 0, N);
}

static void test_clreduce_every_type_and_op_on_one_device(void** state)
{
    (void)state;
    check_all(g_dev1, 0, N);
}

static void test_clreduce_sizes_that_are_not_multiples_of_anything(void** state)
{
    (void)state;
    const size_t sizes[] = {1, 2, 3, 7, 15, 16, 17, 31, 255, 257, 1023, 4099, 65537};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        check_all(CL_ALL_DEVICES, 0, sizes[k]);
        check_all(0, 0, sizes[k]);
    }
}

static void test_clreduce_interior_pointer_reduces_from_there(void** state)
{
    (void)state;
    check_all(CL_ALL_DEVICES, 333, 1001);
    check_all(0, N - 5, 5);
}

static void test_clreduce_strided_layout_gives_the_same_answers(void** state)
{
    (void)state;
    setenv("STDCL_REDUCE_LAYOUT", "strided", 1);
    check_all(CL_ALL_DEVICES, 0, N);
    check_all(0, 7, 1000);
    check_all(g_dev1, 0, 3);
    /* The kernel reads 16-byte vectors from the array's first 16-byte boundary:
     * every start and end around one, and arrays shorter than a vector. */
    for (size_t off = 0; off < 4; off++) {
        const size_t sizes[] = {1, 2, 3, 4, 5, 9, 4099};
        for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) check_all(0, off, sizes[k]);
        check_all(CL_ALL_DEVICES, off, 4099);
    }
    unsetenv("STDCL_REDUCE_LAYOUT");
}

static void test_clreduce_int_sum_wraps_around(void** state)
{
    (void)state;
    int* x = (int*)clmalloc(g_cp, 4 * sizeof(int), 0);
    x[0] = x[1] = x[2] = x[3] = 0x40000000;
    to_devices(x);
    int r = 0;
    assert_int_equal(clreduce(g_cp, 0, x, 4, CL_REDUCE_INT, CL_REDUCE_SUM, &r), 0);
    assert_int_equal(r, 0);
    clfree(x);
}

/* Float and double minimum and maximum skip NaNs, as fmin and fmax (and
 * clscan) do, in both layouts and over both devices; an array of NaNs only
 * gives the operation's identity (+inf for the minimum, -inf for the maximum). */
static void nan_case(const char* layout)
{
    enum { M = 5000 };
    setenv("STDCL_REDUCE_LAYOUT", layout, 1);
    float* f = (float*)clmalloc(g_cp, M * sizeof(float), 0);
    double* d = (double*)clmalloc(g_cp, M * sizeof(double), 0);
    assert_non_null(f);
    assert_non_null(d);
    for (int i = 0; i < M; i++) {
        f[i] = i % 7 == 3 ? NAN : (float)(i % 1000) - 500.0f;
        d[i] = i % 5 == 1 ? NAN : (double)(i % 900) - 400.0;
    }
    f[0] = d[0] = NAN;  /* the first element too */
    to_devices(f);
    to_devices(d);
    unsigned devs[2] = {0, CL_ALL_DEVICES};
    for (int k = 0; k < 2; k++) {
        float rf = 0;
        double rd = 0;
        assert_int_equal(clreduce(g_cp, devs[k], f, M, CL_REDUCE_FLOAT, CL_REDUCE_MIN, &rf), 0);
        assert_float_equal(rf, -500.0, 0.0);
        assert_int_equal(clreduce(g_cp, devs[k], f, M, CL_REDUCE_FLOAT, CL_REDUCE_MAX, &rf), 0);
        assert_float_equal(rf, 499.0, 0.0);
        assert_int_equal(clreduce(g_cp, devs[k], d, M, CL_REDUCE_DOUBLE, CL_REDUCE_MIN, &rd), 0);
        assert_float_equal(rd, -400.0, 0.0);
        assert_int_equal(clreduce(g_cp, devs[k], d, M, CL_REDUCE_DOUBLE, CL_REDUCE_MAX, &rd), 0);
        assert_float_equal(rd, 499.0, 0.0);
        /* A sum with a NaN in it is NaN. */
        assert_int_equal(clreduce(g_cp, devs[k], f, M, CL_REDUCE_FLOAT, CL_REDUCE_SUM, &rf), 0);
        assert_true(isnan(rf));
    }
    for (int i = 0; i < M; i++) f[i] = NAN;
    to_devices(f);
    float rf = 0;
    assert_int_equal(clreduce(g_cp, CL_ALL_DEVICES, f, M, CL_REDUCE_FLOAT, CL_REDUCE_MIN, &rf), 0);
    assert_true(isinf(rf) && rf > 0);
    assert_int_equal(clreduce(g_cp, CL_ALL_DEVICES, f, M, CL_REDUCE_FLOAT, CL_REDUCE_MAX, &rf), 0);
    assert_true(isinf(rf) && rf < 0);
    clfree(f);
    clfree(d);
    unsetenv("STDCL_REDUCE_LAYOUT");
}

static void test_clreduce_min_and_max_skip_nans(void** state)
{
    (void)state;
    nan_case("chunked");
    nan_case("strided");
}

static void test_clreduce_bad_arguments_fail_with_a_message(void** state)
{
    (void)state;
    float r = 42.0f;
    assert_int_equal(clreduce(g_cp, 0, g_f, N, 0, CL_REDUCE_SUM, &r), STDCL_EINVAL);
    assert_contains(clerror(), "clreduce: unknown element type 0");
    assert_int_equal(clreduce(g_cp, 0, g_f, N, CL_REDUCE_FLOAT, 9, &r), STDCL_EINVAL);
    assert_contains(clerror(), "clreduce: unknown operation 9");
    assert_int_equal(clreduce(g_cp, 0, g_f, N, CL_REDUCE_FLOAT, CL_REDUCE_SUM, NULL), STDCL_EINVAL);
    assert_contains(clerror(), "clreduce: the result pointer is NULL");
    assert_int_equal(clreduce(g_cp, 0, NULL, N, CL_REDUCE_FLOAT, CL_REDUCE_SUM, &r), STDCL_EINVAL);
    assert_contains(clerror(), "clreduce: the array pointer is NULL");
    assert_int_equal(clreduce(g_cp, 0, g_f, 0, CL_REDUCE_FLOAT, CL_REDUCE_SUM, &r), STDCL_EINVAL);
    assert_contains(clerror(), "clreduce: 0 elements");
    assert_int_equal(clreduce(g_cp, 0, g_f, N + 1, CL_REDUCE_FLOAT, CL_REDUCE_SUM, &r), STDCL_EINVAL);
    assert_contains(clerror(), "pass the end of the allocation (100003 fit)");
    assert_int_equal(clreduce(g_cp, 0, g_f + 10, N - 9, CL_REDUCE_FLOAT, CL_REDUCE_SUM, &r), STDCL_EINVAL);
    assert_contains(clerror(), "(99993 fit)");
    assert_int_equal(clreduce(g_cp, 0, (char*)g_f + 2, 10, CL_REDUCE_FLOAT, CL_REDUCE_SUM, &r), STDCL_EINVAL);
    assert_contains(clerror(), "is not aligned to its 4-byte float elements");
    float local_array[4] = {0};
    assert_int_equal(clreduce(g_cp, 0, local_array, 4, CL_REDUCE_FLOAT, CL_REDUCE_SUM, &r), STDCL_ENOENT);
    assert_contains(clerror(), "is not memory returned by clmalloc");
    assert_true(clreduce(g_cp, 5, g_f, N, CL_REDUCE_FLOAT, CL_REDUCE_SUM, &r) < 0);
    assert_contains(clerror(), "5");
    assert_true(clreduce(NULL, 0, g_f, N, CL_REDUCE_FLOAT, CL_REDUCE_SUM, &r) < 0);
    assert_non_null(clerror());
    if (stddev && stddev != g_cp) {
        assert_int_equal(clreduce(stddev, 0, g_f, N, CL_REDUCE_FLOAT, CL_REDUCE_SUM, &r), STDCL_EINVAL);
        assert_contains(clerror(), "attached to another context");
    }
    assert_float_equal(r, 42.0f, 0.0); /* nothing written on failure */
}

static void test_clreduce_repeated_calls_reuse_the_kernels(void** state)
{
    (void)state;
    /* the same context from the calling thread many times: the cached kernels
     * and partial buffers are reused without stale results */
    for (int k = 0; k < 20; k++) {
        int r = 0;
        size_t n = (size_t)(1 + k * 4999);
        assert_int_equal(clreduce(g_cp, CL_ALL_DEVICES, g_i, n, CL_REDUCE_INT, CL_REDUCE_MAX, &r), 0);
        assert_int_equal(r, (int)host_i(g_i, n, CL_REDUCE_MAX));
    }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_clreduce_every_type_and_op_on_both_devices),
    cmocka_unit_test(test_clreduce_every_type_and_op_on_one_device),
    cmocka_unit_test(test_clreduce_sizes_that_are_not_multiples_of_anything),
    cmocka_unit_test(test_clreduce_interior_pointer_reduces_from_there),
    cmocka_unit_test(test_clreduce_strided_layout_gives_the_same_answers),
    cmocka_unit_test(test_clreduce_int_sum_wraps_around),
    cmocka_unit_test(test_clreduce_min_and_max_skip_nans),
    cmocka_unit_test(test_clreduce_bad_arguments_fail_with_a_message),
    cmocka_unit_test(test_clreduce_repeated_calls_reuse_the_kernels),
};

int main(int argc, char** argv) { return tu_run_tests(argc, argv, "reduce", tests, setup, teardown); }
