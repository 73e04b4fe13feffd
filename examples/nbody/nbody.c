/* SPDX-License-Identifier: MIT */
/* nbody.c: the tutorial's NBody program on one device, STDCL style.
 *
 * The default context stdgpu (or stdcpu when there is no GPU) is ready
 * before main; the kernel file is opened like a shared object (clopen,
 * clbuild with our options, clsym); positions and velocities live in
 * clmalloc memory that both the host and the kernel use; the kernel runs in
 * bursts of clfork calls on double-buffered positions, joined by clwait;
 * clmsync moves the data between the host and the device.
 *
 *   nbody [-n N] [-s STEPS] [-c gpu|cpu|dev] [-w WG] [-o "OPTIONS"]
 *         [--check] [--bench] [--png FILE] ...     (nbody --help)
 *
 * The kernel file nbody_kern.cl is found in the current folder, then in
 * STDCL_KERNEL_PATH, then next to this program. */
#include <stdcl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nbody_common.h"
#include "nbody_stdcl.h"

/* libstdcl's message for the last failure (clerror() gives it once, like
 * dlerror(), and NULL when there is none). */
static const char* why(void)
{
    const char* e = clerror();
    return e ? e : "(no detail)";
}

int main(int argc, char** argv)
{
    nbody_opts o;
    nbody_parse_args(argc, argv, &o, NBODY_OPT_OPENCL,
                     "NBody on one OpenCL device with libstdcl (the tutorial's program).");

    CONTEXT* cp = nbody_pick_context(o.ctx);
    if (!cp) {
        fprintf(stderr, "%s: no OpenCL GPU or CPU device (stdgpu and stdcpu are NULL)\n", nbody_prog);
        return NBODY_EXIT_RUNTIME;
    }
    cl_device_type type = 0;
    char devname[256] = "?";
    clGetDeviceInfo(stdcl_device(cp, 0), CL_DEVICE_TYPE, sizeof type, &type, NULL);
    clGetDeviceInfo(stdcl_device(cp, 0), CL_DEVICE_NAME, sizeof devname, devname, NULL);
    const int is_gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
    nbody_default_size(&o, is_gpu);
    const int nthread = o.wg ? o.wg : is_gpu ? 256 : 8; /* work-group size */

    /* Load and build the kernels with our options (-o adds to them). */
    char kbuf[4096], options[2048];
    nbody_kernel_options(options, sizeof options, nthread, o.clopts);
    double tb = nbody_now();
    void* clh = clopen(cp, nbody_kernel_file(argv[0], kbuf, sizeof kbuf), CLLD_NOBUILD);
    if (!clh || !clbuild(cp, clh, options, 0)) {
        fprintf(stderr, "%s: cannot build nbody_kern.cl: %s\n", nbody_prog, why());
        return *o.clopts ? NBODY_EXIT_USAGE : NBODY_EXIT_RUNTIME; /* -o is suspect */
    }
    cl_kernel krn = clsym(cp, clh, "nbody_kern", CLLD_NOW);
    cl_kernel kinfo = clsym(cp, clh, "nbody_info", CLLD_NOW);
    if (!krn || !kinfo) {
        fprintf(stderr, "%s: kernel missing: %s\n", nbody_prog, why());
        return NBODY_EXIT_RUNTIME;
    }
    double build_s = nbody_now() - tb;

    /* The kernel variant says how many bodies each work-item takes. */
    cl_int* info = (cl_int*)clmalloc(cp, 8 * sizeof(cl_int), 0);
    clndrange_t ndr1 = clndrange_init1d(0, 1, 1);
    if (!info || !clforka(cp, 0, kinfo, &ndr1, CL_EVENT_WAIT, info) ||
        !clmsync(cp, 0, info, CL_MEM_HOST | CL_EVENT_WAIT)) {
        fprintf(stderr, "%s: nbody_info failed: %s\n", nbody_prog, why());
        return NBODY_EXIT_RUNTIME;
    }
    const int bpw = info[0], jsplit = info[1];
    if (!nbody_shape_ok(info, nthread)) return NBODY_EXIT_USAGE;
    clfree(info);

    /* Bodies, padded with zero-mass ones to a whole number of work-groups. */
    const long gran = (long)bpw * nthread;
    const long nparticle = (o.n + gran - 1) / gran * gran;
    const size_t nparticle_sz = nparticle * sizeof(cl_float4);
    cl_float4* pos1 = (cl_float4*)clmalloc(cp, nparticle_sz, 0);
    cl_float4* pos2 = (cl_float4*)clmalloc(cp, nparticle_sz, 0);
    cl_float4* vel = (cl_float4*)clmalloc(cp, nparticle_sz, 0);
    float* pos0 = (float*)malloc(4 * sizeof(float) * o.n); /* for --check */
    float* vel0 = (float*)malloc(4 * sizeof(float) * o.n);
    if (!pos1 || !pos2 || !vel || !pos0 || !vel0) {
        fprintf(stderr, "%s: cannot allocate %ld bodies: %s\n", nbody_prog, nparticle, why());
        return NBODY_EXIT_RUNTIME;
    }
    nbody_init(o.n, pos0, vel0, o.ic, o.seed);
    nbody_pad(o.n, nparticle, (float*)pos1, (float*)vel, pos0, vel0, 0);

    /* Index space and the arguments that do not change. */
    clndrange_t ndr = clndrange_init1d(0, nparticle / bpw * jsplit, nthread);
    float dt = o.dt, eps = o.eps;
    clarg_set(krn, 0, dt);
    clarg_set(krn, 1, eps);
    clarg_set_global(krn, 4, vel);
    clarg_set_local(krn, 5, nthread * sizeof(cl_float4));

    clmsync(cp, 0, pos1, CL_MEM_DEVICE | CL_EVENT_WAIT | CL_EVENT_RELEASE);
    clmsync(cp, 0, vel, CL_MEM_DEVICE | CL_EVENT_WAIT | CL_EVENT_RELEASE);

    if (!o.quiet)
        fprintf(stderr,
                "%s: %s, N=%ld (padded to %ld), work-group %d, %d bodies/work-item, "
                "build %.2f s, options: %s\n",
                nbody_prog, devname, o.n, nparticle, nthread, bpw, build_s, options);

    /* Time steps in bursts of clfork calls joined by clwait, swapping the
     * position buffers at each step; cur holds the latest positions (the
     * tutorial swaps in pairs so that pos1 does; any burst length works). */
    cl_float4* cur = pos1;
    cl_float4* nxt = pos2;
    const int warm = o.bench ? o.burst : 0; /* first launches compile/codegen */
    const int total = warm + o.steps;
    nbody_timing tim = {0};
    nbody_progress progress;
    nbody_progress_start(&progress, o.n, o.steps, o.quiet);
    int step = 0;
    while (step < total) {
        int nburst = step < warm ? warm - step : o.burst;
        if (step + nburst > total) nburst = total - step;
        double t0 = nbody_now();
        for (int burst = 0; burst < nburst; burst++) {
            clarg_set_global(krn, 2, cur);
            clarg_set_global(krn, 3, nxt);
            if (!clfork(cp, 0, krn, &ndr, CL_EVENT_NOWAIT)) {
                fprintf(stderr, "%s: clfork failed: %s\n", nbody_prog, why());
                return NBODY_EXIT_RUNTIME;
            }
            cl_float4* t = cur;
            cur = nxt;
            nxt = t;
        }
        if (!clwait(cp, 0, CL_KERNEL_EVENT | CL_EVENT_RELEASE)) {
            fprintf(stderr, "%s: kernel failed: %s\n", nbody_prog, why());
            return NBODY_EXIT_RUNTIME;
        }
        double t1 = nbody_now();
        if (step >= warm) nbody_timing_add(&tim, t1 - t0, nburst);
        step += nburst;
        if (step > warm) nbody_progress_step(&progress, step - warm);
    }
    clmsync(cp, 0, cur, CL_MEM_HOST | CL_EVENT_WAIT | CL_EVENT_RELEASE);
    clmsync(cp, 0, vel, CL_MEM_HOST | CL_EVENT_WAIT | CL_EVENT_RELEASE);

    char extra[128];
    snprintf(extra, sizeof extra, "device=%s wg=%d bpw=%d", is_gpu ? "gpu" : "cpu", nthread, bpw);
    nbody_summary("stdcl", &o, 1, &tim, extra);

    int rc = NBODY_EXIT_OK;
    if (o.check &&
        !nbody_check("stdcl vs double reference", o.n, total, pos0, vel0, (const float*)cur, (const float*)vel, o.dt,
                     o.eps))
        rc = NBODY_EXIT_FAIL;
    if (o.png && nbody_png(o.png, o.n, (const float*)cur, o.png_size) != 0) rc = rc ? rc : NBODY_EXIT_RUNTIME;

    nbody_timing_free(&tim);
    clclose(cp, clh);
    clfree(pos1);
    clfree(pos2);
    clfree(vel);
    free(pos0);
    free(vel0);
    fflush(stdout); /* before the library's exit-time clean-up runs */
    return rc;
}
