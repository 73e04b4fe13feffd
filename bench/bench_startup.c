/* SPDX-License-Identifier: MIT */
/* bench_startup.c: what linking libstdcl adds to a program's run from exec
 * to exit, beside a raw OpenCL program that sets up the same contexts.
 *
 *   build/bench/bench_startup [-k runs]
 *
 * It times four programs, each from posix_spawn to wait4 (CLOCK_MONOTONIC),
 * in -k rounds (default 11) after one warm-up round; in each round every
 * program runs once, the order rotating from round to round so that drift
 * hits all of them:
 *   floor        startup_raw -0: exec, the dynamic linker and the OpenCL ICD
 *                loader's library, no OpenCL call;
 *   raw OpenCL   startup_raw: for each default context libstdcl makes
 *                (stddev, stdcpu, stdgpu, stdacc) the platform libstdcl
 *                would pick, clCreateContext and a queue per device, all
 *                released at exit (startup_raw.c);
 *   libstdcl     startup_empty: main() returns 0, linked with -lstdcl: the
 *                library's load-time contexts and their release at exit;
 *   libstdcl off the same with STDDEV=0 STDCPU=0 STDGPU=0 STDACC=0 (no
 *                default context; the library still lists the platforms).
 * The programs inherit this environment (the "off" row overrides those four
 * variables), so STDX_PLATFORM_NAME, STDCL_ZERO_COPY, POCL_DEVICES and the
 * like apply to them; startup_raw reads none of libstdcl's variables.
 * A time is the median over the rounds (25th-75th percentile beside it); a
 * ratio X/raw is the median of the per-round ratios; beside them the median
 * CPU time (user + system of all the program's threads, from wait4).
 * startup_raw and startup_empty must lie next to this program (make bench
 * builds them);
 * before timing, the dynamic linker's trace (LD_TRACE_LOADED_OBJECTS, as ldd)
 * checks that startup_empty loads libstdcl and startup_raw does not.  The
 * programs' standard error is shown in the warm-up round and discarded in
 * the timed ones; any failing run stops the benchmark.
 *
 * Exit status: 0 when every run succeeded, 1 otherwise, 2 for bad options.
 */
#define _GNU_SOURCE
#include <stdcl.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_info.h"
#include "bench_stats.h"

#define PROG "bench_startup"

static int runs = 11;
static char raw_path[PATH_MAX + 32], empty_path[PATH_MAX + 32];
static int devnull = -1;

enum { V_FLOOR, V_RAW, V_STDCL, V_OFF, V_COUNT };
static const char* vname[V_COUNT] = {
    "floor: startup_raw -0 (no OpenCL call)",
    "raw OpenCL: startup_raw",
    "libstdcl: startup_empty",
    "libstdcl, STDDEV=0 STDCPU=0 STDGPU=0 STDACC=0",
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void usage(FILE* f)
{
    fprintf(f,
            "usage: " PROG " [-k runs]\n"
            "  -k  timed rounds, each running every program once (default 11)\n");
}

/* The environment with `add` entries (NULL-terminated) appended; an entry of
 * environ with a name that one of `add` sets is left out. */
static char** env_with(const char* const* add)
{
    size_t n = 0, na = 0;
    while (environ[n]) ++n;
    while (add[na]) ++na;
    char** e = malloc((n + na + 1) * sizeof *e);
    if (!e) {
        fprintf(stderr, PROG ": out of memory\n");
        exit(1);
    }
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
        int overridden = 0;
        for (size_t j = 0; j < na; ++j) {
            size_t l = (size_t)(strchr(add[j], '=') - add[j]) + 1; /* "NAME=" */
            if (strncmp(environ[i], add[j], l) == 0) overridden = 1;
        }
        if (!overridden) e[k++] = environ[i];
    }
    for (size_t j = 0; j < na; ++j) e[k++] = (char*)add[j];
    e[k] = NULL;
    return e;
}

/* Runs path [arg] with envp and waits.  capture: 0 (nothing), 1 (its stdout)
 * or 2 (its stderr) into out (out_n bytes, NUL-terminated); quiet: the
 * streams not captured go to /dev/null.  Returns the wait status, or -1 when
 * it could not be started; *ms (may be NULL): the time from spawn to the end
 * of the wait; *cpu_ms (may be NULL): its user + system CPU time (wait4). */
