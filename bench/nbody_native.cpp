// SPDX-License-Identifier: MIT
// nbody_native.cpp: the NBody baseline in native C++ with OpenMP.
//
// The same algorithm as the OpenCL kernels (direct sum, softening eps added
// to r^2, the tutorial's kick-drift update, float), written the way a C++
// programmer would for a compiler to vectorise: structure of arrays, the
// inner j loop over contiguous floats, OpenMP over i.  Build (run_nbody.sh
// does): g++ -O3 -march=native -ffast-math -fopenmp.  -ffast-math turns
// 1/sqrtf into the hardware estimate plus a Newton step, as
// -cl-fast-relaxed-math does for the kernels.
//
//   nbody_native [-n N] [-s STEPS] [-b BURST] [--check] [--bench] ...
//
// Prints RESULT impl=native ... ; threads from OMP_NUM_THREADS.  One file
// on purpose, but for the shared host code (examples/nbody/nbody_common.c,
// linked in by the Makefile and bench/run_nbody.sh).
#include "nbody_common.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#ifdef _OPENMP
#include <omp.h>
#endif

namespace {

struct System {
    long n;
    std::vector<float> x, y, z, m, vx, vy, vz, nx, ny, nz;
};

// One step: positions (x, y, z) -> (nx, ny, nz), velocities in place.
void step(System& s, float dt, float eps)
{
    const long n = s.n;
    const float* __restrict x = s.x.data();
    const float* __restrict y = s.y.data();
    const float* __restrict z = s.z.data();
    const float* __restrict m = s.m.data();
    float* __restrict vx = s.vx.data();
    float* __restrict vy = s.vy.data();
    float* __restrict vz = s.vz.data();
    float* __restrict nx = s.nx.data();
    float* __restrict ny = s.ny.data();
    float* __restrict nz = s.nz.data();
    const float hdt2 = 0.5f * dt * dt;
#pragma omp parallel for schedule(static)
    for (long i = 0; i < n; i++) {
        const float xi = x[i], yi = y[i], zi = z[i];
        float ax = 0.0f, ay = 0.0f, az = 0.0f;
#pragma omp simd reduction(+ : ax, ay, az)
        for (long j = 0; j < n; j++) {
            const float dx = x[j] - xi, dy = y[j] - yi, dz = z[j] - zi;
            const float r2 = dx * dx + dy * dy + dz * dz + eps;
            const float inv = 1.0f / std::sqrt(r2);
            const float f = m[j] * inv * inv * inv;
            ax += f * dx;
            ay += f * dy;
            az += f * dz;
        }
        nx[i] = xi + dt * vx[i] + hdt2 * ax;
        ny[i] = yi + dt * vy[i] + hdt2 * ay;
        nz[i] = zi + dt * vz[i] + hdt2 * az;
        vx[i] += dt * ax;
        vy[i] += dt * ay;
        vz[i] += dt * az;
    }
    s.x.swap(s.nx);
    s.y.swap(s.ny);
    s.z.swap(s.nz);
}

// One burst for nbody_run_bursts: `count` steps, timed by its wall clock.
struct Run {
    System* s;
    float dt, eps;
};
double burst(void* user, int, int count)
{
    Run* r = static_cast<Run*>(user);
    for (int k = 0; k < count; k++) step(*r->s, r->dt, r->eps);
    return -1;
}

}  // namespace

int main(int argc, char** argv)
{
    nbody_opts o;
    nbody_parse_args(argc, argv, &o, 0,
                     "The NBody baseline in native C++ (OpenMP, compiler "
                     "vectorisation).");
    nbody_default_size(&o, 0);

    std::vector<float> pos0(4 * (size_t)o.n), vel0(4 * (size_t)o.n);
    nbody_init(o.n, pos0.data(), vel0.data(), o.ic, o.seed);
    System s;
    s.n = o.n;
    for (auto* v : {&s.x, &s.y, &s.z, &s.m, &s.vx, &s.vy, &s.vz, &s.nx, &s.ny, &s.nz}) v->assign((size_t)o.n, 0.0f);
    for (long i = 0; i < o.n; i++) {
        s.x[i] = pos0[4 * i];
        s.y[i] = pos0[4 * i + 1];
        s.z[i] = pos0[4 * i + 2];
        s.m[i] = pos0[4 * i + 3];
        s.vx[i] = vel0[4 * i];
        s.vy[i] = vel0[4 * i + 1];
        s.vz[i] = vel0[4 * i + 2];
    }
    int threads = 1;
#ifdef _OPENMP
    threads = omp_get_max_threads();
#endif
    fprintf(stderr, "%s: N=%ld, %d thread(s)\n", nbody_prog, o.n, threads);

    nbody_timing tim = {};
    Run run = {&s, o.dt, o.eps};
    const int total = nbody_run_bursts(&o, o.bench ? o.burst : 0, o.quiet, &tim, burst, &run);

    char extra[64];
    snprintf(extra, sizeof extra, "device=cpu threads=%d", threads);
    nbody_summary("native", &o, 1, &tim, extra);

    int rc = NBODY_EXIT_OK;
    std::vector<float> pos(4 * (size_t)o.n), vel(4 * (size_t)o.n);
    for (long i = 0; i < o.n; i++) {
        pos[4 * i] = s.x[i];
        pos[4 * i + 1] = s.y[i];
        pos[4 * i + 2] = s.z[i];
        pos[4 * i + 3] = s.m[i];
        vel[4 * i] = s.vx[i];
        vel[4 * i + 1] = s.vy[i];
        vel[4 * i + 2] = s.vz[i];
        vel[4 * i + 3] = 0.0f;
    }
    if (o.check &&
        !nbody_check("native vs double reference", o.n, total, pos0.data(), vel0.data(), pos.data(), vel.data(), o.dt,
                     o.eps))
        rc = NBODY_EXIT_FAIL;
    if (o.png && nbody_png(o.png, o.n, pos.data(), o.png_size) != 0) rc = rc ? rc : NBODY_EXIT_RUNTIME;
    nbody_timing_free(&tim);
    return rc;
}
