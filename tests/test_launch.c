/* SPDX-License-Identifier: MIT */
/* test_launch.c: index spaces (clndrange_*), kernel arguments (clarg_set in
 * its 3- and 4-argument forms, clarg_set_local, clarg_set_global), clfork and
 * clforka, the event flags (WAIT, NOWAIT + clwait, NORELEASE, RELEASE),
 * thousands of NOWAIT launches, clflush. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdcl.h>

#include "test_util.h"

static cl_kernel g_ids1d, g_ids2d, g_ids3d, g_scalars, g_local_sum, g_count, g_axpb;

/* clndrange_init* must be usable as initialisers of static objects. */
static clndrange_t g_static_ndr = clndrange_init1d(0, 64, 16);

static int setup(void** state)
{
    const tu_sym syms[] = {{"ids1d", &g_ids1d},     {"ids2d", &g_ids2d},         {"ids3d", &g_ids3d},
                           {"scalars", &g_scalars}, {"local_sum", &g_local_sum}, {"count", &g_count},
                           {"axpb", &g_axpb}};
    if (tu_need_two_cpu_devices() != 0) return -1;
    return tu_open_kernel_syms("launch.cl", state, syms, tu_countof(syms));
}

static int* alloc_ints(size_t n, int v)
{
    int* p = (int*)clmalloc(stdcpu, n * sizeof(int), 0);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) p[i] = v;
    return p;
}

static float* alloc_floats(size_t n, float v)
{
    float* p = (float*)clmalloc(stdcpu, n * sizeof(float), 0);
    assert_non_null(p);
    for (size_t i = 0; i < n; i++) p[i] = v;
    return p;
}

static void to_device(unsigned d, void* p) { assert_non_null(clmsync(stdcpu, d, p, CL_MEM_DEVICE | CL_EVENT_WAIT)); }

static void to_host(unsigned d, void* p) { assert_non_null(clmsync(stdcpu, d, p, CL_MEM_HOST | CL_EVENT_WAIT)); }

/* Fails unless each of the n ints at p is want. */
static void expect_ints(const int* p, size_t n, int want)
{
    for (size_t i = 0; i < n; i++) assert_int_equal(p[i], want);
}

static void check_fork(cl_event ev)
{
    if (!ev) print_error("clfork/clforka: %s\n", clerror());
    assert_non_null(ev);
}

/* ------------------------------------------------------------------------ */
/* Index spaces                                                              */
/* ------------------------------------------------------------------------ */

/* Dimension i of ndr: offset off, global size g, local size l. */
static void expect_dim(const clndrange_t* ndr, int i, size_t off, size_t g, size_t l)
{
    assert_int_equal(ndr->gtoff[i], off);
    assert_int_equal(ndr->gtsz[i], g);
    assert_int_equal(ndr->ltsz[i], l);
}

static void test_clndrange_init1d_fills_fields(void** state)
{
    (void)state;
    clndrange_t ndr = clndrange_init1d(3, 128, 32);
    assert_int_equal(ndr.dim, 1);
    expect_dim(&ndr, 0, 3, 128, 32);
    assert_int_equal(g_static_ndr.dim, 1);
    assert_int_equal(g_static_ndr.gtsz[0], 64);
    assert_int_equal(g_static_ndr.ltsz[0], 16);
}

static void test_clndrange_init2d_fills_fields(void** state)
{
    (void)state;
    clndrange_t ndr = clndrange_init2d(1, 512, 4, 2, 2048, 16);
    assert_int_equal(ndr.dim, 2);
    expect_dim(&ndr, 0, 1, 512, 4);
    expect_dim(&ndr, 1, 2, 2048, 16);
}

static void test_clndrange_init3d_fills_fields(void** state)
{
    (void)state;
    clndrange_t ndr = clndrange_init3d(1, 8, 2, 2, 16, 4, 3, 32, 8);
    assert_int_equal(ndr.dim, 3);
    expect_dim(&ndr, 0, 1, 8, 2);
    expect_dim(&ndr, 1, 2, 16, 4);
    expect_dim(&ndr, 2, 3, 32, 8);
}

static void test_clndrange_set_fills_fields(void** state)
{
    (void)state;
    clndrange_t ndr;
    memset(&ndr, 0xff, sizeof ndr);
    clndrange_set1d(ndr, 5, 64, 8);
    assert_int_equal(ndr.dim, 1);
    expect_dim(&ndr, 0, 5, 64, 8);
    clndrange_set2d(ndr, 0, 32, 4, 1, 16, 2);
    assert_int_equal(ndr.dim, 2);
    expect_dim(&ndr, 0, 0, 32, 4);
    expect_dim(&ndr, 1, 1, 16, 2);
    clndrange_set3d(ndr, 0, 8, 2, 0, 4, 2, 7, 2, 1);
    assert_int_equal(ndr.dim, 3);
    expect_dim(&ndr, 2, 7, 2, 1);
    assert_int_equal(ndr.gtsz[1], 4);
}

static void test_clfork_1d_with_offset(void** state)
{
    (void)state;
    enum { N = 64 };
    for (unsigned d = 0; d < 2; d++) {
        int* out = alloc_ints(2 * N, -1);
        to_device(d, out);
        clndrange_t ndr = clndrange_init1d(16, N, 16);
        check_fork(clforka(stdcpu, d, g_ids1d, &ndr, CL_EVENT_WAIT, out, (int)N));
        to_host(d, out);
        for (int i = 0; i < N; i++) {
            assert_int_equal(out[i], 16 + i);
            assert_int_equal(out[N + i], 16);
        }
        assert_int_equal(clfree(out), 0);
    }
}

static void test_clfork_2d(void** state)
{
    (void)state;
    enum { W = 16, H = 8 };
    int* out = alloc_ints(W * H, -1);
    to_device(1, out);
    clndrange_t ndr = clndrange_init2d(0, W, 4, 0, H, 2);
    check_fork(clforka(stdcpu, 1, g_ids2d, &ndr, CL_EVENT_WAIT, out, (int)W));
    to_host(1, out);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) assert_int_equal(out[y * W + x], 1000 * y + x);
    /* With offsets, through clndrange_set2d. */
    clndrange_set2d(ndr, 3, W, 4, 5, H, 4);
    check_fork(clforka(stdcpu, 0, g_ids2d, &ndr, CL_EVENT_WAIT, out, (int)W));
    to_host(0, out);
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) assert_int_equal(out[y * W + x], 1000 * (y + 5) + x + 3);
    assert_int_equal(clfree(out), 0);
}

static void test_clfork_3d(void** state)
{
    (void)state;
    enum { W = 8, H = 4, D = 6 };
    int* out = alloc_ints(W * H * D, -1);
    to_device(0, out);
    clndrange_t ndr = clndrange_init3d(0, W, 2, 0, H, 2, 0, D, 3);
    check_fork(clforka(stdcpu, 0, g_ids3d, &ndr, CL_EVENT_WAIT, out, (int)W, (int)H));
    to_host(0, out);
    for (int z = 0; z < D; z++)
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) assert_int_equal(out[(z * H + y) * W + x], 10000 * z + 100 * y + x);
    assert_int_equal(clfree(out), 0);
}

