/* SPDX-License-Identifier: MIT */
/* bench_core.c: what libstdcl's core calls cost beside the same work done with raw
 * OpenCL in the same run, on the same context, queue and device.
 *
 *   build/bench/bench_core [-c cpu|gpu|dev] [-d devnum] [-r reps] [-b batches]
 *                          [-t ms] [-n n1,n2,...] [-T threads]
 *
 * Rows: (1) clfork + clwait round trip of an empty kernel, (2) clmsync of 1 MiB
 * each way, (3) clmalloc + clfree of 4 KiB, alone and with the first clmsync
 * that creates the device buffer, (4) the registry lookup of random base and
 * interior pointers among each count of live allocations in -n (default
 * 1000,10000,100000,1000000), (5) lookups from -T threads at once (default 16)
 * against one thread, (6) clarg_set_global of a repeated interior pointer
 * against clSetKernelArg, (7) clmsync of 64 MiB each way in GB/s against raw
 * transfers from pageable and from pinned (CL_MEM_ALLOC_HOST_PTR) memory.
 * Run it with STDCL_ZERO_COPY=0 on PoCL to time the copy path a GPU takes.
 *
 * Method: every operation is warmed up, then timed in `batches` batches of
 * `reps` repetitions each; the raw and the libstdcl batches alternate (raw
 * first in even batches, libstdcl first in odd ones) so that drift hits both.
 * A time is the median over the batches of (batch time / reps); the ratio is
 * the median of the per-batch ratios libstdcl/raw, with the 25th-75th
 * percentile range beside it.  Without -r, reps is chosen per operation so
 * that one batch of the slower side lasts about -t milliseconds (default 10).
 *
 * Exit status: 0 when it ran (PASS or MISS alike), 1 when a call failed.
 */
#define _GNU_SOURCE
#include <stdcl.h>

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench_info.h"
#include "bench_stats.h"

/* ------------------------------------------------------------------------ */
/* Options and state                                                         */
/* ------------------------------------------------------------------------ */

static struct {
    const char* ctxname; /* "cpu", "gpu", "dev" or NULL (stdgpu, else stdcpu) */
    unsigned devnum;
    long reps; /* 0: calibrate per operation */
    int batches;
    double batch_ms;
    long nalloc; /* the largest of nallocs */
    long nallocs[8];
    int nn;
    int threads;
    int streams_only;
} opt = {NULL, 0, 0, 31, 10.0, 1000000, {1000, 10000, 100000, 1000000}, 4, 16, 0};

static CLCONTEXT* cp;
static unsigned dn;
static cl_context ctx;
static cl_device_id dev;
static cl_command_queue q;

static cl_kernel wk_empty, wk_glob, wk_six; /* libstdcl's kernels (clsopen/clsym) */
static cl_program raw_prog; /* the same source, built with raw OpenCL */
static cl_kernel rk_empty, rk_glob, rk_set, rk_six;

#define MIB (1024u * 1024u)
#define SMALL 4096u

static char* w_big; /* clmalloc'd 1 MiB */
static char* r_host; /* page-aligned host 1 MiB */
static cl_mem r_buf; /* raw device buffer, 1 MiB */
static cl_mem r_buf_small; /* raw 4 KiB buffer for the global-arg kernel */
static char* w_small; /* clmalloc'd 4 KiB for the global-arg kernel */
static int zero_copy; /* libstdcl works on host memory (copy elided) */

static void** live; /* the nalloc live allocations */
#define NPTR (1u << 20)
static void** bases; /* random base pointers among live ones */
static void** inner; /* random interior pointers */
static void** inner_al; /* the same, rounded down to stdcl_mem_align: kernel arguments */
#define NRAWSET 64
static cl_mem rawset[NRAWSET];

static long failures;
static long nlive; /* live allocations now in the registry */

/* (6): one interior pointer, set again and again; raw: one cl_mem. */
static char* w_mid; /* clmalloc'd 1 MiB */
static char* w_mid_inner;
/* (7): 64 MiB each way. */
#define BIGX (64u * MIB)
static char* w_xfer; /* clmalloc'd 64 MiB */
static char* r_xfer_pageable; /* posix_memalign'd 64 MiB */
static cl_mem r_xfer_dev; /* device buffer 64 MiB */
static cl_mem r_xfer_pin; /* CL_MEM_ALLOC_HOST_PTR 64 MiB, mapped at r_xfer_pinned */
static char* r_xfer_pinned;

/* "empty" has one (unused) scalar argument: NVIDIA's OpenCL compiler (driver
 * 580) fails with a ptxas syntax error on any kernel without parameters when
 * built with -cl-kernel-arg-info, which libstdcl passes. */
static const char* kernel_src = "__kernel void empty(int unused) { }\n"
                                "__kernel void glob(__global int* p) { }\n"
                                "__kernel void six(__global float* a, __global float* b, float s, int n,\n"
                                "                  uint m, float t) { }\n";

static void die(const char* what) { bench_die("bench_core", what); }

static void check(cl_int err, const char* what)
{
    if (err != CL_SUCCESS) {
        fprintf(stderr, "bench_core: %s failed: OpenCL error %d\n", what, (int)err);
        exit(1);
    }
}

/* Counted in the timed loops, reported once (a check per call costs ~1 ns). */
#define OK(cond)                                                                                                       \
    do {                                                                                                               \
        if (!(cond)) ++failures;                                                                                       \
    } while (0)

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* xorshift64*: deterministic, so every run looks up the same pointers. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545F4914F6CDD1Dull;
}

/* ------------------------------------------------------------------------ */
/* The operations: each runs n repetitions                                   */
/* ------------------------------------------------------------------------ */

static const size_t g1[1] = {1}, l1[1] = {1};

/* The raw "enqueue, then wait": err is the enqueue's status, ev its event,
 * waited for and released. */
static void raw_wait(cl_int err, cl_event ev)
{
    OK(err == CL_SUCCESS);
    OK(clWaitForEvents(1, &ev) == CL_SUCCESS);
    clReleaseEvent(ev);
}

/* (1) Kernel round trip. */
static void raw_roundtrip(long n, cl_kernel k)
{
    for (long i = 0; i < n; ++i) {
        cl_event ev = NULL;
        cl_int err = clEnqueueNDRangeKernel(q, k, 1, NULL, g1, l1, 0, NULL, &ev);
        raw_wait(err, ev);
    }
}
static void raw_fork_empty(long n) { raw_roundtrip(n, rk_empty); }
static void raw_fork_glob(long n) { raw_roundtrip(n, rk_glob); }

