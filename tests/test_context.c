/* SPDX-License-Identifier: MIT */
/* test_context.c: the default contexts, clgetndev, the raw-object accessors,
 * clcontext_create/destroy, and the STD* environment variables (checked in a
 * fresh process: helper_env).  Runs on PoCL with two pthread devices. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdcl.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

static const char* k_twice_src =
    "__kernel void twice(__global int* a) { int i = get_global_id(0); a[i] = 2 * a[i] + 1; }\n";

/* Runs helper_env with the given environment changes; fills r. */
static void run_env_helper(tu_proc* r, const char* const* env, int run_kernels)
{
    const char* args[] = {"run", NULL};
    tu_spawn(r, tu_helper("helper_env"), run_kernels ? args : NULL, env, NULL, 120);
    if (r->status != 0) tu_proc_dump(r, "helper_env");
    assert_int_equal(r->status, 0);
}

/* The counts on helper_env's first line. */
static void parse_counts(const tu_proc* r, unsigned* cpu, unsigned* gpu, unsigned* dev, unsigned* acc)
{
    int n = sscanf(r->out, "stdcpu=%u stdgpu=%u stddev=%u stdacc=%u", cpu, gpu, dev, acc);
    if (n != 4) tu_proc_dump(r, "helper_env");
    assert_int_equal(n, 4);
}

/* The line "why <name>: ..." of helper_env's output, copied into buf ("" if absent). */
static const char* why_line(const tu_proc* r, const char* name, char* buf, size_t size)
{
    char key[64];
    snprintf(key, sizeof key, "why %s: ", name);
    const char* p = strstr(r->out, key);
    buf[0] = '\0';
    if (!p) return buf;
    size_t n = strcspn(p, "\n");
    if (n >= size) n = size - 1;
    memcpy(buf, p, n);
    buf[n] = '\0';
    return buf;
}

/* Runs `twice` on every device of cp and checks the results. */
static void check_context_runs_kernels(CLCONTEXT* cp)
{
    void* h = clsopen(cp, k_twice_src, CLLD_NOW);
    if (!h) print_error("clsopen: %s\n", clerror());
    assert_non_null(h);
    cl_kernel k = clsym(cp, h, "twice", 0);
    assert_non_null(k);
    for (unsigned d = 0; d < clgetndev(cp); d++) {
        enum { N = 128 };
        int* a = (int*)clmalloc(cp, N * sizeof(int), 0);
        assert_non_null(a);
        for (int i = 0; i < N; i++) a[i] = i;
        clndrange_t ndr = clndrange_init1d(0, N, 32);
        assert_non_null(clmsync(cp, d, a, CL_MEM_DEVICE | CL_EVENT_WAIT));
        assert_non_null(clforka(cp, d, k, &ndr, CL_EVENT_WAIT, a));
        assert_non_null(clmsync(cp, d, a, CL_MEM_HOST | CL_EVENT_WAIT));
        for (int i = 0; i < N; i++) assert_int_equal(a[i], 2 * i + 1);
        assert_int_equal(clfree(a), 0);
    }
    assert_int_equal(clclose(cp, h), 0);
}

/* ------------------------------------------------------------------------ */
/* Default contexts                                                          */
/* ------------------------------------------------------------------------ */

static void test_stdcpu_has_two_devices(void** state)
{
    (void)state;
    assert_non_null(stdcpu);
    assert_int_equal(clgetndev(stdcpu), 2);
}

static void test_stddev_has_two_devices(void** state)
{
    (void)state;
    assert_non_null(stddev);
    assert_int_equal(clgetndev(stddev), 2);
}

/* The most devices of type `type` on one platform, asked of OpenCL directly. */
static cl_uint most_devices_of_type(cl_device_type type)
{
    cl_platform_id plats[16];
    cl_uint np = 0, best = 0;
    if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS) return 0;
    for (cl_uint i = 0; i < np && i < 16; i++) {
        cl_uint n = 0;
        if (clGetDeviceIDs(plats[i], type, 0, NULL, &n) == CL_SUCCESS && n > best) best = n;
    }
    return best;
}

static void test_stdgpu_is_null_without_gpu(void** state)
{
    (void)state;
    /* Plain PoCL has no GPU and no accelerator: stdgpu and stdacc are NULL.
     * (Where OpenCL does show one, the context must exist instead.) */
    cl_uint gpus = most_devices_of_type(CL_DEVICE_TYPE_GPU);
    cl_uint accs = most_devices_of_type(CL_DEVICE_TYPE_ACCELERATOR);
    if (gpus == 0) {
        assert_null(stdgpu);
        assert_int_equal(clgetndev(stdgpu), 0);
    } else {
        assert_non_null(stdgpu);
        assert_int_equal(clgetndev(stdgpu), gpus);
    }
    if (accs == 0) assert_null(stdacc);
    else assert_non_null(stdacc);
    assert_null(stdrpu);
    assert_null(stdnpu);
}

