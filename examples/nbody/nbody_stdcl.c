/* SPDX-License-Identifier: MIT */
/* nbody_stdcl.c: what the libstdcl NBody programs share: context choice,
 * kernel file lookup and build, the block kernel's launch, and the
 * one-device run behind --check. */
#include "nbody_stdcl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nbody_common.h"

CONTEXT* nbody_pick_context(const char* name)
{
    if (!name)
        return stdgpu ? stdgpu : stdcpu;
    CONTEXT* cp = !strcmp(name, "gpu") ? stdgpu : !strcmp(name, "cpu") ? stdcpu : stddev;
    if (!cp)
        nbody_usage_error("-c %s: this machine has no such OpenCL context (std%s is NULL)",
                          name, name);
    return cp;
}

const char* nbody_kernel_file(const char* argv0, char* buf, size_t cap)
{
    const char* slash = strrchr(argv0, '/');
    if (access("nbody_kern.cl", R_OK) == 0 || getenv("STDCL_KERNEL_PATH") || !slash)
        return "nbody_kern.cl";
    snprintf(buf, cap, "%.*s/nbody_kern.cl", (int)(slash - argv0), argv0);
    return buf;
}

void (*nbody_exit_hook)(int status);

const char* nbody_why(void)
{
    const char* e = clerror();
    return e ? e : "(no detail)";
}

void nbody_die(const char* what)
{
    fprintf(stderr, "%s: %s failed: %s\n", nbody_prog, what, nbody_why());
    if (nbody_exit_hook)
        nbody_exit_hook(NBODY_EXIT_RUNTIME);
    exit(NBODY_EXIT_RUNTIME);
}

void* nbody_build(CONTEXT* cp, const char* argv0, const nbody_opts* o, int nthread,
                  char* options, size_t cap, double* build_s)
{
    char kbuf[4096];
    nbody_kernel_options(options, cap, nthread, o->clopts);
    double tb = nbody_now();
    void* clh = clopen(cp, nbody_kernel_file(argv0, kbuf, sizeof kbuf), CLLD_NOBUILD);
    if (!clh || !clbuild(cp, clh, options, 0)) {
        fprintf(stderr, "%s: cannot build nbody_kern.cl: %s\n", nbody_prog, nbody_why());
        int status = *o->clopts ? NBODY_EXIT_USAGE : NBODY_EXIT_RUNTIME; /* -o is suspect */
        if (nbody_exit_hook)
            nbody_exit_hook(status);
        exit(status);
    }
    *build_s = nbody_now() - tb;
    return clh;
}

static long gcd(long a, long b)
{
    while (b) {
        long t = a % b;
        a = b;
        b = t;
    }
    return a;
}

int nbody_devs_shape(nbody_devs* m, void* clh)
{
    cl_kernel kinfo = clsym(m->cp, clh, "nbody_info", CLLD_NOW);
    m->krn = clsym(m->cp, clh, "nbody_kern_multi", CLLD_NOW);
    if (!m->krn || !kinfo)
        nbody_die("clsym");
    /* Devices of different types build different variants; the block size
     * must suit all of them. */
    cl_int* info = (cl_int*)clmalloc(m->cp, 8 * sizeof(cl_int), 0);
    clndrange_t ndr1 = clndrange_init1d(0, 1, 1);
    if (!info)
        nbody_die("clmalloc");
    m->gran = 1;
    m->any_gpu = 0;
    for (int d = 0; d < m->k; d++) {
        cl_device_type type = 0;
        clGetDeviceInfo(stdcl_device(m->cp, d), CL_DEVICE_TYPE, sizeof type, &type, NULL);
        m->any_gpu |= (type & CL_DEVICE_TYPE_GPU) != 0;
        if (!clforka(m->cp, d, kinfo, &ndr1, CL_EVENT_WAIT, info) ||
            !clmsync(m->cp, d, info, CL_MEM_HOST | CL_EVENT_WAIT))
            nbody_die("nbody_info");
        m->bpw[d] = info[0];
        m->js[d] = info[1];
        if (!nbody_shape_ok(info, m->nthread)) {
            clfree(info);
            return 0;
        }
        long g = (long)m->bpw[d] * m->nthread;
        m->gran = m->gran / gcd(m->gran, g) * g;
    }
    clfree(info);
    return 1;
}

