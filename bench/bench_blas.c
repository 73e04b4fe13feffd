/* SPDX-License-Identifier: MIT */
/* bench_blas.c: CLBlast's SGEMM on clmalloc memory, announced to libstdcl
 * (clforeign_begin/clforeign_end), beside the same SGEMM on plain cl_mem
 * buffers and a queue of the program's own, on one device.
 *
 *   build/bench/bench_blas [-c cpu|gpu|dev] [-d devnum] [-r reps] [n ...]
 *
 * For each n (default 1024 4096 8192 on a GPU, 256 512 on a CPU): C = A B,
 * n x n, row-major.  Rows, each the median of reps timed runs (default 7)
 * after two warm-ups, the two kinds of run alternating, in TFLOP/s (2 n^3 /
 * time; time from the enqueue to the end of the command):
 *   plain cl_mem     clCreateBuffer buffers, CLBlastSgemm on a raw queue
 *   clmalloc         clmalloc memory (stdcl_mem), CLBlastSgemm on the
 *                    device's kernel queue between clforeign_begin and
 *                    clforeign_end
 *   ratio            clmalloc / plain
 * Both results are checked on 64 sampled entries against a double-precision
 * host dot product.  Exit status: 0, or 1 when a call failed or a result is
 * wrong. */
#define _GNU_SOURCE
#include <stdcl.h>

#include <clblast_c.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_stats.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* 64 sampled entries of C against A B in double precision. */
static int check(const float* a, const float* b, const float* c, size_t n, const char* what)
{
    for (int s = 0; s < 64; s++) {
        size_t i = ((size_t)s * 2654435761u) % n, j = ((size_t)s * 40503u + 7) % n;
        double want = 0, mag = 0;
        for (size_t k = 0; k < n; k++) {
            want += (double)a[i * n + k] * (double)b[k * n + j];
            mag += fabs((double)a[i * n + k] * (double)b[k * n + j]);
        }
        if (fabs((double)c[i * n + j] - want) > 1e-4 * mag + 1e-6) {
            fprintf(stderr, "bench_blas: %s: C[%zu][%zu] = %g, expected %g\n", what, i, j, (double)c[i * n + j],
                    want);
            return 1;
        }
    }
    return 0;
}

static int sgemm(cl_command_queue q, cl_mem a, cl_mem b, cl_mem c, size_t n, cl_event* ev)
{
    CLBlastStatusCode st = CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, n, n, n, 1.0f,
                                        a, 0, n, b, 0, n, 0.0f, c, 0, n, &q, ev);
    if (st != CLBlastSuccess) fprintf(stderr, "bench_blas: CLBlastSgemm: status %d\n", (int)st);
    return st == CLBlastSuccess ? 0 : 1;
}

/* One run on plain buffers: seconds, or -1. */
static double run_plain(cl_command_queue q, cl_mem a, cl_mem b, cl_mem c, size_t n)
{
    cl_event ev = NULL;
    double t0 = now();
    if (sgemm(q, a, b, c, n, &ev)) return -1;
    cl_int err = clWaitForEvents(1, &ev);
    double t = now() - t0;
    clReleaseEvent(ev);
    return err == CL_SUCCESS ? t : -1;
}

/* One run on clmalloc memory, announced: seconds, or -1. */
static double run_stdcl(CLCONTEXT* cp, unsigned d, float* a, float* b, float* c, size_t n)
{
    struct clforeign_use uses[] = {{a, CL_MEM_RO, 0}, {b, CL_MEM_RO, 0}, {c, CL_MEM_WO, 0}};
    double t0 = now();
    CLFOREIGN* f = clforeign_begin(cp, d, NULL, uses, 3, 0);
    if (!f) {
        fprintf(stderr, "bench_blas: clforeign_begin: %s\n", clerror());
        return -1;
    }
    cl_event ev = NULL;
    int bad = sgemm(clforeign_queue(f), stdcl_mem(cp, d, a), stdcl_mem(cp, d, b), stdcl_mem(cp, d, c), n, &ev);
    if (clforeign_end(f, bad ? 0 : 1, bad ? NULL : &ev) != 0) {
        fprintf(stderr, "bench_blas: clforeign_end: %s\n", clerror());
        bad = 1;
    }
    cl_int err = bad ? CL_INVALID_EVENT : clWaitForEvents(1, &ev);
    double t = now() - t0;
    if (ev) clReleaseEvent(ev);
    return err == CL_SUCCESS ? t : -1;
}