static void test_clgetndev_null_is_zero(void** state)
{
    (void)state;
    assert_int_equal(clgetndev(NULL), 0);
}

static void test_stdcl_init_does_nothing(void** state)
{
    (void)state;
    CLCONTEXT* before = stdcpu;
    stdcl_init();
    assert_ptr_equal(stdcpu, before);
    assert_int_equal(clgetndev(stdcpu), 2);
}

static void test_stdcl_version_matches_header(void** state)
{
    (void)state;
    assert_non_null(stdcl_version());
    assert_string_equal(stdcl_version(), STDCL_VERSION_STRING);
}

static void test_stdcl_device_is_real_device(void** state)
{
    (void)state;
    cl_device_id d0 = stdcl_device(stdcpu, 0), d1 = stdcl_device(stdcpu, 1);
    assert_non_null(d0);
    assert_non_null(d1);
    assert_ptr_not_equal(d0, d1);
    for (int i = 0; i < 2; i++) {
        cl_device_type t = 0;
        assert_int_equal(clGetDeviceInfo(i ? d1 : d0, CL_DEVICE_TYPE, sizeof t, &t, NULL), CL_SUCCESS);
        assert_true(t & CL_DEVICE_TYPE_CPU);
        cl_platform_id p = NULL;
        assert_int_equal(clGetDeviceInfo(i ? d1 : d0, CL_DEVICE_PLATFORM, sizeof p, &p, NULL), CL_SUCCESS);
        assert_ptr_equal(p, stdcl_platform(stdcpu));
    }
    /* Device numbers are stable: the same ids on every call. */
    assert_ptr_equal(stdcl_device(stdcpu, 0), d0);
    assert_ptr_equal(stdcl_device(stdcpu, 1), d1);
}

static void test_stdcl_device_out_of_range_is_null(void** state)
{
    (void)state;
    clerror();
    assert_null(stdcl_device(stdcpu, 2));
    const char* e = clerror();
    assert_non_null(e);
    assert_contains(e, "2");
    assert_null(stdcl_device(NULL, 0));
    assert_null(stdcl_queue(stdcpu, 2));
    assert_null(stdcl_clcontext(NULL));
    clerror();
}

static void test_stdcl_platform_is_pocl(void** state)
{
    (void)state;
    cl_platform_id p = stdcl_platform(stdcpu);
    assert_non_null(p);
    char name[256] = "";
    assert_int_equal(clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof name, name, NULL), CL_SUCCESS);
    assert_contains(name, "Portable Computing Language");
}

static void test_stdcl_clcontext_is_real_context(void** state)
{
    (void)state;
    cl_context c = stdcl_clcontext(stdcpu);
    assert_non_null(c);
    cl_uint n = 0;
    assert_int_equal(clGetContextInfo(c, CL_CONTEXT_NUM_DEVICES, sizeof n, &n, NULL), CL_SUCCESS);
    assert_int_equal(n, 2);
    cl_device_id ids[2] = {NULL, NULL};
    assert_int_equal(clGetContextInfo(c, CL_CONTEXT_DEVICES, sizeof ids, ids, NULL), CL_SUCCESS);
    for (unsigned d = 0; d < 2; d++) {
        cl_device_id want = stdcl_device(stdcpu, d);
        assert_true(ids[0] == want || ids[1] == want);
    }
}

static void test_stdcl_queue_is_real_queue(void** state)
{
    (void)state;
    for (unsigned d = 0; d < 2; d++) {
        cl_command_queue q = stdcl_queue(stdcpu, d);
        assert_non_null(q);
        cl_device_id qd = NULL;
        cl_context qc = NULL;
        assert_int_equal(clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof qd, &qd, NULL), CL_SUCCESS);
        assert_int_equal(clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof qc, &qc, NULL), CL_SUCCESS);
        assert_ptr_equal(qd, stdcl_device(stdcpu, d));
        assert_ptr_equal(qc, stdcl_clcontext(stdcpu));
        /* Plain OpenCL on libstdcl's objects: a buffer written and read back. */
        cl_int err = CL_SUCCESS;
        cl_mem m = clCreateBuffer(stdcl_clcontext(stdcpu), CL_MEM_READ_WRITE, 64 * sizeof(int), NULL, &err);
        assert_int_equal(err, CL_SUCCESS);
        int in[64], out[64];
        for (int i = 0; i < 64; i++) in[i] = 7 * i + (int)d, out[i] = -1;
        assert_int_equal(clEnqueueWriteBuffer(q, m, CL_TRUE, 0, sizeof in, in, 0, NULL, NULL), CL_SUCCESS);
        assert_int_equal(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL), CL_SUCCESS);
        assert_memory_equal(in, out, sizeof in);
        assert_int_equal(clReleaseMemObject(m), CL_SUCCESS);
    }
}