void nbody_launch_block(const nbody_devs* m, int d, long nb, void* pos_old, void* pos_new,
                        void* vel, void* src, void* acc, int mode)
{
    cl_kernel krn = m->krn;
    clndrange_t ndr = clndrange_init1d(0, nb / m->bpw[d] * m->js[d], m->nthread);
    clarg_set(m->cp, krn, 0, m->dt);
    clarg_set(m->cp, krn, 1, m->eps);
    clarg_set_global(m->cp, krn, 2, pos_old);
    clarg_set_global(m->cp, krn, 3, pos_new);
    clarg_set_global(m->cp, krn, 4, vel);
    clarg_set_local(m->cp, krn, 5, m->nthread * sizeof(cl_float4));
    clarg_set_global(m->cp, krn, 6, src);
    clarg_set_global(m->cp, krn, 7, acc);
    clarg_set(m->cp, krn, 8, mode);
    if (!clfork(m->cp, d, krn, &ndr, CL_EVENT_NOWAIT))
        nbody_die("clfork");
}

void nbody_one_device_run(CONTEXT* cp, void* clh, const nbody_opts* o, int nthread,
                          int steps, const float* pos0, const float* vel0, float* out,
                          float* vout)
{
    cl_kernel krn = clsym(cp, clh, "nbody_kern", CLLD_NOW);
    cl_kernel kinfo = clsym(cp, clh, "nbody_info", CLLD_NOW);
    cl_int* info = (cl_int*)clmalloc(cp, 8 * sizeof(cl_int), 0);
    clndrange_t ndr1 = clndrange_init1d(0, 1, 1);
    if (!krn || !kinfo || !info || !clforka(cp, 0, kinfo, &ndr1, CL_EVENT_WAIT, info) ||
        !clmsync(cp, 0, info, CL_MEM_HOST | CL_EVENT_WAIT))
        nbody_die("one-device setup");
    if (!nbody_shape_ok(info, nthread)) {
        if (nbody_exit_hook)
            nbody_exit_hook(NBODY_EXIT_USAGE);
        exit(NBODY_EXIT_USAGE);
    }
    const long gran = (long)info[0] * nthread;
    const long np = (o->n + gran - 1) / gran * gran;
    clndrange_t ndr = clndrange_init1d(0, np / info[0] * info[1], nthread);
    clfree(info);
    cl_float4* p1 = (cl_float4*)clmalloc(cp, np * sizeof(cl_float4), 0);
    cl_float4* p2 = (cl_float4*)clmalloc(cp, np * sizeof(cl_float4), 0);
    cl_float4* v = (cl_float4*)clmalloc(cp, np * sizeof(cl_float4), 0);
    if (!p1 || !p2 || !v)
        nbody_die("clmalloc");
    nbody_pad(o->n, np, (float*)p1, (float*)v, pos0, vel0, 0);
    float dt = o->dt, eps = o->eps;
    clarg_set(cp, krn, 0, dt);
    clarg_set(cp, krn, 1, eps);
    clarg_set_global(cp, krn, 4, v);
    clarg_set_local(cp, krn, 5, nthread * sizeof(cl_float4));
    clmsync(cp, 0, p1, CL_MEM_DEVICE | CL_EVENT_WAIT);
    clmsync(cp, 0, v, CL_MEM_DEVICE | CL_EVENT_WAIT);
    cl_float4 *cur = p1, *nxt = p2;
    for (int s = 0; s < steps; s++) {
        clarg_set_global(cp, krn, 2, cur);
        clarg_set_global(cp, krn, 3, nxt);
        if (!clfork(cp, 0, krn, &ndr, CL_EVENT_NOWAIT))
            nbody_die("clfork");
        cl_float4* t = cur;
        cur = nxt;
        nxt = t;
    }
    if (!clwait(cp, 0, CL_KERNEL_EVENT) || !clmsync(cp, 0, cur, CL_MEM_HOST | CL_EVENT_WAIT) ||
        !clmsync(cp, 0, v, CL_MEM_HOST | CL_EVENT_WAIT))
        nbody_die("one-device run");
    memcpy(out, cur, 4 * sizeof(float) * o->n);
    memcpy(vout, v, 4 * sizeof(float) * o->n);
    clfree(p1);
    clfree(p2);
    clfree(v);
}
