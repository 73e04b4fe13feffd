/* SPDX-License-Identifier: MIT */
/* helper_synccheck.c: seeded sync bugs for test_synccheck.c, run with
 * STDCL_CHECK=sync... (read when the library loads).  argv[1] names the
 * scenario; the program prints "launch: ok" or "launch: failed <code>
 * <message>" per launch and "result: <value>", and exits 0.
 *   forgot_upload   the host fills the const input y, launches without
 *                   clmsync of y to the device
 *   stale_upload    clmsync to the device, then the host changes x, launches
 *   correct         upload, launch, bring back, change, upload, launch
 *   slices          one allocation split over two devices: each device gets
 *                   and returns its half with clmsyncn (NOWAIT), twice
 *   const_input     a const input read twice, an output written between
 *   loop            stale_upload, launched three times (reported once)
 *   nowait          forgot_upload with CL_EVENT_NOWAIT launches
 *   fill            a new allocation's first word, and a kernel's result
 *                   from an input never sent (STDCL_CHECK=fill: NaN) */
#include <stdcl.h>

#include <stdio.h>
#include <string.h>

static const char* src =
    "__kernel void axpy(__global float* x, __global const float* y, int n)\n"
    "{ int i = get_global_id(0); if (i < n) x[i] = 2.0f * x[i] + y[i]; }\n";

enum { N = 1024 };

static void launch(cl_kernel k, unsigned d, float* x, float* y, int n, int flags)
{
    clndrange_t ndr = clndrange_init1d(0, (size_t)n, 64);
    if (clforka(stdcpu, d, k, &ndr, flags, x, y, n))
        printf("launch: ok\n");
    else
        printf("launch: failed %s\n", clerror());
    if (flags & CL_EVENT_NOWAIT) stdcl_wait(stdcpu, d, CL_ALL_EVENT);
}

int main(int argc, char** argv)
{
    const char* what = argc > 1 ? argv[1] : "";
    setvbuf(stdout, NULL, _IONBF, 0);
    if (!stdcpu || clgetndev(stdcpu) < 2) {
        fprintf(stderr, "helper_synccheck: stdcpu needs 2 devices\n");
        return 3;
    }
    void* h = clsopen(stdcpu, src, CLLD_NOW);
    cl_kernel k = clsym(stdcpu, h, "axpy", CLLD_NOW);
    float* x = (float*)clmalloc(stdcpu, N * sizeof(float), 0);
    float* y = (float*)clmalloc(stdcpu, N * sizeof(float), 0);
    if (!k || !x || !y) {
        fprintf(stderr, "helper_synccheck: %s\n", clerror());
        return 3;
    }
    for (int i = 0; i < N; i++) x[i] = (float)i, y[i] = 1.0f;
    int w = CL_MEM_DEVICE | CL_EVENT_WAIT, back = CL_MEM_HOST | CL_EVENT_WAIT;
    if (!strcmp(what, "forgot_upload") || !strcmp(what, "nowait")) {
        clmsync(stdcpu, 0, x, w);
        launch(k, 0, x, y, N, !strcmp(what, "nowait") ? CL_EVENT_NOWAIT : CL_EVENT_WAIT);
        clmsync(stdcpu, 0, x, back);
        printf("result: %g\n", (double)x[10]);
        return 0;
    }
    clmsync(stdcpu, 0, y, w);
    if (0) {
    } else if (!strcmp(what, "stale_upload") || !strcmp(what, "loop")) {
        clmsync(stdcpu, 0, x, w);
        x[7] = 100.0f;
        for (int r = 0; r < (!strcmp(what, "loop") ? 3 : 1); r++) launch(k, 0, x, y, N, CL_EVENT_WAIT);
        clmsync(stdcpu, 0, x, back);
    } else if (!strcmp(what, "correct")) {
        clmsync(stdcpu, 0, x, w);
        launch(k, 0, x, y, N, CL_EVENT_WAIT);
        clmsync(stdcpu, 0, x, back);
        x[7] = 100.0f;
        clmsync(stdcpu, 0, x, w);
        launch(k, 0, x, y, N, CL_EVENT_WAIT);
        clmsync(stdcpu, 0, x, back);
    } else if (!strcmp(what, "slices")) {
        size_t half = N / 2 * sizeof(float);
        clmsync(stdcpu, 1, y, w);
        for (int r = 0; r < 2; r++) {
            for (unsigned d = 0; d < 2; d++)
                clmsyncn(stdcpu, d, x + d * (N / 2), half, CL_MEM_DEVICE | CL_EVENT_NOWAIT);
            for (unsigned d = 0; d < 2; d++) {
                clndrange_t ndr = clndrange_init1d(0, N / 2, 64);
                if (clforka(stdcpu, d, k, &ndr, CL_EVENT_NOWAIT, x + d * (N / 2), y, N / 2))
                    printf("launch: ok\n");
                else
                    printf("launch: failed %s\n", clerror());
            }
            for (unsigned d = 0; d < 2; d++)
                clmsyncn(stdcpu, d, x + d * (N / 2), half, CL_MEM_HOST | CL_EVENT_NOWAIT);
            stdcl_wait(stdcpu, CL_ALL_DEVICES, CL_ALL_EVENT);
            for (int i = 0; i < N; i++) x[i] += 1.0f; /* the host's step between rounds */
        }
    } else if (!strcmp(what, "fill")) {
        /* STDCL_CHECK=fill: a new allocation's host memory holds the pattern,
         * and so does a device copy never given a value. */
        float* z = (float*)clmalloc(stdcpu, N * sizeof(float), 0);
        unsigned bits;
        memcpy(&bits, z, sizeof bits);
        printf("host: 0x%08x\n", bits);
        clmsync(stdcpu, 0, x, w);
        launch(k, 0, x, z, N, CL_EVENT_WAIT); /* z never sent */
        clmsync(stdcpu, 0, x, back);
        printf("nan: %d\n", x[10] != x[10]);
        clfree(z);
    } else if (!strcmp(what, "const_input")) {
        clmsync(stdcpu, 0, x, w);
        launch(k, 0, x, y, N, CL_EVENT_WAIT);
        launch(k, 0, x, y, N, CL_EVENT_WAIT);
        clmsync(stdcpu, 0, x, back);
    } else {
        fprintf(stderr, "helper_synccheck: unknown scenario '%s'\n", what);
        return 2;
    }
    printf("result: %g\n", (double)x[10]);
    clfree(x);
    clfree(y);
    clclose(stdcpu, h);
    return 0;
}
