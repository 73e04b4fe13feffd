/* SPDX-License-Identifier: MIT */
/* grow.cl: y[i] = x[i] + 1 (cxx_containers.cpp).  Includes <stdcl.h>: clcc leaves
 * the include in place and libstdcl builds it with -I its include folder. */
#include <stdcl.h>
__kernel void inc(__global const float* x, __global float* y)
{
    uint i = get_global_id(0);
    y[i] = x[i] + 1.0f;
}
