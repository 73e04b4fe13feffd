/* SPDX-License-Identifier: MIT */
/* fault_workload.c: the workload tools/check_faults.sh runs under
 * faultcl_shim.so, which fails one OpenCL call or one allocation of
 * libstdcl's per run.
 *
 *   fault_workload KERNEL_FILE      (tests/faults/fault_kernels.cl)
 *
 * It reaches every OpenCL call the library makes: the load-time setup (it
 * runs under the shim from the start), clopen of a file (compiled and stored
 * in round 1, loaded from the program cache in round 2 when STDCL_CACHE_DIR
 * starts empty), a build that fails (the build log), clsym, three clmallocs,
 * clmsync to both devices, clforka on both, an interior pointer as a kernel
 * argument (two sub-buffers of one buffer), clwait, clmsync back through an interior pointer,
 * clmcopy, clsort, clreduce (of 16 KB, and of 1 MiB, whose value comes back
 * into pinned memory where the waits poll) and clscan (both layouts; over
 * both devices), a foreign command announced on a queue of the workload's own
 * after a NOWAIT upload (clforeign_begin/end) and stdcl_queue's hand-over of
 * a kernel queue, an image allocation synced both ways and read by a kernel, 4096
 * NOWAIT transfers (the event lists are pruned), a launch whose local size
 * libstdcl chooses (clGetKernelWorkGroupInfo), clevent_times of a kept event
 * (without STDCL_PROFILE its "does not profile" error is the expected
 * answer), kernels the program makes itself launched and released, clfree,
 * clclose, and the
 * release of everything at exit.
 *
 * A round that meets a failure checks that the failing call returned its
 * error value and that clerror() names the OpenCL function or the error code
 * injected (for an allocation: says memory), cleans up what it has, and the
 * next round runs: it must succeed and give exact results, or the failure
 * left the library in a bad state.  Round 2 follows a successful round 1 (the
 * injection may come later); a round 3 follows a failed round 2.  A default
 * context NULL at start (a load-time failure) must be explained by the first
 * call given it; the program then exits, as a user's would.
 *
 * Exit status: 0 clean; 10 wrong result (or a failure with nothing injected,
 * or no recovery after the failure); 11 an error without a clerror()
 * message; 12 a message that does not name the injected call; 2 usage. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <stdcl.h>

enum { EXIT_WRONG = 10, EXIT_NOMSG = 11, EXIT_UNNAMED = 12 };
enum { ROUND_OK = 0, ROUND_FAILED = 1, ROUND_WRONG = 2 };
enum { N = 4096, W = 8, H = 8, PRUNE = 4096 };

static int g_exit; /* the worst verdict so far */
static int g_round; /* the round running */
static const char* g_kfile;

static void verdict(int code)
{
    if (g_exit == 0 || (code == EXIT_WRONG && g_exit != EXIT_WRONG)) g_exit = code;
}

/* What the shim injected so far (0 when it is not preloaded). */
static long injected(const char** fn, const char** code)
{
    static long (*query)(const char**, const char**);
    static int looked;
    if (!looked) {
        query = (long (*)(const char**, const char**))dlsym(RTLD_DEFAULT, "faultcl_injected");
        looked = 1;
    }
    *fn = "";
    *code = "";
    return query ? query(fn, code) : 0;
}

/* Does the message name the injected failure? */
static int names_injection(const char* msg, const char* fn, const char* code)
{
    if (*fn && strstr(msg, fn)) return 1;
    if (*code && strstr(msg, code)) return 1;
    if (!*code) /* an allocation */
        return strstr(msg, "memory") || strstr(msg, "ENOMEM") || strstr(msg, "bad_alloc");
    return 0;
}

/* A libstdcl call failed: check its message against what was injected.
 * Returns ROUND_FAILED. */
