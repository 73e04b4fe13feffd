/* SPDX-License-Identifier: MIT */
/* particle_bins.c: particles binned by the cell of a grid they lie in, the
 * first step of a short-range force or a collision search: a kernel gives each
 * particle its cell, clsort_by_key orders the particles' indices by cell (a
 * stable sort: each cell's particles stay in index order), a kernel marks
 * where each cell's run starts, and clscan numbers the runs (an exclusive sum
 * of the marks), so that a last kernel can list the occupied cells with the
 * first particle of each and gather the particles in cell order.  Everything
 * stays on device 0 until the lists come back.
 *
 *   particle_bins [-n particles] [-g cells per side] [--check] */
#include <stdio.h>
#include <stdlib.h>

#include <stdcl.h>

#include "../example_args.h"

static unsigned cell_of_host(const cl_float4* p, unsigned g)
{
    unsigned c[3];
    for (int k = 0; k < 3; k++) {
        float v = k == 0 ? p->s[0] : k == 1 ? p->s[1] : p->s[2];
        unsigned u = (unsigned)(v * (float)g);
        c[k] = u < g ? u : g - 1;
    }
    return (c[2] * g + c[1]) * g + c[0];
}

int main(int argc, char** argv)
{
    int n = 1000000, g = 64, check = 0;
    const example_opt opts[] = {EXAMPLE_INT("-n", "particles", &n, 1, INT_MAX),
                                EXAMPLE_INT("-g", "cells per side", &g, 1, 1024), EXAMPLE_FLAG("--check", &check),
                                EXAMPLE_END};
    if (!example_args(argc, argv, opts)) return 2;
    CLCONTEXT* cp = example_context("dev", NULL);
    if (!cp) return 1;
    void* h = clopen(cp, "particle_bins.cl", CLLD_NOW);
    cl_kernel k_cell = h ? clsym(cp, h, "cell_of", 0) : NULL;
    cl_kernel k_starts = h ? clsym(cp, h, "run_starts", 0) : NULL;
    cl_kernel k_pack = h ? clsym(cp, h, "pack", 0) : NULL;
    size_t un = (size_t)n;
    cl_float4* pos = (cl_float4*)clmalloc(cp, un * sizeof(cl_float4), CL_MEM_RO);
    cl_float4* sorted = (cl_float4*)clmalloc(cp, un * sizeof(cl_float4), CL_MEM_WO);
    cl_uint* cell = (cl_uint*)clmalloc(cp, un * sizeof(cl_uint), 0);
    cl_uint* idx = (cl_uint*)clmalloc(cp, un * sizeof(cl_uint), 0);
    cl_uint* flag = (cl_uint*)clmalloc(cp, un * sizeof(cl_uint), 0);
    cl_uint* run = (cl_uint*)clmalloc(cp, un * sizeof(cl_uint), 0);
    cl_uint* run_cell = (cl_uint*)clmalloc(cp, un * sizeof(cl_uint), CL_MEM_WO);
    cl_uint* run_start = (cl_uint*)clmalloc(cp, un * sizeof(cl_uint), CL_MEM_WO);
    if (!k_cell || !k_starts || !k_pack || !pos || !sorted || !cell || !idx || !flag || !run || !run_cell ||
        !run_start) {
        fprintf(stderr, "setup: %s\n", clerror());
        return 1;
    }
    srand(7);
    for (size_t i = 0; i < un; i++)
        for (int k = 0; k < 4; k++) pos[i].s[k] = k < 3 ? (float)rand() / ((float)RAND_MAX + 1.0f) : 1.0f;
    const cl_uint nn = (cl_uint)n, gg = (cl_uint)g;
    clndrange_t ndr = clndrange_init1d(0, un, 0);
    /* Each step waits for the one before it on device 0 (its queue keeps the
     * order): NOWAIT throughout, one wait at the end. */
    int ok = clmsync(cp, 0, pos, CL_MEM_DEVICE | CL_EVENT_NOWAIT) &&
             clforka(cp, 0, k_cell, &ndr, CL_EVENT_NOWAIT, pos, cell, idx, nn, gg) &&
             clsort_by_key(cp, 0, cell, idx, un, CL_REDUCE_UINT, sizeof(cl_uint), CL_EVENT_NOWAIT) == 0 &&
             clforka(cp, 0, k_starts, &ndr, CL_EVENT_NOWAIT, cell, flag, nn) &&
             clscan(cp, 0, flag, run, un, CL_REDUCE_UINT, CL_REDUCE_SUM, CL_SCAN_EXCLUSIVE | CL_EVENT_NOWAIT) == 0 &&
             clforka(cp, 0, k_pack, &ndr, CL_EVENT_NOWAIT, cell, flag, run, idx, pos, run_cell, run_start, sorted,
                     nn) &&
             clmsync(cp, 0, run, CL_MEM_HOST | CL_EVENT_NOWAIT) && clmsync(cp, 0, flag, CL_MEM_HOST | CL_EVENT_NOWAIT) &&
             clmsync(cp, 0, run_cell, CL_MEM_HOST | CL_EVENT_NOWAIT) &&
             clmsync(cp, 0, run_start, CL_MEM_HOST | CL_EVENT_NOWAIT) &&
             clmsync(cp, 0, sorted, CL_MEM_HOST | CL_EVENT_NOWAIT) && stdcl_wait(cp, 0, CL_ALL_EVENT) >= 0;
    if (!ok) {
        fprintf(stderr, "particle_bins: %s\n", clerror());
        return 1;
    }
    size_t runs = run[un - 1] + flag[un - 1]; /* the exclusive scan's last entry plus the last mark */
    printf("%d particles in %zu of %d^3 cells (%.2f a cell occupied)\n", n, runs, g, (double)n / (double)runs);
    int status = 0;
    if (check) {
        /* Every particle where the lists say: the gathered particles lie in
         * their run's cell, cells rise from run to run, each particle appears
         * once (the counts per cell match a host count). */
        size_t cells = (size_t)g * g * g, bad = 0;
        size_t* count = (size_t*)calloc(cells, sizeof(size_t));
        for (size_t i = 0; i < un; i++) count[cell_of_host(&pos[i], gg)]++;
        for (size_t r = 0; r < runs; r++) {
            size_t end = r + 1 < runs ? run_start[r + 1] : un;
            if (r > 0 && run_cell[r] <= run_cell[r - 1]) bad++;
            if (end - run_start[r] != count[run_cell[r]]) bad++;
            for (size_t i = run_start[r]; i < end; i++)
                if (cell_of_host(&sorted[i], gg) != run_cell[r]) bad++;
        }
        status = bad ? 1 : 0;
        printf("check of %zu runs against a host count: %zu wrong: %s\n", runs, bad, status ? "FAIL" : "PASS");
        free(count);
    }
    clfree(pos);
    clfree(sorted);
    clfree(cell);
    clfree(idx);
    clfree(flag);
    clfree(run);
    clfree(run_cell);
    clfree(run_start);
    clclose(cp, h);
    return status;
}
