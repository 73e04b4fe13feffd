/* SPDX-License-Identifier: MIT */
/* test_errors.c: every failure returns its error value (NULL, a negative code
 * or a NULL event), leaves a message in clerror() that says what went wrong,
 * clerror() is NULL once read, and the process goes on working (each test
 * ends with a successful kernel round trip on both devices).  Malformed
 * environment values are checked in a fresh process (helper_env). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdcl.h>

#include "test_util.h"

static void* g_h;
static cl_kernel g_add_one; /* add_one(__global int* a) */
static cl_kernel g_two_args; /* two_args(__global float* out, float x) */

static int setup(void** state)
{
    (void)state;
    const tu_sym syms[] = {{"add_one", &g_add_one}, {"two_args", &g_two_args}};
    if (tu_need_two_cpu_devices() != 0) return -1;
    return tu_open_kernel_syms("errors.cl", &g_h, syms, tu_countof(syms));
}

static int teardown(void** state)
{
    (void)state;
    return tu_close_kernels(&g_h);
}

/* Clears any message left by an earlier test. */
static void drain_errors(void) { clerror(); }

/* clerror() holds a message containing want1 (and want2 unless NULL); once
 * read, clerror() is NULL. */
static void check_message(const char* want1, const char* want2)
{
    const char* e = clerror();
    if (!e) print_error("clerror() is NULL after a failure\n");
    assert_non_null(e);
    char* copy = strdup(e);
    assert_non_null(copy);
    assert_null(clerror());
    assert_contains(copy, want1);
    if (want2) assert_contains(copy, want2);
    free(copy);
}

/* A follow-up that must succeed: clmalloc, clmsync, clforka, clmsync, clfree
 * on both devices, leaving no error behind. */
static void still_works(void)
{
    enum { N = 256 };
    for (unsigned d = 0; d < 2; d++) {
        int* a = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
        assert_non_null(a);
        for (int i = 0; i < N; i++) a[i] = i;
        clndrange_t ndr = clndrange_init1d(0, N, 64);
        assert_non_null(clmsync(stdcpu, d, a, CL_MEM_DEVICE | CL_EVENT_WAIT));
        cl_event ev = clforka(stdcpu, d, g_add_one, &ndr, CL_EVENT_WAIT, a);
        if (!ev) print_error("follow-up clforka on device %u: %s\n", d, clerror());
        assert_non_null(ev);
        assert_non_null(clmsync(stdcpu, d, a, CL_MEM_HOST | CL_EVENT_WAIT));
        for (int i = 0; i < N; i++) assert_int_equal(a[i], i + 1);
        assert_int_equal(clfree(a), 0);
    }
    assert_null(clerror());
}

/* ------------------------------------------------------------------------ */
/* clerror itself                                                            */
/* ------------------------------------------------------------------------ */

static void test_clerror_is_null_without_failure(void** state)
{
    (void)state;
    drain_errors();
    assert_null(clerror());
    still_works();
    assert_null(clerror());
}

static void test_clerror_reports_the_last_failure(void** state)
{
    (void)state;
    drain_errors();
    assert_null(clopen(stdcpu, "first_missing_file_q1.cl", 0));
    assert_null(clopen(stdcpu, "second_missing_file_q2.cl", 0));
    const char* e = clerror();
    assert_non_null(e);
    assert_contains(e, "second_missing_file_q2.cl");
    assert_not_contains(e, "first_missing_file_q1.cl");
    assert_null(clerror());
    still_works();
}

static void* seterror_elsewhere(void* arg)
{
    /* another thread sees its own (empty) message, then sets one of its own */
    *(const char**)arg = clerror();
    stdcl_seterror("from the other thread");
    return NULL;
}

static void test_stdcl_seterror_sets_clears_and_stays_in_its_thread(void** state)
{
    (void)state;
    drain_errors();
    stdcl_seterror("mylib: the table is full");
    assert_string_equal(clerror(), "mylib: the table is full");
    assert_null(clerror()); /* read once, like any other message */
    /* a later message replaces an unread one; NULL clears it */
    stdcl_seterror("first");
    stdcl_seterror("second");
    assert_string_equal(clerror(), "second");
    stdcl_seterror("unread");
    stdcl_seterror(NULL);
    assert_null(clerror());
    /* a library failure after it wins, as the last failure does */
    stdcl_seterror("mine");
    assert_null(clopen(stdcpu, "seterror_missing_q3.cl", 0));
    assert_contains(clerror(), "seterror_missing_q3.cl");
    /* per thread */
    stdcl_seterror("this thread's");
    const char* seen = "not run";
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, seterror_elsewhere, &seen), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_null(seen);
    assert_string_equal(clerror(), "this thread's");
    still_works();
}

/* ------------------------------------------------------------------------ */
/* Loader                                                                    */
/* ------------------------------------------------------------------------ */

