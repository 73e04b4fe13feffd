/* SPDX-License-Identifier: MIT */
/* protocol.h: what the primitives' kernels (OpenCL C) and their host code
 * (C++: prims.hpp, sort.cpp, scan.cpp, reduce.cpp) agree on.  Both include
 * this file, so a value changes on both sides at once. */
#ifndef STDCL_PRIM_PROTOCOL_H
#define STDCL_PRIM_PROTOCOL_H

/* Work-items a group in the GPU layout (the kernels' reqd_work_group_size). */
#define PRIM_WG 256

/* Elements a work-item handles in the GPU layout: clsort's 32-bit keys
 * (64-bit: half as many), alone and with values (12 with values were 18%
 * faster than 16 on an H200: 16 take more registers, so fewer groups run at
 * once); clscan's 4-byte and 8-byte elements (a tile of 32 KB). */
#define SORT_ITEMS 16
#define SORT_PAIR_ITEMS 12
/* With 4-byte values (aligned), whose pass moves them as fixed at build
 * time: 16 take 80 registers a work-item there, and ran 4-8% faster than 12
 * on an H200; the pass for other values takes 110-124 at 14 or 16
 * (BENCHMARKS Table 15.19). */
#define SORT_PAIR4_ITEMS 16
/* The same pass in its wide form (-D SORT_PAIR4_WIDE=1: the program with
 * NVIDIA's warp instructions, on GPUs of compute capability 9):
 * groups of 384 work-items (the first 256 take a digit each in its
 * per-digit steps), 21 pairs each, a tile of 8,064.  On an H200 that takes
 * 80 registers a work-item and 95 KB of local memory a group, two groups a
 * compute unit, and ran clsort_by_key 5-11% faster than 256 x 16 (BENCHMARKS
 * Table 15.23); a GPU with less than 190 KB of local memory a compute unit
 * would run one group at a time, 25-30% slower there. */
#define SORT_PAIR4_WIDE_WG 384
#define SORT_PAIR4_WIDE_ITEMS 21
#define SCAN_ITEMS_4 32
#define SCAN_ITEMS_8 16

/* Element types and operations, chosen at build time with -D PRIM_TYPE=...
 * and -D PRIM_OP=...: clreduce's CL_REDUCE_ values (stdcl.h). */
#define PRIM_FLOAT 1
#define PRIM_DOUBLE 2
#define PRIM_INT 3
#define PRIM_LONG 4
#define PRIM_UINT 5
#define PRIM_ULONG 6
#define PRIM_SUM 1
#define PRIM_MIN 2
#define PRIM_MAX 3

/* A look-back word (clscan's one-pass scan, each pass of clsort on a GPU):
 * a 32-bit tag above 32 bits of value.  The tag is the call's epoch above
 * two flag bits; epochs run from 1 to PRIM_EPOCH_MAX, and a word tagged with
 * another epoch is not there yet, so the state needs no clearing between
 * calls until the epochs run out. */
#define PRIM_TAG_SHIFT 2
#define PRIM_TAG_FLAGS 3u
#define PRIM_EPOCH_MAX ((1u << 30) - 1u)
#define PRIM_TAG(epoch, flag) (((epoch) << PRIM_TAG_SHIFT) | (flag))
#define PRIM_TAG_EPOCH(tag) ((tag) >> PRIM_TAG_SHIFT)
#define PRIM_LB_FOLD 1u /* the tile's own fold (clsort: its count of the digit) */
#define PRIM_LB_INCL 2u /* the fold of every tile up to and with it */

/* A sort pass's mode bits. */
#define SORT_MAP_IN 1u /* map the keys as loaded (the first pass) */
#define SORT_MAP_OUT 2u /* map them back as stored (the last pass) */
#define SORT_KIND_SHIFT 2 /* bits 2-3: the key kind, 0 unsigned, 1 signed, 2 float */
#define SORT_KIND_MASK 3u
#define SORT_DESC 16u /* descending */
/* clsort's digit counts on a GPU (ghist): two halves of SORT_COUNT_ROWS rows
 * (the most passes: 64-bit keys) of 256 counts.  A call's histogram kernel
 * adds to one half and zeroes the other for the next call, so that no call
 * clears them first; a pass reads its row of the call's half. */
#define SORT_COUNT_ROWS 8

/* The values' mode: 0 none; 1, 2, 4, 8 or 16 (that many bytes, aligned); or
 * SORT_VALUES_ANY (vsize bytes, any alignment). */
#define SORT_VALUES_ANY 255u

#endif