static void test_clfork_local_size_zero_lets_runtime_choose(void** state)
{
    (void)state;
    enum { N = 1000 }; /* no fixed work-group size divides it for the caller */
    int* out = alloc_ints(2 * N, -1);
    to_device(0, out);
    clndrange_t ndr = clndrange_init1d(0, N, 0);
    check_fork(clforka(stdcpu, 0, g_ids1d, &ndr, CL_EVENT_WAIT, out, (int)N));
    to_host(0, out);
    for (int i = 0; i < N; i++) {
        assert_int_equal(out[i], i);
        assert_true(out[N + i] >= 1 && N % out[N + i] == 0);
    }
    assert_int_equal(clfree(out), 0);
}

/* A local size that one launch chose and wrote back, refused for a smaller
 * global size by the next: the message says where it came from. */
static void test_written_back_local_size_is_named_when_refused(void** state)
{
    (void)state;
    int* out = alloc_ints(2 * 256, -1);
    to_device(0, out);
    clndrange_t ndr = clndrange_init1d(0, 256, 0);
    check_fork(clforka(stdcpu, 0, g_ids1d, &ndr, CL_EVENT_WAIT, out, 256));
    size_t chosen = ndr.ltsz[0];
    if (224 % chosen == 0) { /* the choice divides 224 as well: nothing to refuse */
        assert_int_equal(clfree(out), 0);
        return;
    }
    ndr.gtsz[0] = 224;
    assert_null(clforka(stdcpu, 0, g_ids1d, &ndr, CL_EVENT_WAIT, out, 224));
    const char* msg = clerror();
    assert_contains(msg, "clforka: the global size 224 in dimension 0 is not a multiple of the local size");
    assert_contains(msg, "chosen for global size 256 by an earlier launch of kernel 'ids1d' on device 0");
    assert_contains(msg, "set ltsz[0] back to 0 to choose again");
    /* A size the program gave itself has no such note; clfork says clfork. */
    clndrange_t given = clndrange_init1d(0, 224, 64);
    assert_int_equal(clarg_set(g_ids1d, 0, out), 0);
    assert_int_equal(clarg_set(g_ids1d, 1, 224), 0);
    assert_null(clfork(stdcpu, 0, g_ids1d, &given, CL_EVENT_WAIT));
    msg = clerror();
    assert_contains(msg, "clfork: the global size 224 in dimension 0 is not a multiple of the local size 64");
    assert_not_contains(msg, "earlier launch");
    assert_int_equal(clfree(out), 0);
}

/* A local size the driver refuses: the reason, with the limit. */
static void test_refused_local_size_says_why(void** state)
{
    (void)state;
    size_t big = 1u << 20; /* a million work-items in a group: over every device's limit */
    int* out = alloc_ints(2 * big, -1);
    to_device(0, out);
    clndrange_t ndr = clndrange_init1d(0, big, big);
    assert_null(clforka(stdcpu, 0, g_ids1d, &ndr, CL_EVENT_WAIT, out, (int)big));
    const char* msg = clerror();
    assert_contains(msg, "clforka: kernel 'ids1d'");
    assert_true(tu_contains(msg, "CL_DEVICE_MAX_WORK_ITEM_SIZES") || tu_contains(msg, "CL_KERNEL_WORK_GROUP_SIZE"));
    assert_int_equal(clfree(out), 0);
}

static void test_null_context_names_the_call(void** state)
{
    (void)state;
    clndrange_t ndr = clndrange_init1d(0, 1, 1);
    assert_null(clforka(NULL, 0, g_count, &ndr, CL_EVENT_WAIT, NULL));
    assert_contains(clerror(), "clforka: the context is NULL");
    assert_null(clfork(NULL, 0, g_count, &ndr, CL_EVENT_WAIT));
    assert_contains(clerror(), "clfork: the context is NULL");
    assert_null(clmalloc(NULL, 64, 0));
    assert_contains(clerror(), "clmalloc: the context is NULL");
    assert_null(clmsync(NULL, 0, NULL, CL_MEM_DEVICE));
    assert_contains(clerror(), "clmsync: the context is NULL");
    assert_int_equal(clflush(NULL, 0, 0), STDCL_EINVAL);
    assert_contains(clerror(), "clflush: the context is NULL");
    assert_null(clforka(stdcpu, 9, g_count, &ndr, CL_EVENT_WAIT, NULL));
    assert_contains(clerror(), "clforka: device number 9 is out of range: stdcpu has 2 device(s)");
}

/* ------------------------------------------------------------------------ */
/* Arguments                                                                 */
/* ------------------------------------------------------------------------ */

static void check_scalars_out(const float* out, const cl_float4* v)
{
    assert_true(out[0] == -7.0f);
    assert_true(out[1] == 2.5f);
    assert_true(out[2] == 9.0f);
    assert_true(out[3] == v->s[0]);
    assert_true(out[4] == v->s[1]);
    assert_true(out[5] == v->s[2]);
    assert_true(out[6] == v->s[3]);
    assert_true(out[7] == 5.0f);
    assert_true(out[8] == 1234.0f);
    assert_true(out[9] == 200.0f);
    assert_true(out[10] == -300.0f);
    assert_true(out[11] == 2.5f);
}

/* One scalars work-item on device d, its arguments set (v the vector, out
 * the output); checks and frees out. */
static void run_scalars(unsigned d, float* out, const cl_float4* v)
{
    clndrange_t ndr = clndrange_init1d(0, 1, 1);
    to_device(d, out);
    check_fork(clfork(stdcpu, d, g_scalars, &ndr, CL_EVENT_WAIT));
    to_host(d, out);
    check_scalars_out(out, v);
    assert_int_equal(clfree(out), 0);
}

static void test_clarg_set_three_argument_form(void** state)
{
    (void)state;
    float* out = alloc_floats(16, -1.0f);
    cl_float4 v = {{1.5f, -2.0f, 3.25f, 100.0f}};
    cl_long l = ((cl_long)5 << 32) | 1234;
    cl_uchar c = 200;
    cl_short s = -300;
    double dd = 1.25;
    assert_int_equal(clarg_set_global(g_scalars, 0, out), 0);
    assert_int_equal(clarg_set(g_scalars, 1, -7), 0);
    assert_int_equal(clarg_set(g_scalars, 2, 2.5f), 0);
    assert_int_equal(clarg_set(g_scalars, 3, (cl_uint)9), 0);
    assert_int_equal(clarg_set(g_scalars, 4, v), 0);
    assert_int_equal(clarg_set(g_scalars, 5, l), 0);
    assert_int_equal(clarg_set(g_scalars, 6, c), 0);
    assert_int_equal(clarg_set(g_scalars, 7, s), 0);
    assert_int_equal(clarg_set(g_scalars, 8, dd), 0);
    run_scalars(0, out, &v);
}

