/* SPDX-License-Identifier: MIT */
/* oclgrind.cl: kernels helper_oclgrind.c runs on the Oclgrind simulator,
 * which reports any out-of-bounds access or data race in its log. */

/* c = a + b */
__kernel void vadd(__global const float* a, __global const float* b, __global float* c)
{
    int i = get_global_id(0);
    c[i] = a[i] + b[i];
}

/* out[group] = sum of the group's inputs, through __local memory (the
 * barriers make it race-free). */
__kernel void group_sum(__global const int* in, __global int* out, __local int* tmp)
{
    int lid = get_local_id(0), n = get_local_size(0);
    tmp[lid] = in[get_global_id(0)];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int s = n / 2; s > 0; s /= 2) {
        if (lid < s) tmp[lid] += tmp[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) out[get_group_id(0)] = tmp[0];
}
