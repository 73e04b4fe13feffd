/* SPDX-License-Identifier: MIT */
/* launch.cl: kernels of test_launch.c. */
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

/* One int per work-item of a 1-D range: its global id, stored at
 * (global id - offset); out[n + i] gets the local size. */
__kernel void ids1d(__global int* out, int n)
{
    int i = (int)(get_global_id(0) - get_global_offset(0));
    out[i] = (int)get_global_id(0);
    out[n + i] = (int)get_local_size(0);
}

/* 2-D: out[y * w + x] = 1000 * gy + gx (global ids), relative to the offsets. */
__kernel void ids2d(__global int* out, int w)
{
    int x = (int)(get_global_id(0) - get_global_offset(0));
    int y = (int)(get_global_id(1) - get_global_offset(1));
    out[y * w + x] = 1000 * (int)get_global_id(1) + (int)get_global_id(0);
}

/* 3-D: out[(z * h + y) * w + x] = 10000 * gz + 100 * gy + gx. */
__kernel void ids3d(__global int* out, int w, int h)
{
    int x = (int)(get_global_id(0) - get_global_offset(0));
    int y = (int)(get_global_id(1) - get_global_offset(1));
    int z = (int)(get_global_id(2) - get_global_offset(2));
    out[(z * h + y) * w + x] = 10000 * (int)get_global_id(2) + 100 * (int)get_global_id(1) + (int)get_global_id(0);
}

/* Every kind of argument clforka passes: out[0..11] receive them. */
__kernel void scalars(__global float* out, int i, float f, uint u, float4 v, long l, uchar c, short s, double d)
{
    if (get_global_id(0) != 0) return;
    out[0] = (float)i;
    out[1] = f;
    out[2] = (float)u;
    out[3] = v.x;
    out[4] = v.y;
    out[5] = v.z;
    out[6] = v.w;
    out[7] = (float)(l >> 32);
    out[8] = (float)(l & 0xffff);
    out[9] = (float)c;
    out[10] = (float)s;
    out[11] = (float)(d * 2.0);
}

/* Sum of each work-group's inputs through __local memory: out[group] = sum. */
__kernel void local_sum(__global const int* in, __global int* out, __local int* tmp)
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

/* c[0] += 1, one work-item: launches on one in-order queue count exactly. */
__kernel void count(__global int* c)
{
    c[0] += 1;
}

/* a[i] = a[i] * m + k */
__kernel void axpb(__global int* a, int m, int k)
{
    int i = get_global_id(0);
    a[i] = a[i] * m + k;
}
