/* SPDX-License-Identifier: MIT */
/* fortran_embed.cl: a kernel embedded in fortran_embed by clcc. */
__kernel void embed_scale(int k, __global int* a)
{
    size_t i = get_global_id(0);
    a[i] = k * (int)(i + 1);
}
