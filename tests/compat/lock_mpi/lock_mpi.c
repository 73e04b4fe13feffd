/* SPDX-License-Identifier: MIT */
/* lock_mpi.c: one device per MPI rank through STDCL's device lease, the
 * scenario of COPRTHR's mpi_lock_example (not in this tree: see ../README),
 * written for this test to the STDCL 1.6 calls (plus stdcl_context_why, to
 * say which device a rank leased).
 *
 *   mpirun -np P -x STDCPU_LOCK=31415 -x STDCPU_MAX_NDEV=1 lock_mpi -c cpu [-n N]
 *
 * Every rank takes its default context (stdgpu, or the one -c names) and,
 * as a program run under the lease does, uses device 0 as its own: rank r
 * computes c[i] = a[i] * b[i] for its N elements (64 unless -n), with
 * a[i] = 1.1f * g, b[i] = 2.2f * g and g = r * N + i the global index.
 * Rank 0 prints one line per rank, "rank R: <stdcl_context_why>", then,
 * gathered from every rank, one line per element, "g c" (c as %.9g, so the
 * float reads back exactly).
 *
 * A rank without a context (every device leased by other ranks) or whose
 * work fails prints no elements: rank 0 prints "rank R: FAILED: <clerror()>"
 * for it, and every rank exits 1 after MPI_Finalize (no rank waits for one
 * that stopped).  A bad command line: a usage message, exit 2. */
#include <mpi.h>
#include <stdcl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { REPORT = 2048 }; /* bytes of each rank's report line */

static const char* k_src =
    "__kernel void mul(__global const float* a, __global const float* b, __global float* c)\n"
    "{ int i = get_global_id(0); c[i] = a[i] * b[i]; }\n";

/* Runs c = a * b on device 0 of cp; 0, or -1 with why in err. */
static int compute(CLCONTEXT* cp, int rank, int n, float* c, char* err, size_t errsz)
{
    int ok = 0;
    float* a = (float*)clmalloc(cp, n * sizeof(float), 0);
    float* b = (float*)clmalloc(cp, n * sizeof(float), 0);
    float* dc = (float*)clmalloc(cp, n * sizeof(float), 0);
    void* h = a && b && dc ? clsopen(cp, k_src, CLLD_NOW) : NULL;
    cl_kernel k = h ? clsym(cp, h, "mul", CLLD_NOW) : NULL;
    if (k) {
        for (int i = 0; i < n; i++) {
            float g = (float)(rank * n + i);
            a[i] = 1.1f * g;
            b[i] = 2.2f * g;
            dc[i] = 0.0f;
        }
        clndrange_t ndr = clndrange_init1d(0, n, 0);
        ok = clmsync(cp, 0, a, CL_MEM_DEVICE | CL_EVENT_NOWAIT) && clmsync(cp, 0, b, CL_MEM_DEVICE | CL_EVENT_NOWAIT) &&
             clmsync(cp, 0, dc, CL_MEM_DEVICE | CL_EVENT_NOWAIT) && clarg_set_global(cp, k, 0, a) == 0 &&
             clarg_set_global(cp, k, 1, b) == 0 && clarg_set_global(cp, k, 2, dc) == 0 &&
             clfork(cp, 0, k, &ndr, CL_EVENT_NOWAIT) && clmsync(cp, 0, dc, CL_MEM_HOST | CL_EVENT_NOWAIT) &&
             clwait(cp, 0, CL_ALL_EVENT);
    }
    if (ok) {
        memcpy(c, dc, n * sizeof(float));
    } else {
        const char* e = clerror();
        snprintf(err, errsz, "%s", e ? e : "(no message)");
    }
    if (h) clclose(cp, h);
    clfree(a);
    clfree(b);
    clfree(dc);
    return ok ? 0 : -1;
}

int main(int argc, char** argv)
{
    MPI_Init(&argc, &argv);
    int rank = 0, nrank = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nrank);

    CLCONTEXT* cp = stdgpu;
    int n = 64, bad = 0;
    for (int i = 1; i < argc && !bad; i++) {
        if (strcmp(argv[i], "-c") == 0 && i + 1 < argc) {
            const char* name = argv[++i];
            if (strcmp(name, "cpu") == 0) cp = stdcpu;
            else if (strcmp(name, "gpu") == 0) cp = stdgpu;
            else if (strcmp(name, "dev") == 0) cp = stddev;
            else bad = 1;
        } else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
            n = atoi(argv[++i]);
            bad = n <= 0 || n > 1 << 20;
        } else {
            bad = 1;
        }
    }
    if (bad) {
        if (rank == 0) fprintf(stderr, "usage: lock_mpi [-c cpu|gpu|dev] [-n N (1..1048576)]\n");
        MPI_Finalize();
        return 2;
    }

    /* For a NULL default context, clerror() holds why (before any other call). */
    char mine[REPORT], err[REPORT - 16];
    float* c = (float*)calloc(n, sizeof(float));
    int ok = 0;
    if (!c) {
        snprintf(err, sizeof err, "out of host memory");
    } else if (!cp) {
        const char* e = clerror();
        snprintf(err, sizeof err, "%s", e ? e : "the default context is NULL");
    } else {
        ok = compute(cp, rank, n, c, err, sizeof err) == 0;
    }
    if (ok)
        snprintf(mine, sizeof mine, "%s", stdcl_context_why(cp));
    else
        snprintf(mine, sizeof mine, "FAILED: %s", err);

    char* reports = (char*)malloc((size_t)nrank * REPORT);
    float* all = (float*)malloc((size_t)nrank * n * sizeof(float));
    if (!reports || !all) {
        fprintf(stderr, "lock_mpi: out of host memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_Allgather(mine, REPORT, MPI_CHAR, reports, REPORT, MPI_CHAR, MPI_COMM_WORLD);
    int failed = 0;
    for (int r = 0; r < nrank; r++) failed |= strncmp(reports + (size_t)r * REPORT, "FAILED: ", 8) == 0;
    if (!failed) MPI_Gather(c, n, MPI_FLOAT, all, n, MPI_FLOAT, 0, MPI_COMM_WORLD);

    if (rank == 0) {
        for (int r = 0; r < nrank; r++) printf("rank %d: %s\n", r, reports + (size_t)r * REPORT);
        for (long g = 0; !failed && g < (long)nrank * n; g++) printf("%ld %.9g\n", g, all[g]);
        fflush(stdout);
    }
    free(all);
    free(reports);
    free(c);
    MPI_Finalize();
    return failed ? 1 : 0;
}
