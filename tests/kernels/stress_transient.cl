/* SPDX-License-Identifier: MIT */
/* stress_transient.cl: test_stress.c opens this file, launches its kernel
 * once and closes it again, in every thread, so its count falls to zero (and
 * the program is released) while other threads open it again. */

__kernel void axpi_transient(__global const int* a, __global int* c, int k)
{
    int i = get_global_id(0);
    c[i] = a[i] * k + i;
}
