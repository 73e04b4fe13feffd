/* SPDX-License-Identifier: MIT */
/* test_stress.c: many threads calling libstdcl at once, each a random but
 * seeded mix of clopen/clsym/clclose, clmalloc/clfree, clmsync (both ways,
 * WAIT and NOWAIT), clforka (WAIT, NOWAIT, NOWAIT without an event) and
 * clarg_set + clfork (WAIT and NOWAIT) with
 * interior pointers, clmsyncn, clmcopy, clreduce, arguments bound once and
 * launched twice, and clwait, on every device of stdcpu (both PoCL devices; with
 * STDCL_TEST_CONTEXT=gpu, stdgpu: make check-gpu); every result is checked
 * exactly (c[i] = a[i] * k + i, copies, sums).
 *
 * Every thread opens the same kernel file (one shared handle, counted), so a
 * thread's clclose races the other threads' clforka on the same kernel; a
 * second file is opened, used once and closed by every thread, so its count
 * falls to zero while other threads open it again.
 *
 * Environment (tools/test_env.sh keeps STDCL_STRESS_*):
 *   STDCL_STRESS_THREADS  threads (default 16)
 *   STDCL_STRESS_SECONDS  how long each test runs (default 3; `make stress
 *                         SECONDS=600`); every thread also does at least
 *                         MIN_OPS operations, however long that takes
 *   STDCL_STRESS_SEED     the seed (default: from the clock); printed, so a
 *                         failing run's threads can be given the same
 *                         sequences again (the interleaving differs)
 *   STDCL_STRESS_NO_INTERIOR=1  no interior pointers (no sub-buffers), to
 *                         tell a driver's sub-buffer trouble from others;
 *                         the default on NVIDIA's platform with more than
 *                         one thread, where the driver faults with them
 *                         (=0 uses them there too)
 *
 * Two tests: the mix on the devices as the library finds them (PoCL: zero-
 * copy, clmsync has nothing to copy), and the same mix in a child process
 * with STDCL_ZERO_COPY=0 (copy mode: device buffers of their own; clmsync
 * copies). */
#include <execinfo.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>

#include <stdcl.h>

#include "test_util.h"

enum {
    MAX_THREADS = 256,
    MAX_BUFS = 6, /* live allocations per thread */
    MAX_HELD = 3, /* open references to stress.cl per thread */
    MIN_OPS = 40, /* random operations per thread, at least */
    LOCAL = 64, /* one work-group size: PoCL compiles each new one */
};

/* The kinds of operation, counted over all threads. */
enum {
    OP_OPEN,
    OP_CLOSE,
    OP_MALLOC,
    OP_FREE,
    OP_FORKA,
    OP_FORK,
    OP_SYNC_DEVICE,
    OP_SYNC_HOST,
    OP_WAIT,
    OP_TRANSIENT,
    OP_NOWAIT,
    OP_INTERIOR,
    OP_FREE_PENDING,
    OP_COPY,
    OP_REDUCE,
    OP_SYNCN,
    OP_FORK_AGAIN,
    OP_NOEVENT,
    NOPS
};
static const char* const op_names[NOPS] = {
    "clopen",
    "clclose",
    "clmalloc",
    "clfree",
    "clforka",
    "clfork",
    "clmsync to device",
    "clmsync to host",
    "clwait",
    "open-fork-close",
    "NOWAIT calls",
    "interior pointers",
    "clfree with NOWAIT work pending",
    "clmcopy",
    "clreduce",
    "clmsyncn",
    "clfork again with arguments bound once",
    "clforka without an event (CL_EVENT_NOEVENT)",
};

static unsigned g_threads = 16;
static double g_seconds = 3;
static unsigned long long g_seed;
static unsigned g_align_ints = 1; /* sub-buffer alignment, in ints */
static int g_no_interior; /* STDCL_STRESS_NO_INTERIOR=1 */
static int g_interior_fault; /* the driver is known to fault with them (NVIDIA) */
static char g_file[PATH_MAX + 64]; /* tests/kernels/stress.cl */
static char g_transient_file[PATH_MAX + 64]; /* tests/kernels/stress_transient.cl */
static pthread_mutex_t g_fork_mu = PTHREAD_MUTEX_INITIALIZER; /* axpi_fork's arguments */
static CLCONTEXT* g_cp; /* the context under test */
static unsigned g_ndev = 2; /* its devices used (at most 2) */

typedef struct {
    int* p;
    size_t n; /* ints */
    int synced[2]; /* device d's copy holds what the host holds */
} buf_t;

typedef struct {
    unsigned id;
    unsigned long long rng;
    /* the shared kernel file */
    void* h; /* the handle while held > 0 */
    int held;
    cl_kernel axpi, axpi_fork;
    buf_t bufs[MAX_BUFS];
    int nbufs;
    int pending[2]; /* NOWAIT transfers not joined yet, per device */
    int* scratch;
    size_t scratch_n;
    /* results */
    long ops[NOPS];
    long calls;
    int failures;
    char first[1024];
} worker_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* xorshift64*: each thread's own sequence. */
static unsigned long long rnd(worker_t* w)
{
    unsigned long long x = w->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    w->rng = x;
    return x * 2685821657736338717ULL;
}

