/* SPDX-License-Identifier: MIT */
/* test_mpi.c: libstdcl programs across MPI ranks, under Open MPI's mpirun on
 * PoCL with two devices per rank: the MPI NBody (examples/nbody_mpi) agrees
 * with the one-process result and the double-precision reference (--check)
 * on 2 and 3 ranks (more ranks than cores: --oversubscribe), and
 * STDCPU_LOCK=auto gives 4 ranks on a host of 2 devices one device each for
 * two of them and a NULL stdcpu with a warning for the other two; stdclinfo
 * shows each rank's rank and lease; lock_mpi (tests/compat/lock_mpi, the
 * scenario of COPRTHR's mpi_lock_example) gives 2 ranks under
 * STDCPU_LOCK=31415 STDCPU_MAX_NDEV=1 a device each and the right products,
 * and a third rank a NULL context that it reports.  (The
 * lease itself, SIGKILL included, is tested rank by rank in test_context.c.)
 *
 * Each test skips, saying why, when mpirun cannot run at all (not installed,
 * or `mpirun -np 1 true` fails); root is allowed through Open MPI's
 * OMPI_ALLOW_RUN_AS_ROOT variables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "test_util.h"

/* Open MPI's settings for every mpirun here: root allowed; no shared-memory
 * single-copy mechanism (it needs ptrace rights that containers lack). */
/* ASAN_OPTIONS (read only by the sanitized builds of make asan-ubsan): no leak
 * report for the MPI programs.  Open MPI keeps allocations until exit, many of
 * them made in components it unloads at MPI_Finalize, so LeakSanitizer cannot
 * even name the library to suppress; libstdcl's own leaks stay checked by every
 * other test program. */
static const char* const k_mpi_env[] = {"OMPI_ALLOW_RUN_AS_ROOT=1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1",
                                        "OMPI_MCA_btl_vader_single_copy_mechanism=none",
                                        "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0", NULL};

static char g_mpirun[PATH_MAX];
static const char* g_skip; /* why the tests skip, or NULL */

/* mpirun from PATH, and whether it runs a one-rank job. */
static int find_mpirun(void** state)
{
    (void)state;
    const char* path = getenv("PATH");
    g_mpirun[0] = '\0';
    for (const char* p = path ? path : ""; *p;) {
        size_t n = strcspn(p, ":");
        char cand[PATH_MAX];
        snprintf(cand, sizeof cand, "%.*s/mpirun", (int)n, p);
        if (n && access(cand, X_OK) == 0) {
            snprintf(g_mpirun, sizeof g_mpirun, "%s", cand);
            break;
        }
        p += n + (p[n] == ':');
    }
    if (!g_mpirun[0]) {
        g_skip = "mpirun is not in PATH (tools/install_deps.sh installs openmpi-bin)";
        return 0;
    }
    tu_proc r;
    const char* args[] = {"-np", "1", "true", NULL};
    tu_spawn(&r, g_mpirun, args, k_mpi_env, NULL, 60);
    if (r.status != 0) {
        static char why[512];
        snprintf(why, sizeof why, "`%s -np 1 true` fails (status %d): %.300s", g_mpirun, r.status, r.err);
        g_skip = why;
    }
    tu_proc_free(&r);
    return 0;
}

static void need_mpirun(void)
{
    if (g_skip) {
        print_message("skipped: %s\n", g_skip);
        skip();
    }
}

/* Runs `mpirun -np <np> --oversubscribe <extra...> <prog> <args...>` in dir. */
static void run_mpi(tu_proc* r, int np, const char* const* extra, const char* prog, const char* const* args,
                    const char* dir)
{
    const char* argv[64];
    char nps[16];
    size_t k = 0;
    snprintf(nps, sizeof nps, "%d", np);
    argv[k++] = "-np";
    argv[k++] = nps;
    argv[k++] = "--oversubscribe";
    for (size_t i = 0; extra && extra[i]; i++) argv[k++] = extra[i];
    argv[k++] = prog;
    for (size_t i = 0; args && args[i]; i++) argv[k++] = args[i];
    argv[k] = NULL;
    tu_spawn(r, g_mpirun, argv, k_mpi_env, dir, 240);
}

