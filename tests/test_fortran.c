/* SPDX-License-Identifier: MIT */
/* test_fortran.c: the Fortran module stdcl (libstdcl_fortran).  Runs the
 * Fortran test programs of tests/fortran/ (built into build/tests/fortran/
 * when configure found a Fortran compiler; skipped otherwise), each in
 * zero-copy and copy mode (STDCL_ZERO_COPY=0): strings and errors, arrays
 * of each kind and rank, argument kinds, launches, the rest of the API
 * (contexts, information, event times, clmadopt, clmcopy...), sorts and
 * scans (clsort, clsort_by_key, clscan), plain OpenCL commands announced
 * by clforeign_begin/clforeign_end, OpenMP threads, a kernel embedded by
 * clcc; the STDCL 1.6 style program of tests/compat/fortran/ on every
 * device; a failing subroutine without stat stopping with clerror()'s
 * message; every constant of the module against the value C gives the same
 * name; libstdcl.so without the Fortran runtime; and the examples of
 * examples/fortran (matvec, and nbody_fortran --check). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <stdcl.h>

#include "test_util.h"

/* build/tests/<dir>/<name>, or skip the test when it was not built (no
 * Fortran compiler). */
static const char* fortran_program(const char* dir, const char* name, char* cwd, size_t cwd_size)
{
    static char path[PATH_MAX + 128];
    snprintf(cwd, cwd_size, "%s/%s", tu_bindir(), dir);
    snprintf(path, sizeof path, "%s/%s", cwd, name);
    if (access(path, X_OK) != 0) {
        print_message("%s not built (configure found no Fortran compiler): skipped\n", path);
        skip();
    }
    return path;
}

/* Runs tests/fortran/<name> in zero-copy (copy 0) or copy mode; it checks
 * its own results and ends with "<name>: N checks passed, 0 failed". */
static void run_fortran_test_env(const char* name, int copy, const char* more)
{
    char cwd[PATH_MAX], want[256];
    const char* path = fortran_program("fortran", name, cwd, sizeof cwd);
    const char* env[] = {"STDCL_KERNEL_PATH", copy ? "STDCL_ZERO_COPY=0" : "STDCL_ZERO_COPY", more, NULL};
    tu_proc r;
    tu_spawn(&r, path, NULL, env, cwd, 240);
    tu_expect_status(&r, 0, name);
    snprintf(want, sizeof want, "%s: ", name);
    assert_contains(r.out, want);
    assert_contains(r.out, " checks passed, 0 failed");
    assert_not_contains(r.err, "FAILED");
    tu_proc_free(&r);
}

static void run_fortran_test(const char* name, int copy) { run_fortran_test_env(name, copy, NULL); }

static void test_fortran_errors_zero_copy(void** state) { (void)state; run_fortran_test("fortran_errors", 0); }
static void test_fortran_errors_copy_mode(void** state) { (void)state; run_fortran_test("fortran_errors", 1); }
static void test_fortran_arrays_zero_copy(void** state) { (void)state; run_fortran_test("fortran_arrays", 0); }
static void test_fortran_arrays_copy_mode(void** state) { (void)state; run_fortran_test("fortran_arrays", 1); }
static void test_fortran_args_zero_copy(void** state) { (void)state; run_fortran_test("fortran_args", 0); }
static void test_fortran_args_copy_mode(void** state) { (void)state; run_fortran_test("fortran_args", 1); }
static void test_fortran_launch_zero_copy(void** state) { (void)state; run_fortran_test("fortran_launch", 0); }
static void test_fortran_launch_copy_mode(void** state) { (void)state; run_fortran_test("fortran_launch", 1); }
/* fortran_misc: event times with profiling in one mode, without in the other. */
static void test_fortran_misc_zero_copy_profiled(void** state)
{
    (void)state;
    run_fortran_test_env("fortran_misc", 0, "STDCL_PROFILE=1");
}
static void test_fortran_misc_copy_mode(void** state) { (void)state; run_fortran_test_env("fortran_misc", 1, "STDCL_PROFILE"); }

/* clsort, clsort_by_key and clscan of the module's arrays and of c_ptrs. */
static void test_fortran_sort_zero_copy(void** state) { (void)state; run_fortran_test("fortran_sort", 0); }
static void test_fortran_sort_copy_mode(void** state) { (void)state; run_fortran_test("fortran_sort", 1); }

/* Plain OpenCL commands on the module's arrays, announced by clforeign_*. */
static void test_fortran_foreign_zero_copy(void** state) { (void)state; run_fortran_test("fortran_foreign", 0); }
static void test_fortran_foreign_copy_mode(void** state) { (void)state; run_fortran_test("fortran_foreign", 1); }