static void test_clopen_missing_file_fails(void** state)
{
    (void)state;
    drain_errors();
    assert_null(clopen(stdcpu, "no_such_kernel_file_q3.cl", CLLD_NOW));
    check_message("no_such_kernel_file_q3.cl", "not found");
    assert_null(clopen(stdcpu, "/nonexistent-dir/abs_missing_q4.cl", CLLD_NOW));
    check_message("abs_missing_q4.cl", NULL);
    still_works();
}

static void test_clopen_directory_fails(void** state)
{
    (void)state;
    drain_errors();
    char* dir = tu_mkdtemp();
    assert_non_null(dir);
    assert_null(clopen(stdcpu, dir, CLLD_NOW));
    check_message(dir, "is a directory");
    rmdir(dir);
    free(dir);
    still_works();
}

/* clopen of a file `name` that make(path) puts in a new folder fails, its
 * message naming name and saying want; then the folder goes. */
static void check_clopen_refuses(const char* name, void (*make)(const char* path), const char* want)
{
    drain_errors();
    char* dir = tu_mkdtemp();
    assert_non_null(dir);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    make(path);
    assert_null(clopen(stdcpu, path, CLLD_NOW));
    check_message(name, want);
    unlink(path);
    rmdir(dir);
    free(dir);
    still_works();
}

static void make_fifo(const char* path) { assert_int_equal(mkfifo(path, 0600), 0); }

static void make_file_with_nul(const char* path)
{
    static const char text[] = "__kernel void f(__global int* a) { a[0] = 1; }\0 junk after the NUL";
    FILE* f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, sizeof text, f), sizeof text);
    fclose(f);
}

static void test_clopen_fifo_fails_without_blocking(void** state)
{
    (void)state;
    /* Nobody writes the FIFO: a blocking open would hang (and time out). */
    check_clopen_refuses("kern_fifo.cl", make_fifo, "is a FIFO");
}

static void test_clopen_nul_byte_fails(void** state)
{
    (void)state;
    check_clopen_refuses("kern_nul.cl", make_file_with_nul, "NUL byte at offset 46");
}

static void test_clopen_unreadable_file_fails(void** state)
{
    (void)state;
    drain_errors();
    /* A regular file that cannot be read from its start (EIO): tests run as root,
     * so permissions cannot make a file unreadable. */
    assert_null(clopen(stdcpu, "/proc/self/mem", CLLD_NOW));
    check_message("/proc/self/mem", "cannot read");
    still_works();
}

static void test_clopen_syntax_error_reports_build_log(void** state)
{
    (void)state;
    char devname[256] = "";
    assert_int_equal(clGetDeviceInfo(stdcl_device(stdcpu, 0), CL_DEVICE_NAME, sizeof devname, devname, NULL),
                     CL_SUCCESS);
    drain_errors();
    assert_null(clopen(stdcpu, tu_kernel("syntax_error.cl"), CLLD_NOW));
    const char* e = clerror();
    assert_non_null(e);
    char* msg = strdup(e);
    assert_null(clerror());
    assert_contains(msg, "stdcl_undeclared_token_q7"); /* the compiler's log */
    assert_contains(msg, "-D __STDCL__"); /* the options */
    assert_contains(msg, devname); /* the device */
    assert_contains(msg, "syntax_error.cl"); /* the program */
    free(msg);
    still_works();
}

static void test_clsopen_syntax_error_reports_build_log(void** state)
{
    (void)state;
    drain_errors();
    assert_null(clsopen(stdcpu, "__kernel void k(__global int* a) { a[0] = stdcl_bad_source_token_q8; }\n", 0));
    check_message("stdcl_bad_source_token_q8", "-D __STDCL__");
    still_works();
}

static void test_clsym_unknown_name_fails(void** state)
{
    (void)state;
    drain_errors();
    assert_null(clsym(stdcpu, g_h, "no_such_kernel_q5", CLLD_NOW));
    check_message("no_such_kernel_q5", NULL);
    assert_null(clsym(stdcpu, NULL, "no_such_kernel_q6", CLLD_NOW));
    check_message("no_such_kernel_q6", NULL);
    assert_null(clsym(stdcpu, g_h, NULL, 0));
    check_message("name", NULL);
    still_works();
}

static void test_clbuild_without_nobuild_fails(void** state)
{
    (void)state;
    drain_errors();
    assert_null(clbuild(stdcpu, g_h, "-D VALUE=1", 0));
    check_message("CLLD_NOBUILD", NULL);
    /* The handle is unharmed. */
    assert_ptr_equal(clsym(stdcpu, g_h, "add_one", 0), g_add_one);
    int not_a_handle = 0;
    assert_null(clbuild(stdcpu, &not_a_handle, "", 0));
    assert_non_null(clerror());
    still_works();
}

static void test_clopen_conflicting_flags_fail(void** state)
{
    (void)state;
    drain_errors();
    assert_null(clopen(stdcpu, tu_kernel("errors.cl"), CLLD_NOW | CLLD_LAZY));
    check_message("CLLD_NOW", NULL);
    assert_null(clopen(stdcpu, tu_kernel("errors.cl"), 0x4000));
    check_message("flags", NULL);
    still_works();
}

