/* SPDX-License-Identifier: MIT */
/* tiled_conv.c: a tiled convolution with async_work_group_copy on an image
 * whose sides are not powers of two.  The tile's size depends on the local
 * size, (lx + 2R)(ly + 2R) floats, so the __local argument is sized by a
 * function of the resolved local size (CLLOCAL_FN) and the local size is
 * left to libstdcl (or given with -l).  With STDCL_PROFILE=1 the kernel's
 * device time comes from clevent_times.
 *
 *   tiled_conv [-w width] [-h height] [-r radius] [-l LXxLY]
 *              [--plain] [--reps n] [--check]
 * --plain: the same convolution reading global memory only (no tile).
 * Prints the chosen local size and the time per run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <stdcl.h>

#include "../example_args.h"

static size_t tile_bytes(const size_t* local, size_t dim, void* user)
{
    (void)dim;
    int r = *(const int*)user;
    return (local[0] + 2 * (size_t)r) * (local[1] + 2 * (size_t)r) * sizeof(float);
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

int main(int argc, char** argv)
{
    int W = 1000, H = 750, R = 2, reps = 1, check = 0, plain = 0;
    const char* local = NULL;
    size_t lx = 0, ly = 0; /* 0: libstdcl chooses */
    const example_opt opts[] = {EXAMPLE_INT("-w", "width", &W, 1, INT_MAX),
                                EXAMPLE_INT("-h", "height", &H, 1, INT_MAX),
                                EXAMPLE_INT("-r", "radius", &R, 0, 8),
                                EXAMPLE_STRING("-l", "LXxLY", &local),
                                EXAMPLE_FLAG("--plain", &plain),
                                EXAMPLE_INT("--reps", "n", &reps, 1, INT_MAX),
                                EXAMPLE_FLAG("--check", &check),
                                EXAMPLE_END};
    if (!example_args(argc, argv, opts)) return 2;
    if (local && sscanf(local, "%zux%zu", &lx, &ly) != 2) {
        example_usage(argv[0], opts);
        return 2;
    }
    CLCONTEXT* cp = example_context("dev", NULL);
    if (!cp) return 1;
    void* h = clopen(cp, "tiled_conv.cl", CLLD_NOW);
    cl_kernel k = h ? clsym(cp, h, plain ? "conv_plain" : "conv_async", 0) : NULL;
    int Wp = W + 2 * R, Hp = H + 2 * R, K = 2 * R + 1;
    float* in = (float*)clmalloc(cp, (size_t)Wp * Hp * sizeof(float), CL_MEM_RO);
    float* w = (float*)clmalloc(cp, (size_t)K * K * sizeof(float), CL_MEM_RO);
    float* out = (float*)clmalloc(cp, (size_t)W * H * sizeof(float), CL_MEM_WO);
    if (!k || !in || !w || !out) {
        fprintf(stderr, "setup: %s\n", clerror());
        return 1;
    }
    memset(in, 0, (size_t)Wp * Hp * sizeof(float)); /* a zero border */
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) in[(size_t)(y + R) * Wp + x + R] = (float)((x * 7 + y * 13) % 256) / 255.0f;
    for (int i = 0; i < K * K; i++) w[i] = 1.0f / (K * K) * (1.0f + 0.1f * (i % 3));
    clmsync(cp, 0, in, CL_MEM_DEVICE);
    clmsync(cp, 0, w, CL_MEM_DEVICE);
    clndrange_t ndr = clndrange_init2d(0, W, lx, 0, H, ly);
    double best = 1e30, dev_ms = -1;
    for (int rep = 0; rep < reps; rep++) {
        double t0 = now();
        cl_event ev = plain
            ? clforka(cp, 0, k, &ndr, CL_EVENT_WAIT | CL_EVENT_NORELEASE, in, w, out, W, R)
            : clforka(cp, 0, k, &ndr, CL_EVENT_WAIT | CL_EVENT_NORELEASE, in, w, out, W, R, CLLOCAL_FN(tile_bytes, &R));
        double t = now() - t0;
        if (!ev) {
            fprintf(stderr, "clforka: %s\n", clerror());
            return 1;
        }
        cl_ulong s, e;
        if (clevent_times(ev, &s, &e) == 0) t = (double)(e - s) * 1e-9, dev_ms = t * 1e3;
        clReleaseEvent(ev);
        if (rep > 0 || reps == 1) best = t < best ? t : best; /* the first of several warms up */
    }
    clmsync(cp, 0, out, CL_MEM_HOST);
    printf("%s %dx%d radius %d: local size %zux%zu, %.3f ms (%s)\n", plain ? "plain" : "async", W, H, R, ndr.ltsz[0],
           ndr.ltsz[1], best * 1e3,
           dev_ms >= 0 ? "device time, clevent_times" : "wall time; STDCL_PROFILE=1 for device time");
    int status = 0;
    if (check) {
        double worst = 0;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                double s = 0;
                for (int dy = 0; dy < K; dy++)
                    for (int dx = 0; dx < K; dx++) s += (double)w[dy * K + dx] * in[(size_t)(y + dy) * Wp + x + dx];
                double d = fabs(s - out[(size_t)y * W + x]);
                if (!(d <= worst)) worst = d; /* a NaN is the worst of all */
            }
        status = worst < 1e-4 ? 0 : 1; /* NaN: not less, a failure */
        printf("check vs host convolution: worst difference %.2e: %s\n", worst, status ? "FAIL" : "PASS");
    }
    clfree(in);
    clfree(w);
    clfree(out);
    clclose(cp, h);
    return status;
}
