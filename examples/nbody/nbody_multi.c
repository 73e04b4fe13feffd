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
 * device's transfers run while the others compute.  (Within one device the
 * in-order queue runs transfers and kernels one after the other.)
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

/* libstdcl's message for the last failure (clerror() gives it once, like
 * dlerror(), and NULL when there is none). */
static const char* why(void)
{
    const char* e = clerror();
    return e ? e : "(no detail)";
}

#define NBODY_FIRST 1 /* nbody_kern_multi mode bits, as in nbody_kern.cl */
#define NBODY_LAST  2
#define NRING 3       /* position buffers per block */
#define MAXDEV 64

static void die(const char* what)
{
    fprintf(stderr, "%s: %s failed: %s\n", nbody_prog, what, why());
    exit(NBODY_EXIT_RUNTIME);
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

/* Everything about one run. */
typedef struct {
    CONTEXT* cp;
    int k;                    /* devices */
    int nthread;              /* work-group size */
    int bpw[MAXDEV], js[MAXDEV]; /* per device: bodies per work-item, j split */
    long nb;                  /* bodies per block (padded) */
    long cnt[MAXDEV], off[MAXDEV]; /* real bodies of each block, first index */
    cl_float4* pos[NRING][MAXDEV];
    cl_float4* vel[MAXDEV];
    cl_float4* acc[MAXDEV];
    cl_kernel krn;
    float dt, eps;
} multi_t;

/* Launches nbody_kern_multi on device d: d's bodies pulled by block `src`
 * of ring buffer `in`; the last launch of a step writes ring buffer `out`. */
static void launch(multi_t* m, int d, int in, int out, int src, int mode)
{
    cl_kernel krn = m->krn;
    clndrange_t ndr = clndrange_init1d(0, m->nb / m->bpw[d] * m->js[d], m->nthread);
    clarg_set(m->cp, krn, 0, m->dt);
    clarg_set(m->cp, krn, 1, m->eps);
    clarg_set_global(m->cp, krn, 2, m->pos[in][d]);
    clarg_set_global(m->cp, krn, 3, m->pos[out][d]);
    clarg_set_global(m->cp, krn, 4, m->vel[d]);
    clarg_set_local(m->cp, krn, 5, m->nthread * sizeof(cl_float4));
    clarg_set_global(m->cp, krn, 6, m->pos[in][src]);
    clarg_set_global(m->cp, krn, 7, m->acc[d]);
    clarg_set(m->cp, krn, 8, mode);
    if (!clfork(m->cp, d, krn, &ndr, CL_EVENT_NOWAIT))
        die("clfork");
}

/* One time step t on all devices (see the top of the file). */
static void multi_step(multi_t* m, int t)
{
    const int k = m->k, in = t % NRING, out = (t + 1) % NRING;
    /* 1. Own blocks: on each device already. */
    for (int d = 0; d < k; d++)
        launch(m, d, in, out, d, NBODY_FIRST | (k == 1 ? NBODY_LAST : 0));
    if (k == 1)
        return;
    /* 2. The blocks computed at step t-1 must have reached the host; with
     *    them every kernel and transfer of step t-1 is done, so no device
     *    still reads buffer `out` (step t-2's sources) when it is rewritten. */
    for (int d = 0; d < k; d++)
        if (clwait(m->cp, d, CL_MEM_EVENT) < 0)
            die("transfer");
    /* 3. Forward the other blocks, pull by them, fetch the new own block. */
    for (int d = 0; d < k; d++) {
        for (int r = 1; r < k; r++) {
            int e = (d + r) % k;
            if (!clmsync(m->cp, d, m->pos[in][e], CL_MEM_DEVICE | CL_EVENT_NOWAIT))
                die("clmsync to device");
        }
        for (int r = 1; r < k; r++)
            launch(m, d, in, out, (d + r) % k, r == k - 1 ? NBODY_LAST : 0);
        if (!clmsync(m->cp, d, m->pos[out][d], CL_MEM_HOST | CL_EVENT_NOWAIT))
            die("clmsync to host");
        clflush(m->cp, d, 0);
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
        for (int d = 0; d < m->k; d++)
            if (clwait(m->cp, d, CL_ALL_EVENT) < 0)
                die("clwait");
        double t1 = nbody_now();
        if (t >= warm && tim)
            nbody_timing_add(tim, t1 - t0, nburst);
        t += nburst;
        if (t > warm)
            nbody_progress_step(&progress, t - warm);
    }
    /* With k > 1 every step ends by copying each new block to the host;
     * with one device, fetch the last positions now. */
    if (m->k == 1 && !clmsync(m->cp, 0, m->pos[total % NRING][0], CL_MEM_HOST | CL_EVENT_WAIT))
        die("clmsync to host");
    return total;
}

/* The same steps on device 0 alone with the one-device kernel nbody_kern,
 * exactly as nbody.c runs them; final positions into out (4 floats/body). */
static void one_device_run(CONTEXT* cp, void* clh, const nbody_opts* o, int nthread,
                           int steps, const float* pos0, const float* vel0, float* out,
                           float* vout)
{
    cl_kernel krn = clsym(cp, clh, "nbody_kern", CLLD_NOW);
    cl_kernel kinfo = clsym(cp, clh, "nbody_info", CLLD_NOW);
    cl_int* info = (cl_int*)clmalloc(cp, 8 * sizeof(cl_int), 0);
    clndrange_t ndr1 = clndrange_init1d(0, 1, 1);
    if (!krn || !kinfo || !info || !clforka(cp, 0, kinfo, &ndr1, CL_EVENT_WAIT, info) ||
        !clmsync(cp, 0, info, CL_MEM_HOST | CL_EVENT_WAIT))
        die("one-device setup");
    if (!nbody_shape_ok(info, nthread))
        exit(NBODY_EXIT_USAGE);
    const long gran = (long)info[0] * nthread;
    const long np = (o->n + gran - 1) / gran * gran;
    clndrange_t ndr = clndrange_init1d(0, np / info[0] * info[1], nthread);
    clfree(info);
    cl_float4* p1 = (cl_float4*)clmalloc(cp, np * sizeof(cl_float4), 0);
    cl_float4* p2 = (cl_float4*)clmalloc(cp, np * sizeof(cl_float4), 0);
    cl_float4* v = (cl_float4*)clmalloc(cp, np * sizeof(cl_float4), 0);
    if (!p1 || !p2 || !v)
        die("clmalloc");
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
            die("clfork");
        cl_float4* t = cur;
        cur = nxt;
        nxt = t;
    }
    if (clwait(cp, 0, CL_KERNEL_EVENT) < 0 || !clmsync(cp, 0, cur, CL_MEM_HOST | CL_EVENT_WAIT) ||
        !clmsync(cp, 0, v, CL_MEM_HOST | CL_EVENT_WAIT))
        die("one-device run");
    memcpy(out, cur, 4 * sizeof(float) * o->n);
    memcpy(vout, v, 4 * sizeof(float) * o->n);
    clfree(p1);
    clfree(p2);
    clfree(v);
}