static void w_roundtrip(long n, cl_kernel k)
{
    clndrange_t ndr = clndrange_init1d(0, 1, 1);
    for (long i = 0; i < n; ++i) {
        OK(clfork(cp, dn, k, &ndr, CL_EVENT_NOWAIT) != NULL);
        OK(stdcl_wait(cp, dn, CL_KERNEL_EVENT) == 0);
    }
}
static void w_fork_empty(long n) { w_roundtrip(n, wk_empty); }
static void w_fork_glob(long n) { w_roundtrip(n, wk_glob); }
static void w_fork_empty_wait(long n)
{
    clndrange_t ndr = clndrange_init1d(0, 1, 1);
    for (long i = 0; i < n; ++i) OK(clfork(cp, dn, wk_empty, &ndr, CL_EVENT_WAIT) != NULL);
}

/* The stream kernel's scalars that do not change (the fourth, k, does), for
 * the raw streams and the clforka ones alike. */
static const float k_stream_s = 1.5f, k_stream_t = 0.5f;
static const cl_uint k_stream_m = 7;
/* The five arguments of the stream kernel that do not change (all but k). */
static void raw_stream_fixed_args(void)
{
    OK(clSetKernelArg(rk_six, 0, sizeof r_buf_small, &r_buf_small) == CL_SUCCESS);
    OK(clSetKernelArg(rk_six, 1, sizeof r_buf, &r_buf) == CL_SUCCESS);
    OK(clSetKernelArg(rk_six, 2, sizeof k_stream_s, &k_stream_s) == CL_SUCCESS);
    OK(clSetKernelArg(rk_six, 4, sizeof k_stream_m, &k_stream_m) == CL_SUCCESS);
    OK(clSetKernelArg(rk_six, 5, sizeof k_stream_t, &k_stream_t) == CL_SUCCESS);
}
/* (1s) A launch stream: n launches of a kernel of six arguments (two
 * buffers, four scalars), every argument set at each launch, enqueued back to
 * back, then one wait.  Raw: clSetKernelArg six times and
 * clEnqueueNDRangeKernel with no event, then clFinish.  (1s') The raw stream
 * with what libstdcl's NOWAIT launch adds to it: an event per launch
 * (released at once), a clFlush per launch, or both. */
/* One raw launch of the six-argument kernel as a program written against
 * OpenCL makes it: every argument set, k the one that changes; its event
 * (when asked for) released at once. */
static void raw_launch_six(int k, int event)
{
    raw_stream_fixed_args();
    OK(clSetKernelArg(rk_six, 3, sizeof k, &k) == CL_SUCCESS);
    cl_event ev = NULL;
    OK(clEnqueueNDRangeKernel(q, rk_six, 1, NULL, g1, l1, 0, NULL, event ? &ev : NULL) == CL_SUCCESS);
    if (ev) clReleaseEvent(ev);
}
static void raw_stream_with(long n, int event, int flush)
{
    for (long i = 0; i < n; ++i) {
        raw_launch_six((int)i, event);
        if (flush) clFlush(q);
    }
    OK(clFinish(q) == CL_SUCCESS);
}
/* (1s#) The lean raw stream: the arguments that do not change set once, before
 * the loop, and only the one that changes (k) set at each launch, as a program
 * written against OpenCL does (PolyBench's convolution-3d). */
static void raw_stream_lean(long n)
{
    raw_stream_fixed_args();
    for (long i = 0; i < n; ++i) {
        int k = (int)i;
        OK(clSetKernelArg(rk_six, 3, sizeof k, &k) == CL_SUCCESS);
        OK(clEnqueueNDRangeKernel(q, rk_six, 1, NULL, g1, l1, 0, NULL, NULL) == CL_SUCCESS);
    }
    OK(clFinish(q) == CL_SUCCESS);
}
/* (1s+) The raw stream with an event per launch that the program keeps until
 * the stream's wait, as a program that waits for its launches' events does:
 * the events are waited for together (clWaitForEvents) and released once
 * completed.  A NOWAIT launch's event must stay valid until clwait, so this,
 * not an event released at once, is what the event libstdcl returns costs the
 * driver. */
static void raw_launch_six_kept(int k, cl_event* ev)
{
    raw_stream_fixed_args();
    OK(clSetKernelArg(rk_six, 3, sizeof k, &k) == CL_SUCCESS);
    OK(clEnqueueNDRangeKernel(q, rk_six, 1, NULL, g1, l1, 0, NULL, ev) == CL_SUCCESS);
}
static void raw_wait_release(cl_event* evs, long n)
{
    OK(clWaitForEvents((cl_uint)n, evs) == CL_SUCCESS);
    for (long i = 0; i < n; ++i) clReleaseEvent(evs[i]);
}
static void raw_stream_kept(long n)
{
    cl_event* evs = malloc((size_t)n * sizeof *evs);
    OK(evs != NULL);
    for (long i = 0; i < n; ++i) raw_launch_six_kept((int)i, &evs[i]);
    raw_wait_release(evs, n);
    free(evs);
}
static void raw_stream(long n) { raw_stream_with(n, 0, 0); }
static void raw_stream_event(long n) { raw_stream_with(n, 1, 0); }
static void raw_stream_flush(long n) { raw_stream_with(n, 0, 1); }
static void raw_stream_event_flush(long n) { raw_stream_with(n, 1, 1); }

static void w_stream(long n)
{
    clndrange_t ndr = clndrange_init1d(0, 1, 1);
    for (long i = 0; i < n; ++i)
        OK(clforka(cp, dn, wk_six, &ndr, CL_EVENT_NOWAIT, w_small, w_big, k_stream_s, (int)i, k_stream_m, k_stream_t) !=
           NULL);
    OK(stdcl_wait(cp, dn, CL_KERNEL_EVENT) == 0);
}
/* (1s'') The same stream launched with CL_EVENT_NOEVENT: no event per launch,
 * flushed at most every 200 us. */
static void w_stream_noevent(long n)
{
    clndrange_t ndr = clndrange_init1d(0, 1, 1);
    for (long i = 0; i < n; ++i)
        OK(clforka(cp, dn, wk_six, &ndr, CL_EVENT_NOWAIT | CL_EVENT_NOEVENT, w_small, w_big, k_stream_s, (int)i,
                   k_stream_m, k_stream_t) == STDCL_LAUNCHED);
    OK(stdcl_wait(cp, dn, CL_KERNEL_EVENT) == 0);
}

/* (1w) Each launch waited for, as a program whose every launch is
 * CL_EVENT_WAIT does: clforka(CL_EVENT_WAIT) n times.  Raw: the six
 * arguments, clEnqueueNDRangeKernel with no event, clFinish, n times. */
