/* SPDX-License-Identifier: MIT */
/* fault_kernels.cl: the kernels of fault_workload.c (the fault-injection
 * workload of tools/check_faults.sh). */
__constant sampler_t fk_nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;

/* c = s * a + b over the launch's range (its global offset picks the half). */
__kernel void fk_axpb(__global const float* a, __global const float* b, __global float* c, float s)
{
    size_t i = get_global_id(0);
    c[i] = s * a[i] + b[i];
}

/* x[i] *= s, given an interior pointer (a sub-buffer). */
__kernel void fk_scale(__global float* x, float s)
{
    size_t i = get_global_id(0);
    x[i] *= s;
}

/* Pixel (x, y) of a w-wide RGBA float image goes to out[y * w + x]. */
__kernel void fk_image(__read_only image2d_t img, __global float4* out, int w)
{
    int x = get_global_id(0), y = get_global_id(1);
    out[y * w + x] = read_imagef(img, fk_nearest, (int2)(x, y));
}

/* Nothing, with a scalar argument only (a launch that touches no memory). */
__kernel void fk_noop(int x)
{
    (void)x;
}