int main(int argc, char** argv)
{
    nbody_opts o;
    nbody_parse_args(argc, argv, &o, NBODY_OPT_OPENCL | NBODY_OPT_DEVICES,
                     "NBody on K devices of one context with libstdcl: each device owns\n"
                     "N/K bodies and receives the others' positions through clmsync.");

    multi_t m;
    memset(&m, 0, sizeof m);
    m.cp = nbody_pick_context(o.ctx);
    if (!m.cp) {
        fprintf(stderr, "%s: no OpenCL GPU or CPU device (stdgpu and stdcpu are NULL)\n",
                nbody_prog);
        return NBODY_EXIT_RUNTIME;
    }
    const int ndev = (int)clgetndev(m.cp);
    if (o.ndev > ndev)
        nbody_usage_error("-d %d: the context has only %d device(s)", o.ndev, ndev);
    m.k = o.ndev ? o.ndev : ndev;
    if (m.k > MAXDEV)
        m.k = MAXDEV;

    int any_gpu = 0;
    char devname[256] = "?";
    for (int d = 0; d < m.k; d++) {
        cl_device_type type = 0;
        clGetDeviceInfo(stdcl_device(m.cp, d), CL_DEVICE_TYPE, sizeof type, &type, NULL);
        any_gpu |= (type & CL_DEVICE_TYPE_GPU) != 0;
    }
    clGetDeviceInfo(stdcl_device(m.cp, 0), CL_DEVICE_NAME, sizeof devname, devname, NULL);
    nbody_default_size(&o, any_gpu);
    if (o.n < m.k)
        nbody_usage_error("-n %ld: fewer bodies than devices (%d)", o.n, m.k);
    m.nthread = o.wg ? o.wg : any_gpu ? 256 : 8;
    m.dt = o.dt;
    m.eps = o.eps;

    /* Kernels, built for every device of the context with our options. */
    char kbuf[4096], options[2048];
    nbody_kernel_options(options, sizeof options, m.nthread, o.clopts);
    double tb = nbody_now();
    void* clh = clopen(m.cp, nbody_kernel_file(argv[0], kbuf, sizeof kbuf), CLLD_NOBUILD);
    if (!clh || !clbuild(m.cp, clh, options, 0)) {
        fprintf(stderr, "%s: cannot build nbody_kern.cl: %s\n", nbody_prog, why());
        return *o.clopts ? NBODY_EXIT_USAGE : NBODY_EXIT_RUNTIME; /* -o is suspect */
    }
    m.krn = clsym(m.cp, clh, "nbody_kern_multi", CLLD_NOW);
    cl_kernel kinfo = clsym(m.cp, clh, "nbody_info", CLLD_NOW);
    if (!m.krn || !kinfo)
        die("clsym");
    double build_s = nbody_now() - tb;

    /* Each device's variant (devices of different types build different
     * variants); the block size must suit all of them. */
    cl_int* info = (cl_int*)clmalloc(m.cp, 8 * sizeof(cl_int), 0);
    clndrange_t ndr1 = clndrange_init1d(0, 1, 1);
    long gran = 1;
    if (!info)
        die("clmalloc");
    for (int d = 0; d < m.k; d++) {
        if (!clforka(m.cp, d, kinfo, &ndr1, CL_EVENT_WAIT, info) ||
            !clmsync(m.cp, d, info, CL_MEM_HOST | CL_EVENT_WAIT))
            die("nbody_info");
        m.bpw[d] = info[0];
        m.js[d] = info[1];
        if (!nbody_shape_ok(info, m.nthread))
            return NBODY_EXIT_USAGE;
        long g = (long)m.bpw[d] * m.nthread;
        gran = gran / gcd(gran, g) * g;
    }
    clfree(info);

    /* Blocks: as even as possible, each padded to the same size. */
    long biggest = 0;
    for (int d = 0, off = 0; d < m.k; d++) {
        m.cnt[d] = o.n / m.k + (d < o.n % m.k);
        m.off[d] = off;
        off += m.cnt[d];
        if (m.cnt[d] > biggest)
            biggest = m.cnt[d];
    }
    m.nb = (biggest + gran - 1) / gran * gran;
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
    for (int d = 0; d < m.k; d++) {
        for (int r = 0; r < NRING; r++)
            if (!(m.pos[r][d] = (cl_float4*)clmalloc(m.cp, block_sz, 0)))
                die("clmalloc");
        if (!(m.vel[d] = (cl_float4*)clmalloc(m.cp, block_sz, 0)) ||
            !(m.acc[d] = (cl_float4*)clmalloc(m.cp, block_sz, 0)))
            die("clmalloc");
        nbody_pad(m.cnt[d], m.nb, (float*)m.pos[0][d], (float*)m.vel[d],
                  pos0 + 4 * m.off[d], vel0 + 4 * m.off[d], (long)d * m.nb);
        /* Device d starts with its own block and velocities; the others'
         * blocks go to it at the first step. */
        if (!clmsync(m.cp, d, m.pos[0][d], CL_MEM_DEVICE | CL_EVENT_WAIT) ||
            !clmsync(m.cp, d, m.vel[d], CL_MEM_DEVICE | CL_EVENT_WAIT))
            die("clmsync");
    }

    if (!o.quiet)
        fprintf(stderr, "%s: %d x %s, N=%ld in %d blocks of %ld (padded), work-group %d, "
                "%d bodies/work-item, build %.2f s, options: %s\n", nbody_prog, m.k, devname,
                o.n, m.k, m.nb, m.nthread, m.bpw[0], build_s, options);

    nbody_timing tim = { 0 };
    const int total = multi_run(&m, &o, o.bench ? o.burst : 0, &tim);
    const int last = total % NRING;
    for (int d = 0; d < m.k; d++) {
        memcpy(final + 4 * m.off[d], m.pos[last][d], 4 * sizeof(float) * m.cnt[d]);
        if (o.check) { /* velocities stay on their device otherwise */
            if (!clmsync(m.cp, d, m.vel[d], CL_MEM_HOST | CL_EVENT_WAIT))
                die("clmsync to host");
            memcpy(final_vel + 4 * m.off[d], m.vel[d], 4 * sizeof(float) * m.cnt[d]);
        }
    }

    char extra[128];
    snprintf(extra, sizeof extra, "device=%s wg=%d bpw=%d", any_gpu ? "gpu" : "cpu", m.nthread,
             m.bpw[0]);
    nbody_summary("stdcl_multi", &o, m.k, &tim, extra);

    int rc = NBODY_EXIT_OK;
    if (o.check) {
        float* one = (float*)malloc(4 * sizeof(float) * o.n);
        float* one_vel = (float*)malloc(4 * sizeof(float) * o.n);
        if (!one || !one_vel) {
            fprintf(stderr, "%s: out of memory\n", nbody_prog);
            return NBODY_EXIT_RUNTIME;
        }
        one_device_run(m.cp, clh, &o, m.nthread, total, pos0, vel0, one, one_vel);
        char label[64];
        snprintf(label, sizeof label, "%d devices vs one device", m.k);
        int ok_mo = nbody_check_pair(label, o.n, total, vel0, final, final_vel, one, one_vel);
        int ok_one = nbody_check("one device vs double reference", o.n, total, pos0, vel0,
                                 one, one_vel, o.dt, o.eps);
        snprintf(label, sizeof label, "%d devices vs double reference", m.k);
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
    for (int d = 0; d < m.k; d++) {
        for (int r = 0; r < NRING; r++)
            clfree(m.pos[r][d]);
        clfree(m.vel[d]);
        clfree(m.acc[d]);
    }
    clclose(m.cp, clh);
    free(pos0);
    free(vel0);
    free(final);
    free(final_vel);
    fflush(stdout); /* before the library's exit-time clean-up runs */
    return rc;
}