static int failed(const char* call)
{
    const char* msg = clerror();
    const char *fn, *code;
    long n = injected(&fn, &code);
    if (n == 0) {
        fprintf(stderr, "fault_workload: round %d: %s failed with nothing injected: %s\n", g_round, call,
                msg ? msg : "(no message)");
        verdict(EXIT_WRONG);
    } else if (!msg) {
        fprintf(stderr, "fault_workload: round %d: %s failed (%s %s injected) and clerror() is NULL\n", g_round, call,
                fn, code);
        verdict(EXIT_NOMSG);
    } else if (!names_injection(msg, fn, code)) {
        fprintf(stderr, "fault_workload: round %d: %s failed (%s %s injected); the message does not name it: %s\n",
                g_round, call, fn, code, msg);
        verdict(EXIT_UNNAMED);
    } else {
        fprintf(stderr, "fault_workload: round %d: %s failed as expected: %s\n", g_round, call, msg);
    }
    return ROUND_FAILED;
}

static int wrong(const char* what, long i, double got, double want)
{
    fprintf(stderr, "fault_workload: round %d: wrong result: %s[%ld] = %g, want %g\n", g_round, what, i, got, want);
    verdict(EXIT_WRONG);
    return ROUND_WRONG;
}

/* One round on cp (two devices).  Every object it makes is released before
 * it returns, whatever happened. */
