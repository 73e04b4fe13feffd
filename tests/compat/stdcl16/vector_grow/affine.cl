/* SPDX-License-Identifier: MIT */
/* affine.cl: y[i] = 3 x[i] - i. */
__kernel void affine(__global const int* x, __global int* y)
{
    int i = get_global_id(0);
    y[i] = 3 * x[i] - i;
}
