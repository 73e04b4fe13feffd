/* SPDX-License-Identifier: MIT */
/* forms.c: compiled by test_header both as C99 and as C++17 (-Wall -Wextra
 * -pedantic -Werror): every form of the header that has a C and a C++ spelling
 * (clndrange_init1d/set1d, 3- and 4-argument clarg_set*, clforka with a
 * scalar, a vector, clmalloc pointers and an int, values of other
 * arithmetic types converted), run on stdcpu. */
#include <stdcl.h>

#include <stdio.h>

static const char* src =
    "__kernel void axpy(float a, float4 v, __global float* x, __global float* y, int n)\n"
    "{ int i = get_global_id(0); if (i < n) y[i] = a * x[i] + y[i] + v.x + v.w; }\n";

int main(void)
{
    CLCONTEXT* cp = stdcpu;
    if (!cp) return 3;
    void* h = clsopen(cp, src, CLLD_NOW);
    cl_kernel k = clsym(cp, h, "axpy", CLLD_NOW);
    if (!k) {
        fprintf(stderr, "%s\n", clerror());
        return 1;
    }
    int n = 256;
    float* x = (float*)clmalloc(cp, n * sizeof(float), 0);
    float* y = (float*)clmalloc(cp, n * sizeof(float), 0);
    for (int i = 0; i < n; ++i) x[i] = (float)i, y[i] = 1.0f;
    cl_float4 v;
    v.s[0] = 0.5f, v.s[1] = 0.0f, v.s[2] = 0.0f, v.s[3] = 0.25f;
    unsigned d = clgetndev(cp) - 1;
    clndrange_t ndr = clndrange_init1d(0, n, 64);
    clmsync(cp, 0, x, CL_MEM_DEVICE | CL_EVENT_WAIT);
    clmsync(cp, 0, y, CL_MEM_DEVICE | CL_EVENT_WAIT);
    /* clforka with a scalar (a double for the float: converted), a vector,
     * two clmalloc pointers and a size_t for the int. */
    size_t nz = (size_t)n;
    if (!clforka(cp, 0, k, &ndr, CL_EVENT_WAIT, 2.0, v, x, y, nz)) {
        fprintf(stderr, "clforka: %s\n", clerror());
        return 1;
    }
    clmsync(cp, 0, y, CL_MEM_HOST | CL_EVENT_WAIT);
    /* The 3- and 4-argument forms, then clfork on the last device. */
    clarg_set(k, 0, 2); /* an int for the float: converted */
    clarg_set(cp, k, 1, v);
    clarg_set_global(k, 2, x);
    clarg_set_global(cp, k, 3, y);
    clarg_set(k, 4, n);
    clndrange_set1d(ndr, 0, n, 64);
    clmsync(cp, d, x, CL_MEM_DEVICE | CL_EVENT_WAIT);
    clmsync(cp, d, y, CL_MEM_DEVICE | CL_EVENT_WAIT);
    if (!clfork(cp, d, k, &ndr, CL_EVENT_NOWAIT)) {
        fprintf(stderr, "clfork: %s\n", clerror());
        return 1;
    }
    clmsync(cp, d, y, CL_MEM_HOST | CL_EVENT_NOWAIT);
    if (stdcl_wait(cp, d, CL_ALL_EVENT) != 0) return 1;
    int bad = 0;
    for (int i = 0; i < n; ++i) bad += y[i] != 4.0f * (float)i + 2.5f;
    clfree(x);
    clfree(y);
    clclose(cp, h);
    printf("%s\n", bad ? "wrong" : "ok");
    return bad != 0;
}
