/* SPDX-License-Identifier: MIT */
/* test_context.c: the default contexts, clgetndev, the raw-object accessors,
 * clcontext_create/destroy, and the STD* environment variables (checked in a
 * fresh process: helper_env).  Runs on PoCL with two pthread devices. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdcl.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

static const char* k_twice_src =
    "__kernel void twice(__global int* a) { int i = get_global_id(0); a[i] = 2 * a[i] + 1; }\n";

/* Runs `twice` on every device of cp and checks the results. */
static void check_context_runs_kernels(CLCONTEXT* cp)
{
    void* h = tu_clsopen(cp, k_twice_src, CLLD_NOW);
    cl_kernel k = clsym(cp, h, "twice", 0);
    assert_non_null(k);
    for (unsigned d = 0; d < clgetndev(cp); d++) {
        enum { N = 128 };
        int* a = (int*)clmalloc(cp, N * sizeof(int), 0);
        assert_non_null(a);
        for (int i = 0; i < N; i++) a[i] = i;
        clndrange_t ndr = clndrange_init1d(0, N, 32);
        assert_non_null(clmsync(cp, d, a, CL_MEM_DEVICE | CL_EVENT_WAIT));
        assert_non_null(clforka(cp, d, k, &ndr, CL_EVENT_WAIT, a));
        assert_non_null(clmsync(cp, d, a, CL_MEM_HOST | CL_EVENT_WAIT));
        for (int i = 0; i < N; i++) assert_int_equal(a[i], 2 * i + 1);
        assert_int_equal(clfree(a), 0);
    }
    assert_int_equal(clclose(cp, h), 0);
}

/* ------------------------------------------------------------------------ */
/* Default contexts                                                          */
/* ------------------------------------------------------------------------ */

static void test_stdcpu_has_two_devices(void** state)
{
    (void)state;
    assert_non_null(stdcpu);
    assert_int_equal(clgetndev(stdcpu), 2);
}

static void test_stddev_has_two_devices(void** state)
{
    (void)state;
    assert_non_null(stddev);
    assert_int_equal(clgetndev(stddev), 2);
}

/* The most devices of type `type` on one platform, asked of OpenCL directly. */
static cl_uint most_devices_of_type(cl_device_type type)
{
    cl_platform_id plats[16];
    cl_uint np = 0, best = 0;
    if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS) return 0;
    for (cl_uint i = 0; i < np && i < 16; i++) {
        cl_uint n = 0;
        if (clGetDeviceIDs(plats[i], type, 0, NULL, &n) == CL_SUCCESS && n > best) best = n;
    }
    return best;
}

static void test_stdgpu_is_null_without_gpu(void** state)
{
    (void)state;
    /* Plain PoCL has no GPU and no accelerator: stdgpu and stdacc are NULL.
     * (Where OpenCL does show one, the context must exist instead.) */
    cl_uint gpus = most_devices_of_type(CL_DEVICE_TYPE_GPU);
    cl_uint accs = most_devices_of_type(CL_DEVICE_TYPE_ACCELERATOR);
    if (gpus == 0) {
        assert_null(stdgpu);
        assert_int_equal(clgetndev(stdgpu), 0);
    } else {
        assert_non_null(stdgpu);
        assert_int_equal(clgetndev(stdgpu), gpus);
    }
    if (accs == 0)
        assert_null(stdacc);
    else
        assert_non_null(stdacc);
    assert_null(stdrpu);
    assert_null(stdnpu);
}

static void test_clgetndev_null_is_zero(void** state)
{
    (void)state;
    assert_int_equal(clgetndev(NULL), 0);
}

static void test_stdcl_init_does_nothing(void** state)
{
    (void)state;
    CLCONTEXT* before = stdcpu;
    stdcl_init();
    assert_ptr_equal(stdcpu, before);
    assert_int_equal(clgetndev(stdcpu), 2);
}

static void test_stdcl_version_matches_header(void** state)
{
    (void)state;
    assert_non_null(stdcl_version());
    assert_string_equal(stdcl_version(), STDCL_VERSION_STRING);
}

static void test_stdcl_device_is_real_device(void** state)
{
    (void)state;
    cl_device_id d0 = stdcl_device(stdcpu, 0), d1 = stdcl_device(stdcpu, 1);
    assert_non_null(d0);
    assert_non_null(d1);
    assert_ptr_not_equal(d0, d1);
    for (int i = 0; i < 2; i++) {
        cl_device_type t = 0;
        assert_int_equal(clGetDeviceInfo(i ? d1 : d0, CL_DEVICE_TYPE, sizeof t, &t, NULL), CL_SUCCESS);
        assert_true(t & CL_DEVICE_TYPE_CPU);
        cl_platform_id p = NULL;
        assert_int_equal(clGetDeviceInfo(i ? d1 : d0, CL_DEVICE_PLATFORM, sizeof p, &p, NULL), CL_SUCCESS);
        assert_ptr_equal(p, stdcl_platform(stdcpu));
    }
    /* Device numbers are stable: the same ids on every call. */
    assert_ptr_equal(stdcl_device(stdcpu, 0), d0);
    assert_ptr_equal(stdcl_device(stdcpu, 1), d1);
}

static void test_stdcl_device_out_of_range_is_null(void** state)
{
    (void)state;
    clerror();
    assert_null(stdcl_device(stdcpu, 2));
    const char* e = clerror();
    assert_non_null(e);
    assert_contains(e, "2");
    assert_null(stdcl_device(NULL, 0));
    assert_null(stdcl_queue(stdcpu, 2));
    assert_null(stdcl_clcontext(NULL));
    clerror();
}

static void test_stdcl_platform_is_pocl(void** state)
{
    (void)state;
    cl_platform_id p = stdcl_platform(stdcpu);
    assert_non_null(p);
    char name[256] = "";
    assert_int_equal(clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, NULL), CL_SUCCESS);
    assert_contains(name, "Portable Computing Language");
}

static void test_stdcl_clcontext_is_real_context(void** state)
{
    (void)state;
    cl_context c = stdcl_clcontext(stdcpu);
    assert_non_null(c);
    cl_uint n = 0;
    assert_int_equal(clGetContextInfo(c, CL_CONTEXT_NUM_DEVICES, sizeof n, &n, NULL), CL_SUCCESS);
    assert_int_equal(n, 2);
    cl_device_id ids[2] = {NULL, NULL};
    assert_int_equal(clGetContextInfo(c, CL_CONTEXT_DEVICES, sizeof ids, ids, NULL), CL_SUCCESS);
    for (unsigned d = 0; d < 2; d++) {
        cl_device_id want = stdcl_device(stdcpu, d);
        assert_true(ids[0] == want || ids[1] == want);
    }
}

static void test_stdcl_queue_is_real_queue(void** state)
{
    (void)state;
    for (unsigned d = 0; d < 2; d++) {
        cl_command_queue q = stdcl_queue(stdcpu, d);
        assert_non_null(q);
        cl_device_id qd = NULL;
        cl_context qc = NULL;
        assert_int_equal(clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof qd, &qd, NULL), CL_SUCCESS);
        assert_int_equal(clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof qc, &qc, NULL), CL_SUCCESS);
        assert_ptr_equal(qd, stdcl_device(stdcpu, d));
        assert_ptr_equal(qc, stdcl_clcontext(stdcpu));
        /* Plain OpenCL on libstdcl's objects: a buffer written and read back. */
        cl_int err = CL_SUCCESS;
        cl_mem m = clCreateBuffer(stdcl_clcontext(stdcpu), CL_MEM_READ_WRITE, 64 * sizeof(int), NULL, &err);
        assert_int_equal(err, CL_SUCCESS);
        int in[64], out[64];
        for (int i = 0; i < 64; i++) in[i] = 7 * i + (int)d, out[i] = -1;
        assert_int_equal(clEnqueueWriteBuffer(q, m, CL_TRUE, 0, sizeof in, in, 0, NULL, NULL), CL_SUCCESS);
        assert_int_equal(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL), CL_SUCCESS);
        assert_memory_equal(in, out, sizeof in);
        assert_int_equal(clReleaseMemObject(m), CL_SUCCESS);
    }
}

