/* SPDX-License-Identifier: MIT */
/* test_workgroup.c: local sizes chosen by libstdcl (a local size of 0 at
 * clfork, clforka and clndrange_fit: the documented rule, prime and awkward
 * global sizes, limits, reqd_work_group_size, the sizes written back), the
 * driver's choice (STDCL_LOCAL_SIZE_DRIVER), a kernel's limits
 * (stdcl_kernel_limits) and __local arguments sized at launch (CLLOCAL,
 * CLLOCAL_PER_ITEM, CLLOCAL_FN, in clforka and clarg_set), with their
 * errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdcl.h>

#include "test_util.h"

static cl_kernel g_sizes, g_sums, g_halo, g_fixed4;
static size_t g_kmax, g_mult, g_items[3];
static cl_ulong g_local_mem;

static int setup(void** state)
{
    const tu_sym syms[] = {
        {"local_sizes", &g_sizes}, {"group_sums", &g_sums}, {"halo3", &g_halo}, {"fixed4", &g_fixed4}};
    if (tu_need_two_cpu_devices() != 0) return -1;
    if (tu_open_kernel_syms("workgroup.cl", state, syms, tu_countof(syms)) != 0) return -1;
    cl_device_id d = stdcl_device(stdcpu, 0);
    clGetKernelWorkGroupInfo(g_sizes, d, CL_KERNEL_WORK_GROUP_SIZE, sizeof g_kmax, &g_kmax, NULL);
    clGetKernelWorkGroupInfo(g_sizes, d, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof g_mult, &g_mult, NULL);
    clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof g_items, g_items, NULL);
    clGetDeviceInfo(d, CL_DEVICE_LOCAL_MEM_SIZE, sizeof g_local_mem, &g_local_mem, NULL);
    if (g_mult == 0) g_mult = 1;
    return 0;
}

/* The documented rule, written again independently: the largest divisor of
 * g up to cap that is a multiple of mult, else the largest divisor. */
static size_t oracle(size_t g, size_t cap, size_t mult)
{
    size_t best_mult = 0, best = 1;
    for (size_t l = 1; l <= g && l <= cap; l++) {
        if (g % l) continue;
        best = l;
        if (l % mult == 0) best_mult = l;
    }
    return best_mult ? best_mult : best;
}

static void test_clndrange_fit_prime_global_size_gets_one(void** state)
{
    (void)state;
    /* 1000003 is prime and over any device's group limit */
    assert_true(g_kmax < 1000003);
    clndrange_t ndr = clndrange_init1d(0, 1000003, 0);
    assert_int_equal(clndrange_fit(stdcpu, 0, g_sizes, &ndr), 0);
    assert_int_equal(ndr.ltsz[0], 1);
    assert_int_equal(ndr.gtsz[0], 1000003);
    /* a prime under the limit is its own group */
    clndrange_t small = clndrange_init1d(0, 1009, 0);
    assert_int_equal(clndrange_fit(stdcpu, 0, g_sizes, &small), 0);
    assert_int_equal(small.ltsz[0], g_kmax >= 1009 ? 1009 : 1);
}

static void test_clndrange_fit_awkward_sizes_follow_the_rule(void** state)
{
    (void)state;
    size_t cap = g_kmax < g_items[0] ? g_kmax : g_items[0];
    const size_t sizes[] = {1,      2, 6, 1000, 1500, 1021 * 2, 4096, 6000, 97 * 89, 65536 + 6, 3 * 5 * 7 * 11 * 13,
                            1 << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        clndrange_t ndr = clndrange_init1d(0, sizes[i], 0);
        assert_int_equal(clndrange_fit(stdcpu, 0, g_sizes, &ndr), 0);
        size_t want = oracle(sizes[i], cap, g_mult);
        if (ndr.ltsz[0] != want) print_error("global %zu: got %zu, want %zu\n", sizes[i], ndr.ltsz[0], want);
        assert_int_equal(ndr.ltsz[0], want);
        assert_int_equal(sizes[i] % ndr.ltsz[0], 0);
        assert_true(ndr.ltsz[0] <= g_kmax);
    }
}

static void test_clndrange_fit_2d_stays_within_the_group_limit(void** state)
{
    (void)state;
    clndrange_t ndr = clndrange_init2d(0, 1000, 0, 0, 999, 0);
    assert_int_equal(clndrange_fit(stdcpu, 0, g_sizes, &ndr), 0);
    assert_true(ndr.ltsz[0] >= 1 && ndr.ltsz[1] >= 1);
    assert_int_equal(1000 % ndr.ltsz[0], 0);
    assert_int_equal(999 % ndr.ltsz[1], 0);
    assert_true(ndr.ltsz[0] * ndr.ltsz[1] <= g_kmax);
    size_t cap = g_kmax < g_items[0] ? g_kmax : g_items[0];
    assert_int_equal(ndr.ltsz[0], oracle(1000, cap, g_mult));
    size_t left = g_kmax / ndr.ltsz[0];
    assert_int_equal(ndr.ltsz[1], oracle(999, left < g_items[1] ? left : g_items[1], 1));
}