static void raw_wait_each(long n)
{
    for (long i = 0; i < n; ++i) {
        raw_launch_six((int)i, 0);
        OK(clFinish(q) == CL_SUCCESS);
    }
}
static void w_wait_each(long n)
{
    clndrange_t ndr = clndrange_init1d(0, 1, 1);
    for (long i = 0; i < n; ++i)
        OK(clforka(cp, dn, wk_six, &ndr, CL_EVENT_WAIT, w_small, w_big, k_stream_s, (int)i, k_stream_m, k_stream_t) !=
           NULL);
}
/* (1t) A time step of a stencil code: three NOWAIT launches, then one wait
 * for them, n steps.  Raw: three launches as in (1s), clFinish, n times. */
static void raw_step3(long n)
{
    for (long i = 0; i < n; ++i) {
        for (int j = 0; j < 3; ++j) raw_launch_six((int)(3 * i + j), 0);
        OK(clFinish(q) == CL_SUCCESS);
    }
}
/* (1t+) raw_step3 with each launch's event kept to the step's wait (1s+). */
static void raw_step3_kept(long n)
{
    for (long i = 0; i < n; ++i) {
        cl_event evs[3] = {NULL, NULL, NULL};
        for (int j = 0; j < 3; ++j) raw_launch_six_kept((int)(3 * i + j), &evs[j]);
        raw_wait_release(evs, 3);
    }
}
static void w_step3(long n)
{
    clndrange_t ndr = clndrange_init1d(0, 1, 1);
    for (long i = 0; i < n; ++i) {
        for (int j = 0; j < 3; ++j)
            OK(clforka(cp, dn, wk_six, &ndr, CL_EVENT_NOWAIT, w_small, w_big, k_stream_s, (int)(3 * i + j),
                       k_stream_m, k_stream_t) != NULL);
        OK(stdcl_wait(cp, dn, CL_KERNEL_EVENT) == 0);
    }
}

/* (1t") The time step launched with CL_EVENT_NOEVENT. */
static void w_step3_noevent(long n)
{
    clndrange_t ndr = clndrange_init1d(0, 1, 1);
    for (long i = 0; i < n; ++i) {
        for (int j = 0; j < 3; ++j)
            OK(clforka(cp, dn, wk_six, &ndr, CL_EVENT_NOWAIT | CL_EVENT_NOEVENT, w_small, w_big, k_stream_s,
                       (int)(3 * i + j), k_stream_m, k_stream_t) == STDCL_LAUNCHED);
        OK(stdcl_wait(cp, dn, CL_KERNEL_EVENT) == 0);
    }
}

/* (2) 1 MiB each way.  Raw: a blocking transfer (the usual raw idiom). */
static void raw_write(long n)
{
    for (long i = 0; i < n; ++i)
        OK(clEnqueueWriteBuffer(q, r_buf, CL_TRUE, 0, MIB, r_host, 0, NULL, NULL) == CL_SUCCESS);
}
static void raw_read(long n)
{
    for (long i = 0; i < n; ++i)
        OK(clEnqueueReadBuffer(q, r_buf, CL_TRUE, 0, MIB, r_host, 0, NULL, NULL) == CL_SUCCESS);
}
/* What clmsync enqueues: on a device with memory of its own a non-blocking
 * transfer (NB_WRITE: to the device, NB_READ: to the host), when the device
 * works on host memory a marker (NB_MARKER); then a wait on its event. */
enum { NB_WRITE, NB_READ, NB_MARKER };
static void raw_nb(long n, int what)
{
    for (long i = 0; i < n; ++i) {
        cl_event ev = NULL;
        cl_int err = what == NB_MARKER ? clEnqueueMarkerWithWaitList(q, 0, NULL, &ev)
            : what == NB_WRITE         ? clEnqueueWriteBuffer(q, r_buf, CL_FALSE, 0, MIB, r_host, 0, NULL, &ev)
                                       : clEnqueueReadBuffer(q, r_buf, CL_FALSE, 0, MIB, r_host, 0, NULL, &ev);
        raw_wait(err, ev);
    }
}
static void raw_write_nb(long n) { raw_nb(n, NB_WRITE); }
static void raw_read_nb(long n) { raw_nb(n, NB_READ); }
static void raw_marker(long n) { raw_nb(n, NB_MARKER); }
static void w_sync_dev(long n)
{
    for (long i = 0; i < n; ++i) OK(clmsync(cp, dn, w_big, CL_MEM_DEVICE | CL_EVENT_WAIT) != NULL);
}
static void w_sync_host(long n)
{
    for (long i = 0; i < n; ++i) OK(clmsync(cp, dn, w_big, CL_MEM_HOST | CL_EVENT_WAIT) != NULL);
}

/* (3) 4 KiB allocations.  Raw, as deep as `level`: host memory
 * (RAW_HOST), then a buffer (RAW_BUFFER), then a blocking write to it
 * (RAW_WRITE); libstdcl: clmalloc + clfree, with a clmsync between when
 * `sync`. */
static size_t page;
enum { RAW_HOST, RAW_BUFFER, RAW_WRITE };
static void raw_alloc(long n, int level)
{
    for (long i = 0; i < n; ++i) {
        void* p = NULL;
        OK(posix_memalign(&p, page, SMALL) == 0);
        ((volatile char*)p)[0] = 0;
        if (level >= RAW_BUFFER) {
            cl_int err;
            cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, SMALL, NULL, &err);
            OK(err == CL_SUCCESS);
            if (level >= RAW_WRITE) OK(clEnqueueWriteBuffer(q, m, CL_TRUE, 0, SMALL, p, 0, NULL, NULL) == CL_SUCCESS);
            clReleaseMemObject(m);
        }
        free(p);
    }
}
static void raw_host_alloc(long n) { raw_alloc(n, RAW_HOST); }
static void raw_alloc_buffer(long n) { raw_alloc(n, RAW_BUFFER); }
static void raw_alloc_write(long n) { raw_alloc(n, RAW_WRITE); }
static void w_alloc_n(long n, int sync)
{
    for (long i = 0; i < n; ++i) {
        char* p = clmalloc(cp, SMALL, 0);
        OK(p != NULL);
        ((volatile char*)p)[0] = 0;
        if (sync) OK(clmsync(cp, dn, p, CL_MEM_DEVICE | CL_EVENT_WAIT) != NULL);
        OK(clfree(p) == 0);
    }
}
static void w_alloc(long n) { w_alloc_n(n, 0); }
static void w_alloc_sync(long n) { w_alloc_n(n, 1); }