static void test_stdcl_context_why_describes_choice(void** state)
{
    (void)state;
    const char* why = stdcl_context_why(stdcpu);
    assert_non_null(why);
    assert_contains(why, "stdcpu");
    assert_contains(why, "Portable Computing Language");
    assert_null(stdcl_context_why(NULL));
    clerror();
}

/* ------------------------------------------------------------------------ */
/* Default contexts over the same devices: one cl_context                    */
/* ------------------------------------------------------------------------ */

/* On PoCL stddev and stdcpu hold the same two devices: one cl_context, held by
 * each, with queues of their own. */
static void test_stddev_and_stdcpu_share_one_cl_context(void** state)
{
    (void)state;
    cl_context c = stdcl_clcontext(stddev);
    assert_non_null(c);
    assert_ptr_equal(stdcl_clcontext(stdcpu), c);
    assert_ptr_equal(stdcl_platform(stdcpu), stdcl_platform(stddev));
    for (unsigned d = 0; d < 2; d++) {
        assert_ptr_equal(stdcl_device(stdcpu, d), stdcl_device(stddev, d));
        assert_ptr_not_equal(stdcl_queue(stdcpu, d), stdcl_queue(stddev, d));
    }
    cl_uint refs = 0;
    assert_int_equal(clGetContextInfo(c, CL_CONTEXT_REFERENCE_COUNT, sizeof refs, &refs, NULL), CL_SUCCESS);
    assert_true(refs >= 2);
    assert_int_equal(stdcl_mem_align(stdcpu), stdcl_mem_align(stddev));
    assert_contains(stdcl_context_why(stdcpu), "shares the OpenCL context of stddev");
    assert_not_contains(stdcl_context_why(stddev), "shares");
}

/* Both work; an allocation is used only through its own context; their cl_mem
 * objects are interchangeable in plain OpenCL calls. */
static void test_shared_cl_context_keeps_memory_per_context(void** state)
{
    (void)state;
    enum { N = 256 };
    check_context_runs_kernels(stddev);
    check_context_runs_kernels(stdcpu);
    int* a = (int*)clmalloc(stddev, N * sizeof(int), 0);
    int* b = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
    assert_non_null(a);
    assert_non_null(b);
    for (int i = 0; i < N; i++) a[i] = 3 * i, b[i] = -1;
    clerror();
    assert_null(clmsync(stdcpu, 0, a, CL_MEM_DEVICE | CL_EVENT_WAIT));
    assert_contains(clerror(), "attached to another context");
    void* h = tu_clsopen(stdcpu, k_twice_src, CLLD_NOW);
    cl_kernel k = clsym(stdcpu, h, "twice", 0);
    assert_non_null(k);
    clndrange_t ndr = clndrange_init1d(0, N, 32);
    assert_null(clforka(stdcpu, 0, k, &ndr, CL_EVENT_WAIT, a));
    assert_contains(clerror(), "attached to another context");
    assert_int_equal(clclose(stdcpu, h), 0);

    /* stddev's buffer copied into stdcpu's on stddev's queue. */
    assert_non_null(clmsync(stddev, 0, a, CL_MEM_DEVICE | CL_EVENT_WAIT));
    assert_non_null(clmsync(stdcpu, 0, b, CL_MEM_DEVICE | CL_EVENT_WAIT));
    cl_mem ma = stdcl_mem(stddev, 0, a), mb = stdcl_mem(stdcpu, 0, b);
    assert_non_null(ma);
    assert_non_null(mb);
    assert_int_equal(clEnqueueCopyBuffer(stdcl_queue(stddev, 0), ma, mb, 0, 0, N * sizeof(int), 0, NULL, NULL),
                     CL_SUCCESS);
    assert_int_equal(clFinish(stdcl_queue(stddev, 0)), CL_SUCCESS);
    assert_non_null(clmsync(stdcpu, 0, b, CL_MEM_HOST | CL_EVENT_WAIT));
    for (int i = 0; i < N; i++) assert_int_equal(b[i], 3 * i);
    assert_int_equal(clfree(a), 0);
    assert_int_equal(clfree(b), 0);
}

