/* SPDX-License-Identifier: MIT */
/* nbody_stdcl.h: what the libstdcl NBody programs (nbody, nbody_multi,
 * ../nbody_mpi) share beyond nbody_common: choosing the context, finding and
 * building the kernel file, launching the block kernel, and the one-device
 * run that --check compares the multi-device results with. */
#ifndef NBODY_STDCL_H
#define NBODY_STDCL_H

#include <stddef.h>

#include <stdcl.h>

#include "nbody_common.h"

/* The context named by -c ("gpu", "cpu" or "dev"), or stdgpu if there is one,
 * else stdcpu.  Exits with status 2 and a message when it is NULL. */
CONTEXT* nbody_pick_context(const char* name);

/* nbody_kern.cl from the current folder or STDCL_KERNEL_PATH (clopen looks
 * there), else from the folder holding the program (argv0); buf holds the
 * path in that last case. */
const char* nbody_kernel_file(const char* argv0, char* buf, size_t cap);

/* libstdcl's message for the last failure, or "(no detail)" (clerror()
 * gives it once, like dlerror()). */
const char* nbody_why(void);

/* Prints "prog: <what> failed: <nbody_why()>" and exits NBODY_EXIT_RUNTIME
 * (through nbody_exit_hook when set: an MPI program aborts every rank). */
void nbody_die(const char* what)
#ifdef __GNUC__
    __attribute__((noreturn))
#endif
    ;
extern void (*nbody_exit_hook)(int status);

/* Opens and builds nbody_kern.cl in cp for work-groups of nthread with the
 * options of nbody_kernel_options (written to options[cap]); *build_s gets
 * the seconds it took.  On a build error prints the log and exits (status 2
 * when -o was given, as the options are then suspect, else 3). */
void* nbody_build(CONTEXT* cp, const char* argv0, const nbody_opts* o, int nthread,
                  char* options, size_t cap, double* build_s);

/* Flags of nbody_kern_multi's `mode` argument, as in nbody_kern.cl. */
#define NBODY_FIRST 1 /* the first source block of a step: the sum starts */
#define NBODY_LAST  2 /* the last one: update and write pos_new, vel */
#define NBODY_MAXDEV 64

/* The devices of one process that run nbody_kern_multi over blocks. */
typedef struct {
    CONTEXT* cp;
    int k;                     /* devices 0..k-1 of cp */
    int nthread;               /* work-group size */
    int bpw[NBODY_MAXDEV];     /* per device: bodies per work-item */
    int js[NBODY_MAXDEV];      /* per device: work-items per body (j split) */
    long gran;                 /* a block's size must be a multiple of this */
    int any_gpu;               /* one of the devices is a GPU */
    cl_kernel krn;             /* nbody_kern_multi */
    float dt, eps;
} nbody_devs;

/* Reads each device's kernel variant (nbody_info from the program clh) into
 * bpw, js and gran.  Returns 1, or 0 when the work-group size does not suit a
 * variant (the reason is printed). */
int nbody_devs_shape(nbody_devs* m, void* clh);

/* Launches nbody_kern_multi on device d over one block of nb bodies (d's
 * positions pos_old, its velocities vel and sums acc), pulled by the source
 * block src; the NBODY_LAST launch writes pos_new.  Exits on failure. */
void nbody_launch_block(const nbody_devs* m, int d, long nb, void* pos_old, void* pos_new,
                        void* vel, void* src, void* acc, int mode);

/* The same steps on device 0 of cp alone with the one-device kernel
 * nbody_kern, as nbody runs them, from pos0/vel0 (4 floats per body): the
 * final positions and velocities into out and vout. */
void nbody_one_device_run(CONTEXT* cp, void* clh, const nbody_opts* o, int nthread,
                          int steps, const float* pos0, const float* vel0, float* out,
                          float* vout);

#endif