/* (4) Registry lookups among nalloc live allocations. */
static unsigned ptr_i;
static void w_sizeof(long n)
{
    unsigned j = ptr_i;
    for (long i = 0; i < n; ++i, ++j) OK(clsizeofmem(bases[j & (NPTR - 1)]) == SMALL);
    ptr_i = j;
}
static void w_sizeof_few(long n)
{
    for (long i = 0; i < n; ++i) OK(clsizeofmem((i & 1) ? w_big : w_small) != 0);
}
static void w_membase(long n)
{
    unsigned j = ptr_i;
    size_t off = 0;
    for (long i = 0; i < n; ++i, ++j) OK(stdcl_mem_base(inner[j & (NPTR - 1)], &off) != NULL);
    ptr_i = j;
}
static void w_setglobal(long n)
{
    unsigned j = ptr_i;
    for (long i = 0; i < n; ++i, ++j) OK(clarg_set_global(cp, wk_glob, 0, inner_al[j & (NPTR - 1)]) == 0);
    ptr_i = j;
}
static void raw_setarg(long n)
{
    unsigned j = ptr_i;
    for (long i = 0; i < n; ++i, ++j)
        OK(clSetKernelArg(rk_set, 0, sizeof(cl_mem), &rawset[j & (NRAWSET - 1)]) == CL_SUCCESS);
    ptr_i = j;
}

static void w_setglobal_same(long n)
{
    for (long i = 0; i < n; ++i) OK(clarg_set_global(cp, wk_glob, 0, w_mid_inner) == 0);
}
static void raw_setarg_same(long n)
{
    for (long i = 0; i < n; ++i) OK(clSetKernelArg(rk_set, 0, sizeof(cl_mem), &rawset[0]) == CL_SUCCESS);
}

/* (7) 64 MiB each way, waited. */
static void raw_xfer(long n, int write, const char* host)
{
    for (long i = 0; i < n; ++i)
        OK((write ? clEnqueueWriteBuffer(q, r_xfer_dev, CL_TRUE, 0, BIGX, host, 0, NULL, NULL)
                  : clEnqueueReadBuffer(q, r_xfer_dev, CL_TRUE, 0, BIGX, (void*)host, 0, NULL, NULL)) == CL_SUCCESS);
}
static void raw_write_pageable(long n) { raw_xfer(n, 1, r_xfer_pageable); }
static void raw_read_pageable(long n) { raw_xfer(n, 0, r_xfer_pageable); }
static void raw_write_pinned(long n) { raw_xfer(n, 1, r_xfer_pinned); }
static void raw_read_pinned(long n) { raw_xfer(n, 0, r_xfer_pinned); }
static void w_xfer_dev(long n)
{
    for (long i = 0; i < n; ++i) OK(clmsync(cp, dn, w_xfer, CL_MEM_DEVICE | CL_EVENT_WAIT) != NULL);
}
static void w_xfer_host(long n)
{
    for (long i = 0; i < n; ++i) OK(clmsync(cp, dn, w_xfer, CL_MEM_HOST | CL_EVENT_WAIT) != NULL);
}

/* ------------------------------------------------------------------------ */
/* Measurement                                                               */
/* ------------------------------------------------------------------------ */

typedef void (*op_fn)(long);

static double time_op(op_fn f, long n)
{
    double t0 = now_ns();
    f(n);
    return now_ns() - t0;
}

/* Repetitions so that one batch of f lasts about opt.batch_ms: the count that
 * fills 2 ms, then the median of three timings of it (one preemption during
 * calibration must not shrink the batches). */
static long calibrate(op_fn f)
{
    if (opt.reps > 0) return opt.reps;
    long n = 1;
    double t;
    for (;;) {
        t = time_op(f, n);
        if (t > 2e6 || n >= (1L << 26)) break;
        n *= 2;
    }
    double ts[3];
    for (int i = 0; i < 3; ++i) ts[i] = time_op(f, n);
    double per = bench_median(ts, 3) / n;
    long reps = (long)(opt.batch_ms * 1e6 / (per > 1 ? per : 1));
    return reps < 1 ? 1 : reps;
}

typedef struct {
    const char* name;
    const char* raw_desc;
    double raw_ns, w_ns; /* medians per repetition */
    double ratio, r25, r75; /* median and quartiles of the paired ratios */
    const char* target; /* "1.10x", "<200 ns" or "info" */
    int verdict; /* 1 PASS, 0 MISS, -1 none */
    long reps;
} Row;

#define MAXROWS 48
static Row rows[MAXROWS];
static int nrows;

/* Measures raw against wrapped (raw may be NULL: absolute only). */
static Row* measure(const char* name, const char* raw_desc, op_fn raw, op_fn wrapped, const char* target)
{
    Row* r = &rows[nrows++];
    memset(r, 0, sizeof *r);
    r->name = name;
    r->raw_desc = raw_desc;
    r->target = target;
    fprintf(stderr, "  %s ...\n", name);

    /* Warm-up: both sides, a few times, before calibrating. */
    for (int w = 0; w < 3; ++w) {
        if (raw) time_op(raw, 16);
        time_op(wrapped, 16);
    }
    /* The slower side sets the count, so that neither side's batch runs long. */
    long n = calibrate(wrapped);
    if (raw) {
        long nr = calibrate(raw);
        if (nr < n) n = nr;
    }
    if (raw) time_op(raw, n / 4 + 1);
    time_op(wrapped, n / 4 + 1);

    int B = opt.batches;
    double* tr = calloc((size_t)B, sizeof(double));
    double* tw = calloc((size_t)B, sizeof(double));
    double* rr = calloc((size_t)B, sizeof(double));
    for (int b = 0; b < B; ++b) {
        if (raw && (b & 1) == 0) tr[b] = time_op(raw, n) / n;
        tw[b] = time_op(wrapped, n) / n;
        if (raw && (b & 1) == 1) tr[b] = time_op(raw, n) / n;
        if (raw) rr[b] = tw[b] / tr[b];
    }
    r->reps = n;
    r->w_ns = bench_median(tw, B);
    if (raw) {
        r->raw_ns = bench_median(tr, B);
        r->ratio = bench_median(rr, B);
        r->r25 = bench_quantile(rr, B, 0.25);
        r->r75 = bench_quantile(rr, B, 0.75);
    }
    if (strcmp(target, "1.10x") == 0)
        r->verdict = r->ratio <= 1.10;
    else if (strcmp(target, "1.05x") == 0)
        r->verdict = r->ratio <= 1.05;
    else if (strcmp(target, "2x") == 0)
        r->verdict = r->ratio <= 2.0;
    else if (strcmp(target, "<200 ns") == 0)
        r->verdict = r->w_ns < 200.0;
    else if (strcmp(target, "<40 ns") == 0)
        r->verdict = r->w_ns < 40.0;
    else
        r->verdict = -1;
    free(tr);
    free(tw);
    free(rr);
    return r;
}

