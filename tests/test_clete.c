/* SPDX-License-Identifier: MIT */
/* test_clete.c: the CLETE expression templates (<clete.h>, through
 * <clvector.h> and <clmulti_array.h>).  Programs making the calls of
 * COPRTHR's two CLETE examples with values of our own
 * (tests/compat/stdcl16/clete_vector, clete_array), built for the host and
 * with FULLAUTO: every number against a double-precision computation, each
 * kernel built once, the host evaluating when there is no context or the
 * build fails; and tests/compat/cxx/clete_checks (operators, functions,
 * types, aliasing, shape errors, 64-bit indices), in both builds. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <stdcl.h>

#include "test_util.h"

/* ------------------------------------------------------------------------ */
/* CLETE expression templates (<clete.h>): tests/compat/stdcl16/           */
/* clete_vector and clete_array (the calls of COPRTHR's two CLETE examples,  */
/* our values) and tests/compat/cxx/clete_checks, each built for the host    */
/* and with FULLAUTO.                                                        */
/* ------------------------------------------------------------------------ */

/* Runs build/tests/compat/<path> from its folder with env; checks exit 0. */
static void run_clete(tu_proc* r, const char* path, const char* const* env)
{
    char cwd[600];
    snprintf(cwd, sizeof cwd, "%s", tu_helper(path));
    *strrchr(cwd, '/') = '\0';
    tu_spawn(r, tu_helper(path), NULL, env, cwd, 120);
    tu_expect_status(r, 0, path);
}

/* |got - want| <= tol * max(|want|, 1), else the test fails naming what. */
static void expect_close(const tu_proc* r, const char* what, long idx, double got, double want, double tol)
{
    if (!(fabs(got - want) <= tol * fmax(fabs(want), 1.0))) {
        print_error("%s %ld: %.9g, want %.9g (tolerance %g relative)\n", what, idx, got, want, tol);
        tu_proc_dump(r, what);
        fail();
    }
}

/* clete_vector prints " a(i) = .. b(i) = .. c(i) = .. d(i) = .. e(i) = .." for
 * i = k (n/16) + 7k (k < 16) and the last 10 i, after ten passes of
 *   e = a + b + 2112 b + sqrt(d) - a b c d + c sqrt(a) + a cos(c);  a = a + log|e|
 * in float.  Recomputed here in double from the same float inputs.
 * Tolerance 1e-5 relative: e stays in [1000, 4500] with no cancellation, so
 * its float error is a few ulp of its ~15 operations and the built-ins
 * (OpenCL: 3-4 ulp), ~1.5e-6; a (up to ~80) gains at most half an ulp
 * (3.8e-6) per pass, 5e-7 relative after ten; both well under 1e-5, while
 * leaving out the smallest term (sqrt(d) > 1.4 of e < 4500: 3e-4) is not. */
static void check_clete_vector(const tu_proc* r)
{
    const long n = 262144;
    const double tol = 1e-5;
    const char* p = r->out;
    for (long k = 0; k < 26; k++) {
        long i = k < 16 ? k * (n / 16) + 7 * k : n - 26 + k;
        long ia, ib, ic, id, ie;
        double ga, gb, gc, gd, ge;
        int used = 0;
        if (sscanf(p, " a(%ld) = %lf b(%ld) = %lf c(%ld) = %lf d(%ld) = %lf e(%ld) = %lf%n", &ia, &ga, &ib, &gb, &ic,
                   &gc, &id, &gd, &ie, &ge, &used) != 10 ||
            ia != i || ib != i || ic != i || id != i || ie != i) {
            print_error("clete_vector: line %ld (element %ld) missing or malformed\n", k + 1, i);
            tu_proc_dump(r, "clete_vector");
            fail();
        }
        p += used;
        float fa = 1.0f + (i % 97) * 0.01f, fb = 0.5f + (i % 89) * 0.01f;
        float fc = 0.25f + (i % 83) * 0.01f, fd = 2.0f + (i % 79) * 0.01f;
        double a = fa, b = fb, c = fc, d = fd, e = 0;
        for (int iter = 0; iter < 10; iter++) {
            e = a + b + 2112.0 * b + sqrt(d) - a * b * c * d + c * sqrt(a) + a * cos(c);
            a = a + log(fabs(e));
        }
        assert_true((float)gb == fb && (float)gc == fc && (float)gd == fd); /* inputs unchanged */
        expect_close(r, "clete_vector a of element", i, ga, a, tol);
        expect_close(r, "clete_vector e of element", i, ge, e, tol);
    }
    tu_expect_end(p, r, "clete_vector");
}

