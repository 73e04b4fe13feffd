/* SPDX-License-Identifier: MIT */
/* blas.c: CLBlast's SGEMM and DGEMM (C = alpha A B + beta C, n x n,
 * row-major) on clmalloc memory, the rows split over every device of the
 * context.  Each device gets its block of rows of A (clmsyncn), all of B
 * (clmsync) and, when beta is not 0, its rows of C, all without waiting
 * (CL_EVENT_NOWAIT); CLBlast then runs on the device's kernel queue on the
 * whole allocations' cl_mem (stdcl_mem), the offsets of CLBlast's calls
 * choosing the rows (a row block need not start aligned), bracketed by
 * clforeign_begin and clforeign_end: libstdcl makes the GEMM wait for the
 * uploads and the download of the device's rows of C (clmsyncn) wait for the
 * GEMM.  The devices run at the same time.  DGEMM runs on the devices with
 * double precision (CL_DEVICE_DOUBLE_FP_CONFIG) only.
 *
 *   blas [-c cpu|gpu|dev] [-n size] [-p s|d|sd] [-b beta] [-r repeats] [--check]
 *
 * -c: the context (default stddev); -p: SGEMM, DGEMM or both (default);
 * -b: beta (default 0.5; 0: C is only written, announced CL_MEM_WO, and not
 * uploaded); alpha is 2.  Prints the time and GFLOP/s (2 n^3 flops) of each
 * run, from the first upload to the last row of C back on the host; the
 * first run of each precision includes CLBlast's kernel builds (tens of
 * seconds on PoCL with a cold cache, POCL_CACHE_DIR).  --check compares C
 * with a host triple loop in double precision (every entry up to n = 512,
 * 1000 sampled entries above), within a relative tolerance (1e-4 for SGEMM,
 * 1e-12 for DGEMM) of the magnitude sum of each entry's terms. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <stdcl.h>

#include <clblast_c.h>

#include "../example_args.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Element i of a float (dbl 0) or double (dbl 1) array. */
static double get(const void* p, size_t i, int dbl) { return dbl ? ((const double*)p)[i] : ((const float*)p)[i]; }
static void put(void* p, size_t i, int dbl, double x)
{
    if (dbl)
        ((double*)p)[i] = x;
    else
        ((float*)p)[i] = (float)x;
}