static void test_stdcl_context_why_describes_choice(void** state)
{
    (void)state;
    const char* why = stdcl_context_why(stdcpu);
    assert_non_null(why);
    assert_contains(why, "stdcpu");
    assert_contains(why, "Portable Computing Language");
    assert_null(stdcl_context_why(NULL));
    clerror();
}

/* ------------------------------------------------------------------------ */
/* clcontext_create / clcontext_destroy                                      */
/* ------------------------------------------------------------------------ */

static void test_clcontext_create_cpu_context_works(void** state)
{
    (void)state;
    CLCONTEXT* cp = clcontext_create(NULL, CL_DEVICE_TYPE_CPU, 0, NULL, 0);
    if (!cp) print_error("clcontext_create: %s\n", clerror());
    assert_non_null(cp);
    assert_ptr_not_equal(cp, stdcpu);
    assert_int_equal(clgetndev(cp), 2);
    assert_non_null(stdcl_clcontext(cp));
    assert_ptr_not_equal(stdcl_clcontext(cp), stdcl_clcontext(stdcpu));
    check_context_runs_kernels(cp);
    assert_int_equal(clcontext_destroy(cp), 0);
}

static void test_clcontext_create_max_ndev_caps(void** state)
{
    (void)state;
    CLCONTEXT* cp = clcontext_create("pocl", CL_DEVICE_TYPE_ALL, 1, NULL, 0);
    if (!cp) print_error("clcontext_create: %s\n", clerror());
    assert_non_null(cp);
    assert_int_equal(clgetndev(cp), 1);
    assert_null(stdcl_device(cp, 1));
    clerror();
    check_context_runs_kernels(cp);
    assert_int_equal(clcontext_destroy(cp), 0);
}

static void test_clcontext_create_unknown_platform_fails(void** state)
{
    (void)state;
    clerror();
    CLCONTEXT* cp = clcontext_create("no-such-platform-xyz", CL_DEVICE_TYPE_ALL, 0, NULL, 0);
    assert_null(cp);
    const char* e = clerror();
    assert_non_null(e);
    assert_contains(e, "no-such-platform-xyz");
    assert_null(clerror());
}

static void test_clcontext_create_gpu_fails_without_gpu(void** state)
{
    (void)state;
    if (most_devices_of_type(CL_DEVICE_TYPE_GPU) > 0) skip();
    clerror();
    assert_null(clcontext_create(NULL, CL_DEVICE_TYPE_GPU, 0, NULL, 0));
    assert_non_null(clerror());
}

static void test_clcontext_create_nonzero_flags_fails(void** state)
{
    (void)state;
    clerror();
    assert_null(clcontext_create(NULL, CL_DEVICE_TYPE_CPU, 0, NULL, 1));
    assert_contains(clerror(), "flags");
    assert_null(clcontext_create(NULL, 0, 0, NULL, 0));
    assert_non_null(clerror());
}

static void test_clcontext_destroy_default_context_fails(void** state)
{
    (void)state;
    clerror();
    assert_int_equal(clcontext_destroy(stdcpu), STDCL_EINVAL);
    const char* e = clerror();
    assert_non_null(e);
    assert_contains(e, "default");
    assert_null(clerror());
    /* stdcpu still works. */
    assert_int_equal(clgetndev(stdcpu), 2);
    check_context_runs_kernels(stdcpu);
}

static void test_clcontext_destroy_null_fails(void** state)
{
    (void)state;
    clerror();
    assert_true(clcontext_destroy(NULL) < 0);
    assert_non_null(clerror());
}

static void test_clcontext_destroy_leaves_allocations_freeable(void** state)
{
    (void)state;
    /* Memory allocated in a context that is destroyed is detached, not lost:
     * the pointer stays valid host memory and clfree still works. */
    CLCONTEXT* cp = clcontext_create(NULL, CL_DEVICE_TYPE_CPU, 1, NULL, 0);
    assert_non_null(cp);
    int* a = (int*)clmalloc(cp, 64 * sizeof(int), 0);
    assert_non_null(a);
    for (int i = 0; i < 64; i++) a[i] = i;
    assert_non_null(clmsync(cp, 0, a, CL_MEM_DEVICE | CL_EVENT_WAIT));
    assert_int_equal(clcontext_destroy(cp), 0);
    for (int i = 0; i < 64; i++) assert_int_equal(a[i], i);
    assert_int_equal(clsizeofmem(a), 64 * sizeof(int));
    assert_int_equal(clfree(a), 0);
}

