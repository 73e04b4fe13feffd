/* SPDX-License-Identifier: MIT */
/* image_lookup.c: STDCL 1.6 style.  A TW x TH table of RGBA float texels
 * (x + 1, 2y, xy, 1) is allocated detached, made a 2D image with
 * clmctl(CL_MCTL_SET_IMAGE2D), attached to stddev with clmattach and passed
 * to palette.cl's kernel as an image2d_t; v[i] = (i mod 13) - 6.  Runs on
 * device 0 and prints "i out" for each element. */
#include <stdio.h>
#include <stdcl.h>

#define TW 8
#define TH 4
#define NVAL 256

int main(void)
{
    CLCONTEXT* cp = stddev;
    void* h = clopen(cp, "palette.cl", CLLD_NOW);
    cl_kernel k = h ? clsym(cp, h, "apply_palette", 0) : 0;
    if (!k) {
        fprintf(stderr, "image_lookup: %s\n", clerror());
        return 1;
    }

    float* tab = (float*)clmalloc(0, TW * TH * 4 * sizeof(float), CL_MEM_DETACHED | CL_MEM_RO);
    float* v = (float*)clmalloc(cp, NVAL * sizeof(float), CL_MEM_RO);
    float* out = (float*)clmalloc(cp, NVAL * sizeof(float), CL_MEM_WO);
    if (!tab || !v || !out) {
        fprintf(stderr, "image_lookup: clmalloc: %s\n", clerror());
        return 1;
    }
    for (int y = 0; y < TH; ++y)
        for (int x = 0; x < TW; ++x) {
            float* t = tab + 4 * (y * TW + x);
            t[0] = (float)(x + 1);
            t[1] = (float)(2 * y);
            t[2] = (float)(x * y);
            t[3] = 1.0f;
        }
    size_t tw = TW, th = TH;
    const cl_image_format* rgba_float = 0;
    if (clmctl(tab, CL_MCTL_SET_IMAGE2D, tw, th, rgba_float) < 0 || clmattach(cp, tab) < 0) {
        fprintf(stderr, "image_lookup: table: %s\n", clerror());
        return 1;
    }
    for (int i = 0; i < NVAL; ++i) v[i] = (float)(i % 13 - 6);

    int n = NVAL;
    clarg_set(cp, k, 0, n);
    clarg_set_global(cp, k, 1, v);
    clarg_set_global(cp, k, 2, out);
    clarg_set_global(cp, k, 3, tab);
    clndrange_t ndr = clndrange_init1d(0, NVAL, 64);
    clmsync(cp, 0, tab, CL_MEM_DEVICE | CL_EVENT_NOWAIT);
    clmsync(cp, 0, v, CL_MEM_DEVICE | CL_EVENT_NOWAIT);
    clfork(cp, 0, k, &ndr, CL_EVENT_NOWAIT);
    clmsync(cp, 0, out, CL_MEM_HOST | CL_EVENT_NOWAIT);
    if (!clwait(cp, 0, CL_ALL_EVENT)) {
        fprintf(stderr, "image_lookup: clwait: %s\n", clerror());
        return 1;
    }

    for (int i = 0; i < NVAL; ++i) printf("%d %g\n", i, out[i]);

    clfree(tab);
    clfree(v);
    clfree(out);
    clclose(cp, h);
    return 0;
}
