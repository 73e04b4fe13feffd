/* SPDX-License-Identifier: MIT */
/* helper_compat_sweep.c: the calling pattern of COPRTHR's test_stdcl programs
 * (not in this tree: see tests/compat/README), in a program of our own
 * written to the STDCL 1.6 calls, for test_compat.
 *
 * Kernel k_<a>_<b> takes a inputs x0.. and b outputs y0.. (every a, b >= 1
 * with a + b <= 8 global pointers) and writes
 *     y_j[e] = (j + 1) * sum_i (i + 1) * x_i[e] + j,
 * with the inputs x_i[e] = e + 1000 i + 100000 d + 1000000 f for device d
 * and form f (so no result can stand in for that of another launch).  Each
 * launch: the inputs to the device (clmsync CL_MEM_DEVICE | CL_EVENT_NOWAIT),
 * the kernel (CL_EVENT_NOWAIT), the outputs back (CL_MEM_HOST |
 * CL_EVENT_NOWAIT), then clwait(CL_KERNEL_EVENT | CL_MEM_EVENT).  The
 * outputs are set to -1 on the host before each launch.  Forms:
 *   0 "fork":  on each device of stdcpu in turn, one set of allocations,
 *              clarg_set_global for every argument, then clfork;
 *   1 "forka": the same with clforka;
 *   2 "ndev":  every device at once, an allocation set per device: the
 *              transfers to every device, then one kernel object bound and
 *              launched on each device in turn before any is waited for.
 *
 * stdout: one line per launch and output,
 *     "<form> dev <d> k_<a>_<b> y<j> sum <S> bad <B>"
 * S: the sum of y_j's N elements; B: how many differ from the formula.
 * Exit status 0, or 1 when a call fails (its clerror() on stderr). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdcl.h>

enum { N = 1000, MAXARG = 8, MAXDEV = 4 };

static const char* const k_form[] = {"fork", "forka", "ndev"};

/* All the kernels, in one program. */
static char* sweep_source(void)
{
    size_t cap = 64 * 1024, n = 0;
    char* s = (char*)malloc(cap);
    if (!s) return NULL;
    for (int a = 1; a < MAXARG; a++)
        for (int b = 1; a + b <= MAXARG; b++) {
            n += snprintf(s + n, cap - n, "__kernel void k_%d_%d(", a, b);
            for (int i = 0; i < a; i++) n += snprintf(s + n, cap - n, "__global const int* x%d, ", i);
            for (int j = 0; j < b; j++) n += snprintf(s + n, cap - n, "__global int* y%d%s", j, j + 1 < b ? ", " : "");
            n += snprintf(s + n, cap - n, ")\n{\n    int e = get_global_id(0), t = 0;\n");
            for (int i = 0; i < a; i++) n += snprintf(s + n, cap - n, "    t += %d * x%d[e];\n", i + 1, i);
            for (int j = 0; j < b; j++) n += snprintf(s + n, cap - n, "    y%d[e] = %d * t + %d;\n", j, j + 1, j);
            n += snprintf(s + n, cap - n, "}\n");
        }
    return s;
}

static int input(int f, unsigned d, int i, int e) { return e + 1000 * i + 100000 * (int)d + 1000000 * f; }

static void die(const char* what) __attribute__((noreturn));
static void die(const char* what)
{
    const char* e = clerror();
    fprintf(stderr, "helper_compat_sweep: %s: %s\n", what, e ? e : "(no message)");
    exit(1);
}

/* The kernel k_<a>_<b> of the program h (a inputs, b outputs). */
static cl_kernel sweep_kernel(void* h, int a, int b)
{
    char name[32];
    snprintf(name, sizeof name, "k_%d_%d", a, b);
    cl_kernel k = clsym(stdcpu, h, name, CLLD_NOW);
    if (!k) die("clsym");
    return k;
}

