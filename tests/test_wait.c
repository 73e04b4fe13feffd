/* SPDX-License-Identifier: MIT */
/* test_wait.c: the library's waits under each policy (STDCL_WAIT: driver,
 * block, yield, adaptive, auto).  The policy is read when the library loads, so each
 * case runs this program again (--paths, --sleep) with STDCL_WAIT set:
 *   --paths  every wait path of the library, with results checked: clfork
 *            waited for, NOWAIT launches joined by clwait, launches without
 *            an event (a queue finished, a marker beside tracked events),
 *            clmsync both ways below and above the size a polled wait
 *            enqueues without blocking (1 MiB), clmsync and clwait over
 *            CL_ALL_DEVICES, clwaitev, clfree of memory a NOWAIT launch
 *            uses, clscan over every device (it waits for each slice's
 *            total), clreduce on one device and on every device (its
 *            value's read), and a context destroyed with work pending
 *            after a clreduce;
 *   --sleep  a kernel of about 300 ms waited for by clfork(CL_EVENT_WAIT)
 *            and by clwait: prints the waiting thread's CPU time over the
 *            wait's wall time, and checks that the thread's timer slack
 *            (Linux), which a polled wait tightens while it sleeps, is the
 *            thread's own again after each wait; then short launches waited
 *            for.
 * On stddev (two PoCL devices in the tests), or stdgpu with
 * STDCL_TEST_CONTEXT=gpu (make check-gpu). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include <cmocka.h>

#include <stdcl.h>

#include "test_util.h"

static const char* g_self;

static CLCONTEXT* chosen(void)
{
    const char* which = getenv("STDCL_TEST_CONTEXT");
    return which && strcmp(which, "gpu") == 0 ? stdgpu : stddev;
}

static const char* src = "__kernel void add(__global int* a, int v) { a[get_global_id(0)] += v; }\n"
                         "__kernel void busy(__global float* a, int n)\n"
                         "{\n"
                         "    size_t i = get_global_id(0);\n"
                         "    float v = a[i];\n"
                         "    for (int k = 0; k < n; ++k) v = v * 0.999999f + 0.5f;\n"
                         "    a[i] = v;\n"
                         "}\n";

static int g_bad;

static void expect(int ok, const char* what)
{
    if (!ok) {
        const char* e = clerror();
        fprintf(stderr, "test_wait: %s failed%s%s\n", what, e ? ": " : "", e ? e : "");
        g_bad = 1;
    }
}

/* Every element of a[0..n) is want. */
static void expect_all(const int* a, size_t n, int want, const char* what)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] != want) {
            fprintf(stderr, "test_wait: %s: element %zu is %d, not %d\n", what, i, a[i], want);
            g_bad = 1;
            return;
        }
}