static void test_clarg_set_four_argument_form(void** state)
{
    (void)state;
    float* out = alloc_floats(16, -1.0f);
    cl_float4 v = {{-0.5f, 8.0f, 0.0f, 7.75f}};
    assert_int_equal(clarg_set_global(stdcpu, g_scalars, 0, out), 0);
    assert_int_equal(clarg_set(stdcpu, g_scalars, 1, -7), 0);
    assert_int_equal(clarg_set(stdcpu, g_scalars, 2, 2.5f), 0);
    assert_int_equal(clarg_set(stdcpu, g_scalars, 3, (cl_uint)9), 0);
    assert_int_equal(clarg_set(stdcpu, g_scalars, 4, v), 0);
    assert_int_equal(clarg_set(stdcpu, g_scalars, 5, ((cl_long)5 << 32) | 1234), 0);
    assert_int_equal(clarg_set(stdcpu, g_scalars, 6, (cl_uchar)200), 0);
    assert_int_equal(clarg_set(stdcpu, g_scalars, 7, (cl_short)-300), 0);
    assert_int_equal(clarg_set(stdcpu, g_scalars, 8, 1.25), 0);
    run_scalars(1, out, &v);
}

static void test_clarg_set_with_clmalloc_pointer_binds_it(void** state)
{
    (void)state;
    /* A clmalloc pointer given by value to a __global argument binds the allocation. */
    int* a = alloc_ints(256, 3);
    to_device(0, a);
    assert_int_equal(clarg_set(stdcpu, g_axpb, 0, a), 0);
    assert_int_equal(clarg_set(stdcpu, g_axpb, 1, 4), 0);
    assert_int_equal(clarg_set(stdcpu, g_axpb, 2, -1), 0);
    clndrange_t ndr = clndrange_init1d(0, 256, 64);
    check_fork(clfork(stdcpu, 0, g_axpb, &ndr, CL_EVENT_WAIT));
    to_host(0, a);
    expect_ints(a, 256, 11);
    assert_int_equal(clfree(a), 0);
}

/* A kernel launched with an allocation, then its program closed, then the
 * allocation freed: the kernel object the closed program's tombstone keeps
 * (so that no new kernel takes its handle) holds no memory object when clfree
 * releases it.  Under the ordering fuzzer (run_tests: copy mode) a memory
 * object released while a kernel argument holds it ends the run ("held
 * argument"); plainly, a later use of the kernel is refused as released. */
static void test_closed_programs_kernels_let_go_of_freed_memory(void** state)
{
    (void)state;
    static const char* src = "__kernel void add_k(__global int* a, int k) { a[get_global_id(0)] += k; }\n";
    void* h = clsopen(stdcpu, src, 0);
    assert_non_null(h);
    cl_kernel k = clsym(stdcpu, h, "add_k", 0);
    assert_non_null(k);
    int* a = alloc_ints(256, 1);
    to_device(0, a);
    clndrange_t ndr = clndrange_init1d(0, 256, 64);
    check_fork(clforka(stdcpu, 0, k, &ndr, CL_EVENT_WAIT, a, 2));
    to_host(0, a);
    expect_ints(a, 256, 3);
    assert_int_equal(clclose(stdcpu, h), 0);
    assert_int_equal(clfree(a), 0);
    int* b = alloc_ints(256, 1);
    assert_null(clforka(stdcpu, 0, k, &ndr, CL_EVENT_WAIT, b, 2));
    assert_non_null(strstr(clerror(), "was released"));
    assert_int_equal(clfree(b), 0);
}

static void run_local_sum(int four_arg_form)
{
    enum { N = 1024, L = 64 };
    int* in = alloc_ints(N, 0);
    int* out = alloc_ints(N / L, -1);
    for (int i = 0; i < N; i++) in[i] = i;
    unsigned d = four_arg_form ? 1 : 0;
    to_device(d, in);
    to_device(d, out);
    if (four_arg_form) {
        assert_int_equal(clarg_set_global(stdcpu, g_local_sum, 0, in), 0);
        assert_int_equal(clarg_set_global(stdcpu, g_local_sum, 1, out), 0);
        assert_int_equal(clarg_set_local(stdcpu, g_local_sum, 2, L * sizeof(int)), 0);
    } else {
        assert_int_equal(clarg_set_global(g_local_sum, 0, in), 0);
        assert_int_equal(clarg_set_global(g_local_sum, 1, out), 0);
        assert_int_equal(clarg_set_local(g_local_sum, 2, L * sizeof(int)), 0);
    }
    clndrange_t ndr = clndrange_init1d(0, N, L);
    check_fork(clfork(stdcpu, d, g_local_sum, &ndr, CL_EVENT_WAIT));
    to_host(d, out);
    for (int g = 0; g < N / L; g++) {
        int want = 0;
        for (int i = g * L; i < (g + 1) * L; i++) want += i;
        assert_int_equal(out[g], want);
    }
    assert_int_equal(clfree(in), 0);
    assert_int_equal(clfree(out), 0);
}

static void test_clarg_set_local_three_argument_form(void** state)
{
    (void)state;
    run_local_sum(0);
}

static void test_clarg_set_local_four_argument_form(void** state)
{
    (void)state;
    run_local_sum(1);
}

static void test_clarg_set_global_rebinds_between_launches(void** state)
{
    (void)state;
    /* The double-buffer pattern of the NBody tutorial: argument 0 switches
     * between two allocations from one clfork to the next. */
    int* a = alloc_ints(128, 1);
    int* b = alloc_ints(128, 2);
    to_device(0, a);
    to_device(0, b);
    assert_int_equal(clarg_set(g_axpb, 1, 10), 0);
    assert_int_equal(clarg_set(g_axpb, 2, 0), 0);
    clndrange_t ndr = clndrange_init1d(0, 128, 32);
    for (int rep = 0; rep < 3; rep++) {
        assert_int_equal(clarg_set_global(g_axpb, 0, a), 0);
        check_fork(clfork(stdcpu, 0, g_axpb, &ndr, CL_EVENT_NOWAIT));
        assert_int_equal(clarg_set_global(g_axpb, 0, b), 0);
        check_fork(clfork(stdcpu, 0, g_axpb, &ndr, CL_EVENT_NOWAIT));
    }
    assert_int_equal(stdcl_wait(stdcpu, 0, CL_KERNEL_EVENT), 0);
    to_host(0, a);
    to_host(0, b);
    expect_ints(a, 128, 1000);
    expect_ints(b, 128, 2000);
    assert_int_equal(clfree(a), 0);
    assert_int_equal(clfree(b), 0);
}

static void test_clforka_scalars_vector_and_pointer(void** state)
{
    (void)state;
    for (unsigned d = 0; d < 2; d++) {
        float* out = alloc_floats(16, -1.0f);
        cl_float4 v = {{0.25f, 0.5f, 0.75f, (float)d}};
        clndrange_t ndr = clndrange_init1d(0, 1, 1);
        to_device(d, out);
        check_fork(clforka(stdcpu, d, g_scalars, &ndr, CL_EVENT_WAIT, out, -7, 2.5f, (cl_uint)9, v,
                           ((cl_long)5 << 32) | 1234, (cl_uchar)200, (cl_short)-300, 1.25));
        to_host(d, out);
        check_scalars_out(out, &v);
        assert_int_equal(clfree(out), 0);
    }
}