static void fmt_time(char* buf, size_t n, double ns)
{
    if (ns <= 0)
        snprintf(buf, n, "-");
    else if (ns < 1e3)
        snprintf(buf, n, "%.0f ns", ns);
    else if (ns < 1e6)
        snprintf(buf, n, "%.2f us", ns / 1e3);
    else
        snprintf(buf, n, "%.2f ms", ns / 1e6);
}

static void print_table(void)
{
    printf("\n%-44s %10s %10s %10s %20s %8s %6s\n", "operation", "raw", "libstdcl", "difference", "ratio [p25-p75]",
           "target", "result");
    for (int i = 0; i < 44 + 10 + 10 + 10 + 20 + 8 + 6 + 6; ++i) putchar('-');
    putchar('\n');
    for (int i = 0; i < nrows; ++i) {
        Row* r = &rows[i];
        char a[32], b[32], c[40], d[32];
        fmt_time(a, sizeof a, r->raw_ns);
        fmt_time(b, sizeof b, r->w_ns);
        if (r->raw_ns > 0) {
            double diff = r->w_ns - r->raw_ns;
            if (diff > -0.5 && diff < 0.5) diff = 0.5; /* prints "+0 ns", not "-" */
            fmt_time(d + 1, sizeof d - 1, diff < 0 ? -diff : diff);
            d[0] = diff < 0 ? '-' : '+';
        } else
            snprintf(d, sizeof d, "-");
        if (r->raw_ns > 0)
            snprintf(c, sizeof c, "%.2fx [%.2f-%.2f]", r->ratio, r->r25, r->r75);
        else
            snprintf(c, sizeof c, "-");
        printf("%-44s %10s %10s %10s %20s %8s %6s\n", r->name, a, b, d, c, r->target,
               r->verdict == 1       ? "PASS"
                   : r->verdict == 0 ? "MISS"
                                     : "info");
    }
    printf("\nraw side of each row:\n");
    for (int i = 0; i < nrows; ++i)
        printf("  %-44s %s (%ld reps/batch)\n", rows[i].name, rows[i].raw_desc, rows[i].reps);
}

/* ------------------------------------------------------------------------ */
/* Setup                                                                     */
/* ------------------------------------------------------------------------ */

static void usage(FILE* f)
{
    fprintf(
        f,
        "usage: bench_core [-c cpu|gpu|dev] [-d devnum] [-r reps] [-b batches] [-t ms] [-n n1,n2,...] [-T threads] [-s]\n"
        "  -c  context: stdcpu, stdgpu or stddev (default: stdgpu if present, else stdcpu)\n"
        "  -d  device number in that context (default 0)\n"
        "  -r  repetitions per batch for every operation (default: calibrated, see -t)\n"
        "  -b  batches per operation, raw and libstdcl alternating (default 31)\n"
        "  -t  calibrate reps so that one batch lasts about this many ms (default 10)\n"
        "  -n  live allocation counts for the registry lookups (default 1000,10000,100000,1000000)\n"
        "  -T  threads looking up at once for the lookup throughput row (default 16)\n"
        "  -s  the launch rows (1s), (1w), (1t) only\n");
}

static long parse_long(const char* s, const char* what)
{
    char* end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < 0) {
        fprintf(stderr, "bench_core: bad %s '%s'\n", what, s);
        exit(2);
    }
    return v;
}

static void parse_args(int argc, char** argv)
{
    int c;
    while ((c = getopt(argc, argv, "c:d:r:b:t:n:T:sh")) != -1) {
        switch (c) {
        case 'c': opt.ctxname = optarg; break;
        case 'd': opt.devnum = (unsigned)parse_long(optarg, "device number"); break;
        case 'r': opt.reps = parse_long(optarg, "reps"); break;
        case 'b': opt.batches = (int)parse_long(optarg, "batch count"); break;
        case 't': opt.batch_ms = (double)parse_long(optarg, "batch time"); break;
        case 'n': {
            char buf[256];
            snprintf(buf, sizeof buf, "%s", optarg);
            opt.nn = 0;
            opt.nalloc = 1;
            for (char* t = strtok(buf, ","); t && opt.nn < 8; t = strtok(NULL, ",")) {
                long v = parse_long(t, "allocation count");
                opt.nallocs[opt.nn++] = v < 1 ? 1 : v;
                if (v > opt.nalloc) opt.nalloc = v;
            }
            if (opt.nn == 0) {
                usage(stderr);
                exit(2);
            }
            break;
        }
        case 's': opt.streams_only = 1; break;
        case 'T': opt.threads = (int)parse_long(optarg, "thread count"); break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); exit(2);
        }
    }
    if (opt.batches < 3) opt.batches = 3;
    if (opt.batch_ms < 1) opt.batch_ms = 1;
    if (opt.threads < 1) opt.threads = 1;
}

static void pick_context(void)
{
    const char* name = opt.ctxname;
    if (!name) {
        cp = stdgpu ? stdgpu : stdcpu;
        name = stdgpu ? "gpu" : "cpu";
    } else if (strcmp(name, "cpu") == 0)
        cp = stdcpu;
    else if (strcmp(name, "gpu") == 0)
        cp = stdgpu;
    else if (strcmp(name, "dev") == 0)
        cp = stddev;
    else {
        usage(stderr);
        exit(2);
    }
    if (!cp) {
        fprintf(stderr, "bench_core: no std%s context on this machine (try -c cpu|gpu|dev)\n", name);
        exit(1);
    }
    if (opt.devnum >= clgetndev(cp)) {
        fprintf(stderr, "bench_core: std%s has %u device(s); -d %u is out of range\n", name, clgetndev(cp), opt.devnum);
        exit(1);
    }
    dn = opt.devnum;
    ctx = stdcl_clcontext(cp);
    dev = stdcl_device(cp, dn);
    /* The raw side's queue is its own, as a raw program's is: taking the kernel
     * queue (stdcl_queue) would move libstdcl's transfers onto it. */
    cl_int err = CL_SUCCESS;
    q = ctx && dev ? clCreateCommandQueue(ctx, dev, 0, &err) : NULL;
    if (!ctx || !dev || !q) die("stdcl_clcontext/stdcl_device/clCreateCommandQueue");
}

