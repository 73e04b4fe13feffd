/* SPDX-License-Identifier: MIT */
/* second_diff.cl: d[i] = u[i-1] - 2 u[i] + u[i+1] inside, 0 at both ends. */
__kernel void second_diff(int n, __global const int* u, __global int* d)
{
    int i = get_global_id(0);
    if (i >= n) return;
    d[i] = (i == 0 || i == n - 1) ? 0 : u[i - 1] - 2 * u[i] + u[i + 1];
}
