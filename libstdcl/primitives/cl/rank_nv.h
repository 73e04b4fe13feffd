/* SPDX-License-Identifier: MIT */
/* rank_nv.h: the sort's ranker on NVIDIA's GPUs (rank.h chooses it): the
 * warp's vote instruction (inline PTX) finds the lanes whose key has the
 * same digit, with no local memory and no barrier.  The loops over a
 * work-item's keys are unrolled (SORT_UNROLL), so that its keys stay in
 * registers. */
#ifndef STDCL_PRIM_RANK_NV_H
#define STDCL_PRIM_RANK_NV_H
#define SORT_UNROLL _Pragma("unroll")
#define SORT_RANK_LOCAL(wg) 1 /* rank_in_warp's wdig: unused here */

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
// The valid lanes whose 8-bit digit is d (what an invalid lane gets is not
// used: selecting a value for it kept a register live across the rank loop,
// and the sort was 10% slower on an H200).
inline uint nv_peers(uint d, uint valid)
{
    uint peers = nv_ballot(valid);
#pragma unroll
    for (uint b = 0; b < 8u; ++b) {
        uint bit = (d >> b) & 1u;
        uint m = nv_ballot(bit);
        peers &= bit ? m : ~m;
    }
    return peers;
}

// The rank of this lane's key (digit d; valid: 0 for a lane past the tile's
// end) among the warp's keys of digit d so far: wh[d] (the warp's counts) plus
// the lanes before it with the same digit; wh[d] grows by the warp's keys of
// digit d.  Every work-item of the group calls it.
inline uint rank_in_warp(uint d, uint valid, __local uint* wh, __local uint* wdig)
{
    (void)wdig;
    uint lane = get_local_id(0) & 31u;
    uint peers = nv_peers(d, valid);
    volatile __local uint* w = wh;
    uint old = valid ? w[d] : 0u;
    nv_syncwarp();
    if (valid && lane == 31u - clz(peers)) w[d] = old + popcount(peers);
    nv_syncwarp();
    return old + popcount(peers & nv_lanemask_lt());  // an invalid lane's: not used
}
#endif
