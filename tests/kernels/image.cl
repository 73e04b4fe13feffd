/* SPDX-License-Identifier: MIT */
/* image.cl: image kernels of test_memory.c (built only where the device
 * supports images).  Pixel (x, y) of a w-wide RGBA float image goes to
 * out[y * w + x]. */
__constant sampler_t k_nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;

__kernel void read_image(__read_only image2d_t img, __global float4* out, int w)
{
    int x = get_global_id(0), y = get_global_id(1);
    out[y * w + x] = read_imagef(img, k_nearest, (int2)(x, y));
}