static int run_round(CLCONTEXT* cp)
{
    int rc = ROUND_OK;
    void *h = NULL, *bad = NULL;
    float *a = NULL, *b = NULL, *c = NULL, *dup = NULL, *tick = NULL;
    int* keys = NULL;
    cl_float4 *img = NULL, *out = NULL;
    cl_kernel k_axpb, k_scale, k_image, k_noop;
    const float s = 3.0f, two = 2.0f, one = 1.0f;

    if (!(h = clopen(cp, g_kfile, CLLD_NOW))) {
        rc = failed("clopen");
        goto done;
    }
    /* A build that fails: NULL, with the compiler's log (or the injected failure). */
    bad = clsopen(cp, "__kernel void fk_bad(__global int* x) { x[0] = fk_undeclared; }\n", CLLD_NOW);
    if (bad) {
        fprintf(stderr, "fault_workload: round %d: a kernel with an error was built\n", g_round);
        verdict(EXIT_WRONG);
        rc = ROUND_WRONG;
        goto done;
    } else {
        const char* msg = clerror();
        const char *fn, *code;
        long before = injected(&fn, &code);
        if (!msg) {
            fprintf(stderr, "fault_workload: round %d: a failed build left no message\n", g_round);
            verdict(before ? EXIT_NOMSG : EXIT_WRONG);
        } else if (!strstr(msg, "fk_undeclared") && !(before && names_injection(msg, fn, code))) {
            fprintf(stderr, "fault_workload: round %d: a failed build's message has no compiler log%s: %s\n", g_round,
                    before ? " and does not name the injected call" : "", msg);
            verdict(before ? EXIT_UNNAMED : EXIT_WRONG);
        }
    }
    if (!(k_axpb = clsym(cp, h, "fk_axpb", CLLD_NOW))) {
        rc = failed("clsym(fk_axpb)");
        goto done;
    }
    if (!(k_scale = clsym(cp, h, "fk_scale", CLLD_NOW))) {
        rc = failed("clsym(fk_scale)");
        goto done;
    }
    if (!(k_noop = clsym(cp, h, "fk_noop", CLLD_NOW))) {
        rc = failed("clsym(fk_noop)");
        goto done;
    }
    if (!(k_image = clsym(cp, h, "fk_image", CLLD_NOW))) {
        rc = failed("clsym(fk_image)");
        goto done;
    }

    if (!(a = (float*)clmalloc(cp, N * sizeof(float), 0))) {
        rc = failed("clmalloc(a)");
        goto done;
    }
    if (!(b = (float*)clmalloc(cp, N * sizeof(float), CL_MEM_RO))) {
        rc = failed("clmalloc(b)");
        goto done;
    }
    if (!(c = (float*)clmalloc(cp, N * sizeof(float), 0))) {
        rc = failed("clmalloc(c)");
        goto done;
    }
    for (int i = 0; i < N; i++) a[i] = (float)i, b[i] = (float)(2 * i), c[i] = -1.0f;

    /* c = 3a + b: device d computes half d. */
    for (unsigned d = 0; d < 2; d++) {
        clndrange_t ndr = clndrange_init1d(d * (N / 2), N / 2, 64);
        if (!clmsync(cp, d, a, CL_MEM_DEVICE | CL_EVENT_NOWAIT)) {
            rc = failed("clmsync(a, device)");
            goto done;
        }
        if (!clmsync(cp, d, b, CL_MEM_DEVICE | CL_EVENT_NOWAIT)) {
            rc = failed("clmsync(b, device)");
            goto done;
        }
        if (!clforka(cp, d, k_axpb, &ndr, CL_EVENT_NOWAIT, a, b, c, s)) {
            rc = failed("clforka(fk_axpb)");
            goto done;
        }
    }
    for (unsigned d = 0; d < 2; d++)
        if (stdcl_wait(cp, d, CL_ALL_EVENT) != 0) {
            rc = failed("clwait");
            goto done;
        }
    /* Device 1 doubles its half through an interior pointer (a sub-buffer). */
    {
        clndrange_t ndr = clndrange_init1d(0, N / 2, 64);
        if (!clforka(cp, 1, k_scale, &ndr, CL_EVENT_NOWAIT, c + N / 2, two)) {
            rc = failed("clforka(fk_scale)");
            goto done;
        }
        /* A second interior pointer (a newer sub-buffer of the same buffer), scaled by
         * one: clfree releases it first and waits until it is destroyed. */
        size_t al = stdcl_mem_align(cp) / sizeof(float);
        clndrange_t one_group = clndrange_init1d(0, 64, 64);
        if (al == 0 || al + 64 > N / 2) {
            rc = failed("stdcl_mem_align");
            goto done;
        }
        if (!clforka(cp, 1, k_scale, &one_group, CL_EVENT_NOWAIT, c + N / 2 + al, one)) {
            rc = failed("clforka(fk_scale, second)");
            goto done;
        }
    }
    /* Back: device 0's copy whole, then device 1's half from the interior pointer. */
    if (!clmsync(cp, 0, c, CL_MEM_HOST | CL_EVENT_WAIT)) {
        rc = failed("clmsync(c, host)");
        goto done;
    }
    if (!clmsync(cp, 1, c + N / 2, CL_MEM_HOST | CL_EVENT_NOWAIT)) {
        rc = failed("clmsync(c + N/2, host)");
        goto done;
    }
    if (stdcl_wait(cp, 1, CL_ALL_EVENT) != 0) {
        rc = failed("clwait");
        goto done;
    }
    for (int i = 0; i < N; i++) {
        float want = (float)(5 * i) * (i < N / 2 ? 1.0f : 2.0f);
        if (c[i] != want) {
            rc = wrong("c", i, c[i], want);
            goto done;
        }
    }

    /* clmcopy a -> dup on device 0, then back to the host. */
    if (!(dup = (float*)clmalloc(cp, N * sizeof(float), 0))) {
        rc = failed("clmalloc(dup)");
        goto done;
    }
    for (int i = 0; i < N; i++) dup[i] = -1.0f;
    if (!clmsync(cp, 0, dup, CL_MEM_DEVICE | CL_EVENT_WAIT)) {
        rc = failed("clmsync(dup, device)");
        goto done;
    }
    if (!clmcopy(cp, 0, a, dup, CL_EVENT_NOWAIT)) {
        rc = failed("clmcopy");
        goto done;
    }
    if (!clmsync(cp, 0, dup, CL_MEM_HOST | CL_EVENT_WAIT)) {
        rc = failed("clmsync(dup, host)");
        goto done;
    }
    /* A foreign command on a queue of the workload's own on device 1, after a
     * NOWAIT upload there (a barrier waits for it); then stdcl_queue hands
     * device 1's kernel queue over, and dup comes back unchanged. */
    if (!clmsync(cp, 1, dup, CL_MEM_DEVICE | CL_EVENT_NOWAIT)) {
        rc = failed("clmsync(dup, device 1)");
        goto done;
    }
    {
        cl_int qerr;
        cl_command_queue q = clCreateCommandQueue(stdcl_clcontext(cp), stdcl_device(cp, 1), 0, &qerr);
        struct clforeign_use use = {dup, CL_MEM_RW, 0};
        CLFOREIGN* f = q ? clforeign_begin(cp, 1, q, &use, 1, 0) : NULL;
        int frc = ROUND_OK;
        if (!f) frc = q ? failed("clforeign_begin") : wrong("clCreateCommandQueue", 0, qerr, 0);
        if (f && clforeign_end(f, 0, NULL) != 0) {
            frc = failed("clforeign_end");
            if (clforeign_end(f, 0, NULL) != 0) frc = wrong("clforeign_end again", 0, 1, 0);
        }
        if (q) clReleaseCommandQueue(q);
        if (frc != ROUND_OK) {
            rc = frc;
            goto done;
        }
    }
    if (!stdcl_queue(cp, 1)) {
        rc = failed("stdcl_queue");
        goto done;
    }
    if (!clmsync(cp, 1, dup, CL_MEM_HOST | CL_EVENT_WAIT)) {
        rc = failed("clmsync(dup, host, device 1)");
        goto done;
    }
    if (stdcl_wait(cp, 0, CL_ALL_EVENT) != 0) {
        rc = failed("clwait");
        goto done;
    }
    /* STDCL 1.6's clwait with nothing pending: a completed user event. */
    if (!clwait(cp, 0, CL_ALL_EVENT)) {
        rc = failed("clwait (cl_event)");
        goto done;
    }
    for (int i = 0; i < N; i++)
        if (dup[i] != (float)i) {
            rc = wrong("dup", i, dup[i], i);
            goto done;
        }

    /* clsort, clreduce and clscan on device 1: N keys N..1 sorted to 1..N,
     * summed, scanned in place, brought back. */
    if (!(keys = (int*)clmalloc(cp, N * sizeof(int), 0))) {
        rc = failed("clmalloc(keys)");
        goto done;
    }
    for (int i = 0; i < N; i++) keys[i] = N - i;
    if (!clmsync(cp, 1, keys, CL_MEM_DEVICE | CL_EVENT_WAIT)) {
        rc = failed("clmsync(keys, device)");
        goto done;
    }
    /* clsort with the GPU kernels (their digit counts cleared with
     * clEnqueueFillBuffer in round 1 and after a failure, else left zero by
     * the last pass; each pass placed by a look-back), waited for: the
     * environment changes only while no command runs (PoCL's threads read it).
     * Then with the CPU kernels, NOWAIT: the sorted keys stay 1..N. */
    for (int gpu = 1; gpu >= 0; gpu--) {
        if (gpu) setenv("STDCL_PRIMS_LAYOUT", "gpu", 1);
        int sort_rc = clsort(cp, 1, keys, N, CL_REDUCE_INT, gpu ? 0 : CL_EVENT_NOWAIT);
        if (gpu) unsetenv("STDCL_PRIMS_LAYOUT");
        if (sort_rc != 0) {
            rc = failed(gpu ? "clsort (GPU kernels)" : "clsort");
            goto done;
        }
    }
    int ksum = 0;
    if (clreduce(cp, 1, keys, N, CL_REDUCE_INT, CL_REDUCE_SUM, &ksum) != 0) {
        rc = failed("clreduce");
        goto done;
    }
    if (ksum != N * (N + 1) / 2) {
        rc = wrong("clreduce of keys", 0, ksum, N * (N + 1) / 2);
        goto done;
    }
    /* clreduce of 1 MiB: where the waits poll (copy mode: STDCL_WAIT=block)
     * its value comes back into pinned memory, made at the first such call. */
    {
        enum { BIG = 1 << 18 };
        int* big = (int*)clmalloc(cp, BIG * sizeof(int), 0);
        if (!big) {
            rc = failed("clmalloc(big)");
            goto done;
        }
        for (int i = 0; i < BIG; i++) big[i] = 1;
        int bsum = 0, brc = 0;
        if (!clmsync(cp, 1, big, CL_MEM_DEVICE | CL_EVENT_WAIT))
            brc = failed("clmsync(big, device)");
        else if (clreduce(cp, 1, big, BIG, CL_REDUCE_INT, CL_REDUCE_SUM, &bsum) != 0)
            brc = failed("clreduce (1 MiB)");
        clfree(big);
        if (brc) {
            rc = brc;
            goto done;
        }
        if (bsum != BIG) {
            rc = wrong("clreduce of 1 MiB", 0, bsum, BIG);
            goto done;
        }
    }
    /* clscan in place with the CPU kernels (the running sum 1, 3, 6, ...), then
     * with the GPU kernels' one-pass scan (its look-back state is cleared with
     * clEnqueueFillBuffer): a running maximum of the increasing sums leaves them
     * as they are. */
    for (int gpu = 0; gpu < 2; gpu++) {
        if (gpu) setenv("STDCL_PRIMS_LAYOUT", "gpu", 1);
        int scan_rc = clscan(cp, 1, keys, keys, N, CL_REDUCE_INT, gpu ? CL_REDUCE_MAX : CL_REDUCE_SUM, 0);
        if (gpu) unsetenv("STDCL_PRIMS_LAYOUT");
        if (scan_rc != 0) {
            rc = failed(gpu ? "clscan (GPU kernels)" : "clscan");
            goto done;
        }
        if (!clmsync(cp, 1, keys, CL_MEM_HOST | CL_EVENT_WAIT)) {
            rc = failed("clmsync(keys, host)");
            goto done;
        }
        for (int i = 0; i < N; i++)
            if (keys[i] != (i + 1) * (i + 2) / 2) {
                rc = wrong(gpu ? "maximum of the scanned keys" : "scanned keys", i, keys[i], (i + 1) * (i + 2) / 2);
                goto done;
            }
    }

    /* clscan over both devices, NOWAIT (each slice's carry copied from device
     * to device), joined by clwait: a running maximum of the sums leaves them
     * as they are.  Each device brings back its half. */
    if (!clmsync(cp, 0, keys, CL_MEM_DEVICE | CL_EVENT_WAIT)) {
        rc = failed("clmsync(keys, device 0)");
        goto done;
    }
    if (clscan(cp, CL_ALL_DEVICES, keys, keys, N, CL_REDUCE_INT, CL_REDUCE_MAX, CL_EVENT_NOWAIT) != 0) {
        rc = failed("clscan (CL_ALL_DEVICES, CL_EVENT_NOWAIT)");
        goto done;
    }
    for (unsigned d = 0; d < 2; d++) {
        if (!clwait(cp, d, CL_KERNEL_EVENT)) {
            rc = failed("clwait (clscan)");
            goto done;
        }
        size_t first = d ? N / 2 : 0, count = d ? N - N / 2 : N / 2;
        if (!clmsyncn(cp, d, keys + first, count * sizeof(int), CL_MEM_HOST | CL_EVENT_WAIT)) {
            rc = failed("clmsyncn(keys, host)");
            goto done;
        }
    }
    for (int i = 0; i < N; i++)
        if (keys[i] != (i + 1) * (i + 2) / 2) {
            rc = wrong("maximum over both devices", i, keys[i], (i + 1) * (i + 2) / 2);
            goto done;
        }

    /* An image, written to each device, read by a kernel, and read back. */
    if (!(img = (cl_float4*)clmalloc(cp, W * H * sizeof(cl_float4), CL_MEM_IMAGE2D))) {
        rc = failed("clmalloc(image)");
        goto done;
    }
    if (!(out = (cl_float4*)clmalloc(cp, W * H * sizeof(cl_float4), 0))) {
        rc = failed("clmalloc(out)");
        goto done;
    }
    if (clmctl(img, CL_MCTL_SET_IMAGE2D, (size_t)W, (size_t)H, (const cl_image_format*)NULL) != 0) {
        rc = failed("clmctl(CL_MCTL_SET_IMAGE2D)");
        goto done;
    }
    for (unsigned d = 0; d < 2; d++) {
        clndrange_t ndr = clndrange_init2d(0, W, 4, 0, H, 4);
        for (int i = 0; i < W * H; i++) {
            img[i].s[0] = (float)i, img[i].s[1] = (float)d, img[i].s[2] = (float)(i / W), img[i].s[3] = 0.5f;
            out[i].s[0] = out[i].s[1] = out[i].s[2] = out[i].s[3] = -1.0f;
        }
        if (!clmsync(cp, d, img, CL_MEM_DEVICE | CL_EVENT_WAIT)) {
            rc = failed("clmsync(image, device)");
            goto done;
        }
        if (!clmsync(cp, d, out, CL_MEM_DEVICE | CL_EVENT_WAIT)) {
            rc = failed("clmsync(out, device)");
            goto done;
        }
        if (!clforka(cp, d, k_image, &ndr, CL_EVENT_WAIT, img, out, (int)W)) {
            rc = failed("clforka(fk_image)");
            goto done;
        }
        if (!clmsync(cp, d, out, CL_MEM_HOST | CL_EVENT_WAIT)) {
            rc = failed("clmsync(out, host)");
            goto done;
        }
        for (int i = 0; i < W * H; i++) img[i].s[0] = -2.0f;
        if (!clmsync(cp, d, img, CL_MEM_HOST | CL_EVENT_WAIT)) {
            rc = failed("clmsync(image, host)");
            goto done;
        }
        for (int i = 0; i < W * H; i++) {
            if (out[i].s[0] != (float)i) {
                rc = wrong("image kernel out", i, out[i].s[0], i);
                goto done;
            }
            if (out[i].s[1] != (float)d) {
                rc = wrong("image kernel out .y", i, out[i].s[1], d);
                goto done;
            }
            if (img[i].s[0] != (float)i) {
                rc = wrong("image read back", i, img[i].s[0], i);
                goto done;
            }
        }
    }

    /* Enough NOWAIT transfers that device 0's event list is pruned. */
    if (!(tick = (float*)clmalloc(cp, sizeof(float), 0))) {
        rc = failed("clmalloc(tick)");
        goto done;
    }
    *tick = 1.0f;
    for (int i = 0; i < PRUNE; i++)
        if (!clmsync(cp, 0, tick, CL_MEM_DEVICE | CL_EVENT_NOWAIT)) {
            rc = failed("clmsync(tick) x 4096");
            goto done;
        }
    if (stdcl_wait(cp, 0, CL_MEM_EVENT) != 0) {
        rc = failed("clwait(after 4096 transfers)");
        goto done;
    }

    /* A chosen local size, and the times of the launch's event. */
    {
        clndrange_t ndr = clndrange_init1d(0, 1, 0);
        /* NOWAIT: the event stays the library's, released by clwait */
        cl_event ev = clforka(cp, 0, k_noop, &ndr, CL_EVENT_NOWAIT, 1);
        if (!ev) {
            rc = failed("clforka(fk_noop, local size 0)");
            goto done;
        }
        clWaitForEvents(1, &ev);
        cl_ulong t0, t1;
        int trc = clevent_times(ev, &t0, &t1);
        if (stdcl_wait(cp, 0, CL_KERNEL_EVENT) != 0) {
            rc = failed("clwait(after the chosen local size)");
            goto done;
        }
        if (trc == STDCL_ESTATE) {
            const char* m = clerror();
            if (!m || !strstr(m, "does not profile")) {
                rc = failed("clevent_times");
                goto done;
            }
        } else if (trc != 0) {
            rc = failed("clevent_times");
            goto done;
        }
    }

    /* Launches without an event, joined by clwait (a clFinish of the kernel
     * queue; with the profile on, as in the copy mode, they keep events). */
    {
        clndrange_t ndr = clndrange_init1d(0, 64, 64);
        for (int i = 0; i < 3; i++)
            if (clforka(cp, 0, k_noop, &ndr, CL_EVENT_NOWAIT | CL_EVENT_NOEVENT, i) != STDCL_LAUNCHED) {
                rc = failed("clforka(fk_noop, CL_EVENT_NOEVENT)");
                goto done;
            }
        if (stdcl_wait(cp, 0, CL_KERNEL_EVENT) != 0) {
            rc = failed("clwait(after launches without an event)");
            goto done;
        }
    }

    /* Kernels the program makes itself: each described and held by libstdcl
     * at its first launch, released by the program; the second's first launch
     * lets the first's record go. */
    {
        static const char* src = "__kernel void fk_own(__global float* x, float v) { x[get_global_id(0)] += v; }\n";
        cl_int err = CL_SUCCESS;
        cl_program prog = clCreateProgramWithSource(stdcl_clcontext(cp), 1, &src, NULL, &err);
        if (!prog || clBuildProgram(prog, 0, NULL, "", NULL, NULL) != CL_SUCCESS) {
            fprintf(stderr, "fault_workload: round %d: the program's own build failed\n", g_round);
            verdict(EXIT_WRONG);
            rc = ROUND_WRONG;
            if (prog) clReleaseProgram(prog);
            goto done;
        }
        for (int r = 0; r < 2 && rc == ROUND_OK; r++) {
            cl_kernel k = clCreateKernel(prog, "fk_own", &err);
            if (!k) {
                fprintf(stderr, "fault_workload: round %d: clCreateKernel of the program's own failed\n", g_round);
                verdict(EXIT_WRONG);
                rc = ROUND_WRONG;
                break;
            }
            clndrange_t ndr = clndrange_init1d(0, 1, 1);
            *tick = (float)r;
            if (!clmsync(cp, 0, tick, CL_MEM_DEVICE | CL_EVENT_WAIT))
                rc = failed("clmsync(tick, device)");
            else if (!clforka(cp, 0, k, &ndr, CL_EVENT_WAIT, tick, two))
                rc = failed("clforka(the program's own kernel)");
            else if (!clmsync(cp, 0, tick, CL_MEM_HOST | CL_EVENT_WAIT))
                rc = failed("clmsync(tick, host)");
            else if (*tick != (float)r + two)
                rc = wrong("the program's own kernel", r, *tick, (float)r + two);
            clReleaseKernel(k);
        }
        clReleaseProgram(prog);
        if (rc != ROUND_OK) goto done;
    }

done:
    if (rc != ROUND_OK) {
        /* Whatever is pending; a failure here after the one injected is the
         * library not recovering, which the next round shows too. */
        stdcl_wait(cp, 0, CL_ALL_EVENT);
        stdcl_wait(cp, 1, CL_ALL_EVENT);
        clerror();
    }
    void* mem[] = {a, b, c, dup, keys, img, out, tick};
    for (size_t i = 0; i < sizeof mem / sizeof mem[0]; i++)
        if (mem[i] && clfree(mem[i]) != 0 && rc == ROUND_OK) rc = failed("clfree");
    if (h && clclose(cp, h) != 0 && rc == ROUND_OK) rc = failed("clclose");
    return rc;
}

