/* test_compat.c: source compatibility.  Programs written to the STDCL 1.6 API
 * compile unchanged against stdcl.h (they are built as helpers) and give the
 * right results: the two examples of the API reference (vector sums, exact;
 * example 2 on two devices) and the NBody tutorial's host program (positions
 * against a double-precision computation on the host).  Each program runs
 * from tests/kernels/, where the kernel files it opens are. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>

#include <stdcl.h>

#include "test_util.h"

/* nbody_init, to recompute the tutorial's run. */
#include "compat/nbody_util.c"

/* Runs helper `name` from tests/kernels/ with args; fills r, checks exit 0. */
static void run_program(tu_proc* r, const char* name, const char* const* args)
{
    const char* env[] = {"STDCL_KERNEL_PATH", NULL};
    tu_spawn(r, tu_helper(name), args, env, tu_kernel(NULL), 120);
    if (r->status != 0) tu_proc_dump(r, name);
    assert_int_equal(r->status, 0);
}

/* The examples print "a b c" per element, for element k: a = 111 k,
 * b = 222 k, c = a + b, all exact in float. */
static void check_vector_sums(const tu_proc* r, int n)
{
    const char* p = r->out;
    for (int k = 0; k < n; k++) {
        double a, b, c;
        int used = 0;
        if (sscanf(p, "%lf %lf %lf%n", &a, &b, &c, &used) != 3) {
            print_error("line %d of the output is missing or malformed\n", k + 1);
            tu_proc_dump(r, "example");
            fail();
        }
        p += used;
        if (a != 111.0 * k || b != 222.0 * k || c != 333.0 * k) {
            print_error("element %d: %f + %f = %f, want %f\n", k, a, b, c, 333.0 * k);
            fail();
        }
    }
    double extra;
    assert_int_equal(sscanf(p, "%lf", &extra), EOF); /* nothing after */
}

static void test_compat_example1_adds_vectors(void** state)
{
    (void)state;
    tu_proc r;
    run_program(&r, "helper_compat_example1", NULL);
    check_vector_sums(&r, 1024);
    assert_not_contains(r.err, "stdcl");
    tu_proc_free(&r);
}

static void test_compat_example2_adds_vectors_on_two_devices(void** state)
{
    (void)state;
    tu_proc r;
    run_program(&r, "helper_compat_example2", NULL);
    check_vector_sums(&r, 1024);
    assert_not_contains(r.err, "stdcl");
    tu_proc_free(&r);
}

static void test_compat_example2_needs_the_second_device(void** state)
{
    (void)state;
    /* With one device, example 2's work for device 1 cannot run: its half of
     * the sums stays 0.  (Shows that the run above used both devices.) */
    tu_proc r;
    const char* env[] = {"STDCL_KERNEL_PATH", "STDCPU_MAX_NDEV=1", NULL};
    tu_spawn(&r, tu_helper("helper_compat_example2"), NULL, env, tu_kernel(NULL), 120);
    if (r.status != 0) tu_proc_dump(&r, "helper_compat_example2");
    assert_int_equal(r.status, 0);
    const char* p = r.out;
    int wrong = 0;
    for (int k = 0; k < 1024; k++) {
        double a, b, c;
        int used = 0;
        if (sscanf(p, "%lf %lf %lf%n", &a, &b, &c, &used) != 3) break;
        p += used;
        if (c != 333.0 * k) wrong++;
    }
    assert_int_equal(wrong, 512); /* elements 512..1023 */
    tu_proc_free(&r);
}

/* The tutorial's kernel in double precision: steps steps of the leapfrog-like
 * update, with or without the gravitational forces. */