static void test_clndrange_fit_keeps_given_sizes(void** state)
{
    (void)state;
    clndrange_t ndr = clndrange_init2d(0, 64, 8, 0, 60, 0);
    assert_int_equal(clndrange_fit(stdcpu, 0, g_sizes, &ndr), 0);
    assert_int_equal(ndr.ltsz[0], 8);
    assert_int_equal(60 % ndr.ltsz[1], 0);
    assert_true(8 * ndr.ltsz[1] <= g_kmax);
}

static void test_clndrange_fit_uses_reqd_work_group_size(void** state)
{
    (void)state;
    clndrange_t ndr = clndrange_init1d(0, 64, 0);
    assert_int_equal(clndrange_fit(stdcpu, 0, g_fixed4, &ndr), 0);
    assert_int_equal(ndr.ltsz[0], 4);
}

static void test_clndrange_fit_bad_arguments_fail_and_change_nothing(void** state)
{
    (void)state;
    clndrange_t ndr = clndrange_init1d(0, 64, 0);
    assert_int_equal(clndrange_fit(stdcpu, 0, g_sizes, NULL), STDCL_EINVAL);
    assert_contains(clerror(), "clndrange_fit: the index space (clndrange_t*) is NULL");
    assert_int_equal(clndrange_fit(stdcpu, 0, NULL, &ndr), STDCL_EINVAL);
    assert_contains(clerror(), "clndrange_fit: the kernel is NULL");
    assert_true(clndrange_fit(stdcpu, 7, g_sizes, &ndr) < 0);
    assert_non_null(clerror());
    clndrange_t bad = ndr;
    bad.dim = 0;
    assert_int_equal(clndrange_fit(stdcpu, 0, g_sizes, &bad), STDCL_EINVAL);
    assert_contains(clerror(), "0 dimensions (1 to 3)");
    clndrange_t zero = clndrange_init1d(0, 0, 0);
    assert_int_equal(clndrange_fit(stdcpu, 0, g_sizes, &zero), STDCL_EINVAL);
    assert_contains(clerror(), "the global size in dimension 0 is 0");
    clndrange_t notmul = clndrange_init2d(0, 64, 0, 0, 10, 3);
    assert_int_equal(clndrange_fit(stdcpu, 0, g_sizes, &notmul), STDCL_EINVAL);
    assert_contains(clerror(), "not a multiple of the local size 3");
    assert_int_equal(notmul.ltsz[0], 0);
    size_t big = g_items[1] + 1;
    clndrange_t over = clndrange_init2d(0, 64, 0, 0, big, big);
    assert_int_equal(clndrange_fit(stdcpu, 0, g_sizes, &over), STDCL_EINVAL);
    assert_contains(clerror(), "over device 0's limit");
    assert_int_equal(over.ltsz[0], 0);
}

static void test_clndrange_fit_kernel_of_another_context_fails(void** state)
{
    (void)state;
    if (!stddev || stddev == stdcpu) skip();
    clndrange_t ndr = clndrange_init1d(0, 64, 0);
    assert_int_equal(clndrange_fit(stddev, 0, g_sizes, &ndr), STDCL_EINVAL);
    assert_contains(clerror(), "does not belong to");
}

static void test_clfork_zero_local_size_is_chosen_and_written_back(void** state)
{
    (void)state;
    int n = 1500;
    int* out = (int*)clmalloc(stdcpu, 2 * (size_t)n * sizeof(int), 0);
    assert_non_null(out);
    clndrange_t ndr = clndrange_init1d(0, n, 0);
    clndrange_t want = ndr;
    assert_int_equal(clndrange_fit(stdcpu, 1, g_sizes, &want), 0);
    assert_non_null(clforka(stdcpu, 1, g_sizes, &ndr, CL_EVENT_WAIT, out, n));
    assert_non_null(clmsync(stdcpu, 1, out, CL_MEM_HOST));
    assert_int_equal(ndr.ltsz[0], want.ltsz[0]);
    assert_int_equal(out[0], (int)ndr.ltsz[0]);
    assert_int_equal(out[n - 1], (int)ndr.ltsz[0]);
    assert_int_equal(out[n], 1);
    clfree(out);
}

static void test_clfork_failed_launch_leaves_the_range_unchanged(void** state)
{
    (void)state;
    clndrange_t ndr = clndrange_init1d(0, 64, 0);
    clarg_set(stdcpu, g_sizes, 1, 64);
    /* argument 0 set to NULL: the launch itself still works; use a bad devnum */
    assert_null(clfork(stdcpu, 9, g_sizes, &ndr, 0));
    assert_int_equal(ndr.ltsz[0], 0);
}

