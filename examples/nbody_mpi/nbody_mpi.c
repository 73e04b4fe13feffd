/* SPDX-License-Identifier: MIT */
/* nbody_mpi.c: NBody across P MPI ranks, each on the devices of its own
 * default context (stdgpu, else stdcpu), STDCL style.
 *
 * nbody_multi (../nbody) spreads the bodies over the k devices of one
 * context; this program spreads them over every device of every rank.  Rank
 * r owns N/P bodies (the first N%P ranks one more) and cuts them into one
 * block per device of its context: the blocks of all ranks, in rank order,
 * are the global blocks, all padded to the same size.  libstdcl knows
 * nothing of MPI: each rank is a plain libstdcl program, and the positions
 * travel between ranks through host memory:
 *
 *     rank r, device d, step t:
 *        kernel(own block)                        starts at once
 *        wait: own new block of step t-1 on the host (clmsync at t-1)
 *        MPI_Allgatherv of every rank's blocks    while the kernel runs
 *        clmsync(block e -> d)  e != own          host copy just received
 *        kernel(block e)        e != own
 *        clmsync(d's new block -> host)
 *
 * The exchange overlaps the own-block kernel, as nbody_multi's host
 * forwarding does: the steps are nbody_multi's (nbody_blocks_run in
 * ../nbody/nbody_stdcl.c), with the exchange as their hook.  Positions
 * rotate through three buffers per block (see nbody_stdcl.h).  The exchange
 * buffer holds every block in global order, so one MPI_Allgatherv
 * (MPI_Allgather when all ranks have as many devices) moves them all: the
 * own blocks are copied in before, the others out after.
 *
 * One device per rank: run with STDGPU_LOCK=auto STDGPU_MAX_NDEV=1 (libstdcl
 * then leases the device of the rank's local rank; see docs/guide.md).  A rank
 * whose default context is NULL because every device is leased stops every
 * rank with libstdcl's message.
 *
 *   mpirun -np P nbody_mpi [-d K] [-n N] [-s STEPS] [-c gpu|cpu|dev] [-w WG]
 *                          [-o "OPTIONS"] [--check] [--bench] [--png FILE] ...
 *
 * Rank 0 prints the figures and writes the picture.  --check gathers the
 * final bodies on rank 0, runs the same steps there on one device with the
 * one-device kernel (as nbody does), and compares all three results. */
#include <mpi.h>
#include <stdcl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbody_common.h"
#include "nbody_stdcl.h"

/* Everything about one run on this rank. */
typedef struct {
    nbody_blocks b; /* the blocks of every rank; this rank's devices */
    int rank, P; /* this rank, ranks */
    int* kr; /* per rank: devices (blocks) */
    int* xcount; /* per rank: bodies it sends (kr * nb) */
    int* xdispl; /* per rank: where they go in xbuf (bodies) */
    cl_float4* xbuf; /* host: every block in global order, for MPI */
    MPI_Datatype body; /* 4 floats */
} mpi_t;

static void abort_all(int status)
{
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, status);
    exit(status);
}

/* The blocks of every rank into blk[g] on every rank, given each rank's own
 * ones there (nbody_blocks' exchange hook; `user` is the mpi_t).  With P = 1
 * only copies. */
static void exchange(nbody_blocks* b, cl_float4** blk, void* user)
{
    mpi_t* m = (mpi_t*)user;
    const size_t bsz = b->nb * sizeof(cl_float4);
    for (int d = 0; d < b->dv.k; d++) memcpy(m->xbuf + (size_t)(b->first + d) * b->nb, blk[b->first + d], bsz);
    if (m->P > 1) {
        int same = 1;
        for (int r = 1; r < m->P; r++) same &= m->kr[r] == m->kr[0];
        int rc = same
            ? MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, m->xbuf, m->xcount[0], m->body, MPI_COMM_WORLD)
            : MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, m->xbuf, m->xcount, m->xdispl, m->body,
                             MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) {
            fprintf(stderr, "%s: rank %d: MPI_Allgather failed (%d)\n", nbody_prog, m->rank, rc);
            abort_all(NBODY_EXIT_RUNTIME);
        }
    }
    for (int e = 0; e < b->nblock; e++)
        if (e < b->first || e >= b->first + b->dv.k) memcpy(blk[e], m->xbuf + (size_t)e * b->nb, bsz);
}

