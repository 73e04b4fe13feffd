/* SPDX-License-Identifier: MIT */
/* matvecmult.cl: c = A b for an n x n matrix A stored as Fortran stores it,
 * column after column (A(i,j) at aa[i + j n], indices from 0), one
 * work-item per row.  The kernel COPRTHR's Fortran example opens, with its
 * name and arguments (n, aa, b, c). */
__kernel void matvecmult_kern(int n, __global const float* aa,
                              __global const float* b, __global float* c)
{
    int i = get_global_id(0);
    if (i >= n)
        return;
    float s = 0.0f;
    for (int j = 0; j < n; j++)
        s += aa[i + j * n] * b[j];
    c[i] = s;
}