/* OpenMP threads calling the module at once. */
static void test_fortran_threads_zero_copy(void** state) { (void)state; run_fortran_test("fortran_threads", 0); }
static void test_fortran_threads_copy_mode(void** state) { (void)state; run_fortran_test("fortran_threads", 1); }

/* A kernel embedded by clcc, run from a folder without its .cl file. */
static void test_fortran_embedded_kernel_runs(void** state)
{
    (void)state;
    char cwd[PATH_MAX];
    const char* path = fortran_program("fortran", "fortran_embed", cwd, sizeof cwd);
    char* dir = tu_mkdtemp();
    assert_non_null(dir);
    const char* env[] = {"STDCL_KERNEL_PATH", NULL};
    tu_proc r;
    tu_spawn(&r, path, NULL, env, dir, 120);
    tu_expect_status(&r, 0, "fortran_embed");
    assert_contains(r.out, "fortran_embed: ok");
    tu_proc_free(&r);
    rmdir(dir);
    free(dir);
}

/* A subroutine's failure without stat: error stop with the message. */
static void test_fortran_clallocate_without_stat_stops_with_the_message(void** state)
{
    (void)state;
    char cwd[PATH_MAX];
    const char* path = fortran_program("fortran", "fortran_stop", cwd, sizeof cwd);
    tu_proc r;
    tu_spawn(&r, path, NULL, NULL, cwd, 60);
    assert_int_not_equal(r.status, 0);
    assert_contains(r.err, "clallocate: every extent of shape must be positive");
    assert_not_contains(r.out, "not reached");
    tu_proc_free(&r);
}

/* STDCL 1.6's forms: c = A b with a non-symmetric A on each device. */
static void run_matvec16(int copy)
{
    char cwd[PATH_MAX];
    const char* path = fortran_program("compat/fortran", "matvec16", cwd, sizeof cwd);
    const char* env[] = {"STDCL_KERNEL_PATH", copy ? "STDCL_ZERO_COPY=0" : "STDCL_ZERO_COPY", NULL};
    tu_proc r;
    tu_spawn(&r, path, NULL, env, cwd, 120);
    tu_expect_status(&r, 0, "matvec16");
    assert_contains(r.out, "device 0: ok\ndevice 1: ok\n");
    tu_proc_free(&r);
}
static void test_fortran_stdcl16_matvec_zero_copy(void** state) { (void)state; run_matvec16(0); }
static void test_fortran_stdcl16_matvec_copy_mode(void** state) { (void)state; run_matvec16(1); }

