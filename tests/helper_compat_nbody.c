/* SPDX-License-Identifier: MIT */
/* helper_compat_nbody.c: the NBody tutorial's host program (tests/compat/
 * nbody.c) with its nbody_init/nbody_output (tests/compat/nbody_util.c).
 * It targets a GPU; without one, stdgpu names stdcpu (a macro does not expand
 * inside itself, so the expression reads the real stdgpu).  test_compat.c
 * runs it from tests/kernels/ (where nbody_kern.cl is) as
 * `helper_compat_nbody nparticle nstep nburst` and checks the positions. */
#include <stdcl.h>

#define stdgpu (stdgpu ? stdgpu : stdcpu)
#include "compat/nbody.c"
#undef stdgpu

#include "compat/nbody_util.c"
