/* SPDX-License-Identifier: MIT */
/* test_embed.c: kernels embedded in programs: stdcl_embed_register and
 * clopen(cp, NULL, ...) in this process, and clcc end to end: a .cl file
 * with includes becomes an object, linked into a program (with libstdcl.so,
 * with libstdcl.a, and through a shared library of its own) that runs from
 * another folder with no kernel file left on disk. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdcl.h>

#include "test_util.h"

static const char* k_main_c = "#include <stdcl.h>\n"
                              "#include <stdio.h>\n"
                              "int main(void)\n"
                              "{\n"
                              "    if (!stddev) { fprintf(stderr, \"no stddev\\n\"); return 1; }\n"
                              "    void* h = clopen(stddev, NULL, CLLD_NOW);\n"
                              "    if (!h) { fprintf(stderr, \"clopen: %s\\n\", clerror()); return 1; }\n"
                              "    cl_kernel k = clsym(stddev, NULL, \"scale_it\", 0);\n"
                              "    if (!k) { fprintf(stderr, \"clsym: %s\\n\", clerror()); return 1; }\n"
                              "    int* a = (int*)clmalloc(stddev, 64 * sizeof(int), 0);\n"
                              "    clndrange_t ndr = clndrange_init1d(0, 64, 16);\n"
                              "    if (!a || !clforka(stddev, 0, k, &ndr, CL_EVENT_WAIT, a)\n"
                              "        || !clmsync(stddev, 0, a, CL_MEM_HOST | CL_EVENT_WAIT)) {\n"
                              "        fprintf(stderr, \"run: %s\\n\", clerror()); return 1;\n"
                              "    }\n"
                              "    long s = 0;\n"
                              "    for (int i = 0; i < 64; i++) s += a[i];\n"
                              "    printf(\"sum=%ld\\n\", s);\n"
                              "    clfree(a);\n"
                              "    return 0;\n"
                              "}\n";

/* kern.cl includes scale.h (twice; #pragma once), which includes
 * <consts.h> from an -I folder: SCALE is 21. */
static const char* k_kern_cl = "/* #include \"not_there.h\" in a comment is not an include */\n"
                               "#include \"scale.h\"\n"
                               "#include \"scale.h\"\n"
                               "__kernel void scale_it(__global int* a)\n"
                               "{\n"
                               "    int i = get_global_id(0);\n"
                               "    a[i] = i * SCALE;\n"
                               "}\n";
static const char* k_scale_h = "#pragma once\n#include <consts.h>\n#define SCALE (3 * BASE)\n";
static const char* k_consts_h = "#ifndef CONSTS_H\n#define CONSTS_H\n#define BASE 7\n#endif\n";
#define EXPECTED_SUM "sum=42336" /* 21 * (0 + 1 + ... + 63) */

/* A program that is not linked with libstdcl: it dlopen()s the library (a
 * plugin host does this), runs a kernel through it, dlclose()s it, and does
 * it all twice. */
