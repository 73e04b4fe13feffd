/* SPDX-License-Identifier: MIT */
/* matvec.cl: a block of rows of y = A x: y[i] = sum_j a[(row0 + i) * n + j] * x[j]. */
__kernel void matvec(__global const float* a, __global const float* x, __global float* y, int row0, int n)
{
    int i = get_global_id(0);
    const __global float* row = a + (size_t)(row0 + i) * n;
    float sum = 0.0f;
    for (int j = 0; j < n; ++j) sum += row[j] * x[j];
    y[i] = sum;
}
