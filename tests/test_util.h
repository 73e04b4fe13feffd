/* SPDX-License-Identifier: MIT */
/* test_util.h: what the CMocka test programs share: finding tests/ and the
 * kernel files from the test binary, group setups that open kernel files,
 * spawning a helper program with extra environment and capturing its output,
 * string and exit-status checks with useful messages, tables of helper_env
 * runs (tu_env_row: the default contexts under STD* variables), and main.
 *
 * Include after <cmocka.h>.  Every function is static inline, so a program
 * that uses only some of them gets no unused-function warning.
 *
 * Where things are: a test runs as <repo>/<build>/tests/test_x, so tests/ is
 * <dir of /proc/self/exe>/../../tests; STDCL_TEST_SRCDIR (set by
 * tools/test_env.sh) is the fallback.  Kernel files are in tests/kernels/.
 * Helper programs (tests/helper_*.c) are built next to the test binary. */
#ifndef STDCL_TEST_UTIL_H
#define STDCL_TEST_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <stdcl.h>

extern char** environ;

/* ------------------------------------------------------------------------ */
/* Paths                                                                     */
/* ------------------------------------------------------------------------ */

static inline int tu_is_dir(const char* p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static inline int tu_is_file(const char* p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The folder holding the running test binary (and the helpers). */
static inline const char* tu_bindir(void)
{
    static char dir[PATH_MAX];
    if (!dir[0]) {
        ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
        if (n <= 0) {
            strcpy(dir, ".");
        } else {
            dir[n] = '\0';
            char* slash = strrchr(dir, '/');
            if (slash && slash != dir) *slash = '\0';
        }
    }
    return dir;
}

/* The canonical path of the source tree's tests/ folder; NULL if not found. */
static inline const char* tu_srcdir(void)
{
    static char dir[PATH_MAX];
    if (!dir[0]) {
        char cand[PATH_MAX + 32], kern[PATH_MAX + 64];
        snprintf(cand, sizeof cand, "%s/../../tests", tu_bindir());
        snprintf(kern, sizeof kern, "%s/kernels", cand);
        if (!tu_is_dir(kern)) {
            const char* env = getenv("STDCL_TEST_SRCDIR");
            if (!env) return NULL;
            snprintf(cand, sizeof cand, "%s", env);
        }
        if (!realpath(cand, dir)) {
            dir[0] = '\0';
            return NULL;
        }
    }
    return dir;
}

/* Absolute path of tests/kernels/<name> (name NULL or "": the folder).
 * The result lives in one of 8 rotating buffers. */
static inline const char* tu_kernel(const char* name)
{
    static char bufs[8][PATH_MAX + 64];
    static int next;
    char* b = bufs[next++ & 7];
    const char* src = tu_srcdir();
    if (name && *name)
        snprintf(b, sizeof bufs[0], "%s/kernels/%s", src ? src : "tests", name);
    else
        snprintf(b, sizeof bufs[0], "%s/kernels", src ? src : "tests");
    return b;
}

/* Absolute path of the helper program <name> built next to this test. */
static inline const char* tu_helper(const char* name)
{
    static char bufs[4][PATH_MAX + 64];
    static int next;
    char* b = bufs[next++ & 3];
    snprintf(b, sizeof bufs[0], "%s/%s", tu_bindir(), name);
    return b;
}

/* A new empty folder under $TMPDIR (or /tmp); the caller frees the string. */
static inline char* tu_mkdtemp(void)
{
    const char* t = getenv("TMPDIR");
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s/stdcl-tu.XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(buf)) return NULL;
    return strdup(buf);
}

/* Writes text to path; 0 on success. */
static inline int tu_write_file(const char* path, const char* text)
{
    FILE* f = fopen(path, "w");
    if (!f) return -1;
    size_t n = strlen(text);
    int ok = fwrite(text, 1, n, f) == n;
    return (fclose(f) == 0 && ok) ? 0 : -1;
}

/* The whole file as a NUL-terminated string (caller frees), NULL if unreadable. */
static inline char* tu_read_file(const char* path, size_t* len)
{
    FILE* f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char* s = (char*)malloc(cap);
    size_t r;
    while (s && (r = fread(s + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n - 1 == 0) {
            char* t = (char*)realloc(s, cap * 2);
            if (!t) {
                free(s);
                s = NULL;
                break;
            }
            s = t;
            cap *= 2;
        }
    }
    fclose(f);
    if (!s) return NULL;
    s[n] = '\0';
    if (len) *len = n;
    return s;
}

/* ------------------------------------------------------------------------ */
/* Spawning a helper program                                                 */
/* ------------------------------------------------------------------------ */

typedef struct {
    int status; /* exit code; 128+signal if killed; -1 spawn failure; -2 timeout */
    char* out; /* its stdout (never NULL after tu_spawn) */
    char* err; /* its stderr (never NULL after tu_spawn) */
} tu_proc;

static inline char* tu_slurp_fd(int fd)
{
    size_t cap = 4096, n = 0;
    char* s = (char*)malloc(cap);
    if (!s) return NULL;
    lseek(fd, 0, SEEK_SET);
    for (;;) {
        if (cap - n < 2) {
            char* t = (char*)realloc(s, cap * 2);
            if (!t) break;
            s = t;
            cap *= 2;
        }
        ssize_t r = read(fd, s + n, cap - n - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        n += (size_t)r;
    }
    s[n] = '\0';
    return s;
}

static inline int tu_tmpfd(void)
{
    const char* t = getenv("TMPDIR");
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s/stdcl-tu-out.XXXXXX", t && *t ? t : "/tmp");
    int fd = mkstemp(buf);
    if (fd >= 0) unlink(buf);
    return fd;
}

/* The caller's environment changed by env (NULL-terminated list of
 * "NAME=value" to set and "NAME" to remove, or NULL), as an envp for execve:
 * a new array (the caller frees it, not its strings); NULL if out of memory. */
static inline char** tu_envp(const char* const* env)
{
    size_t nenv = 0, nchg = 0;
    while (environ[nenv]) nenv++;
    while (env && env[nchg]) nchg++;
    char** envp = (char**)calloc(nenv + nchg + 1, sizeof *envp);
    if (!envp) return NULL;
    size_t k = 0;
    for (size_t i = 0; i < nenv; i++) { /* drop the names env sets or removes */
        const char* e = environ[i];
        size_t len = strcspn(e, "=");
        int changed = 0;
        for (size_t j = 0; j < nchg && !changed; j++) {
            size_t lj = strcspn(env[j], "=");
            changed = lj == len && strncmp(env[j], e, len) == 0;
        }
        if (!changed) envp[k++] = (char*)e;
    }
    for (size_t j = 0; j < nchg; j++)
        if (strchr(env[j], '=')) envp[k++] = (char*)env[j];
    envp[k] = NULL;
    return envp;
}

/* Runs prog with arguments args (NULL-terminated list of argv[1..], or NULL)
 * and the caller's environment changed by env (NULL-terminated list of
 * "NAME=value" to set and "NAME" to remove, or NULL), in folder cwd (NULL:
 * the current one), killing it after timeout_s seconds.  fork + exec only:
 * the child calls nothing but async-signal-safe functions before exec, so
 * this is safe in a process that has OpenCL threads.  Returns r->status. */
static inline int tu_spawn(tu_proc* r, const char* prog, const char* const* args, const char* const* env,
                           const char* cwd, int timeout_s)
{
    r->status = -1;
    r->out = NULL;
    r->err = NULL;

    /* argv */
    size_t nargs = 0;
    while (args && args[nargs]) nargs++;
    char** argv = (char**)calloc(nargs + 2, sizeof *argv);
    char** envp = tu_envp(env);
    int fo = tu_tmpfd(), fe = tu_tmpfd();
    if (!argv || !envp || fo < 0 || fe < 0) goto done;
    argv[0] = (char*)prog;
    for (size_t i = 0; i < nargs; i++) argv[i + 1] = (char*)args[i];

    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) goto done;
    if (pid == 0) {
        if (dup2(fo, 1) < 0 || dup2(fe, 2) < 0) _exit(126);
        if (cwd && chdir(cwd) != 0) _exit(126);
        execve(prog, argv, envp);
        _exit(127);
    }
    {
        int st = 0;
        struct timespec ts = {0, 5 * 1000 * 1000};
        long waited_ms = 0;
        for (;;) {
            pid_t w = waitpid(pid, &st, WNOHANG);
            if (w == pid) break;
            if (w < 0 && errno != EINTR) {
                st = -1;
                break;
            }
            if (waited_ms > (long)timeout_s * 1000) {
                kill(pid, SIGKILL);
                waitpid(pid, &st, 0);
                st = -2;
                break;
            }
            nanosleep(&ts, NULL);
            waited_ms += 5;
        }
        if (st == -1 || st == -2)
            r->status = st;
        else if (WIFEXITED(st))
            r->status = WEXITSTATUS(st);
        else if (WIFSIGNALED(st))
            r->status = 128 + WTERMSIG(st);
    }
done:
    r->out = fo >= 0 ? tu_slurp_fd(fo) : NULL;
    r->err = fe >= 0 ? tu_slurp_fd(fe) : NULL;
    if (!r->out) r->out = strdup("");
    if (!r->err) r->err = strdup("");
    if (r->status == -2) {
        size_t n = strlen(r->err);
        char* t = (char*)realloc(r->err, n + 64);
        if (t) {
            snprintf(t + n, 64, "\n[tu_spawn: killed after %d s]\n", timeout_s);
            r->err = t;
        }
    }
    if (fo >= 0) close(fo);
    if (fe >= 0) close(fe);
    free(argv);
    free(envp);
    return r->status;
}

static inline void tu_proc_free(tu_proc* r)
{
    free(r->out);
    free(r->err);
    r->out = r->err = NULL;
}

/* ------------------------------------------------------------------------ */
/* A second platform: Oclgrind beside PoCL                                   */
/* ------------------------------------------------------------------------ */

/* The Oclgrind ICD library, or NULL when not installed. */
static inline const char* tu_oclgrind_icd_library(void)
{
    static const char* candidates[] = {
        "/usr/lib/oclgrind/liboclgrind-rt-icd.so",
        "/usr/lib/x86_64-linux-gnu/oclgrind/liboclgrind-rt-icd.so",
        "/usr/lib/x86_64-linux-gnu/liboclgrind-rt-icd.so",
        "/usr/local/lib/liboclgrind-rt-icd.so",
        "/usr/lib64/liboclgrind-rt-icd.so",
    };
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++)
        if (tu_is_file(candidates[i])) return candidates[i];
    return NULL;
}

/* Fills the new folder dir as an ICD vendors folder (OCL_ICD_VENDORS) of two
 * platforms: pocl.icd, the library line of the system's (libpocl.so.2 if
 * unreadable), and oclgrind.icd naming lib (tu_oclgrind_icd_library).  Debian
 * does not register Oclgrind with the ICD loader.  0, or -1 on failure. */
static inline int tu_make_vendors(const char* dir, const char* lib)
{
    char pocl[PATH_MAX], path[PATH_MAX + 64], line[PATH_MAX + 2];
    char* text = tu_read_file("/etc/OpenCL/vendors/pocl.icd", NULL);
    snprintf(pocl, sizeof pocl, "%s", text && *text ? text : "libpocl.so.2\n");
    free(text);
    pocl[strcspn(pocl, "\n")] = '\0';
    if (mkdir(dir, 0700) != 0) return -1;
    snprintf(path, sizeof path, "%s/pocl.icd", dir);
    snprintf(line, sizeof line, "%s\n", pocl);
    if (tu_write_file(path, line) != 0) return -1;
    snprintf(path, sizeof path, "%s/oclgrind.icd", dir);
    snprintf(line, sizeof line, "%s\n", lib);
    return tu_write_file(path, line);
}

/* Removes a folder tu_make_vendors made. */
static inline void tu_remove_vendors(const char* dir)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/pocl.icd", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/oclgrind.icd", dir);
    unlink(path);
    rmdir(dir);
}

