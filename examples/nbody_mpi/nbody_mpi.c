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
 * forwarding does.  Positions rotate through three buffers per block (see
 * nbody_multi.c).  The exchange buffer holds every block in global order, so
 * one MPI_Allgatherv (MPI_Allgather when all ranks have as many devices)
 * moves them all: the own blocks are copied in before, the others out after.
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

#define NRING 3 /* position buffers per block */

/* Everything about one run on this rank. */
typedef struct {
    nbody_devs dv;     /* this rank's devices and the block kernel */
    int rank, P;       /* this rank, ranks */
    int B;             /* global blocks: every device of every rank */
    int first;         /* this rank's first global block */
    int* kr;           /* per rank: devices (blocks) */
    int* xcount;       /* per rank: bodies it sends (kr * nb) */
    int* xdispl;       /* per rank: where they go in xbuf (bodies) */
    long nb;           /* bodies per block (padded) */
    long* cnt;         /* per global block: real bodies */
    long* off;         /* per global block: index of its first body */
    cl_float4** pos[NRING]; /* [ring][global block], in this rank's context */
    cl_float4* vel[NBODY_MAXDEV]; /* own blocks only */
    cl_float4* acc[NBODY_MAXDEV];
    cl_float4* xbuf;   /* host: every block in global order, for MPI */
    MPI_Datatype body; /* 4 floats */
} mpi_t;

static void abort_all(int status)
{
    fflush(stdout);
    MPI_Abort(MPI_COMM_WORLD, status);
    exit(status);
}

/* Every rank's blocks from src[g] (the own ones) to every rank's dst[g]:
 * dst and src may be the same ring.  With P = 1 only copies (or nothing). */
static void exchange(mpi_t* m, cl_float4** dst, cl_float4** src)
{
    const size_t bsz = m->nb * sizeof(cl_float4);
    for (int d = 0; d < m->dv.k; d++)
        memcpy(m->xbuf + (size_t)(m->first + d) * m->nb, src[m->first + d], bsz);
    if (m->P > 1) {
        int same = 1;
        for (int r = 1; r < m->P; r++)
            same &= m->kr[r] == m->kr[0];
        int rc = same ? MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, m->xbuf,
                                      m->xcount[0], m->body, MPI_COMM_WORLD)
                      : MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, m->xbuf,
                                       m->xcount, m->xdispl, m->body, MPI_COMM_WORLD);
        if (rc != MPI_SUCCESS) {
            fprintf(stderr, "%s: rank %d: MPI_Allgather failed (%d)\n", nbody_prog, m->rank, rc);
            abort_all(NBODY_EXIT_RUNTIME);
        }
    }
    for (int e = 0; e < m->B; e++)
        if (e < m->first || e >= m->first + m->dv.k || dst != src)
            memcpy(dst[e], m->xbuf + (size_t)e * m->nb, bsz);
}

/* Launches nbody_kern_multi on device d: d's bodies pulled by global block
 * `src` of ring buffer `in`; the last launch of a step writes `out`. */
static void launch(mpi_t* m, int d, int in, int out, int src, int mode)
{
    const int g = m->first + d;
    nbody_launch_block(&m->dv, d, m->nb, m->pos[in][g], m->pos[out][g], m->vel[d],
                       m->pos[in][src], m->acc[d], mode);
}

/* One time step t on this rank's devices (see the top of the file). */
static void mpi_step(mpi_t* m, int t)
{
    const int k = m->dv.k, B = m->B, in = t % NRING, out = (t + 1) % NRING;
    /* 1. Own blocks: on each device already. */
    for (int d = 0; d < k; d++)
        launch(m, d, in, out, m->first + d, NBODY_FIRST | (B == 1 ? NBODY_LAST : 0));
    if (B == 1)
        return;
    /* 2. This rank's blocks of step t-1 must have reached the host; with them
     *    every kernel and transfer of step t-1 is done here. */
    for (int d = 0; d < k; d++)
        if (!clwait(m->dv.cp, d, CL_MEM_EVENT))
            nbody_die("transfer");
    /* 3. Every rank's blocks of step t-1, while the own-block kernels run. */
    exchange(m, m->pos[in], m->pos[in]);
    /* 4. Forward the other blocks, pull by them, fetch the new own block. */
    for (int d = 0; d < k; d++) {
        const int g = m->first + d;
        for (int r = 1; r < B; r++)
            if (!clmsync(m->dv.cp, d, m->pos[in][(g + r) % B], CL_MEM_DEVICE | CL_EVENT_NOWAIT))
                nbody_die("clmsync to device");
        for (int r = 1; r < B; r++)
            launch(m, d, in, out, (g + r) % B, r == B - 1 ? NBODY_LAST : 0);
        if (!clmsync(m->dv.cp, d, m->pos[out][g], CL_MEM_HOST | CL_EVENT_NOWAIT))
            nbody_die("clmsync to host");
        clflush(m->dv.cp, d, 0);
    }
}