static void sums_check(const float* x, const float* sums, size_t n, size_t ls)
{
    for (size_t g = 0; g < n / ls; g++) {
        float s = 0.0f;
        for (size_t j = 0; j < ls; j++) s += x[g * ls + j];
        assert_float_equal(sums[g], s, 1e-3);
    }
}

/* group_sums' buffers for n items: x (its input, filled by the caller),
 * sums, and count (the group size the kernel saw). */
typedef struct {
    float* x;
    float* sums;
    int* count;
} sums_buffers;

static sums_buffers alloc_sums(size_t n)
{
    sums_buffers b = {(float*)clmalloc(stdcpu, n * sizeof(float), 0), (float*)clmalloc(stdcpu, n * sizeof(float), 0),
                      (int*)clmalloc(stdcpu, sizeof(int), 0)};
    assert_non_null(b.x);
    assert_non_null(b.sums);
    assert_non_null(b.count);
    return b;
}

/* After group_sums ran on device 0 with groups of ls items: the kernel saw
 * ls, and each group's sum is right; frees the buffers. */
static void check_and_free_sums(sums_buffers* b, size_t n, size_t ls)
{
    assert_non_null(clmsync(stdcpu, 0, b->sums, CL_MEM_HOST));
    assert_non_null(clmsync(stdcpu, 0, b->count, CL_MEM_HOST));
    assert_int_equal(b->count[0], (int)ls);
    sums_check(b->x, b->sums, n, ls);
    clfree(b->x);
    clfree(b->sums);
    clfree(b->count);
}

static void test_clforka_local_per_item_scales_with_the_chosen_group(void** state)
{
    (void)state;
    size_t n = 4000;
    sums_buffers b = alloc_sums(n);
    for (size_t i = 0; i < n; i++) b.x[i] = (float)(i % 17);
    assert_non_null(clmsync(stdcpu, 0, b.x, CL_MEM_DEVICE));
    clndrange_t ndr = clndrange_init1d(0, n, 0);
    int per_item = 4;
    assert_non_null(clforka(stdcpu, 0, g_sums, &ndr, 0, b.x, CLLOCAL_PER_ITEM(per_item * sizeof(float)), per_item,
                            b.sums, b.count));
    assert_true(ndr.ltsz[0] > 1);
    check_and_free_sums(&b, n, ndr.ltsz[0]);
}

static void test_clforka_local_per_item_shrinks_the_group_to_fit(void** state)
{
    (void)state;
    size_t n = 4096;
    sums_buffers b = alloc_sums(n);
    for (size_t i = 0; i < n; i++) b.x[i] = 1.0f;
    assert_non_null(clmsync(stdcpu, 0, b.x, CL_MEM_DEVICE));
    /* per work-item, a hundredth of the device's local memory: at most 100 fit */
    int per_item = (int)(g_local_mem / 100 / sizeof(float));
    clndrange_t ndr = clndrange_init1d(0, n, 0);
    assert_int_equal(clarg_set(stdcpu, g_sums, 1, CLLOCAL_PER_ITEM(per_item * sizeof(float))), 0);
    assert_int_equal(clndrange_fit(stdcpu, 0, g_sums, &ndr), 0);
    assert_true(ndr.ltsz[0] <= 100);
    assert_int_equal(n % ndr.ltsz[0], 0);
    assert_true(ndr.ltsz[0] * per_item * sizeof(float) <= g_local_mem);
    clndrange_t run = clndrange_init1d(0, n, 0);
    assert_non_null(clforka(stdcpu, 0, g_sums, &run, 0, b.x, CLLOCAL_PER_ITEM(per_item * sizeof(float)), per_item,
                            b.sums, b.count));
    assert_int_equal(run.ltsz[0], ndr.ltsz[0]);
    check_and_free_sums(&b, n, run.ltsz[0]);
}

static size_t halo_bytes(const size_t* local, size_t dim, void* user)
{
    (void)dim;
    *(int*)user += 1;
    return (local[0] + 2) * sizeof(float);
}

static void test_clforka_local_fn_sizes_a_tile_from_the_local_size(void** state)
{
    (void)state;
    int n = 999, calls = 0;
    float* x = (float*)clmalloc(stdcpu, (size_t)n * sizeof(float), 0);
    float* out = (float*)clmalloc(stdcpu, (size_t)n * sizeof(float), 0);
    for (int i = 0; i < n; i++) x[i] = (float)(i % 13);
    assert_non_null(clmsync(stdcpu, 0, x, CL_MEM_DEVICE));
    clndrange_t ndr = clndrange_init1d(0, n, 0);
    assert_non_null(clforka(stdcpu, 0, g_halo, &ndr, 0, x, CLLOCAL_FN(halo_bytes, &calls), out, n));
    assert_true(calls >= 1);
    assert_non_null(clmsync(stdcpu, 0, out, CL_MEM_HOST));
    for (int i = 0; i < n; i++) {
        float want = x[i] + (i > 0 ? x[i - 1] : 0.0f) + (i + 1 < n ? x[i + 1] : 0.0f);
        assert_float_equal(out[i], want, 1e-5);
    }
    clfree(x);
    clfree(out);
}