/* Group setup of the programs that run on PoCL's two pthread devices: 0 when
 * stdcpu has them, else a message and -1. */
static inline int tu_need_two_cpu_devices(void)
{
    if (!stdcpu || clgetndev(stdcpu) != 2) {
        print_error("setup: stdcpu must have 2 devices (POCL_DEVICES=\"pthread pthread\")\n");
        return -1;
    }
    return 0;
}

/* clopen of tests/kernels/<name> in cp; NULL with a setup message. */
static inline void* tu_open_kernels_in(CLCONTEXT* cp, const char* name)
{
    void* h = clopen(cp, tu_kernel(name), CLLD_NOW);
    if (!h) print_error("setup: clopen(%s): %s\n", name, clerror());
    return h;
}

/* clopen of tests/kernels/<name> in stdcpu; NULL with a setup message. */
static inline void* tu_open_kernels(const char* name) { return tu_open_kernels_in(stdcpu, name); }

/* How many elements the array a has. */
#define tu_countof(a) (sizeof(a) / sizeof((a)[0]))

/* A kernel that a group setup looks up: its name, and where it goes. */
typedef struct {
    const char* name;
    cl_kernel* kernel;
} tu_sym;

/* Group setup: tests/kernels/<file> opened in cp into *h (the group's
 * state, or a handle of the test's own), and each of the count kernels of
 * syms looked up in it; 0, or a setup message and -1. */
