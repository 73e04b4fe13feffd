/* SPDX-License-Identifier: MIT */
/* subbuffer_threads.c: raw OpenCL, no libstdcl: threads that launch kernels
 * with sub-buffers on shared in-order queues, the pattern test_stress makes
 * through interior pointers, to tell a driver's fault from the library's.
 *
 *   subbuffer_threads [-t threads] [-s seconds] [-n] [-k] [-x] [-L]
 *
 * One context over the first GPU platform's devices (two at most; without a
 * GPU, the first platform's devices) and one
 * queue per device, shared by every thread.  Each thread, until the time is
 * up: a buffer of 128 KiB, written (NOWAIT); four sub-buffers of it (a and
 * c from its two halves, and each again from one alignment unit further on;
 * -n: none, the buffer itself with element offsets); a kernel
 * (c[i] = a[i] * 3 + i) launched with each pair, NOWAIT; the buffer read back and
 * waited for; the result checked; the sub-buffers released newest first, then
 * the buffer.  Each thread has kernels of its own (clSetKernelArg is not
 * thread-safe).  Prints "ok: N rounds" and exits 0, or the first failure
 * and 1; a fault in the driver ends the process with the signal.
 *
 * Two options make the calls libstdcl makes where the plain form differs:
 *   -k  one pair of kernels shared by every thread, as libstdcl shares a
 *       cl_kernel: the arguments set and the launch made under one lock, the
 *       arguments left bound after the launch, and set to NULL (if still
 *       bound to them) before the sub-buffers are released;
 *   -x  a second in-order queue per device for the transfers, as libstdcl's
 *       transfer queue (STDCL_OVERLAP): the write there, the kernels on the
 *       first queue waiting for its event, the read back on the second
 *       waiting for the second kernel's event.
 * And one a workaround would make:
 *   -L  one process-wide lock held around every clCreateSubBuffer, every
 *       launch and every release of a sub-buffer or its buffer (the blocking
 *       read back and the check outside it). */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { N = 16384, MAX_THREADS = 64 };

static const char* const src =
    "__kernel void axpi(__global const int* a, int ao, __global int* c, int co, int k)\n"
    "{ int i = get_global_id(0); c[co + i] = a[ao + i] * k + i; }\n";

static cl_context g_ctx;
static cl_command_queue g_q[2], g_t[2]; /* g_t: the transfer queues (-x) */
static cl_program g_prog;
static cl_uint g_ndev;
static size_t g_align = 128; /* bytes */
static double g_end;
static int g_plain, g_shared, g_xfer;
static cl_kernel g_k[2];         /* -k: the shared kernels */
static cl_mem g_bound[2][2];     /* -k: what each shared kernel's arguments 0 and 2 hold */
static pthread_mutex_t g_kmu = PTHREAD_MUTEX_INITIALIZER;
static int g_lock;               /* -L */
static pthread_mutex_t g_lmu = PTHREAD_MUTEX_INITIALIZER;
static void lock_l(void) { if (g_lock) pthread_mutex_lock(&g_lmu); }
static void unlock_l(void) { if (g_lock) pthread_mutex_unlock(&g_lmu); }
static atomic_long g_rounds;
static atomic_int g_bad;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void bad(const char* what, cl_int err)
{
    if (atomic_fetch_add(&g_bad, 1) == 0) fprintf(stderr, "failed: %s (%d)\n", what, (int)err);
}

