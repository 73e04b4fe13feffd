/* SPDX-License-Identifier: MIT */
/* helper_profile.c: a fresh process for the tests of settings read when
 * libstdcl loads.
 *   times     runs a kernel on stdcpu device 0 with CL_EVENT_NORELEASE and
 *             prints "times ok" when clevent_times gives end >= start > 0,
 *             or "times error <code>: <clerror()>"
 *   buildlog  builds a text with a #warning as 'warned.cl' (clsopen_named)
 *             and prints "log <devnum>: <clbuildlog>" per device
 *   report    a known workload for the profile at exit (STDCL_PROFILE), with
 *             exact counts (a and b are 1024 ints, 4096 bytes):
 *               stdcpu: one build; a second clsopen of the same text (a
 *               reopen); device 0: 2 clmsync a to the device, 5 launches of
 *               'twice' (3 waited, 2 NOWAIT joined by clwait, one of them
 *               CL_EVENT_NOEVENT), 1 NOWAIT
 *               clmsync a to the host, 1 clmcopy a to b, 1 clmsync b to the
 *               host, 1 clreduce (int sum of a: its own build, and one
 *               launch of its kernel); device 1: 1 clmsync
 *               a to the device, 4 NOWAIT launches of 'twice' never waited
 *               for (the profile times them at exit);
 *               a context made by clcontext_create on the same platform and
 *               destroyed before exit: 2 launches of 'twice' on device 0;
 *               another made and never destroyed: 3 NOWAIT launches of
 *               'twice' on device 0.
 *             Prints "pid <pid>" first and "report ok" at the end.
 *   noforce   an input re-synced with CL_MEM_NOFORCE before each of 10
 *             launches that only read it (const), after
 *             clmctl(CL_MCTL_MARK_CLEAN); then a kernel that may write it and
 *             one more NOFORCE sync, which must move it.  Prints "noforce ok"
 *             when the results are right.  On device 0, 1024-int (4096-byte)
 *             arrays in and out.
 *   noforce_nomark  the same without CL_MCTL_MARK_CLEAN, and one plain clmsync
 *             of the unchanged input after the first
 *   prims     on stdcpu device 0: clsort of 4096 ints (CL_EVENT_WAIT), clscan
 *             (inclusive int sum, CL_EVENT_NOWAIT, then clwait) and clreduce
 *             (int sum) of them; prints "prims ok" when the results are right
 *             (the test reads each primitive kernel's row of the profile)
 *   stream    100 NOWAIT launches and one clwait (STDCL_LAUNCH_EVENTS):
 *             prints "returned: STDCL_LAUNCHED" or "returned: an event", and
 *             "stream ok" when the results are right
 * Exit status 0, or 1 when a call other than clevent_times fails. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <stdcl.h>

static const char* k_src = "__kernel void twice(__global int* a) { int i = get_global_id(0); a[i] = 2 * a[i]; }\n";
static const char* k_warn_src = "#warning stdcl-test-warning\n"
                                "__kernel void warned(__global int* a) { a[get_global_id(0)] = 7; }\n";

/* A context over stdcpu's platform (clcontext_create), or NULL. */
static CLCONTEXT* cpu_context(void)
{
    char name[256] = "";
    if (clGetPlatformInfo(stdcl_platform(stdcpu), CL_PLATFORM_NAME, sizeof name, name, NULL) != CL_SUCCESS) return NULL;
    return clcontext_create(name, CL_DEVICE_TYPE_CPU, 0, NULL, 0);
}

/* n launches of 'twice' over a (1024 ints) on device 0 of a new context;
 * destroyed afterwards when destroy. */
static int user_context_launches(int n, int destroy)
{
    CLCONTEXT* cx = cpu_context();
    void* h = cx ? clsopen(cx, k_src, 0) : NULL;
    cl_kernel k = h ? clsym(cx, h, "twice", 0) : NULL;
    int* a = k ? (int*)clmalloc(cx, 1024 * sizeof(int), 0) : NULL;
    if (!a) {
        printf("user context: %s\n", clerror());
        return 1;
    }
    clndrange_t ndr = clndrange_init1d(0, 1024, 0);
    for (int i = 0; i < n; i++)
        if (!clforka(cx, 0, k, &ndr, destroy ? CL_EVENT_WAIT : CL_EVENT_NOWAIT, a)) {
            printf("user context clforka: %s\n", clerror());
            return 1;
        }
    if (destroy && clcontext_destroy(cx) != 0) {
        printf("clcontext_destroy: %s\n", clerror());
        return 1;
    }
    return 0;
}

