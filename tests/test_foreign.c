/* SPDX-License-Identifier: MIT */
/* test_foreign.c: plain OpenCL commands on libstdcl memory.  A kernel of the
 * program's own enqueued on stdcl_queue() between libstdcl's NOWAIT transfers,
 * in both directions; the same on a queue of the program's own announced with
 * clforeign_begin/clforeign_end (a barrier, the events handed out, several
 * commands without an event); clfree and CL_MEM_NOFORCE after an announced
 * write; every bad argument.  On every device of stdcpu, or of stdgpu with
 * STDCL_TEST_CONTEXT=gpu; make check runs it in both memory modes, with one
 * queue per device and under the ordering fuzzer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <stdcl.h>

#include "test_util.h"

#define N (1 << 18)
#define ROUNDS 6

static CLCONTEXT* g_cp;
static cl_program g_prog; /* axpy: y = a * x + y */

static const char* g_src =
    "__kernel void axpy(float a, __global const float* x, __global float* y)\n"
    "{ size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; }\n";

static int setup(void** state)
{
    (void)state;
    const char* which = getenv("STDCL_TEST_CONTEXT");
    g_cp = which && !strcmp(which, "gpu") ? stdgpu : stdcpu;
    if (!g_cp || clgetndev(g_cp) == 0) return -1;
    cl_int err;
    g_prog = clCreateProgramWithSource(stdcl_clcontext(g_cp), 1, &g_src, NULL, &err);
    if (err != CL_SUCCESS || clBuildProgram(g_prog, 0, NULL, "", NULL, NULL) != CL_SUCCESS) return -1;
    return 0;
}

static int teardown(void** state)
{
    (void)state;
    if (g_prog) clReleaseProgram(g_prog);
    return 0;
}

static unsigned ndev(void) { return clgetndev(g_cp); }

/* y = a * x + y by the program's own kernel on queue q, with the wait list given
 * (a kernel object per command, as a library makes: none holds freed memory). */
static cl_event plain_axpy(unsigned d, cl_command_queue q, float a, float* x, float* y, cl_uint nw,
                           const cl_event* wl)
{
    cl_mem xm = stdcl_mem(g_cp, d, x), ym = stdcl_mem(g_cp, d, y);
    assert_non_null(xm);
    assert_non_null(ym);
    cl_int err;
    cl_kernel k = clCreateKernel(g_prog, "axpy", &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(clSetKernelArg(k, 0, sizeof a, &a), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(k, 1, sizeof xm, &xm), CL_SUCCESS);
    assert_int_equal(clSetKernelArg(k, 2, sizeof ym, &ym), CL_SUCCESS);
    size_t n = N;
    cl_event ev = NULL;
    assert_int_equal(clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, nw, wl, &ev), CL_SUCCESS);
    clReleaseKernel(k);
    return ev;
}

/* Two allocations of N floats, and their release. */
static void alloc_pair(float** x, float** y)
{
    *x = clmalloc(g_cp, N * sizeof(float), 0);
    *y = clmalloc(g_cp, N * sizeof(float), 0);
    assert_non_null(*x);
    assert_non_null(*y);
}

static void free_pair(float* x, float* y)
{
    assert_int_equal(clfree(x), 0);
    assert_int_equal(clfree(y), 0);
}

static void fill(float* x, float* y, int round)
{
    for (size_t i = 0; i < N; i++) {
        x[i] = (float)((i * 7 + (size_t)round) % 1000);
        y[i] = (float)((i + (size_t)round * 3) % 100);
    }
}

/* fill(round)'s values in x and y, sent to device d (clmsync with
 * CL_MEM_DEVICE | flags). */
static void fill_and_send(unsigned d, float* x, float* y, int round, int flags)
{
    fill(x, y, round);
    assert_non_null(clmsync(g_cp, d, x, CL_MEM_DEVICE | flags));
    assert_non_null(clmsync(g_cp, d, y, CL_MEM_DEVICE | flags));
}

/* y holds 2 * x + y of fill(round)'s values, times rep applications. */
static void expect_axpy(const float* y, int round, int rep)
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < N; i++) {
        float x0 = (float)((i * 7 + (size_t)round) % 1000), want = (float)((i + (size_t)round * 3) % 100);
        for (int r = 0; r < rep; r++) want = 2.0f * x0 + want;
        if (y[i] != want && !bad++) first = i;
    }
    if (bad) fail_msg("%zu of %d results wrong (round %d), first at %zu: %g", bad, N, round, first, (double)y[first]);
}

