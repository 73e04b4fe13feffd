/* SPDX-License-Identifier: MIT */
/* nbody_raw_opencl.c: the NBody baseline in plain OpenCL (no libstdcl).
 *
 * The same algorithm, kernel file (examples/nbody/nbody_kern.cl), kernel
 * (nbody_kern), build options and launch shape as examples/nbody/nbody.c,
 * so the difference between the two measures libstdcl's overhead alone.
 * The build options are those clopen gives that the kernel reads (-D
 * __STDCL__, -D __GPU__ or -D __CPU__, -D __NVIDIA__ on an NVIDIA device:
 * found from the device's PCI vendor id, as a plain OpenCL program would,
 * not from a copy of libstdcl's vendor table; -I the kernel's folder,
 * -cl-kernel-arg-info), then nbody_kernel_options, then -o.
 *
 *   nbody_raw_opencl [-n N] [-s STEPS] [-c gpu|cpu|dev] [-w WG] [-o OPTS]
 *                    [--check] [--bench] [-k KERNEL_FILE] ...
 *
 * The kernel file: -k FILE, else $NBODY_KERNEL, else nbody_kern.cl in the
 * current folder, else examples/nbody/nbody_kern.cl, else the same next to
 * this program's folder (../../examples/nbody/).  Prints
 * RESULT impl=opencl ...  NBODY_DUMP_BINARY=FILE writes the program binary
 * (PTX on NVIDIA) to FILE.  Linked with examples/nbody/nbody_common.c (the
 * shared host code; the Makefile and bench/run_nbody.sh add it). */
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include "nbody_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK_CL(call)                                                                                                 \
    do {                                                                                                               \
        cl_int err_ = (call);                                                                                          \
        if (err_ != CL_SUCCESS) {                                                                                      \
            fprintf(stderr, "%s: %s failed: OpenCL error %d\n", nbody_prog, #call, (int)err_);                         \
            exit(NBODY_EXIT_RUNTIME);                                                                                  \
        }                                                                                                              \
    } while (0)

/* The state of the time steps: the kernel's launch, and the position
 * buffers it swaps at each step (cur: the latest positions). */
typedef struct {
    cl_command_queue q;
    cl_kernel krn;
    size_t gsz, lsz;
    cl_mem cur, nxt;
} burst_t;

/* One burst for nbody_run_bursts: `count` steps, then clFinish; timed by
 * its wall clock. */
static double burst(void* user, int first, int count)
{
    burst_t* r = (burst_t*)user;
    (void)first;
    for (int s = 0; s < count; s++) {
        CHECK_CL(clSetKernelArg(r->krn, 2, sizeof(cl_mem), &r->cur));
        CHECK_CL(clSetKernelArg(r->krn, 3, sizeof(cl_mem), &r->nxt));
        CHECK_CL(clEnqueueNDRangeKernel(r->q, r->krn, 1, NULL, &r->gsz, &r->lsz, 0, NULL, NULL));
        cl_mem t = r->cur;
        r->cur = r->nxt;
        r->nxt = t;
    }
    CHECK_CL(clFinish(r->q));
    return -1;
}

static char* read_file(const char* path, size_t* len)
{
    FILE* f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    char* buf = (char*)malloc((size_t)sz + 1);
    if (!buf || fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
        fclose(f);
        free(buf);
        return NULL;
    }
    buf[sz] = '\0';
    fclose(f);
    *len = (size_t)sz;
    return buf;
}

static const char* find_kernel(const char* given, const char* argv0, char* buf, size_t cap)
{
    if (given) return given;
    const char* env = getenv("NBODY_KERNEL");
    if (env && *env) return env;
    if (access("nbody_kern.cl", R_OK) == 0) return "nbody_kern.cl";
    if (access("examples/nbody/nbody_kern.cl", R_OK) == 0) return "examples/nbody/nbody_kern.cl";
    const char* slash = strrchr(argv0, '/');
    if (slash) {
        snprintf(buf, cap, "%.*s/../../examples/nbody/nbody_kern.cl", (int)(slash - argv0), argv0);
        if (access(buf, R_OK) == 0) return buf;
    }
    return "nbody_kern.cl";
}

/* The vendor macro the kernel tunes for: __NVIDIA__ on an NVIDIA device
 * (PCI vendor id 0x10de), else none. */
static const char* vendor_macro(cl_device_id d)
{
    cl_uint id = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_VENDOR_ID, sizeof id, &id, NULL) != CL_SUCCESS) return NULL;
    return id == 0x10de ? "__NVIDIA__" : NULL;
}

/* First device of the wanted type, on the platform with the most of them. */
static int pick_device(cl_device_type type, cl_platform_id* plat, cl_device_id* dev)
{
    cl_platform_id ps[16];
    cl_uint np = 0, best = 0;
    if (clGetPlatformIDs(16, ps, &np) != CL_SUCCESS) return 0;
    for (cl_uint i = 0; i < np && i < 16; i++) {
        cl_uint nd = 0;
        if (clGetDeviceIDs(ps[i], type, 0, NULL, &nd) != CL_SUCCESS || nd == 0) continue;
        if (nd > best) {
            best = nd;
            *plat = ps[i];
            clGetDeviceIDs(ps[i], type, 1, dev, NULL);
        }
    }
    return best > 0;
}