/* A default context that is NULL must be explained by the first call given it. */
static void check_null_context(CLCONTEXT* cp, const char* name)
{
    if (cp) return;
    g_round = 0;
    void* p = clmalloc(cp, 64, 0);
    if (p) {
        fprintf(stderr, "fault_workload: clmalloc on a NULL %s succeeded\n", name);
        verdict(EXIT_WRONG);
        return;
    }
    char what[64];
    snprintf(what, sizeof what, "clmalloc(%s) (%s is NULL)", name, name);
    failed(what);
}

int main(int argc, char** argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s KERNEL_FILE\n", argv[0]);
        return 2;
    }
    g_kfile = argv[1];
    check_null_context(stdcpu, "stdcpu");
    check_null_context(stddev, "stddev");
    if (!stddev) return g_exit;
    if (clgetndev(stddev) != 2) {
        fprintf(stderr, "fault_workload: stddev has %u device(s), want 2 (POCL_DEVICES=\"pthread pthread\"): %s\n",
                clgetndev(stddev), stdcl_context_why(stddev));
        verdict(EXIT_WRONG);
        return g_exit;
    }
    int must_succeed = 0;
    for (g_round = 1; g_round <= 3; g_round++) {
        int r = run_round(stddev);
        if (r == ROUND_WRONG) break;
        if (r == ROUND_OK) {
            if (must_succeed || g_round >= 2) break;
            continue;
        }
        if (must_succeed) {
            fprintf(stderr, "fault_workload: round %d failed again: the library did not recover\n", g_round);
            verdict(EXIT_WRONG);
            break;
        }
        must_succeed = 1;
    }
    if (g_round > 3) {
        fprintf(stderr, "fault_workload: no round succeeded\n");
        verdict(EXIT_WRONG);
    }
    return g_exit;
}