static void test_clforka_fixed_local_marker_works_like_clarg_set_local(void** state)
{
    (void)state;
    int n = 64;
    float* x = (float*)clmalloc(stdcpu, (size_t)n * sizeof(float), 0);
    float* out = (float*)clmalloc(stdcpu, (size_t)n * sizeof(float), 0);
    for (int i = 0; i < n; i++) x[i] = 1.0f;
    assert_non_null(clmsync(stdcpu, 0, x, CL_MEM_DEVICE));
    clndrange_t ndr = clndrange_init1d(0, n, 16);
    assert_non_null(clforka(stdcpu, 0, g_halo, &ndr, 0, x, CLLOCAL(18 * sizeof(float)), out, n));
    assert_non_null(clmsync(stdcpu, 0, out, CL_MEM_HOST));
    assert_float_equal(out[0], 2.0f, 1e-6);
    assert_float_equal(out[20], 3.0f, 1e-6);
    assert_float_equal(out[n - 1], 2.0f, 1e-6);
    clfree(x);
    clfree(out);
}

static void test_clarg_set_local_marker_errors(void** state)
{
    (void)state;
    float* x = (float*)clmalloc(stdcpu, 64 * sizeof(float), 0);
    /* a marker for a __global argument */
    assert_int_equal(clarg_set(stdcpu, g_halo, 0, CLLOCAL(64)), STDCL_EINVAL);
    assert_contains(clerror(), "is not a __local pointer: a __local marker (CLLOCAL...) was given");
    /* 0 bytes */
    assert_int_equal(clarg_set(stdcpu, g_halo, 1, CLLOCAL(0)), STDCL_EINVAL);
    assert_contains(clerror(), "0 bytes of local memory");
    assert_int_equal(clarg_set(stdcpu, g_halo, 1, CLLOCAL_PER_ITEM(0)), STDCL_EINVAL);
    assert_contains(clerror(), "0 bytes of local memory");
    /* a marker built by hand with two rules */
    stdcl_local_t two = CLLOCAL(8);
    two.per_item = 4;
    assert_int_equal(clarg_set(stdcpu, g_halo, 1, two), STDCL_EINVAL);
    assert_contains(clerror(), "more than one size rule");
    /* a plain value for a __local argument says what to pass */
    assert_int_equal(clarg_set(stdcpu, g_halo, 1, 64), STDCL_EINVAL);
    assert_contains(clerror(), "is __local: pass CLLOCAL(bytes)");
    /* a fixed size over the device's local memory, at launch */
    clndrange_t ndr = clndrange_init1d(0, 64, 16);
    clndrange_t before = ndr;
    assert_null(clforka(stdcpu, 0, g_halo, &ndr, 0, x, CLLOCAL((size_t)g_local_mem + 4096), x, 64));
    assert_contains(clerror(), "its __local arguments need");
    assert_memory_equal(&ndr, &before, sizeof ndr);
    /* per work-item, more than one work-item's worth of local memory */
    clndrange_t z = clndrange_init1d(0, 64, 0);
    assert_int_equal(clarg_set(stdcpu, g_sums, 1, CLLOCAL_PER_ITEM((size_t)g_local_mem + 1)), 0);
    assert_int_equal(clndrange_fit(stdcpu, 0, g_sums, &z), STDCL_EINVAL);
    assert_contains(clerror(), "its __local arguments need");
    assert_int_equal(z.ltsz[0], 0);
    clfree(x);
}

/* ------------------------------------------------------------------------ */
/* STDCL_LOCAL_SIZE_DRIVER                                                   */
/* ------------------------------------------------------------------------ */