static void test_clopen_null_context_fails(void** state)
{
    (void)state;
    drain_errors();
    assert_null(clopen(NULL, tu_kernel("errors.cl"), 0));
    check_message("context", NULL);
    still_works();
}

/* ------------------------------------------------------------------------ */
/* clfree                                                                    */
/* ------------------------------------------------------------------------ */

static void test_clfree_null_is_noop(void** state)
{
    (void)state;
    drain_errors();
    assert_int_equal(clfree(NULL), 0);
    assert_null(clerror());
    still_works();
}

static void test_clfree_stack_pointer_fails(void** state)
{
    (void)state;
    int x[4] = {1, 2, 3, 4};
    drain_errors();
    assert_int_equal(clfree(&x[1]), STDCL_ENOENT);
    check_message("clmalloc", NULL);
    assert_int_equal(x[0], 1);
    assert_int_equal(x[1], 2);
    assert_int_equal(x[3], 4);
    still_works();
}

static void test_clfree_heap_pointer_fails(void** state)
{
    (void)state;
    int* m = (int*)malloc(64 * sizeof(int));
    assert_non_null(m);
    for (int i = 0; i < 64; i++) m[i] = i;
    drain_errors();
    assert_int_equal(clfree(m), STDCL_ENOENT);
    check_message("clmalloc", NULL);
    for (int i = 0; i < 64; i++) assert_int_equal(m[i], i);
    free(m); /* still a valid malloc block */
    still_works();
}

static void test_clfree_twice_fails(void** state)
{
    (void)state;
    void* p = clmalloc(stdcpu, 1024, 0);
    assert_non_null(p);
    assert_int_equal(clfree(p), 0);
    drain_errors();
    assert_int_equal(clfree(p), STDCL_ENOENT);
    check_message("freed", NULL);
    still_works();
}

static void test_clfree_interior_pointer_fails(void** state)
{
    (void)state;
    enum { N = 256 };
    int* p = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
    assert_non_null(p);
    for (int i = 0; i < N; i++) p[i] = i;
    drain_errors();
    int rc = clfree(p + 16);
    assert_true(rc < 0);
    check_message("clmalloc", NULL);
    /* The allocation is untouched and still usable. */
    assert_int_equal(clsizeofmem(p), N * sizeof(int));
    clndrange_t ndr = clndrange_init1d(0, N, 64);
    assert_non_null(clmsync(stdcpu, 0, p, CL_MEM_DEVICE | CL_EVENT_WAIT));
    assert_non_null(clforka(stdcpu, 0, g_add_one, &ndr, CL_EVENT_WAIT, p));
    assert_non_null(clmsync(stdcpu, 0, p, CL_MEM_HOST | CL_EVENT_WAIT));
    for (int i = 0; i < N; i++) assert_int_equal(p[i], i + 1);
    assert_int_equal(clfree(p), 0);
    still_works();
    /* The header: "A pointer not returned by clmalloc (foreign, already
     * freed, or interior): returns STDCL_ENOENT".  Known to fail with the
     * library as first written (it returned STDCL_EINVAL): reported. */
    if (rc != STDCL_ENOENT)
        print_error("clfree(interior pointer) returned %d; the header says STDCL_ENOENT (%d)\n", rc, STDCL_ENOENT);
    assert_int_equal(rc, STDCL_ENOENT);
}

/* ------------------------------------------------------------------------ */
/* clmsync                                                                   */
/* ------------------------------------------------------------------------ */

static void test_clmsync_both_directions_fails(void** state)
{
    (void)state;
    int* a = (int*)clmalloc(stdcpu, 64 * sizeof(int), 0);
    assert_non_null(a);
    drain_errors();
    assert_null(clmsync(stdcpu, 0, a, CL_MEM_HOST | CL_MEM_DEVICE | CL_EVENT_WAIT));
    check_message("CL_MEM_HOST", "CL_MEM_DEVICE");
    assert_int_equal(clfree(a), 0);
    still_works();
}

static void test_clmsync_no_direction_fails(void** state)
{
    (void)state;
    int* a = (int*)clmalloc(stdcpu, 64 * sizeof(int), 0);
    assert_non_null(a);
    drain_errors();
    assert_null(clmsync(stdcpu, 0, a, CL_EVENT_WAIT));
    check_message("CL_MEM_HOST", "CL_MEM_DEVICE");
    assert_null(clmsync(stdcpu, 0, a, 0));
    check_message("CL_MEM_HOST", "CL_MEM_DEVICE");
    assert_int_equal(clfree(a), 0);
    still_works();
}

static void test_clmsync_wait_and_nowait_fails(void** state)
{
    (void)state;
    int* a = (int*)clmalloc(stdcpu, 64 * sizeof(int), 0);
    assert_non_null(a);
    drain_errors();
    assert_null(clmsync(stdcpu, 0, a, CL_MEM_DEVICE | CL_EVENT_WAIT | CL_EVENT_NOWAIT));
    check_message("CL_EVENT_WAIT", "CL_EVENT_NOWAIT");
    assert_int_equal(stdcl_wait(stdcpu, 0, CL_ALL_EVENT), 0);
    assert_int_equal(clfree(a), 0);
    still_works();
}

