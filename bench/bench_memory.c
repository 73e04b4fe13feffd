/* SPDX-License-Identifier: MIT */
/* bench_memory.c: what a live clmalloc allocation costs in host memory, and
 * what stdcl_mem_base costs per lookup, each beside a baseline.
 *
 *   build/bench/bench_memory [-c cpu|gpu|dev] [-d devnum] [-p a|b|ab]
 *                            [-s size1,size2,...] [-n N] [-D] [-m M] [-r runs]
 *
 * (a) Host memory per live allocation (-s sizes, default 256,4K; -n N live
 *     allocations, default 100000), one line per (method, size):
 *       malloc       malloc(size), first byte written;
 *       raw OpenCL   clCreateBuffer(CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
 *                    size), mapped once (blocking clEnqueueMapBuffer, read and
 *                    write), first byte of the mapping written;
 *       clmalloc     clmalloc(cp, size, 0), first byte written;
 *       clmalloc+dev (with -D) the same, then clmsync(CL_MEM_DEVICE |
 *                    CL_EVENT_WAIT) to device -d, so that its device buffer
 *                    exists (device memory itself is not counted: a GPU's is
 *                    not in the process).
 *     Each (method, size) runs in a fresh process: the program runs itself
 *     again (/proc/self/exe) with the hidden option -Z method:size, since
 *     OpenCL after fork() is unsafe.  That process picks the context, makes
 *     and frees 16 allocations of the method (one-time setup is not counted),
 *     then reads its memory, makes the N allocations, and reads it again.
 *     The growth: RSS (Rss of /proc/self/smaps_rollup: every page touched,
 *     anonymous, file-backed and shared, where drivers map pinned memory),
 *     Anonymous (the same file: the anonymous part of RSS), VmData
 *     (/proc/self/status: private writable address space, charged to the
 *     kernel's commit limit whether touched or not) and, with glibc,
 *     mallinfo2() arena + hblkhd (what malloc holds from the system).  The
 *     figure: max(RSS growth, VmData growth) / N bytes per allocation, and
 *     its ratio to the size.
 * (b) Registry lookups (-m M live clmalloc allocations of 256 bytes, default
 *     1000000; -r runs, default 11): stdcl_mem_base of pre-generated interior
 *     pointers (every allocation once, in random order, each at a random
 *     offset inside it), against one read of a compact array of M uintptr_t
 *     at pre-generated random indices (a random permutation of 0..M-1: the
 *     same shape).  Both loops read their list in order and sum the results;
 *     no address depends on an earlier result, so in both loops the CPU may
 *     overlap the misses of successive iterations (throughput, not latency).
 *     A run is enough passes over the list for at least 1000000 lookups; the
 *     two loops alternate (array first in even runs).  The time per lookup is
 *     the median over runs; the ratio the median of per-run ratios, the
 *     25th-75th percentile beside it.  Every pass's sum is checked.  The
 *     default M holds about 8 GB of host memory (a 256-byte clmalloc took
 *     about 8.4 KB in (a) on glibc: a page, and the fragment an aligned
 *     allocation leaves); -m 100000 for a short run.
 *
 * Context: -c dev (stddev, the default), cpu (stdcpu) or gpu (stdgpu); -d its
 * device.  The raw side uses that context's cl_context and device queue.
 * Exit status: 0 when every measurement ran, 1 when one failed, 2 for bad
 * options.
 */
#define _GNU_SOURCE
#include <stdcl.h>

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_info.h"
#include "bench_stats.h"

#define PROG "bench_memory"
#define MAXSIZES 8
#define LOOKUP_SIZE 256u /* bytes per allocation of part (b) */
#define LOOKUPS_PER_RUN 1000000L /* at least this many lookups per timed run */
#define WARMUP_ALLOCS 16

