/* SPDX-License-Identifier: MIT */
/* helper_synccheck.c: seeded sync bugs for test_synccheck.c, run with
 * STDCL_CHECK=sync... (read when the library loads), on stdcpu (two devices), or
 * on stdgpu with STDCL_TEST_CONTEXT=gpu (a scenario that needs two devices
 * prints "skip: needs 2 devices" where there is one).  argv[1] names the
 * scenario; the program prints "launch: ok" or "launch: failed <code>
 * <message>" per launch and "result: <value>", and exits 0.
 *   forgot_upload   the host fills the const input y, launches without
 *                   clmsync of y to the device
 *   stale_upload    clmsync to the device, then the host changes x, launches
 *   correct         upload, launch, bring back, change, upload, launch
 *   slices          one allocation split over two devices: each device gets
 *                   and returns its half with clmsyncn (NOWAIT), twice
 *   const_input     a const input read twice, an output written between
 *   loop            stale_upload, launched three times (reported once)
 *   nowait          forgot_upload with CL_EVENT_NOWAIT launches
 *   fill            a new allocation's first word, and a kernel's result
 *                   from an input never sent (STDCL_CHECK=fill: NaN)
 *   forgot_download the host reads x[10] after the launch without clmsync
 *                   of x back, then syncs it back ("sync: ok" or "sync:
 *                   failed <message>")
 *   forgot_download_nowait  the same with a CL_EVENT_NOWAIT launch, waited
 *   unwritten_read  the host reads an input the kernel may write but did not
 *                   (not const), never brought back
 *   page_slices     a 32 KiB allocation split over two devices on page
 *                   boundaries, each half brought back; the host reads all
 *   page_slices_forgot  the same, device 1's half never brought back
 *   lost_update     bring x back, change x[5] on the host, bring x back again
 *                   (the change is overwritten unread)
 *   nowait_upload_write  the host writes y[3] while a NOWAIT clmsync of y to
 *                   the device is pending (no wait between)
 *   nowait_input_write   the host writes the const input y[3] while a NOWAIT
 *                   launch that reads it is pending
 *   nowait_download_read the host reads x[10] while a NOWAIT clmsync of x back
 *                   is pending
 *   nowait_correct  the three, each after a stdcl_wait
 *   segv            forgot_download, then a real fault (NULL + 16)
 *   segv_own        the same with the program's own SIGSEGV handler, which
 *                   prints "own handler" and exits 7
 *   split_ok, split_skip<d>_read<h>, split_overlap  one output split over
 *                   two devices by index space (see the code)
 *   splitnw_ok, splitnw_skip<d>_read<h>  the same with 2^20 floats and
 *                   NOWAIT transfers and launches, one wait (the guide's form)
 *   relay_ok, relay_race  device 0 computes x and brings it back NOWAIT;
 *                   device 1 gets x, computes and brings it back (relay_ok
 *                   waits for device 0's transfer first; relay_race does not)
 *   relay_overwrite device 0 gets x NOWAIT; device 1's result comes back
 *                   into x before that upload was waited for
 *   sort_forgot_upload, sort_forgot_download  clsort of keys never sent, or
 *                   whose sorted copy the host reads without bringing it back
 *   sort_correct    keys sent, sorted, brought back
 *   partial_write, partial_write_whole  the host changes one result after
 *                   the kernel and sends 4 bytes, or the whole
 *   forgot_upload_nc  forgot_upload with a kernel that declares y without
 *                   const (it reads it; it could write it), launched twice
 *   output_only_nc  a kernel (nothing const) that only writes its output x,
 *                   which the host wrote and never sent: correct
 *   foreign_correct the axpy as a plain OpenCL kernel on a queue of the
 *                   program's own, announced (clforeign_begin: x read and
 *                   written, y read), after both uploads; x brought back
 *   foreign_forgot_download  the same, the host reads x[10] before bringing
 *                   x back ("read: ...")
 *   foreign_forgot_upload    the same without the upload of y ("begin: ok",
 *                   or "begin: <message>" when the check fails the call)
 *   foreign_unannounced      the plain kernel on stdcl_queue's queue, not
 *                   announced (right, and unchecked); x brought back twice
 *   queue_ok, queue_clobber, queue_read  a plain kernel on stdcl_queue's
 *                   queue writes y, not announced; axpy reads it (see
 *                   queue_written)
 *   mcopy_ok, mcopy_stale  clmcopy of a 64-float allocation s into the first
 *                   64 floats of x on device 0, those brought back with
 *                   clmsyncn and all of x read ("sum: ..."); mcopy_stale
 *                   changes s[3] on the host after its upload */