static int paths(void)
{
    CLCONTEXT* cp = chosen();
    if (!cp) {
        fprintf(stderr, "test_wait: no context\n");
        return 2;
    }
    unsigned ndev = clgetndev(cp);
    void* h = clsopen(cp, src, CLLD_NOW);
    cl_kernel add = h ? clsym(cp, h, "add", CLLD_NOW) : NULL;
    if (!add) {
        expect(0, "clsopen");
        return 1;
    }
    enum { SMALL = 1024, BIG = (2 << 20) / 4 };
    int* a = (int*)clmalloc(cp, BIG * sizeof(int), 0);
    expect(a != NULL, "clmalloc");
    if (!a) return 1;
    for (size_t i = 0; i < BIG; i++) a[i] = 1;
    clndrange_t small = clndrange_init1d(0, SMALL, 0), big = clndrange_init1d(0, BIG, 0);

    /* Above 1 MiB: a polled wait enqueues it without blocking. */
    expect(clmsync(cp, 0, a, CL_MEM_DEVICE | CL_EVENT_WAIT) != NULL, "clmsync 2 MiB to the device");
    expect(clarg_set_global(cp, add, 0, a) == 0 && clarg_set(cp, add, 1, 1) == 0, "clarg_set");
    expect(clfork(cp, 0, add, &big, CL_EVENT_WAIT) != NULL, "clfork(WAIT)");
    for (int i = 0; i < 3; i++) expect(clfork(cp, 0, add, &big, CL_EVENT_NOWAIT) != NULL, "clfork(NOWAIT)");
    expect(clwait(cp, 0, CL_KERNEL_EVENT) != NULL, "clwait(CL_KERNEL_EVENT)");
    /* Launches without an event: clwait finishes the queue. */
    for (int i = 0; i < 2; i++)
        expect(clfork(cp, 0, add, &big, CL_EVENT_NOWAIT | CL_EVENT_NOEVENT) != NULL, "clfork(NOEVENT)");
    expect(clwait(cp, 0, CL_ALL_EVENT) != NULL, "clwait after NOEVENT launches");
    expect(clmsync(cp, 0, a, CL_MEM_HOST | CL_EVENT_WAIT) != NULL, "clmsync 2 MiB to the host");
    expect_all(a, BIG, 7, "after 6 launches");

    /* Below 1 MiB: the driver's blocking transfer under every policy. */
    for (size_t i = 0; i < SMALL; i++) a[i] = 10;
    expect(clmsync(cp, 0, a, CL_MEM_DEVICE | CL_EVENT_WAIT) != NULL, "clmsync to the device");
    /* A launch without an event beside a tracked transfer: a marker. */
    expect(clfork(cp, 0, add, &small, CL_EVENT_NOWAIT | CL_EVENT_NOEVENT) != NULL, "clfork(NOEVENT)");
    expect(clmsync(cp, 0, a, CL_MEM_HOST | CL_EVENT_NOWAIT) != NULL, "clmsync(NOWAIT) to the host");
    expect(clwait(cp, 0, CL_ALL_EVENT) != NULL, "clwait(CL_ALL_EVENT)");
    expect_all(a, SMALL, 11, "after a NOEVENT launch and a NOWAIT download");

    /* clwaitev on an event handed over. */
    cl_event ev = clfork(cp, 0, add, &small, CL_EVENT_NOWAIT | CL_EVENT_NORELEASE);
    expect(ev != NULL, "clfork(NORELEASE)");
    if (ev) expect(clwaitev(cp, 0, ev, CL_EVENT_RELEASE) != NULL, "clwaitev");
    expect(clwait(cp, 0, CL_ALL_EVENT) != NULL, "clwait after clwaitev");
    expect(clmsync(cp, 0, a, CL_MEM_HOST | CL_EVENT_WAIT) != NULL, "clmsync to the host");
    expect_all(a, SMALL, 12, "after clwaitev");

    /* Every device: transfers waited for together, then a launch on each. */
    for (size_t i = 0; i < BIG; i++) a[i] = 20;
    expect(clmsync(cp, CL_ALL_DEVICES, a, CL_MEM_DEVICE | CL_EVENT_WAIT) != NULL, "clmsync(CL_ALL_DEVICES)");
    size_t part = BIG / ndev;
    for (unsigned d = 0; d < ndev; d++) {
        clndrange_t nd = clndrange_init1d(d * part, part, 0);
        expect(clfork(cp, d, add, &nd, CL_EVENT_NOWAIT) != NULL, "clfork on each device");
        expect(clmsyncn(cp, d, a + d * part, part * sizeof(int), CL_MEM_HOST | CL_EVENT_NOWAIT) != NULL,
               "clmsyncn(NOWAIT) back");
    }
    expect(clwait(cp, CL_ALL_DEVICES, CL_ALL_EVENT) != NULL, "clwait(CL_ALL_DEVICES)");
    expect_all(a, part * ndev, 21, "after a launch on each device");

    /* clscan over every device waits for each slice's total. */
    expect(clmsync(cp, CL_ALL_DEVICES, a, CL_MEM_DEVICE | CL_EVENT_WAIT) != NULL, "clmsync for clscan");
    int* out = (int*)clmalloc(cp, BIG * sizeof(int), 0);
    expect(out != NULL, "clmalloc out");
    if (out) {
        expect(clscan(cp, CL_ALL_DEVICES, a, out, BIG, CL_REDUCE_INT, CL_REDUCE_SUM, CL_EVENT_WAIT) == 0, "clscan");
        size_t slice = BIG / ndev;
        for (unsigned d = 0; d < ndev; d++) {
            size_t from = d * slice, n = d + 1 == ndev ? BIG - from : slice;
            expect(clmsyncn(cp, d, out + from, n * sizeof(int), CL_MEM_HOST | CL_EVENT_WAIT) != NULL, "clmsyncn");
        }
        for (size_t i = 0; i < BIG; i += 4097)
            if (out[i] != (int)(21 * (i + 1))) {
                fprintf(stderr, "test_wait: clscan: out[%zu] is %d, not %d\n", i, out[i], (int)(21 * (i + 1)));
                g_bad = 1;
                break;
            }
        clfree(out);
    }

    /* clreduce brings its value back with a blocking read, or where the waits
     * poll (block, yield, adaptive) into pinned memory, the read's status
     * polled: on one device and on every device, twice (the pinned memory
     * kept from the first call). */
    for (int i = 0; i < 2; i++) {
        int sum = 0;
        expect(clreduce(cp, 0, a, BIG, CL_REDUCE_INT, CL_REDUCE_SUM, &sum) == 0 && sum == 21 * BIG,
               "clreduce on device 0");
        sum = 0;
        expect(clreduce(cp, CL_ALL_DEVICES, a, BIG, CL_REDUCE_INT, CL_REDUCE_SUM, &sum) == 0 && sum == 21 * BIG,
               "clreduce(CL_ALL_DEVICES)");
    }

    /* clfree of memory a NOWAIT launch still uses waits for it. */
    int* b = (int*)clmalloc(cp, SMALL * sizeof(int), 0);
    expect(b != NULL, "clmalloc b");
    if (b) {
        expect(clmsync(cp, 0, b, CL_MEM_DEVICE | CL_EVENT_WAIT) != NULL, "clmsync b");
        expect(clarg_set_global(cp, add, 0, b) == 0, "clarg_set_global b");
        expect(clfork(cp, 0, add, &small, CL_EVENT_NOWAIT) != NULL, "clfork(NOWAIT) on b");
        expect(clfork(cp, 0, add, &small, CL_EVENT_NOWAIT | CL_EVENT_NOEVENT) != NULL, "clfork(NOEVENT) on b");
        expect(clfree(b) == 0, "clfree with launches pending");
        expect(clwait(cp, 0, CL_ALL_EVENT) != NULL, "clwait after clfree");
    }
    clfree(a);
    clclose(cp, h);

    /* A context destroyed with a launch pending waits for it. */
    CLCONTEXT* own = clcontext_create(NULL, cp == stdgpu ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_ALL, 0, NULL, 0);
    expect(own != NULL, "clcontext_create");
    if (own) {
        void* oh = clsopen(own, src, CLLD_NOW);
        cl_kernel oadd = oh ? clsym(own, oh, "add", CLLD_NOW) : NULL;
        int* c = (int*)clmalloc(own, BIG * sizeof(int), 0);
        expect(oadd && c, "a kernel and memory in the new context");
        if (oadd && c) {
            expect(clarg_set_global(own, oadd, 0, c) == 0 && clarg_set(own, oadd, 1, 1) == 0, "clarg_set");
            for (size_t i = 0; i < BIG; i++) c[i] = 1;
            expect(clmsync(own, 0, c, CL_MEM_DEVICE | CL_EVENT_NOWAIT) != NULL, "clmsync(NOWAIT) in the new context");
            expect(clfork(own, 0, oadd, &big, CL_EVENT_NOWAIT) != NULL, "clfork(NOWAIT) in the new context");
            /* after the launch; its pinned memory goes with the context */
            int sum = 0;
            expect(clreduce(own, 0, c, BIG, CL_REDUCE_INT, CL_REDUCE_SUM, &sum) == 0 && sum == 2 * BIG,
                   "clreduce after a NOWAIT launch in the new context");
            expect(clfork(own, 0, oadd, &big, CL_EVENT_NOWAIT) != NULL, "clfork(NOWAIT) after clreduce");
        }
        if (c) clfree(c);
        if (oh) clclose(own, oh);
        expect(clcontext_destroy(own) == 0, "clcontext_destroy");
    }
    return g_bad;
}