static struct {
    const char* ctxname;
    unsigned devnum;
    int part_a, part_b;
    size_t sizes[MAXSIZES];
    int nsizes;
    long n; /* (a): live allocations per method */
    int device_use; /* (a): the clmalloc+dev method too */
    long m; /* (b): live allocations */
    int runs; /* (b) */
    const char* child; /* -Z method:size: measure one method here */
} opt = {"dev", 0, 1, 1, {256, 4096}, 2, 100000, 0, 1000000, 11, NULL};

static CLCONTEXT* cp;
static cl_context ctx;
static cl_command_queue q;

static void usage(FILE* f)
{
    fprintf(f,
            "usage: %s [-c cpu|gpu|dev] [-d devnum] [-p a|b|ab] [-s size1,size2,...] [-n N] [-D] [-m M] [-r runs]\n"
            "  -c  context: stddev (default), stdcpu or stdgpu\n"
            "  -d  device number in that context (default 0)\n"
            "  -p  parts to run: a (host memory per allocation), b (lookups), ab (default)\n"
            "  -s  (a) allocation sizes in bytes, K and M suffixes allowed (default 256,4K)\n"
            "  -n  (a) live allocations per method and size (default 100000)\n"
            "  -D  (a) also clmalloc with each allocation synced to the device once\n"
            "  -m  (b) live 256-byte clmalloc allocations (default 1000000)\n"
            "  -r  (b) timed runs of each loop (default 11)\n",
            PROG);
}

static void die(const char* what) { bench_die(PROG, what); }

static void check_cl(cl_int err, const char* what)
{
    if (err != CL_SUCCESS) {
        fprintf(stderr, PROG ": %s failed: OpenCL error %d\n", what, (int)err);
        exit(1);
    }
}

static void* xmalloc(size_t n, const char* what)
{
    void* p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, PROG ": out of memory for %s (%zu bytes)\n", what, n);
        exit(1);
    }
    return p;
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* xorshift64*: deterministic, so every run draws the same pointers. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

/* ------------------------------------------------------------------------ */
/* Options                                                                   */
/* ------------------------------------------------------------------------ */

static long parse_long(const char* s, const char* what)
{
    char* end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0) {
        fprintf(stderr, PROG ": bad %s '%s'\n", what, s);
        exit(2);
    }
    return v;
}

/* A size: a positive number of bytes, optionally followed by K or M (1024s). */
static size_t parse_size(const char* s)
{
    char* end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned long long mul = 1;
    if (*end == 'K' || *end == 'k')
        mul = 1024, ++end;
    else if (*end == 'M' || *end == 'm')
        mul = 1024 * 1024, ++end;
    if (errno || end == s || *end || v == 0 || s[0] == '-' || v > (1ull << 40) / mul) {
        fprintf(stderr, PROG ": bad size '%s' (bytes, or a number with K or M)\n", s);
        exit(2);
    }
    return (size_t)(v * mul);
}

static void parse_args(int argc, char** argv)
{
    int c;
    while ((c = getopt(argc, argv, "c:d:p:s:n:Dm:r:Z:h")) != -1) {
        switch (c) {
        case 'c': opt.ctxname = optarg; break;
        case 'd': opt.devnum = (unsigned)parse_long(optarg, "device number"); break;
        case 'p':
            opt.part_a = strchr(optarg, 'a') != NULL;
            opt.part_b = strchr(optarg, 'b') != NULL;
            if ((!opt.part_a && !opt.part_b) || strspn(optarg, "ab") != strlen(optarg)) {
                fprintf(stderr, PROG ": bad part list '%s' (a, b or ab)\n", optarg);
                exit(2);
            }
            break;
        case 's': {
            char buf[256];
            snprintf(buf, sizeof buf, "%s", optarg);
            opt.nsizes = 0;
            for (char* t = strtok(buf, ","); t; t = strtok(NULL, ",")) {
                if (opt.nsizes == MAXSIZES) {
                    fprintf(stderr, PROG ": at most %d sizes in -s\n", MAXSIZES);
                    exit(2);
                }
                opt.sizes[opt.nsizes++] = parse_size(t);
            }
            if (opt.nsizes == 0) {
                usage(stderr);
                exit(2);
            }
            break;
        }
        case 'n': opt.n = parse_long(optarg, "allocation count (-n)"); break;
        case 'D': opt.device_use = 1; break;
        case 'm': opt.m = parse_long(optarg, "allocation count (-m)"); break;
        case 'r': opt.runs = (int)parse_long(optarg, "run count"); break;
        case 'Z': opt.child = optarg; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); exit(2);
        }
    }
    if (optind < argc) {
        fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        exit(2);
    }
    if (opt.n < 1 || opt.m < 1 || opt.runs < 1) {
        fprintf(stderr, PROG ": -n, -m and -r must be at least 1\n");
        exit(2);
    }
}

