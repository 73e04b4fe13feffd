/* SPDX-License-Identifier: MIT */
/* nbody_tile.cl: accelerations of n bodies, one work-item per body, the
 * positions staged in __local memory one tile (one body per work-item) at a
 * time, as Aparapi's NBody does with a LocalFloatBuffer of 4 floats per
 * work-item.  n must be a multiple of the local size (libstdcl chooses one
 * that divides it). */
__kernel void nbody_tile(__global const float4* pos, __global float4* acc, __local float4* tile, float eps2)
{
    int i = (int)get_global_id(0), l = (int)get_local_id(0), ls = (int)get_local_size(0);
    int tiles = (int)get_global_size(0) / ls;
    float4 p = pos[i];
    float3 a = (float3)(0.0f);
    for (int t = 0; t < tiles; t++) {
        tile[l] = pos[t * ls + l];          /* each work-item loads one body */
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int j = 0; j < ls; j++) {      /* each uses the whole tile */
            float4 q = tile[j];
            float3 r = q.xyz - p.xyz;
            float inv = rsqrt(dot(r, r) + eps2);
            a += (q.w * inv * inv * inv) * r;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    acc[i] = (float4)(a, 0.0f);
}