static double now_s(clockid_t c)
{
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec + t.tv_nsec / 1e9;
}

static int sleep_check(void)
{
    CLCONTEXT* cp = chosen();
    void* h = cp ? clsopen(cp, src, CLLD_NOW) : NULL;
    cl_kernel busy = h ? clsym(cp, h, "busy", CLLD_NOW) : NULL;
    float* a = busy ? (float*)clmalloc(cp, 64 * sizeof(float), 0) : NULL;
    if (!a) {
        expect(0, "setting up");
        return 1;
    }
    for (int i = 0; i < 64; i++) a[i] = 1.0f;
    expect(clmsync(cp, 0, a, CL_MEM_DEVICE | CL_EVENT_WAIT) != NULL, "clmsync");
    clndrange_t nd = clndrange_init1d(0, 64, 64);
    expect(clarg_set_global(cp, busy, 0, a) == 0, "clarg_set_global");
    /* n for about 300 ms, from the time of a shorter kernel (after a first
     * launch, which may compile the kernel for its work-group size). */
    expect(clarg_set(cp, busy, 1, 1) == 0 && clfork(cp, 0, busy, &nd, CL_EVENT_WAIT) != NULL, "a first launch");
    int n = 1 << 12;
    double t = 0;
    for (;;) {
        expect(clarg_set(cp, busy, 1, n) == 0, "clarg_set");
        double t0 = now_s(CLOCK_MONOTONIC);
        expect(clfork(cp, 0, busy, &nd, CL_EVENT_WAIT) != NULL, "clfork");
        t = now_s(CLOCK_MONOTONIC) - t0;
        if (t > 0.03 || n >= (1 << 30) || g_bad) break;
        n *= 2;
    }
    double want = 0.3 / t * n;
    n = want > 2e9 ? 2000000000 : (int)want;
    expect(clarg_set(cp, busy, 1, n) == 0, "clarg_set");
#if defined(__linux__)
    const long slack = 777000; /* the thread's own, in ns */
    expect(prctl(PR_SET_TIMERSLACK, (unsigned long)slack, 0, 0, 0) == 0, "setting the thread's timer slack");
#endif
    for (int form = 0; form < 2; form++) {
        double w0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_THREAD_CPUTIME_ID);
        if (form == 0) {
            expect(clfork(cp, 0, busy, &nd, CL_EVENT_WAIT) != NULL, "clfork(WAIT)");
        } else {
            expect(clfork(cp, 0, busy, &nd, CL_EVENT_NOWAIT) != NULL, "clfork(NOWAIT)");
            expect(clwait(cp, 0, CL_KERNEL_EVENT) != NULL, "clwait");
        }
        double w = now_s(CLOCK_MONOTONIC) - w0, c = now_s(CLOCK_THREAD_CPUTIME_ID) - c0;
        printf("%s %.4f %.4f\n", form ? "clwait" : "clfork", w, c);
#if defined(__linux__)
        long now = prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
        if (now != slack) fprintf(stderr, "test_wait: timer slack %ld ns after the wait, not %ld\n", now, slack);
        expect(now == slack, "the thread's timer slack, after the wait");
#endif
    }
    /* Short waits again (adaptive: the driver's from the first one that ends
     * within the spin). */
    expect(clarg_set(cp, busy, 1, 1) == 0, "clarg_set");
    for (int i = 0; i < 10; i++) expect(clfork(cp, 0, busy, &nd, CL_EVENT_WAIT) != NULL, "a short clfork(WAIT)");
    clfree(a);
    clclose(cp, h);
    return g_bad;
}

