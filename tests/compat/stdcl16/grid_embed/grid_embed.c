/* SPDX-License-Identifier: MIT */
/* grid_embed.c: STDCL 1.6 style, kernels embedded in the program by clcc.
 * Fills a GW x GH grid with a 2D launch of grid_fill (found through the
 * handle clopen(cp, 0, ...) returns), then sums its rows with grid_rowsum
 * (found with clsym(cp, 0, ...)), both queued on device 0 of stddev without
 * waiting.  Prints "x y g" for each cell (row by row), then "y s" per row. */
#include <stdio.h>
#include <stdcl.h>

#define GW 12
#define GH 10

int main(void)
{
    CLCONTEXT* cp = stddev;
    void* h = clopen(cp, 0, CLLD_NOW);
    cl_kernel fill = h ? clsym(cp, h, "grid_fill", 0) : 0;
    cl_kernel rows = clsym(cp, 0, "grid_rowsum", 0);
    if (!fill || !rows) {
        fprintf(stderr, "grid_embed: %s\n", clerror());
        return 1;
    }

    int w = GW;
    int* g = (int*)clmalloc(cp, GW * GH * sizeof(int), 0);
    int* s = (int*)clmalloc(cp, GH * sizeof(int), CL_MEM_WO);
    if (!g || !s) {
        fprintf(stderr, "grid_embed: clmalloc: %s\n", clerror());
        return 1;
    }

    clarg_set(cp, fill, 0, w);
    clarg_set_global(cp, fill, 1, g);
    clarg_set(cp, rows, 0, w);
    clarg_set_global(cp, rows, 1, g);
    clarg_set_global(cp, rows, 2, s);

    clndrange_t plane = clndrange_init2d(0, GW, 4, 0, GH, 2);
    clndrange_t line = clndrange_init1d(0, GH, 5);
    clfork(cp, 0, fill, &plane, CL_EVENT_NOWAIT);
    clfork(cp, 0, rows, &line, CL_EVENT_NOWAIT);
    clmsync(cp, 0, g, CL_MEM_HOST | CL_EVENT_NOWAIT);
    clmsync(cp, 0, s, CL_MEM_HOST | CL_EVENT_NOWAIT);
    clflush(cp, 0, 0);
    if (!clwait(cp, 0, CL_ALL_EVENT)) {
        fprintf(stderr, "grid_embed: clwait: %s\n", clerror());
        return 1;
    }

    for (int y = 0; y < GH; ++y)
        for (int x = 0; x < GW; ++x) printf("%d %d %d\n", x, y, g[y * GW + x]);
    for (int y = 0; y < GH; ++y) printf("%d %d\n", y, s[y]);

    clfree(g);
    clfree(s);
    clclose(cp, h);
    return 0;
}
