/* SPDX-License-Identifier: MIT */
/* scan_body.h: the scans of one element type and operation, in the layout
 * STDCL_LAYOUT_GPU says (1 the GPU's, 0 the CPU's), included once by a
 * program (scan.cl; sort.cl in the CPU layout, for its digit counts).
 * T, OP(a, b), ID (the identity) and SITEMS (elements a work-item scans on a
 * GPU) are defined before it.  Kernels:
 *   stdcl_scan_reduce   part[t] = the fold of tile t
 *   stdcl_scan_parts    partx[t] = carry OP the fold of tiles before t;
 *                       partx[nparts] = carry OP all of them
 *   stdcl_scan_tiles    out = the scan of in, tile t from partx[t]
 *   stdcl_scan_onepass  (GPU layout) out = the scan of in from carry in one
 *                       pass (decoupled look-back; SWORDS: 32-bit halves of T)
 * carry: the fold of the ncarries values at carries (none: ID); over several
 * devices, one value: the fold of the slices of the array before this one,
 * copied from the device before (scan.cpp).  chunk: elements a tile (CPU layout); a GPU tile is
 * WG * SITEMS. */
#include "common.h"
#define STILE (WG * SITEMS)
#define SPAD(j) ((j) + (j) / SITEMS)
// The carry: the fold of the n values at c.
inline T carry_of(__global const T* c, uint n)
{
    T a = ID;
    for (uint i = 0; i < n; ++i) a = OP(a, c[i]);
    return a;
}
// The group's exclusive scan of one value per work-item; *total: all of them.
#if STDCL_LAYOUT_GPU
inline T block_excl(T v, __local T* tmp, T* total)
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
inline T block_excl_w(T v, __local T* tmp, __local T* wt, T* total)
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
inline void tile_load(__global const T* in, __local T* buf, uint cnt)
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
// The fold of the work-item's SITEMS consecutive elements of the loaded tile.
// They are read from buf again for their scan, not kept in registers: on an
// H200 the one-pass scan then takes 40 registers a work-item, not 64, and 6
// groups run at once on a compute unit instead of 4 (BENCHMARKS Table 15.15).
// The padding (SPAD: one element every SITEMS) has the work-items of a warp
// read different banks at each step.
inline T tile_items(__local const T* buf)
{
    uint lid = get_local_id(0);
    T a = ID;
    for (uint i = 0; i < SITEMS; ++i) a = OP(a, buf[SPAD(lid * SITEMS + i)]);
    return a;
}
// Their scan from run (the prefix of the elements before them) back into buf.
inline void tile_rescan(__local T* buf, T run, uint excl)
{
    uint lid = get_local_id(0);
    for (uint i = 0; i < SITEMS; ++i) {
        T next = OP(run, buf[SPAD(lid * SITEMS + i)]);
        buf[SPAD(lid * SITEMS + i)] = excl ? run : next;
        run = next;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}
inline void tile_store(__global T* out, __local const T* buf, uint cnt)
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
void stdcl_scan_reduce(__global const T* in, ulong off, ulong n, ulong chunk, __global T* part)
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
    block_excl(a, tmp, &total);
    if (lid == 0) part[get_group_id(0)] = total;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void stdcl_scan_parts(__global const T* part, __global T* partx, uint nparts, __global const T* carries, uint ncarries)
{
    __local T tmp[WG];
    uint lid = get_local_id(0);
    T carry = carry_of(carries, ncarries);
    for (uint b = 0; b < nparts; b += WG) {
        T v = b + lid < nparts ? part[b + lid] : ID;
        T total;
        T x = block_excl(v, tmp, &total);
        if (b + lid < nparts) partx[b + lid] = OP(carry, x);
        carry = OP(carry, total);
    }
    if (lid == 0) partx[nparts] = carry;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void stdcl_scan_tiles(__global const T* in, ulong ioff, __global T* out, ulong ooff, ulong n, ulong chunk,
                      __global const T* partx, uint excl)
{
    __local T buf[STILE + STILE / SITEMS];
    __local T tmp[WG];
    __local T wt[NWARP + 1];
    (void)chunk;
    uint tile = get_group_id(0);
    ulong base = (ulong)tile * STILE;
    uint cnt = (uint)min((ulong)STILE, n - base);
    in += ioff + base;
    out += ooff + base;
    tile_load(in, buf, cnt);
    T a = tile_items(buf);
    T total;
    tile_rescan(buf, OP(partx[tile], block_excl_w(a, tmp, wt, &total)), excl);
    tile_store(out, buf, cnt);
}

#ifdef SWORDS
// The one-pass scan (decoupled look-back), in clscan's programs (which define
// SWORDS; clsort's scan of its counts does not).  state: a ticket counter (the
// first 8 bytes, unused where PRIM_GROUP_ORDER), then each tile's tagged words
// (tagged.h).
#include "tagged.h"

// Tiles are taken in the order the groups start (the group's id where
// PRIM_GROUP_ORDER, common.h, else a ticket), so every tile a group waits for
// belongs to a group already running: the look-back cannot wait for a group
// that is not scheduled.  The group with the last ticket resets the counter for
// the next call (every ticket is taken by then; the next call's kernel starts
// after this one ends).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void stdcl_scan_onepass(__global const T* in, ulong ioff, __global T* out, ulong ooff, ulong n, __global uint* state,
                        uint nparts, uint epoch, __global const T* carries, uint ncarries, uint excl)
{
    __local T buf[STILE + STILE / SITEMS];
    __local T tmp[WG];
    __local T wt[NWARP + 1];
    __local T lb_val[32];
    __local uint lb_flag[32];
    __local uint s_tile, s_done;
    __local T s_prefix;
    uint lid = get_local_id(0);
    volatile __global ulong* sw = (volatile __global ulong*)state + 1;
    if (lid == 0) s_tile = prim_take_tile(state, nparts);
    barrier(CLK_LOCAL_MEM_FENCE);
    uint tile = s_tile;
    ulong base = (ulong)tile * STILE;
    uint cnt = (uint)min((ulong)STILE, n - base);
    in += ioff + base;
    out += ooff + base;
    tile_load(in, buf, cnt);
    T a = tile_items(buf);
    T total;
    T x = block_excl_w(a, tmp, wt, &total);
    if (lid == 0) {
        if (tile == 0) {
            T carry = carry_of(carries, ncarries);
            sw_publish(sw, 0, PRIM_TAG(epoch, PRIM_LB_INCL), OP(carry, total));
            s_prefix = carry;
            s_done = 1;
        } else {
            sw_publish(sw, tile, PRIM_TAG(epoch, PRIM_LB_FOLD), total);
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
            uint f = PRIM_LB_INCL;
            T w = ID;
            if (t >= 0)
                while ((f = sw_peek(sw, (uint)t, epoch, &w)) == 0)
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
                done = lb_flag[k] == PRIM_LB_INCL;
            }
            s_prefix = OP(acc, s_prefix);
            s_done = done;
            if (done) sw_publish(sw, tile, PRIM_TAG(epoch, PRIM_LB_INCL), OP(s_prefix, total));
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        j -= 32;
    }
    tile_rescan(buf, OP(s_prefix, x), excl);
    tile_store(out, buf, cnt);
}
#endif

#else
__kernel void stdcl_scan_reduce(__global const T* in, ulong off, ulong n, ulong chunk, __global T* part)
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

__kernel void stdcl_scan_parts(__global const T* part, __global T* partx, uint nparts, __global const T* carries,
                               uint ncarries)
{
    T carry = carry_of(carries, ncarries);
    for (uint t = 0; t < nparts; ++t) {
        T v = part[t];
        partx[t] = carry;
        carry = OP(carry, v);
    }
    partx[nparts] = carry;
}

__kernel void stdcl_scan_tiles(__global const T* in, ulong ioff, __global T* out, ulong ooff, ulong n, ulong chunk,
                               __global const T* partx, uint excl)
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
