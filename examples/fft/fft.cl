/* SPDX-License-Identifier: MIT */
/* fft.cl: the pointwise product of two spectra (complex numbers as float2,
 * real and imaginary parts interleaved, as clFFT stores them): x *= g. */
__kernel void cmul(__global float2* x, __global const float2* g)
{
    size_t i = get_global_id(0);
    float2 a = x[i], b = g[i];
    x[i] = (float2)(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