/* ------------------------------------------------------------------------ */
/* Events                                                                    */
/* ------------------------------------------------------------------------ */

static void test_clfork_event_wait_blocks_until_done(void** state)
{
    (void)state;
    enum { N = 1 << 16 };
    int* a = alloc_ints(N, 2);
    to_device(0, a);
    clndrange_t ndr = clndrange_init1d(0, N, 64);
    /* WAIT is the default (flags 0) and can be given explicitly, with RELEASE. */
    check_fork(clforka(stdcpu, 0, g_axpb, &ndr, 0, a, 3, 1));
    check_fork(clforka(stdcpu, 0, g_axpb, &ndr, CL_EVENT_WAIT | CL_EVENT_RELEASE, a, 3, 1));
    /* Nothing tracked is left for clwait: it returns at once. */
    assert_int_equal(stdcl_wait(stdcpu, 0, CL_KERNEL_EVENT), 0);
    to_host(0, a);
    expect_ints(a, N, 22);
    assert_int_equal(clfree(a), 0);
}

static void test_clfork_nowait_then_clwait(void** state)
{
    (void)state;
    enum { N = 1 << 16 };
    int* a = alloc_ints(N, 1);
    int* b = alloc_ints(N, 1);
    clndrange_t ndr = clndrange_init1d(0, N, 64);
    assert_non_null(clmsync(stdcpu, 0, a, CL_MEM_DEVICE | CL_EVENT_NOWAIT));
    assert_non_null(clmsync(stdcpu, 1, b, CL_MEM_DEVICE | CL_EVENT_NOWAIT));
    for (int rep = 0; rep < 4; rep++) {
        check_fork(clforka(stdcpu, 0, g_axpb, &ndr, CL_EVENT_NOWAIT, a, 2, 0));
        check_fork(clforka(stdcpu, 1, g_axpb, &ndr, CL_EVENT_NOWAIT, b, 3, 0));
    }
    assert_non_null(clmsync(stdcpu, 0, a, CL_MEM_HOST | CL_EVENT_NOWAIT));
    assert_non_null(clmsync(stdcpu, 1, b, CL_MEM_HOST | CL_EVENT_NOWAIT));
    assert_int_equal(stdcl_wait(stdcpu, 0, CL_KERNEL_EVENT | CL_MEM_EVENT), 0);
    assert_int_equal(stdcl_wait(stdcpu, 1, CL_ALL_EVENT), 0);
    expect_ints(a, N, 16);
    expect_ints(b, N, 81);
    assert_int_equal(clfree(a), 0);
    assert_int_equal(clfree(b), 0);
}

static void test_clfork_norelease_returns_caller_owned_event(void** state)
{
    (void)state;
    int* a = alloc_ints(64, 0);
    to_device(1, a);
    clndrange_t ndr = clndrange_init1d(0, 64, 16);
    cl_event ev = clforka(stdcpu, 1, g_axpb, &ndr, CL_EVENT_WAIT | CL_EVENT_NORELEASE, a, 1, 5);
    check_fork(ev);
    cl_int st = -1;
    cl_command_type type = 0;
    cl_command_queue q = NULL;
    cl_uint refs = 0;
    assert_int_equal(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL), CL_SUCCESS);
    assert_int_equal(st, CL_COMPLETE);
    assert_int_equal(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL), CL_SUCCESS);
    assert_int_equal(type, CL_COMMAND_NDRANGE_KERNEL);
    assert_int_equal(clGetEventInfo(ev, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL), CL_SUCCESS);
    assert_ptr_equal(q, stdcl_queue(stdcpu, 1));
    assert_int_equal(clGetEventInfo(ev, CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, NULL), CL_SUCCESS);
    assert_true(refs >= 1);
    assert_int_equal(clReleaseEvent(ev), CL_SUCCESS);

    /* NOWAIT | NORELEASE: the caller waits on it, clwait joins it too. */
    ev = clforka(stdcpu, 1, g_axpb, &ndr, CL_EVENT_NOWAIT | CL_EVENT_NORELEASE, a, 1, 5);
    check_fork(ev);
    assert_int_equal(clWaitForEvents(1, &ev), CL_SUCCESS);
    assert_int_equal(stdcl_wait(stdcpu, 1, CL_KERNEL_EVENT), 0);
    assert_int_equal(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL), CL_SUCCESS);
    assert_int_equal(st, CL_COMPLETE);
    assert_int_equal(clReleaseEvent(ev), CL_SUCCESS);
    to_host(1, a);
    expect_ints(a, 64, 10);
    assert_int_equal(clfree(a), 0);
}

static void test_clfork_5000_nowait_launches_lose_nothing(void** state)
{
    (void)state;
    enum { LAUNCHES = 5000 };
    int* c0 = alloc_ints(1, 0);
    int* c1 = alloc_ints(1, 0);
    to_device(0, c0);
    to_device(1, c1);
    clndrange_t ndr = clndrange_init1d(0, 1, 1);
    for (int i = 0; i < LAUNCHES; i++) {
        cl_event e0 = clforka(stdcpu, 0, g_count, &ndr, CL_EVENT_NOWAIT, c0);
        if (!e0) {
            print_error("launch %d on device 0: %s\n", i, clerror());
            fail();
        }
        if (i % 5 == 0 && !clforka(stdcpu, 1, g_count, &ndr, CL_EVENT_NOWAIT, c1)) {
            print_error("launch %d on device 1: %s\n", i, clerror());
            fail();
        }
    }
    /* No clwait yet: a blocking sync on the same in-order queue sees every launch. */
    to_host(0, c0);
    to_host(1, c1);
    assert_int_equal(c0[0], LAUNCHES);
    assert_int_equal(c1[0], LAUNCHES / 5);
    assert_int_equal(stdcl_wait(stdcpu, 0, CL_ALL_EVENT), 0);
    assert_int_equal(stdcl_wait(stdcpu, 1, CL_ALL_EVENT), 0);
    assert_int_equal(clfree(c0), 0);
    assert_int_equal(clfree(c1), 0);
}

static void test_clwait_joins_more_than_1024_events(void** state)
{
    (void)state;
    enum { LAUNCHES = 3000 };
    int* c = alloc_ints(1, 0);
    to_device(1, c);
    clndrange_t ndr = clndrange_init1d(0, 1, 1);
    for (int i = 0; i < LAUNCHES; i++)
        if (!clforka(stdcpu, 1, g_count, &ndr, CL_EVENT_NOWAIT, c)) {
            print_error("launch %d: %s\n", i, clerror());
            fail();
        }
    assert_non_null(clmsync(stdcpu, 1, c, CL_MEM_HOST | CL_EVENT_NOWAIT));
    assert_int_equal(stdcl_wait(stdcpu, 1, CL_KERNEL_EVENT | CL_MEM_EVENT), 0);
    assert_int_equal(c[0], LAUNCHES);
    assert_int_equal(clfree(c), 0);
}