static void test_clforka_driver_local_size_runs_and_keeps_the_range(void** state)
{
    (void)state;
    int n = 1500;
    int* out = (int*)clmalloc(stdcpu, 2 * (size_t)n * sizeof(int), 0);
    assert_non_null(out);
    for (unsigned d = 0; d < 2; d++) {
        for (int i = 0; i < 2 * n; i++) out[i] = -1;
        assert_non_null(clmsync(stdcpu, d, out, CL_MEM_DEVICE));
        clndrange_t ndr = clndrange_init1d(0, n, STDCL_LOCAL_SIZE_DRIVER);
        clndrange_t before = ndr;
        cl_event ev = clforka(stdcpu, d, g_sizes, &ndr, CL_EVENT_WAIT, out, n);
        if (!ev) print_error("clforka: %s\n", clerror());
        assert_non_null(ev);
        assert_non_null(clmsync(stdcpu, d, out, CL_MEM_HOST));
        /* not written back: the driver does not say what it chose */
        assert_memory_equal(&ndr, &before, sizeof ndr);
        /* every work-item ran, in groups of one size that divides n */
        int ls = out[0];
        assert_true(ls >= 1 && (size_t)ls <= g_kmax);
        assert_int_equal(n % ls, 0);
        for (int i = 0; i < n; i++) {
            assert_int_equal(out[i], ls);
            assert_int_equal(out[n + i], 1);
        }
    }
    clfree(out);
}

static void test_clfork_driver_local_size_in_2d_and_stdcl_forkv(void** state)
{
    (void)state;
    size_t gx = 48, gy = 20, n = gx * gy;
    int* out = (int*)clmalloc(stdcpu, 2 * n * sizeof(int), 0);
    assert_non_null(out);
    for (size_t i = 0; i < 2 * n; i++) out[i] = -1;
    assert_non_null(clmsync(stdcpu, 0, out, CL_MEM_DEVICE));
    /* clfork with the arguments set before; the other dimension 0 */
    clndrange_t ndr = clndrange_init2d(0, gx, STDCL_LOCAL_SIZE_DRIVER, 0, gy, 0);
    assert_int_equal(clarg_set(stdcpu, g_sizes, 0, out), 0);
    assert_int_equal(clarg_set(stdcpu, g_sizes, 1, (int)n), 0);
    assert_non_null(clfork(stdcpu, 0, g_sizes, &ndr, CL_EVENT_WAIT));
    assert_true(ndr.ltsz[0] == STDCL_LOCAL_SIZE_DRIVER && ndr.ltsz[1] == 0);
    assert_non_null(clmsync(stdcpu, 0, out, CL_MEM_HOST));
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(gx % (size_t)out[i], 0);
        assert_int_equal(gy % (size_t)out[n + i], 0);
        assert_int_equal(out[i], out[0]);
        assert_int_equal(out[n + i], out[n]);
    }
    /* stdcl_forkv, the marker in both dimensions */
    for (size_t i = 0; i < 2 * n; i++) out[i] = -1;
    assert_non_null(clmsync(stdcpu, 1, out, CL_MEM_DEVICE));
    clndrange_t both = clndrange_init2d(0, gx, STDCL_LOCAL_SIZE_DRIVER, 0, gy, STDCL_LOCAL_SIZE_DRIVER);
    int ni = (int)n;
    const size_t sizes[] = {sizeof out, sizeof ni};
    const void* values[] = {&out, &ni};
    assert_non_null(stdcl_forkv(stdcpu, 1, g_sizes, &both, CL_EVENT_WAIT, 2, sizes, values));
    assert_non_null(clmsync(stdcpu, 1, out, CL_MEM_HOST));
    for (size_t i = 0; i < n; i++) assert_true(out[i] >= 1 && out[n + i] >= 1);
    clfree(out);
}

static void test_clforka_driver_local_size_with_a_fixed_local_argument(void** state)
{
    (void)state;
    size_t n = 4096;
    sums_buffers b = alloc_sums(n);
    for (size_t i = 0; i < n; i++) b.x[i] = (float)(i % 7);
    assert_non_null(clmsync(stdcpu, 0, b.x, CL_MEM_DEVICE));
    /* scratch for the largest group the kernel allows: right for any choice */
    clndrange_t ndr = clndrange_init1d(0, n, STDCL_LOCAL_SIZE_DRIVER);
    assert_non_null(clforka(stdcpu, 0, g_sums, &ndr, 0, b.x, CLLOCAL(g_kmax * sizeof(float)), 1, b.sums, b.count));
    assert_non_null(clmsync(stdcpu, 0, b.count, CL_MEM_HOST));
    size_t ls = (size_t)b.count[0];
    assert_true(ls >= 1 && ls <= g_kmax && n % ls == 0);
    check_and_free_sums(&b, n, ls);
}

static void test_clforka_driver_local_size_keeps_reqd_work_group_size(void** state)
{
    (void)state;
    int* out = (int*)clmalloc(stdcpu, 64 * sizeof(int), 0);
    assert_non_null(out);
    clndrange_t ndr = clndrange_init1d(0, 64, STDCL_LOCAL_SIZE_DRIVER);
    assert_non_null(clforka(stdcpu, 0, g_fixed4, &ndr, CL_EVENT_WAIT, out));
    assert_non_null(clmsync(stdcpu, 0, out, CL_MEM_HOST));
    for (int i = 0; i < 64; i++) assert_int_equal(out[i], 4);
    assert_true(ndr.ltsz[0] == STDCL_LOCAL_SIZE_DRIVER);
    clfree(out);
}