static void test_clmsync_foreign_pointer_fails(void** state)
{
    (void)state;
    int x[64];
    for (int i = 0; i < 64; i++) x[i] = i;
    drain_errors();
    assert_null(clmsync(stdcpu, 0, x, CL_MEM_DEVICE | CL_EVENT_WAIT));
    check_message("clmalloc", NULL);
    assert_null(clmsync(stdcpu, 1, x, CL_MEM_HOST | CL_EVENT_WAIT));
    check_message("clmalloc", NULL);
    for (int i = 0; i < 64; i++) assert_int_equal(x[i], i);
    still_works();
}

static void test_clmsync_devnum_out_of_range_fails(void** state)
{
    (void)state;
    int* a = (int*)clmalloc(stdcpu, 64 * sizeof(int), 0);
    assert_non_null(a);
    drain_errors();
    assert_null(clmsync(stdcpu, clgetndev(stdcpu), a, CL_MEM_DEVICE | CL_EVENT_WAIT));
    check_message("device", "2");
    assert_null(clmsync(stdcpu, 1000, a, CL_MEM_HOST | CL_EVENT_WAIT));
    check_message("1000", NULL);
    assert_int_equal(clfree(a), 0);
    still_works();
}

/* ------------------------------------------------------------------------ */
/* Launch                                                                    */
/* ------------------------------------------------------------------------ */

static void test_clfork_global_size_not_multiple_of_local_fails(void** state)
{
    (void)state;
    int* a = (int*)clmalloc(stdcpu, 128 * sizeof(int), 0);
    assert_non_null(a);
    for (int i = 0; i < 128; i++) a[i] = 0;
    assert_int_equal(clarg_set_global(stdcpu, g_add_one, 0, a), 0);
    clndrange_t ndr = clndrange_init1d(0, 100, 16);
    drain_errors();
    assert_null(clfork(stdcpu, 0, g_add_one, &ndr, CL_EVENT_WAIT));
    check_message("100", "16");
    assert_null(clforka(stdcpu, 1, g_add_one, &ndr, CL_EVENT_NOWAIT, a));
    check_message("multiple", NULL);
    assert_int_equal(stdcl_wait(stdcpu, 1, CL_ALL_EVENT), 0);
    for (int i = 0; i < 128; i++) assert_int_equal(a[i], 0); /* nothing ran */
    assert_int_equal(clfree(a), 0);
    still_works();
}

static void test_clfork_null_kernel_fails(void** state)
{
    (void)state;
    clndrange_t ndr = clndrange_init1d(0, 64, 16);
    drain_errors();
    assert_null(clfork(stdcpu, 0, NULL, &ndr, CL_EVENT_WAIT));
    check_message("kernel", NULL);
    assert_null(clforka(stdcpu, 0, NULL, &ndr, CL_EVENT_WAIT, 1));
    check_message("kernel", NULL);
    still_works();
}

/* clforka sets every argument at every launch: fewer or more arguments than
 * the kernel takes fail (nothing is kept from an earlier launch), naming both
 * counts, and nothing runs. */
static void test_clforka_argument_count_must_match(void** state)
{
    (void)state;
    float* out = (float*)clmalloc(stdcpu, 64 * sizeof(float), 0);
    assert_non_null(out);
    clndrange_t ndr = clndrange_init1d(0, 64, 16);
    float x = 2.5f;
    assert_non_null(clforka(stdcpu, 0, g_two_args, &ndr, CL_EVENT_WAIT, out, x));
    assert_non_null(clmsync(stdcpu, 0, out, CL_MEM_HOST | CL_EVENT_WAIT));
    for (int i = 0; i < 64; i++) out[i] = 0.0f;
    assert_non_null(clmsync(stdcpu, 0, out, CL_MEM_DEVICE | CL_EVENT_WAIT));
    drain_errors();
    assert_null(clforka(stdcpu, 0, g_two_args, &ndr, CL_EVENT_WAIT, out));
    check_message("1 argument(s) given", "takes 2");
    assert_null(clforka(stdcpu, 0, g_two_args, &ndr, CL_EVENT_WAIT, out, x, 7));
    check_message("3 argument(s) given", "takes 2");
    assert_null(clforka(stdcpu, 0, g_add_one, &ndr, CL_EVENT_WAIT));
    check_message("0 argument(s) given", "takes 1");
    assert_non_null(clmsync(stdcpu, 0, out, CL_MEM_HOST | CL_EVENT_WAIT));
    for (int i = 0; i < 64; i++) assert_true(out[i] == 0.0f); /* nothing ran */
    assert_int_equal(clfree(out), 0);
    still_works();
}

/* The NULL of a failed clsym, passed on unchecked: the launch's message
 * carries clsym's reason, which nobody read. */
