/* SPDX-License-Identifier: MIT */
/* tagged.h: values of type T (SWORDS 32-bit words) that one work-group
 * publishes and others read while both run: clscan's look-back and clreduce's
 * last group.  Each value is SWORDS 64-bit words, each the tag (epoch << 2 |
 * flag, protocol.h) in the high half and 32 bits of the value in the low half.
 * A word tagged with another epoch is not there yet, so the words need no
 * clearing between calls; a value of two words counts only when both carry
 * the same tag (each tag is written once a call), so no fence orders them. */
#ifndef STDCL_PRIM_TAGGED_H
#define STDCL_PRIM_TAGGED_H
#include "common.h"
#if SWORDS == 1
#define SW_BITS(v, k) as_uint(v)
#define SW_VALUE(lo, hi) CAT(as_, T)(lo)
#else
#define SW_BITS(v, k) ((k) ? as_uint2(v).y : as_uint2(v).x)
#define SW_VALUE(lo, hi) CAT(as_, T)((uint2)((lo), (hi)))
#endif
// Value number i of sw, tagged tag.
inline void sw_publish(volatile __global ulong* sw, uint i, uint tag, T v)
{
    for (uint k = 0; k < SWORDS; ++k) sw[i * SWORDS + k] = ((ulong)tag << 32) | SW_BITS(v, k);
}
// Value i's flag (0 while nothing is published there this epoch) and *v.
inline uint sw_peek(volatile __global ulong* sw, uint i, uint epoch, T* v)
{
    ulong w0 = sw[i * SWORDS];
    uint tag = (uint)(w0 >> 32);
    if (PRIM_TAG_EPOCH(tag) != epoch) return 0;
#if SWORDS == 1
    *v = SW_VALUE((uint)w0, 0u);
#else
    ulong w1 = sw[i * SWORDS + 1];
    if ((uint)(w1 >> 32) != tag) return 0;
    *v = SW_VALUE((uint)w0, (uint)w1);
#endif
    return tag & PRIM_TAG_FLAGS;
}
#endif