static void nbody_reference(int n, int steps, int forces, double* out /* n x 3 */)
{
    const double dt = (double)0.0001f, eps = (double)0.0001f;
    cl_float4* p0 = (cl_float4*)malloc((size_t)n * sizeof(cl_float4));
    cl_float4* v0 = (cl_float4*)malloc((size_t)n * sizeof(cl_float4));
    double* p = (double*)malloc((size_t)n * 4 * sizeof(double));
    double* q = (double*)malloc((size_t)n * 4 * sizeof(double));
    double* v = (double*)malloc((size_t)n * 3 * sizeof(double));
    assert_true(p0 && v0 && p && q && v);
    nbody_init(n, p0, v0);
    for (int i = 0; i < n; i++) {
        for (int k = 0; k < 4; k++) p[4 * i + k] = p0[i].s[k];
        for (int k = 0; k < 3; k++) v[3 * i + k] = v0[i].s[k];
    }
    for (int s = 0; s < steps; s++) {
        for (int i = 0; i < n; i++) {
            double a[3] = {0, 0, 0};
            for (int j = 0; forces && j < n; j++) {
                double d[3], r2 = 0;
                for (int k = 0; k < 3; k++) d[k] = p[4 * j + k] - p[4 * i + k], r2 += d[k] * d[k];
                double invr = 1.0 / sqrt(r2 + eps);
                double f = p[4 * j + 3] * invr * invr * invr;
                for (int k = 0; k < 3; k++) a[k] += f * d[k];
            }
            for (int k = 0; k < 3; k++) {
                q[4 * i + k] = p[4 * i + k] + dt * v[3 * i + k] + 0.5 * dt * dt * a[k];
                v[3 * i + k] += dt * a[k];
            }
            q[4 * i + 3] = p[4 * i + 3];
        }
        double* t = p;
        p = q;
        q = t;
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) out[3 * i + k] = p[4 * i + k];
    free(p0);
    free(v0);
    free(p);
    free(q);
    free(v);
}

static double max_diff(const double* a, const double* b, int n3)
{
    double m = 0;
    for (int i = 0; i < n3; i++) m = fmax(m, fabs(a[i] - b[i]));
    return m;
}

static void test_compat_nbody_tutorial_matches_double_precision(void** state)
{
    (void)state;
    enum { N = 256, NSTEP = 20, NBURST = 10 }; /* 20 steps, 2 bursts */
    const double tol = 2e-5;
    tu_proc r;
    const char* args[] = {"256", "20", "10", NULL};
    run_program(&r, "helper_compat_nbody", args);

    double* got = (double*)calloc(N * 3, sizeof(double));
    double* want = (double*)malloc(N * 3 * sizeof(double));
    double* drift = (double*)malloc(N * 3 * sizeof(double));
    assert_true(got && want && drift);
    const char* p = r.out;
    for (int i = 0; i < N; i++) {
        int idx = -1, used = 0;
        double w = 0;
        if (sscanf(p, "%d %lf %lf %lf %lf%n", &idx, &got[3 * i], &got[3 * i + 1], &got[3 * i + 2], &w, &used) != 5 ||
            idx != i) {
            print_error("particle %d: output line missing or malformed\n", i);
            tu_proc_dump(&r, "helper_compat_nbody");
            fail();
        }
        assert_true(w == 1.0); /* the mass rides along unchanged */
        p += used;
    }
    nbody_reference(N, NSTEP, 1, want);
    nbody_reference(N, NSTEP, 0, drift);
    /* The test can tell: forces move the particles well beyond the tolerance. */
    assert_true(max_diff(want, drift, N * 3) > 10 * tol);
    double err = max_diff(got, want, N * 3);
    print_message("nbody: largest difference from the double-precision run %.3g (forces moved particles by up "
                  "to %.3g)\n", err, max_diff(want, drift, N * 3));
    if (err > tol) {
        for (int i = 0; i < N; i++)
            for (int k = 0; k < 3; k++)
                if (fabs(got[3 * i + k] - want[3 * i + k]) > tol) {
                    print_error("particle %d coordinate %d: %.9g, want %.9g\n", i, k, got[3 * i + k], want[3 * i + k]);
                    i = N;
                    break;
                }
        print_error("largest difference %.3g (tolerance %.3g)\n", err, tol);
    }
    assert_true(err <= tol);
    free(got);
    free(want);
    free(drift);
    tu_proc_free(&r);
}

int main(int argc, char** argv)
{
    tu_filter_from_args(argc, argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compat_example1_adds_vectors),
        cmocka_unit_test(test_compat_example2_adds_vectors_on_two_devices),
        cmocka_unit_test(test_compat_example2_needs_the_second_device),
        cmocka_unit_test(test_compat_nbody_tutorial_matches_double_precision),
    };
    return cmocka_run_group_tests_name("compat", tests, NULL, NULL);
}