static void pick_context(void)
{
    const char* name = opt.ctxname;
    if (strcmp(name, "cpu") == 0)
        cp = stdcpu;
    else if (strcmp(name, "gpu") == 0)
        cp = stdgpu;
    else if (strcmp(name, "dev") == 0)
        cp = stddev;
    else {
        fprintf(stderr, PROG ": bad context '%s' (cpu, gpu or dev)\n", name);
        exit(2);
    }
    if (!cp) {
        const char* e = clerror();
        fprintf(stderr, PROG ": no std%s context on this machine%s%s (try -c cpu|gpu|dev)\n", name, e ? ": " : "",
                e ? e : "");
        exit(1);
    }
    if (opt.devnum >= clgetndev(cp)) {
        fprintf(stderr, PROG ": std%s has %u device(s); -d %u is out of range\n", name, clgetndev(cp), opt.devnum);
        exit(1);
    }
    ctx = stdcl_clcontext(cp);
    /* The raw side's queue is its own, as a raw program's is: taking the kernel
     * queue (stdcl_queue) would move libstdcl's transfers onto it. */
    cl_int err = CL_SUCCESS;
    cl_device_id dev = stdcl_device(cp, opt.devnum);
    q = ctx && dev ? clCreateCommandQueue(ctx, dev, 0, &err) : NULL;
    if (!ctx || !q) die("stdcl_clcontext/clCreateCommandQueue");
}

/* ------------------------------------------------------------------------ */
/* (a) Host memory per allocation: the child process                         */
/* ------------------------------------------------------------------------ */

enum { M_MALLOC, M_RAW, M_CLMALLOC, M_CLMALLOC_DEV, M_COUNT };
static const char* method_key[M_COUNT] = {"malloc", "raw", "clmalloc", "clmalloc-dev"};
static const char* method_desc[M_COUNT] = {
    "malloc, first byte written",
    "clCreateBuffer(ALLOC_HOST_PTR)+map, 1st byte",
    "clmalloc, first byte written",
    "clmalloc + clmsync(DEVICE), first byte",
};

typedef struct {
    long long rss, anon, vmdata, heap; /* bytes; heap: -1 without mallinfo2 */
} MemSnap;

/* The value in kB of the line "key:  <n> kB" of a /proc file, in bytes; -1
 * when the file or the line is missing. */
static long long proc_kb(const char* path, const char* key)
{
    FILE* f = fopen(path, "r");
    if (!f) return -1;
    char line[256];
    size_t kl = strlen(key);
    long long v = -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
            v = strtoll(line + kl + 1, NULL, 10) * 1024;
            break;
        }
    fclose(f);
    return v;
}

