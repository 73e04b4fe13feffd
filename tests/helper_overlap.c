/* SPDX-License-Identifier: MIT */
/* helper_overlap.c: the order of commands when each device has a transfer queue
 * beside its kernel queue, for test_memory (run with STDCL_ZERO_COPY=0, so that
 * every clmsync copies between host memory and a device buffer, and allocations of
 * 256 KiB or more are pinned; with STDCL_OVERLAP=0 too, the one-queue reference).
 *
 * Scenarios (each prints "<name>: ok" or "<name>: FAIL ..."):
 *   sync-then-kernel     a kernel reads a buffer synced CL_EVENT_NOWAIT just before it
 *   kernel-then-sync     a sync to the host right after a NOWAIT kernel that writes it
 *   free-after-sync      clfree right after a NOWAIT sync (and after a NOWAIT kernel)
 *   threads              8 threads, each syncing, launching and syncing back its own
 *                        memory NOWAIT on alternating devices, then checking it
 *   copy-order           clmcopy NOWAIT between kernels that write and read both ends
 *   pinned-realloc       a pinned allocation through clmrealloc, clmdetach, clmattach
 *   sync-then-reduce     clreduce of an array synced CL_EVENT_NOWAIT just before it
 *   bound-once           one argument bound once with clarg_set_global, two bound
 *                        again every step, clfork NOWAIT and clmcopy NOWAIT each step
 *                        (the loop of COPRTHR's bdt_nbody), clmsync NOWAIT, clwait
 *   rand-state           a program compiled in the process leaves rand()'s sequence
 *                        as it was (NVIDIA's compiler reseeds it)
 *   interior-pointers    kernels given three interior pointers of one allocation in
 *                        turn (three sub-buffers of one buffer), then clfree (NVIDIA's
 *                        OpenCL crashes releasing them in the wrong order)
 * STDCL_TEST_CONTEXT=gpu runs them on stdgpu (make check-gpu), else on stdcpu.
 * Exits 0 when every scenario passed, 1 otherwise. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <stdcl.h>

static const char* src =
    "__kernel void slow_add(__global int* a, int v, int iters)\n"
    "{\n"
    "    int i = get_global_id(0);\n"
    "    int x = a[i];\n"
    "    float s = 0.0f;\n"
    "    for (int k = 0; k < iters; k++) s = s * 0.5f + (float)k;\n"
    "    a[i] = x + v + (s < 0.0f ? 1 : 0);\n"
    "}\n"
    "__kernel void slow_fill(__global int* a, int base, int iters)\n"
    "{\n"
    "    int i = get_global_id(0);\n"
    "    float s = 0.0f;\n"
    "    for (int k = 0; k < iters; k++) s = s * 0.5f + (float)k;\n"
    "    a[i] = base + i + (s < 0.0f ? 1 : 0);\n"
    "}\n"
    "__kernel void bound_step(__global int* out, __global int* vel, __global const int* in, int n)\n"
    "{\n"
    "    int i = get_global_id(0);\n"
    "    out[i] = in[i] + vel[i] + (in[(i + 1) % n] & 7);\n"
    "    vel[i] += 1;\n"
    "}\n";

/* The context under test: stdcpu, or stdgpu with STDCL_TEST_CONTEXT=gpu
 * (make check-gpu). */
static CLCONTEXT* g_cp;
static cl_kernel k_add, k_fill, k_step;
static int failures;
static pthread_mutex_t print_mu = PTHREAD_MUTEX_INITIALIZER;

#define BIG (1 << 16) /* ints: 256 KiB, pinned */
#define SMALLN 4096 /* ints: 16 KiB, pageable */
#define ITERS 300

