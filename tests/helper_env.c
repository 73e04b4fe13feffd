/* SPDX-License-Identifier: MIT */
/* helper_env.c: prints what the default contexts are in this process, for the
 * tests that set STD* environment variables (they need a fresh process, since
 * the contexts are made when libstdcl loads).
 *
 * stdout, first line: "stdcpu=N stdgpu=N stddev=N stdacc=N" (device counts,
 * 0 for a NULL context); then "load error: <clerror()>" when clerror() holds
 * a message before any call (a default context left NULL by a lease); then
 * "why <name>: <stdcl_context_why>" per non-NULL context and "null <name>:
 * <clerror()>" per NULL one (the message a call given that context gets).  With the argument "run", it then runs a small kernel on every
 * device of every non-NULL context and prints "run <name> <devnum> ok" (or
 * "run <name> <devnum> FAILED: <clerror>").  With the argument "hold", it
 * prints "holding" and then waits until its standard input closes (it keeps
 * its contexts, and so any STDX_LOCK device leases, until then).  With
 * "barrier N DIR" (the ranks of an mpirun job), it writes a file into DIR and
 * waits until DIR holds N files, i.e. until every rank has taken its leases,
 * before it exits (60 s at most).  After those, the words:
 * "loaded NAME" prints "loaded NAME: yes" when a library whose file name
 * holds NAME is mapped in the process, else "loaded NAME: no"; "create" runs
 * the kernel on every device of clcontext_create(NULL, CL_DEVICE_TYPE_ALL)
 * ("run created <devnum> ok"), then destroys it; "busy" launches the kernel
 * on device 0 of every non-NULL context with CL_EVENT_NOWAIT and leaves the
 * memory, the program and the launch to the release at exit ("busy <name>
 * ok").  Exit status: 0, or 1 if a run failed. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <stdcl.h>

static const char* k_src = "__kernel void twice(__global int* a) { int i = get_global_id(0); a[i] = 2 * a[i] + 1; }\n";

static int run_on(const char* name, CLCONTEXT* cp)
{
    int failed = 0;
    void* h = clsopen(cp, k_src, CLLD_NOW);
    cl_kernel k = h ? clsym(cp, h, "twice", CLLD_NOW) : NULL;
    for (unsigned d = 0; d < clgetndev(cp); d++) {
        enum { N = 256 };
        int* a = (int*)clmalloc(cp, N * sizeof(int), 0);
        int ok = k && a;
        if (ok) {
            for (int i = 0; i < N; i++) a[i] = i;
            clndrange_t ndr = clndrange_init1d(0, N, 64);
            ok = clmsync(cp, d, a, CL_MEM_DEVICE | CL_EVENT_WAIT) != NULL &&
                clforka(cp, d, k, &ndr, CL_EVENT_WAIT, a) != NULL &&
                clmsync(cp, d, a, CL_MEM_HOST | CL_EVENT_WAIT) != NULL;
            for (int i = 0; ok && i < N; i++) ok = a[i] == 2 * i + 1;
        }
        if (ok) {
            printf("run %s %u ok\n", name, d);
        } else {
            const char* e = clerror();
            printf("run %s %u FAILED: %s\n", name, d, e ? e : "(wrong results)");
            failed = 1;
        }
        clfree(a);
    }
    if (h) clclose(cp, h);
    return failed;
}

/* Whether a library whose file name holds `name` is mapped in this process. */
static int loaded(const char* name)
{
    FILE* f = fopen("/proc/self/maps", "r");
    char line[4096];
    int found = 0;
    while (f && !found && fgets(line, sizeof line, f)) {
        const char* file = strrchr(line, '/');
        found = file && strstr(file, name) != NULL;
    }
    if (f) fclose(f);
    return found;
}

/* Launches the kernel on device 0 of cp and leaves everything to the release
 * at exit. */