/* A program the test builds itself, with plain OpenCL, in cp's cl_context. */
static cl_program own_program(CLCONTEXT* cp, const char* src)
{
    cl_int err = CL_SUCCESS;
    cl_program prog = clCreateProgramWithSource(stdcl_clcontext(cp), 1, &src, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(clBuildProgram(prog, 0, NULL, "", NULL, NULL), CL_SUCCESS);
    return prog;
}

/* A cl_kernel the program makes in the shared cl_context runs in either
 * context, with that context's memory. */
static void test_own_kernel_in_shared_cl_context_runs_in_both(void** state)
{
    (void)state;
    enum { N = 128 };
    cl_int err = CL_SUCCESS;
    cl_program prog = own_program(stdcpu, k_twice_src);
    cl_kernel k = clCreateKernel(prog, "twice", &err);
    assert_int_equal(err, CL_SUCCESS);
    CLCONTEXT* cps[] = {stdcpu, stddev};
    int* mem[2];
    for (int c = 0; c < 2; c++) {
        int* a = mem[c] = (int*)clmalloc(cps[c], N * sizeof(int), 0);
        assert_non_null(a);
        for (int i = 0; i < N; i++) a[i] = i + c;
        clndrange_t ndr = clndrange_init1d(0, N, 32);
        assert_non_null(clmsync(cps[c], 1, a, CL_MEM_DEVICE | CL_EVENT_WAIT));
        cl_event ev = clforka(cps[c], 1, k, &ndr, CL_EVENT_WAIT, a);
        if (!ev) print_error("clforka(%s): %s\n", c ? "stddev" : "stdcpu", clerror());
        assert_non_null(ev);
        assert_non_null(clmsync(cps[c], 1, a, CL_MEM_HOST | CL_EVENT_WAIT));
        for (int i = 0; i < N; i++) assert_int_equal(a[i], 2 * (i + c) + 1);
    }
    /* stdcpu's memory in a launch on stddev: refused. */
    clndrange_t ndr = clndrange_init1d(0, N, 32);
    clerror();
    assert_null(clforka(stddev, 0, k, &ndr, CL_EVENT_WAIT, mem[0]));
    assert_contains(clerror(), "is not attached to stddev");
    for (int c = 0; c < 2; c++) assert_int_equal(clfree(mem[c]), 0);
    clReleaseKernel(k);
    clReleaseProgram(prog);
}

/* A kernel the program makes after a clclose may be given the handle of a
 * kernel that clclose released: it runs, every time (the released kernel's
 * record must not answer for it). */
static void test_own_kernel_made_after_clclose_runs(void** state)
{
    (void)state;
    enum { N = 64, ROUNDS = 40 };
    int* a = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
    assert_non_null(a);
    for (int r = 0; r < ROUNDS; r++) {
        void* h = tu_clsopen(stdcpu, k_twice_src, CLLD_NOW);
        cl_kernel kl = clsym(stdcpu, h, "twice", 0);
        assert_non_null(kl);
        assert_int_equal(clclose(stdcpu, h), 0);
        cl_int err = CL_SUCCESS;
        cl_program prog = own_program(stdcpu, k_twice_src);
        cl_kernel k = clCreateKernel(prog, "twice", &err);
        assert_int_equal(err, CL_SUCCESS);
        for (int i = 0; i < N; i++) a[i] = i + r;
        clndrange_t ndr = clndrange_init1d(0, N, 32);
        assert_non_null(clmsync(stdcpu, 0, a, CL_MEM_DEVICE | CL_EVENT_WAIT));
        cl_event ev = clforka(stdcpu, 0, k, &ndr, CL_EVENT_WAIT, a);
        if (!ev) print_error("round %d: clforka (handle %s the clclosed one's): %s\n", r, k == kl ? "equal to" : "unlike",
                             clerror());
        assert_non_null(ev);
        assert_non_null(clmsync(stdcpu, 0, a, CL_MEM_HOST | CL_EVENT_WAIT));
        for (int i = 0; i < N; i++) assert_int_equal(a[i], 2 * (i + r) + 1);
        clReleaseKernel(k);
        clReleaseProgram(prog);
    }
    assert_int_equal(clfree(a), 0);
}

/* Kernels the program makes and releases: each new one is described afresh
 * (never another's arguments), and one used after the program released it is
 * a clear error. */
static void test_own_kernels_released_by_the_program(void** state)
{
    (void)state;
    enum { N = 64, ROUNDS = 40 };
    static const char* src =
        "__kernel void twice(__global int* a) { int i = get_global_id(0); a[i] = 2 * a[i] + 1; }\n"
        "__kernel void addv(int v, __global int* a) { int i = get_global_id(0); a[i] += v; }\n";
    cl_int err = CL_SUCCESS;
    cl_program prog = own_program(stdcpu, src);
    int* a = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
    assert_non_null(a);
    clndrange_t ndr = clndrange_init1d(0, N, 32);
    cl_kernel last = NULL;
    for (int r = 0; r < ROUNDS; r++) {
        int twice = r & 1;
        cl_kernel k = clCreateKernel(prog, twice ? "twice" : "addv", &err);
        assert_int_equal(err, CL_SUCCESS);
        for (int i = 0; i < N; i++) a[i] = i;
        assert_non_null(clmsync(stdcpu, 0, a, CL_MEM_DEVICE | CL_EVENT_WAIT));
        cl_event ev = twice ? clforka(stdcpu, 0, k, &ndr, CL_EVENT_WAIT, a) : clforka(stdcpu, 0, k, &ndr, CL_EVENT_WAIT, 5, a);
        if (!ev) print_error("round %d: %s\n", r, clerror());
        assert_non_null(ev);
        assert_non_null(clmsync(stdcpu, 0, a, CL_MEM_HOST | CL_EVENT_WAIT));
        for (int i = 0; i < N; i++) assert_int_equal(a[i], twice ? 2 * i + 1 : i + 5);
        assert_int_equal(clReleaseKernel(k), CL_SUCCESS);
        last = k;
    }
    /* The last one, released: refused with the reason, nothing enqueued. */
    for (int i = 0; i < N; i++) a[i] = i;
    clerror();
    assert_null(clforka(stdcpu, 0, last, &ndr, CL_EVENT_WAIT, a));
    const char* e = clerror();
    assert_non_null(e);
    assert_contains(e, "was released: the program released it (clReleaseKernel)");
    for (int i = 0; i < N; i++) assert_int_equal(a[i], i);
    assert_int_equal(clfree(a), 0);
    clReleaseProgram(prog);
}

/* libstdcl holds one reference to a kernel the program made while it keeps
 * its record, as clfork(3) says, and none once the context is destroyed; the
 * kernel then still works in plain OpenCL. */
static void test_own_kernel_held_while_recorded_and_let_go_with_the_context(void** state)
{
    (void)state;
    enum { N = 64 };
    CLCONTEXT* cp = clcontext_create(NULL, CL_DEVICE_TYPE_CPU, 0, NULL, 0);
    assert_non_null(cp);
    cl_int err = CL_SUCCESS;
    cl_program prog = own_program(cp, k_twice_src);
    cl_kernel k = clCreateKernel(prog, "twice", &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_uint refs = 0;
    assert_int_equal(clGetKernelInfo(k, CL_KERNEL_REFERENCE_COUNT, sizeof refs, &refs, NULL), CL_SUCCESS);
    assert_int_equal(refs, 1);
    int* a = (int*)clmalloc(cp, N * sizeof(int), 0);
    assert_non_null(a);
    for (int i = 0; i < N; i++) a[i] = i;
    clndrange_t ndr = clndrange_init1d(0, N, N);
    assert_non_null(clmsync(cp, 0, a, CL_MEM_DEVICE | CL_EVENT_WAIT));
    assert_non_null(clforka(cp, 0, k, &ndr, CL_EVENT_WAIT, a));
    assert_non_null(clmsync(cp, 0, a, CL_MEM_HOST | CL_EVENT_WAIT));
    for (int i = 0; i < N; i++) assert_int_equal(a[i], 2 * i + 1);
    assert_int_equal(clGetKernelInfo(k, CL_KERNEL_REFERENCE_COUNT, sizeof refs, &refs, NULL), CL_SUCCESS);
    assert_int_equal(refs, 2);
    assert_int_equal(clfree(a), 0);
    assert_int_equal(clcontext_destroy(cp), 0);
    assert_int_equal(clGetKernelInfo(k, CL_KERNEL_REFERENCE_COUNT, sizeof refs, &refs, NULL), CL_SUCCESS);
    assert_int_equal(refs, 1);
    /* The program's own kernel, in plain OpenCL, in its cl_context (still
     * held by the program's objects). */
    cl_context c = NULL;
    assert_int_equal(clGetKernelInfo(k, CL_KERNEL_CONTEXT, sizeof c, &c, NULL), CL_SUCCESS);
    cl_device_id devs[16];
    assert_int_equal(clGetContextInfo(c, CL_CONTEXT_DEVICES, sizeof devs, devs, NULL), CL_SUCCESS);
    cl_command_queue q = clCreateCommandQueue(c, devs[0], 0, &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    int h[N];
    for (int i = 0; i < N; i++) h[i] = i;
    assert_int_equal(clEnqueueWriteBuffer(q, m, CL_TRUE, 0, sizeof h, h, 0, NULL, NULL), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(k, 0, sizeof m, &m), CL_SUCCESS);
    size_t g = N;
    assert_int_equal(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL), CL_SUCCESS);
    assert_int_equal(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof h, h, 0, NULL, NULL), CL_SUCCESS);
    for (int i = 0; i < N; i++) assert_int_equal(h[i], 2 * i + 1);
    assert_int_equal(clReleaseKernel(k), CL_SUCCESS);  // first: it holds m as its argument
    clReleaseMemObject(m);
    clReleaseCommandQueue(q);
    assert_int_equal(clReleaseProgram(prog), CL_SUCCESS);
}

/* Random programs of kernel handles: programs opened and closed (clsopen,
 * clsym, clclose; opening a text that is open shares its handle and kernel,
 * as dlopen does), kernels the program makes and releases (clCreateKernel,
 * clReleaseKernel), and launches of any of them, against a model: a live
 * kernel runs and gives its result, every time (whatever handles the driver
 * reuses); a kernel closed, or released after libstdcl recorded it, is
 * refused with "was released" while it is among the last 32 let go.  libstdcl
 * learns that the program released a kernel at its next use or at the next new
 * kernel, so up to KR_SLOTS kernels let go before it may be counted after it:
 * the model uses such a handle only while fewer than KR_RECENT were let go
 * since (KR_RECENT + KR_SLOTS <= 32; past the last 32, as in plain OpenCL, a
 * released handle must not be used).  STDCL_KERNELS_SEED replays a run. */
enum { KR_SLOTS = 12, KR_RECENT = 16, KR_STEPS = 400, KR_N = 32, KR_GENS = KR_STEPS + 2 };
typedef struct {
    int used;
    int own;       /* made by the program (clCreateKernel); else clsym's */
    int addv;      /* addv(int v, int* a) instead of twice(int* a) */
    int open;      /* this slot holds its reference (an open, or the program's kernel) */
    int gen;       /* the kernel's generation (kr_gen) */
    void* h;       /* clsym's: the handle */
    cl_kernel k;
} kr_slot;
typedef struct {
    long gone_at;  /* -1 live; else the count of kernels let go before it */
    int recorded;  /* libstdcl has a record (clsym's always; the program's once launched) */
} kr_gen;

static unsigned long long kr_next(unsigned long long* s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void test_kernel_handles_against_a_model(void** state)
{
    (void)state;
    static const char* lib_src[2] = {
        "__kernel void twice(__global int* a) { int i = get_global_id(0); a[i] = 2 * a[i] + 1; }\n",
        "__kernel void addv(int v, __global int* a) { int i = get_global_id(0); a[i] += v; }\n"};
    static const char* own_src =
        "__kernel void twice(__global int* a) { int i = get_global_id(0); a[i] = 2 * a[i] + 1; }\n"
        "__kernel void addv(int v, __global int* a) { int i = get_global_id(0); a[i] += v; }\n";
    const char* env = getenv("STDCL_KERNELS_SEED");
    unsigned long long seed = env ? strtoull(env, NULL, 0) : (unsigned long long)time(NULL) * 2654435761ull;
    if (!seed) seed = 1;
    unsigned long long rng = seed;
    printf("kernel handles: seed %llu (STDCL_KERNELS_SEED replays it)\n", seed);
    cl_int err = CL_SUCCESS;
    cl_program prog = own_program(stdcpu, own_src);
    int* a = (int*)clmalloc(stdcpu, KR_N * sizeof(int), 0);
    assert_non_null(a);
    static kr_slot slot[KR_SLOTS];
    static kr_gen gens[KR_GENS];
    memset(slot, 0, sizeof slot);
    int ngen = 0;
    int opens[2] = {0, 0}, lib_gen[2] = {-1, -1}; /* per library text: opens, its kernel's generation */
    long gone = 0;                                /* kernels let go so far */
    int launches = 0, refusals = 0;
    clndrange_t ndr = clndrange_init1d(0, KR_N, KR_N);
    for (int step = 0; step < KR_STEPS; step++) {
        kr_slot* s = &slot[kr_next(&rng) % KR_SLOTS];
        int what = (int)(kr_next(&rng) % 4);
        if (!s->open && what < 2) {
            /* a slot without a reference: a new kernel, the library's or the program's */
            s->used = 1;
            s->open = 1;
            s->own = (int)(kr_next(&rng) & 1);
            s->addv = (int)(kr_next(&rng) & 1);
            if (s->own) {
                s->h = NULL;
                s->k = clCreateKernel(prog, s->addv ? "addv" : "twice", &err);
                assert_int_equal(err, CL_SUCCESS);
                s->gen = ngen++;
                gens[s->gen].gone_at = -1;
                gens[s->gen].recorded = 0;
            } else {
                s->h = tu_clsopen(stdcpu, lib_src[s->addv], CLLD_NOW);
                s->k = clsym(stdcpu, s->h, s->addv ? "addv" : "twice", 0);
                assert_non_null(s->k);
                if (opens[s->addv]++ == 0) {
                    lib_gen[s->addv] = ngen++;
                    gens[lib_gen[s->addv]].gone_at = -1;
                    gens[lib_gen[s->addv]].recorded = 1;
                }
                s->gen = lib_gen[s->addv];
            }
        } else if (s->open && what == 2) {
            /* its reference goes: the kernel with it where it was the last */
            s->open = 0;
            if (s->own) {
                assert_int_equal(clReleaseKernel(s->k), CL_SUCCESS);
                gens[s->gen].gone_at = gone++;
            } else {
                assert_int_equal(clclose(stdcpu, s->h), 0);
                if (--opens[s->addv] == 0) gens[s->gen].gone_at = gone++;
            }
        } else if (s->used) {
            kr_gen* g = &gens[s->gen];
            int live = g->gone_at < 0;
            if (!live && !(g->recorded && gone - g->gone_at < KR_RECENT)) continue; /* must not be used */
            /* a launch: right, or refused for the reason */
            int v = (int)(kr_next(&rng) % 100);
            for (int i = 0; i < KR_N; i++) a[i] = i;
            assert_non_null(clmsync(stdcpu, 0, a, CL_MEM_DEVICE | CL_EVENT_WAIT));
            clerror();
            cl_event ev = s->addv ? clforka(stdcpu, 0, s->k, &ndr, CL_EVENT_WAIT, v, a)
                                  : clforka(stdcpu, 0, s->k, &ndr, CL_EVENT_WAIT, a);
            const char* e = clerror();
            if (live) {
                if (!ev)
                    print_error("seed %llu step %d: a live %s kernel was refused: %s\n", seed, step,
                                s->own ? "program-made" : "clsym", e ? e : "(no message)");
                assert_non_null(ev);
                assert_non_null(clmsync(stdcpu, 0, a, CL_MEM_HOST | CL_EVENT_WAIT));
                for (int i = 0; i < KR_N; i++) {
                    int want = s->addv ? i + v : 2 * i + 1;
                    if (a[i] != want)
                        print_error("seed %llu step %d: a[%d] = %d, want %d\n", seed, step, i, a[i], want);
                    assert_int_equal(a[i], want);
                }
                g->recorded = 1;
                launches++;
            } else {
                if (ev || !e || !strstr(e, "was released"))
                    print_error("seed %llu step %d: a kernel let go %ld kernels ago: %s\n", seed, step,
                                gone - g->gone_at, ev ? "it ran" : e ? e : "(no message)");
                assert_null(ev);
                assert_contains(e, s->own ? "the program released it" : "closed with clclose");
                refusals++;
            }
        }
    }
    printf("kernel handles: %d steps, %d launches, %d refused, %ld kernels let go\n", KR_STEPS, launches, refusals,
           gone);
    assert_true(launches > 0 && refusals > 0 && gone > 0);
    for (int i = 0; i < KR_SLOTS; i++) {
        if (!slot[i].open) continue;
        if (slot[i].own)
            assert_int_equal(clReleaseKernel(slot[i].k), CL_SUCCESS);
        else
            assert_int_equal(clclose(stdcpu, slot[i].h), 0);
    }
    assert_int_equal(clfree(a), 0);
    clReleaseProgram(prog);
}

/* ------------------------------------------------------------------------ */
/* clcontext_create / clcontext_destroy                                      */
/* ------------------------------------------------------------------------ */

static void test_clcontext_create_cpu_context_works(void** state)
{
    (void)state;
    CLCONTEXT* cp = clcontext_create(NULL, CL_DEVICE_TYPE_CPU, 0, NULL, 0);
    if (!cp) print_error("clcontext_create: %s\n", clerror());
    assert_non_null(cp);
    assert_ptr_not_equal(cp, stdcpu);
    assert_int_equal(clgetndev(cp), 2);
    assert_non_null(stdcl_clcontext(cp));
    assert_ptr_not_equal(stdcl_clcontext(cp), stdcl_clcontext(stdcpu));
    check_context_runs_kernels(cp);
    assert_int_equal(clcontext_destroy(cp), 0);
}

static void test_clcontext_create_max_ndev_caps(void** state)
{
    (void)state;
    CLCONTEXT* cp = clcontext_create("pocl", CL_DEVICE_TYPE_ALL, 1, NULL, 0);
    if (!cp) print_error("clcontext_create: %s\n", clerror());
    assert_non_null(cp);
    assert_int_equal(clgetndev(cp), 1);
    assert_null(stdcl_device(cp, 1));
    clerror();
    check_context_runs_kernels(cp);
    assert_int_equal(clcontext_destroy(cp), 0);
}

static void test_clcontext_create_unknown_platform_fails(void** state)
{
    (void)state;
    clerror();
    CLCONTEXT* cp = clcontext_create("no-such-platform-xyz", CL_DEVICE_TYPE_ALL, 0, NULL, 0);
    assert_null(cp);
    const char* e = clerror();
    assert_non_null(e);
    assert_contains(e, "no-such-platform-xyz");
    assert_null(clerror());
}

static void test_clcontext_create_gpu_fails_without_gpu(void** state)
{
    (void)state;
    if (most_devices_of_type(CL_DEVICE_TYPE_GPU) > 0) skip();
    clerror();
    assert_null(clcontext_create(NULL, CL_DEVICE_TYPE_GPU, 0, NULL, 0));
    assert_non_null(clerror());
}

static void test_clcontext_create_nonzero_flags_fails(void** state)
{
    (void)state;
    clerror();
    assert_null(clcontext_create(NULL, CL_DEVICE_TYPE_CPU, 0, NULL, 1));
    assert_contains(clerror(), "flags");
    assert_null(clcontext_create(NULL, 0, 0, NULL, 0));
    assert_non_null(clerror());
}

static void test_clcontext_destroy_default_context_fails(void** state)
{
    (void)state;
    clerror();
    assert_int_equal(clcontext_destroy(stdcpu), STDCL_EINVAL);
    const char* e = clerror();
    assert_non_null(e);
    assert_contains(e, "default");
    assert_null(clerror());
    /* stdcpu still works. */
    assert_int_equal(clgetndev(stdcpu), 2);
    check_context_runs_kernels(stdcpu);
}

static void test_clcontext_destroy_null_fails(void** state)
{
    (void)state;
    clerror();
    assert_true(clcontext_destroy(NULL) < 0);
    assert_non_null(clerror());
}

static void test_clcontext_destroy_leaves_allocations_freeable(void** state)
{
    (void)state;
    /* Memory allocated in a context that is destroyed is detached, not lost:
     * the pointer stays valid host memory and clfree still works. */
    CLCONTEXT* cp = clcontext_create(NULL, CL_DEVICE_TYPE_CPU, 1, NULL, 0);
    assert_non_null(cp);
    int* a = (int*)clmalloc(cp, 64 * sizeof(int), 0);
    assert_non_null(a);
    for (int i = 0; i < 64; i++) a[i] = i;
    assert_non_null(clmsync(cp, 0, a, CL_MEM_DEVICE | CL_EVENT_WAIT));
    assert_int_equal(clcontext_destroy(cp), 0);
    for (int i = 0; i < 64; i++) assert_int_equal(a[i], i);
    assert_int_equal(clsizeofmem(a), 64 * sizeof(int));
    assert_int_equal(clfree(a), 0);
}

/* ------------------------------------------------------------------------ */
/* Environment (fresh processes)                                             */
/* ------------------------------------------------------------------------ */

/* The other MPI launchers' local-rank variables (MPICH, MVAPICH, Slurm), removed where Open MPI's are set. */
#define OTHER_LAUNCHERS "MPI_LOCALRANKID", "MPI_LOCALNRANKS", "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"

/* The STD* variables, one helper_env run each (tu_env_row says what a row
 * checks).  The STDCPU_LOCK=auto rows lease devices in the lock folder of the
 * run: each lease ends with its helper_env. */
static const tu_env_row k_env_rows[] = {
    {.name = "no STD* variables: the default contexts, quiet",
     .run = 1,
     .counts = "stdcpu=2 stdgpu=0 stddev=2",
     .env = {"STDCPU", "STDDEV", "STDGPU", "STDCPU_MAX_NDEV", "STDDEV_PLATFORM_NAME"},
     .warnings = TU_ANY,
     .quiet = 1, /* nothing is printed on stderr unless asked */
     .out_has = {"run stdcpu 1 ok", "run stddev 1 ok"}},
    {.name = "STDCPU=0 disables stdcpu",
     .env = {"STDCPU=0"},
     .counts = "stdcpu=0 stddev=2",
     .warnings = 0,
     .out_lacks = {"why stdcpu:"}},
    {.name = "STDCPU=1 keeps stdcpu", .env = {"STDCPU=1"}, .counts = "stdcpu=2", .warnings = 0},
    {.name = "STDDEV=0 disables stddev", .env = {"STDDEV=0"}, .counts = "stdcpu=2 stddev=0", .warnings = TU_ANY},
    {.name = "STDCPU_MAX_NDEV=1 caps stdcpu only",
     .env = {"STDCPU_MAX_NDEV=1"},
     .run = 1,
     .counts = "stdcpu=1 stddev=2",
     .warnings = 0,
     .why = "stdcpu",
     .why_has = {"STDCPU_MAX_NDEV"},
     .out_has = {"run stdcpu 0 ok"},
     .out_lacks = {"run stdcpu 1"}},
    {.name = "STDCPU_MAX_NDEV larger than available",
     .env = {"STDCPU_MAX_NDEV=8"},
     .counts = "stdcpu=2",
     .warnings = 0},
    {.name = "STDDEV_PLATFORM_NAME=pocl selects PoCL",
     .env = {"STDDEV_PLATFORM_NAME=pocl"},
     .run = 1,
     .counts = "stddev=2",
     .warnings = 0,
     .out_has = {"run stddev 1 ok"},
     .why = "stddev",
     .why_has = {"Portable Computing Language", "STDDEV_PLATFORM_NAME"}},
    /* The first name matches nothing, the second matches the vendor "The pocl
     * project" in another case: no warning, PoCL chosen. */
    {.name = "a platform name is a case-insensitive list",
     .env = {"STDCPU_PLATFORM_NAME=nosuchvendor,POCL"},
     .counts = "stdcpu=2",
     .warnings = 0,
     .why = "stdcpu",
     .why_has = {"STDCPU_PLATFORM_NAME"}},
    /* The trace goes to stderr and names the contexts and the platform. */
    {.name = "STDCL_TRACE=ctx prints the context choice",
     .env = {"STDCL_TRACE=ctx"},
     .counts = "stdcpu=2",
     .warnings = TU_ANY,
     .err_has = {"stdcpu", "stddev", "Portable Computing Language"},
     .out_lacks = {"stdcl["}},
    {.name = "a bad STDCPU_LOCK key warns and is ignored",
     .env = {"STDCPU_LOCK=a/b", "STDCPU_MAX_NDEV"},
     .counts = "stdcpu=2",
     .warnings = TU_ANY,
     .err_has = {"STDCPU_LOCK='a/b' is not a valid key"}},
    /* Local rank 1 of 2 takes device 1 though device 0 is free. */
    {.name = "STDCPU_LOCK=auto starts at the local rank",
     .lock_dir = 1,
     .run = 1,
     .env = {"STDCPU_LOCK=auto", "STDCPU_MAX_NDEV=1", "OMPI_COMM_WORLD_LOCAL_RANK=1", "OMPI_COMM_WORLD_LOCAL_SIZE=2",
             OTHER_LAUNCHERS},
     .counts = "stdcpu=1",
     .warnings = TU_ANY,
     .out_has = {"run stdcpu 0 ok"},
     .why = "stdcpu",
     .why_has = {"STDCPU_LOCK=auto (local rank 1 of 2, OMPI_COMM_WORLD_LOCAL_RANK) leased platform device(s) 1"}},
    /* Without STDCPU_MAX_NDEV the local ranks share the devices: one rank
     * gets both, two get one each. */
    {.name = "STDCPU_LOCK=auto, one local rank: both devices",
     .lock_dir = 1,
     .env = {"STDCPU_LOCK=auto", "STDCPU_MAX_NDEV", "OMPI_COMM_WORLD_LOCAL_RANK=0", "OMPI_COMM_WORLD_LOCAL_SIZE=1",
             OTHER_LAUNCHERS},
     .counts = "stdcpu=2",
     .warnings = TU_ANY,
     .why = "stdcpu",
     .why_has = {"leased platform device(s) 0,1"}},
    {.name = "STDCPU_LOCK=auto, two local ranks: rank 1 gets device 1",
     .lock_dir = 1,
     .env = {"STDCPU_LOCK=auto", "STDCPU_MAX_NDEV", "OMPI_COMM_WORLD_LOCAL_RANK=1", "OMPI_COMM_WORLD_LOCAL_SIZE=2",
             OTHER_LAUNCHERS},
     .counts = "stdcpu=1",
     .warnings = TU_ANY,
     .why = "stdcpu",
     .why_has = {"leased platform device(s) 1"}},
    {.name = "STDCPU_LOCK=auto without an MPI launcher starts at device 0",
     .lock_dir = 1,
     .env = {"STDCPU_LOCK=auto", "STDCPU_MAX_NDEV=1", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
             "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"},
     .counts = "stdcpu=1",
     .warnings = TU_ANY,
     .why = "stdcpu",
     .why_has = {"STDCPU_LOCK=auto (no MPI launcher in the environment: from device 0) leased platform device(s) 0"}},
};

static void test_env_variables_choose_the_default_contexts(void** state)
{
    (void)state;
    tu_env_check_rows(k_env_rows, tu_countof(k_env_rows));
}

/* ---- The load's OpenCL calls, counted ------------------------------------ */

/* The fault shim (tests/faults), which counts every OpenCL call libstdcl makes
 * and keeps a ledger of its objects, preloaded; NULL where it cannot be (a
 * sanitized build: the shim's malloc would stand in front of the sanitizer's). */
static const char* fault_shim(void)
{
    const char* flags = getenv("STDCL_TEST_CFLAGS");
    if (flags && strstr(flags, "-fsanitize")) return NULL;
    static char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/faults/faultcl_shim.so", tu_bindir());
    return tu_is_file(path) ? path : NULL;
}

/* Runs helper_env with args under the fault shim, with env and the shim's
 * settings; returns the shim's report, which the caller frees (NULL: no shim,
 * the check is skipped).  The run must exit 0. */
static char* run_under_shim(const char* const* args, const char* const* env)
{
    const char* shim = fault_shim();
    if (!shim) {
        print_message("the fault shim cannot be preloaded here: its checks are skipped\n");
        return NULL;
    }
    char* dir = tu_mkdtemp();
    assert_non_null(dir);
    char preload[PATH_MAX + 80], report[PATH_MAX + 80], path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/report", dir);
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", shim);
    snprintf(report, sizeof report, "FAULTCL_REPORT=%s", path);
    const char* all[24];
    size_t n = 0;
    for (; env && env[n] && n < 20; n++) all[n] = env[n];
    all[n++] = preload;
    all[n++] = report;
    all[n++] = "FAULTCL_TRACE=1";
    all[n] = NULL;
    tu_proc r;
    tu_spawn(&r, tu_helper("helper_env"), args, all, NULL, 240);
    if (r.status != 0) tu_proc_dump(&r, "helper_env under the fault shim");
    assert_int_equal(r.status, 0);
    tu_proc_free(&r);
    char* text = tu_read_file(path, NULL);
    assert_non_null(text);
    unlink(path);
    rmdir(dir);
    free(dir);
    /* Every OpenCL object libstdcl made was released, once. */
    if (tu_contains(text, "leak ") || tu_contains(text, "overrelease")) print_error("shim report:\n%s\n", text);
    assert_not_contains(text, "leak ");
    assert_not_contains(text, "overrelease");
    return text;
}

static const char* const k_all_off[] = {"STDDEV=0", "STDCPU=0", "STDGPU=0", "STDACC=0"};

/* Every default context off: the load lists no platform, so the ICD loader
 * loads no vendor's driver (it loads them all at the first clGetPlatformIDs),
 * and makes no OpenCL call at all; clcontext_create lists the platforms when
 * it is called. */
static void test_env_all_defaults_off_touch_no_platform(void** state)
{
    (void)state;
    const char* env[] = {k_all_off[0], k_all_off[1], k_all_off[2], k_all_off[3], "STDCL_TRACE=ctx", NULL};
    const char* args[] = {"loaded", "libpocl", "create", "loaded", "libpocl", NULL};
    tu_proc r;
    tu_spawn(&r, tu_helper("helper_env"), args, env, NULL, 120);
    if (r.status != 0) tu_proc_dump(&r, "helper_env");
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "stdcpu=0 stdgpu=0 stddev=0 stdacc=0");
    const char* before = strstr(r.out, "loaded libpocl: no");
    const char* created = strstr(r.out, "run created 1 ok");
    const char* after = strstr(r.out, "loaded libpocl: yes");
    if (!before || !created || !after || !(before < created && created < after)) tu_proc_dump(&r, "helper_env");
    assert_true(before && created && after && before < created && created < after);
    assert_contains(r.err, "stdacc: disabled by STDACC=0");
    assert_not_contains(r.err, "stdcl[ctx]: platform '");
    tu_proc_free(&r);

    /* Counted: no call with the contexts off; the platforms listed with them on. */
    const char* none[] = {k_all_off[0], k_all_off[1], k_all_off[2], k_all_off[3], NULL};
    char* text = run_under_shim(NULL, none);
    if (!text) return;
    if (!tu_contains(text, "calls 0 ")) print_error("shim report:\n%s\n", text);
    assert_contains(text, "calls 0 ");
    assert_not_contains(text, "clGetPlatformIDs");
    free(text);
    text = run_under_shim(NULL, NULL);
    assert_contains(text, "fn clGetPlatformIDs ");
    free(text);
}

/* At exit stddev is released first, then stdcpu, whose memory, program and
 * launch in flight still use the cl_context they share: the process exits
 * cleanly, and every OpenCL object libstdcl made is released once. */
static void test_shared_cl_context_released_at_exit(void** state)
{
    (void)state;
    const char* args[] = {"busy", NULL};
    tu_proc r;
    tu_spawn(&r, tu_helper("helper_env"), args, NULL, NULL, 120);
    if (r.status != 0) tu_proc_dump(&r, "helper_env busy");
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "busy stdcpu ok");
    assert_contains(r.out, "busy stddev ok");
    tu_proc_free(&r);
    free(run_under_shim(args, NULL));
}

