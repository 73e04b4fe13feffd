/* SPDX-License-Identifier: MIT */
/* sort_pass.h: one pass of the GPU sort, for keys alone (PAIRS 0), with
 * values of any size (PAIRS 1) or with 4-byte values (PAIRS 4); sort.cl
 * includes it once for each (no include guard). */
// One pass of the GPU sort (8 bits of the key from shift), in one sweep over the
// keys; sort_body.h's definitions, and PAIRS: 0 the keys alone
// (stdcl_sort_onesweep), 1 their values too (stdcl_sort_onesweep_pairs), 4
// values of 4 bytes, aligned (stdcl_sort_onesweep_pairs4: the values' moves
// fixed at build time take fewer registers, so that a work-item takes
// PAIR4_ITEMS pairs, 16 to the other's 12: BENCHMARKS Table 15.19; in the wide
// form, 21 in groups of 384: PAIR4_WG, sort.cl).  A group is PRIM_WG (256)
// work-items, or more for PAIRS 4 (SO_WG); the first 256 take a digit each in
// the per-digit steps (SO_DIGIT).
//
// Each group takes the next tile (its group's id where PRIM_GROUP_ORDER,
// common.h, else by a ticket: state[0]), ranks its keys by
// digit, stably (rank.h: the ranker of the device), which counts its digits,
// publishes the counts, and puts the keys in digit order in local memory.
// Work-item d (d < 256) then looks back over the tiles before it for digit d's first
// output position: a decoupled look-back per
// digit, as clscan's.  state holds, after the ticket's 8 bytes, one 64-bit word
// per (tile, digit): its tag (epoch << 2 | 1 the tile's count, 2 the count of
// every tile up to and with it) above the count.  Tile 0 starts each digit at
// its place in the whole array, from ghist[row * 256 + d] (row: the pass's row
// of the call's half of the counts, protocol.h).  The keys then go
// out in digit order, each digit's run to consecutive addresses; values of 4, 8
// or 16 bytes are loaded as the keys are (PAIR_ITEMS a work-item; the first 32
// bits of each before the look-back, so that the loads land while it waits and
// the keys go out) and put in the same order in local memory, 32 bits at a
// time, so that they too are read and written in runs (4-byte values in
// NVIDIA's program: put there before the keys go out, each key's output
// position kept for its value: SO_KEEP_POS).  (Loading the values
// before the look-back, each key's output position kept in registers and the
// values put in skey's memory, ran clsort_by_key at 0.93x on an H200, and 0.86x
// with 16 pairs a work-item.  Loading them before the group's scans took 80
// registers a work-item, not 64, and was 12% slower; putting them in local
// memory as soon as the look-back ends, 3-6% slower.)
#include "common.h"
#include "rank.h"
#if STDCL_LAYOUT_GPU
// SO_WORDWISE: whether the values move 32 bits at a time through sval (4-,
// 8- and 16-byte values), else one by one through their index (sperm);
// SO_WORDS: their 32-bit words.  Fixed at build time for 4-byte values.
#if PAIRS == 4
#define SO_ITEMS PAIR4_ITEMS
#define SO_WG PAIR4_WG
#define SO_WORDWISE 1
#define SO_WORDS 1u
#define SO_KEEP_POS PAIR4_KEEP_POS
#elif PAIRS
#define SO_ITEMS PAIR_ITEMS
#define SO_WORDWISE (vmode == 4u || vmode == 8u || vmode == 16u)
#define SO_WORDS (vmode / 4u)
#else
#define SO_ITEMS ITEMS
#endif
#ifndef SO_WG
#define SO_WG WG
#endif
#ifndef SO_KEEP_POS
#define SO_KEEP_POS 0
#endif
#if SO_WG < 256 || SO_WG % 32 != 0
#error "sort_pass.h: a pass's group is a whole number of warps, at least a work-item a digit"
#endif
#define SO_NWARP (SO_WG / 32)
// SO_DIGIT: whether this work-item takes a digit (lid) in the per-digit steps.
#if SO_WG == 256
#define SO_DIGIT 1u
#else
#define SO_DIGIT (lid < 256u)
#endif
#define TILE (SO_WG * SO_ITEMS)
__kernel __attribute__((reqd_work_group_size(SO_WG, 1, 1)))
#if PAIRS == 4
void stdcl_sort_onesweep_pairs4(
#elif PAIRS
void stdcl_sort_onesweep_pairs(
#else
void stdcl_sort_onesweep(
#endif
    __global const KU* src, ulong soff, __global KU* dst, ulong doff, __global const uchar* vsrc, ulong vsoff,
    __global uchar* vdst, ulong vdoff, uint vmode, uint vsize, ulong n, uint shift, uint mode,
    __global const uint* ghist, uint row, __global uint* state, uint ntiles, uint epoch)
{
    __local uint whist[SO_NWARP * 256];
    __local uint dstart[256];  // where each digit's run starts in the tile
    __local uint gpos[256];    // and in the output, less dstart
    __local KU skey[TILE];
#if PAIRS
    // Values of 4, 8 or 16 bytes: 32 bits of each, in key order; others: each
    // key's index in the tile (as ushort).
    __local uint sval[TILE];
    __local ushort sperm[TILE];  // others: sperm[pos] = j; else sperm[j] = pos
#endif
    __local uint s_tile;
    __local uint wdig[SORT_RANK_LOCAL(SO_WG)];  // the ranker's
    uint lid = get_local_id(0), warp = lid >> 5, lane = lid & 31u;
    volatile __global ulong* sw = (volatile __global ulong*)state + 1;
    if (lid == 0) s_tile = prim_take_tile(state, ntiles);
    for (uint j = lid; j < SO_NWARP * 256; j += SO_WG) whist[j] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint tile = s_tile;
    ulong base = (ulong)tile * TILE;
    uint cnt = (uint)min((ulong)TILE, n - base);
    __global const KU* s = src + soff + base;
    uint seg = warp * (TILE / SO_NWARP);
    KU key[SO_ITEMS];
    uint rank[SO_ITEMS];
    // Every load of the tile issued before the first key is used.
    if (cnt == TILE) {
        SORT_UNROLL
        for (uint r = 0; r < SO_ITEMS; ++r) key[r] = s[seg + r * 32u + lane];
    } else {
        SORT_UNROLL
        for (uint r = 0; r < SO_ITEMS; ++r) {
            uint j = seg + r * 32u + lane;
            key[r] = j < cnt ? s[j] : (KU)0;
        }
    }
    if (mode & SORT_MAP_IN) {
        SORT_UNROLL
        for (uint r = 0; r < SO_ITEMS; ++r) key[r] = map_key(key[r], mode);
    }
    // Rank: the keys of each warp's run in order, 32 at a time; whist[warp][d]
    // counts the warp's keys of digit d so far.
    SORT_UNROLL
    for (uint r = 0; r < SO_ITEMS; ++r) {
        uint valid = seg + r * 32u + lane < cnt;
        rank[r] = rank_in_warp((uint)(key[r] >> shift) & 255u, valid, whist + warp * 256, wdig);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // Work-item lid takes digit lid: the warps' exclusive prefixes, and where
    // the digit's run starts in the tile.  The tile's count of the digit is
    // published at once for the tiles after it.  (Counting the digits before
    // ranking, to publish sooner, took 70 registers more a work-item on an
    // H200 and was slower.)
    uint total = 0;
    if (SO_DIGIT) {
        for (uint w = 0; w < SO_NWARP; ++w) {
            uint c = whist[w * 256 + lid];
            whist[w * 256 + lid] = total;
            total += c;
        }
        if (tile != 0) sw[(ulong)tile * 256u + lid] = ((ulong)PRIM_TAG(epoch, PRIM_LB_FOLD) << 32) | total;
    }
    uint mine = sort_excl(total, gpos, SO_DIGIT);
    if (SO_DIGIT) dstart[lid] = mine;
    barrier(CLK_LOCAL_MEM_FENCE);
    // The keys in digit order in local memory (while the tiles before finish).
    SORT_UNROLL
    for (uint r = 0; r < SO_ITEMS; ++r) {
        uint j = seg + r * 32u + lane;
        if (j < cnt) {
            uint d = (uint)(key[r] >> shift) & 255u;
            uint pos = dstart[d] + whist[warp * 256 + d] + rank[r];
            skey[pos] = key[r];
#if PAIRS
            if (!SO_WORDWISE)
                sperm[pos] = (ushort)j;
            else
                sperm[j] = (ushort)pos;
#endif
        }
    }
#if PAIRS
    // The values' first words (4-, 8- or 16-byte values), loaded while the
    // look-back waits.
    uint v0[SO_ITEMS];
    if (SO_WORDWISE) {
        const uint words = SO_WORDS;
        __global const uint* vs = (__global const uint*)(vsrc + vsoff) + base * words;
        SORT_UNROLL
        for (uint r = 0; r < SO_ITEMS; ++r) {
            uint j = seg + r * 32u + lane;
            v0[r] = j < cnt ? vs[j * words] : 0u;
        }
    }
#endif
    // Digit lid's first position: tile 0's from the whole array's counts, the
    // others' from the tiles before them, nearest first, up to the first
    // inclusive count.  (Reading several tiles' words at once was slower on an
    // H200.)
    uint prefix = 0;
    if (tile == 0) {
        prefix = sort_excl(SO_DIGIT ? ghist[row * 256u + lid] : 0u, gpos, SO_DIGIT);
    } else if (SO_DIGIT) {
        for (int t = (int)tile - 1;; --t) {
            ulong w;
            do
                w = sw[(ulong)t * 256u + lid];
            while (PRIM_TAG_EPOCH((uint)(w >> 32)) != epoch);
            prefix += (uint)w;
            if (((uint)(w >> 32) & PRIM_TAG_FLAGS) == PRIM_LB_INCL) break;
        }
    }
    if (SO_DIGIT) {
        sw[(ulong)tile * 256u + lid] = ((ulong)PRIM_TAG(epoch, PRIM_LB_INCL) << 32) | (prefix + total);
        gpos[lid] = prefix - mine;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    dst += doff;
#if SO_KEEP_POS
    // 4-byte values in NVIDIA's program: each in its key's place in the tile
    // (sval) before the keys go out, and each key's output position kept for
    // its value (gout), so that the values follow after one barrier without
    // reading the keys again: 1-2% faster on an H200 than the loop below, and
    // 5-10% slower on PoCL, where a work-item's array kept across a barrier
    // lives in memory (BENCHMARKS Tables 15.24-15.26).
    uint gout[SO_ITEMS];
    SORT_UNROLL
    for (uint r = 0; r < SO_ITEMS; ++r) {
        uint j = seg + r * 32u + lane;
        if (j < cnt) sval[sperm[j]] = v0[r];
    }
#endif
    SORT_UNROLL
    for (uint i = 0; i < SO_ITEMS; ++i) {
        uint j = lid + i * SO_WG;
        if (j < cnt) {
            KU k = skey[j];
            uint g = gpos[(uint)(k >> shift) & 255u] + j;  // below 2^32 (n is)
            dst[g] = (mode & SORT_MAP_OUT) ? unmap_key(k, mode) : k;
#if SO_KEEP_POS
            gout[i] = g;
#elif PAIRS
            if (!SO_WORDWISE)
                move_value(vsrc + vsoff, vdst + vdoff, base + sperm[j], g, vmode, vsize);
#endif
        }
    }
#if SO_KEEP_POS
    barrier(CLK_LOCAL_MEM_FENCE);
    __global uint* vd = (__global uint*)(vdst + vdoff);
    SORT_UNROLL
    for (uint i = 0; i < SO_ITEMS; ++i) {
        uint j = lid + i * SO_WG;
        if (j < cnt) vd[gout[i]] = sval[j];
    }
#elif PAIRS
    if (SO_WORDWISE) {
        const uint words = SO_WORDS;
        __global const uint* vs = (__global const uint*)(vsrc + vsoff) + base * words;
        __global uint* vd = (__global uint*)(vdst + vdoff);
        for (uint w = 0; w < words; ++w) {
            uint v[SO_ITEMS];
            SORT_UNROLL
            for (uint r = 0; r < SO_ITEMS; ++r) {
                uint j = seg + r * 32u + lane;
                v[r] = w == 0u ? v0[r] : j < cnt ? vs[j * words + w] : 0u;
            }
            barrier(CLK_LOCAL_MEM_FENCE);  // the last round's sval read
            SORT_UNROLL
            for (uint r = 0; r < SO_ITEMS; ++r) {
                uint j = seg + r * 32u + lane;
                if (j < cnt) sval[sperm[j]] = v[r];
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            SORT_UNROLL
            for (uint i = 0; i < SO_ITEMS; ++i) {
                uint j = lid + i * SO_WG;
                if (j < cnt) vd[(ulong)(gpos[(uint)(skey[j] >> shift) & 255u] + j) * words + w] = sval[j];
            }
        }
    }
#endif
}
#undef TILE
#undef SO_ITEMS
#undef SO_WG
#undef SO_NWARP
#undef SO_DIGIT
#undef SO_KEEP_POS
#if PAIRS
#undef SO_WORDWISE
#undef SO_WORDS
#endif
#endif
