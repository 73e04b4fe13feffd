/* SPDX-License-Identifier: MIT */
/* bench_stencil.c: a launch-bound program written the plain way with libstdcl,
 * beside its raw OpenCL original, kernel section against kernel section.
 *
 *   build/bench/bench_stencil [-c cpu|gpu|dev] [-d devnum] [-n N] [-s steps] [-r reps]
 *
 * The program: PolyBench's 2D Jacobi on an N x N grid of floats (default
 * 512, so each kernel is short), `steps` time steps (default 200) of two
 * kernels (the 5-point average into B, then B copied back into A's
 * interior).  Both sides run the same kernel source on the same device of
 * the same cl_context; the raw side uses a queue of its own, as a raw
 * program does.  Three ways of waiting, each a row:
 *   waited   every launch waited for: clforka(CL_EVENT_WAIT), against
 *            clEnqueueNDRangeKernel + clFinish;
 *   step     the two launches of a step NOWAIT, then one wait:
 *            clforka(CL_EVENT_NOWAIT) twice + clwait(CL_KERNEL_EVENT),
 *            against two enqueues + clFinish;
 *   stream   every launch NOWAIT, one wait at the end.
 * A time is the kernel section (first launch to the last wait returning),
 * after the inputs were sent; the sides alternate, raw first in even
 * repetitions, and a row gives the median of `reps` (default 7) and the
 * median of the per-repetition ratios libstdcl/raw with its range.  Each
 * side's grid is read back after its last repetition and compared with the
 * other's: the kernels are the same, so the results must be equal bit for
 * bit (exit status 1 otherwise, or when a call failed).
 */
#define _GNU_SOURCE
#include <stdcl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench_info.h"
#include "bench_stats.h"

static const char* src =
    "__kernel void jacobi_a(__global float* a, __global float* b, int n) {\n"
    "  int i = get_global_id(1) + 1, j = get_global_id(0) + 1;\n"
    "  if (i < n - 1 && j < n - 1)\n"
    "    b[i * n + j] = 0.2f * (a[i * n + j] + a[i * n + j - 1] + a[i * n + j + 1]\n"
    "                         + a[(i + 1) * n + j] + a[(i - 1) * n + j]);\n"
    "}\n"
    "__kernel void jacobi_b(__global float* a, __global float* b, int n) {\n"
    "  int i = get_global_id(1) + 1, j = get_global_id(0) + 1;\n"
    "  if (i < n - 1 && j < n - 1) a[i * n + j] = b[i * n + j];\n"
    "}\n";

enum { WAITED, STEP, STREAM, NMODES };
static const char* mode_name[NMODES] = {"waited", "step", "stream"};
static const char* mode_what[NMODES] = {"each launch waited for", "two NOWAIT launches, one wait a step",
                                        "every launch NOWAIT, one wait"};

static void die(const char* what, cl_int err)
{
    fprintf(stderr, "bench_stencil: %s failed (%d): %s\n", what, (int)err, clerror() ? clerror() : "");
    exit(1);
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static void init_grid(float* a, int n)
{
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) a[i * n + j] = ((float)i * (float)(j + 2) + 2.0f) / (float)n;
}

/* The raw OpenCL side. */
struct raw {
    cl_command_queue q;
    cl_kernel ka, kb;
    cl_mem a, b;
};

static double run_raw(struct raw* r, const float* init, size_t bytes, int n, int steps, int mode)
{
    cl_int err = clEnqueueWriteBuffer(r->q, r->a, CL_TRUE, 0, bytes, init, 0, NULL, NULL);
    err |= clEnqueueWriteBuffer(r->q, r->b, CL_TRUE, 0, bytes, init, 0, NULL, NULL);
    if (err != CL_SUCCESS) die("raw: clEnqueueWriteBuffer", err);
    size_t g[2] = {(size_t)(n - 2), (size_t)(n - 2)};
    double t0 = now_ms();
    for (int s = 0; s < steps; ++s) {
        err = clEnqueueNDRangeKernel(r->q, r->ka, 2, NULL, g, NULL, 0, NULL, NULL);
        if (mode == WAITED) err |= clFinish(r->q);
        err |= clEnqueueNDRangeKernel(r->q, r->kb, 2, NULL, g, NULL, 0, NULL, NULL);
        if (mode != STREAM) err |= clFinish(r->q);
        if (err != CL_SUCCESS) die("raw: a step", err);
    }
    if (mode == STREAM && (err = clFinish(r->q)) != CL_SUCCESS) die("raw: clFinish", err);
    return now_ms() - t0;
}

