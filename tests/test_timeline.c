/* SPDX-License-Identifier: MIT */
/* test_timeline.c: STDCL_TIMELINE=path writes the process's timeline in the
 * Trace Event format at exit.  Each case runs this program again (--run)
 * with the variable set: two host threads, each driving one device of the
 * context through three rounds of an upload, a kernel and a download, all
 * NOWAIT, then a clwait; tests/check_timeline.py then checks the file (the
 * devices' tracks, their order and clocks, the arrows, the host threads).
 * On stddev (two PoCL devices in the tests), or stdgpu with
 * STDCL_TEST_CONTEXT=gpu (make check-gpu). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <stdcl.h>

#include "test_util.h"

static const char* g_self;

static CLCONTEXT* chosen(void)
{
    const char* which = getenv("STDCL_TEST_CONTEXT");
    return which && strcmp(which, "gpu") == 0 ? stdgpu : stddev;
}

enum { N = 1 << 18, ROUNDS = 3 };

static CLCONTEXT* g_cp;
static cl_kernel g_add;
static int* g_a;
static int g_bad;

static void* drive(void* arg)
{
    unsigned d = (unsigned)(uintptr_t)arg;
    unsigned ndev = clgetndev(g_cp);
    size_t part = N / ndev;
    int* mine = g_a + d * part;
    clndrange_t nd = clndrange_init1d(d * part, part, 0);
    for (int r = 0; r < ROUNDS; r++) {
        if (!clmsyncn(g_cp, d, mine, part * sizeof(int), CL_MEM_DEVICE | CL_EVENT_NOWAIT) ||
            !clfork(g_cp, d, g_add, &nd, CL_EVENT_NOWAIT) ||
            !clmsyncn(g_cp, d, mine, part * sizeof(int), CL_MEM_HOST | CL_EVENT_NOWAIT) ||
            !clwait(g_cp, d, CL_ALL_EVENT)) {
            fprintf(stderr, "test_timeline: device %u, round %d: %s\n", d, r, clerror());
            g_bad = 1;
            return NULL;
        }
        for (size_t i = 0; i < part; i++) mine[i] += 1;  /* the next round's input */
    }
    return NULL;
}

static int run(void)
{
    g_cp = chosen();
    if (!g_cp) return 2;
    unsigned ndev = clgetndev(g_cp) > 2 ? 2 : clgetndev(g_cp);
    void* h = clsopen(g_cp, "__kernel void add(__global int* a) { a[get_global_id(0)] += 10; }\n", CLLD_NOW);
    g_a = (int*)clmalloc(g_cp, N * sizeof(int), 0);
    if (!h || !g_a) {
        fprintf(stderr, "test_timeline: setting up: %s\n", clerror());
        return 1;
    }
    /* One kernel: its one argument is set here, before the threads launch it. */
    g_add = clsym(g_cp, h, "add", CLLD_NOW);
    if (!g_add || clarg_set_global(g_cp, g_add, 0, g_a) != 0) {
        fprintf(stderr, "test_timeline: clsym: %s\n", clerror());
        return 1;
    }
    for (size_t i = 0; i < N; i++) g_a[i] = (int)i;
    pthread_t t[2];
    for (unsigned d = 0; d < ndev; d++) pthread_create(&t[d], NULL, drive, (void*)(uintptr_t)d);
    for (unsigned d = 0; d < ndev; d++) pthread_join(t[d], NULL);
    size_t covered = N / clgetndev(g_cp) * ndev;
    for (size_t i = 0; i < covered; i++)
        if (g_a[i] != (int)i + ROUNDS * 11) {
            fprintf(stderr, "test_timeline: element %zu is %d, not %d\n", i, g_a[i], (int)i + ROUNDS * 11);
            return 1;
        }
    /* TEST_TIMELINE_FLUSH=FILE: the timeline as stdcl_timeline_flush writes
     * it now, moved to FILE (the exit writes it again); and in a child of
     * fork() whose path has no %p, the flush is refused. */
    const char* flush_to = getenv("TEST_TIMELINE_FLUSH");
    if (flush_to) {
        const char* path = getenv("STDCL_TIMELINE");
        if (stdcl_timeline_flush() != 0 || rename(path, flush_to) != 0) {
            fprintf(stderr, "test_timeline: stdcl_timeline_flush: %s\n", clerror());
            return 1;
        }
        pid_t child = fork();
        if (child == 0) {
            int rc = stdcl_timeline_flush();
            _exit(rc == STDCL_ESTATE && strstr(clerror(), "child of fork()") ? 0 : 1);
        }
        int st = 0;
        if (child < 0 || waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "test_timeline: a child of fork() flushed over its parent's timeline\n");
            return 1;
        }
    }
    clfree(g_a);
    clclose(g_cp, h);
    return g_bad;
}

/* Runs this program with --run and env; r holds the result. */
static void run_self(tu_proc* r, const char* const* env)
{
    const char* args[] = {"--run", NULL};
    tu_spawn(r, g_self, args, env, NULL, 240);
}

