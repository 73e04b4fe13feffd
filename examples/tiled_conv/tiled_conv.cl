/* SPDX-License-Identifier: MIT */
/* tiled_conv.cl: a (2R+1) x (2R+1) convolution of a W x H image, given padded
 * by R pixels on each side (rows of W + 2R floats), so that every read is
 * inside the buffer.
 * conv_async: each group copies its tile of (lx + 2R) x (ly + 2R) pixels
 *   into __local memory with async_work_group_copy, one row per copy, and
 *   every work-item reads its neighbourhood from there.
 * conv_plain: every work-item reads its neighbourhood from global memory. */
__kernel void conv_async(__global const float* in, __constant float* w, __global float* out, int W, int R,
                         __local float* tile)
{
    int lx = (int)get_local_size(0), ly = (int)get_local_size(1);
    int tw = lx + 2 * R, th = ly + 2 * R, Wp = W + 2 * R;
    int gx0 = (int)get_group_id(0) * lx, gy0 = (int)get_group_id(1) * ly;
    event_t ev = 0;
    for (int i = 0; i < th; i++)
        ev = async_work_group_copy(tile + i * tw, in + (size_t)(gy0 + i) * Wp + gx0, (size_t)tw, ev);
    wait_group_events(1, &ev);
    int x = (int)get_local_id(0), y = (int)get_local_id(1), k = 2 * R + 1;
    float s = 0.0f;
    for (int dy = 0; dy < k; dy++)
        for (int dx = 0; dx < k; dx++) s += w[dy * k + dx] * tile[(y + dy) * tw + x + dx];
    out[get_global_id(1) * W + get_global_id(0)] = s;
}

__kernel void conv_plain(__global const float* in, __constant float* w, __global float* out, int W, int R)
{
    int x = (int)get_global_id(0), y = (int)get_global_id(1), k = 2 * R + 1, Wp = W + 2 * R;
    float s = 0.0f;
    for (int dy = 0; dy < k; dy++)
        for (int dx = 0; dx < k; dx++) s += w[dy * k + dx] * in[(size_t)(y + dy) * Wp + x + dx];
    out[y * W + x] = s;
}
