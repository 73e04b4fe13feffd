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
void* nbody_build(CONTEXT* cp, const char* argv0, const nbody_opts* o, int nthread, char* options, size_t cap,
                  double* build_s);

/* Flags of nbody_kern_multi's `mode` argument, as in nbody_kern.cl. */
#define NBODY_FIRST 1 /* the first source block of a step: the sum starts */
#define NBODY_LAST 2 /* the last one: update and write pos_new, vel */
#define NBODY_MAXDEV 64

/* The devices of one process that run nbody_kern_multi over blocks. */
typedef struct {
    CONTEXT* cp;
    int k; /* devices 0..k-1 of cp */
    int nthread; /* work-group size */
    int bpw[NBODY_MAXDEV]; /* per device: bodies per work-item */
    int js[NBODY_MAXDEV]; /* per device: work-items per body (j split) */
    long gran; /* a block's size must be a multiple of this */
    int any_gpu; /* one of the devices is a GPU */
    cl_kernel krn; /* nbody_kern_multi */
    float dt, eps;
} nbody_devs;

/* Whether one of devices 0..k-1 of m->cp is a GPU (also sets m->any_gpu). */
int nbody_devs_any_gpu(nbody_devs* m);

/* Reads each device's kernel variant (nbody_info from the program clh) into
 * bpw, js and gran.  Returns 1, or 0 when the work-group size does not suit a
 * variant (the reason is printed). */
int nbody_devs_shape(nbody_devs* m, void* clh);

/* The bodies of a multi-device run, cut into blocks: nbody_multi has one
 * block per device of its context, nbody_mpi one per device of every rank.
 * Blocks are numbered 0..nblock-1 in body order; devices 0..k-1 of this
 * process own blocks first..first+k-1 (their velocities, and their
 * positions' updates).  Every block's positions rotate through NBODY_RING
 * buffers, not two: a device may start step t+1 (writing buffer (t+2)%3)
 * while another still reads step t's sources (buffer t%3); on devices that
 * share host memory (PoCL: clmsync has nothing to copy) all devices see one
 * copy, and two buffers would race. */
#define NBODY_RING 3

typedef struct nbody_blocks nbody_blocks;
struct nbody_blocks {
    nbody_devs dv; /* this process's devices and the block kernel */
    int nblock; /* blocks in all */
    int first; /* the block of device 0 */
    long nb; /* bodies per block (padded) */
    long* cnt; /* per block: real bodies */
    long* off; /* per block: index of its first body */
    cl_float4** pos[NBODY_RING]; /* [ring][block]: positions */
    cl_float4* vel[NBODY_MAXDEV]; /* per device: its block's velocities */
    cl_float4* acc[NBODY_MAXDEV]; /* per device: its block's sums */
    /* Brings the blocks of other processes into blk[] (indexed by block),
     * once this process's own blocks there are on the host; NULL when this
     * process owns every block.  nbody_mpi: MPI_Allgather. */
    void (*exchange)(nbody_blocks* b, cl_float4** blk, void* user);
    void* user; /* exchange's last argument */
};

/* Cuts n bodies into blocks: nproc processes, process p with ndev_of[p]
 * devices (one block each) owns n/nproc bodies (the first n%nproc one
 * more), as evenly as possible over its blocks; every block is padded to
 * the same size nb, a multiple of gran.  Sets nblock, first (for process
 * `self`), nb, and cnt and off (allocated here). */
void nbody_blocks_layout(nbody_blocks* b, long n, int nproc, const int* ndev_of, int self, long gran);

/* Allocates every block's positions and the own blocks' velocities and
 * sums, fills the own blocks from the initial conditions pos0, vel0 (4
 * floats per body, all n bodies) with zero-mass padding, and copies them to
 * their devices; the others' blocks reach each device at the first step.
 * Exits on failure. */
void nbody_blocks_alloc(nbody_blocks* b, const float* pos0, const float* vel0);

/* One time step t on this process's devices, all enqueued (NOWAIT):
 *
 *     device d, step t:   kernel(own block)              starts at once
 *                         wait: own blocks of t-1 on the host
 *                         exchange (other processes' blocks of t-1)
 *                         clmsync(block e -> d)  e != own  host copy
 *                         kernel(block e)        e != own
 *                         clmsync(d's new block -> host)
 *
 * The first launch starts the sum, the last one updates d's velocities and
 * writes its new positions.  The host enqueues every device's own-block
 * kernel before it waits for the previous step's transfers, so the devices
 * compute while the host collects and forwards the other blocks. */
void nbody_blocks_step(nbody_blocks* b, int t);

/* Runs warm + o->steps steps in bursts with nbody_run_bursts (the warm-up,
 * timing and progress lines are its), waiting for every device after each
 * burst.  Returns the number of steps run, total: the final positions are
 * in ring buffer total % NBODY_RING on the host. */
int nbody_blocks_run(nbody_blocks* b, const nbody_opts* o, int warm, int quiet, nbody_timing* tim);

/* The final positions of every block (ring buffer `last`) into pos (4
 * floats per body, all n bodies) and, when vel is not NULL, the final
 * velocities into vel.  With an exchange, every process must call it. */
void nbody_blocks_gather(nbody_blocks* b, int last, float* pos, float* vel);

/* Frees what nbody_blocks_layout and nbody_blocks_alloc allocated. */
void nbody_blocks_free(nbody_blocks* b);

/* --check of a multi-device run: the same steps on device 0 of cp alone
 * (nbody_one_device_run), compared with the run's final positions and
 * velocities, and both compared with the double-precision reference; prints
 * a line per comparison, labelled "<many> vs <one>", "<one> vs double
 * reference" and "<many> vs double reference", then "check: PASS" or
 * "check: FAIL".  Returns NBODY_EXIT_OK or NBODY_EXIT_FAIL. */
int nbody_check_vs_one_device(CONTEXT* cp, void* clh, const nbody_opts* o, int nthread, int steps, const float* pos0,
                              const float* vel0, const float* pos, const float* vel, const char* many, const char* one);

/* The same steps on device 0 of cp alone with the one-device kernel
 * nbody_kern, as nbody runs them, from pos0/vel0 (4 floats per body): the
 * final positions and velocities into out and vout. */
void nbody_one_device_run(CONTEXT* cp, void* clh, const nbody_opts* o, int nthread, int steps, const float* pos0,
                          const float* vel0, float* out, float* vout);

#endif