static int report_workload(void)
{
    printf("pid %ld\n", (long)getpid());
    fflush(stdout);
    void* h = clsopen(stdcpu, k_src, 0);
    void* h2 = h ? clsopen(stdcpu, k_src, 0) : NULL;
    cl_kernel k = h2 ? clsym(stdcpu, h, "twice", 0) : NULL;
    int* a = k ? (int*)clmalloc(stdcpu, 1024 * sizeof(int), 0) : NULL;
    int* b = a ? (int*)clmalloc(stdcpu, 1024 * sizeof(int), 0) : NULL;
    if (!b || clclose(stdcpu, h2) != 0) {
        printf("setup: %s\n", clerror());
        return 1;
    }
    for (int i = 0; i < 1024; i++) a[i] = i;
    clndrange_t ndr = clndrange_init1d(0, 1024, 0);
    int ok = 1;
    ok = ok && clmsync(stdcpu, 0, a, CL_MEM_DEVICE | CL_EVENT_WAIT);
    ok = ok && clmsync(stdcpu, 0, a, CL_MEM_DEVICE | CL_EVENT_WAIT);
    for (int i = 0; ok && i < 3; i++) ok = clforka(stdcpu, 0, k, &ndr, CL_EVENT_WAIT, a) != NULL;
    /* The second without an event: the profile still times it. */
    ok = ok && clforka(stdcpu, 0, k, &ndr, CL_EVENT_NOWAIT, a) != NULL;
    ok = ok && clforka(stdcpu, 0, k, &ndr, CL_EVENT_NOWAIT | CL_EVENT_NOEVENT, a) == STDCL_LAUNCHED;
    ok = ok && stdcl_wait(stdcpu, 0, CL_KERNEL_EVENT) == 0;
    ok = ok && clmsync(stdcpu, 0, a, CL_MEM_HOST | CL_EVENT_NOWAIT);
    ok = ok && stdcl_wait(stdcpu, 0, CL_MEM_EVENT) == 0;
    ok = ok && clmcopy(stdcpu, 0, a, b, CL_EVENT_WAIT);
    ok = ok && clmsync(stdcpu, 0, b, CL_MEM_HOST | CL_EVENT_WAIT);
    for (int i = 0; ok && i < 1024; i++)
        if (a[i] != 32 * i || b[i] != 32 * i) { /* 5 doublings */
            printf("wrong: a[%d] = %d, b[%d] = %d\n", i, a[i], i, b[i]);
            return 1;
        }
    cl_long sum = 0;
    if (ok && clreduce(stdcpu, 0, a, 1024, CL_REDUCE_INT, CL_REDUCE_SUM, &sum) != 0) ok = 0;
    if (ok && sum != 32L * 1023 * 1024 / 2) {
        printf("wrong: clreduce gave %lld\n", (long long)sum);
        return 1;
    }
    ok = ok && clmsync(stdcpu, 1, a, CL_MEM_DEVICE | CL_EVENT_WAIT);
    for (int i = 0; ok && i < 4; i++) ok = clforka(stdcpu, 1, k, &ndr, CL_EVENT_NOWAIT, a) != NULL;
    if (!ok) {
        printf("workload: %s\n", clerror());
        return 1;
    }
    if (user_context_launches(2, 1) || user_context_launches(3, 0)) return 1;
    printf("report ok\n");
    return 0; /* device 1's launches and the last context's are still running or unjoined */
}

static const char* k_addin_src =
    "__kernel void addin(__global int* out, __global const int* in) { int i = get_global_id(0); out[i] += in[i]; }\n"
    "__kernel void twice(__global int* a) { int i = get_global_id(0); a[i] = 2 * a[i]; }\n";

/* 0 when out[i] is factor * i for each i < n; else prints "<wrong>: out[i] =
 * <value>" for the first that is not, and returns 1. */
static int check_multiples(const int* out, int n, int factor, const char* wrong)
{
    for (int i = 0; i < n; i++)
        if (out[i] != factor * i) {
            printf("%s: out[%d] = %d\n", wrong, i, out[i]);
            return 1;
        }
    return 0;
}

/* The end of a workload that went right: prints "<what> ok", frees in and
 * out, closes h; 0. */
