/* SPDX-License-Identifier: MIT */
/* helper_exit.c: a thread ends the process, or the context goes, while other
 * threads are inside libstdcl calls (test_exit.c runs it).
 *
 *   helper_exit exit [threads]     16 threads (or the number given) allocate,
 *                                  sync, launch and wait on stdcpu (stdgpu
 *                                  with STDCL_TEST_CONTEXT=gpu); once each has
 *                                  done a round, one of them prints "exit at
 *                                  <ns>" (CLOCK_MONOTONIC) and calls exit(0)
 *                                  while the others go on.
 *   helper_exit destroy [threads]  the same threads on a context of their own
 *                                  (clcontext_create over stdcpu's platform);
 *                                  once each has done a round, the main thread
 *                                  calls clcontext_destroy.  Every call the
 *                                  workers make then either works or fails as
 *                                  a call on a destroyed context does; the
 *                                  program prints "destroyed; N calls after"
 *                                  and exits 0, or 1 after printing each
 *                                  unexpected failure. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <stdcl.h>

enum { N = 4096, MAX_THREADS = 64 };

static const char* const k_src = "__kernel void bump(__global int* a, int k)\n"
                                 "{\n"
                                 "    a[get_global_id(0)] += k;\n"
                                 "}\n";

static CLCONTEXT* g_cp;
static cl_kernel g_k;
static unsigned g_threads = 16, g_ndev = 1;
static int g_destroy;
static atomic_uint g_ready; /* workers that finished a round */
static atomic_int g_gone; /* the context was destroyed */
static atomic_long g_after; /* calls that failed because it was */
static atomic_int g_bad; /* unexpected failures */

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* A call failed: expected only once the context is being destroyed, with the
 * messages a call on a destroyed context gives; returns 1 to stop the worker. */
static int failed(unsigned id, const char* what)
{
    const char* e = clerror();
    if (g_destroy && (!e || strstr(e, "not a live libstdcl context") || strstr(e, "was released") ||
                      strstr(e, "is not memory returned by clmalloc"))) {
        atomic_fetch_add(&g_after, 1);
        return 1;
    }
    if (atomic_fetch_add(&g_bad, 1) < 8) fprintf(stderr, "thread %u: %s failed: %s\n", id, what, e ? e : "(none)");
    return 1;
}

/* One round: allocate, send, launch, bring back, check, free. */
static int round_trip(unsigned id, unsigned r)
{
    unsigned d = (id + r) % g_ndev;
    int* a = (int*)clmalloc(g_cp, N * sizeof(int), 0);
    if (!a) return failed(id, "clmalloc");
    for (int i = 0; i < N; i++) a[i] = i;
    clndrange_t ndr = clndrange_init1d(0, N, 64);
    int stop = 0;
    if (!clmsync(g_cp, d, a, CL_MEM_DEVICE | CL_EVENT_NOWAIT))
        stop = failed(id, "clmsync to the device");
    else if (!clforka(g_cp, d, g_k, &ndr, CL_EVENT_NOWAIT, a, 5))
        stop = failed(id, "clforka");
    else if (!clmsync(g_cp, d, a, CL_MEM_HOST | CL_EVENT_NOWAIT))
        stop = failed(id, "clmsync to the host");
    else if (stdcl_wait(g_cp, d, CL_ALL_EVENT) != 0)
        stop = failed(id, "clwait");
    else
        for (int i = 0; i < N; i++)
            if (a[i] != i + 5) {
                if (atomic_fetch_add(&g_bad, 1) < 8)
                    fprintf(stderr, "thread %u: a[%d] = %d, want %d\n", id, i, a[i], i + 5);
                stop = 1;
                break;
            }
    if (clfree(a) != 0 && !stop) stop = failed(id, "clfree");
    return stop;
}

static void* worker(void* arg)
{
    unsigned id = (unsigned)(size_t)arg;
    for (unsigned r = 0;; r++) {
        if (round_trip(id, r)) return NULL;
        if (r == 0) atomic_fetch_add(&g_ready, 1);
        if (!g_destroy && id == 0 && atomic_load(&g_ready) == g_threads) {
            printf("exit at %lld\n", now_ns());
            fflush(stdout);
            exit(0);
        }
    }
}

int main(int argc, char** argv)
{
    if (argc < 2 || (strcmp(argv[1], "exit") && strcmp(argv[1], "destroy"))) {
        fprintf(stderr, "usage: %s exit|destroy [threads]\n", argv[0]);
        return 2;
    }
    g_destroy = !strcmp(argv[1], "destroy");
    if (argc > 2) g_threads = (unsigned)atoi(argv[2]);
    if (g_threads < 1 || g_threads > MAX_THREADS) g_threads = 16;
    const char* which = getenv("STDCL_TEST_CONTEXT");
    CLCONTEXT* base = which && !strcmp(which, "gpu") ? stdgpu : stdcpu;
    if (!base) {
        fprintf(stderr, "no context: %s\n", clerror());
        return 1;
    }
    if (g_destroy) {
        char name[256] = "";
        clGetPlatformInfo(stdcl_platform(base), CL_PLATFORM_NAME, sizeof name, name, NULL);
        g_cp = clcontext_create(name, base == stdgpu ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_CPU, 0, NULL, 0);
        if (!g_cp) {
            fprintf(stderr, "clcontext_create: %s\n", clerror());
            return 1;
        }
    } else {
        g_cp = base;
    }
    g_ndev = clgetndev(g_cp) < 2 ? 1 : 2;
    void* h = clsopen(g_cp, k_src, CLLD_NOW);
    g_k = h ? clsym(g_cp, h, "bump", CLLD_NOW) : NULL;
    if (!g_k) {
        fprintf(stderr, "kernel: %s\n", clerror());
        return 1;
    }
    pthread_t t[MAX_THREADS];
    for (unsigned i = 0; i < g_threads; i++)
        if (pthread_create(&t[i], NULL, worker, (void*)(size_t)i) != 0) {
            fprintf(stderr, "pthread_create: %s\n", strerror(errno));
            return 1;
        }
    if (!g_destroy) {
        for (unsigned i = 0; i < g_threads; i++) pthread_join(t[i], NULL);
        fprintf(stderr, "every worker stopped before one called exit\n");
        return 1;
    }
    while (atomic_load(&g_ready) < g_threads && !atomic_load(&g_bad)) sched_yield();
    int rc = clcontext_destroy(g_cp);
    atomic_store(&g_gone, 1);
    if (rc != 0) {
        fprintf(stderr, "clcontext_destroy: %d: %s\n", rc, clerror());
        atomic_fetch_add(&g_bad, 1);
    }
    for (unsigned i = 0; i < g_threads; i++) pthread_join(t[i], NULL);
    printf("destroyed; %ld calls after\n", (long)atomic_load(&g_after));
    return atomic_load(&g_bad) ? 1 : 0;
}
