/* SPDX-License-Identifier: MIT */
/* test_exit.c: the process ends, or a context goes, while other threads are
 * inside libstdcl calls (helper_exit.c): it ends at once, cleanly, and
 * nothing is released under a call in flight.
 *
 * Each test runs the helper 100 times in a row (STDCL_EXIT_RUNS, through
 * STDCL_TEST_ENV under tools/test_env.sh), on stdcpu (both PoCL devices), or
 * stdgpu with STDCL_TEST_CONTEXT=gpu. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_util.h"

static unsigned runs(void)
{
    const char* v = getenv("STDCL_EXIT_RUNS");
    long n = v ? strtol(v, NULL, 10) : 100;
    return n > 0 && n <= 100000 ? (unsigned)n : 100;
}

/* How soon after exit() the process must be gone: a second, or five under a
 * sanitizer, whose own work at exit (the leak check) comes on top. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
static const double k_limit_s = 5.0;
#else
static const double k_limit_s = 1.0;
#endif

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* One thread calls exit(0) while 15 others allocate, sync, launch and wait:
 * the process ends with status 0 within a second of the call (k_limit_s),
 * every time. */
static void test_exit_while_other_threads_are_in_calls(void** state)
{
    (void)state;
    unsigned n = runs();
    double worst = 0;
    for (unsigned i = 0; i < n; i++) {
        tu_proc r;
        const char* args[] = {"exit", NULL};
        tu_spawn(&r, tu_helper("helper_exit"), args, NULL, NULL, 30);
        long long end = now_ns();
        const char* at = strstr(r.out, "exit at ");
        if (r.status != 0 || !at) {
            print_error("run %u of %u:\n", i + 1, n);
            tu_proc_dump(&r, "helper_exit exit");
        }
        assert_int_equal(r.status, 0);
        assert_non_null(at);
        double took = (double)(end - strtoll(at + 8, NULL, 10)) / 1e9;
        if (took > worst) worst = took;
        if (took >= k_limit_s) print_error("run %u of %u: the process ended %.2f s after exit()\n", i + 1, n, took);
        assert_true(took < k_limit_s);
        tu_proc_free(&r);
    }
    print_message("exit: %u runs, each ended within %.3f s of exit()\n", n, worst);
}

/* clcontext_destroy while 16 threads use the context: it waits for the calls
 * in flight, later calls fail as calls on a destroyed context, nothing
 * crashes, and the results of every call that worked are right. */
static void test_clcontext_destroy_while_other_threads_are_in_calls(void** state)
{
    (void)state;
    unsigned n = runs();
    for (unsigned i = 0; i < n; i++) {
        tu_proc r;
        const char* args[] = {"destroy", NULL};
        tu_spawn(&r, tu_helper("helper_exit"), args, NULL, NULL, 30);
        if (r.status != 0 || !tu_contains(r.out, "destroyed; ")) {
            print_error("run %u of %u:\n", i + 1, n);
            tu_proc_dump(&r, "helper_exit destroy");
        }
        assert_int_equal(r.status, 0);
        assert_contains(r.out, "destroyed; ");
        tu_proc_free(&r);
    }
}

/* clcontext_destroy of a context twice, or of a default one: refused, and
 * the context (the default one) still works. */
static void test_clcontext_destroy_refuses_what_it_cannot_destroy(void** state)
{
    (void)state;
    if (tu_need_two_cpu_devices() != 0) skip();
    assert_int_equal(clcontext_destroy(stdcpu), STDCL_EINVAL);
    assert_contains(clerror(), "is a default context");
    CLCONTEXT* cp = clcontext_create(NULL, CL_DEVICE_TYPE_CPU, 0, NULL, 0);
    assert_non_null(cp);
    assert_int_equal(clcontext_destroy(cp), 0);
    assert_int_equal(clcontext_destroy(cp), STDCL_EINVAL);
    assert_contains(clerror(), "not a live libstdcl context");
    int* a = (int*)clmalloc(stdcpu, 64 * sizeof(int), 0);
    assert_non_null(a);
    assert_int_equal(clfree(a), 0);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_exit_while_other_threads_are_in_calls),
    cmocka_unit_test(test_clcontext_destroy_while_other_threads_are_in_calls),
    cmocka_unit_test(test_clcontext_destroy_refuses_what_it_cannot_destroy),
};

int main(int argc, char** argv) { return tu_run_tests(argc, argv, "exit", tests, NULL, NULL); }
