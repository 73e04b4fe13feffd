/* SPDX-License-Identifier: MIT */
/* test_header.c: include/stdcl.h as a user meets it: a program using every
 * form of the API that has a C and a C++ spelling compiles without a warning
 * as C99 and as C++17 (-Wall -Wextra -pedantic -Werror), links against the
 * library and computes the right result in both languages; a void
 * expression as a clforka argument does not compile, and says which. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_util.h"

static void compile_and_run(const char* lang)
{
    char* dir = tu_mkdtemp();
    assert_non_null(dir);
    char src[PATH_MAX + 64], inc[PATH_MAX + 64], lib[PATH_MAX + 64];
    snprintf(src, sizeof src, "SRC=%s/header/forms.c", tu_srcdir());
    snprintf(inc, sizeof inc, "INC=%s/../include", tu_srcdir());
    snprintf(lib, sizeof lib, "LIB=%s/../lib", tu_bindir());
    const char* env[] = {src, inc, lib, NULL};
    /* STDCL_TEST_CC / STDCL_TEST_CFLAGS: the sanitizer builds' compiler flags. */
    static const char c_script[] =
        "cp \"$SRC\" prog.c && ${STDCL_TEST_CC:-cc} $STDCL_TEST_CFLAGS -std=c99 -Wall -Wextra -pedantic "
        "-Werror -I\"$INC\" prog.c -o prog -L\"$LIB\" -Wl,-rpath,\"$LIB\" -lstdcl -lOpenCL && ./prog";
    static const char cxx_script[] =
        "cp \"$SRC\" prog.cpp && c++ $STDCL_TEST_CFLAGS -std=c++17 -Wall -Wextra -pedantic -Werror "
        "-I\"$INC\" prog.cpp -o prog -L\"$LIB\" -Wl,-rpath,\"$LIB\" -lstdcl -lOpenCL && ./prog";
    const char* args[] = {"-c", strcmp(lang, "c") == 0 ? c_script : cxx_script, NULL};
    tu_proc r;
    tu_spawn(&r, "/bin/sh", args, env, dir, 240);
    tu_expect_status(&r, 0, lang);
    assert_false(tu_contains(r.err, "warning"));
    assert_contains(r.out, "ok");
    tu_proc_free(&r);
    free(dir);
}

static void test_header_compiles_clean_and_runs_as_c99(void** state)
{
    (void)state;
    compile_and_run("c");
}

static void test_header_compiles_clean_and_runs_as_cxx17(void** state)
{
    (void)state;
    compile_and_run("c++");
}

/* An argument no function call could take (a void expression) fails to
 * compile, and the first message names the kernel argument: in C, where
 * clforka is a macro, and in C++, where it is a function template. */
static void expect_no_compile(const char* lang, const char* want)
{
    char* dir = tu_mkdtemp();
    assert_non_null(dir);
    char src[PATH_MAX + 64], inc[PATH_MAX + 64];
    snprintf(src, sizeof src, "SRC=%s/header/void_arg.c", tu_srcdir());
    snprintf(inc, sizeof inc, "INC=%s/../include", tu_srcdir());
    const char* env[] = {src, inc, NULL};
    static const char c_script[] = "cp \"$SRC\" prog.c && ${STDCL_TEST_CC:-cc} -std=c99 -I\"$INC\" -c prog.c";
    static const char cxx_script[] = "cp \"$SRC\" prog.cpp && c++ -std=c++17 -I\"$INC\" -c prog.cpp";
    const char* args[] = {"-c", strcmp(lang, "c") == 0 ? c_script : cxx_script, NULL};
    tu_proc r;
    tu_spawn(&r, "/bin/sh", args, env, dir, 240);
    assert_int_not_equal(r.status, 0);
    assert_contains(r.err, want);
    tu_proc_free(&r);
    free(dir);
}

static void test_void_argument_is_refused_at_compile_time_naming_it(void** state)
{
    (void)state;
    expect_no_compile("c", "clforka_kernel_argument_2_is_void");
    expect_no_compile("c++", "void");
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_header_compiles_clean_and_runs_as_c99),
    cmocka_unit_test(test_header_compiles_clean_and_runs_as_cxx17),
    cmocka_unit_test(test_void_argument_is_refused_at_compile_time_naming_it),
};

int main(int argc, char** argv) { return tu_run_tests(argc, argv, "header", tests, NULL, NULL); }