static unsigned below(worker_t* w, unsigned n) { return n ? (unsigned)(rnd(w) % n) : 0; }

/* Counts a failure of w; the first one's text is kept: what was done
 * (fmt, ap), then why (NULL: nothing to add). */
static void note_failure(worker_t* w, const char* why, const char* fmt, va_list ap)
{
    char what[512];
    vsnprintf(what, sizeof what, fmt, ap);
    if (w->failures++ != 0) return;
    if (why)
        snprintf(w->first, sizeof w->first, "thread %u: %s: %s", w->id, what, why);
    else
        snprintf(w->first, sizeof w->first, "thread %u: %s", w->id, what);
    /* Said at once, with the seed: a run that then hangs or crashes has told it. */
    fprintf(stderr, "stress: failure (seed %llu): %s\n", g_seed, w->first);
    fflush(stderr);
}

/* A call failed: what was done, and clerror()'s text. */
static void fail_call(worker_t* w, const char* fmt, ...)
{
    const char* e = clerror();
    va_list ap;
    va_start(ap, fmt);
    note_failure(w, e ? e : "(no clerror message)", fmt, ap);
    va_end(ap);
}

/* A result is wrong: what was found. */
static void fail_result(worker_t* w, const char* fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    note_failure(w, NULL, fmt, ap);
    va_end(ap);
}

static int event_flag(worker_t* w)
{
    if (below(w, 2)) {
        w->ops[OP_NOWAIT]++;
        return CL_EVENT_NOWAIT;
    }
    return below(w, 2) ? CL_EVENT_WAIT : 0; /* 0 means WAIT */
}

/* clwait on device d with a selection that covers `need` (CL_KERNEL_EVENT,
 * CL_MEM_EVENT), sometimes more. */
static int join(worker_t* w, unsigned d, int need)
{
    static const int choices[] = {0, CL_ALL_EVENT, CL_KERNEL_EVENT, CL_MEM_EVENT};
    int sel;
    do sel = choices[below(w, 4)];
    while (sel != 0 && (sel & need) != need);
    w->calls++;
    w->ops[OP_WAIT]++;
    if (stdcl_wait(g_cp, d, sel) != 0) {
        fail_call(w, "clwait(device %u, 0x%x)", d, (unsigned)sel);
        return -1;
    }
    if (sel == 0 || sel == CL_ALL_EVENT || (sel & CL_MEM_EVENT)) w->pending[d] = 0;
    return 0;
}

