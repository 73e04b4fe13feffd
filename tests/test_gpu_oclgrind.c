/* SPDX-License-Identifier: MIT */
/* test_gpu_oclgrind.c: stdgpu on a GPU-typed platform, with the Oclgrind
 * simulator standing in for a GPU.  Debian does not register Oclgrind with
 * the ICD loader, so the test makes a vendors folder holding pocl.icd and
 * oclgrind.icd and runs helper_oclgrind with OCL_ICD_VENDORS pointing at it,
 * STDGPU_PLATFORM_NAME=oclgrind, OCLGRIND_LOG=<file> and data-race checks
 * on.  Oclgrind exits 0 even when it finds out-of-bounds accesses or races,
 * so the log must also be empty.  Skipped when Oclgrind is not installed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdcl.h>

#include "test_util.h"

typedef struct {
    char* dir;
    char vendors[PATH_MAX];
    char log[PATH_MAX];
} oclgrind_env_t;

static int setup(void** state)
{
    static oclgrind_env_t e;
    const char* lib = tu_oclgrind_icd_library();
    *state = NULL;
    if (!lib) return 0; /* the test skips */
    e.dir = tu_mkdtemp();
    if (!e.dir) return -1;
    snprintf(e.vendors, sizeof e.vendors, "%s/vendors", e.dir);
    snprintf(e.log, sizeof e.log, "%s/oclgrind.log", e.dir);
    if (tu_make_vendors(e.vendors, lib) != 0) return -1;
    *state = &e;
    return 0;
}

static int teardown(void** state)
{
    oclgrind_env_t* e = (oclgrind_env_t*)*state;
    if (!e) return 0;
    tu_remove_vendors(e->vendors);
    unlink(e->log);
    rmdir(e->dir);
    free(e->dir);
    return 0;
}

/* The group's Oclgrind folders; the test is skipped where Oclgrind is not
 * installed. */
static const oclgrind_env_t* need_oclgrind(void** state)
{
    const oclgrind_env_t* e = (const oclgrind_env_t*)*state;
    if (!e) {
        print_message("Oclgrind is not installed (liboclgrind-rt-icd.so): skipped\n");
        skip();
    }
    return e;
}

/* The settings that make a program see Oclgrind (beside PoCL) and log to e's
 * log. */
typedef struct {
    char vendors[PATH_MAX + 32], log[PATH_MAX + 32];
} oclgrind_settings;

static void settings_of(const oclgrind_env_t* e, oclgrind_settings* s)
{
    snprintf(s->vendors, sizeof s->vendors, "OCL_ICD_VENDORS=%s", e->vendors);
    snprintf(s->log, sizeof s->log, "OCLGRIND_LOG=%s", e->log);
}

/* Oclgrind found no invalid access and no race in the run `what`: its log is
 * empty. */
static void expect_clean_log(const oclgrind_env_t* e, const char* what)
{
    char* text = tu_read_file(e->log, NULL);
    if (text && *text) print_error("Oclgrind log (%s):\n%s\n", what, text);
    assert_true(!text || !*text);
    free(text);
}

static void test_stdgpu_runs_kernels_on_oclgrind(void** state)
{
    const oclgrind_env_t* e = need_oclgrind(state);
    oclgrind_settings s;
    settings_of(e, &s);
    const char* env[] = {s.vendors, s.log, "STDGPU_PLATFORM_NAME=oclgrind", "OCLGRIND_DATA_RACES=1", NULL};
    const char* args[] = {tu_kernel("oclgrind.cl"), NULL};
    tu_proc r;
    tu_spawn(&r, tu_helper("helper_oclgrind"), args, env, NULL, 240);
    if (r.status != 0 || !tu_contains(r.out, "oclgrind ok")) tu_proc_dump(&r, "helper_oclgrind");
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "oclgrind ok");
    assert_contains(r.out, "stdgpu platform: Oclgrind");
    /* The CPU contexts stay on PoCL, the platform with the most CPU devices. */
    assert_contains(r.out, "stdcpu=2 ");
    assert_contains(r.out, "stddev=2");
    expect_clean_log(e, e->log);
    tu_proc_free(&r);
}

