/* SPDX-License-Identifier: MIT */
/* test_compat.c: source compatibility.  Programs written to the STDCL 1.6 API
 * compile unchanged against stdcl.h (they are built as helpers) and give the
 * right results: the two examples of the API reference (vector sums, exact;
 * example 2 on two devices) and the NBody tutorial's host program (positions
 * against a double-precision computation on the host).  Each program runs
 * from tests/kernels/, where the kernel files it opens are.  Then the
 * STDCL 1.6 style programs of tests/compat/stdcl16/, written here to make the
 * calls COPRTHR's example programs make (every number they print is checked),
 * and helper_compat_sweep, the calling pattern of COPRTHR's test_stdcl
 * programs (kernels of 2 to 8 pointer arguments through clarg_set_global +
 * clfork and clforka, on each device and on both at once), in zero-copy and
 * copy mode.  Then the C++ containers' programs.  The CLETE expression
 * templates have their own program, test_clete.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <string.h>

#include <stdcl.h>

#include "test_util.h"

/* nbody_init, to recompute the tutorial's run. */
#include "compat/nbody_util.c"

/* Runs helper `name` from tests/kernels/ with args; fills r, checks exit 0. */
static void run_program(tu_proc* r, const char* name, const char* const* args)
{
    const char* env[] = {"STDCL_KERNEL_PATH", NULL};
    tu_spawn(r, tu_helper(name), args, env, tu_kernel(NULL), 120);
    tu_expect_status(r, 0, name);
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

/* Example `name` adds its 1024 elements right, quietly. */
static void check_example(const char* name)
{
    tu_proc r;
    run_program(&r, name, NULL);
    check_vector_sums(&r, 1024);
    assert_not_contains(r.err, "stdcl");
    tu_proc_free(&r);
}

static void test_compat_example1_adds_vectors(void** state)
{
    (void)state;
    check_example("helper_compat_example1");
}

static void test_compat_example2_adds_vectors_on_two_devices(void** state)
{
    (void)state;
    check_example("helper_compat_example2");
}

static void test_compat_example2_needs_the_second_device(void** state)
{
    (void)state;
    /* With one device, example 2's work for device 1 cannot run: its half of
     * the sums stays 0.  (Shows that the run above used both devices.) */
    tu_proc r;
    const char* env[] = {"STDCL_KERNEL_PATH", "STDCPU_MAX_NDEV=1", NULL};
    tu_spawn(&r, tu_helper("helper_compat_example2"), NULL, env, tu_kernel(NULL), 120);
    tu_expect_status(&r, 0, "helper_compat_example2");
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
                  "to %.3g)\n",
                  err, max_diff(want, drift, N * 3));
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

/* ------------------------------------------------------------------------ */
/* STDCL 1.6 style programs written here (tests/compat/stdcl16/): the calls */
/* COPRTHR's example programs make, in their 1.6 forms; kernels embedded by */
/* clcc where the PROGRAMS file names them, else opened by name from the    */
/* program's build folder (the current directory).  Every printed number is */
/* compared with a value computed here.                                     */
/* ------------------------------------------------------------------------ */

/* Runs build/tests/compat/stdcl16/<dir>/<prog>; fills r, checks exit 0.
 * Returns its output, where the check of its numbers starts. */
static const char* run_stdcl16(tu_proc* r, const char* dir, const char* prog)
{
    char path[600], cwd[600];
    snprintf(path, sizeof path, "compat/stdcl16/%s/%s", dir, prog);
    snprintf(cwd, sizeof cwd, "%s", tu_helper(path));
    *strrchr(cwd, '/') = '\0';
    const char* env[] = {"STDCL_KERNEL_PATH", NULL};
    tu_spawn(r, tu_helper(path), NULL, env, cwd, 120);
    tu_expect_status(r, 0, prog);
    return r->out;
}

/* The end of a run_stdcl16 program's check: its numbers end at p, it said
 * no error; frees r. */
static void end_stdcl16(const char* p, tu_proc* r, const char* prog)
{
    tu_expect_end(p, r, prog);
    assert_not_contains(r->err, "error");
    tu_proc_free(r);
}

/* stencil: u(i) = i^3 - 40 i. */
static double stencil_u(long i) { return (double)(i * i * i - 40 * i); }

static void test_stdcl16_stencil_forks_with_clforka_and_waits(void** state)
{
    (void)state;
    tu_proc r;
    const char* p = run_stdcl16(&r, "stencil", "stencil");
    const long n = 96;
    for (long i = 0; i < n; i++) {
        double d = (i == 0 || i == n - 1) ? 0 : stencil_u(i - 1) - 2 * stencil_u(i) + stencil_u(i + 1);
        tu_expect_num(&p, &r, "stencil", "index", i, (double)i);
        tu_expect_num(&p, &r, "stencil", "u", i, stencil_u(i));
        tu_expect_num(&p, &r, "stencil", "d", i, d);
    }
    end_stdcl16(p, &r, "stencil");
}

/* powsum_file, powsum_nobuild: "i base acc", acc the running sum of
 * base^power with base[k] = k - 20. */
static void check_powsum(const char* prog, int power)
{
    tu_proc r;
    const char* p = run_stdcl16(&r, "powsum", prog);
    long long acc = 0;
    for (long i = 0; i < 128; i++) {
        long long b = i - 20, t = 1;
        for (int e = 0; e < power; e++) t *= b;
        acc += t;
        tu_expect_num(&p, &r, prog, "index", i, (double)i);
        tu_expect_num(&p, &r, prog, "base", i, (double)b);
        tu_expect_num(&p, &r, prog, "acc", i, (double)acc);
    }
    end_stdcl16(p, &r, prog);
}

static void test_stdcl16_powsum_file_runs_a_kernel_file(void** state)
{
    (void)state;
    check_powsum("powsum_file", 2);
}

static void test_stdcl16_powsum_nobuild_builds_with_clbuild_options(void** state)
{
    (void)state;
    check_powsum("powsum_nobuild", 3); /* clbuild(..., "-D POWER=3", 0) */
}

static void test_stdcl16_grid_embed_runs_embedded_kernels(void** state)
{
    (void)state;
    tu_proc r;
    const char* p = run_stdcl16(&r, "grid_embed", "grid_embed");
    const long w = 12, h = 10;
    long long rowsum[10] = {0};
    for (long y = 0; y < h; y++)
        for (long x = 0; x < w; x++) {
            long long g = (x + 1) * (y + 2) - 3 * x + y * y;
            rowsum[y] += g;
            tu_expect_num(&p, &r, "grid_embed", "x of cell", y * w + x, (double)x);
            tu_expect_num(&p, &r, "grid_embed", "y of cell", y * w + x, (double)y);
            tu_expect_num(&p, &r, "grid_embed", "cell", y * w + x, (double)g);
        }
    for (long y = 0; y < h; y++) {
        tu_expect_num(&p, &r, "grid_embed", "row index", y, (double)y);
        tu_expect_num(&p, &r, "grid_embed", "row sum", y, (double)rowsum[y]);
    }
    end_stdcl16(p, &r, "grid_embed");
}

static void test_stdcl16_image_lookup_reads_an_image2d_table(void** state)
{
    (void)state;
    cl_bool img = CL_FALSE;
    clGetDeviceInfo(stdcl_device(stddev, 0), CL_DEVICE_IMAGE_SUPPORT, sizeof img, &img, NULL);
    if (!img) skip();
    tu_proc r;
    const char* p = run_stdcl16(&r, "image_lookup", "image_lookup");
    for (long i = 0; i < 256; i++) {
        long x = i % 8, y = (i / 8) % 4, v = i % 13 - 6;
        tu_expect_num(&p, &r, "image_lookup", "index", i, (double)i);
        tu_expect_num(&p, &r, "image_lookup", "out", i, (double)(v * (x + 1) + 2 * y - x * y));
    }
    end_stdcl16(p, &r, "image_lookup");
}

static void test_stdcl16_vector_grow_rebinds_after_push_back(void** state)
{
    (void)state;
    tu_proc r;
    const char* p = run_stdcl16(&r, "vector_grow", "vector_grow");
    const long lengths[2] = {300, 1700};
    for (int pass = 0; pass < 2; pass++) {
        long n = lengths[pass];
        tu_expect_num(&p, &r, "vector_grow", "length of pass", pass, (double)n);
        for (long i = 0; i < n; i++) {
            long x = i < 300 ? (i * i) % 97 : 5000 - 2 * i;
            tu_expect_num(&p, &r, "vector_grow", "index", i, (double)i);
            tu_expect_num(&p, &r, "vector_grow", "x", i, (double)x);
            tu_expect_num(&p, &r, "vector_grow", "y", i, (double)(3 * x - i));
        }
    }
    end_stdcl16(p, &r, "vector_grow");
}

static void test_stdcl16_array_resize_rebinds_after_resize(void** state)
{
    (void)state;
    tu_proc r;
    const char* p = run_stdcl16(&r, "array_resize", "array_resize");
    const long shapes[2][2] = {{40, 16}, {90, 24}};
    for (int pass = 0; pass < 2; pass++) {
        long rows = shapes[pass][0], cols = shapes[pass][1];
        tu_expect_num(&p, &r, "array_resize", "rows of pass", pass, (double)rows);
        tu_expect_num(&p, &r, "array_resize", "columns of pass", pass, (double)cols);
        for (long row = 0; row < rows; row++) {
            long lo = 0, hi = 0;
            for (long c = 0; c < cols; c++) {
                long v = (7 * row + 3 * c * c) % 23 - 11;
                if (c == 0 || v < lo) lo = v;
                if (c == 0 || v > hi) hi = v;
            }
            tu_expect_num(&p, &r, "array_resize", "row index", row, (double)row);
            tu_expect_num(&p, &r, "array_resize", "span", row, (double)(hi - lo));
        }
    }
    end_stdcl16(p, &r, "array_resize");
}

/* ------------------------------------------------------------------------ */
/* The calling pattern of COPRTHR's test_stdcl programs (helper_compat_sweep) */
/* ------------------------------------------------------------------------ */

/* The sum over helper_compat_sweep's 1000 elements of output j of k_<a>_<b>
 * on device d in form f, from its formula, in 64 bits. */
static long long sweep_sum(int f, int d, int a, int j)
{
    long long sum = 0;
    for (long long e = 0; e < 1000; e++) {
        long long t = 0;
        for (int i = 0; i < a; i++) t += (i + 1) * (e + 1000 * i + 100000 * d + 1000000 * f);
        sum += (j + 1) * t + j;
    }
    return sum;
}

/* Runs helper_compat_sweep with env and checks every line it prints: each
 * launch's outputs, in order, their sums and no wrong element. */
static void check_sweep(const char* const* env)
{
    static const char* const form[] = {"fork", "forka", "ndev"};
    tu_proc r;
    tu_spawn(&r, tu_helper("helper_compat_sweep"), NULL, env, NULL, 240);
    tu_expect_status(&r, 0, "helper_compat_sweep");
    const char* p = r.out;
    int lines = 0;
    for (int f = 0; f < 3; f++)
        for (int outer = 0; outer < (f < 2 ? 2 : 1); outer++) /* fork, forka: device by device */
            for (int a = 1; a < 8; a++)
                for (int b = 1; a + b <= 8; b++)
                    for (int inner = 0; inner < (f < 2 ? 1 : 2); inner++) /* ndev: both devices per kernel */
                        for (int j = 0; j < b; j++) {
                            int d = f < 2 ? outer : inner;
                            char want[96], got[96];
                            long long sum = 0;
                            int bad = -1, used = 0;
                            snprintf(want, sizeof want, "%s dev %d k_%d_%d y%d sum", form[f], d, a, b, j);
                            const char* nl = strchr(p, '\n');
                            snprintf(got, sizeof got, "%.*s", nl ? (int)(nl - p) : (int)strlen(p), p);
                            if (strncmp(p, want, strlen(want)) != 0 ||
                                sscanf(p + strlen(want), " %lld bad %d%n", &sum, &bad, &used) != 2) {
                                print_error("line %d: '%s', want '%s ...'\n", lines + 1, got, want);
                                fail();
                            }
                            if (sum != sweep_sum(f, d, a, j) || bad != 0)
                                fail_msg("line %d: '%s': want sum %lld bad 0", lines + 1, got, sweep_sum(f, d, a, j));
                            p += strlen(want) + used;
                            p += *p == '\n';
                            lines++;
                        }
    assert_int_equal(lines, 3 * 2 * 84); /* 84 outputs over the 28 kernels, 3 forms, 2 devices */
    assert_string_equal(p, "");
    assert_int_equal(r.err[0], '\0');
    tu_proc_free(&r);
}

static void test_compat_argument_sweep_zero_copy(void** state)
{
    (void)state;
    const char* env[] = {"STDCL_KERNEL_PATH", NULL};
    check_sweep(env);
}

static void test_compat_argument_sweep_copy_mode(void** state)
{
    (void)state;
    const char* env[] = {"STDCL_KERNEL_PATH", "STDCL_ZERO_COPY=0", NULL};
    check_sweep(env);
}

static void test_compat_argument_sweep_copy_mode_one_queue(void** state)
{
    (void)state;
    const char* env[] = {"STDCL_KERNEL_PATH", "STDCL_ZERO_COPY=0", "STDCL_OVERLAP=0", NULL};
    check_sweep(env);
}

/* ------------------------------------------------------------------------ */
/* The STDCL 1.6 calls and forms (clwait's event, clstat, clload, ...)       */
/* ------------------------------------------------------------------------ */

static const char* k_inc =
    "#include <stdcl.h>\n"
    "#ifndef __stdcl_kernel__\n#error no __stdcl_kernel__\n#endif\n"
    "__kernel void inc(__global int* a) { int i = get_global_id(0); int2 v = __builtin_vector_int2(1, 2);"
    " a[i] += v.y - v.x; }\n";

static void test_compat_kernel_includes_stdcl_h(void** state)
{
    (void)state;
    void* h = tu_clsopen(stdcpu, k_inc, CLLD_NOW);
    cl_kernel k = clsym(stdcpu, h, "inc", 0);
    assert_non_null(k);
    int* a = (int*)clmalloc(stdcpu, 64 * sizeof(int), 0);
    for (int i = 0; i < 64; i++) a[i] = i;
    clndrange_t ndr = clndrange_init1d(0, 64, 16);
    clmsync(stdcpu, 1, a, CL_MEM_DEVICE | CL_EVENT_WAIT);
    /* clexecb: launch by kernel name */
    assert_non_null(clexecb(stdcpu, 1, &ndr, inc, a));
    clmsync(stdcpu, 1, a, CL_MEM_HOST | CL_EVENT_WAIT);
    for (int i = 0; i < 64; i++) assert_int_equal(a[i], i + 1);
    clerror();
    assert_null(clexecb(stdcpu, 1, &ndr, no_such_kernel, a));
    assert_contains(clerror(), "the kernel is NULL");
    clfree(a);
    clclose(stdcpu, h);
}

static void test_clwait_returns_the_last_event(void** state)
{
    (void)state;
    void* h = clsopen(stdcpu, k_inc, CLLD_NOW);
    cl_kernel k = clsym(stdcpu, h, "inc", 0);
    int* a = (int*)clmalloc(stdcpu, 64 * sizeof(int), 0);
    memset(a, 0, 64 * sizeof(int));
    assert_non_null(clmsync(stdcpu, 0, a, CL_MEM_DEVICE | CL_EVENT_WAIT));
    clndrange_t ndr = clndrange_init1d(0, 64, 16);
    cl_event ek = clforka(stdcpu, 0, k, &ndr, CL_EVENT_NOWAIT | CL_EVENT_NORELEASE, a);
    assert_non_null(ek);
    cl_event got = clwait(stdcpu, 0, CL_KERNEL_EVENT | CL_EVENT_NORELEASE);
    assert_ptr_equal(got, ek); /* the kernel's event, complete */
    cl_int st = -1;
    clGetEventInfo(got, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
    assert_int_equal(st, CL_COMPLETE);
    clReleaseEvent(ek);
    /* Nothing pending: a completed event, not NULL. */
    got = clwait(stdcpu, 1, CL_ALL_EVENT);
    assert_non_null(got);
    clGetEventInfo(got, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL);
    assert_int_equal(st, CL_COMPLETE);
    /* Failure: NULL with the reason. */
    clerror();
    assert_null(clwait(stdcpu, 7, CL_ALL_EVENT));
    assert_contains(clerror(), "out of range");
    /* clwaitev: one handed-over event. */
    cl_event e = clforka(stdcpu, 0, k, &ndr, CL_EVENT_NOWAIT | CL_EVENT_NORELEASE, a);
    assert_ptr_equal(clwaitev(stdcpu, 0, e, 0), e); /* waited and released */
    assert_int_equal(stdcl_wait(stdcpu, 0, CL_ALL_EVENT), 0);
    clerror();
    assert_null(clwaitev(stdcpu, 0, NULL, 0));
    assert_contains(clerror(), "clwaitev: the event is NULL");
    assert_non_null(clmsync(stdcpu, 0, a, CL_MEM_HOST | CL_EVENT_WAIT));
    for (int i = 0; i < 64; i++) assert_int_equal(a[i], 2);
    clfree(a);
    clclose(stdcpu, h);
}

static void test_clstat_counts_programs_and_kernels(void** state)
{
    (void)state;
    struct clstat_info before, after;
    assert_int_equal(clstat(stdcpu, &before), 0);
    assert_int_equal(before.ndev, 2);
    void* h = clsopen(stdcpu, "__kernel void z1(__global int* a) { a[0] = 1; }\n", CLLD_NOW);
    assert_non_null(clsym(stdcpu, h, "z1", 0));
    assert_int_equal(clstat(stdcpu, &after), 0);
    assert_int_equal(after.nprg, before.nprg + 1);
    assert_int_equal(after.nkrn, before.nkrn + 1);
    clclose(stdcpu, h);
    clerror();
    assert_int_equal(clstat(stdcpu, NULL), STDCL_EINVAL);
    assert_contains(clerror(), "clstat: info is NULL");
}

static void test_clgetdevinfo_describes_each_device(void** state)
{
    (void)state;
    struct cldev_info info[2];
    assert_int_equal(clgetdevinfo(stdcpu, info), 0);
    char name[256] = "";
    clGetDeviceInfo(stdcl_device(stdcpu, 1), CL_DEVICE_NAME, sizeof name, name, NULL);
    assert_string_equal(info[1].dev_name, name);
    assert_true(info[0].dev_type & CL_DEVICE_TYPE_CPU);
    assert_true(info[0].dev_max_core > 0 && info[0].dev_global_mem_sz > 0);
    char* buf = NULL;
    size_t len = 0;
    FILE* f = open_memstream(&buf, &len);
    clfreport_devinfo(f, 2, info);
    fclose(f);
    assert_contains(buf, "device 1: ");
    assert_contains(buf, name);
    free(buf);
    clerror();
    assert_int_equal(clgetdevinfo(stdcpu, NULL), STDCL_EINVAL);
    assert_contains(clerror(), "clgetdevinfo: info is NULL");
}

static void test_clmemptr_finds_the_allocation(void** state)
{
    (void)state;
    char* p = (char*)clmalloc(stdcpu, 4096, 0);
    assert_ptr_equal(clmemptr(stdcpu, p + 100), p);
    assert_ptr_equal(clmemptr(stdcpu, p), p);
    int x;
    clerror();
    assert_null(clmemptr(stdcpu, &x));
    assert_contains(clerror(), "is not inside memory returned by clmalloc");
    clfree(p);
}

static void test_clload_and_clloadb_open_programs(void** state)
{
    (void)state;
    char src[] = "__kernel void seven(__global int* a) { a[get_global_id(0)] = 7; }\nGARBAGE";
    void* h = clload(stdcpu, src, strlen(src) - strlen("GARBAGE"), CLLD_NOW); /* len bounds the text */
    if (!h) print_error("clload: %s\n", clerror());
    assert_non_null(h);
    assert_non_null(clsym(stdcpu, h, "seven", 0));
    clclose(stdcpu, h);
    clerror();
    assert_null(clload(stdcpu, src, 0, 0));
    assert_contains(clerror(), "clload: the length is 0");
    /* A source that does not build: the compiler's reason, said once. */
    static char bad[] = "__kernel void broken(__global int* a) { a[0] = undeclared_name; }";
    assert_null(clload(stdcpu, bad, sizeof bad, CLLD_NOW));
    const char* why = clerror();
    assert_non_null(why);
    assert_contains(why, "clload: ");
    assert_contains(why, "undeclared_name");
    assert_not_contains(why, "basic_string");
    assert_null(clerror());

    /* Binaries made with plain OpenCL, one per device. */
    cl_int err = CL_SUCCESS;
    const char* text = src;
    size_t tl = strlen(src) - strlen("GARBAGE");
    cl_program prog = clCreateProgramWithSource(stdcl_clcontext(stdcpu), 1, &text, &tl, &err);
    assert_int_equal(err, CL_SUCCESS);
    cl_device_id devs[2] = {stdcl_device(stdcpu, 0), stdcl_device(stdcpu, 1)};
    assert_int_equal(clBuildProgram(prog, 2, devs, "", NULL, NULL), CL_SUCCESS);
    size_t sizes[2];
    assert_int_equal(clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof sizes, sizes, NULL), CL_SUCCESS);
    char* bins[2] = {(char*)malloc(sizes[0]), (char*)malloc(sizes[1])};
    assert_int_equal(clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL), CL_SUCCESS);
    clReleaseProgram(prog);
    void* hb = clloadb(stdcpu, 2, bins, sizes, CLLD_NOW);
    if (!hb) print_error("clloadb: %s\n", clerror());
    assert_non_null(hb);
    cl_kernel k = clsym(stdcpu, hb, "seven", 0);
    assert_non_null(k);
    int* a = (int*)clmalloc(stdcpu, 16 * sizeof(int), 0);
    clndrange_t ndr = clndrange_init1d(0, 16, 0);
    assert_non_null(clforka(stdcpu, 1, k, &ndr, CL_EVENT_WAIT, a));
    clmsync(stdcpu, 1, a, CL_MEM_HOST | CL_EVENT_WAIT);
    for (int i = 0; i < 16; i++) assert_int_equal(a[i], 7);
    clfree(a);
    assert_int_equal(clclose(stdcpu, hb), 0);
    clerror();
    assert_null(clloadb(stdcpu, 1, bins, sizes, 0));
    assert_contains(clerror(), "1 binaries for the 2 device(s)");
    free(bins[0]);
    free(bins[1]);
}