static void test_clforka_of_failed_clsym_says_why_clsym_failed(void** state)
{
    (void)state;
    clndrange_t ndr = clndrange_init1d(0, 64, 16);
    drain_errors();
    cl_kernel k = clsym(stdcpu, g_h, "no_such_kernel_here", 0);
    assert_null(k);
    assert_null(clforka(stdcpu, 0, k, &ndr, CL_EVENT_WAIT, 1));
    const char* msg = clerror();
    assert_non_null(msg);
    assert_contains(msg, "clforka: the kernel is NULL (this thread's last failure, unread: ");
    assert_contains(msg, "no_such_kernel_here");
    /* Read once: the next NULL kernel has nothing more to say. */
    assert_null(clforka(stdcpu, 0, NULL, &ndr, CL_EVENT_WAIT, 1));
    msg = clerror();
    assert_non_null(msg);
    assert_null(strstr(msg, "unread"));
    still_works();
}

static void test_clfork_null_ndrange_and_bad_devnum_fail(void** state)
{
    (void)state;
    drain_errors();
    assert_null(clfork(stdcpu, 0, g_add_one, NULL, CL_EVENT_WAIT));
    assert_non_null(clerror());
    clndrange_t ndr = clndrange_init1d(0, 64, 16);
    assert_null(clfork(stdcpu, 2, g_add_one, &ndr, CL_EVENT_WAIT));
    check_message("2", NULL);
    still_works();
}

static void test_clfork_unset_argument_fails(void** state)
{
    (void)state;
    void* h = clsopen(stdcpu, "__kernel void never_set(__global int* a, int b) { a[0] = b; }\n", 0);
    assert_non_null(h);
    cl_kernel k = clsym(stdcpu, h, "never_set", 0);
    assert_non_null(k);
    clndrange_t ndr = clndrange_init1d(0, 1, 1);
    drain_errors();
    assert_null(clfork(stdcpu, 0, k, &ndr, CL_EVENT_WAIT));
    check_message("never_set", NULL);
    assert_int_equal(clclose(stdcpu, h), 0);
    still_works();
}

/* The argument calls remember this thread's last kernel (a lock-free fast path).
 * A program closed and opened again, round after round: the remembered kernel
 * never outlives clclose (ASan sees any use of a freed record), a closed kernel
 * gets STDCL_ESTATE every time, and a kernel of stdcpu given another context is
 * refused as before, cache warm or not. */
static void test_clarg_set_after_clclose_fails_with_the_cache_warm(void** state)
{
    (void)state;
    static const char* src = "__kernel void warm(__global int* a, int v) { a[get_global_id(0)] = v; }\n"
                             "__kernel void cold(__global int* a, int v) { a[get_global_id(0)] = -v; }\n";
    enum { N = 64, ROUNDS = 16 };
    /* CL_MEM_WO: the kernels only write it (STDCL_CHECK=sync would otherwise
     * take the other device's results on the host for a forgotten upload). */
    int* a = (int*)clmalloc(stdcpu, 2 * N * sizeof(int), CL_MEM_WO);
    assert_non_null(a);
    CLCONTEXT* other = clcontext_create(NULL, CL_DEVICE_TYPE_CPU, 0, NULL, 0);
    assert_non_null(other);
    drain_errors();
    for (int r = 0; r < ROUNDS; r++) {
        void* h = clsopen(stdcpu, src, CLLD_NOW);
        assert_non_null(h);
        cl_kernel kw = clsym(stdcpu, h, "warm", CLLD_NOW);
        cl_kernel kc = clsym(stdcpu, h, "cold", CLLD_NOW);
        assert_non_null(kw);
        assert_non_null(kc);
        /* The same interior pointer twice (the second is the fast path), then the
         * other kernel, then back: each launch sees its own last setting. */
        for (int i = 0; i < 2; i++) {
            assert_int_equal(clarg_set_global(stdcpu, kw, 0, a + N), 0);
            assert_int_equal(clarg_set(stdcpu, kw, 1, r + 1), 0);
        }
        assert_int_equal(clarg_set_global(stdcpu, kc, 0, a), 0);
        assert_int_equal(clarg_set(stdcpu, kc, 1, r + 1), 0);
        assert_int_equal(clarg_set_global(stdcpu, kw, 0, a + N), 0);
        clndrange_t ndr = clndrange_init1d(0, N, 16);
        unsigned d = (unsigned)r & 1u;
        assert_non_null(clfork(stdcpu, d, kw, &ndr, CL_EVENT_WAIT));
        assert_non_null(clfork(stdcpu, d, kc, &ndr, CL_EVENT_WAIT));
        assert_non_null(clmsync(stdcpu, d, a, CL_MEM_HOST | CL_EVENT_WAIT));
        for (int i = 0; i < N; i++) {
            if (a[i] != -(r + 1) || a[N + i] != r + 1)
                print_error("round %d: a[%d] = %d, a[%d] = %d\n", r, i, a[i], N + i, a[N + i]);
            assert_int_equal(a[i], -(r + 1));
            assert_int_equal(a[N + i], r + 1);
        }
        /* Warm for this thread, yet of another context. */
        assert_int_equal(clarg_set_global(stdcpu, kw, 0, a), 0);
        assert_int_equal(clarg_set_global(other, kw, 0, a), STDCL_EINVAL);
        check_message("belongs to", NULL);
        assert_int_equal(clarg_set(other, kw, 1, 5), STDCL_EINVAL);
        check_message("belongs to", NULL);
        assert_int_equal(clarg_set_global(stdcpu, kw, 0, a), 0);
        assert_int_equal(clclose(stdcpu, h), 0);
        assert_int_equal(clarg_set_global(stdcpu, kw, 0, a), STDCL_ESTATE);
        check_message("was released", "clclose");
        assert_int_equal(clarg_set(stdcpu, kw, 1, 7), STDCL_ESTATE);
        check_message("was released", NULL);
        assert_int_equal(clarg_set_global(stdcpu, kc, 0, a + N), STDCL_ESTATE);
        check_message("was released", NULL);
    }
    assert_int_equal(clcontext_destroy(other), 0);
    clfree(a);
    still_works();
}

