/* SPDX-License-Identifier: MIT */
/* mixed_pointers.cl: Beignet's "mixed buffer pointer" example: `from` points
 * into src0 for odd work-items and into src1 for even ones. */
__kernel void example(__global int* dst, __global int* src0, __global int* src1)
{
    __global int* from;
    if (get_global_id(0) % 2)
        from = src0;
    else
        from = src1;
    dst[get_global_id(0)] = from[get_global_id(0)];
}