/* mpirun -np <np> nbody_mpi --check ... from its build folder. */
static void run_nbody_mpi(tu_proc* r, int np, const char* n)
{
    need_mpirun();
    char dir[PATH_MAX + 64], path[PATH_MAX + 160];
    snprintf(dir, sizeof dir, "%s/../examples/nbody_mpi", tu_bindir());
    snprintf(path, sizeof path, "%s/nbody_mpi", dir);
    if (!tu_is_file(path)) fail_msg("%s is not built (configure found mpicc?)", path);
    const char* args[] = {"-c", "cpu", "--check", "-n", n, "-s", "3", "-q", NULL};
    run_mpi(r, np, NULL, path, args, dir);
}

static void test_nbody_mpi_two_ranks_match_one_process(void** state)
{
    (void)state;
    tu_proc r;
    run_nbody_mpi(&r, 2, "1000");
    tu_expect_pass(&r, "mpirun -np 2 nbody_mpi --check", "check: PASS");
    assert_contains(r.out, "nbody_mpi: 2 rank(s), 4 device(s) in all"); /* 2 PoCL devices each */
    assert_contains(r.out, "check 2 rank(s) vs one process: 3 steps, N=1000");
    assert_contains(r.out, "check 2 rank(s) vs double reference");
    assert_int_equal(tu_count(r.out, "check: PASS"), 1); /* rank 0 alone reports */
    tu_proc_free(&r);
}

static void test_nbody_mpi_three_ranks_uneven_match_one_process(void** state)
{
    (void)state;
    tu_proc r;
    run_nbody_mpi(&r, 3, "1001"); /* 1001 = 334 + 334 + 333 */
    tu_expect_pass(&r, "mpirun -np 3 nbody_mpi --check", "check: PASS");
    assert_contains(r.out, "nbody_mpi: 3 rank(s), 6 device(s) in all");
    assert_contains(r.out, "check 3 rank(s) vs one process: 3 steps, N=1001");
    tu_proc_free(&r);
}

/* Four ranks, two devices, STDCPU_LOCK=auto STDCPU_MAX_NDEV=1: two ranks
 * lease distinct devices, two get a NULL stdcpu and say why. */
static void test_stdcpu_lock_auto_four_ranks_two_devices(void** state)
{
    (void)state;
    need_mpirun();
    char* dir = tu_mkdtemp();
    assert_non_null(dir);
    char tmpdir[PATH_MAX + 16];
    snprintf(tmpdir, sizeof tmpdir, "TMPDIR=%s", dir);
    const char* extra[] = {"--tag-output", "-x", "STDCPU_LOCK=auto", "-x", "STDCPU_MAX_NDEV=1", "-x", tmpdir, NULL};
    /* Every rank holds its leases until all four have tried (a file barrier). */
    char* bar = tu_mkdtemp();
    assert_non_null(bar);
    const char* args[] = {"barrier", "4", bar, NULL};
    tu_proc r;
    run_mpi(&r, 4, extra, tu_helper("helper_env"), args, NULL);
    tu_expect_status(&r, 0, "mpirun -np 4 helper_env");
    if (tu_count(r.out, "stdcpu=1 ") != 2) tu_proc_dump(&r, "mpirun -np 4 helper_env");
    assert_int_equal(tu_count(r.out, "stdcpu=1 "), 2);
    assert_int_equal(tu_count(r.out, "stdcpu=0 "), 2);
    assert_int_equal(tu_count(r.out, "leased platform device(s) 0\n"), 1);
    assert_int_equal(tu_count(r.out, "leased platform device(s) 1\n"), 1);
    assert_int_equal(tu_count(r.err, "every stdcpu device is leased to another process (2 tried); stdcpu is NULL"), 2);
    assert_int_equal(tu_count(r.out,
                              "null stdcpu: the context is NULL; at load time: stdcpu: "
                              "STDCPU_LOCK=auto (local rank"),
                     2);
    tu_proc_free(&r);
    free(bar);
    free(dir);
}

