/* SPDX-License-Identifier: MIT */
/* common.h: what every primitives program shares: sizes, token pasting, and
 * NVIDIA's warp operations (inline PTX) where STDCL_WANT_NV_WARP is defined
 * on an NVIDIA GPU. */
#ifndef STDCL_PRIM_COMMON_H
#define STDCL_PRIM_COMMON_H
#include "protocol.h"
#define WG PRIM_WG
#define NWARP (WG / 32)
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#if defined(__NVIDIA__) && defined(__GPU__) && defined(STDCL_WANT_NV_WARP)
#define STDCL_NV_WARP 1
inline uint nv_lanemask_lt(void)
{
    uint m;
    asm volatile("mov.u32 %0, %%lanemask_lt;" : "=r"(m));
    return m;
}
inline void nv_syncwarp(void) { asm volatile("bar.warp.sync 0xffffffff;"); }
// The lanes whose p is not 0 (every lane of the warp takes part).
inline uint nv_ballot(uint p)
{
    uint m;
    asm volatile("{\n\t.reg .pred q;\n\tsetp.ne.u32 q, %1, 0;\n\tvote.sync.ballot.b32 %0, q, 0xffffffff;\n\t}"
                 : "=r"(m)
                 : "r"(p));
    return m;
}
// The lanes (valid ones) whose 8-bit digit is d; an invalid lane: itself.
inline uint nv_peers(uint d, uint valid)
{
    uint peers = nv_ballot(valid);
#pragma unroll
    for (uint b = 0; b < 8u; ++b) {
        uint bit = (d >> b) & 1u;
        uint m = nv_ballot(bit);
        peers &= bit ? m : ~m;
    }
    return valid ? peers : 1u << (get_local_id(0) & 31u);
}
#endif
#endif