static void test_clarg_set_global_foreign_pointer_fails(void** state)
{
    (void)state;
    int x[16] = {0};
    drain_errors();
    assert_true(clarg_set_global(stdcpu, g_add_one, 0, x) < 0);
    check_message("clmalloc", "argument 0");
    assert_true(clarg_set_global(g_add_one, 0, x) < 0);
    check_message("clmalloc", NULL);
    still_works();
}

static void test_clarg_set_wrong_size_fails(void** state)
{
    (void)state;
    drain_errors();
    /* An 8-byte value for the float argument 1 of two_args, untyped: refused
     * by the library (clarg_set's typed double is converted instead). */
    double d = 2.0;
    assert_true(stdcl_arg_set(stdcpu, g_two_args, 1, sizeof d, &d) < 0);
    check_message("argument 1", NULL);
    /* An index past the last argument. */
    assert_true(clarg_set(stdcpu, g_two_args, 2, 1.0f) < 0);
    check_message("argument 2", NULL);
    /* The right size works. */
    float* out = (float*)clmalloc(stdcpu, 64 * sizeof(float), 0);
    assert_non_null(out);
    assert_int_equal(clarg_set(stdcpu, g_two_args, 1, 2.0f), 0);
    assert_int_equal(clarg_set_global(stdcpu, g_two_args, 0, out), 0);
    clndrange_t ndr = clndrange_init1d(0, 64, 16);
    assert_non_null(clfork(stdcpu, 0, g_two_args, &ndr, CL_EVENT_WAIT));
    assert_non_null(clmsync(stdcpu, 0, out, CL_MEM_HOST | CL_EVENT_WAIT));
    for (int i = 0; i < 64; i++) assert_true(out[i] == 2.0f);
    assert_int_equal(clfree(out), 0);
    still_works();
}

static void test_clforka_more_arguments_than_kernel_fails(void** state)
{
    (void)state;
    float* out = (float*)clmalloc(stdcpu, 64 * sizeof(float), 0);
    assert_non_null(out);
    for (int i = 0; i < 64; i++) out[i] = -1.0f;
    assert_non_null(clmsync(stdcpu, 0, out, CL_MEM_DEVICE | CL_EVENT_WAIT));
    clndrange_t ndr = clndrange_init1d(0, 64, 16);
    drain_errors();
    assert_null(clforka(stdcpu, 0, g_two_args, &ndr, CL_EVENT_WAIT, out, 3.0f, 7));
    check_message("two_args", "3");
    assert_non_null(clmsync(stdcpu, 0, out, CL_MEM_HOST | CL_EVENT_WAIT));
    for (int i = 0; i < 64; i++) assert_true(out[i] == -1.0f); /* nothing ran */
    /* The right count works. */
    assert_non_null(clforka(stdcpu, 0, g_two_args, &ndr, CL_EVENT_WAIT, out, 3.0f));
    assert_non_null(clmsync(stdcpu, 0, out, CL_MEM_HOST | CL_EVENT_WAIT));
    for (int i = 0; i < 64; i++) assert_true(out[i] == 3.0f);
    assert_int_equal(clfree(out), 0);
    still_works();
}

/* ------------------------------------------------------------------------ */
/* clmalloc                                                                  */
/* ------------------------------------------------------------------------ */

static void test_clmalloc_zero_bytes_fails(void** state)
{
    (void)state;
    drain_errors();
    assert_null(clmalloc(stdcpu, 0, 0));
    check_message("clmalloc", "0");
    still_works();
}