/* text without its lines that hold needle (in place). */
static char* drop_lines(char* text, const char* needle)
{
    char* out = text;
    for (char* p = text; *p;) {
        char* end = strchr(p, '\n');
        size_t n = end ? (size_t)(end - p) + 1 : strlen(p);
        char next = p[n];
        p[n] = '\0';
        int keep = strstr(p, needle) == NULL;
        p[n] = next;
        if (keep) {
            memmove(out, p, n);
            out += n;
        }
        p += n;
    }
    *out = '\0';
    return text;
}

/* Two platforms (Oclgrind beside PoCL): the default contexts of each are built
 * in a thread of their own, and the contexts, their "why" lines and the trace
 * are those one thread gives (STDCL_LOAD_THREADS=0), every time. */
static void test_env_platforms_built_in_parallel_as_in_one_thread(void** state)
{
    (void)state;
    const char* lib = tu_oclgrind_icd_library();
    if (!lib) {
        print_message("Oclgrind is not installed (liboclgrind-rt-icd.so): skipped\n");
        skip();
    }
    char* dir = tu_mkdtemp();
    assert_non_null(dir);
    char vendors[PATH_MAX], icd[PATH_MAX + 32];
    snprintf(vendors, sizeof vendors, "%s/vendors", dir);
    assert_int_equal(tu_make_vendors(vendors, lib), 0);
    snprintf(icd, sizeof icd, "OCL_ICD_VENDORS=%s", vendors);
    const char* args[] = {"run", NULL};
    const char* one[] = {icd, "STDCL_TRACE=ctx", "STDCL_LOAD_THREADS=0", NULL};
    const char* par[] = {icd, "STDCL_TRACE=ctx", "STDCL_LOAD_THREADS=1", NULL};
    tu_proc r0;
    tu_spawn(&r0, tu_helper("helper_env"), args, one, NULL, 240);
    if (r0.status != 0) tu_proc_dump(&r0, "helper_env, one thread");
    assert_int_equal(r0.status, 0);
    /* Oclgrind's device is a GPU and an accelerator: stdgpu and stdacc on it. */
    assert_contains(r0.out, "stdcpu=2 stdgpu=1 stddev=2 stdacc=1");
    assert_contains(r0.out, "run stdgpu 0 ok");
    assert_contains(r0.out, "run stdacc 0 ok");
    assert_contains(r0.out, "shares the OpenCL context of stdgpu");
    assert_not_contains(r0.err, "in parallel");
    for (int i = 0; i < 3; i++) {
        tu_proc r;
        tu_spawn(&r, tu_helper("helper_env"), args, par, NULL, 240);
        if (r.status != 0) tu_proc_dump(&r, "helper_env, a thread per platform");
        assert_int_equal(r.status, 0);
        assert_contains(r.err, "the default contexts of 2 platforms are made in parallel, a thread each");
        assert_string_equal(r.out, r0.out);
        assert_string_equal(drop_lines(r.err, "in parallel"), r0.err);
        tu_proc_free(&r);
    }
    tu_proc_free(&r0);
    /* Unset: in parallel for a program linked with the library, one after
     * another when the library is loaded by dlopen (Python's ctypes), where a
     * driver set up in a new thread could wait for the loader's lock for ever. */
    const char* dflt[] = {icd, "STDCL_TRACE=ctx", NULL};
    tu_proc rd;
    tu_spawn(&rd, tu_helper("helper_env"), args, dflt, NULL, 240);
    assert_int_equal(rd.status, 0);
    assert_contains(rd.err, "the default contexts of 2 platforms are made in parallel, a thread each");
    tu_proc_free(&rd);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__) /* a sanitized library needs its runtime first */
    if (tu_is_file("/usr/bin/python3")) {
        char libpath[PATH_MAX + 32];
        snprintf(libpath, sizeof libpath, "%s/../lib/libstdcl.so.1", tu_bindir());
        const char* py[] = {"-c", "import ctypes, sys; ctypes.CDLL(sys.argv[1]); print('loaded')", libpath, NULL};
        tu_proc rp;
        tu_spawn(&rp, "/usr/bin/python3", py, dflt, NULL, 240);
        if (rp.status != 0) tu_proc_dump(&rp, "python3 ctypes");
        assert_int_equal(rp.status, 0);
        assert_contains(rp.out, "loaded");
        assert_contains(rp.err, "loaded by dlopen: the default contexts of 2 platforms are made one after another");
        tu_proc_free(&rp);
    }
