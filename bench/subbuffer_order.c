/* SPDX-License-Identifier: MIT */
/* subbuffer_order.c: which orders of launching kernels with sub-buffers of
 * one buffer, and of releasing those sub-buffers, a driver survives.  Raw
 * OpenCL, without libstdcl (the Makefile links OpenCL alone): BENCHMARKS.md
 * Table 10.3 gives what NVIDIA's OpenCL does, and why libstdcl releases an
 * allocation's sub-buffers newest first.
 *
 * A case is two words: the launches, then the releases.  A, B and C are
 * sub-buffers at 512, 1024 and 1536 bytes into one 8 KiB buffer, each made at
 * its first launch; P launches with the buffer itself.  After a clFinish the
 * named sub-buffers are released in the order given, then the buffer.  Each
 * case runs in a child process, so one that crashes the driver is reported
 * and the others still run.
 *
 *   subbuffer_order [-r RUNS] [LAUNCHES RELEASES ...]
 *
 * Without cases it runs a built-in list.  It prints a line per case,
 * "launched AB released AB: 0 of 3 runs ended cleanly (signal 11)", and
 * uses the first GPU, else the first device of the first platform.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char* src =
    "__kernel void axpi(__global const int* a, __global int* c, int k) {"
    " int i = get_global_id(0); c[i] = a[i] * k + i; }";

/* One case in this process; exit status 0 when every call succeeded. */
static int run_case(const char* launches, const char* releases)
{
    cl_platform_id pl[8];
    cl_uint np = 0;
    cl_device_id dev = NULL;
    if (clGetPlatformIDs(8, pl, &np) != CL_SUCCESS || np == 0) return 2;
    for (cl_uint i = 0; i < np && !dev; i++)
        if (clGetDeviceIDs(pl[i], CL_DEVICE_TYPE_GPU, 1, &dev, NULL) != CL_SUCCESS) dev = NULL;
    if (!dev && clGetDeviceIDs(pl[0], CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) return 2;
    cl_int e = CL_SUCCESS, bad = 0;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
    if (e != CL_SUCCESS) return 2;
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &e);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
    if (e != CL_SUCCESS || clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS) return 2;
    cl_kernel k = clCreateKernel(prog, "axpi", &e);
    if (e != CL_SUCCESS) return 2;
    const size_t n = 8192, g = 64;
    int kk = 3;
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n, NULL, &e);
    bad |= e;
    cl_mem out = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n, NULL, &e);
    bad |= e;
    cl_mem sub[3] = {NULL, NULL, NULL};
    for (const char* c = launches; *c && !bad; c++) {
        cl_mem m = buf;
        if (*c != 'P') {
            int i = *c - 'A';
            if (!sub[i]) {
                cl_buffer_region r = {512 * (size_t)(i + 1), n - 512 * (size_t)(i + 1)};
                sub[i] = clCreateSubBuffer(buf, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &r, &e);
                bad |= e;
            }
            m = sub[i];
        }
        bad |= clSetKernelArg(k, 0, sizeof m, &m);
        bad |= clSetKernelArg(k, 1, sizeof out, &out);
        bad |= clSetKernelArg(k, 2, sizeof kk, &kk);
        bad |= clEnqueueNDRangeKernel(q, k, 1, NULL, &g, &g, 0, NULL, NULL);
    }
    bad |= clFinish(q);
    for (const char* c = releases; *c; c++)
        if (sub[*c - 'A']) bad |= clReleaseMemObject(sub[*c - 'A']);
    bad |= clReleaseMemObject(buf);
    clReleaseMemObject(out);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    return bad ? 1 : 0;
}

/* Whether a case's words are well formed: launches of A-C and P; each
 * launched sub-buffer released exactly once. */
static int valid(const char* launches, const char* releases)
{
    int used[3] = {0, 0, 0}, freed[3] = {0, 0, 0};
    for (const char* c = launches; *c; c++) {
        if (*c == 'P') continue;
        if (*c < 'A' || *c > 'C') return 0;
        used[*c - 'A'] = 1;
    }
    for (const char* c = releases; *c; c++) {
        if (*c < 'A' || *c > 'C' || !used[*c - 'A'] || freed[*c - 'A']++) return 0;
    }
    for (int i = 0; i < 3; i++)
        if (used[i] != freed[i]) return 0;
    return *launches != '\0';
}

int main(int argc, char** argv)
{
    static const char* builtin[] = {"AB", "AB", "AB", "BA", "BA", "BA", "BA", "AB", "ABA", "AB", "ABA", "BA",
                                    "BAB", "AB", "BAB", "BA", "ABC", "CBA", "ABCA", "ACB", "CABC", "BAC"};
    int runs = 3, first = 1;
    if (argc > 2 && strcmp(argv[1], "-r") == 0) {
        runs = atoi(argv[2]);
        first = 3;
    }
    const char** cases = (const char**)(argv + first);
    int ncases = argc - first;
    if (runs < 1 || ncases % 2) {
        fprintf(stderr, "usage: subbuffer_order [-r RUNS] [LAUNCHES RELEASES ...]\n");
        return 2;
    }
    if (ncases == 0) {
        cases = builtin;
        ncases = (int)(sizeof builtin / sizeof builtin[0]);
    }
    for (int i = 0; i < ncases; i += 2) {
        if (!valid(cases[i], cases[i + 1])) {
            fprintf(stderr, "subbuffer_order: case '%s %s': launches are letters A-C or P, releases each launched "
                            "sub-buffer once\n", cases[i], cases[i + 1]);
            return 2;
        }
    }
    int all_clean = 1;
    for (int i = 0; i < ncases; i += 2) {
        int clean = 0, sig = 0, failed = 0;
        for (int r = 0; r < runs; r++) {
            fflush(stdout);
            pid_t pid = fork();
            if (pid < 0) {
                perror("subbuffer_order: fork");
                return 2;
            }
            if (pid == 0) _exit(run_case(cases[i], cases[i + 1]));
            int st = 0;
            if (waitpid(pid, &st, 0) < 0) return 2;
            if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
                clean++;
            else if (WIFSIGNALED(st))
                sig = WTERMSIG(st);
            else
                failed = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
        }
        printf("launched %-5s released %-4s %d of %d runs ended cleanly", cases[i], cases[i + 1], clean, runs);
        if (sig) printf(" (signal %d)", sig);
        if (failed == 2) printf(" (no device, or the build failed)");
        if (failed == 1) printf(" (an OpenCL call failed)");
        printf("\n");
        if (clean != runs) all_clean = 0;
    }
    return all_clean ? 0 : 1;
}
