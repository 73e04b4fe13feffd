/* SPDX-License-Identifier: MIT */
/* sort_body.h: the sort kernels of the program's key width but the GPU's
 * one-sweep pass (sort_pass.h): stdcl_sort_hist (GPU layout), stdcl_sort_count
 * and stdcl_sort_scatter (CPU layout). */
// KU (the unsigned key type), KSIGN (its sign bit), KFLT (float keys: the
// offset that puts every NaN after +inf), PASSES (8-bit digits a key) and
// ITEMS (keys a work-item ranks on a GPU) are defined before it (sort.cl).
// mode (a pass's flags, protocol.h): bit 0 map the keys as loaded, bit 1 map
// them back as stored, bits 2-3 the kind (0 unsigned, 1 signed, 2 float), bit 4
// descending.  Values move with their keys: vmode 0 none, 1, 2, 4, 8 or 16
// (that many bytes, aligned), 255 (vsize bytes, any alignment); voff and the
// values' offsets are in bytes.
#include "common.h"
#define TILE (WG * ITEMS)
inline KU map_key(KU x, uint mode)
{
    uint kind = (mode >> SORT_KIND_SHIFT) & SORT_KIND_MASK;
    KU m = x;
    if (kind == 1u) m = x ^ KSIGN;
    if (kind == 2u) m = ((x & KSIGN) ? ~x : (x | KSIGN)) - KFLT;
    return (mode & SORT_DESC) ? ~m : m;
}
inline KU unmap_key(KU m, uint mode)
{
    uint kind = (mode >> SORT_KIND_SHIFT) & SORT_KIND_MASK;
    if (mode & SORT_DESC) m = ~m;
    if (kind == 1u) return m ^ KSIGN;
    if (kind == 2u) {
        m += KFLT;
        return (m & KSIGN) ? (m ^ KSIGN) : ~m;
    }
    return m;
}
inline void move_value(__global const uchar* vsrc, __global uchar* vdst, ulong si, ulong di, uint vmode, uint vsize)
{
    switch (vmode) {
    case 1u: vdst[di] = vsrc[si]; break;
    case 2u: ((__global ushort*)vdst)[di] = ((__global const ushort*)vsrc)[si]; break;
    case 4u: ((__global uint*)vdst)[di] = ((__global const uint*)vsrc)[si]; break;
    case 8u: ((__global ulong*)vdst)[di] = ((__global const ulong*)vsrc)[si]; break;
    case 16u: ((__global uint4*)vdst)[di] = ((__global const uint4*)vsrc)[si]; break;
    default:
        for (uint b = 0; b < vsize; ++b) vdst[di * vsize + b] = vsrc[si * vsize + b];
    }
}

#if STDCL_LAYOUT_GPU
// The digits of every pass at once: c[p * 256 + d] += the keys (mapped as
// mode says) whose digit p is d, over the group's run of `per` keys, where c
// is half `side` of ghist (protocol.h: SORT_COUNT_ROWS), zero before the first
// group.  The groups zero the other half, for the next call.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void stdcl_sort_hist(__global const KU* src, ulong soff, ulong n, ulong per, uint mode, __global uint* ghist,
                     uint side)
{
    __local uint h[PASSES * 256];
    uint lid = get_local_id(0);
    __global uint* other = ghist + (1u - side) * (SORT_COUNT_ROWS * 256u);
    for (uint j = get_group_id(0) * WG + lid; j < SORT_COUNT_ROWS * 256u; j += get_num_groups(0) * WG) other[j] = 0;
    ghist += side * (SORT_COUNT_ROWS * 256u);
    for (uint j = lid; j < PASSES * 256u; j += WG) h[j] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    ulong b = (ulong)get_group_id(0) * per, e = min(b + per, n);
    src += soff;
    for (ulong i = b + lid; i < e; i += 4 * WG) {
        KU k[4];
#pragma unroll
        for (uint u = 0; u < 4; ++u) k[u] = i + u * WG < e ? src[i + u * WG] : (KU)0;
#pragma unroll
        for (uint u = 0; u < 4; ++u) {
            if (i + u * WG >= e) break;
            KU m = map_key(k[u], mode);
#pragma unroll
            for (uint p = 0; p < PASSES; ++p) atomic_inc(&h[p * 256u + ((uint)(m >> (p * 8u)) & 255u)]);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint j = lid; j < PASSES * 256u; j += WG)
        if (h[j]) atomic_add(&ghist[j], h[j]);
}

// The exclusive scan of one uint per digit over the group's first 256
// work-items (digit: whether this work-item is one of them; x: 256 words);
// returns the work-item's, 0 for the others.  Every work-item of the group
// calls it.
inline uint sort_excl(uint v, __local uint* x, uint digit)
{
    uint lid = get_local_id(0);
    if (digit) x[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = 1; off < 256u; off <<= 1) {
        uint y = 0;
        if (digit) {
            y = x[lid];
            if (lid >= off) y += x[lid - off];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (digit) x[lid] = y;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    uint r = digit ? x[lid] - v : 0u;
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}


#else
__kernel void stdcl_sort_count(__global const KU* src, ulong soff, ulong n, ulong chunk, uint shift, uint mode,
                               __global uint* counts, uint ntiles)
{
    uint g = get_global_id(0);
    uint h[256];
    for (uint d = 0; d < 256u; ++d) h[d] = 0;
    ulong b = (ulong)g * chunk, e = min(b + chunk, n);
    src += soff;
    if (mode & SORT_MAP_IN)
        for (ulong i = b; i < e; ++i) h[(uint)(map_key(src[i], mode) >> shift) & 255u]++;
    else
        for (ulong i = b; i < e; ++i) h[(uint)(src[i] >> shift) & 255u]++;
    for (uint d = 0; d < 256u; ++d) counts[d * ntiles + g] = h[d];
}

__kernel void stdcl_sort_scatter(__global const KU* src, ulong soff, __global KU* dst, ulong doff,
                                 __global const uchar* vsrc, ulong vsoff, __global uchar* vdst, ulong vdoff, uint vmode,
                                 uint vsize, ulong n, ulong chunk, uint shift, uint mode, __global const uint* offs,
                                 uint ntiles)
{
    uint g = get_global_id(0);
    uint pos[256];
    for (uint d = 0; d < 256u; ++d) pos[d] = offs[d * ntiles + g];
    ulong b = (ulong)g * chunk, e = min(b + chunk, n);
    src += soff;
    dst += doff;
    vsrc += vsoff;
    vdst += vdoff;
    for (ulong i = b; i < e; ++i) {
        KU k = src[i];
        if (mode & SORT_MAP_IN) k = map_key(k, mode);
        uint p = pos[(uint)(k >> shift) & 255u]++;
        dst[p] = (mode & SORT_MAP_OUT) ? unmap_key(k, mode) : k;
        if (vmode) move_value(vsrc, vdst, i, p, vmode, vsize);
    }
}
#endif
#undef TILE