static inline int tu_open_kernel_syms_in(CLCONTEXT* cp, const char* file, void** h, const tu_sym* syms, size_t count)
{
    *h = tu_open_kernels_in(cp, file);
    if (!*h) return -1;
    for (size_t i = 0; i < count; i++) {
        *syms[i].kernel = clsym(cp, *h, syms[i].name, 0);
        if (!*syms[i].kernel) {
            print_error("setup: clsym(%s): %s\n", syms[i].name, clerror());
            return -1;
        }
    }
    return 0;
}

/* tu_open_kernel_syms_in of stdcpu. */
static inline int tu_open_kernel_syms(const char* file, void** h, const tu_sym* syms, size_t count)
{
    return tu_open_kernel_syms_in(stdcpu, file, h, syms, count);
}

/* clsopen that fails the test, at the caller's line and with clerror()'s
 * message, when it returns NULL. */
#define tu_clsopen(cp, source, flags) tu_clsopen_((cp), (source), (flags), __FILE__, __LINE__)

static inline void* tu_clsopen_(CLCONTEXT* cp, const char* source, int flags, const char* file, int line)
{
    void* h = clsopen(cp, source, flags);
    if (!h) {
        print_error("%s:%d: clsopen: %s\n", file, line, clerror());
        _fail(file, line);
    }
    return h;
}