static int run(const char* path, const char* arg, char** envp, int capture, int quiet, char* out, size_t out_n,
               double* ms, double* cpu_ms)
{
    char* argv[3] = {(char*)path, (char*)arg, NULL};
    int fds[2] = {-1, -1};
    if (capture && pipe2(fds, O_CLOEXEC) != 0) {
        fprintf(stderr, PROG ": pipe2 failed: %s\n", strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0) {
        fprintf(stderr, PROG ": posix_spawn_file_actions_init failed\n");
        return -1;
    }
    int bad = 0;
    for (int fd = 1; fd <= 2; ++fd) {
        if (capture == fd)
            bad |= posix_spawn_file_actions_adddup2(&fa, fds[1], fd);
        else if (quiet)
            bad |= posix_spawn_file_actions_adddup2(&fa, devnull, fd);
    }
    if (bad) {
        fprintf(stderr, PROG ": posix_spawn_file_actions_adddup2 failed\n");
        return -1;
    }
    fflush(stdout);
    pid_t pid;
    double t0 = now_ms();
    int err = posix_spawn(&pid, path, &fa, NULL, argv, envp);
    posix_spawn_file_actions_destroy(&fa);
    if (capture) close(fds[1]);
    if (err != 0) {
        fprintf(stderr, PROG ": posix_spawn(%s) failed: %s\n", path, strerror(err));
        if (capture) close(fds[0]);
        return -1;
    }
    if (capture) {
        size_t got = 0;
        for (;;) {
            ssize_t k = read(fds[0], out + got, out_n - 1 - got);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) break;
            got += (size_t)k;
            if (got == out_n - 1) { /* full: drain the rest */
                char sink[4096];
                while (read(fds[0], sink, sizeof sink) > 0) {}
                break;
            }
        }
        out[got] = 0;
        close(fds[0]);
    }
    int status = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &status, 0, &ru) < 0)
        if (errno != EINTR) {
            fprintf(stderr, PROG ": wait4 failed: %s\n", strerror(errno));
            return -1;
        }
    if (ms) *ms = now_ms() - t0;
    if (cpu_ms)
        *cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
            (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
    return status;
}

static void describe_failure(const char* what, int status)
{
    if (status == -1) return; /* already said */
    if (WIFSIGNALED(status))
        fprintf(stderr, PROG ": %s died of signal %d\n", what, WTERMSIG(status));
    else
        fprintf(stderr, PROG ": %s exited with status %d\n", what, WEXITSTATUS(status));
}

/* Whether the dynamic linker loads libstdcl into `path` (its trace, as ldd);
 * -1 when the trace is empty (not glibc's linker): no check. */
static int loads_libstdcl(const char* path)
{
    static const char* const add[] = {"LD_TRACE_LOADED_OBJECTS=1", NULL};
    char** envp = env_with(add);
    char out[16384];
    int st = run(path, NULL, envp, 1, 1, out, sizeof out, NULL, NULL);
    free(envp);
    if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0 || !out[0]) return -1;
    return strstr(out, "libstdcl") != NULL;
}

static void find_programs(void)
{
    char exe[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0) {
        fprintf(stderr, PROG ": readlink(/proc/self/exe) failed: %s\n", strerror(errno));
        exit(1);
    }
    exe[len] = 0;
    char* slash = strrchr(exe, '/');
    if (slash) *slash = 0;
    snprintf(raw_path, sizeof raw_path, "%s/startup_raw", exe);
    snprintf(empty_path, sizeof empty_path, "%s/startup_empty", exe);
    const char* paths[2] = {raw_path, empty_path};
    for (int i = 0; i < 2; ++i)
        if (access(paths[i], X_OK) != 0) {
            fprintf(stderr, PROG ": %s: %s (make bench builds it next to " PROG ")\n", paths[i], strerror(errno));
            exit(1);
        }
    int r = loads_libstdcl(raw_path), e = loads_libstdcl(empty_path);
    if (r == 1) {
        fprintf(stderr, PROG ": %s loads libstdcl; it must link with OpenCL alone (see the Makefile)\n", raw_path);
        exit(1);
    }
    if (e == 0) {
        fprintf(stderr, PROG ": %s does not load libstdcl\n", empty_path);
        exit(1);
    }
    if (r < 0 || e < 0) printf("linkage:  not checked (the dynamic linker gave no trace)\n");
}

