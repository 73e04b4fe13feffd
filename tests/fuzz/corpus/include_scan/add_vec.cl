/* SPDX-License-Identifier: MIT */
/* add_vec.cl: the kernel the two examples of the STDCL 1.6 API reference
 * open (tests/compat/example1.c, example2.c): c = a + b. */
__kernel void addvec_kern(__global float* a, __global float* b, __global float* c)
{
   int i = get_global_id(0);
   c[i] = a[i] + b[i];
}