static int bench(CLCONTEXT* cp, unsigned d, size_t n, int reps)
{
    size_t bytes = n * n * sizeof(float);
    float* a = clmalloc(cp, bytes, 0);
    float* b = clmalloc(cp, bytes, 0);
    float* c = clmalloc(cp, bytes, 0);
    float* host_c = malloc(bytes);
    cl_int err;
    cl_context ctx = stdcl_clcontext(cp);
    cl_device_id dev = stdcl_device(cp, d);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    cl_mem pa = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    cl_mem pb = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    cl_mem pc = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    if (!a || !b || !c || !host_c || !q || !pa || !pb || !pc) {
        fprintf(stderr, "bench_blas: n = %zu: out of memory (%s)\n", n, clerror() ? clerror() : "OpenCL");
        return 1;
    }
    for (size_t i = 0; i < n * n; i++) {
        a[i] = (float)((i * 7) % 13) * 0.125f - 0.75f;
        b[i] = (float)((i * 11) % 17) * 0.0625f - 0.5f;
    }
    clEnqueueWriteBuffer(q, pa, CL_TRUE, 0, bytes, a, 0, NULL, NULL);
    clEnqueueWriteBuffer(q, pb, CL_TRUE, 0, bytes, b, 0, NULL, NULL);
    /* NOWAIT uploads: the first announced SGEMM waits for them. */
    clmsync(cp, d, a, CL_MEM_DEVICE | CL_EVENT_NOWAIT);
    clmsync(cp, d, b, CL_MEM_DEVICE | CL_EVENT_NOWAIT);
    double* tp = malloc((size_t)reps * sizeof(double));
    double* ts = malloc((size_t)reps * sizeof(double));
    int bad = 0;
    for (int r = -2; r < reps && !bad; r++) {
        double t1 = run_plain(q, pa, pb, pc, n), t2 = run_stdcl(cp, d, a, b, c, n);
        if (t1 < 0 || t2 < 0) bad = 1;
        if (r >= 0) tp[r] = t1, ts[r] = t2;
    }
    if (!bad) {
        clEnqueueReadBuffer(q, pc, CL_TRUE, 0, bytes, host_c, 0, NULL, NULL);
        bad |= check(a, b, host_c, n, "plain cl_mem");
        clmsync(cp, d, c, CL_MEM_HOST);
        bad |= check(a, b, c, n, "clmalloc");
    }
    if (!bad) {
        double flop = 2.0 * (double)n * (double)n * (double)n;
        double plain = flop / bench_median(tp, reps) * 1e-12, std = flop / bench_median(ts, reps) * 1e-12;
        printf("n = %5zu  plain cl_mem %7.2f TFLOP/s  clmalloc %7.2f TFLOP/s  ratio %.3f\n", n, plain, std,
               std / plain);
    }
    free(tp);
    free(ts);
    clReleaseMemObject(pa);
    clReleaseMemObject(pb);
    clReleaseMemObject(pc);
    clReleaseCommandQueue(q);
    clfree(a);
    clfree(b);
    clfree(c);
    free(host_c);
    return bad;
}

int main(int argc, char** argv)
{
    CLCONTEXT* cp = stdgpu ? stdgpu : stddev;
    unsigned d = 0;
    int reps = 7, nsizes = 0;
    size_t sizes[16];
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-c") && i + 1 < argc) {
            i++;
            cp = !strcmp(argv[i], "cpu") ? stdcpu : !strcmp(argv[i], "gpu") ? stdgpu : stddev;
        } else if (!strcmp(argv[i], "-d") && i + 1 < argc) {
            d = (unsigned)atoi(argv[++i]);
        } else if (!strcmp(argv[i], "-r") && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (argv[i][0] != '-' && nsizes < 16) {
            sizes[nsizes++] = (size_t)strtoul(argv[i], NULL, 10);
        } else {
            fprintf(stderr, "usage: %s [-c cpu|gpu|dev] [-d devnum] [-r reps] [n ...]\n", argv[0]);
            return 2;
        }
    }
    if (!cp || d >= clgetndev(cp) || reps < 1) {
        fprintf(stderr, "bench_blas: no such context or device\n");
        return 1;
    }
    cl_device_type type = 0;
    clGetDeviceInfo(stdcl_device(cp, d), CL_DEVICE_TYPE, sizeof type, &type, NULL);
    if (!nsizes) {
        size_t gpu[] = {1024, 4096, 8192}, cpu[] = {256, 512};
        const size_t* s = (type & CL_DEVICE_TYPE_GPU) ? gpu : cpu;
        nsizes = (type & CL_DEVICE_TYPE_GPU) ? 3 : 2;
        memcpy(sizes, s, (size_t)nsizes * sizeof *s);
    }
    char name[256] = "";
    clGetDeviceInfo(stdcl_device(cp, d), CL_DEVICE_NAME, sizeof name, name, NULL);
    printf("bench_blas: CLBlast SGEMM, device %u (%s), median of %d\n", d, name, reps);
    int bad = 0;
    for (int i = 0; i < nsizes; i++) bad |= bench(cp, d, sizes[i], reps);
    return bad;
}