static void report(const char* name, int ok, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
static void report(const char* name, int ok, const char* fmt, ...)
{
    pthread_mutex_lock(&print_mu);
    if (ok) {
        printf("%s: ok\n", name);
    } else {
        va_list ap;
        va_start(ap, fmt);
        printf("%s: FAIL ", name);
        vprintf(fmt, ap);
        printf(" (clerror: %s)\n", clerror() ? clerror() : "none");
        va_end(ap);
        failures++;
    }
    fflush(stdout);
    pthread_mutex_unlock(&print_mu);
}

static void pass(const char* name) { report(name, 1, "%s", "passed"); }

/* First index where a[i] != want[i], or -1. */
static long first_bad_of(const int* a, const int* want, long n)
{
    for (long i = 0; i < n; i++)
        if (a[i] != want[i]) return i;
    return -1;
}

/* First index where a[i] != base + i * step, or -1. */
static long first_bad(const int* a, long n, int base, int step)
{
    for (long i = 0; i < n; i++)
        if (a[i] != base + (int)i * step) return i;
    return -1;
}

static int add(unsigned d, int* a, long n, int v, int flags)
{
    clndrange_t ndr = clndrange_init1d(0, (size_t)n, 64);
    return clforka(g_cp, d, k_add, &ndr, flags, a, v, ITERS) != NULL;
}

static int fill(unsigned d, int* a, long n, int base, int flags)
{
    clndrange_t ndr = clndrange_init1d(0, (size_t)n, 64);
    return clforka(g_cp, d, k_fill, &ndr, flags, a, base, ITERS) != NULL;
}

static void sync_then_kernel(long n, const char* name)
{
    for (unsigned d = 0; d < clgetndev(g_cp); d++) {
        int* a = (int*)clmalloc(g_cp, (size_t)n * sizeof(int), 0);
        int ok = a != NULL;
        for (int rep = 0; ok && rep < 4; rep++) {
            for (long i = 0; i < n; i++) a[i] = rep * 1000 + (int)i;
            ok = clmsync(g_cp, d, a, CL_MEM_DEVICE | CL_EVENT_NOWAIT) != NULL && add(d, a, n, 7, CL_EVENT_NOWAIT) &&
                clmsync(g_cp, d, a, CL_MEM_HOST | CL_EVENT_NOWAIT) != NULL && stdcl_wait(g_cp, d, CL_ALL_EVENT) == 0;
            long bad = ok ? first_bad(a, n, rep * 1000 + 7, 1) : -2;
            if (bad != -1) {
                report(name, 0, "device %u rep %d: a[%ld] = %d", d, rep, bad, bad >= 0 ? a[bad] : 0);
                ok = 0;
                break;
            }
        }
        if (a) clfree(a);
        if (!ok) return;
    }
    pass(name);
}

static void kernel_then_sync(long n, const char* name)
{
    for (unsigned d = 0; d < clgetndev(g_cp); d++) {
        int* a = (int*)clmalloc(g_cp, (size_t)n * sizeof(int), 0);
        int ok = a != NULL;
        for (int rep = 0; ok && rep < 4; rep++) {
            memset(a, 0xff, (size_t)n * sizeof(int));
            ok = fill(d, a, n, rep * 10, CL_EVENT_NOWAIT) && clmsync(g_cp, d, a, CL_MEM_HOST | CL_EVENT_WAIT) != NULL;
            long bad = ok ? first_bad(a, n, rep * 10, 1) : -2;
            if (bad != -1) {
                report(name, 0, "device %u rep %d: a[%ld] = %d", d, rep, bad, bad >= 0 ? a[bad] : 0);
                ok = 0;
            }
        }
        if (a) clfree(a);
        if (!ok || stdcl_wait(g_cp, d, CL_ALL_EVENT) != 0) {
            if (ok) report(name, 0, "clwait on device %u failed", d);
            return;
        }
    }
    pass(name);
}

static void free_after_sync(void)
{
    for (int rep = 0; rep < 8; rep++) {
        unsigned d = (unsigned)rep % clgetndev(g_cp);
        long n = (rep & 2) ? BIG : SMALLN;
        int* a = (int*)clmalloc(g_cp, (size_t)n * sizeof(int), 0);
        if (!a) {
            report("free-after-sync", 0, "clmalloc");
            return;
        }
        for (long i = 0; i < n; i++) a[i] = (int)i;
        int ok = clmsync(g_cp, d, a, CL_MEM_DEVICE | CL_EVENT_NOWAIT) != NULL;
        if (ok && (rep & 1))
            ok = add(d, a, n, 1, CL_EVENT_NOWAIT) && clmsync(g_cp, d, a, CL_MEM_HOST | CL_EVENT_NOWAIT);
        if (!ok || clfree(a) != 0) {
            report("free-after-sync", 0, "rep %d", rep);
            return;
        }
    }
    for (unsigned d = 0; d < clgetndev(g_cp); d++)
        if (stdcl_wait(g_cp, d, CL_ALL_EVENT) != 0) {
            report("free-after-sync", 0, "clwait on device %u", d);
            return;
        }
    pass("free-after-sync");
}

typedef struct {
    int id;
    int bad;
    char msg[256];
} worker_t;

static void* worker(void* arg)
{
    worker_t* w = (worker_t*)arg;
    long n = (w->id & 1) ? BIG / 4 : SMALLN;
    int* a = (int*)clmalloc(g_cp, (size_t)n * sizeof(int), 0);
    if (!a) {
        w->bad = 1;
        snprintf(w->msg, sizeof w->msg, "clmalloc: %s", clerror());
        return NULL;
    }
    for (int rep = 0; rep < 12 && !w->bad; rep++) {
        unsigned d = (unsigned)(w->id + rep) % clgetndev(g_cp);
        int base = w->id * 100000 + rep * 100;
        for (long i = 0; i < n; i++) a[i] = base + (int)i;
        /* host -> device, two kernels, device -> host: all NOWAIT but the last. */
        int ok = clmsync(g_cp, d, a, CL_MEM_DEVICE | CL_EVENT_NOWAIT) != NULL && add(d, a, n, 3, CL_EVENT_NOWAIT) &&
            add(d, a, n, 4, CL_EVENT_NOWAIT) && clmsync(g_cp, d, a, CL_MEM_HOST | CL_EVENT_WAIT) != NULL;
        long bad = ok ? first_bad(a, n, base + 7, 1) : -2;
        if (bad != -1) {
            w->bad = 1;
            snprintf(w->msg, sizeof w->msg, "thread %d rep %d device %u: %s a[%ld] = %d", w->id, rep, d,
                     ok ? "wrong" : "call failed", bad, bad >= 0 ? a[bad] : 0);
        }
    }
    clfree(a);
    return NULL;
}

static void threads(void)
{
    enum { T = 8 };
    pthread_t t[T];
    worker_t w[T];
    for (int i = 0; i < T; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].id = i;
        pthread_create(&t[i], NULL, worker, &w[i]);
    }
    int ok = 1;
    for (int i = 0; i < T; i++) {
        pthread_join(t[i], NULL);
        if (w[i].bad) {
            report("threads", 0, "%s", w[i].msg);
            ok = 0;
        }
    }
    for (unsigned d = 0; d < clgetndev(g_cp); d++) stdcl_wait(g_cp, d, CL_ALL_EVENT);
    if (ok) pass("threads");
}