static int finish(const char* what, void* h, int* in, int* out)
{
    printf("%s ok\n", what);
    clfree(in);
    clfree(out);
    clclose(stdcpu, h);
    return 0;
}

static int noforce_workload(int mark)
{
    enum { N = 1024 };
    void* h = clsopen(stdcpu, k_addin_src, 0);
    cl_kernel add = h ? clsym(stdcpu, h, "addin", 0) : NULL;
    cl_kernel twice = h ? clsym(stdcpu, h, "twice", 0) : NULL;
    int* in = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
    int* out = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
    if (!add || !twice || !in || !out) {
        printf("setup: %s\n", clerror());
        return 1;
    }
    for (int i = 0; i < N; i++) in[i] = i, out[i] = 0;
    clndrange_t ndr = clndrange_init1d(0, N, 0);
    const int w = CL_MEM_DEVICE | CL_EVENT_WAIT;
    int ok = clmsync(stdcpu, 0, in, w) && clmsync(stdcpu, 0, out, w);
    if (mark) ok = ok && clmctl(in, CL_MCTL_MARK_CLEAN) == 0;
    if (!mark) ok = ok && clmsync(stdcpu, 0, in, w); /* sent, already there */
    for (int s = 0; ok && s < 10; s++)
        ok = clmsync(stdcpu, 0, in, w | CL_MEM_NOFORCE) && clforka(stdcpu, 0, add, &ndr, CL_EVENT_WAIT, out, in);
    ok = ok && clmsync(stdcpu, 0, out, CL_MEM_HOST | CL_EVENT_WAIT);
    if (ok && check_multiples(out, N, 10, "wrong after the loop")) return 1;
    /* A kernel that may write the input: the device's copy is not the host's. */
    ok = ok && clforka(stdcpu, 0, twice, &ndr, CL_EVENT_WAIT, in);
    ok = ok && clmsync(stdcpu, 0, in, w | CL_MEM_NOFORCE) && clforka(stdcpu, 0, add, &ndr, CL_EVENT_WAIT, out, in);
    ok = ok && clmsync(stdcpu, 0, out, CL_MEM_HOST | CL_EVENT_WAIT);
    if (!ok) {
        printf("noforce: %s\n", clerror());
        return 1;
    }
    if (check_multiples(out, N, 11, "wrong after the write")) return 1;
    return finish("noforce", h, in, out);
}

/* "stream": 100 NOWAIT launches of 'addin' (out += in) on device 0 and
 * one clwait; prints what the launches returned ("STDCL_LAUNCHED" or "an
 * event") and "stream ok" when out is right. */
static int stream_workload(void)
{
    enum { N = 1024, LAUNCHES = 100 };
    void* h = clsopen(stdcpu, k_addin_src, 0);
    cl_kernel add = h ? clsym(stdcpu, h, "addin", 0) : NULL;
    int* in = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
    int* out = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
    if (!add || !in || !out) {
        printf("setup: %s\n", clerror());
        return 1;
    }
    for (int i = 0; i < N; i++) in[i] = i, out[i] = 0;
    clndrange_t ndr = clndrange_init1d(0, N, 0);
    int ok = clmsync(stdcpu, 0, in, CL_MEM_DEVICE) && clmsync(stdcpu, 0, out, CL_MEM_DEVICE);
    int launched = 0, events = 0;
    for (int s = 0; ok && s < LAUNCHES; s++) {
        cl_event ev = clforka(stdcpu, 0, add, &ndr, CL_EVENT_NOWAIT, out, in);
        ok = ev != NULL;
        launched += ev == STDCL_LAUNCHED;
        events += ev && ev != STDCL_LAUNCHED;
    }
    ok = ok && stdcl_wait(stdcpu, 0, CL_KERNEL_EVENT) == 0 && clmsync(stdcpu, 0, out, CL_MEM_HOST);
    if (!ok) {
        printf("stream: %s\n", clerror());
        return 1;
    }
    printf("returned: %s\n", launched == LAUNCHES ? "STDCL_LAUNCHED" : events == LAUNCHES ? "an event" : "a mix");
    if (check_multiples(out, N, LAUNCHES, "wrong")) return 1;
    return finish("stream", h, in, out);
}

