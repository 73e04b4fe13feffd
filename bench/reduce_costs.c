/* SPDX-License-Identifier: MIT */
/* reduce_costs.c: where the time of a float sum of n elements goes on a GPU, in
 * raw OpenCL (the Makefile links OpenCL alone).  BENCHMARKS.md (Tables 15.4
 * and 15.18) uses it to choose clreduce's GPU kernel and the way its result
 * comes back.
 *
 *   reduce_costs [-r reps] [--min LOG2] [--max LOG2] [--ways | --device] [--kernel N]
 *
 * For n = 2^min, 2^(min+2) .. 2^max floats (default 2^10..2^28), each kernel
 * below is run `reps` times (default 30, after 3 warm-ups) with each way of
 * bringing the group sums back, and the median wall time of a whole call is
 * printed in us, with the bandwidth (4n bytes over that time).  The host adds
 * the group sums; the result is checked against a double sum.
 *   kernels (G groups of 256 work-items, CU = compute units):
 *     scalar x4    work-item i reads i, i + S, ... (S the global size), four
 *                  loads in flight; G = 8 CU
 *     vec4 x2 G    float4 loads, two in flight; G = 8, 16 or 32 CU
 *     vec4 x4 G    float4 loads, four in flight; G = 8 or 16 CU
 *     vec4 x8 G    float4 loads, eight in flight; G = 8 CU
 *     block xU G   each group a contiguous block of float4s (a multiple of
 *                  32), its work-items striding by the group size with U
 *                  loads in flight (CUB's pattern: a block's tiles in a row)
 *     tile xU      a group per tile of 256 U float4s, its U loads a work-item
 *                  all in flight at once (CUB's grid where the tiles are few)
 *     empty        one group that writes one value: the timing's floor
 *   (/512: groups of 512 work-items; r: the pointers restrict)
 *   ways back:
 *     events       kernel and read with events, clFlush, clWaitForEvents of both
 *     blocking     kernel without an event, then a blocking read
 *   and with --ways, for the first kernel of --kernel (default vec4 x2 8):
 *     pinned       a blocking read into pinned memory (a CL_MEM_ALLOC_HOST_PTR
 *                  buffer mapped once)
 *     poll         a read with an event, clFlush, then the event's status
 *                  polled (clGetEventInfo) until it is complete
 *     pinpoll      poll, into pinned memory
 *     map          the kernel writes the sums into a CL_MEM_ALLOC_HOST_PTR
 *                  buffer, mapped (blocking) and unmapped after each call
 *     finish       kernel, clFinish, then a blocking read
 *   and with --device, each kernel's device time alone (a profiling queue,
 *   the kernel's CL_PROFILING_COMMAND_START to _END, median; "device" in the
 *   way's column), every kernel unless --kernel
 * Uses the first GPU, else the first device of the first platform.
 */
#define RAW_CL_PROG "reduce_costs"
#include "raw_cl.h"

#include <math.h>
#include <string.h>