static void test_clmalloc_more_than_device_max_fails(void** state)
{
    (void)state;
    cl_ulong max_alloc = 0;
    assert_int_equal(
        clGetDeviceInfo(stdcl_device(stdcpu, 0), CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL),
        CL_SUCCESS);
    assert_true(max_alloc > 0);
    size_t size = (size_t)max_alloc + 1;
    char want[32];
    snprintf(want, sizeof want, "%zu", size);
    drain_errors();
    assert_null(clmalloc(stdcpu, size, 0));
    check_message("clmalloc", want);
    still_works();
}

static void test_clmalloc_null_context_fails(void** state)
{
    (void)state;
    drain_errors();
    assert_null(clmalloc(NULL, 64, 0));
    check_message("context", NULL);
    still_works();
}

/* ------------------------------------------------------------------------ */
/* Environment values (fresh process)                                        */
/* ------------------------------------------------------------------------ */

/* Environment values, one helper_env run each (tu_env_row says what a row
 * checks): a malformed value warns once, names itself and leaves the default,
 * which works; a PoCL without devices and copy mode say so. */
static const tu_env_row k_env_rows[] = {
    {.name = "STDCPU_MAX_NDEV=abc warns once",
     .env = {"STDCPU_MAX_NDEV=abc"},
     .run = 1,
     .counts = "stdcpu=2", /* the default */
     .warnings = 1,
     .err_has = {"STDCPU_MAX_NDEV", "abc"},
     .out_has = {"run stdcpu 1 ok"}},
    {.name = "STDGPU_PLATFORM_NAME=nonexistent warns",
     .env = {"STDGPU_PLATFORM_NAME=nonexistent"},
     .run = 1,
     .counts = "stdgpu=0 stdcpu=2 stddev=2", /* stdgpu: the default, no GPU on PoCL */
     .warnings = 1,
     .err_has = {"STDGPU_PLATFORM_NAME"}},
    {.name = "STDCPU_PLATFORM_NAME=nonexistent uses the default",
     .env = {"STDCPU_PLATFORM_NAME=nonexistent"},
     .run = 1,
     .counts = "stdcpu=2",
     .warnings = 1,
     .err_has = {"STDCPU_PLATFORM_NAME"},
     .out_has = {"run stdcpu 1 ok"}},
    {.name = "STDCPU=maybe warns",
     .env = {"STDCPU=maybe"},
     .run = 1,
     .counts = "stdcpu=2",
     .warnings = 1,
     .err_has = {"STDCPU"}},
    /* PoCL reports no devices when it cannot write its cache folder: the NULL
     * context's first call says so instead of a bare "NULL context". */
    {.name = "PoCL without devices: the NULL context says why",
     .env = {"POCL_CACHE_DIR=/proc/no-such-dir/pocl"},
     .counts = "stdcpu=0",
     .warnings = TU_ANY,
     .out_has = {"null stdcpu: the context is NULL; at load time: platform 'Portable Computing Language'",
                 "reports no devices"}},
    {.name = "STDCL_ZERO_COPY=0 runs in copy mode",
     .env = {"STDCL_ZERO_COPY=0"},
     .run = 1,
     .warnings = 0,
     .out_has = {"copy mode: STDCL_ZERO_COPY=0", "run stdcpu 0 ok", "run stdcpu 1 ok"},
     .out_lacks = {"zero-copy)"}},
    {.name = "STDCL_ZERO_COPY=maybe warns",
     .env = {"STDCL_ZERO_COPY=maybe"},
     .run = 1,
     .warnings = 1,
     .err_has = {"STDCL_ZERO_COPY='maybe'"},
     .out_has = {"zero-copy)"}}, /* the default: PoCL devices work on host memory */
    {.name = "STDCL_ZERO_COPY=no runs in copy mode (one on/off grammar)",
     .env = {"STDCL_ZERO_COPY=no"},
     .run = 1,
     .warnings = 0,
     .out_has = {"copy mode: STDCL_ZERO_COPY=0", "run stdcpu 0 ok"},
     .out_lacks = {"zero-copy)"}},
    {.name = "STDCL_ZERO_COPY=OFF runs in copy mode (any case)",
     .env = {"STDCL_ZERO_COPY=OFF"},
     .run = 1,
     .warnings = 0,
     .out_has = {"copy mode: STDCL_ZERO_COPY=0", "run stdcpu 1 ok"},
     .out_lacks = {"zero-copy)"}},
    {.name = "STDCL_OVERLAP=maybe warns",
     .env = {"STDCL_OVERLAP=maybe"},
     .run = 1,
     .warnings = 1,
     .err_has = {"STDCL_OVERLAP='maybe' is not on or off (1/0, on/off, yes/no, true/false); ignored"},
     .out_has = {"run stdcpu 0 ok", "run stdcpu 1 ok"}},
    {.name = "STDCL_LOAD_THREADS=maybe warns",
     .env = {"STDCL_LOAD_THREADS=maybe"},
     .run = 1,
     .warnings = 1,
     .err_has = {"STDCL_LOAD_THREADS='maybe' is not on or off (1/0, on/off, yes/no, true/false); ignored"},
     .out_has = {"run stdcpu 0 ok", "run stddev 1 ok"}},
    {.name = "STDCL_LOAD_THREADS=off, quietly",
     .env = {"STDCL_LOAD_THREADS=off"},
     .run = 1,
     .warnings = 0,
     .out_has = {"run stdcpu 0 ok", "run stddev 1 ok"}},
    {.name = "STDCL_PINNED=yes is on, quietly",
     .env = {"STDCL_PINNED=yes"},
     .run = 1,
     .warnings = 0,
     .out_has = {"run stdcpu 0 ok", "run stdcpu 1 ok"}},
    {.name = "STDCL_PINNED=perhaps warns",
     .env = {"STDCL_PINNED=perhaps"},
     .run = 1,
     .warnings = 1,
     .err_has = {"STDCL_PINNED='perhaps' is not on or off (1/0, on/off, yes/no, true/false); ignored"},
     .out_has = {"run stdcpu 0 ok", "run stdcpu 1 ok"}},
    {.name = "STDCL_PIN_MIN=1M is a size, quietly",
     .env = {"STDCL_PIN_MIN=1M"},
     .run = 1,
     .warnings = 0,
     .out_has = {"run stdcpu 0 ok", "run stdcpu 1 ok"}},
    {.name = "STDCL_PIN_MIN=lots warns",
     .env = {"STDCL_PIN_MIN=lots"},
     .run = 1,
     .warnings = 1,
     .err_has = {"STDCL_PIN_MIN='lots' is not a size such as 256K; ignored"},
     .out_has = {"run stdcpu 0 ok", "run stdcpu 1 ok"}},
    {.name = "STDCL_CHECK=sure warns",
     .env = {"STDCL_CHECK=sure"},
     .run = 1,
     .warnings = 1,
     .err_has = {"STDCL_CHECK: 'sure' is not one of overrun, sync, fill, all, report, error, abort (or on/off); ignored"},
     .out_has = {"run stdcpu 0 ok", "run stdcpu 1 ok"}},
};

