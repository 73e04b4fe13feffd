/* SPDX-License-Identifier: MIT */
/* powsum_file.c: STDCL 1.6 style.  Opens powsum.cl by name (CLLD_NOW),
 * finds its kernel with clsym, and computes the running sums of squares of
 * base[k] = k - 20 on device 0 of stddev.  Prints "i base acc" per element. */
#include <stdio.h>
#include <stdcl.h>

#define LEN 128

int main(void)
{
    CLCONTEXT* cp = stddev;
    void* h = clopen(cp, "powsum.cl", CLLD_NOW);
    cl_kernel k = h ? clsym(cp, h, "power_prefix", 0) : 0;
    if (!k) {
        fprintf(stderr, "powsum_file: %s\n", clerror());
        return 1;
    }

    int* base = (int*)clmalloc(cp, LEN * sizeof(int), CL_MEM_RO);
    int* acc = (int*)clmalloc(cp, LEN * sizeof(int), CL_MEM_WO);
    if (!base || !acc) {
        fprintf(stderr, "powsum_file: clmalloc: %s\n", clerror());
        return 1;
    }
    for (int i = 0; i < LEN; ++i) {
        base[i] = i - 20;
        acc[i] = 0;
    }

    clarg_set_global(cp, k, 0, base);
    clarg_set_global(cp, k, 1, acc);
    clndrange_t ndr = clndrange_init1d(0, LEN, 32);
    clmsync(cp, 0, base, CL_MEM_DEVICE | CL_EVENT_NOWAIT);
    clfork(cp, 0, k, &ndr, CL_EVENT_NOWAIT);
    if (!clwait(cp, 0, CL_KERNEL_EVENT | CL_MEM_EVENT)) {
        fprintf(stderr, "powsum_file: clwait: %s\n", clerror());
        return 1;
    }
    clmsync(cp, 0, acc, CL_MEM_HOST | CL_EVENT_NOWAIT);
    clwait(cp, 0, CL_MEM_EVENT);

    for (int i = 0; i < LEN; ++i) printf("%d %d %d\n", i, base[i], acc[i]);

    clfree(base);
    clfree(acc);
    clclose(cp, h);
    return 0;
}
