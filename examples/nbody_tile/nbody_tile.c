/* SPDX-License-Identifier: MIT */
/* nbody_tile.c: __local memory sized per work-item with a local size that
 * libstdcl chooses (Aparapi's "LocalFloatBuffer(4)": 4 floats per work-item,
 * so the tile holds one body per work-item whatever the group size).
 *
 *   nbody_tile [-n bodies] [--check]
 *
 * The local size is 0 in the index space: clforka picks the largest one that
 * divides n and fits the kernel, the device and the __local memory, and
 * writes it back.  --check compares with a double-precision host sum. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <stdcl.h>

#include "../example_args.h"

int main(int argc, char** argv)
{
    int n = 3000, check = 0;
    const example_opt opts[] = {EXAMPLE_INT("-n", "bodies", &n, 1, INT_MAX), EXAMPLE_FLAG("--check", &check),
                                EXAMPLE_END};
    if (!example_args(argc, argv, opts)) return 2;
    CLCONTEXT* cp = example_context("dev", NULL);
    if (!cp) return 1;
    void* h = clopen(cp, "nbody_tile.cl", CLLD_NOW);
    cl_kernel k = h ? clsym(cp, h, "nbody_tile", 0) : NULL;
    cl_float4* pos = (cl_float4*)clmalloc(cp, (size_t)n * sizeof(cl_float4), CL_MEM_RO);
    cl_float4* acc = (cl_float4*)clmalloc(cp, (size_t)n * sizeof(cl_float4), CL_MEM_WO);
    if (!k || !pos || !acc) {
        fprintf(stderr, "setup: %s\n", clerror());
        return 1;
    }
    srand(12345);
    for (int i = 0; i < n; i++) {
        pos[i].s[0] = (float)rand() / RAND_MAX * 2.0f - 1.0f;
        pos[i].s[1] = (float)rand() / RAND_MAX * 2.0f - 1.0f;
        pos[i].s[2] = (float)rand() / RAND_MAX * 2.0f - 1.0f;
        pos[i].s[3] = 1.0f / n; /* mass */
    }
    float eps2 = 0.01f;
    clmsync(cp, 0, pos, CL_MEM_DEVICE);
    clndrange_t ndr = clndrange_init1d(0, n, 0); /* 0: libstdcl chooses */
    if (!clforka(cp, 0, k, &ndr, CL_EVENT_WAIT, pos, acc, CLLOCAL_PER_ITEM(sizeof(cl_float4)), eps2)) {
        fprintf(stderr, "clforka: %s\n", clerror());
        return 1;
    }
    clmsync(cp, 0, acc, CL_MEM_HOST);
    printf("%d bodies, local size %zu chosen (%zu bytes of __local memory per group)\n", n, ndr.ltsz[0],
           ndr.ltsz[0] * sizeof(cl_float4));
    int status = 0;
    if (check) {
        double worst = 0;
        for (int i = 0; i < n; i++) {
            double a[3] = {0, 0, 0};
            for (int j = 0; j < n; j++) {
                double r[3], d2 = eps2;
                for (int c = 0; c < 3; c++) {
                    r[c] = (double)pos[j].s[c] - pos[i].s[c];
                    d2 += r[c] * r[c];
                }
                double inv = 1.0 / sqrt(d2), f = pos[j].s[3] * inv * inv * inv;
                for (int c = 0; c < 3; c++) a[c] += f * r[c];
            }
            double na = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]), err = 0;
            for (int c = 0; c < 3; c++) err += fabs(a[c] - acc[i].s[c]);
            err /= na > 1e-12 ? na : 1e-12;
            if (err > worst) worst = err;
        }
        status = worst < 1e-3 ? 0 : 1;
        printf("check vs double host sum: worst relative error %.2e: %s\n", worst, status ? "FAIL" : "PASS");
    }
    clfree(pos);
    clfree(acc);
    clclose(cp, h);
    return status;
}