static void test_env_values_in_a_fresh_process(void** state)
{
    (void)state;
    tu_env_check_rows(k_env_rows, tu_countof(k_env_rows));
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_clerror_is_null_without_failure),
    cmocka_unit_test(test_clerror_reports_the_last_failure),
    cmocka_unit_test(test_stdcl_seterror_sets_clears_and_stays_in_its_thread),
    cmocka_unit_test(test_clopen_missing_file_fails),
    cmocka_unit_test(test_clopen_directory_fails),
    cmocka_unit_test(test_clopen_fifo_fails_without_blocking),
    cmocka_unit_test(test_clopen_nul_byte_fails),
    cmocka_unit_test(test_clopen_unreadable_file_fails),
    cmocka_unit_test(test_clopen_syntax_error_reports_build_log),
    cmocka_unit_test(test_clsopen_syntax_error_reports_build_log),
    cmocka_unit_test(test_clsym_unknown_name_fails),
    cmocka_unit_test(test_clbuild_without_nobuild_fails),
    cmocka_unit_test(test_clopen_conflicting_flags_fail),
    cmocka_unit_test(test_clopen_null_context_fails),
    cmocka_unit_test(test_clfree_null_is_noop),
    cmocka_unit_test(test_clfree_stack_pointer_fails),
    cmocka_unit_test(test_clfree_heap_pointer_fails),
    cmocka_unit_test(test_clfree_twice_fails),
    cmocka_unit_test(test_clfree_interior_pointer_fails),
    cmocka_unit_test(test_clmsync_both_directions_fails),
    cmocka_unit_test(test_clmsync_no_direction_fails),
    cmocka_unit_test(test_clmsync_wait_and_nowait_fails),
    cmocka_unit_test(test_clmsync_foreign_pointer_fails),
    cmocka_unit_test(test_clmsync_devnum_out_of_range_fails),
    cmocka_unit_test(test_clfork_global_size_not_multiple_of_local_fails),
    cmocka_unit_test(test_clfork_null_kernel_fails),
    cmocka_unit_test(test_clforka_of_failed_clsym_says_why_clsym_failed),
    cmocka_unit_test(test_clforka_argument_count_must_match),
    cmocka_unit_test(test_clfork_null_ndrange_and_bad_devnum_fail),
    cmocka_unit_test(test_clfork_unset_argument_fails),
    cmocka_unit_test(test_clarg_set_after_clclose_fails_with_the_cache_warm),
    cmocka_unit_test(test_clarg_set_global_foreign_pointer_fails),
    cmocka_unit_test(test_clarg_set_wrong_size_fails),
    cmocka_unit_test(test_clforka_more_arguments_than_kernel_fails),
    cmocka_unit_test(test_clmalloc_zero_bytes_fails),
    cmocka_unit_test(test_clmalloc_more_than_device_max_fails),
    cmocka_unit_test(test_clmalloc_null_context_fails),
    cmocka_unit_test(test_env_values_in_a_fresh_process),
};

int main(int argc, char** argv) { return tu_run_tests(argc, argv, "errors", tests, setup, teardown); }