#endif
    const char* shimmed[] = {icd, NULL};
    free(run_under_shim(args, shimmed));
    tu_remove_vendors(vendors);
    rmdir(dir);
    free(dir);
}

/* ---- STDX_LOCK: device leases held by another process --------------------- */

/* A helper_env that holds its contexts (and leases) until hold_stop(). */
typedef struct {
    pid_t pid;
    int in; /* write end of its stdin */
    FILE* out; /* its stdout */
    char first[1024], why[1024];
} holder;

/* Starts a holder under env; its counts line must begin with counts
 * ("stdcpu=1 "). */
static void hold_start(holder* h, const char* const* env, const char* counts)
{
    int pin[2], pout[2];
    assert_int_equal(pipe(pin), 0);
    assert_int_equal(pipe(pout), 0);
    char** envp = tu_envp(env);
    assert_non_null(envp);
    char* argv[] = {(char*)tu_helper("helper_env"), (char*)"hold", NULL};
    fflush(stdout);
    fflush(stderr);
    h->pid = fork();
    assert_true(h->pid >= 0);
    if (h->pid == 0) {
        dup2(pin[0], 0);
        dup2(pout[1], 1);
        close(pin[1]);
        close(pout[0]);
        execve(argv[0], argv, envp);
        _exit(127);
    }
    free(envp);
    close(pin[0]);
    close(pout[1]);
    h->in = pin[1];
    h->out = fdopen(pout[0], "r");
    assert_non_null(h->out);
    /* Its first line, its "why stdcpu" line, then "holding": the leases are taken. */
    h->first[0] = h->why[0] = '\0';
    char line[1024];
    while (fgets(line, sizeof line, h->out)) {
        if (!h->first[0]) snprintf(h->first, sizeof h->first, "%s", line);
        if (strncmp(line, "why stdcpu:", 11) == 0) snprintf(h->why, sizeof h->why, "%s", line);
        if (strncmp(line, "holding", 7) == 0) break;
    }
    if (strncmp(h->first, counts, strlen(counts)) != 0)
        print_error("holder: \"%s\", want \"%s...\"\n", h->first, counts);
    assert_true(strncmp(h->first, counts, strlen(counts)) == 0);
}

