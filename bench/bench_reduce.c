/* SPDX-License-Identifier: MIT */
/* bench_reduce.c: clreduce's bandwidth beside a plain single-threaded C loop,
 * the same kernel driven with raw OpenCL, and the device's copy bandwidth.
 *
 *   build/bench/bench_reduce [-c cpu|gpu|dev] [-n elements] [-r reps]
 *
 * Sums n floats (default 16M, 64 MiB).  Rows, each the median of reps timed
 * runs after one warm-up, in GB/s of array read (n * 4 bytes / time):
 *   clreduce dev 0        clreduce(cp, 0, ...) (layout by device type)
 *   clreduce all devices  clreduce(cp, CL_ALL_DEVICES, ...)
 *   raw OpenCL chunked    the chunked kernel, clEnqueueNDRangeKernel + read
 *   raw OpenCL strided    the strided kernel, likewise
 *   C loop                for (i) s += x[i], one thread, as compiled (-O3)
 *   copy bandwidth        clEnqueueCopyBuffer of the array on device 0
 *                         (bytes read + written / time): the device's memory
 *                         bandwidth as OpenCL sees it
 * Every row's sum is checked against a double-precision host sum.
 * Exit status: 0, or 1 when a call failed or a sum is wrong. */
#define _GNU_SOURCE
#include <stdcl.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_stats.h"

/* The kernels clreduce uses for a float sum (libstdcl/reduce.cpp), copied. */
static const char* k_src =
    "__kernel void chunked(__global const float* x, ulong off, ulong n, ulong chunk, __global float* part,\n"
    "                      __local float* scratch)\n"
    "{\n"
    "    x += off;\n"
    "    ulong gid = get_global_id(0);\n"
    "    ulong b = gid * chunk, e = min(b + chunk, n);\n"
    "    float8 v0 = (float8)(0.0f), v1 = (float8)(0.0f);\n"
    "    ulong i = b;\n"
    "    for (; i + 16 <= e; i += 16) { v0 += vload8(0, x + i); v1 += vload8(0, x + i + 8); }\n"
    "    v0 += v1;\n"
    "    float a = ((v0.s0 + v0.s1) + (v0.s2 + v0.s3)) + ((v0.s4 + v0.s5) + (v0.s6 + v0.s7));\n"
    "    for (; i < e; ++i) a += x[i];\n"
    "    part[gid] = a;\n"
    "}\n"
    "__kernel void strided(__global const float* x, ulong off, ulong n, ulong chunk, __global float* part,\n"
    "                      __local float* scratch)\n"
    "{\n"
    "    x += off;\n"
    "    ulong gs = get_global_size(0), i = get_global_id(0);\n"
    "    float a0 = 0, a1 = 0, a2 = 0, a3 = 0;\n"
    "    for (; i + 3 * gs < n; i += 4 * gs) { a0 += x[i]; a1 += x[i + gs]; a2 += x[i + 2 * gs]; a3 += x[i + 3 * gs]; }\n"
    "    for (; i < n; i += gs) a0 += x[i];\n"
    "    uint lid = get_local_id(0);\n"
    "    scratch[lid] = (a0 + a1) + (a2 + a3);\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {\n"
    "        if (lid < s) scratch[lid] += scratch[lid + s];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    if (lid == 0) part[get_group_id(0)] = scratch[0];\n"
    "}\n";

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int g_fail;

static void row(const char* name, double seconds, double bytes, double got, double want, double tol)
{
    int ok = fabs(got - want) <= tol;
    printf("%-24s %9.2f GB/s  %8.3f ms  sum %.6g%s\n", name, bytes / seconds * 1e-9, seconds * 1e3, got,
           ok ? "" : "  WRONG");
    if (!ok) g_fail = 1;
}

/* The raw OpenCL version: one kernel, one device, partial values read back. */
static double raw_run(cl_context ctx, cl_command_queue q, cl_kernel k, cl_mem x, size_t n, int strided, cl_uint units,
                      cl_mem part, float* host_part, float* sum)
{
    size_t local = 1, groups;
    cl_ulong off = 0, un = n, chunk = 0;
    (void)ctx;
    if (strided) {
        local = 256;
        groups = units * 8;
        if (groups > 4096) groups = 4096;
        if (groups > (n + local - 1) / local) groups = (n + local - 1) / local;
    } else {
        size_t want = units * 8 > 4096 ? 4096 : units * 8;
        chunk = (n + want - 1) / want;
        chunk = (chunk + 15) / 16 * 16;
        groups = (n + chunk - 1) / chunk;
    }
    size_t global = groups * local;
    double t0 = now();
    clSetKernelArg(k, 0, sizeof x, &x);
    clSetKernelArg(k, 1, sizeof off, &off);
    clSetKernelArg(k, 2, sizeof un, &un);
    clSetKernelArg(k, 3, sizeof chunk, &chunk);
    clSetKernelArg(k, 4, sizeof part, &part);
    clSetKernelArg(k, 5, local * sizeof(float), NULL);
    cl_int err = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL);
    if (err == CL_SUCCESS)
        err = clEnqueueReadBuffer(q, part, CL_TRUE, 0, groups * sizeof(float), host_part, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
        fprintf(stderr, "raw OpenCL: error %d\n", err);
        g_fail = 1;
    }
    float s = 0;
    for (size_t i = 0; i < groups; i++) s += host_part[i];
    *sum = s;
    return now() - t0;
}