static void snap(MemSnap* s)
{
    /* smaps_rollup (Linux 4.14) walks the page tables: exact.  VmRSS and
     * RssAnon of status can lag by a few pages per thread. */
    s->rss = proc_kb("/proc/self/smaps_rollup", "Rss");
    s->anon = proc_kb("/proc/self/smaps_rollup", "Anonymous");
    if (s->rss < 0) s->rss = proc_kb("/proc/self/status", "VmRSS");
    if (s->anon < 0) s->anon = proc_kb("/proc/self/status", "RssAnon");
    s->vmdata = proc_kb("/proc/self/status", "VmData");
    if (s->rss < 0 || s->vmdata < 0) {
        fprintf(stderr, PROG ": cannot read Rss/VmData from /proc/self (smaps_rollup, status)\n");
        exit(1);
    }
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 mi = mallinfo2();
    s->heap = (long long)(mi.arena + mi.hblkhd);
#else
    s->heap = -1;
#endif
}

static void** ptrs; /* the live allocations (host pointers) */
static cl_mem* mems; /* raw: their buffers */

/* Makes allocation i of `size` bytes with method m and writes its first byte. */
static void make_one(int m, long i, size_t size)
{
    cl_int err = CL_SUCCESS;
    char* p = NULL;
    switch (m) {
    case M_MALLOC:
        p = malloc(size);
        if (!p) {
            fprintf(stderr, PROG ": malloc(%zu) failed at allocation %ld\n", size, i);
            exit(1);
        }
        break;
    case M_RAW:
        mems[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, size, NULL, &err);
        if (err != CL_SUCCESS) {
            fprintf(stderr,
                    PROG ": clCreateBuffer(CL_MEM_ALLOC_HOST_PTR, %zu) failed at allocation %ld: OpenCL error %d\n",
                    size, i, (int)err);
            exit(1);
        }
        p = clEnqueueMapBuffer(q, mems[i], CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, size, 0, NULL, NULL, &err);
        if (err != CL_SUCCESS || !p) {
            fprintf(stderr, PROG ": clEnqueueMapBuffer(%zu bytes) failed at allocation %ld: OpenCL error %d\n", size, i,
                    (int)err);
            exit(1);
        }
        break;
    case M_CLMALLOC:
    case M_CLMALLOC_DEV:
        p = clmalloc(cp, size, 0);
        if (!p) {
            char what[96];
            snprintf(what, sizeof what, "clmalloc(%zu) at allocation %ld", size, i);
            die(what);
        }
        break;
    }
    *(volatile char*)p = (char)i;
    if (m == M_CLMALLOC_DEV && !clmsync(cp, opt.devnum, p, CL_MEM_DEVICE | CL_EVENT_WAIT)) {
        char what[96];
        snprintf(what, sizeof what, "clmsync(CL_MEM_DEVICE) of allocation %ld", i);
        die(what);
    }
    ptrs[i] = p;
}

/* Frees allocations 0..n-1 of method m. */
static void free_all(int m, long n)
{
    if (m == M_RAW) {
        for (long i = 0; i < n; ++i)
            check_cl(clEnqueueUnmapMemObject(q, mems[i], ptrs[i], 0, NULL, NULL), "clEnqueueUnmapMemObject");
        check_cl(clFinish(q), "clFinish");
        for (long i = 0; i < n; ++i) check_cl(clReleaseMemObject(mems[i]), "clReleaseMemObject");
        return;
    }
    for (long i = 0; i < n; ++i) {
        if (m == M_MALLOC)
            free(ptrs[i]);
        else if (clfree(ptrs[i]) != 0)
            die("clfree");
    }
}

/* -Z method:size: makes opt.n allocations and prints one line, "result" and
 * the growths in bytes (RSS, anonymous, VmData, malloc heap) and the time. */