#include <stdcl.h>

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

/* The context under test: stdcpu, or stdgpu with STDCL_TEST_CONTEXT=gpu. */
static CLCONTEXT* g_cp;

static const char* src =
    "__kernel void axpy(__global float* x, __global const float* y, int n)\n"
    "{ int i = get_global_id(0); if (i < n) x[i] = 2.0f * x[i] + y[i]; }\n"
    "__kernel void axpy_nc(__global float* x, __global float* y, int n)\n"
    "{ int i = get_global_id(0); if (i < n) x[i] = 2.0f * x[i] + y[i]; }\n"
    "__kernel void scale_nc(__global float* out, __global float* in, int n)\n"
    "{ int i = get_global_id(0); if (i < n) out[i] = 3.0f * in[i]; }\n";

static void own_handler(int sig)
{
    (void)sig;
    static const char msg[] = "own handler\n";
    if (write(1, msg, sizeof msg - 1) < 0) _exit(8);
    _exit(7);
}

static void sync_back(float* p, unsigned d)
{
    if (clmsync(g_cp, d, p, CL_MEM_HOST | CL_EVENT_WAIT))
        printf("sync: ok\n");
    else
        printf("sync: failed %s\n", clerror());
}

enum { N = 1024 };

/* The foreign_* scenarios: axpy as a plain OpenCL kernel on a queue of the
 * program's own, announced with clforeign_begin and clforeign_end. */
static void foreign(const char* what, float* x, float* y)
{
    int announced = strcmp(what, "foreign_unannounced") != 0;
    clmsync(g_cp, 0, x, CL_MEM_DEVICE);
    if (strcmp(what, "foreign_forgot_upload")) clmsync(g_cp, 0, y, CL_MEM_DEVICE);
    cl_int err;
    cl_context ctx = stdcl_clcontext(g_cp);
    cl_device_id dev = stdcl_device(g_cp, 0);
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    clBuildProgram(p, 1, &dev, "", NULL, NULL);
    cl_kernel k = clCreateKernel(p, "axpy", &err);
    cl_command_queue q = announced ? clCreateCommandQueue(ctx, dev, 0, &err) : stdcl_queue(g_cp, 0);
    struct clforeign_use uses[] = {{x, CL_MEM_RW, 0}, {y, CL_MEM_RO, 0}};
    CLFOREIGN* f = announced ? clforeign_begin(g_cp, 0, q, uses, 2, 0) : NULL;
    if (announced) printf("begin: %s\n", f ? "ok" : clerror());
    if (f || !announced) {
        cl_mem xm = stdcl_mem(g_cp, 0, x), ym = stdcl_mem(g_cp, 0, y);
        int n = N;
        size_t gs = N;
        clSetKernelArg(k, 0, sizeof xm, &xm);
        clSetKernelArg(k, 1, sizeof ym, &ym);
        clSetKernelArg(k, 2, sizeof n, &n);
        cl_event ev = NULL;
        err = clEnqueueNDRangeKernel(q, k, 1, NULL, &gs, NULL, 0, NULL, &ev);
        if (announced) printf("end: %d\n", err == CL_SUCCESS ? clforeign_end(f, 1, &ev) : (int)err);
        if (ev) clReleaseEvent(ev);
    }
    if (!strcmp(what, "foreign_forgot_download")) printf("read: %g\n", (double)x[10]);
    sync_back(x, 0);
    if (!announced) sync_back(x, 0);
    printf("result: %g\n", (double)x[10]);
    clReleaseKernel(k);
    clReleaseProgram(p);
    if (announced) clReleaseCommandQueue(q);
}

