/* SPDX-License-Identifier: MIT */
/* argtypes.cl: kernels of test_argtypes.c.  Each writes the values it was
 * given to out, as the parameter's type holds them. */
#include "argtypes_types.h"

typedef struct { int a; int b; } pair_t;

__kernel void typed(DATA_TYPE a, SCALE_TYPE s, float f, int i, ulong u, count_t c, double d, __global double* out)
{
    if (get_global_id(0) != 0) return;
    out[0] = a;
    out[1] = s;
    out[2] = f;
    out[3] = i;
    out[4] = u;
    out[5] = c;
    out[6] = d;
}

__kernel void small(char c, uchar uc, short sh, __global int* out)
{
    if (get_global_id(0) != 0) return;
    out[0] = c;
    out[1] = uc;
    out[2] = sh;
}

__kernel void vec(float4 v, pair_t p, __global float* out)
{
    if (get_global_id(0) != 0) return;
    out[0] = v.x + v.y + v.z + v.w;
    out[1] = p.a + p.b;
}

__kernel void rows(__global float* a, __global float* b, int n)
{
    int i = get_global_id(0);
    if (i < n) b[i] = 2.0f * a[i];
}
