/* SPDX-License-Identifier: MIT */
/* startup_raw.c: the raw OpenCL program that bench_startup times beside the
 * empty libstdcl program (startup_empty.c).  It links with OpenCL alone
 * (the Makefile drops -lstdcl for it) and sets up the contexts libstdcl
 * makes at load, as libstdcl chooses them: for each default context (all
 * devices, CPU, GPU, accelerator) the platform with the most devices of that
 * type (clGetPlatformIDs, clGetDeviceIDs of each platform), a context over
 * those devices (clCreateContext with CL_CONTEXT_PLATFORM) and an in-order
 * command queue per device; then it releases them and exits.  What libstdcl
 * does beyond that (device queries, its zero-copy probe, transfer queues
 * where a device has memory of its own, the environment's settings) is the
 * difference bench_startup shows.
 *
 *   startup_raw        the contexts as above; exit status 0, or 1 with a
 *                      message when an OpenCL call fails
 *   startup_raw -0     no OpenCL call at all: the cost of exec, the dynamic
 *                      linker and the ICD loader's library (bench_startup's
 *                      floor)
 *   startup_raw -v     the contexts as above, and what it made, on stderr
 */
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <stdio.h>
#include <string.h>

#define MAXPLAT 16
#define MAXDEV 64

static int verbose;

static int failed(cl_int err, const char* what)
{
    if (err == CL_SUCCESS) return 0;
    fprintf(stderr, "startup_raw: %s failed: OpenCL error %d\n", what, (int)err);
    return 1;
}

/* The devices of `type` on platform p into ids (at most MAXDEV); 0 for none
 * (CL_DEVICE_NOT_FOUND), -1 on another failure. */
static int devices(cl_platform_id p, cl_device_type type, cl_device_id* ids)
{
    cl_uint n = 0;
    cl_int err = clGetDeviceIDs(p, type, 0, NULL, &n);
    if (err == CL_DEVICE_NOT_FOUND || (err == CL_SUCCESS && n == 0)) return 0;
    if (failed(err, "clGetDeviceIDs")) return -1;
    if (n > MAXDEV) n = MAXDEV;
    if (failed(clGetDeviceIDs(p, type, n, ids, NULL), "clGetDeviceIDs")) return -1;
    return (int)n;
}

int main(int argc, char** argv)
{
    if (argc > 1 && strcmp(argv[1], "-0") == 0) return 0;
    verbose = argc > 1 && strcmp(argv[1], "-v") == 0;
    if (argc > 1 && !verbose) {
        fprintf(stderr, "usage: startup_raw [-0|-v]\n");
        return 2;
    }
    cl_platform_id plats[MAXPLAT];
    cl_uint np = 0;
    cl_int err = clGetPlatformIDs(0, NULL, &np);
    if (err == -1001 || (err == CL_SUCCESS && np == 0)) return 0; /* CL_PLATFORM_NOT_FOUND_KHR: no context */
    if (failed(err, "clGetPlatformIDs")) return 1;
    if (np > MAXPLAT) np = MAXPLAT;
    if (failed(clGetPlatformIDs(np, plats, NULL), "clGetPlatformIDs")) return 1;

    static const struct {
        const char* label;
        cl_device_type type;
    } kinds[4] = {{"stddev", CL_DEVICE_TYPE_ALL},
                  {"stdcpu", CL_DEVICE_TYPE_CPU},
                  {"stdgpu", CL_DEVICE_TYPE_GPU},
                  {"stdacc", CL_DEVICE_TYPE_ACCELERATOR}};
    cl_context ctx[4] = {0};
    cl_command_queue q[4][MAXDEV];
    int nq[4] = {0};
    int status = 0;
    for (int k = 0; k < 4 && !status; ++k) {
        cl_device_id best[MAXDEV], ids[MAXDEV];
        int nbest = 0, best_has_gpu = 0;
        cl_platform_id bp = NULL;
        for (cl_uint i = 0; i < np; ++i) {
            int n = devices(plats[i], kinds[k].type, ids);
            if (n < 0) {
                status = 1;
                break;
            }
            if (n == 0) continue;
            /* libstdcl's rule: the most such devices; for stddev a tie goes
             * to a platform that has a GPU. */
            int has_gpu = 0;
            if (kinds[k].type == CL_DEVICE_TYPE_ALL) {
                cl_device_id g[MAXDEV];
                int ng = devices(plats[i], CL_DEVICE_TYPE_GPU, g);
                if (ng < 0) {
                    status = 1;
                    break;
                }
                has_gpu = ng > 0;
            }
            if (n > nbest || (n == nbest && has_gpu && !best_has_gpu)) {
                nbest = n;
                best_has_gpu = has_gpu;
                bp = plats[i];
                memcpy(best, ids, (size_t)n * sizeof *ids);
            }
        }
        if (status || nbest == 0) continue;
        cl_context_properties props[3] = {CL_CONTEXT_PLATFORM, (cl_context_properties)bp, 0};
        ctx[k] = clCreateContext(props, (cl_uint)nbest, best, NULL, NULL, &err);
        if (failed(err, "clCreateContext")) {
            ctx[k] = NULL;
            status = 1;
            break;
        }
        for (int d = 0; d < nbest; ++d) {
            q[k][d] = clCreateCommandQueue(ctx[k], best[d], 0, &err);
            if (failed(err, "clCreateCommandQueue")) {
                status = 1;
                break;
            }
            nq[k]++;
        }
        if (verbose) fprintf(stderr, "startup_raw: %s: %d device(s), %d queue(s)\n", kinds[k].label, nbest, nq[k]);
    }
    for (int k = 0; k < 4; ++k) {
        for (int d = 0; d < nq[k]; ++d)
            if (failed(clReleaseCommandQueue(q[k][d]), "clReleaseCommandQueue")) status = 1;
        if (ctx[k] && failed(clReleaseContext(ctx[k]), "clReleaseContext")) status = 1;
    }
    return status;
}