/* Every constant of the module, by name, against C's value of that name. */
static const struct {
    const char* name;
    long long value;
} c_constants[] = {
    {"STDCL_EINVAL", (long long)(int)(STDCL_EINVAL)},
    {"STDCL_ENOMEM", (long long)(int)(STDCL_ENOMEM)},
    {"STDCL_ENOENT", (long long)(int)(STDCL_ENOENT)},
    {"STDCL_EBUILD", (long long)(int)(STDCL_EBUILD)},
    {"STDCL_ESTATE", (long long)(int)(STDCL_ESTATE)},
    {"STDCL_ECL", (long long)(int)(STDCL_ECL)},
    {"STDCL_EOVERRUN", (long long)(int)(STDCL_EOVERRUN)},
    {"STDCL_ESYNC", (long long)(int)(STDCL_ESYNC)},
    {"STDCL_VERSION_MAJOR", (long long)(int)(STDCL_VERSION_MAJOR)},
    {"STDCL_VERSION_MINOR", (long long)(int)(STDCL_VERSION_MINOR)},
    {"STDCL_VERSION_PATCH", (long long)(int)(STDCL_VERSION_PATCH)},
    {"CLLD_NOW", (long long)(int)(CLLD_NOW)},
    {"CLLD_DEFAULT", (long long)(int)(CLLD_DEFAULT)},
    {"CLLD_LAZY", (long long)(int)(CLLD_LAZY)},
    {"CLLD_NOBUILD", (long long)(int)(CLLD_NOBUILD)},
    {"CLLD_GLOBAL", (long long)(int)(CLLD_GLOBAL)},
    {"CL_MEM_RW", (long long)(int)(CL_MEM_RW)},
    {"CL_MEM_RO", (long long)(int)(CL_MEM_RO)},
    {"CL_MEM_WO", (long long)(int)(CL_MEM_WO)},
    {"CL_MEM_DETACHED", (long long)(int)(CL_MEM_DETACHED)},
    {"CL_MEM_NOCOPY", (long long)(int)(CL_MEM_NOCOPY)},
    {"CL_MEM_IMAGE2D", (long long)(int)(CL_MEM_IMAGE2D)},
    {"CL_MEM_NOFORCE", (long long)(int)(CL_MEM_NOFORCE)},
    {"CL_MEM_DEVONLY", (long long)(int)(CL_MEM_DEVONLY)},
    {"CL_MEM_ZERO", (long long)(int)(CL_MEM_ZERO)},
    {"CL_MEM_CLBUF", (long long)(int)(CL_MEM_CLBUF)},
    {"CL_MEM_GLBUF", (long long)(int)(CL_MEM_GLBUF)},
    {"CL_MEM_GLTEX2D", (long long)(int)(CL_MEM_GLTEX2D)},
    {"CL_MEM_GLTEX3D", (long long)(int)(CL_MEM_GLTEX3D)},
    {"CL_MEM_GLRBUF", (long long)(int)(CL_MEM_GLRBUF)},
    {"CL_MEM_HOST", (long long)(int)(CL_MEM_HOST)},
    {"CL_MEM_DEVICE", (long long)(int)(CL_MEM_DEVICE)},
    {"CL_FOREIGN_WAITLIST", (long long)(int)(CL_FOREIGN_WAITLIST)},
    {"CL_EVENT_WAIT", (long long)(int)(CL_EVENT_WAIT)},
    {"CL_EVENT_NOWAIT", (long long)(int)(CL_EVENT_NOWAIT)},
    {"CL_EVENT_RELEASE", (long long)(int)(CL_EVENT_RELEASE)},
    {"CL_EVENT_NORELEASE", (long long)(int)(CL_EVENT_NORELEASE)},
    {"CL_EVENT_NOEVENT", (long long)(int)(CL_EVENT_NOEVENT)},
    {"CL_KERNEL_EVENT", (long long)(int)(CL_KERNEL_EVENT)},
    {"CL_MEM_EVENT", (long long)(int)(CL_MEM_EVENT)},
    {"CL_ALL_EVENT", (long long)(int)(CL_ALL_EVENT)},
    {"CL_MCTL_GET_STATUS", (long long)(int)(CL_MCTL_GET_STATUS)},
    {"CL_MCTL_GET_DEVNUM", (long long)(int)(CL_MCTL_GET_DEVNUM)},
    {"CL_MCTL_SET_DEVNUM", (long long)(int)(CL_MCTL_SET_DEVNUM)},
    {"CL_MCTL_MARK_CLEAN", (long long)(int)(CL_MCTL_MARK_CLEAN)},
    {"CL_MCTL_SET_IMAGE2D", (long long)(int)(CL_MCTL_SET_IMAGE2D)},
    {"CL_MCTL_SET_USRFLAGS", (long long)(int)(CL_MCTL_SET_USRFLAGS)},
    {"CL_MCTL_CLR_USRFLAGS", (long long)(int)(CL_MCTL_CLR_USRFLAGS)},
    {"STDCL_TYPE_UNKNOWN", (long long)(int)(STDCL_TYPE_UNKNOWN)},
    {"STDCL_TYPE_INT", (long long)(int)(STDCL_TYPE_INT)},
    {"STDCL_TYPE_UINT", (long long)(int)(STDCL_TYPE_UINT)},
    {"STDCL_TYPE_FLOAT", (long long)(int)(STDCL_TYPE_FLOAT)},
    {"STDCL_TYPE_POINTER", (long long)(int)(STDCL_TYPE_POINTER)},
    {"STDCL_TYPE_OTHER", (long long)(int)(STDCL_TYPE_OTHER)},
    {"CL_REDUCE_SUM", (long long)(int)(CL_REDUCE_SUM)},
    {"CL_REDUCE_MIN", (long long)(int)(CL_REDUCE_MIN)},
    {"CL_REDUCE_MAX", (long long)(int)(CL_REDUCE_MAX)},
    {"CL_REDUCE_FLOAT", (long long)(int)(CL_REDUCE_FLOAT)},
    {"CL_REDUCE_DOUBLE", (long long)(int)(CL_REDUCE_DOUBLE)},
    {"CL_REDUCE_INT", (long long)(int)(CL_REDUCE_INT)},
    {"CL_REDUCE_LONG", (long long)(int)(CL_REDUCE_LONG)},
    {"CL_REDUCE_UINT", (long long)(int)(CL_REDUCE_UINT)},
    {"CL_REDUCE_ULONG", (long long)(int)(CL_REDUCE_ULONG)},
    {"CL_SORT_DESCENDING", (long long)(int)(CL_SORT_DESCENDING)},
    {"CL_SCAN_EXCLUSIVE", (long long)(int)(CL_SCAN_EXCLUSIVE)},
    {"CL_ALL_DEVICES", (long long)(int)(CL_ALL_DEVICES)},
    {"STDCL_LOCAL_SIZE_DRIVER", (long long)(STDCL_LOCAL_SIZE_DRIVER)},
    {"STDCL_LOCAL_TAG", (long long)(STDCL_LOCAL_TAG)},
    {"CL_DEVICE_TYPE_DEFAULT", (long long)(CL_DEVICE_TYPE_DEFAULT)},
    {"CL_DEVICE_TYPE_CPU", (long long)(CL_DEVICE_TYPE_CPU)},
    {"CL_DEVICE_TYPE_GPU", (long long)(CL_DEVICE_TYPE_GPU)},
    {"CL_DEVICE_TYPE_ACCELERATOR", (long long)(CL_DEVICE_TYPE_ACCELERATOR)},
    {"CL_DEVICE_TYPE_ALL", (long long)(CL_DEVICE_TYPE_ALL)},
    {"CL_SUCCESS", (long long)(int)(CL_SUCCESS)},
    {"CL_INT", (long long)sizeof(cl_int)},
    {"CL_FLOAT", (long long)sizeof(cl_float)},
    {"CL_DOUBLE", (long long)sizeof(cl_double)},
    {"sizeof(clndrange_t)", (long long)sizeof(clndrange_t)},
    {"sizeof(struct clstat_info)", (long long)sizeof(struct clstat_info)},
    {"sizeof(struct cldev_info)", (long long)sizeof(struct cldev_info)},
    {"sizeof(struct stdcl_kernel_limits)", (long long)sizeof(struct stdcl_kernel_limits)},
    {"sizeof(struct clforeign_use)", (long long)sizeof(struct clforeign_use)},
    {"sizeof(stdcl_local_t)", (long long)sizeof(stdcl_local_t)},
    {"sizeof(cl_float4)", (long long)sizeof(cl_float4)},
    {"sizeof(cl_double2)", (long long)sizeof(cl_double2)},
};

