/* nbody_stdcl.h: what the two libstdcl NBody programs (nbody, nbody_multi)
 * share beyond nbody_common: choosing the context and finding the kernel file. */
#ifndef NBODY_STDCL_H
#define NBODY_STDCL_H

#include <stddef.h>

#include <stdcl.h>

/* The context named by -c ("gpu", "cpu" or "dev"), or stdgpu if there is one,
 * else stdcpu.  Exits with status 2 and a message when it is NULL. */
CONTEXT* nbody_pick_context(const char* name);

/* nbody_kern.cl from the current folder or STDCL_KERNEL_PATH (clopen looks
 * there), else from the folder holding the program (argv0); buf holds the
 * path in that last case. */
const char* nbody_kernel_file(const char* argv0, char* buf, size_t cap);

#endif
