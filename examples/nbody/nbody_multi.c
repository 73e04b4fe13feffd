/* SPDX-License-Identifier: MIT */
/* nbody_multi.c: NBody on k devices of one context, STDCL style.
 *
 * The tutorial's two-device program generalised to k devices.  The bodies
 * are cut into k blocks; device d owns block d (its velocities and its
 * positions' updates).  Each block's positions live in their own clmalloc
 * allocation, so clmsync moves exactly one block: every device of the
 * context holds its own copy of every allocation, and nothing moves between
 * devices except through the host.
 *
 * One step on device d is k launches of nbody_kern_multi over d's bodies,
 * one per source block of positions: first its own block (already on the
 * device: it computed it), then the other devices' blocks once they arrive.
 * The first launch starts the sum, the last one updates and writes d's new
 * positions, which clmsync then copies to the host for the others:
 *
 *     device d, step t:   kernel(own block)              starts at once
 *                         clmsync(block e -> d)  e != d  host copy from step t-1
 *                         kernel(block e)        e != d
 *                         clmsync(d's new block -> host)
 *
 * Overlap: the host enqueues the own-block kernels of step t on every
 * device before it waits for the previous step's transfers, so each device
 * computes while the host collects and forwards the other blocks, and one
 * device's transfers run while the others compute.  On a device with memory
 * of its own, libstdcl's transfer queue also runs the forwarded blocks'
 * copies while that device's own-block kernel runs (STDCL_OVERLAP=0: one
 * queue, one after the other).
 * Positions rotate through three buffers, not two: a device may start step
 * t+1 (writing buffer (t+2)%3) while another still reads step t's sources
 * (buffer t%3); on devices that share host memory (PoCL: clmsync has
 * nothing to copy) all devices see one copy, and two buffers would race.
 *
 *   nbody_multi [-d K] [-n N] [-s STEPS] [-c gpu|cpu|dev] [-w WG]
 *               [-o "OPTIONS"] [--check] [--bench] [--png FILE] ...
 *
 * --check also runs the same steps on one device with the one-device
 * kernel (as nbody does) and compares all three results. */
#include <stdcl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nbody_common.h"
#include "nbody_stdcl.h"

#define NRING 3 /* position buffers per block */

/* Everything about one run. */
typedef struct {
    nbody_devs dv;            /* the devices and the block kernel */
    long nb;                  /* bodies per block (padded) */
    long cnt[NBODY_MAXDEV], off[NBODY_MAXDEV]; /* real bodies of each block, first index */
    cl_float4* pos[NRING][NBODY_MAXDEV];
    cl_float4* vel[NBODY_MAXDEV];
    cl_float4* acc[NBODY_MAXDEV];
} multi_t;

/* Launches nbody_kern_multi on device d: d's bodies pulled by block `src`
 * of ring buffer `in`; the last launch of a step writes ring buffer `out`. */
static void launch(multi_t* m, int d, int in, int out, int src, int mode)
{
    nbody_launch_block(&m->dv, d, m->nb, m->pos[in][d], m->pos[out][d], m->vel[d],
                       m->pos[in][src], m->acc[d], mode);
}

/* One time step t on all devices (see the top of the file). */
static void multi_step(multi_t* m, int t)
{
    const int k = m->dv.k, in = t % NRING, out = (t + 1) % NRING;
    /* 1. Own blocks: on each device already. */
    for (int d = 0; d < k; d++)
        launch(m, d, in, out, d, NBODY_FIRST | (k == 1 ? NBODY_LAST : 0));
    if (k == 1)
        return;
    /* 2. The blocks computed at step t-1 must have reached the host; with
     *    them every kernel and transfer of step t-1 is done, so no device
     *    still reads buffer `out` (step t-2's sources) when it is rewritten. */
    for (int d = 0; d < k; d++)
        if (!clwait(m->dv.cp, d, CL_MEM_EVENT))
            nbody_die("transfer");
    /* 3. Forward the other blocks, pull by them, fetch the new own block. */
    for (int d = 0; d < k; d++) {
        for (int r = 1; r < k; r++) {
            int e = (d + r) % k;
            if (!clmsync(m->dv.cp, d, m->pos[in][e], CL_MEM_DEVICE | CL_EVENT_NOWAIT))
                nbody_die("clmsync to device");
        }
        for (int r = 1; r < k; r++)
            launch(m, d, in, out, (d + r) % k, r == k - 1 ? NBODY_LAST : 0);
        if (!clmsync(m->dv.cp, d, m->pos[out][d], CL_MEM_HOST | CL_EVENT_NOWAIT))
            nbody_die("clmsync to host");
        clflush(m->dv.cp, d, 0);
    }
}