static void copy_order(void)
{
    long n = BIG;
    for (unsigned d = 0; d < clgetndev(g_cp); d++) {
        int* a = (int*)clmalloc(g_cp, (size_t)n * sizeof(int), 0);
        int* b = (int*)clmalloc(g_cp, (size_t)n * sizeof(int), 0);
        /* fill a (slow kernel), copy a -> b, add to b, read b back: all NOWAIT. */
        int ok = a && b && fill(d, a, n, 50, CL_EVENT_NOWAIT) && clmcopy(g_cp, d, a, b, CL_EVENT_NOWAIT) != NULL &&
            add(d, b, n, 5, CL_EVENT_NOWAIT) && clmsync(g_cp, d, b, CL_MEM_HOST | CL_EVENT_NOWAIT) != NULL &&
            stdcl_wait(g_cp, d, CL_ALL_EVENT) == 0;
        long bad = ok ? first_bad(b, n, 55, 1) : -2;
        if (bad != -1) report("copy-order", 0, "device %u: b[%ld] = %d", d, bad, bad >= 0 ? b[bad] : 0);
        if (a) clfree(a);
        if (b) clfree(b);
        if (bad != -1) return;
    }
    pass("copy-order");
}

static void pinned_realloc(void)
{
    unsigned d = clgetndev(g_cp) - 1;
    long n = BIG;
    int* a = (int*)clmalloc(g_cp, (size_t)n * sizeof(int), 0);
    if (!a) {
        report("pinned-realloc", 0, "clmalloc");
        return;
    }
    for (long i = 0; i < n; i++) a[i] = (int)i;
    int ok = clmsync(g_cp, d, a, CL_MEM_DEVICE | CL_EVENT_NOWAIT) && add(d, a, n, 1, CL_EVENT_NOWAIT) &&
        clmsync(g_cp, d, a, CL_MEM_HOST | CL_EVENT_WAIT);
    long bad = ok ? first_bad(a, n, 1, 1) : -2;
    /* Grown: the first n ints kept, the new memory usable. */
    int* b = ok && bad == -1 ? (int*)clmrealloc(g_cp, a, (size_t)n * 2 * sizeof(int), 0) : NULL;
    if (b) {
        a = NULL;
        bad = first_bad(b, n, 1, 1);
        for (long i = n; i < 2 * n; i++) b[i] = (int)i + 1;
        ok = bad == -1 && clmsync(g_cp, d, b, CL_MEM_DEVICE | CL_EVENT_NOWAIT) &&
            add(d, b, 2 * n, 2, CL_EVENT_NOWAIT) && clmsync(g_cp, d, b, CL_MEM_HOST | CL_EVENT_WAIT);
        bad = ok ? first_bad(b, 2 * n, 3, 1) : -2;
    } else {
        ok = 0;
    }
    /* Detached: the host memory stays; attached again: it syncs and runs. */
    if (ok && bad == -1) {
        ok = clmdetach(b) == 0;
        for (long i = 0; ok && i < 2 * n; i++) b[i] = 10 + (int)i;
        ok = ok && clmsync(g_cp, d, b, CL_MEM_DEVICE | CL_EVENT_WAIT) == NULL; /* detached: refused */
        ok = ok && clmattach(g_cp, b) == 0 && clmsync(g_cp, d, b, CL_MEM_DEVICE | CL_EVENT_NOWAIT) &&
            add(d, b, 2 * n, 5, CL_EVENT_NOWAIT) && clmsync(g_cp, d, b, CL_MEM_HOST | CL_EVENT_WAIT);
        bad = ok ? first_bad(b, 2 * n, 15, 1) : -2;
    }
    /* Shrunk. */
    int* c = ok && bad == -1 ? (int*)clmrealloc(g_cp, b, (size_t)n / 2 * sizeof(int), 0) : NULL;
    if (c) {
        b = NULL;
        bad = first_bad(c, n / 2, 15, 1);
        ok = bad == -1 && clsizeofmem(c) == (size_t)n / 2 * sizeof(int) && clfree(c) == 0;
    } else {
        ok = 0;
    }
    if (!ok || bad != -1)
        report("pinned-realloc", 0, "step failed (first bad index %ld)", bad);
    else
        pass("pinned-realloc");
    if (a) clfree(a);
    if (b) clfree(b);
}

