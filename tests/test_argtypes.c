/* SPDX-License-Identifier: MIT */
/* test_argtypes.c: scalars typed by the library.  A value of another
 * arithmetic type than the kernel's parameter (typedefs resolved from the
 * kernel file and its #include) reaches the kernel converted as C converts
 * an argument to a prototyped parameter, through clforka, clarg_set and
 * stdcl_forktv; a pointer for a scalar, a scalar for a pointer, a vector of
 * another size are refused naming the argument and both types; the untyped
 * engines (stdcl_forka, stdcl_arg_set) have their sizes checked; arrays
 * decay to pointers in clforka as in a call.  On stdcpu, or on stdgpu with
 * STDCL_TEST_CONTEXT=gpu (make check-gpu). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <stdcl.h>

#include "test_util.h"

static cl_kernel g_typed, g_small, g_vec, g_rows;
static CLCONTEXT* g_cp;

static int setup(void** state)
{
    const char* which = getenv("STDCL_TEST_CONTEXT");
    g_cp = which && strcmp(which, "gpu") == 0 ? stdgpu : stdcpu;
    if (!g_cp) {
        print_error("setup: the context under test is NULL (STDCL_TEST_CONTEXT=%s)\n", which ? which : "");
        return -1;
    }
    const tu_sym syms[] = {{"typed", &g_typed}, {"small", &g_small}, {"vec", &g_vec}, {"rows", &g_rows}};
    return tu_open_kernel_syms_in(g_cp, "argtypes.cl", state, syms, tu_countof(syms));
}

static int teardown(void** state)
{
    return *state && clclose(g_cp, *state) == 0 ? 0 : -1;
}

static clndrange_t one(void)
{
    clndrange_t ndr = clndrange_init1d(0, 1, 1);
    return ndr;
}

static void fetch(void* p)
{
    assert_non_null(clmsync(g_cp, 0, p, CL_MEM_HOST | CL_EVENT_WAIT));
}

static void expect_refused(cl_event ev, const char* a, const char* b, const char* c)
{
    assert_null(ev);
    const char* msg = clerror();
    assert_contains(msg, a);
    assert_contains(msg, b);
    assert_contains(msg, c);
}

static void test_clforka_converts_arithmetic_values_to_the_parameter_type(void** state)
{
    (void)state;
    double* out = (double*)clmalloc(g_cp, 8 * sizeof(double), 0);
    assert_non_null(out);
    clndrange_t ndr = one();
    size_t n = 5;
    /* double for a typedef float, int for a typedef of that typedef, double
     * for float, size_t for int, int for ulong, double for a typedef uint
     * (truncated as C does), float for double. */
    cl_event ev = clforka(g_cp, 0, g_typed, &ndr, CL_EVENT_WAIT, 2.5, 7, 0.5, n, 3, 9.75, 1.5f, out);
    if (!ev) print_error("%s\n", clerror());
    assert_non_null(ev);
    fetch(out);
    assert_true(out[0] == 2.5);
    assert_true(out[1] == 7.0);
    assert_true(out[2] == 0.5);
    assert_true(out[3] == 5.0);
    assert_true(out[4] == 3.0);
    assert_true(out[5] == 9.0);
    assert_true(out[6] == 1.5);
    clfree(out);
}

