/* SPDX-License-Identifier: MIT */
/* test_nbody.c: the NBody example programs (examples/nbody) on PoCL with two
 * devices: one device and two devices agree with a double-precision host
 * computation (--check), and bad command lines exit with status 2.  The GPU
 * kernels are checked under Oclgrind in test_gpu_oclgrind.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_util.h"

/* Runs examples/nbody/<prog> from its build folder (where nbody_kern.cl is). */
static void run_nbody(tu_proc* r, const char* prog, const char* const* args)
{
    char dir[PATH_MAX + 64], path[PATH_MAX + 160];
    snprintf(dir, sizeof dir, "%s/../examples/nbody", tu_bindir());
    snprintf(path, sizeof path, "%s/%s", dir, prog);
    if (!tu_is_file(path)) {
        print_message("%s is not built: skipped\n", path);
        skip();
    }
    tu_spawn(r, path, args, NULL, dir, 240);
}

static void test_nbody_one_device_matches_double_precision(void** state)
{
    (void)state;
    const char* args[] = {"-c", "cpu", "--check", "-q", NULL};
    tu_proc r;
    run_nbody(&r, "nbody", args);
    tu_expect_pass(&r, "nbody --check", ": PASS");
    assert_contains(r.out, "check stdcl vs double reference");
    tu_proc_free(&r);
}

static void test_nbody_multi_two_devices_match_one_device_and_double(void** state)
{
    (void)state;
    const char* args[] = {"-c", "cpu", "-d", "2", "--check", "-q", NULL};
    tu_proc r;
    run_nbody(&r, "nbody_multi", args);
    tu_expect_pass(&r, "nbody_multi -d 2 --check", "check: PASS");
    assert_contains(r.out, "2 device(s)");
    assert_contains(r.out, "check 2 devices vs one device");
    assert_contains(r.out, "check 2 devices vs double reference");
    tu_proc_free(&r);
}

static void test_nbody_bad_body_count_exits_2(void** state)
{
    (void)state;
    const char* args[] = {"-n", "abc", NULL};
    tu_proc r;
    run_nbody(&r, "nbody", args);
    tu_expect_status(&r, 2, "nbody -n abc");
    assert_contains(r.err, "-n expects an integer, not 'abc'");
    tu_proc_free(&r);
}

static void test_nbody_multi_too_many_devices_exits_2(void** state)
{
    (void)state;
    const char* args[] = {"-c", "cpu", "-d", "9", "-q", NULL};
    tu_proc r;
    run_nbody(&r, "nbody_multi", args);
    tu_expect_status(&r, 2, "nbody_multi -d 9");
    assert_contains(r.err, "-d");
    tu_proc_free(&r);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_nbody_one_device_matches_double_precision),
    cmocka_unit_test(test_nbody_multi_two_devices_match_one_device_and_double),
    cmocka_unit_test(test_nbody_bad_body_count_exits_2),
    cmocka_unit_test(test_nbody_multi_too_many_devices_exits_2),
};

int main(int argc, char** argv) { return tu_run_tests(argc, argv, "nbody", tests, NULL, NULL); }