/* A round trip through device d of stdcpu: a synced to the device, kernel
 * k(a, v) over ndr, a synced back; ef is CL_EVENT_WAIT or CL_EVENT_NOWAIT.
 * Fails the test (saying why for the launch) when a call fails. */
static inline void tu_round_trip(unsigned d, cl_kernel k, clndrange_t* ndr, int ef, int* a, int v)
{
    assert_non_null(clmsync(stdcpu, d, a, CL_MEM_DEVICE | ef));
    cl_event ev = clforka(stdcpu, d, k, ndr, ef, a, v);
    if (!ev) print_error("clforka: %s\n", clerror());
    assert_non_null(ev);
    assert_non_null(clmsync(stdcpu, d, a, CL_MEM_HOST | ef));
}

/* Group teardown after tu_open_kernel_syms(file, state, ...): closes the
 * program (also for a handle of the test's own: tu_close_kernels(&g_h)). */
static inline int tu_close_kernels(void** state)
{
    if (*state) clclose(stdcpu, *state);
    return 0;
}

/* Prints what a spawned program wrote (for a failing test's log). */
static inline void tu_proc_dump(const tu_proc* r, const char* what)
{
    print_message("--- %s: status %d\n--- stdout:\n%s--- stderr:\n%s---\n", what, r->status, r->out ? r->out : "",
                  r->err ? r->err : "");
}

