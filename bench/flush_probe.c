/* SPDX-License-Identifier: MIT */
/* flush_probe.c: does a driver start a kernel that was enqueued but never
 * flushed?  Raw OpenCL, without libstdcl (the Makefile links OpenCL alone).
 * BENCHMARKS.md (Table 1.7) uses it to say what a CL_EVENT_NOEVENT launch
 * left unflushed at the end of a burst costs: libstdcl flushes such launches
 * at most every 200 us, and clflush() or clwait() the rest.
 *
 *   flush_probe [-m MS]
 *
 * A one-work-item kernel that spins about MS milliseconds (default 50) is
 * enqueued with no event; the host sleeps 2 x MS and then calls clFinish.
 * Started at the enqueue, the kernel is done by then and clFinish returns
 * at once; left waiting for a flush, clFinish takes the kernel's whole time.
 * The same with a clFlush after the enqueue, as the baseline.  Prints one
 * line per case, three runs each, and uses the first GPU, else the first
 * device of the first platform.
 */
#define RAW_CL_PROG "flush_probe"
#include "raw_cl.h"

#include <string.h>
#include <unistd.h>

/* A load each step: no compiler can fold the loop away. */
static const char* src = "__kernel void spin(__global uint* x, uint n) {"
                         " uint v = x[0]; for (uint i = 0; i < n; i++) v = v * 1103515245u + x[v & 1u] + 12345u;"
                         " x[1] = v; }";

static double now_ms(void) { return raw_now_ns() / 1e6; }

static cl_command_queue q;
static cl_kernel k;

/* Enqueues the spin of n steps; flushes when asked; sleeps sleep_ms; returns
 * how long clFinish then took, in ms. */
static double one(cl_uint n, int flush, double sleep_ms)
{
    CHECK(clSetKernelArg(k, 1, sizeof n, &n));
    size_t g = 1;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
    if (flush) CHECK(clFlush(q));
    usleep((useconds_t)(sleep_ms * 1e3));
    double t0 = now_ms();
    CHECK(clFinish(q));
    return now_ms() - t0;
}

int main(int argc, char** argv)
{
    double target = 50;
    if (argc == 3 && strcmp(argv[1], "-m") == 0) target = atof(argv[2]);
    if (argc != 1 && argc != 3) {
        fprintf(stderr, "usage: flush_probe [-m MS]\n");
        return 2;
    }
    cl_platform_id plat;
    cl_device_id dev = raw_device(&plat);
    char name[256] = "";
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK(err);
    q = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    CHECK(err);
    CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
    k = clCreateKernel(prog, "spin", &err);
    CHECK(err);
    cl_mem x = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 2 * sizeof(cl_uint), NULL, &err);
    CHECK(err);
    CHECK(clSetKernelArg(k, 0, sizeof x, &x));

    /* Calibrate: steps for about target ms, the kernel run and waited for. */
    one(1u << 10, 1, 0); /* the first launch pays for setting up */
    cl_uint n = 1u << 16;
    double ms = 0;
    for (;;) {
        double t0 = now_ms();
        one(n, 1, 0);
        ms = now_ms() - t0;
        if (ms >= target / 2 || n >= (1u << 31)) break;
        n *= 2;
    }
    n = (cl_uint)((double)n * target / (ms > 0 ? ms : 1));
    double t0 = now_ms();
    one(n, 1, 0);
    ms = now_ms() - t0;
    printf("device: %s; the kernel alone: %.1f ms\n", name, ms);
    for (int flush = 1; flush >= 0; flush--) {
        printf("%-22s clFinish after a %.0f ms sleep took",
               flush ? "enqueue + clFlush:" : "enqueue, no flush:", 2 * ms);
        int started = 0;
        for (int r = 0; r < 3; r++) {
            double f = one(n, flush, 2 * ms);
            printf(" %.1f", f);
            started += f < ms / 2;
        }
        printf(" ms: %s\n", started == 3 ? "started at once" : started ? "started in some runs" : "waited for a flush");
    }
    clReleaseMemObject(x);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return 0;
}