static void sync_then_reduce(void)
{
    const long n = 1L << 20; /* floats; sums stay exact below 2^24 */
    for (unsigned d = 0; d < clgetndev(g_cp); d++) {
        float* x = (float*)clmalloc(g_cp, (size_t)n * sizeof(float), 0);
        int ok = x != NULL;
        for (int rep = 0; ok && rep < 6; rep++) {
            double want = 0;
            for (long i = 0; i < n; i++) {
                x[i] = (float)((i + rep) % 5 == 0 ? 1 + rep : 0);
                want += x[i];
            }
            float got = -1;
            ok = clmsync(g_cp, d, x, CL_MEM_DEVICE | CL_EVENT_NOWAIT) != NULL &&
                clreduce(g_cp, d, x, (size_t)n, CL_REDUCE_FLOAT, CL_REDUCE_SUM, &got) == 0;
            if (!ok || (double)got != want) {
                report("sync-then-reduce", 0, "device %u rep %d: sum %.1f, want %.1f", d, rep, got, want);
                ok = 0;
            }
        }
        if (x) clfree(x);
        if (!ok) return;
        stdcl_wait(g_cp, d, CL_ALL_EVENT);
    }
    pass("sync-then-reduce");
}

static void bound_once(void)
{
    const int n = 4096, steps = 12;
    for (unsigned d = 0; d < clgetndev(g_cp); d++) {
        int* pp = (int*)clmalloc(g_cp, (size_t)n * sizeof(int), 0);
        int* vv = (int*)clmalloc(g_cp, (size_t)n * sizeof(int), 0);
        int* pp2 = (int*)clmalloc(g_cp, (size_t)n * sizeof(int), 0);
        int* want = malloc((size_t)n * sizeof(int) * 3);
        int ok = pp && vv && pp2 && want;
        if (ok) {
            int *wp = want, *wv = want + n, *wo = want + 2 * n;
            for (int i = 0; i < n; i++) wp[i] = pp[i] = i * 3, wv[i] = vv[i] = i % 11;
            for (int s = 0; s < steps; s++) {
                for (int i = 0; i < n; i++) wo[i] = wp[i] + wv[i] + (wp[(i + 1) % n] & 7);
                for (int i = 0; i < n; i++) wv[i] += 1, wp[i] = wo[i];
            }
            clndrange_t ndr = clndrange_init1d(0, (size_t)n, 64);
            ok = clarg_set(g_cp, k_step, 3, n) == 0 && clarg_set_global(g_cp, k_step, 1, vv) == 0 &&
                clmsync(g_cp, d, pp, CL_MEM_DEVICE | CL_EVENT_NOWAIT) != NULL &&
                clmsync(g_cp, d, vv, CL_MEM_DEVICE | CL_EVENT_NOWAIT) != NULL && stdcl_wait(g_cp, d, CL_MEM_EVENT) == 0;
            for (int s = 0; ok && s < steps; s++)
                ok = clarg_set_global(g_cp, k_step, 0, pp2) == 0 && clarg_set_global(g_cp, k_step, 2, pp) == 0 &&
                    clfork(g_cp, d, k_step, &ndr, CL_EVENT_NOWAIT) != NULL &&
                    clmcopy(g_cp, d, pp2, pp, CL_EVENT_NOWAIT) != NULL;
            ok = ok && clmsync(g_cp, d, pp, CL_MEM_HOST | CL_EVENT_NOWAIT) != NULL &&
                clmsync(g_cp, d, vv, CL_MEM_HOST | CL_EVENT_NOWAIT) != NULL && stdcl_wait(g_cp, d, CL_ALL_EVENT) == 0;
            long bad = ok ? first_bad_of(pp, wp, n) : -2;
            if (bad == -1 && ok) bad = first_bad_of(vv, wv, n);
            if (bad != -1) {
                report("bound-once", 0, "device %u: element %ld differs", d, bad);
                ok = 0;
            }
        } else {
            report("bound-once", 0, "out of memory");
        }
        if (pp) clfree(pp);
        if (vv) clfree(vv);
        if (pp2) clfree(pp2);
        free(want);
        if (!ok) return;
    }
    pass("bound-once");
}