static double run_stdcl(CLCONTEXT* cp, unsigned dn, cl_kernel ka, cl_kernel kb, float* a, float* b, const float* init,
                        size_t bytes, int n, int steps, int mode)
{
    memcpy(a, init, bytes);
    memcpy(b, init, bytes);
    if (!clmsync(cp, dn, a, CL_MEM_DEVICE | CL_EVENT_WAIT) || !clmsync(cp, dn, b, CL_MEM_DEVICE | CL_EVENT_WAIT))
        die("clmsync", 0);
    clndrange_t ndr = clndrange_init2d(0, n - 2, 0, 0, n - 2, 0);
    int fa = mode == WAITED ? CL_EVENT_WAIT : CL_EVENT_NOWAIT;
    int fb = mode == STREAM ? CL_EVENT_NOWAIT : fa;
    double t0 = now_ms();
    for (int s = 0; s < steps; ++s) {
        if (!clforka(cp, dn, ka, &ndr, fa, a, b, n) || !clforka(cp, dn, kb, &ndr, fb, a, b, n)) die("clforka", 0);
        if (mode == STEP && !clwait(cp, dn, CL_KERNEL_EVENT)) die("clwait", 0);
    }
    if (mode == STREAM && !clwait(cp, dn, CL_KERNEL_EVENT)) die("clwait", 0);
    return now_ms() - t0;
}

