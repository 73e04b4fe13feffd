/* SPDX-License-Identifier: MIT */
/* bench_overlap.c: does a CL_EVENT_NOWAIT clmsync run while a kernel runs on the
 * same device, i.e. do copies overlap kernels?
 *
 * On one device: a kernel that keeps the device busy for about as long as a
 * transfer of -m MiB (default 64) takes, calibrated first, and a clmsync of a
 * different allocation.  Timed (median of -r repetitions):
 *   kernel    clfork(CL_EVENT_WAIT) alone
 *   copy      clmsync(CL_MEM_DEVICE | CL_EVENT_WAIT) alone
 *   both      clfork(NOWAIT) + clmsync(NOWAIT) + clwait(CL_ALL_EVENT)
 *   raw both  clEnqueueNDRangeKernel + clEnqueueWriteBuffer (from the same pinned
 *             memory, to a buffer of its own) on the device's one in-order queue
 *             + clFinish: what a single queue gives
 * and "both / (kernel + copy)": about 0.5 when the copy hides behind the
 * kernel, 1.0 when they run one after the other.  Run it with STDCL_OVERLAP=0
 * beside it for the library's one-queue figure.  The copy is checked after the
 * last repetition.  A zero-copy device (PoCL) copies nothing: the figures say so.
 * With -q the program takes the device's kernel queue first (stdcl_queue), as
 * one that enqueues plain OpenCL commands there does: its transfers then go to
 * the kernel queue too, and "both" shows what that costs.
 *
 *   bench_overlap [-c gpu|cpu|dev] [-d devnum] [-m MiB] [-r reps] [-q]
 */
#include <stdcl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_info.h"
#include "bench_stats.h"

static void die(const char* what) { bench_die("bench_overlap", what); }

static const char* src = "__kernel void busy(__global float* a, int n)\n"
                         "{\n"
                         "    size_t i = get_global_id(0);\n"
                         "    float v = a[i];\n"
                         "    for (int k = 0; k < n; ++k) v = v * 0.999999f + 0.5f;\n"
                         "    a[i] = v;\n"
                         "}\n";

enum { ITEMS = 1 << 16, MAXREPS = 101 };

static CLCONTEXT* cp;
static unsigned dn;
static cl_kernel busy;
static float* kbuf;
static char* xbuf;
static size_t xbytes;
static clndrange_t ndr;

static void run_kernel(int n, int flags)
{
    if (clarg_set_global(cp, busy, 0, kbuf) != 0 || clarg_set(cp, busy, 1, n) != 0) die("clarg_set");
    if (!clfork(cp, dn, busy, &ndr, flags)) die("clfork");
}

static double time_kernel(int n)
{
    double t0 = bench_now_ms();
    run_kernel(n, CL_EVENT_WAIT);
    return bench_now_ms() - t0;
}

static double time_copy(void)
{
    double t0 = bench_now_ms();
    if (!clmsync(cp, dn, xbuf, CL_MEM_DEVICE | CL_EVENT_WAIT)) die("clmsync");
    return bench_now_ms() - t0;
}

static double time_both(int n)
{
    double t0 = bench_now_ms();
    run_kernel(n, CL_EVENT_NOWAIT);
    if (!clmsync(cp, dn, xbuf, CL_MEM_DEVICE | CL_EVENT_NOWAIT)) die("clmsync(NOWAIT)");
    if (!clwait(cp, dn, CL_ALL_EVENT)) die("clwait");
    return bench_now_ms() - t0;
}

