/* SPDX-License-Identifier: MIT */
/* nbody_common.h: what the NBody programs share that is not OpenCL: options,
 * initial conditions, the double-precision reference and the check, the
 * picture, timing and the progress and result lines.
 *
 * Bodies are 4 floats each, (x, y, z, mass) for positions and (vx, vy, vz, 0)
 * for velocities: the layout of cl_float4 and of the kernel's float4.  Plain
 * C, no OpenCL types, so the native C++ and CUDA baselines use it too. */
#ifndef NBODY_COMMON_H
#define NBODY_COMMON_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exit statuses of every NBody program. */
#define NBODY_EXIT_OK 0
#define NBODY_EXIT_FAIL 1 /* --check failed */
#define NBODY_EXIT_USAGE 2 /* bad command line */
#define NBODY_EXIT_RUNTIME 3 /* OpenCL/library/IO failure */

/* Initial conditions. */
#define NBODY_IC_COLLISION 0 /* two disk galaxies on a prograde encounter */
#define NBODY_IC_PLUMMER 1 /* one Plummer sphere in equilibrium */

/* Which options a program accepts (bits). */
#define NBODY_OPT_DEVICES 0x01 /* -d: number of devices */
#define NBODY_OPT_OPENCL 0x02 /* -c, -w, -o: context, local size, build options */
#define NBODY_OPT_WG 0x04 /* -w alone: block size (CUDA) */

typedef struct {
    long n; /* bodies (-n) */
    int steps; /* time steps (-s) */
    int burst; /* steps between host synchronisations (-b) */
    int ndev; /* devices (-d); 0: all of the context */
    const char* ctx; /* -c gpu|cpu|dev; NULL: stdgpu if any, else stdcpu */
    int wg; /* work-group size (-w); 0: the program's default */
    const char* clopts; /* -o "OPTIONS" for the kernel build; "" if none */
    int check; /* --check */
    int bench; /* --bench: warm up, then time */
    const char* png; /* --png FILE, or NULL */
    int png_size; /* --png-size: picture width and height in pixels */
    int ic; /* --ic collision|plummer */
    unsigned long seed; /* --seed */
    float dt; /* --dt: time step */
    float eps; /* --eps: softening length squared */
    int quiet; /* -q: no progress lines */
    int n_given; /* -n was given */
    int steps_given; /* -s was given */
    int ic_given; /* --ic was given */
} nbody_opts;

/* Fills o from the command line.  Prints help and exits 0 for --help; prints
 * a message and exits NBODY_EXIT_USAGE for a bad option or value.  `which`
 * is a set of NBODY_OPT_* bits; `what` is one line saying what the program
 * is, for --help.  Defaults for -n and -s that depend on the device are
 * applied later with nbody_default_size. */
void nbody_parse_args(int argc, char** argv, nbody_opts* o, int which, const char* what);

/* Applies the defaults that depend on the device and on --check, for what
 * the command line left out: -n and -s (`gpu` selects the bigger sizes;
 * --check small ones, as the reference is O(N^2) in double on the host)
 * and, with --check, the Plummer initial conditions (see nbody_common.c). */
void nbody_default_size(nbody_opts* o, int gpu);

