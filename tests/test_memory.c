/* SPDX-License-Identifier: MIT */
/* test_memory.c: clmalloc, clfree, clsizeofmem, clmrealloc, clmsync on both
 * devices, CL_MEM_DETACHED with clmattach/clmdetach, clmcopy, interior
 * pointers as kernel arguments, image2d allocations, stdcl_mem.
 *
 * On PoCL each device's copy is a zero-copy view of the host memory, so the
 * tests check the observable contract: written on the host, synced to device
 * d, changed by a kernel on d, synced back: the host sees the kernel's
 * values, on each device. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include <stdcl.h>

#include "test_util.h"

static cl_kernel g_add; /* add_int(__global int* a, int v) */
static cl_kernel g_fill; /* fill_index(__global int* a, int base) */
static cl_kernel g_double; /* double_ro(__global const int* in, __global int* out) */

static int setup(void** state)
{
    const tu_sym syms[] = {{"add_int", &g_add}, {"fill_index", &g_fill}, {"double_ro", &g_double}};
    if (tu_need_two_cpu_devices() != 0) return -1;
    return tu_open_kernel_syms("memory.cl", state, syms, tu_countof(syms));
}

/* Host -> device d, add_int(v) on d, device d -> host; flags WAIT or NOWAIT. */
static void add_on_device(int* a, size_t n, unsigned d, int v, int nowait)
{
    clndrange_t ndr = clndrange_init1d(0, n, 0);
    tu_round_trip(d, g_add, &ndr, nowait ? CL_EVENT_NOWAIT : CL_EVENT_WAIT, a, v);
}

static cl_uint base_align_bytes(unsigned d)
{
    cl_uint bits = 0;
    assert_int_equal(clGetDeviceInfo(stdcl_device(stdcpu, d), CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, NULL),
                     CL_SUCCESS);
    assert_true(bits >= 8);
    return bits / 8;
}

/* ------------------------------------------------------------------------ */

static void test_clmalloc_aligns_small_blocks_to_mem_align_and_large_to_pages(void** state)
{
    (void)state;
    size_t al = stdcl_mem_align(stdcpu);
    assert_true(al >= 128);
    size_t sizes[] = {1, 1000, 3000, 4095, 4096, 1 << 20};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        unsigned char* keep = (unsigned char*)clmalloc(stdcpu, sizes[s], 0); /* not the first of its slab */
        unsigned char* p = (unsigned char*)clmalloc(stdcpu, sizes[s], 0);
        assert_non_null(keep);
        assert_non_null(p);
        assert_int_equal((uintptr_t)p % (sizes[s] >= 4096 ? 4096 : al), 0);
        assert_int_equal(clfree(keep), 0);
        memset(p, 0xA5, sizes[s]);
        assert_int_equal(p[sizes[s] - 1], 0xA5);
        assert_int_equal(clsizeofmem(p), sizes[s]);
        assert_int_equal(clfree(p), 0);
        assert_int_equal(clsizeofmem(p), 0);
    }
}

static void test_clsizeofmem_not_an_allocation_start_is_zero(void** state)
{
    (void)state;
    char* p = (char*)clmalloc(stdcpu, 256, 0);
    assert_non_null(p);
    int local = 0;
    assert_int_equal(clsizeofmem(p), 256);
    assert_int_equal(clsizeofmem(p + 8), 0);
    assert_int_equal(clsizeofmem(&local), 0);
    assert_int_equal(clsizeofmem(NULL), 0);
    clerror();
    assert_int_equal(clfree(p), 0);
}

static void test_stdcl_mem_base_finds_every_page_of_a_large_allocation(void** state)
{
    (void)state;
    /* 40 MiB + 100 bytes: the registry's pages span several of its leaves. */
    size_t size = ((size_t)40 << 20) + 100;
    char* p = clmalloc(stdcpu, size, 0);
    assert_non_null(p);
    size_t offs[] = {0, 1, 4095, 4096, ((size_t)16 << 20) - 1, (size_t)16 << 20, ((size_t)32 << 20) + 8, size - 1};
    for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++) {
        size_t off = 12345;
        assert_ptr_equal(stdcl_mem_base(p + offs[i], &off), p);
        assert_int_equal(off, offs[i]);
    }
    assert_int_equal(clsizeofmem(p), size);
    /* One past the end (inside the last page) and interior pointers are no allocation start. */
    assert_null(stdcl_mem_base(p + size, NULL));
    assert_contains(clerror(), "is not inside memory returned by clmalloc");
    assert_int_equal(clsizeofmem(p + 4096), 0);
    assert_contains(clerror(), "is not the start of a clmalloc allocation");
    assert_int_equal(clfree(p), 0);
    assert_null(stdcl_mem_base(p + 4096, NULL));
    assert_contains(clerror(), "is not inside memory returned by clmalloc");
}

static void test_stdcl_mem_base_keeps_many_small_allocations_apart(void** state)
{
    (void)state;
    enum { K = 1000 };
    static char* a[K];
    for (int i = 0; i < K; i++) {
        a[i] = clmalloc(stdcpu, 100 + (size_t)i * 37, 0);
        assert_non_null(a[i]);
    }
    for (int i = 0; i < K; i++) {
        size_t off = 0, n = 100 + (size_t)i * 37;
        assert_ptr_equal(stdcl_mem_base(a[i] + n - 1, &off), a[i]);
        assert_int_equal(off, n - 1);
        assert_int_equal(clsizeofmem(a[i]), n);
        /* the rest of its block is no one's (when n is a multiple of the alignment
         * the next byte may be another allocation's first) */
        if (n % stdcl_mem_align(stdcpu)) assert_null(stdcl_mem_base(a[i] + n, NULL));
    }
    for (int i = 0; i < K; i += 2) assert_int_equal(clfree(a[i]), 0);
    for (int i = 0; i < K; i++) {
        if (i % 2 == 0)
            assert_null(stdcl_mem_base(a[i], NULL));
        else
            assert_ptr_equal(stdcl_mem_base(a[i] + 50, NULL), a[i]);
    }
    for (int i = 1; i < K; i += 2) assert_int_equal(clfree(a[i]), 0);
}

static void test_clmalloc_ro_and_wo_set_buffer_access(void** state)
{
    (void)state;
    enum { N = 256 };
    int* in = (int*)clmalloc(stdcpu, N * sizeof(int), CL_MEM_RO);
    int* out = (int*)clmalloc(stdcpu, N * sizeof(int), CL_MEM_WO);
    assert_non_null(in);
    assert_non_null(out);
    assert_true(clmctl(in, CL_MCTL_GET_STATUS) & CL_MEM_RO);
    assert_true(clmctl(out, CL_MCTL_GET_STATUS) & CL_MEM_WO);
    for (unsigned d = 0; d < 2; d++) {
        cl_mem_flags f = 0;
        assert_int_equal(clGetMemObjectInfo(stdcl_mem(stdcpu, d, in), CL_MEM_FLAGS, sizeof f, &f, NULL), CL_SUCCESS);
        assert_true(f & CL_MEM_READ_ONLY);
        assert_int_equal(clGetMemObjectInfo(stdcl_mem(stdcpu, d, out), CL_MEM_FLAGS, sizeof f, &f, NULL), CL_SUCCESS);
        assert_true(f & CL_MEM_WRITE_ONLY);
        for (int i = 0; i < N; i++) in[i] = i + (int)d * 1000, out[i] = -1;
        clndrange_t ndr = clndrange_init1d(0, N, 64);
        assert_non_null(clmsync(stdcpu, d, in, CL_MEM_DEVICE | CL_EVENT_WAIT));
        assert_non_null(clforka(stdcpu, d, g_double, &ndr, CL_EVENT_WAIT, in, out));
        assert_non_null(clmsync(stdcpu, d, out, CL_MEM_HOST | CL_EVENT_WAIT));
        for (int i = 0; i < N; i++) assert_int_equal(out[i], 2 * (i + (int)d * 1000));
    }
    assert_int_equal(clfree(in), 0);
    assert_int_equal(clfree(out), 0);
}