/* Runs `steps` steps in bursts, timing each burst after `warm` steps. */
static int multi_run(multi_t* m, const nbody_opts* o, int warm, nbody_timing* tim)
{
    const int total = warm + o->steps;
    nbody_progress progress;
    nbody_progress_start(&progress, o->n, o->steps, o->quiet);
    int t = 0;
    while (t < total) {
        int nburst = t < warm ? warm - t : o->burst;
        if (t + nburst > total)
            nburst = total - t;
        double t0 = nbody_now();
        for (int s = 0; s < nburst; s++)
            multi_step(m, t + s);
        for (int d = 0; d < m->dv.k; d++)
            if (!clwait(m->dv.cp, d, CL_ALL_EVENT))
                nbody_die("clwait");
        double t1 = nbody_now();
        if (t >= warm && tim)
            nbody_timing_add(tim, t1 - t0, nburst);
        t += nburst;
        if (t > warm)
            nbody_progress_step(&progress, t - warm);
    }
    /* With k > 1 every step ends by copying each new block to the host;
     * with one device, fetch the last positions now. */
    if (m->dv.k == 1 && !clmsync(m->dv.cp, 0, m->pos[total % NRING][0], CL_MEM_HOST | CL_EVENT_WAIT))
        nbody_die("clmsync to host");
    return total;
}

