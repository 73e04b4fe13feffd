/* SPDX-License-Identifier: MIT */
/* fortran_kernels.cl: the kernels of the Fortran test programs
 * (tests/fortran/*.f90, run by test_fortran). */

/* dst[k] = src[k] for nbytes bytes: moves any array's bytes on the device. */
__kernel void copy_bytes(__global const uchar* src, __global uchar* dst, int nbytes)
{
    for (int k = get_global_id(0); k < nbytes; k += get_global_size(0))
        dst[k] = src[k];
}

/* Writes each argument into out[] as a double, to be checked on the host. */
__kernel void args_kern(char c, short s, int i, long l, float f, double d,
                        float2 cf, double2 cd, float4 v, __global double* out)
{
    if (get_global_id(0) != 0)
        return;
    out[0] = c;
    out[1] = s;
    out[2] = i;
    out[3] = l;
    out[4] = f;
    out[5] = d;
    out[6] = cf.x;
    out[7] = cf.y;
    out[8] = cd.x;
    out[9] = cd.y;
    out[10] = v.x + 10 * v.y + 100 * v.z + 1000 * v.w;
}

/* out[0] = x converted to the parameter types: an int and a float. */
__kernel void convert_kern(int i, float f, __global double* out)
{
    if (get_global_id(0) == 0) {
        out[0] = i;
        out[1] = f;
    }
}

/* Sums x over each work-group through __local scratch of one float per
 * work-item; group g writes its sum to sums[g]. */
__kernel void group_sum(__global const float* x, __local float* scratch,
                        __global float* sums)
{
    size_t l = get_local_id(0), n = get_local_size(0);
    scratch[l] = x[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        float s = 0.0f;
        for (size_t k = 0; k < n; k++)
            s += scratch[k];
        sums[get_group_id(0)] = s;
    }
}

/* a(i, j) = i + 1000 j (Fortran indices from 1) for an n0 x n1 array stored
 * column after column: dimension 0 is i, dimension 1 is j. */
__kernel void index2d(__global int* a, int n0)
{
    int i = get_global_id(0), j = get_global_id(1);
    a[i + j * n0] = (i + 1) + 1000 * (j + 1);
}

/* y = a x + y over the global range (with its offset). */
__kernel void saxpy(float a, __global const float* x, __global float* y)
{
    size_t k = get_global_id(0);
    y[k] = a * x[k] + y[k];
}
