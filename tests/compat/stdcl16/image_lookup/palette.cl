/* SPDX-License-Identifier: MIT */
/* palette.cl: out[i] = v[i] * t.x + t.y - t.z * t.w, t the texel of tab at
 * (i mod width, (i / width) mod height), read without filtering. */
__constant sampler_t nearest = CLK_NORMALIZED_COORDS_FALSE | CLK_ADDRESS_CLAMP_TO_EDGE | CLK_FILTER_NEAREST;

__kernel void apply_palette(int n, __global const float* v, __global float* out, __read_only image2d_t tab)
{
    int i = get_global_id(0);
    if (i >= n) return;
    int tw = get_image_width(tab), th = get_image_height(tab);
    float4 t = read_imagef(tab, nearest, (int2)(i % tw, (i / tw) % th));
    out[i] = v[i] * t.x + t.y - t.z * t.w;
}
