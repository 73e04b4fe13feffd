/* SPDX-License-Identifier: MIT */
/* loader.cl: kernels of test_loader.c.  probe_macros reports which standard
 * macros the build got; fill writes a value. */
#include "loader_inc.h"

__kernel void probe_macros(__global int* out)
{
    if (get_global_id(0) != 0) return;
#ifdef __STDCL__
    out[0] = 1;
#else
    out[0] = 0;
#endif
#ifdef __CPU__
    out[1] = 1;
#else
    out[1] = 0;
#endif
#ifdef __GPU__
    out[2] = 1;
#else
    out[2] = 0;
#endif
#ifdef __POCL__
    out[3] = 1;
#else
    out[3] = 0;
#endif
    out[4] = LOADER_INC_VALUE;
#ifdef VALUE
    out[5] = VALUE;
#else
    out[5] = -1;
#endif
#ifdef ENV_VALUE
    out[6] = ENV_VALUE;
#else
    out[6] = -1;
#endif
}

__kernel void fill(__global int* out, int v)
{
    out[get_global_id(0)] = v;
}