static size_t tile_bytes(const size_t* local, size_t dim, void* user)
{
    (void)dim;
    (void)user;
    return (local[0] + 2) * sizeof(float);
}

static void test_driver_local_size_refuses_locals_sized_by_the_group(void** state)
{
    (void)state;
    float* x = (float*)clmalloc(stdcpu, 64 * sizeof(float), 0);
    float* out = (float*)clmalloc(stdcpu, 64 * sizeof(float), 0);
    int* count = (int*)clmalloc(stdcpu, sizeof(int), 0);
    assert_non_null(x);
    assert_non_null(out);
    assert_non_null(count);
    clndrange_t ndr = clndrange_init1d(0, 64, STDCL_LOCAL_SIZE_DRIVER);
    clndrange_t before = ndr;
    assert_null(clforka(stdcpu, 0, g_sums, &ndr, 0, x, CLLOCAL_PER_ITEM(sizeof(float)), 1, out, count));
    const char* e = clerror();
    assert_contains(e,
                    "clforka: argument 1 of kernel 'group_sums' is a __local argument sized per work-item "
                    "(CLLOCAL_PER_ITEM), which needs a known group size");
    assert_contains(e, "STDCL_LOCAL_SIZE_DRIVER leaves the group to the driver");
    assert_memory_equal(&ndr, &before, sizeof ndr);
    assert_null(clforka(stdcpu, 0, g_halo, &ndr, 0, x, CLLOCAL_FN(tile_bytes, NULL), out, 64));
    assert_contains(clerror(), "argument 1 of kernel 'halo3' is a __local argument sized by CLLOCAL_FN");
    /* clndrange_fit makes the same check, on the arguments set so far */
    assert_int_equal(clndrange_fit(stdcpu, 0, g_halo, &ndr), STDCL_EINVAL);
    assert_contains(clerror(), "clndrange_fit: argument 1 of kernel 'halo3' is a __local argument sized by CLLOCAL_FN");
    assert_memory_equal(&ndr, &before, sizeof ndr);
    /* a fixed size over the device's local memory */
    assert_null(clforka(stdcpu, 0, g_halo, &ndr, 0, x, CLLOCAL((size_t)g_local_mem + 4096), out, 64));
    assert_contains(clerror(), "clforka: kernel 'halo3': its __local arguments need");
    clfree(x);
    clfree(out);
    clfree(count);
}

static void test_clndrange_fit_driver_local_size_checks_and_leaves_the_range(void** state)
{
    (void)state;
    clndrange_t ndr = clndrange_init2d(0, 1000, STDCL_LOCAL_SIZE_DRIVER, 0, 999, 0);
    clndrange_t before = ndr;
    assert_int_equal(clndrange_fit(stdcpu, 0, g_sizes, &ndr), 0);
    assert_memory_equal(&ndr, &before, sizeof ndr);
    /* a global size that no group divides is the driver's to handle: accepted */
    clndrange_t prime = clndrange_init1d(0, 1000003, STDCL_LOCAL_SIZE_DRIVER);
    assert_int_equal(clndrange_fit(stdcpu, 0, g_sizes, &prime), 0);
    assert_true(prime.ltsz[0] == STDCL_LOCAL_SIZE_DRIVER);
}

static void test_driver_local_size_bad_ranges_fail(void** state)
{
    (void)state;
    int* out = (int*)clmalloc(stdcpu, 64 * sizeof(int), 0);
    assert_non_null(out);
    /* another dimension gives a size */
    clndrange_t given = clndrange_init2d(0, 8, STDCL_LOCAL_SIZE_DRIVER, 0, 8, 4);
    clndrange_t before = given;
    assert_int_equal(clndrange_fit(stdcpu, 0, g_sizes, &given), STDCL_EINVAL);
    assert_contains(clerror(),
                    "clndrange_fit: the local size of dimension 0 is STDCL_LOCAL_SIZE_DRIVER (the driver "
                    "chooses every dimension), but dimension 1 gives 4 (give 0 or STDCL_LOCAL_SIZE_DRIVER)");
    assert_null(clforka(stdcpu, 0, g_sizes, &given, CL_EVENT_WAIT, out, 64));
    assert_contains(clerror(), "clforka: the local size of dimension 0 is STDCL_LOCAL_SIZE_DRIVER");
    assert_memory_equal(&given, &before, sizeof given);
    /* the marker in another dimension only */
    clndrange_t later = clndrange_init2d(0, 8, 0, 0, 8, STDCL_LOCAL_SIZE_DRIVER);
    assert_int_equal(clndrange_fit(stdcpu, 0, g_sizes, &later), STDCL_EINVAL);
    assert_contains(clerror(),
                    "clndrange_fit: the local size of dimension 1 is STDCL_LOCAL_SIZE_DRIVER; it goes in "
                    "dimension 0 (ltsz[0]) and lets the driver choose every dimension");
    assert_int_equal(clarg_set(stdcpu, g_sizes, 0, out), 0);
    assert_int_equal(clarg_set(stdcpu, g_sizes, 1, 64), 0);
    assert_null(clfork(stdcpu, 0, g_sizes, &later, CL_EVENT_WAIT));
    assert_contains(clerror(), "clfork: the local size of dimension 1 is STDCL_LOCAL_SIZE_DRIVER");
    assert_int_equal(later.ltsz[0], 0);
    clfree(out);
}

