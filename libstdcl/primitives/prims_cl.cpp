// SPDX-License-Identifier: MIT
// prims_cl.cpp: the OpenCL C text of clsort and clscan (prims.hpp says how it is
// put together and built).
//
// Two layouts, as clreduce's, chosen by device type:
// - GPU: work-groups of 256 work-items, each a tile of consecutive elements,
//   loads and stores that neighbouring work-items make to neighbouring
//   addresses, and local memory for what the group shares.
// - CPU: one work-item a group, each a contiguous chunk it walks in order
//   (PoCL runs a group on one core; a core streams through its own memory).
// The CPU layout is reduce-then-scan: a pass counts (or sums) per tile, a small
// scan turns the counts into offsets, and a pass rewrites each tile from them.
// On a GPU the scans (but float sums) and each pass of the sort read their data
// once, with a decoupled look-back between the tiles.
//
// The sort is an LSD radix sort with 8-bit digits on keys mapped to unsigned
// integers whose order is the wanted one (map_key: signed keys get the sign bit
// flipped; floats are ordered by their bits, with -0.0 before +0.0 and every NaN
// after +inf; descending inverts the mapped key), mapped at the first pass's
// loads and mapped back at the last pass's stores.  Each pass is stable.  On a
// GPU a tile's keys are ranked per warp (32 work-items in a row), in order,
// with the group's local memory (or, with STDCL_WANT_NV_WARP defined, on
// NVIDIA's GPUs by default, with eight ballots of the warp's vote instruction
// through inline PTX), then placed in local memory in digit order so that each
// digit's run is stored to consecutive addresses.
#include "primitives/prims.hpp"

namespace stdcl {

// Shared by every program: sizes, helpers, and the warp operations.
const char* const kPrimsCommon = R"CLC(
#define WG 256
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
)CLC";

