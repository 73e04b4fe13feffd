/* SPDX-License-Identifier: MIT */
/* helper_overrun.c: the overrun check mode, for test_memory (run with
 * STDCL_CHECK=1, and STDCL_ZERO_COPY=0 for the device-side zones).
 *
 * Runs each case on device 0 and 1 of stdcpu and prints one line per case:
 * "<case> <devnum>: <return code> <clerror() text>" (or "... ok" when the call
 * succeeded).  Cases: a kernel writing 32 bytes past the end, found by a waited
 * clmsync; the same launched NOWAIT, found by clwait; host code writing 1 byte
 * past the end and 1 byte before the start, found by clfree (which frees the
 * memory anyway); a clean kernel on an allocation that is not a multiple of a
 * page, which must report nothing.  Exit status 0 unless a call failed in a way
 * no case expects. */
#include <stdio.h>
#include <string.h>

#include <stdcl.h>

static const char* k_src = "__kernel void over(__global int* a, int n, int past) {\n"
                           "    int i = get_global_id(0);\n"
                           "    a[i] = i;\n"
                           "    if (i == 0) for (int k = 0; k < past; k++) a[n + k] = -1;\n"
                           "}\n";

enum { N = 1000 }; /* 4000 bytes: not a page */

static void line(const char* what, unsigned d, int rc)
{
    const char* e = clerror();
    if (rc == 0)
        printf("%s %u: ok\n", what, d);
    else
        printf("%s %u: %d %s\n", what, d, rc, e ? e : "(no message)");
}

int main(void)
{
    if (!stdcpu) return 1;
    void* h = clsopen(stdcpu, k_src, CLLD_NOW);
    cl_kernel k = h ? clsym(stdcpu, h, "over", CLLD_NOW) : NULL;
    if (!k) {
        printf("setup: %s\n", clerror());
        return 1;
    }
    clndrange_t ndr = clndrange_init1d(0, N, 8);
    for (unsigned d = 0; d < clgetndev(stdcpu); d++) {
        /* A kernel 32 bytes past the end, found by the waited clmsync after it. */
        int* a = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
        if (!a) return 1;
        clmsync(stdcpu, d, a, CL_MEM_DEVICE | CL_EVENT_WAIT);
        if (!clforka(stdcpu, d, k, &ndr, CL_EVENT_WAIT, a, N, 8)) return 1;
        line("kernel-past-end-clmsync", d, clmsync(stdcpu, d, a, CL_MEM_HOST | CL_EVENT_WAIT) ? 0 : STDCL_EOVERRUN);
        line("after-report-clmsync", d, clmsync(stdcpu, d, a, CL_MEM_HOST | CL_EVENT_WAIT) ? 0 : -1);
        line("values", d, a[N - 1] == N - 1 ? 0 : -1);
        line("clfree-after-report", d, clfree(a));

        /* The same, NOWAIT: found by clwait. */
        a = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
        if (!a) return 1;
        clmsync(stdcpu, d, a, CL_MEM_DEVICE | CL_EVENT_WAIT);
        if (!clforka(stdcpu, d, k, &ndr, CL_EVENT_NOWAIT, a, N, 8)) return 1;
        line("kernel-past-end-clwait", d, stdcl_wait(stdcpu, d, CL_ALL_EVENT));
        line("clfree-after-clwait", d, clfree(a));

        /* Host code past the end and before the start: found by clfree. */
        char* c = (char*)clmalloc(stdcpu, 100, 0);
        if (!c) return 1;
        c[100] = 'x';
        line("host-past-end-clfree", d, clfree(c));
        line("freed-anyway", d, clsizeofmem(c) == 0 ? 0 : -1);
        c = (char*)clmalloc(stdcpu, 100, 0);
        if (!c) return 1;
        c[-1] = 'x';
        line("host-before-start-clfree", d, clfree(c));

        /* A kernel that stays inside: nothing to report. */
        a = (int*)clmalloc(stdcpu, N * sizeof(int), 0);
        if (!a) return 1;
        clmsync(stdcpu, d, a, CL_MEM_DEVICE | CL_EVENT_WAIT);
        int ok = clforka(stdcpu, d, k, &ndr, CL_EVENT_WAIT, a, N, 0) != NULL;
        ok = ok && clmsync(stdcpu, d, a, CL_MEM_HOST | CL_EVENT_WAIT) != NULL;
        ok = ok && stdcl_wait(stdcpu, d, CL_ALL_EVENT) == 0;
        line("clean", d, ok ? clfree(a) : -1);
    }
    clclose(stdcpu, h);
    return 0;
}