static void test_fortran_constants_equal_c(void** state)
{
    (void)state;
    char cwd[PATH_MAX];
    const char* path = fortran_program("fortran", "fortran_constants", cwd, sizeof cwd);
    tu_proc r;
    tu_spawn(&r, path, NULL, NULL, cwd, 60);
    tu_expect_status(&r, 0, "fortran_constants");
    size_t n = sizeof c_constants / sizeof c_constants[0];
    for (size_t i = 0; i < n; i++) {
        char needle[128];
        snprintf(needle, sizeof needle, "%s ", c_constants[i].name);
        const char* line = r.out;
        while ((line = strstr(line, needle)) && line != r.out && line[-1] != '\n')
            line++;
        if (!line) {
            print_error("the module does not print %s\n", c_constants[i].name);
            fail();
        }
        long long got = strtoll(line + strlen(needle), NULL, 10);
        if (got != c_constants[i].value) {
            print_error("%s: Fortran %lld, C %lld\n", c_constants[i].name, got, c_constants[i].value);
            fail();
        }
    }
    char version[64];
    snprintf(version, sizeof version, "STDCL_VERSION_STRING %s\n", STDCL_VERSION_STRING);
    assert_contains(r.out, version);
    /* Nothing printed that C does not know. */
    size_t lines = 0;
    for (const char* p = r.out; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, n + 1);
    tu_proc_free(&r);
}

/* libstdcl.so needs no Fortran runtime; libstdcl_fortran.so has its soname. */
static void test_fortran_runtime_stays_out_of_libstdcl(void** state)
{
    (void)state;
    char cwd[PATH_MAX];
    fortran_program("fortran", "fortran_constants", cwd, sizeof cwd);
    char cmd[PATH_MAX + 200];
    snprintf(cmd, sizeof cmd,
             "readelf -d '%s/../lib/libstdcl.so'; echo ---; readelf -d '%s/../lib/libstdcl_fortran.so'",
             tu_bindir(), tu_bindir());
    const char* args[] = {"-c", cmd, NULL};
    tu_proc r;
    tu_spawn(&r, "/bin/sh", args, NULL, NULL, 60);
    tu_expect_status(&r, 0, "readelf");
    char* sep = strstr(r.out, "---");
    assert_non_null(sep);
    *sep = '\0';
    assert_not_contains(r.out, "gfortran");
    assert_contains(sep + 3, "libgfortran");
    char soname[64];
    snprintf(soname, sizeof soname, "[libstdcl_fortran.so.%d]", STDCL_VERSION_MAJOR);
    assert_contains(sep + 3, soname);
    tu_proc_free(&r);
}