static void test_clarg_set_converts_in_both_forms(void** state)
{
    (void)state;
    double* out = (double*)clmalloc(g_cp, 8 * sizeof(double), 0);
    assert_non_null(out);
    long big = 1L << 40;
    assert_int_equal(clarg_set(g_typed, 0, 4), 0);           /* int for DATA_TYPE */
    assert_int_equal(clarg_set(g_cp, g_typed, 1, 0.25), 0); /* double for SCALE_TYPE */
    assert_int_equal(clarg_set(g_typed, 2, (short)-2), 0);   /* short for float */
    assert_int_equal(clarg_set(g_typed, 3, big + 6), 0);     /* long for int: modulo 2^32 */
    assert_int_equal(clarg_set(g_typed, 4, 8u), 0);          /* unsigned int for ulong */
    assert_int_equal(clarg_set(g_typed, 5, (unsigned char)200), 0);
    assert_int_equal(clarg_set(g_typed, 6, 3), 0);           /* int for double */
    assert_int_equal(clarg_set(g_typed, 7, out), 0);
    clndrange_t ndr = one();
    assert_non_null(clfork(g_cp, 0, g_typed, &ndr, CL_EVENT_WAIT));
    fetch(out);
    assert_true(out[0] == 4.0);
    assert_true(out[1] == 0.25);
    assert_true(out[2] == -2.0);
    assert_true(out[3] == 6.0);
    assert_true(out[4] == 8.0);
    assert_true(out[5] == 200.0);
    assert_true(out[6] == 3.0);
    clfree(out);
}

static void test_stdcl_forktv_converts_like_clforka(void** state)
{
    (void)state;
    double* out = (double*)clmalloc(g_cp, 8 * sizeof(double), 0);
    assert_non_null(out);
    double a = 1.25, d = 6.5;
    int s = 2, i = -4, u = 11;
    float f = 3.5f, c = 4.0f;
    const size_t sizes[] = {sizeof a, sizeof s, sizeof f, sizeof i, sizeof u, sizeof c, sizeof d, sizeof out};
    const int types[] = {STDCL_TYPE_FLOAT, STDCL_TYPE_INT,  STDCL_TYPE_FLOAT, STDCL_TYPE_INT,
                         STDCL_TYPE_INT,   STDCL_TYPE_FLOAT, STDCL_TYPE_FLOAT, STDCL_TYPE_POINTER};
    const void* values[] = {&a, &s, &f, &i, &u, &c, &d, &out};
    clndrange_t ndr = one();
    assert_non_null(stdcl_forktv(g_cp, 0, g_typed, &ndr, CL_EVENT_WAIT, 8, sizes, types, values));
    fetch(out);
    assert_true(out[0] == 1.25 && out[1] == 2.0 && out[2] == 3.5 && out[3] == -4.0);
    assert_true(out[4] == 11.0 && out[5] == 4.0 && out[6] == 6.5);
    /* An unknown type code is refused. */
    const int bad[] = {STDCL_TYPE_FLOAT, 42, 0, 0, 0, 0, 0, 0};
    expect_refused(stdcl_forktv(g_cp, 0, g_typed, &ndr, CL_EVENT_WAIT, 8, sizes, bad, values), "clforka",
                   "argument 1", "unknown value type 42");
    assert_int_equal(stdcl_arg_sett(g_cp, g_typed, 0, sizeof a, -1, &a), STDCL_EINVAL);
    assert_contains(clerror(), "unknown value type -1");
    clfree(out);
}

static void test_small_integer_parameters_get_c_conversions(void** state)
{
    (void)state;
    int* out = (int*)clmalloc(g_cp, 4 * sizeof(int), 0);
    assert_non_null(out);
    clndrange_t ndr = one();
    /* int for char, int 300 for uchar (44), int 70000 for short (4464). */
    assert_non_null(clforka(g_cp, 0, g_small, &ndr, CL_EVENT_WAIT, -3, 300, 70000, out));
    fetch(out);
    assert_int_equal(out[0], -3);
    assert_int_equal(out[1], 44);
    assert_int_equal(out[2], 4464);
    /* The types themselves pass as they are. */
    char c = 5;
    unsigned char uc = 250;
    short sh = -300;
    assert_non_null(clforka(g_cp, 0, g_small, &ndr, CL_EVENT_WAIT, c, uc, sh, out));
    fetch(out);
    assert_int_equal(out[0], 5);
    assert_int_equal(out[1], 250);
    assert_int_equal(out[2], -300);
    clfree(out);
}

