/* SPDX-License-Identifier: MIT */
/* stress.cl: kernels of test_stress.c, opened by every thread (one shared
 * handle).  Both compute c[i] = a[i] * k + i over the index space, i counted
 * from the start of the pointers the kernel gets (interior pointers included):
 * axpi is launched with clforka, axpi_fork with clarg_set and clfork. */

__kernel void axpi(__global const int* a, __global int* c, int k)
{
    int i = get_global_id(0);
    c[i] = a[i] * k + i;
}

__kernel void axpi_fork(__global const int* a, __global int* c, int k)
{
    int i = get_global_id(0);
    c[i] = a[i] * k + i;
}
