/* SPDX-License-Identifier: MIT */
/* mixed_pointers.c: a kernel whose pointer mixes two __global buffers
 * (Beignet's example), with the index range split over every device of the
 * context: each device gets a slice through the global offset
 * (get_global_id starts at ndr.gtoff[0]) and brings back only its slice of
 * the one output array with clmsyncn.
 *
 *   mixed_pointers [-n count] [--check]          */
#include <stdio.h>
#include <stdlib.h>

#include <stdcl.h>

#include "../example_args.h"

int main(int argc, char** argv)
{
    int n = 100003, check = 0;
    const example_opt opts[] = {EXAMPLE_INT("-n", "count", &n, 1, INT_MAX), EXAMPLE_FLAG("--check", &check),
                                EXAMPLE_END};
    if (!example_args(argc, argv, opts)) return 2;
    CLCONTEXT* cp = example_context("dev", NULL);
    if (!cp) return 1;
    void* h = clopen(cp, "mixed_pointers.cl", CLLD_NOW);
    cl_kernel k = h ? clsym(cp, h, "example", 0) : NULL;
    size_t bytes = (size_t)n * sizeof(int);
    int* dst = (int*)clmalloc(cp, bytes, CL_MEM_WO);
    int* src0 = (int*)clmalloc(cp, bytes, CL_MEM_RO);
    int* src1 = (int*)clmalloc(cp, bytes, CL_MEM_RO);
    if (!k || !dst || !src0 || !src1) {
        fprintf(stderr, "setup: %s\n", clerror());
        return 1;
    }
    for (int i = 0; i < n; i++) {
        src0[i] = i;
        src1[i] = -i;
        dst[i] = 12345;
    }
    unsigned ndev = clgetndev(cp);
    for (unsigned d = 0; d < ndev; d++) {
        size_t first = (size_t)n * d / ndev, count = (size_t)n * (d + 1) / ndev - first;
        if (!count) continue;
        clmsync(cp, d, src0, CL_MEM_DEVICE);
        clmsync(cp, d, src1, CL_MEM_DEVICE);
        clndrange_t ndr = clndrange_init1d(first, count, 0);
        if (!clforka(cp, d, k, &ndr, CL_EVENT_NOWAIT, dst, src0, src1)) {
            fprintf(stderr, "clforka on device %u: %s\n", d, clerror());
            return 1;
        }
        /* the same queue: after the kernel, only this device's slice */
        if (!clmsyncn(cp, d, dst + first, count * sizeof(int), CL_MEM_HOST | CL_EVENT_NOWAIT)) {
            fprintf(stderr, "clmsyncn on device %u: %s\n", d, clerror());
            return 1;
        }
        printf("device %u: elements %zu..%zu, local size %zu\n", d, first, first + count - 1, ndr.ltsz[0]);
    }
    for (unsigned d = 0; d < ndev; d++) clwait(cp, d, CL_ALL_EVENT);
    int status = 0;
    if (check) {
        int bad = 0;
        for (int i = 0; i < n; i++)
            if (dst[i] != (i % 2 ? src0[i] : src1[i])) bad++;
        status = bad ? 1 : 0;
        printf("check %d elements over %u device(s): %d wrong: %s\n", n, ndev, bad, bad ? "FAIL" : "PASS");
    }
    clfree(dst);
    clfree(src0);
    clfree(src1);
    clclose(cp, h);
    return status;
}