/* ------------------------------------------------------------------------ */
/* Environment (fresh processes)                                             */
/* ------------------------------------------------------------------------ */

static void test_env_default_contexts(void** state)
{
    (void)state;
    tu_proc r;
    const char* env[] = {"STDCPU", "STDDEV", "STDGPU", "STDCPU_MAX_NDEV", "STDDEV_PLATFORM_NAME", NULL};
    run_env_helper(&r, env, 1);
    unsigned cpu, gpu, dev, acc;
    parse_counts(&r, &cpu, &gpu, &dev, &acc);
    assert_int_equal(cpu, 2);
    assert_int_equal(gpu, 0);
    assert_int_equal(dev, 2);
    assert_contains(r.out, "run stdcpu 1 ok");
    assert_contains(r.out, "run stddev 1 ok");
    /* Nothing is printed on stderr unless asked. */
    assert_string_equal(r.err, "");
    tu_proc_free(&r);
}

static void test_env_stdcpu_0_disables_stdcpu(void** state)
{
    (void)state;
    tu_proc r;
    const char* env[] = {"STDCPU=0", NULL};
    run_env_helper(&r, env, 0);
    unsigned cpu, gpu, dev, acc;
    parse_counts(&r, &cpu, &gpu, &dev, &acc);
    assert_int_equal(cpu, 0);
    assert_int_equal(dev, 2);
    assert_not_contains(r.out, "why stdcpu:");
    assert_not_contains(r.err, "warning");
    tu_proc_free(&r);
}

static void test_env_stdcpu_1_keeps_stdcpu(void** state)
{
    (void)state;
    tu_proc r;
    const char* env[] = {"STDCPU=1", NULL};
    run_env_helper(&r, env, 0);
    unsigned cpu, gpu, dev, acc;
    parse_counts(&r, &cpu, &gpu, &dev, &acc);
    assert_int_equal(cpu, 2);
    assert_not_contains(r.err, "warning");
    tu_proc_free(&r);
}

static void test_env_stddev_0_disables_stddev(void** state)
{
    (void)state;
    tu_proc r;
    const char* env[] = {"STDDEV=0", NULL};
    run_env_helper(&r, env, 0);
    unsigned cpu, gpu, dev, acc;
    parse_counts(&r, &cpu, &gpu, &dev, &acc);
    assert_int_equal(dev, 0);
    assert_int_equal(cpu, 2);
    tu_proc_free(&r);
}

static void test_env_stdcpu_max_ndev_1_caps(void** state)
{
    (void)state;
    tu_proc r;
    const char* env[] = {"STDCPU_MAX_NDEV=1", NULL};
    run_env_helper(&r, env, 1);
    unsigned cpu, gpu, dev, acc;
    parse_counts(&r, &cpu, &gpu, &dev, &acc);
    assert_int_equal(cpu, 1);
    assert_int_equal(dev, 2); /* only stdcpu is capped */
    char buf[1024];
    assert_contains(why_line(&r, "stdcpu", buf, sizeof buf), "STDCPU_MAX_NDEV");
    assert_contains(r.out, "run stdcpu 0 ok");
    assert_not_contains(r.out, "run stdcpu 1");
    assert_not_contains(r.err, "warning");
    tu_proc_free(&r);
}

static void test_env_stdcpu_max_ndev_larger_than_available(void** state)
{
    (void)state;
    tu_proc r;
    const char* env[] = {"STDCPU_MAX_NDEV=8", NULL};
    run_env_helper(&r, env, 0);
    unsigned cpu, gpu, dev, acc;
    parse_counts(&r, &cpu, &gpu, &dev, &acc);
    assert_int_equal(cpu, 2);
    assert_not_contains(r.err, "warning");
    tu_proc_free(&r);
}

static void test_env_stddev_platform_name_pocl_selects(void** state)
{
    (void)state;
    tu_proc r;
    const char* env[] = {"STDDEV_PLATFORM_NAME=pocl", NULL};
    run_env_helper(&r, env, 1);
    unsigned cpu, gpu, dev, acc;
    parse_counts(&r, &cpu, &gpu, &dev, &acc);
    assert_int_equal(dev, 2);
    char buf[1024];
    why_line(&r, "stddev", buf, sizeof buf);
    assert_contains(buf, "Portable Computing Language");
    assert_contains(buf, "STDDEV_PLATFORM_NAME");
    assert_contains(r.out, "run stddev 1 ok");
    assert_not_contains(r.err, "warning");
    tu_proc_free(&r);
}