static void hold_stop(holder* h, int kill_it)
{
    int st = 0;
    if (kill_it) kill(h->pid, SIGKILL);
    close(h->in);
    waitpid(h->pid, &st, 0);
    fclose(h->out);
}

/* A lock key and lock folder of one test, as settings: "STDCPU_LOCK=...",
 * "TMPDIR=...". */
typedef struct {
    char key[64], tmpdir[4200];
} lock_env;

static void new_lock_env(lock_env* l)
{
    char* dir = tu_mkdtemp();
    assert_non_null(dir);
    snprintf(l->tmpdir, sizeof l->tmpdir, "TMPDIR=%s", dir);
    snprintf(l->key, sizeof l->key, "STDCPU_LOCK=t%ld", (long)getpid());
    free(dir);
}

/* A new lock key and folder in l, and a holder h with them and cap
 * (STDCPU_MAX_NDEV set or removed); its counts line begins with counts. */
static void hold_with_new_key(holder* h, lock_env* l, const char* cap, const char* counts)
{
    new_lock_env(l);
    const char* env[] = {l->key, l->tmpdir, cap, NULL};
    hold_start(h, env, counts);
}

/* One helper_env run beside the holders: fails the test unless it shows what row says. */
static void expect_row(const tu_env_row* row, const char* tmpdir) { assert_int_equal(tu_env_check(row, tmpdir), 0); }

