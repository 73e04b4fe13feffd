// SPDX-License-Identifier: MIT
// vector_grow.cpp: STDCL 1.6 style with <clvector.h>.  Two clvectors are
// filled by push_back, attached to stddev, bound to affine.cl's kernel with
// clarg_set_global and run on device 0 (clfork, clflush, clwait); then they
// are detached, grown by push_back far past their capacity, attached and
// bound again, and run again.  Each pass prints its length, then "i x y"
// per element, with x[i] = (i * i) mod 97 for i < FIRST and 5000 - 2 i after.
#include <stdio.h>
#include <stdcl.h>
#include <clvector.h>

#define FIRST 300
#define SECOND 1700

static int xval(int i)
{
    return i < FIRST ? (i * i) % 97 : 5000 - 2 * i;
}

static int run_pass(CLCONTEXT* cp, cl_kernel k, clvector<int>& x, clvector<int>& y)
{
    x.clmattach(cp);
    y.clmattach(cp);
    x.clarg_set_global(cp, k, 0);
    y.clarg_set_global(cp, k, 1);
    clndrange_t ndr = clndrange_init1d(0, x.size(), 20);
    x.clmsync(cp, 0, CL_MEM_DEVICE | CL_EVENT_NOWAIT);
    clfork(cp, 0, k, &ndr, CL_EVENT_NOWAIT);
    y.clmsync(cp, 0, CL_MEM_HOST | CL_EVENT_NOWAIT);
    clflush(cp, 0, 0);
    if (!clwait(cp, 0, CL_ALL_EVENT)) {
        fprintf(stderr, "vector_grow: clwait: %s\n", clerror());
        return 1;
    }
    printf("%zu\n", x.size());
    for (size_t i = 0; i < x.size(); ++i) printf("%zu %d %d\n", i, x[i], y[i]);
    x.clmdetach();
    y.clmdetach();
    return 0;
}

int main()
{
    CLCONTEXT* cp = stddev;
    void* h = clopen(cp, "affine.cl", CLLD_NOW);
    cl_kernel k = h ? clsym(cp, h, "affine", 0) : 0;
    if (!k) {
        fprintf(stderr, "vector_grow: %s\n", clerror());
        return 1;
    }

    clvector<int> x, y;
    for (int i = 0; i < FIRST; ++i) {
        x.push_back(xval(i));
        y.push_back(-1);
    }
    if (run_pass(cp, k, x, y)) return 1;

    size_t cap = x.capacity();
    for (int i = FIRST; i < SECOND; ++i) {
        x.push_back(xval(i));
        y.push_back(-1);
    }
    if (x.capacity() <= cap) {
        fprintf(stderr, "vector_grow: push_back did not grow the storage\n");
        return 1;
    }
    if (run_pass(cp, k, x, y)) return 1;

    clclose(cp, h);
    return 0;
}