/* stdclinfo under mpirun: each rank says which rank it is and what it leased. */
static void test_stdclinfo_shows_rank_and_lease_under_mpirun(void** state)
{
    (void)state;
    need_mpirun();
    char* dir = tu_mkdtemp();
    assert_non_null(dir);
    char tmpdir[PATH_MAX + 16], tool[PATH_MAX + 32];
    snprintf(tmpdir, sizeof tmpdir, "TMPDIR=%s", dir);
    snprintf(tool, sizeof tool, "%s/../bin/stdclinfo", tu_bindir());
    const char* extra[] = {"-x", "STDCPU_LOCK=auto", "-x", "STDCPU_MAX_NDEV=1", "-x", tmpdir, NULL};
    tu_proc r;
    run_mpi(&r, 2, extra, tool, NULL, NULL);
    tu_expect_status(&r, 0, "mpirun -np 2 stdclinfo");
    assert_contains(r.out, "rank 0 of 2 on ");
    assert_contains(r.out, "rank 1 of 2 on ");
    assert_contains(r.out, "(Open MPI; local rank 1)");
    /* Local rank r starts at device r: each rank has its own. */
    assert_contains(r.out,
                    "STDCPU_LOCK=auto (local rank 0 of 2, OMPI_COMM_WORLD_LOCAL_RANK) leased platform device(s) 0");
    assert_contains(r.out,
                    "STDCPU_LOCK=auto (local rank 1 of 2, OMPI_COMM_WORLD_LOCAL_RANK) leased platform device(s) 1");
    assert_contains(r.out, "  STDCPU_LOCK=auto\n");
    tu_proc_free(&r);
    free(dir);
}

/* mpirun -np <np> lock_mpi -c cpu -n <n> under STDCPU_LOCK=31415
 * STDCPU_MAX_NDEV=1 (COPRTHR's run_two_gpu.sh, on stdcpu), lease files in a
 * fresh TMPDIR. */
static void run_lock_mpi(tu_proc* r, int np, const char* n)
{
    need_mpirun();
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/compat/lock_mpi/lock_mpi", tu_bindir());
    if (!tu_is_file(path)) fail_msg("%s is not built (configure found mpicc?)", path);
    char* dir = tu_mkdtemp();
    assert_non_null(dir);
    char tmpdir[PATH_MAX + 16];
    snprintf(tmpdir, sizeof tmpdir, "TMPDIR=%s", dir);
    const char* extra[] = {"-x", "STDCPU_LOCK=31415", "-x", "STDCPU_MAX_NDEV=1", "-x", tmpdir, NULL};
    const char* args[] = {"-c", "cpu", "-n", n, NULL};
    run_mpi(r, np, extra, path, args, NULL);
    free(dir);
}

/* Rank r's report line of lock_mpi ("rank R: ..."), copied into buf; NULL if
 * there is none. */
static const char* lock_report(const char* out, int r, char* buf, size_t size)
{
    char key[32];
    int klen = snprintf(key, sizeof key, "rank %d: ", r);
    for (const char* line = out; line && *line;) {
        const char* end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (strncmp(line, key, (size_t)klen) == 0) {
            snprintf(buf, size, "%.*s", (int)len, line);
            return buf;
        }
        line = end ? end + 1 : NULL;
    }
    return NULL;
}

/* The platform device rank r's report says it leased; -1 if none. */
static int leased_device(const char* out, int r)
{
    char line[4096];
    const char* key = "leased platform device(s) ";
    const char* at = lock_report(out, r, line, sizeof line) ? strstr(line, key) : NULL;
    int d = -1;
    if (at && sscanf(at + strlen(key), "%d", &d) != 1) d = -1;
    return d;
}