/* A helper_env run with l's key and folder and cap (STDCPU_MAX_NDEV set or
 * removed): its stdcpu has one device, and its why line says leased. */
static void expect_one_leased(const lock_env* l, const char* cap, const char* leased)
{
    const tu_env_row row = {.name = cap,
                            .lock_dir = 1,
                            .env = {l->key, cap},
                            .counts = "stdcpu=1",
                            .warnings = TU_ANY,
                            .why = "stdcpu",
                            .why_has = {leased}};
    expect_row(&row, l->tmpdir);
}

static void test_env_stdcpu_lock_leases_devices_exclusively(void** state)
{
    (void)state;
    lock_env l;
    holder a;
    hold_with_new_key(&a, &l, "STDCPU_MAX_NDEV=1", "stdcpu=1 ");
    assert_contains(a.why, "leased platform device(s) 0");

    const tu_env_row second = {.name = "a second process with the same key gets the other device",
                               .lock_dir = 1,
                               .env = {l.key, "STDCPU_MAX_NDEV=1"},
                               .run = 1,
                               .counts = "stdcpu=1",
                               .warnings = TU_ANY,
                               .why = "stdcpu",
                               .why_has = {"leased platform device(s) 1"},
                               .out_has = {"run stdcpu 0 ok"}};
    expect_row(&second, l.tmpdir);
    /* Without a cap it gets every free device: only device 1. */
    expect_one_leased(&l, "STDCPU_MAX_NDEV", "leased platform device(s) 1");

    /* The kernel drops the lease when its holder dies, even by SIGKILL. */
    hold_stop(&a, 1);
    expect_one_leased(&l, "STDCPU_MAX_NDEV=1", "leased platform device(s) 0");
}