static int child_main(void)
{
    char key[32];
    const char* colon = strchr(opt.child, ':');
    if (!colon || (size_t)(colon - opt.child) >= sizeof key) {
        fprintf(stderr, PROG ": bad -Z '%s'\n", opt.child);
        return 2;
    }
    snprintf(key, sizeof key, "%.*s", (int)(colon - opt.child), opt.child);
    int m = -1;
    for (int k = 0; k < M_COUNT; ++k)
        if (strcmp(key, method_key[k]) == 0) m = k;
    if (m < 0) {
        fprintf(stderr, PROG ": unknown method '%s' in -Z\n", key);
        return 2;
    }
    size_t size = parse_size(colon + 1);
    long n = opt.n;
    pick_context();

    /* The bookkeeping arrays, touched, before the first reading. */
    ptrs = xmalloc((size_t)n * sizeof *ptrs, "the pointer table");
    memset(ptrs, 0, (size_t)n * sizeof *ptrs);
    if (m == M_RAW) {
        mems = xmalloc((size_t)n * sizeof *mems, "the buffer table");
        memset(mems, 0, (size_t)n * sizeof *mems);
    }
    /* One-time setup (the first buffer, the first map, lazy driver state)
     * happens here, outside the measurement. */
    long w = n < WARMUP_ALLOCS ? n : WARMUP_ALLOCS;
    for (long i = 0; i < w; ++i) make_one(m, i, size);
    free_all(m, w);

    MemSnap before, after;
    snap(&before);
    double t0 = now_ns();
    for (long i = 0; i < n; ++i) make_one(m, i, size);
    double t1 = now_ns();
    snap(&after);

    printf("result %lld %lld %lld %lld %.0f\n", after.rss - before.rss, after.anon - before.anon,
           after.vmdata - before.vmdata, before.heap < 0 ? -1 : after.heap - before.heap, t1 - t0);
    fflush(stdout);
    free_all(m, n);
    free(mems);
    free(ptrs);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* (a) The parent: one child per (method, size)                               */
/* ------------------------------------------------------------------------ */

typedef struct {
    int ok;
    long long rss, anon, vmdata, heap;
    double ns;
} ChildResult;

/* Runs this program again with -Z key:size; its stdout comes through a pipe,
 * its stderr goes where ours goes. */
static ChildResult run_child(int m, size_t size)
{
    ChildResult r;
    memset(&r, 0, sizeof r);
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) {
        fprintf(stderr, PROG ": readlink(/proc/self/exe) failed: %s\n", strerror(errno));
        exit(1);
    }
    exe[len] = 0;
    char dev[32], n[32], z[64];
    snprintf(dev, sizeof dev, "%u", opt.devnum);
    snprintf(n, sizeof n, "%ld", opt.n);
    snprintf(z, sizeof z, "%s:%zu", method_key[m], size);
    char* argv[] = {exe, "-c", (char*)opt.ctxname, "-d", dev, "-n", n, "-Z", z, NULL};

    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) {
        fprintf(stderr, PROG ": pipe2 failed: %s\n", strerror(errno));
        exit(1);
    }
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0 || posix_spawn_file_actions_adddup2(&fa, fds[1], 1) != 0) {
        fprintf(stderr, PROG ": posix_spawn_file_actions failed\n");
        exit(1);
    }
    fflush(stdout);
    pid_t pid;
    int err = posix_spawn(&pid, exe, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (err != 0) {
        fprintf(stderr, PROG ": posix_spawn(%s) failed: %s\n", exe, strerror(err));
        close(fds[0]);
        return r;
    }
    char out[1024];
    size_t got = 0;
    for (;;) {
        ssize_t k = read(fds[0], out + got, sizeof out - 1 - got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
        if (got == sizeof out - 1) break;
    }
    out[got] = 0;
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            fprintf(stderr, PROG ": waitpid failed: %s\n", strerror(errno));
            return r;
        }
    const char* line = strstr(out, "result ");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !line ||
        sscanf(line, "result %lld %lld %lld %lld %lf", &r.rss, &r.anon, &r.vmdata, &r.heap, &r.ns) != 5) {
        if (WIFSIGNALED(status))
            fprintf(stderr, PROG ": the %s measurement of %zu bytes died of signal %d\n", method_key[m], size,
                    WTERMSIG(status));
        else
            fprintf(stderr, PROG ": the %s measurement of %zu bytes failed (exit status %d%s)\n", method_key[m], size,
                    WIFEXITED(status) ? WEXITSTATUS(status) : -1, line ? "" : ", no result line");
        fprintf(stderr, PROG ": alone: %s -c %s -d %s -n %s -Z %s\n", exe, opt.ctxname, dev, n, z);
        return r;
    }
    r.ok = 1;
    return r;
}