/* The examples of examples/fortran: the matrix-vector product (rows split
 * over the devices) and NBody on every device, whose --check compares with
 * a double-precision reference. */
static void run_example(const char* name, const char* const* args, int copy, const char* pass)
{
    char cwd[PATH_MAX];
    const char* path = fortran_program("../examples/fortran", name, cwd, sizeof cwd);
    const char* env[] = {"STDCL_KERNEL_PATH", copy ? "STDCL_ZERO_COPY=0" : "STDCL_ZERO_COPY", NULL};
    tu_proc r;
    tu_spawn(&r, path, args, env, cwd, 240);
    tu_expect_pass(&r, name, pass);
    tu_proc_free(&r);
}
static void test_fortran_example_matvec_zero_copy(void** state)
{
    (void)state;
    const char* args[] = {"301", "17", NULL};
    run_example("matvec", args, 0, ": PASS");
}
static void test_fortran_example_matvec_copy_mode(void** state)
{
    (void)state;
    run_example("matvec", NULL, 1, ": PASS");
}
static void test_fortran_example_nbody_check_zero_copy(void** state)
{
    (void)state;
    const char* args[] = {"--check", "-q", "-n", "2048", NULL};
    run_example("nbody_fortran", args, 0, "check: PASS");
}
static void test_fortran_example_nbody_check_copy_mode(void** state)
{
    (void)state;
    const char* args[] = {"--check", "-q", "-n", "1000", "-s", "12", "-b", "5", "--ic", "collision", NULL};
    run_example("nbody_fortran", args, 1, "check: PASS");
}

/* nbody_fortran takes nbody_multi's command line and refuses bad values. */
static void test_fortran_example_nbody_refuses_bad_options(void** state)
{
    (void)state;
    char cwd[PATH_MAX];
    const char* path = fortran_program("../examples/fortran", "nbody_fortran", cwd, sizeof cwd);
    const char* bad[][3] = {{"-c", "fpga", NULL}, {"--dt", "x", NULL}, {"-d", "65", NULL}, {"--bogus", NULL, NULL}};
    const char* says[] = {"-c expects gpu, cpu or dev", "--dt expects a number", "-d 65 is out of range",
                          "unknown option --bogus"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        tu_proc r;
        tu_spawn(&r, path, bad[i], NULL, cwd, 60);
        tu_expect_status(&r, 2, bad[i][0]);
        assert_contains(r.err, says[i]);
        tu_proc_free(&r);
    }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_fortran_constants_equal_c),
    cmocka_unit_test(test_fortran_runtime_stays_out_of_libstdcl),
    cmocka_unit_test(test_fortran_errors_zero_copy),
    cmocka_unit_test(test_fortran_errors_copy_mode),
    cmocka_unit_test(test_fortran_arrays_zero_copy),
    cmocka_unit_test(test_fortran_arrays_copy_mode),
    cmocka_unit_test(test_fortran_args_zero_copy),
    cmocka_unit_test(test_fortran_args_copy_mode),
    cmocka_unit_test(test_fortran_launch_zero_copy),
    cmocka_unit_test(test_fortran_launch_copy_mode),
    cmocka_unit_test(test_fortran_misc_zero_copy_profiled),
    cmocka_unit_test(test_fortran_misc_copy_mode),
    cmocka_unit_test(test_fortran_sort_zero_copy),
    cmocka_unit_test(test_fortran_sort_copy_mode),
    cmocka_unit_test(test_fortran_foreign_zero_copy),
    cmocka_unit_test(test_fortran_foreign_copy_mode),
    cmocka_unit_test(test_fortran_threads_zero_copy),
    cmocka_unit_test(test_fortran_threads_copy_mode),
    cmocka_unit_test(test_fortran_embedded_kernel_runs),
    cmocka_unit_test(test_fortran_clallocate_without_stat_stops_with_the_message),
    cmocka_unit_test(test_fortran_stdcl16_matvec_zero_copy),
    cmocka_unit_test(test_fortran_stdcl16_matvec_copy_mode),
    cmocka_unit_test(test_fortran_example_matvec_zero_copy),
    cmocka_unit_test(test_fortran_example_matvec_copy_mode),
    cmocka_unit_test(test_fortran_example_nbody_check_zero_copy),
    cmocka_unit_test(test_fortran_example_nbody_check_copy_mode),
    cmocka_unit_test(test_fortran_example_nbody_refuses_bad_options),
};

int main(int argc, char** argv) { return tu_run_tests(argc, argv, "fortran", tests, NULL, NULL); }