/* clete_array prints "i x[i][i%12][2i%9][3i%15] a[i]" for i < 20 after ten
 * passes of x = a*b*c*d + sqrt(d) - 0.5 + pow(c*d, 0.33) (ranks 1 to 4) and
 * a[i] = cos(x[i][0][0][0]).  Recomputed here in double.  Tolerance 1e-5 of
 * max(|value|, 1): the values are below 5, their float error a few ulp of
 * ~10 operations and pow's 16 ulp (under 4e-6), and the passes shrink
 * errors (b c d < 0.04 at [i][0][0][0]); the smallest term (sqrt(d) > 0.14)
 * is far above it. */
static void check_clete_array(const tu_proc* r)
{
    enum { NI = 20, NJ = 12, NK = 9, NL = 15 };
    const double tol = 1e-5;
    double a[NI], xp[NI] = {0};
    for (int i = 0; i < NI; i++) a[i] = (float)(1.0f + 0.05f * i);
    for (int iter = 0; iter < 10; iter++) {
        double x0[NI];
        for (int i = 0; i < NI; i++)
            for (int pt = 0; pt < 2; pt++) {
                int j = pt ? i % NJ : 0, k = pt ? 2 * i % NK : 0, l = pt ? 3 * i % NL : 0;
                double b = (float)(0.5f + 0.02f * i + 0.1f * j);
                double c = (float)(0.75f + 0.01f * (i + j) + 0.05f * k);
                double d = (float)(0.02f * (1 + j + k + l) + 0.001f * i);
                double x = a[i] * b * c * d + sqrt(d) - 0.5 + pow(c * d, (double)0.33f);
                if (pt)
                    xp[i] = x;
                else
                    x0[i] = x;
            }
        for (int i = 0; i < NI; i++) a[i] = cos(x0[i]);
    }
    const char* p = r->out;
    for (long i = 0; i < NI; i++) {
        tu_expect_num(&p, r, "clete_array", "index", i, (double)i);
        double gx, ga;
        int used = 0;
        if (sscanf(p, "%lf %lf%n", &gx, &ga, &used) != 2) {
            print_error("clete_array: line %ld malformed\n", i + 1);
            tu_proc_dump(r, "clete_array");
            fail();
        }
        p += used;
        expect_close(r, "clete_array x at index", i, gx, xp[i], tol);
        expect_close(r, "clete_array a at index", i, ga, a[i], tol);
    }
    tu_expect_end(p, r, "clete_array");
}

/* A run of clete_vector or clete_array (a row of k_clete_runs, name saying
 * what it shows): the program (under build/tests/compat/) and its
 * environment, the check of its numbers, and what its stderr says:
 * counts[i].text exactly counts[i].times times, err_has, not err_lacks.
 * Unused entries are NULL. */
typedef struct {
    const char* name;
    const char* prog;
    const char* env[4];
    void (*check_numbers)(const tu_proc* r);
    struct {
        const char* text;
        int times;
    } counts[3];
    const char* err_has;
    const char* err_lacks;
} clete_run;

#define VECTOR "compat/stdcl16/clete_vector/clete_vector"
#define ARRAY "compat/stdcl16/clete_array/clete_array"