static const char* k_dlopen_c =
    "#include <dlfcn.h>\n"
    "#include <stdio.h>\n"
    "#include <stdcl.h>\n"
    "#define SYM(v, name) do { *(void**)&v = dlsym(lib, name); if (!v) { fprintf(stderr, \"no %s\\n\", name); return 1; } } while (0)\n"
    "int main(int argc, char** argv)\n"
    "{\n"
    "    static const char src[] = \"__kernel void triple(__global int* a) { int i = get_global_id(0); a[i] = 3 * i; }\";\n"
    "    for (int round = 0; round < 2 && argc > 1; round++) {\n"
    "        void* lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);\n"
    "        if (!lib) { fprintf(stderr, \"dlopen: %s\\n\", dlerror()); return 1; }\n"
    "        CLCONTEXT** dev; void* (*sopen)(CLCONTEXT*, const char*, int); char* (*err)(void);\n"
    "        cl_kernel (*sym)(CLCONTEXT*, void*, const char*, int); void* (*mall)(CLCONTEXT*, size_t, int);\n"
    "        void (*ndrset)(clndrange_t*, size_t, size_t, size_t, size_t, size_t, size_t, size_t, size_t, size_t, size_t);\n"
    "        cl_event (*forka)(CLCONTEXT*, unsigned, cl_kernel, clndrange_t*, int, int, ...);\n"
    "        cl_event (*msync)(CLCONTEXT*, unsigned, void*, int); int (*mfree)(void*); int (*sclose)(CLCONTEXT*, void*);\n"
    "        SYM(dev, \"stddev\"); SYM(sopen, \"clsopen\"); SYM(err, \"clerror\"); SYM(sym, \"clsym\");\n"
    "        SYM(mall, \"clmalloc\"); SYM(ndrset, \"stdcl_ndrange_set\"); SYM(forka, \"stdcl_forka\");\n"
    "        SYM(msync, \"clmsync\"); SYM(mfree, \"clfree\"); SYM(sclose, \"clclose\");\n"
    "        CLCONTEXT* cp = *dev;\n"
    "        if (!cp) { fprintf(stderr, \"no stddev\\n\"); return 1; }\n"
    "        void* h = sopen(cp, src, CLLD_NOW);\n"
    "        cl_kernel k = h ? sym(cp, h, \"triple\", 0) : NULL;\n"
    "        int* a = (int*)mall(cp, 64 * sizeof(int), 0);\n"
    "        clndrange_t ndr;\n"
    "        ndrset(&ndr, 1, 0, 64, 16, 0, 1, 1, 0, 1, 1);\n"
    "        if (!k || !a || !forka(cp, 0, k, &ndr, CL_EVENT_WAIT, 1, sizeof a, &a) ||\n"
    "            !msync(cp, 0, a, CL_MEM_HOST | CL_EVENT_WAIT)) { fprintf(stderr, \"run: %s\\n\", err()); return 1; }\n"
    "        long s = 0;\n"
    "        for (int i = 0; i < 64; i++) s += a[i];\n"
    "        printf(\"round %d: sum=%ld\\n\", round, s);\n"
    "        mfree(a);\n"
    "        sclose(cp, h);\n"
    "        if (dlclose(lib) != 0) { fprintf(stderr, \"dlclose: %s\\n\", dlerror()); return 1; }\n"
    "    }\n"
    "    return 0;\n"
    "}\n";

/* The same through Python's ctypes (the library loaded with dlopen). */
static const char* k_ctypes_py =
    "import ctypes, sys\n"
    "lib = ctypes.CDLL(sys.argv[1])\n"
    "vp, ci, cs = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t\n"
    "lib.clsopen.restype = vp; lib.clsopen.argtypes = [vp, ctypes.c_char_p, ci]\n"
    "lib.clsym.restype = vp; lib.clsym.argtypes = [vp, vp, ctypes.c_char_p, ci]\n"
    "lib.clmalloc.restype = vp; lib.clmalloc.argtypes = [vp, cs, ci]\n"
    "lib.clmsync.restype = vp; lib.clmsync.argtypes = [vp, ctypes.c_uint, vp, ci]\n"
    "lib.clfree.argtypes = [vp]\n"
    "lib.clerror.restype = ctypes.c_char_p\n"
    "lib.stdcl_forkv.restype = vp\n"
    "lib.stdcl_forkv.argtypes = [vp, ctypes.c_uint, vp, vp, ci, ci, ctypes.POINTER(cs), ctypes.POINTER(vp)]\n"
    "cp = vp.in_dll(lib, 'stddev').value\n"
    "src = b'__kernel void triple(__global int* a) { int i = get_global_id(0); a[i] = 3 * i; }'\n"
    "h = lib.clsopen(cp, src, 1)\n"
    "k = lib.clsym(cp, h, b'triple', 0)\n"
    "a = lib.clmalloc(cp, 64 * 4, 0)\n"
    "ndr = (cs * 13)(1, 0, 0, 0, 0, 64, 1, 1, 1, 16, 1, 1, 1)\n"
    "sizes = (cs * 1)(ctypes.sizeof(vp)); cell = vp(a); vals = (vp * 1)(ctypes.addressof(cell))\n"
    "if not (h and k and a and lib.stdcl_forkv(cp, 0, k, ctypes.addressof(ndr), 1, 1, sizes, vals)\n"
    "        and lib.clmsync(cp, 0, a, 0x10 | 1)):  # CL_MEM_HOST | CL_EVENT_WAIT\n"
    "    sys.exit('run: %s' % lib.clerror())\n"
    "print('sum=%d' % sum((ctypes.c_int * 64).from_address(a)))\n"
    "lib.clfree(a)\n";

