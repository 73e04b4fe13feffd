/* SPDX-License-Identifier: MIT */
/* split_saxpy.c: one output array computed by every device of a context.
 * Each device gets a slice of the index range through the global offset
 * (the kernel indexes the whole arrays with get_global_id), sends and
 * brings back only its slice with clmsyncn, and one clwait on
 * CL_ALL_DEVICES joins them all.  This is the pattern clfork(3) and
 * clmsync(3) show and the README's "Choosing devices" quotes: the part
 * between "page: begin" and "page: end" is printed there line for line
 * (tests/check_man.sh compares them).
 *
 *   split_saxpy [-n count] [--check]          */
#include <stdio.h>
#include <stdlib.h>

#include <stdcl.h>

#include "../example_args.h"

static const char* const kSource =
    "__kernel void saxpy(float a, __global const float *x, __global float *y)\n"
    "{ size_t i = get_global_id(0); y[i] = a * x[i] + y[i]; }\n";

static int saxpy_split(CLCONTEXT* cp, cl_kernel k, float* x, float* y, size_t n)
{
    /* page: begin */
    int failed = 0;
    unsigned ndev = clgetndev(cp);
    for (unsigned d = 0; d < ndev && !failed; ++d) {
        size_t first = n * d / ndev, count = n * (d + 1) / ndev - first;
        if (count == 0) continue;
        clndrange_t ndr = clndrange_init1d(first, count, 0);
        size_t bytes = count * sizeof(float);
        failed = !clmsyncn(cp, d, x + first, bytes, CL_MEM_DEVICE | CL_EVENT_NOWAIT) ||
                 !clmsyncn(cp, d, y + first, bytes, CL_MEM_DEVICE | CL_EVENT_NOWAIT) ||
                 !clforka(cp, d, k, &ndr, CL_EVENT_NOWAIT, 2.0f, x, y) ||
                 !clmsyncn(cp, d, y + first, bytes, CL_MEM_HOST | CL_EVENT_NOWAIT);
    }
    /* Join what was enqueued, also after a failure (clerror() says why). */
    if (!clwait(cp, CL_ALL_DEVICES, CL_ALL_EVENT)) failed = 1;
    /* page: end */
    return failed ? -1 : 0;
}

int main(int argc, char** argv)
{
    int n = 1 << 20, check = 0;
    const example_opt opts[] = {EXAMPLE_INT("-n", "count", &n, 1, INT_MAX), EXAMPLE_FLAG("--check", &check),
                                EXAMPLE_END};
    if (!example_args(argc, argv, opts)) return 2;
    CLCONTEXT* cp = example_context("dev", NULL);
    if (!cp) return 1;
    void* h = clsopen(cp, kSource, CLLD_NOW);
    cl_kernel k = h ? clsym(cp, h, "saxpy", 0) : NULL;
    float* x = (float*)clmalloc(cp, (size_t)n * sizeof(float), CL_MEM_RO);
    float* y = (float*)clmalloc(cp, (size_t)n * sizeof(float), 0);
    if (!k || !x || !y) {
        fprintf(stderr, "setup: %s\n", clerror());
        return 1;
    }
    for (int i = 0; i < n; i++) {
        x[i] = (float)(i % 1000);
        y[i] = (float)(i % 7);
    }
    if (saxpy_split(cp, k, x, y, (size_t)n) != 0) {
        fprintf(stderr, "split_saxpy: %s\n", clerror());
        return 1;
    }
    printf("split_saxpy: %d elements over %u device(s)\n", n, clgetndev(cp));
    int status = 0;
    if (check) {
        size_t bad = 0, first_bad = 0;
        for (int i = 0; i < n; i++)
            if (y[i] != 2.0f * (float)(i % 1000) + (float)(i % 7) && bad++ == 0) first_bad = (size_t)i;
        if (bad) {
            printf("check: %zu of %d results wrong, the first at %zu (%g): FAIL\n", bad, n, first_bad,
                   (double)y[first_bad]);
            status = 1;
        } else {
            printf("check: all %d results right: PASS\n", n);
        }
    }
    clfree(x);
    clfree(y);
    clclose(cp, h);
    return status;
}