static void test_clmrealloc_grows_keeping_contents(void** state)
{
    (void)state;
    enum { N = 4096 };
    int* p = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
    assert_non_null(p);
    for (int i = 0; i < N; i++) p[i] = 3 * i + 1;
    add_on_device(p, N, 0, 0, 0); /* the allocation has device copies */
    int* q = (int*)clmrealloc(stdcpu, p, 2 * N * sizeof(int), 0);
    if (!q) print_error("clmrealloc: %s\n", clerror());
    assert_non_null(q);
    assert_int_equal(clsizeofmem(q), 2 * N * sizeof(int));
    if (q != p) assert_int_equal(clsizeofmem(p), 0); /* the old one is freed */
    for (int i = 0; i < N; i++) assert_int_equal(q[i], 3 * i + 1);
    /* The new allocation works on both devices, over its whole size. */
    for (int i = N; i < 2 * N; i++) q[i] = i;
    add_on_device(q, 2 * N, 1, 5, 0);
    for (int i = 0; i < N; i++) assert_int_equal(q[i], 3 * i + 6);
    for (int i = N; i < 2 * N; i++) assert_int_equal(q[i], i + 5);
    assert_int_equal(clfree(q), 0);
}

static void test_clmrealloc_shrinks_keeping_prefix(void** state)
{
    (void)state;
    enum { N = 1024 };
    int* p = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
    assert_non_null(p);
    for (int i = 0; i < N; i++) p[i] = -i;
    int* q = (int*)clmrealloc(stdcpu, p, 100 * sizeof(int), 0);
    assert_non_null(q);
    assert_int_equal(clsizeofmem(q), 100 * sizeof(int));
    for (int i = 0; i < 100; i++) assert_int_equal(q[i], -i);
    add_on_device(q, 100, 0, 1, 0);
    for (int i = 0; i < 100; i++) assert_int_equal(q[i], 1 - i);
    assert_int_equal(clfree(q), 0);
}

static void test_clmrealloc_null_allocates(void** state)
{
    (void)state;
    int* q = (int*)clmrealloc(stdcpu, NULL, 64 * sizeof(int), 0);
    assert_non_null(q);
    assert_int_equal(clsizeofmem(q), 64 * sizeof(int));
    assert_int_equal(clfree(q), 0);
}

static void test_clmrealloc_failure_keeps_old_allocation(void** state)
{
    (void)state;
    int* p = (int*)clmalloc(stdcpu, 64 * sizeof(int), 0);
    assert_non_null(p);
    for (int i = 0; i < 64; i++) p[i] = 5 * i;
    clerror();
    assert_null(clmrealloc(stdcpu, p, 0, 0)); /* size 0: refused */
    assert_non_null(clerror());
    int local[4] = {0};
    assert_null(clmrealloc(stdcpu, local, 128, 0)); /* not a clmalloc pointer */
    assert_non_null(clerror());
    /* The old allocation is unchanged and usable. */
    assert_int_equal(clsizeofmem(p), 64 * sizeof(int));
    for (int i = 0; i < 64; i++) assert_int_equal(p[i], 5 * i);
    add_on_device(p, 64, 0, 1, 0);
    for (int i = 0; i < 64; i++) assert_int_equal(p[i], 5 * i + 1);
    assert_int_equal(clfree(p), 0);
}

static void test_clmctl_reserved_operations(void** state)
{
    (void)state;
    void* p = clmalloc(stdcpu, 256, 0);
    assert_non_null(p);
    assert_int_equal(clmctl(p, CL_MCTL_MARK_CLEAN), 0);
    clerror();
    assert_int_equal(clmctl(p, CL_MCTL_GET_DEVNUM), STDCL_EINVAL);
    assert_non_null(clerror());
    assert_int_equal(clmctl(p, CL_MCTL_SET_DEVNUM, 1), STDCL_EINVAL);
    assert_non_null(clerror());
    assert_true(clmctl(p, 9999) < 0);
    assert_non_null(clerror());
    /* CL_MCTL_SET_IMAGE2D: an image larger than the allocation is refused. */
    assert_int_equal(clmctl(p, CL_MCTL_SET_IMAGE2D, (size_t)16, (size_t)16, (const cl_image_format*)NULL),
                     STDCL_EINVAL);
    assert_contains(clerror(), "does not fit in 256 bytes");
    /* Attached: user flags cannot change. */
    assert_true(clmctl(p, CL_MCTL_SET_USRFLAGS, CL_MEM_RO) < 0);
    assert_non_null(clerror());
    assert_int_equal(clfree(p), 0);
}

static void roundtrip_on_device(unsigned d, int nowait)
{
    enum { N = 100000 };
    int* a = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
    assert_non_null(a);
    for (int i = 0; i < N; i++) a[i] = i ^ 0x5a5a;
    add_on_device(a, N, d, 17 + (int)d, nowait);
    if (nowait) assert_int_equal(stdcl_wait(stdcpu, d, CL_KERNEL_EVENT | CL_MEM_EVENT), 0);
    for (int i = 0; i < N; i++)
        if (a[i] != (i ^ 0x5a5a) + 17 + (int)d) {
            print_error("device %u: a[%d] = %d, want %d\n", d, i, a[i], (i ^ 0x5a5a) + 17 + (int)d);
            fail();
        }
    assert_int_equal(clfree(a), 0);
}

static void test_clmsync_roundtrip_device0(void** state)
{
    (void)state;
    roundtrip_on_device(0, 0);
}

static void test_clmsync_roundtrip_device1(void** state)
{
    (void)state;
    roundtrip_on_device(1, 0);
}

static void test_clmsync_nowait_roundtrip_with_clwait(void** state)
{
    (void)state;
    roundtrip_on_device(0, 1);
    roundtrip_on_device(1, 1);
}

static void test_clmsync_two_devices_at_once(void** state)
{
    (void)state;
    enum { N = 65536 };
    int* a = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
    int* b = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
    assert_non_null(a);
    assert_non_null(b);
    for (int i = 0; i < N; i++) a[i] = i, b[i] = 2 * i;
    add_on_device(a, N, 0, 100, 1);
    add_on_device(b, N, 1, 200, 1);
    assert_int_equal(stdcl_wait(stdcpu, 0, CL_ALL_EVENT), 0);
    assert_int_equal(stdcl_wait(stdcpu, 1, CL_ALL_EVENT), 0);
    for (int i = 0; i < N; i++) {
        assert_int_equal(a[i], i + 100);
        assert_int_equal(b[i], 2 * i + 200);
    }
    assert_int_equal(clfree(a), 0);
    assert_int_equal(clfree(b), 0);
}

