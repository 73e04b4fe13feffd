/* SPDX-License-Identifier: MIT */
/* matvec_colmajor.cl: y = A x for an n x m matrix stored as Fortran stores it,
 * column after column: A(i,j) (from 1) is a[(i-1) + (j-1) n].  One
 * work-item per row; a launch with a global offset computes those rows. */
__kernel void matvec(int n, int m, __global const float* a,
                     __global const float* x, __global float* y)
{
    int i = get_global_id(0);
    float s = 0.0f;
    for (int j = 0; j < m; j++)
        s += a[i + j * n] * x[j];
    y[i] = s;
}
