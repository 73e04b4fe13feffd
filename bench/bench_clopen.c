/* SPDX-License-Identifier: MIT */
/* bench_clopen.c: time of clopen (and of the first launch) of the NBody
 * kernel in this fresh process.  Prints "clopen_ms=<x> launch1_ms=<y>". */
#include <stdcl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}
int main(int argc, char** argv)
{
    const char* file = argc > 1 ? argv[1] : "nbody_kern.cl";
    CLCONTEXT* cp = stdgpu ? stdgpu : stdcpu;
    if (!cp) {
        fprintf(stderr, "no context\n");
        return 1;
    }
    double t0 = now_ms();
    void* h = clopen(cp, file, CLLD_NOW);
    double t1 = now_ms();
    if (!h) {
        fprintf(stderr, "clopen: %s\n", clerror());
        return 1;
    }
    cl_kernel ki = clsym(cp, h, "nbody_info", 0);
    cl_kernel k = clsym(cp, h, "nbody_kern", 0);
    int* info = (int*)clmalloc(cp, 8 * sizeof(int), 0);
    clndrange_t one = clndrange_init1d(0, 1, 1);
    clforka(cp, 0, ki, &one, CL_EVENT_WAIT, info);
    clmsync(cp, 0, info, CL_MEM_HOST | CL_EVENT_WAIT);
    int bpw = info[0], jsplit = info[1], wg = info[2] ? info[2] : 64;
    int n = 8192;
    float *pos = (float*)clmalloc(cp, n * 16, 0), *pos2 = (float*)clmalloc(cp, n * 16, 0),
          *vel = (float*)clmalloc(cp, n * 16, 0);
    for (int i = 0; i < 4 * n; i++) {
        pos[i] = (float)((i * 7919) % 1000) / 1000.0f;
        vel[i] = 0;
    }
    clmsync(cp, 0, pos, CL_MEM_DEVICE | CL_EVENT_WAIT);
    clmsync(cp, 0, vel, CL_MEM_DEVICE | CL_EVENT_WAIT);
    size_t items = (size_t)n / bpw * jsplit;
    if (items < (size_t)wg) wg = (int)items;
    clndrange_t ndr = clndrange_init1d(0, items, wg);
    float dt = 0.01f, eps = 0.01f;
    clarg_set_local(cp, k, 5, (size_t)wg * 16);
    double t2 = now_ms();
    cl_event e = clforka(cp, 0, k, &ndr, CL_EVENT_WAIT, dt, eps, pos, pos2, vel);
    double t3 = now_ms();
    cl_event e2 = clforka(cp, 0, k, &ndr, CL_EVENT_WAIT, dt, eps, pos2, pos, vel);
    double t4 = now_ms();
    if (!e || !e2) {
        fprintf(stderr, "launch: %s\n", clerror());
        return 1;
    }
    printf("clopen_ms=%.1f launch1_ms=%.1f launch2_ms=%.1f\n", t1 - t0, t3 - t2, t4 - t3);
    clclose(cp, h);
    return 0;
}