static void print_machine(void)
{
    char cpu[256], os[256], host[128] = "";
    bench_first_line_of("/proc/cpuinfo", "model name", cpu, sizeof cpu);
    bench_first_line_of("/etc/os-release", "PRETTY_NAME=", os, sizeof os);
    gethostname(host, sizeof host - 1);
    char pname[256] = "", pver[256] = "", dname[256] = "", dver[256] = "", drv[256] = "";
    clGetPlatformInfo(stdcl_platform(cp), CL_PLATFORM_NAME, sizeof pname, pname, NULL);
    clGetPlatformInfo(stdcl_platform(cp), CL_PLATFORM_VERSION, sizeof pver, pver, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dname, dname, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_VERSION, sizeof dver, dver, NULL);
    clGetDeviceInfo(dev, CL_DRIVER_VERSION, sizeof drv, drv, NULL);
    time_t t = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", localtime(&t));

    printf("bench_core: libstdcl %s (header %s), %s\n", stdcl_version(), STDCL_VERSION_STRING, date);
    printf("machine:  %s, %ld online CPU(s), %s (%s)\n", cpu[0] ? cpu : "unknown CPU", sysconf(_SC_NPROCESSORS_ONLN),
           os[0] ? os : "unknown OS", host);
    printf("platform: %s (%s)\n", pname, pver);
    printf("device:   %u: %s (%s, driver %s)%s\n", dn, dname, dver, drv,
           zero_copy ? "; libstdcl works on host memory here (zero-copy), clmsync copies nothing" : "");
    printf("context:  %s\n", stdcl_context_why(cp));
    printf("load:     %s (from /proc/loadavg at start; other processes skew absolute times, less so ratios)\n",
           bench_loadavg());
    printf("method:   %d batches per row, raw and libstdcl alternating; median per-op time; ratio = median of "
           "per-batch libstdcl/raw\n",
           opt.batches);
}

/* Both sides of a transfer row, `bytes` each: a clmalloc'd buffer and a
 * page-aligned host buffer, both filled with `fill` (touched, so that no page
 * fault lands in a timed loop), and the raw device buffer. */
static void alloc_sides(size_t bytes, int fill, char** w, char** host, cl_mem* buf)
{
    char what[64];
    cl_int err;
    snprintf(what, sizeof what, "clmalloc(%zu MiB)", bytes / MIB);
    if (!(*w = clmalloc(cp, bytes, 0))) die(what);
    memset(*w, fill, bytes);
    snprintf(what, sizeof what, "posix_memalign(%zu MiB)", bytes / MIB);
    if (posix_memalign((void**)host, page, bytes) != 0) die(what);
    memset(*host, fill, bytes);
    *buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    snprintf(what, sizeof what, "clCreateBuffer(%zu MiB)", bytes / MIB);
    check(err, what);
}

static void setup(void)
{
    page = (size_t)sysconf(_SC_PAGESIZE);
    cl_int err;

    /* libstdcl's kernels. */
    void* h = clsopen(cp, kernel_src, CLLD_NOW);
    if (!h) die("clsopen");
    wk_empty = clsym(cp, h, "empty", 0);
    wk_glob = clsym(cp, h, "glob", 0);
    wk_six = clsym(cp, h, "six", 0);
    if (!wk_empty || !wk_glob || !wk_six) die("clsym");
    if (clarg_set(cp, wk_empty, 0, 0) != 0) die("clarg_set");

    /* The same source built with raw OpenCL for device dn. */
    size_t len = strlen(kernel_src);
    raw_prog = clCreateProgramWithSource(ctx, 1, &kernel_src, &len, &err);
    check(err, "clCreateProgramWithSource");
    check(clBuildProgram(raw_prog, 1, &dev, "", NULL, NULL), "clBuildProgram");
    rk_empty = clCreateKernel(raw_prog, "empty", &err);
    check(err, "clCreateKernel(empty)");
    int zero = 0;
    check(clSetKernelArg(rk_empty, 0, sizeof zero, &zero), "clSetKernelArg(empty)");
    rk_glob = clCreateKernel(raw_prog, "glob", &err);
    check(err, "clCreateKernel(glob)");
    rk_set = clCreateKernel(raw_prog, "glob", &err);
    check(err, "clCreateKernel(glob)");
    rk_six = clCreateKernel(raw_prog, "six", &err);
    check(err, "clCreateKernel(six)");

    alloc_sides(MIB, 1, &w_big, &r_host, &r_buf);

    /* Does libstdcl work on the host memory itself here?  Then clmsync only
     * enqueues a marker: say so, and also compare with a raw marker. */
    cl_mem m = stdcl_mem(cp, dn, w_big);
    if (!m) die("stdcl_mem");
    cl_mem_flags mf = 0;
    void* hp = NULL;
    clGetMemObjectInfo(m, CL_MEM_FLAGS, sizeof mf, &mf, NULL);
    clGetMemObjectInfo(m, CL_MEM_HOST_PTR, sizeof hp, &hp, NULL);
    zero_copy = (mf & CL_MEM_USE_HOST_PTR) && hp == (void*)w_big;

    /* A bound __global argument for the kernel round trip with one argument. */
    w_small = clmalloc(cp, SMALL, 0);
    if (!w_small) die("clmalloc(4 KiB)");
    memset(w_small, 0, SMALL);
    if (clarg_set_global(cp, wk_glob, 0, w_small) != 0) die("clarg_set_global");
    r_buf_small = clCreateBuffer(ctx, CL_MEM_READ_WRITE, SMALL, NULL, &err);
    check(err, "clCreateBuffer(4 KiB)");
    check(clSetKernelArg(rk_glob, 0, sizeof r_buf_small, &r_buf_small), "clSetKernelArg");
    for (int i = 0; i < NRAWSET; ++i) {
        rawset[i] = clCreateBuffer(ctx, CL_MEM_READ_WRITE, SMALL, NULL, &err);
        check(err, "clCreateBuffer(4 KiB set)");
    }
}

/* Grows the registry to n live allocations and draws new random pointers among them. */
static void setup_registry(long n)
{
    if (!live) {
        live = calloc((size_t)opt.nalloc, sizeof(void*));
        bases = malloc(NPTR * sizeof(void*));
        inner = malloc(NPTR * sizeof(void*));
        inner_al = malloc(NPTR * sizeof(void*));
        if (!live || !bases || !inner || !inner_al) {
            fprintf(stderr, "bench_core: out of memory\n");
            exit(1);
        }
    }
    for (; nlive < n; ++nlive) {
        live[nlive] = clmalloc(cp, SMALL, 0);
        if (!live[nlive]) die("clmalloc (registry fill)");
    }
    for (unsigned i = 0; i < NPTR; ++i) {
        bases[i] = live[rng() % (uint64_t)n];
        char* base = live[rng() % (uint64_t)n];
        size_t off = 1 + rng() % (SMALL - 1), align = stdcl_mem_align(cp);
        inner[i] = base + off;
        inner_al[i] = base + (align ? off / align * align : off);
    }
}

