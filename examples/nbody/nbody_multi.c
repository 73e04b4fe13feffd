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
 * Positions rotate through three buffers, not two (see nbody_stdcl.h).  The
 * step loop is nbody_blocks_run (nbody_stdcl.c), which ../nbody_mpi uses too.
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

int main(int argc, char** argv)
{
    nbody_opts o;
    nbody_parse_args(argc, argv, &o, NBODY_OPT_OPENCL | NBODY_OPT_DEVICES,
                     "NBody on K devices of one context with libstdcl: each device owns\n"
                     "N/K bodies and receives the others' positions through clmsync.");

    nbody_blocks m;
    memset(&m, 0, sizeof m);
    m.dv.cp = nbody_pick_context(o.ctx);
    if (!m.dv.cp) {
        fprintf(stderr, "%s: no OpenCL GPU or CPU device (stdgpu and stdcpu are NULL)\n", nbody_prog);
        return NBODY_EXIT_RUNTIME;
    }
    const int ndev = (int)clgetndev(m.dv.cp);
    if (o.ndev > ndev) nbody_usage_error("-d %d: the context has only %d device(s)", o.ndev, ndev);
    m.dv.k = o.ndev ? o.ndev : ndev;
    if (m.dv.k > NBODY_MAXDEV) m.dv.k = NBODY_MAXDEV;

    const int any_gpu = nbody_devs_any_gpu(&m.dv);
    char devname[256] = "?";
    clGetDeviceInfo(stdcl_device(m.dv.cp, 0), CL_DEVICE_NAME, sizeof devname, devname, NULL);
    nbody_default_size(&o, any_gpu);
    if (o.n < m.dv.k) nbody_usage_error("-n %ld: fewer bodies than devices (%d)", o.n, m.dv.k);
    m.dv.nthread = o.wg ? o.wg : any_gpu ? 256 : 8;
    m.dv.dt = o.dt;
    m.dv.eps = o.eps;

    /* Kernels, built for every device of the context with our options, and
     * each device's variant (devices of different types build different
     * variants; the block size must suit all of them). */
    char options[2048];
    double build_s = 0;
    void* clh = nbody_build(m.dv.cp, argv[0], &o, m.dv.nthread, options, sizeof options, &build_s);
    if (!nbody_devs_shape(&m.dv, clh)) return NBODY_EXIT_USAGE;

    /* Blocks: one per device, as even as possible, each padded to the same
     * size; device d starts with its own block and velocities. */
    nbody_blocks_layout(&m, o.n, 1, &m.dv.k, 0, m.dv.gran);
    float* pos0 = (float*)malloc(4 * sizeof(float) * o.n);
    float* vel0 = (float*)malloc(4 * sizeof(float) * o.n);
    float* final = (float*)malloc(4 * sizeof(float) * o.n);
    float* final_vel = (float*)malloc(4 * sizeof(float) * o.n);
    if (!pos0 || !vel0 || !final || !final_vel) {
        fprintf(stderr, "%s: out of memory\n", nbody_prog);
        return NBODY_EXIT_RUNTIME;
    }
    nbody_init(o.n, pos0, vel0, o.ic, o.seed);
    nbody_blocks_alloc(&m, pos0, vel0);

    if (!o.quiet)
        fprintf(stderr,
                "%s: %d x %s, N=%ld in %d blocks of %ld (padded), work-group %d, "
                "%d bodies/work-item, build %.2f s, options: %s\n",
                nbody_prog, m.dv.k, devname, o.n, m.dv.k, m.nb, m.dv.nthread, m.dv.bpw[0], build_s, options);

    nbody_timing tim = {0};
    const int total = nbody_blocks_run(&m, &o, o.bench ? o.burst : 0, o.quiet, &tim);
    nbody_blocks_gather(&m, total % NBODY_RING, final, o.check ? final_vel : NULL);

    char extra[128];
    snprintf(extra, sizeof extra, "device=%s wg=%d bpw=%d", any_gpu ? "gpu" : "cpu", m.dv.nthread, m.dv.bpw[0]);
    nbody_summary("stdcl_multi", &o, m.dv.k, &tim, extra);

    int rc = NBODY_EXIT_OK;
    if (o.check) {
        char many[32];
        snprintf(many, sizeof many, "%d devices", m.dv.k);
        rc = nbody_check_vs_one_device(m.dv.cp, clh, &o, m.dv.nthread, total, pos0, vel0, final, final_vel, many,
                                       "one device");
    }
    if (o.png && nbody_png(o.png, o.n, final, o.png_size) != 0) rc = rc ? rc : NBODY_EXIT_RUNTIME;

    nbody_timing_free(&tim);
    nbody_blocks_free(&m);
    clclose(m.dv.cp, clh);
    free(pos0);
    free(vel0);
    free(final);
    free(final_vel);
    fflush(stdout); /* before the library's exit-time clean-up runs */
    return rc;
}