int main(int argc, char** argv)
{
    const char* cname = NULL;
    size_t n = 16u << 20;
    int reps = 10;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-c") == 0 && i + 1 < argc)
            cname = argv[++i];
        else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc)
            n = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
            reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [-c cpu|gpu|dev] [-n elements] [-r reps]\n", argv[0]);
            return 2;
        }
    }
    if (n < 1 || reps < 1 || reps > 1000) {
        fprintf(stderr, "%s: -n must be >= 1 and -r 1..1000\n", argv[0]);
        return 2;
    }
    CLCONTEXT* cp = !cname          ? (stdgpu ? stdgpu : stdcpu)
        : strcmp(cname, "cpu") == 0 ? stdcpu
        : strcmp(cname, "gpu") == 0 ? stdgpu
                                    : stddev;
    if (!cp) {
        fprintf(stderr, "no such context: %s\n", clerror() ? clerror() : "none");
        return 1;
    }
    float* x = (float*)clmalloc(cp, n * sizeof(float), CL_MEM_RO);
    if (!x) {
        fprintf(stderr, "clmalloc: %s\n", clerror());
        return 1;
    }
    for (size_t i = 0; i < n; i++) x[i] = (float)((i * 2654435761u) % 1000) * 0.001f;
    double want = 0;
    for (size_t i = 0; i < n; i++) want += x[i];
    for (unsigned d = 0; d < clgetndev(cp); d++) clmsync(cp, d, x, CL_MEM_DEVICE);
    double bytes = (double)n * sizeof(float), tol = 1e-4 * want + 1;
    char dname[256] = "";
    clGetDeviceInfo(stdcl_device(cp, 0), CL_DEVICE_NAME, sizeof dname, dname, NULL);
    printf("bench_reduce: %zu floats (%.1f MiB), %u device(s) in the context, device 0: %s, %d reps (median)\n", n,
           bytes / 1048576.0, clgetndev(cp), dname, reps);
    double* t = (double*)malloc(sizeof(double) * (size_t)reps);
    float r = 0;

    for (int all = 0; all < 2; all++) {
        unsigned dn = all ? CL_ALL_DEVICES : 0;
        if (clreduce(cp, dn, x, n, CL_REDUCE_FLOAT, CL_REDUCE_SUM, &r) != 0) { /* warm-up, build */
            fprintf(stderr, "clreduce: %s\n", clerror());
            return 1;
        }
        for (int k = 0; k < reps; k++) {
            double t0 = now();
            clreduce(cp, dn, x, n, CL_REDUCE_FLOAT, CL_REDUCE_SUM, &r);
            t[k] = now() - t0;
        }
        row(all ? "clreduce all devices" : "clreduce dev 0", bench_median(t, reps), bytes, r, want, tol);
    }

    /* raw OpenCL, on device 0 of the same context */
    cl_context ctx = stdcl_clcontext(cp);
    cl_device_id dev = stdcl_device(cp, 0);
    cl_command_queue q = stdcl_queue(cp, 0);
    cl_int err;
    cl_program prog = clCreateProgramWithSource(ctx, 1, &k_src, NULL, &err);
    if (err == CL_SUCCESS) err = clBuildProgram(prog, 1, &dev, "", NULL, NULL);
    cl_uint units = 1;
    clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
    cl_mem xm = stdcl_mem(cp, 0, x);
    cl_mem part = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096 * sizeof(float), NULL, &err);
    float host_part[4096];
    if (err != CL_SUCCESS || !xm) {
        fprintf(stderr, "raw OpenCL setup failed (%d)\n", err);
        return 1;
    }
    for (int strided = 0; strided < 2; strided++) {
        cl_kernel k = clCreateKernel(prog, strided ? "strided" : "chunked", &err);
        raw_run(ctx, q, k, xm, n, strided, units, part, host_part, &r);
        for (int i = 0; i < reps; i++) t[i] = raw_run(ctx, q, k, xm, n, strided, units, part, host_part, &r);
        row(strided ? "raw OpenCL strided" : "raw OpenCL chunked", bench_median(t, reps), bytes, r, want, tol);
        clReleaseKernel(k);
    }

    /* the plain C loop */
    for (int i = 0; i < reps; i++) {
        double t0 = now();
        float s = 0;
        for (size_t j = 0; j < n; j++) s += x[j];
        t[i] = now() - t0;
        r = s;
    }
    /* a float accumulated in order drifts by rounding (and stops growing at
     * 2^24 = 16777216): its sum is shown, not checked */
    row("C loop (1 thread)", bench_median(t, reps), bytes, r, want, INFINITY);

    /* the device's copy bandwidth */
    cl_mem dst = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * sizeof(float), NULL, &err);
    if (err == CL_SUCCESS) {
        clEnqueueCopyBuffer(q, xm, dst, 0, 0, n * sizeof(float), 0, NULL, NULL);
        clFinish(q);
        for (int i = 0; i < reps; i++) {
            double t0 = now();
            clEnqueueCopyBuffer(q, xm, dst, 0, 0, n * sizeof(float), 0, NULL, NULL);
            clFinish(q);
            t[i] = now() - t0;
        }
        double s = bench_median(t, reps);
        printf("%-24s %9.2f GB/s  %8.3f ms  (read + write)\n", "copy bandwidth dev 0", 2 * bytes / s * 1e-9, s * 1e3);
        clReleaseMemObject(dst);
    }
    clReleaseMemObject(part);
    clReleaseProgram(prog);
    free(t);
    clfree(x);
    return g_fail;
}
