/* SPDX-License-Identifier: MIT */
/* stencil.c: STDCL 1.6 style.  Samples u(i) = i^3 - 40 i at NPTS points,
 * takes its second differences on the last device of stddev (the kernel is
 * embedded in the program by clcc), launched with clforka without waiting,
 * then clflush and clwait.  Prints "i u d" for each point; inside, d = 6 i. */
#include <stdio.h>
#include <stdcl.h>

#define NPTS 96

int main(void)
{
    CLCONTEXT* cp = stddev;
    if (!cp || clgetndev(cp) == 0) {
        fprintf(stderr, "stencil: no stddev: %s\n", clerror());
        return 1;
    }
    unsigned int dev = clgetndev(cp) - 1;

    clopen(cp, 0, CLLD_NOW);
    cl_kernel k = clsym(cp, 0, "second_diff", 0);
    if (!k) {
        fprintf(stderr, "stencil: clsym: %s\n", clerror());
        return 1;
    }

    int n = NPTS;
    int* u = (int*)clmalloc(cp, n * sizeof(int), CL_MEM_RO);
    int* d = (int*)clmalloc(cp, n * sizeof(int), CL_MEM_WO);
    if (!u || !d) {
        fprintf(stderr, "stencil: clmalloc: %s\n", clerror());
        return 1;
    }
    for (int i = 0; i < n; ++i) {
        u[i] = i * i * i - 40 * i;
        d[i] = -1;
    }

    clndrange_t ndr = clndrange_init1d(0, NPTS, 16);
    clmsync(cp, dev, u, CL_MEM_DEVICE | CL_EVENT_NOWAIT);
    clforka(cp, dev, k, &ndr, CL_EVENT_NOWAIT, n, u, d);
    clmsync(cp, dev, d, CL_MEM_HOST | CL_EVENT_NOWAIT);
    clflush(cp, dev, 0);
    if (!clwait(cp, dev, CL_ALL_EVENT)) {
        fprintf(stderr, "stencil: clwait: %s\n", clerror());
        return 1;
    }

    for (int i = 0; i < n; ++i) printf("%d %d %d\n", i, u[i], d[i]);

    clfree(u);
    clfree(d);
    return 0;
}