/* (5) Lookups from several threads at once: total lookups per second. */
typedef struct {
    long n;
    unsigned start;
    long bad;
} lookup_job;

static void* lookup_thread(void* arg)
{
    lookup_job* j = (lookup_job*)arg;
    unsigned k = j->start;
    size_t off = 0;
    for (long i = 0; i < j->n; ++i, ++k)
        if (!stdcl_mem_base(inner[k & (NPTR - 1)], &off)) j->bad++;
    return NULL;
}

static double lookups_per_s(int T, long per_thread)
{
    pthread_t th[256];
    lookup_job jobs[256];
    if (T > 256) T = 256;
    double t0 = now_ns();
    for (int i = 0; i < T; ++i) {
        jobs[i].n = per_thread;
        jobs[i].start = (unsigned)i * 65521u;
        jobs[i].bad = 0;
        if (pthread_create(&th[i], NULL, lookup_thread, &jobs[i]) != 0) die("pthread_create");
    }
    for (int i = 0; i < T; ++i) {
        pthread_join(th[i], NULL);
        failures += jobs[i].bad;
    }
    return (double)T * (double)per_thread / ((now_ns() - t0) / 1e9);
}

static double thr_one, thr_many;
static void measure_threads(void)
{
    fprintf(stderr, "  (5) lookups from 1 and %d threads ...\n", opt.threads);
    long per = 2000000;
    double one[5], many[5];
    lookups_per_s(1, per / 4);
    for (int r = 0; r < 5; ++r) {
        one[r] = lookups_per_s(1, per);
        many[r] = lookups_per_s(opt.threads, per);
    }
    thr_one = bench_median(one, 5);
    thr_many = bench_median(many, 5);
}

static void setup_large(void)
{
    cl_int err;
    w_mid = clmalloc(cp, MIB, 0);
    if (!w_mid) die("clmalloc(1 MiB)");
    w_mid_inner = w_mid + 4096;
    if (clarg_set_global(cp, wk_glob, 0, w_mid_inner) != 0) die("clarg_set_global(interior)");
    alloc_sides(BIGX, 2, &w_xfer, &r_xfer_pageable, &r_xfer_dev);
    r_xfer_pin = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, BIGX, NULL, &err);
    check(err, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR, 64 MiB)");
    r_xfer_pinned =
        clEnqueueMapBuffer(q, r_xfer_pin, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, BIGX, 0, NULL, NULL, &err);
    check(err, "clEnqueueMapBuffer(64 MiB)");
    memset(r_xfer_pinned, 2, BIGX);
}

static void teardown(void)
{
    clfree(w_mid);
    clfree(w_xfer);
    free(r_xfer_pageable);
    clEnqueueUnmapMemObject(q, r_xfer_pin, r_xfer_pinned, 0, NULL, NULL);
    clFinish(q);
    clReleaseMemObject(r_xfer_pin);
    clReleaseMemObject(r_xfer_dev);
    for (long i = 0; i < nlive; ++i) clfree(live[i]);
    free(live);
    free(bases);
    free(inner);
    clfree(w_small);
    clfree(w_big);
    for (int i = 0; i < NRAWSET; ++i) clReleaseMemObject(rawset[i]);
    clReleaseMemObject(r_buf_small);
    clReleaseMemObject(r_buf);
    free(r_host);
    clReleaseKernel(rk_six);
    clReleaseKernel(rk_set);
    clReleaseKernel(rk_glob);
    clReleaseKernel(rk_empty);
    clReleaseProgram(raw_prog);
}