int main(int argc, char** argv)
{
    int c;
    while ((c = getopt(argc, argv, "k:h")) != -1) {
        switch (c) {
        case 'k': {
            char* end;
            errno = 0;
            long v = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || v < 1 || v > 100000) {
                fprintf(stderr, PROG ": bad run count '%s' (1 or more)\n", optarg);
                return 2;
            }
            runs = (int)v;
            break;
        }
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, PROG ": unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (devnull < 0) {
        fprintf(stderr, PROG ": /dev/null: %s\n", strerror(errno));
        return 1;
    }

    bench_print_machine(PROG);
    bench_print_command(argc, argv);
    find_programs();
    printf("libstdcl's default contexts in this environment (this process loads the library too):\n");
    bench_print_context("stddev:", stddev);
    bench_print_context("stdcpu:", stdcpu);
    bench_print_context("stdgpu:", stdgpu);
    bench_print_context("stdacc:", stdacc);

    static const char* const none[] = {NULL};
    static const char* const off[] = {"STDDEV=0", "STDCPU=0", "STDGPU=0", "STDACC=0", NULL};
    char** env_user = env_with(none);
    char** env_off = env_with(off);

    /* What startup_raw sets up, in its own words. */
    char said[4096];
    int st = run(raw_path, "-v", env_user, 2, 1, said, sizeof said, NULL, NULL);
    if (st != 0) {
        fputs(said, stderr);
        describe_failure("startup_raw -v", st);
        return 1;
    }
    printf("startup_raw sets up:%s", said[0] ? "\n" : " no context (no OpenCL platform)\n");
    for (char* line = strtok(said, "\n"); line; line = strtok(NULL, "\n"))
        printf("          %s\n", strncmp(line, "startup_raw: ", 13) == 0 ? line + 13 : line);
    printf("method:   %d rounds after 1 warm-up round, each program once per round in rotating order; "
           "time from posix_spawn to wait4; median and 25th-75th percentile; ratio = median of per-round ratios\n",
           runs);
    fflush(stdout);

    double *t[V_COUNT], *cpu[V_COUNT], *ratio[V_COUNT];
    for (int v = 0; v < V_COUNT; ++v) {
        t[v] = calloc((size_t)runs, sizeof(double));
        cpu[v] = calloc((size_t)runs, sizeof(double));
        ratio[v] = calloc((size_t)runs, sizeof(double));
        if (!t[v] || !cpu[v] || !ratio[v]) {
            fprintf(stderr, PROG ": out of memory\n");
            return 1;
        }
    }
    fprintf(stderr, "  %d rounds of %d programs ...\n", runs + 1, V_COUNT);
    for (int r = -1; r < runs; ++r) {
        for (int i = 0; i < V_COUNT; ++i) {
            int v = (r + 1 + i) % V_COUNT;
            const char* path = v == V_FLOOR || v == V_RAW ? raw_path : empty_path;
            const char* arg = v == V_FLOOR ? "-0" : NULL;
            double ms = 0, cms = 0;
            st = run(path, arg, v == V_OFF ? env_off : env_user, 0, r >= 0, NULL, 0, &ms, &cms);
            if (st != 0) {
                describe_failure(vname[v], st);
                fprintf(stderr, PROG ": %s failed%s; no figures\n", vname[v],
                        r >= 0 ? " (its messages went to /dev/null: run it alone)" : "");
                return 1;
            }
            if (r >= 0) {
                t[v][r] = ms;
                cpu[v][r] = cms;
            }
        }
    }

    /* Per-round ratios against raw, before the medians sort the times. */
    for (int v = 0; v < V_COUNT; ++v)
        for (int r = 0; r < runs; ++r) ratio[v][r] = t[v][r] / t[V_RAW][r];
    printf("\n%-46s %10s %14s %22s %8s\n", "program (exec to exit)", "median ms", "p25-p75 ms", "vs raw [p25-p75]",
           "CPU ms");
    for (int i = 0; i < 46 + 10 + 14 + 22 + 8 + 4; ++i) putchar('-');
    putchar('\n');
    double med[V_COUNT], cmed[V_COUNT];
    for (int v = 0; v < V_COUNT; ++v) {
        double p25 = bench_quantile(t[v], runs, 0.25), p75 = bench_quantile(t[v], runs, 0.75);
        med[v] = bench_median(t[v], runs);
        cmed[v] = bench_median(cpu[v], runs);
        char range[48], rat[48];
        snprintf(range, sizeof range, "%.2f-%.2f", p25, p75);
        if (v == V_RAW)
            snprintf(rat, sizeof rat, "1.00x");
        else
            snprintf(rat, sizeof rat, "%.2fx [%.2f-%.2f]", bench_median(ratio[v], runs),
                     bench_quantile(ratio[v], runs, 0.25), bench_quantile(ratio[v], runs, 0.75));
        printf("%-46s %10.2f %14s %22s %8.1f\n", vname[v], med[v], range, rat, cmed[v]);
    }
    printf("\nstdcl/raw: %.2fx (median of per-round ratios; medians %.2f ms against %.2f ms: %+.2f ms)\n",
           bench_median(ratio[V_STDCL], runs), med[V_STDCL], med[V_RAW], med[V_STDCL] - med[V_RAW]);
    printf("CPU ms: the median of the program's user + system time (wait4), all its threads; less sensitive to\n"
           "other processes than the wall time, blind to waiting\n");
    printf("load at end: %s\n", bench_loadavg());
    for (int v = 0; v < V_COUNT; ++v) {
        free(t[v]);
        free(cpu[v]);
        free(ratio[v]);
    }
    free(env_user);
    free(env_off);
    close(devnull);
    return 0;
}