static void test_clmsync_returns_event_caller_can_own(void** state)
{
    (void)state;
    int* a = (int*)clmalloc(stdcpu, 1024, 0);
    assert_non_null(a);
    cl_event ev = clmsync(stdcpu, 1, a, CL_MEM_DEVICE | CL_EVENT_WAIT | CL_EVENT_NORELEASE);
    assert_non_null(ev);
    cl_int st = -1;
    assert_int_equal(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL), CL_SUCCESS);
    assert_int_equal(st, CL_COMPLETE);
    cl_command_queue q = NULL;
    assert_int_equal(clGetEventInfo(ev, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL), CL_SUCCESS);
    /* A queue of device 1: its kernel queue, or in copy mode its transfer queue. */
    cl_device_id qd = NULL;
    assert_int_equal(clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof qd, &qd, NULL), CL_SUCCESS);
    assert_ptr_equal(qd, stdcl_device(stdcpu, 1));
    assert_int_equal(clReleaseEvent(ev), CL_SUCCESS);
    assert_int_equal(clfree(a), 0);
}

static void test_clmalloc_detached_attach_detach(void** state)
{
    (void)state;
    enum { N = 512 };
    int* p = (int*)clmalloc(0, N * sizeof(int), CL_MEM_DETACHED);
    if (!p) print_error("clmalloc(CL_MEM_DETACHED): %s\n", clerror());
    assert_non_null(p);
    assert_int_equal(clsizeofmem(p), N * sizeof(int));
    for (int i = 0; i < N; i++) p[i] = i;
    /* Detached: not usable with a context yet. */
    clerror();
    assert_null(clmsync(stdcpu, 0, p, CL_MEM_DEVICE | CL_EVENT_WAIT));
    assert_contains(clerror(), "detached");
    assert_true(clmdetach(p) < 0);
    assert_non_null(clerror());
    /* User flags may change while detached. */
    assert_int_equal(clmctl(p, CL_MCTL_SET_USRFLAGS, CL_MEM_RO), 0);
    assert_true(clmctl(p, CL_MCTL_GET_STATUS) & CL_MEM_RO);
    assert_int_equal(clmctl(p, CL_MCTL_CLR_USRFLAGS, CL_MEM_RO), 0);
    assert_false(clmctl(p, CL_MCTL_GET_STATUS) & CL_MEM_RO);
    /* Detaching is clmdetach's business, not a user flag. */
    assert_int_equal(clmctl(p, CL_MCTL_SET_USRFLAGS, CL_MEM_DETACHED), STDCL_EINVAL);
    assert_contains(clerror(), "CL_MEM_DETACHED is clmdetach's");
    assert_false(clmctl(p, CL_MCTL_GET_STATUS) & CL_MEM_DETACHED);

    assert_int_equal(clmattach(stdcpu, p), 0);
    add_on_device(p, N, 1, 3, 0);
    for (int i = 0; i < N; i++) assert_int_equal(p[i], i + 3);
    /* Attached: a second attach and a user-flag change are refused. */
    assert_true(clmattach(stdcpu, p) < 0);
    assert_non_null(clerror());
    assert_true(clmctl(p, CL_MCTL_SET_USRFLAGS, CL_MEM_RO) < 0);
    assert_non_null(clerror());

    assert_int_equal(clmdetach(p), 0);
    for (int i = 0; i < N; i++) assert_int_equal(p[i], i + 3); /* host contents stay */
    assert_null(clmsync(stdcpu, 0, p, CL_MEM_DEVICE | CL_EVENT_WAIT));
    assert_non_null(clerror());
    /* Re-attached to another context. */
    assert_int_equal(clmattach(stddev, p), 0);
    assert_non_null(clmsync(stddev, 0, p, CL_MEM_DEVICE | CL_EVENT_WAIT));
    assert_int_equal(clmdetach(p), 0);
    assert_int_equal(clfree(p), 0);
}

static void test_clmalloc_detached_ignores_context(void** state)
{
    (void)state;
    /* STDCL 1.6: the context argument of detached memory is ignored. */
    void* p = clmalloc(stdcpu, 64, CL_MEM_DETACHED);
    if (!p) print_error("clmalloc(stdcpu, CL_MEM_DETACHED): %s\n", clerror());
    assert_non_null(p);
    clerror();
    assert_null(clmsync(stdcpu, 0, p, CL_MEM_DEVICE | CL_EVENT_WAIT)); /* not attached */
    assert_non_null(clerror());
    assert_int_equal(clmattach(stdcpu, p), 0);
    assert_non_null(clmsync(stdcpu, 0, p, CL_MEM_DEVICE | CL_EVENT_WAIT));
    assert_int_equal(clfree(p), 0);
}

static void test_clmcopy_copies_device_copies(void** state)
{
    (void)state;
    enum { N = 4096 };
    for (unsigned d = 0; d < 2; d++) {
        int* src = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
        int* dst = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
        assert_non_null(src);
        assert_non_null(dst);
        for (int i = 0; i < N; i++) src[i] = i * 7 + (int)d, dst[i] = -1;
        assert_non_null(clmsync(stdcpu, d, src, CL_MEM_DEVICE | CL_EVENT_WAIT));
        assert_non_null(clmsync(stdcpu, d, dst, CL_MEM_DEVICE | CL_EVENT_WAIT));
        cl_event ev = clmcopy(stdcpu, d, src, dst, d ? CL_EVENT_NOWAIT : CL_EVENT_WAIT);
        if (!ev) print_error("clmcopy: %s\n", clerror());
        assert_non_null(ev);
        if (d) assert_int_equal(stdcl_wait(stdcpu, d, CL_MEM_EVENT), 0);
        assert_non_null(clmsync(stdcpu, d, dst, CL_MEM_HOST | CL_EVENT_WAIT));
        for (int i = 0; i < N; i++) assert_int_equal(dst[i], i * 7 + (int)d);
        assert_int_equal(clfree(src), 0);
        assert_int_equal(clfree(dst), 0);
    }
}

static void test_clmcopy_copies_the_smaller_size(void** state)
{
    (void)state;
    int* big = (int*)clmalloc(stdcpu, 1000 * sizeof(int), 0);
    int* small = (int*)clmalloc(stdcpu, 100 * sizeof(int), 0);
    assert_non_null(big);
    assert_non_null(small);
    for (int i = 0; i < 1000; i++) big[i] = i;
    for (int i = 0; i < 100; i++) small[i] = -1 - i;
    /* big -> small: 100 elements. */
    assert_non_null(clmsync(stdcpu, 0, big, CL_MEM_DEVICE | CL_EVENT_WAIT));
    assert_non_null(clmsync(stdcpu, 0, small, CL_MEM_DEVICE | CL_EVENT_WAIT));
    assert_non_null(clmcopy(stdcpu, 0, big, small, CL_EVENT_WAIT));
    assert_non_null(clmsync(stdcpu, 0, small, CL_MEM_HOST | CL_EVENT_WAIT));
    for (int i = 0; i < 100; i++) assert_int_equal(small[i], i);
    /* small -> big: only the first 100 change. */
    for (int i = 0; i < 100; i++) small[i] = 5000 + i;
    assert_non_null(clmsync(stdcpu, 0, small, CL_MEM_DEVICE | CL_EVENT_WAIT));
    assert_non_null(clmcopy(stdcpu, 0, small, big, CL_EVENT_WAIT));
    assert_non_null(clmsync(stdcpu, 0, big, CL_MEM_HOST | CL_EVENT_WAIT));
    for (int i = 0; i < 1000; i++) assert_int_equal(big[i], i < 100 ? 5000 + i : i);
    assert_int_equal(clfree(big), 0);
    assert_int_equal(clfree(small), 0);
}