int main(int argc, char** argv)
{
    const char* ctxname = "gpu";
    unsigned dn = 0;
    int n = 512, steps = 200, reps = 7;
    for (int i = 1; i < argc; ++i) {
        int more = i + 1 < argc;
        if (!strcmp(argv[i], "-c") && more)
            ctxname = argv[++i];
        else if (!strcmp(argv[i], "-d") && more)
            dn = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "-n") && more)
            n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-s") && more)
            steps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-r") && more)
            reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [-c cpu|gpu|dev] [-d devnum] [-n N] [-s steps] [-r reps]\n", argv[0]);
            return 2;
        }
    }
    if (n < 3 || n > 16384 || steps < 1 || reps < 1 || reps > 101) {
        fprintf(stderr, "bench_stencil: -n 3..16384, -s >= 1, -r 1..101\n");
        return 2;
    }
    CLCONTEXT* cp = !strcmp(ctxname, "cpu") ? stdcpu : !strcmp(ctxname, "dev") ? stddev : stdgpu;
    if (!cp || dn >= clgetndev(cp)) {
        fprintf(stderr, "bench_stencil: no std%s context or no device %u there (try -c cpu|gpu|dev)\n", ctxname, dn);
        return 1;
    }
    bench_print_machine("bench_stencil");
    bench_print_command(argc, argv);
    bench_print_context(ctxname, cp);
    printf("grid:     %d x %d floats, %d steps of 2 launches, median of %d\n", n, n, steps, reps);

    size_t bytes = (size_t)n * (size_t)n * sizeof(float);
    float* init = malloc(bytes);
    float* a = clmalloc(cp, bytes, 0);
    float* b = clmalloc(cp, bytes, 0);
    float* out_raw = malloc(bytes);
    if (!init || !a || !b || !out_raw) die("allocation", 0);
    init_grid(init, n);

    void* h = clsopen(cp, src, CLLD_NOW);
    cl_kernel ka = h ? clsym(cp, h, "jacobi_a", CLLD_NOW) : NULL;
    cl_kernel kb = h ? clsym(cp, h, "jacobi_b", CLLD_NOW) : NULL;
    if (!ka || !kb) die("clsopen/clsym", 0);

    struct raw r;
    cl_int err = CL_SUCCESS;
    cl_context ctx = stdcl_clcontext(cp);
    cl_device_id dev = stdcl_device(cp, dn);
    r.q = clCreateCommandQueue(ctx, dev, 0, &err);
    if (err != CL_SUCCESS) die("clCreateCommandQueue", err);
    size_t len = strlen(src);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, &len, &err);
    if (err != CL_SUCCESS || (err = clBuildProgram(prog, 1, &dev, "", NULL, NULL)) != CL_SUCCESS) die("raw build", err);
    r.ka = clCreateKernel(prog, "jacobi_a", &err);
    r.kb = clCreateKernel(prog, "jacobi_b", &err);
    r.a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    r.b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (err != CL_SUCCESS || !r.ka || !r.kb) die("raw kernels and buffers", err);
    err = clSetKernelArg(r.ka, 0, sizeof(cl_mem), &r.a) | clSetKernelArg(r.ka, 1, sizeof(cl_mem), &r.b) |
          clSetKernelArg(r.ka, 2, sizeof(int), &n) | clSetKernelArg(r.kb, 0, sizeof(cl_mem), &r.a) |
          clSetKernelArg(r.kb, 1, sizeof(cl_mem), &r.b) | clSetKernelArg(r.kb, 2, sizeof(int), &n);
    if (err != CL_SUCCESS) die("clSetKernelArg", err);

    int bad = 0;
    printf("%-8s %-38s %10s %10s %8s %s\n", "row", "", "raw ms", "stdcl ms", "ratio", "[min-max]");
    for (int m = 0; m < NMODES; ++m) {
        double traw[101], tstd[101], ratio[101];
        /* one warm-up each: first launches, the driver's own set-up */
        run_raw(&r, init, bytes, n, 2, m);
        run_stdcl(cp, dn, ka, kb, a, b, init, bytes, n, 2, m);
        for (int k = 0; k < reps; ++k) {
            if (k % 2 == 0) {
                traw[k] = run_raw(&r, init, bytes, n, steps, m);
                tstd[k] = run_stdcl(cp, dn, ka, kb, a, b, init, bytes, n, steps, m);
            } else {
                tstd[k] = run_stdcl(cp, dn, ka, kb, a, b, init, bytes, n, steps, m);
                traw[k] = run_raw(&r, init, bytes, n, steps, m);
            }
            ratio[k] = tstd[k] / traw[k];
        }
        /* Both grids after `steps` steps: equal bit for bit. */
        if ((err = clEnqueueReadBuffer(r.q, r.a, CL_TRUE, 0, bytes, out_raw, 0, NULL, NULL)) != CL_SUCCESS)
            die("clEnqueueReadBuffer", err);
        if (!clmsync(cp, dn, a, CL_MEM_HOST | CL_EVENT_WAIT)) die("clmsync to the host", 0);
        if (memcmp(out_raw, a, bytes) != 0) {
            printf("FAIL %s: libstdcl's grid differs from raw OpenCL's\n", mode_name[m]);
            bad = 1;
        }
        double lo = ratio[0], hi = ratio[0];
        for (int k = 1; k < reps; ++k) lo = ratio[k] < lo ? ratio[k] : lo, hi = ratio[k] > hi ? ratio[k] : hi;
        printf("%-8s %-38s %10.3f %10.3f %7.3fx [%.3f-%.3f]\n", mode_name[m], mode_what[m], bench_median(traw, reps),
               bench_median(tstd, reps), bench_median(ratio, reps), lo, hi);
    }
    clReleaseKernel(r.ka); /* the kernels first: their arguments name the buffers */
    clReleaseKernel(r.kb);
    clReleaseMemObject(r.a);
    clReleaseMemObject(r.b);
    clReleaseProgram(prog);
    clReleaseCommandQueue(r.q);
    clclose(cp, h);
    clfree(a);
    clfree(b);
    free(init);
    free(out_raw);
    return bad;
}
