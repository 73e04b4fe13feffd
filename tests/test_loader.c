/* SPDX-License-Identifier: MIT */
/* test_loader.c: clopen, clsopen, clbuild, clsym, clclose: file lookup (current
 * directory, STDCL_KERNEL_PATH), the standard build options, reference
 * counting, CLLD_LAZY and CLLD_NOBUILD, STDCL_BUILD_OPTIONS, options given at
 * open (clopen_opt, clsopen_opt).
 *
 * The group setup moves to a scratch folder (so the current directory holds
 * no kernel file) and opens tests/kernels/loader.cl once by absolute path;
 * tests reuse that build where they can (PoCL compiles cost ~0.5 s each). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdcl.h>

#include "test_util.h"

static char g_oldcwd[PATH_MAX];
static char* g_tmp; /* scratch folder, the current directory during the tests */
static void* g_h; /* loader.cl opened by absolute path */

static int setup(void** state)
{
    (void)state;
    if (tu_need_two_cpu_devices() != 0) return -1;
    if (!tu_srcdir()) {
        print_error("setup: tests/ not found next to the binary nor in STDCL_TEST_SRCDIR\n");
        return -1;
    }
    if (!getcwd(g_oldcwd, sizeof g_oldcwd)) return -1;
    g_tmp = tu_mkdtemp();
    if (!g_tmp || chdir(g_tmp) != 0) return -1;
    g_h = tu_open_kernels("loader.cl");
    if (!g_h) return -1;
    return 0;
}

static int teardown(void** state)
{
    (void)state;
    tu_close_kernels(&g_h);
    if (chdir(g_oldcwd) != 0) return -1;
    if (g_tmp) {
        char path[PATH_MAX + 32];
        snprintf(path, sizeof path, "%s/cwd_inc.h", g_tmp);
        unlink(path);
        rmdir(g_tmp);
        free(g_tmp);
    }
    return 0;
}

/* Runs fill(out, v) over 64 items on device d of stdcpu and checks the values. */
static void check_fill_runs(cl_kernel fill, unsigned d, int v)
{
    enum { N = 64 };
    assert_non_null(fill);
    int* out = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
    assert_non_null(out);
    for (int i = 0; i < N; i++) out[i] = -1;
    clndrange_t ndr = clndrange_init1d(0, N, 16);
    tu_round_trip(d, fill, &ndr, CL_EVENT_WAIT, out, v);
    for (int i = 0; i < N; i++) assert_int_equal(out[i], v);
    assert_int_equal(clfree(out), 0);
}

/* Runs probe_macros of handle h on device d; out gets its 7 values. */
static void run_probe(void* h, unsigned d, int out[7])
{
    cl_kernel k = clsym(stdcpu, h, "probe_macros", CLLD_NOW);
    if (!k) print_error("clsym(probe_macros): %s\n", clerror());
    assert_non_null(k);
    int* buf = (int*)clmalloc(stdcpu, 16 * sizeof(int), 0);
    assert_non_null(buf);
    for (int i = 0; i < 16; i++) buf[i] = -99;
    clndrange_t ndr = clndrange_init1d(0, 1, 1);
    assert_non_null(clmsync(stdcpu, d, buf, CL_MEM_DEVICE | CL_EVENT_WAIT));
    assert_non_null(clforka(stdcpu, d, k, &ndr, CL_EVENT_WAIT, buf));
    assert_non_null(clmsync(stdcpu, d, buf, CL_MEM_HOST | CL_EVENT_WAIT));
    memcpy(out, buf, 7 * sizeof(int));
    assert_int_equal(clfree(buf), 0);
}

/* Runs a one-item kernel `name(__global int* o)` of handle h on device 0 and
 * returns o[0]. */
