/* SPDX-License-Identifier: MIT */
/* first_launch.c: what the first launch of a program costs.  One process
 * makes one measurement, so run it several times (BENCHMARKS.md, Table 1.16):
 *
 *   build/bench/first_launch [-c cpu|gpu|dev]
 *
 * It opens a kernel of six arguments (two buffers, four scalars) from source
 * (clsopen, clsym: a warm program cache makes that quick, and it is not
 * timed), allocates and sends its two buffers, then times its first
 * clforka(CL_EVENT_NOWAIT), the clwait(CL_KERNEL_EVENT) after it, and a
 * second launch the same way.  Prints one line:
 *   first_launch_us=X first_wait_us=Y second_launch_us=Z
 * Exit status: 0; 1 when a call failed; 2 for bad options or no context. */
#define _GNU_SOURCE
#include <stdcl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const char* src = "__kernel void six(__global float* a, __global float* b, float s, int k, uint m, float t)\n"
                         "{ if (get_global_id(0) == 0 && k < 0) a[0] = b[0] * s + t + m; }\n";

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int fail(const char* what)
{
    fprintf(stderr, "first_launch: %s failed: %s\n", what, clerror() ? clerror() : "");
    return 1;
}

int main(int argc, char** argv)
{
    const char* which = "gpu";
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "-c") && i + 1 < argc) {
            which = argv[++i];
        } else {
            fprintf(stderr, "usage: first_launch [-c cpu|gpu|dev]\n");
            return 2;
        }
    }
    CLCONTEXT* cp = !strcmp(which, "cpu") ? stdcpu : !strcmp(which, "dev") ? stddev : !strcmp(which, "gpu") ? stdgpu : NULL;
    if (!cp || clgetndev(cp) == 0) {
        fprintf(stderr, "first_launch: no context '%s' with a device\n", which);
        return 2;
    }
    void* h = clsopen(cp, src, CLLD_NOW);
    if (!h) return fail("clsopen");
    cl_kernel k = clsym(cp, h, "six", CLLD_NOW);
    if (!k) return fail("clsym");
    float* a = (float*)clmalloc(cp, 4096, 0);
    float* b = (float*)clmalloc(cp, 4096, 0);
    if (!a || !b) return fail("clmalloc");
    memset(a, 0, 4096);
    memset(b, 0, 4096);
    if (!clmsync(cp, 0, a, CL_MEM_DEVICE | CL_EVENT_WAIT) || !clmsync(cp, 0, b, CL_MEM_DEVICE | CL_EVENT_WAIT))
        return fail("clmsync");
    clndrange_t ndr = clndrange_init1d(0, 1, 1);
    double t0 = now_us();
    cl_event e1 = clforka(cp, 0, k, &ndr, CL_EVENT_NOWAIT, a, b, 1.5f, 1, 7u, 0.5f);
    double t1 = now_us();
    if (!e1) return fail("the first clforka");
    if (stdcl_wait(cp, 0, CL_KERNEL_EVENT) != 0) return fail("clwait");
    double t2 = now_us();
    cl_event e2 = clforka(cp, 0, k, &ndr, CL_EVENT_NOWAIT, a, b, 1.5f, 2, 7u, 0.5f);
    double t3 = now_us();
    if (!e2) return fail("the second clforka");
    if (stdcl_wait(cp, 0, CL_KERNEL_EVENT) != 0) return fail("clwait");
    printf("first_launch_us=%.1f first_wait_us=%.1f second_launch_us=%.1f\n", t1 - t0, t2 - t1, t3 - t2);
    clfree(a);
    clfree(b);
    clclose(cp, h);
    return 0;
}