/* A scalar set again with the bytes the kernel holds makes no driver call;
 * any other value, however set (clforka, clarg_set, a converted type), is
 * what the next launch gets. */
static void test_repeated_scalars_reach_the_kernel_as_given(void** state)
{
    (void)state;
    enum { N = 256 };
    int* a = alloc_ints(N, 1);
    to_device(0, a);
    clndrange_t ndr = clndrange_init1d(0, N, 64);
    check_fork(clforka(stdcpu, 0, g_axpb, &ndr, CL_EVENT_WAIT, a, 2, 0)); /* 2 */
    check_fork(clforka(stdcpu, 0, g_axpb, &ndr, CL_EVENT_WAIT, a, 2, 0)); /* 4 */
    check_fork(clforka(stdcpu, 0, g_axpb, &ndr, CL_EVENT_WAIT, a, 3, 0)); /* 12 */
    assert_int_equal(clarg_set(stdcpu, g_axpb, 1, 2), 0);
    assert_int_equal(clarg_set(stdcpu, g_axpb, 2, 1), 0);
    check_fork(clfork(stdcpu, 0, g_axpb, &ndr, CL_EVENT_WAIT)); /* 25 */
    check_fork(clforka(stdcpu, 0, g_axpb, &ndr, CL_EVENT_WAIT, a, (long)2, (short)1)); /* 51: converted */
    check_fork(clforka(stdcpu, 0, g_axpb, &ndr, CL_EVENT_WAIT, a, 1.0, 0)); /* 51 */
    to_host(0, a);
    expect_ints(a, N, 51);
    assert_int_equal(clfree(a), 0);
}

/* A stream's launches skip the checks when an argument gets a value of the
 * type it took as it is, or a pointer for a __global pointer bound before;
 * every other value still takes them: a converted value, a pointer for an int
 * and an int for a pointer (refused, naming both), another allocation, an
 * interior pointer, a freed one.  The same allocation on two devices in turn
 * gets each device's copy. */
static void test_stream_fast_paths_keep_every_check(void** state)
{
    (void)state;
    enum { N = 256 };
    int* a = alloc_ints(N, 1);
    int* b = alloc_ints(N, 1);
    to_device(0, a);
    to_device(0, b);
    clndrange_t ndr = clndrange_init1d(0, N, 64);
    check_fork(clforka(stdcpu, 0, g_axpb, &ndr, CL_EVENT_WAIT, a, 2, 0)); /* 2 */
    check_fork(clforka(stdcpu, 0, g_axpb, &ndr, CL_EVENT_WAIT, a, 2, 0)); /* 4 */
    check_fork(clforka(stdcpu, 0, g_axpb, &ndr, CL_EVENT_WAIT, a, 3.0, 1)); /* 13: converted */
    check_fork(clforka(stdcpu, 0, g_axpb, &ndr, CL_EVENT_WAIT, a, 2, 0)); /* 26 */
    assert_null(clforka(stdcpu, 0, g_axpb, &ndr, CL_EVENT_WAIT, a, b, 0));
    assert_contains(clerror(), "argument 1 of kernel 'axpb' (int) is not a pointer; a pointer was given");
    assert_null(clforka(stdcpu, 0, g_axpb, &ndr, CL_EVENT_WAIT, 5, 2, 0));
    assert_contains(clerror(), "argument 0 of kernel 'axpb' (int*) is a pointer; a int was given");
    check_fork(clforka(stdcpu, 0, g_axpb, &ndr, CL_EVENT_WAIT, b, 2, 5)); /* b: 7 */
    clndrange_t half = clndrange_init1d(0, N / 2, 64);
    check_fork(clforka(stdcpu, 0, g_axpb, &half, CL_EVENT_WAIT, b + N / 2, 1, 1)); /* b's second half: 8 */
    to_host(0, a);
    to_host(0, b);
    expect_ints(a, N, 26);
    expect_ints(b, N / 2, 7);
    expect_ints(b + N / 2, N / 2, 8);
    /* Devices 1 and 0 in turn, each on its own copy of a (copy mode). */
    for (int step = 1; step <= 4; step++) {
        unsigned d = step % 2;
        to_device(d, a);
        check_fork(clforka(stdcpu, d, g_axpb, &ndr, CL_EVENT_WAIT, a, 1, step)); /* 27, 29, 32, 36 */
        to_host(d, a);
        expect_ints(a, N, 26 + step * (step + 1) / 2);
    }
    assert_int_equal(clfree(b), 0);
    assert_null(clforka(stdcpu, 0, g_axpb, &ndr, CL_EVENT_WAIT, b, 2, 0));
    assert_contains(clerror(), "is not memory returned by clmalloc (or it was freed)");
    to_device(0, a);
    check_fork(clforka(stdcpu, 0, g_axpb, &ndr, CL_EVENT_WAIT, a, 1, 1)); /* 37: a still binds */
    to_host(0, a);
    expect_ints(a, N, 37);
    assert_int_equal(clfree(a), 0);
}

/* CL_EVENT_NOEVENT: launches without an event return STDCL_LAUNCHED; what
 * comes after them (a sync back without clwait, a launch with an event, a
 * NOWAIT transfer to the device, clwait, clfree) is ordered after them, on
 * one device and on two at once. */
static void test_noevent_launches_are_ordered_and_joined(void** state)
{
    (void)state;
    enum { LAUNCHES = 3000, N = 4096 };
    int* c0 = alloc_ints(1, 0);
    int* c1 = alloc_ints(1, 0);
    to_device(0, c0);
    to_device(1, c1);
    clndrange_t one = clndrange_init1d(0, 1, 1);
    for (int i = 0; i < LAUNCHES; i++) {
        if (clforka(stdcpu, 0, g_count, &one, CL_EVENT_NOWAIT | CL_EVENT_NOEVENT, c0) != STDCL_LAUNCHED ||
            (i % 3 == 0 &&
             clforka(stdcpu, 1, g_count, &one, CL_EVENT_NOWAIT | CL_EVENT_NOEVENT, c1) != STDCL_LAUNCHED)) {
            print_error("launch %d: %s\n", i, clerror());
            fail();
        }
    }
    /* No clwait: the sync back (on the transfer queue in copy mode) comes after. */
    to_host(0, c0);
    assert_int_equal(c0[0], LAUNCHES);
    /* A launch with an event after event-less ones, then one without after it. */
    check_fork(clforka(stdcpu, 1, g_count, &one, CL_EVENT_NOWAIT, c1));
    assert_true(clforka(stdcpu, 1, g_count, &one, CL_EVENT_NOWAIT | CL_EVENT_NOEVENT, c1) == STDCL_LAUNCHED);
    assert_int_equal(stdcl_wait(stdcpu, CL_ALL_DEVICES, CL_KERNEL_EVENT), 0);
    assert_non_null(clmsync(stdcpu, 1, c1, CL_MEM_HOST | CL_EVENT_NOWAIT));
    assert_int_equal(stdcl_wait(stdcpu, 1, CL_MEM_EVENT), 0);
    assert_int_equal(c1[0], LAUNCHES / 3 + 2);
    /* A NOWAIT transfer to the device, then event-less launches that read it. */
    int* a = alloc_ints(N, 2);
    assert_non_null(clmsync(stdcpu, 0, a, CL_MEM_DEVICE | CL_EVENT_NOWAIT));
    clndrange_t ndr = clndrange_init1d(0, N, 64);
    assert_true(clforka(stdcpu, 0, g_axpb, &ndr, CL_EVENT_NOWAIT | CL_EVENT_NOEVENT, a, 3, 1) == STDCL_LAUNCHED);
    assert_true(clforka(stdcpu, 0, g_axpb, &ndr, CL_EVENT_NOWAIT | CL_EVENT_NOEVENT, a, 2, 0) == STDCL_LAUNCHED);
    assert_int_equal(clflush(stdcpu, 0, 0), 0);
    assert_int_equal(stdcl_wait(stdcpu, 0, CL_ALL_EVENT), 0);
    to_host(0, a);
    expect_ints(a, N, 14);
    /* clfree right after event-less launches waits for them. */
    assert_true(clforka(stdcpu, 0, g_axpb, &ndr, CL_EVENT_NOWAIT | CL_EVENT_NOEVENT, a, 5, 0) == STDCL_LAUNCHED);
    assert_int_equal(clfree(a), 0);
    assert_int_equal(stdcl_wait(stdcpu, 0, CL_KERNEL_EVENT), 0);
    assert_int_equal(stdcl_wait(stdcpu, 0, CL_KERNEL_EVENT), 0); /* nothing left to join */
    assert_int_equal(clfree(c0), 0);
    assert_int_equal(clfree(c1), 0);
}