static int prims_workload(void)
{
    enum { N = 4096 };
    int* k = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
    int* s = k ? (int*)clmalloc(stdcpu, N * sizeof(int), 0) : NULL;
    if (!s) {
        printf("clmalloc: %s\n", clerror());
        return 1;
    }
    for (int i = 0; i < N; i++) k[i] = (N - 1 - i) * 7 % N - N / 2; /* a permutation of -N/2 .. N/2-1 */
    int sum = 0; /* clreduce writes an int for CL_REDUCE_INT */
    int ok = clmsync(stdcpu, 0, k, CL_MEM_DEVICE | CL_EVENT_WAIT) != NULL;
    ok = ok && clsort(stdcpu, 0, k, N, CL_REDUCE_INT, CL_EVENT_WAIT) == 0;
    ok = ok && clscan(stdcpu, 0, k, s, N, CL_REDUCE_INT, CL_REDUCE_SUM, CL_EVENT_NOWAIT) == 0;
    ok = ok && stdcl_wait(stdcpu, 0, CL_KERNEL_EVENT) == 0;
    ok = ok && clreduce(stdcpu, 0, k, N, CL_REDUCE_INT, CL_REDUCE_SUM, &sum) == 0;
    ok = ok && clmsync(stdcpu, 0, k, CL_MEM_HOST | CL_EVENT_WAIT) != NULL;
    ok = ok && clmsync(stdcpu, 0, s, CL_MEM_HOST | CL_EVENT_WAIT) != NULL;
    if (!ok) {
        printf("prims: %s\n", clerror());
        return 1;
    }
    long run = 0;
    for (int i = 0; i < N; i++) {
        run += k[i];
        if (k[i] != i - N / 2 || s[i] != run) {
            printf("wrong: k[%d] = %d, s[%d] = %d\n", i, k[i], i, s[i]);
            return 1;
        }
    }
    if (sum != -N / 2) {
        printf("wrong: clreduce gave %d\n", sum);
        return 1;
    }
    printf("prims ok\n");
    return 0;
}

int main(int argc, char** argv)
{
    if (!stdcpu) {
        printf("no stdcpu: %s\n", clerror());
        return 1;
    }
    if (argc > 1 && strcmp(argv[1], "report") == 0) return report_workload();
    if (argc > 1 && strcmp(argv[1], "noforce") == 0) return noforce_workload(1);
    if (argc > 1 && strcmp(argv[1], "stream") == 0) return stream_workload();
    if (argc > 1 && strcmp(argv[1], "prims") == 0) return prims_workload();
    if (argc > 1 && strcmp(argv[1], "noforce_nomark") == 0) return noforce_workload(0);
    if (argc > 1 && strcmp(argv[1], "buildlog") == 0) {
        void* h = clsopen_named(stdcpu, k_warn_src, "warned.cl", 0);
        if (!h) {
            printf("clsopen_named: %s\n", clerror());
            return 1;
        }
        for (unsigned d = 0; d < clgetndev(stdcpu); d++) printf("log %u: %s\n", d, clbuildlog(stdcpu, h, d));
        return 0;
    }
    void* h = clsopen(stdcpu, k_src, 0);
    cl_kernel k = h ? clsym(stdcpu, h, "twice", 0) : NULL;
    int* a = (int*)clmalloc(stdcpu, 1024 * sizeof(int), 0);
    if (!k || !a) {
        printf("setup: %s\n", clerror());
        return 1;
    }
    for (int i = 0; i < 1024; i++) a[i] = i;
    clmsync(stdcpu, 0, a, CL_MEM_DEVICE);
    clndrange_t ndr = clndrange_init1d(0, 1024, 0);
    cl_event ev = clforka(stdcpu, 0, k, &ndr, CL_EVENT_WAIT | CL_EVENT_NORELEASE, a);
    if (!ev) {
        printf("clforka: %s\n", clerror());
        return 1;
    }
    cl_ulong t0 = 0, t1 = 0;
    int rc = clevent_times(ev, &t0, &t1);
    if (rc == 0 && t0 > 0 && t1 >= t0)
        printf("times ok (%llu ns)\n", (unsigned long long)(t1 - t0));
    else if (rc == 0)
        printf("times wrong: start %llu end %llu\n", (unsigned long long)t0, (unsigned long long)t1);
    else
        printf("times error %d: %s\n", rc, clerror());
    clReleaseEvent(ev);
    clfree(a);
    clclose(stdcpu, h);
    return 0;
}