int main(int argc, char** argv)
{
    nbody_opts o;
    const char* kfile_opt = NULL;
    /* -k is ours; take it out before the shared parser sees the rest. */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-k") && i + 1 < argc) {
            kfile_opt = argv[i + 1];
            for (int j = i; j + 2 <= argc; j++) argv[j] = argv[j + 2];
            argc -= 2;
            i--;
        }
    }
    nbody_parse_args(argc, argv, &o, NBODY_OPT_OPENCL,
                     "The NBody baseline in plain OpenCL, same kernel as nbody "
                     "(-k FILE: the kernel file).");

    cl_platform_id plat = NULL;
    cl_device_id dev = NULL;
    cl_device_type type;
    if (o.ctx && !strcmp(o.ctx, "gpu"))
        type = CL_DEVICE_TYPE_GPU;
    else if (o.ctx && !strcmp(o.ctx, "cpu"))
        type = CL_DEVICE_TYPE_CPU;
    else if (o.ctx && !strcmp(o.ctx, "dev"))
        type = CL_DEVICE_TYPE_ALL;
    else
        type = CL_DEVICE_TYPE_GPU;
    if (!pick_device(type, &plat, &dev)) {
        if (!o.ctx && pick_device(CL_DEVICE_TYPE_CPU, &plat, &dev)) {
            type = CL_DEVICE_TYPE_CPU;
        } else {
            fprintf(stderr, "%s: no OpenCL device of the requested type\n", nbody_prog);
            return NBODY_EXIT_RUNTIME;
        }
    }
    cl_device_type dtype;
    CHECK_CL(clGetDeviceInfo(dev, CL_DEVICE_TYPE, sizeof dtype, &dtype, NULL));
    const int is_gpu = (dtype & CL_DEVICE_TYPE_GPU) != 0;
    char dname[256] = "";
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof dname, dname, NULL);
    nbody_default_size(&o, is_gpu);
    const int wg = o.wg ? o.wg : is_gpu ? 256 : 8;

    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    CHECK_CL(err);
    cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
    CHECK_CL(err);

    /* Program: the same options clopen + nbody.c give. */
    char kbuf[4096];
    const char* kfile = find_kernel(kfile_opt, argv[0], kbuf, sizeof kbuf);
    size_t srclen = 0;
    char* src = read_file(kfile, &srclen);
    if (!src) {
        fprintf(stderr, "%s: cannot read the kernel file %s (use -k FILE)\n", nbody_prog, kfile);
        return NBODY_EXIT_RUNTIME;
    }
    char kdir[4096];
    const char* ks = strrchr(kfile, '/');
    snprintf(kdir, sizeof kdir, "%.*s", ks ? (int)(ks - kfile) : 1, ks ? kfile : ".");
    char nbopts[2048], opts[8192];
    nbody_kernel_options(nbopts, sizeof nbopts, wg, o.clopts);
    const char* vm = vendor_macro(dev);
    snprintf(opts, sizeof opts, "-D __STDCL__ -D %s%s%s -I %s -cl-kernel-arg-info %s",
             is_gpu                             ? "__GPU__"
                 : (dtype & CL_DEVICE_TYPE_CPU) ? "__CPU__"
                                                : "__ACC__",
             vm ? " -D " : "", vm ? vm : "", kdir, nbopts);
    const char* srcs[1] = {src};
    cl_program prog = clCreateProgramWithSource(ctx, 1, srcs, &srclen, &err);
    CHECK_CL(err);
    double tb = nbody_now();
    if (clBuildProgram(prog, 1, &dev, opts, NULL, NULL) != CL_SUCCESS) {
        size_t len = 0;
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &len);
        char* log = (char*)malloc(len + 1);
        clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, len, log, NULL);
        log[len] = 0;
        fprintf(stderr, "%s: build failed (options: %s):\n%s\n", nbody_prog, opts, log);
        return NBODY_EXIT_RUNTIME;
    }
    double build_s = nbody_now() - tb;
    const char* dump = getenv("NBODY_DUMP_BINARY"); /* e.g. NVIDIA's PTX, to study */
    if (dump && *dump) {
        size_t bsz = 0;
        clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof bsz, &bsz, NULL);
        unsigned char* bin = (unsigned char*)malloc(bsz ? bsz : 1);
        FILE* bf = fopen(dump, "wb");
        if (bin && bf && clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bin, &bin, NULL) == CL_SUCCESS)
            fwrite(bin, 1, bsz, bf);
        if (bf) fclose(bf);
        free(bin);
    }
    cl_kernel krn = clCreateKernel(prog, "nbody_kern", &err);
    CHECK_CL(err);
    cl_kernel kinfo = clCreateKernel(prog, "nbody_info", &err);
    CHECK_CL(err);

    /* Launch shape from the kernel itself. */
    cl_int info[8] = {0};
    cl_mem info_buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, sizeof info, NULL, &err);
    CHECK_CL(err);
    size_t one = 1;
    CHECK_CL(clSetKernelArg(kinfo, 0, sizeof(cl_mem), &info_buf));
    CHECK_CL(clEnqueueNDRangeKernel(q, kinfo, 1, NULL, &one, &one, 0, NULL, NULL));
    CHECK_CL(clEnqueueReadBuffer(q, info_buf, CL_TRUE, 0, sizeof info, info, 0, NULL, NULL));
    const int bpw = info[0], jsplit = info[1];
    if (!nbody_shape_ok(info, wg)) return NBODY_EXIT_USAGE;
    const long gran = (long)bpw * wg;
    const long nalloc = (o.n + gran - 1) / gran * gran;

    /* Bodies, padded to the launch granularity. */
    float* pos0 = (float*)malloc(sizeof(float) * 4 * (size_t)o.n);
    float* vel0 = (float*)malloc(sizeof(float) * 4 * (size_t)o.n);
    float* hpos = (float*)malloc(sizeof(float) * 4 * (size_t)nalloc);
    float* hvel = (float*)malloc(sizeof(float) * 4 * (size_t)nalloc);
    if (!pos0 || !vel0 || !hpos || !hvel) {
        fprintf(stderr, "%s: out of memory\n", nbody_prog);
        return NBODY_EXIT_RUNTIME;
    }
    nbody_init(o.n, pos0, vel0, o.ic, o.seed);
    nbody_pad(o.n, nalloc, hpos, hvel, pos0, vel0, 0);

    const size_t bytes = sizeof(cl_float4) * (size_t)nalloc;
    cl_mem pos1 = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK_CL(err);
    cl_mem pos2 = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK_CL(err);
    cl_mem vel = clCreateBuffer(ctx, CL_MEM_READ_WRITE, bytes, NULL, &err);
    CHECK_CL(err);
    CHECK_CL(clEnqueueWriteBuffer(q, pos1, CL_TRUE, 0, bytes, hpos, 0, NULL, NULL));
    CHECK_CL(clEnqueueWriteBuffer(q, vel, CL_TRUE, 0, bytes, hvel, 0, NULL, NULL));

    const size_t gsz = (size_t)(nalloc / bpw * jsplit), lsz = (size_t)wg;
    float dt = o.dt, eps = o.eps;
    CHECK_CL(clSetKernelArg(krn, 0, sizeof(float), &dt));
    CHECK_CL(clSetKernelArg(krn, 1, sizeof(float), &eps));
    CHECK_CL(clSetKernelArg(krn, 4, sizeof(cl_mem), &vel));
    CHECK_CL(clSetKernelArg(krn, 5, sizeof(cl_float4) * lsz, NULL));

    fprintf(stderr,
            "%s: %s, N=%ld (padded to %ld), work-group %d, %d bodies/work-item, "
            "build %.2f s, options: %s\n",
            nbody_prog, dname, o.n, nalloc, wg, bpw, build_s, opts);

    /* Steps in bursts, double-buffered: run.cur holds the latest positions. */
    burst_t run = {q, krn, gsz, lsz, pos1, pos2};
    nbody_timing tim = {0};
    const int total = nbody_run_bursts(&o, o.bench ? o.burst : 0, o.quiet, &tim, burst, &run);
    CHECK_CL(clEnqueueReadBuffer(q, run.cur, CL_TRUE, 0, bytes, hpos, 0, NULL, NULL));
    CHECK_CL(clEnqueueReadBuffer(q, vel, CL_TRUE, 0, bytes, hvel, 0, NULL, NULL));

    char extra[128];
    snprintf(extra, sizeof extra, "device=%s wg=%d bpw=%d", is_gpu ? "gpu" : "cpu", wg, bpw);
    nbody_summary("opencl", &o, 1, &tim, extra);

    int rc = NBODY_EXIT_OK;
    if (o.check && !nbody_check("opencl vs double reference", o.n, total, pos0, vel0, hpos, hvel, o.dt, o.eps))
        rc = NBODY_EXIT_FAIL;
    if (o.png && nbody_png(o.png, o.n, hpos, o.png_size) != 0) rc = rc ? rc : NBODY_EXIT_RUNTIME;

    nbody_timing_free(&tim);
    clReleaseMemObject(pos1);
    clReleaseMemObject(pos2);
    clReleaseMemObject(vel);
    clReleaseMemObject(info_buf);
    clReleaseKernel(krn);
    clReleaseKernel(kinfo);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    free(src);
    free(pos0);
    free(vel0);
    free(hpos);
    free(hvel);
    return rc;
}