/* ------------------------------------------------------------------------ */
/* stdcl_kernel_limits                                                       */
/* ------------------------------------------------------------------------ */

static void test_stdcl_kernel_limits_match_the_driver(void** state)
{
    (void)state;
    for (unsigned d = 0; d < 2; d++) {
        cl_device_id dev = stdcl_device(stdcpu, d);
        struct stdcl_kernel_limits l;
        memset(&l, 0xab, sizeof l);
        assert_int_equal(stdcl_kernel_limits(stdcpu, d, g_sizes, &l), 0);
        size_t kmax = 0, mult = 0;
        cl_ulong lmem = 0, pmem = 0;
        assert_int_equal(clGetKernelWorkGroupInfo(g_sizes, dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof kmax, &kmax, NULL),
                         CL_SUCCESS);
        assert_int_equal(clGetKernelWorkGroupInfo(g_sizes, dev, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                                  sizeof mult, &mult, NULL),
                         CL_SUCCESS);
        assert_int_equal(clGetKernelWorkGroupInfo(g_sizes, dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof lmem, &lmem, NULL),
                         CL_SUCCESS);
        assert_int_equal(clGetKernelWorkGroupInfo(g_sizes, dev, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof pmem, &pmem, NULL),
                         CL_SUCCESS);
        assert_int_equal(l.work_group_size, kmax);
        assert_int_equal(l.group_size_multiple, mult ? mult : 1);
        assert_int_equal(l.local_mem_size, lmem);
        assert_int_equal(l.private_mem_size, pmem);
        for (int i = 0; i < 3; i++) {
            assert_int_equal(l.max_work_item_sizes[i], g_items[i]);
            assert_int_equal(l.reqd_work_group_size[i], 0);
        }
        assert_int_equal(l.device_local_mem_size, g_local_mem);
    }
    /* reqd_work_group_size(4, 1, 1) */
    struct stdcl_kernel_limits f;
    assert_int_equal(stdcl_kernel_limits(stdcpu, 1, g_fixed4, &f), 0);
    assert_int_equal(f.reqd_work_group_size[0], 4);
    assert_int_equal(f.reqd_work_group_size[1], 1);
    assert_int_equal(f.reqd_work_group_size[2], 1);
}

static void test_stdcl_kernel_limits_local_mem_counts_local_arguments(void** state)
{
    (void)state;
    struct stdcl_kernel_limits before, after;
    assert_int_equal(clarg_set(stdcpu, g_halo, 1, CLLOCAL(8192)), 0);
    assert_int_equal(stdcl_kernel_limits(stdcpu, 0, g_halo, &before), 0);
    assert_true(before.local_mem_size >= 8192);
    assert_int_equal(clarg_set(stdcpu, g_halo, 1, CLLOCAL(16384)), 0);
    assert_int_equal(stdcl_kernel_limits(stdcpu, 0, g_halo, &after), 0);
    assert_int_equal(after.local_mem_size - before.local_mem_size, 8192);
    /* the rest does not depend on the arguments */
    assert_int_equal(after.work_group_size, before.work_group_size);
    assert_int_equal(after.private_mem_size, before.private_mem_size);
}