static void test_pointer_for_scalar_is_refused_naming_both_types(void** state)
{
    (void)state;
    double* out = (double*)clmalloc(g_cp, 8 * sizeof(double), 0);
    assert_non_null(out);
    clndrange_t ndr = one();
    expect_refused(clforka(g_cp, 0, g_typed, &ndr, CL_EVENT_WAIT, out, 7, 0.5, 1, 3, 9, 1.5f, out),
                   "clforka: argument 0 of kernel 'typed'", "DATA_TYPE, a typedef of float",
                   "is not a pointer; a pointer was given");
    assert_int_equal(clarg_set(g_typed, 6, out), STDCL_EINVAL);
    assert_contains(clerror(), "argument 6 of kernel 'typed' (double) is not a pointer");
    clfree(out);
}

static void test_scalar_for_pointer_is_refused_but_zero_unbinds(void** state)
{
    (void)state;
    clndrange_t ndr = one();
    expect_refused(clforka(g_cp, 0, g_typed, &ndr, CL_EVENT_WAIT, 2.5, 7, 0.5, 1, 3, 9, 1.5f, 2.0),
                   "argument 7 of kernel 'typed'", "double*", "is a pointer; a double was given");
    assert_int_equal(clarg_set(g_typed, 7, 12345L), STDCL_EINVAL);
    assert_contains(clerror(), "is a pointer; a long was given");
    /* 0 is a null pointer, as in a call. */
    assert_int_equal(clarg_set(g_typed, 7, 0), 0);
}

static void test_vectors_and_structs_must_match(void** state)
{
    (void)state;
    float* out = (float*)clmalloc(g_cp, 4 * sizeof(float), 0);
    assert_non_null(out);
    clndrange_t ndr = one();
    cl_float4 v4;
    cl_float2 v2;
    struct {
        int a, b;
    } p = {3, 4};
    v4.s[0] = 1.0f, v4.s[1] = 2.0f, v4.s[2] = 3.0f, v4.s[3] = 4.0f;
    v2.s[0] = 1.0f, v2.s[1] = 2.0f;
    assert_non_null(clforka(g_cp, 0, g_vec, &ndr, CL_EVENT_WAIT, v4, p, out));
    fetch(out);
    assert_true(out[0] == 10.0f);
    assert_true(out[1] == 7.0f);
    expect_refused(clforka(g_cp, 0, g_vec, &ndr, CL_EVENT_WAIT, v2, p, out), "argument 0 of kernel 'vec' (float4)",
                   "8-byte struct, union or vector", "16-byte parameter");
    expect_refused(clforka(g_cp, 0, g_vec, &ndr, CL_EVENT_WAIT, 1.0f, p, out), "argument 0 of kernel 'vec'",
                   "float4", "a float was given");
    /* An arithmetic parameter does not take a vector. */
    double* dout = (double*)clmalloc(g_cp, 8 * sizeof(double), 0);
    assert_non_null(dout);
    expect_refused(clforka(g_cp, 0, g_typed, &ndr, CL_EVENT_WAIT, v4, 7, 0.5, 1, 3, 9, 1.5f, dout),
                   "argument 0 of kernel 'typed'", "DATA_TYPE", "16-byte struct, union or vector was given");
    clfree(dout);
    clfree(out);
}

static void test_untyped_engines_have_sizes_checked_by_the_library(void** state)
{
    (void)state;
    double d = 2.5;
    /* Before, the driver took the low 4 bytes of the double for DATA_TYPE. */
    assert_int_equal(stdcl_arg_set(g_cp, g_typed, 0, sizeof d, &d), STDCL_EINVAL);
    const char* msg = clerror(); /* read once: the next clerror() is NULL */
    assert_contains(msg, "argument 0 of kernel 'typed' (DATA_TYPE, a typedef of float)");
    assert_contains(msg, "8-byte value was given for a 4-byte parameter");
    float f = 2.5f;
    assert_int_equal(stdcl_arg_set(g_cp, g_typed, 0, sizeof f, &f), 0);
    clndrange_t ndr = one();
    int* out = (int*)clmalloc(g_cp, 4 * sizeof(int), 0);
    assert_non_null(out);
    int i = 1;
    expect_refused(stdcl_forka(g_cp, 0, g_small, &ndr, CL_EVENT_WAIT, 4, sizeof i, &i, sizeof i, &i, sizeof i, &i,
                               sizeof out, &out),
                   "argument 0 of kernel 'small' (char)", "4-byte value", "1-byte parameter");
    clfree(out);
}

