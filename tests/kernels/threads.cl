/* SPDX-License-Identifier: MIT */
/* threads.cl: kernels of test_threads.c. */

/* One work-item busy for a while (n rounds of a generator the compiler cannot
 * fold), then a[0] = 1 and a[1] = the generator's value. */
__kernel void spin(__global int* a, int n)
{
    uint x = (uint)a[1];
    for (int i = 0; i < n; i++) x = x * 1103515245u + 12345u + (x >> 13);
    a[1] = (int)x;
    a[0] = 1;
}
