/* SPDX-License-Identifier: MIT */
/* powsum_nobuild.c: STDCL 1.6 style.  Opens powsum.cl with CLLD_NOBUILD,
 * builds it with clbuild and "-D POWER=3", and computes running sums of
 * cubes of base[k] = k - 20 on the last device of stddev.  Prints
 * "i base acc" per element. */
#include <stdio.h>
#include <stdcl.h>

#define LEN 128

int main(void)
{
    CLCONTEXT* cp = stddev;
    unsigned int dev = clgetndev(cp) - 1;
    void* h = clopen(cp, "powsum.cl", CLLD_NOBUILD);
    if (!h || !clbuild(cp, h, "-D POWER=3", 0)) {
        fprintf(stderr, "powsum_nobuild: %s\n", clerror());
        return 1;
    }
    cl_kernel k = clsym(cp, h, "power_prefix", 0);
    if (!k) {
        fprintf(stderr, "powsum_nobuild: clsym: %s\n", clerror());
        return 1;
    }

    int* base = (int*)clmalloc(cp, LEN * sizeof(int), CL_MEM_RO);
    int* acc = (int*)clmalloc(cp, LEN * sizeof(int), CL_MEM_WO);
    if (!base || !acc) {
        fprintf(stderr, "powsum_nobuild: clmalloc: %s\n", clerror());
        return 1;
    }
    for (int i = 0; i < LEN; ++i) {
        base[i] = i - 20;
        acc[i] = 0;
    }

    clarg_set_global(cp, k, 0, base);
    clarg_set_global(cp, k, 1, acc);
    clndrange_t ndr = clndrange_init1d(0, LEN, 16);
    clmsync(cp, dev, base, CL_MEM_DEVICE | CL_EVENT_NOWAIT);
    clfork(cp, dev, k, &ndr, CL_EVENT_NOWAIT);
    clmsync(cp, dev, acc, CL_MEM_HOST | CL_EVENT_NOWAIT);
    if (!clwait(cp, dev, CL_ALL_EVENT)) {
        fprintf(stderr, "powsum_nobuild: clwait: %s\n", clerror());
        return 1;
    }

    for (int i = 0; i < LEN; ++i) printf("%d %d %d\n", i, base[i], acc[i]);

    clfree(base);
    clfree(acc);
    clclose(cp, h);
    return 0;
}