/* The one file in dir, or NULL. */
static char* only_file(const char* dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "ls -1 '%s'", dir);
    FILE* p = popen(cmd, "r");
    char line[512], *found = NULL;
    int n = 0;
    while (p && fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = 0;
        if (!found) {
            found = (char*)malloc(strlen(dir) + strlen(line) + 2);
            sprintf(found, "%s/%s", dir, line);
        }
        n++;
    }
    if (p) pclose(p);
    if (n != 1) {
        free(found);
        return NULL;
    }
    return found;
}

static void check_file(const char* file, unsigned ndev)
{
    char script[4200], devs[16];
    snprintf(script, sizeof script, "%s/check_timeline.py", tu_srcdir());
    snprintf(devs, sizeof devs, "%u", ndev);
    const char* args[] = {script, file, "--devices", devs, "--kernel", "add", "--threads", ndev > 1 ? "2" : "1", NULL};
    tu_proc r;
    tu_spawn(&r, "/usr/bin/python3", args, NULL, NULL, 120);
    print_message("%s", r.out);
    if (r.status != 0) tu_proc_dump(&r, "check_timeline.py");
    assert_int_equal(r.status, 0);
    tu_proc_free(&r);
}

/* tools/timeline_gaps.py reads the library's own timeline: the test's
 * waited-for launches of "add" come out as batches with a kernel. */
static void gaps_of_file(const char* file)
{
    char tool[4200];
    snprintf(tool, sizeof tool, "%s/../tools/timeline_gaps.py", tu_srcdir());
    const char* args[] = {tool, file, "--min-commands", "1", "--kernels", NULL};
    tu_proc r;
    tu_spawn(&r, "/usr/bin/python3", args, NULL, NULL, 120);
    print_message("%s", r.out);
    if (r.status != 0 || !tu_contains(r.out, "waits of [") || !tu_contains(r.out, "add"))
        tu_proc_dump(&r, "timeline_gaps.py");
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "waits of [");
    assert_contains(r.out, "median us: launch ");
    tu_proc_free(&r);
}

static void one_mode(const char* zero_copy)
{
    char* dir = tu_mkdtemp();
    assert_non_null(dir);
    char path[600], zc[64];
    snprintf(path, sizeof path, "STDCL_TIMELINE=%s/timeline-%%p.json", dir);
    snprintf(zc, sizeof zc, "STDCL_ZERO_COPY=%s", zero_copy);
    const char* env[] = {path, zc, "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID", NULL};
    tu_proc r;
    run_self(&r, env);
    if (r.status != 0) tu_proc_dump(&r, "--run");
    assert_int_equal(r.status, 0);
    tu_proc_free(&r);
    char* file = only_file(dir);
    assert_non_null(file);
    assert_contains(file, "timeline-");
    CLCONTEXT* cp = chosen();
    check_file(file, clgetndev(cp) > 2 ? 2 : clgetndev(cp));
    gaps_of_file(file);
    free(file);
    char rm[700];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    assert_int_equal(system(rm), 0);
    free(dir);
}

static void test_timeline_in_copy_mode(void** state)
{
    (void)state;
    one_mode("0");
}

static void test_timeline_in_zero_copy_mode(void** state)
{
    (void)state;
    one_mode("1");
}

/* tools/timeline_gaps.py against a model: generated traces whose launch,
 * device time, gaps and notice are known (tests/check_timeline_gaps.py). */
static void test_timeline_gaps_agrees_with_its_model(void** state)
{
    (void)state;
    char script[4200], tool[4200];
    snprintf(script, sizeof script, "%s/check_timeline_gaps.py", tu_srcdir());
    snprintf(tool, sizeof tool, "%s/../tools/timeline_gaps.py", tu_srcdir());
    const char* args[] = {script, tool, "--count", "40", NULL};
    tu_proc r;
    tu_spawn(&r, "/usr/bin/python3", args, NULL, NULL, 240);
    print_message("%s", r.out);
    if (r.status != 0) tu_proc_dump(&r, "check_timeline_gaps.py");
    assert_int_equal(r.status, 0);
    assert_contains(r.out, "40 of 40 generated traces agree");
    tu_proc_free(&r);
}

