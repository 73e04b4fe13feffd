/* SPDX-License-Identifier: MIT */
/* nbody_stdcl.c: what the libstdcl NBody programs share: context choice,
 * kernel file lookup and build, the blocks of a multi-device run and their
 * time steps, and the one-device run behind --check. */
#include "nbody_stdcl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nbody_common.h"

CONTEXT* nbody_pick_context(const char* name)
{
    if (!name) return stdgpu ? stdgpu : stdcpu;
    CONTEXT* cp = !strcmp(name, "gpu") ? stdgpu : !strcmp(name, "cpu") ? stdcpu : stddev;
    if (!cp) nbody_usage_error("-c %s: this machine has no such OpenCL context (std%s is NULL)", name, name);
    return cp;
}

const char* nbody_kernel_file(const char* argv0, char* buf, size_t cap)
{
    const char* slash = strrchr(argv0, '/');
    if (access("nbody_kern.cl", R_OK) == 0 || getenv("STDCL_KERNEL_PATH") || !slash) return "nbody_kern.cl";
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
    if (nbody_exit_hook) nbody_exit_hook(NBODY_EXIT_RUNTIME);
    exit(NBODY_EXIT_RUNTIME);
}

void* nbody_build(CONTEXT* cp, const char* argv0, const nbody_opts* o, int nthread, char* options, size_t cap,
                  double* build_s)
{
    char kbuf[4096];
    nbody_kernel_options(options, cap, nthread, o->clopts);
    double tb = nbody_now();
    void* clh = clopen(cp, nbody_kernel_file(argv0, kbuf, sizeof kbuf), CLLD_NOBUILD);
    if (!clh || !clbuild(cp, clh, options, 0)) {
        fprintf(stderr, "%s: cannot build nbody_kern.cl: %s\n", nbody_prog, nbody_why());
        int status = *o->clopts ? NBODY_EXIT_USAGE : NBODY_EXIT_RUNTIME; /* -o is suspect */
        if (nbody_exit_hook) nbody_exit_hook(status);
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

int nbody_devs_any_gpu(nbody_devs* m)
{
    m->any_gpu = 0;
    for (int d = 0; d < m->k; d++) {
        cl_device_type type = 0;
        clGetDeviceInfo(stdcl_device(m->cp, d), CL_DEVICE_TYPE, sizeof type, &type, NULL);
        m->any_gpu |= (type & CL_DEVICE_TYPE_GPU) != 0;
    }
    return m->any_gpu;
}

int nbody_devs_shape(nbody_devs* m, void* clh)
{
    cl_kernel kinfo = clsym(m->cp, clh, "nbody_info", CLLD_NOW);
    m->krn = clsym(m->cp, clh, "nbody_kern_multi", CLLD_NOW);
    if (!m->krn || !kinfo) nbody_die("clsym");
    /* Devices of different types build different variants; the block size
     * must suit all of them. */
    cl_int* info = (cl_int*)clmalloc(m->cp, 8 * sizeof(cl_int), 0);
    clndrange_t ndr1 = clndrange_init1d(0, 1, 1);
    if (!info) nbody_die("clmalloc");
    m->gran = 1;
    nbody_devs_any_gpu(m);
    for (int d = 0; d < m->k; d++) {
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

/* Launches nbody_kern_multi on device d over one block of nb bodies (d's
 * positions pos_old, its velocities vel and sums acc), pulled by the source
 * block src; the NBODY_LAST launch writes pos_new.  Exits on failure. */
static void launch_block(const nbody_devs* m, int d, long nb, void* pos_old, void* pos_new, void* vel, void* src,
                         void* acc, int mode)
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
    if (!clfork(m->cp, d, krn, &ndr, CL_EVENT_NOWAIT)) nbody_die("clfork");
}

void nbody_blocks_layout(nbody_blocks* b, long n, int nproc, const int* ndev_of, int self, long gran)
{
    b->nblock = 0;
    for (int p = 0; p < nproc; p++) {
        if (p == self) b->first = b->nblock;
        b->nblock += ndev_of[p];
    }
    b->cnt = (long*)malloc(sizeof(long) * b->nblock);
    b->off = (long*)malloc(sizeof(long) * b->nblock);
    if (!b->cnt || !b->off) nbody_die("malloc");
    long biggest = 0, off = 0;
    for (int p = 0, g = 0; p < nproc; p++) {
        long own = n / nproc + (p < n % nproc);
        for (int d = 0; d < ndev_of[p]; d++, g++) {
            b->cnt[g] = own / ndev_of[p] + (d < own % ndev_of[p]);
            b->off[g] = off;
            off += b->cnt[g];
            if (b->cnt[g] > biggest) biggest = b->cnt[g];
        }
    }
    b->nb = (biggest + gran - 1) / gran * gran;
}

void nbody_blocks_alloc(nbody_blocks* b, const float* pos0, const float* vel0)
{
    const size_t block_sz = b->nb * sizeof(cl_float4);
    CONTEXT* cp = b->dv.cp;
    for (int r = 0; r < NBODY_RING; r++) {
        if (!(b->pos[r] = (cl_float4**)calloc(b->nblock, sizeof(cl_float4*)))) nbody_die("malloc");
        for (int e = 0; e < b->nblock; e++)
            if (!(b->pos[r][e] = (cl_float4*)clmalloc(cp, block_sz, 0))) nbody_die("clmalloc");
    }
    for (int d = 0; d < b->dv.k; d++) {
        const int g = b->first + d;
        /* acc: the partial sums between one step's launches, which only the
         * kernels use: device memory, no host copy. */
        if (!(b->vel[d] = (cl_float4*)clmalloc(cp, block_sz, 0)) ||
            !(b->acc[d] = (cl_float4*)clmalloc(cp, block_sz, CL_MEM_DEVONLY)))
            nbody_die("clmalloc");
        nbody_pad(b->cnt[g], b->nb, (float*)b->pos[0][g], (float*)b->vel[d], pos0 + 4 * b->off[g], vel0 + 4 * b->off[g],
                  (long)g * b->nb);
        if (!clmsync(cp, d, b->pos[0][g], CL_MEM_DEVICE | CL_EVENT_WAIT) ||
            !clmsync(cp, d, b->vel[d], CL_MEM_DEVICE | CL_EVENT_WAIT))
            nbody_die("clmsync");
    }
}

/* Launches nbody_kern_multi on device d: its block pulled by block `src` of
 * ring buffer `in`; the last launch of a step writes ring buffer `out`. */
static void launch(nbody_blocks* b, int d, int in, int out, int src, int mode)
{
    const int g = b->first + d;
    launch_block(&b->dv, d, b->nb, b->pos[in][g], b->pos[out][g], b->vel[d], b->pos[in][src], b->acc[d], mode);
}

void nbody_blocks_step(nbody_blocks* b, int t)
{
    const int k = b->dv.k, B = b->nblock, in = t % NBODY_RING, out = (t + 1) % NBODY_RING;
    CONTEXT* cp = b->dv.cp;
    /* 1. Own blocks: on each device already. */
    for (int d = 0; d < k; d++) launch(b, d, in, out, b->first + d, NBODY_FIRST | (B == 1 ? NBODY_LAST : 0));
    if (B == 1) return;
    /* 2. The own blocks computed at step t-1 must have reached the host; with
     *    them every kernel and transfer of step t-1 is done, so no device
     *    still reads buffer `out` (step t-2's sources) when it is rewritten. */
    for (int d = 0; d < k; d++)
        if (!clwait(cp, d, CL_MEM_EVENT)) nbody_die("transfer");
    /* 3. The other processes' blocks of step t-1, while the kernels run. */
    if (b->exchange) b->exchange(b, b->pos[in], b->user);
    /* 4. Forward the other blocks, pull by them, fetch the new own block. */
    for (int d = 0; d < k; d++) {
        const int g = b->first + d;
        for (int r = 1; r < B; r++)
            if (!clmsync(cp, d, b->pos[in][(g + r) % B], CL_MEM_DEVICE | CL_EVENT_NOWAIT))
                nbody_die("clmsync to device");
        for (int r = 1; r < B; r++) launch(b, d, in, out, (g + r) % B, r == B - 1 ? NBODY_LAST : 0);
        if (!clmsync(cp, d, b->pos[out][g], CL_MEM_HOST | CL_EVENT_NOWAIT)) nbody_die("clmsync to host");
        clflush(cp, d, 0);
    }
}

/* One burst of nbody_blocks_run: the steps, then a wait for every device. */
static double blocks_burst(void* user, int first, int count)
{
    nbody_blocks* b = (nbody_blocks*)user;
    for (int s = 0; s < count; s++) nbody_blocks_step(b, first + s);
    for (int d = 0; d < b->dv.k; d++)
        if (!clwait(b->dv.cp, d, CL_ALL_EVENT)) nbody_die("clwait");
    return -1; /* the wall time */
}

int nbody_blocks_run(nbody_blocks* b, const nbody_opts* o, int warm, int quiet, nbody_timing* tim)
{
    const int total = nbody_run_bursts(o, warm, quiet, tim, blocks_burst, b);
    /* With more than one block every step ends by copying each new block to
     * the host; with one block in all, fetch the last positions now. */
    if (b->nblock == 1 && !clmsync(b->dv.cp, 0, b->pos[total % NBODY_RING][0], CL_MEM_HOST | CL_EVENT_WAIT))
        nbody_die("clmsync to host");
    return total;
}

/* The real bodies of every block of blk[] into out, in body order. */
static void gather(const nbody_blocks* b, cl_float4** blk, float* out)
{
    for (int e = 0; e < b->nblock; e++) memcpy(out + 4 * b->off[e], blk[e], 4 * sizeof(float) * b->cnt[e]);
}

void nbody_blocks_gather(nbody_blocks* b, int last, float* pos, float* vel)
{
    if (b->exchange) b->exchange(b, b->pos[last], b->user);
    gather(b, b->pos[last], pos);
    if (!vel) return;
    /* Velocities stay on their device until now.  The other processes'
     * blocks arrive in a ring buffer that the run no longer needs. */
    cl_float4** vblk = (cl_float4**)calloc(b->nblock, sizeof(cl_float4*));
    if (!vblk) nbody_die("malloc");
    for (int e = 0; e < b->nblock; e++) {
        int d = e - b->first;
        vblk[e] = d >= 0 && d < b->dv.k ? b->vel[d] : b->pos[(last + 1) % NBODY_RING][e];
    }
    for (int d = 0; d < b->dv.k; d++)
        if (!clmsync(b->dv.cp, d, b->vel[d], CL_MEM_HOST | CL_EVENT_WAIT)) nbody_die("clmsync to host");
    if (b->exchange) b->exchange(b, vblk, b->user);
    gather(b, vblk, vel);
    free(vblk);
}

void nbody_blocks_free(nbody_blocks* b)
{
    for (int r = 0; r < NBODY_RING; r++) {
        for (int e = 0; b->pos[r] && e < b->nblock; e++) clfree(b->pos[r][e]);
        free(b->pos[r]);
        b->pos[r] = NULL;
    }
    for (int d = 0; d < b->dv.k; d++) {
        clfree(b->vel[d]);
        clfree(b->acc[d]);
        b->vel[d] = b->acc[d] = NULL;
    }
    free(b->cnt);
    free(b->off);
    b->cnt = b->off = NULL;
}

int nbody_check_vs_one_device(CONTEXT* cp, void* clh, const nbody_opts* o, int nthread, int steps, const float* pos0,
                              const float* vel0, const float* pos, const float* vel, const char* many, const char* one)
{
    float* one_pos = (float*)malloc(4 * sizeof(float) * o->n);
    float* one_vel = (float*)malloc(4 * sizeof(float) * o->n);
    if (!one_pos || !one_vel) nbody_die("malloc");
    nbody_one_device_run(cp, clh, o, nthread, steps, pos0, vel0, one_pos, one_vel);
    char label[128];
    snprintf(label, sizeof label, "%s vs %s", many, one);
    int ok_pair = nbody_check_pair(label, o->n, steps, vel0, pos, vel, one_pos, one_vel);
    snprintf(label, sizeof label, "%s vs double reference", one);
    int ok_one = nbody_check(label, o->n, steps, pos0, vel0, one_pos, one_vel, o->dt, o->eps);
    snprintf(label, sizeof label, "%s vs double reference", many);
    int ok_many = nbody_check(label, o->n, steps, pos0, vel0, pos, vel, o->dt, o->eps);
    int rc = ok_pair && ok_one && ok_many ? NBODY_EXIT_OK : NBODY_EXIT_FAIL;
    printf("check: %s\n", rc ? "FAIL" : "PASS");
    free(one_pos);
    free(one_vel);
    return rc;
}

void nbody_one_device_run(CONTEXT* cp, void* clh, const nbody_opts* o, int nthread, int steps, const float* pos0,
                          const float* vel0, float* out, float* vout)
{
    cl_kernel krn = clsym(cp, clh, "nbody_kern", CLLD_NOW);
    cl_kernel kinfo = clsym(cp, clh, "nbody_info", CLLD_NOW);
    cl_int* info = (cl_int*)clmalloc(cp, 8 * sizeof(cl_int), 0);
    clndrange_t ndr1 = clndrange_init1d(0, 1, 1);
    if (!krn || !kinfo || !info || !clforka(cp, 0, kinfo, &ndr1, CL_EVENT_WAIT, info) ||
        !clmsync(cp, 0, info, CL_MEM_HOST | CL_EVENT_WAIT))
        nbody_die("one-device setup");
    if (!nbody_shape_ok(info, nthread)) {
        if (nbody_exit_hook) nbody_exit_hook(NBODY_EXIT_USAGE);
        exit(NBODY_EXIT_USAGE);
    }
    const long gran = (long)info[0] * nthread;
    const long np = (o->n + gran - 1) / gran * gran;
    clndrange_t ndr = clndrange_init1d(0, np / info[0] * info[1], nthread);
    clfree(info);
    cl_float4* p1 = (cl_float4*)clmalloc(cp, np * sizeof(cl_float4), 0);
    cl_float4* p2 = (cl_float4*)clmalloc(cp, np * sizeof(cl_float4), 0);
    cl_float4* v = (cl_float4*)clmalloc(cp, np * sizeof(cl_float4), 0);
    if (!p1 || !p2 || !v) nbody_die("clmalloc");
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
        if (!clfork(cp, 0, krn, &ndr, CL_EVENT_NOWAIT)) nbody_die("clfork");
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
