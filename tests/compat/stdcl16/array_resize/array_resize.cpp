// SPDX-License-Identifier: MIT
// array_resize.cpp: STDCL 1.6 style with <clmulti_array.h>.  A 2D grid
// g[r][c] = ((7 r + 3 c^2) mod 23) - 11 and a 1D result are attached to
// stddev and run through row_span.cl (the column count set with clarg_set,
// the arrays with clarg_set_global) on the last device; then both are
// detached, resized to more rows and columns, refilled, attached and bound
// again, and run again.  Each pass prints "rows cols", then "r span" per row.
#include <stdio.h>
#include <stdcl.h>
#include <clmulti_array.h>

static int run_pass(CLCONTEXT* cp, unsigned int dev, cl_kernel k, clmulti_array<int, 2>& g,
                    clmulti_array<int, 1>& span)
{
    int rows = (int)g.shape()[0], cols = (int)g.shape()[1];
    for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) g[r][c] = (7 * r + 3 * c * c) % 23 - 11;
    g.clmattach(cp);
    span.clmattach(cp);
    clarg_set(cp, k, 0, cols);
    g.clarg_set_global(cp, k, 1);
    span.clarg_set_global(cp, k, 2);
    clndrange_t ndr = clndrange_init1d(0, rows, 10);
    g.clmsync(cp, dev, CL_MEM_DEVICE | CL_EVENT_NOWAIT);
    clfork(cp, dev, k, &ndr, CL_EVENT_NOWAIT);
    span.clmsync(cp, dev, CL_MEM_HOST | CL_EVENT_NOWAIT);
    clflush(cp, dev, 0);
    if (!clwait(cp, dev, CL_ALL_EVENT)) {
        fprintf(stderr, "array_resize: clwait: %s\n", clerror());
        return 1;
    }
    printf("%d %d\n", rows, cols);
    for (int r = 0; r < rows; ++r) printf("%d %d\n", r, span[r]);
    g.clmdetach();
    span.clmdetach();
    return 0;
}

int main()
{
    CLCONTEXT* cp = stddev;
    unsigned int dev = clgetndev(cp) - 1;
    void* h = clopen(cp, "row_span.cl", CLLD_NOW);
    cl_kernel k = h ? clsym(cp, h, "row_span", 0) : 0;
    if (!k) {
        fprintf(stderr, "array_resize: %s\n", clerror());
        return 1;
    }

    clmulti_array<int, 2> g(boost::extents[40][16]);
    clmulti_array<int, 1> span(boost::extents[40]);
    if (run_pass(cp, dev, k, g, span)) return 1;

    g.resize(boost::extents[90][24]);
    span.resize(boost::extents[90]);
    if (run_pass(cp, dev, k, g, span)) return 1;

    clclose(cp, h);
    return 0;
}
