/* SPDX-License-Identifier: MIT */
/* saxpy.cl: y = a x + y.  clcc inlines saxpy_params.h into the object, so
 * neither file is needed when the program runs. */
#include "saxpy_params.h"

__kernel void saxpy(float a, __global const float* x, __global float* y)
{
    size_t i = get_global_id(0) * SAXPY_PER_ITEM;
    for (int k = 0; k < SAXPY_PER_ITEM; ++k) y[i + k] = a * x[i + k] + y[i + k];
}