static void test_clarg_set_global_interior_pointer_views_from_pointer(void** state)
{
    (void)state;
    enum { N = 4096, M = 256 };
    for (unsigned d = 0; d < 2; d++) {
        size_t off = 2 * base_align_bytes(d) / sizeof(int); /* aligned interior offset, in ints */
        int* p = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
        assert_non_null(p);
        for (int i = 0; i < N; i++) p[i] = -7;
        assert_non_null(clmsync(stdcpu, d, p, CL_MEM_DEVICE | CL_EVENT_WAIT));
        int rc = clarg_set_global(stdcpu, g_fill, 0, p + off);
        if (rc) print_error("clarg_set_global: %s\n", clerror());
        assert_int_equal(rc, 0);
        assert_int_equal(clarg_set(stdcpu, g_fill, 1, 1000), 0);
        clndrange_t ndr = clndrange_init1d(0, M, 64);
        cl_event ev = clfork(stdcpu, d, g_fill, &ndr, CL_EVENT_WAIT);
        if (!ev) print_error("clfork: %s\n", clerror());
        assert_non_null(ev);
        assert_non_null(clmsync(stdcpu, d, p, CL_MEM_HOST | CL_EVENT_WAIT));
        for (size_t i = 0; i < N; i++) {
            int want = (i >= off && i < off + M) ? 1000 + (int)(i - off) : -7;
            if (p[i] != want) {
                print_error("device %u, offset %zu ints: p[%zu] = %d, want %d\n", d, off, i, p[i], want);
                fail();
            }
        }
        /* stdcl_mem of the interior pointer is a sub-buffer of the allocation's buffer. */
        cl_mem sub = stdcl_mem(stdcpu, d, p + off);
        assert_non_null(sub);
        cl_mem parent = NULL;
        size_t sub_off = 0, sub_size = 0;
        assert_int_equal(clGetMemObjectInfo(sub, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, NULL),
                         CL_SUCCESS);
        assert_int_equal(clGetMemObjectInfo(sub, CL_MEM_OFFSET, sizeof sub_off, &sub_off, NULL), CL_SUCCESS);
        assert_int_equal(clGetMemObjectInfo(sub, CL_MEM_SIZE, sizeof sub_size, &sub_size, NULL), CL_SUCCESS);
        assert_ptr_equal(parent, stdcl_mem(stdcpu, d, p));
        assert_int_equal(sub_off, off * sizeof(int));
        assert_int_equal(sub_size, (N - off) * sizeof(int));
        assert_int_equal(clfree(p), 0);
    }
}

static void test_clarg_set_global_interior_pointer_reuses_one_sub_buffer_until_clfree(void** state)
{
    (void)state;
    enum { N = 4096, M = 64 };
    for (unsigned d = 0; d < 2; d++) {
        size_t off = 2 * base_align_bytes(d) / sizeof(int);
        int* p = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
        assert_non_null(p);
        for (int i = 0; i < N; i++) p[i] = -1;
        assert_non_null(clmsync(stdcpu, d, p, CL_MEM_DEVICE | CL_EVENT_WAIT));
        cl_mem sub = stdcl_mem(stdcpu, d, p + off);
        assert_non_null(sub);
        clndrange_t ndr = clndrange_init1d(0, M, 64);
        for (int rep = 0; rep < 3; rep++) { /* the same view each time, and each launch sees it */
            assert_int_equal(clarg_set_global(stdcpu, g_fill, 0, p + off), 0);
            assert_int_equal(clarg_set(stdcpu, g_fill, 1, 100 * rep), 0);
            assert_non_null(clfork(stdcpu, d, g_fill, &ndr, CL_EVENT_WAIT));
            assert_ptr_equal(stdcl_mem(stdcpu, d, p + off), sub);
            assert_non_null(clmsync(stdcpu, d, p, CL_MEM_HOST | CL_EVENT_WAIT));
            assert_int_equal(p[off], 100 * rep);
            assert_int_equal(p[off + M - 1], 100 * rep + M - 1);
        }
        /* A different interior pointer of the same allocation binds its own view. */
        assert_int_equal(clarg_set_global(stdcpu, g_fill, 0, p + 2 * off), 0);
        assert_int_equal(clarg_set(stdcpu, g_fill, 1, 7), 0);
        assert_non_null(clfork(stdcpu, d, g_fill, &ndr, CL_EVENT_WAIT));
        assert_non_null(clmsync(stdcpu, d, p, CL_MEM_HOST | CL_EVENT_WAIT));
        assert_int_equal(p[2 * off], 7);
        assert_int_equal(p[off], 200); /* the last launch at p + off */
        /* clfree releases the buffer and its views: only our own reference remains. */
        cl_mem parent = stdcl_mem(stdcpu, d, p);
        assert_non_null(parent);
        assert_int_equal(clRetainMemObject(parent), CL_SUCCESS);
        assert_int_equal(clfree(p), 0);
        cl_uint refs = 0;
        assert_int_equal(clGetMemObjectInfo(parent, CL_MEM_REFERENCE_COUNT, sizeof refs, &refs, NULL), CL_SUCCESS);
        assert_int_equal(refs, 1);
        assert_int_equal(clReleaseMemObject(parent), CL_SUCCESS);
        /* The kernel's argument no longer binds: the launch says the memory was freed. */
        clerror();
        assert_null(clfork(stdcpu, d, g_fill, &ndr, CL_EVENT_WAIT));
        assert_contains(clerror(), "was freed");
    }
}

static void test_clarg_set_global_after_clfree_binds_the_new_allocation(void** state)
{
    (void)state;
    enum { N = 1024, M = 64 };
    int* p = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
    assert_non_null(p);
    assert_int_equal(clarg_set_global(stdcpu, g_fill, 0, p), 0);
    assert_int_equal(clfree(p), 0);
    /* Whether or not malloc hands out the same address again, the new memory binds. */
    int* q = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
    assert_non_null(q);
    for (int i = 0; i < N; i++) q[i] = -1;
    assert_non_null(clmsync(stdcpu, 0, q, CL_MEM_DEVICE | CL_EVENT_WAIT));
    assert_int_equal(clarg_set_global(stdcpu, g_fill, 0, q), 0);
    assert_int_equal(clarg_set(stdcpu, g_fill, 1, 5), 0);
    clndrange_t ndr = clndrange_init1d(0, M, 64);
    assert_non_null(clfork(stdcpu, 0, g_fill, &ndr, CL_EVENT_WAIT));
    assert_non_null(clmsync(stdcpu, 0, q, CL_MEM_HOST | CL_EVENT_WAIT));
    for (int i = 0; i < M; i++) assert_int_equal(q[i], 5 + i);
    assert_int_equal(q[M], -1);
    assert_int_equal(clfree(q), 0);
}