static void test_env_platform_name_is_case_insensitive_list(void** state)
{
    (void)state;
    tu_proc r;
    /* The first name matches nothing, the second matches the vendor "The pocl
     * project" in another case: no warning, PoCL chosen. */
    const char* env[] = {"STDCPU_PLATFORM_NAME=nosuchvendor,POCL", NULL};
    run_env_helper(&r, env, 0);
    unsigned cpu, gpu, dev, acc;
    parse_counts(&r, &cpu, &gpu, &dev, &acc);
    assert_int_equal(cpu, 2);
    char buf[1024];
    why_line(&r, "stdcpu", buf, sizeof buf);
    assert_contains(buf, "STDCPU_PLATFORM_NAME");
    assert_not_contains(r.err, "warning");
    tu_proc_free(&r);
}

static void test_env_stdcl_trace_prints_context_choice(void** state)
{
    (void)state;
    tu_proc r;
    const char* env[] = {"STDCL_TRACE=ctx", NULL};
    run_env_helper(&r, env, 0);
    unsigned cpu, gpu, dev, acc;
    parse_counts(&r, &cpu, &gpu, &dev, &acc);
    assert_int_equal(cpu, 2);
    /* The trace goes to stderr and names the contexts and the platform. */
    assert_contains(r.err, "stdcpu");
    assert_contains(r.err, "stddev");
    assert_contains(r.err, "Portable Computing Language");
    assert_not_contains(r.out, "stdcl[");
    tu_proc_free(&r);
}

/* ---- STDX_LOCK: device leases ------------------------------------------------ */

/* A helper_env that holds its contexts (and leases) until hold_stop(). */
typedef struct {
    pid_t pid;
    int in;    /* write end of its stdin */
    FILE* out; /* its stdout */
    char first[1024], why[1024];
} holder;

static void hold_start(holder* h, const char* const* env)
{
    int pin[2], pout[2];
    assert_int_equal(pipe(pin), 0);
    assert_int_equal(pipe(pout), 0);
    size_t nenv = 0, nchg = 0;
    while (environ[nenv]) nenv++;
    while (env[nchg]) nchg++;
    char** envp = (char**)calloc(nenv + nchg + 1, sizeof *envp);
    size_t k = 0;
    for (size_t i = 0; i < nenv; i++) { /* drop the names env sets or removes */
        size_t len = strcspn(environ[i], "=");
        int changed = 0;
        for (size_t j = 0; j < nchg && !changed; j++)
            changed = strcspn(env[j], "=") == len && strncmp(env[j], environ[i], len) == 0;
        if (!changed) envp[k++] = environ[i];
    }
    for (size_t j = 0; j < nchg; j++)
        if (strchr(env[j], '=')) envp[k++] = (char*)env[j];
    char* argv[] = {(char*)tu_helper("helper_env"), (char*)"hold", NULL};
    fflush(stdout);
    fflush(stderr);
    h->pid = fork();
    assert_true(h->pid >= 0);
    if (h->pid == 0) {
        dup2(pin[0], 0);
        dup2(pout[1], 1);
        close(pin[1]);
        close(pout[0]);
        execve(argv[0], argv, envp);
        _exit(127);
    }
    free(envp);
    close(pin[0]);
    close(pout[1]);
    h->in = pin[1];
    h->out = fdopen(pout[0], "r");
    assert_non_null(h->out);
    /* Its first line, its "why stdcpu" line, then "holding": the leases are taken. */
    h->first[0] = h->why[0] = '\0';
    char line[1024];
    while (fgets(line, sizeof line, h->out)) {
        if (!h->first[0]) snprintf(h->first, sizeof h->first, "%s", line);
        if (strncmp(line, "why stdcpu:", 11) == 0) snprintf(h->why, sizeof h->why, "%s", line);
        if (strncmp(line, "holding", 7) == 0) break;
    }
}

static void hold_stop(holder* h, int kill_it)
{
    int st = 0;
    if (kill_it) kill(h->pid, SIGKILL);
    close(h->in);
    waitpid(h->pid, &st, 0);
    fclose(h->out);
}

/* A lock key and lock folder of this test only. */
static void lock_env(char* key, size_t ksize, char* tmpdir, size_t tsize)
{
    char* dir = tu_mkdtemp();
    assert_non_null(dir);
    snprintf(tmpdir, tsize, "TMPDIR=%s", dir);
    snprintf(key, ksize, "STDCPU_LOCK=t%ld", (long)getpid());
    free(dir);
}