static void test_clglmalloc_without_gl_sharing_says_so(void** state)
{
    (void)state;
    clerror();
    assert_null(clglmalloc(stdcpu, 1, 0, 0, CL_MEM_GLBUF));
    assert_contains(clerror(), "has no GL sharing");
    assert_null(clglmalloc(stdcpu, 1, 0, 0, CL_MEM_GLBUF | CL_MEM_GLRBUF));
    assert_contains(clerror(), "exactly one of CL_MEM_GLBUF");
    int x;
    assert_null(clglmsync(stdcpu, 0, &x, CL_MEM_GLBUF));
    assert_contains(clerror(), "was not returned by clglmalloc");
}

static void test_compat_ndrange_4d_and_float4_names(void** state)
{
    (void)state;
    clndrange_t a = clndrange_init4d(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
    clndrange_t b;
    clndrange_set4d(b, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
    assert_memory_equal(&a, &b, sizeof a);
    assert_int_equal(a.dim, 4);
    assert_int_equal(a.gtsz[3], 11);
    cl_float4 f;
    cl_float4_x(f) = 1, cl_float4_y(f) = 2, cl_float4_z(f) = 3, cl_float4_w(f) = 4;
    assert_true(f.s[0] == 1 && f.s[1] == 2 && f.s[2] == 3 && f.s[3] == 4);
}

static void test_clcontext_create_takes_extra_properties(void** state)
{
    (void)state;
    cl_context_properties none[] = {0};
    CLCONTEXT* cp = clcontext_create("pocl", CL_DEVICE_TYPE_CPU, 1, none, 0);
    if (!cp) print_error("clcontext_create: %s\n", clerror());
    assert_non_null(cp);
    assert_int_equal(clgetndev(cp), 1);
    assert_int_equal(clcontext_destroy(cp), 0);
    cl_context_properties bad[] = {CL_CONTEXT_PLATFORM, 0, 0};
    clerror();
    assert_null(clcontext_create(NULL, CL_DEVICE_TYPE_CPU, 0, bad, 0));
    assert_contains(clerror(), "ctxprop_ext holds CL_CONTEXT_PLATFORM");
}

/* COPRTHR's colon-separated form, STDCPU="1:max_ndev=1:platform_name=pocl". */
static void test_compat_old_environment_clauses(void** state)
{
    (void)state;
    static const tu_env_row rows[] = {
        {.name = "STDCPU=1 with clauses",
         .env = {"STDCPU=1:max_ndev=1:platform_name=pocl", "STDCPU_MAX_NDEV"},
         .warnings = TU_ANY,
         .out_has = {"stdcpu=1 ", "STDCPU_PLATFORM_NAME matched 'pocl'"}},
        {.name = "STDCPU=0 with a clause",
         .env = {"STDCPU=0:max_ndev=1"},
         .warnings = TU_ANY,
         .out_has = {"stdcpu=0 "}},
    };
    tu_env_check_rows(rows, tu_countof(rows));
}

/* The C++ programs: clvector/clmulti_array growth and stdcl.hpp. */
static void test_compat_cxx_containers_stay_bound(void** state)
{
    (void)state;
    tu_proc r;
    const char* env[] = {"STDCL_KERNEL_PATH", NULL};
    tu_spawn(&r, tu_helper("compat/cxx/cxx_containers"), NULL, env, NULL, 120);
    tu_expect_status(&r, 0, "cxx_containers");
    assert_not_contains(r.out, "FAILED");
    assert_contains(r.out, "ok clvector grown while attached stays bound to the kernel");
    assert_contains(r.out, "ok clmulti_array resized while attached stays bound to the kernel");
    assert_contains(r.out, "ok stdcl.hpp program without exceptions is empty");
    tu_proc_free(&r);
}

static void test_compat_stdcl_hpp_example_runs(void** state)
{
    (void)state;
    char path[600], cwd[600];
    snprintf(path, sizeof path, "%s/../examples/stdcl_hpp/stdcl_hpp", tu_bindir());
    snprintf(cwd, sizeof cwd, "%s/../examples/stdcl_hpp", tu_bindir());
    tu_proc r;
    const char* env[] = {"STDCL_KERNEL_PATH", NULL};
    tu_spawn(&r, path, NULL, env, cwd, 120);
    tu_expect_status(&r, 0, "stdcl_hpp");
    assert_contains(r.out, "device 0: ok\ndevice 1: ok\n");
    assert_contains(r.out, "caught: clsym: no kernel 'no_such_kernel'");
    tu_proc_free(&r);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_compat_example1_adds_vectors),
    cmocka_unit_test(test_compat_example2_adds_vectors_on_two_devices),
    cmocka_unit_test(test_compat_example2_needs_the_second_device),
    cmocka_unit_test(test_compat_nbody_tutorial_matches_double_precision),
    cmocka_unit_test(test_stdcl16_stencil_forks_with_clforka_and_waits),
    cmocka_unit_test(test_stdcl16_powsum_file_runs_a_kernel_file),
    cmocka_unit_test(test_stdcl16_powsum_nobuild_builds_with_clbuild_options),
    cmocka_unit_test(test_stdcl16_grid_embed_runs_embedded_kernels),
    cmocka_unit_test(test_stdcl16_image_lookup_reads_an_image2d_table),
    cmocka_unit_test(test_stdcl16_vector_grow_rebinds_after_push_back),
    cmocka_unit_test(test_stdcl16_array_resize_rebinds_after_resize),
    cmocka_unit_test(test_compat_argument_sweep_zero_copy),
    cmocka_unit_test(test_compat_argument_sweep_copy_mode),
    cmocka_unit_test(test_compat_argument_sweep_copy_mode_one_queue),
    cmocka_unit_test(test_compat_kernel_includes_stdcl_h),
    cmocka_unit_test(test_clwait_returns_the_last_event),
    cmocka_unit_test(test_clstat_counts_programs_and_kernels),
    cmocka_unit_test(test_clgetdevinfo_describes_each_device),
    cmocka_unit_test(test_clmemptr_finds_the_allocation),
    cmocka_unit_test(test_clload_and_clloadb_open_programs),
    cmocka_unit_test(test_clglmalloc_without_gl_sharing_says_so),
    cmocka_unit_test(test_compat_ndrange_4d_and_float4_names),
    cmocka_unit_test(test_clcontext_create_takes_extra_properties),
    cmocka_unit_test(test_compat_old_environment_clauses),
    cmocka_unit_test(test_compat_cxx_containers_stay_bound),
    cmocka_unit_test(test_compat_stdcl_hpp_example_runs),
};

int main(int argc, char** argv) { return tu_run_tests(argc, argv, "compat", tests, NULL, NULL); }