static int leave_busy(const char* name, CLCONTEXT* cp)
{
    enum { N = 4096 };
    void* h = clsopen(cp, k_src, CLLD_NOW);
    cl_kernel k = h ? clsym(cp, h, "twice", CLLD_NOW) : NULL;
    int* a = (int*)clmalloc(cp, N * sizeof(int), 0);
    clndrange_t ndr = clndrange_init1d(0, N, 64);
    int ok = k && a && clmsync(cp, 0, a, CL_MEM_DEVICE | CL_EVENT_NOWAIT) != NULL &&
        clforka(cp, 0, k, &ndr, CL_EVENT_NOWAIT, a) != NULL;
    const char* e = ok ? NULL : clerror();
    printf("busy %s %s%s\n", name, ok ? "ok" : "FAILED: ", ok ? "" : e ? e : "(no message)");
    return !ok;
}

int main(int argc, char** argv)
{
    struct {
        const char* name;
        CLCONTEXT* cp;
    } ctx[] = {{"stdcpu", stdcpu}, {"stdgpu", stdgpu}, {"stddev", stddev}, {"stdacc", stdacc}};
    char load_error[1024] = "";
    const char* e = clerror(); /* before any other call */
    if (e) snprintf(load_error, sizeof load_error, "%s", e);
    printf("stdcpu=%u stdgpu=%u stddev=%u stdacc=%u\n", clgetndev(stdcpu), clgetndev(stdgpu), clgetndev(stddev),
           clgetndev(stdacc));
    if (load_error[0]) printf("load error: %s\n", load_error);
    for (size_t i = 0; i < sizeof ctx / sizeof ctx[0]; i++) {
        if (ctx[i].cp) {
            printf("why %s: %s\n", ctx[i].name, stdcl_context_why(ctx[i].cp));
        } else {
            stdcl_context_why(NULL);
            e = clerror();
            printf("null %s: %s\n", ctx[i].name, e ? e : "(no message)");
        }
    }
    int failed = 0;
    if (argc > 1 && strcmp(argv[1], "run") == 0)
        for (size_t i = 0; i < sizeof ctx / sizeof ctx[0]; i++)
            if (ctx[i].cp) failed |= run_on(ctx[i].name, ctx[i].cp);
    if (argc > 1 && strcmp(argv[1], "hold") == 0) {
        printf("holding\n");
        fflush(stdout);
        while (getchar() != EOF) continue;
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "loaded") == 0 && i + 1 < argc) {
            printf("loaded %s: %s\n", argv[i + 1], loaded(argv[i + 1]) ? "yes" : "no");
            i++;
        } else if (strcmp(argv[i], "create") == 0) {
            CLCONTEXT* cp = clcontext_create(NULL, CL_DEVICE_TYPE_ALL, 0, NULL, 0);
            if (!cp) {
                e = clerror();
                printf("create FAILED: %s\n", e ? e : "(no message)");
                failed = 1;
                continue;
            }
            failed |= run_on("created", cp);
            if (clcontext_destroy(cp) != 0) failed = 1;
        } else if (strcmp(argv[i], "busy") == 0) {
            for (size_t j = 0; j < sizeof ctx / sizeof ctx[0]; j++)
                if (ctx[j].cp) failed |= leave_busy(ctx[j].name, ctx[j].cp);
        }
    }
    if (argc > 3 && strcmp(argv[1], "barrier") == 0) {
        fflush(stdout);
        char path[4096];
        snprintf(path, sizeof path, "%s/arrived.%ld", argv[3], (long)getpid());
        FILE* f = fopen(path, "w");
        if (f) fclose(f);
        const int want = atoi(argv[2]);
        struct timespec ts = {0, 10 * 1000 * 1000};
        for (int waited = 0; waited < 6000; waited++) {
            int n = 0;
            DIR* d = opendir(argv[3]);
            for (struct dirent* e; d && (e = readdir(d));) n += strncmp(e->d_name, "arrived.", 8) == 0;
            if (d) closedir(d);
            if (n >= want) break;
            nanosleep(&ts, NULL);
        }
    }
    fflush(stdout);
    return failed;
}