static void test_clarg_set_global_misaligned_interior_pointer_fails(void** state)
{
    (void)state;
    enum { N = 1024, M = 64 };
    int* p = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
    assert_non_null(p);
    for (int i = 0; i < N; i++) p[i] = -7;
    assert_non_null(clmsync(stdcpu, 0, p, CL_MEM_DEVICE | CL_EVENT_WAIT));
    clerror();
    /* 4 bytes in: below any device's base address alignment.  Refused at the
     * call, naming the alignment in bytes; the argument keeps its binding. */
    size_t align = stdcl_mem_align(stdcpu);
    char want[64];
    snprintf(want, sizeof want, "must be %zu-byte aligned", align);
    assert_int_equal(clarg_set_global(stdcpu, g_fill, 0, p), 0);
    assert_int_equal(clarg_set_global(stdcpu, g_fill, 0, p + 1), STDCL_EINVAL);
    const char* e = clerror();
    assert_non_null(e);
    assert_contains(e, "4 bytes into the allocation");
    assert_contains(e, want);
    assert_null(clerror());
    /* Also on the fast path (the same allocation as the argument holds), and
     * through clforka. */
    if (align <= (N - M) * sizeof(int)) {
        assert_int_equal(clarg_set_global(stdcpu, g_fill, 0, p + align / sizeof(int)), 0);
        assert_int_equal(clarg_set_global(stdcpu, g_fill, 0, p + align / sizeof(int) + 1), STDCL_EINVAL);
        assert_contains(clerror(), want);
    }
    clndrange_t ndr = clndrange_init1d(0, M, 64);
    assert_null(clforka(stdcpu, 0, g_fill, &ndr, CL_EVENT_WAIT, p + 1, 1000));
    assert_contains(clerror(), want);
    assert_int_equal(clarg_set(stdcpu, g_fill, 1, 1000), 0);
    assert_non_null(clmsync(stdcpu, 0, p, CL_MEM_HOST | CL_EVENT_WAIT));
    for (int i = 0; i < N; i++) assert_int_equal(p[i], -7); /* nothing ran */
    /* The kernel still works with a good pointer. */
    assert_int_equal(clarg_set_global(stdcpu, g_fill, 0, p), 0);
    assert_non_null(clfork(stdcpu, 0, g_fill, &ndr, CL_EVENT_WAIT));
    assert_non_null(clmsync(stdcpu, 0, p, CL_MEM_HOST | CL_EVENT_WAIT));
    for (int i = 0; i < M; i++) assert_int_equal(p[i], 1000 + i);
    assert_int_equal(clfree(p), 0);
}

/* stdcl_mem_align: the largest CL_DEVICE_MEM_BASE_ADDR_ALIGN of the context's
 * devices, in bytes (OpenCL gives bits), a power of two; an aligned interior
 * pointer works in a launch. */
static void test_stdcl_mem_align_is_the_devices_alignment_in_bytes(void** state)
{
    (void)state;
    size_t want = 1;
    for (unsigned d = 0; d < clgetndev(stdcpu); d++) {
        cl_uint bits = 0;
        assert_int_equal(
            clGetDeviceInfo(stdcl_device(stdcpu, d), CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, NULL),
            CL_SUCCESS);
        while (want < bits / 8) want *= 2;
    }
    size_t align = stdcl_mem_align(stdcpu);
    assert_int_equal(align, want);
    assert_int_equal(align & (align - 1), 0);
    assert_null(clerror());
    /* A bad context: 0 and a message. */
    assert_int_equal(stdcl_mem_align(NULL), 0);
    assert_non_null(clerror());
    assert_null(clerror());
    /* An interior pointer at that alignment runs. */
    enum { N = 4096 };
    int* p = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
    assert_non_null(p);
    size_t off = align / sizeof(int);
    assert_true(off < N);
    for (int i = 0; i < N; i++) p[i] = -1;
    assert_non_null(clmsync(stdcpu, 0, p, CL_MEM_DEVICE | CL_EVENT_WAIT));
    clndrange_t ndr = clndrange_init1d(0, 64, 64);
    assert_non_null(clforka(stdcpu, 0, g_fill, &ndr, CL_EVENT_WAIT, p + off, 5));
    assert_non_null(clmsync(stdcpu, 0, p, CL_MEM_HOST | CL_EVENT_WAIT));
    for (int i = 0; i < N; i++)
        assert_int_equal(p[i], (size_t)i >= off && (size_t)i < off + 64 ? 5 + (int)(i - off) : -1);
    assert_int_equal(clfree(p), 0);
}

static void test_stdcl_mem_returns_real_buffer(void** state)
{
    (void)state;
    enum { N = 1000 };
    int* p = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
    assert_non_null(p);
    for (int i = 0; i < N; i++) p[i] = i * i;
    for (unsigned d = 0; d < 2; d++) {
        cl_mem m = stdcl_mem(stdcpu, d, p);
        assert_non_null(m);
        assert_ptr_equal(stdcl_mem(stdcpu, d, p), m); /* the same object each time */
        size_t size = 0;
        cl_context c = NULL;
        cl_mem_object_type t = 0;
        assert_int_equal(clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof size, &size, NULL), CL_SUCCESS);
        assert_int_equal(clGetMemObjectInfo(m, CL_MEM_CONTEXT, sizeof c, &c, NULL), CL_SUCCESS);
        assert_int_equal(clGetMemObjectInfo(m, CL_MEM_TYPE, sizeof t, &t, NULL), CL_SUCCESS);
        assert_true(size >= N * sizeof(int));
        assert_ptr_equal(c, stdcl_clcontext(stdcpu));
        assert_int_equal(t, CL_MEM_OBJECT_BUFFER);
        /* Plain OpenCL reads device d's copy after a sync to it. */
        assert_non_null(clmsync(stdcpu, d, p, CL_MEM_DEVICE | CL_EVENT_WAIT));
        int* back = (int*)malloc(N * sizeof(int));
        assert_non_null(back);
        assert_int_equal(
            clEnqueueReadBuffer(stdcl_queue(stdcpu, d), m, CL_TRUE, 0, N * sizeof(int), back, 0, NULL, NULL),
            CL_SUCCESS);
        assert_memory_equal(back, p, N * sizeof(int));
        free(back);
    }
    clerror();
    int local = 0;
    assert_null(stdcl_mem(stdcpu, 0, &local));
    assert_non_null(clerror());
    assert_null(stdcl_mem(stdcpu, 2, p));
    assert_non_null(clerror());
    assert_int_equal(clfree(p), 0);
}

static void test_clmalloc_image2d_reads_in_kernel(void** state)
{
    (void)state;
    cl_bool img = CL_FALSE;
    assert_int_equal(clGetDeviceInfo(stdcl_device(stdcpu, 0), CL_DEVICE_IMAGE_SUPPORT, sizeof img, &img, NULL),
                     CL_SUCCESS);
    if (!img) skip();
    enum { W = 16, H = 8 };
    void* h = clopen(stdcpu, tu_kernel("image.cl"), CLLD_NOW);
    if (!h) print_error("clopen(image.cl): %s\n", clerror());
    assert_non_null(h);
    cl_kernel k = clsym(stdcpu, h, "read_image", 0);
    assert_non_null(k);
    cl_float4* pix = (cl_float4*)clmalloc(stdcpu, W * H * sizeof(cl_float4), CL_MEM_IMAGE2D);
    cl_float4* out = (cl_float4*)clmalloc(stdcpu, W * H * sizeof(cl_float4), 0);
    assert_non_null(pix);
    assert_non_null(out);
    int rc = clmctl(pix, CL_MCTL_SET_IMAGE2D, (size_t)W, (size_t)H, (const cl_image_format*)NULL);
    if (rc) print_error("clmctl(CL_MCTL_SET_IMAGE2D): %s\n", clerror());
    assert_int_equal(rc, 0);
    for (int i = 0; i < W * H; i++) {
        pix[i].s[0] = (float)i;
        pix[i].s[1] = (float)(i % W);
        pix[i].s[2] = (float)(i / W);
        pix[i].s[3] = 0.5f;
        out[i].s[0] = out[i].s[1] = out[i].s[2] = out[i].s[3] = -1.0f;
    }
    for (unsigned d = 0; d < 2; d++) {
        cl_mem_object_type t = 0;
        assert_int_equal(clGetMemObjectInfo(stdcl_mem(stdcpu, d, pix), CL_MEM_TYPE, sizeof t, &t, NULL), CL_SUCCESS);
        assert_int_equal(t, CL_MEM_OBJECT_IMAGE2D);
        clndrange_t ndr = clndrange_init2d(0, W, 4, 0, H, 4);
        assert_non_null(clmsync(stdcpu, d, pix, CL_MEM_DEVICE | CL_EVENT_WAIT));
        assert_non_null(clmsync(stdcpu, d, out, CL_MEM_DEVICE | CL_EVENT_WAIT));
        cl_event ev = clforka(stdcpu, d, k, &ndr, CL_EVENT_WAIT, pix, out, (int)W);
        if (!ev) print_error("clforka(read_image): %s\n", clerror());
        assert_non_null(ev);
        assert_non_null(clmsync(stdcpu, d, out, CL_MEM_HOST | CL_EVENT_WAIT));
        assert_memory_equal(out, pix, W * H * sizeof(cl_float4));
        for (int i = 0; i < W * H; i++) out[i].s[0] = -1.0f;
    }
    assert_int_equal(clfree(pix), 0);
    assert_int_equal(clfree(out), 0);
    assert_int_equal(clclose(stdcpu, h), 0);
}

