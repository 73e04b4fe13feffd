/* SPDX-License-Identifier: MIT */
/* helper_oclgrind.c: runs on the Oclgrind simulator as stdgpu (test_gpu_
 * oclgrind.c sets OCL_ICD_VENDORS, STDGPU_PLATFORM_NAME=oclgrind and
 * OCLGRIND_LOG).  argv[1] is the kernel file (tests/kernels/oclgrind.cl).
 * Prints "stdcpu=N stdgpu=N stddev=N", the platform of stdgpu, then
 * "oclgrind ok" when both kernels gave the right results on every device of
 * stdgpu.  Exit status: 0 ok, 1 wrong results or a failed call, 2 no stdgpu.
 * Oclgrind is ~1000x slower than PoCL: N stays small. */
#include <stdio.h>
#include <string.h>

#include <stdcl.h>

enum { N = 256, L = 32 };

static int failed(const char* what)
{
    const char* e = clerror();
    printf("FAILED: %s: %s\n", what, e ? e : "(wrong results)");
    return 1;
}

int main(int argc, char** argv)
{
    printf("stdcpu=%u stdgpu=%u stddev=%u\n", clgetndev(stdcpu), clgetndev(stdgpu), clgetndev(stddev));
    if (!stdgpu || argc < 2) {
        printf("FAILED: no stdgpu\n");
        return 2;
    }
    char name[256] = "";
    clGetPlatformInfo(stdcl_platform(stdgpu), CL_PLATFORM_NAME, sizeof name, name, NULL);
    printf("stdgpu platform: %s\n", name);

    void* h = clopen(stdgpu, argv[1], CLLD_NOW);
    if (!h) return failed("clopen");
    cl_kernel vadd = clsym(stdgpu, h, "vadd", 0);
    cl_kernel gsum = clsym(stdgpu, h, "group_sum", 0);
    if (!vadd || !gsum) return failed("clsym");

    float* a = (float*)clmalloc(stdgpu, N * sizeof(float), CL_MEM_RO);
    float* b = (float*)clmalloc(stdgpu, N * sizeof(float), CL_MEM_RO);
    float* c = (float*)clmalloc(stdgpu, N * sizeof(float), CL_MEM_WO);
    int* in = (int*)clmalloc(stdgpu, N * sizeof(int), 0);
    int* out = (int*)clmalloc(stdgpu, N / L * sizeof(int), 0);
    if (!a || !b || !c || !in || !out) return failed("clmalloc");

    for (unsigned d = 0; d < clgetndev(stdgpu); d++) {
        for (int i = 0; i < N; i++) {
            a[i] = (float)i;
            b[i] = 0.5f * (float)i + (float)d;
            c[i] = -1.0f;
            in[i] = i * 3 + (int)d;
        }
        for (int g = 0; g < N / L; g++) out[g] = -1;
        clndrange_t ndr = clndrange_init1d(0, N, L);
        if (!clmsync(stdgpu, d, a, CL_MEM_DEVICE | CL_EVENT_NOWAIT) ||
            !clmsync(stdgpu, d, b, CL_MEM_DEVICE | CL_EVENT_NOWAIT) ||
            !clmsync(stdgpu, d, in, CL_MEM_DEVICE | CL_EVENT_NOWAIT))
            return failed("clmsync to the device");
        if (!clforka(stdgpu, d, vadd, &ndr, CL_EVENT_NOWAIT, a, b, c)) return failed("clforka(vadd)");
        if (clarg_set_global(stdgpu, gsum, 0, in) || clarg_set_global(stdgpu, gsum, 1, out) ||
            clarg_set_local(stdgpu, gsum, 2, L * sizeof(int)))
            return failed("clarg_set");
        if (!clfork(stdgpu, d, gsum, &ndr, CL_EVENT_NOWAIT)) return failed("clfork(group_sum)");
        if (!clmsync(stdgpu, d, c, CL_MEM_HOST | CL_EVENT_NOWAIT) ||
            !clmsync(stdgpu, d, out, CL_MEM_HOST | CL_EVENT_NOWAIT))
            return failed("clmsync to the host");
        if (stdcl_wait(stdgpu, d, CL_ALL_EVENT) != 0) return failed("clwait");
        for (int i = 0; i < N; i++)
            if (c[i] != 1.5f * (float)i + (float)d) {
                printf("FAILED: device %u: c[%d] = %f\n", d, i, c[i]);
                return 1;
            }
        for (int g = 0; g < N / L; g++) {
            int want = 0;
            for (int i = g * L; i < (g + 1) * L; i++) want += i * 3 + (int)d;
            if (out[g] != want) {
                printf("FAILED: device %u: out[%d] = %d, want %d\n", d, g, out[g], want);
                return 1;
            }
        }
    }
    clfree(a);
    clfree(b);
    clfree(c);
    clfree(in);
    clfree(out);
    clclose(stdgpu, h);
    printf("oclgrind ok\n");
    return 0;
}