static void test_a_kernel_on_stdcl_queue_runs_after_nowait_uploads(void** state)
{
    (void)state;
    float *x, *y;
    alloc_pair(&x, &y);
    for (unsigned d = 0; d < ndev(); d++)
        for (int round = 0; round < ROUNDS; round++) {
            fill_and_send(d, x, y, round, CL_EVENT_NOWAIT);
            cl_event ev = plain_axpy(d, stdcl_queue(g_cp, d), 2.0f, x, y, 0, NULL);
            clReleaseEvent(ev);
            assert_non_null(clmsync(g_cp, d, y, CL_MEM_HOST));
            expect_axpy(y, round, 1);
        }
    free_pair(x, y);
}

static void test_transfers_after_a_kernel_on_stdcl_queue_see_its_results(void** state)
{
    (void)state;
    float *x, *y;
    alloc_pair(&x, &y);
    for (unsigned d = 0; d < ndev(); d++)
        for (int round = 0; round < ROUNDS; round++) {
            fill_and_send(d, x, y, round, 0);
            cl_command_queue q = stdcl_queue(g_cp, d);
            clReleaseEvent(plain_axpy(d, q, 2.0f, x, y, 0, NULL));
            /* A NOWAIT transfer back, then a second foreign kernel and its result's
             * transfer: each waits for the one before. */
            assert_non_null(clmsync(g_cp, d, y, CL_MEM_HOST | CL_EVENT_NOWAIT));
            assert_non_null(clwait(g_cp, d, CL_MEM_EVENT));
            expect_axpy(y, round, 1);
            clReleaseEvent(plain_axpy(d, q, 2.0f, x, y, 0, NULL));
            assert_non_null(clmsync(g_cp, d, y, CL_MEM_HOST | CL_EVENT_NOWAIT));
            assert_non_null(clwait(g_cp, d, CL_MEM_EVENT));
            expect_axpy(y, round, 2);
        }
    free_pair(x, y);
}

/* Foreign commands on a queue of the program's own, announced three ways. */
enum { BARRIER, WAITLIST, NO_EVENT };

static void own_queue_round(unsigned d, cl_command_queue q, int how, float* x, float* y, int round)
{
    fill_and_send(d, x, y, round, CL_EVENT_NOWAIT);
    /* y named as its two halves (the size of a use), x whole. */
    struct clforeign_use uses[] = {
        {x, CL_MEM_RO, 0}, {y, CL_MEM_RW, N / 2 * sizeof(float)}, {y + N / 2, CL_MEM_RW, N / 2 * sizeof(float)}};
    CLFOREIGN* f = clforeign_begin(g_cp, d, q, uses, 3, how == WAITLIST ? CL_FOREIGN_WAITLIST : 0);
    if (!f) fail_msg("clforeign_begin: %s", clerror());
    assert_ptr_equal(clforeign_queue(f), q);
    const cl_event* wl = NULL;
    cl_uint nw = clforeign_waitlist(f, &wl);
    if (how != WAITLIST) assert_int_equal(nw, 0);
    cl_event e1 = plain_axpy(d, q, 2.0f, x, y, nw, wl);
    if (how == NO_EVENT) {
        /* A library that enqueues several commands and returns no event. */
        cl_event e2 = plain_axpy(d, q, 2.0f, x, y, 0, NULL);
        clReleaseEvent(e1);
        clReleaseEvent(e2);
        assert_int_equal(clforeign_end(f, 0, NULL), 0);
    } else {
        assert_int_equal(clforeign_end(f, 1, &e1), 0);
        clReleaseEvent(e1);
    }
    assert_non_null(clmsync(g_cp, d, y, CL_MEM_HOST | CL_EVENT_NOWAIT));
    assert_non_null(clwait(g_cp, d, CL_MEM_EVENT));
    expect_axpy(y, round, how == NO_EVENT ? 2 : 1);
}

static void test_announced_commands_on_a_queue_of_their_own_keep_their_order(void** state)
{
    (void)state;
    float *x, *y;
    alloc_pair(&x, &y);
    for (unsigned d = 0; d < ndev(); d++) {
        cl_int err;
        cl_command_queue q =
            clCreateCommandQueue(stdcl_clcontext(g_cp), stdcl_device(g_cp, d), 0, &err);
        assert_int_equal(err, CL_SUCCESS);
        for (int round = 0; round < ROUNDS; round++) own_queue_round(d, q, round % 3, x, y, round);
        clReleaseCommandQueue(q);
    }
    free_pair(x, y);
}

