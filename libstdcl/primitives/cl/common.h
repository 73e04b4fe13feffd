/* SPDX-License-Identifier: MIT */
/* common.h: what every primitives program shares: sizes and token pasting. */
#ifndef STDCL_PRIM_COMMON_H
#define STDCL_PRIM_COMMON_H
#include "protocol.h"
#define WG PRIM_WG
#define NWARP (WG / 32)
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
/* PRIM_GROUP_ORDER: 1 where a kernel's work-groups start in the order of
 * their ids, so that a one-pass kernel (clscan's look-back, each pass of
 * clsort on a GPU) can take its group's id as its tile: every tile a group
 * waits for then belongs to a group already started.  NVIDIA's GPUs start
 * them so (CUB's one-pass scan takes its tile from the block's id too).
 * Elsewhere (0) each group takes the next tile by a ticket, an atomic on one
 * counter; without them a 2^24-key sort is 9-11% faster on an H200
 * (BENCHMARKS Table 15.15).  STDCL_BUILD_OPTIONS="-D PRIM_GROUP_ORDER=0" keeps the
 * tickets on any device. */
#ifndef PRIM_GROUP_ORDER
#if defined(__NVIDIA__) && defined(__GPU__)
#define PRIM_GROUP_ORDER 1
#else
#define PRIM_GROUP_ORDER 0
#endif
#endif
// The tile of a one-pass kernel's work-group, taken by one work-item of the
// group: its group's id, or the next ticket from *counter (the group with the
// last of the ntiles tickets resets it for the next call).
inline uint prim_take_tile(volatile __global uint* counter, uint ntiles)
{
#if PRIM_GROUP_ORDER
    (void)counter;
    (void)ntiles;
    return (uint)get_group_id(0);
#else
    uint t = atomic_inc(counter);
    if (t == ntiles - 1) atomic_xchg(counter, 0u);
    return t;
#endif
}
#endif