static void test_env_stdcpu_lock_leases_devices_exclusively(void** state)
{
    (void)state;
    char key[64], tmpdir[4200], buf[1024];
    lock_env(key, sizeof key, tmpdir, sizeof tmpdir);
    const char* env1[] = {key, tmpdir, "STDCPU_MAX_NDEV=1", NULL};
    holder a;
    hold_start(&a, env1);
    assert_true(strncmp(a.first, "stdcpu=1 ", 9) == 0);
    assert_contains(a.why, "leased platform device(s) 0");

    /* A second process with the same key gets the other device. */
    tu_proc r;
    run_env_helper(&r, env1, 1);
    unsigned cpu, gpu, dev, acc;
    parse_counts(&r, &cpu, &gpu, &dev, &acc);
    assert_int_equal(cpu, 1);
    assert_contains(why_line(&r, "stdcpu", buf, sizeof buf), "leased platform device(s) 1");
    assert_contains(r.out, "run stdcpu 0 ok");
    tu_proc_free(&r);

    /* Without a cap it gets every free device: only device 1. */
    const char* env2[] = {key, tmpdir, "STDCPU_MAX_NDEV", NULL};
    run_env_helper(&r, env2, 0);
    parse_counts(&r, &cpu, &gpu, &dev, &acc);
    assert_int_equal(cpu, 1);
    assert_contains(why_line(&r, "stdcpu", buf, sizeof buf), "leased platform device(s) 1");
    tu_proc_free(&r);

    /* The kernel drops the lease when its holder dies, even by SIGKILL. */
    hold_stop(&a, 1);
    run_env_helper(&r, env1, 0);
    parse_counts(&r, &cpu, &gpu, &dev, &acc);
    assert_int_equal(cpu, 1);
    assert_contains(why_line(&r, "stdcpu", buf, sizeof buf), "leased platform device(s) 0");
    tu_proc_free(&r);
}

static void test_env_stdcpu_lock_all_leased_gives_null_with_warning(void** state)
{
    (void)state;
    char key[64], tmpdir[4200];
    lock_env(key, sizeof key, tmpdir, sizeof tmpdir);
    const char* env[] = {key, tmpdir, "STDCPU_MAX_NDEV", NULL};
    holder a;
    hold_start(&a, env);
    assert_true(strncmp(a.first, "stdcpu=2 ", 9) == 0);
    tu_proc r;
    run_env_helper(&r, env, 0);
    unsigned cpu, gpu, dev, acc;
    parse_counts(&r, &cpu, &gpu, &dev, &acc);
    assert_int_equal(cpu, 0);
    assert_int_equal(dev, 2); /* other contexts are not affected by STDCPU_LOCK */
    assert_contains(r.err, "every stdcpu device is leased to another process");
    assert_int_equal(tu_count(r.err, "warning"), 1);
    tu_proc_free(&r);
    hold_stop(&a, 0);
}

static void test_env_stdcpu_lock_bad_key_warns_and_ignores(void** state)
{
    (void)state;
    const char* env[] = {"STDCPU_LOCK=a/b", "STDCPU_MAX_NDEV", NULL};
    tu_proc r;
    run_env_helper(&r, env, 0);
    unsigned cpu, gpu, dev, acc;
    parse_counts(&r, &cpu, &gpu, &dev, &acc);
    assert_int_equal(cpu, 2);
    assert_contains(r.err, "STDCPU_LOCK='a/b' is not a valid key");
    tu_proc_free(&r);
}

/* ---- STDX_LOCK=auto: one device per MPI rank -------------------------------- */

/* The environment of local rank `rank` of `size` under Open MPI, with
 * STDCPU_LOCK=auto (and STDCPU_MAX_NDEV=1 when one_each) in its own lock
 * folder; the other launchers' variables removed. */
typedef struct {
    char rank[64], size[64], tmpdir[4200];
    const char* env[12];
} rank_env;

static void auto_env(rank_env* e, const char* tmpdir, int rank, int size, int one_each)
{
    snprintf(e->rank, sizeof e->rank, "OMPI_COMM_WORLD_LOCAL_RANK=%d", rank);
    snprintf(e->size, sizeof e->size, "OMPI_COMM_WORLD_LOCAL_SIZE=%d", size);
    snprintf(e->tmpdir, sizeof e->tmpdir, "%s", tmpdir);
    const char* env[] = {"STDCPU_LOCK=auto", e->tmpdir, one_each ? "STDCPU_MAX_NDEV=1" : "STDCPU_MAX_NDEV",
                         e->rank, e->size, "MPI_LOCALRANKID", "MPI_LOCALNRANKS", "MV2_COMM_WORLD_LOCAL_RANK",
                         "SLURM_LOCALID", NULL};
    memcpy(e->env, env, sizeof env);
}

