/* SPDX-License-Identifier: MIT */
/* fft.c: a 2D circular convolution of two complex w x h arrays through
 * clFFT on clmalloc memory, on one device: y = F^-1(F(x) . F(g)).  The two
 * forward transforms and the inverse are clFFT's commands, each bracketed
 * by clforeign_begin and clforeign_end with CL_FOREIGN_WAITLIST: libstdcl
 * hands out the events of its own earlier commands on the allocations
 * (clforeign_waitlist), which become clFFT's wait list, and orders its later
 * commands after clFFT's event.  The transform of x runs on a queue of the
 * program's own (clCreateCommandQueue), that of g on the device's kernel
 * queue (clforeign_begin's queue NULL, clforeign_queue), each with its plan
 * (a plan's internal buffer is not shared between queues that may run at
 * the same time).  A plan that needs a temporary buffer
 * (clfftGetTmpBufSize) gets device-only libstdcl memory (CL_MEM_DEVONLY,
 * stdcl_mem), announced like the others.  The pointwise product of the
 * spectra is a libstdcl kernel (fft.cl, clforka), and the uploads of x and g
 * do not wait (CL_EVENT_NOWAIT).  clFFT scales the inverse by 1 / (w h).
 * clFFT keeps its kernels, which name the buffers they last ran on, until
 * clfftTeardown, and clfftDestroyPlan releases a plan's own buffers at
 * once: so the plans go with clfftTeardown (kernels first, then the plans
 * left), and the memory after it.
 *
 *   fft [-c cpu|gpu|dev] [-w width] [-h height] [-r repeats] [--check]
 *
 * -c: the context (default stddev; its device 0).  Sides: products of 2, 3,
 * 5, 7, 11 and 13 (clFFT's radices).  Prints the time of each run, from the
 * uploads to y back on the host.  --check compares y with the direct
 * circular convolution on the host, in double precision (every entry up to
 * 4096 entries, 256 sampled entries above), within 1e-4 of the magnitude
 * sum of each entry's terms. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <stdcl.h>

#include <clFFT.h>

#include "../example_args.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Pseudo-random values in [-1, 1). */
static float uniform(unsigned long long* s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((double)(*s >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

/* A plan with the temporary buffer it uses (NULL: none). */
typedef struct {
    clfftPlanHandle plan;
    void* tmp;
} fft_plan;

/* A 2D complex single-precision out-of-place plan for w x h, baked for q,
 * and its temporary buffer.  0, or 1 after a message. */
static int make_plan(CLCONTEXT* cp, cl_command_queue q, size_t w, size_t h, fft_plan* p)
{
    size_t lengths[2] = {w, h}, tmp_bytes = 0; /* the first length is the fastest-varying */
    p->plan = 0;
    p->tmp = NULL;
    clfftStatus st = clfftCreateDefaultPlan(&p->plan, stdcl_clcontext(cp), CLFFT_2D, lengths);
    if (st == CLFFT_SUCCESS) st = clfftSetPlanPrecision(p->plan, CLFFT_SINGLE);
    if (st == CLFFT_SUCCESS) st = clfftSetLayout(p->plan, CLFFT_COMPLEX_INTERLEAVED, CLFFT_COMPLEX_INTERLEAVED);
    if (st == CLFFT_SUCCESS) st = clfftSetResultLocation(p->plan, CLFFT_OUTOFPLACE);
    if (st == CLFFT_SUCCESS) st = clfftBakePlan(p->plan, 1, &q, NULL, NULL);
    if (st == CLFFT_SUCCESS) st = clfftGetTmpBufSize(p->plan, &tmp_bytes);
    if (st != CLFFT_SUCCESS) {
        fprintf(stderr, "clFFT plan for %zux%zu: status %d%s\n", w, h, (int)st,
                st == CLFFT_NOTIMPLEMENTED ? " (sides: products of 2, 3, 5, 7, 11 and 13)" : "");
        return 1;
    }
    if (tmp_bytes && !(p->tmp = clmalloc(cp, tmp_bytes, CL_MEM_DEVONLY))) {
        fprintf(stderr, "clmalloc of clFFT's temporary buffer (%zu bytes): %s\n", tmp_bytes, clerror());
        return 1;
    }
    return 0;
}

/* out = F(in) (dir CLFFT_FORWARD) or F^-1(in) on queue q (NULL: the kernel
 * queue), announced to libstdcl: in is read, out written (and the plan's
 * temporary buffer).  0 or 1. */
static int transform(CLCONTEXT* cp, cl_command_queue q, const fft_plan* p, clfftDirection dir, void* in, void* out)
{
    struct clforeign_use uses[] = {{in, CL_MEM_RO, 0}, {out, CL_MEM_WO, 0}, {p->tmp, CL_MEM_WO, 0}};
    CLFOREIGN* f = clforeign_begin(cp, 0, q, uses, p->tmp ? 3 : 2, CL_FOREIGN_WAITLIST);
    if (!f) {
        fprintf(stderr, "clforeign_begin: %s\n", clerror());
        return 1;
    }
    cl_command_queue fq = clforeign_queue(f);
    const cl_event* wait = NULL;
    cl_uint nwait = clforeign_waitlist(f, &wait);
    cl_mem im = stdcl_mem(cp, 0, in), om = stdcl_mem(cp, 0, out), tm = p->tmp ? stdcl_mem(cp, 0, p->tmp) : NULL;
    cl_event ev = NULL;
    clfftStatus st = CLFFT_INVALID_MEM_OBJECT;
    if (im && om && (tm || !p->tmp)) st = clfftEnqueueTransform(p->plan, dir, 1, &fq, nwait, wait, &ev, &im, &om, tm);
    int bad = st != CLFFT_SUCCESS || !ev;
    if (bad) fprintf(stderr, "clfftEnqueueTransform: status %d\n", (int)st);
    /* Even after a failure: the ticket ends (with nothing, it covers the queue). */
    if (clforeign_end(f, bad ? 0 : 1, bad ? NULL : &ev) != 0) {
        fprintf(stderr, "clforeign_end: %s\n", clerror());
        bad = 1;
    }
    if (ev) clReleaseEvent(ev);
    return bad;
}

/* y against the direct circular convolution of x and g: 0, or 1. */
static int check(const float* x, const float* g, const float* y, size_t w, size_t h)
{
    size_t n = w * h, count = n <= 4096 ? n : 256, bad = 0;
    double worst = 0;
    for (size_t s = 0; s < count; s++) {
        size_t e = n <= 4096 ? s : (s * 2654435761u + 12345u) % n, i = e / w, j = e % w;
        double re = 0, im = 0, mag = 0;
        for (size_t k = 0; k < h; k++)
            for (size_t l = 0; l < w; l++) {
                size_t a = k * w + l, b = ((i + h - k) % h) * w + (j + w - l) % w;
                double xr = x[2 * a], xi = x[2 * a + 1], gr = g[2 * b], gi = g[2 * b + 1];
                re += xr * gr - xi * gi;
                im += xr * gi + xi * gr;
                mag += hypot(xr, xi) * hypot(gr, gi);
            }
        double err = hypot(y[2 * e] - re, y[2 * e + 1] - im) / (mag > 0 ? mag : 1);
        if (err > worst) worst = err;
        if (!(err <= 1e-4) && !bad++)
            fprintf(stderr, "y[%zu][%zu] = (%g, %g), expected (%g, %g)\n", i, j, y[2 * e], y[2 * e + 1], re, im);
    }
    printf("check %zux%zu convolution: %zu entries, %zu wrong, largest relative error %.2e: %s\n", w, h, count, bad,
           worst, bad ? "FAIL" : "PASS");
    return bad ? 1 : 0;
}

int main(int argc, char** argv)
{
    int w = 256, h = 256, repeats = 3, checking = 0;
    const char* ctx = "dev";
    const example_opt opts[] = {
        EXAMPLE_STRING("-c", "cpu|gpu|dev", &ctx),   EXAMPLE_INT("-w", "width", &w, 1, 1 << 14),
        EXAMPLE_INT("-h", "height", &h, 1, 1 << 14), EXAMPLE_INT("-r", "repeats", &repeats, 1, INT_MAX),
        EXAMPLE_FLAG("--check", &checking),          EXAMPLE_END};
    if (!example_args(argc, argv, opts)) return 2;
    int bad_ctx;
    CLCONTEXT* cp = example_context(ctx, &bad_ctx);
    if (bad_ctx) {
        example_usage(argv[0], opts);
        return 2;
    }
    if (!cp) return 1;
    size_t n = (size_t)w * h, bytes = n * 2 * sizeof(float);
    void* lib = clopen(cp, "fft.cl", CLLD_NOW);
    cl_kernel cmul = lib ? clsym(cp, lib, "cmul", 0) : NULL;
    float* x = clmalloc(cp, bytes, CL_MEM_RO);
    float* g = clmalloc(cp, bytes, CL_MEM_RO);
    float* fx = clmalloc(cp, bytes, 0); /* F(x), then F(x) . F(g) */
    float* fg = clmalloc(cp, bytes, 0);
    float* y = clmalloc(cp, bytes, 0); /* clFFT reads its output too */
    if (!cmul || !x || !g || !fx || !fg || !y) {
        fprintf(stderr, "setup: %s\n", clerror());
        return 1;
    }
    unsigned long long seed = 7;
    for (size_t i = 0; i < 2 * n; i++) {
        x[i] = uniform(&seed);
        g[i] = uniform(&seed);
    }

    /* clFFT, and a queue of the program's own on device 0. */
    clfftSetupData setup;
    cl_int err;
    cl_command_queue own = clCreateCommandQueue(stdcl_clcontext(cp), stdcl_device(cp, 0), 0, &err);
    if (clfftInitSetupData(&setup) != CLFFT_SUCCESS || clfftSetup(&setup) != CLFFT_SUCCESS || !own) {
        fprintf(stderr, "clFFT setup or clCreateCommandQueue (%d) failed\n", (int)err);
        return 1;
    }
    double t0 = now();
    /* One plan per queue; the bake queue only gives the plan its device. */
    fft_plan plan_own = {0, NULL}, plan_k = {0, NULL};
    int bad = make_plan(cp, own, (size_t)w, (size_t)h, &plan_own) || make_plan(cp, own, (size_t)w, (size_t)h, &plan_k);
    char dn[256] = "";
    clGetDeviceInfo(stdcl_device(cp, 0), CL_DEVICE_NAME, sizeof dn, dn, NULL);
    if (!bad)
        printf("fft: std%s device 0 (%s), %dx%d complex, plans baked in %.2f s%s\n", ctx, dn, w, h, now() - t0,
               plan_own.tmp ? ", with temporary buffers" : "");
    clndrange_t ndr = clndrange_init1d(0, n, 0);
    for (int r = 1; r <= repeats && !bad; r++) {
        t0 = now();
        if (!clmsync(cp, 0, x, CL_MEM_DEVICE | CL_EVENT_NOWAIT) ||
            !clmsync(cp, 0, g, CL_MEM_DEVICE | CL_EVENT_NOWAIT)) {
            fprintf(stderr, "clmsync: %s\n", clerror());
            bad = 1;
            break;
        }
        bad = transform(cp, own, &plan_own, CLFFT_FORWARD, x, fx) || transform(cp, NULL, &plan_k, CLFFT_FORWARD, g, fg);
        if (!bad && !clforka(cp, 0, cmul, &ndr, CL_EVENT_NOWAIT, fx, fg)) {
            fprintf(stderr, "clforka: %s\n", clerror());
            bad = 1;
        }
        bad = bad || transform(cp, own, &plan_own, CLFFT_BACKWARD, fx, y);
        if (!bad && !clmsync(cp, 0, y, CL_MEM_HOST)) {
            fprintf(stderr, "clmsync: %s\n", clerror());
            bad = 1;
        }
        clwait(cp, 0, CL_ALL_EVENT);
        if (!bad) printf("fft %dx%d run %d: %.3f ms\n", w, h, r, 1e3 * (now() - t0));
    }
    if (!bad && checking) bad = check(x, g, y, (size_t)w, (size_t)h);
    /* No clfftDestroyPlan: the plans go with clfftTeardown, after clFFT's
     * kernels (see the top), and the memory after it. */
    clfftTeardown();
    clReleaseCommandQueue(own);
    clfree(plan_own.tmp);
    clfree(plan_k.tmp);
    clfree(x);
    clfree(g);
    clfree(fx);
    clfree(fg);
    clfree(y);
    clclose(cp, lib);
    return bad ? 1 : 0;
}
