// SPDX-License-Identifier: MIT
// nbody_cuda.cu: the NBody baseline in CUDA, a plain port of the tutorial.
//
// The tutorial's tiled kernel as a CUDA programmer would port it: one body
// per thread, each block stages one tile of positions (one per thread) in
// shared memory, rsqrtf, the same integrator and softening as the OpenCL
// kernels.  No hand tuning beyond that (no several bodies per thread, no
// manual unrolling): it is the "plain CUDA" reference the OpenCL GPU kernel
// is compared with.  Build (run_nbody.sh does):
//     nvcc -O3 -use_fast_math -arch=sm_90 -I examples/nbody -o nbody_cuda \
//          nbody_cuda.cu examples/nbody/nbody_common.c
//
//   nbody_cuda [-n N] [-s STEPS] [-b BURST] [-w THREADS] [--check] [--bench]
//
// Prints RESULT impl=cuda ...  One file on purpose, but for the shared host
// code (examples/nbody/nbody_common.c: initial conditions, check, report
// lines), linked in.
#include "nbody_common.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cuda_runtime.h>

#include <vector>

#define CUDA_CHECK(call)                                                     \
    do {                                                                     \
        cudaError_t e_ = (call);                                             \
        if (e_ != cudaSuccess) {                                             \
            fprintf(stderr, "%s: %s failed: %s\n", nbody_prog, #call,        \
                    cudaGetErrorString(e_));                                 \
            exit(NBODY_EXIT_RUNTIME);                                        \
        }                                                                    \
    } while (0)

__global__ void nbody_kern(float dt, float eps, const float4* __restrict__ pos_old,
                           float4* __restrict__ pos_new, float4* __restrict__ vel, int n)
{
    extern __shared__ float4 pblock[];
    const int gti = blockIdx.x * blockDim.x + threadIdx.x;
    const int ti = threadIdx.x;
    const int nt = blockDim.x;
    const int nb = n / nt;

    const float4 p = pos_old[gti];
    float4 v = vel[gti];
    float ax = 0.0f, ay = 0.0f, az = 0.0f;

    for (int jb = 0; jb < nb; jb++) {
        pblock[ti] = pos_old[jb * nt + ti];
        __syncthreads();
        for (int j = 0; j < nt; j++) {
            const float4 p2 = pblock[j];
            const float dx = p2.x - p.x, dy = p2.y - p.y, dz = p2.z - p.z;
            const float invr = rsqrtf(dx * dx + dy * dy + dz * dz + eps);
            const float f = p2.w * invr * invr * invr;
            ax += f * dx;
            ay += f * dy;
            az += f * dz;
        }
        __syncthreads();
    }

    const float hdt2 = 0.5f * dt * dt;
    float4 q = p;
    q.x += dt * v.x + hdt2 * ax;
    q.y += dt * v.y + hdt2 * ay;
    q.z += dt * v.z + hdt2 * az;
    v.x += dt * ax;
    v.y += dt * ay;
    v.z += dt * az;
    pos_new[gti] = q;
    vel[gti] = v;
}

// The state of the time steps: the launch, the two position buffers
// (d_pos[cur] holds the latest positions) and the events that time a burst.
struct Run {
    float dt, eps;
    long np;
    int nt;
    float4 *d_pos[2], *d_vel;
    int cur;
    cudaEvent_t e0, e1;
};

// One burst for nbody_run_bursts: `count` steps, timed by CUDA events.
static double burst(void* user, int, int count)
{
    Run* r = static_cast<Run*>(user);
    CUDA_CHECK(cudaEventRecord(r->e0));
    for (int s = 0; s < count; s++) {
        nbody_kern<<<r->np / r->nt, r->nt, r->nt * sizeof(float4)>>>(r->dt, r->eps, r->d_pos[r->cur],
                                                                    r->d_pos[1 - r->cur], r->d_vel,
                                                                    (int)r->np);
        r->cur = 1 - r->cur;
    }
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventRecord(r->e1));
    CUDA_CHECK(cudaEventSynchronize(r->e1));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, r->e0, r->e1));
    return 1e-3 * ms;
}

int main(int argc, char** argv)
{
    nbody_opts o;
    nbody_parse_args(argc, argv, &o, NBODY_OPT_WG,
                     "The NBody baseline in CUDA (the tutorial's tiled kernel, plain port).");
    nbody_default_size(&o, 1);
    const int nt = o.wg ? o.wg : 256;

    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        fprintf(stderr, "%s: no CUDA device\n", nbody_prog);
        return NBODY_EXIT_RUNTIME;
    }
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));

    const long np = (o.n + nt - 1) / nt * nt;
    std::vector<float> pos0(4 * o.n), vel0(4 * o.n), hpos(4 * np), hvel(4 * np);
    nbody_init(o.n, pos0.data(), vel0.data(), o.ic, o.seed);
    nbody_pad(o.n, np, hpos.data(), hvel.data(), pos0.data(), vel0.data(), 0);

    float4 *d_pos[2], *d_vel;
    const size_t bytes = sizeof(float4) * np;
    CUDA_CHECK(cudaMalloc(&d_pos[0], bytes));
    CUDA_CHECK(cudaMalloc(&d_pos[1], bytes));
    CUDA_CHECK(cudaMalloc(&d_vel, bytes));
    CUDA_CHECK(cudaMemcpy(d_pos[0], hpos.data(), bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_vel, hvel.data(), bytes, cudaMemcpyHostToDevice));
    fprintf(stderr, "%s: %s, N=%ld (padded to %ld), %d threads per block\n", nbody_prog,
            prop.name, o.n, np, nt);

    Run run = { o.dt, o.eps, np, nt, { d_pos[0], d_pos[1] }, d_vel, 0, {}, {} };
    CUDA_CHECK(cudaEventCreate(&run.e0));
    CUDA_CHECK(cudaEventCreate(&run.e1));
    nbody_timing tim = {};
    const int total = nbody_run_bursts(&o, o.bench ? o.burst : 0, o.quiet, &tim, burst, &run);
    const int cur = run.cur;
    CUDA_CHECK(cudaMemcpy(hpos.data(), d_pos[cur], bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hvel.data(), d_vel, bytes, cudaMemcpyDeviceToHost));

    char extra[64];
    snprintf(extra, sizeof extra, "device=gpu wg=%d bpw=1", nt);
    nbody_summary("cuda", &o, 1, &tim, extra);

    int rc = NBODY_EXIT_OK;
    if (o.check && !nbody_check("cuda vs double reference", o.n, total, pos0.data(),
                                vel0.data(), hpos.data(), hvel.data(), o.dt, o.eps))
        rc = NBODY_EXIT_FAIL;
    nbody_timing_free(&tim);
    cudaFree(d_pos[0]);
    cudaFree(d_pos[1]);
    cudaFree(d_vel);
    return rc;
}