/* Runs the steps in bursts, timing each burst after `warm` steps. */
static int mpi_run(mpi_t* m, const nbody_opts* o, int warm, nbody_timing* tim)
{
    const int total = warm + o->steps;
    nbody_progress progress;
    nbody_progress_start(&progress, o->n, o->steps, o->quiet || m->rank != 0);
    MPI_Barrier(MPI_COMM_WORLD);
    int t = 0;
    while (t < total) {
        int nburst = t < warm ? warm - t : o->burst;
        if (t + nburst > total)
            nburst = total - t;
        double t0 = nbody_now();
        for (int s = 0; s < nburst; s++)
            mpi_step(m, t + s);
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
    /* With one block in all, fetch the last positions now (else every step
     * ends by copying each new block to the host). */
    if (m->B == 1 && !clmsync(m->dv.cp, 0, m->pos[total % NRING][0], CL_MEM_HOST | CL_EVENT_WAIT))
        nbody_die("clmsync to host");
    return total;
}

int main(int argc, char** argv)
{
    /* A default context left NULL at load time (every device leased to
     * other ranks) says why in clerror() before any other call. */
    const char* load_error = clerror();
    char load_msg[1024] = "";
    if (load_error)
        snprintf(load_msg, sizeof load_msg, "%s", load_error);

    MPI_Init(&argc, &argv);
    nbody_exit_hook = abort_all;
    mpi_t m;
    memset(&m, 0, sizeof m);
    MPI_Comm_rank(MPI_COMM_WORLD, &m.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &m.P);

    nbody_opts o;
    nbody_parse_args(argc, argv, &o, NBODY_OPT_OPENCL | NBODY_OPT_DEVICES,
                     "NBody across MPI ranks with libstdcl: each rank owns N/P bodies on the\n"
                     "devices of its context (-d: at most K of them); positions are exchanged\n"
                     "with MPI_Allgather through host memory.  Run with mpirun -np P.");

    /* This rank's devices. */
    m.dv.cp = o.ctx ? nbody_pick_context(o.ctx) : stdgpu ? stdgpu : stdcpu;
    if (!m.dv.cp || (!o.ctx && !stdgpu && load_msg[0])) {
        fprintf(stderr, "%s: rank %d: %s\n", nbody_prog, m.rank,
                load_msg[0] ? load_msg : "no OpenCL GPU or CPU device (stdgpu and stdcpu are NULL)");
        abort_all(NBODY_EXIT_RUNTIME);
    }
    const int ndev = (int)clgetndev(m.dv.cp);
    if (o.ndev > ndev) {
        fprintf(stderr, "%s: rank %d: -d %d: its context has only %d device(s)\n", nbody_prog,
                m.rank, o.ndev, ndev);
        abort_all(NBODY_EXIT_USAGE);
    }
    m.dv.k = o.ndev ? o.ndev : ndev;
    if (m.dv.k > NBODY_MAXDEV)
        m.dv.k = NBODY_MAXDEV;
    int any_gpu = 0, all_gpu = 0;
    for (int d = 0; d < m.dv.k; d++) {
        cl_device_type type = 0;
        clGetDeviceInfo(stdcl_device(m.dv.cp, d), CL_DEVICE_TYPE, sizeof type, &type, NULL);
        any_gpu |= (type & CL_DEVICE_TYPE_GPU) != 0;
    }
    /* Sizes by default: the GPU ones only when every rank has a GPU. */
    MPI_Allreduce(&any_gpu, &all_gpu, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    nbody_default_size(&o, all_gpu);
    m.dv.nthread = o.wg ? o.wg : any_gpu ? 256 : 8;
    m.dv.dt = o.dt;
    m.dv.eps = o.eps;

    char options[2048];
    double build_s = 0;
    void* clh = nbody_build(m.dv.cp, argv[0], &o, m.dv.nthread, options, sizeof options, &build_s);
    if (!nbody_devs_shape(&m.dv, clh))
        abort_all(NBODY_EXIT_USAGE);

    /* The global blocks: every rank's device count and granularity. */
    long mine[2] = { m.dv.k, m.dv.gran }, *all = malloc(2 * sizeof(long) * m.P);
    m.kr = malloc(sizeof(int) * m.P);
    m.xcount = malloc(sizeof(int) * m.P);
    m.xdispl = malloc(sizeof(int) * m.P);
    if (!all || !m.kr || !m.xcount || !m.xdispl)
        nbody_die("malloc");
    MPI_Allgather(mine, 2, MPI_LONG, all, 2, MPI_LONG, MPI_COMM_WORLD);
    long gran = 1;
    m.B = 0;
    for (int r = 0; r < m.P; r++) {
        m.kr[r] = (int)all[2 * r];
        if (r == m.rank)
            m.first = m.B;
        m.B += m.kr[r];
        long a = gran, b = all[2 * r + 1];
        while (b) { /* gran = lcm(gran, every rank's granularity) */
            long t = a % b;
            a = b;
            b = t;
        }
        gran = gran / a * all[2 * r + 1];
    }
    free(all);
    if (o.n < m.B) {
        if (m.rank == 0)
            fprintf(stderr, "%s: -n %ld: fewer bodies than devices in all (%d)\n", nbody_prog,
                    o.n, m.B);
        MPI_Finalize();
        return NBODY_EXIT_USAGE;
    }
    /* Rank r owns N/P bodies (the first N%P one more), split over its devices. */
    m.cnt = malloc(sizeof(long) * m.B);
    m.off = malloc(sizeof(long) * m.B);
    if (!m.cnt || !m.off)
        nbody_die("malloc");
    long biggest = 0;
    for (int r = 0, g = 0, off = 0; r < m.P; r++) {
        long own = o.n / m.P + (r < o.n % m.P);
        for (int d = 0; d < m.kr[r]; d++, g++) {
            m.cnt[g] = own / m.kr[r] + (d < own % m.kr[r]);
            m.off[g] = off;
            off += m.cnt[g];
            if (m.cnt[g] > biggest)
                biggest = m.cnt[g];
        }
    }
    m.nb = (biggest + gran - 1) / gran * gran;
    for (int r = 0, g = 0; r < m.P; g += m.kr[r], r++) {
        m.xcount[r] = (int)(m.kr[r] * m.nb);
        m.xdispl[r] = (int)(g * m.nb);
    }
    MPI_Type_contiguous(4, MPI_FLOAT, &m.body);
    MPI_Type_commit(&m.body);

    /* Memory: every block's positions (the others' arrive at each step),
     * the own blocks' velocities and sums, and the exchange buffer. */
    const size_t block_sz = m.nb * sizeof(cl_float4);
    float* pos0 = malloc(4 * sizeof(float) * o.n);
    float* vel0 = malloc(4 * sizeof(float) * o.n);
    m.xbuf = malloc(block_sz * m.B);
    for (int r = 0; r < NRING; r++)
        m.pos[r] = calloc(m.B, sizeof(cl_float4*));
    if (!pos0 || !vel0 || !m.xbuf || !m.pos[0] || !m.pos[1] || !m.pos[2])
        nbody_die("malloc");
    nbody_init(o.n, pos0, vel0, o.ic, o.seed);
    for (int e = 0; e < m.B; e++)
        for (int r = 0; r < NRING; r++)
            if (!(m.pos[r][e] = clmalloc(m.dv.cp, block_sz, 0)))
                nbody_die("clmalloc");
    for (int d = 0; d < m.dv.k; d++) {
        const int g = m.first + d;
        if (!(m.vel[d] = clmalloc(m.dv.cp, block_sz, 0)) ||
            !(m.acc[d] = clmalloc(m.dv.cp, block_sz, 0)))
            nbody_die("clmalloc");
        nbody_pad(m.cnt[g], m.nb, (float*)m.pos[0][g], (float*)m.vel[d],
                  pos0 + 4 * m.off[g], vel0 + 4 * m.off[g], (long)g * m.nb);
        /* Device d starts with its own block and velocities; the others'
         * blocks come with the first step's exchange. */
        if (!clmsync(m.dv.cp, d, m.pos[0][g], CL_MEM_DEVICE | CL_EVENT_WAIT) ||
            !clmsync(m.dv.cp, d, m.vel[d], CL_MEM_DEVICE | CL_EVENT_WAIT))
            nbody_die("clmsync");
    }

    if (!o.quiet) {
        char devname[256] = "?", line[1024];
        clGetDeviceInfo(stdcl_device(m.dv.cp, 0), CL_DEVICE_NAME, sizeof devname, devname, NULL);
        snprintf(line, sizeof line, "%s: rank %d of %d: %d x %s, blocks %d..%d of %d (%ld bodies "
                 "each, padded), work-group %d, %d bodies/work-item, build %.2f s\n", nbody_prog,
                 m.rank, m.P, m.dv.k, devname, m.first, m.first + m.dv.k - 1, m.B, m.nb,
                 m.dv.nthread, m.dv.bpw[0], build_s);
        fputs(line, stderr);
        if (m.rank == 0)
            fprintf(stderr, "%s: N=%ld over %d rank(s), %d device(s) in all, options: %s\n",
                    nbody_prog, o.n, m.P, m.B, options);
    }

    nbody_timing tim = { 0 };
    const int total = mpi_run(&m, &o, o.bench ? o.burst : 0, &tim);

    /* Every rank's final blocks to every rank (rank 0 needs them). */
    const int last = total % NRING;
    float* final = malloc(4 * sizeof(float) * o.n);
    float* final_vel = malloc(4 * sizeof(float) * o.n);
    if (!final || !final_vel)
        nbody_die("malloc");
    exchange(&m, m.pos[last], m.pos[last]);
    for (int e = 0; e < m.B; e++)
        memcpy(final + 4 * m.off[e], m.pos[last][e], 4 * sizeof(float) * m.cnt[e]);
    if (o.check) { /* velocities stay on their device otherwise */
        cl_float4** vblk = calloc(m.B, sizeof(cl_float4*));
        for (int e = 0; e < m.B; e++)
            vblk[e] = e >= m.first && e < m.first + m.dv.k ? m.vel[e - m.first] : m.pos[(last + 1) % NRING][e];
        for (int d = 0; d < m.dv.k; d++)
            if (!clmsync(m.dv.cp, d, m.vel[d], CL_MEM_HOST | CL_EVENT_WAIT))
                nbody_die("clmsync to host");
        exchange(&m, vblk, vblk);
        for (int e = 0; e < m.B; e++)
            memcpy(final_vel + 4 * m.off[e], vblk[e], 4 * sizeof(float) * m.cnt[e]);
        free(vblk);
    }

    int rc = NBODY_EXIT_OK;
    if (m.rank == 0) {
        char extra[128];
        snprintf(extra, sizeof extra, "ranks=%d device=%s wg=%d bpw=%d", m.P,
                 all_gpu ? "gpu" : any_gpu ? "mixed" : "cpu", m.dv.nthread, m.dv.bpw[0]);
        nbody_summary("stdcl_mpi", &o, m.B, &tim, extra);
        printf("%s: %d rank(s), %d device(s) in all\n", nbody_prog, m.P, m.B);
        if (o.check) {
            float* one = malloc(4 * sizeof(float) * o.n);
            float* one_vel = malloc(4 * sizeof(float) * o.n);
            if (!one || !one_vel)
                nbody_die("malloc");
            nbody_one_device_run(m.dv.cp, clh, &o, m.dv.nthread, total, pos0, vel0, one, one_vel);
            char label[64];
            snprintf(label, sizeof label, "%d rank(s) vs one process", m.P);
            int ok_mo = nbody_check_pair(label, o.n, total, vel0, final, final_vel, one, one_vel);
            int ok_one = nbody_check("one process vs double reference", o.n, total, pos0, vel0,
                                     one, one_vel, o.dt, o.eps);
            snprintf(label, sizeof label, "%d rank(s) vs double reference", m.P);
            int ok_mpi = nbody_check(label, o.n, total, pos0, vel0, final, final_vel, o.dt,
                                     o.eps);
            if (!(ok_mo && ok_one && ok_mpi))
                rc = NBODY_EXIT_FAIL;
            printf("check: %s\n", rc ? "FAIL" : "PASS");
            free(one);
            free(one_vel);
        }
        if (o.png && nbody_png(o.png, o.n, final, o.png_size) != 0)
            rc = rc ? rc : NBODY_EXIT_RUNTIME;
    }
    fflush(stdout);
    /* Every rank exits with rank 0's verdict. */
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);

    nbody_timing_free(&tim);
    for (int e = 0; e < m.B; e++)
        for (int r = 0; r < NRING; r++)
            clfree(m.pos[r][e]);
    for (int d = 0; d < m.dv.k; d++) {
        clfree(m.vel[d]);
        clfree(m.acc[d]);
    }
    clclose(m.dv.cp, clh);
    for (int r = 0; r < NRING; r++)
        free(m.pos[r]);
    free(m.xbuf);
    free(m.kr);
    free(m.xcount);
    free(m.xdispl);
    free(m.cnt);
    free(m.off);
    free(pos0);
    free(vel0);
    free(final);
    free(final_vel);
    MPI_Type_free(&m.body);
    MPI_Finalize();
    return rc;
}
