/* SPDX-License-Identifier: MIT */
/* use_stdcl.c: a user's program against an installed libstdcl (check_install.sh):
 * a kernel that includes <stdcl.h> (found from the installed library's folder)
 * adds two arrays on the first device of stddev; prints "sum ok <version>". */
#include <stdcl.h>
#include <stdio.h>

static const char* src = "#include <stdcl.h>\n"
                         "__kernel void add(__global const int* a, __global const int* b, __global int* c)\n"
                         "{ int i = get_global_id(0); c[i] = a[i] + b[i]; }\n";

int main(void)
{
    CLCONTEXT* cp = stddev ? stddev : stdcpu;
    if (!cp) {
        fprintf(stderr, "no OpenCL device\n");
        return 2;
    }
    void* h = clsopen(cp, src, CLLD_NOW);
    cl_kernel k = h ? clsym(cp, h, "add", CLLD_NOW) : NULL;
    if (!k) {
        fprintf(stderr, "%s\n", clerror());
        return 1;
    }
    enum { N = 256 };
    int* a = (int*)clmalloc(cp, N * sizeof(int), 0);
    int* b = (int*)clmalloc(cp, N * sizeof(int), 0);
    int* c = (int*)clmalloc(cp, N * sizeof(int), 0);
    if (!a || !b || !c) {
        fprintf(stderr, "%s\n", clerror());
        return 1;
    }
    for (int i = 0; i < N; i++) a[i] = i, b[i] = 2 * i, c[i] = -1;
    clndrange_t ndr = clndrange_init1d(0, N, 64);
    clmsync(cp, 0, a, CL_MEM_DEVICE | CL_EVENT_NOWAIT);
    clmsync(cp, 0, b, CL_MEM_DEVICE | CL_EVENT_NOWAIT);
    clforka(cp, 0, k, &ndr, CL_EVENT_NOWAIT, a, b, c);
    clmsync(cp, 0, c, CL_MEM_HOST | CL_EVENT_NOWAIT);
    if (stdcl_wait(cp, 0, CL_ALL_EVENT) != 0) {
        fprintf(stderr, "%s\n", clerror());
        return 1;
    }
    for (int i = 0; i < N; i++)
        if (c[i] != 3 * i) {
            fprintf(stderr, "c[%d] = %d, want %d\n", i, c[i], 3 * i);
            return 1;
        }
    printf("sum ok %s\n", stdcl_version());
    clfree(a);
    clfree(b);
    clfree(c);
    clclose(cp, h);
    return 0;
}