static int part_a(void)
{
    int failed = 0;
    double n = (double)opt.n;
    printf("\n(a) host memory per live allocation: %ld allocations per line, each line in a fresh process\n", opt.n);
    printf("    bytes/alloc = max(RSS growth, VmData growth) / N; ratio = bytes/alloc / size\n");
    printf("    RSS, anon: Rss and Anonymous of /proc/self/smaps_rollup; VmData: /proc/self/status; "
           "malloc: mallinfo2() arena + hblkhd\n\n");
    printf("%-44s %8s %12s %8s %10s %10s %10s %10s %9s\n", "method", "size", "bytes/alloc", "ratio", "RSS", "anon",
           "VmData", "malloc", "us/alloc");
    for (int i = 0; i < 44 + 8 + 12 + 8 + 10 * 4 + 9 + 8; ++i) putchar('-');
    putchar('\n');
    fflush(stdout);
    for (int s = 0; s < opt.nsizes; ++s) {
        size_t size = opt.sizes[s];
        for (int m = 0; m < M_COUNT; ++m) {
            if (m == M_CLMALLOC_DEV && !opt.device_use) continue;
            fprintf(stderr, "  (a) %s, %zu bytes x %ld ...\n", method_key[m], size, opt.n);
            ChildResult r = run_child(m, size);
            if (!r.ok) {
                printf("%-44s %8zu %12s\n", method_desc[m], size, "FAILED");
                failed = 1;
                continue;
            }
            double per = (double)(r.rss > r.vmdata ? r.rss : r.vmdata) / n;
            char heap[32];
            if (r.heap < 0)
                snprintf(heap, sizeof heap, "-");
            else
                snprintf(heap, sizeof heap, "%.0f", (double)r.heap / n);
            printf("%-44s %8zu %12.0f %7.2fx %10.0f %10.0f %10.0f %10s %9.2f\n", method_desc[m], size, per,
                   per / (double)size, (double)r.rss / n, (double)r.anon / n, (double)r.vmdata / n, heap,
                   r.ns / n / 1e3);
            fflush(stdout);
        }
    }
    return failed;
}

/* ------------------------------------------------------------------------ */
/* (b) Lookups                                                               */
/* ------------------------------------------------------------------------ */

static const char** lp; /* the interior pointers, in lookup order */
static uintptr_t* arr; /* the compact array */
static uint32_t* idx; /* its indices, in read order */
static uint32_t* chain; /* chain[k]: the next index, one random cycle through all */
static uintptr_t lp_sum, arr_sum, chain_sum; /* the sums a pass must give */

/* No dependency chain: each pointer comes from the list, each result is only
 * added up (base + offset = the pointer itself, which the sum checks). */
static uintptr_t pass_lookup(long m)
{
    uintptr_t s = 0;
    for (long i = 0; i < m; ++i) {
        size_t off = 0;
        const char* b = stdcl_mem_base(lp[i], &off);
        s += (uintptr_t)b + off;
    }
    return s;
}

/* The same shape: the index from the list, the read's value added up. */
static uintptr_t pass_array(long m)
{
    uintptr_t s = 0;
    for (long i = 0; i < m; ++i) s += arr[idx[i]];
    return s;
}

/* Dependent: the next pointer is read only once this lookup's result is known
 * (b is never NULL here, so i advances by one), so lookups do not overlap: each
 * costs its full latency, misses included. */
static uintptr_t pass_lookup_dep(long m)
{
    uintptr_t s = 0;
    for (long i = 0; i < m;) {
        size_t off = 0;
        const char* b = stdcl_mem_base(lp[i], &off);
        s += (uintptr_t)b + off;
        i += 1 + (b == NULL);
    }
    return s;
}