typedef struct {
    char* root;
    char clcc[PATH_MAX + 32];
    char include[PATH_MAX + 32];
    char libdir[PATH_MAX + 32];
} fixture;

/* Writes text to root/<name>; 0 on success. */
static int write_in_root(const fixture* f, const char* name, const char* text)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/%s", f->root, name);
    return tu_write_file(p, text);
}

static int setup(void** state)
{
    fixture* f = calloc(1, sizeof *f);
    if (!f || !(f->root = tu_mkdtemp())) return -1;
    const char* src = tu_srcdir();
    if (!src) return -1;
    snprintf(f->clcc, sizeof f->clcc, "%s/../bin/clcc", tu_bindir());
    snprintf(f->include, sizeof f->include, "%s/../include", src);
    snprintf(f->libdir, sizeof f->libdir, "%s/../lib", tu_bindir());
    char p[PATH_MAX + 64];
    snprintf(p, sizeof p, "%s/inc", f->root);
    if (mkdir(p, 0755) != 0) return -1;
    if (write_in_root(f, "kern.cl", k_kern_cl) != 0 || write_in_root(f, "scale.h", k_scale_h) != 0 ||
        write_in_root(f, "inc/consts.h", k_consts_h) != 0 || write_in_root(f, "main.c", k_main_c) != 0)
        return -1;
    *state = f;
    return 0;
}

static int teardown(void** state)
{
    fixture* f = *state;
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->root);
    if (system(cmd) != 0) print_message("teardown: could not remove %s\n", f->root);
    free(f->root);
    free(f);
    return 0;
}

/* Runs a shell script in the fixture's folder with CLCC, INC, LIB set. */
static void run_script(fixture* f, tu_proc* r, const char* script)
{
    char e_clcc[PATH_MAX + 64], e_inc[PATH_MAX + 64], e_lib[PATH_MAX + 64];
    snprintf(e_clcc, sizeof e_clcc, "CLCC=%s", f->clcc);
    snprintf(e_inc, sizeof e_inc, "INC=%s", f->include);
    snprintf(e_lib, sizeof e_lib, "LIB=%s", f->libdir);
    const char* env[] = {e_clcc, e_inc, e_lib, NULL};
    const char* args[] = {"-c", script, NULL};
    tu_spawn(r, "/bin/sh", args, env, f->root, 240);
}

/* A script that exits 77 cannot run here (no compiler, a sanitized library):
 * the test is skipped. */
static void skip_on_77(tu_proc* r)
{
    if (r->status != 77) return;
    tu_proc_free(r);
    skip();
}

/* ------------------------------------------------------------------------ */

static void test_clopen_null_without_embedded_kernels_fails(void** state)
{
    (void)state;
    /* Nothing is registered yet in this program. */
    assert_null(clopen(stddev, NULL, CLLD_NOW));
    const char* msg = clerror();
    assert_non_null(msg);
    assert_contains(msg, "embedded");
}

static void test_stdcl_embed_register_null_source_einval(void** state)
{
    (void)state;
    assert_int_equal(stdcl_embed_register("x.cl", NULL, 10), STDCL_EINVAL);
}