static const clete_run k_clete_runs[] = {
    {.name = "vector: the host build matches double precision",
     .prog = VECTOR,
     .env = {"STDCL_LOG_AUTOKERN=1"},
     .check_numbers = check_clete_vector,
     .err_lacks = "clete:"}, /* no kernel without FULLAUTO */
    /* Two expressions, ten passes: each kernel is built (and its source
     * logged) once and run ten times; 262144 elements: 32-bit indices. */
    {.name = "vector: FULLAUTO builds each kernel once",
     .prog = VECTOR "_auto",
     .env = {"STDCL_LOG_AUTOKERN=1"},
     .check_numbers = check_clete_vector,
     .counts = {{"clete: building kernel for stdcpu:", 2},
                {"typedef uint idx_t;\n__kernel void clete_kernel(__global float* r, idx_t n", 2},
                {"clete: ran kernel on stdcpu device 0 (262144 elements)", 20}},
     .err_has = "r[i] = (float)(a0[i] + log(fabs(a1[i])));",
     .err_lacks = "host evaluation"},
    {.name = "vector: FULLAUTO without contexts runs on the host",
     .prog = VECTOR "_auto",
     .env = {"STDGPU=0", "STDCPU=0", "COPRTHR_LOG_AUTOKERN=1"},
     .check_numbers = check_clete_vector,
     .counts = {{"clete: host evaluation: there is no context: stdgpu and stdcpu are NULL\n", 20}},
     .err_lacks = "building kernel"},
    /* A build that fails is tried once per expression; every pass then runs
     * on the host, saying why. */
    {.name = "vector: FULLAUTO with a failing build runs on the host",
     .prog = VECTOR "_auto",
     .env = {"STDCL_BUILD_OPTIONS=-cl-no-such-option", "STDCL_LOG_AUTOKERN=1"},
     .check_numbers = check_clete_vector,
     .counts = {{"clete: building kernel for stdcpu:", 2},
                {"clete: host evaluation: building the kernel failed: ", 20}},
     .err_lacks = "ran kernel"},
    {.name = "array: the host build matches double precision",
     .prog = ARRAY,
     .env = {"STDCL_LOG_AUTOKERN=1"},
     .check_numbers = check_clete_array,
     .err_lacks = "clete:"},
    /* a(i), b(i,j), c(i,j,k) are read at i / (the trailing extents' product). */
    {.name = "array: FULLAUTO broadcasts the lower ranks",
     .prog = ARRAY "_auto",
     .env = {"STDCL_LOG_AUTOKERN=1"},
     .check_numbers = check_clete_array,
     .counts = {{"clete: building kernel for stdcpu:", 1},
                {"clete: ran kernel on stdcpu device 0 (32400 elements)", 10}},
     .err_has = "a0[i / t1]",
     .err_lacks = "host evaluation"},
    {.name = "array: FULLAUTO without contexts runs on the host",
     .prog = ARRAY "_auto",
     .env = {"STDGPU=0", "STDCPU=0", "STDCL_LOG_AUTOKERN=1"},
     .check_numbers = check_clete_array,
     .counts = {{"clete: host evaluation: there is no context", 10}}},
};

/* Each row of k_clete_runs, named before it runs (a failure stops the test). */
static void test_clete_vector_and_array_programs(void** state)
{
    (void)state;
    for (size_t k = 0; k < tu_countof(k_clete_runs); k++) {
        const clete_run* c = &k_clete_runs[k];
        print_message("row \"%s\"\n", c->name);
        tu_proc r;
        run_clete(&r, c->prog, c->env);
        c->check_numbers(&r);
        for (int i = 0; i < 3 && c->counts[i].text; i++) {
            int n = tu_count(r.err, c->counts[i].text);
            if (n != c->counts[i].times)
                print_error("%s: stderr says \"%s\" %d time(s), want %d\n", c->prog, c->counts[i].text, n,
                            c->counts[i].times);
            assert_int_equal(n, c->counts[i].times);
        }
        if (c->err_has) assert_contains(r.err, c->err_has);
        if (c->err_lacks) assert_not_contains(r.err, c->err_lacks);
        tu_proc_free(&r);
    }
}