// The scans of one element type and operation: T, OP(a, b), ID (the identity),
// SITEMS (elements a work-item scans on a GPU) and SFX (the names' suffix) are
// defined before it.  Kernels (x the layout, gpu or cpu):
//   stdcl_scan_reduce_<SFX>_x  part[t] = the fold of tile t
//   stdcl_scan_parts_<SFX>_x   partx[t] = carry OP the fold of tiles before t;
//                              partx[nparts] = carry OP all of them
//   stdcl_scan_tiles_<SFX>_x   out = the scan of in, tile t from partx[t]
//   stdcl_scan_onepass_<SFX>_gpu  out = the scan of in from carry in one pass
//                              (decoupled look-back; SWORDS: 32-bit halves of T)
// chunk: elements a tile (cpu layout); a gpu tile is WG * SITEMS.  The program
// holds one layout's: STDCL_LAYOUT_GPU is 1 for the gpu layout, 0 for the cpu.
const char* const kScanBody = R"CLC(
#define STILE (WG * SITEMS)
#define SPAD(j) ((j) + ((j) >> 5))
// The group's exclusive scan of one value per work-item; *total: all of them.
#if STDCL_LAYOUT_GPU
inline T CAT(block_excl_, SFX)(T v, __local T* tmp, T* total)
{
    uint lid = get_local_id(0);
    tmp[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = 1; off < WG; off <<= 1) {
        T x = tmp[lid];
        if (lid >= off) x = OP(tmp[lid - off], x);
        barrier(CLK_LOCAL_MEM_FENCE);
        tmp[lid] = x;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    *total = tmp[WG - 1];
    T r = lid ? tmp[lid - 1] : ID;
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

// The same in fewer steps: each warp's 32 values (5 steps), then the 8 warps'
// totals; wt holds NWARP + 1 values.
inline T CAT(block_excl_w_, SFX)(T v, __local T* tmp, __local T* wt, T* total)
{
    uint lid = get_local_id(0), lane = lid & 31u;
    tmp[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = 1; off < 32u; off <<= 1) {
        T x = tmp[lid];
        if (lane >= off) x = OP(tmp[lid - off], x);
        barrier(CLK_LOCAL_MEM_FENCE);
        tmp[lid] = x;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) {
        T a = ID;
        for (uint w = 0; w < NWARP; ++w) {
            T t = tmp[w * 32u + 31u];
            wt[w] = a;
            a = OP(a, t);
        }
        wt[NWARP] = a;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    *total = wt[NWARP];
    T r = OP(wt[lid >> 5], lane ? tmp[lid - 1] : ID);
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

// A tile of cnt elements into buf (padded; ID past cnt), and back out.  A whole
// tile's loads are all issued before the first is used: one load in flight per
// work-item left the scans at half the copy bandwidth on an H200.
inline void CAT(tile_load_, SFX)(__global const T* in, __local T* buf, uint cnt)
{
    uint lid = get_local_id(0);
    if (cnt == STILE) {
        T r[SITEMS];
#pragma unroll
        for (uint i = 0; i < SITEMS; ++i) r[i] = in[lid + i * WG];
#pragma unroll
        for (uint i = 0; i < SITEMS; ++i) buf[SPAD(lid + i * WG)] = r[i];
    } else {
        for (uint j = lid; j < STILE; j += WG) buf[SPAD(j)] = j < cnt ? in[j] : ID;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}
// The work-item's SITEMS consecutive elements of the loaded tile into v; their fold.
inline T CAT(tile_items_, SFX)(__local const T* buf, T* v)
{
    uint lid = get_local_id(0);
    T a = ID;
    for (uint i = 0; i < SITEMS; ++i) {
        v[i] = buf[SPAD(lid * SITEMS + i)];
        a = OP(a, v[i]);
    }
    return a;
}
// Their scan from run (the prefix of the elements before them) back into buf.
inline void CAT(tile_rescan_, SFX)(__local T* buf, const T* v, T run, uint excl)
{
    uint lid = get_local_id(0);
    for (uint i = 0; i < SITEMS; ++i) {
        T next = OP(run, v[i]);
        buf[SPAD(lid * SITEMS + i)] = excl ? run : next;
        run = next;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}
inline void CAT(tile_store_, SFX)(__global T* out, __local const T* buf, uint cnt)
{
    uint lid = get_local_id(0);
    if (cnt == STILE) {
#pragma unroll
        for (uint i = 0; i < SITEMS; ++i) out[lid + i * WG] = buf[SPAD(lid + i * WG)];
    } else {
        for (uint j = lid; j < cnt; j += WG) out[j] = buf[SPAD(j)];
    }
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void CAT(CAT(stdcl_scan_reduce_, SFX), _gpu)(__global const T* in, ulong off, ulong n, ulong chunk,
                                             __global T* part)
{
    __local T tmp[WG];
    (void)chunk;
    uint lid = get_local_id(0);
    ulong base = (ulong)get_group_id(0) * STILE;
    uint cnt = (uint)min((ulong)STILE, n - base);
    in += off + base;
    T a = ID;
    if (cnt == STILE) {
        T r[SITEMS];
#pragma unroll
        for (uint i = 0; i < SITEMS; ++i) r[i] = in[lid + i * WG];
        for (uint i = 0; i < SITEMS; ++i) a = OP(a, r[i]);
    } else {
        for (uint j = lid; j < cnt; j += WG) a = OP(a, in[j]);
    }
    T total;
    CAT(block_excl_, SFX)(a, tmp, &total);
    if (lid == 0) part[get_group_id(0)] = total;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void CAT(CAT(stdcl_scan_parts_, SFX), _gpu)(__global const T* part, __global T* partx, uint nparts, T carry)
{
    __local T tmp[WG];
    uint lid = get_local_id(0);
    for (uint b = 0; b < nparts; b += WG) {
        T v = b + lid < nparts ? part[b + lid] : ID;
        T total;
        T x = CAT(block_excl_, SFX)(v, tmp, &total);
        if (b + lid < nparts) partx[b + lid] = OP(carry, x);
        carry = OP(carry, total);
    }
    if (lid == 0) partx[nparts] = carry;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void CAT(CAT(stdcl_scan_tiles_, SFX), _gpu)(__global const T* in, ulong ioff, __global T* out, ulong ooff,
                                            ulong n, ulong chunk, __global const T* partx, uint excl)
{
    __local T buf[STILE + STILE / 32];
    __local T tmp[WG];
    __local T wt[NWARP + 1];
    (void)chunk;
    uint tile = get_group_id(0);
    ulong base = (ulong)tile * STILE;
    uint cnt = (uint)min((ulong)STILE, n - base);
    in += ioff + base;
    out += ooff + base;
    CAT(tile_load_, SFX)(in, buf, cnt);
    T v[SITEMS];
    T a = CAT(tile_items_, SFX)(buf, v);
    T total;
    CAT(tile_rescan_, SFX)(buf, v, OP(partx[tile], CAT(block_excl_w_, SFX)(a, tmp, wt, &total)), excl);
    CAT(tile_store_, SFX)(out, buf, cnt);
}

#ifdef SWORDS
// The one-pass scan (decoupled look-back), in clscan's programs (which define
// SWORDS; clsort's scan of its counts does not).  state: a ticket counter (the first
// 8 bytes), then SWORDS 64-bit words per tile, each the tile's tag (epoch << 2 |
// flag: 1 its fold, 2 its inclusive prefix) in the high half and 32 bits of the
// value in the low half.  A word tagged with another epoch is not there yet, so
// the words need no clearing between calls; a value of two words counts only
// when both carry the same tag (each tag is written once a call), so no fence
// orders them.
#define SW_FOLD 1u
#define SW_INCL 2u
#if SWORDS == 1
#define SW_BITS(v, k) as_uint(v)
#define SW_VALUE(lo, hi) CAT(as_, T)(lo)
#else
#define SW_BITS(v, k) ((k) ? as_uint2(v).y : as_uint2(v).x)
#define SW_VALUE(lo, hi) CAT(as_, T)((uint2)((lo), (hi)))
#endif
inline void CAT(sw_publish_, SFX)(volatile __global ulong* sw, uint tile, uint tag, T v)
{
    for (uint k = 0; k < SWORDS; ++k) sw[tile * SWORDS + k] = ((ulong)tag << 32) | SW_BITS(v, k);
}
// Tile t's flag (0 while it has published nothing this epoch) and *v.
inline uint CAT(sw_peek_, SFX)(volatile __global ulong* sw, uint t, uint epoch, T* v)
{
    ulong w0 = sw[t * SWORDS];
    uint tag = (uint)(w0 >> 32);
    if ((tag >> 2) != epoch) return 0;
#if SWORDS == 1
    *v = SW_VALUE((uint)w0, 0u);
#else
    ulong w1 = sw[t * SWORDS + 1];
    if ((uint)(w1 >> 32) != tag) return 0;
    *v = SW_VALUE((uint)w0, (uint)w1);
#endif
    return tag & 3u;
}

// Tiles are taken in the order the groups start (the ticket), so every tile a
// group waits for belongs to a group already running: the look-back cannot wait
// for a group that is not scheduled.  The group with the last ticket resets the
// counter for the next call (every ticket is taken by then; the next call's
// kernel starts after this one ends).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void CAT(CAT(stdcl_scan_onepass_, SFX), _gpu)(__global const T* in, ulong ioff, __global T* out, ulong ooff,
                                              ulong n, __global uint* state, uint nparts, uint epoch, T carry,
                                              uint excl)
{
    __local T buf[STILE + STILE / 32];
    __local T tmp[WG];
    __local T wt[NWARP + 1];
    __local T lb_val[32];
    __local uint lb_flag[32];
    __local uint s_tile, s_done;
    __local T s_prefix;
    uint lid = get_local_id(0);
    volatile __global ulong* sw = (volatile __global ulong*)state + 1;
    if (lid == 0) {
        uint t = atomic_inc(state);
        if (t == nparts - 1) atomic_xchg(state, 0u);
        s_tile = t;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint tile = s_tile;
    ulong base = (ulong)tile * STILE;
    uint cnt = (uint)min((ulong)STILE, n - base);
    in += ioff + base;
    out += ooff + base;
    CAT(tile_load_, SFX)(in, buf, cnt);
    T v[SITEMS];
    T a = CAT(tile_items_, SFX)(buf, v);
    T total;
    T x = CAT(block_excl_w_, SFX)(a, tmp, wt, &total);
    if (lid == 0) {
        if (tile == 0) {
            CAT(sw_publish_, SFX)(sw, 0, (epoch << 2) | SW_INCL, OP(carry, total));
            s_prefix = carry;
            s_done = 1;
        } else {
            CAT(sw_publish_, SFX)(sw, tile, (epoch << 2) | SW_FOLD, total);
            s_prefix = ID;
            s_done = 0;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // The look-back, 32 tiles at a time, nearest first: fold back to the first
    // inclusive prefix.
    int j = (int)tile - 1;
    while (!s_done) {
        if (lid < 32) {
            int t = j - (int)lid;
            uint f = SW_INCL;
            T w = ID;
            if (t >= 0)
                while ((f = CAT(sw_peek_, SFX)(sw, (uint)t, epoch, &w)) == 0)
                    ;
            lb_flag[lid] = f;
            lb_val[lid] = w;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0) {
            T acc = ID;
            uint done = 0;
            for (uint k = 0; k < 32 && !done; ++k) {
                acc = OP(lb_val[k], acc);
                done = lb_flag[k] == SW_INCL;
            }
            s_prefix = OP(acc, s_prefix);
            s_done = done;
            if (done) CAT(sw_publish_, SFX)(sw, tile, (epoch << 2) | SW_INCL, OP(s_prefix, total));
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        j -= 32;
    }
    CAT(tile_rescan_, SFX)(buf, v, OP(s_prefix, x), excl);
    CAT(tile_store_, SFX)(out, buf, cnt);
}
#endif

#else
__kernel void CAT(CAT(stdcl_scan_reduce_, SFX), _cpu)(__global const T* in, ulong off, ulong n, ulong chunk,
                                                      __global T* part)
{
    ulong g = get_global_id(0);
    ulong b = g * chunk, e = min(b + chunk, n);
    in += off;
    T a0 = ID, a1 = ID, a2 = ID, a3 = ID;
    ulong i = b;
    for (; i + 4 <= e; i += 4) {
        a0 = OP(a0, in[i]);
        a1 = OP(a1, in[i + 1]);
        a2 = OP(a2, in[i + 2]);
        a3 = OP(a3, in[i + 3]);
    }
    for (; i < e; ++i) a0 = OP(a0, in[i]);
    part[g] = OP(OP(a0, a1), OP(a2, a3));
}

__kernel void CAT(CAT(stdcl_scan_parts_, SFX), _cpu)(__global const T* part, __global T* partx, uint nparts, T carry)
{
    for (uint t = 0; t < nparts; ++t) {
        T v = part[t];
        partx[t] = carry;
        carry = OP(carry, v);
    }
    partx[nparts] = carry;
}

__kernel void CAT(CAT(stdcl_scan_tiles_, SFX), _cpu)(__global const T* in, ulong ioff, __global T* out, ulong ooff,
                                                     ulong n, ulong chunk, __global const T* partx, uint excl)
{
    ulong g = get_global_id(0);
    ulong b = g * chunk, e = min(b + chunk, n);
    in += ioff;
    out += ooff;
    T run = partx[g];
    if (excl) {
        for (ulong i = b; i < e; ++i) {
            T v = in[i];
            out[i] = run;
            run = OP(run, v);
        }
    } else {
        for (ulong i = b; i < e; ++i) {
            run = OP(run, in[i]);
            out[i] = run;
        }
    }
}
#endif
#undef STILE
#undef SPAD
)CLC";

// The sort of one key width: KU (the unsigned key type), KSIGN (its sign bit),
// KFLT (float keys: the offset that puts every NaN after +inf), ITEMS (keys a
// work-item ranks on a GPU) and SFX are defined before it.  mode (a pass's
// flags): bit 0 map the keys as loaded, bit 1 map them back as stored, bits 2-3
// the kind (0 unsigned, 1 signed, 2 float), bit 4 descending.  Values move with
// their keys: vmode 0 none, 1, 2, 4, 8 or 16 (that many bytes, aligned), 255
// (vsize bytes, any alignment); voff and the values' offsets are in bytes.
const char* const kSortBody = R"CLC(
#define TILE (WG * ITEMS)
inline KU CAT(map_key, SFX)(KU x, uint mode)
{
    uint kind = (mode >> 2) & 3u;
    KU m = x;
    if (kind == 1u) m = x ^ KSIGN;
    if (kind == 2u) m = ((x & KSIGN) ? ~x : (x | KSIGN)) - KFLT;
    return (mode & 16u) ? ~m : m;
}
inline KU CAT(unmap_key, SFX)(KU m, uint mode)
{
    uint kind = (mode >> 2) & 3u;
    if (mode & 16u) m = ~m;
    if (kind == 1u) return m ^ KSIGN;
    if (kind == 2u) {
        m += KFLT;
        return (m & KSIGN) ? (m ^ KSIGN) : ~m;
    }
    return m;
}
inline void CAT(move_value, SFX)(__global const uchar* vsrc, __global uchar* vdst, ulong si, ulong di, uint vmode,
                                 uint vsize)
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
// The digits of every pass at once: ghist[p * 256 + d] += the keys (mapped as
// mode says) whose digit p is d, over the group's run of `per` keys.  ghist is
// zero before the first group.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void CAT(CAT(stdcl_sort_hist_, SFX), _gpu)(__global const KU* src, ulong soff, ulong n, ulong per, uint mode,
                                           __global uint* ghist)
{
    __local uint h[PASSES * 256];
    uint lid = get_local_id(0);
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
            KU m = CAT(map_key, SFX)(k[u], mode);
#pragma unroll
            for (uint p = 0; p < PASSES; ++p) atomic_inc(&h[p * 256u + ((uint)(m >> (p * 8u)) & 255u)]);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint j = lid; j < PASSES * 256u; j += WG)
        if (h[j]) atomic_add(&ghist[j], h[j]);
}

// The group's exclusive scan of one uint per work-item (x[lid] = v); returns
// the work-item's.
inline uint CAT(sort_excl_, SFX)(uint v, __local uint* x)
{
    uint lid = get_local_id(0);
    x[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = 1; off < WG; off <<= 1) {
        uint y = x[lid];
        if (lid >= off) y += x[lid - off];
        barrier(CLK_LOCAL_MEM_FENCE);
        x[lid] = y;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    uint r = x[lid] - v;
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}


#else
__kernel void CAT(CAT(stdcl_sort_count_, SFX), _cpu)(__global const KU* src, ulong soff, ulong n, ulong chunk,
                                                     uint shift, uint mode, __global uint* counts, uint ntiles)
{
    uint g = get_global_id(0);
    uint h[256];
    for (uint d = 0; d < 256u; ++d) h[d] = 0;
    ulong b = (ulong)g * chunk, e = min(b + chunk, n);
    src += soff;
    if (mode & 1u)
        for (ulong i = b; i < e; ++i) h[(uint)(CAT(map_key, SFX)(src[i], mode) >> shift) & 255u]++;
    else
        for (ulong i = b; i < e; ++i) h[(uint)(src[i] >> shift) & 255u]++;
    for (uint d = 0; d < 256u; ++d) counts[d * ntiles + g] = h[d];
}

__kernel void CAT(CAT(stdcl_sort_scatter_, SFX), _cpu)(__global const KU* src, ulong soff, __global KU* dst,
                                                       ulong doff, __global const uchar* vsrc, ulong vsoff,
                                                       __global uchar* vdst, ulong vdoff, uint vmode, uint vsize,
                                                       ulong n, ulong chunk, uint shift, uint mode,
                                                       __global const uint* offs, uint ntiles)
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
        if (mode & 1u) k = CAT(map_key, SFX)(k, mode);
        uint p = pos[(uint)(k >> shift) & 255u]++;
        dst[p] = (mode & 2u) ? CAT(unmap_key, SFX)(k, mode) : k;
        if (vmode) CAT(move_value, SFX)(vsrc, vdst, i, p, vmode, vsize);
    }
}
#endif
#undef TILE
)CLC";

// One pass of the GPU sort (8 bits of the key from shift), in one sweep over the
// keys; the defines of kSortBody, and PAIRS: 0 the keys alone
// (stdcl_sort_onesweep_<SFX>_gpu), 1 their values too
// (stdcl_sort_onesweep_pairs_<SFX>_gpu).
//
// Each group takes the next tile by a ticket (state[0]), counts its digits and
// publishes the counts at once, ranks its keys by digit, stably, and puts them in
// digit order in local memory.  Work-item d meanwhile looks back over the tiles
// before it for digit d's first output position: a decoupled look-back per
// digit, as clscan's.  state holds, after the ticket's 8 bytes, one 64-bit word
// per (tile, digit): its tag (epoch << 2 | 1 the tile's count, 2 the count of
// every tile up to and with it) above the count.  Tile 0 starts each digit at
// its place in the whole array, from ghist[pass * 256 + d].  The keys then go
// out in digit order, each digit's run to consecutive addresses; values of 4, 8
// or 16 bytes are loaded as the keys are (PAIR_ITEMS a work-item) and put in the same order in local
// memory, 32 bits at a time, so that they too are read and written in runs.
const char* const kSortPass = R"CLC(
#if STDCL_LAYOUT_GPU
// The loops over a work-item's keys are unrolled (so that its keys stay in
// registers) with NVIDIA's warp instructions only: the portable kernels, left
// to the compiler, build in a third of the time on PoCL.
#if PAIRS
#define SO_ITEMS PAIR_ITEMS
#else
#define SO_ITEMS ITEMS
#endif
#define TILE (WG * SO_ITEMS)
#define SO_FOLD 1u
#define SO_INCL 2u
#if PAIRS
#define SO_NAME CAT(CAT(stdcl_sort_onesweep_pairs_, SFX), _gpu)
#else
#define SO_NAME CAT(CAT(stdcl_sort_onesweep_, SFX), _gpu)
#endif
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void SO_NAME(__global const KU* src, ulong soff, __global KU* dst, ulong doff, __global const uchar* vsrc,
             ulong vsoff, __global uchar* vdst, ulong vdoff, uint vmode, uint vsize, ulong n, uint shift, uint mode,
             __global const uint* ghist, uint pass, __global uint* state, uint ntiles, uint epoch)
{
    __local uint whist[NWARP * 256];
    __local uint dstart[WG];  // where each digit's run starts in the tile
    __local uint gpos[WG];    // and in the output, less dstart
    __local KU skey[TILE];
#if PAIRS
    // Values of 4, 8 or 16 bytes: 32 bits of each, in key order; others: each
    // key's index in the tile (as ushort).
    __local uint sval[TILE];
    __local ushort sperm[TILE];  // others: sperm[pos] = j; else sperm[j] = pos
#endif
    __local uint s_tile;
#ifndef STDCL_NV_WARP
    __local uint wdig[WG];
    __local uint thist[256];  // the tile's count of each digit
#endif
    uint lid = get_local_id(0), warp = lid >> 5, lane = lid & 31u;
    volatile __global ulong* sw = (volatile __global ulong*)state + 1;
    if (lid == 0) {
        uint t = atomic_inc(state);
        if (t == ntiles - 1) atomic_xchg(state, 0u);
        s_tile = t;
    }
    for (uint j = lid; j < NWARP * 256; j += WG) whist[j] = 0;
#ifndef STDCL_NV_WARP
    thist[lid] = 0;
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    uint tile = s_tile;
    ulong base = (ulong)tile * TILE;
    uint cnt = (uint)min((ulong)TILE, n - base);
    __global const KU* s = src + soff + base;
    uint seg = warp * (TILE / NWARP);
    KU key[SO_ITEMS];
    uint rank[SO_ITEMS];
    // Every load of the tile issued before the first key is used.
    if (cnt == TILE) {
#ifdef STDCL_NV_WARP
#pragma unroll
#endif
        for (uint r = 0; r < SO_ITEMS; ++r) key[r] = s[seg + r * 32u + lane];
    } else {
#ifdef STDCL_NV_WARP
#pragma unroll
#endif
        for (uint r = 0; r < SO_ITEMS; ++r) {
            uint j = seg + r * 32u + lane;
            key[r] = j < cnt ? s[j] : (KU)0;
        }
    }
    if (mode & 1u) {
#ifdef STDCL_NV_WARP
#pragma unroll
#endif
        for (uint r = 0; r < SO_ITEMS; ++r) key[r] = CAT(map_key, SFX)(key[r], mode);
    }
    // The portable kernels count the tile's digits first and publish the counts
    // before they rank the keys.  With NVIDIA's warp instructions the counts are
    // published after the ranks: counting first cost 70 registers more a
    // work-item there, and it was slower on an H200.
#ifndef STDCL_NV_WARP
    for (uint r = 0; r < SO_ITEMS; ++r) {
        uint valid = seg + r * 32u + lane < cnt;
        uint d = (uint)(key[r] >> shift) & 255u;
        if (valid) atomic_inc(&thist[d]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint total = thist[lid];
    if (tile != 0) sw[(ulong)tile * 256u + lid] = ((ulong)((epoch << 2) | SO_FOLD) << 32) | total;
#endif
    // Rank: the keys of each warp's run in order, 32 at a time; whist[warp][d]
    // counts the warp's keys of digit d so far.
#ifdef STDCL_NV_WARP
#pragma unroll
#endif
    for (uint r = 0; r < SO_ITEMS; ++r) {
        uint valid = seg + r * 32u + lane < cnt;
        uint d = (uint)(key[r] >> shift) & 255u;
#ifdef STDCL_NV_WARP
        uint peers = nv_peers(d, valid);
        volatile __local uint* wh = whist + warp * 256;
        uint old = valid ? wh[d] : 0u;
        nv_syncwarp();
        if (valid && lane == 31u - clz(peers)) wh[d] = old + popcount(peers);
        nv_syncwarp();
        rank[r] = old + popcount(peers & nv_lanemask_lt());
#else
        if (!valid) d = 256u + lane;
        wdig[lid] = d;
        barrier(CLK_LOCAL_MEM_FENCE);
        uint peers = 0;
        for (uint l = 0; l < 32u; ++l) peers |= (wdig[(warp << 5) + l] == d ? 1u : 0u) << l;
        uint old = valid ? whist[warp * 256 + d] : 0u;
        barrier(CLK_LOCAL_MEM_FENCE);
        if (valid && lane == 31u - clz(peers)) whist[warp * 256 + d] = old + popcount(peers);
        barrier(CLK_LOCAL_MEM_FENCE);
        rank[r] = old + popcount(peers & ((1u << lane) - 1u));
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // Work-item lid takes digit lid: the warps' exclusive prefixes, and where
    // the digit's run starts in the tile.
    uint run = 0;
    for (uint w = 0; w < NWARP; ++w) {
        uint c = whist[w * 256 + lid];
        whist[w * 256 + lid] = run;
        run += c;
    }
#ifdef STDCL_NV_WARP
    uint total = run;
    if (tile != 0) sw[(ulong)tile * 256u + lid] = ((ulong)((epoch << 2) | SO_FOLD) << 32) | total;
#endif
    uint mine = CAT(sort_excl_, SFX)(total, gpos);
    dstart[lid] = mine;
    barrier(CLK_LOCAL_MEM_FENCE);
    // The keys in digit order in local memory (while the tiles before finish).
#ifdef STDCL_NV_WARP
#pragma unroll
#endif
    for (uint r = 0; r < SO_ITEMS; ++r) {
        uint j = seg + r * 32u + lane;
        if (j < cnt) {
            uint d = (uint)(key[r] >> shift) & 255u;
            uint pos = dstart[d] + whist[warp * 256 + d] + rank[r];
            skey[pos] = key[r];
#if PAIRS
            if (vmode != 4u && vmode != 8u && vmode != 16u)
                sperm[pos] = (ushort)j;
            else
                sperm[j] = (ushort)pos;
#endif
        }
    }
    // Digit lid's first position: tile 0's from the whole array's counts, the
    // others' from the tiles before them, nearest first, up to the first
    // inclusive count.  (Reading several tiles' words at once was slower on an
    // H200.)
    uint prefix = 0;
    if (tile == 0) {
        prefix = CAT(sort_excl_, SFX)(ghist[pass * 256u + lid], gpos);
    } else {
        for (int t = (int)tile - 1;; --t) {
            ulong w;
            do
                w = sw[(ulong)t * 256u + lid];
            while ((uint)(w >> 34) != epoch);
            prefix += (uint)w;
            if (((uint)(w >> 32) & 3u) == SO_INCL) break;
        }
    }
    sw[(ulong)tile * 256u + lid] = ((ulong)((epoch << 2) | SO_INCL) << 32) | (prefix + total);
    gpos[lid] = prefix - mine;
    barrier(CLK_LOCAL_MEM_FENCE);
    dst += doff;
#ifdef STDCL_NV_WARP
#pragma unroll
#endif
    for (uint i = 0; i < SO_ITEMS; ++i) {
        uint j = lid + i * WG;
        if (j < cnt) {
            KU k = skey[j];
            uint g = gpos[(uint)(k >> shift) & 255u] + j;  // below 2^32 (n is)
            dst[g] = (mode & 2u) ? CAT(unmap_key, SFX)(k, mode) : k;
#if PAIRS
            if (vmode != 4u && vmode != 8u && vmode != 16u)
                CAT(move_value, SFX)(vsrc + vsoff, vdst + vdoff, base + sperm[j], g, vmode, vsize);
#endif
        }
    }
#if PAIRS
    if (vmode == 4u || vmode == 8u || vmode == 16u) {
        uint words = vmode / 4u;
        __global const uint* vs = (__global const uint*)(vsrc + vsoff) + base * words;
        __global uint* vd = (__global uint*)(vdst + vdoff);
        for (uint w = 0; w < words; ++w) {
            uint v[SO_ITEMS];
#ifdef STDCL_NV_WARP
#pragma unroll
#endif
            for (uint r = 0; r < SO_ITEMS; ++r) {
                uint j = seg + r * 32u + lane;
                v[r] = j < cnt ? vs[j * words + w] : 0u;
            }
            barrier(CLK_LOCAL_MEM_FENCE);  // the last round's sval read
#ifdef STDCL_NV_WARP
#pragma unroll
#endif
            for (uint r = 0; r < SO_ITEMS; ++r) {
                uint j = seg + r * 32u + lane;
                if (j < cnt) sval[sperm[j]] = v[r];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
#ifdef STDCL_NV_WARP
#pragma unroll
#endif
            for (uint i = 0; i < SO_ITEMS; ++i) {
                uint j = lid + i * WG;
                if (j < cnt) vd[(ulong)(gpos[(uint)(skey[j] >> shift) & 255u] + j) * words + w] = sval[j];
            }
        }
    }
#endif
}
#undef SO_NAME
#undef SO_FOLD
#undef SO_INCL
#undef TILE
#undef SO_ITEMS
#endif
)CLC";

}  // namespace stdcl