static void rand_state(void)
{
    /* A source no cache holds: the compiler runs in this process. */
    char src2[256];
    snprintf(src2, sizeof src2, "/* %ld %ld */ __kernel void k_rand(__global int* a) { a[0] = 1; }\n", (long)getpid(),
             (long)time(NULL));
    srand(7);
    int want[3] = {rand(), rand(), rand()};
    srand(7);
    int got0 = rand();
    void* h = clsopen(g_cp, src2, CLLD_NOW);
    int got[3] = {got0, rand(), rand()};
    if (!h)
        report("rand-state", 0, "clsopen");
    else if (memcmp(got, want, sizeof got) != 0)
        report("rand-state", 0, "rand() after a build: %d, want %d", got[1], want[1]);
    else
        pass("rand-state");
    if (h) clclose(g_cp, h);
}

static void interior_pointers(void)
{
    const int n = 8192;
    for (unsigned d = 0; d < clgetndev(g_cp); d++) {
        cl_uint bits = 0;
        if (clGetDeviceInfo(stdcl_device(g_cp, d), CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, NULL) !=
                CL_SUCCESS ||
            bits < 8) {
            report("interior-pointers", 0, "device %u: CL_DEVICE_MEM_BASE_ADDR_ALIGN unknown", d);
            return;
        }
        int step = (int)(bits / 8 / sizeof(int));
        if (step < 1) step = 1;
        int* a = (int*)clmalloc(g_cp, (size_t)n * sizeof(int), 0);
        int ok = a != NULL;
        if (!ok) report("interior-pointers", 0, "out of memory");
        for (int j = 1; ok && j <= 3; j++) {
            int off = j * step;
            if (off >= n) break;
            for (int i = 0; i < n; i++) a[i] = -1;
            clndrange_t ndr = clndrange_init1d(0, (size_t)(n - off), 0);
            ok = clmsync(g_cp, d, a, CL_MEM_DEVICE | CL_EVENT_NOWAIT) != NULL &&
                clforka(g_cp, d, k_fill, &ndr, CL_EVENT_NOWAIT, a + off, 1000 * j, 1) != NULL &&
                clmsync(g_cp, d, a, CL_MEM_HOST | CL_EVENT_NOWAIT) != NULL && stdcl_wait(g_cp, d, CL_ALL_EVENT) == 0;
            if (!ok) {
                report("interior-pointers", 0, "device %u, offset %d ints: %s", d, off, clerror() ? clerror() : "?");
                break;
            }
            for (int i = 0; i < n && ok; i++) {
                int want = i < off ? -1 : 1000 * j + (i - off);
                if (a[i] != want) {
                    report("interior-pointers", 0, "device %u, offset %d ints: a[%d] is %d, want %d", d, off, i, a[i],
                           want);
                    ok = 0;
                }
            }
        }
        if (a && clfree(a) != 0) {
            report("interior-pointers", 0, "clfree: %s", clerror() ? clerror() : "?");
            ok = 0;
        }
        if (!ok) return;
    }
    pass("interior-pointers");
}

