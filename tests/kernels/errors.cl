/* SPDX-License-Identifier: MIT */
/* errors.cl: kernels of test_errors.c. */

/* a[i] += 1 */
__kernel void add_one(__global int* a)
{
    a[get_global_id(0)] += 1;
}

/* out[i] = x (two arguments, the second a float) */
__kernel void two_args(__global float* out, float x)
{
    out[get_global_id(0)] = x;
}