int main(int argc, char** argv)
{
    nbody_opts o;
    nbody_parse_args(argc, argv, &o, NBODY_OPT_OPENCL | NBODY_OPT_DEVICES,
                     "NBody on K devices of one context with libstdcl: each device owns\n"
                     "N/K bodies and receives the others' positions through clmsync.");

    multi_t m;
    memset(&m, 0, sizeof m);
    m.dv.cp = nbody_pick_context(o.ctx);
    if (!m.dv.cp) {
        fprintf(stderr, "%s: no OpenCL GPU or CPU device (stdgpu and stdcpu are NULL)\n",
                nbody_prog);
        return NBODY_EXIT_RUNTIME;
    }
    const int ndev = (int)clgetndev(m.dv.cp);
    if (o.ndev > ndev)
        nbody_usage_error("-d %d: the context has only %d device(s)", o.ndev, ndev);
    m.dv.k = o.ndev ? o.ndev : ndev;
    if (m.dv.k > NBODY_MAXDEV)
        m.dv.k = NBODY_MAXDEV;

    int any_gpu = 0;
    char devname[256] = "?";
    for (int d = 0; d < m.dv.k; d++) {
        cl_device_type type = 0;
        clGetDeviceInfo(stdcl_device(m.dv.cp, d), CL_DEVICE_TYPE, sizeof type, &type, NULL);
        any_gpu |= (type & CL_DEVICE_TYPE_GPU) != 0;
    }
    clGetDeviceInfo(stdcl_device(m.dv.cp, 0), CL_DEVICE_NAME, sizeof devname, devname, NULL);
    nbody_default_size(&o, any_gpu);
    if (o.n < m.dv.k)
        nbody_usage_error("-n %ld: fewer bodies than devices (%d)", o.n, m.dv.k);
    m.dv.nthread = o.wg ? o.wg : any_gpu ? 256 : 8;
    m.dv.dt = o.dt;
    m.dv.eps = o.eps;

    /* Kernels, built for every device of the context with our options, and
     * each device's variant (devices of different types build different
     * variants; the block size must suit all of them). */
    char options[2048];
    double build_s = 0;
    void* clh = nbody_build(m.dv.cp, argv[0], &o, m.dv.nthread, options, sizeof options, &build_s);
    if (!nbody_devs_shape(&m.dv, clh))
        return NBODY_EXIT_USAGE;

    /* Blocks: as even as possible, each padded to the same size. */
    long biggest = 0;
    for (int d = 0, off = 0; d < m.dv.k; d++) {
        m.cnt[d] = o.n / m.dv.k + (d < o.n % m.dv.k);
        m.off[d] = off;
        off += m.cnt[d];
        if (m.cnt[d] > biggest)
            biggest = m.cnt[d];
    }
    m.nb = (biggest + m.dv.gran - 1) / m.dv.gran * m.dv.gran;
    const size_t block_sz = m.nb * sizeof(cl_float4);

    float* pos0 = (float*)malloc(4 * sizeof(float) * o.n);
    float* vel0 = (float*)malloc(4 * sizeof(float) * o.n);
    float* final = (float*)malloc(4 * sizeof(float) * o.n);
    float* final_vel = (float*)malloc(4 * sizeof(float) * o.n);
    if (!pos0 || !vel0 || !final || !final_vel) {
        fprintf(stderr, "%s: out of memory\n", nbody_prog);
        return NBODY_EXIT_RUNTIME;
    }
    nbody_init(o.n, pos0, vel0, o.ic, o.seed);
    for (int d = 0; d < m.dv.k; d++) {
        for (int r = 0; r < NRING; r++)
            if (!(m.pos[r][d] = (cl_float4*)clmalloc(m.dv.cp, block_sz, 0)))
                nbody_die("clmalloc");
        if (!(m.vel[d] = (cl_float4*)clmalloc(m.dv.cp, block_sz, 0)) ||
            !(m.acc[d] = (cl_float4*)clmalloc(m.dv.cp, block_sz, 0)))
            nbody_die("clmalloc");
        nbody_pad(m.cnt[d], m.nb, (float*)m.pos[0][d], (float*)m.vel[d],
                  pos0 + 4 * m.off[d], vel0 + 4 * m.off[d], (long)d * m.nb);
        /* Device d starts with its own block and velocities; the others'
         * blocks go to it at the first step. */
        if (!clmsync(m.dv.cp, d, m.pos[0][d], CL_MEM_DEVICE | CL_EVENT_WAIT) ||
            !clmsync(m.dv.cp, d, m.vel[d], CL_MEM_DEVICE | CL_EVENT_WAIT))
            nbody_die("clmsync");
    }

    if (!o.quiet)
        fprintf(stderr, "%s: %d x %s, N=%ld in %d blocks of %ld (padded), work-group %d, "
                "%d bodies/work-item, build %.2f s, options: %s\n", nbody_prog, m.dv.k, devname,
                o.n, m.dv.k, m.nb, m.dv.nthread, m.dv.bpw[0], build_s, options);

    nbody_timing tim = { 0 };
    const int total = multi_run(&m, &o, o.bench ? o.burst : 0, &tim);
    const int last = total % NRING;
    for (int d = 0; d < m.dv.k; d++) {
        memcpy(final + 4 * m.off[d], m.pos[last][d], 4 * sizeof(float) * m.cnt[d]);
        if (o.check) { /* velocities stay on their device otherwise */
            if (!clmsync(m.dv.cp, d, m.vel[d], CL_MEM_HOST | CL_EVENT_WAIT))
                nbody_die("clmsync to host");
            memcpy(final_vel + 4 * m.off[d], m.vel[d], 4 * sizeof(float) * m.cnt[d]);
        }
    }

    char extra[128];
    snprintf(extra, sizeof extra, "device=%s wg=%d bpw=%d", any_gpu ? "gpu" : "cpu", m.dv.nthread,
             m.dv.bpw[0]);
    nbody_summary("stdcl_multi", &o, m.dv.k, &tim, extra);

    int rc = NBODY_EXIT_OK;
    if (o.check) {
        float* one = (float*)malloc(4 * sizeof(float) * o.n);
        float* one_vel = (float*)malloc(4 * sizeof(float) * o.n);
        if (!one || !one_vel) {
            fprintf(stderr, "%s: out of memory\n", nbody_prog);
            return NBODY_EXIT_RUNTIME;
        }
        nbody_one_device_run(m.dv.cp, clh, &o, m.dv.nthread, total, pos0, vel0, one, one_vel);
        char label[64];
        snprintf(label, sizeof label, "%d devices vs one device", m.dv.k);
        int ok_mo = nbody_check_pair(label, o.n, total, vel0, final, final_vel, one, one_vel);
        int ok_one = nbody_check("one device vs double reference", o.n, total, pos0, vel0,
                                 one, one_vel, o.dt, o.eps);
        snprintf(label, sizeof label, "%d devices vs double reference", m.dv.k);
        int ok_multi = nbody_check(label, o.n, total, pos0, vel0, final, final_vel, o.dt,
                                   o.eps);
        if (!(ok_mo && ok_one && ok_multi))
            rc = NBODY_EXIT_FAIL;
        printf("check: %s\n", rc ? "FAIL" : "PASS");
        free(one);
        free(one_vel);
    }
    if (o.png && nbody_png(o.png, o.n, final, o.png_size) != 0)
        rc = rc ? rc : NBODY_EXIT_RUNTIME;

    nbody_timing_free(&tim);
    for (int d = 0; d < m.dv.k; d++) {
        for (int r = 0; r < NRING; r++)
            clfree(m.pos[r][d]);
        clfree(m.vel[d]);
        clfree(m.acc[d]);
    }
    clclose(m.dv.cp, clh);
    free(pos0);
    free(vel0);
    free(final);
    free(final_vel);
    fflush(stdout); /* before the library's exit-time clean-up runs */
    return rc;
}