/* helper_profile <mode> in a process started with env exits 0 (what names
 * it in a failure) and prints want, and also unless NULL. */
static void expect_helper_profile(const char* mode, const char* const* env, const char* what, const char* want,
                                  const char* also)
{
    const char* args[] = {mode, NULL};
    tu_proc r;
    tu_spawn(&r, tu_helper("helper_profile"), args, env, NULL, 120);
    tu_expect_status(&r, 0, what);
    assert_contains(r.out, want);
    if (also) assert_contains(r.out, also);
    tu_proc_free(&r);
}

/* STDCL_LAUNCH_EVENTS=0: a NOWAIT launch without CL_EVENT_NORELEASE is made
 * without an event (it returns STDCL_LAUNCHED) and is joined all the same;
 * unset or 1: it returns its event. */
static void expect_stream(const char* var, const char* want)
{
    const char* env[] = {var, NULL};
    expect_helper_profile("stream", env, "helper_profile stream", want, "stream ok");
}

static void test_launch_events_setting_makes_nowait_launches_eventless(void** state)
{
    (void)state;
    expect_stream("STDCL_LAUNCH_EVENTS=0", "returned: STDCL_LAUNCHED");
    expect_stream("STDCL_LAUNCH_EVENTS=1", "returned: an event");
    /* The profile keeps an event of its own; the caller still gets none. */
    const char* env[] = {"STDCL_LAUNCH_EVENTS=off", "STDCL_PROFILE=/dev/null", NULL};
    expect_helper_profile("stream", env, "helper_profile stream with the profile", "returned: STDCL_LAUNCHED",
                          "stream ok");
}

/* CL_EVENT_NOEVENT without CL_EVENT_NOWAIT, or with CL_EVENT_NORELEASE, is
 * refused with a message, and nothing is launched. */
static void test_noevent_refused_with_wait_or_norelease(void** state)
{
    (void)state;
    int* c = alloc_ints(1, 0);
    to_device(0, c);
    clndrange_t one = clndrange_init1d(0, 1, 1);
    clerror();
    assert_null(clforka(stdcpu, 0, g_count, &one, CL_EVENT_NOEVENT, c));
    assert_contains(clerror(), "clforka: CL_EVENT_NOEVENT needs CL_EVENT_NOWAIT");
    assert_null(clforka(stdcpu, 0, g_count, &one, CL_EVENT_WAIT | CL_EVENT_NOEVENT, c));
    assert_contains(clerror(), "needs CL_EVENT_NOWAIT");
    assert_int_equal(clarg_set_global(stdcpu, g_count, 0, c), 0);
    assert_null(clfork(stdcpu, 0, g_count, &one, CL_EVENT_NOWAIT | CL_EVENT_NOEVENT | CL_EVENT_NORELEASE));
    assert_contains(clerror(), "clfork: CL_EVENT_NOEVENT with CL_EVENT_NORELEASE: there is no event to hand over");
    /* clmsync takes no CL_EVENT_NOEVENT: transfers keep their events. */
    assert_null(clmsync(stdcpu, 0, c, CL_MEM_HOST | CL_EVENT_NOWAIT | CL_EVENT_NOEVENT));
    assert_contains(clerror(), "unknown flags 0x40");
    to_host(0, c);
    assert_int_equal(c[0], 0);
    assert_true(clfork(stdcpu, 0, g_count, &one, CL_EVENT_NOWAIT | CL_EVENT_NOEVENT) == STDCL_LAUNCHED);
    assert_int_equal(stdcl_wait(stdcpu, 0, CL_KERNEL_EVENT), 0);
    to_host(0, c);
    assert_int_equal(c[0], 1);
    assert_int_equal(clfree(c), 0);
}

/* 4096 ints of 1 on device 0, and a NOWAIT launch of axpb that makes them x,
 * not waited for. */
static int* axpb_nowait(int x)
{
    int* a = alloc_ints(4096, 1);
    to_device(0, a);
    clndrange_t ndr = clndrange_init1d(0, 4096, 64);
    check_fork(clforka(stdcpu, 0, g_axpb, &ndr, CL_EVENT_NOWAIT, a, x, 0));
    return a;
}

static void test_clflush_submits_without_waiting(void** state)
{
    (void)state;
    int* a = axpb_nowait(5);
    assert_int_equal(clflush(stdcpu, 0, 0), 0);
    assert_int_equal(clflush(stdcpu, 1, 0), 0);
    assert_int_equal(stdcl_wait(stdcpu, 0, CL_KERNEL_EVENT), 0);
    to_host(0, a);
    expect_ints(a, 4096, 5);
    clerror();
    assert_true(clflush(stdcpu, 2, 0) < 0);
    assert_non_null(clerror());
    assert_true(clflush(NULL, 0, 0) < 0);
    assert_non_null(clerror());
    assert_int_equal(clflush(stdcpu, 0, 0x40000), STDCL_EINVAL);
    const char* e = clerror();
    assert_non_null(e);
    assert_contains(e, "clflush: unknown flags 0x40000");
    assert_int_equal(clfree(a), 0);
}

/* A NOWAIT launch alone is not flushed on a driver that starts kernels
 * without a flush (PoCL's, NVIDIA's): it must still run to completion without
 * clflush or clwait.  Its event's status is polled (a status query does not
 * flush). */
