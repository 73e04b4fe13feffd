/* SPDX-License-Identifier: MIT */
/* bench_check_launch.c: what a launch costs the host, under the sync check
 * (STDCL_CHECK=sync) or not, as a function of the size of its arguments.
 *
 * nbody_multi's pattern on one device: a kernel with a read-only argument
 * (the positions it reads), a written one (the new positions) and one it
 * reads and writes (the velocities), each of N float4, the positions rotating
 * through three buffers; launched with CL_EVENT_NOWAIT, a clwait every -w
 * launches (default 20).  The kernel itself touches one element, so the time
 * is the host's: the library's launch path and the check's look at the
 * arguments.  Printed per N: the median over -r rounds (default 5) of the
 * mean host time of one launch, in microseconds.  Run it with and without
 * STDCL_CHECK=sync, beside each other.
 *
 *   bench_check_launch [-c gpu|cpu|dev] [-n N,N,...] [-l launches] [-w every] [-r rounds]
 */
#include <stdcl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_info.h"
#include "bench_stats.h"

static const char* src = "__kernel void advance(__global const float4* pos, __global float4* next,\n"
                         "                   __global float4* vel)\n"
                         "{\n"
                         "    if (get_global_id(0) == 0) { vel[0] += pos[0]; next[0] = pos[0] + vel[0]; }\n"
                         "}\n";

static void die(const char* what) { bench_die("bench_check_launch", what); }

enum { MAXROUNDS = 101, MAXSIZES = 16 };

int main(int argc, char** argv)
{
    const char* ctx = "cpu";
    long sizes[MAXSIZES] = {16384, 65536, 262144};
    int nsizes = 3, launches = 400, every = 20, rounds = 5;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-c") && i + 1 < argc) {
            ctx = argv[++i];
        } else if (!strcmp(argv[i], "-n") && i + 1 < argc) {
            nsizes = 0;
            for (char* p = strtok(argv[++i], ","); p && nsizes < MAXSIZES; p = strtok(NULL, ","))
                sizes[nsizes++] = atol(p);
        } else if (!strcmp(argv[i], "-l") && i + 1 < argc) {
            launches = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "-w") && i + 1 < argc) {
            every = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "-r") && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else {
            fprintf(stderr, "usage: bench_check_launch [-c gpu|cpu|dev] [-n N,N,...] [-l launches] [-w every] "
                            "[-r rounds]\n");
            return 2;
        }
    }
    if (nsizes < 1 || launches < 1 || every < 1 || rounds < 1 || rounds > MAXROUNDS) {
        fprintf(stderr, "bench_check_launch: bad option value\n");
        return 2;
    }
    CLCONTEXT* cp = !strcmp(ctx, "gpu") ? stdgpu : !strcmp(ctx, "dev") ? stddev : stdcpu;
    if (!cp) {
        fprintf(stderr, "bench_check_launch: no '%s' context\n", ctx);
        return 1;
    }
    void* h = clsopen(cp, src, CLLD_NOW);
    cl_kernel k = h ? clsym(cp, h, "advance", CLLD_NOW) : NULL;
    if (!k) die("clsopen");
    const char* check = getenv("STDCL_CHECK");
    bench_print_machine("bench_check_launch");
    bench_print_command(argc, argv);
    bench_print_context(ctx, cp);
    printf("STDCL_CHECK=%s, %d launches a round, a clwait every %d, median of %d rounds\n",
           check && *check ? check : "(off)", launches, every, rounds);
    printf("%10s %12s %14s\n", "N", "MiB/arg", "us/launch");
    for (int si = 0; si < nsizes; si++) {
        const long n = sizes[si];
        const size_t bytes = (size_t)n * 4 * sizeof(float);
        float *pos[3], *vel = (float*)clmalloc(cp, bytes, 0);
        if (!vel) die("clmalloc");
        for (int r = 0; r < 3; r++)
            if (!(pos[r] = (float*)clmalloc(cp, bytes, 0))) die("clmalloc");
        for (long j = 0; j < 4 * n; j++) vel[j] = 0;
        for (int r = 0; r < 3; r++) {
            for (long j = 0; j < 4 * n; j++) pos[r][j] = (float)j;
            if (!clmsync(cp, 0, pos[r], CL_MEM_DEVICE | CL_EVENT_WAIT)) die("clmsync");
        }
        if (!clmsync(cp, 0, vel, CL_MEM_DEVICE | CL_EVENT_WAIT)) die("clmsync");
        clndrange_t ndr = clndrange_init1d(0, 64, 64);
        double per[MAXROUNDS];
        for (int round = -1, t = 0; round < rounds; round++) {  /* round -1: warm-up */
            if (!clwait(cp, 0, CL_ALL_EVENT)) die("clwait");
            double t0 = bench_now_ms();
            for (int l = 0; l < launches; l++, t++) {
                clarg_set_global(cp, k, 0, pos[t % 3]);
                clarg_set_global(cp, k, 1, pos[(t + 1) % 3]);
                clarg_set_global(cp, k, 2, vel);
                if (!clfork(cp, 0, k, &ndr, CL_EVENT_NOWAIT)) die("clfork");
                if (l % every == every - 1 && !clwait(cp, 0, CL_ALL_EVENT)) die("clwait");
            }
            if (!clwait(cp, 0, CL_ALL_EVENT)) die("clwait");
            if (round >= 0) per[round] = 1e3 * (bench_now_ms() - t0) / launches;
        }
        printf("%10ld %12.2f %14.2f\n", n, bytes / 1048576.0, bench_median(per, rounds));
        for (int r = 0; r < 3; r++) clfree(pos[r]);
        clfree(vel);
    }
    return 0;
}