static void test_env_stdcpu_lock_auto_starts_at_the_local_rank(void** state)
{
    (void)state;
    char key[64], tmpdir[4200], buf[1024];
    lock_env(key, sizeof key, tmpdir, sizeof tmpdir);
    /* Local rank 1 of 2 takes device 1 though device 0 is free. */
    rank_env e;
    auto_env(&e, tmpdir, 1, 2, 1);
    tu_proc r;
    run_env_helper(&r, e.env, 1);
    unsigned cpu, gpu, dev, acc;
    parse_counts(&r, &cpu, &gpu, &dev, &acc);
    assert_int_equal(cpu, 1);
    why_line(&r, "stdcpu", buf, sizeof buf);
    assert_contains(buf, "STDCPU_LOCK=auto (local rank 1 of 2, OMPI_COMM_WORLD_LOCAL_RANK) leased platform device(s) 1");
    assert_contains(r.out, "run stdcpu 0 ok");
    tu_proc_free(&r);
}

static void test_env_stdcpu_lock_auto_shares_devices_among_local_ranks(void** state)
{
    (void)state;
    char key[64], tmpdir[4200], buf[1024];
    lock_env(key, sizeof key, tmpdir, sizeof tmpdir);
    unsigned cpu, gpu, dev, acc;
    tu_proc r;
    /* Without STDCPU_MAX_NDEV: two devices, one local rank -> both. */
    rank_env e;
    auto_env(&e, tmpdir, 0, 1, 0);
    run_env_helper(&r, e.env, 0);
    parse_counts(&r, &cpu, &gpu, &dev, &acc);
    assert_int_equal(cpu, 2);
    assert_contains(why_line(&r, "stdcpu", buf, sizeof buf), "leased platform device(s) 0,1");
    tu_proc_free(&r);
    /* Two local ranks -> one each: rank 1 gets device 1. */
    auto_env(&e, tmpdir, 1, 2, 0);
    run_env_helper(&r, e.env, 0);
    parse_counts(&r, &cpu, &gpu, &dev, &acc);
    assert_int_equal(cpu, 1);
    assert_contains(why_line(&r, "stdcpu", buf, sizeof buf), "leased platform device(s) 1");
    tu_proc_free(&r);
}

static void test_env_stdcpu_lock_auto_without_launcher_starts_at_device_0(void** state)
{
    (void)state;
    char key[64], tmpdir[4200], buf[1024];
    lock_env(key, sizeof key, tmpdir, sizeof tmpdir);
    const char* env[] = {"STDCPU_LOCK=auto", tmpdir, "STDCPU_MAX_NDEV=1", "OMPI_COMM_WORLD_LOCAL_RANK",
                         "MPI_LOCALRANKID", "MV2_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID", NULL};
    tu_proc r;
    run_env_helper(&r, env, 0);
    unsigned cpu, gpu, dev, acc;
    parse_counts(&r, &cpu, &gpu, &dev, &acc);
    assert_int_equal(cpu, 1);
    assert_contains(why_line(&r, "stdcpu", buf, sizeof buf),
                    "STDCPU_LOCK=auto (no MPI launcher in the environment: from device 0) leased platform device(s) 0");
    tu_proc_free(&r);
}

/* Four ranks on a host whose stdcpu has two devices, one device each: ranks 0
 * and 1 lease devices 0 and 1; ranks 2 and 3 get a NULL stdcpu, one warning
 * and the reason in clerror(); killing rank 0 frees device 0 for rank 2. */