/* ------------------------------------------------------------------------ */
/* String checks                                                             */
/* ------------------------------------------------------------------------ */

static inline int tu_contains(const char* hay, const char* needle)
{
    return hay && needle && strstr(hay, needle) != NULL;
}

/* Case-insensitive strstr. */
static inline int tu_icontains(const char* hay, const char* needle)
{
    if (!hay || !needle) return 0;
    size_t n = strlen(needle);
    for (const char* p = hay; *p; p++)
        if (strncasecmp(p, needle, n) == 0) return 1;
    return n == 0;
}

/* Non-overlapping occurrences of needle in hay. */
static inline int tu_count(const char* hay, const char* needle)
{
    int c = 0;
    size_t n = strlen(needle);
    if (!hay || n == 0) return 0;
    for (const char* p = strstr(hay, needle); p; p = strstr(p + n, needle)) c++;
    return c;
}

static inline void tu_assert_contains_(const char* hay, const char* needle, const char* expr, const char* file,
                                       int line)
{
    if (tu_contains(hay, needle)) return;
    print_error("%s:%d: expected %s to contain \"%s\"; it is %s%s%s\n", file, line, expr, needle, hay ? "\"" : "",
                hay ? hay : "NULL", hay ? "\"" : "");
    _fail(file, line);
}

static inline void tu_assert_not_contains_(const char* hay, const char* needle, const char* expr, const char* file,
                                           int line)
{
    if (!tu_contains(hay, needle)) return;
    print_error("%s:%d: expected %s not to contain \"%s\"; it is \"%s\"\n", file, line, expr, needle, hay);
    _fail(file, line);
}

/* assert_contains(hay, needle): fails, printing hay, unless needle is in it. */
#define assert_contains(hay, needle) tu_assert_contains_((hay), (needle), #hay, __FILE__, __LINE__)
#define assert_not_contains(hay, needle) tu_assert_not_contains_((hay), (needle), #hay, __FILE__, __LINE__)

/* Reads the next whitespace-separated number of r's output; fails the test
 * unless it equals want (exactly: for values printed exactly, such as integers). */
static inline void tu_expect_num(const char** p, const tu_proc* r, const char* prog, const char* what, long idx,
                                 double want)
{
    double got;
    int used = 0;
    if (sscanf(*p, "%lf%n", &got, &used) != 1) {
        print_error("%s: output ends early or is malformed at %s %ld\n", prog, what, idx);
        tu_proc_dump(r, prog);
        fail();
    }
    *p += used;
    if (got != want) {
        print_error("%s: %s %ld is %.17g, want %.17g\n", prog, what, idx, got, want);
        fail();
    }
}

/* Fails the test when r's output goes on after the last expected number (p:
 * where the numbers read so far end). */
static inline void tu_expect_end(const char* p, const tu_proc* r, const char* prog)
{
    double extra;
    if (sscanf(p, "%lf", &extra) != EOF) {
        print_error("%s: output goes on after the expected numbers\n", prog);
        tu_proc_dump(r, prog);
        fail();
    }
}

/* Fails the test, printing what r wrote, unless r (a spawned `what`) exited
 * with status want. */
#define tu_expect_status(r, want, what) tu_expect_status_((r), (want), (what), __FILE__, __LINE__)

static inline void tu_expect_status_(const tu_proc* r, int want, const char* what, const char* file, int line)
{
    if (r->status == want) return;
    tu_proc_dump(r, what);
    print_error("%s:%d: %s exited with status %d, want %d\n", file, line, what, r->status, want);
    _fail(file, line);
}

