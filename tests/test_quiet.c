/* SPDX-License-Identifier: MIT */
/* test_quiet.c: libstdcl's own kernel builds (the primitives' programs) write
 * nothing to stderr.  Every command of the tests starts with empty caches
 * (tools/test_env.sh), so each primitive below builds its program here.
 * STDCL_BUILD_OPTIONS="-D __STDCL__=2 ..." redefines a macro the library already
 * defines, which makes every build give a compiler warning; PoCL's compiler
 * prints "N warning(s) generated." to stderr for a program with warnings (a
 * user's program built with the same setting shows it does), so without the
 * library's "-w" each primitive would speak.  On stddev (two PoCL devices in
 * the tests), or stdgpu with STDCL_TEST_CONTEXT=gpu (make check-gpu). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

#include <cmocka.h>

#include <stdcl.h>

#include "test_util.h"

#define N 5000

static CLCONTEXT* g_cp;

/* stderr goes to a temporary file between capture_start and capture_end,
 * which returns what was written there (malloc'd, NUL-terminated). */
static int g_saved = -1;
static FILE* g_file;

static void capture_start(void)
{
    fflush(stderr);
    g_file = tmpfile();
    assert_non_null(g_file);
    g_saved = dup(2);
    assert_true(g_saved >= 0);
    assert_true(dup2(fileno(g_file), 2) >= 0);
}

static char* capture_end(void)
{
    fflush(stderr);
    assert_true(dup2(g_saved, 2) >= 0);
    close(g_saved);
    g_saved = -1;
    long len = ftell(g_file) >= 0 ? (fseek(g_file, 0, SEEK_END), ftell(g_file)) : 0;
    char* s = (char*)calloc(1, (size_t)len + 1);
    assert_non_null(s);
    rewind(g_file);
    size_t got = fread(s, 1, (size_t)len, g_file);
    s[got] = 0;
    fclose(g_file);
    g_file = NULL;
    return s;
}

static int setup(void** state)
{
    (void)state;
    const char* which = getenv("STDCL_TEST_CONTEXT");
    g_cp = which && strcmp(which, "gpu") == 0 ? stdgpu : stddev;
    if (!g_cp) {
        fprintf(stderr, "test_quiet: no %s context\n", which ? which : "stddev");
        return -1;
    }
    /* Read at each build (not at load): every build from here on warns.  A
     * second macro unique to this run keeps PoCL's kernel cache, which the
     * test runs share (tools/run_tests.sh), from answering a build without
     * compiling it. */
    char opts[128];
    snprintf(opts, sizeof opts, "-D __STDCL__=2 -D STDCL_TEST_QUIET_RUN=%ld_%ld", (long)getpid(), (long)time(NULL));
    setenv("STDCL_BUILD_OPTIONS", opts, 1);
    return 0;
}

static int is_pocl(void)
{
    char name[256] = "";
    cl_platform_id p = stdcl_platform(g_cp);
    if (!p || clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, NULL) != CL_SUCCESS) return 0;
    return strstr(name, "Portable Computing Language") != NULL;
}

/* The warning is real: a user's program built with the same setting gets it
 * (on PoCL, whose compiler prints its warnings' count to stderr). */
static void test_user_build_warns(void** state)
{
    (void)state;
    capture_start();
    void* h = clsopen(g_cp, "__kernel void k(__global int* x) { x[get_global_id(0)] = __STDCL__; }\n", CLLD_NOW);
    char* err = capture_end();
    assert_non_null(h);
    if (is_pocl()) {
        if (!strstr(err, "warning")) fail_msg("no compiler warning on stderr for the user's program: '%s'", err);
    } else {
        print_message("not PoCL: the compiler printed '%s' for the user's program\n", err);
    }
    free(err);
    clclose(g_cp, h);
}

/* Each primitive's first call builds its program: nothing reaches stderr, and
 * the results are right. */
static void test_primitives_silent(void** state)
{
    (void)state;
    cl_uint* k = (cl_uint*)clmalloc(g_cp, N * sizeof(cl_uint), 0);
    cl_uint* v = (cl_uint*)clmalloc(g_cp, N * sizeof(cl_uint), 0);
    float* f = (float*)clmalloc(g_cp, N * sizeof(float), 0);
    float* s = (float*)clmalloc(g_cp, N * sizeof(float), 0);
    cl_ulong* u = (cl_ulong*)clmalloc(g_cp, N * sizeof(cl_ulong), 0);
    assert_non_null(k);
    assert_non_null(v);
    assert_non_null(f);
    assert_non_null(s);
    assert_non_null(u);
    for (cl_uint i = 0; i < N; i++) {
        k[i] = (i * 2654435761u) % 1000;
        v[i] = i;
        f[i] = (float)(i % 5);
        u[i] = (cl_ulong)i * 3u + 1u;
    }
    assert_non_null(clmsync(g_cp, 0, f, CL_MEM_DEVICE));
    for (cl_uint d = 0; d < clgetndev(g_cp); d++) assert_non_null(clmsync(g_cp, d, u, CL_MEM_DEVICE));
    assert_non_null(clmsync(g_cp, 0, k, CL_MEM_DEVICE));
    assert_non_null(clmsync(g_cp, 0, v, CL_MEM_DEVICE));

    capture_start();
    int rc_sort = clsort_by_key(g_cp, 0, k, v, N, CL_REDUCE_UINT, sizeof(cl_uint), 0);
    int rc_scan = clscan(g_cp, 0, f, s, N, CL_REDUCE_FLOAT, CL_REDUCE_SUM, 0);
    float fsum = 0;
    cl_ulong umax = 0;
    int rc_rf = clreduce(g_cp, 0, f, N, CL_REDUCE_FLOAT, CL_REDUCE_SUM, &fsum);
    int rc_ru = clreduce(g_cp, CL_ALL_DEVICES, u, N, CL_REDUCE_ULONG, CL_REDUCE_MAX, &umax);
    char* err = capture_end();

    assert_int_equal(rc_sort, 0);
    assert_int_equal(rc_scan, 0);
    assert_int_equal(rc_rf, 0);
    assert_int_equal(rc_ru, 0);
    if (err[0]) fail_msg("the primitives' first calls wrote to stderr: '%s'", err);
    free(err);

    assert_non_null(clmsync(g_cp, 0, k, CL_MEM_HOST));
    assert_non_null(clmsync(g_cp, 0, v, CL_MEM_HOST));
    assert_non_null(clmsync(g_cp, 0, s, CL_MEM_HOST));
    for (cl_uint i = 1; i < N; i++) assert_true(k[i - 1] <= k[i]);
    for (cl_uint i = 0; i < N; i++) assert_int_equal(k[i], (v[i] * 2654435761u) % 1000);
    float run = 0;
    for (cl_uint i = 0; i < N; i++) {
        run += (float)(i % 5);
        assert_true(s[i] == run);
    }
    assert_true(fsum == run);
    assert_true(umax == (cl_ulong)(N - 1) * 3u + 1u);
    clfree(k);
    clfree(v);
    clfree(f);
    clfree(s);
    clfree(u);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_user_build_warns),
        cmocka_unit_test(test_primitives_silent),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