static void test_clmalloc_nocopy_roundtrip(void** state)
{
    (void)state;
    enum { N = 2048 };
    int* a = (int*)clmalloc(stdcpu, N * sizeof(int), CL_MEM_NOCOPY);
    assert_non_null(a);
    for (int i = 0; i < N; i++) a[i] = i;
    add_on_device(a, N, 1, 9, 0);
    for (int i = 0; i < N; i++) assert_int_equal(a[i], i + 9);
    assert_int_equal(clfree(a), 0);
}

/* Small allocations share pages: each one's kernel writes stay inside it. */
static void test_small_allocations_sharing_pages_work_on_both_devices(void** state)
{
    (void)state;
    enum { K = 96, N = 64 }; /* 256 bytes each */
    int* a[K];
    for (int k = 0; k < K; k++) {
        a[k] = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
        assert_non_null(a[k]);
        for (int i = 0; i < N; i++) a[k][i] = k * 1000 + i;
    }
    for (int k = 0; k < K; k++) add_on_device(a[k], N, (unsigned)k % 2, k + 1, k % 3 == 0);
    if (stdcl_wait(stdcpu, 0, 0) != 0 || stdcl_wait(stdcpu, 1, 0) != 0) fail_msg("clwait: %s", clerror());
    for (int k = 0; k < K; k++)
        for (int i = 0; i < N; i++) assert_int_equal(a[k][i], k * 1000 + i + k + 1);
    for (int k = 0; k < K; k++) assert_int_equal(clfree(a[k]), 0);
}

/* Memory the program owns, adopted at an address no device needs (an int past
 * malloc's alignment) and at an aligned one: kernels see it on both devices, and
 * clfree gives it back to the program. */
static void test_clmadopt_memory_works_in_kernels_and_stays_the_programs(void** state)
{
    (void)state;
    enum { N = 1000 };
    char* raw = malloc(N * sizeof(int) + 4096);
    assert_non_null(raw);
    uintptr_t al = stdcl_mem_align(stdcpu);
    int* views[2] = {(int*)(((uintptr_t)raw + al) / al * al), NULL};
    char* odd = malloc(N * sizeof(int) + sizeof(int));
    assert_non_null(odd);
    views[1] = (int*)(odd + sizeof(int));
    for (int v = 0; v < 2; v++) {
        int* a = views[v];
        for (int i = 0; i < N; i++) a[i] = i;
        assert_int_equal(clmadopt(stdcpu, a, N * sizeof(int), 0), 0);
        size_t off = 0;
        assert_ptr_equal(stdcl_mem_base(&a[N - 1], &off), a);
        assert_int_equal(off, (N - 1) * sizeof(int));
        assert_int_equal(clsizeofmem(a), N * sizeof(int));
        add_on_device(a, N, 0, 3, 0);
        add_on_device(a, N, 1, 4, 1);
        assert_int_equal(stdcl_wait(stdcpu, 1, 0), 0);
        for (int i = 0; i < N; i++) assert_int_equal(a[i], i + 7);
        assert_int_equal(clfree(a), 0);
        assert_null(stdcl_mem_base(a, NULL));
        a[0] = 42; /* still the program's */
        assert_int_equal(a[0], 42);
    }
    free(odd);
    free(raw);
}

static void test_clmadopt_bad_input_fails_with_a_message(void** state)
{
    (void)state;
    char* m = malloc(4096);
    assert_non_null(m);
    assert_int_equal(clmadopt(stdcpu, NULL, 16, 0), STDCL_EINVAL);
    assert_contains(clerror(), "clmadopt: the pointer is NULL");
    assert_int_equal(clmadopt(stdcpu, m, 0, 0), STDCL_EINVAL);
    assert_contains(clerror(), "clmadopt: size is 0");
    assert_int_equal(clmadopt(stdcpu, m, 16, CL_MEM_DEVONLY), STDCL_EINVAL);
    assert_contains(clerror(), "cannot be adopted");
    assert_int_equal(clmadopt(stdcpu, m, 16, CL_MEM_IMAGE2D), STDCL_EINVAL);
    assert_contains(clerror(), "cannot be adopted");
    assert_int_equal(clmadopt(stdcpu, m, 16, CL_MEM_RO | CL_MEM_WO), STDCL_EINVAL);
    assert_contains(clerror(), "exclude each other");
    assert_int_equal(clmadopt(stdcpu, m + 100, 1000, 0), 0);
    /* overlaps: inside, across the start, across the end, around */
    size_t at[][2] = {{200, 10}, {50, 100}, {1000, 200}, {0, 4096}};
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(clmadopt(stdcpu, m + at[i][0], at[i][1], 0), STDCL_EINVAL);
        assert_contains(clerror(), "overlap memory already registered");
    }
    assert_int_equal(clmadopt(stdcpu, m + 1100, 100, 0), 0); /* right after it: fine */
    char* c = clmalloc(stdcpu, 300, 0);
    assert_non_null(c);
    assert_int_equal(clmadopt(stdcpu, c + 8, 8, 0), STDCL_EINVAL);
    assert_contains(clerror(), "overlap memory already registered");
    assert_null(clmrealloc(stdcpu, m + 100, 2000, 0));
    {
        const char* e = clerror();
        assert_contains(e, "clmrealloc:");
        assert_contains(e, "clmadopt");
    }
    assert_ptr_equal(stdcl_mem_base(m + 150, NULL), m + 100); /* still registered */
    assert_int_equal(clfree(c), 0);
    assert_int_equal(clfree(m + 1100), 0);
    assert_int_equal(clfree(m + 100), 0);
    assert_int_equal(clmadopt(stdcpu, m, 4096, CL_MEM_DETACHED), 0);
    assert_int_equal(clmattach(stdcpu, m), 0);
    assert_int_equal(clfree(m), 0);
    free(m);
}

/* CL_MEM_DEVONLY: filled by a kernel, copied to host memory by clmcopy. */
static void test_clmalloc_devonly_works_in_kernels_and_clmcopy(void** state)
{
    (void)state;
    enum { N = 4096 };
    for (unsigned d = 0; d < 2; d++) {
        int* dev = (int*)clmalloc(stdcpu, N * sizeof(int), CL_MEM_DEVONLY);
        int* out = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
        int* small = (int*)clmalloc(stdcpu, 64 * sizeof(int), CL_MEM_DEVONLY);
        assert_non_null(dev);
        assert_non_null(out);
        assert_non_null(small);
        assert_true(dev != small);
        assert_int_equal(clsizeofmem(dev), N * sizeof(int));
        assert_ptr_equal(stdcl_mem_base(dev + 10, NULL), dev);
        assert_int_equal(clmctl(dev, CL_MCTL_GET_STATUS) & CL_MEM_DEVONLY, CL_MEM_DEVONLY);
        clndrange_t ndr = clndrange_init1d(0, N, 0);
        assert_non_null(clforka(stdcpu, d, g_fill, &ndr, CL_EVENT_NOWAIT, dev, 5));
        assert_non_null(clforka(stdcpu, d, g_add, &ndr, CL_EVENT_NOWAIT, dev, 2));
        assert_non_null(clmcopy(stdcpu, d, dev, out, CL_EVENT_NOWAIT));
        assert_non_null(clmsync(stdcpu, d, out, CL_MEM_HOST | CL_EVENT_WAIT));
        for (int i = 0; i < N; i++) assert_int_equal(out[i], i + 7);
        assert_non_null(stdcl_mem(stdcpu, d, dev));
        assert_int_equal(clfree(small), 0);
        assert_int_equal(clfree(dev), 0);
        assert_int_equal(clfree(out), 0);
    }
}