/* Runs this program with mode and STDCL_WAIT=policy (NULL: unset), the
 * context trace on; r holds the result. */
static void run_self(tu_proc* r, const char* mode, const char* policy)
{
    char setting[64];
    snprintf(setting, sizeof setting, "STDCL_WAIT=%s", policy ? policy : "");
    const char* args[] = {mode, NULL};
    const char* env[] = {policy ? setting : "STDCL_WAIT", "STDCL_TRACE=ctx", NULL};
    tu_spawn(r, g_self, args, env, NULL, 240);
}

static void test_every_wait_path_under_each_policy(void** state)
{
    (void)state;
    const char* policies[] = {"driver", "block", "yield", "adaptive"};
    for (size_t i = 0; i < tu_countof(policies); i++) {
        tu_proc r;
        run_self(&r, "--paths", policies[i]);
        char want[64];
        snprintf(want, sizeof want, "waits: %s", policies[i]);
        if (r.status != 0 || !tu_contains(r.err, want)) tu_proc_dump(&r, policies[i]);
        assert_int_equal(r.status, 0);
        assert_contains(r.err, want);
        tu_proc_free(&r);
    }
}

static void test_auto_adapts_on_nvidia_only(void** state)
{
    (void)state;
    const char* names[] = {"auto", NULL};
    for (size_t i = 0; i < tu_countof(names); i++) {
        tu_proc r;
        run_self(&r, "--paths", names[i]);
        if (r.status != 0) tu_proc_dump(&r, "auto");
        assert_int_equal(r.status, 0);
        CLCONTEXT* cp = chosen();
        char plat[256] = "";
        if (cp) clGetPlatformInfo(stdcl_platform(cp), CL_PLATFORM_NAME, sizeof plat, plat, NULL);
        assert_contains(r.err, tu_icontains(plat, "nvidia") ? "waits: adaptive" : "waits: driver");
        tu_proc_free(&r);
    }
}