static void test_announced_commands_on_stdcl_queue(void** state)
{
    (void)state;
    float *x, *y;
    alloc_pair(&x, &y);
    for (unsigned d = 0; d < ndev(); d++) {
        /* NULL: the kernel queue, which the ticket names; no allocation. */
        CLFOREIGN* f = clforeign_begin(g_cp, d, NULL, NULL, 0, 0);
        if (!f) fail_msg("clforeign_begin: %s", clerror());
        assert_ptr_equal(clforeign_queue(f), stdcl_queue(g_cp, d));
        assert_int_equal(clforeign_end(f, 0, NULL), 0);
        for (int round = 0; round < 3; round++) own_queue_round(d, stdcl_queue(g_cp, d), round, x, y, round);
    }
    free_pair(x, y);
}

static void test_clfree_waits_for_an_announced_command(void** state)
{
    (void)state;
    for (unsigned d = 0; d < ndev(); d++) {
        float *x, *y;
        alloc_pair(&x, &y);
        fill_and_send(d, x, y, 0, 0);
        cl_int err;
        cl_command_queue q =
            clCreateCommandQueue(stdcl_clcontext(g_cp), stdcl_device(g_cp, d), 0, &err);
        assert_int_equal(err, CL_SUCCESS);
        struct clforeign_use uses[] = {{x, CL_MEM_RO, 0}, {y, CL_MEM_RW, 0}};
        CLFOREIGN* f = clforeign_begin(g_cp, d, q, uses, 2, 0);
        assert_non_null(f);
        cl_event ev[4];
        for (int k = 0; k < 4; k++) ev[k] = plain_axpy(d, q, 2.0f, x, y, 0, NULL);
        clFlush(q);
        /* Open: clfree refuses, and the allocation stays usable. */
        assert_int_equal(clfree(y), STDCL_ESTATE);
        const char* e = clerror();
        assert_contains(e, "clfree: the allocation at 0x");
        assert_contains(e, "1 clforeign_begin ticket naming it is not ended (clforeign_end)");
        assert_int_equal(clforeign_end(f, 4, ev), 0);
        assert_int_equal(clfree(y), 0);
        for (int k = 0; k < 4; k++) {
            cl_int st = CL_QUEUED;
            assert_int_equal(clGetEventInfo(ev[k], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL),
                             CL_SUCCESS);
            assert_int_equal(st, CL_COMPLETE);
            clReleaseEvent(ev[k]);
        }
        assert_int_equal(clfree(x), 0);
        clReleaseCommandQueue(q);
    }
}

static void test_noforce_transfers_after_an_announced_write(void** state)
{
    (void)state;
    float *x, *y;
    alloc_pair(&x, &y);
    fill_and_send(0, x, y, 1, 0);
    assert_int_equal(clmctl(y, CL_MCTL_MARK_CLEAN), 0); /* the host's y is the device's */
    struct clforeign_use uses[] = {{x, CL_MEM_RO, 0}, {y, CL_MEM_WO, 0}};
    CLFOREIGN* f = clforeign_begin(g_cp, 0, NULL, uses, 2, 0);
    assert_non_null(f);
    clReleaseEvent(plain_axpy(0, clforeign_queue(f), 2.0f, x, y, 0, NULL));
    assert_int_equal(clforeign_end(f, 0, NULL), 0);
    assert_non_null(clmsync(g_cp, 0, y, CL_MEM_HOST | CL_MEM_NOFORCE)); /* must not be skipped */
    expect_axpy(y, 1, 1);
    free_pair(x, y);
}