int main(int argc, char** argv)
{
    const char* which = "gpu";
    long mib = 64;
    int reps = 21, c, take_queue = 0;
    while ((c = getopt(argc, argv, "c:d:m:r:qh")) != -1) {
        switch (c) {
        case 'c': which = optarg; break;
        case 'd': dn = (unsigned)strtoul(optarg, NULL, 10); break;
        case 'm': mib = strtol(optarg, NULL, 10); break;
        case 'r': reps = atoi(optarg); break;
        case 'q': take_queue = 1; break;
        default:
            fprintf(stderr, "usage: bench_overlap [-c gpu|cpu|dev] [-d devnum] [-m MiB] [-r reps] [-q]\n");
            return c == 'h' ? 0 : 2;
        }
    }
    if (mib < 1 || mib > 4096 || reps < 3 || reps > MAXREPS) {
        fprintf(stderr, "bench_overlap: -m 1..4096, -r 3..%d\n", MAXREPS);
        return 2;
    }
    cp = !strcmp(which, "cpu") ? stdcpu : !strcmp(which, "dev") ? stddev : stdgpu;
    if (!cp) {
        fprintf(stderr, "bench_overlap: no std%s context here\n", which);
        return 1;
    }
    if (dn >= clgetndev(cp)) {
        fprintf(stderr, "bench_overlap: std%s has %u device(s)\n", which, clgetndev(cp));
        return 1;
    }
    if (take_queue && !stdcl_queue(cp, dn)) die("stdcl_queue");
    if (take_queue) printf("the program holds the kernel queue (stdcl_queue): transfers go to it\n");
    void* h = clsopen(cp, src, CLLD_NOW);
    if (!h) die("clsopen");
    busy = clsym(cp, h, "busy", CLLD_NOW);
    if (!busy) die("clsym");
    xbytes = (size_t)mib << 20;
    kbuf = (float*)clmalloc(cp, ITEMS * sizeof(float), 0);
    xbuf = (char*)clmalloc(cp, xbytes, 0);
    if (!kbuf || !xbuf) die("clmalloc");
    for (int i = 0; i < ITEMS; ++i) kbuf[i] = 1.0f;
    for (size_t i = 0; i < xbytes; ++i) xbuf[i] = (char)(i * 7 + 1);
    if (!clmsync(cp, dn, kbuf, CL_MEM_DEVICE | CL_EVENT_WAIT)) die("clmsync");
    clndrange_t nd = clndrange_init1d(0, ITEMS, 0);
    ndr = nd;

    const char* ov = getenv("STDCL_OVERLAP");
    char dname[256] = "";
    clGetDeviceInfo(stdcl_device(cp, dn), CL_DEVICE_NAME, sizeof dname, dname, NULL);
    printf("bench_overlap: std%s device %u (%s), %ld MiB, %d repetitions, STDCL_OVERLAP=%s\n", which, dn, dname, mib,
           reps, ov ? ov : "(unset)");

    /* Calibrate: the kernel's time about the copy's. */
    double v[MAXREPS];
    for (int i = 0; i < 3; ++i) time_copy();
    for (int i = 0; i < 5; ++i) v[i] = time_copy();
    double copy_ms = bench_median(v, 5);
    int n = 1024;
    time_kernel(n);
    for (int guard = 0; guard < 24; ++guard) {
        double t = time_kernel(n);
        if (t >= copy_ms || n > (1 << 28)) break;
        n = t > 0.05 ? (int)(n * copy_ms / t * 1.05) + 1 : n * 4;
    }

    double kv[MAXREPS], cv[MAXREPS], bv[MAXREPS], rv[MAXREPS];
    cl_context ctx = stdcl_clcontext(cp);
    /* The raw side's queue is its own: taking the kernel queue (stdcl_queue)
     * would move libstdcl's transfers onto it, and nothing would overlap. */
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(ctx, stdcl_device(cp, dn), 0, &err);
    if (err != CL_SUCCESS) die("clCreateCommandQueue");
    cl_mem rawdst = clCreateBuffer(ctx, CL_MEM_READ_WRITE, xbytes, NULL, &err);
    if (err != CL_SUCCESS) die("clCreateBuffer");
    cl_mem rawk = clCreateBuffer(ctx, CL_MEM_READ_WRITE, ITEMS * sizeof(float), NULL, &err);
    if (err != CL_SUCCESS) die("clCreateBuffer");
    cl_program rp = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    cl_device_id dev = stdcl_device(cp, dn);
    if (err != CL_SUCCESS || clBuildProgram(rp, 1, &dev, "", NULL, NULL) != CL_SUCCESS) die("raw build");
    cl_kernel rk = clCreateKernel(rp, "busy", &err);
    if (err != CL_SUCCESS) die("clCreateKernel");
    clSetKernelArg(rk, 0, sizeof rawk, &rawk);
    clSetKernelArg(rk, 1, sizeof n, &n);
    size_t g = ITEMS;
    for (int r = 0; r < reps; ++r) {
        kv[r] = time_kernel(n);
        cv[r] = time_copy();
        bv[r] = time_both(n);
        double t0 = bench_now_ms();
        if (clEnqueueNDRangeKernel(q, rk, 1, NULL, &g, NULL, 0, NULL, NULL) != CL_SUCCESS ||
            clEnqueueWriteBuffer(q, rawdst, CL_FALSE, 0, xbytes, xbuf, 0, NULL, NULL) != CL_SUCCESS ||
            clFinish(q) != CL_SUCCESS)
            die("raw kernel + write");
        rv[r] = bench_now_ms() - t0;
    }
    double k = bench_median(kv, reps), cpy = bench_median(cv, reps);
    double both = bench_median(bv, reps), raw = bench_median(rv, reps);

    /* The copy arrived: read the device's copy back over a zeroed host copy. */
    char* check = (char*)malloc(xbytes);
    if (!check) die("malloc");
    memcpy(check, xbuf, xbytes);
    memset(xbuf, 0, xbytes);
    if (!clmsync(cp, dn, xbuf, CL_MEM_HOST | CL_EVENT_WAIT)) die("clmsync back");
    int same = memcmp(check, xbuf, xbytes) == 0;
    free(check);

    printf("kernel alone   %8.3f ms  (busy loop of %d per item, %d items)\n", k, n, ITEMS);
    printf("copy alone     %8.3f ms  (%.2f GB/s)\n", cpy, xbytes / (cpy * 1e6));
    printf("both, libstdcl %8.3f ms  both/(kernel+copy) %.2f  both/max %.2f\n", both, both / (k + cpy),
           both / (k > cpy ? k : cpy));
    printf("both, raw 1 q  %8.3f ms  both/(kernel+copy) %.2f  (one in-order queue)\n", raw, raw / (k + cpy));
    printf("copy checked:  %s\n", same ? "the device's copy equals the host's" : "MISMATCH");
    clReleaseKernel(rk);
    clReleaseProgram(rp);
    clReleaseMemObject(rawk);
    clReleaseMemObject(rawdst);
    clReleaseCommandQueue(q);
    clfree(xbuf);
    clfree(kbuf);
    clclose(cp, h);
    return same ? 0 : 1;
}