static void test_clmalloc_devonly_bad_uses_fail_with_a_message(void** state)
{
    (void)state;
    assert_null(clmalloc(NULL, 64, CL_MEM_DEVONLY | CL_MEM_DETACHED));
    assert_contains(clerror(), "CL_MEM_DETACHED");
    assert_null(clmalloc(stdcpu, 64, CL_MEM_DEVONLY | CL_MEM_NOCOPY));
    assert_contains(clerror(), "CL_MEM_NOCOPY");
    int* d = (int*)clmalloc(stdcpu, 1024, CL_MEM_DEVONLY);
    assert_non_null(d);
    assert_null(clmsync(stdcpu, 0, d, CL_MEM_DEVICE));
    {
        const char* e = clerror();
        assert_contains(e, "clmsync: the allocation at");
        assert_contains(e, "device-only (CL_MEM_DEVONLY)");
    }
    assert_null(clmsyncn(stdcpu, 0, d + 4, 16, CL_MEM_HOST));
    {
        const char* e = clerror();
        assert_contains(e, "clmsyncn:");
        assert_contains(e, "CL_MEM_DEVONLY");
    }
    assert_null(clmrealloc(stdcpu, d, 2048, 0));
    assert_contains(clerror(), "clmrealloc: device-only memory (CL_MEM_DEVONLY)");
    assert_int_equal(clmdetach(d), STDCL_EINVAL);
    {
        const char* e = clerror();
        assert_contains(e, "clmdetach:");
        assert_contains(e, "CL_MEM_DEVONLY");
    }
    assert_ptr_equal(stdcl_mem_base(d, NULL), d); /* all refused: still there */
    int* h = (int*)clmalloc(stdcpu, 1024, 0);
    assert_non_null(h);
    assert_null(clmrealloc(stdcpu, h, 2048, CL_MEM_DEVONLY));
    assert_contains(clerror(), "CL_MEM_DEVONLY");
    assert_int_equal(clfree(h), 0);
    void* x = clmalloc(NULL, 64, CL_MEM_DETACHED);
    assert_non_null(x);
    assert_int_equal(clmctl(x, CL_MCTL_SET_USRFLAGS, CL_MEM_DEVONLY), STDCL_EINVAL);
    assert_contains(clerror(), "CL_MEM_DEVONLY is fixed at clmalloc");
    assert_int_equal(clfree(x), 0);
    assert_int_equal(clfree(d), 0);
}

static void test_clfree_after_nowait_kernel_is_safe(void** state)
{
    (void)state;
    /* clfree waits for the commands still using the memory. */
    enum { N = 1 << 20 };
    for (int rep = 0; rep < 4; rep++) {
        int* a = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
        assert_non_null(a);
        memset(a, 0, N * sizeof(int));
        add_on_device(a, N, (unsigned)rep & 1, 1, 1);
        assert_int_equal(clfree(a), 0);
    }
    assert_int_equal(stdcl_wait(stdcpu, 0, CL_ALL_EVENT), 0);
    assert_int_equal(stdcl_wait(stdcpu, 1, CL_ALL_EVENT), 0);
}

/* ------------------------------------------------------------------------ */
/* Copy mode (STDCL_ZERO_COPY=0), in a fresh process: a transfer queue beside */
/* each kernel queue, pinned host memory (helper_overlap)                     */
/* ------------------------------------------------------------------------ */

static void run_overlap(const char* const* env)
{
    const char* args[] = {NULL};
    tu_proc r;
    tu_spawn(&r, tu_helper("helper_overlap"), args, env, NULL, 240);
    tu_expect_status(&r, 0, "helper_overlap");
    const char* names[] = {"sync-then-kernel", "kernel-then-sync", "free-after-sync",
                           "threads",          "copy-order",       "pinned-realloc"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char want[64];
        snprintf(want, sizeof want, "%s: ok", names[i]);
        assert_contains(r.out, want);
    }
    assert_contains(r.out, "overlap ok");
    /* Allocations of 256 KiB or more were pinned (and the smaller ones were not);
     * under STDCL_CHECK=sync memory is mapped twice instead, never pinned. */
    assert_contains(r.err, "bytes at 0x");
    assert_contains(r.err, "262144 bytes at ");
    const char* check = getenv("STDCL_CHECK");
    if (check && (strstr(check, "sync") || strstr(check, "all")))
        assert_contains(r.err, " (watched)");
    else
        assert_contains(r.err, " (pinned)");
    tu_proc_free(&r);
}

static void test_clmsync_nowait_orders_with_kernels_on_two_queues(void** state)
{
    (void)state;
    const char* env[] = {"STDCL_ZERO_COPY=0", "STDCL_TRACE=mem", NULL};
    run_overlap(env);
}

static void test_clmsync_nowait_orders_with_kernels_on_one_queue(void** state)
{
    (void)state;
    const char* env[] = {"STDCL_ZERO_COPY=0", "STDCL_OVERLAP=0", "STDCL_TRACE=mem", NULL};
    run_overlap(env);
}

/* ------------------------------------------------------------------------ */
/* The overrun check mode (STDCL_CHECK=1), in a fresh process                */
/* ------------------------------------------------------------------------ */

static void run_overrun(tu_proc* r, const char* zero_copy)
{
    const char* env[] = {"STDCL_CHECK=1", zero_copy, NULL};
    const char* args[] = {NULL};
    tu_spawn(r, tu_helper("helper_overrun"), args, env, NULL, 120);
    tu_expect_status(r, 0, "helper_overrun");
}

static void check_overrun_lines(const tu_proc* r, const char* kernel_zone0, const char* kernel_zone1)
{
    for (unsigned d = 0; d < 2; d++) {
        char want[256];
        const char* zone = d ? kernel_zone1 : kernel_zone0;
        snprintf(want, sizeof want,
                 "kernel-past-end-clmsync %u: -9007 clmsync: overrun: 32 byte(s) written past the end of the "
                 "4000-byte allocation at ",
                 d);
        assert_contains(r->out, want);
        snprintf(want, sizeof want, "kernel-past-end-clwait %u: -9007 clwait: overrun: 32 byte(s) written past the end",
                 d);
        assert_contains(r->out, want);
        snprintf(want, sizeof want, "allocation at 0x");
        assert_contains(r->out, want);
        snprintf(want, sizeof want, " (%s", zone);
        assert_contains(r->out, want);
        assert_contains(r->out, "); last kernel launched on it: 'over'");
        snprintf(want, sizeof want, "after-report-clmsync %u: ok", d); /* reported once */
        assert_contains(r->out, want);
        snprintf(want, sizeof want, "values %u: ok", d);
        assert_contains(r->out, want);
        snprintf(want, sizeof want,
                 "host-past-end-clfree %u: -9007 clfree: overrun: 1 byte(s) written past the end of the 100-byte "
                 "allocation",
                 d);
        assert_contains(r->out, want);
        snprintf(want, sizeof want, "freed-anyway %u: ok", d);
        assert_contains(r->out, want);
        snprintf(want, sizeof want,
                 "host-before-start-clfree %u: -9007 clfree: overrun: 1 byte(s) written before the start", d);
        assert_contains(r->out, want);
        snprintf(want, sizeof want, "clean %u: ok", d);
        assert_contains(r->out, want);
    }
}