int main(void)
{
    const char* which = getenv("STDCL_TEST_CONTEXT");
    g_cp = which && strcmp(which, "gpu") == 0 ? stdgpu : stdcpu;
    if (!g_cp || clgetndev(g_cp) < 1) {
        printf("no %s\n", g_cp == stdgpu ? "stdgpu" : "stdcpu");
        return 1;
    }
    const char* why = stdcl_context_why(g_cp);
    if (!why || strstr(why, "zero-copy")) { /* a GPU copies; PoCL needs STDCL_ZERO_COPY=0 */
        printf("not in copy mode (set STDCL_ZERO_COPY=0): %s\n", why ? why : "?");
        return 1;
    }
    void* h = clsopen(g_cp, src, CLLD_NOW);
    k_add = h ? clsym(g_cp, h, "slow_add", 0) : NULL;
    k_fill = h ? clsym(g_cp, h, "slow_fill", 0) : NULL;
    k_step = h ? clsym(g_cp, h, "bound_step", 0) : NULL;
    if (!k_add || !k_fill || !k_step) {
        printf("kernels: %s\n", clerror() ? clerror() : "?");
        return 1;
    }
    sync_then_kernel(BIG, "sync-then-kernel");
    sync_then_kernel(SMALLN, "sync-then-kernel-small");
    kernel_then_sync(BIG, "kernel-then-sync");
    kernel_then_sync(SMALLN, "kernel-then-sync-small");
    free_after_sync();
    threads();
    copy_order();
    pinned_realloc();
    sync_then_reduce();
    bound_once();
    rand_state();
    interior_pointers();
    clclose(g_cp, h);
    printf("%s\n", failures ? "overlap FAILED" : "overlap ok");
    return failures ? 1 : 0;
}