/* The queue_* scenarios: a plain OpenCL kernel on stdcl_queue's queue, not
 * announced, writes y through stdcl_mem's object (y[i] = 3 * in[i]); then the
 * library's axpy reads it on device 0 (x = 2x + y) and x comes back.
 * queue_ok: right (nothing to announce); queue_clobber: the host's y (never
 * written since) is sent over the kernel's y before axpy reads it;
 * queue_read: after axpy the host reads y[1] without bringing it back. */
static void queue_written(const char* what, cl_kernel axpy, float* x, float* y, float* in)
{
    for (int i = 0; i < N; i++) x[i] = 1.0f, y[i] = -1.0f, in[i] = (float)i;
    clmsync(g_cp, 0, x, CL_MEM_DEVICE);
    clmsync(g_cp, 0, in, CL_MEM_DEVICE);
    cl_int err;
    cl_context ctx = stdcl_clcontext(g_cp);
    cl_device_id dev = stdcl_device(g_cp, 0);
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    clBuildProgram(p, 1, &dev, "", NULL, NULL);
    cl_kernel k = clCreateKernel(p, "scale_nc", &err);
    cl_command_queue q = stdcl_queue(g_cp, 0);
    cl_mem ym = stdcl_mem(g_cp, 0, y), im = stdcl_mem(g_cp, 0, in);
    int n = N;
    size_t gs = N;
    clSetKernelArg(k, 0, sizeof ym, &ym);
    clSetKernelArg(k, 1, sizeof im, &im);
    clSetKernelArg(k, 2, sizeof n, &n);
    printf("enqueue: %d\n", (int)clEnqueueNDRangeKernel(q, k, 1, NULL, &gs, NULL, 0, NULL, NULL));
    if (!strcmp(what, "queue_clobber")) clmsync(g_cp, 0, y, CL_MEM_DEVICE);
    clndrange_t ndr = clndrange_init1d(0, N, 64);
    printf("launch: %s\n", clforka(g_cp, 0, axpy, &ndr, CL_EVENT_WAIT, x, y, N) ? "ok" : clerror());
    if (!strcmp(what, "queue_read")) printf("read: %g\n", (double)y[1]);
    sync_back(x, 0);
    int wrong = 0;
    for (int i = 0; i < N; i++) wrong += x[i] != 2.0f + 3.0f * (float)i;
    printf("wrong: %d\n", wrong);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

static void launch(cl_kernel k, unsigned d, float* x, float* y, int n, int flags)
{
    clndrange_t ndr = clndrange_init1d(0, (size_t)n, 64);
    if (clforka(g_cp, d, k, &ndr, flags, x, y, n))
        printf("launch: ok\n");
    else
        printf("launch: failed %s\n", clerror());
    if (flags & CL_EVENT_NOWAIT) stdcl_wait(g_cp, d, CL_ALL_EVENT);
}

int main(int argc, char** argv)
{
    const char* what = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IONBF, 0);
    const char* which = getenv("STDCL_TEST_CONTEXT");
    g_cp = which && !strcmp(which, "gpu") ? stdgpu : stdcpu;
    if (!g_cp) {
        fprintf(stderr, "helper_synccheck: the context under test is NULL (STDCL_TEST_CONTEXT=%s)\n",
                which ? which : "");
        return 3;
    }
    if (clgetndev(g_cp) < 2 && (strstr(what, "slices") || !strncmp(what, "split", 5) || !strncmp(what, "relay", 5))) {
        printf("skip: needs 2 devices\n");
        return 0;
    }
    void* h = clsopen(g_cp, src, CLLD_NOW);
    cl_kernel k = clsym(g_cp, h, "axpy", CLLD_NOW);
    float* x = (float*)clmalloc(g_cp, N * sizeof(float), 0);
    float* y = (float*)clmalloc(g_cp, N * sizeof(float), 0);
    if (!k || !x || !y) {
        fprintf(stderr, "helper_synccheck: %s\n", clerror());
        return 3;
    }
    for (int i = 0; i < N; i++) x[i] = (float)i, y[i] = 1.0f;
    int w = CL_MEM_DEVICE | CL_EVENT_WAIT, back = CL_MEM_HOST | CL_EVENT_WAIT;
    if (!strcmp(what, "forgot_upload") || !strcmp(what, "nowait")) {
        clmsync(g_cp, 0, x, w);
        launch(k, 0, x, y, N, !strcmp(what, "nowait") ? CL_EVENT_NOWAIT : CL_EVENT_WAIT);
        clmsync(g_cp, 0, x, back);
        printf("result: %g\n", (double)x[10]);
        return 0;
    }
    if (!strcmp(what, "forgot_upload_nc") || !strcmp(what, "output_only_nc")) {
        /* Kernels that declare nothing const, as most do. */
        int nc = !strcmp(what, "forgot_upload_nc");
        cl_kernel knc = clsym(g_cp, h, nc ? "axpy_nc" : "scale_nc", CLLD_NOW);
        clmsync(g_cp, 0, nc ? x : y, w); /* forgot_upload_nc: y never sent; output_only_nc: x (the output) */
        clndrange_t ndr = clndrange_init1d(0, N, 64);
        printf("launch: %s\n", clforka(g_cp, 0, knc, &ndr, CL_EVENT_NOWAIT, x, y, N) ? "ok" : clerror());
        printf("launch: %s\n", clforka(g_cp, 0, knc, &ndr, CL_EVENT_WAIT, x, y, N) ? "ok" : clerror());
        clmsync(g_cp, 0, x, back);
        printf("result: %g\n", (double)x[10]);
        return 0;
    }
    if (!strncmp(what, "mcopy_", 6)) {
        float* s = (float*)clmalloc(g_cp, 64 * sizeof(float), 0);
        for (int i = 0; i < 64; i++) s[i] = 1000.0f + (float)i;
        clmsync(g_cp, 0, s, w);
        if (!strcmp(what, "mcopy_stale")) s[3] = -5.0f;
        clmsync(g_cp, 0, x, w);
        printf("copy: %s\n", clmcopy(g_cp, 0, s, x, CL_EVENT_WAIT) ? "ok" : clerror());
        clmsyncn(g_cp, 0, x, 64 * sizeof(float), back);
        double sum = 0;
        for (int i = 0; i < N; i++) sum += x[i];
        printf("sum: %.0f\n", sum);
        clfree(s);
        return 0;
    }
    if (!strncmp(what, "foreign_", 8)) {
        foreign(what, x, y);
        return 0;
    }
    if (!strncmp(what, "queue_", 6)) {
        float* in = (float*)clmalloc(g_cp, N * sizeof(float), 0);
        queue_written(what, k, x, y, in);
        clfree(in);
        return 0;
    }
    if (!strcmp(what, "segv_own")) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = own_handler;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGSEGV, &sa, NULL);
    }
    clmsync(g_cp, 0, y, w);
    if (0) {
    } else if (!strncmp(what, "forgot_download", 15) || !strncmp(what, "segv", 4)) {
        clmsync(g_cp, 0, x, w);
        launch(k, 0, x, y, N, !strcmp(what, "forgot_download_nowait") ? CL_EVENT_NOWAIT : CL_EVENT_WAIT);
        printf("read: %g\n", (double)x[10]); /* never brought back */
        sync_back(x, 0);
        if (!strncmp(what, "segv", 4)) {
            volatile uintptr_t bad = 16; /* opaque to the compiler */
            *(volatile int*)bad = 1;
            printf("not reached\n");
        }
    } else if (!strncmp(what, "nowait_", 7)) {
        int correct = !strcmp(what, "nowait_correct");
        const int nw = CL_MEM_DEVICE | CL_EVENT_NOWAIT;
        clmsync(g_cp, 0, x, w);
        if (correct || !strcmp(what, "nowait_upload_write")) {
            clmsync(g_cp, 0, y, nw);
            if (correct) stdcl_wait(g_cp, 0, CL_ALL_EVENT);
            y[3] = 1.0f; /* the same value: the race, not the data, is the finding */
            stdcl_wait(g_cp, 0, CL_ALL_EVENT);
        }
        if (correct || !strcmp(what, "nowait_input_write")) {
            clndrange_t ndr = clndrange_init1d(0, N, 64);
            printf("launch: %s\n", clforka(g_cp, 0, k, &ndr, CL_EVENT_NOWAIT, x, y, N) ? "ok" : clerror());
            if (correct) stdcl_wait(g_cp, 0, CL_ALL_EVENT);
            y[3] = 1.0f;
            if (stdcl_wait(g_cp, 0, CL_ALL_EVENT) != 0) printf("wait: failed %s\n", clerror());
        }
        if (correct || !strcmp(what, "nowait_download_read")) {
            clndrange_t ndr = clndrange_init1d(0, N, 64);
            printf("launch: %s\n", clforka(g_cp, 0, k, &ndr, CL_EVENT_WAIT, x, y, N) ? "ok" : clerror());
            clmsync(g_cp, 0, x, CL_MEM_HOST | CL_EVENT_NOWAIT);
            if (correct) stdcl_wait(g_cp, 0, CL_ALL_EVENT);
            printf("read: %g\n", (double)x[10]);
            stdcl_wait(g_cp, 0, CL_ALL_EVENT);
        }
        sync_back(x, 0);
    } else if (!strcmp(what, "lost_update")) {
        clmsync(g_cp, 0, x, w);
        launch(k, 0, x, y, N, CL_EVENT_WAIT);
        clmsync(g_cp, 0, x, back);
        x[5] = -7.5f; /* the host's change, never sent */
        sync_back(x, 0);
        printf("x5: %g\n", (double)x[5]);
    } else if (!strcmp(what, "unwritten_read")) {
        cl_kernel knc = clsym(g_cp, h, "axpy_nc", CLLD_NOW);
        clmsync(g_cp, 0, x, w);
        clndrange_t ndr = clndrange_init1d(0, N, 64);
        printf("launch: %s\n", clforka(g_cp, 0, knc, &ndr, CL_EVENT_WAIT, x, y, N) ? "ok" : clerror());
        clmsync(g_cp, 0, x, back);
        printf("y: %g\n", (double)y[3]); /* y was not written: no finding */
    } else if (!strncmp(what, "page_slices", 11)) {
        enum { M = 8192 };
        float* z = (float*)clmalloc(g_cp, M * sizeof(float), 0);
        float* ones = (float*)clmalloc(g_cp, M * sizeof(float), 0);
        for (int i = 0; i < M; i++) z[i] = (float)i, ones[i] = 1.0f;
        for (unsigned d = 0; d < 2; d++) {
            clmsync(g_cp, d, ones, w);
            clmsyncn(g_cp, d, z + d * (M / 2), M / 2 * sizeof(float), w);
            clndrange_t ndr = clndrange_init1d(0, M / 2, 64);
            printf("launch: %s\n",
                   clforka(g_cp, d, k, &ndr, CL_EVENT_WAIT, z + d * (M / 2), ones, M / 2) ? "ok" : clerror());
        }
        for (unsigned d = 0; d < 2; d++)
            if (d == 0 || strcmp(what, "page_slices_forgot"))
                clmsyncn(g_cp, d, z + d * (M / 2), M / 2 * sizeof(float), back);
        double sum = 0;
        for (int i = 0; i < M; i++) sum += z[i];
        printf("sum: %g\n", sum);
        clfree(z);
        clfree(ones);
    } else if (!strncmp(what, "split_", 6) || !strncmp(what, "splitnw_", 8)) {
        /* SAXPY split over two devices by index space: each kernel gets the
         * whole z, works on its half (a global offset) and brings back its half
         * with clmsyncn.  split_ok: right; split_skip<d>_read<h>: device d's
         * clmsyncn left out, the host reads half h first; split_overlap: device
         * 1's kernel also writes z[0], and only device 0's half comes back.
         * splitnw_*: the same as the guide writes it, 2^20 floats: each device
         * gets its halves with clmsyncn(CL_EVENT_NOWAIT), one NOWAIT launch,
         * its half back NOWAIT, then one wait per device (each half spans
         * hundreds of pages, all read before the next library call). */
        int nw = !strncmp(what, "splitnw_", 8);
        size_t M = nw ? (size_t)1 << 20 : 8192;
        int skip = -1, first = 0, overlap = !strcmp(what, "split_overlap");
        if (sscanf(what + (nw ? 8 : 6), "skip%d_read%d", &skip, &first) < 1) skip = -1;
        float* z = (float*)clmalloc(g_cp, M * sizeof(float), 0);
        float* ones = (float*)clmalloc(g_cp, M * sizeof(float), 0);
        for (size_t i = 0; i < M; i++) z[i] = (float)(i % 8192), ones[i] = 1.0f;
        int flags = nw ? CL_EVENT_NOWAIT : CL_EVENT_WAIT;
        for (unsigned d = 0; d < 2 && !nw; d++) {
            clmsync(g_cp, d, ones, w);
            clmsync(g_cp, d, z, w);
        }
        for (unsigned d = 0; d < 2; d++) {
            size_t off = d * (M / 2), len = M / 2;
            if (nw) {
                clmsyncn(g_cp, d, ones + off, len * sizeof(float), CL_MEM_DEVICE | CL_EVENT_NOWAIT);
                clmsyncn(g_cp, d, z + off, len * sizeof(float), CL_MEM_DEVICE | CL_EVENT_NOWAIT);
            }
            if (overlap && d == 1) off = 0, len = M; /* device 1 writes all of z */
            clndrange_t ndr = clndrange_init1d(off, len, 64);
            printf("launch: %s\n", clforka(g_cp, d, k, &ndr, flags, z, ones, (int)M) ? "ok" : clerror());
            if (nw && (int)d != skip)
                clmsyncn(g_cp, d, z + d * (M / 2), M / 2 * sizeof(float), CL_MEM_HOST | CL_EVENT_NOWAIT);
        }
        for (unsigned d = 0; d < 2 && !nw; d++)
            if ((int)d != skip && !(overlap && d == 1))
                clmsyncn(g_cp, d, z + d * (M / 2), M / 2 * sizeof(float), back);
        if (nw) clwait(g_cp, CL_ALL_DEVICES, CL_ALL_EVENT);
        double sum = 0;
        for (int h = 0; h < 2; h++) {
            int part = (first + h) % 2;
            for (size_t i = part * (M / 2); i < (part + 1) * (M / 2); i++) sum += z[i];
        }
        printf("sum: %g\n", sum);
        clfree(z);
        clfree(ones);
    } else if (!strncmp(what, "relay", 5)) {
        /* A pipeline over two devices through the host: the two devices'
         * queues keep no order between them, so device 0's NOWAIT transfer
         * must be waited for before device 1's transfer of the same bytes. */
        const int nw = CL_EVENT_NOWAIT;
        clmsync(g_cp, 1, y, w);
        if (!strcmp(what, "relay_overwrite")) {
            clmsync(g_cp, 1, x, w);
            launch(k, 1, x, y, N, CL_EVENT_WAIT);
            clmsync(g_cp, 0, x, CL_MEM_DEVICE | nw); /* device 0 gets x, not waited for */
            clmsync(g_cp, 1, x, back);              /* device 1's result lands on x meanwhile */
            stdcl_wait(g_cp, 0, CL_ALL_EVENT);
        } else {
            clmsync(g_cp, 0, x, w);
            launch(k, 0, x, y, N, CL_EVENT_WAIT);
            clmsync(g_cp, 0, x, CL_MEM_HOST | nw);
            if (!strcmp(what, "relay_ok")) stdcl_wait(g_cp, 0, CL_MEM_EVENT);
            clmsync(g_cp, 1, x, CL_MEM_DEVICE | CL_EVENT_WAIT);
            launch(k, 1, x, y, N, CL_EVENT_WAIT);
            stdcl_wait(g_cp, 0, CL_ALL_EVENT);
            clmsync(g_cp, 1, x, back);
        }
    } else if (!strncmp(what, "sort_", 5)) {
        int* keys = (int*)clmalloc(g_cp, N * sizeof(int), 0);
        for (int i = 0; i < N; i++) keys[i] = N - i;
        if (strcmp(what, "sort_forgot_upload")) clmsync(g_cp, 0, keys, w);
        printf("sort: %s\n", clsort(g_cp, 0, keys, N, CL_REDUCE_INT, 0) == 0 ? "ok" : clerror());
        if (strcmp(what, "sort_forgot_download")) clmsync(g_cp, 0, keys, back);
        printf("first: %d\n", keys[0]);
        clmsync(g_cp, 0, keys, back);
        clfree(keys);
    } else if (!strncmp(what, "partial_write", 13)) {
        /* After the kernel, the host writes x[N-1] and sends just those 4 bytes
         * (partial_write: right) or the whole x (partial_write_whole: an upload
         * over results never brought back), then brings x back. */
        clmsync(g_cp, 0, x, w);
        launch(k, 0, x, y, N, CL_EVENT_WAIT);
        x[N - 1] = 5.0f;
        if (!strcmp(what, "partial_write"))
            clmsyncn(g_cp, 0, x + N - 1, sizeof(float), w);
        else
            clmsync(g_cp, 0, x, w);
        clmsync(g_cp, 0, x, back);
        printf("last: %g\n", (double)x[N - 1]);
    } else if (!strcmp(what, "stale_upload") || !strcmp(what, "loop")) {
        clmsync(g_cp, 0, x, w);
        x[7] = 100.0f;
        for (int r = 0; r < (!strcmp(what, "loop") ? 3 : 1); r++) launch(k, 0, x, y, N, CL_EVENT_WAIT);
        clmsync(g_cp, 0, x, back);
    } else if (!strcmp(what, "correct")) {
        clmsync(g_cp, 0, x, w);
        launch(k, 0, x, y, N, CL_EVENT_WAIT);
        clmsync(g_cp, 0, x, back);
        x[7] = 100.0f;
        clmsync(g_cp, 0, x, w);
        launch(k, 0, x, y, N, CL_EVENT_WAIT);
        clmsync(g_cp, 0, x, back);
    } else if (!strcmp(what, "slices")) {
        size_t half = N / 2 * sizeof(float);
        clmsync(g_cp, 1, y, w);
        for (int r = 0; r < 2; r++) {
            for (unsigned d = 0; d < 2; d++)
                clmsyncn(g_cp, d, x + d * (N / 2), half, CL_MEM_DEVICE | CL_EVENT_NOWAIT);
            for (unsigned d = 0; d < 2; d++) {
                clndrange_t ndr = clndrange_init1d(0, N / 2, 64);
                if (clforka(g_cp, d, k, &ndr, CL_EVENT_NOWAIT, x + d * (N / 2), y, N / 2))
                    printf("launch: ok\n");
                else
                    printf("launch: failed %s\n", clerror());
            }
            for (unsigned d = 0; d < 2; d++)
                clmsyncn(g_cp, d, x + d * (N / 2), half, CL_MEM_HOST | CL_EVENT_NOWAIT);
            stdcl_wait(g_cp, CL_ALL_DEVICES, CL_ALL_EVENT);
            for (int i = 0; i < N; i++) x[i] += 1.0f; /* the host's step between rounds */
        }
    } else if (!strcmp(what, "fill")) {
        /* STDCL_CHECK=fill: a new allocation's host memory holds the pattern,
         * and so does a device copy never given a value. */
        float* z = (float*)clmalloc(g_cp, N * sizeof(float), 0);
        unsigned bits;
        memcpy(&bits, z, sizeof bits);
        printf("host: 0x%08x\n", bits);
        clmsync(g_cp, 0, x, w);
        launch(k, 0, x, z, N, CL_EVENT_WAIT); /* z never sent */
        clmsync(g_cp, 0, x, back);
        printf("nan: %d\n", x[10] != x[10]);
        clfree(z);
    } else if (!strcmp(what, "const_input")) {
        clmsync(g_cp, 0, x, w);
        launch(k, 0, x, y, N, CL_EVENT_WAIT);
        launch(k, 0, x, y, N, CL_EVENT_WAIT);
        clmsync(g_cp, 0, x, back);
    } else {
        fprintf(stderr, "helper_synccheck: unknown scenario '%s'\n", what);
        return 2;
    }
    printf("result: %g\n", (double)x[10]);
    clfree(x);
    clfree(y);
    clclose(g_cp, h);
    return 0;
}