/* Joins this thread's pending NOWAIT transfers before its host memory changes. */
static int join_pending(worker_t* w)
{
    for (unsigned d = 0; d < g_ndev; d++)
        if (w->pending[d] && join(w, d, CL_MEM_EVENT) != 0) return -1;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* Operations                                                                */
/* ------------------------------------------------------------------------ */

/* The operation each thread is in, for the crash handler: a signal that ends
 * the run (a fault in the library or the driver) says where it struck. */
static __thread worker_t* t_worker;
static __thread const char* volatile t_op = "start";

static void write_str(const char* s) { (void)!write(2, s, strlen(s)); }

static void write_num(unsigned long long v)
{
    char b[24];
    int i = (int)sizeof b;
    b[--i] = 0;
    do b[--i] = (char)('0' + v % 10);
    while ((v /= 10) && i > 0);
    write_str(b + i);
}

/* Async-signal-safe: what crashed, then the default action (a core dump, no
 * exit handlers, nothing that could hang). */
static void on_crash(int sig)
{
    write_str("stress: signal ");
    write_num((unsigned)sig);
    write_str(" (");
    write_str(strsignal(sig));
    write_str(") in thread ");
    if (t_worker) {
        write_num(t_worker->id);
        write_str(" during ");
        write_str(t_op);
    } else {
        write_str("not of the test (the driver's or the library's)");
    }
    write_str("; seed ");
    write_num(g_seed);
    write_str(" (STDCL_STRESS_SEED)\n");
    void* frames[32];
    int n = backtrace(frames, 32);
    backtrace_symbols_fd(frames, n, 2);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void catch_crashes(void)
{
    void* warm[1];
    backtrace(warm, 1); /* loads libgcc now, not in the handler */
    static const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_crash;
        sigaction(sigs[i], &sa, NULL);
    }
}

static void op_open(worker_t* w)
{
    int flags = below(w, 3) == 0 ? CLLD_LAZY : CLLD_NOW;
    w->calls++;
    void* h = clopen(g_cp, g_file, flags);
    if (!h) {
        fail_call(w, "clopen(stress.cl, %s)", flags == CLLD_LAZY ? "CLLD_LAZY" : "CLLD_NOW");
        return;
    }
    if (w->held && h != w->h) {
        fail_result(w, "clopen(stress.cl) returned %p while this thread holds %p for the same file", h, w->h);
        clclose(g_cp, h);
        return;
    }
    w->calls += 2;
    cl_kernel a = clsym(g_cp, h, "axpi", below(w, 2) ? CLLD_NOW : 0);
    cl_kernel f = a ? clsym(g_cp, h, "axpi_fork", 0) : NULL;
    if (!a || !f) {
        fail_call(w, "clsym(%s) after clopen", a ? "axpi_fork" : "axpi");
        clclose(g_cp, h);
        return;
    }
    if (w->held && (a != w->axpi || f != w->axpi_fork)) {
        fail_result(w, "clsym on the same handle gave another cl_kernel (%p, %p; before %p, %p)", (void*)a, (void*)f,
                    (void*)w->axpi, (void*)w->axpi_fork);
    }
    w->h = h;
    w->axpi = a;
    w->axpi_fork = f;
    w->held++;
    w->ops[OP_OPEN]++;
}

static void op_close(worker_t* w)
{
    w->calls++;
    if (clclose(g_cp, w->h) != 0) {
        fail_call(w, "clclose(stress.cl handle %p, held %d time(s) by this thread)", w->h, w->held);
        return;
    }
    if (--w->held == 0) w->h = NULL, w->axpi = w->axpi_fork = NULL;
    w->ops[OP_CLOSE]++;
}

/* b[i] = base + 7 i for a random base, which it returns. */
static int fill(worker_t* w, buf_t* b)
{
    int base = (int)(rnd(w) & 0xffff) - 0x8000;
    for (size_t i = 0; i < b->n; i++) b->p[i] = base + (int)(i * 7);
    b->synced[0] = b->synced[1] = 0;
    return base;
}

static void op_malloc(worker_t* w)
{
    size_t n;
    switch (below(w, 8)) {
    case 0: n = 1 + below(w, 200); break; /* smaller than one work-group */
    case 1: n = (size_t)LOCAL * (1024 + below(w, 3072)); break; /* 256 KiB to 1 MiB */
    default: n = (size_t)LOCAL * (1 + below(w, 128)) + below(w, 3) * below(w, 64); break;
    }
    int flags = below(w, 4) == 0 ? CL_MEM_RW : 0;
    w->calls += 2;
    int* p = (int*)clmalloc(g_cp, n * sizeof(int), flags);
    if (!p) {
        fail_call(w, "clmalloc(%zu bytes)", n * sizeof(int));
        return;
    }
    if (clsizeofmem(p) != n * sizeof(int)) {
        fail_result(w, "clsizeofmem(%p) = %zu, want %zu", (void*)p, clsizeofmem(p), n * sizeof(int));
    }
    buf_t* b = &w->bufs[w->nbufs++];
    b->p = p;
    b->n = n;
    fill(w, b);
    w->ops[OP_MALLOC]++;
}

static void op_free(worker_t* w)
{
    int i = (int)below(w, (unsigned)w->nbufs);
    buf_t b = w->bufs[i];
    w->bufs[i] = w->bufs[--w->nbufs];
    if (w->pending[0] || w->pending[1]) w->ops[OP_FREE_PENDING]++;
    w->calls++;
    if (clfree(b.p) != 0)
        fail_call(w, "clfree(%p, %zu bytes)", (void*)b.p, b.n * sizeof(int));
    else
        w->ops[OP_FREE]++;
}

/* A random offset (in ints) a kernel or clmsync may start at in b, leaving
 * at least `room` ints; 0 when there is no room for another. */
static size_t pick_offset(worker_t* w, size_t n, size_t room)
{
    if (g_no_interior || below(w, 3) != 0 || n < room + g_align_ints) return 0;
    size_t steps = (n - room) / g_align_ints;
    size_t off = g_align_ints * (size_t)below(w, (unsigned)(steps > 64 ? 64 : steps) + 1);
    if (off) w->ops[OP_INTERIOR]++;
    return off;
}

/* Two different buffers of this thread with at least LOCAL ints each; -1 if none. */
static int pick_pair(worker_t* w, int* ia, int* ic)
{
    int ok[MAX_BUFS], n = 0;
    for (int i = 0; i < w->nbufs; i++)
        if (w->bufs[i].n >= LOCAL) ok[n++] = i;
    if (n < 2) return -1;
    *ia = ok[below(w, (unsigned)n)];
    do *ic = ok[below(w, (unsigned)n)];
    while (*ic == *ia);
    return 0;
}

/* Launches c = a * k + i on a device over interior or whole buffers, through
 * kernel krn (with clforka, or clarg_set + clfork under g_fork_mu when
 * use_fork), then checks every int of c. */
static void launch_and_check(worker_t* w, cl_kernel krn, int use_fork, const char* kname)
{
    int ia, ic;
    if (pick_pair(w, &ia, &ic) != 0) return;
    if (join_pending(w) != 0) return;
    buf_t* a = &w->bufs[ia];
    buf_t* c = &w->bufs[ic];
    size_t n = a->n < c->n ? a->n : c->n;
    size_t off = pick_offset(w, n, LOCAL);
    size_t g = (size_t)LOCAL * (1 + below(w, (unsigned)((n - off) / LOCAL)));
    unsigned d = below(w, g_ndev);
    int k = (int)below(w, 1001) - 500; /* |a[i] * k + i| < 2^31 */
    int sentinel = -(int)(rnd(w) & 0x7fffffff);
    int abase = fill(w, a);
    for (size_t i = 0; i < c->n; i++) c->p[i] = sentinel;
    c->synced[0] = c->synced[1] = 0;
    int fa = event_flag(w), fc = event_flag(w), fk = event_flag(w), fh = event_flag(w);
    int need = 0;
    clndrange_t ndr = clndrange_init1d(0, g, LOCAL);

    w->calls += 2;
    if (!clmsync(g_cp, d, a->p, CL_MEM_DEVICE | fa)) {
        fail_call(w, "clmsync(a %p, device %u, to device, 0x%x)", (void*)a->p, d, (unsigned)fa);
        return;
    }
    if (!clmsync(g_cp, d, c->p, CL_MEM_DEVICE | fc)) {
        fail_call(w, "clmsync(c %p, device %u, to device, 0x%x)", (void*)c->p, d, (unsigned)fc);
        return;
    }
    if ((fa | fc) & CL_EVENT_NOWAIT) need |= CL_MEM_EVENT;
    cl_event ev;
    if (use_fork) {
        pthread_mutex_lock(&g_fork_mu);
        w->calls += 4;
        int rc = clarg_set_global(g_cp, krn, 0, a->p + off);
        if (rc == 0) rc = clarg_set_global(g_cp, krn, 1, c->p + off);
        if (rc == 0) rc = clarg_set(g_cp, krn, 2, k);
        ev = rc == 0 ? clfork(g_cp, d, krn, &ndr, fk) : NULL;
        if (ev && below(w, 2)) {
            /* The same launch again with the arguments bound once: same result. */
            int f2 = event_flag(w);
            w->calls++;
            w->ops[OP_FORK_AGAIN]++;
            ev = clfork(g_cp, d, krn, &ndr, f2);
            fk |= f2 & CL_EVENT_NOWAIT;
        }
        pthread_mutex_unlock(&g_fork_mu);
        if (rc != 0) {
            fail_call(w, "clarg_set on %s", kname);
            return;
        }
    } else {
        if ((fk & CL_EVENT_NOWAIT) && below(w, 2)) {
            fk |= CL_EVENT_NOEVENT; /* STDCL_LAUNCHED: ordered and joined all the same */
            w->ops[OP_NOEVENT]++;
        }
        w->calls++;
        ev = clforka(g_cp, d, krn, &ndr, fk, a->p + off, c->p + off, k);
    }
    if (!ev) {
        fail_call(w, "%s(%s, device %u, global %zu, offset %zu ints, 0x%x)", use_fork ? "clfork" : "clforka", kname, d,
                  g, off, (unsigned)fk);
        return;
    }
    if (fk & CL_EVENT_NOWAIT) need |= CL_KERNEL_EVENT;
    /* Back to the host: all of c, or from the interior pointer on. */
    size_t hoff = below(w, 2) ? off : 0;
    w->calls++;
    if (!clmsync(g_cp, d, c->p + hoff, CL_MEM_HOST | fh)) {
        fail_call(w, "clmsync(c + %zu ints, device %u, to host, 0x%x)", hoff, d, (unsigned)fh);
        return;
    }
    if (fh & CL_EVENT_NOWAIT) need |= CL_MEM_EVENT;
    /* Sometimes the input is freed with the work still queued: clfree waits. */
    int freed_a = 0;
    if (need && below(w, 6) == 0) {
        w->calls++;
        w->ops[OP_FREE_PENDING]++;
        if (clfree(a->p) != 0) fail_call(w, "clfree(a %p) with NOWAIT work queued", (void*)a->p);
        freed_a = 1;
    }
    /* The last command on the in-order queue decides what must be joined. */
    if (fh & CL_EVENT_NOWAIT)
        need = CL_MEM_EVENT;
    else
        need = 0;
    if (need || below(w, 4) == 0) {
        if (join(w, d, need) != 0) return;
    }
    /* Every int of c: the kernel's range holds a * k + i (a recomputed from
     * its pattern: it may be freed), the rest the sentinel. */
    for (size_t i = 0; i < c->n; i++) {
        int want = sentinel;
        if (i >= off && i < off + g) want = (abase + (int)(i * 7)) * k + (int)(i - off);
        if (c->p[i] != want) {
            fail_result(
                w,
                "%s on device %u, global %zu, offset %zu ints, k %d, flags a 0x%x c 0x%x kernel 0x%x host 0x%x%s: "
                "c[%zu] = %d, want %d",
                kname, d, g, off, k, (unsigned)fa, (unsigned)fc, (unsigned)fk, (unsigned)fh,
                freed_a ? " (a freed before clwait)" : "", i, c->p[i], want);
            break;
        }
    }
    c->synced[d] = 1;
    if (freed_a) {
        w->bufs[ia] = w->bufs[--w->nbufs];
    } else {
        a->synced[d] = 1;
    }
    w->ops[use_fork ? OP_FORK : OP_FORKA]++;
}

static void op_forka(worker_t* w) { launch_and_check(w, w->axpi, 0, "axpi"); }

static void op_fork(worker_t* w) { launch_and_check(w, w->axpi_fork, 1, "axpi_fork"); }

static void op_sync_device(worker_t* w)
{
    buf_t* b = &w->bufs[below(w, (unsigned)w->nbufs)];
    unsigned d = below(w, g_ndev);
    int f = event_flag(w);
    size_t off = pick_offset(w, b->n, 1);
    size_t len = b->n - off; /* ints */
    int partial = below(w, 3) == 0;
    if (partial) len = 1 + below(w, (unsigned)len);
    w->calls++;
    cl_event ev = partial ? clmsyncn(g_cp, d, b->p + off, len * sizeof(int), CL_MEM_DEVICE | f)
                          : clmsync(g_cp, d, b->p + off, CL_MEM_DEVICE | f);
    if (!ev) {
        fail_call(w, "%s(%p + %zu ints of %zu, %zu ints, device %u, to device, 0x%x)", partial ? "clmsyncn" : "clmsync",
                  (void*)b->p, off, b->n, len, d, (unsigned)f);
        return;
    }
    if (partial) w->ops[OP_SYNCN]++;
    if (f & CL_EVENT_NOWAIT) w->pending[d] = 1;
    if (off == 0 && len == b->n) b->synced[d] = 1;
    w->ops[OP_SYNC_DEVICE]++;
}

/* Device d's copy is known to equal the host's: reading it back must give
 * the same contents. */
static void op_sync_host(worker_t* w)
{
    int cand[MAX_BUFS], nc = 0;
    unsigned d = below(w, g_ndev);
    for (int i = 0; i < w->nbufs; i++)
        if (w->bufs[i].synced[d]) cand[nc++] = i;
    if (nc == 0) return;
    if (join_pending(w) != 0) return;
    buf_t* b = &w->bufs[cand[below(w, (unsigned)nc)]];
    if (w->scratch_n < b->n) {
        free(w->scratch);
        w->scratch = (int*)malloc(b->n * sizeof(int));
        w->scratch_n = w->scratch ? b->n : 0;
        if (!w->scratch) return;
    }
    memcpy(w->scratch, b->p, b->n * sizeof(int));
    int f = event_flag(w);
    size_t off = pick_offset(w, b->n, 1);
    w->calls++;
    if (!clmsync(g_cp, d, b->p + off, CL_MEM_HOST | f)) {
        fail_call(w, "clmsync(%p + %zu ints of %zu, device %u, to host, 0x%x)", (void*)b->p, off, b->n, d, (unsigned)f);
        return;
    }
    if ((f & CL_EVENT_NOWAIT) && join(w, d, CL_MEM_EVENT) != 0) return;
    for (size_t i = 0; i < b->n; i++)
        if (b->p[i] != w->scratch[i]) {
            fail_result(w,
                        "clmsync(%p + %zu ints of %zu, device %u, to host, 0x%x) after the device copy was made "
                        "equal: [%zu] = %d, want %d",
                        (void*)b->p, off, b->n, d, (unsigned)f, i, b->p[i], w->scratch[i]);
            break;
        }
    w->ops[OP_SYNC_HOST]++;
}

/* Opens stress_transient.cl, launches its kernel once, closes it. */
static void op_transient(worker_t* w)
{
    w->calls += 2;
    void* h = clopen(g_cp, g_transient_file, below(w, 2) ? CLLD_NOW : CLLD_LAZY);
    if (!h) {
        fail_call(w, "clopen(stress_transient.cl)");
        return;
    }
    cl_kernel k = clsym(g_cp, h, "axpi_transient", 0);
    if (!k) {
        fail_call(w, "clsym(axpi_transient)");
        clclose(g_cp, h);
        return;
    }
    launch_and_check(w, k, 0, "axpi_transient");
    w->calls++;
    if (clclose(g_cp, h) != 0) fail_call(w, "clclose(stress_transient.cl)");
    w->ops[OP_TRANSIENT]++;
}

static void op_wait(worker_t* w)
{
    unsigned d = below(w, g_ndev);
    join(w, d, 0);
}

/* clmcopy on a device: a filled and synced, copied into c, c read back: the
 * first min(sizes) ints of c are a's. */
static void op_copy(worker_t* w)
{
    int ia, ic;
    if (pick_pair(w, &ia, &ic) != 0) return;
    if (join_pending(w) != 0) return;
    buf_t* a = &w->bufs[ia];
    buf_t* c = &w->bufs[ic];
    unsigned d = below(w, g_ndev);
    int base = fill(w, a);
    size_t n = a->n < c->n ? a->n : c->n;
    int fa = event_flag(w), fcp = event_flag(w), fh = event_flag(w);
    w->calls += 3;
    if (!clmsync(g_cp, d, a->p, CL_MEM_DEVICE | fa)) {
        fail_call(w, "clmsync(a %p, device %u, to device, 0x%x)", (void*)a->p, d, (unsigned)fa);
        return;
    }
    if (!clmcopy(g_cp, d, a->p, c->p, fcp)) {
        fail_call(w, "clmcopy(%p -> %p, device %u, 0x%x)", (void*)a->p, (void*)c->p, d, (unsigned)fcp);
        return;
    }
    if (!clmsync(g_cp, d, c->p, CL_MEM_HOST | fh)) {
        fail_call(w, "clmsync(c %p, device %u, to host, 0x%x)", (void*)c->p, d, (unsigned)fh);
        return;
    }
    if ((fh & CL_EVENT_NOWAIT) && join(w, d, CL_MEM_EVENT) != 0) return;
    for (size_t i = 0; i < n; i++)
        if (c->p[i] != base + (int)(i * 7)) {
            fail_result(w, "clmcopy(%zu ints, device %u, flags a 0x%x copy 0x%x host 0x%x): c[%zu] = %d, want %d", n, d,
                        (unsigned)fa, (unsigned)fcp, (unsigned)fh, i, c->p[i], base + (int)(i * 7));
            break;
        }
    a->synced[d] = 1;
    c->synced[0] = c->synced[1] = 0; /* read back whole from device d: other devices differ */
    c->synced[d] = 1;
    w->ops[OP_COPY]++;
}

/* clreduce right after a clmsync (WAIT or NOWAIT) of the memory it sums. */
static void op_reduce(worker_t* w)
{
    if (join_pending(w) != 0) return;
    buf_t* b = &w->bufs[below(w, (unsigned)w->nbufs)];
    unsigned d = below(w, g_ndev);
    int base = fill(w, b);
    size_t off = below(w, (unsigned)b->n);
    size_t n = 1 + below(w, (unsigned)(b->n - off));
    unsigned sum = 0; /* int addition wraps on the device too */
    for (size_t i = off; i < off + n; i++) sum += (unsigned)(base + (int)(i * 7));
    int f = event_flag(w);
    w->calls += 2;
    if (!clmsync(g_cp, d, b->p, CL_MEM_DEVICE | f)) {
        fail_call(w, "clmsync(%p, device %u, to device, 0x%x)", (void*)b->p, d, (unsigned)f);
        return;
    }
    if (f & CL_EVENT_NOWAIT) w->pending[d] = 1;
    cl_int got = 0;
    if (clreduce(g_cp, d, b->p + off, n, CL_REDUCE_INT, CL_REDUCE_SUM, &got) != 0) {
        fail_call(w, "clreduce(%p + %zu, %zu ints, device %u)", (void*)b->p, off, n, d);
        return;
    }
    if ((unsigned)got != sum)
        fail_result(w, "clreduce(%zu ints from %zu, device %u) after a clmsync with 0x%x: %d, want %d", n, off, d,
                    (unsigned)f, got, (int)sum);
    b->synced[d] = 1;
    w->ops[OP_REDUCE]++;
}

/* One random operation that the thread's state allows. */
static void step(worker_t* w)
{
    for (;;) {
        unsigned r = below(w, 100);
        if (r < 7) {
            if (w->held < MAX_HELD) { t_op = "open"; return op_open(w); }
        } else if (r < 14) {
            if (w->held > 0) { t_op = "close"; return op_close(w); }
        } else if (r < 24) {
            if (w->nbufs < MAX_BUFS) { t_op = "malloc"; return op_malloc(w); }
        } else if (r < 31) {
            if (w->nbufs > 2) { t_op = "free"; return op_free(w); }
        } else if (r < 53) {
            if (w->held > 0 && w->nbufs >= 2) { t_op = "forka"; return op_forka(w); }
        } else if (r < 60) {
            if (w->held > 0 && w->nbufs >= 2) { t_op = "fork"; return op_fork(w); }
        } else if (r < 72) {
            if (w->nbufs > 0) { t_op = "sync_device"; return op_sync_device(w); }
        } else if (r < 84) {
            if (w->nbufs > 0) { t_op = "sync_host"; return op_sync_host(w); }
        } else if (r < 88) {
            { t_op = "wait"; return op_wait(w); }
        } else if (r < 92) {
            if (w->nbufs >= 2) { t_op = "copy"; return op_copy(w); }
        } else if (r < 96) {
            if (w->nbufs > 0) { t_op = "reduce"; return op_reduce(w); }
        } else {
            if (w->nbufs >= 2) { t_op = "transient"; return op_transient(w); }
        }
    }
}

static void* worker(void* arg)
{
    worker_t* w = (worker_t*)arg;
    t_worker = w;
    /* Every kind at least once, then at random. */
    t_op = "open";
    op_open(w);
    t_op = "malloc";
    op_malloc(w);
    t_op = "malloc";
    op_malloc(w);
    t_op = "malloc";
    op_malloc(w);
    t_op = "forka";
    op_forka(w);
    t_op = "fork";
    op_fork(w);
    t_op = "sync_device";
    op_sync_device(w);
    t_op = "sync_host";
    op_sync_host(w);
    t_op = "transient";
    op_transient(w);
    t_op = "copy";
    op_copy(w);
    t_op = "reduce";
    op_reduce(w);
    t_op = "wait";
    op_wait(w);
    double end = now_s() + g_seconds;
    for (long i = 0; (i < MIN_OPS || now_s() < end) && w->failures == 0; i++) step(w);
    t_op = "clwait at the end";
    for (unsigned d = 0; d < g_ndev; d++)
        if (stdcl_wait(g_cp, d, CL_ALL_EVENT) != 0) fail_call(w, "clwait(device %u) at the end", d);
    t_op = "clfree and clclose at the end";
    while (w->nbufs > 0) op_free(w);
    while (w->held > 0) op_close(w);
    free(w->scratch);
    return NULL;
}

/* ------------------------------------------------------------------------ */

static unsigned env_unsigned(const char* name, unsigned dflt, unsigned lo, unsigned hi)
{
    const char* v = getenv(name);
    if (!v || !*v) return dflt;
    char* end;
    unsigned long x = strtoul(v, &end, 10);
    if (*end || x < lo || x > hi) {
        print_error("%s=%s: not a number from %u to %u; using %u\n", name, v, lo, hi, dflt);
        return dflt;
    }
    return (unsigned)x;
}

static int setup(void** state)
{
    (void)state;
    const char* which = getenv("STDCL_TEST_CONTEXT");
    if (which && strcmp(which, "gpu") == 0) {
        g_cp = stdgpu;
        if (!g_cp) {
            print_error("setup: STDCL_TEST_CONTEXT=gpu, but stdgpu is NULL\n");
            return -1;
        }
        g_ndev = clgetndev(g_cp) < 2 ? 1 : 2;
    } else {
        if (tu_need_two_cpu_devices() != 0) return -1;
        g_cp = stdcpu;
    }
    /* (tu_kernel's buffers are not for threads.) */
    snprintf(g_file, sizeof g_file, "%s", tu_kernel("stress.cl"));
    snprintf(g_transient_file, sizeof g_transient_file, "%s", tu_kernel("stress_transient.cl"));
    g_threads = env_unsigned("STDCL_STRESS_THREADS", 16, 1, MAX_THREADS);
    /* NVIDIA's driver faults in a thread of its own, now and then, when
     * kernels are launched with sub-buffers from several threads, also in a
     * raw OpenCL program without libstdcl (BENCHMARKS.md, Tables 10.3 and
     * 10.7): there, no interior pointers unless asked. */
    char plat[256] = "";
    clGetPlatformInfo(stdcl_platform(g_cp), CL_PLATFORM_NAME, sizeof plat, plat, NULL);
    g_interior_fault = tu_icontains(plat, "nvidia") && g_threads > 1;
    g_no_interior = env_unsigned("STDCL_STRESS_NO_INTERIOR", g_interior_fault, 0, 1) != 0;
    g_seconds = env_unsigned("STDCL_STRESS_SECONDS", 3, 0, 7 * 24 * 3600);
    const char* s = getenv("STDCL_STRESS_SEED");
    if (s && *s) {
        g_seed = strtoull(s, NULL, 0);
    } else {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        g_seed =
            (unsigned long long)ts.tv_sec * 1000003ULL ^ (unsigned long long)ts.tv_nsec ^ (unsigned long long)getpid();
    }
    for (unsigned d = 0; d < g_ndev; d++) {
        cl_uint bits = 0;
        if (clGetDeviceInfo(stdcl_device(g_cp, d), CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, NULL) !=
            CL_SUCCESS) {
            print_error("setup: CL_DEVICE_MEM_BASE_ADDR_ALIGN of device %u unknown\n", d);
            return -1;
        }
        unsigned ints = bits / 8 / sizeof(int);
        if (ints > g_align_ints) g_align_ints = ints;
    }
    return 0;
}

/* Runs the workers; fails with every thread's first failure. */
static void run_mix(void)
{
    const char* why = stdcl_context_why(g_cp);
    int zero_copy = tu_contains(why, ", zero-copy)");
    print_message("stress: %u threads, %g s, seed %llu (STDCL_STRESS_SEED=%llu replays each thread's sequence), "
                  "devices in %s mode, sub-buffer alignment %u ints\n",
                  g_threads, g_seconds, g_seed, g_seed, zero_copy ? "zero-copy" : "copy", g_align_ints);
    if (g_no_interior)
        print_message("stress: no interior pointers (%s)\n",
                      g_interior_fault ? "NVIDIA's driver faults with sub-buffers launched from several threads; "
                                         "STDCL_STRESS_NO_INTERIOR=0 uses them"
                                       : "STDCL_STRESS_NO_INTERIOR=1");
    const char* expect = getenv("STDCL_STRESS_EXPECT_COPY");
    if (expect && strcmp(expect, "1") == 0 && zero_copy) {
        print_error("copy mode was asked for (STDCL_ZERO_COPY=0), but g_cp is %s\n", why);
        fail();
    }
    worker_t* w = (worker_t*)calloc(g_threads, sizeof *w);
    pthread_t* t = (pthread_t*)calloc(g_threads, sizeof *t);
    assert_non_null(w);
    assert_non_null(t);
    catch_crashes();
    double t0 = now_s();
    for (unsigned i = 0; i < g_threads; i++) {
        w[i].id = i;
        w[i].rng = (g_seed + 0x9e3779b97f4a7c15ULL * (i + 1)) | 1;
        assert_int_equal(pthread_create(&t[i], NULL, worker, &w[i]), 0);
    }
    for (unsigned i = 0; i < g_threads; i++) assert_int_equal(pthread_join(t[i], NULL), 0);
    double took = now_s() - t0;
    long ops[NOPS] = {0}, calls = 0;
    int failures = 0;
    for (unsigned i = 0; i < g_threads; i++) {
        for (int k = 0; k < NOPS; k++) ops[k] += w[i].ops[k];
        calls += w[i].calls;
        failures += w[i].failures;
        if (w[i].failures) print_error("%s\n", w[i].first);
    }
    char line[1024];
    size_t len = 0;
    for (int k = 0; k < NOPS; k++)
        len += (size_t)snprintf(line + len, sizeof line - len, "%s%s %ld", k ? ", " : "", op_names[k], ops[k]);
    print_message("stress: %ld library calls in %.1f s: %s\n", calls, took, line);
    free(w);
    free(t);
    if (failures) print_error("stress: %d failure(s); seed %llu\n", failures, g_seed);
    assert_int_equal(failures, 0);
    /* Every kind of operation happened (a mix that skipped one proves nothing). */
    for (int k = 0; k < NOPS; k++) {
        if (k == OP_INTERIOR && g_no_interior) continue;
        if (ops[k] == 0) print_error("stress: no %s at all\n", op_names[k]);
        assert_true(ops[k] > 0);
    }
    /* The library is still usable, and every handle was closed: opening the
     * file again and closing it once more leaves nothing open. */
    void* h = clopen(g_cp, g_file, CLLD_NOW);
    if (!h) print_error("clopen after the run: %s\n", clerror());
    assert_non_null(h);
    assert_int_equal(clclose(g_cp, h), 0);
    assert_true(clclose(g_cp, h) < 0);
    assert_contains(clerror(), "not a handle open");
    assert_null(clerror());
}

static void test_stress_mixed_calls_verified(void** state)
{
    (void)state;
    run_mix();
}

/* The same mix in copy mode: a child process (this program, running the
 * test above) with STDCL_ZERO_COPY=0, so that libstdcl gives every device
 * buffers of its own that clmsync copies to and from, as on a GPU. */
static void test_stress_copy_mode_mixed_calls_verified(void** state)
{
    (void)state;
    char seed[64];
    snprintf(seed, sizeof seed, "STDCL_STRESS_SEED=%llu", g_seed);
    const char* env[] = {"STDCL_ZERO_COPY=0", seed, "STDCL_STRESS_EXPECT_COPY=1", NULL};
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    assert_true(n > 0);
    self[n] = '\0';
    const char* args[] = {"test_stress_mixed_calls_verified", NULL};
    tu_proc r;
    tu_spawn(&r, self, args, env, NULL, (int)g_seconds * 2 + 600);
    const char* line = strstr(r.out, "stress: ");
    /* CMocka prints its summary on stderr. */
    if (r.status != 0 || !tu_contains(r.out, "devices in copy mode") || !tu_contains(r.err, "[  PASSED  ] 1 test(s)"))
        tu_proc_dump(&r, "test_stress in copy mode");
    else if (line)
        print_message("copy mode, child process: %s", line);
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "devices in copy mode");
    assert_contains(r.err, "[  PASSED  ] 1 test(s)");
    tu_proc_free(&r);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_stress_mixed_calls_verified),
    cmocka_unit_test(test_stress_copy_mode_mixed_calls_verified),
};

int main(int argc, char** argv) { return tu_run_tests(argc, argv, "stress", tests, setup, NULL); }
