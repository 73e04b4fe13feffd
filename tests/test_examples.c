/* SPDX-License-Identifier: MIT */
/* test_examples.c: the example programs (examples/nbody_tile,
 * mixed_pointers, split_saxpy, template_reduce, tiled_conv, blas, fft, particle_bins) with --check on
 * small sizes whose sides are not powers of two, and a bad command line
 * each.  blas and fft are built only with CLBlast and clFFT (configure's
 * HAVE_CLBLAST, HAVE_CLFFT): skipped without them.  blas runs SGEMM only:
 * CLBlast builds its GEMM kernels for each precision, 20 to 30 s on PoCL
 * with a cold cache (the second run finds them in PoCL's cache). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_util.h"

/* Runs examples/<name>/<name> from its build folder (where its .cl file is). */
static void run_example(tu_proc* r, const char* name, const char* const* args)
{
    char dir[PATH_MAX + 64], path[PATH_MAX + 160];
    snprintf(dir, sizeof dir, "%s/../examples/%s", tu_bindir(), name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!tu_is_file(path)) {
        print_message("%s is not built: skipped\n", path);
        skip();
    }
    /* clFFT 2.12.2's clfftTeardown deletes an object through a pointer of
     * another type (FFTRepo::releaseResources): under AddressSanitizer that one
     * check is off for fft, whose own code is checked as every example's is. */
    char asan[1024];
    const char* env[] = {asan, NULL};
    const char* inherited = getenv("ASAN_OPTIONS");
    snprintf(asan, sizeof asan, "ASAN_OPTIONS=%s%snew_delete_type_mismatch=0", inherited ? inherited : "",
             inherited && *inherited ? ":" : "");
    tu_spawn(r, path, args, strcmp(name, "fft") ? NULL : env, dir, 240);
}

static void expect_pass(const char* name, const char* const* args, const char* also)
{
    tu_proc r;
    run_example(&r, name, args);
    tu_expect_pass(&r, name, ": PASS");
    if (also) assert_contains(r.out, also);
    tu_proc_free(&r);
}

static void expect_usage(const char* name)
{
    const char* args[] = {"--bogus", NULL};
    tu_proc r;
    run_example(&r, name, args);
    assert_int_equal(r.status, 2);
    assert_contains(r.err, "usage:");
    tu_proc_free(&r);
}

static void test_nbody_tile_check_passes_with_a_chosen_local_size(void** state)
{
    (void)state;
    const char* args[] = {"-n", "1000", "--check", NULL};
    expect_pass("nbody_tile", args, "local size 1000 chosen");
    expect_usage("nbody_tile");
}

static void test_mixed_pointers_check_passes_over_two_devices(void** state)
{
    (void)state;
    const char* args[] = {"-n", "10007", "--check", NULL};
    expect_pass("mixed_pointers", args, "over 2 device(s)");
    expect_usage("mixed_pointers");
}

static void test_split_saxpy_check_passes_over_two_devices(void** state)
{
    (void)state;
    /* 100003 floats: slices that end inside a page on both devices */
    const char* args[] = {"-n", "100003", "--check", NULL};
    expect_pass("split_saxpy", args, "100003 elements over 2 device(s)");
    expect_usage("split_saxpy");
}

static void test_template_reduce_check_passes(void** state)
{
    (void)state;
    const char* args[] = {"-n", "30001", "--check", NULL};
    expect_pass("template_reduce", args, "30001 molecules");
    expect_usage("template_reduce");
}

static void test_tiled_conv_check_passes_async_and_plain(void** state)
{
    (void)state;
    const char* a1[] = {"-w", "203", "-h", "157", "--check", NULL};
    expect_pass("tiled_conv", a1, "async 203x157");
    const char* a2[] = {"-w", "203", "-h", "157", "-r", "3", "-l", "7x1", "--check", NULL};
    expect_pass("tiled_conv", a2, "local size 7x1");
    const char* a3[] = {"-w", "203", "-h", "157", "--plain", "--check", NULL};
    expect_pass("tiled_conv", a3, "plain 203x157");
    expect_usage("tiled_conv");
}

static void test_blas_check_passes_over_two_devices(void** state)
{
    (void)state;
    /* 101 and 102 rows: the second block starts at no aligned offset. */
    const char* a1[] = {"-n", "203", "-p", "s", "-r", "2", "--check", NULL};
    expect_pass("blas", a1, "check sgemm n=203 over 2 device(s)");
    /* beta 0: C is only written, and not uploaded. */
    const char* a2[] = {"-n", "97", "-p", "s", "-b", "0", "-r", "1", "--check", NULL};
    expect_pass("blas", a2, "beta 0,");
    expect_usage("blas");
}

static void test_fft_check_passes(void** state)
{
    (void)state;
    const char* a1[] = {"-w", "60", "-h", "42", "-r", "2", "--check", NULL};
    expect_pass("fft", a1, "check 60x42 convolution");
    const char* a2[] = {"-w", "48", "-h", "48", "-r", "1", "--check", NULL};
    expect_pass("fft", a2, "check 48x48 convolution");
    expect_usage("fft");
}

static void test_particle_bins_check_passes(void** state)
{
    (void)state;
    const char* a1[] = {"-n", "100003", "-g", "17", "--check", NULL};
    expect_pass("particle_bins", a1, "100003 particles in 4913 of 17^3 cells");
    const char* a2[] = {"-n", "1", "-g", "1", "--check", NULL};
    expect_pass("particle_bins", a2, "1 particles in 1 of 1^3 cells");
    expect_usage("particle_bins");
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_nbody_tile_check_passes_with_a_chosen_local_size),
    cmocka_unit_test(test_mixed_pointers_check_passes_over_two_devices),
    cmocka_unit_test(test_split_saxpy_check_passes_over_two_devices),
    cmocka_unit_test(test_template_reduce_check_passes),
    cmocka_unit_test(test_tiled_conv_check_passes_async_and_plain),
    cmocka_unit_test(test_blas_check_passes_over_two_devices),
    cmocka_unit_test(test_fft_check_passes),
    cmocka_unit_test(test_particle_bins_check_passes),
};

int main(int argc, char** argv) { return tu_run_tests(argc, argv, "examples", tests, NULL, NULL); }