/* The same shape: each read's address is the read before's value. */
static uintptr_t pass_chain(long m)
{
    uintptr_t s = 0;
    uint32_t k = chain[0];
    for (long i = 0; i < m; ++i) {
        s += k;
        k = chain[k];
    }
    return s;
}

static void shuffle(uint32_t* v, long m)
{
    for (long i = 0; i < m; ++i) v[i] = (uint32_t)i;
    for (long i = m - 1; i > 0; --i) {
        long j = (long)(rng() % (uint64_t)(i + 1));
        uint32_t t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

/* Times `passes` passes of f, checking each sum; ns per lookup. */
static long bad_sums;
static double time_passes(uintptr_t (*f)(long), long m, long passes, uintptr_t want)
{
    double t0 = now_ns();
    for (long p = 0; p < passes; ++p)
        if (f(m) != want) ++bad_sums;
    return (now_ns() - t0) / ((double)m * (double)passes);
}

/* Times one way of looking up against its baseline and prints three rows. */
static void lookup_rows(const char* how, uintptr_t (*lookup)(long), uintptr_t (*base)(long), uintptr_t base_sum,
                        const char* base_name, long m, long passes)
{
    int R = opt.runs;
    double* tl = xmalloc((size_t)R * sizeof *tl, "timings");
    double* ta = xmalloc((size_t)R * sizeof *ta, "timings");
    double* rr = xmalloc((size_t)R * sizeof *rr, "timings");
    time_passes(base, m, passes, base_sum); /* warm-up: caches, TLB, page faults */
    time_passes(lookup, m, passes, lp_sum);
    for (int r = 0; r < R; ++r) {
        if ((r & 1) == 0) ta[r] = time_passes(base, m, passes, base_sum);
        tl[r] = time_passes(lookup, m, passes, lp_sum);
        if ((r & 1) == 1) ta[r] = time_passes(base, m, passes, base_sum);
        rr[r] = tl[r] / ta[r];
    }
    double ml = bench_median(tl, R), ma = bench_median(ta, R);
    double r50 = bench_median(rr, R), r25 = bench_quantile(rr, R, 0.25), r75 = bench_quantile(rr, R, 0.75);
    printf("%s\n", how);
    printf("  %-56s %10.2f\n", "stdcl_mem_base(random interior pointer, &off)", ml);
    printf("  %-56s %10.2f\n", base_name, ma);
    printf("  %-56s %9.2fx [p25-p75 %.2f-%.2f]\n", "ratio stdcl_mem_base / baseline (median of per-run ratios)", r50,
           r25, r75);
    free(tl);
    free(ta);
    free(rr);
}

static int part_b(void)
{
    long m = opt.m;
    if (m > (long)UINT32_MAX) {
        fprintf(stderr, PROG ": -m %ld is too large\n", m);
        exit(2);
    }
    printf("\n(b) stdcl_mem_base of random interior pointers among %ld live clmalloc allocations of %u bytes\n", m,
           LOOKUP_SIZE);
    fflush(stdout);
    fprintf(stderr, "  (b) %ld clmalloc(%u) ...\n", m, LOOKUP_SIZE);
    char** live = xmalloc((size_t)m * sizeof *live, "the allocation table");
    for (long i = 0; i < m; ++i) {
        live[i] = clmalloc(cp, LOOKUP_SIZE, 0);
        if (!live[i]) {
            char what[64];
            snprintf(what, sizeof what, "clmalloc(%u) at allocation %ld", LOOKUP_SIZE, i);
            die(what);
        }
    }
    /* Every allocation once, in random order, each at a random offset. */
    uint32_t* order = xmalloc((size_t)m * sizeof *order, "the lookup order");
    lp = xmalloc((size_t)m * sizeof *lp, "the pointer list");
    size_t* want_off = xmalloc((size_t)m * sizeof *want_off, "the offset list");
    shuffle(order, m);
    lp_sum = 0;
    for (long i = 0; i < m; ++i) {
        want_off[i] = (size_t)(rng() % LOOKUP_SIZE);
        lp[i] = live[order[i]] + want_off[i];
        lp_sum += (uintptr_t)lp[i];
    }
    /* The baseline: M words read at a random permutation of 0..M-1. */
    arr = xmalloc((size_t)m * sizeof *arr, "the compact array");
    idx = xmalloc((size_t)m * sizeof *idx, "the index list");
    for (long i = 0; i < m; ++i) arr[i] = (uintptr_t)rng();
    shuffle(idx, m);
    arr_sum = 0;
    for (long i = 0; i < m; ++i) arr_sum += arr[idx[i]];
    chain = xmalloc((size_t)m * sizeof *chain, "the chain");
    for (long i = 0; i < m; ++i) chain[idx[i]] = idx[(i + 1) % m];
    chain_sum = 0;
    for (long i = 0, k = chain[0]; i < m; ++i, k = chain[k]) chain_sum += (uintptr_t)k;

    /* Every lookup checked once, untimed. */
    for (long i = 0; i < m; ++i) {
        size_t off = (size_t)-1;
        void* b = stdcl_mem_base(lp[i], &off);
        if (b != live[order[i]] || off != want_off[i]) {
            fprintf(stderr, PROG ": stdcl_mem_base(%p) gave %p, offset %zu; expected %p, offset %zu%s%s\n",
                    (const void*)lp[i], b, off, (void*)live[order[i]], want_off[i], clerror() ? ": " : "",
                    clerror() ? clerror() : "");
            exit(1);
        }
    }
    free(want_off);

    long passes = (LOOKUPS_PER_RUN + m - 1) / m;
    fprintf(stderr, "  (b) %d runs of %ld pass(es) over %ld pointers, each way ...\n", opt.runs, passes, m);
    printf("    %d runs, loops alternating, each run %ld pass(es) = %ld lookups; median ns per lookup;\n"
           "    every pass's sum is checked\n",
           opt.runs, passes, passes * m);
    printf("\n%-58s %10s\n", "operation", "ns/lookup");
    for (int i = 0; i < 58 + 11; ++i) putchar('-');
    putchar('\n');
    lookup_rows("independent: addresses from a list, results only summed (misses may overlap)", pass_lookup,
                pass_array, arr_sum, "baseline: arr[idx[i]], M uintptr_t, random permutation", m, passes);
    lookup_rows("dependent: each lookup waits for the one before (full latency)", pass_lookup_dep, pass_chain,
                chain_sum, "baseline: k = chain[k], M uint32_t, one random cycle", m, passes);

    for (long i = 0; i < m; ++i)
        if (clfree(live[i]) != 0) die("clfree");
    free(live);
    free(order);
    free(lp);
    free(arr);
    free(idx);
    free(chain);
    if (bad_sums) {
        fprintf(stderr, PROG ": %ld timed pass(es) gave a wrong sum (a lookup failed; last message: %s)\n", bad_sums,
                clerror() ? clerror() : "none");
        return 1;
    }
    return 0;
}

int main(int argc, char** argv)
{
    parse_args(argc, argv);
    if (opt.child) return child_main();
    pick_context();

    bench_print_machine(PROG);
    bench_print_command(argc, argv);
    char label[16];
    snprintf(label, sizeof label, "std%s:", opt.ctxname);
    bench_print_context(label, cp);
    printf("device:   %u (-d; the raw buffers' queue, and clmsync of -D)\n", opt.devnum);
    fflush(stdout);

    int failed = 0;
    if (opt.part_a) failed |= part_a();
    if (opt.part_b) failed |= part_b();
    printf("\nload at end: %s\n", bench_loadavg());
    return failed ? 1 : 0;
}
