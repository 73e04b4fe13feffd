/* SPDX-License-Identifier: MIT */
/* template_reduce.c: the OpenCL for Lua guide's sum of molecule velocities,
 * with its kernel made from a template at run time: the host substitutes N,
 * the work-group size and the global size, and unrolls the pairwise sum in
 * __local memory (the guide's Templet "|while i > 1 do" loop), then builds
 * the text with clsopen_named so that the compiler's messages name it, and
 * prints the build's warnings (clbuildlog), as the guide asks for even when
 * the build succeeds.  The per-group partial sums are added with clreduce.
 *
 *   template_reduce [-n molecules] [--check]     (double precision) */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include <stdcl.h>

#include "../example_args.h"

/* Appends printf-style text to a growing buffer. */
static void put(char** s, size_t* len, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int need = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    *s = (char*)realloc(*s, *len + (size_t)need + 1);
    va_start(ap, fmt);
    vsnprintf(*s + *len, (size_t)need + 1, fmt, ap);
    va_end(ap);
    *len += (size_t)need;
}

/* The template, expanded: ${N}, ${work_size}, ${glob_size} and the loop. */
static char* expand(long n, int work_size, long glob_size)
{
    char* s = NULL;
    size_t len = 0;
    put(&s, &len, "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n");
    put(&s, &len, "__kernel void sum(__global const double* restrict d_v, __global double* restrict d_en)\n{\n");
    put(&s, &len, "    const long gid = get_global_id(0);\n    const long lid = get_local_id(0);\n");
    put(&s, &len, "    const long wid = get_group_id(0);\n    __local double l_en[%d];\n\n", work_size);
    put(&s, &len, "    double en = 0;\n    for (long i = gid; i < %ld; i += %ld) {\n", n, glob_size);
    put(&s, &len, "        double3 v = vload3(i, d_v);\n        en += dot(v, v);\n    }\n");
    put(&s, &len, "    l_en[lid] = en;\n    barrier(CLK_LOCAL_MEM_FENCE);\n\n");
    for (int i = work_size / 2; i >= 1; i /= 2)
        put(&s, &len, "    if (lid < %d) l_en[lid] += l_en[lid + %d];\n    barrier(CLK_LOCAL_MEM_FENCE);\n", i, i);
    put(&s, &len, "\n    if (lid == 0) d_en[wid] = l_en[0];\n}\n");
    return s;
}

static double normal(void)
{
    double u = (rand() + 1.0) / (RAND_MAX + 2.0), v = (rand() + 1.0) / (RAND_MAX + 2.0);
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

int main(int argc, char** argv)
{
    long n = 1000000;
    int check = 0;
    const example_opt opts[] = {EXAMPLE_LONG("-n", "molecules", &n, 1, LONG_MAX), EXAMPLE_FLAG("--check", &check),
                                EXAMPLE_END};
    if (!example_args(argc, argv, opts)) return 2;
    CLCONTEXT* cp = example_context("dev", NULL);
    if (!cp) return 1;
    const int work_size = 128, num_groups = 512;
    const long glob_size = (long)work_size * num_groups;
    char* src = expand(n, work_size, glob_size);
    void* h = clsopen_named(cp, src, "sum.cl", CLLD_NOW);
    free(src);
    if (!h) {
        fprintf(stderr, "build: %s\n", clerror());
        return 1;
    }
    const char* log = clbuildlog(cp, h, 0);
    if (log && *log) fprintf(stderr, "compiler log of sum.cl:\n%s", log);
    cl_kernel k = clsym(cp, h, "sum", 0);
    double* d_v = (double*)clmalloc(cp, (size_t)n * 3 * sizeof(double), CL_MEM_RO);
    double* d_en = (double*)clmalloc(cp, (size_t)num_groups * sizeof(double), 0);
    if (!k || !d_v || !d_en) {
        fprintf(stderr, "setup: %s\n", clerror());
        return 1;
    }
    srand(42);
    for (long i = 0; i < 3 * n; i++) d_v[i] = normal(); /* Maxwell-Boltzmann, kT/m = 1 */
    clmsync(cp, 0, d_v, CL_MEM_DEVICE);
    clndrange_t ndr = clndrange_init1d(0, glob_size, work_size);
    if (!clforka(cp, 0, k, &ndr, CL_EVENT_WAIT, d_v, d_en)) {
        fprintf(stderr, "clforka: %s\n", clerror());
        return 1;
    }
    double sum = 0;
    if (clreduce(cp, 0, d_en, num_groups, CL_REDUCE_DOUBLE, CL_REDUCE_SUM, &sum) != 0) {
        fprintf(stderr, "clreduce: %s\n", clerror());
        return 1;
    }
    printf("%ld molecules: mean kinetic energy %.10g (exact 1.5 within %.1g)\n", n, 0.5 * sum / n,
           3.0 / sqrt((double)n));
    int status = 0;
    if (check) {
        double host = 0;
        for (long i = 0; i < 3 * n; i++) host += d_v[i] * d_v[i];
        double rel = fabs(sum - host) / host;
        status = rel < 1e-12 ? 0 : 1;
        printf("check vs host sum: relative difference %.2e: %s\n", rel, status ? "FAIL" : "PASS");
    }
    clfree(d_v);
    clfree(d_en);
    clclose(cp, h);
    return status;
}