static void test_env_stdcpu_lock_all_leased_gives_null_with_warning(void** state)
{
    (void)state;
    lock_env l;
    holder a;
    hold_with_new_key(&a, &l, "STDCPU_MAX_NDEV", "stdcpu=2 ");
    /* Other contexts are not affected by STDCPU_LOCK. */
    const tu_env_row row = {.name = "every device leased",
                            .lock_dir = 1,
                            .env = {l.key, "STDCPU_MAX_NDEV"},
                            .counts = "stdcpu=0 stddev=2",
                            .warnings = 1,
                            .err_has = {"every stdcpu device is leased to another process"}};
    expect_row(&row, l.tmpdir);
    hold_stop(&a, 0);
}

/* The environment of local rank `rank` of `size` under Open MPI, with
 * STDCPU_LOCK=auto and STDCPU_MAX_NDEV=1 in the lock folder tmpdir; the other
 * launchers' variables removed. */
typedef struct {
    char rank[64], size[64];
    const char* env[12];
} rank_env;

static void auto_env(rank_env* e, const char* tmpdir, int rank, int size)
{
    snprintf(e->rank, sizeof e->rank, "OMPI_COMM_WORLD_LOCAL_RANK=%d", rank);
    snprintf(e->size, sizeof e->size, "OMPI_COMM_WORLD_LOCAL_SIZE=%d", size);
    const char* env[] = {"STDCPU_LOCK=auto", tmpdir, "STDCPU_MAX_NDEV=1", e->rank, e->size, OTHER_LAUNCHERS, NULL};
    memset(e->env, 0, sizeof e->env);
    memcpy(e->env, env, sizeof env);
}

/* Four ranks on a host whose stdcpu has two devices, one device each: ranks 0
 * and 1 lease devices 0 and 1; ranks 2 and 3 get a NULL stdcpu, one warning
 * and the reason in clerror(); killing rank 0 frees device 0 for rank 2. */
static void test_env_stdcpu_lock_auto_four_ranks_two_devices(void** state)
{
    (void)state;
    lock_env l;
    new_lock_env(&l);
    rank_env e[4];
    for (int i = 0; i < 4; i++) auto_env(&e[i], l.tmpdir, i, 4);
    holder a, b;
    hold_start(&a, e[0].env, "stdcpu=1 ");
    hold_start(&b, e[1].env, "stdcpu=1 ");
    assert_contains(a.why, "leased platform device(s) 0");
    assert_contains(b.why, "leased platform device(s) 1");

    for (int i = 2; i < 4; i++) {
        char name[32], want[256];
        snprintf(name, sizeof name, "rank %d of 4", i);
        snprintf(want, sizeof want,
                 "STDCPU_LOCK=auto (local rank %d of 4, OMPI_COMM_WORLD_LOCAL_RANK): every stdcpu "
                 "device is leased to another process (2 tried); stdcpu is NULL",
                 i);
        tu_env_row late = {.name = name,
                           .run = 1,
                           .counts = "stdcpu=0 stddev=2", /* stddev is not leased */
                           .warnings = 1,
                           .err_has = {want},
                           .out_has = {"load error: STDCPU_LOCK=auto (local rank",
                                       "null stdcpu: the context is NULL; at load time: stdcpu: STDCPU_LOCK=auto"}};
        memcpy(late.env, e[i].env, sizeof late.env);
        expect_row(&late, NULL);
    }

    /* SIGKILL ends rank 0's lease: the next rank gets device 0. */
    hold_stop(&a, 1);
    tu_env_row next = {.name = "rank 2 of 4, rank 0 killed",
                       .run = 1,
                       .counts = "stdcpu=1",
                       .warnings = TU_ANY,
                       .why = "stdcpu",
                       .why_has = {"leased platform device(s) 0"},
                       .out_has = {"run stdcpu 0 ok"},
                       .out_lacks = {"load error"}};
    memcpy(next.env, e[2].env, sizeof next.env);
    expect_row(&next, NULL);
    hold_stop(&b, 0);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_stdcpu_has_two_devices),
    cmocka_unit_test(test_stddev_has_two_devices),
    cmocka_unit_test(test_stdgpu_is_null_without_gpu),
    cmocka_unit_test(test_clgetndev_null_is_zero),
    cmocka_unit_test(test_stdcl_init_does_nothing),
    cmocka_unit_test(test_stdcl_version_matches_header),
    cmocka_unit_test(test_stdcl_device_is_real_device),
    cmocka_unit_test(test_stdcl_device_out_of_range_is_null),
    cmocka_unit_test(test_stdcl_platform_is_pocl),
    cmocka_unit_test(test_stdcl_clcontext_is_real_context),
    cmocka_unit_test(test_stdcl_queue_is_real_queue),
    cmocka_unit_test(test_stdcl_context_why_describes_choice),
    cmocka_unit_test(test_stddev_and_stdcpu_share_one_cl_context),
    cmocka_unit_test(test_shared_cl_context_keeps_memory_per_context),
    cmocka_unit_test(test_own_kernel_in_shared_cl_context_runs_in_both),
    cmocka_unit_test(test_own_kernel_made_after_clclose_runs),
    cmocka_unit_test(test_own_kernels_released_by_the_program),
    cmocka_unit_test(test_own_kernel_held_while_recorded_and_let_go_with_the_context),
    cmocka_unit_test(test_kernel_handles_against_a_model),
    cmocka_unit_test(test_clcontext_create_cpu_context_works),
    cmocka_unit_test(test_clcontext_create_max_ndev_caps),
    cmocka_unit_test(test_clcontext_create_unknown_platform_fails),
    cmocka_unit_test(test_clcontext_create_gpu_fails_without_gpu),
    cmocka_unit_test(test_clcontext_create_nonzero_flags_fails),
    cmocka_unit_test(test_clcontext_destroy_default_context_fails),
    cmocka_unit_test(test_clcontext_destroy_null_fails),
    cmocka_unit_test(test_clcontext_destroy_leaves_allocations_freeable),
    cmocka_unit_test(test_env_variables_choose_the_default_contexts),
    cmocka_unit_test(test_env_all_defaults_off_touch_no_platform),
    cmocka_unit_test(test_shared_cl_context_released_at_exit),
    cmocka_unit_test(test_env_platforms_built_in_parallel_as_in_one_thread),
    cmocka_unit_test(test_env_stdcpu_lock_leases_devices_exclusively),
    cmocka_unit_test(test_env_stdcpu_lock_all_leased_gives_null_with_warning),
    cmocka_unit_test(test_env_stdcpu_lock_auto_four_ranks_two_devices),
};

int main(int argc, char** argv) { return tu_run_tests(argc, argv, "context", tests, NULL, NULL); }