static void test_unknown_policy_warns_and_waits_as_auto(void** state)
{
    (void)state;
    tu_proc r;
    run_self(&r, "--paths", "sometimes");
    if (r.status != 0) tu_proc_dump(&r, "sometimes");
    assert_int_equal(r.status, 0);
    assert_contains(r.err, "STDCL_WAIT='sometimes' is not one of auto, driver, block, yield, adaptive: auto");
    tu_proc_free(&r);
}

/* Under block, and under adaptive once a wait was long (the calibration's),
 * the waiting thread sleeps: a 300 ms wait costs it well under a quarter of
 * its wall time (spinning costs all of it). */
static void test_long_waits_sleep(void** state)
{
    (void)state;
    const char* policies[] = {"block", "adaptive"};
    for (size_t i = 0; i < tu_countof(policies); i++) {
        tu_proc r;
        run_self(&r, "--sleep", policies[i]);
        if (r.status != 0) tu_proc_dump(&r, policies[i]);
        assert_int_equal(r.status, 0);
        if (strcmp(policies[i], "adaptive") == 0) assert_contains(r.err, "its waits poll and sleep (adaptive)");
        const char* p = r.out;
        for (int form = 0; form < 2; form++) {
            char name[16];
            double wall = 0, cpu = 0;
            int got = 0;
            assert_int_equal(sscanf(p, "%15s %lf %lf%n", name, &wall, &cpu, &got), 3);
            p += got;
            print_message("%s: %s waited %.3f s, using %.4f s of CPU (%.1f%%)\n", policies[i], name, wall, cpu,
                          100.0 * cpu / wall);
            assert_true(wall > 0.05);
            assert_true(cpu < 0.25 * wall);
        }
        tu_proc_free(&r);
    }
}

/* Under adaptive, short waits are the driver's again: after the long
 * kernel, a run of short launches brings the device back. */
static void test_adaptive_returns_to_the_driver_after_short_waits(void** state)
{
    (void)state;
    tu_proc r;
    run_self(&r, "--sleep", "adaptive");
    if (r.status != 0) tu_proc_dump(&r, "adaptive");
    assert_int_equal(r.status, 0);
    assert_contains(r.err, "its waits are the driver's again (adaptive)");
    tu_proc_free(&r);
}

int main(int argc, char** argv)
{
    g_self = argv[0];
    if (argc > 1 && strcmp(argv[1], "--paths") == 0) return paths();
    if (argc > 1 && strcmp(argv[1], "--sleep") == 0) return sleep_check();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_wait_path_under_each_policy),
        cmocka_unit_test(test_auto_adapts_on_nvidia_only),
        cmocka_unit_test(test_unknown_policy_warns_and_waits_as_auto),
        cmocka_unit_test(test_long_waits_sleep),
        cmocka_unit_test(test_adaptive_returns_to_the_driver_after_short_waits),
    };
    return tu_run_tests(argc, argv, "wait", tests, NULL, NULL);
}