static void test_bad_arguments_fail_with_a_message_and_change_nothing(void** state)
{
    (void)state;
    float* x = clmalloc(g_cp, 4096, 0);
    float* ro = clmalloc(g_cp, 4096, CL_MEM_RO);
    assert_non_null(x);
    assert_non_null(ro);
    float local[4];
    struct clforeign_use good = {x, CL_MEM_RW, 0};
    assert_null(clforeign_begin(NULL, 0, NULL, &good, 1, 0));
    assert_null(clforeign_begin(g_cp, clgetndev(g_cp), NULL, &good, 1, 0));
    assert_contains(clerror(), "clforeign_begin");
    assert_null(clforeign_begin(g_cp, 0, NULL, NULL, 1, 0));
    assert_contains(clerror(), "clforeign_begin: uses is NULL, with nuses 1");
    assert_null(clforeign_begin(g_cp, 0, NULL, &good, 1, 0x80));
    assert_contains(clerror(), "clforeign_begin: unknown flags 0x80");
    struct clforeign_use foreign[] = {{x, CL_MEM_RW, 0}, {local, CL_MEM_RO, 0}};
    assert_null(clforeign_begin(g_cp, 0, NULL, foreign, 2, 0));
    const char* e = clerror();
    assert_contains(e, "clforeign_begin: uses[1].ptr: 0x");
    assert_contains(e, "is not memory returned by clmalloc");
    struct clforeign_use mode[] = {{x, CL_MEM_RO | CL_MEM_WO, 0}};
    assert_null(clforeign_begin(g_cp, 0, NULL, mode, 1, 0));
    assert_contains(clerror(), "clforeign_begin: uses[0].access is 0x600: give one of CL_MEM_RO, CL_MEM_WO and");
    struct clforeign_use past[] = {{x, CL_MEM_RO, 4097}, {x + 1000, CL_MEM_RO, 100}};
    assert_null(clforeign_begin(g_cp, 0, NULL, past, 1, 0));
    assert_contains(clerror(), "clforeign_begin: uses[0].size: 4097 bytes from offset 0 pass the end of the "
                               "4096-byte allocation at 0x");
    assert_null(clforeign_begin(g_cp, 0, NULL, past + 1, 1, 0));
    assert_contains(clerror(), "uses[0].size: 100 bytes from offset 4000 pass the end of the 4096-byte allocation");
    struct clforeign_use readonly[] = {{ro, CL_MEM_WO, 0}};
    assert_null(clforeign_begin(g_cp, 0, NULL, readonly, 1, 0));
    e = clerror();
    assert_contains(e, "uses[0]: the allocation at 0x");
    assert_contains(e, "was made CL_MEM_RO");
    /* A queue of another OpenCL context. */
    cl_int err;
    cl_device_id dev = stdcl_device(g_cp, 0);
    cl_context other = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_command_queue oq = clCreateCommandQueue(other, dev, 0, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_null(clforeign_begin(g_cp, 0, oq, &good, 1, 0));
    assert_contains(clerror(), "clforeign_begin: the queue belongs to another OpenCL context");
    /* Nothing was left open by the refusals: x frees later. */
    CLFOREIGN* f = clforeign_begin(g_cp, 0, NULL, &good, 1, 0);
    assert_non_null(f);
    assert_int_equal(clforeign_end(NULL, 0, NULL), STDCL_EINVAL);
    assert_contains(clerror(), "clforeign_end: the ticket is NULL");
    assert_int_equal(clforeign_end(f, 1, NULL), STDCL_EINVAL);
    assert_contains(clerror(), "clforeign_end: events is NULL, with nevents 1");
    cl_event alien = clCreateUserEvent(other, &err);
    assert_int_equal(err, CL_SUCCESS);
    assert_int_equal(clforeign_end(f, 1, &alien), STDCL_EINVAL);
    assert_contains(clerror(), "clforeign_end: events[0] belongs to another OpenCL context");
    assert_int_equal(clfree(x), STDCL_ESTATE); /* the ticket is still open */
    assert_int_equal(clforeign_end(f, 0, NULL), 0);
    assert_null(clforeign_queue(NULL));
    assert_int_equal(clforeign_waitlist(NULL, NULL), 0);
    clSetUserEventStatus(alien, CL_COMPLETE);
    clReleaseEvent(alien);
    clReleaseCommandQueue(oq);
    clReleaseContext(other);
    assert_int_equal(clfree(x), 0);
    assert_int_equal(clfree(ro), 0);
    /* A freed allocation. */
    struct clforeign_use freed = {x, CL_MEM_RO, 0};
    assert_null(clforeign_begin(g_cp, 0, NULL, &freed, 1, 0));
    assert_contains(clerror(), "uses[0].ptr");
}

/* Those that take no stdcl_queue first: the transfer queues are still apart. */
static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_announced_commands_on_a_queue_of_their_own_keep_their_order),
    cmocka_unit_test(test_clfree_waits_for_an_announced_command),
    cmocka_unit_test(test_noforce_transfers_after_an_announced_write),
    cmocka_unit_test(test_bad_arguments_fail_with_a_message_and_change_nothing),
    cmocka_unit_test(test_a_kernel_on_stdcl_queue_runs_after_nowait_uploads),
    cmocka_unit_test(test_transfers_after_a_kernel_on_stdcl_queue_see_its_results),
    cmocka_unit_test(test_announced_commands_on_stdcl_queue),
};

int main(int argc, char** argv) { return tu_run_tests(argc, argv, "foreign", tests, setup, teardown); }