/* Pseudo-random values in [-1, 1). */
static double uniform(unsigned long long* s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(*s >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* One GEMM on device d's rows first .. first + rows - 1, announced. */
static int gemm_rows(CLCONTEXT* cp, unsigned d, int dbl, size_t n, size_t first, size_t rows, double alpha, void* a,
                     void* b, double beta, void* c)
{
    size_t es = dbl ? sizeof(double) : sizeof(float), off = first * n;
    /* The device's rows of A and C, and all of B. */
    struct clforeign_use uses[] = {{(char*)a + off * es, CL_MEM_RO, rows * n * es},
                                   {b, CL_MEM_RO, 0},
                                   {(char*)c + off * es, beta != 0 ? CL_MEM_RW : CL_MEM_WO, rows * n * es}};
    CLFOREIGN* f = clforeign_begin(cp, d, NULL, uses, 3, 0);
    if (!f) {
        fprintf(stderr, "clforeign_begin on device %u: %s\n", d, clerror());
        return 1;
    }
    cl_command_queue q = clforeign_queue(f);
    cl_mem am = stdcl_mem(cp, d, a), bm = stdcl_mem(cp, d, b), cm = stdcl_mem(cp, d, c);
    cl_event ev = NULL;
    CLBlastStatusCode st = CLBlastInvalidMemObject;
    if (am && bm && cm)
        st = dbl ? CLBlastDgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, rows, n, n, alpha, am,
                                off, n, bm, 0, n, beta, cm, off, n, &q, &ev)
                 : CLBlastSgemm(CLBlastLayoutRowMajor, CLBlastTransposeNo, CLBlastTransposeNo, rows, n, n, (float)alpha,
                                am, off, n, bm, 0, n, (float)beta, cm, off, n, &q, &ev);
    int bad = st != CLBlastSuccess || !ev;
    if (bad) fprintf(stderr, "CLBlast%cgemm on device %u: status %d\n", dbl ? 'D' : 'S', d, (int)st);
    /* Even after a failure: the ticket ends (with nothing, it covers the queue). */
    if (clforeign_end(f, bad ? 0 : 1, bad ? NULL : &ev) != 0) {
        fprintf(stderr, "clforeign_end on device %u: %s\n", d, clerror());
        bad = 1;
    }
    if (ev) clReleaseEvent(ev);
    return bad;
}

/* One run on the ndev devices of devs: uploads, GEMMs, rows of C back. */
static int run(CLCONTEXT* cp, const unsigned* devs, unsigned ndev, int dbl, size_t n, double alpha, void* a, void* b,
               double beta, void* c)
{
    size_t es = dbl ? sizeof(double) : sizeof(float);
    int bad = 0;
    for (unsigned i = 0; i < ndev && !bad; i++) {
        unsigned d = devs[i];
        size_t first = n * i / ndev, rows = n * (i + 1) / ndev - first, off = first * n * es;
        if (!rows) continue;
        if (!clmsyncn(cp, d, (char*)a + off, rows * n * es, CL_MEM_DEVICE | CL_EVENT_NOWAIT) ||
            !clmsync(cp, d, b, CL_MEM_DEVICE | CL_EVENT_NOWAIT) ||
            (beta != 0 && !clmsyncn(cp, d, (char*)c + off, rows * n * es, CL_MEM_DEVICE | CL_EVENT_NOWAIT))) {
            fprintf(stderr, "upload to device %u: %s\n", d, clerror());
            bad = 1;
            break;
        }
        bad = gemm_rows(cp, d, dbl, n, first, rows, alpha, a, b, beta, c);
        if (!bad && !clmsyncn(cp, d, (char*)c + off, rows * n * es, CL_MEM_HOST | CL_EVENT_NOWAIT)) {
            fprintf(stderr, "clmsyncn from device %u: %s\n", d, clerror());
            bad = 1;
        }
    }
    for (unsigned i = 0; i < ndev; i++) clwait(cp, devs[i], CL_ALL_EVENT);
    return bad;
}

/* C against alpha A B + beta C0 on the host: 0, or 1 after a message. */
static int check(int dbl, size_t n, double alpha, const void* a, const void* b, double beta, const void* c0,
                 const void* c, unsigned ndev)
{
    double tol = dbl ? 1e-12 : 1e-4, worst = 0;
    size_t count = n <= 512 ? n * n : 1000, bad = 0;
    for (size_t s = 0; s < count; s++) {
        size_t e = n <= 512 ? s : (s * 2654435761u + 12345u) % (n * n), i = e / n, j = e % n;
        double want = beta * get(c0, e, dbl), mag = fabs(want);
        for (size_t k = 0; k < n; k++) {
            double t = alpha * get(a, i * n + k, dbl) * get(b, k * n + j, dbl);
            want += t;
            mag += fabs(t);
        }
        double err = fabs(get(c, e, dbl) - want) / (mag > 0 ? mag : 1);
        if (err > worst) worst = err;
        if (!(err <= tol) && !bad++)
            fprintf(stderr, "%cgemm: C[%zu][%zu] = %.17g, expected %.17g\n", dbl ? 'd' : 's', i, j, get(c, e, dbl),
                    want);
    }
    printf("check %cgemm n=%zu over %u device(s): %zu entries, %zu wrong, largest relative error %.2e: %s\n",
           dbl ? 'd' : 's', n, ndev, count, bad, worst, bad ? "FAIL" : "PASS");
    return bad ? 1 : 0;
}

/* Runs one precision on devs: 0, or 1 on a failure or a wrong result. */
static int gemm(CLCONTEXT* cp, const unsigned* devs, unsigned ndev, int dbl, size_t n, double beta, int repeats,
                int checking)
{
    const char* name = dbl ? "dgemm" : "sgemm";
    const double alpha = 2.0;
    size_t es = dbl ? sizeof(double) : sizeof(float), bytes = n * n * es;
    void* a = clmalloc(cp, bytes, CL_MEM_RO);
    void* b = clmalloc(cp, bytes, CL_MEM_RO);
    void* c = clmalloc(cp, bytes, beta != 0 ? 0 : CL_MEM_WO);
    void* c0 = malloc(bytes);
    if (!a || !b || !c || !c0) {
        fprintf(stderr, "%s: n = %zu: out of memory (%s)\n", name, n, clerror());
        return 1;
    }
    unsigned long long seed = 42;
    for (size_t i = 0; i < n * n; i++) {
        put(a, i, dbl, uniform(&seed));
        put(b, i, dbl, uniform(&seed));
        put(c0, i, dbl, uniform(&seed));
    }
    for (unsigned i = 0; i < ndev; i++) {
        size_t first = n * i / ndev, last = n * (i + 1) / ndev;
        char dn[256] = "";
        clGetDeviceInfo(stdcl_device(cp, devs[i]), CL_DEVICE_NAME, sizeof dn, dn, NULL);
        if (last > first) printf("%s: device %u (%s): rows %zu..%zu\n", name, devs[i], dn, first, last - 1);
    }
    int bad = 0;
    for (int r = 1; r <= repeats && !bad; r++) {
        if (beta != 0) memcpy(c, c0, bytes); /* C as it was: each run computes the same */
        double t0 = now();
        bad = run(cp, devs, ndev, dbl, n, alpha, a, b, beta, c);
        double t = now() - t0;
        double gflops = 2.0 * n * n * n / t * 1e-9;
        if (!bad)
            printf("%s n=%zu run %d: %.4f s, %.*f GFLOP/s%s\n", name, n, r, t, gflops < 10 ? 3 : 1, gflops,
                   r == 1 ? " (with CLBlast's kernel builds)" : "");
    }
    if (!bad && checking) bad = check(dbl, n, alpha, a, b, beta, c0, c, ndev);
    clfree(a);
    clfree(b);
    clfree(c);
    free(c0);
    return bad;
}

int main(int argc, char** argv)
{
    int n = 256, repeats = 3, checking = 0;
    const char *ctx = "dev", *prec = "sd", *beta_s = "0.5";
    const example_opt opts[] = {EXAMPLE_STRING("-c", "cpu|gpu|dev", &ctx),
                                EXAMPLE_INT("-n", "size", &n, 1, 65536),
                                EXAMPLE_STRING("-p", "s|d|sd", &prec),
                                EXAMPLE_STRING("-b", "beta", &beta_s),
                                EXAMPLE_INT("-r", "repeats", &repeats, 1, INT_MAX),
                                EXAMPLE_FLAG("--check", &checking),
                                EXAMPLE_END};
    if (!example_args(argc, argv, opts)) return 2;
    char* end;
    double beta = strtod(beta_s, &end);
    int bad_ctx;
    CLCONTEXT* cp = example_context(ctx, &bad_ctx);
    if (bad_ctx || end == beta_s || *end || !isfinite(beta) ||
        (strcmp(prec, "s") && strcmp(prec, "d") && strcmp(prec, "sd"))) {
        example_usage(argv[0], opts);
        return 2;
    }
    if (!cp) return 1;
    unsigned ndev = clgetndev(cp), nfp64 = 0;
    unsigned* all = calloc(ndev, sizeof *all);
    unsigned* fp64 = calloc(ndev, sizeof *fp64);
    if (!all || !fp64) return 1;
    printf("blas: std%s, %u device(s), n = %d, alpha 2, beta %g, %d run(s)\n", ctx, ndev, n, beta, repeats);
    for (unsigned d = 0; d < ndev; d++) {
        all[d] = d;
        cl_device_fp_config cfg = 0;
        clGetDeviceInfo(stdcl_device(cp, d), CL_DEVICE_DOUBLE_FP_CONFIG, sizeof cfg, &cfg, NULL);
        if (cfg)
            fp64[nfp64++] = d;
        else if (strchr(prec, 'd'))
            printf("dgemm: device %u has no double precision: skipped\n", d);
    }
    int status = 0;
    if (strchr(prec, 's')) status = gemm(cp, all, ndev, 0, (size_t)n, beta, repeats, checking);
    if (!status && strchr(prec, 'd')) {
        if (nfp64)
            status = gemm(cp, fp64, nfp64, 1, (size_t)n, beta, repeats, checking);
        else
            printf("dgemm: no device with double precision: skipped\n");
    }
    /* CLBlast's cached programs go before the context does. */
    CLBlastClearCache();
    free(all);
    free(fp64);
    return status;
}
