/* SPDX-License-Identifier: MIT */
/* embedded_kernels.c: kernels built into the program with clcc: no .cl file
 * is read at run time, so the program runs from any folder (and installs as
 * one file).  clopen(cp, NULL, flags) opens every kernel linked in;
 * clsym(cp, NULL, name, flags) finds one among them.
 * Build: make (see Makefile).  Run: ./embedded_kernels [n] */
#include <stdcl.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "saxpy_params.h"

int main(int argc, char** argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1 << 20;
    if (n <= 0 || n % (64 * SAXPY_PER_ITEM) != 0) {
        fprintf(stderr, "embedded_kernels: n must be a positive multiple of %d\n", 64 * SAXPY_PER_ITEM);
        return 2;
    }
    CLCONTEXT* cp = stdgpu ? stdgpu : stdcpu;
    if (!cp) {
        fprintf(stderr, "embedded_kernels: no OpenCL device (run stdclinfo)\n");
        return 1;
    }
    /* The kernels this program was linked with (objects made by clcc). */
    void* h = clopen(cp, NULL, CLLD_NOW);
    cl_kernel krn = h ? clsym(cp, NULL, "saxpy", CLLD_NOW) : NULL;
    if (!krn) {
        fprintf(stderr, "embedded_kernels: %s\n", clerror());
        return 1;
    }

    float a = 2.0f;
    float* x = (float*)clmalloc(cp, (size_t)n * sizeof(float), CL_MEM_RO);
    float* y = (float*)clmalloc(cp, (size_t)n * sizeof(float), CL_MEM_RW);
    if (!x || !y) {
        fprintf(stderr, "embedded_kernels: %s\n", clerror());
        return 1;
    }
    for (int i = 0; i < n; ++i) {
        x[i] = (float)i;
        y[i] = 1.0f;
    }
    clndrange_t ndr = clndrange_init1d(0, (size_t)n / SAXPY_PER_ITEM, 64);
    clmsync(cp, 0, x, CL_MEM_DEVICE | CL_EVENT_NOWAIT);
    clmsync(cp, 0, y, CL_MEM_DEVICE | CL_EVENT_NOWAIT);
    clforka(cp, 0, krn, &ndr, CL_EVENT_NOWAIT, a, x, y);
    clmsync(cp, 0, y, CL_MEM_HOST | CL_EVENT_NOWAIT);
    if (!clwait(cp, 0, CL_ALL_EVENT)) {
        fprintf(stderr, "embedded_kernels: %s\n", clerror());
        return 1;
    }

    int bad = 0;
    for (int i = 0; i < n; ++i)
        if (!(fabsf(y[i] - (a * (float)i + 1.0f)) <= 1e-3f * fabsf(a * (float)i + 1.0f))) ++bad; /* NaN: wrong */
    printf("saxpy over %d elements with an embedded kernel: %s\n", n, bad ? "WRONG" : "ok");
    clfree(x);
    clfree(y);
    clclose(cp, h);
    return bad ? 1 : 0;
}