static int run_scalar_kernel(void* h, const char* name)
{
    cl_kernel k = clsym(stdcpu, h, name, 0);
    if (!k) print_error("clsym(%s): %s\n", name, clerror());
    assert_non_null(k);
    int* o = (int*)clmalloc(stdcpu, sizeof(int), 0);
    assert_non_null(o);
    o[0] = -99;
    clndrange_t ndr = clndrange_init1d(0, 1, 1);
    assert_non_null(clmsync(stdcpu, 0, o, CL_MEM_DEVICE | CL_EVENT_WAIT));
    assert_non_null(clforka(stdcpu, 0, k, &ndr, CL_EVENT_WAIT, o));
    assert_non_null(clmsync(stdcpu, 0, o, CL_MEM_HOST | CL_EVENT_WAIT));
    int v = o[0];
    assert_int_equal(clfree(o), 0);
    return v;
}

/* ------------------------------------------------------------------------ */

static void test_clopen_absolute_path_runs_on_both_devices(void** state)
{
    (void)state;
    assert_non_null(g_h);
    cl_kernel fill = clsym(stdcpu, g_h, "fill", CLLD_NOW);
    check_fill_runs(fill, 0, 11);
    check_fill_runs(fill, 1, 12);
}

static void test_clopen_finds_file_in_cwd(void** state)
{
    (void)state;
    assert_int_equal(chdir(tu_kernel(NULL)), 0);
    void* h = clopen(stdcpu, "loader.cl", CLLD_NOW);
    const char* e = h ? NULL : clerror();
    assert_int_equal(chdir(g_tmp), 0);
    if (!h) print_error("clopen(loader.cl) in %s: %s\n", tu_kernel(NULL), e);
    assert_non_null(h);
    check_fill_runs(clsym(stdcpu, h, "fill", 0), 0, 21);
    assert_int_equal(clclose(stdcpu, h), 0);
}

static void test_clopen_finds_file_via_stdcl_kernel_path(void** state)
{
    (void)state;
    /* The current directory (scratch) has no loader.cl. */
    unsetenv("STDCL_KERNEL_PATH");
    clerror();
    assert_null(clopen(stdcpu, "loader.cl", CLLD_NOW));
    assert_contains(clerror(), "loader.cl");

    char path[2 * PATH_MAX];
    snprintf(path, sizeof path, "/nonexistent-stdcl-dir:%s", tu_kernel(NULL));
    assert_int_equal(setenv("STDCL_KERNEL_PATH", path, 1), 0);
    void* h = clopen(stdcpu, "loader.cl", CLLD_NOW);
    const char* e = h ? NULL : clerror();
    unsetenv("STDCL_KERNEL_PATH");
    if (!h) print_error("clopen via STDCL_KERNEL_PATH=%s: %s\n", path, e);
    assert_non_null(h);
    check_fill_runs(clsym(stdcpu, h, "fill", 0), 1, 31);
    assert_int_equal(clclose(stdcpu, h), 0);
}

static void test_clopen_defines_standard_macros(void** state)
{
    (void)state;
    for (unsigned d = 0; d < 2; d++) {
        int out[7];
        run_probe(g_h, d, out);
        assert_int_equal(out[0], 1); /* __STDCL__ */
        assert_int_equal(out[1], 1); /* __CPU__ */
        assert_int_equal(out[2], 0); /* no __GPU__ on a CPU device */
        assert_int_equal(out[3], 1); /* __POCL__ */
        assert_int_equal(out[5], -1); /* no VALUE: no user options */
        assert_int_equal(out[6], -1); /* no ENV_VALUE: STDCL_BUILD_OPTIONS unset */
    }
}

static void test_clopen_adds_kernel_directory_to_include_path(void** state)
{
    (void)state;
    /* loader.cl includes "loader_inc.h" from tests/kernels/; the program was
     * built from the scratch folder, so only -I <file's directory> finds it. */
    int out[7];
    run_probe(g_h, 0, out);
    assert_int_equal(out[4], 42);
}