static void test_clforka_takes_arrays_as_pointers(void** state)
{
    (void)state;
    enum { N = 1024 };
    /* A pointer to an array (*A is float[N]) and rows of a 2D array (M[1]). */
    float(*A)[N] = (float(*)[N])clmalloc(g_cp, N * sizeof(float), 0);
    float(*M)[N] = (float(*)[N])clmalloc(g_cp, 3 * N * sizeof(float), 0);
    assert_non_null(A);
    assert_non_null(M);
    assert_true(stdcl_mem_align(g_cp) <= N * sizeof(float));
    for (int i = 0; i < N; i++) (*A)[i] = (float)i, M[1][i] = 0.0f;
    assert_non_null(clmsync(g_cp, 0, A, CL_MEM_DEVICE | CL_EVENT_WAIT));
    clndrange_t ndr = clndrange_init1d(0, N, 64);
    cl_event ev = clforka(g_cp, 0, g_rows, &ndr, CL_EVENT_WAIT, *A, M[1], N);
    if (!ev) print_error("%s\n", clerror());
    assert_non_null(ev);
    assert_non_null(clmsync(g_cp, 0, M, CL_MEM_HOST | CL_EVENT_WAIT));
    for (int i = 0; i < N; i++) assert_true(M[1][i] == 2.0f * (float)i);
    clfree(M);
    clfree(A);
}

/* A typedef in a header found through the program's own -I option. */
static void test_typedefs_follow_the_programs_include_options(void** state)
{
    (void)state;
    char* dir = tu_mkdtemp();
    assert_non_null(dir);
    char path[4096];
    snprintf(path, sizeof path, "%s/wide_type.h", dir);
    assert_int_equal(tu_write_file(path, "typedef double WIDE_T;\n"), 0);
    char opts[4200];
    snprintf(opts, sizeof opts, "-I %s", dir);
    void* h = clsopen_opt(g_cp, "#include \"wide_type.h\"\n"
                                "__kernel void wide(WIDE_T a, __global double* out) { out[0] = a; }\n",
                          opts, CLLD_NOW);
    if (!h) print_error("clsopen_opt: %s\n", clerror());
    assert_non_null(h);
    cl_kernel k = clsym(g_cp, h, "wide", CLLD_NOW);
    assert_non_null(k);
    double* out = (double*)clmalloc(g_cp, sizeof(double), 0);
    assert_non_null(out);
    clndrange_t ndr = one();
    assert_non_null(clforka(g_cp, 0, k, &ndr, CL_EVENT_WAIT, 3, out)); /* an int for a typedef of double */
    fetch(out);
    assert_true(out[0] == 3.0);
    clfree(out);
    clclose(g_cp, h);
    unlink(path);
    rmdir(dir);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clforka_converts_arithmetic_values_to_the_parameter_type),
        cmocka_unit_test(test_clarg_set_converts_in_both_forms),
        cmocka_unit_test(test_stdcl_forktv_converts_like_clforka),
        cmocka_unit_test(test_small_integer_parameters_get_c_conversions),
        cmocka_unit_test(test_pointer_for_scalar_is_refused_naming_both_types),
        cmocka_unit_test(test_scalar_for_pointer_is_refused_but_zero_unbinds),
        cmocka_unit_test(test_vectors_and_structs_must_match),
        cmocka_unit_test(test_untyped_engines_have_sizes_checked_by_the_library),
        cmocka_unit_test(test_clforka_takes_arrays_as_pointers),
        cmocka_unit_test(test_typedefs_follow_the_programs_include_options),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