/* A --check run of `what` passed: it exited 0, its stdout says pass
 * (": PASS", "check: PASS") and never "FAIL". */
#define tu_expect_pass(r, what, pass) tu_expect_pass_((r), (what), (pass), __FILE__, __LINE__)

static inline void tu_expect_pass_(const tu_proc* r, const char* what, const char* pass, const char* file, int line)
{
    tu_expect_status_(r, 0, what, file, line);
    tu_assert_contains_(r->out, pass, "stdout", file, line);
    tu_assert_not_contains_(r->out, "FAIL", "stdout", file, line);
}

/* ------------------------------------------------------------------------ */
/* helper_env: the default contexts of a fresh process                       */
/* ------------------------------------------------------------------------ */

/* The device counts on helper_env's first line, "stdcpu=N stdgpu=N stddev=N
 * stdacc=N" (0 for a NULL context), into n[0..3]; 0, or -1 if the line is not there. */
static inline int tu_env_counts(const tu_proc* r, unsigned n[4])
{
    return sscanf(r->out, "stdcpu=%u stdgpu=%u stddev=%u stdacc=%u", &n[0], &n[1], &n[2], &n[3]) == 4 ? 0 : -1;
}

/* The line "why <name>: ..." of helper_env's output, copied into buf ("" if absent). */
static inline const char* tu_env_why(const tu_proc* r, const char* name, char* buf, size_t size)
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

/* A check a row does not make. */
#define TU_ANY (-1)

/* One run of helper_env and what it must show.  Every row's helper_env must
 * exit 0 and print its counts line; the rest is checked where the row says:
 * fields left out (0, NULL) check nothing, but warnings, which every row
 * states (TU_ANY: not checked).  The lists end at their first NULL. */
typedef struct {
    const char* name; /* the row, in failure messages */
    const char* env[12]; /* tu_spawn's changes: "NAME=value" sets, "NAME" removes */
    int lock_dir; /* 1: TMPDIR is the lock folder of the run (STDX_LOCK leases) */
    int run; /* 1: helper_env runs a kernel on every device */
    const char* counts; /* device counts it checks, as helper_env prints them: "stdcpu=2 stddev=0" */
    int warnings; /* how often stderr says "warning" */
    int quiet; /* 1: stderr is empty */
    const char* why; /* a context ("stdcpu") whose "why" line holds why_has */
    const char* why_has[2];
    const char* out_has[4]; /* in stdout */
    const char* out_lacks[2]; /* not in stdout */
    const char* err_has[4]; /* in stderr */
} tu_env_row;

/* Prints one difference of a row; returns 1. */
static inline int tu_env_differs(const tu_env_row* row, const char* fmt, ...) CMOCKA_PRINTF_ATTRIBUTE(2, 3);