static void test_clsopen_adds_cwd_to_include_path(void** state)
{
    (void)state;
    char path[PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/cwd_inc.h", g_tmp);
    assert_int_equal(tu_write_file(path, "#define CWD_VALUE 99\n"), 0);
    void* h = tu_clsopen(stdcpu,
                         "#include \"cwd_inc.h\"\n"
                         "__kernel void cwd_value(__global int* o) { o[0] = CWD_VALUE; }\n",
                         CLLD_NOW);
    assert_int_equal(run_scalar_kernel(h, "cwd_value"), 99);
    assert_int_equal(clclose(stdcpu, h), 0);
}

static const char* k_sopen_src =
    "__kernel void sopen_fill(__global int* out, int v) { out[get_global_id(0)] = v + 1; }\n"
    "__kernel void sopen_one(__global int* o) { o[0] = 1234; }\n";

static void test_clsopen_builds_source(void** state)
{
    (void)state;
    void* h = tu_clsopen(stdcpu, k_sopen_src, CLLD_NOW);
    assert_int_equal(run_scalar_kernel(h, "sopen_one"), 1234);
    assert_int_equal(clclose(stdcpu, h), 0);
}

static void test_clsopen_same_source_returns_same_handle(void** state)
{
    (void)state;
    void* h1 = clsopen(stdcpu, k_sopen_src, CLLD_NOW);
    assert_non_null(h1);
    void* h2 = clsopen(stdcpu, k_sopen_src, CLLD_NOW);
    assert_ptr_equal(h1, h2);
    /* Two opens need two closes: after the first, the handle still works. */
    assert_int_equal(clclose(stdcpu, h1), 0);
    assert_int_equal(run_scalar_kernel(h2, "sopen_one"), 1234);
    assert_int_equal(clclose(stdcpu, h2), 0);
    /* After the second, the handle is gone. */
    clerror();
    assert_true(clclose(stdcpu, h2) < 0);
    assert_non_null(clerror());
    assert_null(clsym(stdcpu, h2, "sopen_one", 0));
    assert_non_null(clerror());
}

static void test_clopen_same_file_twice_returns_same_handle(void** state)
{
    (void)state;
    void* h = clopen(stdcpu, tu_kernel("loader.cl"), CLLD_NOW);
    assert_ptr_equal(h, g_h);
    assert_int_equal(clclose(stdcpu, h), 0);
    /* g_h is still open (count 1). */
    check_fill_runs(clsym(stdcpu, g_h, "fill", 0), 0, 41);
}

static void test_clopen_handle_belongs_to_its_context(void** state)
{
    (void)state;
    clerror();
    assert_null(clsym(stddev, g_h, "fill", 0));
    assert_non_null(clerror());
    assert_true(clclose(stddev, g_h) < 0);
    assert_non_null(clerror());
    /* Still fine in stdcpu. */
    assert_non_null(clsym(stdcpu, g_h, "fill", 0));
}

static void test_clsym_returns_same_kernel_twice(void** state)
{
    (void)state;
    cl_kernel k1 = clsym(stdcpu, g_h, "fill", CLLD_NOW);
    cl_kernel k2 = clsym(stdcpu, g_h, "fill", 0);
    assert_non_null(k1);
    assert_ptr_equal(k1, k2);
    cl_kernel p = clsym(stdcpu, g_h, "probe_macros", 0);
    assert_non_null(p);
    assert_ptr_not_equal(p, k1);
    /* It is a real cl_kernel. */
    char name[64] = "";
    assert_int_equal(clGetKernelInfo(k1, CL_KERNEL_FUNCTION_NAME, sizeof name, name, NULL), CL_SUCCESS);
    assert_string_equal(name, "fill");
}

static void test_clsym_null_handle_searches_all_programs(void** state)
{
    (void)state;
    void* hs = tu_clsopen(stdcpu, "__kernel void only_in_source(__global int* o) { o[0] = 77; }\n", CLLD_NOW);
    cl_kernel a = clsym(stdcpu, NULL, "only_in_source", 0);
    assert_non_null(a);
    assert_ptr_equal(a, clsym(stdcpu, hs, "only_in_source", 0));
    cl_kernel f = clsym(stdcpu, NULL, "fill", 0);
    assert_non_null(f);
    assert_ptr_equal(f, clsym(stdcpu, g_h, "fill", 0));
    assert_int_equal(run_scalar_kernel(NULL, "only_in_source"), 77);
    clerror();
    assert_null(clsym(stdcpu, NULL, "in_no_program_at_all", 0));
    assert_contains(clerror(), "in_no_program_at_all");
    assert_int_equal(clclose(stdcpu, hs), 0);
}

static void test_clopen_lazy_defers_build(void** state)
{
    (void)state;
    /* A program that does not compile: CLLD_LAZY opens it, the first clsym fails. */
    clerror();
    void* bad = clsopen(stdcpu, "__kernel void lazy_bad(__global int* o) { o[0] = lazy_undeclared_q; }\n", CLLD_LAZY);
    if (!bad) print_error("clsopen(CLLD_LAZY) built at open: %s\n", clerror());
    assert_non_null(bad);
    assert_null(clerror());
    assert_null(clsym(stdcpu, bad, "lazy_bad", CLLD_NOW));
    assert_contains(clerror(), "lazy_undeclared_q");
    assert_int_equal(clclose(stdcpu, bad), 0);

    void* good = clsopen(stdcpu, "__kernel void lazy_good(__global int* o) { o[0] = 5150; }\n", CLLD_LAZY);
    assert_non_null(good);
    assert_int_equal(run_scalar_kernel(good, "lazy_good"), 5150);
    assert_int_equal(clclose(stdcpu, good), 0);
}

static void test_clbuild_applies_options_after_nobuild(void** state)
{
    (void)state;
    void* h = clopen(stdcpu, tu_kernel("loader.cl"), CLLD_NOBUILD);
    if (!h) print_error("clopen(CLLD_NOBUILD): %s\n", clerror());
    assert_non_null(h);
    assert_ptr_not_equal(h, g_h); /* a different build to come */
    /* Not built yet: clsym says so. */
    clerror();
    assert_null(clsym(stdcpu, h, "probe_macros", 0));
    assert_contains(clerror(), "clbuild");

    void* b = clbuild(stdcpu, h, "-D VALUE=7", 0);
    if (!b) print_error("clbuild: %s\n", clerror());
    assert_ptr_equal(b, h);
    for (unsigned d = 0; d < 2; d++) {
        int out[7];
        run_probe(h, d, out);
        assert_int_equal(out[5], 7); /* the user's option */
        assert_int_equal(out[0], 1); /* and the standard ones */
        assert_int_equal(out[3], 1);
        assert_int_equal(out[4], 42); /* -I the kernel's directory */
    }
    /* The first build is untouched. */
    int out0[7];
    run_probe(g_h, 0, out0);
    assert_int_equal(out0[5], -1);
    /* Built already: a second clbuild is refused. */
    clerror();
    assert_null(clbuild(stdcpu, h, "-D VALUE=8", 0));
    assert_non_null(clerror());
    assert_int_equal(clclose(stdcpu, h), 0);
}

static void test_stdcl_build_options_applies(void** state)
{
    (void)state;
    assert_int_equal(setenv("STDCL_BUILD_OPTIONS", "-D ENV_VALUE=5", 1), 0);
    void* h = clsopen(stdcpu,
                      "__kernel void env_value(__global int* o) {\n"
                      "#ifdef ENV_VALUE\n  o[0] = ENV_VALUE;\n#else\n  o[0] = -1;\n#endif\n}\n",
                      CLLD_NOW);
    const char* e = h ? NULL : clerror();
    unsetenv("STDCL_BUILD_OPTIONS");
    if (!h) print_error("clsopen: %s\n", e);
    assert_non_null(h);
    assert_int_equal(run_scalar_kernel(h, "env_value"), 5);
    assert_int_equal(clclose(stdcpu, h), 0);
}

static void test_clclose_unknown_handle_fails(void** state)
{
    (void)state;
    int not_a_handle = 0;
    clerror();
    assert_true(clclose(stdcpu, &not_a_handle) < 0);
    assert_non_null(clerror());
    assert_true(clclose(stdcpu, NULL) < 0);
    assert_non_null(clerror());
    assert_int_equal(not_a_handle, 0);
}

static const char* k_warn_src = "#warning stdcl-test-warning\n"
                                "__kernel void warned(__global int* a) { a[get_global_id(0)] = 7; }\n";

static void test_clbuildlog_keeps_warnings_of_a_successful_build(void** state)
{
    (void)state;
    void* h = clsopen_named(stdcpu, k_warn_src, "warned.cl", 0);
    assert_non_null(h);
    for (unsigned d = 0; d < clgetndev(stdcpu); d++) {
        const char* log = clbuildlog(stdcpu, h, d);
        assert_non_null(log);
        assert_contains(log, "stdcl-test-warning");
        assert_contains(log, "warned.cl:1");
    }
    assert_int_equal(clclose(stdcpu, h), 0);
}

static void test_clbuildlog_of_a_cache_hit_is_the_stored_log(void** state)
{
    (void)state;
    /* A helper process builds the same text twice, each a fresh process: the
     * second one hits the program cache and still has the warning. */
    char* dir = tu_mkdtemp();
    char env_dir[PATH_MAX + 32];
    snprintf(env_dir, sizeof env_dir, "STDCL_CACHE_DIR=%s", dir);
    const char* env[] = {env_dir, "STDCL_CACHE=1", "STDCL_TRACE=cache,log", NULL};
    const char* args[] = {"buildlog", NULL};
    for (int run = 0; run < 2; run++) {
        tu_proc r;
        tu_spawn(&r, tu_helper("helper_profile"), args, env, NULL, 120);
        tu_expect_status(&r, 0, "helper_profile buildlog");
        assert_contains(r.out, "log 0: ");
        assert_contains(r.out, "stdcl-test-warning");
        assert_contains(r.err, "stdcl[log]: compiler log of 'warned.cl' on device 0");
        if (run == 1) {
            assert_contains(r.err, "stdcl[cache]: hit");
            assert_contains(r.err, "(stored in the program cache)");
        }
        tu_proc_free(&r);
    }
    free(dir);
}

static void test_clbuildlog_is_empty_for_a_quiet_build(void** state)
{
    (void)state;
    void* h = clsopen(stdcpu, "__kernel void quiet(__global int* a) { a[0] = 1; }\n", 0);
    assert_non_null(h);
    const char* log = clbuildlog(stdcpu, h, 0);
    assert_non_null(log);
    assert_string_equal(log, "");
    assert_int_equal(clclose(stdcpu, h), 0);
}

static void test_clbuildlog_bad_arguments_fail(void** state)
{
    (void)state;
    int x;
    assert_null(clbuildlog(stdcpu, &x, 0));
    const char* e = clerror();
    assert_contains(e, "clbuildlog: ");
    assert_contains(e, "is not a handle open in stdcpu");
    void* h = clsopen(stdcpu, "__kernel void lazy1(__global int* a) { a[0] = 2; }\n", CLLD_LAZY);
    assert_non_null(h);
    assert_null(clbuildlog(stdcpu, h, 0));
    assert_contains(clerror(), "clbuildlog: source text is not built yet");
    assert_null(clbuildlog(stdcpu, h, 9));
    assert_non_null(clerror());
    assert_int_equal(clclose(stdcpu, h), 0);
}

static void test_clsopen_named_names_the_text_in_errors(void** state)
{
    (void)state;
    assert_null(clsopen_named(stdcpu, "__kernel void k(void) {\n  int x = ;\n}\n", "broken.cl", 0));
    const char* e = clerror();
    assert_non_null(e);
    assert_contains(e, "'broken.cl'");
    assert_contains(e, "broken.cl:2");
}

static void test_clsopen_named_bad_names_fail(void** state)
{
    (void)state;
    const char* src = "__kernel void k(void) {}\n";
    assert_null(clsopen_named(stdcpu, src, NULL, 0));
    assert_contains(clerror(), "clsopen_named: the name is NULL or empty");
    assert_null(clsopen_named(stdcpu, src, "", 0));
    assert_contains(clerror(), "clsopen_named: the name is NULL or empty");
    assert_null(clsopen_named(stdcpu, src, "a\"b", 0));
    assert_contains(clerror(), "holds a '\"', '\\' or a line break");
    assert_null(clsopen_named(stdcpu, src, "a\nb", 0));
    assert_contains(clerror(), "holds a");
    assert_null(clsopen_named(stdcpu, NULL, "x.cl", 0));
    assert_contains(clerror(), "clsopen_named: the source is NULL");
}

/* ------------------------------------------------------------------------ */
/* clopen_opt, clsopen_opt                                                   */
/* ------------------------------------------------------------------------ */

/* OPT_VALUE is defined only by the options given at open. */
static const char* k_opt_src = "__kernel void opt_value(__global int* o) { o[0] = OPT_VALUE; }\n";

static void test_clopen_opt_builds_with_the_options(void** state)
{
    (void)state;
    void* h = clopen_opt(stdcpu, tu_kernel("loader.cl"), "-D VALUE=11", 0);
    if (!h) print_error("clopen_opt: %s\n", clerror());
    assert_non_null(h);
    assert_ptr_not_equal(h, g_h);
    for (unsigned d = 0; d < 2; d++) {
        int out[7];
        run_probe(h, d, out);
        assert_int_equal(out[5], 11); /* the options */
        assert_int_equal(out[0], 1); /* and the standard ones */
        assert_int_equal(out[3], 1);
        assert_int_equal(out[4], 42); /* -I the kernel's directory */
    }
    /* The same file and options: the same handle; other options: another. */
    void* same = clopen_opt(stdcpu, tu_kernel("loader.cl"), "-D VALUE=11", CLLD_NOW);
    assert_ptr_equal(same, h);
    void* other = clopen_opt(stdcpu, tu_kernel("loader.cl"), "-D VALUE=12", 0);
    assert_non_null(other);
    assert_ptr_not_equal(other, h);
    int out[7];
    run_probe(other, 0, out);
    assert_int_equal(out[5], 12);
    /* NULL or "" options: clopen's handle, untouched by the others. */
    void* none = clopen_opt(stdcpu, tu_kernel("loader.cl"), NULL, 0);
    assert_ptr_equal(none, g_h);
    void* empty = clopen_opt(stdcpu, tu_kernel("loader.cl"), "", 0);
    assert_ptr_equal(empty, g_h);
    run_probe(g_h, 1, out);
    assert_int_equal(out[5], -1);
    assert_int_equal(clclose(stdcpu, empty), 0);
    assert_int_equal(clclose(stdcpu, none), 0);
    assert_int_equal(clclose(stdcpu, other), 0);
    assert_int_equal(clclose(stdcpu, same), 0);
    assert_int_equal(clclose(stdcpu, h), 0);
}

static void test_clsopen_opt_builds_with_the_options(void** state)
{
    (void)state;
    void* h = clsopen_opt(stdcpu, k_opt_src, "-D OPT_VALUE=37", 0);
    if (!h) print_error("clsopen_opt: %s\n", clerror());
    assert_non_null(h);
    assert_int_equal(run_scalar_kernel(h, "opt_value"), 37);
    void* other = clsopen_opt(stdcpu, k_opt_src, "-DOPT_VALUE=38 -cl-mad-enable", CLLD_NOW);
    if (!other) print_error("clsopen_opt: %s\n", clerror());
    assert_non_null(other);
    assert_ptr_not_equal(other, h);
    assert_int_equal(run_scalar_kernel(other, "opt_value"), 38);
    assert_int_equal(run_scalar_kernel(h, "opt_value"), 37);
    assert_int_equal(clclose(stdcpu, other), 0);
    assert_int_equal(clclose(stdcpu, h), 0);
}

static void test_clsopen_opt_lazy_keeps_the_options_for_clsym(void** state)
{
    (void)state;
    void* h = clsopen_opt(stdcpu, k_opt_src, "-D OPT_VALUE=41", CLLD_LAZY);
    if (!h) print_error("clsopen_opt(CLLD_LAZY): %s\n", clerror());
    assert_non_null(h);
    assert_null(clbuildlog(stdcpu, h, 0));
    assert_contains(clerror(), "is not built yet");
    assert_int_equal(run_scalar_kernel(h, "opt_value"), 41);
    assert_non_null(clbuildlog(stdcpu, h, 0));
    assert_int_equal(clclose(stdcpu, h), 0);
}

static void test_clopen_opt_shares_the_handle_clbuild_built_with_the_same_options(void** state)
{
    (void)state;
    void* h = clsopen(stdcpu, k_opt_src, CLLD_NOBUILD);
    assert_non_null(h);
    assert_ptr_equal(clbuild(stdcpu, h, "-D OPT_VALUE=43", 0), h);
    void* same = clsopen_opt(stdcpu, k_opt_src, "-D OPT_VALUE=43", 0);
    assert_ptr_equal(same, h);
    assert_int_equal(run_scalar_kernel(same, "opt_value"), 43);
    assert_int_equal(clclose(stdcpu, same), 0);
    assert_int_equal(clclose(stdcpu, h), 0);
}

static void test_clopen_opt_bad_options_fail_with_the_build_log(void** state)
{
    (void)state;
    /* options that make the program wrong: the compiler's log */
    assert_null(clsopen_opt(stdcpu, k_opt_src, "-D OPT_VALUE=undeclared_opt_q", 0));
    const char* e = clerror();
    assert_non_null(e);
    assert_contains(e, "source text: build failed on device");
    assert_contains(e, "with options '");
    assert_contains(e, "-D OPT_VALUE=undeclared_opt_q");
    assert_contains(e, "identifier 'undeclared_opt_q'"); /* the compiler's log */
    /* without the options the macro is not defined at all */
    assert_null(clsopen_opt(stdcpu, k_opt_src, NULL, 0));
    assert_contains(clerror(), "OPT_VALUE");
    /* an option the compiler rejects */
    assert_null(clopen_opt(stdcpu, tu_kernel("loader.cl"), "-cl-no-such-option-q", 0));
    e = clerror();
    assert_non_null(e);
    assert_contains(e, "loader.cl': build failed on device");
    assert_contains(e, "(CL_INVALID_BUILD_OPTIONS) with options '");
    assert_contains(e, "-cl-no-such-option-q");
    /* lazily: the same failure at the first clsym */
    void* lazy = clsopen_opt(stdcpu, k_opt_src, "-D OPT_VALUE=undeclared_opt_q", CLLD_LAZY);
    assert_non_null(lazy);
    assert_null(clsym(stdcpu, lazy, "opt_value", 0));
    assert_contains(clerror(), "undeclared_opt_q");
    assert_int_equal(clclose(stdcpu, lazy), 0);
}

static void test_clopen_opt_bad_arguments_fail(void** state)
{
    (void)state;
    assert_null(clopen_opt(stdcpu, tu_kernel("loader.cl"), "-D VALUE=1", CLLD_NOBUILD));
    assert_contains(clerror(),
                    "clopen_opt: options '-D VALUE=1' with CLLD_NOBUILD: give them to clbuild, or open "
                    "without CLLD_NOBUILD");
    assert_null(clsopen_opt(stdcpu, k_opt_src, "-D OPT_VALUE=1", CLLD_NOBUILD));
    assert_contains(clerror(), "clsopen_opt: options '-D OPT_VALUE=1' with CLLD_NOBUILD");
    /* no options with CLLD_NOBUILD: clbuild gives them */
    void* nb = clsopen_opt(stdcpu, k_opt_src, "", CLLD_NOBUILD);
    assert_non_null(nb);
    assert_ptr_equal(clbuild(stdcpu, nb, "-D OPT_VALUE=44", 0), nb);
    assert_int_equal(run_scalar_kernel(nb, "opt_value"), 44);
    assert_int_equal(clclose(stdcpu, nb), 0);

    assert_null(clopen_opt(NULL, tu_kernel("loader.cl"), "-D VALUE=1", 0));
    assert_contains(clerror(), "the context is NULL");
    assert_null(clsopen_opt(NULL, k_opt_src, "-D OPT_VALUE=1", 0));
    assert_contains(clerror(), "the context is NULL");
    assert_null(clsopen_opt(stdcpu, NULL, "-D OPT_VALUE=1", 0));
    assert_contains(clerror(), "clsopen_opt: the source is NULL");
    assert_null(clopen_opt(stdcpu, "", "-D VALUE=1", 0));
    assert_contains(clerror(), "clopen_opt: the file name is empty");
    assert_null(clopen_opt(stdcpu, "no_such_kernel_file_q.cl", "-D VALUE=1", 0));
    assert_contains(clerror(), "clopen_opt: kernel file 'no_such_kernel_file_q.cl' not found");
    assert_null(clopen_opt(stdcpu, tu_kernel("loader.cl"), "-D VALUE=1", 0x100));
    assert_contains(clerror(), "clopen_opt: unknown flags 0x100");
    assert_null(clsopen_opt(stdcpu, k_opt_src, "-D OPT_VALUE=1", CLLD_NOW | CLLD_LAZY));
    assert_contains(clerror(), "clsopen_opt: CLLD_NOW excludes CLLD_LAZY and CLLD_NOBUILD");
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_clopen_absolute_path_runs_on_both_devices),
    cmocka_unit_test(test_clopen_finds_file_in_cwd),
    cmocka_unit_test(test_clopen_finds_file_via_stdcl_kernel_path),
    cmocka_unit_test(test_clopen_defines_standard_macros),
    cmocka_unit_test(test_clopen_adds_kernel_directory_to_include_path),
    cmocka_unit_test(test_clsopen_adds_cwd_to_include_path),
    cmocka_unit_test(test_clsopen_builds_source),
    cmocka_unit_test(test_clsopen_same_source_returns_same_handle),
    cmocka_unit_test(test_clopen_same_file_twice_returns_same_handle),
    cmocka_unit_test(test_clopen_handle_belongs_to_its_context),
    cmocka_unit_test(test_clsym_returns_same_kernel_twice),
    cmocka_unit_test(test_clsym_null_handle_searches_all_programs),
    cmocka_unit_test(test_clopen_lazy_defers_build),
    cmocka_unit_test(test_clbuild_applies_options_after_nobuild),
    cmocka_unit_test(test_stdcl_build_options_applies),
    cmocka_unit_test(test_clclose_unknown_handle_fails),
    cmocka_unit_test(test_clbuildlog_keeps_warnings_of_a_successful_build),
    cmocka_unit_test(test_clbuildlog_of_a_cache_hit_is_the_stored_log),
    cmocka_unit_test(test_clbuildlog_is_empty_for_a_quiet_build),
    cmocka_unit_test(test_clbuildlog_bad_arguments_fail),
    cmocka_unit_test(test_clsopen_named_names_the_text_in_errors),
    cmocka_unit_test(test_clsopen_named_bad_names_fail),
    cmocka_unit_test(test_clopen_opt_builds_with_the_options),
    cmocka_unit_test(test_clsopen_opt_builds_with_the_options),
    cmocka_unit_test(test_clsopen_opt_lazy_keeps_the_options_for_clsym),
    cmocka_unit_test(test_clopen_opt_shares_the_handle_clbuild_built_with_the_same_options),
    cmocka_unit_test(test_clopen_opt_bad_options_fail_with_the_build_log),
    cmocka_unit_test(test_clopen_opt_bad_arguments_fail),
};

int main(int argc, char** argv) { return tu_run_tests(argc, argv, "loader", tests, setup, teardown); }
