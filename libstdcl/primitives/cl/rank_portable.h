/* SPDX-License-Identifier: MIT */
/* rank_portable.h: the sort's ranker on any OpenCL device (rank.h chooses
 * it): the warp's lanes compare their digits through local memory.  The
 * loops over a work-item's keys are left to the compiler (SORT_UNROLL is
 * empty): unrolled, the kernels build in three times as long on PoCL. */
#ifndef STDCL_PRIM_RANK_PORTABLE_H
#define STDCL_PRIM_RANK_PORTABLE_H
#define SORT_UNROLL
#define SORT_RANK_LOCAL(wg) (wg) /* rank_in_warp's wdig, groups of wg: a word a work-item */

// The rank of this lane's key (digit d; valid: 0 for a lane past the tile's
// end) among the warp's keys of digit d so far: wh[d] (the warp's counts) plus
// the lanes before it with the same digit; wh[d] grows by the warp's keys of
// digit d.  Every work-item of the group calls it (it holds barriers); wdig:
// SORT_RANK_LOCAL(group size) words.
inline uint rank_in_warp(uint d, uint valid, __local uint* wh, __local uint* wdig)
{
    uint lid = get_local_id(0), lane = lid & 31u;
    if (!valid) d = 256u + lane;  // a digit no other lane has
    wdig[lid] = d;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint peers = 0;
    for (uint l = 0; l < 32u; ++l) peers |= (wdig[(lid & ~31u) + l] == d ? 1u : 0u) << l;
    uint old = valid ? wh[d] : 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (valid && lane == 31u - clz(peers)) wh[d] = old + popcount(peers);
    barrier(CLK_LOCAL_MEM_FENCE);
    return old + popcount(peers & ((1u << lane) - 1u));
}
#endif