static inline int tu_env_differs(const tu_env_row* row, const char* fmt, ...)
{
    char what[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    print_error("row \"%s\": %s\n", row->name, what);
    return 1;
}

/* Runs helper_env as row says (with lock_tmpdir, "TMPDIR=<folder>", when
 * row->lock_dir) and compares what it printed with the row: prints each
 * difference under the row's name, then helper_env's output if there was
 * one, and returns how many there were. */
static inline int tu_env_check(const tu_env_row* row, const char* lock_tmpdir)
{
    static const char* const names[4] = {"stdcpu", "stdgpu", "stddev", "stdacc"};
    const char* env[sizeof row->env / sizeof row->env[0] + 2];
    size_t ne = 0;
    for (; ne < sizeof row->env / sizeof row->env[0] && row->env[ne]; ne++) env[ne] = row->env[ne];
    if (row->lock_dir) env[ne++] = lock_tmpdir;
    env[ne] = NULL;
    const char* args[] = {"run", NULL};
    tu_proc r;
    tu_spawn(&r, tu_helper("helper_env"), row->run ? args : NULL, env, NULL, 120);
    int bad = 0;
    if (r.status != 0) bad += tu_env_differs(row, "helper_env exited with status %d, want 0", r.status);
    unsigned n[4];
    if (tu_env_counts(&r, n) != 0) {
        bad += tu_env_differs(row, "no counts line \"stdcpu=N stdgpu=N stddev=N stdacc=N\"");
    } else {
        const char* p = row->counts ? row->counts : "";
        char name[16];
        unsigned want;
        int used = 0;
        for (; sscanf(p, " %15[a-z]=%u%n", name, &want, &used) == 2; p += used) {
            int i = 0;
            while (i < 4 && strcmp(name, names[i]) != 0) i++;
            if (i == 4)
                bad += tu_env_differs(row, "its counts name \"%s\", not a context", name);
            else if (n[i] != want)
                bad += tu_env_differs(row, "%s has %u device(s), want %u", name, n[i], want);
        }
        if (p[strspn(p, " ")]) bad += tu_env_differs(row, "its counts end in \"%s\", not NAME=N", p);
    }
    int warnings = tu_count(r.err, "warning");
    if (row->warnings != TU_ANY && warnings != row->warnings)
        bad += tu_env_differs(row, "stderr says \"warning\" %d time(s), want %d", warnings, row->warnings);
    if (row->quiet && r.err[0]) bad += tu_env_differs(row, "stderr is not empty");
    if (row->why) {
        char line[1024];
        tu_env_why(&r, row->why, line, sizeof line);
        for (int i = 0; i < 2 && row->why_has[i]; i++)
            if (!tu_contains(line, row->why_has[i]))
                bad += tu_env_differs(row, "the \"why %s\" line lacks \"%s\": it is \"%s\"", row->why, row->why_has[i],
                                      line);
    }
    for (int i = 0; i < 4 && row->out_has[i]; i++)
        if (!tu_contains(r.out, row->out_has[i])) bad += tu_env_differs(row, "stdout lacks \"%s\"", row->out_has[i]);
    for (int i = 0; i < 2 && row->out_lacks[i]; i++)
        if (tu_contains(r.out, row->out_lacks[i])) bad += tu_env_differs(row, "stdout has \"%s\"", row->out_lacks[i]);
    for (int i = 0; i < 4 && row->err_has[i]; i++)
        if (!tu_contains(r.err, row->err_has[i])) bad += tu_env_differs(row, "stderr lacks \"%s\"", row->err_has[i]);
    if (bad) tu_proc_dump(&r, row->name);
    tu_proc_free(&r);
    return bad;
}

/* tu_env_check of every row of a table (count rows), the rows with lock_dir
 * in one new lock folder (a lease ends with its helper_env, so a row finds
 * only the lock files of the rows before it); fails the test after the last
 * row if any row differed, naming each. */
static inline void tu_env_check_rows(const tu_env_row* rows, size_t count)
{
    char* dir = tu_mkdtemp();
    assert_non_null(dir);
    char lock_tmpdir[PATH_MAX + 8];
    snprintf(lock_tmpdir, sizeof lock_tmpdir, "TMPDIR=%s", dir);
    free(dir);
    int failed = 0;
    for (size_t i = 0; i < count; i++) {
        if (tu_env_check(&rows[i], lock_tmpdir) == 0) continue;
        print_error("row %zu \"%s\": FAILED\n", i, rows[i].name);
        failed++;
    }
    if (failed) print_error("%d of %zu row(s) failed\n", failed, count);
    assert_int_equal(failed, 0);
}

/* The common main: an optional argv[1] is a CMocka test-name filter. */
static inline void tu_filter_from_args(int argc, char** argv)
{
    if (argc > 1 && argv[1][0]) cmocka_set_test_filter(argv[1]);
}

/* main's return: the tests of a CMUnitTest array, run as the group name with
 * its setup and teardown (NULL: none), those argv[1] selects when it is given. */
#define tu_run_tests(argc, argv, name, tests, setup, teardown)                                                         \
    (tu_filter_from_args((argc), (argv)), cmocka_run_group_tests_name((name), (tests), (setup), (teardown)))

#endif /* STDCL_TEST_UTIL_H */