/* One file per MPI rank: %r, or ".rank<N>" before the extension. */
static void test_timeline_file_per_rank(void** state)
{
    (void)state;
    char* dir = tu_mkdtemp();
    assert_non_null(dir);
    const char* patterns[] = {"t.json", "t-%r.json", "t"};
    const char* wants[] = {"t.rank3.json", "t-3.json", "t.rank3"};
    for (size_t i = 0; i < tu_countof(patterns); i++) {
        char path[600], want[600];
        snprintf(path, sizeof path, "STDCL_TIMELINE=%s/%s", dir, patterns[i]);
        snprintf(want, sizeof want, "%s/%s", dir, wants[i]);
        const char* env[] = {path, "OMPI_COMM_WORLD_RANK=3", NULL};
        tu_proc r;
        run_self(&r, env);
        if (r.status != 0) tu_proc_dump(&r, patterns[i]);
        assert_int_equal(r.status, 0);
        tu_proc_free(&r);
        if (!tu_is_file(want)) print_error("no %s\n", want);
        assert_true(tu_is_file(want));
        size_t len = 0;
        char* text = tu_read_file(want, &len);
        assert_non_null(text);
        assert_contains(text, "\"rank\": 3");
        assert_contains(text, "libstdcl: rank 3");
        free(text);
        remove(want);
    }
    char rm[700];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    assert_int_equal(system(rm), 0);
    free(dir);
}

static void test_timeline_bad_values_say_so_and_run_on(void** state)
{
    (void)state;
    tu_proc r;
    const char* on[] = {"STDCL_TIMELINE=on", NULL};
    run_self(&r, on);
    if (r.status != 0) tu_proc_dump(&r, "on");
    assert_int_equal(r.status, 0);
    assert_contains(r.err, "STDCL_TIMELINE='on' is not a file's path: no timeline");
    tu_proc_free(&r);
    const char* nowhere[] = {"STDCL_TIMELINE=/nonexistent-stdcl-folder/t.json", NULL};
    run_self(&r, nowhere);
    if (r.status != 0) tu_proc_dump(&r, "nowhere");
    assert_int_equal(r.status, 0);
    assert_contains(r.err, "STDCL_TIMELINE: writing '/nonexistent-stdcl-folder/t.json' failed");
    tu_proc_free(&r);
}

/* stdcl_timeline_flush writes the timeline while the program runs: all the
 * commands seen complete by then, a file check_timeline.py accepts. */
static void test_timeline_flush_writes_it_now(void** state)
{
    (void)state;
    char* dir = tu_mkdtemp();
    assert_non_null(dir);
    char path[600], flushed[600], copy[700];
    snprintf(path, sizeof path, "STDCL_TIMELINE=%s/t.json", dir);
    snprintf(flushed, sizeof flushed, "%s/flushed.json", dir);
    snprintf(copy, sizeof copy, "TEST_TIMELINE_FLUSH=%s", flushed);
    const char* env[] = {path, copy, "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID", NULL};
    tu_proc r;
    run_self(&r, env);
    if (r.status != 0) tu_proc_dump(&r, "--run with a flush");
    assert_int_equal(r.status, 0);
    tu_proc_free(&r);
    assert_true(tu_is_file(flushed));
    CLCONTEXT* cp = chosen();
    check_file(flushed, clgetndev(cp) > 2 ? 2 : clgetndev(cp));
    char at_exit[620];
    snprintf(at_exit, sizeof at_exit, "%s/t.json", dir);
    assert_true(tu_is_file(at_exit));  /* written again at exit */
    char rm[700];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    assert_int_equal(system(rm), 0);
    free(dir);
}

/* Without STDCL_TIMELINE there is nothing to flush: STDCL_ESTATE, and
 * clerror() says what to set. */
static void test_timeline_flush_without_a_timeline_says_so(void** state)
{
    (void)state;
    assert_null(getenv("STDCL_TIMELINE"));
    assert_int_equal(stdcl_timeline_flush(), STDCL_ESTATE);
    assert_contains(clerror(), "STDCL_TIMELINE=FILE");
}

/* A file that cannot be written: STDCL_ENOENT naming it, and the program
 * runs on. */
static void test_timeline_flush_to_nowhere_says_so(void** state)
{
    (void)state;
    char* dir = tu_mkdtemp();
    assert_non_null(dir);
    const char* env[] = {"STDCL_TIMELINE=/nonexistent-stdcl-folder/t.json", "TEST_TIMELINE_FLUSH=/dev/null", NULL};
    tu_proc r;
    run_self(&r, env);
    assert_int_equal(r.status, 1);
    assert_contains(r.err, "stdcl_timeline_flush: writing '/nonexistent-stdcl-folder/t.json' failed");
    tu_proc_free(&r);
    free(dir);
}

int main(int argc, char** argv)
{
    g_self = argv[0];
    if (argc > 1 && strcmp(argv[1], "--run") == 0) return run();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_timeline_in_copy_mode),
        cmocka_unit_test(test_timeline_in_zero_copy_mode),
        cmocka_unit_test(test_timeline_gaps_agrees_with_its_model),
        cmocka_unit_test(test_timeline_file_per_rank),
        cmocka_unit_test(test_timeline_bad_values_say_so_and_run_on),
        cmocka_unit_test(test_timeline_flush_writes_it_now),
        cmocka_unit_test(test_timeline_flush_without_a_timeline_says_so),
        cmocka_unit_test(test_timeline_flush_to_nowhere_says_so),
    };
    return tu_run_tests(argc, argv, "timeline", tests, NULL, NULL);
}
