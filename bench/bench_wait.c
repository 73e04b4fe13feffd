/* SPDX-License-Identifier: MIT */
/* bench_wait.c: what a wait costs the host: wall time and CPU time of
 * waiting for a kernel of a given length, under the wait policy of this
 * process (STDCL_WAIT: driver, block, yield; unset: auto).
 *
 * A kernel calibrated to each target length (-t, milliseconds, default
 * 0.01,0.1,1,100) is waited for in two forms:
 *   fork   clfork(CL_EVENT_WAIT)
 *   nowait clfork(CL_EVENT_NOWAIT) + clwait(CL_KERNEL_EVENT)
 * -r times each (default 21; 5 for targets of 10 ms and more).  Printed per
 * row: the median wall time of one launch and wait, the process's CPU time
 * (every thread, the driver's included) per launch, and that CPU time as a
 * share of one core over the wall time.  Run it once per policy, beside each
 * other (bench/wait_gpu_run.sh), and compare the rows.
 *
 *   bench_wait [-c gpu|cpu|dev] [-d devnum] [-t ms,ms,...] [-r reps]
 */
#include <stdcl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_info.h"
#include "bench_stats.h"

static double now_ms(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static void die(const char* what) { bench_die("bench_wait", what); }

/* One work-group's worth of items, each a chain of dependent multiply-adds:
 * the kernel's time grows linearly with n and does not depend on the
 * device's width. */
static const char* src = "__kernel void busy(__global float* a, int n)\n"
                         "{\n"
                         "    size_t i = get_global_id(0);\n"
                         "    float v = a[i];\n"
                         "    for (int k = 0; k < n; ++k) v = v * 0.999999f + 0.5f;\n"
                         "    a[i] = v;\n"
                         "}\n";

enum { ITEMS = 64, MAXREPS = 201 };

static CLCONTEXT* cp;
static unsigned dn;
static cl_kernel busy;
static float* buf;
static clndrange_t ndr;

static void launch(int n, int form)
{
    if (clarg_set(cp, busy, 1, n) != 0) die("clarg_set");
    if (form == 0) {
        if (!clfork(cp, dn, busy, &ndr, CL_EVENT_WAIT)) die("clfork(WAIT)");
    } else {
        if (!clfork(cp, dn, busy, &ndr, CL_EVENT_NOWAIT)) die("clfork(NOWAIT)");
        if (!clwait(cp, dn, CL_KERNEL_EVENT)) die("clwait");
    }
}

static double time_one(int n, int form)
{
    double t0 = now_ms(CLOCK_MONOTONIC);
    launch(n, form);
    return now_ms(CLOCK_MONOTONIC) - t0;
}

/* n for a kernel of about ms milliseconds, from the time of a longer one. */
static int calibrate(double ms)
{
    int n = 1024;
    double t;
    for (;;) {
        double v[5];
        for (int i = 0; i < 5; ++i) v[i] = time_one(n, 0);
        t = bench_median(v, 5);
        if (t >= 20.0 || n >= (1 << 29)) break;
        n *= 2;
    }
    double per = t / n;
    double want = ms / per;
    if (want < 1) want = 1;
    if (want > 2e9) want = 2e9;
    return (int)want;
}

int main(int argc, char** argv)
{
    const char* which = "gpu";
    const char* targets = "0.01,0.1,1,100";
    int reps = 21, c;
    while ((c = getopt(argc, argv, "c:d:t:r:h")) != -1) {
        switch (c) {
        case 'c': which = optarg; break;
        case 'd': dn = (unsigned)strtoul(optarg, NULL, 10); break;
        case 't': targets = optarg; break;
        case 'r': reps = atoi(optarg); break;
        default:
            fprintf(stderr, "usage: bench_wait [-c gpu|cpu|dev] [-d devnum] [-t ms,ms,...] [-r reps]\n");
            return c == 'h' ? 0 : 2;
        }
    }
    if (reps < 3 || reps > MAXREPS) {
        fprintf(stderr, "bench_wait: -r 3..%d\n", MAXREPS);
        return 2;
    }
    cp = !strcmp(which, "cpu") ? stdcpu : !strcmp(which, "dev") ? stddev : stdgpu;
    if (!cp) {
        fprintf(stderr, "bench_wait: no std%s context here\n", which);
        return 1;
    }
    if (dn >= clgetndev(cp)) {
        fprintf(stderr, "bench_wait: std%s has %u device(s)\n", which, clgetndev(cp));
        return 1;
    }
    bench_print_command(argc, argv);
    bench_print_machine("bench_wait");
    bench_print_context(which, cp);
    const char* policy = getenv("STDCL_WAIT");
    printf("STDCL_WAIT=%s\n", policy && *policy ? policy : "(unset: auto)");
    void* h = clsopen(cp, src, CLLD_NOW);
    if (!h) die("clsopen");
    busy = clsym(cp, h, "busy", CLLD_NOW);
    if (!busy) die("clsym");
    buf = (float*)clmalloc(cp, ITEMS * sizeof(float), 0);
    if (!buf) die("clmalloc");
    for (int i = 0; i < ITEMS; ++i) buf[i] = 1.0f;
    if (!clmsync(cp, dn, buf, CL_MEM_DEVICE | CL_EVENT_WAIT)) die("clmsync");
    if (clarg_set_global(cp, busy, 0, buf) != 0) die("clarg_set_global");
    clndrange_t nd = clndrange_init1d(0, ITEMS, ITEMS);
    ndr = nd;
    launch(1, 0);  /* first launch: the kernel's setup */

    printf("%-10s %-7s %12s %12s %8s\n", "target ms", "form", "wall ms", "CPU ms", "core %");
    const char* p = targets;
    while (*p) {
        char* end;
        double ms = strtod(p, &end);
        if (end == p || ms <= 0) {
            fprintf(stderr, "bench_wait: -t wants positive milliseconds: %s\n", p);
            return 2;
        }
        p = *end == ',' ? end + 1 : end;
        int n = calibrate(ms);
        int r = ms >= 10 ? (reps < 5 ? reps : 5) : reps;
        for (int form = 0; form < 2; ++form) {
            double wall[MAXREPS];
            launch(n, form);  /* warm */
            double c0 = now_ms(CLOCK_PROCESS_CPUTIME_ID), w0 = now_ms(CLOCK_MONOTONIC);
            for (int i = 0; i < r; ++i) wall[i] = time_one(n, form);
            double cpu = now_ms(CLOCK_PROCESS_CPUTIME_ID) - c0, total = now_ms(CLOCK_MONOTONIC) - w0;
            printf("%-10g %-7s %12.4f %12.4f %7.1f%%\n", ms, form ? "nowait" : "fork", bench_median(wall, r),
                   cpu / r, 100.0 * cpu / total);
        }
    }
    clfree(buf);
    clclose(cp, h);
    return 0;
}