static void test_stdcl_check_reports_overruns_in_host_memory(void** state)
{
    (void)state;
    tu_proc r;
    run_overrun(&r, "STDCL_ZERO_COPY=1"); /* PoCL: kernels write the host memory itself */
    check_overrun_lines(&r, "host memory", "host memory");
    tu_proc_free(&r);
}

static void test_stdcl_check_reports_overruns_in_device_buffers(void** state)
{
    (void)state;
    tu_proc r;
    run_overrun(&r, "STDCL_ZERO_COPY=0"); /* the copy path a GPU takes: the device buffer's zone */
    check_overrun_lines(&r, "device 0 (", "device 1 (");
    tu_proc_free(&r);
}

/* clmsyncn: each device brings back its own slice of one array (a copying
 * device, STDCL_ZERO_COPY=0 not needed: stdcpu's second device writes the
 * other half, and a whole-array sync would overwrite the first's). */
static void test_clmsyncn_brings_back_a_slice_only(void** state)
{
    (void)state;
    size_t n = 1000;
    int* a = (int*)clmalloc(stdcpu, n * sizeof(int), 0);
    assert_non_null(a);
    for (size_t i = 0; i < n; i++) a[i] = (int)i;
    assert_non_null(clmsyncn(stdcpu, 0, a + 100, 50 * sizeof(int), CL_MEM_DEVICE));
    assert_non_null(clmsyncn(stdcpu, 0, a + 100, 50 * sizeof(int), CL_MEM_HOST | CL_EVENT_NOWAIT));
    assert_int_equal(stdcl_wait(stdcpu, 0, CL_MEM_EVENT), 0);
    for (size_t i = 100; i < 150; i++) assert_int_equal(a[i], (int)i);
    /* a slice that ends exactly at the end, at an odd address */
    assert_non_null(clmsyncn(stdcpu, 1, (char*)a + 3, n * sizeof(int) - 3, CL_MEM_DEVICE));
    assert_non_null(clmsyncn(stdcpu, 1, (char*)a + 3, n * sizeof(int) - 3, CL_MEM_HOST));
    clfree(a);
}

static void test_clmsyncn_bad_ranges_fail_with_a_message(void** state)
{
    (void)state;
    char* a = (char*)clmalloc(stdcpu, 4096, 0);
    assert_non_null(a);
    assert_null(clmsyncn(stdcpu, 0, a + 4000, 97, CL_MEM_DEVICE));
    assert_contains(clerror(), "clmsyncn: 97 bytes from offset 4000 pass the end of the 4096-byte allocation at");
    assert_null(clmsyncn(stdcpu, 0, a, 0, CL_MEM_DEVICE));
    assert_contains(clerror(), "clmsyncn: 0 bytes to sync");
    assert_null(clmsyncn(stdcpu, 0, a, SIZE_MAX, CL_MEM_HOST));
    assert_contains(clerror(), "pass the end");
    assert_null(clmsyncn(stdcpu, 0, a, 16, 0));
    assert_contains(clerror(), "clmsyncn: flags must hold exactly one of CL_MEM_HOST and CL_MEM_DEVICE");
    assert_null(clmsyncn(stdcpu, 0, NULL, 16, CL_MEM_HOST));
    assert_contains(clerror(), "clmsyncn: the pointer is NULL");
    int local = 0;
    assert_null(clmsyncn(stdcpu, 0, &local, 4, CL_MEM_HOST));
    const char* e = clerror();
    assert_contains(e, "clmsyncn:");
    assert_contains(e, "is not memory returned by clmalloc");
    assert_null(clmsyncn(stdcpu, 9, a, 16, CL_MEM_HOST));
    assert_non_null(clerror());
    clfree(a);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_clmalloc_aligns_small_blocks_to_mem_align_and_large_to_pages),
    cmocka_unit_test(test_clsizeofmem_not_an_allocation_start_is_zero),
    cmocka_unit_test(test_stdcl_mem_base_finds_every_page_of_a_large_allocation),
    cmocka_unit_test(test_stdcl_mem_base_keeps_many_small_allocations_apart),
    cmocka_unit_test(test_clmalloc_ro_and_wo_set_buffer_access),
    cmocka_unit_test(test_clmrealloc_grows_keeping_contents),
    cmocka_unit_test(test_clmrealloc_shrinks_keeping_prefix),
    cmocka_unit_test(test_clmrealloc_null_allocates),
    cmocka_unit_test(test_clmrealloc_failure_keeps_old_allocation),
    cmocka_unit_test(test_clmctl_reserved_operations),
    cmocka_unit_test(test_clmsync_roundtrip_device0),
    cmocka_unit_test(test_clmsync_roundtrip_device1),
    cmocka_unit_test(test_clmsync_nowait_roundtrip_with_clwait),
    cmocka_unit_test(test_clmsync_two_devices_at_once),
    cmocka_unit_test(test_clmsync_returns_event_caller_can_own),
    cmocka_unit_test(test_clmalloc_detached_attach_detach),
    cmocka_unit_test(test_clmalloc_detached_ignores_context),
    cmocka_unit_test(test_clmcopy_copies_device_copies),
    cmocka_unit_test(test_clmcopy_copies_the_smaller_size),
    cmocka_unit_test(test_clarg_set_global_interior_pointer_views_from_pointer),
    cmocka_unit_test(test_clarg_set_global_interior_pointer_reuses_one_sub_buffer_until_clfree),
    cmocka_unit_test(test_clarg_set_global_after_clfree_binds_the_new_allocation),
    cmocka_unit_test(test_clarg_set_global_misaligned_interior_pointer_fails),
    cmocka_unit_test(test_stdcl_mem_align_is_the_devices_alignment_in_bytes),
    cmocka_unit_test(test_stdcl_mem_returns_real_buffer),
    cmocka_unit_test(test_clmalloc_image2d_reads_in_kernel),
    cmocka_unit_test(test_clmalloc_nocopy_roundtrip),
    cmocka_unit_test(test_small_allocations_sharing_pages_work_on_both_devices),
    cmocka_unit_test(test_clmadopt_memory_works_in_kernels_and_stays_the_programs),
    cmocka_unit_test(test_clmadopt_bad_input_fails_with_a_message),
    cmocka_unit_test(test_clmalloc_devonly_works_in_kernels_and_clmcopy),
    cmocka_unit_test(test_clmalloc_devonly_bad_uses_fail_with_a_message),
    cmocka_unit_test(test_clfree_after_nowait_kernel_is_safe),
    cmocka_unit_test(test_clmsync_nowait_orders_with_kernels_on_two_queues),
    cmocka_unit_test(test_clmsync_nowait_orders_with_kernels_on_one_queue),
    cmocka_unit_test(test_stdcl_check_reports_overruns_in_host_memory),
    cmocka_unit_test(test_stdcl_check_reports_overruns_in_device_buffers),
    cmocka_unit_test(test_clmsyncn_brings_back_a_slice_only),
    cmocka_unit_test(test_clmsyncn_bad_ranges_fail_with_a_message),
};

int main(int argc, char** argv) { return tu_run_tests(argc, argv, "memory", tests, setup, tu_close_kernels); }