static const char* src =
    "// The group's sum of t into part[group]: a tree in local memory.\n"
    "void group_sum(float t, __local float* s, __global float* part)\n"
    "{\n"
    "    uint lid = get_local_id(0);\n"
    "    s[lid] = t;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (uint k = get_local_size(0) / 2; k > 0; k >>= 1) {\n"
    "        if (lid < k) s[lid] += s[lid + k];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    if (lid == 0) part[get_group_id(0)] = s[0];\n"
    "}\n"
    "// The float4 kernels' end: a[0] += a[1..U), its lanes, the n % 4 floats after\n"
    "// the last float4 (work-items 0..), then the group's sum.\n"
    "#define VEC_END(U)\\\n"
    "    for (int u = 1; u < U; ++u) a[0] += a[u];\\\n"
    "    float t = (a[0].s0 + a[0].s1) + (a[0].s2 + a[0].s3);\\\n"
    "    if (get_global_id(0) < n % 4) t += x[nv * 4 + get_global_id(0)];\\\n"
    "    group_sum(t, s, part);\n"
    "__kernel void scalar4(__global const float* x, ulong n, __global float* part, __local float* s)\n"
    "{\n"
    "    ulong gs = get_global_size(0), i = get_global_id(0);\n"
    "    float a0 = 0, a1 = 0, a2 = 0, a3 = 0;\n"
    "    for (; i + 3 * gs < n; i += 4 * gs) {\n"
    "        a0 += x[i]; a1 += x[i + gs]; a2 += x[i + 2 * gs]; a3 += x[i + 3 * gs];\n"
    "    }\n"
    "    for (; i < n; i += gs) a0 += x[i];\n"
    "    group_sum((a0 + a1) + (a2 + a3), s, part);\n"
    "}\n"
    "// Grid-strided: work-item i reads float4s i, i + G, ... (G the global size).\n"
    "#define VEC(NAME, U, Q)\\\n"
    "__kernel void NAME(__global const float* Q x, ulong n, __global float* Q part, __local float* s)\\\n"
    "{\\\n"
    "    __global const float4* Q v = (__global const float4*)x;\\\n"
    "    ulong nv = n / 4, gs = get_global_size(0), i = get_global_id(0);\\\n"
    "    float4 a[U];\\\n"
    "    for (int u = 0; u < U; ++u) a[u] = (float4)(0.0f);\\\n"
    "    for (; i + (U - 1) * gs < nv; i += U * gs)\\\n"
    "        for (int u = 0; u < U; ++u) a[u] += v[i + u * gs];\\\n"
    "    for (; i < nv; i += gs) a[0] += v[i];\\\n"
    "    VEC_END(U)\\\n"
    "}\n"
    "VEC(vec4x2, 2, )\n"
    "VEC(vec4x4, 4, )\n"
    "VEC(vec4x8, 8, )\n"
    "VEC(vec4x2r, 2, restrict)\n"
    "// A contiguous block of float4s a group (a multiple of 32).\n"
    "#define BLK(NAME, U)\\\n"
    "__kernel void NAME(__global const float* x, ulong n, __global float* part, __local float* s)\\\n"
    "{\\\n"
    "    __global const float4* v = (__global const float4*)x;\\\n"
    "    ulong nv = n / 4, ls = get_local_size(0), lid = get_local_id(0);\\\n"
    "    ulong per = ((nv + get_num_groups(0) - 1) / get_num_groups(0) + 31) / 32 * 32;\\\n"
    "    ulong b = get_group_id(0) * per, e = min(b + per, nv), i = b + lid;\\\n"
    "    float4 a[U];\\\n"
    "    for (int u = 0; u < U; ++u) a[u] = (float4)(0.0f);\\\n"
    "    for (; i + (U - 1) * ls < e; i += U * ls)\\\n"
    "        for (int u = 0; u < U; ++u) a[u] += v[i + u * ls];\\\n"
    "    for (; i < e; i += ls) a[0] += v[i];\\\n"
    "    VEC_END(U)\\\n"
    "}\n"
    "BLK(block4, 4)\n"
    "BLK(block8, 8)\n"
    "// A tile of 256 U float4s a group, every load issued before any is added.\n"
    "#define TILE(NAME, U, Q)\\\n"
    "__kernel void NAME(__global const float* Q x, ulong n, __global float* Q part, __local float* s)\\\n"
    "{\\\n"
    "    __global const float4* Q v = (__global const float4*)x;\\\n"
    "    ulong nv = n / 4, ls = get_local_size(0), lid = get_local_id(0);\\\n"
    "    ulong i = get_group_id(0) * ls * U + lid;\\\n"
    "    float4 a[U];\\\n"
    "    if (i + (U - 1) * ls < nv)\\\n"
    "        for (int u = 0; u < U; ++u) a[u] = v[i + u * ls];\\\n"
    "    else\\\n"
    "        for (int u = 0; u < U; ++u) a[u] = i + u * ls < nv ? v[i + u * ls] : (float4)(0.0f);\\\n"
    "    VEC_END(U)\\\n"
    "}\n"
    "TILE(tile4, 4, )\n"
    "TILE(tile4r, 4, restrict)\n"
    "TILE(tile8r, 8, restrict)\n"
    "__kernel void empty(__global const float* x, ulong n, __global float* part, __local float* s)\n"
    "{\n"
    "    if (get_global_id(0) == 0) part[0] = n ? 0.0f : x[0];\n"
    "}\n";

