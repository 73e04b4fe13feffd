/* SPDX-License-Identifier: MIT */
/* row_span.cl: span[r] = max - min of row r of g (cols ints per row). */
__kernel void row_span(int cols, __global const int* g, __global int* span)
{
    int r = get_global_id(0);
    int lo = g[r * cols], hi = lo;
    for (int c = 1; c < cols; ++c) {
        int v = g[r * cols + c];
        lo = min(lo, v);
        hi = max(hi, v);
    }
    span[r] = hi - lo;
}