static void test_lone_nowait_launch_completes_unflushed(void** state)
{
    (void)state;
    int* a = alloc_ints(4096, 1);
    to_device(0, a);
    assert_int_equal(stdcl_wait(stdcpu, 0, CL_ALL_EVENT), 0);
    assert_int_equal(clflush(stdcpu, 0, 0), 0); /* the next launch starts a burst */
    clndrange_t ndr = clndrange_init1d(0, 4096, 64);
    cl_event ev = clforka(stdcpu, 0, g_axpb, &ndr, CL_EVENT_NOWAIT | CL_EVENT_NORELEASE, a, 4, 0);
    assert_non_null(ev);
    cl_int st = CL_QUEUED;
    struct timespec nap = {0, 1000000};
    for (int i = 0; i < 20000 && st != CL_COMPLETE; ++i) {
        assert_int_equal(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL), CL_SUCCESS);
        assert_true(st >= 0);
        if (st != CL_COMPLETE) nanosleep(&nap, NULL);
    }
    assert_int_equal(st, CL_COMPLETE);
    assert_int_equal(clReleaseEvent(ev), CL_SUCCESS);
    assert_int_equal(stdcl_wait(stdcpu, 0, CL_KERNEL_EVENT), 0);
    to_host(0, a);
    expect_ints(a, 4096, 4);
    assert_int_equal(clfree(a), 0);
}

static void test_clwait_norelease_keeps_events_tracked(void** state)
{
    (void)state;
    int* a = axpb_nowait(7);
    /* Waited, but the events stay tracked: a second clwait finds them again and
     * releases them (before, the library's reference was dropped unreleased). */
    assert_int_equal(stdcl_wait(stdcpu, 0, CL_KERNEL_EVENT | CL_EVENT_NORELEASE), 0);
    assert_int_equal(stdcl_wait(stdcpu, 0, CL_KERNEL_EVENT), 0);
    assert_int_equal(stdcl_wait(stdcpu, 0, CL_KERNEL_EVENT), 0);
    to_host(0, a);
    expect_ints(a, 4096, 7);
    assert_int_equal(clfree(a), 0);
}

static void test_clwait_without_events_returns_zero(void** state)
{
    (void)state;
    assert_int_equal(stdcl_wait(stdcpu, 0, CL_ALL_EVENT), 0);
    assert_int_equal(stdcl_wait(stdcpu, 1, 0), 0);
    clerror();
    assert_true(stdcl_wait(stdcpu, 2, CL_ALL_EVENT) < 0);
    assert_non_null(clerror());
}

/* clevent_times: in a process started with STDCL_PROFILE=1 (or the
 * COPRTHR_OPENCL_PROFILING_ENABLE alias) a launch has times; without, a
 * clear error.  expect_times: helper_profile "times" in a process started
 * with var exits 0 and prints want. */
static void expect_times(const char* var, const char* want)
{
    const char* env[] = {var, NULL};
    expect_helper_profile("times", env, "helper_profile times", want, NULL);
}

/* CL_ALL_DEVICES: the input to every device in one clmsync, each device
 * computes its half, each half comes back with clmsyncn from its device, and
 * the waits and the flush cover every device in one call. */
static void test_cl_all_devices_syncs_waits_and_flushes_every_device(void** state)
{
    (void)state;
    enum { HALF = 1024, N = 2 * HALF };
    assert_true(stdcl_mem_align(stdcpu) <= HALF * sizeof(int));
    int* a = alloc_ints(N, 0);
    for (int i = 0; i < N; i++) a[i] = i;
    assert_non_null(clmsync(stdcpu, CL_ALL_DEVICES, a, CL_MEM_DEVICE | CL_EVENT_WAIT));
    clndrange_t ndr = clndrange_init1d(0, HALF, 64);
    for (unsigned d = 0; d < 2; d++)
        check_fork(clforka(stdcpu, d, g_axpb, &ndr, CL_EVENT_NOWAIT, a + d * HALF, 3, (int)d));
    assert_int_equal(clflush(stdcpu, CL_ALL_DEVICES, 0), 0);
    assert_non_null(clwait(stdcpu, CL_ALL_DEVICES, CL_KERNEL_EVENT));
    for (unsigned d = 0; d < 2; d++)
        assert_non_null(clmsyncn(stdcpu, d, a + d * HALF, HALF * sizeof(int), CL_MEM_HOST | CL_EVENT_NOWAIT));
    assert_int_equal(stdcl_wait(stdcpu, CL_ALL_DEVICES, CL_ALL_EVENT), 0);
    for (int i = 0; i < N; i++) assert_int_equal(a[i], 3 * i + (i >= HALF));
    /* NOWAIT to every device, then one wait; the devices' copies agree. */
    for (int i = 0; i < N; i++) a[i] = 7;
    assert_non_null(clmsyncn(stdcpu, CL_ALL_DEVICES, a, HALF * sizeof(int), CL_MEM_DEVICE | CL_EVENT_NOWAIT));
    assert_int_equal(stdcl_wait(stdcpu, CL_ALL_DEVICES, 0), 0);
    for (unsigned d = 0; d < 2; d++) check_fork(clforka(stdcpu, d, g_axpb, &ndr, CL_EVENT_WAIT, a, 1, (int)d));
    assert_non_null(clmsyncn(stdcpu, 1, a, HALF * sizeof(int), CL_MEM_HOST | CL_EVENT_WAIT));
    expect_ints(a, HALF, 8);
    clfree(a);
}

static void test_clmalloc_zero_starts_as_zeros_on_host_and_devices(void** state)
{
    (void)state;
    enum { N = 1024 };
    for (unsigned d = 0; d < 2; d++) {
        /* Memory of this size freed with other contents first: it may come back. */
        int* old = alloc_ints(N, 7);
        assert_int_equal(clfree(old), 0);
        int* z = (int*)clmalloc(stdcpu, N * sizeof(int), CL_MEM_ZERO);
        assert_non_null(z);
        assert_int_equal(clmctl(z, CL_MCTL_GET_STATUS) & CL_MEM_ZERO, CL_MEM_ZERO);
        expect_ints(z, N, 0);
        /* Never synced: the device's copy is zeros too (a[i] * 1 + 5). */
        clndrange_t ndr = clndrange_init1d(0, N, 64);
        assert_non_null(clforka(stdcpu, d, g_axpb, &ndr, CL_EVENT_WAIT, z, 1, 5));
        to_host(d, z);
        expect_ints(z, N, 5);
        assert_int_equal(clfree(z), 0);
    }
    /* Device-only memory: its device copies. */
    int* dz = (int*)clmalloc(stdcpu, N * sizeof(int), CL_MEM_DEVONLY | CL_MEM_ZERO);
    int* w = alloc_ints(N, -1);
    assert_non_null(dz);
    clndrange_t ndr = clndrange_init1d(0, N, 64);
    assert_non_null(clforka(stdcpu, 1, g_axpb, &ndr, CL_EVENT_WAIT, dz, 1, 5));
    assert_non_null(clmcopy(stdcpu, 1, dz, w, CL_EVENT_WAIT));
    to_host(1, w);
    expect_ints(w, N, 5);
    clfree(dz);
    clfree(w);
    /* A flag beyond the known ones is still refused. */
    clerror();
    assert_null(clmalloc(stdcpu, 64, CL_MEM_ZERO << 1));
    assert_contains(clerror(), "unknown flags");
}