/* clete_checks: "ok" lines, the same for the host and FULLAUTO builds. */
static const char* const k_clete_checks[] = {"scalar on the left",
                                             "scalar on the right",
                                             "int and double scalars",
                                             "unary minus and plus",
                                             "one-operand functions match <cmath>",
                                             "two-operand functions with operands and scalars",
                                             "aliased result a = a*a + a",
                                             "aliased result b = a - b",
                                             "double elements",
                                             "float and double operands",
                                             "int elements, exact",
                                             "clvector constructed from an expression",
                                             "assignment takes the expression's size",
                                             "operands of different sizes throw invalid_argument",
                                             "the failed assignment left the result alone",
                                             "std::vector operations before and after assignments",
                                             "clmdetach, then assigned again",
                                             "clmulti_array ranks 1, 2, 3 in one expression",
                                             "clmulti_array aliased result",
                                             "empty clmulti_array takes the expression's extents",
                                             "disagreeing leading extents throw invalid_argument",
                                             "assignment to other extents throws invalid_argument",
                                             "Fortran order throws invalid_argument",
                                             "clerror() says why the host evaluated"};

/* Runs prog with env into *r and checks its lines; r is the caller's to free. */
static void check_clete_checks(tu_proc* rp, const char* prog, const char* const* env, const char* reason)
{
    tu_proc r;
    run_clete(&r, prog, env);
    assert_not_contains(r.out, "FAILED");
    char line[200];
    for (size_t k = 0; k < sizeof k_clete_checks / sizeof k_clete_checks[0]; k++) {
        snprintf(line, sizeof line, "ok %s\n", k_clete_checks[k]);
        assert_contains(r.out, line);
    }
    snprintf(line, sizeof line, "\nreason %s\n", reason);
    assert_contains(r.out, line);
    *rp = r;
}

static void test_clete_checks_host(void** state)
{
    (void)state;
    const char* env[] = {NULL};
    tu_proc r;
    check_clete_checks(&r, "compat/cxx/clete_checks", env, "");
    tu_proc_free(&r);
}

static void test_clete_checks_fullauto(void** state)
{
    (void)state;
    const char* env[] = {"STDCL_LOG_AUTOKERN=1", NULL};
    tu_proc r;
    check_clete_checks(&r, "compat/cxx/clete_checks_auto", env, "");
    /* double elements: the kernel enables fp64 */
    assert_contains(r.err,
                    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\ntypedef uint idx_t;\n"
                    "__kernel void clete_kernel(__global double* r");
    assert_true(tu_count(r.err, "clete: ran kernel on stdcpu device 0") >= 40);
    /* the forced 64-bit form of the broadcast expression was built and run */
    assert_contains(r.err, "typedef ulong idx_t;\n__kernel void clete_kernel(__global float* r, idx_t n");
    assert_contains(r.err, "r[i] = (float)(((a0[i] * a1[i / t2]) + a3[i / t4]) - (s5 * sqrt(a6[i])));");
    assert_not_contains(r.err, "host evaluation");
    tu_proc_free(&r);
}

static void test_clete_checks_fullauto_forced_to_the_host(void** state)
{
    (void)state;
    const char* env[] = {"STDCL_CLETE=host", "STDCL_LOG_AUTOKERN=1", NULL};
    tu_proc r;
    check_clete_checks(&r, "compat/cxx/clete_checks_auto", env, "STDCL_CLETE=host");
    assert_true(tu_count(r.err, "clete: host evaluation: STDCL_CLETE=host\n") >= 40);
    assert_not_contains(r.err, "ran kernel");
    tu_proc_free(&r);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_clete_vector_and_array_programs),
    cmocka_unit_test(test_clete_checks_host),
    cmocka_unit_test(test_clete_checks_fullauto),
    cmocka_unit_test(test_clete_checks_fullauto_forced_to_the_host),
};

int main(int argc, char** argv) { return tu_run_tests(argc, argv, "clete", tests, NULL, NULL); }
