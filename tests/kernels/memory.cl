/* SPDX-License-Identifier: MIT */
/* memory.cl: kernels of test_memory.c. */

/* a[i] += v */
__kernel void add_int(__global int* a, int v)
{
    a[get_global_id(0)] += v;
}

/* a[i] = base + i: written through the pointer the kernel gets, so an
 * interior pointer shows where the kernel's view starts. */
__kernel void fill_index(__global int* a, int base)
{
    int i = get_global_id(0);
    a[i] = base + i;
}

/* out[i] = in[i] * 2 (in is read-only for the kernel) */
__kernel void double_ro(__global const int* in, __global int* out)
{
    int i = get_global_id(0);
    out[i] = in[i] * 2;
}