static void test_clopen_null_builds_registered_sources(void** state)
{
    (void)state;
    static const char src[] = "__kernel void embedded_twice(__global int* a)\n"
                              "{ int i = get_global_id(0); a[i] = 2 * i; }\n";
    assert_int_equal(stdcl_embed_register("twice.cl", src, sizeof src - 1), 0);
    /* The same name and text again (an object in a library and the program). */
    assert_int_equal(stdcl_embed_register("twice.cl", src, sizeof src), 0);
    void* h = clopen(stddev, NULL, CLLD_NOW);
    if (!h) print_error("clopen: %s\n", clerror());
    assert_non_null(h);
    cl_kernel k = clsym(stddev, NULL, "embedded_twice", 0);
    if (!k) print_error("clsym: %s\n", clerror());
    assert_non_null(k);
    int* a = (int*)clmalloc(stddev, 32 * sizeof(int), 0);
    assert_non_null(a);
    clndrange_t ndr = clndrange_init1d(0, 32, 8);
    assert_non_null(clforka(stddev, 0, k, &ndr, CL_EVENT_WAIT, a));
    assert_non_null(clmsync(stddev, 0, a, CL_MEM_HOST | CL_EVENT_WAIT));
    for (int i = 0; i < 32; i++) assert_int_equal(a[i], 2 * i);
    clfree(a);
    assert_int_equal(clclose(stddev, h), 0);
}

static void test_clcc_inlines_includes(void** state)
{
    fixture* f = *state;
    tu_proc r;
    run_script(f, &r, "\"$CLCC\" -E -I inc kern.cl");
    tu_expect_status(&r, 0, "clcc -E");
    assert_contains(r.out, "#define BASE 7");
    assert_int_equal(tu_count(r.out, "#define SCALE"), 1); /* #pragma once */
    assert_contains(r.out, "#line 1 \"kern.cl\"");
    assert_not_contains(r.err, "not_there.h");
    tu_proc_free(&r);
}

static void test_clcc_missing_include_warns(void** state)
{
    fixture* f = *state;
    tu_proc r;
    /* Without -I inc, <consts.h> cannot be found. */
    run_script(f, &r, "\"$CLCC\" -E kern.cl");
    assert_int_equal(r.status, 0);
    assert_contains(r.err, "warning");
    assert_contains(r.err, "consts.h");
    assert_contains(r.out, "#include <consts.h>");
    tu_proc_free(&r);
}

static void test_clcc_object_runs_from_another_directory(void** state)
{
    fixture* f = *state;
    tu_proc r;
    /* Build three programs, delete every kernel and header file, and run
     * them from an empty folder elsewhere. */
    run_script(f, &r,
               "set -e\n"
               "command -v cc > /dev/null || exit 77\n"
               /* A sanitizer build of the library (make asan ...) needs the
                * same sanitizer in the programs linked with it. */
               "S=\n"
               "nm \"$LIB/libstdcl.a\" 2> /dev/null | grep -q __asan_ && S=-fsanitize=address\n"
               "nm \"$LIB/libstdcl.a\" 2> /dev/null | grep -q __tsan_ && S=-fsanitize=thread\n"
               "nm \"$LIB/libstdcl.a\" 2> /dev/null | grep -q __ubsan_ && S=\"$S -fsanitize=undefined\"\n"
               "\"$CLCC\" -c -MD -I inc -o kern.o kern.cl\n"
               "grep -q consts.h kern.o.d\n"
               "cc $S -I\"$INC\" -o prog_dyn main.c kern.o -L\"$LIB\" -Wl,-rpath,\"$LIB\" "
               "-lstdcl -lOpenCL\n"
               "cc $S -I\"$INC\" -o prog_static main.c kern.o \"$LIB/libstdcl.a\" -lOpenCL -lnettle "
               "-lstdc++ -lpthread -ldl -lm\n"
               "cc $S -shared -o libkern.so kern.o\n"
               /* Nothing of libkern.so is called: keep the linker from dropping it. */
               "cc $S -I\"$INC\" -o prog_so main.c -L. -Wl,--no-as-needed -lkern -Wl,--as-needed "
               "-Wl,-rpath,\"$PWD\" "
               "-L\"$LIB\" -Wl,-rpath,\"$LIB\" -lstdcl -lOpenCL\n"
               "rm kern.cl scale.h inc/consts.h\n"
               "mkdir elsewhere\n"
               "cd elsewhere\n"
               "for p in prog_dyn prog_static prog_so; do echo \"$p: $(../$p)\"; done\n");
    skip_on_77(&r);
    if (r.status != 0 || tu_count(r.out, EXPECTED_SUM) != 3) tu_proc_dump(&r, "build and run");
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "prog_dyn: " EXPECTED_SUM);
    assert_contains(r.out, "prog_static: " EXPECTED_SUM);
    assert_contains(r.out, "prog_so: " EXPECTED_SUM);
    tu_proc_free(&r);
}