static void test_env_stdcpu_lock_auto_four_ranks_two_devices(void** state)
{
    (void)state;
    char key[64], tmpdir[4200], buf[1024];
    lock_env(key, sizeof key, tmpdir, sizeof tmpdir);
    rank_env e0, e1, e2, e3;
    auto_env(&e0, tmpdir, 0, 4, 1);
    auto_env(&e1, tmpdir, 1, 4, 1);
    auto_env(&e2, tmpdir, 2, 4, 1);
    auto_env(&e3, tmpdir, 3, 4, 1);
    holder a, b;
    hold_start(&a, e0.env);
    hold_start(&b, e1.env);
    assert_true(strncmp(a.first, "stdcpu=1 ", 9) == 0);
    assert_true(strncmp(b.first, "stdcpu=1 ", 9) == 0);
    assert_contains(a.why, "leased platform device(s) 0");
    assert_contains(b.why, "leased platform device(s) 1");

    const rank_env* late[] = {&e2, &e3};
    for (int i = 0; i < 2; i++) {
        tu_proc r;
        run_env_helper(&r, late[i]->env, 1);
        unsigned cpu, gpu, dev, acc;
        parse_counts(&r, &cpu, &gpu, &dev, &acc);
        assert_int_equal(cpu, 0);
        assert_int_equal(dev, 2); /* stddev is not leased */
        snprintf(buf, sizeof buf, "STDCPU_LOCK=auto (local rank %d of 4, OMPI_COMM_WORLD_LOCAL_RANK): every stdcpu "
                 "device is leased to another process (2 tried); stdcpu is NULL", i + 2);
        assert_contains(r.err, buf);
        assert_int_equal(tu_count(r.err, "warning"), 1);
        assert_contains(r.out, "load error: STDCPU_LOCK=auto (local rank");
        assert_contains(r.out, "null stdcpu: the context is NULL; at load time: stdcpu: STDCPU_LOCK=auto");
        tu_proc_free(&r);
    }

    /* SIGKILL ends rank 0's lease: the next rank gets device 0. */
    hold_stop(&a, 1);
    tu_proc r;
    run_env_helper(&r, e2.env, 1);
    unsigned cpu, gpu, dev, acc;
    parse_counts(&r, &cpu, &gpu, &dev, &acc);
    assert_int_equal(cpu, 1);
    assert_contains(why_line(&r, "stdcpu", buf, sizeof buf), "leased platform device(s) 0");
    assert_contains(r.out, "run stdcpu 0 ok");
    assert_false(tu_contains(r.out, "load error"));
    tu_proc_free(&r);
    hold_stop(&b, 0);
}

int main(int argc, char** argv)
{
    tu_filter_from_args(argc, argv);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stdcpu_has_two_devices),
        cmocka_unit_test(test_stddev_has_two_devices),
        cmocka_unit_test(test_stdgpu_is_null_without_gpu),
        cmocka_unit_test(test_clgetndev_null_is_zero),
        cmocka_unit_test(test_stdcl_init_does_nothing),
        cmocka_unit_test(test_stdcl_version_matches_header),
        cmocka_unit_test(test_stdcl_device_is_real_device),
        cmocka_unit_test(test_stdcl_device_out_of_range_is_null),
        cmocka_unit_test(test_stdcl_platform_is_pocl),
        cmocka_unit_test(test_stdcl_clcontext_is_real_context),
        cmocka_unit_test(test_stdcl_queue_is_real_queue),
        cmocka_unit_test(test_stdcl_context_why_describes_choice),
        cmocka_unit_test(test_clcontext_create_cpu_context_works),
        cmocka_unit_test(test_clcontext_create_max_ndev_caps),
        cmocka_unit_test(test_clcontext_create_unknown_platform_fails),
        cmocka_unit_test(test_clcontext_create_gpu_fails_without_gpu),
        cmocka_unit_test(test_clcontext_create_nonzero_flags_fails),
        cmocka_unit_test(test_clcontext_destroy_default_context_fails),
        cmocka_unit_test(test_clcontext_destroy_null_fails),
        cmocka_unit_test(test_clcontext_destroy_leaves_allocations_freeable),
        cmocka_unit_test(test_env_default_contexts),
        cmocka_unit_test(test_env_stdcpu_0_disables_stdcpu),
        cmocka_unit_test(test_env_stdcpu_1_keeps_stdcpu),
        cmocka_unit_test(test_env_stddev_0_disables_stddev),
        cmocka_unit_test(test_env_stdcpu_max_ndev_1_caps),
        cmocka_unit_test(test_env_stdcpu_max_ndev_larger_than_available),
        cmocka_unit_test(test_env_stddev_platform_name_pocl_selects),
        cmocka_unit_test(test_env_platform_name_is_case_insensitive_list),
        cmocka_unit_test(test_env_stdcl_trace_prints_context_choice),
        cmocka_unit_test(test_env_stdcpu_lock_leases_devices_exclusively),
        cmocka_unit_test(test_env_stdcpu_lock_all_leased_gives_null_with_warning),
        cmocka_unit_test(test_env_stdcpu_lock_bad_key_warns_and_ignores),
        cmocka_unit_test(test_env_stdcpu_lock_auto_starts_at_the_local_rank),
        cmocka_unit_test(test_env_stdcpu_lock_auto_shares_devices_among_local_ranks),
        cmocka_unit_test(test_env_stdcpu_lock_auto_without_launcher_starts_at_device_0),
        cmocka_unit_test(test_env_stdcpu_lock_auto_four_ranks_two_devices),
    };
    return cmocka_run_group_tests_name("context", tests, NULL, NULL);
}