struct variant {
    const char* kernel;
    const char* label;
    unsigned per_cu;
    size_t local; /* work-items a group (0: 256) */
};
static const struct variant variants[] = {
    {"scalar4", "scalar x4    8", 8, 0}, {"vec4x2", "vec4 x2      8", 8, 0}, {"vec4x2", "vec4 x2     16", 16, 0},
    {"vec4x2", "vec4 x2     32", 32, 0}, {"vec4x4", "vec4 x4      8", 8, 0}, {"vec4x4", "vec4 x4     16", 16, 0},
    {"vec4x2", "vec4 x2      4", 4, 0},  {"vec4x8", "vec4 x8      8", 8, 0}, {"vec4x2", "vec4 x2/512  4", 4, 512},
    {"block4", "block x4     4", 4, 0},  {"block4", "block x4     8", 8, 0}, {"block4", "block x4    16", 16, 0},
    {"block8", "block x8     4", 4, 0},  {"block8", "block x8     8", 8, 0}, {"block4", "block x4/512 4", 4, 512},
    {"vec4x2r", "vec4 x2 r    8", 8, 0}, {"tile4", "tile x4", 0, 0},         {"tile4r", "tile x4 r", 0, 0},
    {"tile8r", "tile x8 r", 0, 0},       {"empty", "empty", 0, 0},
};
#define NVAR (sizeof variants / sizeof variants[0])

