/* SPDX-License-Identifier: MIT */
/* powsum.cl: acc[i] = sum over k <= i of base[k]^POWER (POWER is 2 unless
 * the build options say otherwise). */
#ifndef POWER
#define POWER 2
#endif

__kernel void power_prefix(__global const int* base, __global int* acc)
{
    int i = get_global_id(0);
    int s = 0;
    for (int k = 0; k <= i; ++k) {
        int p = 1;
        for (int e = 0; e < POWER; ++e) p *= base[k];
        s += p;
    }
    acc[i] = s;
}