static void test_stdcl_kernel_limits_bad_arguments_fail(void** state)
{
    (void)state;
    struct stdcl_kernel_limits l, untouched;
    memset(&l, 0x5a, sizeof l);
    untouched = l;
    assert_int_equal(stdcl_kernel_limits(NULL, 0, g_sizes, &l), STDCL_EINVAL);
    assert_contains(clerror(), "the context is NULL");
    assert_int_equal(stdcl_kernel_limits(stdcpu, 7, g_sizes, &l), STDCL_EINVAL);
    assert_contains(clerror(), "device number 7 is out of range: stdcpu has 2 device(s)");
    assert_int_equal(stdcl_kernel_limits(stdcpu, 0, NULL, &l), STDCL_EINVAL);
    assert_contains(clerror(), "stdcl_kernel_limits: the kernel is NULL");
    assert_int_equal(stdcl_kernel_limits(stdcpu, 0, g_sizes, NULL), STDCL_EINVAL);
    assert_contains(clerror(), "stdcl_kernel_limits: out (struct stdcl_kernel_limits*) is NULL");
    assert_memory_equal(&l, &untouched, sizeof l);

    /* a kernel of another context */
    CLCONTEXT* other = clcontext_create(NULL, CL_DEVICE_TYPE_CPU, 1, NULL, 0);
    if (!other) print_error("clcontext_create: %s\n", clerror());
    assert_non_null(other);
    assert_int_equal(stdcl_kernel_limits(other, 0, g_sizes, &l), STDCL_EINVAL);
    assert_contains(clerror(), "stdcl_kernel_limits: kernel 'local_sizes' belongs to stdcpu, not to");
    assert_int_equal(clcontext_destroy(other), 0);

    /* a kernel made with OpenCL calls, not by clsym */
    const char* src = "__kernel void made_outside(__global int* o) { o[0] = 1; }\n";
    cl_int err = CL_SUCCESS;
    cl_program prog = clCreateProgramWithSource(stdcl_clcontext(stdcpu), 1, &src, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(clBuildProgram(prog, 0, NULL, "", NULL, NULL), CL_SUCCESS);
    cl_kernel raw = clCreateKernel(prog, "made_outside", &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(stdcl_kernel_limits(stdcpu, 0, raw, &l), STDCL_EINVAL);
    const char* e = clerror();
    assert_contains(e, "stdcl_kernel_limits: kernel 'made_outside'");
    assert_contains(e, "was not made by libstdcl: give a kernel clsym returned for a program open in stdcpu");
    clReleaseKernel(raw);
    clReleaseProgram(prog);

    /* a kernel whose program was closed */
    void* h = tu_clsopen(stdcpu, "__kernel void closed_soon(__global int* o) { o[0] = 2; }\n", 0);
    cl_kernel k = clsym(stdcpu, h, "closed_soon", 0);
    assert_non_null(k);
    assert_int_equal(stdcl_kernel_limits(stdcpu, 0, k, &l), 0);
    untouched = l;
    assert_int_equal(clclose(stdcpu, h), 0);
    assert_int_equal(stdcl_kernel_limits(stdcpu, 0, k, &l), STDCL_ESTATE);
    e = clerror();
    assert_contains(e, "stdcl_kernel_limits: kernel");
    assert_contains(e, "('closed_soon') was released: its program was closed with clclose");
    assert_memory_equal(&l, &untouched, sizeof l);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_clndrange_fit_prime_global_size_gets_one),
    cmocka_unit_test(test_clndrange_fit_awkward_sizes_follow_the_rule),
    cmocka_unit_test(test_clndrange_fit_2d_stays_within_the_group_limit),
    cmocka_unit_test(test_clndrange_fit_keeps_given_sizes),
    cmocka_unit_test(test_clndrange_fit_uses_reqd_work_group_size),
    cmocka_unit_test(test_clndrange_fit_bad_arguments_fail_and_change_nothing),
    cmocka_unit_test(test_clndrange_fit_kernel_of_another_context_fails),
    cmocka_unit_test(test_clfork_zero_local_size_is_chosen_and_written_back),
    cmocka_unit_test(test_clfork_failed_launch_leaves_the_range_unchanged),
    cmocka_unit_test(test_clforka_local_per_item_scales_with_the_chosen_group),
    cmocka_unit_test(test_clforka_local_per_item_shrinks_the_group_to_fit),
    cmocka_unit_test(test_clforka_local_fn_sizes_a_tile_from_the_local_size),
    cmocka_unit_test(test_clforka_fixed_local_marker_works_like_clarg_set_local),
    cmocka_unit_test(test_clarg_set_local_marker_errors),
    cmocka_unit_test(test_clforka_driver_local_size_runs_and_keeps_the_range),
    cmocka_unit_test(test_clfork_driver_local_size_in_2d_and_stdcl_forkv),
    cmocka_unit_test(test_clforka_driver_local_size_with_a_fixed_local_argument),
    cmocka_unit_test(test_clforka_driver_local_size_keeps_reqd_work_group_size),
    cmocka_unit_test(test_driver_local_size_refuses_locals_sized_by_the_group),
    cmocka_unit_test(test_clndrange_fit_driver_local_size_checks_and_leaves_the_range),
    cmocka_unit_test(test_driver_local_size_bad_ranges_fail),
    cmocka_unit_test(test_stdcl_kernel_limits_match_the_driver),
    cmocka_unit_test(test_stdcl_kernel_limits_local_mem_counts_local_arguments),
    cmocka_unit_test(test_stdcl_kernel_limits_bad_arguments_fail),
};

int main(int argc, char** argv) { return tu_run_tests(argc, argv, "workgroup", tests, setup, tu_close_kernels); }