static void test_lock_mpi_two_ranks_lease_one_device_each(void** state)
{
    (void)state;
    enum { NP = 2, N = 100 };
    tu_proc r;
    run_lock_mpi(&r, NP, "100");
    tu_expect_status(&r, 0, "mpirun -np 2 lock_mpi");
    /* Each rank leased a device of its own, and says so. */
    int d0 = leased_device(r.out, 0), d1 = leased_device(r.out, 1);
    if (d0 < 0 || d1 < 0 || d0 == d1) tu_proc_dump(&r, "lock_mpi");
    assert_true(d0 == 0 || d0 == 1);
    assert_true(d1 == 0 || d1 == 1);
    assert_int_not_equal(d0, d1);
    assert_int_equal(tu_count(r.out, "STDCPU_LOCK=31415"), NP);
    assert_not_contains(r.out, "FAILED");
    /* Every element of both ranks: c = (1.1f g)(2.2f g), exactly, in float. */
    const char* p = strstr(r.out, "\nrank 1: ");
    assert_non_null(p);
    p = strchr(p + 1, '\n');
    assert_non_null(p);
    for (long g = 0; g < (long)NP * N; g++) {
        long idx = -1;
        float got = 0;
        int used = 0;
        if (sscanf(p, "%ld %f%n", &idx, &got, &used) != 2 || idx != g) {
            print_error("element %ld: line missing or malformed\n", g);
            tu_proc_dump(&r, "lock_mpi");
            fail();
        }
        volatile float a = 1.1f * (float)g, b = 2.2f * (float)g;
        float want = a * b;
        if (got != want) fail_msg("element %ld (rank %ld): %.9g, want %.9g", g, g / N, got, want);
        p += used;
    }
    long extra;
    assert_int_equal(sscanf(p, "%ld", &extra), EOF); /* nothing after */
    tu_proc_free(&r);
}

static void test_lock_mpi_three_ranks_two_devices_one_reports_null(void** state)
{
    (void)state;
    tu_proc r;
    run_lock_mpi(&r, 3, "16");
    /* The rank left without a device fails, so the job does: no elements. */
    assert_int_not_equal(r.status, 0);
    int held[2] = {0, 0}, without = -1;
    char line[4096];
    for (int k = 0; k < 3; k++) {
        if (!lock_report(r.out, k, line, sizeof line)) tu_proc_dump(&r, "lock_mpi");
        assert_non_null(lock_report(r.out, k, line, sizeof line));
        int d = leased_device(r.out, k);
        if (d == 0 || d == 1) {
            held[d]++;
        } else {
            without = k;
            assert_contains(line, ": FAILED: ");
            assert_contains(line,
                            "STDCPU_LOCK=31415: every stdcpu device is leased to another process (2 tried); "
                            "stdcpu is NULL");
        }
    }
    assert_int_equal(held[0], 1);
    assert_int_equal(held[1], 1);
    assert_int_not_equal(without, -1);
    assert_int_equal(tu_count(r.out, "FAILED"), 1);
    assert_int_equal(tu_count(r.out, "\n"), 3); /* the three report lines only */
    tu_proc_free(&r);
}

static const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_nbody_mpi_two_ranks_match_one_process),
    cmocka_unit_test(test_nbody_mpi_three_ranks_uneven_match_one_process),
    cmocka_unit_test(test_stdcpu_lock_auto_four_ranks_two_devices),
    cmocka_unit_test(test_stdclinfo_shows_rank_and_lease_under_mpirun),
    cmocka_unit_test(test_lock_mpi_two_ranks_lease_one_device_each),
    cmocka_unit_test(test_lock_mpi_three_ranks_two_devices_one_reports_null),
};

int main(int argc, char** argv) { return tu_run_tests(argc, argv, "mpi", tests, find_mpirun, NULL); }
