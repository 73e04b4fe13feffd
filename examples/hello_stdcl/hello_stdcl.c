/* SPDX-License-Identifier: MIT */
/* hello_stdcl.c: a matrix-vector product on the default context, split across all
 * of its devices: device d computes block d of the rows of y = A x.
 * Build: make (uses pkg-config stdcl).  Run: ./hello_stdcl [n] */
#include <stdcl.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1024;
    if (n <= 0 || n > 16384) {
        fprintf(stderr, "hello_stdcl: n must be between 1 and 16384\n");
        return 2;
    }
    CLCONTEXT* cp = stdgpu ? stdgpu : stdcpu;
    if (!cp) {
        fprintf(stderr, "hello_stdcl: no OpenCL device (run stdclinfo)\n");
        return 1;
    }
    unsigned ndev = clgetndev(cp);
    void* h = clopen(cp, "matvec.cl", CLLD_NOW);
    cl_kernel krn = h ? clsym(cp, h, "matvec", CLLD_NOW) : NULL;
    if (!krn) {
        fprintf(stderr, "hello_stdcl: %s\n", clerror());
        return 1;
    }

    /* A and x are read by every device; each device writes its own block of y
     * (each device holds its own copy of an allocation, so blocks stay separate). */
    float* a = clmalloc(cp, (size_t)n * n * sizeof(float), CL_MEM_RO);
    float* x = clmalloc(cp, (size_t)n * sizeof(float), CL_MEM_RO);
    float* y[64];
    int row0[64], rows[64];
    if (ndev > 64) ndev = 64;
    if (!a || !x) {
        fprintf(stderr, "hello_stdcl: %s\n", clerror());
        return 1;
    }
    for (int i = 0; i < n; ++i) {
        x[i] = 1.0f / (float)(i + 1);
        for (int j = 0; j < n; ++j) a[(size_t)i * n + j] = (float)((i + j) % 7) - 3.0f;
    }

    for (unsigned d = 0; d < ndev; ++d) {
        row0[d] = (int)((long)n * d / ndev);
        rows[d] = (int)((long)n * (d + 1) / ndev) - row0[d];
        y[d] = rows[d] ? clmalloc(cp, (size_t)rows[d] * sizeof(float), CL_MEM_WO) : NULL;
        if (!rows[d]) continue;
        if (!y[d]) {
            fprintf(stderr, "hello_stdcl: %s\n", clerror());
            return 1;
        }
        clndrange_t ndr = clndrange_init1d(0, (size_t)rows[d], 0);
        clmsync(cp, d, a, CL_MEM_DEVICE | CL_EVENT_NOWAIT);
        clmsync(cp, d, x, CL_MEM_DEVICE | CL_EVENT_NOWAIT);
        clforka(cp, d, krn, &ndr, CL_EVENT_NOWAIT, a, x, y[d], row0[d], n);
        clmsync(cp, d, y[d], CL_MEM_HOST | CL_EVENT_NOWAIT);
        clflush(cp, d, 0);
    }
    for (unsigned d = 0; d < ndev; ++d)
        if (!clwait(cp, d, CL_ALL_EVENT)) {
            fprintf(stderr, "hello_stdcl: %s\n", clerror());
            return 1;
        }

    double maxerr = 0.0;
    for (unsigned d = 0; d < ndev; ++d)
        for (int i = 0; i < rows[d]; ++i) {
            int r = row0[d] + i;
            double ref = 0.0;
            for (int j = 0; j < n; ++j) ref += (double)a[(size_t)r * n + j] * x[j];
            double err = fabs(y[d][i] - ref) / (fabs(ref) > 1.0 ? fabs(ref) : 1.0);
            if (err > maxerr) maxerr = err;
        }
    printf("hello_stdcl: y = A x, n = %d, on %u device(s) of %s: max relative error %.2e: %s\n", n, ndev,
           cp == stdgpu ? "stdgpu" : "stdcpu", maxerr, maxerr < 1e-4 ? "PASS" : "FAIL");

    for (unsigned d = 0; d < ndev; ++d) clfree(y[d]);
    clfree(a);
    clfree(x);
    clclose(cp, h);
    return maxerr < 1e-4 ? 0 : 1;
}
