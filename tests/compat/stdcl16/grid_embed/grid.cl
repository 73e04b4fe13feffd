/* SPDX-License-Identifier: MIT */
/* grid.cl: grid_fill writes g(x, y) = (x + 1)(y + 2) - 3x + y^2 over a 2D
 * range; grid_rowsum adds up each row of width w. */
__kernel void grid_fill(int w, __global int* g)
{
    int x = get_global_id(0), y = get_global_id(1);
    g[y * w + x] = (x + 1) * (y + 2) - 3 * x + y * y;
}

__kernel void grid_rowsum(int w, __global const int* g, __global int* s)
{
    int y = get_global_id(0);
    int t = 0;
    for (int x = 0; x < w; ++x) t += g[y * w + x];
    s[y] = t;
}