/* Prints "prog: message" on stderr and exits NBODY_EXIT_USAGE. */
void nbody_usage_error(const char* fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;

/* The program name for messages ("nbody", "nbody_multi", ...). */
extern const char* nbody_prog;

/* Initial conditions for n bodies into pos[4n] and vel[4n] (total mass 1,
 * G = 1, centre of mass at rest at the origin).  Reproducible from seed. */
void nbody_init(long n, float* pos, float* vel, int ic, unsigned long seed);

/* Writes the n bodies of a block of capacity nalloc >= n: copies the n
 * given ones and fills the rest with zero-mass padding bodies (far away,
 * at rest), which pull on nothing. */
void nbody_pad(long n, long nalloc, float* pos, float* vel, const float* pos_src, const float* vel_src,
               long pad_index0);

/* Advances n bodies `steps` steps in double precision on the host, the same
 * integrator as the kernels.  pos/vel: 4n doubles in and out. */
void nbody_reference(long n, int steps, double* pos, double* vel, double dt, double eps);

/* Largest relative difference of 3-vectors (4 floats per body, the 4th
 * ignored) between a (float) and b (double): max_i |a_i - b_i| /
 * max(|b_i - o_i|, L), with L the RMS of |b_i - o_i| over all bodies and
 * o an origin per body (NULL: zero).  With o = NULL it is the relative
 * error of positions; with o = the initial velocities, the relative error
 * of the velocity changes, i.e. of the integrated forces.
 * nbody_compare_ff: b in floats too. */
double nbody_compare(long n, const float* a, const double* b, const float* o);
double nbody_compare_ff(long n, const float* a, const float* b, const float* o);

/* The tolerances of --check after `steps` steps, for positions and for
 * velocity changes, with their reasoning in nbody_common.c. */
double nbody_check_tolerance(int steps);
double nbody_check_tolerance_vel(int steps);

/* Runs the reference from the initial conditions (pos0, vel0: floats) and
 * compares the final float positions and velocities with it, printing the
 * errors and PASS/FAIL.  Returns 1 on PASS, 0 on FAIL. */
int nbody_check(const char* label, long n, int steps, const float* pos0, const float* vel0, const float* pos_final,
                const float* vel_final, double dt, double eps);

/* Compares two float runs from the same initial velocities vel0 (positions
 * and velocity changes) with the same tolerances, printing the errors and
 * PASS/FAIL; returns 1 on PASS. */
int nbody_check_pair(const char* label, long n, int steps, const float* vel0, const float* pos_a, const float* vel_a,
                     const float* pos_b, const float* vel_b);

/* Writes a picture of the bodies (a projection, additive, log brightness,
 * coloured by which cluster a body started in) as a PNG.  Returns 0, or -1
 * with a message on stderr. */
int nbody_png(const char* file, long n, const float* pos, int size);

/* Wall clock in seconds. */
double nbody_now(void);

/* Progress on stderr, at most about once a second (nothing when quiet). */
typedef struct {
    double t0, last;
    long n;
    int total;
    int quiet;
} nbody_progress;
void nbody_progress_start(nbody_progress* p, long n, int total_steps, int quiet);
void nbody_progress_step(nbody_progress* p, int steps_done);

/* Median of v[0..k-1] (reorders v). */
double nbody_median(double* v, int k);

/* Timing of a run made of bursts (steps between host synchronisations). */
typedef struct {
    double* sec; /* seconds of each timed burst */
    int* steps; /* steps of each timed burst */
    int nburst, cap;
} nbody_timing;
void nbody_timing_add(nbody_timing* t, double sec, int steps);
/* ms per step: with --bench the median over bursts, else total / steps. */
double nbody_timing_ms(const nbody_timing* t, int bench);
void nbody_timing_free(nbody_timing* t);

/* The burst loop of every NBody program: runs warm + o->steps time steps in
 * bursts, first the `warm` warm-up steps (0: none), then bursts of o->burst
 * steps.  run_burst(user, first, count) runs steps first..first+count-1 and
 * returns when they are done, with the seconds they took when it timed them
 * itself (CUDA events), else a negative number: then the wall time of the
 * call counts.  The bursts after the warm-up are timed into tim (NULL: not
 * kept); progress lines on stderr unless quiet.  Returns warm + o->steps. */
int nbody_run_bursts(const nbody_opts* o, int warm, int quiet, nbody_timing* tim,
                     double (*run_burst)(void* user, int first, int count), void* user);

/* Prints the human summary (stdout) and the RESULT line for a run. */
void nbody_summary(const char* impl, const nbody_opts* o, int devices, const nbody_timing* t, const char* extra);

/* Checks a kernel variant's launch shape, as nbody_info reports it (info[0]
 * bodies per work-item, [1] j split, [2] compiled-in local size or 0, [3] 1
 * for the CPU variant, [4] unrolling) against the work-group size wg.
 * Returns 1 if it fits; else prints why on stderr and returns 0. */
int nbody_shape_ok(const int* info, int wg);

/* Default kernel build options that the host adds before the user's -o:
 * "-D NBODY_WG=<wg>" and the math flags (see nbody_common.c). */
void nbody_kernel_options(char* out, size_t cap, int wg, const char* user);

/* The machine-readable result line on stdout:
 * RESULT impl=<impl> n=<n> steps=<s> devices=<d> ms_per_step=<x>
 *        interactions_per_s=<y> gflops=<z> [extra] */
void nbody_result(const char* impl, long n, int steps, int devices, double ms_per_step, const char* extra);

#ifdef __cplusplus
}
#endif

#endif /* NBODY_COMMON_H */
