// SPDX-License-Identifier: MIT
// clcalls_shim.c: where a program's host time goes between and in its OpenCL
// calls.  Preloaded (LD_PRELOAD) in front of the ICD loader, it times each call
// of the functions below (CLOCK_MONOTONIC, on entry and on return) and, at
// exit, writes the last CLCALLS_KEEP calls (default 400) to CLCALLS_OUT
// (default stderr), one line each: the call's name, its start less the
// previous call's return ("before", the host's own work between them), and
// its own time, in microseconds.  A run of the same function called again and
// again (a wait polling an event's status) is one line with its count.
//
//   gcc -shared -fPIC -O2 -o build/bench/clcalls_shim.so bench/clcalls_shim.c -ldl
//   LD_PRELOAD=$PWD/build/bench/clcalls_shim.so CLCALLS_OUT=calls.txt PROGRAM ...
//
// A program marks its own steps with clcalls_mark("text") where it finds the
// symbol (dlsym(RTLD_DEFAULT, "clcalls_mark")): a line "mark text" between
// the calls.
#define _GNU_SOURCE
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    const char* name;
    double start, end;  // us
    unsigned count;
    char mark[48];
} Call;

static Call* g_ring;
static size_t g_keep, g_next, g_total;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void record(const char* name, double t0, double t1, const char* mark)
{
    pthread_mutex_lock(&g_mu);
    if (!g_ring) {
        const char* k = getenv("CLCALLS_KEEP");
        g_keep = k && atoi(k) > 0 ? (size_t)atoi(k) : 400;
        g_ring = calloc(g_keep, sizeof *g_ring);
    }
    if (g_ring) {
        Call* last = g_total ? &g_ring[(g_next + g_keep - 1) % g_keep] : NULL;
        if (!mark && last && last->name == name && !last->mark[0]) {
            last->end = t1;
            last->count++;
        } else {
            Call* c = &g_ring[g_next];
            c->name = name;
            c->start = t0;
            c->end = t1;
            c->count = 1;
            c->mark[0] = 0;
            if (mark) snprintf(c->mark, sizeof c->mark, "%s", mark);
            g_next = (g_next + 1) % g_keep;
            g_total++;
        }
    }
    pthread_mutex_unlock(&g_mu);
}

void clcalls_mark(const char* text)
{
    double t = now_us();
    record("mark", t, t, text ? text : "");
}

__attribute__((destructor)) static void dump(void)
{
    if (!g_ring) return;
    const char* path = getenv("CLCALLS_OUT");
    FILE* f = path && *path ? fopen(path, "w") : stderr;
    if (!f) return;
    size_t n = g_total < g_keep ? g_total : g_keep;
    size_t first = (g_next + g_keep - n) % g_keep;
    double prev = -1;
    fprintf(f, "# call, count: before (us), own (us)\n");
    for (size_t i = 0; i < n; ++i) {
        const Call* c = &g_ring[(first + i) % g_keep];
        double before = prev < 0 ? 0 : c->start - prev;
        if (c->mark[0])
            fprintf(f, "mark %s: %.1f\n", c->mark, before);
        else
            fprintf(f, "%s x%u: %.1f, %.1f\n", c->name, c->count, before, c->end - c->start);
        prev = c->end;
    }
    if (f != stderr) fclose(f);
}

#define REAL(fn) \
    static __typeof__(&fn) real; \
    if (!real) real = (__typeof__(&fn))dlsym(RTLD_NEXT, #fn)

#define WRAP(ret, fn, params, args) \
    ret fn params \
    { \
        REAL(fn); \
        double t0 = now_us(); \
        ret result_ = real args; \
        record(#fn, t0, now_us(), NULL); \
        return result_; \
    }

WRAP(cl_int, clSetKernelArg, (cl_kernel k, cl_uint i, size_t s, const void* v), (k, i, s, v))
WRAP(cl_int, clEnqueueNDRangeKernel,
     (cl_command_queue q, cl_kernel k, cl_uint d, const size_t* o, const size_t* g, const size_t* l, cl_uint n,
      const cl_event* w, cl_event* e),
     (q, k, d, o, g, l, n, w, e))
WRAP(cl_int, clEnqueueFillBuffer,
     (cl_command_queue q, cl_mem m, const void* p, size_t ps, size_t o, size_t s, cl_uint n, const cl_event* w,
      cl_event* e),
     (q, m, p, ps, o, s, n, w, e))
WRAP(cl_int, clEnqueueReadBuffer,
     (cl_command_queue q, cl_mem m, cl_bool b, size_t o, size_t s, void* p, cl_uint n, const cl_event* w, cl_event* e),
     (q, m, b, o, s, p, n, w, e))
WRAP(cl_int, clEnqueueWriteBuffer,
     (cl_command_queue q, cl_mem m, cl_bool b, size_t o, size_t s, const void* p, cl_uint n, const cl_event* w,
      cl_event* e),
     (q, m, b, o, s, p, n, w, e))
WRAP(cl_int, clEnqueueMarkerWithWaitList, (cl_command_queue q, cl_uint n, const cl_event* w, cl_event* e),
     (q, n, w, e))
WRAP(cl_int, clEnqueueBarrierWithWaitList, (cl_command_queue q, cl_uint n, const cl_event* w, cl_event* e),
     (q, n, w, e))
WRAP(cl_int, clFlush, (cl_command_queue q), (q))
WRAP(cl_int, clFinish, (cl_command_queue q), (q))
WRAP(cl_int, clWaitForEvents, (cl_uint n, const cl_event* e), (n, e))
WRAP(cl_int, clGetEventInfo, (cl_event e, cl_event_info i, size_t s, void* v, size_t* r), (e, i, s, v, r))
WRAP(cl_int, clGetEventProfilingInfo, (cl_event e, cl_profiling_info i, size_t s, void* v, size_t* r),
     (e, i, s, v, r))
WRAP(cl_int, clGetDeviceInfo, (cl_device_id d, cl_device_info i, size_t s, void* v, size_t* r), (d, i, s, v, r))
WRAP(cl_int, clRetainEvent, (cl_event e), (e))
WRAP(cl_int, clReleaseEvent, (cl_event e), (e))
WRAP(cl_int, clSetEventCallback, (cl_event e, cl_int t, void(CL_CALLBACK* f)(cl_event, cl_int, void*), void* u),
     (e, t, f, u))
WRAP(cl_event, clCreateUserEvent, (cl_context c, cl_int* err), (c, err))
WRAP(cl_int, clSetUserEventStatus, (cl_event e, cl_int s), (e, s))
WRAP(cl_mem, clCreateBuffer, (cl_context c, cl_mem_flags f, size_t s, void* h, cl_int* err), (c, f, s, h, err))
WRAP(cl_int, clReleaseMemObject, (cl_mem m), (m))
WRAP(cl_int, clRetainMemObject, (cl_mem m), (m))
WRAP(cl_int, clRetainKernel, (cl_kernel k), (k))
WRAP(cl_int, clReleaseKernel, (cl_kernel k), (k))
WRAP(cl_int, clGetKernelWorkGroupInfo,
     (cl_kernel k, cl_device_id d, cl_kernel_work_group_info i, size_t s, void* v, size_t* r), (k, d, i, s, v, r))
WRAP(cl_int, clGetMemObjectInfo, (cl_mem m, cl_mem_info i, size_t s, void* v, size_t* r), (m, i, s, v, r))
WRAP(cl_int, clGetCommandQueueInfo, (cl_command_queue q, cl_command_queue_info i, size_t s, void* v, size_t* r),
     (q, i, s, v, r))