/* At exit the default contexts of both platforms are released without touching
 * freed memory: Oclgrind keeps per-thread state that glibc destroys before atexit
 * handlers run, and releasing from the exiting thread wrote into it (heap
 * corruption in about one run in three).  valgrind sees every such write. */
static void test_exit_releases_contexts_without_invalid_writes(void** state)
{
    const oclgrind_env_t* e = need_oclgrind(state);
    const char* valgrind = tu_is_file("/usr/bin/valgrind") ? "/usr/bin/valgrind" : NULL;
    if (!valgrind) {
        print_message("valgrind is not installed: skipped\n");
        skip();
    }
    const char* san = getenv("STDCL_TEST_CFLAGS");
    if (san && strstr(san, "-fsanitize")) {
        print_message("sanitizer build: valgrind cannot run it: skipped\n");
        skip();
    }
    oclgrind_settings s;
    settings_of(e, &s);
    const char* env[] = {s.vendors, "STDGPU_PLATFORM_NAME=oclgrind", NULL};
    const char* args[] = {"-q", "--error-exitcode=0", tu_helper("helper_env"), NULL};
    tu_proc r;
    tu_spawn(&r, valgrind, args, env, NULL, 240);
    if (r.status != 0 || tu_contains(r.err, "Invalid write")) tu_proc_dump(&r, "valgrind helper_env");
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "stdcpu=2 stdgpu=1 ");
    assert_false(tu_contains(r.err, "Invalid write"));
    tu_proc_free(&r);
}

/* The NBody GPU kernels (examples/nbody/nbody_kern.cl, one- and multi-device,
 * generic and NVIDIA-tuned variants) on Oclgrind: right results, and no
 * out-of-bounds access or data race in Oclgrind's log. */
static void test_nbody_gpu_kernels_clean_under_oclgrind(void** state)
{
    const oclgrind_env_t* e = need_oclgrind(state);
    char dir[PATH_MAX + 64], prog[PATH_MAX + 96];
    snprintf(dir, sizeof dir, "%s/../examples/nbody", tu_bindir());
    oclgrind_settings s;
    settings_of(e, &s);
    const char* env[] = {s.vendors, s.log, "STDGPU_PLATFORM_NAME=oclgrind", "OCLGRIND_DATA_RACES=1", NULL};
    static const char* const progs[] = {"nbody", "nbody_multi"};
    static const char* const variants[] = {"", "-D NBODY_IPT=2 -D NBODY_UNROLL=8 -D NBODY_JSPLIT=4"};
    for (size_t p = 0; p < 2; p++)
        for (size_t v = 0; v < 2; v++) {
            snprintf(prog, sizeof prog, "%s/%s", dir, progs[p]);
            if (!tu_is_file(prog)) {
                print_message("%s is not built: skipped\n", prog);
                skip();
            }
            const char* args[] = {"-c", "gpu",     "-n", "256", "-s",        "2", "-w",
                                  "64", "--check", "-q", "-o",  variants[v], NULL};
            tu_proc r;
            tu_spawn(&r, prog, args, env, dir, 240);
            if (r.status != 0 || !tu_contains(r.out, "PASS")) tu_proc_dump(&r, progs[p]);
            assert_int_equal(r.status, 0);
            assert_contains(r.out, "device=gpu");
            assert_contains(r.out, ": PASS");
            char what[256];
            snprintf(what, sizeof what, "%s, %s", progs[p], variants[v]);
            expect_clean_log(e, what);
            tu_proc_free(&r);
        }
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_stdgpu_runs_kernels_on_oclgrind),
    cmocka_unit_test(test_exit_releases_contexts_without_invalid_writes),
    cmocka_unit_test(test_nbody_gpu_kernels_clean_under_oclgrind),
};

int main(int argc, char** argv) { return tu_run_tests(argc, argv, "gpu_oclgrind", tests, setup, teardown); }