int main(int argc, char** argv)
{
    /* A default context left NULL at load time (every device leased to
     * other ranks) says why in clerror() before any other call. */
    const char* load_error = clerror();
    char load_msg[1024] = "";
    if (load_error) snprintf(load_msg, sizeof load_msg, "%s", load_error);

    MPI_Init(&argc, &argv);
    nbody_exit_hook = abort_all;
    mpi_t m;
    memset(&m, 0, sizeof m);
    nbody_devs* dv = &m.b.dv;
    MPI_Comm_rank(MPI_COMM_WORLD, &m.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m.P);

    nbody_opts o;
    nbody_parse_args(argc, argv, &o, NBODY_OPT_OPENCL | NBODY_OPT_DEVICES,
                     "NBody across MPI ranks with libstdcl: each rank owns N/P bodies on the\n"
                     "devices of its context (-d: at most K of them); positions are exchanged\n"
                     "with MPI_Allgather through host memory.  Run with mpirun -np P.");

    /* This rank's devices. */
    dv->cp = o.ctx ? nbody_pick_context(o.ctx) : stdgpu ? stdgpu : stdcpu;
    if (!dv->cp || (!o.ctx && !stdgpu && load_msg[0])) {
        fprintf(stderr, "%s: rank %d: %s\n", nbody_prog, m.rank,
                load_msg[0] ? load_msg : "no OpenCL GPU or CPU device (stdgpu and stdcpu are NULL)");
        abort_all(NBODY_EXIT_RUNTIME);
    }
    const int ndev = (int)clgetndev(dv->cp);
    if (o.ndev > ndev) {
        fprintf(stderr, "%s: rank %d: -d %d: its context has only %d device(s)\n", nbody_prog, m.rank, o.ndev, ndev);
        abort_all(NBODY_EXIT_USAGE);
    }
    dv->k = o.ndev ? o.ndev : ndev;
    if (dv->k > NBODY_MAXDEV) dv->k = NBODY_MAXDEV;
    int any_gpu = nbody_devs_any_gpu(dv), all_gpu = 0;
    /* Sizes by default: the GPU ones only when every rank has a GPU. */
    MPI_Allreduce(&any_gpu, &all_gpu, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    nbody_default_size(&o, all_gpu);
    dv->nthread = o.wg ? o.wg : any_gpu ? 256 : 8;
    dv->dt = o.dt;
    dv->eps = o.eps;

    char options[2048];
    double build_s = 0;
    void* clh = nbody_build(dv->cp, argv[0], &o, dv->nthread, options, sizeof options, &build_s);
    if (!nbody_devs_shape(dv, clh)) abort_all(NBODY_EXIT_USAGE);

    /* The global blocks: every rank's device count and granularity. */
    long mine[2] = {dv->k, dv->gran}, *all = malloc(2 * sizeof(long) * m.P);
    m.kr = malloc(sizeof(int) * m.P);
    m.xcount = malloc(sizeof(int) * m.P);
    m.xdispl = malloc(sizeof(int) * m.P);
    if (!all || !m.kr || !m.xcount || !m.xdispl) nbody_die("malloc");
    MPI_Allgather(mine, 2, MPI_LONG, all, 2, MPI_LONG, MPI_COMM_WORLD);
    long gran = 1;
    for (int r = 0; r < m.P; r++) {
        m.kr[r] = (int)all[2 * r];
        long a = gran, b = all[2 * r + 1];
        while (b) { /* gran = lcm(gran, every rank's granularity) */
            long t = a % b;
            a = b;
            b = t;
        }
        gran = gran / a * all[2 * r + 1];
    }
    free(all);
    /* Rank r owns N/P bodies (the first N%P one more), split over its devices. */
    nbody_blocks_layout(&m.b, o.n, m.P, m.kr, m.rank, gran);
    if (o.n < m.b.nblock) {
        if (m.rank == 0)
            fprintf(stderr, "%s: -n %ld: fewer bodies than devices in all (%d)\n", nbody_prog, o.n, m.b.nblock);
        nbody_blocks_free(&m.b);
        MPI_Finalize();
        return NBODY_EXIT_USAGE;
    }
    for (int r = 0, g = 0; r < m.P; g += m.kr[r], r++) {
        m.xcount[r] = (int)(m.kr[r] * m.b.nb);
        m.xdispl[r] = (int)(g * m.b.nb);
    }
    MPI_Type_contiguous(4, MPI_FLOAT, &m.body);
    MPI_Type_commit(&m.body);
    m.b.exchange = exchange;
    m.b.user = &m;

    /* Memory: every block's positions (the others' come with the first
     * step's exchange), the own blocks' velocities and sums, and the
     * exchange buffer. */
    float* pos0 = malloc(4 * sizeof(float) * o.n);
    float* vel0 = malloc(4 * sizeof(float) * o.n);
    m.xbuf = malloc(m.b.nb * sizeof(cl_float4) * m.b.nblock);
    if (!pos0 || !vel0 || !m.xbuf) nbody_die("malloc");
    nbody_init(o.n, pos0, vel0, o.ic, o.seed);
    nbody_blocks_alloc(&m.b, pos0, vel0);

    if (!o.quiet) {
        char devname[256] = "?", line[1024];
        clGetDeviceInfo(stdcl_device(dv->cp, 0), CL_DEVICE_NAME, sizeof devname, devname, NULL);
        snprintf(line, sizeof line,
                 "%s: rank %d of %d: %d x %s, blocks %d..%d of %d (%ld bodies "
                 "each, padded), work-group %d, %d bodies/work-item, build %.2f s\n",
                 nbody_prog, m.rank, m.P, dv->k, devname, m.b.first, m.b.first + dv->k - 1, m.b.nblock, m.b.nb,
                 dv->nthread, dv->bpw[0], build_s);
        fputs(line, stderr);
        if (m.rank == 0)
            fprintf(stderr, "%s: N=%ld over %d rank(s), %d device(s) in all, options: %s\n", nbody_prog, o.n, m.P,
                    m.b.nblock, options);
    }

    nbody_timing tim = {0};
    MPI_Barrier(MPI_COMM_WORLD);
    const int total = nbody_blocks_run(&m.b, &o, o.bench ? o.burst : 0, o.quiet || m.rank != 0, &tim);

    /* Every rank's final blocks to every rank (rank 0 needs them). */
    float* final = malloc(4 * sizeof(float) * o.n);
    float* final_vel = malloc(4 * sizeof(float) * o.n);
    if (!final || !final_vel) nbody_die("malloc");
    nbody_blocks_gather(&m.b, total % NBODY_RING, final, o.check ? final_vel : NULL);

    int rc = NBODY_EXIT_OK;
    if (m.rank == 0) {
        char extra[128];
        snprintf(extra, sizeof extra, "ranks=%d device=%s wg=%d bpw=%d", m.P,
                 all_gpu       ? "gpu"
                     : any_gpu ? "mixed"
                               : "cpu",
                 dv->nthread, dv->bpw[0]);
        nbody_summary("stdcl_mpi", &o, m.b.nblock, &tim, extra);
        printf("%s: %d rank(s), %d device(s) in all\n", nbody_prog, m.P, m.b.nblock);
        if (o.check) {
            char many[32];
            snprintf(many, sizeof many, "%d rank(s)", m.P);
            rc = nbody_check_vs_one_device(dv->cp, clh, &o, dv->nthread, total, pos0, vel0, final, final_vel, many,
                                           "one process");
        }
        if (o.png && nbody_png(o.png, o.n, final, o.png_size) != 0) rc = rc ? rc : NBODY_EXIT_RUNTIME;
    }
    fflush(stdout);
    /* Every rank exits with rank 0's verdict. */
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);

    nbody_timing_free(&tim);
    nbody_blocks_free(&m.b);
    clclose(dv->cp, clh);
    free(m.xbuf);
    free(m.kr);
    free(m.xcount);
    free(m.xdispl);
    free(pos0);
    free(vel0);
    free(final);
    free(final_vel);
    MPI_Type_free(&m.body);
    MPI_Finalize();
    return rc;
}