/* clforka with the a + b pointers of p. */
static cl_event forka(unsigned d, cl_kernel k, clndrange_t* ndr, int n, int** p)
{
    const int f = CL_EVENT_NOWAIT;
    switch (n) {
    case 2: return clforka(stdcpu, d, k, ndr, f, p[0], p[1]);
    case 3: return clforka(stdcpu, d, k, ndr, f, p[0], p[1], p[2]);
    case 4: return clforka(stdcpu, d, k, ndr, f, p[0], p[1], p[2], p[3]);
    case 5: return clforka(stdcpu, d, k, ndr, f, p[0], p[1], p[2], p[3], p[4]);
    case 6: return clforka(stdcpu, d, k, ndr, f, p[0], p[1], p[2], p[3], p[4], p[5]);
    case 7: return clforka(stdcpu, d, k, ndr, f, p[0], p[1], p[2], p[3], p[4], p[5], p[6]);
    case 8: return clforka(stdcpu, d, k, ndr, f, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
    }
    return NULL;
}

/* Host inputs for (f, d), outputs -1, inputs sent to device d. */
static void prepare(int f, unsigned d, int a, int b, int** p)
{
    for (int e = 0; e < N; e++) {
        for (int i = 0; i < a; i++) p[i][e] = input(f, d, i, e);
        for (int j = 0; j < b; j++) p[a + j][e] = -1;
    }
    for (int i = 0; i < a; i++)
        if (!clmsync(stdcpu, d, p[i], CL_MEM_DEVICE | CL_EVENT_NOWAIT)) die("clmsync to the device");
}

static void fetch(unsigned d, int a, int b, int** p)
{
    for (int j = 0; j < b; j++)
        if (!clmsync(stdcpu, d, p[a + j], CL_MEM_HOST | CL_EVENT_NOWAIT)) die("clmsync to the host");
}

static void report(int f, unsigned d, int a, int b, int** p)
{
    for (int j = 0; j < b; j++) {
        long long sum = 0;
        int bad = 0;
        for (int e = 0; e < N; e++) {
            int t = 0;
            for (int i = 0; i < a; i++) t += (i + 1) * input(f, d, i, e);
            sum += p[a + j][e];
            bad += p[a + j][e] != (j + 1) * t + j;
        }
        printf("%s dev %u k_%d_%d y%d sum %lld bad %d\n", k_form[f], d, a, b, j, sum, bad);
    }
}

int main(void)
{
    if (!stdcpu) die("stdcpu is NULL");
    unsigned ndev = clgetndev(stdcpu);
    if (ndev > MAXDEV) ndev = MAXDEV;
    char* src = sweep_source();
    void* h = src ? clsopen(stdcpu, src, CLLD_NOW) : NULL;
    if (!h) die("clsopen");
    int* mem[MAXDEV][MAXARG];
    for (unsigned d = 0; d < ndev; d++)
        for (int i = 0; i < MAXARG; i++)
            if (!(mem[d][i] = (int*)clmalloc(stdcpu, N * sizeof(int), 0))) die("clmalloc");
    clndrange_t ndr = clndrange_init1d(0, N, 8);

    for (int f = 0; f < 2; f++)
        for (unsigned d = 0; d < ndev; d++)
            for (int a = 1; a < MAXARG; a++)
                for (int b = 1; a + b <= MAXARG; b++) {
                    cl_kernel k = sweep_kernel(h, a, b);
                    int** p = mem[0];
                    prepare(f, d, a, b, p);
                    if (f == 0) {
                        for (int i = 0; i < a + b; i++)
                            if (clarg_set_global(stdcpu, k, i, p[i]) != 0) die("clarg_set_global");
                        if (!clfork(stdcpu, d, k, &ndr, CL_EVENT_NOWAIT)) die("clfork");
                    } else if (!forka(d, k, &ndr, a + b, p)) {
                        die("clforka");
                    }
                    fetch(d, a, b, p);
                    if (!clwait(stdcpu, d, CL_KERNEL_EVENT | CL_MEM_EVENT)) die("clwait");
                    report(f, d, a, b, p);
                }

    for (int a = 1; a < MAXARG; a++)
        for (int b = 1; a + b <= MAXARG; b++) {
            cl_kernel k = sweep_kernel(h, a, b);
            for (unsigned d = 0; d < ndev; d++) prepare(2, d, a, b, mem[d]);
            for (unsigned d = 0; d < ndev; d++) {
                for (int i = 0; i < a + b; i++)
                    if (clarg_set_global(stdcpu, k, i, mem[d][i]) != 0) die("clarg_set_global");
                if (!clfork(stdcpu, d, k, &ndr, CL_EVENT_NOWAIT)) die("clfork");
            }
            for (unsigned d = 0; d < ndev; d++) fetch(d, a, b, mem[d]);
            for (unsigned d = 0; d < ndev; d++)
                if (!clwait(stdcpu, d, CL_KERNEL_EVENT | CL_MEM_EVENT)) die("clwait");
            for (unsigned d = 0; d < ndev; d++) report(2, d, a, b, mem[d]);
        }

    for (unsigned d = 0; d < ndev; d++)
        for (int i = 0; i < MAXARG; i++) clfree(mem[d][i]);
    clclose(stdcpu, h);
    free(src);
    return 0;
}