int main(int argc, char** argv)
{
    parse_args(argc, argv);
    pick_context();
    setup();
    print_machine();
    fflush(stdout);

    fprintf(stderr, "measuring:\n");
    if (!opt.streams_only) {
        measure("(1) clfork+clwait, empty kernel",
                "clEnqueueNDRangeKernel + clWaitForEvents + clReleaseEvent (its int argument set once)", raw_fork_empty,
                w_fork_empty, "1.10x");
        measure("(1') clfork(CL_EVENT_WAIT), empty kernel", "clEnqueueNDRangeKernel + clWaitForEvents + clReleaseEvent",
                raw_fork_empty, w_fork_empty_wait, "1.10x");
        measure("(1\") clfork+clwait, one __global arg", "the same, argument set once with clSetKernelArg",
                raw_fork_glob, w_fork_glob, "1.10x");
    }
    measure("(1s) clforka stream, 6 args, one wait",
            "6 clSetKernelArg + clEnqueueNDRangeKernel (no event) per launch, one clFinish", raw_stream, w_stream,
            "1.10x");
    measure("(1s\") clforka stream, CL_EVENT_NOEVENT",
            "6 clSetKernelArg + clEnqueueNDRangeKernel (no event) per launch, one clFinish", raw_stream,
            w_stream_noevent, "1.10x");
    measure("(1s#) clforka stream, NOEVENT, vs lean raw",
            "1 clSetKernelArg (the changing one; 5 set before the loop) + clEnqueueNDRangeKernel, one clFinish",
            raw_stream_lean, w_stream_noevent, "info");
    measure("(1w) clforka(CL_EVENT_WAIT) each launch", "6 clSetKernelArg + clEnqueueNDRangeKernel + clFinish",
            raw_wait_each, w_wait_each, "1.05x");
    measure("(1t) time step: 3 NOWAIT launches, one wait", "3 x (6 clSetKernelArg + clEnqueueNDRangeKernel), clFinish",
            raw_step3, w_step3, "1.10x");
    measure("(1t\") time step, CL_EVENT_NOEVENT", "3 x (6 clSetKernelArg + clEnqueueNDRangeKernel), clFinish",
            raw_step3, w_step3_noevent, "1.10x");
    measure("(1s+) clforka stream vs raw keeping events", "(1s)'s raw stream, each event kept, waited, released",
            raw_stream_kept, w_stream, "info");
    measure("(1t+) time step vs raw keeping events", "(1t)'s raw step, each event kept, waited, released",
            raw_step3_kept, w_step3, "info");
    measure("(1s') raw stream + an event kept to the wait", "(1s)'s raw stream", raw_stream, raw_stream_kept, "info");
    measure("(1s') raw stream + an event per launch", "(1s)'s raw stream", raw_stream, raw_stream_event, "info");
    measure("(1s') raw stream + clFlush per launch", "(1s)'s raw stream", raw_stream, raw_stream_flush, "info");
    measure("(1s') raw stream + event + clFlush", "(1s)'s raw stream", raw_stream, raw_stream_event_flush, "info");
    if (opt.streams_only) { /* -s: the launch rows only */
        print_table();
        teardown();
        return failures ? 1 : 0;
    }
    measure("(2) clmsync 1 MiB host->device", "clEnqueueWriteBuffer 1 MiB, blocking", raw_write, w_sync_dev, "1.10x");
    measure("(2) clmsync 1 MiB device->host", "clEnqueueReadBuffer 1 MiB, blocking", raw_read, w_sync_host, "1.10x");
    /* The same commands as libstdcl enqueues: its own cost alone. */
    if (zero_copy) {
        measure("(2') clmsync to device, vs same commands", "clEnqueueMarkerWithWaitList + wait + release", raw_marker,
                w_sync_dev, "1.10x");
        measure("(2') clmsync to host, vs same commands", "clEnqueueMarkerWithWaitList + wait + release", raw_marker,
                w_sync_host, "1.10x");
    } else {
        measure("(2') clmsync to device, vs same commands",
                "clEnqueueWriteBuffer 1 MiB, non-blocking + clWaitForEvents + release", raw_write_nb, w_sync_dev,
                "1.10x");
        measure("(2') clmsync to host, vs same commands",
                "clEnqueueReadBuffer 1 MiB, non-blocking + clWaitForEvents + release", raw_read_nb, w_sync_host,
                "1.10x");
    }
    measure("(3) clmalloc+clfree 4 KiB", "posix_memalign + clCreateBuffer + clReleaseMemObject + free",
            raw_alloc_buffer, w_alloc, "1.10x");
    measure("(3') clmalloc+clfree 4 KiB, vs host only", "posix_memalign(page) + free, no OpenCL call", raw_host_alloc,
            w_alloc, "info");
    measure("(3\") clmalloc+clmsync(DEVICE)+clfree 4 KiB",
            "posix_memalign + clCreateBuffer + clEnqueueWriteBuffer(blocking) + release + free", raw_alloc_write,
            w_alloc_sync, "1.10x");

    measure("(4') clsizeofmem(base), 2 live", "none (the call's fixed cost, registry nearly empty)", NULL, w_sizeof_few,
            "info");

    setup_large();
    measure("(6) clarg_set_global, same interior ptr", "clSetKernelArg(cl_mem) of one buffer, again and again",
            raw_setarg_same, w_setglobal_same, "2x");
    Row* x[6];
    x[0] = measure("(7) clmsync 64 MiB host->device", "clEnqueueWriteBuffer 64 MiB, blocking, pageable memory",
                   raw_write_pageable, w_xfer_dev, "info");
    x[1] = measure("(7) clmsync 64 MiB host->device, vs pinned", "clEnqueueWriteBuffer 64 MiB, blocking, pinned memory",
                   raw_write_pinned, w_xfer_dev, "1.10x");
    x[2] = measure("(7) clmsync 64 MiB device->host", "clEnqueueReadBuffer 64 MiB, blocking, pageable memory",
                   raw_read_pageable, w_xfer_host, "info");
    x[3] = measure("(7) clmsync 64 MiB device->host, vs pinned", "clEnqueueReadBuffer 64 MiB, blocking, pinned memory",
                   raw_read_pinned, w_xfer_host, "1.10x");

    static char names[8][4][64];
    for (int i = 0; i < opt.nn; ++i) {
        long n = opt.nallocs[i];
        fprintf(stderr, "  filling the registry to %ld allocations of %u bytes ...\n", n, SMALL);
        setup_registry(n);
        snprintf(names[i][0], 64, "(4) stdcl_mem_base(interior), %ld live", n);
        snprintf(names[i][1], 64, "(4) clsizeofmem(base), %ld live", n);
        measure(names[i][0], "none (the registry lookup of an interior pointer; absolute target)", NULL, w_membase,
                "<40 ns");
        measure(names[i][1], "none (no raw OpenCL equivalent; absolute target)", NULL, w_sizeof, "<40 ns");
    }
    char n2[64], n3[64];
    snprintf(n2, sizeof n2, "(4) clarg_set_global(interior), %ld live", nlive);
    measure(n2, "clSetKernelArg(cl_mem) of one of 64 buffers (no lookup)", raw_setarg, w_setglobal, "info");
    snprintf(n3, sizeof n3, "(3) clmalloc+clfree 4 KiB, %ld live", nlive);
    measure(n3, "posix_memalign + clCreateBuffer + clReleaseMemObject + free", raw_alloc_buffer, w_alloc, "1.10x");
    measure_threads();

    print_table();
    printf("\n(5) registry lookups (stdcl_mem_base, random interior pointers, %ld live): 1 thread %.1f M/s, "
           "%d threads %.1f M/s: %.2fx (machine: %ld online CPUs)\n",
           nlive, thr_one / 1e6, opt.threads, thr_many / 1e6, thr_many / thr_one, sysconf(_SC_NPROCESSORS_ONLN));
    double gb = (double)BIGX / 1e9;
    printf("(7) 64 MiB transfers in GB/s (1 GB = 1e9 bytes), median batch:\n");
    printf("    host->device: raw pageable %.2f, raw pinned %.2f, clmsync %.2f (%.0f%% of pinned)\n",
           gb / (x[0]->raw_ns / 1e9), gb / (x[1]->raw_ns / 1e9), gb / (x[1]->w_ns / 1e9),
           100.0 * x[1]->raw_ns / x[1]->w_ns);
    printf("    device->host: raw pageable %.2f, raw pinned %.2f, clmsync %.2f (%.0f%% of pinned)\n",
           gb / (x[2]->raw_ns / 1e9), gb / (x[3]->raw_ns / 1e9), gb / (x[3]->w_ns / 1e9),
           100.0 * x[3]->raw_ns / x[3]->w_ns);
    if (zero_copy)
        printf("    (zero-copy device: clmsync copies nothing; run with STDCL_ZERO_COPY=0 for the copy path)\n");
    printf("load at end: %s\n", bench_loadavg());
    teardown();
    if (failures) {
        const char* e = clerror();
        fprintf(stderr, "bench_core: %ld call(s) failed in the timed loops (last message: %s)\n", failures,
                e ? e : "none");
        return 1;
    }
    return 0;
}