/* Sanitized builds of the library need their runtime loaded first: a plain
 * program cannot dlopen them.  The script exits 77 (skip) for those. */
#define SKIP_SANITIZED_LIB "nm \"$LIB/libstdcl.a\" 2> /dev/null | grep -q -E '__(asan|tsan|ubsan)_' && exit 77\n"

static void test_dlopen_runs_a_kernel_twice(void** state)
{
    fixture* f = *state;
    assert_int_equal(write_in_root(f, "dl.c", k_dlopen_c), 0);
    tu_proc r;
    run_script(f, &r,
               "set -e\n"
               "command -v cc > /dev/null || exit 77\n" SKIP_SANITIZED_LIB "cc -I\"$INC\" -o dl dl.c -ldl\n"
               "if readelf -d dl | grep -q libstdcl; then echo 'dl is linked with libstdcl'; exit 1; fi\n"
               /* Initial-exec thread-locals make dlopen fail once the loader's
                * static TLS room is used up (Python's ctypes, plugin hosts). */
               "if readelf -d \"$LIB/libstdcl.so\" | grep -q STATIC_TLS; then echo 'STATIC_TLS'; exit 1; fi\n"
               "./dl \"$LIB/libstdcl.so\"\n");
    skip_on_77(&r);
    tu_expect_status(&r, 0, "dlopen program");
    assert_contains(r.out, "round 0: sum=6048"); /* 3 * (0 + 1 + ... + 63) */
    assert_contains(r.out, "round 1: sum=6048");
    tu_proc_free(&r);
}

static void test_python_ctypes_runs_a_kernel(void** state)
{
    fixture* f = *state;
    assert_int_equal(write_in_root(f, "run.py", k_ctypes_py), 0);
    tu_proc r;
    run_script(f, &r,
               "command -v python3 > /dev/null || exit 77\n" SKIP_SANITIZED_LIB
               "python3 run.py \"$LIB/libstdcl.so\"\n");
    skip_on_77(&r);
    tu_expect_status(&r, 0, "python3 ctypes");
    assert_contains(r.out, "sum=6048");
    tu_proc_free(&r);
}

static const struct CMUnitTest tests[] = {
    /* Before anything is registered in this process. */
    cmocka_unit_test(test_clopen_null_without_embedded_kernels_fails),
    cmocka_unit_test(test_stdcl_embed_register_null_source_einval),
    cmocka_unit_test(test_clopen_null_builds_registered_sources),
    cmocka_unit_test_setup_teardown(test_clcc_inlines_includes, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clcc_missing_include_warns, setup, teardown),
    cmocka_unit_test_setup_teardown(test_clcc_object_runs_from_another_directory, setup, teardown),
    cmocka_unit_test_setup_teardown(test_dlopen_runs_a_kernel_twice, setup, teardown),
    cmocka_unit_test_setup_teardown(test_python_ctypes_runs_a_kernel, setup, teardown),
};

int main(int argc, char** argv) { return tu_run_tests(argc, argv, "embed", tests, NULL, NULL); }