int main(int argc, char** argv)
{
    int reps = 30, lo = 10, hi = 28, ways = 0, device = 0, only = -1;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--ways"))
            ways = 1;
        else if (!strcmp(argv[i], "--device"))
            device = 1;
        else if (!strcmp(argv[i], "--kernel") && i + 1 < argc)
            only = atoi(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--min") && i + 1 < argc)
            lo = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--max") && i + 1 < argc)
            hi = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [-r reps] [--min LOG2] [--max LOG2] [--ways | --device] [--kernel N]\n",
                    argv[0]);
            return 2;
        }
    }
    if (ways && only < 0) only = 1;
    if (reps < 1 || reps > 999 || lo < 4 || hi > 30 || lo > hi || only >= (int)NVAR || (ways && device)) {
        fprintf(stderr,
                "reduce_costs: -r 1..999, 4 <= --min <= --max <= 30, --kernel 0..%d, not both --ways and --device\n",
                (int)NVAR - 1);
        return 2;
    }
    cl_platform_id plat;
    cl_device_id dev = raw_device(&plat);
    char pname[256] = "", dname[256] = "";
    cl_uint cu = 1;
    clGetPlatformInfo(plat, CL_PLATFORM_NAME, sizeof pname, pname, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dname, dname, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
    printf("reduce_costs: %s, %s, %u compute units; median of %d calls after 3 warm-ups\n", pname, dname, cu, reps);

    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, device ? CL_QUEUE_PROFILING_ENABLE : 0, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS) {
        char log[8192] = "";
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "reduce_costs: build failed:\n%s\n", log);
        return 1;
    }
    size_t nmax = (size_t)1 << hi;
    float* host = malloc(nmax * sizeof(float));
    if (!host) return 1;
    for (size_t i = 0; i < nmax; ++i) host[i] = (float)((i * 2654435761u) % 1000) / 1000.0f;
    cl_mem x = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, nmax * sizeof(float), host, &err);
    CHECK(err);
    /* groups at most: per_cu <= 32, and the tiles of 1,024 floats at 2^hi */
    const size_t maxg = 32 * (size_t)cu > nmax / 1024 ? 32 * (size_t)cu : nmax / 1024;
    cl_mem part = clCreateBuffer(ctx, CL_MEM_READ_WRITE, maxg * sizeof(float), NULL, &err);
    CHECK(err);
    /* Pinned memory: a CL_MEM_ALLOC_HOST_PTR buffer mapped for the whole run
     * (pin), and one the kernel writes and each call maps (hpart). */
    cl_mem pin = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, maxg * sizeof(float), NULL, &err);
    CHECK(err);
    cl_mem hpart = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, maxg * sizeof(float), NULL, &err);
    CHECK(err);
    float* pinned =
        clEnqueueMapBuffer(q, pin, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, maxg * sizeof(float), 0, NULL, NULL, &err);
    CHECK(err);
    float* parts = malloc(maxg * sizeof(float));
    double* t = malloc((size_t)reps * sizeof(double));
    if (!parts || !t) return 1;

    printf("%-6s %-16s %-9s %10s %9s\n", "n", "kernel G/CU", "back", "us a call", "GB/s");
    for (int lg = lo; lg <= hi; lg += 2) {
        const cl_ulong n = (cl_ulong)1 << lg;
        double want = 0;
        for (size_t i = 0; i < n; ++i) want += host[i];
        for (size_t v = 0; v < NVAR; ++v) {
            if (only >= 0 && v != (size_t)only) continue;
            cl_kernel k = clCreateKernel(prog, variants[v].kernel, &err);
            CHECK(err);
            size_t local = variants[v].local ? variants[v].local : 256, groups = variants[v].per_cu * (size_t)cu;
            size_t need = (size_t)(n / (strcmp(variants[v].kernel, "scalar4") ? 4 : 1) + local - 1) / local;
            if (!strncmp(variants[v].kernel, "tile", 4)) {
                /* a group a tile: the float4s over 256 U */
                size_t u = (size_t)(variants[v].kernel[4] - '0');
                groups = (size_t)((n / 4 + local * u - 1) / (local * u));
                if (!groups) groups = 1;
                if (groups > maxg) continue;
            } else if (!strcmp(variants[v].kernel, "empty")) {
                if (!device) continue; /* no sum to check */
                groups = 1;
            }
            if (groups > need) groups = need ? need : 1;
            size_t global = groups * local;
            CHECK(clSetKernelArg(k, 0, sizeof x, &x));
            CHECK(clSetKernelArg(k, 1, sizeof n, &n));
            CHECK(clSetKernelArg(k, 2, sizeof part, &part));
            CHECK(clSetKernelArg(k, 3, local * sizeof(float), NULL));
            if (device) {
                /* the kernel alone, on the device's clock */
                for (int r = -3; r < reps; ++r) {
                    cl_event ev;
                    cl_ulong t0 = 0, t1 = 0;
                    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, &ev));
                    CHECK(clWaitForEvents(1, &ev));
                    CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL));
                    CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL));
                    clReleaseEvent(ev);
                    if (r >= 0) t[r] = (double)(t1 - t0) / 1e3;
                }
                CHECK(clEnqueueReadBuffer(q, part, CL_TRUE, 0, groups * sizeof(float), parts, 0, NULL, NULL));
                float s = 0;
                for (size_t g = 0; g < groups; ++g) s += parts[g];
                qsort(t, (size_t)reps, sizeof t[0], raw_cmp_double);
                double us = t[reps / 2];
                int ok = !strcmp(variants[v].kernel, "empty") || fabs(s - want) <= 1e-4 * fabs(want) + 1e-3;
                printf("2^%-4d %-16s %-9s %10.1f %9.0f  (min %.1f, %zu groups)%s\n", lg, variants[v].label, "device",
                       us, (double)n * 4 / us / 1e3, t[0], groups, ok ? "" : "  WRONG SUM");
                clReleaseKernel(k);
                continue;
            }
            static const char* const way_names[] = {"events", "blocking", "pinned", "poll", "pinpoll", "map", "finish"};
            for (int way = 0; way < (ways ? 7 : 2); ++way) {
                double got = 0;
                CHECK(clSetKernelArg(k, 2, sizeof part, way == 5 ? &hpart : &part));
                for (int r = -3; r < reps; ++r) {
                    double t0 = raw_now_ns() / 1e3;
                    const float* back = parts;
                    if (way == 2) {
                        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL));
                        CHECK(clEnqueueReadBuffer(q, part, CL_TRUE, 0, groups * sizeof(float), pinned, 0, NULL, NULL));
                        back = pinned;
                    } else if (way == 3 || way == 4) {
                        cl_event ev;
                        cl_int st = CL_QUEUED;
                        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL));
                        CHECK(clEnqueueReadBuffer(q, part, CL_FALSE, 0, groups * sizeof(float),
                                                  way == 4 ? pinned : parts, 0, NULL, &ev));
                        CHECK(clFlush(q));
                        while (st != CL_COMPLETE && st >= 0)
                            CHECK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
                        CHECK(st < 0 ? st : CL_SUCCESS);
                        clReleaseEvent(ev);
                        back = way == 4 ? pinned : parts;
                    } else if (way == 5) {
                        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL));
                        float* m = clEnqueueMapBuffer(q, hpart, CL_TRUE, CL_MAP_READ, 0, groups * sizeof(float), 0,
                                                      NULL, NULL, &err);
                        CHECK(err);
                        memcpy(parts, m, groups * sizeof(float));
                        CHECK(clEnqueueUnmapMemObject(q, hpart, m, 0, NULL, NULL));
                    } else if (way == 6) {
                        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL));
                        CHECK(clFinish(q));
                        CHECK(clEnqueueReadBuffer(q, part, CL_TRUE, 0, groups * sizeof(float), parts, 0, NULL, NULL));
                    } else if (way == 0) {
                        cl_event ev[2];
                        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, &ev[0]));
                        CHECK(
                            clEnqueueReadBuffer(q, part, CL_FALSE, 0, groups * sizeof(float), parts, 0, NULL, &ev[1]));
                        CHECK(clFlush(q));
                        CHECK(clWaitForEvents(2, ev));
                        clReleaseEvent(ev[0]);
                        clReleaseEvent(ev[1]);
                    } else {
                        CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, &local, 0, NULL, NULL));
                        CHECK(clEnqueueReadBuffer(q, part, CL_TRUE, 0, groups * sizeof(float), parts, 0, NULL, NULL));
                    }
                    float s = 0;
                    for (size_t g = 0; g < groups; ++g) s += back[g];
                    if (r >= 0) t[r] = raw_now_ns() / 1e3 - t0;
                    got = s;
                }
                qsort(t, (size_t)reps, sizeof t[0], raw_cmp_double);
                double us = t[reps / 2];
                int ok = fabs(got - want) <= 1e-4 * fabs(want) + 1e-3;
                printf("2^%-4d %-16s %-9s %10.1f %9.0f%s\n", lg, variants[v].label, way_names[way], us,
                       (double)n * 4 / us / 1e3, ok ? "" : "  WRONG SUM");
            }
            clReleaseKernel(k);
        }
    }
    CHECK(clEnqueueUnmapMemObject(q, pin, pinned, 0, NULL, NULL));
    CHECK(clFinish(q));
    clReleaseMemObject(pin);
    clReleaseMemObject(hpart);
    free(t);
    free(parts);
    free(host);
    clReleaseMemObject(part);
    clReleaseMemObject(x);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}