static cl_mem sub(cl_mem b, size_t off, size_t len)
{
    if (g_plain) {
        clRetainMemObject(b);
        return b;
    }
    cl_buffer_region r = {off, len};
    cl_int err;
    cl_mem m = clCreateSubBuffer(b, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
    if (err != CL_SUCCESS) bad("clCreateSubBuffer", err);
    return m;
}

/* k(a + ao, c + co, 3) over gsz items, NOWAIT, after the events of wait
 * (nw of them); its event in *ev when ev is not NULL.  ki: which shared
 * kernel (-k). */
static void launch(cl_command_queue q, cl_kernel k, int ki, cl_mem a, int ao, cl_mem c, int co, size_t gsz,
                   cl_uint nw, const cl_event* wait, cl_event* ev)
{
    int three = 3;
    if (g_shared) {
        pthread_mutex_lock(&g_kmu);
        k = g_k[ki];
        g_bound[ki][0] = a;
        g_bound[ki][1] = c;
    }
    clSetKernelArg(k, 0, sizeof a, &a);
    clSetKernelArg(k, 1, sizeof ao, &ao);
    clSetKernelArg(k, 2, sizeof c, &c);
    clSetKernelArg(k, 3, sizeof co, &co);
    clSetKernelArg(k, 4, sizeof three, &three);
    cl_int err = clEnqueueNDRangeKernel(q, k, 1, NULL, &gsz, NULL, nw, nw ? wait : NULL, ev);
    if (g_shared) pthread_mutex_unlock(&g_kmu);
    if (err != CL_SUCCESS) bad("clEnqueueNDRangeKernel", err);
}

/* -k: the shared kernels' arguments that still hold a or c set to NULL, as
 * libstdcl does before it releases an allocation's objects. */
static void unbind(cl_mem a, cl_mem c)
{
    if (!g_shared) return;
    pthread_mutex_lock(&g_kmu);
    for (int ki = 0; ki < 2; ki++)
        for (int j = 0; j < 2; j++)
            if (g_bound[ki][j] == a || g_bound[ki][j] == c) {
                cl_mem none = NULL;
                clSetKernelArg(g_k[ki], (cl_uint)(2 * j), sizeof none, &none);
                g_bound[ki][j] = NULL;
            }
    pthread_mutex_unlock(&g_kmu);
}

static void* worker(void* arg)
{
    unsigned id = (unsigned)(size_t)arg;
    cl_int err;
    cl_kernel k1 = clCreateKernel(g_prog, "axpi", &err), k2 = clCreateKernel(g_prog, "axpi", &err);
    int* host = malloc(N * sizeof(int) * 2);
    size_t half = N * sizeof(int); /* a: the first half, c: the second */
    for (unsigned r = 0; now_s() < g_end && !atomic_load(&g_bad); r++) {
        cl_command_queue q = g_q[(id + r) % g_ndev];
        for (int i = 0; i < N; i++) host[i] = i + (int)r, host[N + i] = -1;
        cl_mem b = clCreateBuffer(g_ctx, CL_MEM_READ_WRITE, 2 * half, NULL, &err);
        if (err != CL_SUCCESS) {
            bad("clCreateBuffer", err);
            break;
        }
        cl_command_queue tq = g_xfer ? g_t[(id + r) % g_ndev] : q;
        cl_event ew = NULL, ek = NULL;
        clEnqueueWriteBuffer(tq, b, CL_FALSE, 0, 2 * half, host, 0, NULL, g_xfer ? &ew : NULL);
        if (g_xfer) clFlush(tq);
        /* Two interior views, as test_stress's interior pointers: a from byte
         * 0 and from one alignment unit on; c likewise.  -n: the buffer itself
         * with element offsets instead. */
        size_t off = g_align, o = off / sizeof(int);
        lock_l();
        cl_mem a = sub(b, 0, half), c = sub(b, half, half);
        cl_mem a2 = sub(b, off, half - off), c2 = sub(b, half + off, half - off);
        int ao = 0, co = g_plain ? N : 0, ao2 = g_plain ? (int)o : 0, co2 = g_plain ? N + (int)o : 0;
        size_t gsz = N, gsz2 = N - o;
        launch(q, k1, 0, a, ao, c, co, gsz, g_xfer ? 1 : 0, &ew, NULL);
        launch(q, k2, 1, a2, ao2, c2, co2, gsz2, 0, NULL, g_xfer ? &ek : NULL);
        if (g_xfer) clFlush(q);
        unlock_l();
        err = clEnqueueReadBuffer(tq, b, CL_TRUE, half, half, host + N, g_xfer ? 1 : 0, g_xfer ? &ek : NULL, NULL);
        if (err != CL_SUCCESS) bad("clEnqueueReadBuffer", err);
        if (ew) clReleaseEvent(ew);
        if (ek) clReleaseEvent(ek);
        /* c[i] = a[i] * 3 + i from the first launch; the second rewrote
         * c[off + j] = a[off + j] * 3 + j. */
        for (size_t i = 0; i < N; i++) {
            int want = i < o ? host[i] * 3 + (int)i : host[i] * 3 + (int)(i - o);
            if (host[N + i] != want) {
                if (atomic_fetch_add(&g_bad, 1) == 0)
                    fprintf(stderr, "thread %u round %u: c[%zu] = %d, want %d\n", id, r, i, host[N + i], want);
                break;
            }
        }
        unbind(a, c);
        unbind(a2, c2);
        lock_l();
        clReleaseMemObject(c2);
        clReleaseMemObject(a2);
        clReleaseMemObject(c);
        clReleaseMemObject(a);
        clReleaseMemObject(b);
        unlock_l();
        atomic_fetch_add(&g_rounds, 1);
    }
    clReleaseKernel(k1);
    clReleaseKernel(k2);
    free(host);
    return NULL;
}

int main(int argc, char** argv)
{
    unsigned threads = 16;
    double seconds = 3;
    int opt;
    while ((opt = getopt(argc, argv, "t:s:nkxL")) != -1) {
        if (opt == 't') threads = (unsigned)atoi(optarg);
        else if (opt == 's') seconds = atof(optarg);
        else if (opt == 'n') g_plain = 1;
        else if (opt == 'k') g_shared = 1;
        else if (opt == 'x') g_xfer = 1;
        else if (opt == 'L') g_lock = 1;
        else {
            fprintf(stderr, "usage: %s [-t threads] [-s seconds] [-n] [-k] [-x] [-L]\n", argv[0]);
            return 2;
        }
    }
    if (threads < 1 || threads > MAX_THREADS) threads = 16;
    cl_platform_id plats[8];
    cl_uint np = 0;
    clGetPlatformIDs(8, plats, &np);
    cl_device_id devs[2];
    cl_platform_id plat = NULL;
    for (cl_uint i = 0; i < np && !plat; i++)
        if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_GPU, 2, devs, &g_ndev) == CL_SUCCESS && g_ndev) plat = plats[i];
    for (cl_uint i = 0; i < np && !plat; i++) /* no GPU: any device (a check of the program itself) */
        if (clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 2, devs, &g_ndev) == CL_SUCCESS && g_ndev) plat = plats[i];
    if (!plat) {
        fprintf(stderr, "no OpenCL device\n");
        return 2;
    }
    if (g_ndev > 2) g_ndev = 2;
    cl_uint bits = 1024;
    clGetDeviceInfo(devs[0], CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, NULL);
    g_align = bits / 8;
    cl_int err;
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)plat, 0};
    g_ctx = clCreateContext(props, g_ndev, devs, NULL, NULL, &err);
    for (cl_uint d = 0; d < g_ndev; d++) {
        g_q[d] = clCreateCommandQueue(g_ctx, devs[d], 0, &err);
        g_t[d] = g_xfer ? clCreateCommandQueue(g_ctx, devs[d], 0, &err) : NULL;
    }
    const char* text = src;
    g_prog = clCreateProgramWithSource(g_ctx, 1, &text, NULL, &err);
    if (clBuildProgram(g_prog, g_ndev, devs, "", NULL, NULL) != CL_SUCCESS) {
        fprintf(stderr, "build failed\n");
        return 2;
    }
    if (g_shared)
        for (int ki = 0; ki < 2; ki++) g_k[ki] = clCreateKernel(g_prog, "axpi", &err);
    g_end = now_s() + seconds;
    pthread_t t[MAX_THREADS];
    for (unsigned i = 0; i < threads; i++) pthread_create(&t[i], NULL, worker, (void*)(size_t)i);
    for (unsigned i = 0; i < threads; i++) pthread_join(t[i], NULL);
    for (int ki = 0; ki < 2; ki++)
        if (g_k[ki]) clReleaseKernel(g_k[ki]);
    for (cl_uint d = 0; d < g_ndev; d++) {
        clReleaseCommandQueue(g_q[d]);
        if (g_t[d]) clReleaseCommandQueue(g_t[d]);
    }
    clReleaseProgram(g_prog);
    clReleaseContext(g_ctx);
    if (atomic_load(&g_bad)) return 1;
    printf("ok: %ld rounds, %u threads, %u device(s), %s%s%s%s\n", (long)atomic_load(&g_rounds), threads, g_ndev,
           g_plain ? "no sub-buffers" : "sub-buffers", g_shared ? ", shared kernels" : "",
           g_xfer ? ", transfer queues" : "", g_lock ? ", one lock" : "");
    return 0;
}
