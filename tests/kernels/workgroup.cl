/* SPDX-License-Identifier: MIT */
/* workgroup.cl: kernels of test_workgroup.c (local sizes chosen by libstdcl,
 * __local arguments sized at launch) and of test_launch.c's event times. */

/* out[i] = the local size of dimension 0, out[n + i] = of dimension 1. */
__kernel void local_sizes(__global int* out, int n)
{
    int i = (int)(get_global_id(1) * get_global_size(0) + get_global_id(0));
    out[i] = (int)get_local_size(0);
    out[n + i] = (int)get_local_size(1);
}

/* Each group sums its x into scratch (per_item floats per work-item) and
 * writes the group's sum to sums[group]; count[0] gets the local size. */
__kernel void group_sums(__global const float* x, __local float* scratch, int per_item, __global float* sums,
                         __global int* count)
{
    size_t l = get_local_id(0), ls = get_local_size(0);
    for (int k = 0; k < per_item; k++) scratch[l * per_item + k] = k == 0 ? x[get_global_id(0)] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (l == 0) {
        float s = 0.0f;
        for (size_t j = 0; j < ls * per_item; j++) s += scratch[j];
        sums[get_group_id(0)] = s;
        if (get_group_id(0) == 0) count[0] = (int)ls;
    }
}

/* A tile of (lx + 2) floats, sized by a function of the local size:
 * out[i] = x[i - 1] + x[i] + x[i + 1] (zero outside). */
__kernel void halo3(__global const float* x, __local float* tile, __global float* out, int n)
{
    int g = (int)get_global_id(0), l = (int)get_local_id(0), ls = (int)get_local_size(0);
    tile[l + 1] = x[g];
    if (l == 0) tile[0] = g > 0 ? x[g - 1] : 0.0f;
    if (l == ls - 1) tile[ls + 1] = g + 1 < n ? x[g + 1] : 0.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[g] = tile[l] + tile[l + 1] + tile[l + 2];
}

/* A fixed-size group: reqd_work_group_size is the only valid local size. */
__kernel __attribute__((reqd_work_group_size(4, 1, 1))) void fixed4(__global int* out)
{
    out[get_global_id(0)] = (int)get_local_size(0);
}