static void test_cl_all_devices_clmcopy_copies_on_every_device(void** state)
{
    (void)state;
    int* src = alloc_ints(256, 5);
    int* dst = alloc_ints(256, 0);
    assert_non_null(clmsync(stdcpu, CL_ALL_DEVICES, src, CL_MEM_DEVICE | CL_EVENT_WAIT));
    assert_non_null(clmsync(stdcpu, CL_ALL_DEVICES, dst, CL_MEM_DEVICE | CL_EVENT_WAIT));
    assert_non_null(clmcopy(stdcpu, CL_ALL_DEVICES, src, dst, CL_EVENT_WAIT));
    /* The last device first: in copy mode each read shows that device's copy. */
    for (unsigned d = 2; d-- > 0;) {
        to_host(d, dst);
        expect_ints(dst, 256, 5);
    }
    clfree(src);
    clfree(dst);
}

static void test_cl_all_devices_refuses_host_sync_and_norelease(void** state)
{
    (void)state;
    int* a = alloc_ints(64, 1);
    assert_null(clmsync(stdcpu, CL_ALL_DEVICES, a, CL_MEM_HOST | CL_EVENT_WAIT));
    const char* msg = clerror();
    assert_contains(msg, "clmsync: CL_MEM_HOST from CL_ALL_DEVICES");
    assert_contains(msg, "which device's copy");
    assert_null(clmsyncn(stdcpu, CL_ALL_DEVICES, a, 16, CL_MEM_HOST | CL_EVENT_WAIT));
    assert_contains(clerror(), "clmsyncn: CL_MEM_HOST from CL_ALL_DEVICES");
    assert_null(clmsync(stdcpu, CL_ALL_DEVICES, a, CL_MEM_DEVICE | CL_EVENT_NOWAIT | CL_EVENT_NORELEASE));
    assert_contains(clerror(), "CL_ALL_DEVICES with CL_EVENT_NORELEASE");
    /* A failure on one device names it; the devices before it have theirs. */
    int x = 0;
    assert_null(clmsync(stdcpu, CL_ALL_DEVICES, &x, CL_MEM_DEVICE | CL_EVENT_WAIT));
    assert_contains(clerror(), "not memory returned by clmalloc");
    assert_int_equal(stdcl_wait(NULL, CL_ALL_DEVICES, 0), STDCL_EINVAL);
    assert_null(clwait(NULL, CL_ALL_DEVICES, 0));
    clfree(a);
}

static void test_clevent_times_with_stdcl_profile(void** state)
{
    (void)state;
    expect_times("STDCL_PROFILE=1", "times ok");
    expect_times("COPRTHR_OPENCL_PROFILING_ENABLE=1", "times ok");
}

static void test_clevent_times_without_profiling_says_how_to_turn_it_on(void** state)
{
    (void)state;
    expect_times("STDCL_PROFILE=0",
                 "times error -9005: clevent_times: the event's queue does not profile: set STDCL_PROFILE=1");
}

static void test_clevent_times_bad_events_fail(void** state)
{
    (void)state;
    cl_ulong t0, t1;
    assert_int_equal(clevent_times(NULL, &t0, &t1), STDCL_EINVAL);
    assert_contains(clerror(), "clevent_times: the event is NULL");
    /* a user event that has not completed */
    cl_int err;
    cl_event u = clCreateUserEvent(stdcl_clcontext(stdcpu), &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(clevent_times(u, &t0, &t1), STDCL_ESTATE);
    assert_contains(clerror(), "clevent_times: the command has not completed");
    clSetUserEventStatus(u, -1);
    assert_int_equal(clevent_times(u, &t0, &t1), STDCL_ESTATE);
    assert_contains(clerror(), "clevent_times: the command failed");
    clReleaseEvent(u);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_clndrange_init1d_fills_fields),
    cmocka_unit_test(test_clndrange_init2d_fills_fields),
    cmocka_unit_test(test_clndrange_init3d_fills_fields),
    cmocka_unit_test(test_clndrange_set_fills_fields),
    cmocka_unit_test(test_clfork_1d_with_offset),
    cmocka_unit_test(test_clfork_2d),
    cmocka_unit_test(test_clfork_3d),
    cmocka_unit_test(test_clfork_local_size_zero_lets_runtime_choose),
    cmocka_unit_test(test_written_back_local_size_is_named_when_refused),
    cmocka_unit_test(test_refused_local_size_says_why),
    cmocka_unit_test(test_null_context_names_the_call),
    cmocka_unit_test(test_clarg_set_three_argument_form),
    cmocka_unit_test(test_clarg_set_four_argument_form),
    cmocka_unit_test(test_clarg_set_with_clmalloc_pointer_binds_it),
    cmocka_unit_test(test_closed_programs_kernels_let_go_of_freed_memory),
    cmocka_unit_test(test_clarg_set_local_three_argument_form),
    cmocka_unit_test(test_clarg_set_local_four_argument_form),
    cmocka_unit_test(test_clarg_set_global_rebinds_between_launches),
    cmocka_unit_test(test_clforka_scalars_vector_and_pointer),
    cmocka_unit_test(test_clfork_event_wait_blocks_until_done),
    cmocka_unit_test(test_clfork_nowait_then_clwait),
    cmocka_unit_test(test_clfork_norelease_returns_caller_owned_event),
    cmocka_unit_test(test_clfork_5000_nowait_launches_lose_nothing),
    cmocka_unit_test(test_clwait_joins_more_than_1024_events),
    cmocka_unit_test(test_repeated_scalars_reach_the_kernel_as_given),
    cmocka_unit_test(test_stream_fast_paths_keep_every_check),
    cmocka_unit_test(test_noevent_launches_are_ordered_and_joined),
    cmocka_unit_test(test_noevent_refused_with_wait_or_norelease),
    cmocka_unit_test(test_launch_events_setting_makes_nowait_launches_eventless),
    cmocka_unit_test(test_clflush_submits_without_waiting),
    cmocka_unit_test(test_lone_nowait_launch_completes_unflushed),
    cmocka_unit_test(test_clwait_without_events_returns_zero),
    cmocka_unit_test(test_clwait_norelease_keeps_events_tracked),
    cmocka_unit_test(test_cl_all_devices_syncs_waits_and_flushes_every_device),
    cmocka_unit_test(test_clmalloc_zero_starts_as_zeros_on_host_and_devices),
    cmocka_unit_test(test_cl_all_devices_clmcopy_copies_on_every_device),
    cmocka_unit_test(test_cl_all_devices_refuses_host_sync_and_norelease),
    cmocka_unit_test(test_clevent_times_with_stdcl_profile),
    cmocka_unit_test(test_clevent_times_without_profiling_says_how_to_turn_it_on),
    cmocka_unit_test(test_clevent_times_bad_events_fail),
};

int main(int argc, char** argv) { return tu_run_tests(argc, argv, "launch", tests, setup, tu_close_kernels); }
