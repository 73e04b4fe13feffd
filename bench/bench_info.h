/* SPDX-License-Identifier: MIT */
/* bench_info.h: the header lines of bench_memory and bench_startup: the
 * command line, the environment variables that steer libstdcl and the OpenCL
 * drivers, the machine, the load average and a context's platform and
 * devices; and the benchmarks' stop at a failed call and their clock.  Header
 * only; include it after <stdcl.h> and with _GNU_SOURCE. */
#ifndef BENCH_INFO_H
#define BENCH_INFO_H

#include <stdcl.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern char** environ;

/* "<prog>: <what> failed: <clerror()>" on standard error, then exit status 1:
 * how the benchmarks stop at a call that failed. */
static inline void bench_die(const char* prog, const char* what)
{
    const char* e = clerror();
    fprintf(stderr, "%s: %s failed%s%s\n", prog, what, e ? ": " : "", e ? e : "");
    exit(1);
}

/* The monotonic clock, in milliseconds. */
static inline double bench_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* The value of `key` in the first line of `path` that starts with it
 * ("model name" in /proc/cpuinfo, "PRETTY_NAME=" in /etc/os-release), quotes
 * and blanks stripped; "" when absent. */
static inline void bench_first_line_of(const char* path, const char* key, char* out, size_t n)
{
    FILE* f = fopen(path, "r");
    char line[512];
    out[0] = 0;
    if (!f) return;
    size_t kl = strlen(key);
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, kl) == 0) {
            char* v = strchr(line, key[kl - 1] == '=' ? '=' : ':');
            if (!v) continue;
            ++v;
            while (*v == ' ' || *v == '\t' || *v == '"') ++v;
            size_t l = strlen(v);
            while (l && (v[l - 1] == '\n' || v[l - 1] == '"' || v[l - 1] == ' ')) v[--l] = 0;
            snprintf(out, n, "%s", v);
            break;
        }
    }
    fclose(f);
}

/* The first line of /proc/loadavg, or "unknown". */
static inline const char* bench_loadavg(void)
{
    static char buf[64];
    FILE* f = fopen("/proc/loadavg", "r");
    buf[0] = 0;
    if (f) {
        if (fgets(buf, sizeof buf, f)) buf[strcspn(buf, "\n")] = 0;
        fclose(f);
    }
    return buf[0] ? buf : "unknown";
}

/* "command:", the arguments as given (those with blanks or quotes in single
 * quotes), then "environment:", every variable that libstdcl or a driver
 * reads and that is set (STD*, POCL_*, CUDA_*, GPU_*, OCL_*, OPENCL_*). */
static inline void bench_print_command(int argc, char** argv)
{
    printf("command:  ");
    for (int i = 0; i < argc; ++i) {
        const char* a = argv[i];
        int quote = a[0] == 0 || strpbrk(a, " \t\"'$\\*?;&|<>()") != NULL;
        printf(i ? " %s%s%s" : "%s%s%s", quote ? "'" : "", a, quote ? "'" : "");
    }
    printf("\nenvironment:");
    static const char* prefixes[] = {"STD", "POCL_", "CUDA_", "GPU_", "OCL_", "OPENCL_"};
    int any = 0;
    for (char** e = environ; e && *e; ++e)
        for (size_t k = 0; k < sizeof prefixes / sizeof *prefixes; ++k)
            if (strncmp(*e, prefixes[k], strlen(prefixes[k])) == 0) {
                printf(" %s", *e);
                any = 1;
                break;
            }
    printf("%s\n", any ? "" : " (no STD*, POCL_*, CUDA_*, GPU_*, OCL_* or OPENCL_* variable set)");
}

/* "<prog>: libstdcl <version> (header <version>), <date>", the machine line
 * and the load line. */
static inline void bench_print_machine(const char* prog)
{
    char cpu[256], os[256], host[128] = "";
    bench_first_line_of("/proc/cpuinfo", "model name", cpu, sizeof cpu);
    bench_first_line_of("/etc/os-release", "PRETTY_NAME=", os, sizeof os);
    gethostname(host, sizeof host - 1);
    time_t t = time(NULL);
    char date[64];
    strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", localtime(&t));
    printf("%s: libstdcl %s (header %s), %s\n", prog, stdcl_version(), STDCL_VERSION_STRING, date);
    printf("machine:  %s, %ld online CPU(s), %s (%s)\n", cpu[0] ? cpu : "unknown CPU", sysconf(_SC_NPROCESSORS_ONLN),
           os[0] ? os : "unknown OS", host);
    printf("load:     %s (/proc/loadavg; other processes skew absolute figures)\n", bench_loadavg());
}

/* The context's platform and each of its devices, one line each, under
 * `label` ("context", "stddev", ...); "none" for a NULL context. */
static inline void bench_print_context(const char* label, CLCONTEXT* cp)
{
    if (!cp) {
        printf("%-9s none (no such devices, or disabled by the environment)\n", label);
        return;
    }
    char pname[256] = "", pver[256] = "";
    clGetPlatformInfo(stdcl_platform(cp), CL_PLATFORM_NAME, sizeof pname, pname, NULL);
    clGetPlatformInfo(stdcl_platform(cp), CL_PLATFORM_VERSION, sizeof pver, pver, NULL);
    printf("%-9s platform %s (%s), %u device(s)\n", label, pname, pver, clgetndev(cp));
    for (unsigned i = 0; i < clgetndev(cp); ++i) {
        char dname[256] = "", dver[256] = "", drv[256] = "";
        cl_device_id d = stdcl_device(cp, i);
        clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof dname, dname, NULL);
        clGetDeviceInfo(d, CL_DEVICE_VERSION, sizeof dver, dver, NULL);
        clGetDeviceInfo(d, CL_DRIVER_VERSION, sizeof drv, drv, NULL);
        printf("          device %u: %s (%s, driver %s)\n", i, dname, dver, drv);
    }
    const char* why = stdcl_context_why(cp);
    printf("          why: %s\n", why ? why : "unknown");
}

#endif /* BENCH_INFO_H */
